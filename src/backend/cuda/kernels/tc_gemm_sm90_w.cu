/* Error-corrected SGEMM on Hopper (sm_90a), wide tiles:
 * SHGEMM_FP16 and TCEC_FP16 with 64 x 2 NC output tiles, NC = 128, 136 or
 * 144 columns per consumer (whichever pads n least), for products with
 * a few hundred columns (such as 16384 x 512 x 16384, or the randomized
 * SVD's 16384 x 266 x 16384 on one 272-column tile).
 * The default where n is 192 .. 512 or 257 .. 288 (tn_cu_sm90_w_wanted).
 *
 * Why: at such shapes the pre-split path (tc_gemm_sm90_ps.cu) spends a
 * third of its time in the pass over op(A) (read 1 GiB, write 1 GiB), and
 * the register-A kernels (tc_gemm_sm90.cu) split each element of A n / 128
 * times inside the consumers, between their wgmma groups. Here a tile
 * spans 256 columns or more, so each element of A is split at most n / 256 times, by
 * warpgroups that do nothing else, and there is no pass:
 *   split warpgroups (NSW = 2, setmaxnreg 48), warpgroup w taking k-tiles
 *     kt = w, w + NSW, ...: thread 0
 *     of each issues the TMA copies of its FP32 A tiles (64 x 64) into a
 *     raw ring; all 128 threads split them (tn_split2_f16, bit-identical to
 *     tcnla_split) into Ahi / Alo tiles (64 x 64 FP16, the wgmma K-major
 *     layout with 128-byte swizzle) of a second ring and, when asked, fold
 *     op(A)'s check on the way (below);
 *   two consumer warpgroups (setmaxnreg 208), one per
 *     NC columns of the tile, both on the same 64 rows: the B tiles (FP16,
 *     K-contiguous: SHGEMM's B as given, TCEC's Bhi / Blo from the
 *     pre-split pass over B) come by TMA straight into a B ring in the
 *     wgmma layout, issued by the first consumer thread as the consumers
 *     release each stage. Per 64-deep k-tile the products of the other
 *     kernels in the same order (hi*hi in a fresh accumulator per chunk of
 *     64 or 128 products, added with RN at its end; Alo*Bhi, and Ahi*Blo
 *     for TCEC, in the correction accumulator): the same bits.
 *   Where op(A) needs no check (vmx NULL, no fold) at NC = 136, the lean
 *   kernel: split warpgroups at 40 registers, consumers at 216 with the
 *   fresh hi*hi accumulator over all NC columns (below).
 * The check (vmx / verr, NULL when op(A) is trusted): each split thread
 * takes, per k-tile, the extremes of its 32 |fp16(x)| on the FP16 his it
 * has just made (two at a time, DPX min / max of u16 pairs). A fast kind
 * (tn_rchk_fast) needs no error for an x in FP16's normal range, and for
 * a nonzero |x| < 2^-13 its error is at most 2^-36 (halfhalf): where all
 * |fp16(x)| lie below 65504, the tile adds a lower bound of its largest
 * |x| to the row's maximum and whether it holds a nonzero |fp16(x)| of at
 * most 2^-14 (the row's error is then taken as 2^-36). Only a tile whose
 * fp16(x) are all 0 is read again. Other tiles (a huge or not finite
 * element, or a kind that is not fast) are read again and checked element
 * by element (tn_check_elem), as tn_cu_check_f32 does, into the per-row
 * maxima of tn_cu_check_begin / _end. The flags are those of
 * tn_cu_check_f32, or stricter where the bounds make the difference (a
 * row whose largest |x| is below about 2^-15 and that holds a small
 * element). Why on the his: the exact error in FP64 of every element
 * outside FP16's normal range (one in 2^14 of uniform(-1, 1) data, which
 * puts one in about a fifth of a warpgroup's k-tiles) costs 240 us of
 * 1230-1330 at 16384 x 512 x 16384 on an H200, this check 30-50. The
 * caller (gemm_wide in gemm_cuda.c) reads the flags after the product,
 * which goes to P until then (s9_epilogue's split-K form with one slice)
 * unless both operands are trusted; a flag sends the call down the
 * checked path.
 * Tails in m, n and k come from TMA's zero fill. */
#include "backend/cuda/kernels/sm90_common.cuh"
#include "backend/cuda/kernels/split.cuh"
#include "backend/cuda/tn_cuda.h"
#include "backend/cuda/kernels/tn_sm90.h"

#include <cuda.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* wgmma m64nNk16, FP16 operands from shared memory (descriptors da, db),
 * FP32 accumulator d of N / 2 registers per thread; scd = 0 overwrites d */
#define W_WGMMA_N64(d, da, db, scd)                                                           \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                  \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "                        \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, " \
                 "%32, %33, p, 1, 1, 0, 0;\n}\n"                                               \
                 : S9_ACC32(d) \
                 : "l"(da), "l"(db), "r"(scd))
#define W_WGMMA_N72(d, da, db, scd)                                                           \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %38, 0;\n"                                  \
                 "wgmma.mma_async.sync.aligned.m64n72k16.f32.f16.f16 "                        \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35}, " \
                 "%36, %37, p, 1, 1, 0, 0;\n}\n"                                               \
                 : S9_ACC32(d), "+f"((d)[32]), "+f"((d)[33]), "+f"((d)[34]), "+f"((d)[35]) \
                 : "l"(da), "l"(db), "r"(scd))
#define W_WGMMA_N136(d, da, db, scd)                                                           \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %70, 0;\n"                                  \
                 "wgmma.mma_async.sync.aligned.m64n136k16.f32.f16.f16 "                        \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67}, " \
                 "%68, %69, p, 1, 1, 0, 0;\n}\n"                                               \
                 : S9_ACC64(d), "+f"((d)[64]), "+f"((d)[65]), "+f"((d)[66]), "+f"((d)[67]) \
                 : "l"(da), "l"(db), "r"(scd))
#define W_WGMMA_N144(d, da, db, scd)                                                           \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %74, 0;\n"                                  \
                 "wgmma.mma_async.sync.aligned.m64n144k16.f32.f16.f16 "                        \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71}, " \
                 "%72, %73, p, 1, 1, 0, 0;\n}\n"                                               \
                 : S9_ACC64(d), "+f"((d)[64]), "+f"((d)[65]), "+f"((d)[66]), "+f"((d)[67]), \
                   "+f"((d)[68]), "+f"((d)[69]), "+f"((d)[70]), "+f"((d)[71]) \
                 : "l"(da), "l"(db), "r"(scd))

#define W_BM 64
#define W_BK 64                      /* k-tile: 128 bytes of FP16 per row */
#define W_RAW (W_BM * W_BK * 4)      /* FP32 A tile, 16 KB */
#define W_CT (W_BM * W_BK * 2)       /* Ahi or Alo tile, 8 KB */

/* ---------------------------------------------------- configuration */
/* A tile spans 2 NC columns, NC per consumer warpgroup: 128, or 136 / 144
 * so that one 64 x 272 / 64 x 288 tile covers n = k + p (+ probes) of the
 * randomized SVD, where 128 would run two tiles with most of the second
 * empty. Bhi or Blo tile: 2 NC rows of 128 bytes. */
static __host__ __device__ __forceinline__ int w_bt(int nc) { return 2 * nc * W_BK * 2; }
/* ring depths: NC = 128: SHGEMM 4 raw + 4 split + 3 B stages (64 + 64 +
 * 96 KB), TCEC 4 + 2 + 2 (64 + 32 + 128 KB); NC = 136 / 144: SHGEMM 4 + 3
 * + 3 (64 + 48 + 102 / 108 KB), TCEC 2 + 2 + 2 (32 + 32 + 136 / 144 KB);
 * NRAW even (each of the NSW = 2 split warpgroups keeps its own raw
 * stages) */
static __host__ __device__ __forceinline__ int w_nraw(int mode, int nc) {
    return nc > 128 && !s9_sh(mode) ? 2 : 4;
}
static __host__ __device__ __forceinline__ int w_nconv(int mode, int nc) {
    return !s9_sh(mode) ? 2 : nc > 128 ? 3 : 4;
}
static __host__ __device__ __forceinline__ int w_nb(int mode, int nc) {
    (void)nc;
    return mode == TN_KMODE_SHGEMM_F16 ? 3 : 2;
}
static __host__ __device__ __forceinline__ int w_bstage(int mode, int nc) {
    return (s9_sh(mode) ? 1 : 2) * w_bt(nc);
}
static __host__ __device__ __forceinline__ int w_bar_off(int mode, int nc) {
    return w_nraw(mode, nc) * W_RAW + w_nconv(mode, nc) * 2 * W_CT +
           w_nb(mode, nc) * w_bstage(mode, nc);
}
static __host__ __device__ __forceinline__ int w_smem(int mode, int nc) {
    return w_bar_off(mode, nc) + 512 + 1024;
}

