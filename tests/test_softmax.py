"""Softmax / LogSoftmax forward and backward against a float64 NumPy reference.

CPU cases use moderate sizes; the shapes that exercise every CUDA tier are under the `cuda` marker.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import minitensor as mt
from conftest import (
    OPS,
    DEVICES,
    FLOAT_DTYPES,
    assert_close,
    dtype_name,
    make_tensor,
    random_input,
    ref_softmax,
    ref_softmax_backward,
    run_op,
    to_f64,
    tol,
)


def check_forward(x: mt.Tensor, dim: int, log: bool, style: str = "method"):
    """Runs the op, checks it against the reference of the input's actual values; returns y."""
    before = to_f64(x)
    y = run_op(x, dim, log, style)
    assert y.shape == x.shape
    assert y.dtype == x.dtype
    assert y.device == x.device
    assert y.is_contiguous()
    expected = ref_softmax(before, dim, log)
    assert_close(y, expected, x.dtype, err_msg=f"shape={x.shape} dim={dim} log={log}", log=log)
    np.testing.assert_array_equal(to_f64(x), before, err_msg="the input was modified")
    return y


# (shape, dim): ranks 0-5, negative dims, size-1 dims, odd/prime sizes, inner > 1 cases.
CPU_CASES = [
    ((), 0), ((), -1),
    ((1,), 0), ((2,), 0), ((7,), -1), ((31,), 0), ((33,), 0), ((127,), 0), ((1000,), -1),
    ((1025,), 0), ((4099,), 0),
    ((3, 5), 1), ((3, 5), 0), ((3, 5), -2), ((4, 1), 1), ((1, 4), 0), ((1, 1), -1),
    ((7, 1025), 1), ((33, 127), 0), ((64, 257), -1), ((5, 4099), 1), ((4099, 3), 0),
    ((2, 3, 4), 0), ((2, 3, 4), 1), ((2, 3, 4), 2), ((2, 3, 4), -3),
    ((5, 1, 7), 1), ((3, 127, 31), 1), ((3, 1025, 2), 1), ((2, 33, 7), -2),
    ((2, 7, 3, 5), 1), ((2, 7, 3, 5), -1), ((1, 1, 1, 1), 3), ((3, 1, 5, 1), 2),
    ((2, 3, 4, 5, 6), 0), ((2, 3, 4, 5, 6), 2), ((2, 3, 4, 5, 6), -1), ((2, 3, 4, 5, 6), -4),
    ((1, 2, 1, 3, 1), 4),
]


def case_id(case):
    """"2x150x196-d1-inner": the shape, the dim, and "inner" where the dim is not the last of the
    extents (inner > 1), so that `-k "tiers and inner"` picks the column tiers' cases."""
    shape, dim = case
    inner = int(np.prod(shape[dim + 1:])) if shape and dim != -1 else 1
    return f"{'x'.join(map(str, shape)) or 'scalar'}-d{dim}" + ("-inner" if inner > 1 else "")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("case", CPU_CASES, ids=case_id)
def test_forward_matches_reference(case, log, dtype, device, rng):
    shape, dim = case
    x = make_tensor(random_input(rng, shape), dtype, device)
    check_forward(x, dim, log)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("log", OPS)
def test_function_and_method_agree(log, device, rng):
    x = make_tensor(random_input(rng, (6, 37)), mt.float32, device)
    a = check_forward(x, 1, log, style="function")
    b = run_op(x, 1, log, style="method")
    np.testing.assert_array_equal(to_f64(a), to_f64(b))


def test_known_values():
    np.testing.assert_array_equal(mt.tensor([0.0, 0.0]).softmax(0).numpy(), [0.5, 0.5])
    np.testing.assert_allclose(mt.tensor([0.0, 0.0]).log_softmax(0).numpy(), [-np.log(2)] * 2, rtol=1e-7)
    assert mt.tensor(3.5).softmax(0).item() == 1.0
    assert mt.tensor(3.5).log_softmax(-1).item() == 0.0
    y = mt.tensor([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]], dtype=mt.float64).softmax(1).numpy()
    e = np.exp([1.0, 2.0, 3.0])
    np.testing.assert_allclose(y, [e / e.sum(), [1 / 3] * 3], rtol=1e-14)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("case", [((3, 31), 1), ((4, 5, 6), 1), ((2, 3, 4, 5), 0), ((1000,), 0)],
                         ids=case_id)
def test_rows_sum_to_one(case, dtype, device, rng):
    shape, dim = case
    y = to_f64(make_tensor(random_input(rng, shape), dtype, device).softmax(dim))
    assert np.all(y >= 0) and np.all(y <= 1)
    rtol, _ = tol(dtype)
    n = shape[dim]
    # each of n outputs may be off by rtol; a 16-bit sum of rounded outputs by ~sqrt(n) of that
    np.testing.assert_allclose(y.sum(axis=dim), 1.0, atol=rtol * max(4.0, np.sqrt(n)))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [pytest.param(mt.float32, id="float32"), pytest.param(mt.float64, id="float64")])
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("shift", [-50.0, 7.25, 1000.0])
def test_invariant_to_adding_a_constant(shift, log, dtype, device, rng):
    # The shift is exactly representable and small enough to keep x + shift exact in the dtype's
    # precision at the scale of x, so the two inputs have the same softmax exactly in math.
    base = np.round(random_input(rng, (5, 67)) * 64) / 64
    x = make_tensor(base, dtype, device)
    xs = make_tensor(base + shift, dtype, device)
    np.testing.assert_array_equal(to_f64(xs) - shift, to_f64(x))  # the shifted input is exact
    y, ys = to_f64(run_op(x, 1, log)), to_f64(run_op(xs, 1, log))
    rtol, atol = tol(dtype, log)
    np.testing.assert_allclose(ys, y, rtol=4 * rtol, atol=4 * atol)
    assert_close(ys, ref_softmax(base, 1, log), dtype, log=log)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("dim", [0, 1])
def test_large_magnitudes_float32(dim, log, device, rng):
    # ±1e4: a naive exp overflows; around 1e4 + noise every output is a real probability.
    signs = rng.choice([-1.0, 1.0], size=(9, 40))
    x = make_tensor(signs * 1e4 + rng.standard_normal((9, 40)), mt.float32, device)
    y = check_forward(x, dim, log)
    assert np.all(np.isfinite(to_f64(y)))
    x = make_tensor(1e4 + random_input(rng, (9, 40)), mt.float32, device)
    y = check_forward(x, dim, log)
    assert np.all(np.isfinite(to_f64(y)))


