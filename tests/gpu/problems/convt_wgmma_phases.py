import torch
import torch.nn as nn


class Model(nn.Module):
    """A strided 3D transposed convolution on Hopper's warpgroup MMAs in sub-pixel phases
    (recipes/conv_tc.cu CGR_WGMMA with CGR_PHASES): 12 input channels (padded to 16), 20
    output channels; depth stride 2 (kernel 3, padding 1, output_padding 1: phases of 2 and
    1 taps), height stride 3 with a kernel of 4 (2, 1 and 1 taps, padding 2), width stride
    1 with dilation 2 (every tap, the input stepping by 2), odd sizes (partial tiles, phase
    boxes past the output), then a bias-like add and tanh.
    sanitize-variants: wgmma
    """

    def __init__(self):
        super(Model, self).__init__()
        self.convt = nn.ConvTranspose3d(12, 20, kernel_size=(3, 4, 2), stride=(2, 3, 1),
                                        padding=(1, 2, 0), output_padding=(1, 0, 0),
                                        dilation=(1, 1, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.convt(x) + 0.25)


def get_inputs():
    return [torch.randn(3, 12, 5, 7, 9)]


def get_init_inputs():
    return []
