#!/usr/bin/env python3
"""Writes the task-spec fixtures of the recipe tests (tests/data/recipe/*.json) in exactly
the shape python/cutegen_ref.py's make_spec() produces, written by hand (no torch here):
the fx graph of each problem as fx_graph() prints it (targets are
`fn.__module__ + "." + fn.__name__`; Python operators are `_operator.*`; methods are
bare names; modules carry "module" and "module_repr"). Where what fx prints is a guess
(builtins of torch._C._nn such as F.gelu/F.softplus), docs/recipes.md says so.
Also writes expect.txt: the recognition outcome each fixture must give.

Run: python3 tests/data/recipe/make_fixtures.py   (rewrites the files in place)
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = {"float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "bool": 1}


def strides(shape):
    s, acc = [], 1
    for d in reversed(shape):
        s.append(acc)
        acc *= d
    return list(reversed(s))


def tensor(name, shape, dtype="float32", kind="input"):
    n = 1
    for d in shape:
        n *= d
    return {"name": name, "kind": kind, "dtype": dtype, "shape": list(shape),
            "stride": strides(shape), "bytes": n * SIZES[dtype]}


def scalar(name, value):
    return {"name": name, "kind": "input", "dtype": "float32", "shape": [], "stride": [],
            "bytes": 4, "scalar": value}


def ph(name):
    return {"name": name, "op": "placeholder", "target": name, "args": [], "kwargs": {}}


def fn(name, target, args, kwargs=None):
    return {"name": name, "op": "call_function", "target": target, "args": args,
            "kwargs": kwargs or {}}


def meth(name, target, args, kwargs=None):
    return {"name": name, "op": "call_method", "target": target, "args": args,
            "kwargs": kwargs or {}}


def mod(name, target, cls, rep, args):
    return {"name": name, "op": "call_module", "target": target, "args": args, "kwargs": {},
            "module": cls, "module_repr": rep}


def attr(name, target):
    return {"name": name, "op": "get_attr", "target": target, "args": [], "kwargs": {}}


def out(arg):
    return {"name": "output", "op": "output", "target": "output", "args": [arg], "kwargs": {}}


def spec(problem, inputs, outputs, graph, init_args=(), graph_error=None):
    min_bytes = sum(t["bytes"] for t in inputs) + sum(o["bytes"] for o in outputs)
    return {"problem": "/kernelbench/level1/" + problem, "source_sha256": "0" * 64,
            "inputs": inputs, "outputs": [dict(o, kind="output") for o in outputs],
            "init_args": list(init_args), "graph": graph, "graph_error": graph_error,
            "flops": None, "min_bytes": min_bytes, "module_repr": "Model()"}


BIG = [4096, 393216]
R3 = [128, 4096, 4095]
FIX = {}
EXPECT = {}


def unary(key, problem, nodes, expect="pointwise", shape=BIG, dtype="float32", init=()):
    FIX[key] = spec(problem, [tensor("x", shape, dtype)], [tensor("output", shape, dtype)],
                    [ph("x")] + nodes, init)
    EXPECT[key] = expect


# --- KernelBench level 1, elementwise
unary("relu", "19_ReLU.py", [fn("relu", "torch.relu", ["%x"]), out("%relu")])
unary("leaky_relu", "20_LeakyReLU.py",
      [fn("leaky_relu", "torch.nn.functional.leaky_relu", ["%x"],
          {"negative_slope": 0.01, "inplace": False}), out("%leaky_relu")])
unary("sigmoid", "21_Sigmoid.py", [fn("sigmoid", "torch.sigmoid", ["%x"]), out("%sigmoid")])
unary("tanh", "22_Tanh.py", [fn("tanh", "torch.tanh", ["%x"]), out("%tanh")])
unary("swish", "25_Swish.py", [fn("sigmoid", "torch.sigmoid", ["%x"]),
                               fn("mul", "_operator.mul", ["%x", "%sigmoid"]), out("%mul")])
unary("gelu", "26_GELU_.py", [fn("gelu", "torch._C._nn.gelu", ["%x"]), out("%gelu")])
unary("selu", "27_SELU_.py", [fn("selu", "torch.selu", ["%x"]), out("%selu")])
unary("hardsigmoid", "28_HardSigmoid.py",
      [fn("hardsigmoid", "torch.nn.functional.hardsigmoid", ["%x"], {"inplace": False}),
       out("%hardsigmoid")])
unary("softplus", "29_Softplus.py", [fn("softplus", "torch._C._nn.softplus", ["%x"]), out("%softplus")])
unary("softsign", "30_Softsign.py",
      [fn("abs_1", "torch.abs", ["%x"]), fn("add", "_operator.add", [1, "%abs_1"]),
       fn("truediv", "_operator.truediv", ["%x", "%add"]), out("%truediv")])
unary("elu", "31_ELU.py", [fn("elu", "torch.nn.functional.elu", ["%x"], {"alpha": 1.0, "inplace": False}),
                           out("%elu")], init=[1.0])
unary("hardtanh", "32_HardTanh.py",
      [fn("hardtanh", "torch.nn.functional.hardtanh", ["%x"],
          {"min_val": -1.0, "max_val": 1.0, "inplace": False}), out("%hardtanh")])
unary("new_gelu", "88_MinGPTNewGelu.py",
      [fn("mul", "_operator.mul", [0.5, "%x"]),
       fn("pow_1", "torch.pow", ["%x", 3.0]),
       fn("mul_1", "_operator.mul", [0.044715, "%pow_1"]),
       fn("add", "_operator.add", ["%x", "%mul_1"]),
       fn("mul_2", "_operator.mul", [0.7978845608028654, "%add"]),
       fn("tanh", "torch.tanh", ["%mul_2"]),
       fn("add_1", "_operator.add", [1.0, "%tanh"]),
       fn("mul_3", "_operator.mul", ["%mul", "%add_1"]), out("%mul_3")], shape=[8192, 8192])
FIX["scalar_mul"] = spec("5_Matrix_scalar_multiplication.py",
                         [tensor("A", [65536, 16384]), scalar("s", 3.14)],
                         [tensor("output", [65536, 16384])],
                         [ph("A"), ph("s"), fn("mul", "_operator.mul", ["%A", "%s"]), out("%mul")])
EXPECT["scalar_mul"] = "pointwise"

# --- KernelBench level 1, reductions and softmax
def red(key, problem, nodes, out_shape, out_dtype="float32", shape=R3, init=(1,), expect="reduce",
        dtype="float32"):
    FIX[key] = spec(problem, [tensor("x", shape, dtype)], [tensor("output", out_shape, out_dtype)],
                    [ph("x")] + nodes, init)
    EXPECT[key] = expect


red("sum_dim", "47_Sum_reduction_over_a_dimension.py",
    [fn("sum_1", "torch.sum", ["%x"], {"dim": 1, "keepdim": True}), out("%sum_1")], [128, 1, 4095])
red("mean_dim", "48_Mean_reduction_over_a_dimension.py",
    [fn("mean", "torch.mean", ["%x"], {"dim": 1}), out("%mean")], [128, 4095])
red("max_dim", "49_Max_reduction_over_a_dimension.py",
    [fn("max_1", "torch.max", ["%x"], {"dim": 1}), fn("getitem", "_operator.getitem", ["%max_1", 0]),
     out("%getitem")], [128, 4095])
red("argmax_dim", "51_Argmax_over_a_dimension.py",
    [fn("argmax", "torch.argmax", ["%x"], {"dim": 1}), out("%argmax")], [128, 4095], "int64")
red("argmin_dim", "52_Argmin_over_a_dimension.py",
    [fn("argmin", "torch.argmin", ["%x"], {"dim": 1}), out("%argmin")], [128, 4095], "int64")
red("min_dim", "53_Min_reduction_over_a_dimension.py",
    [fn("min_1", "torch.min", ["%x"], {"dim": 1}), fn("getitem", "_operator.getitem", ["%min_1", 0]),
     out("%getitem")], [128, 4095])
red("softmax", "23_Softmax.py", [fn("softmax", "torch.softmax", ["%x"], {"dim": 1}), out("%softmax")],
    BIG, shape=BIG, init=())
red("log_softmax", "24_LogSoftmax.py",
    [fn("log_softmax", "torch.log_softmax", ["%x"], {"dim": 1}), out("%log_softmax")],
    BIG, shape=BIG, init=())
# reductions along the last dim (rows), and prod
red("sum_last", "custom_sum_last.py",
    [meth("sum_1", "sum", ["%x"], {"dim": -1}), out("%sum_1")], [256, 64], shape=[256, 64, 1000], init=())
red("prod_first", "custom_prod_first.py",
    [fn("prod", "torch.prod", ["%x", 0]), out("%prod")], [64, 512], shape=[16, 64, 512], init=())
red("amax_last_keep", "custom_amax_last.py",
    [fn("amax", "torch.amax", ["%x"], {"dim": [-1], "keepdim": True}), out("%amax")], [32, 1],
    shape=[32, 1048576], init=())

# --- not in KernelBench: recognised by structure
# torch.sigmoid(x) * 2.0 + torch.tanh(y), x (16, 1, 1024), y (64, 1024): broadcast to (16, 64, 1024)
FIX["chain_bcast"] = spec("custom_chain_bcast.py",
                          [tensor("x", [16, 1, 1024]), tensor("y", [64, 1024])],
                          [tensor("output", [16, 64, 1024])],
                          [ph("x"), ph("y"), fn("sigmoid", "torch.sigmoid", ["%x"]),
                           fn("mul", "_operator.mul", ["%sigmoid", 2.0]),
                           fn("tanh", "torch.tanh", ["%y"]),
                           fn("add", "_operator.add", ["%mul", "%tanh"]), out("%add")])
EXPECT["chain_bcast"] = "pointwise"
# self.act = nn.GELU(approximate='tanh'); self.bias = nn.Parameter(torch.randn(256))
# forward(x): torch.clamp(self.act(x) + self.bias, min=-2.0, max=4.0) ** 2 - x.sigmoid()
FIX["module_chain"] = spec("custom_module_chain.py",
                           [tensor("x", [128, 256]), tensor("bias", [256], kind="param")],
                           [tensor("output", [128, 256])],
                           [ph("x"), mod("act", "act", "GELU", "GELU(approximate='tanh')", ["%x"]),
                            attr("bias", "bias"), fn("add", "_operator.add", ["%act", "%bias"]),
                            fn("clamp", "torch.clamp", ["%add"], {"min": -2.0, "max": 4.0}),
                            fn("pow_1", "_operator.pow", ["%clamp", 2]),
                            meth("sigmoid", "sigmoid", ["%x"]),
                            fn("sub", "_operator.sub", ["%pow_1", "%sigmoid"]), out("%sub")])
EXPECT["module_chain"] = "pointwise"
# (torch.exp(x) * w).sum(dim=2) / 3.0, x and w (8, 16, 300)
FIX["pro_epi_sum"] = spec("custom_pro_epi_sum.py",
                          [tensor("x", [8, 16, 300]), tensor("w", [8, 16, 300])],
                          [tensor("output", [8, 16])],
                          [ph("x"), ph("w"), fn("exp", "torch.exp", ["%x"]),
                           fn("mul", "_operator.mul", ["%exp", "%w"]),
                           meth("sum_1", "sum", ["%mul"], {"dim": 2}),
                           fn("truediv", "_operator.truediv", ["%sum_1", 3.0]), out("%truediv")])
EXPECT["pro_epi_sum"] = "reduce"
# nn.LogSoftmax(dim=-1) on fp16 (64, 1000)
red("logsoftmax_module_fp16", "custom_logsoftmax_fp16.py",
    [mod("ls", "ls", "LogSoftmax", "LogSoftmax(dim=-1)", ["%x"]), out("%ls")], [64, 1000],
    out_dtype="float16", shape=[64, 1000], dtype="float16", init=())
# F.softmax(x, dim=1) over a middle dim
red("softmax_middle", "custom_softmax_middle.py",
    [fn("softmax", "torch.nn.functional.softmax", ["%x"], {"dim": 1, "_stacklevel": 3, "dtype": None}),
     out("%softmax")], [32, 64, 512], shape=[32, 64, 512], init=())
# torch.softmax(x * 0.5 + y, dim=-1) on long rows: a prologue through the cluster kernel
FIX["softmax_long_prologue"] = spec("custom_softmax_long.py",
                                    [tensor("x", [64, 131072]), tensor("y", [64, 131072])],
                                    [tensor("output", [64, 131072])],
                                    [ph("x"), ph("y"), fn("mul", "_operator.mul", ["%x", 0.5]),
                                     fn("add", "_operator.add", ["%mul", "%y"]),
                                     fn("softmax", "torch.softmax", ["%add"], {"dim": -1}),
                                     out("%softmax")])
EXPECT["softmax_long_prologue"] = "reduce"
# x.log_softmax(1) on bf16 long rows
red("log_softmax_bf16_long", "custom_log_softmax_bf16.py",
    [meth("log_softmax", "log_softmax", ["%x", 1]), out("%log_softmax")], [16, 65536],
    out_dtype="bfloat16", shape=[16, 65536], dtype="bfloat16", init=())
# F.silu on bf16, odd size (tail)
unary("silu_bf16", "custom_silu_bf16.py",
      [fn("silu", "torch.nn.functional.silu", ["%x"], {"inplace": False}), out("%silu")],
      shape=[1000, 1001], dtype="bfloat16")
# nn.LeakyReLU(0.2) module then * 3, through the method form
unary("leaky_module", "custom_leaky_module.py",
      [mod("act", "act", "LeakyReLU", "LeakyReLU(negative_slope=0.2)", ["%x"]),
       meth("mul", "mul", ["%act", 3.0]), out("%mul")], shape=[4096, 4096])

# --- pooling (the POOL family; recipes/pool.cu)
def pool_out(n, k, s=None, p=0, d=1, ceil=False):
    """PyTorch's pooled size (ATen's pooling_output_shape), to write the outputs' shapes."""
    s = s or k
    num = n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    o = num // s + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def pool(key, problem, shape, out_spatial, nodes, dtype="float32", init=(), expect="pool",
         extra_inputs=()):
    nsp = len(out_spatial)
    out_shape = list(shape[:len(shape) - nsp]) + list(out_spatial)
    FIX[key] = spec(problem, [tensor("x", shape, dtype)] + list(extra_inputs),
                    [tensor("output", out_shape, dtype)], [ph("x")] + nodes, init)
    EXPECT[key] = expect


