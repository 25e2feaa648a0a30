#!/usr/bin/env python3
"""cutegen reference process: the one Python part of cutegen.

Problems *are* PyTorch programs, so one process per problem being judged loads the
problem with the user's PyTorch and, speaking JSON lines on stdin/stdout with the C
orchestrator, it:
  - describes the task (names, shapes, dtypes and strides of inputs, parameters, buffers
    and outputs; constructor arguments; the torch.fx graph where it traces; FLOPs and
    the minimum bytes moved);
  - makes trials: for a fresh seed, the problem's own inputs created directly on the GPU,
    the module's parameters, and the expected outputs; inputs and NaN-poisoned output
    buffers are copied into allocations of their own (cudaMalloc, nothing else in them)
    and shared with the worker by CUDA IPC handles; the expected outputs stay here;
  - checks a trial after the worker ran the candidate: outputs against the expected ones
    with dtype-aware tolerances, and inputs against their pristine copies;
  - times PyTorch eager and torch.compile the way the worker times candidates: L2
    flushed before each call, CUDA events around it, the whole device synchronised;
  - the final timing of a task's best kernel: loads the candidate's shared object into
    this process (ctypes), checks it on fresh inputs, then times it and PyTorch
    interleaved, round by round, so that drift and clocks hit both sides equally.
    Candidate code then lives in this process: the orchestrator retires the process
    after a final timing and starts a new one when it needs it again.

Nothing here copies trial tensors to the CPU or to disk. stdout carries the protocol
only: anything the problem prints goes to stderr. docs/protocol.md describes messages.
"""

import argparse
import copy
import ctypes
import ctypes.util
import glob
import hashlib
import importlib.util
import json
import math
import os
import re
import statistics
import sys
import time
import traceback

PROTO = None  # the protocol stream (the original stdout)

EXIT_BAD_TASK = 3
EXIT_NO_GPU = 5
EXIT_NO_TORCH = 7
EXIT_CANDIDATE = 9  # a candidate broke the CUDA context during a final timing


def strict_json(obj):
    """JSON has no NaN or infinity: such floats travel as the strings "nan", "inf", "-inf"."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {k: strict_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [strict_json(v) for v in obj]
    return obj


def send(obj):
    PROTO.write(json.dumps(strict_json(obj), separators=(",", ":"), allow_nan=False) + "\n")
    PROTO.flush()


def fail_startup(kind, message, code):
    send({"event": "error", "kind": kind, "message": message})
    sys.exit(code)


# --------------------------------------------------------------------------- cudart

def cudart_files(torch):
    """CUDA runtime libraries next to torch (its wheels' nvidia packages) and in the toolkit."""
    names = []
    torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    site = os.path.dirname(os.path.dirname(torch.__file__))
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or ""
    for pattern in (os.path.join(site, "nvidia", "cu*", "lib", "libcudart.so*"),
                    os.path.join(site, "nvidia", "cuda_runtime", "lib", "libcudart.so*"),
                    os.path.join(torch_lib, "libcudart*.so*"),
                    os.path.join(cuda_home, "lib64", "libcudart.so*") if cuda_home else "",
                    "/usr/local/cuda/lib64/libcudart.so*",
                    "/usr/local/cuda/targets/x86_64-linux/lib/libcudart.so*",
                    "/usr/local/cuda/targets/sbsa-linux/lib/libcudart.so*"):
        if pattern:
            names.extend(sorted(glob.glob(pattern)))
    return names


class CudaRuntime:
    """The CUDA runtime through ctypes: plain cudaMalloc allocations and IPC handles.

    torch's caching allocator packs many tensors into one allocation, and an IPC handle
    opens the whole allocation; so every shared buffer is a cudaMalloc of its own.
    The driver's primary context is shared with torch, so torch can read these buffers.
    """

    def __init__(self, torch):
        self.lib = self._load(torch)
        self.lib.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
        self.lib.cudaFree.argtypes = [ctypes.c_void_p]
        self.lib.cudaIpcGetMemHandle.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
        self.lib.cudaGetErrorName.restype = ctypes.c_char_p
        self.lib.cudaSetDevice.argtypes = [ctypes.c_int]

    @staticmethod
    def _load(torch):
        names = cudart_files(torch)
        found = ctypes.util.find_library("cudart")
        if found:
            names.append(found)
        errors = []
        for name in names:
            try:
                return ctypes.CDLL(name)
            except OSError as e:
                errors.append(str(e))
        raise RuntimeError("cannot load the CUDA runtime (libcudart.so) next to torch or in "
                           "/usr/local/cuda; tried: " + ", ".join(names or ["nothing found"]))

    def check(self, rc, what):
        if rc != 0:
            name = self.lib.cudaGetErrorName(rc).decode()
            raise RuntimeError(f"{what} failed: {name}")

    def malloc(self, nbytes):
        ptr = ctypes.c_void_p()
        self.check(self.lib.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(max(nbytes, 1))),
                   f"cudaMalloc({nbytes})")
        return ptr.value

    def free(self, ptr):
        self.check(self.lib.cudaFree(ctypes.c_void_p(ptr)), "cudaFree")

    def ipc_handle(self, ptr):
        buf = ctypes.create_string_buffer(64)
        self.check(self.lib.cudaIpcGetMemHandle(buf, ctypes.c_void_p(ptr)), "cudaIpcGetMemHandle")
        return buf.raw.hex()


