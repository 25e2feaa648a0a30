// recipes/conv_mean.cu: the mean (or sum) over all the pixels of a transposed convolution
// without padding, after an epilogue affine in its value, folded: the convolution itself
// is never computed (src/recipe_conv.c spatred_setup; level 2 #77: ConvTranspose3d, a
// scale, BatchNorm, a global average pooling; #42's first stage: ConvTranspose2d, then
// torch.mean over (2, 3), then a bias).
//
// Without padding, output pixel o of a transposed convolution receives x[i] w[k] exactly
// where o = i*stride + k*dil, and every (i, k) pair lands inside the output (its extent is
// (in - 1)*stride + dil*(k - 1) + output_padding + 1). So the sum over the output's pixels
//   sum_o conv[n, co, o] = sum_ci X[n, ci] W[ci, co]
// with X the sum of x[n, ci] over its pixels and W the sum of w[ci, co]'s taps (ci over co's
// group), and the epilogue before the reduction, affine with coefficients a channel
// (pre(r) = a r + b), commutes with the mean: mean_o pre(conv) = pre(mean_o conv); a sum is
// OD*OH*OW times that.
//
//  - sums_kernel: CTA b < NB*CIN sums row b of x (one image's channel, 16-byte loads where
//    the plane allows, in double) into ws[b]; the CTAs after those sum the weight's taps a
//    warp a (ci, co) pair (coalesced), into ws[NB*CIN + ci*COUT_G + co].
//  - out_kernel: a thread an output (n, co): the products of the sums in double, divided by
//    the output's pixels, then cgr_pre (the affine map, the convolution's bias in it) and
//    cgr_epi (what follows the reduction).
// Memory-bound: one read of x and of the weight (the convolution's roofline is its FLOPs).
//
// Named parameters (CGR_*): src/recipe_conv.c writes them in place of the `recipe:params`
// line; the defaults make this file compile on its own.
#include <cutegen/abi.h>
#include <cstdint>
#include <type_traits>
#include "ops.cuh"  // recipe:inline

// recipe:params
#ifndef CGR_GENERATED
#define CGR_NB 2
#define CGR_CIN 8
#define CGR_COUT 16
#define CGR_GROUPS 1
#define CGR_ID 1
#define CGR_IH 8
#define CGR_IW 16
#define CGR_KD 1
#define CGR_KH 3
#define CGR_KW 3
#define CGR_OD 1
#define CGR_OH 10
#define CGR_OW 18
#define CGR_X 0
#define CGR_W 1
#define CGR_THREADS 256
#define CGR_SPATRED 1
#define CGR_NIN 2
#define CGR_INPUTS(X) X(0, CGR_CV_OPERAND) X(1, CGR_CV_OPERAND)
#define CGR_IN_NDIMS {4, 4}
#define CGR_IN_SHAPES {{2, 8, 8, 16}, {8, 16, 3, 3}}
#define CGR_OUT_NDIM 4
#define CGR_OUT_SHAPE {2, 16, 1, 1}
__device__ __forceinline__ float cgr_pre(float r, const float *x) { (void)x; return r; }
__device__ __forceinline__ float cgr_epi(float r, const float *x) { (void)x; return r; }
#endif
#ifndef CGR_GROUPS
#define CGR_GROUPS 1
#endif

