/* Ozaki scheme II on Hopper (sm_90a): the INT8 products of all moduli with
 * their reduction modulo p_l fused into one wgmma kernel (host side:
 * src/backend/cuda/ozaki2_cuda.c; the unfused path is cuBLASLt's INT8 GEMM,
 * i8gemm_cuda.c, followed by k_modp of ozaki2_kernels.cu).
 *
 * For modulus l = blockIdx.y and one 128 x 256 output tile (blockIdx.x,
 * grouped rasterisation: OF_GROUP = 16 tile rows share the B panels in L2):
 *   acc = RA_l[m0 .. m0 + 127][0 .. kp) RB_l[n0 .. n0 + 255][0 .. kp)^T
 * on the INT8 Tensor Cores (exact in INT32: kp <= TN_OZ2_KBLOCK), then
 *   Q[(l nbp + j) mbp + i] = (q_l acc_ij) mod p_l   (uint8 in [0, p_l))
 * with the same integer as k_modp gives (it is unique, so any exact method
 * gives the same bits; the same FP32 steps are used here).
 *   warpgroup 0 (setmaxnreg 40): thread 0 issues the TMA copies (3-D
 *     tensor maps kp x mbp x nmod and kp x nbp x nmod, int8, 128-byte
 *     swizzle) of the A tile (128 rows x 128 bytes of k) and the B tile
 *     (256 x 128) of each k-tile into a ring of 4 stages (48 KB each; full
 *     / empty mbarriers). Reads past kp, mbp or nbp are TMA's zero fill.
 *     In clusters of two blocks (tn_oz2_fused_kernel_c2, the default) the
 *     blocks of tiles m0 and m0 + 128 each copy one half of their common B
 *     tile into both (multicast): 32 KB per stage from L2 instead of 48.
 *   warpgroups 1, 2 (setmaxnreg 232): 64 rows each, 4 wgmma
 *     m64n256k32.s32.s8.s8 per k-tile with both operands K-major in shared
 *     memory (128 INT32 accumulators per thread); one wgmma group kept in
 *     flight, the stage before it released. Epilogue: each accumulator to
 *     its residue, the bytes through shared memory (the ring, free by
 *     then), written as 16-byte pieces of Q's columns; rows >= mbp and
 *     columns >= nbp are not written.
 * Only the sm_90a pass compiles the kernel body; other passes get an empty
 * kernel that the host never launches (tn_oz2_fused_available). */
#include "backend/cuda/kernels/sm90_common.cuh"
#include "gemm/ozaki2_consts.h"
#include "backend/cuda/kernels/ozaki2_launch.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#define OF_BM 128
#define OF_BN 256
#define OF_KB 128 /* bytes (int8 values) of k per stage */
#define OF_STAGES 4
#define OF_THREADS 384
/* tile rows of a rasterisation group (even: cluster pairs stay in one
 * group). The 132 tiles in flight on an H100 then span about 16 tile rows
 * (A: 2 MB a row at k = 16384) and 8 tile columns (B: 4 MB), about the
 * fewest bytes from memory for 132 tiles of 128 x 256. The large products
 * are power-bound (the SM clock falls well below its maximum), so bytes
 * not moved leave more of the power to the Tensor Cores (docs/results.md
 * has the measurements). */
#define OF_GROUP 16
#define OF_A_BYTES (OF_BM * OF_KB)
#define OF_B_BYTES (OF_BN * OF_KB)
#define OF_STAGE (OF_A_BYTES + OF_B_BYTES)
#define OF_BAR_OFF (OF_STAGES * OF_STAGE)
/* the epilogue's bytes of one warpgroup: 256 columns of 64 rows, 80 bytes
 * apart (16-byte aligned, no bank conflicts on the byte stores) */
#define OF_QCOL 80
#define OF_SMEM (OF_BAR_OFF + 8 * 2 * OF_STAGES + 1024)

/* per modulus: p, 1 / p, c0 = q_l, c1 = q_l 2^16 mod p, both in (-p/2, p/2] */
typedef struct {
    float p[TN_OZ2_MAXN], pinv[TN_OZ2_MAXN], c0[TN_OZ2_MAXN], c1[TN_OZ2_MAXN];
} of_consts;

