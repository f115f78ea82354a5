"""Tensor construction, metadata, views, conversions, fill_, repr; NumPy is the reference.
Creation functions (zeros, arange, randn, ...) are in test_creation.py."""

from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt
from conftest import DEVICES, FLOAT_DTYPES, bf16_round, make_tensor, random_input, to_f64, to_numpy

# ---------------------------------------------------------------------------------- construction


@pytest.mark.parametrize("data, dtype, shape", [
    (1.5, mt.float32, ()),
    (3, mt.int64, ()),
    (True, mt.bool, ()),
    ([1.0, 2.0], mt.float32, (2,)),
    ([1, 2, 3], mt.int64, (3,)),
    ([True, False], mt.bool, (2,)),
    ([[1, 2.5], [3, 4]], mt.float32, (2, 2)),
    ([[[1], [2]], [[3], [4]], [[5], [6]]], mt.int64, (3, 2, 1)),
    ([], mt.float32, (0,)),
    ((1.0, 2.0, 3.0), mt.float32, (3,)),
])
def test_python_data_dtype_inference(data, dtype, shape):
    t = mt.tensor(data)
    assert t.dtype == dtype
    assert t.shape == shape
    assert t.device == "cpu"
    np.testing.assert_array_equal(to_numpy(t), np.array(data, dtype=to_numpy(t).dtype))


@pytest.mark.parametrize("np_dtype, dtype", [
    (np.float16, mt.float16), (np.float32, mt.float32), (np.float64, mt.float64),
    (np.int64, mt.int64), (np.int32, mt.int64), (np.bool_, mt.bool),
])
def test_numpy_data_dtype_inference(np_dtype, dtype, rng):
    arr = (rng.standard_normal((3, 4)) * 10).astype(np_dtype)
    t = mt.Tensor(arr)
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), arr)
    saved = arr.copy()
    arr[...] = np.logical_not(arr) if np_dtype is np.bool_ else arr + 1
    np.testing.assert_array_equal(t.numpy(), saved, err_msg="mt.tensor must copy its data")


def test_dtype_argument_overrides_inference():
    t = mt.tensor([1, 2, 3], dtype=mt.float64)
    assert t.dtype == mt.float64 and t.tolist() == [1.0, 2.0, 3.0]
    t = mt.tensor([1.7, -2.7], dtype=mt.int64)
    assert t.dtype == mt.int64 and t.tolist() == [1, -2]
    t = mt.tensor(np.array([0.0, 2.0]), dtype=mt.bool)
    assert t.tolist() == [False, True]


def test_tensor_from_tensor_copies(rng):
    a = mt.tensor(rng.standard_normal((2, 3)))
    b = mt.tensor(a)
    assert b.data_ptr() != a.data_ptr()
    np.testing.assert_array_equal(b.numpy(), a.numpy())
    c = mt.Tensor(a, dtype=mt.float32)
    assert c.dtype == mt.float32
    np.testing.assert_array_equal(c.numpy(), a.numpy().astype(np.float32))


@pytest.mark.parametrize("name, itemsize, is_float", [
    ("float32", 4, True), ("float64", 8, True), ("float16", 2, True), ("bfloat16", 2, True),
    ("int64", 8, False), ("bool", 1, False),
])
def test_dtype_objects(name, itemsize, is_float):
    d = getattr(mt, name)
    assert repr(d) == f"minitensor.{name}" and str(d) == f"minitensor.{name}"
    assert d.itemsize == itemsize and d.is_floating_point == is_float
    assert mt.zeros(2, dtype=d).itemsize == itemsize
    assert mt.zeros(2, dtype=d).dtype == d


def test_dtype_aliases():
    assert mt.float is mt.float32 or mt.float == mt.float32
    assert mt.double == mt.float64 and mt.half == mt.float16 and mt.long == mt.int64


def test_device_objects():
    cpu = mt.device("cpu")
    assert str(cpu) == "cpu" and cpu == "cpu" and cpu.type == "cpu" and cpu.index is None
    assert repr(cpu) == "device(type='cpu')"
    gpu = mt.device("cuda:1")
    assert str(gpu) == "cuda:1" and gpu.type == "cuda" and gpu.index == 1 and gpu != cpu
    assert mt.device("cuda", 1) == gpu and hash(mt.device("cuda", 1)) == hash(gpu)
    assert repr(gpu) == "device(type='cuda', index=1)"
    assert mt.zeros(1).device == mt.device("cpu")


