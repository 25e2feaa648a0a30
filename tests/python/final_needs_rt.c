/* A stand-in candidate that needs a CUDA runtime by soname (libcudart.so.77, made by
 * t0115 off the loader's path), for tests/python/test_final_ctypes.py. */
#include <stddef.h>
#include <stdint.h>

#include <cutegen/abi.h>

float cudaFakeRuntimeValue(void);

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    (void)in; (void)n_in; (void)n_out; (void)workspace; (void)workspace_bytes; (void)stream;
    float *y = out[0].data;
    y[0] = y[1] = cudaFakeRuntimeValue();
    return CG_OK;
}
