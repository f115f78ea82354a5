"""Plain-text table, summary and CSV for benchmark results."""

from __future__ import annotations

import csv
import math
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Iterable, Sequence

from .cases import ITEMSIZE, LARGE_TRAFFIC_BYTES, MID_TRAFFIC_BYTES, Case, TypedCase
from .correctness import Check, format_error
from .results import CaseResult, SweepResult, Timing

CONTENDER_LABELS = {"torch": "torch", "compile": "compile", "liger": "liger", "quack": "quack",
                    "numpy": "numpy"}


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

def _time_cell(timing: Timing) -> str:
    """Event time, with the profiler's kernel time in brackets when there is one."""
    if not math.isfinite(timing.kernel_us):
        return fmt(timing.us)
    return f"{fmt(timing.us)} ({fmt(timing.kernel_us)})"


def _ratio_cell(value: float) -> str:
    return fmt(value, 2) + "x" if math.isfinite(value) else "n/a"


def _table_headers(sweep: SweepResult) -> list[str]:
    with_kernel = any(math.isfinite(t.kernel_us)
                      for c in sweep.cases for t in [c.minitensor, *c.contenders.values()])
    unit = "µs (kernel)" if with_kernel else "µs"
    headers = ["group", "shape", "dim", "dtype", f"mt {unit}", "GB/s", "% copy", "check", "× best"]
    for name in sweep.contender_names:
        label = CONTENDER_LABELS.get(name, name)
        headers += [f"{label} {unit}", f"vs {label}"]
    return headers


def _table_row(sweep: SweepResult, case: CaseResult) -> list[str]:
    typed = case.typed
    row = [typed.case.group, typed.case.shape_text, str(typed.case.dim), typed.dtype,
           _time_cell(case.minitensor), fmt(case.minitensor.gbs), fmt(case.pct_of_copy, 0),
           case.check.status, _ratio_cell(case.speedup_over_best)]
    for name in sweep.contender_names:
        other = case.contenders.get(name)
        row += [_time_cell(other) if other else "n/a", _ratio_cell(case.speedup_over(name))]
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
        if not counted:
            lines.append(f"speed-up over {name}: no case (see the notes for why)")
            continue
        parts = [f"{group} {fmt(geometric_mean(values), 2)}x" for group, values in by_group.items()]
        lines.append(f"speed-up over {name} (geomean of {name} time / minitensor time): "
                     f"overall {fmt(overall, 2)}x over {counted} cases; " + ", ".join(parts))
    return lines


def dtype_summary(sweep: SweepResult) -> list[str]:
    """Per dtype, the last dim apart from the other dims (their targets and contenders differ):
    the geometric mean of `× best`, the cases where minitensor is at least as fast as every
    contender that ran, and the mean % of copy bandwidth."""
    lines = []
    for dtype in dict.fromkeys(c.typed.dtype for c in sweep.cases):
        for last_dim in (True, False):
            cases = [c for c in sweep.cases
                     if c.typed.dtype == dtype and c.typed.case.is_last_dim == last_dim]
            if not cases:
                continue
            label = f"{dtype}, {'last dim' if last_dim else 'other dims'}"
            versus_best = [c.speedup_over_best for c in cases if math.isfinite(c.speedup_over_best)]
            at_least_as_fast = sum(1 for v in versus_best if v >= 1.0)
            pcts = [c.pct_of_copy for c in cases if math.isfinite(c.pct_of_copy)]
            mean_pct = sum(pcts) / len(pcts) if pcts else math.nan
            lines.append(f"{label}: × best geomean {fmt(geometric_mean(versus_best), 2)}x over "
                         f"{len(versus_best)} cases with a contender; minitensor at least as fast as "
                         f"every contender in {at_least_as_fast} of {len(versus_best)}; mean "
                         f"{fmt(mean_pct, 0)}% of copy bandwidth over {len(pcts)} cases")
            kernel_line = _kernel_summary(cases)
            if kernel_line:
                lines.append(f"{label} over kernel times: {kernel_line}")
    return lines


