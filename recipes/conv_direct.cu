// recipes/conv_direct.cu: a direct fp32 transposed convolution, grouped or not, on the
// CUDA cores, with a fused pointwise epilogue: a thread an output pixel and CO_T output
// channels of one group, the group's weights for those channels in shared memory.
//
// Per dim, y[nb, co, o] = epi(sum over the group's ci and the taps k with o = i*S - P + k*D,
// 0 <= i < I, of x[nb, ci, i] * w[ci, co % COUT_G, k]), summed in fp32 with fmaf, taps in
// (kd, kh, kw) order, then channels.
//
// Why: a strided transposed convolution whose sub-pixel phases take few taps (level 1 #81:
// stride 5 and dilation 2, so 9 of its 25 phases have one tap and 16 none; #73: 8 input
// channels a group) does a few dozen products an output and is bound by writing y. The
// implicit GEMM (recipes/conv_tc.cu) pads such products to tensor-core tiles and writes y
// phase by phase, a stride apart; here y is written once, in its own order, coalesced.
//
// A CTA: THREADS output pixels of one (nb, group, block of CO_T channels), ITERS times over,
// after staging the block's weights once. A row is cut into chunks of 32 x SW outputs, and
// warp r of a chunk takes its outputs of width phase r (ow = chunk + r + SW x lane): a
// warp's lanes share their taps (no divergence between phases, one weight address a read),
// their x loads are neighbouring pixels, and the chunk's SW warps, adjacent, fill the same
// output sectors together. Shared memory holds the weights as ws[ci][tap][CO_T + 4]: float4
// reads of 4 channels (the pad staggers different taps' rows over the banks).
// With CGR_DIRECT_STAGE 1 (the generator's since lab round 60; THREADS a multiple of 32 x SW,
// so that a CTA holds whole chunks: the generator's 64 x SW) a warp's stores are no longer SW
// floats apart (H100, lab round 60: level 1 #81 0.575 ms against the plain stores' 1.980, #79
// 1.576 against 2.451, #75 0.580 against 1.352): each thread puts its sums in
// a shared tile at its pixel's place in the chunk ([CO_T][THREADS]; a warp's lanes SW apart,
// conflict-free for odd SW), and after a barrier thread t writes the chunk's t-th pixel of
// each channel, the epilogue applied there: whole 128-byte rows a warp.
// With CGR_DIRECT_PIX 2 (the generator's where a row holds two chunks, with half the channel
// block; lab round 70, H100: #75 0.559 ms against 0.581, #79 1.469 against 1.611, #81 0.517
// against 0.597) a thread sums two pixels of its row, one chunk apart: the same phases, so
// the same taps and weights; each float4 of weights read from shared memory serves both,
// and x loads two a (tap, ci). A pixel whose tap falls outside x reads a zero.
//
// Named parameters (CGR_*): src/recipe_conv.c writes them in place of the `recipe:params`
// line; the defaults make this file compile on its own (a small transposed convolution of
// stride 5, dilation 2). With CGR_DIRECT_EMULATE defined, the kernel and cg_forward are
// left out: the host emulator (tests/cli/recipe_direct_emu.cpp) runs the index math.
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
#define CGR_TRANSPOSED 1
#define CGR_ID 1
#define CGR_IH 8
#define CGR_IW 16
#define CGR_KD 1
#define CGR_KH 3
#define CGR_KW 3
#define CGR_OD 1
#define CGR_OH 38
#define CGR_OW 78
#define CGR_SD 1
#define CGR_SH 5
#define CGR_SW 5
#define CGR_PD 0
#define CGR_PH 1
#define CGR_PW 1
#define CGR_DD 1
#define CGR_DH 2
#define CGR_DW 2
#define CGR_X 0
#define CGR_W 1
#define CGR_THREADS 128
#define CGR_CO_T 16
#define CGR_ITERS 4
#define CGR_NIN 2
#define CGR_INPUTS(X) X(0, CGR_CV_OPERAND) X(1, CGR_CV_OPERAND)
#define CGR_IN_NDIMS {4, 4}
#define CGR_IN_SHAPES {{2, 8, 8, 16}, {8, 16, 3, 3}}
#define CGR_OUT_NDIM 4
#define CGR_OUT_SHAPE {2, 16, 38, 78}
__device__ __forceinline__ float cgr_epi(float r, const float *x) { (void)x; return r; }
#endif
#ifndef CGR_GROUPS
#define CGR_GROUPS 1
#endif
#ifndef CGR_DIRECT_STAGE
#define CGR_DIRECT_STAGE 0
#endif
#ifndef CGR_DIRECT_PIX
#define CGR_DIRECT_PIX 1
#endif

