// recipes/gemm_epi.cuh: the GEMM templates' epilogue, shared by gemm_tc.cu (mma.sync) and
// gemm_wgmma.cu (Hopper's warpgroup MMAs); inlined by the generator inside namespace
// cgr_gemm, after the problem's constants (kM, kN, kBM, kBN, kNin) and gemm_inputs.cuh. How an output element is finished (triangular mask, cgr_epi), the CTA
// tile order and the stores of C.

struct Params {
    const float *in[kNin > 0 ? kNin : 1];
    float *out;   // C, or the workspace (SPLITK partials)
    float *ws;    // row reductions: the workspace
};

// The triangular mask of the product (triu / tril with a diagonal offset).
CUTE_HOST_DEVICE bool kept(int m, int n)
{
    if constexpr (CGR_TRI == 1)
        return n - m >= CGR_TRI_DIAG;
    else if constexpr (CGR_TRI == 2)
        return n - m <= CGR_TRI_DIAG;
    else
        return true;
}

__device__ __forceinline__ float finish(const Params &p, float acc, int64_t row, int m, int n)
{
    if (!kept(m, n))
        acc = 0.f;
    float x[kNin > 0 ? kNin : 1];
    inputs_at(p, row, n, x);
    return cgr_epi(acc, x);
}


// An accumulator as stored: finished with its inputs x (loaded before), or (Raw) as it is.
template <bool Raw>
__device__ __forceinline__ float finished(float acc, int m, int n, const float (&x)[kNin > 0 ? kNin : 1])
{
    if constexpr (Raw)
        return acc;
    else
        return cgr_epi(kept(m, n) ? acc : 0.f, x);
}

constexpr int kTilesM = (kM + kBM - 1) / kBM, kTilesN = (kN + kBN - 1) / kBN;
constexpr int kTiles = kTilesM * kTilesN;

// CTA pid -> tile (tm, tn): GROUP tile-rows at a time, along N within a group.
CUTE_HOST_DEVICE void tile_coord(int pid, int &tm, int &tn)
{
    constexpr int group = CGR_GROUP < kTilesM ? CGR_GROUP : kTilesM;
    const int width = group * kTilesN;
    const int first_m = (pid / width) * group;
    const int gsize = kTilesM - first_m < group ? kTilesM - first_m : group;
    tm = first_m + (pid % width) % gsize;
    tn = (pid % width) / gsize;
}

// A tile wholly outside the kept triangle: nothing to multiply.
CUTE_HOST_DEVICE bool tile_skipped(int tm, int tn)
{
    if constexpr (CGR_TRI == 1)
        return (tn * kBN + kBN - 1) - tm * kBM < CGR_TRI_DIAG;
    else if constexpr (CGR_TRI == 2)
        return tn * kBN - (tm * kBM + kBM - 1) > CGR_TRI_DIAG;
    else
        return false;
}

// C is written once and not read back here: with CGR_STORE_STREAM the stores carry the
// evict-first hint, so a write-bound product (small K) does not push its inputs out of L2
// (H200, 9_Tall_skinny K 32: 2.189 ms -> 1.517 ms; docs/perf.md). The host emulator
// (CGR_GEMM_EMULATE, tests/cli/recipe_gemm_emu.cpp) runs store_tile with plain stores.
template <class V> __device__ __forceinline__ void store_c(V *dst, V v)
{
#if CGR_STORE_STREAM && !defined(CGR_GEMM_EMULATE)
    __stcs(dst, v);
#else
    *dst = v;
#endif
}


// C = the finished accumulators of one thread (Raw: the values as they are): acc
// (MMA,MMA_M,MMA_N) with the (m, n) of each in tCcC; pairs of neighbouring columns
// (values v, v + 1 of an atom) as float2. kEpiChunk accumulators of a row block at a time:
// all their inputs loaded, then their outputs stored (the compiler keeps a global load after
// a global store in that order, read-only loads too, so finishing output after output waited
// a memory round trip for each: conv_tc.cu's kEpiChunk).
#ifndef CGR_EPI_CHUNK
#define CGR_EPI_CHUNK 0  // outputs a thread loads the inputs of before storing any: 0, by the inputs an
#endif                   // output reads (epi_chunk); 1 or 2, the form before 12-07 (a pair at a time)
constexpr int kEpiChunk = epi_chunk(CGR_EPI_CHUNK) < 2 ? 2 : epi_chunk(CGR_EPI_CHUNK);
template <bool Raw = false, class Acc, class Coord>
__device__ __forceinline__ void store_tile(const Params &p, const Acc &acc, const Coord &tCcC, int64_t row0)
{
    float *C = p.out + row0 * kN;
    constexpr int kV = decltype(size<0>(acc))::value, kNi = decltype(size<2>(acc))::value;
    constexpr int kRow = kV * kNi;  // a row block's (mi's) accumulators
    constexpr int kChunk = 2 * cgr::divisor_at_most(kRow / 2, kEpiChunk / 2);  // pairs, whole chunks
    static_assert(kV % 2 == 0, "value pairs");
    CUTE_UNROLL
    for (int mi = 0; mi < size<1>(acc); ++mi) {
        CUTE_UNROLL
        for (int j0 = 0; j0 < kRow; j0 += kChunk) {
            float x[kChunk][kNin > 0 ? kNin : 1];
            if constexpr (!Raw) {
                CUTE_UNROLL
                for (int j = 0; j < kChunk; ++j) {
                    const int v = (j0 + j) % kV, ni = (j0 + j) / kV;
                    const int m = get<0>(tCcC(v, mi, ni)), n = get<1>(tCcC(v, mi, ni));
                    if (m < kM && n < kN)
                        inputs_at(p, row0 + m, n, x[j]);
                }
            }
            CUTE_UNROLL
            for (int j = 0; j < kChunk; j += 2) {
                const int v = (j0 + j) % kV, ni = (j0 + j) / kV;
                const int m0 = get<0>(tCcC(v, mi, ni)), n0 = get<1>(tCcC(v, mi, ni));
                const int m1 = get<0>(tCcC(v + 1, mi, ni)), n1 = get<1>(tCcC(v + 1, mi, ni));
                if (kN % 2 == 0 && m1 == m0 && n1 == n0 + 1 && (n0 & 1) == 0) {
                    if (m0 < kM && n1 < kN) {
                        float2 r;
                        r.x = finished<Raw>(acc(v, mi, ni), m0, n0, x[j]);
                        r.y = finished<Raw>(acc(v + 1, mi, ni), m1, n1, x[j + 1]);
                        store_c(reinterpret_cast<float2 *>(C + int64_t(m0) * kN + n0), r);
                    }
                } else {
                    if (m0 < kM && n0 < kN)
                        store_c(C + int64_t(m0) * kN + n0, finished<Raw>(acc(v, mi, ni), m0, n0, x[j]));
                    if (m1 < kM && n1 < kN)
                        store_c(C + int64_t(m1) * kN + n1, finished<Raw>(acc(v + 1, mi, ni), m1, n1, x[j + 1]));
                }
            }
        }
    }
}

