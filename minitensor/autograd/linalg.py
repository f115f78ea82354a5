"""matmul and the softmax family (whose backward is fused in C++)."""

from __future__ import annotations

from .. import _C
from .function import Function


def _matrix_transpose(x):
    return x.transpose(-1, -2)


class Matmul(Function):
    """torch.matmul semantics for 1-D, 2-D and batched operands."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _C.matmul(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        # Lift vectors to matrices (a row, b a column) so one pair of formulas covers every case:
        # dA = dC @ B^T and dB = A^T @ dC, then sum over broadcast batch dims and drop the lifts.
        a2 = a.unsqueeze(0) if a.ndim == 1 else a
        b2 = b.unsqueeze(-1) if b.ndim == 1 else b
        g2 = grad.unsqueeze(-1) if b.ndim == 1 else grad  # b first: a 0-d grad (dot) has no dim -2
        g2 = g2.unsqueeze(-2) if a.ndim == 1 else g2
        grad_a = grad_b = None
        if need_a:
            grad_a = _C.sum_to_shape(_C.matmul(g2, _matrix_transpose(b2)), a2.shape).reshape(*a.shape)
        if need_b:
            grad_b = _C.sum_to_shape(_C.matmul(_matrix_transpose(a2), g2), b2.shape).reshape(*b.shape)
        return grad_a, grad_b


class Softmax(Function):
    """y = softmax(x, dim); backward through the fused kernel: dx = y * (dy - sum(y * dy))."""

    log = False  # LogSoftmax sets it: both ops share one forward and one backward kernel

    @classmethod
    def forward(cls, ctx, x, dim):
        y = (_C.log_softmax if cls.log else _C.softmax)(x, dim)
        ctx.dim = dim
        ctx.save_for_backward(y)
        return y

    @classmethod
    def backward(cls, ctx, grad):
        (y,) = ctx.saved_tensors
        return _C._softmax_backward(y, grad, ctx.dim, cls.log), None


class LogSoftmax(Softmax):
    """y = log_softmax(x, dim); backward dx = dy - exp(y) * sum(dy), the same fused kernel."""

    log = True
