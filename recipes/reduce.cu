// recipes/reduce.cu: a reduction over one dimension (sum, mean, max, min, prod, argmax,
// argmin, logsumexp) or a normalisation along it (softmax, log-softmax). Logsumexp keeps
// softmax's running (max, sum) pair and writes max + log(sum).
//
// The reduced operand (an input, or a pointwise prologue of same-shaped inputs) is
// viewed as (OUTER, R, INNER), contiguous, with R the reduced dimension:
// - INNER == 1 (the last dim): ROW_THREADS threads (a warp, or the whole CTA) share a
//   row, read it in 16-byte vectors, accumulate per thread, then combine with warp
//   shuffles and, across warps, through shared memory. Softmax keeps a running (max,
//   sum) pair (online softmax: one pass for the statistics), then writes
//   exp(x - max) / sum; with CACHE > 0 each thread keeps its first CACHE vectors in
//   registers, so a row that fits is read from memory once.
// - INNER > 1 (a middle or first dim): threads along INNER (coalesced), ROW_THREADS of
//   them per output column splitting R (interleaved rows), each with its own
//   accumulators, combined through shared memory.
// SPLIT > 1 splits each row over SPLIT CTAs (long rows, few rows): partial accumulators
// go to the workspace and a second small kernel combines them (softmax: the second kernel
// re-reads its chunk and writes it).
// argmax/argmin carry (value, index), ties go to the lower index and NaN wins, as in
// PyTorch; max/min propagate NaN. An epilogue (cgr_epi) may follow the reduction.
//
// Named parameters (CGR_*) are written by src/recipe_gen.c in place of `recipe:params`;
// the defaults make this file compile on its own (softmax over the last dim of 128x4096).
#include <cutegen/abi.h>
#include <cute/config.hpp>  // CUTE_UNROLL only: cute/tensor.hpp costs seconds a build (docs/build.md)
#include <type_traits>
#include <cstdint>
#include "ops.cuh"  // recipe:inline

// recipe:params
#ifndef CGR_GENERATED
#define CGR_T float                 // element type of the reduced operand
#define CGR_DTYPE CG_FLOAT32
#define CGR_OUT_T float             // output element type (int64_t for argmax/argmin)
#define CGR_OUT_DTYPE CG_FLOAT32
#define CGR_RED 7                   // see enum Red below
#define CGR_OUTER 128
#define CGR_R 4096
#define CGR_INNER 1
#define CGR_THREADS 256             // threads per CTA
#define CGR_ROW_THREADS 256         // threads per row (INNER == 1): 32 or THREADS
#define CGR_SPLIT 1                 // CTAs per row
#define CGR_CACHE 4                 // vectors per thread kept in registers (softmax)
#define CGR_NIN 1
#define CGR_INPUTS(X) X(0, float, CGR_FULL, CG_FLOAT32)
#define CGR_IN_NDIMS {2}
#define CGR_IN_SHAPES {{128, 4096}}
#define CGR_OUT_NDIM 2
#define CGR_OUT_SHAPE {128, 4096}
#define CGR_OP_NDIM 2               // the reduced operand's shape (broadcast inputs are read into it)
#define CGR_OP_SHAPE {128, 4096}
__device__ __forceinline__ float cgr_pro(const float *x) { return x[0]; }
__device__ __forceinline__ float cgr_epi(float r) { return r; }
#endif

namespace cgr_red {

using T = CGR_T;
using OutT = CGR_OUT_T;
enum Red { SUM = 0, MEAN, MAX, MIN, PROD, ARGMAX, ARGMIN, SOFTMAX, LOGSOFTMAX, LOGSUMEXP };
constexpr int kRed = CGR_RED;
constexpr int64_t kOuter = CGR_OUTER, kR = CGR_R, kInner = CGR_INNER;
constexpr int kThreads = CGR_THREADS;
constexpr int kRowThreads = CGR_INNER == 1 ? CGR_ROW_THREADS : 1;
constexpr int kRowsPerBlock = CGR_INNER == 1 ? kThreads / CGR_ROW_THREADS : 1;
constexpr int kSplit = CGR_SPLIT;
constexpr int kCache = CGR_CACHE;
constexpr int kVec = 16 / int(sizeof(T));
constexpr int kNin = CGR_NIN;
constexpr bool kSoftmax = kRed == SOFTMAX || kRed == LOGSOFTMAX;
// the running max and sum of exp(x - max) (softmax's statistics; logsumexp reduces to them)
constexpr bool kOnline = kSoftmax || kRed == LOGSUMEXP;
constexpr bool kArg = kRed == ARGMAX || kRed == ARGMIN;
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "threads per CTA");
static_assert(CGR_INNER != 1 || (CGR_ROW_THREADS % 32 == 0 && kThreads % CGR_ROW_THREADS == 0),
              "threads per row: a multiple of 32 dividing the CTA");
