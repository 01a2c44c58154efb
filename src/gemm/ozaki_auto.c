/* TCNLA_OZAKI_AUTO: the Ozaki scheme II in DP mode where a cost model
 * predicts it faster than the native GEMM of the output precision, the
 * native GEMM (cuBLAS DGEMM / SGEMM, BLAS on the CPU) elsewhere.
 *
 * The model (seconds, for an m x n x k product, N moduli, e = 8 bytes per
 * element for tcnla_dgemm and 4 for tcnla_sgemm):
 *   native  t0_nat + 2 m n k / (R_nat f(m, h_nat) f(n, h_nat) f(k, h_nat))
 *   scheme  t0_oz + N 2 m n k / (R_i8 f(m, h_i8) f(n, h_i8) f(k, h_i8))
 *             + bytes / BW,
 *           bytes = 2 e (m k + k n)         (two reads of A and B: the plan, the residues)
 *                 + N (m k + k n)           (the INT8 residues, written once)
 *                 + 8 N m n                 (the INT32 products, written and read)
 *                 + e m n                   (C)
 *   with f(x, h) = x / (x + h), the efficiency of a dimension x (a GEMM's
 *   rate falls for small or skinny shapes: tiles left partly empty, too
 *   few tiles for the SMs, the k loop too short to hide its prologue).
 * N comes from the DP rule (tn_oz2_plan): the moduli must hold about
 * needA + needB bits, and for a row of op(A) need = log2(||w|| / (c u g)) -
 * 1 - sigma = log2(1 / (c u)) - 1 = p + 3 for p-bit output and c = 1/16
 * when the row's and w's magnitudes are even (g = |a| . w ~ ||a|| ||w|| /
 * sqrt(k), 2^-sigma ~ ||a||): the k terms cancel. The model counts the
 * moduli as floor(log2 P) - 2 >= the bits (the rule itself holds the
 * products within P / 2: at times one modulus fewer than the model's, so
 * the model errs toward the native GEMM). Data of uneven magnitudes need a
 * few bits more (`slack`, measured: 15-17 moduli for FP64 at phi 0.1-2).
 * The scheme runs when t_scheme * margin < t_native: margin > 1 keeps the
 * native GEMM where the two are close and the model is unsure.
 *
 * The choice depends only on (m, n, k, the output precision, the
 * architecture's table): never on the data, so a program's choices are
 * the same from run to run. The CPU backend evaluates the table of the
 * reference GPU (sm_90), so that it makes the choices, and gives the
 * bits, of a run on an H100 / H200 (its own BLAS for the native products).
 * An architecture not in the table takes the native GEMM for every shape. */
#include "gemm/ozaki.h"
#include "gemm/ozaki2.h"

#include <math.h>

typedef struct {
    int arch;            /* compute capability x 10 */
    double r_f64, h_f64; /* native DGEMM: FLOP/s of large products, half-efficiency dimension */
    double r_f32, h_f32; /* native SGEMM (FP32 FMA units) */
    double t0_nat;       /* a native call's fixed cost, s */
    double r_i8, h_i8;   /* INT8 Tensor Core GEMM (cuBLAS, INT32 out): OP/s, half dimension */
    double bw;           /* memory bandwidth of the scheme's passes, bytes/s */
    double t0_oz;        /* the scheme's fixed cost, s (launches, the plan's host round trip) */
    double margin;       /* the scheme runs when its predicted time x margin < native's */
} oz_auto_arch_t;

/* sm_90: fitted by bench/ozaki/fit_auto.py to bench/ozaki/auto_sweep.sh's run on an
 * NVIDIA H100 80GB HBM3 (bench/results/ozaki_auto_sweep.csv, the fit's report in
 * ozaki_auto_fit.txt): bench_ozaki's cuBLAS DGEMM / SGEMM and OZAKI_INT8 scheme 2 in DP
 * mode, median of 3 after a warm-up, 35 FP64 shapes at phi 0.5 (squares 256 .. 16384, one
 * dimension of 256 / 1024 / 4096 against two of 8192 / 16384, mixed ones) and three
 * squares at phi 2, and 10 FP32 shapes; rms log error of the model 0.044
 * (native) and 0.063 (scheme) for FP64. With these constants no measured shape runs the
 * scheme where the native GEMM was faster; two pick the native GEMM although the scheme
 * was 9-11% faster (4096^2 x 16384 and 16384^2 x 4096: the slack of OZ_AUTO_SLACK). The
 * H200 takes the same table, on the safe side (more bandwidth for the scheme's passes).
 * Refit from bench/ozaki/auto_sweep.sh's CSV. */
static const oz_auto_arch_t ARCHS[] = {
    {90, 6.02e13, 18.0, 5.63e13, 95.0, 1.9e-5, 1.7e15, 491.0, 3.04e12, 3.9e-4, 1.03},
};
#define OZ_AUTO_REF_ARCH 90 /* the CPU backend's (and a NULL handle's) table */

/* DP rule bits beyond 2 (p + 3): the data's spread (see above). 4 gives 16 moduli for
 * FP64 (measured: 15 at phi = 0.5, 16 at phi = 0.1 and 1, 17 at phi = 2) and 8 for FP32
 * (8, 9 at phi = 2): the time of the usual data's count or more. */
#define OZ_AUTO_SLACK 4

