import torch
import torch.nn as nn


class Model(nn.Module):
    """A reversed masked cumsum over rows of 4999 (not a multiple of 4: the built-in
    recipe's element-by-element path of recipes/scan.cu, passes that end mid-row), the
    mask a bool tensor read in the prologue.
    sanitize-variants: threads=
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum((x * mask).flip(1), dim=1).flip(1)


def get_inputs():
    x = torch.randn(48, 4999)
    return [x, torch.rand(48, 4999) < 0.5]


def get_init_inputs():
    return []
