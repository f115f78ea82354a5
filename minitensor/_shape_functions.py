"""Joining and splitting tensors with torch's names and errors: cat (differentiable), stack,
flatten, split, chunk. Built on views (_slice, reshape, unsqueeze) and the C++ cat, so they
work on every device and record gradients through the ops they are made of."""

from __future__ import annotations

from . import _C
from .autograd.view_tracking import mark_multi_output
from .autograd.views import Cat
from ._registry import op

Tensor = _C.Tensor


def _wrap(dim: int, ndim: int) -> int:
    extent = max(ndim, 1)
    if not -extent <= dim < extent:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-extent}, {extent - 1}], but got {dim})")
    return dim % extent


@op(method=False, aliases=("concat", "concatenate"))
def cat(tensors, dim: int = 0):
    """The tensors joined along an existing dim (one device; mixed dtypes promote as in torch)."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    if tensors[0].ndim:
        dim = _wrap(dim, tensors[0].ndim)
    return Cat.apply(dim, *tensors)




@op(method=False)
def stack(tensors, dim: int = 0):
    """The tensors (all of one shape) joined along a new dim."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tuple(tensors[0].shape)
    for i, t in enumerate(tensors[1:], 1):
        if tuple(t.shape) != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 and "
                               f"{list(t.shape)} at entry {i}")
    dim = _wrap(dim, len(first) + 1)
    return cat([t.unsqueeze(dim) for t in tensors], dim)


@op
def flatten(input, start_dim: int = 0, end_dim: int = -1):
    """Dims start_dim..end_dim merged into one (a view when the strides allow)."""
    if input.ndim == 0:
        return input.reshape(1)
    start, end = _wrap(start_dim, input.ndim), _wrap(end_dim, input.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = input.shape
    return input.reshape(*shape[:start], -1, *shape[end + 1:])


@op
def narrow(input, dim: int, start: int, length: int):
    """The view of `length` elements of dim from `start` on (a negative start counts from the end)."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = _wrap(dim, input.ndim)
    size = input.shape[dim]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start = start % size if start < 0 else start
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return input._slice(dim, start, start + length, 1)


@op
def split(tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Views of consecutive pieces along dim: of split_size each (the last may be smaller), or of
    the given sizes (which must add up to the dim's size)."""
    dim = _wrap(dim, tensor.ndim)
    size = tensor.shape[dim]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step < 0 or (step == 0 and size != 0):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        sizes = [min(step, size - start) for start in range(0, size, step)] if step else [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != size or any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
                               f"dimension {dim}), but got split_sizes={sizes}")
    pieces, start = [], 0
    for s in sizes:
        pieces.append(tensor._slice(dim, start, start + s, 1))
        start += s
    mark_multi_output(pieces, "Split" if isinstance(split_size_or_sections, int) else "SplitWithSizes")
    return tuple(pieces)


@op
def chunk(input, chunks: int, dim: int = 0) -> tuple:
    """At most `chunks` views of equal size along dim (the last may be smaller), as torch.chunk."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = input.shape[_wrap(dim, input.ndim)]
    return split(input, max(-(-size // chunks), 1) if size else 0, dim) if size else split(input, [0] * chunks, dim)
