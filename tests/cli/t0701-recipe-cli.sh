#!/usr/bin/env bash
# cutegen recipe: flags, exit codes, the plan it prints, --list, --variant, --out, and
# the "not covered" reason. No compiler needed.
. "$(dirname "$0")/lib.sh"
D="$SRC/tests/data/recipe"

expect_exit 0 "recipe --help" -- "$CUTEGEN" recipe --help
for flag in --spec --variant --out --list --recipes --gpu; do
  expect_grep "$flag" "$TMP/out" "--help documents $flag"
done
expect_exit 2 "recipe without a spec" -- "$CUTEGEN" recipe
expect_exit 2 "a bad --variant" -- "$CUTEGEN" recipe --spec "$D/relu.json" --variant x
expect_exit 3 "a missing spec" -- "$CUTEGEN" recipe --spec "$TMP/nope.json"
expect_grep "cannot read task spec" "$TMP/err" "the missing spec is named"
echo '{"inputs": 1}' >"$TMP/bad.json"
expect_exit 3 "a malformed spec" -- "$CUTEGEN" recipe --spec "$TMP/bad.json"
expect_exit 1 "lp_pool2d is not covered" -- "$CUTEGEN" recipe --spec "$D/pool_lp.json"
expect_grep "^not covered: operator 'torch.nn.functional.lp_pool2d'" "$TMP/out" "the reason is printed"

expect_exit 0 "swish plan" -- "$CUTEGEN" recipe --spec "$D/swish.json" --list
expect_grep "^family: pointwise" "$TMP/out" "family printed"
expect_grep "^expression: \(x \* sigmoid\(x\)\)" "$TMP/out" "expression printed"
expect_grep "^variant 0: threads=" "$TMP/out" "variants listed"

# --gpu: the variants for another GPU; below sm_90 no clusters, bulk copies, rings
expect_exit 0 "groupnorm on an H200" -- "$CUTEGEN" recipe --spec "$D/groupnorm.json" --list
expect_grep "^variant 0: .*prefetch group=64 ring=6x4" "$TMP/out" "the H200's first variant is the ring"
expect_exit 0 "groupnorm on an A100" -- "$CUTEGEN" recipe --spec "$D/groupnorm.json" --list --gpu a100
expect_grep "^gpu: NVIDIA A100 40GB \(sm_80, 108 SMs" "$TMP/out" "the GPU chosen is printed"
expect_grep "^variant 0: " "$TMP/out" "A100 variants listed"
for w in ring= group= prefetch cluster=; do
  expect_nogrep "^variant .*$w" "$TMP/out" "no $w variant on sm_80"
done
expect_exit 0 "softmax on an RTX 4090" -- "$CUTEGEN" recipe --spec "$D/softmax.json" --list --gpu 4090
expect_grep "^gpu: NVIDIA GeForce RTX 4090 \(sm_89" "$TMP/out" "the 4090 is sm_89"
expect_nogrep "^variant .*cluster=" "$TMP/out" "no cluster variant on sm_89"
expect_exit 2 "an unknown GPU" -- "$CUTEGEN" recipe --spec "$D/softmax.json" --gpu tpu
expect_grep "unknown GPU 'tpu': give one of h200" "$TMP/err" "the known GPUs are named"

expect_exit 0 "argmax plan" -- "$CUTEGEN" recipe --spec "$D/argmax_dim.json"
expect_grep "^reduction: argmax over dim 1: \(outer 128, r 4096, inner 4095\)" "$TMP/out" "reduction printed"

expect_exit 0 "write a kernel" -- "$CUTEGEN" recipe --spec "$D/chain_bcast.json" --variant 1 --out "$TMP/k.cu"
expect_grep "^wrote .*k.cu \(variant 1: threads=" "$TMP/out" "the file is reported"
expect_grep "CG_EXPORT int cg_forward" "$TMP/k.cu" "the kernel exports cg_forward"
expect_grep "X\(1, float, CGR_BCAST, CG_FLOAT32\)" "$TMP/k.cu" "y is read broadcast"
expect_exit 2 "a variant that does not exist" -- "$CUTEGEN" recipe --spec "$D/chain_bcast.json" --variant 99 --out "$TMP/k2.cu"
expect_grep "variant 99 does not exist" "$TMP/err" "says which variants exist"
expect_exit 0 "gemm plan" -- "$CUTEGEN" recipe --spec "$D/l2_gemm_add_relu.json" --list
expect_grep "^family: gemm" "$TMP/out" "family printed"
expect_grep "^product: Linear: batch 1, M 1024, N 8192, K 8192; A K-major" "$TMP/out" "product printed"
expect_grep "^epilogue: relu\(\(r \+ bias\)\)" "$TMP/out" "epilogue printed"
expect_grep "^variant [0-9]+: gemm tf32 .*TF32 accuracy" "$TMP/out" "TF32 variants are flagged"
expect_grep "^variant [0-9]+: gemm 3xtf32 tile=128x128x32 warps=2x4" "$TMP/out" "variant 0's tile is offered in 3xTF32 too"
expect_exit 0 "write a gemm kernel" -- "$CUTEGEN" recipe --spec "$D/l2_gemm_add_relu.json" --out "$TMP/g.cu"
expect_grep "^#define CGR_PREC 2" "$TMP/g.cu" "variant 0 is 3xFP16"
expect_grep "X\(1, CGR_GE_COL\)" "$TMP/g.cu" "the bias is read per column"
expect_exit 0 "write a gemv kernel" -- "$CUTEGEN" recipe --spec "$D/matvec.json" --out "$TMP/v.cu"
expect_grep "recipes/gemm_gemv.cu" "$TMP/v.cu" "matrix-vector uses the GEMV template"
expect_exit 9 "a missing template directory" -- "$CUTEGEN" recipe --spec "$D/relu.json" --recipes "$TMP/none" --out "$TMP/k3.cu"
finish
