import torch
import torch.nn as nn


class Model(nn.Module):
    """A 3D transposed convolution with width stride 2 on Hopper's warpgroup MMAs in
    sub-pixel phases, for the paired form (recipes/conv_tc.cu CGR_CONV_PAIR_W 1: a CTA takes
    both width phases of a box and stores each thread's two neighbouring outputs together):
    12 input channels (padded to 16), 20 output channels; depth stride 1, height stride 2
    (padding 0, output_padding 1), width stride 2 with padding 1 (as level 1 #73: phase 1's
    row lands one output before phase 0's) and an odd output width (17: rows start at either
    parity, so both the 8-byte and the single stores run, and phase 0's last corner of a row
    is past the output), then a bias-like add and tanh.
    sanitize-variants: wgmma
    sanitize-also: CGR_CONV_PAIR_W 1
    """

    def __init__(self):
        super(Model, self).__init__()
        self.convt = nn.ConvTranspose3d(12, 20, kernel_size=(3, 3, 3), stride=(1, 2, 2),
                                        padding=(1, 0, 1), output_padding=(0, 1, 0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.convt(x) + 0.25)


def get_inputs():
    return [torch.randn(3, 12, 5, 7, 9)]


def get_init_inputs():
    return []
