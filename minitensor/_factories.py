"""The creation functions as torch spells them: every one takes `requires_grad=`, and `full` takes
its dtype from the fill value (bool -> bool, int -> int64, float -> float32) when none is given.
The C++ factories (minitensor._C) do the work; these only add the Python-level options."""

from __future__ import annotations

import builtins
import functools

from . import _C

Tensor = _C.Tensor


def _finish(tensor, requires_grad: bool):
    return tensor.requires_grad_() if requires_grad else tensor


def _with_requires_grad(raw):
    @functools.wraps(raw)
    def factory(*args, requires_grad: bool = False, **kwargs):
        return _finish(raw(*args, **kwargs), requires_grad)
    return factory


zeros = _with_requires_grad(_C.zeros)
ones = _with_requires_grad(_C.ones)
empty = _with_requires_grad(_C.empty)
randn = _with_requires_grad(_C.randn)
rand = _with_requires_grad(_C.rand)
arange = _with_requires_grad(_C.arange)
zeros_like = _with_requires_grad(_C.zeros_like)
ones_like = _with_requires_grad(_C.ones_like)


def scalar_dtype(value):
    """The dtype torch gives a Python scalar: bool, int64 or the default float32."""
    if isinstance(value, builtins.bool):
        return _C.dtype.bool
    if isinstance(value, int):
        return _C.dtype.int64
    return _C.dtype.float32


def _fill_value(value):
    """A Python number (a 0-d tensor's value, as torch accepts one)."""
    return value.item() if isinstance(value, Tensor) else value


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False):
    """A tensor of `size` filled with fill_value; its dtype follows fill_value unless given."""
    fill_value = _fill_value(fill_value)
    out = _C.empty(*size, dtype=dtype or scalar_dtype(fill_value), device=device)
    return _finish(out.fill_(fill_value), requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad: bool = False):
    """fill_value everywhere, in input's shape, dtype (unless given) and device (unless given)."""
    out = _C.empty(*input.shape, dtype=dtype or input.dtype, device=device or input.device)
    return _finish(out.fill_(_fill_value(fill_value)), requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad: bool = False):
    return _finish(_C.empty(*input.shape, dtype=dtype or input.dtype, device=device or input.device),
                   requires_grad)


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor copied from data (nested lists, scalars, NumPy arrays or tensors). The dtype is
    inferred as torch.tensor does: Python floats -> float32, ints -> int64, bools -> bool; NumPy
    arrays and tensors keep theirs."""
    return _finish(Tensor(data, dtype=dtype, device=device), requires_grad)
