// problem: examples/problems/relu_small.py
// expect: runtime_error
// trick: writes far outside the output buffer (y[n + 2^34]), an illegal address: the CUDA
//   context of the worker is lost. Caught by: the worker reports the CUDA error
//   (cudaErrorIllegalAddress) at the synchronisation and exits; the verdict is runtime_error
//   and the orchestrator carries on.
#include <cutegen/abi.h>

__global__ void bad_write(float *y, int64_t n)
{
    int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n)
        y[i + (int64_t(1) << 34)] = 1.f;  // 64 GB past the buffer
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    (void)workspace; (void)workspace_bytes;
    if (n_in != 1 || n_out != 1 || in[0].dtype != CG_FLOAT32 || out[0].dtype != CG_FLOAT32 ||
        !cg_is_contiguous(&in[0]) || !cg_is_contiguous(&out[0]) ||
        cg_numel(&in[0]) != cg_numel(&out[0]))
        return CG_UNSUPPORTED;
    const int64_t n = cg_numel(&in[0]);
    const float *x = static_cast<const float *>(in[0].data);
    float *y = static_cast<float *>(out[0].data);
    (void)x;
    bad_write<<<unsigned((n + 255) / 256), 256, 0, stream>>>(y, n);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
