// recipes/pool.cu: max or average pooling over the last 1-3 dims (nn.MaxPool1d/2d/3d,
// nn.AvgPool1d/2d/3d, their functional forms, adaptive pooling whose output divides the
// input), computed as ATen does; optionally a pointwise prologue (the pooled operand) and
// an epilogue with constants (on the pooled value).
//
// The operand is viewed as (NC, ID, IH, IW), contiguous; 1-D and 2-D pooling are 3-D
// pooling whose missing dims have size 1 (window 1, stride 1, no padding). Output
// (NC, OD, OH, OW). Output element (od, oh, ow) reduces the input at
// (od SD - PD + kd DD, oh SH - PH + kh DH, ow SW - PW + kw DW) for kd, kh, kw in the
// window, where positions outside the input are padding: -inf for max (never wins),
// nothing for average (the divisor below says whether it counts).
//
// A CTA computes a TILE_H x TILE_W tile of one (nc, od) plane. Its THREADS threads are
// TX across the tile's columns, THREADS / TX row groups down: thread (ty, tx) owns ROWS
// consecutive output rows and COLS columns tx, tx + TX, ... (TX apart, so a warp's loads
// and stores are contiguous). For each window tap kd along D (a plane outside the input is
// skipped by the whole CTA), a thread walks the ROWS_T input rows its outputs' windows
// touch; in each row it reduces the KW taps of each of its columns (the horizontal
// window), then folds that into every one of its outputs whose window holds the row
// (max and sum are separable): an input row read once serves ROWS output rows.
// Input rows come from either
//   SMEM = 1: shared memory, filled first by the whole CTA with 16-byte loads (coalesced;
//     each element of the tile is read once from L2) with the padding written as the
//     identity; when SW is even, columns are stored permuted by their residue mod SW (a
//     CuTe layout), so threads reading every SW-th column hit distinct banks, and a tap's
//     offset is known at compile time but for the thread's column; or
//   SMEM = 0: global memory directly, through the read-only path (__ldg), bounds checked
//     per element; overlapping windows of neighbouring threads meet in L1.
// Max propagates NaN (a NaN in the window wins, as in ATen). Average divides the sum by
// divisor_override, else by the window clipped to the padded input (count_include_pad)
// or to the input, as ATen's avg_pool2d/3d kernels; an empty window gives 0. Math in
// float, one rounding at the store. Indices into global memory are 64-bit.
//
// Named parameters (CGR_*) are written by src/recipe_gen.c in place of `recipe:params`;
// the defaults make this file compile on its own (KernelBench's 42_Max_Pooling_2D).
// With CGR_POOL_EMULATE defined, the kernel and cg_forward are left out and
// cgr_pool::emulate() runs the same tile code on the host, CTA after CTA, for the
// emulation test (tests/cli/t0702-recipe-pool-emu.sh).
#include <cutegen/abi.h>
#include <cute/tensor_impl.hpp>  // tensors, layouts: CuTe's algorithms and atoms (cute/tensor.hpp) would
                                 // double the build (docs/build.md)
#include <type_traits>
#include <cstdint>
#include "ops.cuh"  // recipe:inline

