#!/usr/bin/env bash
# bench/same_device_code.sh: whether a change to recipes/ left the device code alone.
# For each fixture of tests/data/recipe/ named (or, with none named, a few of every
# template), generates variant 0 (FIXTURE@K: variant K) with the templates of REV
# (default HEAD) and with those of the working tree, builds both for sm_90a as cubins
# (nvcc -cubin: the device half of a build) and compares their SASS (cuobjdump -sass).
# Prints a line a fixture: same, DIFFERENT (with the first lines of the diff) or FAILED
# (no such fixture, not covered, or a build that failed, with its errors); exits 1 if any
# is not the same. For changes that should move code between nvcc's host
# and device passes, or tidy a template, without touching what runs on the GPU. WHOLE=1
# also builds both sources as the worker gets them (`cutegen build`, cold), prints the
# seconds each took (JOBS=1 for timings that do not compete for cores) and compares the
# host code of their cg_forward (objdump, addresses left out). DIFF_LINES=N: the diff's first N lines (6).
#
#   REV=HEAD~1 JOBS=2 WHOLE=1 bench/same_device_code.sh [FIXTURE...]   (FIXTURE: a path under
#   tests/data/recipe/ without .json, e.g. matmul or conv/l2_17_Conv2d_InstanceNorm_Divide)
set -u
cd "$(dirname "$0")/.."
CG=${CG:-build/cutegen}
REV=${REV:-HEAD}
JOBS=${JOBS:-2}
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cuobjdump=$(command -v cuobjdump || ls "$(dirname "$nvcc")/cuobjdump" 2>/dev/null)
if [ -z "$cuobjdump" ]; then  # PyPI's (scripts/setup.sh installs it): nvidia-cuda-cuobjdump
  pkg=$(python3 -c "import importlib.util as u; s=u.find_spec('nvidia'); print(s.submodule_search_locations[0] if s else '')" 2>/dev/null)
  cuobjdump=$(ls "$pkg"/cu*/bin/cuobjdump 2>/dev/null | head -1)
fi
cutlass=${CUTLASS_DIR:+$CUTLASS_DIR/include}
if [ -z "$cutlass" ]; then
  cutlass=$(python3 -c 'import cutlass_library, os; print(os.path.join(os.path.dirname(cutlass_library.__file__), "source", "include"))' 2>/dev/null)
fi
[ -x "$CG" ] || { echo "same_device_code: no $CG (build first, or set CG)" >&2; exit 2; }
CG=$(cd "$(dirname "$CG")" && pwd)/$(basename "$CG")
[ -x "$nvcc" ] || { echo "same_device_code: nvcc not found (install the CUDA toolkit, or put its bin/ on PATH)" >&2; exit 2; }
[ -n "$cuobjdump" ] || { echo "same_device_code: cuobjdump not found (pip install nvidia-cuda-cuobjdump==13.5.37 nvidia-cuda-nvdisasm==13.5.37)" >&2; exit 2; }
[ -d "$cutlass/cute" ] || { echo "same_device_code: CUTLASS headers not found (set CUTLASS_DIR, or run scripts/setup.sh: it installs nvidia-cutlass)" >&2; exit 2; }

