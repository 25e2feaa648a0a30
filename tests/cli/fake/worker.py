#!/usr/bin/env python3
"""A stand-in for cutegen-worker, for testing the orchestrator on machines without a GPU.

Speaks the worker's protocol (docs/protocol.md); FAKE_WORKER_MODE picks a behaviour:
ok, crash, hang, cuda_error, unsupported, escape, load_error, no_entry. With
FAKE_STATE_DIR set, the kernel's own CG_FAKE_MODE=<mode>[:<ms>] string decides instead.
"""
import json
import os
import signal
import sys
import time

mode = os.environ.get("FAKE_WORKER_MODE", "ok")
fake_ms = 1.0
state_dir = os.environ.get("FAKE_STATE_DIR")
if state_dir and "--so" in sys.argv:
    # The kernel says how it behaves: a string CG_FAKE_MODE=<mode>[:<ms>] in its object.
    # The reference stand-in reads the mode from the state file to decide the check.
    import re
    so = open(sys.argv[sys.argv.index("--so") + 1], "rb").read()
    m = re.search(rb"CG_FAKE_MODE=([a-z_]+)(?::([0-9.]+))?", so)
    if m:
        mode = m.group(1).decode()
        fake_ms = float(m.group(2) or 1.0)
    with open(os.path.join(state_dir, "mode"), "w") as f:
        f.write(mode)


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


if "--probe" in sys.argv:
    # FAKE_GPU_NAME: a GPU of cutegen's table (src/gpu.c), whose peaks give a speed of light
    send({"ok": True, "name": os.environ.get("FAKE_GPU_NAME", "Fake GPU"), "cc": "9.0", "sms": 132,
          "memory_bytes": 150e9,
          "l2_bytes": 62914560, "driver_version": 13000, "runtime_version": 13000})
    sys.exit(0)
if mode == "load_error":
    send({"event": "error", "kind": "load", "message": "undefined symbol: foo"})
    sys.exit(4)
send({"event": "ready", "pid": os.getpid()})
for line in sys.stdin:
    req = json.loads(line)
    op = req["op"]
    if op == "quit":
        break
    if mode == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "hang":
        time.sleep(3600)
    if mode == "cuda_error":
        send({"ok": True, "status": 0, "cuda_error": "cudaErrorIllegalAddress",
              "cuda_message": "an illegal memory access was encountered",
              "where": "during or after cg_forward"})
        sys.exit(0)
    if mode == "unsupported":
        send({"ok": True, "status": 1})
        continue
    if op == "run":
        send({"ok": True, "status": 0, "wall_ms": 0.5})
    elif op == "time":
        n = req["iters"]
        ev = [fake_ms] * n
        wall = [t * (3.0 if mode == "escape" else 1.01) for t in ev]
        tail = [t * (2.0 if mode == "escape" else 0.001) for t in ev]
        send({"ok": True, "status": 0, "times_ms": ev, "wall_ms": wall, "tail_ms": tail})
