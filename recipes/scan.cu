// recipes/scan.cu: a scan (cumsum, cumprod) along one dimension: inclusive or exclusive,
// forward or from the dimension's end, of a pointwise prologue of same-shaped inputs (any
// float dtype, or bool: a mask), then a pointwise epilogue that may read the inputs again.
//
// The operand is viewed as (OUTER, R, INNER), contiguous, R the scanned dimension:
// - INNER == 1 (the last dim): one CTA a row (persistent over rows). Each pass over the row
//   covers UNROLL sub-tiles of THREADS x 4 elements: a thread loads one 4-element vector of
//   each sub-tile (all UNROLL loads in flight; a warp's loads are 512 contiguous bytes),
//   scans its 4 in registers, the warp scans the threads' totals with shuffles, and warp 0
//   scans the warps' totals in shared memory: two barriers a pass, whatever UNROLL is. The
//   running total of earlier passes is the carry. Reversed scans read each vector from the
//   row's end (the same bytes, lanes in descending order) and keep the rest unchanged.
//   SPLIT > 1 (few long rows): each row is cut into SPLIT chunks, a CTA a chunk: a first
//   kernel reduces each chunk to its total, a warp a row scans the totals into each chunk's
//   carry-in (the workspace), and the scan kernel starts each chunk from its carry: x is
//   read twice, but every SM works.
// - INNER > 1 (a middle or first dim): a thread a column (coalesced along INNER), scanning
//   down R with UNROLL loads in flight.
// Sums and products accumulate in float (as PyTorch's CUDA scan does for fp16/bf16),
// rounded once into the output type.
//
// Named parameters (CGR_*) are written by src/recipe_gen.c in place of `recipe:params`;
// the defaults make this file compile on its own (cumsum over the last dim of 128x4000).
#include <cutegen/abi.h>
#include <cute/config.hpp>  // CUTE_UNROLL only: cute/tensor.hpp costs seconds a build (docs/build.md)
#include <type_traits>
#include <cstdint>
#include "ops.cuh"  // recipe:inline

// recipe:params
#ifndef CGR_GENERATED
#define CGR_OUT_T float             // output element type
#define CGR_OUT_DTYPE CG_FLOAT32
#define CGR_SCAN_OP 0               // 0 sum, 1 product
#define CGR_REVERSE 0               // 1: from the dim's end
#define CGR_EXCLUSIVE 0             // 1: element j holds the scan of the elements before j
#define CGR_EPI_READS 0             // 1: the epilogue reads the inputs
#define CGR_OUTER 128
#define CGR_R 4000
#define CGR_INNER 1
#define CGR_THREADS 256             // threads per CTA
#define CGR_UNROLL 4                // rows: sub-tiles a pass; columns: loads in flight
#define CGR_SPLIT 1                 // rows: CTAs a row (> 1: chunk totals through the workspace)
#define CGR_NIN 1
#define CGR_INPUTS(X) X(0, float, CGR_FULL, CG_FLOAT32)
#define CGR_IN_NDIMS {2}
#define CGR_IN_SHAPES {{128, 4000}}
#define CGR_OUT_NDIM 2
#define CGR_OUT_SHAPE {128, 4000}
__device__ __forceinline__ float cgr_pro(const float *x) { return x[0]; }
__device__ __forceinline__ float cgr_epi(float r, const float *x) { (void)x; return r; }
#endif

namespace cgr_scan {

using OutT = CGR_OUT_T;
constexpr bool kProd = CGR_SCAN_OP == 1;
constexpr bool kReverse = CGR_REVERSE != 0;
constexpr bool kExclusive = CGR_EXCLUSIVE != 0;
constexpr bool kEpiReads = CGR_EPI_READS != 0;
constexpr int64_t kOuter = CGR_OUTER, kR = CGR_R, kInner = CGR_INNER;
constexpr int kThreads = CGR_THREADS;
constexpr int kU = CGR_UNROLL;
constexpr int kSplit = CGR_INNER == 1 ? CGR_SPLIT : 1;
constexpr int kWarps = kThreads / 32;
constexpr int kVec = 4;  // elements of a thread's vector (16 bytes of fp32)
constexpr int kNin = CGR_NIN;
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "threads per CTA: a multiple of 32, at most 1024");
static_assert(kU >= 1 && kU <= 16, "unroll: 1 to 16");
static_assert(kSplit >= 1, "split: CTAs a row");

