"""In-place semantics against torch: `+=` and `add_`-style methods write through views, the version
counter makes autograd refuse stale saved tensors, leaves that require grad refuse in-place writes,
and `.data` reads and swaps values. Each program runs in torch and minitensor on the same data."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from differential import Input, check, random

torch = pytest.importorskip("torch")


# ------------------------------------------------------------------ writes through views


@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/="])
@pytest.mark.parametrize("view", ["row", "column", "transposed", "strided", "whole"])
def test_augmented_assignment_writes_through_views(rng, op, view):
    def program(lib, x, other):
        base = x.clone()
        v = {"row": lambda t: t[1], "column": lambda t: t[:, 2], "transposed": lambda t: t.T,
             "strided": lambda t: t[::2, 1::2], "whole": lambda t: t}[view](base)
        other = other[: v.shape[-1]] if v.ndim else other[0]
        if op == "+=":
            v += other
        elif op == "-=":
            v -= other
        elif op == "*=":
            v *= other
        else:
            v /= other
        return base, v

    check(program, random(rng, 4, 4), random(rng, 4, low=0.5, high=2.0))


@pytest.mark.parametrize("method", ["add_", "sub_", "mul_", "div_"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_arithmetic_methods_on_non_contiguous_views(rng, method, dtype):
    def program(lib, x, other):
        view = x.T[1:]
        out = getattr(view, method)(other)
        return x, out is view

    check(program, Input(random(rng, 3, 5), dtype), Input(random(rng, 4, 1, low=0.5, high=2.0), dtype))


def test_add_and_sub_take_alpha(rng):
    check(lambda lib, x, y: (x.clone().add_(y, alpha=2.5), x.clone().sub_(y, alpha=-3), lib.add(x, y, alpha=2)),
          random(rng, 3, 4), random(rng, 4))


@pytest.mark.parametrize("writer", ["zero_", "fill_", "fill_tensor", "copy_", "copy_broadcast", "clamp_"])
def test_writers_on_strided_views(rng, writer):
    def program(lib, x, src):
        view = x.T[::2]
        if writer == "zero_":
            view.zero_()
        elif writer == "fill_":
            view.fill_(2.5)
        elif writer == "fill_tensor":
            view.fill_(lib.tensor(-1.5, dtype=lib.float64))
        elif writer == "copy_":
            view.copy_(src[::2])
        elif writer == "copy_broadcast":
            view.copy_(src[0, :4])
        else:
            view.clamp_(min=-0.5, max=0.75)
        return x

    check(program, random(rng, 4, 6), random(rng, 6, 4))


def test_integer_tensor_refuses_float_results_in_place():
    check(lambda lib, x: x.div_(2), np.arange(6))
    check(lambda lib, x: x.add_(1.5), np.arange(6))
    check(lambda lib, x: x.mul_(2), np.array([True, False]))
    check(lambda lib, x: (x.add_(True), x), np.arange(6))  # a bool fits into int64


def test_in_place_result_must_keep_the_shape(rng):
    error = check(lambda lib, x, y: x.add_(y), random(rng, 3), random(rng, 2, 3))
    assert isinstance(error, mt.ShapeError)


def test_lower_precision_destination_keeps_its_dtype(rng):
    check(lambda lib, x, y: x.add_(y), Input(random(rng, 5), "float16"), Input(random(rng, 5), "float64"))


# ------------------------------------------------------------------ regressions from issue 10


def test_sgd_by_hand_updates_the_model_in_place():
    mt.manual_seed(0)
    model = mt.nn.Sequential(mt.nn.Linear(3, 4), mt.nn.ReLU(), mt.nn.Linear(4, 2))
    before = [p.detach().clone() for p in model.parameters()]
    model(mt.randn(8, 3)).sum().backward()
    with mt.no_grad():
        for p in model.parameters():
            p -= 0.1 * p.grad
    for old, new in zip(before, model.parameters()):
        expected = old.numpy() - 0.1 * new.grad.numpy()
        np.testing.assert_allclose(new.detach().numpy(), expected, rtol=1e-6, atol=1e-7)
        assert new.is_leaf and new.requires_grad


def test_view_of_a_row_multiplied_in_place_changes_the_base():
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0]])
    v = x[0]
    v *= 2
    assert x.tolist() == [[2.0, 4.0], [3.0, 4.0]]


# ------------------------------------------------------------------ autograd and versions


def test_saved_tensor_modified_after_save_raises_with_torchs_words(rng):
    def program(lib, a, b):
        c = a * b
        b.copy_(lib.ones(3))
        c.sum().backward()
        return a.grad

    error = check(program, Input(random(rng, 3), requires_grad=True), random(rng, 3))
    assert "one of the variables needed for gradient computation has been modified by an inplace operation" \
        in str(error)
    assert "is at version 1; expected version 0 instead" in str(error)


def test_output_saved_by_exp_then_modified_raises(rng):
    def program(lib, a):
        y = a.exp()
        y.add_(1)
        y.sum().backward()

    check(program, Input(random(rng, 3), requires_grad=True))


def test_in_place_on_leaf_requiring_grad_raises_under_grad_mode_only(rng):
    error = check(lambda lib, a: a.add_(1), Input(random(rng, 3), requires_grad=True))
    assert str(error) == "a leaf Variable that requires grad is being used in an in-place operation."
    error = check(lambda lib, a: a[0].mul_(2), Input(random(rng, 3), requires_grad=True))
    assert str(error) == "a view of a leaf Variable that requires grad is being used in an in-place operation."

    def under_no_grad(lib, a):
        with lib.no_grad():
            a.mul_(2)
        return a, a.is_leaf, a.requires_grad

    check(under_no_grad, Input(random(rng, 3), requires_grad=True))


@pytest.mark.parametrize("op", ["add_", "mul_", "div_", "sub_", "clamp_", "pow_"])
def test_in_place_on_non_leaf_records_the_op(rng, op):
    def program(lib, a, b):
        y = a * 1.5
        if op == "clamp_":
            y.clamp_(min=-0.5, max=1.0)
        elif op == "pow_":
            y.pow_(2)
        else:
            getattr(y, op)(b)
        (y * b).sum().backward()
        return y, a.grad, b.grad

    check(program, Input(random(rng, 4), requires_grad=True),
          Input(random(rng, 4, low=0.5, high=2.0), requires_grad=True))


def test_scalar_multiply_in_place_after_use_is_allowed_as_in_torch(rng):
    def program(lib, w):
        p = w * 2
        q = p * 3  # saves nothing of p: the other factor is a number
        p.mul_(2)
        q.sum().backward()
        return w.grad

    check(program, Input(random(rng, 3), requires_grad=True))


def test_copy_into_a_plain_tensor_carries_the_gradient(rng):
    def program(lib, a):
        out = lib.zeros(3)
        out.copy_(a * 2)
        (out * out).sum().backward()
        return out.requires_grad, a.grad

    check(program, Input(random(rng, 3), requires_grad=True))


def test_copy_of_a_constant_cuts_the_old_history(rng):
    def program(lib, a):
        y = a * 2
        y.copy_(lib.ones(3))
        y.sum().backward()
        return a.grad

    check(program, Input(random(rng, 3), requires_grad=True))


def test_version_counter_counts_writes_through_any_view():
    x = mt.zeros(3, 3)
    assert x._version == 0
    x[0].add_(1)
    x.T.fill_(2)
    x += 1
    assert x._version == 3 and x[1]._version == 3


# ------------------------------------------------------------------ .data


def test_data_is_readable_and_assignable(rng):
    def program(lib, a, b):
        d = a.data
        y = a * 1
        y.data = b  # swaps the values (shape, dtype) without touching the graph
        return d.requires_grad, d.shape, y.shape, y.dtype, y.requires_grad

    check(program, Input(random(rng, 3), requires_grad=True), Input(random(rng, 2, 2), "float64"))


def test_data_assignment_keeps_the_parameter_object():
    layer = mt.nn.Linear(2, 3)
    weight = layer.weight
    layer.weight.data = mt.zeros(3, 2, dtype=mt.float64)
    assert layer.weight is weight and weight.dtype == mt.float64 and weight.requires_grad
    assert weight.tolist() == [[0.0, 0.0]] * 3
