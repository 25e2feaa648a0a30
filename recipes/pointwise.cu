// recipes/pointwise.cu: one fused, vectorised pass for a pointwise chain.
//
// out = expr(in_0, ..., in_{n-1}) elementwise, where each input is either FULL (the
// output's shape, contiguous: loaded as 16-byte vectors), SCALAR (one element, a 0-dim
// tensor such as a Python float passed to forward(): read once per thread) or BCAST
// (broadcast to the output's shape by strides: stride 0 on the broadcast dimensions,
// the offset computed from the output index; read through a view with size-1 dims
// inserted where the model unsqueezed it, as in A.unsqueeze(1) * B). Math in float, one rounding at the store.
//
// Each CTA takes a tile of THREADS x UNROLL x VEC elements (VEC = 16 bytes of the output
// type), viewed through a CuTe layout (VEC, THREADS, UNROLL) so that in each of UNROLL
// steps neighbouring threads touch neighbouring 16-byte vectors (coalesced); all
// vectors of a thread are loaded before any is computed (bytes in flight). The last
// partial tile, and any call whose pointers are not 16-byte aligned, go element by element.
//
// With CGR_PW_EMULATE defined, the loads, the kernel and cg_forward are left out: the host
// emulator (tests/cli/recipe_pw_emu.cpp) checks the broadcast offsets.
//
// Named parameters (CGR_*): the generator (src/recipe_gen.c) writes them in place of the
// `recipe:params` line below; the defaults make this file compile on its own (y = relu(x)).
#include <cutegen/abi.h>
#include <cute/tensor_impl.hpp>  // make_tensor, layouts: CuTe's algorithms and atoms (cute/tensor.hpp) would
                                 // double the build (docs/build.md)
#include <type_traits>
#include "ops.cuh"  // recipe:inline

// recipe:params
#ifndef CGR_GENERATED
#define CGR_T float                 // output element type
#define CGR_OUT_DTYPE CG_FLOAT32
#define CGR_THREADS 256             // threads per CTA
#define CGR_UNROLL 4                // 16-byte vectors per thread
#define CGR_NIN 1                   // inputs of cg_forward (used or not)
// X(index, element type, kind, cg dtype, ndim, shape...)
#define CGR_INPUTS(X) X(0, float, CGR_FULL, CG_FLOAT32)
#define CGR_OUT_NDIM 2
#define CGR_OUT_SHAPE {4096, 393216}
#define CGR_IN_NDIMS {2}
#define CGR_IN_SHAPES {{4096, 393216}}
#define CGR_IN_UNSQ {0u}            // per input: size-1 dims inserted at these bits (x.unsqueeze(d))
__device__ __forceinline__ float cgr_expr(const float *x) { return cgr::relu(x[0]); }
#endif

// Cache policy of the 16-byte accesses. On the H200 (docs/perf.md, 2026-12-02, ReLU over
// 4096 x 393216 floats) plain loads and stores took 3.17 ms, streaming ones (.cs, this
// template's first choice) 3.34 ms, eager PyTorch 3.04 ms: the default is plain.
#ifndef CGR_PW_LOAD
#define CGR_PW_LOAD 2  // 16-byte loads: 0 streaming (ld.global.cs), 1 read-only (ld.global.nc),
                       // 2 plain, 3 ld.global.nc.L1::no_allocate.L2::256B (L2 fetches 256 B)
#endif
#ifndef CGR_PW_STORE
#define CGR_PW_STORE 1  // 16-byte stores: 0 streaming (st.global.cs), 1 plain
#endif

namespace cgr_pw {

using namespace cute;
using T = CGR_T;
constexpr int kThreads = CGR_THREADS;
constexpr int kUnroll = CGR_UNROLL;
constexpr int kVec = 16 / int(sizeof(T));
constexpr int kTile = kThreads * kUnroll * kVec;
constexpr int kNin = CGR_NIN;
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "threads per CTA");
static_assert(kUnroll >= 1 && kUnroll <= 16, "vectors per thread");

using cgr::CGR_UNUSED; using cgr::CGR_FULL; using cgr::CGR_SCALAR; using cgr::CGR_BCAST;