@pytest.mark.parametrize("dim", [0, 1], ids=["columns", "rows"])
@pytest.mark.parametrize("dtype", [mt.float32, mt.float64], ids=["float32", "float64"])
def test_cpu_outputs_down_through_the_subnormal_range(dtype, dim, rng):
    """Vectorized exp on the CPU (AVX-512 vscalef or integer exponent arithmetic): outputs from 1
    down past the smallest subnormal keep their precision, subnormals included, and underflow to
    exactly 0 below it. References in long double (80-bit on x86)."""
    np_dtype = np.float32 if dtype == mt.float32 else np.float64
    finfo = np.finfo(np_dtype)
    span = 110.0 if dtype == mt.float32 else 760.0  # e^-span is below the smallest subnormal
    x = -rng.permutation(np.linspace(0.0, span, 3 * 1029)).reshape(3, -1)  # odd row length: a tail
    x[:, 0] = 0.0  # every row has the max 0: the outputs run from ~1/sum down to underflow
    x = x if dim == 1 else np.ascontiguousarray(x.T)
    y = mt.softmax(mt.tensor(x.astype(np_dtype)), dim).numpy()
    xl = x.astype(np_dtype).astype(np.longdouble)
    e = np.exp(xl - xl.max(axis=dim, keepdims=True))
    ref = e / e.sum(axis=dim, keepdims=True)
    normal = ref >= finfo.tiny
    rel = np.abs(y[normal] - ref[normal]) / ref[normal]
    assert rel.max() <= 8 * finfo.eps, f"worst relative error {float(rel.max()):.3g}"
    sub = ~normal
    smallest = finfo.smallest_subnormal
    assert np.count_nonzero(sub & (ref > 2 * smallest)) > 50, "the sweep should cover subnormal outputs"
    assert np.abs(y[sub] - ref[sub]).max() <= 2 * smallest
    assert np.all(y[ref < smallest / 4] == 0)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("log", OPS)
def test_large_magnitudes_float64(log, device, rng):
    x = rng.choice([-1e30, 1e30], size=(6, 17)) * rng.uniform(0.5, 1.5, size=(6, 17))
    x[:, 3] = 2e30  # a unique maximum per row
    y = check_forward(make_tensor(x, mt.float64, device), 1, log)
    out = to_f64(y)
    if log:
        assert np.all(np.isfinite(out))
        assert np.all(out[:, 3] == 0.0)
    else:
        np.testing.assert_array_equal(out[:, 3], 1.0)
        np.testing.assert_array_equal(np.delete(out, 3, axis=1), 0.0)


@pytest.mark.parametrize("device", DEVICES)
def test_minus_infinity_entries(device):
    x = make_tensor([[0.0, -np.inf, 0.0], [-np.inf, 1.0, -np.inf]], mt.float32, device)
    np.testing.assert_array_equal(to_f64(x.softmax(1)), [[0.5, 0.0, 0.5], [0.0, 1.0, 0.0]])
    ls = to_f64(x.log_softmax(1))
    np.testing.assert_allclose(ls[0, [0, 2]], -np.log(2), rtol=1e-6)
    assert ls[0, 1] == -np.inf and ls[1, 1] == 0.0


@pytest.mark.parametrize("device", DEVICES)
def test_nan_and_inf_propagate_like_torch(device):
    x = make_tensor([[np.nan, 1.0, 0.0], [0.5, 1.0, 2.0], [np.inf, 1.0, 0.0]], mt.float32, device)
    for log in (False, True):
        y = to_f64(run_op(x, 1, log))
        assert np.all(np.isnan(y[0])) and np.all(np.isnan(y[2]))
        assert_close(y[1], ref_softmax(to_f64(x)[1], 0, log), mt.float32, log=log)


@pytest.mark.unsanitized
@pytest.mark.parametrize("device", DEVICES)
def test_concurrent_calls_from_threads(device, rng):
    """The GIL is released around kernels: concurrent calls must not interfere."""
    from concurrent.futures import ThreadPoolExecutor

    inputs = [make_tensor(random_input(rng, (64, 513 + i)), mt.float32, device) for i in range(8)]
    expected = [ref_softmax(to_f64(x), 1) for x in inputs]

    def work(i):
        return [to_f64(inputs[i].softmax(1)) for _ in range(5)]

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(work, range(len(inputs))))
    for got, exp in zip(results, expected):
        for y in got:
            assert_close(y, exp, mt.float32)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_log_softmax_is_log_of_softmax(dtype, device, rng):
    x = make_tensor(random_input(rng, (7, 45), scale=2.0), dtype, device)
    ls = to_f64(x.log_softmax(1))
    s = to_f64(x.softmax(1))
    rtol, atol = tol(dtype, log=True)
    np.testing.assert_allclose(np.exp(ls), s, rtol=3 * rtol, atol=3 * atol)


# ---------------------------------------------------------------------------------- empty / views

EMPTY_CASES = [((0,), 0), ((0, 5), 1), ((0, 5), 0), ((3, 0), 1), ((3, 0), 0), ((2, 0, 3), 1),
               ((2, 0, 3), -1), ((2, 3, 0), 1)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("case", EMPTY_CASES, ids=case_id)
def test_empty(case, log, dtype, device):
    shape, dim = case
    x = mt.zeros(shape, dtype=dtype, device=device)
    y = run_op(x, dim, log)
    assert y.shape == shape and y.numel() == 0 and y.dtype == dtype and y.device == x.device
    dy = mt.zeros(shape, dtype=dtype, device=device)
    assert mt._C._softmax_backward(y, dy, dim, log).shape == shape


# Views built from a contiguous base: (name, base shape, view function, dims to reduce over).
VIEWS = [
    ("transpose", (13, 37), lambda t: t.transpose(0, 1), [0, 1]),
    ("T-3d", (4, 5, 6), lambda t: t.T, [0, 1, 2]),
    ("permute", (3, 4, 5, 6), lambda t: t.permute(2, 0, 3, 1), [0, 1, -1]),
    ("step-slice", (10, 40), lambda t: t[1:9:3, ::2], [0, 1]),
    ("offset-cols", (64, 1025), lambda t: t[:, 1:], [1, 0]),
    ("offset-rows", (9, 33), lambda t: t[2:], [1]),
    ("select", (5, 6, 7), lambda t: t.select(1, 3), [0, 1]),
    ("index-none", (4, 9), lambda t: t[1:, None, 2:], [0, 1, 2]),
    ("unsqueeze-expand-dim", (3, 11), lambda t: t.unsqueeze(1).transpose(0, 2), [0, 2]),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v[0])
def test_non_contiguous_input(view, log, dtype, device, rng):
    _, base_shape, make_view, dims = view
    base = make_tensor(random_input(rng, base_shape), dtype, device)
    x = make_view(base)
    base_before = to_f64(base)
    for dim in dims:
        y = check_forward(x, dim, log)
        assert y.data_ptr() != x.data_ptr()
    np.testing.assert_array_equal(to_f64(base), base_before, err_msg="the base was modified")


@pytest.mark.parametrize("device", DEVICES)
def test_output_is_a_new_tensor(device, rng):
    x = make_tensor(random_input(rng, (4, 8)), mt.float32, device)
    for log in (False, True):
        y = run_op(x, -1, log)
        assert y.data_ptr() != x.data_ptr()
        y.fill_(0.5)  # writing the output leaves the input alone
        assert not np.any(to_f64(x) == 0.5)


# --------------------------------------------------------------------------------------- backward

BACKWARD_CASES = [((), 0), ((1,), 0), ((7,), 0), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), 1),
                  ((2, 3, 4), -1), ((4, 1, 6), 1), ((2, 3, 2, 4, 3), 2), ((5, 1025), 1),
                  ((33, 6, 5), 0)]