using cgr::CGR_UNUSED; using cgr::CGR_FULL; using cgr::CGR_SCALAR; using cgr::CGR_BCAST;
template <int I> struct In;
#define CGR_DEF_IN(i, ctype, k, dt) \
    template <> struct In<i> { using type = ctype; static constexpr int kind = k; static constexpr int dtype = dt; };
CGR_INPUTS(CGR_DEF_IN)
#undef CGR_DEF_IN

template <class F> __device__ __forceinline__ void for_inputs(F &&f) { cgr::for_each_index<kNin>(f); }

struct Args {
    const void *in[kNin];
    OutT *out;
    float *total;  // split: [row][chunk] the chunk's total
    float *carry;  // split: [row][chunk] the scan of the chunks before it
};

// Split rows: chunk s of a row covers logical positions [s * kChunk, (s + 1) * kChunk),
// whole vectors, so that a chunk starts aligned.
constexpr int64_t kChunk = kSplit > 1 ? ((kR + kSplit - 1) / kSplit + 3) / 4 * 4 : kR;

__device__ __forceinline__ float identity() { return kProd ? 1.f : 0.f; }
__device__ __forceinline__ float op(float a, float b) { return kProd ? a * b : a + b; }

// The inputs' values at flat element idx.
__device__ __forceinline__ void load_inputs(const Args &a, int64_t idx, float (&x)[kNin > 0 ? kNin : 1])
{
    for_inputs([&](auto ic) {
        constexpr int I = decltype(ic)::value;
        using E = typename In<I>::type;
        const E *p = static_cast<const E *>(a.in[I]);
        if constexpr (In<I>::kind == CGR_FULL)
            x[I] = cgr::to_f(p[idx]);
        else if constexpr (In<I>::kind == CGR_SCALAR)
            x[I] = cgr::to_f(p[0]);
        else
            x[I] = 0.f;
    });
}

// The output element at flat index idx from the scanned value r.
__device__ __forceinline__ OutT result(const Args &a, int64_t idx, float r)
{
    float x[kNin > 0 ? kNin : 1];
    if constexpr (kEpiReads)
        load_inputs(a, idx, x);
    return cgr::from_f<OutT>(cgr_epi(r, x));
}

// ------------------------------------------------------------------ INNER == 1: rows

// Physical index within a row of logical position l (reversed scans count from the end).
__device__ __forceinline__ int64_t phys(int64_t l) { return kReverse ? kR - 1 - l : l; }

// The operand (prologue applied) at logical positions l0 .. l0 + kVec of the row at rbase;
// the identity past the row's end. Vec: whole aligned vectors (kR % kVec == 0).
template <bool Vec> __device__ __forceinline__ void load_chunk(const Args &a, int64_t rbase, int64_t l0, int64_t lend,
                                                             float (&v)[kVec])
{
    if constexpr (Vec) {
        if (l0 >= lend) {
            CUTE_UNROLL
            for (int e = 0; e < kVec; ++e) v[e] = identity();
            return;
        }
        const int64_t p0 = rbase + (kReverse ? kR - l0 - kVec : l0);
        float x[kVec][kNin > 0 ? kNin : 1];
        for_inputs([&](auto ic) {
            constexpr int I = decltype(ic)::value;
            using E = typename In<I>::type;
            const E *p = static_cast<const E *>(a.in[I]);
            if constexpr (In<I>::kind == CGR_FULL) {
                struct alignas(sizeof(E) * kVec) V { E e[kVec]; };
                const V raw = *reinterpret_cast<const V *>(p + p0);
                CUTE_UNROLL
                for (int e = 0; e < kVec; ++e) x[e][I] = cgr::to_f(raw.e[kReverse ? kVec - 1 - e : e]);
            } else if constexpr (In<I>::kind == CGR_SCALAR) {
                CUTE_UNROLL
                for (int e = 0; e < kVec; ++e) x[e][I] = cgr::to_f(p[0]);
            } else {
                CUTE_UNROLL
                for (int e = 0; e < kVec; ++e) x[e][I] = 0.f;
            }
        });
        CUTE_UNROLL
        for (int e = 0; e < kVec; ++e) v[e] = cgr_pro(x[e]);
    } else {
        CUTE_UNROLL
        for (int e = 0; e < kVec; ++e) {
            const int64_t l = l0 + e;
            if (l < lend) {
                float x[kNin > 0 ? kNin : 1];
                load_inputs(a, rbase + phys(l), x);
                v[e] = cgr_pro(x);
            } else {
                v[e] = identity();
            }
        }
    }
}

