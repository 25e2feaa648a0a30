// recipes/gemm_stream.cu: an fp32 GEMM whose A is small and shared by every batch and whose
// B is long and N-major, streamed once through (a pointwise convolution in NCHW, y[b] =
// W @ x[b]: src/recipe_conv.c recipe_conv_as_gemm), on Hopper's warpgroup MMAs in 3xFP16
// with the split done in the kernel, with gemm_epi.cuh's fused epilogue.
//
// C[b](m, n) = epi(sum_k A(m, k) * B[b](k, n)), the problem and its parameters as in
// gemm_tc.cu (the same CGR_* names; the generator writes the same lines): A K-major or
// M-major with no batch stride, B N-major (B(n, k) = b[k*LDB + n]) in 16-byte vectors,
// M <= 256, K <= 128. No split-K, row reduction or triangle (gemm_tc.cu does those).
//
// Why: with a short K writing C and reading B are the work (level 1 #87: x 4 GiB, y 8 GiB,
// 137 G multiply-adds). mma.sync in 3xTF32 (gemm_tc.cu) is held by the tensor cores there
// (H200 12-06: 5.07 ms, 59% of the bytes' time), and the WGMMA kernels that split their
// operands first (conv_tc.cu CGR_WGMMA, gemm_wgmma.cu CGR_PRESPLIT) read and write x once
// more for it (20 GiB against 12). Here x is read once and split on its way into shared
// memory; the WGMMAs (3xFP16: three products a 16-deep block at fp16's rate) cost about a
// third of the bytes' time.
//
// A CTA of M/64 warpgroups (BM = M rounded up to 64; a warpgroup owns 64 rows of C) is
// persistent over the (batch, N tile) tiles. At its start it splits A (zero past M and K)
// into big and small halves, K-major and 128-byte swizzled, with one scale for the whole
// of A. B's tiles come in through a ring of STAGES fp32 tiles in shared memory, each
// thread copying its own LOADS 16-byte vectors of a tile's K x BN block (cp.async; zeros
// past N) STAGES - 1 tiles ahead (one tile held in registers, the first form, and a ring of
// four timed alike, H100 lab rounds 64-65: the stores were what held it, see store_staged;
// two stages leave room for C's staging). Then, a tile at a time: every thread
// reads back its own vectors (no barrier: its copies, its wait), finds their largest |v|,
// the CTA the tile's (a warp max, a barrier), and writes v s as big and small
// halves into the B stage, N-major and 128-byte swizzled (GMMA::Layout_MN_SW128_Atom: 64
// columns of one k a 128-byte row), s = f16_scale(the tile's max) a power of two; fence,
// barrier; then each warpgroup's WGMMAs, a_small b_big, a_big
// b_small, a_big b_big (SS, m64 nBN k16) over K, chained into the accumulator (K <= 128:
// tensor-core adds truncate, recipes/tf32_mma.cuh, negligible this short), waits, undoes the
// two scales (exact) and stores C through shared memory (store_staged: whole rows, 16 bytes
// a lane). One B stage is enough: the barrier before a tile's split comes after every
// warpgroup's wait on the tile before.
//
// Accuracy: 3xFP16 as gemm_wgmma.cu's presplit with a scale a tile (CGR_TILE_SCALE): big
// and small hold 11 significant bits each, values far below the tile's largest lose their
// low bits in small (absolute error below 2^-24 of the tile's max); inf and NaN give
// non-finite products, as the reference does.
//
// Shared memory: A's halves 2 x BM x KP x 2 bytes, B's 2 x BN x KP x 2 (KP = K rounded up to
// 64), the ring STAGES x K x BN x 4, C's staging BM x (BN + 8) x 4: 198 KB at 128 x 128, K
// 64, 2 stages.
#include <cutegen/abi.h>
#include <cute/tensor.hpp>
#include <cute/arch/mma_sm90.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cutlass/arch/barrier.h>
#include <cstring>
#include "ops.cuh"  // recipe:inline

