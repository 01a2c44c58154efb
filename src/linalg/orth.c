/* Orthonormalization of tall-skinny matrices: Householder QR (LAPACK) and
 * CholeskyQR in FP32, in FP64 ([Baboulin et al. 2024] Algorithm 3) and twice in FP64
 * (CholeskyQR2). A Cholesky breakdown is detected from potrf's info (and
 * from non-finite or non-positive pivots), never passed on as NaN; a Q
 * that CholeskyQR's loss of orthogonality, O(kappa^2 u), would leave too
 * far from orthonormal counts as one too (FP32: tn_chol32_ok; FP64: the
 * probe rows of src/linalg/cholguard.h, on the pass whose Q is returned). */
#include "core/internal.h"
#include "linalg/cholguard.h"
#include "linalg/lapack.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int has_nonfinite(const float *Y, int64_t m, int64_t n, int64_t ld) {
    return tn_has_nonfinite(Y, m, n, ld);
}

/* Householder: Y <- Q, R <- upper triangle (n x n). */
static int householder(int m, int n, float *Y, int ldy, float *R, int ldr) {
    int info = 0, lwork = -1;
    float wq;
    sgeqrf_(&m, &n, Y, &ldy, NULL, &wq, &lwork, &info);
    int lw2 = -1;
    float wq2;
    sorgqr_(&m, &n, &n, Y, &ldy, NULL, &wq2, &lw2, &info);
    lwork = (int)TN_MAX(wq, wq2) + n;
    float *tau = malloc(sizeof(float) * ((size_t)n + (size_t)lwork));
    if (!tau) return TCNLA_ERR_ALLOC;
    float *work = tau + n;
    sgeqrf_(&m, &n, Y, &ldy, tau, work, &lwork, &info);
    if (info == 0 && R)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) R[i + (int64_t)j * ldr] = i <= j ? Y[i + (int64_t)j * ldy] : 0.0f;
    if (info == 0) sorgqr_(&m, &n, &n, Y, &ldy, tau, work, &lwork, &info);
    free(tau);
    return info == 0 ? TCNLA_SUCCESS : TCNLA_ERR_INTERNAL;
}

/* A Cholesky factor is usable when potrf succeeded and no column of Y is
 * numerically dependent on the ones before it: r_jj^2 / G_jj (the squared
 * sine of the angle between column j and the span of columns 0..j-1) must
 * exceed n * unit roundoff of the working precision; below that, Q would
 * not be orthonormal (CholeskyQR's loss of orthogonality is ~ kappa^2 u).
 * `gdiag` holds the Gram matrix's diagonal before the factorization. */
int tn_chol_ok(const double *gdiag, const double *rdiag, int n, int info, double u) {
    if (info != 0) return 0;
    for (int i = 0; i < n; i++) {
        double r = rdiag[i];
        if (!(r > 0) || !isfinite(r) || !(gdiag[i] > 0) || r * r < (double)n * u * gdiag[i])
            return 0;
    }
    return 1;
}

/* FP32 CholeskyQR's guard: tn_chol_ok's breakdown test, and the loss of
 * orthogonality CholeskyQR suffers, O(kappa(Y)^2 u) with u = 2^-24
 * [Yamamoto et al. 2015], kept at FP32's own level. kappa is LAPACK's
 * 1-norm condition estimate (strcon, O(n^2)) of the factor with its columns
 * scaled to unit norm (R D^-1, D^2 = diag(Y^T Y): CholeskyQR is exact on
 * orthogonal columns of any scaling, and kappa(R D^-1) = kappa(Y D^-1)).
 * Measured on Y = U diag(s) V^T (m = 1000, n = 16 and 64, kappa_2 from 1 to
 * 1e3): the estimate runs 2-6x above kappa_2, and |Q^T Q - I| is about 0.5 n u
 * plus 0.01-0.03 kappa^2 u. Accepting kappa^2 <= 64 n keeps |Q^T Q - I| to
 * a few n u (Householder: 0.3 n u); beyond, Q would not be orthonormal in
 * FP32 (kappa_2 = 1e3: 7e-3, 2e4: above 1) and the call reports a
 * breakdown. R: spotrf's upper triangle (ld ldr); gdiag: the Gram matrix's
 * diagonal before the factorization. Returns 1 when Q may be used. Both
 * backends call it on the host. */