static_assert(!kSoftmax || kInner == 1 || kSplit == 1, "softmax over a middle dim: no split");
// INNER > 1: threads of a CTA along R for each column (ROW_THREADS there), kColW columns a CTA
constexpr int kColR = CGR_INNER == 1 ? 1 : CGR_ROW_THREADS;
constexpr int kColW = kThreads / kColR;
static_assert(kColR >= 1 && kThreads % kColR == 0 && kColW % 32 == 0,
              "columns: ROW_THREADS threads along R, a multiple of 32 columns a CTA");
static_assert(!kSoftmax || kColR == 1, "softmax over a middle dim: one thread a column");

using cgr::CGR_UNUSED; using cgr::CGR_FULL; using cgr::CGR_SCALAR; using cgr::CGR_BCAST;
template <int I> struct In;
#define CGR_DEF_IN(i, ctype, k, dt) \
    template <> struct In<i> { using type = ctype; static constexpr int kind = k; static constexpr int dtype = dt; };
CGR_INPUTS(CGR_DEF_IN)
#undef CGR_DEF_IN

template <class F> __device__ __forceinline__ void for_inputs(F &&f) { cgr::for_each_index<kNin>(f); }

constexpr int kOpNdim = CGR_OP_NDIM;
__host__ __device__ constexpr int64_t op_dim(int d)
{
    constexpr int64_t shape[CG_MAX_DIMS] = CGR_OP_SHAPE;
    return shape[d];
}
struct Args {
    const void *in[kNin];
    OutT *out;
    void *ws;
    int64_t bstride[kNin][CG_MAX_DIMS];  // BCAST inputs: element strides along the operand's dims (0: broadcast)
};

// Offset of BCAST input I's element at flat operand index idx.
template <int I> __device__ __forceinline__ int64_t bcast_off(const Args &a, int64_t idx)
{
    int64_t off = 0;
    CUTE_UNROLL
    for (int d = kOpNdim - 1; d >= 0; --d) {
        off += (idx % op_dim(d)) * a.bstride[I][d];
        idx /= op_dim(d);
    }
    return off;
}

// ------------------------------------------------------------------ accumulators

struct Acc {
    float v;    // sum, product, extreme value, or running max (softmax)
    float s;    // running sum of exp(x - v) (softmax)
    int64_t i;  // index of the extreme value (argmax/argmin)
};

__device__ __forceinline__ Acc acc_init()
{
    Acc a;
    a.v = (kRed == SUM || kRed == MEAN) ? 0.f : kRed == PROD ? 1.f
        : (kRed == MIN || kRed == ARGMIN) ? INFINITY : -INFINITY;
    a.s = 0.f;
    a.i = INT64_MAX;
    return a;
}

// Is (x, xi) a better extreme than (v, vi)? NaN wins; ties go to the lower index.
__device__ __forceinline__ bool better(float x, int64_t xi, float v, int64_t vi)
{
    const bool gt = (kRed == MAX || kRed == ARGMAX) ? x > v : x < v;
    if (x != x)
        return v == v || xi < vi;
    if (v != v)
        return false;
    return gt || (x == v && xi < vi);
}

