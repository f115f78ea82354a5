"""Zero-copy exchange with NumPy (numpy(), from_numpy, __array__, buffer protocol) and DLPack."""

from __future__ import annotations

import ctypes
import gc
import weakref

import numpy as np
import pytest

import minitensor as mt
from conftest import FLOAT_DTYPES, make_tensor, random_input, to_numpy

_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]


def capsule_name(capsule) -> str:
    return _capsule_name(capsule).decode()


# ------------------------------------------------------------------------------------------ NumPy


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64, np.float16, np.int64, np.bool_])
def test_numpy_is_zero_copy_both_ways(np_dtype, rng):
    t = mt.tensor((rng.standard_normal((3, 4)) * 5).astype(np_dtype))
    a = t.numpy()
    assert a.dtype == np_dtype and a.shape == (3, 4)
    assert a.ctypes.data == t.data_ptr()
    a[1, 2] = 1
    assert to_numpy(t)[1, 2] == 1
    t.fill_(0)
    assert not a.any()


def test_numpy_of_views_keeps_strides(rng):
    t = mt.tensor(rng.standard_normal((6, 8)))
    for v, ref in [(t.T, t.numpy().T), (t[1::2, 3:], t.numpy()[1::2, 3:]), (t[2], t.numpy()[2])]:
        a = v.numpy()
        np.testing.assert_array_equal(a, ref)
        assert a.strides == ref.strides and np.shares_memory(a, t.numpy())


def test_numpy_array_outlives_tensor(rng):
    data = rng.standard_normal(1000)
    t = mt.tensor(data)
    a = t.numpy()
    del t
    gc.collect()
    _ = [mt.ones(1000, dtype=mt.float64) for _ in range(5)]  # reuse freed memory if it was freed
    np.testing.assert_array_equal(a, data)


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64, np.float16, np.int64, np.bool_])
def test_from_numpy_shares_memory(np_dtype, rng):
    arr = (rng.standard_normal((4, 5)) * 5).astype(np_dtype)
    t = mt.from_numpy(arr)
    assert t.shape == (4, 5) and t.data_ptr() == arr.ctypes.data
    arr[0, 0] = 1
    assert to_numpy(t)[0, 0] == 1
    t.fill_(0)
    assert not arr.any()


def test_from_numpy_keeps_array_alive(rng):
    data = rng.standard_normal((50, 50))
    arr = data.copy()
    t = mt.from_numpy(arr)
    del arr
    gc.collect()
    _ = [np.ones((50, 50)) for _ in range(10)]
    np.testing.assert_array_equal(t.numpy(), data)
    np.testing.assert_allclose(t.softmax(1).numpy(), np.exp(data) / np.exp(data).sum(1, keepdims=True), rtol=1e-12)


def test_from_numpy_strided_and_0d(rng):
    base = rng.standard_normal((6, 10))
    arr = base[1::2, ::3]
    t = mt.from_numpy(arr)
    assert t.stride() == (20, 3) and not t.is_contiguous()
    np.testing.assert_array_equal(t.numpy(), arr)
    np.testing.assert_array_equal(t.contiguous().numpy(), arr)
    s = mt.from_numpy(np.array(2.5))
    assert s.shape == () and s.item() == 2.5
    e = mt.from_numpy(np.zeros((0, 3), dtype=np.float32))
    assert e.shape == (0, 3) and e.numel() == 0


def test_from_numpy_softmax_of_transposed_view(rng):
    base = rng.standard_normal((7, 5))
    t = mt.from_numpy(base.T)
    ref = np.exp(base.T - base.T.max(1, keepdims=True))
    np.testing.assert_allclose(t.softmax(1).numpy(), ref / ref.sum(1, keepdims=True), rtol=1e-12)


