/* tcnla info: version, backends found, GPU name. */
#include "cli.h"

#include <string.h>

int cmd_info(int argc, char **argv) {
    cli_common c = {TCNLA_BACKEND_AUTO, 1, 0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: tcnla info [--backend auto|cpu|cuda] [--json]\n\n"
                   "Prints the version, whether the CUDA backend is compiled in, how many GPUs\n"
                   "the CUDA runtime sees, and the device a handle with --backend (default\n"
                   "auto) runs on.\n");
            return EXIT_OK;
        }
        int r = cli_common_opt(&c, argc, argv, &i);
        if (r < 0) return EXIT_USAGE;
        if (r == 0) {
            fprintf(stderr, "tcnla info: unknown option '%s' (see --help)\n", argv[i]);
            return EXIT_USAGE;
        }
    }
    int compiled = 0, ngpu = 0;
    tcnla_cuda_available(&compiled, &ngpu);
    tcnla_handle_t h;
    int rc = cli_open(&c, &h);
    if (rc) return rc;
    tcnla_backend_t b;
    char name[256];
    tcnla_get_backend(h, &b);
    tcnla_device_name(h, name, sizeof name);
    tcnla_tc_model_t m;
    tcnla_get_tc_model(h, &m);
    if (c.json) {
        printf("{\"version\":\"%s\",\"cuda_compiled\":%s,\"gpus\":%d,\"backend\":\"%s\","
               "\"device\":",
               tcnla_version(), compiled ? "true" : "false", ngpu, cli_backend_name(b));
        cli_json_str(stdout, name);
        printf(",\"tc_model\":{\"acc_bits\":%d,\"k_per_mma\":%d,\"tcec_chunk\":%d}}\n",
               m.acc_bits, m.k_per_mma, m.tcec_chunk);
    } else {
        printf("tcnla %s\n", tcnla_version());
        printf("backends:  cpu (BLAS/LAPACK + Tensor Core model)%s\n",
               compiled ? ", cuda (compiled in)" : "; cuda not compiled in");
        printf("gpus seen: %d\n", ngpu);
        printf("handle:    %s backend on %s\n", cli_backend_name(b), name);
        printf("tc model:  %d-bit aligned accumulation, %d products per instruction, hi*hi "
               "chunk %d (CPU backend)\n",
               m.acc_bits, m.k_per_mma, m.tcec_chunk);
    }
    tcnla_destroy(h);
    return EXIT_OK;
}
