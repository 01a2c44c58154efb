/* Ozaki scheme II's internals (src/gemm/ozaki2.c), white-box: the CRT
 * constants and the reconstruction against 128-bit integers, the residues,
 * the block norm bound, DP mode's shifts and the plan. The scheme itself is
 * tested through the public API in tests/test_ozaki2.c. */
#include "core/internal.h"
#include "gemm/ozaki2.h"
#include "tcnla.h"
#include "test.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int verbose(void) { return getenv("TCNLA_TEST_VERBOSE") != NULL; }

TEST(ozaki2_crt_constants_and_reconstruction) {
    tn_oz2_consts_t c;
    tn_oz2_consts(TN_OZ2_MAXN, &c);
    for (int a = 0; a < c.n; a++)
        for (int b = a + 1; b < c.n; b++) {
            int x = c.mod[a], y = c.mod[b];
            while (y) {
                int t = x % y;
                x = y, y = t;
            }
            CHECK_MSG(x == 1, "moduli %d and %d share a factor", c.mod[a], c.mod[b]);
        }
    CHECK(c.log2p == 155 && tn_oz2_log2p(16) == 125 && tn_oz2_log2p(8) == 63);
    /* x with |x| < P / 4 from its residues: 16 moduli, P >= 2^125 */
    tn_oz2_consts(16, &c);
    uint64_t s = 12345;
    int bad = 0, inexact = 0;
    for (int t = 0; t < 20000; t++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t hi = s >> 5;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const int bits = 1 + (int)(s % 122); /* |x| < 2^bits <= 2^122 */
        __int128 x = ((__int128)hi << 64) | (__int128)(s * 0x9E3779B97F4A7C15ull);
        x &= (((__int128)1) << bits) - 1;
        if (t & 1) x = -x;
        unsigned char r[TN_OZ2_MAXN];
        for (int l = 0; l < c.n; l++) {
            int v = (int)(x % c.mod[l]);
            r[l] = (unsigned char)((v < 0 ? v + c.mod[l] : v) * c.qinv[l] % c.mod[l]);
        }
        const double got = tn_oz2_reconstruct(&c, r, 1), want = (double)x; /* RN */
        if (!(fabs(got - want) <= 0x1p-52 * fabs(want))) bad++;
        if (got != want) inexact++;
    }
    CHECK_MSG(bad == 0, "%d of 20000 reconstructions off by more than 2^-52", bad);
    CHECK_MSG(inexact <= 200, "%d of 20000 not correctly rounded", inexact); /* 54 measured */
    /* residues of scaled values: rint(x 2^s) mod p, in [-128, 127] */
    tn_oz2_consts(20, &c);
    const double xs[] = {0.0, 1.0, -1.0, 0x1.fffffffffffffp-1, -3.75, 1e-300, -0x1p-1074, 1e300};
    const int ss[] = {0, 10, 62, 79};
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) {
            double y = nearbyint(scalbn(xs[i], ss[j]));
            if (!(fabs(y) < 0x1p80)) continue;
            for (int l = 0; l < c.n; l++) {
                int r = tn_oz2_residue(&c, l, xs[i], ss[j]);
                double want = fmod(y, (double)c.mod[l]); /* exact */
                if (want < 0) want += c.mod[l];
                int w = (int)want;
                if (w >= 128) w -= c.mod[l];
                CHECK(r == w && r >= -128 && r <= 127);
            }
        }
}

/* DP mode's shift of a vector is the least s with 2^-(s + 1) wn <= c u g
 * (checked against the condition itself on random wn, g over 600 binades,
 * powers of 2 included, where r = wn / (c u g) is exact); a quotient
 * beyond the doubles is TN_OZ2_SHIFT_HUGE, and a vector with g = 0 takes
 * no constraint (the vector's need, the shift less sigma, is INT_MIN) */
/* The integer norm bound in blocks of TN_OZ2_BLEN (tn_oz2_bound): exact
 * values where each rounding up shows (an element's term, a block's
 * combination, a block far below the largest exponent), and on random
 * vectors with a wide exponent range (zero blocks, subnormals, lengths
 * around the block length) ||x||^2 <= s 2^(2 (e - 8) - tbits) <=
 * (1 + 2^-7)^2 ||x||^2 + (elements + blocks) 2^(2 (e - 8) - tbits). */
