// tests/cli/recipe_pool_emu.cpp: runs a kernel generated from recipes/pool.cu on the host
// and checks every output element against a direct evaluation written from ATen's
// pooling kernels (max_pool2d/3d, avg_pool2d/3d), so that the template's tile, padding,
// window and divisor arithmetic is tested without a GPU. The kernel's own code runs:
// cgr_pool::emulate() executes its fill / accumulate / store phases CTA after CTA, every
// thread of a phase before the next (what __syncthreads guarantees on the device).
//
// Built by tests/cli/t0702-recipe-pool-emu.sh with a host C++ compiler:
//   c++ -std=c++17 -DCGR_KERNEL='"gen.cu"' -I include -I CUTLASS -I CUDA/include this.cpp
// Inputs are random, with NaNs sprinkled in (a NaN must win a max window and poison an
// average one); both load paths of the staged variant run (16-byte and scalar).
// Exit 0 when every output matches, 1 otherwise (the first mismatches are printed).
#include <cutegen/abi.h>
#include <cute/tensor.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#define CGR_POOL_EMULATE 1
#include CGR_KERNEL

using namespace cgr_pool;

namespace {

struct Buf {
    void *p = nullptr;
    size_t bytes = 0;
    explicit Buf(size_t n) : p(aligned_alloc(256, (n + 255) / 256 * 256)), bytes(n) {}
    ~Buf() { free(p); }
};

template <class E> float get(const void *p, int64_t i) { return cgr::to_f(static_cast<const E *>(p)[i]); }
template <class E> void put(void *p, int64_t i, float v)
{
    if constexpr (std::is_same_v<E, int64_t>)
        static_cast<E *>(p)[i] = int64_t(v);
    else if constexpr (std::is_same_v<E, bool>)
        static_cast<E *>(p)[i] = v != 0.f;
    else
        static_cast<E *>(p)[i] = cgr::from_f<E>(v);
}

// The reference: ATen's loops, on the operand as the prologue makes it.
float ref_at(const std::vector<float> &x, int64_t nc, int od, int oh, int ow)
{
    const float *xp = x.data() + nc * int64_t(kID) * kIH * kIW;
    const int o[3] = { od, oh, ow };
    const int in[3] = { kID, kIH, kIW }, k[3] = { kKD, kKH, kKW }, s[3] = { kSD, kSH, kSW };
    const int p[3] = { kPD, kPH, kPW }, dl[3] = { kDD, kDH, kDW };
    if (kMax) {
        float m = -INFINITY;
        for (int a = 0; a < k[0]; a++)
            for (int b = 0; b < k[1]; b++)
                for (int c = 0; c < k[2]; c++) {
                    const int i0 = o[0] * s[0] - p[0] + a * dl[0];
                    const int i1 = o[1] * s[1] - p[1] + b * dl[1];
                    const int i2 = o[2] * s[2] - p[2] + c * dl[2];
                    if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2])
                        continue;
                    const float v = xp[(int64_t(i0) * in[1] + i1) * in[2] + i2];
                    if (v > m || std::isnan(v))
                        m = v;
                }
        return m;
    }
    int lo[3], hi[3], pool_size = 1;
    for (int d = 0; d < 3; d++) {
        lo[d] = o[d] * s[d] - p[d];
        hi[d] = std::min(lo[d] + k[d], in[d] + p[d]);
        pool_size *= hi[d] - lo[d];
        lo[d] = std::max(lo[d], 0);
        hi[d] = std::min(hi[d], in[d]);
        if (lo[d] >= hi[d])
            return 0.f;
    }
    float sum = 0.f;
    for (int a = lo[0]; a < hi[0]; a++)
        for (int b = lo[1]; b < hi[1]; b++)
            for (int c = lo[2]; c < hi[2]; c++)
                sum += xp[(int64_t(a) * in[1] + b) * in[2] + c];
    const int div = kDivisor ? kDivisor : kCountPad ? pool_size : (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
    return sum / float(div);
}

}  // namespace

