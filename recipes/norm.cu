// recipes/norm.cu: normalisation by reduced statistics broadcast back (the NORM family:
// LayerNorm, GroupNorm, InstanceNorm, RMSNorm, BatchNorm in eval mode, x / ||x||, ...).
//
// out = epi(inputs, s_0..s_{m-1}) elementwise over the output, each statistic s_k a sum,
// max, min, or (mean, biased variance) of a prologue pro_k(inputs, earlier statistics)
// over the reduced block of dims. The output is viewed as (OUTER, R, INNER), contiguous,
// R the reduced extent; the statistics of position (o, n) are over r = 0..R-1 of
// element (o * R + r) * INNER + n. Statistics of pass 1 read statistics of pass 0.
//
// Modes (CGR_MODE), each counted in passes over memory:
// - ROWS (INNER == 1): a row is shared by ROW_THREADS threads (a warp or the CTA), or by
//   a thread-block cluster of CLUSTER CTAs (sm_90) exchanging partial statistics through
//   distributed shared memory. With VECS > 0 each thread holds its VECS 16-byte vectors
//   of the row in registers: x is read once and y written once. With VECS == 0 the row
//   is streamed once per pass and once more for the output (the later reads of a CTA's
//   row mostly hit L2). With ROWS_PREFETCH (sm_90, VECS > 0, rows of exactly the CTAs'
//   registers) the CTAs (or clusters) are persistent and take rows in turn; each holds a
//   contiguous chunk of its row, and one bulk copy (cp.async.bulk, completing on an
//   mbarrier) brings its chunk of its next row into shared memory while it works on this
//   one, so that loads stream during the arithmetic, the exchange and the stores.
//   With GROUP > 1 (rows longer than a cluster holds) a row is held by a group of GROUP
//   CTAs (no cluster) that exchange partial statistics through the workspace: each
//   publishes its partial and counts itself in on the group's counter, then waits until
//   the counter says all GROUP did and combines the GROUP partials in one fixed order.
//   Every CTA must be resident at once: a cooperative launch, or none.
//   With RING = S > 0 (groups, sm_90) a row is held in shared memory only: each CTA's chunk
//   of a row is cut into RING_PIECES pieces that stream through a ring of S stages (a bulk
//   copy each, on the stage's mbarrier), a stage refilled S pieces on as soon as its piece
//   is written, so the next rows keep loading while a row waits for its statistics.
//   Lab options: RING_AHEAD (publish the next row's partials before waiting), RING_STORE
//   (y by bulk copies from the stage), RING_REGS (pieces copied to registers, the ring
//   only loading), RING_RELACQ 0 (the exchange by a fence and an add, volatile polls and
//   a fence, as before round 31; by default a release add and acquire loads), POLL_NS,
//   and the diagnostics LAB_NO_WAIT, LAB_COPY_ONLY (wrong results: for ncu only).
// - COLS (INNER > 1, a strided reduction): a thread per column (o, n), threads along n
//   (coalesced), looping over r; with VECS == R the column is held in registers.
// - SPLIT (few long rows or columns): each row or column is split over SPLIT CTAs; their
//   partial statistics go to the workspace, a warp per row combines them into the
//   statistics (one kernel per pass), and an apply kernel writes the output: x is read
//   once per pass plus once for the output.
// - HOLD (rows too long for a cluster): each row is split into SPLIT chunks of THREADS x
//   VECS vectors, one CTA a chunk, holding it in registers. CTAs take chunks in order
//   from a ticket counter, publish their partial statistics, and the last CTA of a row
//   combines them and flags the row; every CTA of the row waits for the flag and writes
//   its chunk from registers: x is read once. No deadlock: a CTA only waits for chunks of
//   its own row, all of which were handed out (to running CTAs) before any chunk of a
//   later row, and a row's SPLIT chunks fit the GPU at once (checked at run time against
//   the occupancy the runtime reports, times the SM count). Variants: persistent CTAs
//   holding two chunks (CGR_HOLD_PERSIST), and every CTA combining its row's partials
//   itself (CGR_HOLD_DIRECT, a lab option).
//   With HOLD_LAG = D > 0 nothing waits for a row in the steady state: persistent CTAs take
//   tasks in ticket order, task t publishing the partial statistics of chunk t and then
//   writing chunk t - lag, which it re-reads: lag chunks after the statistics read it, so
//   from L2 while lag chunks of x fit there (x is read from memory once). The lag is at
//   least D rows and at least a row plus twice the CTAs (set at launch), so that the
//   written chunk's row completed before any ticket now held was handed out. No
//   deadlock, and no need for the CTAs to be resident together: a task waits only for a
//   row whose chunks all have earlier tickets, so the CTA holding the earliest unpublished
//   chunk never waits for an unpublished one (a CTA holds at most its task and its next
//   ticket, taken as the task starts).
// - POINTWISE (no statistics: BatchNorm with running statistics): one vectorised pass.
// Statistics are computed in float: sums and extremes as they come, (mean, variance) by
// shifted sums per thread (the thread's first value as the shift) combined with Chan's
// formula, so the variance does not cancel. Extremes propagate NaN as torch.amax does.
// Broadcast inputs (weights, running statistics) are read at offsets the generator
// computes from (o, r, n); along a 16-byte vector they are read once (constant along the
// last dim), as a vector (contiguous along it), or element by element.
//
// Named parameters (CGR_*) are written by src/recipe_norm.c in place of `recipe:params`;
// the defaults make this file compile on its own (LayerNorm without affine over rows of
// 4096 floats, a CTA a row holding the row in registers).
#include <cutegen/abi.h>
#include <cute/config.hpp>             // CUTE_UNROLL
#include <cute/arch/cluster_sm90.hpp>  // cluster_arrive, cluster_wait (no CuTe tensor here: cute/tensor.hpp
                                       // would cost seconds a build, docs/build.md)
#include <cooperative_groups.h>
#include <type_traits>
#include <utility>
#include <cstdint>
#include "ops.cuh"  // recipe:inline

// recipe:params
#ifndef CGR_GENERATED
#define CGR_T float                 // element type of the output and the full-size inputs
#define CGR_OUT_DTYPE CG_FLOAT32
#define CGR_MODE 1                  // 0 pointwise, 1 rows, 2 columns, 3 split, 4 hold
#define CGR_OUTER 1024
#define CGR_R 4096
#define CGR_INNER 1
#define CGR_NSTAT 1                 // statistics
#define CGR_NSLOT 3                 // their values (a mean and variance take two), then values derived from them
#define CGR_LEVELS 1                // passes of statistics (1, or 2 when some read others)
#define CGR_THREADS 256             // threads per CTA
#define CGR_ROW_THREADS 256         // rows: threads sharing a row in a CTA (32 or THREADS)
#define CGR_CLUSTER 1               // rows: CTAs sharing a row (> 1: a cluster, sm_90)
#define CGR_MIN_BLOCKS 1            // rows: CTAs an SM the kernel's __launch_bounds__ asks for
#define CGR_VECS 4                  // rows: 16-byte vectors a thread holds (0: stream); columns: R or 0
#define CGR_SPLIT 1                 // split, hold: CTAs per row or column
#define CGR_UNROLL 4                // split and pointwise: 16-byte vectors per thread per CTA
#define CGR_NIN 1
#define CGR_INPUTS(X) X(0, float, CGR_FULL, CG_FLOAT32)
#define CGR_IN_NDIMS {2}
#define CGR_IN_SHAPES {{1024, 4096}}
#define CGR_IN_STRIDES {{4096, 1}}
#define CGR_OUT_NDIM 2
#define CGR_OUT_SHAPE {1024, 4096}
__host__ __device__ constexpr int cgr_stat_kind(int k) { return k == 0 ? 3 : 0; }
__host__ __device__ constexpr int cgr_stat_level(int k) { return 0 * k; }
__host__ __device__ constexpr int cgr_stat_slot(int k) { return 0 * k; }
__host__ __device__ constexpr int cgr_access(int i) { return 0 * i; }
__device__ __forceinline__ int64_t cgr_off(int i, int64_t o, int64_t r, int64_t n) { return 0 * (i + o + r + n); }
// broadcast input i: elements along r (from a multiple of it) over which its offset stays the same
__host__ __device__ constexpr int64_t cgr_run(int i) { return 1 + 0 * i; }
__device__ __forceinline__ float cgr_pro(int k, const float *x) { return k == 0 ? x[0] : 0.f; }
// after statistic k's slots are set, the slots derived from them (once a row)
__device__ __forceinline__ void cgr_derive(int k, float *s)
{
    if (k == 0) s[2] = rsqrtf(s[1] + 1e-5f);
}
__device__ __forceinline__ float cgr_epi(const float *x) { return (x[0] - x[1]) * x[3]; }
#endif
#ifndef CGR_HOLD_PERSIST
#define CGR_HOLD_PERSIST 0          // hold: persistent CTAs loading their next chunk before waiting
#endif
#ifndef CGR_HOLD_EARLY
#define CGR_HOLD_EARLY 0            // persistent hold: the next chunk's loads in flight while the current one is written (lab option, slower)
#endif
#ifndef CGR_HOLD_DIRECT
#define CGR_HOLD_DIRECT 0           // hold: every CTA of a row combines the row's partials itself
#endif
#ifndef CGR_HOLD_LAG
#define CGR_HOLD_LAG 0              // hold: > 0, a chunk is written LAG rows after its statistics, re-read (from L2)
#endif
#ifndef CGR_LAG_HINTS
#define CGR_LAG_HINTS 0             // L2 hints (x's last read and y evict-first, weights evict-last), lab option
#endif
#ifndef CGR_SPLIT_REVERSE
#define CGR_SPLIT_REVERSE 0         // split rows: the output pass starts where the statistics ended (L2), lab option
#endif
#ifndef CGR_SPLIT_FUSED
#define CGR_SPLIT_FUSED 0           // split rows: one kernel, each CTA waits for its row's partials, then re-reads its chunk
                                    // (lab option: measured slower, lab round 17, docs/perf.md 2026-12-03 16:24)
#endif
#ifndef CGR_ROWS_PREFETCH
#define CGR_ROWS_PREFETCH 0         // rows: persistent, the next row's chunk bulk-copied meanwhile (sm_90)
#endif
#ifndef CGR_GROUP
#define CGR_GROUP 1                 // rows prefetched: CTAs sharing a row through global memory (> 1: no cluster)
#endif
#ifndef CGR_RING
#define CGR_RING 0                  // rows prefetched: > 0, rows held in a ring of this many shared-memory stages
#endif
#ifndef CGR_RING_PIECES
#define CGR_RING_PIECES 1           // ring: pieces a CTA's chunk of a row is cut into (a stage holds one)
#endif
#ifndef CGR_RING_AHEAD
#define CGR_RING_AHEAD 0            // ring: rows whose partials a CTA publishes before it waits for a row's statistics
#endif
#ifndef CGR_RING_REGS
#define CGR_RING_REGS 0             // ring: rows held in registers, the ring only loading (1) or rows held in the ring (0)
#endif
#ifndef CGR_RING_STORE
#define CGR_RING_STORE 0            // ring: y stored by bulk copies from the stage (1) or by every thread (0)
#endif
#ifndef CGR_LAB_NO_WAIT
#define CGR_LAB_NO_WAIT 0           // ring, lab diagnostic only (wrong results): collect without waiting for the group
#endif
#ifndef CGR_LAB_COPY_ONLY
#define CGR_LAB_COPY_ONLY 0         // ring, lab diagnostic only (wrong results): y = x through the ring, no statistics
#endif
#ifndef CGR_RING_RELACQ
#define CGR_RING_RELACQ 1           // ring: the exchange by a release add and acquire loads (0: a fence and an
                                    // add, volatile polls and a fence; H200 lab round 31: 4.710 -> 4.566 ms)
#endif
#ifndef CGR_POLL_NS
#define CGR_POLL_NS 32              // ring: nanoseconds between polls of the group's counter
#endif
#ifndef CGR_EVICT_FIRST
#define CGR_EVICT_FIRST 0           // rows prefetched: the bulk copies ask L2 to evict x first (lab option)
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900 && (CGR_CLUSTER > 1 || CGR_ROWS_PREFETCH)
#error "this recipes/norm.cu variant needs sm_90 (clusters, bulk copies): use a variant with CGR_CLUSTER 1"
#endif
#if CGR_ROWS_PREFETCH
#include <cute/arch/copy_sm90_tma.hpp>
#include <cutlass/arch/barrier.h>
#endif

