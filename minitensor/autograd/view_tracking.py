"""Which tensors are views of which, so that in-place ops on views follow torch's autograd rules.

Every view a user makes (t[0], t[:, 1:], t.T, t.view(...), t.select(...), ...) remembers its
base (the tensor that owns the memory, never itself a view) and how to make the same view again
from a tensor shaped like the base (`replay`). Two things need that:

- An in-place op on a view rewrites part of its base, so the base's history must change: the
  base's grad_fn becomes a CopySlices node (the old history outside the view, the op's result
  inside it), as in torch.
- A view's own history is derived from its base's. When the base's history changes (an in-place
  op on the base or on another view of it), the view's grad_fn is made again from the base's new
  one the next time someone reads it (torch regenerates it the same way).

Views made under no_grad keep no history; torch forbids modifying one in place under grad mode
when that would have to be recorded, and so does minitensor (same words). Outputs of split and
chunk (several views of one base) may not be modified in place when that is recorded, as in torch.
"""

from __future__ import annotations

from .. import _C
from .function import Function
from .grad_mode import _mode

Tensor = _C.Tensor

NO_GRAD_VIEW_MESSAGE = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. Given that this "
    "use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view "
    "and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both "
    "outside (if you want the inplace to be tracked).")


def multi_output_message(name: str, index: int) -> str:
    return (f"Output {index} of {name} is a view and is being modified inplace. This view is the output of a "
            "function that returns multiple views. Such functions do not allow the output views to be modified "
            "inplace. You should replace the inplace operation by an out-of-place one.")


class ViewInfo:
    """What a view knows about its base. `seen` is the base's (grad_fn, requires_grad) when the
    view's own grad_fn was last derived from it: a different pair means the view's is stale."""

    __slots__ = ("base", "replay", "with_grad", "multi_output", "seen")

    def __init__(self, base, replay, with_grad: bool, multi_output) -> None:
        self.base = base
        self.replay = replay  # tensor shaped like base -> the same view of it (through the autograd methods)
        self.with_grad = with_grad  # made under grad mode (else it never has a history of its own)
        self.multi_output = multi_output  # (function name, output index) for split / chunk outputs
        self.seen = _history_of(base)


def _history_of(base) -> tuple:
    d = base.__dict__
    return d.get("_grad_fn"), d.get("_requires_grad", False)


def view_info(tensor):
    """The ViewInfo of a view made through the autograd methods, else None."""
    return tensor.__dict__.get("_view_of")


def record_view(out, source, method, args, kwargs) -> None:
    """out = method(source, *args, **kwargs) shares source's memory: remember its root base."""
    parent = source.__dict__.get("_view_of")
    if parent is None:
        base, with_grad, multi = source, _mode.enabled, None
        replay = lambda t: method(t, *args, **kwargs)  # noqa: E731
    else:
        outer = parent.replay
        base, with_grad, multi = parent.base, _mode.enabled and parent.with_grad, parent.multi_output
        replay = lambda t: method(outer(t), *args, **kwargs)  # noqa: E731
    out.__dict__["_view_of"] = ViewInfo(base, replay, with_grad, multi)


def mark_multi_output(views, name: str) -> None:
    """split / chunk: torch does not let their outputs be modified in place under autograd."""
    for index, view in enumerate(views):
        info = view_info(view)
        if info is not None:
            info.multi_output = (name, index)


def _refresh(tensor, d, info) -> None:
    """Derives the view's history again from its base's, when that changed since."""
    base = info.base
    now = _history_of(base)
    if now[0] is info.seen[0] and now[1] == info.seen[1]:
        return
    info.seen = now
    if not now[1]:
        d["_grad_fn"], d["_requires_grad"] = None, False
        return
    previous, _mode.enabled = _mode.enabled, True
    try:
        fresh = info.replay(base)
    finally:
        _mode.enabled = previous
    d["_grad_fn"], d["_requires_grad"] = fresh.grad_fn, True


def _get_grad_fn(self):
    d = self.__dict__
    info = d.get("_view_of")
    if info is not None and info.with_grad:
        _refresh(self, d, info)
    return d.get("_grad_fn")


def _set_grad_fn(self, node) -> None:
    self.__dict__["_grad_fn"] = node


def _get_requires_grad(self) -> bool:
    d = self.__dict__
    info = d.get("_view_of")
    if info is not None and info.with_grad:
        _refresh(self, d, info)
    return d.get("_requires_grad", False)


def _set_requires_grad(self, value: bool) -> None:
    self.__dict__["_requires_grad"] = value


def install_history_properties(cls) -> None:
    """grad_fn and requires_grad as properties: a view's are re-derived when its base's changed."""
    cls.grad_fn = property(_get_grad_fn, _set_grad_fn, doc="The node that made this tensor (None for leaves).")
    cls.requires_grad = property(_get_requires_grad, _set_requires_grad,
                                 doc="Whether autograd records ops on this tensor.")


def check_view_rebase_allowed(info) -> None:
    """torch's refusals for a recorded in-place op on a view."""
    if not info.with_grad:
        raise RuntimeError(NO_GRAD_VIEW_MESSAGE)
    if info.multi_output is not None:
        raise RuntimeError(multi_output_message(*info.multi_output))


class CopySlices(Function):
    """The base after an in-place op on one of its views: its old values outside the view, the op's
    result inside. Built by inplace.rebase_view (never through apply): the first edge is the
    base's old history, the second the result's."""

    node_name = "CopySlices"  # torch's name for this node

    @staticmethod
    def backward(ctx, grad):
        grad_base = grad.clone()
        region = ctx.replay(grad_base)
        grad_result = region.clone()
        region.zero_()  # the old values there were overwritten: no gradient reaches them this way
        return grad_base, grad_result
