/* GPU tests of the small SVD's deflated Gram path (src/backend/cuda/
 * small_svd_cuda.c; the algorithm, its level rule and error argument in
 * src/linalg/deflated_svd.h) against its C reference tn_defl_svd_ref
 * (tests/test_deflated_svd.c) and LAPACK's dgesvj, in both forms (R^T and
 * the Gram-on-W form), its refusals (NaN,
 * exactly low rank, the tuning's switch) and the randomized SVD on
 * deep_decay / low_rank spectra (bench/rsvd.c's) with it and without it. */
#include "core/internal.h"
#include "backend/cuda/tn_cuda.h"
#include "linalg/deflated_svd.h"
#include "tcnla.h"
#include "test.h"
#include "testmat/testmat.h"
#include "gpu/gpu_util.h"
#include "small_svd_mat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPS 0x1p-52


/* max(a, b), NaN where b is NaN */
static double dmax(double a, double b) { return b <= a ? a : b; }

/* R = M^T in FP32 (l x l), Mw = M widened back from it (what the GPU sees) */
static void r32(int l, const double *M, float *R, double *Mw) {
    for (int j = 0; j < l; j++)
        for (int i = 0; i < l; i++) R[i + (size_t)j * l] = (float)M[j + (size_t)i * l];
    for (int j = 0; j < l; j++)
        for (int i = 0; i < l; i++) Mw[i + (size_t)j * l] = (double)R[j + (size_t)i * l];
}

/* The FP32 triplets (Ug, Vg l x k, ld l; Sg) of Mw: the orthogonality of Ug
 * and Vg (max |Q^T Q - I|) and the residual max_j |Mw v_j - s_j u_j| / s_1. */
static void triplet_err(int l, int k, const double *Mw, const float *Ug, const float *Vg,
                        const float *Sg, double *orth, double *res) {
    double *r = malloc(sizeof(double) * (size_t)l);
    *orth = *res = 0.0;
    if (!r) {
        *orth = *res = NAN;
        return;
    }
    for (int j = 0; j < k; j++) {
        for (int i = 0; i < l; i++) r[i] = -(double)Sg[j] * Ug[i + (size_t)j * l];
        for (int c = 0; c < l; c++) {
            const double v = Vg[c + (size_t)j * l];
            for (int i = 0; i < l; i++) r[i] += Mw[i + (size_t)c * l] * v;
        }
        double r2 = 0.0;
        for (int i = 0; i < l; i++) r2 += r[i] * r[i];
        *res = dmax(*res, sqrt(r2) / Sg[0]);
        for (int q = 0; q <= j; q++) {
            double du = 0.0, dv = 0.0;
            for (int i = 0; i < l; i++) {
                du += (double)Ug[i + (size_t)j * l] * Ug[i + (size_t)q * l];
                dv += (double)Vg[i + (size_t)j * l] * Vg[i + (size_t)q * l];
            }
            *orth = dmax(*orth, fabs(du - (q == j)));
            *orth = dmax(*orth, fabs(dv - (q == j)));
        }
    }
    free(r);
}

/* The default path (TN_SSVD_AUTO) on R^T with s_k = 1e-7 s_1 and 1e-9 s_1,
 * l = 64, 266, 512, 1024: column-graded R (k = l - 10, as the randomized
 * SVD's) and M = Ua diag(s) Vb^T (k = l), rounded to FP32. It must run the
 * deflated path (ran TN_SSVD_RAN_DEFLATE, two levels or more), and give the
 * values to 2^-22 (the FP32 output) plus 8 eps s_1 / s_k (the reference's
 * own bound's order, tests/test_deflated_svd.c) of the C reference on the
 * same widened matrix, to the target 1e-6 of dgesvj's down to 1e-7 s_1
 * (l <= 512; dgesvj itself errs by about eps s_1 on the planted ones), U and V
 * orthonormal to 16 eps s_1 / s_k (the reference's bound is 4) plus 1e-5
 * (FP32), and M v_j = s_j u_j to 1e-6 s_1. */