// Writes the scanned values of logical positions l0 .. l0 + kVec (r[e]: inclusive or
// exclusive, as the output wants).
template <bool Vec> __device__ __forceinline__ void store_chunk(const Args &a, int64_t rbase, int64_t l0, int64_t lend,
                                                              const float (&r)[kVec])
{
    if constexpr (Vec) {
        if (l0 >= lend)
            return;
        const int64_t p0 = rbase + (kReverse ? kR - l0 - kVec : l0);
        struct alignas(sizeof(OutT) * kVec) V { OutT e[kVec]; };
        V y;
        CUTE_UNROLL
        for (int e = 0; e < kVec; ++e) {
            const int pe = kReverse ? kVec - 1 - e : e;  // physical slot of logical e
            y.e[pe] = result(a, p0 + pe, r[e]);
        }
        *reinterpret_cast<V *>(a.out + p0) = y;
    } else {
        CUTE_UNROLL
        for (int e = 0; e < kVec; ++e) {
            const int64_t l = l0 + e;
            if (l < lend)
                a.out[rbase + phys(l)] = result(a, rbase + phys(l), r[e]);
        }
    }
}

// Split rows: the total of each chunk (blockIdx.x = row * kSplit + chunk).
template <bool Vec> __global__ void __launch_bounds__(kThreads) chunk_totals(const Args a)
{
    __shared__ float wtot[kWarps];
    const int64_t row = blockIdx.x / kSplit, c = blockIdx.x % kSplit;
    const int64_t rbase = row * kR, lbeg = c * kChunk, lend = lbeg + kChunk < kR ? lbeg + kChunk : kR;
    float t = identity();
    for (int64_t l0 = lbeg + int64_t(threadIdx.x) * kVec; l0 < lend; l0 += int64_t(kThreads) * kVec) {
        float v[kVec];
        load_chunk<Vec>(a, rbase, l0, lend, v);
        CUTE_UNROLL
        for (int e = 0; e < kVec; ++e) t = op(t, v[e]);
    }
    CUTE_UNROLL
    for (int off = 16; off > 0; off >>= 1) t = op(t, __shfl_xor_sync(0xffffffffu, t, off));
    if ((threadIdx.x & 31) == 0)
        wtot[threadIdx.x >> 5] = t;
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = identity();
        for (int w = 0; w < kWarps; ++w) s = op(s, wtot[w]);
        a.total[blockIdx.x] = s;
    }
}

// Split rows: each chunk's carry-in, the scan of the totals before it (a warp a row, each
// lane a run of consecutive chunks).
__global__ void __launch_bounds__(128) chunk_carries(const Args a)
{
    const int64_t row = int64_t(blockIdx.x) * 4 + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (row >= kOuter)
        return;  // whole warps leave together
    constexpr int kPer = (kSplit + 31) / 32;
    const float *tot = a.total + row * kSplit;
    float mine = identity();
    for (int j = 0; j < kPer; ++j) {
        const int c = lane * kPer + j;
        if (c < kSplit)
            mine = op(mine, tot[c]);
    }
    float incl = mine;
    for (int off = 1; off < 32; off <<= 1) {
        const float n = __shfl_up_sync(0xffffffffu, incl, off);
        if (lane >= off)
            incl = op(n, incl);
    }
    float run = __shfl_up_sync(0xffffffffu, incl, 1);
    if (lane == 0)
        run = identity();
    for (int j = 0; j < kPer; ++j) {
        const int c = lane * kPer + j;
        if (c < kSplit) {
            a.carry[row * kSplit + c] = run;
            run = op(run, tot[c]);
        }
    }
}