// recipe:params
#ifndef CGR_GENERATED
#define CGR_M 128
#define CGR_N 1048576
#define CGR_K 64
#define CGR_BATCH 16
#define CGR_A 1             // input index of A (the weight [COUT][CIN][1][1])
#define CGR_B 0             // input index of B (x [N][CIN][H][W])
#define CGR_A_KMAJOR 1      // A(m,k) = a[m*LDA + k] (1) or a[k*LDA + m] (0)
#define CGR_B_KMAJOR 0      // B(n,k) = b[k*LDB + n] (0; the only form here)
#define CGR_LDA 64
#define CGR_LDB 1048576
#define CGR_A_BSTRIDE 0     // (0: A shared by all batches, the only form here)
#define CGR_B_BSTRIDE 67108864
#define CGR_VEC_A 4
#define CGR_VEC_B 4         // (4: 16-byte loads of B, the only form here)
#define CGR_BM 128          // M rounded up to 64: a warpgroup a 64 rows
#define CGR_BN 128          // B's columns a tile: 64, 128 or 256
#define CGR_BK 32           // (unused here)
#define CGR_WM 2            // (unused here)
#define CGR_WN 1
#define CGR_STAGES 2        // fp32 tiles of B in the ring (STAGES - 1 in flight ahead)
#define CGR_MINB 1          // CTAs an SM the launch bound asks for
#define CGR_SPLITK 1
#define CGR_GROUP 8
#define CGR_PREC 2          // 3xFP16 (the only precision here)
#define CGR_PROMOTE 0
#define CGR_STORE_STREAM 1
#define CGR_TRI 0
#define CGR_TRI_DIAG 0
#define CGR_ROWRED 0
#define CGR_BCAST_W 0
#define CGR_NIN 2
#define CGR_INPUTS(X) X(0, CGR_GE_OPERAND) X(1, CGR_GE_OPERAND)
#define CGR_IN_NDIMS {4, 4}
#define CGR_IN_SHAPES {{16, 64, 1024, 1024}, {128, 64, 1, 1}}
#define CGR_IN_STRIDES {{67108864, 1048576, 1024, 1}, {64, 1, 1, 1}}
#define CGR_OUT_NDIM 4
#define CGR_OUT_SHAPE {16, 128, 1024, 1024}
#define CGR_PROD_NDIM 4
#define CGR_PROD_SHAPE {16, 128, 1024, 1024}
__device__ __forceinline__ float cgr_pre(float r, const float *x) { (void)x; return r; }
__device__ __forceinline__ float cgr_epi(float r, const float *x) { (void)x; return r; }
#endif

#ifndef CGR_STREAM_EPI
#define CGR_STREAM_EPI 1    // 1: C through shared memory, a warp a 512-byte row (16-byte stores); 0: gemm_epi.cuh's
#endif                      //   store_tile from the fragments (8-byte stores, 8 rows a warp store: lab round 66's)

namespace cgr_gemm {

using namespace cute;

constexpr int kM = CGR_M, kN = CGR_N, kK = CGR_K, kBatch = CGR_BATCH;
constexpr int kBM = CGR_BM, kBN = CGR_BN, kStages = CGR_STAGES;
constexpr int kNin = CGR_NIN;
constexpr int kWarpgroups = kBM / 64;
constexpr int kThreads = 128 * kWarpgroups;
constexpr int kKP = (kK + 63) / 64 * 64;  // K in whole 128-byte rows of A's atom
constexpr int64_t kTilesAll = int64_t((kN + kBN - 1) / kBN) * kBatch;  // (gemm_epi.cuh's kTilesN a batch)
// a tile of B: K rows of BN/4 vectors; a pass of the CTA's threads covers kRowsPass rows
constexpr int kVecRow = kBN / 4, kRowsPass = kThreads / kVecRow, kLoads = kK / kRowsPass;

static_assert(kBM % 64 == 0 && kBM >= kM && kBM - kM < 64 && kWarpgroups <= 4, "BM: M rounded up to 64, at most 256");
static_assert(kBN == 64 || kBN == 128 || kBN == 256, "BN: 64, 128 or 256 (whole 64-column atoms)");
static_assert(kK > 0 && kK <= 128 && kK % kRowsPass == 0, "K: at most 128, whole passes of the CTA's loads");
static_assert(kThreads % kVecRow == 0, "a pass: whole rows of the tile");
static_assert(kStages >= 2, "STAGES: at least 2 (one tile in flight while one is split)");
static_assert(CGR_B_KMAJOR == 0 && CGR_VEC_B == 4 && kN % 4 == 0 && CGR_LDB % 4 == 0 && CGR_B_BSTRIDE % 4 == 0,
              "B: N-major in 16-byte vectors");
static_assert(CGR_A_BSTRIDE == 0, "A: shared by the batches");
static_assert(CGR_SPLITK == 1 && CGR_ROWRED == 0 && CGR_TRI == 0, "split-K, row reductions, triangles: gemm_tc.cu");
static_assert(kTilesAll < (int64_t(1) << 31), "the tiles must fit an int");

// ---------------------------------------------------------------- layouts

using SmemLayoutA = decltype(tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, make_shape(Int<kBM>{}, Int<kKP>{})));
using SmemLayoutB = decltype(tile_to_shape(GMMA::Layout_MN_SW128_Atom<half_t>{}, make_shape(Int<kBN>{}, Int<kKP>{})));
using MmaOp = decltype(GMMA::ss_op_selector<half_t, half_t, float, Shape<_64, Int<kBN>, _16>, GMMA::Major::K,
                                            GMMA::Major::MN>());
