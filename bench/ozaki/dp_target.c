/* How the error of scheme II's result depends on its bit budget, against the
 * native dot product's, on bench_ozaki's inputs (CPU; n^2 work for the plan,
 * k work per sampled element). FP64 by default; --single: the inputs
 * rounded to FP32, DP mode's rule for FP32 output (u = 2^-24), the
 * scheme's value rounded to FP32, the native the sequential FP32 FMA dot
 * product (an SGEMM's order).
 *
 * For every n and phi: A, B (n x n) as bench_ozaki makes them; DP mode's
 * needs (tn_oz2_need, src/gemm/ozaki2.h) and plan (tn_oz2_plan: the moduli
 * count, the extra shifts). Then, for extra shifts x = xA + xB from -12 to
 * +6 (xA = floor(x / 2); x = 0: hA, hB at exactly the needs, which is what
 * the accuracy rule asks for), and for both roundings of the scaled integers (toward zero, to
 * nearest, the library's): the scheme's value of each of S x S sampled
 * elements (bench_ozaki's positions; --worst: the S rows of A and the S
 * columns of B of the largest needs, where the rule's margin is least), x = a'_i . b'_j (a compensated sum of
 * the exact integer products), rounded once to FP64 and scaled back; its relative error
 * against the exact product (a compensated dot product), the largest and
 * the median over the sample. Beside it the same for the sequential FMA dot
 * product in FP64 (a native GEMM's order). Also the bits the products take
 * at x = 0, log2((NA + sqrt(k) / 2) (NB + sqrt(k) / 2)) + 1, against the
 * bits of 13 to 17 moduli (log2 P; 6 to 10 with --single).
 *   bench_oz2_dp_target [--sizes N,..] [--phis P,..] [--sample S] [--worst] [--single]
 *                       [--csv FILE]
 */
#include "gemm/ozaki2.h"
#include "testmat/testdata.h"

#define BENCH_NAME "bench_oz2_dp_target"
#include "../bench_util.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the exact dot product rounded once (Ogita, Rump, Oishi's Dot2: error
 * about u |a . b| + k^2 u^2 |a| . |b|) */
static double dot_exact(const double *a, const double *b, int64_t k) {
    double s = 0.0, c = 0.0;
    for (int64_t l = 0; l < k; l++) {
        const double p = a[l] * b[l], pe = fma(a[l], b[l], -p);
        const double t = s + p, z = t - s, te = (s - (t - z)) + (p - z);
        s = t, c += pe + te;
    }
    return s + c;
}

static double dot_fma(const double *a, const double *b, int64_t k, int single) {
    if (single) {
        float s = 0.0f;
        for (int64_t l = 0; l < k; l++) s = fmaf((float)a[l], (float)b[l], s);
        return s;
    }
    double s = 0.0;
    for (int64_t l = 0; l < k; l++) s = fma(a[l], b[l], s);
    return s;
}

/* the scheme's value: x = a' . b' with a'_l = rnd(2^sa a_l), b'_l = rnd(2^sb b_l)
 * (each an integer with at most 53 significant bits: a double), summed as
 * dot_exact sums (its error, about 2^-106 relative, is far below the
 * scheme's), then scaled back */
static double dot_scheme(const double *a, const double *b, int64_t k, int sa, int sb,
                         int nearest, double *ta, double *tb) {
    for (int64_t l = 0; l < k; l++) {
        const double ya = ldexp(a[l], sa), yb = ldexp(b[l], sb);
        ta[l] = nearest ? nearbyint(ya) : trunc(ya);
        tb[l] = nearest ? nearbyint(yb) : trunc(yb);
    }
    return ldexp(dot_exact(ta, tb, k), -(sa + sb));
}

static double log2p(int n) { /* log2 of the product of the first n moduli */
    tn_oz2_consts_t c;
    tn_oz2_consts(n, &c);
    return log2(c.p[0] + c.p[1] + c.p[2] + c.p[3]);
}

static void stats(double *e, int cnt, double *mx, double *med) {
    qsort(e, (size_t)cnt, sizeof *e, cmp_d);
    *mx = e[cnt - 1];
    *med = e[cnt / 2];
}

/* the S vectors of the largest need (ties: the lower index first), as
 * tn_oz2_need from each vector's g = |x| . w; into idx */
static void neediest(const double *X, int64_t sv, int64_t sl, int64_t nv, const double *w,
                     double wn, const int *sig, int S, int prec, int64_t *idx) {
    int *nd = malloc(sizeof(int) * (size_t)nv);
    char *taken = calloc((size_t)nv, 1);
#pragma omp parallel for schedule(static)
    for (int64_t v = 0; v < nv; v++) {
        double g = 0.0;
        for (int64_t l = 0; l < nv; l++) g += fabs(X[v * sv + l * sl]) * w[l];
        nd[v] = tn_oz2_need(sig[v], wn, g, prec);
    }
    for (int t = 0; t < S; t++) { /* S passes: S is small */
        int64_t b = -1;
        for (int64_t v = 0; v < nv; v++)
            if (!taken[v] && (b < 0 || nd[v] > nd[b])) b = v;
        idx[t] = b, taken[b] = 1;
    }
    free(nd), free(taken);
}

