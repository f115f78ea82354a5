"""Turns Python data (nested lists, scalars, NumPy arrays) into one dense NumPy array.

Type inference follows torch.tensor (not the legacy torch.Tensor constructor, which always gives
float32): Python floats become float32 (the default dtype), Python ints int64, bools bool; NumPy
arrays and NumPy scalars keep their floating dtype (integer ones become int64, the only integer
dtype here). Everything odd gets a clear
TypeError or ValueError here, before any byte reaches C++.
"""

from __future__ import annotations

import numpy as np

_SUPPORTED = ("float32", "float64", "float16", "bfloat16", "int64", "bool")


def _infer_numpy(data):
    if isinstance(data, (str, bytes)):
        raise TypeError(f"cannot build a tensor from {type(data).__name__} data: unsupported element type "
                        "(expected numbers, nested sequences of numbers or a NumPy array)")
    try:
        array = np.asarray(data)
    except OverflowError as err:
        raise ValueError(f"cannot build a tensor: a Python int does not fit in int64 ({err})") from None
    except ValueError as err:
        if "maximum number of dimension" in str(err):
            raise ValueError(f"cannot build a tensor with more than 64 dimensions ({err})") from None
        if "inhomogeneous" in str(err) or "sequence" in str(err):
            raise ValueError(
                "cannot build a tensor from a ragged nested sequence: every list at one depth must "
                f"have the same length ({err})"
            ) from None
        raise
    if array.dtype == object:
        if isinstance(data, np.ndarray):  # torch.tensor refuses object arrays whatever they hold
            raise TypeError("can't convert np.ndarray of type numpy.object_; supported: "
                            + ", ".join(_SUPPORTED))
        elements = np.ravel(np.asarray(data, dtype=object))
        kinds = sorted({type(x).__name__ for x in elements})
        if any(k in ("list", "tuple") for k in kinds):
            raise ValueError("cannot build a tensor from a ragged nested sequence")
        # NumPy falls back to object for ints beyond int64 but also for ints mixed with None etc.:
        # only blame the int's size when one really is out of range.
        if any(type(x) is int and not -(2**63) <= x < 2**63 for x in elements):
            raise ValueError("cannot build a tensor: a Python int does not fit in int64")
        raise TypeError(f"cannot build a tensor from elements of type {', '.join(kinds)}")
    return array


def _holds_numpy_float64(data) -> bool:
    """Whether a nested sequence has a NumPy float64 scalar in it: torch.tensor([np.float64(1.5)])
    is float64 (a NumPy scalar keeps its dtype), while Python floats mean the default float32."""
    if isinstance(data, np.float64):
        return True
    if isinstance(data, (list, tuple)):
        return any(_holds_numpy_float64(x) for x in data)
    return False


def _default_dtype(array: np.ndarray, from_numpy: bool, data=None) -> str:
    kind = array.dtype.kind
    if kind == "b":
        return "bool"
    if kind in "iu":
        return "int64"
    if kind == "f":
        if from_numpy and array.dtype.itemsize in (2, 4, 8):
            return {2: "float16", 4: "float32", 8: "float64"}[array.dtype.itemsize]
        if not from_numpy and array.dtype.itemsize == 8 and _holds_numpy_float64(data):
            return "float64"
        return "float32" if not from_numpy else "float64"
    raise TypeError(
        f"cannot build a tensor from NumPy dtype {array.dtype}; supported: {', '.join(_SUPPORTED)}"
    )


def as_host_array(data, dtype: str | None):
    """Returns (C-contiguous native-endian ndarray, minitensor dtype name).

    For bfloat16 the array holds float32 values that C++ rounds (NumPy has no bfloat16).
    """
    from_numpy = isinstance(data, (np.ndarray, np.generic))
    array = _infer_numpy(data)
    name = dtype or _default_dtype(array, from_numpy, data)
    if name not in _SUPPORTED:
        raise TypeError(f"unsupported dtype {name!r}")
    target = "float32" if name == "bfloat16" else name
    if array.dtype.kind in "iu" and target == "int64" and array.dtype.itemsize == 8 and array.dtype.kind == "u":
        if array.size and array.max() > np.iinfo(np.int64).max:
            raise ValueError("cannot build a tensor: a uint64 value does not fit in int64")
    # astype(order="C") rather than ascontiguousarray, which would turn a 0-d array into 1-d.
    with np.errstate(over="ignore"):  # values beyond float16's range become inf, as in torch
        array = array.astype(np.dtype(target).newbyteorder("="), order="C", copy=False)
    return array, name
