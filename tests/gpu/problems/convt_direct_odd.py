import torch
import torch.nn as nn


class Model(nn.Module):
    """A grouped 2D transposed convolution whose outputs take few products, so that its first
    variant is the direct kernel (recipes/conv_direct.cu): 2 groups of 6 input and 8 output
    channels, height stride 5 dilation 2 (as level 1 #81: 3 of 5 phases one tap, 2 none),
    width stride 3 padding 2 output padding 1, odd sizes, the bias, then a per-channel
    scale and a ReLU in the epilogue.
    sanitize-variants: conv direct
    """

    def __init__(self):
        super(Model, self).__init__()
        self.convt = nn.ConvTranspose2d(12, 16, kernel_size=3, stride=(5, 3), padding=(1, 2),
                                        output_padding=(0, 1), dilation=(2, 1), groups=2)
        self.scale = nn.Parameter(torch.randn(16, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.convt(x) * self.scale)


def get_inputs():
    return [torch.randn(3, 12, 33, 47)]


def get_init_inputs():
    return []
