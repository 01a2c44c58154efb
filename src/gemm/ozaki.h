/* The Ozaki scheme [Mukunoki et al. 2020]: internals shared by the CPU reference
 * (src/gemm/ozaki.c) and a GPU backend. Host code only.
 *
 * Slices. Every row of op(A) and every column of op(B) is split, one k-block
 * at a time, into slices v * 2^e: v a vector of integers with |v_l| <= vmax,
 * e one power-of-two exponent per (vector, k-block, slice) (Algorithm 1 with
 * per-row / per-column scaling). With mu the largest magnitude still to be
 * split, e is the smallest integer with mu <= vmax * 2^e, v = RN(x / 2^e),
 * x -= v * 2^e (exact). The remainder is <= 2^(e-1) < mu / vmax, so the
 * slices decrease by at least log2(vmax) + 1 bits each and the split ends
 * (mu == 0) after finitely many slices, at most about 2100 / log2(vmax).
 *
 * Exactness of a slice product sum_l a_l * b_l over one k-block of length
 * kbl (what the Tensor Core returns):
 *   OZAKI_FP16: vmax = 2^beta, beta = min(11, floor((24 - ceil(log2 kbl)) / 2)).
 *     Every v is an integer of at most 11 bits + sign, exactly an FP16 value
 *     (stored as v * 2^-beta on the GPU), every partial sum is an integer
 *     of magnitude <= kbl * 2^(2 beta) <= 2^24, so FP32 accumulation in any
 *     order, and the Tensor Core's truncating alignment, are exact. This is
 *     [Mukunoki et al. 2020]'s rho = ceil(log2(u64^-1) - (log2(u32^-1) - log2 k) / 2) with
 *     rho = 52 - beta, made one bit tighter (the seed keeps one spare bit).
 *     k-blocks: k is cut into nkb = ceil(k / 1024) equal blocks (beta >= 7).
 *   OZAKI_INT8: vmax = 127, exact INT32 accumulation for kbl <= 2^17
 *     (2^17 * 127^2 < 2^31); k is cut into ceil(k / 2^17) equal blocks.
 * The k-blocking depends only on k and the method: it never changes with the
 * workspace cap or the thread count, so neither do the result bits.
 */
#ifndef TCNLA_OZAKI_H
#define TCNLA_OZAKI_H

#include "core/internal.h"
#include <stdint.h>

#define TN_OZ_FP16_KBLOCK 1024
#define TN_OZ_INT8_KBLOCK 131072
#define TN_OZ_MAX_SLICES 512 /* more than any finite FP64 input can need */

typedef struct {
    int64_t nkb, kbl; /* k-blocks: block b covers [b*kbl, min(k, (b+1)*kbl)) */
    int vmax;         /* largest slice magnitude */
    int mode;         /* tcnla_ozaki_mode_t */
    int d;            /* DP / FIXED: slices per operand; CR: largest slice count */
    int smax_a;       /* slices stored per row of op(A) and k-block */
    int smax_b;       /* slices stored per column of op(B) and k-block */
    int fast;         /* skip products with p + q > d + 1 (1-based p, q) */
    int exact;        /* CR: exact accumulation and one correct rounding */
    int exhausted;    /* DP: every row and column was split completely within d */
} tn_ozaki_plan_t;

/* k-blocking and vmax of a method (OZAKI_FP16 / OZAKI_INT8), k >= 1. */
void tn_ozaki_blocking(tcnla_gemm_method_t method, int64_t k, int64_t *nkb, int64_t *kbl,
                       int *vmax);

/* One step of Algorithm 1 on x[0..len): takes the next slice out of x
 * (x becomes the remainder, exactly), writes its integers to out and its
 * exponent to *e. Returns 0 when x was already zero (no slice), 1 when a
 * slice was taken and the remainder is nonzero, 2 when the remainder is
 * zero. x must be finite. */
int tn_ozaki_slice(double *x, int64_t len, int vmax, int16_t *out, int *e);

/* The plan of one product: k-blocking, slice counts (Algorithm 3 for DP,
 * full split for CR, h->ozaki.slices for FIXED), fast mode. A and B as for
 * tn_cpu_ozaki (finite values), m, n, k >= 1. out_prec 64 or 32. */
int tn_ozaki_plan(tcnla_handle_t h, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                  int64_t m, int64_t n, int64_t k, const double *A, int64_t lda, const double *B,
                  int64_t ldb, int out_prec, tn_ozaki_plan_t *plan);

/* Exact accumulator for CR mode: a two's-complement fixed-point number of
 * 32-bit digits (held in int64 limbs, carry-save) covering every bit that a
 * slice product v * 2^E with |v| < 2^31 and E = eA + eB (eA, eB >= -1086,
 * <= 1024) can have, plus 2^40 terms' worth of carries. */
#define TN_OZ_ACC_EBASE (-2240)
#define TN_OZ_ACC_LIMBS 144
typedef struct {
    int64_t l[TN_OZ_ACC_LIMBS];
    int lo, hi; /* limbs touched since the last reset */
} tn_ozaki_acc_t;
void tn_ozaki_acc_init(tn_ozaki_acc_t *a);
void tn_ozaki_acc_add(tn_ozaki_acc_t *a, int64_t v, int E); /* += v * 2^E, |v| < 2^31 */
/* The exact sum rounded to nearest (ties to even) to FP64, with gradual
 * underflow and overflow to +-Inf; an exact zero gives +0. Resets a. */
double tn_ozaki_acc_round(tn_ozaki_acc_t *a);

/* TCNLA_OZAKI_AUTO (src/gemm/ozaki_auto.c). The model: 1 when the native
 * GEMM is predicted faster for an m x n x k product with out_prec-bit output
 * (or the architecture is unknown, or nothing is to compute), 0 when scheme II
 * is; the predicted seconds in *t_nat, *t_oz (may be NULL). h NULL: the
 * reference table (sm_90). */
int tn_oz_auto_model(tcnla_handle_t h, int out_prec, int64_t m, int64_t n, int64_t k,
                     double *t_nat, double *t_oz);
/* The compute capability x 10 of a CUDA handle's device (defined by the
 * CUDA backend, src/backend/cuda/ozaki2_cuda.c). */
int tn_cuda_oz_arch(tcnla_handle_t h);
/* The moduli count the model assumes for out_prec-bit output. */
int tn_oz_auto_moduli(int out_prec);
/* h->ops->ozaki with AUTO mode resolved: the native GEMM (NATIVE_FP64, or
 * NATIVE_FP32 for out_prec 32, reported in cl->info.method) or the scheme
 * in DP mode. Other modes: h->ops->ozaki as it is. */
int tn_ozaki_run(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                 int64_t m, int64_t n, int64_t k, double alpha, const void *A, int64_t lda,
                 const void *B, int64_t ldb, double beta, void *C, int64_t ldc, int out_prec);

#endif