static int run(int64_t n, double phi, int S, int worst, int single, FILE *csv) {
    const int prec = single ? 32 : 64;
    const size_t nn = (size_t)n * (size_t)n;
    double *A = malloc(sizeof(double) * nn), *B = malloc(sizeof(double) * nn);
    double *w = calloc((size_t)n, sizeof(double)), *z = calloc((size_t)n, sizeof(double));
    int *sgA = malloc(sizeof(int) * (size_t)n), *sgB = malloc(sizeof(int) * (size_t)n);
    double *As = malloc(sizeof(double) * (size_t)S * (size_t)n);
    double *Bs = malloc(sizeof(double) * (size_t)S * (size_t)n);
    double *R = malloc(sizeof(double) * (size_t)S * (size_t)S);
    double *e = malloc(sizeof(double) * (size_t)S * (size_t)S);
    int64_t *ri = malloc(sizeof(int64_t) * (size_t)S), *cj = malloc(sizeof(int64_t) * (size_t)S);
    if (!A || !B || !w || !z || !sgA || !sgB || !As || !Bs || !R || !e || !ri ||
        !cj) {
        fprintf(stderr, "bench_oz2_dp_target: out of memory at n = %lld\n", (long long)n);
        return 1;
    }
    tn_rand_phi(1000, 1, phi, (int64_t)nn, A); /* A column-major: a_il = A[i + l n] */
    tn_rand_phi(1000, 2, phi, (int64_t)nn, B);
    if (single)
        for (size_t i = 0; i < nn; i++) A[i] = (float)A[i], B[i] = (float)B[i];
    for (int64_t j = 0; j < n; j++)
        for (int64_t l = 0; l < n; l++) w[l] += fabs(B[l + j * n]); /* |B| e */
    for (int64_t l = 0; l < n; l++)
        for (int64_t i = 0; i < n; i++) z[l] += fabs(A[i + l * n]); /* |A|^T e */
    int ndA, ndB;
    const double qa = tn_oz2_vecs(A, 1, n, n, n, w, tn_oz2_norm2(w, n), prec, sgA, &ndA);
    const double qb = tn_oz2_vecs(B, n, 1, n, n, z, tn_oz2_norm2(z, n), prec, sgB, &ndB);
    tn_oz2_plan_t pl;
    if (ndA == INT_MIN || ndB == INT_MIN ||
        tn_oz2_plan(TCNLA_OZAKI_DP, 0, ndA, ndB, qa, qb, n, &pl)) {
        fprintf(stderr, "bench_oz2_dp_target: no plan (RANGE)\n");
        return 1;
    }
    if (worst) {
        neediest(A, 1, n, n, w, tn_oz2_norm2(w, n), sgA, S, prec, ri);
        neediest(B, n, 1, n, z, tn_oz2_norm2(z, n), sgB, S, prec, cj);
    }
    for (int t = 0; t < S; t++) {
        if (!worst) ri[t] = ((int64_t)t * n / S + 7) % n, cj[t] = ((int64_t)t * n / S + 3) % n;
        for (int64_t l = 0; l < n; l++)
            As[l + t * n] = A[ri[t] + l * n], Bs[l + t * n] = B[l + cj[t] * n];
    }
#pragma omp parallel for collapse(2)
    for (int t = 0; t < S; t++)
        for (int u = 0; u < S; u++) R[t + u * S] = dot_exact(As + t * n, Bs + u * n, n);
    double nmax, nmed;
#pragma omp parallel for collapse(2)
    for (int t = 0; t < S; t++)
        for (int u = 0; u < S; u++) {
            const double r = R[t + u * S];
            e[t + u * S] =
                r == 0.0 ? 0.0 : fabs(dot_fma(As + t * n, Bs + u * n, n, single) - r) / fabs(r);
        }
    stats(e, S * S, &nmax, &nmed);
    const double sk = 0.5 * sqrt((double)n);
    const double bits = log2((ldexp(sqrt(qa), ndA) + sk) * (ldexp(sqrt(qb), ndB) + sk)) + 1.0;
    const int m0 = single ? 6 : 13;
    printf("n %lld phi %.2f %s: the products take %.2f bits; rule: %d moduli, extra shifts %d + %d; "
           "log2 P of %d..%d moduli: %.2f %.2f %.2f %.2f %.2f\n",
           (long long)n, phi, single ? "FP32" : "FP64", bits, pl.n, pl.hA - ndA, pl.hB - ndB, m0,
           m0 + 4, log2p(m0), log2p(m0 + 1), log2p(m0 + 2), log2p(m0 + 3), log2p(m0 + 4));
    printf("  %s fma dot product: max %.3e median %.3e\n", single ? "FP32" : "FP64", nmax, nmed);
    printf("  %5s %11s %11s %11s %11s %7s %7s\n", "x", "max_trunc", "max_rint", "med_trunc",
           "med_rint", "trunc/n", "rint/n");
    for (int x = -12; x <= 6; x++) {
        const int xa = x >= 0 ? x / 2 : -((1 - x) / 2), xb = x - xa;
        double mx[2], md[2];
        for (int nearest = 0; nearest < 2; nearest++) {
#pragma omp parallel for collapse(2)
            for (int t = 0; t < S; t++)
                for (int u = 0; u < S; u++) {
                    double ta[n], tb[n]; /* (the scaled integers, as doubles) */
                    const double r = R[t + u * S];
                    double v = dot_scheme(As + t * n, Bs + u * n, n, ndA + xa + sgA[ri[t]],
                                          ndB + xb + sgB[cj[u]], nearest, ta, tb);
                    if (single) v = (float)v;
                    e[t + u * S] = r == 0.0 ? 0.0 : fabs(v - r) / fabs(r);
                }
            stats(e, S * S, &mx[nearest], &md[nearest]);
        }
        printf("  %5d %11.3e %11.3e %11.3e %11.3e %7.3f %7.3f%s\n", x, mx[0], mx[1], md[0], md[1],
               mx[0] / nmax, mx[1] / nmax, x == pl.hA + pl.hB - ndA - ndB ? "  <- the rule's" : "");
        if (csv)
            fprintf(csv, "%s,%lld,%.2f,%d,%.3f,%d,%d,%d,%.4e,%.4e,%.4e,%.4e,%.4e,%.4e\n",
                    single ? "f32" : "f64", (long long)n, phi, S, bits, pl.n,
                    pl.hA + pl.hB - ndA - ndB, x, mx[0], mx[1], md[0], md[1], nmax, nmed);
    }
    free(A), free(B), free(w), free(z), free(sgA), free(sgB);
    free(As), free(Bs), free(R), free(e), free(ri), free(cj);
    return 0;
}

