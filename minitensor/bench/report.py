"""Plain-text table, summary and CSV for benchmark results."""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Sequence

from .cases import LARGE_TRAFFIC_BYTES, Case, TypedCase
from .correctness import Check, format_error
from .results import CaseResult, SweepResult, Timing

CONTENDER_LABELS = {"torch": "torch", "compile": "compile", "numpy": "numpy"}


def fmt(value: float, digits: int = 1) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:,.{digits}f}"


def format_table(headers: Sequence[str], rows: Iterable[Sequence[str]], left_columns: int = 1) -> str:
    """Columns padded to their widest cell; the first left_columns are left-aligned (labels),
    the rest right-aligned (numbers)."""
    rows = [list(r) for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i < left_columns else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def geometric_mean(values: Iterable[float]) -> float:
    logs = [math.log(v) for v in values if math.isfinite(v) and v > 0]
    return math.exp(sum(logs) / len(logs)) if logs else float("nan")


# ---- softmax sweep -------------------------------------------------------------------------

def _table_headers(sweep: SweepResult) -> list[str]:
    headers = ["group", "shape", "dim", "dtype", "mt µs", "GB/s", "% copy", "check"]
    for name in sweep.contender_names:
        label = CONTENDER_LABELS.get(name, name)
        headers += [f"{label} µs", f"vs {label}"]
    return headers


def _table_row(sweep: SweepResult, case: CaseResult) -> list[str]:
    typed = case.typed
    row = [typed.case.group, typed.case.shape_text, str(typed.case.dim), typed.dtype,
           fmt(case.minitensor.us), fmt(case.minitensor.gbs), fmt(case.pct_of_copy, 0),
           case.check.status]
    for name in sweep.contender_names:
        other = case.contenders.get(name)
        row += [fmt(other.us) if other else "n/a", fmt(case.speedup_over(name), 2) + "x"
                if math.isfinite(case.speedup_over(name)) else "n/a"]
    return row


def softmax_table(sweep: SweepResult) -> str:
    return format_table(_table_headers(sweep), (_table_row(sweep, c) for c in sweep.cases), left_columns=4)


def speedup_summary(sweep: SweepResult) -> list[str]:
    """Geometric-mean speed-up over each contender, per group and overall."""
    lines = []
    for name in sweep.contender_names:
        by_group: dict[str, list[float]] = defaultdict(list)
        for case in sweep.cases:
            by_group[case.typed.case.group].append(case.speedup_over(name))
        overall = geometric_mean(v for values in by_group.values() for v in values)
        counted = sum(1 for values in by_group.values() for v in values if math.isfinite(v))
        parts = [f"{group} {fmt(geometric_mean(values), 2)}x" for group, values in by_group.items()]
        lines.append(f"speed-up over {name} (geomean of {name} time / minitensor time): "
                     f"overall {fmt(overall, 2)}x over {counted} cases; " + ", ".join(parts))
    return lines


def bandwidth_summary(sweep: SweepResult) -> str:
    large = [c for c in sweep.cases if c.typed.traffic_bytes >= LARGE_TRAFFIC_BYTES
             and math.isfinite(c.pct_of_copy)]
    if not large:
        return f"no case moves >= {LARGE_TRAFFIC_BYTES // 2**20} MiB: no worst-case bandwidth figure"
    worst = min(large, key=lambda c: c.pct_of_copy)
    t = worst.typed
    return (f"min % of copy bandwidth over the {len(large)} cases moving >= {LARGE_TRAFFIC_BYTES // 2**20} MiB: "
            f"{worst.pct_of_copy:.0f}% ({t.case.group} {t.case.shape_text} dim={t.case.dim} {t.dtype}, "
            f"{worst.minitensor.gbs:.1f} GB/s)")


def contender_notes(sweep: SweepResult) -> list[str]:
    """Why columns say n/a, once per distinct reason."""
    seen: dict[str, list[str]] = defaultdict(list)
    for case in sweep.cases:
        label = f"{case.typed.case.shape_text} {case.typed.dtype}"
        if case.check.detail:
            seen[f"minitensor: {case.check.status}: {case.check.detail}"].append(label)
        for name, timing in case.contenders.items():
            if timing.note:
                seen[f"{name}: {timing.note}"].append(label)
    return [f"{reason} ({len(where)} case{'s' if len(where) > 1 else ''}, e.g. {where[0]})"
            for reason, where in seen.items()]


def softmax_report(sweep: SweepResult) -> str:
    failures = sweep.failures
    lines = [
        f"{sweep.op_name} on {sweep.device_name} ({sweep.device_kind})",
        f"copy bandwidth: {sweep.copy_gbs:.1f} GB/s ({sweep.copy_method})",
        *(f"note: {n}" for n in sweep.notes),
        "",
        softmax_table(sweep),
        "",
        "GB/s = 2 x numel x itemsize / median time; % copy = GB/s / copy bandwidth; "
        "vs X = X's time / minitensor's time (> 1: minitensor faster)",
        *speedup_summary(sweep),
        bandwidth_summary(sweep),
        *(f"n/a or check detail: {n}" for n in contender_notes(sweep)),
        f"correctness: {len(sweep.cases) - len(failures)} of {len(sweep.cases)} cases pass"
        + ("" if not failures else "; FAILED: " + ", ".join(
            f"{c.typed.case.shape_text}/{c.typed.dtype}" for c in failures)),
    ]
    return "\n".join(lines)


def softmax_csv_rows(sweep: SweepResult) -> tuple[list[str], list[list[object]]]:
    headers = ["group", "shape", "dim", "dtype", "numel", "traffic_bytes", "minitensor_us", "minitensor_gbs",
               "minitensor_pct_copy_bw", "minitensor_reps", "check", "max_error", "tolerance", "check_detail"]
    for name in sweep.contender_names:
        headers += [f"{name}_us", f"{name}_gbs", f"{name}_reps", f"speedup_vs_{name}", f"{name}_note"]
    headers += ["copy_bw_gbs", "device", "op"]
    rows = []
    for case in sweep.cases:
        t = case.typed
        row: list[object] = [t.case.group, t.case.shape_text, t.case.dim, t.dtype, t.case.numel, t.traffic_bytes,
                             case.minitensor.us, case.minitensor.gbs, case.pct_of_copy, case.minitensor.reps,
                             case.check.status, format_error(case.check), case.check.tolerance,
                             case.check.detail]
        for name in sweep.contender_names:
            other = case.contenders.get(name)
            if other is None:
                row += ["", "", "", "", ""]
            else:
                row += [other.us, other.gbs, other.reps, case.speedup_over(name), other.note]
        row += [sweep.copy_gbs, sweep.device_name, sweep.op_name]
        rows.append(row)
    return headers, rows


def write_csv(path: Path, headers: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(headers)
        for row in rows:
            writer.writerow(["" if isinstance(v, float) and math.isnan(v) else v for v in row])


def _number(text: str) -> float:
    return float(text) if text else math.nan


def read_softmax_csv(paths: Sequence[Path]) -> SweepResult:
    """A sweep back from the CSV files softmax_csv_rows wrote (several: their cases in order),
    e.g. to plot a table whose rows were re-measured in a later run. The copy bandwidth is the
    first row's."""
    cases: list[CaseResult] = []
    contender_names: list[str] = []
    device = op = ""
    copy_gbs = math.nan
    for path in paths:
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                names = [h[: -len("_us")] for h in row if h.endswith("_us") and h != "minitensor_us"]
                contender_names += [n for n in names if n not in contender_names]
                device, op = device or row["device"], op or row["op"]
                copy_gbs = _number(row["copy_bw_gbs"]) if math.isnan(copy_gbs) else copy_gbs
                typed = TypedCase(Case(row["group"], tuple(int(v) for v in row["shape"].split("x")),
                                       int(row["dim"])), row["dtype"])
                own = Timing(us=_number(row["minitensor_us"]), gbs=_number(row["minitensor_gbs"]),
                             reps=int(row["minitensor_reps"] or 0))
                check = Check(row["check"], _number(row["max_error"]), _number(row["tolerance"]),
                              row["check_detail"])
                others = {n: Timing(us=_number(row[f"{n}_us"]), gbs=_number(row[f"{n}_gbs"]),
                                    reps=int(row[f"{n}_reps"] or 0), note=row[f"{n}_note"]) for n in names}
                cases.append(CaseResult(typed, own, check, _number(row["minitensor_pct_copy_bw"]), others))
    return SweepResult(device_name=device, device_kind="", op_name=op or "softmax", copy_gbs=copy_gbs,
                       copy_method="from CSV", contender_names=contender_names, cases=cases)
