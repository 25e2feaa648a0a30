// recipes/conv_tc.cu: an fp32 convolution (nn.Conv1d/2d/3d, NC[D]HW) or transposed
// convolution (nn.ConvTranspose1d/2d/3d) as an implicit GEMM on the tensor cores, with a
// fused pointwise epilogue; grouped (CGR_GROUPS > 1, not depthwise: conv_dw.cu does
// that) as one GEMM a group, the group a coordinate of the CTA's tile.
//
// y[nb, co, od, oh, ow] = epi(sum_k A(m, k) * B(co, k), inputs at (y index, co)) where
//   m = nb*P + (od*OH + oh)*OW + ow           (P = OD*OH*OW output pixels an image)
//   k = ((c*KD + kd)*KH + kh)*KW + kw         (K = CIN*KD*KH*KW: the weight's own order)
//   A(m, k) = x[nb, c, od*SD - PD + kd*DD, oh*SH - PH + kh*DH, ow*SW - PW + kw*DW], 0 outside
//   B(co, k) = w[co*K + k]                    (the contiguous weight is K-major already)
// Conv1d and Conv2d are the 3-D case with D (and H) of 1, no padding and stride 1 there.
// src/recipe_conv.c's recipe_conv_gather() is the same index math on the CPU, tested
// against a direct convolution (tests/unit/test_recipe.c): keep the two in step.
//
// The main loop is recipes/gemm_tc.cu's (CUTLASS's MainloopSm80CpAsync): CTA tile
// BM x BN x 32, WM x WN warps of SM80_16x8x8_F32TF32TF32F32_TN, STAGES-deep cp.async
// pipeline, swizzled K-major smem atoms read with ldmatrix, register double buffering,
// 3xTF32 split precision (CGR_PREC 0), plain TF32 (1) or 3xFP16 with its 3xTF32 redo (2;
// not offered: it spills here, docs/perf.md lab rounds 42-44). What differs is the gmem -> smem
// copy: A is gathered, not tiled.
//  - A: a warp covers 8 consecutive m x 4 consecutive k (conflict-free 4-byte writes into
//    the swizzled atom; neighbouring output pixels read neighbouring input pixels), warps
//    stacked along m. Each thread precomputes, for its BM / (8 * warps) rows, the image
//    base offset and the top-left input corner (d0, h0, w0) = o * stride - pad; a row
//    past M gets h0 = -2^28 so that every tap is out of bounds. For each k it owns
//    (k = lane/8 + 4j of the tile) it splits k into (c, kd, kh, kw) (constant divisors),
//    and copies with a 4-byte cp.async whose source size is 0 (zero fill) where the tap
//    falls into the padding, past K or past M. Every element of the stage is written.
//  - B: a warp copies 32 consecutive k of one output channel (128 coalesced bytes),
//    zero-filled past COUT or K.
//  - channels-last (CGR_NHWC 1; convolutions, not transposed): cg_forward first copies x
//    into the workspace as [N][D][H][W][CP] and the weight as [COUT][taps][CP] (CP: CIN
//    rounded up to 4, zeros past CIN), so that k = tap*CP + c and 4 consecutive k are 16
//    contiguous bytes of one input pixel; A and B are then copied a 16-byte cp.async a
//    chunk, 8 threads a row's k-tile, the bounds test once a chunk and the tap's split
//    once a k-tile a thread. The NCHW gather above made a warp issue 1433 instructions a
//    k-tile where the GEMM in the same tile issues 824 (ncu, docs/perf.md lab round 46).
//  - epilogue in registers: each accumulator's (m, co) from an identity tensor, m split
//    back into (nb, pixel) once a row the thread holds (4% of level 2 #1's time when it was
//    once an accumulator), y index (nb*COUT + co)*P + pixel, cgr_epi() applied. Inputs
//    of the epilogue: the output's shape (contiguous), one element, or one value per
//    output channel (a bias of shape [COUT, 1, 1], [1, COUT, 1, 1], [COUT]...).
//
// On Hopper (CGR_WGMMA 1, with CGR_NHWC): the channels-last GEMM on warpgroup MMAs in
// 3xFP16, x and the weight split into scaled fp16 halves first, a producer warpgroup
// gathering 16-byte chunks into the swizzled stages (the section "Hopper" below).
//
// Transposed (CGR_TRANSPOSED 1: nn.ConvTranspose1d/2d/3d, groups 1): the same GEMM with
//   A(m, k) = x[nb, c, id, ih, iw] where id*SD = od + PD - kd*DD (and so for h, w), 0 where
//             that does not divide by the stride or falls outside the input
//   B(co, k) = w[(c*COUT + co)*TAPS + t]     (t = k - c*TAPS; the weight is [CIN, COUT, k...])
//   OD = (ID - 1)*SD - 2*PD + DD*(KD - 1) + output_padding + 1 (src/recipe_conv.c checks it).
//  - A: a row keeps u = o + P split as u = S*q + r (the corner q, the residues r as one
//    number); a k keeps e = kk*DD split the same way. The tap is valid iff the residues
//    are equal, and then i = q - qe, so the source is again row base + k offset and the
//    test one compare more than the convolution's (none for stride 1: r = 0). With stride
//    S a row uses about 1/S of the taps a dim; the rest are zero-filled copies and zero
//    MMAs (a known waste: sub-pixel phases would skip them).
//  - B: cg_forward first copies the weight into the workspace as [COUT][K]
//    (transpose_weight, one coalesced write a thread; the weight is at most a few MB and
//    stays in L2), and the main loop reads that with the convolution's B copy unchanged:
//    128 coalesced bytes a warp, the same smem layout and no new code in the hot loop.
//    Gathering [CIN, COUT, TAPS] directly would break a warp's 32 k into runs of TAPS
//    floats COUT*TAPS apart (9 for 3x3): more L2 sectors on every k-tile of every CTA
//    instead of one pass over the weight a call.
//
// Named parameters (CGR_*): src/recipe_conv.c writes them in place of the `recipe:params`
// line; the defaults make this file compile on its own (a 3x3 Conv2d, padding 1).
// With CGR_CONV_EMULATE defined, the kernels and cg_forward are left out: the host
// emulator (tests/cli/recipe_conv_emu.cpp) uses the index math.
#include <cutegen/abi.h>
#include <cute/tensor.hpp>
#include <cuda_fp16.h>
#include <cstring>
#include <type_traits>
#include "ops.cuh"  // recipe:inline

// recipe:params
#ifndef CGR_GENERATED
#define CGR_NB 8
#define CGR_CIN 64
#define CGR_COUT 128
#define CGR_ID 1
#define CGR_IH 128
#define CGR_IW 128
#define CGR_KD 1
#define CGR_KH 3
#define CGR_KW 3
#define CGR_OD 1
#define CGR_OH 128
#define CGR_OW 128
#define CGR_SD 1
#define CGR_SH 1
#define CGR_SW 1
#define CGR_PD 0
#define CGR_PH 1
#define CGR_PW 1
#define CGR_DD 1
#define CGR_DH 1
#define CGR_DW 1
#define CGR_X 0             // input index of x
#define CGR_W 1             // input index of the weight
#define CGR_BM 128
#define CGR_BN 128
#define CGR_BK 32
#define CGR_WM 2            // warps along M
#define CGR_WN 4            // warps along N
#define CGR_STAGES 3
#define CGR_MINB 1          // CTAs per SM the compiler keeps registers for
#define CGR_PREC 0          // 0 3xTF32, 1 TF32, 2 3xFP16, 3 2xFP16 (recipes/tf32_mma.cuh)
#define CGR_NIN 2
// X(index, kind): how the epilogue reads input i (x and the weight are CGR_CV_OPERAND)
#define CGR_INPUTS(X) X(0, CGR_CV_OPERAND) X(1, CGR_CV_OPERAND)
#define CGR_IN_NDIMS {4, 4}
#define CGR_IN_SHAPES {{8, 64, 128, 128}, {128, 64, 3, 3}}
#define CGR_OUT_NDIM 4
#define CGR_OUT_SHAPE {8, 128, 128, 128}
__device__ __forceinline__ float cgr_epi(float r, const float *x) { (void)x; return r; }
#endif
#ifndef CGR_CHANRED
#define CGR_CHANRED 0       // a reduction over the channels: 1 sum, 2 mean, 3 max, 4 min, 5 logsumexp
__device__ __forceinline__ float cgr_pre(float r, const float *x) { (void)x; return r; }
#endif
#ifndef CGR_TRANSPOSED
#define CGR_TRANSPOSED 0    // 1: ConvTranspose (x gathered by division, weight [CIN, COUT, k...])
#endif
#ifndef CGR_GROUPS
#define CGR_GROUPS 1        // > 1: grouped (NCHW gather only): a GEMM of COUT/G x CIN/G*taps a group
#endif
#ifndef CGR_PHASES
#define CGR_PHASES 0        // 1 (transposed, stride 1 or dilation 1 a dim): sub-pixel phases
#endif
#ifndef CGR_NHWC
#define CGR_NHWC 0          // 1 (not transposed): x and the weight copied channels-last first
#endif
#ifndef CGR_WGMMA
#define CGR_WGMMA 0         // 1 (with CGR_NHWC, sm_90a): Hopper's warpgroup MMAs in 3xFP16, x and the weight
#endif                      //   split into fp16 halves channels-last first (below, "Hopper")
#ifndef CGR_FLIP
#define CGR_FLIP 0          // 1 (with CGR_NHWC): a stride-1 ConvTranspose as a convolution:
#endif                      //   its weight [CIN][COUT][taps] read flipped (the padding given as dil*(k-1) - pad)

#if CGR_WGMMA && !defined(CGR_CONV_EMULATE)
#include <cute/arch/mma_sm90.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cutlass/arch/barrier.h>
#endif

