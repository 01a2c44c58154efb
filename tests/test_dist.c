/* The distributed drivers on in-process CPU ranks (shared-memory
 * communicators, one thread and one handle per rank): the same results as
 * one rank to rounding, one status on every rank where one fails, no hang. */
#include "tcnla.h"
#include "test.h"
#include "testmat/testmat.h"
#include "util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAXR TU_MAX_RANKS

typedef tu_rank_job rank_job;

static int run_ranks(int P, void (*fn)(rank_job *), void *ctx, rank_job *jobs) {
    return tu_run_ranks(TCNLA_BACKEND_CPU, P, fn, ctx, jobs);
}

/* ---------------------------------------------------------------- rsvd */
typedef struct {
    int64_t m, n, k;
    const float *A; /* m x n, column-major, ld m */
    tcnla_rsvd_opts_t o;
    float *U;       /* m x k (assembled from the ranks' rows) */
    float *S[MAXR]; /* k each */
    float *VT[MAXR];
    int bad_rank, bad_kind; /* a planted failure (bad_rank < 0: none) */
} rsvd_ctx;

static void rsvd_rank(rank_job *j) {
    rsvd_ctx *c = j->ctx;
    int64_t r0, mr;
    tcnla_dist_rows(c->m, j->nranks, j->rank, &r0, &mr);
    float *A = tu_rows_of(c->A, c->m, c->n, r0, mr), *U = malloc(sizeof(float) * mr * c->k);
    tcnla_rsvd_opts_t o = c->o;
    int64_t lda = mr;
    const float *Ap = A;
    if (j->rank == c->bad_rank) {
        if (c->bad_kind == 0) lda = mr - 1;         /* a bad argument */
        else if (c->bad_kind == 1) o.seed += 1;     /* options unlike the others' */
        else if (c->bad_kind == 2) A[mr / 2] = NAN; /* a bad block */
        else if (c->bad_kind == 3) Ap = NULL;
        else if (c->bad_kind == 4) o.pass_efficient = 1; /* options unlike the others' */
    }
    j->status = tcnla_dist_rsvd(j->comm, &o, mr, c->n, Ap, lda, U, mr, c->S[j->rank],
                                c->VT[j->rank], c->k);
    if (j->status == 0) tu_put_rows(c->U, c->m, c->k, r0, mr, U);
    free(A), free(U);
}

static double residual(const float *A, int64_t m, int64_t n, int64_t k, const float *U,
                       const float *S, const float *VT) {
    double num = 0, den = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double a = A[i + j * m], s = 0;
            for (int64_t p = 0; p < k; p++) s += (double)U[i + p * m] * S[p] * VT[p + j * k];
            num += (a - s) * (a - s), den += a * a;
        }
    return sqrt(num / den);
}

/* A (m x n) with singular values sig (r of them; zero beyond) */
static float *spectrum_matrix(int64_t m, int64_t n, int64_t r, const double *sig, uint64_t seed) {
    float *A = malloc(sizeof(float) * m * n);
    if (tn_testmat_svd_fast(m, n, r, sig, seed, A, m) != 0) {
        free(A);
        return NULL;
    }
    return A;
}

/* The defaults (SHGEMM_FP16 projection, TCEC_FP16 products, the power
 * iterations' precision from the data), the FP32 pipeline and the defaults
 * with pass_efficient (U from Y's rows on each rank, VT from the whole Z
 * on every rank), on 1, 2 and 3 ranks, against tcnla_rsvd on one handle: one rank gives its bits, more
 * ranks (another order of the sums over rows) its residual to 1e-6
 * relative and its singular values to FP32's rounding of the largest,
 * |dS_i| <= 2^-24 S_1 (measured: 4.2e-7, and 2.98e-8 S_1, half an ulp of S_1; relative to S_i
 * itself up to 4.9e-6, at S_12 = 2^-11 S_1). */
