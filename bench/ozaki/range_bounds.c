/* How much of scheme II's budget a range bound tighter than Cauchy-Schwarz
 * could give back, on bench_ozaki's inputs (CPU, FP64; n^3 work per case).
 *
 * DP mode scales row i of A by 2^(hA + sigma_i) and column j of B by
 * 2^(hB + sigma_j) (2^sigma ||x|| <= 1 from the 8-bit norm bound of
 * src/gemm/ozaki2.h), hA and hB at least the largest needs (tn_oz2_need),
 * and keeps every scaled product within the moduli's range by
 * Cauchy-Schwarz: max_i 2^s_i ||a_i|| max_j 2^t_j ||b_j|| < P / 2. A bound b_ij on
 * |a_i . b_j| would instead ask, pair by pair, 2^(s_i + t_j) b_ij < P / 2,
 * and the bits it saves are the difference of the two sides' log2 maxima.
 * Printed (and written as CSV) for
 *   cs     b_ij = ||a_i|| ||b_j|| (pair by pair: what the 8-bit norm
 *          bounds' rounding leaves),
 *   abs    b_ij = (|A| |B|)_ij (an extra product of magnitudes),
 *   kblock b_ij = sum over blocks of KB of max |a_il| times sum |b_lj| (a
 *          product with k / KB inner dimension),
 *   true   b_ij = |a_i . b_j| (no bound can do better).
 * Also the DP rule's moduli count and the shortfall of one modulus fewer
 * (the bits its log2 (P / 2) lacks): a bound saves a modulus where it saves
 * that many bits. The pairs take n^3
 * work; above --pair-max (default 4096) only the count and the shortfall
 * (n^2) are computed.
 *   bench_oz2_range_bounds [--sizes N,..] [--phis P,..] [--kb KB]
 *                          [--prec 64|32] [--pair-max N] [--csv FILE]
 */
#include "gemm/ozaki2.h"
#include "testmat/testdata.h"

#define BENCH_NAME "bench_oz2_range_bounds"
#include "../bench_util.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double log2p(int n) { /* log2 of the product of the first n moduli */
    tn_oz2_consts_t c;
    tn_oz2_consts(n, &c);
    return log2(c.p[0] + c.p[1] + c.p[2] + c.p[3]);
}

static int run(int64_t n, double phi, int kb, int prec, int64_t pair_max, FILE *csv) {
    const size_t nn = (size_t)n * (size_t)n;
    double *A = malloc(sizeof(double) * nn), *B = malloc(sizeof(double) * nn);
    double *At = malloc(sizeof(double) * nn), *w = calloc((size_t)n, sizeof(double));
    double *z = calloc((size_t)n, sizeof(double)), *na = malloc(sizeof(double) * (size_t)n);
    double *nb = malloc(sizeof(double) * (size_t)n);
    const int64_t nbk = (n + kb - 1) / kb;
    double *Am = malloc(sizeof(double) * (size_t)(nbk * n)), *Bs = malloc(sizeof(double) * (size_t)(nbk * n));
    int *sgA = malloc(sizeof(int) * (size_t)n), *sgB = malloc(sizeof(int) * (size_t)n);
    if (!A || !B || !At || !w || !z || !na || !nb || !Am || !Bs || !sgA || !sgB) {
        fprintf(stderr, "bench_oz2_range_bounds: out of memory at n = %lld\n", (long long)n);
        return 1;
    }
    /* bench_ozaki's inputs: (rand - 0.5) exp(phi randn), A and B from two streams */
    tn_rand_phi(1000, 1, phi, (int64_t)nn, A);
    tn_rand_phi(1000, 2, phi, (int64_t)nn, B);
    for (int64_t i = 0; i < n; i++)
        for (int64_t l = 0; l < n; l++) At[l + i * n] = A[i + l * n]; /* rows of A contiguous */
    for (int64_t j = 0; j < n; j++)
        for (int64_t l = 0; l < n; l++) w[l] += fabs(B[l + j * n]); /* |B| e */
    for (int64_t i = 0; i < n; i++)
        for (int64_t l = 0; l < n; l++) z[l] += fabs(At[l + i * n]); /* |A|^T e */
    int ndA, ndB;
    const double qa = tn_oz2_vecs(At, n, 1, n, n, w, tn_oz2_norm2(w, n), prec, sgA, &ndA);
    const double qb = tn_oz2_vecs(B, n, 1, n, n, z, tn_oz2_norm2(z, n), prec, sgB, &ndB);
    for (int64_t v = 0; v < n; v++) {
        double sa = 0.0, sb = 0.0;
        for (int64_t l = 0; l < n; l++) sa += At[l + v * n] * At[l + v * n], sb += B[l + v * n] * B[l + v * n];
        na[v] = sqrt(sa), nb[v] = sqrt(sb);
        for (int64_t q = 0; q < nbk; q++) {
            double m = 0.0, s = 0.0;
            for (int64_t l = q * kb; l < n && l < (q + 1) * kb; l++)
                m = fmax(m, fabs(At[l + v * n])), s += fabs(B[l + v * n]);
            Am[q + v * nbk] = m, Bs[q + v * nbk] = s;
        }
    }
    tn_oz2_plan_t pl;
    if (ndA == INT_MIN || ndB == INT_MIN ||
        tn_oz2_plan(TCNLA_OZAKI_DP, 0, ndA, ndB, qa, qb, n, &pl)) {
        fprintf(stderr, "bench_oz2_range_bounds: a zero operand, or no plan (RANGE)\n");
        return 1;
    }
    /* the bits the products take by Cauchy-Schwarz on the norm bounds (the
     * plan's condition), and what one modulus fewer lacks of them */
    const double sk = 0.5 * sqrt((double)n);
    const double cs = log2((ldexp(sqrt(qa), ndA) + sk) * (ldexp(sqrt(qb), ndB) + sk)) + 1.0;
    const double shortfall = pl.n > 1 ? cs - log2p(pl.n - 1) : 0.0;
    /* max over pairs of log2(2^(s_i + t_j) b_ij) + 1, per bound */
    double Lc = -1e300, La = -1e300, Lk = -1e300, Lt = -1e300;
    const int64_t np = n <= pair_max ? n : 0;
#pragma omp parallel for reduction(max : Lc, La, Lk, Lt) schedule(dynamic, 8)
    for (int64_t i = 0; i < np; i++)
        for (int64_t j = 0; j < n; j++) {
            if (na[i] == 0.0 || nb[j] == 0.0) continue; /* (zero vectors) */
            const double *a = At + i * n, *b = B + j * n;
            double t = 0.0, e = 0.0, k = 0.0;
            for (int64_t l = 0; l < n; l++) t += a[l] * b[l], e += fabs(a[l]) * fabs(b[l]);
            for (int64_t q = 0; q < nbk; q++) k += Am[q + i * nbk] * Bs[q + j * nbk];
            const double base = ndA + ndB + sgA[i] + sgB[j] + 1.0;
            Lc = fmax(Lc, base + log2(na[i] * nb[j]));
            La = fmax(La, base + log2(e));
            Lk = fmax(Lk, base + log2(k));
            if (t != 0.0) Lt = fmax(Lt, base + log2(fabs(t)));
        }
    printf("n %6lld phi %.2f prec %d: Cauchy-Schwarz needs %.2f bits, %d moduli, one fewer short "
           "by %.2f bits", (long long)n, phi, prec, cs, pl.n, shortfall);
    if (np)
        printf("; saved by (kb %d) cs %.2f, abs %.2f, kblock %.2f, true %.2f", kb, cs - Lc,
               cs - La, cs - Lk, cs - Lt);
    printf("\n");
    if (csv && np)
        fprintf(csv, "%lld,%.2f,%d,%d,%.3f,%d,%.3f,%.3f,%.3f,%.3f,%.3f\n", (long long)n, phi, prec,
                kb, cs, pl.n, shortfall, cs - Lc, cs - La, cs - Lk, cs - Lt);
    else if (csv)
        fprintf(csv, "%lld,%.2f,%d,%d,%.3f,%d,%.3f,,,,\n", (long long)n, phi, prec, kb, cs, pl.n,
                shortfall);
    free(A), free(B), free(At), free(w), free(z), free(na), free(nb), free(Am), free(Bs);
    free(sgA), free(sgB);
    return 0;
}

