"""minitensor.bench: benchmarks for minitensor's operators.

    python -m minitensor.bench softmax [--device cuda|cpu] [--compare torch,compile,liger,quack] [--log]
                                       [--backward] ...
    python -m minitensor.bench ladder

Optional helpers (torch, cupy, matplotlib, tqdm, liger-kernel, quack-kernels) are imported only
when used, so the package
imports, and `--help` works, with none of them installed.
"""

from .cli import main

__all__ = ["main"]
