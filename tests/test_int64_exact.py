"""Issue 13: int64 creation never passes through double (which holds 53 bits): arange and full with
integer arguments are exact over the whole int64 range, and a float that has no int64 value (NaN,
inf, beyond the range) raises as torch does instead of becoming INT64_MIN."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt

NO_INT64 = "value cannot be converted to type int64_t without overflow"


@pytest.mark.parametrize("start, end, step", [
    (2**62, 2**62 + 3, 1),            # returned an empty tensor through double
    (2**53 + 1, 2**53 + 6, 2),        # odd values above 2^53 are not doubles
    (-(2**62), 2**62, 2**61),         # end - start needs more than int64
    (2**63 - 4, 2**63 - 1, 1),
    (-(2**63), -(2**63) + 10, 3),
    (10, -11, -7),
])
def test_arange_int64_is_exact(start, end, step):
    assert mt.arange(start, end, step).tolist() == list(range(start, end, step))
    assert mt.arange(start, end, step).dtype == mt.int64


def test_arange_takes_numpy_integers():
    assert mt.arange(np.int64(2**53 + 1), 2**53 + 3).tolist() == [2**53 + 1, 2**53 + 2]


@pytest.mark.parametrize("value", [2**60 + 1, 2**63 - 1, -(2**63), 2**53 + 1])
def test_full_int64_is_exact(value):
    assert mt.full((3,), value, dtype=mt.int64).tolist() == [value] * 3
    assert mt.full((2,), value).tolist() == [value] * 2  # dtype follows the int
    assert mt.full_like(mt.zeros(2, dtype=mt.int64), value).tolist() == [value] * 2


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), 1e19, -1e30])
def test_float_without_an_int64_value_raises(value):
    with pytest.raises(RuntimeError, match=NO_INT64):
        mt.full((2,), value, dtype=mt.int64)
    with pytest.raises(RuntimeError, match=NO_INT64):
        mt.zeros(2, dtype=mt.int64).fill_(value)


def test_int_beyond_int64_is_an_overflow_error():
    with pytest.raises(OverflowError):
        mt.full((2,), 2**70, dtype=mt.int64)
    with pytest.raises(OverflowError):
        mt.arange(0, 2**70)


# ------------------------------------------------------- int64 arithmetic at the ends of the range

I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def _wrapped(v: int) -> int:
    """v modulo 2^64 as a signed int64: what torch's (and NumPy's) int64 arithmetic gives."""
    return (v + 2**63) % 2**64 - 2**63


def _edge_values(rng, n=12):
    """The ends of int64 and their neighbours, zero and +-1, and fresh random values."""
    fixed = [I64_MIN, I64_MIN + 1, I64_MAX, I64_MAX - 1, 0, 1, -1]
    return fixed + [int(v) for v in rng.integers(I64_MIN, I64_MAX, size=n, endpoint=True)]


@pytest.mark.parametrize("op, exact", [
    (mt.add, lambda a, b: a + b), (mt.sub, lambda a, b: a - b), (mt.mul, lambda a, b: a * b),
])
def test_int64_add_sub_mul_wrap_as_torch(op, exact, rng):
    """Signed overflow is undefined behaviour in C++ (UBSan flagged INT64_MIN * INT64_MIN);
    the kernels compute modulo 2^64, as torch does."""
    values = _edge_values(rng)
    a = np.array(values * len(values), dtype=np.int64)
    b = np.repeat(np.array(values, dtype=np.int64), len(values))
    got = op(mt.tensor(a), mt.tensor(b)).tolist()
    assert got == [_wrapped(exact(int(x), int(y))) for x, y in zip(a, b)]


def test_int64_neg_abs_pow_wrap_as_torch(rng):
    values = _edge_values(rng)
    t = mt.tensor(values)
    assert (-t).tolist() == [_wrapped(-v) for v in values]             # -INT64_MIN is INT64_MIN
    assert t.abs().tolist() == [_wrapped(abs(v)) for v in values]
    assert (t ** 3).tolist() == [_wrapped(v**3) for v in values]
    assert (t ** 64).tolist() == [_wrapped(v**64) for v in values]


def test_int64_min_is_found_when_it_is_int64_min(rng):
    """min went through -x, which wraps at INT64_MIN: min([INT64_MIN, 5]) gave 5."""
    values = _edge_values(rng)
    order = rng.permutation(len(values))
    t = mt.tensor([values[i] for i in order])
    at = int(np.argmin([values[i] for i in order]))
    assert t.amin().item() == I64_MIN and t.min().item() == I64_MIN
    assert t.argmin().item() == at
    values_, indices = t.reshape(1, -1).min(1)
    assert values_.tolist() == [I64_MIN] and indices.tolist() == [at]
    other = mt.tensor([values[i] for i in rng.permutation(len(values))])
    assert mt.minimum(t, other).tolist() == np.minimum(t.numpy(), other.numpy()).tolist()
    assert mt.tensor([True, False]).amin().item() is False


def test_int64_min_index_and_label_are_refused():
    """Their check took the minimum through -x too, so INT64_MIN beside a valid entry passed:
    index_select read out of bounds, one_hot gave a row of zeros."""
    with pytest.raises(IndexError, match=f"index {I64_MIN} is out of bounds for dimension with size 3"):
        mt.index_select(mt.arange(3.0), 0, mt.tensor([I64_MIN, 0]))
    with pytest.raises(RuntimeError, match="Class values must be non-negative."):
        mt.nn.functional.one_hot(mt.tensor([I64_MIN, 1]), 3)


def test_int64_sum_wraps_as_torch(rng):
    """UBSan: a long int64 sum overflowed a signed accumulator (undefined behaviour); it wraps."""
    values = np.array(_edge_values(rng, 40), dtype=np.int64).reshape(-1, 1)
    t = mt.tensor(np.concatenate([values, values[::-1]], axis=1))  # rows and columns both reduce
    assert t.sum().item() == _wrapped(int(sum(int(v) for v in values.ravel())) * 2)
    assert t.sum(0).tolist() == [_wrapped(sum(int(v) for v in values.ravel()))] * 2
    flat = [int(v) for v in values.ravel()]
    assert t.sum(1).tolist() == [_wrapped(a + b) for a, b in zip(flat, flat[::-1])]
    assert t.T.contiguous().sum(1).tolist() == t.sum(0).tolist()