namespace cgr_norm {

namespace cg = cooperative_groups;
using T = CGR_T;
enum Mode { POINTWISE = 0, ROWS = 1, COLS = 2, SPLIT = 3, HOLD = 4 };
enum Kind { SUM = 0, MAX = 1, MIN = 2, VAR = 3 };
enum Access { ELEM = 0, UNIFORM = 1, VECTOR = 2 };
constexpr int kMode = CGR_MODE;
constexpr int64_t kO = CGR_OUTER, kR = CGR_R, kI = CGR_INNER;
constexpr int kVec = 16 / int(sizeof(T));
constexpr int kNin = CGR_NIN, kNstat = CGR_NSTAT, kNslot = CGR_NSLOT, kLevels = CGR_LEVELS;
constexpr int kNx = kNin + kNslot > 0 ? kNin + kNslot : 1;
constexpr int kNs = kNstat > 0 ? kNstat : 1;
constexpr int kNsl = kNslot > 0 ? kNslot : 1;
constexpr int kThreads = CGR_THREADS, kRowThreads = CGR_ROW_THREADS, kCluster = CGR_CLUSTER;
constexpr int kVecs = CGR_VECS, kSplit = CGR_SPLIT, kUnroll = CGR_UNROLL;
constexpr int kRowsPerCta = kMode == ROWS ? kThreads / kRowThreads : 1;
// hold, persistent (CGR_HOLD_PERSIST): a CTA holds two chunks (the one it writes, the next
// it loads), so it asks for half as many CTAs an SM unless CGR_MIN_BLOCKS says more
constexpr bool kPersist = CGR_HOLD_PERSIST != 0;
constexpr bool kDirect = CGR_HOLD_DIRECT != 0;
// persistent hold (CGR_HOLD_EARLY, lab option): a step issues its next chunk's loads, waits
// for and writes its current chunk, and only then sums and publishes the next chunk (first
// when the next chunk is of the same row: that row may be waiting for it). H100, lab round
// 49: GroupNorm 5.75 -> 9.34 ms, LayerNorm 0.406 -> 0.527: a row now completes only after
// its chunks' holders have written the row before it, so the rows complete one after
// another; the default publishes a chunk as soon as it is summed
constexpr bool kEarly = CGR_HOLD_EARLY != 0;
constexpr bool kPrefetch = CGR_ROWS_PREFETCH != 0;
constexpr int kLag = CGR_HOLD_LAG;
constexpr bool kLagHints = CGR_LAG_HINTS != 0;
// split rows (CGR_SPLIT_REVERSE): the statistics read the rows' chunks position by
// position, all rows together, and the output pass takes the positions in reverse, so
// that its first reads find the statistics' last (up to the L2's size) still in L2
constexpr bool kReverse = CGR_SPLIT_REVERSE != 0;
// split rows (CGR_SPLIT_FUSED): one kernel of OUTER x SPLIT CTAs in row order; each
// publishes its chunk's partials, waits until its row's SPLIT are in (counted in the
// workspace), combines them all in one fixed order, then writes its chunk, re-reading it:
// only the rows whose CTAs run at once are in flight, so the re-read finds L2
constexpr bool kFused = CGR_SPLIT_FUSED != 0;
constexpr int kHoldMinBlocks = kPersist ? (CGR_MIN_BLOCKS > 1 ? CGR_MIN_BLOCKS : (kThreads >= 512 ? 1 : 512 / kThreads))
                                        : (kThreads >= 1024 ? 1 : 1024 / kThreads);  // CTAs an SM can always hold
constexpr int64_t kHoldChunk = int64_t(kThreads) * (kVecs > 0 ? kVecs : 1);  // vectors a CTA holds
constexpr int kGroup = CGR_GROUP;
constexpr int kRowCtas = kCluster * kGroup;                      // CTAs sharing a row
constexpr int kRingBufs = CGR_RING > 0 ? 2 * CGR_RING_AHEAD + 2 : 2;  // groups: exchanges in the workspace at once
constexpr int kG = kRowCtas * kRowThreads;                       // threads sharing a row
constexpr int64_t kMaxRowVecs = kR % kVec == 0 ? kR / kVec : (kR + 2 * kVec - 2) / kVec;
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "threads per CTA");
static_assert(kMode != ROWS || (kRowThreads % 32 == 0 && kThreads % kRowThreads == 0), "threads per row");
static_assert(kCluster == 1 || (kMode == ROWS && kRowThreads == kThreads && kCluster <= 16), "cluster shape");
static_assert(kMode != ROWS || kVecs == 0 || int64_t(kG) * kVecs >= kMaxRowVecs, "a row fits the registers");
static_assert(kMode != COLS || kVecs == 0 || kVecs == kR, "a column is held whole or streamed");
static_assert(kMode == POINTWISE || kNstat > 0, "statistics");
static_assert(kMode != POINTWISE || (kO == 1 && kI == 1), "the pointwise pass is one row");
static_assert(kLevels >= 1 && kLevels <= 2, "passes of statistics");
static_assert(!kPersist || (kMode == HOLD && kLevels == 1), "persistent hold: one pass of statistics");
static_assert(!kEarly || kPersist, "early loads: the persistent hold only");
static_assert(!kLagHints || kLag > 0 || CGR_RING > 0 || kPersist || kMode == SPLIT,
              "L2 hints: the lagged or persistent hold, the ring or the split only");
static_assert(kLag == 0 || (kMode == HOLD && kLevels == 1 && !kPersist && !kDirect), "lagged hold: one pass, last CTA combines");
static_assert(!kPrefetch || (kMode == ROWS && kVecs > 0 && kRowThreads == kThreads && kR % kVec == 0 &&
                             int64_t(kG) * kVecs * kVec == kR),
              "rows prefetched: rows of exactly the CTAs' registers, whole vectors");
static_assert(kGroup == 1 || (kPrefetch && kCluster == 1), "groups: rows prefetched, no cluster");
static_assert(!kFused || (kMode == SPLIT && kI == 1 && !kReverse), "fused split: rows, in order");
static_assert(kMode != HOLD || (kI == 1 && kVecs > 0 && kRowThreads == kThreads &&
                                kSplit == (kMaxRowVecs + kHoldChunk - 1) / kHoldChunk), "hold: chunks of a row");

using cgr::CGR_UNUSED; using cgr::CGR_FULL; using cgr::CGR_SCALAR; using cgr::CGR_BCAST;
template <int I> struct In;
#define CGR_DEF_IN(i, ctype, k, dt) \
    template <> struct In<i> { using type = ctype; static constexpr int kind = k; static constexpr int dtype = dt; };
CGR_INPUTS(CGR_DEF_IN)
#undef CGR_DEF_IN
#define CGR_KIND_OF(i, ctype, k, dt) k,
constexpr int kKinds[] = { CGR_INPUTS(CGR_KIND_OF) -1 };
#undef CGR_KIND_OF

// Position of input i among the full-size inputs (whose raw vectors a thread holds).
__host__ __device__ constexpr int full_rank(int i)
{
    int r = 0;
    for (int j = 0; j < i; ++j) r += kKinds[j] == CGR_FULL;
    return r;
}
constexpr int kNfull = full_rank(kNin);
constexpr int kNf = kNfull > 0 ? kNfull : 1;

template <class F> __device__ __forceinline__ void for_inputs(F &&f) { cgr::for_each_index<kNin>(f); }
template <class F> __device__ __forceinline__ void for_stats(F &&f) { cgr::for_each_index<kNstat>(f); }

struct Args {
    const void *in[kNin > 0 ? kNin : 1];
    T *out;
    float4 *part;  // split, hold: partial statistics [(row * SPLIT + s) * NSTAT + k]
    float *slots;  // split, hold: statistics [row * NSLOT + slot], row = o * INNER + n
    unsigned long long *ticket;  // hold: the next chunk to hand out
    unsigned *count;             // hold: [pass][row] chunks that published their partials
    unsigned *ready;             // hold: [pass][row] 1 once the statistics are in slots
    int64_t lag;                 // hold with a lag: task t writes chunk t - lag
                                 // groups: part [group][pass parity][stat][rank], count [group]
};

// ------------------------------------------------------------------ statistics

// A thread's running statistic: SUM (a), MAX/MIN (a), VAR (shift a, sum b and sum of
// squares c of x - shift, count d).
struct Local { float a, b, c, d; };
// A combinable statistic: SUM/MAX/MIN (x), VAR (mean x, M2 y, count z).
using Acc = float4;

template <int K> __device__ __forceinline__ Local local_init()
{
    constexpr int kind = cgr_stat_kind(K);
    return Local{ kind == MAX ? -INFINITY : kind == MIN ? INFINITY : 0.f, 0.f, 0.f, 0.f };
}

template <int K> __device__ __forceinline__ void local_add(Local &l, float v)
{
    constexpr int kind = cgr_stat_kind(K);
    if constexpr (kind == SUM) {
        l.a += v;
    } else if constexpr (kind == MAX) {
        l.a = cgr::maximum(l.a, v);
    } else if constexpr (kind == MIN) {
        l.a = cgr::minimum(l.a, v);
    } else {
        l.a = l.d == 0.f ? v : l.a;
        const float t = v - l.a;
        l.b += t;
        l.c = fmaf(t, t, l.c);
        l.d += 1.f;
    }
}

// A whole vector's values added to l: sums and the deviations of (mean, variance) summed
// in a tree over the vector first (two dependent adds a vector instead of kVec), the
// shift taken once a vector; extremes one by one.
template <int K> __device__ __forceinline__ void local_add_vec(Local &l, const float (&v)[kVec])
{
    constexpr int kind = cgr_stat_kind(K);
    if constexpr (kind == SUM || kind == VAR) {
        float t[kVec], q[kVec];
        if constexpr (kind == VAR)
            l.a = l.d == 0.f ? v[0] : l.a;
        CUTE_UNROLL
        for (int j = 0; j < kVec; ++j) {
            t[j] = kind == VAR ? v[j] - l.a : v[j];
            q[j] = t[j] * t[j];
        }
        CUTE_UNROLL
        for (int w = kVec / 2; w > 0; w /= 2)
            CUTE_UNROLL
            for (int j = 0; j < w; ++j) {
                t[j] += t[j + w];
                q[j] += q[j + w];
            }
        if constexpr (kind == SUM) {
            l.a += t[0];
        } else {
            l.b += t[0];
            l.c += q[0];
            l.d += float(kVec);
        }
    } else {
        CUTE_UNROLL
        for (int j = 0; j < kVec; ++j) local_add<K>(l, v[j]);
    }
}

template <int K> __device__ __forceinline__ Acc local_done(const Local &l)
{
    if constexpr (cgr_stat_kind(K) == VAR) {
        if (l.d == 0.f)
            return make_float4(0.f, 0.f, 0.f, 0.f);
        const float mean = l.b / l.d;
        return make_float4(l.a + mean, fmaxf(l.c - l.b * mean, 0.f), l.d, 0.f);
    } else {
        return make_float4(l.a, 0.f, 0.f, 0.f);
    }
}

template <int K> __device__ __forceinline__ Acc acc_identity()
{
    const Local l = local_init<K>();
    return make_float4(l.a, 0.f, 0.f, 0.f);
}

template <int K> __device__ __forceinline__ Acc combine(const Acc &x, const Acc &y)
{
    constexpr int kind = cgr_stat_kind(K);
    if constexpr (kind == SUM) {
        return make_float4(x.x + y.x, 0.f, 0.f, 0.f);
    } else if constexpr (kind == MAX) {
        return make_float4(cgr::maximum(x.x, y.x), 0.f, 0.f, 0.f);
    } else if constexpr (kind == MIN) {
        return make_float4(cgr::minimum(x.x, y.x), 0.f, 0.f, 0.f);
    } else {
        if (x.z == 0.f)
            return y;
        if (y.z == 0.f)
            return x;
        // the weight of y in the merged mean: a fast division (2 ulp, counts are far from
        // its range limits) without the IEEE one's slow-path branch, which cost ~12
        // instructions a combine on the serial paths of every exchange
        const float n = x.z + y.z, f = __fdividef(y.z, n), d = y.x - x.x;
        return make_float4(fmaf(d, f, x.x), x.y + y.y + d * d * x.z * f, n, 0.f);
    }
}

// The statistic's values into the slots.
template <int K> __device__ __forceinline__ void to_slots(const Acc &a, float *slots)
{
    constexpr int s = cgr_stat_slot(K);
    slots[s] = a.x;
    if constexpr (cgr_stat_kind(K) == VAR)
        slots[s + 1] = a.z > 0.f ? a.y / a.z : 0.f;
    cgr_derive(K, slots);  // what the epilogue needs of the slots alone, once a row (rsqrt(var + eps))
}

__device__ __forceinline__ Acc shfl_xor(const Acc &a, int o)
{
    return make_float4(__shfl_xor_sync(0xffffffffu, a.x, o), __shfl_xor_sync(0xffffffffu, a.y, o),
                       __shfl_xor_sync(0xffffffffu, a.z, o), 0.f);
}
__device__ __forceinline__ Acc shfl0(const Acc &a)
{
    return make_float4(__shfl_sync(0xffffffffu, a.x, 0), __shfl_sync(0xffffffffu, a.y, 0),
                       __shfl_sync(0xffffffffu, a.z, 0), 0.f);
}

// Combines pass L's statistics over a warp; every lane gets lane 0's result.
template <int L> __device__ __forceinline__ void warp_combine(Acc (&acc)[kNs])
{
    for_stats([&](auto kc) {
        constexpr int K = decltype(kc)::value;
        if constexpr (cgr_stat_level(K) == L) {
            CUTE_UNROLL
            for (int o = 16; o > 0; o >>= 1) acc[K] = combine<K>(acc[K], shfl_xor(acc[K], o));
            acc[K] = shfl0(acc[K]);
        }
    });
}

// Combines pass L's statistics over the kRowThreads threads of each row group of the
// CTA; all of them get the same result. Every thread of the CTA must call it.
template <int L> __device__ __forceinline__ void group_combine(Acc (&acc)[kNs], Acc (*red)[kThreads / 32])
{
    warp_combine<L>(acc);
    if constexpr (kRowThreads > 32) {
        const int warp = threadIdx.x / 32, first = (threadIdx.x / kRowThreads) * (kRowThreads / 32);
        if (threadIdx.x % 32 == 0)
            for_stats([&](auto kc) {
                constexpr int K = decltype(kc)::value;
                if constexpr (cgr_stat_level(K) == L) red[K][warp] = acc[K];
            });
        __syncthreads();
        for_stats([&](auto kc) {
            constexpr int K = decltype(kc)::value;
            if constexpr (cgr_stat_level(K) == L) {
                Acc r = red[K][first];
                for (int w = 1; w < kRowThreads / 32; ++w) r = combine<K>(r, red[K][first + w]);
                acc[K] = r;
            }
        });
        __syncthreads();
    }
}

// ------------------------------------------------------------------ loads

// Stream: 0 plain, 1 cgr::ld, 2 the last read of these bytes (evict-first in L1 and L2:
// ld.global.cs), for x's last read with CGR_LAG_HINTS.
template <int Stream> __device__ __forceinline__ uint4 load16(const void *p)
{
    if constexpr (Stream == 2) {
        uint4 v;
        asm volatile("ld.global.cs.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
        return v;
    } else if constexpr (Stream == 1) {
        return cgr::ld(reinterpret_cast<const uint4 *>(p));
    } else {
        return *reinterpret_cast<const uint4 *>(p);
    }
}

// A broadcast input's 16-byte vector, read again by later rows: read-only, and with
// CGR_LAG_HINTS kept in L2 before other lines (evict-last) while x and y stream past.
__device__ __forceinline__ uint4 load16_kept(const void *p)
{
    if constexpr (kLagHints) {
        uint4 v;
        uint64_t policy;
        asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
        asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p), "l"(policy));
        return v;
    } else {
        return __ldg(reinterpret_cast<const uint4 *>(p));
    }
}

// An output vector: with CGR_LAG_HINTS evict-first (st.global.cs), so that y's lines
// leave L2 before the x rows the lag re-reads and the weights.
__device__ __forceinline__ void store16(void *p, uint4 v)
{
    if constexpr (kLagHints)
        asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                     : "memory");
    else
        cgr::st(reinterpret_cast<uint4 *>(p), v);
}