template <int I> struct In;
#define CGR_DEF_IN(i, ctype, k, dt) \
    template <> struct In<i> { using type = ctype; static constexpr int kind = k; static constexpr int dtype = dt; };
CGR_INPUTS(CGR_DEF_IN)
#undef CGR_DEF_IN

struct Args {
    const void *in[kNin];
    void *out;
    int64_t n;
    int ndim;
    int64_t oshape[CG_MAX_DIMS];
    int64_t bstride[kNin][CG_MAX_DIMS];  // per input, per output dim (0 where broadcast)
    bool rows_whole;                      // the last dim is whole 16-byte vectors: a vector
                                          // lies in one row, so a broadcast input's elements
                                          // along it are its first's plus multiples of one stride
};

template <class F> __device__ __forceinline__ void for_inputs(F &&f) { cgr::for_each_index<kNin>(f); }

// The shapes are the generator's (cg_forward refuses any other), so the broadcast offsets
// divide by constants: a multiply-high and a shift each, in 32 bits where the output has
// fewer than 2^31 elements, where a 64-bit division by a runtime extent took ~70
// instructions (the vector path of 12_Matmul_with_diagonal_matrices_: 78 instructions
// against 1998; its time only 5% less on an H100, 12-07: the divisions were not what held it
// to 74% of SoL). A dim the input is broadcast along (extent 1 there, or absent) is skipped
// at compile time.
// CGR_PW_CONST_SHAPE 0 (lab form): the divisions by the run-time shape, as before 12-07.
#ifndef CGR_PW_CONST_SHAPE
#define CGR_PW_CONST_SHAPE 1
#endif
constexpr int kOutNdim = CGR_OUT_NDIM;
CUTE_HOST_DEVICE constexpr int64_t out_extent(int d)
{
    constexpr int64_t s[] = CGR_OUT_SHAPE;
    return s[d];
}
CUTE_HOST_DEVICE constexpr int64_t out_numel()
{
    int64_t n = 1;
    for (int d = 0; d < kOutNdim; ++d)
        n *= out_extent(d);
    return n;
}
using Index = std::conditional_t<(out_numel() <= INT32_MAX), uint32_t, uint64_t>;
// Input I is broadcast along output dim d: stride 0 there whatever the tensor's strides.
CUTE_HOST_DEVICE constexpr bool bcast_along(int i, int d)
{
    constexpr int nd[] = CGR_IN_NDIMS;
    constexpr int64_t s[][CG_MAX_DIMS] = CGR_IN_SHAPES;
    const int j = d - (kOutNdim - nd[i]);
    return j < 0 || s[i][j] == 1;
}

// Offset of broadcast input I's element for output index idx.
template <int I> CUTE_HOST_DEVICE int64_t bcast_off(const Args &a, int64_t idx)
{
    int64_t off = 0;
    if constexpr (CGR_PW_CONST_SHAPE) {
        Index r = Index(idx);
        cgr::for_each_index<kOutNdim>([&](auto ic) {
            constexpr int d = kOutNdim - 1 - decltype(ic)::value;
            constexpr Index e = Index(out_extent(d));
            if constexpr (!bcast_along(I, d))
                off += int64_t(r % e) * a.bstride[I][d];
            if constexpr (d > 0)
                r /= e;
        });
    } else {
        int64_t r = idx;
        for (int d = a.ndim - 1; d >= 0; --d) {
            const int64_t c = r % a.oshape[d];
            r /= a.oshape[d];
            off += c * a.bstride[I][d];
        }
    }
    return off;
}

#ifndef CGR_PW_EMULATE
// One element of input I at output index idx (not for FULL inputs on the vector path).
template <int I> __device__ __forceinline__ float load_one(const Args &a, int64_t idx)
{
    using E = typename In<I>::type;
    const E *p = static_cast<const E *>(a.in[I]);
    if constexpr (In<I>::kind == CGR_FULL) {
        return cgr::to_f(p[idx]);
    } else if constexpr (In<I>::kind == CGR_SCALAR) {
        return cgr::to_f(p[0]);
    } else if constexpr (In<I>::kind == CGR_BCAST) {
        return cgr::to_f(p[bcast_off<I>(a, idx)]);
    } else {
        return 0.f;
    }
}