using TiledMma = decltype(make_tiled_mma(MmaOp{}, Layout<Shape<Int<kWarpgroups>, _1, _1>>{}));

// CGR_STREAM_EPI: a warpgroup's 64 x BN accumulators staged row by row, rows kEpiLd floats
// apart (BN + 8: a warp's writes of 8 rows x 4 column pairs fall on 2 x 32 banks; 16-byte rows)
constexpr bool kEpiStaged = CGR_STREAM_EPI != 0;
constexpr int kEpiLd = kBN + 8;
struct SharedStorage {
    alignas(1024) half_t a_big[kBM * kKP];
    alignas(1024) half_t a_small[kBM * kKP];
    alignas(1024) half_t b_big[kBN * kKP];
    alignas(1024) half_t b_small[kBN * kKP];
    float4 ring[kStages][kLoads * kThreads];  // thread t's vector i of a tile at [i * threads + t]
    alignas(16) float epi[kWarpgroups][kEpiStaged ? 64 * kEpiLd : 1];  // CGR_STREAM_EPI: a warpgroup's 64 rows of C
    uint32_t wmax[kThreads / 32];  // the warps' largest |v| of a tile (as bits)
};
constexpr int kSmemBytes = int(sizeof(SharedStorage)) + 1024;  // + aligning the base
static_assert(kSmemBytes <= 227 * 1024, "shared memory: a smaller BN");

// Where element (n, k) of B's stage lies (halves from its 1024-byte aligned start): atoms of
// 64 columns x 8 rows (512 halves), BN/64 of them along N, then along K; in an atom row k's
// 64 columns are one 128-byte line whose 16-byte chunks are XORed with k mod 8 (Swizzle<3,4,3>
// on the byte address). Four columns from a multiple of 4 stay in one chunk: one 8-byte
// store. tests/cli/recipe_stream_layout.cpp checks it against CuTe's SmemLayoutB.
CUTE_HOST_DEVICE int b_offset(int n, int k)
{
    const int atom = n / 64 + (kBN / 64) * (k / 8), r = k % 8, c = n % 64;
    return atom * 512 + r * 64 + (((c / 8) ^ r) << 3) + c % 8;
}

// The columns n .. n + 3 and the row k of B's tile that thread t holds in its i-th vector:
// a warp's 32 vectors along one row (512 contiguous bytes at BN 128), kRowsPass rows a pass.
CUTE_HOST_DEVICE void b_coord(int t, int i, int &n, int &k)
{
    n = 4 * (t % kVecRow);
    k = t / kVecRow + kRowsPass * i;
}

#include "tf32_mma.cuh"  // recipe:inline
#include "gemm_inputs.cuh"  // recipe:inline
#include "gemm_epi.cuh"  // recipe:inline

#ifndef CGR_GEMM_EMULATE
// ---------------------------------------------------------------- the kernel

// the largest |v| over the CTA, every thread's mx given: a warp max, then the warps' (a barrier)
__device__ __forceinline__ float cta_max(SharedStorage &s, float mx)
{
    // non-negative floats order as their bits do; NaN was dropped by fmaxf
    const uint32_t w = __reduce_max_sync(0xffffffffu, __float_as_uint(mx));
    if (threadIdx.x % 32 == 0)
        s.wmax[threadIdx.x / 32] = w;
    __syncthreads();
    uint32_t m = 0;
    CUTE_UNROLL
    for (int i = 0; i < kThreads / 32; ++i)
        m = max(m, s.wmax[i]);
    return __uint_as_float(m);
}

