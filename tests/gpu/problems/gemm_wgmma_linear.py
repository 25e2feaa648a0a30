import torch
import torch.nn as nn


class Model(nn.Module):
    """A Linear layer (x @ W.T + b) then GELU, at sizes that fill no tile evenly (batch 1000,
    300 in, 2100 out: partial row, column and k tiles). Both operands K-major: the built-in
    recipes' WGMMA variant (recipes/gemm_wgmma.cu) loads them 16 bytes along k, zeros past
    the edges, and its producer warpgroup writes the split 3xTF32 parts as whole 16-byte
    chunks of the swizzled tiles (tests/gpu/problems/gemm_wgmma_odd.py covers the
    transposed operands).
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
