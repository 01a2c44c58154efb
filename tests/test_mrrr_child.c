/* Child representations for groups of close eigenvalues
 * (src/linalg/mrrr_child.h), the functions the GPU eigensolver's kernels
 * run, here on the CPU around a serial model of that solver: T from the
 * Householder tridiagonalization of a Gram matrix, T's values by
 * bisection to 2 eps ||T||, twisted vectors of T - lam I (as
 * syev_kernels.cu's twisted_kernel), and for each group the child's
 * vectors. On the spectra that make T's twisted vectors fail the solver's
 * check (gap_noise's two flat groups as the randomized SVD meets them,
 * values equal to FP32's resolution; a flat top spread by 1e-12; two
 * halves spread by 1e-9 and 1e-13 of their values) every vector comes
 * out orthogonal to the others and with a residual of a few eps ||T||.
 * Planted faults fail: the child's values left unrefined, or T's vectors
 * kept for the groups. Also the group rule (near zero, across zero, NaN,
 * descending) and the counts against Sturm counts of T. */
#include "test.h"

#include "../src/linalg/mrrr_child.h"

#include <stdlib.h>
#include <string.h>

#define EPS DBL_EPSILON

/* Measured on these spectra: the groups' vectors orthogonal to 1.9e-13 ..
 * 4.2e-13 (gap_noise, a flat top spread by 1e-12) and 2.8e-12 (a flat top
 * spread by 1e-9 of its value, whose smallest gaps are 2e-4 of the
 * child's values), residuals below 4 eps ||T||: the bounds leave a factor
 * of about 3. The other pairs (T's own vectors, or one of them and a
 * child's, or two children's) are orthogonal to about eps ||T|| / gap, the
 * gap at least TN_MR_GTOL ||T||. */
#define ORTH_BOUND 8e-12
#define ORTH_T_BOUND (8.0 * EPS / TN_MR_GTOL)
#define RES_BOUND (8.0 * EPS)

static double urand(unsigned long long *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) * 0x1p-53 * 2.0 - 1.0;
}

/* a normal deviate (Box-Muller) */
static double nrand(unsigned long long *s) {
    const double u = 0.5 * (urand(s) + 1.0) + 0x1p-60, v = 0.5 * (urand(s) + 1.0);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Q (n x n) orthonormal: Gram-Schmidt twice on random columns */
static void rand_orth(int n, unsigned long long *s, double *Q) {
    for (int j = 0; j < n; j++) {
        double *q = Q + (size_t)j * n;
        for (int i = 0; i < n; i++) q[i] = nrand(s);
        for (int pass = 0; pass < 2; pass++)
            for (int c = 0; c < j; c++) {
                const double *p = Q + (size_t)c * n;
                double t = 0;
                for (int i = 0; i < n; i++) t += p[i] * q[i];
                for (int i = 0; i < n; i++) q[i] -= t * p[i];
            }
        double t = 0;
        for (int i = 0; i < n; i++) t += q[i] * q[i];
        t = 1.0 / sqrt(t);
        for (int i = 0; i < n; i++) q[i] *= t;
    }
}

/* G = R R^T, R = U diag(sv) V^T rounded to FP32 (as the randomized SVD's
 * l x l problem) */
static void gram_of(int n, const double *sv, unsigned long long seed, double *G) {
    unsigned long long s = seed;
    double *U = malloc(sizeof(double) * 3 * (size_t)n * n), *V = U + (size_t)n * n,
           *R = V + (size_t)n * n;
    rand_orth(n, &s, U);
    rand_orth(n, &s, V);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            double t = 0;
            for (int c = 0; c < n; c++) t += U[i + (size_t)c * n] * sv[c] * V[j + (size_t)c * n];
            R[i + (size_t)j * n] = (float)t;
        }
    for (int j = 0; j < n; j++)
        for (int i = 0; i <= j; i++) {
            double t = 0;
            for (int c = 0; c < n; c++) t += R[i + (size_t)c * n] * R[j + (size_t)c * n];
            G[i + (size_t)j * n] = G[j + (size_t)i * n] = t;
        }
    free(U);
}