TEST(gpu_small_svd_deflate_matches_reference) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    const int ls[] = {64, 266, 512, 1024};
    for (int t = 0; t < 4; t++)
        for (int dec = 7; dec <= 9; dec += 2)
            for (int kind = 0; kind < 2; kind++) {
                const int l = ls[t], k = kind ? l : l - 10;
                const size_t ll = (size_t)l * l;
                double *M = malloc(sizeof(double) * (4 * ll + 3 * (size_t)l));
                float *R = malloc(sizeof(float) * (3 * ll + (size_t)l));
                REQUIRE(M && R);
                double *Mw = M + ll, *Ur = Mw + ll, *Vr = Ur + ll, *sr = Vr + ll, *sx = sr + l,
                       *s = sx + l;
                float *Ug = R + ll, *Vg = Ug + ll, *Sg = Vg + ll;
                if (kind) {
                    for (int j = 0; j < l; j++) s[j] = pow(10.0, -(double)dec * j / (l - 1));
                    CHECK_EQ_INT(ssvd_planted(l, l, s, 200 + t, M), 0);
                } else {
                    CHECK_EQ_INT(ssvd_graded(l, k, dec, l, 41 + t, M), 0);
                }
                r32(l, M, R, Mw);
                tn_defl_info_t info = {0, {0}};
                REQUIRE(tn_defl_svd_ref(l, l, k, Mw, l, TN_DEFL_TAU, TN_DEFL_LEVELS, 1, Ur, sr, Vr,
                                        &info) == TCNLA_SUCCESS);
                const int exact = l <= 512 && ssvd_exact(l, Mw, sx) == 0;
                float *dR = gt_to_dev(g, R, ll), *dU = gt_to_dev(g, NULL, ll), *dV = gt_to_dev(g, NULL, ll),
                      *dS = gt_to_dev(g, NULL, (size_t)l);
                const int st = tn_cuda_small_svd_path(g, TN_SSVD_AUTO, l, k, dR, dU, dV, dS, 0);
                const int ran = g->cuda->ssvd.path, lev = g->cuda->ssvd.levels;
                CHECK_MSG(st == TCNLA_SUCCESS, "l %d: status %d", l, st);
                if (st == TCNLA_SUCCESS) {
                    gt_to_host(g, Ug, dU, (size_t)l * k), gt_to_host(g, Vg, dV, (size_t)l * k);
                    gt_to_host(g, Sg, dS, (size_t)k);
                    double dsr = 0, dsx = 0, orth = 0, res = 0;
                    for (int j = 0; j < k; j++) {
                        dsr = dmax(dsr, fabs(Sg[j] - sr[j]) / sr[j]);
                        if (exact && sx[j] >= 1e-7 * sx[0]) /* (the target's range) */
                            dsx = dmax(dsx, fabs(Sg[j] - sx[j]) / sx[j]);
                    }
                    triplet_err(l, k, Mw, Ug, Vg, Sg, &orth, &res);
                    const double ratio = sr[0] / sr[k - 1];
                    printf("    %s l %4d s_k/s_1 1e-%d: ran %d levels %d (reference %d); values "
                           "vs reference %.1e, vs dgesvj %.1e; orth %.1e, residual %.1e\n",
                           kind ? "planted" : "graded ", l, dec, ran, lev, info.levels, dsr, dsx,
                           orth, res);
                    CHECK_EQ_INT(ran, TN_SSVD_RAN_DEFLATE);
                    CHECK(lev >= 2 && g->cuda->ssvd.defl_refused == 0);
                    CHECK_MSG(dsr <= 0x1p-22 + 8.0 * EPS * ratio && dsx <= 1e-6,
                              "l %d 1e-%d kind %d: values %.2e %.2e", l, dec, kind, dsr, dsx);
                    CHECK_MSG(orth <= 16.0 * EPS * ratio + 1e-5 && res <= 1e-6,
                              "l %d 1e-%d kind %d: orth %.2e residual %.2e", l, dec, kind, orth,
                              res);
                }
                tcnla_free(g, dR), tcnla_free(g, dU), tcnla_free(g, dV), tcnla_free(g, dS);
                free(M), free(R);
            }
    tcnla_destroy(g);
}

/* Refusals and switches: NaN in R (gesvdj, the deflated path not tried:
 * the eigensolution's vectors are not usable); exactly low rank (rank 150
 * of 200, k = 150: the deflated path, values to 1e-6 of dgesvj; k = 170,
 * 20 zero values: whichever path, reported, the values to 1e-6 s_1 and
 * where the deflated path kept it, U and V orthonormal to its check);
 * the forced path on an easy spectrum (one level), with scale_vk; the
 * tuning's small_svd_deflate = 0 (gesvdj). */
