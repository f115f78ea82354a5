"""matmul against NumPy float64: every rank combination torch supports up to 3-D, strided views."""

import numpy as np
import pytest

import minitensor as mt
from minitensor import _C

from conftest import CUDA_AVAILABLE, make_tensor, to_f64

DTYPES = [pytest.param(mt.float32, id="float32"), pytest.param(mt.float64, id="float64")]
SHAPES = [
    ((5,), (5,)), ((3, 4), (4,)), ((4,), (4, 6)), ((7, 5), (5, 3)), ((1, 1), (1, 1)), ((2, 3, 4), (2, 4, 5)),
    ((1, 3, 4), (6, 4, 2)), ((6, 3, 4), (1, 4, 2)), ((3, 4), (6, 4, 2)), ((6, 3, 4), (4, 2)), ((4,), (3, 4, 2)),
    ((3, 2, 4), (4,)), ((2, 1, 3, 4), (5, 4, 2)), ((130, 67), (67, 129)), ((0, 3), (3, 4)), ((3, 0), (0, 4)),
]


def check(a, b, ta, tb, dtype):
    out = _C.matmul(ta, tb)
    ref = np.matmul(a, b)
    assert out.dtype == dtype and tuple(out.shape) == ref.shape
    k = a.shape[-1]
    rtol = 1e-5 if dtype == mt.float32 else 1e-12
    np.testing.assert_allclose(to_f64(out), ref, rtol=rtol, atol=rtol * np.sqrt(max(k, 1)) * 4)


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul(shapes, dtype, device, rng):
    a = rng.standard_normal(shapes[0])
    b = rng.standard_normal(shapes[1])
    ta, tb = make_tensor(a, dtype, device), make_tensor(b, dtype, device)
    check(to_f64(ta), to_f64(tb), ta, tb, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_transposed_and_strided(dtype, device, rng):
    a = rng.standard_normal((40, 70))
    b = rng.standard_normal((90, 40))
    ta = make_tensor(a, dtype, device).transpose(0, 1)  # [70, 40], column-major
    tb = make_tensor(b, dtype, device).transpose(0, 1)[:, ::3]  # [40, 30], strided
    check(to_f64(ta), to_f64(tb), ta, tb, dtype)
    tw = make_tensor(rng.standard_normal((2, 5, 40)), dtype, device).transpose(1, 2)  # batched, transposed
    check(to_f64(tb.transpose(0, 1)), to_f64(tw), tb.transpose(0, 1), tw, dtype)


def test_float16_computes_in_float32(device, rng):
    a, b = rng.standard_normal((8, 16)), rng.standard_normal((16, 4))
    out = _C.matmul(make_tensor(a, mt.float16, device), make_tensor(b, mt.float16, device))
    assert out.dtype == mt.float16
    np.testing.assert_allclose(to_f64(out), a.astype(np.float16).astype(np.float64) @ b.astype(np.float16), rtol=2e-2,
                               atol=2e-2)


def test_errors():
    with pytest.raises(ValueError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        _C.matmul(mt.zeros(2, 3), mt.zeros(4, 5))
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        _C.matmul(mt.zeros(2, 3, 4), mt.zeros(3, 4, 5))
    with pytest.raises(TypeError, match="same dtype"):
        _C.matmul(mt.zeros(2, 3), mt.zeros(3, 2, dtype=mt.float64))
    with pytest.raises(TypeError, match="int64"):
        _C.matmul(mt.tensor([[1, 2]]), mt.tensor([[1], [2]]))
    with pytest.raises(ValueError, match="1D"):
        _C.matmul(mt.tensor(1.0), mt.zeros(1))


@pytest.mark.cuda
@pytest.mark.skipif(not CUDA_AVAILABLE, reason="needs CUDA")
def test_mixing_devices():
    with pytest.raises(ValueError, match="cuda:0 and cpu"):
        _C.matmul(mt.zeros(2, 2, device="cuda"), mt.zeros(2, 2))


@pytest.mark.cuda
@pytest.mark.skipif(not CUDA_AVAILABLE, reason="needs CUDA")
@pytest.mark.parametrize("mnk", [(512, 384, 640), (1000, 1001, 999), (3, 2049, 1)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_large(mnk, dtype, rng):
    m, n, k = mnk
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    ta, tb = make_tensor(a, dtype, "cuda"), make_tensor(b, dtype, "cuda")
    check(to_f64(ta), to_f64(tb), ta, tb, dtype)
