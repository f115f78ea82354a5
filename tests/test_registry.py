"""The operator registry (minitensor/_registry.py) is the one list of operator names: what it holds
is exported as mt.<name>, listed in __all__ and, for methods, attached to Tensor."""

from __future__ import annotations

import pytest

import minitensor as mt
from minitensor._registry import METHODS, OPS, op

# What the package exported before the registry existed: none of it may go missing.
EXPECTED_FUNCTIONS = {
    "abs", "add", "all", "amax", "amin", "any", "argmax", "argmin", "cat", "chunk", "clamp", "clip", "concat",
    "concatenate", "div", "eq", "exp", "flatten", "ge", "gt", "index_select", "le", "log", "log_softmax", "lt",
    "matmul", "max", "maximum", "mean", "min", "minimum", "mul", "narrow", "ne", "neg", "pow", "prod", "relu",
    "sigmoid", "softmax", "softmax_impls", "split", "sqrt", "stack", "std", "sub", "sum", "tanh", "var", "where",
}
NOT_METHODS = {"cat", "concat", "concatenate", "stack", "where", "softmax_impls"}


def test_every_registered_operator_is_exported():
    assert EXPECTED_FUNCTIONS <= set(OPS)
    for name, function in OPS.items():
        assert getattr(mt, name) is function, name
        assert name in mt.__all__, name


def test_methods_are_the_registered_functions():
    assert set(METHODS) == set(OPS) - NOT_METHODS
    for name, function in METHODS.items():
        assert getattr(mt.Tensor, name) is function, name
    x = mt.tensor([[1.0, -2.0], [3.0, 4.0]])
    assert x.clip(0, 3).tolist() == mt.clamp(x, 0, 3).tolist() == [[1.0, 0.0], [3.0, 3.0]]


def test_all_has_no_duplicates_and_only_real_names():
    assert len(mt.__all__) == len(set(mt.__all__))
    assert all(hasattr(mt, name) for name in mt.__all__)


def test_a_name_registers_once():
    with pytest.raises(RuntimeError, match="registered twice"):
        @op
        def add(input, other):  # noqa: ARG001
            return None
