"""nn: Module API, Parameter, Linear init, Sequential, repr, to(), losses against NumPy."""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
from conftest import requires_cuda, to_f64

nn = mt.nn
F = mt.nn.functional


class TwoLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 4)
        self.out = nn.Linear(4, 2, bias=False)
        self.scale = nn.Parameter(mt.ones(1))
        self.note = "not a parameter"

    def forward(self, x):
        return self.out(self.hidden(x).relu()) * self.scale


def test_module_registers_parameters_and_children():
    model = TwoLayer()
    names = [name for name, _ in model.named_parameters()]
    assert names == ["scale", "hidden.weight", "hidden.bias", "out.weight"]
    assert [type(c).__name__ for c in model.children()] == ["Linear", "Linear"]
    assert all(p.requires_grad and isinstance(p, nn.Parameter) for p in model.parameters())
    assert model.note == "not a parameter" and model.out.bias is None
    assert len(list(model.modules())) == 3


def test_shared_parameter_is_listed_once():
    layer = nn.Linear(2, 2)
    model = nn.Sequential(layer, nn.ReLU(), layer)
    assert len(list(model.parameters())) == 2


def test_call_zero_grad_train_eval():
    model = TwoLayer()
    model(mt.randn(5, 3)).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    assert model.training and model.hidden.training
    model.eval()
    assert not model.training and not model.hidden.training
    model.train()
    assert model.out.training


def test_parameter_is_a_leaf_tensor_copy():
    t = mt.tensor([1.0, 2.0])
    p = nn.Parameter(t)
    assert isinstance(p, mt.Tensor) and p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.tolist() == [1.0, 2.0]
    assert repr(p).startswith("Parameter containing:\ntensor([1.0000, 2.0000], requires_grad=True)")


def test_linear_forward_matches_numpy(rng):
    layer = nn.Linear(3, 5)
    x = rng.standard_normal((4, 3)).astype(np.float32)
    expected = x @ to_f64(layer.weight).T + to_f64(layer.bias)
    np.testing.assert_allclose(to_f64(layer(mt.tensor(x))), expected, rtol=1e-5, atol=1e-6)
    assert layer(mt.tensor(x[0])).shape == (5,)


def test_linear_init_statistics():
    mt.manual_seed(0)
    fan_in = 400
    layer = nn.Linear(fan_in, 300)
    bound = 1 / math.sqrt(fan_in)
    for param in (layer.weight, layer.bias):
        values = to_f64(param).ravel()
        assert values.min() >= -bound and values.max() <= bound
    weights = to_f64(layer.weight).ravel()
    # U(-b, b): mean 0, variance b^2 / 3 (120000 samples: tight estimates)
    assert abs(weights.mean()) < 0.02 * bound
    assert abs(weights.var() / (bound**2 / 3) - 1) < 0.02
    assert layer.weight.shape == (300, fan_in) and layer.bias.shape == (300,)


def test_sequential_runs_in_order_and_indexes():
    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 3), nn.Softmax(dim=1))
    probabilities = model(mt.randn(5, 2))
    np.testing.assert_allclose(to_f64(probabilities).sum(1), np.ones(5), rtol=1e-6)
    assert len(model) == 4 and isinstance(model[1], nn.Tanh)
    assert isinstance(model[-1], nn.Softmax)
    assert [type(m).__name__ for m in model] == ["Linear", "Tanh", "Linear", "Softmax"]


def test_activation_modules_match_functions(rng):
    x = mt.tensor(rng.standard_normal((3, 4)))
    data = to_f64(x)
    np.testing.assert_allclose(to_f64(nn.ReLU()(x)), np.maximum(data, 0), rtol=1e-6)
    np.testing.assert_allclose(to_f64(nn.Sigmoid()(x)), 1 / (1 + np.exp(-data)), rtol=1e-5)
    np.testing.assert_allclose(to_f64(nn.Tanh()(x)), np.tanh(data), rtol=1e-5, atol=1e-7)
    log_p = data - data.max(1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(1, keepdims=True))
    np.testing.assert_allclose(to_f64(nn.LogSoftmax(1)(x)), log_p, rtol=1e-5, atol=1e-6)


def test_repr_is_nested_like_torch():
    model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 3), nn.Softmax(dim=1))
    assert repr(model) == (
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=64, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Linear(in_features=64, out_features=3, bias=True)\n"
        "  (3): Softmax(dim=1)\n"
        ")")
    nested = repr(nn.Sequential(nn.Sequential(nn.ReLU())))
    assert nested == "Sequential(\n  (0): Sequential(\n    (0): ReLU()\n  )\n)"


def test_to_dtype_rebinds_parameters():
    model = TwoLayer()
    before = model.hidden.weight.tolist()
    assert model.to(mt.float64) is model
    assert all(p.dtype == mt.float64 and isinstance(p, nn.Parameter) and p.requires_grad
               for p in model.parameters())
    np.testing.assert_allclose(model.hidden.weight.tolist(), before, rtol=1e-7)
    assert model(mt.randn(2, 3, dtype=mt.float64)).dtype == mt.float64


@requires_cuda
@pytest.mark.cuda
def test_to_cuda_moves_every_parameter():
    model = TwoLayer().to("cuda")
    assert all(p.is_cuda for p in model.parameters())
    out = model(mt.randn(2, 3, device="cuda"))
    out.sum().backward()
    assert all(p.grad.is_cuda for p in model.parameters())
    assert not any(p.is_cuda for p in model.cpu().parameters())


