// tests/cli/recipe_dw_emu.cpp: runs a kernel generated from recipes/conv_dw.cu (the depthwise
// convolution) on the host: every thread item (item_of) summed by the template's own
// column_sums over random x and weights, each of its rows stored where out_index says, and
// checks that every output is stored once and equals the depthwise convolution by PyTorch's
// definition (y[o] = sum over k of x[o*S - P + k*D] w[c, k], taps outside x skipped),
// computed here in double. The sums are the convolution's, before the epilogue.
//
// Built by tests/cli/t0716-recipe-dw-emu.sh with a host C++ compiler:
//   c++ -std=c++17 -DCGR_KERNEL='"gen.cu"' -I include -I CUDA/include this.cpp
// Exit 0 when every output matches to 1e-5 (relative to the sum of |terms|), 1 otherwise.
#include <cutegen/abi.h>
#include <cuda_runtime.h>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

template <class T> inline T __ldg(const T *p) { return *p; }

#define CGR_DW_EMULATE 1
#include CGR_KERNEL

using namespace cgr_dw;

int main()
{
    std::mt19937 rng(20261207);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    const int nb = CGR_NB;
    std::vector<float> x(int64_t(nb) * kC * kPlaneIn), w(int64_t(kC) * kTaps);
    for (auto &v : x)
        v = u(rng);
    for (auto &v : w)
        v = u(rng);

    const int K[3] = {kKD, kKH, kKW}, S[3] = {kSD, kSH, kSW}, P[3] = {kPD, kPH, kPW}, D[3] = {kDD, kDH, kDW};
    const int In[3] = {kID, kIH, kIW}, Out[3] = {kOD, kOH, kOW};
    const int64_t ny = int64_t(nb) * kC * kPlaneOut;
    std::vector<double> ref(ny, 0.0), mag(ny, 0.0);
    for (int64_t plane = 0; plane < int64_t(nb) * kC; ++plane) {
        const int c = int(plane % kC);
        for (int o0 = 0; o0 < Out[0]; ++o0)
            for (int o1 = 0; o1 < Out[1]; ++o1)
                for (int o2 = 0; o2 < Out[2]; ++o2) {
                    const int o[3] = {o0, o1, o2};
                    const int64_t yi = plane * kPlaneOut + (int64_t(o0) * Out[1] + o1) * Out[2] + o2;
                    for (int k0 = 0; k0 < K[0]; ++k0)
                        for (int k1 = 0; k1 < K[1]; ++k1)
                            for (int k2 = 0; k2 < K[2]; ++k2) {
                                const int k[3] = {k0, k1, k2};
                                int i[3];
                                bool hit = true;
                                for (int d = 0; d < 3; ++d) {
                                    i[d] = o[d] * S[d] - P[d] + k[d] * D[d];
                                    hit = hit && i[d] >= 0 && i[d] < In[d];
                                }
                                if (!hit)
                                    continue;
                                const double xv = x[plane * kPlaneIn + (int64_t(i[0]) * In[1] + i[1]) * In[2] + i[2]];
                                const double wv = w[int64_t(c) * kTaps + (k0 * K[1] + k1) * K[2] + k2];
                                ref[yi] += xv * wv;
                                mag[yi] += std::fabs(xv * wv);
                            }
                }
    }

    // the kernel's way: every item through item_of, column_sums and out_index
    std::vector<float> y(ny, NAN);
    std::vector<int> stores(ny, 0);
    int64_t outside = 0;
    for (int64_t item = 0; item < kItems; ++item) {
        const Item it = item_of(item);
        float wc[kTaps];
        for (int i = 0; i < kTaps; ++i)
            wc[i] = w[int64_t(it.c) * kTaps + i];
        float acc[kRows];
        column_sums(x.data() + it.plane * kPlaneIn, wc, it, acc);
        for (int r = 0; r < kRows; ++r) {
            const int64_t idx = out_index(it, r);
            if (idx < 0)
                continue;
            if (idx >= ny) {
                ++outside;
                continue;
            }
            y[idx] = acc[r];
            ++stores[idx];
        }
    }
    int64_t bad = 0, twice = 0, never = 0;
    double worst = 0;
    for (int64_t i = 0; i < ny; ++i) {
        if (stores[i] == 0) {
            if (never++ < 3)
                std::printf("output %lld never stored\n", (long long)i);
            continue;
        }
        if (stores[i] > 1 && twice++ < 3)
            std::printf("output %lld stored %d times\n", (long long)i, stores[i]);
        const double err = std::fabs(y[i] - ref[i]) / (mag[i] + 1e-30);
        worst = std::fmax(worst, mag[i] > 0 ? err : std::fabs(y[i]));
        if (!(std::fabs(y[i] - ref[i]) <= 1e-5 * mag[i] + 1e-30) && bad++ < 3)
            std::printf("output %lld: %.8g, want %.8g\n", (long long)i, y[i], ref[i]);
    }
    if (outside)
        std::printf("%lld stores past the output\n", (long long)outside);
    std::printf("%lld outputs, %lld items of %d rows: %lld wrong, %lld never stored, %lld stored twice; worst error %.2e of the |terms|\n",
                (long long)ny, (long long)kItems, kRows, (long long)bad, (long long)never, (long long)twice, worst);
    return bad || never || twice || outside ? 1 : 0;
}
