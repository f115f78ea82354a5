"""Checks of the benchmark's own logic that need no GPU: the timing loop under a fake clock,
the CUDA-event timer against a fake torch, case parsing, the report, the sweep's failure path.

    pytest tests/test_bench_harness.py
"""

from __future__ import annotations

import contextlib
import io
import math
import tempfile
import types
from pathlib import Path
from typing import Any

import numpy as np

import minitensor as mt

from minitensor.bench import cases, cli, ladder, report, softmax_bench
from minitensor.bench.clock import ClockSampler, parse_sample
from minitensor.bench.correctness import Check, check_with_numpy, verdict
from minitensor.bench.devices import BenchDevice, CopyBandwidth, CudaBench, Inputs
from minitensor.bench.results import CaseResult, SweepResult, Timing
from minitensor.bench.timing import MeasureConfig, TorchEventTimer, measure, repetitions_within_budget, throughput_gbs


class FakeClock:
    """Device time that moves only when fake work runs, read through Timer's interface."""

    name = "fake"

    def __init__(self) -> None:
        self.now = 0.0
        self.synchronized = 0

    def mark(self) -> float:
        return self.now

    def synchronize(self) -> None:
        self.synchronized += 1

    def elapsed_s(self, start: float, end: float) -> float:
        return end - start


def test_measure_excludes_flush_and_takes_median() -> None:
    clock = FakeClock()
    durations = iter([1.0] * 3 + [0.002] + [0.001, 0.003, 0.002, 0.005, 0.001] + [9.0] * 100)
    events: list[str] = []

    def work() -> None:
        clock.now += next(durations)
        events.append("work")

    def flush() -> None:
        clock.now += 0.5  # a slow flush must not leak into the measured times
        events.append("flush")

    config = MeasureConfig(max_reps=5, min_reps=2, warmup=3, budget_s=100.0)
    result = measure(work, clock, config, flush=flush)
    assert result.reps == 5
    assert np.allclose(result.times_s, [0.001, 0.003, 0.002, 0.005, 0.001])
    assert math.isclose(result.median_s, 0.002)
    # Warm-up runs are not flushed; the probe and every timed run are.
    assert events[:3] == ["work"] * 3
    assert events[3:] == ["flush", "work"] * 6


def test_repetition_count_follows_budget() -> None:
    config = MeasureConfig(max_reps=30, min_reps=3, budget_s=1.0)
    assert repetitions_within_budget(1e-5, config) == 30
    assert repetitions_within_budget(0.1, config) == 10
    assert repetitions_within_budget(5.0, config) == 3
    assert repetitions_within_budget(0.0, config) == 30
    assert repetitions_within_budget(float("nan"), config) == 30


def test_torch_event_timer_reads_milliseconds_as_seconds() -> None:
    stamps = iter([0.0, 2.5])

    class FakeEvent:
        def __init__(self, enable_timing: bool) -> None:
            assert enable_timing
            self.t = 0.0

        def record(self) -> None:
            self.t = next(stamps)

        def elapsed_time(self, other: "FakeEvent") -> float:
            return other.t - self.t  # torch reports milliseconds

    fake_torch = types.SimpleNamespace(cuda=types.SimpleNamespace(Event=FakeEvent, synchronize=lambda: None))
    timer = TorchEventTimer(fake_torch)
    start, end = timer.mark(), timer.mark()
    timer.synchronize()
    assert timer.elapsed_s(start, end) == 2.5e-3


def test_throughput_counts_read_plus_write() -> None:
    typed = cases.TypedCase(cases.Case("g", (1024, 1024), -1), "float16")
    assert typed.traffic_bytes == 2 * 1024 * 1024 * 2
    assert throughput_gbs(typed.traffic_bytes, 1e-3) == typed.traffic_bytes / 1e6


