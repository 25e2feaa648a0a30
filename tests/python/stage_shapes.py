#!/usr/bin/env python3
"""tests/python/stage_shapes.py: checks the intermediates of staged recipe plans against
an independent shape interpreter of the task spec's fx graph (no torch needed).

A staged plan (src/recipe_stage.c) cuts a graph after an fx node and hands that node's
value to the next stage through the workspace; the recogniser infers the value's shape
(the product's, what a reduction or pooling gives, or the stage input's). A wrong shape
gives a plan that compiles and runs but computes something else (a mean broadcast back
to its operand's shape and then summed). This script computes every node's shape the
way PyTorch defines it, from the spec's inputs and the modules' reprs, and compares each
intermediate `cutegen recipe --spec S` prints ("intermediate: 'name' float32 [...]", and the
views of it a stage reads or the output is).

usage: stage_shapes.py CUTEGEN SPEC.json [SPEC.json ...]
Prints one line per spec (ok / FAIL / not staged / unknown) and exits 1 on any FAIL.
"""
import json
import re
import subprocess
import sys


def bcast(*shapes):
    shapes = [s for s in shapes if s is not None]
    if not shapes:
        return None
    n = max(len(s) for s in shapes)
    out = []
    for d in range(n):
        dims = [s[len(s) - n + d] for s in shapes if len(s) - n + d >= 0]
        big = [x for x in dims if x != 1]
        if len(set(big)) > 1:
            raise ValueError("shapes %s do not broadcast" % shapes)
        out.append(big[0] if big else 1)
    return out


def tup(repr_, key, n, default):
    m = re.search(r"(?<![a-z_])" + key + r"=(\(([^)]*)\)|[0-9-]+|True|False)", repr_)
    if not m:
        return [default] * n
    if m.group(1) in ("True", "False"):
        return m.group(1) == "True"
    if m.group(2) is not None:
        return [int(v) for v in m.group(2).split(",") if v.strip()]
    return [int(m.group(1))] * n


