"""Shared fixtures and helpers for the minitensor test suite.

* ``DEVICES`` / the ``device`` fixture: "cpu", plus "cuda" marked ``pytest.mark.cuda`` and skipped
  when no GPU is usable here.
* ``FLOAT_DTYPES`` / the ``float_dtype`` fixture: the dtypes softmax supports.
* ``rng``: a NumPy generator seeded per test (from the test id, so a failure reproduces; set
  ``MT_TEST_SEED`` to draw a different set of inputs for the whole run).
* NumPy float64 references for softmax / log_softmax and their backward, dtype-aware tolerances,
  and conversions between NumPy arrays and tensors of any dtype on any device.
"""

from __future__ import annotations

import os
import zlib

import numpy as np
import pytest

try:
    import minitensor as mt
except ImportError:  # the C++ example test runs without the package; the other modules fail to import
    mt = None

CUDA_AVAILABLE = bool(mt is not None and mt.cuda.is_available())
_NO_CUDA = "CUDA is not available here (minitensor built without CUDA, or no GPU)"

requires_cuda = pytest.mark.skipif(not CUDA_AVAILABLE, reason=_NO_CUDA)

DEVICES = [
    pytest.param("cpu", id="cpu"),
    pytest.param("cuda", id="cuda", marks=[pytest.mark.cuda, requires_cuda]),
]

FLOAT_DTYPE_NAMES = ["float32", "float64", "float16", "bfloat16"]
FLOAT_DTYPES = [pytest.param(getattr(mt, n), id=n) for n in FLOAT_DTYPE_NAMES] if mt else []

NUMPY_DTYPES = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
                "int64": np.int64, "bool": np.bool_}


def pytest_addoption(parser):
    parser.addoption("--shard", default=None, metavar="K/N",
                     help="run only every N-th collected test starting at the K-th (0-based), so N "
                          "processes (e.g. under compute-sanitizer) can share one suite")


def _keep_shard(config, items):
    spec = config.getoption("--shard")
    if not spec:
        return
    try:
        k, n = (int(v) for v in spec.split("/"))
        assert 0 <= k < n
    except (ValueError, AssertionError):
        raise pytest.UsageError(f"--shard wants K/N with 0 <= K < N, got {spec!r}") from None
    keep = [item for i, item in enumerate(items) if i % n == k]
    config.hook.pytest_deselected(items=[item for i, item in enumerate(items) if i % n != k])
    items[:] = keep


def pytest_collection_modifyitems(config, items):
    """--shard keeps its share; anything marked `cuda` skips cleanly without a usable GPU."""
    _keep_shard(config, items)
    if CUDA_AVAILABLE:
        return
    skip = pytest.mark.skip(reason=_NO_CUDA)
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture(params=FLOAT_DTYPES)
def float_dtype(request):
    return request.param


@pytest.fixture
def rng(request):
    base = int(os.environ.get("MT_TEST_SEED", "0"))
    seed = zlib.crc32(request.node.nodeid.encode()) ^ base
    request.node.user_properties.append(("rng_seed", seed))
    return np.random.default_rng(seed)


# ----------------------------------------------------------------------------------------------
# dtypes and conversions


def dtype_name(dtype) -> str:
    return repr(dtype).split(".")[-1]


