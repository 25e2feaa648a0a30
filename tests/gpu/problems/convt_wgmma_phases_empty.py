import torch
import torch.nn as nn


class Model(nn.Module):
    """A strided 2D transposed convolution with phases that have no taps, on Hopper's
    warpgroup MMAs in sub-pixel phases (recipes/conv_tc.cu CGR_WGMMA with CGR_PHASES):
    height stride 2 with dilation 2 (gcd 2: the odd rows take no tap, the even ones all 3,
    as level 1 #77 in each dim), width kernel 1 at stride 2 (the odd columns take none); so
    3 of the 4 phases are the bias alone (tiles with no k-tiles). 16 input channels, 24
    output channels, odd sizes, then a ReLU.
    sanitize-variants: wgmma
    """

    def __init__(self):
        super(Model, self).__init__()
        self.convt = nn.ConvTranspose2d(16, 24, kernel_size=(3, 1), stride=(2, 2), padding=(1, 0),
                                        output_padding=(1, 1), dilation=(2, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.convt(x))


def get_inputs():
    return [torch.randn(2, 16, 19, 23)]


def get_init_inputs():
    return []
