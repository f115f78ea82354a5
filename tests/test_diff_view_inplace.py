"""In-place ops on views of tensors that are part of an autograd graph, against torch: the base's
history is rebased (torch's CopySlices), views made before re-derive theirs from the base's, and
torch's refusals (views of leaves, views made under no_grad, outputs of split/chunk, expanded
tensors) raise the same errors. Also `.data` (its own version counter) against `.detach()`."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from differential import Input, check, random

torch = pytest.importorskip("torch")

VIEWS = {
    "row": lambda t: t[1],
    "column": lambda t: t[:, 2],
    "columns_from_1": lambda t: t[:, 1:],
    "strided": lambda t: t[::2, 1::2],
    "select": lambda t: t.select(1, 0),
    "narrow": lambda t: t.narrow(0, 1, 2),
    "view_then_slice": lambda t: t.view(12)[3:9],
    "transpose": lambda t: t.transpose(0, 1),
    "T_row": lambda t: t.T[1],
    "nested": lambda t: t[1:][0, 1:3],
    "unsqueeze": lambda t: t.unsqueeze(0)[0, :, 2],
    "permute": lambda t: t.permute(1, 0)[::3],
    "reshape": lambda t: t.reshape(2, 6)[1],
}

WRITES = ["mul_", "add_alpha", "div_", "sub_", "copy_", "zero_", "fill_", "clamp_", "pow_", "setitem", "iadd"]


def _write(lib, v, z, how):
    if how == "mul_":
        v.mul_(z)
    elif how == "add_alpha":
        v.add_(z, alpha=-2.5)
    elif how == "div_":
        v.div_(z)
    elif how == "sub_":
        v.sub_(z)
    elif how == "copy_":
        v.copy_(z * 3)
    elif how == "zero_":
        v.zero_()
    elif how == "fill_":
        v.fill_(1.25)
    elif how == "clamp_":
        v.clamp_(min=-0.5, max=0.5)
    elif how == "pow_":
        v.pow_(2)
    elif how == "setitem":
        v[...] = z
    else:
        v += z


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("how", WRITES)
def test_in_place_on_a_view_of_a_graph_tensor_rebases_its_history(rng, view, how):
    def program(lib, x, z_full, weights):
        y = x * 1.5 - 0.25  # saves nothing of x, so y may change in place
        v = VIEWS[view](y)
        z = z_full.reshape(-1)[: v.numel()].reshape(*v.shape)
        _write(lib, v, z, how)
        # y's history is rebased; v's own history is re-derived from it
        loss = (y * weights).sum() + (v * v).sum()
        loss.backward()
        return y, v, x.grad, z_full.grad, y.is_leaf, v.requires_grad

    check(program, Input(random(rng, 3, 4), "float64", requires_grad=True),
          Input(random(rng, 12, low=0.5, high=2.0), "float64", requires_grad=True),
          Input(random(rng, 3, 4), "float64"))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_example_of_the_brief(rng, dtype):
    def program(lib, x):
        y = x * 2
        y[0].mul_(3)
        y.sum().backward()
        return y, x.grad

    out = check(program, Input(random(rng, 3, 4), dtype, requires_grad=True))
    expected = np.full((3, 4), 2.0)
    expected[0] = 6.0
    np.testing.assert_array_equal(out[1].numpy(), expected)

    def columns(lib, x, z):
        y = x * 2
        y[:, 1:].add_(z)
        (y * y).sum().backward()
        return y, x.grad, z.grad

    check(columns, Input(random(rng, 3, 4), dtype, requires_grad=True),
          Input(random(rng, 3, 3), dtype, requires_grad=True))


def test_in_place_on_a_view_of_a_plain_tensor_gives_it_a_history(rng):
    def program(lib, z, h):
        out = lib.zeros(3, 4, dtype=lib.float64)
        out[:, 1:].add_(z)       # out had no history: now it has one (CopySlices)
        out[0].copy_(h * 2)
        row = out[2]
        row.mul_(h)
        (out * out).sum().backward()
        return out, out.is_leaf, out.requires_grad, z.grad, h.grad

    check(program, Input(random(rng, 3, 3), "float64", requires_grad=True),
          Input(random(rng, 4), "float64", requires_grad=True))


def test_views_made_before_an_in_place_op_follow_the_new_history(rng):
    def stale_view(lib, x):
        y = x * 2
        v = y[0:2]
        y.mul_(3)  # in place on the base: v's history is re-derived
        v.sum().backward()
        return v, x.grad

    check(stale_view, Input(random(rng, 3), "float64", requires_grad=True))

    def sibling_views(lib, x, z):
        y = x * 1.0
        a, b, whole = y[0], y[1:], y.T
        a.mul_(z[0])
        b.add_(z[1:] * 2)
        whole[1].mul_(3)  # a view of a view, modified after its siblings
        (a.sum() + (b * b).sum() + (whole * whole).sum() + y.sum()).backward()
        return y, a, b, whole, x.grad, z.grad

    check(sibling_views, Input(random(rng, 3, 2), "float64", requires_grad=True),
          Input(random(rng, 3, 2), "float64", requires_grad=True))


def test_a_saved_view_modified_through_its_base_still_raises(rng):
    def program(lib, x):
        y = x * 2
        v = y[0:2]
        w = v * v  # saves v
        y[1].mul_(3)
        w.sum().backward()

    error = check(program, Input(random(rng, 3), requires_grad=True))
    assert "modified by an inplace operation" in str(error)


def test_a_view_of_a_leaf_refuses_in_place_ops_with_torchs_words(rng):
    for write in (lambda v: v.mul_(2), lambda v: v.view(-1).add_(1), lambda v: v.T.zero_()):
        def program(lib, x, write=write):
            write(x[1:])

        error = check(program, Input(random(rng, 3, 2), requires_grad=True))
        assert str(error) == "a view of a leaf Variable that requires grad is being used in an in-place operation."

    def setitem(lib, x):
        x[0][1] = 5.0

    error = check(setitem, Input(random(rng, 3, 2), requires_grad=True))
    assert str(error) == "a view of a leaf Variable that requires grad is being used in an in-place operation."


@pytest.mark.parametrize("base", ["leaf", "graph", "plain_with_grad_operand"])
def test_a_view_made_under_no_grad_refuses_a_recorded_in_place_op(rng, base):
    def program(lib, x, z):
        y = {"leaf": x, "graph": x * 2, "plain_with_grad_operand": x.detach()}[base]
        with lib.no_grad():
            v = y[0:2]
        v.add_(z)

    error = check(program, Input(random(rng, 3), requires_grad=True), Input(random(rng, 2), requires_grad=True))
    assert str(error).startswith("A view was created in no_grad mode and is being modified inplace with grad mode")

    def unrecorded(lib, x):
        y = x.detach() * 2  # no graph anywhere: the write is a plain write
        with lib.no_grad():
            v = y[0:2]
        v.mul_(3)
        return y

    check(unrecorded, Input(random(rng, 3), requires_grad=True))


@pytest.mark.parametrize("split", ["split", "split_sizes", "chunk"])
def test_outputs_of_split_and_chunk_refuse_recorded_in_place_ops(rng, split):
    def program(lib, x):
        y = x * 2
        parts = {"split": lambda: y.split(2), "split_sizes": lambda: y.split([1, 3]), "chunk": lambda: y.chunk(2)}[split]()
        parts[1].mul_(2)

    error = check(program, Input(random(rng, 4), requires_grad=True))
    assert "is a view and is being modified inplace" in str(error)

    def untracked(lib, x):
        y = x.detach() * 2
        y.split(2)[1].mul_(2)
        return y

    check(untracked, Input(random(rng, 4), requires_grad=True))


def test_in_place_write_into_an_expanded_tensor_raises(rng):
    error = check(lambda lib, x: x.expand(3, 4).mul_(2), random(rng, 4))
    assert "more than one element of the written-to tensor refers to a single memory location" in str(error)
    check(lambda lib, x: x.expand(3, 4).fill_(1), random(rng, 4))
    check(lambda lib, x: (x.expand(1, 4).add_(1), x), random(rng, 4))  # size-1 dims are fine


def test_under_no_grad_views_of_graph_tensors_are_plain_writes(rng):
    def program(lib, x):
        y = x * 2
        with lib.no_grad():
            y[0].mul_(3)
            v = y[1:]
            v.zero_()
        y.sum().backward()  # y's history is not changed by writes under no_grad (as in torch)
        return y, x.grad

    check(program, Input(random(rng, 3), "float64", requires_grad=True))


# ------------------------------------------------------------------ .data against .detach()


def test_writes_through_data_do_not_trip_the_saved_tensor_check(rng):
    def program(lib, a, b):
        c = a * b  # saves b
        b.data.mul_(2)  # .data has a version counter of its own: backward uses the changed values
        c.sum().backward()
        return a.grad, b._version, b.data._version

    check(program, Input(random(rng, 3), "float64", requires_grad=True),
          Input(random(rng, 3), "float64", requires_grad=True))

    def through_detach(lib, a, b):
        c = a * b
        b.detach().mul_(2)  # detach() shares the counter: torch refuses the stale b
        c.sum().backward()

    error = check(through_detach, Input(random(rng, 3), requires_grad=True), Input(random(rng, 3), requires_grad=True))
    assert "modified by an inplace operation" in str(error)


def test_data_shares_memory_but_not_history(rng):
    def program(lib, x):
        y = x * 3
        d = y.data
        d[0] = 7.0  # visible through y, not recorded
        y.sum().backward()
        return y, d, d.requires_grad, d.is_leaf, d.grad_fn is None, x.grad

    check(program, Input(random(rng, 3), requires_grad=True))

    def assign(lib, x, other):
        p = x * 1.0
        p.data = other  # the object stays, its values are other's
        other.add_(1)   # and shares other's memory, as torch
        return p, p.requires_grad

    check(assign, Input(random(rng, 3), requires_grad=True), random(rng, 2, 2))


def test_data_of_a_parameter_updated_in_place_by_an_old_style_optimizer(rng):
    def program(lib, w0, x):
        w = lib.nn.Parameter(w0)
        for _ in range(3):
            loss = ((x @ w) ** 2).sum()
            loss.backward()
            w.data.add_(w.grad, alpha=-0.01)  # w is a leaf: .data lets the update through
            w.grad = None
        return w

    check(program, Input(random(rng, 4, 2), "float64"), Input(random(rng, 5, 4), "float64"))
