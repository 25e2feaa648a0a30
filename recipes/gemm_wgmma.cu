// recipes/gemm_wgmma.cu: an fp32 GEMM on Hopper's warpgroup MMAs (WGMMA, sm_90a) in
// split precision (3xTF32, or 3xFP16 with the operands split first), with a fused
// pointwise epilogue.
//
// C[b](m, n) = epi(sum_k A[b](m, k) * B[b](n, k), inputs at (row, n)), the problem and its
// parameters as in gemm_tc.cu (the same CGR_* names; the generator writes the same
// lines): A K-major or M-major, B K-major or N-major, a batch, a triangular mask, the
// epilogue inputs of gemm_inputs.cuh. No split-K and no row reduction here (gemm_tc.cu does
// those).
//
// Why a producer that splits: WGMMA reads TF32 operands only K-major from shared memory,
// and 3xTF32 needs each operand twice (big = x with its low 13 mantissa bits cleared,
// small = tf32(x - big)), so a tile cannot go from memory to the tensor cores untouched.
// One producer warpgroup loads A's and B's tiles (16-byte loads along the contiguous
// dimension, either major), splits every value and writes big and small into K-major
// 128-byte-swizzled tiles (GMMA::Layout_K_SW128_Atom: one atom is BK = 32 floats of 8
// rows), STAGES deep; then fence.proxy.async (the WGMMAs read through the async proxy)
// and an arrive on the stage's mbarrier. BM/64 consumer warpgroups each own 64 rows of
// the CTA tile: for each of a k-tile's 4 k-blocks of 8 they issue
// a_small*b_big, a_big*b_small, a_big*b_big (SS WGMMAs, m64 nBN k8), wait, release the
// stage to the producer (its empty mbarrier) and, with CGR_PROMOTE != 0, add the tile's
// products (a zeroed partial: the first WGMMA of a tile does not read its accumulator)
// to the accumulator in fp32: the tensor cores' adds truncate, and chained over a long K
// that biases results toward zero (recipes/tf32_mma.cuh). CGR_PROMOTE 0 chains into the
// accumulator (K <= 2048, as gemm_tc.cu). The epilogue is gemm_epi.cuh's, from the
// accumulators in registers.
//
// CGR_PRESPLIT 1 moves the split out of the product: presplit_kernel first writes each
// operand's big and small k-tiles into the workspace, zero-padded and already in the
// stages' swizzled layout, and the producer is one thread issuing a stage's four bulk
// copies (cp.async.bulk on the stage's full mbarrier); the consumers are unchanged.
//
// Shared memory a stage: (BM + BN) x 32 floats, twice (big, small): 64 KB at 128 x 128.
//
// Status (docs/perf.md): the in-kernel split (CGR_PRESPLIT 0) is correct but slower than
// gemm_tc.cu (H200, lab rounds 32-37: 1_Square 2.09-2.63 ms against 1.97; the one producer
// warpgroup's instruction stream is the limit). With the split before the product (H100,
// lab round 52) 1_Square takes 1.471 ms in 3xTF32 and 0.907 in 3xFP16 (CGR_PREC 2)
// against gemm_tc.cu's 1.758: the generator offers the 3xFP16 presplit form first where
// the product is long against its operands (src/recipe_gemm.c presplit_first).
#include <cutegen/abi.h>
#include <cute/tensor.hpp>
#include <cute/arch/mma_sm90.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cutlass/arch/barrier.h>
#include <cstring>
#include <type_traits>
#include "ops.cuh"  // recipe:inline

// recipe:params
#ifndef CGR_GENERATED
#define CGR_M 4096
#define CGR_N 4096
#define CGR_K 4096
#define CGR_BATCH 1
#define CGR_A 0             // input index of A
#define CGR_B 1             // input index of B
#define CGR_A_KMAJOR 1      // A(m,k) = a[m*LDA + k] (1) or a[k*LDA + m] (0)
#define CGR_B_KMAJOR 0      // B(n,k) = b[n*LDB + k] (1) or b[k*LDB + n] (0)
#define CGR_LDA 4096
#define CGR_LDB 4096
#define CGR_A_BSTRIDE 0     // elements between batches (0: shared by all batches)
#define CGR_B_BSTRIDE 0
#define CGR_VEC_A 4         // floats a load moves: 4 (16 bytes) or 1
#define CGR_VEC_B 4
#define CGR_BM 128          // 64 a consumer warpgroup
#define CGR_BN 128          // the WGMMA's N (32 to 256, a multiple of 16)
#define CGR_BK 32           // one 128-byte swizzle atom of floats
#define CGR_WM 2            // (gemm_tc.cu's warps; unused here)
#define CGR_WN 4
#define CGR_STAGES 3        // split (big, small) stages (and CGR_RAW_STAGES of raw copies before them)
#define CGR_MINB 1
#define CGR_SPLITK 1
#define CGR_GROUP 8         // tile-rows walked together
#define CGR_PREC 0          // 0 3xTF32 (1 TF32: big parts only; 2 3xFP16, presplit only)
#define CGR_PROMOTE 1       // 0: chain into the accumulator; else a k-tile's products promoted
#define CGR_STORE_STREAM 0
#define CGR_TRI 0
#define CGR_TRI_DIAG 0
#define CGR_ROWRED 0
#define CGR_NIN 2
#define CGR_INPUTS(X) X(0, CGR_GE_OPERAND) X(1, CGR_GE_OPERAND)
#define CGR_IN_NDIMS {2, 2}
#define CGR_IN_SHAPES {{4096, 4096}, {4096, 4096}}
#define CGR_IN_STRIDES {{4096, 1}, {4096, 1}}
#define CGR_OUT_NDIM 2
#define CGR_OUT_SHAPE {4096, 4096}
#define CGR_PROD_NDIM 2
#define CGR_PROD_SHAPE {4096, 4096}
__device__ __forceinline__ float cgr_pre(float r, const float *x) { (void)x; return r; }
__device__ __forceinline__ float cgr_epi(float r, const float *x) { (void)x; return r; }
#endif

// Lab options (bench/labs/2026-12-04-round3[2-7].sh, docs/perf.md). Not among them:
// setmaxnreg to move registers from the producer to the consumers, which made ptxas spill
// ~560 bytes (it compiles the whole kernel to the launch bound's registers regardless).
#ifndef CGR_WG_OVERLAP
#define CGR_WG_OVERLAP 0   // 1: two partials, a k-tile's WGMMAs issued before the last one's is promoted
#endif
#ifndef CGR_PRODUCERS
#define CGR_PRODUCERS 1    // 2: a producer warpgroup for A and one for B (512 threads; round 37)
#endif
#ifndef CGR_LAB_NO_LOAD
#define CGR_LAB_NO_LOAD 0  // lab diagnostic (wrong results): the producer only hands stages over
#endif
#ifndef CGR_LAB_NO_MMA
#define CGR_LAB_NO_MMA 0   // lab diagnostic (wrong results): the consumers issue no WGMMA
#endif
#ifndef CGR_PRESPLIT
#define CGR_PRESPLIT 0    // 1: a first kernel splits A and B into (big, small) tiles in the workspace, laid
#endif                    // out as the stages want them; the producer only bulk-copies them (one thread)
#ifndef CGR_PRESPLIT_SLAB
#define CGR_PRESPLIT_SLAB 1  // presplit: an operand stored along its rows split through shared-memory slabs
#endif                       // (0: a thread a 16-byte chunk straight from global memory, lab round 52's)
#ifndef CGR_TILE_SCALE
#define CGR_TILE_SCALE 0     // 3xFP16 presplit: 1, a scale a tile (row tile x k-tile) of each operand, found by
#endif                       // the split itself (no max pass) and undone on each k-tile's partial (lab form)
#ifndef CGR_TILE_HOLD
#define CGR_TILE_HOLD 0      // tile scales: 1, the tile read once, held (registers along k, shared memory along
#endif                       // the rows) from its max to its split, not read again from L2 (the generator's since
                             // lab round 54: 4-11% faster on the H100)
#ifndef CGR_MULTICAST
#define CGR_MULTICAST 1      // presplit: 2, CTAs in clusters of two along M (tiles tm, tm + 1 of one tn), each
#endif                       // loading half of the B tile they share, multicast to both (lab form)
#ifndef CGR_RAW_STAGES
#define CGR_RAW_STAGES 0  // 0: the producer loads each k-tile into registers; N > 0: cp.async copies
#endif                    // N - 1 k-tiles ahead into a raw ring (lab round 33: slower but for A M-major)

