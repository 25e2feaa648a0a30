#!/usr/bin/env python3
"""variant_lab.py: many builds of one problem's kernel, timed against PyTorch in one process.

A lab tool for tuning templates on a GPU host: each shared object (built from a recipe or a
hand edit, exporting the cutegen ABI) is loaded into this process and put through the final
timing of python/cutegen_ref.py (fresh inputs, checked like a trial, then timed in ABBA
rounds against eager PyTorch, L2 flushed before each call). One line per build: pass or
the first error, the kernel's and eager's medians, the speed-up, the worst errors.

    python3 bench/variant_lab.py --task KB/level1/19_ReLU.py a.so b.so ... [--rounds 5]

It does not replace `cutegen eval` (no sandboxing: a crashing build ends this process);
it spends a GPU second a build where eval spends ten. Output lines start with "lab:".
"""
import argparse
import importlib.util
import os
import sys
import time


def load_ref():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "python", "cutegen_ref.py")
    spec = importlib.util.spec_from_file_location("cutegen_ref", path)
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    return ref


def worst(outputs, key):
    return max((o.get(key) or 0.0) for o in outputs) if outputs else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", required=True, help="the problem's .py (KernelBench's shape)")
    ap.add_argument("so", nargs="+", help="shared objects exporting cg_forward")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--seed", type=int, default=4243)
    ap.add_argument("--compile", action="store_true", help="also time torch.compile")
    args = ap.parse_args()
    ref = load_ref()
    import torch
    torch.cuda.set_device(0)
    task = ref.Task(torch, args.task, torch.device("cuda", 0))
    name = os.path.basename(args.task)
    for so in args.so:
        t0 = time.time()
        req = {"so": so, "seed": args.seed, "rounds": args.rounds, "iters": args.iters,
               "warmup": args.warmup, "compile": args.compile}
        label = f"lab: {name} {os.path.basename(so)}"
        try:
            with torch.no_grad():
                r = ref.final_timing(task, req, [])
        except Exception as e:  # noqa: BLE001 - report and go on; a broken context ends it
            print(f"{label}: error {type(e).__name__}: {str(e)[:200]}", flush=True)
            if ref.is_cuda_error(e):
                sys.exit(1)
            continue
        outs = (r.get("check") or {}).get("outputs") or r.get("outputs") or []
        errs = f"max abs {worst(outs, 'max_abs_err'):.3g} max rel {worst(outs, 'max_rel_err'):.3g}"
        if not r.get("pass"):
            print(f"{label}: WRONG ({r.get('phase')}) {errs}: {r.get('message', '')[:240]}", flush=True)
            continue
        sp = r["speedup"]["eager"]["median"]
        line = (f"{label}: ok kernel {r['kernel']['median_ms']:.4f} ms eager "
                f"{r['eager']['median_ms']:.4f} ms speedup {sp:.3f}x {errs}")
        if "compile" in r:
            line += f" compile {r['compile']['median_ms']:.4f} ms ({r['speedup']['compile']['median']:.3f}x)"
        print(line + f" [{time.time() - t0:.1f} s]", flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
