"""In-place ops (add_, mul_, clamp_, `+=`, `t[i] = v`, ...) with torch's semantics.

Every in-place op is its out-of-place op followed by `_assign_result_`, which does torch's checks
(the result keeps self's shape; no float into an int tensor) and writes into self's memory, so
views of self see the change and the storage's version counter moves on. Autograd saved the
version of every tensor it kept for backward (function.Context) and refuses a stale one.

Under grad mode, when self (or, for a view, its base) or an operand requires grad, the op is
recorded as in torch: on a tensor that owns its memory, self's grad_fn becomes the op's node, fed
by a copy of self's old values; on a view, the base's grad_fn becomes a CopySlices node (old
history outside the view, the op's inside) and the view's own history is derived from it again
(view_tracking.py). A leaf that requires grad, or a view of one, refuses in-place ops there.
"""

from __future__ import annotations

from .. import _C
from .function import Context, Function, Node, edge_of
from .grad_mode import _mode
from .view_tracking import CopySlices, check_view_rebase_allowed, view_info

Tensor = _C.Tensor

LEAF_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_MESSAGE = "a view of a leaf Variable that requires grad is being used in an in-place operation."

_raw_assign = Tensor._assign_result_


def records(self, args) -> bool:
    """Whether an in-place op on self with these operands is recorded by autograd."""
    if not _mode.enabled:
        return False
    if self.requires_grad:
        return True
    info = view_info(self)
    if info is not None and info.base.requires_grad:
        return True
    return any(isinstance(a, Tensor) and a.requires_grad for a in args)


def check_rebase_allowed(self) -> None:
    """torch's refusals for a recorded in-place op on self."""
    info = view_info(self)
    if info is None:
        if self.requires_grad and self.grad_fn is None:
            raise RuntimeError(LEAF_MESSAGE)
        return
    check_view_rebase_allowed(info)
    base = info.base
    if base.requires_grad and base.grad_fn is None:
        raise RuntimeError(VIEW_OF_LEAF_MESSAGE)


def _recorded_result(self, op, args):
    """op applied to a recorded copy of self's old values (self itself is about to change)."""
    before = self.clone()
    result = op(before, *args)
    if result.dtype != self.dtype and _C.can_cast(result.dtype, self.dtype):
        result = result.to(self.dtype)  # recorded, so gradients reach self's history in its dtype
    if not result.requires_grad:  # e.g. copy_ of a constant into a tensor that had a history
        result = Overwrite.apply(before, result)
    return result


def _rebase_view(info, result) -> None:
    """The view's base now holds `result` in the view's place: its grad_fn becomes CopySlices."""
    base = info.base
    needs = (base.requires_grad, True)
    ctx = Context(needs)
    ctx.replay = info.replay
    node = Node(CopySlices, ctx, (edge_of(base) if needs[0] else None, result.grad_fn))
    base.requires_grad, base.grad_fn = True, node


def apply_inplace(self, op, *args):
    """self <- op(self, *args), in place; returns self (the same object)."""
    if not records(self, args):
        _raw_assign(self, op(self, *args))
        return self
    check_rebase_allowed(self)
    result = _recorded_result(self, op, args)
    _raw_assign(self, result)
    info = view_info(self)
    if info is None:
        self.requires_grad, self.grad_fn = True, result.grad_fn
    else:
        _rebase_view(info, result)  # self's own grad_fn follows from the base's on its next read
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
