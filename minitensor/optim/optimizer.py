"""Optimizer base: parameter groups, per-parameter state, zero_grad."""

from __future__ import annotations

from .. import _C


class Optimizer:
    """Holds params (a list of tensors, or of dicts with "params" and per-group options)."""

    def __init__(self, params, defaults: dict) -> None:
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        self.defaults = defaults
        self.param_groups = []
        for group in groups:
            group = dict(group)
            group["params"] = list(group["params"])
            for p in group["params"]:
                if not isinstance(p, _C.Tensor) or not p.is_leaf:
                    raise ValueError("can't optimize a non-leaf Tensor")
            for key, value in defaults.items():
                group.setdefault(key, value)
            self.param_groups.append(group)
        self.state: dict[int, dict] = {}  # keyed by id(param): tensors compare element-wise, not by identity

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad = None if set_to_none else _C.zeros_like(p.grad)

    def _params_with_grad(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    yield group, p, self.state.setdefault(id(p), {})

    def step(self):
        raise NotImplementedError
