// broken on purpose: cg_forward with the wrong signature (abi.h is force-included)
#include <cute/tensor.hpp>
__global__ void k(float *y) { y[threadIdx.x] = 0.f; }
extern "C" int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                          cudaStream_t stream)
{
    k<<<1, 32, 0, stream>>>((float *)out[0].data);
    return 0;
}
