// broken on purpose: an undefined identifier inside a kernel
#include <cutegen/abi.h>
#include <cute/tensor.hpp>
using namespace cute;
__global__ void k(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = fmaxf(x[i], zero);
}
CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *ws, size_t wsb, cudaStream_t stream)
{
    int n = (int)cg_numel(&in[0]);
    k<<<(n + 255) / 256, 256, 0, stream>>>((const float *)in[0].data, (float *)out[0].data, n);
    k<<<(n + 255) / 256, 256, 0, stream>>>((const float *)in[0].data, (float *)out[0].data, n, 1);
    return 0;
}
