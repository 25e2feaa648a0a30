// problem: examples/problems/relu_small.py
// expect: rejected
// trick: starts a host thread with pthread_create() that launches the kernel on the given stream
//   and returns before it finished (a thread could also outlive the call and race the next
//   one). Caught by: the static symbol check (pthread_create is not an allowed import).
#include <pthread.h>
#include <cutegen/abi.h>

__global__ void relu_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t n)
{
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += int64_t(gridDim.x) * blockDim.x)
        y[i] = x[i] < 0.f ? 0.f : x[i];
}

struct job { const float *x; float *y; int64_t n; cudaStream_t s; };
static void *worker(void *arg)
{
    job *j = static_cast<job *>(arg);
    relu_kernel<<<1024, 256, 0, j->s>>>(j->x, j->y, j->n);
    return nullptr;
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
    static job j;
    j = job{x, y, n, stream};
    pthread_t t;
    if (pthread_create(&t, nullptr, worker, &j) != 0)
        return CG_LAUNCH_FAILED;
    pthread_detach(t);
    return CG_OK;
}
