// tests/cli/recipe_wgmma_layout.cpp: checks, on the host, that recipes/gemm_wgmma.cu's
// producer writes each operand value where its warpgroup MMAs read it: smem_offset(r, k)
// (the producer's 128-byte-swizzle arithmetic) against CuTe's own SmemLayoutA/B (from
// which the WGMMA descriptors are made), every (row, k, stage) of both tiles. Also that the
// producer's thread mapping covers each tile exactly once for either major, and that the
// presplit form's workspace (CGR_PRESPLIT) holds each value once, where the stage wants it,
// and that its slabs (an operand stored along its rows) write each once, in whole rows, as
// do the tiles of the split with a scale a tile.
// Built by tests/cli/t0706-recipe-gemm-emu.sh:
//   c++ -std=c++17 -DCGR_KERNEL='"gen.cu"' -I include -I CUTLASS -I CUDA/include this.cpp
#include <cutegen/abi.h>
#include <cute/tensor.hpp>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <vector>

template <class T> inline T __ldg(const T *p) { return *p; }
#define CGR_GEMM_EMULATE 1
#include CGR_KERNEL

using namespace cgr_gemm;

// An element whose bits are 1 (tf32 or, with 3xFP16, half).
static Elem one_bits()
{
    Elem e;
    const uint32_t one = 1;  // little-endian: the element's low bits
    std::memcpy(&e, &one, sizeof e);
    return e;
}

// The element index of the one nonzero element of words buf[0..n).
static int nonzero_at(const uint32_t *buf, int n)
{
    int at = -1;
    for (int i = 0; i < n; ++i)
        if (buf[i])
            at = i * kEPW + (kEPW == 2 && (buf[i] & 0xffffu) == 0 ? 1 : 0);
    return at;
}

// Where CuTe's layout puts (r, k, s) (k an element: a word with tf32, half a word with
// halves): the one nonzero element after writing there, against smem_offset's word.
template <class Layout> static int check_layout(const char *name, int rows, int tile)
{
    std::vector<uint32_t> store(size_t(tile) * kStages + 1024);
    uint32_t *buf = reinterpret_cast<uint32_t *>((reinterpret_cast<uintptr_t>(store.data()) + 4095) & ~uintptr_t(4095));
    auto t = make_tensor(make_smem_ptr(reinterpret_cast<Elem *>(buf)), Layout{});
    int bad = 0;
    for (int s = 0; s < kStages; ++s)
        for (int r = 0; r < rows; ++r)
            for (int k = 0; k < kBKE; ++k) {
                memset(buf, 0, sizeof(uint32_t) * size_t(tile) * kStages);
                t(r, k, s) = one_bits();
                const int at = nonzero_at(buf, tile * kStages);
                const int ours = (s * tile + smem_offset(r, k / kEPW)) * kEPW + k % kEPW;
                if (at != ours && bad++ < 5)
                    printf("%s (%d, %d, stage %d): CuTe %d, smem_offset %d\n", name, r, k, s, at, ours);
            }
    return bad;
}

// Every element of a tile loaded once by the producer's 128 threads (load_coord).
static int check_mapping(const char *name, bool kmajor, int rows)
{
    std::vector<int> hits(size_t(rows) * kBK, 0);
    for (int t = 0; t < 128; ++t)
        for (int i = 0; i < rows / 16; ++i) {
            int r, k;
            if (kmajor)
                load_coord<true>(t, i, r, k);
            else
                load_coord<false>(t, i, r, k);
            for (int j = 0; j < 4; ++j)
                hits[size_t(kmajor ? r : r + j) * kBK + (kmajor ? k + j : k)]++;
        }
    int bad = 0;
    for (size_t i = 0; i < hits.size(); ++i)
        if (hits[i] != 1 && bad++ < 5)
            printf("%s: element (%zu, %zu) written %d times\n", name, i / kBK, i % kBK, hits[i]);
    return bad;
}