namespace cgr_conv {

using namespace cute;

constexpr int kNb = CGR_NB, kCin = CGR_CIN, kCout = CGR_COUT;
constexpr int kID = CGR_ID, kIH = CGR_IH, kIW = CGR_IW;
constexpr int kKD = CGR_KD, kKH = CGR_KH, kKW = CGR_KW;
constexpr int kOD = CGR_OD, kOH = CGR_OH, kOW = CGR_OW;
constexpr int kSD = CGR_SD, kSH = CGR_SH, kSW = CGR_SW;
constexpr int kPD = CGR_PD, kPH = CGR_PH, kPW = CGR_PW;
constexpr int kDD = CGR_DD, kDH = CGR_DH, kDW = CGR_DW;

constexpr int64_t kP64 = int64_t(kOD) * kOH * kOW;          // output pixels an image
constexpr int64_t kM64 = int64_t(kNb) * kP64;
constexpr int64_t kPlane64 = int64_t(kID) * kIH * kIW;      // input elements a channel
constexpr int64_t kImage = int64_t(kCin) * kPlane64;        // input elements an image
constexpr int kTaps = kKD * kKH * kKW;
// grouped (CGR_GROUPS > 1): group g reads input channels g*kCinG.. and writes output
// channels g*kCoutG..; the GEMM below is one group's (N = kCoutG, K = kCinG*taps), the
// group a third coordinate of the CTA's tile
constexpr int kG = CGR_GROUPS;
static_assert(kG >= 1 && kCin % kG == 0 && kCout % kG == 0, "groups must divide CIN and COUT");
static_assert(kG == 1 || !CGR_NHWC, "grouped: the NCHW gather only");
constexpr int kCinG = kCin / kG, kCoutG = kCout / kG;
constexpr int64_t kK64 = int64_t(kCinG) * kTaps;
static_assert(kM64 < (int64_t(1) << 31) - 256, "M = N*OD*OH*OW must fit an int");
static_assert(kK64 * kCout < (int64_t(1) << 31), "the weight must fit an int index");
static_assert(kPlane64 * kCin < (int64_t(1) << 31), "an image must fit an int index");
constexpr int kP = int(kP64), kM = int(kM64), kN = kCoutG, kK = int(kK64);
constexpr int kPlane = int(kPlane64);

constexpr int kBM = CGR_BM, kBN = CGR_BN, kBK = CGR_BK, kStages = CGR_STAGES;
constexpr int kWM = CGR_WM, kWN = CGR_WN, kWarps = kWM * kWN, kThreads = kWarps * 32;
constexpr int kNin = CGR_NIN;

static_assert(kBK == 32, "BK: 32 (the B copy puts a warp's lanes along k)");
static_assert(kBM % (kWM * 16) == 0 && kBN % (kWN * 16) == 0, "tile vs warps");
static_assert(kStages >= 2, "stages");
// the A gather: a warp is 8 rows x 4 k; warps along m
constexpr int kARowStep = 8 * kWarps;
constexpr int kARows = kBM / kARowStep;  // rows a thread copies
constexpr int kACols = kBK / 4;          // k a thread copies
static_assert(kBM % kARowStep == 0, "BM must be a multiple of 8 x warps");
// the B copy: a warp is 1 row x 32 k; warps along n
constexpr int kBRows = kBN / kWarps;
static_assert(kBN % kWarps == 0, "BN must be a multiple of the warps");

// ---------------------------------------------------------------- channels-last (CGR_NHWC)
//
// (see the top of the file) xs[nb][d][h][w][CP] and ws[co][kd][kh][kw][CP] in the
// workspace; the GEMM's k is t*CP + c (t the tap) on both sides, so its sum is the NCHW
// sum in another order, the padded channels adding zeros.
constexpr bool kNhwc = CGR_NHWC;
static_assert(!kNhwc || !CGR_TRANSPOSED || (CGR_WGMMA && CGR_PHASES),
              "channels-last: convolutions only, not transposed (but Hopper's, in sub-pixel phases)");
static_assert(!CGR_FLIP || kNhwc, "CGR_FLIP: the channels-last form only");
static_assert(!CGR_WGMMA || (kNhwc && kG == 1 && (!CGR_TRANSPOSED || CGR_PHASES)),
              "CGR_WGMMA: channels-last, ungrouped (a stride-1 transposed one flipped, a strided one in "
              "sub-pixel phases)");
constexpr int kCpAlign = CGR_WGMMA ? 8 : 4;  // channels a 16-byte chunk: 8 halves, or 4 floats
constexpr int kCp = (kCin + kCpAlign - 1) / kCpAlign * kCpAlign;  // channels, padded
constexpr int64_t kKg64 = kNhwc ? int64_t(kTaps) * kCp : kK64;   // the GEMM's K
static_assert(kKg64 * kCout < (int64_t(1) << 31), "the weight must fit an int index");
constexpr int kKg = int(kKg64);
constexpr int kVRowStep = kThreads / 8;  // rows a pass of 16-byte copies covers
constexpr int kAVRows = kBM / kVRowStep, kBVRows = kBN / kVRowStep;
static_assert(!kNhwc || (kBM % kVRowStep == 0 && kBN % kVRowStep == 0),
              "channels-last: BM and BN multiples of threads / 8");
constexpr int64_t kXsElems = int64_t(kNb) * kPlane64 * kCp;      // xs in the workspace
static_assert(!kNhwc || kPlane64 * kCp < (int64_t(1) << 31), "channels-last: an image of xs must fit an int index");

// ---------------------------------------------------------------- sub-pixel phases
//
// CGR_PHASES (a transposed convolution with a stride above 1): the outputs o with
// o + P = S*Q + r (a dim at a time) form phase r. Output o takes tap kk from input
// i = (o + P - kk*D) / S where that divides, so in phase r only the taps with
// kk*D = r (mod S) reach the input: none where g = gcd(S, D) does not divide r, else
// kk = k0 + (S/g)*j from the first, k0 (ph_k0), at i = Q + c0 - j*(D/g) with
// c0 = (r - k0*D) / S (ph_c0; D 1: k0 = r, c0 = 0, every S-th tap at consecutive
// inputs; S 1: every tap, D apart). So each phase is a dense convolution with its taps
// only: M is laid out phase-major (every phase a box of ceil(O / S) Q's a dim, the rows
// past O masked), a CTA's M tile lies in one phase, and its K loop runs over that phase's
// taps only (the weight rearranged per phase into the workspace by transpose_weight).
// Without it a stride-2 3D layer multiplies 8 times the taps it needs, 7 of 8
// zero-filled (with dilation 2 too, level 1 #77: 7 of its 8 phases have no taps at all).
constexpr bool kPhases = CGR_TRANSPOSED && CGR_PHASES;
static_assert(!CGR_PHASES || CGR_TRANSPOSED, "phases: transposed convolutions only");
constexpr int kR = kPhases ? kSD * kSH * kSW : 1;  // phases
CUTE_HOST_DEVICE constexpr int ph_gcd(int a, int b) { return b == 0 ? a : ph_gcd(b, a % b); }
// the first tap kk of residue r (kk*D = r mod S), -1 for none
CUTE_HOST_DEVICE constexpr int ph_k0(int r, int S, int D)
{
    for (int kk = 0; kk < S; ++kk)
        if ((kk * D - r) % S == 0)
            return kk;
    return -1;
}
// taps of residue r along a dim of K taps, stride S, dilation D: k0, k0 + S/g, ...
CUTE_HOST_DEVICE constexpr int ph_taps(int r, int K, int S, int D)
{
    const int k0 = ph_k0(r, S, D), every = S / ph_gcd(S, D);
    return k0 >= 0 && k0 < K ? (K - k0 + every - 1) / every : 0;
}
// tap j of residue r: its kk, and the input it reads from the corner Q + c0 (i = Q + c0 - j*step)
CUTE_HOST_DEVICE constexpr int ph_kk(int r, int j, int S, int D) { return ph_k0(r, S, D) + j * (S / ph_gcd(S, D)); }
CUTE_HOST_DEVICE constexpr int ph_c0(int r, int S, int D) { return ph_k0(r, S, D) >= 0 ? (r - ph_k0(r, S, D) * D) / S : 0; }
// the smallest Q of residue r whose output o = S*Q + r - P is >= 0
CUTE_HOST_DEVICE constexpr int ph_qmin(int r, int P, int S) { return r >= P ? 0 : (P - r + S - 1) / S; }
constexpr int kCD = (kOD + kSD - 1) / kSD, kCH = (kOH + kSH - 1) / kSH, kCW = (kOW + kSW - 1) / kSW;
constexpr int64_t kMPhase64 = int64_t(kNb) * kCD * kCH * kCW;  // rows of a phase's box
// the input's step from one tap of a phase to the next, a dim: D / gcd(S, D)
constexpr int kStepD = kDD / ph_gcd(kSD, kDD), kStepH = kDH / ph_gcd(kSH, kDH), kStepW = kDW / ph_gcd(kSW, kDW);
// phases: each phase's box of rows padded to whole M tiles; the GEMM's M is all of them
constexpr int kTilesPerPhase = int((kMPhase64 + kBM - 1) / kBM);
constexpr int64_t kMRows64 = kPhases ? int64_t(kR) * kTilesPerPhase * kBM : kM64;
static_assert(kMRows64 < (int64_t(1) << 31) - 256, "the phases' rows must fit an int");
constexpr int kMRows = int(kMRows64);

// ---------------------------------------------------------------- layouts

// CUTLASS's TF32 K-major atom: 8 rows of 32 floats, 16-byte chunks swizzled by the row
// (ldmatrix conflict-free; the A gather's 8 rows x 4 k and B's 1 row x 32 k too).
using SmemAtom = decltype(composition(Swizzle<3, 2, 3>{}, Layout<Shape<_8, _32>, Stride<_32, _1>>{}));
using S2RAtom = Copy_Atom<SM75_U32x4_LDSM_N, float>;
using SmemLayoutA = decltype(tile_to_shape(SmemAtom{}, make_shape(Int<kBM>{}, Int<kBK>{}, Int<kStages>{})));
using SmemLayoutB = decltype(tile_to_shape(SmemAtom{}, make_shape(Int<kBN>{}, Int<kBK>{}, Int<kStages>{})));
using TiledMma = decltype(make_tiled_mma(SM80_16x8x8_F32TF32TF32F32_TN{},
                                         Layout<Shape<Int<kWM>, Int<kWN>, _1>>{},
                                         Tile<Int<kWM * 16>, Int<kWN * 16>, _8>{}));

struct SharedStorage {
    cute::array_aligned<float, cute::cosize_v<SmemLayoutA>, 128> a;
    cute::array_aligned<float, cute::cosize_v<SmemLayoutB>, 128> b;
};
constexpr int kSmemBytes = int(sizeof(SharedStorage));

// ---------------------------------------------------------------- copies and precision

// 4 bytes gmem -> smem, asynchronously; zeros when !valid (nothing is read then).
__device__ __forceinline__ void cp_async4(float *dst, const float *src, bool valid)
{
    const uint32_t s = cute::cast_smem_ptr_to_uint(dst);
    const int bytes = valid ? 4 : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src), "r"(bytes));
}

// 16 bytes gmem -> smem (through L1: a tap's neighbours read the same pixels); zeros when !valid.
__device__ __forceinline__ void cp_async16(float *dst, const float *src, bool valid)
{
    const uint32_t s = cute::cast_smem_ptr_to_uint(dst);
    const int bytes = valid ? 16 : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(bytes));
}

#include "tf32_mma.cuh"  // recipe:inline

// ---------------------------------------------------------------- epilogue inputs

#include "conv_inputs.cuh"  // recipe:inline
#include "conv_fold.cuh"  // recipe:inline-if CGR_PREFOLD
#ifndef CGR_PREFOLD_BYTES  // (not inlined: no fold)
#define CGR_PREFOLD_BYTES size_t(0)
#endif

struct Params {
    const float *in[kNin > 0 ? kNin : 1];
    float *out;
#if CGR_TRANSPOSED
    const float *wt;  // the weight as [COUT][K] (transpose_weight, in the workspace)
#endif
#if CGR_NHWC && !CGR_WGMMA
    const float *xs;  // x channels-last, channels padded to CP (to_nhwc, in the workspace)
    const float *ws;  // the weight as [COUT][taps][CP] (weight_nhwc, in the workspace)
#endif
#if CGR_WGMMA
    const __half *xh, *xl;  // x channels-last in fp16 halves, scaled (big, small: split_x)
    const __half *wh, *wl;  // the weight as [COUT][KP] so (split_w)
    const float *amax;      // the largest |x| and |w| (amax_kernel), for their scales
#endif
};

// The epilogues load the inputs of a chunk of outputs first and then store them: the
// compiler keeps a global load after a global store in that order (read-only loads too: the
// SASS of level 2 #26's WGMMA kernel, 12-07), so finish() output after output waited a
// memory round trip for each (#26 reads add_input, a full-size tensor, there: 4.94 ms on
// the H200 where its bytes take 0.5).
// CGR_EPI_CHUNK: the outputs a thread loads the inputs of before storing any; 0, by the
// inputs an output reads (epi_chunk: 16 for up to two); 1, the form before 12-07.
#ifndef CGR_EPI_CHUNK
#define CGR_EPI_CHUNK 0
#endif
constexpr int kEpiChunk = epi_chunk(CGR_EPI_CHUNK);

__device__ __forceinline__ float finish(const Params &p, float acc, int64_t idx, int co)
{
    float x[kNin > 0 ? kNin : 1];
    inputs_at(p, idx, co, x);
    return cgr_epi(acc, x);
}

// ---------------------------------------------------------------- channel reductions
//
// CGR_CHANRED: the output is a reduction over the channels (dim 1) of cgr_pre(convolution)
// (cgr_pre reading the inputs as finish() does), then cgr_epi of the reduced value
// (scalars only): y[nb*P + pixel], one value an output pixel. Every channel is in the CTA's
// tile (COUT <= BN, one group), so a row of the GEMM is reduced in the CTA as
// gemm_tc.cu's row reductions are: in the thread over its columns, across the quad of
// lanes that share the row, then across the warps along N through shared memory.

constexpr int kChanRed = CGR_CHANRED;
static_assert(kChanRed == 0 || (kN <= kBN && kG == 1), "a channel reduction: every channel in the CTA's tile, no groups");

struct CStat {
    float a, b;  // sum, max or min (a); logsumexp: (max a, sum of exp(x - a) b)
};

__device__ __forceinline__ CStat cr_identity()
{
    if constexpr (kChanRed == 3 || kChanRed == 5)
        return { -INFINITY, 0.f };
    else if constexpr (kChanRed == 4)
        return { INFINITY, 0.f };
    else
        return { 0.f, 0.f };
}

__device__ __forceinline__ CStat cr_combine(CStat x, CStat y)
{
    if constexpr (kChanRed == 5) {
        if (x.a == -INFINITY)
            return y;
        if (y.a == -INFINITY)
            return x;
        const float m = (x.a != x.a || x.a > y.a) ? x.a : y.a;
        return { m, x.b * expf(x.a - m) + y.b * expf(y.a - m) };
    } else if constexpr (kChanRed == 3) {
        return { (x.a != x.a || x.a > y.a) ? x.a : y.a, 0.f };  // NaN propagates, as torch.max
    } else if constexpr (kChanRed == 4) {
        return { (x.a != x.a || x.a < y.a) ? x.a : y.a, 0.f };
    } else {
        return { x.a + y.a, 0.f };
    }
}

__device__ __forceinline__ float cr_final(CStat x)
{
    if constexpr (kChanRed == 2)
        return x.a / float(kCout);
    else if constexpr (kChanRed == 5)
        return x.a == -INFINITY ? -INFINITY : x.a + logf(x.b);
    else
        return x.a;
}

// ---------------------------------------------------------------- rows and phases

// A phase's taps: how many a dim, and its K (CIN x taps).
struct PhaseTaps {
    int td, th, tw, t, k;
};
CUTE_HOST_DEVICE constexpr PhaseTaps phase_taps(int phase)
{
    const int rd = phase / (kSH * kSW), rh = (phase / kSW) % kSH, rw = phase % kSW;
    PhaseTaps pt{};
    pt.td = ph_taps(rd, kKD, kSD, kDD);
    pt.th = ph_taps(rh, kKH, kSH, kDH);
    pt.tw = ph_taps(rw, kKW, kSW, kDW);
    pt.t = pt.td * pt.th * pt.tw;
    pt.k = kCinG * pt.t;
    return pt;
}

// Where phase `phase`'s weight [COUT][K_phase] starts in the workspace (group g's rows
// g*kCoutG.. of it).
CUTE_HOST_DEVICE int64_t phase_woff(int phase)
{
    int64_t off = 0;
    for (int r = 0; r < phase; ++r)
        off += int64_t(kCout) * phase_taps(r).k;
    return off;
}

// Row m of the GEMM: the output pixel it computes (image nb, pixel index pix in the image)
// and, transposed, the input corner (phases: Q + c0 with o + P = S*Q + r, tap j of the
// phase reading corner - j*step; else Q); false past the outputs.
struct RowPix {
    int nb, pix, qd, qh, qw;
};
CUTE_HOST_DEVICE bool row_pixel(int m, RowPix &rp)
{
    int od, oh, ow;
    if constexpr (kPhases) {
        const int phase = m / (kTilesPerPhase * kBM);
        const int ml = m - phase * (kTilesPerPhase * kBM);
        if (phase >= kR || ml >= int(kMPhase64))
            return false;
        const int rd = phase / (kSH * kSW), rh = (phase / kSW) % kSH, rw = phase % kSW;
        rp.nb = ml / (kCD * kCH * kCW);
        int rest = ml - rp.nb * (kCD * kCH * kCW);
        const int cd = rest / (kCH * kCW);
        rest -= cd * (kCH * kCW);
        const int ch = rest / kCW, cw = rest - ch * kCW;
        rp.qd = ph_qmin(rd, kPD, kSD) + cd;
        rp.qh = ph_qmin(rh, kPH, kSH) + ch;
        rp.qw = ph_qmin(rw, kPW, kSW) + cw;
        od = kSD * rp.qd + rd - kPD;
        oh = kSH * rp.qh + rh - kPH;
        ow = kSW * rp.qw + rw - kPW;
        if (od >= kOD || oh >= kOH || ow >= kOW)
            return false;
        rp.qd += ph_c0(rd, kSD, kDD);
        rp.qh += ph_c0(rh, kSH, kDH);
        rp.qw += ph_c0(rw, kSW, kDW);
    } else {
        if (m >= kM)
            return false;
        rp.nb = m / kP;
        const int pix = m - rp.nb * kP;
        od = pix / (kOH * kOW);
        const int r = pix - od * (kOH * kOW);
        oh = r / kOW;
        ow = r - oh * kOW;
        rp.qd = (od + kPD) / kSD;
        rp.qh = (oh + kPH) / kSH;
        rp.qw = (ow + kPW) / kSW;
    }
    rp.pix = (od * kOH + oh) * kOW + ow;
    return true;
}

