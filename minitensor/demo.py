"""python -m minitensor.demo: softmax and log_softmax over several dims, on the CPU and on CUDA
when available, each checked against a float64 NumPy reference, with a short report."""

from __future__ import annotations

import time

import numpy as np

import minitensor as mt


def _reference(x: np.ndarray, dim: int, log: bool) -> np.ndarray:
    x = x.astype(np.float64)
    shifted = x - x.max(axis=dim, keepdims=True)
    log_sum = np.log(np.exp(shifted).sum(axis=dim, keepdims=True))
    return shifted - log_sum if log else np.exp(shifted - log_sum)


def _devices() -> list[str]:
    return ["cpu", "cuda"] if mt.cuda.is_available() else ["cpu"]


def run_softmax_checks() -> bool:
    rng = np.random.default_rng()
    cases = [((2, 3), 1), ((2, 3, 4, 5), -3), ((8, 1000), -1), ((4, 128, 7, 7), 1), ((), 0)]
    tolerance = {mt.float32: 1e-6, mt.float64: 1e-12}
    all_ok = True
    print(f"{'device':<7}{'dtype':<20}{'shape':<18}{'dim':>4}  {'op':<12}{'max error':>11}  result")
    for device in _devices():
        for dtype in (mt.float32, mt.float64):
            for shape, dim in cases:
                data = rng.standard_normal(shape) * 3
                x = mt.tensor(data, dtype=dtype, device=device)
                for log in (False, True):
                    op = "log_softmax" if log else "softmax"
                    y = x.log_softmax(dim) if log else x.softmax(dim)
                    expected = _reference(x.double().cpu().numpy(), dim, log)
                    error = float(np.max(np.abs(y.cpu().double().numpy() - expected), initial=0.0))
                    ok = error <= tolerance[dtype] * max(1.0, float(np.max(np.abs(expected), initial=0.0)))
                    all_ok &= ok
                    print(f"{device:<7}{str(dtype):<20}{str(shape):<18}{dim:>4}  {op:<12}{error:>11.2e}  "
                          f"{'ok' if ok else 'MISMATCH'}")
    return all_ok


def main() -> int:
    print(f"minitensor {mt.__version__}: CUDA built={mt.cuda.is_built()} available={mt.cuda.is_available()}")
    x = mt.Tensor([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
    print("x =", x)
    print("x.softmax(dim=1) =", x.softmax(dim=1))
    print()
    start = time.perf_counter()
    ok = run_softmax_checks()
    print(f"\nsoftmax checks: {'all match NumPy' if ok else 'MISMATCHES FOUND'} "
          f"({time.perf_counter() - start:.2f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
