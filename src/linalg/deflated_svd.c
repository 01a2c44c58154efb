/* The C reference of the small SVD by deflated Gram eigensolutions
 * (src/linalg/deflated_svd.h gives the algorithm and its error argument),
 * which the GPU path of src/backend/cuda/small_svd_cuda.c follows. */
#include "core/internal.h"
#include "linalg/deflated_svd.h"
#include "linalg/lapack.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The eigensolution of the n x n G (upper triangle, ld n) in place: G <- its
 * eigenvectors, w ascending. */
static int syevd(int n, double *G, double *w) {
    int info = 0, lwork = -1, liwork = -1, iwq = 0;
    double wq = 0.0;
    dsyevd_("V", "U", &n, G, &n, w, &wq, &lwork, &iwq, &liwork, &info);
    if (info) return TCNLA_ERR_NUMERICAL;
    lwork = (int)wq + 1, liwork = iwq;
    double *work = malloc(sizeof(double) * (size_t)lwork);
    int *iwork = malloc(sizeof(int) * (size_t)liwork);
    if (work && iwork) dsyevd_("V", "U", &n, G, &n, w, work, &lwork, iwork, &liwork, &info);
    const int st = !work || !iwork ? TCNLA_ERR_ALLOC : info ? TCNLA_ERR_NUMERICAL : TCNLA_SUCCESS;
    free(work), free(iwork);
    return st;
}

int tn_defl_svd_ref(int m, int l, int k, const double *M, int ldm, double tau, int maxlev,
                    double *U, double *s, double *V, tn_defl_info_t *info) {
    if (m < 1) return -1;
    if (l < 1 || l > m) return -2;
    if (k < 1 || k > l) return -3;
    if (!M) return -4;
    if (ldm < m) return -5;
    if (!(tau > 0.0 && tau < 1.0)) return -6;
    if (maxlev < 1 || maxlev > TN_DEFL_LEVELS) return -7;
    if (!U) return -8;
    if (!s) return -9;
    if (!V) return -10;
    const size_t ll = (size_t)l * (size_t)l;
    /* X (l x l), lam (l), Y (m x l), G (l x l), T (l x l), perm */
    double *X = malloc(sizeof(double) * (3 * ll + (size_t)l + (size_t)m * l) + sizeof(int) * l);
    if (!X) return TCNLA_ERR_ALLOC;
    double *lam = X + ll, *Y = lam + l, *G = Y + (size_t)m * l, *T = G + ll;
    int *perm = (int *)(T + ll);
    const double one = 1.0, zero = 0.0;
    tn_defl_info_t inf = {0, {0}};
    /* level 1: G = M^T M */
    dsyrk_("U", "T", &l, &m, &one, M, &ldm, &zero, X, &l);
    int st = syevd(l, X, lam);
    const double lam1 = lam[l - 1];
    int b = l, taken = 0; /* columns 0 .. b - 1 not taken */
    while (st == TCNLA_SUCCESS) {
        const int lev = inf.levels;
        if (lev > 0) { /* Y_b = M X_b, G_b = Y_b^T Y_b = Z diag(mu) Z^T */
            dgemm_("N", "N", &m, &b, &l, &one, M, &ldm, X, &l, &zero, Y, &m);
            dsyrk_("U", "T", &b, &m, &one, Y, &m, &zero, G, &b);
            st = syevd(b, G, lam);
            if (st) break;
            /* X_b <- X_b Z */
            dgemm_("N", "N", &l, &b, &b, &one, X, &l, G, &b, &zero, T, &l);
            memcpy(X, T, sizeof(double) * (size_t)l * b);
        }
        const int t = tn_defl_take(lam, b, tau, lam1, lev + 1 == maxlev);
        if (t < 0) {
            st = TCNLA_ERR_NUMERICAL;
            break;
        }
        inf.taken[inf.levels++] = t;
        b -= t, taken += t;
        if (taken >= k || b == 0) break;
    }
    if (st == TCNLA_SUCCESS) {
        tn_defl_order(lam, l, taken, perm);
        for (int j = 0; j < k; j++) {
            const double sj = sqrt(fmax(lam[perm[j]], 0.0));
            s[j] = sj;
            memcpy(V + (size_t)j * l, X + (size_t)perm[j] * l, sizeof(double) * (size_t)l);
        }
        /* U = M V / s */
        dgemm_("N", "N", &m, &k, &l, &one, M, &ldm, V, &l, &zero, U, &m);
        for (int j = 0; j < k; j++) {
            const double inv = s[j] > 0.0 ? 1.0 / s[j] : 0.0;
            for (int i = 0; i < m; i++) U[i + (size_t)j * m] *= inv;
        }
    }
    if (info) *info = inf;
    free(X);
    return st;
}
