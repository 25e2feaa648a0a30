// recipes/rowloss.cu: a loss over the rows of its inputs, then a mean or sum over the rows
// (the ROWLOSS family): each row's loss needs statistics of the whole row, so it is one
// pass over the inputs with a second level of reduction over rows.
//
// Losses (CGR_LOSS):
// - CROSS_ENTROPY (F.cross_entropy, nn.CrossEntropyLoss over (N, C) logits x and class
//   indices t): row i's loss is logsumexp(x_i) - x_i[t_i], by a running (max, sum of
//   exp) pair (online softmax: one pass); rows whose target is IGNORE count neither in the
//   sum nor in the mean's divisor; a target outside [0, C) gives NaN (PyTorch asserts).
// - TRIPLET (F.triplet_margin_loss, nn.TripletMarginLoss over (N, D) anchors a, positives
//   p, negatives n): max(d(a, p) - d(a, n) + MARGIN, 0), d(u, v) = ||u - v + EPS||_P (P 1
//   or 2, as F.pairwise_distance); with SWAP, d(a, n) is min(d(a, n), d(p, n)).
// Reduction (CGR_REDUCTION): 0 none (the output is the N row losses), 1 sum, 2 mean.
//
// ROW_THREADS threads (a warp, or the CTA) share a row and read it in 16-byte vectors
// (VEC elements; rows that are not whole vectors are read element by element), UNROLL
// vectors a thread in flight. Each CTA sums its rows' losses (and counts them) in a fixed
// order into the workspace; the last CTA to finish (a counter the host zeroes each call)
// sums the CTAs' partials in a fixed order and writes the scalar, so the result does not
// depend on which CTA finishes last.
//
// Named parameters (CGR_*) are written by src/recipe_rowloss.c in place of
// `recipe:params`; the defaults make this file compile on its own (cross-entropy over
// 4096 rows of 1000 classes, mean).
#include <cutegen/abi.h>
#include <cute/config.hpp>  // CUTE_UNROLL only: cute/tensor.hpp costs seconds a build (docs/build.md)
#include <cstdint>
#include "ops.cuh"  // recipe:inline

// recipe:params
#ifndef CGR_GENERATED
#define CGR_LOSS 0                  // 0 cross-entropy, 1 triplet margin
#define CGR_REDUCTION 2             // 0 none, 1 sum, 2 mean
#define CGR_ROWS 4096
#define CGR_COLS 1000
#define CGR_THREADS 256             // threads per CTA
#define CGR_ROW_THREADS 32          // threads sharing a row: 32 or THREADS
#define CGR_UNROLL 4                // 16-byte vectors a thread has in flight
#define CGR_IGNORE (-100)           // cross-entropy: the target that counts for nothing
#define CGR_MARGIN 1.0f             // triplet
#define CGR_EPS 1e-6f
#define CGR_P 2
#define CGR_SWAP 0
#define CGR_FAST 0                  // exp as __expf (a few ulp; the judge decides)
#endif

namespace cgr_rowloss {

enum Loss { CROSS_ENTROPY = 0, TRIPLET = 1 };
enum Reduction { NONE = 0, SUM = 1, MEAN = 2 };
constexpr int kLoss = CGR_LOSS, kReduction = CGR_REDUCTION;
constexpr int64_t kRows = CGR_ROWS, kCols = CGR_COLS;
constexpr int kThreads = CGR_THREADS, kRowThreads = CGR_ROW_THREADS, kUnroll = CGR_UNROLL;
constexpr int kRowsPerCta = kThreads / kRowThreads;
constexpr int kVec = kCols % 4 == 0 ? 4 : 1;  // floats a load
constexpr int64_t kRowVecs = kCols / kVec;
constexpr int kNin = kLoss == CROSS_ENTROPY ? 2 : 3;
constexpr int64_t kCtas = (kRows + kRowsPerCta - 1) / kRowsPerCta;
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "threads per CTA");
static_assert(kRowThreads % 32 == 0 && kThreads % kRowThreads == 0, "threads per row");
static_assert(CGR_P == 1 || CGR_P == 2, "triplet: p 1 or 2");

// A thread's running statistics of its part of a row: cross-entropy (m, s) = (max, sum of
// exp(x - m)); triplet (a, b, c) = the sums for d(a, p), d(a, n), d(p, n).
struct Stat { float a, b, c; };

__device__ __forceinline__ Stat stat_init()
{
    return kLoss == CROSS_ENTROPY ? Stat{ -INFINITY, 0.f, 0.f } : Stat{ 0.f, 0.f, 0.f };
}

__device__ __forceinline__ float dist_term(float u, float v)
{
    const float d = u - v + CGR_EPS;
    return CGR_P == 2 ? d * d : fabsf(d);
}

__device__ __forceinline__ float exp_(float v) { return CGR_FAST ? __expf(v) : expf(v); }

