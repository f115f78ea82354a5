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
