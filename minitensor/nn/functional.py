"""nn.functional: stateless layer functions and losses (PyTorch's names and semantics)."""

from __future__ import annotations

import warnings

from .. import _C
from .. import _functions as F
from .._C import one_hot
from ..autograd.function import Function
from .._functions import log_softmax, relu, sigmoid, softmax, tanh
from .classification_losses import check_reduction, cross_entropy, legacy_reduction, nll_loss

Tensor = _C.Tensor

__all__ = ["cross_entropy", "dropout", "embedding", "layer_norm", "linear", "log_softmax", "mse_loss", "nll_loss",
           "one_hot", "relu", "sigmoid", "softmax", "tanh"]


def linear(input, weight, bias=None):
    """input @ weight.T + bias, with weight of shape (out_features, in_features)."""
    out = F.matmul(input, weight.T)
    return out if bias is None else F.add(out, bias)


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zeroes each element with probability p (mt.manual_seed draws) and scales the rest by 1/(1-p);
    the identity when not training."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        keep = _C.zeros_like(input)
    else:
        keep = _C.div(_C.ge(_C.rand(*input.shape, dtype=input.dtype, device=input.device), p).to(input.dtype), 1.0 - p)
    return input.mul_(keep) if inplace else F.mul(input, keep)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5):
    """(x - mean) / sqrt(var + eps) over the last len(normalized_shape) dims (biased variance), then
    * weight + bias. 16-bit inputs are normalized in float32, as torch does."""
    if isinstance(normalized_shape, int):
        raise TypeError("layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int")
    normalized_shape = tuple(normalized_shape)
    count = len(normalized_shape)
    if count == 0 or tuple(input.shape[input.ndim - count:]) != normalized_shape or input.ndim < count:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
                           f"[*, {', '.join(str(s) for s in normalized_shape)}], but got input of size"
                           f"{list(input.shape)}")
    x = input.float() if input.dtype in (_C.dtype.float16, _C.dtype.bfloat16) else input
    dims = list(range(x.ndim - count, x.ndim))
    centered = F.sub(x, F.mean(x, dims, True))
    variance = F.mean(F.mul(centered, centered), dims, True)
    out = F.div(centered, F.sqrt(F.add(variance, eps))).to(input.dtype)
    if weight is not None:
        out = F.mul(out, weight)
    if bias is not None:
        out = F.add(out, bias)
    return out


def embedding(input, weight, padding_idx=None):
    """weight's rows at the int64 indices in input: shape input.shape + (embedding_dim,). The row at
    padding_idx gets no gradient, as in torch."""
    if not isinstance(input, Tensor) or input.dtype != _C.dtype.int64:
        got = input.dtype.name if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {got} instead (while checking arguments for embedding)")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    rows = EmbeddingLookup.apply(weight, input.reshape(-1), padding_idx)
    return rows.reshape(*input.shape, weight.shape[1])


class EmbeddingLookup(Function):
    @staticmethod
    def forward(ctx, weight, indices, padding_idx):
        ctx.meta = (weight.shape, weight.dtype, weight.device, padding_idx)
        ctx.save_for_backward(indices)
        return _C.index_select(weight, 0, indices)

    @staticmethod
    def backward(ctx, grad):
        shape, dtype, device, padding_idx = ctx.meta
        (indices,) = ctx.saved_tensors
        full = _C._index_put_(_C.zeros(*shape, dtype=dtype, device=device), 0, indices, grad, True)
        if padding_idx is not None:
            full[padding_idx] = 0.0
        return full, None, None


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
