/* The distributed layer (not installed): communicators and the helpers
 * the distributed drivers run their collectives through.
 *
 * A communicator (struct tcnla_comm_s) binds one handle of one rank to a
 * table of collectives on that handle's memory, made by the handle's
 * backend (src/core/backend.h: comm_local / comm_init_rank / comm_wrap):
 * shared memory between the threads of one process for CPU handles
 * (comm_shm.c), NCCL for CUDA handles (src/backend/cuda/comm_nccl.c).
 *
 * Failures without hangs: every collective of a driver is preceded by an
 * agreement on the ranks' statuses (tn_dist_agree), and every driver ends
 * with one (tn_dist_end) unless it has already seen a failure agreed. A
 * rank that fails locally skips its work up to the end, where its
 * agreement meets the other ranks' next one (their collective's, or their
 * end's): each rank makes the same number of agreements, and all return
 * the same status, the most negative of the ranks'. */
#ifndef TCNLA_DIST_H
#define TCNLA_DIST_H

#include "core/call.h"
#include "tcnla.h"
#include <stddef.h>
#include <stdint.h>

typedef enum { TN_DT_F32 = 0, TN_DT_F64 = 1 } tn_dtype_t;
typedef enum { TN_OP_SUM = 0, TN_OP_MIN = 1, TN_OP_MAX = 2 } tn_redop_t;

typedef struct tn_comm_ops {
    const char *name; /* "shm", "nccl" */
    /* x (count values in the handle's memory) <- the reduction over the
     * ranks, in place; the same bits on every rank (sums in a fixed order).
     * CUDA: queued on the handle's stream */
    int (*allreduce)(tcnla_comm_t c, void *x, size_t count, tn_dtype_t dt, tn_redop_t op);
    /* the same on host doubles; returns when x holds the result */
    int (*allreduce_host)(tcnla_comm_t c, double *x, size_t count, tn_redop_t op);
    /* recv (count values) <- the sum over the ranks of chunk `rank` of send
     * (size x count values), summed in rank order */
    int (*reduce_scatter)(tcnla_comm_t c, const void *send, void *recv, size_t count,
                          tn_dtype_t dt);
    /* recv (size x count values) <- the ranks' send (count each) in rank order */
    int (*allgather)(tcnla_comm_t c, const void *send, void *recv, size_t count, tn_dtype_t dt);
    void (*destroy)(tcnla_comm_t c);
} tn_comm_ops;

struct tcnla_comm_s {
    const tn_comm_ops *ops;
    tcnla_handle_t h;
    int size, rank;
    void *impl;
};

/* The shared-memory communicators of comm_shm.c (the CPU backend's
 * comm_local): n of them, one per handle */
int tn_shm_comm_create(tcnla_comm_t *comms, const tcnla_handle_t *hs, int n);

/* A communicator struct with its fields set (the backends' constructors);
 * NULL when out of memory */
tcnla_comm_t tn_comm_new(const tn_comm_ops *ops, tcnla_handle_t h, int size, int rank,
                         void *impl);

/* The agreement: st (this rank's status) -> the most negative over the
 * ranks; records a failure in cl (comm_failed). No collective on a call
 * without comm (returns st). */
int tn_dist_agree(tn_call_t *cl, int st);
/* A driver's first collective: the agreement on the argument checks' st
 * (rank-local), plus the checks that every rank passed the same sizes and
 * options (key: a digest of them; unequal: TCNLA_ERR_COMM on every rank),
 * and the global row count *m = the sum of m_local. */
int tn_dist_begin(tn_call_t *cl, tcnla_comm_t comm, int st, uint64_t key, int64_t m_local,
                  int64_t *m);
/* The last agreement of a driver (skipped once a failure was agreed). */
int tn_dist_end(tn_call_t *cl, int st);
/* x (count values in the handle's memory) <- its sum over the ranks, after
 * the agreement; nothing on a call without comm. */
int tn_dist_sum(tn_call_t *cl, void *x, int64_t count, tn_dtype_t dt);
/* the same for the rows x cols FP32 matrix X (leading dimension ld) */
int tn_dist_sum_cols(tn_call_t *cl, float *X, int64_t rows, int64_t cols, int64_t ld);
/* tn_comm_ops' reduce_scatter / allgather after the agreement (nothing on
 * a call without comm) */
int tn_dist_reduce_scatter(tn_call_t *cl, const void *send, void *recv, int64_t count,
                           tn_dtype_t dt);
int tn_dist_allgather(tn_call_t *cl, const void *send, void *recv, int64_t count, tn_dtype_t dt);
/* the same on host doubles, with op */
int tn_dist_reduce_host(tn_call_t *cl, double *x, int64_t count, tn_redop_t op);

/* A digest of n 64-bit words (FNV-1a over their bytes) for tn_dist_begin */
uint64_t tn_dist_key(const uint64_t *w, int n);

#endif
