/* The small l x l SVD of the randomized algorithms on the GPU, in FP64, so
 * that they need no host LAPACK: see tn_small_svd_t in internal.h.
 *
 * M = R^T. First from the eigensolution of M^T M = R R^T (DSYRK, then
 * eig_solve: on Hopper the solver of syev_kernels.cu, its clustered
 * vectors repaired where its checks refuse them (eig_repair: near zero,
 * a rank-deficient R or a spectrum decaying through FP64's resolution;
 * away from it, equal values); else, or where its checks refuse, cuSOLVER's
 * syevd):
 * Vr its eigenvectors, s = sqrt(eigenvalues), Ur = M Vr / s. Squaring costs
 * accuracy in s_i relative to s_1 (about eps (s_1 / s_i)^2), so this path
 * is kept only when the k wanted values span s_k >= 1e-4 s_1 (errors of
 * about 1e-8, below FP32's resolution, in the values and the vectors);
 * otherwise, from the same eigensolution, the deflated Gram path
 * (src/linalg/deflated_svd.h; defl_levels, defl_path below; the tuning's
 * small_svd_deflate): the trailing columns X_b of the eigenvectors give
 * Y_b = M X_b (DGEMM from M), whose Gram matrix's eigensolution refines
 * them, level by level (at most 4, one read back of each level's values),
 * each level keeping its values within 1e-4 of its largest: relative
 * accuracy about eps s_1 / s_k instead of eps (s_1 / s_k)^2, then the
 * outputs as above, one first-order refinement of them from Ur^T Ur
 * (tn_cu_defl_refine: Ur orthonormal to eps s_1 / s_k) and a check of Ur's
 * orthogonality (DEFL_ORTH_TOL, one read back); where that refuses (NaN /
 * Inf, the eigensolver failed, the check failed) cuSOLVER's Jacobi SVD
 * (gesvdj) of M. With the tuning's
 * small_svd_jacobi (l <= TN_JSVD_MAXL) first the block one-sided Jacobi SVD
 * of kernels/jacobi_svd.cu on M X, X the
 * eigenvectors just computed (where the eigensolver succeeded; else on M):
 * relatively accurate on R's graded columns, few sweeps from X, one launch
 * for the sweeps, one read back (jacobi_path), and gesvdj where it does not
 * converge, meets NaN / Inf or cannot launch. It is not the default: on an
 * H100 it measured slower than gesvdj wherever the eigensolution refuses
 * (l = 266: 6.6 against 5.1 ms; bench/results/small_svd.csv), though
 * faster where both run on a span the eigensolution takes (2.1 against
 * 7.0 ms). h->cuda->ssvd reports which ran; tn_cuda_small_svd_path
 * forces one (gesvdj alone included, to compare: bench/small_svd.c).
 * Measured on an H200 for l = 266 (a throwaway probe on a random matrix with
 * decaying columns): DSYRK + syevd 2.4 ms, gesvdj 13.5 ms (gesvdp 7.5 ms,
 * gesvd 28 ms). syev_kernels.cu's solver (tridiagonalization in one
 * cluster, bisection, twisted factorizations, X = Q Z, checked on the
 * device) takes the RSVD's svd step to 1.1 ms from syevd's 2.6 ms
 * (bench_rsvd fp16_chol1, H200). */
#include "core/internal.h"
#include "backend/cuda/tn_cuda.h"
#include "linalg/cluster_block.h"
#include "linalg/deflated_svd.h"
#include "linalg/jacobi_svd.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EIG_RATIO 1e-8 /* smallest lam_k / lam_1 the eigensolution path takes */

#define EIG_FALLBACK 1 /* (not a status) */
/* (not a status) the deflated path read values ahead of checks that then
 * failed (svd_from_gram_run): the call is redone without reading ahead */
#define DEFL_EARLY_REDO 4
/* The eigensolutions' columns of values below EIG_XR lam_1 need only span
 * their invariant subspace (eig_solve's xr): no caller takes them as
 * eigenvectors. The eigensolution path takes values down to EIG_RATIO
 * lam_1, a deflation level down to TN_DEFL_TAU of its largest; the last
 * level takes all of its values and passes xr = 0. */
#define EIG_XR 1e-9
/* The deflated path's last check, on its outputs: |U^T U - I| (the R form)
 * or |V^T V - I| (the Gram-on-W form) at most this; after the refinement it
 * measures 0.5 eps s_1 / s_k or less (src/linalg/deflated_svd.h,
 * tests/test_deflated_svd.c): a check against failure (exact zeros past
 * the rank, values below about 1e-12 s_1), gesvdj (or the QR path) past it. */
#define DEFL_ORTH_TOL 1e-3

/* Reads the eigenvalues (ascending, l of them) and info after the
 * eigensolver ran on the handle's stream: 0 where it succeeded and the k
 * largest span lam_k >= EIG_RATIO lam_1 (finite, positive), else
 * `fallback`; *info_out (may be NULL) receives info, *xok (may be NULL) 1
 * where the eigenvectors are usable (info 0, lam_1 finite and positive)
 * whatever the span; hlam (may be NULL) the eigenvalues on the host (NaN
 * where info is not 0). */
static int eig_verdict(struct tn_cuda_ctx *c, int64_t l, int64_t k, const double *lam,
                       const int *dinfo, int fallback, int *info_out, int *xok, double *hlam) {
    if (xok) *xok = 0;
    double low = 0.0, top = 0.0;
    int info = 0;
    /* all the values where hlam is asked for, else lam_k and lam_1 */
    const tn_cuda_read_t all[2] = {{hlam, lam, sizeof(double) * (size_t)l},
                                   {&info, dinfo, sizeof info}},
                         two[3] = {{&low, lam + l - k, sizeof low},
                                   {&top, lam + l - 1, sizeof top},
                                   {&info, dinfo, sizeof info}};
    int st = hlam ? tn_cuda_read_back(c, all, 2) : tn_cuda_read_back(c, two, 3);
    if (!st) {
        if (hlam) low = hlam[l - k], top = hlam[l - 1];
        if (info_out) *info_out = info;
        if (xok) *xok = info == 0 && top > 0.0 && isfinite(top);
        if (hlam && info != 0) /* (NaN: the deflated path's level rule refuses) */
            for (int64_t i = 0; i < l; i++) hlam[i] = NAN;
        if (info != 0 || !(top > 0.0) || !(low >= EIG_RATIO * top) || !isfinite(top))
            st = fallback;
    }
    return st;
}

/* Doubles of repair_groups' second lane for n: Y, V, P, Gm, H (n x n
 * each), mu (n), 16 for its flags (the potrf's info and grid barrier, the
 * groups' verdicts: TN_CLUSTER_MAXG ints and doubles), then its
 * Rayleigh-Ritz solve's Xf (n x n) and tn_cu_syev_fast_ws(n). */
static size_t lane_ws(int n) {
    const size_t nn = (size_t)n * (size_t)n;
    return 6 * nn + (size_t)n + 16 + tn_cu_syev_fast_ws(n);
}

/* Doubles of eig_repair's workspace for n at depth (0: the top solve; 1:
 * its Rayleigh-Ritz solve, which repairs only below xr): Zo, Y, V, P, Gm,
 * H (n x n each), mu (n), reach, reach2, the sub-solve's flag and
 * repair_basis's grid barrier (2 n + 2 ints), and at depth 0 the
 * sub-solve's workspace (eig_solve_d's layout with lwork 0: n^2,
 * tn_cu_syev_fast_ws(n), and this at depth 1), then repair_groups' second
 * lane (lane_ws). */
static size_t repair_ws(int n, int depth) {
    const size_t nn = (size_t)n * (size_t)n;
    const size_t base = 6 * nn + 2 * (size_t)n + 16;
    return depth ? base : base + nn + tn_cu_syev_fast_ws(n) + repair_ws(n, 1) + lane_ws(n);
}

/* The largest size up to n the fast solver takes (0: none), whose solver
 * and repair workspace eig_ws reserves: a solve of size n or less (a
 * deflation level below a top size the solver refuses) fits in it. */
static int fast_max(struct tn_cuda_ctx *c, int n) {
    if (!c->tune->syev_fast) return 0;
    int m = n;
    while (m > 0 && !tn_cu_syev_fast_ok(m, tn_cuda_cc(c), c->smem_optin)) m--;
    return m;
}

/* Doubles of workspace eig_solve needs for n, *lwork of them syevd's. */
static int eig_ws(struct tn_cuda_ctx *c, int n, size_t *doubles, int *lwork) {
    double *probe = tn_cuda_workspace(c, sizeof(double) * ((size_t)n * n + n) + 64);
    if (!probe) return TCNLA_ERR_ALLOC;
    int lw2 = 0;
    int st = tn_cusolver_st(cusolverDnDsyevd_bufferSize(
        c->cusolver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, n, probe, n, probe, lwork));
    if (!st)
        st = tn_cusolver_st(cusolverDnDsyevd_bufferSize(c->cusolver, CUSOLVER_EIG_MODE_VECTOR,
                                                        CUBLAS_FILL_MODE_LOWER, n, probe, n, probe,
                                                        &lw2));
    if (lw2 > *lwork) *lwork = lw2;
    const int nf = fast_max(c, n);
    const size_t fast = nf ? tn_cu_syev_fast_ws(nf) + repair_ws(nf, 0) : 0;
    *doubles = (size_t)*lwork + (size_t)n * n + fast + 8;
    return st;
}

/* The fast solver's result checked (tn_cu_syev_fast's step 4): from T's
 * eigenvectors Z (n x n, ld n; may be S2, or Xf itself), S3 = X = Q Z, F =
 * X^T X and its check (S1), one Newton-Schulz step (S2), G X (in Xf; G
 * made whole in S1) and the residual check (of the columns |lam_j| >= xr
 * max|lam|), X into Xf; the flag in dinfo (set where a check fails; not
 * zeroed here). drop: the columns |lam_j| < xr max|lam| are set to zero in
 * X (and S3) first, and the orthogonality check leaves them out: a caller
 * that needs no span of them (tn_cuda_svd_from_gram_rows, whose deflated
 * path builds that span itself, defl_fill) spares their repair. */
static int fast_tail(struct tn_cuda_ctx *c, int n, int upper, const double *G, const double *Q,
                     const double *Z, double *S1, double *S2, double *S3, const double *lam,
                     double xr, double *Xf, int *dinfo, int drop) {
    const double one = 1.0, zero = 0.0;
    int st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, Q, n, Z,
                                      n, &zero, S3, n));
    if (!st && drop) st = tn_cu_syev_drop(n, S3, lam, xr, c->stream);
    if (!st) /* F = X^T X, then I - (F - I) / 2 */
        st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, S3, n,
                                      S3, n, &zero, S1, n));
    if (!st) st = tn_cu_syev_orth_check(n, S1, drop ? lam : NULL, xr, dinfo, c->stream);
    if (!st) /* one Newton-Schulz step */
        st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, S3, n,
                                      S1, n, &zero, S2, n));
    /* G X into Xf (Z, which it may be, is used up) as a DGEMM on G made
     * whole in S1 (free after the step): H100, n = 266, about 3 + 7 us
     * against cuBLAS's DSYMM's 25; the check then reads each entry of it
     * before writing X's over it. S3 stays X for eig_repair. */
    if (!st) st = tn_cu_syev_sym_full(n, G, n, upper, S1, c->stream);
    if (!st)
        st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, S1, n,
                                      S2, n, &zero, Xf, n));
    if (!st) st = tn_cu_syev_resid_check(n, Xf, S2, lam, xr, Xf, dinfo, c->stream);
    return st;
}