namespace cgr_gemm {

using namespace cute;

constexpr int kM = CGR_M, kN = CGR_N, kK = CGR_K, kBatch = CGR_BATCH;
constexpr int kBM = CGR_BM, kBN = CGR_BN, kBK = CGR_BK, kStages = CGR_STAGES;
constexpr int kConsumers = kBM / 64;              // warpgroups that multiply
constexpr int kProducers = CGR_PRODUCERS;         // and those that load
constexpr int kThreads = 128 * (kConsumers + kProducers);
constexpr bool kAKMajor = CGR_A_KMAJOR != 0, kBKMajor = CGR_B_KMAJOR != 0;
constexpr int kNin = CGR_NIN;
// CGR_PREC 2 (3xFP16, presplit only): big = fp16(x s), small = fp16(x s - big), s a power of
// two per operand that brings its largest |x| into [2^14, 2^15) (fp16's range), undone on
// the accumulator; the stages hold halves, two a 4-byte word, 64 of them a k-tile row.
constexpr bool kF16 = CGR_PREC == 2;
using Elem = std::conditional_t<kF16, half_t, tfloat32_t>;
constexpr int kEPW = kF16 ? 2 : 1;        // elements a 4-byte word
constexpr int kBKE = kBK * kEPW;          // a k-tile's depth in elements (one 128-byte row)
constexpr int kKTiles = (kK + kBKE - 1) / kBKE;

static_assert(kBK == 32, "BK: one 128-byte swizzle atom of 4-byte words");
static_assert(CGR_PREC == 0 || CGR_PREC == 1 || (kF16 && CGR_PRESPLIT), "precision: 3xTF32, TF32, or 3xFP16 presplit");
static_assert(kBM % 64 == 0 && kConsumers >= 1 && kConsumers <= 2, "BM: 64 or 128");
static_assert(kBN % 16 == 0 && kBN >= 32 && kBN <= 256, "BN: 32 to 256, a multiple of 16");
static_assert(kStages >= 2, "stages");
static_assert(kProducers == 1 || (kProducers == 2 && CGR_RAW_STAGES == 0), "two producers: A and B, from registers");
static_assert(!CGR_PRESPLIT || (kProducers == 1 && CGR_RAW_STAGES == 0), "presplit: one producer, no raw ring");
constexpr bool kTileScale = CGR_TILE_SCALE != 0;
static_assert(!kTileScale || (kF16 && CGR_PRESPLIT), "tile scales: 3xFP16 presplit");
constexpr bool kTileHold = CGR_TILE_HOLD != 0;
static_assert(!kTileHold || kTileScale, "CGR_TILE_HOLD 1 splits tiles with their own scales: it needs CGR_TILE_SCALE 1");
constexpr bool kPromote = CGR_PROMOTE != 0 || kTileScale;  // tile scales: undone on each k-tile's partial
// CGR_MULTICAST 2: a k-tile's B tile comes half from each CTA of the pair (bulk copies
// multicast to both), so the pair reads it from L2 once: 48 KB of L2 reads a CTA a 3xFP16
// k-tile instead of 64 at 128 x 128. The pair shares tn because tile_coord walks M first
// within groups of an even number of tile-rows.
constexpr int kCluster = CGR_MULTICAST;
static_assert(kCluster == 1 || (kCluster == 2 && CGR_PRESPLIT && CGR_TRI == 0 && CGR_GROUP % 2 == 0 &&
                                (CGR_M + CGR_BM - 1) / CGR_BM % 2 == 0 && CGR_BN % 16 == 0),
              "multicast: presplit, no triangle, an even number of tile-rows (and in a group), B halves of 8-row atoms");
static_assert(CGR_SPLITK == 1 && CGR_ROWRED == 0, "split-K and row reductions: gemm_tc.cu");
static_assert(CGR_VEC_A == 1 || CGR_VEC_A == 4, "vector width of A");
static_assert(CGR_VEC_B == 1 || CGR_VEC_B == 4, "vector width of B");

// ---------------------------------------------------------------- layouts

using SmemAtom = GMMA::Layout_K_SW128_Atom<Elem>;  // 8 rows x 128 bytes, swizzled
using SmemLayoutA = decltype(tile_to_shape(SmemAtom{}, make_shape(Int<kBM>{}, Int<kBKE>{}, Int<kStages>{})));
using SmemLayoutB = decltype(tile_to_shape(SmemAtom{}, make_shape(Int<kBN>{}, Int<kBKE>{}, Int<kStages>{})));
using MmaOp = decltype(GMMA::ss_op_selector<Elem, Elem, float, Shape<_64, Int<kBN>, Int<kF16 ? 16 : 8>>,
                                            GMMA::Major::K, GMMA::Major::K>());
using TiledMma = decltype(make_tiled_mma(MmaOp{}, Layout<Shape<Int<kConsumers>, _1, _1>>{}));

constexpr int kTileA = kBM * kBK, kTileB = kBN * kBK;  // 4-byte words of one stage's tile
constexpr int kRaw = CGR_RAW_STAGES;  // k-tiles the producer's copies run ahead
struct SharedStorage {
    alignas(1024) float a_big[kTileA * kStages];
    alignas(1024) float a_small[kTileA * kStages];
    alignas(1024) float b_big[kTileB * kStages];
    alignas(1024) float b_small[kTileB * kStages];
    uint64_t full[kStages];   // the producer's 128 threads have written the stage
    uint64_t empty[kStages];  // the consumers' threads are done with it
    alignas(16) float4 raw[kRaw > 0 ? kRaw : 1][kRaw > 0 ? (kTileA + kTileB) / 4 : 1];  // a thread's own slots
};
constexpr int kSmemBytes = int(sizeof(SharedStorage)) + 1024;  // + aligning the base
static_assert(kSmemBytes <= 227 * 1024, "shared memory: fewer stages");

// Where element (r, k) of a stage's tile lies, in floats from the stage's start: rows of
// 32 floats (128 bytes), the 16-byte chunk k/4 XORed with r mod 8 (Swizzle<3,4,3> on the
// byte address; the stage starts 1024-byte aligned). tests/cli/recipe_wgmma_layout.cpp
// checks it against CuTe's SmemLayoutA.
CUTE_HOST_DEVICE int smem_offset(int r, int k)
{
    return r * 32 + ((((k >> 2) ^ r) & 7) << 2) + (k & 3);
}

// The (row, k) of load i of producer thread t (0..127) in a ROWS x 32 tile: 4 values
// along k (K-major: 8 threads a row, 128 bytes) or along the rows (a warp covers 2
// chunks of 4 rows by 16 k, so that its 4-byte writes of one row offset fall on 32
// distinct banks). ROWS/16 loads a thread cover the tile once (the host test checks).
template <bool KMajor> CUTE_HOST_DEVICE void load_coord(int t, int i, int &r, int &k)
{
    if constexpr (KMajor) {
        const int idx = t + 128 * i;
        r = idx / 8;
        k = (idx % 8) * 4;
    } else {
        const int lane = t % 32, unit = t / 32 + 4 * i;  // units of 2 chunks x 16 k
        r = ((unit / 2) * 2 + lane % 2) * 4;
        k = (unit % 2) * 16 + lane / 2;
    }
}

// The presplit form's workspace (CGR_PRESPLIT): an operand of ROW_TILES tiles of ROWS rows
// a batch is stored as its (big, small) k-tiles, each in the stage's layout, so that a
// stage's tile is one contiguous bulk copy: tile (batch, row tile rt, k-tile kt) starts at
// presplit_tile (its big part; the small part follows, ROWS x 32 floats on), and element
// (row, k) of the batch lies at presplit_offset (in 4-byte words: with halves, element k
// is the k % 2nd half of that word). tests/cli/recipe_wgmma_layout.cpp checks both against
// CuTe's SmemLayoutA/B.
template <int ROWS, int ROW_TILES> CUTE_HOST_DEVICE int64_t presplit_tile(int batch, int rt, int kt)
{
    return ((int64_t(batch) * ROW_TILES + rt) * kKTiles + kt) * 2 * (ROWS * kBK);
}
template <int ROWS, int ROW_TILES> CUTE_HOST_DEVICE int64_t presplit_offset(int batch, int row, int k)
{
    return presplit_tile<ROWS, ROW_TILES>(batch, row / ROWS, k / kBKE) + smem_offset(row % ROWS, k % kBKE / kEPW);
}

// The presplit of an operand stored along its rows (M- or N-major; CGR_PRESPLIT_SLAB): a
// CTA of 256 threads takes a slab of kSlab rows by one k-tile through shared memory. It
// reads the slab along its rows (load e: k-row e / kSlab, row e % kSlab; a warp reads 32
// consecutive rows of one k, 128 bytes) and writes it as whole 128-byte rows of the stage
// layout (item e: row e / 8, chunk e % 8; 8 threads a row, its 8 chunks a permutation of
// the row's 128 bytes). A thread a chunk straight from global memory wrote 16 bytes into
// each of 32 lines a warp: lab round 52 (H100), #16 (both operands along their rows) 1.339
// ms against #17's 0.830 (the same product, both along k), and 1.1 ms apart in 3xTF32,
// which writes twice as much. Slab u of an operand is (batch, k-tile kt, slab s), s fastest
// (neighbouring CTAs read neighbouring rows of the same k). tests/cli/recipe_wgmma_layout.cpp
// checks that the slabs cover the padded operand once.
constexpr int kBatchA = CGR_A_BSTRIDE != 0 ? kBatch : 1, kBatchB = CGR_B_BSTRIDE != 0 ? kBatch : 1;
constexpr int kSlab = 64, kSlabLd = kSlab + 1;  // rows a slab; floats between k-rows in shared memory
constexpr int kSlabLoads = kBKE * kSlab / 256;  // a thread's loads a slab
constexpr int kSlabItems = kSlab * 8 / 256;     // and its 16-byte chunks written (of big and of small)
template <int ROWS, int ROWS_MAX> constexpr int slab_count()  // slabs of a batch's k-tile
{
    return ((ROWS_MAX + ROWS - 1) / ROWS * ROWS + kSlab - 1) / kSlab;
}
CUTE_HOST_DEVICE void slab_load_at(int e, int &kk, int &r)
{
    kk = e / kSlab;
    r = e % kSlab;
}
CUTE_HOST_DEVICE void slab_item_at(int e, int &r, int &c)
{
    r = e / 8;
    c = e % 8;
}
template <int SLABS> CUTE_HOST_DEVICE void slab_unit(int64_t u, int &batch, int &kt, int &s)
{
    const int64_t per_batch = int64_t(kKTiles) * SLABS;
    batch = int(u / per_batch);
    kt = int(u % per_batch / SLABS);
    s = int(u % SLABS);
}

// With tile scales (CGR_TILE_SCALE) the split's unit u of an operand is a tile, (batch,
// k-tile kt, row tile rt), rt fastest, and u is also where the tile's scale is kept.
template <int ROW_TILES> CUTE_HOST_DEVICE void scaled_tile_at(int64_t u, int &batch, int &kt, int &rt)
{
    const int64_t per_batch = int64_t(kKTiles) * ROW_TILES;
    batch = int(u / per_batch);
    kt = int(u % per_batch / ROW_TILES);
    rt = int(u % ROW_TILES);
}

#include "tf32_mma.cuh"  // recipe:inline
#include "gemm_inputs.cuh"  // recipe:inline
#include "gemm_epi.cuh"  // recipe:inline

#ifndef CGR_GEMM_EMULATE
// ---------------------------------------------------------------- the producer

// x -> (big, small) as split_tf32 (tf32_mma.cuh) does it for mma.sync fragments: big = x
// with its low 13 mantissa bits cleared (exact in TF32), small = tf32_rna(x - big).
// CGR_PREC 1: big = tf32_rna(x), no small.
__device__ __forceinline__ void split(float x, uint32_t &big, uint32_t &small)
{
    if constexpr (CGR_PREC == 0) {
        big = __float_as_uint(x) & 0xffffe000u;
        small = tf32_rna(x - __uint_as_float(big));
    } else {
        big = tf32_rna(x);
        small = 0;
    }
}

// A tile's values v (4 along k at (r, k0..k0+3)) split into the stage's big and small tiles.
__device__ __forceinline__ void put4_k(float *big, float *small, int r, int k0, float4 v)
{
    uint4 b, s;
    split(v.x, b.x, s.x);
    split(v.y, b.y, s.y);
    split(v.z, b.z, s.z);
    split(v.w, b.w, s.w);
    const int o = smem_offset(r, k0);
    *reinterpret_cast<uint4 *>(big + o) = b;
    if constexpr (CGR_PREC == 0)
        *reinterpret_cast<uint4 *>(small + o) = s;
}

// The same, 4 along the rows at (r0..r0+3, k).
__device__ __forceinline__ void put4_r(float *big, float *small, int r0, int k, float4 v)
{
    const float x[4] = { v.x, v.y, v.z, v.w };
    CUTE_UNROLL
    for (int j = 0; j < 4; ++j) {
        uint32_t b, s;
        split(x[j], b, s);
        const int o = smem_offset(r0 + j, k);
        reinterpret_cast<uint32_t *>(big)[o] = b;
        if constexpr (CGR_PREC == 0)
            reinterpret_cast<uint32_t *>(small)[o] = s;
    }
}

// 4 floats of an operand from global memory at (row, k): along k (KMAJOR) or along the
// rows, zeros past ROWS_MAX / K. g: the operand of this batch; LD its leading stride.
template <bool KMajor, int ROWS_MAX, int LD, int VEC>
__device__ __forceinline__ float4 load4(const float *g, int row, int k)
{
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if constexpr (KMajor) {
        if (row >= ROWS_MAX)
            return v;
        const float *p = g + int64_t(row) * LD + k;
        if (VEC == 4 && k + 3 < kK)
            return *reinterpret_cast<const float4 *>(p);
        if (k < kK) v.x = p[0];
        if (k + 1 < kK) v.y = p[1];
        if (k + 2 < kK) v.z = p[2];
        if (k + 3 < kK) v.w = p[3];
    } else {
        if (k >= kK)
            return v;
        const float *p = g + int64_t(k) * LD + row;
        if (VEC == 4 && row + 3 < ROWS_MAX)
            return *reinterpret_cast<const float4 *>(p);
        if (row < ROWS_MAX) v.x = p[0];
        if (row + 1 < ROWS_MAX) v.y = p[1];
        if (row + 2 < ROWS_MAX) v.z = p[2];
        if (row + 3 < ROWS_MAX) v.w = p[3];
    }
    return v;
}

// One operand's ROWS x 32 tile at (row0, k0), thread t's ROWS/16 16-byte loads
// (load_coord) into v, all issued before any is used.
template <bool KMajor, int ROWS, int ROWS_MAX, int LD, int VEC>
__device__ __forceinline__ void fetch_tile(const float *g, int row0, int k0, float4 (&v)[ROWS / 16], int t)
{
    CUTE_UNROLL
    for (int i = 0; i < ROWS / 16; ++i) {
        int r, k;
        load_coord<KMajor>(t, i, r, k);
        v[i] = load4<KMajor, ROWS_MAX, LD, VEC>(g, row0 + r, k0 + k);
    }
}

// Thread t's fetched values split into the stage's big and small tiles.
template <bool KMajor, int ROWS>
__device__ __forceinline__ void put_tile(const float4 (&v)[ROWS / 16], float *big, float *small, int t)
{
    CUTE_UNROLL
    for (int i = 0; i < ROWS / 16; ++i) {
        int r, k;
        load_coord<KMajor>(t, i, r, k);
        if constexpr (KMajor)
            put4_k(big, small, r, k, v[i]);
        else
            put4_r(big, small, r, k, v[i]);
    }
}

using Barrier = cutlass::arch::ClusterBarrier;

// 4 floats from global to shared memory, the first n of them read, the rest zeros: one
// 16-byte cp.async (VEC 4: the extent is a multiple of 4, so n is 0 or 4) or four of 4
// bytes (a source-size of 0 zero-fills).
template <int VEC> __device__ __forceinline__ void copy4(float4 *dst, const float *src, int n)
{
    const uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
    if constexpr (VEC == 4) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(4 * n));
    } else {
        CUTE_UNROLL
        for (int j = 0; j < 4; ++j)
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d + 4 * j),
                         "l"(j < n ? src + j : src), "r"(j < n ? 4 : 0));
    }
}

