#!/usr/bin/env bash
# cutegen run on a GPU host with a scripted model serving real kernels
# (tests/agent/gpu_responder.py): a first version that does not compile, a SEARCH block
# that matches nothing, a wrong kernel, one that crashes, one that hangs, a reply without
# code, slow and fast correct kernels. Prints the tree, the stop reason and the best;
# then the same run killed (SIGKILL) during a model call, during a build and during a GPU
# evaluation, each resumed: it must end with the same verdicts, and ask no question twice.
# Then the prompt sizes per prompt kind on three problems.
#   OUT=/tmp/agent tests/gpu/agent.sh [KB_DIR]
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/cutegen-agent}
KB=${1:-${KB:-.deps/kernelbench}}
[ -d "$KB" ] || KB=../shared/kernelbench
CG=$PWD/build/cutegen
RESP=$PWD/tests/agent/gpu_responder.py
TASK=$KB/level1/19_ReLU.py
rm -rf "$OUT"; mkdir -p "$OUT"
fails=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fails=$((fails + 1)); fi; }
q() { python3 -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print("|".join(map(str, r)))' "$1/run.db" "$2"; }
agent() {  # RUN_DIR [flags]   (exec: a background "(agent ...) &" has cutegen's pid)
  local d=$1; shift
  exec "$CG" run --task "$TASK" --command "$RESP" --run-dir "$d" --children 2 --fix-attempts 2 \
    --rounds 3 --timeout 10 --plateau 0 --sol-stop 2 ${AGENT_FLAGS:-} "$@"
}
stored_requests() {  # RUN_DIR: "tag kind" of every stored model reply, as the responder logs them
  python3 - "$1/run.db" "$PWD/tests/agent" <<'PY'
import json, re, sqlite3, sys
sys.path.insert(0, sys.argv[2])
import responder
for (req,) in sqlite3.connect(sys.argv[1]).execute("select request_json from llm_calls where reply_text is not null"):
    content = json.loads(req)["messages"][-1]["content"]
    m = re.search(r"\(Request ([^)]*)\.\)", content)
    print(responder.slug(m.group(1) if m else "untagged"), responder.request_kind(content))
PY
}
verdicts() { q "$1" "select verdict, count(*) from nodes group by verdict order by verdict" | tr '\n' ' '; }

echo "== 1. a scripted run with real kernels on $TASK"
export RESPONDER_DIR=$OUT/resp1; mkdir -p "$RESPONDER_DIR"
t0=$(date +%s)
(agent "$OUT/run1") >"$OUT/run1.out" 2>"$OUT/run1.err"; rc=$?
echo "exit $rc after $(( $(date +%s) - t0 )) s"; cat "$OUT/run1.out"
echo "-- tree (id parent kind depth verdict ms speedup)"
q "$OUT/run1" "select id, coalesce(parent_id, '-'), kind, depth, verdict, round(time_ms, 4), round(speedup, 3) from nodes order by id"
check "the run ends with a stop reason" "[ $rc -eq 0 ] && grep -q '^stopped:' '$OUT/run1.out'"
V=$(verdicts "$OUT/run1"); echo "verdicts: $V"
for v in compile_error wrong_result runtime_error timeout; do check "a $v was met and recorded" "echo '$V' | grep -q '$v|'"; done
check "the best is a fast correct kernel (below 5 ms)" "grep -Eq '^best: +node [0-9]+ .*: [0-4]\.[0-9]+ ms' '$OUT/run1.out'"
R=$RESPONDER_DIR/request
check "the fix prompt carries nvcc's error" "grep -q 'expected an expression' '$R-for-the-first-version-fix.json'"
check "the wrong-result fix carries the checker's report" "grep -q 'elements wrong' '$R-in-round-1--child-1-of-2-fix.json'"
check "the crash fix carries the CUDA error" "grep -Eq 'cudaErrorIllegalAddress|illegal memory access' '$R-in-round-1--child-2-of-2-fix.json'"
check "the hang fix says it timed out" "grep -Eqi 'time.?out|timed out' '$R-in-round-2--child-1-of-2-fix.json'"
check "no placeholder left in any prompt" "! grep -l '{{' '$RESPONDER_DIR'/request-*.json"
calls1=$(q "$OUT/run1" "select count(*) from llm_calls")
v1=$(q "$OUT/run1" "select group_concat(verdict, ',') from (select verdict from nodes order by verdict)")
echo "model calls: $calls1"

resume_test() {  # NAME HOW
  local name=$1 how=$2 d=$OUT/run-$1
  export RESPONDER_DIR=$OUT/resp-$1; mkdir -p "$RESPONDER_DIR"
  echo "== resume after a kill during $name"
  case $how in
    llm) (RESPONDER_KILL_AT="in round 2, child 2 of 2" agent "$d") >"$d.out1" 2>"$d.err1"; rc=$? ;;
    *)   (agent "$d") >"$d.out1" 2>"$d.err1" & pid=$!
         # wait for the moment: a build (nvcc running) or a GPU evaluation (a worker running)
         local pat; [ "$how" = build ] && pat='nvcc|cicc|cudafe' || pat='cutegen-worker'
         local n=0 seen=0
         while kill -0 $pid 2>/dev/null; do
           # once three model replies are in (past the first version), at the first sight
           if [ "$(cat "$RESPONDER_DIR/calls.log" 2>/dev/null | wc -l)" -ge 3 ] && pgrep -f "$pat" >/dev/null; then
             echo "killing cutegen (pid $pid) while running: $(pgrep -af "$pat" | head -1 | cut -c1-100)"
             kill -9 $pid; break
           fi
           sleep 0.2; n=$((n + 1))
         done
         wait $pid; rc=$? ;;
  esac
  local before; before=$(q "$d" "select count(*) from llm_calls")
  stored_requests "$d" >"$d.stored-before"
  sleep 2
  echo "killed: exit $rc, $before model calls recorded; left running 2 s later: $(pgrep -af 'cutegen-worker|cutegen_ref|nvcc' | cut -c1-80 | tr '\n' ';')"
  (RESPONDER_KILL_AT= agent "$d" --resume "$d") >"$d.out2" 2>"$d.err2"; local rc2=$?
  cat "$d.out2"
  local calls; calls=$(q "$d" "select count(*) from llm_calls")
  local asked; asked=$(cat "$RESPONDER_DIR/calls.log" 2>/dev/null | wc -l)
  local v; v=$(q "$d" "select group_concat(verdict, ',') from (select verdict from nodes order by verdict)")
  check "$name: killed by SIGKILL" "[ $rc -eq 137 ]"
  check "$name: the resumed run ends normally" "[ $rc2 -eq 0 ] && grep -q '^stopped:' '$d.out2'"
  check "$name: $calls calls recorded, as the uninterrupted run's $calls1" "[ $calls -eq $calls1 ]"
  # Replies in flight when cutegen died were never received and are asked again (at most
  # one per child being asked at that moment); a reply that was stored must never be.
  local again; again=$(sort "$RESPONDER_DIR/calls.log" | uniq -d)
  local paid_twice; paid_twice=$(sort "$RESPONDER_DIR/calls.log" | uniq -d | grep -Fxf "$d.stored-before")
  echo "  asked again after the resume (in flight at the kill): ${again:-none}" | tr '\n' ' '; echo
  check "$name: no stored reply was asked for again" "[ -z '$paid_twice' ]"
  check "$name: at most one question per child asked again ($(echo -n "$again" | grep -c .))" \
    "[ $(echo -n "$again" | grep -c .) -le 2 ]"
  check "$name: the model answered $asked times: the run's $calls calls and the lost ones" \
    "[ $asked -eq $((calls + $(echo -n "$again" | grep -c .))) ]"
  check "$name: the same verdicts as the uninterrupted run" "[ '$v' = '$v1' ]"
  [ "$v" = "$v1" ] || echo "  $v vs $v1"
}
resume_test model-call llm
resume_test build build
resume_test gpu-evaluation eval

