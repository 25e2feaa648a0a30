// broken on purpose: a CuTe misuse whose error is reported deep inside CuTe's headers
#include <cutegen/abi.h>
#include <cute/tensor.hpp>
using namespace cute;
template <class T>
__global__ void k(const T *x, T *y)
{
    auto layout = make_layout(make_shape(Int<4>{}, Int<8>{}));
    Tensor gx = make_tensor(make_gmem_ptr(x), layout);
    Tensor gy = make_tensor(make_gmem_ptr(y), layout);
    auto part = local_partition(gx, Layout<Shape<_3, _5>>{}, threadIdx.x, 7);
    gy(0, 0) = gx(threadIdx.x, 0, 1) + part(0);
}
CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *ws, size_t wsb, cudaStream_t stream)
{
    k<float><<<1, 32, 0, stream>>>((const float *)in[0].data, (float *)out[0].data);
    return 0;
}