/* The eigenvalues read ahead of their checks (eig_solve_d's early), where
 * a later read of the checks' flag is sure to follow (the deflated path's
 * last one, defl_verdict): the host waits for the values alone, while the
 * GPU runs T's vectors and the checks, and queues what follows them
 * (defl_fill, the next level) before those end, instead of after a read of
 * values and flag together. EARLY_REFUSAL: only where the values refuse
 * the span (the deflated path follows; otherwise the usual read);
 * EARLY_ANY: whatever they say. Either only where the values are finite
 * with lam_max > 0: the outcome of eig_verdict with a clear flag. Where
 * the flag then turns out set, the call is redone without this (the repair
 * or syevd that the flag sends to). */
#define EARLY_NONE 0
#define EARLY_REFUSAL 1
#define EARLY_ANY 2

/* Pinned room for n values and the event behind their copy (NULL where
 * they cannot be had: the usual read then) */
static double *early_room(struct tn_cuda_ctx *c, int n) {
    if (!c->ev_lam && cudaEventCreateWithFlags(&c->ev_lam, cudaEventDisableTiming) != cudaSuccess) {
        (void)cudaGetLastError();
        c->ev_lam = NULL;
        return NULL;
    }
    if (c->lam_room < (size_t)n) {
        if (c->lam_pinned) cudaFreeHost(c->lam_pinned);
        c->lam_room = 0;
        if (cudaMallocHost((void **)&c->lam_pinned, sizeof(double) * (size_t)n) != cudaSuccess) {
            (void)cudaGetLastError();
            c->lam_pinned = NULL;
            return NULL;
        }
        c->lam_room = (size_t)n;
    }
    return c->lam_pinned;
}

/* The values copied into lh (n, ascending) waited for: EARLY_NONE where
 * mode does not take them (the usual read follows), else 1 with *st
 * eig_verdict's outcome for them with a clear flag (0, or `fallback`
 * where lam_{n-k+1} < EIG_RATIO lam_max), or an error (< 0). */
static int early_values(struct tn_cuda_ctx *c, int n, int64_t k, const double *lh, int mode,
                        int fallback, int *st) {
    const cudaError_t e = cudaEventSynchronize(c->ev_lam);
    if (e != cudaSuccess) return tn_cuda_err(e);
    for (int i = 0; i < n; i++)
        if (!isfinite(lh[i])) return EARLY_NONE;
    const double top = lh[n - 1], low = lh[n - k];
    if (!(top > 0.0)) return EARLY_NONE;
    const int span = low >= EIG_RATIO * top;
    if (mode == EARLY_REFUSAL && span) return EARLY_NONE;
    *st = span ? TCNLA_SUCCESS : fallback;
    return 1;
}

static int eig_solve_d(struct tn_cuda_ctx *c, int n, int64_t k, int upper, double *G, double **X,
                       double *lam, int *dinfo, double *ws, int lwork, int fallback, int *xok,
                       double *hlam, double xr, int depth, int drop, int *early);

#define EIG_NOREPAIR 3   /* (not a status) eig_repair: no clusters it takes, or it cannot run */
#define REPAIR_TOL 1e-8  /* |z_i . z_j| beyond it: i and j in one cluster */
#define REPAIR_FAIL 1e-6 /* beyond it the orthogonality check refuses (orth_check_kernel) */
#define REPAIR_CAP 1e-6  /* clusters within this of zero (times ||T||): one block */
/* (tests/test_cluster_block.c takes the same cap) */

/* Y (n x cn, ld n) orthonormalized into out (n x cn, ld n; may be Y): one
 * CholeskyQR pass, then two Newton-Schulz steps X <- X (3 I - X^T X) / 2.
 * Its callers' Y are random vectors projected onto a cn-dimensional
 * complement, a square random matrix's worth of conditioning, 1e3 or
 * more, which the pass leaves at an orthogonality error d of about eps
 * cond^2; a step takes d to about (3 / 4) d^2 (plus eps), so two take d <=
 * 1e-4 to FP64's rounding and d = 1e-2 to 4e-9 (the checks after every
 * caller refuse what stays above 1e-6). The steps replace CholeskyQR2's
 * second pass, whose factorization and inverse are two chains of serial
 * launches (H100, cn = 121 .. 144: 46-61 us and 17-22 us); a step is two
 * products and fast_tail's small kernel. The pass as cholqr64's
 * (orth_cuda.c), from Y into P: the Gram matrix (a DGEMM; potrf reads its
 * upper triangle) into Gm, then, up to TN_TRINV_FULL_MAX columns, its
 * factor R and the whole inverse (tn_cuda_potrf_inv: one cluster launch up
 * to TN_POTRF_CLUSTER_MAX columns on Hopper; Gm may be used up) and P = Y
 * R^-1 as one DGEMM by that inverse (zeros below its diagonal). At these
 * sizes (n <= 448 rows) cuBLAS's DSYRK and DTRMM are chains of small
 * kernels: n = 266, cn = 128, H100, 16 and 69 us against about 7 for each
 * DGEMM. The inverse costs no order of accuracy: each of its columns
 * satisfies (R + dR_j) x_j = e_j, so the product differs from Y R^-1 by
 * columns -(Y R^-1) dR_j x_j, at most about cn u kappa(R), the
 * substitution's bound (docs/kernels.md); kappa(R) is the projected start
 * vectors' condition, which the steps' orthogonality takes in as d. Past
 * TN_TRINV_FULL_MAX columns (the fast solver goes to n = 448) Y R^-1 by
 * DTRSM in place. The steps go from wherever the pass left Q to the other
 * buffer and back, the last one into out (where that is the buffer it
 * reads, into the other and then copied). info (potrf's, then the steps'
 * flags) is not read: the caller's checks judge the result. Where the
 * factorization breaks down the product comes out with Inf / NaN, which
 * those checks refuse, instead of values from whatever the scratch held
 * (the steps carry them along): the cluster launch writes an inverse of
 * NaN; the other factorization stops, leaving R's later columns as they
 * were, so R is zeroed before it and the solve meets zero pivots. Scratch
 * (device memory): P (n x cn); Gm, R and Inv (cn x cn each, ld cn); diag
 * (cn doubles, R's diagonal); info (one int); bar (one unsigned, the
 * factorization's grid barrier). Y is used up. */
static int orth_basis(struct tn_cuda_ctx *c, int n, int cn, double *Y, double *P, double *Gm,
                      double *R, double *Inv, double *diag, int *info, unsigned *bar,
                      double *out) {
    const double one = 1.0, zero = 0.0;
    double *A = Y, *B = P; /* Q after the pass, and the other buffer */
    int st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, cn, cn, n, &one, Y, n,
                                      Y, n, &zero, Gm, cn));
    if (!st)
        st = tn_cuda_err(
            cudaMemsetAsync(R, 0, sizeof(double) * (size_t)cn * (size_t)cn, c->stream));
    if (!st && cn <= TN_TRINV_FULL_MAX) {
        st = tn_cuda_potrf_inv(c, cn, Gm, R, diag, info, bar, Inv);
        if (!st)
            st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, cn, cn, &one, Y,
                                          n, Inv, cn, &zero, P, n));
        A = P, B = Y;
    } else if (!st) {
        st = tn_cuda_err((cudaError_t)tn_cu_potrf_upper(cn, Gm, cn, R, diag, info, bar,
                                                         c->sm_count, c->stream));
        if (!st)
            st = tn_cublas_st(cublasDtrsm(c->cublas, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER,
                                      CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, cn, &one, R, cn, Y,
                                      n));
    }
    /* the Newton-Schulz steps as fast_tail's: F = A^T A, F -> I - (F - I) / 2
     * (tn_cu_syev_orth_check; its flag goes to info, which nothing reads),
     * then A F into B, the last one into out unless out is A */
    for (int step = 0; step < 2 && !st; step++) {
        st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, cn, cn, n, &one, A, n,
                                      A, n, &zero, Gm, cn));
        if (!st)
            st = tn_cuda_err(
                (cudaError_t)tn_cu_syev_orth_check(cn, Gm, NULL, 0.0, info, c->stream));
        double *dst = step == 1 && out != A ? out : B;
        if (!st)
            st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, cn, cn, &one, A,
                                          n, Gm, cn, &zero, dst, n));
        B = A, A = dst;
    }
    if (!st && A != out)
        st = tn_cuda_err(cudaMemcpyAsync(out, A, sizeof(double) * (size_t)n * (size_t)cn,
                                         cudaMemcpyDeviceToDevice, c->stream));
    return st;
}

/* Y (n x cn) projected off Zo's columns (n x n; Y -= Zo (Zo^T Y), twice),
 * then orthonormalized in place (orth_basis; P, Gm, R, Inv, diag, info,
 * bar its scratch). */
static int repair_basis(struct tn_cuda_ctx *c, int n, int cn, const double *Zo, double *Y,
                        double *P, double *Gm, double *R, double *Inv, double *diag, int *info,
                        unsigned *bar) {
    const double one = 1.0, zero = 0.0, mone = -1.0;
    int st = TCNLA_SUCCESS;
    for (int pass = 0; pass < 2 && !st; pass++) {
        st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, cn, n, &one, Zo, n,
                                      Y, n, &zero, P, n));
        if (!st)
            st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, cn, n, &mone, Zo,
                                          n, P, n, &one, Y, n));
    }
    return st ? st : orth_basis(c, n, cn, Y, P, Gm, R, Inv, diag, info, bar, Y);
}

/* One group of repair_groups on the lane x (the handle's stream and cuBLAS
 * handle, or the second lane's): start vectors filtered by (T - c_h I) /
 * ||T|| for every other group h, g[q].passes times (h's share falls by its
 * half-width over its distance each time), projected off Zo (the columns
 * outside every group) and orthonormalized (repair_basis): a basis Y of
 * the group's invariant subspace. Rayleigh-Ritz with the group's shift: H =
 * Y^T T Y - shift I (positive; its entries of the size of the values'
 * differences, so that the fast solver resolves them relative to those),
 * its eigensolution (tn_cu_syev_fast and fast_tail with xr 0; the flag
 * into *vinfo, the largest value into *vtop, read by the caller), the
 * group's columns of S2 = Y Z_H and its values H's plus the shift; stage
 * 0 the basis, stage 1 the rest (so that the caller can queue the first
 * stage of every group before the second of any). s: the
 * lane's scratch, Y, V, P, Gm, H (n x n each), mu (n); V, H and mu, free
 * until the basis is orthonormal, are repair_basis's R, Inv and diag; xf:
 * the solve's Xf (cn x cn) then tn_cu_syev_fast_ws(cn); dinfo2 and bar
 * the lane's potrf info and grid barrier. */