// ---------------------------------------------------------------- channels-last index math
//
// On the host too: tests/cli/recipe_conv_emu.cpp runs these (and row_pixel) on the CPU to
// compute small convolutions the kernel's way and checks them against direct ones.

// Where x[nb][c][pix] and xs[nb][pix][c] are (pix: the pixel's index in an image's plane).
CUTE_HOST_DEVICE int64_t x_index(int nb, int c, int64_t pix) { return (int64_t(nb) * kCin + c) * kPlane64 + pix; }
CUTE_HOST_DEVICE int64_t xs_index(int nb, int64_t pix, int c) { return (int64_t(nb) * kPlane64 + pix) * kCp + c; }

// Row m's input corner o*stride - pad and where its image's corner is in xs; a row past M
// gets a corner no tap reaches.
struct NhwcRow {
    int64_t base;
    int d0, h0, w0;
};
CUTE_HOST_DEVICE NhwcRow nhwc_row(int m)
{
    NhwcRow r;
    if constexpr (kPhases) {
        // sub-pixel phases (Hopper's): the row's input corner Q (row_pixel); its taps step
        // back from it (nhwc_phase_tap)
        RowPix rp;
        if (!row_pixel(m, rp)) {
            r.d0 = r.w0 = 0;
            r.h0 = -(1 << 28);  // every tap out of bounds
            r.base = 0;
            return r;
        }
        r.d0 = rp.qd, r.h0 = rp.qh, r.w0 = rp.qw;
        r.base = ((int64_t(rp.nb) * kID + r.d0) * kIH + r.h0) * kIW * kCp + int64_t(r.w0) * kCp;
        return r;
    }
    const int nb = m / kP;
    const int pix = m - nb * kP;
    const int od = pix / (kOH * kOW);
    const int rest = pix - od * (kOH * kOW);
    const int oh = rest / kOW, ow = rest - oh * kOW;
    r.d0 = od * kSD - kPD;
    r.h0 = oh * kSH - kPH;
    r.w0 = ow * kSW - kPW;
    r.base = ((int64_t(nb) * kID + r.d0) * kIH + r.h0) * kIW * kCp + int64_t(r.w0) * kCp;
    if (m >= kM) {
        r.h0 = -(1 << 28);  // every tap out of bounds
        r.base = 0;
    }
    return r;
}

// GEMM column k (a multiple of 4: 4 channels of one tap): the tap's offsets in the window,
// and the column's offset in xs from a row's corner.
struct NhwcTap {
    int dd, dh, dw, koff;
};
CUTE_HOST_DEVICE NhwcTap nhwc_tap(int k)
{
    NhwcTap t;
    const int tap = k / kCp, c = k - tap * kCp;
    const int kd = tap / (kKH * kKW);
    const int t2 = tap - kd * (kKH * kKW);
    const int kh = t2 / kKW, kw = t2 - kh * kKW;
    t.dd = kd * kDD;
    t.dh = kh * kDH;
    t.dw = kw * kDW;
    t.koff = ((t.dd * kIH + t.dh) * kIW + t.dw) * kCp + c;
    return t;
}

// Whether row r's 4 columns at k read xs (else zeros: padding, past K or past M); they
// read xs[r.base + t.koff...].
CUTE_HOST_DEVICE bool nhwc_reads(const NhwcRow &r, const NhwcTap &t, int k)
{
    const int id = r.d0 + t.dd, ih = r.h0 + t.dh, iw = r.w0 + t.dw;
    return k < kKg && unsigned(id) < unsigned(kID) && unsigned(ih) < unsigned(kIH) && unsigned(iw) < unsigned(kIW);
}

// Element (co, k) of ws: the weight element it holds, -1 for a padded channel. CGR_FLIP:
// the weight is a stride-1 ConvTranspose's [CIN][COUT][taps], read at tap taps-1-t.
CUTE_HOST_DEVICE int64_t nhwc_w_src(int co, int k)
{
    const int t = k / kCp, c = k - t * kCp;
    if (c >= kCin)
        return -1;
    return CGR_FLIP ? (int64_t(c) * kCout + co) * kTaps + (kTaps - 1 - t) : (int64_t(co) * kCin + c) * kTaps + t;
}

// Sub-pixel phases channels-last (Hopper's, CGR_WGMMA with CGR_PHASES): phase r's GEMM
// column k = j CP + c, j its tap in phase_taps' box (jd, jh, jw), c the channel; K_r = taps
// x CP. Its weight is a block [COUT][KP_r] of the copy, KP_r = K_r rounded up to the WGMMA
// k-tile of kWgBK halves (zeros past K_r), the phases' blocks one after the other.
constexpr int kWgBK = 64;
CUTE_HOST_DEVICE constexpr int nhwc_phase_k(int phase) { return phase_taps(phase).t * kCp; }
CUTE_HOST_DEVICE constexpr int nhwc_phase_kp(int phase) { return (nhwc_phase_k(phase) + kWgBK - 1) / kWgBK * kWgBK; }
CUTE_HOST_DEVICE constexpr int64_t nhwc_phase_woff(int phase)
{
    int64_t off = 0;
    for (int r = 0; r < phase; ++r)
        off += int64_t(kCout) * nhwc_phase_kp(r);
    return off;
}

// Column k of phase pt: the tap's steps back from the row's corner Q (i = Q - j step), and
// its offset in xs from the corner; past K_r, a tap no row reaches.
CUTE_HOST_DEVICE NhwcTap nhwc_phase_tap(const PhaseTaps &pt, int k)
{
    NhwcTap t;
    const int j = k / kCp, c = k - j * kCp;
    const int jd = j / (pt.th * pt.tw), j2 = j - jd * (pt.th * pt.tw);
    const int jh = j2 / pt.tw, jw = j2 - jh * pt.tw;
    t.dd = -jd * kStepD;
    t.dh = -jh * kStepH;
    t.dw = -jw * kStepW;
    t.koff = ((t.dd * kIH + t.dh) * kIW + t.dw) * kCp + c;
    if (k >= pt.t * kCp)
        t.dh = -(1 << 29);  // past the phase's K
    return t;
}

// Element (co, k) of phase `phase`'s weight block: the weight [CIN][COUT][taps] element at
// tap kk = k0 + (S/g) j a dim (ph_kk), -1 for a padded channel or past K_r.
CUTE_HOST_DEVICE int64_t nhwc_phase_w_src(int phase, int co, int k)
{
    const PhaseTaps pt = phase_taps(phase);
    const int j = k / kCp, c = k - j * kCp;
    if (c >= kCin || j >= pt.t)
        return -1;
    const int jd = j / (pt.th * pt.tw), j2 = j - jd * (pt.th * pt.tw);
    const int jh = j2 / pt.tw, jw = j2 - jh * pt.tw;
    const int rd = phase / (kSH * kSW), rh = (phase / kSW) % kSH, rw = phase % kSW;
    const int kd = ph_kk(rd, jd, kSD, kDD), kh = ph_kk(rh, jh, kSH, kDH), kw = ph_kk(rw, jw, kSW, kDW);
    return (int64_t(c) * kCout + co) * kTaps + (kd * kKH + kh) * kKW + kw;
}

#ifndef CGR_CONV_EMULATE
// ---------------------------------------------------------------- the kernel

// (the host emulator, CGR_CONV_EMULATE, has no shuffles)
// A row's partial combined across the quad of lanes holding its other columns (lanes 4q ..
// 4q + 3, in mma.sync's m16n8 atoms and WGMMA's alike): every lane of the quad gets the row's.
__device__ __forceinline__ CStat quad_combine(CStat st)
{
    CUTE_UNROLL
    for (int o = 1; o <= 2; o *= 2) {
        CStat other;
        other.a = __shfl_xor_sync(0xffffffffu, st.a, o);
        other.b = __shfl_xor_sync(0xffffffffu, st.b, o);
        st = cr_combine(st, other);
    }
    return st;
}

#if !CGR_WGMMA  // (the Hopper kernel is below)

// The channel reduction's epilogue (CGR_CHANRED): each thread's accumulators of a row
// through cgr_pre, reduced over its columns, then over the quad of lanes holding the
// row's other columns (m16n8 atoms: values 0-1 on one row, 2-3 on the row 8 below);
// lane 0 of the quad writes red[warp along N][row in tile]; after a barrier thread t < BM
// combines row t's WN partials and writes cgr_epi of the result.
static_assert(kChanRed == 0 || kWN * kBM * int(sizeof(CStat)) <= kSmemBytes, "the warps' partials in shared memory");
template <class Acc, class Coord>
__device__ __forceinline__ void chan_reduce(const Params &p, const Acc &acc, const Coord &tCcC, int tm, CStat *red)
{
    const int t = int(threadIdx.x);
    const int slot = (t / 32) / kWM;  // the TiledMMA's warps are (WM, WN), column-major
    CUTE_UNROLL
    for (int mi = 0; mi < size<1>(acc); ++mi) {
        CUTE_UNROLL
        for (int v1 = 0; v1 < 2; ++v1) {
            const int m = get<0>(tCcC(make_coord(make_coord(0, v1), mi, 0)));
            CStat st = cr_identity();
            RowPix rp;
            if (row_pixel(m, rp)) {
                const int64_t row = int64_t(rp.nb) * kCout * kP + rp.pix;
                CUTE_UNROLL
                for (int ni = 0; ni < size<2>(acc); ++ni) {
                    CUTE_UNROLL
                    for (int v0 = 0; v0 < 2; ++v0) {
                        const auto c = make_coord(make_coord(v0, v1), mi, ni);
                        const int co = get<1>(tCcC(c));
                        if (co < kN) {
                            const int64_t idx = row + int64_t(co) * kP;
                            float x[kNin > 0 ? kNin : 1];
                            inputs_at(p, idx, co, x);
                            st = cr_combine(st, { cgr_pre(acc(c), x), 1.f });
                        }
                    }
                }
            }
            st = quad_combine(st);
            if (t % 4 == 0)
                red[slot * kBM + (m - tm * kBM)] = st;
        }
    }
    __syncthreads();
    static_assert(kBM <= kThreads, "a thread a row of the tile");
    RowPix rp;
    if (t < kBM && row_pixel(tm * kBM + t, rp)) {
        CStat st = red[t];
        for (int w = 1; w < kWN; ++w)
            st = cr_combine(st, red[w * kBM + t]);
        const int64_t o = int64_t(rp.nb) * kP + rp.pix;
        float x[kNin > 0 ? kNin : 1];
        inputs_at(p, o, 0, x);  // scalars only (src/recipe_conv.c)
        p.out[o] = cgr_epi(cr_final(st), x);
    }
}