def backward(y: mt.Tensor, dy: mt.Tensor, dim: int, log: bool) -> mt.Tensor:
    return mt._C._softmax_backward(y, dy, dim, log)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("case", BACKWARD_CASES, ids=case_id)
def test_backward_matches_formula(case, log, dtype, device, rng):
    shape, dim = case
    x = make_tensor(random_input(rng, shape), dtype, device)
    y = run_op(x, dim, log)
    dy = make_tensor(random_input(rng, shape, scale=1.0), dtype, device)
    y_before, dy_before = to_f64(y), to_f64(dy)
    dx = backward(y, dy, dim, log)
    assert dx.shape == y.shape and dx.dtype == dtype and dx.device == y.device and dx.is_contiguous()
    expected = ref_softmax_backward(y_before, dy_before, dim, log)
    # dx is a difference of O(|dy|) terms: scale the absolute tolerance by the size of those terms
    n = shape[dim] if shape else 1
    scale = max(1.0, np.abs(dy_before).max(initial=0.0) * np.sqrt(n)) / tol(dtype)[1] * tol(dtype)[0]
    assert_close(dx, expected, dtype, scale=scale)
    np.testing.assert_array_equal(to_f64(y), y_before)
    np.testing.assert_array_equal(to_f64(dy), dy_before)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("case", [((6,), 0), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), 1), ((2, 1, 3), 1)],
                         ids=case_id)