TEST(gpu_small_svd_deflate_refusals) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    const int l = 200;
    const size_t ll = (size_t)l * l;
    double *M = malloc(sizeof(double) * (2 * ll + l));
    float *R = malloc(sizeof(float) * (3 * ll + l));
    REQUIRE(M && R);
    double *Mw = M + ll, *sx = Mw + ll;
    float *Ug = R + ll, *Vg = Ug + ll, *Sg = Vg + ll;
    float *dR = gt_to_dev(g, NULL, ll), *dU = gt_to_dev(g, NULL, ll), *dV = gt_to_dev(g, NULL, ll),
          *dS = gt_to_dev(g, NULL, (size_t)l);
    /* NaN */
    CHECK_EQ_INT(ssvd_graded(l, l - 10, 7.0, l, 5, M), 0);
    r32(l, M, R, Mw);
    R[5 + 7 * l] = NAN;
    tcnla_memcpy(g, dR, R, sizeof(float) * ll, TCNLA_MEMCPY_HOST_TO_HANDLE);
    for (int p = 0; p < 2; p++) {
        const int path = p ? TN_SSVD_DEFLATE : TN_SSVD_AUTO;
        const int st = tn_cuda_small_svd_path(g, path, l, l - 10, dR, dU, dV, dS, 0);
        printf("    NaN, path %d: status %d, ran %d, deflated refused %d\n", path, st,
               g->cuda->ssvd.path, g->cuda->ssvd.defl_refused);
        CHECK_EQ_INT(g->cuda->ssvd.path, TN_SSVD_RAN_GESVDJ);
        CHECK_EQ_INT(g->cuda->ssvd.defl_refused, 0);
    }
    /* exactly low rank */
    CHECK_EQ_INT(ssvd_graded(l, 150, 7.0, 150, 6, M), 0);
    r32(l, M, R, Mw);
    CHECK_EQ_INT(ssvd_exact(l, Mw, sx), 0);
    tcnla_memcpy(g, dR, R, sizeof(float) * ll, TCNLA_MEMCPY_HOST_TO_HANDLE);
    for (int k = 150; k <= 170; k += 20) {
        const int st = tn_cuda_small_svd_path(g, TN_SSVD_AUTO, l, k, dR, dU, dV, dS, 0);
        const int ran = g->cuda->ssvd.path;
        CHECK_EQ_INT(st, TCNLA_SUCCESS);
        gt_to_host(g, Ug, dU, (size_t)l * k), gt_to_host(g, Vg, dV, (size_t)l * k), gt_to_host(g, Sg, dS, k);
        double ds = 0, dz = 0, orth = 0, res = 0;
        for (int j = 0; j < k; j++) {
            if (j < 150) ds = dmax(ds, fabs(Sg[j] - sx[j]) / sx[j]);
            else dz = dmax(dz, fabs(Sg[j]) / Sg[0]);
        }
        triplet_err(l, k, Mw, Ug, Vg, Sg, &orth, &res);
        printf("    rank 150, k %d: ran %d levels %d refused %d; values %.1e, zeros %.1e s_1; "
               "orth %.1e residual %.1e\n", k, ran, g->cuda->ssvd.levels,
               g->cuda->ssvd.defl_refused, ds, dz, orth, res);
        CHECK_MSG(ds <= 1e-6 && dz <= 1e-6 && res <= 1e-6, "k %d: %.2e %.2e %.2e", k, ds, dz,
                  res);
        if (k == 150) CHECK_EQ_INT(ran, TN_SSVD_RAN_DEFLATE);
        else CHECK(ran == TN_SSVD_RAN_DEFLATE || (ran == TN_SSVD_RAN_GESVDJ &&
                                                  g->cuda->ssvd.defl_refused == 1));
        if (ran == TN_SSVD_RAN_DEFLATE && k == 150) CHECK(orth <= 1e-3);
    }
    /* forced, easy spectrum (s_k = 1e-3 s_1): one level; scale_vk */
    const int k = l - 10;
    CHECK_EQ_INT(ssvd_graded(l, k, 3.0, l, 7, M), 0);
    r32(l, M, R, Mw);
    CHECK_EQ_INT(ssvd_exact(l, Mw, sx), 0);
    tcnla_memcpy(g, dR, R, sizeof(float) * ll, TCNLA_MEMCPY_HOST_TO_HANDLE);
    CHECK_EQ_INT(tn_cuda_small_svd_path(g, TN_SSVD_DEFLATE, l, k, dR, dU, dV, dS, 1), 0);
    CHECK_EQ_INT(g->cuda->ssvd.path, TN_SSVD_RAN_DEFLATE);
    CHECK_EQ_INT(g->cuda->ssvd.levels, 1);
    gt_to_host(g, Vg, dV, (size_t)l * k), gt_to_host(g, Sg, dS, k);
    for (int j = 0; j < k; j++) {
        double nv = 0;
        for (int i = 0; i < l; i++) nv += (double)Vg[i + j * l] * Vg[i + j * l];
        CHECK_MSG(fabs(sqrt(nv) - Sg[j]) <= 1e-6 * Sg[j] && fabs(Sg[j] - sx[j]) <= 1e-6 * sx[j],
                  "column %d: |v| %.8e s %.8e exact %.8e", j, sqrt(nv), (double)Sg[j], sx[j]);
    }
    /* the switch: small_svd_deflate = 0 */
    CHECK_EQ_INT(ssvd_graded(l, k, 7.0, l, 8, M), 0);
    r32(l, M, R, Mw);
    tcnla_memcpy(g, dR, R, sizeof(float) * ll, TCNLA_MEMCPY_HOST_TO_HANDLE);
    GT_TUNE(g, small_svd_deflate, 0);
    CHECK_EQ_INT(tn_cuda_small_svd_path(g, TN_SSVD_AUTO, l, k, dR, dU, dV, dS, 0), 0);
    CHECK_EQ_INT(g->cuda->ssvd.path, TN_SSVD_RAN_GESVDJ);
    GT_TUNE(g, small_svd_deflate, 1);
    CHECK_EQ_INT(tn_cuda_small_svd_path(g, TN_SSVD_AUTO, l, k, dR, dU, dV, dS, 0), 0);
    CHECK_EQ_INT(g->cuda->ssvd.path, TN_SSVD_RAN_DEFLATE);
    tcnla_free(g, dR), tcnla_free(g, dU), tcnla_free(g, dV), tcnla_free(g, dS);
    free(M), free(R);
    tcnla_destroy(g);
}

