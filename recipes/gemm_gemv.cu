// recipes/gemm_gemv.cu: matrix-vector product with a fused pointwise epilogue, fp32.
//
// y[r] = epi(sum_k W[r, k] * v[k]) for r < ROWS: W is the matrix operand with rows of K
// contiguous floats (row stride LDW), v the contiguous vector. Either A @ b (A: M x K,
// b: K or K x 1; rows are M, the output [M] or [M, 1]) or a @ B^T-like products with
// one row (a: 1 x K or K; B given as N x K, e.g. nn.Linear on one sample; rows are N).
// Memory-bound: every element of W is read once, so the kernel streams W at full
// bandwidth and does the arithmetic in fp32 on the SIMT cores (no tensor cores needed).
//
// Each CTA takes RPC rows; each thread walks k in 16-byte vectors (stride THREADS),
// loads one vector of v (read through L1/L2: v is shared by all CTAs) and one of each of
// the RPC rows (read-only loads, __ldg: 1.2% faster than streaming __ldcs on the H200), and keeps two independent partial sums a row
// (loads in flight); the partials are combined with warp shuffles and then across warps
// through shared memory; thread r < RPC applies the epilogue to row r and stores it.
// VEC = 1 (K or LDW not a multiple of 4): scalar loads.
//
// CGR_SUMB 1: a GEMM A @ B^T (M x N) whose rows are summed with only an affine map between,
// sum_n pre(acc[m, n]) with pre(v) = alpha v + beta (constants and scalar inputs), is the
// matrix-vector product A @ s with s[k] = sum_n B(n, k), then
// sum_n pre(acc[m, n]) = pre(A[m] . s) + (N - 1) pre(0) (divided by N for a mean).
// Exact algebra, and N times less work: s is summed first (in double, into the
// workspace), then the rows of A are streamed as above. B(n, k) = b[n*LDB + k] (B_KMAJOR,
// as nn.Linear's weight) or b[k*LDB + n].
//
// Named parameters (CGR_*): the generator (src/recipe_gemm.c) writes them in place of the
// `recipe:params` line; the defaults make this file compile on its own (2048 x 1048576).
#include <cutegen/abi.h>
#include <type_traits>
#include "ops.cuh"  // recipe:inline

// recipe:params
#ifndef CGR_GENERATED
#define CGR_M 2048
#define CGR_N 1
#define CGR_K 1048576
#define CGR_BATCH 1
#define CGR_A 0
#define CGR_B 1
#define CGR_GEMV_ROWS_ARE_M 1   // rows are M (the matrix is A) or N (the matrix is B)
#define CGR_ROWS 2048
#define CGR_LDW 1048576
#define CGR_W 0                 // input index of the matrix
#define CGR_V 1                 // input index of the vector
#define CGR_VEC 4
#define CGR_THREADS 256
#define CGR_RPC 4               // rows a CTA
#define CGR_TRI 0
#define CGR_TRI_DIAG 0
#define CGR_SUMB 0              // 1: the vector is sum_n B(n, :) (see above)
#define CGR_SUMB_N 1            // rows of B summed
#define CGR_SUMB_COLS 0         // 1: cgr_pre reads per-column inputs (sum_{n >= 1} pre(0, x_n) summed once)
#define CGR_B_KMAJOR 1
#define CGR_LDB 1
#define CGR_ROWRED 0            // with CGR_SUMB: 1 sum, 2 mean
#define CGR_NIN 2
#define CGR_INPUTS(X) X(0, CGR_GE_OPERAND) X(1, CGR_GE_OPERAND)
#define CGR_IN_NDIMS {2, 2}
#define CGR_IN_SHAPES {{2048, 1048576}, {1048576, 1}}
#define CGR_IN_STRIDES {{1048576, 1}, {1, 1}}
#define CGR_OUT_NDIM 2
#define CGR_OUT_SHAPE {2048, 1}
__device__ __forceinline__ float cgr_pre(float r, const float *x) { (void)x; return r; }
__device__ __forceinline__ float cgr_epi(float r, const float *x) { (void)x; return r; }
#endif

// Generated files name only what they use: the sum-of-B parameters default to off.
#ifndef CGR_SUMB
#define CGR_SUMB 0
#define CGR_SUMB_N 1
#endif
#ifndef CGR_SUMB_COLS
#define CGR_SUMB_COLS 0
#define CGR_B_KMAJOR 1
#define CGR_LDB 1
#endif


