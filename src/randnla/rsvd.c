/* Randomized SVD ([Ootomo & Yokota 2023] Algorithm 1, Halko-Martinsson-Tropp) with
 * oversampling and re-orthonormalized power iterations. Written once over
 * the public entry points (tcnla_sgemm / tcnla_shgemm, tcnla_orthonormalize,
 * tcnla_random_fill, tn_scratch_malloc / tcnla_memcpy) and the small SVD
 * tn_small_svd_t, each of which runs on the handle's backend.
 *
 *   Omega = randn(n, l)                       l = k + p, rounded to random_format
 *   Y = A Omega                               proj_method (SHGEMM: FP16 Omega; 0: below)
 *   Q = orth(Y)
 *   repeat q times: Z = orth(A^T Q); Q = orth(A Z)          power_method (0: below)
 *   W = A^T Q  (n x l, = B^T)                 gemm_method
 *   (pass_efficient, [Bjarkason 2019]: the last iteration ends at Y = A Z,
 *   gemm_method, and A ~ Y Z^T takes the place of Q W^T below, the roles of
 *   the two factors exchanged: 2q + 1 passes over A instead of 2q + 2)
 *   W = Qw Rw                                 orth, with R
 *   Rw^T = Ur S Vr^T                          l x l, FP64 (CPU: dgesdd; GPU: small_svd_cuda.c)
 *   U = Q Ur(:, 1:k),  VT = Vr(:, 1:k)^T Qw^T
 * since B = Q^T A = Rw^T Qw^T = Ur S (Qw Vr)^T. On the GPU the last three
 * lines are, where s_k >= 1e-4 s_1, W^T W = X diag(s^2) X^T (FP64 Gram
 * matrix, eigensolution by small_svd_cuda.c's eig_solve), U = Q X(:, 1:k),
 * VT = diag(1 / s) X(:, 1:k)^T W^T (FP64): the same numbers in exact
 * arithmetic (X = Ur, R^T R = W^T W), the same conditioning as the
 * eigensolution of R R^T used there, without W's QR
 * (tn_cuda_svd_from_gram); below 1e-4 s_1 the same from the deflated
 * Gram path (further eigensolutions on X's trailing columns, relative
 * accuracy about eps s_1 / s_k: src/linalg/deflated_svd.h), W's QR only
 * where its check refuses or W's rows are split over ranks. Up to W, the CholeskyQRs' and the products'
 * verdicts are deferred where the backend can (one host synchronisation;
 * where one came up, the range finder redone without deferral, deciding as
 * it goes: the same bits as without deferral; with the probes the first
 * basis's verdict is read early, so that only what follows it is redone,
 * and where it failed the Gram path, which would refuse, is skipped).
 * Distributed (cl->comm, src/dist/): the sums over the ranks named where
 * they happen, and W's rows split over the ranks (wsplit). */
#include "core/internal.h"
#include "dist/dist.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Step timer for opts->timings: synchronizes the handle, adds the time since
 * the previous mark to timings[step]. */
typedef struct {
    double *t;
    double last;
} steptimer;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int mark(tcnla_handle_t h, steptimer *tm, int step) {
    if (!tm->t) return TCNLA_SUCCESS;
    int st = h->ops->synchronize(h);
    double t = now_s();
    tm->t[step] += t - tm->last;
    tm->last = t;
    return st;
}

tcnla_rsvd_opts_t tcnla_rsvd_opts_default(void) {
    tcnla_rsvd_opts_t o;
    memset(&o, 0, sizeof o);
    o.rank = 0;
    o.oversampling = 10;
    o.power_iters = 2;
    o.proj_method = TCNLA_GEMM_DEFAULT; /* FP16 or SHGEMM_FP16: tn_rsvd_run */
    o.gemm_method = TCNLA_GEMM_TCEC_FP16;
    o.power_method = TCNLA_GEMM_DEFAULT; /* gemm_method */
    o.random_format = TCNLA_FMT_FP16;
    o.random_dist = TCNLA_RAND_GAUSSIAN;
    o.orth = TCNLA_ORTH_CHOLQR_FP64; /* kappa(Y)^2 u64 << 1 for FP32 data; breakdowns retry */
    o.on_breakdown = TCNLA_BREAKDOWN_RETRY;
    o.seed = 1;
    o.timings = NULL;
    return o;
}

static int is_shgemm(tcnla_gemm_method_t m) {
    return m == TCNLA_GEMM_SHGEMM_FP16 || m == TCNLA_GEMM_SHGEMM_TF32;
}

/* One orthonormalization of the range finder: deferred (tn_defer_begin is
 * on) where the method allows, else as usual; `dist`: X has A's rows (on
 * several ranks where cl->comm is set). */
static int orth_step(tn_call_t *cl, const tcnla_rsvd_opts_t *o, int deferred, int dist,
                     int64_t rows, int64_t l, float *X, int *fell_back) {
    if (deferred) {
        const int st = tn_orthonormalize_deferred(cl, o->orth, rows, l, X, rows, TN_DEFER_ORTH);
        if (st != TCNLA_ERR_NOT_SUPPORTED) return st;
    }
    tcnla_orth_t used = o->orth;
    const int st = dist ? tn_orthonormalize_dist(cl, o->orth, o->on_breakdown, rows, l, X, rows,
                                                 NULL, 0, &used, NULL, 0)
                        : tn_orthonormalize(cl, o->orth, o->on_breakdown, rows, l, X, rows, NULL,
                                            0, &used);
    if (fell_back && st == TCNLA_SUCCESS) *fell_back = used != o->orth;
    return st;
}

