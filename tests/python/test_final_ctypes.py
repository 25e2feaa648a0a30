#!/usr/bin/env python3
"""The final timing's ctypes side (python/cutegen_ref.py: CgTensor, Candidate, Binding,
load_shared_object) against a host-only stand-in candidate (final_abi.c), without torch
or a GPU: the struct layout matches include/cutegen/abi.h as the C compiler lays it out,
tensors, the workspace and the stream arrive as given, a status other than CG_OK is a
candidate failure, and a candidate whose CUDA runtime is off the loader's path is loaded
with the one found next to torch. Run by tests/cli/t0115-ref-final-ctypes.sh:

    test_final_ctypes.py SRC_DIR BUILD_DIR   (BUILD_DIR holds final_abi.so, noentry.so,
                                              needs_rt.so and site/nvidia/cu77/lib/)
"""
import ctypes
import math
import os
import sys

src, build = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "python"))
import cutegen_ref as ref  # noqa: E402


class DType:
    def __init__(self, name, size, ctype):
        self.name, self.size, self.ctype = name, size, ctype

    def __repr__(self):
        return "torch." + self.name


class FakeTensor:
    """What Binding reads of a torch tensor, over host memory."""

    def __init__(self, dtype, shape, stride=None, values=None):
        self.dtype = dtype
        self.shape = tuple(shape)
        n = 1
        for d in shape:
            n *= d
        self.buf = (dtype.ctype * max(n, 1))()
        if values is not None:
            for i, v in enumerate(values):
                self.buf[i] = v
        if stride is None:
            stride, acc = [], 1
            for d in reversed(shape):
                stride.insert(0, acc)
                acc *= d
        self._stride = tuple(stride)

    def data_ptr(self):
        return ctypes.addressof(self.buf)

    def dim(self):
        return len(self.shape)

    def stride(self):
        return self._stride


class FakeTorch:
    __file__ = os.path.join(build, "site", "torch", "__init__.py")
    float32 = DType("float32", 4, ctypes.c_float)
    float16 = DType("float16", 2, ctypes.c_uint16)
    bfloat16 = DType("bfloat16", 2, ctypes.c_uint16)
    float64 = DType("float64", 8, ctypes.c_double)
    int64 = DType("int64", 8, ctypes.c_int64)
    int32 = DType("int32", 4, ctypes.c_int32)
    int16 = DType("int16", 2, ctypes.c_int16)
    int8 = DType("int8", 1, ctypes.c_int8)
    uint8 = DType("uint8", 1, ctypes.c_uint8)
    bool = DType("bool", 1, ctypes.c_uint8)

    def empty(self, n, dtype, device):
        return FakeTensor(dtype, (n,))


torch = FakeTorch()
checks = 0


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        print("FAIL:", what)
        sys.exit(1)
    print("ok:", what)


# The layout, as the C compiler sees abi.h.
lib = ctypes.CDLL(os.path.join(build, "final_abi.so"))
lay = (ctypes.c_size_t * 6)()
lib.cg_test_layout(lay)
F = ref.CgTensor
check(list(lay) == [ctypes.sizeof(F), F.data.offset, F.dtype.offset, F.ndim.offset,
                    F.shape.offset, F.stride.offset] and lay[0] == 144,
      "CgTensor's size and offsets are cg_tensor's (%s)" % list(lay))
check(set(ref.CG_DTYPES) == {n for n in dir(FakeTorch) if isinstance(getattr(FakeTorch, n), DType)}
      and [ref.CG_DTYPES[n] for n in ("float32", "float16", "bfloat16", "float64", "int64",
                                      "int32", "int16", "int8", "uint8", "bool")] == list(range(10)),
      "dtype codes are cg_dtype's")

