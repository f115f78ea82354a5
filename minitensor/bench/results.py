"""What one benchmarked case produced; shared by the sweep, the report and the plot."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .cases import TypedCase
from .correctness import Check

NAN = float("nan")


def _measured(us: float) -> bool:
    return math.isfinite(us) and us > 0


@dataclass
class Timing:
    """One implementation on one case. note says why the numbers are missing, if they are."""

    us: float = NAN  # median per-call time from CUDA events (or the host clock on a CPU)
    gbs: float = NAN
    reps: int = 0
    note: str = ""
    # The median per call of the device time of the call's own kernels, from the CUDA profiler
    # (NaN where not measured); kernel_note says why it is missing when it was tried.
    kernel_us: float = NAN
    kernel_note: str = ""
    # The mean SM clock sampled while this was timed (bench.clock; NaN without a sampler).
    clock_mhz: float = NAN

    @property
    def ok(self) -> bool:
        return _measured(self.us)

    @property
    def kernel_ok(self) -> bool:
        """A valid call whose kernel time was measured too."""
        return self.ok and _measured(self.kernel_us)


@dataclass
class CaseResult:
    typed: TypedCase
    minitensor: Timing
    check: Check
    pct_of_copy: float = NAN
    contenders: dict[str, Timing] = field(default_factory=dict)

    def speedup_over(self, name: str) -> float:
        """How many times faster minitensor is than contender `name` (> 1: minitensor wins)."""
        other = self.contenders.get(name)
        if other is None or not other.ok or not self.minitensor.ok:
            return NAN
        return other.us / self.minitensor.us

    @property
    def fastest_contender(self) -> str | None:
        """The contender with the shortest median time on this case (None if none ran)."""
        timed = [(timing.us, name) for name, timing in self.contenders.items() if timing.ok]
        return min(timed)[1] if timed else None

    @property
    def speedup_over_best(self) -> float:
        """`× best`: the fastest contender's time over minitensor's (>= 1: minitensor is at
        least as fast as every contender that ran; NaN if none ran)."""
        best = self.fastest_contender
        return NAN if best is None else self.speedup_over(best)

    def kernel_speedup_over(self, name: str) -> float:
        """speedup_over by the CUDA profiler's kernel times, which leave out the host time a call
        spends before its kernels run (NaN where either kernel time is missing)."""
        other = self.contenders.get(name)
        if other is None or not (other.kernel_ok and self.minitensor.kernel_ok):
            return NAN
        return other.kernel_us / self.minitensor.kernel_us

    @property
    def kernel_speedup_over_best(self) -> float:
        """`× best` over kernel times (NaN where minitensor's or every contender's is missing)."""
        ratios = [r for r in map(self.kernel_speedup_over, self.contenders) if math.isfinite(r)]
        return min(ratios) if ratios else NAN

    @property
    def kernel_pct_of_copy(self) -> float:
        """% of the copy bandwidth over minitensor's kernel time instead of its median time."""
        if not self.minitensor.kernel_ok:
            return NAN
        return self.pct_of_copy * self.minitensor.us / self.minitensor.kernel_us


@dataclass
class SweepResult:
    device_name: str
    device_kind: str
    op_name: str
    copy_gbs: float
    copy_method: str
    contender_names: list[str]
    cases: list[CaseResult]
    notes: list[str] = field(default_factory=list)
    clock_max_mhz: float = NAN  # the GPU's highest SM clock, where the clock was sampled

    @property
    def failures(self) -> list[CaseResult]:
        return [c for c in self.cases if c.check.failed]
