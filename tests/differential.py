"""Differential testing against PyTorch: the same program runs in torch and in minitensor.

A program is a function `program(lib, *inputs)` written once against the API both libraries
share (`lib.tensor`, `lib.float32`, methods, operators, `lib.nn.functional`, ...). `check`
builds the inputs from the same NumPy arrays in both libraries, runs the program, and compares
what comes back: tensors (dtype, shape, values), nested tuples/lists/dicts, Python numbers, or
the type of the exception raised. Values are compared with minitensor's result against torch
computing in float64 on the same data (the exact answer to the dtype's rounding), with
tolerances by dtype; dtypes and shapes against torch in the requested dtype.

Test modules using this start with `torch = pytest.importorskip("torch")`.
"""

from __future__ import annotations

import builtins

import numpy as np
import pytest

import minitensor as mt

torch = pytest.importorskip("torch")

# (rtol, atol) of minitensor's result against torch's float64 answer on the same inputs.
TOLERANCE = {
    "float64": (1e-10, 1e-12),
    "float32": (2e-5, 1e-6),
    "float16": (4e-3, 1e-3),
    "bfloat16": (3e-2, 1e-2),
    "int64": (0, 0),
    "bool": (0, 0),
}

FLOAT_NAMES = ("float32", "float64", "float16", "bfloat16")


def dtype_name(dtype) -> str:
    return str(dtype).split(".")[-1]


class Input:
    """One program input: a NumPy array and the dtype to build it in; requires_grad for leaves."""

    def __init__(self, array, dtype: str | None = None, requires_grad: bool = False) -> None:
        self.array = np.asarray(array)
        self.dtype = dtype or {"f": "float32", "i": "int64", "u": "int64", "b": "bool"}[self.array.dtype.kind]
        self.requires_grad = requires_grad

    def build(self, lib, as_reference: bool):
        """The input in `lib`; as_reference: torch, the values rounded to the dtype, then float64."""
        array = self.array.astype(np.float64) if self.dtype in FLOAT_NAMES else self.array
        if lib is torch:
            t = torch.from_numpy(np.array(array, order="C")).to(getattr(torch, self.dtype))  # keeps 0-d
            if as_reference and self.dtype in FLOAT_NAMES:
                t = t.double()
        else:
            t = mt.tensor(array, dtype=getattr(mt, self.dtype))
        if self.requires_grad:
            t.requires_grad_()
        return t


def _as_input(x):
    if isinstance(x, Input):
        return x
    if isinstance(x, np.ndarray):
        return Input(x)
    return x  # Python numbers and other arguments pass through unchanged


def _build(args, lib, as_reference):
    return [a.build(lib, as_reference) if isinstance(a, Input) else a for a in args]


def _run(program, lib, args, as_reference):
    try:
        return program(lib, *_build(args, lib, as_reference)), None
    except Exception as error:  # noqa: BLE001  (the error is the result under test)
        return None, error


def _builtin_type(error) -> type:
    """The first Python built-in exception class of an error (torch raises a few subclasses)."""
    for cls in type(error).__mro__:
        if cls.__module__ == "builtins":
            return cls
    return Exception


def _mt_dtype_for(torch_dtype) -> str:
    name = dtype_name(torch_dtype)
    return {"int32": "int64", "int16": "int64", "int8": "int64", "uint8": "int64"}.get(name, name)


def compare(ours, expected, reference, path: str = "result", rtol_scale: float = 1.0) -> None:
    """ours (minitensor) against expected (torch, same dtypes) and reference (torch, float64)."""
    if isinstance(expected, torch.Tensor):
        assert isinstance(ours, mt.Tensor), f"{path}: expected a tensor, got {type(ours).__name__}"
        name = dtype_name(expected.dtype)
        assert dtype_name(ours.dtype) == _mt_dtype_for(expected.dtype), \
            f"{path}: dtype {dtype_name(ours.dtype)}, torch gives {name}"
        assert tuple(ours.shape) == tuple(expected.shape), \
            f"{path}: shape {tuple(ours.shape)}, torch gives {tuple(expected.shape)}"
        got = ours.detach().cpu()
        got = (got.float() if got.dtype == mt.bfloat16 else got).numpy().astype(np.float64)
        want = reference.detach().cpu().double().numpy()
        rtol, atol = TOLERANCE.get(name, (0, 0))
        np.testing.assert_allclose(got, want, rtol=rtol * rtol_scale, atol=atol * rtol_scale, equal_nan=True,
                                   err_msg=f"{path}: values differ from torch's (float64 reference)")
        return
    if isinstance(expected, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(expected), \
            f"{path}: expected a sequence of {len(expected)}, got {ours!r}"
        for i, (a, b, r) in enumerate(zip(ours, expected, reference)):
            compare(a, b, r, f"{path}[{i}]", rtol_scale)
        return
    if isinstance(expected, dict):
        assert isinstance(ours, dict) and list(ours) == list(expected), f"{path}: keys {list(ours)} != {list(expected)}"
        for k in expected:
            compare(ours[k], expected[k], reference[k], f"{path}[{k!r}]", rtol_scale)
        return
    if isinstance(expected, builtins.float):
        assert ours == pytest.approx(reference, rel=1e-5, abs=1e-6, nan_ok=True), f"{path}: {ours} != {reference}"
        return
    if isinstance(expected, torch.dtype):
        assert dtype_name(ours) == _mt_dtype_for(expected), f"{path}: {ours} != {expected}"
        return
    if isinstance(expected, torch.Size):
        assert tuple(ours) == tuple(expected), f"{path}: {ours} != {expected}"
        return
    assert ours == expected, f"{path}: {ours!r} != {expected!r}"


def check(program, *args, rtol_scale: float = 1.0):
    """Runs program in both libraries on the same inputs and compares; returns minitensor's result.

    When torch raises, minitensor must raise an error of the same Python built-in type (its
    ShapeError counts as the RuntimeError torch raises for shapes)."""
    args = [_as_input(a) for a in args]
    expected, torch_error = _run(program, torch, args, as_reference=False)
    ours, our_error = _run(program, mt, args, as_reference=False)
    if torch_error is not None:
        assert our_error is not None, f"torch raises {torch_error!r}; minitensor returned {ours!r}"
        wanted = _builtin_type(torch_error)
        assert isinstance(our_error, wanted), f"torch raises {torch_error!r}; minitensor raises {our_error!r}"
        return our_error
    if our_error is not None:
        raise AssertionError(f"torch returns {expected!r}; minitensor raises {our_error!r}") from our_error
    reference, ref_error = _run(program, torch, args, as_reference=True)
    assert ref_error is None, ref_error
    compare(ours, expected, reference, rtol_scale=rtol_scale)
    return ours


def random(rng, *shape, low: float = -3.0, high: float = 3.0) -> np.ndarray:
    return rng.uniform(low, high, size=shape)
