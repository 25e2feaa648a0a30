// recipes/ops.cuh: the elementwise operators of the recipe expression language, as
// device functions on float (fp16/bf16 values are widened to float, computed, rounded
// once at the end). Each mirrors PyTorch's own formula, NaN propagation included;
// src/recipe.c's evaluator mirrors each one on the CPU (keep the two in step).
// Inlined into every generated kernel by the generator (recipe:inline).
// At the end: the host-side checks every template's cg_forward makes before it launches.
#pragma once
#include <cstdint>
#include <type_traits>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

namespace cgr {

// Global loads and stores of the norm and softmax-cluster templates: plain. On the H200
// the streaming hints (__ldcs/__stcs) they had were 2-6% slower on BatchNorm, RMSNorm,
// L1 norm and softmax (docs/perf.md, 2026-12-02).
template <class T> __device__ __forceinline__ T ld(const T *p) { return *p; }
template <class T> __device__ __forceinline__ void st(T *p, T v) { *p = v; }

__device__ __forceinline__ float relu(float v) { return v < 0.f ? 0.f : v; }
__device__ __forceinline__ float sigmoid(float v) { return 1.f / (1.f + expf(-v)); }
__device__ __forceinline__ float silu(float v) { return v / (1.f + expf(-v)); }
__device__ __forceinline__ float gelu(float v) { return 0.5f * v * (1.f + erff(v * 0.70710678118654752f)); }
__device__ __forceinline__ float gelu_tanh(float v)
{
    return 0.5f * v * (1.f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
}
__device__ __forceinline__ float elu(float v, float alpha) { return v > 0.f ? v : alpha * expm1f(v); }
__device__ __forceinline__ float selu(float v)
{
    return 1.0507009873554805f * (v > 0.f ? v : 1.6732632423543772f * expm1f(v));
}
__device__ __forceinline__ float leaky_relu(float v, float slope) { return v > 0.f ? v : v * slope; }
__device__ __forceinline__ float clamp(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }
__device__ __forceinline__ float hardsigmoid(float v) { return fminf(fmaxf(v + 3.f, 0.f), 6.f) / 6.f; }
__device__ __forceinline__ float hardswish(float v) { return v * fminf(fmaxf(v + 3.f, 0.f), 6.f) / 6.f; }
// softplus as max(z, 0) + log(1 + e^-|z|) with the fast intrinsics: 1 + e^-|z| lies in
// (1, 2], where __logf's error is at most 2^-21.4 absolute, so the result is within ~3e-7
// absolute (H200, 29_Softplus: max abs err 2.4e-7; log1pf(expf) was compute-bound, 0.985x
// eager, this 1.033x; docs/perf.md).
__device__ __forceinline__ float softplus(float v, float beta, float threshold)
{
    const float z = v * beta;
#ifdef __CUDA_ARCH__
    return z > threshold ? v : (fmaxf(z, 0.f) + __logf(1.f + __expf(-fabsf(z)))) / beta;
#else  // host builds (the GEMM template's CPU emulation)
    return z > threshold ? v : (fmaxf(z, 0.f) + logf(1.f + expf(-fabsf(z)))) / beta;
#endif
}
__device__ __forceinline__ float softsign(float v) { return v / (1.f + fabsf(v)); }
__device__ __forceinline__ float mish(float v) { return v * tanhf(softplus(v, 1.f, 20.f)); }
__device__ __forceinline__ float logsigmoid(float v) { return -softplus(-v, 1.f, 20.f); }
// torch.maximum/minimum propagate NaN.
__device__ __forceinline__ float maximum(float a, float b) { return (a != a || a > b) ? a : b; }
__device__ __forceinline__ float minimum(float a, float b) { return (a != a || a < b) ? a : b; }
__device__ __forceinline__ float powc(float a, float e) { return powf(a, e); }

// Calls f(std::integral_constant<int, I>{}) for I = 0 .. N-1 in order, unrolled at compile
// time: the templates' loops over their inputs (for_inputs) and statistics.
// The largest divisor of n that is at most k (1 at least): chunks of it cover n whole (an
// epilogue's chunk of accumulators where a tile's count is not a multiple of the chunk asked:
// a WGMMA tile 112 wide holds 56 a thread).
constexpr int divisor_at_most(int n, int k)
{
    for (int c = k < n ? k : n; c > 1; --c)
        if (n % c == 0)
            return c;
    return 1;
}

template <int N, int I = 0, class F> __host__ __device__ __forceinline__ void for_each_index(F &&f)
{
    if constexpr (I < N) {
        f(std::integral_constant<int, I>{});
        for_each_index<N, I + 1>(f);
    }
}

// Loads and stores of one element of any supported type, as float.
__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_f(int64_t v) { return float(v); }
__device__ __forceinline__ float to_f(bool v) { return v ? 1.f : 0.f; }
template <class T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// ---------------------------------------------------------------- host-side checks

// How a kernel reads an input: not at all, whole (as the output's shape, 16-byte
// vectors), as one element, or broadcast by strides.
enum { CGR_UNUSED = 0, CGR_FULL = 1, CGR_SCALAR = 2, CGR_BCAST = 3 };

// The output is what the kernel was generated for: dtype, rank, shape, contiguous.
inline bool output_fits(const cg_tensor &y, int dtype, int ndim, const int64_t *shape)
{
    if (y.dtype != dtype || y.ndim != ndim || !cg_is_contiguous(&y))
        return false;
    for (int d = 0; d < ndim; ++d)
        if (y.shape[d] != shape[d])
            return false;
    return true;
}

// t viewed with size-1 dims inserted at the bits of mask (dims of the view), as
// t.unsqueeze(d) makes them; ndim -1 (fits nothing) past CG_MAX_DIMS.
inline cg_tensor unsqueezed(const cg_tensor &t, unsigned mask)
{
    cg_tensor v = t;
    if (mask == 0)
        return v;
    v.ndim = t.ndim + __builtin_popcount(mask);
    if (v.ndim > CG_MAX_DIMS) {
        v.ndim = -1;
        return v;
    }
    for (int d = 0, j = 0; d < v.ndim; ++d) {
        const bool inserted = (mask >> d) & 1u;
        v.shape[d] = inserted ? 1 : t.shape[j];
        v.stride[d] = inserted ? 0 : t.stride[j];
        j += !inserted;
    }
    return v;
}

// An input has the dtype, rank and shape the kernel was generated for; one read whole
// is contiguous (and clears *aligned unless 16-byte aligned), a scalar has one element.
// CGR_UNUSED always fits; CGR_BCAST's strides are the caller's to check.
inline bool input_fits(const cg_tensor &t, int kind, int dtype, int ndim, const int64_t *shape,
                       bool *aligned)
{
    if (kind == CGR_UNUSED)
        return true;
    if (t.dtype != dtype || t.ndim != ndim)
        return false;
    for (int d = 0; d < ndim; ++d)
        if (t.shape[d] != shape[d])
            return false;
    if (kind == CGR_FULL) {
        if ((reinterpret_cast<uintptr_t>(t.data) % 16) != 0)
            *aligned = false;
        return cg_is_contiguous(&t);
    }
    return kind != CGR_SCALAR || cg_numel(&t) == 1;
}

// The launch configuration of kernel on grid x threads with smem bytes of dynamic shared
// memory, in clusters of `cluster` CTAs along x, the size chosen at run time: above 8
// (the portable maximum; 16 on the H100/H200) it must be allowed on the function, and the
// kernel must not carry __cluster_dims__. attr is the configuration's one attribute.
template <class... P>
inline cudaError_t cluster_config(void (*kernel)(P...), dim3 grid, int threads, int cluster, int smem,
                                  cudaStream_t stream, cudaLaunchAttribute *attr, cudaLaunchConfig_t *cfg)
{
    if (cluster > 8) {
        cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
        if (e != cudaSuccess)
            return e;
    }
    if (smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
        if (e != cudaSuccess)
            return e;
    }
    attr->id = cudaLaunchAttributeClusterDimension;
    attr->val.clusterDim.x = unsigned(cluster);
    attr->val.clusterDim.y = 1;
    attr->val.clusterDim.z = 1;
    *cfg = cudaLaunchConfig_t{};
    cfg->gridDim = grid;
    cfg->blockDim = dim3(unsigned(threads));
    cfg->dynamicSmemBytes = size_t(smem);
    cfg->stream = stream;
    cfg->attrs = attr;
    cfg->numAttrs = 1;
    return cudaSuccess;
}

// Launches kernel(args) in clusters of `cluster` CTAs (cluster_config): CG_OK, or
// CG_LAUNCH_FAILED (no such cluster fits, e.g. SMs held by MPS/MIG) with the CUDA error
// cleared, so that the tuner moves on to another variant.
template <class... P, class... A>
inline int launch_cluster(void (*kernel)(P...), dim3 grid, int threads, int cluster, int smem, cudaStream_t stream,
                          A... args)
{
    cudaLaunchAttribute attr[1];
    cudaLaunchConfig_t cfg;
    if (cluster_config(kernel, grid, threads, cluster, smem, stream, attr, &cfg) != cudaSuccess ||
        cudaLaunchKernelEx(&cfg, kernel, args...) != cudaSuccess) {
        (void)cudaGetLastError();
        return CG_LAUNCH_FAILED;
    }
    return CG_OK;
}

// How many CTAs of kernel (threads, smem bytes of dynamic shared memory) the GPU runs at
// once: the occupancy the runtime reports for an SM, times the SMs; -1 when a query fails
// (the CUDA error cleared).
template <class... P> inline int resident_ctas(void (*kernel)(P...), int threads, int smem)
{
    int dev = 0, sms = 0, per_sm = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess && smem > 48 * 1024)
        e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (e == cudaSuccess)
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, size_t(smem));
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return -1;
    }
    return per_sm * sms;
}

