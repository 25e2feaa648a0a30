import torch
import torch.nn as nn


class Model(nn.Module):
    """ReLU on a small tensor: cutegen's fast tests judge kernels against this."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


batch_size = 1024
dim = 4096


def get_inputs():
    # randn, not rand: half the values are negative, so relu does something.
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