# ------------------------------------------------------------------------------------- metadata


def test_shape_strides_offset():
    t = mt.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4) and t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
    assert t.stride() == (12, 4, 1) and t.stride(0) == 12 and t.stride(-2) == 4
    assert t.ndim == 3 and t.dim() == 3 and t.numel() == 24 and len(t) == 2
    assert t.storage_offset() == 0 and t.is_contiguous()
    v = t[1, 1:]
    assert v.shape == (2, 4) and v.stride() == (4, 1) and v.storage_offset() == 16
    tt = t.transpose(0, 2)
    assert tt.shape == (4, 3, 2) and tt.stride() == (1, 4, 12) and not tt.is_contiguous()
    assert mt.zeros(()).shape == () and mt.zeros(()).numel() == 1 and mt.zeros(()).stride() == ()
    assert mt.zeros(3, 0).numel() == 0 and mt.zeros(3, 0).is_contiguous()


def test_size_argument_forms():
    assert mt.zeros(2, 3).shape == mt.zeros((2, 3)).shape == mt.zeros([2, 3]).shape == (2, 3)
    assert mt.ones(()).shape == () and mt.empty(5).shape == (5,)


# ---------------------------------------------------------------------------------------- views

# (id, shape, tensor fn, numpy fn): every one of these must be a view on the same storage.
VIEW_CASES = [
    ("transpose", (3, 4, 5), lambda t: t.transpose(0, 2), lambda a: a.swapaxes(0, 2)),
    ("transpose-neg", (3, 4, 5), lambda t: t.transpose(-1, -2), lambda a: a.swapaxes(-1, -2)),
    ("permute", (2, 3, 4, 5), lambda t: t.permute(3, 1, 0, 2), lambda a: a.transpose(3, 1, 0, 2)),
    ("permute-neg", (2, 3, 4), lambda t: t.permute(-1, 0, 1), lambda a: a.transpose(2, 0, 1)),
    ("T", (3, 4, 5), lambda t: t.T, lambda a: a.T),
    ("slice", (6, 7), lambda t: t[1:4], lambda a: a[1:4]),
    ("slice-step", (10, 9), lambda t: t[1:9:3, ::2], lambda a: a[1:9:3, ::2]),
    ("slice-neg", (10, 9), lambda t: t[-3:, :-2], lambda a: a[-3:, :-2]),
    ("slice-clamp", (5, 4), lambda t: t[3:100, -100:2], lambda a: a[3:100, -100:2]),
    ("slice-empty", (5, 4), lambda t: t[4:2], lambda a: a[4:2]),
    ("int-index", (4, 5, 6), lambda t: t[1, :, 0], lambda a: a[1, :, 0]),
    ("neg-index", (4, 5, 6), lambda t: t[-1, -2], lambda a: a[-1, -2]),
    ("ellipsis-none", (4, 5), lambda t: t[..., None], lambda a: a[..., None]),
    ("ellipsis-int", (3, 4, 5), lambda t: t[..., 2], lambda a: a[..., 2]),
    ("none-middle", (3, 4), lambda t: t[:, None, 1:], lambda a: a[:, None, 1:]),
    ("select", (3, 4, 5), lambda t: t.select(1, 2), lambda a: a[:, 2]),
    ("select-neg", (3, 4, 5), lambda t: t.select(-1, -1), lambda a: a[..., -1]),
    ("unsqueeze0", (3, 4), lambda t: t.unsqueeze(0), lambda a: a[None]),
    ("unsqueeze-end", (3, 4), lambda t: t.unsqueeze(-1), lambda a: a[..., None]),
    ("unsqueeze-mid", (3, 4), lambda t: t.unsqueeze(1), lambda a: a[:, None]),
    ("squeeze-all", (1, 3, 1, 4, 1), lambda t: t.squeeze(), lambda a: a.squeeze()),
    ("squeeze-dim", (1, 3, 1, 4), lambda t: t.squeeze(2), lambda a: a.squeeze(2)),
    ("squeeze-noop", (2, 3), lambda t: t.squeeze(0), lambda a: a),
    ("reshape", (4, 6), lambda t: t.reshape(2, -1, 3), lambda a: a.reshape(2, -1, 3)),
    ("view", (4, 6), lambda t: t.view(24), lambda a: a.reshape(24)),
    ("view-tuple", (4, 6), lambda t: t.view((3, 8)), lambda a: a.reshape(3, 8)),
    ("view-of-transpose-ok", (4, 6, 5), lambda t: t.transpose(0, 1).view(6, 4, 5),
     lambda a: a.swapaxes(0, 1)),
    ("view-split-dim", (4, 6), lambda t: t.T.view(3, 2, 4), lambda a: a.T.reshape(3, 2, 4)),
    ("chain", (5, 6, 7), lambda t: t[1:, ::2].transpose(0, 2)[2:5].select(1, 1),
     lambda a: a[1:, ::2].swapaxes(0, 2)[2:5][:, 1]),
]


