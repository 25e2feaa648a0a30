import torch
import torch.nn as nn


class Model(nn.Module):
    """A Linear layer, SiLU, GroupNorm over groups of 48 of its 2160 columns, Hardtanh, with
    the product long enough (K 600, 1367 flops an operand element) for the built-in recipes
    to put the GroupNorm apart first on Hopper (src/recipe_stage.c recipe_staged_rows_apart:
    stage 0 the product and SiLU on warpgroup MMAs, split first in 3xFP16 with a scale a
    tile, into the workspace; stage 1 the GroupNorm and Hardtanh), at sizes that fill no
    tile evenly (batch 1000, 600 in: partial row, column and k tiles).
    sanitize-variants: stage 0 variant 0, stage 1 variant 0
    """

    def __init__(self, in_features: int, out_features: int, groups: int):
        super(Model, self).__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.gn = nn.GroupNorm(groups, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.hardtanh(self.gn(torch.nn.functional.silu(self.linear(x))), -2.0, 2.0)


batch_size = 1000
in_features = 600
out_features = 2160
groups = 45


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, groups]
