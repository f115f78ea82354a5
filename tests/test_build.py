"""How the package is built: portable CPU flags by default, the C++ example only on request, one
version string."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import minitensor as mt

ROOT = Path(__file__).resolve().parents[1]

needs_checkout = pytest.mark.skipif(not (ROOT / "CMakeLists.txt").is_file() or shutil.which("cmake") is None,
                                    reason="needs a source checkout and cmake")


def _configure(tmp_path: Path, *defines: str) -> list[dict]:
    """Configures the C++ library alone (no Python, no CUDA) and returns its compile commands."""
    build = tmp_path / "build"
    # A sanitizer runtime preloaded into this process (scripts/sanitize_cpu.sh) must not follow
    # cmake and make: they are not built for it (ASan reports make's own strndup).
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    proc = subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-DMINITENSOR_PYTHON=OFF",
                           "-DMINITENSOR_CUDA=OFF", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON", *defines],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((build / "compile_commands.json").read_text())


@needs_checkout
def test_default_build_is_portable_and_leaves_out_the_example(tmp_path):
    commands = _configure(tmp_path)
    assert commands, "no compile commands were written"
    assert not [c["file"] for c in commands if "-march=native" in c["command"]]
    assert not [c["file"] for c in commands if c["file"].endswith("softmax_example.cpp")]


@needs_checkout
def test_native_and_example_are_opt_in(tmp_path):
    # The other side of the test above: the flags it looks for are the ones the options add.
    commands = _configure(tmp_path, "-DMINITENSOR_NATIVE=ON", "-DMINITENSOR_EXAMPLES=ON")
    library = [c for c in commands if "/core/" in c["file"] or "/ops/" in c["file"]]
    assert library and all("-march=native" in c["command"] for c in library)
    assert [c["file"] for c in commands if c["file"].endswith("softmax_example.cpp")]


def test_version_is_the_installed_distributions():
    assert mt.__version__ == importlib.metadata.version("minitensor")


@needs_checkout
def test_pyproject_does_not_write_the_version_again():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert mt.__version__ not in pyproject