__device__ __forceinline__ void acc_add(Acc &a, float x, int64_t idx)
{
    if constexpr (kRed == SUM || kRed == MEAN) {
        a.v += x;
    } else if constexpr (kRed == PROD) {
        a.v *= x;
    } else if constexpr (kOnline) {
        if (x > a.v) {
            a.s = a.s * expf(a.v - x) + 1.f;  // exp(-inf) = 0 on the first element
            a.v = x;
        } else if (a.v != -INFINITY) {
            a.s += expf(x - a.v);             // NaN propagates through the sum
        } else if (x != x) {
            a.s = x;
        }
    } else {
        if (better(x, idx, a.v, a.i)) {
            a.v = x;
            a.i = idx;
        }
    }
}

__device__ __forceinline__ Acc acc_combine(Acc a, const Acc &b)
{
    if constexpr (kRed == SUM || kRed == MEAN) {
        a.v += b.v;
    } else if constexpr (kRed == PROD) {
        a.v *= b.v;
    } else if constexpr (kOnline) {
        const float m = fmaxf(a.v, b.v);
        const float sa = a.v == -INFINITY ? (a.s != a.s ? a.s : 0.f) : a.s * expf(a.v - m);
        const float sb = b.v == -INFINITY ? (b.s != b.s ? b.s : 0.f) : b.s * expf(b.v - m);
        a.v = m;
        a.s = sa + sb;
    } else {
        if (better(b.v, b.i, a.v, a.i)) {
            a.v = b.v;
            a.i = b.i;
        }
    }
    return a;
}

__device__ __forceinline__ Acc warp_combine(Acc a)
{
    CUTE_UNROLL
    for (int o = 16; o > 0; o >>= 1) {
        Acc b;
        b.v = __shfl_xor_sync(0xffffffffu, a.v, o);
        b.s = __shfl_xor_sync(0xffffffffu, a.s, o);
        b.i = __shfl_xor_sync(0xffffffffu, (long long)a.i, o);
        a = acc_combine(a, b);
    }
    return a;
}

// Combines the accumulators of the ROW_THREADS threads of each row group; every thread
// of the group gets the result. All threads of the CTA must call it.
__device__ __forceinline__ Acc group_combine(Acc a, Acc *red)
{
    a = warp_combine(a);
    if constexpr (kRowThreads > 32) {
        const int warp = threadIdx.x / 32, first = (threadIdx.x / kRowThreads) * (kRowThreads / 32);
        if (threadIdx.x % 32 == 0)
            red[warp] = a;
        __syncthreads();
        Acc r = red[first];
        for (int w = 1; w < kRowThreads / 32; ++w)
            r = acc_combine(r, red[first + w]);
        __syncthreads();
        return r;
    }
    return a;
}

__device__ __forceinline__ void store_result(OutT *p, const Acc &a)
{
    if constexpr (kArg) {
        *p = OutT(a.i);
    } else {
        float r = kRed == MEAN ? a.v / float(kR) : a.v;
        if constexpr (kRed == LOGSUMEXP) /* max + log(sum exp(x - max)); all -inf: -inf; NaN: NaN */
            r = a.v == -INFINITY ? (a.s != a.s ? a.s : -INFINITY) : a.v + logf(a.s);
        *p = cgr::from_f<OutT>(cgr_epi(r));
    }
}

// A row's statistics as its write pass uses them: 1 / sum (softmax) or max + log(sum)
// (log-softmax), once a row rather than a division or a log an element.
__device__ __forceinline__ Acc softmax_ready(Acc a)
{
    if constexpr (kRed == SOFTMAX)
        a.s = 1.f / a.s;
    else
        a.v = a.v + logf(a.s);
    return a;
}

// Element x of a row whose statistics softmax_ready made ready.
__device__ __forceinline__ float softmax_value(float x, const Acc &r)
{
    if constexpr (kRed == SOFTMAX)
        return expf(x - r.v) * r.s;
    else
        return x - r.v;
}

// ------------------------------------------------------------------ loads

