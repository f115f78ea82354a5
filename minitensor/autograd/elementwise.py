"""Element-wise ops with NumPy broadcasting. Gradients of broadcast inputs are summed back to
the input's shape (and cast back to its dtype when the op promoted it)."""

from __future__ import annotations

from .. import _C
from .function import Function

Tensor = _C.Tensor


def _meta(x):
    """(shape, dtype) of a tensor argument; None for a Python scalar (which gets no gradient)."""
    return (x.shape, x.dtype) if isinstance(x, Tensor) else None


def _grad_for(grad, meta):
    """`grad` (shaped like the op's output) reduced to an input of (shape, dtype) `meta`."""
    if meta is None:
        return None
    shape, dtype = meta
    if grad.shape != shape:
        grad = _C.sum_to_shape(grad, shape)
    if grad.dtype != dtype:
        grad = grad.to(dtype)
    return grad


def _mask(condition, like):
    """A bool tensor as 0/1 in `like`'s dtype, for multiplying into gradients."""
    return condition.to(like.dtype)


class Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.metas = (_meta(a), _meta(b))
        return _C.add(a, b)

    @staticmethod
    def backward(ctx, grad):
        return tuple(_grad_for(grad, m) for m in ctx.metas)


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.metas = (_meta(a), _meta(b))
        return _C.sub(a, b)

    @staticmethod
    def backward(ctx, grad):
        meta_a, meta_b = ctx.metas
        return _grad_for(grad, meta_a), _grad_for(_C.neg(grad), meta_b) if meta_b else None


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.metas = (_meta(a), _meta(b))
        ctx.save_for_backward(a, b)
        return _C.mul(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        meta_a, meta_b = ctx.metas
        grad_a = _grad_for(_C.mul(grad, b), meta_a) if need_a else None
        grad_b = _grad_for(_C.mul(grad, a), meta_b) if need_b else None
        return grad_a, grad_b


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.metas = (_meta(a), _meta(b))
        out = _C.div(a, b)
        ctx.save_for_backward(b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        b, out = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        meta_a, meta_b = ctx.metas
        grad_over_b = _C.div(grad, b)
        grad_a = _grad_for(grad_over_b, meta_a) if need_a else None
        # d(a/b)/db = -a/b^2 = -out/b
        grad_b = _grad_for(_C.neg(_C.mul(grad_over_b, out)), meta_b) if need_b else None
        return grad_a, grad_b


class PowScalar(Function):
    """x ** p for a Python number p."""

    @staticmethod
    def forward(ctx, x, exponent):
        ctx.exponent = float(exponent)
        ctx.save_for_backward(x)
        return _C.pow(x, float(exponent))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        p = ctx.exponent
        if p == 0.0:
            return _C.zeros_like(grad), None
        slope = _C.mul(_C.pow(x, p - 1.0), p) if p != 2.0 else _C.mul(x, 2.0)
        return _C.mul(grad, slope), None


class Maximum(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.metas = (_meta(a), _meta(b))
        ctx.save_for_backward(a, b)
        return _C.maximum(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        meta_a, meta_b = ctx.metas
        # Ties split the gradient evenly, as torch.maximum does.
        tie = _C.mul(_mask(_C.eq(a, b), grad), 0.5)
        share_a = _C.add(_mask(_C.gt(a, b), grad), tie)
        share_b = _C.add(_mask(_C.lt(a, b), grad), tie)
        return _grad_for(_C.mul(grad, share_a), meta_a), _grad_for(_C.mul(grad, share_b), meta_b)


class Where(Function):
    @staticmethod
    def forward(ctx, condition, a, b):
        ctx.metas = (_meta(a), _meta(b))
        ctx.save_for_backward(condition)
        return _C.where(condition, a, b)

    @staticmethod
    def backward(ctx, grad):
        (condition,) = ctx.saved_tensors
        meta_a, meta_b = ctx.metas
        zeros = _C.zeros_like(grad)
        grad_a = _grad_for(_C.where(condition, grad, zeros), meta_a) if meta_a else None
        grad_b = _grad_for(_C.where(condition, zeros, grad), meta_b) if meta_b else None
        return None, grad_a, grad_b


class Neg(Function):
    @staticmethod
    def forward(ctx, x):
        return _C.neg(x)

    @staticmethod
    def backward(ctx, grad):
        return _C.neg(grad)


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = _C.exp(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return _C.mul(grad, y)


class Log(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _C.log(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _C.div(grad, x)


class Sqrt(Function):
    @staticmethod
    def forward(ctx, x):
        y = _C.sqrt(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return _C.div(grad, _C.mul(y, 2.0))


class Abs(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _C.abs(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        sign = _C.sub(_mask(_C.gt(x, 0.0), grad), _mask(_C.lt(x, 0.0), grad))  # 0 at x == 0, like torch
        return _C.mul(grad, sign)


class Relu(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return _C.relu(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return _C.relu_backward(grad, x)


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        y = _C.sigmoid(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return _C.sigmoid_backward(grad, y)


class Tanh(Function):
    @staticmethod
    def forward(ctx, x):
        y = _C.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return _C.tanh_backward(grad, y)
