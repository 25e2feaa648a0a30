#!/usr/bin/env python3
"""Writes the task-spec fixtures of the recipe tests (tests/data/recipe/*.json) in exactly
the shape python/cutegen_ref.py's make_spec() produces, written by hand (no torch here):
the fx graph of each problem as fx_graph() prints it (targets are
`fn.__module__ + "." + fn.__name__`; Python operators are `_operator.*`; methods are
bare names; modules carry "module" and "module_repr"). Where what fx prints is a guess
(builtins of torch._C._nn such as F.gelu/F.softplus), docs/recipes.md says so.
Also writes expect.txt: the recognition outcome each fixture must give (pointwise, reduce,
gemm, or the start of the "not covered" reason).

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

# --- not covered, with the reason
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


# --- GEMM (src/recipe_gemm.c): KernelBench level 1 products and level 2 GEMM chains.
# Guesses, to check against real specs: A.T is call_function "builtins.getattr" with
# args [%A, "T"]; nn.Linear is call_module "Linear" with its parameters "<target>.weight"
# and "<target>.bias" among the inputs (the model's own parameters first: state_dict
# order); F.linear/F.gelu are torch._C._nn builtins; torch.einsum is torch.functional.einsum.
def mm2(key, problem, a_shape, b_shape, out_shape, nodes, expect="gemm", names=("A", "B")):
    FIX[key] = spec(problem, [tensor(names[0], a_shape), tensor(names[1], b_shape)],
                    [tensor("output", out_shape)], [ph(names[0]), ph(names[1])] + nodes)
    EXPECT[key] = expect


def matmul(a="%A", b="%B", name="matmul", target="torch.matmul"):
    return fn(name, target, [a, b])


mm2("matmul", "1_Square_matrix_multiplication_.py", [4096, 4096], [4096, 4096], [4096, 4096],
    [matmul(), out("%matmul")])
mm2("matmul_rect", "2_Standard_matrix_multiplication_.py", [2048, 8192], [8192, 4096], [2048, 4096],
    [matmul(), out("%matmul")])
mm2("bmm", "3_Batched_matrix_multiplication.py", [128, 512, 1024], [128, 1024, 2048], [128, 512, 2048],
    [fn("bmm", "torch.bmm", ["%A", "%B"]), out("%bmm")])
mm2("matvec", "4_Matrix_vector_multiplication_.py", [2048, 1048576], [1048576, 1], [2048, 1],
    [matmul(), out("%matmul")])
mm2("matmul_large_k", "6_Matmul_with_large_K_dimension_.py", [256, 524288], [524288, 256], [256, 256],
    [matmul(), out("%matmul")])
mm2("matmul_small_k", "7_Matmul_with_small_K_dimension_.py", [32768, 64], [64, 32768], [32768, 32768],
    [matmul(), out("%matmul")])
mm2("matmul_irregular", "8_Matmul_with_irregular_shapes_.py", [8205, 2949], [2949, 5921], [8205, 5921],
    [matmul(), out("%matmul")])
mm2("tall_skinny", "9_Tall_skinny_matrix_multiplication_.py", [32768, 32], [32, 32768], [32768, 32768],
    [matmul(), out("%matmul")])
mm2("matmul_3d", "10_3D_tensor_matrix_multiplication.py", [16, 1024, 2048], [2048, 768], [16, 1024, 768],
    [matmul(), out("%matmul")])
mm2("einsum_4d", "11_4D_tensor_matrix_multiplication.py", [8, 256, 512, 256], [256, 768], [8, 256, 512, 768],
    [fn("einsum", "torch.functional.einsum", ["bijl,lk->bijk", "%A", "%B"]), out("%einsum")])
mm2("diag_matmul", "12_Matmul_with_diagonal_matrices_.py", [4096], [4096, 4096], [4096, 4096],
    [meth("unsqueeze", "unsqueeze", ["%A", 1]), fn("mul", "_operator.mul", ["%unsqueeze", "%B"]),
     out("%mul")], expect="not covered: operator 'unsqueeze'")
mm2("triu_matmul", "14_Matmul_for_upper_triangular_matrices.py", [4096, 4096], [4096, 4096], [4096, 4096],
    [matmul(), fn("triu", "torch.triu", ["%matmul"]), out("%triu")])
mm2("tril_matmul", "15_Matmul_for_lower_triangular_matrices.py", [4096, 4096], [4096, 4096], [4096, 4096],
    [matmul(), fn("tril", "torch.tril", ["%matmul"]), out("%tril")])
mm2("matmul_ta", "16_Matmul_with_transposed_A.py", [8192, 2048], [8192, 4096], [2048, 4096],
    [fn("getattr_1", "builtins.getattr", ["%A", "T"]), matmul("%getattr_1"), out("%matmul")])
mm2("matmul_tb", "17_Matmul_with_transposed_B.py", [2048, 8192], [4096, 8192], [2048, 4096],
    [fn("getattr_1", "builtins.getattr", ["%B", "T"]), matmul("%A", "%getattr_1"), out("%matmul")])
mm2("matmul_tab", "18_Matmul_with_transposed_both.py", [8192, 2048], [4096, 8192], [2048, 4096],
    [fn("getattr_1", "builtins.getattr", ["%A", "T"]), fn("getattr_2", "builtins.getattr", ["%B", "T"]),
     matmul("%getattr_1", "%getattr_2"), out("%matmul")])
# not KernelBench: other spellings and shapes
mm2("matmul_op_irregular", "custom_matmul_op.py", [1000, 333], [333, 517], [1000, 517],
    [fn("matmul", "_operator.matmul", ["%A", "%B"]), out("%matmul")])
mm2("bmm_tb_method", "custom_bmm_tb.py", [4, 100, 64], [4, 50, 64], [4, 100, 50],
    [meth("transpose", "transpose", ["%B", -2, -1]), meth("matmul", "matmul", ["%A", "%transpose"]),
     out("%matmul")])
mm2("vecmat_linear_row", "custom_vecmat.py", [512], [1024, 512], [1024],
    [fn("linear", "torch._C._nn.linear", ["%A", "%B"]), out("%linear")])
mm2("mm_chain", "custom_mm_chain.py", [64, 64], [64, 64], [64, 64],
    [fn("mm", "torch.mm", ["%A", "%B"]), fn("mm_1", "torch.mm", ["%mm", "%B"]), out("%mm_1")],
    expect="not covered: more than one matrix product")
mm2("mm_prologue", "custom_mm_prologue.py", [64, 64], [64, 64], [64, 64],
    [fn("mul", "_operator.mul", ["%A", 2.0]), fn("mm", "torch.mm", ["%mul", "%B"]), out("%mm")],
    expect="not covered: mm of a value computed in the graph")
mm2("mm_sum", "custom_mm_sum.py", [64, 64], [64, 64], [64, 1],
    [fn("mm", "torch.mm", ["%A", "%B"]), meth("sum_1", "sum", ["%mm"], {"dim": 1, "keepdim": True}),
     out("%sum_1")])


# level 2: nn.Linear and a pointwise epilogue
def linear_chain(key, problem, batch, k, n, nodes, init, bias=True, extra=(), gemm="gemm", expect="gemm"):
    params = list(extra) + [tensor(gemm + ".weight", [n, k], kind="param")]
    if bias:
        params.append(tensor(gemm + ".bias", [n], kind="param"))
    rep = f"Linear(in_features={k}, out_features={n}, bias={bias})"
    FIX[key] = spec(problem, [tensor("x", [batch, k])] + params, [tensor("output", [batch, n])],
                    [ph("x"), mod(gemm, gemm, "Linear", rep, ["%x"])] + nodes, init)
    FIX[key]["problem"] = "/kernelbench/level2/" + problem
    EXPECT[key] = expect


linear_chain("l2_gemm_mul_leaky", "12_Gemm_Multiply_LeakyReLU.py", 1024, 8192, 8192,
             [fn("mul", "_operator.mul", ["%gemm", 2.0]),
              mod("leaky_relu", "leaky_relu", "LeakyReLU", "LeakyReLU(negative_slope=0.1)", ["%mul"]),
              out("%leaky_relu")], [8192, 8192, 2.0, 0.1])
linear_chain("l2_gemm_add_relu", "76_Gemm_Add_ReLU.py", 1024, 8192, 8192,
             [attr("bias", "bias"), fn("add", "_operator.add", ["%gemm", "%bias"]),
              fn("relu", "torch.relu", ["%add"]), out("%relu")], [8192, 8192, [8192]], bias=False,
             extra=[tensor("bias", [8192], kind="param")])
linear_chain("l2_matmul_scale_residual", "40_Matmul_Scaling_ResidualAdd.py", 16384, 4096, 4096,
             [meth("clone", "clone", ["%matmul"]), meth("detach", "detach", ["%clone"]),
              fn("mul", "_operator.mul", ["%matmul", 0.5]), fn("add", "_operator.add", ["%mul", "%detach"]),
              out("%add")], [4096, 4096, 0.5], gemm="matmul")
linear_chain("l2_matmul_swish_scale", "59_Matmul_Swish_Scaling.py", 128, 32768, 32768,
             [fn("sigmoid", "torch.sigmoid", ["%matmul"]), fn("mul", "_operator.mul", ["%matmul", "%sigmoid"]),
              fn("mul_1", "_operator.mul", ["%mul", 2.0]), out("%mul_1")], [32768, 32768, 2.0], gemm="matmul")
linear_chain("l2_matmul_div_gelu", "86_Matmul_Divide_GELU.py", 1024, 8192, 8192,
             [fn("truediv", "_operator.truediv", ["%linear", 10.0]), fn("gelu", "torch._C._nn.gelu", ["%truediv"]),
              out("%gelu")], [8192, 8192, 10.0], gemm="linear")
linear_chain("l2_matmul_sub_mul_relu", "9_Matmul_Subtract_Multiply_ReLU.py", 1024, 8192, 8192,
             [fn("sub", "_operator.sub", ["%linear", 2.0]), fn("mul", "_operator.mul", ["%sub", 1.5]),
              fn("relu", "torch.relu", ["%mul"]), out("%relu")], [8192, 8192, 2.0, 1.5], gemm="linear")
linear_chain("l2_gemm_relu_div", "63_Gemm_ReLU_Divide.py", 1024, 8192, 8192,
             [fn("relu", "torch.relu", ["%linear"]), fn("truediv", "_operator.truediv", ["%relu", 2.0]),
              out("%truediv")], [8192, 8192, 2.0], gemm="linear")
linear_chain("l2_matmul_mish_mish", "29_Matmul_Mish_Mish.py", 1024, 8192, 8192,
             [fn("mish", "torch.nn.functional.mish", ["%linear"], {"inplace": False}),
              fn("mish_1", "torch.nn.functional.mish", ["%mish"], {"inplace": False}), out("%mish_1")],
             [8192, 8192], gemm="linear")
linear_chain("l2_gemm_scale_hardtanh_gelu", "53_Gemm_Scaling_Hardtanh_GELU.py", 2048, 8192, 8192,
             [fn("mul", "_operator.mul", ["%gemm", 0.5]),
              mod("hardtanh", "hardtanh", "Hardtanh", "Hardtanh(min_val=-2, max_val=2)", ["%mul"]),
              mod("gelu", "gelu", "GELU", "GELU(approximate='none')", ["%hardtanh"]), out("%gelu")],
             [8192, 8192, 0.5, -2, 2])
linear_chain("l2_gemm_swish_div_clamp_tanh_clamp", "81_Gemm_Swish_Divide_Clamp_Tanh_Clamp.py", 1024, 8192, 8192,
             [fn("sigmoid", "torch.sigmoid", ["%gemm"]), fn("mul", "_operator.mul", ["%gemm", "%sigmoid"]),
              fn("truediv", "_operator.truediv", ["%mul", 2.0]),
              fn("clamp", "torch.clamp", ["%truediv"], {"min": -1.0, "max": 1.0}),
              fn("tanh", "torch.tanh", ["%clamp"]),
              fn("clamp_1", "torch.clamp", ["%tanh"], {"min": -1.0, "max": 1.0}), out("%clamp_1")],
             [8192, 8192])
linear_chain("l2_matmul_add_swish_tanh_gelu_hardtanh", "95_Matmul_Add_Swish_Tanh_GELU_Hardtanh.py",
             1024, 8192, 8192,
             [attr("add_value", "add_value"), fn("add", "_operator.add", ["%matmul", "%add_value"]),
              fn("sigmoid", "torch.sigmoid", ["%add"]), fn("mul", "_operator.mul", ["%sigmoid", "%add"]),
              fn("tanh", "torch.tanh", ["%mul"]), fn("gelu", "torch._C._nn.gelu", ["%tanh"]),
              fn("hardtanh", "torch.nn.functional.hardtanh", ["%gelu"],
                 {"min_val": -1, "max_val": 1, "inplace": False}), out("%hardtanh")],
             [8192, 8192, [8192]], gemm="matmul", extra=[tensor("add_value", [8192], kind="param")])
# F.linear with parameters through get_attr, a residual input and a per-row scale
FIX["linear_residual"] = spec("custom_linear_residual.py",
                              [tensor("x", [300, 200]), tensor("res", [300, 100]), tensor("s", [300, 1]),
                               tensor("w", [100, 200], kind="param"), tensor("b", [100], kind="param")],
                              [tensor("output", [300, 100])],
                              [ph("x"), ph("res"), ph("s"), attr("w", "w"), attr("b", "b"),
                               fn("linear", "torch._C._nn.linear", ["%x", "%w", "%b"]),
                               fn("mul", "_operator.mul", ["%linear", "%s"]),
                               fn("add", "_operator.add", ["%mul", "%res"]), out("%add")])
EXPECT["linear_residual"] = "gemm"
# batched product with einsum and a bias over columns
FIX["einsum_bmm_bias"] = spec("custom_einsum_bmm.py",
                              [tensor("a", [8, 96, 40]), tensor("b", [8, 40, 72]), tensor("bias", [72])],
                              [tensor("output", [8, 96, 72])],
                              [ph("a"), ph("b"), ph("bias"),
                               fn("einsum", "torch.functional.einsum", ["bij,bjk->bik", "%a", "%b"]),
                               fn("add", "_operator.add", ["%einsum", "%bias"]), out("%add")])
EXPECT["einsum_bmm_bias"] = "gemm"


# --- small GEMMs for the host emulation of recipes/gemm_tc.cu (tests/cli/t0706): odd
# sizes (4-byte copies, partial tiles, a k residue), every operand layout, batches,
# split-K, triu, and epilogue inputs of every kind. Written to emu/, not in expect.txt.
EMU = {}


def emu2(key, a_shape, b_shape, out_shape, nodes, extra=(), names=("A", "B")):
    ins = [tensor(names[0], a_shape), tensor(names[1], b_shape)] + list(extra)
    EMU[key] = spec("custom_" + key + ".py", ins, [tensor("output", out_shape)],
                    [ph(n["name"]) for n in ins if n["kind"] == "input"] + nodes)


emu2("nn_odd", [77, 70], [70, 45], [77, 45], [matmul(), out("%matmul")])
emu2("nn_aligned", [96, 64], [64, 136], [96, 136], [matmul(), out("%matmul")])
emu2("tn_vec", [70, 100], [70, 52], [100, 52],
     [fn("getattr_1", "builtins.getattr", ["%A", "T"]), matmul("%getattr_1"), out("%matmul")])
emu2("tt_odd", [37, 53], [29, 37], [53, 29],
     [fn("getattr_1", "builtins.getattr", ["%A", "T"]), fn("getattr_2", "builtins.getattr", ["%B", "T"]),
      matmul("%getattr_1", "%getattr_2"), out("%matmul")])
emu2("nt_bmm", [3, 40, 36], [3, 56, 36], [3, 40, 56],
     [meth("transpose", "transpose", ["%B", 1, 2]), fn("bmm", "torch.bmm", ["%A", "%transpose"]),
      out("%bmm")])
emu2("fold_3d", [3, 50, 24], [24, 40], [3, 50, 40], [matmul(), out("%matmul")])
emu2("triu_odd", [150, 40], [40, 150], [150, 150],
     [matmul(), fn("triu", "torch.triu", ["%matmul"], {"diagonal": 1}), out("%triu")])
emu2("splitk", [64, 2000], [2000, 48], [64, 48], [matmul(), out("%matmul")])
EMU["linear_epi"] = spec("custom_linear_epi.py",
                         [tensor("x", [130, 70]), tensor("res", [130, 62]), tensor("s", [130, 1]),
                          scalar("c", 0.5), tensor("w", [62, 70], kind="param"), tensor("b", [62], kind="param")],
                         [tensor("output", [130, 62])],
                         [ph("x"), ph("res"), ph("s"), ph("c"), attr("w", "w"), attr("b", "b"),
                          fn("linear", "torch._C._nn.linear", ["%x", "%w", "%b"]),
                          fn("mul", "_operator.mul", ["%linear", "%s"]),
                          fn("add", "_operator.add", ["%mul", "%res"]),
                          fn("mul_1", "_operator.mul", ["%add", "%c"]),
                          fn("gelu", "torch._C._nn.gelu", ["%mul_1"]), out("%gelu")])

# reductions over the product's rows
emu2("rr_sum_keep", [70, 45], [150, 45], [70, 1],
     [fn("getattr_1", "builtins.getattr", ["%B", "T"]), matmul("%A", "%getattr_1"),
      fn("truediv", "_operator.truediv", ["%matmul", 2]),
      fn("sum_1", "torch.sum", ["%truediv"], {"dim": 1, "keepdim": True}),
      fn("mul", "_operator.mul", ["%sum_1", 1.5]), out("%mul")])
EMU["rr_lse_mish"] = spec("custom_rr_lse.py",
                          [tensor("x", [90, 40]), tensor("w", [200, 40], kind="param"), tensor("b", [200], kind="param")],
                          [tensor("output", [90, 1])],
                          [ph("x"), attr("w", "w"), attr("b", "b"),
                           fn("linear", "torch._C._nn.linear", ["%x", "%w", "%b"]),
                           fn("clamp", "torch.clamp", ["%linear", -3.0, 3.0]),
                           fn("logsumexp", "torch.logsumexp", ["%clamp"], {"dim": 1, "keepdim": True}),
                           fn("mish", "torch.nn.functional.mish", ["%logsumexp"], {"inplace": False}),
                           fn("mul", "_operator.mul", ["%logsumexp", "%mish"]), out("%mul")])
EMU["rr_softmax"] = spec("custom_rr_softmax.py",
                         [tensor("x", [66, 52]), tensor("w", [210, 52], kind="param"), tensor("b", [210], kind="param")],
                         [tensor("output", [66, 210])],
                         [ph("x"), attr("w", "w"), attr("b", "b"),
                          fn("linear", "torch._C._nn.linear", ["%x", "%w", "%b"]),
                          fn("gelu", "torch._C._nn.gelu", ["%linear"]),
                          fn("softmax", "torch.nn.functional.softmax", ["%gelu"],
                             {"dim": 1, "_stacklevel": 3, "dtype": None}), out("%softmax")])
EMU["rr_max_row"] = spec("custom_rr_max_row.py",
                         [tensor("A", [2, 35, 24]), tensor("B", [24, 150]), tensor("s", [2, 35])],
                         [tensor("output", [2, 35])],
                         [ph("A"), ph("B"), ph("s"), matmul(),
                          fn("amax", "torch.amax", ["%matmul"], {"dim": -1}),
                          fn("add", "_operator.add", ["%amax", "%s"]), out("%add")])
EMU["rr_logsoftmax_bmm"] = spec("custom_rr_logsoftmax.py",
                                [tensor("a", [3, 20, 36]), tensor("b", [3, 36, 140]), tensor("c", [140])],
                                [tensor("output", [3, 20, 140])],
                                [ph("a"), ph("b"), ph("c"), fn("bmm", "torch.bmm", ["%a", "%b"]),
                                 fn("add", "_operator.add", ["%bmm", "%c"]),
                                 fn("log_softmax", "torch.log_softmax", ["%add"], {"dim": -1}),
                                 out("%log_softmax")])

os.makedirs(os.path.join(HERE, "emu"), exist_ok=True)
for key, s in EMU.items():
    with open(os.path.join(HERE, "emu", key + ".json"), "w") as f:
        json.dump(s, f, indent=1)
        f.write("\n")


# --- real task specs (make_spec() on the GPU host, copied verbatim; not written here):
# how fx really spells A.T (builtins.getattr), nn.Linear, einsum, clone().detach(), a
# 0-dim parameter, BatchNorm1d (its running statistics are buffers among the inputs). Their expectations go into expect.txt with the others.
REAL = {
    "kb_l1_16_matmul_ta": "gemm",
    "kb_l1_11_einsum": "gemm",
    "kb_l1_4_matvec": "gemm",
    "kb_l1_14_triu": "gemm",
    "kb_l2_12_gemm_mul_leaky": "gemm",
    "kb_l2_40_scale_residual": "gemm",
    "kb_l2_68_min_sub": "gemm",
    "kb_l2_56_sigmoid_sum": "gemm",
    "kb_l2_22_lse_mish": "gemm",
    "kb_l2_99_gelu_softmax": "gemm",
    "kb_l2_80_max_sub_gelu": "not covered: operator 'builtins.getattr'",
    "kb_l2_33_scale_bn": "gemm",
    "kb_l2_84_bn_softmax": "gemm",
}
EXPECT.update(REAL)

for key, s in FIX.items():
    with open(os.path.join(HERE, key + ".json"), "w") as f:
        json.dump(s, f, indent=1)
        f.write("\n")
with open(os.path.join(HERE, "expect.txt"), "w") as f:
    f.write("# fixture<TAB>expected recognition: pointwise, reduce, gemm, or the start of the "
            "'not covered' reason (written by make_fixtures.py)\n")
    for key in list(FIX) + list(REAL):
        f.write(f"{key}\t{EXPECT[key]}\n")
print(f"wrote {len(FIX)} fixtures")
