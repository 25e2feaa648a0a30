import torch
import torch.nn as nn


class Model(nn.Module):
    """A 2D convolution on Hopper's warpgroup MMAs (recipes/conv_tc.cu CGR_WGMMA) of an input
    far past fp16's range (up to ~1.5e6; fp16 ends at 65504): the split with scale 1
    (CGR_CONV_XSCALE 2) finds the largest |x| on the way, and outside its band x is split
    again with its own scale (resplit_x); without that second split the big halves would be
    infinite and so would every output. The input and the weight are positive (no
    cancellation: the output keeps the input's scale, so an fp32 tolerance measures the
    split and not the conditioning; random signs left PyTorch's own fp32 result 0.5 off
    from float64, H100 session 27). 32 input channels, 48 output channels, a 3 x 3 kernel,
    padding 1, and a bias.
    sanitize-variants: wgmma
    """

    def __init__(self):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(32, 48, kernel_size=3, padding=1)
        with torch.no_grad():
            self.conv.weight.copy_(torch.rand_like(self.conv.weight) * 0.05)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.rand(2, 32, 37, 45) * 3.0e5 + 1.0e3]


def get_init_inputs():
    return []
