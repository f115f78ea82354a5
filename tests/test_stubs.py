"""minitensor/_C.pyi (shipped with py.typed) must describe the compiled module: every public name of
minitensor._C, of its cuda submodule and of the C++-bound members of Tensor, dtype and device
must have a stub, so an editor or a type checker never reports a real function as missing."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from minitensor import _C

# The checkout's stub (the one being edited) when the tests run from one, else the installed copy.
STUB = Path(__file__).resolve().parents[1] / "minitensor" / "_C.pyi"
if not STUB.is_file():
    STUB = Path(_C.__file__).with_name("_C.pyi")


def _stub_names() -> tuple[set[str], dict[str, set[str]]]:
    tree = ast.parse(STUB.read_text())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        if isinstance(node, ast.ClassDef):
            members[node.name] = {n.name for n in node.body if isinstance(n, ast.FunctionDef)} | {
                n.target.id for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        elif isinstance(node, ast.Assign):
            top.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return top, members


def _public(names) -> set[str]:
    return {n for n in names if not n.startswith("_")}


# The extension as the C++ binds it: loaded in a fresh interpreter without the package, whose
# import attaches Python methods to Tensor (those are Python's own and need no stub).
_LIST_BOUND_NAMES = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("_C", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps({"module": dir(module), "cuda": dir(module.cuda),
                  **{c: list(vars(getattr(module, c))) for c in ("Tensor", "dtype", "device")}}))
"""


@pytest.fixture(scope="module")
def bound():
    proc = subprocess.run([sys.executable, "-c", _LIST_BOUND_NAMES, _C.__file__], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return {k: _public(v) for k, v in json.loads(proc.stdout).items()}


def test_every_public_name_of_the_module_has_a_stub(bound):
    top, _ = _stub_names()
    missing = sorted(bound["module"] - top)
    assert not missing, f"minitensor/_C.pyi lacks {missing}"


@pytest.mark.parametrize("cls", ["Tensor", "dtype", "device"])
def test_every_cpp_member_has_a_stub(cls, bound):
    _, members = _stub_names()
    missing = sorted(bound[cls] - members.get(cls, set()))
    assert not missing, f"minitensor/_C.pyi's {cls} lacks {missing}"


def test_every_cuda_function_has_a_stub(bound):
    _, members = _stub_names()
    missing = sorted(bound["cuda"] - members.get("cuda", set()))
    assert not missing, f"minitensor/_C.pyi's cuda lacks {missing}"


def test_stub_names_exist():
    # The other direction: a stub for something the module does not have misleads as much.
    top, members = _stub_names()
    type_aliases = {n for n in top if n.startswith("_") and n[1:2].isupper()}  # _Device, _Shape, ...
    assert not sorted(n for n in top - type_aliases if not hasattr(_C, n))
    for cls, names in members.items():
        assert not sorted(n for n in names if not hasattr(getattr(_C, cls), n)), cls