TEST(dist_rsvd_matches_single_rank) {
    const int64_t m = 240, n = 160, k = 12, r = 60;
    double sig[60];
    for (int i = 0; i < r; i++) sig[i] = pow(0.5, i); /* residual about 2^-12 */
    float *A = spectrum_matrix(m, n, r, sig, 77);
    REQUIRE(A);
    for (int variant = 0; variant < 3; variant++) {
        tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
        o.rank = k;
        o.oversampling = 8;
        o.pass_efficient = variant == 2;
        if (variant == 1) {
            o.proj_method = o.gemm_method = TCNLA_GEMM_NATIVE_FP32;
            o.random_format = TCNLA_FMT_FP32;
            o.orth = TCNLA_ORTH_CHOLQR2_FP64;
        }
        tcnla_handle_t h;
        REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
        float *U1 = malloc(sizeof(float) * m * k), *VT1 = malloc(sizeof(float) * k * n), S1[12];
        REQUIRE(tcnla_rsvd(h, &o, m, n, A, m, U1, m, S1, VT1, k) == 0);
        tcnla_destroy(h);
        const double res1 = residual(A, m, n, k, U1, S1, VT1);
        for (int P = 1; P <= 3; P++) {
            rsvd_ctx c = {.m = m, .n = n, .k = k, .A = A, .o = o, .bad_rank = -1};
            c.U = calloc(m * k, sizeof(float));
            for (int q = 0; q < P; q++) {
                c.S[q] = malloc(sizeof(float) * k);
                c.VT[q] = malloc(sizeof(float) * k * n);
            }
            rank_job jobs[MAXR];
            REQUIRE(run_ranks(P, rsvd_rank, &c, jobs) == 0);
            for (int q = 0; q < P; q++) CHECK_EQ_INT(jobs[q].status, 0);
            if (jobs[0].status == 0) {
                const double res = residual(A, m, n, k, c.U, c.S[0], c.VT[0]);
                double dsv = 0, dsr = 0;
                for (int i = 0; i < k; i++) {
                    dsv = fmax(dsv, fabs(c.S[0][i] - S1[i]) / S1[0]);
                    dsr = fmax(dsr, fabs(c.S[0][i] / S1[i] - 1));
                }
                printf("    %s, %d rank(s): residual %.9e (one handle %.9e, rel. diff %.2e), "
                       "max |dS_i| %.2e S_1 (%.2e S_i)\n",
                       variant == 2 ? "pass-efficient" : variant ? "FP32 pipeline" : "defaults",
                       P, res, res1,
                       fabs(res / res1 - 1), dsv, dsr);
                if (P == 1) {
                    CHECK(memcmp(c.S[0], S1, sizeof S1) == 0);
                    CHECK(memcmp(c.U, U1, sizeof(float) * m * k) == 0);
                    CHECK(memcmp(c.VT[0], VT1, sizeof(float) * k * n) == 0);
                }
                CHECK_MSG(fabs(res / res1 - 1) <= 1e-6, "P=%d: residual %.9e vs %.9e", P, res,
                          res1);
                CHECK_MSG(dsv <= 0x1p-24, "P=%d: singular values off by %.3e S_1", P, dsv);
                /* S and VT the same bits on every rank */
                for (int q = 1; q < P; q++) {
                    CHECK(memcmp(c.S[q], c.S[0], sizeof(float) * k) == 0);
                    CHECK(memcmp(c.VT[q], c.VT[0], sizeof(float) * k * n) == 0);
                }
            }
            for (int q = 0; q < P; q++) free(c.S[q]), free(c.VT[q]);
            free(c.U);
        }
        free(U1), free(VT1);
    }
    free(A);
}

/* A rank with fewer rows than l = k + p (m = 45 on 3 ranks, l = 20): the
 * Gram matrices' sum still makes Q, the residual that of one handle; with
 * pass_efficient too (the last step's QR of Y on 15 rows per rank). */
