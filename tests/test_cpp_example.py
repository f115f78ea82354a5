"""The C++ example builds and runs as a standalone program, with no Python and no CUDA."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "cpp" / "softmax_example.cpp"


def _have_cxx() -> bool:
    return any(shutil.which(c) for c in (os.environ.get("CXX", ""), "c++", "g++", "clang++") if c)


def _run(cmd, cwd, timeout):
    # A sanitizer runtime preloaded into this process (scripts/sanitize_cpu.sh) must not follow
    # cmake and make: they are not built for it.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.mark.skipif(not (ROOT / "CMakeLists.txt").is_file(), reason=f"no CMakeLists.txt at {ROOT} (not a source checkout)")
@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
@pytest.mark.skipif(not _have_cxx(), reason="no C++ compiler (c++, g++, clang++ or $CXX) found")
def test_cpp_softmax_example(tmp_path):
    assert EXAMPLE.is_file(), f"{EXAMPLE} is missing"
    build = tmp_path / "build"
    _run(["cmake", "-S", str(ROOT), "-B", str(build), "-DMINITENSOR_PYTHON=OFF", "-DMINITENSOR_CUDA=OFF", "-DMINITENSOR_EXAMPLES=ON",
          "-DCMAKE_BUILD_TYPE=Release"], cwd=tmp_path, timeout=300)
    _run(["cmake", "--build", str(build), "--target", "softmax_example", "-j2"], cwd=tmp_path, timeout=900)
    exe = next((p for p in build.rglob("softmax_example") if p.is_file() and os.access(p, os.X_OK)), None)
    assert exe is not None, f"softmax_example was not produced under {build}"
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"softmax_example exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    line = re.search(r"^softmax_example: .*max error ([0-9.eE+-]+): OK$", proc.stdout, re.M)
    assert line, f"no check line in the output:\n{proc.stdout}"
    assert float(line.group(1)) < 1e-6
