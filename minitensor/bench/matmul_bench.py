"""GFLOP/s of minitensor's CUDA matmul (square n x n, float32 and float64), beside torch.matmul.

    python -m minitensor.bench.matmul_bench [--sizes 1024 2048 4096] [--dtypes float32 float64]

Timed with CUDA events (torch's or cupy's when installed, else synchronize + clock), median of
many runs after warm-up. torch runs with TF32 disabled so both sides do true float32 math.
FLOP count: 2 n^3.
"""

from __future__ import annotations

import argparse

import minitensor as mt

from . import optional
from .timing import MeasureConfig, cuda_timer, measure


def _torch_reference(torch, n: int, dtype_name: str, timer, config):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dt = getattr(torch, dtype_name)
    a = torch.randn(n, n, device="cuda", dtype=dt)
    b = torch.randn(n, n, device="cuda", dtype=dt)
    return measure(lambda: torch.matmul(a, b), timer, config).median_s


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096])
    parser.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args(argv)
    if not mt.cuda.is_available():
        raise SystemExit("matmul_bench: CUDA is not available (minitensor built without CUDA, or no GPU)")

    timer = cuda_timer(mt.cuda.synchronize)
    config = MeasureConfig(max_reps=args.reps, min_reps=3, warmup=2, budget_s=5.0)
    torch = optional.torch_with_cuda()
    print(f"timer: {timer.name}; torch: {'yes (TF32 off)' if torch else 'not installed'}")
    print(f"{'dtype':>8} {'n':>6} {'minitensor ms':>14} {'GFLOP/s':>9} {'torch ms':>9} {'GFLOP/s':>9} {'ratio':>6}")
    for dtype_name in args.dtypes:
        dtype = getattr(mt, dtype_name)
        for n in args.sizes:
            a = mt.randn(n, n, dtype=dtype, device="cuda")
            b = mt.randn(n, n, dtype=dtype, device="cuda")
            flops = 2.0 * n ** 3
            ours = measure(lambda: mt._C.matmul(a, b), timer, config).median_s
            line = f"{dtype_name:>8} {n:>6} {ours * 1e3:>14.3f} {flops / ours / 1e9:>9.0f}"
            if torch is not None:
                ref = _torch_reference(torch, n, dtype_name, timer, config)
                line += f" {ref * 1e3:>9.3f} {flops / ref / 1e9:>9.0f} {ref / ours:>6.2f}"
            print(line, flush=True)


if __name__ == "__main__":
    main()
