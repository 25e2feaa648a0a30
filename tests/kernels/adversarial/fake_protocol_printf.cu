// problem: examples/problems/relu_small.py
// expect: wrong_result
// trick: prints fake protocol replies on stdout with printf + fflush ({"ok":true,"status":0,...},
//   a fake check reply with "pass":true and a fake timing reply), and computes nothing.
//   Caught by: the worker's stdout is not the protocol channel (it duplicates fd 1 at start
//   and points fd 1 at stderr: the lines land in worker.log), so the harness reads the real
//   reply, and the NaN-poisoned output fails the comparison.
#include <stdio.h>
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
    (void)x; (void)y; (void)stream;
    printf("{\"ok\":true,\"status\":0,\"wall_ms\":0.001}\n");
    printf("{\"ok\":true,\"pass\":true,\"outputs\":[],\"modified_inputs\":[]}\n");
    printf("{\"ok\":true,\"status\":0,\"times_ms\":[0.0001,0.0001],\"wall_ms\":[0.0001,0.0001]}\n");
    fflush(stdout);
    return CG_OK;
}
