"""Optimizer base: parameter groups, per-parameter state, zero_grad, state_dict."""

from __future__ import annotations

import copy

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

    def _params(self) -> list:
        return [p for group in self.param_groups for p in group["params"]]

    def state_dict(self) -> dict:
        """{"state": {index: {...}}, "param_groups": [{..., "params": [index, ...]}]}, torch's layout:
        parameters are numbered in the order of the groups; the state's tensors are not copied."""
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index.setdefault(id(p), len(index)) for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: self.state[id(p)] for p in self._params() if self.state.get(id(p))}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Takes the hyper-parameters and per-parameter state of state_dict (copied; tensors moved to
        each parameter's device, floating ones cast to its dtype, as torch does)."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(own["params"]) for g, own in zip(groups, self.param_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        by_index = {}
        for saved, own in zip(groups, self.param_groups):
            by_index.update(zip(saved["params"], own["params"]))
            own.update({k: copy.deepcopy(v) for k, v in saved.items() if k != "params"})
        self.state = {}
        for key, values in state_dict["state"].items():
            param = by_index.get(key)
            if param is not None:
                self.state[id(param)] = {k: _state_value(k, v, param) for k, v in values.items()}

    def step(self):
        raise NotImplementedError


def step_tensor(count) -> _C.Tensor:
    """The step count as torch 2.x keeps it in an optimizer's state: a 0-d float32 tensor on the
    CPU (whatever the parameter's dtype and device), counted up in place."""
    return _C.full([], float(count), dtype=_C.dtype.float32)


def _state_value(key, value, param):
    if key == "step":  # torch keeps the step's float32 on load and turns a number into a tensor
        return value.detach().cpu().clone() if isinstance(value, _C.Tensor) else step_tensor(value)
    if isinstance(value, _C.Tensor):
        dtype = param.dtype if value.dtype.is_floating_point else value.dtype
        return value.detach().to(param.device, dtype).clone()
    return copy.deepcopy(value)
