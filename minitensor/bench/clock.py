"""The GPU's SM clock beside the benchmark's timings.

Why: the lent H200 caps its power in software, and on a sweep's largest cases its SM clock dips
(1,980 -> 1,695-1,755 MHz, for stretches of a second), under every contender. A memory-bound
kernel hardly notices; an issue-bound one would. Each timing's clock tells a reading taken under
a held-down clock from one taken at full speed (docs/DESIGN.md, "A process's history is part of
the reading").

`nvidia-smi` polls the clock every POLL_MS in a child process, and a reader thread stamps each
sample with time.monotonic() as it arrives; a timing's clock is the mean of the samples in force
while it ran. Where nvidia-smi is missing, fails or cannot tell which of its GPUs the benchmark's
is, there is no sampler and the report shows no clock.
"""

from __future__ import annotations

import atexit
import bisect
import math
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterable

POLL_MS = 50
QUERY = "clocks.sm,clocks.max.sm"


@dataclass(frozen=True)
class ClockSample:
    at: float  # time.monotonic() when the sample arrived
    sm_mhz: float
    max_mhz: float


def parse_sample(line: str, at: float) -> ClockSample | None:
    """One line of `nvidia-smi --query-gpu=QUERY --format=csv,noheader,nounits`: "1755, 1980" (None
    for anything else, e.g. "[N/A], 1980")."""
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != 2:
        return None
    try:
        return ClockSample(at, float(parts[0]), float(parts[1]))
    except ValueError:
        return None


class ClockSampler:
    """Samples in arrival order; `mean_mhz` reads the clock over time windows."""

    def __init__(self) -> None:
        self._samples: list[ClockSample] = []
        self._lock = threading.Lock()
        self._process: subprocess.Popen[str] | None = None

    def add(self, line: str, at: float | None = None) -> None:
        sample = parse_sample(line, time.monotonic() if at is None else at)
        if sample is not None:
            with self._lock:
                self._samples.append(sample)

    @property
    def max_mhz(self) -> float:
        """The GPU's highest SM clock (its boost limit), NaN before the first sample."""
        with self._lock:
            return max((s.max_mhz for s in self._samples), default=math.nan)

    def mean_mhz(self, windows: Iterable[tuple[float, float]]) -> float:
        """The mean clock in force during the (start, end) monotonic windows: over the samples
        inside them and the last one before each (it held at the window's start), each once.
        NaN with none."""
        with self._lock:
            samples = list(self._samples)
        arrivals = [s.at for s in samples]
        seen: set[int] = set()
        for start, end in windows:
            first = max(0, bisect.bisect_left(arrivals, start) - 1)
            seen.update(range(first, bisect.bisect_right(arrivals, end)))
        return sum(samples[i].sm_mhz for i in seen) / len(seen) if seen else math.nan

    def wait_past(self, moment: float, timeout_s: float = 4 * POLL_MS / 1000) -> None:
        """Waits (briefly) until a sample later than `moment` has arrived, so that a window that
        has just ended has its closing sample."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                if self._samples and self._samples[-1].at > moment:
                    return
            time.sleep(POLL_MS / 4000)

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()

    @classmethod
    def start(cls, gpu_id: str) -> ClockSampler:
        """Polls `nvidia-smi -i gpu_id` (an index or a UUID) until close()."""
        sampler = cls()
        sampler._process = subprocess.Popen(
            ["nvidia-smi", "-i", gpu_id, f"--query-gpu={QUERY}", "--format=csv,noheader,nounits",
             "-lms", str(POLL_MS)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        stream = sampler._process.stdout

        def read() -> None:
            for line in stream:
                sampler.add(line)

        threading.Thread(target=read, name="nvidia-smi clock", daemon=True).start()
        atexit.register(sampler.close)  # the child would outlive the benchmark otherwise
        return sampler


def nvidia_smi_id(torch: Any) -> str | None:
    """nvidia-smi's name for torch's current CUDA device: its UUID where nvidia-smi lists the one
    torch tells (the indices differ under CUDA_VISIBLE_DEVICES), else index 0 where nvidia-smi
    sees one GPU only (torch's can be no other)."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        listed = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=10, check=True).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return None
    uuid = None
    if torch is not None:
        uuid = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "uuid", None)
    wanted = f"GPU-{uuid}" if uuid is not None else None
    if wanted in listed:
        return wanted
    return "0" if len(listed) == 1 else None


def start_clock_sampler(torch: Any) -> ClockSampler | None:
    """A running sampler for the benchmark's GPU, or None (no nvidia-smi, or no first sample
    within a second)."""
    gpu = nvidia_smi_id(torch)
    if gpu is None:
        return None
    try:
        sampler = ClockSampler.start(gpu)
    except OSError:
        return None
    sampler.wait_past(0.0, timeout_s=1.0)
    if math.isnan(sampler.max_mhz):
        sampler.close()
        return None
    return sampler
