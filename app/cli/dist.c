/* `tcnla rsvd` and `tcnla lra` over several ranks: A split by contiguous
 * blocks of rows (tcnla_dist_rows), rank r holding its rows in its own
 * handle's memory; U (rsvd) / X (lra) come back distributed like A, S and
 * VT / Y on every rank. Each rank runs in its own thread (--ranks, --gpus:
 * one handle each, tcnla_comm_create_local) or its own process (mpirun:
 * tcnla_comm_init_rank with the identifier broadcast by MPI, mpi_boot.c).
 *
 * The generated matrix is the same for every number of ranks:
 * A = U_r diag(sigma) V_r^T, r = --gen-rank, with V_r the orthonormalized
 * Gaussian n x r drawn identically on every rank, and U_r's Gaussian rows
 * drawn by fixed chunks of GEN_CHUNK rows (chunk c: tcnla_random_fill with
 * stream GEN_STREAM_U + c, whoever owns its rows), then orthonormalized over
 * the ranks (CholeskyQR2 in FP64: the Gram matrix's sum over the ranks
 * differs only by rounding between rank counts). A file is read by each
 * rank for its rows only, by column slabs. The residual is each rank's
 * tcnla_lowrank_residual summed with tcnla_comm_sum_host; A never comes
 * to the host whole. */
#include "dist.h"
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GEN_CHUNK 4096
#define GEN_STREAM_V 0x7d150000u
#define GEN_STREAM_U 0x7d160000u
#define SLAB_BYTES ((int64_t)64 << 20) /* host buffer of a rank reading its rows */

typedef struct {
    cli_dist_cfg *cfg;
    int P, mpi;            /* ranks; 1: one process per rank */
    cli_mpi *mp;
    tcnla_backend_t be;
    int64_t m, n, k, kc;   /* kc: the columns of U / X written */
    int64_t rmax;          /* lra: the columns of X, Y it works with */
    int64_t gen_r;         /* generated: the rank of A (0 for a file) */
    double *sigma, opt;    /* the generated spectrum, the optimal residual (-1: unknown) */
    tn_npy_layout lay;
    cli_outputs outs;      /* rank 0's --output files */
    char tmp0[PATH_MAX];   /* the temporary name of output 0 (every rank writes its rows) */
    int reps, tty;
} dctx;

typedef struct {
    dctx *d;
    int rank;
    tcnla_handle_t h;
    tcnla_comm_t comm;
    int rc;
    char msg[1200 + PATH_MAX]; /* a reading failure, printed by the first rank that had one */
} rctx;

static double now(void) { return cli_now(); }

/* The exit status of a library status (cli_fail's mapping), printed by rank 0 only. */
static int fail(const rctx *R, const char *what, int st) {
    if (R->rank == 0) return cli_fail(what, st);
    if (st == TCNLA_ERR_RANGE || st == TCNLA_ERR_NUMERICAL) return EXIT_NUMERICAL;
    if (st == TCNLA_ERR_NO_BACKEND || st == TCNLA_ERR_NOT_SUPPORTED || (st < 0 && st > -100))
        return EXIT_BADINPUT;
    return EXIT_NUMERICAL;
}

/* all[0 .. P) <- every rank's v (a sum of vectors holding one value each). */
static int gather(const rctx *R, double v, double *all) {
    for (int i = 0; i < R->d->P; i++) all[i] = i == R->rank ? v : 0.0;
    return tcnla_comm_sum_host(R->comm, all, R->d->P);
}

/* The largest of the ranks' exit statuses: every rank leaves together. */
static int agree(const rctx *R, int rc) {
    double a[CLI_DIST_MAX_RANKS];
    int st = gather(R, (double)rc, a), out = 0;
    for (int i = 0; i < R->d->P && !st; i++)
        if ((int)a[i] > out) out = (int)a[i];
    if (st) return fail(R, "agreeing on the ranks' status", st);
    return out;
}

/* The largest of the ranks' values (times). */
static double gather_max(const rctx *R, double v) {
    double a[CLI_DIST_MAX_RANKS], x = v;
    if (!gather(R, v, a))
        for (int i = 0; i < R->d->P; i++) x = a[i] > x ? a[i] : x;
    return x;
}

static void progress(const rctx *R, const char *fmt, const char *what) {
    if (R->rank == 0 && R->d->tty) {
        fprintf(stderr, "tcnla %s: ", R->d->cfg->cmd);
        fprintf(stderr, fmt, what);
        fputc('\n', stderr);
    }
}

/* ------------------------------------------------------------ the matrix */