__device__ __forceinline__ float a_at(const Params &p, int m, int k)
{
    if (m >= kM || k >= kK)
        return 0.f;
    const float *a = p.in[CGR_A];
    return CGR_A_KMAJOR ? __ldg(a + int64_t(m) * CGR_LDA + k) : __ldg(a + int64_t(k) * CGR_LDA + m);
}

// A split into the CTA's shared memory with one scale (zeros past M and K); returns 1 / scale.
__device__ __forceinline__ float split_a(const Params &p, SharedStorage &s)
{
    Tensor sAb = make_tensor(make_smem_ptr(s.a_big), SmemLayoutA{});
    Tensor sAs = make_tensor(make_smem_ptr(s.a_small), SmemLayoutA{});
    float mx = 0.f;
    for (int e = threadIdx.x; e < kBM * kKP; e += kThreads)
        mx = fmaxf(mx, fabsf(a_at(p, e / kKP, e % kKP)));
    const float sa = f16_scale(cta_max(s, mx));
    for (int e = threadIdx.x; e < kBM * kKP; e += kThreads) {
        const int m = e / kKP, k = e % kKP;
        const float v = a_at(p, m, k) * sa;
        const __half big = __float2half_rn(v);
        sAb(m, k) = half_t(big);
        sAs(m, k) = half_t(__float2half_rn(v - __half2float(big)));
    }
    __syncthreads();  // every warp has read wmax before the first tile's max is written there
    return 1.f / sa;
}

// Tile `tile`'s (batch, column tile).
__device__ __forceinline__ void tile_at(int tile, int &batch, int &tn)
{
    batch = tile / kTilesN;
    tn = tile - batch * kTilesN;
}

// This thread's vectors of tile `tile`'s block of B (b_coord) copied into ring slot `stage`
// (cp.async, L2 only; zeros past N), then a commit: one group a tile, an empty one past the
// last tile (so that every thread's groups count alike).
__device__ __forceinline__ void copy_b(const Params &p, SharedStorage &s, int tile, int stage)
{
    if (tile < int(kTilesAll)) {
        int batch, tn;
        tile_at(tile, batch, tn);
        const float *b = p.in[CGR_B] + int64_t(batch) * CGR_B_BSTRIDE + tn * kBN;
        CUTE_UNROLL
        for (int i = 0; i < kLoads; ++i) {
            int n, k;
            b_coord(int(threadIdx.x), i, n, k);
            const bool in = tn * kBN + n < kN;
            const float *src = in ? b + int64_t(k) * CGR_LDB + n : b;
            const uint32_t dst = cute::cast_smem_ptr_to_uint(&s.ring[stage][i * kThreads + threadIdx.x]);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(in ? 16 : 0));
        }
    }
    asm volatile("cp.async.commit_group;\n" ::);
}

// v s as (big, small) halves of 4 neighbouring columns, 8 bytes each.
__device__ __forceinline__ void split4(float4 v, float s, uint2 &big, uint2 &small)
{
    const __half2 b0 = __floats2half2_rn(v.x * s, v.y * s), b1 = __floats2half2_rn(v.z * s, v.w * s);
    const float2 f0 = __half22float2(b0), f1 = __half22float2(b1);
    const __half2 s0 = __floats2half2_rn(fmaf(v.x, s, -f0.x), fmaf(v.y, s, -f0.y));
    const __half2 s1 = __floats2half2_rn(fmaf(v.z, s, -f1.x), fmaf(v.w, s, -f1.y));
    big = make_uint2(*reinterpret_cast<const uint32_t *>(&b0), *reinterpret_cast<const uint32_t *>(&b1));
    small = make_uint2(*reinterpret_cast<const uint32_t *>(&s0), *reinterpret_cast<const uint32_t *>(&s1));
}

// The held vectors into the B stage with the tile's scale; returns 1 / scale.
__device__ __forceinline__ float split_b(SharedStorage &s, const float4 (&v)[kLoads])
{
    float mx = 0.f;
    CUTE_UNROLL
    for (int i = 0; i < kLoads; ++i)
        mx = fmaxf(mx, fmaxf(fmaxf(fabsf(v[i].x), fabsf(v[i].y)), fmaxf(fabsf(v[i].z), fabsf(v[i].w))));
    const float sb = f16_scale(cta_max(s, mx));
    CUTE_UNROLL
    for (int i = 0; i < kLoads; ++i) {
        uint2 big, small;
        split4(v[i], sb, big, small);
        int n, k;
        b_coord(int(threadIdx.x), i, n, k);
        const int o = b_offset(n, k);
        *reinterpret_cast<uint2 *>(s.b_big + o) = big;
        *reinterpret_cast<uint2 *>(s.b_small + o) = small;
    }
    return 1.f / sb;
}

