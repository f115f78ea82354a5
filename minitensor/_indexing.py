"""Advanced indexing as in torch: `t[idx]`, `t[mask]`, `t[:, idx]`, `t[i_idx, j_idx]`, and
assignment `t[key] = v` for any key, with gradients.

Basic items (ints, slices, None, ...) are views (minitensor/_tensor.py). An advanced item is an
int64 tensor, a bool tensor (a mask over as many dims as it has), a list or a NumPy array. Here
the basic items are applied first, leaving a slice in place of each advanced one; the advanced
dims are then merged into one, and the indices (broadcast together, checked, negatives wrapped
on the host, as torch's CPU path does) become one linear index for index_select / index_put_.
As in torch, the result's advanced dims sit where the advanced items were when those are
adjacent, and first otherwise.
"""

from __future__ import annotations

import builtins
from math import prod

import numpy as np

from . import _C
from ._registry import op
from ._tensor import torch_scalar_type
from .autograd.function import Function
from .autograd.grad_mode import _mode
from .autograd.inplace import apply_inplace, records

Tensor = _C.Tensor


def _is_advanced(item) -> bool:
    return isinstance(item, (Tensor, list, np.ndarray)) and not isinstance(item, builtins.bool)


def has_advanced(key) -> bool:
    return any(_is_advanced(i) for i in (key if isinstance(key, tuple) else (key,)))


def _host_index(item) -> np.ndarray:
    if isinstance(item, Tensor):
        if item.dtype not in (_C.dtype.int64, _C.dtype.bool):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return item.detach().cpu().numpy()
    array = np.asarray(item)
    if array.dtype.kind not in "iub" and array.size:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return array.astype(np.int64) if array.dtype.kind != "b" else array


class _Plan:
    """A key split into: the basic key (a slice per advanced dim), where the advanced dims land in
    the basic result (`dims`), and one int64 index array per advanced dim."""

    def __init__(self, tensor, key) -> None:
        items = key if isinstance(key, tuple) else (key,)
        hosts = [(_host_index(i) if _is_advanced(i) else i) for i in items]
        consumed = builtins.sum(h.ndim if isinstance(h, np.ndarray) and h.dtype == np.bool_ else 1
                                for h in hosts if h is not None and h is not Ellipsis)
        basic, self.dims, indices = [], [], []
        in_dim = out_dim = 0  # the dim of `tensor` an item applies to, and its place in the basic result
        for h in hosts:
            if h is Ellipsis:
                skipped = tensor.ndim - consumed
                basic.append(h)
                in_dim, out_dim = in_dim + skipped, out_dim + skipped
            elif h is None:
                basic.append(h)
                out_dim += 1
            elif isinstance(h, np.ndarray):
                if h.dtype == np.bool_:
                    shape = tuple(tensor.shape[in_dim:in_dim + h.ndim])
                    if h.shape != shape:
                        at = next((d for d in range(h.ndim) if d >= len(shape) or h.shape[d] != shape[d]), 0)
                        raise IndexError(f"The shape of the mask {list(h.shape)} at index {at} does not match the "
                                         f"shape of the indexed tensor {list(tensor.shape)} at index {in_dim + at}")
                    parts = np.nonzero(h)
                else:
                    parts = (h,)
                for part in parts:
                    if in_dim >= tensor.ndim:
                        raise IndexError(f"too many indices for tensor of dimension {tensor.ndim}")
                    indices.append(self._checked(part, tensor.shape[in_dim], in_dim))
                    basic.append(slice(None))
                    self.dims.append(out_dim)
                    in_dim, out_dim = in_dim + 1, out_dim + 1
            elif isinstance(h, slice):
                basic.append(h)
                in_dim, out_dim = in_dim + 1, out_dim + 1
            else:
                basic.append(h)
                in_dim += 1
        try:
            self.indices = np.broadcast_arrays(*indices)
        except ValueError:
            shapes = ", ".join(str(list(i.shape)) for i in indices)
            raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together with shapes "
                             f"[{shapes}]") from None
        self.basic = tuple(basic)
        self.index_shape = self.indices[0].shape

    @staticmethod
    def _checked(index: np.ndarray, size: int, dim: int) -> np.ndarray:
        bad = index[(index < -size) | (index >= size)]
        if bad.size:
            raise IndexError(f"index {int(bad.reshape(-1)[0])} is out of bounds for dimension {dim} with size {size}")
        return np.where(index < 0, index + size, index)

    def adjacent(self) -> bool:
        return self.dims == list(range(self.dims[0], self.dims[0] + len(self.dims)))

    def arranged(self, view):
        """(view with the advanced dims next to each other, the first of them): a view."""
        if self.adjacent():
            return view, self.dims[0]
        rest = [d for d in range(view.ndim) if d not in self.dims]  # torch puts the advanced dims first
        return view.permute(*self.dims, *rest), 0

    def merged_shape(self, arranged, first: int) -> tuple:
        count = len(self.dims)
        shape = arranged.shape
        return shape[:first] + (prod(shape[first:first + count]),) + shape[first + count:]

    def merged(self, arranged, first: int):
        """(arranged with its advanced dims merged into one, the linear index as a tensor on its
        device). A view when the strides allow; else a copy (fine for reads only)."""
        sizes = arranged.shape[first:first + len(self.dims)]
        linear = np.zeros(self.index_shape, dtype=np.int64)
        for index, size in zip(self.indices, sizes):
            linear = linear * size + index
        if len(self.dims) > 1:
            arranged = arranged.reshape(*self.merged_shape(arranged, first))
        return arranged, _C.Tensor(linear.reshape(-1), device=arranged.device)


