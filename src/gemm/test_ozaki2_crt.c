/* Ozaki scheme II's internals (src/gemm/ozaki2.c), white-box: the CRT
 * constants and the reconstruction against 128-bit integers, the residues,
 * and the moduli count taken from the smallest key. The scheme itself is
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
    /* residues of scaled values: trunc(x 2^s) mod p, in [-128, 127] */
    tn_oz2_consts(20, &c);
    const double xs[] = {0.0, 1.0, -1.0, 0x1.fffffffffffffp-1, -3.75, 1e-300, -0x1p-1074, 1e300};
    const int ss[] = {0, 10, 62, 79};
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) {
            double y = trunc(scalbn(xs[i], ss[j]));
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

/* DP mode takes its need from the vector with the smallest key
 * (tn_oz2_gkey) instead of the largest per-vector tn_oz2_need: the same
 * value on random sets (zeros included; g in 2^[-300, 300], where the
 * per-vector formula has no overflow), the key orders g 2^sigma (subnormal
 * g too), and a quotient ||w|| / (u g) beyond the doubles asks for more
 * than any moduli count instead of overflowing the int */
TEST(ozaki2_need_from_smallest_key) {
    uint64_t st = 12345;
    int diff = 0;
    for (int set = 0; set < 2000; set++) {
        const int nv = 1 + set % 37, prec = set % 2 ? 32 : 64;
        const double wn = ldexp(1.0 + (double)(set % 97) / 97.0, set % 200 - 100);
        int want = INT_MIN;
        uint64_t key = UINT64_MAX;
        for (int v = 0; v < nv; v++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            const double f = 0.5 + (double)(st >> 12) * 0x1p-53;
            const int sg = (int)((st >> 3) % 400) - 200;
            double g = ldexp(f, (int)((st >> 20) % 600) - 300); /* wn / (u g) stays finite */
            if (v % 11 == 7) g = 0.0;
            want = TN_MAX(want, tn_oz2_need(sg, wn, g, prec));
            key = TN_MIN(key, tn_oz2_gkey(g, sg));
        }
        const int got = tn_oz2_need_key(key, wn, prec);
        if (got != want && diff++ < 3 && verbose())
            printf("    set %d: need %d from the key, %d from the vectors\n", set, got, want);
    }
    CHECK_MSG(diff == 0, "%d of 2000 sets differ", diff);
    CHECK(tn_oz2_gkey(0.0, 3) == UINT64_MAX && tn_oz2_gkey(NAN, 0) == UINT64_MAX &&
          tn_oz2_gkey(INFINITY, 0) == UINT64_MAX);
    CHECK(tn_oz2_need_key(UINT64_MAX, 1.0, 64) == INT_MIN);
    tn_oz2_plan_t pl;
    const int huge = tn_oz2_need_key(tn_oz2_gkey(0.75, 0), 0x1p1020, 64);
    CHECK(huge > 1000 && tn_oz2_plan(TCNLA_OZAKI_DP, 0, huge, 0, &pl) == TCNLA_ERR_RANGE);
    CHECK(tn_oz2_gkey(0x1p-1070, 0) < tn_oz2_gkey(0x1.8p-1070, 0));
    CHECK(tn_oz2_gkey(3.0, -1) < tn_oz2_gkey(2.0, 0) && tn_oz2_gkey(1.0, 5) == tn_oz2_gkey(0.5, 6));
}