static int repair_group(struct tn_cuda_ctx *x, int n, int ng, const tn_cluster_group_t *g,
                        int q, int stage, double tnorm, const double *d, const double *e,
                        const double *Zo, double *S2, double *lam, double *s, double *xf,
                        int *dinfo2, unsigned *bar, int *vinfo, double *vtop) {
    const size_t nn = (size_t)n * (size_t)n;
    double *Y = s, *V = Y + nn, *P = V + nn, *Gm = P + nn, *H = Gm + nn, *mu = H + nn;
    const double one = 1.0, zero = 0.0, al = 1.0 / tnorm;
    const int cn = g[q].b - g[q].a + 1;
    if (!tn_cu_syev_fast_ok(cn, tn_cuda_cc(x), x->smem_optin)) return EIG_NOREPAIR;
    int st = TCNLA_SUCCESS;
    if (stage == 0) { /* the basis */
        st = tn_cuda_err((cudaError_t)tn_cu_syev_start(n, cn, Y, x->stream));
        for (int pass = 0; pass < g[q].passes && !st; pass++)
            for (int h = 0; h < ng && !st; h++) {
                if (h == q) continue;
                const double be = -g[h].centre / tnorm; /* Y = (T Y - c_h Y) / ||T|| */
                st = tn_cuda_err((cudaError_t)tn_cu_syev_tmul(n, d, e, cn, Y, V, x->stream));
                if (!st)
                    st = tn_cublas_st(cublasDgeam(x->cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, cn, &al,
                                                  V, n, &be, Y, n, Y, n));
            }
        if (!st) st = repair_basis(x, n, cn, Zo, Y, P, Gm, V, H, mu, dinfo2, bar);
        return st;
    }
    /* the Rayleigh-Ritz step */
    st = tn_cuda_err((cudaError_t)tn_cu_syev_tmul(n, d, e, cn, Y, V, x->stream));
    if (!st)
        st = tn_cublas_st(cublasDgemm(x->cublas, CUBLAS_OP_T, CUBLAS_OP_N, cn, cn, n, &one, Y, n,
                                      V, n, &zero, H, cn));
    if (!st) st = tn_cuda_err((cudaError_t)tn_cu_syev_diag_sub(cn, H, g[q].shift, x->stream));
    const size_t cc = (size_t)cn * (size_t)cn;
    double *Xf = xf, *Q = Xf + cc, *S1 = Q + cc, *T2 = S1 + cc, *T3 = T2 + cc;
    if (!st) /* (launch refused: the caller's syevd) */
        st = tn_cu_syev_fast(cn, H, cn, 1, Xf, mu, vinfo, Q, !x->mr_off, x->smem_optin,
                                 x->stream)
                 ? EIG_NOREPAIR
                 : TCNLA_SUCCESS;
    if (!st) st = fast_tail(x, cn, 1, H, Q, Xf, S1, T2, T3, mu, 0.0, Xf, vinfo, 0);
    if (!st)
        st = tn_cuda_err(cudaMemcpyAsync(vtop, mu + cn - 1, sizeof(double),
                                         cudaMemcpyDeviceToDevice, x->stream));
    if (!st)
        st = tn_cublas_st(cublasDgemm(x->cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, cn, cn, &one, Y, n,
                                      Xf, cn, &zero, P, n));
    if (!st)
        st = tn_cuda_err((cudaError_t)tn_cu_syev_place(n, cn, P, mu, g[q].shift, S2, lam, g[q].a,
                                                        x->stream));
    return st;
}

/* eig_repair's groups away from zero (tn_cluster_groups: equal values, flat
 * tops) in the eigenvectors Z0 (S2) of T = tridiag(e, d, e), each by
 * repair_group. The groups are independent (each reads Zo, d and e and
 * writes its own columns of S2 and entries of lam), and each is a chain of
 * small kernels on a few SMs, so the odd ones run on the second lane
 * (tn_cuda_lane_fork; its own scratch, ln: lane_ws(n)) beside the even
 * ones on the handle's stream: the same kernels on the same data, so the
 * same bits either way. Then one read back of every group's verdict
 * (its fast solver's flag and largest value). rw: repair_ws's region (Zo,
 * then the handle's stream's scratch as repair_group lays it out), sub:
 * eig_repair's sub-solve region (here the first lane's Xf and solver
 * workspace), dinfo2 and bar eig_repair's. TCNLA_SUCCESS, EIG_NOREPAIR (a
 * group's solve refused) or an error. */
static int repair_groups(struct tn_cuda_ctx *c, int n, int ng, const tn_cluster_group_t *g,
                         double tnorm, const double *d, const double *e, double *S2, double *rw,
                         double *sub, double *ln, double *lam, int *dinfo2, unsigned *bar) {
    const size_t nn = (size_t)n * (size_t)n;
    double *Zo = rw;
    double *l1 = ln + 5 * nn + n; /* the second lane's flags */
    int *dinfo2b = (int *)l1, *vinfo = dinfo2b + 2;
    unsigned *barb = (unsigned *)(dinfo2b + 1);
    double *vtop = l1 + 8, *xfb = l1 + 16;
    int st = tn_cuda_err(
        cudaMemcpyAsync(Zo, S2, sizeof(double) * nn, cudaMemcpyDeviceToDevice, c->stream));
    for (int q = 0; q < ng && !st; q++) /* Zo: the columns outside every group */
        st = tn_cuda_err(cudaMemsetAsync(Zo + (size_t)g[q].a * n, 0,
                                         sizeof(double) * (size_t)n * (size_t)(g[q].b - g[q].a + 1),
                                         c->stream));
    if (!st) /* (the verdicts' flags: not every path of a solve writes them) */
        st = tn_cuda_err(cudaMemsetAsync(vinfo, 0, sizeof(int) * TN_CLUSTER_MAXG, c->stream));
    const int two = !st && ng > 1 && !c->lane_off && tn_cuda_lane_fork(c) == TCNLA_SUCCESS;
    struct tn_cuda_ctx lc = *c; /* the second lane: its stream and cuBLAS handle */
    if (two) lc.stream = c->lane, lc.cublas = c->lane_blas;
    /* by pairs, one group a lane, each stage of the pair queued on both lanes
     * before the next (the lanes start as early as they can; groups 2 and 3
     * reuse the scratch of 0 and 1) */
    const int w = two ? 2 : 1;
    for (int p = 0; p < ng && !st; p += w)
        for (int stage = 0; stage < 2 && !st; stage++)
            for (int q = p; q < p + w && q < ng && !st; q++) {
                const int b = two && (q & 1);
                st = b ? repair_group(&lc, n, ng, g, q, stage, tnorm, d, e, Zo, S2, lam, ln, xfb,
                                      dinfo2b, barb, vinfo + q, vtop + q)
                       : repair_group(c, n, ng, g, q, stage, tnorm, d, e, Zo, S2, lam, rw + nn,
                                      sub, dinfo2, bar, vinfo + q, vtop + q);
            }
    if (two) { /* joined whatever happened: the lane's work reads this workspace */
        const int sj = tn_cuda_lane_join(c);
        if (!st) st = sj;
    }
    int hi[TN_CLUSTER_MAXG];
    double ht[TN_CLUSTER_MAXG];
    const tn_cuda_read_t rd[2] = {{hi, vinfo, sizeof(int) * (size_t)ng},
                                  {ht, vtop, sizeof(double) * (size_t)ng}};
    if (!st) st = tn_cuda_read_back(c, rd, 2);
    for (int q = 0; q < ng && !st; q++) /* eig_verdict's test of a solve */
        if (hi[q] != 0 || !(ht[q] > 0.0) || !isfinite(ht[q])) st = EIG_NOREPAIR;
    return st;
}

/* The repair of clustered vectors, after the fast solver's checks refused.
 * The twisted vectors of eigenvalues closer than about 1e-10 ||T|| are not
 * orthogonal (a multiple eigenvalue gives the same vector twice); a
 * rank-deficient Gram matrix (its zero eigenvalues) or a spectrum decaying
 * through FP64's resolution (a chain of values down to eps ||T||) makes
 * such a cluster at the bottom, equal singular values (a flat top) one
 * away from zero. From the vectors the solver computed (S3 = Q Z0): Z0 =
 * Q^T S3, the pairs from F = Z0^T Z0 (tn_cu_syev_reach: beyond
 * REPAIR_TOL, and beyond REPAIR_FAIL, the orthogonality check's own
 * tolerance; one read back, with T's eigenvalues), the block of columns by
 * tn_cluster_block's rule (src/linalg/cluster_block.h: the clusters within
 * REPAIR_CAP ||T|| of zero, cut to the values below xr ||T|| where the
 * refused pairs all lie there). Where every cluster lies away from zero,
 * at depth 0, the groups of tn_cluster_groups instead (repair_groups);
 * otherwise EIG_NOREPAIR, syevd next. Y: start vectors projected off the
 * other columns of Z0, twice (their error along the block's vectors, eps ||T|| / gap, costs the
 * result about eps ||T|| in residual whatever the gap), orthonormalized
 * (repair_basis): a basis of the block's invariant subspace. Where all the
 * block's values are below xr ||T|| (xcut) that is the block (its values
 * stay the bisection's): its columns are asked only to span it. Else
 * Rayleigh-Ritz (depth 0 only): H = Y^T T Y, its eigensolution by
 * eig_solve_d at depth 1 with xr' = xcut / max|lam| of the block (so that
 * the same columns are exempt; at depth 1 the repair takes only blocks
 * below it), the block's columns = Y Z_H, its values H's. Then fast_tail on
 * the new Z, whose flag the caller reads (eig_verdict): the same checks
 * decide as on the first result. TCNLA_SUCCESS (Xf, lam and dinfo
 * written), EIG_NOREPAIR (nothing decided) or an error. ws: eig_solve_d's
 * (fws: Q, S1, S2, S3, d, e; rw: repair_ws(n, depth); V, H and mu, not
 * used before the basis is orthonormalized, are repair_basis's R, Inv and
 * diag). */
static int eig_repair(struct tn_cuda_ctx *c, int n, int upper, const double *G, double *fws,
                      double *rw, double *lam, double xr, double *Xf, int *dinfo, int depth,
                      int drop) {
    const size_t nn = (size_t)n * (size_t)n;
    double *Q = fws, *S1 = Q + nn, *S2 = S1 + nn, *S3 = S2 + nn, *d = S3 + nn, *e = d + n;
    double *Zo = rw, *Y = Zo + nn, *V = Y + nn, *P = V + nn, *Gm = P + nn, *H = Gm + nn,
           *mu = H + nn;
    int *reach = (int *)(mu + n), *reach2 = reach + n, *dinfo2 = reach2 + n;
    unsigned *bar = (unsigned *)(dinfo2 + 1);
    double *sub = mu + 2 * (size_t)n + 16; /* (depth 0) */
    const double one = 1.0, zero = 0.0;
    int st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, Q, n, S3,
                                      n, &zero, S2, n)); /* Z0 */
    if (!st) /* F (its lower triangle is read; a DGEMM: DSYRK is slower at these sizes) */
        st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, S2, n,
                                      S2, n, &zero, S1, n));
    if (!st)
        st = tn_cuda_err((cudaError_t)tn_cu_syev_reach(n, S1, REPAIR_TOL, REPAIR_FAIL, reach,
                                                       reach2, c->stream));
    int *hr = malloc(sizeof(int) * 2 * (size_t)n + sizeof(double) * (size_t)n);
    if (!hr) return TCNLA_ERR_ALLOC;
    int *hf = hr + n;
    double *hl = (double *)(hf + n); /* (8-byte aligned: 2 n ints) */
    const tn_cuda_read_t rd[2] = {{hr, reach, sizeof(int) * 2 * (size_t)n}, /* (and reach2) */
                                  {hl, lam, sizeof(double) * (size_t)n}};
    if (!st) st = tn_cuda_read_back(c, rd, 2);
    double tnorm = 0.0;
    for (int i = 0; i < n; i++) tnorm = fmax(tnorm, fabs(hl[i]));
    const double xcut = xr * tnorm;
    int ra = 0, rb = -1, below = 0, ng = 0;
    tn_cluster_group_t grp[TN_CLUSTER_MAXG];
    if (!st && !tn_cluster_block(n, hr, hf, hl, xr, REPAIR_CAP, &ra, &rb, &below)) {
        ng = depth == 0 ? tn_cluster_groups(n, hr, hl, REPAIR_CAP, grp) : 0;
        if (!ng) st = EIG_NOREPAIR;
    }
    const int cn = rb - ra + 1;
    const double top = st || ng ? 0.0 : fmax(fabs(hl[ra]), fabs(hl[rb])); /* the block's largest */
    free(hr);
    if (!st && ng) { /* groups away from zero */
        st = repair_groups(c, n, ng, grp, tnorm, d, e, S2, rw, sub,
                           sub + nn + tn_cu_syev_fast_ws(n) + repair_ws(n, 1), lam, dinfo2, bar);
        if (!st) st = tn_cuda_err(cudaMemsetAsync(dinfo, 0, sizeof(int), c->stream));
        if (!st) st = fast_tail(c, n, upper, G, Q, S2, S1, S2, S3, lam, xr, Xf, dinfo, drop);
        return st;
    }
    if (!st && !below && depth > 0) st = EIG_NOREPAIR;
    if (!st) /* Zo: Z0 without the block */
        st = tn_cuda_err(cudaMemcpyAsync(Zo, S2, sizeof(double) * nn, cudaMemcpyDeviceToDevice,
                                         c->stream));
    if (!st)
        st = tn_cuda_err(cudaMemsetAsync(Zo + (size_t)ra * n, 0,
                                         sizeof(double) * (size_t)n * (size_t)cn, c->stream));
    if (!st) st = tn_cuda_err((cudaError_t)tn_cu_syev_start(n, cn, Y, c->stream));
    if (!st) st = repair_basis(c, n, cn, Zo, Y, P, Gm, V, H, mu, dinfo2, bar);
    double *Zh = Y;
    if (!st && !below) { /* Rayleigh-Ritz */
        st = tn_cuda_err((cudaError_t)tn_cu_syev_tmul(n, d, e, cn, Y, V, c->stream));
        if (!st)
            st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, cn, cn, n, &one, Y,
                                          n, V, n, &zero, H, cn));
        if (!st) {
            double *Zs = NULL;
            st = eig_solve_d(c, cn, 1, 1, H, &Zs, mu, dinfo2, sub, 0, EIG_FALLBACK, NULL, NULL,
                             xcut / top, 1, 0, NULL);
            if (st == EIG_FALLBACK) st = EIG_NOREPAIR;
            if (!st)
                st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, cn, cn, &one,
                                              Y, n, Zs, cn, &zero, P, n));
            Zh = P;
        }
    }
    if (!st)
        st = tn_cuda_err((cudaError_t)tn_cu_syev_place(n, cn, Zh, below ? NULL : mu, 0.0, S2, lam,
                                                        ra, c->stream));
    if (!st) st = tn_cuda_err(cudaMemsetAsync(dinfo, 0, sizeof(int), c->stream));
    if (!st) st = fast_tail(c, n, upper, G, Q, S2, S1, S2, S3, lam, xr, Xf, dinfo, drop);
    return st;
}