/* The power iterations' precision from the data (power_method DEFAULT with
 * gemm_method TCEC_FP16): they only shape the subspace, so TCNLA_GEMM_FP16
 * serves wherever its error, about u16 sqrt(l / n) ||A||_F (u16 = 2^-11),
 * stays below a tenth of the residual of the first basis; SHGEMM_FP16
 * otherwise (the tail below FP16's resolution): A as TCEC splits it, only
 * the orthonormal basis rounded to FP16, Q + E with ||E|| ~ u16. A^T E's
 * component along v_j is s_j (u_j^T E), scaled by s_j, so the tail is not
 * polluted above its own size, as rounding A (noise ~ u16 ||A|| in every
 * direction) does: as accurate as TCEC for the range finder
 * (tests/test_randnla.c rsvd_power_shgemm_as_accurate_as_tcec), in 2
 * products instead of 3; with q >= 2 its first product in FP16 all the
 * same (range_and_bt). The estimate rides along in the
 * projection: RSVD_PROBES more Gaussian columns G, Y_G = A G, and
 * E ||Y_G||_F^2 = RSVD_PROBES ||A||_F^2, E ||(I - Q Q^T) Y_G||_F^2 =
 * RSVD_PROBES ||(I - Q Q^T) A||_F^2 for the basis Q of the first l columns
 * (two products of l x RSVD_PROBES in FP32 without the Tensor Cores, whose
 * operand checks would take longer than these products; two sums of
 * squares, read in one wait, where verdicts are deferred the same as
 * theirs; on several ranks the sums and Q^T Y_G summed over them). Where
 * the first basis's CholeskyQR failed (Y = A Omega spans more than FP64's
 * squared precision, and so will the later bases), no estimate: the
 * accurate products (where verdicts are deferred, the estimate queued on
 * that failed basis is dropped: it has overwritten Y_G). Six columns, so
 * that l + 6 columns fit the in-place FP16 kernel (272 on Hopper) at the
 * default l = 266: their estimate's relative standard deviation is at most
 * sqrt(2 / 6), against the rule's margin of 100 in squares. Where the projection itself ran in FP16 (below), the
 * estimate sees fl16(A) = A + E instead of A, E's rounding error adding up
 * to ||E||_F^2 <= u16^2 ||A||_F^2 to each probe's residual (for A in FP16's
 * normal range): the rule subtracts that much, so that rounding alone never
 * tips it towards FP16. */
#define RSVD_PROBES 6

/* The estimate's two sums queued into sums (handle memory): ||Y_G||_F^2 and
 * ||(I - Q Q^T) Y_G||_F^2, Pr = Y_G (m x RSVD_PROBES) after Q's
 * orthonormalization, overwritten with (I - Q Q^T) Y_G; Z: l x RSVD_PROBES
 * scratch. Nothing waits for them (fp16_power_suffices reads them). */
static int probe_sums(tn_call_t *cl, int64_t m, int64_t l, const float *Q, float *Pr, float *Z,
                      double *sums) {
    tcnla_handle_t h = cl->h;
    const int64_t g = RSVD_PROBES;
    const tcnla_gemm_method_t gm = TCNLA_GEMM_NATIVE_FP32;
    int st = h->ops->sumsq_to(h, m, g, Pr, m, sums);
    if (!st) st = tn_sgemm(cl, gm, TCNLA_OP_T, TCNLA_OP_N, l, g, m, 1.0f, Q, m, Pr, NULL, m, 0.0f,
                           Z, l);
    if (!st) st = tn_dist_sum(cl, Z, l * g, TN_DT_F32);
    if (!st) st = tn_sgemm(cl, gm, TCNLA_OP_N, TCNLA_OP_N, m, g, l, -1.0f, Q, m, Z, NULL, l, 1.0f,
                           Pr, m);
    if (!st) st = h->ops->sumsq_to(h, m, g, Pr, m, sums + 1);
    return st;
}

/* *yes = 1 when FP16 power iterations suffice, from probe_sums' sums as
 * read (v, summed here over the ranks); f16proj: Y_G = fl16(A) G (the FP16
 * projection) */
static int fp16_power_suffices(tn_call_t *cl, int64_t n, int64_t l, double v[2], int f16proj,
                               int *yes) {
    const int st = tn_dist_reduce_host(cl, v, 2, TN_OP_SUM);
    const double a2 = v[0], r2 = v[1];
    /* u16^2 (l / n) ||A||^2 <= (r / 10)^2, r^2 less the FP16 projection's
     * rounding; NaN (a breakdown deferred) says no */
    const double u2 = 0x1p-22, bias = f16proj ? u2 * a2 : 0.0;
    *yes = !st && u2 * ((double)l / (double)n) * a2 <= 0.01 * (r2 - bias);
    return st;
}

/* On several ranks, W = A^T Q's rows split over them: rank r owns rows
 * [r nb, (r + 1) nb) of the zero-padded P nb x l matrix (nb = ceil(n / P)),
 * in Wb (nb x l). The sum of the ranks' partial W is a reduce-scatter of
 * their packed rows (Wp, P blocks of nb x l; the padding rows stay zero),
 * W's CholeskyQR runs on the blocks (its Gram matrix summed), and the next
 * product gets all of Q_W by an all-gather: each rank does 1 / P of the
 * n x l work instead of all of it, for the same traffic as an all-reduce. */
typedef struct {
    int on, P, rank;
    int64_t nb;
    float *Wb, *Wp;
} wsplit;

/* Wb <- this rank's rows of the sum over the ranks of W (n x l, ld n) */
static int w_scatter(tn_call_t *cl, const wsplit *ws, int64_t n, int64_t l, const float *W) {
    int st = TCNLA_SUCCESS;
    for (int b = 0; b < ws->P && !st; b++) {
        const int64_t r0 = b * ws->nb, rows = TN_MIN(ws->nb, n - r0);
        if (rows > 0)
            st = tn_copy_matrix(cl->h, rows, l, W + r0, n, ws->Wp + r0 * l, ws->nb);
    }
    if (!st) st = tn_dist_reduce_scatter(cl, ws->Wp, ws->Wb, ws->nb * l, TN_DT_F32);
    return st;
}

/* W (n x l, ld n) <- the ranks' Wb */
static int w_gather(tn_call_t *cl, const wsplit *ws, int64_t n, int64_t l, float *W) {
    int st = tn_dist_allgather(cl, ws->Wb, ws->Wp, ws->nb * l, TN_DT_F32);
    for (int b = 0; b < ws->P && !st; b++) {
        const int64_t r0 = b * ws->nb, rows = TN_MIN(ws->nb, n - r0);
        if (rows > 0)
            st = tn_copy_matrix(cl->h, rows, l, ws->Wp + r0 * l, ws->nb, W + r0, n);
    }
    return st;
}