// Scalar inputs, read once per thread.
__device__ __forceinline__ void load_scalars(const Args &a, float (&sval)[kNin > 0 ? kNin : 1])
{
    for_inputs([&](auto ic) {
        constexpr int I = decltype(ic)::value;
        using E = typename In<I>::type;
        if constexpr (In<I>::kind == CGR_SCALAR)
            sval[I] = cgr::to_f(*static_cast<const E *>(a.in[I]));
        else
            sval[I] = 0.f;
    });
}

// The full-size inputs' elements [jlo, jhi) of 16-byte vector w (flat index w * kVec):
// one 16-byte load each when Full, else element by element.
template <bool Full, int Stream>
__device__ __forceinline__ void load_raw(const Args &a, int64_t w, int jlo, int jhi, T (&raw)[kNf][kVec])
{
    for_inputs([&](auto ic) {
        constexpr int I = decltype(ic)::value;
        if constexpr (In<I>::kind == CGR_FULL) {
            constexpr int f = full_rank(I);
            const T *p = static_cast<const T *>(a.in[I]) + w * kVec;
            if constexpr (Full) {
                *reinterpret_cast<uint4 *>(raw[f]) = load16<Stream>(p);
            } else {
                CUTE_UNROLL
                for (int j = 0; j < kVec; ++j) raw[f][j] = (j >= jlo && j < jhi) ? p[j] : T(0.f);
            }
        }
    });
}

// Broadcast inputs' values for elements [jlo, jhi) of a vector whose element j is at
// (o, r0 + j, n): one element or one vector for the whole vector when Full allows.
template <bool Full>
__device__ __forceinline__ void load_bcast(const Args &a, int64_t o, int64_t r0, int64_t n, int jlo, int jhi,
                                           float (&bv)[kNin > 0 ? kNin : 1][kVec])
{
    for_inputs([&](auto ic) {
        constexpr int I = decltype(ic)::value;
        using E = typename In<I>::type;
        if constexpr (In<I>::kind == CGR_BCAST) {
            const E *p = static_cast<const E *>(a.in[I]);
            if constexpr (Full && cgr_access(I) == UNIFORM) {
                const float v = cgr::to_f(__ldg(p + cgr_off(I, o, r0, n)));
                CUTE_UNROLL
                for (int j = 0; j < kVec; ++j) bv[I][j] = v;
            } else if constexpr (Full && cgr_access(I) == VECTOR) {
                alignas(16) E v[kVec];
                *reinterpret_cast<uint4 *>(v) = load16_kept(p + cgr_off(I, o, r0, n));
                CUTE_UNROLL
                for (int j = 0; j < kVec; ++j) bv[I][j] = cgr::to_f(v[j]);
            } else {
                CUTE_UNROLL
                for (int j = 0; j < kVec; ++j)
                    bv[I][j] = (j >= jlo && j < jhi) ? cgr::to_f(__ldg(p + cgr_off(I, o, r0 + j, n))) : 0.f;
            }
        }
    });
}

// The expressions' argument array for element j: inputs, then the statistics' slots.
__device__ __forceinline__ void element_x(int j, const T (&raw)[kNf][kVec], const float *sval,
                                          const float (&bv)[kNin > 0 ? kNin : 1][kVec], const float *slots,
                                          float (&x)[kNx])
{
    for_inputs([&](auto ic) {
        constexpr int I = decltype(ic)::value;
        constexpr int f = full_rank(I);
        if constexpr (In<I>::kind == CGR_FULL)
            x[I] = cgr::to_f(raw[f][j]);
        else if constexpr (In<I>::kind == CGR_SCALAR)
            x[I] = sval[I];
        else if constexpr (In<I>::kind == CGR_BCAST)
            x[I] = bv[I][j];
        else
            x[I] = 0.f;
    });
    CUTE_UNROLL
    for (int s = 0; s < kNslot; ++s) x[kNin + s] = slots[s];
}

// ------------------------------------------------------------------ vectors of a row

// Row o (INNER == 1) covers flat elements [o * R, o * R + R); vector w covers
// [w * kVec, w * kVec + kVec). Where they overlap: [jlo, jhi) of the vector.
// Callers pass only vectors w that overlap row o. When rows are whole vectors every such
// vector lies inside its row, and saying so at compile time lets the compiler drop the
// partial-vector paths and share the row-uniform part of the epilogue (rsqrt(var + eps))
// between a thread's vectors: computed for each element, it cost 15% on 34_InstanceNorm
// (H200, docs/perf.md, lab round 13).
__device__ __forceinline__ void vec_span(int64_t o, int64_t w, int64_t &r0, int &jlo, int &jhi)
{
    r0 = w * kVec - o * kR;
    if constexpr (kR % kVec == 0) {
        jlo = 0;
        jhi = kVec;
    } else {
        jlo = r0 < 0 ? int(-r0) : 0;
        jhi = r0 + kVec > kR ? int(kR - r0) : kVec;
    }
}

// Adds pass L's prologue values of vector w of row o (raw already loaded) to loc.
template <int L>
__device__ __forceinline__ void add_vec(const Args &a, int64_t o, int64_t w, const T (&raw)[kNf][kVec],
                                        const float *sval, const float *slots, Local (&loc)[kNs])
{
    int64_t r0;
    int jlo, jhi;
    vec_span(o, w, r0, jlo, jhi);
    float bv[kNin > 0 ? kNin : 1][kVec];
    auto body = [&](int lo, int hi) {
        CUTE_UNROLL
        for (int j = 0; j < kVec; ++j) {
            if (j < lo || j >= hi)
                continue;
            float x[kNx];
            element_x(j, raw, sval, bv, slots, x);
            for_stats([&](auto kc) {
                constexpr int K = decltype(kc)::value;
                if constexpr (cgr_stat_level(K) == L) local_add<K>(loc[K], cgr_pro(K, x));
            });
        }
    };
    if (jlo == 0 && jhi == kVec) {
        load_bcast<true>(a, o, r0, 0, 0, kVec, bv);
        // a whole vector: its values first, then each statistic takes them together
        float val[kNs][kVec];
        CUTE_UNROLL
        for (int j = 0; j < kVec; ++j) {
            float x[kNx];
            element_x(j, raw, sval, bv, slots, x);
            for_stats([&](auto kc) {
                constexpr int K = decltype(kc)::value;
                if constexpr (cgr_stat_level(K) == L) val[K][j] = cgr_pro(K, x);
            });
        }
        for_stats([&](auto kc) {
            constexpr int K = decltype(kc)::value;
            if constexpr (cgr_stat_level(K) == L) local_add_vec<K>(loc[K], val[K]);
        });
    } else {
        load_bcast<false>(a, o, r0, 0, jlo, jhi, bv);
        body(jlo, jhi);
    }
}

// The output's 16-byte vector from its inputs' values (raw, bv: a whole vector of the row).
__device__ __forceinline__ uint4 vec_result_of(const T (&raw)[kNf][kVec], const float *sval,
                                               const float (&bv)[kNin > 0 ? kNin : 1][kVec], const float *slots)
{
    alignas(16) T res[kVec];
    CUTE_UNROLL
    for (int j = 0; j < kVec; ++j) {
        float x[kNx];
        element_x(j, raw, sval, bv, slots, x);
        res[j] = cgr::from_f<T>(cgr_epi(x));
    }
    return *reinterpret_cast<const uint4 *>(res);
}

// The output's 16-byte vector whose elements are at (o, r0 + j) (a whole vector of the row).
__device__ __forceinline__ uint4 vec_result(const Args &a, int64_t o, int64_t r0, const T (&raw)[kNf][kVec],
                                            const float *sval, const float *slots)
{
    float bv[kNin > 0 ? kNin : 1][kVec];
    load_bcast<true>(a, o, r0, 0, 0, kVec, bv);
    return vec_result_of(raw, sval, bv, slots);
}

// Writes the output for vector w of row o (raw already loaded).
__device__ __forceinline__ void write_vec(const Args &a, int64_t o, int64_t w, const T (&raw)[kNf][kVec],
                                          const float *sval, const float *slots)
{
    int64_t r0;
    int jlo, jhi;
    vec_span(o, w, r0, jlo, jhi);
    float bv[kNin > 0 ? kNin : 1][kVec];
    T *y = a.out + w * kVec;
    if (jlo == 0 && jhi == kVec) {
        store16(y, vec_result(a, o, r0, raw, sval, slots));
    } else {
        load_bcast<false>(a, o, r0, 0, jlo, jhi, bv);
        CUTE_UNROLL
        for (int j = 0; j < kVec; ++j) {
            if (j < jlo || j >= jhi)
                continue;
            float x[kNx];
            element_x(j, raw, sval, bv, slots, x);
            y[j] = cgr::from_f<T>(cgr_epi(x));
        }
    }
}

// Loads vector w of row o: whole when it lies inside the row, else its part in the row.
template <int Stream>
__device__ __forceinline__ void load_row_vec(const Args &a, int64_t o, int64_t w, T (&raw)[kNf][kVec])
{
    int64_t r0;
    int jlo, jhi;
    vec_span(o, w, r0, jlo, jhi);
    if (jlo == 0 && jhi == kVec)
        load_raw<true, Stream>(a, w, 0, kVec, raw);
    else
        load_raw<false, Stream>(a, w, jlo, jhi, raw);
}

// ------------------------------------------------------------------ ROWS

// The k-th vector a thread of the row group holds (g: its rank in the group): interleaved
// over the group, or (ROWS_PREFETCH) in its CTA's contiguous chunk of the row.
__device__ __forceinline__ int64_t held_vec(int64_t v0, int g, int k)
{
    if constexpr (kPrefetch)
        return v0 + int64_t(g / kThreads) * kThreads * kVecs + g % kThreads + int64_t(k) * kThreads;
    else
        return v0 + g + int64_t(k) * kG;
}

// A cluster of more than 8 CTAs (not portable) is set at launch (cgr::launch_cluster).
#if CGR_CLUSTER > 1 && CGR_CLUSTER <= 8
#define CGR_CLUSTER_DIMS __cluster_dims__(CGR_CLUSTER, 1, 1)
#else
#define CGR_CLUSTER_DIMS
#endif

// Warp 0 combines pass L's values across its lanes, lane_value(kc, lane) being what lane
// `lane` contributes (the identity when nothing), in one fixed order, so that every CTA
// doing it gets the same statistics; then every thread of the CTA takes the result into
// acc. Every thread of the CTA must call it.
template <int L, class LaneValue>
__device__ __forceinline__ void warp0_combine(Acc (&acc)[kNs], Acc *fin, LaneValue &&lane_value)
{
    if (threadIdx.x < 32) {
        const int lane = threadIdx.x;
        for_stats([&](auto kc) {
            constexpr int K = decltype(kc)::value;
            if constexpr (cgr_stat_level(K) == L) {
                Acc v = lane_value(kc, lane);
                CUTE_UNROLL
                for (int s = 16; s > 0; s >>= 1) v = combine<K>(v, shfl_xor(v, s));
                if (lane == 0)
                    fin[K] = v;
            }
        });
    }
    __syncthreads();
    for_stats([&](auto kc) {
        constexpr int K = decltype(kc)::value;
        if constexpr (cgr_stat_level(K) == L) acc[K] = fin[K];
    });
}

// Groups (GROUP > 1): the CTA's pass-L result acc (the same in all its threads) combined
// with its group's other GROUP - 1 through the workspace; seq counts the passes the CTA
// made before this one (the same in every CTA of the group). Partials alternate between two
// buffers by seq's parity: a CTA writes a buffer again only two passes on, after every CTA
// of the group counted itself in on the pass between, so after all read it. Every thread
// of the CTA must call it.
template <int L> __device__ __forceinline__ void group_exchange(const Args &a, int seq, Acc (&acc)[kNs], Acc *fin)
{
    const int64_t grp = blockIdx.x / kGroup;
    const int rank = int(blockIdx.x % kGroup);
    float4 *part = a.part + (grp * 2 + (seq & 1)) * kNstat * kGroup;
    unsigned *count = a.count + grp;
    if (threadIdx.x == 0) {
        for_stats([&](auto kc) {
            constexpr int K = decltype(kc)::value;
            if constexpr (cgr_stat_level(K) == L) __stcg(&part[K * kGroup + rank], acc[K]);
        });
        __threadfence();
        atomicAdd(count, 1u);
        const volatile unsigned *c = count;
        const unsigned want = unsigned(seq + 1) * kGroup;
        unsigned spins = 0;
        while (*c < want && ++spins < (1u << 22))  // bounded (~1-2 s): a wrong result rather than a hang
            __nanosleep(32);
        __threadfence();
    }
    __syncthreads();
    warp0_combine<L>(acc, fin, [&](auto kc, int lane) {
        constexpr int K = decltype(kc)::value;
        Acc v = acc_identity<K>();
        for (int r = lane; r < kGroup; r += 32) v = combine<K>(v, __ldcg(&part[K * kGroup + r]));
        return v;
    });
}

// Pass L of a row: accumulate, combine over the row group (and the cluster, or the group
// of CTAs: seq is group_exchange's), set slots.
template <int L, bool Cached>
__device__ __forceinline__ void row_pass(const Args &a, int64_t o, bool live, int64_t v0, int64_t v1, int g,
                                         const T (&cache)[kVecs > 0 ? kVecs : 1][kNf][kVec], const float *sval,
                                         float *slots, Acc (*red)[kThreads / 32], Acc (*xchg)[kNs], Acc *fin,
                                         int seq = 0)
{
    Local loc[kNs];
    for_stats([&](auto kc) {
        constexpr int K = decltype(kc)::value;
        loc[K] = local_init<K>();
    });
    if (live) {
        if constexpr (Cached) {
            CUTE_UNROLL
            for (int k = 0; k < kVecs; ++k) {
                const int64_t w = held_vec(v0, g, k);
                if (w < v1)
                    add_vec<L>(a, o, w, cache[k], sval, slots, loc);
            }
        } else {
#pragma unroll 4
            for (int64_t w = v0 + g; w < v1; w += kG) {
                T raw[kNf][kVec];
                load_row_vec<false>(a, o, w, raw);
                add_vec<L>(a, o, w, raw, sval, slots, loc);
            }
        }
    }
    Acc acc[kNs];
    for_stats([&](auto kc) {
        constexpr int K = decltype(kc)::value;
        acc[K] = local_done<K>(loc[K]);
    });
    group_combine<L>(acc, red);
#if CGR_CLUSTER > 1
    // Each CTA's result to its shared memory; after the cluster barrier, warp 0 of every
    // CTA combines all of them in the same order, so all CTAs get identical statistics.
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0)
        for_stats([&](auto kc) {
            constexpr int K = decltype(kc)::value;
            if constexpr (cgr_stat_level(K) == L) xchg[L][K] = acc[K];
        });
    cluster.sync();
    warp0_combine<L>(acc, fin, [&](auto kc, int lane) {
        constexpr int K = decltype(kc)::value;
        Acc v = acc_identity<K>();
        if (lane < kCluster)
            v = *cluster.map_shared_rank(&xchg[L][K], lane);
        return v;
    });
