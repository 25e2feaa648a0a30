#!/usr/bin/env bash
# bench/prebuild.sh: builds, here (no GPU needed), the recipe variants a GPU sweep will ask
# for, into a build cache that travels with the call, so that the GPU host's time goes to
# judging rather than compiling (the 12-05 03:26 sweep reached 23 of its 62 problems in
# 540 s, its 16 cores compiling the variants of staged plans; one such file takes ~60 s).
#   bench/prebuild.sh LIST [VARIANTS]
# LIST: a sweep list (bench/sweeps/*.txt: "level2/11_" a line or several a line); VARIANTS
# (default 2): the first N of each problem's `cutegen recipe --list`, as `cutegen bench
# --variants N` takes them. Specs come from SPECS (default: the newest dump in bench/results,
# extracted into .deps/specs); the cache is CACHE (default .deps/cache), built for ARCH
# (default sm_90a) with JOBS (default: the cores) builds at once, then this list's builds
# (PACK=all: every build in the cache) packed into TARBALL (default .deps/cache.tar.gz): carry that; bench/gpu_session.sh unpacks it and points
# CUTEGEN_CACHE_DIR at it. The cache's key holds the source, nvcc's and CUTLASS's versions,
# the arch, the flags and abi.h's digest, not paths (src/build.c), so it hits on the GPU host
# when its toolkit is the same (nvcc 13.0.88 and CUTLASS 4.2.0 on the H200 host, 2026-12).
# A problem whose spec is not in the dump, or that the generator does not cover, is said
# and skipped.
set -uo pipefail
cd "$(dirname "$0")/.."
list=${1:?usage: bench/prebuild.sh LIST [VARIANTS]}
nv=${2:-2}
CG=${CG:-build/cutegen}
CACHE=${CACHE:-.deps/cache}
ARCH=${ARCH:-sm_90a}
JOBS=${JOBS:-$(nproc)}
[ -x "$CG" ] || { echo "prebuild: $CG is missing: build the project first (scripts/setup.sh)" >&2; exit 2; }
[ -f "$list" ] || { echo "prebuild: no list '$list' (bench/sweeps/*.txt are lists)" >&2; exit 2; }
if [ -z "${SPECS:-}" ]; then
  tarball=$(ls bench/results/*-specs.tar.gz | sort | tail -1)
  SPECS=.deps/specs/specs
  [ -d "$SPECS/level1" ] || { mkdir -p .deps/specs && tar xzf "$tarball" -C .deps/specs; }
fi
W=$(mktemp -d /tmp/prebuild.XXXXXX)
trap 'rm -rf "$W"' EXIT
n=0
for t in $(grep -v '^#' "$list"); do
  spec=$(ls "$SPECS"/${t%%/*}/${t##*/}*.json 2>/dev/null | head -1)
  [ -n "$spec" ] || { echo "prebuild: $t: no spec in $SPECS"; continue; }
  name=$(basename "$spec" .json)
  for ((v = 0; v < nv; v++)); do
    if "$CG" recipe --spec "$spec" --variant "$v" --out "$W/${t%%/*}-$name.v$v.cu" >"$W/err" 2>&1; then
      n=$((n + 1))
    else
      echo "prebuild: $t variant $v: $(head -1 "$W/err")"
      break
    fi
  done
done
[ "$n" -gt 0 ] || { echo "prebuild: nothing to build from $list" >&2; exit 1; }
echo "prebuild: $n kernels from $list, $JOBS at a time into $CACHE ($ARCH)"
t0=$(date +%s)
CUTEGEN_CACHE_DIR=$CACHE "$CG" build --jobs "$JOBS" --arch "$ARCH" --json -q "$W"/*.cu >"$W/builds.jsonl" 2>"$W/builds.err"
python3 - "$W/builds.jsonl" "$W/hashes" <<'PY'
import json, sys
ok = bad = cached = 0
hashes = open(sys.argv[2], "w")
for line in open(sys.argv[1]):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if r.get("status") == "ok":
        ok += 1
        cached += bool(r.get("cached"))
        print(r["hash"], file=hashes)
    else:
        bad += 1
        print("  FAILED %s: %s" % (r.get("kernel", "?").split("/")[-1], r.get("status")))
print("prebuild: %d built (%d were cached already), %d failed" % (ok, cached, bad))
PY
# the tarball: this list's builds only (PACK=all: the whole cache), so that it stays well
# under the device tool's 64 MiB a call as the cache grows over sessions
if [ "${PACK:-list}" = all ]; then
  tar czf "${TARBALL:-.deps/cache.tar.gz}" -C "$CACHE" builds
else
  sed 's|^|builds/|' "$W/hashes" | tar czf "${TARBALL:-.deps/cache.tar.gz}" -C "$CACHE" -T -
fi
echo "prebuild: $(( $(date +%s) - t0 )) s; cache $(du -sh "$CACHE" | cut -f1), ${TARBALL:-.deps/cache.tar.gz} $(du -sh "${TARBALL:-.deps/cache.tar.gz}" | cut -f1) (carry it)"
