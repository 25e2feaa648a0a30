// problem: examples/problems/relu_small.py
// expect: wrong_result
// trick: returns without computing: fills the output with zeros (cudaMemsetAsync) and reports
//   success. Caught by: the comparison with torch (relu of randn is positive for half of the
//   elements).
#include <cutegen/abi.h>

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
    if (cudaMemsetAsync(y, 0, size_t(n) * sizeof(float), stream) != cudaSuccess)
        return CG_LAUNCH_FAILED;
    return CG_OK;
}