// The reduced operand at flat element index idx (the prologue applied).
__device__ __forceinline__ float load_val(const Args &a, int64_t idx)
{
    float x[kNin > 0 ? kNin : 1];
    for_inputs([&](auto ic) {
        constexpr int I = decltype(ic)::value;
        using E = typename In<I>::type;
        const E *p = static_cast<const E *>(a.in[I]);
        if constexpr (In<I>::kind == CGR_FULL)
            x[I] = cgr::to_f(p[idx]);
        else if constexpr (In<I>::kind == CGR_SCALAR)
            x[I] = cgr::to_f(p[0]);
        else if constexpr (In<I>::kind == CGR_BCAST)
            x[I] = cgr::to_f(__ldg(p + bcast_off<I>(a, idx)));
        else
            x[I] = 0.f;
    });
    return cgr_pro(x);
}

// kVec consecutive operand values from a 16-byte aligned idx.
__device__ __forceinline__ void load_vec(const Args &a, int64_t idx, float (&v)[kVec])
{
    alignas(16) T raw[kNin > 0 ? kNin : 1][kVec];
    float sval[kNin > 0 ? kNin : 1];
    float bval[kNin > 0 ? kNin : 1][kVec];
    for_inputs([&](auto ic) {
        constexpr int I = decltype(ic)::value;
        using E = typename In<I>::type;
        const E *p = static_cast<const E *>(a.in[I]);
        if constexpr (In<I>::kind == CGR_FULL) {
            *reinterpret_cast<uint4 *>(raw[I]) = *reinterpret_cast<const uint4 *>(p + idx);
        } else if constexpr (In<I>::kind == CGR_SCALAR) {
            sval[I] = cgr::to_f(p[0]);
        } else if constexpr (In<I>::kind == CGR_BCAST) {
            // the vector lies within one last-dim row of the operand when that dim is a
            // multiple of kVec (idx is): consecutive elements step by the last stride
            const int64_t s = a.bstride[I][kOpNdim - 1];
            if (op_dim(kOpNdim - 1) % kVec == 0) {
                const E *q = p + bcast_off<I>(a, idx);
                CUTE_UNROLL
                for (int e = 0; e < kVec; ++e) bval[I][e] = cgr::to_f(__ldg(q + e * s));
            } else {
                CUTE_UNROLL
                for (int e = 0; e < kVec; ++e) bval[I][e] = cgr::to_f(__ldg(p + bcast_off<I>(a, idx + e)));
            }
        }
    });
    CUTE_UNROLL
    for (int e = 0; e < kVec; ++e) {
        float x[kNin > 0 ? kNin : 1];
        for_inputs([&](auto ic) {
            constexpr int I = decltype(ic)::value;
            if constexpr (In<I>::kind == CGR_FULL)
                x[I] = cgr::to_f(raw[I][e]);
            else if constexpr (In<I>::kind == CGR_SCALAR)
                x[I] = sval[I];
            else if constexpr (In<I>::kind == CGR_BCAST)
                x[I] = bval[I][e];
            else
                x[I] = 0.f;
        });
        v[e] = cgr_pro(x);
    }
}

// ------------------------------------------------------------------ INNER == 1: rows

// This CTA's share [c0, c1) of row R, in whole vectors when Vec.
__device__ __forceinline__ void row_chunk(int64_t &c0, int64_t &c1)
{
    int64_t chunk = (kR + kSplit - 1) / kSplit;
    chunk = (chunk + kVec - 1) / kVec * kVec;
    c0 = int64_t(blockIdx.y) * chunk;
    c1 = c0 + chunk < kR ? c0 + chunk : kR;
}

