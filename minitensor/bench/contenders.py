"""The implementations minitensor is raced against: torch eager, torch.compile, Liger (Triton),
QuACK (CuTe-DSL) and NumPy, for softmax and for its backward.

Each contender turns (inputs, dim) into a zero-argument callable to time, or raises Unavailable
with a reason that ends up in the table's notes; a missing library, a shape it does not take or
a failed compile costs one column of one case, never the sweep. Contenders that compile on
their first call (torch.compile, Liger's Triton kernels, QuACK's CuTe-DSL kernels) are called
once here, outside the timed region.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import optional
from .devices import BackwardInputs, BenchDevice, Inputs

KNOWN_CONTENDERS = ("torch", "compile", "liger", "quack", "numpy")
LIGER_MODULE = "liger_kernel.ops.softmax"
QUACK_MODULE = "quack.softmax"


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


def numpy_softmax_backward(y: np.ndarray, dy: np.ndarray, dim: int, log: bool) -> np.ndarray:
    """dx from the forward's output y, in y's dtype."""
    if log:
        return dy - np.exp(y) * dy.sum(axis=dim, keepdims=True)
    return y * (dy - (y * dy).sum(axis=dim, keepdims=True))


def _torch_of(device: BenchDevice) -> Any:
    if device.torch is None:
        raise Unavailable("torch not importable")
    return device.torch


def _ready(label: str, torch: Any, on_cuda: bool, make: Callable[[], Callable[[], Any]]) -> Callable[[], Any]:
    """make()'s callable after one untimed call (the one that compiles), or Unavailable."""
    try:
        fn = make()
        fn()
        if on_cuda:
            torch.cuda.synchronize()
    except Unavailable:
        raise
    except Exception as error:  # noqa: BLE001  (compilers raise many kinds; all mean "n/a")
        raise Unavailable(f"{label} failed: {short_reason(error)}") from error
    return fn