template <bool Vec> __global__ void __launch_bounds__(kThreads) scan_rows(const Args a)
{
    constexpr int64_t kTile = int64_t(kThreads) * kVec;  // elements a sub-tile
    __shared__ float wsum[2][kU][kWarps];  // the warps' totals, double-buffered across passes
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    constexpr unsigned kAll = 0xffffffffu;
    int buf = 0;
    // a CTA a row (persistent over rows), or with kSplit > 1 a CTA a chunk of a row
    for (int64_t job = blockIdx.x; job < kOuter * kSplit; job += gridDim.x) {
        const int64_t row = job / kSplit, c = job % kSplit;
        const int64_t rbase = row * kR, lbeg = c * kChunk, lend = lbeg + kChunk < kR ? lbeg + kChunk : kR;
        float carry = kSplit > 1 ? a.carry[job] : identity();
        for (int64_t s0 = lbeg; s0 < lend; s0 += kTile * kU) {
            float v[kU][kVec], lpre[kU];
            CUTE_UNROLL
            for (int u = 0; u < kU; ++u)
                load_chunk<Vec>(a, rbase, s0 + u * kTile + int64_t(threadIdx.x) * kVec, lend, v[u]);
            // each thread's vector, scanned in place; the warp's inclusive scan of the totals
            CUTE_UNROLL
            for (int u = 0; u < kU; ++u) {
                CUTE_UNROLL
                for (int e = 1; e < kVec; ++e) v[u][e] = op(v[u][e - 1], v[u][e]);
                lpre[u] = v[u][kVec - 1];
            }
            CUTE_UNROLL
            for (int off = 1; off < 32; off <<= 1) {
                CUTE_UNROLL
                for (int u = 0; u < kU; ++u) {
                    const float n = __shfl_up_sync(kAll, lpre[u], off);
                    if (lane >= off)
                        lpre[u] = op(n, lpre[u]);
                }
            }
            if (lane == 31) {
                CUTE_UNROLL
                for (int u = 0; u < kU; ++u) wsum[buf][u][warp] = lpre[u];
            }
            CUTE_UNROLL
            for (int u = 0; u < kU; ++u) {  // the warp's scan before this lane (exclusive)
                const float n = __shfl_up_sync(kAll, lpre[u], 1);
                lpre[u] = lane == 0 ? identity() : n;
            }
            __syncthreads();
            if (warp == 0) {  // the warps' totals, scanned (inclusive) in place
                CUTE_UNROLL
                for (int u = 0; u < kU; ++u) {
                    float t = lane < kWarps ? wsum[buf][u][lane] : identity();
                    CUTE_UNROLL
                    for (int off = 1; off < kWarps; off <<= 1) {
                        const float n = __shfl_up_sync(kAll, t, off);
                        if (lane >= off)
                            t = op(n, t);
                    }
                    if (lane < kWarps)
                        wsum[buf][u][lane] = t;
                }
            }
            __syncthreads();
            CUTE_UNROLL
            for (int u = 0; u < kU; ++u) {
                const float wpre = warp > 0 ? wsum[buf][u][warp - 1] : identity();
                const float pre = op(op(carry, wpre), lpre[u]);
                float r[kVec];
                CUTE_UNROLL
                for (int e = 0; e < kVec; ++e)
                    r[e] = kExclusive ? (e == 0 ? pre : op(pre, v[u][e - 1])) : op(pre, v[u][e]);
                store_chunk<Vec>(a, rbase, s0 + u * kTile + int64_t(threadIdx.x) * kVec, lend, r);
                carry = op(carry, wsum[buf][u][kWarps - 1]);
            }
            buf ^= 1;  // the next pass writes the other buffer: no third barrier
        }
    }
}

// ------------------------------------------------------------------ INNER > 1: columns

