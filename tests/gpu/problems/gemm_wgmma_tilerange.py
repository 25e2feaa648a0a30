import torch
import torch.nn as nn


class Model(nn.Module):
    """A @ B where each 128-row tile of A has its own magnitude (M 1000, N 2100, K 300; the
    last tile partial): randn; multiples of 2^30; randn x 2^-90; zeros; subnormals
    (multiples of 2^-140); multiples of 2^40; randn x 2^-40; randn. B holds multiples of
    1/8, so the rows of the 2^30 and 2^40 tiles have exact products and exact sums in fp32
    (multiples of 2^27 below 2^51): any error there is the kernel's, and no element of
    theirs cancels below what the tolerance (atol 1e-4 + rtol 1e-4 |truth| + PyTorch's own
    error) allows. The WGMMA kernel's 3xFP16 split gives each (row tile x k-tile) its own
    power-of-two scale (recipes/gemm_wgmma.cu, CGR_TILE_SCALE): every tile keeps fp16's
    precision, where one scale for all of A (2^-27, set by the 2^40 tile) flushes the randn
    tiles to zero. The subnormal tile checks the scale's bound: 2^(14 - ilogb) of its
    largest |x| would be 2^150, inf in fp32, and turn its zeros into NaN.
    (Session 25's first form had randn x 2^90 rows: their sums cancel, and where the float64
    truth is 1000 times smaller than the row's scale no fp32 kernel summing in another order
    than PyTorch passes; the one-scale form failed 756689 elements, the tile-scale one 214,
    all in that tile.)
    sanitize-variants: wgmma 3xf16
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 1000
N = 2100
K = 300
# (kind, exponent) a 128-row tile
TILES = [("randn", 0), ("int", 30), ("randn", -90), ("zero", 0), ("int", -140), ("int", 40), ("randn", -40),
         ("randn", 0)]


def get_inputs():
    A = torch.randn(M, K)
    for t, (kind, e) in enumerate(TILES):
        rows = slice(128 * t, min(128 * (t + 1), M))
        if kind == "zero":
            A[rows] = 0.0
        elif kind == "int":
            A[rows] = torch.randint(-3, 4, A[rows].shape).float() * 2.0**e
        else:
            A[rows] *= 2.0**e
    return [A, torch.randint(-8, 9, (K, N)).float() / 8]


def get_init_inputs():
    return []