def _kernel_summary(cases: Sequence[CaseResult]) -> str:
    """The same figures over the profiler's kernel times (what the speed targets are judged on:
    a contender's host time does not decide a ratio), the wins also counted over the cases moving
    MID_TRAFFIC_BYTES or more; empty when no case has them."""
    timed = [c for c in cases if math.isfinite(c.kernel_speedup_over_best)]
    large = [c.kernel_pct_of_copy for c in cases if c.typed.traffic_bytes >= LARGE_TRAFFIC_BYTES
             and math.isfinite(c.kernel_pct_of_copy)]
    if not timed and not large:
        return ""
    parts = []
    if timed:
        versus_best = [c.kernel_speedup_over_best for c in timed]
        mid = [c.kernel_speedup_over_best for c in timed if c.typed.traffic_bytes >= MID_TRAFFIC_BYTES]
        parts.append(f"× best geomean {fmt(geometric_mean(versus_best), 2)}x, at least as fast as every "
                     f"contender in {sum(1 for v in versus_best if v >= 1.0)} of {len(versus_best)} "
                     f"({sum(1 for v in mid if v >= 1.0)} of {len(mid)} moving >= "
                     f"{MID_TRAFFIC_BYTES // 2**20} MiB)")
    if large:
        at_90 = sum(1 for v in large if v >= 90.0)
        parts.append(f"% of copy min {fmt(min(large), 0)}% over the {len(large)} cases moving >= "
                     f"{LARGE_TRAFFIC_BYTES // 2**20} MiB ({at_90} at >= 90%)")
    return "; ".join(parts)


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


def call_overhead_summary(sweep: SweepResult) -> str:
    """Per implementation, the median over the cases of (per-call time - kernel time): what a
    call costs beyond its kernels (launch, the GPU's own work around it such as a free queued on
    the stream, host stalls that outrun the flush). A regression here moves every per-call
    ratio; empty when no case has kernel times."""
    overheads: dict[str, list[float]] = defaultdict(list)
    for case in sweep.cases:
        for name, timing in [("minitensor", case.minitensor), *case.contenders.items()]:
            if timing.ok and math.isfinite(timing.kernel_us):
                overheads[name].append(timing.us - timing.kernel_us)
    if not overheads:
        return ""
    parts = [f"{name} {fmt(statistics.median(values), 2)} µs ({len(values)} cases)"
             for name, values in overheads.items()]
    return "per call beyond the kernels, median: " + ", ".join(parts)


# A clock under this fraction of the GPU's highest was held down (power capping), not boost jitter.
CLOCK_DIP = 0.95


def clock_summary(sweep: SweepResult) -> list[str]:
    """Where the SM clock was sampled: per implementation, the cases it was timed under a held-down
    clock (a mean below CLOCK_DIP of the highest), with that mean, so that a slow reading of a
    kernel near its issue limit is not taken for the kernel's own (docs/DESIGN.md)."""
    top = sweep.clock_max_mhz
    if not math.isfinite(top):
        return []
    sampled: dict[str, int] = defaultdict(int)
    dipped: dict[str, list[str]] = defaultdict(list)
    for case in sweep.cases:
        for name, timing in [("minitensor", case.minitensor), *case.contenders.items()]:
            if not math.isfinite(timing.clock_mhz):
                continue
            sampled[name] += 1
            if timing.clock_mhz < CLOCK_DIP * top:
                dipped[name].append(f"{case.typed.case.shape_text} {case.typed.dtype} {timing.clock_mhz:,.0f}")
    lines = []
    for name, count in sampled.items():
        shown = ", ".join(dipped[name][:8]) + (", ..." if len(dipped[name]) > 8 else "")
        lines.append(f"SM clock held under {CLOCK_DIP:.0%} of its {top:,.0f} MHz (mean) while {name} "
                     f"was timed: {len(dipped[name])} of {count} cases" + (f" ({shown} MHz)" if shown else ""))
    return lines


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
        for name, timing in [("minitensor", case.minitensor), *case.contenders.items()]:
            if timing.kernel_note:
                seen[f"{name} kernel time: {timing.kernel_note}"].append(label)
    return [f"{reason} ({len(where)} case{'s' if len(where) > 1 else ''}, e.g. {where[0]})"
            for reason, where in seen.items()]


def _tensors_moved(sweep: SweepResult) -> int:
    return sweep.cases[0].typed.tensors_moved if sweep.cases else 2


def softmax_report(sweep: SweepResult) -> str:
    failures = sweep.failures
    lines = [
        f"{sweep.op_name} on {sweep.device_name} ({sweep.device_kind})",
        f"copy bandwidth: {sweep.copy_gbs:.1f} GB/s ({sweep.copy_method})",
        *(f"note: {n}" for n in sweep.notes),
        "",
        softmax_table(sweep),
        "",
        f"GB/s = {_tensors_moved(sweep)} x numel x itemsize / median time; % copy = GB/s / copy bandwidth; "
        "vs X = X's time / minitensor's time (> 1: minitensor faster); × best = the fastest contender's "
        "time / minitensor's",
        *speedup_summary(sweep),
        *dtype_summary(sweep),
        bandwidth_summary(sweep),
        *([overhead] if (overhead := call_overhead_summary(sweep)) else []),
        *clock_summary(sweep),
        *(f"n/a or check detail: {n}" for n in contender_notes(sweep)),
        f"correctness: {len(sweep.cases) - len(failures)} of {len(sweep.cases)} cases pass"
        + ("" if not failures else "; FAILED: " + ", ".join(
            f"{c.typed.case.shape_text}/{c.typed.dtype}" for c in failures)),
    ]
    return "\n".join(lines)


