"""Timers and the measuring loop.

A Timer hands out opaque marks; the time between two marks is read only after synchronize(),
so CUDA events can be queued for every repetition and read back together (reading one pair
per repetition would stall the GPU each time). The loop in `measure` knows nothing about CUDA,
which is what lets it be exercised with a fake timer on a machine without a GPU.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from . import optional


class Timer(Protocol):
    """Marks points in (device) time; elapsed() is valid once synchronize() has returned."""

    name: str

    def mark(self) -> Any: ...

    def synchronize(self) -> None: ...

    def elapsed_s(self, start: Any, end: Any) -> float: ...


class PerfCounterTimer:
    """Host wall clock. Exact for CPU kernels, which finish before they return."""

    name = "time.perf_counter"

    def mark(self) -> float:
        return time.perf_counter()

    def synchronize(self) -> None:
        pass

    def elapsed_s(self, start: float, end: float) -> float:
        return end - start


class SynchronizingPerfCounterTimer:
    """Waits for the GPU at every mark, then reads the host clock: the fallback when neither
    torch nor cupy offers CUDA events. It counts launch overhead and the synchronize round trip,
    so small cases look slower than they are."""

    name = "minitensor.cuda.synchronize + time.perf_counter (no CUDA events: small cases read slow)"

    def __init__(self, synchronize_device: Callable[[], None]) -> None:
        self._synchronize_device = synchronize_device

    def mark(self) -> float:
        self._synchronize_device()
        return time.perf_counter()

    def synchronize(self) -> None:
        self._synchronize_device()

    def elapsed_s(self, start: float, end: float) -> float:
        return end - start


class TorchEventTimer:
    """CUDA events on torch's current stream (the legacy default stream, which is also where
    minitensor launches its kernels, so the events bracket minitensor's work too)."""

    name = "CUDA events (torch.cuda.Event)"

    def __init__(self, torch: Any) -> None:
        self._torch = torch

    def mark(self) -> Any:
        event = self._torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def synchronize(self) -> None:
        self._torch.cuda.synchronize()

    def elapsed_s(self, start: Any, end: Any) -> float:
        return start.elapsed_time(end) / 1e3


class CupyEventTimer:
    """CUDA events on cupy's current stream (the legacy default stream unless changed)."""

    name = "CUDA events (cupy.cuda.Event)"

    def __init__(self, cupy: Any) -> None:
        self._cupy = cupy

    def mark(self) -> Any:
        event = self._cupy.cuda.Event()
        event.record()
        return event

    def synchronize(self) -> None:
        self._cupy.cuda.Device().synchronize()

    def elapsed_s(self, start: Any, end: Any) -> float:
        return self._cupy.cuda.get_elapsed_time(start, end) / 1e3


def cuda_timer(synchronize_device: Callable[[], None]) -> Timer:
    """The best CUDA timer available: torch events, cupy events, else synchronize + clock."""
    torch = optional.torch_with_cuda()
    if torch is not None:
        return TorchEventTimer(torch)
    cupy = optional.cupy()
    if cupy is not None:
        return CupyEventTimer(cupy)
    return SynchronizingPerfCounterTimer(synchronize_device)


@dataclass(frozen=True)
class MeasureConfig:
    """How hard to measure one function."""

    max_reps: int = 30  # the median of this many runs when they fit in the budget
    min_reps: int = 3  # never fewer, however slow a run is
    warmup: int = 3  # untimed runs first: lazy allocation, autotuning, compilation, clocks
    budget_s: float = 1.0  # rough cap on the timed runs of one function (flushes included)
    profile_calls: int = 20  # calls under the CUDA profiler for the kernel-time column (0: none)


@dataclass
class Measurement:
    median_s: float
    times_s: list[float] = field(default_factory=list)

    @property
    def reps(self) -> int:
        return len(self.times_s)

    @property
    def median_us(self) -> float:
        return self.median_s * 1e6


def repetitions_within_budget(one_rep_s: float, config: MeasureConfig) -> int:
    """How many timed runs fit in the budget, clamped to [min_reps, max_reps]."""
    if one_rep_s <= 0 or not math.isfinite(one_rep_s):
        return config.max_reps
    fitting = int(config.budget_s / one_rep_s)
    return max(config.min_reps, min(config.max_reps, fitting))


def measure(fn: Callable[[], Any], timer: Timer, config: MeasureConfig,
            flush: Callable[[], None] | None = None) -> Measurement:
    """Median time of fn() under timer.

    flush runs before each timed call and outside its marks: it evicts the inputs from L2 so
    every run reads them from DRAM, as in a real model. On a GPU it also gives the host a head
    start: while the flush kernel runs, the start mark and fn's launch are already queued, so
    Python and launch overhead stay out of the measured interval (as in triton's do_bench).
    """
    for _ in range(config.warmup):
        fn()
    # One probe run, flush included, sizes the repetition count to the time budget.
    probe_start = time.perf_counter()
    if flush is not None:
        flush()
    start = timer.mark()
    fn()
    end = timer.mark()
    timer.synchronize()
    probe_s = max(timer.elapsed_s(start, end), time.perf_counter() - probe_start)
    reps = repetitions_within_budget(probe_s, config)

    marks = []
    for _ in range(reps):
        if flush is not None:
            flush()
        start = timer.mark()
        fn()
        marks.append((start, timer.mark()))
    timer.synchronize()
    times = [timer.elapsed_s(s, e) for s, e in marks]
    return Measurement(median_s=statistics.median(times), times_s=times)


def throughput_gbs(bytes_moved: int, seconds: float) -> float:
    """GB/s with GB = 1e9 bytes (what GPU data sheets quote)."""
    return bytes_moved / seconds / 1e9 if seconds > 0 else float("nan")