// How many of the 4 values at (row, k) exist (KMAJOR: along k; else along the rows), and
// where they start (an address inside the operand even when none does).
template <bool KMajor, int ROWS_MAX, int LD>
__device__ __forceinline__ int span4(const float *g, int row, int k, const float *&src)
{
    int n;
    if constexpr (KMajor)
        n = row < ROWS_MAX ? (kK - k < 4 ? kK - k : 4) : 0;
    else
        n = k < kK ? (ROWS_MAX - row < 4 ? ROWS_MAX - row : 4) : 0;
    n = n < 0 ? 0 : n;
    src = n == 0 ? g : KMajor ? g + int64_t(row) * LD + k : g + int64_t(k) * LD + row;
    return n;
}

// The copies of one operand's tile into thread t's raw slots (slot i of load_coord's i).
template <bool KMajor, int ROWS, int ROWS_MAX, int LD, int VEC>
__device__ __forceinline__ void copy_tile(const float *g, int row0, int k0, float4 *slots, int t)
{
    CUTE_UNROLL
    for (int i = 0; i < ROWS / 16; ++i) {
        int r, k;
        load_coord<KMajor>(t, i, r, k);
        const float *src;
        const int n = span4<KMajor, ROWS_MAX, LD>(g, row0 + r, k0 + k, src);
        copy4<VEC>(slots + i * 128 + t, src, n);
    }
}

