// problem: level1/1_Square_matrix_multiplication_.py
// C = A @ B in fp32 (A: M x K, B: K x N, C: M x N, all row-major contiguous; the problem
// uses M = N = K = 4096), accumulated in fp32 on the SIMT cores (no TF32), in the style of
// CUTLASS's CuTe tutorial sgemm_sm80:
//  - CTA tile 128 x 128 x 8, 256 threads, a 3-stage cp.async pipeline in shared memory;
//  - in CuTe's (M,K)/(N,K) convention A is K-major (stride (K,1)) and B is N-major
//    (stride (1,N)): B's tile is copied with 16-byte cp.async along N; A's tile is
//    copied with 4-byte cp.async and transposed on the way into an M-major smem tile, so
//    both smem tiles are read along M/N; columns padded to 132 floats (no bank conflicts);
//  - a 16x16 thread UniversalFMA TiledMMA, permuted so that each thread owns 4 consecutive
//    rows and 4 consecutive columns per 64x64 quadrant: fragments come from smem as
//    128-bit loads, and each thread computes an 8 x 8 block of C in registers;
//  - double-buffered register fragments (k_block + 1 loaded while k_block computes).
// Shapes not multiples of (128, 128, 8), non-contiguous or non-fp32 tensors: CG_UNSUPPORTED.
#include <cutegen/abi.h>
#include <cute/tensor.hpp>

using namespace cute;