// The presplit workspace (CGR_PRESPLIT): over the first two row tiles of batch 1 (or 0)
// and every k-tile, the big part of each (row, k) lands once in the big halves of its
// tiles and nowhere else, and within its tile where CuTe's layout puts (row, k) of stage 0
// (so that a tile copied to a stage as it is is the stage the WGMMAs read).
template <class Layout, int ROWS, int ROW_TILES> static int check_presplit(const char *name, int tile)
{
    const int tiles = ROW_TILES < 2 ? ROW_TILES : 2, batch = 1;
    const int64_t base = presplit_tile<ROWS, ROW_TILES>(batch, 0, 0);
    const int64_t span = int64_t(tiles) * kKTiles * 2 * tile;
    std::vector<int> hits(size_t(span), 0);
    std::vector<uint32_t> store(size_t(tile) * kStages + 1024);
    uint32_t *buf = reinterpret_cast<uint32_t *>((reinterpret_cast<uintptr_t>(store.data()) + 4095) & ~uintptr_t(4095));
    auto t = make_tensor(make_smem_ptr(reinterpret_cast<Elem *>(buf)), Layout{});
    int bad = 0;
    for (int row = 0; row < tiles * ROWS; ++row)
        for (int k = 0; k < kKTiles * kBKE; k += kEPW) {
            const int64_t o = presplit_offset<ROWS, ROW_TILES>(batch, row, k) - base;
            if (o < 0 || o >= span) {
                if (bad++ < 5)
                    printf("%s presplit (%d, %d): offset %lld outside [0, %lld)\n", name, row, k, (long long)o, (long long)span);
                continue;
            }
            hits[size_t(o)]++;
            const int64_t in_tile = o - (presplit_tile<ROWS, ROW_TILES>(batch, row / ROWS, k / kBKE) - base);
            if (in_tile < 0 || in_tile >= tile) {
                if (bad++ < 5)
                    printf("%s presplit (%d, %d): not in its tile's big part (%lld)\n", name, row, k, (long long)in_tile);
                continue;
            }
            if ((row % 8) == 0 && (k % 5) < kEPW) {  // CuTe's layout, on a sample (both halves of a word)
                for (int h = 0; h < kEPW; ++h) {
                    memset(buf, 0, sizeof(uint32_t) * size_t(tile));
                    t(row % ROWS, (k + h) % kBKE, 0) = one_bits();
                    const int at = nonzero_at(buf, tile);
                    if (at != in_tile * kEPW + h && bad++ < 5)
                        printf("%s presplit (%d, %d): CuTe %d, presplit %lld\n", name, row, k + h, at,
                               (long long)(in_tile * kEPW + h));
                }
            }
        }
    for (int64_t i = 0; i < span; ++i) {
        const bool big = (i / tile) % 2 == 0;
        if (hits[size_t(i)] != (big ? 1 : 0) && bad++ < 5)
            printf("%s presplit: word %lld (%s half) hit %d times\n", name, (long long)i, big ? "big" : "small", hits[size_t(i)]);
    }
    return bad;
}

// The slabs of an operand stored along its rows (CGR_PRESPLIT_SLAB: presplit_slab's thread
// mapping), over batches 0 and 1 (or 0): each slab's loads fill its shared memory's k-rows
// once; its items write every (row, k) of the padded operand once, the value loaded for
// (row, k) to the word presplit_offset gives it; and the 8 items of a row write one whole
// 128-byte row (the point of the slabs).
template <int ROWS, int ROWS_MAX, int BATCHES> static int check_slabs(const char *name)
{
    constexpr int kRowTiles = (ROWS_MAX + ROWS - 1) / ROWS, kRowsP = kRowTiles * ROWS, kE = 4 * kEPW;
    constexpr int S = slab_count<ROWS, ROWS_MAX>();
    const int batches = BATCHES < 2 ? BATCHES : 2;
    const int64_t kp = int64_t(kKTiles) * kBKE;  // padded k
    std::vector<uint8_t> hits(size_t(batches) * kRowsP * kp, 0);
    std::vector<int64_t> sx(size_t(kBKE) * kSlabLd);
    int bad = 0;
    auto tag = [](int64_t row, int64_t k) { return (row << 32) | k; };
    for (int64_t u = 0; u < int64_t(batches) * kKTiles * S; ++u) {
        int batch, kt, s;
        slab_unit<S>(u, batch, kt, s);
        std::fill(sx.begin(), sx.end(), int64_t(-1));
        for (int e = 0; e < 256 * kSlabLoads; ++e) {
            int kk, r;
            slab_load_at(e, kk, r);
            if (kk < 0 || kk >= kBKE || r < 0 || r >= kSlab || sx[size_t(kk * kSlabLd + r)] != -1) {
                if (bad++ < 5)
                    printf("%s slab %lld: load %d to (%d, %d), outside or twice\n", name, (long long)u, e, kk, r);
                continue;
            }
            sx[size_t(kk * kSlabLd + r)] = tag(s * kSlab + r, kt * kBKE + kk);
        }
        int64_t line = -1;
        uint8_t chunks = 0;
        for (int e = 0; e < 256 * kSlabItems; ++e) {
            int r, c;
            slab_item_at(e, r, c);
            const int row = s * kSlab + r;
            if (row >= kRowsP)
                continue;
            const int k0 = kt * kBKE + c * kE;
            const int64_t o = presplit_offset<ROWS, kRowTiles>(batch, row, k0);
            if (e % 8 == 0) {
                line = o / 32;
                chunks = 0;
            }
            if (o % 4 != 0 || o / 32 != line || (chunks & (1u << (o % 32 / 4)))) {
                if (bad++ < 5)
                    printf("%s slab %lld: item %d (row %d, k %d) at word %lld: not a new 16-byte chunk of its row's 128 bytes\n",
                           name, (long long)u, e, row, k0, (long long)o);
                continue;
            }
            chunks |= uint8_t(1u << (o % 32 / 4));
            for (int q = 0; q < kE; ++q) {
                const int64_t got = sx[size_t((c * kE + q) * kSlabLd + r)];
                if (got != tag(row, k0 + q) || presplit_offset<ROWS, kRowTiles>(batch, row, k0 + q) != o + q / kEPW) {
                    if (bad++ < 5)
                        printf("%s slab %lld: (row %d, k %d) written from the wrong value or word\n", name, (long long)u, row, k0 + q);
                    continue;
                }
                hits[size_t((int64_t(batch) * kRowsP + row) * kp + k0 + q)]++;
            }
        }
    }
    for (size_t i = 0; i < hits.size(); ++i)
        if (hits[i] != 1 && bad++ < 5)
            printf("%s slabs: (batch, row, k) %zu written %d times\n", name, i, hits[i]);
    return bad;
}

