"""optim: SGD and Adam steps against a NumPy re-implementation of PyTorch's update rules."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from conftest import to_f64


def _quadratic_grad(w: np.ndarray, target: np.ndarray) -> np.ndarray:
    return 2 * (w - target)  # d/dw sum((w - target)^2)


def _run(optimizer_factory, start, target, steps, device):
    """Minimizes sum((w - target)^2) with a minitensor optimizer; returns w after each step."""
    w = mt.nn.Parameter(mt.tensor(start, dtype=mt.float64, device=device))
    optimizer = optimizer_factory([w])
    target_t = mt.tensor(target, dtype=mt.float64, device=device)
    history = []
    for _ in range(steps):
        optimizer.zero_grad()
        ((w - target_t) ** 2).sum().backward()
        optimizer.step()
        history.append(to_f64(w))
    return w, history


def _numpy_sgd(w, target, steps, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    w, buf, history = w.copy(), None, []
    for _ in range(steps):
        g = _quadratic_grad(w, target)
        if weight_decay:
            g = g + weight_decay * w
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        w = w - lr * g
        history.append(w.copy())
    return history


def _numpy_adam(w, target, steps, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
    w, m, v, history = w.copy(), np.zeros_like(w), np.zeros_like(w), []
    for t in range(1, steps + 1):
        g = _quadratic_grad(w, target)
        if weight_decay:
            g = g + weight_decay * w
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        step_size = lr / (1 - betas[0] ** t)
        denom = np.sqrt(v) / np.sqrt(1 - betas[1] ** t) + eps
        w = w - step_size * m / denom
        history.append(w.copy())
    return history


@pytest.mark.parametrize("options", [dict(lr=0.1), dict(lr=0.05, momentum=0.9),
                                     dict(lr=0.05, momentum=0.9, weight_decay=0.01),
                                     dict(lr=0.05, momentum=0.8, dampening=0.1),
                                     dict(lr=0.05, momentum=0.9, nesterov=True)],
                         ids=["plain", "momentum", "weight-decay", "dampening", "nesterov"])
def test_sgd_matches_torch_rule(options, device, rng):
    start, target = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    _, history = _run(lambda p: mt.optim.SGD(p, **options), start, target, 5, device)
    for got, expected in zip(history, _numpy_sgd(start, target, 5, **options)):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("options", [dict(lr=0.01), dict(lr=0.1, betas=(0.8, 0.99), eps=1e-6),
                                     dict(lr=0.05, weight_decay=0.1)], ids=["default", "betas", "weight-decay"])
def test_adam_matches_torch_rule(options, device, rng):
    start, target = rng.standard_normal(4), rng.standard_normal(4)
    _, history = _run(lambda p: mt.optim.Adam(p, **options), start, target, 6, device)
    for got, expected in zip(history, _numpy_adam(start, target, 6, **options)):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def test_step_updates_in_place_and_keeps_identity():
    layer = mt.nn.Linear(3, 2)
    weight, pointer = layer.weight, layer.weight.data_ptr()
    optimizer = mt.optim.SGD(layer.parameters(), lr=0.1)
    layer(mt.randn(4, 3)).sum().backward()
    before = to_f64(weight)
    optimizer.step()
    assert layer.weight is weight and weight.data_ptr() == pointer
    assert weight.requires_grad and weight.is_leaf
    np.testing.assert_allclose(to_f64(weight), before - 0.1 * to_f64(weight.grad), rtol=1e-6)


def test_zero_grad_and_parameters_without_grad():
    a, b = mt.nn.Parameter(mt.ones(2)), mt.nn.Parameter(mt.ones(2))
    optimizer = mt.optim.Adam([a, b], lr=0.1)
    (a * 2).sum().backward()
    optimizer.step()  # b has no grad: left alone
    assert b.tolist() == [1.0, 1.0] and a.tolist() != [1.0, 1.0]
    optimizer.zero_grad()
    assert a.grad is None


def test_param_groups_take_their_own_options():
    a, b = mt.nn.Parameter(mt.ones(1)), mt.nn.Parameter(mt.ones(1))
    optimizer = mt.optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    (a + b).sum().backward()
    optimizer.step()
    assert a.tolist() == pytest.approx([0.9]) and b.tolist() == pytest.approx([0.0])


def test_optimizer_argument_errors():
    with pytest.raises(ValueError, match="empty"):
        mt.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError):
        mt.optim.Adam([mt.nn.Parameter(mt.ones(1))], betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="non-leaf"):
        mt.optim.SGD([mt.ones(1).requires_grad_() * 2], lr=0.1)
