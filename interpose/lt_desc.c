/* What a cublasLtMatmul call asks, read with cublasLtMatmulDescGetAttribute
 * and cublasLtMatrixLayoutGetAttribute (the real ones), and whether the
 * hook takes it: FP32 A, B, C, D (column order, no planar offsets, strided
 * batches), compute type CUBLAS_COMPUTE_32F or _32F_PEDANTIC with scale
 * type FP32, pointer mode HOST or DEVICE, TRANSC N, the epilogues DEFAULT,
 * BIAS, RELU, RELU_BIAS, GELU, GELU_BIAS with an FP32 bias, and none of
 * the FP8 scale / amax pointers set. Anything else goes to cuBLASLt. */
#include "internal.h"

#include <string.h>

/* One attribute (0 on success; an attribute this cuBLASLt does not know
 * leaves *out at its default and counts as unset). */
static int dget(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, void *out, size_t sz,
                int must) {
    size_t w = 0;
    cublasStatus_t st = tci_lt_desc_get()(d, a, out, sz, &w);
    if (st == CUBLAS_STATUS_SUCCESS) return w == sz ? 0 : -1;
    return must ? -1 : 0;
}

static int lget(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a, void *out,
                size_t sz) {
    size_t w = 0;
    cublasStatus_t st = tci_lt_layout_get()(l, a, out, sz, &w);
    return st == CUBLAS_STATUS_SUCCESS && w == sz ? 0 : -1;
}

typedef struct {
    uint32_t type;
    int32_t order;
    uint64_t rows, cols;
    int64_t ld, stride, plane;
    int32_t batch;
    uint32_t mode;
} layout_t;

static int read_layout(cublasLtMatrixLayout_t l, layout_t *o) {
    memset(o, 0, sizeof *o);
    o->batch = 1;
    if (!l) return -1;
    if (lget(l, CUBLASLT_MATRIX_LAYOUT_TYPE, &o->type, sizeof o->type) ||
        lget(l, CUBLASLT_MATRIX_LAYOUT_ORDER, &o->order, sizeof o->order) ||
        lget(l, CUBLASLT_MATRIX_LAYOUT_ROWS, &o->rows, sizeof o->rows) ||
        lget(l, CUBLASLT_MATRIX_LAYOUT_COLS, &o->cols, sizeof o->cols) ||
        lget(l, CUBLASLT_MATRIX_LAYOUT_LD, &o->ld, sizeof o->ld) ||
        lget(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &o->batch, sizeof o->batch) ||
        lget(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &o->stride, sizeof o->stride) ||
        lget(l, CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, &o->plane, sizeof o->plane))
        return -1;
    size_t w = 0; /* (batch mode: newer cuBLASLt only) */
    if (tci_lt_layout_get()(l, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &o->mode, sizeof o->mode, &w) !=
        CUBLAS_STATUS_SUCCESS)
        o->mode = 0;
    return 0;
}

