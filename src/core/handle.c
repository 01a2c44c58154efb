/* Handle life cycle, status text, backend selection and memory helpers. */
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *tcnla_version(void) { return TCNLA_VERSION_STRING; }

const char *tcnla_strerror(int status) {
    static const char *const argmsg[] = {
        "invalid argument 1", "invalid argument 2", "invalid argument 3", "invalid argument 4",
        "invalid argument 5", "invalid argument 6", "invalid argument 7", "invalid argument 8",
        "invalid argument 9", "invalid argument 10", "invalid argument 11",
        "invalid argument 12", "invalid argument 13", "invalid argument 14",
        "invalid argument 15", "invalid argument 16"};
    switch (status) {
    case TCNLA_SUCCESS: return "success";
    case TCNLA_ERR_ALLOC: return "memory allocation failed";
    case TCNLA_ERR_NO_BACKEND: return "backend not available (not compiled in, or no GPU present)";
    case TCNLA_ERR_NOT_SUPPORTED: return "operation not supported by this method or backend";
    case TCNLA_ERR_RANGE:
        return "input outside the range the method's FP16 split can represent "
               "(use a TF32-based method or the range fallback policy)";
    case TCNLA_ERR_CUDA: return "CUDA runtime error";
    case TCNLA_ERR_CUBLAS: return "cuBLAS error";
    case TCNLA_ERR_CUSOLVER: return "cuSOLVER error";
    case TCNLA_ERR_NUMERICAL: return "numerical breakdown";
    case TCNLA_ERR_INTERNAL: return "internal error (a bug in tcnla)";
    default: break;
    }
    if (status < 0 && status >= -16) return argmsg[-status - 1];
    if (status < 0 && status > -100) return "invalid argument";
    return "unknown status";
}

tcnla_tc_model_t tcnla_tc_model_default(void) {
    tcnla_tc_model_t m;
    m.acc_bits = 25;
    m.k_per_mma = 16;
    m.tcec_chunk = 16;
    return m;
}

int tcnla_cuda_available(int *compiled_in, int *device_count) {
#ifdef TCNLA_HAVE_CUDA
    if (compiled_in) *compiled_in = 1;
    if (device_count) *device_count = tn_cuda_device_count();
#else
    if (compiled_in) *compiled_in = 0;
    if (device_count) *device_count = 0;
#endif
    return TCNLA_SUCCESS;
}

int tcnla_create_on_device(tcnla_handle_t *handle, tcnla_backend_t backend, int device) {
    if (!handle) return -1;
    *handle = NULL;
    if (backend != TCNLA_BACKEND_AUTO && backend != TCNLA_BACKEND_CPU &&
        backend != TCNLA_BACKEND_CUDA)
        return -2;
    int ngpu = 0;
    tcnla_cuda_available(NULL, &ngpu);
    if (device < 0 || (backend == TCNLA_BACKEND_CPU && device != 0) ||
        (backend == TCNLA_BACKEND_CUDA && ngpu > 0 && device >= ngpu) ||
        (backend == TCNLA_BACKEND_AUTO && ngpu > 0 && device >= ngpu))
        return -3;
    if (backend == TCNLA_BACKEND_CUDA && ngpu == 0) return TCNLA_ERR_NO_BACKEND;
    struct tcnla_handle_s *h = calloc(1, sizeof *h);
    if (!h) return TCNLA_ERR_ALLOC;
    pthread_mutexattr_t attr;
    if (pthread_mutexattr_init(&attr) != 0 ||
        pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE) != 0 ||
        pthread_mutex_init(&h->lock, &attr) != 0) {
        free(h);
        return TCNLA_ERR_INTERNAL;
    }
    pthread_mutexattr_destroy(&attr);
    h->ops = &tn_cpu_ops;
    h->device = -1;
    h->method = TCNLA_GEMM_NATIVE_FP32;
    h->range_policy = TCNLA_RANGE_ERROR;
    h->model = tcnla_tc_model_default();
    h->ozaki = tcnla_ozaki_opts_default();
    tn_tuning_from_env(&h->tuning);
    h->backend = TCNLA_BACKEND_CPU;
    strcpy(h->device_name, "CPU");