/* The caller's next work (svd_from_gram's `then`): Xk copied out on the
 * handle's stream, the runs counted */
typedef struct {
    tcnla_handle_t g;
    const float *X;
    float *copy;
    size_t n;
    int runs;
} xk_copy_t;

static int xk_copy_run(void *arg) {
    xk_copy_t *t = arg;
    t->runs++;
    return cudaMemcpyAsync(t->copy, t->X, sizeof(float) * t->n, cudaMemcpyDeviceToDevice,
                           t->g->cuda->stream) == cudaSuccess
               ? 0
               : TCNLA_ERR_CUDA;
}

/* The Gram-on-W form (tn_cuda_svd_from_gram, the randomized SVD's last
 * step without W's QR) on a tall W = Ua diag(s) Vb^T (n = 2048, l = 266,
 * and l = 120, whose products, below the FP64 Tensor Core kernels' 129
 * columns, run on the widened W; FP32, s_l = 1e-7 and 1e-9 s_1, k = l -
 * 10): it takes the call by the deflated path (ran TN_SSVD_RAN_DEFLATE,
 * from_w; on Hopper level 1's
 * columns below 1e-9 lam_1 dropped and their span built by defl_fill),
 * the values to 2^-22 +
 * 8 eps s_1 / s_k of the C reference on the widened W and U = Xk (Xk = X,
 * the right vectors of W) and the rows of VT orthonormal to 16 eps s_1 /
 * s_k + 1e-5, W x_j = s_j v_j to 1e-6 s_1; with its last check read as
 * refused (defl_fault) and with small_svd_deflate = 0 it refuses
 * (TN_GRAM_NOT_TAKEN). On Hopper it reads the eigenvalues of level 1 and
 * of level 2 ahead of their checks (ssvd.early bits 0 and 1): the same
 * bits, in both forms, as the call that reads them with their checks
 * (the test hook spec_off) and as the call whose read-ahead checks are
 * told failed (spec_fault: redone without reading ahead, early_redo); its
 * `then` (a copy of Xk, queued before the last wait) sees the final Xk. */
