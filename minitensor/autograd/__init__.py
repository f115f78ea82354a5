"""Reverse-mode automatic differentiation for minitensor, with PyTorch's names and semantics.

    x = mt.randn(3, 4).requires_grad_()
    loss = (x.relu() @ w).softmax(1).sum()
    loss.backward()      # x.grad now holds d(loss)/dx

An op is a `Function` (forward/backward static methods, see function.py); the graph of `Node`s
recorded while grad mode is on is walked in topological order by engine.backward and freed
afterwards unless retain_graph=True.
"""

from .engine import backward, grad
from .function import Function
from .gradcheck import GradcheckError, gradcheck
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled

__all__ = ["Function", "GradcheckError", "backward", "grad", "enable_grad", "gradcheck", "is_grad_enabled",
           "no_grad", "set_grad_enabled"]