/* W's orthonormal basis: on its rows' ranks, or (one rank) orth_step */
static int w_orth(tn_call_t *cl, const tcnla_rsvd_opts_t *o, const wsplit *ws, int deferred,
                  int64_t n, int64_t l, float *W) {
    if (!ws->on) return orth_step(cl, o, deferred, 0, n, l, W, NULL);
    int st = w_scatter(cl, ws, n, l, W);
    if (!st)
        st = tn_orthonormalize_dist(cl, o->orth, o->on_breakdown, ws->nb, l, ws->Wb, ws->nb, NULL,
                                    0, NULL, NULL, 0);
    if (!st) st = w_gather(cl, ws, n, l, W);
    return st;
}

/* Returned (positive) by range_and_bt when deferral ended early on a
 * failed operand check: everything again without deferral */
#define RSVD_RESTART 3

/* The deferred verdicts so far, read (one host synchronisation; with them
 * `bytes` of handle memory at extra into host), before the
 * range finder goes on: RSVD_RESTART where an operand check failed; else
 * *orth_fail says whether an orthonormalization broke down or failed its
 * loss guard. Where one did, the rest runs without deferral (*deferred 0),
 * deciding as it goes, and the caller redoes that orthonormalization on
 * its input, which the deferred CholeskyQR left as it was (the bits of the
 * run without deferral); else deferral goes on. */
static int early_verdicts(tn_call_t *cl, int *deferred, int *orth_fail, const void *extra,
                          void *host, size_t bytes) {
    int fl[TN_DEFER_SLOTS], gemm_fail = 0;
    *deferred = 0, *orth_fail = 0;
    int st = tn_defer_end_read(cl, fl, extra, host, bytes);
    if (st) return st;
    for (int i = 0; i < TN_DEFER_SLOTS; i++) {
        if (i < TN_DEFER_ORTH) gemm_fail |= fl[i];
        else *orth_fail |= fl[i];
    }
    if (gemm_fail) return RSVD_RESTART;
    if (!*orth_fail) *deferred = tn_defer_begin(cl) == TCNLA_SUCCESS;
    return TCNLA_SUCCESS;
}

/* The orthonormalization whose deferred verdict early_verdicts found
 * failed, redone waiting on its input (still in X): the backend may start
 * from what the deferred CholeskyQR left (cl->redo_deferred), the same
 * bits. w: W's basis (w_orth), else A's rows (orth_step). */
static int orth_redo(tn_call_t *cl, const tcnla_rsvd_opts_t *o, const wsplit *ws, int w,
                     int64_t rows, int64_t l, float *X, int *fell_back) {
    cl->redo_deferred = 1;
    const int st = w ? w_orth(cl, o, ws, 0, rows, l, X) : orth_step(cl, o, 0, 1, rows, l, X,
                                                                    fell_back);
    cl->redo_deferred = 0;
    return st;
}

/* A product of the range finder, described so that it can be queued
 * where it is needed or ahead of the verdicts of the basis it reads
 * (verdicts_behind): C = op(A) B (op: N or T), B an orthonormal basis
 * (rows x l, trusted as such where tb) */
typedef struct {
    tcnla_gemm_method_t method;
    tcnla_op_t ta;
    int64_t m, n, k;
    const float *A;
    int64_t lda;
    const float *B;
    int64_t ldb, brows;
    float *C;
    int64_t ldc;
    int tb;
} rsvd_product;

static int product_run(tn_call_t *cl, const rsvd_product *p) {
    if (p->tb) tn_trust_basis(cl, p->B, (size_t)p->brows * (size_t)p->n);
    return tn_sgemm(cl, p->method, p->ta, TCNLA_OP_N, p->m, p->n, p->k, 1.0f, p->A, p->lda, p->B,
                    NULL, p->ldb, 0.0f, p->C, p->ldc);
}

/* early_verdicts after an accurate product's basis X (w: W's, else A's
 * rows), with the product that reads X (next) queued before the host waits:
 * the flags so far are copied out behind X's CholeskyQR (tn_defer_mark) and
 * the host waits for that copy alone, so the GPU runs the product while the
 * host decides, instead of waiting for the host's launches after the read.
 * All clear: the product stands and deferral goes on (*ran 1). Otherwise
 * early_verdicts decides as it does (the flags read again, with any the
 * product set), X's orthonormalization is redone where it failed, and the
 * product, which read a basis that failed its verdict (trusted all the
 * same: its result is not used), is for the caller to run again (*ran 0).
 * A redo then computes X's CholeskyQR afresh (the product took the
 * workspace that kept its first pass). */
static int verdicts_behind(tn_call_t *cl, const tcnla_rsvd_opts_t *o, const wsplit *ws, int w,
                           int64_t rows, int64_t l, float *X, int *deferred,
                           const rsvd_product *next, int *ran) {
    *ran = 0;
    int st;
    if (tn_defer_mark(cl) == TCNLA_SUCCESS) { /* (else the full read below says what failed) */
        int fl[TN_DEFER_SLOTS], any = 0;
        if ((st = product_run(cl, next)) != TCNLA_SUCCESS) return st;
        if ((st = tn_defer_marked(cl, fl)) != TCNLA_SUCCESS) return st;
        for (int i = 0; i < TN_DEFER_SLOTS; i++) any |= fl[i];
        if (!any) {
            *ran = 1;
            return TCNLA_SUCCESS;
        }
    }
    int orth_fail = 0;
    if ((st = early_verdicts(cl, deferred, &orth_fail, NULL, NULL, 0)) != TCNLA_SUCCESS) return st;
    return orth_fail ? orth_redo(cl, o, ws, w, rows, l, X, NULL) : TCNLA_SUCCESS;
}

/* A's check folded into the projection with its verdict still out
 * (*trust_pending 2, tn_gemm_trusting's *done 2, queued while verdicts are
 * deferred): read now (a wait). *redo 1 where it failed: A has then been
 * checked on its own (tn_trust) and deferral ended, and the projection and
 * everything after it must run again (the same bits as the run that waited
 * for the verdict: it runs tn_trust and the projection after it too). */
static int settle_trust(tn_call_t *cl, const float *A, int64_t lda, int64_t m, int64_t n,
                        const tcnla_gemm_method_t *ms, int *trust_pending, int *deferred,
                        int *redo) {
    *redo = 0;
    if (*trust_pending != 2) return TCNLA_SUCCESS;
    *trust_pending = 0;
    int done = 0;
    int st = tn_trust_settle(cl, &done);
    if (st || done) return st;
    *redo = 1;
    if (*deferred) { /* (what it decided was decided on an undefined Y) */
        int fl[TN_DEFER_SLOTS];
        st = tn_defer_end(cl, fl);
        *deferred = 0;
    }
    return st ? st : tn_trust(cl, A, lda, m, n, ms, 4);
}