#else
    (void)xchg;
    if constexpr (kGroup > 1)
        group_exchange<L>(a, seq, acc, fin);
    else
        (void)seq;
#endif
    for_stats([&](auto kc) {
        constexpr int K = decltype(kc)::value;
        if constexpr (cgr_stat_level(K) == L) to_slots<K>(acc[K], slots);
    });
}

// grid: rows / kRowsPerCta CTAs, or rows x CLUSTER CTAs (a cluster a row).
template <bool Cached>
__global__ void CGR_CLUSTER_DIMS __launch_bounds__(kThreads, CGR_MIN_BLOCKS) rows_kernel(const Args a)
{
    __shared__ Acc red[kNs][kThreads / 32];
    __shared__ Acc xchg[kLevels][kNs];
    __shared__ Acc fin[kNs];
    int rank = 0;
    int64_t o;
    if constexpr (kCluster > 1) {
        rank = int(blockIdx.x % kCluster);
        o = blockIdx.x / kCluster;
    } else {
        o = int64_t(blockIdx.x) * kRowsPerCta + threadIdx.x / kRowThreads;
    }
    const int g = rank * kRowThreads + int(threadIdx.x % kRowThreads);
    const bool live = o < kO;  // a warp a row: the last CTA's warps may have no row
    const int64_t v0 = live ? o * kR / kVec : 0, v1 = live ? (o * kR + kR + kVec - 1) / kVec : 0;
    float sval[kNin > 0 ? kNin : 1];
    load_scalars(a, sval);
    float slots[kNsl];
    CUTE_UNROLL
    for (int s = 0; s < kNsl; ++s) slots[s] = 0.f;

    T cache[kVecs > 0 ? kVecs : 1][kNf][kVec];
    if constexpr (Cached) {
        CUTE_UNROLL
        for (int k = 0; k < kVecs; ++k) {
            const int64_t w = held_vec(v0, g, k);
            if (w < v1)
                load_row_vec<true>(a, o, w, cache[k]);
        }
    }
    row_pass<0, Cached>(a, o, live, v0, v1, g, cache, sval, slots, red, xchg, fin);
    if constexpr (kLevels > 1)
        row_pass<1, Cached>(a, o, live, v0, v1, g, cache, sval, slots, red, xchg, fin);
#if CGR_CLUSTER > 1
    cute::cluster_arrive();  // done reading the other CTAs' shared memory
#endif
    if (live) {
        if constexpr (Cached) {
            CUTE_UNROLL
            for (int k = 0; k < kVecs; ++k) {
                const int64_t w = held_vec(v0, g, k);
                if (w < v1)
                    write_vec(a, o, w, cache[k], sval, slots);
            }
        } else {
#pragma unroll 4
            for (int64_t w = v0 + g; w < v1; w += kG) {
                T raw[kNf][kVec];
                load_row_vec<true>(a, o, w, raw);
                write_vec(a, o, w, raw, sval, slots);
            }
        }
    }
#if CGR_CLUSTER > 1
    cute::cluster_wait();  // no CTA leaves while another may still read its shared memory
#endif
}

#if CGR_ROWS_PREFETCH
constexpr int kChunkBytes = kThreads * kVecs * 16;  // a CTA's chunk of one full-size input
constexpr int kPrefetchSmem = kNfull * kChunkBytes;  // dynamic shared memory
static_assert(kChunkBytes < (1 << 20), "a bulk copy's bytes");
using Bar = cutlass::arch::ClusterTransactionBarrier;

// kChunkBytes from global src into shared dst, completing on mbarrier bar; with
// CGR_EVICT_FIRST the copy asks L2 to evict these lines first (x is read once: what stays
// in L2 should be the weights every row reads).
__device__ __forceinline__ void bulk_copy(const void *src, uint64_t *bar, void *dst, int bytes = kChunkBytes)
{
#if CGR_EVICT_FIRST
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint "
                 "[%0], [%1], %2, [%3], %4;\n"
                 :
                 : "r"(cute::cast_smem_ptr_to_uint(dst)), "l"(src), "r"(bytes),
                   "r"(cute::cast_smem_ptr_to_uint(bar)), "l"(uint64_t(cute::TMA::CacheHintSm90::EVICT_FIRST))
                 : "memory");
#else
    cute::SM90_BULK_COPY_G2S::copy(src, bar, dst, bytes);
#endif
}

// grid: persistent CTAs (clusters of CLUSTER when > 1), CTA (or cluster) c taking rows c,
// c + grid / CLUSTER, ...; dynamic shared memory: kPrefetchSmem.
template <int Unused = 0>
__global__ void __launch_bounds__(kThreads, CGR_MIN_BLOCKS) rows_prefetch_kernel(const Args a)
{
    extern __shared__ __align__(128) unsigned char chunk[];  // [full input][kChunkBytes]
    __shared__ Acc red[kNs][kThreads / 32];
    __shared__ Acc xchg[2][kLevels][kNs];  // by the parity of the CTA's row count
    __shared__ Acc fin[kNs];
    __shared__ alignas(8) uint64_t bar;
    const int rank = int(blockIdx.x % kRowCtas);
    const int g = rank * kThreads + int(threadIdx.x);
    const int64_t first = blockIdx.x / kRowCtas, stride = gridDim.x / kRowCtas;
    if (threadIdx.x == 0) {
        Bar::init(&bar, 1);
        cutlass::arch::fence_barrier_init();
    }
    __syncthreads();
    // thread 0: this CTA's chunk of row o of every full-size input into shared memory
    auto fetch = [&](int64_t o) {
        Bar::arrive_and_expect_tx(&bar, kPrefetchSmem);
        const int64_t e0 = (o * (kR / kVec) + int64_t(rank) * kThreads * kVecs) * kVec;
        for_inputs([&](auto ic) {
            constexpr int I = decltype(ic)::value;
            if constexpr (In<I>::kind == CGR_FULL)
                bulk_copy(static_cast<const T *>(a.in[I]) + e0, &bar, chunk + full_rank(I) * kChunkBytes);
        });
    };
    if (threadIdx.x == 0 && first < kO)
        fetch(first);
    float sval[kNin > 0 ? kNin : 1];
    load_scalars(a, sval);
    uint32_t phase = 0;
    int n = 0;
    for (int64_t o = first; o < kO; o += stride, ++n) {
        Bar::wait(&bar, phase);
        phase ^= 1;
        T cache[kVecs][kNf][kVec];
        CUTE_UNROLL
        for (int k = 0; k < kVecs; ++k)
            CUTE_UNROLL
            for (int f = 0; f < kNfull; ++f)
                *reinterpret_cast<uint4 *>(cache[k][f]) =
                    reinterpret_cast<const uint4 *>(chunk + f * kChunkBytes)[threadIdx.x + k * kThreads];
        __syncthreads();  // the chunk is in registers: shared memory takes the next row's
        if (threadIdx.x == 0 && o + stride < kO) {
            cutlass::arch::fence_view_async_shared();
            fetch(o + stride);
        }
        const int64_t v0 = o * (kR / kVec), v1 = v0 + kR / kVec;
        float slots[kNsl];
        CUTE_UNROLL
        for (int s = 0; s < kNsl; ++s) slots[s] = 0.f;
        // a CTA rewrites xchg[n & 1] two rows on, after a cluster barrier that no CTA passes
        // before all have read it
        row_pass<0, true>(a, o, true, v0, v1, g, cache, sval, slots, red, xchg[n & 1], fin, n * kLevels);
        if constexpr (kLevels > 1)
            row_pass<1, true>(a, o, true, v0, v1, g, cache, sval, slots, red, xchg[n & 1], fin, n * kLevels + 1);
        CUTE_UNROLL
        for (int k = 0; k < kVecs; ++k) write_vec(a, o, held_vec(v0, g, k), cache[k], sval, slots);
    }
#if CGR_CLUSTER > 1
    cg::this_cluster().sync();  // no CTA leaves while another may still read its shared memory
#endif
}

#if CGR_RING > 0
// Ring (CGR_RING stages): rows held in shared memory only, deeper than one row. A CTA's
// chunk of a row is cut into RING_PIECES pieces; its pieces, row after row, stream through
// a ring of RING stages (a bulk copy each, completing on the stage's mbarrier). A stage
// is refilled, RING pieces on, as soon as its piece is written out, so while a CTA waits
// for its row's statistics the next RING - RING_PIECES pieces keep loading.
constexpr int kStages = CGR_RING, kPieces = CGR_RING_PIECES;
constexpr int kPieceVecs = kThreads * kVecs / kPieces;  // 16-byte vectors of one input a piece
constexpr int kPieceBytes = kPieceVecs * 16;
constexpr int kStageBytes = kNfull * kPieceBytes;
constexpr int kRingSmem = kStages * kStageBytes;  // dynamic shared memory
constexpr int kAhead = CGR_RING_AHEAD;
constexpr bool kRingRegs = CGR_RING_REGS != 0;
static_assert(!kRingRegs || (kLevels == 1 && kAhead <= 1), "ring into registers: one pass, at most one row ahead");
// ring: y written into the stage in place of x and stored by one bulk copy a piece (no
// thread has global stores in flight when it publishes its partials behind a fence)
constexpr bool kRingStore = CGR_RING_STORE != 0;
static_assert(!kRingStore || sizeof(T) * kVec == 16, "ring store: y's vectors are x's");
// ring: nanoseconds between polls of a group's counter (every CTA of the group polls one
// word of L2 while it waits)
constexpr unsigned kPollNs = CGR_POLL_NS;
static_assert(kVecs % kPieces == 0 && (kRingRegs || kStages >= (kAhead + 1) * kPieces),
              "ring: whole vectors a thread a piece; the rows being summed and written fit the ring");
static_assert(kAhead == 0 || (kGroup > 1 && kLevels == 1), "ring ahead: groups, one pass of statistics");
static_assert(kCluster == 1, "ring: no cluster");
static_assert(kO * kPieces < (int64_t(1) << 31), "ring: a CTA's pieces counted in 32 bits");
// ring: every broadcast input reads one element for a whole piece (GroupNorm's per-channel
// weights: a channel's run of 262144 elements holds whole pieces of 8192), so a piece's
// broadcast values are loaded once, not once a vector (their offsets and loads were a
// third of the output loop's instructions)
template <int... I> __host__ __device__ constexpr bool piece_uniform_of(std::integer_sequence<int, I...>)
{
    return ((kKinds[I] != CGR_BCAST || (cgr_access(I) == UNIFORM && cgr_run(I) % (int64_t(kPieceVecs) * kVec) == 0)) &&
            ... && true);
}
constexpr bool kPieceUniform = piece_uniform_of(std::make_integer_sequence<int, kNin>{});

// The CTA's pass-L partial over its chunk of row o, pieces q0.. in the ring (pass 0 waits
// for them), combined over the CTA into acc (the same in every thread).
template <int L>
__device__ __forceinline__ void ring_stats(const Args &a, int64_t o, int64_t c0, int q0, const unsigned char *ring,
                                           uint64_t *full, const float *sval, const float *slots,
                                           Acc (*red)[kThreads / 32], Acc (&acc)[kNs])
{
    Local loc[kNs];
    for_stats([&](auto kc) {
        constexpr int K = decltype(kc)::value;
        loc[K] = local_init<K>();
    });
    CUTE_UNROLL  // whole: the shift and count of (mean, variance) fold to constants (local_add_vec)
    for (int p = 0; p < kPieces; ++p) {
        const int q = q0 + p;  // 32-bit: a CTA's pieces are few (asserted below)
        const int s = int(q % kStages);
        if constexpr (L == 0)
            Bar::wait(&full[s], uint32_t((q / kStages) & 1));
        const unsigned char *st = ring + s * kStageBytes;
        CUTE_UNROLL
        for (int k = 0; k < kVecs / kPieces; ++k) {
            const int j = int(threadIdx.x) + k * kThreads;
            T raw[kNf][kVec];
            CUTE_UNROLL
            for (int f = 0; f < kNfull; ++f)
                *reinterpret_cast<uint4 *>(raw[f]) = reinterpret_cast<const uint4 *>(st + f * kPieceBytes)[j];
            if constexpr (!CGR_LAB_COPY_ONLY)
                add_vec<L>(a, o, c0 + int64_t(p) * kPieceVecs + j, raw, sval, slots, loc);
        }
    }
    for_stats([&](auto kc) {
        constexpr int K = decltype(kc)::value;
        acc[K] = local_done<K>(loc[K]);
    });
    group_combine<L>(acc, red);
}

// Groups in a ring: exchange seq's partials live in buffer seq % kRingBufs of the
// group's (part [group][buffer][stat][rank], count [group][buffer]). A CTA publishes
// exchange seq + AHEAD before it collects seq, so a buffer is rewritten 2 x AHEAD + 2
// exchanges on: by then every CTA of the group has collected it (a CTA publishing seq
// has collected seq - AHEAD - 1, so every CTA has published it, so has collected seq -
// 2 x AHEAD - 2). A buffer's counter counts its uses: when it reaches (use + 1) x GROUP
// every CTA has published this use (a CTA publishes the next use only after that).
template <int L> __device__ __forceinline__ void ring_publish(const Args &a, int64_t seq, const Acc (&acc)[kNs])
{
    const int64_t buf = (blockIdx.x / kGroup) * kRingBufs + seq % kRingBufs;
    const int rank = int(blockIdx.x % kGroup);
    float4 *part = a.part + buf * kNstat * kGroup;
    if (threadIdx.x == 0) {
        for_stats([&](auto kc) {
            constexpr int K = decltype(kc)::value;
            if constexpr (cgr_stat_level(K) == L) __stcg(&part[K * kGroup + rank], acc[K]);
        });
        if constexpr (CGR_RING_RELACQ) {  // one release add instead of a fence and an add
            asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(a.count + buf) : "memory");
        } else {
            __threadfence();
            atomicAdd(a.count + buf, 1u);
        }
    }
}

