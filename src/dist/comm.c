/* Communicators (the public tcnla_comm_* calls, made by the handle's
 * backend) and the agreement protocol of the distributed drivers
 * (src/dist/dist.h). */
#include "dist/dist.h"
#include "core/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

tcnla_comm_t tn_comm_new(const tn_comm_ops *ops, tcnla_handle_t h, int size, int rank,
                         void *impl) {
    tcnla_comm_t c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->ops = ops, c->h = h, c->size = size, c->rank = rank, c->impl = impl;
    return c;
}

int tcnla_comm_create_local(tcnla_comm_t *comms, const tcnla_handle_t *handles, int nranks) {
    if (!comms) return -1;
    if (nranks < 1) return -3;
    for (int i = 0; i < nranks; i++) comms[i] = NULL;
    if (!handles) return -2;
    for (int i = 0; i < nranks; i++) {
        if (!handles[i] || handles[i]->ops != handles[0]->ops) return -2;
        for (int j = 0; j < i; j++)
            if (handles[j] == handles[i]) return -2; /* (the CUDA backend: devices too) */
    }
    if (!handles[0]->ops->comm_local) return TCNLA_ERR_NOT_SUPPORTED;
    return handles[0]->ops->comm_local(comms, handles, nranks);
}

int tcnla_comm_unique_id(unsigned char id[TCNLA_COMM_ID_BYTES]) {
    if (!id) return -1;
#ifdef TCNLA_HAVE_CUDA
    return tn_nccl_unique_id(id);
#else
    return TCNLA_ERR_NO_BACKEND;
#endif
}

int tcnla_comm_init_rank(tcnla_comm_t *comm, tcnla_handle_t handle, int nranks, int rank,
                         const unsigned char id[TCNLA_COMM_ID_BYTES]) {
    if (!comm) return -1;
    *comm = NULL;
    if (!handle) return -2;
    if (nranks < 1) return -3;
    if (rank < 0 || rank >= nranks) return -4;
    if (!id) return -5;
    if (!handle->ops->comm_init_rank) return TCNLA_ERR_NOT_SUPPORTED;
    TN_GUARD(handle);
    return handle->ops->comm_init_rank(comm, handle, nranks, rank, id);
}

int tcnla_comm_from_nccl(tcnla_comm_t *comm, tcnla_handle_t handle, void *nccl_comm) {
    if (!comm) return -1;
    *comm = NULL;
    if (!handle) return -2;
    if (!nccl_comm) return -3;
    if (!handle->ops->comm_wrap) return TCNLA_ERR_NOT_SUPPORTED;
    TN_GUARD(handle);
    return handle->ops->comm_wrap(comm, handle, nccl_comm);
}

int tcnla_comm_size(tcnla_comm_t comm, int *size) {
    if (!comm) return -1;
    if (!size) return -2;
    *size = comm->size;
    return TCNLA_SUCCESS;
}

int tcnla_comm_rank(tcnla_comm_t comm, int *rank) {
    if (!comm) return -1;
    if (!rank) return -2;
    *rank = comm->rank;
    return TCNLA_SUCCESS;
}

int tcnla_comm_handle(tcnla_comm_t comm, tcnla_handle_t *handle) {
    if (!comm) return -1;
    if (!handle) return -2;
    *handle = comm->h;
    return TCNLA_SUCCESS;
}

int tcnla_comm_sum_host(tcnla_comm_t comm, double *x, int64_t count) {
    if (!comm) return -1;
    if (count < 0) return -3;
    if (!x && count > 0) return -2;
    if (count == 0) return TCNLA_SUCCESS;
    TN_GUARD(comm->h);
    return comm->ops->allreduce_host(comm, x, (size_t)count, TN_OP_SUM);
}

int tcnla_comm_destroy(tcnla_comm_t comm) {
    if (!comm) return TCNLA_SUCCESS;
    {
        TN_GUARD(comm->h);
        comm->ops->destroy(comm);
    }
    free(comm);
    return TCNLA_SUCCESS;
}

int tcnla_dist_rows(int64_t m, int nranks, int rank, int64_t *row0, int64_t *rows) {
    if (nranks < 1) return -2;
    if (m < nranks) return -1;
    if (rank < 0 || rank >= nranks) return -3;
    if (!row0) return -4;
    if (!rows) return -5;
    const int64_t q = m / nranks, r = m % nranks;
    *rows = q + (rank < r ? 1 : 0);
    *row0 = q * rank + (rank < r ? rank : r);
    return TCNLA_SUCCESS;
}

