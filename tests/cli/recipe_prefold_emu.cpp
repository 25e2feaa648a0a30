// tests/cli/recipe_prefold_emu.cpp: runs the fold of a kernel generated with CGR_PREFOLD (a
// mean or sum over some of a transposed convolution's output dims; recipes/conv_fold.cuh) on
// the host and checks it against the convolution itself: for random x and w, XF and WF made
// element by element through the template's xf_value and wf_value, then the transposed
// convolution of the geometry the generator wrote (CGR_CIN, CGR_I*, CGR_K*, ... : the folded
// dims of size 1; CGR_FLIP's padding taken back to the transposed one's) over XF and WF, against the direct transposed convolution of the original
// geometry (CGR_PF_*) summed over the folded dims (and divided by their size for a mean), in
// double. The epilogue is not part of it (the GPU tests run it).
//
// Built by tests/cli/t0714-recipe-prefold-emu.sh with a host C++ compiler:
//   c++ -std=c++17 -DCGR_KERNEL='"gen.cu"' -I include -I CUTLASS -I CUDA/include this.cpp
// Exit 0 when every output matches to 1e-5 (relative to the sum of |terms|), 1 otherwise.
#include <cutegen/abi.h>
#include <cute/tensor.hpp>
#include <cuda_fp16.h>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

template <class T> inline T __ldg(const T *p) { return *p; }  // the templates' loads, on the host

#define CGR_CONV_EMULATE 1
#define CGR_DIRECT_EMULATE 1
#include CGR_KERNEL

#ifndef CGR_PREFOLD
#error "the kernel does not fold (no CGR_PREFOLD)"
#endif
#ifndef CGR_GROUPS
#define CGR_GROUPS 1
#endif
// conv_fold.cuh is inlined in the template's namespace (cgr_conv or cgr_direct)
namespace cgr_conv { namespace cgr_prefold {} }
namespace cgr_direct { namespace cgr_prefold {} }
using namespace cgr_conv::cgr_prefold;
using namespace cgr_direct::cgr_prefold;

namespace {

struct Geometry {
    int cin, in[3], k[3], out[3], s[3], p[3], d[3];
};

// y[n][co][o] += x[n][ci][i] w[ci][co % coutg][t] for o = i*s - p + t*d inside the output
// (PyTorch's transposed convolution, groups as it has them), in double.
std::vector<double> conv_transposed(const Geometry &g, int nb, int cout, int groups, const std::vector<double> &x,
                                    const std::vector<double> &w, std::vector<double> *mag)
{
    const int cing = g.cin / groups, coutg = cout / groups;
    const long pin = long(g.in[0]) * g.in[1] * g.in[2], pout = long(g.out[0]) * g.out[1] * g.out[2];
    const int taps = g.k[0] * g.k[1] * g.k[2];
    std::vector<double> y(size_t(nb) * cout * pout, 0.0);
    mag->assign(y.size(), 0.0);
    for (int n = 0; n < nb; ++n)
        for (int ci = 0; ci < g.cin; ++ci)
            for (int co = (ci / cing) * coutg; co < (ci / cing + 1) * coutg; ++co)
                for (long i = 0; i < pin; ++i) {
                    const int i0 = int(i / (long(g.in[1]) * g.in[2])), i1 = int(i / g.in[2] % g.in[1]), i2 = int(i % g.in[2]);
                    const double xv = x[(size_t(n) * g.cin + ci) * pin + i];
                    for (int t = 0; t < taps; ++t) {
                        const int t0 = t / (g.k[1] * g.k[2]), t1 = t / g.k[2] % g.k[1], t2 = t % g.k[2];
                        const int o0 = i0 * g.s[0] - g.p[0] + t0 * g.d[0], o1 = i1 * g.s[1] - g.p[1] + t1 * g.d[1],
                                  o2 = i2 * g.s[2] - g.p[2] + t2 * g.d[2];
                        if (o0 < 0 || o0 >= g.out[0] || o1 < 0 || o1 >= g.out[1] || o2 < 0 || o2 >= g.out[2])
                            continue;
                        const double term = xv * w[(size_t(ci) * coutg + co % coutg) * taps + t];
                        const size_t at = (size_t(n) * cout + co) * pout + (long(o0) * g.out[1] + o1) * g.out[2] + o2;
                        y[at] += term;
                        (*mag)[at] += std::fabs(term);
                    }
                }
    return y;
}

}  // namespace