def test_backward_matches_finite_differences(case, log, device, rng):
    """dL/dx for L = sum(op(x) * g), by central differences of the library's own float64 forward."""
    shape, dim = case
    x0 = random_input(rng, shape, scale=1.5)
    g = random_input(rng, shape, scale=1.0)
    y = run_op(make_tensor(x0, mt.float64, device), dim, log)
    dx = to_f64(backward(y, make_tensor(g, mt.float64, device), dim, log))

    def loss(x):
        return float(np.sum(to_f64(run_op(make_tensor(x, mt.float64, device), dim, log)) * g))

    h = 1e-6
    numeric = np.zeros(shape)
    for i in np.ndindex(*shape):
        xp, xm = x0.copy(), x0.copy()
        xp[i] += h
        xm[i] -= h
        numeric[i] = (loss(xp) - loss(xm)) / (2 * h)
    np.testing.assert_allclose(dx, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("log", OPS)
def test_backward_non_contiguous_grad(log, device, rng):
    x = make_tensor(random_input(rng, (9, 14)), mt.float64, device)
    y = run_op(x, 0, log)
    g_base = make_tensor(random_input(rng, (14, 9)), mt.float64, device)
    dy = g_base.T  # same shape as y, transposed strides
    assert not dy.is_contiguous()
    dx = to_f64(backward(y, dy, 0, log))
    np.testing.assert_allclose(dx, ref_softmax_backward(to_f64(y), to_f64(dy), 0, log), rtol=1e-12, atol=1e-14)


# -------------------------------------------------------------------------------- CUDA-only tiers

# (shape, dim): rows 1..32 wide (warp / sub-warp), 33..1024, 1025..~12K (block), 65536,
# 262144 + 1 (long-row split), 2^20 (cluster).
CUDA_ROW_CASES = [((4096, n), 1) for n in (1, 2, 3, 5, 7, 8, 16, 17, 31, 32)] + [
    ((1000, 33), 1), ((513, 64), 1), ((300, 127), -1), ((256, 255), 1), ((128, 1000), 1),
    ((64, 1024), 1), ((32, 1025), 1), ((16, 2048), 1), ((16, 4099), 1), ((8, 8192), 1),
    ((4, 12288), 1), ((3, 12289), 1), ((2, 65536), 1), ((1, 65536), 1), ((3, 40000), 1),
    ((1, 262145), 1), ((3, 262145), 1), ((1, 2**20), 1), ((2, 2**20 + 3), 1), ((1, 2**22 + 1), 1),
    # >= one row per SM with 1025..32768 columns: the block-per-row register tier and its edges
    ((200, 1025), 1), ((300, 2047), 1), ((160, 4096), 1), ((140, 8193), 1), ((133, 16385), 1),
    ((132, 32768), 1), ((132, 32769), 1),
    # many rows past 256 threads of narrow packs: the wide packs, one block a row (float64 rows
    # of 8193-16384 columns too, in blocks of 513-1024 threads; the last one misaligned; rows of
    # 8192: held blocks, 256 threads of float32, 128 of 16-bit values; float64 rows of 8,129-8,192
    # columns: clusters of about 256-thread blocks, the misaligned one Shifted)
    ((300, 8192), 1), ((300, 8191), 1), ((300, 12000), 1), ((280, 16383), 1),
    # many float32 forward rows past 25,600 columns: clusters of four 256-thread blocks (one of
    # them misaligned); 25,600 and fewer: one block
    ((300, 25600), 1), ((280, 32768), 1), ((270, 30001), 1),
    # float32 rows of 256 narrow threads' packs: held blocks of 128 threads (32 values each in
    # registers) where every pack is owned, else the wide packs (some threads' last pack not owned)
    ((300, 4096), 1), ((300, 4000), 1),
    # 16-bit rows of one block holding 64 values a thread in registers (held blocks), 160 and 256
    # threads (float32 rows of both: the wide packs)
    ((300, 10240), 1), ((300, 16384), 1),
    # rows whose blocks fill the GPU at most once (16-bit: half of it): one pack a thread in
    # float32 and 16-bit types (every thread with a pack, and a last warp partly idle); rows of
    # 1024 a warp's there, softmax's held in its lanes' registers (forward_prefers_block)
    ((400, 1152), 1), ((280, 3000), 1), ((400, 1024), 1),
    # more rows than resident groups, so every group loops over rows through its shared-memory
    # ring: lanes (sub-warp and full warp), block, cluster (a vocabulary-wide row too)
    ((100000, 33), 1), ((60000, 96), 1), ((3000, 2048), 1), ((40, 65536), 1), ((20, 151936), 1),
    # float32 rows of 17-32 columns over a full GPU: 4 lanes of two packs (at 20 columns a lane's
    # second pack is partly or not its own); float64 rows of one narrow block over a long grid: the
    # wide packs
    ((140000, 32), 1), ((140000, 20), 1), ((70000, 260), 1),
    # 16-bit rows of one pack a lane (8 lanes of rows of 64) over one to two fills of the GPU:
    # the Full kernel
    ((100000, 64), 1),
    # aligned rows whose last threads hold part of their packs: in one block, in a cluster whose
    # chunks end inside a block, and over an 8-block cluster
    ((200, 4104), 1), ((100, 40008), 1), ((66, 131072), 1),
    # few long rows over 16-block clusters of the wide packs (16-bit: 64 values a thread, the
    # softmax's held in registers (held rows; every pack a thread's own: the Full kernel),
    # log_softmax's taken from the ring pack by pack, max and sum in one online pass); a language
    # model's vocabulary over a few rows (held rows of 8-block clusters, a thread's last packs
    # partly or not its own)
    ((16, 262144), 1), ((4, 128256), 1),
    # more rows than two an SM, each past 16 blocks of 512 threads' wide packs in float64: its
    # forward takes persistent 16-block clusters of 544 threads (a chunk ending inside a thread)
    ((300, 131080), 1),
    # misaligned rows (a GPT-2 vocabulary) over more rows than two an SM: the cluster tier's
    # Shifted kernels (misaligned_rows_shifted): a row read from the 16-byte boundary before it
    ((270, 50257), 1),
    # 16-bit rows of 128 packs over a long lanes grid, misaligned: the shifted row's extra pack
    # does not fit the lanes, so these go element by element
    ((20000, 1021), 1),
]
# (outer, axis, inner) for softmax over a non-last dim.
CUDA_INNER_CASES = [((o, a, i), 1) for a in (3, 128, 4096) for i in (1, 7, 3136)
                    for o in ((1, 5) if a * i < 2**20 else (1,))] + [
    # the column tier (4a): a thread holds up to 8 packs of the axis (4 backward), a block up to
    # 1024 steps (512), a cluster 16 blocks; past that the axis leaves for tier 4. Axes with
    # padding (21 = 3 x 8, 33, 150), and a short axis over a wide inner.
    ((2, a, i), 1) for a in (2, 21, 31, 33, 150, 512, 513, 1000, 1024, 1025, 8192, 8193, 16384, 16385)
    for i in (5, 196)] + [((3, 5, 70001), 1), ((2, 4, 65536), 1), ((3, 1, 37), 1), ((2, 127, 9), 1)]
CUDA_INNER_CASES += [
    # the staged column tier (4b): inner in whole 16-byte packs but not whole tiles of them (40, 136
    # elements), axes for one block, a cluster of 64-byte tiles, and of 32-byte tiles
    ((2, a, i), 1) for a in (300, 9000, 20000) for i in (40, 136)] + [
    # 16-bit forward groups in line-wide tiles over clusters of 2 and 4 blocks (line_pays_16bit)
    ((2, 1024, 128), 1), ((2, 2048, 128), 1),
    # inner 2: narrower than any pack
    ((3, 150, 2), 1), ((2, 4097, 2), 1)] + [
    # axes of 2 steps over more than a round of one-block groups: tier 4a's prefetching kernel
    # (a last tile past inner; 16 columns, whose blocks lay the axis over 8-16 threads that fold
    # through shared memory)
    ((1100, 2, 1024), 1), ((64, 2, 20000), 1), ((6000, 2, 16), 1)]


def cuda_check(shape, dim, log, dtype, rng, view=None):
    data = random_input(rng, shape)
    x = make_tensor(data, dtype, "cuda")
    if view is not None:
        x = view(x)
    return check_forward(x, dim, log)


def cuda_check_both_ways(shape, dim, log, dtype, rng):
    """The forward on fresh input, then the backward from its output against float64."""
    y = cuda_check(shape, dim, log, dtype, rng)
    dy = make_tensor(random_input(rng, shape, scale=1.0), dtype, "cuda")
    expected = ref_softmax_backward(to_f64(y), to_f64(dy), dim, log)
    rtol, atol = tol(dtype)
    scale = np.abs(to_f64(dy)).max() * np.sqrt(shape[dim]) * rtol / atol
    assert_close(backward(y, dy, dim, log), expected, dtype, scale=max(1.0, scale))


def rerun_under_override(setting, tests):
    """Tuning overrides are read once per process: runs the tests `tests` (a -k expression) again
    in a child pytest with `setting` (NAME=value, or several separated by spaces) in its
    environment."""
    overrides = dict(item.split("=") for item in setting.split())
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", __file__,
         "-k", f"({tests}) and not overrides"],
        env={**os.environ, **overrides}, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and " skipped" not in proc.stdout, proc.stdout[-2000:]


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("case", CUDA_ROW_CASES + CUDA_INNER_CASES, ids=case_id)
def test_cuda_tiers(case, log, dtype, rng):
    shape, dim = case
    cuda_check(shape, dim, log, dtype, rng)


@pytest.mark.cuda
@pytest.mark.parametrize("setting", ["MT_SOFTMAX_STAGED_TMA=0", "MT_SOFTMAX_STAGED_TMA=1",
                                     "MT_SOFTMAX_STAGED_KB=64"])
def test_cuda_staged_columns_under_copy_overrides(setting):
    """Tier 4b's cases with its threads' own cp.async copies everywhere, with the bulk tensor
    copy engine wherever it can run (by default it takes only float32 and float64 forward cases
    of few rounds), and with 64 KB stages of 256 threads on short grids too (whose forward, and
    backward over clusters of 2-8 blocks, take 128 threads and 32 KB by default)."""
    rerun_under_override(setting,
                         "(test_cuda_tiers or test_cuda_backward_tiers) and (x128x or x150x or x300x "
                         "or x1000x or x4096x or x8192x or x9000x or x16384x or x20000x) "
                         "or inner_dims_with_minus_infinity")


