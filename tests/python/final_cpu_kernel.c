/* A host-only candidate for tests/python/test_final_cpu.py, where torch runs on the CPU
 * and tensors' "device" pointers are host memory: y = relu(x) * w * alpha for the problem
 * of that test (x [n], alpha a 0-dim float32, w [n] a parameter). cg_test_mode makes it
 * misbehave: 1 wrong values, 2 right on the first call only (then writes nothing),
 * 3 writes into its input, 4 returns CG_UNSUPPORTED. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cutegen/abi.h>

CG_EXPORT int cg_test_mode;
CG_EXPORT int64_t cg_test_calls;

CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *in, int n_in)
{
    return n_in == 3 ? (size_t)cg_numel(&in[0]) * sizeof(float) : 0;
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    (void)stream;
    cg_test_calls++;
    if (cg_test_mode == 4 || n_in != 3 || n_out != 1 || in[0].dtype != CG_FLOAT32 ||
        in[1].ndim != 0 || in[1].dtype != CG_FLOAT32 || in[2].dtype != CG_FLOAT32 ||
        !cg_is_contiguous(&in[0]) || !cg_is_contiguous(&out[0]) ||
        workspace_bytes != cg_workspace_bytes(in, n_in))
        return CG_UNSUPPORTED;
    if (cg_test_mode == 2 && cg_test_calls > 1)
        return CG_OK;
    int64_t n = cg_numel(&in[0]);
    float *x = in[0].data, *ws = workspace, *y = out[0].data;
    const float alpha = *(const float *)in[1].data, *w = in[2].data;
    for (int64_t i = 0; i < n; i++)
        ws[i] = (x[i] < 0.f ? 0.f : x[i]) * alpha;
    for (int64_t i = 0; i < n; i++)
        y[i] = cg_test_mode == 1 ? ws[i] : ws[i] * w[i];
    if (cg_test_mode == 3)
        x[0] += 1.f;
    return CG_OK;
}
