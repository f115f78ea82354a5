"""SGD with momentum, dampening, Nesterov and weight decay (torch.optim.SGD's rules)."""

from __future__ import annotations

from .. import _C
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer


class SGD(Optimizer):
    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False) -> None:
        if lr < 0.0 or momentum < 0.0 or weight_decay < 0.0:
            raise ValueError(f"Invalid SGD settings: lr={lr}, momentum={momentum}, weight_decay={weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))

    @no_grad()
    def step(self) -> None:
        for group, p, state in self._params_with_grad():
            grad = p.grad
            if group["weight_decay"]:
                grad = _C.add(grad, _C.mul(p, group["weight_decay"]))
            momentum = group["momentum"]
            if momentum:
                buffer = state.get("momentum_buffer")
                if buffer is None:
                    buffer = grad.clone()
                else:  # buf = momentum * buf + (1 - dampening) * grad
                    buffer = _C.add(_C.mul(buffer, momentum), _C.mul(grad, 1.0 - group["dampening"]))
                state["momentum_buffer"] = buffer
                grad = _C.add(grad, _C.mul(buffer, momentum)) if group["nesterov"] else buffer
            # in place, so the parameter object (held by modules and by this optimizer) stays the same
            p.copy_(_C.sub(p, _C.mul(grad, group["lr"])))