/* G's tridiagonal form (Householder, lower, as dsytd2): d (n), e (n - 1);
 * G is overwritten */
static void tridiag(int n, double *G, double *d, double *e) {
    double *v = malloc(sizeof(double) * 3 * (size_t)n), *p = v + n, *w = p + n;
    for (int j = 0; j < n - 2; j++) {
        double ss = 0;
        for (int i = j + 2; i < n; i++) ss += G[i + (size_t)j * n] * G[i + (size_t)j * n];
        const double alpha = G[j + 1 + (size_t)j * n];
        if (ss == 0.0) {
            e[j] = alpha;
            continue;
        }
        const double beta = -copysign(sqrt(alpha * alpha + ss), alpha);
        const double tau = (beta - alpha) / beta, scal = 1.0 / (alpha - beta);
        for (int i = 0; i < n; i++)
            v[i] = i < j + 1 ? 0.0 : i == j + 1 ? 1.0 : G[i + (size_t)j * n] * scal;
        e[j] = beta;
        /* p = tau G v, w = p - (tau / 2) (p^T v) v, G -= v w^T + w v^T */
        double pv = 0;
        for (int i = j + 1; i < n; i++) {
            double t = 0;
            for (int c = j + 1; c < n; c++) t += G[i + (size_t)c * n] * v[c];
            p[i] = tau * t;
            pv += p[i] * v[i];
        }
        for (int i = j + 1; i < n; i++) w[i] = p[i] - 0.5 * tau * pv * v[i];
        for (int c = j + 1; c < n; c++)
            for (int i = j + 1; i < n; i++) G[i + (size_t)c * n] -= v[i] * w[c] + w[i] * v[c];
    }
    for (int j = 0; j < n; j++) d[j] = G[j + (size_t)j * n];
    if (n >= 2) e[n - 2] = G[n - 1 + (size_t)(n - 2) * n];
    free(v);
}

/* T's eigenvalues ascending by bisection on Sturm counts, to 2 eps ||T|| */
static int sturm(int n, const double *d, const double *e, double x) {
    double q = d[0] - x;
    int c = q < 0;
    for (int j = 1; j < n; j++) {
        if (q == 0.0) q = -DBL_MIN;
        q = d[j] - x - e[j - 1] * e[j - 1] / q;
        c += q < 0;
    }
    return c;
}
static void tvalues(int n, const double *d, const double *e, double *lam) {
    double lo = d[0], hi = d[0];
    for (int j = 0; j < n; j++) {
        const double r = (j > 0 ? fabs(e[j - 1]) : 0) + (j < n - 1 ? fabs(e[j]) : 0);
        lo = fmin(lo, d[j] - r), hi = fmax(hi, d[j] + r);
    }
    const double atol = 2.0 * EPS * fmax(fabs(lo), fabs(hi));
    for (int k = 0; k < n; k++) {
        double a = lo - atol, b = hi + atol;
        while (b - a > atol) {
            const double m = 0.5 * (a + b);
            if (m <= a || m >= b) break;
            if (sturm(n, d, e, m) > k) b = m;
            else a = m;
        }
        lam[k] = 0.5 * (a + b);
    }
}

/* T's twisted vector for lam (twisted_kernel's recurrences) */
static void tvector(int n, const double *d, const double *e, double lam, double *Dp, double *U,
                    double *z) {
    const double pivmin = tn_mr_pivmin(n, e);
    double dp = d[0] - lam;
    for (int j = 0; j < n - 1; j++) {
        if (fabs(dp) < pivmin) dp = -pivmin;
        Dp[j] = dp;
        dp = (d[j + 1] - lam) - e[j] * (e[j] / dp);
    }
    if (fabs(dp) < pivmin) dp = -pivmin;
    double best = fabs(dp), dm = d[n - 1] - lam;
    int r = n - 1;
    for (int j = n - 2; j >= 0; j--) {
        if (fabs(dm) < pivmin) dm = -pivmin;
        const double u = e[j] / dm, aj = d[j] - lam;
        U[j] = u;
        dm = aj - u * e[j];
        const double g = fabs(Dp[j] + dm - aj);
        if (g < best) best = g, r = j;
    }
    double zj = 1.0, ss = 1.0;
    z[r] = 1.0;
    for (int j = r - 1; j >= 0; j--) zj = -(e[j] / Dp[j]) * zj, z[j] = zj, ss += zj * zj;
    zj = 1.0;
    for (int j = r; j < n - 1; j++) zj = -U[j] * zj, z[j + 1] = zj, ss += zj * zj;
    for (int j = 0; j < n; j++) z[j] /= sqrt(ss);
}