#if S9_ON
#define OF_ACC32(d, o)                                                                          \
    "+r"((d)[o + 0]), "+r"((d)[o + 1]), "+r"((d)[o + 2]), "+r"((d)[o + 3]), "+r"((d)[o + 4]),   \
        "+r"((d)[o + 5]), "+r"((d)[o + 6]), "+r"((d)[o + 7]), "+r"((d)[o + 8]),                 \
        "+r"((d)[o + 9]), "+r"((d)[o + 10]), "+r"((d)[o + 11]), "+r"((d)[o + 12]),              \
        "+r"((d)[o + 13]), "+r"((d)[o + 14]), "+r"((d)[o + 15]), "+r"((d)[o + 16]),             \
        "+r"((d)[o + 17]), "+r"((d)[o + 18]), "+r"((d)[o + 19]), "+r"((d)[o + 20]),             \
        "+r"((d)[o + 21]), "+r"((d)[o + 22]), "+r"((d)[o + 23]), "+r"((d)[o + 24]),             \
        "+r"((d)[o + 25]), "+r"((d)[o + 26]), "+r"((d)[o + 27]), "+r"((d)[o + 28]),             \
        "+r"((d)[o + 29]), "+r"((d)[o + 30]), "+r"((d)[o + 31])
#define OF_ACC128(d) OF_ACC32(d, 0), OF_ACC32(d, 32), OF_ACC32(d, 64), OF_ACC32(d, 96)

/* d (+)= A B^T, m64n256k32, s8 x s8 -> s32, both operands from shared
 * memory (K-major); scd 0: d = A B^T */
#define OF_WGMMA(d, da, db, scd)                                                                \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                 \
                 "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 "                           \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}, "                                                                  \
                 "%128, %129, p;\n}\n"                                                          \
                 : OF_ACC128(d)                                                                 \
                 : "l"(da), "l"(db), "r"(scd))

/* x mod p for an integer 0 <= |x| < 2^24 in FP32 (k_modp's mod_small) */
static __device__ __forceinline__ float of_mod_small(float x, float p, float pinv) {
    const float q = __fadd_rn(__fmul_rn(x, pinv), 12582912.0f) - 12582912.0f;
    float r = fmaf(-q, p, x); /* exact */
    r = r < 0.0f ? r + p : r;
    return r >= p ? r - p : r;
}
/* (q_l v) mod p for an int32 v, as k_modp: v = vh 2^16 + vl, vh c1 + vl c0
 * an exact FP32 integer below 2^24 */
static __device__ __forceinline__ unsigned of_residue(int v, float p, float pinv, float c0,
                                                      float c1) {
    const int vh = v >> 16, vl = v & 0xFFFF;
    const float fh = __int_as_float(0x4B000000 | (vh + 32768)) - 8421376.0f; /* 2^23 + 2^15 */
    const float fl = __int_as_float(0x4B000000 | vl) - 8388608.0f;
    const float u = of_mod_small(__fmaf_rn(fh, c1, __fmul_rn(fl, c0)), p, pinv);
    return (unsigned)__float_as_int(u + 8388608.0f) & 0xFFu;
}
static __device__ __forceinline__ void of_reg_fence(int *d) {
#pragma unroll
    for (int i = 0; i < 128; i++) asm volatile("" : "+r"(d[i])::"memory");
}
#endif

extern __shared__ unsigned char of_smem_raw[];

#if S9_ON
/* the rank of this block in its cluster */
static __device__ __forceinline__ uint32_t of_cta_rank(void) {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
static __device__ __forceinline__ void of_cluster_sync(void) {
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
/* one arrival on the mbarrier at shared::cluster address bar (another
 * block's of the cluster), with the default (.release.cta) semantics as
 * CUTLASS's ClusterBarrier::arrive: the stage's reads are wgmma's, complete
 * at the wgmma wait before it */
static __device__ __forceinline__ void of_arrive_cluster(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(bar) : "memory");
}
/* 3-D TMA load of one box into the same offset of every block of mask,
 * completing on the mbarrier at bar's offset in each */
static __device__ __forceinline__ void tma_load_3d_mc(uint32_t dst, const CUtensorMap *map, int c0,
                                                      int c1, int c2, uint32_t bar,
                                                      uint16_t mask) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;" ::"r"(dst),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(bar), "h"(mask)
                 : "memory");
}
#endif

/* CL = 1: one block per tile. CL = 2: clusters of two blocks along m (tiles
 * m0, m0 + 128 of the same n0): each loads its own A tile and one half of
 * the shared B tile (128 rows) into both blocks (TMA multicast), so that
 * every block reads 32 KB per stage from L2 instead of 48; a stage is free
 * again when the consumers of both blocks have released it (16 arrivals on
 * each block's empty barrier). */
