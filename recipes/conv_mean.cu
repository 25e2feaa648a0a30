// recipes/conv_mean.cu: the mean (or sum) over all the pixels of a transposed convolution,
// after an epilogue affine in its value, folded: the convolution itself is never computed
// (src/recipe_conv.c spatred_setup; level 2 #77: ConvTranspose3d, a scale, BatchNorm, a
// global average pooling; #42's first stage: ConvTranspose2d, then torch.mean over (2, 3),
// then a bias; #44's: stride 2, padding 1, output padding 1, then the mean).
//
// Output pixel o of a transposed convolution receives x[i] w[k] exactly where o = i*stride
// - pad + k*dil lies in [0, out). Along each dim the input indices tap k reaches are an
// interval [tap_lo, tap_hi]; only a few leading and trailing indices are missed by some
// tap (none without padding). So each dim's indices fall into cells: each of those border
// indices a cell of its own, the ones between them (every tap reaches them) one cell, and
// sum_o conv[n, co, o] = sum_ci sum_cells X[n, ci, cell] W[ci, co, cell]
// with X the sum of x[n, ci] over a cell (a box of the plane) and W the sum of w[ci, co]'s
// taps that reach that cell (ci over co's group); without padding one cell: the plane's
// sum times the taps' sum. The epilogue before the reduction, affine with coefficients a
// channel (pre(r) = a r + b), commutes with the mean: mean_o pre(conv) = pre(mean_o conv);
// a sum is OD*OH*OW times that.
//
//  - sums_kernel: CTA b < NB*CIN sums plane b of x into its cells (plane_cells: in double,
//    16-byte loads where aligned), into ws[b*CELLS]; the CTAs after those a warp a (ci, co)
//    pair of the weight: for each cell the taps reaching it (coalesced along the taps).
//  - out_kernel: a thread an output (n, co): the products of the cell sums in double,
//    divided by the output's pixels, then cgr_pre (the affine map, the convolution's bias
//    in it) and cgr_epi (what follows the reduction).
// Memory-bound: one read of x and of the weight (the convolution's roofline is its FLOPs).
// The cells' math is conv_fold.cuh's (Cells: tap_lo, tap_hi, cell_of, in_box). With
// CGR_MEAN_EMULATE defined only that and single_w are compiled: tests/cli/recipe_mean_emu.cpp
// checks the fold through them on the host.
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
#define CGR_SD 1
#define CGR_SH 1
#define CGR_SW 1
#define CGR_PD 0
#define CGR_PH 0
#define CGR_PW 0
#define CGR_DD 1
#define CGR_DH 1
#define CGR_DW 1
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

#include "conv_fold.cuh"  // recipe:inline

constexpr int kNb = CGR_NB, kCin = CGR_CIN, kCout = CGR_COUT, kG = CGR_GROUPS;
constexpr int kCinG = kCin / kG, kCoutG = kCout / kG;
constexpr int kIW = CGR_IW;
constexpr int64_t kPlaneIn = int64_t(CGR_ID) * CGR_IH * CGR_IW;
constexpr int64_t kPlaneOut = int64_t(CGR_OD) * CGR_OH * CGR_OW;
constexpr int kPlaneRows = CGR_ID * CGR_IH;
constexpr int kTaps = CGR_KD * CGR_KH * CGR_KW;

// The geometry along dim d (0 D, 1 H, 2 W), and its cells (conv_fold.cuh).
using Geo = cgr_fold::Geometry<CGR_ID, CGR_IH, CGR_IW, CGR_KD, CGR_KH, CGR_KW, CGR_OD, CGR_OH, CGR_OW, CGR_SD, CGR_SH,
                               CGR_SW, CGR_PD, CGR_PH, CGR_PW, CGR_DD, CGR_DH, CGR_DW>;
using Cell = cgr_fold::Cells<Geo>;
constexpr int kC0 = Cell::cells(0), kC1 = Cell::cells(1), kC2 = Cell::cells(2);
constexpr int kCells = kC0 * kC1 * kC2;      // a plane's cells
constexpr int kSingles = kC2 - 1;            // a row's cells of one index (along W)
// The s-th index of a row that is a cell of its own (s < kSingles).
CGR_FX constexpr int single_w(int s) { return s < Cell::lead(2) ? s : kIW - Cell::trail(2) + (s - Cell::lead(2)); }

