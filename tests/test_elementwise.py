"""Elementwise ops: broadcasting, type promotion, non-contiguous inputs, scalars, errors."""

import numpy as np
import pytest

import minitensor as mt
from minitensor import _C

from conftest import CUDA_AVAILABLE, make_tensor, round_to, to_f64, to_numpy

DTYPES = [pytest.param(mt.float32, id="float32"), pytest.param(mt.float64, id="float64")]
RTOL = {"float32": 2e-6, "float64": 1e-13}


def rtol(dtype):
    return RTOL["float32" if dtype == mt.float32 else "float64"]


BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "maximum": np.maximum,
}
COMPARE = {"eq": np.equal, "ne": np.not_equal, "gt": np.greater, "ge": np.greater_equal,
           "lt": np.less, "le": np.less_equal}
UNARY = {
    "neg": np.negative, "exp": np.exp, "log": np.log, "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "tanh": np.tanh, "sqrt": np.sqrt, "abs": np.abs,
}
SHAPE_PAIRS = [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1, 5), (3, 1)), ((), (2, 2)), ((1,), (7,)),
               ((0, 3), (3,)), ((2, 1, 3, 1), (1, 4, 1, 5))]


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("shapes", SHAPE_PAIRS, ids=str)
def test_binary_broadcast(op, shapes, rng):
    _check_binary(op, shapes, mt.float32, "cpu", rng)
    _check_binary(op, shapes, mt.float64, "cpu", rng)


def _check_binary(op, shapes, dtype, device, rng):
    a = rng.standard_normal(shapes[0])
    b = rng.standard_normal(shapes[1]) + (3.0 if op == "div" else 0.0)
    ta, tb = make_tensor(a, dtype, device), make_tensor(b, dtype, device)
    out = getattr(_C, op)(ta, tb)
    assert out.dtype == dtype and tuple(out.shape) == np.broadcast_shapes(a.shape, b.shape)
    ref = BINARY[op](to_f64(ta), to_f64(tb))
    np.testing.assert_allclose(to_f64(out), ref, rtol=rtol(dtype), atol=1e-30)


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_devices(op, dtype, device, rng):
    _check_binary(op, ((3, 1, 33), (5, 33)), dtype, device, rng)


@pytest.mark.parametrize("op", sorted(COMPARE))
def test_comparisons(op, device, rng):
    a = rng.integers(-2, 3, (4, 5)).astype(np.float64)
    b = rng.integers(-2, 3, (5,)).astype(np.float64)
    out = getattr(_C, op)(make_tensor(a, mt.float32, device), make_tensor(b, mt.float64, device))
    assert out.dtype == mt.bool
    np.testing.assert_array_equal(to_numpy(out), COMPARE[op](a, b))
    out = getattr(_C, op)(make_tensor(a, mt.int64, device), 1)
    np.testing.assert_array_equal(to_numpy(out), COMPARE[op](a, 1))


@pytest.mark.parametrize("op", sorted(UNARY))
@pytest.mark.parametrize("dtype", DTYPES)
def test_unary(op, dtype, device, rng):
    x = rng.standard_normal((3, 17))
    if op in ("log", "sqrt"):
        x = np.abs(x) + 0.1
    t = make_tensor(x, dtype, device)
    out = getattr(_C, op)(t)
    assert out.dtype == dtype
    np.testing.assert_allclose(to_f64(out), UNARY[op](to_f64(t)), rtol=4 * rtol(dtype), atol=1e-7)


# 16-bit tensors are widened to float32 inside the kernels' loads and rounded once in their stores;
# the reference is float64 math on the same (rounded) inputs, rounded to the dtype: one unit in the
# last place apart at most (float32 math can round differently from float64 before the final
# rounding).
HALF_DTYPES = [pytest.param(mt.float16, id="float16"), pytest.param(mt.bfloat16, id="bfloat16")]
ULP = {"float16": 2.0**-10, "bfloat16": 2.0**-7}