template <int CL>
static __device__ __forceinline__ void of_body(const CUtensorMap *tA, const CUtensorMap *tB,
                                               const of_consts &cs, int mbp, int nbp, int kp,
                                               unsigned char *__restrict__ Q) {
#if S9_ON
    if (!s9_dsmem_ok(OF_SMEM)) return;
    const int tid = threadIdx.x, wg = tid >> 7;
    const int l = blockIdx.y;
    /* grouped rasterisation of the 128 x 256 tiles of modulus l (with
     * clusters, tile rows padded to an even count: consecutive blocks pair
     * up on one B panel) */
    const int tiles_m = (mbp + OF_BM - 1) / OF_BM + (CL == 2 ? ((mbp + OF_BM - 1) / OF_BM) & 1 : 0);
    const int tiles_n = (nbp + OF_BN - 1) / OF_BN;
    const int pid = blockIdx.x, width = OF_GROUP * tiles_n, group = pid / width;
    const int first_m = group * OF_GROUP, gsz = min(tiles_m - first_m, OF_GROUP);
    const int m0 = (first_m + (pid % width) % gsz) * OF_BM;
    const int n0 = ((pid % width) / gsz) * OF_BN;
    const int KT = (kp + OF_KB - 1) / OF_KB;
    const uint32_t rank = CL == 2 ? of_cta_rank() : 0;

    const uint32_t raw_s = s9_smem_u32(of_smem_raw);
    const uint32_t base_s = (raw_s + 1023u) & ~1023u;
    unsigned char *base_g = of_smem_raw + (base_s - raw_s);
    const uint32_t bar_s = base_s + (uint32_t)OF_BAR_OFF;
#define FULL(i) (bar_s + 8u * (uint32_t)(i))
#define EMPTY(i) (bar_s + 8u * (uint32_t)(OF_STAGES + (i)))
    if (tid == 0) {
        for (int i = 0; i < OF_STAGES; i++) {
            mbar_init(FULL(i), 1);
            mbar_init(EMPTY(i), 8 * CL); /* one arrival per consumer warp of the cluster */
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        fence_async_smem();
    }
    if (CL == 2) of_cluster_sync(); /* the peer's barriers exist before any remote use */
    else __syncthreads();

    if (wg == 0) {
        /* ---------------------------------------------- producer */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (tid == 0) {
            for (int kt = 0; kt < KT; kt++) {
                const int s = kt % OF_STAGES;
                if (kt >= OF_STAGES) mbar_wait(EMPTY(s), (uint32_t)(((kt / OF_STAGES) & 1) ^ 1));
                const uint32_t dst = base_s + (uint32_t)(s * OF_STAGE);
                mbar_expect_tx(FULL(s), (uint32_t)OF_STAGE);
                tma_load_3d(dst, tA, kt * OF_KB, m0, l, FULL(s));
                if (CL == 2)
                    tma_load_3d_mc(dst + OF_A_BYTES + rank * (OF_B_BYTES / 2), tB, kt * OF_KB,
                                   n0 + (int)rank * (OF_BN / 2), l, FULL(s), (uint16_t)3);
                else tma_load_3d(dst + OF_A_BYTES, tB, kt * OF_KB, n0, l, FULL(s));
            }
        }
    } else {
        /* ---------------------------------------------- consumers */
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        const int cw = wg - 1; /* rows 64 cw .. 64 cw + 63 of the tile */
        /* the empty barriers of this block and (CL = 2) of its peer */
        const uint32_t e_peer = CL == 2 ? s9_mapa(EMPTY(0), rank ^ 1u) : 0u;
        /* not zeroed: the first wgmma (scale-d 0) does that */
        int acc[128];
        for (int kt = 0; kt < KT; kt++) {
            const int s = kt % OF_STAGES;
            mbar_wait(FULL(s), (uint32_t)((kt / OF_STAGES) & 1));
            const uint32_t cA = base_s + (uint32_t)(s * OF_STAGE + cw * 64 * OF_KB);
            const uint32_t cB = base_s + (uint32_t)(s * OF_STAGE + OF_A_BYTES);
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < 4; ks++)
                OF_WGMMA(acc, wg_desc(cA + 32 * ks, 128), wg_desc(cB + 32 * ks, 128),
                         (kt > 0 || ks > 0) ? 1 : 0);
            wgmma_commit();
            /* k-tile kt - 1 is done: its stage goes back to the producer(s),
             * where one will load k-tile kt - 1 + OF_STAGES (no arrival
             * after the last wait on it: a block may then have exited) */
            wgmma_wait1();
            if (kt > 0 && kt - 1 + OF_STAGES < KT) {
                __syncwarp();
                if ((tid & 31) == 0) {
                    const int sp = (kt - 1) % OF_STAGES;
                    mbar_arrive(EMPTY(sp));
                    if (CL == 2) of_arrive_cluster(e_peer + 8u * (uint32_t)sp);
                }
            }
        }
        wgmma_wait0();
        of_reg_fence(acc);

        /* ---------------------------------------------- epilogue */
        const float p = cs.p[l], pinv = cs.pinv[l], c0 = cs.c0[l], c1 = cs.c1[l];
        /* both consumers are past their last wgmma, and every copy into
         * this block has landed (each was waited for): the ring is free */
        asm volatile("bar.sync 1, 256;" ::: "memory");
        unsigned char *sq = base_g + cw * (OF_BN * OF_QCOL);
        const int lane = tid & 31, w = (tid >> 5) & 3;
        const int r0 = 16 * w + (lane >> 2);
#pragma unroll
        for (int i = 0; i < 32; i++)
#pragma unroll
            for (int h = 0; h < 2; h++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const int j = 8 * i + 2 * (lane & 3) + e, x = 4 * i + 2 * h + e;
                    sq[j * OF_QCOL + r0 + 8 * h] = (unsigned char)of_residue(acc[x], p, pinv, c0, c1);
                }
        if (cw == 0) asm volatile("bar.sync 2, 128;" ::: "memory");
        else asm volatile("bar.sync 3, 128;" ::: "memory");
        const int t = tid & 127;
        const long long colbase = (long long)l * nbp + n0;
#pragma unroll
        for (int u = 0; u < 8; u++) {
            const int c = t + 128 * u, j = c >> 2, part = c & 3;
            const int gi = m0 + 64 * cw + 16 * part;
            if (n0 + j < nbp && gi < mbp) {
                const uint4 v = *(const uint4 *)(sq + j * OF_QCOL + 16 * part);
                *(uint4 *)(Q + (colbase + j) * (long long)mbp + gi) = v;
            }
        }
    }
#undef FULL
#undef EMPTY
#else
    (void)tA, (void)tB, (void)cs, (void)mbp, (void)nbp, (void)kp, (void)Q;
#endif
}

