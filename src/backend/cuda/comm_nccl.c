/* Communicators of CUDA handles over NCCL (src/dist/dist.h). NCCL is not a
 * build or link dependency: libnccl.so.2 ($TCNLA_NCCL_LIBRARY where set) is
 * loaded when the first communicator or identifier is asked for, and its
 * few entry points are declared here with NCCL's ABI (nccl.h: ncclComm_t a
 * pointer, ncclUniqueId 128 bytes passed by value, ncclFloat32 = 7,
 * ncclFloat64 = 8, ncclSum = 0, ncclMax = 2, ncclMin = 3, ncclSuccess = 0).
 * A machine without NCCL gets TCNLA_ERR_NO_BACKEND from these calls and
 * nothing else changes. The collectives run on the handle's stream. */
#include "core/internal.h"
#include "backend/cuda/tn_cuda.h"
#include "dist/dist.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct nccl_comm_opaque *nccl_comm_t;
typedef struct {
    char internal[TCNLA_COMM_ID_BYTES];
} nccl_id_t;

static struct {
    int tried, ok;
    int (*get_unique_id)(nccl_id_t *);
    int (*init_rank)(nccl_comm_t *, int, nccl_id_t, int);
    int (*init_all)(nccl_comm_t *, int, const int *);
    int (*all_reduce)(const void *, void *, size_t, int, int, nccl_comm_t, cudaStream_t);
    int (*reduce_scatter)(const void *, void *, size_t, int, int, nccl_comm_t, cudaStream_t);
    int (*all_gather)(const void *, void *, size_t, int, nccl_comm_t, cudaStream_t);
    int (*destroy)(nccl_comm_t);
    int (*group_start)(void);
    int (*group_end)(void);
    int (*count)(nccl_comm_t, int *);
    int (*user_rank)(nccl_comm_t, int *);
} nc;
static pthread_mutex_t nc_mu = PTHREAD_MUTEX_INITIALIZER;

static int nccl_load(void) {
    pthread_mutex_lock(&nc_mu);
    if (!nc.tried) {
        nc.tried = 1;
        const char *env = getenv("TCNLA_NCCL_LIBRARY");
        void *lib = dlopen(env && *env ? env : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
        if (lib) {
            *(void **)&nc.get_unique_id = dlsym(lib, "ncclGetUniqueId");
            *(void **)&nc.init_rank = dlsym(lib, "ncclCommInitRank");
            *(void **)&nc.init_all = dlsym(lib, "ncclCommInitAll");
            *(void **)&nc.all_reduce = dlsym(lib, "ncclAllReduce");
            *(void **)&nc.reduce_scatter = dlsym(lib, "ncclReduceScatter");
            *(void **)&nc.all_gather = dlsym(lib, "ncclAllGather");
            *(void **)&nc.destroy = dlsym(lib, "ncclCommDestroy");
            *(void **)&nc.group_start = dlsym(lib, "ncclGroupStart");
            *(void **)&nc.group_end = dlsym(lib, "ncclGroupEnd");
            *(void **)&nc.count = dlsym(lib, "ncclCommCount");
            *(void **)&nc.user_rank = dlsym(lib, "ncclCommUserRank");
            nc.ok = nc.get_unique_id && nc.init_rank && nc.init_all && nc.all_reduce &&
                    nc.reduce_scatter && nc.all_gather &&
                    nc.destroy && nc.group_start && nc.group_end && nc.count && nc.user_rank;
        }
    }
    const int ok = nc.ok;
    pthread_mutex_unlock(&nc_mu);
    return ok ? TCNLA_SUCCESS : TCNLA_ERR_NO_BACKEND;
}

#define NCCL_HOST_CHUNK 512 /* doubles of allreduce_host's device buffer */

typedef struct {
    nccl_comm_t comm;
    int owned;     /* destroyed with the communicator */
    double *dhost; /* device staging of allreduce_host, NCCL_HOST_CHUNK doubles */
} nccl_rank;

static int nst(int r) { return r == 0 ? TCNLA_SUCCESS : TCNLA_ERR_COMM; }

static int nccl_allreduce(tcnla_comm_t c, void *x, size_t count, tn_dtype_t dt, tn_redop_t op) {
    nccl_rank *r = c->impl;
    const int ndt = dt == TN_DT_F64 ? 8 : 7, nop = op == TN_OP_MIN ? 3 : op == TN_OP_MAX ? 2 : 0;
    if (count == 0) return TCNLA_SUCCESS;
    return nst(nc.all_reduce(x, x, count, ndt, nop, r->comm, c->h->cuda->stream));
}

static int nccl_reduce_scatter(tcnla_comm_t c, const void *send, void *recv, size_t count,
                               tn_dtype_t dt) {
    nccl_rank *r = c->impl;
    if (count == 0) return TCNLA_SUCCESS;
    return nst(nc.reduce_scatter(send, recv, count, dt == TN_DT_F64 ? 8 : 7, 0, r->comm,
                                 c->h->cuda->stream));
}

static int nccl_allgather(tcnla_comm_t c, const void *send, void *recv, size_t count,
                          tn_dtype_t dt) {
    nccl_rank *r = c->impl;
    if (count == 0) return TCNLA_SUCCESS;
    return nst(nc.all_gather(send, recv, count, dt == TN_DT_F64 ? 8 : 7, r->comm,
                             c->h->cuda->stream));
}

/* Through the rank's fixed device buffer (made with the communicator), in
 * chunks of NCCL_HOST_CHUNK values: no allocation here, so every rank
 * takes part in the same collectives whatever happens to its memory */
static int nccl_allreduce_host(tcnla_comm_t c, double *x, size_t count, tn_redop_t op) {
    nccl_rank *r = c->impl;
    struct tn_cuda_ctx *cx = c->h->cuda;
    int e = TCNLA_SUCCESS;
    for (size_t q = 0; q < count && !e; q += NCCL_HOST_CHUNK) {
        const size_t n = count - q < NCCL_HOST_CHUNK ? count - q : NCCL_HOST_CHUNK;
        e = tn_cuda_err(cudaMemcpyAsync(r->dhost, x + q, sizeof(double) * n,
                                        cudaMemcpyHostToDevice, cx->stream));
        if (!e) e = nccl_allreduce(c, r->dhost, n, TN_DT_F64, op);
        if (!e)
            e = tn_cuda_err(cudaMemcpyAsync(x + q, r->dhost, sizeof(double) * n,
                                            cudaMemcpyDeviceToHost, cx->stream));
        if (!e) e = tn_cuda_err(cudaStreamSynchronize(cx->stream));
    }
    return e;
}

static void nccl_destroy(tcnla_comm_t c) {
    nccl_rank *r = c->impl;
    if (!r) return;
    if (r->owned && r->comm) nc.destroy(r->comm);
    cudaFree(r->dhost);
    free(r);
    c->impl = NULL;
}

static const tn_comm_ops nccl_ops = {
    .name = "nccl",
    .allreduce = nccl_allreduce,
    .allreduce_host = nccl_allreduce_host,
    .reduce_scatter = nccl_reduce_scatter,
    .allgather = nccl_allgather,
    .destroy = nccl_destroy,
};

static int wrap(tcnla_comm_t *out, tcnla_handle_t h, nccl_comm_t comm, int owned, int size,
                int rank) {
    nccl_rank *r = calloc(1, sizeof *r);
    tcnla_comm_t c = r ? tn_comm_new(&nccl_ops, h, size, rank, r) : NULL;
    if (!c) {
        free(r);
        return TCNLA_ERR_ALLOC;
    }
    /* the staging buffer on the handle's device */
    const int saved = tn_cuda_current_device();
    cudaError_t e = cudaSetDevice(h->cuda->device);
    if (e == cudaSuccess) e = cudaMalloc((void **)&r->dhost, sizeof(double) * NCCL_HOST_CHUNK);
    tn_cuda_restore_device(saved);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        free(r), free(c);
        return TCNLA_ERR_ALLOC;
    }
    r->comm = comm, r->owned = owned;
    *out = c;
    return TCNLA_SUCCESS;
}

