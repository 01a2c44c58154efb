/* The distributed drivers on CUDA handles over NCCL, one thread per GPU
 * (tcnla_comm_create_local): one GPU gives tcnla_rsvd's bits, two GPUs its
 * residual to 1e-6 relative; a failing rank gives the same status on every
 * rank. Skipped without NCCL; the two-GPU cases without a second GPU. */
#include "tcnla.h"
#include "../test.h"
#include "testmat/testmat.h"
#include "../util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int gpus(void) {
    int compiled = 0, count = 0;
    tcnla_cuda_available(&compiled, &count);
    return compiled ? count : 0;
}

/* NCCL usable here: a one-rank communicator on device 0 */
static int have_nccl(void) {
    tcnla_handle_t h;
    if (tcnla_create_on_device(&h, TCNLA_BACKEND_CUDA, 0) != 0) return 0;
    tcnla_comm_t c = NULL;
    const int st = tcnla_comm_create_local(&c, &h, 1);
    tcnla_comm_destroy(c);
    tcnla_destroy(h);
    return st == 0;
}

#define NEED_NCCL()                                                                            \
    do {                                                                                       \
        if (gpus() < 1) SKIP("no CUDA device");                                                \
        if (!have_nccl()) SKIP("NCCL not found (libnccl.so.2, $TCNLA_NCCL_LIBRARY)");          \
    } while (0)

typedef struct {
    int64_t m, n, k, r; /* r: columns of the factor (rsvd: k) */
    const float *A;     /* host, m x n */
    int lra;            /* 0: rsvd, 1: lra */
    tcnla_rsvd_opts_t ro;
    tcnla_lra_opts_t lo;
    int bad_rank, bad_kind;
    double diff2, a2;            /* the residual's sums over the ranks (rank 0's) */
    float *U;                    /* host, m x r, assembled */
    float *S[TU_MAX_RANKS];      /* rsvd: k */
    float *V[TU_MAX_RANKS];      /* rsvd: VT k x n; lra: Y n x r */
} job_ctx;

/* One rank: its rows to its GPU, the driver, the residual's sums there and
 * over the ranks (tcnla_lowrank_residual, tcnla_comm_sum_host), results back */
static void rank_fn(tu_rank_job *j) {
    job_ctx *c = j->ctx;
    tcnla_handle_t h = j->h;
    int64_t r0, mr;
    tcnla_dist_rows(c->m, j->nranks, j->rank, &r0, &mr);
    const int64_t vn = c->lra ? c->n * c->r : c->k * c->n;
    float *hA = tu_rows_of(c->A, c->m, c->n, r0, mr), *hU = malloc(sizeof(float) * mr * c->r);
    float *dA = NULL, *dU = NULL, *dS = NULL, *dV = NULL;
    if (j->rank == c->bad_rank && c->bad_kind == 1) hA[mr / 3] = NAN;
    int st = tcnla_malloc(h, (void **)&dA, sizeof(float) * mr * c->n);
    if (!st) st = tcnla_malloc(h, (void **)&dU, sizeof(float) * mr * c->r);
    if (!st) st = tcnla_malloc(h, (void **)&dS, sizeof(float) * c->k);
    if (!st) st = tcnla_malloc(h, (void **)&dV, sizeof(float) * vn);
    if (!st) st = tcnla_memcpy(h, dA, hA, sizeof(float) * mr * c->n, TCNLA_MEMCPY_HOST_TO_HANDLE);
    const int64_t lda = j->rank == c->bad_rank && c->bad_kind == 0 ? mr - 1 : mr;
    if (st) { /* (a setup failure: a test failure, reported by the status) */
        j->status = st;
        return;
    }
    j->status = c->lra ? tcnla_dist_lra(j->comm, &c->lo, mr, c->n, dA, lda, dU, mr, dV, c->n)
                       : tcnla_dist_rsvd(j->comm, &c->ro, mr, c->n, dA, lda, dU, mr, dS, dV,
                                         c->k);
    if (j->status == 0 && !c->lra) {
        double v[2] = {0, 0};
        int e = tcnla_lowrank_residual(h, mr, c->n, c->k, dA, mr, dU, mr, dS, dV, c->k, &v[0],
                                       &v[1]);
        if (!e) e = tcnla_comm_sum_host(j->comm, v, 2);
        if (!e && j->rank == 0) c->diff2 = v[0], c->a2 = v[1];
        if (e) j->status = e;
    }
    if (j->status == 0) {
        tcnla_memcpy(h, hU, dU, sizeof(float) * mr * c->r, TCNLA_MEMCPY_HANDLE_TO_HOST);
        tu_put_rows(c->U, c->m, c->r, r0, mr, hU);
        if (!c->lra)
            tcnla_memcpy(h, c->S[j->rank], dS, sizeof(float) * c->k, TCNLA_MEMCPY_HANDLE_TO_HOST);
        tcnla_memcpy(h, c->V[j->rank], dV, sizeof(float) * vn, TCNLA_MEMCPY_HANDLE_TO_HOST);
    }
    tcnla_free(h, dA), tcnla_free(h, dU), tcnla_free(h, dS), tcnla_free(h, dV);
    free(hA), free(hU);
}

