/*
 * formats.c -- bit-exact conversions between FP32/FP64 and the narrow
 * floating-point formats used by Tensor Cores: FP16, BF16, TF32, and the
 * two OCP 8-bit formats E4M3 and E5M2 (OFP8 spec, 2023).
 *
 * Everything is done with integer arithmetic on the bit patterns, so the
 * results do not depend on the compiler, the hardware conversion
 * instructions or the current floating-point rounding mode.
 *
 * One generic encoder does all narrowing conversions. A finite nonzero
 * input is first reduced to sig * 2^exp2 with an integer significand (at
 * most 53 bits), then rounded once onto the grid of the target format and
 * packed. A target format is described by its exponent and fraction
 * widths and by how its top exponent is used:
 *
 *   IEEE-like (FP16, BF16, TF32, E5M2, FP32): the all-ones exponent holds
 *     Inf (fraction 0) and NaN; the largest finite value has exponent
 *     all-ones - 1 and fraction all-ones.
 *   OCP E4M3: no Inf; only S.1111.111 is NaN, so the all-ones exponent
 *     holds finite values up to S.1111.110 = 448.
 *
 * Conventions shared by all formats:
 *   - subnormals are produced and consumed exactly (no flush to zero);
 *   - NaN gives the canonical quiet NaN of the target with the sign kept
 *     (e.g. FP16 0x7e00 | sign, E4M3 0x7f | sign);
 *   - finite overflow: RN/RNA give Inf (NaN for E4M3, which has no Inf), RZ
 *     gives the largest finite value, as IEEE 754 prescribes; with
 *     `saturate` (FP8 only) every mode gives the largest finite value;
 *   - Inf gives Inf (NaN for E4M3); with `saturate` +-Inf gives +-max for
 *     both FP8 formats, as the OFP8 spec's saturating conversion does;
 *   - an unknown rounding mode is treated as RN.
 */
#include "tcnla.h"

#include <string.h>

/* ------------------------------------------------------------ descriptors */

typedef struct {
    int ebits;   /* exponent field width */
    int mbits;   /* fraction field width (without the hidden bit) */
    int has_inf; /* 1: IEEE-like top exponent; 0: OCP E4M3 (no Inf, one NaN per sign) */
} fmt_t;

static const fmt_t FMT_F16 = {5, 10, 1};
static const fmt_t FMT_BF16 = {8, 7, 1};
static const fmt_t FMT_TF32 = {8, 10, 1};
static const fmt_t FMT_E4M3 = {4, 3, 0};
static const fmt_t FMT_E5M2 = {5, 2, 1};
static const fmt_t FMT_F32 = {8, 23, 1};

static int fmt_bias(const fmt_t *f) { return (1 << (f->ebits - 1)) - 1; }
static uint32_t fmt_sign(const fmt_t *f) { return (uint32_t)1 << (f->ebits + f->mbits); }
/* Code of +Inf (IEEE-like formats only). */
static uint32_t fmt_inf(const fmt_t *f) { return (((uint32_t)1 << f->ebits) - 1) << f->mbits; }
/* Code of the canonical quiet NaN: all-ones exponent with the top fraction
 * bit set (IEEE), or S.1111.111 (E4M3). */
static uint32_t fmt_nan(const fmt_t *f) {
    return f->has_inf ? fmt_inf(f) | ((uint32_t)1 << (f->mbits - 1)) : fmt_sign(f) - 1;
}
/* Code of the largest finite value. */
static uint32_t fmt_max(const fmt_t *f) {
    return f->has_inf ? fmt_inf(f) - 1 : fmt_sign(f) - 2;
}

/* ------------------------------------------------------------- encoding */

/* Position of the most significant set bit of x != 0. */
static int msb64(uint64_t x) {
    int p = 0;
    if (x >> 32) { x >>= 32; p += 32; }
    if (x >> 16) { x >>= 16; p += 16; }
    if (x >> 8) { x >>= 8; p += 8; }
    if (x >> 4) { x >>= 4; p += 4; }
    if (x >> 2) { x >>= 2; p += 2; }
    if (x >> 1) p += 1;
    return p;
}

