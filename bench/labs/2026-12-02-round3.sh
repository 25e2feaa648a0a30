#!/usr/bin/env bash
# bench/labs/2026-12-02-round3.sh: the builds of variant lab round 3 (docs/perf.md,
# 2026-12-02 21:08 UTC), for the record and to rerun. Needs task specs (SPECS, default
# /work/kb-specs: tests/gpu/dump_specs.py writes them) and writes OUT (default
# .deps/lab3): a folder a problem for `LAB=OUT tests/gpu/evidence.sh lab`.
# The generator has changed since: variant numbers refer to the lists of commit f010567.
set -uo pipefail
cd "$(dirname "$0")/../.."
SPECS=${SPECS:-/work/kb-specs} OUT=${OUT:-.deps/lab3}
STCS='s|\*reinterpret_cast<float2 \*>(C + int64_t(m0) \* kN + n0) = r;|__stcs(reinterpret_cast<float2 *>(C + int64_t(m0) * kN + n0), r);|'
VECS0='s/^#define CGR_VECS \(16\|17\|9\)$/#define CGR_VECS 0/'
FAST='s|return v \* beta > threshold ? v : log1pf(expf(v \* beta)) / beta;|const float z = v * beta; return z > threshold ? v : (fmaxf(z, 0.f) + __logf(1.f + __expf(-fabsf(z)))) / beta;|'
LB='s/__launch_bounds__(kThreads, 1) rows_kernel/__launch_bounds__(kThreads, 2) rows_kernel/'
NP='s|^        rows_kernel<(kVecs > 0)><<<|        if (kCluster > 8) cudaFuncSetAttribute(rows_kernel<(kVecs > 0)>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);\n        rows_kernel<(kVecs > 0)><<<|'
b() { # PROBLEM VARIANT NAME [EDIT...]
  local p=$1 v=$2 name=$3; shift 3
  local d=$OUT/p$p; mkdir -p "$d"; echo "level1/$p" >"$d/task"
  bench/lab_build.sh "$d" "$(ls "$SPECS"/level1/${p}_*.json)" "$v" "$name" "$@" >/dev/null || echo "FAILED $p $name"
}
for v in 0 2 3 4 7; do b 9 $v v$v; done; b 9 2 v2-stcs "$STCS"; b 9 4 v4-stcs "$STCS"
for v in 0 2 4 7; do b 7 $v v$v; done; b 7 4 v4-stcs "$STCS"
for v in 0 1 2 3 4; do b 34 $v v$v; done; b 34 0 v0-vecs0 "$VECS0"
b 34 0 z-c16 's/^#define CGR_CLUSTER 8$/#define CGR_CLUSTER 16/' 's/^#define CGR_THREADS 512$/#define CGR_THREADS 256/' \
  's/^#define CGR_ROW_THREADS 512$/#define CGR_ROW_THREADS 256/' "$LB" "$NP"
b 34 0 z-c16b 's/^#define CGR_CLUSTER 8$/#define CGR_CLUSTER 16/' 's/^#define CGR_VECS 16$/#define CGR_VECS 8/' "$LB" "$NP"
for v in 0 1 2; do b 35 $v v$v; done
for p in 38 39; do
  for v in 0 1 2 3; do b $p $v v$v; done; b $p 0 v0-vecs0 "$VECS0"; b $p 1 v1-vecs0 "$VECS0"
  b $p 2 z-c4m2 "$LB"
  b $p 2 z-c8m2 's/^#define CGR_CLUSTER 4$/#define CGR_CLUSTER 8/' 's/^#define CGR_VECS 17$/#define CGR_VECS 9/' "$LB"
done
b 38 4 v4
for v in 0 1 2; do b 40 $v v$v; done
b 29 0 v0; b 29 0 v0-fast "$FAST"; b 29 1 v1-fast "$FAST"
for v in 0 1 2 3 4 5 6; do b 45 $v v$v; b 46 $v v$v; done
for v in 0 6 7; do b 43 $v v$v; done