#ifdef TCNLA_HAVE_CUDA
    if (ngpu > 0 && backend != TCNLA_BACKEND_CPU) {
        const int saved = tn_cuda_current_device(); /* given back below */
        int st = tn_cuda_create(h, device);
        tn_cuda_restore_device(saved);
        if (st == TCNLA_SUCCESS) {
            h->backend = TCNLA_BACKEND_CUDA;
            h->ops = &tn_cuda_ops;
            h->device = device;
        } else if (backend == TCNLA_BACKEND_CUDA) {
            pthread_mutex_destroy(&h->lock);
            free(h);
            return st;
        } /* AUTO: a GPU that cannot be initialised leaves the CPU backend */
    }
#endif
    *handle = h;
    return TCNLA_SUCCESS;
}

int tcnla_create(tcnla_handle_t *handle, tcnla_backend_t backend) {
    int device = 0;
#ifdef TCNLA_HAVE_CUDA
    if (backend != TCNLA_BACKEND_CPU) device = tn_cuda_current_device();
#endif
    return tcnla_create_on_device(handle, backend, device);
}

int tcnla_destroy(tcnla_handle_t h) {
    if (!h) return TCNLA_SUCCESS;
    {
        TN_GUARD(h);
        /* blocks of tcnla_malloc still live are freed with the handle (and
         * any scratch block a failed driver left, which none should) */
        for (size_t i = 0; i < h->mem.cap; i++)
            if (h->mem.keys[i]) {
                if (h->mem.scratch[i])
                    h->ops->scratch_free(h, h->mem.keys[i]);
                else
                    h->ops->free(h, h->mem.keys[i]);
            }
        h->ops->destroy(h);
        free(h->host_ws);
        free(h->mem.keys);
        free(h->mem.sizes);
        free(h->mem.scratch);
    }
    pthread_mutex_destroy(&h->lock);
    free(h);
    return TCNLA_SUCCESS;
}

tn_guard_t tn_guard_enter(tcnla_handle_t h) {
    tn_guard_t g = {h, -1};
    if (h) {
        pthread_mutex_lock(&h->lock);
        h->ops->enter(h, &g.saved);
    }
    return g;
}

void tn_guard_leave(tn_guard_t *g) {
    if (!g->h) return;
    g->h->ops->leave(g->h, g->saved);
    pthread_mutex_unlock(&g->h->lock);
}

/* tcnla_get_backend, tcnla_get_device and tcnla_device_name read fields
 * written once by tcnla_create_on_device and never again: they take no
 * lock (a caller may ask while another thread's long call holds it). */
int tcnla_get_backend(tcnla_handle_t h, tcnla_backend_t *backend) {
    if (!h) return -1;
    if (!backend) return -2;
    *backend = h->backend;
    return TCNLA_SUCCESS;
}

int tcnla_get_device(tcnla_handle_t h, int *device) {
    if (!h) return -1;
    if (!device) return -2;
    *device = h->device;
    return TCNLA_SUCCESS;
}

int tcnla_device_name(tcnla_handle_t h, char *buf, size_t len) {
    if (!h) return -1;
    if (!buf || len == 0) return -2;
    size_t n = strlen(h->device_name);
    if (n >= len) n = len - 1;
    memcpy(buf, h->device_name, n);
    buf[n] = 0;
    return TCNLA_SUCCESS;
}

int tcnla_set_stream(tcnla_handle_t h, void *stream) {
    if (!h) return -1;
    TN_GUARD(h);
    return h->ops->set_stream(h, stream);
}

int tcnla_synchronize(tcnla_handle_t h) {
    if (!h) return -1;
    TN_GUARD(h);
    return h->ops->synchronize(h);
}

void *tn_host_workspace(tcnla_handle_t h, size_t bytes) {
    if (bytes <= h->host_ws_bytes) return h->host_ws;
    void *p = malloc(bytes);
    if (!p) return NULL;
    free(h->host_ws);
    h->host_ws = p;
    h->host_ws_bytes = bytes;
    return p;
}

/* ------------------------------------------------- allocation tracking */
static size_t slot_of(const void *p, size_t cap) {
    uintptr_t x = (uintptr_t)p;
    x ^= x >> 17;
    x *= (uintptr_t)0x9e3779b97f4a7c15ULL;
    return (size_t)(x >> 7) & (cap - 1);
}

/* Records a live block. Every block handed out is in the table (tcnla_free
 * and tcnla_destroy rely on it): when the table cannot grow, the caller
 * frees the block and the allocation fails with TCNLA_ERR_ALLOC. */
