// tests/cli/recipe_wgmma_acc.cpp: checks, on the host, what recipes/conv_tc.cu's
// chan_reduce_wg assumes of the WGMMA accumulators (the consumers' TiledMma, made as the
// template makes it, for a tile BM x BN): a thread's fragment is ((2, 2, J), 1, NN); its
// element ((v, r, j), 0, n) lies on row m0 + 8 r (m0 its first row); the four lanes of a quad
// share their rows; and a quad's elements of a row are every column of the tile, once. So a
// row reduced in the thread and across its quad is the whole row.
// Built by tests/cli/t0719-recipe-wgmma-chanred.sh with a host C++ compiler:
//   c++ -std=c++17 -DBM=128 -DBN=112 -I CUTLASS -I CUDA/include this.cpp
// Exit 0 when all hold, 1 otherwise.
#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cute/arch/mma_sm90.hpp>
#include <cstdio>
#include <vector>

using namespace cute;

int main()
{
    constexpr int kBM = BM, kBN = BN, kConsumers = kBM / 64;
    using MmaOpH = decltype(GMMA::ss_op_selector<half_t, half_t, float, Shape<_64, Int<kBN>, _16>, GMMA::Major::K,
                                                 GMMA::Major::K>());
    using TiledMmaH = decltype(make_tiled_mma(MmaOpH{}, Layout<Shape<Int<kConsumers>, _1, _1>>{}));
    TiledMmaH mma;
    Tensor cC = make_identity_tensor(make_shape(Int<kBM>{}, Int<kBN>{}));
    int bad = 0;
    auto fail = [&](const char *what, int t) {
        if (++bad <= 5)
            std::printf("BM %d BN %d thread %d: %s\n", kBM, kBN, t, what);
    };
    std::vector<int> seen(size_t(kBM) * kBN, 0);
    for (int q = 0; q < 128 * kConsumers / 4; ++q) {
        int m0q = -1;
        std::vector<int> cols(size_t(2) * kBN, 0);  // (row r, column): a quad's elements
        for (int lane = 0; lane < 4; ++lane) {
            const int t = 4 * q + lane;
            auto thr = mma.get_slice(t);
            Tensor tCcC = thr.partition_C(cC);
            Tensor acc = thr.partition_fragment_C(cC);
            static_assert(decltype(rank<0>(acc))::value == 3 && decltype(size<0, 0>(acc))::value == 2 &&
                              decltype(size<0, 1>(acc))::value == 2 && decltype(size<1>(acc))::value == 1,
                          "the fragment ((2, 2, J), 1, NN)");
            constexpr int kJ = decltype(size<0, 2>(acc))::value, kNN = decltype(size<2>(acc))::value;
            const int m0 = get<0>(tCcC(0));
            if (lane == 0)
                m0q = m0;
            else if (m0 != m0q)
                fail("its quad's lanes start on other rows", t);
            for (int n = 0; n < kNN; ++n)
                for (int j = 0; j < kJ; ++j)
                    for (int r = 0; r < 2; ++r)
                        for (int v = 0; v < 2; ++v) {
                            const auto c = make_coord(make_coord(v, r, j), 0, n);
                            const int m = get<0>(tCcC(c)), co = get<1>(tCcC(c));
                            if (m != m0 + 8 * r)
                                fail("an element of row half r off row m0 + 8 r", t);
                            else if (co < 0 || co >= kBN || m < 0 || m >= kBM)
                                fail("an element outside the tile", t);
                            else {
                                ++cols[size_t(r) * kBN + co];
                                ++seen[size_t(m) * kBN + co];
                            }
                        }
        }
        for (int i = 0; i < 2 * kBN; ++i)
            if (cols[i] != 1)
                fail("its quad's elements of a row are not every column once", 4 * q);
    }
    for (int i = 0; i < kBM * kBN; ++i)
        if (seen[i] != 1)
            fail("the tile's elements not each held once", -1);
    if (bad) {
        std::printf("BM %d BN %d: %d failures\n", kBM, kBN, bad);
        return 1;
    }
    std::printf("BM %d BN %d: %d quads, every row's columns in its quad once\n", kBM, kBN, 128 * kConsumers / 4);
    return 0;
}
