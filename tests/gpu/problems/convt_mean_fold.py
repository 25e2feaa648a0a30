import torch
import torch.nn as nn


class Model(nn.Module):
    """The mean over all the pixels of a transposed convolution without padding, after an
    epilogue affine in it, so that it folds (src/recipe_conv.c spatred_setup,
    recipes/conv_mean.cu: sums of x and of the weight's taps, never the convolution): a
    grouped ConvTranspose2d, strides (2, 3), dilation (1, 2), output padding (1, 0), odd
    sizes, its bias, times a value a channel, minus a scalar, then torch.mean over (2, 3)
    (not keepdim) and a tanh after it.
    sanitize-variants: conv folded
    """

    def __init__(self):
        super(Model, self).__init__()
        self.convt = nn.ConvTranspose2d(12, 18, kernel_size=(3, 4), stride=(2, 3), dilation=(1, 2),
                                        output_padding=(1, 0), groups=3)
        self.scale = nn.Parameter(torch.randn(18, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.convt(x) * self.scale - 0.25
        return torch.tanh(torch.mean(y, dim=(2, 3)))


def get_inputs():
    return [torch.randn(5, 12, 37, 29)]


def get_init_inputs():
    return []
