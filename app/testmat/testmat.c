/* Test-matrix generators (see testmat.h). */
#include "testmat/testmat.h"
#include "tcnla.h"

#include <math.h>
#include <stdlib.h>

void slatms_(const int *m, const int *n, const char *dist, int *iseed, const char *sym, float *d,
             const int *mode, const float *cond, const float *dmax, const int *kl, const int *ku,
             const char *pack, float *a, const int *lda, float *work, int *info);
void sgemm_(const char *ta, const char *tb, const int *m, const int *n, const int *k,
            const float *alpha, const float *A, const int *lda, const float *B, const int *ldb,
            const float *beta, float *C, const int *ldc);
void ssyrk_(const char *uplo, const char *trans, const int *n, const int *k, const float *alpha,
            const float *a, const int *lda, const float *beta, float *c, const int *ldc);

void tn_spectrum(tn_spectrum_t kind, int64_t nsv, int64_t p, double sp, int64_t r, double alpha,
                 double phi, double *sigma) {
    for (int64_t i = 0; i < nsv; i++) {
        if (kind == TN_SPEC_LINEAR) {
            double a = (1.0 - sp) / (double)p;
            sigma[i] = fmax(1.0 - a * (double)i, sp);
        } else if (kind == TN_SPEC_EXP) {
            double a = log2(1.0 / sp) / (double)p;
            sigma[i] = exp2(-a * (double)i);
        } else {
            sigma[i] = i < r ? phi : pow((double)(i - r + 2), -alpha);
        }
    }
}

int tn_testmat_latms(int64_t m, int64_t n, const double *sigma, uint64_t seed, float *A,
                     int64_t lda) {
    int im = (int)m, in = (int)n, ilda = (int)lda, info = 0, mode = 0, kl = im - 1, ku = in - 1;
    int64_t mn = m < n ? m : n;
    float *d = malloc(sizeof(float) * (size_t)(mn + 3 * (m > n ? m : n)));
    if (!d) return -1;
    float *work = d + mn;
    for (int64_t i = 0; i < mn; i++) d[i] = (float)sigma[i];
    int iseed[4] = {(int)(seed & 4095), (int)((seed >> 12) & 4095), (int)((seed >> 24) & 4095),
                    (int)(((seed >> 36) & 4094) | 1)};
    float cond = 1.0f, dmax = 1.0f;
    slatms_(&im, &in, "N", iseed, "N", d, &mode, &cond, &dmax, &kl, &ku, "N", A, &ilda, work,
            &info);
    free(d);
    return info;
}

void sgeqrf_(const int *m, const int *n, float *a, const int *lda, float *tau, float *work,
             const int *lwork, int *info);
void sorgqr_(const int *m, const int *n, const int *k, float *a, const int *lda, const float *tau,
             float *work, const int *lwork, int *info);

/* Q (rows x r, orthonormal) of a Gaussian matrix. */
static int random_orthonormal(int64_t rows, int64_t r, uint64_t seed, uint64_t stream, float *Q) {
    int ir = (int)rows, ic = (int)r, info = 0, lwork = -1;
    float wq;
    tcnla_rand_normal(seed, stream, 0.0f, 1.0f, rows * r, Q);
    sgeqrf_(&ir, &ic, Q, &ir, NULL, &wq, &lwork, &info);
    lwork = (int)wq + 64 * ic;
    float *tau = malloc(sizeof(float) * (size_t)(r + lwork));
    if (!tau) return -1;
    sgeqrf_(&ir, &ic, Q, &ir, tau, tau + r, &lwork, &info);
    if (info == 0) sorgqr_(&ir, &ic, &ic, Q, &ir, tau, tau + r, &lwork, &info);
    free(tau);
    return info;
}

int tn_testmat_svd_fast(int64_t m, int64_t n, int64_t r, const double *sigma, uint64_t seed,
                        float *A, int64_t lda) {
    float *U = malloc(sizeof(float) * (size_t)((m + n) * r));
    if (!U) return -1;
    float *V = U + m * r;
    int st = random_orthonormal(m, r, seed, 31, U);
    if (st == 0) st = random_orthonormal(n, r, seed, 32, V);
    if (st == 0) {
        for (int64_t j = 0; j < r; j++) /* U <- U diag(sigma) */
            for (int64_t i = 0; i < m; i++) U[i + j * m] = (float)((double)U[i + j * m] * sigma[j]);
        int im = (int)m, in = (int)n, ir = (int)r, ild = (int)lda;
        const float one = 1.0f, zero = 0.0f;
        sgemm_("N", "T", &im, &in, &ir, &one, U, &im, V, &in, &zero, A, &ild);
    }
    free(U);
    return st;
}

