"""The softmax kernel ladder (ops/softmax/ladder): every variant against a float64 NumPy reference.

Calls the private binding ``mt._C._softmax_impl(x, dim, log, impl)`` so the tests do not depend on
how the package spells ``mt.softmax(x, dim, impl=...)``. CPU variants run everywhere; CUDA variants
are marked ``cuda`` and skip without a GPU.

Tolerances: the ladder's reductions are the textbook ones — naive and online sum a whole row in one
thread — so a float32 sum of n terms carries a relative error growing like sqrt(n) * eps. The
dtype's tolerance is widened by sqrt(n / 256) for rows longer than 256, which still catches any
real mistake (a wrong max, a lost chunk, a missed element is off by far more).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import minitensor as mt
from conftest import OPS, dtype_name, make_tensor, random_input, ref_softmax, to_f64, tol

CPU_IMPLS = ["auto", "safe", "online"]
CUDA_IMPLS = ["auto", "naive", "online", "warp", "block", "block_shfl", "block_smem", "vec4", "multiblock"]
# Variants that refuse inner > 1 (softmax over a non-last dim), with the words their error uses.
LAST_DIM_ONLY = {"vec4"}
CUDA_DTYPES = [pytest.param(mt.float32, id="float32"), pytest.param(mt.float64, id="float64")]
ALL_DTYPES = [pytest.param(getattr(mt, n), id=n) for n in ("float32", "float64", "float16", "bfloat16")]

def run(x, dim: int, log: bool, impl: str):
    return mt._C._softmax_impl(x, dim, log, impl)


def check(x, dim: int, log: bool, impl: str):
    """Runs `impl` on x and compares with the reference computed from x's actual values."""
    before = to_f64(x)
    y = run(x, dim, log, impl)
    assert y.shape == x.shape and y.dtype == x.dtype and y.device == x.device
    assert y.is_contiguous()
    expected = ref_softmax(before, dim, log)
    n = before.shape[dim] if before.ndim else 1
    widen = max(1.0, math.sqrt(n / 256))
    rtol, atol = tol(x.dtype, log)
    np.testing.assert_allclose(to_f64(y), expected, rtol=rtol * widen, atol=atol * widen,
                               err_msg=f"impl={impl} shape={tuple(x.shape)} dim={dim} log={log}")
    np.testing.assert_array_equal(to_f64(x), before, err_msg=f"impl={impl} modified its input")


def case_id(case):
    shape, dim = case
    return f"{'x'.join(map(str, shape)) or 'scalar'}-d{dim}"


# Last-dim rows of odd, prime and power-of-two-adjacent widths; a few non-last dims (inner > 1).
ROW_CASES = [((1, 1), 1), ((3, 1), 1), ((4, 31), 1), ((2, 32), 1), ((5, 33), 1), ((7, 1000), 1),
             ((3, 1025), 1), ((2, 4099), -1), ((1000, 33), 1), ((7,), 0), ((), 0)]
INNER_CASES = [((3, 37, 5), 1), ((2, 1025, 3), 1), ((33, 4), 0), ((2, 3, 4, 5), 1)]


# ----------------------------------------------------------------------------------------------
# The lists


def test_impl_lists():
    cpu = mt._C.softmax_impls("cpu")
    cuda = mt._C.softmax_impls("cuda")
    assert list(cpu) == CPU_IMPLS, "auto first, then the ladder in order"
    assert list(cuda) == CUDA_IMPLS
    for impls in (cpu, cuda):
        assert all(isinstance(d, str) and d for d in impls.values())


def test_package_softmax_impls():
    if not hasattr(mt, "softmax_impls"):
        pytest.skip("minitensor.softmax_impls is not wired into the package yet")
    assert list(mt.softmax_impls("cpu")) == CPU_IMPLS
    assert list(mt.softmax_impls("cuda")) == CUDA_IMPLS


@pytest.mark.parametrize("log", OPS)
def test_package_impl_argument(log, rng):
    x = make_tensor(random_input(rng, (4, 37)), mt.float64)
    fn = mt.log_softmax if log else mt.softmax
    try:
        y = fn(x, 1, impl="online")
    except TypeError as error:
        pytest.skip(f"minitensor.softmax does not take impl= yet ({error})")
    np.testing.assert_allclose(to_f64(y), ref_softmax(to_f64(x), 1, log), rtol=1e-12, atol=1e-13)


