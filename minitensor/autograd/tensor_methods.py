"""The autograd half of minitensor.Tensor's Python methods: autograd state, differentiable views,
Python operators, the registered operator methods, in-place ops and advanced indexing. Each
install_* function adds one group; minitensor/_tensor.py's install() calls them all, in order.

The C++ class is bound with py::dynamic_attr(), so `requires_grad`, `grad` and `grad_fn` are
class-level defaults that instances override in their own __dict__. View methods are wrapped so
that a view of a tensor that requires grad records a node; every other call goes straight to C++.
"""

from __future__ import annotations

import builtins
import numbers

import numpy as np

from .. import _C
from .. import _functions as F
from .._registry import METHODS
from . import engine
from .grad_mode import _mode
from .inplace import apply_inplace, overwrite, records
from .view_tracking import install_history_properties, record_view
from .views import Expand, Identity, Index, Move, Permute, Reshape, Transpose

Tensor = _C.Tensor
FLOATING_DTYPES = (_C.dtype.float32, _C.dtype.float64, _C.dtype.float16, _C.dtype.bfloat16)


def _differentiable(raw, function, may_view: bool = True):
    """A method that calls `raw` directly, or through `function` when the graph must be recorded.
    may_view: its result can share self's memory; then it is recorded as a view of self's base."""
    def method(self, *args, **kwargs):
        if self.requires_grad and _mode.enabled:
            out = function.apply(self, lambda t: raw(t, *args, **kwargs))
        else:
            out = raw(self, *args, **kwargs)
        if may_view and out._is_alias_of(self):
            record_view(out, self, method, args, kwargs)
        return out
    method.__name__ = getattr(raw, "__name__", "method")
    method.__doc__ = getattr(raw, "__doc__", None)
    return method


def _differentiable_move(raw):
    """to/cpu/cuda/float/...: differentiable, except that an integer or bool result has no grad."""
    def method(self, *args, **kwargs):
        if self.requires_grad and _mode.enabled:
            out = Move.apply(self, lambda t: raw(t, *args, **kwargs))
            if out.dtype not in FLOATING_DTYPES:
                out.requires_grad, out.grad_fn = False, None
        else:
            out = raw(self, *args, **kwargs)
        if out._is_alias_of(self):  # already on that device in that dtype
            record_view(out, self, method, args, kwargs)
        return out
    method.__name__ = getattr(raw, "__name__", "to")
    return method


def install_views(cls) -> None:
    raw = {name: getattr(cls, name) for name in (
        "reshape", "view", "squeeze", "unsqueeze", "select", "_slice", "__getitem__", "clone",
        "contiguous", "to", "cpu", "cuda", "float", "double", "half", "bfloat16", "transpose",
        "permute", "expand") if hasattr(cls, name)}
    for name in ("reshape", "view", "squeeze", "unsqueeze"):
        setattr(cls, name, _differentiable(raw[name], Reshape))
    for name in ("select", "_slice", "__getitem__"):
        setattr(cls, name, _differentiable(raw[name], Index))
    setattr(cls, "clone", _differentiable(raw["clone"], Identity, may_view=False))
    setattr(cls, "contiguous", _differentiable(raw["contiguous"], Identity))
    for name in ("to", "cpu", "cuda", "float", "double", "half", "bfloat16"):
        setattr(cls, name, _differentiable_move(raw[name]))
    if "expand" in raw:
        setattr(cls, "expand", _differentiable(raw["expand"], Expand))

    raw_transpose, raw_permute, raw_view = raw["transpose"], raw["permute"], raw["view"]

    def transpose(self, dim0, dim1):
        if self.requires_grad and _mode.enabled:
            out = Transpose.apply(self, raw_transpose, dim0, dim1)
        else:
            out = raw_transpose(self, dim0, dim1)
        record_view(out, self, transpose, (dim0, dim1), {})
        return out

    def permute(self, *dims):
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        if self.requires_grad and _mode.enabled:
            out = Permute.apply(self, raw_permute, dims)
        else:
            out = raw_permute(self, *dims)
        record_view(out, self, permute, dims, {})
        return out

    def detach(self):
        """A new tensor sharing this one's storage, outside the graph."""
        return raw_view(self, *self.shape)

    cls.transpose = transpose
    cls.permute = permute
    cls.detach = detach
    # As torch's .data: the same memory outside the graph, with a version counter of its own, so
    # writes through it (old-style optimizers) do not trip autograd's saved-tensor check; detach()
    # shares the counter and does.
    cls.data = property(cls._alias_with_own_version, cls._set_data,
                        doc="The tensor's values outside the graph (the same memory, its own version "
                            "counter); assigning swaps in another tensor's memory, shape, dtype and device.")