// Waits until the group published exchange seq, then combines its GROUP partials in one
// fixed order into acc (every CTA gets the same) and sets pass L's slots.
template <int L>
__device__ __forceinline__ void ring_collect(const Args &a, int64_t seq, Acc (&acc)[kNs], Acc *fin, float *slots)
{
    const int64_t buf = (blockIdx.x / kGroup) * kRingBufs + seq % kRingBufs;
    const float4 *part = a.part + buf * kNstat * kGroup;
    if (threadIdx.x == 0) {
        const volatile unsigned *c = a.count + buf;
        const unsigned want = unsigned(seq / kRingBufs + 1) * kGroup;
        unsigned spins = 0;
        if constexpr (CGR_RING_RELACQ) {  // acquire loads instead of volatile ones and a fence
            unsigned got;
            auto load = [&] {
                asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(got) : "l"(a.count + buf) : "memory");
                return got;
            };
            while (!CGR_LAB_NO_WAIT && load() < want && ++spins < (1u << 22))
                __nanosleep(kPollNs);
        } else {
            while (!CGR_LAB_NO_WAIT && *c < want && ++spins < (1u << 22))  // bounded (>= 1 s): a wrong result, not a hang
                __nanosleep(kPollNs);
            __threadfence();
        }
    }
    __syncthreads();
    warp0_combine<L>(acc, fin, [&](auto kc, int lane) {
        constexpr int K = decltype(kc)::value;
        Acc v = acc_identity<K>();
        for (int r = lane; r < kGroup; r += 32) v = combine<K>(v, __ldcg(&part[K * kGroup + r]));
        return v;
    });
    for_stats([&](auto kc) {
        constexpr int K = decltype(kc)::value;
        if constexpr (cgr_stat_level(K) == L) to_slots<K>(acc[K], slots);
    });
}

// A CTA's rows and its ring: it takes rows first, first + stride, ... of its group (its
// i-th row row_of(i), its chunk of it chunk_of(i)); piece q of that sequence (row q /
// pieces) goes to stage q % RING, one bulk copy a full-size input (thread 0). start()
// sets up the stages' mbarriers and fetches the first RING pieces. Every thread of the
// CTA must call start().
struct RingFeed {
    const Args &a;
    unsigned char *ring;  // [stage][full input][kPieceBytes]
    uint64_t *full;       // [stage]
    int rank;
    int first, stride, rows, pieces;  // a CTA's rows and pieces (32-bit stage arithmetic)

    __device__ RingFeed(const Args &args, unsigned char *r, uint64_t *f)
        : a(args), ring(r), full(f), rank(int(blockIdx.x % kGroup)), first(blockIdx.x / kGroup),
          stride(gridDim.x / kGroup), rows(first < kO ? (kO - 1 - first) / stride + 1 : 0), pieces(rows * kPieces)
    {
    }
    __device__ int64_t row_of(int i) const { return first + int64_t(i) * stride; }
    __device__ int64_t chunk_of(int i) const
    {
        return row_of(i) * (kR / kVec) + int64_t(rank) * kThreads * kVecs;
    }
    __device__ void fetch(int q) const
    {
        const int s = int(q % kStages);
        const int64_t e0 = (chunk_of(q / kPieces) + (q % kPieces) * kPieceVecs) * kVec;
        Bar::arrive_and_expect_tx(&full[s], kStageBytes);
        for_inputs([&](auto ic) {
            constexpr int I = decltype(ic)::value;
            if constexpr (In<I>::kind == CGR_FULL)
                bulk_copy(static_cast<const T *>(a.in[I]) + e0, &full[s],
                          ring + s * kStageBytes + full_rank(I) * kPieceBytes, kPieceBytes);
        });
    }
    __device__ void start() const
    {
        if (threadIdx.x == 0) {
            for (int s = 0; s < kStages; ++s) Bar::init(&full[s], 1);
            cutlass::arch::fence_barrier_init();
        }
        __syncthreads();
        if (threadIdx.x == 0)
            for (int q = 0; q < kStages && q < pieces; ++q) fetch(q);
    }
};

// grid: persistent CTAs, groups of GROUP (all resident: a cooperative launch), group c
// taking rows c, c + groups, ...; dynamic shared memory: kRingSmem. With RING_AHEAD = D a
// CTA publishes row i + D's partials before it waits for row i's statistics, so that the
// exchange's latency hides behind a row's loads and arithmetic.
template <int Unused = 0>
__global__ void __launch_bounds__(kThreads, CGR_MIN_BLOCKS) rows_ring_kernel(const Args a)
{
    extern __shared__ __align__(128) unsigned char ring[];  // [stage][full input][kPieceBytes]
    __shared__ Acc red[kNs][kThreads / 32];
    __shared__ Acc fin[kNs];
    __shared__ alignas(8) uint64_t full[kStages];
    const RingFeed feed(a, ring, full);
    feed.start();
    const int rows = feed.rows, pieces = feed.pieces;
    auto row_of = [&](int i) { return feed.row_of(i); };
    auto chunk_of = [&](int i) { return feed.chunk_of(i); };
    auto fetch = [&](int q) { feed.fetch(q); };
    float sval[kNin > 0 ? kNin : 1];
    load_scalars(a, sval);
    float slots[kNsl];
    CUTE_UNROLL
    for (int s = 0; s < kNsl; ++s) slots[s] = 0.f;
    // pass L of the CTA's row i: its partial, and (groups) published
    auto stats = [&](auto lc, int i) {
        constexpr int L = decltype(lc)::value;
        Acc acc[kNs];
        ring_stats<L>(a, row_of(i), chunk_of(i), i * kPieces, ring, full, sval, slots, red, acc);
        if constexpr (CGR_LAB_COPY_ONLY) {
            (void)acc;
        } else if constexpr (kGroup > 1) {
            ring_publish<L>(a, i * kLevels + L, acc);
        } else {
            for_stats([&](auto kc) {
                constexpr int K = decltype(kc)::value;
                if constexpr (cgr_stat_level(K) == L) to_slots<K>(acc[K], slots);
            });
        }
    };
    auto collect = [&](auto lc, int i) {
        constexpr int L = decltype(lc)::value;
        if constexpr (kGroup > 1 && !CGR_LAB_COPY_ONLY) {
            Acc acc[kNs];
            ring_collect<L>(a, i * kLevels + L, acc, fin, slots);
        }
    };
    using L0 = std::integral_constant<int, 0>;
    using L1 = std::integral_constant<int, 1>;
    for (int i = 0; i < kAhead && i < rows; ++i) stats(L0{}, i);
    for (int i = 0; i < rows; ++i) {
        if (i + kAhead < rows)
            stats(L0{}, i + kAhead);
        collect(L0{}, i);
        if constexpr (kLevels > 1) {
            stats(L1{}, i);
            collect(L1{}, i);
        }
        const int64_t o = row_of(i), c0 = chunk_of(i);
        for (int p = 0; p < kPieces; ++p) {
            const int q = i * kPieces + p;
            unsigned char *st = ring + int(q % kStages) * kStageBytes;
            float bv[kNin > 0 ? kNin : 1][kVec];  // kPieceUniform: the piece's broadcast values
            if constexpr (kPieceUniform)
                load_bcast<true>(a, o, (c0 + int64_t(p) * kPieceVecs) * kVec - o * kR, 0, 0, kVec, bv);
            CUTE_UNROLL
            for (int k = 0; k < kVecs / kPieces; ++k) {
                const int j = int(threadIdx.x) + k * kThreads;
                const int64_t w = c0 + int64_t(p) * kPieceVecs + j;
                T raw[kNf][kVec];
                CUTE_UNROLL
                for (int f = 0; f < kNfull; ++f)
                    *reinterpret_cast<uint4 *>(raw[f]) = reinterpret_cast<const uint4 *>(st + f * kPieceBytes)[j];
                if constexpr (CGR_LAB_COPY_ONLY)
                    store16(a.out + w * kVec, *reinterpret_cast<const uint4 *>(raw[0]));
                else if constexpr (kRingStore)  // y in place of x, stored by one bulk copy
                    reinterpret_cast<uint4 *>(st)[j] = vec_result(a, o, w * kVec - o * kR, raw, sval, slots);
                else if constexpr (kPieceUniform)
                    store16(a.out + w * kVec, vec_result_of(raw, sval, bv, slots));
                else
                    write_vec(a, o, w, raw, sval, slots);
            }
            if constexpr (kRingStore)
                cutlass::arch::fence_view_async_shared();  // this thread's y visible to the bulk copy
            __syncthreads();  // the stage is read (and holds y): it takes the piece RING on
            if (threadIdx.x == 0) {
                if constexpr (kRingStore) {
                    cute::SM90_BULK_COPY_S2G::copy(st, a.out + (c0 + int64_t(p) * kPieceVecs) * kVec, kPieceBytes);
                    cute::tma_store_arrive();
                    if (q + kStages < pieces)
                        cute::tma_store_wait<0>();  // y has left the stage
                }
                if (q + kStages < pieces) {
                    cutlass::arch::fence_view_async_shared();
                    fetch(q + kStages);
                }
            }
        }
    }
    if constexpr (kRingStore)
        if (threadIdx.x == 0)
            cute::tma_store_wait<0>();  // shared memory stays until the bulk copies have read it
}

// The ring feeding registers (CGR_RING_REGS): as rows_ring_kernel, but each piece is
// copied into the threads' registers as its statistics are taken, and its stage refilled
// at once; the row waits for its group's statistics and is written from the registers. So
// the whole ring is always loading (RING pieces ahead), while the registers hold the rows
// being summed and written (1 + RING_AHEAD rows of kVecs vectors a thread).
template <int Unused = 0>
__global__ void __launch_bounds__(kThreads, CGR_MIN_BLOCKS) rows_ring_regs_kernel(const Args a)
{
    extern __shared__ __align__(128) unsigned char ring[];  // [stage][full input][kPieceBytes]
    __shared__ Acc red[kNs][kThreads / 32];
    __shared__ Acc fin[kNs];
    __shared__ alignas(8) uint64_t full[kStages];
    const RingFeed feed(a, ring, full);
    feed.start();
    const int rows = feed.rows, pieces = feed.pieces;
    auto row_of = [&](int i) { return feed.row_of(i); };
    auto chunk_of = [&](int i) { return feed.chunk_of(i); };
    auto fetch = [&](int q) { feed.fetch(q); };
    float sval[kNin > 0 ? kNin : 1];
    load_scalars(a, sval);
    float slots[kNsl];
    CUTE_UNROLL
    for (int s = 0; s < kNsl; ++s) slots[s] = 0.f;
    constexpr int kPer = kVecs / kPieces;  // vectors a thread a piece
    using Held = T[kVecs][kNf][kVec];
    Held held[kAhead + 1];
    auto vec_of = [&](int i, int k) {
        return chunk_of(i) + int64_t(k / kPer) * kPieceVecs + int(threadIdx.x) + (k % kPer) * kThreads;
    };
    // row i into h, piece by piece (each stage refilled as soon as it is read), its pass-0
    // partial taken on the way and published (groups)
    auto take = [&](int i, Held &h) {
        const int64_t o = row_of(i);
        Local loc[kNs];
        for_stats([&](auto kc) {
            constexpr int K = decltype(kc)::value;
            loc[K] = local_init<K>();
        });
        CUTE_UNROLL
        for (int p = 0; p < kPieces; ++p) {
            const int q = i * kPieces + p;
            const int s = int(q % kStages);
            Bar::wait(&full[s], uint32_t((q / kStages) & 1));
            const unsigned char *st = ring + s * kStageBytes;
            CUTE_UNROLL
            for (int k = 0; k < kPer; ++k)
                CUTE_UNROLL
                for (int f = 0; f < kNfull; ++f)
                    *reinterpret_cast<uint4 *>(h[p * kPer + k][f]) =
                        reinterpret_cast<const uint4 *>(st + f * kPieceBytes)[threadIdx.x + k * kThreads];
            __syncthreads();  // the stage is read: it takes the piece RING on
            if (threadIdx.x == 0 && q + kStages < pieces) {
                cutlass::arch::fence_view_async_shared();
                fetch(q + kStages);
            }
            CUTE_UNROLL
            for (int k = 0; k < kPer; ++k) add_vec<0>(a, o, vec_of(i, p * kPer + k), h[p * kPer + k], sval, slots, loc);
        }
        Acc acc[kNs];
        for_stats([&](auto kc) {
            constexpr int K = decltype(kc)::value;
            acc[K] = local_done<K>(loc[K]);
        });
        group_combine<0>(acc, red);
        if constexpr (kGroup > 1) {
            ring_publish<0>(a, i, acc);
        } else {
            for_stats([&](auto kc) {
                constexpr int K = decltype(kc)::value;
                to_slots<K>(acc[K], slots);
            });
        }
    };
    if constexpr (kAhead > 0)
        if (rows > 0)
            take(0, held[0]);
    for (int i = 0; i < rows; ++i) {
        Held &cur = held[0];
        if constexpr (kAhead > 0) {
            if (i + 1 < rows)
                take(i + 1, held[kAhead]);
        } else {
            take(i, cur);
        }
        if constexpr (kGroup > 1) {
            Acc acc[kNs];
            ring_collect<0>(a, i, acc, fin, slots);
        }
        const int64_t o = row_of(i);
        CUTE_UNROLL
        for (int k = 0; k < kVecs; ++k) write_vec(a, o, vec_of(i, k), cur[k], sval, slots);
        if constexpr (kAhead > 0)
            CUTE_UNROLL
            for (int k = 0; k < kVecs; ++k)
                CUTE_UNROLL
                for (int f = 0; f < kNfull; ++f)
                    *reinterpret_cast<uint4 *>(cur[k][f]) = *reinterpret_cast<const uint4 *>(held[kAhead][k][f]);
    }
}
#endif
#endif

// ------------------------------------------------------------------ COLS