int tn_chol32_ok(const double *gdiag, const float *R, int ldr, int n, int info) {
    double *rd = malloc(sizeof(double) * (size_t)n);
    float *Rs = malloc(sizeof(float) * ((size_t)n * (size_t)n + 3 * (size_t)n));
    int *iw = malloc(sizeof(int) * (size_t)n);
    int ok = rd && Rs && iw;
    if (ok) {
        for (int i = 0; i < n; i++) rd[i] = R[i + (int64_t)i * ldr];
        ok = tn_chol_ok(gdiag, rd, n, info, 0x1p-24);
    }
    if (ok) {
        for (int j = 0; j < n; j++) {
            const double s = 1.0 / sqrt(gdiag[j]);
            for (int i = 0; i < n; i++)
                Rs[i + (int64_t)j * n] = i <= j ? (float)(R[i + (int64_t)j * ldr] * s) : 0.0f;
        }
        float rcond = 0.0f;
        int inf = 0;
        strcon_("1", "U", "N", &n, Rs, &n, &rcond, Rs + (size_t)n * n, iw, &inf);
        const double kappa = 1.0 / (double)rcond; /* Inf for rcond == 0 */
        ok = inf == 0 && rcond > 0 && kappa * kappa <= 64.0 * n;
    }
    free(rd), free(Rs), free(iw);
    return ok;
}

/* One CholeskyQR step in FP64 on Yd (m x n, ld m + TN_CHOL_PROBES; the rows
 * past m are the guard's probes, written here): Yd <- Yd R^-1, Rd <- R.
 * `guard`: the pass whose Q is returned, which must pass tn_chol64_loss_within
 * too. Returns 1 on success, 0 on breakdown, -1 when out of memory, a
 * status (negative) where the ranks' Gram sum failed (cl->dist_rows). */
static int cholqr_d(tn_call_t *cl, int m, int n, double *Yd, double *Rd, int guard) {
    const double one = 1.0, zero = 0.0;
    const int ld = m + TN_CHOL_PROBES;
    dsyrk_("U", "T", &n, &m, &one, Yd, &ld, &zero, Rd, &n);
    if (cl->dist_rows) { /* rows on several ranks: the Gram matrix is their sum */
        for (int j = 0; j < n; j++)
            for (int i = j + 1; i < n; i++) Rd[i + (int64_t)j * n] = 0.0;
        const int st = tn_dist_gram_sum(cl, Rd, (int64_t)n * n);
        if (st) return st < 0 ? st : TCNLA_ERR_INTERNAL;
    }
    double *d = malloc(sizeof(double) * 2 * (size_t)n);
    if (!d) return -1;
    for (int i = 0; i < n; i++) d[i] = Rd[i + (int64_t)i * n];
    int info = 0;
    dpotrf_("U", &n, Rd, &n, &info);
    for (int i = 0; i < n; i++) d[n + i] = Rd[i + (int64_t)i * n];
    int ok = tn_chol_ok(d, d + n, n, info, 0x1p-53);
    if (ok)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < TN_CHOL_PROBES; k++)
                Yd[m + k + (int64_t)j * ld] = tn_chol_probe(k, j) * sqrt(d[j]);
    free(d);
    if (!ok) return 0;
    for (int j = 0; j < n; j++)
        for (int i = j + 1; i < n; i++) Rd[i + (int64_t)j * n] = 0.0;
    dtrsm_("R", "U", "N", "N", &ld, &n, &one, Rd, &n, Yd, &ld);
    if (guard) {
        double s = 0;
        for (int j = 0; j < n; j++)
            for (int k = 0; k < TN_CHOL_PROBES; k++) {
                const double v = Yd[m + k + (int64_t)j * ld];
                s += v * v;
            }
        return tn_chol64_loss_within(s);
    }
    return 1;
}

