#!/usr/bin/env python3
"""python/cutegen_ref.py's tensor_constant(): the value a task spec records for a
get_attr of a tensor constant that tracing made (`torch.tensor(0.5)` in forward() becomes
'_tensor_constant0', an attribute of the graph module that is neither a parameter nor a
buffer, so not an input). Run with stand-ins for torch and the graph module (no torch on
the development machine); the real one runs on the GPU host when a spec is made.

    test_tensor_constant.py SRC_DIR
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "python"))
import cutegen_ref as ref  # noqa: E402


class Tensor:
    def __init__(self, *values, complex_=False):
        self.values = values
        self.complex_ = complex_

    def numel(self):
        return len(self.values)

    def item(self):
        assert len(self.values) == 1
        return self.values[0]

    def is_complex(self):
        return self.complex_


class FakeTorch:
    Tensor = Tensor


class Sub:
    pass


class GraphModule:
    def __init__(self):
        self._tensor_constant0 = Tensor(0.5)
        self._tensor_constant1 = Tensor(3)
        self._tensor_constant2 = Tensor(True)
        self._tensor_constant3 = Tensor(1.0, 2.0)
        self._tensor_constant4 = Tensor(float("inf"))
        self._tensor_constant5 = Tensor(1j, complex_=True)
        self.scale = Tensor(2.0)          # a parameter: an input, not a constant
        self.running = Tensor(4.0)        # a buffer: the same
        self.sub = Sub()
        self.sub.c = Tensor(-1.25)        # a constant in a submodule's attribute
        self.not_a_tensor = 7

    def named_parameters(self):
        return [("scale", self.scale)]

    def named_buffers(self):
        # torch.fx's GraphModule registers the constants it copies as buffers of its own
        return [("running", self.running)] + [(k, v) for k, v in vars(self).items() if k.startswith("_tensor_constant")]


class Model:
    """The traced model: its own state is the parameter and the buffer only."""

    def named_parameters(self):
        return [("scale", None)]

    def named_buffers(self):
        return [("running", None)]


gm, model = GraphModule(), Model()
cases = [
    ("_tensor_constant0", 0.5), ("_tensor_constant1", 3), ("_tensor_constant2", 1),
    ("_tensor_constant3", None), ("_tensor_constant4", None), ("_tensor_constant5", None),
    ("scale", None), ("running", None), ("sub.c", -1.25), ("not_a_tensor", None), ("missing", None),
]
failed = 0
for target, want in cases:
    got = ref.tensor_constant(FakeTorch, model, gm, target)
    ok = got == want and type(got) is type(want)
    if got is not None:
        json.loads(json.dumps({"value": got}, allow_nan=False))  # what the spec's JSON must hold
    print(f"{'ok' if ok else 'FAIL'}: {target} -> {got!r} (want {want!r})")
    failed += not ok
print(f"{len(cases) - failed} of {len(cases)} ok")
sys.exit(1 if failed else 0)