@pytest.mark.parametrize("case", VIEW_CASES, ids=lambda c: c[0])
def test_views_match_numpy_and_share_storage(case, rng):
    _, shape, tfn, afn = case
    base_np = rng.standard_normal(shape)
    base = mt.tensor(base_np)  # float64
    v = tfn(base)
    expected = afn(base_np)
    assert v.shape == expected.shape
    np.testing.assert_array_equal(v.numpy(), expected)
    assert v.is_contiguous() == expected.flags.c_contiguous
    if v.numel() == 0:
        return
    # metadata-only: writing through the base shows in the view
    assert np.shares_memory(v.numpy(), base.numpy())
    base.numpy()[...] = -base_np
    np.testing.assert_array_equal(v.numpy(), afn(-base_np))


def test_indexing_a_0d_tensor():
    t = mt.tensor(5.0)
    assert t[None].shape == (1,) and t[...].shape == () and t[()].shape == ()
    assert t[None].item() == 5.0


def test_strides_match_numpy_for_views(rng):
    a = rng.standard_normal((4, 5, 6))
    t = mt.tensor(a)
    for tv, av in [(t.transpose(0, 2), a.swapaxes(0, 2)), (t[1:, ::2, 3], a[1:, ::2, 3]),
                   (t.permute(1, 2, 0), a.transpose(1, 2, 0)), (t[::3], a[::3])]:
        assert tuple(s * 8 for s in tv.stride()) == av.strides
        offset = (av.__array_interface__["data"][0] - a.__array_interface__["data"][0])
        assert tv.data_ptr() - t.data_ptr() == offset
        assert tv.storage_offset() * 8 == offset


def test_writes_through_one_view_show_in_another(rng):
    t = mt.tensor(rng.standard_normal((4, 6)).astype(np.float32))
    a, b = t.T, t[1:3]
    a.numpy()[2, 1] = 123.0
    assert b.numpy()[0, 2] == 123.0
    assert t.tolist()[1][2] == 123.0
    r = t.reshape(24)
    r.numpy()[23] = -7.0
    assert t.numpy()[3, 5] == -7.0


def test_view_of_non_contiguous_raises_and_reshape_copies(rng):
    t = mt.tensor(rng.standard_normal((4, 6)))
    tt = t.T
    with pytest.raises(ValueError, match="view"):
        tt.view(24)
    r = tt.reshape(24)
    np.testing.assert_array_equal(r.numpy(), t.numpy().T.reshape(24))
    assert not np.shares_memory(r.numpy(), t.numpy())
    t.numpy()[0, 1] = 1000.0
    assert 1000.0 not in r.numpy()
    with pytest.raises(ValueError):
        t[:, 1:4].view(12)  # rows 6 apart, 3 wide: not one stride
    np.testing.assert_array_equal(t[:, ::2].view(12).numpy(), t.numpy()[:, ::2].reshape(12))  # 2*3 == 6: ok


def test_reshape_errors():
    t = mt.zeros(4, 6)
    with pytest.raises(ValueError):
        t.reshape(5, 5)
    with pytest.raises(ValueError):
        t.reshape(-1, -1)
    with pytest.raises(ValueError):
        t.view(7, -1)


def test_contiguous_and_clone(rng):
    t = mt.tensor(rng.standard_normal((5, 7)))
    assert t.contiguous().data_ptr() == t.data_ptr()
    v = t[:, 1::2].T
    c = v.contiguous()
    assert c.is_contiguous() and not v.is_contiguous() and c.data_ptr() != v.data_ptr()
    assert c.stride() == (5, 1)
    np.testing.assert_array_equal(c.numpy(), t.numpy()[:, 1::2].T)
    k = t.clone()
    assert k.data_ptr() != t.data_ptr() and k.is_contiguous()
    np.testing.assert_array_equal(k.numpy(), t.numpy())
    k.fill_(0.0)
    assert np.all(t.numpy() != 0.0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [pytest.param(mt.int64, id="int64"), pytest.param(mt.bool, id="bool")])