def conv_shape(mod, repr_, x, w):
    dims = int(mod[-2])
    st = tup(repr_, "stride", dims, 1)
    pd = tup(repr_, "padding", dims, 0)
    dl = tup(repr_, "dilation", dims, 1)
    k = w[2:]
    if mod.startswith("ConvTranspose"):
        op = tup(repr_, "output_padding", dims, 0)
        sp = [(x[2 + d] - 1) * st[d] - 2 * pd[d] + dl[d] * (k[d] - 1) + op[d] + 1 for d in range(dims)]
        return [x[0], w[1]] + sp
    sp = [(x[2 + d] + 2 * pd[d] - dl[d] * (k[d] - 1) - 1) // st[d] + 1 for d in range(dims)]
    return [x[0], w[0]] + sp


def pool_shape(mod, repr_, x):
    n = int(mod[-2])
    if mod.startswith("Adaptive"):
        m = re.search(r"output_size=\(?([0-9, None]+)\)?", repr_)
        o = [v.strip() for v in m.group(1).split(",") if v.strip()]
        o = o * n if len(o) == 1 else o
        return x[:-n] + [x[len(x) - n + d] if o[d] == "None" else int(o[d]) for d in range(n)]
    k = tup(repr_, "kernel_size", n, None)
    st = tup(repr_, "stride", n, None)
    if st is None or st[0] is None:
        st = k
    pd = tup(repr_, "padding", n, 0)
    dl = tup(repr_, "dilation", n, 1) if mod.startswith("Max") else [1] * n
    ceil = tup(repr_, "ceil_mode", n, False) is True
    out = []
    for d in range(n):
        i = x[len(x) - n + d]
        num = i + 2 * pd[d] - dl[d] * (k[d] - 1) - 1
        o = (-(-num // st[d]) if ceil else num // st[d]) + 1
        if ceil and (o - 1) * st[d] >= i + pd[d]:
            o -= 1
        out.append(o)
    return x[:-n] + out


def reduce_shape(x, dim, keepdim):
    if dim is None:
        return [1] * len(x) if keepdim else []
    dims = dim if isinstance(dim, list) else [dim]
    dims = [d % len(x) for d in dims]
    if keepdim:
        return [1 if d in dims else s for d, s in enumerate(x)]
    return [s for d, s in enumerate(x) if d not in dims]


SAME = {"relu", "sigmoid", "tanh", "gelu", "silu", "mish", "hardswish", "hardtanh", "hardsigmoid", "softplus",
        "leaky_relu", "elu", "selu", "clamp", "clip", "exp", "log", "abs", "neg", "sqrt", "rsqrt", "erf",
        "softmax", "log_softmax", "cumsum", "cumprod", "dropout", "contiguous", "clone", "sin", "cos",
        "ReLU", "Sigmoid", "Tanh", "GELU", "SiLU", "Mish", "Hardswish", "Hardtanh", "LeakyReLU", "Softmax",
        "Dropout", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
        "InstanceNorm3d", "GroupNorm", "LayerNorm", "Identity", "LogSoftmax", "Softplus", "ELU", "SELU"}
BINARY = {"add", "sub", "mul", "truediv", "div", "pow", "maximum", "minimum", "rsub", "where", "multiply", "divide",
          "subtract"}
REDUCE = {"sum", "mean", "amax", "amin", "prod", "logsumexp", "argmax", "argmin", "norm", "std", "var"}


def arg(node, i, kw, default=None):
    a = node.get("args", [])
    if i < len(a):
        return a[i]
    return node.get("kwargs", {}).get(kw, default)


def shapes_of(spec):
    ins = spec["inputs"]
    by_name = {t["name"]: list(t["shape"]) for t in ins}
    val = {}
    k = 0

    def get(a):
        if isinstance(a, str) and a.startswith("%"):
            return val.get(a[1:])
        return None

    for node in spec["graph"]:
        op, name, target = node["op"], node["name"], node["target"]
        try:
            if op == "placeholder":
                val[name] = list(ins[k]["shape"]) if k < len(ins) else None
                k += 1
            elif op == "get_attr":
                val[name] = by_name.get(target)
            elif op == "output":
                continue
            elif op == "call_module":
                mod, repr_ = node.get("module", ""), node.get("module_repr", "")
                x = get(node["args"][0])
                if mod.startswith("Conv") and x is not None:
                    val[name] = conv_shape(mod, repr_, x, by_name[target + ".weight"])
                elif mod == "Linear":
                    val[name] = x[:-1] + [by_name[target + ".weight"][0]]
                elif "Pool" in mod:
                    val[name] = pool_shape(mod, repr_, x)
                elif mod in SAME:
                    val[name] = x
                else:
                    val[name] = None
            else:
                fn = target.rsplit(".", 1)[-1]
                a0 = get(arg(node, 0, "input"))
                if fn in BINARY or (fn in ("max", "min") and isinstance(arg(node, 1, "other"), str)
                                    and str(arg(node, 1, "other")).startswith("%")):
                    val[name] = bcast(*[get(a) for a in node["args"]])
                elif fn in ("max", "min"):
                    d = arg(node, 1, "dim")
                    val[name] = ("pair", reduce_shape(a0, d, bool(arg(node, 2, "keepdim", False)))) \
                        if d is not None else []
                elif fn == "scaled_dot_product_attention":
                    # softmax(q k^T * scale) v: the weights (..., L, S) under the name the
                    # recogniser's expansion gives them (src/recipe_expand.c)
                    q, kk, v = (get(a) for a in node["args"][:3])
                    val[name + "_weights"] = q[:-1] + [kk[-2]]
                    val[name] = q[:-1] + [v[-1]]
                elif fn == "getattr" and node["args"][1:] == ["shape"]:
                    val[name] = ("shape", a0)
                elif fn == "size" and op == "call_method":
                    d = arg(node, 1, "dim")
                    val[name] = ("shape", a0) if d is None else a0[d]
                elif fn == "getitem":
                    v = get(node["args"][0])
                    if isinstance(v, tuple) and v[0] == "shape":
                        val[name] = v[1][node["args"][1]]  # an entry of x.shape: a number
                    else:
                        val[name] = v[1] if isinstance(v, tuple) else None
                elif fn in REDUCE:
                    d = arg(node, 1, "dim")
                    val[name] = reduce_shape(a0, d, bool(arg(node, 2, "keepdim", False)))
                elif fn in SAME:
                    val[name] = a0
                elif fn == "squeeze":
                    d = arg(node, 1, "dim")
                    if d is None:
                        val[name] = [v for v in a0 if v != 1]
                    else:
                        d %= len(a0)
                        val[name] = [v for i, v in enumerate(a0) if i != d or v != 1]
                elif fn == "unsqueeze":
                    d = arg(node, 1, "dim") % (len(a0) + 1)
                    val[name] = a0[:d] + [1] + a0[d:]
                elif fn == "flatten":
                    s0 = arg(node, 1, "start_dim", 0) % len(a0)
                    s1 = arg(node, 2, "end_dim", -1) % len(a0)
                    n = 1
                    for v in a0[s0:s1 + 1]:
                        n *= v
                    val[name] = a0[:s0] + [n] + a0[s1 + 1:]
                elif fn in ("view", "reshape"):
                    dims = [get(d) if isinstance(d, str) else d for d in node["args"][1:]]
                    dims = [d[1] if isinstance(d, tuple) else d for d in dims]  # view(x.shape)
                    dims = dims[0] if len(dims) == 1 and isinstance(dims[0], list) else dims
                    n = 1
                    for s in a0:
                        n *= s
                    known = 1
                    for s in dims:
                        known *= s if s != -1 else 1
                    val[name] = [n // known if s == -1 else s for s in dims]
                elif fn == "linear":
                    val[name] = a0[:-1] + [get(node["args"][1])[0]]
                elif re.match(r"adaptive_(max|avg)_pool[123]d$", fn):
                    n = int(fn[-2])
                    o = arg(node, 1, "output_size")
                    o = o if isinstance(o, list) else [o] * n
                    val[name] = a0[:-n] + [a0[len(a0) - n + d] if o[d] is None else o[d] for d in range(n)]
                elif re.match(r"(max|avg)_pool[123]d$", fn):
                    n = int(fn[-2])
                    lst = lambda v, dflt: (v if isinstance(v, list) else [v] * n) if v not in (None, []) else dflt
                    k = lst(arg(node, 1, "kernel_size"), None)
                    st = lst(arg(node, 2, "stride"), k)
                    pd = lst(arg(node, 3, "padding"), [0] * n)
                    dl = lst(arg(node, 4, "dilation"), [1] * n) if fn.startswith("max") else [1] * n
                    ceil = bool(arg(node, 5 if fn.startswith("max") else 4, "ceil_mode", False))
                    rep = "kernel_size=(%s,), stride=(%s,), padding=(%s,), dilation=(%s,), ceil_mode=%s" % (
                        ",".join(map(str, k)), ",".join(map(str, st)), ",".join(map(str, pd)),
                        ",".join(map(str, dl)), ceil)
                    val[name] = pool_shape(("Max" if fn.startswith("max") else "Avg") + "Pool%dd" % n, rep, a0)
                elif fn in ("matmul", "mm", "bmm"):
                    b = get(node["args"][1])
                    val[name] = a0[:-1] + b[-1:]
                else:
                    val[name] = None
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            val[name] = None
    return val


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    cutegen, failures = argv[1], 0
    for path in argv[2:]:
        spec = json.load(open(path))
        spec = spec.get("spec", spec)
        r = subprocess.run([cutegen, "recipe", "--spec", path], capture_output=True, text=True)
        # every named shape on the lines that describe intermediates: "intermediate: 'conv'
        # float32 [..], ... (stage 1's input 0, read as 'unsqueeze' [..])" and "family: staged
        # (one plan, its output viewed: 'pool' [..] is the output 'squeeze' [..])"
        lines = [l for l in r.stdout.splitlines() if l.startswith("intermediate:") or
                 l.startswith("family: staged (one plan")]
        mids = [m for l in lines for m in re.findall(r"'([^']+)' (?:float32 )?\[([0-9, ]*)\]", l)]
        label = path.rsplit("/", 1)[-1]
        if not mids:
            print("not staged: %s" % label)
            continue
        want = shapes_of(spec)
        bad, unknown = [], 0
        for name, dims in mids:
            got = [int(v) for v in dims.split(",") if v.strip()]
            w = want.get(name)
            if w is None or isinstance(w, tuple):
                unknown += 1
            elif list(w) != got:
                bad.append("'%s' is %s, the graph gives %s" % (name, got, list(w)))
        if bad:
            failures += 1
            print("FAIL: %s: %s" % (label, "; ".join(bad)))
        elif unknown == len(mids):
            print("unknown: %s (no intermediate's shape could be computed)" % label)
        else:
            print("ok: %s: %d intermediates%s" % (label, len(mids), " (%d unknown)" % unknown if unknown else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
