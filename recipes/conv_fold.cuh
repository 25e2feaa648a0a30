// recipes/conv_fold.cuh: a transposed convolution summed over some of its output's dims,
// folded into its input and weight (inlined by conv_mean.cu, conv_tc.cu, conv_direct.cu).
//
// Output pixel o of a transposed convolution receives x[i] w[k] exactly where o = i*stride
// - pad + k*dil lies in [0, out). Along each dim the input indices tap k reaches are an
// interval [tap_lo, tap_hi]; only a few leading and trailing indices are missed by some
// tap (none without padding). So each dim's indices fall into cells: each of those border
// indices a cell of its own, the ones between them (every tap reaches them) one cell, and
// a cell lies wholly inside or wholly outside each tap's interval (Cells below).
//
// Summed over all the output's pixels that is conv_mean.cu's fold. Summed over some dims
// only (CGR_PREFOLD; level 2 #13: the mean over the depth of a ConvTranspose3d), it is a
// transposed convolution over the other dims with CIN x cells input channels:
//   sum_{o_R} y[n, co, o_R, o_K] = sum_{ci, cell} sum_{k_K} XF[n, ci*cells + cell, i_K] WF[ci*cells + cell, co, k_K]
// with XF the sum of x[n, ci] over the cell's indices along the folded dims R (at each
// kept index i_K) and WF the sum of the weight's taps along R that reach the cell (at each
// kept tap k_K), divided by the folded output's size: the convolution over them is the
// mean over R, so that an epilogue affine in the convolution before the reduction (pre:
// its bias, a scale) commutes with it; for a sum (CGR_PF_MEAN 0) the generator's cgr_epi
// multiplies pre's value by that size (sum pre(y) = size x pre(mean y)). run() writes XF and
// WF into the workspace and points the kernel's x and weight at them; the template then
// runs the convolution the generator wrote its geometry for (CGR_CIN = CGR_PF_CIN x cells,
// the folded dims of size 1), the original geometry being CGR_PF_*.
//
// Without CGR_PREFOLD only Cells is defined. With CGR_CONV_EMULATE, CGR_DIRECT_EMULATE or
// CGR_MEAN_EMULATE, the math (Cells, xf_value, wf_value) compiles for the host
// (tests/cli/recipe_mean_emu.cpp, recipe_prefold_emu.cpp) and the kernels are left out.

#if defined(CGR_CONV_EMULATE) || defined(CGR_DIRECT_EMULATE) || defined(CGR_MEAN_EMULATE)
#define CGR_FOLD_HOST_ONLY 1
#define CGR_FX
#else
#define CGR_FX __host__ __device__
#endif

namespace cgr_fold {

// A transposed convolution's geometry along dim d (0 D, 1 H, 2 W), from the template's
// CGR_ID, CGR_IH, ... (or CGR_PF_ID, ...) in that order.
template <int ID, int IH, int IW, int KD, int KH, int KW, int OD, int OH, int OW, int SD, int SH, int SW, int PD,
          int PH, int PW, int DD, int DH, int DW>
struct Geometry {
    CGR_FX static constexpr int in(int d) { return d == 0 ? ID : d == 1 ? IH : IW; }
    CGR_FX static constexpr int k(int d) { return d == 0 ? KD : d == 1 ? KH : KW; }
    CGR_FX static constexpr int out(int d) { return d == 0 ? OD : d == 1 ? OH : OW; }
    CGR_FX static constexpr int stride(int d) { return d == 0 ? SD : d == 1 ? SH : SW; }
    CGR_FX static constexpr int pad(int d) { return d == 0 ? PD : d == 1 ? PH : PW; }
    CGR_FX static constexpr int dil(int d) { return d == 0 ? DD : d == 1 ? DH : DW; }
};

// G: a Geometry.
template <class G> struct Cells {
    // The input indices along d whose tap k lands inside the output: [tap_lo, tap_hi],
    // empty when tap_lo > tap_hi.
    CGR_FX static constexpr int tap_lo(int d, int k)
    {
        const int num = G::pad(d) - k * G::dil(d);
        return num <= 0 ? 0 : (num + G::stride(d) - 1) / G::stride(d);
    }
    CGR_FX static constexpr int tap_hi(int d, int k)
    {
        const int num = G::out(d) - 1 + G::pad(d) - k * G::dil(d);
        const int hi = num < 0 ? -1 : num / G::stride(d);
        return hi < G::in(d) - 1 ? hi : G::in(d) - 1;
    }
    // The leading and trailing indices along d some tap misses: each its own cell.
    CGR_FX static constexpr int lead(int d)
    {
        int a = 0;
        for (int k = 0; k < G::k(d); ++k)
            a = tap_lo(d, k) > a ? tap_lo(d, k) : a;
        return a;
    }
    CGR_FX static constexpr int trail(int d)
    {
        int b = 0;
        for (int k = 0; k < G::k(d); ++k)
            b = G::in(d) - 1 - tap_hi(d, k) > b ? G::in(d) - 1 - tap_hi(d, k) : b;
        return b;
    }
    CGR_FX static constexpr int cells(int d) { return lead(d) + trail(d) + 1; }
    CGR_FX static constexpr int cell_of(int d, int i)
    {
        return i < lead(d) ? i : i >= G::in(d) - trail(d) ? lead(d) + 1 + (i - (G::in(d) - trail(d))) : lead(d);
    }
    // The indices of cell c along d: [first, last].
    CGR_FX static constexpr int first(int d, int c)
    {
        return c <= lead(d) ? c : G::in(d) - trail(d) + (c - lead(d) - 1);
    }
    CGR_FX static constexpr int last(int d, int c) { return c == lead(d) ? G::in(d) - trail(d) - 1 : first(d, c); }
    // Whether cell c along d lies in the interval of input indices tap k reaches.
    CGR_FX static constexpr bool in_box(int d, int c, int k)
    {
        return tap_lo(d, k) <= tap_hi(d, k) && cell_of(d, tap_lo(d, k)) <= c && c <= cell_of(d, tap_hi(d, k));
    }
};

}  // namespace cgr_fold

