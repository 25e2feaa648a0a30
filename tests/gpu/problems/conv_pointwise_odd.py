import torch
import torch.nn as nn


class Model(nn.Module):
    """A pointwise (1 x 1) 2D convolution, so that its first variant is the batched GEMM it
    is (src/recipe_conv.c recipe_conv_as_gemm: recipes/gemm_tc.cu with x as the N-major
    operand): odd pixel count (37 x 29, 4-byte copies), 24 -> 40 channels, its bias (one
    value a channel, read a GEMM row), then a per-channel scale and a ReLU in the epilogue.
    sanitize-variants: conv as gemm
    """

    def __init__(self):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(24, 40, kernel_size=1)
        self.scale = nn.Parameter(torch.randn(40, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x) * self.scale)


def get_inputs():
    return [torch.randn(3, 24, 37, 29)]


def get_init_inputs():
    return []