int main()
{
    std::mt19937 rng(20261206);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const Geometry own = { CGR_PF_CIN, { CGR_PF_ID, CGR_PF_IH, CGR_PF_IW }, { CGR_PF_KD, CGR_PF_KH, CGR_PF_KW },
                           { CGR_PF_OD, CGR_PF_OH, CGR_PF_OW }, { CGR_PF_SD, CGR_PF_SH, CGR_PF_SW },
                           { CGR_PF_PD, CGR_PF_PH, CGR_PF_PW }, { CGR_PF_DD, CGR_PF_DH, CGR_PF_DW } };
    Geometry fold = { CGR_CIN, { CGR_ID, CGR_IH, CGR_IW }, { CGR_KD, CGR_KH, CGR_KW }, { CGR_OD, CGR_OH, CGR_OW },
                            { CGR_SD, CGR_SH, CGR_SW }, { CGR_PD, CGR_PH, CGR_PW }, { CGR_DD, CGR_DH, CGR_DW } };
#if defined(CGR_FLIP) && CGR_FLIP
    // a stride-1 transposed convolution written as the forward one (src/recipe_conv.c as_forward)
    for (int d = 0; d < 3; ++d)
        fold.p[d] = fold.d[d] * (fold.k[d] - 1) - fold.p[d];
#endif
    const int nb = CGR_NB, cout = CGR_COUT, groups = CGR_GROUPS;
    const long pin = long(own.in[0]) * own.in[1] * own.in[2];
    const int taps = own.k[0] * own.k[1] * own.k[2];
    std::vector<float> xs(size_t(nb) * own.cin * pin), ws(size_t(own.cin) * (cout / groups) * taps);
    for (auto &v : xs)
        v = float(u(rng));
    for (auto &v : ws)
        v = float(u(rng));
    // the reference: the convolution, summed over the folded dims
    std::vector<double> mag;
    const std::vector<double> y = conv_transposed(own, nb, cout, groups, std::vector<double>(xs.begin(), xs.end()),
                                                  std::vector<double>(ws.begin(), ws.end()), &mag);
    const long pout = long(own.out[0]) * own.out[1] * own.out[2], pfold = long(fold.out[0]) * fold.out[1] * fold.out[2];
    std::vector<double> ref(size_t(nb) * cout * pfold, 0.0), refmag(ref.size(), 0.0);
    double count = 1;
    for (int d = 0; d < 3; ++d)
        count *= folded(d) ? own.out[d] : 1;
    for (size_t r = 0; r < size_t(nb) * cout; ++r)
        for (long o = 0; o < pout; ++o) {
            int oc[3] = { int(o / (long(own.out[1]) * own.out[2])), int(o / own.out[2] % own.out[1]), int(o % own.out[2]) };
            for (int d = 0; d < 3; ++d)
                oc[d] = folded(d) ? 0 : oc[d];
            const size_t at = r * pfold + (long(oc[0]) * fold.out[1] + oc[1]) * fold.out[2] + oc[2];
            ref[at] += y[r * pout + o] / (CGR_PF_MEAN ? count : 1.0);
            refmag[at] += mag[r * pout + o] / (CGR_PF_MEAN ? count : 1.0);
        }
    // the template's fold, then the convolution the generator wrote over it
    std::vector<double> xf(kXf), wf(kWf);
    for (int64_t i = 0; i < kXf; ++i)
        xf[size_t(i)] = xf_value(xs.data(), i);
    for (int64_t i = 0; i < kWf; ++i)
        wf[size_t(i)] = wf_value(ws.data(), i);
    std::vector<double> mag2;
    const std::vector<double> got = conv_transposed(fold, nb, cout, groups, xf, wf, &mag2);
    if (got.size() != ref.size()) {
        fprintf(stderr, "emu: the folded convolution has %zu outputs, the reduction %zu\n", got.size(), ref.size());
        return 1;
    }
    int bad = 0;
    double worst = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        const double err = std::fabs(got[i] - ref[i]) / (refmag[i] + 1e-30);
        worst = err > worst ? err : worst;
        if (err > 1e-5 && bad++ < 5)
            fprintf(stderr, "emu: output %zu: folded %.9g, reference %.9g\n", i, got[i], ref[i]);
    }
    printf("%zu outputs, %d cells (%d x %d x %d), CIN %d -> %d, worst relative error %.2e, %d wrong\n", ref.size(),
           kCells, cells_d(0), cells_d(1), cells_d(2), own.cin, fold.cin, worst, bad);
    return bad ? 1 : 0;
}
