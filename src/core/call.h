/* The per-call context (not installed): what one library call passes down
 * to the products, factorizations and fills it runs, and what they report
 * back. A public entry point makes one on its stack (tn_call_init); the
 * drivers (tcnla_rsvd, tcnla_lra, tcnla_hosvd) set its modes for the work
 * they run and hand it down explicitly. Nothing of it is stored on the
 * handle, so no mode outlives the call that set it. */
#ifndef TCNLA_CALL_H
#define TCNLA_CALL_H

#include "tcnla.h"
#include <stdint.h>

/* The record of a trusted operand (rows x cols FP32 at base, ld) and
 * tn_trust_covers (src/gemm/trust.c): whether `method` may skip the check of
 * the rows x cols view X (ld; batch views stride elements apart) whose
 * vectors are its columns (vcol) or its rows: all its elements lie in the
 * checked ones and either mask has the method (element by element: any
 * layout), or mask_cols and every vector is a union of whole columns, or
 * mask_rows and every vector is a whole row. */
typedef struct {
    uintptr_t base;
    int64_t ld, rows, cols;
    unsigned mask, mask_rows, mask_cols; /* bit m: method m */
} tn_trust_t;
int tn_trust_covers(const tn_trust_t *t, int method, uintptr_t X, int64_t ld, int64_t rows,
                    int64_t cols, int64_t stride, int64_t batch, int vcol);

/* A's check folded into a driver's first product with its verdict read
 * later (tn_gemm_trusting, tn_trust_settle): `allow` set by the driver, the
 * rest the backend's record of the product while its verdict is out. */
typedef struct {
    int allow, pending;
    tcnla_gemm_method_t method;
    tcnla_gemm_method_t meths[TCNLA_GEMM_METHOD_COUNT];
    int nm, sh, shw, idx[TCNLA_GEMM_METHOD_COUNT];
    const float *A;
    int64_t lda, arows, acols;
} tn_late_trust_t;

typedef struct tn_call {
    tcnla_handle_t h;
    /* ---- modes a driver sets for the work it runs (all off at init) */
    tn_trust_t trust;         /* an operand checked once (tn_trust): its products skip the check */
    uintptr_t f16_lo, f16_hi; /* FP16 bits the driver drew itself (tn_trust_f16) */
    uintptr_t basis_lo, basis_hi; /* an orthonormal basis the driver formed (tn_trust_basis) */
    int bounded;              /* > 0: no path whose workspace grows with an operand */
    int *defer;               /* deferred verdicts: device flags (TN_DEFER_SLOTS ints), or NULL */
    int defer_held;           /* deferral paused (tn_defer_hold) */
    int redo_deferred;        /* 1 while a driver redoes, waiting, the deferred CholeskyQR in
                                 FP64 just run on the same matrix, whose verdict failed (the
                                 matrix as it was): the backend may start from what that one
                                 left (the same bits) */
    int side;                 /* own kernels (random fills) go to the handle's side stream */
    int side_pending;         /* side work recorded, not yet joined */
    int range_fallback;       /* FP16-based products the split cannot hold run the TF32 variant
                                 whatever the handle's range policy (the drivers: never a range
                                 error on finite input) */
    tn_late_trust_t late_trust;
    int scaling;              /* 1: the backend applies the range policy, never TN_NEEDS_SCALE;
                                 2: besides, the product's FP32 operands are exactly scaled
                                 copies of finite data (src/gemm/scaling.c), which pass every
                                 check: the checks are skipped */
    /* ---- the distributed drivers (src/dist/dist.h) */
    struct tcnla_comm_s *comm; /* the ranks' communicator, or NULL (one rank) */
    int dist_rows;             /* > 0 while the matrix being orthonormalized is distributed by
                                  rows: its CholeskyQR's Gram matrices are summed over comm
                                  (tn_dist_gram_sum) and Householder is out of reach */
    int comm_failed;           /* the ranks agreed on a failure, comm_status: no more collectives */
    int comm_status;
    /* ---- what ran (the caller copies it out with tn_call_info) */
    tcnla_info_t info;
} tn_call_t;

void tn_call_init(tn_call_t *cl, tcnla_handle_t h);
/* Inside a CholeskyQR of a matrix distributed by rows (cl->dist_rows): G
 * (count FP64 values in the handle's memory, the local Gram matrix) <- its
 * sum over the ranks, the same bits on every rank; 0 and nothing done
 * otherwise. A status: the ranks' agreed failure, or the collective's. */
int tn_dist_gram_sum(tn_call_t *cl, double *G, int64_t count);
/* The deferred verdicts' device flags while deferral is on and not held. */
static inline int *tn_call_defer(const tn_call_t *cl) {
    return cl->defer_held ? (int *)0 : cl->defer;
}
/* Whether a product whose operands the FP16 split cannot hold computes with
 * the method's full-range variant (else TCNLA_ERR_RANGE). */
int tn_call_range_fallback(const tn_call_t *cl);
/* Whether a product of `method` whose operands fail the range check returns
 * TN_NEEDS_SCALE (src/core/backend.h: C untouched, the front computes it on
 * scaled copies) instead of applying the range policy. */
int tn_call_may_scale(const tn_call_t *cl, tcnla_gemm_method_t method);
/* Counts a product that `asked` was requested for; the backend that ran it
 * has put the method it computed with into cl->info.method (and, for the
 * Ozaki scheme, the counts into cl->info.ozaki_*, the kernel path into
 * cl->info.path). */
void tn_call_count(tn_call_t *cl, tcnla_gemm_method_t asked);
/* Copies what ran to *info (when not NULL). */
void tn_call_info(const tn_call_t *cl, tcnla_info_t *info);

#endif
