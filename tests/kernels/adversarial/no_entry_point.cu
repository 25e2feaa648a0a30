// problem: examples/problems/relu_small.py
// expect: no_entry_point
// trick: computes relu but exports its entry under another name (cg_forward_v2), so there is
//   no cg_forward to call. Caught by: the static check of the .so's defined symbols (nm -D);
//   the verdict is compile_error with "no_entry_point": true in the report (the worker,
//   were it started, would also answer {"event":"error","kind":"no_entry_point"}).
#include <cutegen/abi.h>

__global__ void relu_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t n)
{
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += int64_t(gridDim.x) * blockDim.x)
        y[i] = x[i] < 0.f ? 0.f : x[i];
}

CG_EXPORT int cg_forward_v2(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                            void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    (void)workspace; (void)workspace_bytes;
    if (n_in != 1 || n_out != 1)
        return CG_UNSUPPORTED;
    int64_t n = cg_numel(&in[0]);
    relu_kernel<<<1024, 256, 0, stream>>>(static_cast<const float *>(in[0].data),
                                          static_cast<float *>(out[0].data), n);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
