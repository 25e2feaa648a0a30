// tests/cli/recipe_mean_emu.cpp: runs the cell math of a kernel generated from
// recipes/conv_mean.cu (a mean or sum over a transposed convolution's pixels, folded) on
// the host and checks the fold against the convolution itself: for random x and w, the
// sum over the output pixels of the direct transposed convolution (PyTorch's definition,
// scattered in double) against sum_ci sum_cells X[n, ci, cell] W[ci, co, cell] computed
// as the template computes them: X a plane's rows split the way plane_cells splits them
// (the row's total, its single cells along W at single_w(s), the middle cell their
// difference, placed at cell_of along D and H), and also element by element through
// cell_of (the two must agree: single_w enumerates exactly the border indices); W the
// taps whose box (in_box along each dim, from tap_lo and tap_hi) holds the cell, taps
// enumerated as the weight kernel does.
//
// Built by tests/cli/t0713-recipe-mean-emu.sh with a host C++ compiler:
//   c++ -std=c++17 -DCGR_KERNEL='"gen.cu"' -I include -I CUDA/include this.cpp
// Exit 0 when every output matches to 1e-9 (relative to the sum of |terms|), 1 otherwise.
#include <cutegen/abi.h>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#define CGR_MEAN_EMULATE 1
#include CGR_KERNEL

using namespace cgr_mean;

int main()
{
    std::mt19937 rng(20261206);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const int in[3] = { CGR_ID, CGR_IH, CGR_IW }, kk[3] = { CGR_KD, CGR_KH, CGR_KW };
    const int out[3] = { CGR_OD, CGR_OH, CGR_OW }, st[3] = { CGR_SD, CGR_SH, CGR_SW };
    const int pd[3] = { CGR_PD, CGR_PH, CGR_PW }, dl[3] = { CGR_DD, CGR_DH, CGR_DW };
    std::vector<double> x(size_t(kNb) * kCin * kPlaneIn), w(size_t(kCin) * kCoutG * kTaps);
    for (auto &v : x)
        v = u(rng);
    for (auto &v : w)
        v = u(rng);
    int bad = 0;
    // the direct transposed convolution, summed over the output's pixels (and |terms|)
    std::vector<double> ref(size_t(kNb) * kCout, 0.0), mag(size_t(kNb) * kCout, 0.0);
    for (int n = 0; n < kNb; ++n)
        for (int ci = 0; ci < kCin; ++ci)
            for (int i0 = 0; i0 < in[0]; ++i0)
                for (int i1 = 0; i1 < in[1]; ++i1)
                    for (int i2 = 0; i2 < in[2]; ++i2) {
                        const double xv = x[((size_t(n) * kCin + ci) * in[0] + i0) * in[1] * in[2] + size_t(i1) * in[2] + i2];
                        const int g = ci / kCinG;
                        for (int col = 0; col < kCoutG; ++col)
                            for (int t = 0; t < kTaps; ++t) {
                                const int k0 = t / (kk[1] * kk[2]), k1 = t / kk[2] % kk[1], k2 = t % kk[2];
                                const int o0 = i0 * st[0] - pd[0] + k0 * dl[0], o1 = i1 * st[1] - pd[1] + k1 * dl[1],
                                          o2 = i2 * st[2] - pd[2] + k2 * dl[2];
                                if (o0 < 0 || o0 >= out[0] || o1 < 0 || o1 >= out[1] || o2 < 0 || o2 >= out[2])
                                    continue;
                                const double term = xv * w[(size_t(ci) * kCoutG + col) * kTaps + t];
                                ref[size_t(n) * kCout + g * kCoutG + col] += term;
                                mag[size_t(n) * kCout + g * kCoutG + col] += std::fabs(term);
                            }
                    }
    // single_w: every border index of a row once, in cell order
    for (int s = 0; s < kSingles; ++s)
        if (single_w(s) < 0 || single_w(s) >= kIW || Cell::cell_of(2, single_w(s)) == Cell::lead(2) ||
            (s > 0 && single_w(s) <= single_w(s - 1))) {
            fprintf(stderr, "emu: single_w(%d) = %d is not a border index in order\n", s, single_w(s));
            ++bad;
        }
    // X: plane_cells' split, and element by element
    std::vector<double> X(size_t(kRows) * kCells, 0.0), Xe(size_t(kRows) * kCells, 0.0);
    for (int64_t b = 0; b < kRows; ++b) {
        const double *plane = x.data() + b * kPlaneIn;
        for (int r = 0; r < kPlaneRows; ++r) {
            const double *row = plane + size_t(r) * kIW;
            double total = 0, singles = 0;
            for (int i = 0; i < kIW; ++i)
                total += row[i];
            const int base = (Cell::cell_of(0, r / CGR_IH) * kC1 + Cell::cell_of(1, r % CGR_IH)) * kC2;
            for (int s = 0; s < kSingles; ++s) {
                singles += row[single_w(s)];
                X[b * kCells + base + Cell::cell_of(2, single_w(s))] += row[single_w(s)];
            }
            X[b * kCells + base + Cell::lead(2)] += total - singles;
            for (int i = 0; i < kIW; ++i)
                Xe[b * kCells + base + Cell::cell_of(2, i)] += row[i];
        }
    }
    for (size_t i = 0; i < X.size(); ++i)
        if (std::fabs(X[i] - Xe[i]) > 1e-9 * (1.0 + std::fabs(Xe[i]))) {
            if (bad++ < 8)
                fprintf(stderr, "emu: plane cell %zu: split %.12g, element by element %.12g\n", i, X[i], Xe[i]);
        }
    // W: the taps reaching each cell, as the weight kernel enumerates them
    std::vector<double> W(size_t(kPairs) * kCells, 0.0);
    for (int64_t q = 0; q < kPairs; ++q)
        for (int c = 0; c < kCells; ++c) {
            const int c0 = c / (kC1 * kC2), c1 = c / kC2 % kC1, c2 = c % kC2;
            for (int t = 0; t < kTaps; ++t) {
                const int k0 = t / (CGR_KH * CGR_KW), k1 = t / CGR_KW % CGR_KH, k2 = t % CGR_KW;
                if (Cell::in_box(0, c0, k0) && Cell::in_box(1, c1, k1) && Cell::in_box(2, c2, k2))
                    W[q * kCells + c] += w[size_t(q) * kTaps + t];
            }
        }
    // out_kernel's sum
    double worst = 0;
    for (int n = 0; n < kNb; ++n)
        for (int co = 0; co < kCout; ++co) {
            const int g = co / kCoutG, col = co % kCoutG;
            double s = 0;
            for (int c = 0; c < kCinG; ++c) {
                const int64_t ci = int64_t(g) * kCinG + c;
                for (int cell = 0; cell < kCells; ++cell)
                    s += X[(int64_t(n) * kCin + ci) * kCells + cell] * W[(ci * kCoutG + col) * kCells + cell];
            }
            const size_t o = size_t(n) * kCout + co;
            const double err = std::fabs(s - ref[o]) / (1e-300 + mag[o]);
            worst = err > worst ? err : worst;
            if (!(err <= 1e-9) && bad++ < 16)
                fprintf(stderr, "emu: output (%d, %d): folded %.12g, direct %.12g\n", n, co, s, ref[o]);
        }
    printf("emu: %d outputs, %d x %d x %d cells a plane, max error %.3g relative to the terms, %d bad\n",
           kNb * kCout, kC0, kC1, kC2, worst, bad);
    return bad ? 1 : 0;
}
