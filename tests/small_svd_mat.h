/* Test matrices and checks of the small SVD's one-sided Jacobi path
 * (src/linalg/jacobi_svd.h), shared by tests/test_small_svd.c (the C
 * reference) and src/backend/cuda/test_gpu_randnla.c (the GPU kernel).
 *
 * ssvd_graded: M = R^T (l x l, ld l, FP64) for R the triangular factor of
 * G D (G Gaussian, D = diag(d), d_j = 10^(-decades j / (k - 1)) for j < k,
 * then on down by 10^-0.1 a column; 0 from column `rank` on): R's columns
 * graded like the singular values, as the randomized SVD's R from
 * W = A^T Q (with Q's columns ordered by the range finder). ssvd_exact:
 * the singular values of M by LAPACK's dgesvj (one-sided Jacobi,
 * relatively accurate on such M), descending. ssvd_check: the errors of
 * k triplets (U, V l x k, ld l; s descending) against them. */
#ifndef TCNLA_TEST_SMALL_SVD_MAT_H
#define TCNLA_TEST_SMALL_SVD_MAT_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work,
             const int *lwork, int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda,
             const double *tau, double *work, const int *lwork, int *info);
void dgesvj_(const char *joba, const char *jobu, const char *jobv, const int *m, const int *n,
             double *a, const int *lda, double *sva, const int *mv, double *v, const int *ldv,
             double *work, const int *lwork, int *info);
void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
            double *work, const int *lwork, int *info);
#ifdef __cplusplus
}
#endif

static inline double ssvd_gauss(uint64_t *st) {
    double u[2];
    for (int i = 0; i < 2; i++) {
        *st = *st * 6364136223846793005ULL + 1442695040888963407ULL;
        u[i] = ((double)(*st >> 11) + 0.5) * 0x1p-53;
    }
    return sqrt(-2.0 * log(u[0])) * cos(6.283185307179586 * u[1]);
}

static inline int ssvd_graded(int l, int k, double decades, int rank, uint64_t seed, double *M) {
    double *A = (double *)malloc(sizeof(double) * ((size_t)l * l + 64 * (size_t)l + l));
    if (!A) return -1;
    double *tau = A + (size_t)l * l, *work = tau + l;
    uint64_t st = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (int j = 0; j < l; j++) {
        double d = j < k ? pow(10.0, -decades * j / (k > 1 ? k - 1 : 1))
                         : pow(10.0, -decades - 0.1 * (j - k + 1));
        if (j >= rank) d = 0.0;
        for (int i = 0; i < l; i++) A[i + (size_t)j * l] = d * ssvd_gauss(&st);
    }
    int info = 0, lw = 64 * l;
    dgeqrf_(&l, &l, A, &l, tau, work, &lw, &info);
    for (int j = 0; j < l; j++) /* M = R^T */
        for (int i = 0; i < l; i++) M[i + (size_t)j * l] = i >= j ? A[j + (size_t)i * l] : 0.0;
    free(A);
    return info;
}