TEST(ozaki2_norm_bound_in_blocks) {
    double x[64] = {0};
    const int tb = tn_oz2_tbits(64); /* 39 */
    int e = 0;
    CHECK(tn_oz2_bound(x, 1, 64, &e) == 0 && e == INT_MIN);
    /* 1.0: m8 = 128, e = 1; 2^-40 alone in block 1, 80 bits of 4^(e - e_c) down: 1 */
    x[0] = 1.0, x[40] = 0x1p-40;
    CHECK(tn_oz2_bound(x, 1, 64, &e) == (16641ull << tb) + 1 && e == 1);
    /* block 1: 0.09375 (m8 = 192, e_c = -3) and 2^-30 (term ceil(16641 2^-13) = 3),
     * combined 8 bits down: ceil((37249 2^39 + 3) / 256) = 37249 2^31 + 1 */
    x[40] = 0.0, x[33] = 0.09375, x[34] = 0x1p-30;
    CHECK(tn_oz2_bound(x, 1, 64, &e) == (16641ull << tb) + (37249ull << 31) + 1 && e == 1);
    /* the stride, and the same vector reversed (blocks of other elements) */
    double y[128] = {0};
    for (int l = 0; l < 64; l++) y[2 * l] = x[l];
    CHECK(tn_oz2_bound(y, 2, 64, &e) == (16641ull << tb) + (37249ull << 31) + 1);
    CHECK(tn_oz2_bound_at(5, 3, 3) == 5 && tn_oz2_bound_at(5, 3, 4) == 2 &&
          tn_oz2_bound_at(4, 3, 4) == 1 && tn_oz2_bound_at(0, 3, 40) == 0 &&
          tn_oz2_bound_at(~0ull, -1000, 1000) == 1);

    uint64_t st = 777;
    int bad = 0, cases = 0;
    const int lens[] = {1, 5, 31, 32, 33, 64, 100, 257, 1000};
    double v[1000];
    for (int t = 0; t < 400; t++) {
        const int k = lens[t % 9];
        for (int l = 0; l < k; l++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            const int zero_block = ((l / TN_OZ2_BLEN) + t) % 3 == 0 && t % 2;
            const int span = t % 4 == 0 ? 1100 : 60; /* down to subnormals */
            const double m = 0.5 + (double)(st >> 12) * 0x1p-53;
            v[l] = zero_block || (st & 7) == 0 ? 0.0
                                               : ldexp((st & 8) ? -m : m, 20 - (int)((st >> 4) % span));
        }
        const uint64_t s = tn_oz2_bound(v, 1, k, &e);
        if (e == INT_MIN) continue;
        cases++;
        long double n2 = 0.0L;
        for (int l = 0; l < k; l++) n2 += (long double)v[l] * (long double)v[l];
        const int tk = tn_oz2_tbits(k);
        const long double unit = ldexpl(1.0L, 2 * (e - 8) - tk), b = (long double)s * unit;
        const long double slack = (long double)(k + (k + TN_OZ2_BLEN - 1) / TN_OZ2_BLEN) * unit;
        const int ok = n2 <= b && b <= n2 * (1.0L + 0x1p-7L) * (1.0L + 0x1p-7L) + slack;
        if (!ok && bad++ < 3 && verbose())
            printf("    k %d: s %llu e %d, ||x||^2 %Lg bound %Lg\n", k, (unsigned long long)s, e, n2, b);
    }
    CHECK(cases > 300);
    CHECK_MSG(bad == 0, "%d of %d bounds fail", bad, cases);
}