/* ------------------------------------------------------------ agreement */
int tn_dist_agree(tn_call_t *cl, int st) {
    if (!cl->comm) return st;
    if (cl->comm_failed) return cl->comm_status;
    double v = (double)st;
    const int e = cl->comm->ops->allreduce_host(cl->comm, &v, 1, TN_OP_MIN);
    const int agreed = e ? e : (int)v;
    if (agreed != TCNLA_SUCCESS) cl->comm_failed = 1, cl->comm_status = agreed;
    return agreed;
}

int tn_dist_begin(tn_call_t *cl, tcnla_comm_t comm, int st, uint64_t key, int64_t m_local,
                  int64_t *m) {
    cl->comm = comm;
    /* the status and the key's halves (each exact in a double) with MIN,
     * then their negatives' MIN gives the MAX: unequal keys show there */
    double v[6] = {(double)st,
                   (double)(key >> 32),
                   (double)(key & 0xffffffffu),
                   -(double)(key >> 32),
                   -(double)(key & 0xffffffffu),
                   0.0};
    int e = comm->ops->allreduce_host(comm, v, 5, TN_OP_MIN);
    int agreed = e ? e : (int)v[0];
    if (!agreed && (v[1] != -v[3] || v[2] != -v[4])) agreed = TCNLA_ERR_COMM;
    if (!agreed) { /* the global row count */
        v[5] = (double)m_local;
        e = comm->ops->allreduce_host(comm, v + 5, 1, TN_OP_SUM);
        if (e) agreed = e;
        else *m = (int64_t)v[5];
    }
    if (agreed != TCNLA_SUCCESS) cl->comm_failed = 1, cl->comm_status = agreed;
    return agreed;
}

int tn_dist_end(tn_call_t *cl, int st) {
    if (!cl->comm) return st;
    if (cl->comm_failed) return cl->comm_status;
    return tn_dist_agree(cl, st);
}

int tn_dist_sum(tn_call_t *cl, void *x, int64_t count, tn_dtype_t dt) {
    if (!cl->comm) return TCNLA_SUCCESS;
    int st = tn_dist_agree(cl, TCNLA_SUCCESS);
    if (st) return st;
    return cl->comm->ops->allreduce(cl->comm, x, (size_t)count, dt, TN_OP_SUM);
}

int tn_dist_sum_cols(tn_call_t *cl, float *X, int64_t rows, int64_t cols, int64_t ld) {
    if (!cl->comm) return TCNLA_SUCCESS;
    if (ld == rows) return tn_dist_sum(cl, X, rows * cols, TN_DT_F32);
    int st = tn_dist_agree(cl, TCNLA_SUCCESS);
    for (int64_t j = 0; j < cols && !st; j++)
        st = cl->comm->ops->allreduce(cl->comm, X + j * ld, (size_t)rows, TN_DT_F32, TN_OP_SUM);
    return st;
}

int tn_dist_reduce_scatter(tn_call_t *cl, const void *send, void *recv, int64_t count,
                           tn_dtype_t dt) {
    if (!cl->comm) return TCNLA_SUCCESS;
    int st = tn_dist_agree(cl, TCNLA_SUCCESS);
    if (st) return st;
    return cl->comm->ops->reduce_scatter(cl->comm, send, recv, (size_t)count, dt);
}

int tn_dist_allgather(tn_call_t *cl, const void *send, void *recv, int64_t count, tn_dtype_t dt) {
    if (!cl->comm) return TCNLA_SUCCESS;
    int st = tn_dist_agree(cl, TCNLA_SUCCESS);
    if (st) return st;
    return cl->comm->ops->allgather(cl->comm, send, recv, (size_t)count, dt);
}

int tn_dist_reduce_host(tn_call_t *cl, double *x, int64_t count, tn_redop_t op) {
    if (!cl->comm) return TCNLA_SUCCESS;
    int st = tn_dist_agree(cl, TCNLA_SUCCESS);
    if (st) return st;
    return cl->comm->ops->allreduce_host(cl->comm, x, (size_t)count, op);
}

int tn_dist_gram_sum(tn_call_t *cl, double *G, int64_t count) {
    if (!cl->comm || cl->dist_rows <= 0) return TCNLA_SUCCESS;
    return tn_dist_sum(cl, G, count, TN_DT_F64);
}

uint64_t tn_dist_key(const uint64_t *w, int n) {
    uint64_t x = 0xcbf29ce484222325ull;
    for (int i = 0; i < n; i++)
        for (int b = 0; b < 8; b++) x = (x ^ ((w[i] >> (8 * b)) & 0xffu)) * 0x100000001b3ull;
    return x;
}