static double host_residual(const job_ctx *c, const float *U, const float *S, const float *V) {
    double num = 0, den = 0;
    for (int64_t j = 0; j < c->n; j++)
        for (int64_t i = 0; i < c->m; i++) {
            double s = 0;
            for (int64_t p = 0; p < c->r; p++)
                s += c->lra ? (double)U[i + p * c->m] * V[j + p * c->n]
                            : (double)U[i + p * c->m] * S[p] * V[p + j * c->k];
            const double a = c->A[i + j * c->m];
            num += (a - s) * (a - s), den += a * a;
        }
    return sqrt(num / den);
}

/* One GPU handle's result for the same options (U, S, V host) */
static int single_gpu(const job_ctx *c, float *U, float *S, float *V) {
    tcnla_handle_t h;
    if (tcnla_create_on_device(&h, TCNLA_BACKEND_CUDA, 0) != 0) return -1;
    const int64_t vn = c->lra ? c->n * c->r : c->k * c->n;
    float *dA, *dU, *dS, *dV;
    tcnla_malloc(h, (void **)&dA, sizeof(float) * c->m * c->n);
    tcnla_malloc(h, (void **)&dU, sizeof(float) * c->m * c->r);
    tcnla_malloc(h, (void **)&dS, sizeof(float) * c->k);
    tcnla_malloc(h, (void **)&dV, sizeof(float) * vn);
    tcnla_memcpy(h, dA, c->A, sizeof(float) * c->m * c->n, TCNLA_MEMCPY_HOST_TO_HANDLE);
    int st = c->lra ? tcnla_lra(h, &c->lo, c->m, c->n, dA, c->m, dU, c->m, dV, c->n)
                    : tcnla_rsvd(h, &c->ro, c->m, c->n, dA, c->m, dU, c->m, dS, dV, c->k);
    if (!st) st = tcnla_memcpy(h, U, dU, sizeof(float) * c->m * c->r, TCNLA_MEMCPY_HANDLE_TO_HOST);
    if (!st && !c->lra)
        st = tcnla_memcpy(h, S, dS, sizeof(float) * c->k, TCNLA_MEMCPY_HANDLE_TO_HOST);
    if (!st) st = tcnla_memcpy(h, V, dV, sizeof(float) * vn, TCNLA_MEMCPY_HANDLE_TO_HOST);
    tcnla_destroy(h);
    return st;
}

static float *test_matrix(int64_t m, int64_t n, int64_t r, double decay, uint64_t seed) {
    double *sig = malloc(sizeof(double) * r);
    for (int64_t i = 0; i < r; i++) sig[i] = pow(decay, (double)i);
    float *A = malloc(sizeof(float) * m * n);
    if (tn_testmat_svd_fast(m, n, r, sig, seed, A, m) != 0) free(A), A = NULL;
    free(sig);
    return A;
}

/* Runs c on 1 and (where there are two GPUs) 2 ranks against one handle:
 * one rank bitwise, two to tol in the residual and (rsvd) 2^-24 S_1 in S */
