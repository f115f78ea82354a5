"""The softmax sweep: every case x dtype, checked against a float64 reference and timed
beside the device's copy bandwidth and the chosen contenders."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

import minitensor as mt

from . import contenders as contenders_mod
from .cases import TypedCase
from .correctness import Check, check_with_numpy, check_with_torch
from .devices import BenchDevice, Inputs
from .progress import Progress
from .results import CaseResult, SweepResult, Timing
from .timing import MeasureConfig, measure, throughput_gbs

SEED = 1234


@dataclass(frozen=True)
class SweepOptions:
    log: bool
    contender_names: tuple[str, ...]
    config: MeasureConfig


def minitensor_op(log: bool) -> Callable[[Any, int], Any]:
    return mt.log_softmax if log else mt.softmax


def time_callable(fn: Callable[[], Any], device: BenchDevice, typed: TypedCase,
                  config: MeasureConfig) -> Timing:
    result = measure(fn, device.timer, config, flush=device.flush_fn)
    return Timing(us=result.median_us, gbs=throughput_gbs(typed.traffic_bytes, result.median_s),
                  reps=result.reps)


def check_result(device: BenchDevice, inputs: Inputs, output: Any, typed: TypedCase, log: bool) -> Check:
    dim = typed.case.dim
    if device.torch is not None and inputs.torch is not None:
        return check_with_torch(device.torch, inputs.torch, device.to_torch(output), dim, typed.dtype, log)
    if inputs.numpy is not None:
        return check_with_numpy(inputs.numpy, np.asarray(output.cpu().numpy()), dim, typed.dtype, log)
    return Check("unchecked", detail="no torch to compare with")


def failed_case(typed: TypedCase, error: Exception) -> CaseResult:
    """minitensor raised on this case: an error row, and the sweep goes on."""
    reason = contenders_mod.short_reason(error)
    return CaseResult(typed, Timing(note=reason), Check("error", detail=reason))


def run_case(typed: TypedCase, device: BenchDevice, options: SweepOptions, copy_gbs: float) -> CaseResult:
    dim = typed.case.dim
    op = minitensor_op(options.log)
    inputs = device.make_inputs(typed, SEED)
    try:
        output = op(inputs.mt, dim)
        check = check_result(device, inputs, output, typed, options.log)
        del output
    except Exception as error:  # noqa: BLE001  (one broken case must not hide the others)
        return failed_case(typed, error)

    runners: dict[str, Callable[[], Any]] = {"minitensor": lambda: op(inputs.mt, dim)}
    notes: dict[str, Timing] = {}
    for name in options.contender_names:
        try:
            runners[name] = contenders_mod.prepare(name, device, inputs, dim, options.log)
        except contenders_mod.Unavailable as why:
            notes[name] = Timing(note=str(why))
        except Exception as error:  # noqa: BLE001
            notes[name] = Timing(note=contenders_mod.short_reason(error))
    best: dict[str, Timing] = {}
    for _ in range(device.timing_rounds):
        for name, fn in list(runners.items()):
            try:
                timing = time_callable(fn, device, typed, options.config)
            except Exception as error:  # noqa: BLE001
                if name == "minitensor":
                    return failed_case(typed, error)
                notes[name] = Timing(note=contenders_mod.short_reason(error))
                del runners[name]
                continue
            if name not in best or timing.us < best[name].us:
                best[name] = timing

    own = best["minitensor"]
    result = CaseResult(typed, own, check, pct_of_copy=100.0 * own.gbs / copy_gbs)
    for name in options.contender_names:
        result.contenders[name] = best[name] if name in best else notes[name]
    return result


def run_sweep(device: BenchDevice, typed_cases: list[TypedCase], options: SweepOptions,
              notes: list[str]) -> SweepResult:
    copy = device.copy_bandwidth(options.config)
    op_name = "log_softmax" if options.log else "softmax"
    results: list[CaseResult] = []
    with Progress(len(typed_cases), op_name) as progress:
        for typed in typed_cases:
            progress.describe(f"{typed.case.group} {typed.case.shape_text} dim={typed.case.dim} {typed.dtype}")
            results.append(run_case(typed, device, options, copy.gbs))
            device.release_memory()
            progress.advance()
    return SweepResult(device_name=device.name, device_kind=device.kind, op_name=op_name,
                       copy_gbs=copy.gbs, copy_method=copy.method,
                       contender_names=list(options.contender_names), cases=results,
                       notes=[*device.notes, *notes])