static int track_add(tcnla_handle_t h, void *p, size_t bytes, int scratch) {
    if (2 * (h->mem.count + 1) > h->mem.cap) {
        size_t ncap = h->mem.cap ? 2 * h->mem.cap : 64;
        void **nk = calloc(ncap, sizeof *nk);
        size_t *ns = calloc(ncap, sizeof *ns);
        unsigned char *nf = calloc(ncap, 1);
        if (!nk || !ns || !nf) {
            free(nk), free(ns), free(nf);
            return TCNLA_ERR_ALLOC;
        }
        for (size_t i = 0; i < h->mem.cap; i++)
            if (h->mem.keys[i]) {
                size_t j = slot_of(h->mem.keys[i], ncap);
                while (nk[j]) j = (j + 1) & (ncap - 1);
                nk[j] = h->mem.keys[i], ns[j] = h->mem.sizes[i], nf[j] = h->mem.scratch[i];
            }
        free(h->mem.keys), free(h->mem.sizes), free(h->mem.scratch);
        h->mem.keys = nk, h->mem.sizes = ns, h->mem.scratch = nf, h->mem.cap = ncap;
    }
    size_t j = slot_of(p, h->mem.cap);
    while (h->mem.keys[j]) j = (j + 1) & (h->mem.cap - 1);
    h->mem.keys[j] = p, h->mem.sizes[j] = bytes, h->mem.scratch[j] = (unsigned char)scratch;
    h->mem.count++;
    h->mem.live += bytes;
    if (h->mem.live > h->mem.peak_live) h->mem.peak_live = h->mem.live;
    return TCNLA_SUCCESS;
}

/* Removes a live block of the given kind; returns 0 when p is not one. */
static int track_remove(tcnla_handle_t h, void *p, int scratch) {
    if (!h->mem.cap) return 0;
    size_t j = slot_of(p, h->mem.cap);
    while (h->mem.keys[j] && h->mem.keys[j] != p) j = (j + 1) & (h->mem.cap - 1);
    if (!h->mem.keys[j] || h->mem.scratch[j] != scratch) return 0;
    h->mem.live -= h->mem.sizes[j];
    h->mem.keys[j] = NULL;
    h->mem.count--;
    /* re-insert the rest of the probe run */
    for (size_t i = (j + 1) & (h->mem.cap - 1); h->mem.keys[i]; i = (i + 1) & (h->mem.cap - 1)) {
        void *k = h->mem.keys[i];
        size_t sz = h->mem.sizes[i];
        unsigned char f = h->mem.scratch[i];
        h->mem.keys[i] = NULL;
        size_t t = slot_of(k, h->mem.cap);
        while (h->mem.keys[t]) t = (t + 1) & (h->mem.cap - 1);
        h->mem.keys[t] = k, h->mem.sizes[t] = sz, h->mem.scratch[t] = f;
    }
    return 1;
}

int tcnla_memory_stats(tcnla_handle_t h, size_t *current, size_t *peak) {
    if (!h) return -1;
    TN_GUARD(h);
    const size_t ws = h->ops->workspace_bytes(h), idle = h->ops->pool_idle_bytes(h);
    if (current) *current = h->mem.live + ws + idle;
    if (peak) *peak = h->mem.peak_live + ws;
    return TCNLA_SUCCESS;
}

int tcnla_reset_peak_memory(tcnla_handle_t h) {
    if (!h) return -1;
    TN_GUARD(h);
    h->mem.peak_live = h->mem.live;
    return TCNLA_SUCCESS;
}

int tcnla_malloc(tcnla_handle_t h, void **ptr, size_t bytes) {
    if (!h) return -1;
    if (!ptr) return -2;
    *ptr = NULL;
    if (bytes == 0) return TCNLA_SUCCESS;
    TN_GUARD(h);
    const int st = h->ops->malloc(h, ptr, bytes);
    if (st == TCNLA_SUCCESS && *ptr && track_add(h, *ptr, bytes, 0) != TCNLA_SUCCESS) {
        h->ops->free(h, *ptr);
        *ptr = NULL;
        return TCNLA_ERR_ALLOC;
    }
    return st;
}

/* Only a live block of tcnla_malloc on this handle reaches the backend's
 * free: anything else (a pointer from elsewhere, another handle's block, a
 * block freed before) returns -2 and is left alone. */
int tcnla_free(tcnla_handle_t h, void *ptr) {
    if (!h) return -1;
    if (!ptr) return TCNLA_SUCCESS;
    TN_GUARD(h);
    if (!track_remove(h, ptr, 0)) return -2;
    return h->ops->free(h, ptr);
}

