/* The thread rule and the device rule of include/tcnla.h on the CPU
 * backend: a handle shared between threads gives every call the result it
 * gives alone (calls on one handle are serialized by the handle's lock);
 * handles of different threads share nothing; tcnla_create_on_device's
 * argument checks and tcnla_get_device. */
#include "tcnla.h"
#include "test.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { NTHREADS = 4, ITERS = 6, RM = 300, RN = 200, RK = 8 };

/* Per thread: a GEMM size of its own (the sizes differ so that the
 * handle's grow-only host workspace, which TCEC_FP16 packs its operands
 * into, is shared by products of different shapes) and an rsvd seed. */
static const int64_t gsz[NTHREADS][3] = {{96, 80, 72}, {64, 120, 40}, {130, 33, 101}, {48, 48, 160}};

typedef struct {
    /* inputs, shared read-only */
    const float *A;      /* RM x RN, the rsvd operand */
    const float *GA, *GB; /* GEMM operands, large enough for every size */
    /* serial references of each thread's calls */
    float *C[NTHREADS];
    float *U[NTHREADS], *S[NTHREADS], *VT[NTHREADS];
} refs_t;

typedef struct {
    tcnla_handle_t h; /* NULL: the thread creates (and destroys) a handle of its own */
    int t;
    const refs_t *r;
    int bad_gemm, bad_rsvd, bad_mem, bad_status;
    char msg[160];
} job_t;

static tcnla_rsvd_opts_t rsvd_opts(int t) {
    tcnla_rsvd_opts_t o = tcnla_rsvd_opts_default();
    o.rank = RK;
    o.proj_method = TCNLA_GEMM_NATIVE_FP32;
    o.gemm_method = TCNLA_GEMM_NATIVE_FP32;
    o.random_format = TCNLA_FMT_FP32;
    o.seed = 11 + (uint64_t)t;
    return o;
}

static int run_gemm(tcnla_handle_t h, int t, const refs_t *r, float *C, tcnla_info_t *info) {
    const int64_t m = gsz[t][0], n = gsz[t][1], k = gsz[t][2];
    for (int64_t i = 0; i < m * n; i++) C[i] = (float)i * 0.25f; /* beta != 0 reads C */
    return tcnla_sgemm_ex(h, TCNLA_GEMM_TCEC_FP16, TCNLA_OP_N, TCNLA_OP_N, m, n, k, 1.5f, r->GA,
                          m, r->GB, k, 0.5f, C, m, info);
}

static int run_rsvd(tcnla_handle_t h, int t, const refs_t *r, float *U, float *S, float *VT) {
    const tcnla_rsvd_opts_t o = rsvd_opts(t);
    return tcnla_rsvd(h, &o, RM, RN, r->A, RM, U, RM, S, VT, RK);
}

static void *worker(void *arg) {
    job_t *j = arg;
    const int t = j->t;
    const refs_t *r = j->r;
    tcnla_handle_t h = j->h;
    if (!h && tcnla_create(&h, TCNLA_BACKEND_CPU) != TCNLA_SUCCESS) {
        j->bad_status++;
        return NULL;
    }
    const int64_t m = gsz[t][0], n = gsz[t][1];
    float *C = malloc(sizeof(float) * (size_t)(m * n));
    float *U = malloc(sizeof(float) * RM * RK), *S = malloc(sizeof(float) * RK);
    float *VT = malloc(sizeof(float) * RK * RN);
    if (!C || !U || !S || !VT) {
        j->bad_status++;
        goto out;
    }
    for (int it = 0; it < ITERS; it++) {
        tcnla_info_t info;
        int st = run_gemm(h, t, r, C, &info);
        if (st) j->bad_status++;
        else if (info.method != TCNLA_GEMM_TCEC_FP16 || info.products != 1 ||
                 memcmp(C, r->C[t], sizeof(float) * (size_t)(m * n)) != 0)
            j->bad_gemm++;

        /* a block of the handle's memory, written, counted, read back, freed */
        const size_t nb = 4096 + 512 * (size_t)(t * ITERS + it);
        unsigned char *p = NULL;
        if (tcnla_malloc(h, (void **)&p, nb) != TCNLA_SUCCESS || !p) {
            j->bad_status++;
        } else {
            memset(p, 0x40 + t, nb);
            size_t cur = 0, peak = 0;
            if (tcnla_memory_stats(h, &cur, &peak) != TCNLA_SUCCESS) j->bad_status++;
            else if (cur < nb || peak < cur) j->bad_mem++;
            for (size_t i = 0; i < nb; i++)
                if (p[i] != 0x40 + t) {
                    j->bad_mem++;
                    break;
                }
            if (tcnla_free(h, p) != TCNLA_SUCCESS) j->bad_status++;
        }

        st = run_rsvd(h, t, r, U, S, VT);
        if (st) j->bad_status++;
        else if (memcmp(U, r->U[t], sizeof(float) * RM * RK) != 0 ||
                 memcmp(S, r->S[t], sizeof(float) * RK) != 0 ||
                 memcmp(VT, r->VT[t], sizeof(float) * RK * RN) != 0)
            j->bad_rsvd++;
    }
out:
    free(C), free(U), free(S), free(VT);
    if (!j->h) tcnla_destroy(h);
    return NULL;
}