__global__ void __launch_bounds__(kThreads, CGR_MINB) conv_kernel(const Params p)
{
    // CTA -> tile: the output-channel tiles of one pixel tile run next to each other
    // (they gather the same input), each group's in turn
    constexpr int tiles_n = (kN + kBN - 1) / kBN;
    const int tm = int(blockIdx.x / (tiles_n * kG));
    const int tg = int(blockIdx.x % (tiles_n * kG));
    const int grp = kG == 1 ? 0 : tg / tiles_n, tn = kG == 1 ? tg : tg % tiles_n;
    (void)grp;
    const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;

#if !CGR_NHWC  // (channels-last reads the workspace copies p.xs and p.ws)
    // the group's input channels and its rows of the [COUT][K] weight
    const float *Xg = p.in[CGR_X] + int64_t(grp) * kCinG * kPlane;
#if CGR_TRANSPOSED
    const float *Wg = p.wt + int64_t(grp) * kCoutG * kK;
#else
    const float *Wg = p.in[CGR_W] + int64_t(grp) * kCoutG * kK;
#endif
#endif

    extern __shared__ __align__(128) char smem_raw[];
    SharedStorage &smem = *reinterpret_cast<SharedStorage *>(smem_raw);
    Tensor sA = make_tensor(make_smem_ptr(smem.a.data()), SmemLayoutA{});  // (BM,BK,PIPE)
    Tensor sB = make_tensor(make_smem_ptr(smem.b.data()), SmemLayoutB{});  // (BN,BK,PIPE)

    // this thread's A rows: the image base and the input corner of each output pixel
    // (channels-last: rows tid / 8 + i * threads / 8, the chunk tid % 8 of their 32 k)
    const int a_row0 = kNhwc ? int(threadIdx.x) / 8 : lane % 8 + 8 * warp, a_col0 = lane / 8;
    constexpr int kRowsT = kNhwc ? kAVRows : kARows, kRowStepT = kNhwc ? kVRowStep : kARowStep;
    int64_t a_base[kRowsT];
    int a_d0[kRowsT], a_h0[kRowsT], a_w0[kRowsT];
#if CGR_TRANSPOSED
    int a_res[kARows];  // (o + P) mod S in d, h, w, as one number
#endif
#if CGR_PHASES
    // this CTA's phase: its taps and K, its weight in the workspace
    const int phase = tm / kTilesPerPhase;
    const PhaseTaps pt = phase_taps(phase < kR ? phase : 0);
    const int kKr = pt.k, kThw = pt.th * pt.tw;
    const float *Wp = p.wt + phase_woff(phase < kR ? phase : 0) + int64_t(grp) * kCoutG * kKr;
    CUTE_UNROLL
    for (int i = 0; i < kARows; ++i) {
        RowPix rp;
        const bool live = row_pixel(tm * kBM + a_row0 + i * kARowStep, rp);
        a_d0[i] = rp.qd;
        a_h0[i] = rp.qh;
        a_w0[i] = rp.qw;
        a_res[i] = 0;
        a_base[i] = int64_t(rp.nb) * kImage + (int64_t(rp.qd) * kIH + rp.qh) * kIW + rp.qw;
        if (!live) {
            a_h0[i] = -(1 << 28);  // every tap out of bounds
            a_base[i] = 0;
        }
    }
#else
    CUTE_UNROLL
    for (int i = 0; i < kRowsT; ++i) {
        const int m = tm * kBM + a_row0 + i * kRowStepT;
#if CGR_NHWC
        const NhwcRow r = nhwc_row(m);
        a_base[i] = r.base;
        a_d0[i] = r.d0;
        a_h0[i] = r.h0;
        a_w0[i] = r.w0;
#else
        const int nb = m / kP;
        const int pix = m - nb * kP;
        const int od = pix / (kOH * kOW);
        const int r = pix - od * (kOH * kOW);
        const int oh = r / kOW;
        const int ow = r - oh * kOW;
#if CGR_TRANSPOSED
        const int ud = od + kPD, uh = oh + kPH, uw = ow + kPW;  // >= 0
        a_d0[i] = ud / kSD;
        a_h0[i] = uh / kSH;
        a_w0[i] = uw / kSW;
        a_res[i] = ((ud % kSD) * kSH + uh % kSH) * kSW + uw % kSW;
#else
        a_d0[i] = od * kSD - kPD;
        a_h0[i] = oh * kSH - kPH;
        a_w0[i] = ow * kSW - kPW;
#endif
        a_base[i] = int64_t(nb) * kImage + (int64_t(a_d0[i]) * kIH + a_h0[i]) * kIW + a_w0[i];
        if (m >= kM) {
            a_h0[i] = -(1 << 28);  // every tap out of bounds
            a_base[i] = 0;
        }
#endif
    }
#endif
    const int b_row0 = tn * kBN + warp;
    (void)a_col0, (void)b_row0;  // not in every form

    // k tile kt -> pipeline stage s
    auto load_tile = [&](int kt, int s) {
#if CGR_PHASES
        // the phase's taps: kk = k0 + (S/g)*j a dim, the input at the corner - j*step
        CUTE_UNROLL
        for (int j = 0; j < kACols; ++j) {
            const int kl = a_col0 + 4 * j;
            const int k = kt * kBK + kl;
            const int c = k / pt.t;
            const int t = k - c * pt.t;
            const int jd = t / kThw;
            const int t2 = t - jd * kThw;
            const int jh = t2 / pt.tw;
            const int jw = t2 - jh * pt.tw;
            const int qd = jd * kStepD, qh = jh * kStepH, qw = jw * kStepW;
            const int koff = c * kPlane - (qd * kIH + qh) * kIW - qw;
            CUTE_UNROLL
            for (int i = 0; i < kARows; ++i) {
                const int id = a_d0[i] - qd, ih = a_h0[i] - qh, iw = a_w0[i] - qw;
                const bool ok = k < kKr && unsigned(id) < unsigned(kID) && unsigned(ih) < unsigned(kIH) &&
                                unsigned(iw) < unsigned(kIW);
                const float *src = ok ? Xg + a_base[i] + koff : Xg;
                cp_async4(&sA(a_row0 + i * kARowStep, kl, s), src, ok);
            }
        }
        const int kb = kt * kBK + lane;
        CUTE_UNROLL
        for (int i = 0; i < kBRows; ++i) {
            const int n = b_row0 + i * kWarps;
            const bool ok = kb < kKr && n < kN;
            const float *src = ok ? Wp + int64_t(n) * kKr + kb : Wp;
            cp_async4(&sB(warp + i * kWarps, lane, s), src, ok);
        }
#elif CGR_NHWC
        // one 16-byte chunk of each of this thread's rows: 4 channels of one tap
        const int kl = 4 * (int(threadIdx.x) % 8);
        const int k = kt * kBK + kl;
        const NhwcTap tap = nhwc_tap(k);
        const float *Xs = p.xs;
        CUTE_UNROLL
        for (int i = 0; i < kAVRows; ++i) {
            const bool ok = nhwc_reads(NhwcRow{a_base[i], a_d0[i], a_h0[i], a_w0[i]}, tap, k);
            const float *src = ok ? Xs + a_base[i] + tap.koff : Xs;
            cp_async16(&sA(a_row0 + i * kVRowStep, kl, s), src, ok);
        }
        const int nrow0 = tn * kBN + a_row0;
        CUTE_UNROLL
        for (int i = 0; i < kBVRows; ++i) {
            const int n = nrow0 + i * kVRowStep;
            const bool ok = k < kKg && n < kN;
            const float *src = ok ? p.ws + int64_t(n) * kKg + k : p.ws;
            cp_async16(&sB(a_row0 + i * kVRowStep, kl, s), src, ok);
        }
#else
        CUTE_UNROLL
        for (int j = 0; j < kACols; ++j) {
            const int kl = a_col0 + 4 * j;
            const int k = kt * kBK + kl;
            const int c = k / kTaps;
            const int t = k - c * kTaps;
            const int kd = t / (kKH * kKW);
            const int t2 = t - kd * (kKH * kKW);
            const int kh = t2 / kKW;
            const int kw = t2 - kh * kKW;
#if CGR_TRANSPOSED
            // e = kk*dil = S*q + r: valid where r is the row's residue, input at corner - q
            const int ed = kd * kDD, eh = kh * kDH, ew = kw * kDW;
            const int qd = ed / kSD, qh = eh / kSH, qw = ew / kSW;
            const int kres = ((ed % kSD) * kSH + eh % kSH) * kSW + ew % kSW;
            const int koff = c * kPlane - (qd * kIH + qh) * kIW - qw;
            CUTE_UNROLL
            for (int i = 0; i < kARows; ++i) {
                const int id = a_d0[i] - qd, ih = a_h0[i] - qh, iw = a_w0[i] - qw;
                const bool ok = k < kK && a_res[i] == kres && unsigned(id) < unsigned(kID) &&
                                unsigned(ih) < unsigned(kIH) && unsigned(iw) < unsigned(kIW);
                const float *src = ok ? Xg + a_base[i] + koff : Xg;
                cp_async4(&sA(a_row0 + i * kARowStep, kl, s), src, ok);
            }
#else
            const int koff = c * kPlane + (kd * kDD * kIH + kh * kDH) * kIW + kw * kDW;
            CUTE_UNROLL
            for (int i = 0; i < kARows; ++i) {
                const int id = a_d0[i] + kd * kDD, ih = a_h0[i] + kh * kDH, iw = a_w0[i] + kw * kDW;
                const bool ok = k < kK && unsigned(id) < unsigned(kID) && unsigned(ih) < unsigned(kIH) &&
                                unsigned(iw) < unsigned(kIW);
                const float *src = ok ? Xg + a_base[i] + koff : Xg;
                cp_async4(&sA(a_row0 + i * kARowStep, kl, s), src, ok);
            }
#endif
        }
        const int k = kt * kBK + lane;
        CUTE_UNROLL
        for (int i = 0; i < kBRows; ++i) {
            const int n = b_row0 + i * kWarps;
            const bool ok = k < kK && n < kN;
            const float *src = ok ? Wg + int64_t(n) * kK + k : Wg;
            cp_async4(&sB(warp + i * kWarps, lane, s), src, ok);
        }
#endif
    };

    TiledMma mma;
    ThrMMA thr_mma = mma.get_slice(threadIdx.x);
    auto tiler = Shape<Int<kBM>, Int<kBN>, Int<kBK>>{};
    Tensor cC = make_identity_tensor(make_shape(Int<kMRows>{}, Int<kN>{}));             // (m,n)
    Tensor gcC = local_tile(cC, tiler, make_coord(tm, tn, _), Step<_1, _1, X>{});      // (BM,BN)
    Tensor tCcC = thr_mma.partition_C(gcC);                                             // (MMA,MMA_M,MMA_N)
    Tensor acc = partition_fragment_C(mma, Shape<Int<kBM>, Int<kBN>>{});                // (MMA,MMA_M,MMA_N)
    clear(acc);
    auto acc_tile = make_fragment_like(acc);  // CGR_PROMOTE 2: this k-tile's products
    clear(acc_tile);

#if CGR_PHASES
    const int k_tiles = (kKr + kBK - 1) / kBK;
#else
    constexpr int k_tiles = (kKg + kBK - 1) / kBK;
#endif
    // The main loop in precision P. With CGR_PREC 2 or 3 a lambda, run again in 3xTF32 (P = 0)
    // when the accumulators come out not finite; otherwise a plain block, as before the
    // lambda: its captures cost the 3xTF32 kernel 4% (H200, lab round 45, docs/perf.md).
#if CGR_PREC == 2 || CGR_PREC == 3
    auto mainloop = [&](auto prec) {
        constexpr int P = decltype(prec)::value;
#else
    {
        constexpr int P = CGR_PREC;
#endif
        int k_tile = 0;
        CUTE_UNROLL
        for (int s = 0; s < kStages - 1; ++s) {
            if (k_tile < k_tiles)
                load_tile(k_tile, s);
            cp_async_fence();
            ++k_tile;
        }
        int k_tile_count = k_tiles - (kStages - 1);

        // register fragments: raw values as loaded (then split in place), small parts
        Tensor tCrA = thr_mma.partition_fragment_A(sA(_, _, 0));  // (MMA,MMA_M,MMA_K)
        Tensor tCrB = thr_mma.partition_fragment_B(sB(_, _, 0));  // (MMA,MMA_N,MMA_K)
        Tensor tCrA_s = make_fragment_like(tCrA(_, _, 0));        // (MMA,MMA_M)
        Tensor tCrB_s = make_fragment_like(tCrB(_, _, 0));        // (MMA,MMA_N)

        auto s2r_a = make_tiled_copy_A(S2RAtom{}, mma);
        auto s2r_thr_a = s2r_a.get_thread_slice(threadIdx.x);
        Tensor tCsA = s2r_thr_a.partition_S(sA);     // (CPY,CPY_M,CPY_K,PIPE)
        Tensor tCrA_v = s2r_thr_a.retile_D(tCrA);    // (CPY,CPY_M,CPY_K)
        auto s2r_b = make_tiled_copy_B(S2RAtom{}, mma);
        auto s2r_thr_b = s2r_b.get_thread_slice(threadIdx.x);
        Tensor tCsB = s2r_thr_b.partition_S(sB);     // (CPY,CPY_N,CPY_K,PIPE)
        Tensor tCrB_v = s2r_thr_b.retile_D(tCrB);    // (CPY,CPY_N,CPY_K)

        int pipe_read = 0, pipe_write = kStages - 1;
        Tensor tCsA_p = tCsA(_, _, _, pipe_read);
        Tensor tCsB_p = tCsB(_, _, _, pipe_read);
        constexpr int K_BLOCK_MAX = decltype(size<2>(tCrA))::value;

        cp_async_wait<kStages - 2>();
        __syncthreads();
        copy(s2r_a, tCsA_p(_, _, Int<0>{}), tCrA_v(_, _, Int<0>{}));
        copy(s2r_b, tCsB_p(_, _, Int<0>{}), tCrB_v(_, _, Int<0>{}));

        CUTE_NO_UNROLL
        for (; k_tile_count > -(kStages - 1); --k_tile_count) {
            for_each(make_int_sequence<K_BLOCK_MAX>{}, [&](auto k_block) {
                if (k_block == K_BLOCK_MAX - 1) {
                    tCsA_p = tCsA(_, _, _, pipe_read);
                    tCsB_p = tCsB(_, _, _, pipe_read);
                    cp_async_wait<kStages - 2>();
                    __syncthreads();
                }
                auto k_next = (k_block + Int<1>{}) % Int<K_BLOCK_MAX>{};
                copy(s2r_a, tCsA_p(_, _, k_next), tCrA_v(_, _, k_next));
                copy(s2r_b, tCsB_p(_, _, k_next), tCrB_v(_, _, k_next));
                if (k_block == 0) {
                    // past the last tile: an empty group keeps the wait counts right
                    if (k_tile < k_tiles)
                        load_tile(k_tile, pipe_write);
                    cp_async_fence();
                    ++k_tile;
                    pipe_write = pipe_read;
                    pipe_read = pipe_read == kStages - 1 ? 0 : pipe_read + 1;
                }
                mma_step<P, decltype(k_block)::value>(mma, tCrA, tCrB, tCrA_s, tCrB_s,
                                                      mma_target(acc, acc_tile));
                if (k_block == K_BLOCK_MAX - 1)
                    promote_tile(acc, acc_tile);
            });
        }
        cp_async_wait<0>();
#if CGR_PREC == 2 || CGR_PREC == 3
    };
    // 3xFP16 takes k-blocks in pairs, at the odd one; the last k-block's copy has by then
    // loaded the next tile's k-block 0 over slot 0, so a pair must not hold slot 0 there
    static_assert(kBK % 32 == 0, "3xFP16 (CGR_PREC 2) needs CGR_BK a multiple of 32: set CGR_BK 32 or CGR_PREC 0");
    mainloop(Int<CGR_PREC>{});
    redo_unless_finite(acc, acc_tile, mainloop);
#else
    }
#endif

    // epilogue: (m, co) of each accumulator -> y[(nb*COUT + co)*P + pixel]. An mma.sync
    // accumulator fragment is (2 columns, 2 rows 8 apart) x MMA_M x MMA_N: a row's pixel is
    // found once (row_pixel's divisions) for the MMA_N x 2 accumulators it holds, not once each.
    static_assert(decltype(size<0>(acc))::value == 4 && decltype(rank<0>(acc))::value == 2,
                  "accumulator values: (column pair, row pair)");
    if constexpr (kChanRed != 0) {
        __syncthreads();  // the pipeline's shared memory holds the warps' partials below
        chan_reduce(p, acc, tCcC, tm, reinterpret_cast<CStat *>(smem_raw));
        return;
    }
    // kEpiChunk accumulators at a time (kNg columns of a row block, 4 values each): all their
    // inputs loaded, then their outputs stored (see kEpiChunk)
    float *Y = p.out;
    constexpr int kNi = decltype(size<2>(acc))::value;
    constexpr int kNg = cgr::divisor_at_most(kNi, kEpiChunk / 4);  // whole groups of columns
    CUTE_UNROLL
    for (int mi = 0; mi < size<1>(acc); ++mi) {
        RowPix rp[2];
        bool in_m[2];
        CUTE_UNROLL
        for (int v1 = 0; v1 < 2; ++v1)
            in_m[v1] = row_pixel(get<0>(tCcC(make_coord(make_coord(0, v1), mi, 0))), rp[v1]);
        CUTE_UNROLL
        for (int n0 = 0; n0 < kNi; n0 += kNg) {
            float xin[2][kNg][2][kNin > 0 ? kNin : 1];
            int64_t at[2][kNg][2];
            CUTE_UNROLL
            for (int v1 = 0; v1 < 2; ++v1)
                CUTE_UNROLL
                for (int g = 0; g < kNg; ++g)
                    CUTE_UNROLL
                    for (int v0 = 0; v0 < 2; ++v0) {
                        const int cg = get<1>(tCcC(make_coord(make_coord(v0, v1), mi, n0 + g)));  // the group's channel
                        at[v1][g][v0] = -1;
                        if (in_m[v1] && cg < kN) {
                            const int co = grp * kCoutG + cg;
                            at[v1][g][v0] = int64_t(rp[v1].nb) * kCout * kP + rp[v1].pix + int64_t(co) * kP;
                            inputs_at(p, at[v1][g][v0], co, xin[v1][g][v0]);
                        }
                    }
            CUTE_UNROLL
            for (int v1 = 0; v1 < 2; ++v1)
                CUTE_UNROLL
                for (int g = 0; g < kNg; ++g)
                    CUTE_UNROLL
                    for (int v0 = 0; v0 < 2; ++v0)
                        if (at[v1][g][v0] >= 0)
                            Y[at[v1][g][v0]] = cgr_epi(acc(make_coord(make_coord(v0, v1), mi, n0 + g)), xin[v1][g][v0]);
        }
    }
}
#endif  // !CGR_WGMMA