# KernelBench level 1, 41-46: the real task specs (tests/gpu/dump_specs.py on the GPU
# host), copied in unchanged as real_l1_*.json; see REAL below. The small fixtures next
# use the same module reprs.
# the same windows on small shapes (tests/cli/t0702-recipe-pool-emu.sh runs these kernels
# on the host against ATen's loops); ragged sizes, rows that are not 16-byte multiples
pool("pool_emu_max1d", "custom_max1d.py", [2, 3, 1000], [pool_out(1000, 8, 1, 4, 3)],
     [mod("maxpool", "maxpool", "MaxPool1d",
          "MaxPool1d(kernel_size=8, stride=1, padding=4, dilation=3, ceil_mode=False)", ["%x"]),
      out("%maxpool")])
pool("pool_emu_max2d", "custom_max2d.py", [2, 3, 37, 70], [pool_out(37, 4, 1, 1), pool_out(70, 4, 1, 1)],
     [mod("maxpool", "maxpool", "MaxPool2d",
          "MaxPool2d(kernel_size=4, stride=1, padding=1, dilation=1, ceil_mode=False)", ["%x"]),
      out("%maxpool")])
pool("pool_emu_max3d", "custom_max3d.py", [2, 2, 17, 18, 20],
     [pool_out(17, 3, 2, 1, 3), pool_out(18, 3, 2, 1, 3), pool_out(20, 3, 2, 1, 3)],
     [mod("maxpool", "maxpool", "MaxPool3d",
          "MaxPool3d(kernel_size=3, stride=2, padding=1, dilation=3, ceil_mode=False)", ["%x"]),
      out("%maxpool")])
