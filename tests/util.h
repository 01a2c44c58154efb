/* Helpers shared by the CPU tests. */
#ifndef TCNLA_TEST_UTIL_H
#define TCNLA_TEST_UTIL_H
#include "tcnla.h"
#include <stddef.h>
#include <stdint.h>

/* Relative Frobenius error of an m x n FP32 matrix (leading dim ldc) against
 * a FP64 reference (leading dim m), [Ootomo & Yokota 2021] eq. (6). */
double tu_rel_err(const float *C, int64_t ldc, const double *R, int64_t m, int64_t n);
/* R = alpha * op(A) op(B) + beta * C in FP64 (reference), column-major. */
void tu_ref_gemm(tcnla_op_t ta, tcnla_op_t tb, int64_t m, int64_t n, int64_t k, double alpha,
                 const float *A, int64_t lda, const float *B, int64_t ldb, double beta,
                 const float *C, int64_t ldc, double *R);
/* Relative Frobenius error of `method` and of NATIVE_FP32 for C = A*B on the
 * CPU backend, A m x k and B k x n given column-major. Returns the status. */
int tu_method_err(tcnla_handle_t h, tcnla_gemm_method_t method, int64_t m, int64_t n, int64_t k,
                  const float *A, const float *B, double *err, double *err_native,
                  tcnla_info_t *info);
/* The tcnla binary under test: $TCNLA_BIN or ./build/tcnla; 1 if it exists. */
const char *tu_bin(void);
int tu_have_bin(void);
/* Runs `tcnla ARGS`, captures stdout+stderr into out (len bytes), returns the
 * exit status (-1 when it did not exit normally). */
int tu_run(const char *args, char *out, size_t len);
/* Temporary files: every test writes under one private directory of the run,
 * $TMPDIR/tcnla_tests_XXXXXX (made by mkdtemp; /tmp when TMPDIR is unset or
 * unusable), which the runner removes with its contents at the end, so that
 * no stale file of another run can change a result. The runner also points
 * TMPDIR at it, so `tcnla ... --output $TMPDIR/x.npy` in tu_run's shell
 * names a file of this run. tu_tmp_root: that directory (made on first use),
 * NULL when it cannot be made; tu_tmp_cleanup removes it. */
const char *tu_tmp_root(void);
void tu_tmp_cleanup(void);
/* ROOT/NAME, the path of a file in the run's private directory (a static
 * buffer, overwritten by the next call). */
const char *tu_tmppath(const char *name);
/* A fresh directory ROOT/TAG_XXXXXX in buf (n bytes); NULL on failure. */
char *tu_tmp_dir(char *buf, size_t n, const char *tag);
/* Removes the files (and empty subdirectories) of dir, then dir. */
void tu_rm_dir(const char *dir);
/* The number after "key": in a one-line JSON report; NAN when absent. */
double tu_jnum(const char *json, const char *key);
/* max |Q^T Q - I| of an m x n matrix (leading dimension m). */
double tu_orth_defect(const float *Q, int m, int n);

/* Distributed tests: one rank's work, run on its own thread with its own
 * handle and communicator (tcnla_comm_create_local). */
#define TU_MAX_RANKS 4
typedef struct {
    int rank, nranks;
    tcnla_comm_t comm;
    tcnla_handle_t h;
    void *ctx;  /* the test's shared data */
    int status; /* what the rank's call returned */
} tu_rank_job;
/* Runs fn on P ranks: CPU handles, or CUDA handles on devices 0 .. P-1.
 * A rank that has not returned after 120 s ends the whole test run (exit
 * status 3, a message on stderr) rather than hang it. Returns 0, or the
 * status of the handles' or communicators' creation. */
int tu_run_ranks(tcnla_backend_t backend, int P, void (*fn)(tu_rank_job *), void *ctx,
                 tu_rank_job *jobs);
/* Rows r0 .. r0 + mr - 1 of the m x cols matrix G (ld m): a new mr x cols
 * matrix (ld mr; NULL when out of memory), and its rows put back into G */
float *tu_rows_of(const float *G, int64_t m, int64_t cols, int64_t r0, int64_t mr);
void tu_put_rows(float *G, int64_t m, int64_t cols, int64_t r0, int64_t mr, const float *B);
#endif
