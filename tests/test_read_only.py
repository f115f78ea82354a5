"""Issue 13: tensors remember whether their memory may be written. Memory the owner marked read-only
(a non-writeable NumPy array, an immutable `bytes`, a read-only mmap, a DLPack capsule with the
READ_ONLY flag) gives a read-only tensor: every write raises RuntimeError instead of mutating an
immutable object or crashing, and it stays read-only when handed back to NumPy or DLPack."""

from __future__ import annotations

import mmap

import numpy as np
import pytest

import minitensor as mt

READ_ONLY = "cannot write into a read-only tensor"


def read_only_array():
    a = np.arange(6.0)
    a.flags.writeable = False
    return a


WRITES = {
    "fill_": lambda t: t.fill_(1.0),
    "zero_": lambda t: t.zero_(),
    "copy_": lambda t: t.copy_(mt.ones(6, dtype=mt.float64)),
    "add_": lambda t: t.add_(1),
    "mul_": lambda t: t.mul_(2.0),
    "setitem": lambda t: t.__setitem__(0, 5.0),
    "setitem_advanced": lambda t: t.__setitem__(mt.tensor([0, 2]), 5.0),
    "view_fill_": lambda t: t.reshape(2, 3)[1].fill_(0.0),
}


@pytest.mark.parametrize("write", list(WRITES), ids=list(WRITES))
def test_writes_into_a_non_writeable_array_raise(write):
    a = read_only_array()
    t = mt.from_numpy(a)
    assert t.is_read_only
    with pytest.raises(RuntimeError, match=READ_ONLY):
        WRITES[write](t)
    np.testing.assert_array_equal(a, np.arange(6.0))  # untouched


def test_bytes_buffer_is_not_mutated():
    data = bytes(16)
    t = mt.from_numpy(np.frombuffer(data, dtype=np.float64))
    with pytest.raises(RuntimeError, match=READ_ONLY):
        t.fill_(1.0)
    assert data == bytes(16)


def test_read_only_mmap_write_raises_instead_of_crashing(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(bytes(64))
    with open(path, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        t = mt.from_numpy(np.frombuffer(m, dtype=np.float64))
        with pytest.raises(RuntimeError, match=READ_ONLY):
            t.add_(1.0)
        assert t.sum().item() == 0.0  # reading is fine
        del t


def test_read_only_survives_views_and_goes_back_to_numpy_read_only():
    t = mt.from_numpy(read_only_array())
    assert t.reshape(2, 3).T[0].is_read_only
    out = t.numpy()
    assert not out.flags.writeable
    with pytest.raises(ValueError):
        out[0] = 1.0
    assert memoryview(t).readonly
    assert not (t + 1).is_read_only  # results are fresh memory
    assert not t.clone().is_read_only


def test_writeable_arrays_stay_writeable():
    a = np.arange(3.0)
    t = mt.from_numpy(a)
    assert not t.is_read_only and t.numpy().flags.writeable
    t.fill_(7.0)
    assert a.tolist() == [7.0, 7.0, 7.0]


def test_dlpack_read_only_flag_in_and_out():
    t = mt.from_dlpack(read_only_array())  # NumPy's versioned capsule sets READ_ONLY
    assert t.is_read_only
    with pytest.raises(RuntimeError, match=READ_ONLY):
        t.fill_(0.0)
    assert not np.from_dlpack(t).flags.writeable  # our export sets the flag
    assert mt.from_dlpack(t).is_read_only
    assert not mt.from_dlpack(np.arange(3.0)).is_read_only