TEST(dist_rsvd_ranks_with_fewer_rows_than_l) {
    const int64_t m = 45, n = 40, k = 8, r = 30;
    double sig[30];
    for (int i = 0; i < r; i++) sig[i] = pow(0.7, i);
    float *A = spectrum_matrix(m, n, r, sig, 5);
    REQUIRE(A);
    for (int pe = 0; pe < 2; pe++) {
        tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
        o.rank = k;
        o.oversampling = 12;
        o.pass_efficient = pe;
        tcnla_handle_t h;
        REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
        float U1[45 * 8], VT1[8 * 40], S1[8];
        REQUIRE(tcnla_rsvd(h, &o, m, n, A, m, U1, m, S1, VT1, k) == 0);
        tcnla_destroy(h);
        rsvd_ctx c = {.m = m, .n = n, .k = k, .A = A, .o = o, .bad_rank = -1};
        c.U = calloc(m * k, sizeof(float));
        for (int q = 0; q < 3; q++)
            c.S[q] = malloc(sizeof(float) * k), c.VT[q] = malloc(4 * k * n);
        rank_job jobs[MAXR];
        REQUIRE(run_ranks(3, rsvd_rank, &c, jobs) == 0);
        for (int q = 0; q < 3; q++) CHECK_EQ_INT(jobs[q].status, 0);
        if (jobs[0].status == 0) {
            const double res = residual(A, m, n, k, c.U, c.S[0], c.VT[0]),
                         res1 = residual(A, m, n, k, U1, S1, VT1);
            printf("    %s: residual %.9e (one handle %.9e)\n", pe ? "pass-efficient" : "defaults",
                   res, res1);
            CHECK_MSG(fabs(res / res1 - 1) <= 1e-6, "residual %.9e vs %.9e", res, res1);
        }
        for (int q = 0; q < 3; q++) free(c.S[q]), free(c.VT[q]);
        free(c.U);
    }
    free(A);
}

/* A failing rank makes every rank return the same status, and none hangs:
 * a bad leading dimension (-6), options unlike the others' (TCNLA_ERR_COMM:
 * another seed, or pass_efficient on one rank only), a NaN in one block
 * (the status one handle gives for that matrix), A NULL on one rank (-5);
 * each planted on the last rank and on rank 0. */
TEST(dist_rsvd_failing_rank_same_status_everywhere) {
    const int64_t m = 90, n = 60, k = 6, r = 30;
    double sig[30];
    for (int i = 0; i < r; i++) sig[i] = pow(0.8, i);
    float *A = spectrum_matrix(m, n, r, sig, 9);
    REQUIRE(A);
    tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
    o.rank = k;
    /* the status of one handle on A with the NaN */
    float *An = malloc(sizeof(float) * m * n);
    memcpy(An, A, sizeof(float) * m * n);
    int64_t r0, mr;
    tcnla_dist_rows(m, 3, 2, &r0, &mr);
    An[r0 + mr / 2] = NAN;
    tcnla_handle_t h;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    float U1[90 * 6], VT1[6 * 60], S1[6];
    const int st_nan = tcnla_rsvd(h, &o, m, n, An, m, U1, m, S1, VT1, k);
    tcnla_destroy(h);
    CHECK(st_nan != 0);
    const int expect[5] = {-6, TCNLA_ERR_COMM, st_nan, -5, TCNLA_ERR_COMM};
    for (int kind = 0; kind < 5; kind++)
        for (int who = 0; who < 2; who++) {
            rsvd_ctx c = {.m = m, .n = n, .k = k, .A = A, .o = o};
            c.bad_rank = who ? 0 : 2, c.bad_kind = kind;
            c.U = calloc(m * k, sizeof(float));
            for (int q = 0; q < 3; q++) c.S[q] = malloc(4 * k), c.VT[q] = malloc(4 * k * n);
            rank_job jobs[MAXR];
            REQUIRE(run_ranks(3, rsvd_rank, &c, jobs) == 0);
            for (int q = 0; q < 3; q++)
                CHECK_MSG(jobs[q].status == expect[kind],
                          "failure %d on rank %d: rank %d returned %d (%s), expected %d", kind,
                          c.bad_rank, q, jobs[q].status, tcnla_strerror(jobs[q].status),
                          expect[kind]);
            for (int q = 0; q < 3; q++) free(c.S[q]), free(c.VT[q]);
            free(c.U);
        }
    free(A), free(An);
}