// recipe:params
#ifndef CGR_GENERATED
#define CGR_T float                 // element type of the operand and the output
#define CGR_DTYPE CG_FLOAT32
#define CGR_POOL_MAX 1              // 1 max, 0 average
#define CGR_NC 2048                 // the leading dims, multiplied
#define CGR_ID 1                    // input, output, window, stride, padding, dilation
#define CGR_OD 1                    // along D, H and W
#define CGR_KD 1
#define CGR_SD 1
#define CGR_PD 0
#define CGR_DD 1
#define CGR_IH 512
#define CGR_OH 511
#define CGR_KH 4
#define CGR_SH 1
#define CGR_PH 1
#define CGR_DH 1
#define CGR_IW 512
#define CGR_OW 511
#define CGR_KW 4
#define CGR_SW 1
#define CGR_PW 1
#define CGR_DW 1
#define CGR_COUNT_PAD 1             // average: padding counts in the divisor
#define CGR_DIVISOR 0               // average: divisor_override, 0 none
#define CGR_THREADS 256             // threads per CTA
#define CGR_TX 128                  // threads across the output's last dim
#define CGR_COLS 4                  // output columns per thread (TX apart)
#define CGR_ROWS 4                  // output rows per thread
#define CGR_SMEM 1                  // stage the input rows in shared memory
#define CGR_NIN 1
#define CGR_INPUTS(X) X(0, float, CGR_FULL, CG_FLOAT32)
#define CGR_IN_NDIMS {4}
#define CGR_IN_SHAPES {{32, 64, 512, 512}}
#define CGR_OUT_NDIM 4
#define CGR_OUT_SHAPE {32, 64, 511, 511}
__device__ __forceinline__ float cgr_pro(const float *x) { return x[0]; }
__device__ __forceinline__ float cgr_epi(float r) { return r; }
#endif