/* The eigensolution of the symmetric n x n G (its upper or lower triangle,
 * ld n) on the handle's stream, then eig_verdict: lam ascending, *X the
 * eigenvectors (n x n, ld n). First the solver of syev_kernels.cu
 * (tn_cu_syev_fast: Hopper, n up to 448; its kernels about 0.8 ms against
 * syevd's 2.2 at n = 266 on an H200, the RSVD's svd step 1.1 ms instead
 * of 2.6), which leaves G as it was; where its checks refuse its vectors,
 * the repair of clustered vectors (eig_repair), checked the same way;
 * where the fast solver does not apply, fails to launch, or its checks
 * refuse the repaired result too, cuSOLVER's syevd, whose vectors
 * overwrite G (c->ssvd counts the repairs and the syevd runs). The
 * tuning's syev_fast = 0 goes to syevd directly (to compare). ws: eig_ws's
 * doubles, 8-byte aligned; dinfo one int of device memory; hlam:
 * eig_verdict's; xr: the columns of values |lam_j| < xr max|lam| need only
 * span their invariant subspace (tn_cuda_syev). depth 1 (the repair's own
 * Rayleigh-Ritz solve; ws: lwork 0, then n^2, tn_cu_syev_fast_ws(n) and
 * repair_ws(n, 1) doubles for the top solve's n): no syevd, `fallback`
 * instead, and a repair only of clusters below xr. drop (fast_tail's): the
 * fast solver's columns below xr are not asked to span either; they come
 * out zero (the result of syevd, *X == G, has them as eigenvectors). early
 * (may be NULL; in: EARLY_*, out: 1 where it was taken): the fast
 * solver's values read as soon as its bisection has written them
 * (early_values), its checks' flag left in dinfo unread. */
static int eig_solve_d(struct tn_cuda_ctx *c, int n, int64_t k, int upper, double *G, double **X,
                       double *lam, int *dinfo, double *ws, int lwork, int fallback, int *xok,
                       double *hlam, double xr, int depth, int drop, int *early) {
    double *work = ws, *Xf = work + lwork, *fws = Xf + (size_t)n * n;
    int info = 0;
    const int mode = early ? *early : EARLY_NONE;
    if (early) *early = 0;
    if (c->tune->syev_fast && tn_cu_syev_fast_ok(n, tn_cuda_cc(c), c->smem_optin)) {
        const size_t nn = (size_t)n * n;
        double *Q = fws, *S1 = Q + nn, *S2 = S1 + nn, *S3 = S2 + nn;
        double *lh = mode != EARLY_NONE ? early_room(c, n) : NULL;
        int st = lh ? tn_cu_syev_fast_early(n, G, n, upper, Xf, lam, dinfo, fws, !c->mr_off,
                                            c->smem_optin, lh, c->ev_lam, c->stream)
                    : tn_cu_syev_fast(n, G, n, upper, Xf, lam, dinfo, fws, !c->mr_off,
                                      c->smem_optin, c->stream);
        if (!st) st = fast_tail(c, n, upper, G, Q, Xf, S1, S2, S3, lam, xr, Xf, dinfo, drop);
        if (st) (void)cudaGetLastError(); /* a launch refused: syevd below */
        else {
            int est = 0;
            if (lh && (st = early_values(c, n, k, lh, mode, fallback, &est)) != EARLY_NONE) {
                if (st < 0) return st; /* (an error: the wait failed) */
                *X = Xf, *early = 1;
                if (xok) *xok = 1;
                if (hlam) memcpy(hlam, lh, sizeof(double) * (size_t)n);
                return est;
            }
            st = eig_verdict(c, n, k, lam, dinfo, fallback, &info, xok, hlam);
            if (st != fallback || info == 0) {
                *X = Xf;
                return st;
            }
            st = eig_repair(c, n, upper, G, fws, fws + tn_cu_syev_fast_ws(n), lam, xr, Xf, dinfo,
                            depth, drop);
            if (st == TCNLA_SUCCESS) {
                if (depth == 0) c->ssvd.syev_repairs++;
                st = eig_verdict(c, n, k, lam, dinfo, fallback, &info, xok, hlam);
                if (st != fallback || info == 0) {
                    *X = Xf;
                    return st;
                }
            } else if (st == TCNLA_ERR_ALLOC) {
                return st;
            }
            (void)cudaGetLastError(); /* (a launch refused: syevd below) */
        }
    }
    if (depth > 0) return fallback;
    c->ssvd.syevd_runs++;
    *X = G;
    int st = tn_cusolver_st(cusolverDnDsyevd(
        c->cusolver, CUSOLVER_EIG_MODE_VECTOR,
        upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER, n, G, n, lam, work, lwork, dinfo));
    if (!st) st = eig_verdict(c, n, k, lam, dinfo, fallback, NULL, xok, hlam);
    return st;
}

static int eig_solve(struct tn_cuda_ctx *c, int n, int64_t k, int upper, double *G, double **X,
                     double *lam, int *dinfo, double *ws, int lwork, int fallback, int *xok,
                     double *hlam, double xr) {
    return eig_solve_d(c, n, k, upper, G, X, lam, dinfo, ws, lwork, fallback, xok, hlam, xr, 0, 0,
                       NULL);
}

/* Doubles of eig_path's workspace (*ews, *lwork: eig_ws's). */
static size_t eig_path_ws(int64_t l, size_t ews) {
    return 4 * (size_t)l * (size_t)l + (size_t)l + ews + 8;
}

/* The eigensolution path on ws (eig_path_ws doubles, 8-byte aligned): Rd =
 * R in FP64 at ws (for the Jacobi path after it), G = Rd Rd^T, its
 * eigensolution; where its verdict takes it, the outputs; else
 * EIG_FALLBACK with *X the eigenvectors (ascending) where *xok, hlam (l
 * doubles, may be NULL) their values on the host. */
static int eig_path(tcnla_handle_t h, int64_t l, int64_t k, const float *R, float *Uk,
                    float *Vk, float *Sk, int scale_vk, double *ws, size_t ews, int lwork,
                    int take, double **Xout, int *xok, double *hlam) {
    struct tn_cuda_ctx *c = h->cuda;
    const int n = (int)l;
    const size_t ll = (size_t)l * (size_t)l;
    double *Rd = ws, *G = Rd + ll, *Vs = G + ll, *U = Vs + ll, *lam = U + ll, *ew = lam + l,
           *X = NULL;
    int *dinfo = (int *)(ew + ews);
    const double one = 1.0, zero = 0.0;
    int st = tn_cuda_err((cudaError_t)tn_cu_convert(TN_CONV_F32_TO_F64, R, l, Rd, l, l, l, NULL,
                                                    c->stream));
    if (!st) /* G = Rd Rd^T = M^T M */
        st = tn_cublas_st(cublasDsyrk(c->cublas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, n, &one,
                                      Rd, n, &zero, G, n));
    if (!st)
        st = eig_solve(c, n, k, 0, G, &X, lam, dinfo, ew, lwork, EIG_FALLBACK, xok, hlam, EIG_XR);
    if (st == TCNLA_SUCCESS && !take) st = EIG_FALLBACK;
    if (st == EIG_FALLBACK) *Xout = X;
    if (st) return st;
    st = tn_cuda_err((cudaError_t)tn_cu_eig_to_svd(X, lam, l, k, scale_vk, Vs, Vk, Sk,
                                                   c->stream));
    if (!st) /* Ur = M Vr / s = Rd^T Vs */
        st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, (int)k, n, &one, Rd,
                                      n, Vs, n, &zero, U, n));
    if (!st) st = tn_cuda_err((cudaError_t)tn_cu_epilogue_f64(1.0f, U, 0.0f, Uk, l, l, k, c->stream));
    return st;
}

/* ---- the deflated Gram path (src/linalg/deflated_svd.h: the algorithm,
 * its level rule and error argument; tn_defl_svd_ref its C reference) */

_Static_assert(TN_DEFL_LEVELS == (int)(sizeof(((struct tn_cuda_ctx *)0)->ssvd.taken) /
                                       sizeof(int)),
               "ssvd.taken holds a count per level");

/* The span the deflated path's next level needs where level 1's solve
 * dropped its columns below EIG_XR (fast_tail's drop; zero in X, the
 * first nd of X's l columns, ascending): start vectors projected off X's
 * other columns, twice (tn_cu_syev_start_proj: one launch, a block per
 * vector), then orthonormalized into those nd columns (orth_basis:
 * CholeskyQR and two Newton-Schulz steps, as eig_repair's block below xr).
 * Those columns are eigenvectors the checks passed, so this is a basis of
 * their complement, the trailing invariant subspace of
 * src/linalg/deflated_svd.h's level 2, with none of the repair's search
 * for the cluster (two DGEMMs, a read back) or its second check (five
 * products, a read back). The host queues this right after level 1's
 * read back, with the device idle, so its launches are what it costs: the
 * projections as one kernel instead of four DGEMMs and a start kernel,
 * without a copy of X, and the last step writing into X, take it from 18
 * launches to 11. A breakdown leaves Inf / NaN there, which the next
 * level's verdict refuses. hlam: level 1's values (host); b: the columns
 * not taken, among which the dropped ones must lie (else EIG_FALLBACK);
 * ws: 2 l nd + 3 nd^2 + nd + 16 doubles (the next level's eig_solve
 * workspace, free until it runs, holds them: the fast solver, whose
 * region it reserves, is what dropped the columns). */
