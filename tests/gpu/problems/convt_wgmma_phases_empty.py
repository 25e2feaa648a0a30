import torch
import torch.nn as nn


class Model(nn.Module):
    """A strided 2D transposed convolution whose kernel is narrower than its stride (width:
    kernel 1, stride 2), on Hopper's warpgroup MMAs in sub-pixel phases (recipes/conv_tc.cu
    CGR_WGMMA with CGR_PHASES): the odd-width phases have no taps at all (their outputs are
    the bias alone: a tile with no k-tiles), the even ones 2 and 1 taps in height; 16 input
    channels, 24 output channels, odd sizes, then a ReLU.
    sanitize-variants: wgmma
    """

    def __init__(self):
        super(Model, self).__init__()
        self.convt = nn.ConvTranspose2d(16, 24, kernel_size=(3, 1), stride=(2, 2), padding=(1, 0),
                                        output_padding=(1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.convt(x))


def get_inputs():
    return [torch.randn(2, 16, 19, 23)]


def get_init_inputs():
    return []
