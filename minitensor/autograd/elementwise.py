"""Element-wise ops with NumPy broadcasting. Gradients of broadcast inputs are summed back to
the input's shape (and cast back to its dtype when the op promoted it)."""

from __future__ import annotations

import math

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
    op = staticmethod(_C.add)

    @classmethod
    def forward(cls, ctx, a, b):
        ctx.metas = (_meta(a), _meta(b))
        return cls.op(a, b)

    @staticmethod
    def backward(ctx, grad):
        return tuple(_grad_for(grad, m) for m in ctx.metas)


class Sub(Add):
    """Add's forward with the C++ sub; b's gradient is negated."""

    op = staticmethod(_C.sub)

    @staticmethod
    def backward(ctx, grad):
        meta_a, meta_b = ctx.metas
        return _grad_for(grad, meta_a), _grad_for(_C.neg(grad), meta_b) if meta_b else None


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.metas = (_meta(a), _meta(b))
        need_a, need_b = ctx.needs_input_grad or (False, False)
        # Only what backward will read, as torch: `y = x * 2; y += 1` leaves nothing stale behind.
        ctx.save_for_backward(b if need_a else None, a if need_b else None)
        return _C.mul(a, b)

    @staticmethod
    def backward(ctx, grad):
        b, a = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        meta_a, meta_b = ctx.metas
        grad_a = _grad_for(_C.mul(grad, b), meta_a) if need_a else None
        grad_b = _grad_for(_C.mul(grad, a), meta_b) if need_b else None
        return grad_a, grad_b


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.metas = (_meta(a), _meta(b))
        _, need_b = ctx.needs_input_grad or (False, False)
        ctx.save_for_backward(a if need_b else None, b)  # not the output: it may be changed in place
        return _C.div(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        meta_a, meta_b = ctx.metas
        grad_over_b = _C.div(grad, b)
        grad_a = _grad_for(grad_over_b, meta_a) if need_a else None
        # d(a/b)/db = -a / b^2
        grad_b = _grad_for(_C.neg(_C.div(_C.mul(grad_over_b, a), b)), meta_b) if need_b else None
        return grad_a, grad_b


class PowScalar(Function):
    """x ** p for a Python number p (an int p keeps an integer x integer, as in torch)."""

    @staticmethod
    def forward(ctx, x, exponent):
        ctx.exponent = exponent
        ctx.save_for_backward(x)
        return _C.pow(x, exponent)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        p = ctx.exponent
        if p == 0:
            return _C.zeros_like(grad), None
        slope = _C.mul(_C.pow(x, p - 1), p) if p != 2 else _C.mul(x, 2.0)
        return _C.mul(grad, slope), None


class Pow(Function):
    """a ** b with a tensor exponent (or a Python number base): the kernel's pow, exact for negative
    bases with integral exponents and for 0 ** 0 (never exp(b * log a))."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.metas = (_meta(a), _meta(b))
        out = _C.pow(a, b)
        ctx.save_for_backward(a, b, out if (ctx.needs_input_grad or (False, False))[1] else None)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        meta_a, meta_b = ctx.metas
        grad_a = grad_b = None
        if need_a:  # b * a^(b-1), 0 where b == 0 (torch's rule: no 0 * inf from 0^-1)
            slope = _C.mul(_C.pow(a, _C.sub(b, 1) if isinstance(b, Tensor) else b - 1), b)
            slope = _C.where(_C.eq(b, 0), 0.0, slope) if isinstance(b, Tensor) else slope
            grad_a = _grad_for(_C.mul(grad, slope), meta_a)
        if need_b:  # a^b * log(a), 0 where a == 0 and b >= 0
            slope = _C.mul(out, _C.log(a) if isinstance(a, Tensor) else math.log(a) if a > 0 else float("nan"))
            if isinstance(a, Tensor):
                slope = _C.where(_C.mul(_C.eq(a, 0), _C.ge(b, 0)), 0.0, slope)
            grad_b = _grad_for(_C.mul(grad, slope), meta_b)
        return grad_a, grad_b


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


class _FromOutput(Function):
    """A unary op whose gradient is cheapest from its output y = op(x): forward saves y and
    backward is derivative(grad, y). Subclasses name the two C++ calls."""

    @classmethod
    def forward(cls, ctx, x):
        y = cls.op(x)
        ctx.save_for_backward(y)
        return y

    @classmethod
    def backward(cls, ctx, grad):
        (y,) = ctx.saved_tensors
        return cls.derivative(grad, y)


class _FromInput(Function):
    """A unary op whose gradient needs its input x: forward saves x and backward is
    derivative(grad, x)."""

    @classmethod
    def forward(cls, ctx, x):
        ctx.save_for_backward(x)
        return cls.op(x)

    @classmethod
    def backward(cls, ctx, grad):
        (x,) = ctx.saved_tensors
        return cls.derivative(grad, x)


def _abs_backward(grad, x):
    sign = _C.sub(_mask(_C.gt(x, 0.0), grad), _mask(_C.lt(x, 0.0), grad))  # 0 at x == 0, like torch
    return _C.mul(grad, sign)


# staticmethod: the plain Python functions (_abs_backward, the lambda) must not bind as methods.
class Exp(_FromOutput):
    op, derivative = staticmethod(_C.exp), staticmethod(_C.mul)  # d exp(x) = exp(x)


class Log(_FromInput):
    op, derivative = staticmethod(_C.log), staticmethod(_C.div)  # d log(x) = 1 / x


class Sqrt(_FromOutput):
    op, derivative = staticmethod(_C.sqrt), staticmethod(lambda grad, y: _C.div(grad, _C.mul(y, 2.0)))


class Abs(_FromInput):
    op, derivative = staticmethod(_C.abs), staticmethod(_abs_backward)


class Relu(_FromInput):
    op, derivative = staticmethod(_C.relu), staticmethod(_C.relu_backward)


class Sigmoid(_FromOutput):
    op, derivative = staticmethod(_C.sigmoid), staticmethod(_C.sigmoid_backward)


class Tanh(_FromOutput):
    op, derivative = staticmethod(_C.tanh), staticmethod(_C.tanh_backward)


class Clamp(Function):
    """min(max(x, low), high) for numbers or tensors (None: no bound); NaN stays NaN.

    The gradient reaches x where low <= x <= high (torch's rule, ties included), a tensor `low`
    where it won (x < low, low <= high), a tensor `high` where it won (max(x, low) > high)."""

    @staticmethod
    def forward(ctx, x, low, high):
        out = x
        if low is not None:
            out = _C.where(_C.lt(out, low), low, out)
        if high is not None:
            out = _C.where(_C.gt(out, high), high, out)
        if out is x:
            out = x.clone()
        ctx.metas = (_meta(low) if low is not None else None, _meta(high) if high is not None else None)
        ctx.save_for_backward(x, low if isinstance(low, Tensor) else None, high if isinstance(high, Tensor) else None)
        ctx.bounds = (low, high)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, _, _ = ctx.saved_tensors
        low, high = ctx.bounds
        keep = _C.eq(x, x)  # True except at NaN, where torch's mask is False too
        if low is not None:
            keep = _C.mul(keep, _C.ge(x, low))
        if high is not None:
            keep = _C.mul(keep, _C.le(x, high))
        grad_x = _C.mul(grad, _mask(keep, grad))
        grad_low = grad_high = None
        meta_low, meta_high = ctx.metas
        if meta_low is not None:
            won = _C.lt(x, low) if high is None else _C.mul(_C.lt(x, low), _C.le(low, high))
            grad_low = _grad_for(_C.mul(grad, _mask(won, grad)), meta_low)
        if meta_high is not None:
            above = _C.gt(x if low is None else _C.maximum(x, low), high)
            grad_high = _grad_for(_C.mul(grad, _mask(above, grad)), meta_high)
        return grad_x, grad_low, grad_high
