/* Generic floating-point formats eXmY (X exponent bits, Y fraction bits) and
 * the analysis of [Ootomo & Yokota 2023] section 3.1-3.2 (Table 1, Fig. 2): how a N(0,1)
 * Gaussian value behaves once rounded to eXmY. Internal (tn_ prefix).
 *
 * Formats are IEEE-style: bias 2^(X-1)-1, subnormals, the all-ones exponent
 * reserved for Inf/NaN. The one exception is OCP FP8 E4M3 (ocp_e4m3 = 1,
 * X = 4, Y = 3 only): its top exponent holds finite values, S.1111.111 is
 * NaN, there is no Inf, max = 448.
 *
 * Rounding (tn_exmy_round) works on doubles and is independent of the
 * current floating-point rounding mode. Overflow in RN/RNA gives Inf (NaN
 * for OCP E4M3), in RZ the largest finite value, as src/numerics/formats.c
 * does; Inf gives Inf (NaN for OCP E4M3), NaN gives NaN; signs of zeros are
 * kept. */
#ifndef TCNLA_EXMY_H
#define TCNLA_EXMY_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int ebits;    /* X: exponent field width, 2..11 */
    int mbits;    /* Y: fraction field width (no hidden bit), 0..52 */
    int ocp_e4m3; /* 1: OCP E4M3 (X = 4, Y = 3): no Inf, max 448 */
} tn_exmy;

/* Rounding modes; same numbering as tcnla_round_t. */
enum { TN_EXMY_RN = 0, TN_EXMY_RNA = 1, TN_EXMY_RZ = 2 };

#define TN_EXMY_MIN_EBITS 2
#define TN_EXMY_MAX_EBITS 11
#define TN_EXMY_MAX_MBITS 52

/* Fills *f; returns 0, or -1 when X or Y is out of range or ocp_e4m3 is
 * asked for anything but X = 4, Y = 3. */
int tn_exmy_init(tn_exmy *f, int ebits, int mbits, int ocp_e4m3);
/* Parses "eXmY" (case-insensitive), "e4m3" (= OCP E4M3), "e4m3ieee", and
 * the aliases fp16/half, bf16/bfloat16, tf32, fp32/single, fp64/double,
 * fp8_e4m3, fp8_e5m2. Returns 0, or -1 with a one-line reason in err. */
int tn_exmy_parse(const char *s, tn_exmy *f, char *err, size_t errlen);
/* "e5m10", "e4m3" (OCP) or "e4m3ieee". */
void tn_exmy_name(const tn_exmy *f, char *buf, size_t n);
/* "FP16", "bfloat16", ... or "" when the format has no common name. */
const char *tn_exmy_label(const tn_exmy *f);

int tn_exmy_bias(const tn_exmy *f); /* 2^(X-1) - 1 */
int tn_exmy_emin(const tn_exmy *f); /* exponent of the smallest normal: 1 - bias */
int tn_exmy_emax(const tn_exmy *f); /* exponent of the largest finite: bias (OCP E4M3: 8) */
double tn_exmy_max(const tn_exmy *f);        /* 2^emax (2 - 2^-Y); E4M3 OCP 448 */
double tn_exmy_min_normal(const tn_exmy *f); /* 2^emin */
/* Smallest positive value 2^(emin - Y): the smallest subnormal for Y >= 1;
 * for Y = 0 there are no subnormals and this is the smallest normal. */
double tn_exmy_min_sub(const tn_exmy *f);
/* Number of finite non-negative values (+0 included). */
uint64_t tn_exmy_count_nonneg(const tn_exmy *f);

/* x rounded to the format (mode TN_EXMY_RN/RNA/RZ; others act as RN). */
double tn_exmy_round(double x, const tn_exmy *f, int mode);
/* Value of the code c (sign bit at position X + Y). */
double tn_exmy_decode(const tn_exmy *f, uint64_t c);

/* ------------------------------------------------- format analysis */

/* [Ootomo & Yokota 2023] Table 1 for one format, g ~ N(0,1), rounding RN. Probabilities
 * are long double (some are below DBL_MIN); a probability below long
 * double's range is 0 and its log10 is in the *_log10 field. */
