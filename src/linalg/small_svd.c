/* The small SVDs of the randomized drivers: tn_small_svd (an n x n FP64
 * matrix on the host, LAPACK's dgesdd) and tn_small_svd_t (the leading k
 * triplets of R^T for an l x l R in the handle's memory), whose CPU backend
 * operation tn_cpu_small_svd_t is here too, and tn_jsvd_ref, the C
 * reference of the GPU's one-sided Jacobi path (jacobi_svd.h). */
#include "core/internal.h"
#include "linalg/jacobi_svd.h"
#include "linalg/lapack.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int tn_small_svd(int n, const double *M, double *U, double *S, double *VT) {
    /* divide and conquer (dgesdd): about 3x faster than dgesvd at n ~ 266 */
    double *T = malloc(sizeof(double) * (size_t)n * (size_t)n);
    int *iwork = malloc(sizeof(int) * 8 * (size_t)n);
    if (!T || !iwork) {
        free(T), free(iwork);
        return TCNLA_ERR_ALLOC;
    }
    memcpy(T, M, sizeof(double) * (size_t)n * (size_t)n);
    int info = 0, lwork = -1;
    double wq;
    dgesdd_("A", &n, &n, T, &n, S, U, &n, VT, &n, &wq, &lwork, iwork, &info);
    lwork = (int)wq + 1;
    double *work = malloc(sizeof(double) * (size_t)lwork);
    if (!work) {
        free(T), free(iwork);
        return TCNLA_ERR_ALLOC;
    }
    dgesdd_("A", &n, &n, T, &n, S, U, &n, VT, &n, work, &lwork, iwork, &info);
    free(work), free(T), free(iwork);
    return info == 0 ? TCNLA_SUCCESS : TCNLA_ERR_NUMERICAL;
}

int tn_small_svd_t(tcnla_handle_t h, int64_t l, int64_t k, const float *R, float *Uk, float *Vk,
                   float *Sk, int scale_vk) {
    return h->ops->small_svd_t(h, l, k, R, Uk, Vk, Sk, scale_vk);
}

/* The CPU backend's small_svd_t (src/core/backend.h). */
int tn_cpu_small_svd_t(tcnla_handle_t h, int64_t l, int64_t k, const float *R, float *Uk,
                       float *Vk, float *Sk, int scale_vk) {
    (void)h;
    /* host memory: R^T in FP64, dgesdd, the leading k triplets */
    double *T = malloc(sizeof(double) * (size_t)(3 * l * l + l));
    if (!T) return TCNLA_ERR_ALLOC;
    double *U = T + l * l, *VT = U + l * l, *S = VT + l * l;
    for (int64_t j = 0; j < l; j++)
        for (int64_t i = 0; i < l; i++) T[i + j * l] = R[j + i * l];
    int st = tn_small_svd((int)l, T, U, S, VT);
    if (st == TCNLA_SUCCESS)
        for (int64_t j = 0; j < k; j++) {
            for (int64_t i = 0; i < l; i++) {
                Uk[i + j * l] = (float)U[i + j * l];
                Vk[i + j * l] = (float)(scale_vk ? VT[j + i * l] * S[j] : VT[j + i * l]);
            }
            if (Sk) Sk[j] = (float)S[j];
        }
    free(T);
    return st;
}


/* ---- the C reference of the GPU's one-sided Jacobi path (jacobi_svd.h) */

/* One step's work on the pair of blocks (bi, bj) of Y and V (l rows, ld l):
 * the Gram matrix, the inner sweeps, the update. Returns 1 where a rotation
 * was made. H, Q, T: scratch of (2W)^2, (2W)^2 and 2W l doubles. */
static int jsvd_pair_ref(int l, double *Y, double *V, int bi, int bj, double tol, int inner,
                         int flip, double *H, double *Q, double *T) {
    enum { W2 = 2 * TN_JSVD_W };
    int col[W2];
    for (int c = 0; c < W2; c++)
        col[c] = c < TN_JSVD_W ? bi * TN_JSVD_W + c : bj * TN_JSVD_W + c - TN_JSVD_W;
    for (int i = 0; i < W2; i++)
        for (int j = i; j < W2; j++) { /* (the products commute: H exactly symmetric) */
            _Static_assert(TN_JSVD_RG == 4, "the partial sums' order");
            const double *yi = Y + (size_t)col[i] * l, *yj = Y + (size_t)col[j] * l;
            double acc[TN_JSVD_RG] = {0.0}; /* jacobi_svd.h's order */
            for (int r = 0; r < l; r++)
                acc[(r % TN_JSVD_RC) / (TN_JSVD_RC / TN_JSVD_RG)] += yi[r] * yj[r];
            H[i * W2 + j] = H[j * W2 + i] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
            Q[i * W2 + j] = Q[j * W2 + i] = i == j ? 1.0 : 0.0;
        }
    int rotated = 0;
    for (int s = 0; s < inner; s++) {
        int any = 0;
        for (int rd = 0; rd < W2 - 1; rd++) {
            int P[W2 / 2], R[W2 / 2], on[W2 / 2];
            double cs[W2 / 2], sn[W2 / 2], t[W2 / 2], a[W2 / 2], b[W2 / 2], c[W2 / 2];
            for (int k = 0; k < W2 / 2; k++) {
                tn_jsvd_pair(W2, rd, k, &P[k], &R[k]);
                a[k] = H[P[k] * W2 + P[k]], b[k] = H[R[k] * W2 + R[k]], c[k] = H[P[k] * W2 + R[k]];
                on[k] = tn_jsvd_rot(a[k], b[k], c[k], tol, flip, &cs[k], &sn[k], &t[k]);
                any |= on[k];
            }
            /* H = H J, Q = Q J (columns), then H = J^T H (rows) */
            for (int k = 0; k < W2 / 2; k++)
                if (on[k])
                    for (int r = 0; r < W2; r++) {
                        double *h = H + r * W2, *q = Q + r * W2;
                        const double hp = h[P[k]], hq = h[R[k]], qp = q[P[k]], qq = q[R[k]];
                        h[P[k]] = cs[k] * hp - sn[k] * hq;
                        h[R[k]] = sn[k] * hp + cs[k] * hq;
                        q[P[k]] = cs[k] * qp - sn[k] * qq;
                        q[R[k]] = sn[k] * qp + cs[k] * qq;
                    }
            for (int k = 0; k < W2 / 2; k++)
                if (on[k])
                    for (int cc = 0; cc < W2; cc++) {
                        double *hp = H + P[k] * W2 + cc, *hq = H + R[k] * W2 + cc;
                        if (cc == P[k]) {
                            *hp = a[k] - t[k] * c[k];
                            *hq = 0.0;
                        } else if (cc == R[k]) {
                            *hp = 0.0;
                            *hq = b[k] + t[k] * c[k];
                        } else {
                            const double x = *hp, y = *hq;
                            *hp = cs[k] * x - sn[k] * y;
                            *hq = sn[k] * x + cs[k] * y;
                        }
                    }
        }
        rotated |= any;
        if (!any) break;
    }
    if (rotated) /* X_C = X_C Q, each element summed over c in order */
        for (int m = 0; m < 2; m++) {
            double *X = m ? V : Y;
            for (int j = 0; j < W2; j++) {
                double *tj = T + (size_t)j * l;
                for (int r = 0; r < l; r++) tj[r] = 0.0;
                for (int c = 0; c < W2; c++) {
                    const double *xc = X + (size_t)col[c] * l, qcj = Q[c * W2 + j];
                    for (int r = 0; r < l; r++) tj[r] += xc[r] * qcj;
                }
            }
            for (int j = 0; j < W2; j++)
                memcpy(X + (size_t)col[j] * l, T + (size_t)j * l, sizeof(double) * (size_t)l);
        }
    return rotated;
}

