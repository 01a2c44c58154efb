/* Pieces shared by the Hopper (sm_90a) GEMM kernels, tc_gemm_sm90.cu (the
 * in-kernel split) and tc_gemm_sm90_ps.cu (pre-split operands): the sm_90a
 * switch, mbarrier / TMA / wgmma primitives, the shared-memory operand
 * descriptor, the wgmma instructions with both operands in shared memory,
 * and the host's tensor-map encoder. Included by .cu files only; every
 * function is static (one copy per translation unit). */
#ifndef TCNLA_SM90_COMMON_CUH
#define TCNLA_SM90_COMMON_CUH

#include "backend/cuda/kernels/split.cuh"
#include "backend/cuda/tn_cuda.h"

#include <cuda.h> /* CUtensorMap and its enums (types only, no -lcuda) */
#include <cuda_runtime.h>
#include <stdint.h>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define S9_ON 1
#else
#define S9_ON 0
#endif

/* ---------------------------------------------------- configuration */
static __host__ __device__ __forceinline__ int s9_tf32(int mode) {
    return mode == TN_KMODE_TCEC_TF32 || mode == TN_KMODE_SHGEMM_TF32;
}
static __host__ __device__ __forceinline__ int s9_sh(int mode) {
    return mode == TN_KMODE_SHGEMM_F16 || mode == TN_KMODE_SHGEMM_TF32;
}

/* ------------------------------------------------------- primitives */
#if S9_ON
static __device__ __forceinline__ uint32_t s9_smem_u32(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}
static __device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
static __device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
static __device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
}
static __device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    uint32_t done;
    do {
        asm volatile("{\n.reg .pred p;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    } while (!done);
}
/* 2-D TMA load of one box into shared memory, completing on bar */
static __device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap *map, int c0,
                                                   int c1, uint32_t bar) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}
/* 3-D TMA load (op(A) whose k runs through slabs: tn_cu_tc_gemm_sm90_slabs) */
static __device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap *map, int c0,
                                                   int c1, int c2, uint32_t bar) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];" ::"r"(dst),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
                 : "memory");
}
/* the K-contiguous A box of k0: one 2-D matrix, or slab k0 / kslab of a
 * 3-D one (kslab a multiple of S9_BK, so a box never straddles slabs) */
static __device__ __forceinline__ void tma_load_ak(uint32_t dst, const CUtensorMap *map, int k0,
                                                   int m0, int kslab, uint32_t bar) {
    if (kslab) tma_load_3d(dst, map, k0 % kslab, m0, k0 / kslab, bar);
    else tma_load_2d(dst, map, k0, m0, bar);
}
/* ---- clusters: a shared address of the same offset in CTA `rank` */
static __device__ __forceinline__ uint32_t s9_mapa(uint32_t addr, uint32_t rank) {
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}
static __device__ __forceinline__ void fence_async_smem(void) {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
static __device__ __forceinline__ void wgmma_fence(void) {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
static __device__ __forceinline__ void wgmma_commit(void) {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
static __device__ __forceinline__ void wgmma_wait0(void) {
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}
static __device__ __forceinline__ void wgmma_wait1(void) {
    asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
}
static __device__ __forceinline__ void wgmma_wait2(void) {
    asm volatile("wgmma.wait_group.sync.aligned 2;" ::: "memory");
}
/* keeps the compiler from moving register reads across a wgmma wait */
static __device__ __forceinline__ void reg_fence(float *d) {
#pragma unroll
    for (int i = 0; i < 64; i++) asm volatile("" : "+f"(d[i])::"memory");
}
/* K-major operand descriptor: rows of `row_bytes` (64: 64-byte swizzle,
 * 128: 128-byte swizzle), 8-row groups row_bytes * 8 apart. */
static __device__ __forceinline__ uint64_t wg_desc(uint32_t addr, const int row_bytes) {
    uint64_t d = (uint64_t)((addr & 0x3FFFFu) >> 4);
    d |= (uint64_t)1 << 16;                                  /* LBO (unused here) */
    d |= (uint64_t)((row_bytes * 8) >> 4) << 32;             /* SBO */
    d |= (uint64_t)(row_bytes == 128 ? 1 : 2) << 62;         /* 128B / 64B swizzle */
    return d;
}
/* The FP32 accumulator registers of an m64n64 (32) and an m64n128 (64)
 * wgmma, as asm outputs. */
#define S9_ACC32(d)                                                                             \
    "+f"((d)[0]), "+f"((d)[1]), "+f"((d)[2]), "+f"((d)[3]), "+f"((d)[4]), "+f"((d)[5]), "+f"((d)[6]), "+f"((d)[7]),  \
    "+f"((d)[8]), "+f"((d)[9]), "+f"((d)[10]), "+f"((d)[11]), "+f"((d)[12]), "+f"((d)[13]), "+f"((d)[14]), "+f"((d)[15]),  \
    "+f"((d)[16]), "+f"((d)[17]), "+f"((d)[18]), "+f"((d)[19]), "+f"((d)[20]), "+f"((d)[21]), "+f"((d)[22]), "+f"((d)[23]),  \
    "+f"((d)[24]), "+f"((d)[25]), "+f"((d)[26]), "+f"((d)[27]), "+f"((d)[28]), "+f"((d)[29]), "+f"((d)[30]), "+f"((d)[31])
#define S9_ACC64(d) S9_ACC32(d), S9_ACC32((d) + 32)

#define S9_WGMMA_F16(d, da, db, scd)                                                            \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                               \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "                                \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, "  \
                 "%64, %65, p, 1, 1, 0, 0;\n}\n"                                                       \
                 : S9_ACC64(d)  \
                 : "l"(da), "l"(db), "r"(scd))

#define S9_WGMMA_TF32(d, da, db, scd)                                                            \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                               \
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "                                \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, "  \
                 "%64, %65, p, 1, 1;\n}\n"                                                       \
                 : S9_ACC64(d)  \
                 : "l"(da), "l"(db), "r"(scd))

/* Both operands from shared memory, FP16 (k16) or TF32 (k8) by TF */
#define S9_WGMMA_SS(TF, d, da, db, scd)                                                        \
    do {                                                                                       \
        if (TF) S9_WGMMA_TF32(d, da, db, scd);                                                 \
        else S9_WGMMA_F16(d, da, db, scd);                                                     \
    } while (0)
/* 1 when the launch gave the kernel at least `need` bytes of dynamic
 * shared memory (the host sizes it; a guard, not a branch of the design) */
static __device__ __forceinline__ int s9_dsmem_ok(int need) {
    uint32_t dsmem;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dsmem));
    return dsmem >= (uint32_t)need;
}
/* Grouped rasterisation of the 128 x 128 output tiles: 8 block rows in a
 * row share their B panels in L2. Block pid's tile starts at (m0, n0). */
