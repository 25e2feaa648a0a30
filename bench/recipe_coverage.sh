#!/usr/bin/env bash
# Which problems the built-in recipes cover, from real task specs (tests/gpu/dump_specs.py
# writes them on a GPU host: SPECS_DIR/level1/*.json ...): a Markdown table with the
# family or the reason a problem is not covered, and a count per level. No GPU needed.
#   bench/recipe_coverage.sh SPECS_DIR [CUTEGEN]
set -u
specs=${1:?usage: bench/recipe_coverage.sh SPECS_DIR [CUTEGEN]}
cg=${2:-$(cd "$(dirname "$0")/.." && pwd)/build/cutegen}
echo "| level | problem | covered | family or reason |"
echo "|---|---|---|---|"
for lvl in "$specs"/level*; do
  l=${lvl##*/level}
  for f in $(ls "$lvl"/*.json | sort -t/ -k2 -V); do
    name=$(basename "$f" .json)
    out=$("$cg" recipe --spec "$f" 2>&1)
    fam=$(printf '%s\n' "$out" | sed -n 's/^family: //p' | head -1)
    if [ -n "$fam" ]; then
      echo "| $l | $name | yes | $fam |"
    else
      echo "| $l | $name | no | $(printf '%s\n' "$out" | sed -n 's/^not covered: //p' | head -1 | tr '|' '/') |"
    fi
  done
done
for lvl in "$specs"/level*; do
  l=${lvl##*/level}
  n=$(ls "$lvl"/*.json | wc -l)
  c=0
  for f in "$lvl"/*.json; do "$cg" recipe --spec "$f" >/dev/null 2>&1 && c=$((c + 1)); done
  echo "level $l: $c of $n covered" >&2
done
