/* The small SVDs of the randomized drivers: tn_small_svd (an n x n FP64
 * matrix on the host, LAPACK's dgesdd) and tn_small_svd_t (the leading k
 * triplets of R^T for an l x l R in the handle's memory), whose CPU backend
 * operation tn_cpu_small_svd_t is here too. */
#include "core/internal.h"
#include "linalg/lapack.h"

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