def bf16_round(array) -> np.ndarray:
    """float32 values rounded to bfloat16 (round to nearest, ties to even), returned as float32."""
    x = np.ascontiguousarray(array, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = (rounded & 0xFFFFFFFF).astype(np.uint32).view(np.float32).copy()
    nan = np.isnan(x)
    out[nan] = np.nan
    return out


def round_to(array, dtype) -> np.ndarray:
    """What `array` becomes when stored as `dtype`, as float64 (for the float dtypes)."""
    name = dtype_name(dtype)
    if name == "bfloat16":
        # float64 -> float32 first, as mt.tensor(float64 data, dtype=bfloat16) goes via float32
        return bf16_round(np.asarray(array, dtype=np.float32)).astype(np.float64)
    return np.asarray(array).astype(NUMPY_DTYPES[name]).astype(np.float64)


def make_tensor(array, dtype, device="cpu"):
    """A tensor of `dtype` on `device` holding `array` (rounded to the dtype)."""
    array = np.asarray(array)
    name = dtype_name(dtype)
    host = array.astype(np.float32 if name == "bfloat16" else NUMPY_DTYPES[name])
    return mt.tensor(host, dtype=dtype, device=device)


def to_numpy(t) -> np.ndarray:
    """A host copy of any tensor as NumPy (bfloat16 -> float32)."""
    t = t.cpu()
    if t.dtype == mt.bfloat16:
        t = t.float()
    return np.array(t.numpy(), copy=True)


def to_f64(t) -> np.ndarray:
    return to_numpy(t).astype(np.float64)


# softmax or log_softmax, as one parameter: `log`.
OPS = [pytest.param(False, id="softmax"), pytest.param(True, id="log_softmax")]


def run_op(x, dim: int, log: bool, style: str = "method"):
    """x.softmax(dim) / x.log_softmax(dim), or the module functions with style="function"."""
    if style == "method":
        return x.log_softmax(dim) if log else x.softmax(dim)
    return mt.log_softmax(x, dim) if log else mt.softmax(x, dim)


# ----------------------------------------------------------------------------------------------
# float64 references


def ref_softmax(x: np.ndarray, dim: int, log: bool = False) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0:  # one element: 1 (log: 0) for finite x, NaN for +-inf or NaN, like torch
        return ref_softmax(x.reshape(1), 0, log).reshape(())
    if x.size == 0:
        return x.copy()
    shifted = x - np.max(x, axis=dim, keepdims=True)
    lse = np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))
    return shifted - lse if log else np.exp(shifted - lse)


def ref_softmax_backward(y: np.ndarray, dy: np.ndarray, dim: int, log: bool) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64)
    dy = np.asarray(dy, dtype=np.float64)
    if y.ndim == 0:
        return dy - np.exp(y) * dy if log else y * (dy - y * dy)
    if log:
        return dy - np.exp(y) * np.sum(dy, axis=dim, keepdims=True)
    return y * (dy - np.sum(y * dy, axis=dim, keepdims=True))


# (rtol, atol) for forward outputs: probabilities in [0, 1], log-probabilities <= 0.
TOLERANCES = {
    "float32": (2e-6, 1e-7),
    "float64": (1e-12, 1e-15),
    "float16": (1e-3, 1e-5),
    "bfloat16": (1e-2, 1e-5),
}


# log_softmax = (x - max) - log(sum): near 0 the log of a sum close to 1 has an absolute (not
# relative) error of the sum's relative error, so log outputs get a larger absolute tolerance.
LOG_ATOL = {"float32": 2e-6, "float64": 1e-13, "float16": 2e-6, "bfloat16": 2e-6}


def tol(dtype, log: bool = False):
    rtol, atol = TOLERANCES[dtype_name(dtype)]
    return (rtol, LOG_ATOL[dtype_name(dtype)]) if log else (rtol, atol)


def assert_close(actual, expected, dtype, scale: float = 1.0, err_msg: str = "", log: bool = False):
    """|actual - expected| <= atol * scale + rtol * |expected| with the dtype's tolerances."""
    rtol, atol = tol(dtype, log)
    actual = actual if isinstance(actual, np.ndarray) else to_f64(actual)
    np.testing.assert_allclose(np.asarray(actual, dtype=np.float64), expected, rtol=rtol,
                               atol=atol * scale, err_msg=err_msg)


def random_input(rng, shape, scale: float = 3.0) -> np.ndarray:
    """Random float64 data that is never constant along any axis of length > 1."""
    x = rng.standard_normal(shape) * scale
    if x.size > 1 and np.ptp(x) == 0:  # practically impossible, but a constant input proves nothing
        x = x + np.arange(x.size).reshape(shape)
    return x