class DeviceBuffer:
    """A cudaMalloc allocation seen by torch as a uint8 tensor (no copy)."""

    def __init__(self, torch, rt, nbytes):
        self.rt = rt
        self.nbytes = nbytes
        self.ptr = rt.malloc(nbytes)
        holder = type("Holder", (), {})()
        holder.__cuda_array_interface__ = {
            "shape": (max(nbytes, 1),), "typestr": "|u1", "data": (self.ptr, False),
            "version": 3, "strides": None}
        self.bytes = torch.as_tensor(holder, device="cuda")

    def view(self, torch, dtype, shape):
        t = self.bytes[: self.nbytes].view(dtype)
        return t.view(shape) if len(shape) else t.view(())

    def release(self):
        self.bytes = None
        if self.ptr:
            self.rt.free(self.ptr)
            self.ptr = 0


# --------------------------------------------------------------------------- the task

DTYPE_NAMES = {}


def dtype_name(torch, dt):
    if not DTYPE_NAMES:
        for n in ("float32", "float16", "bfloat16", "float64", "int64", "int32", "int16",
                  "int8", "uint8", "bool"):
            DTYPE_NAMES[getattr(torch, n)] = n
    if dt not in DTYPE_NAMES:
        raise TypeError(f"dtype {dt} is not in the cutegen ABI")
    return DTYPE_NAMES[dt]


def load_problem(path):
    spec = importlib.util.spec_from_file_location("cutegen_problem", path)
    if spec is None:
        raise ImportError(f"'{path}' is not a Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    missing = [n for n in ("Model", "get_inputs", "get_init_inputs") if not hasattr(module, n)]
    if missing:
        raise AttributeError("the problem defines no " + ", ".join(missing) +
                             " (a problem needs class Model(nn.Module), get_inputs() and "
                             "get_init_inputs(), as KernelBench's do)")
    return module


class Task:
    def __init__(self, torch, path, device):
        self.torch = torch
        self.path = path
        self.device = device
        with open(path, "rb") as f:
            self.source = f.read()
        self.module = load_problem(path)

    def seed(self, seed):
        self.torch.manual_seed(seed)
        self.torch.cuda.manual_seed_all(seed)

    def make_model(self, seed):
        """The module, its constructor arguments, with parameters made from seed, on the GPU."""
        torch = self.torch
        self.seed(seed)
        with torch.device(self.device):
            init = self.module.get_init_inputs()
            model = self.module.Model(*init)
        return model.to(self.device).eval(), init

    def make_inputs(self, seed):
        torch = self.torch
        self.seed(seed)
        with torch.device(self.device):
            inputs = self.module.get_inputs()
        out = []
        for x in inputs:
            if isinstance(x, torch.Tensor):
                out.append(x.to(self.device))
            elif isinstance(x, (bool, int, float)):
                out.append(x)
            else:
                raise TypeError(f"get_inputs() returned a {type(x).__name__}; cutegen supports "
                                "tensors and Python numbers")
        return out

    @staticmethod
    def outputs_of(result, torch):
        outs = list(result) if isinstance(result, (tuple, list)) else [result]
        for o in outs:
            if not isinstance(o, torch.Tensor):
                raise TypeError(f"forward() returned a {type(o).__name__}; cutegen needs tensors")
        return outs

    def state(self, model):
        """Parameters and buffers in state_dict order, as (name, kind, tensor)."""
        params = {id(p) for p in model.parameters()}
        items = []
        for name, t in model.state_dict(keep_vars=True).items():
            items.append((name, "param" if id(t) in params else "buffer", t))
        return items


def tensor_desc(torch, name, kind, t):
    if isinstance(t, torch.Tensor):
        return {"name": name, "kind": kind, "dtype": dtype_name(torch, t.dtype),
                "shape": list(t.shape), "stride": list(t.stride()),
                "bytes": t.numel() * t.element_size()}
    dt = "float32" if isinstance(t, float) else ("bool" if isinstance(t, bool) else "int64")
    return {"name": name, "kind": kind, "dtype": dt, "shape": [], "stride": [],
            "bytes": 4 if dt == "float32" else (1 if dt == "bool" else 8), "scalar": t}


def input_names(task, n):
    import inspect
    try:
        params = list(inspect.signature(task.module.Model.forward).parameters)[1:]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"input{i}" for i in range(n)]


def tensor_constant(torch, model, gm, target):
    """The one value of a tensor constant that tracing made an attribute of the graph
    module (`torch.tensor(0.5)` in forward() becomes get_attr '_tensor_constant0'), which is
    not among the model's parameters and buffers and so not an input: a float or int (a
    bool as 0 or 1), or None for anything else (a parameter, a buffer, a larger tensor, a
    value JSON cannot hold). The model's state is what counts: the graph module registers
    such a constant as a buffer of its own (torch.fx's _copy_attr)."""
    if target in dict(model.named_parameters()) or target in dict(model.named_buffers()):
        return None
    try:
        t = gm
        for part in target.split("."):
            t = getattr(t, part)
    except AttributeError:
        return None
    if not isinstance(t, torch.Tensor) or t.numel() != 1 or t.is_complex():
        return None
    v = t.item()
    if isinstance(v, bool):
        v = int(v)
    if isinstance(v, float) and not math.isfinite(v):
        return None  # JSON has no inf or NaN: not covered rather than a spec that does not parse
    return v if isinstance(v, (int, float)) else None


