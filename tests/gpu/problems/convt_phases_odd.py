import torch
import torch.nn as nn


class Model(nn.Module):
    """A 3D transposed convolution whose dims each take another path through the built-in
    recipes' sub-pixel phases (recipes/conv_tc.cu CGR_PHASES): depth stride 2 (kernel 3,
    padding 1, output_padding 1: phases of 2 and 1 taps), height stride 3 with a kernel of
    4 (2, 1 and 1 taps; padding 2 larger than some residues), width stride 1 with dilation
    2 (one phase, every tap), at odd sizes (partial M and N tiles, phase boxes past the
    output), then a bias-like add and tanh.
    sanitize-variants: conv tile
    """

    def __init__(self):
        super(Model, self).__init__()
        self.convt = nn.ConvTranspose3d(5, 7, kernel_size=(3, 4, 2), stride=(2, 3, 1),
                                        padding=(1, 2, 0), output_padding=(1, 0, 0),
                                        dilation=(1, 1, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.convt(x) + 0.25)


def get_inputs():
    return [torch.randn(3, 5, 5, 6, 7)]


def get_init_inputs():
    return []