def _log_softmax(z):
    z = z - z.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_and_nll_match_numpy(reduction, device, rng):
    logits = rng.standard_normal((6, 4)) * 2
    labels = rng.integers(0, 4, 6)
    per_sample = -_log_softmax(logits)[np.arange(6), labels]
    expected = {"mean": per_sample.mean(), "sum": per_sample.sum(), "none": per_sample}[reduction]
    x = mt.tensor(logits, dtype=mt.float64, device=device)
    y = mt.tensor(labels, dtype=mt.int64, device=device)
    np.testing.assert_allclose(to_f64(F.cross_entropy(x, y, reduction=reduction)), expected, rtol=1e-12)
    np.testing.assert_allclose(to_f64(F.nll_loss(F.log_softmax(x, 1), y, reduction=reduction)), expected,
                               rtol=1e-12)
    np.testing.assert_allclose(to_f64(nn.CrossEntropyLoss(reduction=reduction)(x, y)), expected, rtol=1e-12)


def test_cross_entropy_gradient_is_softmax_minus_one_hot(device, rng):
    logits = rng.standard_normal((5, 3))
    labels = rng.integers(0, 3, 5)
    x = mt.tensor(logits, dtype=mt.float64, device=device).requires_grad_()
    F.cross_entropy(x, mt.tensor(labels, device=device)).backward()
    expected = (np.exp(_log_softmax(logits)) - np.eye(3)[labels]) / 5
    np.testing.assert_allclose(to_f64(x.grad), expected, rtol=1e-10, atol=1e-12)
    assert mt.autograd.gradcheck(lambda z: F.cross_entropy(z, mt.tensor(labels, device=device)), (x,))


def test_mse_loss_matches_numpy(device, rng):
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    x = mt.tensor(a, dtype=mt.float64, device=device).requires_grad_()
    t = mt.tensor(b, dtype=mt.float64, device=device)
    np.testing.assert_allclose(F.mse_loss(x, t).item(), ((a - b) ** 2).mean(), rtol=1e-12)
    np.testing.assert_allclose(F.mse_loss(x, t, reduction="sum").item(), ((a - b) ** 2).sum(), rtol=1e-12)
    assert mt.autograd.gradcheck(lambda z: F.mse_loss(z, t), (x,))


def test_cross_entropy_rejects_bad_labels():
    logits = mt.randn(4, 3)
    with pytest.raises(RuntimeError, match="expected target dtype to be Long"):
        F.cross_entropy(logits, mt.tensor([0.0, 1.0, 2.0, 0.0]))
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        F.cross_entropy(logits, [0, 1, 2, 0])
    with pytest.raises(ValueError, match=r"batch_size \(4\) to match target batch_size \(5\)"):
        F.cross_entropy(logits, mt.tensor([0, 1, 2, 0, 1]))
    with pytest.raises(RuntimeError, match="multi-target not supported"):
        F.cross_entropy(logits, mt.tensor([[0], [1], [2], [0]]))
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(logits, mt.tensor([0, 1, 2, 0]), reduction="avg")
    with pytest.warns(UserWarning, match="different to the input size"), pytest.raises(mt.ShapeError):
        F.mse_loss(logits, mt.randn(3, 4))  # broadcast as torch does, which fails here


def test_module_without_forward_raises():
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(mt.ones(1))


# ------------------------------------------ issue 13: a -inf logit that is not the target is finite


def _np_cross_entropy(logits, target, weight, ignore_index):
    """Reference in NumPy: log_softmax then the target's entry (no masks, no products with -inf)."""
    logits = np.asarray(logits, dtype=np.float64)
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    losses, weights = [], []
    for row, t in zip(log_probs, target):
        if t == ignore_index:
            continue
        w = 1.0 if weight is None else weight[t]
        losses.append(-row[t] * w)
        weights.append(w)
    return sum(losses) / sum(weights)


@pytest.mark.parametrize("weight", [None, [1.0, 2.0, 3.0]])
def test_cross_entropy_with_a_minus_inf_logit_off_target_is_finite(weight):
    ninf = float("-inf")
    logits = [[1.0, ninf, 2.0], [0.5, 0.1, ninf], [ninf, 3.0, 0.0], [ninf, ninf, 1.0]]
    target = [0, 1, 2, -100]  # the last row is ignored, all its logits but one -inf
    x = mt.tensor(logits, requires_grad=True)
    w = None if weight is None else mt.tensor(weight)
    loss = mt.nn.functional.cross_entropy(x, mt.tensor(target), weight=w)
    expected = _np_cross_entropy(logits, target, weight, -100)
    assert np.isfinite(loss.item())
    np.testing.assert_allclose(loss.item(), expected, rtol=1e-6)
    loss.backward()
    assert np.isfinite(x.grad.numpy()).all()
    assert x.grad[3].tolist() == [0.0, 0.0, 0.0]  # the ignored row gets no gradient


def test_cross_entropy_minus_inf_matches_torch_values():
    # torch 2.13: cross_entropy([[1, -inf, 2], [0.5, 0.1, -inf]], [0, 1]) and its gradient
    ninf = float("-inf")
    x = mt.tensor([[1.0, ninf, 2.0], [0.5, 0.1, ninf]], requires_grad=True)
    loss = mt.nn.functional.cross_entropy(x, mt.tensor([0, 1]))
    np.testing.assert_allclose(loss.item(), 1.1131384372711182, rtol=1e-6)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), [[-0.36552929878234863, 0.0, 0.36552929878234863],
                                                [0.2993438243865967, -0.2993438243865967, 0.0]], rtol=1e-5)