def fx_graph(torch, model):
    try:
        gm = torch.fx.symbolic_trace(model)
    except Exception as e:  # noqa: BLE001 - any tracing failure means "no graph"
        return None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]

    def arg(a):
        if isinstance(a, torch.fx.Node):
            return "%" + a.name
        if isinstance(a, (list, tuple)):
            return [arg(x) for x in a]
        if isinstance(a, dict):
            return {k: arg(v) for k, v in a.items()}
        if isinstance(a, (int, float, bool, str)) or a is None:
            return a
        return str(a)

    nodes = []
    for node in gm.graph.nodes:
        target = node.target
        if callable(target):
            target = getattr(target, "__module__", "") + "." + getattr(target, "__name__", str(target))
            target = target.lstrip(".")
        entry = {"name": node.name, "op": node.op, "target": str(target),
                 "args": arg(node.args), "kwargs": arg(node.kwargs)}
        if node.op == "get_attr":
            const = tensor_constant(torch, model, gm, str(node.target))
            if const is not None:
                entry["value"] = const
        if node.op == "call_module":
            sub = gm.get_submodule(node.target)
            entry["module"] = type(sub).__name__
            entry["module_repr"] = repr(sub)[:200]
            # the module's plain settings, which its repr may not show (the loss modules'
            # margin, p, eps, swap, reduction, ignore_index, label_smoothing)
            entry["module_attrs"] = {k: v for k, v in vars(sub).items()
                                     if not k.startswith("_") and isinstance(v, (bool, int, float, str))}
        nodes.append(entry)
    return nodes, None


def count_flops(torch, model, inputs):
    try:
        from torch.utils.flop_counter import FlopCounterMode
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            model(*inputs)
        return int(counter.get_total_flops())
    except Exception:  # noqa: BLE001 - FLOPs are advisory
        return None


def make_spec(task, seed):
    torch = task.torch
    model, init = task.make_model(seed)
    inputs = task.make_inputs(seed)
    with torch.no_grad():
        outputs = Task.outputs_of(model(*inputs), torch)
    torch.cuda.synchronize()
    names = input_names(task, len(inputs))
    tensors = [tensor_desc(torch, n, "input", x) for n, x in zip(names, inputs)]
    tensors += [tensor_desc(torch, n, k, t.detach()) for n, k, t in task.state(model)]
    outs = [tensor_desc(torch, f"output{i}" if len(outputs) > 1 else "output", "output", o)
            for i, o in enumerate(outputs)]
    graph, graph_error = fx_graph(torch, model)
    flops = count_flops(torch, model, inputs)
    min_bytes = sum(t["bytes"] for t in tensors) + sum(o["bytes"] for o in outs)

    def jsonable(v):
        try:
            json.dumps(v)
            return v
        except TypeError:
            return repr(v)

    spec = {"problem": os.path.abspath(task.path),
            "source_sha256": hashlib.sha256(task.source).hexdigest(),
            "inputs": tensors, "outputs": outs,
            "init_args": [jsonable(a) for a in init],
            "graph": graph, "graph_error": graph_error,
            "flops": flops, "min_bytes": min_bytes,
            "module_repr": repr(model)[:2000]}
    del model, inputs, outputs
    torch.cuda.empty_cache()
    return spec


# --------------------------------------------------------------------------- trials

def poison_(torch, t):
    """Fills with all-ones bits: NaN for floats, -1 for signed ints, max for uint8."""
    if t.numel():  # through a 1-D view: a 0-dim tensor cannot be viewed as bytes
        t.view(-1).view(torch.uint8).fill_(0xFF)


class strict_fp32:
    """Expected outputs are computed in true fp32: PyTorch runs fp32 convolutions on TF32
    tensor cores by default (torch.backends.cudnn.allow_tf32 is True), whose error
    (~1e-3 relative) is ten times the fp32 tolerance, so an exact fp32 kernel would be
    judged against a less exact reference. The eager baseline keeps PyTorch's defaults:
    it is timed as users run it (the report says which settings it had)."""

    def __init__(self, torch):
        self.b = torch.backends

    def __enter__(self):
        self.saved = (self.b.cudnn.allow_tf32, self.b.cuda.matmul.allow_tf32)
        self.b.cudnn.allow_tf32 = False
        self.b.cuda.matmul.allow_tf32 = False

    def __exit__(self, *exc):
        self.b.cudnn.allow_tf32, self.b.cuda.matmul.allow_tf32 = self.saved
        return False
def as_tensor(torch, x, device):
    """An input as the candidate gets it: a Python number becomes a 0-dim tensor (float as
    float32, bool as bool, int as int64); a tensor stays itself."""
    if isinstance(x, torch.Tensor):
        return x
    dt = torch.float32 if isinstance(x, float) else (
        torch.bool if isinstance(x, bool) else torch.int64)
    return torch.tensor(x, dtype=dt, device=device)


class Trial:
    def __init__(self, task, rt, seed):
        torch = task.torch
        self.task = task
        self.rt = rt
        self.seed = seed
        self.buffers = []
        model, _ = task.make_model(seed)
        inputs = task.make_inputs(seed)
        with torch.no_grad(), strict_fp32(torch):
            self.expected = [o.detach() for o in Task.outputs_of(model(*inputs), torch)]
        names = input_names(task, len(inputs))
        # what the candidate sees: forward()'s arguments, then parameters and buffers
        self.pristine = []  # (name, original tensor)
        for n, x in zip(names, inputs):
            self.pristine.append((n, as_tensor(torch, x, task.device)))
        for n, _kind, t in task.state(model):
            self.pristine.append((n, t.detach()))
        self.shared_inputs = []
        for n, x in self.pristine:
            buf = DeviceBuffer(torch, rt, x.numel() * x.element_size())
            self.buffers.append(buf)
            view = buf.view(torch, x.dtype, tuple(x.shape))
            view.copy_(x)
            self.shared_inputs.append((n, view, buf))
        self.shared_outputs = []
        for i, e in enumerate(self.expected):
            buf = DeviceBuffer(torch, rt, e.numel() * e.element_size())
            self.buffers.append(buf)
            view = buf.view(torch, e.dtype, tuple(e.shape))
            poison_(torch, view)
            name = f"output{i}" if len(self.expected) > 1 else "output"
            self.shared_outputs.append((name, view, buf))
        del model
        torch.cuda.synchronize()

    def describe(self):
        torch = self.task.torch

        def one(name, role, view, buf):
            return {"name": name, "role": role, "dtype": dtype_name(torch, view.dtype),
                    "shape": list(view.shape), "stride": list(view.stride()),
                    "bytes": buf.nbytes, "handle": self.rt.ipc_handle(buf.ptr), "offset": 0}

        return ([one(n, "input", v, b) for n, v, b in self.shared_inputs] +
                [one(n, "output", v, b) for n, v, b in self.shared_outputs])

    def release(self):
        self.shared_inputs = self.shared_outputs = self.expected = self.pristine = None
        for b in self.buffers:
            b.release()
        self.buffers = []
        self.task.torch.cuda.empty_cache()