# ----------------------------------------------------------------------------------------------
# CPU variants


@pytest.mark.parametrize("impl", CPU_IMPLS)
@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("case", ROW_CASES + INNER_CASES + [((1, 65537), 1)], ids=case_id)
def test_cpu_variants(case, log, dtype, impl, rng):
    shape, dim = case
    check(make_tensor(random_input(rng, shape), dtype), dim, log, impl)


@pytest.mark.parametrize("impl", CPU_IMPLS)
@pytest.mark.parametrize("log", OPS)
def test_cpu_views_and_extremes(log, impl, rng):
    base = make_tensor(random_input(rng, (9, 1026)), mt.float32)
    check(base[:, 1:], 1, log, impl)                       # strided view: gathered first
    flat = make_tensor(random_input(rng, (1 + 5 * 33,)), mt.float32)
    check(flat[1:].reshape(5, 33), 1, log, impl)           # contiguous, one element into its buffer
    check(make_tensor(random_input(rng, (4, 257), scale=60.0), mt.float32), 1, log, impl)  # exp(x) overflows
    masked = random_input(rng, (6, 40))
    masked[:, ::3] = -np.inf                               # attention-style masking, first column too
    check(make_tensor(masked, mt.float64), 1, log, impl)


def test_cpu_empty(rng):
    for impl in CPU_IMPLS:
        y = run(mt.zeros(3, 0), 1, False, impl)
        assert tuple(y.shape) == (3, 0)


# ----------------------------------------------------------------------------------------------
# Errors


def test_unknown_impl_lists_the_names():
    x = mt.zeros(2, 3)
    with pytest.raises(ValueError, match=r"unknown softmax impl 'fastest'.*'auto', 'safe', 'online'"):
        run(x, 1, False, "fastest")
    with pytest.raises(ValueError, match=r"'warp'.*device cpu"):  # a CUDA variant on a CPU tensor
        run(x, 1, False, "warp")


def test_dim_and_dtype_errors():
    with pytest.raises(IndexError, match="Dimension out of range"):
        run(mt.zeros(2, 3), 2, False, "safe")
    with pytest.raises(TypeError, match="int64"):
        run(mt.tensor([1, 2, 3]), 0, False, "online")


@pytest.mark.cuda
def test_cuda_unknown_impl_lists_the_names():
    x = mt.zeros(2, 3, device="cuda")
    with pytest.raises(ValueError, match=r"unknown softmax impl 'safe'.*'naive'.*'multiblock'"):
        run(x, 1, False, "safe")


@pytest.mark.cuda
@pytest.mark.parametrize("impl", sorted(LAST_DIM_ONLY))
def test_cuda_last_dim_only(impl):
    x = mt.zeros(2, 3, 4, device="cuda")
    with pytest.raises(ValueError, match=rf"impl '{impl}' supports only softmax over the last dim \(inner == 1\)"):
        run(x, 1, False, impl)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", CUDA_DTYPES)
def test_cuda_block_smem_row_limit(dtype):
    n = 1 << 17  # 512 KB of float32: more shared memory than any GPU gives one block
    x = mt.zeros(1, n, dtype=dtype, device="cuda")
    with pytest.raises(ValueError, match=rf"impl 'block_smem'.*shared memory.*{n}"):
        run(x, 1, False, "block_smem")


@pytest.mark.cuda
@pytest.mark.parametrize("impl", CUDA_IMPLS[1:])
@pytest.mark.parametrize("dtype", [pytest.param(mt.float16, id="float16"), pytest.param(mt.bfloat16, id="bfloat16")])
def test_cuda_16bit_is_type_error(dtype, impl):
    x = mt.zeros(2, 8, dtype=dtype, device="cuda")
    with pytest.raises(TypeError, match=rf"impl '{impl}'.*{dtype_name(dtype)}"):
        run(x, 1, False, impl)