/* Algorithm 1 up to B: Y = Q (m x l, orthonormal basis of the range after
 * the power iterations), W = A^T Q (n x l); pass_efficient: W = Z (n x l,
 * orthonormal) and Y = A Z, the last power iteration's orthonormalization
 * and the product after it left out (A ~ Y Z^T). probes: the projection draws
 * RSVD_PROBES more columns (Om and Y hold l + RSVD_PROBES) and the power
 * iterations' method is FP16 or pm (SHGEMM_FP16) from fp16_power_suffices
 * (sums: two doubles of handle memory for its sums).
 * With SHGEMM the basis (Q, m x l; Q_W, n x l) is rounded to FP16 by the
 * product itself (tn_sgemm: one pass over the basis, 4 bytes an element
 * read and 2 written, against the 4 m n bytes of A each product reads:
 * 16384^2, l = 266, 26 MB against 1 GiB). Where verdicts are deferred, A's
 * check folded into the projection is read with the first of them
 * (settle_trust; RSVD_RESTART where it failed), so that the host queues
 * the first orthonormalization and the probes while the projection runs. */
static int range_and_bt(tn_call_t *cl, const tcnla_rsvd_opts_t *o, int64_t m, int64_t n,
                        int64_t l, const float *A, int64_t lda, void *Om, float *Y, float *W,
                        tcnla_gemm_method_t pm, int probes, steptimer *tm, int *deferred,
                        const tcnla_gemm_method_t *ms, int *trust_pending, const wsplit *ws,
                        int *basis_guard, double *sums) {
    tcnla_handle_t h = cl->h;
    const int64_t lp = l + (probes ? RSVD_PROBES : 0); /* columns of the projection */
    const int sh = is_shgemm(o->proj_method);
    const tcnla_op_t N = TCNLA_OP_N, T = TCNLA_OP_T;
    int st;
#define TRYR(x)                                                                                \
    do {                                                                                       \
        if ((st = (x)) != TCNLA_SUCCESS) return st;                                            \
    } while (0)
    int redo = 0; /* (a restart: the folded check's verdict, if still out) */
    TRYR(settle_trust(cl, A, lda, m, n, ms, trust_pending, deferred, &redo));
    /* Y = A Omega */
    if (sh) {
        TRYR(tn_random_fill(cl, o->random_dist, TCNLA_FMT_FP16, 1, o->seed, 0, n, lp, Om, n));
        TRYR(mark(h, tm, TCNLA_RSVD_STEP_RANDOM));
        int done = 0;
        if (*trust_pending) { /* A's check folded into this product, else on its own */
            /* Omega as drawn is finite; trusted for this product only */
            tn_trust_f16(cl, (const uint16_t *)Om, (size_t)n * (size_t)lp);
            st = tn_gemm_trusting(cl, o->proj_method, N, m, lp, n, A, lda, NULL,
                                  (const uint16_t *)Om, n, Y, m, ms, 4, &done);
            tn_trust_f16(cl, NULL, 0);
            TRYR(st);
            if (!done) TRYR(tn_trust(cl, A, lda, m, n, ms, 4));
            *trust_pending = done == 2 ? 2 : 0;
        }
        if (!done)
            TRYR(tn_sgemm(cl, o->proj_method, N, N, m, lp, n, 1.0f, A, lda, NULL, (uint16_t *)Om,
                          n, 0.0f, Y, m));
    } else {
        TRYR(tn_random_fill(cl, o->random_dist, o->random_format, 0, o->seed, 0, n, lp, Om, n));
        TRYR(mark(h, tm, TCNLA_RSVD_STEP_RANDOM));
        int done = 0;
        if (*trust_pending) { /* A's check folded into this product, else on its own */
            TRYR(tn_gemm_trusting(cl, o->proj_method, N, m, lp, n, A, lda, (const float *)Om,
                                  NULL, n, Y, m, ms, 4, &done));
            if (!done) TRYR(tn_trust(cl, A, lda, m, n, ms, 4));
            *trust_pending = done == 2 ? 2 : 0;
        }
        if (!done)
            TRYR(tn_sgemm(cl, o->proj_method, N, N, m, lp, n, 1.0f, A, lda, (float *)Om, NULL, n,
                          0.0f, Y, m));
    }
    TRYR(mark(h, tm, TCNLA_RSVD_STEP_PROJ));
    /* basis_guard: the first basis's CholeskyQR failed, read here where the
     * orthonormalization waits for its verdict, below where it is deferred */
    *basis_guard = 0;
    TRYR(orth_step(cl, o, *deferred, 1, m, l, Y, basis_guard));
    /* power products accurate to FP32 (not FP16): their bases break down
     * where A's rank or decay makes them (below), so the verdicts are read
     * as they arise */
    const int acc_power = o->power_iters > 0 && pm != TCNLA_GEMM_FP16;
    /* the FP16 rule's sums (W is free until the power iterations); not
     * where the first basis failed (fp16_power_suffices), known here where
     * the orthonormalization waited, below where it is deferred */
    const int probe = probes && !*basis_guard;
    double v[2] = {0.0, 0.0};
    if (probe) TRYR(probe_sums(cl, m, l, Y, Y + m * l, W, sums));
    int first_fail = -1; /* the first basis's deferred verdict (-1: not read here) */
    if ((probes || acc_power) && *deferred) {
        /* the verdicts so far (with the probes' sums), read before the
         * power iterations build on Q. Where the
         * basis's CholeskyQR broke down or failed
         * its loss guard (A of rank below l, or top singular values decaying
         * past FP64's squared precision: the later ones will too), the rest
         * runs without deferral from here (early_verdicts): Y still holds A
         * Omega, so only the projection is not redone. */
        TRYR(early_verdicts(cl, deferred, &first_fail, probe ? sums : NULL, v,
                            probe ? sizeof v : 0));
    } else if (probe) {
        TRYR(tcnla_memcpy(h, v, sums, sizeof v, TCNLA_MEMCPY_HANDLE_TO_HOST));
    }
    /* A's folded check, if still out: after the read above, a wait of its
     * own where there was none (the verdicts are then all in) */
    TRYR(settle_trust(cl, A, lda, m, n, ms, trust_pending, deferred, &redo));
    if (redo) return RSVD_RESTART;
    if (first_fail >= 0) {
        *basis_guard = first_fail;
        if (first_fail) TRYR(orth_redo(cl, o, ws, 0, m, l, Y, NULL));
    }
    if (probe && !*basis_guard) {
        int f16 = 0;
        TRYR(fp16_power_suffices(cl, n, l, v, o->proj_method == TCNLA_GEMM_FP16, &f16));
        if (f16) pm = TCNLA_GEMM_FP16;
    }
    cl->info.power_method = o->power_iters > 0 ? pm : TCNLA_GEMM_DEFAULT;
    TRYR(mark(h, tm, TCNLA_RSVD_STEP_ORTH));
    /* the bases Q and Q_W as B of the products after them: orthonormal
     * (|q| <= 1, finite), or where a deferred verdict failed, work the run
     * without deferral redoes: no range or NaN / Inf check (tn_trust_basis;
     * one rank: over several, a rank's rows of a column may be tiny) */
    const int tb = !cl->comm;
    /* The first power product in FP16 where the defaults run the accurate
     * method (the rule chose it, or the first basis failed) and another
     * iteration follows: its noise E^T Q (E = fl16(A) - A, about u16
     * ||A||_F in every direction) reaches Y = A W through A, its component
     * along u_i scaled by s_i, as SHGEMM's rounding of the basis is, and a
     * whole accurate iteration filters it after that (tests/test_randnla.c
     * rsvd_first_power_product_fp16). */
    const int first16 = probes && o->power_iters >= 2 && pm != TCNLA_GEMM_FP16;
    /* the products: W = A^T Q (power iterations: Q = Y; last: B^T), Y = A W */
    const rsvd_product pw_t = {pm, T, n, l, m, A, lda, Y, m, m, W, n, tb};
    const rsvd_product py = {pm, N, m, l, n, A, lda, W, n, n, Y, m, tb};
    rsvd_product last_bt = pw_t, last_y = py;
    last_bt.method = last_y.method = o->gemm_method;
    int queued = 0; /* W = A^T Q already queued behind the last basis's verdicts */
    int power_marked = 0;
    for (int it = 0; it < o->power_iters; it++) {
        const tcnla_gemm_method_t pw = it == 0 && first16 ? TCNLA_GEMM_FP16 : pm;
        const int pe_last = o->pass_efficient && it == o->power_iters - 1;
        if (!queued) {
            rsvd_product p = pw_t;
            p.method = pw;
            TRYR(product_run(cl, &p));
        }
        queued = 0;
        TRYR(w_orth(cl, o, ws, *deferred, n, l, W));
        /* Products accurate to FP32 (the tail below FP16's resolution) on A
         * of rank below l, or of values decaying past FP64's squared
         * precision, give bases whose CholeskyQR breaks down where the
         * first basis's passed (the FP16 projection's rounding fills out
         * its rank): with them the verdicts are read after each
         * orthonormalization, so that a breakdown redoes only that one (its
         * input still in place) instead of everything, and the rest runs
         * without deferral; the product that follows is queued before the
         * host waits (verdicts_behind). FP16 products round A too, which
         * keeps their results away from rank deficiency: not read after
         * them. */
        int ran = 0;
        if (pw != TCNLA_GEMM_FP16 && *deferred) {
            if (pe_last) {
                TRYR(mark(h, tm, TCNLA_RSVD_STEP_POWER));
                power_marked = 1;
            }
            TRYR(verdicts_behind(cl, o, ws, 1, n, l, W, deferred, pe_last ? &last_y : &py,
                                 &ran));
        }
        if (pe_last) {
            /* the last product Y = A Z (Z = W orthonormal): A ~ Y Z^T */
            if (!power_marked) TRYR(mark(h, tm, TCNLA_RSVD_STEP_POWER));
            if (!ran) TRYR(product_run(cl, &last_y));
            tn_trust_basis(cl, NULL, 0);
            TRYR(mark(h, tm, TCNLA_RSVD_STEP_BT));
            return TCNLA_SUCCESS;
        }
        if (!ran) TRYR(product_run(cl, &py));
        TRYR(orth_step(cl, o, *deferred, 1, m, l, Y, NULL));
        if (pm != TCNLA_GEMM_FP16 && *deferred) {
            const int last = it == o->power_iters - 1;
            if (last) {
                TRYR(mark(h, tm, TCNLA_RSVD_STEP_POWER));
                power_marked = 1;
            }
            TRYR(verdicts_behind(cl, o, ws, 0, m, l, Y, deferred, last ? &last_bt : &pw_t,
                                 &queued));
        }
    }
    if (!power_marked) TRYR(mark(h, tm, TCNLA_RSVD_STEP_POWER));
    /* W = A^T Q = B^T */
    if (!queued) TRYR(product_run(cl, &last_bt));
    tn_trust_basis(cl, NULL, 0);
    TRYR(ws->on ? w_scatter(cl, ws, n, l, W) : tn_dist_sum(cl, W, n * l, TN_DT_F32));
    TRYR(mark(h, tm, TCNLA_RSVD_STEP_BT));
#undef TRYR
    return TCNLA_SUCCESS;
}