// The softmax write pass over this thread's elements of [c0, c1) of the row.
template <bool Vec>
__device__ __forceinline__ void softmax_write(const Args &a, int64_t row, int64_t c0, int64_t c1,
                                              const Acc &row_st, const float (*cache)[kVec], int ncached)
{
    const Acc st = softmax_ready(row_st);
    const int lane = threadIdx.x % kRowThreads;
    OutT *y = a.out + row * kR;
    if constexpr (Vec) {
        int k = 0;
        CUTE_UNROLL
        for (int kc = 0; kc < kCache; ++kc) {
            const int64_t j = c0 + (int64_t(kc) * kRowThreads + lane) * kVec;
            if (kc < ncached && j < c1) {
                alignas(16) OutT o[kVec];
                CUTE_UNROLL
                for (int e = 0; e < kVec; ++e) o[e] = cgr::from_f<OutT>(cgr_epi(softmax_value(cache[kc][e], st)));
                *reinterpret_cast<uint4 *>(y + j) = *reinterpret_cast<const uint4 *>(o);
            }
        }
        k = ncached;
        for (int64_t j = c0 + (int64_t(k) * kRowThreads + lane) * kVec; j < c1; j += int64_t(kRowThreads) * kVec) {
            float v[kVec];
            load_vec(a, row * kR + j, v);
            alignas(16) OutT o[kVec];
            CUTE_UNROLL
            for (int e = 0; e < kVec; ++e) o[e] = cgr::from_f<OutT>(cgr_epi(softmax_value(v[e], st)));
            *reinterpret_cast<uint4 *>(y + j) = *reinterpret_cast<const uint4 *>(o);
        }
    } else {
        for (int64_t j = c0 + lane; j < c1; j += kRowThreads)
            y[j] = cgr::from_f<OutT>(cgr_epi(softmax_value(load_val(a, row * kR + j), st)));
    }
}

// grid = (ceil(OUTER / rows per CTA), SPLIT).
template <bool Vec>
__global__ void __launch_bounds__(kThreads) reduce_rows(const Args a)
{
    __shared__ Acc red[kThreads / 32];
    const int64_t row = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / kRowThreads;
    const int lane = threadIdx.x % kRowThreads;
    int64_t c0, c1;
    row_chunk(c0, c1);
    Acc acc = acc_init();
    float cache[kCache > 0 ? kCache : 1][kVec];
    int ncached = 0;
    if (row < kOuter) {
        const int64_t rbase = row * kR;
        if constexpr (Vec) {
            CUTE_UNROLL
            for (int kc = 0; kc < kCache; ++kc) {
                const int64_t j = c0 + (int64_t(kc) * kRowThreads + lane) * kVec;
                if (j < c1) {
                    load_vec(a, rbase + j, cache[kc]);
                    CUTE_UNROLL
                    for (int e = 0; e < kVec; ++e) acc_add(acc, cache[kc][e], j + e);
                }
            }
            ncached = kCache;
#pragma unroll 4
            for (int64_t j = c0 + (int64_t(kCache) * kRowThreads + lane) * kVec; j < c1;
                 j += int64_t(kRowThreads) * kVec) {
                float v[kVec];
                load_vec(a, rbase + j, v);
                CUTE_UNROLL
                for (int e = 0; e < kVec; ++e) acc_add(acc, v[e], j + e);
            }
        } else {
            for (int64_t j = c0 + lane; j < c1; j += kRowThreads)
                acc_add(acc, load_val(a, rbase + j), j);
        }
    }
    acc = group_combine(acc, red);
    if (row >= kOuter)
        return;
    if constexpr (kSplit > 1) {
        if (lane == 0)
            static_cast<Acc *>(a.ws)[row * kSplit + blockIdx.y] = acc;
    } else if constexpr (kSoftmax) {
        softmax_write<Vec>(a, row, c0, c1, acc, cache, ncached);
    } else {
        if (lane == 0)
            store_result(a.out + row, acc);
    }
}

// SPLIT > 1, not softmax: one thread per row combines the row's partials.
__global__ void __launch_bounds__(kThreads) finish_rows(const Args a)
{
    const int64_t row = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (row >= kOuter)
        return;
    const Acc *p = static_cast<const Acc *>(a.ws) + row * kSplit;
    Acc acc = p[0];
    for (int s = 1; s < kSplit; ++s)
        acc = acc_combine(acc, p[s]);
    store_result(a.out + row, acc);
}

// SPLIT > 1, softmax: each CTA combines its row's partials and writes its chunk.
template <bool Vec>
__global__ void __launch_bounds__(kThreads) softmax_rows_apply(const Args a)
{
    const int64_t row = int64_t(blockIdx.x) * kRowsPerBlock + threadIdx.x / kRowThreads;
    if (row >= kOuter)
        return;
    const Acc *p = static_cast<const Acc *>(a.ws) + row * kSplit;
    Acc st = p[0];
    for (int s = 1; s < kSplit; ++s)
        st = acc_combine(st, p[s]);
    int64_t c0, c1;
    row_chunk(c0, c1);
    float unused[1][kVec];
    softmax_write<Vec>(a, row, c0, c1, st, unused, 0);
}