TEST(ozaki2_dp_shift_is_the_least_that_holds) {
    uint64_t st = 12345;
    int bad = 0;
    for (int t = 0; t < 20000; t++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        const int prec = t % 2 ? 32 : 64, cl = tn_oz2_dp_culog2(prec);
        double wn = ldexp(0.5 + (double)(st >> 12) * 0x1p-53, (int)((st >> 3) % 300) - 150);
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        double g = ldexp(0.5 + (double)(st >> 12) * 0x1p-53, (int)((st >> 3) % 300) - 150);
        if (t % 7 == 0) wn = ldexp(1.0, (int)(st % 200) - 100); /* exact powers of 2 */
        if (t % 5 == 0) g = ldexp(1.0, (int)(st % 180) - 90);
        const int s = tn_oz2_shift(wn, g, cl);
        /* in long double (64-bit mantissa): the condition at s holds, at s - 1 not */
        const long double lhs = ldexpl((long double)wn, -(s + 1)), rhs = ldexpl((long double)g, cl);
        const int ok = lhs <= rhs * (1.0L + 0x1p-52L) && 2.0L * lhs > rhs * (1.0L - 0x1p-52L);
        if (!ok && bad++ < 3 && verbose())
            printf("    wn %a g %a prec %d: shift %d\n", wn, g, prec, s);
        if (t % 35 == 0 && s != (int)ceill(log2l((long double)wn / rhs)) - 1) bad++;
    }
    CHECK_MSG(bad == 0, "%d of 20000 shifts not the least that holds", bad);
    CHECK(tn_oz2_shift(0x1p1020, 0.75, tn_oz2_dp_culog2(64)) == TN_OZ2_SHIFT_HUGE);
    CHECK(tn_oz2_shift(1.0, 0x1p-1074, tn_oz2_dp_culog2(64)) == TN_OZ2_SHIFT_HUGE);
    CHECK(tn_oz2_need(5, 1.0, 0.0, 64) == INT_MIN && tn_oz2_need(5, 1.0, NAN, 32) == INT_MIN);
    CHECK(tn_oz2_need(5, 1.0, 1.0, 64) == -tn_oz2_dp_culog2(64) - 1 - 5 &&
          tn_oz2_need(-3, 1.0, 1.0, 32) == -tn_oz2_dp_culog2(32) - 1 + 3);
    CHECK(tn_oz2_dp_culog2(64) == TN_OZ2_DP_CLOG2 - 53 && tn_oz2_dp_culog2(32) == TN_OZ2_DP_CLOG2 - 24);
    CHECK(tn_oz2_need(0, 0x1p1020, 0.75, 64) == TN_OZ2_SHIFT_HUGE);
    /* powers of 2: r = 2^e exactly gives s = e - 1 */
    CHECK(tn_oz2_shift(1.0, 1.0, -56) == 55 && tn_oz2_shift(1.5, 1.0, -56) == 56);
}

/* The plan: the least moduli count whose P / 2 holds the products at
 * (NA + sqrt(k) / 2) (NB + sqrt(k) / 2), extra shifts as large as still
 * fit (one more on either side would not), the element bounds ya, yb
 * (NA 2^hA + 1 <= 2^ya < 2 (NA 2^hA + 1)), and
 * RANGE where 20 moduli do not hold them or an element could reach 2^80 */
