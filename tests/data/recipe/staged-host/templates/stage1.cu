// tests/data/recipe/staged-host/templates/stage1.cu: a stand-in for the second stage's template
// (t0708 copies it to norm.cu, pool.cu and reduce.cu), host code only: it checks that input 0
// is the intermediate (contiguous, the shape its parameters name), the others the task's,
// and the output the shape its parameters name (a stage writing the task's output viewed
// gets it so), and writes out[j] = 2 in0[j] + CGR_NIN for the output's elements; then it
// fills its own workspace with 0xCD bytes. It defines FAKE_WS_BYTES itself: stage 0's must
// be gone.
#include <cutegen/abi.h>
#include <cmath>
#include <cstring>
#include "ops.cuh"  // recipe:inline

// recipe:params

#ifdef FAKE_WS_BYTES
#error "stage 0's macro FAKE_WS_BYTES reached stage 1"
#endif
#define FAKE_WS_BYTES 24
namespace fake1 {
constexpr int kInNdims[] = CGR_IN_NDIMS;
constexpr int64_t kInShapes[][8] = CGR_IN_SHAPES;
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
    for (int i = 0; i < n_in; i++) {
        if (in[i].ndim != fake1::kInNdims[i] || in[i].data == nullptr)
            return CG_UNSUPPORTED;
        for (int d = 0; d < in[i].ndim; d++)
            if (in[i].shape[d] != fake1::kInShapes[i][d])
                return CG_UNSUPPORTED;
    }
    if (in[0].dtype != CG_FLOAT32 || !cg_is_contiguous(&in[0]) || !cg_is_contiguous(out) ||
        cg_numel(out) > cg_numel(&in[0]) || out->ndim != fake1::kOutNdim)
        return CG_UNSUPPORTED;
    for (int d = 0; d < out->ndim; d++)
        if (out->shape[d] != fake1::kOut[d])
            return CG_UNSUPPORTED;
    const float *x = static_cast<const float *>(in[0].data);
    float *y = static_cast<float *>(out->data);
    for (int64_t j = 0; j < cg_numel(out); j++)
        y[j] = 2.f * x[j] + float(CGR_NIN);
    memset(workspace, 0xCD, FAKE_WS_BYTES);
    return CG_OK;
}
