// problem: examples/problems/relu_small.py
// expect: rejected
// trick: launches the work on a stream of its own (cudaStreamNonBlocking) and returns without
//   joining it to the given stream: the events on the given stream time nothing, yet the
//   outputs are right after the harness's device-wide sync. The work is made deliberately
//   slow (relu recomputed 200 times, ~1 ms) so the escape is far above the 0.05 ms slack.
//   Caught by: the timer-escape check (the device is still busy after the end event on the
//   given stream has completed: the tail of a device-wide sync).
#include <cutegen/abi.h>

__global__ void relu_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t n)
{
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += int64_t(gridDim.x) * blockDim.x)
        y[i] = x[i] < 0.f ? 0.f : x[i];
}

__global__ void slow_relu(const float *__restrict__ x, float *__restrict__ y, int64_t n, int reps)
{
    for (int r = 0; r < reps; ++r)
        for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
             i += int64_t(gridDim.x) * blockDim.x)
            y[i] = x[i] < 0.f ? 0.f : x[i];
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
    cudaStream_t own;
    if (cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking) != cudaSuccess)
        return CG_LAUNCH_FAILED;
    slow_relu<<<264, 256, 0, own>>>(x, y, n, 200);
    cudaError_t e = cudaGetLastError();
    cudaStreamDestroy(own);  // returns at once; the work goes on
    (void)stream;
    return e == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
