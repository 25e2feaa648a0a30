// problem: examples/problems/scale_bias_small.py
// expect: ok
// what: y = x * weight + bias for x (rows, F) and per-feature parameters of shape (F):
//   inputs are [x, weight, bias]: forward()'s argument, then the parameters in state_dict
//   order. Checks that the harness passes parameters, in that order (the parameters are
//   random, so swapping weight and bias gives a wrong result). 16-byte vectors when F is a
//   multiple of 4, one element per thread otherwise.
#include <cutegen/abi.h>

__global__ void scale_bias4(const float4 *__restrict__ x, const float4 *__restrict__ w,
                            const float4 *__restrict__ b, float4 *__restrict__ y, int64_t n4,
                            int64_t f4)
{
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
         i += int64_t(gridDim.x) * blockDim.x) {
        const int64_t j = i % f4;
        float4 v = x[i], s = w[j], t = b[j];
        y[i] = make_float4(fmaf(v.x, s.x, t.x), fmaf(v.y, s.y, t.y), fmaf(v.z, s.z, t.z),
                           fmaf(v.w, s.w, t.w));
    }
}

__global__ void scale_bias1(const float *__restrict__ x, const float *__restrict__ w,
                            const float *__restrict__ b, float *__restrict__ y, int64_t n,
                            int64_t f)
{
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += int64_t(gridDim.x) * blockDim.x)
        y[i] = fmaf(x[i], w[i % f], b[i % f]);
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    (void)workspace; (void)workspace_bytes;
    if (n_in != 3 || n_out != 1)
        return CG_UNSUPPORTED;
    const cg_tensor &x = in[0], &w = in[1], &b = in[2], &y = out[0];
    for (const cg_tensor *t : {&x, &w, &b, &y})
        if (t->dtype != CG_FLOAT32 || !cg_is_contiguous(t))
            return CG_UNSUPPORTED;
    if (x.ndim < 1 || w.ndim != 1 || b.ndim != 1 || w.shape[0] != x.shape[x.ndim - 1] ||
        b.shape[0] != w.shape[0] || cg_numel(&y) != cg_numel(&x))
        return CG_UNSUPPORTED;
    const int64_t n = cg_numel(&x), f = w.shape[0];
    if (n == 0)
        return CG_OK;
    if (f % 4 == 0) {
        scale_bias4<<<1024, 256, 0, stream>>>(
            static_cast<const float4 *>(x.data), static_cast<const float4 *>(w.data),
            static_cast<const float4 *>(b.data), static_cast<float4 *>(y.data), n / 4, f / 4);
    } else {
        scale_bias1<<<1024, 256, 0, stream>>>(
            static_cast<const float *>(x.data), static_cast<const float *>(w.data),
            static_cast<const float *>(b.data), static_cast<float *>(y.data), n, f);
    }
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
