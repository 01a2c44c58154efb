/* The small SVD of the randomized drivers on the GPU (src/backend/cuda/
 * small_svd_cuda.c), each path timed on the same l x l FP32 R (column-
 * graded: tests/small_svd_mat.h, k = l - 10 values spanning `decades`,
 * R's triangular factor of G D):
 *   auto      the backend's rule (the eigensolution of R R^T where s_k >=
 *             1e-4 s_1, else the deflated Gram path from its vectors,
 *             src/linalg/deflated_svd.h, gesvdj where that refuses);
 *   deflate   the deflated Gram path forced (TN_SSVD_DEFLATE);
 *   jacobi    the one-sided Jacobi path preconditioned by the
 *             eigensolution's vectors (the tuning's small_svd_jacobi);
 *   plain     the Jacobi path on R^T itself (no eigensolution);
 *   gesvdj    cuSOLVER's gesvdj (the fallback of the others).
 * Each call ends with a host synchronisation (its read back), so the wall
 * clock around it is its time; median of --reps after two warm-up calls.
 * Columns: gpu, l, k, decades, path, ran (1 eigensolution, 2 Jacobi, 3 gesvdj,
 * 4 deflated), sweeps, ms, and the largest relative error of s_1..s_k
 * against LAPACK's dgesvj on the same (widened) R, and of s_1..s_k against
 * them where s_j >= 1e-4 s_1 only; levels: the deflated path's levels (0
 * where it did not run to the end).
 *   build/bench_small_svd [--csv FILE] [--reps R] [--sizes 266,512,1024]
 *                         [--decades 7,9,3] */
#define BENCH_NAME "bench_small_svd"
#include "bench_util.h"
#include "tcnla.h"

#ifdef TCNLA_HAVE_CUDA
#include "backend/cuda/tn_cuda.h"
#include "small_svd_mat.h"

#include <math.h>
#include <time.h>

static int parse_list(const char *s, double *v, int max) {
    int n = 0;
    while (s && *s && n < max) {
        v[n++] = strtod(s, NULL);
        s = strchr(s, ',');
        if (s) s++;
    }
    return n;
}