// Thread t's raw values of one operand's tile (its slots), split into the stage's big and
// small tiles.
template <bool KMajor, int ROWS>
__device__ __forceinline__ void split_tile(const float4 *slots, float *big, float *small, int t)
{
    float4 v[ROWS / 16];
    CUTE_UNROLL
    for (int i = 0; i < ROWS / 16; ++i)
        v[i] = slots[i * 128 + t];
    put_tile<KMajor, ROWS>(v, big, small, t);
}

// Producer warpgroup pw (0 .. PRODUCERS-1), its thread t (0..127).
__device__ __forceinline__ void produce(const Params &p, SharedStorage &s, int batch, int tm, int tn, int pw, int t)
{
    const float *a = p.in[CGR_A] + int64_t(batch) * CGR_A_BSTRIDE;
    const float *b = p.in[CGR_B] + int64_t(batch) * CGR_B_BSTRIDE;
    // tile kt's copies into raw slot kt % kRaw (one cp.async group a tile, empty past the end)
    auto copies = [&](int kt) {
        if (kRaw > 0 && kt < kKTiles) {
            float4 *slots = s.raw[kt % (kRaw > 0 ? kRaw : 1)];
            copy_tile<kAKMajor, kBM, kM, CGR_LDA, CGR_VEC_A>(a, tm * kBM, kt * kBK, slots, t);
            copy_tile<kBKMajor, kBN, kN, CGR_LDB, CGR_VEC_B>(b, tn * kBN, kt * kBK, slots + kTileA / 4, t);
        }
        cute::cp_async_fence();
    };
    if constexpr (kRaw > 0)
        for (int kt = 0; kt < kRaw - 1; ++kt)
            copies(kt);
    // with two producer warpgroups, warpgroup 0 does A and warpgroup 1 B
    const bool do_a = kProducers == 1 || pw == 0, do_b = kProducers == 1 || pw == 1;
    for (int kt = 0; kt < kKTiles; ++kt) {
        const int stage = kt % kStages;
        // the tile's values on their way: copies into the raw ring (tile kt landed), or
        // loads into registers, all issued before the stage is waited for (two tiles in
        // flight spilled at the 168-register cap: lab round 34, 1_Square 8.66 ms)
        float4 va[kBM / 16], vb[kBN / 16];
        if constexpr (kRaw > 0) {
            copies(kt + kRaw - 1);
            cute::cp_async_wait<kRaw - 1>();  // this thread's own copies
        } else if constexpr (!CGR_LAB_NO_LOAD) {
            if (do_a)
                fetch_tile<kAKMajor, kBM, kM, CGR_LDA, CGR_VEC_A>(a, tm * kBM, kt * kBK, va, t);
            if (do_b)
                fetch_tile<kBKMajor, kBN, kN, CGR_LDB, CGR_VEC_B>(b, tn * kBN, kt * kBK, vb, t);
        }
        if (kt >= kStages)
            Barrier::wait(&s.empty[stage], ((kt / kStages) - 1) & 1);
        float *a_big = s.a_big + stage * kTileA, *a_small = s.a_small + stage * kTileA;
        float *b_big = s.b_big + stage * kTileB, *b_small = s.b_small + stage * kTileB;
        if constexpr (kRaw > 0) {
            const float4 *slots = s.raw[kt % (kRaw > 0 ? kRaw : 1)];
            split_tile<kAKMajor, kBM>(slots, a_big, a_small, t);
            split_tile<kBKMajor, kBN>(slots + kTileA / 4, b_big, b_small, t);
        } else if constexpr (!CGR_LAB_NO_LOAD) {
            if (do_a)
                put_tile<kAKMajor, kBM>(va, a_big, a_small, t);
            if (do_b)
                put_tile<kBKMajor, kBN>(vb, b_big, b_small, t);
        }
        cutlass::arch::fence_view_async_shared();  // the generic writes, seen by the WGMMAs
        Barrier::arrive(&s.full[stage]);
    }
}

// ---------------------------------------------------------------- the presplit form
// (CGR_PRESPLIT) The split is done once, before the product, by presplit_kernel: each
// operand becomes, in the workspace, its (big, small) k-tiles in exactly the stage's
// swizzled layout (smem_offset), zero-padded to whole tiles:
//   tile (batch, row tile, k-tile, part) at ((batch * ROW_TILES + rt) * kKTiles + kt) * 2 + part,
// each part ROWS x 32 4-byte words (floats, or pairs of halves). The producer is then one
// thread issuing a stage's four bulk copies (cp.async.bulk, completing on the stage's full
// mbarrier): no loads into registers, no split, no stores, none of what held the in-kernel
// producer back (round 36). The price: the operands read once more (twice in 3xFP16: the
// scale's max pass) and written again (8 bytes an element in 3xTF32, 4 in 3xFP16), and the
// workspace for it; src/recipe_gemm.c presplit_first weighs that against the product.
constexpr int64_t kWsA = int64_t(kBatchA) * kTilesM * kKTiles * 2 * kTileA;  // floats
constexpr int64_t kWsB = int64_t(kBatchB) * kTilesN * kKTiles * 2 * kTileB;

// Splits a 16-byte chunk's values x (4, or 8 halves x scale) into the big chunk at t and the
// small one a part (ROWS x 32 words) on.
template <int ROWS> __device__ __forceinline__ void store_split(const float *x, float *t, float scale)
{
    uint4 b, sm;
    uint32_t *bw = reinterpret_cast<uint32_t *>(&b), *sw = reinterpret_cast<uint32_t *>(&sm);
    if constexpr (kF16) {
        CUTE_UNROLL
        for (int j = 0; j < 4; ++j) {
            const float v0 = x[2 * j] * scale, v1 = x[2 * j + 1] * scale;
            const __half h0 = __float2half_rn(v0), h1 = __float2half_rn(v1);
            const __half l0 = __float2half_rn(v0 - __half2float(h0)), l1 = __float2half_rn(v1 - __half2float(h1));
            bw[j] = uint32_t(__half_as_ushort(h0)) | (uint32_t(__half_as_ushort(h1)) << 16);
            sw[j] = uint32_t(__half_as_ushort(l0)) | (uint32_t(__half_as_ushort(l1)) << 16);
        }
    } else {
        CUTE_UNROLL
        for (int j = 0; j < 4; ++j)
            split(x[j], bw[j], sw[j]);
    }
    *reinterpret_cast<uint4 *>(t) = b;
    *reinterpret_cast<uint4 *>(t + ROWS * kBK) = sm;
}

