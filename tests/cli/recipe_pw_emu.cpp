// tests/cli/recipe_pw_emu.cpp: checks a kernel generated from recipes/pointwise.cu on the
// host: for every broadcast input, the template's own bcast_off (the offsets divided by the
// generated shape's constants) at every output index against the offset unravelled here
// from the shapes, with the input's strides as cg_forward takes them (contiguous, then
// three times those, so that strides read from the shape instead of the tensor fail), and
// the vector path's assumption: the kVec elements of a vector that starts a whole vector
// of a row are the first's offset plus v times the last dim's stride, and one element
// where the template loads one (the input broadcast along the last dim).
//
// Built by tests/cli/t0718-recipe-pw-emu.sh with a host C++ compiler:
//   c++ -std=c++17 -DCGR_KERNEL='"gen.cu"' -I include -I CUTLASS -I CUDA/include this.cpp
// Exit 0 when every offset matches, 1 otherwise.
#include <cutegen/abi.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>

#define CGR_PW_EMULATE 1
#include CGR_KERNEL

using namespace cgr_pw;

// The output's extents, and input i's strides along each output dim as cg_forward sets them
// for a contiguous input scaled by `scale` (0 where broadcast).
static void args_for(int i, int64_t scale, Args &a)
{
    a.ndim = CGR_OUT_NDIM;
    for (int d = 0; d < a.ndim; ++d)
        a.oshape[d] = kOutShape[d];
    a.n = 1;
    for (int d = 0; d < a.ndim; ++d)
        a.n *= kOutShape[d];
    const int nd = kInNdim[i], lead = a.ndim - nd;
    int64_t st = scale;
    for (int j = nd - 1; j >= 0; --j) {
        a.bstride[i][lead + j] = kInShape[i][j] == 1 ? 0 : st;
        st *= kInShape[i][j];
    }
    for (int d = 0; d < lead; ++d)
        a.bstride[i][d] = 0;
}

// The offset of input i's element for output index idx, unravelled dim by dim.
static int64_t reference_off(const Args &a, int i, int64_t idx)
{
    int64_t coord[CG_MAX_DIMS], r = idx, off = 0;
    for (int d = a.ndim - 1; d >= 0; --d) {
        coord[d] = r % kOutShape[d];
        r /= kOutShape[d];
    }
    for (int d = 0; d < a.ndim; ++d)
        off += coord[d] * a.bstride[i][d];
    return off;
}

// Every index (past 2^24 of them, every step-th: an odd step, so all residues of the
// extents' powers of two come round) of input I at one stride scale; the bad ones counted,
// the first few printed.
template <int I> static int64_t check_input(int64_t scale, int64_t &checked)
{
    Args a{};
    args_for(I, scale, a);
    const int64_t last = kOutShape[CGR_OUT_NDIM - 1];
    const int64_t step = a.n <= (int64_t(1) << 24) ? 1 : (a.n >> 24) | 1;
    int64_t bad = 0;
    for (int64_t idx = 0; idx < a.n; idx += step) {
        const int64_t got = bcast_off<I>(a, idx), want = reference_off(a, I, idx);
        ++checked;
        if (got != want && ++bad <= 5)
            std::printf("input %d (strides x%lld): output index %lld: offset %lld, expected %lld\n", I,
                        (long long)scale, (long long)idx, (long long)got, (long long)want);
        // the vector path (rows of whole vectors): a vector's elements from its first's offset
        if (last % kVec == 0 && idx % kVec == 0) {
            for (int v = 1; v < kVec; ++v) {
                const int64_t w = reference_off(a, I, idx + v);
                const int64_t vec = bcast_along(I, CGR_OUT_NDIM - 1) ? want : want + v * a.bstride[I][CGR_OUT_NDIM - 1];
                if (w != vec && ++bad <= 5)
                    std::printf("input %d: element %d of the vector at %lld: offset %lld, the vector path takes %lld\n",
                                I, v, (long long)idx, (long long)w, (long long)vec);
            }
        }
    }
    return bad;
}

int main()
{
    int64_t bad = 0, checked = 0;
    int inputs = 0;
    cgr::for_each_index<kNin>([&](auto ic) {
        constexpr int I = decltype(ic)::value;
        if constexpr (In<I>::kind == CGR_BCAST) {
            ++inputs;
            bad += check_input<I>(1, checked) + check_input<I>(3, checked);
        }
    });
    if (inputs == 0) {
        std::printf("no broadcast input: nothing to check\n");
        return 1;
    }
    if (bad) {
        std::printf("%lld of %lld offsets wrong\n", (long long)bad, (long long)checked);
        return 1;
    }
    std::printf("%d broadcast input(s), %lld offsets (%s indices) as unravelled, %s\n", inputs,
                (long long)checked, sizeof(Index) == 4 ? "32-bit" : "64-bit",
                CGR_PW_CONST_SHAPE ? "constant extents" : "run-time extents");
    return 0;
}