def tolerances(dtype_str, atol, rtol):
    if atol is not None and rtol is not None:
        return atol, rtol
    low = dtype_str in ("float16", "bfloat16")
    a = 1e-2 if low else 1e-4
    return (atol if atol is not None else a), (rtol if rtol is not None else a)


def unravel(index, shape):
    out = []
    for dim in reversed(shape):
        out.append(index % dim if dim else 0)
        index //= dim if dim else 1
    return list(reversed(out))


CHUNK = 1 << 27  # elements compared at a time, to bound temporary memory


def compare_output(torch, name, got, want, atol, rtol, truth=None):
    """Error statistics of one output, computed on the GPU in chunks. With truth (the
    output computed in float64), got is compared with truth instead of want, and each
    element is allowed want's own error on top of the tolerance: |got - truth| <= atol +
    rtol |truth| + |want - truth|."""
    res = {"name": name, "dtype": dtype_name(torch, want.dtype), "shape": list(want.shape)}
    if got.shape != want.shape or got.dtype != want.dtype:
        res.update(ok=False, message=f"{name}: shape/dtype {list(got.shape)} {got.dtype} "
                                     f"expected {list(want.shape)} {want.dtype}")
        return res
    floating = want.is_floating_point()
    a_tol, r_tol = tolerances(res["dtype"], atol, rtol) if floating else (0.0, 0.0)
    g, w = got.reshape(-1), want.reshape(-1)
    tr = truth.reshape(-1) if truth is not None else None
    n = w.numel()
    ref_err = 0.0
    max_abs = 0.0
    max_rel = 0.0
    sum_abs = 0.0
    bad = 0
    nan = 0
    first_bad = None
    for start in range(0, n, CHUNK):
        gc, wc = g[start:start + CHUNK], w[start:start + CHUNK]
        if floating:
            gd, wd = gc.double(), wc.double()
            slack = 0.0
            if tr is not None:
                td = tr[start:start + CHUNK].double()
                slack = torch.nan_to_num((wd - td).abs(), nan=0.0, posinf=0.0)
                ref_err = max(ref_err, float(slack.max())) if slack.numel() else ref_err
                wd = torch.where(torch.isnan(td), wd, td)
            diff = (gd - wd).abs()
            gnan = torch.isnan(gd)
            wnan = torch.isnan(wd)
            nan += int(gnan.sum())
            diff = torch.where(gnan | wnan, torch.full_like(diff, math.inf), diff)
            badmask = ~(diff <= a_tol + r_tol * wd.abs() + slack)
            finite = diff[torch.isfinite(diff)]
            if finite.numel():
                max_abs = max(max_abs, float(finite.max()))
                sum_abs += float(finite.sum())
                rel = finite / wd.abs()[torch.isfinite(diff)].clamp_min(1e-30)
                max_rel = max(max_rel, float(rel.max()))
            if not bool(torch.isfinite(diff).all()):
                max_abs = math.inf
        else:
            badmask = gc != wc
            diff = (gc.long() - wc.long()).abs() if wc.dtype != torch.bool else badmask.long()
            if diff.numel():
                max_abs = max(max_abs, float(diff.max()))
                sum_abs += float(diff.sum())
        nbad = int(badmask.sum())
        if nbad and first_bad is None:
            idx = start + int(badmask.nonzero()[0, 0])
            first_bad = {"index": unravel(idx, list(want.shape)),
                         "got": float(g[idx]), "expected": float(w[idx])}
        bad += nbad
    res.update(ok=bad == 0, max_abs_err=max_abs, mean_abs_err=(sum_abs / n if n else 0.0),
               max_rel_err=max_rel, bad_count=bad, nan_count=nan, numel=n,
               atol=a_tol, rtol=r_tol)
    if tr is not None:
        res.update(against="float64", reference_max_abs_err=ref_err)
    if bad:
        fb = first_bad
        res["first_bad"] = fb
        what = "NaN (never written?)" if math.isnan(fb["got"]) else f"{fb['got']:.6g}"
        vs = (f" against the float64 reference, PyTorch's float32 result being off by up to "
              f"{ref_err:.3g}" if tr is not None else "")
        res["message"] = (f"{name}: {bad} of {n} elements wrong (atol={a_tol:g}, rtol={r_tol:g}{vs}); "
                          f"max abs err {max_abs:.3g}, mean abs err {res['mean_abs_err']:.3g}; "
                          f"first at index {fb['index']}: got {what}, expected {fb['expected']:.6g}"
                          + (f"; {nan} NaN" if nan else ""))
    return res


def float64_outputs(task, seed, model=None, inputs=None):
    """The outputs of the model in float64 (parameters, buffers and floating inputs cast),
    for the seed's model and inputs: the truth a float32 result is judged against when it
    fails the tolerance against PyTorch's float32 result. None when the model cannot run
    in float64 (an op without a double kernel, out of memory)."""
    torch = task.torch
    try:
        if model is None:
            model, _ = task.make_model(seed)
            inputs = task.make_inputs(seed)
        m64 = copy.deepcopy(model).double()
        in64 = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                for x in inputs]
        with torch.no_grad():
            outs = [o.detach() for o in Task.outputs_of(m64(*in64), torch)]
        del m64, in64
        return outs
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        return None
    except (RuntimeError, TypeError, NotImplementedError):
        return None