// The kE values (4, or 8 halves' worth) of row row from k on, of an operand (batch) at gb:
// K-major, 16-byte loads where it can; zero past the operand's rows and k.
template <bool KMajor, int ROWS_MAX, int LD, int VEC>
__device__ __forceinline__ void load_chunk(const float *gb, int row, int k, float *x)
{
    constexpr int kE = 4 * kEPW;
    CUTE_UNROLL
    for (int j = 0; j < kE; ++j)
        x[j] = 0.f;
    if (row >= ROWS_MAX)
        return;
    if constexpr (KMajor) {
        const float *q = gb + int64_t(row) * LD + k;
        if (VEC == 4 && k + kE - 1 < kK) {
            CUTE_UNROLL
            for (int j = 0; j < kE; j += 4) {
                const float4 v = *reinterpret_cast<const float4 *>(q + j);
                x[j] = v.x; x[j + 1] = v.y; x[j + 2] = v.z; x[j + 3] = v.w;
            }
        } else {
            CUTE_UNROLL
            for (int j = 0; j < kE; ++j)
                if (k + j < kK) x[j] = q[j];
        }
    } else {
        CUTE_UNROLL
        for (int j = 0; j < kE; ++j)
            if (k + j < kK) x[j] = gb[int64_t(k + j) * LD + row];
    }
}

// Thread idx of the operand's presplit: one 16-byte chunk of the stage's row (4 values
// along k, 8 with halves) of one row, read from G (K-major: 16-byte loads where it can;
// ROWS-major: consecutive threads on consecutive rows, so that each load is coalesced).
// PASS 0 folds the chunk's largest |x| into amax (3xFP16's scale); PASS 1 splits it and
// writes the big and small chunks.
template <int PASS, bool KMajor, int ROWS, int ROWS_MAX, int LD, int VEC, int64_t BSTRIDE>
__device__ __forceinline__ void presplit_one(const float *g, float *ws, int64_t idx, float scale, float &amax)
{
    constexpr int kRowTiles = (ROWS_MAX + ROWS - 1) / ROWS, kRowsP = kRowTiles * ROWS;
    constexpr int kChunks = kKTiles * 8;  // 16-byte chunks along the padded k
    constexpr int kE = 4 * kEPW;          // elements a chunk
    const int64_t per_batch = int64_t(kRowsP) * kChunks;
    const int batch = int(idx / per_batch);
    const int64_t rem = idx % per_batch;
    int row, c;
    if constexpr (KMajor) {
        row = int(rem / kChunks);
        c = int(rem % kChunks);
    } else {
        c = int(rem / kRowsP);
        row = int(rem % kRowsP);
    }
    const int k = c * kE;
    float x[kE];
    load_chunk<KMajor, ROWS_MAX, LD, VEC>(g + int64_t(batch) * BSTRIDE, row, k, x);
    if constexpr (PASS == 0) {
        CUTE_UNROLL
        for (int j = 0; j < kE; ++j)
            amax = fmaxf(amax, fabsf(x[j]));  // NaN: dropped here, kept by the product
        return;
    }
    store_split<ROWS>(x, ws + presplit_offset<ROWS, kRowTiles>(batch, row, k), scale);
}

// Rows row0 .. row0 + nrows (at most kSlab) of k-tile kt of an operand stored along its
// rows (see kSlab): loaded into sx (kBKE x kSlabLd floats), then split and written, a
// 16-byte chunk of big and of small a thread item. Every thread of the CTA calls it alike.
template <int ROWS, int ROWS_MAX, int LD, int64_t BSTRIDE>
__device__ __forceinline__ void presplit_slab(const float *g, float *ws, int batch, int kt, int row0, int nrows,
                                              float scale, float *sx)
{
    constexpr int kRowTiles = (ROWS_MAX + ROWS - 1) / ROWS;
    constexpr int kE = 4 * kEPW;
    const float *gb = g + int64_t(batch) * BSTRIDE;
    const int t = threadIdx.x;
    CUTE_UNROLL
    for (int i = 0; i < kSlabLoads; ++i) {
        int kk, r;
        slab_load_at(t + 256 * i, kk, r);
        const int row = row0 + r, k = kt * kBKE + kk;
        sx[kk * kSlabLd + r] = r < nrows && row < ROWS_MAX && k < kK ? gb[int64_t(k) * LD + row] : 0.f;
    }
    __syncthreads();
    CUTE_UNROLL
    for (int i = 0; i < kSlabItems; ++i) {
        int r, c;
        slab_item_at(t + 256 * i, r, c);
        if (r >= nrows)  // a slab past the operand's last row tile, or a tile's last one
            continue;
        float x[kE];
        CUTE_UNROLL
        for (int q = 0; q < kE; ++q)
            x[q] = sx[(c * kE + q) * kSlabLd + r];
        store_split<ROWS>(x, ws + presplit_offset<ROWS, kRowTiles>(batch, row0 + r, kt * kBKE + c * kE), scale);
    }
    __syncthreads();  // sx is read before the CTA's next slab loads it
}

// Slab u of an operand stored along its rows: (batch, kt, s) as slab_unit says.
template <int ROWS, int ROWS_MAX, int LD, int64_t BSTRIDE>
__device__ __forceinline__ void presplit_slab_unit(const float *g, float *ws, int64_t u, float scale, float *sx)
{
    constexpr int kRowsP = (ROWS_MAX + ROWS - 1) / ROWS * ROWS;
    int batch, kt, s;
    slab_unit<slab_count<ROWS, ROWS_MAX>()>(u, batch, kt, s);
    const int row0 = s * kSlab;
    presplit_slab<ROWS, ROWS_MAX, LD, BSTRIDE>(g, ws, batch, kt, row0, kRowsP - row0 < kSlab ? kRowsP - row0 : kSlab, scale, sx);
}

// The largest |x| of the CTA's values m, in every thread (red: 8 floats of shared memory).
__device__ __forceinline__ float block_max(float m, float *red)
{
    for (int o = 16; o > 0; o /= 2)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (threadIdx.x % 32 == 0)
        red[threadIdx.x / 32] = m;
    __syncthreads();
    m = red[0];
    for (int w = 1; w < 8; ++w)
        m = fmaxf(m, red[w]);
    __syncthreads();  // red is read before the next call writes it
    return m;
}

// (3xFP16's scale of an operand, f16_scale: recipes/tf32_mma.cuh)

constexpr int64_t kPresplitA = int64_t(kBatchA) * kTilesM * kBM * kKTiles * 8;  // threads
constexpr int64_t kPresplitB = int64_t(kBatchB) * kTilesN * kBN * kKTiles * 8;

// The two operands' largest |x| (3xFP16) after the split's area: two words, zeroed first;
// then, with tile scales, a scale a tile of A (kScalesA) and of B.
constexpr int64_t kWsAmax = kWsA + kWsB;
constexpr int64_t kWsScale = kWsAmax + 4;
constexpr int64_t kScalesA = int64_t(kBatchA) * kKTiles * kTilesM, kScalesB = int64_t(kBatchB) * kKTiles * kTilesN;
constexpr int64_t kWsFloats = kWsScale + (kTileScale ? kScalesA + kScalesB : 0);  // the workspace

// The presplit's work in CTA-sized units: an operand's slabs (PASS 1 of an operand stored
// along its rows, CGR_PRESPLIT_SLAB), or 256 consecutive threads of presplit_one.
constexpr bool kSlabA = CGR_PRESPLIT_SLAB && !kAKMajor, kSlabB = CGR_PRESPLIT_SLAB && !kBKMajor;
template <int PASS, bool SLAB> constexpr int64_t presplit_units(int64_t threads, int64_t slabs)
{
    return PASS == 1 && SLAB ? slabs : (threads + 255) / 256;
}
template <int PASS> constexpr int64_t kUnitsA = presplit_units<PASS, kSlabA>(kPresplitA, int64_t(kBatchA) * kKTiles * slab_count<kBM, kM>());
template <int PASS> constexpr int64_t kUnitsB = presplit_units<PASS, kSlabB>(kPresplitB, int64_t(kBatchB) * kKTiles * slab_count<kBN, kN>());

