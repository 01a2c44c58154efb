/* Shared-memory communicators: the ranks are threads of one process, each
 * with its own CPU handle (host memory). A collective posts each rank's
 * buffer, meets at a barrier, lets every rank reduce all buffers in rank
 * order into a private copy (the same bits on every rank), meets again
 * (every rank has read every buffer), and copies the result back. */
#include "dist/dist.h"
#include "core/internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int n, arrived, users;
    unsigned long gen;
    const void **bufs;
} shm_group;

typedef struct {
    shm_group *g;
    void *tmp; /* this rank's private result */
    size_t tmp_bytes;
} shm_rank;

static void barrier(shm_group *g) {
    pthread_mutex_lock(&g->mu);
    const unsigned long gen = g->gen;
    if (++g->arrived == g->n) {
        g->arrived = 0;
        g->gen++;
        pthread_cond_broadcast(&g->cv);
    } else {
        while (gen == g->gen) pthread_cond_wait(&g->cv, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
}

static double red(double a, double b, tn_redop_t op) {
    switch (op) {
    case TN_OP_MIN: return b < a ? b : a;
    case TN_OP_MAX: return b > a ? b : a;
    default: return a + b;
    }
}

static float redf(float a, float b, tn_redop_t op) {
    switch (op) {
    case TN_OP_MIN: return b < a ? b : a;
    case TN_OP_MAX: return b > a ? b : a;
    default: return a + b;
    }
}

static int shm_allreduce(tcnla_comm_t c, void *x, size_t count, tn_dtype_t dt, tn_redop_t op) {
    shm_rank *r = c->impl;
    shm_group *g = r->g;
    const size_t es = dt == TN_DT_F64 ? 8 : 4, bytes = es * count;
    /* every rank must reach both barriers, whatever its allocation did: a
     * failed one still posts, reads nothing, and reports the failure */
    int st = TCNLA_SUCCESS;
    if (bytes > r->tmp_bytes) {
        void *t = realloc(r->tmp, bytes);
        if (t) r->tmp = t, r->tmp_bytes = bytes;
        else st = TCNLA_ERR_ALLOC;
    }
    g->bufs[c->rank] = x;
    barrier(g);
    if (!st) {
        if (dt == TN_DT_F64) {
            double *t = r->tmp;
            memcpy(t, g->bufs[0], bytes);
            for (int q = 1; q < g->n; q++) {
                const double *b = g->bufs[q];
                for (size_t i = 0; i < count; i++) t[i] = red(t[i], b[i], op);
            }
        } else {
            float *t = r->tmp;
            memcpy(t, g->bufs[0], bytes);
            for (int q = 1; q < g->n; q++) {
                const float *b = g->bufs[q];
                for (size_t i = 0; i < count; i++) t[i] = redf(t[i], b[i], op);
            }
        }
    }
    barrier(g);
    if (!st) memcpy(x, r->tmp, bytes);
    return st;
}

static int shm_reduce_scatter(tcnla_comm_t c, const void *send, void *recv, size_t count,
                              tn_dtype_t dt) {
    shm_group *g = ((shm_rank *)c->impl)->g;
    const size_t off = count * (size_t)c->rank;
    g->bufs[c->rank] = send;
    barrier(g);
    if (dt == TN_DT_F64) {
        double *t = recv;
        memcpy(t, (const double *)g->bufs[0] + off, 8 * count);
        for (int q = 1; q < g->n; q++) {
            const double *b = (const double *)g->bufs[q] + off;
            for (size_t i = 0; i < count; i++) t[i] += b[i];
        }
    } else {
        float *t = recv;
        memcpy(t, (const float *)g->bufs[0] + off, 4 * count);
        for (int q = 1; q < g->n; q++) {
            const float *b = (const float *)g->bufs[q] + off;
            for (size_t i = 0; i < count; i++) t[i] += b[i];
        }
    }
    barrier(g); /* (every rank has read every send buffer) */
    return TCNLA_SUCCESS;
}

static int shm_allgather(tcnla_comm_t c, const void *send, void *recv, size_t count,
                         tn_dtype_t dt) {
    shm_group *g = ((shm_rank *)c->impl)->g;
    const size_t bytes = (dt == TN_DT_F64 ? 8 : 4) * count;
    g->bufs[c->rank] = send;
    barrier(g);
    for (int q = 0; q < g->n; q++) memcpy((char *)recv + bytes * (size_t)q, g->bufs[q], bytes);
    barrier(g);
    return TCNLA_SUCCESS;
}

static int shm_allreduce_host(tcnla_comm_t c, double *x, size_t count, tn_redop_t op) {
    return shm_allreduce(c, x, count, TN_DT_F64, op);
}

static void shm_destroy(tcnla_comm_t c) {
    shm_rank *r = c->impl;
    if (!r) return;
    shm_group *g = r->g;
    pthread_mutex_lock(&g->mu);
    const int last = --g->users == 0;
    pthread_mutex_unlock(&g->mu);
    if (last) {
        pthread_mutex_destroy(&g->mu);
        pthread_cond_destroy(&g->cv);
        free(g->bufs);
        free(g);
    }
    free(r->tmp);
    free(r);
    c->impl = NULL;
}

static const tn_comm_ops shm_ops = {
    .name = "shm",
    .allreduce = shm_allreduce,
    .allreduce_host = shm_allreduce_host,
    .reduce_scatter = shm_reduce_scatter,
    .allgather = shm_allgather,
    .destroy = shm_destroy,
};

int tn_shm_comm_create(tcnla_comm_t *comms, const tcnla_handle_t *hs, int n) {
    shm_group *g = calloc(1, sizeof *g);
    const void **bufs = calloc((size_t)n, sizeof *bufs);
    if (!g || !bufs) {
        free(g), free(bufs);
        return TCNLA_ERR_ALLOC;
    }
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->n = n, g->bufs = bufs;
    int made = 0;
    for (; made < n; made++) {
        shm_rank *r = calloc(1, sizeof *r);
        comms[made] = r ? tn_comm_new(&shm_ops, hs[made], n, made, r) : NULL;
        if (!comms[made]) {
            free(r);
            break;
        }
        r->g = g;
        g->users++;
    }
    if (made == n) return TCNLA_SUCCESS;
    if (made == 0) {
        pthread_mutex_destroy(&g->mu);
        pthread_cond_destroy(&g->cv);
        free(bufs);
        free(g);
    }
    for (int i = 0; i < made; i++) { /* the last one frees the group */
        shm_destroy(comms[i]);
        free(comms[i]);
        comms[i] = NULL;
    }
    return TCNLA_ERR_ALLOC;
}