/* C = op(A) op(B) in FP32 (TCNLA_GEMM_NATIVE_FP32): the product after the
 * small SVD, which svd_from_gram runs as its `then` (queued, in the GPU's
 * deflated path, ahead of its last wait) where it takes the call */
typedef struct {
    tn_call_t *cl;
    tcnla_op_t ta, tb;
    int64_t m, n, k;
    const float *A;
    int64_t lda;
    const float *B;
    int64_t ldb;
    float *C;
    int64_t ldc;
} f32_product;

static int f32_product_run(void *arg) {
    const f32_product *p = arg;
    return tn_sgemm(p->cl, TCNLA_GEMM_NATIVE_FP32, p->ta, p->tb, p->m, p->n, p->k, 1.0f, p->A,
                    p->lda, p->B, NULL, p->ldb, 0.0f, p->C, p->ldc);
}

/* The last step where pass_efficient: A ~ Y Z^T (Y = A Z, m x l, on
 * several ranks this rank's rows of it; Z n x l, orthonormal, whole on
 * every rank), the roles of Q and W in tn_rsvd_run exchanged. The
 * eigensolution of Y^T Y = X diag(s^2) X^T (the backend's, the Gram
 * matrices summed over the ranks) gives U = Y X diag(1 / s) (its VT,
 * written transposed); else Y = Qy Ry and Ry^T = Ur S Vr^T give U = Qy Vr.
 * Then VT = X^T Z^T (X = Ur). R: l x l, Sm: 2 l k floats of handle memory;
 * basis_guard as in tn_rsvd_run. */
