"""The differentiable functions behind mt.add, mt.matmul, Tensor.__mul__, Tensor.sum, ...

Each is a thin call of an autograd Function (which records a graph only when some input requires
grad) or, for comparisons and argmax, of the C++ op directly (their results have no gradient).
"""

from __future__ import annotations

import builtins
from collections import namedtuple

from . import _C
from .autograd.elementwise import (Abs, Add, Clamp, Div, Exp, Log, Maximum, Mul, Neg, Pow, PowScalar, Relu,
                                   Sigmoid, Sqrt, Sub, Tanh, Where)
from .autograd.grad_mode import _mode
from .autograd.linalg import LogSoftmax, Matmul, Softmax
from .autograd.reductions import Amax, MaxAlongDim, Mean, Sum, normalize_dims
from ._registry import op

Tensor = _C.Tensor

# What torch.max(x, dim) returns: unpacks as (values, indices) and has the two names.
MaxResult = namedtuple("MaxResult", ["values", "indices"])
MinResult = namedtuple("MinResult", ["values", "indices"])


def _scaled(other, alpha):
    """alpha * other; a number times a number stays a number (mul wants a tensor operand)."""
    if alpha == 1:
        return other
    return mul(other, alpha) if isinstance(other, Tensor) else other * alpha


@op
def add(input, other, alpha=1):
    """input + alpha * other."""
    return Add.apply(input, _scaled(other, alpha))


@op
def sub(input, other, alpha=1):
    """input - alpha * other."""
    return Sub.apply(input, _scaled(other, alpha))


@op
def mul(input, other):
    return Mul.apply(input, other)


@op
def div(input, other):
    return Div.apply(input, other)


@op
def pow(input, exponent):  # noqa: A001  (torch.pow)
    """input ** exponent, element-wise; integer ** integer stays int64 (a negative Python int
    exponent raises, as in torch); negative bases and 0 ** 0 are exact."""
    if isinstance(exponent, Tensor):
        return Pow.apply(input, exponent)
    if not isinstance(input, Tensor):
        raise TypeError(f"pow() expects a tensor base or exponent, got {type(input).__name__} and "
                        f"{type(exponent).__name__}")
    return PowScalar.apply(input, exponent)


@op(aliases=("clip",))
def clamp(input, min=None, max=None):  # noqa: A002  (torch's argument names)
    """Each element limited to [min, max] (numbers or tensors, broadcast); NaN stays NaN."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return Clamp.apply(input, min, max)



@op
def maximum(input, other):
    return Maximum.apply(input, other)


@op(method=False)
def where(condition, input, other):
    return Where.apply(condition, input, other)


def _unary(function):
    """mt.<name>(input), the op of the autograd Function <Name>: mt.exp(x) is Exp.apply(x)."""
    def call(input):
        return function.apply(input)
    call.__name__ = call.__qualname__ = function.__name__.lower()
    return op(call)


neg, exp, log, sqrt, abs, relu, sigmoid, tanh = map(_unary, (Neg, Exp, Log, Sqrt, Abs, Relu, Sigmoid, Tanh))  # noqa: A001


@op
def matmul(input, other):
    return Matmul.apply(input, other)


@op
def sum(input, dim=None, keepdim: bool = False):  # noqa: A001  (torch.sum)
    return Sum.apply(input, dim, keepdim)


@op
def mean(input, dim=None, keepdim: bool = False):
    return Mean.apply(input, dim, keepdim)


@op
def amax(input, dim=None, keepdim: bool = False):
    return Amax.apply(input, dim, keepdim)


@op
def max(input, dim=None, keepdim: bool = False):  # noqa: A001  (torch.max)
    """max(x): the largest value; max(x, dim): (values, indices); max(x, y): element-wise."""
    if isinstance(dim, Tensor):
        return maximum(input, dim)
    if dim is None:
        return Amax.apply(input, None, False)
    return MaxResult(*MaxAlongDim.apply(input, dim, keepdim))


@op
def argmax(input, dim=None, keepdim: bool = False):
    return _C.argmax(input, dim, keepdim)


# The minimum family is the maximum family of -x (exact: negation only flips the sign bit); bool
# tensors, which have no negation, go through int64 and back.
def _negated(input):
    """An order-reversing map that is its own inverse, so min is _restore(max(_negated(x))): -x for
    floats (differentiable), -1 - x (= ~x) for int64 and bool, where -x wraps at INT64_MIN
    (-INT64_MIN is INT64_MIN) and would lose the minimum."""
    if input.dtype.is_floating_point:
        return neg(input)
    return _C.sub(-1, input if input.dtype != _C.dtype.bool else input.to(_C.dtype.int64))


def _restore(result, input):
    result = _negated(result)
    return result.to(_C.dtype.bool) if input.dtype == _C.dtype.bool else result


@op
def minimum(input, other):
    """Element-wise min, NaN-propagating; ties share the gradient evenly, as torch.minimum."""
    if input.dtype == _C.dtype.bool and isinstance(other, Tensor) and other.dtype == _C.dtype.bool:
        return _C.mul(input, other)
    if _integral(input) and _integral(other):  # -1 - x, not -x: see _negated
        return _C.sub(-1, _C.maximum(_C.sub(-1, input), _C.sub(-1, other)))
    return neg(maximum(neg(input), neg(other)))


def _integral(x) -> bool:
    return not x.dtype.is_floating_point if isinstance(x, Tensor) else isinstance(x, int)


@op
def amin(input, dim=None, keepdim: bool = False):
    return _restore(amax(_negated(input), dim, keepdim), input)


@op
def min(input, dim=None, keepdim: bool = False):  # noqa: A001  (torch.min)
    """min(x): the smallest value; min(x, dim): (values, indices); min(x, y): element-wise."""
    if isinstance(dim, Tensor):
        return minimum(input, dim)
    if dim is None:
        return amin(input)
    values, indices = MaxAlongDim.apply(_negated(input), dim, keepdim)
    return MinResult(_restore(values, input), indices)


@op
def argmin(input, dim=None, keepdim: bool = False):
    if input.dtype == _C.dtype.bool:
        raise RuntimeError("argmin(): does not support bool input")
    return _C.argmax(_negated(input), dim, keepdim)  # ties keep the first index: the map reverses order


@op
def all(input, dim=None, keepdim: bool = False):  # noqa: A001  (torch.all)
    """Whether every element (along dim) is non-zero; True for an empty tensor."""
    return _C.eq(_C.sum(_C.eq(input, 0), dim, keepdim), 0)


@op
def any(input, dim=None, keepdim: bool = False):  # noqa: A001  (torch.any)
    """Whether some element (along dim) is non-zero; False for an empty tensor."""
    return _C.ne(_C.sum(_C.ne(input, 0), dim, keepdim), 0)


def _product_along(x, dim: int):
    """The product over dim (removed): halves multiplied pairwise, log2(n) steps; differentiable,
    exact with zeros (no division in the gradient)."""
    from ._shape_functions import cat  # noqa: PLC0415  (the shape functions import this module's ops)
    while x.shape[dim] > 1:
        n = x.shape[dim]
        half = n // 2
        product = mul(x._slice(dim, 0, half, 1), x._slice(dim, half, 2 * half, 1))
        x = cat([product, x._slice(dim, 2 * half, n, 1)], dim) if n % 2 else product
    if x.shape[dim] == 0:
        shape = x.shape[:dim] + x.shape[dim + 1:]
        return _C.ones(*shape, dtype=x.dtype, device=x.device)
    return x.select(dim, 0)


@op
def prod(input, dim=None, keepdim: bool = False, dtype=None):
    """The product of all elements, or along dim; bool and int64 multiply as int64."""
    x = input if dtype is None else input.to(dtype)
    if not x.dtype.is_floating_point:
        x = x.to(_C.dtype.int64)
    if dim is None:
        return _product_along(x.reshape(-1), 0)
    dim = normalize_dims(dim, x.ndim)[0]
    if x.ndim == 0:
        return x.clone()
    out = _product_along(x, dim)
    return out.unsqueeze(dim) if keepdim else out


@op
def var(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    """Variance over dim (all dims when None), dividing by N - correction (1 by default: the unbiased
    estimate; unbiased=False means 0), as torch.var; N - correction <= 0 gives inf or NaN."""
    if isinstance(dim, bool):  # torch.var(x, False): the legacy (input, unbiased) form
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError("var(): can't specify both unbiased and correction")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if not input.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = normalize_dims(dim, input.ndim)
    count = 1
    for d in dims:
        count *= input.shape[d] if input.ndim else 1
    deviation = sub(input, mean(input, dims, True))
    total = sum(mul(deviation, deviation), dims, keepdim)
    return div(total, builtins.max(count - correction, 0))


@op
def std(input, dim=None, unbiased=None, keepdim: bool = False, *, correction=None):
    """Standard deviation: sqrt(var(...)) with var's arguments."""
    return sqrt(var(input, dim, unbiased, keepdim, correction=correction))


