"""nn.functional: stateless layer functions and losses (PyTorch's names and semantics)."""

from __future__ import annotations

from .. import _C
from .. import _functions as F
from .._functions import log_softmax, relu, sigmoid, softmax, tanh

Tensor = _C.Tensor

__all__ = ["cross_entropy", "linear", "log_softmax", "mse_loss", "nll_loss", "relu", "sigmoid", "softmax",
           "tanh"]


def linear(input, weight, bias=None):
    """input @ weight.T + bias, with weight of shape (out_features, in_features)."""
    out = F.matmul(input, weight.T)
    return out if bias is None else F.add(out, bias)


def _reduce(loss, reduction: str):
    if reduction == "mean":
        return F.mean(loss)
    if reduction == "sum":
        return F.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_class_targets(input, target, name: str) -> None:
    if not isinstance(target, Tensor) or target.dtype != _C.dtype.int64:
        got = target.dtype if isinstance(target, Tensor) else type(target).__name__
        raise TypeError(f"{name}: target must be an int64 tensor of class indices, got {got}")
    if input.ndim != 2 or target.ndim != 1 or input.shape[0] != target.shape[0]:
        raise ValueError(f"{name}: expected input of shape (N, C) and target of shape (N,), got input "
                         f"{tuple(input.shape)} and target {tuple(target.shape)}")


def nll_loss(input, target, reduction: str = "mean"):
    """-input[i, target[i]], reduced: input holds log-probabilities of shape (N, C)."""
    _check_class_targets(input, target, "nll_loss")
    # A one-hot mask picks each row's target column; as a constant it carries no gradient, so the
    # backward of the product is the mask times the incoming gradient.
    one_hot = _C.one_hot(target, input.shape[1]).to(input.dtype)
    picked = F.sum(F.mul(input, one_hot), 1)
    return _reduce(F.neg(picked), reduction)


def cross_entropy(input, target, reduction: str = "mean"):
    """nll_loss(log_softmax(input, 1), target): softmax cross-entropy on raw scores (logits)."""
    _check_class_targets(input, target, "cross_entropy")
    return nll_loss(log_softmax(input, 1), target, reduction)


def mse_loss(input, target, reduction: str = "mean"):
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"mse_loss: input {tuple(input.shape)} and target {tuple(target.shape)} must have "
                         "the same shape")
    difference = F.sub(input, target)
    return _reduce(F.mul(difference, difference), reduction)
