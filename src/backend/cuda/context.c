/* The CUDA backend's handle state: device, stream, cuBLAS / cuSOLVER
 * handles, a grow-only device workspace and a small pinned host buffer.
 * Everything lives in the handle (h->cuda); nothing is global. Compiled
 * only when the build has CUDA (TCNLA_HAVE_CUDA); must stay harmless on a
 * machine with the toolkit but no driver or GPU (tn_cuda_device_count
 * then returns 0). */
#include "core/internal.h"
#include "backend/cuda/tn_cuda.h"

#include <stdlib.h>
#include <string.h>

int tn_cuda_err(cudaError_t e) {
    if (e == cudaSuccess) return TCNLA_SUCCESS;
    (void)cudaGetLastError(); /* clear a non-sticky error */
    if (e == cudaErrorMemoryAllocation) return TCNLA_ERR_ALLOC;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) return TCNLA_ERR_NO_BACKEND;
    return TCNLA_ERR_CUDA;
}

/* The pinned buffer's size at the handle's creation: the small SVD's reads
 * up to l = 1024 (the largest, its repair's, 16 l bytes in two regions;
 * tn_cuda_read_back grows it for larger l). */
#define TN_PINNED_BYTES 16384

int tn_cuda_device_count(void) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n < 0 ? 0 : n;
}

static void ctx_release(struct tn_cuda_ctx *c) {
    if (!c) return;
    if (c->stream || c->own_stream) cudaStreamSynchronize(c->stream);
    tn_cuda_i8_release(c);
    if (c->have_pool) cudaMemPoolDestroy(c->pool);
    if (c->ws) cudaFree(c->ws);
    if (c->defer_mem) cudaFree(c->defer_mem);
    if (c->pinned) cudaFreeHost(c->pinned);
    if (c->late_pinned) cudaFreeHost(c->late_pinned);
    if (c->mark_pinned) cudaFreeHost(c->mark_pinned);
    if (c->ev_mark) cudaEventDestroy(c->ev_mark);
    if (c->lam_pinned) cudaFreeHost(c->lam_pinned);
    if (c->ev_lam) cudaEventDestroy(c->ev_lam);
    if (c->flags_pinned) cudaFreeHost(c->flags_pinned);
    if (c->ev_flags) cudaEventDestroy(c->ev_flags);
    if (c->cusolver) cusolverDnDestroy(c->cusolver);
    if (c->cublas) cublasDestroy(c->cublas);
    if (c->own_stream) cudaStreamDestroy(c->own_stream);
    if (c->side) cudaStreamDestroy(c->side);
    if (c->ev_fork) cudaEventDestroy(c->ev_fork);
    if (c->ev_join) cudaEventDestroy(c->ev_join);
    if (c->lane_blas) cublasDestroy(c->lane_blas);
    if (c->lane) cudaStreamDestroy(c->lane);
    if (c->lane_fork) cudaEventDestroy(c->lane_fork);
    if (c->lane_join) cudaEventDestroy(c->lane_join);
    (void)cudaGetLastError();
    free(c);
}

/* The caller (tcnla_create_on_device) has made `device` current and gives
 * its own back after. */
