import torch
import torch.nn as nn


class Model(nn.Module):
    """A Linear layer, SiLU, then GroupNorm over groups of 48 of its 2160 columns, then
    Hardtanh, at sizes that fill no tile evenly (batch 1000, 300 in: partial row, column and
    k tiles). The built-in recipes' GEMM stores the SiLU of the product as scratch and
    gn_kernel (recipes/gemm_tc.cu) normalises it in place: 4 lanes a group of 12 16-byte
    vectors, the last warp partly past the last group.
    sanitize-variants: gemm 3xtf32
    """

    def __init__(self, in_features: int, out_features: int, groups: int):
        super(Model, self).__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.gn = nn.GroupNorm(groups, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.hardtanh(self.gn(torch.nn.functional.silu(self.linear(x))), -2.0, 2.0)


batch_size = 1000
in_features = 300
out_features = 2160
groups = 45


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, groups]