def ulp(dtype):
    return ULP["float16" if dtype == mt.float16 else "bfloat16"]


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_binary_16bit(op, dtype, device, rng):
    a = rng.standard_normal((3, 1, 33)) * 4
    b = rng.standard_normal((33, 5)).T + (3.0 if op == "div" else 0.0)  # a transposed view
    ta, tb = make_tensor(a, dtype, device), make_tensor(b.T, dtype, device).T
    out = getattr(_C, op)(ta, tb)
    assert out.dtype == dtype and tuple(out.shape) == (3, 5, 33)
    expected = round_to(BINARY[op](to_f64(ta), to_f64(tb)), dtype)
    np.testing.assert_allclose(to_f64(out), expected, rtol=ulp(dtype), atol=1e-30)


@pytest.mark.parametrize("op", sorted(UNARY))
@pytest.mark.parametrize("dtype", HALF_DTYPES)
def test_unary_16bit(op, dtype, device, rng):
    x = rng.standard_normal((5, 40))
    if op in ("log", "sqrt"):
        x = np.abs(x) + 0.1
    t = make_tensor(x, dtype, device)[:, ::3]  # strided loads
    out = getattr(_C, op)(t)
    assert out.dtype == dtype
    expected = round_to(UNARY[op](to_f64(t)), dtype)
    np.testing.assert_allclose(to_f64(out), expected, rtol=ulp(dtype), atol=1e-7)


@pytest.mark.parametrize("a_dtype, b_dtype, result", [
    (mt.float16, mt.float32, mt.float32), (mt.bfloat16, mt.float64, mt.float64),
    (mt.float16, mt.bfloat16, mt.float32), (mt.int64, mt.float16, mt.float16),
    (mt.bool, mt.bfloat16, mt.bfloat16), (mt.int64, mt.int64, mt.int64), (mt.bool, mt.int64, mt.int64),
])
def test_mixed_dtypes_convert_in_the_kernel(a_dtype, b_dtype, result, device, rng):
    a, b = rng.integers(-40, 40, (4, 6)), rng.standard_normal((6,)) * 8
    ta = make_tensor(a > 0 if a_dtype == mt.bool else a, a_dtype, device)
    tb = make_tensor(np.round(b) if b_dtype == mt.int64 else b, b_dtype, device)
    for op in ("add", "mul", "maximum"):
        out = getattr(_C, op)(ta, tb)
        assert out.dtype == result, op
        expected = round_to(BINARY[op](to_f64(ta), to_f64(tb)), result)
        np.testing.assert_allclose(to_f64(out), expected, rtol=2.0**-7 if result == mt.bfloat16 else 2.0**-10,
                                   err_msg=op)
    lt = _C.lt(ta, tb)
    assert lt.dtype == mt.bool
    np.testing.assert_array_equal(to_numpy(lt), to_f64(ta) < to_f64(tb))


def test_unary_int_promotion():
    t = mt.tensor([1, 4, 9])
    assert _C.sqrt(t).dtype == mt.float32
    np.testing.assert_allclose(to_numpy(_C.sqrt(t)), [1, 2, 3])
    assert _C.exp(t).dtype == mt.float32
    for op in ("neg", "abs", "relu"):
        assert getattr(_C, op)(t).dtype == mt.int64
    np.testing.assert_array_equal(to_numpy(_C.relu(mt.tensor([-3, 2]))), [0, 2])


def test_relu_keeps_nan():
    out = to_numpy(_C.relu(mt.tensor([float("nan"), -1.0, 2.0])))
    assert np.isnan(out[0]) and out[1] == 0 and out[2] == 2


def test_non_contiguous_inputs(device, rng):
    a = rng.standard_normal((6, 8))
    b = rng.standard_normal((8, 6))
    ta = make_tensor(a, mt.float64, device)[:, ::2]  # strided columns
    tb = make_tensor(b, mt.float64, device).transpose(0, 1)[:, ::2]
    assert not ta.is_contiguous() and not tb.is_contiguous()
    np.testing.assert_allclose(to_f64(_C.mul(ta, tb)), a[:, ::2] * b.T[:, ::2])
    np.testing.assert_allclose(to_f64(_C.exp(tb)), np.exp(b.T[:, ::2]))