static int defl_fill(struct tn_cuda_ctx *c, int l, int b, double *X, const double *hlam,
                     double *ws) {
    const double cut = EIG_XR * fmax(fabs(hlam[0]), fabs(hlam[l - 1]));
    int nd = 0;
    while (nd < l && fabs(hlam[nd]) < cut) nd++;
    for (int j = nd; j < l; j++)
        if (fabs(hlam[j]) < cut) return EIG_FALLBACK; /* (not the first ones) */
    if (nd > b) return EIG_FALLBACK;
    c->ssvd.filled = nd;
    if (nd == 0) return TCNLA_SUCCESS;
    const size_t ld = (size_t)l * (size_t)nd, dd = (size_t)nd * (size_t)nd;
    double *Y = ws, *P = Y + ld, *Gm = P + ld, *R = Gm + dd, *Inv = R + dd, *diag = Inv + dd;
    int *info = (int *)(diag + nd);
    unsigned *bar = (unsigned *)(info + 4);
    int st = tn_cuda_err((cudaError_t)tn_cu_syev_start_proj(l, nd, X, nd, Y, c->stream));
    if (!st) st = orth_basis(c, l, nd, Y, P, Gm, R, Inv, diag, info, bar, X);
    return st;
}

/* X_b <- T (l x bt, ld l), lam_b <- mu (bt): a level's X_b Z and values
 * into the level-ordered X and lam (defl_levels) */
static int defl_copy_back(struct tn_cuda_ctx *c, int l, int bt, double *X, double *lam,
                          const double *T, const double *mu) {
    int st = tn_cuda_err(cudaMemcpyAsync(X, T, sizeof(double) * (size_t)l * bt,
                                         cudaMemcpyDeviceToDevice, c->stream));
    if (!st)
        st = tn_cuda_err(cudaMemcpyAsync(lam, mu, sizeof(double) * (size_t)bt,
                                         cudaMemcpyDeviceToDevice, c->stream));
    return st;
}

/* Doubles of defl_levels' workspace for l: G_b, T (l x l each), mu (l). */
static size_t defl_ws(int64_t l) { return 2 * (size_t)l * (size_t)l + (size_t)l + 8; }

/* The levels after the first on M (m x l, FP64): M = Md^T (Md l x l, ld l,
 * m = l) where trans (the R form), else M = Md (m x l, ld m: W, whose level
 * Gram matrices tn_cuda_gram64 forms with the slab partials P), or where Mf
 * is not NULL M = Mf (FP32 W itself, ld ldf; Md unused), Y_b on the FP64
 * Tensor Cores (tn_cu_gemm_dmma64: W's entries exact in FP64, FP64 sums as
 * the DGEMM's). X (l x l,
 * ld l: level 1's eigenvectors), lam (device) and hlam (host: level 1's
 * eigenvalues, ascending, finite, lam_1 > 0) are updated level by level:
 * Y_b = M X_b (Y: m x l doubles), G_b = Y_b^T Y_b = Z diag(mu) Z^T
 * (eig_solve: ew, lwork, dinfo), X_b <- X_b Z, lam_b <- mu (the last
 * level's X_b Z and mu stay in T and mu: X and lam do not receive them),
 * with one read back a level (eig_solve's verdict). Then Xo and lo (device)
 * receive the taken columns and values in ascending order in their last
 * places (at least k of them: tn_cu_eig_to_svd's input), in one launch
 * (tn_cu_defl_merge). ws: defl_ws(l) doubles.
 * fill: level 1's solve dropped its columns below EIG_XR (defl_fill builds
 * their span before level 2, in ew). TCNLA_SUCCESS, EIG_FALLBACK (NaN /
 * Inf, the eigensolver failed), or an error; c->ssvd.levels / taken /
 * filled say what ran. early (may be NULL): each level's eigenvalues read
 * ahead of their checks (eig_solve_d's EARLY_ANY), level j's flag in
 * dinfo[j] (j >= 2, dinfo[0] left as it is), bit j - 1 set in *early
 * where that read was taken: its flag is for the caller to read. */
static int defl_levels(tcnla_handle_t h, int trans, int64_t m, int l, int64_t k,
                       const double *Md, const float *Mf, int64_t ldf, double *X, double *lam,
                       double *hlam, double *Y,
                       double *P, double *ws, double *ew, int lwork, int *dinfo, double *Xo,
                       double *lo, int fill, int *early) {
    struct tn_cuda_ctx *c = h->cuda;
    const size_t ll = (size_t)l * (size_t)l;
    double *Gb = ws, *T = Gb + ll, *mu = T + ll;
    int *perm = malloc(sizeof(int) * (size_t)l);
    if (!perm) return TCNLA_ERR_ALLOC;
    const double lam1 = hlam[l - 1], one = 1.0, zero = 0.0;
    const int im = (int)m;
    int st = TCNLA_SUCCESS, b = l, taken = 0;
    int bt = 0; /* the columns 0 .. bt - 1 of the last level, in T and mu (not yet in X, lam) */
    c->ssvd.levels = 0;
    for (;;) {
        const int lev = c->ssvd.levels;
        if (lev > 0) {
            double *Z = NULL;
            if (lev == 1 && fill && (st = defl_fill(c, l, b, X, hlam, ew)) != TCNLA_SUCCESS) break;
            if (trans) /* Y_b = Md^T X_b, G_b = Y_b^T Y_b (upper) */
                st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, l, b, l, &one,
                                              Md, l, X, l, &zero, Y, l));
            else if (Mf)
                st = tn_cuda_err((cudaError_t)tn_cu_gemm_dmma64(Mf, ldf, m, l, b, X, l, Y, m, 0,
                                                                c->stream));
            else
                st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, im, b, l, &one,
                                              Md, im, X, l, &zero, Y, im));
            if (!st && trans)
                st = tn_cublas_st(cublasDsyrk(c->cublas, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, b,
                                              l, &one, Y, l, &zero, Gb, b));
            else if (!st)
                st = tn_cuda_gram64(h, m, b, Y, m, P, Gb, NULL, NULL);
            /* (the level rule judges mu: NaN where the solver failed) */
            int el = early ? EARLY_ANY : EARLY_NONE;
            if (!st) /* (the last level takes all its values: each an eigenvector) */
                st = eig_solve_d(c, b, 1, 1, Gb, &Z, mu, early ? dinfo + 1 + lev : dinfo, ew,
                                 lwork, EIG_FALLBACK, NULL, hlam,
                                 lev + 1 == TN_DEFL_LEVELS ? 0.0 : EIG_XR, 0, 0, &el);
            if (el) *early |= 1 << lev;
            if (st == EIG_FALLBACK) st = TCNLA_SUCCESS;
            bt = 0;
            if (!st && isfinite(hlam[b - 1])) { /* X_b Z into T, mu: X_b's, lam_b's values */
                st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, l, b, b, &one, X,
                                              l, Z, b, &zero, T, l));
                bt = b;
            }
            if (st) break;
        }
        const int t = tn_defl_take(hlam, b, TN_DEFL_TAU, lam1, lev + 1 == TN_DEFL_LEVELS);
        if (t < 0) {
            st = EIG_FALLBACK;
            break;
        }
        c->ssvd.taken[c->ssvd.levels++] = t;
        b -= t, taken += t;
        if (taken >= k || b == 0) break;
        if (bt) { /* X_b <- X_b Z, lam_b <- mu: the next level starts from them */
            st = defl_copy_back(c, l, bt, X, lam, T, mu);
            bt = 0;
            if (st) break;
        }
    }
    if (!st) { /* the merge, one launch: the last level's columns from T and mu */
        tn_defl_order(hlam, l, taken, perm);
        tn_defl_runs_t runs = {0, {0}, {0}};
        for (int j = 0; j < taken && runs.n <= TN_DEFL_RUNS; j++)
            if (j == 0 || perm[j] != perm[j - 1] - 1) {
                if (runs.n < TN_DEFL_RUNS) runs.j0[runs.n] = j, runs.src[runs.n] = perm[j];
                runs.n++;
            }
        if (runs.n <= TN_DEFL_RUNS) {
            st = tn_cuda_err((cudaError_t)tn_cu_defl_merge(l, taken, &runs, X, lam, T, mu, bt, Xo,
                                                           lo, c->stream));
        } else { /* (values interleaved across levels: each run one copy) */
            if (bt) st = defl_copy_back(c, l, bt, X, lam, T, mu);
            for (int j0 = 0, j1; j0 < taken && !st; j0 = j1 + 1) {
                for (j1 = j0; j1 + 1 < taken && perm[j1 + 1] == perm[j1] - 1;) j1++;
                const size_t nc = (size_t)(j1 - j0 + 1), src = (size_t)perm[j1],
                             dst = (size_t)(l - 1 - j1);
                st = tn_cuda_err(cudaMemcpyAsync(Xo + dst * l, X + src * l,
                                                 sizeof(double) * nc * l,
                                                 cudaMemcpyDeviceToDevice, c->stream));
                if (!st)
                    st = tn_cuda_err(cudaMemcpyAsync(lo + dst, lam + src, sizeof(double) * nc,
                                                     cudaMemcpyDeviceToDevice, c->stream));
            }
        }
    }
    free(perm);
    return st;
}

/* The deflated path's check (DEFL_ORTH_TOL) of the k x k F = Q^T Q, its
 * flag into dinfo (zeroed before the refinement); no read back. */
static int defl_check(struct tn_cuda_ctx *c, int64_t k, const double *F, int *dinfo) {
    return tn_cuda_err((cudaError_t)tn_cu_orth_check_tol(k, F, DEFL_ORTH_TOL, dinfo, c->stream));
}

/* The flags of the eigensolutions whose values were read ahead of their
 * checks (bit j of early: fl[1 + j], from dinfo[1 + j]) and, where last,
 * the last check's (fl[0], from dinfo[0]): DEFL_EARLY_REDO where one of
 * the former is set (or the test hook spec_fault asks for it); else, where
 * last, EIG_FALLBACK where the latter is. defl_verdict reads them (one
 * wait) and decides. */
static int defl_decide(struct tn_cuda_ctx *c, const int *fl, int early, int last) {
    int redo = early && c->spec_fault;
    for (int j = 0; j < TN_DEFL_LEVELS; j++) redo |= (early >> j & 1) && fl[1 + j];
    if (redo) return DEFL_EARLY_REDO;
    if (last && (fl[0] || c->defl_fault)) {
        c->ssvd.defl_refused = 1;
        return EIG_FALLBACK;
    }
    return TCNLA_SUCCESS;
}

static int defl_verdict(struct tn_cuda_ctx *c, const int *dinfo, int early, int last) {
    int fl[1 + TN_DEFL_LEVELS] = {0};
    const int j0 = last ? 0 : 1, j1 = early ? 1 + TN_DEFL_LEVELS : 1;
    if (j1 <= j0) return TCNLA_SUCCESS;
    const tn_cuda_read_t rd = {fl + j0, dinfo + j0, sizeof(int) * (size_t)(j1 - j0)};
    const int st = tn_cuda_read_back(c, &rd, 1);
    return st ? st : defl_decide(c, fl, early, last);
}

/* defl_verdict's last read in two halves, so that work may be queued
 * between them: the flags (dinfo[0 .. TN_DEFL_LEVELS]) copied to pinned
 * memory behind what is queued so far and an event recorded (no wait);
 * then the wait for that copy alone and the decision. */
static int defl_flags_copy(struct tn_cuda_ctx *c, const int *dinfo) {
    cudaError_t e = cudaSuccess;
    if (!c->flags_pinned &&
        (e = cudaMallocHost((void **)&c->flags_pinned, sizeof(int) * (1 + TN_DEFL_LEVELS))) !=
            cudaSuccess) {
        c->flags_pinned = NULL;
        return tn_cuda_err(e);
    }
    if (!c->ev_flags &&
        (e = cudaEventCreateWithFlags(&c->ev_flags, cudaEventDisableTiming)) != cudaSuccess) {
        c->ev_flags = NULL;
        return tn_cuda_err(e);
    }
    e = cudaMemcpyAsync(c->flags_pinned, dinfo, sizeof(int) * (1 + TN_DEFL_LEVELS),
                        cudaMemcpyDeviceToHost, c->stream);
    if (e == cudaSuccess) e = cudaEventRecord(c->ev_flags, c->stream);
    return tn_cuda_err(e);
}

