// tests/cli/recipe_direct_emu.cpp: runs the index math of a kernel generated from
// recipes/conv_direct.cu on the host and checks a whole small convolution computed through
// it against a direct one in double: the weights staged the way the kernel stages them
// (stage_slot, w_src, ws_index: every slot of a channel block written once), then every
// output pixel of every (nb, group, channel block) summed by the template's own pixel_sums
// (tap_in's taps, the x offsets, the ws rows), before the epilogue, the pixels taken in the
// kernel's order (pixel_of: each thread of a plane its pixel, or its CGR_DIRECT_PIX pixels a
// chunk apart, every pixel once); with CGR_DIRECT_STAGE the CTAs' tiles too (tile_place,
// stored_pixel: every output stored once, the value its thread summed).
// The reference: the transposed convolution by PyTorch's definition (y[o] += x[i] w[ci, co, k]
// for o = i*S - P + k*D), every (o, k) tried.
//
// Built by tests/cli/t0712-recipe-direct-emu.sh with a host C++ compiler:
//   c++ -std=c++17 -DCGR_KERNEL='"gen.cu"' -I include -I CUDA/include this.cpp
// Exit 0 when every output matches to 1e-5 (relative to the sum of |terms|), 1 otherwise.
#include <cutegen/abi.h>
#include <cuda_runtime.h>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

template <class T> inline T __ldg(const T *p) { return *p; }

#define CGR_DIRECT_EMULATE 1
#include CGR_KERNEL

using namespace cgr_direct;

