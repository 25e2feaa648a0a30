import torch
import torch.nn as nn


class Model(nn.Module):
    """A Linear layer (x @ W.T + b) then GELU, at sizes that fill no tile evenly (batch 1000,
    300 in, 2100 out: partial row, column and k tiles). Both operands K-major with rows of
    16-byte multiples, so the built-in recipes' WGMMA variant (recipes/gemm_wgmma.cu) brings
    its tiles in by TMA (CGR_TMA: zero-filled past the edges, the producer warpgroup
    splitting them in place for 3xTF32, mbarriers with transaction counts).
    sanitize-variants: wgmma
    """

    def __init__(self, in_features: int, out_features: int):
        super(Model, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.linear(x))


batch_size = 1000
in_features = 300
out_features = 2100


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