static void gram_on_w_case(tcnla_handle_t g, int l) {
    const int n = 2048, k = l - 10;
    const size_t nl = (size_t)n * l;
    double *M = malloc(sizeof(double) * (2 * nl + 2 * (size_t)l * l + 2 * (size_t)l)),
           *Mw = M + nl, *Ur = Mw + nl, *Vr = Ur + (size_t)l * l, *sr = Vr + (size_t)l * l,
           *s = sr + l;
    double *Ub = malloc(sizeof(double) * nl);
    float *W = malloc(sizeof(float) * (2 * nl + (size_t)l * k + k)), *VT = W + nl,
          *Xk = VT + nl, *Sk = Xk + (size_t)l * k;
    REQUIRE(M && Ub && W);
    float *dW = gt_to_dev(g, NULL, nl), *dX = gt_to_dev(g, NULL, (size_t)l * k), *dS = gt_to_dev(g, NULL, k),
          *dVT = gt_to_dev(g, NULL, (size_t)k * n);
    for (int dec = 7; dec <= 9; dec += 2) {
        for (int j = 0; j < l; j++) s[j] = pow(10.0, -(double)dec * j / (l - 1));
        CHECK_EQ_INT(ssvd_planted(n, l, s, 300 + dec, M), 0);
        for (size_t i = 0; i < nl; i++) W[i] = (float)M[i], Mw[i] = (double)W[i];
        tn_defl_info_t info = {0, {0}};
        REQUIRE(tn_defl_svd_ref(n, l, k, Mw, n, TN_DEFL_TAU, TN_DEFL_LEVELS, 1, Ub, sr, Vr,
                                &info) == TCNLA_SUCCESS);
        tcnla_memcpy(g, dW, W, sizeof(float) * nl, TCNLA_MEMCPY_HOST_TO_HANDLE);
        const int st = tn_cuda_svd_from_gram(g, n, l, k, dW, n, dX, dS, dVT, k);
        CHECK_MSG(st == TCNLA_SUCCESS, "l %d 1e-%d: status %d (ran %d, levels %d, refused %d)", l,
                  dec, st, g->cuda->ssvd.path, g->cuda->ssvd.levels, g->cuda->ssvd.defl_refused);
        if (st == TCNLA_SUCCESS) {
            gt_to_host(g, Xk, dX, (size_t)l * k), gt_to_host(g, Sk, dS, k), gt_to_host(g, VT, dVT, (size_t)k * n);
            double dsr = 0, orth = 0, res = 0;
            for (int j = 0; j < k; j++) {
                dsr = dmax(dsr, fabs(Sk[j] - sr[j]) / sr[j]);
                double r2 = 0;
                for (int i = 0; i < n; i++) {
                    double acc = -(double)Sk[j] * VT[j + (size_t)i * k];
                    for (int c = 0; c < l; c++) acc += Mw[i + (size_t)c * n] * Xk[c + (size_t)j * l];
                    r2 += acc * acc;
                }
                res = dmax(res, sqrt(r2) / Sk[0]);
                for (int q = 0; q <= j; q++) {
                    double dx = 0, dv = 0;
                    for (int i = 0; i < l; i++)
                        dx += (double)Xk[i + (size_t)j * l] * Xk[i + (size_t)q * l];
                    for (int i = 0; i < n; i++)
                        dv += (double)VT[j + (size_t)i * k] * VT[q + (size_t)i * k];
                    orth = dmax(orth, fabs(dx - (q == j)));
                    orth = dmax(orth, fabs(dv - (q == j)));
                }
            }
            const double ratio = sr[0] / sr[k - 1];
            printf("    W %d x %d, s_l/s_1 1e-%d: ran %d from W %d levels %d (reference %d), "
                   "dropped columns filled %d, repairs %d; values vs reference %.1e; orth %.1e, "
                   "residual %.1e\n", n, l, dec, g->cuda->ssvd.path, g->cuda->ssvd.from_w,
                   g->cuda->ssvd.levels, info.levels, g->cuda->ssvd.filled,
                   g->cuda->ssvd.syev_repairs, dsr, orth, res);
            CHECK_EQ_INT(g->cuda->ssvd.path, TN_SSVD_RAN_DEFLATE);
            CHECK_EQ_INT(g->cuda->ssvd.from_w, 1);
            /* (values below 1e-9 lam_1: level 1 drops their columns, defl_fill
             * builds their span) */
            if (tn_cuda_cc(g->cuda) == 90) CHECK(g->cuda->ssvd.filled > 0);
            CHECK_MSG(dsr <= 0x1p-22 + 8.0 * EPS * ratio, "l %d 1e-%d: values %.2e", l, dec, dsr);
            CHECK_MSG(orth <= 16.0 * EPS * ratio + 1e-5 && res <= 1e-6,
                      "l %d 1e-%d: orth %.2e residual %.2e", l, dec, orth, res);
            /* trans (the pass-efficient SVD's U): VT transposed, bit for bit */
            float *V = malloc(sizeof(float) * nl);
            REQUIRE(V);
            REQUIRE(tn_cuda_svd_from_gram_rows(g, n, l, k, dW, n, dX, dS, dVT, n, 1, NULL,
                                               NULL) == 0);
            gt_to_host(g, V, dVT, (size_t)k * n);
            int same = 1;
            for (int i = 0; i < n; i++)
                for (int j = 0; j < k; j++) same &= V[i + (size_t)j * n] == VT[j + (size_t)i * k];
            CHECK_MSG(same, "l %d 1e-%d: V not VT transposed", l, dec);
            /* read ahead (0), not (1: spec_off), told failed and redone (2) */
            for (int tr = 0; tr < 2; tr++) {
                const size_t ov = (size_t)k * n, ox = (size_t)l * k;
                float *o = malloc(sizeof(float) * 3 * (ov + ox + k));
                REQUIRE(o);
                int early[3] = {0, 0, 0};
                unsigned redo[3] = {0, 0, 0};
                float *dXc = gt_to_dev(g, NULL, ox), *Xc = malloc(sizeof(float) * ox);
                REQUIRE(dXc && Xc);
                for (int v = 0; v < 3; v++) {
                    float *ov_ = o + v * (ov + ox + k);
                    xk_copy_t xc = {g, dX, dXc, ox, 0};
                    const tn_then_t then = {xk_copy_run, &xc};
                    g->cuda->spec_off = v == 1, g->cuda->spec_fault = v == 2;
                    const unsigned r0 = g->cuda->ssvd.early_redo;
                    const int sv = tn_cuda_svd_from_gram_rows(g, n, l, k, dW, n, dX, dS, dVT,
                                                              tr ? n : k, tr, NULL, &then);
                    g->cuda->spec_off = g->cuda->spec_fault = 0;
                    early[v] = g->cuda->ssvd.early, redo[v] = g->cuda->ssvd.early_redo - r0;
                    CHECK_EQ_INT(sv, 0);
                    gt_to_host(g, ov_, dVT, ov), gt_to_host(g, ov_ + ov, dX, ox);
                    gt_to_host(g, ov_ + ov + ox, dS, (size_t)k);
                    gt_to_host(g, Xc, dXc, ox);
                    CHECK_EQ_INT(xc.runs, 1 + (int)redo[v]);
                    CHECK_MSG(memcmp(Xc, ov_ + ov, sizeof(float) * ox) == 0,
                              "l %d 1e-%d trans %d run %d: then saw another Xk", l, dec, tr, v);
                }
                tcnla_free(g, dXc), free(Xc);
                printf("    trans %d: values read ahead (levels, bits) %d, %d (spec_off), %d "
                       "(told failed; redone %u)\n", tr, early[0], early[1], early[2], redo[2]);
                if (tn_cuda_cc(g->cuda) == 90) CHECK_EQ_INT(early[0] & 3, 3);
                CHECK_EQ_INT(early[1], 0);
                CHECK_EQ_INT(early[2], 0); /* (the redo's) */
                CHECK_EQ_INT((int)redo[0] + (int)redo[1], 0);
                CHECK_EQ_INT((int)redo[2], early[0] ? 1 : 0);
                for (int v = 1; v < 3; v++)
                    CHECK_MSG(memcmp(o, o + v * (ov + ox + k), sizeof(float) * (ov + ox + k)) == 0,
                              "l %d 1e-%d trans %d: run %d differs", l, dec, tr, v);
                free(o);
            }
            free(V);
            /* the last check read as refused (defl_fault): the call refuses,
             * in both forms */
            for (int tr = 0; tr < 2; tr++) {
                g->cuda->defl_fault = 1;
                const int sf = tn_cuda_svd_from_gram_rows(g, n, l, k, dW, n, dX, dS, dVT,
                                                          tr ? n : k, tr, NULL, NULL);
                g->cuda->defl_fault = 0;
                CHECK_MSG(sf == TN_GRAM_NOT_TAKEN && g->cuda->ssvd.defl_refused == 1 &&
                              g->cuda->ssvd.path != TN_SSVD_RAN_DEFLATE,
                          "l %d 1e-%d trans %d, last check refused: status %d, refused %d, "
                          "ran %d", l, dec, tr, sf, g->cuda->ssvd.defl_refused,
                          g->cuda->ssvd.path);
            }
        }
    }
    GT_TUNE(g, small_svd_deflate, 0);
    CHECK_EQ_INT(tn_cuda_svd_from_gram(g, n, l, k, dW, n, dX, dS, dVT, k), TN_GRAM_NOT_TAKEN);
    GT_TUNE(g, small_svd_deflate, 1);
    tcnla_free(g, dW), tcnla_free(g, dX), tcnla_free(g, dS), tcnla_free(g, dVT);
    free(M), free(Ub), free(W);
}