fixtures=("$@")
if [ ${#fixtures[@]} -eq 0 ]; then
  fixtures=(relu module_chain softmax sum_dim argmax_dim layernorm groupnorm instancenorm frobenius
            cumsum cross_entropy triplet_margin pool_epi_bf16 pool_emu_max2d matvec matmul matmul_tab
            l2_gemm_groupnorm_hardtanh conv2d_relu_biasadd convt_l2_5_sub_tanh conv_wgmma_chanred
            conv/l1_87_conv_pointwise_2D conv-dw/dw2d_3x7_relu conv-direct/convt2d_direct_s5
            staged_l2_35_conv_maxpool)
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/same-device.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/base"
git archive "$REV" recipes | tar -x -C "$tmp/base" || { echo "same_device_code: no recipes/ at $REV" >&2; exit 2; }

bad=0
: >"$tmp/jobs"
for f in "${fixtures[@]}"; do
  v=0
  case $f in *@*) v=${f#*@}; f=${f%@*} ;; esac
  spec=tests/data/recipe/$f.json
  [ -f "$spec" ] || { echo "$f: FAILED: no such fixture ($spec)"; bad=1; continue; }
  n=$(echo "$f" | tr / _)@$v
  if ! "$CG" recipe --spec "$spec" --variant "$v" --recipes "$tmp/base/recipes" --out "$tmp/$n.old.cu" >"$tmp/$n.err" 2>&1 ||
     ! "$CG" recipe --spec "$spec" --variant "$v" --out "$tmp/$n.new.cu" >>"$tmp/$n.err" 2>&1; then
    echo "$f: FAILED to generate: $(head -2 "$tmp/$n.err" | tr '\n' ' ')"; bad=1; continue
  fi
  echo "$n old" >>"$tmp/jobs"; echo "$n new" >>"$tmp/jobs"
done
cat >"$tmp/build.sh" <<EOS
#!/usr/bin/env bash
"$nvcc" -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a --expt-relaxed-constexpr -I include \\
  -I "$cutlass" -include cutegen/abi.h -cubin -o "$tmp/\$1.\$2.cubin" "$tmp/\$1.\$2.cu" >"$tmp/\$1.\$2.log" 2>&1 &&
  "$cuobjdump" -sass "$tmp/\$1.\$2.cubin" | grep -v '^\s*$' >"$tmp/\$1.\$2.sass"
if [ "${WHOLE:-0}" = 1 ]; then  # cutegen's own build (split mode), cold
  CUTEGEN_CACHE_DIR="$tmp/cache" "$CG" build --kernel "$tmp/\$1.\$2.cu" --jobs 1 --force --json -q \\
    >"$tmp/\$1.\$2.whole.json" 2>"$tmp/\$1.\$2.whole.log" &&
    sed -n 's/.*"seconds":\([0-9.]*\).*/\1/p' "$tmp/\$1.\$2.whole.json" >"$tmp/\$1.\$2.secs"
fi
EOS
xargs -P "$JOBS" -L 1 bash "$tmp/build.sh" <"$tmp/jobs"

for n in $(cut -d' ' -f1 "$tmp/jobs" | sort -u); do
  for s in old new; do
    if [ ! -s "$tmp/$n.$s.sass" ]; then
      echo "$n: FAILED ($s build): $(grep -m 3 -i error "$tmp/$n.$s.log" | tr '\n' ' ')"; bad=1; continue 2
    fi
  done
  whole=
  if [ "${WHOLE:-0}" = 1 ]; then
    for s in old new; do
      [ -s "$tmp/$n.$s.secs" ] && continue
      echo "$n: FAILED ($s whole build): $(cat "$tmp/$n.$s.whole.json" "$tmp/$n.$s.whole.log" | head -3 | tr '\n' ' ')"; bad=1; continue 2
    done
    whole="; whole build $(printf %.1f "$(cat "$tmp/$n.old.secs")") s -> $(printf %.1f "$(cat "$tmp/$n.new.secs")") s"
    for s in old new; do  # cg_forward's host code, addresses left out
      so=$(sed -n 's/.*"so":"\([^"]*\)".*/\1/p' "$tmp/$n.$s.whole.json")
      objdump -d --no-addresses --no-show-raw-insn --disassemble=cg_forward "$so" 2>/dev/null |
        grep -v -e '^/' -e 'file format' -e '^$' -e '^Disassembly' |
        sed 's/<[^>]*>//g; s/0x[0-9a-f]*//g; s/ [0-9a-f]\{3,\} / /g' >"$tmp/$n.$s.host"
    done
    if [ ! -s "$tmp/$n.new.host" ]; then whole="$whole; cg_forward not disassembled (objdump)"
    elif cmp -s "$tmp/$n.old.host" "$tmp/$n.new.host"; then whole="$whole; cg_forward the same"
    else whole="$whole; cg_forward DIFFERENT"; bad=1; fi
  fi
  if cmp -s "$tmp/$n.old.sass" "$tmp/$n.new.sass"; then
    echo "$n: same ($(grep -c 'Function :' "$tmp/$n.new.sass") kernels, $(wc -l <"$tmp/$n.new.sass") SASS lines$whole)"
  else
    echo "$n: DIFFERENT${whole:+ (${whole#; })}"; diff "$tmp/$n.old.sass" "$tmp/$n.new.sass" | head -"${DIFF_LINES:-6}" | sed 's/^/  /'; bad=1
  fi
done
exit $bad
