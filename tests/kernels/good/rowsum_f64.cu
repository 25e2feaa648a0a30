// problem: level2/14_Gemm_Divide_Sum_Scaling.py
// expect: ok
// what: more exact than the reference: sum(x @ W^T / 2, dim 1) * 1.5 = 0.75 x . (sum of W's
// rows), all in double. PyTorch's fp32 result is off by up to ~0.02 at |y| ~ 60 (beyond
// atol = rtol = 1e-4); the harness's float64 arbitration must pass this kernel.
#include <cutegen/abi.h>

// s[k] = sum_n W[n, k], a thread a column (coalesced along k)
__global__ void colsum(const float *__restrict__ w, double *__restrict__ s, int64_t n, int64_t k)
{
    const int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= k)
        return;
    double acc = 0.0;
    for (int64_t r = 0; r < n; ++r)
        acc += double(w[r * k + c]);
    s[c] = acc;
}

// y[m] = scale * x[m, :] . s, a CTA a row
__global__ void rowdot(const float *__restrict__ x, const double *__restrict__ s, float *__restrict__ y,
                       int64_t k, double scale)
{
    __shared__ double part[256];
    const int64_t m = blockIdx.x;
    double acc = 0.0;
    for (int64_t c = threadIdx.x; c < k; c += blockDim.x)
        acc += double(x[m * k + c]) * s[c];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        y[m] = float(part[0] * scale);
}

CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *in, int n_in)
{
    return n_in == 2 && in[1].ndim == 2 ? size_t(in[1].shape[1]) * sizeof(double) : 0;
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    if (n_in != 2 || n_out != 1 || in[0].ndim != 2 || in[1].ndim != 2 || !cg_is_contiguous(&in[0]) ||
        !cg_is_contiguous(&in[1]) || in[0].shape[1] != in[1].shape[1] ||
        workspace_bytes < size_t(in[1].shape[1]) * sizeof(double))
        return CG_UNSUPPORTED;
    const int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[0];
    double *s = static_cast<double *>(workspace);
    colsum<<<unsigned((k + 255) / 256), 256, 0, stream>>>(static_cast<const float *>(in[1].data), s, n, k);
    rowdot<<<unsigned(m), 256, 0, stream>>>(static_cast<const float *>(in[0].data), s,
                                            static_cast<float *>(out[0].data), k, 0.75);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
