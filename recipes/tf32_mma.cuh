// recipes/tf32_mma.cuh: fp32 products on TF32 (or, split, fp16) tensor cores (mma.sync), shared by the
// GEMM (gemm_tc.cu) and implicit-GEMM convolution (conv_tc.cu) templates. Inlined by
// the generator inside each template's namespace; it needs CGR_PREC (0 = 3xTF32 split
// precision, 1 = plain TF32, 2 = 3xFP16 split precision) and `using namespace cute` in
// scope. The functions take the precision as a template argument (default CGR_PREC), so
// that a kernel can run its main loop again in another precision (CGR_PREC 2's redo).
//
// Precision: with CGR_PREC 0 each operand value x is split into big = x with its low 13
// mantissa bits cleared (exact in TF32) and small = tf32_rna(x - big); a*b is taken as
// a_s*b + a*b_s + a*b (the small*small term is below fp32's rounding).
//
// Accumulation: a tensor core adds its products into the accumulator with truncation
// (round toward zero; Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA
// tensor cores", PeerJ CS 2021). Chained over all of K that biases every output toward
// zero by about 2e-8 x K of its size: 1.6e-4 at K = 8192 on KernelBench's all-positive
// inputs, past the 1e-4 tolerance (measured on the H200, docs/perf.md). So each k-block
// (8 of K) of one MMA atom goes into a zeroed partial first (1 or 3 truncating adds,
// relative to a partial only), which is then added to the accumulator in ordinary fp32
// arithmetic (round to nearest). CGR_PROMOTE 2 does the same a k-tile at a time (the
// kernel keeps a second accumulator, acc_tile, and calls promote_tile after each tile's
// last k-block: fewer adds, more registers). CGR_PROMOTE 0 chains into the accumulator
// (the bias stays under ~4e-5 for K <= 2048; the generator picks it only there).
#ifndef CGR_PROMOTE
#define CGR_PROMOTE 1
#endif

// 3xFP16's scale of an operand whose largest |x| is amax (the split-first WGMMA GEMM and
// convolution: gemm_wgmma.cu, conv_tc.cu CGR_WGMMA): 2^(14 - floor(log2 amax)), so that amax s
// lies in [2^14, 2^15); 1 for 0, infinities and NaN (their products are not finite anyway).
CUTE_HOST_DEVICE float f16_scale(float amax)
{
    if (!(amax > 0.f) || !isfinite(amax))
        return 1.f;
    // at most 2^126: below 2^-112 (a tile of tiny or subnormal values) 2^(14 - ilogb)
    // would be inf, and the tile's zeros NaN
    const int e = 14 - ilogbf(amax);
    return ldexpf(1.f, e < 126 ? e : 126);
}

// Whether the fp32 value with these bits is finite (its exponent is not all ones).
CUTE_HOST_DEVICE bool finite_bits(uint32_t u)
{
    return (u & 0x7f800000u) != 0x7f800000u;
}

// x rounded to the nearest TF32 value (ties away from zero), low 13 bits zero.
CUTE_HOST_DEVICE uint32_t tf32_rna(float x)
{
#if defined(__CUDA_ARCH__)
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
#else
    uint32_t u;
    memcpy(&u, &x, 4);
    if (finite_bits(u))  // round the magnitude half up
        u += 0x1000u;
    return u & 0xffffe000u;
#endif
}

CUTE_HOST_DEVICE float as_float(uint32_t u)
{
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, 4);
    return f;
#endif
}

// In place: big = x with its low 13 mantissa bits cleared (exact in TF32); small =
// tf32(x - big) (x - big is exact). With CGR_PREC 1: big = tf32_rna(x), small untouched.
template <int P = CGR_PREC, class TBig, class TSmall>
CUTE_HOST_DEVICE void split_tf32(TBig &&big, TSmall &&small)
{
    CUTE_UNROLL
    for (int i = 0; i < size(big); ++i) {
        const uint32_t x = big(i).raw();
        if constexpr (P == 0) {
            const uint32_t hi = x & 0xffffe000u;
            small(i) = tfloat32_t::bitcast(tf32_rna(as_float(x) - as_float(hi)));
            big(i) = tfloat32_t::bitcast(hi);
        } else {
            big(i) = tfloat32_t::bitcast(tf32_rna(as_float(x)));
        }
    }
}

// acc += A(k-block) B(k-block)^T for one k-block of the thread's fragments: a (MMA,MMA_M)
// and b (MMA,MMA_N) already split (big parts), a_s (MMA,MMA_M) and b_s (MMA,MMA_N) the
// small parts, acc (MMA,MMA_M,MMA_N). The small products first, then the big one.
template <int P = CGR_PREC, class Mma, class TA, class TAs, class TB, class TBs, class TC>
CUTE_HOST_DEVICE void mma_k_block(Mma const &mma, TA const &a, TAs const &a_s, TB const &b, TBs const &b_s,
                                  TC &acc)
{
    if constexpr (CGR_PROMOTE != 1) {
        if constexpr (P == 0) {
            gemm(mma, a_s, b, acc);
            gemm(mma, a, b_s, acc);
        }
        gemm(mma, a, b, acc);
    } else {
        CUTE_UNROLL
        for (int m = 0; m < size<1>(acc); ++m) {
            CUTE_UNROLL
            for (int n = 0; n < size<2>(acc); ++n) {
                auto part = make_fragment_like(acc(_, m, n));  // (MMA)
                clear(part);
                if constexpr (P == 0) {
                    gemm(mma, a_s(_, m), b(_, n), part);
                    gemm(mma, a(_, m), b_s(_, n), part);
                }
                gemm(mma, a(_, m), b(_, n), part);
                CUTE_UNROLL
                for (int v = 0; v < size(part); ++v)
                    acc(v, m, n) += part(v);
            }
        }
    }
}

