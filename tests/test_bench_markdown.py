"""`python -m minitensor.bench markdown`: the README's result tables from the sweep's CSVs, checked
line for line on small hand-written CSVs (no GPU).

    pytest tests/test_bench_markdown.py
"""

from __future__ import annotations

import contextlib
import csv
import io
from pathlib import Path

import pytest

from minitensor.bench import cli
from minitensor.bench.markdown import parse_case_list

ITEMSIZE = {"float32": 4, "float16": 2}


def csv_row(shape: str, dim: int, dtype: str, tensors: int, mine: tuple[float, float, float],
            contenders: dict[str, tuple[float, float] | str]) -> dict[str, object]:
    """One row as the softmax command writes it. mine: (median µs, kernel µs, % copy over the
    median); a contender is (median µs, kernel µs), or the note saying why it has no time."""
    numel = 1
    for size in shape.split("x"):
        numel *= int(size)
    us, kernel_us, pct = mine
    row: dict[str, object] = {
        "group": "g", "shape": shape, "dim": dim, "dtype": dtype, "numel": numel,
        "traffic_bytes": tensors * numel * ITEMSIZE[dtype], "minitensor_us": us, "minitensor_kernel_us": kernel_us,
        "minitensor_gbs": 1.0, "minitensor_pct_copy_bw": pct, "minitensor_reps": 30, "minitensor_note": "",
        "check": "pass", "max_error": 0.0, "tolerance": 1e-6, "check_detail": "", "x_best": "", "best_contender": ""}
    for name, timing in contenders.items():
        timed = not isinstance(timing, str)
        row |= {f"{name}_us": timing[0] if timed else "", f"{name}_kernel_us": timing[1] if timed else "",
                f"{name}_gbs": 1.0 if timed else "", f"{name}_reps": 30 if timed else "",
                f"speedup_vs_{name}": "", f"{name}_note": "" if timed else timing}
    return row


def write_sweep_csv(path: Path, op: str, rows: list[dict[str, object]]) -> Path:
    headers = [*rows[0], "copy_bw_gbs", "device", "op"]
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, headers)
        writer.writeheader()
        for row in rows:
            writer.writerow(row | {"copy_bw_gbs": 4000.0, "device": "fake GPU", "op": op})
    return path


@pytest.fixture
def sweep_csvs(tmp_path: Path) -> list[Path]:
    """A forward CSV (float16 listed first: the default dtype order is the CSV's) with one last-dim
    case whose compile run failed, one case over dim 0 in float32 only; a backward CSV with a
    last-dim case and a dim-1 case that QuACK refuses."""
    forward = write_sweep_csv(tmp_path / "softmax.csv", "softmax", [
        csv_row("1024x8192", -1, "float16", 2, (12.4, 10.4, 64.4),
                {"torch": (1234.4, 9.0), "compile": "compile: out of memory"}),
        csv_row("1024x8192", -1, "float32", 2, (20.44, 18.1, 78.2),
                {"torch": (40.6, 38.0), "compile": "compile: out of memory"}),
        csv_row("4096x4096", 0, "float32", 2, (50.0, 40.0, 60.0),
                {"torch": (4992.0, 4990.0), "compile": (150.0, 60.0)}),
    ])
    backward = write_sweep_csv(tmp_path / "softmax_backward.csv", "softmax_backward", [
        csv_row("1024x8192", -1, "float32", 3, (29.9, 27.5, 80.0), {"torch": (55.7, 51.4), "quack": (30.0, 25.0)}),
        csv_row("8x4096x4096", 1, "float32", 3, (400.0, 320.0, 80.0),
                {"torch": (2826.0, 2821.0), "quack": "QuACK: last dim only"}),
    ])
    return [forward, backward]


LAST_DIM_HEADER = ["| case (last dim) | dtype | minitensor µs | % copy | torch | compile | × best |",
                   "|---|---|---:|---:|---:|---:|---:|"]
LAST_DIM_FLOAT16 = "| [1024, 8192] | float16 | 12.4 (10.4) | 64 | 1,234 | n/a | 0.87 |"
LAST_DIM_FLOAT32 = "| [1024, 8192] | float32 | 20.4 (18.1) | 78 | 40.6 | n/a | 2.10 |"
INNER_DIM = ["| case (dim) | dtype | minitensor µs (kernel) | % copy | torch | compile (kernel) "
             "| × compile (kernel) |",
             "|---|---|---:|---:|---:|---:|---:|",
             # % copy over the kernel time: 60% at 50 µs is 75% at 40 µs
             "| [4096, 4096] (0) | float32 | 50.0 (40.0) | 75 | 4,992 | 150 (60.0) | 3.00 (1.50) |"]