/* Result for an overflowing finite value, or for Inf, of the given sign. */
static uint32_t pack_overflow(const fmt_t *f, uint32_t sign, int to_inf, int saturate) {
    if (saturate || !to_inf) return sign | fmt_max(f);
    return sign | (f->has_inf ? fmt_inf(f) : fmt_nan(f));
}

/* Rounds the finite nonzero value sig * 2^exp2 (sig < 2^53) to format f in
 * the given mode and returns its code, sign bit `sign` (already at the
 * format's sign position) included. */
static uint32_t round_pack(const fmt_t *f, uint32_t sign, uint64_t sig, int exp2,
                           tcnla_round_t mode, int saturate) {
    const int bias = fmt_bias(f);
    const int emin = 1 - bias;      /* exponent of the smallest normal */
    int x = msb64(sig) + exp2;      /* value lies in [2^x, 2^(x+1)) */
    int xe = x < emin ? emin : x;   /* exponent of the binade used (subnormals: emin) */
    int shift = (xe - f->mbits) - exp2; /* bits of sig below the target's ulp 2^(xe-mbits) */
    uint64_t kept;

    if (shift <= 0) {
        kept = sig << -shift; /* exact: the target is at least as precise here */
    } else {
        /* sig < 2^53: from shift = 54 on, the value is below half an ulp
         * and rounds to 0 in every mode (this only happens deep in the
         * subnormal range). Clamping keeps the shifts below 64. */
        if (shift > 55) shift = 55;
        uint64_t rem = sig & (((uint64_t)1 << shift) - 1);
        uint64_t half = (uint64_t)1 << (shift - 1);
        kept = sig >> shift;
        switch (mode) {
        case TCNLA_ROUND_RZ:
            break;
        case TCNLA_ROUND_RNA:
            kept += rem >= half;
            break;
        default: /* TCNLA_ROUND_RN: ties to even */
            kept += rem > half || (rem == half && (kept & 1));
            break;
        }
    }

    /* kept * 2^(xe - mbits) with kept <= 2^(mbits+1). For normals kept
     * includes the hidden bit, so adding it to the biased exponent field
     * (xe + bias - 1) does the packing; a carry out of the fraction (kept
     * == 2^(mbits+1), or a subnormal rounding up to 2^mbits) moves into the
     * exponent field, which is exactly the next binade. For subnormals xe +
     * bias - 1 == 0 and kept is the fraction itself. */
    uint64_t code = ((uint64_t)(xe + bias - 1) << f->mbits) + kept;
    if (code > fmt_max(f)) return pack_overflow(f, sign, mode != TCNLA_ROUND_RZ, saturate);
    return sign | (uint32_t)code;
}

/* FP32 bit pattern -> code of format f. */
static uint32_t encode_f32(const fmt_t *f, uint32_t u, tcnla_round_t mode, int saturate) {
    uint32_t sign = (u >> 31) ? fmt_sign(f) : 0;
    uint32_t a = u & 0x7fffffffu;
    uint32_t e = a >> 23, m = a & 0x7fffffu;

    if (a > 0x7f800000u) return sign | fmt_nan(f);
    if (a == 0x7f800000u) return pack_overflow(f, sign, 1, saturate);
    if (a == 0) return sign;
    if (e == 0) return round_pack(f, sign, m, -149, mode, saturate); /* subnormal */
    return round_pack(f, sign, m | 0x800000u, (int)e - 150, mode, saturate);
}

/* FP64 bit pattern -> code of format f. */
static uint32_t encode_f64(const fmt_t *f, uint64_t u, tcnla_round_t mode, int saturate) {
    uint32_t sign = (u >> 63) ? fmt_sign(f) : 0;
    uint64_t a = u & 0x7fffffffffffffffull;
    uint64_t e = a >> 52, m = a & 0xfffffffffffffull;

    if (a > 0x7ff0000000000000ull) return sign | fmt_nan(f);
    if (a == 0x7ff0000000000000ull) return pack_overflow(f, sign, 1, saturate);
    if (a == 0) return sign;
    if (e == 0) return round_pack(f, sign, m, -1074, mode, saturate);
    return round_pack(f, sign, m | 0x10000000000000ull, (int)e - 1075, mode, saturate);
}