def arbitrate(task, seed, res, outputs, expected, atol, rtol, model=None, inputs=None):
    """A float32 output that failed against PyTorch's float32 result is judged again
    against the float64 result, allowed PyTorch's own error on each element (a kernel more
    exact than the reference is not wrong for it). Inputs a kernel modified stay a failure;
    other dtypes are not arbitrated. Returns the (possibly new) check result."""
    torch = task.torch
    if res["pass"] or res.get("modified_inputs"):
        return res
    failed = [i for i, o in enumerate(res["outputs"]) if not o["ok"]]
    if any(expected[i].dtype != torch.float32 or "max_abs_err" not in res["outputs"][i] for i in failed):
        return res
    truths = float64_outputs(task, seed, model, inputs)
    if truths is None or len(truths) != len(expected) or any(
            t.shape != e.shape for t, e in zip(truths, expected)):
        res["arbitration"] = "the model could not be run in float64; the float32 verdict stands"
        return res
    outs = list(res["outputs"])
    for i in failed:
        name, got = outputs[i]
        outs[i] = compare_output(torch, name, got, expected[i], atol, rtol, truth=truths[i])
    del truths
    ok = all(o["ok"] for o in outs)
    msgs = [o["message"] for o in outs if not o["ok"]]
    return dict(res, ok=True, outputs=outs, message="; ".join(msgs), arbitration="float64", **{"pass": ok})


def check_outputs(torch, outputs, expected, inputs, pristine, atol, rtol):
    """The candidate's outputs against the expected ones, and the inputs it was given
    against their pristine originals (inputs=None: outputs only).
    outputs, inputs: [(name, tensor)]; expected, pristine: [tensor], in the same order."""
    torch.cuda.synchronize()
    outs = []
    for (name, got), want in zip(outputs, expected):
        outs.append(compare_output(torch, name, got, want, atol, rtol))
    modified = []
    for (name, view), orig in zip(inputs or [], pristine or []):
        a = view.reshape(-1).view(torch.uint8) if view.numel() else view
        b = orig.contiguous().reshape(-1).view(torch.uint8) if orig.numel() else orig
        if not torch.equal(a, b):
            modified.append(name)
    ok = all(o["ok"] for o in outs) and not modified
    msgs = [o["message"] for o in outs if not o["ok"]]
    if modified:
        msgs.append("inputs modified by the kernel: " + ", ".join(modified))
    return {"ok": True, "pass": ok, "outputs": outs, "modified_inputs": modified,
            "message": "; ".join(msgs)}


def check_trial(trial, atol, rtol):
    outputs = [(name, view) for name, view, _buf in trial.shared_outputs]
    res = check_outputs(trial.task.torch, outputs, trial.expected,
                        [(name, view) for name, view, _buf in trial.shared_inputs],
                        [orig for _name, orig in trial.pristine], atol, rtol)
    return arbitrate(trial.task, trial.seed, res, outputs, trial.expected, atol, rtol)


# --------------------------------------------------------------------------- timing

def summarize(times_ms):
    s = sorted(times_ms)
    return {"n": len(s), "mean_ms": statistics.fmean(s), "median_ms": statistics.median(s),
            "min_ms": s[0], "max_ms": s[-1],
            "std_ms": statistics.pstdev(s) if len(s) > 1 else 0.0}


_L2_RESET = []


def reset_persisting_l2(torch):
    """As the worker does before each flush: every persisting (evict-last) line in L2 put
    back to normal once the earlier calls are done, so that no kernel keeps its inputs in L2
    through the flush (cuCtxResetPersistingL2Cache, on the current context: torch's).
    CUTEGEN_L2_RESET=0 leaves them (tests/gpu/l2_persist.sh only)."""
    if os.environ.get("CUTEGEN_L2_RESET") == "0":
        return
    if not _L2_RESET:
        try:
            f = ctypes.CDLL("libcuda.so.1").cuCtxResetPersistingL2Cache
            f.restype = ctypes.c_int
        except (OSError, AttributeError):
            f = None
        _L2_RESET.append(f)
    if _L2_RESET[0] is not None:
        torch.cuda.synchronize()
        _L2_RESET[0]()


def timed_calls(torch, fn, iters, flush, stream, before=None):
    """The worker's method, call by call: (before(), untimed), persisting L2 lines put back
    to normal, flush L2 by writing a buffer larger than it, CUDA events on the stream around
    fn(), a device-wide sync (work that escapes the stream is waited for). Returns the event
    times in ms."""
    times = []
    for _ in range(iters):
        if before is not None:
            before()
        reset_persisting_l2(torch)
        flush.fill_(1)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record(stream)
        fn()
        end.record(stream)
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return times


def time_callable(torch, fn, warmup, iters, flush_bytes):
    """The worker's method: flush L2, events around the call, device-wide sync."""
    flush = torch.empty(flush_bytes // 4, dtype=torch.int32, device="cuda")
    stream = torch.cuda.current_stream()
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = timed_calls(torch, fn, iters, flush, stream)
    del flush
    return summarize(times)


def flush_size(torch):
    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 << 20)
    return max(4 * l2, 128 << 20)


def compile_model(torch, model, inputs):
    """torch.compile(model) (default mode), its first call (the compilation) done.
    Returns the compiled module and the seconds it took; raises what compiling raises."""
    t0 = time.time()
    compiled = torch.compile(model)
    compiled(*inputs)
    torch.cuda.synchronize()
    return compiled, time.time() - t0