TEST(gpu_small_svd_deflate_gram_on_w) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    gram_on_w_case(g, 266);
    gram_on_w_case(g, 120);
    tcnla_destroy(g);
}

/* tn_cu_f64_to_f32_t (the trans form's V = (V^T)^T as it is rounded): on
 * shapes that cut the 32 x 32 tiles (37 x 45, 1 x 70, 256 x 1000) with
 * padded leading dimensions, each entry the host's round to nearest of
 * src's, bit for bit (values that tie in FP32, below its normal range,
 * past its largest: Inf), dst's padding as it was; lds < rows or ldd < cols
 * refused with nothing written. */
TEST(gpu_f64_to_f32_transposed) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    const int shapes[3][2] = {{37, 45}, {1, 70}, {256, 1000}};
    for (int t = 0; t < 3; t++) {
        const int rows = shapes[t][0], cols = shapes[t][1], lds = rows + 3, ldd = cols + 5;
        const size_t ns = (size_t)lds * cols, nd = (size_t)ldd * rows;
        double *src = malloc(sizeof(double) * ns);
        float *dst = malloc(sizeof(float) * nd);
        REQUIRE(src && dst);
        uint64_t seed = 7 + (uint64_t)t;
        for (size_t i = 0; i < ns; i++) {
            const double u = (double)(gt_next(&seed) >> 11) * 0x1p-53 - 0.5;
            const int kind = (int)(i % 5);
            src[i] = kind == 0   ? u
                     : kind == 1 ? (1.0 + 0x1.8p-23) * (i & 8 ? -1 : 1) /* a tie: to even */
                     : kind == 2 ? u * 0x1p-140                        /* FP32 subnormal */
                     : kind == 3 ? u * 0x1p130                         /* past FLT_MAX */
                                 : u * 1e3;
        }
        for (size_t i = 0; i < nd; i++) dst[i] = -7.0f;
        double *dsrc = NULL;
        float *ddst = gt_to_dev(g, dst, nd);
        REQUIRE(tcnla_malloc(g, (void **)&dsrc, sizeof(double) * ns) == 0 && ddst);
        tcnla_memcpy(g, dsrc, src, sizeof(double) * ns, TCNLA_MEMCPY_HOST_TO_HANDLE);
        CHECK_EQ_INT(tn_cu_f64_to_f32_t(dsrc, rows - 1, ddst, ldd, rows, cols, g->cuda->stream),
                     (int)cudaErrorInvalidValue);
        CHECK_EQ_INT(tn_cu_f64_to_f32_t(dsrc, lds, ddst, cols - 1, rows, cols, g->cuda->stream),
                     (int)cudaErrorInvalidValue);
        CHECK_EQ_INT(tn_cu_f64_to_f32_t(dsrc, lds, ddst, ldd, rows, cols, g->cuda->stream), 0);
        gt_to_host(g, dst, ddst, nd);
        int bad = 0;
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < ldd; c++) {
                const float want = c < cols ? (float)src[r + (size_t)c * lds] : -7.0f;
                const float got = dst[c + (size_t)r * ldd];
                bad += memcmp(&want, &got, sizeof want) != 0;
            }
        CHECK_MSG(bad == 0, "%d x %d: %d entries differ", rows, cols, bad);
        tcnla_free(g, dsrc), tcnla_free(g, ddst);
        free(src), free(dst);
    }
    tcnla_destroy(g);
}

