import torch
import torch.nn as nn


class Model(nn.Module):
    """A 3D transposed convolution, stride 2 and kernel 3 in every dim, on Hopper's warpgroup
    MMAs in sub-pixel phases with the width phases paired, for the rotated persistent walk
    (recipes/conv_tc.cu CGR_CONV_ROTATE, the default in phases: in round k CTA b takes tile
    k*grid + (b + k) mod grid; also the unrotated walk, CGR_CONV_ROTATE 0): 16 input channels, 32 output channels, 6144 rows a phase (48 tiles of 128; 192
    width-phase pairs), more than the 132 CTAs of one round on an H100 or H200 and not a
    multiple of them, so the rounds rotate and the last one skips the tiles past the end.
    sanitize-variants: wgmma
    sanitize-also: CGR_CONV_ROTATE 0
    """

    def __init__(self):
        super(Model, self).__init__()
        self.convt = nn.ConvTranspose3d(16, 32, kernel_size=3, stride=2, padding=1, output_padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.convt(x) - 0.125)


def get_inputs():
    return [torch.randn(2, 16, 8, 16, 24)]


def get_init_inputs():
    return []
