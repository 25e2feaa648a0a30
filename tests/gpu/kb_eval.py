#!/usr/bin/env python3
"""Judges kernels exported by `cutegen export --format kernelbench` with KernelBench's own
evaluation (kernelbench.eval.eval_kernel_against_ref: its correctness trials, then its
timing of ModelNew against the reference), and sets KernelBench's speedup beside cutegen's
(from the export's index.json). KernelBench is not part of cutegen: give the directory
holding its `kernelbench` package (a checkout's src/). Needs torch and a GPU.

  tests/gpu/kb_eval.py --kernelbench-src KernelBench/src --problems KB_TREE --exported DIR
"""
import argparse
import glob
import json
import os
import sys
import time
import types


def stub_missing_modules():
    """KernelBench imports requests and pydantic at the top of eval.py; a GPU host without
    network may lack them. Neither is used on the path taken here (requests fetches
    problems by id; pydantic only types the result), so minimal stand-ins do."""
    # Modules KernelBench imports at the top for model calls, progress bars and .env
    # files, none of which its eval uses; stand-ins where they are not installed.
    unused = {"requests": {}, "dotenv": {"load_dotenv": lambda *a, **k: None},
              "tqdm": {"tqdm": lambda it=None, *a, **k: it}, "openai": {"OpenAI": object},
              "litellm": {"completion": None}}
    for name, attrs in unused.items():
        try:
            __import__(name)
        except ImportError:
            mod = types.ModuleType(name)
            for k, v in attrs.items():
                setattr(mod, k, v)
            sys.modules[name] = mod
            print("note: %s is not installed; a stand-in module is used (eval does not use it)" % name)
    try:
        import pydantic  # noqa: F401
    except ImportError:
        mod = types.ModuleType("pydantic")

        class BaseModel:
            def __init__(self, **kw):
                for cls in reversed(type(self).__mro__):
                    for k, v in vars(cls).items():
                        if not k.startswith("_") and not callable(v):
                            setattr(self, k, v.copy() if isinstance(v, (dict, list)) else v)
                for k, v in kw.items():
                    setattr(self, k, v)

            def model_dump(self):
                return {k: v for k, v in vars(self).items()}

            dict = model_dump

        mod.BaseModel = BaseModel
        sys.modules["pydantic"] = mod
        print("note: pydantic is not installed; a minimal BaseModel stand-in is used")


def build_dir_of(e):
    return os.path.join("/tmp/kb_eval_build", e["problem"][:-3])


def prebuild_one(path, build_dir):
    """Builds one exported ModelNew's extension where KernelBench's eval will look for it
    (TORCH_EXTENSIONS_DIR = its build_dir; the name and sources are the same, so the eval
    finds it built). An exported file builds in ModelNew's constructor through _cg_build();
    executing the file and calling that does the build without a model or a GPU tensor.
    Returns (ok, seconds, error)."""
    t0 = time.time()
    os.environ["TORCH_EXTENSIONS_DIR"] = build_dir
    try:
        ns = {"__name__": "cutegen_exported"}
        exec(compile(open(path).read(), path, "exec"), ns)
        build = ns.get("_cg_build")
        if build is None:
            return False, time.time() - t0, "no _cg_build() in %s (not a cutegen export?)" % path
        build()
        return True, time.time() - t0, ""
    except Exception as e:  # noqa: BLE001 - reported per file
        return False, time.time() - t0, "%s: %s" % (type(e).__name__, str(e)[:300])


