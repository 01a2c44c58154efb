/* GPU tests of the device rule and the thread rule of include/tcnla.h on
 * the CUDA backend, through the public API and the CUDA runtime only:
 *  - a call runs on its handle's device and leaves the caller's current
 *    device as it found it;
 *  - handles on two devices, driven from two threads at once, give the
 *    same results (same GPU model: the same bits);
 *  - one handle shared by several threads gives every call the bits it
 *    gives alone (the calls are serialized by the handle's lock). */
#include "../test.h"
#include "gpu_util.h"
#include "tcnla.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef TCNLA_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#ifdef TCNLA_HAVE_CUDA
static int gpu_count(void) {
    int compiled = 0, count = 0;
    tcnla_cuda_available(&compiled, &count);
    return compiled ? count : 0;
}

static int current_device(void) {
    int d = -1;
    if (cudaGetDevice(&d) != cudaSuccess) return -1;
    return d;
}

/* The device a pointer of device memory lives on (-1 if unknown). */
static int device_of(const void *p) {
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return a.type == cudaMemoryTypeDevice ? a.device : -1;
}

static void *to_dev(tcnla_handle_t h, const void *x, size_t bytes) {
    void *d = NULL;
    if (tcnla_malloc(h, &d, bytes) != TCNLA_SUCCESS) return NULL;
    if (x && tcnla_memcpy(h, d, x, bytes, TCNLA_MEMCPY_HOST_TO_HANDLE) != TCNLA_SUCCESS) {
        tcnla_free(h, d);
        return NULL;
    }
    return d;
}

/* A (m x n) = sum_q 2^-q x_q y_q^T + 1e-3 noise: a decaying spectrum. */
static float *lowrank_plus_noise(int64_t m, int64_t n, uint64_t seed) {
    float *A = malloc(sizeof(float) * (size_t)(m * n)), *x = malloc(sizeof(float) * (size_t)(m + n));
    if (!A || !x) {
        free(A), free(x);
        return NULL;
    }
    tcnla_rand_uniform(seed, 0, -1e-3f, 1e-3f, m * n, A);
    for (int q = 0; q < 40; q++) {
        tcnla_rand_normal(seed + 1, (uint64_t)q, 0.0f, 1.0f, m + n, x);
        const float s = powf(0.8f, (float)q);
        for (int64_t c = 0; c < n; c++)
            for (int64_t i = 0; i < m; i++) A[i + c * m] += s * x[i] * x[m + c];
    }
    free(x);
    return A;
}

/* ||A - U diag(S) VT||_F / ||A||_F on the host (U m x k, VT k x n). */
static double rsvd_residual(const float *A, int64_t m, int64_t n, const float *U, const float *S,
                            const float *VT, int64_t k) {
    double num = 0, den = 0;
    for (int64_t c = 0; c < n; c++)
        for (int64_t i = 0; i < m; i++) {
            double r = A[i + c * m];
            for (int64_t p = 0; p < k; p++)
                r -= (double)U[i + p * m] * (double)S[p] * (double)VT[p + c * k];
            num += r * r;
            den += (double)A[i + c * m] * (double)A[i + c * m];
        }
    return sqrt(num / den);
}

/* The products a GEMM / rsvd call of these tests runs, and their outputs
 * copied back to the host. */
typedef struct {
    int64_t m, n, k;          /* GEMM sizes */
    const float *dA, *dB;     /* GEMM operands (device, read-only, large enough) */
    int64_t rm, rn, rk;       /* rsvd sizes */
    const float *dR;          /* rsvd operand (device, rm x rn) */
    uint64_t seed;            /* rsvd seed */
} work_t;

typedef struct {
    float *C, *U, *S, *VT; /* host */
} result_t;

static int result_alloc(result_t *r, const work_t *w) {
    r->C = malloc(sizeof(float) * (size_t)(w->m * w->n + 1));
    r->U = malloc(sizeof(float) * (size_t)(w->rm * w->rk));
    r->S = malloc(sizeof(float) * (size_t)w->rk);
    r->VT = malloc(sizeof(float) * (size_t)(w->rk * w->rn));
    return r->C && r->U && r->S && r->VT ? 0 : -1;
}
static void result_free(result_t *r) { free(r->C), free(r->U), free(r->S), free(r->VT); }

