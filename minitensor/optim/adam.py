"""Adam (torch.optim.Adam's update rule, L2 weight decay added to the gradient)."""

from __future__ import annotations

import math

from .. import _C
from ..autograd.grad_mode import no_grad
from .optimizer import Optimizer, step_tensor


class Adam(Optimizer):
    """Adam; weight_decay adds weight_decay * p to the gradient (L2), or with
    decoupled_weight_decay=True shrinks p by lr * weight_decay before the step (AdamW)."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, *, decoupled_weight_decay: bool = False) -> None:
        if lr < 0.0 or eps < 0.0 or not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"Invalid Adam settings: lr={lr}, betas={betas}, eps={eps}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay))

    @no_grad()
    def step(self) -> None:
        for group, p, state in self._params_with_grad():
            beta1, beta2 = group["betas"]
            grad = p.grad
            if group["weight_decay"] and group["decoupled_weight_decay"]:
                p.mul_(1.0 - group["lr"] * group["weight_decay"])
            elif group["weight_decay"]:
                grad = _C.add(grad, _C.mul(p, group["weight_decay"]))
            if not state:
                state["step"] = step_tensor(0)
                state["exp_avg"] = _C.zeros_like(p)
                state["exp_avg_sq"] = _C.zeros_like(p)
            state["step"].add_(1)
            step = state["step"].item()
            # m = b1*m + (1-b1)*g ;  v = b2*v + (1-b2)*g^2
            exp_avg = _C.add(_C.mul(state["exp_avg"], beta1), _C.mul(grad, 1.0 - beta1))
            exp_avg_sq = _C.add(_C.mul(state["exp_avg_sq"], beta2), _C.mul(_C.mul(grad, grad), 1.0 - beta2))
            state["exp_avg"], state["exp_avg_sq"] = exp_avg, exp_avg_sq
            bias_correction1 = 1.0 - beta1**step
            bias_correction2 = 1.0 - beta2**step
            step_size = group["lr"] / bias_correction1
            # denom = sqrt(v) / sqrt(bias_correction2) + eps, exactly where torch puts eps
            denom = _C.add(_C.div(_C.sqrt(exp_avg_sq), math.sqrt(bias_correction2)), group["eps"])
            p.copy_(_C.sub(p, _C.mul(_C.div(exp_avg, denom), step_size)))


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter), torch.optim.AdamW's defaults."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, decoupled_weight_decay=True)