int tn_cuda_create(tcnla_handle_t h, int device) {
    /* cuBLAS, cuBLASLt and cuSOLVER (cuda_libs.c): without them no CUDA
     * handle (AUTO then stays on the CPU) */
    int st = tn_cuda_libs_load();
    if (st != TCNLA_SUCCESS) return st;
    struct tn_cuda_ctx *c = calloc(1, sizeof *c);
    if (!c) return TCNLA_ERR_ALLOC;
    c->device = device;
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess) {
        st = tn_cuda_err(e);
        goto fail;
    }
    struct cudaDeviceProp prop;
    if ((e = cudaGetDeviceProperties(&prop, c->device)) != cudaSuccess) {
        st = tn_cuda_err(e);
        goto fail;
    }
    c->cc_major = prop.major;
    c->cc_minor = prop.minor;
    c->sm_count = prop.multiProcessorCount;
    c->smem_optin = prop.sharedMemPerBlockOptin;
    if ((e = cudaStreamCreateWithFlags(&c->own_stream, cudaStreamNonBlocking)) != cudaSuccess) {
        st = tn_cuda_err(e);
        goto fail;
    }
    c->stream = c->own_stream;
    if (cublasCreate(&c->cublas) != CUBLAS_STATUS_SUCCESS) {
        c->cublas = NULL;
        st = TCNLA_ERR_CUBLAS;
        goto fail;
    }
    if (cublasSetStream(c->cublas, c->stream) != CUBLAS_STATUS_SUCCESS ||
        cublasSetPointerMode(c->cublas, CUBLAS_POINTER_MODE_HOST) != CUBLAS_STATUS_SUCCESS) {
        st = TCNLA_ERR_CUBLAS;
        goto fail;
    }
    if (cusolverDnCreate(&c->cusolver) != CUSOLVER_STATUS_SUCCESS) {
        c->cusolver = NULL;
        st = TCNLA_ERR_CUSOLVER;
        goto fail;
    }
    if (cusolverDnSetStream(c->cusolver, c->stream) != CUSOLVER_STATUS_SUCCESS) {
        st = TCNLA_ERR_CUSOLVER;
        goto fail;
    }
    c->pinned_bytes = TN_PINNED_BYTES;
    if ((e = cudaMallocHost(&c->pinned, c->pinned_bytes)) != cudaSuccess) {
        c->pinned = NULL;
        st = tn_cuda_err(e);
        goto fail;
    }
    memset(c->pinned, 0, c->pinned_bytes);
    if ((e = cudaMallocHost((void **)&c->late_pinned, 64 * sizeof(int))) != cudaSuccess) {
        c->late_pinned = NULL;
        st = tn_cuda_err(e);
        goto fail;
    }
    size_t n = strlen(prop.name);
    if (n >= sizeof h->device_name) n = sizeof h->device_name - 1;
    memcpy(h->device_name, prop.name, n);
    h->device_name[n] = 0;
    c->tune = &h->tuning;
    h->cuda = c;
    return TCNLA_SUCCESS;
fail:
    ctx_release(c);
    return st;
}

void tn_cuda_destroy(tcnla_handle_t h) {
    if (!h || !h->cuda) return;
    cudaSetDevice(h->cuda->device);
    ctx_release(h->cuda);
    h->cuda = NULL;
}