static double rel_residual(const float *A, int m, int n, const float *U, const float *S,
                           const float *VT, int k) {
    double num = 0, den = 0;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int p = 0; p < k; p++)
                s += (double)U[i + (size_t)p * m] * S[p] * VT[p + (size_t)j * k];
            num += (A[i + (size_t)j * m] - s) * (A[i + (size_t)j * m] - s);
            den += (double)A[i + (size_t)j * m] * A[i + (size_t)j * m];
        }
    return sqrt(num / den);
}

/* The randomized SVD (4096 x 2048, k = 256, p = 10, q = 2) on bench/rsvd.c's
 * deep_decay (s_i = 10^(-8 i / k)) and low_rank (10^(-2 i / (k / 2)) for i <
 * k / 2, then 0) spectra: by default its small SVD takes the deflated path
 * (of W^T W, or after W's QR of R R^T), and agrees with the run with the
 * tuning's small_svd_deflate = 0 (gesvdj after W's QR): the values to
 * 1e-6 s_1, the residuals ||A - U S V^T|| / ||A|| to 1e-3 relative plus
 * 1e-7; the known values to 1e-5 s_1 (FP32 data: its rounding alone is
 * about 1e-8 s_1 here). With the deflated path's last check read as
 * refused (defl_fault) the call ends as the run without the deflated path
 * does: the refusal reported, the same values and residual. */
