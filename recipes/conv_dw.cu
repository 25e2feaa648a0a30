// recipes/conv_dw.cu: a depthwise fp32 convolution (nn.Conv1d/2d/3d with groups = CIN =
// COUT), direct, with a fused pointwise epilogue.
//
// y[nb, c, od, oh, ow] = epi(sum over (kd, kh, kw) of
//     x[nb, c, od*SD - PD + kd*DD, oh*SH - PH + kh*DH, ow*SW - PW + kw*DW] * w[c, 0, kd, kh, kw])
// with taps outside the input skipped (zero padding), summed in fp32 in (kd, kh, kw)
// order with fmaf. Conv1d and Conv2d are the 3-D case with D (and H) of 1.
//
// A thread owns one output column ow and CGR_DW_ROWS output rows below each other
// (oh0 .. oh0 + ROWS - 1) of one (nb, c, od): it walks the input rows those outputs read
// once each, loads a row's KW taps into registers and adds them into every output row that
// reads that input row, so an input row is loaded once a thread instead of once an output
// row (KH times at stride 1); the channel's filter is held in registers. Threads walk the
// items with ow fastest: a warp's loads are neighbouring input pixels of one row (coalesced
// for stride 1, L1-cached across taps), its stores a contiguous run of a row. ROWS 1 is the
// plain form, one thread an output. Memory-bound: the roofline is one read of x and one
// write of y.
//
// With CGR_DW_EMULATE defined, the kernel and cg_forward are left out: the host emulator
// (tests/cli/recipe_dw_emu.cpp) runs the index math and the sums.
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
#define CGR_DW_ROWS 8
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
#ifndef CGR_DW_ROWS
#define CGR_DW_ROWS 1
#endif
constexpr int kRows = CGR_DW_ROWS;                        // output rows a thread
constexpr int kRowBlocks = (kOH + kRows - 1) / kRows;     // of each (nb, c, od)
constexpr int kRowsIn = (kRows - 1) * kSH + (kKH - 1) * kDH + 1;  // input rows they read
constexpr int64_t kItems = int64_t(CGR_NB) * kC * kOD * kRowBlocks * kOW;
static_assert(CGR_CIN == CGR_COUT, "depthwise: one filter a channel");
static_assert(kRows >= 1 && kRows <= kOH, "rows a thread: 1 to OH");

#ifdef CGR_DW_EMULATE
#define CGR_DX  // the index math on the host (tests/cli/recipe_dw_emu.cpp)
#else
#define CGR_DX __device__ __forceinline__
#endif

// Whether input row j of a thread's window (ih = oh0 SH - PH + j) feeds output row r
// through tap kh: j = r SH + kh DH.
__host__ __device__ constexpr bool row_feeds(int j, int r, int kh)
{
    return j == r * kSH + kh * kDH;
}
__host__ __device__ constexpr bool row_used(int j)
{
    for (int r = 0; r < kRows; ++r)
        for (int kh = 0; kh < kKH; ++kh)
            if (row_feeds(j, r, kh))
                return true;
    return false;
}

// A thread's item: output column ow of rows oh0 .. oh0 + kRows - 1 of (plane = nb C + c, od).
struct Item {
    int64_t plane;
    int c, od, oh0, ow;
};
CGR_DX Item item_of(int64_t item)
{
    Item it;
    it.ow = int(item % kOW);
    int64_t t = item / kOW;
    it.oh0 = int(t % kRowBlocks) * kRows;
    t /= kRowBlocks;
    it.od = int(t % kOD);
    it.plane = t / kOD;
    it.c = int(it.plane % kC);
    return it;
}
// where output row r of the item is stored (-1 past the last row)
CGR_DX int64_t out_index(const Item &it, int r)
{
    const int oh = it.oh0 + r;
    return oh < kOH ? ((it.plane * kOD + it.od) * kOH + oh) * kOW + it.ow : -1;
}

// The item's sums: X its (nb, c) input plane, w its channel's filter (kTaps values). Each
// input row the rows read is loaded once (its KW taps), added into every row it feeds; a
// row's sum takes its taps in (kd, kh, kw) order, as the plain form does.
CGR_DX void column_sums(const float *X, const float (&w)[kTaps], const Item &it, float (&acc)[kRows])
{
#pragma unroll
    for (int r = 0; r < kRows; ++r)
        acc[r] = 0.f;
#pragma unroll
    for (int kd = 0; kd < kKD; ++kd) {
        const int id = it.od * kSD - kPD + kd * kDD;
        if (unsigned(id) >= unsigned(kID))
            continue;
#pragma unroll
        for (int j = 0; j < kRowsIn; ++j) {
            if (!row_used(j))
                continue;
            const int ih = it.oh0 * kSH - kPH + j;
            if (unsigned(ih) >= unsigned(kIH))
                continue;
            const float *row = X + (int64_t(id) * kIH + ih) * kIW;
            float v[kKW];
#pragma unroll
            for (int kw = 0; kw < kKW; ++kw) {
                const int iw = it.ow * kSW - kPW + kw * kDW;
                v[kw] = unsigned(iw) < unsigned(kIW) ? __ldg(row + iw) : 0.f;  // zero padding
            }
#pragma unroll
            for (int r = 0; r < kRows; ++r)
#pragma unroll
                for (int kh = 0; kh < kKH; ++kh)
                    if (row_feeds(j, r, kh))
#pragma unroll
                        for (int kw = 0; kw < kKW; ++kw)
                            acc[r] = fmaf(v[kw], w[(kd * kKH + kh) * kKW + kw], acc[r]);
        }
    }
}

#ifndef CGR_DW_EMULATE
#include "conv_inputs.cuh"  // recipe:inline

struct Params {
    const float *in[kNin > 0 ? kNin : 1];
    float *out;
};

__global__ void __launch_bounds__(kThreads) dw_kernel(const Params p)
{
    const int64_t item = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (item >= kItems)
        return;
    const Item it = item_of(item);
    float w[kTaps];
#pragma unroll
    for (int i = 0; i < kTaps; ++i)
        w[i] = __ldg(p.in[CGR_W] + int64_t(it.c) * kTaps + i);
    float acc[kRows];
    column_sums(p.in[CGR_X] + it.plane * kPlaneIn, w, it, acc);
    // the rows' inputs loaded before any of their stores (the compiler keeps a load after a
    // store in that order: one round trip a row otherwise)
    float x[kRows][kNin > 0 ? kNin : 1];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
        if (kOH % kRows == 0 || out_index(it, r) >= 0)
            inputs_at(p, out_index(it, r), it.c, x[r]);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
        const int64_t idx = out_index(it, r);
        if (kOH % kRows != 0 && idx < 0)
            break;
        p.out[idx] = cgr_epi(acc[r], x[r]);
    }
}
#endif  // CGR_DW_EMULATE

static const int64_t kOutShape[] = CGR_OUT_SHAPE;

}  // namespace cgr_dw

#ifndef CGR_DW_EMULATE
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
    constexpr int64_t blocks = (kItems + kThreads - 1) / kThreads;
    static_assert(blocks < (int64_t(1) << 31), "grid limits");
    dw_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(p);
    if (cudaGetLastError() != cudaSuccess)
        return CG_LAUNCH_FAILED;
    return CG_OK;
}
#endif  // CGR_DW_EMULATE