// CGR_PROMOTE 2, after the last k-block of a k-tile: acc += acc_tile (fp32, round to
// nearest), acc_tile = 0.
template <class TC, class TT>
CUTE_HOST_DEVICE void promote_tile(TC &acc, TT &acc_tile)
{
    if constexpr (CGR_PROMOTE == 2) {
        CUTE_UNROLL
        for (int i = 0; i < size(acc); ++i) {
            acc(i) += acc_tile(i);
            acc_tile(i) = 0.f;
        }
    }
}

// The accumulator the MMAs of a k-block add into: acc_tile with CGR_PROMOTE 2, else acc.
template <class TC, class TT>
CUTE_HOST_DEVICE auto &mma_target(TC &acc, TT &acc_tile)
{
    if constexpr (CGR_PROMOTE == 2)
        return acc_tile;
    else
        return acc;
}

// ---------------------------------------------------------------- CGR_PREC 2: 3xFP16
//
// Each operand value x is split into hi = fp16(x) and lo = fp16((x - hi) * 2^11) (x - hi
// is exact in fp32, the scale a power of two), and a*b is taken as a_h*b_h + 2^-11 (a_h*b_l
// + a_l*b_h) on mma.sync m16n8k16 f16 with fp32 accumulation: fp16 products are exact in
// fp32, hi and lo carry 11 significant bits each, so the result is as exact as 3xTF32's
// (the dropped a_l*b_l is ~2^-22 relative), at half the MMA issues (k16 an instruction
// instead of k8) and half the partial adds. Where hi is subnormal (|x| < 2^-14) the split
// still holds x to ~2^-36 absolute. The limit is fp16's range: |x| >= 65520 gives hi = inf
// and the accumulators inf or NaN. A kernel using it therefore checks its accumulators
// after the main loop and runs the loop again in 3xTF32 when any is not finite (so
// inputs past fp16's range, inf or NaN cost a second pass and are never wrong).
//
// No new shared-memory layout: two consecutive k-blocks of the TF32 fragments (k 0-7 and
// 8-15 of a 16-wide block) are repacked into one f16 fragment. A thread holds A at rows
// (g, g+8) and k (t, t+4) of each TF32 block and B at k (t, t+4) of column g (g = lane/4, t
// = lane%4); the f16 atom wants k (2t, 2t+1, 2t+8, 2t+9). Since k only indexes the sum,
// any permutation used by both operands gives the same product: f16 slot 2t <- k t, 2t+1
// <- t+4, 2t+8 <- 8+t, 2t+9 <- 12+t, for A and for B alike.
constexpr float kF16LoScale = 2048.f;         // 2^11
constexpr float kF16LoUnscale = 1.f / 2048.f;

// hi and lo of two values, each pair packed as an f16x2 register (x in the low half).
CUTE_HOST_DEVICE void split_f16x2(float x, float y, uint32_t &hi, uint32_t &lo)
{
    const __half2 h = __floats2half2_rn(x, y);
    const float2 hf = __half22float2(h);
    const __half2 l = __floats2half2_rn((x - hf.x) * kF16LoScale, (y - hf.y) * kF16LoScale);
    memcpy(&hi, &h, 4);
    memcpy(&lo, &l, 4);
}

// One f16 k-block's A registers of MMA row m from TF32 k-blocks k0 (a0) and k1 (a1):
// TF32 value order (g,t), (g+8,t), (g,t+4), (g+8,t+4).
template <class TA>
CUTE_HOST_DEVICE void split_f16_a(TA const &a0, TA const &a1, int m, uint32_t (&hi)[4], uint32_t (&lo)[4])
{
    split_f16x2(as_float(a0(0, m).raw()), as_float(a0(2, m).raw()), hi[0], lo[0]);
    split_f16x2(as_float(a0(1, m).raw()), as_float(a0(3, m).raw()), hi[1], lo[1]);
    split_f16x2(as_float(a1(0, m).raw()), as_float(a1(2, m).raw()), hi[2], lo[2]);
    split_f16x2(as_float(a1(1, m).raw()), as_float(a1(3, m).raw()), hi[3], lo[3]);
}