int main(int argc, char **argv) {
    double sizes[16] = {1024, 2048}, phis[16] = {0.5, 2.0};
    int ns = 2, np = 2, kb = 32, prec = 64;
    int64_t pair_max = 4096;
    const char *csvp = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: bench_oz2_range_bounds [--sizes N,..] [--phis P,..] [--kb KB] "
                   "[--prec 64|32] [--pair-max N] [--csv FILE]\n"
                   "defaults: 1024,2048 0.5,2 32 64 4096, no CSV (bench/results/"
                   "ozaki_range_bounds.csv holds a run)\n"
                   "Bits of scheme II's budget that range bounds tighter than Cauchy-Schwarz\n"
                   "would give back on bench_ozaki's inputs (CPU, n^3 work per case).\n");
            return 0;
        } else if (i + 1 < argc && !strcmp(argv[i], "--sizes")) {
            if ((ns = bench_parse_positive(argv[++i], sizes, 16)) < 1) goto bad;
        } else if (i + 1 < argc && !strcmp(argv[i], "--phis")) {
            if ((np = bench_parse_positive(argv[++i], phis, 16)) < 1) goto bad;
        } else if (i + 1 < argc && !strcmp(argv[i], "--kb")) {
            kb = atoi(argv[++i]);
            if (kb < 1) goto bad;
        } else if (i + 1 < argc && !strcmp(argv[i], "--prec")) {
            prec = atoi(argv[++i]);
            if (prec != 64 && prec != 32) goto bad;
        } else if (i + 1 < argc && !strcmp(argv[i], "--pair-max")) {
            pair_max = atoll(argv[++i]);
            if (pair_max < 0) goto bad;
        } else if (i + 1 < argc && !strcmp(argv[i], "--csv")) {
            csvp = argv[++i];
        } else {
            goto bad;
        }
    }
    for (int i = 0; i < ns; i++)
        if (sizes[i] != floor(sizes[i]) || sizes[i] < 2 || sizes[i] > 16384) goto bad;
    FILE *csv = NULL;
    if (csvp) {
        csv = fopen(csvp, "w");
        if (!csv) {
            fprintf(stderr, "bench_oz2_range_bounds: cannot write %s\n", csvp);
            return 1;
        }
        fprintf(csv, "n,phi,prec,kb,cs_bits,moduli,shortfall_bits,saved_cs,saved_abs,"
                     "saved_kblock,saved_true\n");
    }
    int rc = 0;
    for (int i = 0; i < ns && !rc; i++)
        for (int p = 0; p < np && !rc; p++)
            rc = run((int64_t)sizes[i], phis[p], kb, prec, pair_max, csv);
    if (csv) fclose(csv);
    return rc;
bad:
    fprintf(stderr, "bench_oz2_range_bounds: bad arguments (--help)\n");
    return 2;
}
