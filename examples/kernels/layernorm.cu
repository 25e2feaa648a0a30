// problem: level1/40_LayerNorm.py
// y = LayerNorm(x) over the trailing dims given by the weight's shape, with affine weight
// and bias (nn.LayerNorm defaults: eps = 1e-5, biased variance). The problem has x of
// shape (16, 64, 256, 256) and weight, bias of shape (64, 256, 256): 16 rows of D = 4 Mi
// elements (16 MB a row). inputs = [x, ln.weight, ln.bias] (forward's argument, then the
// parameters in state_dict order).
//
// PyTorch's kernel gives each row to one CTA: 16 CTAs on a 132-SM GPU. Here each row is
// split into chunks of 8192 floats (256 threads x 8 float4, in registers, loaded through a
// CuTe TiledCopy with 16-byte vectors), and two kernels run on the given stream:
//  1. stats: one CTA per (row, chunk) computes the chunk's mean and M2 = sum (x - mean)^2
//     exactly from registers (two passes over registers, one over memory) and writes them
//     to the workspace (8 bytes per chunk);
//  2. normalize: one CTA per (row, chunk) combines the row's chunk statistics with Chan's
//     formula (all chunks have the same count: mean = avg(mean_c),
//     M2 = sum(M2_c) + n_c * sum((mean_c - mean)^2)), reloads its chunk of x and writes
//     (x - mean) * rsqrt(var + eps) * w + b. blockIdx.x is the row, so the CTAs of the 16
//     rows that share a weight/bias chunk run together and read it once from DRAM.
// Bytes: x read twice, w and b once, y written once: ~0.8 GB (~0.19 ms at 4.3 TB/s).
// D must be a multiple of 8192; fp32, contiguous; otherwise CG_UNSUPPORTED.
#include <cutegen/abi.h>
#include <cute/tensor.hpp>

using namespace cute;