/* ------------------------------------------------------------- decoding */

/* Code of format f -> FP32 bit pattern. Exact for every format here (their
 * values are all FP32 numbers). IEEE-like NaN payloads are kept in the top
 * fraction bits and the result is made quiet. */
static uint32_t decode_f32(const fmt_t *f, uint32_t c) {
    const int bias = fmt_bias(f);
    const uint32_t fmask = ((uint32_t)1 << f->mbits) - 1;
    const uint32_t emask = ((uint32_t)1 << f->ebits) - 1;
    uint32_t sign = (c & fmt_sign(f)) ? 0x80000000u : 0;
    uint32_t e = (c >> f->mbits) & emask, m = c & fmask;

    if (f->has_inf ? e == emask : (c & (fmt_sign(f) - 1)) == fmt_nan(f)) {
        if (!f->has_inf) return sign | 0x7fc00000u; /* E4M3: the one NaN */
        if (m == 0) return sign | 0x7f800000u;
        return sign | 0x7fc00000u | (m << (23 - f->mbits));
    }
    /* value = sig * 2^exp2 */
    uint32_t sig = e ? m | (fmask + 1) : m;
    int exp2 = (e ? (int)e - bias : 1 - bias) - f->mbits;
    if (sig == 0) return sign;
    int p = msb64(sig);
    int x = p + exp2; /* value in [2^x, 2^(x+1)) */
    if (x >= -126) return sign | ((uint32_t)(x + 127) << 23) | ((sig << (23 - p)) & 0x7fffffu);
    return sign | (sig << (exp2 + 149)); /* FP32 subnormal: ulp 2^-149 */
}

static float bits_to_f32(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static uint32_t f32_to_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* ------------------------------------------------------------- public API */

TCNLA_API uint16_t tcnla_f32_to_f16(float x, tcnla_round_t mode) {
    return (uint16_t)encode_f32(&FMT_F16, f32_to_bits(x), mode, 0);
}

TCNLA_API float tcnla_f16_to_f32(uint16_t h) { return bits_to_f32(decode_f32(&FMT_F16, h)); }

TCNLA_API uint16_t tcnla_f32_to_bf16(float x, tcnla_round_t mode) {
    return (uint16_t)encode_f32(&FMT_BF16, f32_to_bits(x), mode, 0);
}

TCNLA_API float tcnla_bf16_to_f32(uint16_t h) { return bits_to_f32(decode_f32(&FMT_BF16, h)); }

/* TF32 has FP32's sign and exponent fields and the top 10 fraction bits:
 * its 19-bit code shifted left by 13 is the FP32 pattern. */
TCNLA_API float tcnla_f32_to_tf32(float x, tcnla_round_t mode) {
    return bits_to_f32(encode_f32(&FMT_TF32, f32_to_bits(x), mode, 0) << 13);
}

TCNLA_API uint8_t tcnla_f32_to_e4m3(float x, tcnla_round_t mode, int saturate) {
    return (uint8_t)encode_f32(&FMT_E4M3, f32_to_bits(x), mode, saturate != 0);
}

TCNLA_API float tcnla_e4m3_to_f32(uint8_t v) { return bits_to_f32(decode_f32(&FMT_E4M3, v)); }

TCNLA_API uint8_t tcnla_f32_to_e5m2(float x, tcnla_round_t mode, int saturate) {
    return (uint8_t)encode_f32(&FMT_E5M2, f32_to_bits(x), mode, saturate != 0);
}

TCNLA_API float tcnla_e5m2_to_f32(uint8_t v) { return bits_to_f32(decode_f32(&FMT_E5M2, v)); }

TCNLA_API float tcnla_f64_to_f32(double x, tcnla_round_t mode) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return bits_to_f32(encode_f64(&FMT_F32, u, mode, 0));
}