constexpr int kThreads = CGR_THREADS, kWarps = kThreads / 32;
constexpr int kNin = CGR_NIN;
constexpr int64_t kRows = int64_t(kNb) * kCin;           // planes of x: cell sums at ws[row*kCells]
constexpr int64_t kPairs = int64_t(kCin) * kCoutG;       // (ci, co) pairs of the weight
constexpr int kPairsCta = kWarps;                        // a warp a pair
constexpr int64_t kPairCtas = (kPairs + kPairsCta - 1) / kPairsCta;
constexpr int64_t kWsDoubles = (kRows + kPairs) * kCells;
static_assert(kCin % kG == 0 && kCout % kG == 0, "groups divide the channels");
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps");
static_assert(CGR_SPATRED == 1 || CGR_SPATRED == 2, "a mean (1) or a sum (2)");
static_assert(Cell::lead(0) + Cell::trail(0) < Geo::in(0) && Cell::lead(1) + Cell::trail(1) < Geo::in(1) &&
              Cell::lead(2) + Cell::trail(2) < Geo::in(2), "every tap reaches the middle cell of each dim");
static_assert(kCells <= 64 && kSingles <= 32, "few border cells (src/recipe_conv.c recipe_conv_pixels_fold)");
static_assert(kRows + kPairCtas < (int64_t(1) << 31), "grid limits");

#ifndef CGR_MEAN_EMULATE
#include "conv_inputs.cuh"  // recipe:inline

struct Params {
    const float *in[kNin > 0 ? kNin : 1];
    float *out;
    double *ws;  // kRows x kCells sums of x, then kPairs x kCells sums of the weight's taps
};

__device__ __forceinline__ double warp_sum(double v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// The n elements at p summed by a warp's lanes (lane-strided, 16-byte loads where aligned).
template <int64_t N> __device__ __forceinline__ double lanes_sum(const float *p, int lane, int step)
{
    double s = 0;
    if constexpr (N % 4 == 0) {  // p 16-byte aligned: x is, and N a multiple of 4 floats
        const float4 *p4 = reinterpret_cast<const float4 *>(p);
#pragma unroll 4
        for (int64_t i = lane; i < N / 4; i += step) {
            const float4 v = __ldg(p4 + i);
            s += double(v.x) + double(v.y) + double(v.z) + double(v.w);
        }
    } else {
        for (int64_t i = lane; i < N; i += step)
            s += double(__ldg(p + i));
    }
    return s;
}

// One plane of x (image n, channel ci) into its cell sums: the whole plane where it is one
// cell; else a warp a row: the row's sum, its single cells along W read apart, the middle
// cell their difference, into the warp's own slot of shared memory, then the warps' slots added.
__device__ __forceinline__ void plane_cells(const float *plane, double *out)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
    if constexpr (kCells == 1) {
        __shared__ double part[kWarps];
        double s = warp_sum(lanes_sum<kPlaneIn>(plane, threadIdx.x, kThreads));
        if (lane == 0)
            part[warp] = s;
        __syncthreads();
        if (threadIdx.x == 0) {
            for (int w = 1; w < kWarps; ++w)
                s += part[w];
            out[0] = s;
        }
    } else {
        __shared__ double acc[kWarps][kCells];
        for (int i = threadIdx.x; i < kWarps * kCells; i += kThreads)
            (&acc[0][0])[i] = 0.0;
        __syncthreads();
        for (int r = warp; r < kPlaneRows; r += kWarps) {
            const float *row = plane + int64_t(r) * kIW;
            const double total = warp_sum(lanes_sum<kIW>(row, lane, 32));
            const double single = lane < kSingles ? double(__ldg(row + single_w(lane))) : 0.0;
            const double singles = warp_sum(single);
            const int base = (Cell::cell_of(0, r / CGR_IH) * kC1 + Cell::cell_of(1, r % CGR_IH)) * kC2;
            if (lane < kSingles)
                acc[warp][base + Cell::cell_of(2, single_w(lane))] += single;
            if (lane == 0)
                acc[warp][base + Cell::lead(2)] += total - singles;
            __syncwarp();
        }
        __syncthreads();
        for (int c = threadIdx.x; c < kCells; c += kThreads) {
            double s = 0;
            for (int w = 0; w < kWarps; ++w)
                s += acc[w][c];
            out[c] = s;
        }
    }
}