def install_autograd_state(cls) -> None:
    install_history_properties(cls)  # requires_grad, grad_fn
    cls.grad = None
    cls.is_leaf = property(lambda self: self.grad_fn is None,
                           doc="True for tensors made by the user rather than by a recorded op.")

    def requires_grad_(self, requires_grad: bool = True):
        if requires_grad and self.dtype not in FLOATING_DTYPES:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if not requires_grad and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to "
                               "use a computed variable in a subgraph that doesn't require differentiation "
                               "use var_no_grad = var.detach().")
        self.requires_grad = builtins.bool(requires_grad)
        return self

    def backward(self, gradient=None, retain_graph=None, create_graph=False):
        """Accumulates gradients of this tensor into .grad of the leaves it depends on."""
        engine.backward(self, gradient, retain_graph, create_graph)

    def retain_grad(self):
        """Keep this non-leaf tensor's gradient in .grad on backward (a no-op for leaves)."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is not None:
            self.grad_fn.retained = self

    cls.retains_grad = property(lambda self: self.grad_fn is not None and self.grad_fn.retained is self)
    cls.retain_grad = retain_grad
    cls.requires_grad_ = requires_grad_
    cls.backward = backward


def install_scalar_conversions(cls) -> None:
    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return builtins.bool(self.item())

    cls.__bool__ = __bool__
    cls.__float__ = lambda self: builtins.float(self.item())
    cls.__int__ = lambda self: int(self.item())


def _comparison(op):
    def method(self, other):
        # numbers.Number covers NumPy scalars too: `t == np.float32(1)` must not fall back to
        # NumPy's reflected comparison, which would turn t into an ndarray.
        if not isinstance(other, (Tensor, numbers.Number, np.bool_)):
            return NotImplemented  # `t == None` is False, as for any other object
        return op(self, other)
    return method


def _binary(op):
    return lambda self, other: op(self, other)


def _reflected(op):
    return lambda self, other: op(other, self)


def install_operators(cls) -> None:
    # t + x is F.add(t, x); the reflected x + t (x not a tensor) is F.add(x, t).
    for name, op in (("add", F.add), ("sub", F.sub), ("mul", F.mul), ("truediv", F.div), ("pow", F.pow),
                     ("matmul", F.matmul)):
        setattr(cls, f"__{name}__", _binary(op))
        setattr(cls, f"__r{name}__", _reflected(op))
    cls.__neg__ = lambda self: F.neg(self)
    cls.__pos__ = lambda self: self
    cls.__abs__ = lambda self: F.abs(self)
    for name, op in (("__eq__", F.eq), ("__ne__", F.ne), ("__lt__", F.lt), ("__le__", F.le),
                     ("__gt__", F.gt), ("__ge__", F.ge)):
        setattr(cls, name, _comparison(op))
    cls.__hash__ = object.__hash__  # defining __eq__ must not make tensors unhashable


def install_registered_methods(cls) -> None:
    """Tensor.<name> for every operator registered as a method (minitensor/_registry.py)."""
    for name, function in METHODS.items():
        setattr(cls, name, function)


def install_inplace(cls) -> None:
    """add_, sub_, ..., `+=`, ...: in place, through views; see inplace.py for autograd."""
    raw_copy, raw_fill = cls.copy_, cls.fill_

    def add_(self, other, alpha=1):
        return apply_inplace(self, F.add, other, alpha)

    def sub_(self, other, alpha=1):
        return apply_inplace(self, F.sub, other, alpha)

    def copy_(self, src):
        if records(self, (src,)):
            return apply_inplace(self, overwrite, src)
        return raw_copy(self, src)

    def fill_(self, value):
        if records(self, (value,)):
            return apply_inplace(self, overwrite, value)
        return raw_fill(self, value)

    cls.add_ = cls.__iadd__ = add_
    cls.sub_ = cls.__isub__ = sub_
    cls.mul_ = cls.__imul__ = lambda self, other: apply_inplace(self, F.mul, other)
    cls.div_ = cls.__itruediv__ = lambda self, other: apply_inplace(self, F.div, other)
    cls.pow_ = cls.__ipow__ = lambda self, exponent: apply_inplace(self, F.pow, exponent)
    cls.clamp_ = lambda self, min=None, max=None: apply_inplace(self, F.clamp, min, max)
    cls.copy_ = copy_
    cls.fill_ = fill_
    cls.zero_ = lambda self: fill_(self, 0)


def install_advanced_indexing(cls) -> None:
    """t[idx], t[mask] (copies, through index_select) beside the basic views; t[key] = v."""
    from .. import _indexing  # imports autograd: only once autograd itself is set up

    basic_getitem = cls.__getitem__

    def __getitem__(self, key):
        if _indexing.has_advanced(key):
            return _indexing.getitem(self, key)
        return basic_getitem(self, key)

    cls.__getitem__ = __getitem__
    cls.__setitem__ = _indexing.setitem
