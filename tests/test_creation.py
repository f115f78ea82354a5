"""Creation functions: zeros, ones, full, empty, arange, the *_like family, rand/randn with
manual_seed, tensor() and one_hot; NumPy (and torch's documented behaviour) is the reference."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from minitensor import _C
from conftest import DEVICES, FLOAT_DTYPES, to_f64, to_numpy

# ----------------------------------------------------------------------------- zeros, ones, full


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [pytest.param(mt.int64, id="int64"), pytest.param(mt.bool, id="bool")])
def test_creation_functions(dtype, device):
    z, o = mt.zeros(3, 4, dtype=dtype, device=device), mt.ones((2, 5), dtype=dtype, device=device)
    f = mt.full((2, 3), 7.0, dtype=dtype, device=device)
    assert z.dtype == o.dtype == f.dtype == dtype and z.device == o.device == f.device == mt.device(device)
    np.testing.assert_array_equal(to_f64(z), np.zeros((3, 4)))
    np.testing.assert_array_equal(to_f64(o), np.ones((2, 5)))
    np.testing.assert_array_equal(to_f64(f), np.full((2, 3), 1.0 if dtype == mt.bool else 7.0))
    e = mt.empty(2, 3, dtype=dtype, device=device)
    assert e.shape == (2, 3) and e.dtype == dtype and e.is_contiguous()


def test_default_dtype_is_float32():
    for t in (mt.zeros(2), mt.ones(2), mt.full((2,), 1.0), mt.randn(2), mt.rand(2), mt.empty(2)):
        assert t.dtype == mt.float32


@pytest.mark.parametrize("size", [(), (0,), (3,), (2, 0, 4), (1, 1, 1, 5)])
def test_sizes_as_varargs_or_one_tuple(size):
    for make in (mt.zeros, mt.ones, mt.empty, mt.randn, mt.rand):
        assert make(*size).shape == size
        assert make(size).shape == size


@pytest.mark.parametrize("value, dtype", [(True, mt.bool), (3, mt.int64), (2.5, mt.float32)])
def test_full_infers_its_dtype_from_the_fill_value(value, dtype):
    t = mt.full((2, 2), value)
    assert t.dtype == dtype
    np.testing.assert_array_equal(to_f64(t), np.full((2, 2), float(value)))


def test_factories_take_requires_grad():
    for t in (mt.zeros(2, requires_grad=True), mt.ones(2, requires_grad=True), mt.randn(2, requires_grad=True),
              mt.full((2,), 1.0, requires_grad=True), mt.tensor([1.0], requires_grad=True)):
        assert t.requires_grad and t.is_leaf
    assert not mt.zeros(2).requires_grad


# ---------------------------------------------------------------------------- arange and *_like


def test_arange_and_like_helpers_of_the_C_module(device):
    assert _C.arange(5).dtype == mt.int64
    np.testing.assert_array_equal(to_numpy(_C.arange(2, 11, 3, device=device)), [2, 5, 8])
    r = _C.arange(0.0, 1.0, 0.25, device=device)
    assert r.dtype == mt.float32
    np.testing.assert_allclose(to_numpy(r), [0, 0.25, 0.5, 0.75])
    x = mt.zeros(2, 3, dtype=mt.float64, device=device)
    for t, v in ((_C.zeros_like(x), 0), (_C.ones_like(x), 1), (_C.full_like(x, 2.5), 2.5)):
        assert t.dtype == mt.float64 and tuple(t.shape) == (2, 3)
        np.testing.assert_array_equal(to_numpy(t), np.full((2, 3), v))


@pytest.mark.parametrize("args, expected", [
    ((4,), [0, 1, 2, 3]),
    ((2, 5), [2, 3, 4]),
    ((5, 0, -2), [5, 3, 1]),
    ((3, 3), []),
    ((0.5, 2.0, 0.5), [0.5, 1.0, 1.5]),
])
def test_arange_matches_numpy(args, expected):
    np.testing.assert_allclose(to_f64(mt.arange(*args)), np.arange(*args))
    np.testing.assert_allclose(to_f64(mt.arange(*args)), expected)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [pytest.param(mt.int64, id="int64")])
def test_like_functions_keep_shape_dtype_and_device_unless_told(dtype):
    x = mt.ones(2, 3, dtype=dtype)
    for like, fill in ((mt.zeros_like, 0), (mt.ones_like, 1), (lambda t: mt.full_like(t, 4), 4)):
        t = like(x)
        assert t.shape == (2, 3) and t.dtype == dtype and t.device == x.device
        np.testing.assert_array_equal(to_f64(t), np.full((2, 3), fill))
    assert mt.empty_like(x).shape == (2, 3) and mt.empty_like(x).dtype == dtype
    assert mt.full_like(x, 1, dtype=mt.float64).dtype == mt.float64
    assert mt.zeros_like(x.T).shape == (3, 2)


# -------------------------------------------------------------------------- random and manual_seed


@pytest.mark.parametrize("fn", ["randn", "rand"])
def test_random_seeded_reproducibility(fn):
    make = getattr(mt, fn)
    mt.manual_seed(1234)
    a = make(1000).numpy()
    b = make(1000).numpy()
    mt.manual_seed(1234)
    a2 = make(1000).numpy()
    mt.manual_seed(4321)
    c = make(1000).numpy()
    np.testing.assert_array_equal(a, a2)
    assert not np.array_equal(a, b)
    assert not np.array_equal(a, c)
    assert len(np.unique(a)) > 990


def test_random_distributions():
    mt.manual_seed(7)
    u = mt.rand(100_000, dtype=mt.float64).numpy()
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.01 and abs(u.std() - np.sqrt(1 / 12)) < 0.01
    n = mt.randn(100_000, dtype=mt.float64).numpy()
    assert abs(n.mean()) < 0.02 and abs(n.std() - 1.0) < 0.02
    assert mt.randn(3, 4, dtype=mt.float16).dtype == mt.float16
    assert mt.rand(2, 2, dtype=mt.bfloat16).dtype == mt.bfloat16


def test_random_same_seed_same_numbers_in_every_dtype():
    mt.manual_seed(99)
    a = mt.randn(64, dtype=mt.float64).numpy()
    mt.manual_seed(99)
    b = mt.randn(64, dtype=mt.float32).numpy()
    np.testing.assert_array_equal(b, a.astype(np.float32))


# ---------------------------------------------------------------------------------------- one_hot


def test_one_hot_infers_the_class_count_and_rejects_out_of_range():
    oh = mt.one_hot(mt.tensor([0, 2, 1]))
    assert oh.dtype == mt.int64 and oh.shape == (3, 3)
    np.testing.assert_array_equal(to_numpy(oh), np.eye(3, dtype=np.int64)[[0, 2, 1]])
    assert mt.one_hot(mt.tensor([1]), 4).shape == (1, 4)
    with pytest.raises(RuntimeError):
        mt.one_hot(mt.tensor([3]), 2)
