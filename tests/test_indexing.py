"""ops/indexing (index_select, index_put_) and the in-place writes on every device and dtype,
against NumPy: the CUDA kernels are checked here (the differential tests against torch run on
the CPU)."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from conftest import DEVICES, to_numpy

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "bool"]


def _array(rng, shape, dtype):
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype == "int64":
        return rng.integers(-50, 50, size=shape)
    return rng.integers(-8, 8, size=shape).astype(np.float32)  # exact in every float dtype


def _tensor(array, dtype, device):
    return mt.tensor(array, dtype=getattr(mt, dtype), device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_index_select(rng, device, dtype, dim):
    x = _array(rng, (4, 5, 3), dtype)
    index = rng.integers(-x.shape[dim], x.shape[dim], size=7)
    out = mt.index_select(_tensor(x, dtype, device), dim, mt.tensor(index, device=device))
    np.testing.assert_array_equal(to_numpy(out), np.take(x, index, axis=dim))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(rng, device, dtype, accumulate):
    if accumulate and dtype == "bool":
        pytest.skip("bool has no sum")
    x = _array(rng, (3, 6, 2), dtype)
    index = np.array([5, 0, 5, 2, -1]) if accumulate else np.array([4, 0, 2])
    src = _array(rng, (3, len(index), 2), dtype)
    target = _tensor(x, dtype, device).transpose(0, 2)  # a strided view: written through
    mt._C._index_put_(target, 1, mt.tensor(index, device=device), _tensor(src, dtype, device).transpose(0, 2),
                      accumulate)
    expected = x.copy()
    if accumulate:
        np.add.at(expected, (slice(None), index, slice(None)), src)
    else:
        expected[:, index, :] = src
    np.testing.assert_array_equal(to_numpy(target.transpose(0, 2)), expected)


@pytest.mark.parametrize("device", DEVICES)
def test_index_errors(device):
    x = mt.zeros(3, 2, device=device)
    with pytest.raises(IndexError, match="out of bounds"):
        mt.index_select(x, 0, mt.tensor([0, 3], device=device))
    with pytest.raises(IndexError, match="int64"):
        mt.index_select(x, 0, mt.tensor([0.0], device=device))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_advanced_indexing_and_assignment_with_gradients(rng, device, dtype):
    x = _array(rng, (5, 4), dtype)
    t = _tensor(x, dtype, device).requires_grad_()
    rows = [4, 0, 4]
    picked = t[rows][:, [1, 3]]
    (picked * 2).sum().backward()
    np.testing.assert_array_equal(to_numpy(picked), x[rows][:, [1, 3]])
    expected_grad = np.zeros((5, 4))
    np.add.at(expected_grad, (np.array(rows)[:, None], np.array([1, 3])[None, :]), 2.0)
    np.testing.assert_array_equal(to_numpy(t.grad), expected_grad)

    out = mt.zeros(5, 4, dtype=getattr(mt, dtype), device=device)
    h = _tensor(x[0], dtype, device).requires_grad_()
    out[out.detach() == 0] = 1.0
    out[[1, 3]] = h
    out.sum().backward()
    expected = np.ones((5, 4))
    expected[[1, 3]] = x[0]
    np.testing.assert_array_equal(to_numpy(out), expected)
    np.testing.assert_array_equal(to_numpy(h.grad), np.full(4, 2.0))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64"])
def test_in_place_ops_through_strided_views(rng, device, dtype):
    x = _array(rng, (4, 6), dtype)
    t = _tensor(x, dtype, device)
    view = t.T[::2]  # (3, 4), strided
    view += 1
    view *= 2
    view.sub_(_tensor(np.ones(4, dtype=x.dtype), dtype, device), alpha=3)
    view.clamp_(-6, 6)
    expected = x.copy()
    region = expected.T[::2]
    region[...] = np.clip((region + 1) * 2 - 3, -6, 6)
    np.testing.assert_array_equal(to_numpy(t), expected)
    t[1:3].zero_()
    t.T[0].fill_(5)
    expected[1:3] = 0
    expected[:, 0] = 5
    np.testing.assert_array_equal(to_numpy(t), expected)
    assert t._version == 6
