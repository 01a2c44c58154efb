/* Which views of a trusted operand may skip their per-product check (the
 * geometry half of tn_cuda_trust, src/backend/cuda/gemm_cuda.c; plain C so that
 * the CPU tests cover it). */
#include "core/internal.h"

int tn_trust_covers(const tn_trust_t *t, int method, uintptr_t X, int64_t ld, int64_t rows,
                    int64_t cols, int64_t stride, int64_t batch, int vcol) {
    if (method <= 0 || method >= 32) return 0;
    const unsigned bit = 1u << method;
    if (!((t->mask | t->mask_rows | t->mask_cols) & bit) || rows <= 0 || cols <= 0 ||
        batch <= 0 || ld < rows || stride < 0 || (batch > 1 && stride == 0))
        return 0;
    const int64_t tr = t->rows, tl = t->ld, tc = t->cols;
    if (tr <= 0 || tc <= 0 || tl < tr) return 0;
    if (X < t->base || (X - t->base) % sizeof(float)) return 0;
    const uint64_t offu = (uint64_t)((X - t->base) / sizeof(float));
    if (offu > (uint64_t)tl * (uint64_t)tc) return 0;
    const int64_t off = (int64_t)offu;
    const int dense = tl == tr;
    if (dense) { /* every address in the span was checked: the last element inside it */
        const int64_t span = tr * tc;
        if ((cols - 1) > (span - off) / ld) return 0;
        int64_t last = off + (cols - 1) * ld + rows; /* one past the first matrix */
        if (last > span) return 0;
        if (batch > 1 && (batch - 1) > (span - last) / stride) return 0;
    } else { /* padded: the same leading dimension, inside the rows x cols block */
        if (batch > 1 || ld != tl || off % tl + rows > tr || off / tl + cols > tc) return 0;
    }
    if (t->mask & bit) return 1; /* element by element: any layout */
    if (vcol && (t->mask_cols & bit)) /* every vector a union of whole columns */
        return off % tl == 0 && ld % tl == 0 && rows % tr == 0 &&
               (batch == 1 || stride % tl == 0) && (dense || rows == tr);
    if (!vcol && (t->mask_rows & bit)) /* every vector a whole row */
        return batch == 1 && ld == tl && off / tl == 0 && cols == tc;
    return 0;
}
