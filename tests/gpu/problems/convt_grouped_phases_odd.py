import torch
import torch.nn as nn


class Model(nn.Module):
    """A grouped 3D transposed convolution (recipes/conv_tc.cu CGR_GROUPS with the sub-pixel
    phases, level 1 #72's geometry at odd sizes): 3 groups of 5 input and 4 output channels
    (each group's weight rows of the phase-major copy, its input channels, its output
    channels in the epilogue), stride 2 with kernel (3, 5, 4) and padding (1, 2, 1),
    output_padding 1, then the bias and a ReLU.
    sanitize-variants: conv tile
    """

    def __init__(self):
        super(Model, self).__init__()
        self.convt = nn.ConvTranspose3d(15, 12, kernel_size=(3, 5, 4), stride=2, padding=(1, 2, 1),
                                        output_padding=1, groups=3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.convt(x))


def get_inputs():
    return [torch.randn(2, 15, 3, 5, 7)]


def get_init_inputs():
    return []
