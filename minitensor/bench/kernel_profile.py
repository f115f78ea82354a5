"""Device-side kernel time per call, from the CUDA profiler (torch.profiler over CUPTI).

CUDA events time a call from its start mark to its end mark: launch gaps between the kernels of
one call count, and so does a slow first launch. The profiler gives each kernel's own duration on
the device, so the two together tell a slow kernel from a call that launches badly.

One profiling session runs (flush, fn) LEAD_CALLS + calls times, then one more flush. Everything
runs on one stream, so in start order the device activities read
    flush, fn's kernels, flush, fn's kernels, ..., flush
and the flushes split them into calls; no host-side annotation is needed.

CUPTI drops or mis-stamps the first records of a session, one more for every session the process
has opened before (pytorch issue 192021; a sweep opens hundreds). So each session starts with
cheap "head" launches, more as sessions accumulate, to absorb them, and the first LEAD_CALLS
calls are thrown away too. A mis-stamped record lands far before the first flush (or after the
last one), where it is ignored.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterable

LEAD_CALLS = 3
FLUSH_PROBE_CALLS = 8
HEAD_LAUNCHES_MIN = 16  # head launches in a session: this many plus 2 per earlier session


class ProfileError(RuntimeError):
    """The profile cannot be split into calls; the message says why."""


@dataclass(frozen=True)
class DeviceActivity:
    """A kernel, memset or memcpy as the device ran it."""

    name: str
    start_us: float
    end_us: float

    @property
    def duration_us(self) -> float:
        return self.end_us - self.start_us


def per_call_activities(activities: Iterable[DeviceActivity], flush_names: frozenset[str],
                        calls: int) -> list[list[DeviceActivity]]:
    """The device activities of each of the last `calls` calls of a session laid out as in the
    module docstring, in start order. A flush may show as several back-to-back activities; they
    count as one."""
    segments: list[list[DeviceActivity]] = []
    current: list[DeviceActivity] | None = None  # None until the first flush
    in_flush = False
    for activity in sorted(activities, key=lambda a: a.start_us):
        if activity.name in flush_names:
            if not in_flush:
                if current is not None:
                    segments.append(current)
                current = []
            in_flush = True
        else:
            in_flush = False
            if current is not None:
                current.append(activity)
    # What follows the last flush is not a call of ours: dropped with `current`. A call that
    # showed no device activity merges two flushes into one, so it shows up as a call too few.
    if len(segments) < calls:
        raise ProfileError(f"profile split into {len(segments)} calls, expected at least {calls}")
    return segments[-calls:]


def device_us(call: Iterable[DeviceActivity]) -> float:
    """A call's device time: its activities' durations summed."""
    return sum(a.duration_us for a in call)


def flush_activity_names(activities: Iterable[DeviceActivity], flushes: int) -> frozenset[str]:
    """The names of the activities a session of `flushes` flushes alone showed: those seen at
    least as often as the flushes that were surely recorded (all but the lead)."""
    counts = Counter(a.name for a in activities)
    names = frozenset(name for name, n in counts.items() if n >= flushes - LEAD_CALLS)
    if not names:
        raise ProfileError(f"no device activity in a profile of {flushes} L2 flushes (is CUPTI usable?)")
    return names


def _is_device_activity(event: Any) -> bool:
    """A kernel, memset or memcpy: on the CUDA device, and not a user annotation's span (which
    would cover kernels counted already)."""
    # FunctionEvent.device_type is a DeviceType enum; its name is stable where its import path is not.
    on_device = str(getattr(event, "device_type", "")).split(".")[-1] == "CUDA"
    return on_device and not getattr(event, "is_user_annotation", False)


class TorchKernelProfiler:
    """Median device time per call of fn under torch.profiler, the L2 flushed before each call."""

    def __init__(self, torch: Any, flush: Callable[[], None], head_launch: Callable[[], None] | None = None) -> None:
        """head_launch: a cheap kernel launch (e.g. zeroing a small tensor) for the head of each
        session; None for none."""
        self._torch = torch
        self._flush = flush
        self._head_launch = head_launch
        self._sessions = 0
        self._flush_names: frozenset[str] | None = None
        self._broken: ProfileError | None = None  # a profiler that cannot work fails once, not per case

    def _session(self, body: Callable[[], None]) -> list[DeviceActivity]:
        profiler = self._torch.profiler
        head = HEAD_LAUNCHES_MIN + 2 * self._sessions if self._head_launch is not None else 0
        self._sessions += 1
        with profiler.profile(activities=[profiler.ProfilerActivity.CUDA]) as session:
            for _ in range(head):
                self._head_launch()  # type: ignore[misc]
            body()
            self._torch.cuda.synchronize()
        return [DeviceActivity(str(e.name), float(e.time_range.start), float(e.time_range.end))
                for e in session.events() if _is_device_activity(e)]

    def _flush_activity_names(self) -> frozenset[str]:
        if self._broken is not None:
            raise self._broken
        if self._flush_names is None:
            def flushes() -> None:
                for _ in range(LEAD_CALLS + FLUSH_PROBE_CALLS):
                    self._flush()

            try:
                self._flush_names = flush_activity_names(self._session(flushes), LEAD_CALLS + FLUSH_PROBE_CALLS)
            except Exception as error:  # noqa: BLE001  (CUPTI missing or not permitted, ...)
                self._broken = error if isinstance(error, ProfileError) else ProfileError(
                    f"CUDA profiler unusable: {type(error).__name__}: {error}")
                raise self._broken from error
        return self._flush_names

    def calls(self, fn: Callable[[], Any], calls: int) -> list[list[DeviceActivity]]:
        """The device activities of `calls` calls of fn (after LEAD_CALLS more), each after a
        flush: which kernels a call ran, and for how long."""
        flush_names = self._flush_activity_names()

        def body() -> None:
            for _ in range(LEAD_CALLS + calls):
                self._flush()
                fn()
            self._flush()

        return per_call_activities(self._session(body), flush_names, calls)

    def kernel_us(self, fn: Callable[[], Any], calls: int) -> float:
        return statistics.median(device_us(call) for call in self.calls(fn, calls))
