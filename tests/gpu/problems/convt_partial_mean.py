import torch
import torch.nn as nn


class Model(nn.Module):
    """The mean over the depth only of a ConvTranspose3d (stride 1, padding 1: 3 cells along
    the depth, level 2 #13's form), folded into x and the weight before the convolution
    over height and width (src/recipe_conv.c prefold_setup, recipes/conv_fold.cuh): odd
    sizes, its bias, then a value a channel added and a scale after the mean.
    sanitize-variants: wgmma|channels-last
    """

    def __init__(self):
        super(Model, self).__init__()
        self.convt = nn.ConvTranspose3d(6, 10, kernel_size=3, stride=1, padding=1)
        self.shift = nn.Parameter(torch.randn(1, 10, 1, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.convt(x).mean(dim=2, keepdim=True)
        return (y + self.shift) * 0.5


def get_inputs():
    return [torch.randn(3, 6, 11, 13, 17)]


def get_init_inputs():
    return []