@pytest.mark.cuda
@pytest.mark.parametrize("setting", ["MT_SOFTMAX_HELD_ROWS=0", "MT_SOFTMAX_HELD_ROWS=1",
                                     "MT_SOFTMAX_HELD_CLUSTER=0", "MT_SOFTMAX_HELD_BLOCKS=0",
                                     "MT_SOFTMAX_HELD_BLOCKS=1"])
def test_cuda_held_rows_under_overrides(setting):
    """The rows that 16-bit softmax holds in registers 64 values a thread (held rows, held
    blocks; float32's held blocks 32) without them (the ring's clusters, the split row, the block
    tier's narrow or wide packs), held wherever they fit (blocks from 32 threads), and held rows
    of 32K-262K values in the fewest blocks, not blocks of 128 threads."""
    rerun_under_override(setting, "test_cuda_tiers and (x65536 or 3x40000 or x128256 or x131072 "
                         "or x151936 or x262144 or 132x32768 or 300x8192 or 300x10240 or "
                         "300x16384 or 160x4096 or 300x4096 or 3000x2048)")


@pytest.mark.cuda
@pytest.mark.parametrize("setting", ["MT_SOFTMAX_CLUSTER_PERSISTENT=0 MT_SOFTMAX_HELD_BWD=0",
                                     "MT_SOFTMAX_CLUSTER_PERSISTENT=1 MT_SOFTMAX_HELD_BWD=0"])
def test_cuda_wide_clusters_under_overrides(setting):
    """Rows past 16 blocks of 512 threads (float64's forward of 131,080 values, float32's
    backward of 131,080, 151,936 and 262,144) in clusters of the wide packs that loop over rows
    through a ring of stages (=1) and in a cluster a row (=0), whichever the shape's rule picks by
    default (the backward's rows of 262,144 take twice the packs a thread by default; those of
    131,080 and 151,936 take tier 2h's registers, turned off here)."""
    rerun_under_override(setting, "(test_cuda_tiers or test_cuda_backward_tiers) and "
                         "(x131080 or x151936 or 40x262144)")


@pytest.mark.cuda
@pytest.mark.parametrize("setting", ["MT_SOFTMAX_REREAD=0", "MT_SOFTMAX_REREAD=1"])
def test_cuda_backward_reread_rows_under_overrides(setting):
    """The backward's rows of many without tier 2r (the block tier's ring), and tier 2r forced
    onto every aligned 16- and 32-bit row of many that reaches it: float32 rows of two trips
    whose second leaves threads idle (3840, 4088 values), of four trips (8192) and sixteen
    (32768)."""
    rerun_under_override(setting, "test_cuda_backward_tiers and (300x768 or 300x1000 or "
                         "300x2048 or 300x3840 or 300x4088 or 300x4096 or 300x8192 or 300x32768)")


@pytest.mark.cuda
@pytest.mark.parametrize("setting", ["MT_SOFTMAX_REREAD_CLUSTER=0", "MT_SOFTMAX_REREAD_CLUSTER=1"])
def test_cuda_backward_reread_clusters_under_overrides(setting):
    """Few long backward rows without tier 2r's clusters (the ring's clusters, the split row),
    and with them wherever they run: shorter rows (2 x 65536: 512 packs a block in 16-bit) and
    longer ones (1 x 1048576: 8192 packs a block in 16-bit; float32 rows of 160K or more stay on
    the whole-GPU tier, which comes first)."""
    rerun_under_override(setting, "test_cuda_backward_tiers and (2x65536 or 1x1048576 or "
                         "6x180000 or 20x151936)")


@pytest.mark.cuda
@pytest.mark.parametrize("setting", ["MT_SOFTMAX_HELD_BWD=0", "MT_SOFTMAX_HELD_BWD=1"])
def test_cuda_backward_held_rows_under_overrides(setting):
    """The backward's long 16- and 32-bit rows without tier 2h (tier 3a's clusters), and tier 2h
    wherever its block fits: float32 rows of 32,768 (128 threads a block) and within one round
    of clusters (20 x 151936, which 16-bit rows leave to tier 2r's clusters by default)."""
    rerun_under_override(setting, "test_cuda_backward_tiers and (300x32768 or 20x151936 or "
                         "64x131080 or 64x152064)")


@pytest.mark.cuda
def test_cuda_backward_rereading_dy_under_override():
    """Tier 3b's backward reading dy again in its output pass, forced wherever the backward cases
    reach tier 3b (float64's long rows: also misaligned, and within a round)."""
    rerun_under_override("MT_SOFTMAX_BLOCK_REREAD=1",
                         "test_cuda_backward_tiers and (65537 or 151936 or 131080)")


# Shapes for the tests of -inf, NaN and +inf inputs: rows across the row tiers (the lanes to the
# grid and the split row), columns across the column tiers (the -inf test takes the first four).
SPECIAL_VALUE_ROW_SHAPES = [(4096, 128), (300, 4096), (300, 8192), (300, 32768), (40, 65536),
                            (20, 151936), (16, 262144), (100, 40008), (3, 2**20 + 3)]
SPECIAL_VALUE_INNER_SHAPES = [(2, 300, 136), (3, 1000, 196), (1, 4096, 64), (2, 9000, 40),
                              (4, 64, 4096), (2, 21, 3136), (1100, 2, 1024)]


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("shape", SPECIAL_VALUE_ROW_SHAPES, ids=str)
def test_cuda_rows_with_minus_infinity_parts(shape, log, dtype, rng):
    """-inf over the first 60% of every row, so that whole lanes, blocks and blocks of a cluster or
    grid see only -inf (they must add 0, not NaN), and one row that is -inf throughout (NaN, as
    torch)."""
    data = random_input(rng, shape)
    data[:, : int(shape[1] * 0.6)] = -np.inf
    data[1, :] = -np.inf
    check_forward(make_tensor(data, dtype, "cuda"), 1, log)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("shape", SPECIAL_VALUE_ROW_SHAPES, ids=str)
