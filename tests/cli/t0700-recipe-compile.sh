#!/usr/bin/env bash
# cutegen recipe: every variant of every covered fixture in tests/data/recipe/, and both
# templates on their own, compile with nvcc for sm_90a with the real build flags
# (docs/abi.md), two compilers at once (and the persistent held-chunk norm with the
# CGR_HOLD_DIRECT and CGR_HOLD_EARLY lab options, a norm cluster of 16 CTAs, softmax's prefetching clusters,
# LayerNorm's persistent held chunks and the CGR_SPLIT_REVERSE lab option); one reduction, one pointwise, two norm, one
# tensor-core GEMM, one conv, one transposed conv, two pooling kernels and a staged plan (a conv,
# then a pool) also compile for sm_80 (the SM80-class path). Staged plans: a conv and a pool, two
# GEMMs, a conv and a norm. Norm and transposed-conv fixtures that repeat another one's kernel path are built only
# with CUTEGEN_RECIPE_VARIANTS=all. GEMM fixtures: by default a sample of different
# structure (each takes ~30 s). Needs nvcc and CUTLASS; skips, saying so,
# without them. By default only variant 0 of each fixture is compiled (a few minutes);
# CUTEGEN_RECIPE_VARIANTS=all compiles every variant of every fixture, each whole (many times
# the default's builds).
#
# Host and device, or the device alone: nvcc's host pass (cudafe++ and gcc over CuTe's
# headers) takes two thirds of a kernel's build (nvcc --time: 17.5 s of matmul's, the device
# alone 5.8), and a fixture's host code differs from its template's only through the
# generator's #defines. So each template on its own, the first fixture generated from each
# template (or pair of templates), the A100 choices and the lab forms marked `full` build
# whole (`-shared`, the worker's flags); the other fixtures build their device code alone
# (`-cubin`: cicc and ptxas, every device error). CUTEGEN_RECIPE_VARIANTS=all builds all whole.
# The slowest builds are listed at the end.
. "$(dirname "$0")/lib.sh"

nvcc=$(command -v nvcc || ls "${CUDA_HOME:-/nonexistent}/bin/nvcc" /usr/local/cuda/bin/nvcc 2>/dev/null | head -1)
[ -n "$nvcc" ] || skip "nvcc not found (CUDA_HOME, PATH, /usr/local/cuda): the recipe builds need it"
need_cutlass

mkdir -p "$TMP/gen" "$TMP/log" "$TMP/fail"
# one job a line: ARCH SOURCE EXTRA_INCLUDE MODE (full: host and device; dev: device code alone)
jobs="$TMP/jobs"
: >"$jobs"
echo "90a $SRC/recipes/pointwise.cu $SRC/recipes full" >>"$jobs"
echo "90a $SRC/recipes/reduce.cu $SRC/recipes full" >>"$jobs"
echo "90a $SRC/recipes/softmax_cluster.cu $SRC/recipes full" >>"$jobs"
echo "90a $SRC/recipes/norm.cu $SRC/recipes full" >>"$jobs"
echo "90a $SRC/recipes/gemm_tc.cu $SRC/recipes full" >>"$jobs"
echo "90a $SRC/recipes/gemm_wgmma.cu $SRC/recipes full" >>"$jobs"
echo "90a $SRC/recipes/gemm_stream.cu $SRC/recipes full" >>"$jobs"
echo "90a $SRC/recipes/gemm_gemv.cu $SRC/recipes full" >>"$jobs"
echo "90a $SRC/recipes/conv_tc.cu $SRC/recipes full" >>"$jobs"
echo "90a $SRC/recipes/conv_dw.cu $SRC/recipes full" >>"$jobs"
echo "90a $SRC/recipes/conv_direct.cu $SRC/recipes full" >>"$jobs"
echo "90a $SRC/recipes/conv_mean.cu $SRC/recipes full" >>"$jobs"
echo "90a $SRC/recipes/pool.cu $SRC/recipes full" >>"$jobs"
echo "90a $SRC/recipes/rowloss.cu $SRC/recipes full" >>"$jobs"
echo "90a $SRC/recipes/scan.cu $SRC/recipes full" >>"$jobs"