static int cholqr_fp32(int m, int n, float *Y, int ldy, float *R, int ldr) {
    const float one = 1.0f, zero = 0.0f;
    float *G = malloc(sizeof(float) * (size_t)n * (size_t)n);
    double *d = malloc(sizeof(double) * 2 * (size_t)n);
    if (!G || !d) {
        free(G), free(d);
        return TCNLA_ERR_ALLOC;
    }
    ssyrk_("U", "T", &n, &m, &one, Y, &ldy, &zero, G, &n);
    for (int i = 0; i < n; i++) d[i] = G[i + (int64_t)i * n];
    int info = 0;
    spotrf_("U", &n, G, &n, &info);
    int ok = tn_chol32_ok(d, G, n, n, info);
    free(d);
    if (!ok) {
        free(G);
        return TCNLA_ERR_NUMERICAL;
    }
    for (int j = 0; j < n; j++)
        for (int i = j + 1; i < n; i++) G[i + (int64_t)j * n] = 0.0f;
    strsm_("R", "U", "N", "N", &m, &n, &one, G, &n, Y, &ldy);
    if (R)
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) R[i + (int64_t)j * ldr] = G[i + (int64_t)j * n];
    free(G);
    return has_nonfinite(Y, m, n, ldy) ? TCNLA_ERR_NUMERICAL : TCNLA_SUCCESS;
}

/* CholeskyQR (twice when `twice`) in FP64; Y is overwritten only on success. */
static int cholqr_fp64(tn_call_t *cl, int m, int n, float *Y, int ldy, float *R, int ldr,
                       int twice) {
    const int64_t ld = (int64_t)m + TN_CHOL_PROBES;
    double *Yd = malloc(sizeof(double) * ((size_t)ld * (size_t)n + 2 * (size_t)n * (size_t)n));
    if (!Yd) return TCNLA_ERR_ALLOC;
    double *R1 = Yd + (size_t)ld * n, *R2 = R1 + (size_t)n * n;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) Yd[i + j * ld] = Y[i + (int64_t)j * ldy];
    int ok = cholqr_d(cl, m, n, Yd, R1, !twice);
    if (ok > 0 && twice) {
        ok = cholqr_d(cl, m, n, Yd, R2, 1);
        if (ok > 0) { /* R = R2 * R1 */
            const double one = 1.0;
            dtrmm_("L", "U", "N", "N", &n, &n, &one, R2, &n, R1, &n);
        }
    }
    if (ok < 0) {
        free(Yd);
        return ok == -1 ? TCNLA_ERR_ALLOC : ok;
    }
    for (int64_t j = 0; ok && j < n; j++)
        for (int64_t i = 0; ok && i < m; i++) ok = isfinite(Yd[i + j * ld]);
    if (ok) {
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) Y[i + (int64_t)j * ldy] = (float)Yd[i + j * ld];
        if (R)
            for (int j = 0; j < n; j++)
                for (int i = 0; i < n; i++) R[i + (int64_t)j * ldr] = (float)R1[i + (int64_t)j * n];
    }
    free(Yd);
    return ok ? TCNLA_SUCCESS : TCNLA_ERR_NUMERICAL;
}

