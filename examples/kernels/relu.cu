// ReLU for KernelBench level1/19_ReLU (any shape, float32, contiguous):
// each thread block takes a tile of 4096 elements viewed through CuTe, loads it in
// 16-byte vectors (4 floats a thread, 4 iterations), applies max(x, 0) and stores.
#include <cutegen/abi.h>
#include <cute/tensor.hpp>

using namespace cute;

constexpr int kThreads = 256;
constexpr int kVec = 4;                     // floats per 16-byte access
constexpr int kTile = kThreads * kVec * 4;  // elements per block

__global__ void relu_kernel(const float *__restrict__ x, float *__restrict__ y, int64_t n)
{
    int64_t base = int64_t(blockIdx.x) * kTile;
    if (base + kTile <= n) {
        // Full tile: a (kVec, kThreads, 4) view so each thread owns one float4 per step.
        auto layout = make_layout(make_shape(Int<kVec>{}, Int<kThreads>{}, Int<kTile / (kVec * kThreads)>{}));
        Tensor gx = make_tensor(make_gmem_ptr(x + base), layout);
        Tensor gy = make_tensor(make_gmem_ptr(y + base), layout);
        CUTE_UNROLL
        for (int s = 0; s < size<2>(layout); ++s) {
            float4 v = *reinterpret_cast<const float4 *>(&gx(0, threadIdx.x, s));
            v.x = fmaxf(v.x, 0.f); v.y = fmaxf(v.y, 0.f);
            v.z = fmaxf(v.z, 0.f); v.w = fmaxf(v.w, 0.f);
            *reinterpret_cast<float4 *>(&gy(0, threadIdx.x, s)) = v;
        }
    } else {
        for (int64_t i = base + threadIdx.x; i < n; i += kThreads)
            y[i] = fmaxf(x[i], 0.f);
    }
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    (void)workspace; (void)workspace_bytes;
    if (n_in != 1 || n_out != 1 || in[0].dtype != CG_FLOAT32 || !cg_is_contiguous(&in[0]) ||
        !cg_is_contiguous(&out[0]) || cg_numel(&in[0]) != cg_numel(&out[0]))
        return CG_UNSUPPORTED;
    int64_t n = cg_numel(&in[0]);
    if ((reinterpret_cast<uintptr_t>(in[0].data) | reinterpret_cast<uintptr_t>(out[0].data)) % 16)
        return CG_UNSUPPORTED;
    int64_t blocks = (n + kTile - 1) / kTile;
    if (blocks == 0)
        return CG_OK;
    relu_kernel<<<dim3(unsigned(blocks)), kThreads, 0, stream>>>(
        static_cast<const float *>(in[0].data), static_cast<float *>(out[0].data), n);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