def _csv_note(timing: Timing) -> str:
    kernel = f"kernel time: {timing.kernel_note}" if timing.kernel_note else ""
    return "; ".join(n for n in (timing.note, kernel) if n)


def softmax_csv_rows(sweep: SweepResult) -> tuple[list[str], list[list[object]]]:
    """One row per case. `<name>_us` is the median CUDA-event time (what GB/s and the ratios
    use), `<name>_kernel_us` the profiler's device time of the call's kernels."""
    headers = ["group", "shape", "dim", "dtype", "numel", "traffic_bytes", "minitensor_us", "minitensor_kernel_us",
               "minitensor_gbs", "minitensor_pct_copy_bw", "minitensor_reps", "minitensor_note", "check", "max_error",
               "tolerance", "check_detail", "x_best", "best_contender"]
    for name in sweep.contender_names:
        headers += [f"{name}_us", f"{name}_kernel_us", f"{name}_gbs", f"{name}_reps", f"speedup_vs_{name}",
                    f"{name}_note"]
    headers += ["copy_bw_gbs", "device", "op", "clock_max_mhz", "minitensor_clock_mhz"]
    headers += [f"{name}_clock_mhz" for name in sweep.contender_names]
    rows = []
    for case in sweep.cases:
        t, own = case.typed, case.minitensor
        row: list[object] = [t.case.group, t.case.shape_text, t.case.dim, t.dtype, t.case.numel, t.traffic_bytes,
                             own.us, own.kernel_us, own.gbs, case.pct_of_copy, own.reps, _csv_note(own),
                             case.check.status, format_error(case.check), case.check.tolerance, case.check.detail,
                             case.speedup_over_best, case.fastest_contender or ""]
        for name in sweep.contender_names:
            other = case.contenders.get(name)
            if other is None:
                row += ["", "", "", "", "", ""]
            else:
                row += [other.us, other.kernel_us, other.gbs, other.reps, case.speedup_over(name), _csv_note(other)]
        row += [sweep.copy_gbs, sweep.device_name, sweep.op_name, sweep.clock_max_mhz, own.clock_mhz]
        row += [case.contenders[name].clock_mhz if name in case.contenders else "" for name in
                sweep.contender_names]
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
    copy_gbs = clock_max_mhz = math.nan
    for path in paths:
        with open(path, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                names = [h[: -len("_us")] for h in row
                         if h.endswith("_us") and not h.endswith("_kernel_us") and h != "minitensor_us"]
                contender_names += [n for n in names if n not in contender_names]
                device, op = device or row["device"], op or row["op"]
                copy_gbs = _number(row["copy_bw_gbs"]) if math.isnan(copy_gbs) else copy_gbs
                if math.isnan(clock_max_mhz):
                    clock_max_mhz = _number(row.get("clock_max_mhz", ""))
                case = Case(row["group"], tuple(int(v) for v in row["shape"].split("x")), int(row["dim"]))
                tensor_bytes = case.numel * ITEMSIZE[row["dtype"]]
                typed = TypedCase(case, row["dtype"], tensors_moved=int(row["traffic_bytes"]) // tensor_bytes)
                own = Timing(us=_number(row["minitensor_us"]), gbs=_number(row["minitensor_gbs"]),
                             reps=int(row["minitensor_reps"] or 0), note=row.get("minitensor_note", ""),
                             kernel_us=_number(row.get("minitensor_kernel_us", "")),
                             clock_mhz=_number(row.get("minitensor_clock_mhz", "")))
                check = Check(row["check"], _number(row["max_error"]), _number(row["tolerance"]),
                              row["check_detail"])
                others = {n: Timing(us=_number(row[f"{n}_us"]), gbs=_number(row[f"{n}_gbs"]),
                                    reps=int(row[f"{n}_reps"] or 0), note=row[f"{n}_note"],
                                    kernel_us=_number(row.get(f"{n}_kernel_us", "")),
                                    clock_mhz=_number(row.get(f"{n}_clock_mhz", ""))) for n in names}
                cases.append(CaseResult(typed, own, check, _number(row["minitensor_pct_copy_bw"]), others))
    return SweepResult(device_name=device, device_kind="", op_name=op or "softmax", copy_gbs=copy_gbs,
                       copy_method="from CSV", contender_names=contender_names, cases=cases,
                       clock_max_mhz=clock_max_mhz)
