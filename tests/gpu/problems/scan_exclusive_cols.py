import torch
import torch.nn as nn


class Model(nn.Module):
    """An exclusive cumsum along a middle dim (a thread a column in recipes/scan.cu),
    written as KernelBench's 92_cumsum_exclusive writes it, then an epilogue that reads
    the input again.
    sanitize-variants: threads=
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = torch.cumsum(x.narrow(dim=1, start=0, length=x.size(1) - 1), dim=1)
        e = torch.cat((torch.zeros_like(x.select(1, 0).unsqueeze(1)), c), dim=1)
        return e * 0.5 + x


def get_inputs():
    return [torch.randn(6, 300, 70)]


def get_init_inputs():
    return []