def test_contiguous_copy_of_5d_view_every_dtype(dtype, rng):
    data = rng.standard_normal((2, 3, 4, 5, 6)) * 4
    t = make_tensor(data, dtype) if dtype.is_floating_point else mt.tensor(data, dtype=dtype)
    v = t.permute(4, 2, 0, 3, 1)[1:, ::2]
    c = v.contiguous()
    np.testing.assert_array_equal(to_numpy(c), to_numpy(t).transpose(4, 2, 0, 3, 1)[1:, ::2])


# ---------------------------------------------------------------------------------- conversions

SPECIAL_F32 = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 65504.0, 65519.99, 65520.0, 1e5, 6e-5,
                        6.1e-5, 5.96e-8, 2.98e-8, 3e-8, 1e-10, 3.4e38, 1.17549435e-38, 1e-40,
                        0.1, 1 / 3], dtype=np.float32)


def bf16_tie_cases(rng) -> np.ndarray:
    """float32 values exactly halfway between two bfloat16 values (both even and odd below)."""
    hi = rng.integers(0x3F00, 0x4300, size=64, dtype=np.uint32)
    bits = (hi << 16) | 0x8000
    near = np.concatenate([bits, bits + 1, bits - 1, (hi << 16) | 0x7FFF])
    vals = near.astype(np.uint32).view(np.float32)
    return np.concatenate([vals, -vals])


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
def test_float16_conversion_matches_numpy(rng):
    x = np.concatenate([SPECIAL_F32, -SPECIAL_F32, (rng.standard_normal(500) * 100).astype(np.float32),
                        (rng.standard_normal(100) * 1e-5).astype(np.float32)])
    with np.errstate(over="ignore"):
        expected = x.astype(np.float16)
    for t in (mt.tensor(x).half(), mt.tensor(x).to(mt.float16), mt.tensor(x, dtype=mt.float16)):
        got = t.numpy()
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got.view(np.uint16), expected.view(np.uint16))
    back = mt.tensor(expected).float().numpy()
    np.testing.assert_array_equal(back, expected.astype(np.float32))
    assert np.isnan(mt.tensor([np.nan]).half().float().item())


def test_bfloat16_conversion_round_to_nearest_even(rng):
    x = np.concatenate([SPECIAL_F32, -SPECIAL_F32, bf16_tie_cases(rng),
                        (rng.standard_normal(500) * 100).astype(np.float32)])
    expected = bf16_round(x)
    for t in (mt.tensor(x).bfloat16(), mt.tensor(x).to(mt.bfloat16), mt.tensor(x, dtype=mt.bfloat16)):
        assert t.dtype == mt.bfloat16
        got = t.float().numpy()
        np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))
    assert np.isnan(mt.tensor([np.nan]).bfloat16().float().item())
    # 16-bit -> 64-bit and back are exact
    np.testing.assert_array_equal(mt.tensor(x).bfloat16().double().numpy(), expected.astype(np.float64))


@pytest.mark.parametrize("src, method, np_type", [
    (np.float64, "float", np.float32), (np.float32, "double", np.float64), (np.float32, "long", np.int64),
    (np.float64, "bool", np.bool_), (np.int64, "double", np.float64), (np.bool_, "float", np.float32),
    (np.int64, "bool", np.bool_), (np.bool_, "long", np.int64), (np.float16, "double", np.float64),
])
def test_dtype_conversions_match_numpy(src, method, np_type, rng):
    data = rng.standard_normal((4, 9)) * 50
    data[0, :3] = [0.0, -0.0, 0.5]
    arr = data.astype(src)
    got = getattr(mt.tensor(arr), method)().numpy()
    assert got.dtype == np_type
    np.testing.assert_array_equal(got, arr.astype(np_type))


