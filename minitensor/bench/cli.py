"""Command line: `python -m minitensor.bench softmax|ladder|plot|markdown|overhead ...`."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from . import cases as cases_mod
from .timing import MeasureConfig

DEFAULT_OUT = Path("bench_out")
QUICK_CONFIG = MeasureConfig(max_reps=10, min_reps=3, warmup=2, budget_s=0.25, profile_calls=10)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m minitensor.bench",
        description="Benchmarks for minitensor. Times count only from CUDA events (or perf_counter on "
                    "the CPU) with warm-up, L2 flushed between runs, median of many.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    softmax = commands.add_parser(
        "softmax", help="sweep softmax (or log_softmax) over shapes and dtypes",
        description="Sweep softmax (or its backward) over the packaged softmax_shapes.json (or --cases/--shape) "
                    "in every dtype, check each result against a float64 torch reference, and report GB/s beside "
                    "the device's copy bandwidth and the contenders' times. Exits 1 if any case fails its check.")
    _add_common(softmax)
    softmax.add_argument("--shape", type=cases_mod.parse_shape, help="one shape instead of the sweep, e.g. 256,1000")
    softmax.add_argument("--dim", type=int, default=-1, help="dim for --shape (default -1)")
    softmax.add_argument("--dtype", type=cases_mod.parse_dtypes,
                         help="comma-separated dtypes (default: float32,float64,float16,bfloat16 on CUDA; "
                              "float32,float64 on CPU)")
    softmax.add_argument("--cases", type=Path, help="a JSON file of cases shaped like softmax_shapes.json")
    softmax.add_argument("--compare", default=None,
                         help="comma-separated contenders: torch, compile (torch.compile), liger (liger-kernel), "
                              "quack (quack-kernels), numpy, or none (default: torch on CUDA; numpy,torch on CPU; "
                              "each only when importable, each result checked before it is timed)")
    softmax.add_argument("--log", action="store_true", help="benchmark log_softmax instead of softmax")
    softmax.add_argument("--backward", action="store_true",
                         help="benchmark the backward kernel (dx from y and dy; 3 x bytes of traffic) against "
                              "torch's _softmax_backward_data, its torch.compile and QuACK's")
    softmax.add_argument("--profile-calls", type=int, default=None,
                         help="calls under the CUDA profiler for each kernel time (default 20, 10 with --quick; "
                              "0: no kernel times)")

    ladder = commands.add_parser(
        "ladder", help="GB/s of every CUDA softmax variant (mt.softmax_impls) on 1024 x n float32",
        description="The kernel ladder: 1024 rows, n = 512..10240 step 512, float32, every impl from "
                    "mt.softmax_impls('cuda') plus torch.softmax. Exits 2 if the ladder is not built.")
    _add_common(ladder, with_device=False)

    plot = commands.add_parser(
        "plot", help="draw the GB/s plot again from softmax CSV files (e.g. after merging reruns)")
    plot.add_argument("csv", type=Path, nargs="+", help="CSV files written by the softmax command")
    plot.add_argument("--out", type=Path, required=True, help="the PNG to write")

    markdown = commands.add_parser(
        "markdown", help="print the README's result tables from softmax CSV files",
        description="Print the README's markdown tables from CSVs the softmax command wrote: forward rows over "
                    "the last dim, forward rows over other dims, backward rows (--backward CSVs), each table "
                    "only when it has rows.")
    markdown.add_argument("csv", type=Path, nargs="+", help="CSV files written by the softmax command")
    markdown.add_argument("--dtypes", default=None,
                          help="comma-separated dtypes, in the order each case lists them (default: every "
                               "dtype, in CSV order)")
    markdown.add_argument("--cases", default=None,
                          help="comma-separated SHAPE:DIM items choosing the rows and their order, e.g. "
                               "32x64x512x512:-1,8x4096x4096:1 (default: every case, in CSV order)")

    overhead = commands.add_parser(
        "overhead", help="host time per t.softmax call on a small tensor vs torch.softmax (10,000 calls)")
    overhead.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help="default: cuda")
    overhead.add_argument("--calls", type=int, default=10_000, help="calls per timed batch (default 10000)")
    return parser


def _add_common(parser: argparse.ArgumentParser, with_device: bool = True) -> None:
    if with_device:
        parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help="default: cuda")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default: {DEFAULT_OUT}/)")
    parser.add_argument("--reps", type=int, default=None,
                        help="timed runs per measurement (default 30, fewer when a case would take over ~1 s)")
    parser.add_argument("--quick", action="store_true", help="fewer runs and a smaller time budget per case")


def measure_config(args: argparse.Namespace) -> MeasureConfig:
    config = QUICK_CONFIG if args.quick else MeasureConfig()
    if args.reps is not None:
        if args.reps < 1:
            raise SystemExit("--reps must be at least 1")
        config = replace(config, max_reps=args.reps, min_reps=min(config.min_reps, args.reps))
    profile_calls = getattr(args, "profile_calls", None)
    if profile_calls is not None:
        if profile_calls < 0:
            raise SystemExit("--profile-calls must be at least 0")
        config = replace(config, profile_calls=profile_calls)
    return config


def default_contenders(device: str) -> tuple[str, ...]:
    from . import optional

    has_torch = (optional.torch_with_cuda() if device == "cuda" else optional.torch()) is not None
    if device == "cpu":
        return ("numpy", "torch") if has_torch else ("numpy",)
    return ("torch",) if has_torch else ()


def parse_contenders(text: str | None, device: str) -> tuple[str, ...]:
    from .contenders import KNOWN_CONTENDERS

    if text is None:
        return default_contenders(device)
    names = tuple(n.strip() for n in text.split(",") if n.strip() and n.strip() != "none")
    unknown = [n for n in names if n not in KNOWN_CONTENDERS]
    if unknown:
        raise SystemExit(f"--compare: unknown {', '.join(unknown)}; choose from {', '.join(KNOWN_CONTENDERS)}")
    return tuple(dict.fromkeys(names))


def run_softmax_command(args: argparse.Namespace) -> int:
    # Imported here, not at the top: `--help` must not need a working device stack.
    from .devices import make_bench_device
    from .plot import matplotlib_missing_message, plot_softmax
    from .report import softmax_csv_rows, softmax_report, write_csv
    from .softmax_bench import SweepOptions, run_sweep

    if args.shape is not None:
        case_list = [cases_mod.Case("custom", args.shape, args.dim)]
    else:
        case_list = cases_mod.load_cases(args.cases)
    dtypes = args.dtype or (cases_mod.DEFAULT_CUDA_DTYPES if args.device == "cuda" else cases_mod.DEFAULT_CPU_DTYPES)
    typed = cases_mod.expand(case_list, dtypes)
    notes: list[str] = []
    if args.device == "cpu":
        typed, skipped = cases_mod.split_by_size(typed, cases_mod.CPU_MAX_TENSOR_BYTES)
        if skipped:
            limit = cases_mod.CPU_MAX_TENSOR_BYTES // 2**20
            listed = ", ".join(f"{t.case.shape_text}/{t.dtype}" for t in skipped)
            message = f"skipped {len(skipped)} case(s) whose tensor is over {limit} MiB on CPU: {listed}"
            print(message, flush=True)
            notes.append(f"{len(skipped)} case(s) skipped: tensor over {limit} MiB on CPU (listed above)")

    try:
        device = make_bench_device(args.device)
    except RuntimeError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    options = SweepOptions(log=args.log, contender_names=parse_contenders(args.compare, args.device),
                           config=measure_config(args), backward=args.backward)
    sweep = run_sweep(device, typed, options, notes)

    print(softmax_report(sweep))
    out_dir: Path = args.out
    csv_path = out_dir / f"{sweep.op_name}.csv"
    write_csv(csv_path, *softmax_csv_rows(sweep))
    print(f"wrote {csv_path}")
    png_path = out_dir / f"{sweep.op_name}.png"
    if plot_softmax(sweep, png_path):
        print(f"wrote {png_path}")
    else:
        print(matplotlib_missing_message() or "no cases: no plot written")
    if sweep.failures:
        print(f"{len(sweep.failures)} case(s) failed their correctness check", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "softmax":
        return run_softmax_command(args)
    if args.command == "ladder":
        from .ladder import run_ladder

        return run_ladder(measure_config(args), args.out)
    if args.command == "plot":
        from .plot import matplotlib_missing_message, plot_softmax
        from .report import read_softmax_csv

        if not plot_softmax(read_softmax_csv(args.csv), args.out):
            print(matplotlib_missing_message() or "no cases: no plot written", file=sys.stderr)
            return 1
        print(f"wrote {args.out}")
        return 0
    if args.command == "markdown":
        from .markdown import markdown_tables, parse_case_list, parse_dtype_list

        cases = parse_case_list(args.cases) if args.cases is not None else None
        dtypes = parse_dtype_list(args.dtypes) if args.dtypes is not None else None
        print(markdown_tables(args.csv, cases, dtypes))
        return 0
    if args.command == "overhead":
        from .overhead import run_overhead

        return run_overhead(args.device, args.calls)
    parser.print_help()
    return 2
