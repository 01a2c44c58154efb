/* The distributed runs of `tcnla rsvd` and `tcnla lra`: several ranks in
 * this process (--ranks P, --gpus P: one thread and one handle each) or one
 * process per GPU under mpirun (MPI loaded at run time, mpi_boot.c). */
#ifndef TCNLA_CLI_DIST_H
#define TCNLA_CLI_DIST_H
#include "cli.h"
#include "testmat/testmat.h"

/* ------------------------------------------------------------ MPI bootstrap */
/* The launcher's view of this process, from the environment: Open MPI's
 * OMPI_COMM_WORLD_SIZE / _RANK / _LOCAL_RANK, or PMI_SIZE / PMI_RANK with
 * MPI_LOCALRANKID (MPICH's Hydra). */
typedef struct {
    int size, rank, local_rank;
    const char *size_var; /* the variable that gave size */
} cli_mpi_env;
/* 1 and *e filled when the environment names a world of 2 or more
 * processes; 0 when it names none or one; -1 (message printed) when its
 * values are malformed. */
int cli_mpi_env_detect(const char *cmd, cli_mpi_env *e);

/* MPI loaded with dlopen: $TCNLA_MPI_LIBRARY, else libmpi.so.40 (Open
 * MPI), libmpi.so.12 / libmpich.so.12 (MPICH and its ABI), libmpi.so, the
 * launcher's kind first (PMI_*: MPICH's). MPI_COMM_WORLD and
 * MPI_BYTE as the implementation's ABI defines them (Open MPI: the
 * addresses of ompi_mpi_comm_world and ompi_mpi_byte; MPICH: the integer
 * handles 0x44000000 and 0x4c00010d). */
typedef struct cli_mpi cli_mpi;
/* Loads the library and its symbols (no MPI_Init); NULL after a message
 * naming what was tried. */
cli_mpi *cli_mpi_load(const char *cmd, const cli_mpi_env *e);
/* MPI_Init, and MPI_COMM_WORLD's size and rank checked against the
 * launcher's (0, or -1 after a message: a library other than the
 * launcher's sees a world of one). */
int cli_mpi_init(cli_mpi *m, const char *cmd, const cli_mpi_env *e);
/* MPI_Bcast of n bytes from root over MPI_COMM_WORLD (0 or -1). */
int cli_mpi_bcast(cli_mpi *m, void *buf, int n, int root);
/* The smallest of the processes' values (a Bcast from each in turn). */
int cli_mpi_min(cli_mpi *m, int size, int v, int *out);
/* MPI_Finalize (when initialized) and dlclose. */
void cli_mpi_close(cli_mpi *m);
/* "Open MPI" or "MPICH ABI" */
const char *cli_mpi_kind(const cli_mpi *m);

/* ------------------------------------------------------------ the runs */
/* The most ranks of a run (--ranks, --gpus, an MPI world). */
#define CLI_DIST_MAX_RANKS 1024

typedef struct {
    const char *cmd;        /* "rsvd" or "lra" */
    int is_lra;             /* 1: tcnla_dist_lra, 0: tcnla_dist_rsvd */
    cli_common c;
    const char *input, *output;
    int64_t m, n;           /* the generated matrix */
    tn_spectrum_t spectrum;
    const char *spectrum_name;
    int64_t gen_rank;       /* its rank (-1: min(m, n, 4 k + 64)) */
    int64_t reps;           /* -1: 3 on a GPU, 1 on the CPU */
    int ranks;              /* --ranks / --gpus P; 0: one process per rank (mpirun) */
    int gpus;               /* 1: --gpus (the CUDA backend) */
    tcnla_rsvd_opts_t rsvd; /* is_lra == 0 */
    tcnla_lra_opts_t lra;   /* is_lra == 1 */
    int proj_set, gemm_set, fmt_set, tgemm_set; /* given on the command line */
} cli_dist_cfg;

/* Runs the decomposition over the ranks; rank 0 prints the report. Returns
 * the exit status, the same on every rank. */
int cli_dist_run(cli_dist_cfg *cfg);
/* Before a command's ranks are known: 1 when this process is one of an MPI
 * launch of 2 or more, else 0; with --gpus (gpus != 0) the backend set to
 * CUDA. -1 (message printed) for a malformed launcher environment or
 * --gpus with --backend cpu. */
int cli_dist_prepare(const char *cmd, int gpus, cli_common *c);
/* The help text's paragraph on the distributed runs. */
void cli_dist_help(const char *cmd);
#endif
