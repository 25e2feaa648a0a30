// problem: examples/problems/relu_small.py
// expect: timeout
// trick: launches a kernel that never ends (it spins with __nanosleep, which the compiler cannot
//   remove). Caught by: the worker's time limit per call: the worker's process group is
//   killed and the verdict is timeout; the GPU is freed with the process.
#include <cutegen/abi.h>

__global__ void spin(float *y, int64_t n)
{
    for (;;)
        __nanosleep(1000);
    if (n > 0) y[0] = 0.f;  // never reached
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
    spin<<<1, 32, 0, stream>>>(y, n);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