static int orth_cpu(tn_call_t *cl, tcnla_orth_t method, int m, int n, float *Y, int ldy, float *R,
                    int ldr) {
    switch (method) {
    case TCNLA_ORTH_HOUSEHOLDER: return householder(m, n, Y, ldy, R, ldr);
    case TCNLA_ORTH_CHOLQR_FP32: {
        /* keep Y intact on breakdown: work on a copy */
        float *c = malloc(sizeof(float) * (size_t)m * (size_t)n);
        if (!c) return TCNLA_ERR_ALLOC;
        for (int j = 0; j < n; j++) memcpy(c + (int64_t)j * m, Y + (int64_t)j * ldy, sizeof(float) * (size_t)m);
        int st = cholqr_fp32(m, n, c, m, R, ldr);
        if (st == TCNLA_SUCCESS)
            for (int j = 0; j < n; j++) memcpy(Y + (int64_t)j * ldy, c + (int64_t)j * m, sizeof(float) * (size_t)m);
        free(c);
        return st;
    }
    case TCNLA_ORTH_CHOLQR_FP64: return cholqr_fp64(cl, m, n, Y, ldy, R, ldr, 0);
    case TCNLA_ORTH_CHOLQR2_FP64:
    default: return cholqr_fp64(cl, m, n, Y, ldy, R, ldr, 1);
    }
}

/* Y's values rounded to FP16 (RN) in place, and Y16 = the same in FP16 bits. */
static void round_f16_pair(int64_t m, int64_t n, float *Y, int64_t ldy, uint16_t *Y16,
                           int64_t ldy16) {
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            const uint16_t b = tcnla_f32_to_f16(Y[i + j * ldy], TCNLA_ROUND_RN);
            Y[i + j * ldy] = tcnla_f16_to_f32(b);
            Y16[i + j * ldy16] = b;
        }
}

/* The CPU backend's orthonormalize (src/core/backend.h), after the checks of
 * tn_orthonormalize: LAPACK / FP64 CholeskyQR on the host, retrying down the
 * chain on a breakdown as on_breakdown says. */
int tn_cpu_orthonormalize(tn_call_t *cl, tcnla_orth_t method, tcnla_breakdown_t on_breakdown,
                          int64_t m, int64_t n, float *Y, int64_t ldy, float *R, int64_t ldr,
                          tcnla_orth_t *used, uint16_t *Y16, int64_t ldy16) {
    if (cl->dist_rows && (method == TCNLA_ORTH_HOUSEHOLDER || method == TCNLA_ORTH_CHOLQR_FP32))
        return TCNLA_ERR_NOT_SUPPORTED;
    if (has_nonfinite(Y, m, n, ldy)) return TCNLA_ERR_NUMERICAL;
    for (;;) {
        int st = orth_cpu(cl, method, (int)m, (int)n, Y, (int)ldy, R, (int)ldr);
        if (used) *used = method;
        if (st == TCNLA_SUCCESS && Y16) round_f16_pair(m, n, Y, ldy, Y16, ldy16);
        /* (rows on several ranks: no Householder; a failure the ranks
         * agreed on ends the chain) */
        if (st != TCNLA_ERR_NUMERICAL || on_breakdown != TCNLA_BREAKDOWN_RETRY ||
            method == TCNLA_ORTH_HOUSEHOLDER || cl->comm_failed ||
            (cl->dist_rows && method == TCNLA_ORTH_CHOLQR2_FP64))
            return st;
        method = method == TCNLA_ORTH_CHOLQR_FP32   ? TCNLA_ORTH_CHOLQR_FP64
                 : method == TCNLA_ORTH_CHOLQR_FP64 ? TCNLA_ORTH_CHOLQR2_FP64
                                                    : TCNLA_ORTH_HOUSEHOLDER;
    }
}

