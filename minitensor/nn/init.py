"""Parameter initializers (PyTorch's nn.init names); they fill in place under no_grad."""

from __future__ import annotations

import math
import warnings

from .. import _C
from ..autograd.grad_mode import no_grad


def _fan_in_and_fan_out(tensor) -> tuple[int, int]:
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field = math.prod(tensor.shape[2:])  # a product, not numel // ...: sizes may be 0
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def uniform_(tensor, a: float = 0.0, b: float = 1.0):
    """Fills tensor with U(a, b) samples (seeded by mt.manual_seed)."""
    with no_grad():
        samples = _C.rand(*tensor.shape, dtype=tensor.dtype, device=tensor.device)
        return tensor.copy_(_C.add(_C.mul(samples, b - a), a))


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    if nonlinearity in ("linear", "sigmoid", "conv1d", "conv2d"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def kaiming_uniform_(tensor, a: float = 0.0, nonlinearity: str = "leaky_relu"):
    """U(-bound, bound) with bound = gain * sqrt(3 / fan_in) (He et al.)."""
    if tensor.numel() == 0:  # fan_in may be 0 (Linear(0, n)); torch warns and leaves it as it is
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan_in, _ = _fan_in_and_fan_out(tensor)
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / fan_in)
    return uniform_(tensor, -bound, bound)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()  # as torch's: a fill, so an expanded tensor may be zeroed too
