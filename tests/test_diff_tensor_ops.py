"""Tensor ops for building graphs, against torch: cat (with gradients), stack, flatten,
split/chunk, min/amin/argmin, clamp, all/any, prod, var/std, index_select, advanced indexing
(int arrays, bool masks) with gradients, and assignment t[key] = v."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from differential import Input, check, random

torch = pytest.importorskip("torch")


def grads_of(program):
    """program(lib, *leaves) -> out; returns (out, d(sum(out * weights))/d(each leaf))."""
    def wrapped(lib, *leaves):
        out = program(lib, *leaves)
        weights = lib.arange(out.numel(), dtype=out.dtype).reshape(*out.shape) if out.ndim else 1.0
        (out * weights).sum().backward()
        return (out, *[leaf.grad for leaf in leaves if getattr(leaf, "requires_grad", False)])
    return wrapped


def leaf(rng, *shape, dtype="float32", **bounds):
    return Input(random(rng, *shape, **bounds), dtype, requires_grad=True)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_and_stack_with_gradients(rng, dim):
    check(grads_of(lambda lib, a, b: lib.cat([a, b * 2], dim)), leaf(rng, 3, 4), leaf(rng, 3, 4))
    check(grads_of(lambda lib, a, b: lib.stack([a, b * 2, a], dim)), leaf(rng, 3, 4), leaf(rng, 3, 4))
    check(grads_of(lambda lib, a, b: lib.cat((a, b), 0)), leaf(rng, 2, 4), leaf(rng, 5, 4))


DTYPE_PAIRS = [("int64", "float32"), ("bool", "int64"), ("float16", "bfloat16"), ("float16", "float32"),
               ("bfloat16", "float64"), ("bool", "float16"), ("float32", "float32")]


@pytest.mark.parametrize("first,second", DTYPE_PAIRS)
@pytest.mark.parametrize("join", ["cat", "stack"])
def test_cat_and_stack_promote_mixed_dtypes_as_torch(rng, first, second, join):
    def build(dtype):
        if dtype == "bool":
            return Input(rng.integers(0, 2, (2, 3)).astype(bool), "bool")
        if dtype == "int64":
            return Input(rng.integers(-5, 5, (2, 3)), "int64")
        return Input(random(rng, 2, 3), dtype)

    def program(lib, a, b):
        out = getattr(lib, join)([a, b, a], 1)
        return out, out.dtype

    check(program, build(first), build(second))
    check(program, build(second), build(first))


def test_cat_of_mixed_dtypes_sends_each_input_its_gradient_in_its_dtype(rng):
    def program(lib, a, b, n):
        out = lib.cat([a, b, n], 0)  # float16, float64, int64 -> float64
        (out * out).sum().backward()
        return out, a.grad, b.grad

    check(program, Input(random(rng, 2, 3), "float16", requires_grad=True),
          Input(random(rng, 3, 3), "float64", requires_grad=True), Input(rng.integers(-4, 4, (1, 3)), "int64"))


def test_stack_and_cat_errors(rng):
    check(lambda lib, a, b: lib.stack([a, b]), random(rng, 3, 4), random(rng, 3, 5))
    check(lambda lib, a: lib.stack([]), random(rng, 3))
    check(lambda lib, a: lib.stack([a, a], 3), random(rng, 3, 4))


@pytest.mark.parametrize("start,end", [(0, -1), (1, 2), (0, 1), (-2, -1), (2, 2)])
def test_flatten(rng, start, end):
    check(grads_of(lambda lib, a: a.flatten(start, end)), leaf(rng, 2, 3, 4))
    check(lambda lib, a: lib.flatten(a.transpose(0, 2), start, end), random(rng, 2, 3, 4))


def test_flatten_zero_dim_and_bad_args(rng):
    check(lambda lib, a: a.flatten(), np.array(2.5))
    check(lambda lib, a: a.flatten(2, 1), random(rng, 2, 3, 4))


@pytest.mark.parametrize("size", [1, 2, 3, 5, [1, 4], [2, 0, 3]])
def test_split(rng, size):
    def program(lib, a):
        pieces = a.split(size, 1)
        total = sum((p * (i + 1)).sum() for i, p in enumerate(pieces))
        total.backward()
        return list(pieces), a.grad

    check(program, leaf(rng, 2, 5))


@pytest.mark.parametrize("chunks", [1, 2, 3, 4, 6, 7])
def test_chunk(rng, chunks):
    check(lambda lib, a: list(lib.chunk(a, chunks, 0)), random(rng, 6, 2))
    check(lambda lib, a: list(a.chunk(chunks, -1)), random(rng, 2, 5))


def test_split_errors(rng):
    check(lambda lib, a: a.split([2, 2], 0), random(rng, 5))
    check(lambda lib, a: a.chunk(0), random(rng, 5))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_min_family(rng, dtype):
    values = rng.integers(-5, 5, size=(4, 5)) if dtype == "int64" else random(rng, 4, 5)

    def program(lib, a):
        v, i = a.min(1)
        return a.min(), a.amin(0), a.amin((0, 1), keepdim=True), v, i, a.argmin(), a.argmin(0, keepdim=True), \
            lib.min(a, 0, True).values, lib.minimum(a, a[[1, 0, 3, 2]])

    check(program, Input(values, dtype))


def test_min_gradients_and_ties(rng):
    tied = np.array([[1.0, 0.5, 0.5], [2.0, 2.0, -1.0]])
    check(grads_of(lambda lib, a: a.min(1).values), Input(tied, requires_grad=True))
    check(grads_of(lambda lib, a: a.amin(1)), Input(tied, requires_grad=True))
    check(grads_of(lambda lib, a: a.min()), Input(tied, requires_grad=True))
    check(grads_of(lambda lib, a, b: lib.minimum(a, b)), Input(tied, requires_grad=True),
          Input(np.array([1.0, 0.0, 0.5]), requires_grad=True))


def test_min_propagates_nan_and_handles_bool(rng):
    check(lambda lib, a: (a.min(), a.amin(0), a.argmin(), a.min(0)), np.array([[1.0, np.nan], [0.0, 2.0]]))
    check(lambda lib, a: (a.min(), a.amin(0)), np.array([[True, False], [True, True]]))
    check(lambda lib, a: a.argmin(), np.array([[True, False], [True, True]]))


@pytest.mark.parametrize("low,high", [(-0.5, 0.5), (None, 0.3), (-0.2, None), (0.5, -0.5)])
def test_clamp(rng, low, high):
    check(grads_of(lambda lib, a: a.clamp(low, high)), leaf(rng, 3, 4))
    check(lambda lib, a: lib.clamp(a, min=low, max=high), np.arange(-3, 4))
    check(grads_of(lambda lib, a: lib.clip(a, low, high)), leaf(rng, 5, dtype="float64"))


def test_clamp_with_tensor_bounds_and_errors(rng):
    check(grads_of(lambda lib, a, lo, hi: a.clamp(lo, hi)), leaf(rng, 3, 4), leaf(rng, 4, low=-1, high=0),
          leaf(rng, 3, 1, low=0, high=1))
    check(lambda lib, a: a.clamp(), random(rng, 3))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_all_and_any(rng, dtype, dim, keepdim):
    values = rng.integers(0, 3, size=(3, 4)) * (rng.uniform(size=(3, 4)) > 0.3)
    values[0] = 1

    def program(lib, a):
        if dim is None:
            return a.all(), a.any(), lib.all(a), lib.any(a)
        return a.all(dim, keepdim=keepdim), a.any(dim, keepdim=keepdim), lib.any(a, dim)

    check(program, Input(values.astype(dtype), dtype))


def test_all_and_any_of_empty_and_nan():
    check(lambda lib, a: (a.all(), a.any()), np.zeros((0, 3)))
    check(lambda lib, a: (a.all(), a.any()), np.array([np.nan, 1.0]))


@pytest.mark.parametrize("dim", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_prod_with_gradients_through_zeros(rng, dim, keepdim):
    values = random(rng, 3, 5, low=0.5, high=1.5)
    values[1, 2] = 0.0
    values[2, 1] = values[2, 3] = 0.0

    def program(lib, a):
        return a.prod() if dim is None else a.prod(dim, keepdim=keepdim)

    check(grads_of(program), Input(values, requires_grad=True), rtol_scale=4.0)
    check(program, Input(rng.integers(-3, 4, size=(3, 5)), "int64"))
    check(program, Input(rng.integers(0, 2, size=(3, 5)).astype(bool), "bool"))


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("correction", [None, 0, 1, 2])
@pytest.mark.parametrize("keepdim", [False, True])
def test_var_and_std(rng, dim, correction, keepdim):
    def program(lib, a):
        kwargs = {} if correction is None else {"correction": correction}
        return a.var(dim, keepdim=keepdim, **kwargs), lib.std(a, dim, keepdim=keepdim, **kwargs)

    check(grads_of(lambda lib, a: program(lib, a)[0]), leaf(rng, 4, 5, dtype="float64"))
    check(program, random(rng, 4, 5))


def test_var_unbiased_forms_and_errors(rng):
    check(lambda lib, a: (a.var(False), a.var(0, False), a.std(1, True), a.var(unbiased=False)), random(rng, 3, 4))
    check(lambda lib, a: a.var(), np.arange(6))
    check(lambda lib, a: (a.var(), a.std(0)), random(rng, 1, 3))  # N - 1 == 0: NaN, as torch


@pytest.mark.parametrize("key", ["list", "tensor", "negative", "repeated", "2d_index", "mask", "row_mask",
                                 "columns", "pair", "pair_broadcast", "split_pair", "with_none", "ellipsis"])
def test_advanced_indexing_with_gradients(rng, key):
    keys = {
        "list": lambda lib, t: t[[0, 2]],
        "tensor": lambda lib, t: t[lib.tensor([3, 1])],
        "negative": lambda lib, t: t[[-1, 0]],
        "repeated": lambda lib, t: t[[1, 1, 1, 0]],
        "2d_index": lambda lib, t: t[lib.tensor([[0, 1], [3, 3]])],
        "mask": lambda lib, t: t[t.detach() > 0],
        "row_mask": lambda lib, t: t[lib.tensor([True, False, True, True])],
        "columns": lambda lib, t: t[:, [2, 0, 2]],
        "pair": lambda lib, t: t[[0, 1, 3], [2, 2, 0]],
        "pair_broadcast": lambda lib, t: t[lib.tensor([[0], [3]]), lib.tensor([1, 2, 0])],
        "split_pair": lambda lib, t: t.reshape(4, 1, 3)[[0, 2], :, [1, 1]],
        "with_none": lambda lib, t: t[None, [0, 1], 1:],
        "ellipsis": lambda lib, t: t[..., [0, 2]],
    }
    check(grads_of(lambda lib, a: keys[key](lib, a)), leaf(rng, 4, 3))


def test_index_errors_match_torch(rng):
    check(lambda lib, a: a[[0, 4]], random(rng, 4, 3))
    check(lambda lib, a: a[:, [-4]], random(rng, 4, 3))
    check(lambda lib, a: a[lib.tensor([True, False])], random(rng, 4, 3))
    check(lambda lib, a: a[[0, 1], [0, 1, 2]], random(rng, 4, 3))
    check(lambda lib, a: a[lib.tensor([0.0])], random(rng, 4, 3))


def test_index_select(rng):
    check(grads_of(lambda lib, a: lib.index_select(a, 1, lib.tensor([2, 0, 2]))), leaf(rng, 3, 4))
    check(grads_of(lambda lib, a: a.index_select(0, lib.tensor([1]))), leaf(rng, 3, 4))


@pytest.mark.parametrize("key", ["int", "slice", "strided", "list", "mask", "columns", "pair", "ellipsis"])
@pytest.mark.parametrize("value", ["scalar", "row", "block"])
def test_assignment(rng, key, value):
    keys = {"int": 1, "slice": slice(1, 3), "strided": (slice(None, None, 2), slice(1, None)), "list": [0, 2],
            "mask": "mask", "columns": (slice(None), [0, 2]), "pair": ([0, 3], [1, 2]), "ellipsis": (Ellipsis, 1)}

    def program(lib, a, v):
        k = a > 0 if keys[key] == "mask" else keys[key]
        target = a.clone()
        region = target[k]
        if value == "scalar":
            target[k] = 7.5
        elif value == "row":
            target[k] = v[: region.shape[-1]] if region.ndim else v[0]
        else:
            target[k] = (v.reshape(-1)[: region.numel()] * 1).reshape(*region.shape)
        return target

    check(program, random(rng, 4, 3), random(rng, 12))


def test_assignment_records_gradients_to_value_and_target(rng):
    def program(lib, x, h):
        out = lib.zeros(4, 3, dtype=h.dtype)
        out[1] = h * 2
        out[[0, 3]] = h
        y = x * 1
        y[y.detach() > 0] = 0.0
        y[:, 1] = h[1]
        ((out + y) * lib.arange(12.0).reshape(4, 3)).sum().backward()
        return out, y, x.grad, h.grad

    check(program, leaf(rng, 4, 3), leaf(rng, 3))


def test_advanced_assignment_needs_matching_dtypes_as_torch(rng):
    check(lambda lib, a, v: a.__setitem__([0, 1], v), Input(random(rng, 3), "float32"), Input(random(rng, 2), "float64"))


def test_assignment_into_a_leaf_requiring_grad_raises(rng):
    def program(lib, x):
        x[0] = 1.0

    check(program, leaf(rng, 3))


def test_assignment_changes_views_and_bumps_the_version():
    x = mt.zeros(3, 3)
    row = x[1]
    x[1] = mt.tensor([1.0, 2.0, 3.0])
    x[x > 2] = -1.0
    assert row.tolist() == [1.0, 2.0, -1.0] and x._version == 2


# t[i, j] = v with several index tensors: torch's placement (adjacent advanced dims stay in place,
# apart ones go first), broadcasting of the indices and of the value, slices and ints in between,
# targets whose advanced dims do not merge as a view (transposed, strided).
MULTI_KEYS = {
    "pair": lambda L: (L.tensor([0, 3, -1]), L.tensor([1, 2, 0])),
    "pair_then_slice": lambda L: (L.tensor([0, 2]), L.tensor([4, 1]), slice(1, 3)),
    "apart": lambda L: (L.tensor([0, 3, 1]), slice(None), L.tensor([2, 0, 1])),
    "apart_with_int": lambda L: (L.tensor([[1], [2]]), 1, L.tensor([0, 2, 3])),
    "broadcast_indices": lambda L: (L.tensor([[0], [3]]), L.tensor([1, 4, 2])),
    "slice_then_pair": lambda L: (slice(1, None), L.tensor([0, 4]), L.tensor([3, 1])),
    "list_and_tensor": lambda L: ([2, 0], slice(None, None, 2), L.tensor([1, 3])),
    "mask_and_index": lambda L: (L.tensor([True, False, True, True]), L.tensor([0, 4, 2])),
    "repeated_pairs": lambda L: (L.tensor([1, 1]), L.tensor([2, 2]), L.tensor([0, 0])),
}
def _target(lib, base, layout):
    """A (4, 5, 4) tensor in different memory layouts (same values)."""
    if layout == "contiguous":
        return base.clone()
    if layout == "transposed":
        return base.transpose(0, 2).clone().transpose(0, 2)  # strides (1, 4, 20)
    if layout == "strided":
        big = lib.zeros(8, 5, 8, dtype=base.dtype)
        big[::2, :, ::2] = base
        return big[::2, :, ::2]
    return base.permute(1, 0, 2).clone().permute(1, 0, 2)


@pytest.mark.parametrize("key", list(MULTI_KEYS))
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided", "permuted"])
@pytest.mark.parametrize("value", ["scalar", "broadcast", "full"])
def test_assignment_with_several_index_tensors(rng, key, layout, value):
    def program(lib, base, v):
        target = _target(lib, base, layout)
        k = MULTI_KEYS[key](lib)
        region = target[k]
        if value == "scalar":
            target[k] = -7.5
        elif value == "broadcast":
            target[k] = v.reshape(-1)[: region.shape[-1]]
        else:
            target[k] = v.reshape(-1)[: region.numel()].reshape(*region.shape)
        return target, region.shape

    check(program, random(rng, 4, 5, 4), random(rng, 80))


@pytest.mark.parametrize("key", ["pair", "apart", "apart_with_int", "broadcast_indices"])
def test_assignment_with_several_index_tensors_records_gradients(rng, key):
    def program(lib, x, h):
        y = (x * 2).transpose(0, 2).transpose(0, 2)
        k = MULTI_KEYS[key](lib)
        region = y[k]
        y[k] = (h.reshape(-1)[: region.numel()] * 3).reshape(*region.shape)
        (y * y).sum().backward()
        return y, x.grad, h.grad

    check(program, leaf(rng, 4, 5, 4, dtype="float64"), leaf(rng, 80, dtype="float64"))


def test_assignment_with_several_index_tensors_errors(rng):
    def mismatched_indices(lib, a):
        a[lib.tensor([0, 1]), lib.tensor([0, 1, 2])] = 1.0

    def out_of_range(lib, a):
        a[lib.tensor([0, 1]), :, lib.tensor([0, 4])] = 1.0

    def value_does_not_fit(lib, a, v):
        a[lib.tensor([0, 1]), :, lib.tensor([0, 3])] = v

    check(mismatched_indices, random(rng, 4, 5, 4))
    check(out_of_range, random(rng, 4, 5, 4))
    check(value_does_not_fit, random(rng, 4, 5, 4), random(rng, 3, 5))