// PASS 0 (3xFP16 only): each operand's largest |x| into ws[kWsAmax + 0/1] (atomicMax on the
// bits: non-negative floats order as their bits do). PASS 1: the split. Grid-stride over
// the units of A, then B's (uniform within a CTA, as presplit_slab's barriers need).
template <int PASS> __global__ void __launch_bounds__(256) presplit_kernel(const Params p, float *ws)
{
    __shared__ float sx[PASS == 1 && (kSlabA || kSlabB) ? kBKE * kSlabLd : 1];
    float sa = 1.f, sb = 1.f, ma = 0.f, mb = 0.f;
    if (PASS == 1 && kF16) {
        sa = f16_scale(ws[kWsAmax]);
        sb = f16_scale(ws[kWsAmax + 1]);
    }
    for (int64_t u = blockIdx.x; u < kUnitsA<PASS> + kUnitsB<PASS>; u += gridDim.x) {
        if (u < kUnitsA<PASS>) {
            if constexpr (PASS == 1 && kSlabA) {
                presplit_slab_unit<kBM, kM, CGR_LDA, CGR_A_BSTRIDE>(p.in[CGR_A], ws, u, sa, sx);
            } else {
                const int64_t i = u * 256 + threadIdx.x;
                if (i < kPresplitA)
                    presplit_one<PASS, kAKMajor, kBM, kM, CGR_LDA, CGR_VEC_A, CGR_A_BSTRIDE>(p.in[CGR_A], ws, i, sa, ma);
            }
        } else {
            const int64_t v = u - kUnitsA<PASS>;
            if constexpr (PASS == 1 && kSlabB) {
                presplit_slab_unit<kBN, kN, CGR_LDB, CGR_B_BSTRIDE>(p.in[CGR_B], ws + kWsA, v, sb, sx);
            } else {
                const int64_t i = v * 256 + threadIdx.x;
                if (i < kPresplitB)
                    presplit_one<PASS, kBKMajor, kBN, kN, CGR_LDB, CGR_VEC_B, CGR_B_BSTRIDE>(p.in[CGR_B], ws + kWsA, i, sb, mb);
            }
        }
    }
    if constexpr (PASS == 0) {
        for (int o = 16; o > 0; o /= 2) {
            ma = fmaxf(ma, __shfl_xor_sync(0xffffffffu, ma, o));
            mb = fmaxf(mb, __shfl_xor_sync(0xffffffffu, mb, o));
        }
        if (threadIdx.x % 32 == 0) {
            atomicMax(reinterpret_cast<unsigned *>(ws + kWsAmax), __float_as_uint(ma));
            atomicMax(reinterpret_cast<unsigned *>(ws + kWsAmax + 1), __float_as_uint(mb));
        }
    }
}

// Tile u of an operand, with its own scale (CGR_TILE_SCALE): its largest |x| first (a
// warp reading 128 contiguous bytes, along k or along the rows), its scale into scales[u],
// then the split, reading the tile again (from L2, just read): K-major, a 16-byte chunk a
// thread item (8 threads a 128-byte row); along the rows, by slabs. One read of the operand
// from memory, where the operand-wide scale needs a max pass before the split.
template <bool KMajor, int ROWS, int ROWS_MAX, int LD, int VEC, int64_t BSTRIDE>
__device__ __forceinline__ void presplit_scaled_tile(const float *g, float *ws, float *scales, int64_t u, float *sx,
                                                     float *red)
{
    constexpr int kRowTiles = (ROWS_MAX + ROWS - 1) / ROWS;
    constexpr int kE = 4 * kEPW;
    int batch, kt, rt;
    scaled_tile_at<kRowTiles>(u, batch, kt, rt);
    const float *gb = g + int64_t(batch) * BSTRIDE;
    const int t = threadIdx.x;
    float m = 0.f;
#pragma unroll 8
    for (int i = 0; i < (ROWS * kBKE + 255) / 256; ++i) {
        const int e = t + 256 * i;
        const int r = KMajor ? e / kBKE : e % ROWS, k = KMajor ? e % kBKE : e / ROWS;
        const int row = rt * ROWS + r, kk = kt * kBKE + k;
        if (e < ROWS * kBKE && row < ROWS_MAX && kk < kK)
            m = fmaxf(m, fabsf(gb[KMajor ? int64_t(row) * LD + kk : int64_t(kk) * LD + row]));  // NaN: dropped, kept by the product
    }
    const float scale = f16_scale(block_max(m, red));
    if (t == 0)
        scales[u] = scale;
    if constexpr (KMajor) {
        CUTE_UNROLL
        for (int i = 0; i < (ROWS * 8 + 255) / 256; ++i) {
            int r, c;
            slab_item_at(t + 256 * i, r, c);  // row r of the tile, chunk c: 8 threads a row
            if (r >= ROWS)
                continue;
            const int row = rt * ROWS + r, k = kt * kBKE + c * kE;
            float x[kE];
            load_chunk<true, ROWS_MAX, LD, VEC>(gb, row, k, x);
            store_split<ROWS>(x, ws + presplit_offset<ROWS, kRowTiles>(batch, row, k), scale);
        }
    } else {
        for (int s0 = 0; s0 < ROWS; s0 += kSlab)
            presplit_slab<ROWS, ROWS_MAX, LD, BSTRIDE>(g, ws, batch, kt, rt * ROWS + s0, ROWS - s0 < kSlab ? ROWS - s0 : kSlab,
                                                      scale, sx);
    }
}

// Tile u of an operand, with its own scale, read from memory once (CGR_TILE_HOLD): K-major,
// each thread loads its items' 16-byte chunks (8 threads a 256-byte row of the tile) into
// registers, and splits them from there once the CTA has the tile's max; along the rows, a
// warp reads consecutive rows of one k (16 bytes a thread where the rows come in 4s) into the
// whole tile in shared memory (sx: kBKE x (ROWS + 1) floats), then 8 threads a row split it
// from there. The items' mapping is the K-major one for both
// (tests/cli/recipe_wgmma_layout.cpp). presplit_scaled_tile reads each tile twice, the
// second time from L2: ncu (H100, #16) put that kernel's DRAM at 62% busy.
template <bool KMajor, int ROWS, int ROWS_MAX, int LD, int VEC, int64_t BSTRIDE>
__device__ __forceinline__ void presplit_held_tile(const float *g, float *ws, float *scales, int64_t u, float *sx,
                                                   float *red)
{
    constexpr int kRowTiles = (ROWS_MAX + ROWS - 1) / ROWS;
    constexpr int kE = 4 * kEPW, kItems = (ROWS * 8 + 255) / 256, kLd = ROWS + 1;
    int batch, kt, rt;
    scaled_tile_at<kRowTiles>(u, batch, kt, rt);
    const float *gb = g + int64_t(batch) * BSTRIDE;
    const int t = threadIdx.x;
    float m = 0.f;  // NaN: dropped from the max, kept by the product
    float x[KMajor ? kItems : 1][kE];
    if constexpr (KMajor) {
        CUTE_UNROLL
        for (int i = 0; i < kItems; ++i) {
            int r, c;
            slab_item_at(t + 256 * i, r, c);
            load_chunk<true, ROWS_MAX, LD, VEC>(gb, r < ROWS ? rt * ROWS + r : ROWS_MAX, kt * kBKE + c * kE, x[i]);
            CUTE_UNROLL
            for (int q = 0; q < kE; ++q)
                m = fmaxf(m, fabsf(x[i][q]));
        }
    } else if constexpr (VEC == 4) {  // rows in 4s (the rows' extent, LD and the batch stride): 16-byte loads
        constexpr int kQ = ROWS / 4;    // a warp reads 128 rows of one k, 512 bytes
        static_assert(ROWS % 4 == 0, "rows in 4s");
        CUTE_UNROLL
        for (int i = 0; i < (kQ * kBKE + 255) / 256; ++i) {
            const int e = t + 256 * i, r = e % kQ * 4, k = e / kQ;
            const int row = rt * ROWS + r, kk = kt * kBKE + k;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (e < kQ * kBKE && row < ROWS_MAX && kk < kK)
                v = *reinterpret_cast<const float4 *>(gb + int64_t(kk) * LD + row);
            if (e < kQ * kBKE) {
                float *q = sx + k * kLd + r;
                q[0] = v.x; q[1] = v.y; q[2] = v.z; q[3] = v.w;
            }
            m = fmaxf(m, fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w))));
        }
    } else {
        CUTE_UNROLL
        for (int i = 0; i < (ROWS * kBKE + 255) / 256; ++i) {
            const int e = t + 256 * i, r = e % ROWS, k = e / ROWS;
            const int row = rt * ROWS + r, kk = kt * kBKE + k;
            const float v = e < ROWS * kBKE && row < ROWS_MAX && kk < kK ? gb[int64_t(kk) * LD + row] : 0.f;
            if (e < ROWS * kBKE)
                sx[k * kLd + r] = v;
            m = fmaxf(m, fabsf(v));
        }
    }
    const float scale = f16_scale(block_max(m, red));  // its barrier also publishes sx
    if (t == 0)
        scales[u] = scale;
    CUTE_UNROLL
    for (int i = 0; i < kItems; ++i) {
        int r, c;
        slab_item_at(t + 256 * i, r, c);
        if (r >= ROWS)
            continue;
        if constexpr (!KMajor) {
            CUTE_UNROLL
            for (int q = 0; q < kE; ++q)
                x[0][q] = sx[(c * kE + q) * kLd + r];
        }
        const int row = rt * ROWS + r, k = kt * kBKE + c * kE;
        store_split<ROWS>(x[KMajor ? i : 0], ws + presplit_offset<ROWS, kRowTiles>(batch, row, k), scale);
    }
    if constexpr (!KMajor)
        __syncthreads();  // sx is read before the CTA's next tile fills it
}

