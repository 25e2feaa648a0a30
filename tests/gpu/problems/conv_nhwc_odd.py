import torch
import torch.nn as nn


class Model(nn.Module):
    """A 2D convolution through the built-in recipes' channels-last path (recipes/conv_tc.cu
    CGR_NHWC) at its edges: 5 input channels (padded to 8 in the workspace copy, so a
    16-byte chunk straddles a tap's real and padded channels), stride (2, 1), padding
    (1, 3), dilation (1, 2), a 3 x 3 kernel, odd sizes (partial M and N tiles, a K of 45
    padded to 72, not a whole number of k-tiles), then the conv's bias, a bias of one
    value a channel and a GELU.
    sanitize-variants: channels-last
    """

    def __init__(self):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(5, 37, kernel_size=(3, 3), stride=(2, 1), padding=(1, 3),
                              dilation=(1, 2))
        self.bias = nn.Parameter(torch.randn(37, 1, 1) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.conv(x) + self.bias)


def get_inputs():
    return [torch.randn(3, 5, 29, 41)]


def get_init_inputs():
    return []
