import torch
import torch.nn as nn


class Model(nn.Module):
    """relu(x) * alpha * w: an input, a Python number and a parameter, for
    tests/python/test_final_cpu.py."""

    def __init__(self, n):
        super().__init__()
        self.w = nn.Parameter(torch.rand(n) + 0.5)

    def forward(self, x, alpha):
        return torch.relu(x) * alpha * self.w


n = 4096


def get_inputs():
    return [torch.randn(n), 1.5]


def get_init_inputs():
    return [n]