static int defl_flags_wait(struct tn_cuda_ctx *c, int early) {
    const cudaError_t e = cudaEventSynchronize(c->ev_flags);
    return e != cudaSuccess ? tn_cuda_err(e) : defl_decide(c, c->flags_pinned, early, 1);
}

/* Doubles of defl_path's workspace for l (after eig_path's). */
static size_t defl_path_ws(int64_t l) {
    return 3 * (size_t)l * (size_t)l + (size_t)l + defl_ws(l) + 8;
}

/* The R form of the deflated path after eig_path refused the span (or was
 * told not to take it): its Rd, lam, dinfo and eigenvectors X (ascending;
 * hlam their values, on the host, finite, the largest positive), ws
 * (eig_path_ws), dws defl_path_ws(l) doubles. The levels (defl_levels), the
 * outputs as eig_path makes them (Ur = M Vr / s), the check of Ur's
 * orthogonality, where a level past the first ran the refinement
 * (deflated_svd.h: tn_cu_defl_refine, two DGEMMs l x k x k), one read
 * back: TCNLA_SUCCESS, EIG_FALLBACK (the outputs to be overwritten) or an
 * error. */
static int defl_path(tcnla_handle_t h, int64_t l, int64_t k, float *Uk, float *Vk, float *Sk,
                     int scale_vk, double *ws, size_t ews, int lwork, const double *X,
                     double *hlam, double *dws) {
    struct tn_cuda_ctx *c = h->cuda;
    const int n = (int)l;
    const size_t ll = (size_t)l * (size_t)l;
    double *Rd = ws, *Vs = Rd + 2 * ll, *U = Vs + ll, *lam = U + ll, *ew = lam + l;
    int *dinfo = (int *)(ew + ews);
    double *Xd = dws, *Y = Xd + ll, *Xo = Y + ll, *lo = Xo + ll, *lws = lo + l;
    const double one = 1.0, zero = 0.0;
    int st = tn_cuda_err(cudaMemcpyAsync(Xd, X, sizeof(double) * ll, cudaMemcpyDeviceToDevice,
                                         c->stream));
    if (!st)
        st = defl_levels(h, 1, l, n, k, Rd, NULL, 0, Xd, lam, hlam, Y, NULL, lws, ew, lwork,
                         dinfo, Xo, lo, 0, NULL);
    if (!st)
        st = tn_cuda_err((cudaError_t)tn_cu_eig_to_svd(Xo, lo, l, k, scale_vk, Vs, Vk, Sk,
                                                       c->stream));
    if (!st) /* Ur = M Vr / s = Rd^T Vs */
        st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, (int)k, n, &one, Rd,
                                      n, Vs, n, &zero, U, n));
    double *F = lws, *Qv = lws + ll, *Qu = Xo;
    if (!st) /* F = Ur^T Ur (k x k) */
        st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, (int)k, (int)k, n, &one,
                                      U, n, U, n, &zero, F, (int)k));
    if (!st) st = tn_cuda_err(cudaMemsetAsync(dinfo, 0, sizeof(int), c->stream));
    if (!st && c->ssvd.levels > 1) { /* the refinement: V' = Vs Qv, Ur' = Ur Qu, F again */
        st = tn_cuda_err((cudaError_t)tn_cu_defl_refine(k, l, F, lo, TN_DEFL_RHO, scale_vk, Qv, Qu,
                                                        Sk, dinfo, c->stream));
        if (!st)
            st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, (int)k, (int)k,
                                          &one, Vs, n, Qv, (int)k, &zero, Xd, n));
        if (!st)
            st = tn_cuda_err((cudaError_t)tn_cu_epilogue_f64(1.0f, Xd, 0.0f, Vk, l, l, k,
                                                             c->stream));
        if (!st)
            st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, (int)k, (int)k,
                                          &one, U, n, Qu, (int)k, &zero, Y, n));
        U = Y;
        if (!st)
            st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, (int)k, (int)k, n,
                                          &one, U, n, U, n, &zero, F, (int)k));
    }
    if (!st) st = defl_check(c, k, F, dinfo); /* of Ur as it goes out */
    if (!st) st = tn_cuda_err((cudaError_t)tn_cu_epilogue_f64(1.0f, U, 0.0f, Uk, l, l, k, c->stream));
    if (!st) st = defl_verdict(c, dinfo, 0, 1);
    return st;
}

/* Doubles of jacobi_path's workspace for l. */
static size_t jacobi_ws(int64_t l) {
    const size_t L = (size_t)TN_JSVD_W * (size_t)tn_jsvd_nblocks((int)l);
    return 2 * (size_t)l * L + 3 * (size_t)l * (size_t)l + (size_t)l + 8;
}

/* The one-sided Jacobi path (kernels/jacobi_svd.cu) on Rd (R in FP64, l x
 * l, ld l; not written), ws jacobi_ws(l) doubles: Y = M X, V = X with the
 * eigenvectors X of M^T M (not NULL: the preconditioner; their columns
 * nearly orthogonal already, the sweeps fewer), else Y = M, V = I; the
 * sweeps, the check of the result (Y^T Y, V^T V by DSYRK, M V by DGEMM,
 * tn_cu_jsvd_verify), the outputs, and one read back of the state.
 * EIG_FALLBACK (outputs to be overwritten; c->ssvd.refusal the cause) where
 * it did not converge, met NaN / Inf, failed the check or could not
 * launch. */
static int jacobi_path(tcnla_handle_t h, int64_t l, int64_t k, const double *Rd, const double *X,
                       float *Uk, float *Vk, float *Sk, int scale_vk, double *ws) {
    struct tn_cuda_ctx *c = h->cuda;
    const int n = (int)l;
    const int64_t L = (int64_t)TN_JSVD_W * tn_jsvd_nblocks(n);
    const size_t lL = (size_t)l * (size_t)L;
    double *Y = ws, *V = Y + lL, *Gy = V + lL, *Fv = Gy + (size_t)l * l, *P = Fv + (size_t)l * l,
           *s = P + (size_t)l * l;
    int *dstate = (int *)(s + l), hstate[8] = {0};
    unsigned *bar = (unsigned *)(dstate + 8);
    const double one = 1.0, zero = 0.0;
    int st = tn_cuda_err(cudaMemsetAsync(Y, 0, sizeof(double) * lL, c->stream));
    if (!st && X) {
        st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, Rd, n,
                                      X, n, &zero, Y, n));
        if (!st) st = tn_cuda_err(cudaMemsetAsync(V, 0, sizeof(double) * lL, c->stream));
        if (!st)
            st = tn_cuda_err(cudaMemcpyAsync(V, X, sizeof(double) * (size_t)l * (size_t)l,
                                             cudaMemcpyDeviceToDevice, c->stream));
    } else if (!st) {
        st = tn_cublas_st(cublasDgeam(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, &one, Rd, n,
                                      &zero, Rd, n, Y, n));
        if (!st) st = tn_cuda_err((cudaError_t)tn_cu_jsvd_eye(n, L, V, c->stream));
    }
    if (st) return st;
    if (tn_cu_jsvd(n, Y, V, dstate, bar, TN_JSVD_INNER, TN_JSVD_SWEEPS, c->ssvd.fault,
                   c->sm_count, c->stream)) {
        (void)cudaGetLastError(); /* a launch refused: not a sticky error */
        c->ssvd.refusal = 32;
        return EIG_FALLBACK;
    }
    st = tn_cublas_st(cublasDsyrk(c->cublas, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, n, n, &one, Y, n,
                                  &zero, Gy, n));
    if (!st)
        st = tn_cublas_st(cublasDsyrk(c->cublas, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, n, n, &one,
                                      V, n, &zero, Fv, n));
    if (!st) /* P = M V = Rd^T V */
        st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &one, Rd, n, V,
                                      n, &zero, P, n));
    if (!st) st = tn_cuda_err((cudaError_t)tn_cu_jsvd_verify(n, Gy, Fv, P, Y, dstate, c->stream));
    if (!st)
        st = tn_cuda_err((cudaError_t)tn_cu_jsvd_out(n, (int)k, Y, V, s, scale_vk, Uk, Vk, Sk,
                                                     dstate, c->stream));
    const tn_cuda_read_t rd = {hstate, dstate, sizeof hstate};
    if (!st) st = tn_cuda_read_back(c, &rd, 1);
    if (st) return st;
    c->ssvd.sweeps = hstate[3];
    c->ssvd.refusal = hstate[5] | (hstate[4] == 1 ? 0 : 16);
    return c->ssvd.refusal ? EIG_FALLBACK : TCNLA_SUCCESS;
}

/* The last step of the randomized SVD from W = B^T = A^T Q (n x l) without
 * W's QR (tn_cuda_svd_from_gram in internal.h): the eigensolution of the
 * Gram matrix G = W^T W = X diag(lam) X^T in FP64 (on Hopper's FP64 Tensor
 * Cores from W itself, else W widened once and the Gram product of
 * CholeskyQR, tn_cuda_gram64; then eig_solve), s = sqrt(lam),
 * Xk = X(:, 1:k) (FP32, for U = Q Xk), and V^T = diag(1 / s) Xk^T W^T as
 * one FP64 product, rounded to FP32 once. The QR path it
 * replaces, W = Qw R then the eigensolution of R R^T (eig_path above), has
 * the same conditioning (R^T R = G): errors of about eps64 (s_1 / s_i)^2 in
 * s_i and in V's orthogonality, hence the same threshold, s_k >= 1e-4 s_1.
 * Below it the deflated Gram path on W (defl_levels: Y_b = W X_b, n x b,
 * its Gram matrix by tn_cuda_gram64, its eigensolution), the same outputs
 * from the merged levels, a check of V^T's rows (|V^T V - I| <=
 * DEFL_ORTH_TOL) and where a level past the first ran the refinement
 * (tn_cu_defl_refine; X' = Xs Qv, V'^T = Qu^T V^T, Ww's room reused for
 * it); not where W's rows are over ranks (dist), nor with the
 * tuning's small_svd_deflate = 0. Where that refuses or is off (or when
 * the eigensolver fails, NaN / Inf in W included) TN_GRAM_NOT_TAKEN is
 * returned, for the QR path to take over (nothing written, except Xk and
 * Sk where the deflated path's last check refused: the QR path writes
 * them again). h->cuda->ssvd reports what ran (from_w 1). What it saves
 * on RSVD's 16384 x 266 W is the CholeskyQR's factorization, solve and
 * conversion plus the DSYRK. The tuning's rsvd_gram = 0 (or
 * small_svd_jacobi = 1, to compare) turns it off. */
int tn_cuda_svd_from_gram(tcnla_handle_t h, int64_t n, int64_t l, int64_t k, const float *W,
                          int64_t ldw, float *Xk, float *Sk, float *VT, int64_t ldvt) {
    return tn_cuda_svd_from_gram_rows(h, n, l, k, W, ldw, Xk, Sk, VT, ldvt, 0, NULL, NULL);
}

/* tn_cuda_svd_from_gram_rows' workspace for n, l, k (defl: with the
 * deflated path's room) in one request, and its pointers: FP64 Ww (n x
 * l), V^T (k x n; the deflated path's Y, n x l, before), the slab
 * partials P (nslab of l x l), G, X / s (l x k), lam; the deflated path's
 * X, Xo (l x l), lo (l), defl_ws; eig_ws's (ew, lwork); dinfo. */
typedef struct {
    double *Ww, *Vt, *P, *G, *Xs, *lam, *Xd, *Xo, *lo, *lws, *ew;
    int *dinfo;
    int64_t nslab;
    int lwork;
} gram_ws_t;

