#!/usr/bin/env python3
"""A stand-in for `python3 cutegen_ref.py`, for testing the orchestrator without torch.

Called as `python.py -u SCRIPT --task PROBLEM --device N`; speaks the reference process's
protocol (docs/protocol.md). FAKE_REF_MODE picks a behaviour: ok, wrong, modified,
cached (trials pass, the timed trial's output is wrong), import_error, no_torch,
reference_error (the reference fails when making a trial); a problem file's own
"# FAKE_REF_MODE=<mode>" line overrides it. FAKE_SPEC=FILE answers
"spec" with that task spec instead of the stand-in one.

"final" (the final timing, which loads the kernel here) judges by the kernel's own
CG_FAKE_MODE=<mode>[:<ms>] marker, as the stand-in worker does, unless FAKE_FINAL_MODE
says otherwise: ok (kernel <ms> ms, eager $FAKE_FINAL_EAGER_MS or 2.0, compile 1.5),
wrong (the first call's output is wrong), cached (the last timed call's is), modified
(inputs modified), unsupported (cg_forward returns 1), cuda_error (a fatal CUDA error:
the process replies and exits), crash (the process dies of SIGSEGV), load_error.
Every start is logged to stderr ("fake reference started"), so tests can count them.
"""
import json
import os
import re
import signal
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
sys.stderr.write("fake reference started, pid %d\n" % os.getpid())
sys.stderr.flush()
send({"event": "ready", "torch": "0.0-fake", "gpu": {"name": "Fake GPU", "cc": "9.0"}})
tensor = {"name": "x", "role": "input", "dtype": "float32", "shape": [4], "stride": [1],
          "bytes": 16, "handle": "00" * 64, "offset": 0}
out = dict(tensor, name="output", role="output")


def final(req):
    state = os.environ.get("FAKE_STATE_DIR")
    if state:  # for tests of what the orchestrator asks
        with open(os.path.join(state, "final-request.json"), "w") as f:
            json.dump(req, f)
    so = req["so"]
    if not os.path.isabs(so) or not os.path.exists(so):
        return {"ok": False, "kind": "load", "error": "cannot load '%s': no such file" % so}
    fmode, ms = "ok", 1.0
    m = re.search(rb"CG_FAKE_MODE=([a-z_]+)(?::([0-9.]+))?", open(so, "rb").read())
    if m:
        fmode, ms = m.group(1).decode(), float(m.group(2) or 1.0)
    fmode = os.environ.get("FAKE_FINAL_MODE", fmode)
    seed = req["seed"]
    if fmode == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if fmode == "cuda_error":
        send({"ok": False, "kind": "candidate", "fatal": True, "status": None,
              "error": "CUDA error once the kernel had run: CUDA error: an illegal memory "
                       "access was encountered"})
        sys.exit(9)
    if fmode == "unsupported":
        return {"ok": False, "kind": "candidate", "status": 1, "fatal": False,
                "error": "cg_forward returned 1 (CG_UNSUPPORTED: the kernel does not handle "
                         "these shapes or dtypes)"}
    if fmode == "load_error":
        return {"ok": False, "kind": "load", "error": "the kernel's shared object does not "
                "load in the reference process: libcudart.so.13: cannot open shared object file"}
    if fmode in ("wrong", "cached", "modified"):
        o = {"name": "output", "ok": fmode == "modified", "max_abs_err": "inf", "max_rel_err": 0.5}
        return {"ok": True, "pass": False, "seed": seed,
                "phase": "last timed call" if fmode == "cached" else "first call",
                "outputs": [o], "modified_inputs": ["x"] if fmode == "modified" else [],
                "message": "inputs modified by the kernel: x" if fmode == "modified" else
                "output: 2 of 4 elements wrong; first at index [1]: got NaN (never written?)"}
    rounds, iters = req["rounds"], req["iters"]
    eager = float(os.environ.get("FAKE_FINAL_EAGER_MS", "2.0"))
    sides = {"kernel": ms, "eager": eager}
    if req.get("compile"):
        sides["compile"] = 1.5

    def stats(t):
        return {"n": rounds * iters, "mean_ms": t, "median_ms": t, "min_ms": t, "max_ms": t,
                "std_ms": 0.0}

    def ratio(t):
        r = t / ms
        return {"median": r, "min": r, "max": r, "q1": r, "q3": r, "rounds": [r] * rounds}

    reply = {"ok": True, "pass": True, "seed": seed, "rounds": rounds, "iters": iters,
             "warmup": req["warmup"], "workspace_bytes": 0,
             "round_medians": {k: [t] * rounds for k, t in sides.items()},
             "orders": [list(sides) if r % 2 == 0 else list(sides)[::-1] for r in range(rounds)],
             "speedup": {k: ratio(t) for k, t in sides.items() if k != "kernel"},
             "check": {"outputs": [{"name": "output", "ok": True, "max_abs_err": 0.0}]},
             "seconds": 0.01}
    for k, t in sides.items():
        reply[k] = stats(t)
    return reply

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
            # FAKE_MIN_BYTES: a speed of light slower than the kernel (a bound that does not hold)
            send({"ok": True, "spec": {"inputs": [tensor], "outputs": [out], "flops": 0,
                                       "min_bytes": float(os.environ.get("FAKE_MIN_BYTES", 32)),
                                       "graph": None}})
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
    elif op == "final":
        send(final(req))