static int svd_of_yz(tn_call_t *cl, const tcnla_rsvd_opts_t *o, int64_t m, int64_t n,
                     int64_t l, int64_t k, float *Y, const float *Z, float *R, float *Sm,
                     int basis_guard, float *U, int64_t ldu, float *S, float *VT, int64_t ldvt) {
    tcnla_handle_t h = cl->h;
    const tcnla_op_t N = TCNLA_OP_N, T = TCNLA_OP_T;
    const tcnla_gemm_method_t f32 = TCNLA_GEMM_NATIVE_FP32;
    /* VT = X^T Z^T, by svd_from_gram where it takes the call */
    f32_product vt = {cl, T, T, k, n, l, Sm, l, Z, n, VT, ldvt};
    const tn_then_t then = {f32_product_run, &vt};
    if (cl->comm) cl->dist_rows++;
    int st = basis_guard ? TN_GRAM_NOT_TAKEN
                         : h->ops->svd_from_gram(cl, m, l, k, Y, m, Sm, S, U, ldu, 1, &then);
    if (cl->comm) cl->dist_rows--;
    if (st == TN_GRAM_NOT_TAKEN) {
        st = tn_orthonormalize_dist(cl, o->orth, o->on_breakdown, m, l, Y, m, R, l, NULL, NULL,
                                    0);
        /* Ry^T = Ur S Vr^T; Sm holds Ur_k then Vr_k */
        if (!st) st = tn_small_svd_t(h, l, k, R, Sm, Sm + l * k, S, 0);
        if (!st)
            st = tn_sgemm(cl, f32, N, N, m, k, l, 1.0f, Y, m, Sm + l * k, NULL, l, 0.0f, U, ldu);
        if (!st) st = f32_product_run(&vt);
    }
    return st;
}

int tn_rsvd_check_opts(const tcnla_rsvd_opts_t *o, int64_t m, int64_t n) {
    if (!o || o->rank < 1 || o->oversampling < 0 || o->power_iters < 0 || o->power_iters > 100)
        return -2;
    /* proj_method 0: FP16 or SHGEMM_FP16 (tn_rsvd_run), both on FP16 Omega */
    const int pj0 = o->proj_method == TCNLA_GEMM_DEFAULT;
    const int64_t mn = m < n ? m : n; /* rank + oversampling <= mn, without overflow */
    if (o->rank > mn || o->oversampling > mn - o->rank) return -2;
    if ((int)o->proj_method < 0 || (int)o->proj_method >= (int)TCNLA_GEMM_METHOD_COUNT ||
        (int)o->gemm_method <= 0 || (int)o->gemm_method >= (int)TCNLA_GEMM_METHOD_COUNT)
        return -2;
    if ((pj0 || is_shgemm(o->proj_method)) && o->random_format != TCNLA_FMT_FP16) return -2;
    if (is_shgemm(o->gemm_method)) return -2; /* the other products have no FP16 operand */
    /* the power iterations: SHGEMM_FP16 rounds the basis to FP16 (it only
     * shapes the subspace); not SHGEMM_TF32 */
    if ((int)o->power_method < 0 || (int)o->power_method >= (int)TCNLA_GEMM_METHOD_COUNT ||
        o->power_method == TCNLA_GEMM_SHGEMM_TF32)
        return -2;
    if ((int)o->random_format < 0 || (int)o->random_format > (int)TCNLA_FMT_E5M2) return -2;
    if ((int)o->random_dist < 0 || (int)o->random_dist > (int)TCNLA_RAND_SPARSE_SQRT) return -2;
    if ((int)o->orth < 0 || (int)o->orth > (int)TCNLA_ORTH_CHOLQR2_FP64) return -2;
    /* 2q + 1 passes: the last power iteration's Y = A Z is the last product */
    if (o->pass_efficient != 0 && (o->pass_efficient != 1 || o->power_iters < 1)) return -2;
    return 0;
}

int tcnla_rsvd(tcnla_handle_t h, const tcnla_rsvd_opts_t *o, int64_t m, int64_t n,
               const float *A, int64_t lda, float *U, int64_t ldu, float *S, float *VT,
               int64_t ldvt) {
    if (!h) return -1;
    if (m < 1) return -3;
    if (n < 1) return -4;
    int st = tn_rsvd_check_opts(o, m, n);
    if (st) return st;
    if (!A) return -5;
    if (lda < m) return -6;
    const int64_t k = o->rank, l = o->rank + o->oversampling;
    if (!U) return -7;
    if (ldu < m) return -8;
    if (!S) return -9;
    if (!VT) return -10;
    if (ldvt < k) return -11;
    if (l > 46340) return TCNLA_ERR_NOT_SUPPORTED; /* l*l must fit LAPACK's int */
    TN_GUARD(h);
    tn_call_t call;
    tn_call_init(&call, h);
    return tn_rsvd_run(&call, o, m, m, n, A, lda, U, ldu, S, VT, ldvt);
}

