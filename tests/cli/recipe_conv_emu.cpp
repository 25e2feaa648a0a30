// tests/cli/recipe_conv_emu.cpp: runs the channels-last index math of a kernel generated
// from recipes/conv_tc.cu (CGR_NHWC) on the host and checks a whole small convolution
// computed through it against a direct one, so that the template's own copies of x and
// the weight into the workspace (x_index, xs_index, nhwc_w_src: what to_nhwc and
// weight_nhwc do), its rows' corners (nhwc_row), its columns' taps (nhwc_tap), the
// chunks' bounds and sources (nhwc_reads, base + koff) and the epilogue's row split (row_pixel) are
// tested without a GPU, in both the convolution and the flipped form of a stride-1
// transposed convolution (CGR_FLIP), and, for Hopper's kernel, a strided transposed one in
// sub-pixel phases (CGR_PHASES: its rows' corners Q through nhwc_row, its taps through
// nhwc_phase_tap, each phase's weight block through nhwc_phase_w_src at nhwc_phase_woff).
//
// How: x and w random; xs and ws filled the way to_nhwc and weight_nhwc fill them (every
// element of xs written once, the padded channels 0); then for every row m of the GEMM and
// every 16-byte chunk (4 columns) the chunk is read from xs where nhwc_reads says so (zeros
// otherwise), multiplied with ws in double, and the sum stored where row_pixel puts it. The
// reference: a direct convolution in gather form, or, for CGR_FLIP, a direct transposed
// convolution in scatter form (PyTorch's definition: y[o] += x[i] w[c, co, kk] for
// o = i - pad + kk*dil), its padding recovered from the generated one (dil*(k-1) - pad);
// with phases, o = i*stride - pad + kk*dil.
//
// Built by tests/cli/t0707-recipe-conv-emu.sh with a host C++ compiler:
//   c++ -std=c++17 -DCGR_KERNEL='"gen.cu"' -I include -I CUTLASS -I CUDA/include this.cpp
// Exit 0 when every output matches to 1e-9 (relative to the sum of |terms|), 1 otherwise.
#include <cutegen/abi.h>
#include <cute/tensor.hpp>
#include <cuda_fp16.h>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

template <class T> inline T __ldg(const T *p) { return *p; }

#define CGR_CONV_EMULATE 1
#include CGR_KERNEL

using namespace cgr_conv;

static_assert(kNhwc, "the emulator checks the channels-last form (CGR_NHWC 1)");

