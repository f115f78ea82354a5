"""copy.deepcopy and pickle for tensors (and so for modules, optimizers' state, state dicts).

A tensor pickles as its values (a NumPy array; bfloat16 as float32, which holds it exactly),
dtype, device, requires_grad and .grad; it comes back as a new tensor of the same class (an
nn.Parameter stays one) on the same device. deepcopy makes the same kind of copy without the
round trip, and, as torch, only of graph leaves."""

from __future__ import annotations

import copy

from . import _C

Tensor = _C.Tensor

DEEPCOPY_NON_LEAF = ("Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the "
                     "moment.  If you were attempting to deepcopy a module, this may be because of a "
                     "torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001")


def _of_class(cls, values, requires_grad: bool):
    if cls is Tensor:
        out = values
        if requires_grad:
            out.requires_grad_()
        return out
    return cls(values, requires_grad=requires_grad)  # nn.Parameter and other subclasses taking (data, requires_grad)


def rebuild(cls, array, dtype_name: str, device: str, requires_grad: bool, grad):
    values = Tensor(array, dtype=getattr(_C.dtype, dtype_name), device=device)
    out = _of_class(cls, values, requires_grad)
    out.grad = grad
    return out


def _host_array(t):
    t = t.detach().cpu()
    return (t.float() if t.dtype == _C.dtype.bfloat16 else t).numpy().copy()


def reduce_ex(self, protocol):
    return rebuild, (type(self), _host_array(self), self.dtype.name, str(self.device),
                     bool(self.requires_grad and self.is_leaf), self.grad)


def deepcopy(self, memo):
    if not self.is_leaf:
        raise RuntimeError(DEEPCOPY_NON_LEAF)
    if id(self) in memo:
        return memo[id(self)]
    out = _of_class(type(self), self.detach().clone(), bool(self.requires_grad))
    memo[id(self)] = out
    if self.grad is not None:
        out.grad = copy.deepcopy(self.grad, memo)
    return out


def install(cls) -> None:
    cls.__reduce_ex__ = reduce_ex
    cls.__deepcopy__ = deepcopy