pool("pool_emu_avg1d", "custom_avg1d.py", [2, 3, 777], [pool_out(777, 8, 1, 4)],
     [mod("avg_pool", "avg_pool", "AvgPool1d", "AvgPool1d(kernel_size=(8,), stride=(1,), padding=(4,))",
          ["%x"]), out("%avg_pool")])
pool("pool_emu_avg2d", "custom_avg2d.py", [2, 3, 100, 97], [pool_out(100, 11), pool_out(97, 11)],
     [mod("avg_pool", "avg_pool", "AvgPool2d", "AvgPool2d(kernel_size=11, stride=11, padding=0)", ["%x"]),
      out("%avg_pool")])
pool("pool_emu_avg3d", "custom_avg3d.py", [2, 2, 12, 13, 24],
     [pool_out(12, 3, 2, 1), pool_out(13, 3, 2, 1), pool_out(24, 3, 2, 1)],
     [mod("avg_pool", "avg_pool", "AvgPool3d", "AvgPool3d(kernel_size=3, stride=2, padding=1)", ["%x"]),
      out("%avg_pool")])

# functional forms, ceil mode, count_include_pad=False, tuples, prologue and epilogue
# F.max_pool2d (a boolean_dispatch: fx records torch.nn.functional.max_pool2d with the
# keyword arguments _max_pool2d passes on)
pool("pool_fn_max2d_ceil", "custom_fn_max2d_ceil.py", [8, 16, 32, 32], [pool_out(32, 3, 2, 1, ceil=True)] * 2,
     [fn("max_pool2d", "torch.nn.functional.max_pool2d", ["%x", 3],
         {"stride": 2, "padding": 1, "dilation": 1, "ceil_mode": True, "return_indices": False}),
      out("%max_pool2d")])
