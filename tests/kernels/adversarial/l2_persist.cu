// problem: tests/gpu/problems/rowsum_l2.py
// expect: ok
// trick: correct row sums, but the kernel reads its 24 MiB input evict-last (persisting), so
//   that the input might outlast the harness's L2 flush (normal writes) and every timed call
//   after the first read it from L2. (Setting aside L2 for persisting lines,
//   cudaDeviceSetLimit, is refused by the integrity check.) Caught by: the worker (and
//   python/cutegen_ref.py's timing) putting every persisting line back to normal before each
//   flush (cudaCtxResetPersistingL2Cache). tests/gpu/l2_persist.sh times this kernel
//   against its plain twin (ROWSUM_PERSIST 0: the same loads without a cache policy), with
//   the reset and without it (CUTEGEN_L2_RESET=0, for that test only).
#include <cutegen/abi.h>

#define ROWSUM_PERSIST 1  // tests/gpu/l2_persist.sh makes the plain twin with 0 here

// a CTA a row, float4 loads; with ROWSUM_PERSIST the loads ask L2 to keep the lines
// (evict-last), which may outlast the kernel
__global__ void rowsum(const float4 *__restrict__ x, float *__restrict__ y, int cols4)
{
    const float4 *row = x + int64_t(blockIdx.x) * cols4;
#if ROWSUM_PERSIST
    uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
#endif
    float s = 0.f;
    for (int i = threadIdx.x; i < cols4; i += blockDim.x) {
        float4 v;
#if ROWSUM_PERSIST
        asm volatile("ld.global.nc.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
                     : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(row + i), "l"(policy));
#else
        v = __ldg(row + i);
#endif
        s += (v.x + v.y) + (v.z + v.w);
    }
    __shared__ float part[32];
    for (int o = 16; o > 0; o >>= 1)
        s += __shfl_xor_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.f;
        for (int w = 0; w < int(blockDim.x >> 5); ++w)
            t += part[w];
        y[blockIdx.x] = t;
    }
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    (void)workspace; (void)workspace_bytes;
    if (n_in != 1 || n_out != 1 || in[0].dtype != CG_FLOAT32 || out[0].dtype != CG_FLOAT32 ||
        in[0].ndim != 2 || !cg_is_contiguous(&in[0]) || !cg_is_contiguous(&out[0]) ||
        in[0].shape[1] % 4 || cg_numel(&out[0]) != in[0].shape[0])
        return CG_UNSUPPORTED;
    rowsum<<<unsigned(in[0].shape[0]), 256, 0, stream>>>(static_cast<const float4 *>(in[0].data),
                                                        static_cast<float *>(out[0].data),
                                                        int(in[0].shape[1] / 4));
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