#ifdef CGR_PREFOLD
namespace cgr_prefold {

// The convolution's own geometry (the generator's CGR_I*, CGR_K*... are the folded one).
using Geo = cgr_fold::Geometry<CGR_PF_ID, CGR_PF_IH, CGR_PF_IW, CGR_PF_KD, CGR_PF_KH, CGR_PF_KW, CGR_PF_OD, CGR_PF_OH,
                               CGR_PF_OW, CGR_PF_SD, CGR_PF_SH, CGR_PF_SW, CGR_PF_PD, CGR_PF_PH, CGR_PF_PW, CGR_PF_DD,
                               CGR_PF_DH, CGR_PF_DW>;
using Cell = cgr_fold::Cells<Geo>;

// CGR_PF_MASK bit d: dim d (0 D, 1 H, 2 W) folded.
CGR_FX constexpr bool folded(int d) { return (CGR_PF_MASK >> d) & 1; }
CGR_FX constexpr int cells_d(int d) { return folded(d) ? Cell::cells(d) : 1; }
CGR_FX constexpr int kept_in(int d) { return folded(d) ? 1 : Geo::in(d); }
CGR_FX constexpr int kept_k(int d) { return folded(d) ? 1 : Geo::k(d); }

#ifdef CGR_GROUPS
constexpr int kG = CGR_GROUPS;
#else
constexpr int kG = 1;
#endif
constexpr int kCells = cells_d(0) * cells_d(1) * cells_d(2);
constexpr int kCin = CGR_PF_CIN, kCoutG = CGR_COUT / kG;
constexpr int64_t kPlaneIn = int64_t(Geo::in(0)) * Geo::in(1) * Geo::in(2);
constexpr int64_t kPlane = int64_t(kept_in(0)) * kept_in(1) * kept_in(2);  // XF's plane
constexpr int kTaps = Geo::k(0) * Geo::k(1) * Geo::k(2), kTapsKept = kept_k(0) * kept_k(1) * kept_k(2);
constexpr int64_t kXf = int64_t(CGR_NB) * kCin * kCells * kPlane;  // floats
constexpr int64_t kWf = int64_t(kCin) * kCoutG * kCells * kTapsKept;
constexpr size_t kBytes = (size_t(kXf + kWf) * sizeof(float) + 255) / 256 * 256;
// the folded output's size, divided out in WF (the mean; a sum's cgr_epi multiplies it back)
constexpr int64_t kCount = int64_t(folded(0) ? Geo::out(0) : 1) * (folded(1) ? Geo::out(1) : 1) * (folded(2) ? Geo::out(2) : 1);
constexpr float kScale = 1.f / float(kCount);
static_assert(CGR_CIN == kCin * kCells, "the generator's channels are CIN x cells");
static_assert(CGR_PF_MASK > 0 && CGR_PF_MASK < 8, "some dims folded");
static_assert(CGR_ID == kept_in(0) && CGR_IH == kept_in(1) && CGR_IW == kept_in(2), "folded dims of size 1");
static_assert(CGR_KD == kept_k(0) && CGR_KH == kept_k(1) && CGR_KW == kept_k(2), "folded taps of size 1");

CGR_FX inline float load(const float *p)
{
#if defined(__CUDA_ARCH__)
    return __ldg(p);
#else
    return *p;
#endif
}

// XF[n][ci*cells + cell][kept pixel q]: x[n, ci] summed over the cell's folded indices.
CGR_FX inline float xf_value(const float *x, int64_t idx)
{
    const int64_t q = idx % kPlane, row = idx / kPlane;
    const int cell = int(row % kCells);
    const int64_t plane = row / kCells;  // n*CIN + ci
    const int q2 = int(q % kept_in(2)), q1 = int(q / kept_in(2) % kept_in(1)), q0 = int(q / (int64_t(kept_in(2)) * kept_in(1)));
    const int c2 = cell % cells_d(2), c1 = cell / cells_d(2) % cells_d(1), c0 = cell / (cells_d(2) * cells_d(1));
    const int lo0 = folded(0) ? Cell::first(0, c0) : q0, hi0 = folded(0) ? Cell::last(0, c0) : q0;
    const int lo1 = folded(1) ? Cell::first(1, c1) : q1, hi1 = folded(1) ? Cell::last(1, c1) : q1;
    const int lo2 = folded(2) ? Cell::first(2, c2) : q2, hi2 = folded(2) ? Cell::last(2, c2) : q2;
    const float *xp = x + plane * kPlaneIn;
    float s = 0.f;
    for (int i0 = lo0; i0 <= hi0; ++i0)
        for (int i1 = lo1; i1 <= hi1; ++i1) {
            const float *r = xp + (int64_t(i0) * Geo::in(1) + i1) * Geo::in(2);
            for (int i2 = lo2; i2 <= hi2; ++i2)
                s += load(r + i2);
        }
    return s;
}

// WF[ci*cells + cell][co][kept tap t]: the weight's taps along the folded dims that reach
// the cell, summed (the weight is [CIN][COUT/groups][KD][KH][KW]), over kCount.
CGR_FX inline float wf_value(const float *w, int64_t idx)
{
    const int t = int(idx % kTapsKept);
    const int64_t r = idx / kTapsKept;
    const int co = int(r % kCoutG);
    const int cell = int(r / kCoutG % kCells);
    const int64_t ci = r / kCoutG / kCells;
    const int t2 = t % kept_k(2), t1 = t / kept_k(2) % kept_k(1), t0 = t / (kept_k(2) * kept_k(1));
    const int c2 = cell % cells_d(2), c1 = cell / cells_d(2) % cells_d(1), c0 = cell / (cells_d(2) * cells_d(1));
    const float *wp = w + (ci * kCoutG + co) * kTaps;
    float s = 0.f;
    for (int k0 = folded(0) ? 0 : t0; k0 <= (folded(0) ? Geo::k(0) - 1 : t0); ++k0) {
        if (folded(0) && !Cell::in_box(0, c0, k0))
            continue;
        for (int k1 = folded(1) ? 0 : t1; k1 <= (folded(1) ? Geo::k(1) - 1 : t1); ++k1) {
            if (folded(1) && !Cell::in_box(1, c1, k1))
                continue;
            for (int k2 = folded(2) ? 0 : t2; k2 <= (folded(2) ? Geo::k(2) - 1 : t2); ++k2)
                if (!folded(2) || Cell::in_box(2, c2, k2))
                    s += load(wp + (k0 * Geo::k(1) + k1) * Geo::k(2) + k2);
        }
    }
    return s * kScale;
}

#ifndef CGR_FOLD_HOST_ONLY
__global__ void __launch_bounds__(256) fold_x(const float *x, float *xf)
{
    for (int64_t i = int64_t(blockIdx.x) * 256 + threadIdx.x; i < kXf; i += int64_t(gridDim.x) * 256)
        xf[i] = xf_value(x, i);
}

__global__ void __launch_bounds__(256) fold_w(const float *w, float *wf)
{
    for (int64_t i = int64_t(blockIdx.x) * 256 + threadIdx.x; i < kWf; i += int64_t(gridDim.x) * 256)
        wf[i] = wf_value(w, i);
}

// cg_forward's first step: the front kBytes of the workspace taken for XF and WF (false:
// too small), the rest left to the template.
inline bool take(void *&workspace, size_t &bytes, float *&fold)
{
    if (workspace == nullptr || bytes < kBytes || reinterpret_cast<uintptr_t>(workspace) % 256 != 0)
        return false;
    fold = static_cast<float *>(workspace);
    workspace = static_cast<char *>(workspace) + kBytes;
    bytes -= kBytes;
    return true;
}

// XF and WF into fold (take's), and the kernel's x and weight pointed at them.
template <class P> inline void run(P &p, float *fold, cudaStream_t stream)
{
    float *xf = fold, *wf = fold + kXf;
    const int64_t xb = (kXf + 255) / 256, wb = (kWf + 255) / 256;
    fold_x<<<unsigned(xb < 132 * 16 ? xb : 132 * 16), 256, 0, stream>>>(p.in[CGR_X], xf);
    fold_w<<<unsigned(wb < 132 * 4 ? wb : 132 * 4), 256, 0, stream>>>(p.in[CGR_W], wf);
    p.in[CGR_X] = xf;
    p.in[CGR_W] = wf;
}
#endif  // CGR_FOLD_HOST_ONLY

}  // namespace cgr_prefold
#define CGR_PREFOLD_BYTES cgr_prefold::kBytes
#else
#define CGR_PREFOLD_BYTES size_t(0)
#endif  // CGR_PREFOLD