static int gram_ws(struct tn_cuda_ctx *c, int64_t n, int64_t l, int64_t k, int defl,
                   gram_ws_t *g) {
    const size_t ll = (size_t)l * (size_t)l, nl = (size_t)n * (size_t)l;
    size_t ews = 0;
    g->lwork = 0;
    g->nslab = tn_gram64_nslab(n);
    int st = eig_ws(c, (int)l, &ews, &g->lwork);
    if (st) return st;
    const size_t nvt = (size_t)(defl ? l : k) * (size_t)n, nd = defl ? 2 * ll + l + defl_ws(l) : 0;
    const size_t fixed = nl + nvt + (size_t)g->nslab * ll + ll + (size_t)l * k + l;
    double *ws = tn_cuda_workspace(c, sizeof(double) * (fixed + nd + ews) + 64);
    if (!ws) return TCNLA_ERR_ALLOC;
    g->Ww = ws, g->Vt = g->Ww + nl, g->P = g->Vt + nvt, g->G = g->P + (size_t)g->nslab * ll;
    g->Xs = g->G + ll, g->lam = g->Xs + (size_t)l * k, g->Xd = g->lam + l;
    g->Xo = g->Xd + (defl ? ll : 0), g->lo = g->Xo + (defl ? ll : 0);
    g->lws = g->lo + (defl ? l : 0), g->ew = g->lws + (defl ? defl_ws(l) : 0);
    g->dinfo = (int *)(g->ew + ews);
    return TCNLA_SUCCESS;
}

/* G = W^T W in FP64 into g->G: on Hopper's FP64 Tensor Cores from W
 * itself (dm, kernels/cholqr_dmma.cu: the Gram partials, without widening
 * W; H100, 16384 x 266: 72 us against 24 + 76 for the widening and the
 * DGEMMs), else W widened into Ww once and the Gram product of
 * CholeskyQR (tn_cuda_gram64). */
static int gram_form(tcnla_handle_t h, int dm, const float *W, int64_t ldw, int64_t n, int64_t l,
                     const gram_ws_t *g) {
    struct tn_cuda_ctx *c = h->cuda;
    int st;
    if (dm) {
        st = tn_cuda_err((cudaError_t)tn_cu_gram_dmma(W, 0, ldw, n, l, g->nslab, g->P, c->stream));
        if (!st)
            st = tn_cuda_err((cudaError_t)tn_cu_gram_reduce(g->P, g->nslab, l, g->G, NULL, NULL,
                                                            0, c->stream));
        return st;
    }
    st = tn_cuda_err((cudaError_t)tn_cu_convert(TN_CONV_F32_TO_F64, W, ldw, g->Ww, n, n, l, NULL,
                                                c->stream));
    return st ? st : tn_cuda_gram64(h, n, l, g->Ww, n, g->P, g->G, NULL, NULL);
}

/* Where tn_cuda_svd_from_gram_rows takes the call (the tuning's rsvd_gram
 * on, small_svd_jacobi off, 1 <= k <= l) */
static int gram_path_on(const struct tn_cuda_ctx *c, int64_t l, int64_t k) {
    return c->tune->rsvd_gram && !c->tune->small_svd_jacobi && k >= 1 && k <= l;
}

int tn_cuda_gram_ahead(tcnla_handle_t h, int64_t n, int64_t l, int64_t k, const float *W,
                       int64_t ldw) {
    struct tn_cuda_ctx *c = h->cuda;
    if (!gram_path_on(c, l, k)) return TCNLA_SUCCESS;
    gram_ws_t g;
    int st = gram_ws(c, n, l, k, c->tune->small_svd_deflate, &g);
    if (!st) st = gram_form(h, tn_cuda_dmma_cols(c, l), W, ldw, n, l, &g);
    if (!st) {
        c->gram_ahead.W = W, c->gram_ahead.n = n, c->gram_ahead.l = l, c->gram_ahead.k = k;
        c->gram_ahead.ldw = ldw, c->gram_ahead.valid = 1;
    }
    return st;
}

/* tn_cuda_svd_from_gram_rows' work: ahead, G as tn_cuda_gram_ahead
 * queued it; early, the deflated path's eigenvalues read ahead of their
 * checks (EARLY_REFUSAL at level 1, EARLY_ANY after it; the checks' flags
 * in dinfo[1 + level], read with the last check's), DEFL_EARLY_REDO where
 * one of those flags is set (the call is then redone without them). */
static int svd_from_gram_run(tcnla_handle_t h, int64_t n, int64_t l, int64_t k, const float *W,
                             int64_t ldw, float *Xk, float *Sk, float *VT, int64_t ldvt,
                             int trans, tn_call_t *dist, const tn_then_t *then, int ahead,
                             int early) {
    struct tn_cuda_ctx *c = h->cuda;
    const int il = (int)l;
    const size_t ll = (size_t)l * (size_t)l;
    c->ssvd.path = c->ssvd.levels = c->ssvd.defl_refused = 0;
    c->ssvd.syev_repairs = c->ssvd.syevd_runs = c->ssvd.filled = c->ssvd.early = 0;
    c->ssvd.from_w = 1;
    /* the deflated path where the span refuses (not with W's rows over ranks) */
    const int defl = c->tune->small_svd_deflate && !dist;
    early = early && defl;
    gram_ws_t g;
    int st = gram_ws(c, n, l, k, defl, &g);
    if (st) return st;
    double *hlam = defl ? malloc(sizeof(double) * (size_t)l) : NULL;
    if (defl && !hlam) return TCNLA_ERR_ALLOC;
    double *Ww = g.Ww, *Vt = g.Vt, *P = g.P, *G = g.G, *Xs = g.Xs, *lam = g.lam, *Xd = g.Xd,
           *Xo = g.Xo, *lo = g.lo, *lws = g.lws, *ew = g.ew, *X = NULL;
    int *dinfo = g.dinfo, xok = 0, lwork = g.lwork;
    const int dm = tn_cuda_dmma_cols(c, l);
    if (ahead) c->gram_ahead.taken++;
    else st = gram_form(h, dm, W, ldw, n, l, &g);
    if (!st && dist) st = tn_dist_gram_sum(dist, G, (int64_t)ll);
    /* (the deflated path builds the span of the columns below EIG_XR
     * itself: the fast solver drops them, defl_fill) */
    int e1 = early ? EARLY_REFUSAL : EARLY_NONE;
    if (!st)
        st = eig_solve_d(c, il, k, 1, G, &X, lam, dinfo + 1, ew, lwork, TN_GRAM_NOT_TAKEN, &xok,
                         hlam, EIG_XR, 0, defl, &e1);
    c->ssvd.early = e1 ? 1 : 0;
    const int dropped = defl && X && X != G;
    double *Xu = X; /* the eigenvectors the outputs come from (ascending), and their values */
    double *lu = lam;
    const int deflating = st == TN_GRAM_NOT_TAKEN && defl && xok;
    if (deflating) { /* the levels after the first, Y_b in V^T's place */
        c->ssvd.defl_refused = 0;
        st = tn_cuda_err(cudaMemcpyAsync(Xd, X, sizeof(double) * ll, cudaMemcpyDeviceToDevice,
                                         c->stream));
        /* (dm: Y_b from W itself on the FP64 Tensor Cores, Ww only room
         * below; else from Ww, widened above) */
        if (!st)
            st = defl_levels(h, 0, n, il, k, Ww, dm ? W : NULL, ldw, Xd, lam, hlam, Vt, P, lws, ew,
                             lwork, dinfo, Xo, lo, dropped, early ? &c->ssvd.early : NULL);
        /* (a refusal after values read ahead of their checks stands only
         * where those checks passed) */
        if (st == EIG_FALLBACK && (st = defl_verdict(c, dinfo, c->ssvd.early, 0)) == 0) {
            c->ssvd.defl_refused = 1;
            st = TN_GRAM_NOT_TAKEN;
        }
        Xu = Xo, lu = lo;
    } else if (!st && defl) {
        c->ssvd.levels = 1, c->ssvd.taken[0] = (int)k, c->ssvd.defl_refused = 0;
    }
    free(hlam);
    if (st) return st;
    /* Xs = X(:, 1:k) / s, Xk = X(:, 1:k), Sk = s(1:k), in descending order */
    st = tn_cuda_err((cudaError_t)tn_cu_eig_to_svd(Xu, lu, l, k, 0, Xs, Xk, Sk, c->stream));
    const double one = 1.0, zero = 0.0;
    if (!st && dm && !deflating) { /* V^T = (W Xs)^T (k x n, or V where trans), rounded once */
        st = tn_cuda_err((cudaError_t)tn_cu_gemm_dmma(W, ldw, n, l, k, Xs, l, 0, VT, ldvt, !trans,
                                                      NULL, c->stream));
        if (!st && then) st = then->run(then->arg);
        if (!st) c->ssvd.path = TN_SSVD_RAN_EIG;
        return st;
    }
    if (!st && dm) /* V^T = (W Xs)^T (k x n, FP64) */
        st = tn_cuda_err((cudaError_t)tn_cu_gemm_dmma64(W, ldw, n, l, k, Xs, l, Vt, k, 1,
                                                        c->stream));
    else if (!st) /* V^T = Xs^T Ww^T (k x n) */
        st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_T, (int)k, (int)n, il, &one,
                                      Xs, il, Ww, (int)n, &zero, Vt, (int)k));
    double *Vf = Vt; /* V^T as it goes out */
    if (!st && deflating) { /* F = V^T V (k x k, in G's place) */
        st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_T, (int)k, (int)k, (int)n,
                                      &one, Vt, (int)k, Vt, (int)k, &zero, G, (int)k));
        if (!st) st = tn_cuda_err(cudaMemsetAsync(dinfo, 0, sizeof(int), c->stream));
        if (!st && c->ssvd.levels > 1) { /* the refinement: X' = Xs Qv, V'^T = Qu^T V^T */
            double *Qv = lws, *Qu = lws + ll;
            st = tn_cuda_err((cudaError_t)tn_cu_defl_refine(k, l, G, lo, TN_DEFL_RHO, 0, Qv, Qu,
                                                            Sk, dinfo, c->stream));
            if (!st)
                st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, il, (int)k,
                                              (int)k, &one, Xs, il, Qv, (int)k, &zero, Xd, il));
            if (!st)
                st = tn_cuda_err((cudaError_t)tn_cu_epilogue_f64(1.0f, Xd, 0.0f, Xk, l, l, k,
                                                                 c->stream));
            if (!st) /* (in Ww's place: W is not needed any more) */
                st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, (int)k, (int)n,
                                              (int)k, &one, Qu, (int)k, Vt, (int)k, &zero, Ww,
                                              (int)k));
            Vf = Ww;
            /* F of V^T as it goes out, as Qu^T F Qu: two k x k x k DGEMMs
             * instead of a k x k x n one. The check is one against failure
             * (DEFL_ORTH_TOL = 1e-3, NaN), far above the FP64 rounding of
             * V^T's product by which the two differ (Qv, used up, holds
             * F Qu) */
            if (!st)
                st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_N, CUBLAS_OP_N, (int)k, (int)k,
                                              (int)k, &one, G, (int)k, Qu, (int)k, &zero, Qv,
                                              (int)k));
            if (!st)
                st = tn_cublas_st(cublasDgemm(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, (int)k, (int)k,
                                              (int)k, &one, Qu, (int)k, Qv, (int)k, &zero, G,
                                              (int)k));
        }
        if (!st) st = defl_check(c, k, G, dinfo);
        /* its flags (and the read-ahead levels') copied out, then V^T's
         * rounding and `then` queued ahead of the wait for that copy alone:
         * the GPU runs them while the host waits and decides, instead of
         * after (where the check refuses, the QR path writes their outputs
         * again) */
        if (!st) st = defl_flags_copy(c, dinfo);
    }
    if (!st && trans) /* V = (V^T)^T (n x k), rounded as it is transposed */
        st = tn_cuda_err((cudaError_t)tn_cu_f64_to_f32_t(Vf, k, VT, ldvt, k, n, c->stream));
    else if (!st)
        st = tn_cuda_err((cudaError_t)tn_cu_convert(TN_CONV_F64_TO_F32, Vf, k, VT, ldvt, k, n,
                                                    NULL, c->stream));
    if (!st && then) st = then->run(then->arg);
    if (!st && deflating) {
        st = defl_flags_wait(c, c->ssvd.early);
        if (st == EIG_FALLBACK) st = TN_GRAM_NOT_TAKEN; /* (Xk, Sk, VT written: the QR path's too) */
    }
    if (!st) c->ssvd.path = deflating ? TN_SSVD_RAN_DEFLATE : TN_SSVD_RAN_EIG;
    return st;
}

