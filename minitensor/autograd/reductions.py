"""Reductions: sum, mean, amax (all-dims max), max along a dim (values + indices)."""

from __future__ import annotations

import operator

from .. import _C
from .function import Function


def _as_int(dim):
    """dim as an int when it is one: an int, a NumPy integer or any __index__ object (not a
    tensor, which is a sequence of dims); None otherwise."""
    if isinstance(dim, _C.Tensor):
        return None
    try:
        return operator.index(dim)
    except TypeError:
        return None


def normalize_dims(dims, ndim: int) -> list[int]:
    """dims (None, an int or a sequence) as a sorted list of non-negative dims."""
    if dims is None:
        return list(range(ndim))
    if _as_int(dims) is not None:  # int, NumPy integer or __index__ object, as torch accepts
        dims = [_as_int(dims)]
    rank = max(ndim, 1)  # a 0-d tensor accepts dim 0 and -1, as in torch
    wrapped = []
    for d in dims:
        if not -rank <= d < rank:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], "
                             f"but got {d})")
        wrapped.append(operator.index(d) % rank if ndim else 0)
    return sorted(set(wrapped))


def _as_dims_arg(dims):
    """What the C++ reductions take: None (all dims) or a list."""
    if dims is None:
        return None
    return [operator.index(d) for d in ([dims] if _as_int(dims) is not None else dims)]


def _expand_back(grad, input_shape, dims: list[int], keepdim: bool):
    """A reduced gradient broadcast back over the reduced dims (a stride-0 view, no copy)."""
    if not keepdim:
        for d in dims:  # ascending, so each index is already right for the growing tensor
            if len(input_shape):
                grad = grad.unsqueeze(d)
    return grad.expand(*input_shape)


def _remember_reduction(ctx, x, dims, keepdim) -> None:
    """What backward needs to broadcast a gradient back over the reduced dims (_expand_back)."""
    ctx.shape = x.shape
    ctx.dims = normalize_dims(dims, x.ndim)
    ctx.keepdim = keepdim


class Sum(Function):
    @staticmethod
    def forward(ctx, x, dims, keepdim):
        _remember_reduction(ctx, x, dims, keepdim)
        return _C.sum(x, _as_dims_arg(dims), keepdim)

    @staticmethod
    def backward(ctx, grad):
        return _expand_back(grad, ctx.shape, ctx.dims, ctx.keepdim), None, None


class Mean(Function):
    @staticmethod
    def forward(ctx, x, dims, keepdim):
        _remember_reduction(ctx, x, dims, keepdim)
        out = _C.mean(x, _as_dims_arg(dims), keepdim)
        ctx.count = max(x.numel() // max(out.numel(), 1), 1)
        return out

    @staticmethod
    def backward(ctx, grad):
        return _expand_back(_C.div(grad, float(ctx.count)), ctx.shape, ctx.dims, ctx.keepdim), None, None


class Amax(Function):
    """Max over dims; ties share the gradient evenly (torch.amax's rule)."""

    @staticmethod
    def forward(ctx, x, dims, keepdim):
        _remember_reduction(ctx, x, dims, keepdim)
        out = _C.amax(x, _as_dims_arg(dims), keepdim)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        shape = ctx.shape
        out_kept = _expand_back(out, shape, ctx.dims, ctx.keepdim)
        is_max = _C.eq(x, out_kept).to(grad.dtype)
        ties = _C.sum(is_max, ctx.dims, True)
        share = _C.div(_expand_back(grad, shape, ctx.dims, ctx.keepdim), ties)
        return _C.mul(share, is_max), None, None


class MaxAlongDim(Function):
    """(values, indices) of the max along one dim; the gradient goes to the chosen index."""

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        values, indices = _C.max(x, dim, keepdim)
        ctx.shape = x.shape
        ctx.dim = normalize_dims(dim, x.ndim)[0]
        ctx.keepdim = keepdim
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad):
        (indices,) = ctx.saved_tensors
        shape, dim = ctx.shape, ctx.dim
        if len(shape) == 0:
            return grad, None, None
        if not ctx.keepdim:
            grad, indices = grad.unsqueeze(dim), indices.unsqueeze(dim)
        # positions along dim, shaped to broadcast against indices: (size, 1, ..., 1)
        positions = _C.arange(shape[dim], device=indices.device).reshape(
            *([shape[dim]] + [1] * (len(shape) - dim - 1)))
        chosen = _C.eq(indices, positions).to(grad.dtype)
        return _C.mul(grad, chosen), None, None