def _as_dtype(input, dtype):
    return input if dtype is None else input.to(dtype)


@op
def softmax(input, dim, dtype=None, impl: str = "auto"):
    """Softmax along dim. `impl` picks a kernel of the teaching ladder (see softmax_impls); those
    are forward-only. The fast path is one attribute check and the C++ call: softmax without
    autograd must cost no more host time than torch.softmax.

    Special values follow PyTorch (exp(x - max) / sum, on every device and dtype): a NaN anywhere
    in a reduction group makes the whole group NaN; +inf makes it NaN too (inf - inf), so
    softmax([inf, 1]) == [nan, nan]; a group of only -inf is NaN (-inf - -inf); -inf entries in a
    group that has a finite value give 0 (log_softmax: -inf), which is how masks work. Huge finite
    values never overflow (the max is subtracted first); 16-bit inputs are computed in float32 and
    rounded once, so log_softmax of a value that lies beyond the dtype's range from the max is
    -inf, as in torch. A 0-d tensor is its own group: softmax gives 1 (NaN for NaN or +-inf)."""
    if impl != "auto":
        return _C._softmax_impl(_as_dtype(input, dtype), dim, False, impl)
    if input.requires_grad and _mode.enabled:
        return Softmax.apply(_as_dtype(input, dtype), dim)
    return _C.softmax(input if dtype is None else input.to(dtype), dim)


@op
def log_softmax(input, dim, dtype=None, impl: str = "auto"):
    """LogSoftmax along dim; `impl` as for softmax."""
    if impl != "auto":
        return _C._softmax_impl(_as_dtype(input, dtype), dim, True, impl)
    if input.requires_grad and _mode.enabled:
        return LogSoftmax.apply(_as_dtype(input, dtype), dim)
    return _C.log_softmax(input if dtype is None else input.to(dtype), dim)


@op(method=False)
def softmax_impls(device="cuda") -> dict:
    """The softmax kernels selectable with softmax(..., impl=name) on a device: name -> description."""
    return dict(_C.softmax_impls(device))


# Comparisons: bool results, never differentiable: the C++ op itself.
def _comparison(name):
    c_op = getattr(_C, name)

    def call(input, other):
        return c_op(input, other)
    call.__name__ = call.__qualname__ = name
    return op(call)


eq, ne, gt, ge, lt, le = map(_comparison, ("eq", "ne", "gt", "ge", "lt", "le"))
