import torch
import torch.nn as nn


class Model(nn.Module):
    """A @ B where rows 0, 389 and 778 of A hold multiples of 2^17 (up to 393216; fp16's
    largest value is 65504) and B holds multiples of 1/8, sizes that fill no tile evenly
    (M 1000, N 1000, K 776). Those rows' products and sums are exact in fp32 (multiples of
    2^14 below 2^29), so any error there is the kernel's. The 3xFP16 split
    (recipes/tf32_mma.cuh, CGR_PREC 2) turns their entries into inf: the tiles holding
    them must notice (accumulators not finite) and run their main loop again in 3xTF32,
    while the other tiles (most of them: the rows are 389 apart) keep the fast result.
    sanitize-variants: 3xf16
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 1000
N = 1000
K = 776


def get_inputs():
    A = torch.randn(M, K)
    A[::389] = torch.randint(-3, 4, (len(range(0, M, 389)), K)).float() * 2.0**17
    return [A, torch.randint(-8, 9, (K, N)).float() / 8]


def get_init_inputs():
    return []