// The full-size inputs' element at flat index e.
template <bool Stream> __device__ __forceinline__ void load_elem(const Args &a, int64_t e, T (&raw)[kNf])
{
    for_inputs([&](auto ic) {
        constexpr int I = decltype(ic)::value;
        constexpr int f = full_rank(I);
        if constexpr (In<I>::kind == CGR_FULL) {
            const T *p = static_cast<const T *>(a.in[I]) + e;
            if constexpr (Stream)
                raw[f] = cgr::ld(p);
            else
                raw[f] = *p;
        }
    });
}

// The expressions' arguments at (o, r, n) from the full-size inputs' elements.
__device__ __forceinline__ void col_x(const Args &a, int64_t o, int64_t r, int64_t n, const T (&raw)[kNf],
                                      const float *sval, const float *slots, float (&x)[kNx])
{
    for_inputs([&](auto ic) {
        constexpr int I = decltype(ic)::value;
        using E = typename In<I>::type;
        constexpr int f = full_rank(I);
        if constexpr (In<I>::kind == CGR_FULL)
            x[I] = cgr::to_f(raw[f]);
        else if constexpr (In<I>::kind == CGR_SCALAR)
            x[I] = sval[I];
        else if constexpr (In<I>::kind == CGR_BCAST)
            x[I] = cgr::to_f(__ldg(static_cast<const E *>(a.in[I]) + cgr_off(I, o, r, n)));
        else
            x[I] = 0.f;
    });
    CUTE_UNROLL
    for (int s = 0; s < kNslot; ++s) x[kNin + s] = slots[s];
}

template <int L>
__device__ __forceinline__ void col_add(const Args &a, int64_t o, int64_t r, int64_t n, const T (&raw)[kNf],
                                        const float *sval, const float *slots, Local (&loc)[kNs])
{
    float x[kNx];
    col_x(a, o, r, n, raw, sval, slots, x);
    for_stats([&](auto kc) {
        constexpr int K = decltype(kc)::value;
        if constexpr (cgr_stat_level(K) == L) local_add<K>(loc[K], cgr_pro(K, x));
    });
}

// Pass L of column (o, n) over r in [r0, r1), from registers or memory.
template <int L, bool Cached>
__device__ __forceinline__ void col_pass(const Args &a, int64_t o, int64_t n, int64_t r0, int64_t r1,
                                         const T (&cache)[kVecs > 0 ? kVecs : 1][kNf], const float *sval,
                                         const float *slots, Local (&loc)[kNs])
{
    for_stats([&](auto kc) {
        constexpr int K = decltype(kc)::value;
        loc[K] = local_init<K>();
    });
    if constexpr (Cached) {
        CUTE_UNROLL
        for (int r = 0; r < kVecs; ++r) col_add<L>(a, o, r, n, cache[r], sval, slots, loc);
    } else {
        const int64_t base = o * kR * kI + n;
#pragma unroll 4
        for (int64_t r = r0; r < r1; ++r) {
            T raw[kNf];
            load_elem<false>(a, base + r * kI, raw);
            col_add<L>(a, o, r, n, raw, sval, slots, loc);
        }
    }
}

// grid = (ceil(INNER / THREADS), min(OUTER, 65535)); a thread a column.
template <bool Cached>
__global__ void __launch_bounds__(kThreads) cols_kernel(const Args a)
{
    const int64_t n = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (n >= kI)
        return;
    float sval[kNin > 0 ? kNin : 1];
    load_scalars(a, sval);
    for (int64_t o = blockIdx.y; o < kO; o += gridDim.y) {
        const int64_t base = o * kR * kI + n;
        T cache[kVecs > 0 ? kVecs : 1][kNf];
        if constexpr (Cached) {
            CUTE_UNROLL
            for (int r = 0; r < kVecs; ++r) load_elem<true>(a, base + int64_t(r) * kI, cache[r]);
        }
        float slots[kNsl];
        CUTE_UNROLL
        for (int s = 0; s < kNsl; ++s) slots[s] = 0.f;
        Local loc[kNs];
        col_pass<0, Cached>(a, o, n, 0, kR, cache, sval, slots, loc);
        for_stats([&](auto kc) {
            constexpr int K = decltype(kc)::value;
            if constexpr (cgr_stat_level(K) == 0) to_slots<K>(local_done<K>(loc[K]), slots);
        });
        if constexpr (kLevels > 1) {
            col_pass<1, Cached>(a, o, n, 0, kR, cache, sval, slots, loc);
            for_stats([&](auto kc) {
                constexpr int K = decltype(kc)::value;
                if constexpr (cgr_stat_level(K) == 1) to_slots<K>(local_done<K>(loc[K]), slots);
            });
        }
        if constexpr (Cached) {
            CUTE_UNROLL
            for (int r = 0; r < kVecs; ++r) {
                float x[kNx];
                col_x(a, o, r, n, cache[r], sval, slots, x);
                cgr::st(a.out + base + int64_t(r) * kI, cgr::from_f<T>(cgr_epi(x)));
            }
        } else {
            for (int64_t r = 0; r < kR; ++r) {
                T raw[kNf];
                load_elem<true>(a, base + r * kI, raw);
                float x[kNx];
                col_x(a, o, r, n, raw, sval, slots, x);
                cgr::st(a.out + base + r * kI, cgr::from_f<T>(cgr_epi(x)));
            }
        }
    }
}

// ------------------------------------------------------------------ SPLIT

// Pass L's statistics of vectors [c0, c1) of row o, streamed, combined over the CTA into
// acc (group_combine's result). Every thread of the CTA must call it.
template <int L>
__device__ __forceinline__ void chunk_stats(const Args &a, int64_t o, int64_t c0, int64_t c1, const float *sval,
                                            const float *slots, Acc (&acc)[kNs], Acc (*red)[kThreads / 32])
{
    Local loc[kNs];
    for_stats([&](auto kc) {
        constexpr int K = decltype(kc)::value;
        loc[K] = local_init<K>();
    });
#pragma unroll 4
    for (int64_t w = c0 + threadIdx.x; w < c1; w += kThreads) {
        T raw[kNf][kVec];
        load_row_vec<false>(a, o, w, raw);
        add_vec<L>(a, o, w, raw, sval, slots, loc);
    }
    for_stats([&](auto kc) {
        constexpr int K = decltype(kc)::value;
        acc[K] = local_done<K>(loc[K]);
    });
    group_combine<L>(acc, red);
}

// Pass L's partial statistics of CTA s's share of a row (INNER == 1).
// grid = OUTER x SPLIT (row-major: blockIdx.x = o * SPLIT + s; SPLIT_REVERSE: s * OUTER + o).
template <int L>
__global__ void __launch_bounds__(kThreads) split_rows_stats(const Args a)
{
    __shared__ Acc red[kNs][kThreads / 32];
    const int64_t o = kReverse ? blockIdx.x % kO : blockIdx.x / kSplit;
    const int64_t s = kReverse ? blockIdx.x / kO : blockIdx.x % kSplit;
    const int64_t v0 = o * kR / kVec, v1 = (o * kR + kR + kVec - 1) / kVec;
    const int64_t chunk = (v1 - v0 + kSplit - 1) / kSplit;
    const int64_t c0 = v0 + s * chunk, c1 = c0 + chunk < v1 ? c0 + chunk : v1;
    float sval[kNin > 0 ? kNin : 1];
    load_scalars(a, sval);
    float slots[kNsl];
    CUTE_UNROLL
    for (int q = 0; q < kNsl; ++q) slots[q] = L > 0 ? a.slots[o * kNslot + q] : 0.f;
    static_assert(kMode != SPLIT || kI > 1 || kRowThreads == kThreads, "split rows: the CTA shares a chunk");
    Acc acc[kNs];
    chunk_stats<L>(a, o, c0, c1, sval, slots, acc, red);
    if (threadIdx.x == 0)
        for_stats([&](auto kc) {
            constexpr int K = decltype(kc)::value;
            if constexpr (cgr_stat_level(K) == L) a.part[(o * kSplit + s) * kNstat + K] = acc[K];
        });
}

// Pass L's partial statistics of columns over CTA s's share of r (INNER > 1).
// grid = (ceil(INNER / THREADS), min(OUTER, 65535), SPLIT).
template <int L>
__global__ void __launch_bounds__(kThreads) split_cols_stats(const Args a)
{
    const int64_t n = int64_t(blockIdx.x) * kThreads + threadIdx.x;
    if (n >= kI)
        return;
    const int64_t chunk = (kR + kSplit - 1) / kSplit, s = blockIdx.z;
    const int64_t r0 = s * chunk, r1 = r0 + chunk < kR ? r0 + chunk : kR;
    float sval[kNin > 0 ? kNin : 1];
    load_scalars(a, sval);
    const T unused[kVecs > 0 ? kVecs : 1][kNf] = {};
    for (int64_t o = blockIdx.y; o < kO; o += gridDim.y) {
        const int64_t row = o * kI + n;
        float slots[kNsl];
        CUTE_UNROLL
        for (int q = 0; q < kNsl; ++q) slots[q] = L > 0 ? a.slots[row * kNslot + q] : 0.f;
        Local loc[kNs];
        col_pass<L, false>(a, o, n, r0, r1, unused, sval, slots, loc);
        for_stats([&](auto kc) {
            constexpr int K = decltype(kc)::value;
            if constexpr (cgr_stat_level(K) == L) a.part[(row * kSplit + s) * kNstat + K] = local_done<K>(loc[K]);
        });
    }
}

// Pass L: a warp per row (o * INNER + n) combines its SPLIT partials into the slots.
template <int L>
__global__ void __launch_bounds__(kThreads) split_finish(const Args a)
{
    const int64_t row = int64_t(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= kO * kI)
        return;  // whole warps leave together
    Acc acc[kNs];
    for_stats([&](auto kc) {
        constexpr int K = decltype(kc)::value;
        if constexpr (cgr_stat_level(K) == L) {
            Acc v = acc_identity<K>();
            for (int64_t s = lane; s < kSplit; s += 32) v = combine<K>(v, a.part[(row * kSplit + s) * kNstat + K]);
            acc[K] = v;
        }
    });
    warp_combine<L>(acc);
    if (lane == 0)
        for_stats([&](auto kc) {
            constexpr int K = decltype(kc)::value;
            if constexpr (cgr_stat_level(K) == L) to_slots<K>(acc[K], a.slots + row * kNslot);
        });
}

// The output vectors first, first + THREADS, ... (UNROLL of them, those before end) of
// row o: all loads first (bytes in flight), then the writes.
__device__ __forceinline__ void write_vecs(const Args &a, int64_t o, int64_t first, int64_t end, const float *sval,
                                           const float *slots)
{
    T raw[kUnroll][kNf][kVec];
    CUTE_UNROLL
    for (int u = 0; u < kUnroll; ++u) {
        const int64_t w = first + int64_t(u) * kThreads;
        if (w < end)
            load_row_vec<kLagHints ? 2 : 1>(a, o, w, raw[u]);
    }
    CUTE_UNROLL
    for (int u = 0; u < kUnroll; ++u) {
        const int64_t w = first + int64_t(u) * kThreads;
        if (w < end)
            write_vec(a, o, w, raw[u], sval, slots);
    }
}

// The output, rows (INNER == 1; also the pointwise pass, one row of everything):
// CTA (o, c) writes vectors [c * THREADS * UNROLL, ...) of row o; blockIdx.x = c * OUTER + o,
// so the CTAs of all rows that share a broadcast input's chunk run together.
template <int Unused = 0>
__global__ void __launch_bounds__(kThreads) apply_rows(const Args a)
{
    constexpr int64_t kChunks = (kMaxRowVecs + int64_t(kThreads) * kUnroll - 1) / (int64_t(kThreads) * kUnroll);
    const int64_t o = blockIdx.x % kO, c = kReverse && kMode == SPLIT ? kChunks - 1 - blockIdx.x / kO : blockIdx.x / kO;
    const int64_t v0 = o * kR / kVec, v1 = (o * kR + kR + kVec - 1) / kVec;
    float sval[kNin > 0 ? kNin : 1];
    load_scalars(a, sval);
    float slots[kNsl];
    CUTE_UNROLL
    for (int q = 0; q < kNsl; ++q) {
        if constexpr (kNslot > 0)
            slots[q] = a.slots[o * kNslot + q];
        else
            slots[q] = 0.f;
    }
    write_vecs(a, o, v0 + c * int64_t(kThreads) * kUnroll + threadIdx.x, v1, sval, slots);
}

// The output, columns (INNER > 1): element by element, grid-stride.
template <int Unused = 0>
__global__ void __launch_bounds__(kThreads) apply_cols(const Args a)
{
    float sval[kNin > 0 ? kNin : 1];
    load_scalars(a, sval);
    const int64_t total = kO * kR * kI;
    for (int64_t e = int64_t(blockIdx.x) * kThreads + threadIdx.x; e < total; e += int64_t(gridDim.x) * kThreads) {
        const int64_t n = e % kI, t = e / kI, r = t % kR, o = t / kR;
        float slots[kNsl];
        CUTE_UNROLL
        for (int q = 0; q < kNsl; ++q) slots[q] = a.slots[(o * kI + n) * kNslot + q];
        T raw[kNf];
        load_elem<true>(a, e, raw);
        float x[kNx];
        col_x(a, o, r, n, raw, sval, slots, x);
        cgr::st(a.out + e, cgr::from_f<T>(cgr_epi(x)));
    }
}


// ------------------------------------------------------------------ HOLD

using Chunk = T[kVecs > 0 ? kVecs : 1][kNf][kVec];  // the vectors a thread holds of a chunk

// The vectors [c0, c1) of row o that chunk t (of the row's kSplit, in ticket order) covers.
__device__ __forceinline__ void hold_span(unsigned long long t, int64_t &o, int64_t &c, int64_t &c0, int64_t &c1)
{
    o = int64_t(t / kSplit);
    c = int64_t(t % kSplit);
    const int64_t v0 = o * kR / kVec, v1 = (o * kR + kR + kVec - 1) / kVec;
    c0 = v0 + c * kHoldChunk;
    c1 = c0 + kHoldChunk < v1 ? c0 + kHoldChunk : v1;
}

template <int Stream = 1>
__device__ __forceinline__ void hold_load(const Args &a, int64_t o, int64_t c0, int64_t c1, Chunk &buf)
{
    CUTE_UNROLL
    for (int k = 0; k < kVecs; ++k) {
        const int64_t w = c0 + int64_t(k) * kThreads + threadIdx.x;
        if (w < c1)
            load_row_vec<Stream>(a, o, w, buf[k]);
    }
}