covered=0
seen_from=   # the "from recipes/..." of the fixtures built whole so far
# GEMM fixtures built by default: each operand layout, 4-byte copies, batches, split-K,
# triu, matrix-vector, epilogues reading every kind of input, row reductions, GroupNorm,
# a reduced value broadcast back over the output (the sum-of-rows kernel)
gemm_sample="matmul matmul_irregular matmul_tab bmm_tb_method matmul_large_k triu_matmul matvec
linear_residual l2_matmul_add_swish_tanh_gelu_hardtanh kb_l2_22_lse_mish kb_l2_99_gelu_softmax
l2_gemm_groupnorm_hardtanh l2_matmul_swish_sum_groupnorm kb_l2_51_sub_avg_lse_gelu_res"
gemm_sample=$(echo $gemm_sample)
for spec in "$SRC"/tests/data/recipe/*.json; do
  name=$(basename "$spec" .json)
  case $name in small_*) continue ;; esac   # tiny fixtures for the CPU checks: same kernels
  # norm and transposed-conv fixtures whose kernels repeat another's code path: only with
  # CUTEGEN_RECIPE_VARIANTS=all
  case " batchnorm1d broadcast_back mean_center normalize_fn standardize_std groupnorm_relu instancenorm_affine l1norm convt_1d_stride_opad convt_l1_64_1d convt_l1_81_stride5 convt_promote_phases sdpa_scale_kw convt_l1_72_grouped convt_cout128_sub_tanh " in
    *" $name "*) [ "${CUTEGEN_RECIPE_VARIANTS:-first}" = first ] && continue ;;
  esac
  "$CUTEGEN" recipe --spec "$spec" --list >"$TMP/plan" 2>&1
  rc=$?
  [ $rc -eq 1 ] && continue   # not covered: tests/unit/test_recipe.c checks the reason
  tests=$((tests + 1))
  if [ $rc -ne 0 ]; then
    echo "FAIL: recipe --list $name: exit $rc"; cat "$TMP/plan"; failures=$((failures + 1)); continue
  fi
  covered=$((covered + 1))
  n=$(grep -c '^variant ' "$TMP/plan")
  [ "${CUTEGEN_RECIPE_VARIANTS:-first}" = first ] && n=1
  # GEMM kernels take ~30 s each: by default only those of different structure; staged
  # plans (two kernels each, ~45 s) a convolution and a pool, two GEMMs
  if [ "${CUTEGEN_RECIPE_VARIANTS:-first}" = first ] && head -1 "$TMP/plan" | grep -q '^family: staged'; then
    case " staged_l2_35_conv_maxpool staged_l2_45_two_gemms " in *" $name "*) ;; *) continue;; esac
  elif [ "${CUTEGEN_RECIPE_VARIANTS:-first}" = first ] && grep -q '^family: gemm' "$TMP/plan"; then
    case " $gemm_sample " in *" $name "*) ;; *) continue;; esac
  fi
  for k in $(seq 0 $((n - 1))); do
    out="$TMP/gen/$name.v$k.cu"
    if ! "$CUTEGEN" recipe --spec "$spec" --variant "$k" --out "$out" >/dev/null 2>"$TMP/err"; then
      echo "FAIL: generate $name variant $k"; cat "$TMP/err"; failures=$((failures + 1)); continue
    fi
    from=$(grep -m 1 '^// Generated by' "$out" | sed 's/.* from //')
    build=dev
    case $seen_from in *"|$from|"*) ;; *) build=full; seen_from="$seen_from|$from|" ;; esac
    echo "90a $out - $build" >>"$jobs"
  done
done
echo "ok: $covered covered fixtures generated"
# the SM80-class path (recipe_variants offers cluster kernels only on sm_90: these are not)
cp "$TMP/gen/logsoftmax_module_fp16.v0.cu" "$TMP/gen/logsoftmax_module_fp16.sm80.cu"
cp "$TMP/gen/chain_bcast.v0.cu" "$TMP/gen/chain_bcast.sm80.cu"
cp "$TMP/gen/triplet_margin.v0.cu" "$TMP/gen/triplet_margin.sm80.cu"
cp "$TMP/gen/cumsum_masked.v0.cu" "$TMP/gen/cumsum_masked.sm80.cu"
echo "80 $TMP/gen/logsoftmax_module_fp16.sm80.cu - dev" >>"$jobs"
echo "80 $TMP/gen/chain_bcast.sm80.cu - dev" >>"$jobs"
echo "80 $TMP/gen/triplet_margin.sm80.cu - dev" >>"$jobs"
echo "80 $TMP/gen/cumsum_masked.sm80.cu - dev" >>"$jobs"
# the generator's own first choice for an A100 (`--gpu a100`: the SM80-class paths), for sm_80
# (a staged plan too: the norm's bulk-copy headers are hoisted out of their #if there)
for f in groupnorm softmax staged_l2_35_conv_maxpool; do
  if ! "$CUTEGEN" recipe --spec "$SRC/tests/data/recipe/$f.json" --gpu a100 --out "$TMP/gen/$f.a100.cu" \
       >/dev/null 2>"$TMP/err"; then
    echo "FAIL: generate $f for an A100"; cat "$TMP/err"; failures=$((failures + 1)); continue
  fi
  echo "80 $TMP/gen/$f.a100.cu - full" >>"$jobs"
done
# norms: the first variant without a cluster or bulk copies (InstanceNorm's rows are held by CTAs that
# take chunks in order instead) and a split kernel (LayerNorm)
for nk in instancenorm layernorm; do
  k=$("$CUTEGEN" recipe --spec "$SRC/tests/data/recipe/$nk.json" --list | grep '^variant ' | grep -v -e cluster= -e prefetch | head -1 | sed 's/^variant \([0-9]*\):.*/\1/')
  if [ -z "$k" ] || ! "$CUTEGEN" recipe --spec "$SRC/tests/data/recipe/$nk.json" --variant "$k" --out "$TMP/gen/$nk.sm80.cu" >/dev/null 2>&1; then
    echo "FAIL: no sm_80 variant of $nk"; failures=$((failures + 1)); continue
  fi
  echo "80 $TMP/gen/$nk.sm80.cu - dev" >>"$jobs"