def test_cuda_rows_with_nan(shape, log, dtype, rng):
    """A NaN turns its whole row into NaNs, as in torch, in every row tier: a NaN among finite
    values; a NaN inside a stretch of -inf that covers whole lanes, blocks or blocks of a cluster
    (groups that see only -inf skip their exps: the NaN must not be skipped with them); +inf
    (inf - inf is NaN). The other rows stay exact."""
    data = random_input(rng, shape)
    cols = shape[1]
    data[0, rng.integers(cols)] = np.nan
    data[1, : int(cols * 0.6)] = -np.inf
    data[1, rng.integers(int(cols * 0.6))] = np.nan
    data[2, rng.integers(cols)] = np.inf
    check_forward(make_tensor(data, dtype, "cuda"), 1, log)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("shape", SPECIAL_VALUE_INNER_SHAPES, ids=str)
def test_cuda_inner_dims_with_nan(shape, log, dtype, rng):
    """Softmax over dim 1 with a NaN in a column, across the column tiers: among finite values,
    inside -inf over the first 60% of the axis, and +inf; those columns come out NaN, the rest
    exact."""
    data = random_input(rng, shape)
    axis, inner = shape[1], shape[2]
    data[0, rng.integers(axis), 0] = np.nan
    data[-1, : int(axis * 0.6), inner - 1] = -np.inf
    data[-1, rng.integers(int(axis * 0.6)), inner - 1] = np.nan
    data[0, rng.integers(axis), inner // 2] = np.inf
    check_forward(make_tensor(data, dtype, "cuda"), 1, log)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("shape", SPECIAL_VALUE_INNER_SHAPES[:4] + SPECIAL_VALUE_INNER_SHAPES[-1:],
                         ids=str)
def test_cuda_inner_dims_with_minus_infinity_parts(shape, log, dtype, rng):
    """Softmax over dim 1 with -inf over the first 60% of the axis, so that whole threads, blocks
    and blocks of a cluster see only -inf, and one column that is -inf throughout (NaN)."""
    data = random_input(rng, shape)
    data[:, : int(shape[1] * 0.6), :] = -np.inf
    data[0, :, 1] = -np.inf
    check_forward(make_tensor(data, dtype, "cuda"), 1, log)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("case", [
    ("cols-1", (64, 1025), lambda t: t[:, 1:], 1),
    ("cols-3", (64, 1025), lambda t: t[:, 3:], 1),
    ("rows-offset", (65, 1024), lambda t: t[1:], 1),
    ("flat-offset", (1, 4099), lambda t: t[0, 1:], 0),
    ("long-offset", (1, 262147), lambda t: t[:, 1:], 1),
    ("step", (64, 2050), lambda t: t[:, ::2], 1),
    ("transposed", (1025, 64), lambda t: t.T, 1),
    ("inner-offset", (2, 129, 3137), lambda t: t[:, :, 1:], 1),
    # contiguous, its start 8 bytes past a 16-byte boundary in 16-bit (8-byte packs, tier 4b)
    ("inner-start", (3, 129, 3140), lambda t: t[1:], 1),
], ids=lambda c: c[0])
def test_cuda_misaligned_views(case, log, dtype, rng):
    _, shape, view, dim = case
    cuda_check(shape, dim, log, dtype, rng, view=view)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("case", [((4096, 7), 1), ((128, 1000), 1), ((16, 4099), 1), ((2, 65536), 1),
                                  ((1, 262145), 1), ((1, 2**20), 1), ((4, 128, 3136), 1),
                                  ((2, 4096, 7), 1), ((2, 21, 3136), 1), ((2, 513, 196), 1),
                                  ((2, 8193, 5), 1), ((1, 40000, 3), 1), ((2, 300, 136), 1),
                                  ((2, 9000, 40), 1),
                                  # aligned rows of the lanes tier: every lane a pack (64; one
                                  # lane, 8), lanes without a pack of their own (40), two packs a
                                  # lane, the last lanes' second not their own (384) or every one
                                  # theirs (512): 16-bit, y and dy held as words where lanes own
                                  # every pack (the Full kernels), else as floats
                                  ((1000, 64), 1), ((3000, 8), 1), ((3000, 40), 1), ((600, 384), 1),
                                  ((700, 512), 1),
                                  # rows of many under 512 packs, a block of their packs rounded
                                  # up to a warp a row (tier 2r; 16-bit: 96 and 480 threads a pack
                                  # each, 125 of 128, 511 of 512)
                                  ((300, 768), 1), ((300, 3840), 1), ((300, 1000), 1),
                                  ((300, 4088), 1),
                                  # 16- and 32-bit rows of many read twice by a block a row
                                  # (tier 2r): one trip of 512 threads (float32: 2048), and two
                                  ((300, 2048), 1), ((300, 4096), 1), ((300, 8192), 1),
                                  # misaligned rows of the lanes tier (16-bit: one pack a lane,
                                  # element by element into floats; float32: two packs a lane)
                                  ((500, 100), 1),
                                  # tier 4b's backward over a grid of a round or more: 128-thread
                                  # blocks, 32 KB stages, line-wide tiles over 4 blocks
                                  ((32, 512, 512), 1),
                                  # and over 8 blocks in under three rounds (16-bit: its rolled
                                  # loops)
                                  ((1, 2048, 1024), 1),
                                  # many rows a narrow block of more than 512 threads would hold:
                                  # the wide packs instead (float32 at 8191, 16-bit at 12290)
                                  ((300, 8191), 1), ((300, 12290), 1),
                                  # rows read from the ring: a cluster a row over many rows, a
                                  # misaligned row over a cluster (element by element); few rows
                                  # of 152K (16-bit: tier 2r's clusters; float32, more than a
                                  # round of its clusters: tier 2h)
                                  ((300, 32768), 1), ((40, 65537), 1), ((20, 151936), 1),
                                  # rows of 131K-156K floats or 197K 16-bit values over more
                                  # rows than their 16-block clusters hold at once: held in
                                  # registers (tier 2h)
                                  ((64, 152064), 1),
                                  # float32 rows of 256K over more rows than tier 3d takes:
                                  # a cluster a row of 16 blocks at twice the wide packs (two
                                  # blocks of the wide packs' 1,024 threads would not fit an SM);
                                  # so too many misaligned rows past 16 blocks of 512 threads
                                  # (float32; the Shifted kernel), and 16-bit rows of 400K
                                  ((40, 262144), 1), ((264, 131075), 1), ((20, 400000), 1),
                                  # few float32 rows of 160K or more: the whole-GPU tier
                                  ((6, 180000), 1),
                                  # float64 rows over 16 blocks' shared memory (tier 3b), two
                                  # rounds of them or more: y cached, dy read again from L2
                                  # (16- and 32-bit: tier 2h)
                                  ((64, 131080), 1)],
                         ids=case_id)
def test_cuda_backward_tiers(case, log, dtype, rng):
    shape, dim = case
    x = make_tensor(random_input(rng, shape), dtype, "cuda")
    y = run_op(x, dim, log)
    dy = make_tensor(random_input(rng, shape, scale=1.0), dtype, "cuda")
    expected = ref_softmax_backward(to_f64(y), to_f64(dy), dim, log)
    rtol, atol = tol(dtype)
    scale = np.abs(dy.cpu().float().numpy()).max() * np.sqrt(shape[dim]) * rtol / atol
    assert_close(backward(y, dy, dim, log), expected, dtype, scale=max(1.0, scale))


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("case", [((2, 65536), 1), ((1, 2**20), 1), ((64, 1025), 1), ((3, 4096, 7), 1)],
                         ids=case_id)
def test_cuda_matches_cpu(case, dtype, rng):
    shape, dim = case
    x = make_tensor(random_input(rng, shape), dtype, "cpu")
    for log in (False, True):
        cpu = to_f64(run_op(x, dim, log))
        gpu = to_f64(run_op(x.cuda(), dim, log))
        rtol, atol = tol(dtype, log)
        np.testing.assert_allclose(gpu, cpu, rtol=2 * rtol, atol=2 * atol)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [pytest.param(mt.float32, id="float32"), pytest.param(mt.float16, id="float16")])
