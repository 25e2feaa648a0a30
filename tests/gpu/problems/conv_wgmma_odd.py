import torch
import torch.nn as nn


class Model(nn.Module):
    """A 2D convolution on Hopper's warpgroup MMAs (recipes/conv_tc.cu CGR_WGMMA: x and the
    weight split into fp16 halves channels-last first, then a producer warpgroup gathering
    16-byte chunks into the swizzled stages) at its edges: 24 input channels (a k-tile of 64
    halves spans 2.67 taps, so its chunks change tap mid-tile), 80 output channels (a WGMMA
    N of 80), stride (2, 1), padding (1, 2), dilation (1, 2), K 216 padded to 256, odd
    sizes (a partial last row tile), then the conv's bias, a bias of one value a channel
    and a GELU.
    sanitize-variants: wgmma
    """

    def __init__(self):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(24, 80, kernel_size=(3, 3), stride=(2, 1), padding=(1, 2),
                              dilation=(1, 2))
        self.bias = nn.Parameter(torch.randn(80, 1, 1) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.conv(x) + self.bias)


def get_inputs():
    return [torch.randn(3, 24, 29, 41)]


def get_init_inputs():
    return []