#if S9_ON
/* 8 consecutive k values (8q .. 8q+7, q < 8) of row r (< bm, the tile's
 * rows: 64, or 128 in the FP16 kernel's tall tiles) of a raw FP32 A tile:
 * K-major (two TMA boxes of 32 k, 128-byte swizzle, rows of 32 floats,
 * 128 bm bytes apart) or MN-major (no swizzle, [64 k][bm m]). */
static __device__ __forceinline__ void w_read8(const unsigned char *st, int kmaj, int r, int q,
                                               float *x, const int bm = W_BM) {
    if (kmaj) {
        st += (q >> 2) * (bm * 128);
        q &= 3;
        float4 v0 = *(const float4 *)(st + r * 128 + (((2 * q) ^ (r & 7)) << 4));
        float4 v1 = *(const float4 *)(st + r * 128 + (((2 * q + 1) ^ (r & 7)) << 4));
        x[0] = v0.x; x[1] = v0.y; x[2] = v0.z; x[3] = v0.w;
        x[4] = v1.x; x[5] = v1.y; x[6] = v1.z; x[7] = v1.w;
    } else {
        const float *s = (const float *)st;
#pragma unroll
        for (int e = 0; e < 8; e++) x[e] = s[(8 * q + e) * bm + r];
    }
}

/* the compiler's view of wgmma accumulator registers: changed here */
template <int R>
static __device__ __forceinline__ void w_reg_fence(float *d) {
#pragma unroll
    for (int i = 0; i < R; i++) asm volatile("" : "+f"(d[i])::"memory");
}

/* Output tile of block pid (tiles of 64 rows x bn columns): groups of 8
 * row tiles run through all their column tiles, so that the n / bn blocks
 * that read the same rows of A run close together (A from L2 the second
 * time). */
static __device__ __forceinline__ void w_tile_of(int pid, int M, int N, int bn, int *m0,
                                                 int *n0) {
    const int tiles_m = (M + W_BM - 1) / W_BM, tiles_n = (N + bn - 1) / bn;
    const int width = 8 * tiles_n, group = pid / width;
    const int first_m = group * 8, gsz = min(tiles_m - first_m, 8);
    *m0 = (first_m + (pid % width) % gsz) * W_BM;
    *n0 = ((pid % width) / gsz) * bn;
}
#endif

/* Both kernels' shared memory, from the dynamic array raw aligned to 1024
 * bytes: [NRAW raw A stages of RAWB bytes][converted A stages, conv_bytes]
 * [B stages][barriers at bar_off] (NRAW, RAWB in scope): base / base_s,
 * conv / conv_s, b_s, bar_s as locals of the body. */
#define W_RINGS(raw, conv_bytes, bar_off)                                                     \
    const uint32_t raw_s = s9_smem_u32(raw);                                                   \
    const uint32_t base_s = (raw_s + 1023u) & ~1023u;                                          \
    unsigned char *base = (raw) + (base_s - raw_s);                                            \
    unsigned char *conv = base + NRAW * RAWB;                                                  \
    const uint32_t conv_s = base_s + NRAW * RAWB;                                              \
    const uint32_t b_s = conv_s + (uint32_t)(conv_bytes);                                      \
    const uint32_t bar_s = base_s + (uint32_t)(bar_off)

/* Both kernels' rings (w_body, h_body; bar_s, NRAW, NCONV, NB in scope):
 * their mbarriers, initialized by thread 0 (the arrival counts: one TMA
 * transaction, a converter warpgroup, both consumer warpgroups, one
 * arrival per consumer warp), and the TMA of op(A)'s FP32 tile of k-tile t
 * into raw stage s (base_s, tmA, ak, m0 in scope). */