cand = ref.Candidate(torch, os.path.join(build, "final_abi.so"))
check(cand.workspace_bytes is not None, "cg_workspace_bytes is found when defined")
x = FakeTensor(torch.float32, (2, 3), values=[-1, 2, -3, 4, 5, -6])
k = FakeTensor(torch.float32, (), values=[2.0])
out = FakeTensor(torch.float32, (2, 3), values=[math.nan] * 6)
bind = ref.Binding(torch, cand, [("x", x), ("k", k)], [("output", out)], "cuda")
check(bind.ws_bytes == 6 * 4 + 13 and len(bind.workspace.buf) == 37,
      "the workspace is what cg_workspace_bytes asked for (%d)" % bind.ws_bytes)
bind.call(ctypes.c_void_p(0x1234))
seen = (ctypes.c_int64 * 64).in_dll(lib, "cg_test_seen")
# the candidate was loaded RTLD_LOCAL by Candidate; this CDLL of the same file is the same object
check(list(out.buf) == [0, 4, 0, 8, 10, 0], "outputs written through the data pointers (%s)" % list(out.buf))
check(all(b == 0x5a for b in bind.workspace.buf), "the workspace pointer reaches the kernel")
check(seen[0] == 2 and seen[1] == 1 and seen[2] == 0x1234 and seen[3] == 37 and seen[4] == 1,
      "counts, stream and workspace size arrive")
check(seen[8:16] == [0, 2, 2, 3, 0, 3, 1, 0], "input 0: float32, 2 dims, shape [2,3], stride [3,1]")
check(seen[16] == 0 and seen[17] == 0, "input 1: a 0-dim float32")
check(seen[40:44] == [0, 2, 2, 3], "output: float32 [2,3]")
bind.call(ctypes.c_void_p(0))
check(seen[2] == 0, "the default stream (handle 0) arrives as NULL")

t = FakeTensor(torch.int64, (3, 2), stride=(1, 3))
b2 = ref.Binding(torch, cand, [("t", t), ("k", k)], [("output", out)], "cuda")
try:
    b2.call(ctypes.c_void_p(0))
    check(False, "an unsupported input is refused")
except ref.FinalFailure as e:
    check(e.kind == "candidate" and e.status == 1 and "CG_UNSUPPORTED" in str(e),
          "a status other than CG_OK is a candidate failure: %s" % e)
check(seen[8:16] == [4, 2, 3, 2, 0, 1, 3, 0], "strides of a non-contiguous view arrive as they are")
ctypes.c_int.in_dll(lib, "cg_test_status").value = 2
try:
    bind.call(ctypes.c_void_p(0))
    check(False, "CG_LAUNCH_FAILED fails")
except ref.FinalFailure as e:
    check(e.status == 2 and "CG_LAUNCH_FAILED" in str(e) and not e.fatal, "CG_LAUNCH_FAILED: %s" % e)
ctypes.c_int.in_dll(lib, "cg_test_status").value = 0

try:
    ref.Candidate(torch, os.path.join(build, "noentry.so"))
    check(False, "no cg_forward")
except ref.FinalFailure as e:
    check(e.kind == "candidate" and "exports no cg_forward" in str(e), "no cg_forward: %s" % e)
try:
    ref.Candidate(torch, os.path.join(build, "missing.so"))
    check(False, "a missing object")
except ref.FinalFailure as e:
    check(e.kind == "load", "an object that does not load: %s" % e)
# needs_rt.so needs libcudart.so.77, which only site/nvidia/cu77/lib (next to the fake
# torch) holds: loaded from there, it satisfies the dependency by its soname.
c3 = ref.Candidate(torch, os.path.join(build, "needs_rt.so"))
check(c3.workspace_bytes is None, "a candidate whose runtime is next to torch loads; no "
      "cg_workspace_bytes there")
b3 = ref.Binding(torch, c3, [("x", x)], [("output", out)], "cuda")
check(b3.ws_ptr is None and b3.ws_bytes == 0, "no workspace without cg_workspace_bytes")
b3.call(ctypes.c_void_p(0))
check(list(out.buf)[:2] == [77.0, 77.0], "and its runtime's function is the one called")
print("%d checks" % checks)