enum { FAULT_NONE, FAULT_UNREFINED, FAULT_NO_CHILD };

typedef struct {
    int groups, children;
    /* max |Z^T Z - I| over the pairs within a group (orth) and over the
     * others (orth_t); max |T z - lam z| / ||T|| */
    double orth, orth_t, res;
} outcome;

/* The model solver on G (n x n, destroyed): T, its values, its twisted
 * vectors, then the children's vectors of every group */
static outcome solve(int n, double *G, int fault) {
    double *d = malloc(sizeof(double) * (5 * (size_t)n + 2 * (size_t)n * n)), *e = d + n,
           *lam = e + n, *w1 = lam + n, *w2 = w1 + n, *Z = w2 + n, *S = Z + (size_t)n * n;
    tridiag(n, G, d, e);
    tvalues(n, d, e, lam);
    for (int k = 0; k < n; k++) tvector(n, d, e, lam[k], w1, w2, Z + (size_t)k * n);
    int *ga = malloc(sizeof(int) * (n + 2)), *gb = ga + n / 2 + 1; /* (n / 2 + 1 each) */
    outcome o = {0, 0, 0, 0, 0};
    o.groups = tn_mr_groups(n, lam, ga, gb);
    int *gid = malloc(sizeof(int) * n);
    for (int k = 0; k < n; k++) gid[k] = -1;
    for (int g = 0; g < o.groups; g++)
        for (int k = ga[g]; k <= gb[g]; k++) gid[k] = g;
    const double pivmin = tn_mr_pivmin(n, e), tn = fmax(fabs(lam[0]), fabs(lam[n - 1]));
    for (int g = 0; g < o.groups && fault != FAULT_NO_CHILD; g++) {
        double *D = S, *L = S + n, *lp = S + 2 * n, *sv = S + 3 * n, *um = S + 4 * n,
               *pv = S + 5 * n;
        const double sig = tn_mr_child(n, d, e, lam, ga[g], gb[g], pivmin, D, L);
        if (!isfinite(sig)) continue;
        o.children++;
        for (int k = ga[g]; k <= gb[g]; k++) {
            const double c = lam[k] - sig;
            double lo, hi, mu = c;
            if (fault != FAULT_UNREFINED) {
                if (!tn_mr_bracket(n, D, L, k, c, 16.0 * EPS * tn, &lo, &hi)) continue;
                mu = tn_mr_refine(n, D, L, k, lo, hi);
            }
            tn_mr_vector(n, D, L, mu, pivmin, lp, sv, um, pv, 1, Z + (size_t)k * n);
        }
    }
    for (int a = 0; a < n; a++) {
        const double *za = Z + (size_t)a * n;
        for (int b = 0; b <= a; b++) {
            double t = 0;
            for (int i = 0; i < n; i++) t += za[i] * Z[i + (size_t)b * n];
            if (gid[a] >= 0 && gid[a] == gid[b]) o.orth = fmax(o.orth, fabs(t - (a == b)));
            else o.orth_t = fmax(o.orth_t, fabs(t - (a == b)));
        }
        for (int i = 0; i < n; i++) {
            double t = d[i] * za[i] - lam[a] * za[i];
            if (i > 0) t += e[i - 1] * za[i - 1];
            if (i < n - 1) t += e[i] * za[i + 1];
            o.res = fmax(o.res, fabs(t) / tn);
        }
    }
    free(d), free(gid), free(ga);
    return o;
}

/* gap_noise as the randomized SVD's l x l problem meets it (l = 266):
 * 128 values at 1.0001 and 138 at 0.0101 (its noise floor), equal to
 * FP32's resolution (relative spreads 3e-8 and 3e-6) */