// Launches kernel(args) cooperatively: every CTA resident at once, or the launch fails
// (rather than CTAs that wait for each other deadlocking). CG_OK, or CG_LAUNCH_FAILED with
// the CUDA error cleared.
template <class... P, class... A>
inline int launch_cooperative(void (*kernel)(P...), dim3 grid, int threads, int smem, cudaStream_t stream,
                              A... args)
{
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeCooperative;
    attr[0].val.cooperative = 1;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = grid;
    cfg.blockDim = dim3(unsigned(threads));
    cfg.dynamicSmemBytes = size_t(smem);
    cfg.stream = stream;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    if (cudaLaunchKernelEx(&cfg, kernel, args...) != cudaSuccess) {
        (void)cudaGetLastError();
        return CG_LAUNCH_FAILED;
    }
    return CG_OK;
}

// How many persistent clusters of `cluster` CTAs of kernel (threads, smem bytes of
// dynamic shared memory) to launch for `rows` rows: as many as the GPU runs at once, at
// most one a row; 0 when none fits or the query fails.
template <class... P>
inline int persistent_clusters(void (*kernel)(P...), int threads, int cluster, int smem, int64_t rows)
{
    cudaLaunchAttribute attr[1];
    cudaLaunchConfig_t cfg;
    int n = 0;
    if (cluster_config(kernel, dim3(unsigned(cluster) * 1024u), threads, cluster, smem, nullptr, attr, &cfg) !=
            cudaSuccess ||
        cudaOccupancyMaxActiveClusters(&n, kernel, &cfg) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return rows < n ? int(rows) : n;
}

}  // namespace cgr
