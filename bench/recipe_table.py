#!/usr/bin/env python3
"""recipe_table.py: the built-in recipes' coverage and measured speed, one row a problem.

Builds the table of docs/recipes-h200.md over every KernelBench level-1 and level-2
problem: which recipe family covers it (or why none does, from `cutegen recipe --spec`
on its task spec) and, from one or more `cutegen report --format json` files, whether
it was correct, its speed-up over eager and torch.compile, its fraction of the speed of
light, its wall time, why it stopped, and which report the numbers come from. After the
table: a summary per level and overall (problems, covered, measured, correct, faster
than eager, geometric means of the speed-up over eager). No GPU needed; standard
library only.

    python3 bench/recipe_table.py --specs SPECS_DIR [--cutegen build/cutegen] \\
        [--report bench-report.json[:LABEL] ...] [--format md|json] > table.md
    python3 bench/recipe_table.py --coverage-from docs/recipes-h200.md [--report ...]

With --coverage-from, the coverage column is read from an earlier table of this script
(its 10-column rows) instead of from task specs: right only while the generator
recognises the same problems as when that table was made (a change of variants does not
matter; a change of recognition does).

SPECS_DIR holds SPECS_DIR/level1/*.json and SPECS_DIR/level2/*.json (tests/gpu/dump_specs.py
writes them on a GPU host). A later --report overrides an earlier one for the same
problem; LABEL (default: the file's name) goes into the "source" column. The reports must
come from one GPU (their kernelbench section's "hardware"), which the table names; reports
from two GPUs are refused. --other-report (same form, repeatable) gives another GPU's
reports (one GPU among them, not the table's): a covered problem the table's GPU has not
run then says, in its "stop" column, what the other GPU measured, and a second summary
counts those rows in (the first counts only the table's GPU). Bad input (a
missing spec directory, an unreadable or malformed report, a cutegen that cannot be run)
is one line on stderr and exit status 2.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys

PROG = "recipe_table.py"
LEVELS = (1, 2)
CUT = "cut by the sweep's time limit (partial)"
NUMERIC = ("speedup_eager", "speedup_compile", "sol_fraction", "wall_s")
COLUMNS = ("level", "problem", "covered: family or why not", "correct", "over eager",
           "over compile", "of SoL", "wall (build + tuning + judging)", "stop", "source")
ALIGN = ("---", "---", "---", "---", "---:", "---:", "---:", "---:", "---", "---")


class BadInput(Exception):
    pass


def warn(msg):
    print("%s: warning: %s" % (PROG, msg), file=sys.stderr)


def is_num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def leading_id(name):
    m = re.match(r"(\d+)_", name)
    return int(m.group(1)) if m else None


# --- task specs and coverage ---------------------------------------------------------

def find_specs(root):
    """[(level, id, name, spec path, None)]; the last is the coverage text where it is
    known without the spec (--coverage-from gives (level, id, name, None, text))."""
    if not os.path.isdir(root):
        raise BadInput("%s: no such directory (--specs)" % root)
    specs = []
    for level in LEVELS:
        d = os.path.join(root, "level%d" % level)
        if not os.path.isdir(d):
            continue
        try:
            names = os.listdir(d)
        except OSError as e:
            raise BadInput("%s: cannot list: %s" % (d, e.strerror or e))
        for f in names:
            if not f.endswith(".json"):
                continue
            name = f[:-len(".json")]
            pid = leading_id(name)
            if pid is None:
                warn("%s: the name does not start with a problem number: skipped"
                     % os.path.join(d, f))
                continue
            specs.append((level, pid, name, os.path.join(d, f), None))
    if not specs:
        raise BadInput("%s: no task specs (expected %s/level1/*.json, %s/level2/*.json)"
                       % (root, root, root))
    return specs


def coverage_from_table(path):
    """[(level, id, name, covered_text)] from the 10-column rows of an earlier table."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise BadInput("%s: cannot read: %s (--coverage-from)" % (path, e.strerror or e))
    out, seen = [], set()
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != len(COLUMNS) or cells[0] not in ("1", "2"):
            continue
        pid = leading_id(cells[1])
        if pid is None or (int(cells[0]), pid) in seen:
            continue
        seen.add((int(cells[0]), pid))
        out.append((int(cells[0]), pid, cells[1], cells[2]))
    if not out:
        raise BadInput("%s: no table rows of %d columns (--coverage-from): give a table this "
                       "script wrote (docs/recipes-h200.md), or the task specs with --specs"
                       % (path, len(COLUMNS)))
    return out