// Named barrier 1 + wg for warpgroup wg's 128 threads (constant ids: a barrier id in a
// register makes ptxas reserve all 16 and cost registers).
__device__ __forceinline__ void wg_barrier(int wg)
{
    switch (wg) {
    case 0: asm volatile("bar.sync 1, 128;\n" ::); break;
    case 1: asm volatile("bar.sync 2, 128;\n" ::); break;
    case 2: asm volatile("bar.sync 3, 128;\n" ::); break;
    default: asm volatile("bar.sync 4, 128;\n" ::); break;
    }
}

// CGR_STREAM_EPI: C's tile through shared memory. Each thread puts its accumulators (times u)
// at their places in its warpgroup's 64 x BN block; after the warpgroup's named barrier each
// warp writes whole rows, 16 bytes a lane (512 contiguous bytes a warp store at BN 128),
// finished with the epilogue's inputs there; a second barrier before the block is reused.
// (store_tile's 8-byte stores touch 8 rows a warp store, 2^20 floats apart at level 1 #87:
// its stores held the loop, ncu's source counters of lab round 66.)
template <class Acc, class Coord>
__device__ __forceinline__ void store_staged(const Params &p, SharedStorage &s, const Acc &acc, const Coord &tCcC,
                                             float u, int tn, int64_t row0)
{
    const int wg = int(threadIdx.x) / 128, t = int(threadIdx.x) % 128;
    float *buf = s.epi[wg];
    CUTE_UNROLL
    for (int i = 0; i < size(acc); ++i)
        buf[(get<0>(tCcC(i)) - 64 * wg) * kEpiLd + get<1>(tCcC(i)) - tn * kBN] = acc(i) * u;
    wg_barrier(wg);
    constexpr int kQ = kBN / 4;  // 16-byte vectors a row
#pragma unroll 4  // (unrolled whole: 255 registers and spills)
    for (int e = t; e < 64 * kQ; e += 128) {
        const int r = e / kQ, q = e % kQ, m = 64 * wg + r, n = tn * kBN + 4 * q;
        if (m < kM && n < kN) {  // (kN % 4 == 0: the whole vector)
            const float4 v = *reinterpret_cast<const float4 *>(buf + r * kEpiLd + 4 * q);
            float4 o;
            o.x = finish(p, v.x, row0 + m, m, n);
            o.y = finish(p, v.y, row0 + m, m, n + 1);
            o.z = finish(p, v.z, row0 + m, m, n + 2);
            o.w = finish(p, v.w, row0 + m, m, n + 3);
            store_c(reinterpret_cast<float4 *>(p.out + (row0 + m) * kN + n), o);
        }
    }
    wg_barrier(wg);  // read before the next tile's writes
}