// ------------------------------------------------------------------ INNER > 1: columns

// grid = (ceil(INNER / kColW), min(OUTER, 65535), SPLIT); a CTA holds kColW columns x
// kColR threads along R. Thread (tx, ty) takes rows r0 + ty, r0 + ty + kColR, ... of
// column tx: the kColR warps of a column group read neighbouring rows at once (one DRAM
// stretch), and R split over them gives the SMs more, shorter work (a (128, 4096, 4095)
// sum has 524k columns: two waves of long threads with kColR = 1).
__global__ void __launch_bounds__(kThreads) reduce_cols(const Args a)
{
    const int tx = int(threadIdx.x) % kColW, ty = int(threadIdx.x) / kColW;
    const int64_t col = int64_t(blockIdx.x) * kColW + tx;
    const bool live = col < kInner;
    if (kColR == 1 && !live)
        return;
    const int64_t chunk = (kR + kSplit - 1) / kSplit;
    const int64_t r0 = int64_t(blockIdx.z) * chunk, r1 = r0 + chunk < kR ? r0 + chunk : kR;
    for (int64_t o = blockIdx.y; o < kOuter; o += gridDim.y) {
        const int64_t base = o * kR * kInner + col;
        // Eight accumulators: eight independent loads in flight per thread (four left
        // the H200's memory system short of requests: 80% of SoL on a (128, 4096, 4095)
        // sum over dim 1). Combining them is exact for max/min and keeps
        // argmax/argmin's lowest-index tie rule (acc_combine compares indices); softmax
        // keeps one running (max, sum).
        constexpr int kAcc = kSoftmax ? 1 : 8;
        Acc acc[kAcc];
        CUTE_UNROLL
        for (int q = 0; q < kAcc; ++q) acc[q] = acc_init();
        if (live) {
            int64_t r = r0 + ty;
            for (; r + int64_t(kAcc - 1) * kColR < r1; r += int64_t(kAcc) * kColR) {
                float v[kAcc];
                CUTE_UNROLL
                for (int q = 0; q < kAcc; ++q) v[q] = load_val(a, base + (r + q * kColR) * kInner);
                CUTE_UNROLL
                for (int q = 0; q < kAcc; ++q) acc_add(acc[q], v[q], r + q * kColR);
            }
            for (; r < r1; r += kColR)
                acc_add(acc[0], load_val(a, base + r * kInner), r);
            CUTE_UNROLL
            for (int q = 1; q < kAcc; ++q) acc[0] = acc_combine(acc[0], acc[q]);
        }
        if constexpr (kColR > 1) {
            // the column's kColR partials, combined in ty order by its ty == 0 thread
            __shared__ Acc part[kThreads];
            part[threadIdx.x] = acc[0];
            __syncthreads();
            if (ty == 0)
                for (int j = 1; j < kColR; ++j)
                    acc[0] = acc_combine(acc[0], part[j * kColW + tx]);
            __syncthreads();  // part is written again for the next o
            if (ty != 0 || !live)
                continue;
        }
        if constexpr (kSplit > 1) {
            static_cast<Acc *>(a.ws)[(o * kSplit + blockIdx.z) * kInner + col] = acc[0];
        } else if constexpr (kSoftmax) {
            const Acc st = softmax_ready(acc[0]);
            for (int64_t rr = 0; rr < kR; ++rr)
                a.out[base + rr * kInner] = cgr::from_f<OutT>(cgr_epi(softmax_value(load_val(a, base + rr * kInner), st)));
        } else {
            store_result(a.out + o * kInner + col, acc[0]);
        }
    }
}

__global__ void __launch_bounds__(kThreads) finish_cols(const Args a)
{
    const int64_t col = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (col >= kInner)
        return;
    for (int64_t o = blockIdx.y; o < kOuter; o += gridDim.y) {
        const Acc *p = static_cast<const Acc *>(a.ws) + o * kSplit * kInner + col;
        Acc acc = p[0];
        for (int s = 1; s < kSplit; ++s)
            acc = acc_combine(acc, p[int64_t(s) * kInner]);
        store_result(a.out + o * kInner + col, acc);
    }
}