def test_scalars_and_promotion():
    f, i, bo = mt.tensor([1.5, 2.0]), mt.tensor([1, 2]), mt.tensor([True, False])
    assert _C.add(i, 2).dtype == mt.int64
    assert _C.add(i, 2.5).dtype == mt.float32
    assert _C.add(bo, 1).dtype == mt.int64
    assert _C.add(bo, bo).dtype == mt.bool
    assert _C.div(i, 2).dtype == mt.float32
    assert _C.add(f, i).dtype == mt.float32
    assert _C.add(f.double(), f).dtype == mt.float64
    assert _C.add(f.double(), 1.0).dtype == mt.float64
    assert _C.mul(f.half(), f.bfloat16()).dtype == mt.float32
    assert _C.mul(f.half(), 2.0).dtype == mt.float16
    np.testing.assert_allclose(to_numpy(_C.sub(1.0, f)), [-0.5, -1.0])
    np.testing.assert_allclose(to_numpy(_C.div(3, f)), [2.0, 1.5])
    np.testing.assert_array_equal(to_numpy(_C.div(i, 2)), [0.5, 1.0])
    np.testing.assert_allclose(to_numpy(_C.pow(f, 2.0)), [2.25, 4.0])
    np.testing.assert_array_equal(to_numpy(_C.pow(i, 3)), [1, 8])
    assert _C.pow(i, 0.5).dtype == mt.float32
    np.testing.assert_allclose(to_numpy(_C.maximum(f, 1.8)), [1.8, 2.0])


@pytest.mark.parametrize("alpha", [2, -0.5])
def test_add_sub_a_number_times_alpha(alpha, rng):
    """torch.add(t, 1.5, alpha=2) is t + 3.0; a number times alpha once raised TypeError."""
    x, other = rng.standard_normal((2, 3)), float(rng.standard_normal())
    t = mt.tensor(x, dtype=mt.float64)
    np.testing.assert_allclose(mt.add(t, other, alpha=alpha).numpy(), x + alpha * other, rtol=1e-15)
    np.testing.assert_allclose(mt.sub(t, other, alpha=alpha).numpy(), x - alpha * other, rtol=1e-15)
    np.testing.assert_allclose(t.add_(other, alpha=alpha).sub_(3, alpha=alpha).numpy(),
                               x + alpha * other - alpha * 3, rtol=1e-15)
    i = mt.tensor([1, 2])
    assert mt.add(i, 3, alpha=2).dtype == mt.int64 and mt.add(i, 3, alpha=2).tolist() == [7, 8]


def test_maximum_propagates_nan():
    out = to_numpy(_C.maximum(mt.tensor([float("nan"), 1.0]), mt.tensor([0.0, float("nan")])))
    assert np.isnan(out).all()