#define RAW_FULL(i) (bar_s + 8u * (uint32_t)(i))
#define CONV_FULL(i) (bar_s + 8u * (uint32_t)(NRAW + (i)))
#define CONV_EMPTY(i) (bar_s + 8u * (uint32_t)(NRAW + NCONV + (i)))
#define B_FULL(i) (bar_s + 8u * (uint32_t)(NRAW + 2 * NCONV + (i)))
#define B_EMPTY(i) (bar_s + 8u * (uint32_t)(NRAW + 2 * NCONV + NB + (i)))
#define W_INIT_BARS()                                                                          \
    do {                                                                                       \
        if (tid == 0) {                                                                        \
            for (int i = 0; i < NRAW; i++) mbar_init(RAW_FULL(i), 1);                          \
            for (int i = 0; i < NCONV; i++) {                                                  \
                mbar_init(CONV_FULL(i), 128);                                                  \
                mbar_init(CONV_EMPTY(i), 256);                                                 \
            }                                                                                  \
            for (int i = 0; i < NB; i++) {                                                     \
                mbar_init(B_FULL(i), 1);                                                       \
                mbar_init(B_EMPTY(i), 8);                                                      \
            }                                                                                  \
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");                 \
            fence_async_smem();                                                                \
        }                                                                                      \
        __syncthreads();                                                                       \
    } while (0)
/* the FP32 A tile (ABM rows, RAWB bytes) of k-tile t into raw stage s */
#define W_ISSUE_A(t, s)                                                                        \
    do {                                                                                       \
        const uint32_t dst_ = base_s + (uint32_t)((s) * RAWB);                                 \
        mbar_expect_tx(RAW_FULL(s), (uint32_t)RAWB);                                           \
        if (ak) {                                                                              \
            tma_load_2d(dst_, tmA, (t) * W_BK, m0, RAW_FULL(s));                               \
            tma_load_2d(dst_ + ABM * 128, tmA, (t) * W_BK + 32, m0, RAW_FULL(s));              \
        } else {                                                                               \
            tma_load_2d(dst_, tmA, m0, (t) * W_BK, RAW_FULL(s));                               \
        }                                                                                      \
    } while (0)

/* tn_cu_trust_check's bounded pass (util.cu) folded into the FP16 kernel
 * and the SHGEMM kernel (fl non-NULL): the converter (split) warpgroups,
 * which read every element of op(A) once per column tile, keep the magnitudes' extremes and, per
 * 64-deep k-tile, which columns of op(A) hold an element 0 < |x| < thrmax
 * (tiny) and which one of at least thrmax (big), as bit masks (bit 8 j + e
 * of half h: column 8 (h + 2 j) + e of the k-tile, the columns a converter
 * warp holds), OR-ed into cbits. The flags are the bounded pass's:
 * fl[0] NaN / Inf, fl[1 + j] some 0 < |x| < thr[j], fl[6] some |x| >=
 * 65504, fl[7] a row (here) or a column (fold_end_kernel: tiny and not
 * big) of op(A) whose largest |x| lies in (0, thrmax). Its cost (H200,
 * 16384^2 x 266, 6 % of the elements below the bound): 0.42 against 0.30
 * ms for the product alone; three float compares per element (|x| as an
 * operand modifier) instead of the integer extremes took the same time,
 * the column masks' atomics about 30 us of it, and the check moved after
 * the FP16 stage is handed over (the raw stage read again, its refill
 * later) 0.49 ms. */
typedef struct {
    int n;           /* kinds */
    uint32_t thr[4]; /* the bits of each kind's 2^tol E */
    uint32_t thrmax; /* and of the largest */
    int *fl;         /* NULL: no check */
    uint32_t *cbits; /* tiny masks [0, 2 KT), big masks [2 KT, 4 KT) */
} w_fold_t;

static __global__ void fold_end_kernel(const uint32_t *__restrict__ cbits, int words,
                                         int *__restrict__ fl) {
    int bad = 0;
    for (int w = blockIdx.x * blockDim.x + threadIdx.x; w < words; w += gridDim.x * blockDim.x)
        bad |= (cbits[w] & ~cbits[words + w]) != 0u;
    if (__any_sync(0xffffffffu, bad) && (threadIdx.x & 31) == 0) atomicOr(&fl[7], 1);
}


#if S9_ON
/* The fold of 8 elements x of k 8q .. (q = half + 2 j) into the thread's
 * magnitude extremes (hi, and lo as |x| - 1) and the k-tile's column masks */
static __device__ __forceinline__ void fold8(const w_fold_t &fd, const float *x, int j,
                                             unsigned &hi, unsigned &lo, unsigned &tiny,
                                             unsigned &big) {
    const unsigned thm1 = fd.thrmax - 1u;
#pragma unroll
    for (int e = 0; e < 8; e++) {
        const unsigned u = __float_as_uint(x[e]) & 0x7fffffffu;
        hi = max(hi, u), lo = min(lo, u - 1u);
        tiny |= (unsigned)(u - 1u < thm1) << (8 * j + e);
        big |= (unsigned)(u > thm1) << (8 * j + e);
    }
}

/* k-tile kt's column masks of a warp (half: the thread's t >> 6) into cbits */
static __device__ __forceinline__ void fold_ktile(const w_fold_t &fd, int kt, int KT, int half,
                                                  unsigned tiny, unsigned big) {
    tiny = __reduce_or_sync(0xffffffffu, tiny);
    big = __reduce_or_sync(0xffffffffu, big);
    if ((threadIdx.x & 31) == 0) {
        if (tiny) atomicOr(&fd.cbits[2 * kt + half], tiny);
        if (big) atomicOr(&fd.cbits[2 * KT + 2 * kt + half], big);
    }
}

/* The flags from the 256 converter threads (threads 0 .. 255, named
 * barrier 3): the thread's extremes, and each row's largest |x| through
 * rowmax (shared, bm rows, zeroed before the ring's barriers; rr: the
 * thread's row) */
static __device__ __forceinline__ void fold_finish(const w_fold_t &fd, unsigned hi, unsigned lo,
                                                   int rr, uint32_t *rowmax, const int bm = W_BM) {
    const int tid = threadIdx.x;
    unsigned bad = (unsigned)(hi >= 0x7f800000u) | (unsigned)(hi >= 0x477fe000u) << 6;
    for (int j = 0; j < fd.n; j++) bad |= (unsigned)(lo < fd.thr[j] - 1u) << (1 + j);
    atomicMax(&rowmax[rr], hi); /* per row: both warpgroups (and both halves where bm = 64) */
    asm volatile("bar.sync 3, 256;" ::: "memory");
    if (tid < bm) bad |= (unsigned)(rowmax[tid] - 1u < fd.thrmax - 1u) << 7;
    bad = __reduce_or_sync(0xffffffffu, bad);
    if ((tid & 31) == 0 && bad)
        for (int i = 0; i < 8; i++)
            if (bad & (1u << i)) atomicOr(&fd.fl[i], 1);
}
#endif

extern __shared__ unsigned char w_smem_raw[];

template <int MODE, int NSW, int NC, int FOLD, int LEAN>
static __device__ __forceinline__ void w_body(const CUtensorMap *tmA, const CUtensorMap *tmBh,
                                              const CUtensorMap *tmBl, int ak, int M, int N,
                                              int K, float alpha, float beta,
                                              float *__restrict__ C, long long ldc,
                                              float *__restrict__ P, int chk,
                                              uint32_t *__restrict__ vmx,
                                              double *__restrict__ verr, int kind, int fast,
                                              const w_fold_t &fd) {
#if S9_ON
    const int SH = s9_sh(MODE);
    const int NRAW = w_nraw(MODE, NC), NCONV = w_nconv(MODE, NC), NB = w_nb(MODE, NC);
    const int BST = w_bstage(MODE, NC), BT = w_bt(NC);
    const int CHK = chk, RAWB = W_RAW, ABM = W_BM;
    if (!s9_dsmem_ok(w_smem(MODE, NC))) return;
    const int tid = threadIdx.x, wg = tid >> 7;

    int m0, n0;
    w_tile_of(blockIdx.x, M, N, 2 * NC, &m0, &n0);
    const int KT = (K + W_BK - 1) / W_BK;

    W_RINGS(w_smem_raw, NCONV * 2 * W_CT, w_bar_off(MODE, NC)); /* Ahi, Alo stages */
    __shared__ uint32_t rowmax[W_BM]; /* fd.fl: the rows' largest |x| (bits) */
    if (tid < W_BM) rowmax[tid] = 0u;
    W_INIT_BARS();

/* the B tile(s) of k-tile t into B stage s (boxes of NC rows, one per
 * consumer) */
#define W_ISSUE_B(t, s)                                                                        \
    do {                                                                                       \
        const uint32_t dst_ = b_s + (uint32_t)((s) * BST);                                     \
        mbar_expect_tx(B_FULL(s), (uint32_t)BST);                                              \
        tma_load_2d(dst_, tmBh, (t) * W_BK, n0, B_FULL(s));                                    \
        tma_load_2d(dst_ + NC * 128, tmBh, (t) * W_BK, n0 + NC, B_FULL(s));                    \
        if (!SH) {                                                                             \
            tma_load_2d(dst_ + BT, tmBl, (t) * W_BK, n0, B_FULL(s));                           \
            tma_load_2d(dst_ + BT + NC * 128, tmBl, (t) * W_BK, n0 + NC, B_FULL(s));           \
        }                                                                                      \
    } while (0)

    if (wg < NSW) {
        /* ------------------------------------------ split warpgroups */
        if (LEAN) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        else asm volatile("setmaxnreg.dec.sync.aligned.u32 48;");
        /* (the host picks the lean kernel only where vmx is NULL: without
         * the check's code the registers fit 40) */
        if (LEAN) vmx = NULL;
        const int t = tid & 127, rr = t & 63; /* this thread's row of the tile */
        /* the check (vmx): on the magnitude bits |h| of the FP16 his, two
         * per register, this k-tile's largest |h| and smallest |h| - 1
         * (tmax, tmin), the largest |h| of the k-tiles that passed (rmax),
         * and whether the row holds a small element */
        uint32_t rmax = 0, small = 0;
        unsigned fhi = 0u, flo = 0xffffffffu; /* fd.fl: the thread's extremes (fold8) */
        if (t == 0)
            for (int kt = wg; kt < NRAW && kt < KT; kt += NSW) W_ISSUE_A(kt, kt);
        for (int kt = wg; kt < KT; kt += NSW) {
            const int r = kt % NRAW, s = kt % NCONV;
            mbar_wait(RAW_FULL(r), (uint32_t)((kt / NRAW) & 1));
            mbar_wait(CONV_EMPTY(s), (uint32_t)(((kt / NCONV) & 1) ^ 1));
            const unsigned char *ra = base + r * RAWB;
            unsigned char *hi = conv + s * 2 * W_CT, *lo = hi + W_CT;
            uint32_t tmax = 0, tmin = 0xffffffffu;
            unsigned tiny = 0u, big = 0u; /* fd.fl: this k-tile's column masks */
#pragma unroll 2
            for (int j = 0; j < 4; j++) {
                const int q = (t >> 6) + 2 * j; /* k 8q .. 8q + 7 */
                float x[8];
                w_read8(ra, ak, rr, q, x);
                if (FOLD && fd.fl) fold8(fd, x, j, fhi, flo, tiny, big);
                uint32_t h[4], l[4];
#pragma unroll
                for (int e = 0; e < 4; e++) tn_split2_f16(x[2 * e], x[2 * e + 1], 1, &h[e], &l[e]);
                if (vmx) {
                    const uint32_t a0 = h[0] & 0x7fff7fffu, a1 = h[1] & 0x7fff7fffu;
                    const uint32_t a2 = h[2] & 0x7fff7fffu, a3 = h[3] & 0x7fff7fffu;
                    tmax = __vimax3_u16x2(tmax, a0, a1);
                    tmax = __vimax3_u16x2(tmax, a2, a3);
                    /* |h| - 1 per u16 (a 0 wraps to the top) */
                    tmin = __viaddmin_u16x2(a0, 0xffffffffu, tmin);
                    tmin = __viaddmin_u16x2(a1, 0xffffffffu, tmin);
                    tmin = __viaddmin_u16x2(a2, 0xffffffffu, tmin);
                    tmin = __viaddmin_u16x2(a3, 0xffffffffu, tmin);
                }
                const int off = rr * 128 + ((q ^ (rr & 7)) << 4);
                *(uint4 *)(hi + off) = make_uint4(h[0], h[1], h[2], h[3]);
                *(uint4 *)(lo + off) = make_uint4(l[0], l[1], l[2], l[3]);
            }
            fence_async_smem(); /* generic stores -> wgmma (async proxy) reads */
            mbar_arrive(CONV_FULL(s));
            if (vmx && m0 + rr < M) {
                /* A fast kind needs no error for an x in FP16's normal
                 * range, and its error for a nonzero |x| < 2^-13 is at
                 * most 2^-36 (halfhalf; 2^-25 for a single FP16): where all
                 * 32 |fp16(x)| of the tile lie below 65504, the tile adds
                 * only a lower bound of its largest |x| to the row's
                 * maximum (rmax), and whether it holds a nonzero |fp16(x)|
                 * of at most 2^-14 (small). A tile whose fp16(x) are all 0
                 * is read again from the raw stage: 0 < |x| < 2^-13 there
                 * sets small too. (A nonzero x with fp16(x) = 0 in a tile
                 * with a normal fp16(x) needs nothing: its error, at most
                 * 2^-36, is within the row's bound.) Otherwise (a huge or
                 * not finite element, or a kind that is not fast) the
                 * elements again as tn_cu_check_f32 takes them. */
                const uint32_t hmax = max(tmax & 0xffffu, tmax >> 16);
                const uint32_t hm1 = min(tmin & 0xffffu, tmin >> 16);
                if (fast && hmax <= 0x7bfeu) {
                    rmax = max(rmax, hmax);
                    small |= hm1 < 0x0400u;
                    if (hmax == 0 && !small)
                        for (int j = 0; j < 4; j++) {
                            float x[8];
                            w_read8(ra, ak, rr, (t >> 6) + 2 * j, x);
#pragma unroll
                            for (int e = 0; e < 8; e++)
                                small |= (__float_as_uint(x[e]) & 0x7fffffffu) - 1u < 0x38ffffffu;
                        }
                } else {
                    uint32_t mx = 0;
                    double me = 0.0;
                    for (int j = 0; j < 4; j++) {
                        float x[8];
                        w_read8(ra, ak, rr, (t >> 6) + 2 * j, x);
                        for (int e = 0; e < 8; e++) {
                            if (fast && tn_f16_normal_or_zero(fabsf(x[e])))
                                mx = max(mx, __float_as_uint(x[e]) & 0x7fffffffu);
                            else
                                tn_check_elem(kind, x[e], &mx, &me);
                        }
                    }
                    if (mx) atomicMax(&vmx[m0 + rr], mx);
                    if (kind >= 0 && me != 0.0) tn_atomic_max_f64_nonneg(&verr[m0 + rr], me);
                }
            }
            /* raw stage r read by the whole warpgroup */
            asm volatile("bar.sync %0, 128;" ::"r"(1 + wg) : "memory");
            if (t == 0 && kt + NRAW < KT) W_ISSUE_A(kt + NRAW, r);
            if (FOLD && fd.fl) fold_ktile(fd, kt, KT, t >> 6, tiny, big);
        }
        if (FOLD && fd.fl) fold_finish(fd, fhi, flo, rr, rowmax);
        /* the row's largest |x| is at least |h| - ulp(h) / 2 for the
         * largest h = fp16(x) of the tiles that passed: |h| (1 - 2^-11) when
         * normal, |h| - 2^-25 below, exact in FP32. A lower bound, and the
         * small elements' error a bound: the flags are those of the exact
         * maxima, or stricter (maxima start at 0: a 0 changes nothing) */
        if (vmx && m0 + rr < M) {
            const float h = __half2float(__ushort_as_half((unsigned short)rmax));
            const float lb = h < 0x1p-14f ? __fsub_rn(h, 0x1p-25f) : __fmul_rn(h, 1.0f - 0x1p-11f);
            if (lb > 0.0f) atomicMax(&vmx[m0 + rr], __float_as_uint(lb));
            if (small)
                tn_atomic_max_f64_nonneg(&verr[m0 + rr], kind == TN_RCHK_F16 ? 0x1p-25 : 0x1p-36);
        }
    } else {
        /* ---------------------------------------------- consumers */
        /* 64 K registers: 2 x 128 x 208 + 256 x 48 (lean: 216 + 40) */
        if (LEAN) asm volatile("setmaxnreg.inc.sync.aligned.u32 216;");
        else asm volatile("setmaxnreg.inc.sync.aligned.u32 208;");
        if constexpr (NC == 128 || (LEAN && NC == 136)) {
            /* The three accumulators over all NC columns: NC = 128, and
             * the lean kernel (NC = 136, op(A) unchecked, SHGEMM or TCEC;
             * 3 NC / 2 = 204 registers of accumulators, which fit beside
             * the rest with the split warpgroups at 40), whose k-steps
             * then read Ahi once instead of once per part of the NC = 136
             * kernel below (the same products and sums per element: the
             * same bits). The corrections of a k-tile (one group, in the
             * order of the k-steps) run while the fresh accumulator is
             * added into the result. */
            const int cw = wg - NSW; /* columns n0 + NC cw .. + NC - 1 of the tile */
            const int issuer = tid == NSW * 128;
            if (issuer)
                for (int kt = 0; kt < NB && kt < KT; kt++) W_ISSUE_B(kt, kt);
            float acc[NC / 2], corr[NC / 2], tmp[NC / 2];
#pragma unroll
            for (int i = 0; i < NC / 2; i++) {
                acc[i] = 0.0f;
                corr[i] = 0.0f;
                tmp[i] = 0.0f;
            }
/* wgmma m64 x NC x k16, both operands from shared memory */
#define W_MMA(d, da, db, scd)                                                                  \
    do {                                                                                       \
        if (NC == 128) S9_WGMMA_F16(d, da, db, scd);                                           \
        else W_WGMMA_N136(d, da, db, scd);                                                     \
    } while (0)
            for (int kt = 0; kt < KT; kt++) {
                const int s = kt % NCONV, b = kt % NB;
                /* chunks of CHK 32-deep k-tiles: 2 (one k-tile here) or 4 */
                const int cfirst = CHK == 2 || (kt & 1) == 0;
                const int clast = CHK == 2 || (kt & 1) == 1 || kt == KT - 1;
                mbar_wait(CONV_FULL(s), (uint32_t)((kt / NCONV) & 1));
                mbar_wait(B_FULL(b), (uint32_t)((kt / NB) & 1));
                const uint32_t cAh = conv_s + (uint32_t)(s * 2 * W_CT), cAl = cAh + W_CT;
                const uint32_t cBh = b_s + (uint32_t)(b * BST) + (uint32_t)(cw * NC * 128);
                const uint32_t cBl = cBh + BT;
                wgmma_fence();
#pragma unroll
                for (int ks = 0; ks < 4; ks++)
                    W_MMA(tmp, wg_desc(cAh + 32 * ks, 128), wg_desc(cBh + 32 * ks, 128),
                          (ks > 0 || !cfirst) ? 1 : 0);
                wgmma_commit();
#pragma unroll
                for (int ks = 0; ks < 4; ks++) {
                    W_MMA(corr, wg_desc(cAl + 32 * ks, 128), wg_desc(cBh + 32 * ks, 128), 1);
                    if (!SH)
                        W_MMA(corr, wg_desc(cAh + 32 * ks, 128), wg_desc(cBl + 32 * ks, 128), 1);
                }
                wgmma_commit();
                /* refill the B stage of k-tile kt - 1 (released by all 8 warps) */
                if (issuer && kt > 0 && kt - 1 + NB < KT) {
                    const int tt = kt - 1, sl = tt % NB;
                    mbar_wait(B_EMPTY(sl), (uint32_t)((tt / NB) & 1));
                    W_ISSUE_B(tt + NB, sl);
                }
                wgmma_wait1();
                if (clast) {
                    w_reg_fence<NC / 2>(tmp);
#pragma unroll
                    for (int i = 0; i < NC / 2; i++) acc[i] = __fadd_rn(acc[i], tmp[i]);
                }
                wgmma_wait0();
                w_reg_fence<NC / 2>(corr);
                mbar_arrive(CONV_EMPTY(s));
                __syncwarp();
                if ((tid & 31) == 0) mbar_arrive(B_EMPTY(b));
            }
#undef W_MMA
            s9_epilogue(acc, corr, NC / 8, tid, 0, m0, n0 + NC * cw, M, N, alpha, beta, C, ldc, P);
        } else {
            /* NC = 136 / 144: the result and correction accumulators span
             * the NC columns (NC / 2 registers each); the fresh hi*hi
             * accumulator of a chunk (one 64-deep k-tile: CHK = 2) spans
             * at most 72 columns (36 registers): the first NC - 72 columns,
             * then the last 72, each part added into the result with RN
             * as it completes: the same products and sums per element as
             * above (an element's wgmma sums do not depend on N), in
             * 72 + 72 + 36 + some 30 registers instead of 3 NC / 2. */
            const int H0 = NC - 72; /* the first part's columns: 64 or 72 */
            /* TCEC: the corrections of a k-tile in two groups, the second
             * left in flight over the next k-tile's first wgmma group, so
             * that the Tensor Core has work queued while the warpgroup adds
             * hi*hi into the result (H100, 16384 x 266 x 16384, op N:
             * 821-876 against 906-912 us). SHGEMM, with half the
             * corrections, keeps one group and waits for it (split, its
             * wgmma were serialized: ptxas C7511). */
            const int PIPE = !SH;
            const int cw = wg - NSW; /* columns n0 + NC cw .. + NC - 1 of the tile */
            const int issuer = tid == NSW * 128;
            if (issuer)
                for (int kt = 0; kt < NB && kt < KT; kt++) W_ISSUE_B(kt, kt);
            float acc[NC / 2], corr[NC / 2], tmp[36];
#pragma unroll
            for (int i = 0; i < NC / 2; i++) {
                acc[i] = 0.0f;
                corr[i] = 0.0f;
            }
#pragma unroll
            for (int i = 0; i < 36; i++) tmp[i] = 0.0f;
/* the corrections of k-steps ks0 .. ks1 - 1 of the k-tile (cAh, cAl,
 * cBh, cBl in scope) as one group: dA*Bhi, and Ahi*dB for TCEC, in the
 * order of the k-steps, so each element sums the same products in the
 * same order whatever the grouping */
#define W_CORR(ks0, ks1)                                                                       \
    do {                                                                                       \
        _Pragma("unroll") for (int ks = (ks0); ks < (ks1); ks++) {                             \
            if (NC == 144) {                                                                   \
                W_WGMMA_N144(corr, wg_desc(cAl + 32 * ks, 128), wg_desc(cBh + 32 * ks, 128), 1); \
                if (!SH)                                                                       \
                    W_WGMMA_N144(corr, wg_desc(cAh + 32 * ks, 128), wg_desc(cBl + 32 * ks, 128), 1); \
            } else {                                                                           \
                W_WGMMA_N136(corr, wg_desc(cAl + 32 * ks, 128), wg_desc(cBh + 32 * ks, 128), 1); \
                if (!SH)                                                                       \
                    W_WGMMA_N136(corr, wg_desc(cAh + 32 * ks, 128), wg_desc(cBl + 32 * ks, 128), 1); \
            }                                                                                  \
        }                                                                                      \
        wgmma_commit();                                                                        \
    } while (0)
/* k-tile t's stages back to the split warpgroups and the B issuer, once
 * every wgmma that reads them has completed */
#define W_RELEASE(t)                                                                           \
    do {                                                                                       \
        mbar_arrive(CONV_EMPTY((t) % NCONV));                                                  \
        __syncwarp();                                                                          \
        if ((tid & 31) == 0) mbar_arrive(B_EMPTY((t) % NB));                                   \
    } while (0)
            for (int kt = 0; kt < KT; kt++) {
                const int s = kt % NCONV, b = kt % NB;
                mbar_wait(CONV_FULL(s), (uint32_t)((kt / NCONV) & 1));
                mbar_wait(B_FULL(b), (uint32_t)((kt / NB) & 1));
                const uint32_t cAh = conv_s + (uint32_t)(s * 2 * W_CT), cAl = cAh + W_CT;
                const uint32_t cBh = b_s + (uint32_t)(b * BST) + (uint32_t)(cw * NC * 128);
                const uint32_t cBl = cBh + BT, cBh1 = cBh + H0 * 128;
                wgmma_fence();
#pragma unroll
                for (int ks = 0; ks < 4; ks++) {
                    if (H0 == 72)
                        W_WGMMA_N72(tmp, wg_desc(cAh + 32 * ks, 128), wg_desc(cBh + 32 * ks, 128),
                                    ks > 0 ? 1 : 0);
                    else
                        W_WGMMA_N64(tmp, wg_desc(cAh + 32 * ks, 128), wg_desc(cBh + 32 * ks, 128),
                                    ks > 0 ? 1 : 0);
                }
                wgmma_commit();
                W_CORR(0, PIPE ? 2 : 4);
                /* the first part's hi*hi (PIPE: and the corrections of
                 * k-tile kt - 1, whose stages go back to their producers) */
                wgmma_wait1();
                w_reg_fence<36>(tmp);
#pragma unroll
                for (int i = 0; i < H0 / 2; i++) acc[i] = __fadd_rn(acc[i], tmp[i]);
                if (PIPE && kt > 0) W_RELEASE(kt - 1);
                wgmma_fence();
#pragma unroll
                for (int ks = 0; ks < 4; ks++)
                    W_WGMMA_N72(tmp, wg_desc(cAh + 32 * ks, 128), wg_desc(cBh1 + 32 * ks, 128),
                                ks > 0 ? 1 : 0);
                wgmma_commit();
                if (PIPE) W_CORR(2, 4);
                /* refill the B stage of k-tile kt - 1 (released by all 8 warps) */
                if (issuer && kt > 0 && kt - 1 + NB < KT) {
                    const int tt = kt - 1, sl = tt % NB;
                    mbar_wait(B_EMPTY(sl), (uint32_t)((tt / NB) & 1));
                    W_ISSUE_B(tt + NB, sl);
                }
                /* the second part's hi*hi (PIPE: the last corrections of
                 * k-tile kt stay in flight into the next k-tile) */
                if (PIPE)
                    wgmma_wait1();
                else
                    wgmma_wait0();
                w_reg_fence<36>(tmp);
                if (!PIPE) w_reg_fence<NC / 2>(corr);
#pragma unroll
                for (int i = 0; i < 36; i++) acc[H0 / 2 + i] = __fadd_rn(acc[H0 / 2 + i], tmp[i]);
                if (!PIPE) W_RELEASE(kt);
            }
            if (PIPE) {
                wgmma_wait0();
                w_reg_fence<NC / 2>(corr);
                if (KT > 0) W_RELEASE(KT - 1);
            }
#undef W_CORR
#undef W_RELEASE
            (void)CHK;
            s9_epilogue(acc, corr, NC / 8, tid, 0, m0, n0 + NC * cw, M, N, alpha, beta, C, ldc, P);
        }
    }
#undef W_ISSUE_B
#else
    (void)tmA, (void)tmBh, (void)tmBl, (void)ak, (void)M, (void)N, (void)K;
    (void)alpha, (void)beta, (void)C, (void)ldc, (void)P, (void)chk, (void)vmx, (void)verr;
    (void)kind, (void)fast, (void)fd;
#endif
}

/* two split warpgroups, NC columns per consumer; FOLD: the bounded pass
 * can be folded (fd.fl non-NULL); LEAN (NC = 136, no fold, vmx NULL): the
 * consumers' fresh hi*hi accumulator over all NC columns */
template <int MODE, int NC, int FOLD, int LEAN = 0>
static __global__ void __launch_bounds__(512, 1)
    tn_sm90w(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmBh,
             const __grid_constant__ CUtensorMap tmBl, int ak, int M, int N, int K, float alpha,
             float beta, float *C, long long ldc, float *P, int chk, uint32_t *vmx, double *verr,
             int kind, int fast, const __grid_constant__ w_fold_t fd) {
    w_body<MODE, 2, NC, FOLD, LEAN>(&tmA, &tmBh, &tmBl, ak, M, N, K, alpha, beta, C, ldc, P,
                                    chk, vmx, verr, kind, fast, fd);
}

/* ===================================================================
 * TCNLA_GEMM_FP16 with op(A) rounded inside the kernel (tn_cu_gemm_f16_sm90):
 * C = alpha fp16(op(A)) B16 + beta C, B16 already FP16 (K contiguous), one
 * product summed in the Tensor Core's FP32 accumulator, as the method's
 * other path (A and B rounded to FP16 into the workspace, then cuBLAS) but
 * without the m x k FP16 copy of A: what a driver that keeps to a memory
 * bound (tcnla_rsvd's power iterations) needs, and one pass over A fewer.
 * The same layout as the wide kernels above: two converter warpgroups
 * (alternate 64-deep k-tiles, TMA of the FP32 A tile into a raw ring, RN to
 * FP16 into the wgmma K-major layout with 128-byte swizzle) and two consumer
 * warpgroups on the same 64 rows, each on NC columns (64 or 136, so one
 * 64 x 272 tile covers n = 266, the randomized SVD's k + p), both operands
 * of wgmma from shared memory; or, where one column tile covers n, tall
 * tiles of 128 rows (tn_sm90h_136t, below). Only the rounding of the
 * operands is fixed by the method; the order of the sum differs from
 * cuBLAS's. */
/* ring depths: 4 raw A (16 KB) + 3 FP16 A (8 KB) + NB = 4 B stages (2 NC
 * rows of 128 bytes: 34 KB at NC = 136, 16 KB at NC = 64): 225 KB at NC =
 * 136. The B stages, read from L2 by every row tile, need the lead: H200,
 * 16384^2 x 266, raw / FP16 / B stages 4 / 3 / 4 297-307 us, 4 / 4 / 3
 * 367-378, 4 / 2 / 4 348-353, 6 / 4 / 2 546-551, 2 / 3 / 4 374-379 (a
 * probe of the kernel alone, means of 10; with the trust check folded,
 * below: 421-429 us against 429-443 at 4 / 4 / 3) */
/* Tall tiles (BM = 128 rows), each consumer on 64 rows and all 2 NC
 * columns: a B stage serves twice the products, so that B's stores into
 * shared memory and reads from L2 per product halve; 2 raw (32 KB) + 3
 * FP16 A (16 KB) + 3 B stages (220 KB), about the lead in time of the
 * 64-row rings. The same sums per element: the same bits. H200, 16384^2
 * x 266: 297-313 against 329-342 us (probe, the same run). */
static __host__ __device__ __forceinline__ int h_nraw(int bm) { return bm == 128 ? 2 : 4; }
static __host__ __device__ __forceinline__ int h_nconv(int bm) { (void)bm; return 3; }
static __host__ __device__ __forceinline__ int h_nb(int bm) { return bm == 128 ? 3 : 4; }
static __host__ __device__ __forceinline__ int h_bstage(int nc) { return 2 * nc * 128; }
static __host__ __device__ __forceinline__ int h_bar_off(int nc, int bm) {
    return h_nraw(bm) * bm * W_BK * 4 + h_nconv(bm) * bm * W_BK * 2 + h_nb(bm) * h_bstage(nc);
}
static __host__ __device__ __forceinline__ int h_smem(int nc, int bm) {
    return h_bar_off(nc, bm) + 256 + 1024;
}

extern __shared__ unsigned char h_smem_raw[];

static __device__ __forceinline__ void h_body(const int NC, const int BM, const CUtensorMap *tmA,
                                              const CUtensorMap *tmB, int ak, int M, int N,
                                              int K, float alpha, float beta,
                                              float *__restrict__ C, long long ldc,
                                              const w_fold_t &fd) {
#if S9_ON
    const int NRAW = h_nraw(BM), NCONV = h_nconv(BM), NB = h_nb(BM), BST = h_bstage(NC);
    const int TN = 2 * NC, RAWB = BM * W_BK * 4, CT = BM * W_BK * 2, ABM = BM;
    if (!s9_dsmem_ok(h_smem(NC, BM))) return;
    const int tid = threadIdx.x, wg = tid >> 7;
    int m0, n0;
    if (BM == 128) /* one column tile (the host's condition) */
        m0 = blockIdx.x * BM, n0 = 0;
    else
        w_tile_of(blockIdx.x, M, N, TN, &m0, &n0);
    const int KT = (K + W_BK - 1) / W_BK;

    W_RINGS(h_smem_raw, NCONV * CT, h_bar_off(NC, BM)); /* FP16 A stages */
    __shared__ uint32_t rowmax[128]; /* fd.fl: the rows' largest |x| (bits) */
    if (tid < BM) rowmax[tid] = 0u;
    W_INIT_BARS();

/* the B rows of both consumers (NC each, one box per consumer) */
#define H_ISSUE_B(t, s)                                                                        \
    do {                                                                                       \
        const uint32_t dst_ = b_s + (uint32_t)((s) * BST);                                     \
        mbar_expect_tx(B_FULL(s), (uint32_t)BST);                                              \
        tma_load_2d(dst_, tmB, (t) * W_BK, n0, B_FULL(s));                                     \
        tma_load_2d(dst_ + NC * 128, tmB, (t) * W_BK, n0 + NC, B_FULL(s));                     \
    } while (0)

    if (wg < 2) {
        /* ---------------------------------------- converter warpgroups */
        asm volatile("setmaxnreg.dec.sync.aligned.u32 48;");
        /* the thread's row rr, k 8q .. 8q + 7 for q = q0 + QS j */
        const int t = tid & 127, rr = t & (BM - 1), q0 = t / BM, QS = 128 / BM;
        /* fd.fl: the thread's largest |x| (its part of row rr's) and least
         * |x| - 1 (0 wraps to the top), as bits */
        unsigned hi = 0u, lo = 0xffffffffu;
        if (t == 0)
            for (int kt = wg; kt < NRAW && kt < KT; kt += 2) W_ISSUE_A(kt, kt);
        for (int kt = wg; kt < KT; kt += 2) {
            const int r = kt % NRAW, s = kt % NCONV;
            mbar_wait(RAW_FULL(r), (uint32_t)((kt / NRAW) & 1));
            mbar_wait(CONV_EMPTY(s), (uint32_t)(((kt / NCONV) & 1) ^ 1));
            const unsigned char *ra = base + r * RAWB;
            unsigned char *hic = conv + s * CT;
            /* fd.fl: this k-tile's column masks, words 0 and 1 of cbits'
             * pair (k 8 (h + 2 j') + e at bit 8 j' + e of word h); BM = 64:
             * word t >> 6 alone */
            unsigned tiny[2] = {0u, 0u}, big[2] = {0u, 0u};
#pragma unroll
            for (int j = 0; j < 8 / QS; j++) {
                const int q = q0 + QS * j; /* k 8q .. 8q + 7 */
                float x[8];
                w_read8(ra, ak, rr, q, x, BM);
                uint32_t h[4];
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const __half2 v = __floats2half2_rn(x[2 * e], x[2 * e + 1]);
                    h[e] = *(const uint32_t *)&v;
                }
                *(uint4 *)(hic + rr * 128 + ((q ^ (rr & 7)) << 4)) = make_uint4(h[0], h[1], h[2], h[3]);
                if (fd.fl) {
                    if (BM == 64) fold8(fd, x, j, hi, lo, tiny[0], big[0]);
                    else fold8(fd, x, j >> 1, hi, lo, tiny[j & 1], big[j & 1]);
                }
            }
            fence_async_smem(); /* generic stores -> wgmma (async proxy) reads */
            mbar_arrive(CONV_FULL(s));
            asm volatile("bar.sync %0, 128;" ::"r"(1 + wg) : "memory"); /* raw stage read */
            if (t == 0 && kt + NRAW < KT) W_ISSUE_A(kt + NRAW, r);
            if (fd.fl) {
                if (BM == 64) {
                    fold_ktile(fd, kt, KT, t >> 6, tiny[0], big[0]);
                } else {
                    fold_ktile(fd, kt, KT, 0, tiny[0], big[0]);
                    fold_ktile(fd, kt, KT, 1, tiny[1], big[1]);
                }
            }
        }
        if (fd.fl) fold_finish(fd, hi, lo, rr, rowmax, BM);
    } else {
        /* -------------------------------------------------- consumers */
        /* BM = 64: columns n0 + NC cw .. + NC - 1 (acc0); BM = 128: rows
         * m0 + 64 cw .. + 63, both column halves (acc0: 0 .. NC - 1, acc1:
         * NC .. 2 NC - 1) */
        asm volatile("setmaxnreg.inc.sync.aligned.u32 208;");
        const int cw = wg - 2;
        const int issuer = tid == 256;
        if (issuer)
            for (int kt = 0; kt < NB && kt < KT; kt++) H_ISSUE_B(kt, kt);
        float acc0[68], acc1[68];
        for (int kt = 0; kt < KT; kt++) {
            const int s = kt % NCONV, b = kt % NB;
            mbar_wait(CONV_FULL(s), (uint32_t)((kt / NCONV) & 1));
            mbar_wait(B_FULL(b), (uint32_t)((kt / NB) & 1));
            const uint32_t cA = conv_s + (uint32_t)(s * CT + (BM == 128 ? cw * 64 * 128 : 0));
            const uint32_t cB = b_s + (uint32_t)(b * BST + (BM == 128 ? 0 : cw * NC * 128));
            wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < 4; ks++) {
                const int scd = kt > 0 || ks > 0;
                const uint64_t da = wg_desc(cA + 32 * ks, 128);
                if (NC == 136) W_WGMMA_N136(acc0, da, wg_desc(cB + 32 * ks, 128), scd);
                else W_WGMMA_N64(acc0, da, wg_desc(cB + 32 * ks, 128), scd);
                if (BM == 128) W_WGMMA_N136(acc1, da, wg_desc(cB + NC * 128 + 32 * ks, 128), scd);
            }
            wgmma_commit();
            /* k-tile kt - 1's group is done: its stages go back */
            wgmma_wait1();
            if (kt > 0) {
                const int tt = kt - 1, sl = tt % NB;
                mbar_arrive(CONV_EMPTY(tt % NCONV));
                __syncwarp();
                if ((tid & 31) == 0) mbar_arrive(B_EMPTY(sl));
                if (issuer && tt + NB < KT) {
                    mbar_wait(B_EMPTY(sl), (uint32_t)((tt / NB) & 1));
                    H_ISSUE_B(tt + NB, sl);
                }
            }
        }
        wgmma_wait0();
        /* C = alpha acc + beta C; acc[4 i + 2 h + e]: row 16 w + l / 4 + 8 h,
         * column 8 i + 2 (l % 4) + e of the warpgroup's 64 x NC block(s) */
        const int lane = tid & 31, w = (tid >> 5) & 3;
        const int row0 = m0 + (BM == 128 ? 64 * cw : 0) + 16 * w + (lane >> 2);
        const int col0 = n0 + (BM == 128 ? 0 : cw * NC) + 2 * (lane & 3);
#pragma unroll
        for (int hf = 0; hf < BM / 64; hf++)
#pragma unroll
            for (int i = 0; i < NC / 8; i++)
#pragma unroll
                for (int hh = 0; hh < 2; hh++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const int gi = row0 + 8 * hh, gj = col0 + NC * hf + 8 * i + e;
                        if (gi < M && gj < N) {
                            float *p = C + gi + (long long)gj * ldc;
                            const int x = 4 * i + 2 * hh + e;
                            float v = __fmul_rn(alpha, hf ? acc1[x] : acc0[x]);
                            if (beta != 0.0f) v = __fadd_rn(v, __fmul_rn(beta, *p));
                            *p = v;
                        }
                    }
    }
#undef H_ISSUE_B
#else
    (void)NC, (void)tmA, (void)tmB, (void)ak, (void)M, (void)N, (void)K, (void)alpha;
    (void)beta, (void)C, (void)ldc, (void)fd, (void)BM;
#endif
}

