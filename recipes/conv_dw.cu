// recipes/conv_dw.cu: a depthwise fp32 convolution (nn.Conv1d/2d/3d with groups = CIN =
// COUT), direct, one thread an output element, with a fused pointwise epilogue.
//
// y[nb, c, od, oh, ow] = epi(sum over (kd, kh, kw) of
//     x[nb, c, od*SD - PD + kd*DD, oh*SH - PH + kh*DH, ow*SW - PW + kw*DW] * w[c, 0, kd, kh, kw])
// with taps outside the input skipped (zero padding), summed in fp32 in (kd, kh, kw)
// order with fmaf. Conv1d and Conv2d are the 3-D case with D (and H) of 1.
//
// Threads walk y in its own (contiguous NC[D]HW) order: a warp's loads are neighbouring
// input pixels of one row (coalesced for stride 1, L1-cached across taps), its stores
// one contiguous run. Memory-bound: the roofline is one read of x and one write of y.
//
// Named parameters (CGR_*): src/recipe_conv.c writes them in place of the
// `recipe:params` line; the defaults make this file compile on its own.
#include <cutegen/abi.h>
#include <cstdint>
#include <type_traits>
#include "ops.cuh"  // recipe:inline

// recipe:params
#ifndef CGR_GENERATED
#define CGR_NB 16
#define CGR_CIN 64
#define CGR_COUT 64
#define CGR_ID 1
#define CGR_IH 512
#define CGR_IW 512
#define CGR_KD 1
#define CGR_KH 3
#define CGR_KW 3
#define CGR_OD 1
#define CGR_OH 510
#define CGR_OW 510
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
#define CGR_NIN 2
#define CGR_INPUTS(X) X(0, CGR_CV_OPERAND) X(1, CGR_CV_OPERAND)
#define CGR_IN_NDIMS {4, 4}
#define CGR_IN_SHAPES {{16, 64, 512, 512}, {64, 1, 3, 3}}
#define CGR_OUT_NDIM 4
#define CGR_OUT_SHAPE {16, 64, 510, 510}
__device__ __forceinline__ float cgr_epi(float r, const float *x) { (void)x; return r; }
#endif

namespace cgr_dw {

constexpr int kC = CGR_COUT;
constexpr int kID = CGR_ID, kIH = CGR_IH, kIW = CGR_IW;
constexpr int kKD = CGR_KD, kKH = CGR_KH, kKW = CGR_KW;
constexpr int kOD = CGR_OD, kOH = CGR_OH, kOW = CGR_OW;
constexpr int kSD = CGR_SD, kSH = CGR_SH, kSW = CGR_SW;
constexpr int kPD = CGR_PD, kPH = CGR_PH, kPW = CGR_PW;
constexpr int kDD = CGR_DD, kDH = CGR_DH, kDW = CGR_DW;
constexpr int64_t kPlaneIn = int64_t(kID) * kIH * kIW;
constexpr int64_t kPlaneOut = int64_t(kOD) * kOH * kOW;
constexpr int64_t kTotal = int64_t(CGR_NB) * kC * kPlaneOut;
constexpr int kTaps = kKD * kKH * kKW;
constexpr int kThreads = CGR_THREADS;
constexpr int kNin = CGR_NIN;
static_assert(CGR_CIN == CGR_COUT, "depthwise: one filter a channel");

#include "conv_inputs.cuh"  // recipe:inline

struct Params {
    const float *in[kNin > 0 ? kNin : 1];
    float *out;
};

__global__ void __launch_bounds__(kThreads) dw_kernel(const Params p)
{
    const int64_t idx = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (idx >= kTotal)
        return;
    const int64_t plane = idx / kPlaneOut;  // nb * C + c
    const int64_t pix = idx - plane * kPlaneOut;
    const int c = int(plane % kC);
    const int od = int(pix / (int64_t(kOH) * kOW));
    const int r = int(pix - int64_t(od) * kOH * kOW);
    const int oh = r / kOW;
    const int ow = r - oh * kOW;
    const float *X = p.in[CGR_X] + plane * kPlaneIn;
    const float *W = p.in[CGR_W] + int64_t(c) * kTaps;
    float acc = 0.f;
#pragma unroll
    for (int kd = 0; kd < kKD; ++kd) {
        const int id = od * kSD - kPD + kd * kDD;
        if (unsigned(id) >= unsigned(kID))
            continue;
#pragma unroll
        for (int kh = 0; kh < kKH; ++kh) {
            const int ih = oh * kSH - kPH + kh * kDH;
            if (unsigned(ih) >= unsigned(kIH))
                continue;
            const float *row = X + (int64_t(id) * kIH + ih) * kIW;
#pragma unroll
            for (int kw = 0; kw < kKW; ++kw) {
                const int iw = ow * kSW - kPW + kw * kDW;
                if (unsigned(iw) < unsigned(kIW))
                    acc = fmaf(__ldg(row + iw), __ldg(W + (kd * kKH + kh) * kKW + kw), acc);
            }
        }
    }
    float x[kNin > 0 ? kNin : 1];
    inputs_at(p, idx, c, x);
    p.out[idx] = cgr_epi(acc, x);
}

static const int64_t kOutShape[] = CGR_OUT_SHAPE;

}  // namespace cgr_dw

CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *in, int n_in)
{
    (void)in; (void)n_in;
    return 0;
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace cgr_dw;
    (void)workspace; (void)workspace_bytes;
    if (n_in != kNin || n_out != 1)
        return CG_UNSUPPORTED;
    if (!cgr::output_fits(out[0], CG_FLOAT32, CGR_OUT_NDIM, kOutShape))
        return CG_UNSUPPORTED;
    Params p{};
    if (!inputs_fit(in, p))
        return CG_UNSUPPORTED;
    if (kTotal == 0)
        return CG_OK;
    p.out = static_cast<float *>(out[0].data);
    constexpr int64_t blocks = (kTotal + kThreads - 1) / kThreads;
    static_assert(blocks < (int64_t(1) << 31), "grid limits");
    dw_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(p);
    if (cudaGetLastError() != cudaSuccess)
        return CG_LAUNCH_FAILED;
    return CG_OK;
}
