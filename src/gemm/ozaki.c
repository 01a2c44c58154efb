/* Ozaki scheme on the CPU: placeholder until the implementation lands. */
#include "core/internal.h"

int tn_cpu_ozaki(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                 int64_t m, int64_t n, int64_t k, double alpha, const double *A, int64_t lda,
                 const double *B, int64_t ldb, double beta, double *C, int64_t ldc,
                 int out_prec) {
    (void)h, (void)method, (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)A;
    (void)lda, (void)B, (void)ldb, (void)beta, (void)C, (void)ldc, (void)out_prec;
    return TCNLA_ERR_NOT_SUPPORTED;
}