// The split with tile scales (CGR_TILE_SCALE: presplit_scaled_tile's mapping), over batches
// 0 and 1 (or 0): unit u is the tile whose scale the consumer reads at (batch * kKTiles +
// kt) * ROW_TILES + rt, and its items (K-major or held, presplit_held_tile: 8 threads a
// row; along the rows: its slabs) write every (row, k) of that tile once, inside the tile.
template <bool KMajor, int ROWS, int ROWS_MAX, int BATCHES> static int check_scaled(const char *name)
{
    constexpr int kRowTiles = (ROWS_MAX + ROWS - 1) / ROWS, kE = 4 * kEPW;
    const int batches = BATCHES < 2 ? BATCHES : 2;
    std::vector<uint8_t> hits(static_cast<size_t>(ROWS) * kBKE);
    int bad = 0;
    for (int64_t u = 0; u < int64_t(batches) * kKTiles * kRowTiles; ++u) {
        int batch, kt, rt;
        scaled_tile_at<kRowTiles>(u, batch, kt, rt);
        if ((int64_t(batch) * kKTiles + kt) * kRowTiles + rt != u && bad++ < 5)
            printf("%s tile %lld: (batch %d, kt %d, rt %d) is not where its scale is read\n", name, (long long)u, batch, kt, rt);
        std::fill(hits.begin(), hits.end(), uint8_t(0));
        auto chunk = [&](int r, int k0) {  // the item writing row r of the tile, k0 .. k0 + kE of the k-tile
            const int64_t base = presplit_tile<ROWS, kRowTiles>(batch, rt, kt);
            for (int q = 0; q < kE; ++q) {
                const int64_t o = presplit_offset<ROWS, kRowTiles>(batch, rt * ROWS + r, kt * kBKE + k0 + q) - base;
                if (r < 0 || r >= ROWS || k0 + q >= kBKE || o < 0 || o >= int64_t(ROWS) * kBK) {
                    if (bad++ < 5)
                        printf("%s tile %lld: row %d, k %d outside the tile\n", name, (long long)u, r, k0 + q);
                    return;
                }
                hits[size_t(r) * kBKE + k0 + q]++;
            }
        };
        if (KMajor || kTileHold) {  // a held tile (CGR_TILE_HOLD) is split by the K-major items either way
            for (int e = 0; e < 256 * ((ROWS * 8 + 255) / 256); ++e) {
                int r, c;
                slab_item_at(e, r, c);
                if (r < ROWS)
                    chunk(r, c * kE);
            }
        } else {
            for (int s0 = 0; s0 < ROWS; s0 += kSlab) {
                const int nrows = ROWS - s0 < kSlab ? ROWS - s0 : kSlab;
                for (int e = 0; e < 256 * kSlabItems; ++e) {
                    int r, c;
                    slab_item_at(e, r, c);
                    if (r < nrows)
                        chunk(s0 + r, c * kE);
                }
            }
        }
        for (size_t i = 0; i < hits.size(); ++i)
            if (hits[i] != 1 && bad++ < 5)
                printf("%s tile %lld: (row %zu, k %zu) written %d times\n", name, (long long)u, i / kBKE, i % kBKE, hits[i]);
    }
    return bad;
}

int main()
{
    int bad = check_layout<SmemLayoutA>("A", kBM, kTileA) + check_layout<SmemLayoutB>("B", kBN, kTileB);
    for (int major = 0; major < 2 && !kF16; ++major) {  // the in-kernel split (tf32 only)
        bad += check_mapping(major ? "A K-major" : "A M-major", major, kBM);
        bad += check_mapping(major ? "B K-major" : "B N-major", major, kBN);
    }
    bad += check_presplit<SmemLayoutA, kBM, kTilesM>("A", kTileA) + check_presplit<SmemLayoutB, kBN, kTilesN>("B", kTileB);
    bad += check_slabs<kBM, kM, kBatchA>("A") + check_slabs<kBN, kN, kBatchB>("B");
    bad += check_scaled<kAKMajor, kBM, kM, kBatchA>("A") + check_scaled<kBKMajor, kBN, kN, kBatchB>("B");
    printf("wgmma layout: tiles %dx%d and %dx%d, %d stages: %d mismatches\n", kBM, kBK, kBN, kBK, kStages, bad);
    return bad != 0;
}