def coverage(cutegen, spec):
    """(covered, text): the family, or "no: WHY"."""
    try:
        p = subprocess.run([cutegen, "recipe", "--spec", spec], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True,
                           errors="replace", timeout=300)
    except OSError as e:
        raise BadInput("%s: cannot run: %s (--cutegen)" % (cutegen, e.strerror or e))
    except subprocess.TimeoutExpired:
        warn("%s recipe --spec %s: no answer in 300 s" % (cutegen, spec))
        return False, "no: recipe error"
    lines = p.stdout.splitlines()
    family = next((l[len("family: "):].strip() for l in lines if l.startswith("family: ")), None)
    why = next((l[len("not covered: "):].strip() for l in lines
                if l.startswith("not covered: ")), None)
    if p.returncode == 0 and family:
        return True, family
    if p.returncode == 1 and why:
        return False, "no: " + why
    last = (p.stderr.strip().splitlines() or ["no output"])[-1]
    warn("%s recipe --spec %s: exit %d: %s" % (cutegen, spec, p.returncode, last))
    return False, "no: recipe error"


# --- reports -------------------------------------------------------------------------

def split_report_arg(arg):
    """FILE[:LABEL]; a FILE that exists as given wins over a split at a colon."""
    if os.path.exists(arg) or ":" not in arg:
        return arg, os.path.basename(arg)
    path, label = arg.split(":", 1)
    return path, label or os.path.basename(path)