__device__ __forceinline__ void hold_write(const Args &a, int64_t o, int64_t c0, int64_t c1, const Chunk &buf,
                                           const float *sval, const float *slots)
{
    CUTE_UNROLL
    for (int k = 0; k < kVecs; ++k) {
        const int64_t w = c0 + int64_t(k) * kThreads + threadIdx.x;
        if (w < c1)
            write_vec(a, o, w, buf[k], sval, slots);
    }
}

template <int L>
__device__ __forceinline__ void combine_row(const Args &a, int64_t o, Acc (&acc)[kNs], Acc (*red)[kThreads / 32]);

// SPLIT_FUSED, pass L: the partial statistics of chunk s of row o ([c0, c1) vectors),
// published; then, once all kSplit of the row are (bounded wait: a wrong result rather
// than a hang), the row's statistics into slots. Every thread of the CTA must call it.
template <int L>
__device__ __forceinline__ void fused_pass(const Args &a, int64_t o, int64_t s, int64_t c0, int64_t c1,
                                           const float *sval, float *slots, Acc (*red)[kThreads / 32])
{
    Acc acc[kNs];
    chunk_stats<L>(a, o, c0, c1, sval, slots, acc, red);
    if (threadIdx.x == 0) {
        for_stats([&](auto kc) {
            constexpr int K = decltype(kc)::value;
            if constexpr (cgr_stat_level(K) == L) a.part[(o * kSplit + s) * kNstat + K] = acc[K];
        });
        __threadfence();
        atomicAdd(&a.count[L * kO + o], 1u);
        const volatile unsigned *n = &a.count[L * kO + o];
        unsigned spins = 0;
        while (*n < unsigned(kSplit) && ++spins < (1u << 26))
            __nanosleep(64);
        __threadfence();
    }
    __syncthreads();
    combine_row<L>(a, o, acc, red);
    for_stats([&](auto kc) {
        constexpr int K = decltype(kc)::value;
        if constexpr (cgr_stat_level(K) == L) to_slots<K>(acc[K], slots);
    });
}

// SPLIT_FUSED: CTA (o, s), blockIdx.x = o * SPLIT + s. No deadlock: a CTA waits only for
// its own row's CTAs, all dispatched before any CTA of a later row, and a row's SPLIT CTAs
// fit the GPU at once (checked at launch against the occupancy the runtime reports).
template <int Unused = 0>
__global__ void __launch_bounds__(kThreads, CGR_MIN_BLOCKS) split_fused_rows(const Args a)
{
    __shared__ Acc red[kNs][kThreads / 32];
    const int64_t o = blockIdx.x / kSplit, s = blockIdx.x % kSplit;
    const int64_t v0 = o * kR / kVec, v1 = (o * kR + kR + kVec - 1) / kVec;
    const int64_t chunk = (v1 - v0 + kSplit - 1) / kSplit;
    const int64_t c0 = v0 + s * chunk, c1 = c0 + chunk < v1 ? c0 + chunk : v1;
    float sval[kNin > 0 ? kNin : 1];
    load_scalars(a, sval);
    float slots[kNsl];
    CUTE_UNROLL
    for (int q = 0; q < kNsl; ++q) slots[q] = 0.f;
    fused_pass<0>(a, o, s, c0, c1, sval, slots, red);
    if constexpr (kLevels > 1) {
        __syncthreads();  // red is used again
        fused_pass<1>(a, o, s, c0, c1, sval, slots, red);
    }
    for (int64_t w0 = c0 + threadIdx.x; w0 < c1; w0 += int64_t(kThreads) * kUnroll)
        write_vecs(a, o, w0, c1, sval, slots);
}

// Row o's pass-L statistics from all kSplit published partials, in one fixed order (so
// every CTA that does it gets the same values). Every thread of the CTA must call it.
template <int L>
__device__ __forceinline__ void combine_row(const Args &a, int64_t o, Acc (&acc)[kNs], Acc (*red)[kThreads / 32])
{
    for_stats([&](auto kc) {
        constexpr int K = decltype(kc)::value;
        if constexpr (cgr_stat_level(K) == L) {
            Acc v = acc_identity<K>();
            for (int64_t s = threadIdx.x; s < kSplit; s += kThreads)
                v = combine<K>(v, __ldcg(&a.part[(o * kSplit + s) * kNstat + K]));
            acc[K] = v;
        }
    });
    group_combine<L>(acc, red);
}

// Pass L's statistics of the held chunk c of row o, combined over the CTA and published to
// the workspace; the row's last chunk to arrive combines all kSplit partials into the row's
// slots and marks the row ready (with kDirect it only publishes: the waiters combine).
// Every thread of the CTA must call it.
template <int L>
__device__ __forceinline__ void hold_publish(const Args &a, int64_t o, int64_t c, int64_t c0, int64_t c1,
                                             const Chunk &buf, const float *sval, const float *slots,
                                             Acc (*red)[kThreads / 32], int &last)
{
    Local loc[kNs];
    for_stats([&](auto kc) {
        constexpr int K = decltype(kc)::value;
        loc[K] = local_init<K>();
    });
    CUTE_UNROLL
    for (int k = 0; k < kVecs; ++k) {
        const int64_t w = c0 + int64_t(k) * kThreads + threadIdx.x;
        if (w < c1)
            add_vec<L>(a, o, w, buf[k], sval, slots, loc);
    }
    Acc acc[kNs];
    for_stats([&](auto kc) {
        constexpr int K = decltype(kc)::value;
        acc[K] = local_done<K>(loc[K]);
    });
    group_combine<L>(acc, red);
    if (threadIdx.x == 0) {
        for_stats([&](auto kc) {
            constexpr int K = decltype(kc)::value;
            if constexpr (cgr_stat_level(K) == L) a.part[(o * kSplit + c) * kNstat + K] = acc[K];
        });
        __threadfence();
        if constexpr (kDirect)
            atomicAdd(&a.count[L * kO + o], 1u);  // the result unused: a reduction, no round trip
        else
            last = atomicAdd(&a.count[L * kO + o], 1u) == unsigned(kSplit - 1);
    }
    if constexpr (kDirect)
        return;  // the waiters combine the partials (hold_wait)
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    combine_row<L>(a, o, acc, red);
    if (threadIdx.x == 0) {
        for_stats([&](auto kc) {
            constexpr int K = decltype(kc)::value;
            if constexpr (cgr_stat_level(K) == L) to_slots<K>(acc[K], a.slots + o * kNslot);
        });
        __threadfence();
        atomicExch(&a.ready[L * kO + o], 1u);
    }
}

// Waits until row o's pass-L statistics are ready (bounded: a wrong result rather than a
// hang), then reads its slots. With kDirect, waits until all kSplit partials are published
// and combines them itself (every CTA of the row in the same order, so the same values):
// one hop shorter than the last CTA combining and flagging the row. Every thread of the
// CTA must call it.
template <int L>
__device__ __forceinline__ void hold_wait(const Args &a, int64_t o, float *slots, Acc (*red)[kThreads / 32])
{
    if (threadIdx.x == 0) {
        const volatile unsigned *flag = static_cast<volatile unsigned *>(kDirect ? &a.count[L * kO + o] : &a.ready[L * kO + o]);
        const unsigned want = kDirect ? unsigned(kSplit) : 1u;
        unsigned spins = 0;
        while (*flag < want && ++spins < (1u << 26))
            __nanosleep(128);
        __threadfence();
    }
    __syncthreads();
    if constexpr (kDirect) {
        Acc acc[kNs];
        combine_row<L>(a, o, acc, red);
        for_stats([&](auto kc) {
            constexpr int K = decltype(kc)::value;
            if constexpr (cgr_stat_level(K) == L) to_slots<K>(acc[K], slots);
        });
    } else {
        CUTE_UNROLL
        for (int q = 0; q < kNslot; ++q) slots[q] = __ldcg(a.slots + o * kNslot + q);
    }
}

// One chunk of a row: grid = OUTER x SPLIT CTAs, each taking the next chunk in order.
template <int Unused = 0>
__global__ void __launch_bounds__(kThreads, kHoldMinBlocks) hold_kernel(const Args a)
{
    __shared__ Acc red[kNs][kThreads / 32];
    __shared__ unsigned long long tile;
    __shared__ int last;
    if (threadIdx.x == 0)
        tile = atomicAdd(a.ticket, 1ull);
    __syncthreads();
    int64_t o, c, c0, c1;
    hold_span(tile, o, c, c0, c1);
    float sval[kNin > 0 ? kNin : 1];
    load_scalars(a, sval);
    float slots[kNsl];
    CUTE_UNROLL
    for (int q = 0; q < kNsl; ++q) slots[q] = 0.f;
    Chunk cache;
    hold_load(a, o, c0, c1, cache);
    hold_publish<0>(a, o, c, c0, c1, cache, sval, slots, red, last);
    hold_wait<0>(a, o, slots, red);
    if constexpr (kLevels > 1) {
        hold_publish<1>(a, o, c, c0, c1, cache, sval, slots, red, last);
        hold_wait<1>(a, o, slots, red);
    }
    hold_write(a, o, c0, c1, cache, sval, slots);
}

// Persistent HOLD (one pass of statistics): a CTA loops over chunks, holding two. It takes,
// loads and publishes its next chunk before it waits for its current chunk's row, so the
// next loads are in flight while the row completes. No deadlock while a row's kSplit chunks
// fit twice the CTAs running at once (checked at launch): a CTA
// waits only once both chunks it holds are published; if every running CTA waited, the
// chunks handed out and not written would be exactly the 2G held ones, all published and
// all from the earliest unfinished row on, so that row (at most kSplit <= 2G chunks, all
// handed out in ticket order) would be complete.
template <int Unused = 0>
__global__ void __launch_bounds__(kThreads, kHoldMinBlocks) hold_persist_kernel(const Args a)
{
    __shared__ Acc red[kNs][kThreads / 32];
    __shared__ unsigned long long tiles[2];
    __shared__ int last;
    constexpr unsigned long long kTotal = (unsigned long long)(kO * kSplit);
    float sval[kNin > 0 ? kNin : 1];
    load_scalars(a, sval);
    float slots[kNsl];
    CUTE_UNROLL
    for (int q = 0; q < kNsl; ++q) slots[q] = 0.f;
    Chunk buf_a, buf_b;
    // takes the next ticket; when there is a chunk for it, loads and publishes it
    auto take = [&](int slot, Chunk &buf) {
        if (threadIdx.x == 0)
            tiles[slot] = atomicAdd(a.ticket, 1ull);
        __syncthreads();
        const unsigned long long t = tiles[slot];
        if (t < kTotal) {
            int64_t o, c, c0, c1;
            hold_span(t, o, c, c0, c1);
            hold_load<kLagHints ? 2 : 1>(a, o, c0, c1, buf);
            hold_publish<0>(a, o, c, c0, c1, buf, sval, slots, red, last);
        }
        return t;
    };
    // kEarly: the next chunk's loads issued, then the current chunk written, then the next
    // chunk summed and published (before the wait when both are of one row). No deadlock:
    // a chunk left unpublished during a wait is of a later row than the one waited for.
    auto step_early = [&](unsigned long long t, Chunk &cur, Chunk &nxt, int slot) {
        if (threadIdx.x == 0)
            tiles[slot] = atomicAdd(a.ticket, 1ull);
        __syncthreads();
        const unsigned long long next = tiles[slot];
        int64_t o, c, c0, c1, no = -1, nc = 0, n0 = 0, n1 = 0;
        hold_span(t, o, c, c0, c1);
        if (next < kTotal) {
            hold_span(next, no, nc, n0, n1);
            hold_load<kLagHints ? 2 : 1>(a, no, n0, n1, nxt);
            if (no == o)
                hold_publish<0>(a, no, nc, n0, n1, nxt, sval, slots, red, last);
        }
        float row_slots[kNsl];
        hold_wait<0>(a, o, row_slots, red);
        hold_write(a, o, c0, c1, cur, sval, row_slots);
        if (next < kTotal && no != o)  // (red is free: group_combine ends on a barrier)
            hold_publish<0>(a, no, nc, n0, n1, nxt, sval, slots, red, last);
        return next;
    };
    // the next chunk taken into nxt, then the current chunk t (in cur) written once its row is ready
    auto step = [&](unsigned long long t, Chunk &cur, Chunk &nxt, int slot) {
        if constexpr (kEarly)
            return step_early(t, cur, nxt, slot);
        const unsigned long long next = take(slot, nxt);
        int64_t o, c, c0, c1;
        hold_span(t, o, c, c0, c1);
        float row_slots[kNsl];
        hold_wait<0>(a, o, row_slots, red);
        hold_write(a, o, c0, c1, cur, sval, row_slots);
        return next;
    };
    unsigned long long t = take(0, buf_a);
    while (t < kTotal) {
        t = step(t, buf_a, buf_b, 1);
        if (t >= kTotal)
            break;
        t = step(t, buf_b, buf_a, 0);
    }
}