def test_where(device, rng):
    c = rng.standard_normal((3, 1)) > 0
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((4,))
    tc = mt.tensor(c, device=device)
    out = _C.where(tc, make_tensor(a, mt.float32, device), make_tensor(b, mt.float64, device))
    assert out.dtype == mt.float64
    np.testing.assert_allclose(to_f64(out), np.where(c, a.astype(np.float32), b))
    out = _C.where(tc, make_tensor(a, mt.float64, device), 0.0)
    np.testing.assert_allclose(to_f64(out), np.where(c, a, 0.0))
    out = _C.where(tc, 1, mt.tensor([5, 6, 7, 8], device=device))
    assert out.dtype == mt.int64
    np.testing.assert_array_equal(to_numpy(out), np.where(c, 1, [5, 6, 7, 8]))
    out = _C.where(tc, mt.ones(3, 4, dtype=mt.float16, device=device), -2.5)
    np.testing.assert_allclose(to_f64(out), np.where(c, 1.0, -2.5) * np.ones((3, 4)))
    with pytest.raises(TypeError, match="bool"):
        _C.where(mt.tensor([1.0]), 1.0, 2.0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_backward_helpers(dtype, device, rng):
    g = rng.standard_normal((5, 7))
    x = rng.standard_normal((5, 7))
    y = 1 / (1 + np.exp(-x))
    tg, tx, ty = (make_tensor(v, dtype, device) for v in (g, x, y))
    g64, x64, y64 = to_f64(tg), to_f64(tx), to_f64(ty)
    np.testing.assert_allclose(to_f64(_C.relu_backward(tg, tx)), g64 * (x64 > 0), rtol=rtol(dtype))
    np.testing.assert_allclose(to_f64(_C.sigmoid_backward(tg, ty)), g64 * y64 * (1 - y64), rtol=4 * rtol(dtype), atol=1e-7)
    np.testing.assert_allclose(to_f64(_C.tanh_backward(tg, ty)), g64 * (1 - y64 * y64), rtol=4 * rtol(dtype), atol=1e-7)


def test_copy_and_expand(device, rng):
    dst = mt.zeros(4, 6, dtype=mt.float64, device=device)
    src = rng.standard_normal((6, 2))
    view = dst.transpose(0, 1)[:, 1:3]  # non-contiguous destination
    assert view.copy_(make_tensor(src, mt.float32, device)) is view
    expected = np.zeros((4, 6))
    expected.T[:, 1:3] = src.astype(np.float32)
    np.testing.assert_allclose(to_f64(dst), expected)
    dst.copy_(mt.tensor([1, 2, 3, 4, 5, 6]))  # broadcast + int64 -> float64
    np.testing.assert_array_equal(to_f64(dst), np.tile(np.arange(1, 7), (4, 1)))
    e = mt.tensor([[1.0], [2.0]], device=device).expand(2, -1, 3)
    assert tuple(e.shape) == (2, 2, 3) and e.stride() == (0, 1, 0)
    np.testing.assert_array_equal(to_f64(e), np.broadcast_to([[1.0], [2.0]], (2, 2, 3)))
    with pytest.raises(mt.ShapeError, match=r"size of tensor a \(6\) must match the size of tensor b \(3\)"):
        dst.copy_(mt.zeros(3))


def test_copy_across_devices_and_cat(device):
    x = mt.zeros(2, 3, device=device)
    x.copy_(mt.tensor([[1, 2, 3], [4, 5, 6]]))
    np.testing.assert_array_equal(to_f64(x), [[1, 2, 3], [4, 5, 6]])
    c = _C.cat([x, mt.ones(2, 1, device=device)], 1)
    np.testing.assert_array_equal(to_f64(c), [[1, 2, 3, 1], [4, 5, 6, 1]])
    oh = _C.one_hot(mt.tensor([2, 0], device=device), 3)
    assert oh.dtype == mt.int64
    np.testing.assert_array_equal(to_numpy(oh), [[0, 0, 1], [1, 0, 0]])


def test_shape_mismatch_names_both_shapes():
    with pytest.raises(mt.ShapeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(4\) at "
                                            "non-singleton dimension 1"):
        _C.add(mt.zeros(2, 3), mt.zeros(4))


def test_needs_a_tensor():
    with pytest.raises(TypeError):
        _C.add(1.0, 2.0)


@pytest.mark.cuda
@pytest.mark.skipif(not CUDA_AVAILABLE, reason="needs CUDA")
def test_mixing_devices_names_both():
    with pytest.raises(ValueError, match="cuda:0 and cpu"):
        _C.add(mt.zeros(2, device="cuda"), mt.zeros(2))
    with pytest.raises(ValueError, match="cpu and cuda:0"):
        _C.where(mt.tensor([True]), mt.zeros(1), mt.zeros(1, device="cuda"))


@pytest.mark.cuda
@pytest.mark.skipif(not CUDA_AVAILABLE, reason="needs CUDA")
@pytest.mark.parametrize("op", sorted(BINARY) + sorted(UNARY))
def test_cuda_matches_cpu(op, rng):
    a = np.abs(rng.standard_normal((37, 1, 129))) + 0.5
    b = np.abs(rng.standard_normal((5, 129))) + 0.5
    for dtype in (mt.float32, mt.float64):
        fn = getattr(_C, op)
        args = (a,) if op in UNARY else (a, b)
        cpu = fn(*(make_tensor(x, dtype) for x in args))
        gpu = fn(*(make_tensor(x, dtype, "cuda") for x in args))
        np.testing.assert_allclose(to_f64(gpu), to_f64(cpu), rtol=4 * rtol(dtype))
