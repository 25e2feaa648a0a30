import torch
import torch.nn as nn


class Model(nn.Module):
    """A stride-1 transposed 2D convolution on Hopper's warpgroup MMAs, as the convolution
    with the weight flipped (recipes/conv_tc.cu CGR_WGMMA with CGR_FLIP): 12 input channels
    (padded to 16), 20 output channels, a 3 x 5 kernel, padding (1, 3) (the flipped form's
    padding (1, 1)), odd sizes, then its bias and a tanh.
    sanitize-variants: wgmma
    """

    def __init__(self):
        super(Model, self).__init__()
        self.convt = nn.ConvTranspose2d(12, 20, kernel_size=(3, 5), padding=(1, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.convt(x))


def get_inputs():
    return [torch.randn(3, 12, 33, 47)]


def get_init_inputs():
    return []