int main()
{
    std::mt19937 rng(12345);
    std::uniform_real_distribution<float> uni(-2.f, 2.f);
    static const int64_t out_shape[] = CGR_OUT_SHAPE;
    static const int in_ndim[] = CGR_IN_NDIMS;
    static const int64_t in_shape[][CG_MAX_DIMS] = CGR_IN_SHAPES;

    // inputs: random values, a few NaNs in the operand's tensors
    std::vector<Buf *> bufs;
    std::vector<cg_tensor> ins(kNin > 0 ? kNin : 1);
    int64_t n_op = 0;
    auto make = [&](int i, int kind, int dtype, size_t esize, auto tag) {
        using E = decltype(tag);
        cg_tensor &t = ins[i];
        memset(&t, 0, sizeof t);
        t.dtype = dtype;
        t.ndim = in_ndim[i];
        int64_t n = 1;
        for (int d = t.ndim - 1; d >= 0; --d) {
            t.shape[d] = in_shape[i][d];
            t.stride[d] = n;
            n *= t.shape[d];
        }
        Buf *b = new Buf(size_t(n) * esize);
        bufs.push_back(b);
        t.data = b->p;
        for (int64_t e = 0; e < n; ++e) {
            float v = uni(rng);
            if (kind == cgr::CGR_FULL && rng() % 997 == 0)
                v = NAN;
            put<E>(t.data, e, v);
        }
        if (kind == cgr::CGR_FULL)
            n_op = n;
    };
#define CGR_MAKE_IN(i, ctype, k, dt) make(i, k, dt, sizeof(ctype), ctype{});
    CGR_INPUTS(CGR_MAKE_IN)
#undef CGR_MAKE_IN
    if (n_op != kNC * int64_t(kID) * kIH * kIW) {
        fprintf(stderr, "operand has %lld elements, the kernel expects %lld\n", (long long)n_op,
                (long long)(kNC * int64_t(kID) * kIH * kIW));
        return 1;
    }
    // the operand as the prologue makes it
    std::vector<float> x(static_cast<size_t>(n_op));
    for (int64_t e = 0; e < n_op; ++e) {
        float v[kNin > 0 ? kNin : 1];
#define CGR_GET_IN(i, ctype, k, dt) v[i] = k == cgr::CGR_FULL ? get<ctype>(ins[i].data, e) \
                                         : k == cgr::CGR_SCALAR ? get<ctype>(ins[i].data, 0) : 0.f;
        CGR_INPUTS(CGR_GET_IN)
#undef CGR_GET_IN
        x[size_t(e)] = cgr_pro(v);
    }

    cg_tensor y;
    memset(&y, 0, sizeof y);
    y.dtype = CGR_DTYPE;
    y.ndim = CGR_OUT_NDIM;
    int64_t n_out = 1;
    for (int d = y.ndim - 1; d >= 0; --d) {
        y.shape[d] = out_shape[d];
        y.stride[d] = n_out;
        n_out *= y.shape[d];
    }
    if (n_out != kNC * int64_t(kOD) * kOH * kOW) {
        fprintf(stderr, "output has %lld elements, the kernel writes %lld\n", (long long)n_out,
                (long long)(kNC * int64_t(kOD) * kOH * kOW));
        return 1;
    }
    Buf yb(size_t(n_out) * sizeof(T));
    y.data = yb.p;
    std::vector<float> want(static_cast<size_t>(n_out));
    int64_t i = 0;
    for (int64_t c = 0; c < kNC; ++c)
        for (int od = 0; od < kOD; ++od)
            for (int oh = 0; oh < kOH; ++oh)
                for (int ow = 0; ow < kOW; ++ow)
                    want[size_t(i++)] = cgr::to_f(cgr::from_f<T>(cgr_epi(ref_at(x, c, od, oh, ow))));

    const bool half = sizeof(T) == 2;
    int bad = 0;
    for (int vec = 1; vec >= 0; --vec) {
        if (!kSmem && !vec)
            continue;  // the direct path has no 16-byte loads
        for (int64_t e = 0; e < n_out; ++e)
            put<T>(y.data, e, 1.2345e30f);  // poison: an unwritten element cannot match
        if (emulate(ins.data(), kNin, &y, 1, vec != 0) != CG_OK) {
            fprintf(stderr, "emulate refused the tensors\n");
            return 1;
        }
        double worst = 0;
        for (int64_t e = 0; e < n_out; ++e) {
            const float got = get<T>(y.data, e), w = want[size_t(e)];
            bool ok;
            if (std::isnan(w) || std::isnan(got))
                ok = std::isnan(w) && std::isnan(got);
            else if (kMax)
                ok = got == w;
            else
                ok = std::fabs(got - w) <= (half ? 1e-2 : 1e-5) * (1 + std::fabs(w));
            if (!ok && bad++ < 10) {
                int64_t r = e;
                const int ow = int(r % kOW); r /= kOW;
                const int oh = int(r % kOH); r /= kOH;
                const int od = int(r % kOD); r /= kOD;
                fprintf(stderr, "%s loads: output (nc %lld, %d, %d, %d): got %.9g, want %.9g\n",
                        vec ? "aligned" : "element by element", (long long)r, od, oh, ow, got, w);
            }
            if (!std::isnan(w) && !std::isnan(got))
                worst = std::max(worst, double(std::fabs(got - w)));
        }
        printf("%s: %lld outputs (%s loads), worst difference %.3g\n", bad ? "FAIL" : "ok",
               (long long)n_out, kSmem ? (vec ? "staged, aligned" : "staged, element by element") : "direct", worst);
    }
    for (Buf *b : bufs)
        delete b;
    return bad ? 1 : 0;
}