namespace cg_matmul {

constexpr int kThreads = 256;
constexpr int kBM = 128, kBN = 128, kBK = 8, kPipe = 3;
constexpr int kPad = 4;  // smem column stride kBM + kPad floats: 16-byte aligned, conflict-free

template <class SmemLayoutA, class SmemLayoutB>
struct SharedStorage {
    cute::array_aligned<float, cute::cosize_v<SmemLayoutA>, 16> A;
    cute::array_aligned<float, cute::cosize_v<SmemLayoutB>, 16> B;
};

template <class ProblemShape, class CtaTiler, class AStride, class ASmemLayout, class TiledCopyA,
          class BStride, class BSmemLayout, class TiledCopyB, class CStride, class TiledMma>
__global__ void __launch_bounds__(kThreads, 2)
sgemm_kernel(ProblemShape shape_MNK, CtaTiler cta_tiler,
             float const *A, AStride dA, ASmemLayout sA_layout, TiledCopyA copy_a,
             float const *B, BStride dB, BSmemLayout sB_layout, TiledCopyB copy_b,
             float *C, CStride dC, TiledMma mma)
{
    Tensor mA = make_tensor(make_gmem_ptr(A), select<0, 2>(shape_MNK), dA);  // (M,K)
    Tensor mB = make_tensor(make_gmem_ptr(B), select<1, 2>(shape_MNK), dB);  // (N,K)
    Tensor mC = make_tensor(make_gmem_ptr(C), select<0, 1>(shape_MNK), dC);  // (M,N)

    auto cta_coord = make_coord(blockIdx.x, blockIdx.y, _);
    Tensor gA = local_tile(mA, cta_tiler, cta_coord, Step<_1, X, _1>{});  // (BLK_M,BLK_K,k)
    Tensor gB = local_tile(mB, cta_tiler, cta_coord, Step<X, _1, _1>{});  // (BLK_N,BLK_K,k)
    Tensor gC = local_tile(mC, cta_tiler, cta_coord, Step<_1, _1, X>{});  // (BLK_M,BLK_N)

    extern __shared__ __align__(16) char shared_memory[];
    using Storage = SharedStorage<ASmemLayout, BSmemLayout>;
    Storage &smem = *reinterpret_cast<Storage *>(shared_memory);
    Tensor sA = make_tensor(make_smem_ptr(smem.A.data()), sA_layout);  // (BLK_M,BLK_K,PIPE)
    Tensor sB = make_tensor(make_smem_ptr(smem.B.data()), sB_layout);  // (BLK_N,BLK_K,PIPE)

    ThrCopy thr_copy_a = copy_a.get_slice(threadIdx.x);
    Tensor tAgA = thr_copy_a.partition_S(gA);  // (CPY,CPY_M,CPY_K,k)
    Tensor tAsA = thr_copy_a.partition_D(sA);  // (CPY,CPY_M,CPY_K,PIPE)
    ThrCopy thr_copy_b = copy_b.get_slice(threadIdx.x);
    Tensor tBgB = thr_copy_b.partition_S(gB);  // (CPY,CPY_N,CPY_K,k)
    Tensor tBsB = thr_copy_b.partition_D(sB);  // (CPY,CPY_N,CPY_K,PIPE)

    auto K_PIPE_MAX = size<3>(tAsA);
    int k_tile_count = size<3>(tAgA);
    int k_tile_next = 0;

    // Prefetch all stages but the last.
    CUTE_UNROLL
    for (int k_pipe = 0; k_pipe < K_PIPE_MAX - 1; ++k_pipe) {
        copy(copy_a, tAgA(_, _, _, k_tile_next), tAsA(_, _, _, k_pipe));
        copy(copy_b, tBgB(_, _, _, k_tile_next), tBsB(_, _, _, k_pipe));
        cp_async_fence();
        --k_tile_count;
        if (k_tile_count > 0) ++k_tile_next;
    }

    ThrMMA thr_mma = mma.get_slice(threadIdx.x);
    Tensor tCsA = thr_mma.partition_A(sA);  // (MMA,MMA_M,MMA_K,PIPE)
    Tensor tCsB = thr_mma.partition_B(sB);  // (MMA,MMA_N,MMA_K,PIPE)
    Tensor tCgC = thr_mma.partition_C(gC);  // (MMA,MMA_M,MMA_N)
    Tensor tCrA = thr_mma.partition_fragment_A(sA(_, _, 0));  // (MMA,MMA_M,MMA_K)
    Tensor tCrB = thr_mma.partition_fragment_B(sB(_, _, 0));  // (MMA,MMA_N,MMA_K)
    Tensor tCrC = thr_mma.make_fragment_C(tCgC);              // (MMA,MMA_M,MMA_N)
    clear(tCrC);

    int smem_pipe_read = 0;
    int smem_pipe_write = K_PIPE_MAX - 1;
    Tensor tCsA_p = tCsA(_, _, _, smem_pipe_read);
    Tensor tCsB_p = tCsB(_, _, _, smem_pipe_read);
    auto K_BLOCK_MAX = size<2>(tCrA);

    // Register prefetch of k_block 0 of the first tile.
    cp_async_wait<K_PIPE_MAX - 2>();
    __syncthreads();
    copy(tCsA_p(_, _, Int<0>{}), tCrA(_, _, Int<0>{}));
    copy(tCsB_p(_, _, Int<0>{}), tCrB(_, _, Int<0>{}));

    CUTE_NO_UNROLL
    while (k_tile_count > -(K_PIPE_MAX - 1)) {
        CUTE_UNROLL
        for (int k_block = 0; k_block < K_BLOCK_MAX; ++k_block) {
            if (k_block == K_BLOCK_MAX - 1) {
                // Move on to the next smem stage: wait until it has landed.
                tCsA_p = tCsA(_, _, _, smem_pipe_read);
                tCsB_p = tCsB(_, _, _, smem_pipe_read);
                cp_async_wait<K_PIPE_MAX - 2>();
                __syncthreads();
            }
            auto k_block_next = (k_block + Int<1>{}) % K_BLOCK_MAX;
            copy(tCsA_p(_, _, k_block_next), tCrA(_, _, k_block_next));
            copy(tCsB_p(_, _, k_block_next), tCrB(_, _, k_block_next));
            if (k_block == 0) {
                // Refill the stage everybody finished reading (guarded by the
                // __syncthreads() at the end of the previous tile). Past the last tile
                // k_tile_next stays on the last tile: harmless redundant loads.
                copy(copy_a, tAgA(_, _, _, k_tile_next), tAsA(_, _, _, smem_pipe_write));
                copy(copy_b, tBgB(_, _, _, k_tile_next), tBsB(_, _, _, smem_pipe_write));
                cp_async_fence();
                --k_tile_count;
                if (k_tile_count > 0) ++k_tile_next;
                smem_pipe_write = smem_pipe_read;
                smem_pipe_read = (smem_pipe_read == K_PIPE_MAX - 1) ? 0 : smem_pipe_read + 1;
            }
            gemm(mma, tCrA(_, _, k_block), tCrB(_, _, k_block), tCrC);
        }
    }
    cp_async_wait<0>();

    copy(tCrC, tCgC);
}

}  // namespace cg_matmul
using namespace cg_matmul;

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    (void)workspace; (void)workspace_bytes;
    if (n_in != 2 || n_out != 1)
        return CG_UNSUPPORTED;
    const cg_tensor &a = in[0], &b = in[1], &c = out[0];
    if (a.dtype != CG_FLOAT32 || b.dtype != CG_FLOAT32 || c.dtype != CG_FLOAT32 ||
        a.ndim != 2 || b.ndim != 2 || c.ndim != 2 || !cg_is_contiguous(&a) ||
        !cg_is_contiguous(&b) || !cg_is_contiguous(&c))
        return CG_UNSUPPORTED;
    int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
    if (b.shape[0] != k || c.shape[0] != m || c.shape[1] != n)
        return CG_UNSUPPORTED;
    if (m <= 0 || n <= 0 || k <= 0 || m % kBM || n % kBN || k % kBK ||
        m > (1 << 30) || n > (1 << 30) || k > (1 << 30) || n / kBN > 65535)
        return CG_UNSUPPORTED;
    if ((reinterpret_cast<uintptr_t>(a.data) | reinterpret_cast<uintptr_t>(b.data) |
         reinterpret_cast<uintptr_t>(c.data)) % 16)
        return CG_UNSUPPORTED;

    int M = int(m), N = int(n), K = int(k);
    auto prob_shape = make_shape(M, N, K);
    auto dA = make_stride(K, Int<1>{});  // A(m,k) = a[m*K + k]: K-major
    auto dB = make_stride(Int<1>{}, N);  // B(n,k) = b[k*N + n]: N-major
    auto dC = make_stride(N, Int<1>{});  // C(m,n) = c[m*N + n]
    auto bM = Int<kBM>{};
    auto bN = Int<kBN>{};
    auto bK = Int<kBK>{};
    auto bP = Int<kPipe>{};
    auto cta_tiler = make_shape(bM, bN, bK);

    // M-major (resp. N-major) smem tiles, columns padded to 132 floats.
    auto sA = make_layout(make_shape(bM, bK, bP),
                          make_stride(Int<1>{}, Int<kBM + kPad>{}, Int<(kBM + kPad) * kBK>{}));
    auto sB = make_layout(make_shape(bN, bK, bP),
                          make_stride(Int<1>{}, Int<kBN + kPad>{}, Int<(kBN + kPad) * kBK>{}));

    // A: 32 rows x 8 k per pass, threads k-major so a warp reads 4 rows x 32 bytes;
    // scalar cp.async transposes into M-major smem (bank = 4k + m mod 32: no conflicts).
    TiledCopy copyA = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<float>, float>{},
                                      Layout<Shape<_32, _8>, Stride<_8, _1>>{},
                                      Layout<Shape<_1, _1>>{});
    // B: 16-byte cp.async, 32 threads x 4 floats along N, 8 k rows: the 128 x 8 tile in one pass.
    TiledCopy copyB = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEGLOBAL<uint128_t>, float>{},
                                      Layout<Shape<_32, _8>>{},
                                      Layout<Shape<_4, _1>>{});
    // 16 x 16 threads; the permutation gives thread (tm, tn) rows 4*tm + {0..3} (+64) and
    // columns 4*tn + {0..3} (+64): 128-bit smem fragment loads.
    TiledMMA mmaC = make_tiled_mma(UniversalFMA<float, float, float, float>{},
                                   Layout<Shape<_16, _16, _1>>{},
                                   Tile<Layout<Shape<_16, _4>, Stride<_4, _1>>,
                                        Layout<Shape<_16, _4>, Stride<_4, _1>>, _1>{});

    using Storage = SharedStorage<decltype(sA), decltype(sB)>;
    int smem_size = int(sizeof(Storage));
    auto kernel = sgemm_kernel<decltype(prob_shape), decltype(cta_tiler), decltype(dA),
                               decltype(sA), decltype(copyA), decltype(dB), decltype(sB),
                               decltype(copyB), decltype(dC), decltype(mmaC)>;
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100) !=
        cudaSuccess)
        return CG_LAUNCH_FAILED;
    // blockIdx.x walks M, blockIdx.y walks N: CTAs resident together share B panels in L2.
    dim3 grid(unsigned(M / kBM), unsigned(N / kBN));
    kernel<<<grid, dim3(kThreads), smem_size, stream>>>(
        prob_shape, cta_tiler, static_cast<const float *>(a.data), dA, sA, copyA,
        static_cast<const float *>(b.data), dB, sB, copyB, static_cast<float *>(c.data), dC,
        mmaC);
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}
