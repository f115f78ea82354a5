"""Issue 13: Python arguments are taken as torch takes them (NumPy integer scalars and __index__
objects as sizes and dims) and refused as torch refuses them, with a clear TypeError or
OverflowError, never pybind11's "Unable to cast" or a silent truncation."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import minitensor as mt


class Index:
    """Not an int, but usable as one (operator.index)."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value


@pytest.mark.parametrize("n", [np.int64(3), np.int32(3), np.uint8(3), Index(3)])
def test_integer_likes_as_sizes_and_dims(n):
    assert mt.zeros(n, 2).shape == (3, 2)
    assert mt.zeros((n, 2)).shape == (3, 2)
    assert mt.ones(6).reshape(n, -1).shape == (3, 2)
    assert mt.ones(2, 3).expand(n, 2, 3).shape == (3, 2, 3)
    x = mt.ones(2, 3, 4)
    d = type(n)(1) if not isinstance(n, Index) else Index(1)
    assert x.sum(d).shape == (2, 4)
    assert x.softmax(d).shape == (2, 3, 4)
    assert x.transpose(d, 2).shape == (2, 4, 3)
    assert x.unsqueeze(d).shape == (2, 1, 3, 4)
    assert x[n - 2 if not isinstance(n, Index) else 1].shape == (3, 4)
    assert x[:, : Index(2)].shape == (2, 2, 4)


@pytest.mark.parametrize("bad", [2.0, "2", None])
def test_non_integer_sizes_raise_type_error(bad):
    with pytest.raises(TypeError):
        mt.zeros(bad, 2)


@pytest.mark.parametrize("key", [np.s_[1.0:2], np.s_[:2.5], np.s_[::1.0]])
def test_float_slice_bounds_raise_type_error(key):
    with pytest.raises(TypeError, match="slice indices must be integers or None or have an __index__ method"):
        mt.ones(4)[key]


def test_huge_slice_bounds_clamp_like_python():
    assert mt.arange(4)[-(2**70) : 2**70].tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("dtype", [mt.float32, mt.int64])
def test_python_int_beyond_int64_is_an_overflow_error(dtype):
    t = mt.ones(2, dtype=dtype)
    for op in (lambda: t + 2**70, lambda: 2**70 * t, lambda: t == -(2**70), lambda: t.add_(2**64)):
        with pytest.raises(OverflowError, match="int too big to convert"):
            op()


def test_int64_scalar_arithmetic_is_exact():
    assert (mt.ones(1, dtype=mt.int64) + 2**62).tolist() == [2**62 + 1]
    assert (mt.ones(1, dtype=mt.int64) + np.int64(2**62)).tolist() == [2**62 + 1]


def test_numpy_scalars_give_minitensor_tensors():
    t = mt.ones(2)
    for result in (t == np.float32(1), t != np.float64(1), t < np.int64(2), t + np.float32(1),
                   t * np.int64(2), t == np.bool_(True)):
        assert isinstance(result, mt.Tensor), type(result)
    assert (t == np.float32(1)).tolist() == [True, True]
    assert (t + np.int64(2)).dtype == mt.float32


def test_iterating_a_0d_tensor_is_a_type_error():
    with pytest.raises(TypeError, match="^iteration over a 0-d tensor$"):
        iter(mt.tensor(1.0))
    with pytest.raises(TypeError, match="^iteration over a 0-d tensor$"):
        list(mt.tensor(1.0))
    assert [x.item() for x in mt.tensor([1.0, 2.0])] == [1.0, 2.0]
    assert [tuple(r.shape) for r in mt.zeros(2, 3)] == [(3,), (3,)]


def test_linear_with_no_inputs_works_as_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer = mt.nn.Linear(0, 3)
    assert layer.weight.shape == (3, 0)
    assert layer(mt.zeros(5, 0)).shape == (5, 3)
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        mt.nn.init.kaiming_uniform_(mt.empty(3, 0))


# ------------------------------------------------- a Tensor made by __new__ alone must be usable

UNINIT = """
import minitensor as mt
t = mt.Tensor.__new__(mt.Tensor)
assert repr(t) == "tensor([])", repr(t)
assert t.shape == (0,) and t.dtype == mt.float32 and t.numel() == 0
assert (t + 1).shape == (0,) and t.sum().item() == 0.0 and t.numpy().shape == (0,)
p = mt.nn.Parameter.__new__(mt.nn.Parameter)
assert p.shape == (0,)
print("ok")
"""


def test_tensor_new_without_init_does_not_crash():
    # In a subprocess: before the fix this died by SIGSEGV.
    result = subprocess.run([sys.executable, "-c", UNINIT], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_constructor_still_builds_the_requested_data():
    assert mt.Tensor([1, 2]).tolist() == [1, 2]
    assert mt.Tensor([1.0], dtype=mt.float64).dtype == mt.float64
    p = mt.nn.Parameter(mt.ones(2), requires_grad=False)
    assert p.tolist() == [1.0, 1.0] and not p.requires_grad
