/* libFuzzer target: the Matrix Market parser (tn_io_parse_mtx) on arbitrary
 * bytes. Reading as float and as double must agree on the status, the
 * message and the shape, except where a value is outside float32's range. */
#include "fuzz_common.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char errf[256], errd[256], tiny[9];
    tn_matrix f, d;
    int stf = tn_io_parse_mtx(data, size, "fuzz.mtx", TN_IO_AS_FLOAT, FUZZ_CAP, &f, errf,
                              sizeof errf);
    int std = tn_io_parse_mtx(data, size, "fuzz.mtx", TN_IO_AS_DOUBLE, FUZZ_CAP, &d, errd,
                              sizeof errd);
    fuzz_check_result(stf, &f, errf, "fuzz.mtx");
    fuzz_check_result(std, &d, errd, "fuzz.mtx");
    /* a value float32 cannot hold is an error of the float read only */
    FUZZ_ASSERT(std != TN_IO_ERR_RANGE);
    if (stf != TN_IO_ERR_TOO_LARGE && std != TN_IO_ERR_TOO_LARGE && stf != TN_IO_ERR_RANGE) {
        /* (the cap counts bytes: a float result fits where a double may not) */
        FUZZ_ASSERT(stf == std);
        FUZZ_ASSERT(strcmp(errf, errd) == 0);
        FUZZ_ASSERT(f.rows == d.rows && f.cols == d.cols);
        FUZZ_ASSERT(stf || (!f.is_double && d.is_double && !d.lost_precision));
    }
    tn_matrix_free(&f);
    tn_matrix_free(&d);
    int st = tn_io_parse_mtx(data, size, "fuzz.mtx", TN_IO_AS_STORED, 64, &d, tiny, sizeof tiny);
    FUZZ_ASSERT(strlen(tiny) < sizeof tiny);
    tn_matrix_free(&d);
    (void)st;
    return 0;
}