def test_to_same_dtype_is_identity_and_to_signatures(rng):
    t = mt.tensor(rng.standard_normal(5).astype(np.float32))
    assert t.to(mt.float32).data_ptr() == t.data_ptr()
    assert t.to("cpu").data_ptr() == t.data_ptr()
    assert t.to("cpu", mt.float64).dtype == mt.float64
    assert t.to(device="cpu", dtype=mt.float16).dtype == mt.float16
    assert t.cpu().data_ptr() == t.data_ptr()
    # conversions of non-contiguous views
    v = mt.tensor(rng.standard_normal((6, 4))).T[:, 1::2]
    np.testing.assert_array_equal(v.float().numpy(), v.numpy().astype(np.float32))


# ------------------------------------------------------------------------------------------ fill_


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [pytest.param(mt.int64, id="int64")])
def test_fill_(dtype, device):
    t = mt.zeros(3, 5, dtype=dtype, device=device)
    assert t.fill_(2.5) is t or t.data_ptr() == t.fill_(2.5).data_ptr()
    np.testing.assert_array_equal(to_f64(t), np.full((3, 5), 2 if dtype == mt.int64 else 2.5))
    row = t[1]
    row.fill_(-1.0)
    expected = np.full((3, 5), 2 if dtype == mt.int64 else 2.5)
    expected[1] = -1
    np.testing.assert_array_equal(to_f64(t), expected)


def test_fill_non_contiguous_view_writes_the_base():
    base = mt.zeros(3, 4)
    base.T[1:3].fill_(1.0)  # columns 1 and 2 of base, a strided view
    np.testing.assert_array_equal(to_f64(base), np.array([[0, 1, 1, 0]] * 3, dtype=np.float64))


# ------------------------------------------------------------------------------------ repr/tolist


@pytest.mark.parametrize("make, expected", [
    (lambda: mt.tensor([[0.09, 0.2447, 0.6652], [1.0, 2.0, 3.0]]),
     "tensor([[0.0900, 0.2447, 0.6652],\n        [1.0000, 2.0000, 3.0000]])"),
    (lambda: mt.tensor([1.5, -2.25], dtype=mt.float64), "tensor([ 1.5000, -2.2500], dtype=minitensor.float64)"),
    (lambda: mt.tensor([1, 2, 3]), "tensor([1, 2, 3])"),
    (lambda: mt.tensor([True, False]), "tensor([ True, False])"),
    (lambda: mt.tensor(2.5), "tensor(2.5000)"),
    (lambda: mt.tensor([0.5], dtype=mt.float16), "tensor([0.5000], dtype=minitensor.float16)"),
    (lambda: mt.tensor([0.5], dtype=mt.bfloat16), "tensor([0.5000], dtype=minitensor.bfloat16)"),
    (lambda: mt.zeros(0), "tensor([])"),
    (lambda: mt.zeros(0, 3), "tensor([], size=(0, 3))"),
])
def test_repr(make, expected):
    t = make()
    assert repr(t) == expected
    assert str(t) == expected


def test_repr_of_softmax_output():
    y = mt.tensor([[1.0, 2.0, 3.0]]).softmax(1)
    assert repr(y) == "tensor([[0.0900, 0.2447, 0.6652]])"


@pytest.mark.parametrize("device", DEVICES)
def test_repr_device(device):
    t = mt.tensor([1.0, 2.0], device=device)
    suffix = ", device='cuda:0')" if device == "cuda" else "])"
    assert repr(t).endswith(suffix)


def test_tolist_and_item(rng):
    a = rng.standard_normal((2, 3))
    t = mt.tensor(a)
    assert t.tolist() == a.tolist()
    assert mt.tensor(3).item() == 3 and isinstance(mt.tensor(3).item(), int)
    assert mt.tensor(True).item() is True
    assert mt.tensor([[2.5]]).item() == 2.5 and isinstance(mt.tensor([[2.5]]).item(), float)
    assert mt.tensor([0.5], dtype=mt.bfloat16).item() == 0.5
    assert mt.tensor(1.25).tolist() == 1.25
    assert t[1, 2].item() == a[1, 2]
    assert t.T.tolist() == a.T.tolist()
    with pytest.raises(ValueError):
        t.item()


