import torch
import torch.nn as nn


class Model(nn.Module):
    """A @ B where each 128-row tile of A has its own magnitude: 1, 2^90, 2^-90, zeros,
    subnormals (multiples of 2^-140), 2^40, 2^-40, 1 (the last tile partial: M 1000, N 2100,
    K 300). The WGMMA kernel's 3xFP16 split gives each (row tile x k-tile) its own
    power-of-two scale (recipes/gemm_wgmma.cu, CGR_TILE_SCALE): every tile here keeps fp16's
    precision, where one scale for all of A (set by the 2^90 tile) flushes the tiles of
    magnitude 1 to zero. The subnormal tile checks the scale's bound: 2^(14 - ilogb) of its
    largest |x| would be 2^148, inf in fp32, and turn its zeros into NaN.
    sanitize-variants: wgmma 3xf16
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 1000
N = 2100
K = 300
EXPONENTS = [0, 90, -90, None, "subnormal", 40, -40, 0]


def get_inputs():
    A = torch.randn(M, K)
    for t, e in enumerate(EXPONENTS):
        rows = slice(128 * t, min(128 * (t + 1), M))
        if e is None:
            A[rows] = 0.0
        elif e == "subnormal":
            A[rows] = torch.randint(-3, 4, A[rows].shape).float() * 2.0**-140
        else:
            A[rows] *= 2.0**e
    return [A, torch.randn(K, N)]


def get_init_inputs():
    return []