#if CGR_TRANSPOSED
// ConvTranspose's weight [CIN, COUT, TAPS] as the GEMM's K-major B: wt[co*K + k] =
// w[(c*COUT + co)*TAPS + t], k = c*TAPS + t; a thread an element of wt (coalesced writes,
// reads in runs of TAPS). Grouped: w is [CIN][COUT/G][TAPS], output channel co of group
// g = co / kCoutG reads input channel g*kCinG + c: w[((g*kCinG + c)*kCoutG + co % kCoutG)*TAPS + t].
CUTE_HOST_DEVICE int wsrc_row(int co, int c)
{
    if constexpr (kG == 1)
        return (c * kCout + co) * kTaps;
    const int g = co / kCoutG;
    return ((g * kCinG + c) * kCoutG + (co - g * kCoutG)) * kTaps;
}
constexpr int kTransThreads = 256;
__global__ void __launch_bounds__(kTransThreads) transpose_weight(const float *__restrict__ w,
                                                                  float *__restrict__ wt)
{
    const int64_t i64 = int64_t(blockIdx.x) * kTransThreads + threadIdx.x;
    if (i64 >= int64_t(kCout) * kK)
        return;
    const int i = int(i64);
    if constexpr (kPhases) {
        // phase r's [COUT][K_r] in phase order: the phase, then (co, c, jd, jh, jw)
        int phase = 0;
        int64_t off = 0;
        while (phase + 1 < kR && off + int64_t(kCout) * phase_taps(phase).k <= i64)
            off += int64_t(kCout) * phase_taps(phase++).k;
        const PhaseTaps pt = phase_taps(phase);
        const int local = int(i64 - off);
        const int co = local / pt.k, k = local - co * pt.k;
        const int c = k / pt.t, t = k - c * pt.t;
        const int jd = t / (pt.th * pt.tw), t2 = t - jd * (pt.th * pt.tw);
        const int jh = t2 / pt.tw, jw = t2 - jh * pt.tw;
        const int rd = phase / (kSH * kSW), rh = (phase / kSW) % kSH, rw = phase % kSW;
        const int kd = ph_kk(rd, jd, kSD, kDD), kh = ph_kk(rh, jh, kSH, kDH), kw = ph_kk(rw, jw, kSW, kDW);
        wt[i] = __ldg(w + wsrc_row(co, c) + (kd * kKH + kh) * kKW + kw);
    } else {
        const int co = i / kK, k = i - co * kK;
        const int c = k / kTaps, t = k - c * kTaps;
        wt[i] = __ldg(w + wsrc_row(co, c) + t);
    }
}
constexpr size_t kWsBytes = size_t(kCout) * kK * sizeof(float);
#endif

#if CGR_NHWC && !CGR_WGMMA
// x [NB][CIN][plane] -> xs [NB][plane][CP] (channels past CIN zero): 32 x 32 tiles through
// shared memory, reads and writes coalesced.
__global__ void __launch_bounds__(256) to_nhwc(const float *__restrict__ x, float *__restrict__ xs)
{
    __shared__ float tile[32][33];
    const int64_t pix0 = int64_t(blockIdx.x) * 32;
    const int c0 = int(blockIdx.y) * 32, nb = int(blockIdx.z);
    const int tx = int(threadIdx.x) % 32, ty = int(threadIdx.x) / 32;
    CUTE_UNROLL
    for (int r = 0; r < 4; ++r) {
        const int c = c0 + ty + 8 * r;
        const int64_t pix = pix0 + tx;
        tile[ty + 8 * r][tx] = c < kCin && pix < kPlane64 ? __ldg(x + x_index(nb, c, pix)) : 0.f;
    }
    __syncthreads();
    CUTE_UNROLL
    for (int r = 0; r < 4; ++r) {
        const int64_t pix = pix0 + ty + 8 * r;
        const int c = c0 + tx;
        if (pix < kPlane64 && c < kCp)
            xs[xs_index(nb, pix, c)] = tile[tx][ty + 8 * r];
    }
}

// w -> ws [COUT][taps][CP] (nhwc_w_src; channels past CIN zero): a thread an element of ws.
__global__ void __launch_bounds__(256) weight_nhwc(const float *__restrict__ w, float *__restrict__ ws)
{
    const int64_t i = int64_t(blockIdx.x) * 256 + threadIdx.x;
    if (i >= int64_t(kN) * kKg)
        return;
    const int co = int(i / kKg), k = int(i - int64_t(co) * kKg);
    const int64_t src = nhwc_w_src(co, k);
    ws[i] = src >= 0 ? __ldg(w + src) : 0.f;
}
constexpr size_t kWsBytes = size_t(kXsElems + int64_t(kN) * kKg) * sizeof(float);
#endif

#if CGR_WGMMA
// ---------------------------------------------------------------- Hopper (CGR_WGMMA)
//
// The channels-last implicit GEMM on Hopper's warpgroup MMAs in 3xFP16, split first as
// recipes/gemm_wgmma.cu's presplit form does a GEMM's operands: cg_forward finds the largest
// |x| and |w| (amax_kernel), then writes x as [N][D][H][W][CP] and the weight as [COUT][KP]
// in fp16 halves (big = fp16(v s), small = fp16(v s - big), s a power of two a tensor that
// puts its largest |v s| in [2^14, 2^15); CP = CIN rounded up to 8, so that 8 consecutive k
// are one 16-byte chunk of one pixel; KP = taps x CP rounded up to the 64-half k-tile,
// zeros past K). The product kernel has one producer warpgroup and BM/64 consumer
// warpgroups. The producer gathers: each thread owns chunk t % 8 of the 128-byte k-tile
// row and rows t / 8 + 16 i of A (output pixels; nhwc_row once a row) and of B (output
// channels); once a k-tile it splits its k into the tap (nhwc_tap), then issues a 16-byte
// cp.async a (row, part), source size 0 (zero fill) in the padding and past M, N and K,
// into the stage's 128-byte-swizzled K-major tiles (GMMA::Layout_K_SW128_Atom<half_t>),
// and arrives on the stage's full mbarrier when its copies land
// (cp.async.mbarrier.arrive.noinc: 128 arrivals a phase). The consumers issue, a k-block
// of 16, a_small b_big, a_big b_small, a_big b_big (SS WGMMAs m64 nBN k16), wait, hand the
// stage back (its empty mbarrier) and add the k-tile's zero-started partial to the
// accumulator in fp32 (tensor-core adds truncate: recipes/tf32_mma.cuh). The epilogue
// unscales (exact: powers of two) and writes y[(nb COUT + co) P + pixel] through finish().
// Shared memory a stage: (BM + BN) x 64 halves, twice: 64 KB at 128 x 128.
// A strided transposed convolution runs in sub-pixel phases (CGR_PHASES, as the mma.sync
// kernel's): a tile's rows are one phase's corners Q, its taps step back from Q
// (nhwc_phase_tap), its K is the phase's (K_r = taps_r x CP, padded to the k-tile) and its
// weight the phase's block of the copy (nhwc_phase_w_src); the tiles of one box of Q's
// in all phases are launched next to each other (tile_row).
#ifndef CGR_CONV_XSCALE
#define CGR_CONV_XSCALE 2  // x's scale: 2, 1 unless its largest |x| (found by the split) is outside
#endif                     //   [2^-4, 2^15), then split again with its own; 1, its own, from a pass over x
                           //   first (lab round 55's v0); 0 (lab form), 1 (past fp16's range: not finite)