# ----------------------------------------------------------------------------------------------
# CUDA variants


@pytest.mark.cuda
@pytest.mark.parametrize("impl", CUDA_IMPLS)
@pytest.mark.parametrize("dtype", CUDA_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("case", ROW_CASES, ids=case_id)
def test_cuda_rows(case, log, dtype, impl, rng):
    shape, dim = case
    check(make_tensor(random_input(rng, shape), dtype, "cuda"), dim, log, impl)


@pytest.mark.cuda
@pytest.mark.parametrize("impl", CUDA_IMPLS)
@pytest.mark.parametrize("dtype", CUDA_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("case", INNER_CASES, ids=case_id)
def test_cuda_inner(case, log, dtype, impl, rng):
    shape, dim = case
    x = make_tensor(random_input(rng, shape), dtype, "cuda")
    if impl in LAST_DIM_ONLY and math.prod(shape[dim + 1:]) > 1:
        with pytest.raises(ValueError, match="inner == 1"):
            run(x, dim, log, impl)
    else:
        check(x, dim, log, impl)


# Long rows: every variant that can hold them, and multiblock's home ground (few long rows, many
# rows for grid.y > 65535, a row split over many chunks).
LONG_CASES = {
    "all": [((2, 65537), 1), ((1, 30011), -1)],
    "multiblock": [((1, 262147), 1), ((3, 65537), 1), ((70000, 3), 1), ((2, 65537, 2), 1), ((65537,), 0)],
}


@pytest.mark.cuda
@pytest.mark.parametrize("impl", CUDA_IMPLS)
@pytest.mark.parametrize("dtype", CUDA_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("case", LONG_CASES["all"], ids=case_id)
def test_cuda_long_rows(case, log, dtype, impl, rng):
    shape, dim = case
    x = make_tensor(random_input(rng, shape), dtype, "cuda")
    if impl == "block_smem":
        # Whether the row fits depends on the GPU's shared memory (227 KB on H100: 58K floats,
        # 29K doubles); every GPU gives at least 48 KB. Too long must be the documented error.
        try:
            check(x, dim, log, impl)
        except ValueError as error:
            assert "shared memory" in str(error) and shape[dim] * x.itemsize > 48 * 1024, error
    else:
        check(x, dim, log, impl)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", CUDA_DTYPES)
@pytest.mark.parametrize("log", OPS)
@pytest.mark.parametrize("case", LONG_CASES["multiblock"], ids=case_id)
def test_cuda_multiblock(case, log, dtype, rng):
    shape, dim = case
    check(make_tensor(random_input(rng, shape), dtype, "cuda"), dim, log, "multiblock")


@pytest.mark.cuda
@pytest.mark.parametrize("impl", CUDA_IMPLS)
@pytest.mark.parametrize("dtype", CUDA_DTYPES)
@pytest.mark.parametrize("log", OPS)
def test_cuda_views_and_extremes(log, dtype, impl, rng):
    base = make_tensor(random_input(rng, (9, 1026)), dtype, "cuda")
    check(base[:, 1:], 1, log, impl)  # strided: gathered into a fresh (aligned) buffer first
    for rows, n in ((5, 32), (5, 33), (1, 4099), (3, 1024)):
        # Contiguous views that start one element into their buffer: the row pointers are not
        # 16-byte aligned, so vec4 must take its scalar path.
        flat = make_tensor(random_input(rng, (1 + rows * n,)), dtype, "cuda")
        check(flat[1:].reshape(rows, n), 1, log, impl)
    check(make_tensor(random_input(rng, (4, 1000), scale=60.0), dtype, "cuda"), 1, log, impl)
    masked = random_input(rng, (6, 40))
    masked[:, ::3] = -np.inf  # the first element of every row is -inf: online's first update
    check(make_tensor(masked, dtype, "cuda"), 1, log, impl)


@pytest.mark.cuda
@pytest.mark.parametrize("impl", CUDA_IMPLS)
def test_cuda_empty(impl):
    for shape in ((3, 0), (0, 5)):
        y = run(mt.zeros(*shape, device="cuda"), 1, False, impl)
        assert tuple(y.shape) == shape