static int orthonormalize(tn_call_t *cl, tcnla_orth_t method, tcnla_breakdown_t on_breakdown,
                          int64_t m, int64_t n, float *Y, int64_t ldy, float *R, int64_t ldr,
                          tcnla_orth_t *used, uint16_t *Y16, int64_t ldy16) {
    if ((int)method < 0 || (int)method > (int)TCNLA_ORTH_CHOLQR2_FP64) return -2;
    if (on_breakdown != TCNLA_BREAKDOWN_ERROR && on_breakdown != TCNLA_BREAKDOWN_RETRY) return -3;
    if (m < 0) return -4;
    if (n < 0 || n > m) return -5;
    if (!Y && n > 0) return -6;
    if (ldy < TN_MAX(1, m)) return -7;
    if (R && ldr < TN_MAX(1, n)) return -9;
    if (used) *used = method;
    if (n == 0) return TCNLA_SUCCESS;
    if (m > INT_MAX / 2 || ldy > INT_MAX || (R && ldr > INT_MAX) || (int64_t)m * n > INT_MAX)
        return TCNLA_ERR_NOT_SUPPORTED;
    tcnla_orth_t u = method;
    const int st = cl->h->ops->orthonormalize(cl, method, on_breakdown, m, n, Y, ldy, R, ldr, &u,
                                              Y16, ldy16);
    if (used) *used = u;
    return st;
}

int tn_orthonormalize(tn_call_t *cl, tcnla_orth_t method, tcnla_breakdown_t on_breakdown,
                      int64_t m, int64_t n, float *Y, int64_t ldy, float *R, int64_t ldr,
                      tcnla_orth_t *used) {
    return orthonormalize(cl, method, on_breakdown, m, n, Y, ldy, R, ldr, used, NULL, 0);
}

int tcnla_orthonormalize(tcnla_handle_t h, tcnla_orth_t method, tcnla_breakdown_t on_breakdown,
                         int64_t m, int64_t n, float *Y, int64_t ldy, float *R, int64_t ldr,
                         tcnla_orth_t *used) {
    if (!h) return -1;
    TN_GUARD(h);
    tn_call_t cl;
    tn_call_init(&cl, h);
    return orthonormalize(&cl, method, on_breakdown, m, n, Y, ldy, R, ldr, used, NULL, 0);
}

int tn_orthonormalize_f16(tn_call_t *cl, tcnla_orth_t method, tcnla_breakdown_t on_breakdown,
                          int64_t m, int64_t n, float *Y, int64_t ldy, uint16_t *Y16,
                          int64_t ldy16) {
    if (!Y16 || ldy16 < TN_MAX(1, m)) return TCNLA_ERR_INTERNAL;
    return orthonormalize(cl, method, on_breakdown, m, n, Y, ldy, NULL, 0, NULL, Y16, ldy16);
}

int tn_orthonormalize_dist(tn_call_t *cl, tcnla_orth_t method, tcnla_breakdown_t on_breakdown,
                           int64_t m, int64_t n, float *Y, int64_t ldy, float *R, int64_t ldr,
                           tcnla_orth_t *used, uint16_t *Y16, int64_t ldy16) {
    if (!cl->comm) return orthonormalize(cl, method, on_breakdown, m, n, Y, ldy, R, ldr, used, Y16,
                                         ldy16);
    if (m < 1 || n < 1 || !Y || ldy < m || (R && ldr < n)) return TCNLA_ERR_INTERNAL;
    if (m > INT_MAX / 2 || ldy > INT_MAX || (R && ldr > INT_MAX) || (int64_t)m * n > INT_MAX)
        return TCNLA_ERR_NOT_SUPPORTED;
    tcnla_orth_t u = method;
    cl->dist_rows++;
    const int st = cl->h->ops->orthonormalize(cl, method, on_breakdown, m, n, Y, ldy, R, ldr, &u,
                                              Y16, ldy16);
    cl->dist_rows--;
    if (used) *used = u;
    return st;
}

int tn_orthonormalize_deferred(tn_call_t *cl, tcnla_orth_t method, int64_t m, int64_t n,
                               float *Y, int64_t ldy, int slot) {
    if (!Y || m < 1 || n < 1 || n > m || ldy < m) return TCNLA_ERR_INTERNAL;
    if (m > INT_MAX / 2 || ldy > INT_MAX || m * n > INT_MAX) return TCNLA_ERR_NOT_SUPPORTED;
    return cl->h->ops->orthonormalize_deferred(cl, method, m, n, Y, ldy, slot);
}