namespace cgr_gemv {

constexpr int kM = CGR_M, kN = CGR_N, kK = CGR_K;
constexpr int64_t kRows = CGR_ROWS, kLdw = CGR_LDW;
constexpr int kThreads = CGR_THREADS, kRpc = CGR_RPC, kVec = CGR_VEC;
constexpr int kNin = CGR_NIN;
constexpr int kWarps = kThreads / 32;
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "threads");
static_assert(kRpc >= 1 && kRpc <= 32 && kRpc <= kThreads, "rows a CTA");
static_assert(kVec == 1 || kVec == 4, "vector width");
static_assert(kM == 1 || kN == 1 || CGR_SUMB, "a matrix-vector product");
static_assert(!CGR_SUMB || (CGR_GEMV_ROWS_ARE_M && (CGR_ROWRED == 1 || CGR_ROWRED == 2)),
              "the sum of B's rows: rows of A, summed or averaged");
constexpr int64_t kSumbN = CGR_SUMB_N, kLdb = CGR_LDB;
constexpr int kSumbChunks = CGR_SUMB && CGR_B_KMAJOR ? 32 : 1;  // B's rows split for the GPU

#include "gemm_inputs.cuh"  // recipe:inline

struct Params {
    const float *in[kNin > 0 ? kNin : 1];
    float *out;
    const float *v;  // CGR_SUMB: the summed rows of B (in the workspace)
    const double *c; // CGR_SUMB_COLS: sum_{n >= 1} cgr_pre(0, x_n) (in the workspace)
    float *rv;       // CGR_BCAST_W: the rows' reduced values (in the workspace)
};

constexpr bool kBcast = CGR_BCAST_W > 0;
static_assert(!kBcast || CGR_SUMB, "a broadcast output follows the sum of rows");

#if CGR_SUMB
// sum_n pre(acc_n, x_n) for an affine pre whose coefficient is the same for every column:
// pre(sum_n acc_n, x_0) + sum_{n >= 1} pre(0, x_n); the last sum is (N - 1) pre(0, x) when
// pre reads no per-column input. Then the mean (CGR_ROWRED 2).
__device__ __forceinline__ float sumb_value(const Params &p, float acc, const float *x)
{
#if CGR_SUMB_COLS
    float r = float(double(cgr_pre(acc, x)) + *p.c);
#else
    (void)p;
    float r = cgr_pre(acc, x) + float(kSumbN - 1) * cgr_pre(0.f, x);
#endif
    if (CGR_ROWRED == 2)
        r /= float(kSumbN);
    return r;
}
#endif

__device__ __forceinline__ float finish(const Params &p, float acc, int64_t row, int m, int n)
{
    if constexpr (CGR_TRI == 1) {
        if (n - m < CGR_TRI_DIAG)
            acc = 0.f;
    } else if constexpr (CGR_TRI == 2) {
        if (n - m > CGR_TRI_DIAG)
            acc = 0.f;
    }
    float x[kNin > 0 ? kNin : 1];
    inputs_at(p, row, n, x);
#if CGR_SUMB
    return cgr_epi(sumb_value(p, acc, x), x);
#else
    return cgr_epi(acc, x);
#endif
}

#if CGR_SUMB
// s[k] = sum_n B(n, k). K-major B (rows of K): a thread a column k, B's rows in
// kSumbChunks chunks (partials in double, combined in order by sumb_finish); N-major B
// (each k's N values contiguous): a warp a k.
__global__ void __launch_bounds__(256) sumb_partial(const float *__restrict__ b, double *__restrict__ part)
{
    if constexpr (CGR_B_KMAJOR) {
        const int64_t k = int64_t(blockIdx.x) * 256 + threadIdx.x;
        if (k >= kK)
            return;
        const int64_t per = (kSumbN + kSumbChunks - 1) / kSumbChunks;
        const int64_t n0 = int64_t(blockIdx.y) * per, n1 = n0 + per < kSumbN ? n0 + per : kSumbN;
        double s = 0.0;
        for (int64_t n = n0; n < n1; ++n)
            s += double(__ldcs(b + n * kLdb + k));
        part[int64_t(blockIdx.y) * kK + k] = s;
    } else {
        const int64_t k = int64_t(blockIdx.x) * 8 + threadIdx.x / 32;
        const int lane = threadIdx.x % 32;
        if (k >= kK)
            return;
        double s = 0.0;
        for (int64_t n = lane; n < kSumbN; n += 32)
            s += double(__ldcs(b + k * kLdb + n));
        for (int o = 16; o > 0; o /= 2)
            s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0)
            part[k] = s;
    }
}