// Cross-entropy: one logit into the running (max, sum); NaN propagates through the max.
__device__ __forceinline__ void ce_add(Stat &s, float x)
{
    if (x > s.a) {
        s.b = s.b * exp_(s.a - x) + 1.f;
        s.a = x;
    } else if (x != x) {
        s.a = x;
    } else {
        s.b += exp_(x - s.a);
    }
}

__device__ __forceinline__ Stat stat_merge(const Stat &x, const Stat &y)
{
    if constexpr (kLoss == CROSS_ENTROPY) {
        if (x.a != x.a || y.a != y.a)
            return Stat{ x.a != x.a ? x.a : y.a, 0.f, 0.f };
        const float m = fmaxf(x.a, y.a);
        if (m == -INFINITY)
            return x;
        return Stat{ m, x.b * exp_(x.a - m) + y.b * exp_(y.a - m), 0.f };
    } else {
        return Stat{ x.a + y.a, x.b + y.b, x.c + y.c };
    }
}

__device__ __forceinline__ Stat shfl_xor(const Stat &s, int o)
{
    return Stat{ __shfl_xor_sync(0xffffffffu, s.a, o), __shfl_xor_sync(0xffffffffu, s.b, o),
                 __shfl_xor_sync(0xffffffffu, s.c, o) };
}

struct Args {
    const float *x, *y, *z;   // logits (x) and targets (t); or anchors, positives, negatives
    const int64_t *t;
    float *out;
    float2 *part;             // [CTA]: (sum of its rows' losses, rows counted)
    unsigned *done;           // CTAs finished
};

// Vector k of row `row` of input p, as kVec floats.
__device__ __forceinline__ void load_vec(const float *p, int64_t row, int64_t k, float (&v)[kVec])
{
    const float *q = p + row * kCols + k * kVec;
    if constexpr (kVec == 4) {
        const float4 f = __ldg(reinterpret_cast<const float4 *>(q));
        v[0] = f.x; v[1] = f.y; v[2] = f.z; v[3] = f.w;
    } else {
        v[0] = __ldg(q);
    }
}

// This thread's statistics of its share of row `row` (lane g of kRowThreads).
__device__ __forceinline__ Stat row_stat(const Args &a, int64_t row, int g)
{
    Stat s = stat_init();
    for (int64_t k0 = g; k0 < kRowVecs; k0 += int64_t(kRowThreads) * kUnroll) {
        float u[kUnroll][kVec], v[kUnroll][kVec], w[kUnroll][kVec];
        CUTE_UNROLL
        for (int j = 0; j < kUnroll; ++j) {
            const int64_t k = k0 + int64_t(j) * kRowThreads;
            if (k < kRowVecs) {
                load_vec(a.x, row, k, u[j]);
                if constexpr (kLoss == TRIPLET) {
                    load_vec(a.y, row, k, v[j]);
                    load_vec(a.z, row, k, w[j]);
                }
            }
        }
        CUTE_UNROLL
        for (int j = 0; j < kUnroll; ++j) {
            const int64_t k = k0 + int64_t(j) * kRowThreads;
            if (k < kRowVecs)
                CUTE_UNROLL
                for (int e = 0; e < kVec; ++e) {
                    if constexpr (kLoss == CROSS_ENTROPY) {
                        ce_add(s, u[j][e]);
                    } else {
                        s.a += dist_term(u[j][e], v[j][e]);
                        s.b += dist_term(u[j][e], w[j][e]);
                        if (CGR_SWAP)
                            s.c += dist_term(v[j][e], w[j][e]);
                    }
                }
        }
    }
    return s;
}

__device__ __forceinline__ float norm_of(float sum) { return CGR_P == 2 ? sqrtf(sum) : sum; }

// Row `row`'s loss from its combined statistics; *counted: whether it counts in a mean.
__device__ __forceinline__ float row_loss(const Args &a, int64_t row, const Stat &s, bool *counted)
{
    *counted = true;
    if constexpr (kLoss == CROSS_ENTROPY) {
        const int64_t t = a.t[row];
        if (t == CGR_IGNORE) {
            *counted = false;
            return 0.f;
        }
        if (t < 0 || t >= kCols)
            return __int_as_float(0x7fc00000);
        return logf(s.b) + s.a - __ldg(a.x + row * kCols + t);
    } else {
        const float dap = norm_of(s.a);
        float dan = norm_of(s.b);
        if (CGR_SWAP)
            dan = fminf(dan, norm_of(s.c));
        return fmaxf(dap - dan + CGR_MARGIN, 0.f);
    }
}

