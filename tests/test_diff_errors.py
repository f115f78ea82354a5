"""Shape errors against torch: broadcast, matmul, reshape, view, expand, cat and copy_ mismatches
raise minitensor.ShapeError, which is both a ValueError and a RuntimeError (torch raises
RuntimeError, so `except RuntimeError` written for torch catches it), with torch's message."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from differential import check

torch = pytest.importorskip("torch")

CASES = {
    "broadcast": lambda lib, a, b: a.reshape(2, 4) + b.reshape(3, 1, 2)[..., :1].expand(3, 1, 6),
    "broadcast_mul": lambda lib, a, b: a.reshape(2, 4) * b[:3],
    "where": lambda lib, a, b: lib.where(a[:2] > 0, a[:3], 0.0),
    "matmul_2d": lambda lib, a, b: a.reshape(2, 4) @ b.reshape(3, 2),
    "matmul_1d": lambda lib, a, b: a[:3] @ b[:4],
    "matmul_batch": lambda lib, a, b: a[:6].reshape(2, 1, 3) @ b.reshape(3, 3, 2)[..., :1].expand(3, 3, 2)[:, :2],
    "matmul_mat_vec": lambda lib, a, b: a.reshape(2, 4) @ b[:3],
    "matmul_vec_mat": lambda lib, a, b: a[:3] @ b.reshape(2, 3),
    "matmul_0d": lambda lib, a, b: a[0] @ b[:3],
    "reshape": lambda lib, a, b: a.reshape(3, 3),
    "reshape_two_inferred": lambda lib, a, b: a.reshape(-1, -1),
    "reshape_negative": lambda lib, a, b: a.reshape(-2, 4),
    "reshape_empty_ambiguous": lambda lib, a, b: a[:0].reshape(-1, 0),
    "view_non_viewable": lambda lib, a, b: a.reshape(2, 4).T.view(8),
    "view_bad_size": lambda lib, a, b: a.view(5),
    "expand": lambda lib, a, b: a.reshape(2, 4).expand(3, 4),
    "expand_fewer_sizes": lambda lib, a, b: a.reshape(2, 4).expand(4),
    "expand_leading_minus_one": lambda lib, a, b: a.reshape(2, 4).expand(-1, 2, 4),
    "cat_sizes": lambda lib, a, b: lib.cat([a.reshape(2, 4), b.reshape(2, 3)]),
    "cat_ndim": lambda lib, a, b: lib.cat([a.reshape(2, 4), b[:4]]),
    "cat_zero_dim": lambda lib, a, b: lib.cat([a[0], b[0]]),
    "copy": lambda lib, a, b: a.reshape(2, 4).clone().copy_(b[:3]),
    "in_place_result": lambda lib, a, b: a[:3].clone().add_(b.reshape(2, 3)),
    "permute_count": lambda lib, a, b: a.reshape(2, 4).permute(0),
}


@pytest.mark.parametrize("case", list(CASES))
def test_shape_errors_are_runtime_and_value_errors_with_torchs_words(rng, case):
    error = check(CASES[case], rng.standard_normal(8), rng.standard_normal(6))
    assert isinstance(error, mt.ShapeError), repr(error)
    assert isinstance(error, RuntimeError) and isinstance(error, ValueError)
    try:
        CASES[case](torch, torch.zeros(8), torch.zeros(6))
    except RuntimeError as torch_error:
        assert str(error) == str(torch_error).replace("torch.FloatTensor", "minitensor.float32")


def test_shape_error_is_exported_and_catchable_as_runtime_error():
    assert issubclass(mt.ShapeError, ValueError) and issubclass(mt.ShapeError, RuntimeError)
    try:
        mt.zeros(2, 3) + mt.zeros(4)
    except RuntimeError as error:  # torch habit
        assert "must match the size of tensor b" in str(error)
    else:
        raise AssertionError("no error")


def test_in_place_cast_error_is_a_runtime_error_but_not_a_shape_error():
    with pytest.raises(RuntimeError) as info:
        mt.arange(3).div_(2)
    assert not isinstance(info.value, mt.ShapeError)


def test_backward_with_a_wrong_gradient_shape_raises_runtime_error(rng):
    def program(lib, a):
        (a * 2).backward(lib.ones(4))

    from differential import Input
    check(program, Input(np.ones(3), requires_grad=True))