// The split with tile scales: A's tiles, then B's, grid-stride.
__global__ void __launch_bounds__(256, 3) presplit_scaled_kernel(const Params p, float *ws)  // 3 CTAs an SM at least
{
    constexpr int kHeldRows = (kAKMajor ? 0 : kBM) > (kBKMajor ? 0 : kBN) ? kBM : kBN;  // the larger along its rows
    static_assert(!kTileHold || (kAKMajor && kBKMajor) || kBKE * (kHeldRows + 1) * 4 <= 48 * 1024,
                  "a tile held along its rows: at most 48 KB of static shared memory (BM, BN <= 128)");
    __shared__ float sx[kAKMajor && kBKMajor ? 1 : kTileHold ? kBKE * (kHeldRows + 1) : kBKE * kSlabLd];
    __shared__ float red[8];
    for (int64_t u = blockIdx.x; u < kScalesA + kScalesB; u += gridDim.x) {
        if constexpr (kTileHold) {
            if (u < kScalesA)
                presplit_held_tile<kAKMajor, kBM, kM, CGR_LDA, CGR_VEC_A, CGR_A_BSTRIDE>(p.in[CGR_A], ws, ws + kWsScale, u, sx, red);
            else
                presplit_held_tile<kBKMajor, kBN, kN, CGR_LDB, CGR_VEC_B, CGR_B_BSTRIDE>(p.in[CGR_B], ws + kWsA,
                                                                                         ws + kWsScale + kScalesA, u - kScalesA, sx, red);
        } else if (u < kScalesA)
            presplit_scaled_tile<kAKMajor, kBM, kM, CGR_LDA, CGR_VEC_A, CGR_A_BSTRIDE>(p.in[CGR_A], ws, ws + kWsScale, u, sx, red);
        else
            presplit_scaled_tile<kBKMajor, kBN, kN, CGR_LDB, CGR_VEC_B, CGR_B_BSTRIDE>(p.in[CGR_B], ws + kWsA, ws + kWsScale + kScalesA,
                                                                                       u - kScalesA, sx, red);
    }
}

// With tile scales: 1 / (the scales of k-tile kt's tiles of A and B), for its partial.
__device__ __forceinline__ float tile_unscale(const float *ws, int batch, int tm, int tn, int kt)
{
    const int ba = kBatchA > 1 ? batch : 0, bb = kBatchB > 1 ? batch : 0;
    const float sa = __ldg(ws + kWsScale + (int64_t(ba) * kKTiles + kt) * kTilesM + tm);
    const float sb = __ldg(ws + kWsScale + kScalesA + (int64_t(bb) * kKTiles + kt) * kTilesN + tn);
    return (1.f / sa) * (1.f / sb);  // exact (powers of two); sa * sb could overflow to inf
}

// BYTES from global src to shared dst in both CTAs of the cluster (the same offset in each),
// completing on the mbarrier at bar's offset in each (CGR_MULTICAST 2).
__device__ __forceinline__ void bulk_copy_multicast(const void *src, uint64_t *bar, void *dst, int bytes)
{
    const uint16_t mask = 0x3;
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1], %2, [%3], %4;\n"
                 :
                 : "r"(cute::cast_smem_ptr_to_uint(dst)), "l"(src), "r"(bytes), "r"(cute::cast_smem_ptr_to_uint(bar)), "h"(mask)
                 : "memory");
}

// The producer of the presplit form: thread 0 of the producer warpgroup, a stage's four
// tiles by bulk copies on its full mbarrier (initialised for this one arrival).
__device__ __forceinline__ void produce_presplit(const float *ws, SharedStorage &s, int batch, int tm, int tn)
{
    using TxBarrier = cutlass::arch::ClusterTransactionBarrier;
    const int ba = kBatchA > 1 ? batch : 0, bb = kBatchB > 1 ? batch : 0;
    constexpr int kParts = CGR_PREC == 1 ? 1 : 2;
    for (int kt = 0; kt < kKTiles; ++kt) {
        const int stage = kt % kStages;
        if (kt >= kStages)
            Barrier::wait(&s.empty[stage], ((kt / kStages) - 1) & 1);
        TxBarrier::arrive_and_expect_tx(&s.full[stage], kParts * (kTileA + kTileB) * 4);  // (B: both halves)
        const float *ta = ws + presplit_tile<kBM, kTilesM>(ba, tm, kt);
        const float *tb = ws + kWsA + presplit_tile<kBN, kTilesN>(bb, tn, kt);
        cute::SM90_BULK_COPY_G2S::copy(ta, &s.full[stage], s.a_big + stage * kTileA, kTileA * 4);
        if constexpr (kParts == 2)
            cute::SM90_BULK_COPY_G2S::copy(ta + kTileA, &s.full[stage], s.a_small + stage * kTileA, kTileA * 4);
        if constexpr (kCluster == 1) {
            cute::SM90_BULK_COPY_G2S::copy(tb, &s.full[stage], s.b_big + stage * kTileB, kTileB * 4);
            if constexpr (kParts == 2)
                cute::SM90_BULK_COPY_G2S::copy(tb + kTileB, &s.full[stage], s.b_small + stage * kTileB, kTileB * 4);
        } else {  // this CTA's half of B, to the same place in both CTAs, counted on both full barriers
            const int h = int(cute::block_rank_in_cluster()) * (kTileB / 2);
            bulk_copy_multicast(tb + h, &s.full[stage], s.b_big + stage * kTileB + h, kTileB * 2);
            if constexpr (kParts == 2)
                bulk_copy_multicast(tb + kTileB + h, &s.full[stage], s.b_small + stage * kTileB + h, kTileB * 2);
        }
    }
}

// ---------------------------------------------------------------- the consumers