class IndexSelect(Function):
    @staticmethod
    def forward(ctx, x, dim, index):
        ctx.meta = (x.shape, x.dtype, x.device, dim)
        ctx.save_for_backward(index)
        return _C.index_select(x, dim, index)

    @staticmethod
    def backward(ctx, grad):
        shape, dtype, device, dim = ctx.meta
        (index,) = ctx.saved_tensors
        full = _C.zeros(*shape, dtype=dtype, device=device)
        return _C._index_put_(full, dim, index, grad, True), None, None  # repeated indices add up


@op
def index_select(input, dim: int, index):
    """The slices of input at `index` (an int64 vector) along dim; differentiable in input."""
    return IndexSelect.apply(input, dim, index)


def getitem(self, key):
    """t[key] with at least one advanced item: a new tensor (a copy), differentiable."""
    plan = _Plan(self, key)
    view = self[plan.basic] if plan.basic else self
    arranged, dim = plan.arranged(view)
    merged, index = plan.merged(arranged, dim)
    out = IndexSelect.apply(merged, dim, index)
    return out.reshape(*(merged.shape[:dim] + plan.index_shape + merged.shape[dim + 1:]))


# ---------------------------------------------------------------------------------- assignment


def _write(target, key, value) -> None:
    """target[key] = value in target's memory, without autograd."""
    if not isinstance(value, Tensor):
        value = _scalar_tensor(value, target)
    if not has_advanced(key):
        region = _basic_view(target, key)
        region.copy_(value)
        return
    if value.dtype != target.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{torch_scalar_type(target.dtype)} for the destination and {torch_scalar_type(value.dtype)} for the "
                           "source.")
    plan = _Plan(target, key)
    region, dim = plan.arranged(_basic_view(target, plan.basic))
    # index_put_ works along one dim, so the advanced dims are merged into one. When the region's
    # strides do not allow that as a view (several index tensors over dims that are apart, or a
    # transposed target), the write goes to a contiguous copy of the region, which then goes back.
    staged = region if _merges_as_view(region, plan.merged_shape(region, dim)) else region.contiguous()
    merged, index = plan.merged(staged, dim)
    shape = merged.shape[:dim] + plan.index_shape + merged.shape[dim + 1:]
    if tuple(value.shape) != shape:
        value = value.expand(*shape) if value.ndim <= len(shape) else value.reshape(*shape)
    value = value.reshape(*(merged.shape[:dim] + (index.numel(),) + merged.shape[dim + 1:]))
    _C._index_put_(merged, dim, index, value, False)
    if staged is not region:
        region.copy_(staged)


def _merges_as_view(region, shape) -> bool:
    try:
        region.view(*shape)
    except ValueError:  # ShapeError: the strides do not allow it
        return False
    return True


def _scalar_tensor(value, like):
    return _C.empty(dtype=like.dtype, device=like.device).fill_(value)


def _basic_view(tensor, key):
    with _NoRecord():
        return tensor[key]


class _NoRecord:
    """Views taken to write through must not record a graph (the write is recorded instead)."""

    def __enter__(self):
        self._previous, _mode.enabled = _mode.enabled, False

    def __exit__(self, *exc_info):
        _mode.enabled = self._previous


class IndexPut(Function):
    """target with target[key] = value, out of place (on a copy of target): the gradient of
    target is the incoming one with the written region zeroed; value's is that region (summed
    back to value's shape)."""

    @staticmethod
    def forward(ctx, target, value, key):
        ctx.key = key
        ctx.value_meta = (value.shape, value.dtype) if isinstance(value, Tensor) else None
        out = target.clone()
        _write(out, key, value)
        return out

    @staticmethod
    def backward(ctx, grad):
        grad_target = grad.clone()
        _write(grad_target, ctx.key, 0.0)
        grad_value = None
        if ctx.value_meta is not None:
            shape, dtype = ctx.value_meta
            region = grad[ctx.key] if has_advanced(ctx.key) else _basic_view(grad, ctx.key)
            grad_value = _C.sum_to_shape(region, shape) if tuple(region.shape) != tuple(shape) else region
            grad_value = grad_value.to(dtype)
        return grad_target, grad_value, None


def _put(target, value, key):
    return IndexPut.apply(target, value, key)


def setitem(self, key, value) -> None:
    """t[key] = value; recorded by autograd as any in-place op (inplace.apply_inplace)."""
    if records(self, (value,)):
        apply_inplace(self, _put, value, key)
    else:
        _write(self, key, value)