static int result_equal(const result_t *a, const result_t *b, const work_t *w, int gemm) {
    if (gemm && memcmp(a->C, b->C, sizeof(float) * (size_t)(w->m * w->n))) return 0;
    return !memcmp(a->U, b->U, sizeof(float) * (size_t)(w->rm * w->rk)) &&
           !memcmp(a->S, b->S, sizeof(float) * (size_t)w->rk) &&
           !memcmp(a->VT, b->VT, sizeof(float) * (size_t)(w->rk * w->rn));
}

/* C = 1.5 A B + 0.5 C0 with TCEC_FP16 (skipped when w->m == 0), then the
 * rank-rk rsvd of dR with default options; outputs in handle memory of
 * their own, copied to r. Returns the first failing status. */
static int run_work(tcnla_handle_t h, const work_t *w, result_t *r) {
    int st = TCNLA_SUCCESS;
    if (w->m > 0) {
        const size_t cn = (size_t)(w->m * w->n);
        for (size_t i = 0; i < cn; i++) r->C[i] = (float)(i % 977) * 0.125f;
        float *dC = to_dev(h, r->C, sizeof(float) * cn);
        if (!dC) return TCNLA_ERR_ALLOC;
        tcnla_info_t info;
        st = tcnla_sgemm_ex(h, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, w->m, w->n, w->k, 1.5f,
                            w->dA, w->m, w->dB, w->k, 0.5f, dC, w->m, &info);
        if (!st && info.method != TCNLA_GEMM_TCEC_FP16) st = TCNLA_ERR_INTERNAL;
        if (!st) st = tcnla_memcpy(h, r->C, dC, sizeof(float) * cn, TCNLA_MEMCPY_HANDLE_TO_HOST);
        tcnla_free(h, dC);
        if (st) return st;
    }
    float *dU = to_dev(h, NULL, sizeof(float) * (size_t)(w->rm * w->rk));
    float *dS = to_dev(h, NULL, sizeof(float) * (size_t)w->rk);
    float *dVT = to_dev(h, NULL, sizeof(float) * (size_t)(w->rk * w->rn));
    if (!dU || !dS || !dVT) st = TCNLA_ERR_ALLOC;
    tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
    o.rank = w->rk;
    o.seed = w->seed;
    if (!st) st = tcnla_rsvd(h, &o, w->rm, w->rn, w->dR, w->rm, dU, w->rm, dS, dVT, w->rk);
    if (!st)
        st = tcnla_memcpy(h, r->U, dU, sizeof(float) * (size_t)(w->rm * w->rk),
                          TCNLA_MEMCPY_HANDLE_TO_HOST);
    if (!st)
        st = tcnla_memcpy(h, r->S, dS, sizeof(float) * (size_t)w->rk, TCNLA_MEMCPY_HANDLE_TO_HOST);
    if (!st)
        st = tcnla_memcpy(h, r->VT, dVT, sizeof(float) * (size_t)(w->rk * w->rn),
                          TCNLA_MEMCPY_HANDLE_TO_HOST);
    tcnla_free(h, dU), tcnla_free(h, dS), tcnla_free(h, dVT);
    return st;
}
#endif