static void gap_noise_sv(int n, unsigned long long seed, double *sv) {
    unsigned long long s = seed;
    for (int i = 0; i < n; i++)
        sv[i] = i < 128 ? 1.0001 * (1.0 + 3e-8 * nrand(&s)) : 0.0101 * (1.0 + 3e-6 * nrand(&s));
}

static outcome run_sv(int n, const double *sv, unsigned long long seed, int fault) {
    double *G = malloc(sizeof(double) * (size_t)n * n);
    gram_of(n, sv, seed, G);
    const outcome o = solve(n, G, fault);
    free(G);
    return o;
}

TEST(mrrr_child_gap_noise_groups_orthogonal) {
    const int n = 266;
    double sv[266];
    for (unsigned long long seed = 1; seed <= 2; seed++) {
        gap_noise_sv(n, 100 + seed, sv);
        const outcome o = run_sv(n, sv, seed, FAULT_NONE);
        printf("    gap_noise seed %llu: groups %d children %d, Z^T Z - I %.1e (groups) "
               "%.1e (others), T z - lam z %.1e ||T||\n", seed, o.groups, o.children, o.orth,
               o.orth_t, o.res);
        /* (a flat group's sparse ends may stand apart from it as groups of
         * their own, or as single values) */
        CHECK(o.groups >= 2 && o.children == o.groups);
        CHECK(o.orth <= ORTH_BOUND);
        CHECK(o.orth_t <= ORTH_T_BOUND);
        CHECK(o.res <= RES_BOUND);
    }
}

/* V diag(lam) V^T with lam's values as the GPU test's kinds 8 and 3 */
static outcome run_lam(int n, int kind, unsigned long long seed, int fault) {
    double *lv = malloc(sizeof(double) * n), *V = malloc(sizeof(double) * 2 * (size_t)n * n),
           *G = V + (size_t)n * n;
    unsigned long long s = seed;
    for (int i = 0; i < n; i++) {
        const double x = (double)i / n, r = urand(&s);
        lv[i] = kind == 8 ? (i < n / 2 ? 1.0 + 1e-12 * r : pow(10.0, -4.0 - 2.0 * x))
                          : (i < n / 2 ? 1.0 + 1e-9 * r : 1e-4 + 1e-13 * r);
    }
    rand_orth(n, &s, V);
    for (int j = 0; j < n; j++)
        for (int i = 0; i <= j; i++) {
            double t = 0;
            for (int c = 0; c < n; c++) t += V[i + (size_t)c * n] * lv[c] * V[j + (size_t)c * n];
            G[i + (size_t)j * n] = G[j + (size_t)i * n] = t;
        }
    const outcome o = solve(n, G, fault);
    free(lv), free(V);
    return o;
}

TEST(mrrr_child_flat_tops_orthogonal) {
    const int kinds[2] = {8, 3};
    for (int t = 0; t < 2; t++) {
        const outcome o = run_lam(200, kinds[t], 7 + t, FAULT_NONE);
        printf("    kind %d: groups %d children %d, Z^T Z - I %.1e (groups) %.1e (others), "
               "T z - lam z %.1e ||T||\n", kinds[t], o.groups, o.children, o.orth, o.orth_t,
               o.res);
        CHECK(o.groups >= 1 && o.children == o.groups);
        CHECK(o.orth <= ORTH_BOUND);
        CHECK(o.orth_t <= ORTH_T_BOUND);
        CHECK(o.res <= RES_BOUND);
    }
}

/* The planted faults: T's own vectors for the groups (what the solver
 * computed before), or the child's values taken from T's bisection
 * without their refinement to relative accuracy */
TEST(mrrr_child_planted_faults_fail) {
    const int n = 266;
    double sv[266];
    gap_noise_sv(n, 101, sv);
    const outcome a = run_sv(n, sv, 1, FAULT_NO_CHILD), b = run_sv(n, sv, 1, FAULT_UNREFINED);
    printf("    no child: Z^T Z - I %.1e; unrefined: %.1e\n", a.orth, b.orth);
    CHECK(a.orth > 1e3 * ORTH_BOUND);
    CHECK(b.orth > 1e3 * ORTH_BOUND);
}