namespace cgr_mean {

constexpr int kNb = CGR_NB, kCin = CGR_CIN, kCout = CGR_COUT, kG = CGR_GROUPS;
constexpr int kCinG = kCin / kG, kCoutG = kCout / kG;
constexpr int64_t kPlaneIn = int64_t(CGR_ID) * CGR_IH * CGR_IW;
constexpr int64_t kPlaneOut = int64_t(CGR_OD) * CGR_OH * CGR_OW;
constexpr int kTaps = CGR_KD * CGR_KH * CGR_KW;
constexpr int kThreads = CGR_THREADS;
constexpr int kNin = CGR_NIN;
constexpr int64_t kRows = int64_t(kNb) * kCin;           // rows of x: ws[0, kRows)
constexpr int64_t kPairs = int64_t(kCin) * kCoutG;       // (ci, co) pairs of the weight
constexpr int kPairsCta = kThreads / 32;                 // a warp a pair
constexpr int64_t kPairCtas = (kPairs + kPairsCta - 1) / kPairsCta;
static_assert(kCin % kG == 0 && kCout % kG == 0, "groups divide the channels");
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps");
static_assert(CGR_SPATRED == 1 || CGR_SPATRED == 2, "a mean (1) or a sum (2)");
static_assert(kRows + kPairCtas < (int64_t(1) << 31), "grid limits");

#include "conv_inputs.cuh"  // recipe:inline

struct Params {
    const float *in[kNin > 0 ? kNin : 1];
    float *out;
    double *ws;  // kRows sums of x, then kPairs sums of the weight's taps
};

__device__ __forceinline__ double warp_sum(double v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Row b of x summed by the CTA (thread 0 gets the total).
__device__ __forceinline__ double row_sum(const float *row)
{
    double s = 0;
    if constexpr (kPlaneIn % 4 == 0) {  // rows start 16-byte aligned (cudaMalloc'd x)
        const float4 *r4 = reinterpret_cast<const float4 *>(row);
        const int64_t n4 = kPlaneIn / 4;
#pragma unroll 4
        for (int64_t i = threadIdx.x; i < n4; i += kThreads) {
            const float4 v = __ldg(r4 + i);
            s += double(v.x) + double(v.y) + double(v.z) + double(v.w);
        }
    } else {
        for (int64_t i = threadIdx.x; i < kPlaneIn; i += kThreads)
            s += double(__ldg(row + i));
    }
    __shared__ double part[kThreads / 32];
    s = warp_sum(s);
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
        s = threadIdx.x < kThreads / 32 ? part[threadIdx.x] : 0.0;
        s = warp_sum(s);
    }
    return s;
}

__global__ void __launch_bounds__(kThreads) sums_kernel(const Params p)
{
    const int64_t b = blockIdx.x;
    if (b < kRows) {
        const double s = row_sum(p.in[CGR_X] + b * kPlaneIn);
        if (threadIdx.x == 0)
            p.ws[b] = s;
        return;
    }
    const int64_t q = (b - kRows) * kPairsCta + threadIdx.x / 32;  // the weight's (ci, co) pair
    if (q >= kPairs)
        return;
    const float *w = p.in[CGR_W] + q * kTaps;  // [CIN][COUT/groups][taps]: a pair's taps contiguous
    double s = 0;
    for (int k = threadIdx.x & 31; k < kTaps; k += 32)
        s += double(__ldg(w + k));
    s = warp_sum(s);
    if ((threadIdx.x & 31) == 0)
        p.ws[kRows + q] = s;
}

__global__ void __launch_bounds__(kThreads) out_kernel(const Params p)
{
    const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;  // n*COUT + co
    if (i >= int64_t(kNb) * kCout)
        return;
    const int n = int(i / kCout), co = int(i % kCout), g = co / kCoutG, col = co % kCoutG;
    const double *X = p.ws + int64_t(n) * kCin + int64_t(g) * kCinG;
    const double *W = p.ws + kRows + int64_t(g) * kCinG * kCoutG + col;
    double s = 0;
    for (int c = 0; c < kCinG; ++c)
        s += X[c] * W[int64_t(c) * kCoutG];
    float x[kNin > 0 ? kNin : 1];
    inputs_at(p, i, co, x);  // scalars and values a channel (no input of the convolution's shape)
    float r = cgr_pre(float(s / double(kPlaneOut)), x);
    if constexpr (CGR_SPATRED == 2)
        r *= float(kPlaneOut);
    p.out[i] = cgr_epi(r, x);
}

static const int64_t kOutShape[] = CGR_OUT_SHAPE;

}  // namespace cgr_mean

CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *in, int n_in)
{
    (void)in; (void)n_in;
    return size_t(cgr_mean::kRows + cgr_mean::kPairs) * sizeof(double);
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace cgr_mean;
    if (n_in != kNin || n_out != 1)
        return CG_UNSUPPORTED;
    if (!cgr::output_fits(out[0], CG_FLOAT32, CGR_OUT_NDIM, kOutShape))
        return CG_UNSUPPORTED;
    Params p{};
    if (!inputs_fit(in, p))
        return CG_UNSUPPORTED;
    if (kNb == 0 || kCout == 0)
        return CG_OK;
    if (workspace_bytes < size_t(kRows + kPairs) * sizeof(double) ||
        reinterpret_cast<uintptr_t>(workspace) % alignof(double) != 0)
        return CG_UNSUPPORTED;
    if (kPlaneIn % 4 == 0 && reinterpret_cast<uintptr_t>(p.in[CGR_X]) % 16 != 0)
        return CG_UNSUPPORTED;  // the rows' 16-byte loads
    p.out = static_cast<float *>(out[0].data);
    p.ws = static_cast<double *>(workspace);
    sums_kernel<<<unsigned(kRows + kPairCtas), kThreads, 0, stream>>>(p);
    constexpr int64_t outs = int64_t(kNb) * kCout;
    out_kernel<<<unsigned((outs + kThreads - 1) / kThreads), kThreads, 0, stream>>>(p);
    if (cudaGetLastError() != cudaSuccess)
        return CG_LAUNCH_FAILED;
    return CG_OK;
}
