import torch
import torch.nn as nn


class Model(nn.Module):
    """A grouped 2D transposed convolution that takes no sub-pixel phases (level 1 #75's
    geometry at odd sizes: stride (2, 3) with dilation (2, 1), so height has both above 1):
    4 groups of 3 input and 5 output channels through the division gather
    (recipes/conv_tc.cu CGR_TRANSPOSED, CGR_GROUPS 4), kernel (3, 5), padding (1, 2), no
    bias, then * 0.5.
    sanitize-variants: conv tile
    """

    def __init__(self):
        super(Model, self).__init__()
        self.convt = nn.ConvTranspose2d(12, 20, kernel_size=(3, 5), stride=(2, 3), padding=(1, 2),
                                        dilation=(2, 1), groups=4, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.convt(x) * 0.5


def get_inputs():
    return [torch.randn(3, 12, 9, 11)]


def get_init_inputs():
    return []
