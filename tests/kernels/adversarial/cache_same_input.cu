// problem: examples/problems/relu_small.py
// expect: rejected
// trick: skips the work when the input looks unchanged since the last call (its first element,
//   read back with a small synchronous copy): every trial has fresh inputs, so all trials
//   pass; the timed calls reuse one input. Caught by: outputs re-poisoned before every timed
//   call and checked after the last one ("keeps results from earlier calls").
#include <cutegen/abi.h>

__global__ void relu_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t n)
{
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
    static float last = 0.f;
    static const float *last_ptr = nullptr;
    float first = 0.f;
    if (n > 0) {
        if (cudaMemcpyAsync(&first, x, sizeof first, cudaMemcpyDeviceToHost, stream) != cudaSuccess ||
            cudaStreamSynchronize(stream) != cudaSuccess)
            return CG_LAUNCH_FAILED;
    }
    if (last_ptr == x && first == last)
        return CG_OK;  // "same input as last time: the output is still there"
    last_ptr = x;
    last = first;
    relu_kernel<<<1024, 256, 0, stream>>>(x, y, n);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
