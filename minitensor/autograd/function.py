"""Function, the graph nodes it records, and the per-op context.

An op is a small class with two static methods, as in PyTorch:

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

`Exp.apply(x)` runs forward and, when grad mode is on and some input requires grad, records a
`Node` as the result's `grad_fn`. backward returns one gradient per forward argument (None for
arguments that are not tensors or need none). forward may return a tuple whose first element is
the differentiable output (extras such as argmax indices are not differentiable).
"""

from __future__ import annotations

from .. import _C
from .grad_mode import _mode

Tensor = _C.Tensor

SECOND_BACKWARD_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward(). Specify retain_graph=True if you need to backward through the graph a second time "
    "or if you need to access saved tensors after calling backward.")


def _describe(tensor) -> str:
    return f"[{tensor.dtype.name} {list(tensor.shape)}]"


def modified_message(tensor, saved_version: int, saved_by: str) -> str:
    """torch's wording for a saved tensor that an in-place op changed before backward used it."""
    return ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"{_describe(tensor)} is at version {tensor._version}; expected version {saved_version} instead. "
            f"Hint: it was saved for {saved_by}; clone it before modifying it in place, or make the change "
            "out of place.")


class Context:
    """What forward leaves for backward. Tensors go through save_for_backward so that backward()
    can free them (the graph is then spent, as in torch, unless retain_graph=True), and so that
    their version counters are remembered: backward refuses a tensor written in place since."""

    def __init__(self, needs_input_grad: tuple) -> None:
        self.needs_input_grad = needs_input_grad
        self._saved: tuple | None = ()
        self._versions: tuple = ()
        self.saved_by = "backward"  # the node's name, set when the node is made

    def save_for_backward(self, *tensors) -> None:
        self._saved = tensors
        self._versions = tuple(t._version if isinstance(t, Tensor) else None for t in tensors)

    @property
    def saved_tensors(self) -> tuple:
        if self._saved is None:
            raise RuntimeError(SECOND_BACKWARD_MESSAGE)
        for tensor, version in zip(self._saved, self._versions):
            if version is not None and tensor._version != version:
                raise RuntimeError(modified_message(tensor, version, self.saved_by))
        return self._saved

    def release(self) -> None:
        if self._saved:  # a node that saved nothing can run again, as in torch
            self._saved = None


class _DiscardingContext:
    """The ctx forward sees when nothing is recorded: it keeps nothing alive and costs nothing."""

    __slots__ = ()
    needs_input_grad = ()

    def __setattr__(self, name, value) -> None:
        pass

    def save_for_backward(self, *tensors) -> None:
        pass


_DISCARD = _DiscardingContext()


class Node:
    """One recorded op: its Function's backward, its context, and edges to the inputs' nodes."""

    __slots__ = ("function", "ctx", "next_functions", "retained")

    def __init__(self, function, ctx: Context, next_functions: tuple) -> None:
        self.function = function
        self.ctx = ctx
        self.next_functions = next_functions  # per forward argument: Node, AccumulateGrad or None
        self.retained = None  # the tensor this node made, when it called retain_grad()

    def name(self) -> str:
        return getattr(self.function, "node_name", None) or f"{self.function.__name__}Backward"

    def apply(self, grad):
        grads = self.function.backward(self.ctx, grad)
        return grads if isinstance(grads, tuple) else (grads,)

    def release(self) -> None:
        self.ctx.release()

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad:
    """The edge into a leaf tensor: adds the incoming gradient to leaf.grad."""

    __slots__ = ("variable",)
    next_functions = ()

    def __init__(self, variable) -> None:
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"

    def accumulate(self, grad) -> None:
        leaf = self.variable
        if grad.shape != leaf.shape:
            grad = _C.sum_to_shape(grad, leaf.shape)
        if grad.dtype != leaf.dtype or grad.device != leaf.device:
            grad = grad.to(leaf.device, leaf.dtype)
        if leaf.grad is None:
            # Gradients of broadcasts are stride-0 views; a leaf's .grad is a plain dense tensor.
            leaf.grad = grad if grad.is_contiguous() else grad.contiguous()
        else:
            leaf.grad = _C.add(leaf.grad, grad)

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {id(self):#x}>"


def edge_of(tensor):
    """Where a gradient for `tensor` goes: its grad_fn, or its .grad for a leaf."""
    grad_fn = tensor.grad_fn
    return grad_fn if grad_fn is not None else AccumulateGrad(tensor)


class Function:
    """Base class of differentiable ops; see the module docstring."""


    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError

    @classmethod
    def apply(cls, *args):
        if _mode.enabled:
            needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
            if True in needs:
                return cls._record(args, needs)
        return cls.forward(_DISCARD, *args)

    @classmethod
    def _record(cls, args: tuple, needs: tuple):
        ctx = Context(needs)
        _mode.enabled = False  # ops called inside forward are implementation details, not graph
        try:
            out = cls.forward(ctx, *args)
        finally:
            _mode.enabled = True
        first = out[0] if isinstance(out, tuple) else out
        if any(first is a for a in args):  # never overwrite an input's own grad_fn
            first = first.view(*first.shape)
            out = (first,) + out[1:] if isinstance(out, tuple) else first
        node = Node(cls, ctx, tuple(edge_of(a) if need else None for a, need in zip(args, needs)))
        ctx.saved_by = node.name()
        first.requires_grad = True
        first.grad_fn = node
        return out
