import torch
import torch.nn as nn


class Model(nn.Module):
    """A 3D transposed convolution with a stride and a dilation above 1 in the same dims, in
    the mma.sync kernel's sub-pixel phases (recipes/conv_tc.cu CGR_PHASES; 5 input channels:
    not Hopper's kernel): depth stride 2 dilation 2 (the odd phases take no tap), height
    stride 2 (2 and 1 taps), width stride 3 dilation 2 (gcd 1: each residue its own tap,
    c0 != 0), odd sizes, then tanh.
    sanitize-variants: conv tile
    """

    def __init__(self):
        super(Model, self).__init__()
        self.convt = nn.ConvTranspose3d(5, 7, kernel_size=(3, 3, 2), stride=(2, 2, 3),
                                        padding=(1, 1, 0), output_padding=(1, 1, 1),
                                        dilation=(2, 1, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.convt(x))


def get_inputs():
    return [torch.randn(3, 5, 4, 6, 5)]


def get_init_inputs():
    return []
