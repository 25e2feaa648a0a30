#!/usr/bin/env python3
"""The whole "final" request of python/cutegen_ref.py (final, final_timing) run with a
CPU build of torch, where host memory stands in for the GPU: torch.cuda's streams,
events and synchronisation are replaced by host equivalents, and the candidate is a
host-only shared object (final_cpu_kernel.c) called through the real ctypes binding.
Checks the ABI order of inputs (arguments, numbers as 0-dim tensors, then parameters),
the first-call check, the interleaved rounds (ABBA), the statistics, the reply's JSON,
and each way a kernel fails. Exits 77 without torch.

    test_final_cpu.py SRC_DIR KERNEL_SO
"""
import ctypes
import json
import os
import sys
import time

try:
    import torch
except ImportError:
    print("SKIP: no torch in this python")
    sys.exit(77)

src, so = sys.argv[1], sys.argv[2]
serve_mode = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--serve" else None
sys.path.insert(0, os.path.join(src, "python"))
import cutegen_ref as ref  # noqa: E402


# --- torch.cuda on the host: events are host clocks, synchronisation is a no-op
class Stream:
    cuda_stream = 0


class Event:
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self, stream=None):
        self.t = time.perf_counter()

    def elapsed_time(self, end):
        return (end.t - self.t) * 1e3


torch.cuda.synchronize = lambda *a: None
torch.cuda.current_stream = lambda *a: Stream()
torch.cuda.Event = Event
torch.cuda.empty_cache = lambda: None
ref.flush_size = lambda torch: 1 << 20


def no_compile(model):  # compiling fails, as it may on a GPU host
    raise RuntimeError("torch.compile failed here")


torch.compile = no_compile


class CpuTask(ref.Task):
    """Task, with the problem's tensors made on the CPU (torch 1.x has no device context)."""

    def make_model(self, seed):
        self.seed(seed)
        init = self.module.get_init_inputs()
        return self.module.Model(*init).eval(), init

    def make_inputs(self, seed):
        self.seed(seed)
        return list(self.module.get_inputs())


task = CpuTask(torch, os.path.join(src, "tests", "python", "final_cpu_problem.py"),
               torch.device("cpu"))
lib = ctypes.CDLL(so)  # the same object final() loads: its globals steer the kernel
mode = ctypes.c_int.in_dll(lib, "cg_test_mode")
calls = ctypes.c_int64.in_dll(lib, "cg_test_calls")
checks = 0


def sync_after_kernel(*a):
    if calls.value:
        raise RuntimeError("CUDA error: an illegal memory access was encountered")


if serve_mode is not None:  # a child: the protocol loop itself, on stdin and stdout
    if serve_mode == "cuda_error":
        torch.cuda.synchronize = sync_after_kernel
    else:
        mode.value = int(serve_mode)
    ref.PROTO = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    ref.serve(task, None)
    sys.exit(0)


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        print("FAIL:", what)
        sys.exit(1)
    print("ok:", what)


def final(m, **kw):
    mode.value = m
    calls.value = 0
    req = {"op": "final", "so": so, "seed": 7, "warmup": 2, "iters": 3, "rounds": 4,
           "compile": False}
    req.update(kw)
    return ref.final(task, req)


r = final(0)
text = json.dumps(ref.strict_json(r), allow_nan=False)
check(r["ok"] and r["pass"], "a right kernel passes")
check(calls.value == 1 + 2 + 4 * 3, "called once, warmed up, then rounds x iters (%d calls)" % calls.value)
check(r["kernel"]["n"] == 12 and r["eager"]["n"] == 12 and "compile" not in r, "stats over all timed calls")
check(r["orders"] == [["kernel", "eager"], ["eager", "kernel"]] * 2, "the order alternates (ABBA)")
check(len(r["round_medians"]["kernel"]) == 4 and len(r["speedup"]["eager"]["rounds"]) == 4, "per-round medians")
sp = r["speedup"]["eager"]
check(sp["min"] <= sp["q1"] <= sp["median"] <= sp["q3"] <= sp["max"] and sp["median"] > 0,
      "speedup: median %.3f in [%.3f, %.3f]" % (sp["median"], sp["min"], sp["max"]))
