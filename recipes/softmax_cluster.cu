// recipes/softmax_cluster.cu: softmax / log-softmax over the last dim in ONE pass over
// memory, for rows too long for one CTA's registers (the technique of
// examples/kernels/softmax.cu, verified on an H200, made generic).
//
// A thread-block cluster of CLUSTER CTAs (one per SM at these register counts) owns one
// row; each CTA holds its 1/CLUSTER of the row in registers (VECS 16-byte vectors per
// thread), computes its local max m_i and s_i = sum exp(x - m_i), and the CTAs exchange
// (m_i, s_i) through distributed shared memory (cluster barrier, map_shared_rank) to form
// the row's M and S = sum_i s_i exp(m_i - M). Then y = exp(x - m_i) * (exp(m_i - M) / S)
// (softmax) or x - M - log S (log-softmax) is written from registers: x is read once and
// y written once. Needs sm_90 (clusters); the row length must be exactly
// CLUSTER x THREADS x VEC x VECS, and the rows 16-byte aligned; otherwise CG_UNSUPPORTED.
// A cluster that cannot be scheduled (SMs reserved by MPS/MIG) returns CG_LAUNCH_FAILED:
// the autotuner then keeps another variant.
//
// With PREFETCH the clusters are persistent (as many as run at once) and take rows in
// turn; one bulk copy (cp.async.bulk, completing on an mbarrier) a full-size input brings
// a CTA's chunk of its next row into shared memory while it works on this one, as
// recipes/norm.cu's ROWS_PREFETCH (86.8% of SoL on 34_InstanceNorm against 72.7%).
//
// Named parameters (CGR_*) are written by src/recipe_gen.c in place of `recipe:params`;
// the defaults make this file compile on its own (KernelBench's 4096 x 393216 softmax).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "recipes/softmax_cluster.cu needs sm_90 or newer (thread-block clusters): use a reduce.cu variant"
#endif
#include <cutegen/abi.h>
#include <cute/config.hpp>             // CUTE_UNROLL
#include <cute/arch/cluster_sm90.hpp>  // cluster_arrive, cluster_wait (no CuTe tensor here: cute/tensor.hpp
                                       // would cost seconds a build, docs/build.md)
#include <cooperative_groups.h>
#include <type_traits>
#include <cstdint>
#include "ops.cuh"  // recipe:inline

// recipe:params
#ifndef CGR_GENERATED
#define CGR_T float
#define CGR_DTYPE CG_FLOAT32
#define CGR_OUT_T float
#define CGR_OUT_DTYPE CG_FLOAT32
#define CGR_RED 7                   // 7 softmax, 8 log-softmax
#define CGR_OUTER 4096
#define CGR_R 393216
#define CGR_INNER 1
#define CGR_THREADS 512
#define CGR_CLUSTER 8               // CTAs per row (8 is the portable maximum)
#define CGR_VECS 24                 // 16-byte vectors per thread, held in registers
#define CGR_MIN_BLOCKS 1            // CTAs an SM __launch_bounds__ asks for
#define CGR_NIN 1
#define CGR_INPUTS(X) X(0, float, CGR_FULL, CG_FLOAT32)
#define CGR_IN_NDIMS {2}
#define CGR_IN_SHAPES {{4096, 393216}}
#define CGR_OUT_NDIM 2
#define CGR_OUT_SHAPE {4096, 393216}
__device__ __forceinline__ float cgr_pro(const float *x) { return x[0]; }
__device__ __forceinline__ float cgr_epi(float r) { return r; }
#endif
#ifndef CGR_PREFETCH
#define CGR_PREFETCH 0              // persistent clusters, the next row's chunk bulk-copied meanwhile
#endif
#if CGR_PREFETCH
#include <cute/arch/copy_sm90_tma.hpp>
#include <cutlass/arch/barrier.h>
#endif

