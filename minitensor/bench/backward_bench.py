"""The softmax backward as a sweep op (`python -m minitensor.bench softmax --backward`).

minitensor's backward kernel is timed through `_C._softmax_backward(y, dy, dim, log)`, the call
autograd makes (minitensor/autograd/linalg.py), against the kernels torch's autograd runs
(aten._softmax_backward_data / _log_softmax_backward_data), torch.compile of those, and QuACK's.
All read the same y and dy: made by torch where it is present and shared through DLPack, as for
the forward. The floor is three tensors of traffic: read y, read dy, write dx.
"""

from __future__ import annotations

from typing import Any, Callable

import minitensor as mt

from . import contenders as contenders_mod
from .cases import TypedCase
from .correctness import Check, as_numpy, check_backward_with_numpy, check_backward_with_torch
from .devices import BackwardInputs, BenchDevice, Inputs


def minitensor_backward(y: Any, dy: Any, dim: int, log: bool) -> Any:
    return mt._C._softmax_backward(y, dy, dim, log)


class SoftmaxBackward:
    """dx = y * (dy - sum(y * dy)) for softmax; dx = dy - exp(y) * sum(dy) for log_softmax."""

    tensors_moved = 3

    def __init__(self, log: bool) -> None:
        self.log = log
        self.name = ("log_softmax" if log else "softmax") + "_backward"

    def make_inputs(self, device: BenchDevice, typed: TypedCase, seed: int) -> BackwardInputs:
        dim = typed.case.dim
        x = device.make_inputs(typed, seed)
        # y is a real softmax output (its rows sum to 1), which is what the backward is given.
        # Whose forward made it does not matter: every implementation and the reference read it.
        y_mt = (mt.log_softmax if self.log else mt.softmax)(x.mt, dim)
        y = Inputs(mt=y_mt, torch=device.to_torch(y_mt),
                   numpy=as_numpy(y_mt) if x.numpy is not None else None)
        return BackwardInputs(y=y, dy=device.make_inputs(typed, seed + 1))

    def minitensor_call(self, inputs: BackwardInputs, dim: int) -> Callable[[], Any]:
        y, dy, log = inputs.y.mt, inputs.dy.mt, self.log
        return lambda: minitensor_backward(y, dy, dim, log)

    def check(self, device: BenchDevice, inputs: BackwardInputs, output: Any, typed: TypedCase) -> Check:
        y, dy, dim = inputs.y, inputs.dy, typed.case.dim
        if device.torch is not None and y.torch is not None and dy.torch is not None:
            return check_backward_with_torch(device.torch, y.torch, dy.torch, device.to_torch(output), dim,
                                             typed.dtype, self.log)
        if y.numpy is not None and dy.numpy is not None:
            return check_backward_with_numpy(y.numpy, dy.numpy, as_numpy(output), dim, typed.dtype, self.log)
        return Check("unchecked", detail="no torch to compare with")

    def contender(self, name: str, device: BenchDevice, inputs: BackwardInputs, dim: int) -> Callable[[], Any]:
        return contenders_mod.prepare_backward(name, device, inputs, dim, self.log)