static const oz_auto_arch_t *arch_of(tcnla_handle_t h) {
    int arch = OZ_AUTO_REF_ARCH;
#ifdef TCNLA_HAVE_CUDA
    if (h && h->backend == TCNLA_BACKEND_CUDA && h->cuda) arch = tn_cuda_oz_arch(h);
#else
    (void)h;
#endif
    for (size_t i = 0; i < sizeof ARCHS / sizeof ARCHS[0]; i++)
        if (ARCHS[i].arch == arch) return &ARCHS[i];
    return NULL;
}

int tn_oz_auto_moduli(int out_prec) {
    const int p = out_prec == 32 ? 24 : 53;
    const int bits = 2 * (p + 3) + OZ_AUTO_SLACK;
    int n = 1;
    while (n < TN_OZ2_MAXN && tn_oz2_log2p(n) - 2 < bits) n++;
    return n;
}

static double eff(double x, double h) { return x / (x + h); }

int tn_oz_auto_model(tcnla_handle_t h, int out_prec, int64_t m, int64_t n, int64_t k,
                     double *t_nat, double *t_oz) {
    const oz_auto_arch_t *a = arch_of(h);
    const double M = (double)m, N = (double)n, K = (double)k, fl = 2.0 * M * N * K;
    if (!a || m <= 0 || n <= 0 || k <= 0) { /* unknown architecture or nothing to compute */
        if (t_nat) *t_nat = a ? a->t0_nat : 0.0;
        if (t_oz) *t_oz = INFINITY;
        return 1;
    }
    const double r = out_prec == 32 ? a->r_f32 : a->r_f64;
    const double hn = out_prec == 32 ? a->h_f32 : a->h_f64;
    const double tn = a->t0_nat + fl / (r * eff(M, hn) * eff(N, hn) * eff(K, hn));
    const double nm = (double)tn_oz_auto_moduli(out_prec), e = out_prec == 32 ? 4.0 : 8.0;
    const double bytes = 2.0 * e * (M * K + K * N) + nm * (M * K + K * N) + 8.0 * nm * M * N +
                         e * M * N;
    const double to = a->t0_oz +
                      nm * fl / (a->r_i8 * eff(M, a->h_i8) * eff(N, a->h_i8) * eff(K, a->h_i8)) +
                      bytes / a->bw;
    if (t_nat) *t_nat = tn;
    if (t_oz) *t_oz = to;
    return !(to * a->margin < tn);
}

int tcnla_ozaki_auto_predict(tcnla_handle_t handle, int out_bits, int64_t m, int64_t n,
                             int64_t k, int *native, double *native_seconds,
                             double *ozaki_seconds) {
    if (out_bits != 32 && out_bits != 64) return -2;
    if (m < 0) return -3;
    if (n < 0) return -4;
    if (k < 0) return -5;
    int nat;
    if (handle) {
        TN_GUARD(handle);
        nat = tn_oz_auto_model(handle, out_bits, m, n, k, native_seconds, ozaki_seconds);
    } else {
        nat = tn_oz_auto_model(NULL, out_bits, m, n, k, native_seconds, ozaki_seconds);
    }
    if (native) *native = nat;
    return TCNLA_SUCCESS;
}

/* One Ozaki product after the argument checks, m, n > 0, through the
 * handle's backend; AUTO mode resolved here. */
int tn_ozaki_run(tn_call_t *cl, tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb,
                 int64_t m, int64_t n, int64_t k, double alpha, const void *A, int64_t lda,
                 const void *B, int64_t ldb, double beta, void *C, int64_t ldc, int out_prec) {
    tcnla_handle_t h = cl->h;
    if (h->ozaki.mode != TCNLA_OZAKI_AUTO || method == TCNLA_GEMM_NATIVE_FP64)
        return h->ops->ozaki(cl, method, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                             out_prec);
    /* scheme II is the only one the model knows faster than native (scheme I
     * and OZAKI_FP16 never were on the measured GPUs): native for them */
    const int scheme2 = method == TCNLA_GEMM_OZAKI_INT8 && h->ozaki.scheme != TCNLA_OZAKI_SCHEME_1;
    if (!scheme2 || tn_oz_auto_model(h, out_prec, m, n, k, NULL, NULL)) {
        if (out_prec == 64) {
            int st = h->ops->ozaki(cl, TCNLA_GEMM_NATIVE_FP64, ta, tb, m, n, k, alpha, A, lda, B,
                                   ldb, beta, C, ldc, 64);
            if (st == TCNLA_SUCCESS) cl->info.method = TCNLA_GEMM_NATIVE_FP64;
            return st;
        }
        cl->info.method = TCNLA_GEMM_NATIVE_FP32;
        return h->ops->gemm(cl, TCNLA_GEMM_NATIVE_FP32, ta, tb, m, n, k, (float)alpha,
                            (const float *)A, lda, (const float *)B, NULL, ldb, (float)beta,
                            (float *)C, ldc);
    }
    /* the scheme in DP mode: the backends read the mode from the handle,
     * whose lock the caller holds */
    h->ozaki.mode = TCNLA_OZAKI_DP;
    int st = h->ops->ozaki(cl, method, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc,
                           out_prec);
    h->ozaki.mode = TCNLA_OZAKI_AUTO;
    return st;
}