/* ------------------------------------------------------------------ lra */
typedef struct {
    int64_t m, n, r;
    const float *A;
    tcnla_lra_opts_t o;
    float *X;       /* m x r assembled */
    float *Y[MAXR]; /* n x r each */
} lra_ctx;

static void lra_rank(rank_job *j) {
    lra_ctx *c = j->ctx;
    int64_t r0, mr;
    tcnla_dist_rows(c->m, j->nranks, j->rank, &r0, &mr);
    float *A = tu_rows_of(c->A, c->m, c->n, r0, mr), *X = malloc(sizeof(float) * mr * c->r);
    j->status = tcnla_dist_lra(j->comm, &c->o, mr, c->n, A, mr, X, mr, c->Y[j->rank], c->n);
    if (j->status == 0) tu_put_rows(c->X, c->m, c->r, r0, mr, X);
    free(A), free(X);
}

static double lra_residual(const float *A, int64_t m, int64_t n, int64_t r, const float *X,
                           const float *Y) {
    double num = 0, den = 0;
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double a = A[i + j * m], s = 0;
            for (int64_t p = 0; p < r; p++) s += (double)X[i + p * m] * Y[j + p * n];
            num += (a - s) * (a - s), den += a * a;
        }
    return sqrt(num / den);
}

/* randLRA on 1, 2 and 3 ranks against one handle (one rank: its bits).
 * With FP32 factors (tgemm NONE, TCEC_FP16 products, refined) the residual
 * agrees to 1e-6 relative. The 16|32 (default, refined) and 32|32 variants
 * store the factors in FP16: the ranks' other order of summing A^T Q can
 * flip the FP16 rounding of a few factor entries (each by 2^-11), so their
 * residual agrees to a tenth of 2^-11, 4.9e-5 (measured over six matrices:
 * at most 2.6e-5). Recompression is not offered distributed. */
TEST(dist_lra_matches_single_rank) {
    const int64_t m = 200, n = 120, k = 8;
    double sig[60];
    for (int i = 0; i < 60; i++) sig[i] = pow(0.85, i);
    float *A = spectrum_matrix(m, n, 60, sig, 31);
    REQUIRE(A);
    for (int variant = 0; variant < 3; variant++) {
        tcnla_lra_opts_t o = tcnla_lra_opts_default();
        o.rank = k;
        if (variant == 1) o.tgemm = TCNLA_TGEMM_32_32, o.refine = 0;
        if (variant == 2) o.tgemm = TCNLA_TGEMM_NONE, o.gemm_method = TCNLA_GEMM_TCEC_FP16;
        const double tol = variant == 2 ? 1e-6 : 0.1 * 0x1p-11;
        const int64_t r = tcnla_lra_out_rank(&o);
        tcnla_handle_t h;
        REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
        float *X1 = malloc(sizeof(float) * m * r), *Y1 = malloc(sizeof(float) * n * r);
        REQUIRE(tcnla_lra(h, &o, m, n, A, m, X1, m, Y1, n) == 0);
        tcnla_destroy(h);
        const double res1 = lra_residual(A, m, n, r, X1, Y1);
        for (int P = 1; P <= 3; P++) {
            lra_ctx c = {.m = m, .n = n, .r = r, .A = A, .o = o};
            c.X = calloc(m * r, sizeof(float));
            for (int q = 0; q < P; q++) c.Y[q] = malloc(sizeof(float) * n * r);
            rank_job jobs[MAXR];
            REQUIRE(run_ranks(P, lra_rank, &c, jobs) == 0);
            for (int q = 0; q < P; q++) CHECK_EQ_INT(jobs[q].status, 0);
            if (jobs[0].status == 0) {
                const double res = lra_residual(A, m, n, r, c.X, c.Y[0]);
                static const char *const names[3] = {"16|32 refined", "32|32",
                                                     "TCEC_FP16 refined"};
                printf("    %s, %d rank(s): residual %.9e (one handle %.9e, rel. diff %.2e)\n",
                       names[variant], P, res, res1, fabs(res / res1 - 1));
                if (P == 1) {
                    CHECK(memcmp(c.X, X1, sizeof(float) * m * r) == 0);
                    CHECK(memcmp(c.Y[0], Y1, sizeof(float) * n * r) == 0);
                }
                CHECK_MSG(fabs(res / res1 - 1) <= tol, "P=%d: %.9e vs %.9e", P, res, res1);
                for (int q = 1; q < P; q++)
                    CHECK(memcmp(c.Y[q], c.Y[0], sizeof(float) * n * r) == 0);
            }
            for (int q = 0; q < P; q++) free(c.Y[q]);
            free(c.X);
        }
        free(X1), free(Y1);
    }
    /* recompression: TCNLA_ERR_NOT_SUPPORTED on every rank */
    lra_ctx c = {.m = m, .n = n, .r = k, .A = A, .o = tcnla_lra_opts_default()};
    c.o.rank = k, c.o.recompress = 1;
    c.X = calloc(m * 3 * k, sizeof(float));
    for (int q = 0; q < 2; q++) c.Y[q] = malloc(sizeof(float) * n * 3 * k);
    rank_job jobs[MAXR];
    REQUIRE(run_ranks(2, lra_rank, &c, jobs) == 0);
    for (int q = 0; q < 2; q++) CHECK_EQ_INT(jobs[q].status, TCNLA_ERR_NOT_SUPPORTED);
    for (int q = 0; q < 2; q++) free(c.Y[q]);
    free(c.X), free(A);
}

