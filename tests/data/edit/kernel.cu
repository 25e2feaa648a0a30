// problem: scale_bias_small.py
// y = x * weight + bias for a contiguous fp32 x of shape (rows, features), weight and
// bias of shape (features). One thread per element; a float4 path when features is a
// multiple of 4 and every pointer is 16-byte aligned, a scalar path otherwise.
#include <cutegen/abi.h>
#include <cute/tensor.hpp>

using namespace cute;

constexpr int kThreads = 256;

__global__ void scale_bias_scalar(const float *__restrict__ x, const float *__restrict__ w,
                                  const float *__restrict__ b, float *__restrict__ y,
                                  int64_t n, int64_t features)
{
    int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (i >= n)
        return;
    int64_t f = i % features;
    y[i] = x[i] * w[f] + b[f];
}

__global__ void scale_bias_vec4(const float4 *__restrict__ x, const float4 *__restrict__ w,
                                const float4 *__restrict__ b, float4 *__restrict__ y,
                                int64_t n4, int64_t features4)
{
    int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (i >= n4)
        return;
    int64_t f = i % features4;
    float4 v = x[i], s = w[f], t = b[f];
    v.x = v.x * s.x + t.x;
    v.y = v.y * s.y + t.y;
    v.z = v.z * s.z + t.z;
    v.w = v.w * s.w + t.w;
    y[i] = v;
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    (void)workspace; (void)workspace_bytes;
    if (n_in != 3 || n_out != 1)
        return CG_UNSUPPORTED;
    const cg_tensor &x = in[0], &w = in[1], &b = in[2], &y = out[0];
    if (x.dtype != CG_FLOAT32 || x.ndim != 2 || !cg_is_contiguous(&x) || !cg_is_contiguous(&y))
        return CG_UNSUPPORTED;
    const int64_t n = cg_numel(&x), features = x.shape[1];
    if (n == 0)
        return CG_OK;
    const bool aligned = ((reinterpret_cast<uintptr_t>(x.data) | reinterpret_cast<uintptr_t>(w.data) |
                           reinterpret_cast<uintptr_t>(b.data) | reinterpret_cast<uintptr_t>(y.data)) % 16) == 0;
    if (features % 4 == 0 && aligned) {
        const int64_t n4 = n / 4;
        scale_bias_vec4<<<unsigned((n4 + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
            static_cast<const float4 *>(x.data), static_cast<const float4 *>(w.data),
            static_cast<const float4 *>(b.data), static_cast<float4 *>(y.data), n4, features / 4);
        if (cudaGetLastError() != cudaSuccess)
            return CG_LAUNCH_FAILED;
        return CG_OK;
    }
    scale_bias_scalar<<<unsigned((n + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
        static_cast<const float *>(x.data), static_cast<const float *>(w.data),
        static_cast<const float *>(b.data), static_cast<float *>(y.data), n, features);
    if (cudaGetLastError() != cudaSuccess)
        return CG_LAUNCH_FAILED;
    return CG_OK;
}
