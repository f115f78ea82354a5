"""The README's result tables from the softmax sweep's CSV files, so they are printed, not copied
by hand: `python -m minitensor.bench markdown CSV [CSV ...] [--dtypes ...] [--cases ...]`.

Three tables, each from one kind of row: forward rows over the last dim (against every contender,
`× best` over kernel times), forward rows over another dim (against torch.compile, the only strong
contender there) and backward rows (the CSVs whose op ends in `_backward`). A table with no row
selected is left out.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from .cases import Case, parse_dtypes, parse_shape
from .report import fmt, read_softmax_csv
from .results import CaseResult, SweepResult, Timing

# The contenders as the README names them (report.CONTENDER_LABELS is the terminal table's).
README_LABELS = {"torch": "torch", "compile": "compile", "liger": "Liger", "quack": "QuACK", "numpy": "NumPy"}
# Over other dims torch eager is shown for scale only and torch.compile is the one compared against.
INNER_DIM_SCALE, INNER_DIM_RIVAL = "torch", "compile"

# A case as --cases names it: the shape and the dim counted from 0, so that `:-1` and `:1` name the
# same case of a 2-D shape.
CaseKey = tuple[tuple[int, ...], int]


def case_key(shape: tuple[int, ...], dim: int) -> CaseKey:
    return shape, dim % len(shape)


@dataclass
class CsvRows:
    """One kind of row (forward or backward) from several CSV files: the cases in the order they
    first appear; a later file's row for the same case and dtype replaces the earlier one (a case
    re-measured in a later run)."""

    cases: dict[CaseKey, Case] = field(default_factory=dict)
    dtypes: list[str] = field(default_factory=list)
    contender_names: list[str] = field(default_factory=list)
    rows: dict[tuple[CaseKey, str], CaseResult] = field(default_factory=dict)

    def add(self, sweep: SweepResult) -> None:
        self.contender_names += [n for n in sweep.contender_names if n not in self.contender_names]
        for result in sweep.cases:
            case, dtype = result.typed.case, result.typed.dtype
            key = case_key(case.shape, case.dim)
            self.cases.setdefault(key, case)
            if dtype not in self.dtypes:
                self.dtypes.append(dtype)
            self.rows[key, dtype] = result


def read_rows(paths: Sequence[Path]) -> tuple[CsvRows, CsvRows]:
    """(forward, backward) rows; a CSV is read on its own, as its op column tells which it is."""
    forward, backward = CsvRows(), CsvRows()
    for path in paths:
        sweep = read_softmax_csv([path])
        (backward if sweep.op_name.endswith("_backward") else forward).add(sweep)
    return forward, backward


# ---- the cells --------------------------------------------------------------------------------

def readme_number(value: float) -> str:
    """A time as the README writes it: three significant digits or more (1,234 / 123 / 12.3)."""
    if not math.isfinite(value):
        return "n/a"
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 100:
        return f"{value:.0f}"
    return f"{value:.1f}"


def shape_cell(case: Case, with_dim: bool) -> str:
    shape = "[" + ", ".join(str(s) for s in case.shape) + "]"
    return f"{shape} ({case.dim})" if with_dim else shape


def median_cell(timing: Timing | None) -> str:
    """A contender's median time; n/a where it has none (it refused the case or failed its check).
    Judged by the time, not by the CSV's note, which also carries a kernel-time note beside a
    valid median."""
    return readme_number(timing.us) if timing is not None and timing.ok else "n/a"


def median_and_kernel_cell(timing: Timing | None) -> str:
    """'median (kernel)': the call as a user sees it, and its kernels' device time alone."""
    if timing is None or not timing.ok:
        return "n/a"
    return f"{readme_number(timing.us)} ({readme_number(timing.kernel_us)})"


def median_and_kernel_ratio_cell(result: CaseResult, name: str) -> str:
    median = result.speedup_over(name)
    return f"{fmt(median, 2)} ({fmt(result.kernel_speedup_over(name), 2)})"


def label(name: str) -> str:
    return README_LABELS.get(name, name)


# ---- the tables -------------------------------------------------------------------------------