/* --------------------------------------------------------- orthonormalize */
typedef struct {
    int64_t m, n;
    const float *Y0; /* m x n */
    float *Q;        /* m x n assembled */
    float *R[MAXR];
    tcnla_orth_t method, used[MAXR];
} orth_ctx;

static void orth_rank(rank_job *j) {
    orth_ctx *c = j->ctx;
    int64_t r0, mr;
    tcnla_dist_rows(c->m, j->nranks, j->rank, &r0, &mr);
    float *Y = tu_rows_of(c->Y0, c->m, c->n, r0, mr);
    j->status = tcnla_dist_orthonormalize(j->comm, c->method, TCNLA_BREAKDOWN_RETRY, mr, c->n, Y,
                                          mr, c->R[j->rank], c->n, &c->used[j->rank]);
    if (j->status == 0) tu_put_rows(c->Q, c->m, c->n, r0, mr, Y);
    free(Y);
}

/* Q^T Q = I and Q R = Y to FP32's rounding on 3 ranks, for a well
 * conditioned Y (CholeskyQR in FP64) and one of kappa 1e7 whose loss guard
 * sends one pass on to CholeskyQR2 (as on one handle); R the same bits on
 * every rank. Householder: TCNLA_ERR_NOT_SUPPORTED everywhere. */