#ifndef CGR_CONV_EPI_SMEM
#define CGR_CONV_EPI_SMEM 0  // 1 (lab form): the epilogue through shared memory, a column's 64 rows written
#endif                       //   as 16-byte stores (256 contiguous bytes of one channel's plane)
#ifndef CGR_CONV_KSKIP
#define CGR_CONV_KSKIP 0     // 1 (lab form): a k-tile's k16 blocks wholly past K not issued (K' = taps x CP
#endif                       //   padded to 64: #63's 144 -> 192, a quarter of its WGMMAs on zeros)
#ifndef CGR_CONV_GATHER_CA
#define CGR_CONV_GATHER_CA 0 // 1 (lab form): the producer's cp.async through L1 (.ca) instead of L2 only (.cg)
#endif
#ifndef CGR_CONV_MMA_INFLIGHT
#define CGR_CONV_MMA_INFLIGHT 0 // 1 (lab form, CGR_PROMOTE 0): a k-tile's WGMMAs issued before the previous
#endif                          //   k-tile's are waited for (warpgroup_wait<1>), its stage handed back then
#ifndef CGR_CONV_PERSIST  // 1: CTAs stay and walk the tiles (the producer loads a tile's first stages
#define CGR_CONV_PERSIST (CGR_PROMOTE == 0)  // during the epilogue of the one before; lab round 55: 0-13% faster
#endif  // where K <= 2048; with a partial a k-tile the loop cost 22 registers and spills: #56 13% slower)
namespace wg {
constexpr int kConsumers = kBM / 64;
constexpr int kThreadsWg = 128 * (kConsumers + 1);
constexpr int kBKH = kWgBK;                                 // halves a k-tile: one 128-byte row
constexpr int kKP = (kKg + kBKH - 1) / kBKH * kBKH;         // the weight copy's padded K (no phases)
constexpr int kTilesN = (kN + kBN - 1) / kBN;
// CGR_PHASES: each phase's box of rows in whole M tiles (kTilesPerPhase), a tile's K its
// phase's (nhwc_phase_kp: a stride-2 3 x 3 layer's phases have 4, 2, 2 and 1 taps)
constexpr int kTilesM = kPhases ? kR * kTilesPerPhase : (kM + kBM - 1) / kBM;
constexpr int kMRowsWg = kTilesM * kBM;
CUTE_HOST_DEVICE constexpr int tile_phase(int tm) { return kPhases ? tm / kTilesPerPhase : 0; }
// a phase's K in the split weight copy, and where its block starts (halves; without phases
// the one block of kKP). (Not the mma.sync kernel's phase_woff: that copy is floats, unpadded.)
CUTE_HOST_DEVICE constexpr int copy_kp(int phase) { return kPhases ? nhwc_phase_kp(phase) : kKP; }
CUTE_HOST_DEVICE constexpr int64_t copy_woff(int phase) { return kPhases ? nhwc_phase_woff(phase) : 0; }
// CTA tile u (its output-channel tiles apart) -> its row tile: with phases, the phases of one
// box of Q's next to each other (they gather the same input pixels and write the
// interleaved outputs of the same region, whole sectors while they are in L2)
CUTE_HOST_DEVICE constexpr int tile_row(int u) { return kPhases ? (u % kR) * kTilesPerPhase + u / kR : u; }
constexpr bool kPromoteWg = CGR_PROMOTE != 0;
static_assert(kBM == 64 || kBM == 128, "CGR_WGMMA: BM 64 or 128 (a consumer warpgroup a 64 rows)");
static_assert(kBN % 16 == 0 && kBN >= 16 && kBN <= 256, "CGR_WGMMA: BN a multiple of 16, at most 256");
static_assert(kStages >= 2, "stages");
static_assert(int64_t(kTilesM) * kBM < (int64_t(1) << 31) - 256, "the rows must fit an int");

using SmemAtomH = GMMA::Layout_K_SW128_Atom<half_t>;  // 8 rows x 64 halves, swizzled
using SmemLayoutAH = decltype(tile_to_shape(SmemAtomH{}, make_shape(Int<kBM>{}, Int<kBKH>{}, Int<kStages>{})));
using SmemLayoutBH = decltype(tile_to_shape(SmemAtomH{}, make_shape(Int<kBN>{}, Int<kBKH>{}, Int<kStages>{})));
using MmaOpH = decltype(GMMA::ss_op_selector<half_t, half_t, float, Shape<_64, Int<kBN>, _16>, GMMA::Major::K,
                                             GMMA::Major::K>());
using TiledMmaH = decltype(make_tiled_mma(MmaOpH{}, Layout<Shape<Int<kConsumers>, _1, _1>>{}));

constexpr int kTileA = kBM * kBKH, kTileB = kBN * kBKH;  // halves of one stage's tile
// CGR_CONV_EPI_SMEM: a consumer's 64 rows x 16 columns at a time through shared memory, a
// column's rows 68 floats apart (a warp's writes of its 8 rows x 4 column pairs: 32 banks)
constexpr bool kEpiSmem = CGR_CONV_EPI_SMEM != 0;
constexpr int kEpiCols = 16, kEpiLd = 68;
struct Smem {
    alignas(1024) half_t a_big[kTileA * kStages];
    alignas(1024) half_t a_small[kTileA * kStages];
    alignas(1024) half_t b_big[kTileB * kStages];
    alignas(1024) half_t b_small[kTileB * kStages];
    uint64_t full[kStages];   // the producer's 128 threads' copies have landed
    uint64_t empty[kStages];  // the consumers' threads are done with the stage
    alignas(16) float epi[kEpiSmem ? kConsumers : 1][kEpiSmem ? kEpiCols * kEpiLd : 1];  // CGR_CONV_EPI_SMEM
};
constexpr int kSmemBytesWg = int(sizeof(Smem)) + 1024;  // + aligning the base
static_assert(kSmemBytesWg <= 227 * 1024, "CGR_WGMMA: shared memory, fewer stages");

// Where 16-byte chunk j (halves 8j .. 8j + 7) of row r of a stage's tile lies, in halves
// from the tile's start (1024-byte aligned): rows of 128 bytes, the chunk XORed with r mod 8
// (Swizzle<3,4,3> on the byte address; recipes/gemm_wgmma.cu's smem_offset, in halves).
CUTE_HOST_DEVICE int chunk_offset(int r, int j) { return r * kBKH + (((j ^ r) & 7) << 3); }

// Elements of the workspace: xh, xl (kXsElems halves each), wh, wl (kN x kKP each; with
// phases the phases' blocks), then the two largest |v| (x's, the weight's) as floats.
constexpr int64_t kWsXHalves = kXsElems, kWsWHalves = kPhases ? nhwc_phase_woff(kR) : int64_t(kN) * kKP;
static_assert(kWsWHalves < (int64_t(1) << 31), "the weight copy must fit an int index");
constexpr size_t kWsAmaxAt = size_t(2 * kWsXHalves + 2 * kWsWHalves) * 2;  // bytes (a multiple of 16)
constexpr size_t kWsBytes = kWsAmaxAt + 2 * sizeof(float);

using Barrier = cutlass::arch::ClusterBarrier;

// (a tensor's 3xFP16 scale, f16_scale: recipes/tf32_mma.cuh, as the GEMM's)

// v s as (big, small) halves.
__device__ __forceinline__ void split_half(float v, float s, __half &big, __half &small)
{
    const float x = v * s;
    big = __float2half_rn(x);
    small = __float2half_rn(x - __half2float(big));
}

// The largest |v| of x (blockIdx.y 0) and of the weight (1) into amax[0], amax[1]
// (atomicMax on the bits: non-negative floats order as their bits do; zeroed first).
// NaN is dropped here and kept by the product.
__global__ void __launch_bounds__(256) amax_kernel(const float *__restrict__ x, int64_t nx, const float *__restrict__ w,
                                                   int64_t nw, float *amax)
{
    const float *v = blockIdx.y == 0 ? x : w;
    const int64_t n = blockIdx.y == 0 ? nx : nw;
    float m = 0.f;
    const int64_t stride = int64_t(gridDim.x) * 256;
    if (n % 4 == 0 && reinterpret_cast<uintptr_t>(v) % 16 == 0) {
        for (int64_t i = (int64_t(blockIdx.x) * 256 + threadIdx.x) * 4; i < n; i += stride * 4) {
            const float4 q = __ldg(reinterpret_cast<const float4 *>(v + i));
            m = fmaxf(m, fmaxf(fmaxf(fabsf(q.x), fabsf(q.y)), fmaxf(fabsf(q.z), fabsf(q.w))));
        }
    } else {
        for (int64_t i = int64_t(blockIdx.x) * 256 + threadIdx.x; i < n; i += stride)
            m = fmaxf(m, fabsf(__ldg(v + i)));
    }
    for (int o = 16; o > 0; o /= 2)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (threadIdx.x % 32 == 0)
        atomicMax(reinterpret_cast<unsigned *>(amax + blockIdx.y), __float_as_uint(m));
}

// x's scale from its largest |x|: CGR_CONV_XSCALE 1, f16_scale's; 2, 1 where that keeps x
// well inside fp16's range (2^-4 <= amax < 2^15: no big part overflows, a small part is
// subnormal only where x is below 2^-3, its error then at most 2^-25 absolute), else
// f16_scale's; 0 (lab form), 1.
__device__ __forceinline__ float x_scale(float amax)
{
    if (CGR_CONV_XSCALE == 0 || (CGR_CONV_XSCALE == 2 && amax >= 0.0625f && amax < 32768.f))
        return 1.f;
    return f16_scale(amax);
}

// Split tile (pixels 32 tile.x.., channels 64 tile.y.., image tile.z) of x [NB][CIN][plane]
// into xh, xl [NB][plane][CP] (channels past CIN zero) with scale s: 64 channels x 32
// pixels through shared memory, read along the pixels (128 bytes a warp), written a
// 16-byte chunk (8 channels of one pixel) of each part a thread. Returns the tile's largest
// |x| (in every thread; NaN dropped, kept by the product).
__device__ __forceinline__ float split_x_tile(const float *__restrict__ x, dim3 tile, float s, __half *xh, __half *xl)
{
    __shared__ float sx[64][33];
    __shared__ float red[8];
    const int64_t pix0 = int64_t(tile.x) * 32;
    const int c0 = int(tile.y) * 64, nb = int(tile.z);
    const int tx = int(threadIdx.x) % 32, ty = int(threadIdx.x) / 32;
    float m = 0.f;
    CUTE_UNROLL
    for (int r = 0; r < 8; ++r) {
        const int c = c0 + ty + 8 * r;
        const int64_t pix = pix0 + tx;
        const float v = c < kCin && pix < kPlane64 ? __ldg(x + x_index(nb, c, pix)) : 0.f;
        sx[ty + 8 * r][tx] = v;
        m = fmaxf(m, fabsf(v));
    }
    for (int o = 16; o > 0; o /= 2)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (tx == 0)
        red[ty] = m;
    __syncthreads();
    for (int w = 0; w < 8; ++w)
        m = fmaxf(m, red[w]);
    const int q = int(threadIdx.x) / 8, j = int(threadIdx.x) % 8;
    const int64_t pix = pix0 + q;
    const int c = c0 + 8 * j;
    if (pix < kPlane64 && c < kCp) {
        alignas(16) __half big[8], small[8];
        CUTE_UNROLL
        for (int e = 0; e < 8; ++e)
            split_half(sx[8 * j + e][q], s, big[e], small[e]);
        const int64_t o = xs_index(nb, pix, c);
        *reinterpret_cast<uint4 *>(xh + o) = *reinterpret_cast<const uint4 *>(big);
        *reinterpret_cast<uint4 *>(xl + o) = *reinterpret_cast<const uint4 *>(small);
    }
    __syncthreads();  // sx and red are read before the CTA's next tile writes them
    return m;
}

// The split of x, a CTA a tile (blockIdx). CGR_CONV_XSCALE 1: with x_scale(amax[0]), its
// largest |x| found before (amax_kernel). 2: with scale 1, finding the largest |x| on the way
// (into amax[0]; an atomic only where a CTA's is larger than what is there already);
// resplit_x then splits x again only where that is outside x_scale's band.
__global__ void __launch_bounds__(256) split_x(const float *__restrict__ x, float *amax, __half *xh, __half *xl)
{
    const float s = CGR_CONV_XSCALE == 2 ? 1.f : x_scale(amax[0]);
    const float m = split_x_tile(x, blockIdx, s, xh, xl);
    if (CGR_CONV_XSCALE == 2 && threadIdx.x == 0 && m > *reinterpret_cast<volatile float *>(amax))
        atomicMax(reinterpret_cast<unsigned *>(amax), __float_as_uint(m));
}

// CGR_CONV_XSCALE 2: x split again with its own scale, grid-stride over split_x's tiles,
// where the largest |x| is outside x_scale's band (rare: each CTA reads one word and leaves).
__global__ void __launch_bounds__(256) resplit_x(const float *__restrict__ x, const float *amax, __half *xh, __half *xl,
                                                 dim3 tiles)
{
    const float s = x_scale(amax[0]);
    if (s == 1.f)
        return;
    const int64_t n = int64_t(tiles.x) * tiles.y * tiles.z;
    for (int64_t u = blockIdx.x; u < n; u += gridDim.x)
        split_x_tile(x, dim3(unsigned(u % tiles.x), unsigned(u / tiles.x % tiles.y), unsigned(u / tiles.x / tiles.y)), s,
                     xh, xl);
}

// The weight -> wh, wl [COUT][KP] (nhwc_w_src; zeros past CIN and K), with phases a block
// [COUT][KP_r] a phase (nhwc_phase_w_src): a 16-byte chunk of each part a thread.
__global__ void __launch_bounds__(256) split_w(const float *__restrict__ w, const float *amax, __half *wh, __half *wl)
{
    const int64_t i = int64_t(blockIdx.x) * 256 + threadIdx.x;  // chunk
    if (i >= kWsWHalves / 8)
        return;
    const float s = f16_scale(amax[1]);
    int phase = 0;
    int64_t local = i * 8;  // halves into the phase's block
    while (kPhases && phase + 1 < kR && local >= int64_t(kN) * copy_kp(phase))
        local -= int64_t(kN) * copy_kp(phase++);
    const int kp = copy_kp(phase), kk = kPhases ? nhwc_phase_k(phase) : kKg;
    const int co = int(local / kp), k0 = int(local % kp);
    alignas(16) __half big[8], small[8];
    CUTE_UNROLL
    for (int e = 0; e < 8; ++e) {
        const int64_t src = k0 + e >= kk ? -1 : kPhases ? nhwc_phase_w_src(phase, co, k0 + e) : nhwc_w_src(co, k0 + e);
        split_half(src >= 0 ? __ldg(w + src) : 0.f, s, big[e], small[e]);
    }
    *reinterpret_cast<uint4 *>(wh + i * 8) = *reinterpret_cast<const uint4 *>(big);
    *reinterpret_cast<uint4 *>(wl + i * 8) = *reinterpret_cast<const uint4 *>(small);
}

// 16 bytes gmem -> smem, landing with this thread's other copies; zeros when !valid.
__device__ __forceinline__ void copy16(half_t *dst, const __half *src, bool valid)
{
    const uint32_t d = cute::cast_smem_ptr_to_uint(dst);
#if CGR_CONV_GATHER_CA  // through L1 (a tap's neighbours read the same pixels), as the mma.sync kernel's gather
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 16 : 0));
#else
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 16 : 0));
#endif
}

// The producer warpgroup's thread t (0..127): rows t / 8 + 16 i of A and B, chunk t % 8.
// Returns the tile's k-tiles.
__device__ __forceinline__ int produce(const Params &p, Smem &s, int tm, int tn, int t, int base)
{
    constexpr int kRA = kBM / 16, kRB = kBN / 16;
    const int j = t % 8, r0 = t / 8;
    const int phase = tile_phase(tm), kp = copy_kp(phase), nkt = kp / kBKH;
    const PhaseTaps pt = phase_taps(phase);
    const __half *wh = p.wh + copy_woff(phase), *wl = p.wl + copy_woff(phase);
    NhwcRow rows[kRA];
    CUTE_UNROLL
    for (int i = 0; i < kRA; ++i)
        rows[i] = nhwc_row(tm * kBM + r0 + 16 * i);
    for (int kt = 0; kt < nkt; ++kt) {
        const int g = base + kt;  // k-tiles this CTA has loaded before (its stage and phase)
        const int stage = g % kStages;
        if (g >= kStages)
            Barrier::wait(&s.empty[stage], ((g / kStages) - 1) & 1);
        const int k = kt * kBKH + 8 * j;
        const NhwcTap tap = kPhases ? nhwc_phase_tap(pt, k) : nhwc_tap(k);
        half_t *ab = s.a_big + stage * kTileA, *as = s.a_small + stage * kTileA;
        CUTE_UNROLL
        for (int i = 0; i < kRA; ++i) {
            const bool valid = nhwc_reads(rows[i], tap, k);
            const int64_t o = valid ? rows[i].base + tap.koff : 0;
            const int d = chunk_offset(r0 + 16 * i, j);
            copy16(ab + d, p.xh + o, valid);
            copy16(as + d, p.xl + o, valid);
        }
        half_t *bb = s.b_big + stage * kTileB, *bs = s.b_small + stage * kTileB;
        CUTE_UNROLL
        for (int i = 0; i < kRB; ++i) {
            const int co = tn * kBN + r0 + 16 * i;
            const bool valid = co < kN;
            const int64_t o = valid ? int64_t(co) * kp + k : 0;
            const int d = chunk_offset(r0 + 16 * i, j);
            copy16(bb + d, wh + o, valid);
            copy16(bs + d, wl + o, valid);
        }
        cutlass::arch::cpasync_barrier_arrive_noinc(&s.full[stage]);
    }
    return nkt;
}

// CGR_CONV_EPI_SMEM: consumer warpgroup thread t's accumulators (rows r0 .. r0 + 63 of
// one image, below M) written through buf 16 columns at a time: each value to
// buf[column][row], a named barrier for the warpgroup, then a channel's 64 rows as 16 float4
// stores (16 threads, 256 contiguous bytes of its plane), finish() applied there.
template <class Acc, class Coord>
__device__ __forceinline__ void store_staged(const Params &p, const Acc &acc, const Coord &tCcC, float *buf, int r0,
                                             int tn, int t, float u)
{
    const int wgbar = int(threadIdx.x) / 128;  // named barrier 1, 2: the consumer warpgroups (0: __syncthreads)
    const int nb = r0 / kP, pix0 = r0 - nb * kP;
    CUTE_UNROLL
    for (int c0 = 0; c0 < kBN; c0 += kEpiCols) {
        CUTE_UNROLL
        for (int i = 0; i < size(acc); ++i) {
            const int cl = get<1>(tCcC(i)) - tn * kBN - c0;
            if (cl >= 0 && cl < kEpiCols)
                buf[cl * kEpiLd + (get<0>(tCcC(i)) - r0)] = acc(i) * u;
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(wgbar));
        CUTE_UNROLL
        for (int e = t; e < kEpiCols * 16; e += 128) {
            const int cl = e / 16, q = e % 16, co = tn * kBN + c0 + cl;
            if (co < kN) {
                const float4 v = *reinterpret_cast<const float4 *>(buf + cl * kEpiLd + 4 * q);
                const int64_t idx = (int64_t(nb) * kCout + co) * kP + pix0 + 4 * q;
                float4 o;
                o.x = finish(p, v.x, idx, co);
                o.y = finish(p, v.y, idx + 1, co);
                o.z = finish(p, v.z, idx + 2, co);
                o.w = finish(p, v.w, idx + 3, co);
                *reinterpret_cast<float4 *>(p.out + idx) = o;
            }
        }
        asm volatile("bar.sync %0, 128;\n" ::"r"(wgbar));  // buf read before the next columns' writes
    }
}