def test_case_parsing_and_cpu_skip() -> None:
    assert cases.parse_shape("256,1000") == (256, 1000)
    assert cases.parse_shape("8x4096x4096") == (8, 4096, 4096)
    assert cases.parse_dtypes("fp16,float32,bf16") == ("float16", "float32", "bfloat16")
    packaged = cases.load_cases()
    assert len(packaged) == 31 and packaged[-1] == cases.Case("inner-dim", (32, 4, 256, 256), 1)
    typed = cases.expand(packaged, cases.DEFAULT_CPU_DTYPES)
    kept, skipped = cases.split_by_size(typed, cases.CPU_MAX_TENSOR_BYTES)
    assert all(t.tensor_bytes <= 64 * 2**20 for t in kept)
    assert any(t.case.shape == (2048, 32768) for t in skipped)
    assert len(kept) + len(skipped) == 62


def test_packaged_sweep_has_the_vocab_rows_and_short_axis_inner_cases() -> None:
    packaged = cases.load_cases()
    vocab = [c for c in packaged if c.group == "vocab"]
    assert [c.shape for c in vocab] == [(4096, 32000), (2048, 151936), (8192, 50304)]
    assert all(c.dim == -1 for c in vocab)
    short_axis = [c for c in packaged if c.group == "inner-dim" and c.dim == 1 and c.shape[1] <= 150]
    assert {c.shape for c in short_axis} >= {(16, 21, 256, 256), (8, 150, 128, 128), (32, 4, 256, 256)}
    assert len(set(packaged)) == len(packaged)  # no case twice


def test_verdicts() -> None:
    assert verdict(1e-6, 1e-5).status == "ok"
    assert verdict(1e-4, 1e-5).status == "FAIL"
    assert verdict(float("nan"), 1e-5).status == "FAIL"  # a NaN in the output must fail
    x = np.random.default_rng(0).standard_normal((4, 7)).astype(np.float32)
    good = mt.softmax(mt.from_numpy(x), 1).numpy()
    assert check_with_numpy(x, good, 1, "float32", log=False).status == "ok"
    assert check_with_numpy(x, good + 1e-3, 1, "float32", log=False).status == "FAIL"
    good_log = mt.log_softmax(mt.from_numpy(x), 1).numpy()
    assert check_with_numpy(x, good_log, 1, "float32", log=True).status == "ok"


class FakeGpu(BenchDevice):
    """A 'CUDA' device whose clock is fake and whose tensors live on the CPU."""

    kind = "cuda"
    name = "FakeGPU"

    def __init__(self) -> None:
        self.timer = FakeClock()
        self.notes = ["timer: fake"]
        self.flushes = 0

    @property
    def flush_fn(self) -> Any:
        def flush() -> None:
            self.flushes += 1
        return flush

    def copy_bandwidth(self, config: MeasureConfig) -> CopyBandwidth:
        return CopyBandwidth(1000.0, "fake")

    def make_inputs(self, typed: cases.TypedCase, seed: int) -> Inputs:
        x = np.random.default_rng(seed).standard_normal(typed.case.shape).astype(typed.dtype)
        return Inputs(mt=mt.from_numpy(x), numpy=x)


def _fake_sweep(op: Any, compare: tuple[str, ...], clock: Any = None,
                warm_up: bool = False) -> SweepResult:
    device = FakeGpu()
    device.clock = clock
    device.warm_up_first_case = warm_up
    original = softmax_bench.minitensor_op

    def timed_op(log: bool) -> Any:
        def run(x: Any, dim: int) -> Any:
            device.timer.now += 1e-3  # every call "takes" 1 ms of device time
            return op(x, dim)
        return run

    softmax_bench.minitensor_op = timed_op
    try:
        typed = cases.expand([cases.Case("g", (64, 256), -1), cases.Case("h", (8, 16, 4), 1)], ("float32",))
        config = MeasureConfig(max_reps=4, min_reps=2, warmup=1, budget_s=1.0)
        options = softmax_bench.SweepOptions(log=False, contender_names=compare, config=config)
        with contextlib.redirect_stderr(io.StringIO()):
            return softmax_bench.run_sweep(device, typed, options, notes=[])
    finally:
        softmax_bench.minitensor_op = original