int tci_lt_read(cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t Ad, cublasLtMatrixLayout_t Bd,
                cublasLtMatrixLayout_t Cd, cublasLtMatrixLayout_t Dd, tci_lt_call_t *c) {
    memset(c, 0, sizeof *c);
    if (!tci_lt_desc_get() || !tci_lt_layout_get() || !desc) return TCNLA_CUBLAS_PATH_ARGS;
    int32_t compute = 0, scale = 0, pmode = 0, ta = 0, tb = 0, tc = 0, bias_type = -1;
    uint32_t epi = CUBLASLT_EPILOGUE_DEFAULT;
    const void *bias = NULL;
    int64_t bias_stride = 0, alpha_vstride = 0;
    if (dget(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute, sizeof compute, 1) ||
        dget(desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale, sizeof scale, 1))
        return TCNLA_CUBLAS_PATH_ARGS;
    if ((compute != CUBLAS_COMPUTE_32F && compute != CUBLAS_COMPUTE_32F_PEDANTIC) ||
        scale != CUDA_R_32F)
        return TCNLA_CUBLAS_PATH_TYPE;
    if (dget(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pmode, sizeof pmode, 1) ||
        dget(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta, 1) ||
        dget(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb, 1) ||
        dget(desc, CUBLASLT_MATMUL_DESC_TRANSC, &tc, sizeof tc, 1) ||
        dget(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi, 1) ||
        dget(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias, 1) ||
        dget(desc, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bias_stride, sizeof bias_stride, 1) ||
        dget(desc, CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE, &alpha_vstride,
             sizeof alpha_vstride, 0) ||
        dget(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type, 0))
        return TCNLA_CUBLAS_PATH_ARGS;
    /* the FP8 / block-scaling pointers and an emulation descriptor: unset */
    static const cublasLtMatmulDescAttributes_t unset[] = {
        CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
        CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
        CUBLASLT_MATMUL_DESC_AMAX_D_POINTER,  CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
        CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR};
    for (size_t i = 0; i < sizeof unset / sizeof unset[0]; i++) {
        void *p = NULL;
        if (dget(desc, unset[i], &p, sizeof p, 0) || p) return TCNLA_CUBLAS_PATH_ARGS;
    }
    if (pmode != CUBLASLT_POINTER_MODE_HOST && pmode != CUBLASLT_POINTER_MODE_DEVICE)
        return TCNLA_CUBLAS_PATH_ARGS;
    if ((ta != CUBLAS_OP_N && ta != CUBLAS_OP_T && ta != CUBLAS_OP_C) ||
        (tb != CUBLAS_OP_N && tb != CUBLAS_OP_T && tb != CUBLAS_OP_C) || tc != CUBLAS_OP_N)
        return TCNLA_CUBLAS_PATH_ARGS;
    switch (epi) {
    case CUBLASLT_EPILOGUE_DEFAULT: break;
    case CUBLASLT_EPILOGUE_RELU: c->relu = 1; break;
    case CUBLASLT_EPILOGUE_GELU: c->gelu = 1; break;
    case CUBLASLT_EPILOGUE_BIAS: c->bias = 1; break;
    case CUBLASLT_EPILOGUE_RELU_BIAS: c->bias = c->relu = 1; break;
    case CUBLASLT_EPILOGUE_GELU_BIAS: c->bias = c->gelu = 1; break;
    default: return TCNLA_CUBLAS_PATH_ARGS;
    }
    if (c->bias && (!bias || (bias_type != -1 && bias_type != CUDA_R_32F) || bias_stride < 0))
        return TCNLA_CUBLAS_PATH_ARGS;

    layout_t a, b, cc, d;
    if (read_layout(Ad, &a) || read_layout(Bd, &b) || read_layout(Cd, &cc) ||
        read_layout(Dd, &d))
        return TCNLA_CUBLAS_PATH_ARGS;
    if (a.type != CUDA_R_32F || b.type != CUDA_R_32F || cc.type != CUDA_R_32F ||
        d.type != CUDA_R_32F)
        return TCNLA_CUBLAS_PATH_TYPE;
    const layout_t *all[4] = {&a, &b, &cc, &d};
    for (int i = 0; i < 4; i++)
        if (all[i]->order != CUBLASLT_ORDER_COL || all[i]->plane != 0 || all[i]->mode != 0 ||
            all[i]->batch < 1 || all[i]->stride < 0 || all[i]->rows > 0x7fffffff ||
            all[i]->cols > 0x7fffffff)
            return TCNLA_CUBLAS_PATH_ARGS;
    c->ta = ta != CUBLAS_OP_N;
    c->tb = tb != CUBLAS_OP_N;
    c->m = (int64_t)d.rows;
    c->n = (int64_t)d.cols;
    c->k = (int64_t)(c->ta ? a.rows : a.cols);
    const int64_t am = (int64_t)(c->ta ? a.cols : a.rows);
    const int64_t bk = (int64_t)(c->tb ? b.cols : b.rows), bn = (int64_t)(c->tb ? b.rows : b.cols);
    if (am != c->m || bk != c->k || bn != c->n || (int64_t)cc.rows != c->m ||
        (int64_t)cc.cols != c->n)
        return TCNLA_CUBLAS_PATH_ARGS;
    c->batch = d.batch;
    if (a.batch != d.batch || b.batch != d.batch || cc.batch != d.batch)
        return TCNLA_CUBLAS_PATH_ARGS;
    c->lda = a.ld, c->ldb = b.ld, c->ldc = cc.ld, c->ldd = d.ld;
    if (c->lda < (int64_t)(a.rows > 1 ? a.rows : 1) || c->ldb < (int64_t)(b.rows > 1 ? b.rows : 1) ||
        c->ldc < (c->m > 1 ? c->m : 1) || c->ldd < (c->m > 1 ? c->m : 1))
        return TCNLA_CUBLAS_PATH_ARGS;
    c->sA = c->batch > 1 ? a.stride : 0;
    c->sB = c->batch > 1 ? b.stride : 0;
    c->sC = c->batch > 1 ? cc.stride : 0;
    c->sD = c->batch > 1 ? d.stride : 0;
    if (c->batch > 1 && (c->sD < c->ldd * (c->n - 1) + c->m)) return TCNLA_CUBLAS_PATH_ARGS;
    if (c->bias && alpha_vstride != 0) return TCNLA_CUBLAS_PATH_ARGS;
    c->device_scalars = pmode == CUBLASLT_POINTER_MODE_DEVICE;
    c->bias_ptr = (const float *)bias;
    c->bias_stride = c->bias && c->batch > 1 ? bias_stride : 0;
    return -1;
}