#define H_KERNEL(NC, BM, NAME)                                                                 \
    static __global__ void __launch_bounds__(512, 1)                                           \
        NAME(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB, \
             int ak, int M, int N, int K, float alpha, float beta, float *C, long long ldc,    \
             const __grid_constant__ w_fold_t fd) {                                            \
        h_body(NC, BM, &tmA, &tmB, ak, M, N, K, alpha, beta, C, ldc, fd);                      \
    }
H_KERNEL(64, 64, tn_sm90h_64)
H_KERNEL(136, 64, tn_sm90h_136)
H_KERNEL(136, 128, tn_sm90h_136t)
#undef W_INIT_BARS
#undef W_RINGS
#undef W_ISSUE_A
#undef RAW_FULL
#undef CONV_FULL
#undef CONV_EMPTY
#undef B_FULL
#undef B_EMPTY

typedef void (*w_kernel_t)(const CUtensorMap, const CUtensorMap, const CUtensorMap, int, int, int,
                           int, float, float, float *, long long, float *, int, uint32_t *,
                           double *, int, int, const w_fold_t);

/* The fold's parameters (fd zeroed: no fold where aflags is NULL) from
 * the element kinds of the methods to trust (FP16 kinds, fast, at most
 * 4); cudaErrorNotSupported where they cannot be folded */
