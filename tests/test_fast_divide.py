"""FastDivisor (ops/common/fast_divide.h), the column kernels' division by a multiply, against the
division it replaces, on the host: the arithmetic is the same on the GPU, and CI has no GPU."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Every divisor to 4096 and around each power of two against the edges of the range (0, 2^31 - 1,
# the multiples of d and their neighbours near the top) and against random numerators.
CHECK = r"""
#include <cstdio>
#include <random>
#include "ops/common/fast_divide.h"

int main() {
  std::mt19937_64 rng(20261130);
  const uint32_t top = (1u << 31) - 1;
  long checks = 0, bad = 0;
  auto check = [&](uint32_t d, uint32_t n) {
    const mt::FastDivisor f(d);
    const uint32_t q = f.quotient(n);
    ++checks;
    if (q != n / d || f.remainder(n, q) != n % d) {
      if (bad++ < 5) std::printf("wrong: %u / %u gave %u rem %u\n", n, d, q, f.remainder(n, q));
    }
  };
  auto numerators = [&](uint32_t d) {
    for (uint32_t n = 0; n < 300; ++n) check(d, n);
    const uint32_t last = top / d * d;
    for (uint32_t n : {top, top - 1, last, last - 1, d, d - 1, 2 * (d / 2) + 1})
      if (n <= top) check(d, n);
    for (int k = 0; k < 200; ++k) check(d, uint32_t(rng() % (uint64_t(top) + 1)));
  };
  for (uint32_t d = 1; d <= 4096; ++d) numerators(d);
  for (int s = 1; s < 31; ++s)
    for (uint32_t d : {(1u << s) - 1, 1u << s, (1u << s) + 1}) numerators(d);
  for (int k = 0; k < 2000; ++k) numerators(1 + uint32_t(rng() % top));
  std::printf("fast_divide: %ld checks, %ld wrong\n", checks, bad);
  return bad == 0 ? 0 : 1;
}
"""


def _cxx() -> str | None:
    for c in (os.environ.get("CXX", ""), "c++", "g++", "clang++"):
        if c and shutil.which(c):
            return c
    return None


@pytest.mark.skipif(not (ROOT / "ops" / "common" / "fast_divide.h").is_file(), reason="not a source checkout")
@pytest.mark.skipif(_cxx() is None, reason="no C++ compiler (c++, g++, clang++ or $CXX) found")
def test_fast_divisor_matches_division(tmp_path):
    src, exe = tmp_path / "check.cpp", tmp_path / "check"
    src.write_text(CHECK)
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}  # see test_cpp_example.py
    built = subprocess.run([_cxx(), "-std=c++17", "-O2", "-I", str(ROOT), str(src), "-o", str(exe)],
                           capture_output=True, text=True, timeout=120, env=env)
    assert built.returncode == 0, built.stderr[-4000:]
    ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, env=env)
    assert ran.returncode == 0, ran.stdout[-2000:]
    assert ", 0 wrong" in ran.stdout, ran.stdout