int tn_scratch_malloc(tcnla_handle_t h, void **ptr, size_t bytes) {
    *ptr = NULL;
    if (bytes == 0) return TCNLA_SUCCESS;
    const int st = h->ops->scratch_malloc(h, ptr, bytes);
    if (st == TCNLA_SUCCESS && *ptr && track_add(h, *ptr, bytes, 1) != TCNLA_SUCCESS) {
        h->ops->scratch_free(h, *ptr);
        *ptr = NULL;
        return TCNLA_ERR_ALLOC;
    }
    return st;
}

int tn_scratch_free(tcnla_handle_t h, void *ptr) {
    if (!ptr) return TCNLA_SUCCESS;
    if (!track_remove(h, ptr, 1)) return TCNLA_ERR_INTERNAL;
    return h->ops->scratch_free(h, ptr);
}

int tcnla_memcpy(tcnla_handle_t h, void *dst, const void *src, size_t bytes,
                 tcnla_memcpy_kind_t kind) {
    if (!h) return -1;
    if (!dst && bytes) return -2;
    if (!src && bytes) return -3;
    if (kind != TCNLA_MEMCPY_HOST_TO_HANDLE && kind != TCNLA_MEMCPY_HANDLE_TO_HOST &&
        kind != TCNLA_MEMCPY_HANDLE_TO_HANDLE)
        return -5;
    if (bytes == 0) return TCNLA_SUCCESS;
    TN_GUARD(h);
    return h->ops->memcpy(h, dst, src, bytes, kind);
}

/* ------------------------------------------------------------- settings */
int tcnla_set_gemm_method(tcnla_handle_t h, tcnla_gemm_method_t method) {
    if (!h) return -1;
    TN_GUARD(h);
    if ((int)method <= (int)TCNLA_GEMM_DEFAULT || (int)method >= (int)TCNLA_GEMM_METHOD_COUNT)
        return -2;
    h->method = method;
    return TCNLA_SUCCESS;
}

int tcnla_get_gemm_method(tcnla_handle_t h, tcnla_gemm_method_t *method) {
    if (!h) return -1;
    if (!method) return -2;
    TN_GUARD(h);
    *method = h->method;
    return TCNLA_SUCCESS;
}

int tcnla_set_range_policy(tcnla_handle_t h, tcnla_range_policy_t policy) {
    if (!h) return -1;
    TN_GUARD(h);
    if (policy != TCNLA_RANGE_ERROR && policy != TCNLA_RANGE_FALLBACK) return -2;
    h->range_policy = policy;
    return TCNLA_SUCCESS;
}

int tcnla_set_tc_model(tcnla_handle_t h, const tcnla_tc_model_t *m) {
    if (!h) return -1;
    TN_GUARD(h);
    if (!m || (m->acc_bits != 24 && m->acc_bits != 25) ||
        (m->k_per_mma != 4 && m->k_per_mma != 8 && m->k_per_mma != 16) || m->tcec_chunk <= 0 ||
        m->tcec_chunk % m->k_per_mma != 0)
        return -2;
    h->model = *m;
    return TCNLA_SUCCESS;
}

tcnla_ozaki_opts_t tcnla_ozaki_opts_default(void) {
    tcnla_ozaki_opts_t o;
    o.mode = TCNLA_OZAKI_DP;
    o.slices = 0;
    o.fast = 1;
    o.workspace_cap = 0;
    o.scheme = TCNLA_OZAKI_SCHEME_AUTO;
    return o;
}

int tcnla_set_ozaki_opts(tcnla_handle_t h, const tcnla_ozaki_opts_t *o) {
    if (!h) return -1;
    TN_GUARD(h);
    if (!o || (o->mode != TCNLA_OZAKI_DP && o->mode != TCNLA_OZAKI_CR &&
               o->mode != TCNLA_OZAKI_FIXED && o->mode != TCNLA_OZAKI_AUTO) ||
        (o->mode == TCNLA_OZAKI_FIXED && (o->slices < 1 || o->slices > 64)) ||
        (o->fast != 0 && o->fast != 1) ||
        ((int)o->scheme < 0 || (int)o->scheme > 2) ||
        (o->scheme == TCNLA_OZAKI_SCHEME_2 &&
         (o->mode == TCNLA_OZAKI_CR || (o->mode == TCNLA_OZAKI_FIXED && o->slices > 20))))
        return -2;
    h->ozaki = *o;
    return TCNLA_SUCCESS;
}