int tn_testmat_cauchy(int64_t m, int64_t n, uint64_t seed, float *A, int64_t lda) {
    /* A = (C C^T) C through the m x m Gram matrix where it takes at most
     * 64 MiB or no more than A (m <= n); else A = C (C^T C) through the
     * n x n one (m > n): the same product, rounded in another order. */
    const int tall = m > n && m > 4096;
    const int64_t g = tall ? n : m;
    float *x = malloc(sizeof(float) * (size_t)(m + n));
    float *C = malloc(sizeof(float) * (size_t)(m * n));
    float *G = malloc(sizeof(float) * (size_t)(g * g));
    if (!x || !C || !G) {
        free(x), free(C), free(G);
        return -1;
    }
    float *y = x + m;
    tcnla_rand_uniform(seed, 11, -1e-3f, 1e-3f, m, x);
    tcnla_rand_uniform(seed, 12, -1e-3f, 1e-3f, n, y);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) C[i + j * m] = (float)(1.0 / (fabs((double)x[i] - y[j]) + 1e-3));
    int im = (int)m, in = (int)n, ild = (int)lda, ig = (int)g;
    const float one = 1.0f, zero = 0.0f;
    ssyrk_("U", tall ? "T" : "N", &ig, tall ? &im : &in, &one, C, &im, &zero, G, &ig);
    for (int64_t j = 0; j < g; j++)
        for (int64_t i = j + 1; i < g; i++) G[i + j * g] = G[j + i * g];
    if (tall) sgemm_("N", "N", &im, &in, &in, &one, C, &im, G, &ig, &zero, A, &ild);
    else sgemm_("N", "N", &im, &in, &im, &one, G, &im, C, &im, &zero, A, &ild);
    free(x), free(C), free(G);
    return 0;
}

int tn_testmat_lowrank(int64_t m, int64_t n, int64_t k, uint64_t seed, float *A, int64_t lda) {
    float *X = malloc(sizeof(float) * (size_t)((m + n) * k));
    if (!X) return -1;
    float *Y = X + m * k;
    tcnla_rand_normal(seed, 21, 0.0f, 1.0f, m * k, X);
    tcnla_rand_normal(seed, 22, 0.0f, 1.0f, n * k, Y);
    int im = (int)m, in = (int)n, ik = (int)k, ild = (int)lda;
    const float one = 1.0f, zero = 0.0f;
    sgemm_("N", "T", &im, &in, &ik, &one, X, &im, Y, &in, &zero, A, &ild);
    free(X);
    return 0;
}

int tn_testmat_tucker(int order, const int64_t *dims, const int64_t *ranks, int64_t pad,
                      uint64_t seed, float *A) {
    int64_t cur[16], sz = 1, maxsz = 1;
    for (int i = 0; i < order; i++) cur[i] = ranks[i], sz *= ranks[i];
    /* the largest intermediate: dims up to mode i, ranks after */
    for (int i = 0; i < order; i++) {
        int64_t s = 1;
        for (int a = 0; a < order; a++) s *= a <= i ? dims[a] : ranks[a];
        if (s > maxsz) maxsz = s;
    }
    if (sz > maxsz) maxsz = sz;
    float *g = malloc(sizeof(float) * (size_t)maxsz), *g2 = malloc(sizeof(float) * (size_t)maxsz);
    if (!g || !g2) {
        free(g), free(g2);
        return -1;
    }
    tcnla_rand_uniform(seed, 100, -1.0f, 1.0f, sz, g);
    for (int i = 0; i < order; i++) {
        const int64_t J = ranks[i], I = dims[i], r = ranks[i] - pad;
        float *Oa = malloc(sizeof(float) * (size_t)(J * r + r * I + J * I));
        if (!Oa) {
            free(g), free(g2);
            return -1;
        }
        float *Ob = Oa + J * r, *Om = Ob + r * I;
        tcnla_rand_uniform(seed, 200 + (uint64_t)i, -1.0f, 1.0f, J * r, Oa);
        tcnla_rand_uniform(seed, 300 + (uint64_t)i, -1.0f, 1.0f, r * I, Ob);
        int iJ = (int)J, iI = (int)I, ir = (int)r;
        const float one = 1.0f, zero = 0.0f;
        sgemm_("N", "N", &iJ, &iI, &ir, &one, Oa, &iJ, Ob, &ir, &zero, Om, &iJ); /* J x I */
        int64_t L = 1, T = 1;
        for (int a = 0; a < i; a++) L *= cur[a];
        for (int a = i + 1; a < order; a++) T *= cur[a];
        /* slab t: (L x J) * Om (J x I) -> L x I */
        int iL = (int)L;
        for (int64_t t = 0; t < T; t++)
            sgemm_("N", "N", &iL, &iI, &iJ, &one, g + t * L * J, &iL, Om, &iJ, &zero,
                   g2 + t * L * I, &iL);
        cur[i] = I;
        float *tmp = g;
        g = g2, g2 = tmp;
        free(Oa);
    }
    int64_t total = 1;
    for (int i = 0; i < order; i++) total *= dims[i];
    for (int64_t i = 0; i < total; i++) A[i] = g[i];
    free(g), free(g2);
    return 0;
}
