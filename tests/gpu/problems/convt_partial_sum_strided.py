import torch
import torch.nn as nn


class Model(nn.Module):
    """A strided, padded, dilated ConvTranspose2d summed over its height only, folded into x
    and the weight (2 cells along the height: tap 0 misses the first row) before the
    convolution along the width (src/recipe_conv.c prefold_setup, recipes/conv_fold.cuh),
    then a tanh: the direct kernel first (stride 2 along the width), then the tiles.
    sanitize-variants: direct|conv tile
    """

    def __init__(self):
        super(Model, self).__init__()
        self.convt = nn.ConvTranspose2d(5, 8, kernel_size=(3, 2), stride=(2, 2), padding=(1, 0),
                                        output_padding=(1, 0), dilation=(1, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(torch.sum(self.convt(x), dim=2))


def get_inputs():
    return [torch.randn(4, 5, 19, 23)]


def get_init_inputs():
    return []