static const int kInNdim[] = CGR_IN_NDIMS;
static const int64_t kInShape[][CG_MAX_DIMS] = CGR_IN_SHAPES;
static const int64_t kOutShape[] = CGR_OUT_SHAPE;

static size_t workspace_size() { return kSplit > 1 ? size_t(kOuter * kInner * kSplit) * sizeof(Acc) : 0; }

}  // namespace cgr_red

CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *inputs, int n_inputs)
{
    (void)inputs; (void)n_inputs;
    return cgr_red::workspace_size();
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace cgr_red;
    if (n_in != kNin || n_out != 1)
        return CG_UNSUPPORTED;
    const cg_tensor &y = out[0];
    if (!cgr::output_fits(y, CGR_OUT_DTYPE, CGR_OUT_NDIM, kOutShape))
        return CG_UNSUPPORTED;
    Args a{};
    a.out = static_cast<OutT *>(y.data);
    a.ws = workspace;
    bool ok = true;
    bool aligned = (reinterpret_cast<uintptr_t>(y.data) % 16) == 0;
    auto check = [&](int i, int kind, int dtype) {
        const cg_tensor &t = in[i];
        a.in[i] = t.data;
        if (!cgr::input_fits(t, kind, dtype, kInNdim[i], kInShape[i], &aligned)) {
            ok = false;
        } else if (kind == CGR_BCAST) {  // right-aligned against the operand, each dim equal or 1
            const int lead = kOpNdim - t.ndim;
            if (lead < 0) {
                ok = false;
                return;
            }
            for (int d = 0; d < kOpNdim; ++d) {
                const int j = d - lead;
                a.bstride[i][d] = (j < 0 || t.shape[j] == 1) ? 0 : t.stride[j];
                if (j >= 0 && t.shape[j] != 1 && t.shape[j] != op_dim(d))
                    ok = false;
            }
        }
    };
#define CGR_CHECK_IN(i, ctype, k, dt) check(i, k, dt);
    CGR_INPUTS(CGR_CHECK_IN)
#undef CGR_CHECK_IN
    if (!ok)
        return CG_UNSUPPORTED;
    if (workspace_size() > 0 && (workspace == nullptr || workspace_bytes < workspace_size()))
        return CG_BAD_WORKSPACE;
    if (kOuter * kInner == 0 || kR == 0)
        return CG_UNSUPPORTED;  // empty reductions: leave them to PyTorch's conventions
    if constexpr (kInner == 1) {
        // 16-byte vectors need every row (and each CTA's chunk) to start aligned.
        const bool vec = aligned && (kR % kVec) == 0;
        const int64_t gx = (kOuter + kRowsPerBlock - 1) / kRowsPerBlock;
        if (gx > 0x7fffffff)
            return CG_UNSUPPORTED;
        const dim3 grid(unsigned(gx), kSplit);
        if (vec)
            reduce_rows<true><<<grid, kThreads, 0, stream>>>(a);
        else
            reduce_rows<false><<<grid, kThreads, 0, stream>>>(a);
        if (kSplit > 1) {
            if constexpr (kSoftmax) {
                if (vec)
                    softmax_rows_apply<true><<<grid, kThreads, 0, stream>>>(a);
                else
                    softmax_rows_apply<false><<<grid, kThreads, 0, stream>>>(a);
            } else {
                finish_rows<<<unsigned((kOuter + kThreads - 1) / kThreads), kThreads, 0, stream>>>(a);
            }
        }
    } else {
        const int64_t gx = (kInner + kColW - 1) / kColW;
        if (gx > 0x7fffffff)
            return CG_UNSUPPORTED;
        const unsigned gy = unsigned(kOuter < 65535 ? kOuter : 65535);
        reduce_cols<<<dim3(unsigned(gx), gy, kSplit), kThreads, 0, stream>>>(a);
        if (kSplit > 1)
            finish_cols<<<dim3(unsigned((kInner + kThreads - 1) / kThreads), gy), kThreads, 0, stream>>>(a);
    }
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