def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A GitHub table: case and dtype left-aligned, the numbers right-aligned."""
    rule = "|" + "|".join("---" if i < 2 else "---:" for i in range(len(headers))) + "|"
    lines = ["| " + " | ".join(cells) + " |" for cells in [headers, *rows]]
    return "\n".join([lines[0], rule, *lines[1:]])


def last_dim_row(result: CaseResult, contenders: Sequence[str]) -> list[str]:
    # `× best` over kernel times: the median per-call times carry host stalls (the Python
    # contenders' most of all) that would decide the ratio on the small rows.
    return [shape_cell(result.typed.case, with_dim=False), result.typed.dtype,
            median_and_kernel_cell(result.minitensor), fmt(result.pct_of_copy, 0),
            *(median_cell(result.contenders.get(n)) for n in contenders), fmt(result.kernel_speedup_over_best, 2)]


def last_dim_table(results: Sequence[CaseResult], contenders: Sequence[str]) -> str:
    headers = ["case (last dim)", "dtype", "minitensor µs", "% copy", *(label(n) for n in contenders), "× best"]
    return markdown_table(headers, (last_dim_row(r, contenders) for r in results))


def inner_dim_row(result: CaseResult, scale: Sequence[str], rival: Sequence[str]) -> list[str]:
    return [shape_cell(result.typed.case, with_dim=True), result.typed.dtype,
            median_and_kernel_cell(result.minitensor), fmt(result.kernel_pct_of_copy, 0),
            *(median_cell(result.contenders.get(n)) for n in scale),
            *(cell for n in rival for cell in (median_and_kernel_cell(result.contenders.get(n)),
                                               median_and_kernel_ratio_cell(result, n)))]


def inner_dim_table(results: Sequence[CaseResult], contenders: Sequence[str]) -> str:
    scale = [INNER_DIM_SCALE] if INNER_DIM_SCALE in contenders else []
    rival = [INNER_DIM_RIVAL] if INNER_DIM_RIVAL in contenders else []
    headers = ["case (dim)", "dtype", "minitensor µs (kernel)", "% copy", *(label(n) for n in scale),
               *(h for n in rival for h in (f"{label(n)} (kernel)", f"× {label(n)} (kernel)"))]
    return markdown_table(headers, (inner_dim_row(r, scale, rival) for r in results))


def backward_row(result: CaseResult, contenders: Sequence[str]) -> list[str]:
    return [shape_cell(result.typed.case, with_dim=not result.typed.case.is_last_dim), result.typed.dtype,
            median_and_kernel_cell(result.minitensor), fmt(result.kernel_pct_of_copy, 0),
            *(cell for n in contenders for cell in (median_and_kernel_cell(result.contenders.get(n)),
                                                    fmt(result.kernel_speedup_over(n), 2)))]


def backward_table(results: Sequence[CaseResult], contenders: Sequence[str]) -> str:
    headers = ["case (dim)", "dtype", "minitensor µs (kernel)", "% copy",
               *(h for n in contenders for h in (f"{label(n)} µs (kernel)", f"× {label(n)} (kernel)"))]
    return markdown_table(headers, (backward_row(r, contenders) for r in results))


# ---- which rows, in which order ---------------------------------------------------------------

def parse_case_list(text: str) -> list[CaseKey]:
    """'32x64x512x512:-1,8x4096x4096:1' -> the cases, in that order."""
    keys = []
    for item in (i.strip() for i in text.split(",")):
        shape_text, colon, dim_text = item.rpartition(":")
        try:
            shape, dim = parse_shape(shape_text), int(dim_text)
        except ValueError:
            shape, dim = (), 0
        if not colon or not shape or not -len(shape) <= dim < len(shape):
            raise SystemExit(f"--cases: {item!r} is not SHAPE:DIM with DIM a dim of SHAPE "
                             "(e.g. 32x64x512x512:-1)")
        keys.append(case_key(shape, dim))
    return list(dict.fromkeys(keys))  # a case named twice is still one row per dtype


def parse_dtype_list(text: str) -> list[str]:
    try:
        return list(parse_dtypes(text))
    except ValueError as error:
        raise SystemExit(f"--dtypes: {error}") from None


def case_text(key: CaseKey) -> str:
    """SHAPE:DIM, the last dim written -1 as the sweep writes it."""
    shape, dim = key
    return "x".join(str(s) for s in shape) + f":{-1 if dim == len(shape) - 1 else dim}"


def check_selection(cases: Sequence[CaseKey] | None, dtypes: Sequence[str], sources: Sequence[CsvRows]) -> None:
    """Every case and dtype asked for must be in some CSV: a typo must not just drop rows."""
    known_cases = {key for source in sources for key in source.cases}
    missing = [case_text(key) for key in cases or () if key not in known_cases]
    if missing:
        raise SystemExit(f"--cases: not in the CSVs given: {', '.join(missing)}")
    known_dtypes = [d for source in sources for d in source.dtypes]
    absent = [d for d in dtypes if d not in known_dtypes]
    if absent:
        raise SystemExit(f"--dtypes: not in the CSVs given: {', '.join(absent)} "
                         f"(they have {', '.join(dict.fromkeys(known_dtypes))})")


def select(source: CsvRows, in_table: Callable[[Case], bool], cases: Sequence[CaseKey] | None,
           dtypes: Sequence[str]) -> list[CaseResult]:
    """The rows of one table, case-major and dtype-minor. A case and dtype with no row (a sweep
    that skipped it) is left out and named on stderr."""
    keys = [k for k in (cases if cases is not None else source.cases)
            if k in source.cases and in_table(source.cases[k])]
    results = []
    for key in keys:
        for dtype in dtypes:
            if (key, dtype) in source.rows:
                results.append(source.rows[key, dtype])
            else:
                print(f"note: no {dtype} row for {case_text(key)}: left out", file=sys.stderr)
    return results


def markdown_tables(paths: Sequence[Path], cases: Sequence[CaseKey] | None = None,
                    dtypes: Sequence[str] | None = None) -> str:
    """The tables, a blank line between them. cases (default: every case, in CSV order) chooses
    the rows of every table and their order; dtypes (default: every dtype, in CSV order) the
    dtypes within each case."""
    forward, backward = read_rows(paths)
    sources = [forward, backward]
    dtypes = dtypes or list(dict.fromkeys(d for source in sources for d in source.dtypes))
    check_selection(cases, dtypes, sources)
    layouts = [(forward, lambda case: case.is_last_dim, last_dim_table),
               (forward, lambda case: not case.is_last_dim, inner_dim_table),
               (backward, lambda case: True, backward_table)]
    tables = []
    for source, in_table, draw in layouts:
        results = select(source, in_table, cases, dtypes)
        if results:
            tables.append(draw(results, source.contender_names))
    if not tables:
        raise SystemExit("no rows in the CSVs given for these cases and dtypes")
    return "\n\n".join(tables)