static int fold_setup(const tn_elem_kinds_t *kk, const int *tol_bits, int *aflags, void *scratch,
                      w_fold_t *fd) {
    memset(fd, 0, sizeof *fd);
    if (!aflags) return 0;
    if (!kk || !tol_bits || !scratch || kk->n < 1 || kk->n > 4) return (int)cudaErrorNotSupported;
    float thr = 0.0f;
    for (int j = 0; j < kk->n; j++) {
        if (!kk->fast[j] || !tn_rchk_is_f16_kind(kk->kind[j]) || tol_bits[j] < 0 ||
            tol_bits[j] > 26)
            return (int)cudaErrorNotSupported;
        const float tj = tn_trust_small(kk->kind[j], tol_bits[j]);
        memcpy(&fd->thr[j], &tj, sizeof tj);
        if (tj > thr) thr = tj;
    }
    memcpy(&fd->thrmax, &thr, sizeof thr);
    fd->n = kk->n, fd->fl = aflags, fd->cbits = (uint32_t *)scratch;
    return 0;
}

/* the column masks cleared before the product (words: 2 per k-tile) */
static cudaError_t fold_begin(const w_fold_t &fd, int words, cudaStream_t stream) {
    if (!fd.fl) return cudaSuccess;
    return cudaMemsetAsync(fd.cbits, 0, 2 * sizeof(uint32_t) * (size_t)words, stream);
}