typedef struct {
    tn_exmy fmt;
    int bias, emin, emax;
    double max, min_normal, min_sub;
    double max_paper;     /* eq. (14)/(15) as printed: 2^bias (1 - 2^-(Y+1)) = max / 2 */
    /* the printed min^denormalized 2^(-bias) 2^-Y = min_sub / 2 (long double:
     * FP64's 2^-1075 is not a double) */
    long double min_sub_paper;
    /* max + ulp(max)/2: |g| beyond it rounds to Inf (NaN for E4M3); long double
     * because FP64's, 2^1024 - 2^970, is not a double */
    long double of_threshold;
    /* overflow: RN overflows iff |g| >= of_threshold (E4M3 OCP: >). */
    long double p_of, p_of_eq16; /* eq. (16) 2(1 - Phi(max)) = P(|g| > max) */
    long double p_of_log10, p_of_eq16_log10;
    /* not normalized: eq. 2(Phi(min_normal) - 1/2) = P(|g| < min_normal), and the
     * RN version P(RN(g) is subnormal or 0) = P(|g| < min_normal - min_sub/2). */
    long double p_nn, p_nn_rn;
    /* underflow under RN: P(RN(g) = 0) = P(|g| <= min_sub/2) (exactly half the smallest
     * positive value rounds to 0, the even neighbour); equals the paper's formula with
     * its printed min^denormalized. p_below_min_sub = P(|g| < min_sub). */
    long double p_uf, p_below_min_sub;
    /* N^{2^s sigma}, s = 0, 1, 2: values v with |v| < 2^s */
    uint64_t n_normal[3]; /* normal values plus zero: 2(s + bias - 1) 2^Y + 1 (clamped) */
    uint64_t n_all[3];    /* all finite values (subnormals, zero once): 2(s + bias) 2^Y - 1 */
    uint64_t n_eq18[3];   /* eq. (18) as printed: 2(s + bias + 1) 2^Y + 1 */
    int n_enumerated;     /* 1: n_normal / n_all were checked by enumerating all codes */
    int n_enum_ok;        /* 1: enumeration agreed with the closed forms */
    /* variance alpha_Y = E[RN(g)^2] (mean is 0), summed over the finite values: draws
     * that overflow contribute 0 (their probability is p_of). */
    long double alpha, alpha_minus_1;
    /* the printed formula: half-width exp_of(v) u_Y on both sides of every v */
    long double alpha_paper_minus_1;
} tn_format_stats;

/* Fills *st for format f. force_direct = 1 sums the variance cell by cell
 * everywhere (slow for large Y; for tests of the fast path). Returns 0. */
int tn_format_analyze(const tn_exmy *f, tn_format_stats *st, int force_direct);
/* The variance alone: returns alpha_Y - 1 (long double, accurate also when it
 * is far below 1e-19); force_direct as above. */
long double tn_format_variance_delta(const tn_exmy *f, int force_direct);
/* The variance by the paper's printed formula, minus 1; delta: alpha_Y - 1
 * when already computed (else NULL). */
long double tn_format_variance_paper_delta(const tn_exmy *f, const long double *delta);

/* Closed-form and enumerated counts of values with |v| < 2^s (s = 0..2).
 * tn_format_count_enum returns -1 when the format has more than 2^20 codes. */
void tn_format_count(const tn_exmy *f, int s, uint64_t *n_normal, uint64_t *n_all,
                     uint64_t *n_eq18);
int tn_format_count_enum(const tn_exmy *f, int s, uint64_t *n_normal, uint64_t *n_all);

/* Monte-Carlo check: n draws of N(0,1) in double (Box-Muller on 53-bit
 * uniforms from tcnla_philox4x32(seed, stream 0x616e616c), not tcnla_rand_normal,
 * whose draws are already rounded to FP32), each rounded with RN. */
typedef struct {
    int64_t n;
    double var;           /* mean of RN(g)^2 over all draws, overflow counted as 0 */
    double var_se;        /* its standard error */
    double delta;         /* paired estimate of alpha - 1: mean of RN(g)^2 - g^2 */
    double delta_se;      /* its standard error */
    double frac_nn;       /* fraction with RN(g) subnormal or zero */
    double frac_zero;     /* fraction with RN(g) == 0 */
    double frac_of;       /* fraction that overflowed */
} tn_format_mc;
void tn_format_montecarlo(const tn_exmy *f, int64_t n, uint64_t seed, tn_format_mc *mc);
#endif
