"""Where a benchmark runs: its timer, its L2 flush, its copy bandwidth and how inputs are made.

CudaBench and CpuBench share one shape so the sweep code does not branch on the device.
Inputs are random normal (never zeros: exp of a constant row is a degenerate, faster case) and,
where torch is present, are made by torch and shared with minitensor through DLPack, so torch
and minitensor read the very same bytes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

import minitensor as mt

from . import optional
from .cases import TypedCase
from .clock import POLL_MS, ClockSampler, start_clock_sampler
from .kernel_profile import TorchKernelProfiler
from .timing import MeasureConfig, PerfCounterTimer, Timer, cuda_timer, measure, throughput_gbs

MIN_FLUSH_BYTES = 256 * 2**20
CUDA_COPY_BYTES = 2**30  # per buffer: large enough that launch and tail effects vanish
CPU_COPY_BYTES = 256 * 2**20  # well past any last-level cache, small enough to copy quickly


@dataclass
class Inputs:
    """One input in every library's view of it (None where that library is not used)."""

    mt: Any
    torch: Any = None
    numpy: np.ndarray | None = None


@dataclass
class BackwardInputs:
    """What the softmax backward reads: the forward's output y and the upstream gradient dy."""

    y: Inputs
    dy: Inputs


@dataclass
class CopyBandwidth:
    gbs: float
    method: str


class BenchDevice:
    """What the sweep needs from a device; CudaBench and CpuBench fill it in."""

    kind: str = ""
    name: str = ""
    timer: Timer
    notes: list[str]
    torch: Any = None  # the torch module when importable (and, for CUDA, seeing a GPU)
    # Rounds in which minitensor and each contender are timed in turn; each keeps its best
    # round's median. One on a GPU; more on a CPU host whose speed drifts, so that a slow spell
    # does not land on one contender only.
    timing_rounds: int = 1
    clock: ClockSampler | None = None  # the GPU's SM clock beside each timing, where sampled
    # Whether a sweep runs its first case once, untimed, before timing any: on an H200 a process's
    # first case read 18-27% slow for the kernels profiled first (ours, then torch's) and not for
    # the one profiled last (Liger's), which the same case run again did not (BENCHMARKS.md, the
    # sixty-seventh session).
    warm_up_first_case: bool = False

    @property
    def flush_fn(self) -> Callable[[], None] | None:
        """Evicts the caches between timed runs (None where that is not done)."""
        return None

    def make_inputs(self, typed: TypedCase, seed: int) -> Inputs:
        raise NotImplementedError

    def copy_bandwidth(self, config: MeasureConfig) -> CopyBandwidth:
        raise NotImplementedError

    def to_torch(self, tensor: Any) -> Any:
        """A torch view of a result (minitensor's, NumPy's or torch's own; shares memory), or None
        without torch."""
        torch = self.torch
        if torch is None:
            return None
        return tensor if isinstance(tensor, torch.Tensor) else torch.from_dlpack(tensor)

    def release_memory(self) -> None:
        """Hand cached blocks back between cases, so torch's and minitensor's pools don't
        squeeze each other out on the largest cases."""

    def kernel_time_us(self, fn: Callable[[], Any], calls: int) -> float:
        """Median device time of fn's kernels per call over `calls` calls, the caches flushed
        before each; NaN where the device has no profiler. Raises when profiling fails."""
        return float("nan")


def _torch_dtype(torch: Any, name: str) -> Any:
    return getattr(torch, name)


def _mt_dtype(name: str) -> Any:
    return getattr(mt, name)


def _mt_randn(shape: tuple[int, ...], dtype: str, device: str) -> Any:
    try:
        return mt.randn(*shape, dtype=_mt_dtype(dtype), device=device)
    except TypeError:
        # A build whose generator makes only float32/float64: convert after drawing.
        return mt.randn(*shape, dtype=mt.float32, device=device).to(_mt_dtype(dtype))


