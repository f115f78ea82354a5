"""Issue 13: size, stride, byte-count and offset arithmetic never wraps. A product beyond int64 is a
RuntimeError (torch's wording) raised before anything is allocated, never a tiny buffer behind a huge
view; every view is checked against the bytes of its storage."""

from __future__ import annotations

import re

import numpy as np
import pytest

import minitensor as mt

BIG = 2**40


@pytest.mark.parametrize("shape", [(BIG, BIG), (BIG, BIG, 0), (2**62, 4)])
def test_empty_whose_byte_count_overflows_raises_before_allocating(shape):
    sizes = re.escape("[" + ", ".join(str(s) for s in shape) + "]")
    with pytest.raises(RuntimeError, match=f"^Storage size calculation overflowed with sizes={sizes}$"):
        mt.empty(*shape)


@pytest.mark.parametrize("factory", [mt.zeros, mt.ones, mt.randn])
def test_factories_share_the_check(factory):
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
        factory(BIG, BIG)


def test_strides_that_overflow_raise():
    # Zero elements, so no byte count overflows, but the row-major strides would.
    with pytest.raises(RuntimeError, match="^Stride calculation overflowed$"):
        mt.empty(0, BIG, BIG)


@pytest.mark.parametrize("start_shape, shape", [
    ((0,), (2**32, 2**32, 0)),  # the product wraps to 0, which matched numel 0 before
    ((0,), (2**32, 2**32)),
    ((2,), (2**32, 2**32)),
    ((4,), (2**62, 4)),
    ((4,), (-1, 2**62, 4)),
])
def test_reshape_whose_count_wraps_is_refused(start_shape, shape):
    t = mt.zeros(start_shape)
    with pytest.raises(RuntimeError, match="is invalid for input of size|overflow"):
        t.reshape(*shape)
    with pytest.raises(RuntimeError, match="is invalid for input of size|overflow"):
        t.view(*shape)


def test_expand_whose_count_overflows_raises():
    with pytest.raises(RuntimeError, match="^numel: integer multiplication overflow$"):
        mt.ones(1).expand(BIG, BIG)


def test_slice_with_huge_step_is_one_element_not_a_wrapped_length():
    t = mt.arange(3)
    assert t[:: 2**63 - 1].tolist() == [0]
    assert t[1 :: 2**62].tolist() == [1]
    assert t[5 :: 2**62].tolist() == []


def test_arange_with_an_impossible_count_raises():
    with pytest.raises(RuntimeError, match=re.escape("invalid size, possible overflow?")):
        mt.arange(0.0, 1e300)
    with pytest.raises(RuntimeError, match=re.escape("invalid size, possible overflow?")):
        mt.arange(-(2**63), 2**63 - 1, 1)  # 2^64 - 1 values


def test_one_hot_whose_output_overflows_raises():
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
        mt.one_hot(mt.tensor([0, 1]), 2**62)


def test_views_stay_inside_their_storage():
    # A view's extent is checked at construction: every legal view passes.
    t = mt.zeros(4, 6)
    assert t[1:, 2:].T.reshape(-1).shape == (12,)
    assert t.unsqueeze(0).expand(3, 4, 6).shape == (3, 4, 6)
    assert t[3, 5].item() == 0.0


def test_cat_whose_size_overflows_raises():
    huge = mt.ones(1).expand(2**62)  # a legal stride-0 view
    with pytest.raises(RuntimeError, match="overflows int64"):
        mt.cat([huge, huge, huge])
