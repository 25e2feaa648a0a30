import torch
import torch.nn as nn


class Model(nn.Module):
    """F.scaled_dot_product_attention at odd sizes, through the built-in recipes'
    expansion (src/recipe_expand.c): softmax(q @ k^T / sqrt(24)) @ v as two staged matrix
    products, the first with its row softmax (recipes/gemm_tc.cu's soft_kernel) writing the
    weights into the workspace, the second reading them. 37 queries and 301 keys (partial M
    and N tiles; a row of the softmax spans two or three N tiles, so its max and sum are
    combined from the tiles' partials; rows of 301 floats are not 16-byte aligned for the
    second product's A), a head dim of 24 (a partial k-tile), a value dim of 20 (the second
    product's partial N tile).
    sanitize-variants: stage 0 variant 0,
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)


def get_inputs():
    return [torch.randn(2, 3, 37, 24), torch.randn(2, 3, 301, 24), torch.randn(2, 3, 301, 20)]


def get_init_inputs():
    return []