def find_problem(problems, name):
    hits = glob.glob(os.path.join(problems, "level*", name))
    return hits[0] if hits else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernelbench-src", required=True)
    ap.add_argument("--problems", required=True)
    ap.add_argument("--exported", required=True)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--perf-trials", type=int, default=100)
    ap.add_argument("--limit", type=int, default=0, help="judge at most this many kernels")
    ap.add_argument("--jobs", type=int, default=8, help="load_inline builds at once, before judging")
    ap.add_argument("--out", help="write the rows as JSON here")
    ap.add_argument("--prebuild-only", action="store_true",
                    help="only build the extensions (CPU work; a later run finds them built)")
    a = ap.parse_args()
    sys.path.insert(0, os.path.abspath(a.kernelbench_src))
    stub_missing_modules()
    import torch
    from kernelbench import eval as kb_eval
    index = sorted(json.load(open(os.path.join(a.exported, "index.json"))), key=lambda e: e["problem"])
    if a.limit:
        index = index[:a.limit]
    # load_inline builds take most of a minute each: build them all at once first (the
    # judging below finds them in the same build directories).
    t0 = time.time()
    import concurrent.futures
    with concurrent.futures.ProcessPoolExecutor(a.jobs) as pool:
        futs = [pool.submit(prebuild_one, os.path.join(a.exported, e["file"]), build_dir_of(e)) for e in index]
        results = [f.result() for f in futs]
    built = [ok for ok, _s, _e in results]
    for e, (ok, secs, err) in zip(index, results):
        if not ok:
            print("prebuild of %s failed after %.0f s: %s" % (e["file"], secs, err))
    print("prebuilt %d of %d ModelNew extensions in %.0f s" % (sum(built), len(built), time.time() - t0))
    if a.prebuild_only:
        return
    rows = []
    print("%-44s %-8s %10s %10s %8s %8s %7s" % ("problem", "correct", "kb us", "ref us",
                                              "kb x", "cutegen x", "ratio"))
    for e in index:
        ref_path = find_problem(a.problems, e["problem"])
        if not ref_path:
            print("%-44s no problem file under %s" % (e["problem"], a.problems))
            continue
        t0 = time.time()
        try:
            r = kb_eval.eval_kernel_against_ref(
                open(ref_path).read(), open(os.path.join(a.exported, e["file"])).read(),
                seed_num=42, num_correct_trials=a.trials, num_perf_trials=a.perf_trials,
                measure_performance=True, backend="cuda", device=torch.device("cuda:0"),
                build_dir=build_dir_of(e),
                check_for_excessive_speedup=True)
            ok = bool(r and r.correctness)
            kb_speedup = r.ref_runtime / r.runtime if ok and r.runtime > 0 and r.ref_runtime > 0 else None
            row = {"problem": e["problem"], "compiled": bool(r and r.compiled), "correct": ok,
                   "runtime_us": getattr(r, "runtime", None), "ref_runtime_us": getattr(r, "ref_runtime", None),
                   "kernelbench_speedup": kb_speedup, "cutegen_speedup": e.get("speedup_eager"),
                   "metadata": {k: str(v)[:300] for k, v in (getattr(r, "metadata", {}) or {}).items()},
                   "seconds": time.time() - t0}
        except Exception as ex:  # noqa: BLE001 - one problem's failure is a row, not the end
            row = {"problem": e["problem"], "correct": False, "error": "%s: %s" % (type(ex).__name__, str(ex)[:300]),
                   "cutegen_speedup": e.get("speedup_eager"), "seconds": time.time() - t0}
        rows.append(row)
        ks, cs = row.get("kernelbench_speedup"), row.get("cutegen_speedup")
        print("%-44s %-8s %10s %10s %8s %8s %7s%s" % (
            row["problem"][:44], "yes" if row["correct"] else "NO",
            "%.1f" % row["runtime_us"] if row.get("runtime_us") else "-",
            "%.1f" % row["ref_runtime_us"] if row.get("ref_runtime_us") else "-",
            "%.3f" % ks if ks else "-", "%.3f" % cs if cs else "-",
            "%.3f" % (ks / cs) if ks and cs else "-",
            ("  " + row.get("error", "")) if row.get("error") else ""), flush=True)
        torch.cuda.empty_cache()
    pairs = [r["kernelbench_speedup"] / r["cutegen_speedup"] for r in rows
             if r.get("kernelbench_speedup") and r.get("cutegen_speedup")]
    if pairs:
        pairs.sort()
        print("KernelBench/cutegen speedup ratio over %d kernels: median %.3f, min %.3f, max %.3f"
              % (len(pairs), pairs[len(pairs) // 2], pairs[0], pairs[-1]))
    print("%d of %d exported kernels correct under KernelBench's eval"
          % (sum(1 for r in rows if r["correct"]), len(rows)))
    if a.out:
        json.dump(rows, open(a.out, "w"), indent=1)


main()
