"""The softmax sweep: every case x dtype, checked against a float64 reference and timed
beside the device's copy bandwidth and the chosen contenders.

The sweep runs a SweepOp: the forward (SoftmaxForward, below) or the backward
(backward_bench.SoftmaxBackward). Both go through run_case: minitensor's result is checked, every
contender's result is checked before its time counts, then all are timed with CUDA events (the
table's numbers) and, where a profiler is available, their kernels' device time.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any, Callable, Protocol

import minitensor as mt

from . import contenders as contenders_mod
from .cases import TypedCase
from .correctness import Check, as_numpy, check_with_numpy, check_with_torch, wrong_result_reason
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
    backward: bool = False


class SweepOp(Protocol):
    """What the sweep times: how to make its inputs, run it, check it and race it."""

    name: str  # "softmax", "log_softmax_backward", ...: titles, the CSV's op column, file names
    tensors_moved: int  # tensors of the case's size read or written: the traffic floor

    def make_inputs(self, device: BenchDevice, typed: TypedCase, seed: int) -> Any: ...

    def minitensor_call(self, inputs: Any, dim: int) -> Callable[[], Any]: ...

    def check(self, device: BenchDevice, inputs: Any, output: Any, typed: TypedCase) -> Check: ...

    def contender(self, name: str, device: BenchDevice, inputs: Any, dim: int) -> Callable[[], Any]: ...


def minitensor_op(log: bool) -> Callable[[Any, int], Any]:
    return mt.log_softmax if log else mt.softmax


def check_result(device: BenchDevice, inputs: Inputs, output: Any, typed: TypedCase, log: bool) -> Check:
    """output: minitensor's, or a contender's (a torch tensor or a NumPy array)."""
    dim = typed.case.dim
    if device.torch is not None and inputs.torch is not None:
        return check_with_torch(device.torch, inputs.torch, device.to_torch(output), dim, typed.dtype, log)
    if inputs.numpy is not None:
        return check_with_numpy(inputs.numpy, as_numpy(output), dim, typed.dtype, log)
    return Check("unchecked", detail="no torch to compare with")


class SoftmaxForward:
    """y = softmax(x) (log_softmax if log): read x, write y."""

    tensors_moved = 2

    def __init__(self, log: bool) -> None:
        self.log = log
        self.name = "log_softmax" if log else "softmax"

    def make_inputs(self, device: BenchDevice, typed: TypedCase, seed: int) -> Inputs:
        return device.make_inputs(typed, seed)

    def minitensor_call(self, inputs: Inputs, dim: int) -> Callable[[], Any]:
        op, x = minitensor_op(self.log), inputs.mt
        return lambda: op(x, dim)

    def check(self, device: BenchDevice, inputs: Inputs, output: Any, typed: TypedCase) -> Check:
        return check_result(device, inputs, output, typed, self.log)

    def contender(self, name: str, device: BenchDevice, inputs: Inputs, dim: int) -> Callable[[], Any]:
        return contenders_mod.prepare(name, device, inputs, dim, self.log)


def sweep_op(options: SweepOptions) -> SweepOp:
    if options.backward:
        from .backward_bench import SoftmaxBackward

        return SoftmaxBackward(options.log)
    return SoftmaxForward(options.log)


def time_callable(fn: Callable[[], Any], device: BenchDevice, typed: TypedCase,
                  config: MeasureConfig) -> Timing:
    result = measure(fn, device.timer, config, flush=device.flush_fn)
    return Timing(us=result.median_us, gbs=throughput_gbs(typed.traffic_bytes, result.median_s),
                  reps=result.reps)


def failed_case(typed: TypedCase, error: Exception) -> CaseResult:
    """minitensor raised on this case: an error row, and the sweep goes on."""
    reason = contenders_mod.short_reason(error)
    return CaseResult(typed, Timing(note=reason), Check("error", detail=reason))


def prepare_checked_contender(op: SweepOp, name: str, device: BenchDevice, inputs: Any,
                              typed: TypedCase) -> Callable[[], Any]:
    """Contender `name` ready to time, once its result has passed the same check as
    minitensor's: a wrong result is not raced. Raises Unavailable with the reason otherwise."""
    fn = op.contender(name, device, inputs, typed.case.dim)
    check = op.check(device, inputs, fn(), typed)
    if check.failed:
        raise contenders_mod.Unavailable(wrong_result_reason(check))
    return fn