TEST(gpu_calls_leave_the_callers_device) {
#ifndef TCNLA_HAVE_CUDA
    SKIP("CUDA not compiled in");
#else
    const int ngpu = gpu_count();
    if (ngpu == 0) SKIP("no CUDA device");
    /* the caller works on device d, the handle on device 0 (one GPU: d = 0,
     * which checks that nothing changes) */
    const int d = ngpu >= 2 ? 1 : 0;
    REQUIRE(cudaSetDevice(d) == cudaSuccess);
    tcnla_handle_t h = NULL;
    REQUIRE(tcnla_create_on_device(&h, TCNLA_BACKEND_CUDA, 0) == TCNLA_SUCCESS);
    CHECK_EQ_INT(current_device(), d);
    int hd = -2;
    CHECK(tcnla_get_device(h, &hd) == 0 && hd == 0);

    enum { M = 256, N = 192, K = 320, RM = 1024, RN = 512, RK = 16 };
    float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * K * N);
    float *R = lowrank_plus_noise(RM, RN, 3);
    REQUIRE(A && B && R);
    tcnla_rand_uniform(1, 0, -1.0f, 1.0f, M * K, A);
    tcnla_rand_uniform(1, 1, -1.0f, 1.0f, K * N, B);
    work_t w = {M, N, K, NULL, NULL, RM, RN, RK, NULL, 5};
    w.dA = to_dev(h, A, sizeof(float) * M * K);
    CHECK_EQ_INT(current_device(), d);
    w.dB = to_dev(h, B, sizeof(float) * K * N);
    w.dR = to_dev(h, R, sizeof(float) * RM * RN);
    REQUIRE(w.dA && w.dB && w.dR);
    /* the handle's memory is on its device, not on the caller's */
    CHECK_EQ_INT(device_of(w.dA), 0);
    CHECK_EQ_INT(device_of(w.dR), 0);
    CHECK_EQ_INT(current_device(), d);

    result_t r;
    REQUIRE(result_alloc(&r, &w) == 0);
    CHECK_EQ_INT(run_work(h, &w, &r), TCNLA_SUCCESS);
    CHECK_EQ_INT(current_device(), d);
    CHECK(rsvd_residual(R, RM, RN, r.U, r.S, r.VT, RK) < 0.5);
    CHECK(tcnla_synchronize(h) == 0);
    size_t cur = 0, peak = 0;
    CHECK(tcnla_memory_stats(h, &cur, &peak) == 0 && cur > 0);
    tcnla_tuning_t t;
    CHECK(tcnla_get_tuning(h, &t) == 0 && tcnla_set_tuning(h, &t) == 0);
    CHECK_EQ_INT(current_device(), d);

    /* a failing call leaves it too */
    CHECK(tcnla_sgemm(h, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, M, N, K, 1.0f, w.dA, M - 1,
                      w.dB, K, 0.0f, NULL, M) < 0);
    CHECK_EQ_INT(current_device(), d);

    /* tcnla_create takes the caller's current device */
    tcnla_handle_t h2 = NULL;
    REQUIRE(tcnla_create(&h2, TCNLA_BACKEND_CUDA) == TCNLA_SUCCESS);
    CHECK(tcnla_get_device(h2, &hd) == 0 && hd == d);
    CHECK_EQ_INT(current_device(), d);
    CHECK(tcnla_destroy(h2) == 0);
    CHECK_EQ_INT(current_device(), d);

    tcnla_free(h, (void *)w.dA), tcnla_free(h, (void *)w.dB), tcnla_free(h, (void *)w.dR);
    CHECK(tcnla_destroy(h) == 0);
    CHECK_EQ_INT(current_device(), d);
    cudaSetDevice(0);
    result_free(&r);
    free(A), free(B), free(R);
#endif
}

#ifdef TCNLA_HAVE_CUDA
typedef struct {
    int device;
    const float *R; /* host */
    int64_t rm, rn, rk;
    result_t res;
    int status, reported, caller_dev_kept;
    char name[256];
} dev_job_t;

/* On its own thread: a handle on j->device, the rsvd of a copy of R. */
static void *dev_worker(void *arg) {
    dev_job_t *j = arg;
    const int before = current_device(); /* a new thread's: device 0 */
    tcnla_handle_t h = NULL;
    j->status = tcnla_create_on_device(&h, TCNLA_BACKEND_CUDA, j->device);
    if (j->status) return NULL;
    int hd = -2;
    j->reported = tcnla_get_device(h, &hd) == 0 ? hd : -2;
    tcnla_device_name(h, j->name, sizeof j->name);
    work_t w = {0, 0, 0, NULL, NULL, j->rm, j->rn, j->rk, NULL, 9};
    w.dR = to_dev(h, j->R, sizeof(float) * (size_t)(j->rm * j->rn));
    if (!w.dR) j->status = TCNLA_ERR_ALLOC;
    else if (device_of(w.dR) != j->device) j->status = TCNLA_ERR_INTERNAL;
    /* twice: the second call runs on the buffers the first left in the pool */
    for (int rep = 0; rep < 2 && !j->status; rep++) j->status = run_work(h, &w, &j->res);
    tcnla_free(h, (void *)w.dR);
    tcnla_destroy(h);
    j->caller_dev_kept = current_device() == before;
    return NULL;
}
#endif