void *tn_cuda_workspace(struct tn_cuda_ctx *c, size_t bytes) {
    c->cq_kept.valid = 0; /* whoever asks may overwrite them */
    c->gram_ahead.valid = 0;
    if (bytes == 0) bytes = 1;
    if (bytes <= c->ws_bytes) return c->ws;
    /* round up so that slowly growing requests do not reallocate each time */
    size_t want = bytes + bytes / 8;
    want = (want + ((size_t)1 << 20) - 1) & ~(((size_t)1 << 20) - 1);
    if (cudaStreamSynchronize(c->stream) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    if (c->ws) cudaFree(c->ws);
    c->ws = NULL;
    c->ws_bytes = 0;
    void *p = NULL;
    if (cudaMalloc(&p, want) != cudaSuccess) {
        (void)cudaGetLastError();
        if (cudaMalloc(&p, bytes) != cudaSuccess) { /* no headroom: the exact size */
            (void)cudaGetLastError();
            return NULL;
        }
        want = bytes;
    }
    c->ws = p;
    c->ws_bytes = want;
    return p;
}

size_t tn_cuda_workspace_bytes(tcnla_handle_t h) { return h->cuda->ws_bytes; }

/* What the scratch pool holds beyond its live blocks (those are counted as
 * allocations): kept for the next driver call. */
size_t tn_cuda_pool_idle_bytes(tcnla_handle_t h) {
    struct tn_cuda_ctx *c = h->cuda;
    if (!c->have_pool) return 0;
    uint64_t res = 0, used = 0;
    if (cudaMemPoolGetAttribute(c->pool, cudaMemPoolAttrReservedMemCurrent, &res) != cudaSuccess ||
        cudaMemPoolGetAttribute(c->pool, cudaMemPoolAttrUsedMemCurrent, &used) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return res > used ? (size_t)(res - used) : 0;
}

/* An allocation's status: a failed one leaves *p NULL and reads as out of
 * memory unless the runtime said more. */
static int alloc_st(cudaError_t e, void **p) {
    if (e == cudaSuccess) return TCNLA_SUCCESS;
    *p = NULL;
    const int st = tn_cuda_err(e);
    return st == TCNLA_ERR_CUDA ? TCNLA_ERR_ALLOC : st;
}

/* Scratch of the drivers (tcnla_rsvd, tcnla_lra, tcnla_hosvd): stream-ordered
 * blocks from the handle's own pool, which keeps what is freed for the next
 * call. cudaMalloc / cudaFree of their buffers (up to size(A) for randLRA's
 * E) cost milliseconds per call, and cudaFree waits for the whole device. */
int tn_cuda_scratch_malloc(tcnla_handle_t h, void **p, size_t bytes) {
    struct tn_cuda_ctx *c = h->cuda;
    *p = NULL;
    if (bytes == 0) return TCNLA_SUCCESS;
    cudaError_t e = cudaSetDevice(c->device);
    if (e == cudaSuccess && !c->have_pool) {
        struct cudaMemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = c->device;
        e = cudaMemPoolCreate(&c->pool, &props);
        if (e == cudaSuccess) {
            uint64_t keep = ~(uint64_t)0; /* keep freed blocks for the next call */
            c->have_pool = 1;
            e = cudaMemPoolSetAttribute(c->pool, cudaMemPoolAttrReleaseThreshold, &keep);
        }
    }
    if (e == cudaSuccess) e = cudaMallocFromPoolAsync(p, bytes, c->pool, c->stream);
    return alloc_st(e, p);
}

int tn_cuda_scratch_free(tcnla_handle_t h, void *p) {
    if (!p) return TCNLA_SUCCESS;
    return tn_cuda_err(cudaFreeAsync(p, h->cuda->stream));
}

int tn_cuda_malloc(tcnla_handle_t h, void **p, size_t bytes) {
    *p = NULL;
    if (bytes == 0) return TCNLA_SUCCESS;
    cudaError_t e = cudaSetDevice(h->cuda->device);
    if (e == cudaSuccess) e = cudaMalloc(p, bytes);
    return alloc_st(e, p);
}

int tn_cuda_free(tcnla_handle_t h, void *p) {
    if (!p) return TCNLA_SUCCESS;
    cudaError_t e = cudaSetDevice(h->cuda->device);
    if (e == cudaSuccess) e = cudaFree(p);
    return tn_cuda_err(e);
}

int tn_cuda_memcpy(tcnla_handle_t h, void *dst, const void *src, size_t bytes,
                   tcnla_memcpy_kind_t kind) {
    struct tn_cuda_ctx *c = h->cuda;
    enum cudaMemcpyKind k = kind == TCNLA_MEMCPY_HOST_TO_HANDLE   ? cudaMemcpyHostToDevice
                            : kind == TCNLA_MEMCPY_HANDLE_TO_HOST ? cudaMemcpyDeviceToHost
                                                                  : cudaMemcpyDeviceToDevice;
    cudaError_t e = cudaSetDevice(c->device);
    /* ordered after the work queued on the handle's stream; returns when
     * the copy is complete */
    if (e == cudaSuccess) e = cudaMemcpyAsync(dst, src, bytes, k, c->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    return tn_cuda_err(e);
}

int tn_cuda_set_stream(tcnla_handle_t h, void *stream) {
    struct tn_cuda_ctx *c = h->cuda;
    cudaStream_t s = stream ? (cudaStream_t)stream : (cudaStream_t)0;
    cudaError_t e = cudaSetDevice(c->device);
    /* work queued on the old stream may still use the workspace */
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    if (e != cudaSuccess) return tn_cuda_err(e);
    if (cublasSetStream(c->cublas, s) != CUBLAS_STATUS_SUCCESS) return TCNLA_ERR_CUBLAS;
    if (cusolverDnSetStream(c->cusolver, s) != CUSOLVER_STATUS_SUCCESS) return TCNLA_ERR_CUSOLVER;
    c->stream = s;
    return TCNLA_SUCCESS;
}

cudaStream_t tn_cuda_call_stream(const tn_call_t *cl) {
    return cl->side ? cl->h->cuda->side : cl->h->cuda->stream;
}

int tn_cuda_lane_fork(struct tn_cuda_ctx *c) {
    cudaError_t e = cudaSuccess;
    if (!c->lane && (e = cudaStreamCreateWithFlags(&c->lane, cudaStreamNonBlocking)) != cudaSuccess)
        c->lane = NULL;
    if (e == cudaSuccess && !c->lane_fork &&
        (e = cudaEventCreateWithFlags(&c->lane_fork, cudaEventDisableTiming)) != cudaSuccess)
        c->lane_fork = NULL;
    if (e == cudaSuccess && !c->lane_join &&
        (e = cudaEventCreateWithFlags(&c->lane_join, cudaEventDisableTiming)) != cudaSuccess)
        c->lane_join = NULL;
    if (e != cudaSuccess) return tn_cuda_err(e);
    if (!c->lane_blas) {
        if (cublasCreate(&c->lane_blas) != CUBLAS_STATUS_SUCCESS) {
            c->lane_blas = NULL;
            return TCNLA_ERR_CUBLAS;
        }
        if (cublasSetStream(c->lane_blas, c->lane) != CUBLAS_STATUS_SUCCESS ||
            cublasSetPointerMode(c->lane_blas, CUBLAS_POINTER_MODE_HOST) !=
                CUBLAS_STATUS_SUCCESS) {
            cublasDestroy(c->lane_blas);
            c->lane_blas = NULL;
            return TCNLA_ERR_CUBLAS;
        }
    }
    /* the lane starts after what the handle's stream has queued */
    if ((e = cudaEventRecord(c->lane_fork, c->stream)) == cudaSuccess)
        e = cudaStreamWaitEvent(c->lane, c->lane_fork, 0);
    return tn_cuda_err(e);
}

int tn_cuda_lane_join(struct tn_cuda_ctx *c) {
    cudaError_t e = cudaEventRecord(c->lane_join, c->lane);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(c->stream, c->lane_join, 0);
    if (e != cudaSuccess) { /* nothing to wait for by event: wait here */
        int st = tn_cuda_err(e);
        e = cudaStreamSynchronize(c->lane);
        return st ? st : tn_cuda_err(e);
    }
    return TCNLA_SUCCESS;
}

int tn_cuda_side_begin(tn_call_t *cl) {
    struct tn_cuda_ctx *c = cl->h->cuda;
    cudaError_t e = cudaSuccess;
    if (cl->side) return TCNLA_ERR_INTERNAL;
    if (!c->side) {
        int lo = 0, hi = 0;
        e = cudaDeviceGetStreamPriorityRange(&lo, &hi);
        if (e == cudaSuccess) e = cudaStreamCreateWithPriority(&c->side, cudaStreamNonBlocking, hi);
        if (e != cudaSuccess) c->side = NULL;
    }
    if (e == cudaSuccess && !c->ev_fork)
        if ((e = cudaEventCreateWithFlags(&c->ev_fork, cudaEventDisableTiming)) != cudaSuccess)
            c->ev_fork = NULL;
    if (e == cudaSuccess && !c->ev_join)
        if ((e = cudaEventCreateWithFlags(&c->ev_join, cudaEventDisableTiming)) != cudaSuccess)
            c->ev_join = NULL;
    /* the side stream starts after what the handle's stream has queued */
    if (e == cudaSuccess) e = cudaEventRecord(c->ev_fork, c->stream);
    if (e == cudaSuccess) e = cudaStreamWaitEvent(c->side, c->ev_fork, 0);
    if (e != cudaSuccess) return tn_cuda_err(e);
    cl->side = 1;
    return TCNLA_SUCCESS;
}

int tn_cuda_side_end(tn_call_t *cl) {
    struct tn_cuda_ctx *c = cl->h->cuda;
    if (!cl->side) return TCNLA_SUCCESS;
    cudaError_t e = cudaEventRecord(c->ev_join, c->side);
    cl->side = 0;
    if (e != cudaSuccess) { /* nothing to wait for by event: wait here */
        cudaStreamSynchronize(c->side);
        return tn_cuda_err(e);
    }
    cl->side_pending = 1;
    return TCNLA_SUCCESS;
}

int tn_cuda_side_join(tn_call_t *cl) {
    struct tn_cuda_ctx *c = cl->h->cuda;
    int st = tn_cuda_side_end(cl);
    if (!cl->side_pending) return st;
    cudaError_t e = cudaStreamWaitEvent(c->stream, c->ev_join, 0);
    if (e != cudaSuccess) e = cudaStreamSynchronize(c->side);
    cl->side_pending = 0;
    return st ? st : tn_cuda_err(e);
}

int tn_cuda_defer_begin(tn_call_t *cl) {
    struct tn_cuda_ctx *c = cl->h->cuda;
    if (cl->defer || cl->side) return TCNLA_ERR_INTERNAL;
    if (!c->tune->defer) return TCNLA_ERR_NOT_SUPPORTED; /* the comparison without deferral */
    cudaError_t e = cudaSuccess;
    if (!c->defer_mem &&
        (e = cudaMalloc((void **)&c->defer_mem, sizeof(int) * TN_DEFER_SLOTS)) != cudaSuccess) {
        c->defer_mem = NULL;
        return tn_cuda_err(e);
    }
    if (!c->defer_zero)
        e = cudaMemsetAsync(c->defer_mem, 0, sizeof(int) * TN_DEFER_SLOTS, c->stream);
    if (e != cudaSuccess) return tn_cuda_err(e);
    c->defer_zero = 0;
    cl->defer = c->defer_mem;
    cl->defer_held = 0;
    return TCNLA_SUCCESS;
}

int tn_cuda_defer_end(tn_call_t *cl, int *flags, const void *extra, void *host, size_t bytes) {
    struct tn_cuda_ctx *c = cl->h->cuda;
    memset(flags, 0, sizeof(int) * TN_DEFER_SLOTS);
    tn_cuda_read_t rd[2] = {{host, extra, bytes}, {flags, c->defer_mem, 0}};
    if (cl->defer) rd[1].bytes = sizeof(int) * TN_DEFER_SLOTS;
    cl->defer = NULL, cl->defer_held = 0;
    const int n = (bytes ? 1 : 0) + (rd[1].bytes ? 1 : 0);
    const int st = n ? tn_cuda_read_back(c, rd + (bytes ? 0 : 1), n) : TCNLA_SUCCESS;
    if (!st && rd[1].bytes) {
        int any = 0;
        for (int i = 0; i < TN_DEFER_SLOTS; i++) any |= flags[i];
        c->defer_zero = !any;
    }
    return st;
}

int tn_cuda_defer_mark(tn_call_t *cl) {
    struct tn_cuda_ctx *c = cl->h->cuda;
    if (!cl->defer) return TCNLA_ERR_NOT_SUPPORTED;
    cudaError_t e = cudaSuccess;
    if (!c->mark_pinned &&
        (e = cudaMallocHost((void **)&c->mark_pinned, sizeof(int) * TN_DEFER_SLOTS)) !=
            cudaSuccess) {
        c->mark_pinned = NULL;
        return tn_cuda_err(e);
    }
    if (!c->ev_mark && (e = cudaEventCreateWithFlags(&c->ev_mark, cudaEventDisableTiming)) !=
                           cudaSuccess) {
        c->ev_mark = NULL;
        return tn_cuda_err(e);
    }
    e = cudaMemcpyAsync(c->mark_pinned, c->defer_mem, sizeof(int) * TN_DEFER_SLOTS,
                        cudaMemcpyDeviceToHost, c->stream);
    if (e == cudaSuccess) e = cudaEventRecord(c->ev_mark, c->stream);
    return tn_cuda_err(e);
}

int tn_cuda_defer_marked(tn_call_t *cl, int *flags) {
    struct tn_cuda_ctx *c = cl->h->cuda;
    memset(flags, 0, sizeof(int) * TN_DEFER_SLOTS);
    if (!c->ev_mark || !c->mark_pinned) return TCNLA_ERR_INTERNAL;
    const cudaError_t e = cudaEventSynchronize(c->ev_mark);
    if (e != cudaSuccess) return tn_cuda_err(e);
    memcpy(flags, c->mark_pinned, sizeof(int) * TN_DEFER_SLOTS);
    if (c->mark_fault) flags[TN_DEFER_ORTH] |= 1;
    c->marks++;
    return TCNLA_SUCCESS;
}

int tn_cuda_defer_close(tn_call_t *cl) {
    if (!cl->defer) return TCNLA_ERR_NOT_SUPPORTED;
    cl->defer = NULL, cl->defer_held = 0;
    cl->h->cuda->defer_zero = 1; /* (the flags as marked, all clear) */
    return TCNLA_SUCCESS;
}

int tn_cuda_read_back(struct tn_cuda_ctx *c, const tn_cuda_read_t *r, int n) {
    size_t total = 0;
    for (int i = 0; i < n; i++) total += (r[i].bytes + 15) & ~(size_t)15;
    cudaError_t e = cudaSuccess;
    if (total > c->pinned_bytes) { /* (every use of the buffer has waited for its copies) */
        void *p = NULL;
        if (cudaMallocHost(&p, total) == cudaSuccess) {
            cudaFreeHost(c->pinned);
            c->pinned = p, c->pinned_bytes = total;
        } else { /* keep the buffer; straight into the destinations */
            (void)cudaGetLastError();
            for (int i = 0; i < n && e == cudaSuccess; i++)
                e = cudaMemcpyAsync(r[i].dst, r[i].src, r[i].bytes, cudaMemcpyDeviceToHost,
                                    c->stream);
            if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
            return tn_cuda_err(e);
        }
    }
    char *hp = (char *)c->pinned;
    size_t off = 0;
    for (int i = 0; i < n && e == cudaSuccess; i++) {
        e = cudaMemcpyAsync(hp + off, r[i].src, r[i].bytes, cudaMemcpyDeviceToHost, c->stream);
        off += (r[i].bytes + 15) & ~(size_t)15;
    }
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    if (e != cudaSuccess) return tn_cuda_err(e);
    off = 0;
    for (int i = 0; i < n; i++) {
        memcpy(r[i].dst, hp + off, r[i].bytes);
        off += (r[i].bytes + 15) & ~(size_t)15;
    }
    return TCNLA_SUCCESS;
}

int tn_cuda_synchronize(tcnla_handle_t h) {
    cudaError_t e = cudaSetDevice(h->cuda->device);
    if (e == cudaSuccess) e = cudaStreamSynchronize(h->cuda->stream);
    return tn_cuda_err(e);
}
