// bench/labs/kernels/instnorm_cluster_tma.cu: lab kernel (2026-12-03, round 11), not a
// recipe: InstanceNorm (no affine, eps 1e-5) over rows of LAB_R floats, each row held by
// a thread-block cluster, the next row's chunk loaded while this one is normalised.
//
// Persistent clusters of LAB_CLUSTER CTAs (as many as fit at once); cluster k normalises
// rows k, k + clusters, ... A CTA owns 1/LAB_CLUSTER of each row: one bulk copy
// (cp.async.bulk, completing on an mbarrier) brings its chunk of the NEXT row into shared
// memory while the CTA works on this row's chunk, which it holds in registers: wait for
// the copy, shared memory -> registers, __syncthreads, issue the next copy, then the CTA's
// mean and sum of squared deviations (two block reductions over registers), one
// exchange through distributed shared memory (cluster barrier; the partials combined
// exactly, Chan et al.), and (x - mean) * rsqrt(var + eps) stored from registers. x is
// read once and y written once; the HBM sees the next row's reads during this row's
// arithmetic and stores. The held-chunk recipes (recipes/norm.cu, HOLD) wait for a row's
// CTAs through global atomics instead (71.8% of SoL on 34_InstanceNorm, lab round 10).
#include <cutegen/abi.h>
#include <cute/tensor.hpp>
#include <cute/arch/copy_sm90_tma.hpp>
#include <cutlass/arch/barrier.h>
#include <cooperative_groups.h>
#include <cstdint>

#ifndef LAB_THREADS
#define LAB_THREADS 512
#endif
#ifndef LAB_CLUSTER
#define LAB_CLUSTER 8
#endif
#ifndef LAB_MINB
#define LAB_MINB 1
#endif
#ifndef LAB_NDIM
#define LAB_NDIM 4
#define LAB_SHAPE {112, 64, 512, 512}
#define LAB_R 262144
#endif