/* The references: each thread's calls run alone, one after another, on h
 * (on a fresh handle when h is NULL). */
static int make_refs(refs_t *r, tcnla_handle_t h) {
    memset(r, 0, sizeof *r);
    float *A = malloc(sizeof(float) * RM * RN), *GA = malloc(sizeof(float) * 160 * 160);
    float *GB = malloc(sizeof(float) * 160 * 160);
    if (!A || !GA || !GB) return -1;
    /* a decaying spectrum plus noise: A = sum_i 2^-i x_i y_i^T + 1e-3 noise */
    float *x = malloc(sizeof(float) * (RM + RN));
    tcnla_rand_uniform(5, 0, -1.0f, 1.0f, (int64_t)RM * RN, A);
    for (int64_t i = 0; i < (int64_t)RM * RN; i++) A[i] *= 1e-3f;
    for (int q = 0; q < 12; q++) {
        tcnla_rand_normal(6, (uint64_t)q, 0.0f, 1.0f, RM + RN, x);
        const float s = ldexpf(1.0f, -q);
        for (int64_t c = 0; c < RN; c++)
            for (int64_t i = 0; i < RM; i++) A[i + c * RM] += s * x[i] * x[RM + c];
    }
    free(x);
    tcnla_rand_uniform(7, 0, -2.0f, 2.0f, 160 * 160, GA);
    tcnla_rand_uniform(7, 1, -2.0f, 2.0f, 160 * 160, GB);
    r->A = A, r->GA = GA, r->GB = GB;
    tcnla_handle_t own = NULL;
    if (!h && tcnla_create(&own, TCNLA_BACKEND_CPU)) return -1;
    if (!h) h = own;
    int st = 0;
    for (int t = 0; t < NTHREADS && !st; t++) {
        r->C[t] = malloc(sizeof(float) * (size_t)(gsz[t][0] * gsz[t][1]));
        r->U[t] = malloc(sizeof(float) * RM * RK);
        r->S[t] = malloc(sizeof(float) * RK);
        r->VT[t] = malloc(sizeof(float) * RK * RN);
        if (!r->C[t] || !r->U[t] || !r->S[t] || !r->VT[t]) st = -1;
        if (!st) st = run_gemm(h, t, r, r->C[t], NULL);
        if (!st) st = run_rsvd(h, t, r, r->U[t], r->S[t], r->VT[t]);
    }
    tcnla_destroy(own);
    return st;
}

static void free_refs(refs_t *r) {
    free((void *)r->A), free((void *)r->GA), free((void *)r->GB);
    for (int t = 0; t < NTHREADS; t++) free(r->C[t]), free(r->U[t]), free(r->S[t]), free(r->VT[t]);
}

/* Runs the NTHREADS workers (on h, or each on a handle of its own when h
 * is NULL) and reports what differed from the references. */
static void run_threads(tcnla_handle_t h) {
    refs_t r;
    REQUIRE(make_refs(&r, h) == 0);
    /* the references grew h's workspace to its largest: after the threads,
     * having freed all they allocated, `current` must come back to this */
    size_t cur0 = 0, peak0 = 0;
    if (h) CHECK(tcnla_memory_stats(h, &cur0, &peak0) == 0);
    job_t jobs[NTHREADS];
    pthread_t th[NTHREADS];
    int started[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        memset(&jobs[t], 0, sizeof jobs[t]);
        jobs[t].h = h, jobs[t].t = t, jobs[t].r = &r;
        started[t] = pthread_create(&th[t], NULL, worker, &jobs[t]) == 0;
        CHECK(started[t]);
    }
    for (int t = 0; t < NTHREADS; t++)
        if (started[t]) pthread_join(th[t], NULL);
    for (int t = 0; t < NTHREADS; t++) {
        CHECK_MSG(jobs[t].bad_status == 0, "thread %d: %d calls failed", t, jobs[t].bad_status);
        CHECK_MSG(jobs[t].bad_gemm == 0, "thread %d: %d of %d sgemm results differ from the serial one",
                  t, jobs[t].bad_gemm, ITERS);
        CHECK_MSG(jobs[t].bad_rsvd == 0, "thread %d: %d of %d rsvd results differ from the serial one",
                  t, jobs[t].bad_rsvd, ITERS);
        CHECK_MSG(jobs[t].bad_mem == 0, "thread %d: %d memory checks failed", t, jobs[t].bad_mem);
    }
    if (h) {
        size_t cur = 0, peak = 0;
        CHECK(tcnla_memory_stats(h, &cur, &peak) == 0);
        CHECK_MSG(cur == cur0, "memory in use after the threads: %zu bytes, before: %zu", cur, cur0);
        CHECK(peak >= cur);
    }
    free_refs(&r);
}

