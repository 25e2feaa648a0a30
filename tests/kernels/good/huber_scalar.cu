// problem: examples/problems/huber_small.py
// expect: ok
// what: a 0-dim output: the smooth L1 loss (beta 0.5) of two tensors, one CTA summing in double.
#include <cutegen/abi.h>

__global__ void huber_mean(const float *__restrict__ p, const float *__restrict__ t, float *__restrict__ out,
                           int64_t n)
{
    __shared__ double part[1024];
    double s = 0.0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
        const float d = fabsf(p[i] - t[i]);
        s += d < 0.5f ? 0.5 * double(d) * d / 0.5 : double(d) - 0.25;
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *out = float(part[0] / double(n));
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    (void)workspace; (void)workspace_bytes;
    if (n_in != 2 || n_out != 1 || in[0].dtype != CG_FLOAT32 || in[1].dtype != CG_FLOAT32 ||
        out[0].dtype != CG_FLOAT32 || !cg_is_contiguous(&in[0]) || !cg_is_contiguous(&in[1]) ||
        cg_numel(&in[0]) != cg_numel(&in[1]) || cg_numel(&out[0]) != 1)
        return CG_UNSUPPORTED;
    huber_mean<<<1, 1024, 0, stream>>>(static_cast<const float *>(in[0].data),
                                        static_cast<const float *>(in[1].data),
                                        static_cast<float *>(out[0].data), cg_numel(&in[0]));
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