__global__ void __launch_bounds__(kThreads, CGR_MINB) gemm_stream_kernel(const Params p)
{
    extern __shared__ char smem_raw[];
    SharedStorage &s = *reinterpret_cast<SharedStorage *>(
        (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
    int tile = int(blockIdx.x);
    if (tile >= int(kTilesAll))
        return;
    // B's rows past K stay zero (each tile writes rows below K only)
    if constexpr (kK < kKP) {
        for (int e = threadIdx.x; e < kBN * kKP; e += kThreads) {
            s.b_big[e] = half_t(0.f);
            s.b_small[e] = half_t(0.f);
        }
    }
    const float ua = split_a(p, s);

    TiledMma mma;
    auto thr = mma.get_slice(threadIdx.x);
    Tensor sAb = make_tensor(make_smem_ptr(s.a_big), SmemLayoutA{});
    Tensor sAs = make_tensor(make_smem_ptr(s.a_small), SmemLayoutA{});
    Tensor sBb = make_tensor(make_smem_ptr(s.b_big), SmemLayoutB{});
    Tensor sBs = make_tensor(make_smem_ptr(s.b_small), SmemLayoutB{});
    Tensor rAb = thr.make_fragment_A(thr.partition_A(sAb));  // (MMA,MMA_M,MMA_K) descriptors
    Tensor rAs = thr.make_fragment_A(thr.partition_A(sAs));
    Tensor rBb = thr.make_fragment_B(thr.partition_B(sBb));  // (MMA,MMA_N,MMA_K)
    Tensor rBs = thr.make_fragment_B(thr.partition_B(sBs));
    Tensor cC = make_identity_tensor(make_shape(Int<kM>{}, Int<kN>{}));
    constexpr int kKBlocks = (kK + 15) / 16;  // 16-deep blocks holding some of K (the rest are zeros)

    const int grid = int(gridDim.x);
    for (int j = 0; j < kStages - 1; ++j)
        copy_b(p, s, tile + j * grid, j);
    for (int it = 0; tile < int(kTilesAll); tile += grid, ++it) {
        int batch, tn;
        tile_at(tile, batch, tn);
        // STAGES - 1 tiles ahead, into the slot this thread read its vectors of the last tile from
        copy_b(p, s, tile + (kStages - 1) * grid, (it + kStages - 1) % kStages);
        asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 1));  // this tile's copies have landed
        float4 v[kLoads];
        CUTE_UNROLL
        for (int i = 0; i < kLoads; ++i)
            v[i] = s.ring[it % kStages][i * kThreads + threadIdx.x];
        // (the barrier in cta_max: every warpgroup is done with the stage's last tile)
        const float ub = split_b(s, v);
        cutlass::arch::fence_view_async_shared();  // the generic writes, seen by the WGMMAs
        __syncthreads();

        Tensor gcC = local_tile(cC, Shape<Int<kBM>, Int<kBN>>{}, make_coord(0, tn));  // (BM,BN) -> (m,n)
        Tensor tCcC = thr.partition_C(gcC);                                          // (MMA,MMA_M,MMA_N)
        Tensor acc = thr.partition_fragment_C(gcC);
        mma.accumulate_ = GMMA::ScaleOut::Zero;
        warpgroup_fence_operand(acc);
        warpgroup_arrive();
        CUTE_UNROLL
        for (int kb = 0; kb < kKBlocks; ++kb) {
            gemm(mma, rAs(_, _, kb), rBb(_, _, kb), acc);
            mma.accumulate_ = GMMA::ScaleOut::One;
            gemm(mma, rAb(_, _, kb), rBs(_, _, kb), acc);
            gemm(mma, rAb(_, _, kb), rBb(_, _, kb), acc);
        }
        warpgroup_commit_batch();
        warpgroup_wait<0>();
        warpgroup_fence_operand(acc);
        const float u = ua * ub;  // powers of two: exact
        if constexpr (kEpiStaged) {
            store_staged(p, s, acc, tCcC, u, tn, int64_t(batch) * kM);
        } else {
            CUTE_UNROLL
            for (int i = 0; i < size(acc); ++i)
                acc(i) *= u;
            store_tile(p, acc, tCcC, int64_t(batch) * kM);
        }
    }
}
#endif  // CGR_GEMM_EMULATE

}  // namespace cgr_gemm

#ifndef CGR_GEMM_EMULATE
CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *in, int n_in)
{
    (void)in; (void)n_in;
    return 0;
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace cgr_gemm;
    (void)workspace; (void)workspace_bytes;
    if (n_in != kNin || n_out != 1)
        return CG_UNSUPPORTED;
    if (!cgr::output_fits(out[0], CG_FLOAT32, CGR_OUT_NDIM, kOutShape))
        return CG_UNSUPPORTED;
    Params p{};
    if (!inputs_fit(in, p))
        return CG_UNSUPPORTED;
    if (int64_t(kBatch) * kM * kN == 0)
        return CG_OK;
    p.out = static_cast<float *>(out[0].data);
    // persistent: as many CTAs as the GPU holds at once, at most one a tile
    const int resident = cgr::resident_ctas(gemm_stream_kernel, kThreads, kSmemBytes);
    if (resident <= 0)
        return CG_LAUNCH_FAILED;
    const int grid = int64_t(resident) < kTilesAll ? resident : int(kTilesAll);
    gemm_stream_kernel<<<unsigned(grid), kThreads, kSmemBytes, stream>>>(p);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
#endif  // CGR_GEMM_EMULATE