// The channel reduction's epilogue on Hopper (CGR_CHANRED): a warp's accumulators hold
// every column of the tile (all the channels) for its 16 rows, a thread two rows (m0 and
// m0 + 8) at 2 columns of each 8: the fragment is ((2 columns, 2 rows, J), 1, NN) (J atoms'
// 8 columns, NN atoms: 16 x 7 for a tile 112 wide). So a row reduces in the thread, then
// across the quad of lanes holding its other columns; lane 0 of the quad writes cgr_epi of
// the row's result. No shared memory, no barrier (the mma.sync kernel's warps split the
// columns: chan_reduce combines them through smem).
template <class Acc, class Coord>
__device__ __forceinline__ void chan_reduce_wg(const Params &p, const Acc &acc, const Coord &tCcC, float u)
{
    static_assert(decltype(rank<0>(acc))::value == 3 && decltype(size<0, 0>(acc))::value == 2 &&
                      decltype(size<0, 1>(acc))::value == 2 && decltype(size<1>(acc))::value == 1,
                  "the WGMMA accumulator fragment ((2, 2, J), 1, NN)");
    constexpr int kJ = decltype(size<0, 2>(acc))::value, kNN = decltype(size<2>(acc))::value;
    const int m0 = get<0>(tCcC(0));
    CUTE_UNROLL
    for (int r = 0; r < 2; ++r) {
        RowPix rp;
        const bool ok = row_pixel(m0 + 8 * r, rp);
        CStat st = cr_identity();
        if (ok) {
            const int64_t row = int64_t(rp.nb) * kCout * kP + rp.pix;
            CUTE_UNROLL
            for (int n = 0; n < kNN; ++n) {
                CUTE_UNROLL
                for (int j = 0; j < kJ; ++j) {
                    CUTE_UNROLL
                    for (int v = 0; v < 2; ++v) {
                        const auto c = make_coord(make_coord(v, r, j), 0, n);
                        const int co = get<1>(tCcC(c));
                        if (co < kN) {
                            float x[kNin > 0 ? kNin : 1];
                            inputs_at(p, row + int64_t(co) * kP, co, x);
                            st = cr_combine(st, { cgr_pre(acc(c) * u, x), 1.f });
                        }
                    }
                }
            }
        }
        st = quad_combine(st);
        if (ok && threadIdx.x % 4 == 0) {
            const int64_t o = int64_t(rp.nb) * kP + rp.pix;
            float x[kNin > 0 ? kNin : 1];
            inputs_at(p, o, 0, x);  // scalars only (src/recipe_conv.c)
            p.out[o] = cgr_epi(cr_final(st), x);
        }
    }
}

// Consumer thread t's view of tile (tm, tn): its accumulators' (m, co) coordinates, and
// fragments for them (the same TiledMmaH partition as the WGMMAs').
__device__ __forceinline__ auto tile_coords(int tm, int tn, int t)
{
    TiledMmaH mma;
    Tensor cC = make_identity_tensor(make_shape(Int<kMRowsWg>{}, Int<kN>{}));
    Tensor gcC = local_tile(cC, Shape<Int<kBM>, Int<kBN>>{}, make_coord(tm, tn));  // (BM,BN) -> (m,co)
    return mma.get_slice(t).partition_C(gcC);
}
__device__ __forceinline__ auto tile_acc(int t)
{
    TiledMmaH mma;
    Tensor cC = make_identity_tensor(make_shape(Int<kMRowsWg>{}, Int<kN>{}));
    Tensor gcC = local_tile(cC, Shape<Int<kBM>, Int<kBN>>{}, make_coord(0, 0));
    return mma.get_slice(t).partition_fragment_C(gcC);
}

// Consumer thread t: row tile tm's k-tiles into acc (the CTA's k-tiles before it: base).
// Returns the tile's k-tiles.
template <class Acc>
__device__ __forceinline__ int mainloop(Smem &s, Acc &acc, int tm, int t, int base)
{
    const int phase = tile_phase(tm), nkt = copy_kp(phase) / kBKH;
    const int kk = kPhases ? nhwc_phase_k(phase) : kKg;
    (void)kk;
    TiledMmaH mma;
    auto thr = mma.get_slice(t);
    Tensor sAb = make_tensor(make_smem_ptr(s.a_big), SmemLayoutAH{});
    Tensor sAs = make_tensor(make_smem_ptr(s.a_small), SmemLayoutAH{});
    Tensor sBb = make_tensor(make_smem_ptr(s.b_big), SmemLayoutBH{});
    Tensor sBs = make_tensor(make_smem_ptr(s.b_small), SmemLayoutBH{});
    Tensor rAb = thr.make_fragment_A(thr.partition_A(sAb));  // (MMA,MMA_M,MMA_K,PIPE) descriptors
    Tensor rAs = thr.make_fragment_A(thr.partition_A(sAs));
    Tensor rBb = thr.make_fragment_B(thr.partition_B(sBb));
    Tensor rBs = thr.make_fragment_B(thr.partition_B(sBs));
    // CGR_PROMOTE != 0: each k-tile's products into a zero-started partial, added to the
    // accumulator in fp32; 0 (K up to 2048, src/recipe_gemm.c recipe_tf32_promote): chained
    // into the accumulator (64 registers fewer at 128 columns)
    clear(acc);
    // k-tile kt's WGMMAs into target (zero-started: the partial, or the accumulator at kt 0);
    // drained (waited for, its stage handed back) unless the caller does that (drain false)
    auto ktile = [&](auto &target, int kt, bool zero, bool drain = true) {
        const int g = base + kt, stage = g % kStages;
        Barrier::wait(&s.full[stage], (g / kStages) & 1);
        if (zero)
            mma.accumulate_ = GMMA::ScaleOut::Zero;
        warpgroup_fence_operand(target);
        warpgroup_arrive();
        CUTE_UNROLL
        for (int kb = 0; kb < int(size<2>(rAb)); ++kb) {
            if (CGR_CONV_KSKIP && kt * kBKH + kb * 16 >= kk)
                break;  // k-blocks past K: zeros (kb 0 never is)
            gemm(mma, rAs(_, _, kb, stage), rBb(_, _, kb, stage), target);
            mma.accumulate_ = GMMA::ScaleOut::One;
            gemm(mma, rAb(_, _, kb, stage), rBs(_, _, kb, stage), target);
            gemm(mma, rAb(_, _, kb, stage), rBb(_, _, kb, stage), target);
        }
        warpgroup_commit_batch();
        if (!drain)
            return;
        warpgroup_wait<0>();
        warpgroup_fence_operand(target);
        Barrier::arrive(&s.empty[stage]);
    };
#if CGR_CONV_MMA_INFLIGHT
    static_assert(!kPromoteWg, "CGR_CONV_MMA_INFLIGHT: with CGR_PROMOTE 0 (chained into the accumulator)");
    // CUTLASS's SM90 mainloop order: k-tile kt's batch issued while kt - 1's completes, kt -
    // 1's stage handed back once warpgroup_wait<1> says it has
    for (int kt = 0; kt < nkt; ++kt) {
        ktile(acc, kt, kt == 0, false);
        warpgroup_wait<1>();
        if (kt > 0)
            Barrier::arrive(&s.empty[(base + kt - 1) % kStages]);
    }
    warpgroup_wait<0>();
    warpgroup_fence_operand(acc);
    if (nkt > 0)
        Barrier::arrive(&s.empty[(base + nkt - 1) % kStages]);
#else
    if constexpr (kPromoteWg) {
        auto part = make_fragment_like(acc);
        for (int kt = 0; kt < nkt; ++kt) {
            ktile(part, kt, true);
            CUTE_UNROLL
            for (int i = 0; i < size(acc); ++i)
                acc(i) += part(i);
        }
    } else {
        for (int kt = 0; kt < nkt; ++kt)
            ktile(acc, kt, kt == 0);
    }
#endif
    return nkt;
}

// The scales undone (powers of two: exact): the factor for a consumer's accumulators
__device__ __forceinline__ float acc_unscale(const Params &p)
{
    return (1.f / x_scale(p.amax[0])) * (1.f / f16_scale(p.amax[1]));
}

// The plain epilogue: each accumulator to y[(nb*COUT + co)*P + pixel]; a thread holds two
// rows (m16 of its warp, 8 apart), split into (image, pixel) once each. (Not written with
// store_rows_pair's acc_rows/acc_at: that form of the same index math cost the unpaired
// kernel ~150 instructions, conv2d_relu_biasadd 2616 -> 2768; this one is session 36's SASS.)
template <class Acc, class Coord>
__device__ __forceinline__ void store_rows(const Params &p, const Acc &acc, const Coord &tCcC, float u)
{
    static_assert(decltype(size<1>(acc))::value == 1, "a consumer's accumulators: its own 64 rows");
    const int m0 = get<0>(tCcC(0));
    RowPix rp0, rp1;
    const bool ok0 = row_pixel(m0, rp0), ok1 = row_pixel(m0 + 8, rp1);
    // kEpiChunk accumulators at a time: all their inputs loaded, then their outputs stored
    // (see kEpiChunk)
    constexpr int kAcc = decltype(size(acc))::value;
    constexpr int kChunk = cgr::divisor_at_most(kAcc, kEpiChunk);  // (56 at a tile 112 wide: 14)
    CUTE_UNROLL
    for (int i0 = 0; i0 < kAcc; i0 += kChunk) {
        float xin[kChunk][kNin > 0 ? kNin : 1];
        int64_t at[kChunk];
        CUTE_UNROLL
        for (int j = 0; j < kChunk; ++j) {
            const int m = get<0>(tCcC(i0 + j)), co = get<1>(tCcC(i0 + j));
            const bool first = m == m0;
            at[j] = -1;
            if (!(first ? ok0 : ok1) || co >= kN)
                continue;
            const RowPix &rp = first ? rp0 : rp1;
            at[j] = (int64_t(rp.nb) * kCout + co) * kP + rp.pix;
            inputs_at(p, at[j], co, xin[j]);
        }
        CUTE_UNROLL
        for (int j = 0; j < kChunk; ++j)
            if (at[j] >= 0)
                p.out[at[j]] = cgr_epi(acc(i0 + j) * u, xin[j]);
    }
}

// Consumer thread t (0 .. 128 BM/64 - 1): the k-tiles' WGMMAs, then the epilogue. Returns
// the tile's k-tiles.
__device__ __forceinline__ int consume(const Params &p, Smem &s, int tm, int tn, int t, int base)
{
    auto tCcC = tile_coords(tm, tn, t);
    auto acc = tile_acc(t);
    const int nkt = mainloop(s, acc, tm, t, base);
    const float u = acc_unscale(p);
    if constexpr (kChanRed != 0) {
        chan_reduce_wg(p, acc, tCcC, u);
        return nkt;
    }
    if constexpr (kEpiSmem && !kPhases) {
        // the consumer's 64 rows all of one image and below M, and 16-byte aligned in y
        const int r0 = tm * kBM + (t / 128) * 64;
        if (kP % 4 == 0 && r0 + 64 <= kM && r0 / kP == (r0 + 63) / kP) {
            store_staged(p, acc, tCcC, s.epi[t / 128], r0, tn, t % 128, u);
            return nkt;
        }
    }
    store_rows(p, acc, tCcC, u);
    return nkt;
}

// CGR_CONV_PAIR_W (phases, width stride 2): a CTA's unit is the two width phases of one box
// of Q's (row tiles tm and tm + kTilesPerPhase: phases 2j and 2j + 1), so that the outputs a
// row of one phase leaves every other float of, the other phase's same row fills: the
// producer loads one tile's k-tiles then the other's, the consumer runs them into two
// accumulator sets and stores each output pair of a thread together (one 8-byte store where
// the pair is adjacent and aligned: each warp store then whole sectors), instead of two CTAs
// each writing half of every sector.
#ifndef CGR_CONV_PAIR_W
#define CGR_CONV_PAIR_W 0  // 1 (lab form): as above
#endif
constexpr bool kPairW = CGR_CONV_PAIR_W != 0;
static_assert(!kPairW || (kPhases && kSW == 2 && kChanRed == 0 && !kEpiSmem),
              "CGR_CONV_PAIR_W: phases with width stride 2, the plain epilogue");

// Where accumulator i of a consumer thread goes: y[(nb*COUT + co)*P + pixel], -1 past the
// outputs. A thread holds two rows (m16 of its warp, 8 apart): each row's (image, pixel)
// found once, as the offset of its channel 0 (b0 for row m0, b1 for m0 + 8).
struct AccRows {
    int m0;
    bool ok0, ok1;
    int64_t b0, b1;
};
template <class Coord>
__device__ __forceinline__ AccRows acc_rows(const Coord &tCcC)
{
    AccRows r;
    RowPix rp0, rp1;
    r.m0 = get<0>(tCcC(0));
    r.ok0 = row_pixel(r.m0, rp0), r.ok1 = row_pixel(r.m0 + 8, rp1);
    r.b0 = r.ok0 ? int64_t(rp0.nb) * kCout * kP + rp0.pix : 0;
    r.b1 = r.ok1 ? int64_t(rp1.nb) * kCout * kP + rp1.pix : 0;
    return r;
}
template <class Coord>
__device__ __forceinline__ int64_t acc_at(const AccRows &r, const Coord &tCcC, int i)
{
    const int m = get<0>(tCcC(i)), co = get<1>(tCcC(i));
    const bool first = m == r.m0;
    if (!(first ? r.ok0 : r.ok1) || co >= kN)
        return -1;
    return (first ? r.b0 : r.b1) + int64_t(co) * kP;
}