int main(int argc, char **argv) {
    double sizes[16] = {1024, 4096}, phis[16] = {0.5, 2.0};
    int ns = 2, np = 2, S = 32, worst = 0, single = 0;
    const char *csvp = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: bench_oz2_dp_target [--sizes N,..] [--phis P,..] [--sample S] "
                   "[--worst] [--single] [--csv FILE]\n"
                   "defaults: 1024,4096 0.5,2 32, bench_ozaki's sample, FP64, no CSV\n"
                   "The error of scheme II's result against its bit budget (both roundings of\n"
                   "the scaled integers), beside the FMA dot product's, on bench_ozaki's inputs\n"
                   "(CPU; S x S sampled elements; --worst: the rows and columns of the largest\n"
                   "needs; --single: FP32 inputs and output, DP mode's FP32 rule).\n");
            return 0;
        } else if (i + 1 < argc && !strcmp(argv[i], "--sizes")) {
            if ((ns = bench_parse_positive(argv[++i], sizes, 16)) < 1) goto bad;
        } else if (i + 1 < argc && !strcmp(argv[i], "--phis")) {
            if ((np = bench_parse_positive(argv[++i], phis, 16)) < 1) goto bad;
        } else if (i + 1 < argc && !strcmp(argv[i], "--sample")) {
            S = atoi(argv[++i]);
            if (S < 1 || S > 1024) goto bad;
        } else if (i + 1 < argc && !strcmp(argv[i], "--csv")) {
            csvp = argv[++i];
        } else if (!strcmp(argv[i], "--worst")) {
            worst = 1;
        } else if (!strcmp(argv[i], "--single")) {
            single = 1;
        } else {
            goto bad;
        }
    }
    for (int i = 0; i < ns; i++)
        if (sizes[i] != floor(sizes[i]) || sizes[i] < 2 || sizes[i] > 32768) goto bad;
    FILE *csv = NULL;
    if (csvp) {
        csv = fopen(csvp, "w");
        if (!csv) {
            fprintf(stderr, "bench_oz2_dp_target: cannot write %s\n", csvp);
            return 1;
        }
        fprintf(csv, "prec,n,phi,sample,bits,moduli,rule_extra,extra,max_trunc,max_rint,"
                     "med_trunc,med_rint,max_fma,med_fma\n");
    }
    int rc = 0;
    for (int i = 0; i < ns && !rc; i++) {
        if (S > sizes[i]) S = (int)sizes[i];
        for (int p = 0; p < np && !rc; p++)
            rc = run((int64_t)sizes[i], phis[p], S, worst, single, csv);
    }
    if (csv) fclose(csv);
    return rc;
bad:
    fprintf(stderr, "bench_oz2_dp_target: bad arguments (--help)\n");
    return 2;
}
