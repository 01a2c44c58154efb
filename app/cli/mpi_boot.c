/* MPI for the one-process-per-GPU runs, loaded at run time: the command
 * links no MPI (machines without mpicc build it), and needs only MPI_Init,
 * MPI_Bcast (of the communicator's identifier and a few statuses) and
 * MPI_Finalize; everything after goes through tcnla_comm_*.
 *
 * The handles MPI_COMM_WORLD and MPI_BYTE are not symbols in every ABI:
 * Open MPI's mpi.h defines them as the addresses of the globals
 * ompi_mpi_comm_world and ompi_mpi_byte (MPI_Comm and MPI_Datatype are
 * pointers), MPICH's (and its ABI's: Intel MPI, MVAPICH) as the integers
 * 0x44000000 and 0x4c00010d (MPI_Comm and MPI_Datatype are int). */
#include "dist.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct cli_mpi {
    void *lib;
    int ompi, inited;
    const char *name;
    int (*init)(int *, char ***);
    int (*finalize)(void);
    int (*bcast_p)(void *, int, void *, int, void *); /* Open MPI: handles are pointers */
    int (*bcast_i)(void *, int, int, int, int);       /* MPICH: handles are int */
    int (*size_p)(void *, int *), (*rank_p)(void *, int *);
    int (*size_i)(int, int *), (*rank_i)(int, int *);
    void *comm_world_p, *byte_p;
};

#define MPICH_COMM_WORLD 0x44000000
#define MPICH_BYTE 0x4c00010d

/* A non-negative integer variable; -1 when absent, -2 when malformed. */
static int env_int(const char *name) {
    const char *s = getenv(name);
    if (!s) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < 0 || v > (1 << 24)) return -2;
    return (int)v;
}