def test_array_protocol(rng):
    t = mt.tensor(rng.standard_normal((3, 4)).astype(np.float32))
    a = np.asarray(t)
    assert a.dtype == np.float32 and np.shares_memory(a, t.numpy())
    d = np.asarray(t, dtype=np.float64)
    assert d.dtype == np.float64
    np.testing.assert_array_equal(d, t.numpy().astype(np.float64))
    c = np.array(t, copy=True)
    assert not np.shares_memory(c, t.numpy())
    np.testing.assert_array_equal(c, t.numpy())
    np.testing.assert_array_equal(np.asarray(t.T), t.numpy().T)


@pytest.mark.parametrize("np_dtype, fmt", [(np.float32, "f"), (np.float64, "d"), (np.float16, "e"),
                                           (np.int64, "q"), (np.bool_, "?")])
def test_buffer_protocol(np_dtype, fmt, rng):
    t = mt.tensor((rng.standard_normal((3, 4)) * 5).astype(np_dtype))
    m = memoryview(t)
    assert m.format == fmt and m.shape == (3, 4) and m.itemsize == np.dtype(np_dtype).itemsize
    assert m.strides == (4 * m.itemsize, m.itemsize)
    np.testing.assert_array_equal(np.asarray(m), t.numpy())
    v = memoryview(t.T)
    assert v.shape == (4, 3) and v.strides == (m.itemsize, 4 * m.itemsize)
    np.testing.assert_array_equal(np.asarray(v), t.numpy().T)


def test_buffer_protocol_writes_through(rng):
    t = mt.tensor(rng.standard_normal(4))
    m = memoryview(t)
    m[2] = 42.0
    assert t.tolist()[2] == 42.0


def test_bfloat16_has_no_numpy_view():
    t = mt.tensor([1.0, 2.0], dtype=mt.bfloat16)
    with pytest.raises(TypeError, match="bfloat16"):
        t.numpy()
    with pytest.raises(TypeError, match="bfloat16"):
        np.asarray(t)
    with pytest.raises((TypeError, BufferError)):
        memoryview(t)


# ----------------------------------------------------------------------------------------- DLPack


def test_dlpack_device():
    assert tuple(mt.zeros(2).__dlpack_device__()) == (1, 0)


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64, np.float16, np.int64, np.bool_])
def test_numpy_from_dlpack_shares_memory(np_dtype, rng):
    t = mt.tensor((rng.standard_normal((3, 5)) * 5).astype(np_dtype))
    a = np.from_dlpack(t)
    assert a.dtype == np_dtype and a.shape == (3, 5)
    np.testing.assert_array_equal(a, t.numpy())
    assert a.ctypes.data == t.data_ptr()
    t.fill_(1)
    assert np.all(a == 1)


def test_numpy_from_dlpack_of_views(rng):
    t = mt.tensor(rng.standard_normal((6, 7)))
    for v, ref in [(t.T, t.numpy().T), (t[2:, 1::3], t.numpy()[2:, 1::3]), (t[3, 4], t.numpy()[3, 4]),
                   (t[..., None], t.numpy()[..., None])]:
        a = np.from_dlpack(v)
        np.testing.assert_array_equal(a, ref)
        assert np.shares_memory(a, t.numpy())


@pytest.mark.parametrize("np_dtype", [np.float32, np.float64, np.float16, np.int64, np.bool_])
def test_mt_from_dlpack_of_numpy(np_dtype, rng):
    arr = (rng.standard_normal((4, 3)) * 5).astype(np_dtype)
    t = mt.from_dlpack(arr)
    assert t.shape == (4, 3) and t.data_ptr() == arr.ctypes.data
    np.testing.assert_array_equal(t.numpy(), arr)
    arr[1, 1] = 0
    assert to_numpy(t)[1, 1] == 0


def test_mt_from_dlpack_of_strided_numpy_and_lifetime(rng):
    data = rng.standard_normal((8, 9))
    arr = data.copy()
    view = arr[1::2, ::4]
    t = mt.from_dlpack(view)
    np.testing.assert_array_equal(t.numpy(), data[1::2, ::4])
    del arr, view
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), data[1::2, ::4])