// grid: kCtas CTAs, kRowsPerCta rows each.
template <int Unused = 0> __global__ void __launch_bounds__(kThreads) rows_kernel(const Args a)
{
    __shared__ Stat red[kThreads / 32];
    __shared__ float loss[kRowsPerCta];
    __shared__ bool counted[kRowsPerCta];
    __shared__ bool last;
    const int slot = threadIdx.x / kRowThreads, g = threadIdx.x % kRowThreads;
    const int64_t row = int64_t(blockIdx.x) * kRowsPerCta + slot;
    Stat s = row < kRows ? row_stat(a, row, g) : stat_init();
    CUTE_UNROLL
    for (int o = 16; o > 0; o >>= 1) s = stat_merge(s, shfl_xor(s, o));
    if constexpr (kRowThreads > 32) {
        if (threadIdx.x % 32 == 0)
            red[threadIdx.x / 32] = s;
        __syncthreads();
        s = red[0];
        for (int w = 1; w < kThreads / 32; ++w) s = stat_merge(s, red[w]);
    }
    if (g == 0) {
        bool c = false;
        const float l = row < kRows ? row_loss(a, row, s, &c) : 0.f;
        if constexpr (kReduction == NONE) {
            if (row < kRows)
                a.out[row] = l;
        } else {
            loss[slot] = l;
            counted[slot] = row < kRows && c;
        }
    }
    if constexpr (kReduction != NONE) {
        __syncthreads();
        if (threadIdx.x == 0) {
            float sum = 0.f, n = 0.f;
            for (int r = 0; r < kRowsPerCta; ++r) {
                sum += loss[r];
                n += counted[r] ? 1.f : 0.f;
            }
            a.part[blockIdx.x] = make_float2(sum, n);
            __threadfence();
            last = atomicAdd(a.done, 1u) == unsigned(gridDim.x - 1);
        }
        __syncthreads();
        if (!last)
            return;
        // the last CTA: every CTA's partial, in CTA order (strided per thread, then a tree)
        __threadfence();
        double sum = 0.0, n = 0.0;
        for (int64_t c = threadIdx.x; c < gridDim.x; c += kThreads) {
            const float2 p = __ldcg(&a.part[c]);
            sum += p.x;
            n += p.y;
        }
        __shared__ double dsum[kThreads], dn[kThreads];
        dsum[threadIdx.x] = sum;
        dn[threadIdx.x] = n;
        __syncthreads();
        for (int h = kThreads / 2; h > 0; h >>= 1) {
            if (int(threadIdx.x) < h) {
                dsum[threadIdx.x] += dsum[threadIdx.x + h];
                dn[threadIdx.x] += dn[threadIdx.x + h];
            }
            __syncthreads();
        }
        if (threadIdx.x == 0)
            a.out[0] = kReduction == SUM ? float(dsum[0]) : float(dsum[0] / dn[0]);
    }
}

constexpr size_t kPartBytes = kReduction == NONE ? 0 : size_t(kCtas) * sizeof(float2);
constexpr size_t kDoneOffset = (kPartBytes + 255) / 256 * 256;
constexpr size_t kWorkspace = kReduction == NONE ? 0 : kDoneOffset + 256;

}  // namespace cgr_rowloss

CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *inputs, int n_inputs)
{
    (void)inputs; (void)n_inputs;
    return cgr_rowloss::kWorkspace;
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out, void *workspace,
                         size_t workspace_bytes, cudaStream_t stream)
{
    using namespace cgr_rowloss;
    if (n_in != kNin || n_out != 1)
        return CG_UNSUPPORTED;
    const int64_t rows_shape[] = { kRows }, mat_shape[] = { kRows, kCols };
    const int64_t scalar_shape[] = { 1 };
    if (!cgr::output_fits(out[0], CG_FLOAT32, kReduction == NONE ? 1 : 0,
                          kReduction == NONE ? rows_shape : scalar_shape))
        return CG_UNSUPPORTED;
    bool aligned = true;
    for (int i = 0; i < kNin; ++i) {
        const bool target = kLoss == CROSS_ENTROPY && i == 1;
        if (!cgr::input_fits(in[i], cgr::CGR_FULL, target ? CG_INT64 : CG_FLOAT32, target ? 1 : 2,
                             target ? rows_shape : mat_shape, &aligned))
            return CG_UNSUPPORTED;
    }
    if (!aligned)
        return CG_UNSUPPORTED;  // the ABI promises 256-byte aligned tensors
    Args a{};
    a.x = static_cast<const float *>(in[0].data);
    if constexpr (kLoss == CROSS_ENTROPY) {
        a.t = static_cast<const int64_t *>(in[1].data);
    } else {
        a.y = static_cast<const float *>(in[1].data);
        a.z = static_cast<const float *>(in[2].data);
    }
    a.out = static_cast<float *>(out[0].data);
    if constexpr (kWorkspace > 0) {
        if (workspace == nullptr || workspace_bytes < kWorkspace)
            return CG_BAD_WORKSPACE;
        a.part = static_cast<float2 *>(workspace);
        a.done = reinterpret_cast<unsigned *>(static_cast<char *>(workspace) + kDoneOffset);
        if (cudaMemsetAsync(a.done, 0, sizeof(unsigned), stream) != cudaSuccess)
            return CG_LAUNCH_FAILED;
    }
    if (kRows == 0 || kCols == 0 || kCtas > 0x7fffffff)
        return CG_UNSUPPORTED;  // empty rows: leave them to PyTorch's conventions
    rows_kernel<><<<unsigned(kCtas), kThreads, 0, stream>>>(a);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
