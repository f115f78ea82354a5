"""Hypothesis fuzzing: constructors never crash and never raise anything but a clear TypeError /
ValueError; softmax / log_softmax obey their properties on random shapes, dims, dtypes and values.

Kept small (max_examples) so the CPU run of this file stays well under 20 s.
"""

from __future__ import annotations

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import minitensor as mt  # noqa: E402
from conftest import (  # noqa: E402
    DEVICES,
    FLOAT_DTYPE_NAMES,
    dtype_name,
    make_tensor,
    ref_softmax,
    round_to,
    tol,
    to_f64,
)

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Words one of which a constructor error must contain: it names the problem.
PROBLEM_WORDS = ("ragged", "int64", "type", "dtype", "dimension", "byte order", "stride", "convert",
                 "supported", "sequence", "export")


def expected_np_dtype(array: np.ndarray, from_numpy_input: bool):
    """The dtype torch.tensor would give, mapped onto minitensor's dtypes (ints -> int64)."""
    kind = array.dtype.kind
    if kind == "b":
        return np.bool_
    if kind in "iu":
        return np.int64
    if kind == "f":
        return array.dtype.newbyteorder("=") if from_numpy_input else np.float32
    return None  # anything else must be refused


def check_constructed_or_refused(data, build=mt.tensor):
    """`build(data)` is either the right tensor or a TypeError/ValueError naming the problem."""
    try:
        t = build(data)
    except (TypeError, ValueError) as err:
        msg = str(err).lower()
        assert any(w in msg for w in PROBLEM_WORDS), f"unclear message for {data!r:.80}: {err}"
        return None
    # Anything else propagates and fails the test: no other exception type is acceptable.
    from_numpy_input = isinstance(data, (np.ndarray, np.generic))
    with np.errstate(all="ignore"):
        ref = np.asarray(data)
    want = expected_np_dtype(ref, from_numpy_input)
    assert want is not None, f"{ref.dtype} input should have been refused, got {t.dtype}"
    assert t.shape == ref.shape
    assert dtype_name(t.dtype) == np.dtype(want).name
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(t.numpy(), ref.astype(want))
    return t


# ------------------------------------------------------------------------------ constructor fuzzing

scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.integers(min_value=2**63, max_value=2**80) | st.integers(min_value=-(2**80), max_value=-(2**63) - 1),
    st.floats(allow_nan=True, allow_infinity=True, width=32),
    st.none(),
    st.text(max_size=3),
    st.complex_numbers(max_magnitude=10, allow_nan=False),
    st.builds(object),
)


def nested(children):
    return st.lists(children, max_size=4) | st.tuples(children, children)


python_data = st.recursive(scalars, nested, max_leaves=24)

# Rectangular nested lists of one type (these must succeed).
rect_lists = st.one_of(
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4),
               elements=st.floats(-1e6, 1e6)).map(lambda a: a.tolist()),
    hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4)).map(lambda a: a.tolist()),
    hnp.arrays(np.bool_, hnp.array_shapes(min_dims=1, max_dims=3, max_side=4)).map(lambda a: a.tolist()),
)


@FAST
@given(python_data)
def test_tensor_from_any_python_data(data):
    check_constructed_or_refused(data)


@FAST
@given(rect_lists)
def test_tensor_from_rectangular_lists(data):
    assert check_constructed_or_refused(data) is not None


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 80), st.sampled_from([[], [1.5], [[]], [True]]))
def test_deep_nesting(depth, leaf):
    data = leaf
    for _ in range(depth):
        data = [data]
    t = check_constructed_or_refused(data)
    if t is None:  # only refused for more dims than NumPy (and we) can hold
        assert depth + np.ndim(leaf) > 32


NUMPY_DTYPES_ALL = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                    "float16", "float32", "float64", "complex64", "complex128", "bool", ">f4", ">i8",
                    ">f8", "<U3", "datetime64[s]", "timedelta64[ms]"]


def _arrays(dtype_name_):
    dt = np.dtype(dtype_name_)
    shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)
    return hnp.arrays(dt, shapes)


def _views(array_strategy):
    """The array itself or a non-contiguous view: sliced with a step, transposed, reversed."""
    def view(a, how):
        if a.ndim == 0:
            return a
        if how == "step":
            return a[::2]
        if how == "transpose":
            return a.T
        if how == "reverse":
            return a[::-1]
        return a
    return st.tuples(array_strategy, st.sampled_from(["as-is", "step", "transpose", "reverse"])).map(
        lambda p: view(*p))


numpy_inputs = st.sampled_from(NUMPY_DTYPES_ALL).flatmap(lambda d: _views(_arrays(d))) | _views(
    st.lists(st.one_of(st.integers(), st.floats(), st.text(max_size=2)), max_size=5).map(
        lambda v: np.array(v, dtype=object)))


@FAST
@given(numpy_inputs)
def test_tensor_from_numpy_arrays(array):
    t = check_constructed_or_refused(array)
    if array.dtype.kind in "fbi" or (array.dtype.kind == "u" and (array.size == 0 or array.max() < 2**63)):
        assert t is not None, f"{array.dtype} should be accepted"


