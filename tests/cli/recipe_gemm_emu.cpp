// tests/cli/recipe_gemm_emu.cpp: runs the logic of a kernel generated from
// recipes/gemm_tc.cu on the host and checks every output element against a direct
// evaluation, so that the template's tile order, operand tiles (k residue first),
// gmem->smem copy partitions and predicates, the pipeline's stage bookkeeping, the MMA
// fragment partitions, the 3xTF32 split, split-K and the epilogue's coordinates are
// tested without a GPU.
//
// What runs is the template's own code where it can run on a CPU: its CuTe types
// (smem layouts, tiled copies, the TiledMMA), tile_coord, k_split, tile_skipped,
// operand_tiles, acc_coords, split_tf32, finish (the generated epilogue). The main loop is
// transcribed step for step (every thread of a step before the next, as the barriers
// make it on the device); cp.async is a queue completed by cp_async_wait (a destination
// reads NaN until then, so a read before the wait shows); ldmatrix is taken to deliver
// what the TiledMMA's partition of shared memory says (CuTe builds the one from the
// other), scalar smem loads are done through the template's own s2r partition; an MMA
// adds, for each accumulator (m, n) of each thread, the products of the fragment values
// the threads of the CTA hold for row m and column n (each (m, k) must be held, and
// identically by every thread that holds it). The reference is computed in double from
// the operands' memory and the epilogue inputs broadcast by their own shapes and strides.
//
// Built by tests/cli/t0706-recipe-gemm-emu.sh with a host C++ compiler:
//   c++ -std=c++17 -DCGR_KERNEL='"gen.cu"' -I include -I CUTLASS -I CUDA/include this.cpp
// Exit 0 when every output matches (TF32 variants: within 2e-2, reported), 1 otherwise.
#include <cutegen/abi.h>
#include <cute/tensor.hpp>
#include <cuda_fp16.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <vector>

template <class T> inline T __ldg(const T *p) { return *p; }

#define CGR_GEMM_EMULATE 1
#include CGR_KERNEL

using namespace cgr_gemm;