/* and the columns' verdict (fl[7]) after it */
static cudaError_t fold_end(const w_fold_t &fd, int words, cudaStream_t stream) {
    if (!fd.fl) return cudaSuccess;
    fold_end_kernel<<<(words + 255) / 256 < 64 ? (words + 255) / 256 : 64, 256, 0, stream>>>(
        fd.cbits, words, fd.fl);
    return cudaGetLastError();
}

/* NC columns per consumer: the one whose tiles of 2 NC columns leave the
 * fewest empty (128 on a tie) */
static int w_nc(int64_t n) {
    int best = 128;
    int64_t bcols = (n + 255) / 256 * 256;
    for (int nc = 136; nc <= 144; nc += 8) {
        const int64_t cols = (n + 2 * nc - 1) / (2 * nc) * (2 * nc);
        if (cols < bcols) best = nc, bcols = cols;
    }
    return best;
}

extern "C" int tn_cu_sm90_w_cols(int64_t n) { return 2 * w_nc(n); }

static w_kernel_t w_kernel(int mode, int nc, int fold, int lean) {
    if (!fold && lean && nc == 136)
        return mode == TN_KMODE_TCEC_F16     ? tn_sm90w<0, 136, 0, 1>
               : mode == TN_KMODE_SHGEMM_F16 ? tn_sm90w<2, 136, 0, 1>
                                             : NULL;
    if (mode == TN_KMODE_TCEC_F16 && !fold)
        return nc == 128   ? tn_sm90w<0, 128, 0>
               : nc == 136 ? tn_sm90w<0, 136, 0>
                           : tn_sm90w<0, 144, 0>;
    if (mode == TN_KMODE_SHGEMM_F16 && !fold)
        return nc == 128   ? tn_sm90w<2, 128, 0>
               : nc == 136 ? tn_sm90w<2, 136, 0>
                           : tn_sm90w<2, 144, 0>;
    if (mode == TN_KMODE_SHGEMM_F16)
        return nc == 128   ? tn_sm90w<2, 128, 1>
               : nc == 136 ? tn_sm90w<2, 136, 1>
                           : tn_sm90w<2, 144, 1>;
    return NULL;
}

