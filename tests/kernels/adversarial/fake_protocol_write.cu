// problem: examples/problems/relu_small.py
// expect: rejected
// trick: writes a fake protocol reply straight to fd 1 with write(2) (bypassing stdio buffers), then
//   computes relu correctly. Caught by: the static symbol check (write is not an allowed
//   import); were it allowed, fd 1 is stderr in the worker, so the line would only reach the
//   log.
#include <unistd.h>
#include <string.h>
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
    static const char fake[] = "{\"ok\":true,\"status\":0,\"wall_ms\":0.001}\n";
    if (write(1, fake, strlen(fake)) < 0)
        return CG_LAUNCH_FAILED;
    relu_kernel<<<1024, 256, 0, stream>>>(x, y, n);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
