/* tcnla bench: runs one of the benchmark programs built beside the command
 * (build/bench_gemm, bench_rsvd, bench_lra, bench_hosvd: `make bench`), which
 * time the library's methods against cuBLAS / cuSOLVER in one process and
 * append CSV rows under bench/results/. */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

static const char *const benches[] = {"gemm", "rsvd", "lra", "hosvd"};

static void help(void) {
    printf("usage: tcnla bench gemm|rsvd|lra|hosvd [options of that benchmark]\n\n"
           "Runs build/bench_NAME (built by `make bench`; needs the CUDA backend and a GPU):\n"
           "  gemm   every GEMM method against cuBLAS SGEMM/TF32/FP16/DGEMM (CSV: gemm.csv)\n"
           "  rsvd   tcnla_rsvd against cusolverDnXgesvdr and the FP32 pipeline (rsvd.csv)\n"
           "  lra    randomized LRA variants with and without refinement (lra.csv)\n"
           "  hosvd  RP-HOSVD variants against the FP32 baseline (hosvd.csv)\n"
           "`tcnla bench NAME --help` shows the benchmark's own options.\n");
}

int cmd_bench(int argc, char **argv) {
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        help();
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    int which = cli_parse_name(argv[1], benches, 4);
    if (which < 0) {
        fprintf(stderr, "tcnla bench: unknown benchmark '%s' (gemm, rsvd, lra, hosvd)\n", argv[1]);
        return EXIT_USAGE;
    }
    char self[PATH_MAX], path[PATH_MAX + 32];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        fprintf(stderr, "tcnla bench: cannot locate the tcnla executable\n");
        return EXIT_BADINPUT;
    }
    self[len] = 0;
    char *slash = strrchr(self, '/');
    if (slash) *slash = 0;
    snprintf(path, sizeof path, "%s/bench_%s", self, benches[which]);
    if (access(path, X_OK) != 0) {
        fprintf(stderr, "tcnla bench: %s is not built (run `make bench` on a machine with the "
                        "CUDA toolkit)\n", path);
        return EXIT_BADINPUT;
    }
    argv[1] = path;
    execv(path, argv + 1);
    fprintf(stderr, "tcnla bench: cannot run %s: %s\n", path, strerror(errno));
    return EXIT_BADINPUT;
}
