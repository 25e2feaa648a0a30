import torch
import torch.nn as nn


class Model(nn.Module):
    """y = x * weight + bias with per-feature parameters (broadcast over rows).

    Exercises the candidate ABI's ordering: inputs = [x, weight, bias] (forward's
    arguments, then the parameters in state_dict order). The parameters are random so
    that a kernel which swaps them, or ignores one, gives a wrong result.
    """

    def __init__(self, features: int):
        super(Model, self).__init__()
        self.weight = nn.Parameter(torch.randn(features))
        self.bias = nn.Parameter(torch.randn(features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.weight + self.bias


batch_size = 512
features = 1024


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]