__device__ __forceinline__ uint4 load16(const uint4 *p)
{
    if constexpr (CGR_PW_LOAD == 0) {
        return __ldcs(p);
    } else if constexpr (CGR_PW_LOAD == 1) {
        return __ldg(p);
    } else if constexpr (CGR_PW_LOAD == 3) {
        uint4 r;
        asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
        return r;
    } else {
        return *p;
    }
}

__device__ __forceinline__ void store16(uint4 *p, uint4 v)
{
    if constexpr (CGR_PW_STORE == 0)
        __stcs(p, v);
    else
        *p = v;
}

__device__ __forceinline__ float eval_at(const Args &a, int64_t idx)
{
    float x[kNin];
    for_inputs([&](auto ic) {
        constexpr int I = decltype(ic)::value;
        x[I] = load_one<I>(a, idx);
    });
    return cgr_expr(x);
}

template <bool Vec>
__global__ void __launch_bounds__(kThreads) pointwise_kernel(const Args a)
{
    const int64_t base = int64_t(blockIdx.x) * kTile;
    T *out = static_cast<T *>(a.out);
    if (Vec && base + kTile <= a.n) {
        // (VEC, THREADS, UNROLL): element v of thread t's vector in step u.
        auto layout = make_layout(make_shape(Int<kVec>{}, Int<kThreads>{}, Int<kUnroll>{}));
        alignas(16) T raw[kNin > 0 ? kNin : 1][kUnroll][kVec];
        for_inputs([&](auto ic) {
            constexpr int I = decltype(ic)::value;
            if constexpr (In<I>::kind == CGR_FULL) {
                Tensor g = make_tensor(make_gmem_ptr(static_cast<const T *>(a.in[I]) + base), layout);
                CUTE_UNROLL
                for (int u = 0; u < kUnroll; ++u)
                    *reinterpret_cast<uint4 *>(raw[I][u]) =
                        load16(reinterpret_cast<const uint4 *>(&g(0, threadIdx.x, u)));
            }
        });
        float sval[kNin > 0 ? kNin : 1];
        for_inputs([&](auto ic) {
            constexpr int I = decltype(ic)::value;
            if constexpr (In<I>::kind == CGR_SCALAR)
                sval[I] = load_one<I>(a, 0);
        });
        // broadcast inputs, all of them before any store (the compiler keeps a load after a
        // store: a load after each vector's store waited a round trip); one offset a vector
        // when it lies in one row (the index arithmetic cost more than the bytes:
        // 12_Matmul_with_diagonal_matrices_ ran at 0.83x eager computing it for each element),
        // and one load where the input is broadcast along the last dim
        float bval[kNin > 0 ? kNin : 1][kUnroll][kVec];
        for_inputs([&](auto ic) {
            constexpr int I = decltype(ic)::value;
            if constexpr (In<I>::kind == CGR_BCAST) {
                const auto *p = static_cast<const typename In<I>::type *>(a.in[I]);
                CUTE_UNROLL
                for (int u = 0; u < kUnroll; ++u) {
                    if (a.rows_whole) {
                        const int64_t off = bcast_off<I>(a, base + layout(0, int(threadIdx.x), u));
                        if constexpr (CGR_PW_CONST_SHAPE && bcast_along(I, kOutNdim - 1)) {
                            const float b = cgr::to_f(p[off]);
                            CUTE_UNROLL
                            for (int v = 0; v < kVec; ++v)
                                bval[I][u][v] = b;
                        } else {
                            CUTE_UNROLL
                            for (int v = 0; v < kVec; ++v)
                                bval[I][u][v] = cgr::to_f(p[off + v * a.bstride[I][a.ndim - 1]]);
                        }
                    } else {
                        CUTE_UNROLL
                        for (int v = 0; v < kVec; ++v)
                            bval[I][u][v] = load_one<I>(a, base + layout(v, int(threadIdx.x), u));
                    }
                }
            }
        });
        Tensor gy = make_tensor(make_gmem_ptr(out + base), layout);
        CUTE_UNROLL
        for (int u = 0; u < kUnroll; ++u) {
            alignas(16) T res[kVec];
            CUTE_UNROLL
            for (int v = 0; v < kVec; ++v) {
                float x[kNin > 0 ? kNin : 1];
                for_inputs([&](auto ic) {
                    constexpr int I = decltype(ic)::value;
                    if constexpr (In<I>::kind == CGR_FULL)
                        x[I] = cgr::to_f(raw[I][u][v]);
                    else if constexpr (In<I>::kind == CGR_SCALAR)
                        x[I] = sval[I];
                    else if constexpr (In<I>::kind == CGR_BCAST)
                        x[I] = bval[I][u][v];
                    else
                        x[I] = 0.f;
                });
                res[v] = cgr::from_f<T>(cgr_expr(x));
            }
            store16(reinterpret_cast<uint4 *>(&gy(0, threadIdx.x, u)), *reinterpret_cast<const uint4 *>(res));
        }
    } else {
        const int64_t end = base + kTile < a.n ? base + kTile : a.n;
        for (int64_t i = base + threadIdx.x; i < end; i += kThreads)
            out[i] = cgr::from_f<T>(eval_at(a, i));
    }
}

