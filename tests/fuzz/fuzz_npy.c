/* libFuzzer target: the .npy parser (tn_io_parse_npy) on arbitrary bytes,
 * for each requested element type; whatever parses must survive a round
 * trip through the encoder bit for bit, in Fortran and in C order. */
#include "fuzz_common.h"

#include <stdint.h>

static void roundtrip(const tn_matrix *m, unsigned flags) {
    char err[256];
    void *buf;
    size_t len;
    tn_matrix b;
    int st = tn_io_encode_npy(m, flags, &buf, &len, err, sizeof err);
    FUZZ_ASSERT(st == TN_IO_OK);
    st = tn_io_parse_npy(buf, len, "re.npy", TN_IO_AS_STORED, 0, &b, err, sizeof err);
    FUZZ_ASSERT(st == TN_IO_OK);
    FUZZ_ASSERT(b.rows == m->rows && b.cols == m->cols && b.is_double == m->is_double);
    FUZZ_ASSERT(!b.lost_precision);
    size_t bytes = (size_t)(m->rows * m->cols) * (m->is_double ? 8 : 4);
    FUZZ_ASSERT(bytes == 0 || memcmp(b.data, m->data, bytes) == 0);
    tn_matrix_free(&b);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char err[256], tiny[9];
    tn_matrix m;
    for (int want = TN_IO_AS_STORED; want <= TN_IO_AS_DOUBLE; want++) {
        int st = tn_io_parse_npy(data, size, "fuzz.npy", want, FUZZ_CAP, &m, err, sizeof err);
        fuzz_check_result(st, &m, err, "fuzz.npy");
        if (st == TN_IO_OK && want == TN_IO_AS_STORED) {
            roundtrip(&m, 0);
            roundtrip(&m, TN_IO_NPY_C_ORDER);
            if (m.cols == 1) roundtrip(&m, TN_IO_NPY_1D);
        }
        if (st == TN_IO_OK && want == TN_IO_AS_DOUBLE)
            FUZZ_ASSERT(m.is_double && !m.lost_precision);
        tn_matrix_free(&m);
    }
    /* A small message buffer is cut, never overrun. */
    int st = tn_io_parse_npy(data, size, "fuzz.npy", TN_IO_AS_FLOAT, 64, &m, tiny, sizeof tiny);
    FUZZ_ASSERT(strlen(tiny) < sizeof tiny);
    tn_matrix_free(&m);
    (void)st;
    return 0;
}