TEST(gpu_two_handles_two_devices) {
#ifndef TCNLA_HAVE_CUDA
    SKIP("CUDA not compiled in");
#else
    const int ngpu = gpu_count();
    if (ngpu < 2) SKIP("needs 2 GPUs");
    enum { RM = 2048, RN = 1024, RK = 32 };
    float *R = lowrank_plus_noise(RM, RN, 21);
    REQUIRE(R);
    dev_job_t jobs[2];
    pthread_t th[2];
    work_t shape = {0, 0, 0, NULL, NULL, RM, RN, RK, NULL, 9};
    for (int i = 0; i < 2; i++) {
        memset(&jobs[i], 0, sizeof jobs[i]);
        jobs[i].device = i, jobs[i].R = R, jobs[i].rm = RM, jobs[i].rn = RN, jobs[i].rk = RK;
        REQUIRE(result_alloc(&jobs[i].res, &shape) == 0);
    }
    for (int i = 0; i < 2; i++) REQUIRE(pthread_create(&th[i], NULL, dev_worker, &jobs[i]) == 0);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        CHECK_MSG(jobs[i].status == 0, "device %d: status %d (%s)", i, jobs[i].status,
                  tcnla_strerror(jobs[i].status));
        CHECK_MSG(jobs[i].reported == i, "device %d: tcnla_get_device says %d", i, jobs[i].reported);
        CHECK_MSG(jobs[i].caller_dev_kept, "device %d: the thread's current device changed", i);
    }
    if (!jobs[0].status && !jobs[1].status) {
        const double r0 = rsvd_residual(R, RM, RN, jobs[0].res.U, jobs[0].res.S, jobs[0].res.VT, RK);
        const double r1 = rsvd_residual(R, RM, RN, jobs[1].res.U, jobs[1].res.S, jobs[1].res.VT, RK);
        CHECK_MSG(r0 < 0.1 && r1 < 0.1, "residuals %.3e %.3e", r0, r1);
        if (strcmp(jobs[0].name, jobs[1].name) == 0) {
            CHECK_MSG(result_equal(&jobs[0].res, &jobs[1].res, &shape, 0),
                      "two devices of one model (%s): the rsvd results differ", jobs[0].name);
        } else {
            printf("    devices differ (%s, %s): residuals compared, %.9e %.9e\n", jobs[0].name,
                   jobs[1].name, r0, r1);
            CHECK_MSG(fabs(r0 - r1) <= 1e-6 * fabs(r0 > r1 ? r0 : r1),
                      "residuals %.9e (device 0) and %.9e (device 1)", r0, r1);
        }
    }
    for (int i = 0; i < 2; i++) result_free(&jobs[i].res);
    free(R);
#endif
}

#ifdef TCNLA_HAVE_CUDA
enum { SH_THREADS = 4, SH_ITERS = 3 };
typedef struct {
    tcnla_handle_t h;
    work_t w;
    const result_t *ref;
    int bad_status, bad_result, bad_mem, bad_dev;
} share_job_t;

static void *share_worker(void *arg) {
    share_job_t *j = arg;
    result_t r;
    if (result_alloc(&r, &j->w)) {
        j->bad_status++;
        return NULL;
    }
    const int before = current_device();
    for (int it = 0; it < SH_ITERS; it++) {
        const int st = run_work(j->h, &j->w, &r);
        if (st) j->bad_status++;
        else if (!result_equal(&r, j->ref, &j->w, 1)) j->bad_result++;
        void *p = NULL;
        const size_t nb = ((size_t)1 << 20) + 4096 * (size_t)it;
        if (tcnla_malloc(j->h, &p, nb) != TCNLA_SUCCESS) {
            j->bad_status++;
        } else {
            size_t cur = 0, peak = 0;
            if (tcnla_memory_stats(j->h, &cur, &peak) != TCNLA_SUCCESS) j->bad_status++;
            /* (current counts the scratch pool's idle blocks, peak does not) */
            else if (cur < nb || peak < nb) j->bad_mem++;
            if (tcnla_free(j->h, p) != TCNLA_SUCCESS) j->bad_status++;
        }
        if (current_device() != before) j->bad_dev++;
    }
    result_free(&r);
    return NULL;
}