#endif  // CGR_PW_EMULATE

static const int64_t kOutShape[] = CGR_OUT_SHAPE;
static const int kInNdim[] = CGR_IN_NDIMS;
static const int64_t kInShape[][CG_MAX_DIMS] = CGR_IN_SHAPES;
static const unsigned kInUnsq[] = CGR_IN_UNSQ;

}  // namespace cgr_pw

#ifndef CGR_PW_EMULATE
CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace cgr_pw;
    (void)workspace; (void)workspace_bytes;
    if (n_in != kNin || n_out != 1)
        return CG_UNSUPPORTED;
    const cg_tensor &y = out[0];
    if (!cgr::output_fits(y, CGR_OUT_DTYPE, CGR_OUT_NDIM, kOutShape))
        return CG_UNSUPPORTED;
    Args a{};
    a.out = y.data;
    a.n = cg_numel(&y);
    a.ndim = y.ndim;
    for (int d = 0; d < y.ndim; ++d)
        a.oshape[d] = y.shape[d];
    a.rows_whole = y.ndim > 0 && y.shape[y.ndim - 1] % kVec == 0;
    bool aligned = (reinterpret_cast<uintptr_t>(y.data) % 16) == 0;
    bool ok = true;

    auto check = [&](int i, int kind, int dtype) {
        const cg_tensor t = cgr::unsqueezed(in[i], kInUnsq[i]);
        a.in[i] = t.data;
        if (!cgr::input_fits(t, kind, dtype, kInNdim[i], kInShape[i], &aligned)) {
            ok = false;
        } else if (kind == CGR_BCAST) {
            const int lead = y.ndim - t.ndim;
            if (lead < 0) {
                ok = false;
                return;
            }
            for (int d = 0; d < y.ndim; ++d) {
                const int j = d - lead;
                a.bstride[i][d] = (j < 0 || t.shape[j] == 1) ? 0 : t.stride[j];
                if (j >= 0 && t.shape[j] != 1 && t.shape[j] != y.shape[d])
                    ok = false;
            }
        }
    };
#define CGR_CHECK_IN(i, ctype, k, dt) check(i, k, dt);
    CGR_INPUTS(CGR_CHECK_IN)
#undef CGR_CHECK_IN
    if (!ok)
        return CG_UNSUPPORTED;
    if (a.n == 0)
        return CG_OK;
    const int64_t blocks = (a.n + kTile - 1) / kTile;
    if (blocks > 0x7fffffff)
        return CG_UNSUPPORTED;
    if (aligned)
        pointwise_kernel<true><<<unsigned(blocks), kThreads, 0, stream>>>(a);
    else
        pointwise_kernel<false><<<unsigned(blocks), kThreads, 0, stream>>>(a);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
#endif  // CGR_PW_EMULATE