TEST(mrrr_child_group_rule) {
    int ga[40], gb[40];
    /* two groups away from zero; one near zero not taken; singletons not */
    const double lam[10] = {1e-12, 1.5e-12, 1e-3, 0.2, 0.2 + 1e-9, 0.2 + 3e-9, 0.5,
                            1.0 - 2e-9, 1.0 - 1e-9, 1.0};
    CHECK_EQ_INT(tn_mr_groups(10, lam, ga, gb), 2);
    CHECK_EQ_INT(ga[0], 3);
    CHECK_EQ_INT(gb[0], 5);
    CHECK_EQ_INT(ga[1], 7);
    CHECK_EQ_INT(gb[1], 9);
    /* a group across zero: none */
    const double z[4] = {-1e-9, 1e-9, 0.5, 1.0};
    CHECK_EQ_INT(tn_mr_groups(4, z, ga, gb), 0);
    /* NaN, descending: none */
    double bad[4] = {0.5, 0.5, NAN, 1.0};
    CHECK_EQ_INT(tn_mr_groups(4, bad, ga, gb), 0);
    bad[2] = 0.2;
    CHECK_EQ_INT(tn_mr_groups(4, bad, ga, gb), 0);
    CHECK_EQ_INT(tn_mr_groups(1, lam, ga, gb), 0);
    /* as many as there are: 20 pairs */
    double many[40];
    for (int i = 0; i < 40; i++) many[i] = 1.0 + (i / 2) * 0.01 + (i % 2) * 1e-12;
    CHECK_EQ_INT(tn_mr_groups(40, many, ga, gb), 20);
    CHECK_EQ_INT(ga[0], 0);
    CHECK_EQ_INT(gb[19], 39);
}

/* the child's counts are T's Sturm counts at sig + mu (away from T's
 * values), and the bracket holds the value it names */
TEST(mrrr_child_counts_match_sturm) {
    const int n = 120;
    double sv[120];
    unsigned long long s = 5;
    for (int i = 0; i < n; i++) sv[i] = i < 60 ? 1.0 * (1.0 + 1e-8 * nrand(&s)) : 0.1 / (1 + i);
    double *G = malloc(sizeof(double) * (size_t)n * n), *w = malloc(sizeof(double) * 5 * n);
    double *d = w, *e = d + n, *lam = e + n, *D = lam + n, *L = D + n;
    gram_of(n, sv, 9, G);
    tridiag(n, G, d, e);
    tvalues(n, d, e, lam);
    int ga[61], gb[61];
    REQUIRE(tn_mr_groups(n, lam, ga, gb) == 1);
    const double pivmin = tn_mr_pivmin(n, e);
    const double sig = tn_mr_child(n, d, e, lam, ga[0], gb[0], pivmin, D, L);
    REQUIRE(isfinite(sig));
    int bad = 0;
    for (int k = 1; k < n; k++) { /* midpoints between well-separated values */
        if (lam[k] - lam[k - 1] < 1e-6) continue;
        const double x = 0.5 * (lam[k] + lam[k - 1]);
        bad += tn_mr_negcount(n, D, L, x - sig) != sturm(n, d, e, x);
    }
    CHECK_EQ_INT(bad, 0);
    const double tn = fmax(fabs(lam[0]), fabs(lam[n - 1]));
    for (int k = ga[0]; k <= gb[0]; k += 7) {
        double lo, hi;
        REQUIRE(tn_mr_bracket(n, D, L, k, lam[k] - sig, 16.0 * EPS * tn, &lo, &hi));
        const double mu = tn_mr_refine(n, D, L, k, lo, hi);
        CHECK(fabs(mu + sig - lam[k]) <= 8.0 * EPS * tn);
        CHECK(tn_mr_negcount(n, D, L, mu - 8 * EPS * fabs(mu)) <= k);
        CHECK(tn_mr_negcount(n, D, L, mu + 8 * EPS * fabs(mu)) > k);
    }
    free(G), free(w);
}
