"""One batch of the crash fuzz (tests/test_crash_fuzz.py runs it in a subprocess): hypothesis draws
hostile call sequences (sizes near int64's limits, odd strides through slicing and expand, every
dtype, NaN/inf/huge values, read-only memory) over the public ops. Any Python exception is an
acceptable answer; the parent fails the batch only when this process dies by a signal.

usage: python crash_fuzz_child.py SEED EXAMPLES
"""

from __future__ import annotations

import sys

import numpy as np
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import minitensor as mt

DTYPES = [mt.float32, mt.float64, mt.float16, mt.bfloat16, mt.int64, mt.bool]
# Small sizes, plus sizes whose products overflow int64 (the interesting failures); never a legal
# but huge size, which would only test the machine's memory.
HOSTILE = [2**31, 2**32, 2**40, 2**62, 2**63 - 1, -(2**63), 2**64, -1, -2]
SIZES = st.one_of(st.integers(0, 4), st.sampled_from(HOSTILE))
VALUES = st.one_of(st.integers(-3, 3), st.sampled_from([2**53 + 1, 2**62, 2**70, -(2**63)]),
                   st.floats(allow_nan=True, allow_infinity=True, width=64))
LIMIT = 10**5  # results bigger than this are dropped, not used further (metadata-only views can be)


def small(shape) -> bool:
    n = 1
    for s in shape:
        n *= s
    return 0 <= n <= LIMIT and all(s >= 0 for s in shape)


ACTIONS = [
    ("reshape", st.lists(SIZES, max_size=4)),
    ("view", st.lists(SIZES, max_size=4)),
    ("expand", st.lists(SIZES, max_size=4)),
    ("slice", st.tuples(st.integers(-3, 3), SIZES, SIZES, st.one_of(st.integers(1, 3), st.sampled_from(HOSTILE)))),
    ("select", st.tuples(st.integers(-3, 3), SIZES)),
    ("transpose", st.tuples(st.integers(-3, 3), st.integers(-3, 3))),
    ("unsqueeze", st.integers(-4, 4)),
    ("binary", st.tuples(st.sampled_from(["add", "mul", "sub", "div", "eq", "lt", "maximum"]), VALUES)),
    ("inplace", st.tuples(st.sampled_from(["add_", "mul_", "fill_", "zero_"]), VALUES)),
    ("reduce", st.tuples(st.sampled_from(["sum", "mean", "amax", "softmax", "log_softmax"]), st.integers(-3, 3))),
    ("setitem", st.tuples(SIZES, VALUES)),
    ("to", st.sampled_from(DTYPES)),
    ("contiguous", st.just(None)),
    ("matmul_self_t", st.just(None)),
    ("one_hot", SIZES),
    ("cat", st.integers(-3, 3)),
    ("read", st.sampled_from(["repr", "tolist", "numpy", "iter", "item"])),
]


def apply(t, name, arg):
    if name in ("reshape", "view", "expand"):
        return getattr(t, name)(*arg)
    if name == "slice":
        dim, start, stop, step = arg
        key = [slice(None)] * max(t.ndim, 0)
        if not key:
            return t[start:stop:step]
        key[dim % t.ndim] = slice(start, stop, step)
        return t[tuple(key)]
    if name == "select":
        return t.select(*arg)
    if name == "transpose":
        return t.transpose(*arg)
    if name == "unsqueeze":
        return t.unsqueeze(arg)
    if name == "binary":
        op, value = arg
        return getattr(mt, op)(t, value)
    if name == "inplace":
        op, value = arg
        return getattr(t, op)() if op == "zero_" else getattr(t, op)(value)
    if name == "reduce":
        op, dim = arg
        return getattr(t, op)(dim)
    if name == "setitem":
        index, value = arg
        t[index] = value
        return t
    if name == "to":
        return t.to(arg)
    if name == "contiguous":
        return t.contiguous()
    if name == "matmul_self_t":
        return t @ t.T
    if name == "one_hot":
        return mt.one_hot(t.long().reshape(-1).abs(), arg)
    if name == "cat":
        return mt.cat([t, t], arg)
    if arg == "repr":
        repr(t)
    elif arg == "tolist":
        t.tolist()
    elif arg == "numpy" and t.dtype != mt.bfloat16:
        t.numpy()
    elif arg == "iter":
        list(t)
    elif arg == "item":
        t.item()
    return t


@st.composite
def starts(draw):
    kind = draw(st.sampled_from(["zeros", "arange", "full", "empty", "from_numpy_ro", "new"]))
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(st.lists(SIZES, max_size=3))
    if kind == "arange":
        start, step = draw(st.sampled_from([(0, 1), (2**62, 1), (-(2**63), 2**62), (2**53, 3)]))
        return kind, (start, start + step * draw(st.integers(0, 20)) if step < 2**62 else 2**63 - 1, step), dtype
    if kind == "full":
        return kind, (shape, draw(VALUES)), dtype
    return kind, shape, dtype


def start_tensor(kind, arg, dtype):
    if kind == "zeros":
        return mt.zeros(*arg, dtype=dtype)
    if kind == "empty":
        return mt.empty(*arg, dtype=dtype)
    if kind == "arange":
        return mt.arange(*arg)
    if kind == "full":
        shape, value = arg
        return mt.full(shape, value, dtype=dtype)
    if kind == "new":
        return mt.Tensor.__new__(mt.Tensor)
    if not small(arg):  # from_numpy_ro: a read-only NumPy array of a legal shape
        return mt.Tensor.__new__(mt.Tensor)
    a = np.zeros(arg)
    a.flags.writeable = False
    return mt.from_numpy(a)


def run(start, steps):
    kind, arg, dtype = start
    if kind in ("zeros", "empty", "full") and small(arg if kind != "full" else arg[0]) is False:
        # Only sizes that overflow are worth trying: they must raise, never allocate.
        sizes = arg if kind != "full" else arg[0]
        n = 1
        for s in sizes:
            n *= s
        if all(s >= 0 for s in sizes) and n < 2**63:
            return
    try:
        t = start_tensor(kind, arg, dtype)
    except Exception:
        return
    for name, value in steps:
        if t.numel() > LIMIT:
            return
        try:
            out = apply(t, name, value)
        except Exception:
            continue
        if isinstance(out, mt.Tensor):
            t = out


STEPS = st.lists(st.one_of(*[st.tuples(st.just(n), s) for n, s in ACTIONS]), max_size=6)


def main() -> None:
    batch_seed, examples = int(sys.argv[1]), int(sys.argv[2])

    @seed(batch_seed)
    @settings(max_examples=examples, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(starts(), STEPS)
    def fuzz(start, steps):
        run(start, steps)

    fuzz()
    print("batch ok")


if __name__ == "__main__":
    main()
