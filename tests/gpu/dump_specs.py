#!/usr/bin/env python3
"""Writes the task spec (python/cutegen_ref.py's make_spec(): inputs, outputs, fx graph,
FLOPs, bytes) of every problem file given, one JSON file each, in one Python process:
the real specs the recipe recogniser is checked against (tests/data/recipe/ fixtures are
written by hand otherwise). Needs torch and a GPU.
  tests/gpu/dump_specs.py OUT_DIR PROBLEM.py... [--budget-seconds S]
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import cutegen_ref  # noqa: E402


def main():
    args = sys.argv[1:]
    budget = 1e9
    if "--budget-seconds" in args:
        i = args.index("--budget-seconds")
        budget = float(args[i + 1])
        del args[i:i + 2]
    out, problems = args[0], args[1:]
    import torch
    os.makedirs(out, exist_ok=True)
    t_start = time.time()
    done = failed = 0
    for path in problems:
        if time.time() - t_start > budget:
            print("budget spent: %d problems left" % (len(problems) - done - failed))
            break
        name = os.path.basename(path)[:-3]
        t0 = time.time()
        try:
            task = cutegen_ref.Task(torch, path, torch.device("cuda", 0))
            spec = cutegen_ref.make_spec(task, 42)
            with open(os.path.join(out, name + ".json"), "w") as f:
                json.dump(spec, f, indent=1)
            done += 1
            print("%-70s %5.1fs ok" % (name, time.time() - t0), flush=True)
        except Exception as e:  # noqa: BLE001
            failed += 1
            print("%-70s %5.1fs FAILED %s: %s" % (name, time.time() - t0, type(e).__name__,
                                                   str(e)[:200]), flush=True)
        torch.cuda.empty_cache()
    print("%d specs written, %d failed, %.0f s" % (done, failed, time.time() - t_start))


main()