@FAST
@given(numpy_inputs)
def test_from_numpy_zero_copy_rules(array):
    supported = array.dtype.kind in "fb" and array.dtype.itemsize in (1, 2, 4, 8) or array.dtype == np.int64 \
        or (array.dtype.kind == "i" and array.dtype.itemsize == 8)
    supported = supported and array.dtype.kind != "c" and not (array.dtype.kind == "f" and array.dtype.itemsize == 16)
    try:
        t = mt.from_numpy(array)
    except TypeError as err:
        assert not supported, f"{array.dtype} is supported: {err}"
        assert str(array.dtype).replace("<", "").replace(">", "") in str(err) or "type" in str(err)
        return
    except ValueError as err:
        assert supported
        native = array.dtype.isnative
        negative = any(s < 0 for s in array.strides)
        assert (not native and "byte order" in str(err)) or (negative and "stride" in str(err)), str(err)
        return
    assert supported and array.dtype.isnative and all(s >= 0 for s in array.strides)
    np.testing.assert_array_equal(t.numpy(), array)
    if array.size:  # zero-copy: a write through NumPy shows in the tensor
        base = array
        base.flat[0] = base.flat[-1] if array.dtype != np.bool_ else not base.flat[0]
        np.testing.assert_array_equal(t.numpy(), base)


@FAST
@given(numpy_inputs)
def test_from_dlpack_of_numpy(array):
    try:
        t = mt.from_dlpack(array)
    except (TypeError, ValueError) as err:
        assert any(w in str(err).lower() for w in PROBLEM_WORDS), str(err)
        return
    assert array.dtype.isnative and array.dtype.kind in "fbi"
    np.testing.assert_array_equal(t.numpy(), array)


# ------------------------------------------------------------------------ softmax property tests

VALUE_RANGES = {
    "normal": (lambda rng, shape, big: rng.standard_normal(shape) * 3),
    "huge": (lambda rng, shape, big: rng.uniform(-1.0, 1.0, shape) * big),  # uniform(-big, big) overflows
    "tiny": (lambda rng, shape, big: rng.uniform(-1e-30, 1e-30, shape)),
    "mixed": (lambda rng, shape, big: rng.choice([0.0, 1.0, -2.5, 1e-30, big, -big, 40.0], shape)),
}
BIG = {"float32": 3e38, "float64": 1e308, "float16": 6e4, "bfloat16": 3e38}

cases = st.fixed_dictionaries({
    "shape": st.lists(st.integers(0, 6), min_size=0, max_size=5).map(tuple),
    "dtype": st.sampled_from(FLOAT_DTYPE_NAMES),
    "values": st.sampled_from(sorted(VALUE_RANGES)),
    "infs": st.sampled_from(["none", "none", "some-neg", "some-any"]),
    "dim_pick": st.integers(0, 100),
    "neg_dim": st.booleans(),
    "seed": st.integers(0, 2**32 - 1),
    "shift": st.floats(-50, 50),
})


def _make_case(case):
    shape, name = case["shape"], case["dtype"]
    rng = np.random.default_rng(case["seed"])
    x = np.asarray(VALUE_RANGES[case["values"]](rng, shape, BIG[name]), dtype=np.float64)
    if case["infs"] != "none" and x.size:
        hit = rng.random(shape) < 0.2
        x[hit] = -np.inf if case["infs"] == "some-neg" else rng.choice([np.inf, -np.inf, np.nan], size=int(hit.sum()))
    rank = max(len(shape), 1)
    dim = case["dim_pick"] % rank - (rank if case["neg_dim"] else 0)
    return x, getattr(mt, name), dim


def _check_properties(case, device):
    x_np, dtype, dim = _make_case(case)
    x = make_tensor(x_np, dtype, device)
    xv = to_f64(x)
    y, ly = to_f64(x.softmax(dim)), to_f64(x.log_softmax(dim))
    with np.errstate(all="ignore"):
        want, lwant = round_to(ref_softmax(xv, dim), dtype), round_to(ref_softmax(xv, dim, log=True), dtype)
    rtol, atol = tol(dtype)
    # Against the float64 reference (NaN and inf positions included).
    np.testing.assert_allclose(y, want, rtol=2 * rtol, atol=2 * atol)
    np.testing.assert_allclose(ly, lwant, rtol=2 * rtol, atol=2 * tol(dtype, log=True)[1] + 1e-6)
    if x.dim() == 0 or x.numel() == 0:
        return
    groups_ok = np.all(np.isfinite(xv), axis=dim, keepdims=True)
    groups_ok = groups_ok | (np.any(np.isfinite(xv), axis=dim, keepdims=True) & ~np.any(np.isnan(xv) | (xv == np.inf), axis=dim, keepdims=True))
    # Rows without NaN/+inf and with one finite value sum to one.
    sums = np.sum(np.where(np.isnan(y), 0, y), axis=dim, keepdims=True)
    n = x.shape[dim]
    np.testing.assert_allclose(sums[np.broadcast_to(groups_ok, sums.shape)], 1.0, atol=n * 2 * rtol + 1e-6)
    # log_softmax = log(softmax) where both are finite and the probability is not tiny.
    both = np.isfinite(ly) & np.isfinite(y) & (y > 1e-3)
    np.testing.assert_allclose(np.exp(ly[both]), y[both], rtol=4 * rtol + 1e-6, atol=4 * atol)
    # Shift invariance for finite, moderate inputs (the shift is exact in float64/float32 there).
    if case["values"] == "normal" and case["infs"] == "none" and dtype_name(dtype) in ("float32", "float64"):
        shifted = make_tensor(xv + case["shift"], dtype, device)
        np.testing.assert_allclose(to_f64(shifted.softmax(dim)), y, rtol=50 * rtol, atol=50 * atol)


@settings(max_examples=300, deadline=None)
@given(cases)
def test_softmax_properties_cpu(case):
    _check_properties(case, "cpu")


@pytest.mark.cuda
@settings(max_examples=300, deadline=None)
@given(cases)
def test_softmax_properties_cuda(case):
    _check_properties(case, "cuda")