TEST(ozaki2_dp_plan_least_moduli_and_extra_bits) {
    uint64_t st = 777;
    int bad = 0;
    for (int t = 0; t < 3000; t++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        const double la = 20.0 + (double)(st >> 11) * 0x1p-53 * 60.0; /* log2 NA in [20, 80) */
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        const double lb = 20.0 + (double)(st >> 11) * 0x1p-53 * 60.0;
        const int64_t k = 1 + (int64_t)(st % 200000);
        const double qa = exp2(2 * la), qb = exp2(2 * lb);
        tn_oz2_plan_t pl;
        /* the scaled norms split between q and the needs as the plan takes them */
        const int nda = (int)(st % 40), ndb = (int)((st >> 8) % 40);
        const int r = tn_oz2_plan(TCNLA_OZAKI_DP, 0, nda, ndb, ldexp(qa, -2 * nda),
                                  ldexp(qb, -2 * ndb), k, &pl);
        /* the same condition, independently, in long double with log2 P exact enough */
        const long double sk = 0.5L * sqrtl((long double)k);
        const long double NA = sqrtl((long double)qa), NB = sqrtl((long double)qb);
        int want = 0;
        long double Ph = 0;
        for (int n = 1; n <= TN_OZ2_MAXN && !want; n++) {
            tn_oz2_consts_t c;
            tn_oz2_consts(n, &c);
            Ph = 0.5L * ((long double)c.p[0] + c.p[1] + c.p[2] + c.p[3]);
            if ((NA + sk) * (NB + sk) <= Ph * (1 - 0x1p-31L) && NA < 0x1p79L && NB < 0x1p79L)
                want = n;
        }
        if (!want || NA >= 0x1p79L || NB >= 0x1p79L) {
            bad += r != TCNLA_ERR_RANGE;
            continue;
        }
        if (r != 0) {
            bad++;
            continue;
        }
        /* the least n, give or take the margins' width at the boundary */
        tn_oz2_consts_t c;
        tn_oz2_consts(pl.n, &c);
        const long double P2 = 0.5L * ((long double)c.p[0] + c.p[1] + c.p[2] + c.p[3]);
        const long double A2 = ldexpl(NA, pl.hA - nda), B2 = ldexpl(NB, pl.hB - ndb);
        int ok = pl.n >= 1 && (pl.n == want || pl.n == want + 1) && pl.hA >= nda && pl.hB >= ndb;
        ok = ok && (A2 + sk) * (B2 + sk) < P2 && A2 < 0x1p79L && B2 < 0x1p79L;
        ok = ok && ((2 * A2 + sk) * (B2 + sk) > P2 * (1 - 0x1p-25L) || 2 * A2 >= 0x1p79L);
        ok = ok && ((A2 + sk) * (2 * B2 + sk) > P2 * (1 - 0x1p-25L) || 2 * B2 >= 0x1p79L);
        ok = ok && abs(pl.hA - nda - pl.hB + ndb) <= 1 + (2 * A2 >= 0x1p79L || 2 * B2 >= 0x1p79L ? 80 : 0);
        ok = ok && A2 + 1 <= ldexpl(1.0L, pl.ya) && A2 + 1 > ldexpl(1.0L, pl.ya - 1);
        ok = ok && B2 + 1 <= ldexpl(1.0L, pl.yb) && pl.ya <= TN_OZ2_YBITS && pl.yb <= TN_OZ2_YBITS;
        if (!ok && bad++ < 3 && verbose())
            printf("    log2 NA %.3f NB %.3f k %lld: n %d (want %d) hA %d hB %d ya %d yb %d\n", la,
                   lb, (long long)k, pl.n, want, pl.hA, pl.hB, pl.ya, pl.yb);
    }
    CHECK_MSG(bad == 0, "%d of 3000 plans wrong", bad);
    tn_oz2_plan_t pl;
    CHECK(tn_oz2_plan(TCNLA_OZAKI_DP, 0, 81, 50, 1.0, 1.0, 1000, &pl) == TCNLA_ERR_RANGE); /* NA 2^81 */
    CHECK(tn_oz2_plan(TCNLA_OZAKI_DP, 0, 0, 0, 0x1p162, 0x1p100, 1000, &pl) == TCNLA_ERR_RANGE);
    CHECK(tn_oz2_plan(TCNLA_OZAKI_DP, 0, 79, 79, 1.0, 1.0, 1000, &pl) == TCNLA_ERR_RANGE); /* > 20 moduli */
    CHECK(tn_oz2_plan(TCNLA_OZAKI_DP, 0, TN_OZ2_SHIFT_HUGE, 0, 1.0, 1.0, 10, &pl) == TCNLA_ERR_RANGE);
    CHECK(tn_oz2_plan(TCNLA_OZAKI_DP, 0, INT_MIN, INT_MIN, 0.0, 0.0, 100, &pl) == 0 && pl.n == 1);
    /* 15 moduli hold 2^117.78: needs 58 + 58 at unit norms fit, 59 + 59 not */
    CHECK(tn_oz2_plan(TCNLA_OZAKI_DP, 0, 58, 58, 1.0, 1.0, 1000, &pl) == 0 && pl.n == 15 &&
          pl.hA == 58 && pl.hB == 58);
    CHECK(tn_oz2_plan(TCNLA_OZAKI_DP, 0, 59, 58, 1.0, 1.0, 1000, &pl) == 0 && pl.n == 16 &&
          pl.hA + pl.hB == 124 && pl.hA >= 59 && pl.hB >= 58);
    CHECK(tn_oz2_plan(TCNLA_OZAKI_FIXED, 16, 0, 0, 0.0, 0.0, 100, &pl) == 0 && pl.n == 16 &&
          pl.hA + pl.hB == 123 && pl.ya == pl.hA + 1 && pl.yb == pl.hB + 1);
    /* the norm's order: for k <= 256 the index order */
    double w[300], s = 0.0;
    for (int l = 0; l < 300; l++) w[l] = 1.0 / (1 + l);
    for (int l = 0; l < 256; l++) s += w[l] * w[l];
    CHECK(tn_oz2_norm2(w, 256) == sqrt(s));
}