__global__ void __launch_bounds__(kThreads) sums_kernel(const Params p)
{
    const int64_t b = blockIdx.x;
    if (b < kRows) {
        plane_cells(p.in[CGR_X] + b * kPlaneIn, p.ws + b * kCells);
        return;
    }
    const int64_t q = (b - kRows) * kPairsCta + threadIdx.x / 32;  // the weight's (ci, co) pair
    if (q >= kPairs)
        return;
    const float *w = p.in[CGR_W] + q * kTaps;  // [CIN][COUT/groups][taps]: a pair's taps contiguous
    for (int c = 0; c < kCells; ++c) {
        const int c0 = c / (kC1 * kC2), c1 = c / kC2 % kC1, c2 = c % kC2;
        double s = 0;
        for (int k = threadIdx.x & 31; k < kTaps; k += 32) {
            const int k0 = k / (CGR_KH * CGR_KW), k1 = k / CGR_KW % CGR_KH, k2 = k % CGR_KW;
            if (Cell::in_box(0, c0, k0) && Cell::in_box(1, c1, k1) && Cell::in_box(2, c2, k2))
                s += double(__ldg(w + k));
        }
        s = warp_sum(s);
        if ((threadIdx.x & 31) == 0)
            p.ws[(kRows + q) * kCells + c] = s;
    }
}

__global__ void __launch_bounds__(kThreads) out_kernel(const Params p)
{
    const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;  // n*COUT + co
    if (i >= int64_t(kNb) * kCout)
        return;
    const int n = int(i / kCout), co = int(i % kCout), g = co / kCoutG, col = co % kCoutG;
    double s = 0;
    for (int c = 0; c < kCinG; ++c) {
        const int64_t ci = int64_t(g) * kCinG + c;
        const double *X = p.ws + (int64_t(n) * kCin + ci) * kCells;
        const double *W = p.ws + (kRows + ci * kCoutG + col) * kCells;
        for (int cell = 0; cell < kCells; ++cell)
            s += X[cell] * W[cell];
    }
    float x[kNin > 0 ? kNin : 1];
    inputs_at(p, i, co, x);  // scalars and values a channel (no input of the convolution's shape)
    float r = cgr_pre(float(s / double(kPlaneOut)), x);
    if constexpr (CGR_SPATRED == 2)
        r *= float(kPlaneOut);
    p.out[i] = cgr_epi(r, x);
}

static const int64_t kOutShape[] = CGR_OUT_SHAPE;
#endif  // CGR_MEAN_EMULATE

}  // namespace cgr_mean

#ifndef CGR_MEAN_EMULATE
CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *in, int n_in)
{
    (void)in; (void)n_in;
    return size_t(cgr_mean::kWsDoubles) * sizeof(double);
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
    if (workspace_bytes < size_t(kWsDoubles) * sizeof(double) ||
        reinterpret_cast<uintptr_t>(workspace) % alignof(double) != 0)
        return CG_UNSUPPORTED;
    if ((kCells == 1 ? kPlaneIn % 4 == 0 : kIW % 4 == 0) && reinterpret_cast<uintptr_t>(p.in[CGR_X]) % 16 != 0)
        return CG_UNSUPPORTED;  // the 16-byte loads
    p.out = static_cast<float *>(out[0].data);
    p.ws = static_cast<double *>(workspace);
    sums_kernel<<<unsigned(kRows + kPairCtas), kThreads, 0, stream>>>(p);
    constexpr int64_t outs = int64_t(kNb) * kCout;
    out_kernel<<<unsigned((outs + kThreads - 1) / kThreads), kThreads, 0, stream>>>(p);
    if (cudaGetLastError() != cudaSuccess)
        return CG_LAUNCH_FAILED;
    return CG_OK;
}
#endif  // CGR_MEAN_EMULATE