/* SH_THREADS threads on handle h, each SH_ITERS times its GEMM, its rsvd
 * (RM x RN, default options) and a block of memory, against the bits of
 * the same calls run one after another on h beforehand. */
static void share_one_handle(tcnla_handle_t h) {
    enum { RM = 2048, RN = 1024, GMAX = 640 };
    /* per thread: a GEMM shape and an rsvd seed and rank of its own */
    static const int64_t gs[SH_THREADS][3] = {
        {512, 384, 640}, {640, 64, 256}, {200, 520, 333}, {128, 640, 512}};
    static const int64_t rk[SH_THREADS] = {32, 16, 32, 24};
    float *A = malloc(sizeof(float) * GMAX * GMAX), *B = malloc(sizeof(float) * GMAX * GMAX);
    float *R = lowrank_plus_noise(RM, RN, 31);
    REQUIRE(A && B && R);
    tcnla_rand_uniform(2, 0, -1.0f, 1.0f, GMAX * GMAX, A);
    tcnla_rand_uniform(2, 1, -1.0f, 1.0f, GMAX * GMAX, B);
    const float *dA = to_dev(h, A, sizeof(float) * GMAX * GMAX);
    const float *dB = to_dev(h, B, sizeof(float) * GMAX * GMAX);
    const float *dR = to_dev(h, R, sizeof(float) * RM * RN);
    REQUIRE(dA && dB && dR);

    share_job_t jobs[SH_THREADS];
    result_t ref[SH_THREADS];
    for (int t = 0; t < SH_THREADS; t++) {
        memset(&jobs[t], 0, sizeof jobs[t]);
        jobs[t].h = h;
        jobs[t].w = (work_t){gs[t][0], gs[t][1], gs[t][2], dA, dB, RM, RN, rk[t], dR,
                             100 + (uint64_t)t};
        jobs[t].ref = &ref[t];
        REQUIRE(result_alloc(&ref[t], &jobs[t].w) == 0);
        /* the serial reference, on the same handle */
        REQUIRE(run_work(h, &jobs[t].w, &ref[t]) == TCNLA_SUCCESS);
    }
    pthread_t th[SH_THREADS];
    int started[SH_THREADS];
    for (int t = 0; t < SH_THREADS; t++) {
        started[t] = pthread_create(&th[t], NULL, share_worker, &jobs[t]) == 0;
        CHECK(started[t]);
    }
    for (int t = 0; t < SH_THREADS; t++)
        if (started[t]) pthread_join(th[t], NULL);
    for (int t = 0; t < SH_THREADS; t++) {
        CHECK_MSG(jobs[t].bad_status == 0, "thread %d: %d calls failed", t, jobs[t].bad_status);
        CHECK_MSG(jobs[t].bad_result == 0, "thread %d: %d of %d results differ from the serial ones",
                  t, jobs[t].bad_result, SH_ITERS);
        CHECK_MSG(jobs[t].bad_mem == 0, "thread %d: %d memory checks failed", t, jobs[t].bad_mem);
        CHECK_MSG(jobs[t].bad_dev == 0, "thread %d: the current device changed", t);
        result_free(&ref[t]);
    }
    tcnla_free(h, (void *)dA), tcnla_free(h, (void *)dB), tcnla_free(h, (void *)dR);
    free(A), free(B), free(R);
}
#endif

TEST(gpu_threads_share_one_handle) {
#ifndef TCNLA_HAVE_CUDA
    SKIP("CUDA not compiled in");
#else
    if (gpu_count() == 0) SKIP("no CUDA device");
    tcnla_handle_t h = NULL;
    REQUIRE(tcnla_create_on_device(&h, TCNLA_BACKEND_CUDA, 0) == TCNLA_SUCCESS);
    share_one_handle(h);
    tcnla_destroy(h);
#endif
}