/* Rank R's rows of the generated A into dA (mr x n, lda = mr). */
static int generate(const rctx *R, int64_t row0, int64_t mr, float *dA) {
    const dctx *D = R->d;
    const int64_t n = D->n, r = D->gen_r, m = D->m;
    const uint64_t seed = D->cfg->c.seed;
    tcnla_handle_t h = R->h;
    float *dV = NULL, *dVs = NULL, *dD = NULL, *dG = NULL, *dC = NULL, *hD = NULL;
    int st;
    if ((st = tcnla_malloc(h, (void **)&dV, sizeof(float) * (size_t)(n * r))) ||
        (st = tcnla_malloc(h, (void **)&dVs, sizeof(float) * (size_t)(n * r))) ||
        (st = tcnla_malloc(h, (void **)&dD, sizeof(float) * (size_t)(r * r))) ||
        (st = tcnla_malloc(h, (void **)&dG, sizeof(float) * (size_t)(mr * r))))
        goto out;
    /* V_r diag(sigma), the same bits on every rank */
    if ((st = tcnla_random_fill(h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, seed, GEN_STREAM_V, n, r,
                                dV, n)) ||
        (st = tcnla_orthonormalize(h, TCNLA_ORTH_CHOLQR2_FP64, TCNLA_BREAKDOWN_RETRY, n, r, dV, n,
                                   NULL, 0, NULL)))
        goto out;
    if (!(hD = calloc((size_t)(r * r), sizeof(float)))) {
        st = TCNLA_ERR_ALLOC;
        goto out;
    }
    for (int64_t i = 0; i < r; i++) hD[i + i * r] = (float)D->sigma[i];
    if ((st = tcnla_memcpy(h, dD, hD, sizeof(float) * (size_t)(r * r), TCNLA_MEMCPY_HOST_TO_HANDLE)) ||
        (st = tcnla_sgemm(h, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_N, n, r, r, 1.0f, dV, n,
                          dD, r, 0.0f, dVs, n)))
        goto out;
    /* U_r's Gaussian rows by chunks of GEN_CHUNK rows of the whole matrix */
    for (int64_t c = row0 / GEN_CHUNK; c * GEN_CHUNK < row0 + mr && st == 0; c++) {
        const int64_t c0 = c * GEN_CHUNK, cr = m - c0 < GEN_CHUNK ? m - c0 : GEN_CHUNK;
        const int64_t lo = c0 > row0 ? c0 : row0, hi = c0 + cr < row0 + mr ? c0 + cr : row0 + mr;
        if (lo == c0 && hi == c0 + cr) { /* the whole chunk is ours: drawn in place */
            st = tcnla_random_fill(h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, seed,
                                   GEN_STREAM_U + (uint64_t)c, cr, r, dG + (c0 - row0), mr);
            continue;
        }
        if (!dC && (st = tcnla_malloc(h, (void **)&dC, sizeof(float) * (size_t)(GEN_CHUNK * r))))
            break;
        st = tcnla_random_fill(h, TCNLA_RAND_GAUSSIAN, TCNLA_FMT_FP32, seed,
                               GEN_STREAM_U + (uint64_t)c, cr, r, dC, cr);
        for (int64_t j = 0; j < r && st == 0; j++)
            st = tcnla_memcpy(h, dG + (lo - row0) + j * mr, dC + (lo - c0) + j * cr,
                              sizeof(float) * (size_t)(hi - lo), TCNLA_MEMCPY_HANDLE_TO_HANDLE);
    }
out:;
    /* collective from here on: every rank joins, whatever its own status */
    int rc = agree(R, st ? fail(R, "generating the matrix", st) : 0);
    if (!rc) {
        st = tcnla_dist_orthonormalize(R->comm, TCNLA_ORTH_CHOLQR2_FP64, TCNLA_BREAKDOWN_RETRY, mr,
                                       r, dG, mr, NULL, 0, NULL);
        if (!st)
            st = tcnla_sgemm(h, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_T, mr, n, r, 1.0f, dG,
                             mr, dVs, n, 0.0f, dA, mr);
        if (!st) st = tcnla_synchronize(h);
        rc = st ? fail(R, "generating the matrix", st) : 0;
    }
    free(hD);
    tcnla_free(h, dV);
    tcnla_free(h, dVs);
    tcnla_free(h, dD);
    tcnla_free(h, dG);
    tcnla_free(h, dC);
    return rc;
}

/* Rank R's rows of the file into dA (mr x n, lda = mr): a Fortran-order
 * file by column slabs (mr elements of each column: one read per column), a
 * C-order one by blocks of whole rows (one contiguous range), each block
 * uploaded as it is (n x rows) and transposed into place on the device by a
 * product with the identity (NATIVE_FP32: exact). */
static int read_rows(rctx *R, int64_t row0, int64_t mr, float *dA) {
    const dctx *D = R->d;
    const char *cmd = D->cfg->cmd, *path = D->cfg->input;
    const int64_t n = D->n;
    const int corder = !D->lay.fortran;
    /* columns per slab (Fortran) or rows per block (C order, at most 1024) */
    int64_t cs = SLAB_BYTES / (int64_t)sizeof(float) / (corder ? n : mr);
    if (cs < 1) cs = 1;
    if (cs > (corder ? (mr < 1024 ? mr : 1024) : n)) cs = corder ? (mr < 1024 ? mr : 1024) : n;
    const int64_t bl = corder ? n : mr; /* the buffer's column length */
    float *b = malloc(sizeof(float) * (size_t)((corder && cs > n ? cs : bl) * cs));
    float *dT = NULL, *dI = NULL; /* the identity is built in b first */
    char err[1024 + PATH_MAX];
    int rc = 0, st = 0;
    if (!b) {
        snprintf(R->msg, sizeof R->msg, "tcnla %s: rank %d: out of host memory for %lld rows",
                 cmd, R->rank, (long long)mr);
        return EXIT_BADINPUT;
    }
    if (corder) {
        if (!(st = tcnla_malloc(R->h, (void **)&dT, sizeof(float) * (size_t)(n * cs))) &&
            !(st = tcnla_malloc(R->h, (void **)&dI, sizeof(float) * (size_t)(cs * cs)))) {
            for (int64_t q = 0; q < cs * cs; q++) b[q] = q % (cs + 1) == 0 ? 1.0f : 0.0f;
            st = tcnla_memcpy(R->h, dI, b, sizeof(float) * (size_t)(cs * cs),
                              TCNLA_MEMCPY_HOST_TO_HANDLE);
        }
        if (st) rc = cli_fail("device memory for reading the rows", st);
    }
    for (int64_t j0 = 0; j0 < (corder ? mr : n) && !rc; j0 += cs) {
        const int64_t w = (corder ? mr : n) - j0 < cs ? (corder ? mr : n) - j0 : cs;
        int lost = 0;
        if (corder ? tn_io_npy_read_rows_c(path, &D->lay, row0 + j0, w, b, &lost, err, sizeof err)
                   : tn_io_npy_read_block(path, &D->lay, row0, mr, j0, w, b, mr, &lost, err,
                                          sizeof err)) {
            snprintf(R->msg, sizeof R->msg, "tcnla %s: %s", cmd, err);
            rc = EXIT_BADINPUT;
            break;
        }
        for (int64_t q = 0; q < bl * w; q++) /* mr x w, or n x w (C order) */
            if (!isfinite(b[q])) {
                const int64_t i = corder ? row0 + j0 + q / n : row0 + q % mr,
                              j = corder ? q % n : j0 + q / mr;
                snprintf(R->msg, sizeof R->msg, "tcnla %s: %s: the matrix holds NaN or Inf "
                         "(element [%lld, %lld] = %g)", cmd, path, (long long)i, (long long)j,
                         b[q]);
                rc = EXIT_BADINPUT;
                break;
            }
        if (rc) break;
        if (!corder)
            st = tcnla_memcpy(R->h, dA + j0 * mr, b, sizeof(float) * (size_t)(mr * w),
                              TCNLA_MEMCPY_HOST_TO_HANDLE);
        else if (!(st = tcnla_memcpy(R->h, dT, b, sizeof(float) * (size_t)(n * w),
                                     TCNLA_MEMCPY_HOST_TO_HANDLE)))
            st = tcnla_sgemm(R->h, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_T, w, n, w, 1.0f,
                             dI, cs, dT, n, 0.0f, dA + j0, mr);
        if (!st) st = tcnla_synchronize(R->h); /* b is refilled next */
        if (st) rc = cli_fail("uploading the matrix", st);
    }
    free(b);
    tcnla_free(R->h, dT);
    tcnla_free(R->h, dI);
    return rc;
}

