"""The kernel ladder: every teaching variant of the CUDA softmax on 1024 rows of growing width,
so one plot shows what each step (warp per row, vector loads, on-chip caching...) buys.

Needs `mt.softmax_impls("cuda")` (name -> description) and `mt.softmax(x, dim, impl=name)`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import minitensor as mt

from .cases import Case, TypedCase
from .contenders import short_reason
from .correctness import Check, check_with_torch
from .devices import BenchDevice, CudaBench
from .plot import matplotlib_missing_message, plot_lines
from .progress import Progress
from .report import fmt, format_table, write_csv
from .softmax_bench import SEED, time_callable
from .timing import MeasureConfig

NOT_BUILT_EXIT_CODE = 2
LADDER_ROWS = 1024
LADDER_WIDTHS = tuple(range(512, 10240 + 1, 512))


def ladder_available() -> bool:
    return hasattr(mt, "softmax_impls")


def run_ladder(config: MeasureConfig, out_dir: Path, widths: tuple[int, ...] = LADDER_WIDTHS,
               device: BenchDevice | None = None) -> int:
    """Prints the table, writes ladder.csv/.png; returns the exit code (2: not built, 1: a rung
    gave a wrong result). device is for tests; the ladder itself is CUDA only."""
    if not ladder_available():
        print("the kernel ladder is not built yet (minitensor has no softmax_impls)")
        return NOT_BUILT_EXIT_CODE
    if device is None:
        try:
            device = CudaBench()
        except RuntimeError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
    impls: dict[str, str] = dict(mt.softmax_impls("cuda"))
    series = [*impls, *(["torch"] if device.torch is not None else [])]
    copy = device.copy_bandwidth(config)

    gbs: dict[str, list[float]] = {name: [] for name in series}
    csv_rows: list[list[Any]] = []
    failures: list[str] = []
    with Progress(len(widths) * len(series), "ladder") as progress:
        for n in widths:
            typed = TypedCase(Case("ladder", (LADDER_ROWS, n), -1), "float32")
            inputs = device.make_inputs(typed, SEED)
            for name in series:
                progress.describe(f"n={n} {name}")
                fn = _ladder_call(device, inputs, name)
                try:
                    check = _check(device, inputs, fn(), name)
                    timing = time_callable(fn, device, typed, config)
                except Exception as error:  # noqa: BLE001  (a broken rung must not stop the climb)
                    check, timing = Check("error", detail=short_reason(error)), None
                if check.failed:
                    failures.append(f"{name} n={n}: {check.status} {check.detail}".strip())
                value = timing.gbs if timing else float("nan")
                gbs[name].append(value)
                csv_rows.append([n, name, timing.us if timing else "", value, 100 * value / copy.gbs,
                                 check.status, check.max_error, check.detail, copy.gbs])
                progress.advance()
            device.release_memory()

    print(f"softmax kernel ladder, {LADDER_ROWS} rows x n float32, on {device.name}")
    print(f"copy bandwidth: {copy.gbs:.1f} GB/s ({copy.method})")
    for note in device.notes:
        print(f"note: {note}")
    for name, description in impls.items():
        print(f"  {name}: {description}")
    print()
    headers = ["n", *(f"{name} GB/s" for name in series)]
    rows = [[str(n), *(fmt(gbs[name][i]) for name in series)] for i, n in enumerate(widths)]
    print(format_table(headers, rows))

    out_dir.mkdir(parents=True, exist_ok=True)
    write_csv(out_dir / "ladder.csv", ["n", "impl", "us", "gbs", "pct_copy_bw", "check", "max_error",
                                       "check_detail", "copy_bw_gbs"], csv_rows)
    print(f"\nwrote {out_dir / 'ladder.csv'}")
    title = f"softmax ladder: {LADDER_ROWS} x n float32, {device.name}"
    if plot_lines(out_dir / "ladder.png", title, "n (row length)", list(widths), gbs, copy.gbs):
        print(f"wrote {out_dir / 'ladder.png'}")
    else:
        print(matplotlib_missing_message() or "no plot written")
    if failures:
        print("correctness FAILED: " + "; ".join(failures), file=sys.stderr)
        return 1
    return 0


def _ladder_call(device: BenchDevice, inputs: Any, name: str) -> Any:
    if name == "torch":
        return lambda: device.torch.softmax(inputs.torch, -1)
    return lambda: mt.softmax(inputs.mt, -1, impl=name)


def _check(device: BenchDevice, inputs: Any, output: Any, name: str) -> Check:
    if device.torch is None:
        return Check("unchecked")
    result = output if name == "torch" else device.to_torch(output)
    return check_with_torch(device.torch, inputs.torch, result, -1, "float32", log=False)