TEST(gpu_rsvd_deflate_spectra) {
    tcnla_handle_t g = gt_gpu();
    if (!g) SKIP("no GPU");
    const int m = 4096, n = 2048, k = 256, p = 10;
    const int r = 4 * k + 64;
    double *sig = malloc(sizeof(double) * r);
    float *A = malloc(sizeof(float) * (size_t)m * n), *U = malloc(sizeof(float) * (size_t)m * k),
          *VT = malloc(sizeof(float) * (size_t)k * n), S[3][256];
    REQUIRE(sig && A && U && VT);
    float *dA = gt_to_dev(g, NULL, (size_t)m * n), *dU = gt_to_dev(g, NULL, (size_t)m * k),
          *dVT = gt_to_dev(g, NULL, (size_t)k * n), *dS = gt_to_dev(g, NULL, k);
    tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
    o.rank = k, o.oversampling = p, o.power_iters = 2;
    for (int c = 0; c < 2; c++) {
        for (int i = 0; i < r; i++)
            sig[i] = c == 0 ? pow(10.0, -8.0 * i / k)
                            : (i < k / 2 ? pow(10.0, -2.0 * i / (k / 2)) : 0.0);
        REQUIRE(tn_testmat_svd_fast(m, n, c == 0 ? r : k / 2, sig, 11 + c, A, m) == 0);
        tcnla_memcpy(g, dA, A, sizeof(float) * (size_t)m * n, TCNLA_MEMCPY_HOST_TO_HANDLE);
        double res[3], known[3];
        int ran[3], from_w[3], lev[3], filled = 0, refused = 0;
        for (int j = 0; j < 3; j++) {
            GT_TUNE(g, small_svd_deflate, j != 1);
            g->cuda->defl_fault = j == 2;
            const int st = tcnla_rsvd(g, &o, m, n, dA, m, dU, m, dS, dVT, k);
            g->cuda->defl_fault = 0;
            if (j == 2) refused = g->cuda->ssvd.defl_refused;
            ran[j] = g->cuda->ssvd.path, from_w[j] = g->cuda->ssvd.from_w;
            lev[j] = g->cuda->ssvd.levels;
            if (j == 0) filled = g->cuda->ssvd.filled;
            CHECK_MSG(st == 0, "spectrum %d path %d: status %d", c, j, st);
            gt_to_host(g, U, dU, (size_t)m * k), gt_to_host(g, VT, dVT, (size_t)k * n), gt_to_host(g, S[j], dS, k);
            res[j] = rel_residual(A, m, n, U, S[j], VT, k);
            known[j] = 0;
            for (int i = 0; i < k; i++)
                known[j] = dmax(known[j], fabs(S[j][i] - sig[i]) / sig[0]);
        }
        GT_TUNE(g, small_svd_deflate, 1);
        double dv = 0, dvf = 0;
        for (int i = 0; i < k; i++) dv = dmax(dv, fabs((double)S[0][i] - S[1][i]) / S[1][0]);
        for (int i = 0; i < k; i++) dvf = dmax(dvf, fabs((double)S[2][i] - S[1][i]) / S[1][0]);
        printf("    %s: deflated ran %d (from W %d, levels %d, filled %d), residual %.4e, known "
               "values %.1e s_1; without: ran %d (from W %d), residual %.4e, known values %.1e "
               "s_1; values differ by %.1e s_1\n",
               c ? "low_rank" : "deep_decay", ran[0], from_w[0], lev[0], filled, res[0], known[0],
               ran[1], from_w[1], res[1], known[1], dv);
        CHECK_EQ_INT(ran[0], TN_SSVD_RAN_DEFLATE);
        CHECK(ran[1] != TN_SSVD_RAN_DEFLATE);
        /* (defl_fill built the span, where the Gram path on W took the call) */
        if (tn_cuda_cc(g->cuda) == 90) CHECK(!from_w[0] || filled > 0);
        CHECK_MSG(dv <= 1e-6, "spectrum %d: values differ by %.2e s_1", c, dv);
        CHECK_MSG(res[0] <= 1.001 * res[1] + 1e-7, "spectrum %d: residual %.4e against %.4e", c,
                  res[0], res[1]);
        CHECK_MSG(known[0] <= 1e-5, "spectrum %d: known values %.2e s_1", c, known[0]);
        printf("    %s, last check read as refused: refused %d, ran %d, residual %.4e, values "
               "differ from the run without by %.1e s_1\n",
               c ? "low_rank" : "deep_decay", refused, ran[2], res[2], dvf);
        CHECK_EQ_INT(refused, 1);
        CHECK(ran[2] != TN_SSVD_RAN_DEFLATE);
        CHECK_MSG(dvf <= 1e-6, "spectrum %d, refused: values differ by %.2e s_1", c, dvf);
        CHECK_MSG(res[2] <= 1.001 * res[1] + 1e-7, "spectrum %d, refused: residual %.4e against "
                  "%.4e", c, res[2], res[1]);
    }
    tcnla_free(g, dA), tcnla_free(g, dU), tcnla_free(g, dVT), tcnla_free(g, dS);
    free(sig), free(A), free(U), free(VT);
    tcnla_destroy(g);
}