echo "== prompt sizes (characters; tokens estimated as characters / 4)"
sizes() {  # LABEL DIR
  python3 - "$1" "$2" <<'PY'
import json, os, re, sys
label, d = sys.argv[1], sys.argv[2]
kinds = {}
for f in sorted(os.listdir(d)):
    if not f.startswith("request-"):
        continue
    msgs = json.load(open(os.path.join(d, f)))["messages"]
    user = msgs[-1]["content"]
    system = json.load(open(os.path.join(d, f))).get("system") or ""
    k = ("first" if "first-version" in f and f.endswith("-ask.json") else
         "fix_compile" if user.startswith("The kernel below does not compile") else
         "fix_wrong" if user.startswith("The kernel below compiles and runs") else
         "fix_runtime" if user.startswith("The kernel below compiles but fails") else
         "tune" if "structure has settled" in user or user.startswith("The kernel below is c") else
         "retry" if f.endswith("-retry.json") else "optimise")
    total = len(system) + len(user)
    kinds.setdefault(k, []).append(total)
for k, v in sorted(kinds.items()):
    print("%-10s %-12s %3d prompts, %6d chars (~%5d tokens) max, system part %d chars"
          % (label, k, len(v), max(v), max(v) // 4, len(system)))
PY
}
sizes relu "$OUT/resp1"
for p in 23_Softmax 40_LayerNorm; do
  f=$(ls "$KB"/level1/${p}*.py | head -1)
  kern=examples/kernels/$( [ $p = 23_Softmax ] && echo softmax || echo layernorm ).cu
  export RESPONDER_DIR=$OUT/resp-$p; mkdir -p "$RESPONDER_DIR"
  # a first-version prompt (the run is killed once it is asked), then a seeded run whose
  # child fails to compile, then is wrong, then crashes: optimise and the three fixes.
  RESPONDER_KILL_AT="for the first version" "$CG" run --task "$f" --command "$RESP" \
    --run-dir "$OUT/p-$p-a" -q >/dev/null 2>&1
  RESPONDER_SCRIPT=kinds "$CG" run --task "$f" --command "$RESP" --run-dir "$OUT/p-$p-b" \
    --seed-kernel "$kern" --rounds 1 --children 1 --fix-attempts 3 --profile never -q \
    >"$OUT/p-$p.out" 2>&1
  sizes "${p#*_}" "$RESPONDER_DIR"
done
echo "== agent.sh: $fails failed checks"
exit $(( fails > 0 ))