# F.avg_pool2d is the builtin torch._C._nn.avg_pool2d: arguments as the caller wrote them
pool("pool_fn_avg2d_nopad", "custom_fn_avg2d.py", [4, 8, 30, 46],
     [pool_out(30, 3, 2, 1, ceil=True), pool_out(46, 3, 2, 1, ceil=True)],
     [fn("avg_pool2d", "torch._C._nn.avg_pool2d", ["%x"],
         {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}),
      out("%avg_pool2d")])
# the same with count_include_pad left at its default (True): the last windows stick out of
# the padded input, and the divisor counts only what is inside it (ATen's pool_size)
pool("pool_fn_avg2d_ceil_pad", "custom_fn_avg2d_ceil.py", [3, 4, 30, 47],
     [pool_out(30, 3, 2, 1, ceil=True), pool_out(47, 3, 2, 1, ceil=True)],
     [fn("avg_pool2d", "torch._C._nn.avg_pool2d", ["%x", 3, 2, 1, True]), out("%avg_pool2d")])
# torch.max_pool1d (a builtin; stride=[] means the window) on (C, L), no batch dim
pool("pool_builtin_max1d", "custom_builtin_max1d.py", [24, 501], [pool_out(501, 3, 3, 1, 2)],
     [fn("max_pool1d", "torch.max_pool1d", ["%x", [3], [], [1], [2], False]), out("%max_pool1d")])
