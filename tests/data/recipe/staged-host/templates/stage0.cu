// tests/data/recipe/staged-host/templates/stage0.cu: a stand-in for the first stage's template
// (t0708 copies it to conv_tc.cu), host code only, so that a staged candidate's glue runs
// on the host: it checks what the composite hands it (the task's inputs, the intermediate
// as its output, its own workspace), writes out[i] = 0.5 (i mod 7) + CGR_COUT, and then
// fills the workspace it asked for with 0xAB bytes (an intermediate overlapping it breaks).
#include <cutegen/abi.h>
#include <cmath>
#include <cstring>
#include "ops.cuh"  // recipe:inline

// recipe:params

#define FAKE_WS_BYTES 1000  // a macro of this stage that the next must not see
namespace fake0 {
constexpr int64_t kOut[] = CGR_OUT_SHAPE;
constexpr int kOutNdim = CGR_OUT_NDIM;
}

CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *in, int n_in)
{
    (void)in;
    return n_in == CGR_NIN ? FAKE_WS_BYTES : 0;
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out, void *workspace,
                         size_t workspace_bytes, cudaStream_t stream)
{
    (void)stream;
    if (n_in != CGR_NIN || n_out != 1 || workspace == nullptr || workspace_bytes < FAKE_WS_BYTES)
        return CG_BAD_WORKSPACE;
    if (out->dtype != CG_FLOAT32 || out->ndim != fake0::kOutNdim || !cg_is_contiguous(out))
        return CG_UNSUPPORTED;
    for (int d = 0; d < fake0::kOutNdim; d++)
        if (out->shape[d] != fake0::kOut[d])
            return CG_UNSUPPORTED;
    for (int i = 0; i < n_in; i++)
        if (in[i].data == nullptr)
            return CG_UNSUPPORTED;
    float *y = static_cast<float *>(out->data);
    for (int64_t i = 0; i < cg_numel(out); i++)
        y[i] = 0.5f * float(i % 7) + float(CGR_COUT);
    memset(workspace, 0xAB, FAKE_WS_BYTES);
    return CG_OK;
}