namespace {

int errors = 0;
void fail(const char *what, int a = 0, int b = 0, int c = 0)
{
    if (errors++ < 12)
        fprintf(stderr, "emu: %s (%d, %d, %d)\n", what, a, b, c);
}

// ---------------------------------------------------------------- cp.async

struct Pending {
    const float *src;
    float *dst;
};
std::vector<Pending> open_group;
std::deque<std::vector<Pending>> groups;

void issue(const float *src, float *dst)
{
    *dst = NAN;  // undefined until the wait
    open_group.push_back({ src, dst });
}
void fence()
{
    groups.push_back(open_group);
    open_group.clear();
}
void wait_all_but(int n)
{
    while (int(groups.size()) > n) {
        for (const Pending &c : groups.front())
            *c.dst = *c.src;
        groups.pop_front();
    }
}

// copy_if(tiled_copy, pred, src, dst) of the kernel, element by element
template <class P, class S, class D> void copy_if3(const P &pred, const S &src, D &&dst)
{
    for (int m = 0; m < int(size<1>(src)); ++m)
        for (int k = 0; k < int(size<2>(src)); ++k)
            if (pred(m, k))
                for (int v = 0; v < int(size<0>(src)); ++v)
                    issue(&src(v, m, k), &dst(v, m, k));
}
template <class P, class S, class D> void copy_if2(const P &pred, const S &src, D &&dst)
{
    for (int m = 0; m < int(size<1>(src)); ++m)
        if (pred(m))
            for (int v = 0; v < int(size<0>(src)); ++v)
                issue(&src(v, m), &dst(v, m));
}

uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

// ---------------------------------------------------------------- one CTA


using AccT = decltype(partition_fragment_C(TiledMma{}, Shape<Int<kBM>, Int<kBN>>{}));

struct Cta {
    std::vector<float> smem_a, smem_b;
    Cta() : smem_a(cosize_v<SmemLayoutA>), smem_b(cosize_v<SmemLayoutB>) {}
};

// The product of k-block kb of every thread's fragments into every thread's accumulators.
template <class FA, class FB, class SA, class SB>
void mma_block(int kb, std::vector<FA> &fa, std::vector<FB> &fb, std::vector<SA> &sa,
               std::vector<SB> &sb, std::vector<AccT> &acc)
{
    // the fragment values the CTA holds, by (row, k in the block): big and small parts
    std::vector<float> ab(kBM * 8, NAN), as(kBM * 8, NAN), bb(kBN * 8, NAN), bs(kBN * 8, NAN);
    std::vector<char> ha(kBM * 8, 0), hb(kBN * 8, 0);
    Tensor cA = make_identity_tensor(Shape<Int<kBM>, Int<kBK>>{});
    Tensor cB = make_identity_tensor(Shape<Int<kBN>, Int<kBK>>{});
    auto hold = [&](std::vector<float> &big, std::vector<float> &small, std::vector<char> &have, int r,
                    int k, float vb, float vs) {
        const int i = r * 8 + (k - kb * 8);
        if (k < kb * 8 || k >= kb * 8 + 8) {
            fail("a fragment holds a k outside its k-block", r, k, kb);
            return;
        }
        if (have[i] && (bits(big[i]) != bits(vb) || (CGR_PREC == 0 && bits(small[i]) != bits(vs))))
            fail("two threads hold different values for one (row, k)", r, k, 0);
        big[i] = vb;
        small[i] = vs;
        have[i] = 1;
    };
    for (int t = 0; t < kThreads; ++t) {
        auto thr = TiledMma{}.get_slice(t);
        Tensor tAc = thr.partition_A(cA)(_, _, kb);
        Tensor tBc = thr.partition_B(cB)(_, _, kb);
        Tensor va = fa[t](_, _, kb);
        Tensor vbt = fb[t](_, _, kb);
        for (int i = 0; i < int(size(tAc)); ++i)
            hold(ab, as, ha, get<0>(tAc(i)), get<1>(tAc(i)), as_float(va(i).raw()), as_float(sa[t](i).raw()));
        for (int i = 0; i < int(size(tBc)); ++i)
            hold(bb, bs, hb, get<0>(tBc(i)), get<1>(tBc(i)), as_float(vbt(i).raw()), as_float(sb[t](i).raw()));
    }
    for (size_t i = 0; i < ha.size(); ++i)
        if (!ha[i])
            fail("no thread holds a row of A", int(i / 8), int(i % 8), kb);
    for (size_t i = 0; i < hb.size(); ++i)
        if (!hb[i])
            fail("no thread holds a row of B", int(i / 8), int(i % 8), kb);
    Tensor cC = make_identity_tensor(Shape<Int<kBM>, Int<kBN>>{});
    for (int t = 0; t < kThreads; ++t) {
        Tensor tCc = TiledMma{}.get_slice(t).partition_C(cC);
        for (int i = 0; i < int(size(tCc)); ++i) {
            const int m = get<0>(tCc(i)), n = get<1>(tCc(i));
            float a = acc[t](i);
            auto dot = [&](const std::vector<float> &x, const std::vector<float> &y) {
                for (int k = 0; k < 8; ++k)
                    a += x[m * 8 + k] * y[n * 8 + k];
            };
            if (CGR_PREC == 0) {
                dot(as, bb);
                dot(ab, bs);
            }
            dot(ab, bb);
            acc[t](i) = a;
        }
    }
}

// CGR_PREC 2 (3xFP16): k-blocks kb - 1 and kb as one m16n8k16 f16 MMA of each warp and
// atom, from the registers the template's own split_f16_a / split_f16_b pack, placed as
// PTX defines the f16 atom (lane l, g = l/4, q = l%4: A a0 (g, 2q..2q+1), a1 (g+8, 2q..),
// a2 (g, 2q+8..), a3 (g+8, 2q+8..); B b0 (k 2q..2q+1, col g), b1 (k 2q+8.., col g); D d0 d1
// (g, 2q..2q+1), d2 d3 (g+8, ..)), the low half of a register first. A k order that A and
// B do not share, or a half in the wrong place, shows as wrong outputs.
template <class FA, class FB>
void mma_pair_block(int kb, std::vector<FA> &fa, std::vector<FB> &fb, std::vector<AccT> &acc)
{
    constexpr int MM = decltype(size<1>(AccT{}))::value, NN = decltype(size<2>(AccT{}))::value;
    auto half_of = [](uint32_t reg, int upper) {
        __half2 h;
        memcpy(&h, &reg, 4);
        const float2 f = __half22float2(h);
        return double(upper ? f.y : f.x);
    };
    for (int w = 0; w < kThreads / 32; ++w)
        for (int mi = 0; mi < MM; ++mi)
            for (int ni = 0; ni < NN; ++ni) {
                double ah[16][16], al[16][16], bh[16][8], bl[16][8];
                for (int l = 0; l < 32; ++l) {
                    const int t = 32 * w + l, g = l / 4, q = l % 4;
                    uint32_t ahr[4], alr[4], bhr[2], blr[2];
                    split_f16_a(fa[t](_, _, kb - 1), fa[t](_, _, kb), mi, ahr, alr);
                    split_f16_b(fb[t](_, _, kb - 1), fb[t](_, _, kb), ni, bhr, blr);
                    const int row[4] = { g, g + 8, g, g + 8 }, col[4] = { 2 * q, 2 * q, 2 * q + 8, 2 * q + 8 };
                    for (int r = 0; r < 4; ++r)
                        for (int e = 0; e < 2; ++e) {
                            ah[row[r]][col[r] + e] = half_of(ahr[r], e);
                            al[row[r]][col[r] + e] = half_of(alr[r], e);
                        }
                    for (int r = 0; r < 2; ++r)
                        for (int e = 0; e < 2; ++e) {
                            bh[2 * q + 8 * r + e][g] = half_of(bhr[r], e);
                            bl[2 * q + 8 * r + e][g] = half_of(blr[r], e);
                        }
                }
                for (int l = 0; l < 32; ++l) {
                    const int t = 32 * w + l, g = l / 4, q = l % 4;
                    for (int v = 0; v < 4; ++v) {
                        const int r = g + 8 * (v / 2), c = 2 * q + v % 2;
                        double d = 0;
                        for (int s = 0; s < 16; ++s)
                            d += (ah[r][s] * bl[s][c] + al[r][s] * bh[s][c]) / 2048.0 + ah[r][s] * bh[s][c];
                        acc[t](v, mi, ni) += float(d);
                    }
                }
            }
}

std::vector<float> g_shadow;  // store_tile's output (main checks it equals the emulated one)
bool g_shadow_used = false;

void run_cta(const Params &p, int pid, int batch, int split, Cta &cta)
{
    int tm, tn;
    tile_coord(pid, tm, tn);
    auto tiles = operand_tiles(p.in[CGR_A] + int64_t(batch) * CGR_A_BSTRIDE,
                               p.in[CGR_B] + int64_t(batch) * CGR_B_BSTRIDE, tm, tn);
    Tensor gA = get<0>(tiles);
    Tensor gB = get<1>(tiles);
    int k_begin, k_tile_count;
    k_split(split, k_begin, k_tile_count);
    constexpr int residue_k = kResidueK;
    std::vector<AccT> acc(kThreads);
    for (auto &a : acc)
        clear(a);

    if (!tile_skipped(tm, tn) && k_tile_count > 0) {
        Tensor sA = make_tensor(cta.smem_a.data(), SmemLayoutA{});
        Tensor sB = make_tensor(cta.smem_b.data(), SmemLayoutB{});
        GmemCopyA gcopy_a;
        GmemCopyB gcopy_b;
        Tensor cA = make_identity_tensor(make_shape(size<0>(sA), size<1>(sA)));
        Tensor cB = make_identity_tensor(make_shape(size<0>(sB), size<1>(sB)));
        const int residue_m = kM - tm * kBM, residue_n = kN - tn * kBN;
        using PredA = decltype(make_tensor<bool>(make_shape(size<1>(gcopy_a.get_slice(0).partition_D(sA)),
                                                            size<2>(gcopy_a.get_slice(0).partition_D(sA))),
                                                 Stride<_1, _0>{}));
        using PredB = decltype(make_tensor<bool>(make_shape(size<1>(gcopy_b.get_slice(0).partition_D(sB)),
                                                            size<2>(gcopy_b.get_slice(0).partition_D(sB))),
                                                 Stride<_1, _0>{}));
        std::vector<PredA> pa(kThreads);
        std::vector<PredB> pb(kThreads);
        for (int t = 0; t < kThreads; ++t) {
            Tensor tAcA = gcopy_a.get_slice(t).partition_S(cA);
            Tensor tBcB = gcopy_b.get_slice(t).partition_S(cB);
            for (int m = 0; m < int(size<0>(pa[t])); ++m)
                pa[t](m, 0) = get<0>(tAcA(0, m, 0)) < residue_m;
            for (int n = 0; n < int(size<0>(pb[t])); ++n)
                pb[t](n, 0) = get<0>(tBcB(0, n, 0)) < residue_n;
        }
        // every element of each stage is written by exactly one thread's copies
        std::vector<int> cover_a(cosize_v<SmemLayoutA>, 0), cover_b(cosize_v<SmemLayoutB>, 0);
        for (int t = 0; t < kThreads; ++t) {
            Tensor tAsA = gcopy_a.get_slice(t).partition_D(sA);
            Tensor tBsB = gcopy_b.get_slice(t).partition_D(sB);
            for (int i = 0; i < int(size(tAsA)); ++i)
                cover_a[&tAsA(i) - cta.smem_a.data()]++;
            for (int i = 0; i < int(size(tBsB)); ++i)
                cover_b[&tBsB(i) - cta.smem_b.data()]++;
        }
        for (size_t i = 0; i < cover_a.size(); ++i)
            if (cover_a[i] != 1)
                fail("a smem element of A is copied other than once", int(i), cover_a[i]);
        for (size_t i = 0; i < cover_b.size(); ++i)
            if (cover_b[i] != 1)
                fail("a smem element of B is copied other than once", int(i), cover_b[i]);
        std::fill(cta.smem_a.begin(), cta.smem_a.end(), 0.f);  // clear(tAsA), clear(tBsB)
        std::fill(cta.smem_b.begin(), cta.smem_b.end(), 0.f);

        auto load = [&](int k_tile, int pipe, bool first) {
            for (int t = 0; t < kThreads; ++t) {
                auto ga = gcopy_a.get_slice(t);
                auto gb = gcopy_b.get_slice(t);
                Tensor tAgA = ga.partition_S(gA);
                Tensor tAsA = ga.partition_D(sA);
                Tensor tBgB = gb.partition_S(gB);
                Tensor tBsB = gb.partition_D(sB);
                if (first) {
                    const int first_residue = k_tile == 0 ? residue_k : 0;
                    Tensor tAcA = ga.partition_S(cA);
                    Tensor tBcB = gb.partition_S(cB);
                    for (int k = 0; k < int(size<2>(tAsA)); ++k)
                        if (get<1>(tAcA(0, 0, k)) >= -first_residue)
                            copy_if2(pa[t](_, k), tAgA(_, _, k, k_tile), tAsA(_, _, k, pipe));
                    for (int k = 0; k < int(size<2>(tBsB)); ++k)
                        if (get<1>(tBcB(0, 0, k)) >= -first_residue)
                            copy_if2(pb[t](_, k), tBgB(_, _, k, k_tile), tBsB(_, _, k, pipe));
                } else {
                    copy_if3(pa[t], tAgA(_, _, _, k_tile), tAsA(_, _, _, pipe));
                    copy_if3(pb[t], tBgB(_, _, _, k_tile), tBsB(_, _, _, pipe));
                }
            }
            fence();
        };
        auto clear_preds = [&]() {
            for (int t = 0; t < kThreads; ++t) {
                clear(pa[t]);
                clear(pb[t]);
            }
        };

        int k_tile = k_begin;
        load(k_tile, 0, true);
        ++k_tile;
        --k_tile_count;
        for (int k_pipe = 1; k_pipe < kStages - 1; ++k_pipe) {
            if (k_tile_count <= 0)
                clear_preds();
            load(k_tile, k_pipe, false);
            ++k_tile;
            --k_tile_count;
        }

        TiledMma mma;
        using FragA = decltype(mma.get_slice(0).partition_fragment_A(sA(_, _, 0)));
        using FragB = decltype(mma.get_slice(0).partition_fragment_B(sB(_, _, 0)));
        using SmallA = decltype(make_fragment_like(FragA{}(_, _, 0)));
        using SmallB = decltype(make_fragment_like(FragB{}(_, _, 0)));
        std::vector<FragA> fa(kThreads);
        std::vector<FragB> fb(kThreads);
        std::vector<SmallA> sa(kThreads);
        std::vector<SmallB> sb(kThreads);
        constexpr int K_BLOCK_MAX = decltype(size<2>(FragA{}))::value;

        // smem -> registers for k-block kb of stage pipe, every thread: each copy atom
        // (ldmatrix: 32 threads; a 32-bit load: one) moves 32-bit words from its source
        // threads' values to its destination threads' values as the atom's traits map
        // both to the atom's words (SrcLayout, DstLayout, in bits)
        int kb_cur = 0, pipe_cur = 0;
        auto s2r_one = [&](auto tiled, auto &smem_t, auto &frags) {
            using Traits = typename decltype(tiled)::Traits;
            constexpr int athr = size(typename Traits::ThrID{});
            for (int t0 = 0; t0 < kThreads; t0 += athr) {
                auto slice0 = tiled.get_thread_slice(t0);
                Tensor shape_src = slice0.partition_S(smem_t)(_, _, kb_cur, pipe_cur);
                const int nv = int(size<0>(shape_src)), ncall = int(size(shape_src)) / nv;
                for (int c = 0; c < ncall; ++c) {
                    std::vector<float> word(size_t(athr * nv), NAN);
                    for (int s = 0; s < athr; ++s) {
                        Tensor src = tiled.get_thread_slice(t0 + s).partition_S(smem_t)(_, _, kb_cur, pipe_cur);
                        for (int j = 0; j < nv; ++j)
                            word[size_t(typename Traits::SrcLayout{}(s, j * 32) / 32)] = src(j + c * nv);
                    }
                    for (int d = 0; d < athr; ++d) {
                        Tensor dst = tiled.get_thread_slice(t0 + d).retile_D(frags[t0 + d])(_, _, kb_cur);
                        for (int j = 0; j < nv; ++j)
                            dst(j + c * nv) =
                                tfloat32_t::bitcast(bits(word[size_t(typename Traits::DstLayout{}(d, j * 32) / 32)]));
                    }
                }
            }
        };
        auto s2r = [&](int pipe, int kb) {
            kb_cur = kb;
            pipe_cur = pipe;
            s2r_one(make_tiled_copy_A(typename SmemA::S2R{}, mma), sA, fa);
            s2r_one(make_tiled_copy_B(typename SmemB::S2R{}, mma), sB, fb);
            // what the MMA will read: every thread's fragment as the TiledMMA partitions smem
            for (int t = 0; t < kThreads; ++t) {
                auto thr = mma.get_slice(t);
                Tensor wa = thr.partition_A(sA)(_, _, kb, pipe);
                Tensor ra = fa[t](_, _, kb);
                for (int i = 0; i < int(size(wa)); ++i)
                    if (bits(wa(i)) != ra(i).raw())
                        fail("a register of A differs from the MMA's partition of smem", t, i, kb);
                Tensor wb = thr.partition_B(sB)(_, _, kb, pipe);
                Tensor rb = fb[t](_, _, kb);
                for (int i = 0; i < int(size(wb)); ++i)
                    if (bits(wb(i)) != rb(i).raw())
                        fail("a register of B differs from the MMA's partition of smem", t, i, kb);
            }
        };

        int pipe_read = 0, pipe_write = kStages - 1;
        int pipe_p = pipe_read;  // the stage tCsA_p / tCsB_p point at
        wait_all_but(kStages - 2);
        s2r(pipe_p, 0);
        for (; k_tile_count > -(kStages - 1); --k_tile_count) {
            for (int k_block = 0; k_block < K_BLOCK_MAX; ++k_block) {
                if (k_block == K_BLOCK_MAX - 1) {
                    pipe_p = pipe_read;
                    wait_all_but(kStages - 2);
                }
                const int k_next = (k_block + 1) % K_BLOCK_MAX;
                s2r(pipe_p, k_next);
                if (k_block == 0) {
                    if (k_tile_count <= 0)
                        clear_preds();
                    load(k_tile, pipe_write, false);
                    ++k_tile;
                    pipe_write = pipe_read;
                    pipe_read = pipe_read == kStages - 1 ? 0 : pipe_read + 1;
                }
                if (CGR_PREC == 2) {
                    if (k_block % 2 == 1)
                        mma_pair_block(k_block, fa, fb, acc);
                } else {
                    for (int t = 0; t < kThreads; ++t) {
                        split_tf32(fa[t](_, _, k_block), sa[t]);
                        split_tf32(fb[t](_, _, k_block), sb[t]);
                    }
                    mma_block(k_block, fa, fb, sa, sb, acc);
                }
            }
        }
        wait_all_but(0);
    }

    // the epilogue, as the kernel writes it
    const int64_t row0 = int64_t(batch) * kM;
    if constexpr (kRowRed != 0 && !kGroupNorm) {
        // row_partials: every thread's partial of each of its rows, the quads' butterfly
        // (shfl_xor 1, then 2), lane 0 of each quad into red[slot][row in tile]
        std::vector<Stat> red(size_t(kWN) * kBM, Stat{ NAN, NAN });
        std::vector<int> written(size_t(kWN) * kBM, 0);
        const int nm = int(size<1>(acc[0]));
        std::vector<Stat> st(size_t(kThreads) * nm * 2);
        for (int t = 0; t < kThreads; ++t) {
            Tensor tCcC = acc_coords(t, tm, tn);
            for (int mi = 0; mi < nm; ++mi)
                for (int h = 0; h < 2; ++h) {
                    st[(size_t(t) * nm + mi) * 2 + h] = row_thread_partial(p, acc[t], tCcC, row0, mi, h);
                    const int m = get<0>(tCcC(2 * h, mi, 0));
                    for (int ni = 0; ni < int(size<2>(acc[t])); ++ni)
                        for (int v = 2 * h; v < 2 * h + 2; ++v)
                            if (get<0>(tCcC(v, mi, ni)) != m)
                                fail("accumulators 2h and 2h+1 of a thread are not on one row", t, mi, v);
                }
        }
        for (int o = 1; o <= 2; o *= 2) {
            std::vector<Stat> before = st;
            for (int t = 0; t < kThreads; ++t)
                for (int j = 0; j < nm * 2; ++j)
                    st[size_t(t) * nm * 2 + j] = red_combine(before[size_t(t) * nm * 2 + j],
                                                             before[size_t(t ^ o) * nm * 2 + j]);
        }
        for (int t = 0; t < kThreads; t += 4) {
            Tensor tCcC = acc_coords(t, tm, tn);
            const int slot = row_slot(t);
            for (int mi = 0; mi < nm; ++mi)
                for (int h = 0; h < 2; ++h) {
                    const int r = get<0>(tCcC(2 * h, mi, 0)) - tm * kBM;
                    for (int q = 1; q < 4; ++q)  // the quad shares the row
                        if (get<0>(acc_coords(t + q, tm, tn)(2 * h, mi, 0)) != r + tm * kBM)
                            fail("the lanes of a quad are on different rows", t, mi, h);
                    red[size_t(slot) * kBM + r] = st[(size_t(t) * nm + mi) * 2 + h];
                    written[size_t(slot) * kBM + r]++;
                }
        }
        for (size_t i = 0; i < written.size(); ++i)
            if (written[i] != 1)
                fail("a (slot, row) of the row partials is written other than once", int(i / kBM), int(i % kBM),
                     written[i]);
        for (int t = 0; t < kThreads; ++t)
            row_store(p, tm, tn, row0, t, red.data());
        return;
    }
    for (int t = 0; t < kThreads; ++t) {
        Tensor tCcC = acc_coords(t, tm, tn);
        AccT &a = acc[t];
        if constexpr (kGroupNorm)
            pre_tile(p, a, tCcC, row0);  // GroupNorm's scratch, stored raw below
        if constexpr (kSplit > 1) {
            float *W = p.out + (int64_t(split) * kBatch + batch) * int64_t(kM) * kN;
            for (int i = 0; i < int(size(a)); ++i) {
                const int m = get<0>(tCcC(i)), n = get<1>(tCcC(i));
                if (m < kM && n < kN)
                    W[int64_t(m) * kN + n] = a(i);
            }
        } else {
            float *C = p.out + row0 * kN;
            // an output finished as store_tile finishes it: its inputs, then finished()
            auto fin = [&](float acc, int64_t row, int m, int n) {
                float x[kNin > 0 ? kNin : 1] = {};
                if (!kGroupNorm)
                    inputs_at(p, row, n, x);
                return finished<kGroupNorm>(acc, m, n, x);
            };
            for (int mi = 0; mi < int(size<1>(a)); ++mi)
                for (int ni = 0; ni < int(size<2>(a)); ++ni)
                    for (int v = 0; v < int(size<0>(a)); v += 2) {
                        const int m0 = get<0>(tCcC(v, mi, ni)), n0 = get<1>(tCcC(v, mi, ni));
                        const int m1 = get<0>(tCcC(v + 1, mi, ni)), n1 = get<1>(tCcC(v + 1, mi, ni));
                        if (kN % 2 == 0 && m1 == m0 && n1 == n0 + 1 && (n0 & 1) == 0) {
                            if (m0 < kM && n1 < kN) {
                                if ((int64_t(m0) * kN + n0) % 2)
                                    fail("a float2 store is not 8-byte aligned", m0, n0);
                                C[int64_t(m0) * kN + n0] = fin(a(v, mi, ni), row0 + m0, m0, n0);
                                C[int64_t(m1) * kN + n1] = fin(a(v + 1, mi, ni), row0 + m1, m1, n1);
                            }
                        } else {
                            if (m0 < kM && n0 < kN)
                                C[int64_t(m0) * kN + n0] = fin(a(v, mi, ni), row0 + m0, m0, n0);
                            if (m1 < kM && n1 < kN)
                                C[int64_t(m1) * kN + n1] = fin(a(v + 1, mi, ni), row0 + m1, m1, n1);
                        }
                    }
            // the template's own store_tile (its chunks of inputs loaded before the stores)
            // into the shadow output, compared with C after the run
            Params s = p;
            s.out = g_shadow.data();
            store_tile<kGroupNorm>(s, a, tCcC, row0);
            g_shadow_used = true;
        }
    }
}

// ---------------------------------------------------------------- tensors

#define CGR_KIND_OF(i, k) k,
const int kKinds[] = { CGR_INPUTS(CGR_KIND_OF) 0 };
#undef CGR_KIND_OF

int64_t span_of(int i)
{
    int64_t e = 1;
    for (int d = 0; d < kInNdim[i]; ++d)
        e += (kInShape[i][d] - 1) * kInStride[i][d];
    return e;
}

// Input i's value at the output's multi-index (broadcast by its own shape and strides).
float bcast(const std::vector<std::vector<float>> &in, int i, const int64_t *oidx, int ondim)
{
    int64_t off = 0;
    const int lead = ondim - kInNdim[i];
    for (int d = 0; d < kInNdim[i]; ++d)
        if (kInShape[i][d] != 1)
            off += oidx[d + lead] * kInStride[i][d];
    return in[i][off];
}

#ifdef CGR_PW_X
// A pointwise convolution run as its GEMM (src/recipe_conv.c recipe_conv_as_gemm): the
// reference convolves x and the weight through their own shapes and strides, not through
// the GEMM's M, N, K, leading and batch strides, so that a wrong mapping shows:
// y[b, co, pixel] = sum_ci w[co, ci] x[b, ci, pixel] (transposed: w[ci, co]).
double pointwise_conv(const std::vector<std::vector<float>> &in, int b, int co, int pixel)
{
    const int64_t *xs = kInShape[CGR_PW_X], *xst = kInStride[CGR_PW_X], *wst = kInStride[CGR_PW_W];
    const int xnd = kInNdim[CGR_PW_X];
    int64_t xoff = int64_t(b) * xst[0], r = pixel;
    for (int d = xnd - 1; d >= 2; --d) {
        xoff += (r % xs[d]) * xst[d];
        r /= xs[d];
    }
    const int64_t cin = xs[1];
    double dot = 0;
    for (int64_t ci = 0; ci < cin; ++ci) {
        const int64_t woff = CGR_PW_TRANSPOSED ? ci * wst[0] + co * wst[1] : co * wst[0] + ci * wst[1];
        dot += double(in[CGR_PW_X][size_t(xoff + ci * xst[1])]) * double(in[CGR_PW_W][size_t(woff)]);
    }
    return dot;
}
#endif

}  // namespace