def test_cuda_large_magnitudes_long_rows(dtype, rng):
    scale = 1e4 if dtype_name(dtype) == "float32" else 6e4
    for shape in ((4, 4099), (1, 262145), (1, 2**20)):
        data = rng.uniform(-scale, scale, size=shape)
        y = check_forward(make_tensor(data, dtype, "cuda"), 1, False)
        assert np.all(np.isfinite(to_f64(y)))


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [pytest.param(mt.float16, id="float16"), pytest.param(mt.bfloat16, id="bfloat16")])
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("shift", [-64.0, 60.0, 3000.0])
@pytest.mark.parametrize("shape", [(4096, 128), (2048, 1024), (300, 4096), (300, 32768),
                                   (270, 65536)], ids=str)
def test_cuda_16bit_maxima_either_side_of_the_fused_exp(shape, shift, log, dtype, rng):
    # 16-bit rows take exp(x - m) as one fma and the hardware ex2 while |m| <= 64, else with the
    # subtraction first (with_shifted_exp): held in registers (lanes, held blocks), and re-read
    # from the shared-memory ring (a block's and a cluster's wide packs: the sum's exps, and the
    # softmax output's shift folded into its fma, with_fwd_out). Maxima on either side of 64
    # within a row and between rows (-64, 60 +- a few), and far past it.
    data = random_input(rng, shape) + shift
    check_forward(make_tensor(data, dtype, "cuda"), 1, log)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [pytest.param(mt.float32, id="float32"),
                                   pytest.param(mt.float16, id="float16"),
                                   pytest.param(mt.bfloat16, id="bfloat16")])
@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("shape", [(4096, 32), (4096, 128), (2048, 1024), (300, 32768),
                                   (270, 65536)], ids=str)
def test_cuda_log_softmax_near_zero_under_a_rounded_shift(shape, sign, dtype, rng):
    # One element 20 above the rest of its row: its log_softmax is about -n e^-20, near 0, where
    # the absolute error is held to 2e-6. At a max of +-48.8125 (+-45 in bfloat16) the float32
    # product m log2(e) rounds off by 2.6e-6 / ln 2, which the fused exp would carry into log(sum)
    # and so into every output; log_softmax declines it (with_shifted_exp). Rows held in registers
    # (lanes) and re-read from the shared-memory ring (lanes, a block, a cluster).
    m = sign * (45.0 if dtype_name(dtype) == "bfloat16" else 48.8125)
    data = np.full(shape, m - 20.0)
    data[np.arange(shape[0]), rng.integers(0, shape[1], size=shape[0])] = m
    check_forward(make_tensor(data, dtype, "cuda"), 1, True)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("shift", [-64.0, 60.0, 3000.0])
@pytest.mark.parametrize("shape", [(4, 21, 3136), (2, 300, 136), (2, 9000, 40), (2, 1000, 196)],
                         ids=str)
def test_cuda_column_maxima_either_side_of_the_fused_exp(shape, shift, log, dtype, rng):
    # The column tiers (4a: a short axis in registers; 4b: a block's and a cluster's shared
    # memory; 4c: a slab's running sums and its output, 16-bit only) take a softmax's exps as one
    # fma and the hardware ex2 where every column max (4c: running max) of a thread is within 64
    # (16-bit; float32 in 4b: any finite max under 2^126), else with the subtraction first
    # (column_shifts): maxima on either side of 64 between the columns of one thread (-64, 60 +-
    # a few), and far past it.
    data = random_input(rng, shape) + shift
    check_forward(make_tensor(data, dtype, "cuda"), 1, log)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [pytest.param(mt.float32, id="float32"), pytest.param(mt.bfloat16, id="bfloat16")])
@pytest.mark.parametrize("shape", [(4, 21, 3136), (2, 300, 136)], ids=str)
def test_cuda_columns_near_the_largest_float(shape, dtype, rng):
    # Column maxima past 2^126, whose m log2(e) would overflow float32: the column tiers' plain
    # exps there (outputs finite: one-hot columns, no NaN from an infinite shift), beside columns
    # of ordinary values in the same threads.
    data = random_input(rng, shape)
    big = data[:, :, ::3]
    data[:, :, ::3] = np.sign(big) * (3e38 + np.clip(big, -3, 3) * 1e37)  # |x| <= 3.3e38
    y = check_forward(make_tensor(data, dtype, "cuda"), 1, False)
    assert np.all(np.isfinite(to_f64(y)))


# Few rows too long for a cluster: the whole-GPU tier (3d), one row over every SM or several rows
# sharing them, aligned and misaligned (float32's [8, 262144] takes it in place of clusters of
# 1024-thread blocks; [9, 200003] is such rows misaligned); also run below under the overrides
# that reach its other paths and the split-row tier standing in for it.
LONG_ROW_CASES = [((1, 262145), 1), ((3, 2**20 + 3), 1), ((2, 2**20), 1), ((5, 300001), 1),
                  ((524288,), 0), ((130, 9000), 1), ((200, 4104), 1), ((8, 262144), 1),
                  ((9, 200003), 1)]


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("case", LONG_ROW_CASES, ids=case_id)
def test_cuda_long_rows(case, log, dtype, rng):
    shape, dim = case
    cuda_check_both_ways(shape, dim, log, dtype, rng)


