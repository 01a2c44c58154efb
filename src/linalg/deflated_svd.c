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

void tn_defl_refine_ref(int k, const double *F, const double *s, double rho, double *Qv,
                        double *Qu) {
    double *sn = Qu + (size_t)k * k;
    for (int j = 0; j < k; j++) {
        double sum = 0.0;
        for (int i = 0; i < k; i++) {
            const double p = i == j ? 0.0 : tn_defl_p(F[i + (size_t)j * k], s[i], s[j], rho);
            sum += p == 0.0 ? 0.0 : F[i + (size_t)j * k] * s[i] * s[j] * p;
            Qv[i + (size_t)j * k] = s[i] * ((i == j) + p);
        }
        sn[j] = sqrt(fmax(s[j] * s[j] * F[j + (size_t)j * k] + sum, 0.0));
        for (int i = 0; i < k; i++)
            Qu[i + (size_t)j * k] = sn[j] > 0.0 ? Qv[i + (size_t)j * k] / sn[j] : 0.0;
    }
}

int tn_defl_svd_ref(int m, int l, int k, const double *M, int ldm, double tau, int maxlev,
                    int refine, double *U, double *s, double *V, tn_defl_info_t *info) {
    const double rho = TN_DEFL_RHO;
    if (m < 1) return -1;
    if (l < 1 || l > m) return -2;
    if (k < 1 || k > l) return -3;
    if (!M) return -4;
    if (ldm < m) return -5;
    if (!(tau > 0.0 && tau < 1.0)) return -6;
    if (maxlev < 1 || maxlev > TN_DEFL_LEVELS) return -7;
    if (refine != 0 && refine != 1) return -8;
    if (!U) return -9;
    if (!s) return -10;
    if (!V) return -11;
    const size_t ll = (size_t)l * (size_t)l;
    /* X (l x l, then Qu: k x k and k), lam (l), Y (m x l, then V', U': l x k,
     * m x k), G (l x l, then F), T (l x l, then Qv), perm */
    double *X = malloc(sizeof(double) * (3 * ll + 2 * (size_t)l + 2 * (size_t)m * l) +
                       sizeof(int) * l);
    if (!X) return TCNLA_ERR_ALLOC;
    double *lam = X + ll + l, *Y = lam + l, *G = Y + 2 * (size_t)m * l, *T = G + ll;
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
        if (refine && inf.levels > 1) { /* F = U^T U, then the refinement */
            double *F = G, *Qv = T, *Qu = X, *Vn = Y, *Un = Y + (size_t)l * k;
            dgemm_("T", "N", &k, &k, &m, &one, U, &m, U, &m, &zero, F, &k);
            tn_defl_refine_ref(k, F, s, rho, Qv, Qu);
            /* V <- V (I + P) = (V / s) Qv, U <- U diag(s) (I + P) diag(1 / s') = U Qu */
            for (int j = 0; j < k; j++)
                for (int i = 0; i < l; i++) {
                    double acc = 0.0;
                    for (int c = 0; c < k; c++) {
                        const double vs = s[c] > 0.0 ? V[i + (size_t)c * l] / s[c] : 0.0;
                        acc += vs * Qv[c + (size_t)j * k];
                    }
                    Vn[i + (size_t)j * l] = acc;
                }
            dgemm_("N", "N", &m, &k, &k, &one, U, &m, Qu, &k, &zero, Un, &m);
            memcpy(V, Vn, sizeof(double) * (size_t)l * k);
            memcpy(U, Un, sizeof(double) * (size_t)m * k);
            for (int j = 0; j < k; j++) s[j] = Qu[(size_t)k * k + j];
        }
    }
    if (info) *info = inf;
    free(X);
    return st;
}
