import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Smooth L1 (Huber) loss, averaged to one number: a problem whose output is a
    0-dim tensor (the harness must judge scalars too)."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.smooth_l1_loss(predictions, targets, beta=0.5)


batch_size = 1024
dim = 1024


def get_inputs():
    # differences both below and above beta, so both branches of the loss count
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