/* Where the product runs here: 192 <= n <= 512 with at most a third of
 * the last 256-column tile empty, or 256 < n <= 288 (one tile of 272 or
 * 288 columns), m, k >= 1024; force (the handle's tuning
 * sm90_wide) 0 / 1 overrides, TCNLA_TUNING_AUTO (-1) does not. H200,
 * TFLOP/s here against the pre-split
 * and register-A paths (SHGEMM_FP16 / TCEC_FP16): 32768 x 256 x 32768 230 / 170 against
 * 110 / 96, 16384 x 512 x 16384 226 / 167 against 197 / 154, 16384 x 384
 * 177 / 112 against 125 / 105, 4096 x 512 x 16384 208 / 151 against
 * 185 / 142; slower at n = 266 for TCEC (64 against 73), n = 768 (212 /
 * 168 against 233 / 176), n = 1024 and 8192^3 (docs/kernels.md). */
extern "C" int tn_cu_sm90_w_wanted(int mode, int64_t m, int64_t n, int64_t k, int sms,
                                   int force) {
    (void)sms;
    if (!w_kernel(mode, 128, 0, 0) || m <= 0 || n <= 0 || k <= 0) return 0;
    if (m > 0x7fffffffLL || n > 0x7fffffffLL || k > 0x7fffffffLL) return 0;
    if (force >= 0) return force;
    const int64_t cols = (n + 255) / 256 * 256;
    return ((n >= 192 && n <= 512 && 3 * cols <= 4 * n) || (n > 256 && n <= 288)) &&
           m >= 1024 && k >= 1024;
}