int tn_rsvd_run(tn_call_t *cl, const tcnla_rsvd_opts_t *o, int64_t m, int64_t mg, int64_t n,
                const float *A, int64_t lda, float *U, int64_t ldu, float *S, float *VT,
                int64_t ldvt) {
    tcnla_handle_t h = cl->h;
    const int64_t k = o->rank, l = o->rank + o->oversampling;
    int st;
    cl->range_fallback = 1; /* finite input never fails for want of FP16's range */

    /* handle memory: Omega (n x l, FP32 or FP16), Y (m x l), W (n x l), R (l x l),
     * Uk (l x k, copied from the host) */
    void *Om = NULL;
    float *Y = NULL, *W = NULL, *R = NULL, *Sm = NULL, *VTb = NULL, *VTp = NULL;
    wsplit ws = {0, 1, 0, 0, NULL, NULL};
    const tcnla_op_t N = TCNLA_OP_N, T = TCNLA_OP_T;
#define TRY(x)                                                                                 \
    do {                                                                                       \
        if ((st = (x)) != TCNLA_SUCCESS) goto out;                                             \
    } while (0)
    tn_bounded_begin(cl); /* device memory: A plus O((m + n) l) */
    /* the power iterations: power_method, else with gemm_method TCEC_FP16
     * (the defaults) SHGEMM_FP16 (as accurate for the range finder, see
     * fp16_power_suffices), else gemm_method */
    const int auto_power = !o->power_method && o->gemm_method == TCNLA_GEMM_TCEC_FP16;
    const tcnla_gemm_method_t pm = o->power_method ? o->power_method
                                   : auto_power    ? TCNLA_GEMM_SHGEMM_FP16
                                                   : o->gemm_method;
    /* FP16 instead where the data allow (fp16_power_suffices): the
     * defaults, where FP16 products need no copy of A */
    int probes = auto_power && o->power_iters > 0 && mg >= RSVD_PROBES && n >= RSVD_PROBES &&
                 h->ops->f16_in_place(h, T, n, l, m, A, lda) &&
                 h->ops->f16_in_place(h, N, m, l, n, A, lda);
    /* the projection: proj_method, or (0, the default) FP16 where power
     * iterations follow and FP16 multiplies A in place, else SHGEMM_FP16.
     * FP16 rounds A (noise of about u16 ||A||_F in every direction, where
     * SHGEMM_FP16 is as accurate as TCEC): the power iterations filter it
     * as they filter Omega's randomness, their own products chosen from
     * the data as above (tests/test_randnla.c
     * rsvd_default_projection_fp16_as_accurate). H100, 16384^2, l = 266:
     * 0.51-0.53 ms against 0.70-0.73 for SHGEMM_FP16 (bench_rsvd). */
    int f16p = !o->proj_method && o->power_iters > 0 &&
               h->ops->f16_in_place(h, N, m, l + (probes ? RSVD_PROBES : 0), n, A, lda);
    if (cl->comm) { /* every rank the same path: FP16 in place on all of them */
        double v[2] = {probes, f16p};
        TRY(tn_dist_reduce_host(cl, v, 2, TN_OP_MIN));
        probes = v[0] > 0.0, f16p = v[1] > 0.0;
    }
    tcnla_rsvd_opts_t ro = *o; /* the options with the projection's method resolved */
    if (!ro.proj_method) ro.proj_method = f16p ? TCNLA_GEMM_FP16 : TCNLA_GEMM_SHGEMM_FP16;
    o = &ro;
    cl->info.proj_method = o->proj_method;
    const int sh = is_shgemm(o->proj_method);
    const int64_t lp = l + (probes ? RSVD_PROBES : 0);
    /* A is read by every product below: checked once, here, or (FP16 or
     * SHGEMM_FP16 projection) inside the projection where the backend can
     * (tn_gemm_trusting: on Hopper, one pass over A fewer; H200, 16384^2,
     * every product in FP16: 5.7 ms a call instead of 6.1-6.2), else just before it
     * (opts->timings: in the projection's step) */
    const tcnla_gemm_method_t ms[4] = {o->proj_method, o->gemm_method, pm,
                                       probes ? TCNLA_GEMM_FP16 : pm};
    int trust_pending =
        o->proj_method == TCNLA_GEMM_FP16 || o->proj_method == TCNLA_GEMM_SHGEMM_FP16;
    if (!trust_pending) TRY(tn_trust(cl, A, lda, m, n, ms, 4));
    TRY(tn_scratch_malloc(h, &Om, (size_t)n * (size_t)lp * (sh ? 2 : 4)));
    TRY(tn_scratch_malloc(h, (void **)&Y, sizeof(float) * (size_t)m * (size_t)lp));
    TRY(tn_scratch_malloc(h, (void **)&W, sizeof(float) * (size_t)n * (size_t)l));
    /* (R also holds the FP16 rule's two sums, range_and_bt) */
    TRY(tn_scratch_malloc(h, (void **)&R, sizeof(float) * (size_t)TN_MAX(l * l, 4)));
    TRY(tn_scratch_malloc(h, (void **)&Sm, sizeof(float) * (size_t)(2 * l * k)));
    if (cl->comm && cl->comm->size > 1) { /* W's rows split over the ranks (wsplit) */
        ws.on = 1, ws.P = cl->comm->size, ws.rank = cl->comm->rank;
        ws.nb = (n + ws.P - 1) / ws.P;
        const size_t blk = (size_t)ws.nb * (size_t)l;
        TRY(tn_scratch_malloc(h, (void **)&ws.Wb, sizeof(float) * blk));
        TRY(tn_scratch_malloc(h, (void **)&ws.Wp, sizeof(float) * blk * (size_t)ws.P));
        TRY(tn_scratch_malloc(h, (void **)&VTb, sizeof(float) * (size_t)(k * ws.nb)));
        TRY(tn_scratch_malloc(h, (void **)&VTp, sizeof(float) * (size_t)(k * ws.nb * ws.P)));
        /* the padding rows of the last blocks: zeros, never written again */
        float *z = calloc(blk, sizeof(float));
        if (!z) TRY(TCNLA_ERR_ALLOC);
        for (int b = 0; b < ws.P && !st; b++)
            if (n - b * ws.nb < ws.nb)
                st = tcnla_memcpy(h, ws.Wp + b * blk, z, sizeof(float) * blk,
                                  TCNLA_MEMCPY_HOST_TO_HANDLE);
        free(z);
        TRY(st);
    }

    steptimer tm = {o->timings, 0.0};
    if (tm.t) {
        for (int i = 0; i < TCNLA_RSVD_STEPS; i++) tm.t[i] = 0.0;
        TRY(h->ops->synchronize(h));
        tm.last = now_s();
    }
    /* Q and W = A^T Q, the verdicts of the CholeskyQRs and of the products'
     * operand checks deferred where the backend can (tn_defer_begin): one
     * host synchronisation for all of them instead of one or more per step;
     * where one came up, everything again, deciding as it goes (with the
     * probes, from the first basis on, range_and_bt) */
    int deferred = !cl->comm && tn_defer_begin(cl) == TCNLA_SUCCESS;
    cl->late_trust.allow = 1; /* (taken only while deferred: range_and_bt) */
    int basis_guard = 0; /* the first basis's CholeskyQR failed (range_and_bt) */
    for (;;) {
        st = range_and_bt(cl, o, m, n, l, A, lda, Om, Y, W, pm, probes, &tm, &deferred, ms,
                          &trust_pending, &ws, &basis_guard, (double *)R);
        if (st == RSVD_RESTART) continue; /* (deferral ended) */
        if (!deferred) break;
        int fl[TN_DEFER_SLOTS], any = 0, closed = 0, st2 = TCNLA_SUCCESS;
        /* Where svd_from_gram comes next (W = B^T, or with pass_efficient
         * Y), its Gram matrix is queued behind the copy of the verdicts and
         * the host waits for that copy alone (tn_defer_mark), so that the
         * GPU forms it meanwhile instead of idling through the host's wait
         * and launch. All clear: deferral ends on them. Otherwise the full
         * read below decides (where a verdict failed, the range finder's
         * rerun asks for the workspace, which drops the queued Gram). */
        if (st == TCNLA_SUCCESS && !basis_guard && h->ops->gram_ahead &&
            tn_defer_mark(cl) == TCNLA_SUCCESS) {
            st = o->pass_efficient ? h->ops->gram_ahead(cl, m, l, k, Y, m)
                                   : h->ops->gram_ahead(cl, n, l, k, W, n);
            st2 = tn_defer_marked(cl, fl);
            for (int i = 0; i < TN_DEFER_SLOTS; i++) any |= fl[i];
            if (st == TCNLA_SUCCESS && st2 == TCNLA_SUCCESS && !any)
                closed = tn_defer_close(cl) == TCNLA_SUCCESS;
        }
        if (!closed) {
            any = 0;
            st2 = tn_defer_end(cl, fl);
        }
        deferred = 0;
        if (st == TCNLA_SUCCESS) st = st2;
        for (int i = 0; i < TN_DEFER_SLOTS; i++) any |= fl[i];
        if (st != TCNLA_SUCCESS || !any) break;
    }
    if (st) goto out;
    if (o->pass_efficient) { /* A ~ Y Z^T (Y m x l, this rank's rows; Z = W, n x l) */
        TRY(svd_of_yz(cl, o, m, n, l, k, Y, W, R, Sm, basis_guard, U, ldu, S, VT, ldvt));
        goto last;
    }
    /* where the backend has it (the GPU's): the eigensolution of W^T W,
     * without W's QR, where the k values are well enough separated from
     * zero (Sm: Xk, VT written; on one rank U = Q Xk too, as its `then`) */
    f32_product uq = {cl, N, N, m, k, l, Y, m, Sm, l, U, ldu};
    const tn_then_t then = {f32_product_run, &uq};
    int u_done = 0;
    if (ws.on) { /* this rank's rows Wb of W: its columns of VT, then all of them */
        cl->dist_rows++;
        st = h->ops->svd_from_gram(cl, ws.nb, l, k, ws.Wb, ws.nb, Sm, S, VTb, k, 0, NULL);
        cl->dist_rows--;
        if (st == TN_GRAM_NOT_TAKEN) {
            TRY(tn_orthonormalize_dist(cl, o->orth, o->on_breakdown, ws.nb, l, ws.Wb, ws.nb, R, l,
                                       NULL, NULL, 0));
            TRY(tn_small_svd_t(h, l, k, R, Sm, Sm + l * k, S, 0));
            TRY(tn_sgemm(cl, TCNLA_GEMM_NATIVE_FP32, T, T, k, ws.nb, l, 1.0f, Sm + l * k, l, ws.Wb,
                         NULL, ws.nb, 0.0f, VTb, k));
        } else if (st) {
            goto out;
        }
        TRY(tn_dist_allgather(cl, VTb, VTp, k * ws.nb, TN_DT_F32));
        TRY(tn_copy_matrix(h, k, n, VTp, k, VT, ldvt));
        st = TCNLA_SUCCESS;
    } else {
        /* (not where the first basis's CholeskyQR failed: Y = A Omega then
         * spans more than FP64's squared precision, and so, most likely,
         * do the top k values, which the Gram path refuses after forming
         * it; the QR path below is right either way) */
        st = basis_guard ? TN_GRAM_NOT_TAKEN
                         : h->ops->svd_from_gram(cl, n, l, k, W, n, Sm, S, VT, ldvt, 0, &then);
        u_done = st == TCNLA_SUCCESS;
    }
    if (st == TN_GRAM_NOT_TAKEN) {
        TRY(tn_orthonormalize(cl, o->orth, o->on_breakdown, n, l, W, n, R, l, NULL));
        /* Rw^T = Ur S Vr^T (l x l, on the handle's device); Sm holds Ur_k then Vr_k */
        TRY(tn_small_svd_t(h, l, k, R, Sm, Sm + l * k, S, 0));
        /* VT = Vr(:, 1:k)^T Qw^T */
        TRY(tn_sgemm(cl, TCNLA_GEMM_NATIVE_FP32, T, T, k, n, l, 1.0f, Sm + l * k, l, W, NULL, n,
                     0.0f, VT, ldvt));
    } else if (st) {
        goto out;
    }
    /* U = Q Ur(:, 1:k) (Ur = Xk on the Gram path) */
    if (!u_done) TRY(f32_product_run(&uq));
last:
    TRY(mark(h, &tm, TCNLA_RSVD_STEP_SVD));
#undef TRY
out:
    tn_untrust(cl);
    tn_bounded_end(cl);
    tn_scratch_free(h, Om);
    tn_scratch_free(h, Y);
    tn_scratch_free(h, W);
    tn_scratch_free(h, R);
    tn_scratch_free(h, Sm);
    tn_scratch_free(h, ws.Wb);
    tn_scratch_free(h, ws.Wp);
    tn_scratch_free(h, VTb);
    tn_scratch_free(h, VTp);
    st = tn_dist_end(cl, st); /* (on several ranks: the status they agree on) */
    tn_call_info(cl, o->info);
    return st;
}
