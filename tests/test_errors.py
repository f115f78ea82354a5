"""Every user mistake raises a typed Python exception with a useful message, in-process (no crash)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import minitensor as mt
from conftest import CUDA_AVAILABLE, FLOAT_DTYPES


def dim_message(low: int, high: int, got: int) -> str:
    return re.escape(f"Dimension out of range (expected to be in range of [{low}, {high}], but got {got})")


# -------------------------------------------------------------------------------- dim out of range


@pytest.mark.parametrize("shape, dim, low, high", [
    ((3, 4), 2, -2, 1), ((3, 4), -3, -2, 1), ((5,), 1, -1, 0), ((5,), -2, -1, 0),
    ((), 1, -1, 0), ((), -2, -1, 0), ((2, 3, 4, 5, 6), 5, -5, 4), ((2, 3, 4, 5, 6), -6, -5, 4),
    ((0, 3), 2, -2, 1),
])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_dim_out_of_range(op, shape, dim, low, high):
    t = mt.zeros(shape)
    with pytest.raises(IndexError, match="^" + dim_message(low, high, dim) + "$"):
        getattr(t, op)(dim)
    with pytest.raises(IndexError, match="^" + dim_message(low, high, dim) + "$"):
        getattr(mt, op)(t, dim)


def test_exact_dim_message_from_the_brief():
    with pytest.raises(IndexError) as info:
        mt.zeros(2, 3).softmax(2)
    assert str(info.value) == "Dimension out of range (expected to be in range of [-2, 1], but got 2)"


@pytest.mark.parametrize("log", [False, True])
def test_backward_dim_out_of_range(log):
    y = mt.zeros(2, 3)
    with pytest.raises(IndexError, match=dim_message(-2, 1, 2)):
        mt._C._softmax_backward(y, y, 2, log)


@pytest.mark.parametrize("call, message", [
    (lambda t: t.transpose(0, 3), dim_message(-3, 2, 3)),
    (lambda t: t.size(3), dim_message(-3, 2, 3)),
    (lambda t: t.stride(-4), dim_message(-3, 2, -4)),
    (lambda t: t.select(3, 0), dim_message(-3, 2, 3)),
    (lambda t: t.unsqueeze(4), dim_message(-4, 3, 4)),
    (lambda t: t.squeeze(3), dim_message(-3, 2, 3)),
    (lambda t: t.permute(0, 1, 3), dim_message(-3, 2, 3)),
])
def test_view_dim_out_of_range(call, message):
    with pytest.raises(IndexError, match=message):
        call(mt.zeros(2, 3, 4))


# ------------------------------------------------------------------------------------------ dtypes


@pytest.mark.parametrize("dtype, name", [(mt.int64, "int64"), (mt.bool, "bool")])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_of_non_float_dtype(op, dtype, name):
    t = mt.zeros(2, 3, dtype=dtype)
    with pytest.raises(TypeError) as info:
        getattr(t, op)(1)
    assert op in str(info.value) and name in str(info.value)
    with pytest.raises(TypeError, match=name):
        getattr(mt, op)(t, 0)
    with pytest.raises(TypeError, match=name):
        mt._C._softmax_backward(t, t, 1, op == "log_softmax")


def test_backward_mismatched_arguments():
    y = mt.zeros(2, 3)
    with pytest.raises(ValueError, match="shape"):
        mt._C._softmax_backward(y, mt.zeros(3, 2), 1, False)
    with pytest.raises(TypeError, match="dtype"):
        mt._C._softmax_backward(y, mt.zeros(2, 3, dtype=mt.float64), 1, False)


@pytest.mark.parametrize("bad", ["float32", np.float32, 4, object()])
def test_bad_dtype_arguments(bad):
    with pytest.raises(TypeError):
        mt.zeros(2, dtype=bad)
    with pytest.raises(TypeError):
        mt.tensor([1.0], dtype=bad)
    with pytest.raises(TypeError):
        mt.zeros(2).to(dtype=bad)


def test_random_of_non_float_dtype():
    with pytest.raises(TypeError, match="int64"):
        mt.randn(3, dtype=mt.int64)


@pytest.mark.parametrize("bad_dim", [1.5, "1", None])
def test_non_integer_dim(bad_dim):
    with pytest.raises(TypeError):
        mt.zeros(2, 3).softmax(bad_dim)


# ---------------------------------------------------------------------------------- bad input data


@pytest.mark.parametrize("data", [[[1.0, 2.0], [3.0]], [1.0, [2.0, 3.0]], [[[1], [2]], [[3]]]])
def test_ragged_lists(data):
    with pytest.raises(ValueError, match="ragged"):
        mt.tensor(data)


@pytest.mark.parametrize("data", ["abc", b"abc", ["a", "b"], [1.0, "x"], [object()], object(), None,
                                  {1: 2}, [None, 1.0], 1 + 2j, [1j]])
def test_non_numeric_data(data):
    with pytest.raises(TypeError):
        mt.tensor(data)


@pytest.mark.parametrize("data", [2**63, [1, 2**64], -(2**63) - 1])
def test_int_overflow(data):
    with pytest.raises(ValueError, match="int64"):
        mt.tensor(data)


@pytest.mark.parametrize("shape", [(-1,), (2, -3)])
def test_negative_shapes(shape):
    with pytest.raises(ValueError, match="negative"):
        mt.zeros(shape)
    with pytest.raises(ValueError):
        mt.empty(*shape)


@pytest.mark.parametrize("size", [("2",), (2.0, 3)])
def test_non_integer_sizes(size):
    with pytest.raises(TypeError):
        mt.zeros(*size)


# ---------------------------------------------------------------------------------------- devices


@pytest.mark.parametrize("text", ["cude", "cuda:x", "gpu", "cuda:", "CPU", "cpu:0x", "cuda:-1", "cuda:0:1", ""])
def test_unknown_device_strings(text):
    with pytest.raises(ValueError, match="device"):
        mt.device(text)
    with pytest.raises(ValueError, match=re.escape(repr(text))):
        mt.zeros(2, device=text)
    with pytest.raises(ValueError):
        mt.tensor([1.0], device=text)
    with pytest.raises(ValueError):
        mt.zeros(2).to(text)


def test_bad_device_objects():
    with pytest.raises(TypeError, match="device"):
        mt.zeros(2, device=3)
    with pytest.raises(ValueError):
        mt.device("tpu", 0)


@pytest.mark.skipif(CUDA_AVAILABLE, reason="this machine has CUDA")
@pytest.mark.parametrize("make", [
    lambda: mt.zeros(2, device="cuda"),
    lambda: mt.ones(2, 3, device="cuda:0"),
    lambda: mt.randn(4, device=mt.device("cuda", 0)),
    lambda: mt.full((2,), 1.0, device="cuda"),
    lambda: mt.empty(3, device="cuda"),
    lambda: mt.tensor([1.0, 2.0], device="cuda"),
    lambda: mt.zeros(2).cuda(),
    lambda: mt.zeros(2).to("cuda"),
    lambda: mt.zeros(2).to("cuda:1", mt.float16),
    lambda: mt.cuda.synchronize(),
])
def test_cuda_request_without_cuda(make):
    with pytest.raises(mt.CudaError, match="CUDA is not available") as info:
        make()
    assert isinstance(info.value, RuntimeError)


def test_cuda_error_is_a_runtime_error():
    assert issubclass(mt.CudaError, RuntimeError)


@pytest.mark.cuda
def test_cuda_device_index_out_of_range():
    bad = mt.cuda.device_count() + 7
    with pytest.raises(mt.CudaError, match="out of range"):
        mt.zeros(2, device=f"cuda:{bad}")
    with pytest.raises(mt.CudaError):
        mt.zeros(2).to(f"cuda:{bad}")
    assert mt.zeros(2, device="cuda").softmax(0).cpu().tolist() == [0.5, 0.5]  # still alive


@pytest.mark.cuda
def test_cuda_tensor_to_numpy_and_mixed_devices():
    g = mt.zeros(2, 3, device="cuda")
    with pytest.raises(TypeError, match="cpu()"):
        g.numpy()
    with pytest.raises(BufferError) as raised:  # Python reports buffer failures as BufferError
        memoryview(g)
    assert isinstance(raised.value.__cause__, TypeError) and "cpu()" in str(raised.value.__cause__)
    with pytest.raises(ValueError, match="device"):
        mt._C._softmax_backward(g, mt.zeros(2, 3), 1, False)


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_cuda_dim_errors(dtype):
    g = mt.zeros(2, 3, dtype=dtype, device="cuda")
    with pytest.raises(IndexError, match=dim_message(-2, 1, 2)):
        g.softmax(2)
    with pytest.raises(TypeError, match="int64"):
        mt.zeros(2, dtype=mt.int64, device="cuda").softmax(0)


# --------------------------------------------------------------------------------- views/indexing


def test_view_and_index_errors():
    t = mt.zeros(2, 3)
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]
    with pytest.raises(IndexError, match="out of bounds"):
        t[2]
    with pytest.raises(IndexError, match="out of bounds"):
        t[:, -4]
    with pytest.raises(ValueError, match="step"):
        t[::0]
    with pytest.raises(ValueError, match="step"):
        t[::-1]
    with pytest.raises(TypeError):
        t[1.0]
    with pytest.raises(TypeError):
        t["a"]
    with pytest.raises(IndexError, match="ellipsis"):
        t[..., ...]
    with pytest.raises(ValueError):
        t.permute(0)
    with pytest.raises(ValueError, match="duplicate"):
        t.permute(1, 1)
    with pytest.raises(ValueError):
        t.reshape(4, 2)
    with pytest.raises(ValueError, match="view"):
        t.T.view(6)
    with pytest.raises(IndexError):
        mt.tensor(1.0).select(0, 0)
    with pytest.raises(TypeError):
        len(mt.tensor(1.0))
    with pytest.raises(ValueError, match="elements"):
        t.item()


# ------------------------------------------------------------------------------------------ NumPy


def test_from_numpy_errors():
    with pytest.raises(TypeError, match="int32"):
        mt.from_numpy(np.zeros(3, dtype=np.int32))
    with pytest.raises(TypeError):
        mt.from_numpy(np.zeros(3, dtype=np.complex64))
    with pytest.raises(ValueError, match="byte order"):
        mt.from_numpy(np.zeros(3, dtype=">f4"))
    with pytest.raises(ValueError, match="negative"):
        mt.from_numpy(np.arange(4.0)[::-1])
    with pytest.raises(TypeError):
        mt.from_numpy("abc")


def test_from_numpy_rejects_non_arrays():
    # torch.from_numpy([1.0]) raises "expected np.ndarray (got list)": a list has no memory to share
    with pytest.raises(TypeError):
        mt.from_numpy([1.0, 2.0])


def test_tensor_from_odd_numpy_arrays_copies_correctly():
    # non-native byte order and negative strides are fine for mt.tensor (it copies)
    np.testing.assert_array_equal(mt.tensor(np.arange(4.0, dtype=">f8")).numpy(), np.arange(4.0))
    np.testing.assert_array_equal(mt.tensor(np.arange(4.0)[::-1]).numpy(), np.arange(4.0)[::-1])
    with pytest.raises(TypeError):
        mt.tensor(np.zeros(2, dtype=np.complex128))
    with pytest.raises(TypeError):
        mt.tensor(np.array(["a", "b"]))


def test_process_survives_a_burst_of_errors():
    """Many different failures in a row, then normal work: the interpreter and library are intact."""
    failures = 0
    for _ in range(50):
        for bad in (lambda: mt.zeros(2).softmax(3), lambda: mt.tensor([[1.0], []]),
                    lambda: mt.zeros(2, device="cude"), lambda: mt.zeros(2, dtype=mt.int64).softmax(0),
                    lambda: mt.tensor("x"), lambda: mt.zeros(2, 3).T.view(6)):
            try:
                bad()
            except (IndexError, ValueError, TypeError):
                failures += 1
    assert failures == 300
    assert mt.tensor([0.0, 0.0]).softmax(0).tolist() == [0.5, 0.5]


def test_sizes_that_overflow_int64_raise_before_allocating():
    # torch: "Storage size calculation overflowed"; the product used to wrap to a tiny allocation.
    for shape in ((2**40, 2**40), (2**62, 4), (2**61, 2)):  # elements, elements, bytes overflow
        with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
            mt.empty(*shape)
    assert mt.empty(2**62, 4, 0).shape == (2**62, 4, 0)  # no elements: nothing overflows
    x = mt.ones(4)
    for shape in ((2**32, 2**32), (-1, 2**62, 4), (2**62, 4, 2**62)):
        with pytest.raises(RuntimeError, match="invalid for input of size 4"):
            x.reshape(*shape)


def test_argument_conversions_as_torch():
    import numpy as np

    assert mt.zeros(np.int64(3), np.int32(2)).shape == (3, 2)  # __index__ integers as sizes
    with pytest.raises(TypeError, match="shape entries must be integers"):
        mt.zeros(2.5)
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        list(mt.tensor(3.0))
    assert [v.item() for v in mt.tensor([1.0, 2.0])] == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="cannot be converted to type int64_t without overflow"):
        mt.full((2,), float("nan"), dtype=mt.int64)
    with pytest.raises(RuntimeError, match="cannot be converted to type int64_t without overflow"):
        mt.full((2,), 2.0**63, dtype=mt.int64)
    layer = mt.nn.Linear(0, 3)  # torch: an empty weight, a zero bias
    assert layer.weight.shape == (3, 0) and layer.bias.tolist() == [0.0, 0.0, 0.0]