def baseline(task, req):
    torch = task.torch
    seed = int(req.get("seed", 1234))
    warmup = int(req.get("warmup", 5))
    iters = int(req.get("iters", 100))
    model, _ = task.make_model(seed)
    inputs = task.make_inputs(seed)
    result = {"ok": True, "tf32": {"cudnn": bool(torch.backends.cudnn.allow_tf32),
                                   "matmul": bool(torch.backends.cuda.matmul.allow_tf32)}}
    with torch.no_grad():
        result["eager"] = time_callable(torch, lambda: model(*inputs), warmup, iters,
                                        flush_size(torch))
        compiled = None
        if req.get("compile", True):
            try:
                compiled, result["compile_seconds"] = compile_model(torch, model, inputs)
                result["compile"] = time_callable(torch, lambda: compiled(*inputs), warmup,
                                                  iters, flush_size(torch))
            except Exception as e:  # noqa: BLE001 - report, do not die
                result["compile_error"] = f"{type(e).__name__}: {str(e)[:300]}"
    model = inputs = compiled = None
    torch.cuda.empty_cache()
    return result


# --------------------------------------------------------------------------- final timing
#
# The best kernel of a task, timed once more side by side with PyTorch in this one
# process: the candidate's shared object is loaded with ctypes and called as the worker
# calls it (include/cutegen/abi.h), on fresh inputs, checked like a trial, then timed in
# rounds that alternate the kernel and PyTorch (ABBA), each side the worker's way.

CG_MAX_DIMS = 8
CG_DTYPES = {"float32": 0, "float16": 1, "bfloat16": 2, "float64": 3, "int64": 4, "int32": 5,
             "int16": 6, "int8": 7, "uint8": 8, "bool": 9}
CG_STATUS = {1: "CG_UNSUPPORTED: the kernel does not handle these shapes or dtypes",
             2: "CG_LAUNCH_FAILED", 3: "CG_BAD_WORKSPACE"}


class CgTensor(ctypes.Structure):
    """cg_tensor of include/cutegen/abi.h, field for field: a pointer, two int32, then two
    int64 arrays; no padding anywhere (8 + 4 + 4 + 64 + 64 = 144 bytes)."""
    _fields_ = [("data", ctypes.c_void_p),
                ("dtype", ctypes.c_int32),
                ("ndim", ctypes.c_int32),
                ("shape", ctypes.c_int64 * CG_MAX_DIMS),
                ("stride", ctypes.c_int64 * CG_MAX_DIMS)]


class FinalFailure(Exception):
    """A final timing that cannot give a number. kind: "candidate" (the kernel failed: a
    status other than CG_OK, a CUDA error) or "load" (its object does not load here).
    fatal: the CUDA context may be broken; this process must end after replying."""

    def __init__(self, kind, message, status=None, fatal=False):
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.fatal = fatal


_LOADED = []  # shared objects loaded here; ctypes never unloads them, and neither do we


def load_shared_object(torch, path):
    """dlopen(path), RTLD_NOW | RTLD_LOCAL. The candidate needs its CUDA runtime
    (libcudart.so.13 for nvcc 13) by soname; when the loader's path lacks it, it is loaded
    first from where torch's or the toolkit's is, and the loader then finds it by soname.
    cudart's symbols are versioned by soname, so the candidate binds to its own runtime
    even when torch brought another one."""
    mode = os.RTLD_NOW | os.RTLD_LOCAL
    try:
        lib = ctypes.CDLL(path, mode=mode)
        _LOADED.append(lib)
        return lib
    except OSError as e:
        m = re.search(r"(libcudart\.so[0-9.]*): cannot open shared object file", str(e))
        if not m:
            raise
        soname = m.group(1)
    for f in cudart_files(torch):
        base = os.path.basename(f)
        if base != soname and not base.startswith(soname + "."):
            continue
        try:
            _LOADED.append(ctypes.CDLL(f, mode=mode))
            lib = ctypes.CDLL(path, mode=mode)
            _LOADED.append(lib)
            return lib
        except OSError:
            continue
    raise OSError(f"{path} needs {soname}, which is not on the loader's path, next to torch or "
                  "in /usr/local/cuda; add its directory to LD_LIBRARY_PATH")


