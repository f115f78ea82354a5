"""Checks a result (minitensor's or a contender's) against a float64 reference rounded to the
tested dtype.

Tolerances are absolute on probabilities, sized to a few units in the last place of each dtype
near 1 (fp16 ulp ~1e-3, bf16 ~8e-3). log_softmax values reach -20 and beyond, where an ulp is
that many times larger, so for it the same number is also used as a relative tolerance. So it is
for the backward: dx is not bounded by 1 (dy is a random normal, and log_softmax's dx carries the
sum of dy over the axis).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

PROBABILITY_ATOL = {"float32": 1e-5, "float64": 1e-10, "float16": 2e-3, "bfloat16": 2e-2}


@dataclass(frozen=True)
class Check:
    status: str  # "ok", "FAIL", "unchecked" or "error"
    max_error: float = float("nan")  # max |result - reference| (scaled for log_softmax)
    tolerance: float = float("nan")
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.status in ("FAIL", "error")


def verdict(max_error: float, tolerance: float) -> Check:
    # `not <=` so that a NaN error (a NaN in the output) fails.
    status = "ok" if max_error <= tolerance else "FAIL"
    return Check(status, max_error, tolerance)


def check_with_torch(torch: Any, x: Any, result: Any, dim: int, dtype: str, log: bool) -> Check:
    """x: the torch input, result: the torch view of minitensor's output."""
    if tuple(result.shape) != tuple(x.shape):
        return Check("FAIL", detail=f"shape {tuple(result.shape)} != {tuple(x.shape)}")
    op = torch.log_softmax if log else torch.softmax
    reference = op(x.double(), dim).to(x.dtype).double()
    error = (result.double() - reference).abs()
    if log:
        error = error / (1.0 + reference.abs())
    max_error = float(error.max().item()) if error.numel() else 0.0
    del reference, error
    return verdict(max_error, PROBABILITY_ATOL[dtype])


def numpy_reference(x: np.ndarray, dim: int, log: bool) -> np.ndarray:
    x = x.astype(np.float64)
    shifted = x - x.max(axis=dim, keepdims=True)
    log_sum = np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
    return shifted - log_sum if log else np.exp(shifted - log_sum)


def check_with_numpy(x: np.ndarray, result: np.ndarray, dim: int, dtype: str, log: bool) -> Check:
    if result.shape != x.shape:
        return Check("FAIL", detail=f"shape {result.shape} != {x.shape}")
    reference = numpy_reference(x, dim, log).astype(x.dtype).astype(np.float64)
    error = np.abs(result.astype(np.float64) - reference)
    if log:
        error = error / (1.0 + np.abs(reference))
    max_error = float(error.max()) if error.size else 0.0
    return verdict(max_error, PROBABILITY_ATOL[dtype])


def as_numpy(output: Any) -> np.ndarray:
    """A result as a NumPy array: NumPy's own, or a CPU copy of a minitensor or torch tensor."""
    return output if isinstance(output, np.ndarray) else np.asarray(output.cpu().numpy())


def format_error(check: Check) -> str:
    return "" if math.isnan(check.max_error) else f"{check.max_error:.1e}"


def check_backward_with_torch(torch: Any, y: Any, dy: Any, result: Any, dim: int, dtype: str,
                              log: bool) -> Check:
    """result: dx for y = softmax(x) (log_softmax(x) if log) and upstream gradient dy."""
    if tuple(result.shape) != tuple(y.shape):
        return Check("FAIL", detail=f"shape {tuple(result.shape)} != {tuple(y.shape)}")
    y64, dy64 = y.double(), dy.double()
    if log:
        reference = dy64 - y64.exp() * dy64.sum(dim, keepdim=True)
    else:
        reference = y64 * (dy64 - (y64 * dy64).sum(dim, keepdim=True))
    reference = reference.to(y.dtype).double()
    error = (result.double() - reference).abs() / (1.0 + reference.abs())
    max_error = float(error.max().item()) if error.numel() else 0.0
    del reference, error, y64, dy64
    return verdict(max_error, PROBABILITY_ATOL[dtype])


def check_backward_with_numpy(y: np.ndarray, dy: np.ndarray, result: np.ndarray, dim: int, dtype: str,
                              log: bool) -> Check:
    if result.shape != y.shape:
        return Check("FAIL", detail=f"shape {result.shape} != {y.shape}")
    y64, dy64 = y.astype(np.float64), dy.astype(np.float64)
    if log:
        reference = dy64 - np.exp(y64) * dy64.sum(axis=dim, keepdims=True)
    else:
        reference = y64 * (dy64 - (y64 * dy64).sum(axis=dim, keepdims=True))
    reference = reference.astype(y.dtype).astype(np.float64)
    error = np.abs(result.astype(np.float64) - reference) / (1.0 + np.abs(reference))
    max_error = float(error.max()) if error.size else 0.0
    return verdict(max_error, PROBABILITY_ATOL[dtype])


def wrong_result_reason(check: Check) -> str:
    """Why a contender whose output failed its check is not timed."""
    if check.status == "FAIL" and not check.detail:
        return f"wrong result (max error {format_error(check)} > tolerance {check.tolerance:.0e}): not timed"
    return f"result {check.status}: {check.detail}: not timed"