TEST(dist_orthonormalize_q_orthonormal_qr_equals_y) {
    const int64_t m = 150, n = 20;
    for (int cond = 0; cond < 2; cond++) {
        double sig[20];
        for (int i = 0; i < n; i++) sig[i] = pow(cond ? 1e-7 : 0.5, (double)i / (n - 1));
        float *Y0 = spectrum_matrix(m, n, n, sig, 3 + cond);
        REQUIRE(Y0);
        orth_ctx c = {.m = m, .n = n, .Y0 = Y0, .method = TCNLA_ORTH_CHOLQR_FP64};
        c.Q = calloc(m * n, sizeof(float));
        for (int q = 0; q < 3; q++) c.R[q] = malloc(sizeof(float) * n * n);
        rank_job jobs[MAXR];
        REQUIRE(run_ranks(3, orth_rank, &c, jobs) == 0);
        for (int q = 0; q < 3; q++) CHECK_EQ_INT(jobs[q].status, 0);
        if (jobs[0].status == 0) {
            double orth = 0, qr = 0, ynorm = 0;
            for (int64_t a = 0; a < n; a++)
                for (int64_t b = 0; b < n; b++) {
                    double s = 0;
                    for (int64_t i = 0; i < m; i++) s += (double)c.Q[i + a * m] * c.Q[i + b * m];
                    orth = fmax(orth, fabs(s - (a == b)));
                }
            for (int64_t b = 0; b < n; b++)
                for (int64_t i = 0; i < m; i++) {
                    double s = 0;
                    for (int64_t a = 0; a <= b; a++) s += (double)c.Q[i + a * m] * c.R[0][a + b * n];
                    qr = fmax(qr, fabs(s - Y0[i + b * m]));
                    ynorm = fmax(ynorm, fabs(Y0[i + b * m]));
                }
            printf("    kappa %.0e: |Q^T Q - I| %.2e, |QR - Y| / |Y| %.2e, method %d\n",
                   cond ? 1e7 : 2.0, orth, qr / ynorm, (int)c.used[0]);
            CHECK(orth <= 1e-6);
            CHECK(qr <= 1e-6 * ynorm);
            CHECK_EQ_INT(c.used[0], cond ? TCNLA_ORTH_CHOLQR2_FP64 : TCNLA_ORTH_CHOLQR_FP64);
            for (int q = 1; q < 3; q++) {
                CHECK(memcmp(c.R[q], c.R[0], sizeof(float) * n * n) == 0);
                CHECK_EQ_INT(c.used[q], c.used[0]);
            }
        }
        c.method = TCNLA_ORTH_HOUSEHOLDER;
        REQUIRE(run_ranks(2, orth_rank, &c, jobs) == 0);
        for (int q = 0; q < 2; q++) CHECK_EQ_INT(jobs[q].status, TCNLA_ERR_NOT_SUPPORTED);
        for (int q = 0; q < 3; q++) free(c.R[q]);
        free(c.Q), free(Y0);
    }
}

/* ------------------------------------------------- small pieces, bad input */
static void sum_rank(rank_job *j) {
    double x[3] = {j->rank + 1.0, 0.5, -1.0 * j->rank};
    j->status = tcnla_comm_sum_host(j->comm, x, 3);
    if (!j->status && !(x[0] == j->nranks * (j->nranks + 1) / 2.0 && x[1] == 0.5 * j->nranks &&
                        x[2] == -(j->nranks * (j->nranks - 1) / 2.0)))
        j->status = -999;
    int size = 0, rank = -1;
    tcnla_comm_size(j->comm, &size);
    tcnla_comm_rank(j->comm, &rank);
    if (size != j->nranks || rank != j->rank) j->status = -998;
}