done
# extra NAME FIXTURE PATTERN [EDIT...]: builds for sm_90a (the device code alone; whole
# when called as `mode=full extra ...`: forms whose host code differs), as NAME, the first variant of
# FIXTURE whose `--list` line matches PATTERN, each EDIT applied ("s/.../.../" a sed
# expression on it, anything else a #define put in front of it): the code paths that no
# fixture's variant 0 reaches
extra() {
  local name=$1 f=$2 pat=$3 k e; shift 3
  k=$("$CUTEGEN" recipe --spec "$SRC/tests/data/recipe/$f.json" --list | grep "^variant [0-9]*: .*$pat" | head -1 |
      sed 's/^variant \([0-9]*\):.*/\1/')
  if [ -z "$k" ] || ! "$CUTEGEN" recipe --spec "$SRC/tests/data/recipe/$f.json" --variant "$k" \
       --out "$TMP/gen/$name.tmp" >/dev/null 2>&1; then
    echo "FAIL: $f lists no variant matching '$pat'"; failures=$((failures + 1)); return
  fi
  for e in "$@"; do
    case $e in s/*)
      cp "$TMP/gen/$name.tmp" "$TMP/gen/$name.before"
      sed -i -e "$e" "$TMP/gen/$name.tmp"
      if cmp -s "$TMP/gen/$name.tmp" "$TMP/gen/$name.before"; then  # the form it names would not be built
        echo "FAIL: $name: the edit '$e' changed nothing in $f's variant $k (the generator no longer writes the line it edits: update the edit)"; failures=$((failures + 1)); return
      fi ;;
    esac
  done
  { for e in "$@"; do case $e in s/*) ;; *) echo "#define $e" ;; esac; done; cat "$TMP/gen/$name.tmp"; } \
    >"$TMP/gen/$name.cu"
  echo "90a $TMP/gen/$name.cu - ${mode:-dev}" >>"$jobs"
}
# the WGMMA GEMM (recipes/gemm_wgmma.cu), its operands split first in 3xFP16 (the form
# offered first): A M-major with 4-byte loads (irregular sizes), a triangular product, both
# operands K-major (a Linear); the same split in 3xTF32; the in-kernel split (a lab form
# since round 52) with A M-major, with its raw ring of cp.async copies (round 33) and with
# two producer warpgroups (round 37); one scale an operand (a max pass first: the form
# before session 25's tile scales), with the split a thread a 16-byte chunk (round 52's, a
# lab form since the slabs; tile scales always split by slabs) and with irregular sizes;
# and with B multicast to clusters of two (CGR_MULTICAST 2); and tile scales with each tile
# read again for its split (CGR_TILE_HOLD 0). 3xTF32 has no scales.
onescale='s/^#define CGR_TILE_SCALE 1$/#define CGR_TILE_SCALE 0/;s/^#define CGR_TILE_HOLD 1$/#define CGR_TILE_HOLD 0/'
tf32="s/^#define CGR_PREC 2\$/#define CGR_PREC 0/;$onescale"
insplit='s/^#define CGR_PRESPLIT 1$/#define CGR_PRESPLIT 0/'
extra linear_wgmma l2_gemm_add_relu 'gemm wgmma 3xf16'
extra matmul_ta_wgmma kb_l1_16_matmul_ta 'gemm wgmma 3xf16'
extra matmul_irregular_wgmma matmul_irregular 'gemm wgmma 3xf16'
extra triu_matmul_wgmma triu_matmul 'gemm wgmma 3xf16'
extra matmul_ta_wgmma_tf32 kb_l1_16_matmul_ta 'gemm wgmma 3xf16' "$tf32"
mode=full extra matmul_ta_wgmma_insplit kb_l1_16_matmul_ta 'gemm wgmma 3xf16' "$tf32" "$insplit"
extra matmul_wgmma_raw3 matmul 'gemm wgmma 3xf16' "$tf32" "$insplit" 's/^#define CGR_STAGES 3$/#define CGR_STAGES 2/' "CGR_RAW_STAGES 3"
mode=full extra matmul_wgmma_2prod matmul 'gemm wgmma 3xf16' "$tf32" "$insplit" "CGR_PRODUCERS 2"
extra matmul_ta_wgmma_chunk kb_l1_16_matmul_ta 'gemm wgmma 3xf16' "$onescale" "CGR_PRESPLIT_SLAB 0"
extra matmul_irregular_wgmma_onescale matmul_irregular 'gemm wgmma 3xf16' "$onescale"
mode=full extra matmul_wgmma_multicast matmul 'gemm wgmma 3xf16' "CGR_MULTICAST 2"
# tile scales with each tile read twice, the max then the split (CGR_TILE_HOLD 0, the default
# before lab round 54): A along k, B along its rows
extra matmul_wgmma_reread matmul 'gemm wgmma 3xf16' 's/^#define CGR_TILE_HOLD 1$/#define CGR_TILE_HOLD 0/'
# a staged plan of a convolution and a norm (recipe_stage.c): the norm's template in a namespace
mode=full extra staged_conv_instnorm conv/l2_17_Conv2d_InstanceNorm_Divide 'stage 0 variant 0, stage 1 variant 0'
# a mean or sum over some dims folded into x and the weight (recipes/conv_fold.cuh) before
# each convolution kernel: the direct one, the WGMMA one channels-last, the mma.sync tile
mode=full extra prefold_direct conv-prefold/pf2d_sum_h 'conv direct'
mode=full extra prefold_wgmma conv-prefold/pf3d_depth_mean 'conv wgmma flipped'
mode=full extra prefold_tile conv-prefold/pf3d_grouped_hw 'conv tile=128x16x32'
# the held-chunk kernel's lab option (every CTA of a row combines its partials itself,
# bench/labs/2026-12-03-round9.sh) on GroupNorm's persistent variant
extra groupnorm_persist_direct groupnorm persistent "CGR_HOLD_DIRECT 1"
# its next chunk's loads in flight while the current one is written, with the L2 hints
# (weights evict-last, x's last read and y evict-first; lab round 49)
extra groupnorm_persist_early groupnorm persistent "CGR_HOLD_EARLY 1" "CGR_LAG_HINTS 1"
# the ring's lab options (bench/labs/2026-12-04-round2[2-6].sh, round31.sh) on GroupNorm's
# ring: groups of 128 publishing a row ahead, storing y by bulk copies, exchanging by a
# fence and an add (the exchange before round 31); the ring feeding registers
extra groupnorm_ring_ahead_store groupnorm 'ring=6x4' 's/^#define CGR_GROUP 64$/#define CGR_GROUP 128/' \
  's/^#define CGR_VECS 16$/#define CGR_VECS 8/' 's/^#define CGR_RING_PIECES 4$/#define CGR_RING_PIECES 2/' \
  "CGR_RING_AHEAD 1" "CGR_RING_STORE 1" "CGR_RING_RELACQ 0"
extra groupnorm_ring_regs groupnorm 'ring=6x4' "CGR_RING_REGS 1"
# a norm cluster of 16 CTAs (not portable: launched through cgr::launch_cluster; lab
# round 10, bench/labs/2026-12-03-round10.sh) from InstanceNorm's cluster of 8
mode=full extra instancenorm_cluster16 instancenorm 'threads=512 cluster=8 vecs=16$' 's/^#define CGR_CLUSTER 8$/#define CGR_CLUSTER 16/' \
  's/^#define CGR_VECS 16$/#define CGR_VECS 8/' 's/^#define CGR_MIN_BLOCKS 1$/#define CGR_MIN_BLOCKS 2/'
# the split norm's lab option (statistics position by position, the output in reverse;
# bench/labs/2026-12-03-round14.sh) on LayerNorm's split form
extra layernorm_split_reverse layernorm 'unroll=4 row_threads=256 split=64' "CGR_SPLIT_REVERSE 1"
# the split norm fused into one kernel (CGR_SPLIT_FUSED, lab round 17,
# bench/labs/2026-12-03-round17.sh) on LayerNorm's split form
mode=full extra layernorm_split_fused layernorm 'unroll=4 row_threads=256 split=64' "CGR_SPLIT_FUSED 1"
# precision: variant 0 of the GEMM fixtures is 3xFP16 (the main loop a lambda run again in
# 3xTF32); the 3xTF32 main loop as the plain block, and the convolution in 3xFP16 (a lab
# option: it spills, lab rounds 42-44)
extra matmul_3xtf32 matmul 'gemm 3xtf32 tile=128x128x32'
extra conv2d_3xf16 conv2d_relu_biasadd 'conv tile' 's/^#define CGR_PREC 0$/#define CGR_PREC 2/'
# 2xFP16 (CGR_PREC 3: B split, A rounded; lab round 51) in the convolution and the GEMM
extra conv2d_2xf16 conv2d_relu_biasadd 'conv channels-last.*3xf16' 's/^#define CGR_PREC 2$/#define CGR_PREC 3/'
extra matmul_2xf16 matmul 'gemm 3xf16 tile=128x128x32' 's/^#define CGR_PREC 2$/#define CGR_PREC 3/'
# the convolution on Hopper's warpgroup MMAs (variant 0 of conv2d_relu_biasadd and of the
# stride-1 transposed convt_l1_57_2d on an H200) in its lab forms (bench/labs/2026-12-06-round5[56].sh):
# a CTA a tile with x's largest |x| from a pass first (round 55's v0); x split with scale 1,
# the epilogue through shared memory, the k-blocks past K skipped and the gather through L1
# (round 57's); 64-row tiles at 2 stages and 2 CTAs an SM; and with a partial a k-tile
# (CGR_PROMOTE 1: K past 2048)
mode=full extra conv2d_wgmma_tile_amax conv2d_relu_biasadd 'conv wgmma' "CGR_CONV_PERSIST 0" "CGR_CONV_XSCALE 1"
extra conv2d_wgmma_xscale0_epi conv2d_relu_biasadd 'conv wgmma' "CGR_CONV_XSCALE 0" "CGR_CONV_EPI_SMEM 1" \
  "CGR_CONV_KSKIP 1" "CGR_CONV_GATHER_CA 1"
extra conv2d_wgmma_bm64_promote conv2d_relu_biasadd 'conv wgmma' 's/^#define CGR_BM 128$/#define CGR_BM 64/' \
  's/^#define CGR_WM 2$/#define CGR_WM 1/' 's/^#define CGR_STAGES 3$/#define CGR_STAGES 2/' \
  's/^#define CGR_MINB 1$/#define CGR_MINB 2/' 's/^#define CGR_PROMOTE 0$/#define CGR_PROMOTE 1/'
# a k-tile's WGMMAs in flight while the previous k-tile's complete (CGR_CONV_MMA_INFLIGHT 1,
# bench/labs/2026-12-07-round71.sh), in the sub-pixel phases of a strided transposed one, with
# the persistent walk unrotated (CGR_CONV_ROTATE 0: the default in phases rotates it since lab
# round 75): two forms off the generated path in one build
extra convt_phases_wgmma_inflight convt_l1_77_3d 'conv wgmma' "CGR_CONV_MMA_INFLIGHT 1" "CGR_CONV_ROTATE 0"
# (there the generator's form pairs the width phases of a box in one CTA, CGR_CONV_PAIR_W 1);
# the width phases in neighbouring CTAs instead, the form before lab round 72
extra convt_phases_wgmma_unpaired convt_l1_77_3d 'conv wgmma' 's/^#define CGR_CONV_PAIR_W 1$/#define CGR_CONV_PAIR_W 0/'
# the convolution's mma.sync channels-last form (CGR_NHWC); its NCHW gather
extra conv2d_nchw conv2d_relu_biasadd 'conv tile'
# a stride-1 transposed convolution: its variant 0 is the flipped convolution channels-last
# (CGR_FLIP); its transposed form (the division gather at stride 1) second
extra convt_stride1_gather convt_l1_57_2d 'conv tile=256x64'
# its plain TF32 copy: of the flipped form too (second where the steps after it average
# its errors, src/recipe_stage.c tf32_second)
extra convt_flipped_tf32 convt_l1_57_2d 'conv flipped channels-last .* tf32 min'
# variants after variant 0: softmax's persistent prefetching cluster (bulk copies,
# mbarrier), LayerNorm's persistent held chunks
mode=full extra softmax_prefetch softmax prefetch
mode=full extra layernorm_persistent layernorm persistent
# the tensor-core GEMM (mma.sync, cp.async, ldmatrix) for sm_80 too
cp "$TMP/gen/matmul_tab.v0.cu" "$TMP/gen/matmul_tab.sm80.cu"
echo "80 $TMP/gen/matmul_tab.sm80.cu - dev" >>"$jobs"
# the convolution (recipes/conv_tc.cu, an implicit GEMM on the tensor cores) on sm_80 too:
# an A100's first variant (an H200's is the WGMMA one)
if "$CUTEGEN" recipe --spec "$SRC/tests/data/recipe/conv2d_relu_biasadd.json" --gpu a100 \
     --out "$TMP/gen/conv2d_relu_biasadd.sm80.cu" >/dev/null 2>"$TMP/err"; then
  echo "80 $TMP/gen/conv2d_relu_biasadd.sm80.cu - full" >>"$jobs"
else
  echo "FAIL: generate conv2d_relu_biasadd for an A100"; cat "$TMP/err"; failures=$((failures + 1))
fi
# and the strided transposed convolution (CGR_TRANSPOSED, CGR_PHASES: the phases' gather,
# the weight copy), an A100's first variant (an H200's is the WGMMA one in phases)
if "$CUTEGEN" recipe --spec "$SRC/tests/data/recipe/convt_l2_5_sub_tanh.json" --gpu a100 \
     --out "$TMP/gen/convt_l2_5_sub_tanh.sm80.cu" >/dev/null 2>"$TMP/err"; then
  echo "80 $TMP/gen/convt_l2_5_sub_tanh.sm80.cu - full" >>"$jobs"
else
  echo "FAIL: generate convt_l2_5_sub_tanh for an A100"; cat "$TMP/err"; failures=$((failures + 1))
fi
# pooling: a staged 3-D fp16 kernel with prologue and epilogue, and a direct bf16 one
cp "$TMP/gen/pool_pro_epi_fp16.v0.cu" "$TMP/gen/pool_pro_epi_fp16.sm80.cu"
cp "$TMP/gen/pool_epi_bf16.v0.cu" "$TMP/gen/pool_epi_bf16.sm80.cu"
echo "80 $TMP/gen/pool_pro_epi_fp16.sm80.cu - dev" >>"$jobs"
echo "80 $TMP/gen/pool_epi_bf16.sm80.cu - dev" >>"$jobs"

cat >"$TMP/compile.sh" <<EOS
#!/usr/bin/env bash
arch=\$1 src=\$2 inc=\$3 mode=\$4
[ "${CUTEGEN_RECIPE_VARIANTS:-first}" = first ] || mode=full   # every variant: every build whole
name=\$(basename "\$src" .cu).\$arch
extra=()
[ "\$inc" != - ] && extra=(-I "\$inc")
if [ "\$mode" = full ]; then out=(-Xcompiler -fPIC -shared -cudart shared -o "$TMP/log/\$name.so")
else out=(-cubin -o "$TMP/log/\$name.cubin"); fi
start=\$(date +%s)
if ! "$nvcc" -std=c++17 -O3 -gencode=arch=compute_\$arch,code=sm_\$arch --expt-relaxed-constexpr \\
     -I "$SRC/include" -I "$cutlass" "\${extra[@]}" -include cutegen/abi.h \\
     "\${out[@]}" "\$src" >"$TMP/log/\$name.log" 2>&1; then
  touch "$TMP/fail/\$name"
fi
echo "\$(( \$(date +%s) - start )) \$mode \$name" >>"$TMP/times"
rm -f "$TMP/log/\$name.so" "$TMP/log/\$name.cubin"
EOS
total=$(wc -l <"$jobs")
echo "compiling $total kernels ($(grep -c ' full$' "$jobs") host and device, the rest the device code alone), 2 at a time"
start=$(date +%s)
xargs -P 2 -L 1 bash "$TMP/compile.sh" <"$jobs"
echo "compiled in $(( $(date +%s) - start )) s ($(awk '{ s += $1 } END { print s }' "$TMP/times") s of compilers); the slowest:"
sort -rn "$TMP/times" | head -8 | sed 's/^/  /'

tests=$((tests + 1))
nfail=$(ls "$TMP/fail" | wc -l)
if [ "$nfail" -ne 0 ]; then
  for f in "$TMP"/fail/*; do
    n=$(basename "$f")
    echo "FAIL: nvcc $n:"; grep -m 8 -E "error|Error" "$TMP/log/$n.log" | sed 's/^/  /'
  done
  failures=$((failures + 1))
else
  echo "ok: all $total kernels compile (sm_90a, and sm_80 for $(grep -c '^80 ' "$jobs"))"
fi
finish
