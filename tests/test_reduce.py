"""Reductions: sum / mean / amax / max / argmax / sum_to_shape against NumPy float64."""

import numpy as np
import pytest

import minitensor as mt
from minitensor import _C

from conftest import CUDA_AVAILABLE, make_tensor, round_to, to_f64, to_numpy

DTYPES = [pytest.param(mt.float32, id="float32"), pytest.param(mt.float64, id="float64")]
CASES = [  # (shape, dims)
    ((7,), None), ((3, 5), [1]), ((3, 5), [0]), ((3, 5), [-1, 0]), ((2, 3, 4), [1]),
    ((2, 3, 4), [0, 2]), ((4, 1, 6), [0, 1]), ((2, 3, 4, 5), [1, 2]), ((2, 3, 4, 5), [3, 1]),
    ((), None), ((), [0]), ((5, 3000), [1]), ((3000, 7), [0]), ((2, 70000), None), ((2, 70000), [1]),
]


def rtol(dtype, n=1):
    return (1e-5 if dtype == mt.float32 else 1e-12) * max(1.0, np.sqrt(n) / 10)


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_mean_amax(case, keepdim, dtype, device, rng):
    shape, dims = case
    t = make_tensor(rng.standard_normal(shape), dtype, device)
    x = to_f64(t)
    axis = None if dims is None else tuple(dims)
    if x.ndim == 0:
        axis = None
    n = x.size if axis is None else int(np.prod([x.shape[d] for d in axis]))
    for name, ref in (("sum", np.sum), ("mean", np.mean), ("amax", np.max)):
        out = getattr(_C, name)(t, dims, keepdim)
        expected = ref(x, axis=axis, keepdims=keepdim and x.ndim > 0)
        assert out.dtype == dtype
        assert tuple(out.shape) == np.shape(expected), name
        np.testing.assert_allclose(to_f64(out), expected, rtol=rtol(dtype, n), atol=1e-5 * np.sqrt(n), err_msg=name)


# 16-bit inputs are widened as the kernels load them and accumulate in float (double on the CPU);
# the result is rounded once to the dtype: within one unit in the last place of the float64 sum
# of the same inputs, rounded the same way.
HALF_DTYPES = [pytest.param(mt.float16, id="float16"), pytest.param(mt.bfloat16, id="bfloat16")]


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_sum_mean_amax_16bit(case, dtype, device, rng):
    shape, dims = case
    t = make_tensor(rng.standard_normal(shape), dtype, device)
    x = to_f64(t)
    axis = None if dims is None or x.ndim == 0 else tuple(dims)
    n = x.size if axis is None else int(np.prod([x.shape[d] for d in axis]))
    ulp = 2.0**-10 if dtype == mt.float16 else 2.0**-7
    for name, ref in (("sum", np.sum), ("mean", np.mean), ("amax", np.max)):
        out = getattr(_C, name)(t, dims, False)
        assert out.dtype == dtype, name
        expected = round_to(ref(x, axis=axis), dtype)
        np.testing.assert_allclose(to_f64(out), expected, rtol=ulp, atol=1e-6 * np.sqrt(n), err_msg=name)


@pytest.mark.parametrize("dtype", HALF_DTYPES)
@pytest.mark.parametrize("shape,dim", [((4, 9), 1), ((4, 9), 0), ((2, 100000), 1)])
def test_max_argmax_16bit(shape, dim, dtype, device, rng):
    t = make_tensor(rng.standard_normal(shape), dtype, device)
    x = to_f64(t)
    values, indices = _C.max(t, dim, False)
    assert values.dtype == dtype
    np.testing.assert_array_equal(to_f64(values), np.max(x, axis=dim))
    np.testing.assert_array_equal(to_numpy(indices), np.argmax(x, axis=dim))


@pytest.mark.parametrize("shape,dim", [((4, 9), 1), ((4, 9), 0), ((2, 3, 5), 1), ((3, 5000), -1), ((1, 100000), 1)])
@pytest.mark.parametrize("dtype", DTYPES)
def test_max_argmax(shape, dim, dtype, device, rng):
    t = make_tensor(rng.standard_normal(shape), dtype, device)
    x = to_f64(t)
    values, indices = _C.max(t, dim, False)
    assert indices.dtype == mt.int64
    np.testing.assert_array_equal(to_f64(values), np.max(x, axis=dim))
    np.testing.assert_array_equal(to_numpy(indices), np.argmax(x, axis=dim))
    np.testing.assert_array_equal(to_numpy(_C.argmax(t, dim, True)), np.argmax(x, axis=dim)[..., None].reshape(
        tuple(1 if d == dim % len(shape) else s for d, s in enumerate(shape))))
    assert to_numpy(_C.argmax(t)) == np.argmax(x)


def test_max_ties_and_nan(device):
    t = mt.tensor([[1.0, 3.0, 3.0, 0.0], [float("nan"), 5.0, float("nan"), 1.0]], device=device)
    v, i = _C.max(t, 1, False)
    assert to_numpy(i).tolist() == [1, 0]
    assert np.isnan(to_numpy(v)[1])
    assert to_numpy(_C.argmax(mt.tensor([2, 7, 7, 1], device=device))) == 1


@pytest.mark.parametrize("shape,dim", [((3, 5000), 1), ((2, 100_000), 1), ((3000, 7), 0), ((5, 600, 40), 1)],
                         ids=["block-per-row", "split-rows", "columns", "columns-3d"])