want = [e / k for e, k in zip(r["round_medians"]["eager"], r["round_medians"]["kernel"])]
check(all(abs(a - b) < 1e-12 for a, b in zip(want, sp["rounds"])), "ratios are eager over kernel, round by round")
check(r["workspace_bytes"] == 4096 * 4 and r["check"]["outputs"][0]["ok"], "workspace; the first call's check")
check(json.loads(text)["pass"] is True, "the reply is strict JSON")

r = final(0, compile=True)
check(r["pass"] and "compile_error" in r and "compile" not in r["speedup"], "a torch.compile failure is reported, not fatal")
torch.compile = lambda model: model  # "compiled": the module itself
r = final(0, compile=True)
check(r["pass"] and r["compile"]["n"] == 12 and "compile" in r["speedup"] and
      r["orders"][:2] == [["kernel", "eager", "compile"], ["compile", "eager", "kernel"]],
      "with torch.compile: a third side, in the alternating order")
torch.compile = no_compile
r = final(1)
check(r["ok"] and not r["pass"] and r["phase"] == "first call" and "kernel" not in r and
      "speedup" not in r and "elements wrong" in r["message"], "a wrong kernel: no number (%s)" % r["message"][:60])
check(calls.value == 1, "and it was called once")
r = final(2)
check(not r["pass"] and r["phase"] == "last timed call" and "NaN" in r["message"],
      "right once, then nothing written: caught on the last timed call")
r = final(3)
check(not r["pass"] and r["modified_inputs"] == ["x"], "a kernel writing its input")
try:
    final(4)
    check(False, "CG_UNSUPPORTED")
except ref.FinalFailure as e:
    check(e.kind == "candidate" and e.status == 1 and not e.fatal, "CG_UNSUPPORTED: %s" % e)
r = final(0, atol=0.0, rtol=0.0)
check("pass" in r, "tolerances are passed on (exact: %s)" % r["pass"])


# A CUDA error once the kernel ran is the candidate's, and fatal.
sync = torch.cuda.synchronize
torch.cuda.synchronize = sync_after_kernel
try:
    final(0)
    check(False, "a CUDA error")
except ref.FinalFailure as e:
    check(e.kind == "candidate" and e.fatal and "illegal memory access" in str(e),
          "a CUDA error after the kernel ran is fatal: %s" % e)
torch.cuda.synchronize = sync

# The protocol loop: replies, and the process ending after a fatal failure.
import subprocess  # noqa: E402

requests = (json.dumps({"op": "final", "so": so, "seed": 3, "warmup": 1, "iters": 2,
                        "rounds": 2, "compile": False}) + "\n" + '{"op":"quit"}\n')


def served(m):
    p = subprocess.run([sys.executable, __file__, src, so, "--serve", m], input=requests,
                       capture_output=True, text=True, timeout=300)
    return p.returncode, [json.loads(line) for line in p.stdout.splitlines()]


rc, replies = served("0")
check(rc == 0 and len(replies) == 2 and replies[0]["pass"] and replies[1] == {"ok": True},
      "served: a final reply, then quit")
rc, replies = served("4")
check(rc == 0 and replies[0]["ok"] is False and replies[0]["kind"] == "candidate" and
      replies[0]["status"] == 1 and replies[0]["fatal"] is False and len(replies) == 2,
      "served: CG_UNSUPPORTED is a candidate failure; the process goes on")
rc, replies = served("cuda_error")
check(rc == ref.EXIT_CANDIDATE and len(replies) == 1 and replies[0]["kind"] == "candidate" and
      replies[0]["fatal"] is True, "served: a CUDA error is replied, then the process ends (exit %d)" % rc)
print("%d checks" % checks)
