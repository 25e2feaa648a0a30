// tests/cli/recipe_stream_layout.cpp: checks, on the host, that recipes/gemm_stream.cu's
// split writes each value of B's tile where its warpgroup MMAs read it: b_offset(n, k) (the
// kernel's 128-byte-swizzle arithmetic, N-major) against CuTe's own SmemLayoutB (from which
// the WGMMA descriptors are made) at every (n, k) of the stage; that four columns from a
// multiple of 4 are contiguous there (the kernel's 8-byte stores); and that the threads'
// vectors (b_coord) cover the tile's K rows x BN columns exactly once.
// Built by tests/cli/t0721-recipe-stream.sh:
//   c++ -std=c++17 -DCGR_KERNEL='"gen.cu"' -I include -I CUTLASS -I CUDA/include this.cpp
#include <cutegen/abi.h>
#include <cute/tensor.hpp>
#include <cstdio>
#include <cstring>
#include <vector>

template <class T> inline T __ldg(const T *p) { return *p; }
#define CGR_GEMM_EMULATE 1
#include CGR_KERNEL

using namespace cgr_gemm;

// Where CuTe's SmemLayoutB puts (n, k): the one nonzero half after writing there.
static int cute_offset(int n, int k, std::vector<uint16_t> &store)
{
    uint16_t *buf = reinterpret_cast<uint16_t *>((reinterpret_cast<uintptr_t>(store.data()) + 4095) & ~uintptr_t(4095));
    const int halves = kBN * kKP;
    std::memset(buf, 0, sizeof(uint16_t) * size_t(halves));
    auto t = make_tensor(make_smem_ptr(reinterpret_cast<half_t *>(buf)), SmemLayoutB{});
    t(n, k) = half_t(1.f);
    int at = -1;
    for (int i = 0; i < halves; ++i)
        if (buf[i])
            at = at < 0 ? i : -2;  // more than one: a wrong write
    return at;
}

int main()
{
    int bad = 0;
    std::vector<uint16_t> store(size_t(kBN) * kKP + 4096);
    for (int k = 0; k < kKP; ++k)
        for (int n = 0; n < kBN; ++n) {
            const int cute = cute_offset(n, k, store), ours = b_offset(n, k);
            if (cute != ours && bad++ < 5)
                printf("B (n %d, k %d): CuTe %d, b_offset %d\n", n, k, cute, ours);
            if (n % 4 != 0 && b_offset(n, k) != b_offset(n - n % 4, k) + n % 4 && bad++ < 5)
                printf("B (n %d, k %d): not contiguous with column %d\n", n, k, n - n % 4);
        }
    std::vector<int> hits(size_t(kK) * kBN, 0);
    for (int t = 0; t < kThreads; ++t)
        for (int i = 0; i < kLoads; ++i) {
            int n, k;
            b_coord(t, i, n, k);
            for (int j = 0; j < 4; ++j) {
                if (k < 0 || k >= kK || n + j < 0 || n + j >= kBN) {
                    if (bad++ < 5)
                        printf("thread %d vector %d: (n %d, k %d) outside the tile\n", t, i, n + j, k);
                    continue;
                }
                hits[size_t(k) * kBN + n + j]++;
            }
        }
    for (size_t i = 0; i < hits.size(); ++i)
        if (hits[i] != 1 && bad++ < 5)
            printf("B (n %zu, k %zu) loaded %d times\n", i % kBN, i / kBN, hits[i]);
    printf("%s: BM %d BN %d K %d (KP %d), %d threads x %d vectors: %s\n", CGR_KERNEL, kBM, kBN, kK, kKP, kThreads,
           kLoads, bad ? "FAILED" : "ok");
    return bad ? 1 : 0;
}
