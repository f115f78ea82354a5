"""Derives and checks the polynomial of ops/common/float64_exp.cuh (exp_nonpositive).

    python tools/float64_exp_minimax.py            # degree 11: coefficients, then the ulp check
    python tools/float64_exp_minimax.py --degree 10 --args 6000

Needs mpmath (not a dependency of the package: `pip install mpmath`). Finds the polynomial of the
given degree that is minimax in relative error for exp(r) on [-ln2/2, ln2/2] (the Remez exchange,
in 300-bit arithmetic), prints its coefficients as C hex literals (r^0 first), then evaluates
exp_nonpositive's whole path in float64 as the GPU does it, every fma rounded once (emulated
exactly), on random arguments in [-707, 0] against a 200-bit exp, and prints the worst error in
ulp beside that of the degree-13 Taylor series the header used before.
"""
from __future__ import annotations

import argparse
import math
import random
import struct

import mpmath as mp

LOG2E = float.fromhex("0x1.71547652b82fep+0")
SHIFTER = float.fromhex("0x1.8p+52")  # 1.5 * 2^52: adding it rounds to an integer in the low word
LN2_HI = float.fromhex("0x1.62e42fefa3800p-1")
LN2_LO = float.fromhex("0x1.ef35793c76730p-45")


def remez(degree: int) -> tuple[list, mp.mpf]:
    """Coefficients (r^0 first) and the equioscillating relative error."""
    a, b = -mp.log(2) / 2, mp.log(2) / 2
    m = degree + 2
    xs = [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * i / (m - 1)) for i in range(m)]
    for _ in range(30):
        matrix, rhs = mp.matrix(m, m), mp.matrix(m, 1)
        for i, x in enumerate(xs):
            for k in range(degree + 1):
                matrix[i, k] = x ** k
            matrix[i, degree + 1] = (-1) ** i * mp.exp(x)
            rhs[i] = mp.exp(x)
        solution = mp.lu_solve(matrix, rhs)
        coefs, level = [solution[k] for k in range(degree + 1)], solution[degree + 1]

        def err(x):
            return mp.polyval(coefs[::-1], x) / mp.exp(x) - 1

        # The new reference: the error's extrema, bracketed on a grid, refined by ternary search.
        steps = 4000
        h = (b - a) / steps
        grid = [a + h * i for i in range(steps + 1)]
        vals = [err(x) for x in grid]
        extrema = [a]
        for i in range(1, steps):
            if (vals[i] - vals[i - 1]) * (vals[i + 1] - vals[i]) < 0:
                lo, hi, sign = grid[i] - h, grid[i] + h, 1 if vals[i] > 0 else -1
                for _ in range(60):
                    m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
                    lo, hi = (m1, hi) if sign * err(m1) < sign * err(m2) else (lo, m2)
                extrema.append((lo + hi) / 2)
        extrema.append(b)
        if len(extrema) != m:
            raise RuntimeError(f"{len(extrema)} extrema where {m} were expected")
        worst = max(abs(err(x)) for x in extrema)
        xs = extrema
        if abs(worst - abs(level)) < abs(level) * mp.mpf("1e-10"):
            break
    return coefs, level


def fma(a: float, b: float, c: float) -> float:
    return float(mp.mpf(a) * mp.mpf(b) + mp.mpf(c))  # exact at 200 bits, then one rounding


def exp_nonpositive(d: float, horner: list[float]) -> float:
    """The header's steps, in float64 (horner: the highest power first)."""
    d = max(d, -707.0)
    t = fma(d, LOG2E, SHIFTER)
    n = struct.unpack("<i", struct.pack("<d", t)[:4])[0]
    nd = t - SHIFTER
    r = fma(nd, -LN2_LO, fma(nd, -LN2_HI, d))
    p = horner[0]
    for c in horner[1:]:
        p = fma(p, r, c)
    return p * 2.0 ** n


def worst_ulp(horner: list[float], args: list[float]) -> float:
    worst = 0.0
    for d in args:
        exact = mp.exp(mp.mpf(d))
        ulp = 2.0 ** (math.frexp(float(exact))[1] - 53)
        worst = max(worst, float(abs(mp.mpf(exp_nonpositive(d, horner)) - exact)) / ulp)
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--degree", type=int, default=11)
    parser.add_argument("--args", type=int, default=42000, help="random arguments to check")
    args = parser.parse_args()
    mp.mp.prec = 300
    coefs, level = remez(args.degree)
    print(f"degree {args.degree}: relative error {mp.nstr(level, 3)} on [-ln2/2, ln2/2]")
    for k, c in enumerate(coefs):
        print(f"  r^{k:<2} {float(c).hex()}")
    mp.mp.prec = 200
    rng = random.Random(1)
    half = args.args // 2
    checks = [-rng.random() for _ in range(half)] + [-700 * rng.random() for _ in range(half)]
    minimax = [float(c) for c in reversed(coefs)]
    taylor = [1 / math.factorial(k) for k in range(13, -1, -1)]
    print(f"worst error over {len(checks)} arguments: {worst_ulp(minimax, checks):.3f} ulp "
          f"(the degree-13 Taylor series: {worst_ulp(taylor, checks):.3f})")


if __name__ == "__main__":
    main()
