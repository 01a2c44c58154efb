/* Device-side conversions and splits, bit-identical to tcnla_split() and
 * the format conversions of src/numerics (RN for FP16, RNA for TF32).
 * Every arithmetic step uses an explicit _rn intrinsic so that no
 * contraction into FMA can change a result (docs/design.md, numerical rules). */
#ifndef TCNLA_SPLIT_CUH
#define TCNLA_SPLIT_CUH

#include <cuda_fp16.h>
#include <stdint.h>

#include "backend/cuda/tn_cuda.h" /* tn_elem_kinds_t */

#define TN_SPLIT_SCALE 2048.0f          /* 2^11 */
#define TN_SPLIT_INV_SCALE 4.8828125e-4f /* 2^-11 */

/* Two FP32 -> packed FP16x2 (RN): x0 in the low half, x1 in the high half. */
static __device__ __forceinline__ uint32_t tn_f2_to_h2(float x0, float x1) {
    uint32_t r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(x1), "f"(x0));
    return r;
}
static __device__ __forceinline__ float tn_h2_lo(uint32_t h2) {
    return __half2float(__ushort_as_half((unsigned short)(h2 & 0xffffu)));
}
static __device__ __forceinline__ float tn_h2_hi(uint32_t h2) {
    return __half2float(__ushort_as_half((unsigned short)(h2 >> 16)));
}
static __device__ __forceinline__ float tn_f16rn(float x) {
    return __half2float(__float2half_rn(x));
}
/* TF32 with round-to-nearest, ties away (cvt.rna.tf32.f32); the 13 low
 * fraction bits are cleared so the value is the FP32 number it stands for. */
static __device__ __forceinline__ float tn_tf32rna(float x) {
    uint32_t u;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(x));
    return __uint_as_float(u & 0xffffe000u);
}

/* halfhalf (scale = 1) or Markidis (scale = 0) split of two elements into
 * packed FP16x2 hi and lo. */
static __device__ __forceinline__ void tn_split2_f16(float x0, float x1, const int scale,
                                                     uint32_t *hi, uint32_t *lo) {
    uint32_t h = tn_f2_to_h2(x0, x1);
    float r0 = __fsub_rn(x0, tn_h2_lo(h));
    float r1 = __fsub_rn(x1, tn_h2_hi(h));
    if (scale) {
        r0 = __fmul_rn(r0, TN_SPLIT_SCALE);
        r1 = __fmul_rn(r1, TN_SPLIT_SCALE);
    }
    *hi = h;
    *lo = tn_f2_to_h2(r0, r1);
}
/* tf32tf32 split of one element. */
static __device__ __forceinline__ void tn_split_tf32(float x, float *hi, float *lo) {
    float h = tn_tf32rna(x);
    *hi = h;
    *lo = tn_tf32rna(__fmul_rn(__fsub_rn(x, h), TN_SPLIT_SCALE));
}

/* The value a method feeds the Tensor Core for x, in FP64, as
 * represented() of src/numerics/split.c computes it. kind: TN_RCHK_*. */
static __device__ __forceinline__ double tn_represented(int kind, float x) {
    float h, l;
    switch (kind) {
    case 0: /* Markidis */
        h = tn_f16rn(x);
        l = tn_f16rn(__fsub_rn(x, h));
        return __dadd_rn((double)h, __dmul_rn((double)l, 1.0));
    case 1: /* halfhalf */
        h = tn_f16rn(x);
        l = tn_f16rn(__fmul_rn(__fsub_rn(x, h), TN_SPLIT_SCALE));
        return __dadd_rn((double)h, __dmul_rn((double)l, (double)TN_SPLIT_INV_SCALE));
    case 2: /* tf32tf32 */
        tn_split_tf32(x, &h, &l);
        return __dadd_rn((double)h, __dmul_rn((double)l, (double)TN_SPLIT_INV_SCALE));
    case 3: return (double)tn_f16rn(x);
    case 4: return (double)tn_tf32rna(x);
    default: return (double)x;
    }
}

