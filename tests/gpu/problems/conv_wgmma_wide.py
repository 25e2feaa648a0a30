import torch
import torch.nn as nn


class Model(nn.Module):
    """A 2D convolution on Hopper's warpgroup MMAs (recipes/conv_tc.cu CGR_WGMMA) with
    128-row tiles (two consumer warpgroups: 25200 output pixels make 197 of them) and two
    column tiles, the second partial (136 output channels in tiles of 128), 32 input
    channels, a 3 x 3 kernel with padding 1, then ReLU and a scale.
    sanitize-variants: wgmma.*tile=128x
    """

    def __init__(self):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(32, 136, kernel_size=3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x)) * 0.5


def get_inputs():
    return [torch.randn(4, 32, 70, 90)]


def get_init_inputs():
    return []