static __device__ __forceinline__ void s9_tile_of(int pid, int M, int N, int *m0, int *n0) {
    const int tiles_m = (M + 127) / 128, tiles_n = (N + 127) / 128;
    const int width = 8 * tiles_n, group = pid / width;
    const int first_m = group * 8, gsz = min(tiles_m - first_m, 8);
    *m0 = (first_m + (pid % width) % gsz) * 128;
    *n0 = ((pid % width) / gsz) * 128;
}
/* The consumers' epilogue: thread tid (128 .. 383) of warpgroup cw holds
 * the m64nN accumulators acc (result) and corr (corrections, scaled by
 * 2^11) of rows m0 + 64 cw .., columns n0 .. n0 + 8 NF - 1 (NF = 16 for
 * n = 128, 8 for n = 64). r = acc + corr 2^-11; C = alpha r (+ beta C), or
 * with split-K r into slice blockIdx.y of P (m x n each). */
static __device__ __forceinline__ void s9_epilogue(const float *acc, const float *corr,
                                                   const int NF, int tid, int cw, int m0, int n0,
                                                   int M, int N, float alpha, float beta,
                                                   float *__restrict__ C, long long ldc,
                                                   float *__restrict__ P) {
    const int lane = tid & 31, w = (tid >> 5) & 3;
    const int row0 = m0 + cw * 64 + 16 * w + (lane >> 2);
#pragma unroll
    for (int i = 0; i < NF; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int gi = row0 + 8 * h;
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int gj = n0 + 8 * i + 2 * (lane & 3) + e;
                const int x = 4 * i + 2 * h + e;
                float r = __fadd_rn(acc[x], __fmul_rn(corr[x], TN_SPLIT_INV_SCALE));
                if (gi < M && gj < N) {
                    if (P) {
                        P[(long long)blockIdx.y * M * N + gi + (long long)gj * M] = r;
                    } else {
                        float *p = C + gi + (long long)gj * ldc;
                        float v = __fmul_rn(alpha, r);
                        if (beta != 0.0f) v = __fadd_rn(v, __fmul_rn(beta, *p));
                        *p = v;
                    }
                }
            }
        }
}
#endif /* S9_ON */

/* ------------------------------------------------------- host side */
typedef CUresult (*s9_encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                 const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                 const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

/* The driver's cuTensorMapEncodeTiled (NULL when the driver lacks it). The
 * pointer is looked up once per process: a property of the driver, not
 * state of any handle. A function-local static with an initializer: C++
 * runs it once, and a thread that comes in meanwhile waits for it (handles
 * of different threads call this at the same time). */
static s9_encode_fn s9_encoder(void) {
    static const s9_encode_fn fn = [] {
        void *p = NULL;
        cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
        cudaError_t e =
            cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q);
        if (e != cudaSuccess || q != cudaDriverEntryPointSuccess) {
            cudaGetLastError();
            p = NULL;
        }
        return (s9_encode_fn)p;
    }();
    return fn;
}

/* A 2-D tensor map of a column-major rows x cols matrix (leading dim ld,
 * element size es) with a box of box0 (along rows) x box1 (along cols). */
static int s9_map(CUtensorMap *map, s9_encode_fn enc, CUtensorMapDataType dt, int es,
                  const void *X, int64_t rows, int64_t cols, int64_t ld, int box0, int box1,
                  CUtensorMapSwizzle sw) {
    cuuint64_t dim[2] = {(cuuint64_t)rows, (cuuint64_t)cols};
    cuuint64_t stride[1] = {(cuuint64_t)ld * (cuuint64_t)es};
    cuuint32_t box[2] = {(cuuint32_t)box0, (cuuint32_t)box1};
    cuuint32_t estr[2] = {1, 1};
    CUresult r = enc(map, dt, 2, (void *)X, dim, stride, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                     sw, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? 0 : -1;
}

#endif