def load_report(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise BadInput("%s: cannot read the report: %s" % (path, e.strerror or e))
    except ValueError as e:
        raise BadInput("%s: not JSON (%s)" % (path, e))
    if not isinstance(doc, dict) or not isinstance(doc.get("problems"), list):
        raise BadInput('%s: not a `cutegen report --format json` file (no "problems" list)'
                       % path)
    rows = {}
    for i, p in enumerate(doc["problems"]):
        where = "%s: problems[%d]" % (path, i)
        if not isinstance(p, dict):
            raise BadInput("%s is not an object" % where)
        level = p.get("level")
        if not isinstance(level, int) or isinstance(level, bool):
            raise BadInput('%s has no integer "level"' % where)
        pid = p.get("problem_id")
        name = p.get("problem")
        if name is not None and not isinstance(name, str):
            raise BadInput('%s: "problem" is not a string' % where)
        if pid is None and name:
            pid = leading_id(name)
        if not isinstance(pid, int) or isinstance(pid, bool):
            raise BadInput('%s has no integer "problem_id"' % where)
        if p.get("correct") not in (True, False, None):
            raise BadInput('%s: "correct" is not true, false or null' % where)
        for k in NUMERIC:
            if p.get(k) is not None and (not isinstance(p[k], (int, float))
                                         or isinstance(p[k], bool)):
                raise BadInput('%s: "%s" is not a number' % (where, k))
        if p.get("stop_reason") is not None and not isinstance(p["stop_reason"], str):
            raise BadInput('%s: "stop_reason" is not a string' % where)
        v = p.get("verdicts")
        if v is not None and not isinstance(v, dict):
            raise BadInput('%s: "verdicts" is not an object' % where)
        rows[(level, pid)] = p
    return rows


def load_reports(args):
    """[(label, rows)] of FILE[:LABEL] arguments, in order, and the one GPU they were
    measured on (one_gpu)."""
    reports, paths = [], []
    for arg in args:
        path, label = split_report_arg(arg)
        reports.append((label, load_report(path)))
        paths.append(path)
    return reports, one_gpu(paths)


def report_gpus(path):
    """The GPUs a report's measurements ran on: the "hardware" of its kernelbench
    section's samples (`cutegen report` writes the GPU's name there), blanks left out."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    names = set()
    results = (doc.get("kernelbench") or {}).get("eval_results") or {}
    for level in results.values() if isinstance(results, dict) else ():
        for samples in level.values() if isinstance(level, dict) else ():
            for sample in samples if isinstance(samples, list) else ():
                hw = ((sample or {}).get("metadata") or {}).get("hardware")
                if isinstance(hw, str) and hw.strip():
                    names.add(hw.strip())
    return names


def one_gpu(paths):
    """The one GPU all the reports were measured on (None when none says): a table's
    speed-ups and fractions of the speed of light are one GPU's, so reports from two
    GPUs are refused rather than mixed."""
    seen = {}
    for path in paths:
        for name in report_gpus(path):
            seen.setdefault(name, []).append(os.path.basename(path))
    if len(seen) > 1:
        raise BadInput("the reports come from more than one GPU (%s): a table is one GPU's; "
                       "leave out the reports of the others" % "; ".join(
                           "%s: %s" % (name, ", ".join(files)) for name, files in sorted(seen.items())))
    return next(iter(seen), None)


def stop_text(p):
    """cutegen's stop_reason, shortened for the table."""
    if p.get("correct") is False and not (p.get("verdicts") or {}).get("ok"):
        return "no variant correct"
    s = " ".join((p.get("stop_reason") or "").split())
    if not s:
        return CUT  # a run that never wrote its stop reason was stopped from outside
    if s.startswith("recipes: the best built-in variant"):
        return "searched"
    if s.startswith("recipes: no variant was correct"):
        return "no variant correct"
    if "per-problem limit" in s:
        return "cut by the per-problem time limit (partial)"
    if re.search(r"\bcut\b|time limit|\bkilled\b", s, re.I):
        return CUT
    return s if len(s) <= 60 else s[:60] + "..."


# --- the table -----------------------------------------------------------------------

def measurements(reports):
    """(level, id) -> (row, label) over reports in order: a later report wins, but a row
    that judged nothing (the sweep ended before it) replaces nothing."""
    measured = {}
    for label, rows in reports:
        for key, p in rows.items():
            if p.get("correct") is not True and judged_nothing(p):
                continue
            measured[key] = (p, label)
    return measured


def other_text(gpu, p, label):
    """The stop column of a problem this table's GPU has not run but another has."""
    if p.get("correct") is True:
        what = "correct, %s over eager, %s over compile" % (
            fmt(p.get("speedup_eager"), lambda x: "%.3fx" % x),
            fmt(p.get("speedup_compile"), lambda x: "%.3fx" % x))
    else:
        what = "no variant correct"
    return "not run on this GPU; on the %s: %s (%s)" % (gpu or "other GPU", what, label)


def build_rows(specs, cutegen, reports, others=(), other_gpu=None):
    measured = measurements(reports)
    elsewhere = measurements(others)
    out = []
    seen = set()
    for level, pid, name, path, known in specs:
        if known is not None:  # --coverage-from: the earlier table's text
            what = known
            covered = not what.startswith("no:") and not what.startswith("- ")
        else:
            covered, what = coverage(cutegen, path)
        r = make_row(level, pid, name, covered, what, measured.get((level, pid)))
        o = elsewhere.get((level, pid))
        if o is not None and covered and not r["measured"]:
            p, label = o
            r["other"] = {"gpu": other_gpu, "correct": p.get("correct"), "source": label,
                          "speedup_eager": p.get("speedup_eager") if is_num(p.get("speedup_eager")) else None,
                          "speedup_compile": p.get("speedup_compile") if is_num(p.get("speedup_compile")) else None}
            r["stop"] = other_text(other_gpu, p, label)
        out.append(r)
        seen.add((level, pid))
    for (level, pid), (p, label) in measured.items():
        if (level, pid) in seen:
            continue
        name = p.get("problem") or "%d_" % pid
        if name.endswith(".py"):
            name = name[:-3]
        warn("level %d problem %d (%s) is in report %s but has no task spec"
             % (level, pid, name, label))
        out.append(make_row(level, pid, name, False, "- (no task spec)", (p, label)))
    out.sort(key=lambda r: (r["level"], r["problem_id"], r["problem"]))
    return out


def judged_nothing(p):
    """True when a report row carries verdicts and every count is zero: the sweep ended
    before judging it (level 2's 16, 26 and 100 in the 12-03 19:30 sweep), so it is not
    a measurement (not run, rather than wrong)."""
    v = p.get("verdicts")
    return isinstance(v, dict) and bool(v) and not any(isinstance(n, (int, float)) and n for n in v.values())


def make_row(level, pid, name, covered, what, m):
    # a problem the recipes do not cover appears in a sweep's report as a run that
    # stopped at once ("not covered"): that is not a measurement
    if m is not None and not covered and m[0].get("correct") is not True:
        m = None
    r = {"level": level, "problem_id": pid, "problem": name, "covered": covered,
         "family": what if covered else None,
         "not_covered": None if covered else re.sub(r"^no: ", "", what),
         "covered_text": what, "measured": m is not None, "correct": None,
         "speedup_eager": None, "speedup_compile": None, "sol_fraction": None,
         "wall_s": None, "stop_reason": None, "source": None, "other": None}
    if m is None:
        r["stop"] = "not run on the GPU" if covered else "not covered"
        return r
    p, label = m
    r["correct"] = p.get("correct")
    for k in NUMERIC:
        r[k] = p.get(k) if is_num(p.get(k)) else None
    r["stop_reason"] = p.get("stop_reason")
    r["stop"] = stop_text(p)
    r["source"] = label
    return r


def fmt(x, f):
    return f(x) if is_num(x) else "-"


def cell(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def md_row(r):
    correct = {True: "yes", False: "no"}.get(r["correct"], "-")
    cells = (r["level"], r["problem"], r["covered_text"], correct,
             fmt(r["speedup_eager"], lambda x: "%.3fx" % x),
             fmt(r["speedup_compile"], lambda x: "%.3fx" % x),
             fmt(r["sol_fraction"], lambda x: "%.1f%%" % (100 * x)),
             fmt(r["wall_s"], lambda x: "%.0f s" % x),
             r["stop"], r["source"] if r["source"] is not None else "-")
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def with_other(r):
    """The row as if the other GPU's measurement were this one's (for the second summary)."""
    o = r.get("other")
    if not o:
        return r
    return dict(r, measured=True, correct=o["correct"], speedup_eager=o["speedup_eager"])


def summarize(rows):
    def one(rs):
        good = [r["speedup_eager"] for r in rs
                if r["correct"] is True and is_num(r["speedup_eager"]) and r["speedup_eager"] > 0]
        return {"problems": len(rs),
                "covered": sum(1 for r in rs if r["covered"]),
                "measured": sum(1 for r in rs if r["measured"]),
                "correct": sum(1 for r in rs if r["correct"] is True),
                "faster_than_eager": sum(1 for x in good if x > 1),
                "geomean_eager_all": geomean(good + [1.0] * (len(rs) - len(good))),
                "geomean_eager_correct": geomean(good)}
    s = {}
    for level in sorted({r["level"] for r in rows}):
        s[str(level)] = one([r for r in rows if r["level"] == level])
    s["all"] = one(rows)
    return s


def print_summary(summary):
    print("| level | problems | covered | measured on the GPU | correct | faster than eager "
          "| geomean over eager, all (1.0x where not covered, not run or wrong) "
          "| geomean over eager, correct ones |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for level, s in summary.items():
        print("| %s | %d | %d | %d | %d | %d | %s | %s |" % (
            level, s["problems"], s["covered"], s["measured"], s["correct"],
            s["faster_than_eager"], fmt(s["geomean_eager_all"], lambda x: "%.3fx" % x),
            fmt(s["geomean_eager_correct"], lambda x: "%.3fx" % x)))


def print_md(rows, summary, gpu=None, summary_other=None, other_gpu=None):
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "|".join(ALIGN) + "|")
    for r in rows:
        print(md_row(r))
    print()
    if gpu:
        print("Measured on: %s (the reports' hardware)." % gpu)
        print()
    print_summary(summary)
    if summary_other is not None:
        n = sum(1 for r in rows if r.get("other"))
        print()
        print("With the %d rows this GPU has not run counted as the %s measured them "
              "(--other-report; two GPUs' speed-ups in one mean):" % (n, other_gpu or "other GPU"))
        print()
        print_summary(summary_other)


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(
        prog=PROG, description="The built-in recipes' coverage and measured speed over "
        "KernelBench levels 1 and 2, as a Markdown table (or JSON).")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--specs", metavar="DIR",
                     help="task specs: DIR/level1/*.json, DIR/level2/*.json")
    src.add_argument("--coverage-from", metavar="TABLE.md",
                     help="read the coverage column from an earlier table of this script "
                     "instead (no specs needed; right while recognition is unchanged)")
    ap.add_argument("--cutegen", metavar="BIN",
                    default=os.path.join(os.path.dirname(here), "build", "cutegen"),
                    help="the cutegen binary (default: build/cutegen of this checkout)")
    ap.add_argument("--report", action="append", default=[], metavar="FILE[:LABEL]",
                    help="a `cutegen report --format json` file (repeatable; a later one "
                    "overrides an earlier one for the same problem); LABEL goes into the "
                    "source column")
    ap.add_argument("--other-report", action="append", default=[], metavar="FILE[:LABEL]",
                    help="a report from another GPU (repeatable): shown only for covered "
                    "problems the --report GPU has not run, and counted in a second summary")
    ap.add_argument("--covered", action="append", default=[], metavar="LEVEL/ID=FAMILY",
                    help="with --coverage-from: a problem the recognition covers since that "
                    "table was written (1/95=rowloss); repeatable")
    ap.add_argument("--format", choices=("md", "json"), default="md")
    a = ap.parse_args(argv)
    try:
        reports, gpu = load_reports(a.report)
        others, other_gpu = load_reports(a.other_report)
        if gpu and other_gpu == gpu:
            raise BadInput("--other-report: those reports come from %s, the table's own GPU: "
                           "give them with --report" % gpu)
        if a.coverage_from:
            now = {}
            for c in a.covered:
                m = re.match(r"^([12])/(\d+)=(.+)$", c)
                if not m:
                    raise BadInput("--covered %r: give LEVEL/ID=FAMILY, e.g. 1/95=rowloss" % c)
                now[(int(m.group(1)), int(m.group(2)))] = m.group(3)
            specs = [(lv, pid, name, None, now.pop((lv, pid), what))
                     for lv, pid, name, what in coverage_from_table(a.coverage_from)]
            if now:
                raise BadInput("--covered: no such problem in %s: %s" % (
                    a.coverage_from, ", ".join("%d/%d" % k for k in now)))
        else:
            specs = find_specs(a.specs)
            if not (os.path.isfile(a.cutegen) and os.access(a.cutegen, os.X_OK)):
                raise BadInput("%s: not an executable file (--cutegen)" % a.cutegen)
        rows = build_rows(specs, a.cutegen, reports, others, other_gpu)
    except BadInput as e:
        print("%s: error: %s" % (PROG, e), file=sys.stderr)
        return 2
    summary = summarize(rows)
    summary_other = summarize([with_other(r) for r in rows]) if others else None
    if a.format == "json":
        for r in rows:
            del r["covered_text"]
        doc = {"rows": rows, "summary": summary, "gpu": gpu}
        if others:
            doc.update(summary_with_other=summary_other, other_gpu=other_gpu)
        json.dump(doc, sys.stdout, indent=1)
        print()
    else:
        print_md(rows, summary, gpu, summary_other, other_gpu)
    return 0


if __name__ == "__main__":
    sys.exit(main())
