// tests/cli/recipe_prefold_emu.cpp: runs the fold of a kernel generated with CGR_PREFOLD (a
// mean or sum over some of a transposed convolution's output dims; recipes/conv_fold.cuh) on
// the host and checks it against the convolution itself: for random x and w, XF and WF made
// element by element through the template's xf_value and wf_value, then the transposed
// convolution of the geometry the generator wrote (CGR_CIN, CGR_I*, CGR_K*, ... : the folded
// dims of size 1; CGR_FLIP's padding taken back to the transposed one's) over XF and WF,
// against the direct transposed convolution of the original geometry (CGR_PF_*) averaged
// over the folded dims, in double; then the generated epilogue (cgr_epi) on each folded
// value against the model's: cgr_pf_pre on every output of the convolution, summed or
// averaged over the folded dims, then cgr_pf_post (a sum's pre counts a bias once an
// output, not once: session 31's first GPU run of a sum with a bias was wrong by that).
//
// Built by tests/cli/t0714-recipe-prefold-emu.sh with a host C++ compiler:
//   c++ -std=c++17 -DCGR_KERNEL='"gen.cu"' -I include -I CUTLASS -I CUDA/include this.cpp
// Exit 0 when every output matches to 1e-5 (relative to the sum of |terms|) and to 1e-4
// through the epilogue, 1 otherwise.
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
#ifndef CGR_CV_UNUSED  // conv_inputs.cuh's kinds (conv_direct.cu leaves it out when emulated)
#define CGR_CV_UNUSED 0
#define CGR_CV_OPERAND 1
#define CGR_CV_FULL 2
#define CGR_CV_SCALAR 3
#define CGR_CV_CHAN 4
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
    // every input of the spec, random; x and the weight among them
    const int ndims[] = CGR_IN_NDIMS;
    const int64_t shapes[][CG_MAX_DIMS] = CGR_IN_SHAPES;
    int kinds[CGR_NIN];
#define CGR_KIND_OF(i, k) kinds[i] = k;
    CGR_INPUTS(CGR_KIND_OF)
#undef CGR_KIND_OF
    std::vector<std::vector<float>> in(CGR_NIN);
    for (int i = 0; i < CGR_NIN; ++i) {
        size_t n = 1;
        for (int d = 0; d < ndims[i]; ++d)
            n *= size_t(shapes[i][d]);
        in[i].resize(n);
        for (auto &v : in[i])
            v = float(u(rng));
    }
    const std::vector<float> &xs = in[CGR_X], &ws = in[CGR_W];
    // the epilogue's inputs at output element idx of channel c
    auto inputs_at = [&](size_t idx, int c, float *v) {
        for (int i = 0; i < CGR_NIN; ++i)
            v[i] = kinds[i] == CGR_CV_FULL     ? in[i][idx]
                   : kinds[i] == CGR_CV_SCALAR ? in[i][0]
                   : kinds[i] == CGR_CV_CHAN   ? in[i][size_t(c)]
                                               : 0.f;
    };
    // the reference: the convolution; pre on each of its outputs (in the epilogue before the
    // reduction: scalars and values a channel), reduced over the folded dims, then post
    std::vector<double> mag;
    const std::vector<double> y = conv_transposed(own, nb, cout, groups, std::vector<double>(xs.begin(), xs.end()),
                                                  std::vector<double>(ws.begin(), ws.end()), &mag);
    const long pout = long(own.out[0]) * own.out[1] * own.out[2], pfold = long(fold.out[0]) * fold.out[1] * fold.out[2];
    std::vector<double> mean(size_t(nb) * cout * pfold, 0.0), meanmag(mean.size(), 0.0), pre(mean.size(), 0.0);
    double count = 1;
    for (int d = 0; d < 3; ++d)
        count *= folded(d) ? own.out[d] : 1;
    float xv[CGR_NIN > 0 ? CGR_NIN : 1];
    for (size_t r = 0; r < size_t(nb) * cout; ++r)
        for (long o = 0; o < pout; ++o) {
            int oc[3] = { int(o / (long(own.out[1]) * own.out[2])), int(o / own.out[2] % own.out[1]), int(o % own.out[2]) };
            for (int d = 0; d < 3; ++d)
                oc[d] = folded(d) ? 0 : oc[d];
            const size_t at = r * pfold + (long(oc[0]) * fold.out[1] + oc[1]) * fold.out[2] + oc[2];
            inputs_at(at, int(r % cout), xv);
            mean[at] += y[r * pout + o] / count;
            meanmag[at] += mag[r * pout + o] / count;
            pre[at] += double(cgr_pf_pre(float(y[r * pout + o]), xv)) / (CGR_PF_MEAN ? count : 1.0);
        }
    // the template's fold, then the convolution the generator wrote over it: the mean
    std::vector<double> xf(kXf), wf(kWf);
    for (int64_t i = 0; i < kXf; ++i)
        xf[size_t(i)] = xf_value(xs.data(), i);
    for (int64_t i = 0; i < kWf; ++i)
        wf[size_t(i)] = wf_value(ws.data(), i);
    std::vector<double> mag2;
    const std::vector<double> got = conv_transposed(fold, nb, cout, groups, xf, wf, &mag2);
    if (got.size() != mean.size()) {
        fprintf(stderr, "emu: the folded convolution has %zu outputs, the reduction %zu\n", got.size(), mean.size());
        return 1;
    }
    int bad = 0, bad_epi = 0;
    double worst = 0, worst_epi = 0;
    for (size_t i = 0; i < mean.size(); ++i) {
        const double err = std::fabs(got[i] - mean[i]) / (meanmag[i] + 1e-30);
        worst = err > worst ? err : worst;
        if (err > 1e-5 && bad++ < 5)
            fprintf(stderr, "emu: output %zu: folded %.9g, the mean %.9g\n", i, got[i], mean[i]);
        // the generated epilogue (cgr_epi) on the folded value against post of the reduced pre
        inputs_at(i, int(i / size_t(pfold) % size_t(cout)), xv);
        const double want = cgr_pf_post(float(pre[i]), xv), have = cgr_epi(float(got[i]), xv);
        const double e = std::fabs(have - want) / (std::fabs(want) + 1e-3);
        worst_epi = e > worst_epi ? e : worst_epi;
        if (e > 1e-4 && bad_epi++ < 5)
            fprintf(stderr, "emu: output %zu through the epilogue: %.9g, the model's %.9g\n", i, have, want);
    }
    printf("%zu outputs, %d cells (%d x %d x %d), CIN %d -> %d, %s: worst relative error %.2e (%d wrong), "
           "through the epilogue %.2e (%d wrong)\n", mean.size(), kCells, cells_d(0), cells_d(1), cells_d(2), own.cin,
           fold.cin, CGR_PF_MEAN ? "mean" : "sum", worst, bad, worst_epi, bad_epi);
    return bad || bad_epi ? 1 : 0;
}
