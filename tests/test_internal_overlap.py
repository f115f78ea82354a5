"""Writes into a destination whose elements share memory (a stride-0 expand), issue 13.

torch refuses such a write (TensorIterator's assert_no_internal_overlap): RuntimeError
"unsupported operation: more than one element of the written-to tensor refers to a single memory
location. Please clone() the tensor before performing the operation." Every writer of minitensor
is checked here: each in-place op and operator, copy_, index and slice assignment, the index_put_
kernel, in-place dropout, nn.init, the optimizers, load_state_dict and the C++ API's
caller-supplied softmax output. Each must raise torch's error and leave the memory as it was
(fresh random values, compared exactly). The exceptions are torch's: fill_ of a number and zero_
(one value everywhere gives the same result in any order), checked against NumPy. Where torch is
importable each program also runs there and must behave the same way.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from conftest import DEVICES

try:
    import torch
except ImportError:  # the expected outcomes below are torch's; without it they are checked alone
    torch = None

MESSAGE = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
           "location. Please clone() the tensor before performing the operation.")


def _requires_grad_leaf(lib, x):
    p = x.requires_grad_()
    (p * 2).sum().backward()
    return p


def _optimizer_step(name):
    def step(lib, x, v):
        p = _requires_grad_leaf(lib, x)
        getattr(lib.optim, name)([p], lr=0.1).step()
    return step


def _load_state_dict(lib, x, v):
    module = lib.nn.Module()
    module.register_buffer("b", x)
    module.load_state_dict({"b": v})


def _setitem(key, value=None):
    def write(lib, x, v):
        x[key] = v if value is None else value
    return write


def _inplace_operator(name):  # x += v and friends, without rebinding x
    return lambda lib, x, v: getattr(x, name)(v)


# (name, write(lib, x, v)) with x a (3, 4) expand of 4 fresh values and v a (3, 4) tensor of others.
# torch refuses each of these with MESSAGE, except where TORCH_ONLY_WARNS says otherwise.
REFUSED = [
    ("add_", lambda lib, x, v: x.add_(v)),
    ("add_scalar_alpha", lambda lib, x, v: x.add_(1.5, alpha=2)),
    ("sub_", lambda lib, x, v: x.sub_(v)),
    ("mul_", lambda lib, x, v: x.mul_(v)),
    ("div_", lambda lib, x, v: x.div_(v)),
    ("pow_", lambda lib, x, v: x.pow_(2)),
    ("clamp_", lambda lib, x, v: x.clamp_(min=-0.5, max=0.5)),
    ("iadd", _inplace_operator("__iadd__")),
    ("isub", _inplace_operator("__isub__")),
    ("imul", _inplace_operator("__imul__")),
    ("itruediv", _inplace_operator("__itruediv__")),
    ("ipow", lambda lib, x, v: x.__ipow__(2)),
    ("copy_", lambda lib, x, v: x.copy_(v)),
    ("copy_broadcast_row", lambda lib, x, v: x.copy_(v[0])),
    ("copy_one_element", lambda lib, x, v: x.copy_(v[0, :1])),
    ("fill_0d_tensor", lambda lib, x, v: x.fill_(v[1, 2])),  # only a number may go everywhere
    ("setitem_ellipsis_number", lambda lib, x, v: x.__setitem__(Ellipsis, 3.0)),
    ("setitem_slice_number", lambda lib, x, v: x.__setitem__(slice(1, None), 4)),
    ("setitem_0d_tensor", lambda lib, x, v: x.__setitem__(slice(None), v[0, 0])),
    ("setitem_ellipsis_tensor", lambda lib, x, v: x.__setitem__(Ellipsis, v)),
    ("setitem_slice_tensor", lambda lib, x, v: x.__setitem__(slice(1, None), v[1:])),
    ("setitem_row_broadcast", lambda lib, x, v: x.__setitem__(slice(None), v[0])),
    ("setitem_index_list", lambda lib, x, v: x.__setitem__([0, 2], v[:2])),
    ("setitem_index_tensor_number", lambda lib, x, v: x.__setitem__(lib.tensor([2, 0]), 7.0)),
    ("setitem_columns_number", lambda lib, x, v: x.__setitem__((slice(None), [1, 3]), 7.0)),
    ("setitem_two_indices", lambda lib, x, v: x.__setitem__(([0, 1], [3, 2]), v[0, :2])),
    ("setitem_mask", lambda lib, x, v: x.__setitem__(v > 0, 7.0)),
    ("dropout_inplace", lambda lib, x, v: lib.nn.functional.dropout(x, 0.5, True, True)),
    ("init_uniform_", lambda lib, x, v: lib.nn.init.uniform_(x)),
    ("init_kaiming_uniform_", lambda lib, x, v: lib.nn.init.kaiming_uniform_(x)),
    ("sgd_step", _optimizer_step("SGD")),
    ("adam_step", _optimizer_step("Adam")),
    ("adamw_step", _optimizer_step("AdamW")),
    ("load_state_dict", _load_state_dict),
]

# torch writes these anyway (index_put_ and masked_fill_ only warn "Use of index_put_ on expanded
# tensors is deprecated"); the value left in each shared location is then whichever write landed
# last, so minitensor refuses them.
TORCH_ONLY_WARNS = {"setitem_index_list", "setitem_index_tensor_number", "setitem_columns_number",
                    "setitem_two_indices", "setitem_mask"}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, write", REFUSED, ids=[n for n, _ in REFUSED])
def test_write_into_an_expanded_tensor_raises_and_writes_nothing(name, write, device, rng):
    values = rng.standard_normal(4).astype(np.float32)
    others = rng.standard_normal((3, 4)).astype(np.float32)
    b = mt.tensor(values, device=device)
    version = b._version
    with pytest.raises(RuntimeError) as error:
        write(mt, b.expand(3, 4), mt.tensor(others, device=device))
    assert MESSAGE in str(error.value)
    np.testing.assert_array_equal(b.cpu().numpy(), values)  # nothing was written
    assert b._version == version
    if torch is None:
        return
    t = torch.tensor(values)
    if name in TORCH_ONLY_WARNS:
        with pytest.warns(UserWarning, match="on expanded tensors is deprecated"):
            write(torch, t.expand(3, 4), torch.tensor(others))
        return
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        write(torch, t.expand(3, 4), torch.tensor(others))
    np.testing.assert_array_equal(t.numpy(), values)


def test_load_state_dict_reports_the_refusal_as_torch_does(rng):
    values = rng.standard_normal(4).astype(np.float32)
    messages = []
    for lib in (mt, torch) if torch is not None else (mt,):
        module = lib.nn.Module()
        module.register_buffer("b", lib.tensor(values).expand(3, 4))
        with pytest.raises(RuntimeError) as error:
            module.load_state_dict({"b": lib.ones(3, 4)})
        messages.append(str(error.value))
    assert messages[0] == (
        'Error(s) in loading state_dict for Module:\n\tWhile copying the parameter named "b", whose dimensions in '
        "the model are torch.Size([3, 4]) and whose dimensions in the checkpoint are torch.Size([3, 4]), an "
        f"exception occurred : ('{MESSAGE}',).")
    assert messages[-1] == messages[0]


@pytest.mark.parametrize("log", [False, True])
def test_cpp_softmax_into_an_expanded_or_read_only_output_raises(log, rng):
    x = rng.standard_normal((3, 4))
    base = rng.standard_normal(4)
    out = mt.tensor(base)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        mt._C._testing_softmax_into(mt.tensor(x), out.expand(3, 4), 1, log)
    np.testing.assert_array_equal(out.numpy(), base)
    frozen = np.zeros((3, 4))
    frozen.flags.writeable = False
    with pytest.raises(RuntimeError, match="read-only"):
        mt._C._testing_softmax_into(mt.tensor(x), mt.from_numpy(frozen), 1, log)
    assert not frozen.any()
    # The check refuses only those: a plain output is written, and right.
    y = mt._C._testing_softmax_into(mt.tensor(x), mt.empty(3, 4, dtype=mt.float64), 1, log).numpy()
    e = np.exp(x - x.max(1, keepdims=True))
    expected = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(y, np.log(expected) if log else expected, rtol=1e-12, atol=1e-12)


# (name, write(lib, x), the value every element of the base holds afterwards); torch allows these.
FILLS = [
    ("fill_", lambda lib, x: x.fill_(2.5), 2.5),
    ("fill_int", lambda lib, x: x.fill_(-3), -3.0),
    ("zero_", lambda lib, x: x.zero_(), 0.0),
    ("init_zeros_", lambda lib, x: lib.nn.init.zeros_(x), 0.0),
    ("setitem_a_row", lambda lib, x: x.__setitem__(1, 4.0), 4.0),  # x[1] is b itself, no overlap
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, write, value", FILLS, ids=[n for n, _, _ in FILLS])
def test_fills_into_an_expanded_tensor_write_the_value_everywhere(name, write, value, device, rng):
    values = rng.standard_normal(4).astype(np.float32)
    b = mt.tensor(values, device=device)
    write(mt, b.expand(3, 4))
    np.testing.assert_array_equal(b.cpu().numpy(), np.full(4, value, np.float32))
    if torch is not None:
        t = torch.tensor(values)
        write(torch, t.expand(3, 4))
        np.testing.assert_array_equal(b.cpu().numpy(), t.numpy())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("view", [
    lambda t: t.expand(1, 4),                     # stride 0, but a size-1 dim: one element each
    lambda t: t.unsqueeze(0).expand(1, 1, 4),
    lambda t: t[None],
    lambda t: t.expand(3, 4)[1],                  # a row of an expand is an ordinary view
    lambda t: t.expand(3, 4)[:1],
    lambda t: t.expand(3, 4).transpose(0, 1)[:, 2],
], ids=["expand_1", "expand_1_1", "none", "row", "first_rows", "transposed_column"])
def test_views_without_shared_elements_are_written(view, device, rng):
    values = rng.standard_normal(4).astype(np.float32)
    other = rng.standard_normal(4).astype(np.float32)
    b = mt.tensor(values, device=device)
    v = view(b)  # each holds the 4 elements of b once
    v.add_(mt.tensor(other, device=device).reshape(*v.shape))
    np.testing.assert_allclose(b.cpu().numpy(), values + other, rtol=1e-6)


def test_refusal_leaves_the_autograd_graph_usable(rng):
    values = rng.standard_normal(4)
    a = mt.tensor(values, dtype=mt.float64, requires_grad=True)
    y = a * 2
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        y.expand(3, 4).mul_(3)
    (y * y).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 8 * values, rtol=1e-12)


def test_index_put_kernel_refuses_an_expanded_target(rng):
    b = mt.tensor(rng.standard_normal(4).astype(np.float32))
    before = b.numpy().copy()
    for accumulate in (False, True):
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            mt._C._index_put_(b.expand(3, 4), 0, mt.tensor([1]), mt.ones(1, 4), accumulate)
    np.testing.assert_array_equal(b.numpy(), before)