__global__ void __launch_bounds__(256) sumb_finish(const double *__restrict__ part, float *__restrict__ v)
{
    const int64_t k = int64_t(blockIdx.x) * 256 + threadIdx.x;
    if (k >= kK)
        return;
    double s = 0.0;
    for (int c = 0; c < kSumbChunks; ++c)
        s += part[int64_t(c) * kK + k];
    v[k] = float(s);
}

#if CGR_SUMB_COLS
// *c = sum_{n >= 1} cgr_pre(0, x_n) in double: one CTA, columns strided over its threads,
// then a tree in shared memory (a fixed order: the same sum every call)
__global__ void __launch_bounds__(256) sumb_cols(const Params p, double *c)
{
    __shared__ double part[256];
    double s = 0.0;
    for (int64_t n = 1 + threadIdx.x; n < kSumbN; n += 256) {
        float x[kNin > 0 ? kNin : 1];
        inputs_at(p, 0, int(n), x);
        s += double(cgr_pre(0.f, x));
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (int o = 128; o > 0; o /= 2) {
        if (threadIdx.x < o)
            part[threadIdx.x] += part[threadIdx.x + o];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        *c = part[0];
}
#endif

// workspace: the partials (double), then s (float, 16-byte aligned), then (CGR_SUMB_COLS)
// the columns' sum (double, 256-byte aligned), then (CGR_BCAST_W) the rows' reduced values
constexpr size_t kPartBytes = (size_t(kSumbChunks) * kK * sizeof(double) + 255) / 256 * 256;
constexpr size_t kVBytes = (size_t(kK) * sizeof(float) + 255) / 256 * 256;
constexpr size_t kCBytes = CGR_SUMB_COLS ? 256 : 0;
constexpr size_t kWsBytes = kPartBytes + kVBytes + kCBytes + (kBcast ? size_t(kRows) * sizeof(float) : 0);

// A reduced value broadcast over the output's rows: y[row, j] = cgr_epi(r[row], x at (row, j)).
__global__ void __launch_bounds__(256) bcast_kernel(const Params p)
{
    bcast_store(p, p.rv, kRows);
}
#else
constexpr size_t kWsBytes = 0;
#endif

__global__ void __launch_bounds__(kThreads) gemv_kernel(const Params p)
{
    const int64_t r0 = int64_t(blockIdx.x) * kRpc;
    const float *W = p.in[CGR_W];
    const float *V = CGR_SUMB ? p.v : p.in[CGR_V];
    float acc[kRpc][2];
#pragma unroll
    for (int r = 0; r < kRpc; ++r)
        acc[r][0] = acc[r][1] = 0.f;
    // rows past the end read row r0 again (in bounds; their sums are dropped)
    const float *row[kRpc];
#pragma unroll
    for (int r = 0; r < kRpc; ++r)
        row[r] = W + (r0 + r < kRows ? r0 + r : r0) * kLdw;

    if constexpr (kVec == 4) {
        constexpr int64_t kv = kK / 4;
        const float4 *v4 = reinterpret_cast<const float4 *>(V);
        int64_t i = threadIdx.x;
        for (; i + kThreads < kv; i += 2 * kThreads) {
            const float4 x0 = __ldg(v4 + i), x1 = __ldg(v4 + i + kThreads);
#pragma unroll
            for (int r = 0; r < kRpc; ++r) {
                const float4 w0 = __ldg(reinterpret_cast<const float4 *>(row[r]) + i);
                const float4 w1 = __ldg(reinterpret_cast<const float4 *>(row[r]) + i + kThreads);
                acc[r][0] = fmaf(w0.x, x0.x, fmaf(w0.y, x0.y, fmaf(w0.z, x0.z, fmaf(w0.w, x0.w, acc[r][0]))));
                acc[r][1] = fmaf(w1.x, x1.x, fmaf(w1.y, x1.y, fmaf(w1.z, x1.z, fmaf(w1.w, x1.w, acc[r][1]))));
            }
        }
        for (; i < kv; i += kThreads) {
            const float4 x0 = __ldg(v4 + i);
#pragma unroll
            for (int r = 0; r < kRpc; ++r) {
                const float4 w0 = __ldg(reinterpret_cast<const float4 *>(row[r]) + i);
                acc[r][0] = fmaf(w0.x, x0.x, fmaf(w0.y, x0.y, fmaf(w0.z, x0.z, fmaf(w0.w, x0.w, acc[r][0]))));
            }
        }
    } else {
        int64_t k = threadIdx.x;
        for (; k + kThreads < kK; k += 2 * kThreads) {
            const float x0 = __ldg(V + k), x1 = __ldg(V + k + kThreads);
#pragma unroll
            for (int r = 0; r < kRpc; ++r) {
                acc[r][0] = fmaf(__ldg(row[r] + k), x0, acc[r][0]);
                acc[r][1] = fmaf(__ldg(row[r] + k + kThreads), x1, acc[r][1]);
            }
        }
        for (; k < kK; k += kThreads) {
            const float x0 = __ldg(V + k);
#pragma unroll
            for (int r = 0; r < kRpc; ++r)
                acc[r][0] = fmaf(__ldg(row[r] + k), x0, acc[r][0]);
        }
    }

    __shared__ float part[kWarps][kRpc];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (int r = 0; r < kRpc; ++r) {
        float s = acc[r][0] + acc[r][1];
#pragma unroll
        for (int o = 16; o > 0; o /= 2)
            s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0)
            part[warp][r] = s;
    }
    __syncthreads();
    if (threadIdx.x < kRpc) {
        const int r = threadIdx.x;
        float s = 0.f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w)
            s += part[w][r];
        const int64_t idx = r0 + r;
        if (idx < kRows) {
            // rows are M: (row idx, column 0); rows are N: (row 0, column idx)
            const int64_t orow = CGR_GEMV_ROWS_ARE_M ? idx : 0;
            const int n = CGR_GEMV_ROWS_ARE_M ? 0 : int(idx);
#if CGR_SUMB
            if constexpr (kBcast) {  // bcast_kernel writes the row
                float x[kNin > 0 ? kNin : 1];
                inputs_at(p, orow, 0, x);
                p.rv[idx] = sumb_value(p, s, x);
                return;
            }
#endif
            p.out[idx] = finish(p, s, orow, int(orow), n);
        }
    }
}


}  // namespace cgr_gemv

CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *in, int n_in)
{
    (void)in; (void)n_in;
    return cgr_gemv::kWsBytes;
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace cgr_gemv;
    if (kWsBytes > 0 && (workspace == nullptr || workspace_bytes < kWsBytes))
        return CG_BAD_WORKSPACE;
    if (n_in != kNin || n_out != 1)
        return CG_UNSUPPORTED;
    if (!cgr::output_fits(out[0], CG_FLOAT32, CGR_OUT_NDIM, kOutShape))
        return CG_UNSUPPORTED;
    Params p{};
    if (!inputs_fit(in, p))
        return CG_UNSUPPORTED;
    p.out = static_cast<float *>(out[0].data);
    const int64_t blocks = (kRows + kRpc - 1) / kRpc;
    if (blocks == 0)
        return CG_OK;
    if (blocks > 0x7fffffff)
        return CG_UNSUPPORTED;
#if CGR_SUMB
    {
        double *part = static_cast<double *>(workspace);
        float *v = reinterpret_cast<float *>(static_cast<char *>(workspace) + kPartBytes);
        const unsigned gx = unsigned(CGR_B_KMAJOR ? (kK + 255) / 256 : (kK + 7) / 8);
        sumb_partial<<<dim3(gx, kSumbChunks), 256, 0, stream>>>(p.in[CGR_B], part);
        sumb_finish<<<unsigned((kK + 255) / 256), 256, 0, stream>>>(part, v);
        p.v = v;
#if CGR_SUMB_COLS
        double *c = reinterpret_cast<double *>(static_cast<char *>(workspace) + kPartBytes + kVBytes);
        sumb_cols<<<1, 256, 0, stream>>>(p, c);
        p.c = c;
#endif
        if constexpr (kBcast)
            p.rv = reinterpret_cast<float *>(static_cast<char *>(workspace) + kPartBytes + kVBytes + kCBytes);
    }
#endif
    gemv_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(p);
#if CGR_SUMB
    if constexpr (kBcast) {
        if (cudaGetLastError() != cudaSuccess)
            return CG_LAUNCH_FAILED;
        bcast_kernel<<<unsigned((kRows * int64_t(kFullW) + 255) / 256), 256, 0, stream>>>(p);
    }
#endif
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