class Candidate:
    """A candidate's shared object, loaded into this process."""

    def __init__(self, torch, path):
        if ctypes.sizeof(CgTensor) != 16 + 16 * CG_MAX_DIMS:
            raise RuntimeError(f"cg_tensor is {ctypes.sizeof(CgTensor)} bytes here, not 144")
        try:
            self.lib = load_shared_object(torch, path)
        except OSError as e:
            raise FinalFailure("load", f"the kernel's shared object does not load in the "
                                       f"reference process: {e}") from e
        try:
            self.forward = self.lib.cg_forward
        except AttributeError:
            raise FinalFailure("candidate", "the kernel exports no cg_forward") from None
        self.forward.restype = ctypes.c_int
        self.forward.argtypes = [ctypes.POINTER(CgTensor), ctypes.c_int,
                                 ctypes.POINTER(CgTensor), ctypes.c_int,
                                 ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        self.workspace_bytes = getattr(self.lib, "cg_workspace_bytes", None)
        if self.workspace_bytes is not None:
            self.workspace_bytes.restype = ctypes.c_size_t
            self.workspace_bytes.argtypes = [ctypes.POINTER(CgTensor), ctypes.c_int]


def cg_tensor(torch, t):
    if t.dim() > CG_MAX_DIMS:
        raise ValueError(f"a tensor of {t.dim()} dimensions; the ABI carries at most {CG_MAX_DIMS}")
    ct = CgTensor()
    ct.data = t.data_ptr() or None
    ct.dtype = CG_DTYPES[dtype_name(torch, t.dtype)]
    ct.ndim = t.dim()
    for i, (n, st) in enumerate(zip(t.shape, t.stride())):
        ct.shape[i] = n
        ct.stride[i] = st
    return ct


class Binding:
    """The candidate bound to one set of tensors, as the worker binds it to a trial: the
    cg_tensor arrays and the workspace cg_workspace_bytes asks for. It holds every tensor
    it points at, so none is freed while calls can reach it."""

    def __init__(self, torch, cand, inputs, outputs, device):
        self.cand = cand
        self.inputs = inputs    # [(name, tensor)]: keep them alive
        self.outputs = outputs
        self.n_in, self.n_out = len(inputs), len(outputs)
        self.in_arr = (CgTensor * self.n_in)(*[cg_tensor(torch, t) for _, t in inputs]) \
            if inputs else None
        self.out_arr = (CgTensor * self.n_out)(*[cg_tensor(torch, t) for _, t in outputs]) \
            if outputs else None
        self.workspace = None
        self.ws_ptr = None
        self.ws_bytes = 0
        if cand.workspace_bytes is not None:
            n = int(cand.workspace_bytes(self.in_arr, self.n_in))
            if n > 0:
                # torch's allocator aligns blocks to 512 bytes; the ABI promises 256
                self.workspace = torch.empty(n, dtype=torch.uint8, device=device)
                self.ws_ptr = ctypes.c_void_p(self.workspace.data_ptr())
                self.ws_bytes = n

    def call(self, stream_handle):
        rc = self.cand.forward(self.in_arr, self.n_in, self.out_arr, self.n_out, self.ws_ptr,
                               self.ws_bytes, stream_handle)
        if rc != 0:
            raise FinalFailure("candidate", f"cg_forward returned {rc} "
                                            f"({CG_STATUS.get(rc, 'an unknown status')})", status=rc)


def is_cuda_error(e):
    text = str(e)
    return (type(e).__name__ in ("AcceleratorError", "CudaError") or "CUDA error" in text
            or "cudaError" in text or "CUDA_ERROR" in text)


def quantile(values, q):
    s = sorted(values)
    x = q * (len(s) - 1)
    lo = int(math.floor(x))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (x - lo)


def ratio_stats(side, kernel):
    """PyTorch's time over the kernel's, round by round: >1 means the kernel is faster."""
    rs = [(p / k) if k > 0 else math.inf for p, k in zip(side, kernel)]
    return {"median": statistics.median(rs), "min": min(rs), "max": max(rs),
            "q1": quantile(rs, 0.25), "q3": quantile(rs, 0.75), "rounds": rs}


def final(task, req):
    """The "final" request; see final_timing. A CUDA error once the candidate has run is
    the candidate's, and fatal: the context may be broken."""
    ran = []
    try:
        with task.torch.no_grad():
            result = final_timing(task, req, ran)
        task.torch.cuda.empty_cache()  # its tensors went with final_timing's frame
        return result
    except (FinalFailure, task.torch.cuda.OutOfMemoryError):
        raise
    except Exception as e:  # noqa: BLE001 - sorted into the candidate's and ours
        if ran and is_cuda_error(e):
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise FinalFailure("candidate", f"CUDA error once the kernel had run: {first}",
                               fatal=True) from e
        raise


def final_timing(task, req, ran):
    """Runs under torch.no_grad(). ran gets an entry once candidate code has run."""
    torch = task.torch
    t_start = time.time()
    seed = int(req.get("seed", 4243))
    warmup = max(0, int(req.get("warmup", 10)))
    iters = max(1, int(req.get("iters", 10)))
    rounds = max(1, int(req.get("rounds", 10)))
    atol, rtol = req.get("atol"), req.get("rtol")
    cand = Candidate(torch, str(req["so"]))

    model, _ = task.make_model(seed)
    inputs = task.make_inputs(seed)
    with strict_fp32(torch):
        expected = [o.detach() for o in Task.outputs_of(model(*inputs), torch)]
    # What the candidate is given, as in a trial: forward()'s arguments (numbers as 0-dim
    # tensors), then parameters and buffers in state_dict order, each copied densely into
    # an allocation of its own; outputs contiguous with the reference's shapes and dtypes.
    # PyTorch keeps the originals, which stay pristine for the input check.
    names = input_names(task, len(inputs))
    pristine = [(n, as_tensor(torch, x, task.device)) for n, x in zip(names, inputs)]
    pristine += [(n, t.detach()) for n, _kind, t in task.state(model)]
    kin = []
    for n, x in pristine:
        c = torch.empty(tuple(x.shape), dtype=x.dtype, device=task.device)
        c.copy_(x)
        kin.append((n, c))
    kout = []
    for i, e in enumerate(expected):
        o = torch.empty(tuple(e.shape), dtype=e.dtype, device=task.device)
        kout.append((f"output{i}" if len(expected) > 1 else "output", o))

    def poison_outputs():
        for _n, o in kout:
            poison_(torch, o)

    poison_outputs()
    stream = torch.cuda.current_stream()
    handle = ctypes.c_void_p(stream.cuda_stream)  # 0, the legacy default stream, is NULL
    torch.cuda.synchronize()
    ran.append(True)
    bind = Binding(torch, cand, kin, kout, task.device)

    def run_kernel():
        bind.call(handle)

    run_kernel()
    torch.cuda.synchronize()
    first = check_outputs(torch, kout, expected, kin, [x for _n, x in pristine], atol, rtol)
    first = arbitrate(task, seed, first, kout, expected, atol, rtol, model, inputs)
    if not first["pass"]:
        first.update(phase="first call", seed=seed)
        return first

    result = {"ok": True, "pass": True, "seed": seed, "rounds": rounds, "iters": iters,
              "warmup": warmup, "workspace_bytes": bind.ws_bytes}
    compiled = None
    if req.get("compile", True):
        try:
            compiled, result["compile_seconds"] = compile_model(torch, model, inputs)
        except Exception as e:  # noqa: BLE001 - report, do not die
            if is_cuda_error(e):
                raise
            result["compile_error"] = f"{type(e).__name__}: {str(e)[:300]}"
    sides = [("kernel", run_kernel, poison_outputs), ("eager", lambda: model(*inputs), None)]
    if compiled is not None:
        sides.append(("compile", lambda: compiled(*inputs), None))
    for _name, fn, _before in sides:
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
    flush = torch.empty(flush_size(torch) // 4, dtype=torch.int32, device=task.device)
    times = {name: [] for name, _fn, _b in sides}
    medians = {name: [] for name, _fn, _b in sides}
    orders = []
    for r in range(rounds):
        order = sides if r % 2 == 0 else sides[::-1]  # ABBA: K E C, C E K, K E C, ...
        orders.append([name for name, _fn, _b in order])
        for name, fn, before in order:
            ts = timed_calls(torch, fn, iters, flush, stream, before)
            times[name].extend(ts)
            medians[name].append(statistics.median(ts))
    del flush

    # The kernel's last timed call, on outputs poisoned just before it: a kernel that
    # skips work on repeated calls leaves NaN behind. (Inputs were checked after the
    # first call: PyTorch has run on the originals since.)
    last = check_outputs(torch, kout, expected, None, None, atol, rtol)
    last = arbitrate(task, seed, last, kout, expected, atol, rtol, model, inputs)
    if not last["pass"]:
        last.update(phase="last timed call", seed=seed)
        return last
    for name in times:
        result[name] = summarize(times[name])
    result["speedup"] = {name: ratio_stats(medians[name], medians["kernel"])
                         for name in times if name != "kernel"}
    result["round_medians"] = medians
    result["orders"] = orders
    result["check"] = {"outputs": first["outputs"]}
    result["seconds"] = time.time() - t_start
    return result


# --------------------------------------------------------------------------- main loop

def gpu_facts(torch):
    p = torch.cuda.get_device_properties(0)
    return {"name": p.name, "cc": f"{p.major}.{p.minor}", "sms": p.multi_processor_count,
            "memory_bytes": p.total_memory, "l2_bytes": getattr(p, "L2_cache_size", None)}


def serve(task, rt):
    torch = task.torch
    trials = {}
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except json.JSONDecodeError as e:
            send({"ok": False, "error": f"bad request: {e}"})
            continue
        op = req.get("op")
        try:
            if op == "spec":
                send({"ok": True, "spec": make_spec(task, int(req.get("seed", 42)))})
            elif op == "trial":
                tid = str(req["id"])
                t0 = time.time()
                trials[tid] = Trial(task, rt, int(req["seed"]))
                send({"ok": True, "id": tid, "tensors": trials[tid].describe(),
                      "seconds": time.time() - t0})
            elif op == "check":
                tid = str(req["id"])
                t0 = time.time()
                reply = check_trial(trials[tid], req.get("atol"), req.get("rtol"))
                reply["seconds"] = time.time() - t0
                send(reply)
            elif op == "free":
                trial = trials.pop(str(req["id"]), None)
                if trial:
                    trial.release()
                send({"ok": True})
            elif op == "baseline":
                send(baseline(task, req))
            elif op == "final":
                send(final(task, req))
            elif op == "quit":
                send({"ok": True})
                break
            else:
                send({"ok": False, "error": f"unknown op '{op}'"})
        except FinalFailure as e:
            send({"ok": False, "kind": e.kind, "error": str(e), "status": e.status,
                  "fatal": e.fatal})
            if e.fatal:  # the CUDA context may be broken: end here, without tearing it down
                PROTO.flush()
                os._exit(EXIT_CANDIDATE)
        except torch.cuda.OutOfMemoryError as e:
            send({"ok": False, "kind": "out_of_memory", "error": str(e).splitlines()[0]})
        except Exception as e:  # noqa: BLE001 - every failure goes back as a reply
            tb = traceback.format_exc(limit=6)
            send({"ok": False, "kind": "reference", "error": f"{type(e).__name__}: {e}",
                  "traceback": tb[-3000:]})
        finally:
            if op == "check":
                trial = trials.pop(str(req.get("id")), None)
                if trial:
                    trial.release()
    for trial in trials.values():
        trial.release()


def main():
    global PROTO
    PROTO = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything printed by the problem goes to stderr
    sys.stdout = sys.stderr
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", required=True)
    ap.add_argument("--device", type=int, default=0)
    args = ap.parse_args()
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        fail_startup("no_torch", f"python3 cannot import torch ({e}); install PyTorch with CUDA "
                     "(https://pytorch.org) or set CUTEGEN_PYTHON to a python that has it",
                     EXIT_NO_TORCH)
    if not torch.cuda.is_available():
        fail_startup("no_gpu", f"torch {torch.__version__} sees no CUDA GPU "
                     f"(torch.version.cuda={torch.version.cuda}); check nvidia-smi and that "
                     "this torch build has CUDA", EXIT_NO_GPU)
    torch.cuda.set_device(args.device)
    try:
        task = Task(torch, args.task, torch.device("cuda", args.device))
    except FileNotFoundError:
        fail_startup("no_file", f"problem file '{args.task}' does not exist", EXIT_BAD_TASK)
    except Exception as e:  # noqa: BLE001
        fail_startup("import", f"cannot load problem '{args.task}': {type(e).__name__}: {e}",
                     EXIT_BAD_TASK)
    rt = CudaRuntime(torch)
    rt.check(rt.lib.cudaSetDevice(args.device), "cudaSetDevice")
    send({"event": "ready", "torch": torch.__version__, "torch_cuda": torch.version.cuda,
          "python": sys.version.split()[0], "gpu": gpu_facts(torch), "pid": os.getpid()})
    serve(task, rt)


if __name__ == "__main__":
    main()