int tcnla_get_ozaki_opts(tcnla_handle_t h, tcnla_ozaki_opts_t *o) {
    if (!h) return -1;
    if (!o) return -2;
    TN_GUARD(h);
    *o = h->ozaki;
    return TCNLA_SUCCESS;
}

int tcnla_get_tc_model(tcnla_handle_t h, tcnla_tc_model_t *m) {
    if (!h) return -1;
    if (!m) return -2;
    TN_GUARD(h);
    *m = h->model;
    return TCNLA_SUCCESS;
}

/* --------------------------------------------------------- method names */
static const char *const method_names[TCNLA_GEMM_METHOD_COUNT] = {
    "default",  "native_fp32", "native_fp64", "tf32",        "fp16",       "markidis_fp16",
    "tcec_fp16", "tcec_tf32",  "shgemm_fp16", "shgemm_tf32", "ozaki_fp16", "ozaki_int8"};

const char *tcnla_gemm_method_name(tcnla_gemm_method_t m) {
    if ((int)m < 0 || (int)m >= (int)TCNLA_GEMM_METHOD_COUNT) return "unknown";
    return method_names[m];
}

int tcnla_gemm_method_from_name(const char *name, tcnla_gemm_method_t *method) {
    if (!name) return -1;
    if (!method) return -2;
    char buf[32];
    size_t n = strlen(name);
    if (n >= sizeof buf) return -1;
    for (size_t i = 0; i <= n; i++) buf[i] = (name[i] == '-') ? '_' : name[i];
    for (int i = 0; i < (int)TCNLA_GEMM_METHOD_COUNT; i++) {
        if (strcasecmp(buf, method_names[i]) == 0) {
            *method = (tcnla_gemm_method_t)i;
            return TCNLA_SUCCESS;
        }
    }
    /* common aliases */
    if (!strcasecmp(buf, "sgemm") || !strcasecmp(buf, "fp32")) {
        *method = TCNLA_GEMM_NATIVE_FP32;
        return TCNLA_SUCCESS;
    }
    if (!strcasecmp(buf, "fp64") || !strcasecmp(buf, "dgemm")) {
        *method = TCNLA_GEMM_NATIVE_FP64;
        return TCNLA_SUCCESS;
    }
    return -1;
}

/* ---------------------------------------------- the drivers' modes */
int tn_side_begin(tn_call_t *cl) { return cl->h->ops->side_begin(cl); }
int tn_side_end(tn_call_t *cl) { return cl->h->ops->side_end(cl); }
int tn_side_join(tn_call_t *cl) { return cl->h->ops->side_join(cl); }
int tn_defer_begin(tn_call_t *cl) { return cl->h->ops->defer_begin(cl); }
int tn_defer_end(tn_call_t *cl, int *flags) {
    return cl->h->ops->defer_end(cl, flags, NULL, NULL, 0);
}
int tn_defer_end_read(tn_call_t *cl, int *flags, const void *extra, void *host, size_t bytes) {
    return cl->h->ops->defer_end(cl, flags, extra, host, bytes);
}
void tn_defer_hold(tn_call_t *cl, int hold) { cl->defer_held = cl->defer && hold; }
int tn_defer_mark(tn_call_t *cl) { return cl->h->ops->defer_mark(cl); }
int tn_defer_marked(tn_call_t *cl, int *flags) { return cl->h->ops->defer_marked(cl, flags); }
int tn_defer_close(tn_call_t *cl) { return cl->h->ops->defer_close(cl); }

int tn_hosvd_fused(tn_call_t *cl, int64_t I1, int64_t I2, int64_t T, const float *A,
                   const float *Q, int64_t J1, const uint16_t *Om, int64_t J2, float *Out,
                   float *W, int *done) {
    *done = 0;
    const int st = cl->h->ops->hosvd_fused(cl, I1, I2, T, A, Q, J1, Om, J2, Out, W, done);
    if (st == TCNLA_SUCCESS && *done) { /* two products: the core's first and a projection */
        cl->info.method = TCNLA_GEMM_TCEC_FP16;
        tn_call_count(cl, TCNLA_GEMM_TCEC_FP16);
        cl->info.method = TCNLA_GEMM_SHGEMM_FP16;
        tn_call_count(cl, TCNLA_GEMM_SHGEMM_FP16);
    }
    return st;
}

int tn_hosvd_fused_possible(tcnla_handle_t h, int64_t I1, int64_t J1, int64_t J2) {
    return h->ops->hosvd_fused_possible(h, I1, J1, J2);
}