TEST(threads_share_one_handle) {
    tcnla_handle_t h;
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == TCNLA_SUCCESS);
    run_threads(h);
    tcnla_destroy(h);
}

TEST(threads_one_handle_each) { run_threads(NULL); }

TEST(api_create_on_device) {
    int compiled = 0, ngpu = 0;
    tcnla_cuda_available(&compiled, &ngpu);
    tcnla_handle_t h = (tcnla_handle_t)1;
    int dev = 7;
    CHECK_EQ_INT(tcnla_create_on_device(NULL, TCNLA_BACKEND_CPU, 0), -1);
    CHECK_EQ_INT(tcnla_create_on_device(NULL, (tcnla_backend_t)7, -1), -1);
    CHECK_EQ_INT(tcnla_create_on_device(&h, (tcnla_backend_t)7, 0), -2);
    CHECK(h == NULL);
    h = (tcnla_handle_t)1;
    CHECK_EQ_INT(tcnla_create_on_device(&h, (tcnla_backend_t)-1, 0), -2);
    CHECK(h == NULL);
    const tcnla_backend_t all[3] = {TCNLA_BACKEND_AUTO, TCNLA_BACKEND_CPU, TCNLA_BACKEND_CUDA};
    for (int b = 0; b < 3; b++) {
        h = (tcnla_handle_t)1;
        CHECK_EQ_INT(tcnla_create_on_device(&h, all[b], -1), -3);
        CHECK(h == NULL);
    }
    h = (tcnla_handle_t)1;
    CHECK_EQ_INT(tcnla_create_on_device(&h, TCNLA_BACKEND_CPU, 1), -3);
    CHECK(h == NULL);

    /* CPU on device 0 */
    REQUIRE(tcnla_create_on_device(&h, TCNLA_BACKEND_CPU, 0) == TCNLA_SUCCESS);
    tcnla_backend_t be = TCNLA_BACKEND_AUTO;
    CHECK(tcnla_get_backend(h, &be) == 0 && be == TCNLA_BACKEND_CPU);
    CHECK(tcnla_get_device(h, &dev) == 0);
    CHECK_EQ_INT(dev, -1);
    CHECK_EQ_INT(tcnla_get_device(h, NULL), -2);
    tcnla_destroy(h);
    dev = 7;
    CHECK_EQ_INT(tcnla_get_device(NULL, &dev), -1);
    CHECK_EQ_INT(dev, 7);
    /* tcnla_create on the CPU: device -1 as well */
    REQUIRE(tcnla_create(&h, TCNLA_BACKEND_CPU) == TCNLA_SUCCESS);
    CHECK(tcnla_get_device(h, &dev) == 0 && dev == -1);
    tcnla_destroy(h);

    if (ngpu == 0) {
        h = (tcnla_handle_t)1;
        CHECK_EQ_INT(tcnla_create_on_device(&h, TCNLA_BACKEND_CUDA, 0), TCNLA_ERR_NO_BACKEND);
        CHECK(h == NULL);
        /* AUTO without a GPU: a CPU handle, the device number ignored */
        for (int d = 0; d < 3; d += 2) {
            h = NULL;
            REQUIRE(tcnla_create_on_device(&h, TCNLA_BACKEND_AUTO, d) == TCNLA_SUCCESS);
            CHECK(tcnla_get_backend(h, &be) == 0 && be == TCNLA_BACKEND_CPU);
            CHECK(tcnla_get_device(h, &dev) == 0 && dev == -1);
            tcnla_destroy(h);
        }
    } else {
        /* a device that does not exist */
        h = (tcnla_handle_t)1;
        CHECK_EQ_INT(tcnla_create_on_device(&h, TCNLA_BACKEND_CUDA, ngpu), -3);
        CHECK(h == NULL);
        h = (tcnla_handle_t)1;
        CHECK_EQ_INT(tcnla_create_on_device(&h, TCNLA_BACKEND_AUTO, ngpu), -3);
        CHECK(h == NULL);
        const int d = ngpu - 1;
        REQUIRE(tcnla_create_on_device(&h, TCNLA_BACKEND_CUDA, d) == TCNLA_SUCCESS);
        CHECK(tcnla_get_backend(h, &be) == 0 && be == TCNLA_BACKEND_CUDA);
        CHECK(tcnla_get_device(h, &dev) == 0 && dev == d);
        tcnla_destroy(h);
    }
}