def test_fake_sweep_passes_and_reports_unavailable_contenders() -> None:
    sweep = _fake_sweep(mt.softmax, ("numpy", "torch", "compile"))
    assert not sweep.failures
    first = sweep.cases[0]
    assert first.minitensor.us == 1000.0  # median of the fake 1 ms runs
    assert math.isclose(first.minitensor.gbs, 2 * 64 * 256 * 4 / 1e-3 / 1e9)
    assert first.contenders["numpy"].reps == 4 and not first.contenders["numpy"].note  # ran (in 0 fake time)
    # FakeGpu has no torch: those columns are n/a with a reason, and the sweep went on.
    assert not first.contenders["compile"].ok and "torch" in first.contenders["compile"].note
    text = report.softmax_report(sweep)
    assert "speed-up over numpy" in text and "2 of 2 cases pass" in text
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "softmax.csv"
        report.write_csv(path, *report.softmax_csv_rows(sweep))
        header = path.read_text().splitlines()[0]
        assert "speedup_vs_compile" in header and "compile_note" in header
        back = report.read_softmax_csv([path, path])  # two files: their cases in order
    assert back.contender_names == ["numpy", "torch", "compile"] and len(back.cases) == 4
    assert back.copy_gbs == sweep.copy_gbs and back.device_name == sweep.device_name
    for again, case in zip(back.cases[2:], sweep.cases):
        assert again.typed == case.typed and again.minitensor.us == case.minitensor.us
        assert again.check.status == case.check.status and again.pct_of_copy == case.pct_of_copy
        assert again.contenders["numpy"].us == case.contenders["numpy"].us
        assert not again.contenders["compile"].ok and again.contenders["compile"].note == case.contenders["compile"].note


def test_a_gpu_sweep_can_run_its_first_case_once_untimed_first() -> None:
    calls = {"n": 0}

    def counted(x: Any, dim: int) -> Any:
        calls["n"] += 1
        return mt.softmax(x, dim)

    plain = _fake_sweep(counted, ("numpy",))
    plain_calls, calls["n"] = calls["n"], 0
    warm = _fake_sweep(counted, ("numpy",), warm_up=True)
    # One more run of the first case (of two), reported nowhere but in a note.
    assert plain_calls < calls["n"] < 2 * plain_calls
    assert len(warm.cases) == len(plain.cases) == 2
    for again, case in zip(warm.cases, plain.cases):
        assert again.typed == case.typed and math.isclose(again.minitensor.us, case.minitensor.us)
    assert any("untimed" in note for note in warm.notes)
    assert not any("untimed" in note for note in plain.notes)
    assert CudaBench.warm_up_first_case and not BenchDevice.warm_up_first_case  # the GPU sweep's


def test_clock_sampler_averages_the_clock_in_force_over_the_windows() -> None:
    sampler = ClockSampler()
    for at, line in [(1.0, "1980, 1980"), (2.0, "1695, 1980\n"), (3.0, "1980, 1980"), (4.0, "[N/A], 1980")]:
        sampler.add(line, at=at)
    assert parse_sample("[N/A], 1980", 4.0) is None and parse_sample("1980", 0.0) is None
    assert sampler.max_mhz == 1980.0
    assert sampler.mean_mhz([(1.1, 1.9)]) == 1980.0  # the sample at 1.0 still held
    assert sampler.mean_mhz([(2.5, 2.9)]) == 1695.0  # the dip at 2.0 still held at 2.5
    assert sampler.mean_mhz([(1.5, 2.0)]) == (1980.0 + 1695.0) / 2  # a dip arriving as it ends
    assert sampler.mean_mhz([(1.5, 2.0), (1.2, 1.3)]) == (1980.0 + 1695.0) / 2  # each sample once
    assert sampler.mean_mhz([(3.1, 3.5), (1.2, 1.3)]) == 1980.0
    assert math.isnan(sampler.mean_mhz([(0.1, 0.5)]))  # before the first sample
    assert math.isnan(ClockSampler().max_mhz)