@pytest.mark.cuda
@pytest.mark.parametrize("setting", ["MT_SOFTMAX_COLUMN_PREFETCH=1", "MT_SOFTMAX_COLUMN_PREFETCH=0"])
def test_cuda_inner_under_prefetch_overrides(setting):
    """The inner-dim cases with tier 4a's prefetching kernel wherever it can run (the forward's
    axes of 2 steps, a block a group: within a round of blocks too), and with none."""
    rerun_under_override(setting, "(test_cuda_tiers and inner) or inner_dims_with")


# A 16-bit row a little longer than the GPU's shared memory holds: tier 3d keeps each block's
# short tail (under two packs a thread) in registers. (The overrides below reach that path on
# small rows: MT_SOFTMAX_GRID_CACHE_PACKS=37 leaves short tails and long ones.)
@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [pytest.param(mt.float16, id="float16"),
                                   pytest.param(mt.bfloat16, id="bfloat16")])
@pytest.mark.parametrize("log", OPS)
def test_cuda_long_row_short_tail(log, dtype, rng):
    cuda_check_both_ways((1, 2**24 + 24), 1, log, dtype, rng)


@pytest.mark.cuda
@pytest.mark.parametrize("setting", [
    "MT_SOFTMAX_NO_GRID_SYNC=1",         # the split-row tier (GPUs without cooperative launches)
    "MT_SOFTMAX_GRID_CACHE_PACKS=37",    # tier 3d re-reading most of each chunk from global memory
    "MT_SOFTMAX_GRID_ROWS=1",            # tier 3d ahead of the cluster tiers, a block or two a row
    "MT_SOFTMAX_GRID_EVICT_CACHED=0",    # tier 3d's cached copies without the L2 evict-first hint
    "MT_SOFTMAX_GRID_TAGGED=0",          # tier 3d's float partials met at a grid barrier
    "MT_SOFTMAX_GRID_ONLINE=0",          # tier 3d's cached packs summed in two steps (max, exps)
    "MT_SOFTMAX_GRID_ONLINE=1",          # ... and online as they land, float64's log_softmax too
    "MT_SOFTMAX_GRID_OUT_EVICT=-1",      # tier 3d's output stores streaming where chunks are held
])
def test_cuda_long_rows_under_overrides(setting):
    """The long-row cases (and the rows with -inf parts) under each override."""
    rerun_under_override(setting, "test_cuda_long_rows or rows_with_minus_infinity")


# Short inner extents: tier 4c takes the whole (axis x inner) slab flat over a cluster (the old
# tiers' path for the same shapes runs below under MT_SOFTMAX_COLUMN_SLAB=-1, and tier 4c for
# every shape it can run under =1). Columns whose period spans 2, 4 or 8 rows of 16-byte packs
# (196, 10, 3, 49; 2: one thread a period), whole-pack rows (64, 784), slabs that are not a whole
# number of packs in some dtypes (999 x 196: the old tiers), a last block of fewer rows, one block
# a slab (704 x 49, 4000 x 10), slabs whose blocks take more than one wave (80 x 1024 x 49 in
# float64 and in the float32 backward), more than 16 blocks' worth and slabs too small (the old
# tiers), and more columns than a block has threads (500 in 16-bit: the folds take two passes).
SHORT_INNER_CASES = [((2, 1000, 196), 1), ((3, 999, 196), 1), ((2, 2000, 49), 1), ((4, 704, 49), 1),
                     ((5, 4000, 10), 1), ((2, 12000, 3), 1), ((2, 4096, 64), 1), ((2, 600, 784), 1),
                     ((1, 20000, 196), 1), ((64, 2, 196), 1), ((4, 64, 49), 1), ((80, 1024, 49), 1),
                     ((2, 20000, 2), 1), ((2, 130, 500), 1)]


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("case", SHORT_INNER_CASES, ids=case_id)
def test_cuda_short_inner(case, log, dtype, rng):
    shape, dim = case
    cuda_check_both_ways(shape, dim, log, dtype, rng)


@pytest.mark.cuda
@pytest.mark.parametrize("setting", [
    "MT_SOFTMAX_COLUMN_SLAB=-1",     # tiers 4b / 4a for the short inner extents
    "MT_SOFTMAX_COLUMN_SLAB=1",      # tier 4c wherever it can run (784 columns too)
    "MT_SOFTMAX_SLAB_CLUSTER=16",    # slabs over up to 16 blocks of a few rows each
    "MT_SOFTMAX_SLAB_THREADS=32",    # one period of packs a block: each thread takes many
    "MT_SOFTMAX_SLAB_BATCHES=1",     # every copy in one batch, reduced once all have landed
    "MT_SOFTMAX_SLAB_BATCHES=8",     # the most batches: short runs leave some of them empty
])
def test_cuda_short_inner_under_overrides(setting):
    """The short-inner cases (and the inner dims with -inf parts) under each override."""
    rerun_under_override(setting, "test_cuda_short_inner or inner_dims_with_minus_infinity")


# One small case per tier (and the backward), for compute-sanitizer: memcheck and racecheck run
# these from scripts/gpu_check.sh (`-k sanitizer_subset`), where every kernel runs ~100x slower.
SANITIZER_CASES = [((64, 7), 1), ((300, 1000), 1), ((200, 1025), 1), ((4, 12288), 1), ((2, 65536), 1),
                   ((1, 262145), 1), ((2, 128, 7), 1), ((1, 4096, 33), 1), ((2, 21, 3136), 1),
                   ((1, 2048, 64), 1), ((200, 4104), 1), ((100, 40008), 1), ((2, 1000, 196), 1),
                   ((2, 130, 500), 1)]


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [pytest.param(mt.float32, id="float32"), pytest.param(mt.float16, id="float16")])
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("case", SANITIZER_CASES, ids=case_id)
def test_sanitizer_subset(case, log, dtype, rng):
    shape, dim = case
    cuda_check(shape, dim, log, dtype, rng)
    x = make_tensor(random_input(rng, shape), dtype, "cuda")
    y = run_op(x, dim, log)
    dy = make_tensor(random_input(rng, shape, scale=1.0), dtype, "cuda")
    expected = ref_softmax_backward(to_f64(y), to_f64(dy), dim, log)
    scale = max(1.0, np.abs(to_f64(dy)).max() * np.sqrt(shape[dim])) / tol(dtype)[1] * tol(dtype)[0]
    assert_close(backward(y, dy, dim, log), expected, dtype, scale=scale)
