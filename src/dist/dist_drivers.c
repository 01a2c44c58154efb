/* The distributed drivers' entry points: argument checks on each rank, the
 * first agreement (statuses, the same sizes and options, the global row
 * count), then the single-GPU drivers' bodies (tn_rsvd_run, tn_lra_run,
 * tn_orthonormalize_dist) with the communicator in the call: they sum the
 * Gram matrices of the CholeskyQRs and the products with A^T over the
 * ranks, and end with the agreement of src/dist/dist.h. */
#include "dist/dist.h"
#include "core/internal.h"

#include <string.h>

/* A rank's handle, or NULL (the comm NULL) */
static tcnla_handle_t comm_handle(tcnla_comm_t c) { return c ? c->h : NULL; }

/* A driver's first agreement (st: its rank-local checks) and the checks on
 * the global row count *m (the same on every rank); where these fail, the
 * last agreement too: the status every rank returns, else 0 */
static int start(tn_call_t *cl, tcnla_comm_t comm, int st, uint64_t key, int64_t m_local,
                 int64_t *m, int (*check)(const void *o, int64_t m, int64_t n), const void *o,
                 int64_t n, tcnla_info_t *info) {
    st = tn_dist_begin(cl, comm, st, key, m_local, m);
    if (!st) st = check(o, *m, n);
    if (st) {
        tn_call_info(cl, info);
        return tn_dist_end(cl, st);
    }
    return TCNLA_SUCCESS;
}

static int rsvd_check(const void *o, int64_t m, int64_t n) {
    const tcnla_rsvd_opts_t *r = o;
    const int st = tn_rsvd_check_opts(r, m, n);
    if (st) return st;
    return r->rank + r->oversampling > 46340 ? TCNLA_ERR_NOT_SUPPORTED : TCNLA_SUCCESS;
}

static int lra_check(const void *o, int64_t m, int64_t n) { return tn_lra_check_opts(o, m, n); }

static int dist_orth_method(tcnla_orth_t m) {
    return m == TCNLA_ORTH_CHOLQR_FP64 || m == TCNLA_ORTH_CHOLQR2_FP64;
}

int tcnla_dist_orthonormalize(tcnla_comm_t comm, tcnla_orth_t method,
                              tcnla_breakdown_t on_breakdown, int64_t m_local, int64_t n,
                              float *Y, int64_t ldy, float *R, int64_t ldr, tcnla_orth_t *used) {
    tcnla_handle_t h = comm_handle(comm);
    if (!h) return -1;
    int st = 0;
    if ((int)method < 0 || (int)method > (int)TCNLA_ORTH_CHOLQR2_FP64) st = -2;
    else if (on_breakdown != TCNLA_BREAKDOWN_ERROR && on_breakdown != TCNLA_BREAKDOWN_RETRY)
        st = -3;
    else if (m_local < 1) st = -4;
    else if (n < 1) st = -5;
    else if (!Y) st = -6;
    else if (ldy < m_local) st = -7;
    else if (R && ldr < n) st = -9;
    else if (!dist_orth_method(method)) st = TCNLA_ERR_NOT_SUPPORTED;
    if (used) *used = method;
    TN_GUARD(h);
    tn_call_t call, *cl = &call;
    tn_call_init(cl, h);
    const uint64_t w[3] = {(uint64_t)method, (uint64_t)on_breakdown, (uint64_t)n};
    int64_t m = 0;
    st = tn_dist_begin(cl, comm, st, tn_dist_key(w, 3), m_local, &m);
    if (!st && m < n) st = -5; /* (on every rank alike) */
    if (!st)
        st = tn_orthonormalize_dist(cl, method, on_breakdown, m_local, n, Y, ldy, R, ldr, used,
                                    NULL, 0);
    return tn_dist_end(cl, st);
}