def test_max_ties_and_nan_across_threads(shape, dim, device, rng):
    """The first of equal maxima and the first NaN win however the partials meet (warps, blocks,
    split chunks, column rows): a max repeated far apart, and NaNs far apart in another slice."""
    x = rng.standard_normal(shape)
    n = shape[dim]
    slices = np.moveaxis(x, dim, -1).reshape(-1, n)  # one row per reduced slice; x is rebuilt below
    for row in slices:
        row[rng.choice(n, size=3, replace=False)] = 10.0 + rng.integers(3)  # three tied maxima
    slices[-1, rng.choice(n, size=2, replace=False)] = np.nan
    x = np.moveaxis(slices.reshape(np.moveaxis(x, dim, -1).shape), -1, dim)
    t = make_tensor(x, mt.float64, device)
    values, indices = _C.max(t, dim, False)
    np.testing.assert_array_equal(to_numpy(indices), np.argmax(x, axis=dim))
    np.testing.assert_array_equal(to_f64(values), np.max(x, axis=dim))  # NaN where the slice has one


def test_int_and_bool(device):
    i = mt.tensor([[1, 2, 3], [4, 5, 6]], device=device)
    s = _C.sum(i, None, False)
    assert s.dtype == mt.int64 and to_numpy(s) == 21
    b = mt.tensor([True, False, True], device=device)
    assert _C.sum(b, None, False).dtype == mt.int64 and to_numpy(_C.sum(b, None, False)) == 2
    assert to_numpy(_C.amax(i, [0], False)).tolist() == [4, 5, 6]
    with pytest.raises(TypeError, match="mean"):
        _C.mean(i, None, False)


def test_half_sums_in_float(device):
    t = mt.ones(4096, dtype=mt.float16, device=device)
    out = _C.sum(t, None, False)
    assert out.dtype == mt.float16 and to_f64(out) == 4096


def test_non_contiguous(device, rng):
    x = rng.standard_normal((6, 8, 5))
    t = make_tensor(x, mt.float64, device).permute(2, 0, 1)[:, ::2]
    ref = x.transpose(2, 0, 1)[:, ::2]
    np.testing.assert_allclose(to_f64(_C.sum(t, [1], False)), ref.sum(axis=1))
    np.testing.assert_allclose(to_f64(_C.mean(t, [0, 2], True)), ref.mean(axis=(0, 2), keepdims=True))
    np.testing.assert_array_equal(to_numpy(_C.argmax(t, 2, False)), ref.argmax(axis=2))


def test_empty(device):
    t = mt.zeros(0, 3, device=device)
    np.testing.assert_array_equal(to_numpy(_C.sum(t, [0], False)), [0, 0, 0])
    assert np.isnan(to_numpy(_C.mean(t, [0], False))).all()
    assert tuple(_C.sum(t, [1], False).shape) == (0,)
    with pytest.raises(IndexError, match="non-zero size"):
        _C.amax(t, [0], False)


@pytest.mark.parametrize("shape,target", [((4, 3), (3,)), ((4, 3), (1, 3)), ((4, 3), (4, 1)), ((2, 4, 3), (4, 3)),
                                          ((2, 4, 3), ()), ((5,), (5,))])
def test_sum_to_shape(shape, target, device, rng):
    x = rng.standard_normal(shape)
    out = _C.sum_to_shape(make_tensor(x, mt.float64, device), target)
    assert tuple(out.shape) == target
    lead = x.ndim - len(target)
    ref = x.sum(axis=tuple(range(lead))) if lead else x
    ref = ref.sum(axis=tuple(d for d, s in enumerate(target) if s == 1 and ref.shape[d] != 1), keepdims=True)
    np.testing.assert_allclose(to_f64(out), ref.reshape(target))
    with pytest.raises(ValueError):
        _C.sum_to_shape(make_tensor(x, mt.float64, device), (7,))


def test_bad_dims():
    t = mt.zeros(2, 3)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        _C.sum(t, [2], False)
    with pytest.raises(IndexError, match="Dimension out of range"):
        _C.max(t, -3, False)
    with pytest.raises(IndexError, match="Dimension out of range"):
        _C.argmax(t, 5, False)
    with pytest.raises(ValueError, match="multiple times"):
        _C.sum(t, [1, -1], False)


@pytest.mark.cuda
@pytest.mark.skipif(not CUDA_AVAILABLE, reason="needs CUDA")
@pytest.mark.parametrize("shape,dims", [((1, 3_000_000), [1]), ((3_000_000,), None), ((64, 513, 33), [1]),
                                        ((1000, 1000), [0, 1])])
def test_cuda_large_matches_cpu(shape, dims, rng):
    x = rng.standard_normal(shape).astype(np.float32)
    cpu, gpu = mt.tensor(x), mt.tensor(x, device="cuda")
    for name in ("sum", "amax"):
        np.testing.assert_allclose(to_f64(getattr(_C, name)(gpu, dims, False)),
                                   to_f64(getattr(_C, name)(cpu, dims, False)), rtol=1e-4, atol=1e-2)
    if dims is not None and len(dims) == 1:
        np.testing.assert_array_equal(to_numpy(_C.argmax(gpu, dims[0], False)), to_numpy(_C.argmax(cpu, dims[0], False)))
