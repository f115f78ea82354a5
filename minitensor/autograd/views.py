"""View ops (metadata only in forward) and dtype/device moves.

Each Function gets the input and `view`, a callable that applies the raw C++ method with the
user's arguments, so one class serves every method with the same gradient rule. Gradients of
views go back through the inverse view; gradients of indexing land in zeros via copy_.
"""

from __future__ import annotations

from .. import _C
from .function import Function


class Reshape(Function):
    """reshape / view / squeeze / unsqueeze: the gradient only needs the old shape back."""

    @staticmethod
    def forward(ctx, x, view):
        ctx.shape = x.shape
        return view(x)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(*ctx.shape), None


class Expand(Reshape):
    """expand: forward as Reshape; the gradient sums the broadcast dims back to the old shape."""

    @staticmethod
    def backward(ctx, grad):
        return _C.sum_to_shape(grad, ctx.shape), None


class Index(Function):
    """select / _slice / __getitem__: the gradient is the same view of a zero tensor, filled."""

    @staticmethod
    def forward(ctx, x, view):
        ctx.meta = (x.shape, x.dtype, x.device)
        ctx.view = view
        return view(x)

    @staticmethod
    def backward(ctx, grad):
        shape, dtype, device = ctx.meta
        full = _C.zeros(*shape, dtype=dtype, device=device)
        ctx.view(full).copy_(grad)
        return full, None


class Identity(Function):
    """clone / contiguous: same values (maybe new memory); the gradient passes through."""

    @staticmethod
    def forward(ctx, x, view):
        return view(x)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class Move(Function):
    """to / cpu / cuda / float / double: the gradient goes back to the input's device and dtype."""

    @staticmethod
    def forward(ctx, x, view):
        ctx.device, ctx.dtype = x.device, x.dtype
        return view(x)

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.device, ctx.dtype), None


class Transpose(Function):
    @staticmethod
    def forward(ctx, x, raw_transpose, dim0, dim1):
        ctx.dims = (dim0, dim1)
        return raw_transpose(x, dim0, dim1)

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(*ctx.dims), None, None, None


class Permute(Function):
    @staticmethod
    def forward(ctx, x, raw_permute, dims):
        ndim = x.ndim
        inverse = [0] * ndim
        for position, d in enumerate(dims):
            inverse[d % ndim] = position
        ctx.inverse = inverse
        return raw_permute(x, *dims)

    @staticmethod
    def backward(ctx, grad):
        return grad.permute(*ctx.inverse), None, None


class Cat(Function):
    """cat(tensors, dim): the gradient is split back into each input's slice of dim (in that
    input's dtype: cat promotes mixed dtypes as torch does)."""

    @staticmethod
    def forward(ctx, dim, *tensors):
        ctx.sizes = [t.shape[dim] if t.ndim else 0 for t in tensors]
        ctx.dtypes = [t.dtype for t in tensors]
        ctx.dim = dim
        return _C.cat(list(tensors), dim)

    @staticmethod
    def backward(ctx, grad):
        grads, start = [None], 0
        for size, dtype in zip(ctx.sizes, ctx.dtypes):
            part = grad._slice(ctx.dim, start, start + size, 1)
            grads.append(part if part.dtype == dtype or not dtype.is_floating_point else part.to(dtype))
            start += size
        return tuple(grads)
