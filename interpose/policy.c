/* The policy of libtcnla_cublas.so: defaults, the environment
 * (TCNLA_CUBLAS_*, read once, at the first hooked call or the first call
 * of the API below) and tcnla_cublas_set_policy / _get_policy. A value of
 * the environment that does not parse leaves that setting at its default
 * and says so, once, on stderr. */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static tcnla_cublas_policy_t pol;
static int fp64_auto = 1; /* OZAKI_INT8 products in AUTO mode (0: DP mode, env ozaki_dp) */
static pthread_once_t pol_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t pol_mu = PTHREAD_MUTEX_INITIALIZER;

static tcnla_cublas_policy_t defaults(void) {
    tcnla_cublas_policy_t p;
    memset(&p, 0, sizeof p);
    p.fp32_method = TCNLA_GEMM_TCEC_FP16;
    p.fp64_method = TCNLA_GEMM_OZAKI_INT8;
    /* below these a call's fixed costs outweigh the Tensor Cores' speed:
     * a taken call waits once for its stream (the operand checks), which
     * drains the work the caller queued ahead; at 2 x 2048^3 the product
     * itself saves about 0.25 ms over SGEMM (H100: a training loop of
     * 512 x 2048 x 2048 products ran 0.35x as fast with them taken). The
     * FP64 products have no thresholds: the Ozaki scheme's AUTO mode
     * (src/gemm/ozaki_auto.c) sends each product the cost model predicts
     * slower than DGEMM to cuBLAS DGEMM (no stream wait: the choice comes
     * before the operand checks) */
    p.fp32_min_dim = 128;
    p.fp32_min_flops = 2.0 * 2048 * 2048 * 2048;
    p.fp64_min_dim = 0;
    p.fp64_min_flops = 0;
    return p;
}

static int valid(const tcnla_cublas_policy_t *p) {
    const tcnla_gemm_method_t f = p->fp32_method, d = p->fp64_method;
    return (f == TCNLA_GEMM_TCEC_FP16 || f == TCNLA_GEMM_TCEC_TF32 ||
            f == TCNLA_GEMM_NATIVE_FP32) &&
           (d == TCNLA_GEMM_OZAKI_INT8 || d == TCNLA_GEMM_OZAKI_FP16 ||
            d == TCNLA_GEMM_NATIVE_FP64) &&
           p->fp32_min_dim >= 0 && p->fp64_min_dim >= 0 && p->fp32_min_flops >= 0 &&
           p->fp64_min_flops >= 0; /* (false for NaN) */
}

static void bad(const char *var, const char *val) {
    fprintf(stderr, "libtcnla_cublas: %s=%s not understood; its default is kept\n", var, val);
}

static void env_size(const char *var, int64_t *dst) {
    const char *v = getenv(var);
    if (!v || !*v) return;
    char *end = NULL;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < 0) return bad(var, v);
    *dst = (int64_t)x;
}

static void env_flops(const char *var, double *dst) {
    const char *v = getenv(var);
    if (!v || !*v) return;
    char *end = NULL;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= 0) || isinf(x)) return bad(var, v);
    *dst = x;
}

static void load(void) {
    tcnla_cublas_policy_t p = defaults();
    const char *v = getenv("TCNLA_CUBLAS_FP32");
    if (v && *v) {
        if (!strcasecmp(v, "tcec_fp16") || !strcasecmp(v, "tcec-fp16"))
            p.fp32_method = TCNLA_GEMM_TCEC_FP16;
        else if (!strcasecmp(v, "tcec_tf32") || !strcasecmp(v, "tcec-tf32"))
            p.fp32_method = TCNLA_GEMM_TCEC_TF32;
        else if (!strcasecmp(v, "native"))
            p.fp32_method = TCNLA_GEMM_NATIVE_FP32;
        else
            bad("TCNLA_CUBLAS_FP32", v);
    }
    v = getenv("TCNLA_CUBLAS_FP64");
    if (v && *v) {
        if (!strcasecmp(v, "ozaki") || !strcasecmp(v, "ozaki_int8") ||
            !strcasecmp(v, "ozaki-int8"))
            p.fp64_method = TCNLA_GEMM_OZAKI_INT8;
        else if (!strcasecmp(v, "ozaki_dp") || !strcasecmp(v, "ozaki-dp"))
            p.fp64_method = TCNLA_GEMM_OZAKI_INT8, fp64_auto = 0;
        else if (!strcasecmp(v, "ozaki_fp16") || !strcasecmp(v, "ozaki-fp16"))
            p.fp64_method = TCNLA_GEMM_OZAKI_FP16;
        else if (!strcasecmp(v, "native"))
            p.fp64_method = TCNLA_GEMM_NATIVE_FP64;
        else
            bad("TCNLA_CUBLAS_FP64", v);
    }
    v = getenv("TCNLA_CUBLAS_DISABLE");
    if (v && *v && strcmp(v, "0")) {
        p.fp32_method = TCNLA_GEMM_NATIVE_FP32;
        p.fp64_method = TCNLA_GEMM_NATIVE_FP64;
    }
    env_size("TCNLA_CUBLAS_MIN_DIM", &p.fp32_min_dim);
    env_flops("TCNLA_CUBLAS_MIN_FLOPS", &p.fp32_min_flops);
    env_size("TCNLA_CUBLAS_FP64_MIN_DIM", &p.fp64_min_dim);
    env_flops("TCNLA_CUBLAS_FP64_MIN_FLOPS", &p.fp64_min_flops);
    pol = p;
}

int tci_fp64_auto(void) {
    pthread_once(&pol_once, load);
    return fp64_auto;
}

tcnla_cublas_policy_t tci_policy(void) {
    pthread_once(&pol_once, load);
    pthread_mutex_lock(&pol_mu);
    tcnla_cublas_policy_t p = pol;
    pthread_mutex_unlock(&pol_mu);
    return p;
}

TCI_EXPORT int tcnla_cublas_get_policy(tcnla_cublas_policy_t *policy) {
    if (!policy) return -1;
    *policy = tci_policy();
    return 0;
}

TCI_EXPORT int tcnla_cublas_set_policy(const tcnla_cublas_policy_t *policy) {
    if (!policy || !valid(policy)) return -1;
    pthread_once(&pol_once, load);
    pthread_mutex_lock(&pol_mu);
    pol = *policy;
    pthread_mutex_unlock(&pol_mu);
    return 0;
}
