// recipes/tf32_mma.cuh: fp32 products on TF32 tensor cores (mma.sync), shared by the
// GEMM (gemm_tc.cu) and implicit-GEMM convolution (conv_tc.cu) templates. Inlined by
// the generator inside each template's namespace; it needs CGR_PREC (0 = 3xTF32 split
// precision, 1 = plain TF32) and `using namespace cute` in scope.
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
    if ((u & 0x7f800000u) != 0x7f800000u)  // finite: round the magnitude half up
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
template <class TBig, class TSmall>
CUTE_HOST_DEVICE void split_tf32(TBig &&big, TSmall &&small)
{
    CUTE_UNROLL
    for (int i = 0; i < size(big); ++i) {
        const uint32_t x = big(i).raw();
        if constexpr (CGR_PREC == 0) {
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
template <class Mma, class TA, class TAs, class TB, class TBs, class TC>
CUTE_HOST_DEVICE void mma_k_block(Mma const &mma, TA const &a, TAs const &a_s, TB const &b, TBs const &b_s,
                                  TC &acc)
{
    if constexpr (CGR_PROMOTE != 1) {
        if constexpr (CGR_PREC == 0) {
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
                if constexpr (CGR_PREC == 0) {
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