template <class Acc, class Coord>
__device__ __forceinline__ void store_rows_pair(const Params &p, const Acc &acc0, const Coord &c0, const Acc &acc1,
                                                const Coord &c1, float u)
{
    const AccRows r0 = acc_rows(c0), r1 = acc_rows(c1);
    constexpr int kAcc = decltype(size(acc0))::value;
    constexpr int kChunk = cgr::divisor_at_most(kAcc, kEpiChunk > 1 ? kEpiChunk / 2 : 1);
    CUTE_UNROLL
    for (int i0 = 0; i0 < kAcc; i0 += kChunk) {
        float x0[kChunk][kNin > 0 ? kNin : 1], x1[kChunk][kNin > 0 ? kNin : 1];
        int64_t at0[kChunk], at1[kChunk];
        CUTE_UNROLL
        for (int j = 0; j < kChunk; ++j) {
            at0[j] = acc_at(r0, c0, i0 + j), at1[j] = acc_at(r1, c1, i0 + j);
            if (at0[j] >= 0)
                inputs_at(p, at0[j], get<1>(c0(i0 + j)), x0[j]);
            if (at1[j] >= 0)
                inputs_at(p, at1[j], get<1>(c1(i0 + j)), x1[j]);
        }
        CUTE_UNROLL
        for (int j = 0; j < kChunk; ++j) {
            const float v0 = at0[j] >= 0 ? cgr_epi(acc0(i0 + j) * u, x0[j]) : 0.f;
            const float v1 = at1[j] >= 0 ? cgr_epi(acc1(i0 + j) * u, x1[j]) : 0.f;
            const int64_t lo = at0[j] < at1[j] ? at0[j] : at1[j];
            if (lo >= 0 && (lo & 1) == 0 && (at0[j] ^ at1[j]) == 1) {  // adjacent, 8-byte aligned
                *reinterpret_cast<float2 *>(p.out + lo) = lo == at0[j] ? make_float2(v0, v1) : make_float2(v1, v0);
                continue;
            }
            if (at0[j] >= 0)
                p.out[at0[j]] = v0;
            if (at1[j] >= 0)
                p.out[at1[j]] = v1;
        }
    }
}

// unit u of the CTAs' walk (output-channel tiles apart) -> its first row tile: tile_row's,
// or with CGR_CONV_PAIR_W the width-phase pairs of one box next to each other
constexpr int kUnitsM = kPairW ? kTilesM / 2 : kTilesM, kPairs = kR >= 2 ? kR / 2 : 1;
CUTE_HOST_DEVICE constexpr int unit_row(int u)
{
    return kPairW ? (2 * (u % kPairs)) * kTilesPerPhase + u / kPairs : tile_row(u);
}
__device__ __forceinline__ int produce_unit(const Params &p, Smem &s, int tm, int tn, int t, int base)
{
    const int n = produce(p, s, tm, tn, t, base);
    return kPairW ? n + produce(p, s, tm + kTilesPerPhase, tn, t, base + n) : n;
}
__device__ __forceinline__ int consume_unit(const Params &p, Smem &s, int tm, int tn, int t, int base)
{
    if constexpr (!kPairW) {
        return consume(p, s, tm, tn, t, base);
    } else {
        auto c0 = tile_coords(tm, tn, t), c1 = tile_coords(tm + kTilesPerPhase, tn, t);
        auto acc0 = tile_acc(t), acc1 = tile_acc(t);
        const int n0 = mainloop(s, acc0, tm, t, base);
        const int n1 = mainloop(s, acc1, tm + kTilesPerPhase, t, base + n0);
        store_rows_pair(p, acc0, c0, acc1, c1, acc_unscale(p));
        return n0 + n1;
    }
}

// CGR_CONV_ROTATE (on by default in phases with CGR_CONV_PERSIST): round k of the walk (tiles
// k*grid to k*grid + grid - 1, the CTAs at once) gives CTA b tile k*grid + (b + k) mod grid,
// not k*grid + b: the same tiles run together (a box's phases still side by side), but a CTA
// no longer meets the same phase every round. In phases the tiles' k-tiles differ up to 8x
// (3D, kernel 3, stride 2: 8, 4, 2 or 1 taps a phase) and with a grid that is a multiple of
// the phases' cycle (132 SMs; 8 phases, or 4 width-phase pairs) CTA b met phase b mod the
// cycle in every round: the CTAs holding the heaviest phase set the kernel's time. Lab round
// 75 (H100, kernel ms, unrotated -> rotated): level 1 #73 2.323 -> 2.031, #77 1.572 -> 0.866,
// level 2 #100 6.225 -> 5.471, #16 4.712 -> 4.349, #20 0.745 -> 0.652, #26 1.673 -> 1.650,
// #74 0.625 -> 0.574. Without phases every tile takes as long: the walk stays as it was.
#ifndef CGR_CONV_ROTATE
#define CGR_CONV_ROTATE (CGR_CONV_PERSIST && CGR_PHASES)
#endif
constexpr bool kRotate = CGR_CONV_ROTATE != 0;
static_assert(!kRotate || CGR_CONV_PERSIST,
              "CGR_CONV_ROTATE 1 rotates the persistent walk: set CGR_CONV_PERSIST 1 too (its default needs CGR_PROMOTE 0)");

__global__ void __launch_bounds__(kThreadsWg, CGR_MINB) conv_wgmma_kernel(const Params p)
{
    extern __shared__ char smem_raw[];
    Smem &s = *reinterpret_cast<Smem *>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
    if (threadIdx.x == 0) {
        for (int i = 0; i < kStages; ++i) {
            Barrier::init(&s.full[i], 128);
            Barrier::init(&s.empty[i], 128 * kConsumers);
        }
        cutlass::arch::fence_barrier_init();
    }
    __syncthreads();
    // the output-channel tiles of one pixel tile next to each other (they gather the same x);
    // CGR_CONV_PERSIST: a CTA's tiles gridDim.x apart, its stages' phases running on
    // (each role its own loop; without CGR_CONV_PERSIST no loop: around the partial-sum form
    // (CGR_PROMOTE != 0) a loop cost 22 registers and 60 bytes of spills, level 1 #56)
    constexpr int kTiles = kUnitsM * kTilesN, kStride = CGR_CONV_PERSIST ? 0 : kTiles;
    const int stride = CGR_CONV_PERSIST ? int(gridDim.x) : kStride;
    if constexpr (!CGR_CONV_PERSIST) {
        (void)stride;
        const int tile = int(blockIdx.x);
        if (threadIdx.x < 128)
            produce_unit(p, s, unit_row(tile / kTilesN), tile % kTilesN, int(threadIdx.x), 0);
        else
            consume_unit(p, s, unit_row(tile / kTilesN), tile % kTilesN, int(threadIdx.x) - 128, 0);
    } else if constexpr (kRotate) {
        const bool producer = threadIdx.x < 128;
        for (int k = 0, base = 0; k * stride < kTiles; ++k) {
            const int tile = k * stride + (int(blockIdx.x) + k) % stride;
            if (tile >= kTiles)
                continue;
            const int tm = unit_row(tile / kTilesN), tn = tile % kTilesN;
            base += producer ? produce_unit(p, s, tm, tn, int(threadIdx.x), base)
                             : consume_unit(p, s, tm, tn, int(threadIdx.x) - 128, base);
        }
    } else if (threadIdx.x < 128) {
        for (int tile = int(blockIdx.x), base = 0; tile < kTiles; tile += stride)
            base += produce_unit(p, s, unit_row(tile / kTilesN), tile % kTilesN, int(threadIdx.x), base);
    } else {
        for (int tile = int(blockIdx.x), base = 0; tile < kTiles; tile += stride)
            base += consume_unit(p, s, unit_row(tile / kTilesN), tile % kTilesN, int(threadIdx.x) - 128, base);
    }
}

// The split copies, then the product (cg_forward's part on Hopper).
inline int launch(Params &p, void *workspace, cudaStream_t stream)
{
    __half *xh = static_cast<__half *>(workspace), *xl = xh + kWsXHalves;
    __half *wh = xl + kWsXHalves, *wl = wh + kWsWHalves;
    float *amax = reinterpret_cast<float *>(static_cast<char *>(workspace) + kWsAmaxAt);
    if (cudaMemsetAsync(amax, 0, 2 * sizeof(float), stream) != cudaSuccess)
        return CG_LAUNCH_FAILED;
    // at most 8 CTAs of 256 an SM of the largest Hopper (132 SMs), grid-stride
    const int64_t nx = CGR_CONV_XSCALE == 1 ? int64_t(kNb) * kImage : 0, nw = int64_t(kCout) * kCin * kTaps;
    const int64_t want = (nx / 4 + 255) / 256;
    amax_kernel<<<dim3(unsigned(want < 132 * 8 ? (want > 0 ? want : 1) : 132 * 8), 2), 256, 0, stream>>>(
        p.in[CGR_X], nx, p.in[CGR_W], nw, amax);
    static_assert((kPlane64 + 31) / 32 < (int64_t(1) << 31) && kNb < 65536, "split_x's grid");
    const dim3 xtiles(unsigned((kPlane64 + 31) / 32), unsigned((kCp + 63) / 64), unsigned(kNb));
    split_x<<<xtiles, 256, 0, stream>>>(p.in[CGR_X], amax, xh, xl);
    if (CGR_CONV_XSCALE == 2)
        resplit_x<<<132 * 4, 256, 0, stream>>>(p.in[CGR_X], amax, xh, xl, xtiles);
    split_w<<<unsigned((kWsWHalves / 8 + 255) / 256), 256, 0, stream>>>(p.in[CGR_W], amax, wh, wl);
    p.xh = xh, p.xl = xl, p.wh = wh, p.wl = wl, p.amax = amax;
    if (cudaFuncSetAttribute(conv_wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytesWg) !=
        cudaSuccess)
        return CG_LAUNCH_FAILED;
    static_assert(int64_t(kTilesM) * kTilesN < (int64_t(1) << 31), "grid limits");
    int grid = kUnitsM * kTilesN;
    if (CGR_CONV_PERSIST) {  // as many CTAs as stay on the GPU at once
        int dev = 0, sms = 0, per_sm = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, conv_wgmma_kernel, kThreadsWg, kSmemBytesWg) !=
                cudaSuccess)
            return CG_LAUNCH_FAILED;
        if (int64_t(sms) * (per_sm > 0 ? per_sm : 1) < grid)
            grid = sms * (per_sm > 0 ? per_sm : 1);
    }
    conv_wgmma_kernel<<<unsigned(grid), kThreadsWg, kSmemBytesWg, stream>>>(p);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}

}  // namespace wg
#endif  // CGR_WGMMA

#endif  // CGR_CONV_EMULATE

static const int64_t kOutShape[] = CGR_OUT_SHAPE;

}  // namespace cgr_conv

#ifndef CGR_CONV_EMULATE
CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *in, int n_in)
{
    (void)in; (void)n_in;
    using namespace cgr_conv;
#if CGR_WGMMA
    return CGR_PREFOLD_BYTES + wg::kWsBytes;
#elif CGR_TRANSPOSED || CGR_NHWC
    return CGR_PREFOLD_BYTES + kWsBytes;
#else
    return CGR_PREFOLD_BYTES;
#endif
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace cgr_conv;
#ifdef CGR_PREFOLD
    float *fold = nullptr;  // x and the weight summed over the folded dims (conv_fold.cuh)
    if (!cgr_prefold::take(workspace, workspace_bytes, fold))
        return CG_BAD_WORKSPACE;
#endif
#if CGR_WGMMA
    if (workspace == nullptr || workspace_bytes < wg::kWsBytes || reinterpret_cast<uintptr_t>(workspace) % 16 != 0)
        return CG_BAD_WORKSPACE;
#elif CGR_TRANSPOSED || CGR_NHWC
    if (workspace == nullptr || workspace_bytes < kWsBytes)
        return CG_BAD_WORKSPACE;
#else
    (void)workspace; (void)workspace_bytes;
#endif
    if (n_in != kNin || n_out != 1)
        return CG_UNSUPPORTED;
    if (!cgr::output_fits(out[0], CG_FLOAT32, CGR_OUT_NDIM, kOutShape))
        return CG_UNSUPPORTED;
    Params p{};
    if (!inputs_fit(in, p))
        return CG_UNSUPPORTED;
    if (int64_t(kM) * kN == 0)
        return CG_OK;
    p.out = static_cast<float *>(out[0].data);
#ifdef CGR_PREFOLD
    cgr_prefold::run(p, fold, stream);
#endif
#if CGR_WGMMA
    return wg::launch(p, workspace, stream);
#else
#if CGR_TRANSPOSED
    if (kK > 0) {
        float *wt = static_cast<float *>(workspace);
        transpose_weight<<<unsigned((int64_t(kCout) * kK + kTransThreads - 1) / kTransThreads), kTransThreads, 0, stream>>>(
            p.in[CGR_W], wt);
        p.wt = wt;
    }
#endif
#if CGR_NHWC
    {
        float *xs = static_cast<float *>(workspace), *ws = xs + kXsElems;
        const dim3 grid(unsigned((kPlane64 + 31) / 32), unsigned((kCp + 31) / 32), unsigned(kNb));
        static_assert((kPlane64 + 31) / 32 < (int64_t(1) << 31) && kNb < 65536, "to_nhwc's grid");
        to_nhwc<<<grid, 256, 0, stream>>>(p.in[CGR_X], xs);
        weight_nhwc<<<unsigned((int64_t(kN) * kKg + 255) / 256), 256, 0, stream>>>(p.in[CGR_W], ws);
        p.xs = xs;
        p.ws = ws;
    }
#endif
    constexpr int64_t tiles = int64_t((kMRows + kBM - 1) / kBM) * ((kN + kBN - 1) / kBN) * kG;
    static_assert(tiles < (int64_t(1) << 31), "grid limits");
    if (kSmemBytes > 48 * 1024 &&
        cudaFuncSetAttribute(conv_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes) !=
            cudaSuccess)
        return CG_LAUNCH_FAILED;
    conv_kernel<<<unsigned(tiles), kThreads, kSmemBytes, stream>>>(p);
    if (cudaGetLastError() != cudaSuccess)
        return CG_LAUNCH_FAILED;
    return CG_OK;
#endif  // CGR_WGMMA
}
#endif  // CGR_CONV_EMULATE