int main()
{
    std::mt19937 rng(20261206);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    const int64_t nx = int64_t(kNb) * kCin * kPlaneIn;
    const int64_t nw = int64_t(kCin) * kCoutG * kTaps;
    const int64_t ny = int64_t(kNb) * kCout * kPlaneOut;
    std::vector<float> x(nx), w(nw);
    for (auto &v : x)
        v = u(rng);
    for (auto &v : w)
        v = u(rng);

    // the reference, in double, and the sums of |terms| each output's tolerance scales with
    std::vector<double> ref(ny, 0.0), mag(ny, 0.0);
    const int K[3] = {kKD, kKH, kKW}, S[3] = {kSD, kSH, kSW}, P[3] = {kPD, kPH, kPW}, D[3] = {kDD, kDH, kDW};
    const int In[3] = {kID, kIH, kIW}, Out[3] = {kOD, kOH, kOW};
    for (int nb = 0; nb < kNb; ++nb)
        for (int c = 0; c < kCout; ++c) {
            const int g = c / kCoutG, col = c % kCoutG;
            for (int o0 = 0; o0 < Out[0]; ++o0)
                for (int o1 = 0; o1 < Out[1]; ++o1)
                    for (int o2 = 0; o2 < Out[2]; ++o2) {
                        const int o[3] = {o0, o1, o2};
                        const int64_t yi = ((int64_t(nb) * kCout + c) * Out[0] + o0) * Out[1] * Out[2] + int64_t(o1) * Out[2] + o2;
                        for (int ci = 0; ci < kCinG; ++ci)
                            for (int k0 = 0; k0 < K[0]; ++k0)
                                for (int k1 = 0; k1 < K[1]; ++k1)
                                    for (int k2 = 0; k2 < K[2]; ++k2) {
                                        const int k[3] = {k0, k1, k2};
                                        int i[3];
                                        bool hit = true;
                                        for (int d = 0; d < 3 && hit; ++d) {
                                            const int t = o[d] + P[d] - k[d] * D[d];  // o = i*S - P + k*D
                                            hit = t >= 0 && t % S[d] == 0 && t / S[d] < In[d];
                                            i[d] = hit ? t / S[d] : 0;
                                        }
                                        if (!hit)
                                            continue;
                                        const int64_t tap = (int64_t(k0) * K[1] + k1) * K[2] + k2;
                                        const int64_t cg = int64_t(g) * kCinG + ci;
                                        const double xv = x[((int64_t(nb) * kCin + cg) * In[0] + i[0]) * In[1] * In[2] + int64_t(i[1]) * In[2] + i[2]];
                                        const double wv = w[(cg * kCoutG + col) * kTaps + tap];
                                        ref[yi] += xv * wv;
                                        mag[yi] += std::fabs(xv * wv);
                                    }
                    }
        }

    // the kernel's way: stage a channel block, then every pixel through pixel_sums
    std::vector<float> ws(kWsFloats, NAN), y(ny, NAN);
    int bad = 0, nonzero = 0;
    for (int nb = 0; nb < kNb; ++nb)
        for (int g = 0; g < kG; ++g)
            for (int cb = 0; cb < kCoBlocks; ++cb) {
                std::fill(ws.begin(), ws.end(), NAN);
                for (int e = 0; e < kCinG * kCoT * kTaps; ++e) {
                    int ci, tap, co;
                    stage_slot(e, ci, tap, co);
                    const int s = ws_index(ci, tap, co);
                    const int64_t src = w_src(g, cb, ci, tap, co);
                    if (s < 0 || s >= kWsFloats || !std::isnan(ws[s]) || src < 0 || src >= nw) {
                        std::printf("staging: slot %d of (ci %d, tap %d, co %d) out of range or written twice (source %lld)\n",
                                    s, ci, tap, co, (long long)src);
                        return 1;
                    }
                    ws[s] = w[src];
                }
                const float *X = x.data() + (int64_t(nb) * kCin + int64_t(g) * kCinG) * kPlaneIn;
                for (int64_t j = 0; j < kPlaneJ; ++j) {
                    int od, oh, ow0;
                    if (!pixel_of(j, od, oh, ow0))
                        continue;
                    float acc[kPix][kCoT];
                    pixel_sums(X, ws.data(), od, oh, ow0, acc);
                    for (int q = 0; q < kPix; ++q) {
                        const int ow = ow0 + q * kChunk;
                        if (q > 0 && ow >= kOW)
                            continue;  // past the row's end: summed, not stored
                        const int64_t pix = (int64_t(od) * kOH + oh) * kOW + ow;
                        if (od < 0 || od >= kOD || oh < 0 || oh >= kOH || ow < 0 || ow >= kOW ||
                            !std::isnan(y[(int64_t(nb) * kCout + g * kCoutG + cb * kCoT) * kPlaneOut + pix])) {
                            std::printf("thread %lld: pixel %d (%d, %d, %d) outside the plane or taken twice\n",
                                        (long long)j, q, od, oh, ow);
                            return 1;
                        }
                        for (int co = 0; co < kCoT; ++co) {
                            const int c = g * kCoutG + cb * kCoT + co;
                            y[(int64_t(nb) * kCout + c) * kPlaneOut + pix] = acc[q][co];
                        }
                    }
                }
            }
    // CGR_DIRECT_STAGE: the kernel's CTAs again, each pixel block's sums put in the tile at
    // tile_place and stored from it by stored_pixel; every output the same value, once
    if (kStage) {
        std::vector<float> tile(kTileFloats), ys(ny, NAN);
        for (int nb = 0; nb < kNb; ++nb)
            for (int g = 0; g < kG; ++g)
                for (int cb = 0; cb < kCoBlocks; ++cb)
                    for (int64_t j0 = 0; j0 < kPlaneJ; j0 += kThreads) {
                        std::fill(tile.begin(), tile.end(), NAN);
                        for (int t = 0; t < kThreads; ++t) {
                            int od, oh, ow0;
                            if (j0 + t >= kPlaneJ || !pixel_of(j0 + t, od, oh, ow0))
                                continue;
                            for (int q = 0; q < kPix; ++q) {
                                const int ow = ow0 + q * kChunk, at = tile_place(t, q);
                                if (ow >= kOW)
                                    continue;  // its sums are in the tile in the kernel too: never stored
                                for (int co = 0; co < kCoT; ++co) {
                                    const int c = g * kCoutG + cb * kCoT + co;
                                    if (at < 0 || at >= kTilePlaces || !std::isnan(tile[co * kTilePlaces + at])) {
                                        std::printf("staged: thread %d's tile place %d out of range or taken twice\n", t, at);
                                        return 1;
                                    }
                                    tile[co * kTilePlaces + at] =
                                        y[(int64_t(nb) * kCout + c) * kPlaneOut + (int64_t(od) * kOH + oh) * kOW + ow];
                                }
                            }
                        }
                        for (int t = 0; t < kTilePlaces; ++t) {
                            int od, oh, ow;
                            if (!stored_pixel(j0, t, od, oh, ow))
                                continue;
                            for (int co = 0; co < kCoT; ++co) {
                                const int64_t yi = (int64_t(nb) * kCout + g * kCoutG + cb * kCoT + co) * kPlaneOut +
                                                   (int64_t(od) * kOH + oh) * kOW + ow;
                                if (!std::isnan(ys[yi]) || std::isnan(tile[co * kTilePlaces + t])) {
                                    std::printf("staged: thread %d stores pixel (%d, %d, %d) twice or from an empty place\n", t,
                                                od, oh, ow);
                                    return 1;
                                }
                                ys[yi] = tile[co * kTilePlaces + t];
                            }
                        }
                    }
        for (int64_t i = 0; i < ny; ++i)
            if (!(ys[i] == y[i])) {
                std::printf("staged: y[%lld] = %.9g stored, %.9g summed\n", (long long)i, ys[i], y[i]);
                return 1;
            }
    }
    for (int64_t i = 0; i < ny; ++i) {
        nonzero += mag[i] > 0;
        if (!(std::fabs(y[i] - ref[i]) <= 1e-5 * (mag[i] + 1e-30))) {
            if (bad < 8)
                std::printf("y[%lld] = %.9g, direct %.9g (|terms| %.3g)\n", (long long)i, y[i], ref[i], mag[i]);
            ++bad;
        }
    }
    if (bad) {
        std::printf("%d of %lld outputs wrong\n", bad, (long long)ny);
        return 1;
    }
    std::printf("all %lld outputs match (%d with taps; groups %d, %d channels and %d pixels a thread%s)\n", (long long)ny,
                nonzero, kG, kCoT, kPix, kStage ? "; stores staged through the tile" : "");
    return 0;
}
