"""Dtype rules against torch: type promotion with 0-d tensors and Python scalars (torch's category
rules), integer powers, pow's exactness for negative bases and zero, full's dtype from its fill
value, and mt.tensor's dtype inference (torch.tensor's, not the legacy torch.Tensor's)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import minitensor as mt
from differential import Input, check, random

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "bool"]
OPERATORS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
             "max": lambda a, b: a.maximum(b) if hasattr(a, "maximum") else b.maximum(a), "==": lambda a, b: a == b,
             "<": lambda a, b: a < b}


def _values(rng, dtype, shape):
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype == "int64":
        return rng.integers(1, 5, size=shape)
    return rng.uniform(0.5, 3.0, size=shape)


@pytest.mark.parametrize("left,right", list(itertools.product(DTYPES, DTYPES)))
@pytest.mark.parametrize("right_rank", [0, 1])
def test_promotion_of_tensor_pairs_with_zero_dim(rng, left, right, right_rank):
    if left == "bool" and right == "bool":
        pytest.skip("bool - bool is an error in torch; covered below")

    def program(lib, a, b):
        return a * b, a + b, a == b

    shape = (3,) if right_rank else ()
    check(program, Input(_values(rng, left, (3,)), left), Input(_values(rng, right, shape), right))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scalar", [2, 2.5, True, -3])
@pytest.mark.parametrize("op", ["+", "*", "/", "==", "<"])
@pytest.mark.parametrize("zero_dim", [False, True])
def test_promotion_with_python_scalars(rng, dtype, scalar, op, zero_dim):
    fn = OPERATORS[op]

    def program(lib, a):
        return fn(a, scalar), fn(scalar, a) if op not in ("==", "<") else fn(a, scalar)

    check(program, Input(_values(rng, dtype, () if zero_dim else (4,)), dtype))


def test_float16_tensor_times_zero_dim_float32_stays_float16(rng):
    out = check(lambda lib, a, b: a * b, Input(random(rng, 4), "float16"), Input(np.array(1.5), "float32"))
    assert out.dtype == mt.float16


def test_int_tensor_times_python_float_is_the_default_float(rng):
    out = check(lambda lib, a: a * 1.5, np.arange(4))
    assert out.dtype == mt.float32


def test_bool_minus_bool_raises_as_torch():
    check(lambda lib, a: a - a, np.array([True, False]))


@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 5])
def test_integer_power_stays_int64(exponent):
    out = check(lambda lib, a: (a ** exponent, a.pow(exponent), lib.pow(a, exponent)), np.array([-3, -1, 0, 2, 7]))
    assert out[0].dtype == mt.int64


def test_negative_integer_exponent_raises_as_torch():
    error = check(lambda lib, a: a ** -1, np.array([1, 2]))
    assert str(error) == "Integers to negative integer powers are not allowed."


def test_integer_tensor_exponents_follow_torch_even_negative(rng):
    check(lambda lib, a, b: (a ** b, 2 ** b, a.pow(b)), np.array([2, -3, 0, 1, -1, 5]), np.array([1, -1, 2, -2, -3, 0]))


def test_pow_is_exact_for_negative_bases_and_zero():
    out = check(lambda lib, a, b: a ** b, np.array([-2.0, 0.0, -3.0, 0.0, -0.5]), np.array([2.0, 0.0, 3.0, 2.0, -2.0]))
    assert out.tolist() == [4.0, 1.0, -27.0, 0.0, 4.0]
    assert (mt.tensor(-2.0) ** mt.tensor(2.0)).item() == 4.0  # issue 10: was NaN through exp(b * log a)
    assert (mt.tensor(0.0) ** mt.tensor(0.0)).item() == 1.0


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_pow_with_tensor_exponent_and_its_gradients(rng, dtype):
    def program(lib, a, b):
        out = a ** b
        out.sum().backward()
        return out, a.grad, b.grad

    base = np.array([0.0, -2.0, 3.0, 0.5, -1.5, 2.0, 0.0])
    exponent = np.array([0.0, 2.0, 0.5, -1.0, 3.0, 1.7, 2.0])
    check(program, Input(base, dtype, requires_grad=True), Input(exponent, dtype, requires_grad=True),
          rtol_scale=2.0)


def test_scalar_base_with_tensor_exponent(rng):
    def program(lib, b):
        out = 2.5 ** b
        out.sum().backward()
        return out, b.grad, lib.pow(3, b.detach())

    check(program, Input(random(rng, 5), requires_grad=True))


@pytest.mark.parametrize("value", [3, True, 2.5, -7])
@pytest.mark.parametrize("dtype", [None, "float64", "int64"])
def test_full_takes_its_dtype_from_the_fill_value(value, dtype):
    check(lambda lib: lib.full((2, 3), value, dtype=None if dtype is None else getattr(lib, dtype)))


@pytest.mark.parametrize("data", [
    [1, 2, 3], [1.0, 2, 3], [True, False], [1, True], [[1, 2], [3.5, 4]], 2.5, 7, False,
    np.float64(1.5), [np.float64(1.5), 2.0], np.array([1.0, 2.0]), np.array([1, 2]), np.float32(2.0),
    np.array([1.0, 2.0], dtype=np.float16), [], [[]],
], ids=lambda d: repr(d))
def test_tensor_infers_dtype_as_torch_tensor(data):
    ours = mt.tensor(data)
    theirs = torch.tensor(data)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert mt.Tensor(data).dtype == ours.dtype  # the constructor infers the same way