# avg_pool2d with divisor_override, positional arguments
pool("pool_fn_avg2d_divisor", "custom_fn_avg2d_div.py", [3, 5, 40, 41], [pool_out(40, 4, 3, 2), pool_out(41, 5, 3, 2)],
     [fn("avg_pool2d", "torch._C._nn.avg_pool2d", ["%x", [4, 5], [3, 3], 2, False, True, 7]),
      out("%avg_pool2d")])
# (x * 2.0 + y) pooled by nn.AvgPool3d with tuples, then tanh(r) - 0.5; fp16
FIX["pool_pro_epi_fp16"] = spec("custom_pool_pro_epi.py",
                                [tensor("x", [2, 3, 9, 10, 16], "float16"), tensor("y", [2, 3, 9, 10, 16], "float16")],
                                [tensor("output", [2, 3, pool_out(9, 2, 1), pool_out(10, 3, 2, 1), pool_out(16, 3, 2, 1)],
                                        "float16")],
                                [ph("x"), ph("y"), fn("mul", "_operator.mul", ["%x", 2.0]),
                                 fn("add", "_operator.add", ["%mul", "%y"]),
                                 mod("pool", "pool", "AvgPool3d",
                                     "AvgPool3d(kernel_size=(2, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1))", ["%add"]),
                                 fn("tanh", "torch.tanh", ["%pool"]),
                                 fn("sub", "_operator.sub", ["%tanh", 0.5]), out("%sub")])