namespace cg_layernorm {

constexpr int kThreads = 256;
constexpr int kVecs = 8;                       // float4 per thread
constexpr int kChunk = kThreads * 4 * kVecs;   // 8192 floats per CTA
constexpr float kEps = 1e-5f;                  // nn.LayerNorm's default (a constructor arg)

__device__ __forceinline__ float warp_sum(float v)
{
    CUTE_UNROLL
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Sum over the CTA; every thread gets the result. `red` is reusable after return.
__device__ __forceinline__ float block_sum(float v, float *red)
{
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    float r = 0.f;
    CUTE_UNROLL
    for (int w = 0; w < kThreads / 32; ++w) r += red[w];
    __syncthreads();
    return r;
}

__device__ __forceinline__ auto chunk_copy()
{
    return make_tiled_copy(Copy_Atom<UniversalCopy<uint128_t>, float>{},
                           Layout<Shape<Int<kThreads>>>{}, Layout<Shape<_4>>{});
}

// grid = (rows, chunks). stats[(row * chunks + chunk)] = (mean, M2) of that chunk.
__global__ void __launch_bounds__(kThreads)
ln_stats(const float *__restrict__ x, float2 *__restrict__ stats, int64_t d)
{
    __shared__ float red[kThreads / 32];
    const int64_t row = blockIdx.x, chunk = blockIdx.y;
    Tensor gX = make_tensor(make_gmem_ptr(x + row * d + chunk * kChunk), make_layout(Int<kChunk>{}));
    auto tiled_copy = chunk_copy();
    auto thr = tiled_copy.get_slice(threadIdx.x);
    Tensor tXgX = thr.partition_S(gX);
    Tensor rX = make_fragment_like(tXgX);
    copy(tiled_copy, tXgX, rX);

    float s = 0.f;
    CUTE_UNROLL
    for (int i = 0; i < size(rX); ++i) s += rX(i);
    const float mean = block_sum(s, red) * (1.f / kChunk);
    float q = 0.f;
    CUTE_UNROLL
    for (int i = 0; i < size(rX); ++i) {
        float t = rX(i) - mean;
        q = fmaf(t, t, q);
    }
    const float m2 = block_sum(q, red);
    if (threadIdx.x == 0)
        stats[row * gridDim.y + chunk] = make_float2(mean, m2);
}

// grid = (rows, chunks).
__global__ void __launch_bounds__(kThreads)
ln_normalize(const float *__restrict__ x, const float *__restrict__ w,
             const float *__restrict__ b, const float2 *__restrict__ stats,
             float *__restrict__ y, int64_t d)
{
    __shared__ float red[kThreads / 32];
    const int64_t row = blockIdx.x, chunk = blockIdx.y;
    const int nchunks = int(gridDim.y);

    // Start the chunk's loads first: they overlap the statistics below.
    auto tiled_copy = chunk_copy();
    auto thr = tiled_copy.get_slice(threadIdx.x);
    Tensor gX = make_tensor(make_gmem_ptr(x + row * d + chunk * kChunk), make_layout(Int<kChunk>{}));
    Tensor gW = make_tensor(make_gmem_ptr(w + chunk * kChunk), make_layout(Int<kChunk>{}));
    Tensor gB = make_tensor(make_gmem_ptr(b + chunk * kChunk), make_layout(Int<kChunk>{}));
    Tensor gY = make_tensor(make_gmem_ptr(y + row * d + chunk * kChunk), make_layout(Int<kChunk>{}));
    Tensor tXgX = thr.partition_S(gX);
    Tensor tWgW = thr.partition_S(gW);
    Tensor tBgB = thr.partition_S(gB);
    Tensor rX = make_fragment_like(tXgX);
    Tensor rW = make_fragment_like(tWgW);
    Tensor rB = make_fragment_like(tBgB);
    copy(tiled_copy, tXgX, rX);
    copy(tiled_copy, tWgW, rW);
    copy(tiled_copy, tBgB, rB);

    // Row statistics from the chunk statistics (L2-resident, 8 bytes per chunk).
    const float2 *st = stats + row * nchunks;
    float sm = 0.f;
    for (int c = threadIdx.x; c < nchunks; c += kThreads) sm += st[c].x;
    const float mean = block_sum(sm, red) / float(nchunks);
    float sq = 0.f;
    for (int c = threadIdx.x; c < nchunks; c += kThreads) {
        float2 v = st[c];
        float dm = v.x - mean;
        sq += v.y + float(kChunk) * dm * dm;
    }
    const float var = block_sum(sq, red) / float(d);
    const float rstd = rsqrtf(var + kEps);

    CUTE_UNROLL
    for (int i = 0; i < size(rX); ++i)
        rX(i) = fmaf((rX(i) - mean) * rstd, rW(i), rB(i));
    copy(tiled_copy, rX, thr.partition_D(gY));
}

}  // namespace cg_layernorm
using namespace cg_layernorm;

// Checks the inputs; on success sets rows, d (elements normalised per row) and returns 1.
static int ln_shapes(const cg_tensor *in, int n_in, int64_t *rows, int64_t *d)
{
    if (n_in != 3)
        return 0;
    const cg_tensor &x = in[0], &w = in[1], &b = in[2];
    if (x.dtype != CG_FLOAT32 || w.dtype != CG_FLOAT32 || b.dtype != CG_FLOAT32 ||
        !cg_is_contiguous(&x) || !cg_is_contiguous(&w) || !cg_is_contiguous(&b) ||
        w.ndim < 1 || w.ndim > x.ndim || b.ndim != w.ndim)
        return 0;
    for (int i = 0; i < w.ndim; i++)
        if (w.shape[i] != x.shape[x.ndim - w.ndim + i] || b.shape[i] != w.shape[i])
            return 0;
    *d = cg_numel(&w);
    *rows = *d ? cg_numel(&x) / *d : 0;
    if (*d % kChunk || *d / kChunk > 65535 || *rows > 0x7fffffff)
        return 0;
    return 1;
}

CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *in, int n_in)
{
    int64_t rows, d;
    if (!ln_shapes(in, n_in, &rows, &d))
        return 0;
    return size_t(rows) * size_t(d / kChunk) * sizeof(float2);
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    int64_t rows, d;
    if (n_out != 1 || !ln_shapes(in, n_in, &rows, &d))
        return CG_UNSUPPORTED;
    const cg_tensor &y = out[0];
    if (y.dtype != CG_FLOAT32 || !cg_is_contiguous(&y) || cg_numel(&y) != cg_numel(&in[0]))
        return CG_UNSUPPORTED;
    if (rows == 0)
        return CG_OK;
    for (int i = 0; i < 3; i++)
        if (reinterpret_cast<uintptr_t>(in[i].data) % 16)
            return CG_UNSUPPORTED;
    if (reinterpret_cast<uintptr_t>(y.data) % 16)
        return CG_UNSUPPORTED;
    const int64_t chunks = d / kChunk;
    if (workspace == nullptr || workspace_bytes < size_t(rows * chunks) * sizeof(float2))
        return CG_BAD_WORKSPACE;

    const dim3 grid{unsigned(rows), unsigned(chunks)};
    float2 *stats = static_cast<float2 *>(workspace);
    ln_stats<<<grid, kThreads, 0, stream>>>(static_cast<const float *>(in[0].data), stats, d);
    if (cudaGetLastError() != cudaSuccess)
        return CG_LAUNCH_FAILED;
    ln_normalize<<<grid, kThreads, 0, stream>>>(
        static_cast<const float *>(in[0].data), static_cast<const float *>(in[1].data),
        static_cast<const float *>(in[2].data), stats, static_cast<float *>(y.data), d);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