static __global__ void __launch_bounds__(OF_THREADS, 1)
    tn_oz2_fused_kernel(const __grid_constant__ CUtensorMap tA, const __grid_constant__ CUtensorMap tB,
                        const __grid_constant__ of_consts cs, int mbp, int nbp, int kp,
                        unsigned char *__restrict__ Q) {
    of_body<1>(&tA, &tB, cs, mbp, nbp, kp, Q);
}
static __global__ void __launch_bounds__(OF_THREADS, 1)
    tn_oz2_fused_kernel_c2(const __grid_constant__ CUtensorMap tA,
                           const __grid_constant__ CUtensorMap tB,
                           const __grid_constant__ of_consts cs, int mbp, int nbp, int kp,
                           unsigned char *__restrict__ Q) {
    of_body<2>(&tA, &tB, cs, mbp, nbp, kp, Q);
}

/* ------------------------------------------------------- host side */
extern "C" int tn_oz2_fused_available(void) {
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, (const void *)tn_oz2_fused_kernel) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    /* the sm_90a cubin only (a PTX JIT or the sm_80 cubin has an empty body) */
    if (attr.binaryVersion != 90) return 0;
    if (cudaFuncGetAttributes(&attr, (const void *)tn_oz2_fused_kernel_c2) != cudaSuccess ||
        attr.binaryVersion != 90) {
        cudaGetLastError();
        return 0;
    }
    return s9_encoder() != NULL;
}

extern "C" size_t tn_oz2_fused_smem(void) { return (size_t)OF_SMEM; }

/* a 3-D tensor map of nmod blocks of rows x kp int8 (k contiguous), box
 * OF_KB x box_rows x 1, 128-byte swizzle */