namespace cgr_smc {

namespace cg = cooperative_groups;
using T = CGR_T;
using OutT = CGR_OUT_T;
constexpr bool kLog = CGR_RED == 8;
constexpr int64_t kOuter = CGR_OUTER, kR = CGR_R;
constexpr int kThreads = CGR_THREADS, kCluster = CGR_CLUSTER, kVecs = CGR_VECS;
constexpr int kVec = 16 / int(sizeof(T));
constexpr int64_t kChunk = int64_t(kThreads) * kVec * kVecs;  // elements per CTA
constexpr int kNin = CGR_NIN;
static_assert(CGR_INNER == 1 && (CGR_RED == 7 || CGR_RED == 8), "softmax over the last dim");
static_assert(int64_t(kCluster) * kChunk == kR, "a row is exactly one cluster's registers");
static_assert(kThreads % 32 == 0 && kThreads <= 1024 && kCluster >= 1 && kCluster <= 16, "shape");
static_assert(sizeof(OutT) == sizeof(T), "output and input of one type");

using cgr::CGR_UNUSED; using cgr::CGR_FULL; using cgr::CGR_SCALAR; using cgr::CGR_BCAST;
template <int I> struct In;
#define CGR_DEF_IN(i, ctype, k, dt) \
    template <> struct In<i> { using type = ctype; static constexpr int kind = k; static constexpr int dtype = dt; };
CGR_INPUTS(CGR_DEF_IN)
#undef CGR_DEF_IN

template <class F> __device__ __forceinline__ void for_inputs(F &&f) { cgr::for_each_index<kNin>(f); }

struct Args {
    const void *in[kNin];
    OutT *out;
};

// Full-size inputs before input i (their order in a prefetched chunk).
__host__ __device__ constexpr int full_rank(int i)
{
    int n = 0;
#define CGR_COUNT_FULL(j, ctype, k, dt) n += (j) < i && (k) == CGR_FULL;
    CGR_INPUTS(CGR_COUNT_FULL)
#undef CGR_COUNT_FULL
    return n;
}
constexpr int kNfull = full_rank(kNin);
constexpr int kChunkBytes = int(kChunk * sizeof(T));  // a CTA's chunk of one full-size input

// kVec consecutive operand values from a 16-byte aligned idx (the prologue applied): the
// full-size inputs from global memory, or (chunk != nullptr) vector j of each one's chunk
// in shared memory.
__device__ __forceinline__ void load_vec(const Args &a, int64_t idx, float (&v)[kVec],
                                         const unsigned char *chunk = nullptr, int j = 0)
{
    alignas(16) T raw[kNin > 0 ? kNin : 1][kVec];
    float sval[kNin > 0 ? kNin : 1];
    for_inputs([&](auto ic) {
        constexpr int I = decltype(ic)::value;
        using E = typename In<I>::type;
        const E *p = static_cast<const E *>(a.in[I]);
        if constexpr (In<I>::kind == CGR_FULL) {
            if (chunk)
                *reinterpret_cast<uint4 *>(raw[I]) =
                    reinterpret_cast<const uint4 *>(chunk + full_rank(I) * kChunkBytes)[j];
            else
                *reinterpret_cast<uint4 *>(raw[I]) = cgr::ld(reinterpret_cast<const uint4 *>(p + idx));
        } else if constexpr (In<I>::kind == CGR_SCALAR) {
            sval[I] = cgr::to_f(p[0]);
        }
    });
    CUTE_UNROLL
    for (int e = 0; e < kVec; ++e) {
        float x[kNin > 0 ? kNin : 1];
        for_inputs([&](auto ic) {
            constexpr int I = decltype(ic)::value;
            if constexpr (In<I>::kind == CGR_FULL)
                x[I] = cgr::to_f(raw[I][e]);
            else if constexpr (In<I>::kind == CGR_SCALAR)
                x[I] = sval[I];
            else
                x[I] = 0.f;
        });
        v[e] = cgr_pro(x);
    }
}

__device__ __forceinline__ float warp_max(float v)
{
    CUTE_UNROLL
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
    CUTE_UNROLL
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Block-wide reductions; red holds one float per warp and is reusable after return.
__device__ __forceinline__ float block_max(float v, float *red)
{
    v = warp_max(v);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    float r = red[0];
    for (int w = 1; w < kThreads / 32; ++w) r = fmaxf(r, red[w]);
    __syncthreads();
    return r;
}

__device__ __forceinline__ float block_sum(float v, float *red)
{
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    float r = 0.f;
    for (int w = 0; w < kThreads / 32; ++w) r += red[w];
    __syncthreads();
    return r;
}

// The rest of a row once a CTA holds its share v (registers), base its first element's
// index: local (max, sum), the exchange through stat (this CTA's slot), the output. A CTA
// rewrites its stat only after the next cluster barrier, which no CTA passes before all
// have read it (persistent: stat alternates between two slots, as rows follow). With
// Arrive, the CTA arrives at the cluster barrier once it has read the others' stats (the
// caller waits before it exits), so that no CTA waits for the others' stores.
template <bool Arrive>
__device__ __forceinline__ void finish_row(const Args &a, int64_t base, float (&v)[kVecs][kVec], float *red,
                                           float2 *stat, float2 &fin)
{
    cg::cluster_group cluster = cg::this_cluster();
    // fmaxf drops NaN, but a NaN element makes its exp, hence S, NaN, and so the whole
    // row's output, as in torch.
    float m = -INFINITY;
    CUTE_UNROLL
    for (int i = 0; i < kVecs; ++i)
        CUTE_UNROLL
        for (int e = 0; e < kVec; ++e) m = fmaxf(m, v[i][e]);
    m = block_max(m, red);
    float s = 0.f;
    CUTE_UNROLL
    for (int i = 0; i < kVecs; ++i)
        CUTE_UNROLL
        for (int e = 0; e < kVec; ++e) {
            const float t = __expf(v[i][e] - m);  // as examples/kernels/softmax.cu
            if constexpr (!kLog) v[i][e] = t;
            s += t;
        }
    s = block_sum(s, red);
    if (threadIdx.x == 0) *stat = make_float2(m, s);
    cluster.sync();  // every CTA's stat is written and visible cluster-wide

    if (threadIdx.x < 32) {
        const int lane = threadIdx.x;
        float2 st = make_float2(-INFINITY, 0.f);
        if (lane < kCluster) st = *cluster.map_shared_rank(stat, lane);
        const float M = warp_max(st.x);
        const float part = (lane < kCluster && st.x != -INFINITY) ? st.y * expf(st.x - M) : 0.f;
        const float S = warp_sum(part);
        if (lane == 0) fin = make_float2(__expf(m - M) / S, M + logf(S));
    }
    if constexpr (Arrive)
        cute::cluster_arrive();
    __syncthreads();
    const float2 f = fin;

    uint4 *y = reinterpret_cast<uint4 *>(a.out + base);
    CUTE_UNROLL
    for (int i = 0; i < kVecs; ++i) {
        alignas(16) OutT o[kVec];
        CUTE_UNROLL
        for (int e = 0; e < kVec; ++e)
            o[e] = cgr::from_f<OutT>(cgr_epi(kLog ? v[i][e] - f.y : v[i][e] * f.x));
        cgr::st(y + i * kThreads, *reinterpret_cast<const uint4 *>(o));
    }
}

// A cluster of more than 8 CTAs (not portable), and the persistent clusters, are set at
// launch (cgr::launch_cluster).
#if CGR_CLUSTER > 8 || CGR_PREFETCH
#define CGR_SMC_DIMS
#else
#define CGR_SMC_DIMS __cluster_dims__(kCluster, 1, 1)
#endif

#if !CGR_PREFETCH
// grid = (CLUSTER, rows); one cluster a row.
__global__ void CGR_SMC_DIMS __launch_bounds__(kThreads, CGR_MIN_BLOCKS) softmax_cluster(const Args a)
{
    __shared__ float red[kThreads / 32];
    __shared__ float2 stat;   // this CTA's (max, sum), read by the whole cluster
    __shared__ float2 fin;    // (scale exp(m_i - M) / S, M + log S)
    const int rank = int(cg::this_cluster().block_rank());
    // this thread's first element; its vector i is kThreads * kVec elements further
    const int64_t base = int64_t(blockIdx.y) * kR + int64_t(rank) * kChunk + int64_t(threadIdx.x) * kVec;
    float v[kVecs][kVec];
    CUTE_UNROLL
    for (int i = 0; i < kVecs; ++i)
        load_vec(a, base + int64_t(i) * kThreads * kVec, v[i]);
    finish_row<true>(a, base, v, red, &stat, fin);
    cute::cluster_wait();  // no CTA leaves while another may still read its stat
}
#else
using Bar = cutlass::arch::ClusterTransactionBarrier;
constexpr int kPrefetchSmem = kNfull * kChunkBytes;
static_assert(kNfull >= 1 && kChunkBytes % 16 == 0 && kChunkBytes < (1 << 20), "prefetched chunks");

// grid = (CLUSTER, clusters); persistent: cluster c takes rows c, c + clusters, ...;
// dynamic shared memory: kPrefetchSmem.
__global__ void __launch_bounds__(kThreads, CGR_MIN_BLOCKS) softmax_cluster(const Args a)
{
    extern __shared__ __align__(128) unsigned char chunk[];  // [full input][kChunkBytes]
    __shared__ float red[kThreads / 32];
    __shared__ float2 stat[2];  // by the parity of the CTA's row count
    __shared__ float2 fin;
    __shared__ alignas(8) uint64_t bar;
    const int rank = int(cg::this_cluster().block_rank());
    if (threadIdx.x == 0) {
        Bar::init(&bar, 1);
        cutlass::arch::fence_barrier_init();
    }
    __syncthreads();
    auto fetch = [&](int64_t row) {  // thread 0: this CTA's chunk of row into shared memory
        Bar::arrive_and_expect_tx(&bar, kPrefetchSmem);
        for_inputs([&](auto ic) {
            constexpr int I = decltype(ic)::value;
            if constexpr (In<I>::kind == CGR_FULL)
                cute::SM90_BULK_COPY_G2S::copy(static_cast<const T *>(a.in[I]) + row * kR + int64_t(rank) * kChunk,
                                               &bar, chunk + full_rank(I) * kChunkBytes, kChunkBytes);
        });
    };
    const int64_t first = blockIdx.y, stride = gridDim.y;
    if (threadIdx.x == 0 && first < kOuter)
        fetch(first);
    uint32_t phase = 0;
    int n = 0;
    for (int64_t row = first; row < kOuter; row += stride, ++n) {
        Bar::wait(&bar, phase);
        phase ^= 1;
        const int64_t base = row * kR + int64_t(rank) * kChunk + int64_t(threadIdx.x) * kVec;
        float v[kVecs][kVec];
        CUTE_UNROLL
        for (int i = 0; i < kVecs; ++i)
            load_vec(a, base + int64_t(i) * kThreads * kVec, v[i], chunk, int(threadIdx.x) + i * kThreads);
        __syncthreads();  // the chunk is in registers: shared memory takes the next row's
        if (threadIdx.x == 0 && row + stride < kOuter) {
            cutlass::arch::fence_view_async_shared();
            fetch(row + stride);
        }
        finish_row<false>(a, base, v, red, &stat[n & 1], fin);
    }
    cg::this_cluster().sync();  // no CTA leaves while another may still read its stat
}
#endif

static const int kInNdim[] = CGR_IN_NDIMS;
static const int64_t kInShape[][CG_MAX_DIMS] = CGR_IN_SHAPES;
static const int64_t kOutShape[] = CGR_OUT_SHAPE;

}  // namespace cgr_smc

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace cgr_smc;
    (void)workspace; (void)workspace_bytes;
    if (n_in != kNin || n_out != 1)
        return CG_UNSUPPORTED;
    const cg_tensor &y = out[0];
    if (!cgr::output_fits(y, CGR_OUT_DTYPE, CGR_OUT_NDIM, kOutShape))
        return CG_UNSUPPORTED;
    Args a{};
    a.out = static_cast<OutT *>(y.data);
    bool ok = (reinterpret_cast<uintptr_t>(y.data) % 16) == 0;
    auto check = [&](int i, int kind, int dtype) {
        a.in[i] = in[i].data;
        if (kind == CGR_BCAST ||
            !cgr::input_fits(in[i], kind, dtype, kInNdim[i], kInShape[i], &ok))
            ok = false;
    };
#define CGR_CHECK_IN(i, ctype, k, dt) check(i, k, dt);
    CGR_INPUTS(CGR_CHECK_IN)
#undef CGR_CHECK_IN
    if (!ok || kOuter > 65535)
        return CG_UNSUPPORTED;
    if (kOuter == 0)
        return CG_OK;
#if CGR_PREFETCH
    const int clusters = cgr::persistent_clusters(softmax_cluster, kThreads, kCluster, kPrefetchSmem, kOuter);
    if (clusters < 1)
        return CG_LAUNCH_FAILED;
    return cgr::launch_cluster(softmax_cluster, dim3(kCluster, unsigned(clusters)), kThreads, kCluster, kPrefetchSmem,
                               stream, a);
#elif CGR_CLUSTER > 8
    return cgr::launch_cluster(softmax_cluster, dim3(kCluster, unsigned(kOuter)), kThreads, kCluster, 0, stream, a);
#else
    softmax_cluster<<<dim3(kCluster, unsigned(kOuter)), kThreads, 0, stream>>>(a);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
#endif
}