// HOLD_LAG: persistent CTAs over tasks t = 0 .. OUTER * SPLIT + lag - 1 in ticket order.
// Task t publishes the statistics of chunk t (while t < OUTER * SPLIT) and writes chunk
// t - lag. Its loads of both chunks go out first; the written row's statistics are read
// while they are in flight; a CTA takes its next ticket as it starts a task. The lag
// (set at launch) is at least LAG rows and at least a row plus twice the CTAs: the
// tickets held at once (a task and the next, a CTA) span at most twice the CTAs, so the
// written chunk's row was complete before any held ticket was handed out, and its flag
// is set: nothing waits. H200 (docs/perf.md, lab round 18): a lag of LAG rows alone, as
// short as one row, made every task wait for rows still in flight (GroupNorm 12.9 ms,
// InstanceNorm 80 ms, against 4.95 and 4.02 for the forms before).
template <int Unused = 0>
__global__ void __launch_bounds__(kThreads, kHoldMinBlocks) hold_lag_kernel(const Args a)
{
    __shared__ Acc red[kNs][kThreads / 32];
    __shared__ unsigned long long tiles[2];
    __shared__ int last;
    constexpr unsigned long long kStats = (unsigned long long)(kO * kSplit);
    const unsigned long long lag = (unsigned long long)a.lag;
    float sval[kNin > 0 ? kNin : 1];
    load_scalars(a, sval);
    float none[kNsl];
    CUTE_UNROLL
    for (int q = 0; q < kNsl; ++q) none[q] = 0.f;
    Chunk in, back;
    if (threadIdx.x == 0)
        tiles[0] = atomicAdd(a.ticket, 1ull);
    __syncthreads();
    for (int parity = 0;; parity ^= 1) {
        const unsigned long long t = tiles[parity];
        if (t >= kStats + lag)
            break;
        unsigned long long next = 0;
        if (threadIdx.x == 0)
            next = atomicAdd(a.ticket, 1ull);  // used at the end of the task: its latency hidden
        int64_t o, c, c0, c1, bo, bc, b0, b1;
        const bool stats = t < kStats, write = t >= lag;
        if (stats) {
            hold_span(t, o, c, c0, c1);
            hold_load(a, o, c0, c1, in);
        }
        float slots[kNsl];
        if (write) {
            hold_span(t - lag, bo, bc, b0, b1);
            hold_load<kLagHints ? 2 : 1>(a, bo, b0, b1, back);
            hold_wait<0>(a, bo, slots, red);  // no deadlock: that row's chunks were all handed out before t
        }
        if (stats)
            hold_publish<0>(a, o, c, c0, c1, in, sval, none, red, last);
        if (write)
            hold_write(a, bo, b0, b1, back, sval, slots);
        if (threadIdx.x == 0)
            tiles[parity ^ 1] = next;  // tiles[parity] was read by all before the last barrier
        __syncthreads();
    }
}

// ------------------------------------------------------------------ host

static const int kInNdim[] = CGR_IN_NDIMS;
static const int64_t kInShape[][CG_MAX_DIMS] = CGR_IN_SHAPES;
static const int64_t kInStride[][CG_MAX_DIMS] = CGR_IN_STRIDES;
static const int64_t kOutShape[] = CGR_OUT_SHAPE;

constexpr int64_t kStatRows = kO * kI;
// workspace (split, hold, groups): partials, then slots, then (hold, groups) the counters,
// zeroed each call. Groups: at most kMaxGroups (the GPU's resident CTAs / GROUP is fewer).
constexpr int64_t kMaxGroups = kGroup > 1 ? (kO < 4096 / kGroup ? kO : (4096 / kGroup > 0 ? 4096 / kGroup : 1)) : 0;
constexpr bool kUsesWs = kMode == SPLIT || kMode == HOLD || kGroup > 1;
constexpr size_t kPartBytes = kGroup > 1 ? size_t(kMaxGroups) * kRingBufs * kNstat * kGroup * sizeof(Acc)
                              : kUsesWs  ? size_t(kStatRows) * kSplit * kNstat * sizeof(Acc)
                                         : 0;
constexpr size_t kSlotOffset = (kPartBytes + 255) / 256 * 256;
constexpr size_t kCountOffset = (kSlotOffset + size_t(kStatRows) * kNslot * sizeof(float) + 255) / 256 * 256;
constexpr size_t kCountBytes = kMode == HOLD || kFused ? 8 + 2 * size_t(kLevels) * kO * sizeof(unsigned)
                               : kGroup > 1 ? 8 + size_t(kMaxGroups) * kRingBufs * sizeof(unsigned)
                                            : 0;
constexpr size_t kWorkspace = kUsesWs ? kCountOffset + kCountBytes : 0;
constexpr int64_t kApplyChunk = int64_t(kThreads) * kUnroll;  // vectors per CTA of the apply pass
constexpr int64_t kApplyCtas = kO * ((kMaxRowVecs + kApplyChunk - 1) / kApplyChunk);
constexpr int64_t kColCtasAll = (kO * kR * kI + kThreads - 1) / kThreads;
constexpr unsigned kColCtas = unsigned(kColCtasAll < (1 << 20) ? kColCtasAll : (1 << 20));  // grid-stride

template <int L> static void launch_split_stats(const Args &a, cudaStream_t stream)
{
    if constexpr (kI == 1) {
        split_rows_stats<L><<<unsigned(kO * kSplit), kThreads, 0, stream>>>(a);
    } else {
        const unsigned gy = unsigned(kO < 65535 ? kO : 65535);
        split_cols_stats<L><<<dim3(unsigned((kI + kThreads - 1) / kThreads), gy, kSplit), kThreads, 0, stream>>>(a);
    }
    split_finish<L><<<unsigned((kStatRows + kThreads / 32 - 1) / (kThreads / 32)), kThreads, 0, stream>>>(a);
}


// The kernels of mode M (a template, so that the other modes' kernels are not compiled).
template <int M> static int launch(const Args &a, cudaStream_t stream)
{
    if constexpr (M == POINTWISE) {
        if (kApplyCtas > 0x7fffffff)
            return CG_UNSUPPORTED;
        apply_rows<><<<unsigned(kApplyCtas), kThreads, 0, stream>>>(a);
    } else if constexpr (M == ROWS && kPrefetch && CGR_RING > 0) {
#if CGR_ROWS_PREFETCH && CGR_RING > 0
        // every CTA of a group resident at once (as in the groups below)
        static int resident = 0;
        constexpr auto kernel = kRingRegs ? rows_ring_regs_kernel<> : rows_ring_kernel<>;
        if (resident == 0 && (resident = cgr::resident_ctas(kernel, kThreads, kRingSmem)) < 0) {
            resident = 0;
            return CG_LAUNCH_FAILED;
        }
        int64_t groups = resident / kGroup;
        groups = groups < kO ? groups : kO;
        if constexpr (kGroup > 1)
            groups = groups < kMaxGroups ? groups : kMaxGroups;
        if (groups < 1)
            return CG_UNSUPPORTED;
        if constexpr (kGroup > 1)
            if (cudaMemsetAsync(a.ticket, 0, kCountBytes, stream) != cudaSuccess)
                return CG_LAUNCH_FAILED;
        if (int rc = cgr::launch_cooperative(kernel, dim3(unsigned(groups * kGroup)), kThreads, kRingSmem,
                                             stream, a))
            return rc;
#endif
    } else if constexpr (M == ROWS && kPrefetch && kGroup > 1) {
#if CGR_ROWS_PREFETCH
        // every CTA of a group resident at once: as many groups as the GPU holds, launched
        // cooperatively (which fails, rather than deadlocks, when they do not fit)
        static int resident = 0;
        if (resident == 0 && (resident = cgr::resident_ctas(rows_prefetch_kernel<>, kThreads, kPrefetchSmem)) < 0) {
            resident = 0;
            return CG_LAUNCH_FAILED;
        }
        int64_t groups = resident / kGroup;
        groups = groups < kMaxGroups ? groups : kMaxGroups;
        if (groups < 1)
            return CG_UNSUPPORTED;  // a row's group does not fit the GPU at once
        if (cudaMemsetAsync(a.ticket, 0, kCountBytes, stream) != cudaSuccess)
            return CG_LAUNCH_FAILED;
        if (int rc = cgr::launch_cooperative(rows_prefetch_kernel<>, dim3(unsigned(groups * kGroup)), kThreads,
                                             kPrefetchSmem, stream, a))
            return rc;
#endif
    } else if constexpr (M == ROWS && kPrefetch) {
#if CGR_ROWS_PREFETCH
        const int clusters = cgr::persistent_clusters(rows_prefetch_kernel<>, kThreads, kCluster, kPrefetchSmem, kO);
        if (clusters < 1)
            return CG_LAUNCH_FAILED;
        if (int rc = cgr::launch_cluster(rows_prefetch_kernel<>, dim3(unsigned(clusters * kCluster)), kThreads,
                                         kCluster, kPrefetchSmem, stream, a))
            return rc;
#endif
    } else if constexpr (M == ROWS) {
        const int64_t ctas = kCluster > 1 ? kO * kCluster : (kO + kRowsPerCta - 1) / kRowsPerCta;
        if (ctas > 0x7fffffff)
            return CG_UNSUPPORTED;
        if constexpr (kCluster > 8) {
            if (int rc = cgr::launch_cluster(rows_kernel<(kVecs > 0)>, dim3(unsigned(ctas)), kThreads, kCluster, 0,
                                             stream, a))
                return rc;
        } else {
            rows_kernel<(kVecs > 0)><<<unsigned(ctas), kThreads, 0, stream>>>(a);
        }
    } else if constexpr (M == COLS) {
        const int64_t gx = (kI + kThreads - 1) / kThreads;
        if (gx > 0x7fffffff)
            return CG_UNSUPPORTED;
        cols_kernel<(kVecs > 0)><<<dim3(unsigned(gx), unsigned(kO < 65535 ? kO : 65535)), kThreads, 0, stream>>>(a);
    } else if constexpr (M == HOLD) {
        // a row's chunks must fit the CTAs the GPU runs at once (twice them, persistent)
        static int resident = 0;
        if (resident == 0) {
            if constexpr (kPersist)
                resident = cgr::resident_ctas(hold_persist_kernel<>, kThreads, 0);
            else if constexpr (kLag > 0)
                resident = cgr::resident_ctas(hold_lag_kernel<>, kThreads, 0);
            else
                resident = cgr::resident_ctas(hold_kernel<>, kThreads, 0);
            if (resident < 0) {
                resident = 0;
                return CG_LAUNCH_FAILED;
            }
        }
        if (resident == 0 || (kLag == 0 && kSplit > int64_t(resident) * (kPersist ? 2 : 1)) ||
            (kO + kLag) * kSplit + 2 * int64_t(resident) > 0x7fffffff)
            return CG_UNSUPPORTED;
        if (cudaMemsetAsync(a.ticket, 0, kCountBytes, stream) != cudaSuccess)
            return CG_LAUNCH_FAILED;
        const unsigned grid = unsigned(kO * kSplit < resident ? kO * kSplit : resident);
        if constexpr (kPersist)
            hold_persist_kernel<><<<grid, kThreads, 0, stream>>>(a);
        else if constexpr (kLag > 0) {
            Args b = a;
            b.lag = int64_t(kLag) * kSplit > kSplit + 2 * int64_t(grid) ? int64_t(kLag) * kSplit : kSplit + 2 * int64_t(grid);
            hold_lag_kernel<><<<grid, kThreads, 0, stream>>>(b);
        }
        else
            hold_kernel<><<<unsigned(kO * kSplit), kThreads, 0, stream>>>(a);
    } else if constexpr (kFused) {
        static int resident = 0;  // a row's CTAs must fit the GPU at once
        if (resident == 0 && (resident = cgr::resident_ctas(split_fused_rows<>, kThreads, 0)) < 0) {
            resident = 0;
            return CG_LAUNCH_FAILED;
        }
        if (resident == 0 || kSplit > int64_t(resident) || kO * kSplit > 0x7fffffff)
            return CG_UNSUPPORTED;
        if (cudaMemsetAsync(a.ticket, 0, kCountBytes, stream) != cudaSuccess)
            return CG_LAUNCH_FAILED;
        split_fused_rows<><<<unsigned(kO * kSplit), kThreads, 0, stream>>>(a);
    } else {
        if (kO * kSplit > 0x7fffffff || (kI + kThreads - 1) / kThreads > 0x7fffffff || kApplyCtas > 0x7fffffff)
            return CG_UNSUPPORTED;
        launch_split_stats<0>(a, stream);
        if constexpr (kLevels > 1)
            launch_split_stats<1>(a, stream);
        if constexpr (kI == 1)
            apply_rows<><<<unsigned(kApplyCtas), kThreads, 0, stream>>>(a);
        else
            apply_cols<><<<kColCtas, kThreads, 0, stream>>>(a);
    }
    return cudaGetLastError() == cudaSuccess ? CG_OK : CG_LAUNCH_FAILED;
}

}  // namespace cgr_norm

CG_EXPORT size_t cg_workspace_bytes(const cg_tensor *inputs, int n_inputs)
{
    (void)inputs; (void)n_inputs;
    return cgr_norm::kWorkspace;
}

CG_EXPORT int cg_forward(const cg_tensor *in, int n_in, cg_tensor *out, int n_out,
                         void *workspace, size_t workspace_bytes, cudaStream_t stream)
{
    using namespace cgr_norm;
    if (n_in != kNin || n_out != 1)
        return CG_UNSUPPORTED;
    const cg_tensor &y = out[0];
    if (!cgr::output_fits(y, CGR_OUT_DTYPE, CGR_OUT_NDIM, kOutShape))
        return CG_UNSUPPORTED;
    Args a{};
    a.out = static_cast<T *>(y.data);
    bool aligned = (reinterpret_cast<uintptr_t>(y.data) % 16) == 0;
    bool ok = true;
    auto check = [&](int i, int kind, int dtype, int access) {
        a.in[i] = in[i].data;
        if (!cgr::input_fits(in[i], kind, dtype, kInNdim[i], kInShape[i], &aligned)) {
            ok = false;
        } else if (kind == CGR_BCAST) {
            // the offsets were computed from the spec's strides: they must be these
            for (int d = 0; d < kInNdim[i]; ++d)
                if (kInShape[i][d] != 1 && in[i].stride[d] != kInStride[i][d])
                    ok = false;
            if (access == VECTOR && reinterpret_cast<uintptr_t>(in[i].data) % 16)
                aligned = false;
        }
    };
#define CGR_CHECK_IN(i, ctype, k, dt) check(i, k, dt, cgr_access(i));
    CGR_INPUTS(CGR_CHECK_IN)
#undef CGR_CHECK_IN
    if (!ok || !aligned)
        return CG_UNSUPPORTED;  // the ABI promises 256-byte aligned tensors
    if constexpr (kWorkspace > 0) {
        if (workspace == nullptr || workspace_bytes < cg_workspace_bytes(in, n_in))
            return CG_BAD_WORKSPACE;
        a.part = static_cast<float4 *>(workspace);
        a.slots = reinterpret_cast<float *>(static_cast<char *>(workspace) + kSlotOffset);
        a.ticket = reinterpret_cast<unsigned long long *>(static_cast<char *>(workspace) + kCountOffset);
        a.count = reinterpret_cast<unsigned *>(a.ticket + 1);
        a.ready = kMode == HOLD ? a.count + kLevels * kO : nullptr;
    }
    if (kO * kR * kI == 0)
        return CG_UNSUPPORTED;  // empty reductions: leave them to PyTorch's conventions
    return launch<kMode>(a, stream);
}
