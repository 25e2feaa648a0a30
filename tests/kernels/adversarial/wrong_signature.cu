// problem: examples/problems/relu_small.py
// expect: compile_error
// trick: defines cg_forward with another signature (no workspace, no stream: it would launch
//   on the legacy default stream and read garbage arguments if it were called). Caught by:
//   the compiler: cutegen/abi.h is force-included (-include cutegen/abi.h), and a C-linkage
//   function cannot be redeclared with different parameters.
#include <cutegen/abi.h>

__global__ void relu_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t n)
{
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += int64_t(gridDim.x) * blockDim.x)
        y[i] = x[i] < 0.f ? 0.f : x[i];
}

CG_EXPORT int cg_forward(const float *x, float *y, int64_t n)
{
    relu_kernel<<<1024, 256>>>(x, y, n);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