static inline int ssvd_desc(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

static inline int ssvd_exact(int l, const double *M, double *sx) {
    int lw = 2 * l + 64, info = 0, mv = 0, ldv = 1;
    double *A = (double *)malloc(sizeof(double) * ((size_t)l * l + (size_t)lw));
    if (!A) return -1;
    double *work = A + (size_t)l * l, vdummy = 0.0;
    memcpy(A, M, sizeof(double) * (size_t)l * l);
    dgesvj_("G", "N", "N", &l, &l, A, &l, sx, &mv, &vdummy, &ldv, work, &lw, &info);
    for (int i = 0; i < l; i++) sx[i] *= work[0];
    qsort(sx, (size_t)l, sizeof(double), ssvd_desc);
    free(A);
    return info;
}

/* M (m x l, ld m, m >= l) = Ua diag(s) Vb^T with Ua (m x l) and Vb (l x l)
 * the orthonormal Q factors of Gaussian matrices (LAPACK dgeqrf, dorgqr):
 * singular values s exactly, up to M's rounding to FP64 (|dM| about
 * eps s_1). */
static inline int ssvd_orth(int m, int l, uint64_t *st, double *Q) {
    int info = 0, lw = 64 * l;
    double *tau = (double *)malloc(sizeof(double) * ((size_t)l + (size_t)lw));
    if (!tau) return -1;
    for (size_t i = 0; i < (size_t)m * l; i++) Q[i] = ssvd_gauss(st);
    dgeqrf_(&m, &l, Q, &m, tau, tau + l, &lw, &info);
    if (!info) dorgqr_(&m, &l, &l, Q, &m, tau, tau + l, &lw, &info);
    free(tau);
    return info;
}

static inline int ssvd_planted(int m, int l, const double *s, uint64_t seed, double *M) {
    double *Ua = (double *)malloc(sizeof(double) * ((size_t)m * l + (size_t)l * l));
    if (!Ua) return -1;
    double *Vb = Ua + (size_t)m * l;
    uint64_t st = seed * 0x9E3779B97F4A7C15ULL + 7;
    int info = ssvd_orth(m, l, &st, Ua);
    if (!info) info = ssvd_orth(l, l, &st, Vb);
    for (int j = 0; j < l && !info; j++)
        for (int i = 0; i < m; i++) {
            double acc = 0.0;
            for (int c = 0; c < l; c++) acc += Ua[i + (size_t)c * m] * s[c] * Vb[j + (size_t)c * l];
            M[i + (size_t)j * m] = acc;
        }
    free(Ua);
    return info;
}

/* The eigenvectors of M^T M (ascending; dsyev): the Gram path's X, the
 * preconditioner of the Jacobi path */
static inline int ssvd_gram_vectors(int l, const double *M, double *X) {
    int lw = 64 * l, info = 0;
    double *w = (double *)malloc(sizeof(double) * ((size_t)l + (size_t)lw));
    if (!w) return -1;
    for (int j = 0; j < l; j++)
        for (int i = 0; i < l; i++) {
            double acc = 0.0;
            for (int r = 0; r < l; r++) acc += M[r + (size_t)i * l] * M[r + (size_t)j * l];
            X[i + (size_t)j * l] = acc;
        }
    dsyev_("V", "U", &l, X, &l, w, w + l, &lw, &info);
    free(w);
    return info;
}

typedef struct {
    double sv;     /* max_j |s_j - sx_j| / sx_j */
    double res;    /* max_j |M v_j - s_j u_j| / s_j */
    double orth;   /* max |U^T U - I|, |V^T V - I| (entries) */
} ssvd_err;

static inline void ssvd_check(int l, int k, const double *M, const double *U, const double *s,
                       const double *V, const double *sx, ssvd_err *e) {
    e->sv = e->res = e->orth = 0.0;
    for (int j = 0; j < k; j++) {
        const double d = fabs(s[j] - sx[j]) / sx[j];
        if (!(d <= e->sv)) e->sv = d; /* NaN sticks */
        double r2 = 0.0;
        for (int i = 0; i < l; i++) {
            double acc = 0.0;
            for (int c = 0; c < l; c++) acc += M[i + (size_t)c * l] * V[c + (size_t)j * l];
            acc -= s[j] * U[i + (size_t)j * l];
            r2 += acc * acc;
        }
        const double r = sqrt(r2) / sx[j];
        if (!(r <= e->res)) e->res = r;
        for (int m = 0; m <= j; m++) {
            double du = 0.0, dv = 0.0;
            for (int i = 0; i < l; i++) {
                du += U[i + (size_t)j * l] * U[i + (size_t)m * l];
                dv += V[i + (size_t)j * l] * V[i + (size_t)m * l];
            }
            du = fabs(du - (m == j)), dv = fabs(dv - (m == j));
            if (!(du <= e->orth)) e->orth = du;
            if (!(dv <= e->orth)) e->orth = dv;
        }
    }
}

#endif