/* The options' digest: every field that steers the computation */
static uint64_t rsvd_key(const tcnla_rsvd_opts_t *o, int64_t n) {
    const uint64_t w[13] = {(uint64_t)n,
                            (uint64_t)o->rank,
                            (uint64_t)o->oversampling,
                            (uint64_t)o->power_iters,
                            (uint64_t)o->proj_method,
                            (uint64_t)o->gemm_method,
                            (uint64_t)o->power_method,
                            (uint64_t)o->random_format,
                            (uint64_t)o->random_dist,
                            (uint64_t)o->orth,
                            (uint64_t)o->on_breakdown,
                            o->seed,
                            (uint64_t)o->pass_efficient};
    return tn_dist_key(w, 13);
}

int tcnla_dist_rsvd(tcnla_comm_t comm, const tcnla_rsvd_opts_t *o, int64_t m_local, int64_t n,
                    const float *A, int64_t lda, float *U, int64_t ldu, float *S, float *VT,
                    int64_t ldvt) {
    tcnla_handle_t h = comm_handle(comm);
    if (!h) return -1;
    /* the checks that need no other rank; those on m (the sum) after the
     * first agreement, the same on every rank */
    int st = 0;
    if (!o) st = -2;
    else if (m_local < 1) st = -3;
    else if (n < 1) st = -4;
    else if (!A) st = -5;
    else if (lda < m_local) st = -6;
    else if (!U) st = -7;
    else if (ldu < m_local) st = -8;
    else if (!S) st = -9;
    else if (!VT) st = -10;
    else if (ldvt < o->rank) st = -11;
    else if (!dist_orth_method(o->orth)) st = TCNLA_ERR_NOT_SUPPORTED;
    TN_GUARD(h);
    tn_call_t call, *cl = &call;
    tn_call_init(cl, h);
    int64_t m = 0;
    st = start(cl, comm, st, st ? 0 : rsvd_key(o, n), m_local, &m, rsvd_check, o, n,
               o ? o->info : NULL);
    if (st) return st;
    return tn_rsvd_run(cl, o, m_local, m, n, A, lda, U, ldu, S, VT, ldvt);
}

static uint64_t lra_key(const tcnla_lra_opts_t *o, int64_t n) {
    const uint64_t w[10] = {(uint64_t)n,
                            (uint64_t)o->rank,
                            (uint64_t)o->oversampling,
                            (uint64_t)o->tgemm,
                            (uint64_t)o->gemm_method,
                            (uint64_t)o->orth,
                            (uint64_t)o->on_breakdown,
                            (uint64_t)o->refine,
                            (uint64_t)o->recompress,
                            o->seed};
    return tn_dist_key(w, 10);
}

int tcnla_dist_lra(tcnla_comm_t comm, const tcnla_lra_opts_t *o, int64_t m_local, int64_t n,
                   const float *A, int64_t lda, float *X, int64_t ldx, float *Y, int64_t ldy) {
    tcnla_handle_t h = comm_handle(comm);
    if (!h) return -1;
    int st = 0;
    if (!o) st = -2;
    else if (m_local < 1) st = -3;
    else if (n < 1) st = -4;
    else if (!A) st = -5;
    else if (lda < m_local) st = -6;
    else if (!X) st = -7;
    else if (ldx < m_local) st = -8;
    else if (!Y) st = -9;
    else if (ldy < n) st = -10;
    /* recompression orthonormalizes the factors by Householder QR */
    else if (!dist_orth_method(o->orth) || o->recompress) st = TCNLA_ERR_NOT_SUPPORTED;
    TN_GUARD(h);
    tn_call_t call, *cl = &call;
    tn_call_init(cl, h);
    int64_t m = 0;
    st = start(cl, comm, st, st ? 0 : lra_key(o, n), m_local, &m, lra_check, o, n,
               o ? o->info : NULL);
    if (st) return st;
    return tn_lra_run(cl, o, m_local, m, n, A, lda, X, ldx, Y, ldy);
}