EXPECT["pool_pro_epi_fp16"] = "pool"
# nn.MaxPool2d(2) on bf16, then relu(r * 2.0) through the method form
pool("pool_epi_bf16", "custom_pool_epi_bf16.py", [16, 32, 64, 64], [32, 32],
     [mod("pool", "pool", "MaxPool2d", "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)",
          ["%x"]), meth("mul", "mul", ["%pool", 2.0]), fn("relu", "torch.relu", ["%mul"]), out("%relu")],
     dtype="bfloat16")
# pooling nodes exactly as the real level-2 specs print them (after a conv there; here on
# an input of the conv's output shape)
pool("pool_l2_avg3d_tuple", "level2/3_ConvTranspose3d_Sum_LayerNorm_AvgPool_GELU.py", [2, 8, 6, 9, 10],
     [3, 4, 5], [mod("avg_pool", "avg_pool", "AvgPool3d",
                     "AvgPool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=0)", ["%x"]), out("%avg_pool")])
pool("pool_l2_max3d_tuple", "level2/8_Conv3d_Divide_Max_GlobalAvgPool_BiasAdd_Sum.py", [2, 8, 7, 12, 13],
     [3, 6, 6], [mod("max_pool", "max_pool", "MaxPool3d",
                     "MaxPool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=0, dilation=1, ceil_mode=False)",
                     ["%x"]), out("%max_pool")])
pool("pool_l2_avg1d", "level2/98_Matmul_AvgPool_GELU_Scale_Max.py", [64, 1, 520], [32],
     [mod("avg_pool", "avg_pool", "AvgPool1d", "AvgPool1d(kernel_size=(16,), stride=(16,), padding=(0,))", ["%x"]),
      out("%avg_pool")])
pool("pool_l2_global3d", "level2/77_ConvTranspose3d_Scale_BatchNorm_GlobalAvgPool.py", [4, 32, 9, 10, 11],
     [1, 1, 1], [mod("global_avg_pool", "global_avg_pool", "AdaptiveAvgPool3d",
                     "AdaptiveAvgPool3d(output_size=(1, 1, 1))", ["%x"]), out("%global_avg_pool")], expect="reduce")
# nn.AdaptiveAvgPool2d((8, 8)) of 64x48: windows of 8x6
pool("pool_adaptive", "custom_adaptive.py", [4, 16, 64, 48], [8, 8],
     [mod("pool", "pool", "AdaptiveAvgPool2d", "AdaptiveAvgPool2d(output_size=(8, 8))", ["%x"]), out("%pool")])
# global average pooling: a mean over the 14x14 plane (the reduce template)
pool("pool_global_avg", "custom_global_avg.py", [32, 256, 14, 14], [1, 1],
     [fn("adaptive_avg_pool2d", "torch.nn.functional.adaptive_avg_pool2d", ["%x", 1]),
      out("%adaptive_avg_pool2d")], expect="reduce")
# nn.MaxPool1d whose window is the whole row: a max over it (the reduce template)
pool("pool_global_max", "custom_global_max.py", [64, 32, 300], [1],
     [mod("pool", "pool", "MaxPool1d", "MaxPool1d(kernel_size=300, stride=300, padding=0, dilation=1, ceil_mode=False)",
          ["%x"]), out("%pool")], expect="reduce")
# not covered
pool("pool_adaptive_ragged", "custom_adaptive_ragged.py", [2, 4, 32, 32], [5, 7],
     [mod("pool", "pool", "AdaptiveAvgPool2d", "AdaptiveAvgPool2d(output_size=(5, 7))", ["%x"]), out("%pool")],
     expect="not covered: adaptive pooling of 32x32 to 5x7")
pool("pool_indices", "custom_pool_indices.py", [2, 4, 32, 32], [16, 16],
     [fn("max_pool2d", "torch.nn.functional.max_pool2d", ["%x", 2],
         {"stride": None, "padding": 0, "dilation": 1, "ceil_mode": False, "return_indices": True}),
      fn("getitem", "_operator.getitem", ["%max_pool2d", 0]), out("%getitem")],
     expect="not covered: max_pool2d with return_indices=True")
