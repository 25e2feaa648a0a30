// probe.cu: a small CUDA program whose kernels cover the cases the profiler digest and
// the structure fingerprint must tell apart (plain copy, float4 copy, cp.async staging,
// mma.sync tensor cores, a shuffle+atomic reduction). Used by capture.sh on a GPU host
// to record ncu output fixtures; it brackets one launch of each kernel with
// cudaProfilerStart/Stop after warm-ups, as the cutegen worker does.
#include <cstdio>
#include <cuda_fp16.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

__global__ void copy_kernel(const float *__restrict__ in, float *__restrict__ out, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = in[i] * 2.0f;
}

__global__ void copy4_kernel(const float4 *__restrict__ in, float4 *__restrict__ out, size_t n4)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
        float4 v = in[i];
        v.x *= 2.0f; v.y *= 2.0f; v.z *= 2.0f; v.w *= 2.0f;
        out[i] = v;
    }
}

__global__ void cpasync_kernel(const float4 *__restrict__ in, float4 *__restrict__ out, size_t n4)
{
    __shared__ float4 buf[256];
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n4)
        return;
    unsigned saddr = (unsigned)__cvta_generic_to_shared(&buf[threadIdx.x]);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(saddr), "l"(in + i));
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
    float4 v = buf[(threadIdx.x + 1) % blockDim.x];
    out[i] = v;
}

// Each warp multiplies 16x16 fp16 tiles with mma.sync m16n8k16 (fp32 accumulate) iters times.
__global__ void mma_kernel(const half *__restrict__ a, float *__restrict__ c, int iters)
{
    unsigned lane = threadIdx.x % 32;
    const unsigned *pa = reinterpret_cast<const unsigned *>(a) + lane * 4;
    unsigned a0 = pa[0], a1 = pa[1], a2 = pa[2], a3 = pa[3];
    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    for (int k = 0; k < iters; k++) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(a0), "r"(a1));
    }
    size_t o = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * 4;
    c[o] = d0; c[o + 1] = d1; c[o + 2] = d2; c[o + 3] = d3;
}

__global__ void reduce_kernel(const float *__restrict__ in, float *__restrict__ out, size_t n)
{
    float s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        s += in[i];
    for (int o = 16; o > 0; o /= 2)
        s += __shfl_down_sync(0xffffffffu, s, o);
    if (threadIdx.x % 32 == 0)
        atomicAdd(out, s);
}

static void launch_all(const float *in, float *out, half *h, float *c, size_t n)
{
    copy_kernel<<<1056, 256>>>(in, out, n);
    copy4_kernel<<<1056, 256>>>((const float4 *)in, (float4 *)out, n / 4);
    cpasync_kernel<<<(unsigned)(n / 4 / 256), 256>>>((const float4 *)in, (float4 *)out, n / 4);
    mma_kernel<<<264, 128>>>(h, c, 4096);
    reduce_kernel<<<1056, 256>>>(in, out, n);
}

int main(void)
{
    size_t n = (size_t)64 << 20; // 64 Mi floats = 256 MiB each way
    float *in, *out, *c;
    half *h;
    if (cudaMalloc(&in, n * 4) || cudaMalloc(&out, n * 4) || cudaMalloc(&h, 1 << 20) ||
        cudaMalloc(&c, 264 * 128 * 16)) {
        fprintf(stderr, "probe: cudaMalloc failed\n");
        return 1;
    }
    cudaMemset(in, 0, n * 4);
    cudaMemset(h, 0, 1 << 20);
    for (int w = 0; w < 3; w++)
        launch_all(in, out, h, c, n);
    cudaDeviceSynchronize();
    cudaProfilerStart();
    launch_all(in, out, h, c, n);
    cudaDeviceSynchronize();
    cudaProfilerStop();
    cudaError_t e = cudaGetLastError();
    printf("probe: %s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