int tn_nccl_unique_id(unsigned char *id) {
    int st = nccl_load();
    if (st) return st;
    nccl_id_t u;
    memset(&u, 0, sizeof u);
    st = nst(nc.get_unique_id(&u));
    if (!st) memcpy(id, u.internal, TCNLA_COMM_ID_BYTES);
    return st;
}

/* the backend's comm_local: ncclCommInitAll over the handles' devices */
int tn_cuda_comm_local(tcnla_comm_t *comms, const tcnla_handle_t *hs, int n) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (hs[i]->cuda->device == hs[j]->cuda->device) return -2;
    int st = nccl_load();
    if (st) return st;
    int *dev = malloc(sizeof(int) * (size_t)n);
    nccl_comm_t *nco = calloc((size_t)n, sizeof *nco);
    if (!dev || !nco) {
        free(dev), free(nco);
        return TCNLA_ERR_ALLOC;
    }
    for (int i = 0; i < n; i++) dev[i] = hs[i]->cuda->device;
    const int saved = tn_cuda_current_device();
    st = nst(nc.init_all(nco, n, dev));
    tn_cuda_restore_device(saved);
    for (int i = 0; i < n && !st; i++) st = wrap(&comms[i], hs[i], nco[i], 1, n, i);
    if (st) {
        for (int i = 0; i < n; i++) {
            if (comms[i]) {
                nccl_destroy(comms[i]);
                free(comms[i]);
                comms[i] = NULL;
            } else if (nco[i]) {
                nc.destroy(nco[i]);
            }
        }
    }
    free(dev), free(nco);
    return st;
}

/* comm_init_rank: on the handle's device (made current by the caller's guard) */
int tn_cuda_comm_init_rank(tcnla_comm_t *comm, tcnla_handle_t h, int n, int rank,
                           const unsigned char *id) {
    int st = nccl_load();
    if (st) return st;
    nccl_id_t u;
    memcpy(u.internal, id, TCNLA_COMM_ID_BYTES);
    nccl_comm_t nco = NULL;
    st = nst(nc.init_rank(&nco, n, u, rank));
    if (st) return st;
    st = wrap(comm, h, nco, 1, n, rank);
    if (st) nc.destroy(nco);
    return st;
}

/* comm_wrap: the caller's ncclComm_t; its size and rank from NCCL */
int tn_cuda_comm_wrap(tcnla_comm_t *comm, tcnla_handle_t h, void *native) {
    int st = nccl_load();
    if (st) return st;
    int size = 0, rank = 0;
    if (nc.count((nccl_comm_t)native, &size) != 0 ||
        nc.user_rank((nccl_comm_t)native, &rank) != 0)
        return TCNLA_ERR_COMM;
    return wrap(comm, h, (nccl_comm_t)native, 0, size, rank);
}
