import torch
import torch.nn as nn


class Model(nn.Module):
    """A 2D convolution, then BatchNorm2d in eval mode folded into its epilogue (src/recipe.c
    eval_batchnorm: running statistics, weight and bias read as one value an output channel),
    then ReLU: 5 -> 11 channels (a partial N tile), padding 1, odd sizes. The statistics and
    the affine parameters are random, so that a parameter read for the wrong channel (or not
    at all) changes the output.
    sanitize-variants: conv tile
    """

    def __init__(self):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(5, 11, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(11)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(3, 5, 13, 17)]


def get_init_inputs():
    return []