int main()
{
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> uni(-1.f, 1.f);
    std::vector<std::vector<float>> in(kNin);
    Params p{};
    for (int i = 0; i < kNin; ++i) {
        in[i].resize(size_t(span_of(i)));
        for (float &v : in[i])
            v = uni(rng);
        p.in[i] = in[i].data();
    }
    const int ondim = CGR_OUT_NDIM;
    int64_t total = 1;
    for (int d = 0; d < ondim; ++d)
        total *= kOutShape[d];
    const bool reduced = kRowRed != 0 && !kSoft && !kGroupNorm && !kBcast;
    if (total != (reduced ? kRows : kBcast ? kRows * kFullW : int64_t(kBatch) * kM * kN)) {
        fprintf(stderr, "emu: the output has %lld elements, batch x M x N is %lld\n", (long long)total,
                (long long)(int64_t(kBatch) * kM * kN));
        return 1;
    }
    std::vector<float> out(size_t(total), NAN);
    std::vector<float> ws(kSplit > 1 ? size_t(kSplit) * size_t(total) : 0, NAN);
    std::vector<float> rws(kPartFloats + kStatFloats + 1, NAN);
    p.out = kSplit > 1 ? ws.data() : out.data();
    p.ws = rws.data();
    g_shadow.assign(size_t(kSplit > 1 ? 0 : total), NAN);
    {
        Cta cta;
        std::vector<char> seen(kTiles, 0);
        for (int pid = 0; pid < kTiles; ++pid) {
            int tm, tn;
            tile_coord(pid, tm, tn);
            if (tm < 0 || tm >= kTilesM || tn < 0 || tn >= kTilesN || seen[tm * kTilesN + tn]++)
                fail("tile_coord is not a bijection", pid, tm, tn);
        }
        for (int b = 0; b < kBatch; ++b)
            for (int s = 0; s < kSplit; ++s)
                for (int pid = 0; pid < kTiles; ++pid)
                    run_cta(p, pid, b, s, cta);
    }
    if (g_shadow_used && std::memcmp(g_shadow.data(), out.data(), out.size() * sizeof(float)) != 0) {
        size_t i = 0;
        while (i < out.size() && std::memcmp(&g_shadow[i], &out[i], sizeof(float)) == 0)
            ++i;
        fail("store_tile's output differs from the emulated stores at element", int(i));
    }
    if (kSplit > 1) {  // splitk_kernel
        Params q = p;
        q.out = out.data();
        for (int64_t i = 0; i < total; ++i) {
            float s = 0.f;
            for (int k = 0; k < kSplit; ++k)
                s += ws[size_t(k * total + i)];
            const int64_t row = i / kN;
            const int n = int(i - row * kN);
            const int m = int(row % kM);
            out[size_t(i)] = finish(q, s, row, m, n);
        }
    }
    if constexpr (kGroupNorm) {  // gn_kernel: a group's mean, then its deviations, in fp32
        for (int64_t g = 0; g < kGnGroups; ++g) {
            const int64_t row = g / (kN / kGnGroup);
            const int n0 = int(g % (kN / kGnGroup)) * kGnGroup;
            float *o = p.out + row * kN + n0;
            float s = 0.f, q = 0.f;
            for (int c = 0; c < kGnGroup; ++c)
                s += o[c];
            const float mean = s / float(kGnGroup);
            for (int c = 0; c < kGnGroup; ++c)
                q += (o[c] - mean) * (o[c] - mean);
            const float rstd = 1.f / std::sqrt(q / float(kGnGroup) + float(CGR_GN_EPS));
            for (int c = 0; c < kGnGroup; ++c)
                o[c] = gn_value(p, o[c], mean, rstd, row, n0 + c);
        }
    } else if constexpr (kRowRed != 0) {  // row_kernel, soft_kernel
        for (int64_t row = 0; row < kRows; ++row)
            row_finish(p, row);
        if constexpr (kSoft)
            for (int64_t i = 0; i < kRows * kN; ++i)
                soft_finish(p, i);
        if constexpr (kBcast)  // bcast_kernel
            for (int64_t i = 0; i < kRows * int64_t(kFullW); ++i) {
                const int64_t row = i / kFullW;
                p.out[i] = post_value(p, p.ws[kPartFloats + row], row, int(i - row * kFullW));
            }
    }
    if (errors)
        return 1;

    // the reference: the product in double from the operands' memory, then the epilogue
    const float *A = in[CGR_A].data(), *B = in[CGR_B].data();
    double worst = 0;
    int64_t bad = 0;
    std::vector<int64_t> oidx(ondim > 0 ? ondim : 1);
    std::vector<float> x(kNin > 0 ? kNin : 1);
    // the product's values through the mask and cgr_pre, in double, row by row; then the
    // reduction (if any) in double and cgr_epi
    std::vector<double> vals = std::vector<double>(size_t(kN));
    auto check = [&](int64_t i, double want, int b, int m, int n) {
        const double got = out[size_t(i)];
        const double err = std::fabs(got - want) / (1e-4 + 1e-4 * std::fabs(want));
        if (!(err <= (CGR_PREC != 1 ? 1.0 : 200.0))) {
            if (bad++ < 8)
                fprintf(stderr, "emu: output %lld (batch %d, m %d, n %d): got %.7g, want %.7g\n", (long long)i, b, m,
                        n, got, want);
        }
        if (err > worst || std::isnan(err))
            worst = std::isnan(err) ? INFINITY : err;
    };
    // inputs broadcast to the product's shape (batch dims, M, N) or to the output's
    auto inputs_at = [&](int64_t flat, const int64_t *shape, int nd) {
        int64_t r = flat;
        for (int d = nd - 1; d >= 0; --d) {
            oidx[size_t(d)] = r % shape[d];
            r /= shape[d];
        }
        // one value a channel of a pointwise convolution (its bias [COUT]: PyTorch adds it
        // per channel, not broadcast from the right), contiguous: element m
        const int64_t m = flat / kN % kM;
        for (int j = 0; j < kNin; ++j)
            x[size_t(j)] = kKinds[j] == CGR_GE_MROW ? in[j][size_t(m)]
                           : kKinds[j] >= CGR_GE_FULL ? bcast(in, j, oidx.data(), nd) : 0.f;
    };
    // the product's shape (torch's matmul result)
    const int64_t pshape_c[] = CGR_PROD_SHAPE;
    const int pnd = CGR_PROD_NDIM;
    std::vector<int64_t> pshape(pshape_c, pshape_c + pnd);
    oidx.resize(size_t(pnd > ondim ? pnd : ondim) + 1);
    for (int64_t row = 0; row < kRows; ++row) {
        const int m = int(row % kM), b = int(row / kM);
        for (int n = 0; n < kN; ++n) {
            double dot = 0;
#ifdef CGR_PW_X
            dot = pointwise_conv(in, b, m, n);
            (void)A, (void)B;
#else
            for (int k = 0; k < kK; ++k) {
                const double a = A[b * int64_t(CGR_A_BSTRIDE) + (kAKMajor ? int64_t(m) * CGR_LDA + k : int64_t(k) * CGR_LDA + m)];
                const double bv = B[b * int64_t(CGR_B_BSTRIDE) + (kBKMajor ? int64_t(n) * CGR_LDB + k : int64_t(k) * CGR_LDB + n)];
                dot += a * bv;
            }
#endif
            if (!kept(m, n))
                dot = 0;
            inputs_at(row * kN + n, pshape.data(), pnd);
            vals[size_t(n)] = kRowRed ? double(cgr_pre(float(dot), x.data())) : double(cgr_epi(float(dot), x.data()));
        }
        if (kRowRed == 0) {
            for (int n = 0; n < kN; ++n)
                check(row * kN + n, vals[size_t(n)], b, m, n);
            continue;
        }
        double mx = -INFINITY, mn = INFINITY, sum = 0;
        for (int n = 0; n < kN; ++n) {
            mx = std::max(mx, vals[size_t(n)]);
            mn = std::min(mn, vals[size_t(n)]);
            sum += vals[size_t(n)];
        }
        if (kGroupNorm) {
            for (int n0 = 0; n0 < kN; n0 += kGnGroup) {
                double gs = 0, gq = 0;
                for (int c = 0; c < kGnGroup; ++c)
                    gs += vals[size_t(n0 + c)];
                const double mean = gs / kGnGroup;
                for (int c = 0; c < kGnGroup; ++c)
                    gq += (vals[size_t(n0 + c)] - mean) * (vals[size_t(n0 + c)] - mean);
                const double rstd = 1.0 / std::sqrt(gq / kGnGroup + CGR_GN_EPS);
                for (int c = 0; c < kGnGroup; ++c) {
                    inputs_at(row * kN + n0 + c, pshape.data(), pnd);
                    check(row * kN + n0 + c, cgr_epi(float((vals[size_t(n0 + c)] - mean) * rstd), x.data()), b, m,
                          n0 + c);
                }
            }
            continue;
        }
        double se = 0;
        for (int n = 0; n < kN; ++n)
            se += std::exp(vals[size_t(n)] - mx);
        if (kSoft) {
            for (int n = 0; n < kN; ++n) {
                const double r = kRowRed == CGR_RR_SOFTMAX ? std::exp(vals[size_t(n)] - mx) / se
                                                           : vals[size_t(n)] - mx - std::log(se);
                inputs_at(row * kN + n, pshape.data(), pnd);
                check(row * kN + n, cgr_epi(float(r), x.data()), b, m, n);
            }
            continue;
        }
        const double r = kRowRed == CGR_RR_SUM ? sum : kRowRed == CGR_RR_MEAN ? sum / kN
                       : kRowRed == CGR_RR_MAX ? mx : kRowRed == CGR_RR_MIN ? mn : mx + std::log(se);
        if (kBcast) {  // the reduced value over the output's row, with its inputs there
            for (int j = 0; j < kFullW; ++j) {
                inputs_at(row * kFullW + j, kOutShape, ondim);
                check(row * kFullW + j, cgr_epi(float(r), x.data()), b, m, j);
            }
            continue;
        }
        inputs_at(row, kOutShape, ondim);
        check(row, cgr_epi(float(r), x.data()), b, m, 0);
    }
    printf("emu: %lld outputs, max error / fp32 tolerance %.3g, %lld bad (%s)\n", (long long)total, worst,
           (long long)bad, CGR_PREC == 0 ? "3xTF32" : CGR_PREC == 2 ? "3xFP16" : "TF32");
    return bad ? 1 : 0;
}