/* trans: V^T written transposed, as V (n x k, ld ldvt; the pass-efficient
 * randomized SVD's U from Y = A Z). dist (the call, or NULL): W's rows are
 * distributed over the ranks of dist->comm; G is the sum of their Gram
 * matrices, V^T this rank's columns. G as tn_cuda_gram_ahead queued it for
 * the same W, l and k, where it did and nothing asked for the workspace
 * since. The deflated path reads its eigenvalues ahead of their checks
 * (svd_from_gram_run's early; not with the test hook spec_off), and where
 * one of those checks failed runs again without that (c->ssvd.early_redo
 * counts it), deciding as it goes: the outputs of a call that never read
 * ahead. */
int tn_cuda_svd_from_gram_rows(tcnla_handle_t h, int64_t n, int64_t l, int64_t k,
                               const float *W, int64_t ldw, float *Xk, float *Sk, float *VT,
                               int64_t ldvt, int trans, tn_call_t *dist, const tn_then_t *then) {
    struct tn_cuda_ctx *c = h->cuda;
    const int ahead = !dist && c->gram_ahead.valid && c->gram_ahead.W == W &&
                      c->gram_ahead.n == n && c->gram_ahead.l == l && c->gram_ahead.k == k &&
                      c->gram_ahead.ldw == ldw;
    c->gram_ahead.valid = 0;
    if (!gram_path_on(c, l, k)) return TN_GRAM_NOT_TAKEN;
    int st = svd_from_gram_run(h, n, l, k, W, ldw, Xk, Sk, VT, ldvt, trans, dist, then, ahead,
                               !c->spec_off);
    if (st == DEFL_EARLY_REDO) {
        c->ssvd.early_redo++;
        st = svd_from_gram_run(h, n, l, k, W, ldw, Xk, Sk, VT, ldvt, trans, dist, then, 0, 0);
    }
    return st;
}

int tn_cuda_syev(tcnla_handle_t h, int n, const double *G, double xr, double *X, double *lam,
                 int *fast) {
    struct tn_cuda_ctx *c = h->cuda;
    const size_t nn = (size_t)n * n;
    int lwork = 0;
    size_t ews = 0;
    c->ssvd.syev_repairs = c->ssvd.syevd_runs = c->ssvd.filled = 0;
    int st = eig_ws(c, n, &ews, &lwork);
    if (st) return st;
    double *ws = tn_cuda_workspace(c, sizeof(double) * (nn + ews) + 64);
    if (!ws) return TCNLA_ERR_ALLOC;
    double *Gc = ws, *ew = Gc + nn, *Xs;
    int *dinfo = (int *)(ew + ews);
    st = tn_cuda_err(cudaMemcpyAsync(Gc, G, sizeof(double) * nn, cudaMemcpyDeviceToDevice,
                                     c->stream));
    if (!st)
        st = eig_solve(c, n, 1, 1, Gc, &Xs, lam, dinfo, ew, lwork, TN_GRAM_NOT_TAKEN, NULL, NULL,
                       xr);
    if (st) return st;
    *fast = Xs != Gc;
    st = tn_cuda_err(cudaMemcpyAsync(X, Xs, sizeof(double) * nn, cudaMemcpyDeviceToDevice,
                                     c->stream));
    if (!st) st = tn_cuda_err(cudaStreamSynchronize(c->stream));
    return st;
}

int tn_cuda_small_svd_t(tcnla_handle_t h, int64_t l, int64_t k, const float *R, float *Uk,
                        float *Vk, float *Sk, int scale_vk) {
    return tn_cuda_small_svd_path(h, h->cuda->tune->small_svd_jacobi ? TN_SSVD_JACOBI
                                                                    : TN_SSVD_AUTO,
                                  l, k, R, Uk, Vk, Sk, scale_vk);
}

static int gesvdj_path(tcnla_handle_t h, int64_t l, int64_t k, const float *R, float *Uk,
                       float *Vk, float *Sk, int scale_vk);

int tn_cuda_small_svd_path(tcnla_handle_t h, int path, int64_t l, int64_t k, const float *R,
                           float *Uk, float *Vk, float *Sk, int scale_vk) {
    struct tn_cuda_ctx *c = h->cuda;
    c->ssvd.path = c->ssvd.sweeps = c->ssvd.jacobi_refused = c->ssvd.refusal = 0;
    c->ssvd.syev_repairs = c->ssvd.syevd_runs = c->ssvd.filled = 0;
    c->ssvd.levels = c->ssvd.defl_refused = c->ssvd.from_w = 0;
    const int kok = k >= 1 && k <= l, jac = kok && l <= TN_JSVD_MAXL;
    const int jpath = path == TN_SSVD_JACOBI || path == TN_SSVD_JACOBI_PLAIN;
    /* the deflated path: forced, or after the eigensolution's refusal */
    const int defl = kok && (path == TN_SSVD_DEFLATE ||
                             (path == TN_SSVD_AUTO && c->tune->small_svd_deflate));
    if (path == TN_SSVD_AUTO || path == TN_SSVD_DEFLATE ? kok : jpath && jac) {
        int lwork = 0;
        size_t ews = 0;
        int st = eig_ws(c, (int)l, &ews, &lwork);
        if (st) return st;
        /* one allocation for the paths (the workspace may move when it grows) */
        const size_t ne = eig_path_ws(l, ews), nj = jac && jpath ? jacobi_ws(l) : 0,
                     nd = defl ? defl_path_ws(l) : 0;
        double *ws = tn_cuda_workspace(c, sizeof(double) * (ne + nj + nd) + 64);
        if (!ws) return TCNLA_ERR_ALLOC;
        double *Rd = ws, *X = NULL, *hlam = NULL;
        int xok = 0;
        if (defl && !(hlam = malloc(sizeof(double) * (size_t)l))) return TCNLA_ERR_ALLOC;
        if (path == TN_SSVD_JACOBI_PLAIN) {
            st = tn_cuda_err((cudaError_t)tn_cu_convert(TN_CONV_F32_TO_F64, R, l, Rd, l, l, l,
                                                        NULL, c->stream));
            if (st) return st;
        } else {
            st = eig_path(h, l, k, R, Uk, Vk, Sk, scale_vk, ws, ews, lwork, path == TN_SSVD_AUTO,
                          &X, &xok, hlam);
            if (st == TCNLA_SUCCESS) c->ssvd.path = TN_SSVD_RAN_EIG;
            if (st == EIG_FALLBACK && defl && xok) {
                st = defl_path(h, l, k, Uk, Vk, Sk, scale_vk, ws, ews, lwork, X, hlam, ws + ne);
                if (st == TCNLA_SUCCESS) c->ssvd.path = TN_SSVD_RAN_DEFLATE;
                if (st == EIG_FALLBACK) c->ssvd.defl_refused = 1;
            }
            free(hlam);
            if (st != EIG_FALLBACK) return st;
        }
        /* (not by default: gesvdj measured faster wherever the eigensolution
         * refuses, bench/results/small_svd.csv) */
        if (jac && jpath) {
            st = jacobi_path(h, l, k, Rd, xok ? X : NULL, Uk, Vk, Sk, scale_vk, ws + ne);
            if (st == TCNLA_SUCCESS) c->ssvd.path = TN_SSVD_RAN_JACOBI;
            if (st != EIG_FALLBACK) return st;
            c->ssvd.jacobi_refused = 1;
        }
    }
    c->ssvd.path = TN_SSVD_RAN_GESVDJ;
    return gesvdj_path(h, l, k, R, Uk, Vk, Sk, scale_vk);
}

/* cuSOLVER's Jacobi SVD (gesvdj) of M = R^T. */
static int gesvdj_path(tcnla_handle_t h, int64_t l, int64_t k, const float *R, float *Uk,
                       float *Vk, float *Sk, int scale_vk) {
    struct tn_cuda_ctx *c = h->cuda;
    const int n = (int)l;
    gesvdjInfo_t params = NULL;
    int st = tn_cusolver_st(cusolverDnCreateGesvdjInfo(&params));
    if (st) return st;
    int lwork = 0;
    const size_t ll = (size_t)l * (size_t)l;
    /* the matrices first, for the size query; then room for gesvdj's work (the
     * workspace may move when it grows: nothing is written before that) */
    double *ws = tn_cuda_workspace(c, sizeof(double) * (4 * ll + (size_t)l) + 64);
    if (!ws) st = TCNLA_ERR_ALLOC;
    if (!st)
        st = tn_cusolver_st(cusolverDnDgesvdj_bufferSize(c->cusolver, CUSOLVER_EIG_MODE_VECTOR, 0,
                                                         n, n, ws + ll, n, ws + 4 * ll, ws + 2 * ll,
                                                         n, ws + 3 * ll, n, &lwork, params));
    if (!st) ws = tn_cuda_workspace(c, sizeof(double) * (4 * ll + (size_t)l + (size_t)lwork) + 64);
    if (!st && !ws) st = TCNLA_ERR_ALLOC;
    if (st) {
        cusolverDnDestroyGesvdjInfo(params);
        return st;
    }
    double *Rd = ws, *T = Rd + ll, *U = T + ll, *V = U + ll, *S = V + ll, *work = S + l;
    int *dinfo = (int *)(work + lwork);
    const double one = 1.0, zero = 0.0;
    st = tn_cuda_err((cudaError_t)tn_cu_convert(TN_CONV_F32_TO_F64, R, l, Rd, l, l, l, NULL,
                                                c->stream));
    if (!st) /* T = Rd^T */
        st = tn_cublas_st(cublasDgeam(c->cublas, CUBLAS_OP_T, CUBLAS_OP_N, n, n, &one, Rd, n, &zero,
                                      Rd, n, T, n));
    if (!st)
        st = tn_cusolver_st(cusolverDnDgesvdj(c->cusolver, CUSOLVER_EIG_MODE_VECTOR, 0, n, n, T, n,
                                              S, U, n, V, n, work, lwork, dinfo, params));
    if (!st && scale_vk)
        st = tn_cublas_st(cublasDdgmm(c->cublas, CUBLAS_SIDE_RIGHT, n, (int)k, V, n, S, 1, V, n));
    if (!st) st = tn_cuda_err((cudaError_t)tn_cu_epilogue_f64(1.0f, U, 0.0f, Uk, l, l, k, c->stream));
    if (!st) st = tn_cuda_err((cudaError_t)tn_cu_epilogue_f64(1.0f, V, 0.0f, Vk, l, l, k, c->stream));
    if (!st && Sk)
        st = tn_cuda_err((cudaError_t)tn_cu_epilogue_f64(1.0f, S, 0.0f, Sk, k, k, 1, c->stream));
    int info = 0;
    const tn_cuda_read_t rd = {&info, dinfo, sizeof info};
    if (!st) st = tn_cuda_read_back(c, &rd, 1);
    cusolverDnDestroyGesvdjInfo(params);
    if (!st && info != 0) st = TCNLA_ERR_NUMERICAL; /* did not converge / bad argument */
    return st;
}