def test_dlpack_round_trip_minitensor(rng):
    t = make_tensor(random_input(rng, (5, 6)), mt.bfloat16)  # bfloat16 travels through DLPack
    u = mt.from_dlpack(t)
    assert u.dtype == mt.bfloat16 and u.shape == t.shape and u.data_ptr() == t.data_ptr()
    np.testing.assert_array_equal(to_numpy(u), to_numpy(t))
    v = mt.from_dlpack(t.T[1:])
    np.testing.assert_array_equal(to_numpy(v), to_numpy(t.T[1:]))
    del t
    gc.collect()
    assert to_numpy(u).shape == (5, 6)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_dlpack_round_trip_every_float_dtype(dtype, rng):
    t = make_tensor(random_input(rng, (3, 4)), dtype)
    for cap in (t.__dlpack__(), t.__dlpack__(max_version=(1, 0))):
        u = mt.from_dlpack(cap)
        assert u.dtype == dtype and u.data_ptr() == t.data_ptr()
        np.testing.assert_array_equal(to_numpy(u), to_numpy(t))


def test_capsule_names_and_versions():
    t = mt.zeros(3)
    assert capsule_name(t.__dlpack__()) == "dltensor"
    assert capsule_name(t.__dlpack__(max_version=None)) == "dltensor"
    assert capsule_name(t.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    assert capsule_name(t.__dlpack__(max_version=(1, 3))) == "dltensor_versioned"
    assert capsule_name(t.__dlpack__(max_version=(0, 8))) == "dltensor"
    assert capsule_name(t.__dlpack__(stream=None, max_version=(1, 0), dl_device=(1, 0), copy=False)) \
        == "dltensor_versioned"


@pytest.mark.parametrize("versioned", [False, True])
def test_capsule_consumed_twice_raises(versioned):
    t = mt.tensor([1.0, 2.0, 3.0])
    cap = t.__dlpack__(max_version=(1, 0)) if versioned else t.__dlpack__()
    u = mt.from_dlpack(cap)
    assert capsule_name(cap).startswith("used_")
    with pytest.raises(ValueError, match="capsule"):
        mt.from_dlpack(cap)
    assert u.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_unconsumed_capsules_are_freed_without_crash(max_version):
    # The tensor wraps a NumPy array's memory, so the array lives exactly as long as some capsule
    # (or tensor) still owns that memory: its weak reference tells when the last one was freed.
    array = np.ones(1000, dtype=np.float32)
    array_alive = weakref.ref(array)
    t = mt.from_numpy(array)
    del array
    capsules = [t.__dlpack__(max_version=max_version) for _ in range(100)]
    del t
    gc.collect()
    assert array_alive() is not None, "an unconsumed capsule must keep the memory it points at"
    del capsules
    gc.collect()
    assert array_alive() is None, "dropping the unconsumed capsules did not free what they held"


def test_unconsumed_capsules_release_only_their_own_reference():
    # Dropping a capsule nobody consumed runs its deleter, which must give back the capsule's own
    # reference and nothing more: the tensor stays valid and unchanged, and a capsule taken after
    # the tensor itself is gone still holds its data (the memory is the capsule's until consumed).
    for _ in range(100):
        t = mt.arange(1000, dtype=mt.float32)
        t.__dlpack__()
        t.__dlpack__(max_version=(1, 0))
        gc.collect()
        assert t.tolist() == list(range(1000))
    t = mt.arange(1000, dtype=mt.float32)
    capsule = t.__dlpack__()
    del t
    gc.collect()
    _ = [mt.ones(1000) * 7 for _ in range(5)]  # would reuse the memory if it had been freed
    assert mt.from_dlpack(capsule).tolist() == list(range(1000))


def test_dlpack_empty_and_0d():
    e = mt.zeros(0, 3)
    a = np.from_dlpack(e)
    assert a.shape == (0, 3)
    assert mt.from_dlpack(e).shape == (0, 3)
    s = mt.tensor(4.5)
    assert np.from_dlpack(s).shape == () and float(np.from_dlpack(s)) == 4.5
    assert mt.from_dlpack(np.array(4.5)).item() == 4.5


def test_dlpack_export_options_rejected():
    t = mt.zeros(2)
    with pytest.raises(ValueError, match="copy"):
        t.__dlpack__(copy=True)
    with pytest.raises(ValueError, match="device"):
        t.__dlpack__(dl_device=(2, 0))


def test_from_dlpack_rejects_non_producers():
    with pytest.raises(TypeError, match="__dlpack__"):
        mt.from_dlpack([1.0, 2.0])
    with pytest.raises(TypeError):
        mt.from_dlpack(np.zeros(3, dtype=np.int32))  # unsupported element type


# ------------------------------------------------------------------------------------------ torch


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def test_torch_from_minitensor_and_back(torch, rng):
    t = mt.tensor(rng.standard_normal((4, 6)).astype(np.float32))
    pt = torch.from_dlpack(t)
    assert pt.dtype == torch.float32 and tuple(pt.shape) == (4, 6) and pt.data_ptr() == t.data_ptr()
    np.testing.assert_array_equal(pt.numpy(), t.numpy())
    back = mt.from_dlpack(pt)
    assert back.data_ptr() == t.data_ptr()
    bf = mt.from_dlpack(torch.randn(3, 5).to(torch.bfloat16))
    assert bf.dtype == mt.bfloat16
    ptv = torch.from_dlpack(t.T[1:])
    np.testing.assert_array_equal(ptv.numpy(), t.numpy().T[1:])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_matches_torch(torch, dim, rng):
    x = rng.standard_normal((5, 7, 9)).astype(np.float32)
    for log in (False, True):
        ours = (mt.tensor(x).log_softmax(dim) if log else mt.tensor(x).softmax(dim)).numpy()
        ref = torch.log_softmax(torch.from_numpy(x).double(), dim) if log else torch.softmax(
            torch.from_numpy(x).double(), dim)
        np.testing.assert_allclose(ours, ref.numpy(), rtol=2e-6, atol=1e-7)


@pytest.mark.cuda
def test_torch_cuda_dlpack(torch, rng):
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    x = rng.standard_normal((33, 65)).astype(np.float32)
    g = mt.tensor(x, device="cuda")
    assert tuple(g.__dlpack_device__()) == (2, 0)
    pt = torch.from_dlpack(g)
    assert pt.is_cuda and pt.data_ptr() == g.data_ptr()
    np.testing.assert_array_equal(pt.cpu().numpy(), x)
    y = mt.from_dlpack(torch.from_numpy(x).cuda() * 2)
    assert y.is_cuda
    np.testing.assert_array_equal(y.cpu().numpy(), x * 2)
    ours = g.softmax(1).cpu().numpy()
    ref = torch.softmax(torch.from_numpy(x).double().cuda(), 1).cpu().numpy()
    np.testing.assert_allclose(ours, ref, rtol=2e-6, atol=1e-7)
    # a view travels with its strides and offset
    pv = torch.from_dlpack(g[:, 1:].T)
    np.testing.assert_array_equal(pv.cpu().numpy(), x[:, 1:].T)


@pytest.mark.cuda
def test_cuda_dlpack_capsule_round_trip(rng):
    x = rng.standard_normal((3, 17)).astype(np.float32)
    g = mt.tensor(x, device="cuda")
    for cap in (g.__dlpack__(stream=1), g.__dlpack__(stream=None, max_version=(1, 0))):
        u = mt.from_dlpack(cap)
        assert u.is_cuda and u.data_ptr() == g.data_ptr()
        np.testing.assert_array_equal(u.cpu().numpy(), x)
    with pytest.raises((BufferError, TypeError, ValueError, RuntimeError)):
        np.from_dlpack(g)  # numpy only reads host memory
