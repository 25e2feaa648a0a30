// broken on purpose: an error only the host preprocessor (gcc) sees
#include <cutegen/abi.h>
#ifndef __CUDA_ARCH__
#include <no_such_header_for_host.h>
#endif
__global__ void k(float *y) { y[threadIdx.x] = 0.f; }
CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *ws, size_t wsb, cudaStream_t stream)
{
    k<<<1, 32, 0, stream>>>((float *)out[0].data);
    return 0;
}
