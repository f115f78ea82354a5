"""In-place ops (add_, mul_, clamp_, `+=`, `t[i] = v`, ...) with torch's semantics.

Every in-place op is its out-of-place op followed by `_assign_result_`, which does torch's checks
(the result keeps self's shape; no float into an int tensor) and writes into self's memory, so
views of self see the change and the storage's version counter moves on. Autograd saved the
version of every tensor it kept for backward (function.Context) and refuses a stale one.

Under grad mode, when self or an operand requires grad, self's history is rebased as in torch:
self's grad_fn becomes the op's node, fed by a copy of self's old values. What torch allows and
minitensor does not: an in-place op under grad mode on a view of a tensor that has a graph (torch
rebases the base through CopySlices); that raises instead of giving a wrong gradient, as does a
backward through a view whose base was rebased afterwards.
"""

from __future__ import annotations

from .. import _C
from .function import Function
from .grad_mode import _mode

Tensor = _C.Tensor

LEAF_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_MESSAGE = "a view of a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_GRAPH_MESSAGE = (
    "minitensor does not support in-place operations under grad mode on a view of a tensor that is part of "
    "an autograd graph (torch rebases the base's history here); modify the base, use an out-of-place op, "
    "or wrap the update in `with minitensor.no_grad():`")
SHARED_MEMORY_MESSAGE = (
    "minitensor does not support an in-place operation under grad mode that writes a result requiring grad "
    "into a tensor whose memory other tensors (views) share; use an out-of-place op")

_raw_assign = Tensor._assign_result_


def _view_root(node):
    """The node that the chain of view nodes starting at `node` comes from."""
    while node is not None and getattr(node, "is_view", False):
        node = node.next_functions[0]
    return node


def check_rebase_allowed(self) -> None:
    node = self.grad_fn
    if self.requires_grad and node is None:
        raise RuntimeError(LEAF_MESSAGE)
    if node is not None and node.is_view:
        root = _view_root(node)
        if root is None or root.name() == "AccumulateGrad":
            raise RuntimeError(VIEW_OF_LEAF_MESSAGE)
        raise RuntimeError(VIEW_OF_GRAPH_MESSAGE)
    if node is None and self._shares_memory_with_others():
        raise RuntimeError(SHARED_MEMORY_MESSAGE)


def _records(self, args) -> bool:
    if not _mode.enabled:
        return False
    if self.requires_grad:
        return True
    return any(isinstance(a, Tensor) and a.requires_grad for a in args)


def apply_inplace(self, op, *args):
    """self <- op(self, *args), in place; returns self (the same object)."""
    if not _records(self, args):
        _raw_assign(self, op(self, *args))
        return self
    check_rebase_allowed(self)
    before = self.clone()  # the old values, for backward: self itself is about to change
    result = op(before, *args)
    if result.dtype != self.dtype and _C.can_cast(result.dtype, self.dtype):
        result = result.to(self.dtype)  # recorded, so gradients reach self's history in its dtype
    _raw_assign(self, result)
    if not result.requires_grad:  # e.g. copy_ of a constant into a tensor that had a history
        result = Overwrite.apply(before, result)
    self.requires_grad, self.grad_fn = True, result.grad_fn
    return self


class Overwrite(Function):
    """`before` replaced by `values` (copy_, fill_, zero_): no gradient reaches the old values."""

    @staticmethod
    def forward(ctx, before, values):
        return values

    @staticmethod
    def backward(ctx, grad):
        return _C.zeros_like(grad), grad


def overwrite(before, values):
    """before's shape, dtype and device, values' numbers (broadcast, converted); differentiable."""
    if not isinstance(values, Tensor):
        values = _C.full_like(before, values)
    if values.device != before.device or values.dtype != before.dtype:
        values = values.to(before.device, before.dtype)
    if tuple(values.shape) != tuple(before.shape):
        values = values.expand(*before.shape)
    return Overwrite.apply(before, values)