namespace cgr_pool {

using namespace cute;
using T = CGR_T;
constexpr bool kMax = CGR_POOL_MAX != 0;
constexpr int64_t kNC = CGR_NC;
constexpr int kID = CGR_ID, kIH = CGR_IH, kIW = CGR_IW;
constexpr int kOD = CGR_OD, kOH = CGR_OH, kOW = CGR_OW;
constexpr int kKD = CGR_KD, kKH = CGR_KH, kKW = CGR_KW;
constexpr int kSD = CGR_SD, kSH = CGR_SH, kSW = CGR_SW;
constexpr int kPD = CGR_PD, kPH = CGR_PH, kPW = CGR_PW;
constexpr int kDD = CGR_DD, kDH = CGR_DH, kDW = CGR_DW;
constexpr bool kCountPad = CGR_COUNT_PAD != 0;
constexpr int kDivisor = CGR_DIVISOR;
constexpr int kThreads = CGR_THREADS, kTX = CGR_TX, kTY = kThreads / kTX;
constexpr int kCols = CGR_COLS, kRows = CGR_ROWS;
constexpr bool kSmem = CGR_SMEM != 0;
constexpr int kNin = CGR_NIN;

// The tile, and the grid of tiles: (w tile, h tile, od, nc), w fastest, so that CTAs
// running together share input rows (and, along D, planes) in L2.
constexpr int kTileW = kTX * kCols, kTileH = kTY * kRows;
constexpr int kNTW = (kOW + kTileW - 1) / kTileW, kNTH = (kOH + kTileH - 1) / kTileH;
constexpr int64_t kBlocks = kNC * kOD * kNTH * kNTW;
// Input rows under one thread's ROWS output rows, and under the CTA's tile; its columns.
constexpr int kRowsT = (kRows - 1) * kSH + (kKH - 1) * kDH + 1;
constexpr int kRowsIn = (kTileH - 1) * kSH + (kKH - 1) * kDH + 1;
constexpr int kColsIn = (kTileW - 1) * kSW + (kKW - 1) * kDW + 1;
// A staged row is loaded in CHUNKS 16-byte chunks from the one holding the tile's first
// input column (up to LD - 1 columns early). Odd SW: the row is stored as loaded (the
// stage starts at that chunk, 16-byte shared stores) and readers add the offset of the
// first column (SHIFT, the same for the whole CTA). Even SW: stored from the first column
// exactly, permuted by residue mod SW (PERM), so that a tap's residue is a compile-time
// constant and the columns a warp reads, SW apart, are consecutive floats.
constexpr int kLd = 16 / int(sizeof(T));
constexpr int kChunks = (kColsIn + 2 * (kLd - 1)) / kLd;
constexpr int kPerm = kSW % 2 == 0 ? kSW : 1;
constexpr bool kAlignStage = kPerm == 1;
constexpr int kStageCols = kAlignStage ? kChunks * kLd : kColsIn;  // columns a staged row keeps
constexpr int kCQ = (kStageCols + kPerm - 1) / kPerm;             // columns of one residue
constexpr int kRowS = kPerm * kCQ;                                 // a staged row, in floats
constexpr int kSmemElems = kSmem ? kRowsIn * kRowS : 1;
constexpr int kFillN = kRowsIn * kChunks;                       // chunks to stage
constexpr int kFillIters = (kFillN + kThreads - 1) / kThreads;  // ... a thread
// 16-byte loads need rows that start on 16 bytes: the whole row a multiple of 16 bytes.
constexpr bool kVecRows = kIW % kLd == 0;
constexpr float kIdent = kMax ? -INFINITY : 0.f;

static_assert(kThreads % 32 == 0 && kThreads <= 1024, "threads per CTA");
static_assert(kTX % 32 == 0 && kThreads % kTX == 0, "TX: a multiple of 32 dividing the CTA");
static_assert(kCols >= 1 && kRows >= 1 && kCols * kRows <= 64, "outputs per thread");
static_assert(kSmemElems * sizeof(float) <= 48 * 1024, "static shared memory");
static_assert(!kAlignStage || kRowS % 4 == 0, "16-byte shared stores");
static_assert(kBlocks >= 1 && kBlocks <= 0x7fffffff, "CTAs in one grid dim");
static_assert(!kMax || kDivisor == 0, "divisor_override is average's");
static_assert(int64_t(kIH) * kIW < (int64_t(1) << 31) && int64_t(kOH) * kOW < (int64_t(1) << 31),
              "a plane's offsets are 32-bit");

using cgr::CGR_UNUSED; using cgr::CGR_FULL; using cgr::CGR_SCALAR; using cgr::CGR_BCAST;
template <int I> struct In;
#define CGR_DEF_IN(i, ctype, k, dt) \
    template <> struct In<i> { using type = ctype; static constexpr int kind = k; static constexpr int dtype = dt; };
CGR_INPUTS(CGR_DEF_IN)
#undef CGR_DEF_IN

#define CGR_COUNT_FULL(i, ctype, k, dt) + (k == cgr::CGR_FULL ? 1 : 0)
constexpr int kNFull = 0 CGR_INPUTS(CGR_COUNT_FULL);  // inputs read whole (the operand's)
#undef CGR_COUNT_FULL
static_assert(kNFull >= 1, "the operand reads an input");
// Chunks a thread loads before storing any (bytes in flight), within ~32 registers of
// raw data: a 16-byte load is 4 registers an input; an element load 1.
constexpr int clamp_batch(int b) { return b < 1 ? 1 : b > kFillIters ? kFillIters : b; }
constexpr int kBatchVec = clamp_batch(8 / kNFull);
constexpr int kBatchScalar = clamp_batch(32 / (kLd * kNFull));

template <class F> __device__ __forceinline__ void for_inputs(F &&f) { cgr::for_each_index<kNin>(f); }

struct Args {
    const void *in[kNin > 0 ? kNin : 1];
    T *out;
};

// ------------------------------------------------------------------ loads

// Through the read-only (non-coherent) path on the GPU; a plain load on the host.
template <class E> __device__ __forceinline__ E ldg(const E *p)
{
#if defined(__CUDA_ARCH__)
    return __ldg(p);
#else
    return *p;
#endif
}

__device__ __forceinline__ float combine(float acc, float v)
{
    if constexpr (kMax)
        return cgr::maximum(acc, v);  // NaN wins, as ATen's max pooling
    else
        return acc + v;
}

// The operand (the prologue over the inputs) at flat element e of the (NC, ID, IH, IW) view.
__device__ __forceinline__ float load_at(const Args &a, int64_t e)
{
    float x[kNin > 0 ? kNin : 1];
    for_inputs([&](auto ic) {
        constexpr int I = decltype(ic)::value;
        using E = typename In<I>::type;
        const E *p = static_cast<const E *>(a.in[I]);
        if constexpr (In<I>::kind == CGR_FULL)
            x[I] = cgr::to_f(ldg(p + e));
        else if constexpr (In<I>::kind == CGR_SCALAR)
            x[I] = cgr::to_f(p[0]);
        else
            x[I] = 0.f;
    });
    return cgr_pro(x);
}

// One staged chunk's raw elements, per input (only FULL inputs' entries are used).
struct Raw {
    alignas(16) T v[kNin > 0 ? kNin : 1][kLd];
};

// Loads the chunk at flat element e (16-byte aligned when vec): whole, or the elements
// whose column iw + j lies in the row (the rest are not read).
template <bool kVec>
__device__ __forceinline__ void load_raw(const Args &a, int64_t e, int iw, Raw &r)
{
    for_inputs([&](auto ic) {
        constexpr int I = decltype(ic)::value;
        if constexpr (In<I>::kind == CGR_FULL) {
            const T *p = static_cast<const T *>(a.in[I]) + e;
            if constexpr (kVec) {
                *reinterpret_cast<uint4 *>(r.v[I]) = ldg(reinterpret_cast<const uint4 *>(p));
            } else {
                CUTE_UNROLL
                for (int j = 0; j < kLd; ++j)
                    if (unsigned(iw + j) < unsigned(kIW))
                        r.v[I][j] = ldg(p + j);
            }
        }
    });
}

// The operand (the prologue) at element j of a loaded chunk.
__device__ __forceinline__ float operand_of(const Args &a, const Raw &r, int j)
{
    float x[kNin > 0 ? kNin : 1];
    for_inputs([&](auto ic) {
        constexpr int I = decltype(ic)::value;
        using E = typename In<I>::type;
        if constexpr (In<I>::kind == CGR_FULL)
            x[I] = cgr::to_f(r.v[I][j]);
        else if constexpr (In<I>::kind == CGR_SCALAR)
            x[I] = cgr::to_f(static_cast<const E *>(a.in[I])[0]);
        else
            x[I] = 0.f;
    });
    return cgr_pro(x);
}

// ------------------------------------------------------------------ tiles

struct Tile {
    int64_t nc;
    int od, oh0, ow0;  // the plane and the tile's first output row and column
};

__device__ __forceinline__ Tile tile_of(int64_t b)
{
    auto c = idx2crd(int(b), make_shape(Int<kNTW>{}, Int<kNTH>{}, Int<kOD>{}, int(kNC)));
    Tile t;
    t.ow0 = int(get<0>(c)) * kTileW;
    t.oh0 = int(get<1>(c)) * kTileH;
    t.od = int(get<2>(c));
    t.nc = int64_t(get<3>(c));
    return t;
}

// The staged rows: (row, column) -> float offset, column c at (c % PERM, c / PERM): with
// an even stride, the columns a warp reads (SW apart) are consecutive floats.
__device__ __forceinline__ auto smem_layout()
{
    return make_layout(make_shape(Int<kRowsIn>{}, make_shape(Int<kPerm>{}, Int<kCQ>{})),
                       make_stride(Int<kRowS>{}, make_stride(Int<kCQ>{}, Int<1>{})));
}

// Rounds down to a multiple of LD (c may be negative: the left padding).
__device__ __forceinline__ int floor_ld(int c)
{
    return c >= 0 ? c / kLd * kLd : -((-c + kLd - 1) / kLd) * kLd;
}

// The tile's first input row and column (negative in the left/top padding).
__device__ __forceinline__ int tile_ih0(const Tile &t) { return t.oh0 * kSH - kPH; }
__device__ __forceinline__ int tile_iw0(const Tile &t) { return t.ow0 * kSW - kPW; }

// Stages the tile's input rows of plane id: thread tid's share of the chunks, a batch at
// a time, every load of a batch issued before any of its conversions and stores (bytes in
// flight). A chunk is loaded whole when its row is 16-byte aligned and it lies in the row
// (rows are LD-multiples, so a chunk is wholly in or out), else element by element.
template <bool kVec>
__device__ __forceinline__ void fill(const Args &a, const Tile &t, int id, int tid, float *sm)
{
    constexpr bool kWhole = kVec && kVecRows;
    constexpr int kB = kWhole ? kBatchVec : kBatchScalar;
    Tensor s = make_tensor(make_smem_ptr(sm), smem_layout());
    const int ih0 = tile_ih0(t), ca = floor_ld(tile_iw0(t));
    const int off = kAlignStage ? 0 : tile_iw0(t) - ca;  // staged column 0 is input column ca + off
    const int64_t plane = (t.nc * kID + id) * kIH;         // the plane's first row
    for (int i0 = 0; i0 < kFillIters; i0 += kB) {
        Raw raw[kB];
        CUTE_UNROLL
        for (int b = 0; b < kB; ++b) {
            const int i = (i0 + b) * kThreads + tid;
            const int r = i / kChunks, ch = i % kChunks;
            const int ih = ih0 + r, iw = ca + ch * kLd;
            const bool row_in = i < kFillN && ih >= 0 && ih < kIH;
            const bool whole = iw >= 0 && iw + kLd <= kIW;
            if (row_in && (!kWhole || whole))
                load_raw<kWhole>(a, (plane + ih) * kIW + iw, iw, raw[b]);
        }
        CUTE_UNROLL
        for (int b = 0; b < kB; ++b) {
            const int i = (i0 + b) * kThreads + tid;
            if (i >= kFillN)
                continue;
            const int r = i / kChunks, ch = i % kChunks;
            const int ih = ih0 + r, iw = ca + ch * kLd;
            const bool row_in = ih >= 0 && ih < kIH;
            float v[kLd];
            CUTE_UNROLL
            for (int j = 0; j < kLd; ++j)
                v[j] = row_in && unsigned(iw + j) < unsigned(kIW) ? operand_of(a, raw[b], j) : kIdent;
            if constexpr (kAlignStage) {
                float4 *dst = reinterpret_cast<float4 *>(&s(r, ch * kLd));
                CUTE_UNROLL
                for (int q = 0; q < kLd / 4; ++q)
                    dst[q] = make_float4(v[4 * q], v[4 * q + 1], v[4 * q + 2], v[4 * q + 3]);
            } else {
                CUTE_UNROLL
                for (int j = 0; j < kLd; ++j) {
                    const int col = ch * kLd + j - off;
                    if (col >= 0 && col < kStageCols)
                        s(r, col) = v[j];
                }
            }
        }
    }
}

// Where a thread's window rows come from: (rr, j, kw) is tap kw of output column j of the
// tile in the thread's window row rr (0 .. ROWS_T - 1), i.e. input column
// j SW + kw DW from the tile's first one.
struct SmemRows {
    const float *sm;
    int row0;   // the thread's first window row in the stage
    int shift;  // the tile's first column in the stage (0 when permuted)
    __device__ __forceinline__ bool row_ok(int) const { return true; }
    __device__ __forceinline__ float operator()(int rr, int j, int kw) const
    {
        // column j SW + kw DW as its (residue, quotient) coordinate: no division at run time
        const int tap = kw * kDW;
        return make_tensor(make_smem_ptr(sm), smem_layout())(
            row0 + rr, make_coord(tap % kPerm, j * (kSW / kPerm) + tap / kPerm + shift));
    }
};

struct GlobalRows {
    const Args *a;
    int64_t plane;  // the plane's first row
    int ih0, iw0;   // the thread's first window row; the tile's first column
    __device__ __forceinline__ bool row_ok(int rr) const { return ih0 + rr >= 0 && ih0 + rr < kIH; }
    __device__ __forceinline__ float operator()(int rr, int j, int kw) const
    {
        const int iw = iw0 + j * kSW + kw * kDW;
        return unsigned(iw) < unsigned(kIW) ? load_at(*a, (plane + ih0 + rr) * kIW + iw) : kIdent;
    }
};

// Folds one D tap's window rows into the thread's ROWS x COLS accumulators.
template <class Rows>
__device__ __forceinline__ void accumulate(const Rows &src, int tx, float (&acc)[kRows][kCols])
{
    CUTE_UNROLL
    for (int rr = 0; rr < kRowsT; ++rr) {
        if (!src.row_ok(rr))
            continue;  // padding: the identity
        float h[kCols];
        CUTE_UNROLL
        for (int c = 0; c < kCols; ++c) {
            h[c] = kIdent;
            CUTE_UNROLL
            for (int kw = 0; kw < kKW; ++kw)
                h[c] = combine(h[c], src(rr, tx + c * kTX, kw));
        }
        CUTE_UNROLL
        for (int t = 0; t < kRows; ++t) {
            const int rel = rr - t * kSH;  // the row's place in output row t's window
            if (rel >= 0 && rel % kDH == 0 && rel / kDH < kKH) {
                CUTE_UNROLL
                for (int c = 0; c < kCols; ++c)
                    acc[t][c] = combine(acc[t][c], h[c]);
            }
        }
    }
}

// Both ends of a window along one dim, as ATen's avg_pool: n_pad within the padded
// input, n_in within the input.
__device__ __forceinline__ void window(int o, int s, int p, int k, int in, int &n_pad, int &n_in)
{
    int lo = o * s - p;
    int hi = lo + k < in + p ? lo + k : in + p;
    n_pad = hi - lo;
    lo = lo > 0 ? lo : 0;
    hi = hi < in ? hi : in;
    n_in = hi - lo;
}

__device__ __forceinline__ float finish(float acc, int od, int oh, int ow)
{
    if constexpr (kMax) {
        return acc;
    } else {
        int pd, id, ph, ih, pw, iw;
        window(od, kSD, kPD, kKD, kID, pd, id);
        window(oh, kSH, kPH, kKH, kIH, ph, ih);
        window(ow, kSW, kPW, kKW, kIW, pw, iw);
        if (id <= 0 || ih <= 0 || iw <= 0)
            return 0.f;
        const int div = kDivisor ? kDivisor : kCountPad ? pd * ph * pw : id * ih * iw;
        return acc / float(div);
    }
}

__device__ __forceinline__ void init(float (&acc)[kRows][kCols])
{
    CUTE_UNROLL
    for (int t = 0; t < kRows; ++t)
        CUTE_UNROLL
        for (int c = 0; c < kCols; ++c)
            acc[t][c] = kIdent;
}

// The D tap kd of the tile's plane, or -1 when it is padding.
__device__ __forceinline__ int plane_of(const Tile &t, int kd)
{
    const int id = t.od * kSD - kPD + kd * kDD;
    return id >= 0 && id < kID ? id : -1;
}

__device__ __forceinline__ void accumulate_tap(const Args &a, const Tile &t, int id, int tid,
                                               const float *sm, float (&acc)[kRows][kCols])
{
    const int tx = tid % kTX, ty = tid / kTX;
    if constexpr (kSmem) {
        const int shift = kAlignStage ? tile_iw0(t) - floor_ld(tile_iw0(t)) : 0;
        accumulate(SmemRows{ sm, ty * kRows * kSH, shift }, tx, acc);
    } else {
        accumulate(GlobalRows{ &a, (t.nc * kID + id) * kIH, tile_ih0(t) + ty * kRows * kSH, tile_iw0(t) },
                   tx, acc);
    }
}

__device__ __forceinline__ void store(const Args &a, const Tile &t, int tid, const float (&acc)[kRows][kCols])
{
    const int tx = tid % kTX, ty = tid / kTX;
    T *out = a.out + (t.nc * kOD + t.od) * int64_t(kOH) * kOW;
    CUTE_UNROLL
    for (int r = 0; r < kRows; ++r) {
        const int oh = t.oh0 + ty * kRows + r;
        CUTE_UNROLL
        for (int c = 0; c < kCols; ++c) {
            const int ow = t.ow0 + tx + c * kTX;
            if (oh < kOH && ow < kOW)
                out[oh * kOW + ow] = cgr::from_f<T>(cgr_epi(finish(acc[r][c], t.od, oh, ow)));
        }
    }
}

#ifndef CGR_POOL_EMULATE
template <bool kVec>
__global__ void __launch_bounds__(kThreads) pool_kernel(const Args a)
{
    __shared__ __align__(16) float sm[kSmemElems];
    const Tile t = tile_of(blockIdx.x);
    const int tid = threadIdx.x;
    float acc[kRows][kCols];
    init(acc);
    for (int kd = 0; kd < kKD; ++kd) {
        const int id = plane_of(t, kd);
        if (id < 0)
            continue;  // the same for the whole CTA
        if constexpr (kSmem) {
            fill<kVec>(a, t, id, tid, sm);
            __syncthreads();
        }
        accumulate_tap(a, t, id, tid, sm, acc);
        if constexpr (kSmem)
            __syncthreads();
    }
    store(a, t, tid, acc);
}
#endif

static const int64_t kOutShape[] = CGR_OUT_SHAPE;
static const int kInNdim[] = CGR_IN_NDIMS;
static const int64_t kInShape[][CG_MAX_DIMS] = CGR_IN_SHAPES;

// cg_forward's checks: counts, dtypes, shapes, contiguity; *aligned: every operand input
// 16-byte aligned (else the staged path loads element by element).
inline int prepare(const cg_tensor *in, int n_in, cg_tensor *out, int n_out, Args &a, bool &aligned)
{
    if (n_in != kNin || n_out != 1)
        return CG_UNSUPPORTED;
    const cg_tensor &y = out[0];
    if (!cgr::output_fits(y, CGR_DTYPE, CGR_OUT_NDIM, kOutShape))
        return CG_UNSUPPORTED;
    a.out = static_cast<T *>(y.data);
    aligned = true;
    bool ok = true;
#define CGR_CHECK_IN(i, ctype, k, dt) \
    a.in[i] = in[i].data; \
    ok = ok && cgr::input_fits(in[i], k, dt, kInNdim[i], kInShape[i], &aligned) && k != CGR_BCAST;
    CGR_INPUTS(CGR_CHECK_IN)
#undef CGR_CHECK_IN
    return ok ? CG_OK : CG_UNSUPPORTED;
}

#ifdef CGR_POOL_EMULATE
// The kernel on the host: CTA after CTA, each phase for all threads before the next (what
// the barriers guarantee on the GPU). vec: the 16-byte staged loads, as when aligned.
struct ThreadAcc { float v[kRows][kCols]; };
inline int emulate(const cg_tensor *in, int n_in, cg_tensor *out, int n_out, bool vec)
{
    Args a{};
    bool aligned;
    int rc = prepare(in, n_in, out, n_out, a, aligned);
    if (rc != CG_OK)
        return rc;
    static float sm[kSmemElems];
    static ThreadAcc acc[kThreads];
    for (int64_t b = 0; b < kBlocks; ++b) {
        const Tile t = tile_of(b);
        for (int tid = 0; tid < kThreads; ++tid)
            init(acc[tid].v);
        for (int kd = 0; kd < kKD; ++kd) {
            const int id = plane_of(t, kd);
            if (id < 0)
                continue;
            if constexpr (kSmem) {
                for (int i = 0; i < kSmemElems; ++i)
                    sm[i] = NAN;  // anything not filled would show
                for (int tid = 0; tid < kThreads; ++tid) {
                    if (vec && aligned)
                        fill<true>(a, t, id, tid, sm);
                    else
                        fill<false>(a, t, id, tid, sm);
                }
            }
            for (int tid = 0; tid < kThreads; ++tid)
                accumulate_tap(a, t, id, tid, sm, acc[tid].v);
        }
        for (int tid = 0; tid < kThreads; ++tid)
            store(a, t, tid, acc[tid].v);
    }
    return CG_OK;
}
#endif

}  // namespace cgr_pool

#ifndef CGR_POOL_EMULATE
CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace cgr_pool;
    (void)workspace; (void)workspace_bytes;
    Args a{};
    bool aligned;
    const int rc = prepare(in, n_in, out, n_out, a, aligned);
    if (rc != CG_OK)
        return rc;
    if (aligned)
        pool_kernel<true><<<unsigned(kBlocks), kThreads, 0, stream>>>(a);
    else
        pool_kernel<false><<<unsigned(kBlocks), kThreads, 0, stream>>>(a);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
#endif