def test_nvidia_smi_is_asked_for_torchs_gpu_by_uuid(monkeypatch: Any) -> None:
    """Under CUDA_VISIBLE_DEVICES nvidia-smi's indices are not torch's: the UUID names the GPU; a
    lone GPU is index 0 (torch's can be no other); several with no UUID to match, or no
    nvidia-smi, give no sampler."""
    from minitensor.bench import clock

    listed = {"out": "GPU-aaaa\nGPU-bbbb\n"}
    monkeypatch.setattr(clock.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(clock.subprocess, "run",
                        lambda *a, **k: types.SimpleNamespace(stdout=listed["out"]))
    props = types.SimpleNamespace(uuid="bbbb")
    torch = types.SimpleNamespace(cuda=types.SimpleNamespace(current_device=lambda: 1,
                                                             get_device_properties=lambda i: props))
    assert clock.nvidia_smi_id(torch) == "GPU-bbbb"
    props.uuid = "cccc"
    assert clock.nvidia_smi_id(torch) is None and clock.nvidia_smi_id(None) is None
    listed["out"] = "GPU-aaaa\n"
    assert clock.nvidia_smi_id(torch) == "0" and clock.nvidia_smi_id(None) == "0"
    monkeypatch.setattr(clock.shutil, "which", lambda name: None)
    assert clock.nvidia_smi_id(torch) is None and clock.start_clock_sampler(torch) is None


class FakeClockSampler:
    """The first implementation timed in each case saw the clock dip to 1,700 MHz, the rest ran
    at the top clock."""

    max_mhz = 1980.0

    def __init__(self) -> None:
        self.readings = 0

    def wait_past(self, moment: float) -> None:
        pass

    def mean_mhz(self, windows: list[tuple[float, float]]) -> float:
        assert windows and all(start <= end for start, end in windows)
        self.readings += 1
        return 1700.0 if self.readings % 2 == 1 else 1980.0


def test_each_timing_carries_its_clock_to_the_report_and_the_csv() -> None:
    sweep = _fake_sweep(mt.softmax, ("numpy",), clock=FakeClockSampler())
    assert [c.minitensor.clock_mhz for c in sweep.cases] == [1700.0, 1700.0]
    assert [c.contenders["numpy"].clock_mhz for c in sweep.cases] == [1980.0, 1980.0]
    text = report.softmax_report(sweep)
    assert ("SM clock held under 95% of its 1,980 MHz (mean) while minitensor was timed: 2 of 2 cases "
            "(64x256 float32 1,700, 8x16x4 float32 1,700 MHz)") in text
    assert "while numpy was timed: 0 of 2 cases" in text
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "softmax.csv"
        report.write_csv(path, *report.softmax_csv_rows(sweep))
        back = report.read_softmax_csv([path])
    assert back.clock_max_mhz == 1980.0 and back.contender_names == ["numpy"]
    assert back.cases[0].minitensor.clock_mhz == 1700.0 and back.cases[1].contenders["numpy"].clock_mhz == 1980.0
    # Without a sampler: no clock, no clock lines.
    plain = _fake_sweep(mt.softmax, ("numpy",))
    assert math.isnan(plain.cases[0].minitensor.clock_mhz) and "SM clock" not in report.softmax_report(plain)


def test_rounds_interleave_contenders_and_keep_each_ones_best_round() -> None:
    """On a host whose speed drifts (timing_rounds > 1), minitensor and each contender are timed in
    turn, round after round, and each keeps its fastest round: a slow spell in one round does not
    stick to whoever happened to run then."""
    device = FakeGpu()
    device.timing_rounds = 3
    order: list[str] = []
    calls = {"n": 0}

    def op(x: Any, dim: int) -> Any:
        calls["n"] += 1
        order.append("mt")
        # 1 check call, then 6 calls a round (warm-up, probe, 4 timed): only round 2 runs fast.
        device.timer.now += 1e-3 if 8 <= calls["n"] <= 13 else 3e-3
        return mt.softmax(x, dim)

    def numpy_contender(name: str, device: Any, inputs: Inputs, dim: int, log: bool) -> Any:
        def run() -> Any:
            order.append(name)
            return mt.softmax(inputs.mt, dim).numpy()
        return run

    original_op, original_prepare = softmax_bench.minitensor_op, softmax_bench.contenders_mod.prepare
    softmax_bench.minitensor_op = lambda log: op
    softmax_bench.contenders_mod.prepare = numpy_contender
    try:
        typed = cases.expand([cases.Case("g", (16, 64), -1)], ("float32",))
        config = MeasureConfig(max_reps=4, min_reps=4, warmup=1, budget_s=1.0)
        options = softmax_bench.SweepOptions(log=False, contender_names=("numpy",), config=config)
        sweep = softmax_bench.run_sweep(device, typed, options, notes=[])
    finally:
        softmax_bench.minitensor_op, softmax_bench.contenders_mod.prepare = original_op, original_prepare
    case = sweep.cases[0]
    assert math.isclose(case.minitensor.us, 1000.0)  # neither the first nor the last round's 3 ms
    assert case.contenders["numpy"].reps == 4
    runs = [name for i, name in enumerate(order) if i == 0 or order[i - 1] != name]
    # Each is checked once (minitensor, then the contender), then three rounds in turn.
    assert runs == ["mt", "numpy"] * 4


def test_fake_sweep_records_wrong_results_and_errors() -> None:
    sweep = _fake_sweep(lambda x, dim: mt.from_numpy(mt.softmax(x, dim).numpy() * 1.01), ())
    assert len(sweep.failures) == 2 and sweep.cases[0].check.status == "FAIL"

    def broken(x: Any, dim: int) -> Any:
        raise RuntimeError("kernel exploded")

    sweep = _fake_sweep(broken, ())
    assert all(c.check.status == "error" and "exploded" in c.check.detail for c in sweep.failures)


def test_summary_geomean_and_bandwidth_floor() -> None:
    big = cases.TypedCase(cases.Case("a", (4096, 8192), -1), "float32")  # 256 MiB of traffic
    small = cases.TypedCase(cases.Case("b", (32, 32), -1), "float32")
    results = [
        CaseResult(big, Timing(us=100.0, gbs=2000.0), Check("ok"), 60.0, {"torch": Timing(us=200.0)}),
        CaseResult(small, Timing(us=10.0, gbs=1.0), Check("ok"), 0.1, {"torch": Timing(us=5.0)}),
    ]
    sweep = SweepResult("dev", "cuda", "softmax", 3333.0, "fake", ["torch"], results)
    assert math.isclose(report.geometric_mean([2.0, 0.5]), 1.0)
    assert "overall 1.00x" in report.speedup_summary(sweep)[0]
    assert "60%" in report.bandwidth_summary(sweep)  # the small case is too small to count


def test_kernel_time_summary_judges_on_kernel_times() -> None:
    big = cases.TypedCase(cases.Case("a", (4096, 8192), -1), "float16")  # 128 MiB of traffic
    small = cases.TypedCase(cases.Case("b", (32, 32), -1), "float16")
    results = [
        # slower than torch by median time (host time), faster by kernel time
        CaseResult(big, Timing(us=100.0, kernel_us=80.0), Check("ok"), 72.0,
                   {"torch": Timing(us=90.0, kernel_us=88.0), "quack": Timing(us=95.0, kernel_us=84.0)}),
        CaseResult(small, Timing(us=10.0, kernel_us=4.0), Check("ok"), 1.0, {"torch": Timing(us=5.0, kernel_us=5.0)}),
    ]
    sweep = SweepResult("dev", "cuda", "softmax", 3333.0, "fake", ["torch", "quack"], results)
    assert math.isclose(results[0].kernel_speedup_over_best, 84.0 / 80.0)
    assert math.isclose(results[0].kernel_pct_of_copy, 90.0)
    lines = report.dtype_summary(sweep)
    assert "at least as fast as every contender in 0 of 2" in lines[0]  # median times
    kernel_line = next(line for line in lines if "over kernel times" in line)
    assert "at least as fast as every contender in 2 of 2 (1 of 1 moving >= 8 MiB)" in kernel_line
    assert "min 90% over the 1 cases moving >= 64 MiB (1 at >= 90%)" in kernel_line
    # without kernel times there is no such line
    plain = [CaseResult(big, Timing(us=100.0), Check("ok"), 72.0, {"torch": Timing(us=90.0)})]
    sweep = SweepResult("dev", "cuda", "softmax", 3333.0, "fake", ["torch"], plain)
    assert not any("kernel" in line for line in report.dtype_summary(sweep))


def test_call_overhead_summary_is_the_median_gap_between_call_and_kernel() -> None:
    big = cases.TypedCase(cases.Case("a", (4096, 8192), -1), "float32")
    small = cases.TypedCase(cases.Case("b", (32, 32), -1), "float32")
    mid = cases.TypedCase(cases.Case("c", (1024, 1024), -1), "float32")
    results = [
        CaseResult(big, Timing(us=103.0, kernel_us=100.0), Check("ok"), 90.0,
                   {"torch": Timing(us=102.0, kernel_us=100.0), "liger": Timing(us=80.0)}),
        CaseResult(small, Timing(us=5.5, kernel_us=2.0), Check("ok"), 1.0,
                   {"torch": Timing(us=50.0, kernel_us=2.0)}),  # one host stall: the median ignores it
        CaseResult(mid, Timing(us=6.0, kernel_us=4.0), Check("ok"), 30.0, {"torch": Timing(us=6.0, kernel_us=4.0)}),
    ]
    sweep = SweepResult("dev", "cuda", "softmax", 3333.0, "fake", ["torch", "liger"], results)
    line = report.call_overhead_summary(sweep)
    assert line == "per call beyond the kernels, median: minitensor 3.00 µs (3 cases), torch 2.00 µs (3 cases)"
    assert line in report.softmax_report(sweep)  # liger, without kernel times, is left out
    untimed = [CaseResult(big, Timing(us=100.0), Check("ok"), 72.0, {"torch": Timing(us=90.0)})]
    assert report.call_overhead_summary(SweepResult("dev", "cuda", "softmax", 3333.0, "fake", ["torch"],
                                                    untimed)) == ""


def test_cli_help_and_ladder_gate() -> None:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        try:
            cli.main(["--help"])
        except SystemExit as stop:
            assert stop.code == 0
    assert "softmax" in out.getvalue() and "ladder" in out.getvalue()
    if not ladder.ladder_available():
        with contextlib.redirect_stdout(io.StringIO()) as out:
            assert cli.main(["ladder"]) == ladder.NOT_BUILT_EXIT_CODE
        assert "the kernel ladder is not built yet" in out.getvalue()


def test_compile_failure_is_recorded_not_raised() -> None:
    from minitensor.bench import contenders

    def failing_compile(fn: Any, dynamic: bool) -> Any:
        raise RuntimeError("inductor: no C compiler\nlong traceback...")

    fake_torch = types.SimpleNamespace(softmax=lambda x, dim: x, log_softmax=lambda x, dim: x,
                                       compile=failing_compile,
                                       _dynamo=types.SimpleNamespace(reset=lambda: None))
    device = FakeGpu()
    device.torch = fake_torch
    inputs = Inputs(mt=None, torch=types.SimpleNamespace(is_cuda=False))
    try:
        contenders.prepare("compile", device, inputs, -1, log=False)
    except contenders.Unavailable as why:
        assert "no C compiler" in str(why) and "traceback" not in str(why)
    else:
        raise AssertionError("a failed compile must raise Unavailable")


def test_ladder_with_fake_impls() -> None:
    calls: list[str] = []
    real_softmax = mt.softmax

    def softmax_with_impl(x: Any, dim: int, impl: str | None = None) -> Any:
        calls.append(impl or "")
        return real_softmax(x, dim)

    had_impls = hasattr(mt, "softmax_impls")
    saved_impls = getattr(mt, "softmax_impls", None)
    mt.softmax_impls = lambda device: {"naive": "three passes", "warp": "a warp per row"}
    mt.softmax = softmax_with_impl
    try:
        with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()) as out, \
                contextlib.redirect_stderr(io.StringIO()):
            config = MeasureConfig(max_reps=2, min_reps=1, warmup=0, budget_s=1.0)
            code = ladder.run_ladder(config, Path(tmp), widths=(512, 1024), device=FakeGpu())
            written = (Path(tmp) / "ladder.csv").read_text().splitlines()
        assert code == 0, out.getvalue()
        assert set(calls) == {"naive", "warp"}
        assert len(written) == 1 + 2 * 2  # header + widths x impls
        assert "warp GB/s" in out.getvalue()
    finally:
        mt.softmax = real_softmax
        if had_impls:
            mt.softmax_impls = saved_impls
        else:
            del mt.softmax_impls