static void compare(job_ctx *c, double tol, const char *name) {
    const int64_t vn = c->lra ? c->n * c->r : c->k * c->n;
    float *U1 = malloc(sizeof(float) * c->m * c->r), *V1 = malloc(sizeof(float) * vn);
    float S1[512];
    REQUIRE(single_gpu(c, U1, S1, V1) == 0);
    const double res1 = host_residual(c, U1, S1, V1);
    const int maxp = gpus() >= 2 ? 2 : 1;
    for (int P = 1; P <= maxp; P++) {
        tu_rank_job jobs[TU_MAX_RANKS];
        c->U = calloc(c->m * c->r, sizeof(float));
        for (int q = 0; q < P; q++) c->S[q] = malloc(sizeof(float) * c->k), c->V[q] = malloc(4 * vn);
        c->bad_rank = -1;
        REQUIRE(tu_run_ranks(TCNLA_BACKEND_CUDA, P, rank_fn, c, jobs) == 0);
        for (int q = 0; q < P; q++) CHECK_EQ_INT(jobs[q].status, 0);
        if (jobs[0].status == 0) {
            const double res = host_residual(c, c->U, c->S[0], c->V[0]);
            double ds = 0;
            for (int i = 0; i < c->k && !c->lra; i++)
                ds = fmax(ds, fabs(c->S[0][i] - S1[i]) / S1[0]);
            printf("    %s, %d GPU(s): residual %.9e (one handle %.9e, rel. diff %.2e)%s", name, P,
                   res, res1, fabs(res / res1 - 1), c->lra ? "\n" : "");
            if (!c->lra)
                printf(", max |dS_i| %.2e S_1, tcnla_lowrank_residual %.9e\n", ds,
                       sqrt(c->diff2 / c->a2));
            if (P == 1) {
                CHECK(memcmp(c->U, U1, sizeof(float) * c->m * c->r) == 0);
                CHECK(memcmp(c->V[0], V1, sizeof(float) * vn) == 0);
            }
            CHECK_MSG(fabs(res / res1 - 1) <= tol, "%s P=%d: %.9e vs %.9e", name, P, res, res1);
            if (!c->lra) {
                CHECK_MSG(ds <= 0x1p-24, "%s P=%d: S off by %.3e S_1", name, P, ds);
                CHECK(fabs(sqrt(c->diff2 / c->a2) / res - 1) <= 1e-3);
            }
            for (int q = 1; q < P; q++) CHECK(memcmp(c->V[q], c->V[0], sizeof(float) * vn) == 0);
        }
        for (int q = 0; q < P; q++) free(c->S[q]), free(c->V[q]);
        free(c->U);
    }
    free(U1), free(V1);
}

/* an rsvd job of rank k on A (m x n) with the default options */
static job_ctx rsvd_job(int64_t m, int64_t n, int64_t k, const float *A) {
    job_ctx c;
    memset(&c, 0, sizeof c);
    c.m = m, c.n = n, c.k = k, c.r = k, c.A = A;
    c.ro = tcnla_rsvd_opts_default();
    c.ro.rank = k;
    return c;
}

TEST(gpu_dist_rsvd_matches_single_gpu) {
    NEED_NCCL();
    const int64_t m = 6000, n = 3000, k = 64, r = 400;
    float *A = test_matrix(m, n, r, 0.9, 17); /* residual about 1e-3 */
    REQUIRE(A);
    job_ctx c = rsvd_job(m, n, k, A);
    compare(&c, 1e-6, "rsvd defaults");
    c.ro.power_method = TCNLA_GEMM_TCEC_FP16;
    compare(&c, 1e-6, "rsvd TCEC power iterations");
    free(A);
}

TEST(gpu_dist_lra_matches_single_gpu) {
    NEED_NCCL();
    const int64_t m = 5000, n = 2500, k = 32, r = 300;
    float *A = test_matrix(m, n, r, 0.95, 23);
    REQUIRE(A);
    job_ctx c;
    memset(&c, 0, sizeof c);
    c.m = m, c.n = n, c.k = k, c.A = A, c.lra = 1;
    c.lo = tcnla_lra_opts_default();
    c.lo.rank = k;
    c.r = tcnla_lra_out_rank(&c.lo);
    compare(&c, 0.1 * 0x1p-11, "lra 16|32 refined"); /* FP16 factors (see tests/test_dist.c) */
    c.lo.tgemm = TCNLA_TGEMM_NONE, c.lo.gemm_method = TCNLA_GEMM_TCEC_FP16;
    compare(&c, 1e-6, "lra TCEC_FP16 refined");
    free(A);
}

/* A bad leading dimension, a NaN in one block: on every GPU the same
 * status (the one handle's for the NaN), no hang */
TEST(gpu_dist_failing_rank_same_status_everywhere) {
    NEED_NCCL();
    if (gpus() < 2) SKIP("needs 2 GPUs");
    const int64_t m = 2000, n = 1000, k = 16;
    float *A = test_matrix(m, n, 200, 0.9, 5);
    REQUIRE(A);
    job_ctx c = rsvd_job(m, n, k, A);
    for (int kind = 0; kind < 2; kind++) {
        tu_rank_job jobs[TU_MAX_RANKS];
        c.U = calloc(m * k, sizeof(float));
        for (int q = 0; q < 2; q++) c.S[q] = malloc(4 * k), c.V[q] = malloc(4 * k * n);
        c.bad_rank = 1, c.bad_kind = kind;
        REQUIRE(tu_run_ranks(TCNLA_BACKEND_CUDA, 2, rank_fn, &c, jobs) == 0);
        printf("    failure %d on rank 1: statuses %d, %d\n", kind, jobs[0].status, jobs[1].status);
        CHECK(jobs[0].status == jobs[1].status);
        CHECK(jobs[0].status != 0);
        if (kind == 0) CHECK_EQ_INT(jobs[0].status, -6);
        for (int q = 0; q < 2; q++) free(c.S[q]), free(c.V[q]);
        free(c.U);
    }
    free(A);
}
