"""Checks a minitensor result against a float64 reference rounded to the tested dtype.

Tolerances are absolute on probabilities, sized to a few units in the last place of each dtype
near 1 (fp16 ulp ~1e-3, bf16 ~8e-3). log_softmax values reach -20 and beyond, where an ulp is
that many times larger, so for it the same number is also used as a relative tolerance.
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


def format_error(check: Check) -> str:
    return "" if math.isnan(check.max_error) else f"{check.max_error:.1e}"