int tn_jsvd_ref_run(int l, double *Y, double *V, int inner, int fault, int *sweeps) {
    enum { W2 = 2 * TN_JSVD_W };
    double *H = malloc(sizeof(double) * (2 * W2 * W2 + (size_t)W2 * (size_t)l));
    if (!H) return TCNLA_ERR_ALLOC;
    const int nb = tn_jsvd_nblocks(l);
    const double tol = tn_jsvd_tol(l);
    int sw = 0, conv = 0;
    while (sw < TN_JSVD_SWEEPS && !conv) {
        int any = 0;
        for (int step = 0; step < nb - 1; step++)
            for (int p = 0; p < nb / 2; p++) {
                int bi, bj;
                tn_jsvd_pair(nb, step, p, &bi, &bj);
                any |= jsvd_pair_ref(l, Y, V, bi, bj, tol, inner, fault == 1, H, H + W2 * W2,
                                     H + 2 * W2 * W2);
            }
        sw++;
        conv = !any || fault == 2;
    }
    free(H);
    *sweeps = sw;
    return conv ? TCNLA_SUCCESS : TN_NOT_TAKEN;
}

int tn_jsvd_ref(int l, int k, const double *M, const double *X0, double *U, double *s, double *V,
                int *sweeps, int fault) {
    if (l < 1 || l > TN_JSVD_MAXL) return -1;
    if (k < 1 || k > l) return -2;
    if (!M) return -3;
    if (!U) return -5;
    if (!s) return -6;
    if (!V) return -7;
    const int nb = tn_jsvd_nblocks(l), L = nb * TN_JSVD_W;
    const size_t ll = (size_t)l * (size_t)L;
    double *Y = calloc(2 * ll + (size_t)l, sizeof(double));
    if (!Y) return TCNLA_ERR_ALLOC;
    double *Vw = Y + ll, *nrm = Vw + ll;
    for (int j = 0; j < l; j++) /* Y = M X0 (or M), Vw = X0 (or I) */
        for (int i = 0; i < l; i++) {
            double acc = 0.0;
            if (X0)
                for (int c = 0; c < l; c++) acc += M[i + (size_t)c * l] * X0[c + (size_t)j * l];
            else
                acc = M[i + (size_t)j * l];
            Y[i + (size_t)j * l] = acc;
            Vw[i + (size_t)j * l] = X0 ? X0[i + (size_t)j * l] : (double)(i == j);
        }
    int sw = 0;
    int st = tn_jsvd_ref_run(l, Y, Vw, TN_JSVD_INNER, fault, &sw);
    if (sweeps) *sweeps = sw;
    for (int j = 0; j < l && st == TCNLA_SUCCESS; j++) {
        double acc = 0.0;
        for (int r = 0; r < l; r++) acc += Y[r + (size_t)j * l] * Y[r + (size_t)j * l];
        nrm[j] = sqrt(acc);
        if (!isfinite(nrm[j])) st = TCNLA_ERR_NUMERICAL;
    }
    for (int j = 0; j < l && st == TCNLA_SUCCESS; j++) {
        int rank = 0; /* descending, ties by index */
        for (int i = 0; i < l; i++) rank += nrm[i] > nrm[j] || (nrm[i] == nrm[j] && i < j);
        if (rank >= k) continue;
        const double inv = nrm[j] > 0.0 ? 1.0 / nrm[j] : 0.0;
        s[rank] = nrm[j];
        for (int r = 0; r < l; r++) {
            U[r + (size_t)rank * l] = Y[r + (size_t)j * l] * inv;
            V[r + (size_t)rank * l] = Vw[r + (size_t)j * l];
        }
    }
    free(Y);
    return st;
}
