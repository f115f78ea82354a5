"""minitensor.Tensor's Python side, assembled in one place: install() below attaches everything the
C++ class does not define itself, in order. This module holds the plain sugar (repr, basic
indexing, tolist/item, iteration); autograd/tensor_methods.py the autograd-aware groups; the
operator methods come from the registry (minitensor/_registry.py).

These are functions attached to the C++ class, so the C++ core stays free of formatting, Python's
indexing rules and autograd.
"""

from __future__ import annotations

import operator

import numpy as np

from . import _C

_DEFAULT_DTYPES = (_C.dtype.float32, _C.dtype.int64, _C.dtype.bool)
_INT64_MAX = 2**63 - 1


def _host_numpy(t: _C.Tensor) -> np.ndarray:
    t = t.cpu()
    if t.dtype == _C.dtype.bfloat16:
        t = t.float()
    return t.numpy()


def _repr(self: _C.Tensor) -> str:
    array = _host_numpy(self)
    prefix = "tensor("
    if array.dtype.kind == "f":
        body = np.array2string(array, separator=", ", prefix=prefix, precision=4, floatmode="fixed",
                               threshold=1000, edgeitems=3)
    else:
        body = np.array2string(array, separator=", ", prefix=prefix, threshold=1000, edgeitems=3)
    extras = []
    if self.numel() == 0 and self.ndim > 1:
        extras.append(f"size={self.shape}")
    if self.is_cuda:
        extras.append(f"device='{self.device}'")
    if self.dtype not in _DEFAULT_DTYPES:
        extras.append(f"dtype={self.dtype!r}")
    if self.grad_fn is not None:
        extras.append(f"grad_fn=<{self.grad_fn.name()}>")
    elif self.requires_grad:
        extras.append("requires_grad=True")
    return prefix + body + "".join(", " + e for e in extras) + ")"


def _tolist(self: _C.Tensor):
    """Nested Python lists (a Python scalar for a 0-d tensor)."""
    return _host_numpy(self).tolist()


def _item(self: _C.Tensor):
    """The value of a one-element tensor as a Python number."""
    if self.numel() != 1:
        raise ValueError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
    return _host_numpy(self).reshape(()).item()


def _getitem(self: _C.Tensor, index) -> _C.Tensor:
    """Basic indexing as views: ints, slices with positive steps, None and Ellipsis."""
    items = index if isinstance(index, tuple) else (index,)
    consumed = sum(1 for i in items if i is not None and i is not Ellipsis)
    if consumed > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    if sum(1 for i in items if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    out, dim = self, 0
    for item in items:
        if item is Ellipsis:
            dim += self.ndim - consumed
        elif item is None:
            out = out.unsqueeze(dim)
            dim += 1
        elif isinstance(item, bool) or not isinstance(item, (int, np.integer, slice)):
            raise TypeError(
                f"only integers, slices, None and ... are valid indices, got {type(item).__name__}"
            )
        elif isinstance(item, slice):
            step = _slice_bound(item.step, 1)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start = _slice_bound(item.start, 0)
            stop = _slice_bound(item.stop, _INT64_MAX)
            out = out._slice(dim, start, stop, step)
            dim += 1
        else:
            out = out.select(dim, int(item))
    return out


def _slice_bound(value, default: int) -> int:
    """A slice bound as Python does it: None, or an int / __index__ object (NumPy integers). Floats are
    a TypeError, not silently truncated; bounds beyond int64 clamp, as slicing a list clamps."""
    if value is None:
        return default
    try:
        bound = operator.index(value)
    except TypeError:
        raise TypeError("slice indices must be integers or None or have an __index__ method") from None
    return max(-_INT64_MAX - 1, min(bound, _INT64_MAX))


def _iter(self):
    # Without __iter__ Python would iterate through __getitem__ and a 0-d tensor would yield nothing.
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self.shape[0]))


# pybind11's __new__ only allocates: the C++ Tensor is built by __init__. `Tensor.__new__(Tensor)`
# with no __init__ after it (as copy and pickle protocols may do) left uninitialised memory that the
# first method call read (a crash). So __new__ builds torch's answer for it, an empty float32
# tensor, and __init__ then swaps in the requested data (no double construction in C++).
_pybind_new = _C.Tensor.__new__
_pybind_init = _C.Tensor.__init__
_set_data = _C.Tensor._set_data


def _new(cls, *args, **kwargs):
    self = _pybind_new(cls)
    _pybind_init(self, [])
    return self


def _init(self, *args, **kwargs):
    fresh = _pybind_new(_C.Tensor)
    _pybind_init(fresh, *args, **kwargs)
    _set_data(self, fresh)


def torch_scalar_type(dtype) -> str:
    """torch's ScalarType name of a dtype ("Float", "Long"), which its error messages use."""
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "bool": "Bool"}[dtype.name]


def _dtype_repr(self: _C.dtype) -> str:
    return f"minitensor.{self.name}"


_installed = False


def install() -> None:
    """Attaches Tensor's Python methods (once: the autograd groups wrap what is already there, so
    the order matters and a second pass would wrap the wrappers)."""
    global _installed
    if _installed:
        return
    _installed = True
    from .autograd import tensor_methods as autograd_methods  # noqa: PLC0415  (autograd imports _C only)
    from . import _serialization  # noqa: PLC0415

    _C.dtype.__repr__ = _dtype_repr
    _C.dtype.__str__ = _dtype_repr
    cls = _C.Tensor
    cls.__repr__ = _repr
    cls.__str__ = _repr
    cls.tolist = _tolist
    cls.item = _item
    cls.__getitem__ = _getitem  # basic indexing; the autograd groups wrap it
    cls.__iter__ = _iter
    cls.__new__ = staticmethod(_new)
    cls.__init__ = _init
    cls.T = property(lambda self: self.permute(*reversed(range(self.ndim))))
    autograd_methods.install_autograd_state(cls)
    autograd_methods.install_views(cls)
    autograd_methods.install_scalar_conversions(cls)
    autograd_methods.install_operators(cls)
    autograd_methods.install_registered_methods(cls)
    autograd_methods.install_inplace(cls)
    autograd_methods.install_advanced_indexing(cls)
    _serialization.install(cls)