pool("pool_lp", "custom_lp_pool.py", [2, 4, 32, 32], [16, 16],
     [fn("lp_pool2d", "torch.nn.functional.lp_pool2d", ["%x", 2.0, 2], {"stride": None, "ceil_mode": False}),
      out("%lp_pool2d")], expect="not covered: operator 'torch.nn.functional.lp_pool2d'")
pool("pool_then_sum", "custom_pool_sum.py", [2, 4, 32, 32], [2, 4, 16],
     [mod("pool", "pool", "MaxPool2d", "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)",
          ["%x"]), fn("sum_1", "torch.sum", ["%pool"], {"dim": 2}), out("%sum_1")],
     expect="not covered: more than one reduction")

# --- not covered, with the reason
FIX["matmul"] = spec("1_Square_matrix_multiplication_.py",
                     [tensor("A", [4096, 4096]), tensor("B", [4096, 4096])], [tensor("output", [4096, 4096])],
                     [ph("A"), ph("B"), fn("matmul", "torch.matmul", ["%A", "%B"]), out("%matmul")])
EXPECT["matmul"] = "not covered: operator 'torch.matmul'"
FIX["layernorm"] = spec("40_LayerNorm.py",
                        [tensor("x", [16, 64, 256, 256]), tensor("ln.weight", [64, 256, 256], kind="param"),
                         tensor("ln.bias", [64, 256, 256], kind="param")],
                        [tensor("output", [16, 64, 256, 256])],
                        [ph("x"), mod("ln", "ln", "LayerNorm", "LayerNorm((64, 256, 256), eps=1e-05, elementwise_affine=True)", ["%x"]),
                         out("%ln")])
EXPECT["layernorm"] = "not covered: operator 'LayerNorm'"
FIX["no_graph"] = spec("custom_untraceable.py", [tensor("x", [10])], [tensor("output", [10])], None,
                       graph_error="TraceError: symbolically traced variables cannot be used as inputs to control flow")
EXPECT["no_graph"] = "not covered: no operator graph"
unary("broadcast_back", "custom_sub_max.py",
      [fn("max_1", "torch.max", ["%x"], {"dim": 1, "keepdim": True}),
       fn("getitem", "_operator.getitem", ["%max_1", 0]),
       fn("sub", "_operator.sub", ["%x", "%getitem"]), out("%sub")],
      expect="not covered: sub combines a reduced value with an input", shape=[64, 128])
red("sum_all", "custom_sum_all.py", [fn("sum_1", "torch.sum", ["%x"]), out("%sum_1")], [],
    shape=[64, 128], init=(), expect="not covered: sum over all elements")
red("cumsum", "89_cumsum.py", [fn("cumsum", "torch.cumsum", ["%x"], {"dim": 1}), out("%cumsum")],
    [128, 4000], shape=[128, 4000], expect="not covered: operator 'torch.cumsum'")
red("sum_two_dims", "custom_sum_two_dims.py",
    [fn("sum_1", "torch.sum", ["%x"], {"dim": [1, 2]}), out("%sum_1")], [8],
    shape=[8, 16, 32], init=(), expect="not covered: a reduction over several dims")

# Real task specs, copied in as they are (not written here): their expected recognition.
REAL = {
    "real_l1_41_Max_Pooling_1D": "pool", "real_l1_42_Max_Pooling_2D": "pool",
    "real_l1_43_Max_Pooling_3D": "pool", "real_l1_44_Average_Pooling_1D": "pool",
    "real_l1_45_Average_Pooling_2D": "pool", "real_l1_46_Average_Pooling_3D": "pool",
}
for key, want in REAL.items():
    assert os.path.exists(os.path.join(HERE, key + ".json")), key
    EXPECT[key] = want

for key, s in FIX.items():
    with open(os.path.join(HERE, key + ".json"), "w") as f:
        json.dump(s, f, indent=1)
        f.write("\n")
with open(os.path.join(HERE, "expect.txt"), "w") as f:
    f.write("# fixture<TAB>expected recognition: pointwise, reduce, or the start of the "
            "'not covered' reason (written by make_fixtures.py)\n")
    for key in list(FIX) + list(REAL):
        f.write(f"{key}\t{EXPECT[key]}\n")
print(f"wrote {len(FIX)} fixtures")