def add_kernel_time(timing: Timing, fn: Callable[[], Any], device: BenchDevice, calls: int) -> None:
    """Fills timing.kernel_us from the device's profiler; a failure leaves NaN and a note."""
    if calls <= 0:
        return
    try:
        timing.kernel_us = device.kernel_time_us(fn, calls)
    except Exception as error:  # noqa: BLE001  (a profiler problem must not cost the case)
        timing.kernel_note = contenders_mod.short_reason(error)


def run_case(typed: TypedCase, device: BenchDevice, options: SweepOptions, copy_gbs: float,
             op: SweepOp | None = None) -> CaseResult:
    op = op or sweep_op(options)
    try:
        inputs = op.make_inputs(device, typed, SEED)
        own_call = op.minitensor_call(inputs, typed.case.dim)
        output = own_call()
        check = op.check(device, inputs, output, typed)
        del output
    except Exception as error:  # noqa: BLE001  (one broken case must not hide the others)
        return failed_case(typed, error)

    runners: dict[str, Callable[[], Any]] = {"minitensor": own_call}
    notes: dict[str, Timing] = {}
    for name in options.contender_names:
        try:
            runners[name] = prepare_checked_contender(op, name, device, inputs, typed)
        except contenders_mod.Unavailable as why:
            notes[name] = Timing(note=str(why))
        except Exception as error:  # noqa: BLE001
            notes[name] = Timing(note=contenders_mod.short_reason(error))
    best: dict[str, Timing] = {}
    windows: dict[str, list[tuple[float, float]]] = defaultdict(list)  # when each was timed
    for _ in range(device.timing_rounds):
        for name, fn in list(runners.items()):
            start = time.monotonic()
            try:
                timing = time_callable(fn, device, typed, options.config)
            except Exception as error:  # noqa: BLE001
                if name == "minitensor":
                    return failed_case(typed, error)
                notes[name] = Timing(note=contenders_mod.short_reason(error))
                del runners[name]
                continue
            windows[name].append((start, time.monotonic()))
            if name not in best or timing.us < best[name].us:
                best[name] = timing
    # After all event timings: a profiler session can leave its tracing hooks behind, and they
    # should not touch this case's event times.
    for name, fn in runners.items():
        start = time.monotonic()
        add_kernel_time(best[name], fn, device, options.config.profile_calls)
        windows[name].append((start, time.monotonic()))
    if device.clock is not None:
        device.clock.wait_past(time.monotonic())
        for name, timing in best.items():
            timing.clock_mhz = device.clock.mean_mhz(windows[name])

    own = best["minitensor"]
    result = CaseResult(typed, own, check, pct_of_copy=100.0 * own.gbs / copy_gbs)
    for name in options.contender_names:
        result.contenders[name] = best[name] if name in best else notes[name]
    return result


def run_sweep(device: BenchDevice, typed_cases: list[TypedCase], options: SweepOptions,
              notes: list[str]) -> SweepResult:
    op = sweep_op(options)
    copy = device.copy_bandwidth(options.config)
    typed_cases = [replace(typed, tensors_moved=op.tensors_moved) for typed in typed_cases]
    if device.warm_up_first_case and typed_cases:
        run_case(typed_cases[0], device, options, copy.gbs, op)  # untimed: see BenchDevice
        device.release_memory()
        notes = [*notes, "the first case ran once, untimed, before the sweep"]
    results: list[CaseResult] = []
    with Progress(len(typed_cases), op.name) as progress:
        for typed in typed_cases:
            progress.describe(f"{typed.case.group} {typed.case.shape_text} dim={typed.case.dim} {typed.dtype}")
            results.append(run_case(typed, device, options, copy.gbs, op))
            device.release_memory()
            progress.advance()
    calls = options.config.profile_calls
    if device.kind == "cuda" and calls > 0:
        notes = [*notes, f"kernel µs: the device time of each call's kernels (CUDA profiler), median of "
                         f"{calls} calls, L2 flushed before each"]
    return SweepResult(device_name=device.name, device_kind=device.kind, op_name=op.name,
                       copy_gbs=copy.gbs, copy_method=copy.method,
                       contender_names=list(options.contender_names), cases=results,
                       notes=[*device.notes, *notes],
                       clock_max_mhz=device.clock.max_mhz if device.clock else float("nan"))