class CudaBench(BenchDevice):
    kind = "cuda"
    warm_up_first_case = True

    def __init__(self) -> None:
        if not mt.cuda.is_available():
            built = "built with CUDA" if mt.cuda.is_built() else "built without CUDA"
            raise RuntimeError(f"no CUDA device usable by minitensor ({built}); try --device cpu")
        self.notes = []
        self.torch = optional.torch_with_cuda()
        self.cupy = optional.cupy()
        self.timer = cuda_timer(mt.cuda.synchronize)
        self.notes.append(f"timer: {self.timer.name}")
        self.name = self._device_name()
        self._flush_buffer, self._flush_fn, flush_bytes = self._make_flush()
        self.notes.append(f"L2 flush: {flush_bytes / 2**20:.0f} MiB written before every timed run")
        self._kernel_profiler = None
        if self.torch is None:
            self.notes.append("torch not importable: inputs from mt.randn, no correctness check, "
                              "no kernel times (no CUDA profiler)")
        else:
            # The profiler's head launches: zeroing a small int32 tensor, the flush's own kernel.
            head = self.torch.zeros(4096, dtype=self.torch.int32, device="cuda")
            self._kernel_profiler = TorchKernelProfiler(self.torch, self._flush_fn, head.zero_)
        self.clock = start_clock_sampler(self.torch)
        if self.clock is not None:
            self.notes.append(f"SM clock: nvidia-smi every {POLL_MS} ms beside each timing (max "
                              f"{self.clock.max_mhz:,.0f} MHz), averaged over each timing")

    def _device_name(self) -> str:
        if self.torch is not None:
            return self.torch.cuda.get_device_name()
        if self.cupy is not None:
            props = self.cupy.cuda.runtime.getDeviceProperties(self.cupy.cuda.Device().id)
            name = props.get("name", b"CUDA device")
            return name.decode() if isinstance(name, bytes) else str(name)
        return f"CUDA device {mt.cuda.current_device()}"

    def _l2_bytes(self) -> int:
        try:
            if self.torch is not None:
                return int(self.torch.cuda.get_device_properties(self.torch.cuda.current_device()).L2_cache_size)
            if self.cupy is not None:
                return int(self.cupy.cuda.runtime.getDeviceProperties(self.cupy.cuda.Device().id)["l2CacheSize"])
        except Exception:  # noqa: BLE001  (an attribute renamed in some version: fall back)
            pass
        return 0

    def _make_flush(self) -> tuple[Any, Callable[[], None], int]:
        # Writing 2x L2 leaves none of the previous run's data resident.
        nbytes = max(MIN_FLUSH_BYTES, 2 * self._l2_bytes())
        if self.torch is not None:
            buffer = self.torch.empty(nbytes // 4, dtype=self.torch.int32, device="cuda")
            return buffer, buffer.zero_, nbytes
        if self.cupy is not None:
            buffer = self.cupy.empty(nbytes // 4, dtype=self.cupy.int32)
            return buffer, lambda: buffer.fill(0), nbytes
        buffer = mt.empty(nbytes // 4, dtype=mt.float32, device="cuda")
        return buffer, lambda: buffer.fill_(0.0), nbytes

    @property
    def flush_fn(self) -> Callable[[], None]:
        return self._flush_fn

    def copy_bandwidth(self, config: MeasureConfig) -> CopyBandwidth:
        """Device-to-device copy of a 1 GiB buffer; bytes = read + write."""
        copy, method = self._copy_function(CUDA_COPY_BYTES)
        result = measure(copy, self.timer, config, flush=self._flush_fn)
        del copy  # the closure holds the 2 GiB of buffers: free them before the sweep
        self.release_memory()
        return CopyBandwidth(throughput_gbs(2 * CUDA_COPY_BYTES, result.median_s),
                             f"{method}, {CUDA_COPY_BYTES / 2**30:.0f} GiB, median of {result.reps}")

    def _copy_function(self, nbytes: int) -> tuple[Callable[[], Any], str]:
        if self.torch is not None:
            src = self.torch.ones(nbytes, dtype=self.torch.uint8, device="cuda")
            dst = self.torch.empty_like(src)
            return (lambda: dst.copy_(src)), "torch copy_"
        if self.cupy is not None:
            src_cp = self.cupy.ones(nbytes, dtype=self.cupy.uint8)
            dst_cp = self.cupy.empty_like(src_cp)
            return (lambda: self.cupy.copyto(dst_cp, src_cp)), "cupy.copyto"
        # clone allocates its output each time, from minitensor's stream-ordered pool (cheap).
        return mt.ones(nbytes // 4, dtype=mt.float32, device="cuda").clone, "minitensor clone"

    def make_inputs(self, typed: TypedCase, seed: int) -> Inputs:
        shape = typed.case.shape
        if self.torch is None:
            mt.manual_seed(seed)
            return Inputs(mt=_mt_randn(shape, typed.dtype, "cuda"))
        generator = self.torch.Generator(device="cuda").manual_seed(seed)
        x = self.torch.randn(shape, dtype=_torch_dtype(self.torch, typed.dtype), device="cuda",
                             generator=generator)
        return Inputs(mt=mt.from_dlpack(x), torch=x)

    def release_memory(self) -> None:
        # Both pools start every case empty, as they would in a process of its own.
        mt.cuda.empty_cache()
        if self.torch is not None:
            self.torch.cuda.synchronize()
            self.torch.cuda.empty_cache()

    def kernel_time_us(self, fn: Callable[[], Any], calls: int) -> float:
        if self._kernel_profiler is None:
            return float("nan")
        return self._kernel_profiler.kernel_us(fn, calls)


class CpuBench(BenchDevice):
    kind = "cpu"
    timing_rounds = 3

    def __init__(self) -> None:
        self.notes = [f"timing: minitensor and each contender in turn over {self.timing_rounds} rounds, "
                      "the best round's median for each"]
        self.torch = optional.torch()
        self.timer = PerfCounterTimer()
        threads = os.cpu_count() or 1
        if self.torch is not None:
            # torch defaults to physical cores; give it what minitensor may use, for a fair race.
            self.torch.set_num_threads(threads)
            self.notes.append(f"torch-CPU {self.torch.__version__} on {threads} threads")
        else:
            self.notes.append("torch not importable: NumPy float64 reference for the correctness check")
        self.name = f"CPU ({threads} logical cores)"
        self.notes.append(f"timer: {self.timer.name}; no cache flush (small cases run from cache)")

    def copy_bandwidth(self, config: MeasureConfig) -> CopyBandwidth:
        nbytes = CPU_COPY_BYTES
        src = np.ones(nbytes, dtype=np.uint8)
        dst = np.empty_like(src)
        if self.torch is not None:
            src_t, dst_t = self.torch.from_numpy(src), self.torch.from_numpy(dst)
            copy, method = (lambda: dst_t.copy_(src_t)), "torch copy_ (multi-threaded)"
        else:
            copy, method = (lambda: np.copyto(dst, src)), "numpy.copyto (one thread: a low bar)"
        result = measure(copy, self.timer, config)
        return CopyBandwidth(throughput_gbs(2 * nbytes, result.median_s),
                             f"{method}, {nbytes / 2**20:.0f} MiB, median of {result.reps}")

    def make_inputs(self, typed: TypedCase, seed: int) -> Inputs:
        shape = typed.case.shape
        if typed.dtype == "bfloat16":  # NumPy has no bfloat16
            if self.torch is None:
                mt.manual_seed(seed)
                return Inputs(mt=_mt_randn(shape, typed.dtype, "cpu"))
            generator = self.torch.Generator().manual_seed(seed)
            x = self.torch.randn(shape, dtype=self.torch.bfloat16, generator=generator)
            return Inputs(mt=mt.from_dlpack(x), torch=x)
        rng = np.random.default_rng(seed)
        array = rng.standard_normal(shape, dtype=np.float32 if typed.dtype != "float64" else np.float64)
        array = np.ascontiguousarray(array.astype(typed.dtype, copy=False))
        torch_view = self.torch.from_numpy(array) if self.torch is not None else None
        return Inputs(mt=mt.from_numpy(array), torch=torch_view, numpy=array)


def make_bench_device(kind: str) -> BenchDevice:
    return CudaBench() if kind == "cuda" else CpuBench()
