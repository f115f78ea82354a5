"""Losses against torch: cross_entropy / nll_loss with weights, ignore_index, label smoothing,
probability targets, (N, C, d1, ...) inputs, every reduction and torch's errors; one_hot's range
checks; and the wrong answers issue 10 found, as regressions."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from differential import Input, check, random

torch = pytest.importorskip("torch")


def targets(rng, shape, num_classes, ignore_some=True, ignore_index=-100):
    t = rng.integers(0, num_classes, size=shape)
    if ignore_some and t.size > 1:
        t.reshape(-1)[:: 3] = ignore_index
    return t


SHAPES = [pytest.param((6, 5), id="N,C"), pytest.param((5,), id="C"), pytest.param((3, 4, 2, 3), id="N,C,d1,d2")]


def _target_shape(shape):
    return () if len(shape) == 1 else (shape[0],) + shape[2:]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
def test_class_index_losses_and_gradients(rng, shape, reduction, weighted, loss):
    num_classes = shape[0] if len(shape) == 1 else shape[1]

    def program(lib, x, target, weight):
        fn = getattr(lib.nn.functional, loss)
        inp = x if loss == "cross_entropy" else lib.log_softmax(x, 0 if x.ndim == 1 else 1)
        out = fn(inp, target, weight if weighted else None, reduction=reduction)
        (out * out).sum().backward() if reduction == "none" else out.backward()
        return out, x.grad

    check(program, Input(random(rng, *shape), requires_grad=True),
          targets(rng, _target_shape(shape), num_classes, ignore_some=len(shape) > 1),
          Input(rng.uniform(0.2, 2.0, num_classes)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_cross_entropy_dtypes(rng, dtype):
    check(lambda lib, x, t: lib.nn.functional.cross_entropy(x, t), Input(random(rng, 8, 5), dtype),
          targets(rng, (8,), 5))


@pytest.mark.parametrize("ignore_index", [-100, 2, -1])
def test_ignored_targets_are_left_out_of_the_mean(rng, ignore_index):
    def program(lib, x, t, w):
        f = lib.nn.functional
        return (f.cross_entropy(x, t, ignore_index=ignore_index), f.cross_entropy(x, t, w, ignore_index=ignore_index),
                f.nll_loss(x, t, ignore_index=ignore_index))

    check(program, random(rng, 7, 4), targets(rng, (7,), 4, ignore_index=ignore_index), rng.uniform(0.5, 2, 4))


def test_all_targets_ignored_gives_nan_as_torch():
    check(lambda lib, x, t: lib.nn.functional.cross_entropy(x, t), np.ones((2, 3)), np.array([-100, -100]))


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.5, 1.0])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_label_smoothing(rng, smoothing, weighted, reduction):
    def program(lib, x, t, w):
        out = lib.nn.functional.cross_entropy(x, t, w if weighted else None, reduction=reduction,
                                              label_smoothing=smoothing)
        out.sum().backward()
        return out, x.grad

    check(program, Input(random(rng, 6, 4), requires_grad=True), targets(rng, (6,), 4), rng.uniform(0.5, 2, 4))


@pytest.mark.parametrize("shape", [(5, 4), (4,), (2, 3, 4)])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_probability_targets(rng, shape, smoothing, reduction):
    class_dim = 0 if len(shape) == 1 else 1
    probs = rng.dirichlet(np.ones(shape[class_dim]), size=int(np.prod(shape)) // shape[class_dim])
    probs = np.moveaxis(probs.reshape((shape[0],) + shape[2:] + (shape[1],)), -1, 1) if len(shape) > 2 else \
        probs.reshape(shape)

    def program(lib, x, p, w):
        out = lib.nn.functional.cross_entropy(x, p, w, reduction=reduction, label_smoothing=smoothing)
        out.sum().backward()
        return out, x.grad

    check(program, Input(random(rng, *shape), requires_grad=True), probs, rng.uniform(0.5, 2, shape[class_dim]))


def test_minus_inf_logit_that_is_not_the_target_gives_a_finite_loss():
    def program(lib, x, t):
        out = lib.nn.functional.cross_entropy(x, t)
        out.backward()
        return out, x.grad

    x = np.array([[0.0, -np.inf, 1.0], [2.0, 0.5, -np.inf]])
    out, _ = check(program, Input(x, requires_grad=True), np.array([2, 0]))
    assert np.isfinite(out.item())


def test_default_ignore_index_is_not_a_class_regression():
    # issue 10: -100 was treated as a class (0.888 instead of torch's 1.332 on this kind of data)
    x = mt.tensor([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0], [2.0, 0.0, 0.0]])
    t = mt.tensor([1, -100, 0])
    expected = -np.mean([np.log(np.exp(2) / np.exp([1, 2, 0.5]).sum()), np.log(np.exp(2) / np.exp([2, 0, 0]).sum())])
    assert mt.nn.functional.cross_entropy(x, t).item() == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("bad", [3, 7, -1, -2])
def test_out_of_range_targets_raise_index_error(rng, loss, bad):
    error = check(lambda lib, x, t: getattr(lib.nn.functional, loss)(x, t), random(rng, 3, 3), np.array([0, bad, 1]))
    assert isinstance(error, IndexError) and str(error) == f"Target {bad} is out of bounds."


@pytest.mark.parametrize("case", ["batch", "float_target", "int_prob_target", "multi_target", "nd_mismatch",
                                  "weight_size", "smoothing", "reduction", "ignore_with_probs", "legacy_flags"])
def test_loss_argument_errors_match_torch(rng, case):
    def program(lib, x3, x4, t3, p3):
        f = lib.nn.functional
        if case == "batch":
            return f.cross_entropy(x3, t3[:2])
        if case == "float_target":
            return f.nll_loss(x3, t3.float())
        if case == "int_prob_target":
            return f.cross_entropy(x3[0], t3)
        if case == "multi_target":
            return f.cross_entropy(x3, p3[:, :2])
        if case == "nd_mismatch":
            return f.cross_entropy(x4, t3.reshape(3, 1, 1).expand(3, 2, 2))
        if case == "weight_size":
            return f.cross_entropy(x3, t3, lib.ones(2))
        if case == "smoothing":
            return f.cross_entropy(x3, t3, label_smoothing=1.5)
        if case == "reduction":
            return f.nll_loss(x3, t3, reduction="avg")
        if case == "ignore_with_probs":
            return f.cross_entropy(x3, p3, ignore_index=1)
        return f.cross_entropy(x3, t3, None, False), f.nll_loss(x3, t3, None, None, -100, False)

    check(program, random(rng, 3, 3), random(rng, 3, 3, 2, 3), np.array([0, 2, 1]), rng.dirichlet(np.ones(3), 3))


@pytest.mark.parametrize("loss", ["CrossEntropyLoss", "NLLLoss"])
def test_loss_modules_take_torchs_arguments(rng, loss):
    def program(lib, x, t, w):
        module = getattr(lib.nn, loss)(w, ignore_index=1, reduction="sum")
        return module(x if loss == "CrossEntropyLoss" else lib.log_softmax(x, 1), t), "weight" in module.state_dict()

    check(program, random(rng, 5, 3), np.array([0, 1, 2, 1, 0]), rng.uniform(0.5, 2, 3))


@pytest.mark.parametrize("labels,num_classes", [([0, 2, 1], -1), ([0, 2, 1], 3), ([0, 2, 1], 5), ([0, 3], 3),
                                                ([0, -1], -1), ([1, 0], 0), ([[1, 0], [2, 2]], -1)])
def test_one_hot_matches_torch_and_rejects_out_of_range(labels, num_classes):
    check(lambda lib, t: lib.nn.functional.one_hot(t, num_classes), np.array(labels))