// The same for B's column n: TF32 value order (k t), (k t+4).
template <class TB>
CUTE_HOST_DEVICE void split_f16_b(TB const &b0, TB const &b1, int n, uint32_t (&hi)[2], uint32_t (&lo)[2])
{
    split_f16x2(as_float(b0(0, n).raw()), as_float(b0(1, n).raw()), hi[0], lo[0]);
    split_f16x2(as_float(b1(0, n).raw()), as_float(b1(1, n).raw()), hi[1], lo[1]);
}

// d += a b for one m16n8k16 f16 atom (the host emulator, which has no warp, rebuilds a
// warp's atom from split_f16_a/b instead of calling this).
CUTE_DEVICE void mma_f16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
{
    SM80_16x8x16_F32F16F16F32_TN::fma(d[0], d[1], d[2], d[3], a[0], a[1], a[2], a[3], b[0], b[1], d[0], d[1],
                                      d[2], d[3]);
}

// acc += A(k0, k1) B(k0, k1)^T: the TF32 fragments of two consecutive k-blocks, a0/a1
// (MMA,MMA_M) and b0/b1 (MMA,MMA_N) as loaded (unsplit), into acc (MMA,MMA_M,MMA_N). Each
// atom's products go into a zeroed partial (the corrections, scaled down, then the main
// product) that is added to acc in fp32, as CGR_PROMOTE 1 does for TF32.
//
// ASmall false (CGR_PREC 3, 2xFP16): a_l*b_h is left out, so A counts as rounded to fp16
// (11 significant bits, TF32's precision) and B is exact: two MMAs a 16-deep block, plain
// TF32's tensor-core time, half its error. Meant for products whose result is averaged
// over positions (a mean over a channel's pixels): A's (x's) rounding errors average away
// there, B's (a weight's, shared by every position) do not (session 22, docs/perf.md).
template <bool ASmall = true, class TA, class TB, class TC>
CUTE_HOST_DEVICE void mma_pair_f16(TA const &a0, TA const &a1, TB const &b0, TB const &b1, TC &acc)
{
    constexpr int MM = decltype(size<1>(acc))::value, NN = decltype(size<2>(acc))::value;
    // B's halves for all columns, A's one row of atoms at a time (fewer live registers:
    // a 64 x 64 warp tile would otherwise hold 64 of them here)
    uint32_t bh[NN][2], bl[NN][2];
    CUTE_UNROLL
    for (int n = 0; n < NN; ++n)
        split_f16_b(b0, b1, n, bh[n], bl[n]);
    CUTE_UNROLL
    for (int m = 0; m < MM; ++m) {
        uint32_t ah[4], al[4];
        split_f16_a(a0, a1, m, ah, al);
        CUTE_UNROLL
        for (int n = 0; n < NN; ++n) {
            float d[4] = { 0.f, 0.f, 0.f, 0.f };
            mma_f16(d, ah, bl[n]);
            if constexpr (ASmall)
                mma_f16(d, al, bh[n]);
            CUTE_UNROLL
            for (int v = 0; v < 4; ++v)
                d[v] *= kF16LoUnscale;
            mma_f16(d, ah, bh[n]);
            CUTE_UNROLL
            for (int v = 0; v < 4; ++v)
                acc(v, m, n) += d[v];
        }
    }
}

// One k-block KB of a main loop in precision P, into target (acc, or acc_tile with
// CGR_PROMOTE 2): 3xFP16 takes the k-blocks in pairs, at the odd one; the others split
// KB's fragments in place (small parts into a_s, b_s) and multiply them.
template <int P, int KB, class Mma, class TA, class TB, class TAs, class TBs, class TC>
CUTE_HOST_DEVICE void mma_step(Mma const &mma, TA &a, TB &b, TAs &a_s, TBs &b_s, TC &target)
{
    if constexpr (P == 2 || P == 3) {
        if constexpr (KB % 2 == 1)
            mma_pair_f16<P == 2>(a(_, _, KB - 1), a(_, _, KB), b(_, _, KB - 1), b(_, _, KB), target);
    } else {
        split_tf32<P>(a(_, _, KB), a_s);
        split_tf32<P>(b(_, _, KB), b_s);
        mma_k_block<P>(mma, a(_, _, KB), a_s, b(_, _, KB), b_s, target);
    }
}

// True when every accumulator is finite (CGR_PREC 2 and 3: otherwise the loop runs again in 3xTF32).
template <class TC>
CUTE_HOST_DEVICE bool acc_finite(TC const &acc)
{
    bool ok = true;
    CUTE_UNROLL
    for (int i = 0; i < size(acc); ++i) {
        const float x = acc(i);
        uint32_t u;
        memcpy(&u, &x, 4);
        ok &= finite_bits(u);
    }
    return ok;
}

// CGR_PREC 2 and 3, after the 3xFP16 (2xFP16) main loop (every thread of the CTA): an operand past fp16's
// range (or inf/NaN) left an accumulator not finite, so the tile runs again in 3xTF32.
template <class TC, class TT, class Loop>
CUTE_DEVICE void redo_unless_finite(TC &acc, TT &acc_tile, Loop &&mainloop)
{
    if (__syncthreads_or(!acc_finite(acc))) {
        clear(acc);
        clear(acc_tile);
        mainloop(Int<0>{});
    }
}
