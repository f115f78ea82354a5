"""The implementations minitensor is raced against: torch eager, torch.compile and NumPy.

Each contender turns (inputs, dim) into a zero-argument callable to time, or raises Unavailable
with a reason that ends up in the table's notes; a missing library or a failed compile costs
one column of one case, never the sweep.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .devices import BenchDevice, Inputs

KNOWN_CONTENDERS = ("torch", "compile", "numpy")


class Unavailable(Exception):
    """This contender cannot run this case; the message says why."""


def short_reason(error: BaseException) -> str:
    """The first line of an exception, short enough for a table note."""
    text = str(error).strip().splitlines()
    first = text[0] if text else ""
    return f"{type(error).__name__}: {first}"[:160]


def numpy_softmax(x: np.ndarray, dim: int, log: bool) -> np.ndarray:
    """The textbook max / exp / sum / divide softmax, in x's dtype."""
    shifted = x - x.max(axis=dim, keepdims=True)
    if log:
        return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
    exps = np.exp(shifted)
    exps /= exps.sum(axis=dim, keepdims=True)
    return exps


def prepare(name: str, device: BenchDevice, inputs: Inputs, dim: int, log: bool) -> Callable[[], Any]:
    """A callable running contender `name` on inputs, ready to time (compiled and warmed up)."""
    if name == "numpy":
        if inputs.numpy is None:
            raise Unavailable("NumPy has no such dtype" if device.kind == "cpu" else "CPU only")
        x_np = inputs.numpy
        return lambda: numpy_softmax(x_np, dim, log)

    torch = device.torch
    if torch is None:
        raise Unavailable("torch not importable")
    if inputs.torch is None:
        raise Unavailable("no torch view of the input")
    x = inputs.torch
    op = torch.log_softmax if log else torch.softmax
    if name == "torch":
        return lambda: op(x, dim)
    if name == "compile":
        return _compiled(torch, op, x, dim)
    raise ValueError(f"unknown contender {name!r}; choose from {', '.join(KNOWN_CONTENDERS)}")


def _compiled(torch: Any, op: Callable[..., Any], x: Any, dim: int) -> Callable[[], Any]:
    # A fresh cache per case: otherwise the cache-size limit is hit after a few shapes and
    # dynamo silently falls back to eager, which would be timed as "compile".
    torch._dynamo.reset()

    def softmax_fn(t: Any) -> Any:
        return op(t, dim)

    try:
        compiled = torch.compile(softmax_fn, dynamic=False)
        compiled(x)  # the first call compiles; do it outside the timed region
        if x.is_cuda:
            torch.cuda.synchronize()
    except Exception as error:  # noqa: BLE001  (inductor raises many kinds; all mean "n/a")
        raise Unavailable(f"torch.compile failed: {short_reason(error)}") from error
    return lambda: compiled(x)
