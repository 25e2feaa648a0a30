// problem: examples/problems/relu_small.py
// expect: ok
// what: the legal way to use a second stream: fork from the given stream with an event, run the
//   second half of the elements on a stream of its own while the first half runs on the
//   given stream, and join back with an event the given stream waits on before returning.
//   All work is then ordered before anything the caller enqueues next (its end event): the
//   timer counts it. Streams and events are created and destroyed in each call (destroying
//   them with work pending is allowed: resources are released when the work completes).
#include <cutegen/abi.h>

__global__ void relu_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t n)
{
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += int64_t(gridDim.x) * blockDim.x)
        y[i] = x[i] < 0.f ? 0.f : x[i];
}

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
    const int64_t half = n / 2;
    cudaStream_t side;
    cudaEvent_t fork, join;
    if (cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess)
        return CG_LAUNCH_FAILED;
    if (cudaEventCreateWithFlags(&fork, cudaEventDisableTiming) != cudaSuccess) {
        cudaStreamDestroy(side);
        return CG_LAUNCH_FAILED;
    }
    if (cudaEventCreateWithFlags(&join, cudaEventDisableTiming) != cudaSuccess) {
        cudaEventDestroy(fork);
        cudaStreamDestroy(side);
        return CG_LAUNCH_FAILED;
    }
    int rc = CG_OK;
    // fork: the side stream starts after everything already on the given stream
    if (cudaEventRecord(fork, stream) != cudaSuccess ||
        cudaStreamWaitEvent(side, fork, 0) != cudaSuccess)
        rc = CG_LAUNCH_FAILED;
    if (rc == CG_OK) {
        relu_kernel<<<512, 256, 0, side>>>(x + half, y + half, n - half);
        relu_kernel<<<512, 256, 0, stream>>>(x, y, half);
        if (cudaGetLastError() != cudaSuccess)
            rc = CG_LAUNCH_FAILED;
    }
    // join: the given stream waits for the side stream's work
    if (cudaEventRecord(join, side) != cudaSuccess ||
        cudaStreamWaitEvent(stream, join, 0) != cudaSuccess)
        rc = CG_LAUNCH_FAILED;
    cudaEventDestroy(fork);
    cudaEventDestroy(join);
    cudaStreamDestroy(side);
    return rc;
}