/* ------------------------------------------------------------ output */

static int pwrite_all(int fd, const void *p, size_t n, uint64_t off) {
    const unsigned char *c = p;
    while (n) {
        ssize_t w = pwrite(fd, c, n, (off_t)off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w, n -= (size_t)w, off += (uint64_t)w;
    }
    return 0;
}

/* Output 0 (m x kc, Fortran order): rank 0 writes the header and sizes the
 * file, then every rank its mr rows of each column (hU: mr x kc on the host). */
static int write_rows(const rctx *R, int64_t row0, int64_t mr, float *hU) {
    const dctx *D = R->d;
    const char *cmd = D->cfg->cmd;
    unsigned char hdr[TN_IO_NPY_HEADER_MAX];
    const size_t H = tn_io_npy_header(hdr, sizeof hdr, D->m, D->kc, 0);
    int rc = 0, fd;
    if (R->rank == 0) {
        if (!H || (fd = open(D->tmp0, O_WRONLY | O_CLOEXEC)) < 0) rc = EXIT_BADINPUT;
        else {
            if (pwrite_all(fd, hdr, H, 0) ||
                ftruncate(fd, (off_t)(H + sizeof(float) * (uint64_t)D->m * (uint64_t)D->kc)))
                rc = EXIT_BADINPUT;
            if (close(fd)) rc = EXIT_BADINPUT;
        }
        if (rc) fprintf(stderr, "tcnla %s: writing %s: %s\n", cmd, D->outs.path[0], strerror(errno));
    }
    if ((rc = agree(R, rc))) return rc; /* the header is in place before any row */
    if (!tn_io_host_little())
        for (int64_t q = 0; q < mr * D->kc; q++) {
            unsigned char *e = (unsigned char *)(hU + q), t;
            t = e[0], e[0] = e[3], e[3] = t, t = e[1], e[1] = e[2], e[2] = t;
        }
    if ((fd = open(D->tmp0, O_WRONLY | O_CLOEXEC)) < 0) rc = EXIT_BADINPUT;
    else {
        for (int64_t j = 0; j < D->kc && !rc; j++)
            if (pwrite_all(fd, hU + j * mr, sizeof(float) * (size_t)mr,
                           H + sizeof(float) * ((uint64_t)j * (uint64_t)D->m + (uint64_t)row0)))
                rc = EXIT_BADINPUT;
        if (close(fd)) rc = EXIT_BADINPUT;
    }
    if (rc) fprintf(stderr, "tcnla %s: rank %d: writing its rows of %s: %s\n", cmd, R->rank,
                    D->tmp0, strerror(errno));
    return agree(R, rc);
}

/* ------------------------------------------------------------ one rank */

static const char *const step_names[TCNLA_RSVD_STEPS] = {"random", "proj", "orth",
                                                         "power", "bt", "svd"};
static const char *const tgemm_names[] = {"none", "32_32", "16_16", "16_32"};

static int run_once(const rctx *R, tcnla_rsvd_opts_t *ro, tcnla_lra_opts_t *lo, int64_t mr,
                    const float *dA, float *dU, float *dS, float *dVT, float *dY) {
    const dctx *D = R->d;
    int st = D->cfg->is_lra ? tcnla_dist_lra(R->comm, lo, mr, D->n, dA, mr, dU, mr, dY, D->n)
                         : tcnla_dist_rsvd(R->comm, ro, mr, D->n, dA, mr, dU, mr, dS, dVT, D->k);
    if (st == 0) st = tcnla_synchronize(R->h);
    return st;
}

static void report(const rctx *R, double res, double t, const double *steps, double t_in,
                   const tcnla_rsvd_opts_t *ro, const tcnla_info_t *info);

static void *rank_main(void *arg) {
    rctx *R = arg;
    dctx *D = R->d;
    cli_dist_cfg *cfg = D->cfg;
    tcnla_handle_t h = R->h;
    const int64_t n = D->n, k = D->k;
    int64_t row0 = 0, mr = 0;
    float *dA = NULL, *dU = NULL, *dS = NULL, *dVT = NULL, *dY = NULL, *dI = NULL, *hU = NULL;
    int rc = 0, st;
    tcnla_dist_rows(D->m, D->P, R->rank, &row0, &mr);
    /* rsvd: U mr x k, S, VT k x n; lra: X mr x rmax, Y n x rmax, and for the
     * residual S = 1 (rmax) and VT = Y^T (rmax x n) */
    const int64_t uc = cfg->is_lra ? D->rmax : k, sc = uc;
    if ((st = tcnla_malloc(h, (void **)&dA, sizeof(float) * (size_t)(mr * n))) ||
        (st = tcnla_malloc(h, (void **)&dU, sizeof(float) * (size_t)(mr * uc))) ||
        (st = tcnla_malloc(h, (void **)&dS, sizeof(float) * (size_t)sc)) ||
        (st = tcnla_malloc(h, (void **)&dVT, sizeof(float) * (size_t)(sc * n))) ||
        (cfg->is_lra && (st = tcnla_malloc(h, (void **)&dY, sizeof(float) * (size_t)(n * uc)))))
        rc = fail(R, "allocating the rank's memory", st);
    if ((rc = agree(R, rc))) goto out;

    /* the matrix */
    double t0 = now();
    progress(R, "%s", cfg->input ? "reading the matrix (each rank its rows)"
                                 : "generating the matrix (distributed)");
    R->msg[0] = 0;
    rc = cfg->input ? read_rows(R, row0, mr, dA) : generate(R, row0, mr, dA);
    if (cfg->input) { /* one message: the first rank's that failed */
        double all[CLI_DIST_MAX_RANKS];
        int first = -1;
        if (!gather(R, R->msg[0] ? 1.0 : 0.0, all))
            for (int i = 0; i < D->P && first < 0; i++)
                if (all[i] != 0) first = i;
        if (first == R->rank) fprintf(stderr, "%s\n", R->msg);
    }
    if ((rc = agree(R, rc))) goto out;
    const double t_in = gather_max(R, now() - t0);

    /* the timed runs: a warm-up, then reps; each time the slowest rank's */
    tcnla_rsvd_opts_t ro = cfg->rsvd;
    tcnla_lra_opts_t lo = cfg->lra;
    tcnla_info_t info = {0};
    double tsteps[TCNLA_RSVD_STEPS], ts[64], steps[64][TCNLA_RSVD_STEPS];
    ro.timings = tsteps;
    ro.info = &info;
    lo.info = &info;
    progress(R, "%s", cfg->is_lra ? "randomized low-rank approximation" : "randomized SVD");
    for (int rep = -1; rep < D->reps; rep++) {
        if ((rc = agree(R, 0))) goto out; /* the ranks start together */
        const double t1 = now();
        if ((st = run_once(R, &ro, &lo, mr, dA, dU, dS, dVT, dY))) {
            char what[160];
            if (cfg->is_lra)
                snprintf(what, sizeof what, "tcnla_dist_lra (tgemm %s, %s)",
                         tgemm_names[lo.tgemm], tcnla_gemm_method_name(lo.gemm_method));
            else
                snprintf(what, sizeof what, "tcnla_dist_rsvd (--proj %s, --gemm %s)",
                         cli_rsvd_proj(&ro, NULL),
                         tcnla_gemm_method_name(ro.gemm_method));
            rc = fail(R, what, st);
            rc = agree(R, rc);
            goto out;
        }
        const double dt = gather_max(R, now() - t1);
        if (rep >= 0) {
            ts[rep] = dt;
            for (int s = 0; s < TCNLA_RSVD_STEPS; s++)
                steps[rep][s] = cfg->is_lra ? NAN : gather_max(R, tsteps[s]);
        }
    }
    /* the median run and its steps */
    int med = 0;
    {
        int idx[64];
        for (int i = 0; i < D->reps; i++) idx[i] = i;
        for (int i = 1; i < D->reps; i++) /* insertion sort of the indices by time */
            for (int j = i; j > 0 && ts[idx[j]] < ts[idx[j - 1]]; j--) {
                int t = idx[j];
                idx[j] = idx[j - 1], idx[j - 1] = t;
            }
        med = idx[D->reps / 2];
    }

    /* the residual: each rank's rows, summed */
    double d2a2[2] = {0, 0};
    if (cfg->is_lra) { /* X Y^T = X diag(1) (Y^T): Y^T by a product with I (exact) */
        const int64_t r = D->kc;
        float *h1 = malloc(sizeof(float) * (size_t)(r * r + r));
        st = h1 ? tcnla_malloc(h, (void **)&dI, sizeof(float) * (size_t)(r * r)) : TCNLA_ERR_ALLOC;
        if (!st) {
            for (int64_t q = 0; q < r * r; q++) h1[q] = q % (r + 1) == 0 ? 1.0f : 0.0f;
            for (int64_t q = 0; q < r; q++) h1[r * r + q] = 1.0f;
            st = tcnla_memcpy(h, dI, h1, sizeof(float) * (size_t)(r * r),
                              TCNLA_MEMCPY_HOST_TO_HANDLE);
        }
        if (!st)
            st = tcnla_memcpy(h, dS, h1 + r * r, sizeof(float) * (size_t)r,
                              TCNLA_MEMCPY_HOST_TO_HANDLE);
        if (!st)
            st = tcnla_sgemm(h, TCNLA_GEMM_NATIVE_FP32, TCNLA_OP_N, TCNLA_OP_T, r, n, r, 1.0f, dI,
                             r, dY, n, 0.0f, dVT, r);
        free(h1);
        if (!st)
            st = tcnla_lowrank_residual(h, mr, n, r, dA, mr, dU, mr, dS, dVT, r, &d2a2[0],
                                        &d2a2[1]);
    } else {
        st = tcnla_lowrank_residual(h, mr, n, k, dA, mr, dU, mr, dS, dVT, k, &d2a2[0], &d2a2[1]);
    }
    if (st) rc = fail(R, "the residual", st);
    if ((rc = agree(R, rc))) goto out;
    if ((st = tcnla_comm_sum_host(R->comm, d2a2, 2))) {
        rc = agree(R, fail(R, "summing the residual", st));
        goto out;
    }
    const double res = d2a2[1] > 0 ? sqrt(d2a2[0] / d2a2[1]) : sqrt(d2a2[0]);

    /* the outputs */
    if (cfg->output) {
        progress(R, "%s", "writing the outputs");
        hU = malloc(sizeof(float) * (size_t)(mr * D->kc));
        if (!hU) rc = EXIT_BADINPUT, fprintf(stderr, "tcnla %s: out of host memory\n", cfg->cmd);
        else if ((st = tcnla_memcpy(h, hU, dU, sizeof(float) * (size_t)(mr * D->kc),
                                    TCNLA_MEMCPY_HANDLE_TO_HOST)))
            rc = fail(R, "copying the factor", st);
        if ((rc = agree(R, rc))) goto out;
        if ((rc = write_rows(R, row0, mr, hU))) goto out;
        if (R->rank == 0) { /* S and VT (Y) once */
            const int64_t r2 = cfg->is_lra ? n : k, c2 = cfg->is_lra ? D->kc : n;
            float *hS = malloc(sizeof(float) * (size_t)k), *h2 = malloc(sizeof(float) * (size_t)(r2 * c2));
            if (!hS || !h2) rc = EXIT_BADINPUT, fprintf(stderr, "tcnla %s: out of host memory\n", cfg->cmd);
            else if ((st = tcnla_memcpy(h, h2, cfg->is_lra ? dY : dVT, sizeof(float) * (size_t)(r2 * c2),
                                        TCNLA_MEMCPY_HANDLE_TO_HOST)) ||
                     (!cfg->is_lra && (st = tcnla_memcpy(h, hS, dS, sizeof(float) * (size_t)k,
                                                      TCNLA_MEMCPY_HANDLE_TO_HOST))))
                rc = cli_fail("copying the factors", st);
            if (!rc && !cfg->is_lra) {
                tn_matrix ms = {k, 1, 0, 0, hS}, mv = {k, n, 0, 0, h2};
                if (!(rc = cli_outputs_write(&D->outs, 1, cfg->cmd, &ms, TN_IO_NPY_1D)))
                    rc = cli_outputs_write(&D->outs, 2, cfg->cmd, &mv, 0u);
            } else if (!rc) {
                tn_matrix my = {n, D->kc, 0, 0, h2};
                rc = cli_outputs_write(&D->outs, 1, cfg->cmd, &my, 0u);
            }
            free(hS);
            free(h2);
        }
        if ((rc = agree(R, rc))) goto out; /* every rank's rows are written */
        if (R->rank == 0) rc = cli_outputs_commit(&D->outs, cfg->cmd);
        if ((rc = agree(R, rc))) goto out;
    }
    if (R->rank == 0) report(R, res, ts[med], steps[med], t_in, &ro, &info);
out:
    free(hU);
    tcnla_free(h, dA);
    tcnla_free(h, dU);
    tcnla_free(h, dS);
    tcnla_free(h, dVT);
    tcnla_free(h, dY);
    tcnla_free(h, dI);
    R->rc = rc;
    return NULL;
}

/* ------------------------------------------------------------ report */

static void report(const rctx *R, double res, double t, const double *steps, double t_in,
                   const tcnla_rsvd_opts_t *ro, const tcnla_info_t *info) {
    const dctx *D = R->d;
    const cli_dist_cfg *cfg = D->cfg;
    const tcnla_lra_opts_t *lo = &cfg->lra;
    char dev[256] = "?";
    tcnla_device_name(R->h, dev, sizeof dev);
    const int gpus = D->be == TCNLA_BACKEND_CUDA ? D->P : 0;
    const char *launch = D->mpi ? "mpi" : "threads";
    const char *power = NULL;
    if (!cfg->is_lra) {
        power = cli_rsvd_power(ro, info);
    }
    if (cfg->c.json) {
        cli_json j;
        char sj[512];
        size_t q = 0;
        cli_jbegin(&j, stdout);
        cli_jstr(&j, "command", cfg->cmd);
        cli_jstr(&j, "backend", cli_backend_name(D->be));
        cli_jstr(&j, "device", dev);
        cli_jint(&j, "ranks", D->P);
        cli_jint(&j, "gpus", gpus);
        cli_jstr(&j, "launch", launch);
        cli_jstr(&j, "input", cfg->input ? cfg->input : cfg->spectrum_name);
        cli_jint(&j, "m", D->m);
        cli_jint(&j, "n", D->n);
        if (cfg->input) cli_jraw(&j, "gen_rank", "null");
        else cli_jint(&j, "gen_rank", D->gen_r);
        cli_jint(&j, "rank", D->k);
        if (cfg->is_lra) {
            cli_jint(&j, "oversampling", lo->oversampling);
            cli_jstr(&j, "tgemm", tgemm_names[lo->tgemm]);
            cli_jstr(&j, "gemm", lo->tgemm == TCNLA_TGEMM_NONE
                                     ? tcnla_gemm_method_name(lo->gemm_method) : "fp16");
            cli_jstr(&j, "orth", cli_orth_names[lo->orth]);
            cli_jraw(&j, "refine", lo->refine ? "true" : "false");
            cli_jraw(&j, "recompress", lo->recompress ? "true" : "false");
            cli_jint(&j, "out_rank", D->kc);
            cli_jnum(&j, "rel_error", "%.6e", res);
        } else {
            cli_jint(&j, "oversampling", ro->oversampling);
            cli_jint(&j, "power_iters", ro->power_iters);
            cli_jint(&j, "pass_efficient", ro->pass_efficient);
            cli_jstr(&j, "proj", cli_rsvd_proj(ro, info));
            cli_jstr(&j, "gemm", tcnla_gemm_method_name(ro->gemm_method));
            cli_jstr(&j, "power", power);
            cli_jstr(&j, "orth", cli_orth_names[ro->orth]);
            cli_jnum(&j, "rel_residual", "%.6e", res);
        }
        cli_jnum(&j, "optimal", "%.6e", D->opt >= 0 ? D->opt : NAN);
        cli_jnum(&j, "seconds", "%.6e", t);
        cli_jint(&j, "reps", D->reps);
        if (!cfg->is_lra) {
            for (int s = 0; s < TCNLA_RSVD_STEPS && q < sizeof sj; s++) {
                int w = snprintf(sj + q, sizeof sj - q, "%s\"%s\":%.6e", s ? "," : "{",
                                 step_names[s], steps[s]);
                if (w > 0) q += (size_t)w;
            }
            if (q + 2 < sizeof sj) {
                sj[q++] = '}', sj[q] = 0;
                cli_jraw(&j, "steps", sj);
            }
        }
        cli_jnum(&j, cfg->input ? "read_seconds" : "gen_seconds", "%.6e", t_in);
        cli_jend(&j);
        fflush(stdout);
        return;
    }
    char where[160];
    if (D->mpi) snprintf(where, sizeof where, "%d MPI processes (%s)", D->P, cli_mpi_kind(D->mp));
    else snprintf(where, sizeof where, "%d rank%s in one process", D->P, D->P > 1 ? "s" : "");
    char on[300];
    if (gpus) snprintf(on, sizeof on, "%d x %s", gpus, dev);
    else snprintf(on, sizeof on, "%s", dev);
    printf("tcnla %s on %s (%s backend, %s): %lld x %lld ", cfg->cmd, on,
           cli_backend_name(D->be), where, (long long)D->m, (long long)D->n);
    if (cfg->input) printf("%s", cfg->input);
    else printf("generated matrix of rank %lld, %s spectrum", (long long)D->gen_r,
                cfg->spectrum_name);
    if (cfg->is_lra)
        printf(", rank %lld, oversampling %lld\n", (long long)D->k, (long long)lo->oversampling);
    else
        printf(", rank %lld, oversampling %lld, %d power iterations%s\n", (long long)D->k,
               (long long)ro->oversampling, ro->power_iters,
               ro->pass_efficient ? " (pass-efficient: 2q + 1 passes over A)" : "");
    int64_t r0, n0, r1, n1;
    tcnla_dist_rows(D->m, D->P, 0, &r0, &n0);
    tcnla_dist_rows(D->m, D->P, D->P - 1, &r1, &n1);
    if (D->P == 1) printf("  layout: one rank holds all rows");
    else printf("  layout: rows split over the ranks (rank 0: %lld rows, rank %d: %lld)",
                (long long)n0, D->P - 1, (long long)n1);
    printf("; %s distributed like A, %s on every rank\n", cfg->is_lra ? "X" : "U",
           cfg->is_lra ? "Y" : "S and VT");
    if (cfg->is_lra) {
        printf("  methods: tgemm %s (products: %s), orth %s, %s%s\n", tgemm_names[lo->tgemm],
               lo->tgemm == TCNLA_TGEMM_NONE ? tcnla_gemm_method_name(lo->gemm_method) : "fp16",
               cli_orth_names[lo->orth], lo->refine ? "iterative refinement" : "no refinement",
               lo->refine && lo->recompress ? ", recompressed" : "");
        printf("  ||A - X Y^T||_F / ||A||_F     %.4e", res);
    } else {
        printf("  methods: A*Omega %s, power iterations %s, %s %s, Omega in %s, orth %s\n",
               cli_rsvd_proj(ro, info), power, ro->pass_efficient ? "the last A Z" : "Q^T A",
               tcnla_gemm_method_name(ro->gemm_method), cli_format_names[ro->random_format],
               cli_orth_names[ro->orth]);
        printf("  ||A - U S V^T||_F / ||A||_F   %.4e", res);
    }
    if (D->opt > 0)
        printf("   (optimal rank-%lld: %.4e, ratio %.4f)", (long long)D->kc, D->opt, res / D->opt);
    else if (D->opt == 0) printf("   (optimal rank-%lld: 0)", (long long)D->kc);
    printf("\n  time (median of %d)         %.4f s   (the slowest rank)\n", D->reps, t);
    if (!cfg->is_lra) {
        printf("  steps:");
        for (int s = 0; s < TCNLA_RSVD_STEPS; s++) printf(" %s %.4f", step_names[s], steps[s]);
        printf(" s\n");
    }
    printf("  %s %.4f s (not in the time)\n", cfg->input ? "reading" : "generating", t_in);
    if (cfg->output) {
        if (cfg->is_lra) printf("  wrote %s_X.npy, %s_Y.npy\n", cfg->output, cfg->output);
        else printf("  wrote %s_U.npy, %s_S.npy, %s_VT.npy\n", cfg->output, cfg->output,
                    cfg->output);
    }
    fflush(stdout);
}

/* ------------------------------------------------------------ set-up */

/* The sizes, the spectrum and the checks every process makes alike (no
 * collective yet: each fails by itself with the same message). */
static int prepare(dctx *D, int world) {
    cli_dist_cfg *cfg = D->cfg;
    const char *cmd = cfg->cmd;
    char err[1024 + PATH_MAX];
    if (cfg->input) {
        if (tn_io_npy_layout(cfg->input, &D->lay, err, sizeof err)) {
            const char *dot = strrchr(cfg->input, '.');
            if (dot && !strcasecmp(dot, ".mtx"))
                fprintf(stderr, "tcnla %s: %s: over several ranks the input is a .npy file (each "
                        "rank reads its rows in place); convert the Matrix Market file first\n",
                        cmd, cfg->input);
            else fprintf(stderr, "tcnla %s: %s\n", cmd, err);
            return EXIT_BADINPUT;
        }
        D->m = D->lay.rows, D->n = D->lay.cols;
        if (D->m < 1 || D->n < 1) {
            fprintf(stderr, "tcnla %s: %s: the matrix is empty (%lld x %lld)\n", cmd, cfg->input,
                    (long long)D->m, (long long)D->n);
            return EXIT_BADINPUT;
        }
    } else {
        D->m = cfg->m, D->n = cfg->n;
    }
    const int64_t m = D->m, n = D->n, mn = m < n ? m : n;
    const char *src = cfg->input ? cfg->input : "the generated matrix";
    if (world > m) {
        fprintf(stderr, "tcnla %s: %d ranks for %lld rows: every rank needs at least one row "
                "(%s)\n", cmd, world, (long long)m, src);
        return cfg->input ? EXIT_BADINPUT : EXIT_USAGE;
    }
    if (cfg->is_lra) {
        D->k = cfg->lra.rank;
        const int64_t need = (cfg->lra.refine ? 2 * D->k : D->k) + cfg->lra.oversampling;
        if (need > mn) {
            fprintf(stderr, "tcnla %s: %s: %s + oversampling = %lld exceeds min(m, n) = %lld\n",
                    cmd, src, cfg->lra.refine ? "2 * rank (refinement)" : "rank", (long long)need,
                    (long long)mn);
            return EXIT_BADINPUT;
        }
        D->kc = tcnla_lra_out_rank(&cfg->lra);
        D->rmax = cfg->lra.refine ? 3 * D->k : D->k;
    } else {
        D->k = D->kc = cfg->rsvd.rank;
        if (cfg->rsvd.rank + cfg->rsvd.oversampling > mn) {
            fprintf(stderr, "tcnla %s: %s: rank + oversampling = %lld exceeds min(m, n) = %lld\n",
                    cmd, src, (long long)(cfg->rsvd.rank + cfg->rsvd.oversampling), (long long)mn);
            return EXIT_BADINPUT;
        }
    }
    D->opt = -1;
    if (!cfg->input) {
        int64_t r = cfg->gen_rank;
        if (r < 0) r = mn < 4 * D->k + 64 ? mn : 4 * D->k + 64;
        if (r > mn) {
            fprintf(stderr, "tcnla %s: --gen-rank %lld exceeds min(m, n) = %lld\n", cmd,
                    (long long)r, (long long)mn);
            return EXIT_USAGE;
        }
        D->gen_r = r;
        if (!(D->sigma = malloc(sizeof(double) * (size_t)r))) {
            fprintf(stderr, "tcnla %s: out of host memory\n", cmd);
            return EXIT_BADINPUT;
        }
        /* the spectra of the single-rank `tcnla rsvd` */
        tn_spectrum(cfg->spectrum, r, D->k, 1e-3, 1, 2.0, 1.0, D->sigma);
        if (cfg->spectrum == TN_SPEC_POLY)
            for (int64_t i = 0; i < r; i++) D->sigma[i] = pow((double)(i + 1), -2.0);
        double tail = 0, all = 0;
        for (int64_t i = 0; i < r; i++) {
            all += D->sigma[i] * D->sigma[i];
            if (i >= D->kc) tail += D->sigma[i] * D->sigma[i];
        }
        D->opt = all > 0 ? sqrt(tail / all) : 0;
    }
    return EXIT_OK;
}

/* The CPU defaults and the SHGEMM format rule, once the backend is known. */
static int methods(dctx *D) {
    cli_dist_cfg *cfg = D->cfg;
    if (D->be == TCNLA_BACKEND_CPU) {
        if (!cfg->proj_set) cfg->rsvd.proj_method = TCNLA_GEMM_NATIVE_FP32;
        if (!cfg->gemm_set) cfg->rsvd.gemm_method = TCNLA_GEMM_NATIVE_FP32;
        if (!cfg->tgemm_set) cfg->lra.tgemm = TCNLA_TGEMM_NONE;
    }
    D->reps = (int)(cfg->reps > 0 ? cfg->reps : D->be == TCNLA_BACKEND_CUDA ? 3 : 1);
    if ((cfg->is_lra ? cfg->lra.orth : cfg->rsvd.orth) == TCNLA_ORTH_HOUSEHOLDER) {
        fprintf(stderr, "tcnla %s: --orth householder: over several ranks the bases are "
                "orthonormalized by CholeskyQR (cholqr_fp32, cholqr_fp64, cholqr2_fp64)\n",
                cfg->cmd);
        return EXIT_USAGE;
    }
    const tcnla_gemm_method_t pm = cfg->rsvd.proj_method;
    if (!cfg->is_lra &&
        (pm == TCNLA_GEMM_DEFAULT || pm == TCNLA_GEMM_SHGEMM_FP16 || pm == TCNLA_GEMM_SHGEMM_TF32) &&
        cfg->rsvd.random_format != TCNLA_FMT_FP16) {
        fprintf(stderr, "tcnla %s: --proj %s multiplies A by the random matrix in FP16, so it "
                "needs --random-format fp16, not %s\n", cfg->cmd, cli_rsvd_proj(&cfg->rsvd, NULL),
                cli_format_names[cfg->rsvd.random_format]);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

static const char *const out_rsvd[3] = {"_U.npy", "_S.npy", "_VT.npy"};
static const char *const out_lra[2] = {"_X.npy", "_Y.npy"};

static int open_outputs(dctx *D) {
    cli_dist_cfg *cfg = D->cfg;
    int rc = cli_outputs_open(&D->outs, cfg->cmd, cfg->output, cfg->is_lra ? out_lra : out_rsvd,
                              cfg->is_lra ? 2 : 3, cfg->input);
    if (!rc) {
        if (strlen(D->outs.tmp[0]) >= sizeof D->tmp0) { /* cannot happen: PATH_MAX checked */
            cli_outputs_abort(&D->outs);
            return EXIT_USAGE;
        }
        strcpy(D->tmp0, D->outs.tmp[0]);
    }
    return rc;
}

/* P ranks in this process, one thread each. */
static int run_threads(dctx *D) {
    cli_dist_cfg *cfg = D->cfg;
    const char *cmd = cfg->cmd;
    const int P = cfg->ranks;
    int compiled = 0, count = 0, rc;
    tcnla_cuda_available(&compiled, &count);
    tcnla_backend_t be = cfg->c.backend;
    if (be == TCNLA_BACKEND_AUTO) be = count > 0 ? TCNLA_BACKEND_CUDA : TCNLA_BACKEND_CPU;
    if (be == TCNLA_BACKEND_CUDA && count < P) {
        fprintf(stderr, "tcnla %s: %s %d: %s%d GPU%s here (one rank per GPU; --backend cpu "
                "--ranks %d runs CPU ranks)\n", cmd, cfg->gpus ? "--gpus" : "--ranks", P,
                compiled ? "" : "this build has no CUDA backend, ", count, count == 1 ? "" : "s",
                P);
        return EXIT_BADINPUT;
    }
    D->P = P;
    D->be = be;
    if ((rc = prepare(D, P)) || (rc = methods(D))) return rc;
    if (cfg->output && (rc = open_outputs(D))) return rc;
    tcnla_handle_t *hs = calloc((size_t)P, sizeof *hs);
    tcnla_comm_t *comms = calloc((size_t)P, sizeof *comms);
    rctx *R = calloc((size_t)P, sizeof *R);
    pthread_t *th = calloc((size_t)P, sizeof *th);
    int st = 0;
    if (!hs || !comms || !R || !th) st = TCNLA_ERR_ALLOC;
    for (int i = 0; i < P && !st; i++)
        st = be == TCNLA_BACKEND_CUDA ? tcnla_create_on_device(&hs[i], be, i)
                                      : tcnla_create(&hs[i], be);
    if (st) rc = cli_fail("creating the ranks' handles", st);
    else if ((st = tcnla_comm_create_local(comms, hs, P)))
        rc = cli_fail(be == TCNLA_BACKEND_CUDA ? "creating the communicators (NCCL: libnccl.so.2 "
                                                 "or $TCNLA_NCCL_LIBRARY)"
                                               : "creating the communicators",
                      st);
    else {
        int started = 0;
        for (int i = 0; i < P; i++) {
            R[i] = (rctx){.d = D, .rank = i, .h = hs[i], .comm = comms[i]};
            if (pthread_create(&th[i], NULL, rank_main, &R[i])) break;
            started++;
        }
        if (started < P) { /* the started ranks wait in a collective: nothing stops them */
            fprintf(stderr, "tcnla %s: cannot start %d threads\n", cmd, P);
            exit(EXIT_BADINPUT);
        }
        for (int i = 0; i < P; i++) pthread_join(th[i], NULL);
        rc = R[0].rc;
        for (int i = 1; i < P; i++)
            if (R[i].rc > rc) rc = R[i].rc;
    }
    for (int i = 0; i < P && comms; i++)
        if (comms[i]) tcnla_comm_destroy(comms[i]);
    for (int i = 0; i < P && hs; i++)
        if (hs[i]) tcnla_destroy(hs[i]);
    free(hs), free(comms), free(R), free(th);
    return rc;
}

/* This process is one rank of an MPI world. */
static int run_mpi(dctx *D, const cli_mpi_env *e) {
    cli_dist_cfg *cfg = D->cfg;
    const char *cmd = cfg->cmd;
    int compiled = 0, count = 0, rc, st, all;
    cli_mpi *mp = cli_mpi_load(cmd, e);
    if (!mp) return EXIT_BADINPUT;
    D->mp = mp;
    D->mpi = 1;
    D->P = e->size;
    tcnla_cuda_available(&compiled, &count);
    if (cfg->c.backend == TCNLA_BACKEND_CPU || count < 1) {
        if (e->rank == 0)
            fprintf(stderr, "tcnla %s: under mpirun every process runs one GPU (%s); the CPU "
                    "backend's ranks share one process: use --backend cpu --ranks P without "
                    "mpirun\n", cmd, count < 1 ? "none found here" : "--backend cpu given");
        cli_mpi_close(mp);
        return EXIT_BADINPUT;
    }
    D->be = TCNLA_BACKEND_CUDA;
    if (e->size > CLI_DIST_MAX_RANKS) {
        if (e->rank == 0)
            fprintf(stderr, "tcnla %s: %d processes: at most %d ranks\n", cmd, e->size,
                    CLI_DIST_MAX_RANKS);
        cli_mpi_close(mp);
        return EXIT_USAGE;
    }
    rc = prepare(D, e->size);
    if (!rc) rc = methods(D);
    if (cli_mpi_init(mp, cmd, e)) {
        cli_mpi_close(mp);
        return EXIT_BADINPUT;
    }
    /* the handle, then rank 0's outputs and the communicator's identifier */
    tcnla_handle_t h = NULL;
    tcnla_comm_t comm = NULL;
    if (!rc && (st = tcnla_create_on_device(&h, TCNLA_BACKEND_CUDA, e->local_rank % count)))
        rc = cli_fail("creating the rank's handle", st);
    if (cli_mpi_min(mp, e->size, -rc, &all)) goto mpi_fail;
    if ((rc = -all)) goto out;
    struct {
        int rc, st;
        unsigned char id[TCNLA_COMM_ID_BYTES];
        char tmp0[PATH_MAX];
    } *b = calloc(1, sizeof *b);
    if (!b) {
        rc = EXIT_BADINPUT; /* the others wait in the broadcast: leave through the launcher */
        fprintf(stderr, "tcnla %s: out of memory\n", cmd);
        goto out;
    }
    if (e->rank == 0) {
        if (cfg->output) b->rc = open_outputs(D);
        if (!b->rc && (b->st = tcnla_comm_unique_id(b->id)))
            b->rc = cli_fail("the communicator's identifier (NCCL: libnccl.so.2 or "
                             "$TCNLA_NCCL_LIBRARY)", b->st);
        memcpy(b->tmp0, D->tmp0, sizeof b->tmp0);
    }
    if (cli_mpi_bcast(mp, b, (int)sizeof *b, 0)) {
        free(b);
        goto mpi_fail;
    }
    rc = b->rc;
    if (!rc) {
        memcpy(D->tmp0, b->tmp0, sizeof D->tmp0);
        if ((st = tcnla_comm_init_rank(&comm, h, e->size, e->rank, b->id)))
            rc = cli_fail("joining the communicator", st);
    }
    free(b);
    if (cli_mpi_min(mp, e->size, -rc, &all)) goto mpi_fail;
    if (!(rc = -all)) {
        rctx R = {.d = D, .rank = e->rank, .h = h, .comm = comm};
        rank_main(&R);
        rc = R.rc;
    }
out:
    if (e->rank == 0) cli_outputs_abort(&D->outs);
    if (comm) tcnla_comm_destroy(comm);
    if (h) tcnla_destroy(h);
    cli_mpi_close(mp);
    return rc;
mpi_fail:
    fprintf(stderr, "tcnla %s: rank %d: MPI_Bcast failed\n", cmd, e->rank);
    rc = EXIT_BADINPUT;
    goto out;
}

int cli_dist_prepare(const char *cmd, int gpus, cli_common *c) {
    cli_mpi_env e;
    const int under_mpi = cli_mpi_env_detect(cmd, &e);
    if (under_mpi < 0) return -1;
    if (gpus && c->backend == TCNLA_BACKEND_CPU) {
        fprintf(stderr, "tcnla %s: --gpus runs on the CUDA backend, not --backend cpu (use "
                        "--ranks for CPU ranks)\n", cmd);
        return -1;
    }
    if (gpus) c->backend = TCNLA_BACKEND_CUDA;
    return under_mpi;
}

int cli_dist_run(cli_dist_cfg *cfg) {
    dctx D;
    memset(&D, 0, sizeof D);
    D.cfg = cfg;
    D.tty = isatty(2);
    cli_mpi_env e;
    const int under = cli_mpi_env_detect(cfg->cmd, &e);
    int rc;
    if (under < 0) return EXIT_USAGE;
    if (cfg->ranks > 0 && under > 0) {
        fprintf(stderr, "tcnla %s: %s %d runs its ranks as threads of one process, but this is "
                "one of %d processes of an MPI launch (%s): give either\n", cfg->cmd,
                cfg->gpus ? "--gpus" : "--ranks", cfg->ranks, e.size, e.size_var);
        return EXIT_USAGE;
    }
    if (cfg->ranks > 0) rc = run_threads(&D);
    else if (under > 0) rc = run_mpi(&D, &e);
    else {
        fprintf(stderr, "tcnla %s: no ranks (internal)\n", cfg->cmd);
        rc = EXIT_USAGE;
    }
    cli_outputs_abort(&D.outs); /* after a failure: no output left behind */
    free(D.sigma);
    return rc;
}

void cli_dist_help(const char *cmd) {
    const int lra = !strcmp(cmd, "lra");
    printf("\nseveral ranks (GPUs, or CPU ranks):\n"
           "  --ranks P         P ranks in this process, one thread and one handle each: on\n"
           "                    the CPU backend P CPU handles (shared-memory collectives), on\n"
           "                    CUDA handle i on GPU i (NCCL) [1 <= P <= min(m, 1024)]\n"
           "  --gpus P          --backend cuda --ranks P (an error with fewer GPUs)\n"
           "  --gen-rank R      the rank r of the generated matrix [min(m, n, 4 rank + 64)]\n");
    if (lra)
        printf("  --spectrum S      its singular values: exp, linear, poly as for tcnla rsvd\n"
               "                    [exp] (--true-rank and --noise are the single-rank\n"
               "                    generator's)\n");
    printf("  A (m x n) is split by contiguous blocks of rows, rank 0 first (the first m %% P\n"
           "  ranks hold one row more); %s comes back distributed like A, %s on\n"
           "  every rank. Without --input, A = U_r diag(s) V_r^T with U_r, V_r orthonormalized\n"
           "  Gaussians (U_r's rows drawn by fixed chunks of 4096 rows): the same matrix for\n"
           "  any P, up to the rounding of U_r's orthonormalization over the ranks; the\n"
           "  residual is printed next to the optimal (Eckart-Young) one. --input takes a .npy\n"
           "  file (a regular file: each rank reads only its rows, 64 MiB at a time).\n"
           "  --output writes %s by rows (each rank its own) and %s\n"
           "  once. The residual is each rank's rows' on its device, summed over the ranks.\n"
           "  The time is the slowest rank's (median of --reps), without the generation or\n"
           "  the reading%s; no FP32 baseline runs.\n"
           "  Under mpirun (OMPI_COMM_WORLD_SIZE or PMI_SIZE >= 2 in the environment), each\n"
           "  process is one rank, on GPU local_rank %% (GPUs per node), without --ranks:\n"
           "    mpirun -np 2 tcnla %s --m 65536 --n 65536\n"
           "  MPI is loaded at run time: $TCNLA_MPI_LIBRARY, else libmpi.so.40 (Open MPI),\n"
           "  libmpi.so.12 or libmpich.so.12 (MPICH), libmpi.so.\n",
           lra ? "X" : "U", lra ? "Y" : "S and VT", lra ? "PREFIX_X.npy" : "PREFIX_U.npy",
           lra ? "PREFIX_Y.npy" : "PREFIX_S.npy, PREFIX_VT.npy",
           lra ? "" : " (per step too: --json \"steps\")", cmd);
}
