/* The CPU Ozaki SGEMM reads exactly the elements of op(A) and op(B): with
 * lda > rows, an operand whose last column ends at the last byte of a
 * mapping followed by a PROT_NONE page must not fault (copying lda * cols
 * elements reads lda - rows elements past the end). Each product runs in a
 * child process, so that a fault fails this test and not the whole run. */
#include "tcnla.h"
#include "test.h"

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    void *base;
    size_t bytes;
    float *x; /* the operand: its last element is the mapping's last float */
} guarded_t;

/* `count` floats placed so that x[count - 1] ends exactly where a
 * PROT_NONE page begins. */
static int guarded_alloc(guarded_t *g, size_t count) {
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t data = (count * sizeof(float) + page - 1) / page * page;
    g->bytes = data + page;
    g->base = mmap(NULL, g->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g->base == MAP_FAILED) return -1;
    if (mprotect((char *)g->base + data, page, PROT_NONE) != 0) return -1;
    g->x = (float *)((char *)g->base + data) - count;
    return 0;
}

/* C = op(A) op(B) with the operands' last columns ending at guard pages;
 * returns the child's exit status (0: ran and matched the FP64 product). */
static int run_guarded(tcnla_gemm_method_t method, tcnla_op_t ta, tcnla_op_t tb) {
    const int64_t m = 37, n = 29, k = 45;
    const int64_t arows = ta == TCNLA_OP_N ? m : k, acols = ta == TCNLA_OP_N ? k : m;
    const int64_t brows = tb == TCNLA_OP_N ? k : n, bcols = tb == TCNLA_OP_N ? n : k;
    const int64_t lda = arows + 300, ldb = brows + 300; /* the gap spans pages */
    const size_t na = (size_t)(lda * (acols - 1) + arows), nb = (size_t)(ldb * (bcols - 1) + brows);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        omp_set_num_threads(1); /* the parent's OpenMP threads are not in the child */
        guarded_t ga, gb;
        if (guarded_alloc(&ga, na) || guarded_alloc(&gb, nb)) _exit(3);
        for (size_t i = 0; i < na; i++) ga.x[i] = (float)((i * 7919) % 97) / 97.0f - 0.5f;
        for (size_t i = 0; i < nb; i++) gb.x[i] = (float)((i * 104729) % 89) / 89.0f - 0.5f;
        float *C = calloc((size_t)(m * n), sizeof(float));
        tcnla_handle_t h = NULL;
        if (!C || tcnla_create(&h, TCNLA_BACKEND_CPU) != 0) _exit(3);
        if (tcnla_sgemm(h, method, ta, tb, m, n, k, 1.0f, ga.x, lda, gb.x, ldb, 0.0f, C, m) != 0)
            _exit(4);
        double worst = 0.0;
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) {
                double r = 0.0, s = 0.0;
                for (int64_t l = 0; l < k; l++) {
                    double a = ta == TCNLA_OP_N ? ga.x[i + l * lda] : ga.x[l + i * lda];
                    double b = tb == TCNLA_OP_N ? gb.x[l + j * ldb] : gb.x[j + l * ldb];
                    r += a * b, s += fabs(a * b);
                }
                double e = fabs(C[i + j * m] - r) / s;
                if (e > worst) worst = e;
            }
        tcnla_destroy(h);
        _exit(worst <= 0x1p-22 ? 0 : 5); /* FP32 accuracy, relative to |A||B| */
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ozaki_sgemm_cpu_reads_only_the_operands_elements) {
    const tcnla_gemm_method_t methods[2] = {TCNLA_GEMM_OZAKI_FP16, TCNLA_GEMM_OZAKI_INT8};
    for (int t = 0; t < 2; t++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                int st = run_guarded(methods[t], ta ? TCNLA_OP_T : TCNLA_OP_N,
                                     tb ? TCNLA_OP_T : TCNLA_OP_N);
                CHECK_MSG(st == 0,
                          "%s op(A) %s op(B) %s: child %s %d (3 setup, 4 status, 5 accuracy, "
                          ">128 signal + 128)",
                          tcnla_gemm_method_name(methods[t]), ta ? "T" : "N", tb ? "T" : "N",
                          st > 128 ? "killed by signal" : "exit", st > 128 ? st - 128 : st);
            }
}
