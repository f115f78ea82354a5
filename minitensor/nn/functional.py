"""nn.functional: stateless layer functions and losses (PyTorch's names and semantics)."""

from __future__ import annotations

import warnings

from .. import _C
from .. import _functions as F
from .._C import one_hot
from .._functions import log_softmax, relu, sigmoid, softmax, tanh
from .classification_losses import check_reduction, cross_entropy, legacy_reduction, nll_loss

Tensor = _C.Tensor

__all__ = ["cross_entropy", "linear", "log_softmax", "mse_loss", "nll_loss", "one_hot", "relu", "sigmoid",
           "softmax", "tanh"]


def linear(input, weight, bias=None):
    """input @ weight.T + bias, with weight of shape (out_features, in_features)."""
    out = F.matmul(input, weight.T)
    return out if bias is None else F.add(out, bias)


def _size(tensor) -> str:
    return f"torch.Size({list(tensor.shape)})"


def mse_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """The mean (or sum) of squared differences; input and target of the same shape."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    check_reduction(reduction)
    if tuple(input.shape) != tuple(target.shape):  # broadcast, with torch's warning
        warnings.warn(f"Using a target size ({_size(target)}) that is different to the input size ({_size(input)}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=2)
    difference = F.sub(input, target)
    squares = F.mul(difference, difference)
    if reduction == "none":
        return squares
    return F.mean(squares) if reduction == "mean" else F.sum(squares)
