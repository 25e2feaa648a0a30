#!/usr/bin/env python3
"""A stand-in for `python3 cutegen_ref.py`, for testing the orchestrator without torch.

Called as `python.py -u SCRIPT --task PROBLEM --device N`; speaks the reference process's
protocol (docs/protocol.md). FAKE_REF_MODE picks a behaviour: ok, wrong, modified,
cached (trials pass, the timed trial's output is wrong), import_error, no_torch,
reference_error (the reference fails when making a trial); a problem file's own
"# FAKE_REF_MODE=<mode>" line overrides it. FAKE_SPEC=FILE answers
"spec" with that task spec instead of the stand-in one.
"""
import json
import os
import sys

mode = os.environ.get("FAKE_REF_MODE", "ok")
# A problem file may pick its own mode with a line "# FAKE_REF_MODE=<mode>" (for sweeps).
if "--task" in sys.argv:
    try:
        for line in open(sys.argv[sys.argv.index("--task") + 1]):
            if line.startswith("# FAKE_REF_MODE="):
                mode = line.strip().split("=", 1)[1]
    except OSError:
        pass


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


if mode == "import_error":
    send({"event": "error", "kind": "import", "message": "cannot load problem: SyntaxError"})
    sys.exit(3)
if mode == "no_torch":
    send({"event": "error", "kind": "no_torch", "message": "python3 cannot import torch"})
    sys.exit(7)
send({"event": "ready", "torch": "0.0-fake", "gpu": {"name": "Fake GPU", "cc": "9.0"}})
tensor = {"name": "x", "role": "input", "dtype": "float32", "shape": [4], "stride": [1],
          "bytes": 16, "handle": "00" * 64, "offset": 0}
out = dict(tensor, name="output", role="output")
for line in sys.stdin:
    req = json.loads(line)
    op = req["op"]
    if op == "quit":
        send({"ok": True})
        break
    if op == "spec":
        if os.environ.get("FAKE_SPEC"):  # a real task spec, e.g. tests/data/recipe/*.json
            spec = json.load(open(os.environ["FAKE_SPEC"]))
            send({"ok": True, "spec": spec.get("spec", spec)})
        else:
            send({"ok": True, "spec": {"inputs": [tensor], "outputs": [out], "flops": 0,
                                       "min_bytes": 32, "graph": None}})
    elif op == "trial":
        if mode == "reference_error":
            send({"ok": False, "kind": "reference", "error": "RuntimeError: boom"})
        else:
            send({"ok": True, "id": req["id"], "tensors": [tensor, out]})
    elif op == "check":
        timed = req["id"] == 1000
        state = os.environ.get("FAKE_STATE_DIR")
        if state and os.path.exists(os.path.join(state, "mode")):
            mode = open(os.path.join(state, "mode")).read().strip()
        bad = mode in ("wrong", "modified") or (mode == "cached" and timed)
        o = {"name": "output", "ok": not bad, "max_abs_err": "inf" if bad else 0.0,
             "max_rel_err": 0.5 if bad else 0.0}
        msg = "output: 2 of 4 elements wrong; first at index [1]: got NaN (never written?)" if bad else ""
        send({"ok": True, "pass": not bad, "outputs": [o],
              "modified_inputs": ["x"] if mode == "modified" else [], "message": msg})
    elif op == "free":
        send({"ok": True})
    elif op == "baseline":
        st = {"n": 3, "mean_ms": 2.0, "median_ms": 2.0, "min_ms": 2.0, "max_ms": 2.0, "std_ms": 0}
        send({"ok": True, "eager": st, "compile": dict(st, median_ms=1.5)})