# ------------------------------------------------------------------------------------------- CUDA


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [pytest.param(mt.int64, id="int64"), pytest.param(mt.bool, id="bool")])
def test_cuda_round_trip(dtype, rng):
    data = rng.standard_normal((5, 33)) * 10
    t = make_tensor(data, dtype) if dtype.is_floating_point else mt.tensor(data, dtype=dtype)
    for g in (t.cuda(), t.to("cuda"), t.to("cuda:0"), t.to(mt.device("cuda", 0)), mt.tensor(t, device="cuda")):
        assert g.device == "cuda:0" and g.is_cuda and g.dtype == dtype
        back = g.cpu()
        assert back.device == "cpu"
        np.testing.assert_array_equal(to_numpy(back), to_numpy(t))
    # a non-contiguous view moves as its values
    v = t.T[1::2]
    np.testing.assert_array_equal(to_numpy(v.cuda()), to_numpy(v))
    np.testing.assert_array_equal(to_numpy(v.cuda().contiguous()), to_numpy(v))


@pytest.mark.cuda
def test_cuda_conversions_and_creation(rng):
    x = rng.standard_normal((7, 9)).astype(np.float32)
    g = mt.tensor(x, device="cuda")
    np.testing.assert_array_equal(g.half().cpu().numpy(), x.astype(np.float16))
    np.testing.assert_array_equal(g.bfloat16().float().cpu().numpy(), bf16_round(x))
    np.testing.assert_array_equal(g.to("cpu", mt.float64).numpy(), x.astype(np.float64))
    np.testing.assert_array_equal(g.T.contiguous().cpu().numpy(), x.T)
    np.testing.assert_array_equal(g[2:, ::3].clone().cpu().numpy(), x[2:, ::3])
    mt.manual_seed(5)
    a = mt.randn(100, device="cuda").cpu().numpy()
    mt.manual_seed(5)
    np.testing.assert_array_equal(mt.randn(100).numpy(), a)
    f = mt.zeros(4, 4, device="cuda").fill_(3.0)
    assert f.cpu().tolist() == [[3.0] * 4] * 4
    assert g.tolist() == x.tolist()
    assert mt.tensor([[2.5]], device="cuda").item() == 2.5
    mt.cuda.synchronize()
    assert mt.cuda.device_count() >= 1 and mt.cuda.is_built()
    with pytest.raises(TypeError):
        g.numpy()


def test_cuda_queries_consistent():
    assert isinstance(mt.cuda.is_available(), bool)
    assert isinstance(mt.cuda.is_built(), bool)
    if not mt.cuda.is_built():
        assert not mt.cuda.is_available()
    assert mt.cuda.device_count() == 0 or mt.cuda.is_available()


def test_random_input_helper_is_not_constant(rng):
    x = random_input(rng, (3, 4))
    assert np.ptp(x) > 0


@pytest.mark.cuda
def test_tensor_of_a_cuda_tensor_copies_on_cuda():
    g = mt.randn(3, 4, device="cuda")
    c = mt.Tensor(g)
    assert c.device == g.device and c.data_ptr() != g.data_ptr() and c.tolist() == g.tolist()
    on_cpu = mt.Tensor(g, device="cpu")
    assert on_cpu.device == "cpu" and on_cpu.tolist() == g.tolist()


@pytest.mark.skipif("libasan" in __import__("os").environ.get("LD_PRELOAD", ""),
                    reason="the large-block cache is off under AddressSanitizer")
def test_large_host_blocks_are_reused_only_after_free(rng):
    n = 3 * 2**20  # 12 MB of float32: a size the host block cache keeps
    a, b = mt.empty(n), mt.empty(n)
    assert a.data_ptr() != b.data_ptr()  # two live tensors never share a block
    freed = a.data_ptr()
    del a
    c = mt.zeros(n)
    assert c.data_ptr() == freed  # the freed block came back instead of fresh pages
    assert not c.numpy().any()  # and zeros were written over its old contents
    x_np = rng.standard_normal((1024, 3 * 1024)).astype(np.float32)
    for _ in range(3):  # outputs recycled through the cache stay correct
        y = mt.from_numpy(x_np).softmax(0)
        np.testing.assert_allclose(y.numpy().sum(axis=0), 1.0, rtol=1e-5)


def test_new_without_init_gives_an_empty_tensor():
    # torch.Tensor.__new__(torch.Tensor) is tensor([]); an unconstructed C++ tensor used to crash
    # repr (and every method) by reading garbage memory.
    t = mt.Tensor.__new__(mt.Tensor)
    assert t.shape == (0,) and t.dtype == mt.float32 and t.tolist() == []
    assert repr(t) == "tensor([])"
    assert (t + 1).shape == (0,)
    assert mt.Tensor([1.0, 2.0]).tolist() == [1.0, 2.0]  # with data, __init__ still builds it