namespace lab {

namespace cg = cooperative_groups;
using Bar = cutlass::arch::ClusterTransactionBarrier;

constexpr int kThreads = LAB_THREADS, kCluster = LAB_CLUSTER;
constexpr int64_t kShape[] = LAB_SHAPE;
constexpr int64_t kR = LAB_R;
constexpr int64_t numel()
{
    int64_t n = 1;
    for (int d = 0; d < LAB_NDIM; ++d) n *= kShape[d];
    return n;
}
constexpr int64_t kRows = numel() / kR;
constexpr int kChunk = int(kR / kCluster);       // floats a CTA holds
constexpr int kVecs = kChunk / (4 * kThreads);   // float4 a thread
constexpr int kChunkBytes = kChunk * 4;
constexpr float kEps = 1e-5f;
static_assert(int64_t(kVecs) * 4 * kThreads * kCluster == kR, "a row is exactly a cluster's registers");
static_assert(kCluster <= 32 && kChunkBytes % 16 == 0 && kChunkBytes < (1 << 20), "shape");

struct Shared {
    alignas(8) uint64_t bar;   // the bulk copy's completion
    float red[kThreads / 32];  // block reductions
    float2 part[2];            // this CTA's (mean, M2), by iteration parity
};
constexpr int kSmem = kChunkBytes + int(sizeof(Shared));

__device__ __forceinline__ float warp_sum(float v)
{
    CUTE_UNROLL
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// The CTA's sum of v; red is free again when it returns.
__device__ __forceinline__ float block_sum(float v, float *red)
{
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    float r = 0.f;
    CUTE_UNROLL
    for (int w = 0; w < kThreads / 32; ++w) r += red[w];
    __syncthreads();
    return r;
}

__global__ void __launch_bounds__(kThreads, LAB_MINB) instnorm(const float *__restrict__ x, float *__restrict__ y)
{
    extern __shared__ __align__(128) unsigned char smem[];
    const float4 *buf = reinterpret_cast<const float4 *>(smem);
    Shared &sh = *reinterpret_cast<Shared *>(smem + kChunkBytes);
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = int(cluster.block_rank());
    const int64_t first = blockIdx.x / kCluster, stride = gridDim.x / kCluster;
    if (threadIdx.x == 0) {
        Bar::init(&sh.bar, 1);
        cutlass::arch::fence_barrier_init();
    }
    __syncthreads();
    auto issue = [&](int64_t row) {  // thread 0: this CTA's chunk of row into buf
        Bar::arrive_and_expect_tx(&sh.bar, kChunkBytes);
        cute::SM90_BULK_COPY_G2S::copy(x + row * kR + int64_t(rank) * kChunk, &sh.bar, smem, kChunkBytes);
    };
    if (threadIdx.x == 0 && first < kRows)
        issue(first);
    uint32_t phase = 0;
    int it = 0;
    for (int64_t row = first; row < kRows; row += stride, ++it) {
        Bar::wait(&sh.bar, phase);
        phase ^= 1;
        float4 v[kVecs];
        CUTE_UNROLL
        for (int i = 0; i < kVecs; ++i) v[i] = buf[threadIdx.x + i * kThreads];
        __syncthreads();  // the chunk is in registers: the buffer takes the next row's
        if (threadIdx.x == 0 && row + stride < kRows) {
            cutlass::arch::fence_view_async_shared();
            issue(row + stride);
        }
        float s = 0.f;
        CUTE_UNROLL
        for (int i = 0; i < kVecs; ++i) s += (v[i].x + v[i].y) + (v[i].z + v[i].w);
        const float mean_i = block_sum(s, sh.red) * (1.f / kChunk);
        float q = 0.f;
        CUTE_UNROLL
        for (int i = 0; i < kVecs; ++i) {
            const float a = v[i].x - mean_i, b = v[i].y - mean_i, c = v[i].z - mean_i, d = v[i].w - mean_i;
            q += (a * a + b * b) + (c * c + d * d);
        }
        q = block_sum(q, sh.red);
        if (threadIdx.x == 0) sh.part[it & 1] = make_float2(mean_i, q);
        cluster.sync();  // every CTA's partials written and visible to the cluster
        // every warp combines the cluster's partials (lane r reads CTA r's); a CTA
        // rewrites part[it & 1] only two iterations on, after the next cluster barrier,
        // which no CTA passes before all have read these
        const int lane = threadIdx.x & 31;
        float2 p = make_float2(0.f, 0.f);
        if (lane < kCluster) p = *cluster.map_shared_rank(&sh.part[it & 1], lane);
        const float mean = warp_sum(p.x) * (1.f / kCluster);
        const float dm = lane < kCluster ? p.x - mean : 0.f;
        const float m2 = warp_sum(p.y + float(kChunk) * dm * dm);
        const float rstd = rsqrtf(m2 * (1.f / float(kR)) + kEps);
        float4 *out = reinterpret_cast<float4 *>(y + row * kR + int64_t(rank) * kChunk);
        CUTE_UNROLL
        for (int i = 0; i < kVecs; ++i) {
            float4 o;
            o.x = (v[i].x - mean) * rstd;
            o.y = (v[i].y - mean) * rstd;
            o.z = (v[i].z - mean) * rstd;
            o.w = (v[i].w - mean) * rstd;
            out[threadIdx.x + i * kThreads] = o;
        }
    }
    cluster.sync();  // no CTA leaves while another may still read its partials
}

}  // namespace lab

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out, void *workspace,
                         size_t workspace_bytes, cudaStream_t stream)
{
    using namespace lab;
    (void)workspace; (void)workspace_bytes;
    if (n_in != 1 || n_out != 1)
        return CG_UNSUPPORTED;
    const cg_tensor *both[2] = { &in[0], &out[0] };
    for (const cg_tensor *t : both) {
        if (t->dtype != CG_FLOAT32 || t->ndim != LAB_NDIM || !cg_is_contiguous(t) ||
            reinterpret_cast<uintptr_t>(t->data) % 16)
            return CG_UNSUPPORTED;
        for (int d = 0; d < LAB_NDIM; ++d)
            if (t->shape[d] != kShape[d])
                return CG_UNSUPPORTED;
    }
    if (cudaFuncSetAttribute(instnorm, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem) != cudaSuccess ||
        (kCluster > 8 && cudaFuncSetAttribute(instnorm, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess))
        return CG_LAUNCH_FAILED;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = kCluster;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = kSmem;
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    cfg.gridDim = dim3(kCluster * 256);  // for the occupancy query
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, instnorm, &cfg) != cudaSuccess || clusters < 1) {
        (void)cudaGetLastError();
        return CG_LAUNCH_FAILED;
    }
    if (clusters > kRows)
        clusters = int(kRows);
    cfg.gridDim = dim3(unsigned(clusters * kCluster));
    const float *xp = static_cast<const float *>(in[0].data);
    float *yp = static_cast<float *>(out[0].data);
    if (cudaLaunchKernelEx(&cfg, instnorm, xp, yp) != cudaSuccess) {
        (void)cudaGetLastError();
        return CG_LAUNCH_FAILED;
    }
    return CG_OK;
}