int main()
{
    std::mt19937 rng(20261204);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const int64_t nx = int64_t(kNb) * kCin * kPlane64, nw = int64_t(kCout) * kCin * kTaps;
    const int64_t ny = int64_t(kNb) * kCout * kP64;
    std::vector<double> x(nx), w(nw), y(ny, 0.0), ref(ny, 0.0), mag(ny, 0.0);
    for (auto &v : x)
        v = u(rng);
    for (auto &v : w)
        v = u(rng);

    // the workspace copies, as to_nhwc and weight_nhwc make them
    std::vector<double> xs(kXsElems, NAN), ws(int64_t(kN) * kKg, NAN);
    std::vector<int> hit(nx, 0);
    for (int nb = 0; nb < kNb; ++nb)
        for (int64_t pix = 0; pix < kPlane64; ++pix)
            for (int c = 0; c < kCp; ++c) {
                const int64_t d = xs_index(nb, pix, c);
                if (d < 0 || d >= kXsElems || !std::isnan(xs[d])) {
                    std::printf("FAIL: xs_index(%d, %lld, %d) = %lld out of range or written twice\n", nb,
                                (long long)pix, c, (long long)d);
                    return 1;
                }
                xs[d] = c < kCin ? x[x_index(nb, c, pix)] : 0.0;
                if (c < kCin)
                    hit[x_index(nb, c, pix)]++;
            }
    for (int64_t i = 0; i < nx; ++i)
        if (hit[i] != 1) {
            std::printf("FAIL: x[%lld] copied %d times into xs\n", (long long)i, hit[i]);
            return 1;
        }
    std::vector<int> whit(nw, 0);
    if constexpr (kPhases) {
        // each phase's block [COUT][KP_r] at nhwc_phase_woff (zeros past K_r)
        ws.assign(nhwc_phase_woff(kR), NAN);
        for (int r = 0; r < kR; ++r)
            for (int co = 0; co < kN; ++co)
                for (int k = 0; k < nhwc_phase_kp(r); ++k) {
                    const int64_t s = k < nhwc_phase_k(r) ? nhwc_phase_w_src(r, co, k) : -1;
                    const int64_t d = nhwc_phase_woff(r) + int64_t(co) * nhwc_phase_kp(r) + k;
                    if (s >= nw || d >= int64_t(ws.size()) || !std::isnan(ws[d])) {
                        std::printf("FAIL: phase %d weight (%d, %d): source %lld, at %lld\n", r, co, k, (long long)s,
                                    (long long)d);
                        return 1;
                    }
                    ws[d] = s >= 0 ? w[s] : 0.0;
                    if (s >= 0)
                        whit[s]++;
                }
    } else {
        for (int co = 0; co < kN; ++co)
            for (int k = 0; k < kKg; ++k) {
                const int64_t s = nhwc_w_src(co, k);
                if (s >= nw) {
                    std::printf("FAIL: nhwc_w_src(%d, %d) = %lld past the weight\n", co, k, (long long)s);
                    return 1;
                }
                ws[int64_t(co) * kKg + k] = s >= 0 ? w[s] : 0.0;
                if (s >= 0)
                    whit[s]++;
            }
    }
    for (int64_t i = 0; i < nw; ++i)
        if (whit[i] != 1) {
            std::printf("FAIL: weight element %lld in ws %d times\n", (long long)i, whit[i]);
            return 1;
        }

    // the GEMM the kernel's way: rows over whole M tiles (the tail's rows read nothing);
    // with phases, over every phase's box of whole tiles, a row's K its phase's
    const int m_rows = kPhases ? kMRows : (kM + kBM - 1) / kBM * kBM;
    std::vector<double> a(kKg + 64);
    int64_t chunks = 0;
    for (int m = 0; m < m_rows; ++m) {
        const NhwcRow r = nhwc_row(m);
        const int phase = kPhases ? m / (kTilesPerPhase * kBM) : 0;
        const PhaseTaps pt = phase_taps(phase);
        const int kk = kPhases ? nhwc_phase_k(phase) : kKg;            // the row's K
        const int kspan = kPhases ? nhwc_phase_kp(phase) : (kKg + kBK - 1) / kBK * kBK;
        const int64_t wrow = kPhases ? nhwc_phase_woff(phase) : 0;     // its weight block
        const int ldw = kPhases ? nhwc_phase_kp(phase) : kKg;
        for (int k = 0; k < kspan; k += 4) {
            const NhwcTap t = kPhases ? nhwc_phase_tap(pt, k) : nhwc_tap(k);
            const bool ok = nhwc_reads(r, t, k);
            const int64_t off = r.base + t.koff;
            RowPix live;
            if (ok && (!(kPhases ? row_pixel(m, live) : m < kM) || k >= kk || off < 0 || off + 4 > kXsElems || off % kCp != k % kCp)) {
                std::printf("FAIL: row %d column %d reads xs at %lld\n", m, k, (long long)off);
                return 1;
            }
            if (k < kk)
                for (int j = 0; j < 4; ++j)
                    a[k + j] = ok ? xs[off + j] : 0.0;
            chunks += ok;
        }
        RowPix rp;
        if (!row_pixel(m, rp))
            continue;
        for (int co = 0; co < kN; ++co) {
            double s = 0;
            for (int k = 0; k < kk; ++k)
                s += a[k] * ws[wrow + int64_t(co) * ldw + k];
            y[(int64_t(rp.nb) * kCout + co) * kP + rp.pix] += s;
        }
    }

    // the direct form
    const int in[3] = { kID, kIH, kIW }, ks[3] = { kKD, kKH, kKW }, out[3] = { kOD, kOH, kOW };
    const int st[3] = { kSD, kSH, kSW }, pd[3] = { kPD, kPH, kPW }, dl[3] = { kDD, kDH, kDW };
    for (int nb = 0; nb < kNb; ++nb)
        for (int co = 0; co < kCout; ++co)
            for (int c = 0; c < kCin; ++c)
                for (int t = 0; t < kTaps; ++t) {
                    const int kk[3] = { t / (kKH * kKW), t / kKW % kKH, t % kKW };
                    for (int64_t o = 0; o < kP64; ++o) {
                        const int oo[3] = { int(o / (kOH * kOW)), int(o / kOW % kOH), int(o % kOW) };
                        int ii[3];
                        bool inside = true;
                        for (int d = 0; d < 3; ++d) {
                            // convolution: i = o*s - p + kk*dil; transposed (stride 1, its
                            // padding P = dil*(k-1) - p): o = i - P + kk*dil, so i = o + P - kk*dil
                            // phases (strided transposed): o = i*s - p + kk*dil, i whole
                            const int u = oo[d] + pd[d] - kk[d] * dl[d];
                            ii[d] = CGR_FLIP ? oo[d] + (dl[d] * (ks[d] - 1) - pd[d]) - kk[d] * dl[d]
                                    : kPhases ? (u >= 0 && u % st[d] == 0 ? u / st[d] : -1)
                                              : oo[d] * st[d] - pd[d] + kk[d] * dl[d];
                            inside = inside && ii[d] >= 0 && ii[d] < in[d];
                        }
                        if (!inside)
                            continue;
                        const double xv = x[x_index(nb, c, (int64_t(ii[0]) * kIH + ii[1]) * kIW + ii[2])];
                        const double wv = CGR_FLIP || kPhases ? w[(int64_t(c) * kCout + co) * kTaps + t]
                                                   : w[(int64_t(co) * kCin + c) * kTaps + t];
                        const int64_t yi = (int64_t(nb) * kCout + co) * kP64 + o;
                        ref[yi] += xv * wv;
                        mag[yi] += std::fabs(xv * wv);
                    }
                }
    (void)out;
    int64_t bad = 0;
    for (int64_t i = 0; i < ny; ++i)
        if (std::fabs(y[i] - ref[i]) > 1e-9 * (1.0 + mag[i]) && bad++ < 5)
            std::printf("y[%lld] = %.17g, direct %.17g\n", (long long)i, y[i], ref[i]);
    if (bad) {
        std::printf("FAIL: %lld of %lld outputs wrong\n", (long long)bad, (long long)ny);
        return 1;
    }
    std::printf("%lld outputs match (M %d, N %d, K %d padded from %lld, %lld chunks read)\n", (long long)ny, kM, kN,
                kKg, (long long)kK64, (long long)chunks);
    return 0;
}
