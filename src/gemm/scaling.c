/* Exact power-of-two scaling of the FP16-based products (TCEC_FP16,
 * SHGEMM_FP16, FP16), for operands the FP16 split cannot hold as given.
 *
 * The split represents each element to 2^-tol_bits of its vector's largest
 * magnitude (tn_range_ok) only while that magnitude sits inside FP16's
 * exponent range: data in physical units (1e-7, 1e7) fails the check
 * although every row and column, taken alone, would fit. Scaling row i of
 * op(A) by 2^e_i and column j of op(B) by 2^f_j, with each vector's largest
 * magnitude moved into [2^14, 2^15) (TN_SCALE_TOP), and C's element (i, j)
 * by 2^-(e_i + f_j) afterwards changes no bit of the method's arithmetic
 * (splits, Tensor Core products, FP32 sums all commute with powers of two
 * away from under- and overflow), so the result is the one the method would
 * give if FP16 had an unbounded exponent. After the scaling every finite
 * vector passes the check: its largest element has FP16's full 11 bits, and
 * the split resolves the others down to 2^-24 (hi) and 2^-35 (lo), far
 * inside the tolerance of 2^-tol_bits x 2^14.
 *
 * The backend runs this only when the unscaled check has failed
 * (TN_NEEDS_SCALE): data that passes it computes bit for bit as without
 * scaling and at no cost; scaled data costs two passes over each operand
 * (largest magnitudes, scaled copy), the product (without its checks), and
 * one pass over C. */
#include "core/internal.h"

#include <stdint.h>

static size_t al(size_t x) { return (x + 255) / 256 * 256; }

/* Product on scaled copies. TN_NOT_TAKEN: the copies cannot be made (size,
 * memory, the drivers' memory bound) and the caller applies the range policy
 * (through the backend once more, with scaling off). */
int tn_gemm_scaled(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                   int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                   const float *B, const uint16_t *B16, int64_t ldb, float beta, float *C,
                   int64_t ldc) {
    tcnla_handle_t h = cl->h;
    const tn_backend_ops *ops = h->ops;
    const int64_t ar = ta == TCNLA_OP_N ? m : k, ac = ta == TCNLA_OP_N ? k : m;
    const int64_t br = tb == TCNLA_OP_N ? k : n, bc = tb == TCNLA_OP_N ? n : k;
    if (m <= 0 || n <= 0 || k <= 0) return TN_NOT_TAKEN;
    const uint64_t lim = UINT64_MAX / 16;
    if ((uint64_t)ar > lim / (uint64_t)ac || (uint64_t)br > lim / (uint64_t)bc ||
        (uint64_t)m > lim / (uint64_t)n)
        return TN_NOT_TAKEN;
    const size_t na = (size_t)ar * (size_t)ac, nb = B16 ? 0 : (size_t)br * (size_t)bc,
                 nc = (size_t)m * (size_t)n;
    /* the drivers promise about size(A) of memory: no copy of an operand
     * larger than the product's result */
    if (cl->bounded > 0 && (na > nc || nb > nc)) return TN_NOT_TAKEN;
    const size_t ba = al(4 * na), bb = al(4 * nb), bt = al(4 * nc),
                 be = al(sizeof(int) * (size_t)m), bf = al(sizeof(int) * (size_t)n);
    char *w = NULL;
    if (tn_scratch_malloc(h, (void **)&w, ba + bb + bt + be + bf) != TCNLA_SUCCESS || !w)
        return tn_call_range_fallback(cl) ? TN_NOT_TAKEN : TCNLA_ERR_ALLOC;
    float *As = (float *)w, *Bs = nb ? (float *)(w + ba) : NULL, *T = (float *)(w + ba + bb);
    int *er = (int *)(w + ba + bb + bt), *ec = B16 ? NULL : (int *)(w + ba + bb + bt + be);
    /* rows of op(A): A's rows (op N) or columns (op T); columns of op(B):
     * B's columns (op N) or rows (op T) */
    int st = ops->scale_exponents(h, ar, ac, A, lda, ta == TCNLA_OP_T, er);
    if (!st)
        st = ops->scale_copy(h, ar, ac, A, lda, ta == TCNLA_OP_N ? er : NULL,
                             ta == TCNLA_OP_T ? er : NULL, As, ar);
    if (!st && !B16) {
        st = ops->scale_exponents(h, br, bc, B, ldb, tb == TCNLA_OP_N, ec);
        if (!st)
            st = ops->scale_copy(h, br, bc, B, ldb, tb == TCNLA_OP_T ? ec : NULL,
                                 tb == TCNLA_OP_N ? ec : NULL, Bs, br);
    }
    if (!st) {
        /* finite (TN_NEEDS_SCALE says so) and in range: no checks; but
         * SHGEMM's FP32 B, whose FP16 overflow is reported before NaN /
         * Inf, keeps them */
        const int shb = !B16 && (method == TCNLA_GEMM_SHGEMM_FP16 ||
                                 method == TCNLA_GEMM_SHGEMM_TF32);
        cl->scaling = shb ? 1 : 2;
        st = ops->gemm(cl, method, ta, tb, m, n, k, 1.0f, As, ar, Bs, B16, B16 ? ldb : br, 0.0f,
                       T, m);
        cl->scaling = 0;
    }
    if (!st) st = ops->unscale_update(h, m, n, alpha, T, m, er, ec, beta, C, ldc);
    tn_scratch_free(h, w);
    if (!st) cl->info.scaled++;
    return st;
}