/* |x| in FP16's normal range, or 0 (the fast path of the checks where
 * tn_rchk_fast allows it) */
static __device__ __forceinline__ int tn_f16_normal_or_zero(float ax) {
    return ax == 0.0f || (ax >= 0x1p-14f && ax < 65504.0f);
}
/* One element of the operand checks (tn_cu_check_f32, and the pre-split
 * pass that does them on the way): the magnitude bits (NaN > Inf > finite,
 * as unsigned) into *mx and the representation error |represented(x) - x|
 * (Inf when not finite) into *me, both as running maxima. */
static __device__ __forceinline__ void tn_check_elem(int kind, float x, uint32_t *mx, double *me) {
    uint32_t u = __float_as_uint(x) & 0x7fffffffu;
    *mx = max(*mx, u);
    if (kind >= 0) {
        double r = tn_represented(kind, x);
        double e = isfinite(r) ? fabs(__dsub_rn(r, (double)x)) : __longlong_as_double(0x7ff0000000000000LL);
        if (!(e <= *me)) *me = e; /* NaN error (NaN input) counts as failure */
    }
}
static __device__ __forceinline__ void tn_atomic_max_f64_nonneg(double *addr, double v) {
    /* non-negative doubles (and +Inf, NaN with sign 0) order like their bits */
    atomicMax((unsigned long long *)addr, (unsigned long long)__double_as_longlong(v));
}

/* ------------------------------------ element-wise check (trusted operand) */
/* An FP16 kind (MARKIDIS, HALFHALF, F16) fails at x when |represented(x) -
 * x| > 2^-tol |x| (or x is not finite); passing it means passing the
 * per-vector test of every vector x belongs to, whichever the layout.
 * The error is computed in FP32 and is exact: with h = fp16(x), d = x - h
 * is exact (h is within a factor 2 of x, or x is in FP16's subnormal range
 * where both are multiples of 2^-48 and |d| <= 2^-25), and l fp16(d) (or
 * fp16(d 2^11) 2^-11) minus d is the rounding error of that conversion,
 * exact too. |x| 2^-tol is exact for |x| >= 2^-100 (tol <= 26); a nonzero
 * |x| below that fails (only less is trusted). */
/* |represented(x) - x| of one FP16 kind for a finite x, exact in FP32
 * (above); +Inf when fp16(x) overflows. */
static __device__ __forceinline__ float tn_f16_err(float x, int kind) {
    const float h = tn_f16rn(x);
    if (!isfinite(h)) return __int_as_float(0x7f800000);
    if (kind == TN_RCHK_F16) return fabsf(__fsub_rn(h, x));
    const float d = __fsub_rn(x, h);
    return kind == TN_RCHK_HALFHALF
               ? fabsf(__fsub_rn(__fmul_rn(tn_f16rn(__fmul_rn(d, TN_SPLIT_SCALE)),
                                           TN_SPLIT_INV_SCALE),
                                 d))
               : fabsf(__fsub_rn(tn_f16rn(d), d));
}
/* bit 0: x is NaN or Inf (then every bit); bit 1 + i: x fails kind i of
 * kk (every kind an FP16 one: the check folded into tc_gemm_sm90.cu's n64
 * kernel). Kinds with fast[i] (tn_rchk_fast on the host) pass in FP16's
 * normal range without converting. */
static __device__ __forceinline__ unsigned tn_elem_bad_f16(float x, const tn_elem_kinds_t &kk) {
    if (!isfinite(x)) return 0xFFFFFFFFu;
    const float ax = fabsf(x);
    const int tiny = ax != 0.0f && ax < 0x1p-100f;
    const int normal16 = tn_f16_normal_or_zero(ax);
    unsigned b = 0;
    for (int i = 0; i < kk.n; i++) {
        if (normal16 && kk.fast[i]) continue;
        if (tiny || !(tn_f16_err(x, kk.kind[i]) <= __fmul_rn(ax, (float)kk.scale[i])))
            b |= 2u << i;
    }
    return b;
}

#endif