__device__ __forceinline__ void consume(const Params &p, SharedStorage &s, const float *ws, int batch, int tm, int tn, int t)
{
    TiledMma mma;
    auto thr = mma.get_slice(t);
    Tensor sAb = make_tensor(make_smem_ptr(reinterpret_cast<Elem *>(s.a_big)), SmemLayoutA{});
    Tensor sAs = make_tensor(make_smem_ptr(reinterpret_cast<Elem *>(s.a_small)), SmemLayoutA{});
    Tensor sBb = make_tensor(make_smem_ptr(reinterpret_cast<Elem *>(s.b_big)), SmemLayoutB{});
    Tensor sBs = make_tensor(make_smem_ptr(reinterpret_cast<Elem *>(s.b_small)), SmemLayoutB{});
    Tensor rAb = thr.make_fragment_A(thr.partition_A(sAb));  // (MMA,MMA_M,MMA_K,PIPE) descriptors
    Tensor rAs = thr.make_fragment_A(thr.partition_A(sAs));
    Tensor rBb = thr.make_fragment_B(thr.partition_B(sBb));  // (MMA,MMA_N,MMA_K,PIPE)
    Tensor rBs = thr.make_fragment_B(thr.partition_B(sBs));

    Tensor cC = make_identity_tensor(make_shape(Int<kM>{}, Int<kN>{}));
    Tensor gcC = local_tile(cC, Shape<Int<kBM>, Int<kBN>>{}, make_coord(tm, tn));  // (BM,BN) -> (m,n)
    Tensor tCcC = thr.partition_C(gcC);                                           // (MMA,MMA_M,MMA_N)
    Tensor acc = thr.partition_fragment_C(gcC);
    clear(acc);
    auto part = make_fragment_like(acc);

    // a k-tile's WGMMAs into target, committed as one batch
    auto issue = [&](auto &target, int kt) {
        const int stage = kt % kStages;
        Barrier::wait(&s.full[stage], (kt / kStages) & 1);
        if constexpr (kPromote)
            mma.accumulate_ = GMMA::ScaleOut::Zero;
        warpgroup_fence_operand(target);
        warpgroup_arrive();
        CUTE_UNROLL
        for (int kb = 0; kb < (CGR_LAB_NO_MMA ? 0 : int(size<2>(rAb))); ++kb) {
            if constexpr (CGR_PREC != 1) {
                gemm(mma, rAs(_, _, kb, stage), rBb(_, _, kb, stage), target);
                mma.accumulate_ = GMMA::ScaleOut::One;
                gemm(mma, rAb(_, _, kb, stage), rBs(_, _, kb, stage), target);
            }
            gemm(mma, rAb(_, _, kb, stage), rBb(_, _, kb, stage), target);
            mma.accumulate_ = GMMA::ScaleOut::One;
        }
        warpgroup_commit_batch();
    };
    // k-tile kt's WGMMAs done (the caller waited): its stage back to the producer, its
    // products (promoted) into the accumulator
    // (u: with tile scales, the k-tile's unscale, loaded before the wait)
    auto retire = [&](auto &target, int kt, float u) {
        warpgroup_fence_operand(target);
        if constexpr (kCluster == 1) {
            Barrier::arrive(&s.empty[kt % kStages]);
        } else {  // the stage free in both CTAs: the pair's producers both write it (B halves)
            __syncwarp();
            if (t % 32 == 0) {
                Barrier::arrive(&s.empty[kt % kStages]);
                Barrier::arrive(&s.empty[kt % kStages], cute::block_rank_in_cluster() ^ 1u, 1u);
            }
        }
        if constexpr (kTileScale) {
            CUTE_UNROLL
            for (int i = 0; i < size(acc); ++i)
                acc(i) = fmaf(target(i), u, acc(i));
        } else if constexpr (kPromote) {
            CUTE_UNROLL
            for (int i = 0; i < size(acc); ++i)
                acc(i) += target(i);
        }
    };
    auto unscale = [&](int kt) {
        if constexpr (kTileScale)
            return tile_unscale(ws, batch, tm, tn, kt);
        else
            return 1.f;
    };
    if (!tile_skipped(tm, tn)) {
        if constexpr (CGR_WG_OVERLAP && kPromote) {
            // two partials: tile kt's WGMMAs run while tile kt - 1's are promoted
            auto part1 = make_fragment_like(acc);
            float u0 = 1.f, u1 = 1.f;
            for (int kt = 0; kt < kKTiles; kt += 2) {
                issue(part, kt);
                u0 = unscale(kt);
                if (kt > 0) {
                    warpgroup_wait<1>();
                    retire(part1, kt - 1, u1);
                }
                if (kt + 1 < kKTiles) {
                    issue(part1, kt + 1);
                    u1 = unscale(kt + 1);
                    warpgroup_wait<1>();
                    retire(part, kt, u0);
                }
            }
            warpgroup_wait<0>();
            if (kKTiles % 2)
                retire(part, kKTiles - 1, u0);
            else
                retire(part1, kKTiles - 1, u1);
        } else {
            auto &target = *(kPromote ? &part : &acc);
            for (int kt = 0; kt < kKTiles; ++kt) {
                issue(target, kt);
                const float u = unscale(kt);
                warpgroup_wait<0>();
                retire(target, kt, u);
            }
        }
    }
    if constexpr (kF16 && !kTileScale) {  // the operands' scales undone (powers of two: exact)
        const float u = (1.f / f16_scale(ws[kWsAmax])) * (1.f / f16_scale(ws[kWsAmax + 1]));
        CUTE_UNROLL
        for (int i = 0; i < size(acc); ++i)
            acc(i) *= u;
    }
    store_tile(p, acc, tCcC, int64_t(batch) * kM);
}

__global__ void __launch_bounds__(kThreads, 1)
#if CGR_MULTICAST > 1
__cluster_dims__(CGR_MULTICAST, 1, 1)
#endif
gemm_kernel(const Params p, const float *ws)
{
    extern __shared__ char smem_raw[];
    SharedStorage &s = *reinterpret_cast<SharedStorage *>(
        (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
    int tm, tn;
    tile_coord(blockIdx.x, tm, tn);
    const int batch = blockIdx.y;
    const int wg = threadIdx.x / 128;
    if (threadIdx.x == 0) {
        for (int i = 0; i < kStages; ++i) {
            Barrier::init(&s.full[i], CGR_PRESPLIT ? 1 : 128 * kProducers);
            // the consumers' threads; with multicast, a thread a consumer warp of either CTA
            Barrier::init(&s.empty[i], kCluster == 1 ? 128 * kConsumers : 2 * 4 * kConsumers);
        }
        cutlass::arch::fence_barrier_init();
    }
    if constexpr (kCluster == 1) {
        __syncthreads();
    } else {  // the peer's barriers are set up before its copies and arrivals reach them
        cute::cluster_arrive_relaxed();
        cute::cluster_wait();
    }
    if (wg < kProducers) {
        if constexpr (CGR_PRESPLIT != 0) {
            if (threadIdx.x == 0 && !tile_skipped(tm, tn))
                produce_presplit(ws, s, batch, tm, tn);
        } else if (!tile_skipped(tm, tn)) {
            produce(p, s, batch, tm, tn, wg, kProducers == 1 ? int(threadIdx.x) : int(threadIdx.x % 128));
        }
    } else {
        consume(p, s, ws, batch, tm, tn, threadIdx.x - 128 * kProducers);
    }
    if constexpr (kCluster > 1)
        cute::cluster_sync();  // no CTA leaves while its peer may still arrive on its barriers
}
#endif  // CGR_GEMM_EMULATE

}  // namespace cgr_gemm

#ifndef CGR_GEMM_EMULATE
CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *in, int n_in)
{
    (void)in; (void)n_in;
    return CGR_PRESPLIT ? size_t(cgr_gemm::kWsFloats) * sizeof(float) : 0;
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace cgr_gemm;
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
    static_assert(kBatch <= 65535, "grid limits");
    if (cudaFuncSetAttribute(gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes) != cudaSuccess)
        return CG_LAUNCH_FAILED;
    float *ws = nullptr;
#if CGR_PRESPLIT
    // (#if, not if constexpr: cg_forward is no template, so a discarded branch would still
    // name presplit_kernel's instantiations, and nvcc warns that they are not defined)
    if (workspace == nullptr || workspace_bytes < size_t(kWsFloats) * sizeof(float) ||
        reinterpret_cast<uintptr_t>(workspace) % 16 != 0)
        return CG_BAD_WORKSPACE;
    ws = static_cast<float *>(workspace);
    // grid-stride over the units: at most 16 CTAs of 256 an SM of the largest Hopper (132 SMs)
    constexpr int64_t kMaxBlocks = 132 * 16;
    auto blocks = [](int64_t units) { return int(units < kMaxBlocks ? units : kMaxBlocks); };
#if CGR_TILE_SCALE  // 3xFP16, a scale a tile: one pass
    presplit_scaled_kernel<<<blocks(kScalesA + kScalesB), 256, 0, stream>>>(p, ws);
#else
#if CGR_PREC == 2  // 3xFP16: the operands' largest |x| first, for their scales
    if (cudaMemsetAsync(ws + kWsAmax, 0, 2 * sizeof(float), stream) != cudaSuccess)
        return CG_LAUNCH_FAILED;
    presplit_kernel<0><<<blocks(kUnitsA<0> + kUnitsB<0>), 256, 0, stream>>>(p, ws);
#endif
    presplit_kernel<1><<<blocks(kUnitsA<1> + kUnitsB<1>), 256, 0, stream>>>(p, ws);
#endif
#else
    (void)workspace; (void)workspace_bytes;
#endif
    gemm_kernel<<<dim3(kTiles, kBatch), kThreads, kSmemBytes, stream>>>(p, ws);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
#endif  // CGR_GEMM_EMULATE