#ifdef CGR_DIRECT_EMULATE
#define CGR_DX  // the index math on the host
#else
#define CGR_DX __device__
#endif

namespace cgr_direct {

constexpr int kNb = CGR_NB, kCin = CGR_CIN, kCout = CGR_COUT, kG = CGR_GROUPS;
constexpr int kCinG = kCin / kG, kCoutG = kCout / kG;
constexpr int kID = CGR_ID, kIH = CGR_IH, kIW = CGR_IW;
constexpr int kKD = CGR_KD, kKH = CGR_KH, kKW = CGR_KW;
constexpr int kOD = CGR_OD, kOH = CGR_OH, kOW = CGR_OW;
constexpr int kSD = CGR_SD, kSH = CGR_SH, kSW = CGR_SW;
constexpr int kPD = CGR_PD, kPH = CGR_PH, kPW = CGR_PW;
constexpr int kDD = CGR_DD, kDH = CGR_DH, kDW = CGR_DW;
constexpr int64_t kPlaneIn = int64_t(kID) * kIH * kIW;
constexpr int64_t kPlaneOut = int64_t(kOD) * kOH * kOW;
constexpr int kTaps = kKD * kKH * kKW;
constexpr int kThreads = CGR_THREADS, kCoT = CGR_CO_T, kIters = CGR_ITERS;
constexpr int kCoBlocks = kCoutG / kCoT;
constexpr int kRow = kCoT + 4;  // floats of a (ci, tap) row of ws
constexpr int kWsFloats = kCinG * kTaps * kRow;
constexpr bool kStage = CGR_DIRECT_STAGE != 0;
constexpr int kPix = CGR_DIRECT_PIX;                              // pixels a thread, a chunk apart
constexpr int kTilePlaces = kPix * kThreads;                      // a CTA's pixels
constexpr int kTileFloats = kStage ? kCoT * kTilePlaces : 0;      // CGR_DIRECT_STAGE: the sums' tile
constexpr int kSmem = (kWsFloats + kTileFloats) * int(sizeof(float));
constexpr int kChunk = 32 * kSW;                                   // outputs of a row a chunk
constexpr int kSpan = kPix * kChunk;                               // outputs of a row a chunk's threads take
constexpr int kRowJ = (kOW + kSpan - 1) / kSpan * kChunk;          // a row's threads, whole chunks
constexpr int64_t kPlaneJ = int64_t(kOD) * kOH * kRowJ;               // threads a plane
constexpr int64_t kPixBlocks = (kPlaneJ + int64_t(kThreads) * kIters - 1) / (int64_t(kThreads) * kIters);
constexpr int kNin = CGR_NIN;
static_assert(CGR_TRANSPOSED, "a transposed convolution");
static_assert(kCin % kG == 0 && kCout % kG == 0, "groups divide the channels");
static_assert(kCoT % 4 == 0 && kCoutG % kCoT == 0, "a group's channels in blocks of 4-vectors");
static_assert(kSmem <= 200 * 1024, "a channel block's weights fit shared memory");
static_assert(int64_t(kNb) * kG * kCoBlocks < 65536 && kPixBlocks < (int64_t(1) << 31), "grid limits");
static_assert(!kStage || kThreads % kChunk == 0, "staged stores: a CTA holds whole chunks");
static_assert(kPix == 1 || kPix == 2, "CGR_DIRECT_PIX: one or two pixels a thread");

// The input coordinate that output coordinate o reads through tap k along a dim of input
// extent I, stride S, padding P, dilation D, or -1: o is not on the stride's grid from that
// tap, or the input coordinate is past the input.
template <int I, int S, int P, int D> CGR_DX __forceinline__ int tap_in(int o, int k)
{
    const int t = o + P - k * D;
    if (t < 0 || t % S != 0)
        return -1;
    return t / S < I ? t / S : -1;
}

// Element e of a channel block's staging (the weight read in its own order: taps fastest):
// its input channel ci (within the group), tap and channel co (within the block).
CGR_DX __forceinline__ void stage_slot(int e, int &ci, int &tap, int &co)
{
    tap = e % kTaps;
    co = (e / kTaps) % kCoT;
    ci = e / (kTaps * kCoT);
}

// The weight element ([CIN, COUT/G, taps]) ws[ci][tap][co] holds for group g, channel block cb.
CGR_DX __forceinline__ int64_t w_src(int g, int cb, int ci, int tap, int co)
{
    return (int64_t(g * kCinG + ci) * kCoutG + cb * kCoT + co) * kTaps + tap;
}

CGR_DX __forceinline__ int ws_index(int ci, int tap, int co) { return (ci * kTaps + tap) * kRow + co; }

// The (first) output pixel of thread j of a plane (see the top); false past the row's end.
// With CGR_DIRECT_PIX 2 its second pixel is kChunk further along the row (ow + kChunk,
// perhaps past the row's end: summed, not stored).
CGR_DX __forceinline__ bool pixel_of(int64_t j, int &od, int &oh, int &ow)
{
    const int64_t row = j / kRowJ;
    const int jj = int(j - row * kRowJ);
    od = int(row / kOH);
    oh = int(row - int64_t(od) * kOH);
    ow = jj / kChunk * kSpan + (jj / 32) % kSW + kSW * (jj % 32);
    return ow < kOW;
}

// CGR_DIRECT_STAGE: where thread t of a CTA puts the sums of its pixel q in the tile (that
// pixel's place among its chunks' kSpan), and the pixel the CTA stores from tile place e
// (0 .. kTilePlaces - 1): its chunks' e-th (false past the plane or the row; j0 is the CTA's
// first thread's j).
CGR_DX __forceinline__ int tile_place(int t, int q = 0)
{
    return t / kChunk * kSpan + q * kChunk + (t / 32) % kSW + kSW * (t % 32);
}
CGR_DX __forceinline__ bool stored_pixel(int64_t j0, int e, int &od, int &oh, int &ow)
{
    const int64_t jc = j0 + e / kSpan * kChunk;  // the chunk's first thread: its first pixel
    if (jc >= kPlaneJ || !pixel_of(jc, od, oh, ow))
        return false;
    ow += e % kSpan;
    return ow < kOW;
}

// acc[q][co] = the sums of output pixel (od, oh, ow + q kChunk) for the staged channel block;
// X points at x[nb, g * CIN_G] (the group's first input plane).
CGR_DX __forceinline__ void pixel_sums(const float *__restrict__ X, const float *ws, int od, int oh, int ow,
                                       float (&acc)[kPix][kCoT])
{
#pragma unroll
    for (int q = 0; q < kPix; ++q)
#pragma unroll
        for (int co = 0; co < kCoT; ++co)
            acc[q][co] = 0.f;
#pragma unroll
    for (int kd = 0; kd < kKD; ++kd) {
        const int id = tap_in<kID, kSD, kPD, kDD>(od, kd);
        if (id < 0)
            continue;
#pragma unroll
        for (int kh = 0; kh < kKH; ++kh) {
            const int ih = tap_in<kIH, kSH, kPH, kDH>(oh, kh);
            if (ih < 0)
                continue;
#pragma unroll
            for (int kw = 0; kw < kKW; ++kw) {
                // the pixels share the tap's phase (a chunk, 32 SW, apart); only the ends of x
                // differ: a pixel whose input is past them reads zeros
                int iw[kPix];
                bool any = false;
#pragma unroll
                for (int q = 0; q < kPix; ++q) {
                    iw[q] = tap_in<kIW, kSW, kPW, kDW>(ow + q * kChunk, kw);
                    any = any || iw[q] >= 0;
                }
                if (!any)
                    continue;
                const float *xrow = X + (int64_t(id) * kIH + ih) * kIW;
                const float4 *wt = reinterpret_cast<const float4 *>(ws + ws_index(0, (kd * kKH + kh) * kKW + kw, 0));
#pragma unroll 4
                for (int ci = 0; ci < kCinG; ++ci) {
                    float v[kPix];
#pragma unroll
                    for (int q = 0; q < kPix; ++q)
                        v[q] = iw[q] >= 0 ? __ldg(xrow + ci * kPlaneIn + iw[q]) : 0.f;
                    const float4 *w4 = wt + ci * (kTaps * kRow / 4);
#pragma unroll
                    for (int c4 = 0; c4 < kCoT / 4; ++c4) {
                        const float4 w = w4[c4];
#pragma unroll
                        for (int q = 0; q < kPix; ++q) {
                            acc[q][4 * c4] = fmaf(v[q], w.x, acc[q][4 * c4]);
                            acc[q][4 * c4 + 1] = fmaf(v[q], w.y, acc[q][4 * c4 + 1]);
                            acc[q][4 * c4 + 2] = fmaf(v[q], w.z, acc[q][4 * c4 + 2]);
                            acc[q][4 * c4 + 3] = fmaf(v[q], w.w, acc[q][4 * c4 + 3]);
                        }
                    }
                }
            }
        }
    }
}

#include "conv_fold.cuh"  // recipe:inline-if CGR_PREFOLD
#ifndef CGR_PREFOLD_BYTES  // (not inlined: no fold)
#define CGR_PREFOLD_BYTES size_t(0)
#endif

#ifndef CGR_DIRECT_EMULATE
#include "conv_inputs.cuh"  // recipe:inline

struct Params {
    const float *in[kNin > 0 ? kNin : 1];
    float *out;
};

// grid (pixel blocks, NB x G x channel blocks): see the top
__global__ void __launch_bounds__(kThreads) direct_kernel(const Params p)
{
    extern __shared__ float4 smem4[];
    float *ws = reinterpret_cast<float *>(smem4);
    const int by = int(blockIdx.y);
    const int cb = by % kCoBlocks, g = (by / kCoBlocks) % kG, nb = by / (kCoBlocks * kG);
    const float *W = p.in[CGR_W];
    for (int e = int(threadIdx.x); e < kCinG * kCoT * kTaps; e += kThreads) {
        int ci, tap, co;
        stage_slot(e, ci, tap, co);
        ws[ws_index(ci, tap, co)] = __ldg(W + w_src(g, cb, ci, tap, co));
    }
    __syncthreads();
    const float *X = p.in[CGR_X] + (int64_t(nb) * kCin + int64_t(g) * kCinG) * kPlaneIn;
    // y at output pixel (od, oh, ow), every channel co of the block: the epilogue of sum(co),
    // the inputs of 8 channels loaded before any of their stores (the compiler keeps a load
    // after a store in that order: one round trip an output otherwise; conv_tc.cu's kEpiChunk)
    auto store_pixel = [&](int od, int oh, int ow, auto &&sum) {
        const int c0 = g * kCoutG + cb * kCoT;
        const int64_t at0 = (int64_t(nb) * kCout + c0) * kPlaneOut + (int64_t(od) * kOH + oh) * kOW + ow;
        constexpr int kChunk = kCoT < 8 ? kCoT : 8;
        static_assert(kCoT % kChunk == 0, "whole chunks of channels");
#pragma unroll
        for (int q = 0; q < kCoT; q += kChunk) {
            float xin[kChunk][kNin > 0 ? kNin : 1];
#pragma unroll
            for (int j = 0; j < kChunk; ++j)
                inputs_at(p, at0 + int64_t(q + j) * kPlaneOut, c0 + q + j, xin[j]);
#pragma unroll
            for (int j = 0; j < kChunk; ++j)
                p.out[at0 + int64_t(q + j) * kPlaneOut] = cgr_epi(sum(q + j), xin[j]);
        }
    };
    for (int it = 0; it < kIters; ++it) {
        const int64_t j0 = (int64_t(blockIdx.x) * kIters + it) * kThreads, j = j0 + threadIdx.x;
        if (j0 >= kPlaneJ)
            return;  // the whole CTA: j0 is the same for all its threads
        int od, oh, ow;
        const bool mine = j < kPlaneJ && pixel_of(j, od, oh, ow);
        float acc[kPix][kCoT];
        if (mine)
            pixel_sums(X, ws, od, oh, ow, acc);
        if constexpr (kStage) {
            float *tile = ws + kWsFloats;
            if (mine) {
#pragma unroll
                for (int q = 0; q < kPix; ++q) {
                    const int at = tile_place(int(threadIdx.x), q);
#pragma unroll
                    for (int co = 0; co < kCoT; ++co)
                        tile[co * kTilePlaces + at] = acc[q][co];
                }
            }
            __syncthreads();
#pragma unroll
            for (int q = 0; q < kPix; ++q) {
                const int e = q * kThreads + int(threadIdx.x);
                if (stored_pixel(j0, e, od, oh, ow))
                    store_pixel(od, oh, ow, [&](int co) { return tile[co * kTilePlaces + e]; });
            }
            __syncthreads();  // the tile is read: the next pixel block may overwrite it
        } else if (mine) {
#pragma unroll
            for (int q = 0; q < kPix; ++q)
                if (ow + q * kChunk < kOW)
                    store_pixel(od, oh, ow + q * kChunk, [&](int co) { return acc[q][co]; });
        }
    }
}

static const int64_t kOutShape[] = CGR_OUT_SHAPE;
#endif  // CGR_DIRECT_EMULATE

}  // namespace cgr_direct