extern "C" int tn_cu_tc_gemm_sm90_w(int mode, int transa, int64_t m, int64_t n, int64_t k,
                                    float alpha, const float *A, int64_t lda, const uint16_t *Bh,
                                    const uint16_t *Bl, int64_t ldb, float beta, float *C,
                                    int64_t ldc, float *P, uint32_t *vmx, double *verr,
                                    int check_kind, int tol_bits, size_t smem_limit,
                                    cudaStream_t stream, const tn_elem_kinds_t *kk,
                                    const int *tkind_bits, int *aflags, void *scratch) {
    const int nsw = 2;
    w_fold_t fd;
    if (fold_setup(kk, tkind_bits, aflags, scratch, &fd)) return (int)cudaErrorNotSupported;
    const int chk = tn_cu_sm90_chunk(mode);
    if (chk != 2 && chk != 4) return (int)cudaErrorNotSupported; /* 64 or 128 products */
    const int nc = chk == 2 ? w_nc(n) : 128; /* (NC > 128: chunks of one k-tile) */
    /* (op(A) unchecked at NC = 136: the lean kernel) */
    w_kernel_t kern = w_kernel(mode, nc, aflags != NULL, !vmx && !aflags);
    if (!kern || !tn_cu_sm90_available(mode) || (!s9_sh(mode) && !Bl))
        return (int)cudaErrorNotSupported;
    const size_t smem = (size_t)w_smem(mode, nc);
    if (smem > smem_limit) return (int)cudaErrorNotSupported;
    if (((uintptr_t)A & 15u) || ((uintptr_t)Bh & 15u) || (Bl && ((uintptr_t)Bl & 15u)) ||
        (lda * 4) % 16 || (ldb * 2) % 16)
        return (int)cudaErrorNotSupported;
    if (m > 0x7fffffffLL || n > 0x7fffffffLL || k > 0x7fffffffLL)
        return (int)cudaErrorNotSupported;
    const int64_t tiles = ((m + W_BM - 1) / W_BM) * ((n + 2 * nc - 1) / (2 * nc));
    if (tiles > 0x7fffffffLL) return (int)cudaErrorNotSupported;
    s9_encode_fn enc = s9_encoder();
    CUtensorMap mA, mBh, mBl;
    const int ak = transa != 0;
    int badmap = 0;
    if (ak) /* op(A) = A^T: A is k x m, K contiguous: two boxes of rows of 32 k, 128-byte swizzle */
        badmap |= s9_map(&mA, enc, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, A, k, m, lda, 32, W_BM,
                         CU_TENSOR_MAP_SWIZZLE_128B);
    else /* m x k, M contiguous: [64 k][64 m] */
        badmap |= s9_map(&mA, enc, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, A, m, k, lda, W_BM, W_BK,
                         CU_TENSOR_MAP_SWIZZLE_NONE);
    /* B: k x n, K contiguous: boxes of nc rows of 64 k (128 bytes), 128-byte swizzle */
    badmap |= s9_map(&mBh, enc, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, Bh, k, n, ldb, W_BK, nc,
                     CU_TENSOR_MAP_SWIZZLE_128B);
    if (Bl)
        badmap |= s9_map(&mBl, enc, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, Bl, k, n, ldb, W_BK, nc,
                         CU_TENSOR_MAP_SWIZZLE_128B);
    else
        mBl = mBh;
    if (badmap) return (int)cudaErrorNotSupported;
    cudaError_t e = cudaFuncSetAttribute((const void *)kern,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return (int)e;
    const int words = (int)(2 * ((k + W_BK - 1) / W_BK));
    if ((e = fold_begin(fd, words, stream)) != cudaSuccess) return (int)e;
    kern<<<dim3((unsigned)tiles, 1), 128 * (nsw + 2), smem, stream>>>(
        mA, mBh, mBl, ak, (int)m, (int)n, (int)k, alpha, beta, C, (long long)ldc, P, chk, vmx,
        verr, check_kind, tn_rchk_fast(check_kind, tol_bits), fd);
    if ((e = cudaGetLastError()) != cudaSuccess) return (int)e;
    return (int)fold_end(fd, words, stream);
}

/* ------------------------------------------- FP16 with A rounded here */
typedef void (*h_kernel_t)(const CUtensorMap, const CUtensorMap, int, int, int, int, float,
                           float, float *, long long, const w_fold_t);

static int h_nc(int64_t n) { return n <= 128 ? 64 : 136; }

/* Where TCNLA_GEMM_FP16 runs here (op(B) = B): n <= 272 (one column tile),
 * at least one wave of 64-row tiles, k >= 512; force (the handle's tuning
 * sm90_f16) 0 / 1 overrides, TCNLA_TUNING_AUTO (-1) does not. */
extern "C" int tn_cu_gemm_f16_sm90_wanted(int64_t m, int64_t n, int64_t k, int sms, int force) {
    if (m <= 0 || n <= 0 || k <= 0 || m > 0x7fffffffLL || n > 0x7fffffffLL || k > 0x7fffffffLL)
        return 0;
    if (force >= 0) return force;
    return n <= 272 && (m + W_BM - 1) / W_BM >= sms && k >= 512;
}

/* one 272-column tile covers n, and more than one 64-row tile m */
static int h_tall_ok(int64_t m, int64_t n) { return h_nc(n) == 136 && n <= 272 && m > W_BM; }

/* A tall tile takes about as long as two 64-row tiles (less: B's traffic
 * halves), so tall tiles pay where twice their waves are at most the
 * 64-row tiles' waves; elsewhere they leave SMs idle (m <= 64 sms: one
 * wave of 64-row tiles against one of tall tiles; 20000 rows on 132 SMs:
 * 3 waves against 2 x 2) */
extern "C" int tn_cu_gemm_f16_sm90_rows(int64_t m, int64_t n, int sms) {
    if (!h_tall_ok(m, n) || sms < 1) return W_BM;
    const int64_t w64 = ((m + 63) / 64 + sms - 1) / sms, w128 = ((m + 127) / 128 + sms - 1) / sms;
    return 2 * w128 <= w64 ? 128 : W_BM;
}

extern "C" int tn_cu_gemm_f16_sm90(int transa, int64_t m, int64_t n, int64_t k, float alpha,
                                   const float *A, int64_t lda, const uint16_t *B16, int64_t ldb,
                                   float beta, float *C, int64_t ldc, size_t smem_limit,
                                   cudaStream_t stream, const tn_elem_kinds_t *kk,
                                   const int *tol_bits, int *aflags, void *scratch,
                                   int tile_rows) {
    const int nc = h_nc(n);
    w_fold_t fd;
    if (fold_setup(kk, tol_bits, aflags, scratch, &fd)) return (int)cudaErrorNotSupported;
    /* tall tiles (128 rows) where one column tile of 272 covers n */
    const int tall_ok = h_tall_ok(m, n);
    if ((tile_rows != 0 && tile_rows != 64 && tile_rows != 128) || (tile_rows == 128 && !tall_ok))
        return (int)cudaErrorNotSupported;
    const int bm = tall_ok && tile_rows != 64 ? 128 : W_BM;
    h_kernel_t kern = nc == 64 ? tn_sm90h_64 : bm == 128 ? tn_sm90h_136t : tn_sm90h_136;
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, (const void *)kern) != cudaSuccess) {
        cudaGetLastError();
        return (int)cudaErrorNotSupported;
    }
    if (attr.binaryVersion != 90 || !s9_encoder()) return (int)cudaErrorNotSupported;
    const size_t smem = (size_t)h_smem(nc, bm);
    if (smem > smem_limit) return (int)cudaErrorNotSupported;
    if (((uintptr_t)A & 15u) || ((uintptr_t)B16 & 15u) || (lda * 4) % 16 || (ldb * 2) % 16)
        return (int)cudaErrorNotSupported;
    if (m > 0x7fffffffLL || n > 0x7fffffffLL || k > 0x7fffffffLL)
        return (int)cudaErrorNotSupported;
    const int64_t tiles = ((m + bm - 1) / bm) * ((n + 2 * nc - 1) / (2 * nc));
    if (tiles > 0x7fffffffLL) return (int)cudaErrorNotSupported;
    s9_encode_fn enc = s9_encoder();
    CUtensorMap mA, mB;
    const int ak = transa != 0;
    int bad = 0;
    if (ak) /* A is k x m, K contiguous: boxes of 32 k x bm rows, 128-byte swizzle */
        bad |= s9_map(&mA, enc, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, A, k, m, lda, 32, bm,
                      CU_TENSOR_MAP_SWIZZLE_128B);
    else /* m x k, M contiguous: [64 k][bm m] */
        bad |= s9_map(&mA, enc, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, A, m, k, lda, bm, W_BK,
                      CU_TENSOR_MAP_SWIZZLE_NONE);
    /* B16: k x n, K contiguous: nc rows of 64 k (128 bytes), 128-byte swizzle */
    bad |= s9_map(&mB, enc, CU_TENSOR_MAP_DATA_TYPE_UINT16, 2, B16, k, n, ldb, W_BK, nc,
                  CU_TENSOR_MAP_SWIZZLE_128B);
    if (bad) return (int)cudaErrorNotSupported;
    cudaError_t e = cudaFuncSetAttribute((const void *)kern,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess) return (int)e;
    const int words = (int)(2 * ((k + W_BK - 1) / W_BK));
    if ((e = fold_begin(fd, words, stream)) != cudaSuccess) return (int)e;
    kern<<<dim3((unsigned)tiles, 1), 512, smem, stream>>>(mA, mB, ak, (int)m, (int)n, (int)k, alpha,
                                                         beta, C, (long long)ldc, fd);
    if ((e = cudaGetLastError()) != cudaSuccess) return (int)e;
    return (int)fold_end(fd, words, stream);
}

extern "C" size_t tn_cu_gemm_f16_sm90_fold_scratch(int64_t k) {
    return 4 * sizeof(uint32_t) * (size_t)((k + W_BK - 1) / W_BK);
}