int cli_mpi_env_detect(const char *cmd, cli_mpi_env *e) {
    static const struct { const char *size, *rank, *local; } vars[2] = {
        {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"},
        {"PMI_SIZE", "PMI_RANK", "MPI_LOCALRANKID"}};
    memset(e, 0, sizeof *e);
    for (int v = 0; v < 2; v++) {
        const int size = env_int(vars[v].size);
        if (size == -1) continue;
        const int rank = env_int(vars[v].rank), local = env_int(vars[v].local);
        if (size == -2 || rank < 0 || local == -2 || (size >= 1 && rank >= size)) {
            fprintf(stderr, "tcnla %s: the MPI launcher's variables %s=%s, %s=%s are not a "
                    "world size and a rank in it\n", cmd, vars[v].size,
                    getenv(vars[v].size), vars[v].rank,
                    getenv(vars[v].rank) ? getenv(vars[v].rank) : "(unset)");
            return -1;
        }
        if (size < 2) return 0;
        e->size = size;
        e->rank = rank;
        e->local_rank = local >= 0 ? local : rank; /* one node when the launcher does not say */
        e->size_var = vars[v].size;
        return 1;
    }
    return 0;
}

cli_mpi *cli_mpi_load(const char *cmd, const cli_mpi_env *e) {
    /* the launcher's own library first: Open MPI's mpirun sets OMPI_*, MPICH's
     * Hydra PMI_* (Debian names MPICH's library libmpich.so.12) */
    static const char *const ompi_first[] = {"libmpi.so.40", "libmpi.so.12", "libmpich.so.12",
                                             "libmpi.so"};
    static const char *const mpich_first[] = {"libmpi.so.12", "libmpich.so.12", "libmpi.so.40",
                                              "libmpi.so"};
    const char *const *names = e && e->size_var && !strncmp(e->size_var, "PMI", 3) ? mpich_first
                                                                                 : ompi_first;
    const char *forced = getenv("TCNLA_MPI_LIBRARY");
    cli_mpi *m = calloc(1, sizeof *m);
    if (!m) {
        fprintf(stderr, "tcnla %s: out of memory\n", cmd);
        return NULL;
    }
    char why[1024] = "";
    for (int i = 0; i < (forced ? 1 : 4) && !m->lib; i++) {
        m->name = forced ? forced : names[i];
        /* RTLD_GLOBAL: Open MPI's components resolve libmpi's symbols */
        m->lib = dlopen(m->name, RTLD_NOW | RTLD_GLOBAL);
        if (!m->lib && i == 0) {
            const char *d = dlerror();
            snprintf(why, sizeof why, "%s", d ? d : "not found");
        }
    }
    if (!m->lib) {
        if (forced)
            fprintf(stderr, "tcnla %s: cannot load the MPI library $TCNLA_MPI_LIBRARY = %s: %s\n",
                    cmd, forced, why);
        else
            fprintf(stderr, "tcnla %s: running under an MPI launcher, but no MPI library was "
                    "found (tried %s, %s, %s, %s; set TCNLA_MPI_LIBRARY to its path)\n", cmd,
                    names[0], names[1], names[2], names[3]);
        free(m);
        return NULL;
    }
    m->init = (int (*)(int *, char ***))dlsym(m->lib, "MPI_Init");
    m->finalize = (int (*)(void))dlsym(m->lib, "MPI_Finalize");
    void *bc = dlsym(m->lib, "MPI_Bcast");
    m->comm_world_p = dlsym(m->lib, "ompi_mpi_comm_world");
    m->byte_p = dlsym(m->lib, "ompi_mpi_byte");
    m->ompi = m->comm_world_p != NULL;
    if (!m->init || !m->finalize || !bc || (m->ompi && !m->byte_p)) {
        fprintf(stderr, "tcnla %s: %s is not an MPI library (no %s)\n", cmd, m->name,
                !m->init ? "MPI_Init" : !m->finalize ? "MPI_Finalize" : !bc ? "MPI_Bcast"
                                                                        : "ompi_mpi_byte");
        dlclose(m->lib);
        free(m);
        return NULL;
    }
    void *sz = dlsym(m->lib, "MPI_Comm_size"), *rk = dlsym(m->lib, "MPI_Comm_rank");
    if (!sz || !rk) {
        fprintf(stderr, "tcnla %s: %s is not an MPI library (no MPI_Comm_%s)\n", cmd, m->name,
                !sz ? "size" : "rank");
        dlclose(m->lib);
        free(m);
        return NULL;
    }
    if (m->ompi) {
        m->bcast_p = (int (*)(void *, int, void *, int, void *))bc;
        m->size_p = (int (*)(void *, int *))sz, m->rank_p = (int (*)(void *, int *))rk;
    } else {
        m->bcast_i = (int (*)(void *, int, int, int, int))bc;
        m->size_i = (int (*)(int, int *))sz, m->rank_i = (int (*)(int, int *))rk;
    }
    return m;
}

const char *cli_mpi_kind(const cli_mpi *m) {
    return m->ompi ? "Open MPI" : "MPICH ABI";
}

int cli_mpi_init(cli_mpi *m, const char *cmd, const cli_mpi_env *e) {
    int st = m->init(NULL, NULL), size = -1, rank = -1;
    if (st != 0) {
        fprintf(stderr, "tcnla %s: MPI_Init (%s) failed with code %d\n", cmd, m->name, st);
        return -1;
    }
    m->inited = 1;
    if (m->ompi) m->size_p(m->comm_world_p, &size), m->rank_p(m->comm_world_p, &rank);
    else m->size_i(MPICH_COMM_WORLD, &size), m->rank_i(MPICH_COMM_WORLD, &rank);
    if (size != e->size || rank != e->rank) { /* e.g. Open MPI's library under MPICH's launcher */
        fprintf(stderr, "tcnla %s: %s (%s) sees rank %d of %d, the launcher says %d of %d (%s): "
                "not the launcher's MPI; set TCNLA_MPI_LIBRARY\n", cmd, m->name,
                cli_mpi_kind(m), rank, size, e->rank, e->size, e->size_var);
        return -1;
    }
    return 0;
}

int cli_mpi_bcast(cli_mpi *m, void *buf, int n, int root) {
    const int st = m->ompi ? m->bcast_p(buf, n, m->byte_p, root, m->comm_world_p)
                           : m->bcast_i(buf, n, MPICH_BYTE, root, MPICH_COMM_WORLD);
    return st == 0 ? 0 : -1;
}

int cli_mpi_min(cli_mpi *m, int size, int v, int *out) {
    int lo = v;
    for (int r = 0; r < size; r++) {
        int x = v;
        if (cli_mpi_bcast(m, &x, (int)sizeof x, r)) return -1;
        if (x < lo) lo = x;
    }
    *out = lo;
    return 0;
}

void cli_mpi_close(cli_mpi *m) {
    if (!m) return;
    if (m->inited) m->finalize();
    /* no dlclose: MPI libraries leave threads and atexit handlers behind */
    free(m);
}