#ifndef CGR_DIRECT_EMULATE
CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *in, int n_in)
{
    (void)in; (void)n_in;
    using namespace cgr_direct;
    return CGR_PREFOLD_BYTES;
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace cgr_direct;
#ifdef CGR_PREFOLD
    float *fold = nullptr;  // x and the weight summed over the folded dims (conv_fold.cuh)
    if (!cgr_prefold::take(workspace, workspace_bytes, fold))
        return CG_BAD_WORKSPACE;
#endif
    (void)workspace; (void)workspace_bytes;
    if (n_in != kNin || n_out != 1)
        return CG_UNSUPPORTED;
    if (!cgr::output_fits(out[0], CG_FLOAT32, CGR_OUT_NDIM, kOutShape))
        return CG_UNSUPPORTED;
    Params p{};
    if (!inputs_fit(in, p))
        return CG_UNSUPPORTED;
    if (kPlaneOut == 0 || kNb == 0)
        return CG_OK;
    p.out = static_cast<float *>(out[0].data);
#ifdef CGR_PREFOLD
    cgr_prefold::run(p, fold, stream);
#endif
    if (kSmem > 48 * 1024 &&
        cudaFuncSetAttribute(direct_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem) != cudaSuccess)
        return CG_LAUNCH_FAILED;
    direct_kernel<<<dim3(unsigned(kPixBlocks), unsigned(kNb * kG * kCoBlocks)), kThreads, kSmem, stream>>>(p);
    if (cudaGetLastError() != cudaSuccess)
        return CG_LAUNCH_FAILED;
    return CG_OK;
}
#endif  // CGR_DIRECT_EMULATE
