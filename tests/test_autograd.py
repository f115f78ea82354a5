"""Autograd: every op's backward against central finite differences (float64, via gradcheck),
broadcasting, accumulation, no_grad, detach, graph freeing and error messages."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from conftest import to_f64

gradcheck = mt.autograd.gradcheck


def leaf(rng, shape, device, positive=False, scale=1.0):
    data = rng.standard_normal(shape) * scale
    if positive:
        data = np.abs(data) + 0.5
    return mt.tensor(data, dtype=mt.float64, device=device).requires_grad_()


def away_from_kinks(rng, shape, device):
    """Values at least 0.1 from 0, so relu/abs are differentiable under the finite differences."""
    data = rng.standard_normal(shape)
    data = np.sign(data) * (np.abs(data) + 0.1)
    return mt.tensor(data, dtype=mt.float64, device=device).requires_grad_()


BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "maximum": mt.maximum,
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3))],
                         ids=["same", "row", "both-broadcast", "scalar-tensor"])
def test_binary_ops_backward_with_broadcasting(name, shapes, device, rng):
    a = leaf(rng, shapes[0], device)
    b = leaf(rng, shapes[1], device, positive=(name == "div"))
    assert gradcheck(BINARY[name], (a, b))


@pytest.mark.parametrize("name, fn", [
    ("radd", lambda x: 2.0 + x), ("rsub", lambda x: 2.0 - x), ("rmul", lambda x: 3 * x),
    ("rdiv", lambda x: 2.0 / x), ("pow2", lambda x: x**2), ("pow-half", lambda x: x**0.5),
    ("pow-neg", lambda x: x**-1.5), ("rpow", lambda x: 2.0**x), ("neg", lambda x: -x),
])
def test_scalar_operand_backward(name, fn, device, rng):
    assert gradcheck(fn, (leaf(rng, (3, 4), device, positive=True),))


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "abs", "relu", "sigmoid", "tanh"])
def test_unary_ops_backward(name, device, rng):
    positive = name in ("log", "sqrt")
    x = leaf(rng, (3, 5), device, positive=True) if positive else away_from_kinks(rng, (3, 5), device)
    assert gradcheck(lambda t: getattr(t, name)(), (x,))
    assert gradcheck(getattr(mt, name), (x,))


@pytest.mark.parametrize("op", ["sum", "mean"])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (1, False), ((0, 2), True), (-1, True)])
def test_sum_mean_backward(op, dim, keepdim, device, rng):
    x = leaf(rng, (2, 3, 4), device)
    assert gradcheck(lambda t: getattr(t, op)(dim, keepdim), (x,))


def test_max_backward(device, rng):
    x = leaf(rng, (3, 5), device)
    assert gradcheck(lambda t: t.max(), (x,))
    assert gradcheck(lambda t: t.max(1).values, (x,))
    assert gradcheck(lambda t: t.max(dim=0, keepdim=True)[0], (x,))
    assert gradcheck(lambda t: t.amax(1), (x,))


def test_max_returns_values_and_indices(device):
    x = mt.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]], device=device)
    values, indices = x.max(1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert x.argmax(1).tolist() == [1, 0]


def test_max_ties_share_the_gradient():
    x = mt.tensor([1.0, 3.0, 3.0]).requires_grad_()
    x.max().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5]


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
                                    ((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5))],
                         ids=["mm", "vm", "mv", "dot", "bmm", "batched-broadcast"])
def test_matmul_backward(shapes, device, rng):
    a, b = leaf(rng, shapes[0], device), leaf(rng, shapes[1], device)
    assert gradcheck(lambda p, q: p @ q, (a, b))


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_backward(name, dim, device, rng):
    x = leaf(rng, (3, 4, 5), device)
    assert gradcheck(lambda t: getattr(t, name)(dim), (x,))
    assert gradcheck(lambda t: getattr(mt, name)(t, dim), (x,))


def test_where_backward(device, rng):
    a, b = leaf(rng, (3, 4), device), leaf(rng, (4,), device)
    condition = mt.tensor(rng.standard_normal((3, 4)) > 0, device=device)
    assert gradcheck(lambda p, q: mt.where(condition, p, q), (a, b))


@pytest.mark.parametrize("name, fn", [
    ("reshape", lambda t: t.reshape(4, 6) * 2), ("view", lambda t: t.view(-1) * 2),
    ("transpose", lambda t: t.transpose(0, 2) * 2), ("permute", lambda t: t.permute(2, 0, 1) * 2),
    ("T", lambda t: t.T * 2), ("unsqueeze", lambda t: t.unsqueeze(1) * 2),
    ("squeeze", lambda t: t[:, :1].squeeze(1) * 2), ("getitem", lambda t: t[1, :, 1:3] * 2),
    ("select", lambda t: t.select(2, 3) * 2), ("expand", lambda t: t[:, :1].expand(2, 5, 4) * 2),
    ("to", lambda t: t.to("cpu").to(mt.float64) * 2), ("clone", lambda t: t.clone() * 2),
    ("contiguous", lambda t: t.transpose(0, 1).contiguous() * 2),
])
def test_view_backward(name, fn, device, rng):
    assert gradcheck(fn, (leaf(rng, (2, 3, 4), device),))


def test_dtype_move_sends_the_gradient_back_in_the_input_dtype():
    x = mt.tensor([1.0, 2.0], dtype=mt.float32).requires_grad_()
    (x.double() ** 2).sum().backward()
    assert x.grad.dtype == mt.float32 and x.grad.tolist() == [2.0, 4.0]
    assert not x.long().requires_grad


def test_layer_graph_backward(device, rng):
    x = leaf(rng, (4, 3), device)
    w1, b1 = leaf(rng, (5, 3), device), leaf(rng, (5,), device)
    w2, b2 = leaf(rng, (2, 5), device), leaf(rng, (2,), device)

    def mlp(x, w1, b1, w2, b2):
        return mt.nn.functional.linear(mt.tanh(mt.nn.functional.linear(x, w1, b1)), w2, b2).softmax(1)

    assert gradcheck(mlp, (x, w1, b1, w2, b2))


def test_gradcheck_reports_a_wrong_backward():
    class WrongSquare(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * x  # should be 2x

    x = mt.tensor([1.0, 2.0], dtype=mt.float64).requires_grad_()
    with pytest.raises(mt.autograd.GradcheckError, match="worst element"):
        gradcheck(WrongSquare.apply, (x,))


# -- the engine ------------------------------------------------------------------------------------

def test_broadcast_gradient_is_summed_to_the_input_shape():
    x = mt.ones(2, 3).requires_grad_()
    b = mt.tensor([1.0, 2.0, 3.0]).requires_grad_()
    (x * b).sum().backward()
    assert b.grad.shape == (3,) and b.grad.tolist() == [2.0, 2.0, 2.0]
    assert x.grad.tolist() == [[1.0, 2.0, 3.0]] * 2


def test_gradients_accumulate_across_backward_calls():
    x = mt.tensor([1.0, 2.0]).requires_grad_()
    (x * 3).sum().backward()
    (x * x).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]


def test_a_leaf_used_twice_gets_both_contributions():
    x = mt.tensor([2.0]).requires_grad_()
    (x * x + x).sum().backward()
    assert x.grad.tolist() == [5.0]


def test_graph_is_freed_after_backward():
    x = mt.tensor([1.0, 2.0]).requires_grad_()
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_retain_graph_allows_a_second_backward():
    x = mt.tensor([1.0, 2.0]).requires_grad_()
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_non_scalar_backward_needs_a_gradient():
    x = mt.tensor([1.0, 2.0]).requires_grad_()
    y = x * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()
    y.backward(mt.tensor([1.0, 10.0]))
    assert x.grad.tolist() == [2.0, 20.0]
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        (x * 2).backward(mt.ones(3))


def test_backward_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        (mt.ones(2) * 2).sum().backward()


def test_no_grad_context_and_decorator():
    x = mt.ones(2).requires_grad_()
    with mt.no_grad():
        y = x * 2
        assert not mt.is_grad_enabled()
    assert mt.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None

    @mt.no_grad()
    def double(t):
        return t * 2

    assert not double(x).requires_grad
    with mt.no_grad(), mt.enable_grad():
        assert (x * 2).requires_grad


def test_detach_shares_storage_and_leaves_the_graph():
    x = mt.tensor([1.0, 2.0]).requires_grad_()
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    assert d.data_ptr() == y.data_ptr()
    assert (d * 3).grad_fn is None


def test_leaf_flags_and_requires_grad_rules():
    x = mt.ones(2)
    assert x.requires_grad is False and x.grad is None and x.is_leaf
    x.requires_grad_()
    y = x + 1
    assert y.requires_grad and not y.is_leaf and y.grad_fn.name() == "AddBackward"
    with pytest.raises(RuntimeError, match="floating point"):
        mt.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad_(False)
    assert "grad_fn=<AddBackward>" in repr(y) and "requires_grad=True" in repr(x)


def test_comparisons_are_bool_and_not_differentiable():
    x = mt.tensor([1.0, 2.0, 3.0]).requires_grad_()
    for result, expected in [(x > 1.5, [False, True, True]), (x <= 2, [True, True, False]),
                             (x == 2, [False, True, False]), (x != 2, [True, False, True]),
                             (x < x * 0 + 2, [True, False, False]), (x >= 3, [False, False, True])]:
        assert result.dtype == mt.bool and result.tolist() == expected and not result.requires_grad
    assert (x == None) is False  # noqa: E711
    assert len({x, x * 1}) == 2  # tensors stay hashable by identity


def test_deep_graph_does_not_hit_the_recursion_limit():
    x = mt.tensor([1.0]).requires_grad_()
    y = x
    for _ in range(3000):
        y = y + 1
    y.sum().backward()
    assert x.grad.tolist() == [1.0]


def test_float32_gradients_keep_dtype(rng):
    x = mt.tensor(rng.standard_normal((3, 4)), dtype=mt.float32).requires_grad_()
    w = mt.tensor(rng.standard_normal((4, 2)), dtype=mt.float32).requires_grad_()
    (x @ w).log_softmax(1).sum().backward()
    assert x.grad.dtype == mt.float32 and w.grad.dtype == mt.float32
    xn, wn = to_f64(x), to_f64(w)
    logits = xn @ wn
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    expected_logits_grad = 1 - 2 * p  # d/dz sum(log_softmax(z)) over 2 columns
    np.testing.assert_allclose(to_f64(w.grad), xn.T @ expected_logits_grad, rtol=1e-5, atol=1e-5)


def test_softmax_fast_path_records_nothing():
    x = mt.randn(4, 8)
    y = x.softmax(1)
    assert y.grad_fn is None and not y.requires_grad
    with mt.no_grad():
        assert mt.softmax(x.requires_grad_(), 1).grad_fn is None


@pytest.mark.cuda
def test_cuda_gradients_match_cpu(rng):
    x_data, w_data = rng.standard_normal((8, 5)), rng.standard_normal((5, 3))
    grads = {}
    for device in ("cpu", "cuda"):
        x = mt.tensor(x_data, dtype=mt.float32, device=device).requires_grad_()
        w = mt.tensor(w_data, dtype=mt.float32, device=device).requires_grad_()
        loss = ((x @ w).relu() + 1).log_softmax(1).mean() + (x.sigmoid() * x.tanh()).sum()
        loss.backward()
        assert x.grad.device == x.device
        grads[device] = (to_f64(x.grad), to_f64(w.grad))
    for cpu, cuda in zip(grads["cpu"], grads["cuda"]):
        np.testing.assert_allclose(cuda, cpu, rtol=1e-5, atol=1e-6)