def _compiled(torch: Any, fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    # A fresh cache per case: otherwise the cache-size limit is hit after a few shapes and
    # dynamo silently falls back to eager, which would be timed as "compile".
    torch._dynamo.reset()

    def make() -> Callable[[], Any]:
        compiled = torch.compile(fn, dynamic=False)
        return lambda: compiled(*args)

    return _ready("torch.compile", torch, any(getattr(a, "is_cuda", False) for a in args), make)


def _library(module: Any, package: str, module_name: str) -> Any:
    if module is None:
        why = optional.import_failure(module_name)
        raise Unavailable(f"{package} not importable" + (f": {short_reason(why)}" if why else ""))
    return module


def _require_rows(library: str, x: Any, dim: int) -> None:
    """Liger and QuACK take rows: a contiguous CUDA tensor, softmax over its last dim."""
    if not x.is_cuda:
        raise Unavailable(f"{library}: CUDA only")
    if dim % x.dim() != x.dim() - 1:
        raise Unavailable(f"{library}: last dim only")
    if not x.is_contiguous():
        raise Unavailable(f"{library}: contiguous input only")


def _require_quack_dtype(torch: Any, x: Any) -> None:
    # quack.softmax asserts this (float64 is not among CuTe-DSL softmax's instantiations).
    if x.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise Unavailable("QuACK: float32, float16 and bfloat16 only")


def prepare(name: str, device: BenchDevice, inputs: Inputs, dim: int, log: bool) -> Callable[[], Any]:
    """A callable running contender `name`'s softmax (log_softmax if log) on inputs, ready to
    time (compiled and warmed up)."""
    if name == "numpy":
        if inputs.numpy is None:
            raise Unavailable("NumPy has no such dtype" if device.kind == "cpu" else "CPU only")
        x_np = inputs.numpy
        return lambda: numpy_softmax(x_np, dim, log)

    torch = _torch_of(device)
    if inputs.torch is None:
        raise Unavailable("no torch view of the input")
    x = inputs.torch
    op = torch.log_softmax if log else torch.softmax
    if name == "torch":
        return lambda: op(x, dim)
    if name == "compile":
        return _compiled(torch, lambda t: op(t, dim), x)
    if name == "liger":
        return _liger_softmax(torch, x, dim, log)
    if name == "quack":
        return _quack_softmax(torch, x, dim, log)
    raise ValueError(f"unknown contender {name!r}; choose from {', '.join(KNOWN_CONTENDERS)}")


def _liger_softmax(torch: Any, x: Any, dim: int, log: bool) -> Callable[[], Any]:
    if log:
        raise Unavailable("Liger has softmax only, no log_softmax")
    _require_rows("Liger", x, dim)
    liger = _library(optional.liger_softmax(), "liger-kernel", LIGER_MODULE)
    # An autograd.Function; with x not requiring grad it is the forward kernel alone. It views
    # x as (rows, last dim) itself.
    apply = liger.LigerSoftmaxFunction.apply
    return _ready("Liger", torch, True, lambda: lambda: apply(x))


def _quack_softmax(torch: Any, x: Any, dim: int, log: bool) -> Callable[[], Any]:
    if log:
        raise Unavailable("QuACK has softmax only, no log_softmax")
    _require_rows("QuACK", x, dim)
    _require_quack_dtype(torch, x)
    quack = _library(optional.quack_softmax(), "quack-kernels", QUACK_MODULE)
    # quack.softmax.softmax takes 2-D (rows, N) only; reshape of a contiguous tensor is a view.
    # softmax_fwd is the same kernel without the autograd.Function wrapper (less host time).
    rows, shape = x.reshape(-1, x.shape[-1]), x.shape
    softmax = getattr(quack, "softmax_fwd", quack.softmax)
    return _ready("QuACK", torch, True, lambda: lambda: softmax(rows).view(shape))


def prepare_backward(name: str, device: BenchDevice, inputs: BackwardInputs, dim: int,
                     log: bool) -> Callable[[], Any]:
    """A callable computing dx from (y, dy) with contender `name`'s softmax backward kernel
    (log_softmax's if log), ready to time."""
    y, dy = inputs.y, inputs.dy
    if name == "numpy":
        if y.numpy is None or dy.numpy is None:
            raise Unavailable("NumPy has no such dtype" if device.kind == "cpu" else "CPU only")
        y_np, dy_np = y.numpy, dy.numpy
        return lambda: numpy_softmax_backward(y_np, dy_np, dim, log)

    torch = _torch_of(device)
    if y.torch is None or dy.torch is None:
        raise Unavailable("no torch view of the inputs")
    y_t, dy_t = y.torch, dy.torch
    # The kernels autograd runs for torch.softmax / log_softmax: (grad_output, output, dim, input_dtype).
    op = torch.ops.aten._log_softmax_backward_data if log else torch.ops.aten._softmax_backward_data
    if name == "torch":
        return lambda: op(dy_t, y_t, dim, y_t.dtype)
    if name == "compile":
        return _compiled(torch, lambda grad, out: op(grad, out, dim, out.dtype), dy_t, y_t)
    if name == "quack":
        return _quack_softmax_backward(torch, y_t, dy_t, dim, log)
    if name == "liger":
        raise Unavailable("Liger's softmax backward is reachable only through autograd after its own "
                          "forward: not raced")
    raise ValueError(f"unknown contender {name!r}; choose from {', '.join(KNOWN_CONTENDERS)}")


def _quack_softmax_backward(torch: Any, y: Any, dy: Any, dim: int, log: bool) -> Callable[[], Any]:
    if log:
        raise Unavailable("QuACK has softmax only, no log_softmax")
    _require_rows("QuACK", y, dim)
    _require_rows("QuACK", dy, dim)
    _require_quack_dtype(torch, y)
    quack = _library(optional.quack_softmax(), "quack-kernels", QUACK_MODULE)
    shape, n = y.shape, y.shape[-1]
    y_rows, dy_rows, softmax_bwd = y.reshape(-1, n), dy.reshape(-1, n), quack.softmax_bwd
    return _ready("QuACK", torch, True, lambda: lambda: softmax_bwd(dy_rows, y_rows).view(shape))