TEST(dist_comm_sums_rows_and_bad_arguments) {
    rank_job jobs[MAXR];
    for (int P = 1; P <= 4; P++) {
        REQUIRE(run_ranks(P, sum_rank, NULL, jobs) == 0);
        for (int q = 0; q < P; q++) CHECK_EQ_INT(jobs[q].status, 0);
    }
    /* the usual split: 10 rows on 4 ranks: 3 3 2 2 */
    int64_t r0, n;
    const int64_t want[4][2] = {{0, 3}, {3, 3}, {6, 2}, {8, 2}};
    for (int r = 0; r < 4; r++) {
        CHECK(tcnla_dist_rows(10, 4, r, &r0, &n) == 0);
        CHECK(r0 == want[r][0] && n == want[r][1]);
    }
    CHECK_EQ_INT(tcnla_dist_rows(3, 4, 0, &r0, &n), -1);
    CHECK_EQ_INT(tcnla_dist_rows(10, 0, 0, &r0, &n), -2);
    CHECK_EQ_INT(tcnla_dist_rows(10, 4, 4, &r0, &n), -3);
    CHECK_EQ_INT(tcnla_dist_rows(10, 4, 0, NULL, &n), -4);
    /* communicators */
    tcnla_handle_t h[2];
    tcnla_comm_t cs[2];
    REQUIRE(tcnla_create(&h[0], TCNLA_BACKEND_CPU) == 0);
    REQUIRE(tcnla_create(&h[1], TCNLA_BACKEND_CPU) == 0);
    CHECK_EQ_INT(tcnla_comm_create_local(NULL, h, 2), -1);
    CHECK_EQ_INT(tcnla_comm_create_local(cs, NULL, 2), -2);
    CHECK_EQ_INT(tcnla_comm_create_local(cs, h, 0), -3);
    tcnla_handle_t twice[2] = {h[0], h[0]};
    CHECK_EQ_INT(tcnla_comm_create_local(cs, twice, 2), -2);
    CHECK(cs[0] == NULL);
    unsigned char id[TCNLA_COMM_ID_BYTES] = {0};
    tcnla_comm_t c1 = NULL;
    CHECK_EQ_INT(tcnla_comm_init_rank(&c1, h[0], 2, 0, id), TCNLA_ERR_NOT_SUPPORTED);
    CHECK_EQ_INT(tcnla_comm_init_rank(&c1, h[0], 2, 2, id), -4);
    CHECK_EQ_INT(tcnla_comm_from_nccl(&c1, h[0], NULL), -3);
    CHECK_EQ_INT(tcnla_comm_sum_host(NULL, NULL, 0), -1);
    CHECK_EQ_INT(tcnla_comm_destroy(NULL), 0);
    /* drivers with a NULL communicator */
    tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
    CHECK_EQ_INT(tcnla_dist_rsvd(NULL, &o, 1, 1, NULL, 1, NULL, 1, NULL, NULL, 1), -1);
    CHECK_EQ_INT(tcnla_dist_lra(NULL, NULL, 1, 1, NULL, 1, NULL, 1, NULL, 1), -1);
    tcnla_destroy(h[0]), tcnla_destroy(h[1]);
}

/* tcnla_lowrank_residual against the host's FP64 sum (n over two slabs) */
TEST(lowrank_residual_matches_host_sum) {
    const int64_t m = 70, n = 1300, k = 5;
    float *A = malloc(sizeof(float) * m * n), *U = malloc(sizeof(float) * m * k);
    float *VT = malloc(sizeof(float) * k * n), S[5] = {3, 2, 1, 0.5f, 0.25f};
    tcnla_rand_uniform(1, 0, -1, 1, m * n, A);
    tcnla_rand_uniform(1, 1, -1, 1, m * k, U);
    tcnla_rand_uniform(1, 2, -1, 1, k * n, VT);
    tcnla_handle_t h;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == 0);
    double d2 = -1, a2 = -1, e2 = 0, f2 = 0;
    REQUIRE(tcnla_lowrank_residual(h, m, n, k, A, m, U, m, S, VT, k, &d2, &a2) == 0);
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) {
            double s = 0;
            for (int p = 0; p < k; p++) s += (double)U[i + p * m] * S[p] * VT[p + j * k];
            e2 += (A[i + j * m] - s) * (A[i + j * m] - s), f2 += (double)A[i + j * m] * A[i + j * m];
        }
    CHECK_MSG(fabs(d2 / e2 - 1) <= 1e-6, "%.9e vs %.9e", d2, e2);
    CHECK_MSG(fabs(a2 / f2 - 1) <= 1e-12, "%.15e vs %.15e", a2, f2);
    CHECK_EQ_INT(tcnla_lowrank_residual(h, m, n, k, A, m - 1, U, m, S, VT, k, &d2, &a2), -6);
    CHECK_EQ_INT(tcnla_lowrank_residual(h, m, n, k, A, m, U, m, S, VT, k, NULL, &a2), -12);
    CHECK_EQ_INT(tcnla_lowrank_residual(h, m, n, k, A, m, U, m, S, VT, k, &d2, NULL), -13);
    tcnla_destroy(h);
    free(A), free(U), free(VT);
}