__global__ void __launch_bounds__(kThreads) scan_cols(const Args a)
{
    const int64_t col = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (col >= kInner)
        return;
    for (int64_t o = blockIdx.y; o < kOuter; o += gridDim.y) {
        const int64_t base = o * kR * kInner + col;
        float acc = identity();
        for (int64_t r0 = 0; r0 < kR; r0 += kU) {
            float v[kU];
            CUTE_UNROLL
            for (int j = 0; j < kU; ++j) {
                const int64_t l = r0 + j;
                float x[kNin > 0 ? kNin : 1];
                if (l < kR) {
                    load_inputs(a, base + phys(l) * kInner, x);
                    v[j] = cgr_pro(x);
                }
            }
            CUTE_UNROLL
            for (int j = 0; j < kU; ++j) {
                const int64_t l = r0 + j;
                if (l >= kR)
                    break;
                const float prev = acc;
                acc = op(acc, v[j]);
                const int64_t idx = base + phys(l) * kInner;
                a.out[idx] = result(a, idx, kExclusive ? prev : acc);
            }
        }
    }
}

static const int kInNdim[] = CGR_IN_NDIMS;
static const int64_t kInShape[][CG_MAX_DIMS] = CGR_IN_SHAPES;
static const int64_t kOutShape[] = CGR_OUT_SHAPE;

}  // namespace cgr_scan

CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *inputs, int n_inputs)
{
    (void)inputs; (void)n_inputs;
    return cgr_scan::kSplit > 1 ? size_t(2 * cgr_scan::kOuter * cgr_scan::kSplit) * sizeof(float) : 0;
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace cgr_scan;
    if (n_in != kNin || n_out != 1)
        return CG_UNSUPPORTED;
    const cg_tensor &y = out[0];
    if (!cgr::output_fits(y, CGR_OUT_DTYPE, CGR_OUT_NDIM, kOutShape))
        return CG_UNSUPPORTED;
    Args a{};
    a.out = static_cast<OutT *>(y.data);
    bool ok = true;
    bool aligned = (reinterpret_cast<uintptr_t>(y.data) % 16) == 0;
    auto check = [&](int i, int kind, int dtype) {
        a.in[i] = in[i].data;
        if (kind == CGR_BCAST || !cgr::input_fits(in[i], kind, dtype, kInNdim[i], kInShape[i], &aligned))
            ok = false;
    };
#define CGR_CHECK_IN(i, ctype, k, dt) check(i, k, dt);
    CGR_INPUTS(CGR_CHECK_IN)
#undef CGR_CHECK_IN
    if (!ok)
        return CG_UNSUPPORTED;
    if (kOuter * kInner == 0 || kR == 0)
        return CG_OK;  // nothing to write
    if constexpr (kInner == 1) {
        const bool vec = aligned && (kR % kVec) == 0;
        const int64_t jobs = kOuter * kSplit;
        const unsigned grid = unsigned(jobs < 0x7fffffff ? jobs : 0x7fffffff);
        if constexpr (kSplit > 1) {
            if (workspace == nullptr || workspace_bytes < cg_workspace_bytes(in, n_in) || jobs > 0x7fffffff)
                return CG_BAD_WORKSPACE;
            a.total = static_cast<float *>(workspace);
            a.carry = a.total + jobs;
            if (vec)
                chunk_totals<true><<<grid, kThreads, 0, stream>>>(a);
            else
                chunk_totals<false><<<grid, kThreads, 0, stream>>>(a);
            chunk_carries<<<unsigned((kOuter + 3) / 4), 128, 0, stream>>>(a);
        } else {
            (void)workspace; (void)workspace_bytes;
        }
        if (vec)
            scan_rows<true><<<grid, kThreads, 0, stream>>>(a);
        else
            scan_rows<false><<<grid, kThreads, 0, stream>>>(a);
    } else {
        const int64_t gx = (kInner + kThreads - 1) / kThreads;
        if (gx > 0x7fffffff)
            return CG_UNSUPPORTED;
        const unsigned gy = unsigned(kOuter < 65535 ? kOuter : 65535);
        scan_cols<<<dim3(unsigned(gx), gy), kThreads, 0, stream>>>(a);
    }
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
