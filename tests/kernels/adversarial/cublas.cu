// problem: examples/problems/relu_small.py
// expect: rejected
// trick: computes y = relu(x) but also calls cuBLAS (cublasSgemm_v2, declared by hand so the file
//   compiles without cuBLAS headers; the shared object gets an undefined cuBLAS symbol).
//   Caught by: the static check of the .so's undefined symbols (cublas* is not allowed).
#include <cutegen/abi.h>

__global__ void relu_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t n)
{
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += int64_t(gridDim.x) * blockDim.x)
        y[i] = x[i] < 0.f ? 0.f : x[i];
}

extern "C" int cublasCreate_v2(void **handle);
extern "C" int cublasSgemm_v2(void *handle, int transa, int transb, int m, int n, int k,
                              const float *alpha, const float *A, int lda, const float *B,
                              int ldb, const float *beta, float *C, int ldc);

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
    static void *handle = nullptr;
    if (!handle && cublasCreate_v2(&handle) != 0)
        return CG_LAUNCH_FAILED;
    const float one = 1.f, zero = 0.f;
    // A 1x1 "GEMM" on the first element, just to use the library.
    cublasSgemm_v2(handle, 0, 0, 1, 1, 1, &one, x, 1, x, 1, &zero, y, 1);
    relu_kernel<<<1024, 256, 0, stream>>>(x, y, n);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