static int of_map(CUtensorMap *map, s9_encode_fn enc, const void *X, int64_t kp, int64_t rows,
                  int nmod, int box_rows) {
    cuuint64_t dim[3] = {(cuuint64_t)kp, (cuuint64_t)rows, (cuuint64_t)nmod};
    cuuint64_t stride[2] = {(cuuint64_t)kp, (cuuint64_t)kp * (cuuint64_t)rows};
    cuuint32_t box[3] = {(cuuint32_t)OF_KB, (cuuint32_t)box_rows, 1};
    cuuint32_t estr[3] = {1, 1, 1};
    CUresult r = enc(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 3, (void *)X, dim, stride, box, estr,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? 0 : -1;
}

/* 1 where tn_oz2_fused can run this shape (the device aside) */
extern "C" int tn_oz2_fused_fits(int nmod, int64_t mbp, int64_t nbp, int64_t kp) {
    if (nmod < 1 || nmod > TN_OZ2_MAXN || mbp <= 0 || nbp <= 0 || kp <= 0) return 0;
    if (mbp % 32 || nbp % 32 || kp % 32 || kp > TN_OZ2_KBLOCK) return 0;
    if (mbp > 0x7fffffffLL || nbp > 0x7fffffffLL) return 0;
    const int64_t tiles = ((mbp + OF_BM - 1) / OF_BM) * ((nbp + OF_BN - 1) / OF_BN);
    return tiles <= 0x7fffffffLL;
}

/* Q[(l nbp + j) mbp + i] = (qinv[l] sum_kk RA[(l mbp + i) kp + kk] RB[(l nbp + j) kp + kk])
 * mod mod[l] for l < nmod, i < mbp, j < nbp. RA, RB, Q 16-byte aligned.
 * cluster 2: the kernel in clusters of two blocks sharing the B tiles
 * (multicast), 1: one block per tile. cudaErrorNotSupported (nothing
 * queued) where it cannot run. */
extern "C" int tn_oz2_fused(const signed char *RA, const signed char *RB, int nmod, int64_t mbp,
                            int64_t nbp, int64_t kp, const int *mod, const int *qinv,
                            unsigned char *Q, int cluster, size_t smem_limit, cudaStream_t st) {
    if (!tn_oz2_fused_fits(nmod, mbp, nbp, kp) || (size_t)OF_SMEM > smem_limit ||
        ((uintptr_t)RA & 15u) || ((uintptr_t)RB & 15u) || ((uintptr_t)Q & 15u) ||
        (cluster != 1 && cluster != 2) || !tn_oz2_fused_available())
        return (int)cudaErrorNotSupported;
    of_consts cs;
    for (int l = 0; l < TN_OZ2_MAXN; l++) {
        const int p = l < nmod ? mod[l] : 1, q = l < nmod ? qinv[l] : 0;
        if (l < nmod && (p < 2 || p > 256)) return (int)cudaErrorNotSupported;
        /* as tn_oz2_modp: c0 = q, c1 = q 2^16 mod p, each in (-p/2, p/2] */
        int r0 = q % p, r1 = (int)(((long long)q * 65536) % p);
        if (r0 > p / 2) r0 -= p;
        if (r1 > p / 2) r1 -= p;
        cs.p[l] = (float)p, cs.pinv[l] = 1.0f / (float)p, cs.c0[l] = (float)r0, cs.c1[l] = (float)r1;
    }
    s9_encode_fn enc = s9_encoder();
    CUtensorMap mA, mB;
    if (of_map(&mA, enc, RA, kp, mbp, nmod, OF_BM) ||
        of_map(&mB, enc, RB, kp, nbp, nmod, cluster == 2 ? OF_BN / 2 : OF_BN))
        return (int)cudaErrorNotSupported;
    const void *kern = cluster == 2 ? (const void *)tn_oz2_fused_kernel_c2
                                    : (const void *)tn_oz2_fused_kernel;
    cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, OF_SMEM);
    if (e != cudaSuccess) return (int)e;
    int64_t tm = (mbp + OF_BM - 1) / OF_BM;
    if (cluster == 2) tm += tm & 1; /* pairs of tile rows */
    const int64_t tiles = tm * ((nbp + OF_BN - 1) / OF_BN);
    if (tiles > 0x7fffffffLL) return (int)cudaErrorNotSupported;
    if (cluster == 1) {
        tn_oz2_fused_kernel<<<dim3((unsigned)tiles, (unsigned)nmod), OF_THREADS, OF_SMEM, st>>>(
            mA, mB, cs, (int)mbp, (int)nbp, (int)kp, Q);
        return (int)cudaGetLastError();
    }
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = 2;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3((unsigned)tiles, (unsigned)nmod);
    cfg.blockDim = dim3(OF_THREADS);
    cfg.dynamicSmemBytes = OF_SMEM;
    cfg.stream = st;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    e = cudaLaunchKernelEx(&cfg, tn_oz2_fused_kernel_c2, mA, mB, cs, (int)mbp, (int)nbp, (int)kp, Q);
    return (int)e;
}