int main(int argc, char **argv) {
    const char *csv = NULL;
    int reps = 10;
    double sizes[8] = {266, 512, 1024}, decs[8] = {7, 9, 3};
    int ns = 3, nd = 3;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--csv")) csv = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--reps")) reps = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--sizes")) ns = parse_list(argv[++i], sizes, 8);
        else if (i + 1 < argc && !strcmp(argv[i], "--decades")) nd = parse_list(argv[++i], decs, 8);
        else {
            fprintf(stderr, "usage: %s [--csv FILE] [--reps R] [--sizes L,..] [--decades D,..]\n",
                    argv[0]);
            return 2;
        }
    }
    if (reps < 1 || reps > 1000 || ns < 1 || nd < 1) {
        fprintf(stderr, "%s: --reps 1..1000, non-empty --sizes and --decades\n", BENCH_NAME);
        return 2;
    }
    for (int i = 0; i < ns; i++)
        if (!(sizes[i] >= 16 && sizes[i] <= 4096)) {
            fprintf(stderr, "%s: sizes 16..4096\n", BENCH_NAME);
            return 2;
        }
    FILE *out = csv ? fopen(csv, "w") : NULL;
    if (csv && !out) {
        fprintf(stderr, "%s: cannot open %s\n", BENCH_NAME, csv);
        return 1;
    }
    tcnla_handle_t h = NULL;
    CHK(tcnla_create(&h, TCNLA_BACKEND_CUDA), "tcnla_create (CUDA)");
    const char *line = "gpu,l,k,decades,path,ran,sweeps,ms,err_sv,err_sv_1e4,levels\n";
    printf("%s", line);
    if (out) fprintf(out, "%s", line);
    enum { NP = 5 };
    const char *names[NP] = {"auto", "deflate", "jacobi", "plain", "gesvdj"};
    const int paths[NP] = {TN_SSVD_AUTO, TN_SSVD_DEFLATE, TN_SSVD_JACOBI, TN_SSVD_JACOBI_PLAIN,
                           TN_SSVD_GESVDJ};
    for (int si = 0; si < ns; si++)
        for (int di = 0; di < nd; di++) {
            const int l = (int)sizes[si], k = l - 10;
            const size_t ll = (size_t)l * l;
            double *M = malloc(sizeof(double) * (2 * ll + l)), *sx = M + 2 * ll;
            float *R = malloc(sizeof(float) * (ll + k)), *S = R + ll;
            double *t = malloc(sizeof(double) * reps);
            if (!M || !R || !t) return 1;
            CHK(ssvd_graded(l, k, decs[di], l, 17 + si, M), "test matrix");
            for (int j = 0; j < l; j++) /* R = M^T in FP32, M widened back from it */
                for (int i = 0; i < l; i++) R[i + (size_t)j * l] = (float)M[j + (size_t)i * l];
            for (int j = 0; j < l; j++)
                for (int i = 0; i < l; i++) M[i + (size_t)j * l] = R[j + (size_t)i * l];
            CHK(ssvd_exact(l, M, sx), "dgesvj");
            float *dR, *dU, *dV, *dS;
            CHK(tcnla_malloc(h, (void **)&dR, sizeof(float) * ll), "malloc");
            CHK(tcnla_malloc(h, (void **)&dU, sizeof(float) * ll), "malloc");
            CHK(tcnla_malloc(h, (void **)&dV, sizeof(float) * ll), "malloc");
            CHK(tcnla_malloc(h, (void **)&dS, sizeof(float) * l), "malloc");
            CHK(tcnla_memcpy(h, dR, R, sizeof(float) * ll, TCNLA_MEMCPY_HOST_TO_HANDLE), "memcpy");
            for (int pi = 0; pi < NP; pi++) {
                for (int w = 0; w < 2; w++)
                    CHK(tn_cuda_small_svd_path(h, paths[pi], l, k, dR, dU, dV, dS, 0), names[pi]);
                for (int r = 0; r < reps; r++) {
                    const double t0 = bench_now();
                    CHK(tn_cuda_small_svd_path(h, paths[pi], l, k, dR, dU, dV, dS, 0), names[pi]);
                    t[r] = bench_now() - t0;
                }
                qsort(t, (size_t)reps, sizeof(double), cmp_d);
                CHK(tcnla_memcpy(h, S, dS, sizeof(float) * k, TCNLA_MEMCPY_HANDLE_TO_HOST),
                    "memcpy");
                double e = 0, e4 = 0;
                for (int j = 0; j < k; j++) {
                    const double d = fabs(S[j] - sx[j]) / sx[j];
                    if (!(d <= e)) e = d;
                    if (sx[j] >= 1e-4 * sx[0] && !(d <= e4)) e4 = d;
                }
                char row[512];
                const int lev = h->cuda->ssvd.path == TN_SSVD_RAN_DEFLATE ? h->cuda->ssvd.levels
                                                                          : 0;
                snprintf(row, sizeof row, "%s,%d,%d,%g,%s,%d,%d,%.4f,%.3e,%.3e,%d\n",
                         h->device_name, l, k, decs[di], names[pi], h->cuda->ssvd.path,
                         h->cuda->ssvd.sweeps, 1e3 * t[reps / 2], e, e4, lev);
                printf("%s", row);
                if (out) fprintf(out, "%s", row);
            }
            tcnla_free(h, dR), tcnla_free(h, dU), tcnla_free(h, dV), tcnla_free(h, dS);
            free(M), free(R), free(t);
        }
    if (out) fclose(out);
    tcnla_destroy(h);
    return 0;
}
#else
int main(void) {
    fprintf(stderr, "%s: needs the CUDA backend (build with CUDA=1)\n", BENCH_NAME);
    return 1;
}
#endif
