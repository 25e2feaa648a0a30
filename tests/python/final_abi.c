/* A host-only stand-in candidate for tests/python/test_final_ctypes.py: the reference
 * process calls cg_forward through ctypes exactly as on the GPU, but here the "device"
 * pointers are host memory, so what arrived can be checked without a GPU.
 * CG_TEST_STATUS picks the return code; the call is recorded in cg_test_seen. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cutegen/abi.h>

CG_EXPORT int64_t cg_test_seen[64];
CG_EXPORT int cg_test_status;

CG_EXPORT void cg_test_layout(size_t *out)
{
    out[0] = sizeof(cg_tensor);
    out[1] = offsetof(cg_tensor, data);
    out[2] = offsetof(cg_tensor, dtype);
    out[3] = offsetof(cg_tensor, ndim);
    out[4] = offsetof(cg_tensor, shape);
    out[5] = offsetof(cg_tensor, stride);
}

CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *inputs, int n_inputs)
{
    return n_inputs > 0 ? (size_t)cg_numel(&inputs[0]) * 4 + 13 : 0;
}

/* out[0] = relu(in[0]) * in[1] (a 0-dim float); the workspace is written in full. */
CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    int64_t *s = cg_test_seen;
    memset(cg_test_seen, 0, sizeof cg_test_seen);
    s[0] = n_in;
    s[1] = n_out;
    s[2] = (int64_t)(intptr_t)stream;
    s[3] = (int64_t)workspace_bytes;
    s[4] = workspace != NULL;
    for (int i = 0; i < n_in && i < 3; i++) {
        s[8 + 8 * i] = in[i].dtype;
        s[9 + 8 * i] = in[i].ndim;
        for (int d = 0; d < in[i].ndim && d < 3; d++) {
            s[10 + 8 * i + d] = in[i].shape[d];
            s[13 + 8 * i + d] = in[i].stride[d];
        }
    }
    s[40] = out[0].dtype;
    s[41] = out[0].ndim;
    s[42] = out[0].shape[0];
    s[43] = out[0].stride[0];
    if (cg_test_status)
        return cg_test_status;
    if (n_in != 2 || n_out != 1 || in[0].dtype != CG_FLOAT32 || in[1].ndim != 0 ||
        workspace_bytes != cg_workspace_bytes(in, n_in))
        return CG_UNSUPPORTED;
    memset(workspace, 0x5a, workspace_bytes);
    const float *x = in[0].data, *k = in[1].data;
    float *y = out[0].data;
    for (int64_t i = 0; i < cg_numel(&in[0]); i++)
        y[i] = (x[i] < 0.f ? 0.f : x[i]) * k[0];
    return CG_OK;
}