BACKWARD_HEADER = ["| case (dim) | dtype | minitensor µs (kernel) | % copy | torch µs (kernel) | × torch (kernel) "
                   "| QuACK µs (kernel) | × QuACK (kernel) |",
                   "|---|---|---:|---:|---:|---:|---:|---:|"]
BACKWARD_LAST_DIM = "| [1024, 8192] | float32 | 29.9 (27.5) | 87 | 55.7 (51.4) | 1.87 | 30.0 (25.0) | 0.91 |"
BACKWARD_DIM_1 = "| [8, 4096, 4096] (1) | float32 | 400 (320) | 100 | 2,826 (2,821) | 8.82 | n/a | n/a |"


def run_markdown(*args: object) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["markdown", *(str(a) for a in args)]) == 0
    return out.getvalue().splitlines()


def test_every_case_and_dtype_in_csv_order_by_default(sweep_csvs: list[Path], capsys) -> None:
    assert run_markdown(*sweep_csvs) == [
        *LAST_DIM_HEADER, LAST_DIM_FLOAT16, LAST_DIM_FLOAT32, "",
        *INNER_DIM, "",
        *BACKWARD_HEADER, BACKWARD_LAST_DIM, BACKWARD_DIM_1]
    # The sweeps have no float16 row for the other cases: said, not silently dropped.
    assert capsys.readouterr().err.splitlines() == [
        "note: no float16 row for 4096x4096:0: left out",
        "note: no float16 row for 1024x8192:-1: left out",
        "note: no float16 row for 8x4096x4096:1: left out"]


def test_dtypes_choose_and_order_the_rows_within_a_case(sweep_csvs: list[Path]) -> None:
    assert run_markdown(sweep_csvs[0], "--dtypes", "float32,float16") == [
        *LAST_DIM_HEADER, LAST_DIM_FLOAT32, LAST_DIM_FLOAT16, "", *INNER_DIM]
    assert run_markdown(sweep_csvs[0], "--dtypes", "fp32")[2:] == [LAST_DIM_FLOAT32, "", *INNER_DIM]


def test_cases_choose_and_order_the_rows(sweep_csvs: list[Path]) -> None:
    assert run_markdown(*sweep_csvs, "--dtypes", "float32", "--cases", "8x4096x4096:1,1024x8192:-1") == [
        *LAST_DIM_HEADER, LAST_DIM_FLOAT32, "",
        *BACKWARD_HEADER, BACKWARD_DIM_1, BACKWARD_LAST_DIM]
    # A table none of the chosen cases is in is left out; `:1` names a 2-D shape's last dim too.
    assert run_markdown(sweep_csvs[1], "--cases", "1024x8192:1") == [*BACKWARD_HEADER, BACKWARD_LAST_DIM]


def test_a_case_in_no_csv_is_an_error(sweep_csvs: list[Path]) -> None:
    with pytest.raises(SystemExit) as error:
        run_markdown(*sweep_csvs, "--cases", "1024x8192:-1,3x3:-1,4096x4096:1")
    assert str(error.value) == "--cases: not in the CSVs given: 3x3:-1, 4096x4096:-1"


def test_a_dtype_in_no_csv_is_an_error(sweep_csvs: list[Path]) -> None:
    with pytest.raises(SystemExit) as error:
        run_markdown(*sweep_csvs, "--dtypes", "float32,bfloat16")
    assert str(error.value) == "--dtypes: not in the CSVs given: bfloat16 (they have float16, float32)"


@pytest.mark.parametrize("item", ["1024x8192", "1024x8192:x", "1024x8192:2", ":-1", "ax8:-1", ""])
def test_a_malformed_case_is_an_error(item: str) -> None:
    with pytest.raises(SystemExit) as error:
        parse_case_list(f"4096x4096:0,{item}")
    assert str(error.value) == f"--cases: {item!r} is not SHAPE:DIM with DIM a dim of SHAPE (e.g. 32x64x512x512:-1)"
