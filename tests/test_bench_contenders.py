"""Checks of the benchmark's contenders, kernel times, `× best` and backward mode that need no GPU:
fake libraries and a fake profiler stand in for Liger, QuACK and CUPTI.

    pytest tests/test_bench_contenders.py
"""

from __future__ import annotations

import contextlib
import io
import math
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import minitensor as mt

from minitensor.bench import backward_bench, cases, cli, contenders, optional, report, softmax_bench
from minitensor.bench.correctness import Check
from minitensor.bench.devices import BackwardInputs, Inputs
from minitensor.bench.kernel_profile import (DeviceActivity, ProfileError, TorchKernelProfiler,
                                             device_us, flush_activity_names, per_call_activities)
from minitensor.bench.results import CaseResult, SweepResult, Timing
from minitensor.bench.timing import MeasureConfig

from test_bench_harness import FakeGpu

CONFIG = MeasureConfig(max_reps=3, min_reps=2, warmup=1, budget_s=1.0, profile_calls=4)


def _sweep(device: FakeGpu, shapes: list[tuple[tuple[int, ...], int]], compare: tuple[str, ...],
           backward: bool = False, log: bool = False) -> SweepResult:
    """A sweep on FakeGpu in which every minitensor call, forward or backward, takes 1 fake ms."""
    forward_op, backward_op = softmax_bench.minitensor_op, backward_bench.minitensor_backward

    def forward(log: bool) -> Any:
        def run(x: Any, dim: int) -> Any:
            device.timer.now += 1e-3
            return forward_op(log)(x, dim)
        return run

    def backward_call(*args: Any) -> Any:
        device.timer.now += 1e-3
        return backward_op(*args)

    typed = cases.expand([cases.Case("g", shape, dim) for shape, dim in shapes], ("float32",))
    options = softmax_bench.SweepOptions(log=log, contender_names=compare, config=CONFIG, backward=backward)
    softmax_bench.minitensor_op, backward_bench.minitensor_backward = forward, backward_call
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            return softmax_bench.run_sweep(device, typed, options, notes=[])
    finally:
        softmax_bench.minitensor_op, backward_bench.minitensor_backward = forward_op, backward_op


# ---- × best and the per-dtype summary ------------------------------------------------------

def _case(dtype: str, own_us: float, pct: float, **others: float | str) -> CaseResult:
    typed = cases.TypedCase(cases.Case("g", (1024, 1024), -1), dtype)
    timings = {name: Timing(note=v) if isinstance(v, str) else Timing(us=v) for name, v in others.items()}
    return CaseResult(typed, Timing(us=own_us, gbs=1.0), Check("ok"), pct, timings)


def test_x_best_is_the_fastest_other_contender_over_minitensor() -> None:
    case = _case("float32", 10.0, 50.0, torch=20.0, compile=8.0, quack="QuACK: last dim only")
    assert case.fastest_contender == "compile"
    assert math.isclose(case.speedup_over_best, 0.8)  # compile's 8 µs against our 10
    assert math.isclose(case.speedup_over("torch"), 2.0)  # the per-contender ratio stays
    alone = _case("float32", 10.0, 50.0, quack="QuACK: float32, float16 and bfloat16 only")
    assert alone.fastest_contender is None and math.isnan(alone.speedup_over_best)


def test_dtype_summary_counts_wins_geomean_and_mean_copy_bandwidth() -> None:
    results = [
        _case("float32", 10.0, 40.0, torch=20.0, compile=30.0),  # × best 2.0: a win
        _case("float32", 10.0, 60.0, torch=5.0, compile=40.0),  # × best 0.5
        _case("float32", 10.0, 80.0, torch=10.0),  # × best 1.0: as fast counts as a win
        _case("float32", 10.0, 20.0, torch="torch not importable"),  # no contender: not counted
        _case("float16", 10.0, 90.0, torch=12.5),
        # over another dim: its own line (other targets, other contenders)
        CaseResult(cases.TypedCase(cases.Case("g", (1024, 1024), 0), "float32"), Timing(us=10.0, gbs=1.0),
                   Check("ok"), 70.0, {"torch": Timing(us=40.0)}),
    ]
    sweep = SweepResult("dev", "cuda", "softmax", 4000.0, "fake", ["torch", "compile"], results)
    lines = report.dtype_summary(sweep)
    assert lines[0] == ("float32, last dim: × best geomean 1.00x over 3 cases with a contender; minitensor at "
                        "least as fast as every contender in 2 of 3; mean 50% of copy bandwidth over 4 cases")
    assert lines[1].startswith("float32, other dims: × best geomean 4.00x over 1 cases") and "70%" in lines[1]
    assert lines[2].startswith("float16, last dim: × best geomean 1.25x over 1 cases") and "in 1 of 1" in lines[2]
    text = report.softmax_report(sweep)
    table_header = next(line for line in text.splitlines() if line.startswith("group"))
    assert "× best" in table_header and lines[0] in text


# ---- correctness of contenders, and what a failing one costs --------------------------------

def _was_timed(timing: Timing) -> bool:
    """Timed, in FakeGpu's clock where only minitensor's calls take time."""
    return timing.reps > 0 and not timing.note


def test_each_contender_is_checked_and_a_failure_costs_only_its_column() -> None:
    device = FakeGpu()

    def fake_prepare(name: str, device_: Any, inputs: Inputs, dim: int, log: bool) -> Any:
        if name == "liger":
            raise contenders.Unavailable("Liger: last dim only")
        if name == "quack":
            return lambda: mt.softmax(inputs.mt, dim).numpy() * 1.01  # wrong: must not be timed
        if name == "compile":
            raise RuntimeError("boom\nlong traceback")

        def numpy_half_a_millisecond() -> np.ndarray:
            device.timer.now += 0.5e-3
            return contenders.numpy_softmax(inputs.numpy, dim, log)
        return numpy_half_a_millisecond

    original = softmax_bench.contenders_mod.prepare
    softmax_bench.contenders_mod.prepare = fake_prepare
    try:
        sweep = _sweep(device, [((16, 64), -1)], ("numpy", "liger", "quack", "compile"))
    finally:
        softmax_bench.contenders_mod.prepare = original
    case = sweep.cases[0]
    assert not sweep.failures and case.minitensor.ok
    assert math.isclose(case.contenders["numpy"].us, 500.0) and math.isclose(case.speedup_over_best, 0.5)
    assert case.contenders["liger"].note == "Liger: last dim only"
    assert case.contenders["quack"].reps == 0 and "wrong result" in case.contenders["quack"].note
    assert case.contenders["compile"].note == "RuntimeError: boom"
    assert case.fastest_contender == "numpy"
    notes = "\n".join(report.contender_notes(sweep))
    assert "quack: wrong result (max error" in notes and "liger: Liger: last dim only" in notes


class FakeCudaTensor:
    """Just enough of a CUDA torch tensor for the contenders' shape and dtype checks."""

    is_cuda = True

    def __init__(self, array: np.ndarray, contiguous: bool = True) -> None:
        self.array, self.shape, self.dtype, self._contiguous = array, array.shape, str(array.dtype), contiguous

    def dim(self) -> int:
        return self.array.ndim

    def is_contiguous(self) -> bool:
        return self._contiguous

    def reshape(self, *shape: int) -> "FakeCudaTensor":
        return FakeCudaTensor(self.array.reshape(*shape))

    def view(self, shape: tuple[int, ...]) -> "FakeCudaTensor":
        return FakeCudaTensor(self.array.reshape(shape))


def _fake_torch_device() -> FakeGpu:
    device = FakeGpu()
    device.torch = types.SimpleNamespace(
        float32="float32", float16="float16", bfloat16="bfloat16", float64="float64",
        softmax=lambda x, dim: x, log_softmax=lambda x, dim: x,
        cuda=types.SimpleNamespace(synchronize=lambda: None))
    return device


def _fake_inputs(shape: tuple[int, ...], dtype: str = "float32", contiguous: bool = True) -> Inputs:
    return Inputs(mt=None, torch=FakeCudaTensor(np.zeros(shape, dtype=dtype), contiguous))


def test_liger_and_quack_say_why_they_cannot_run_a_case(monkeypatch: pytest.MonkeyPatch) -> None:
    device = _fake_torch_device()

    def reason(name: str, inputs: Inputs, dim: int = -1, log: bool = False) -> str:
        with pytest.raises(contenders.Unavailable) as why:
            contenders.prepare(name, device, inputs, dim, log)
        return str(why.value)

    for name, label in (("liger", "Liger"), ("quack", "QuACK")):
        assert reason(name, _fake_inputs((4, 8)), log=True) == f"{label} has softmax only, no log_softmax"
        assert reason(name, _fake_inputs((4, 8, 2)), dim=1) == f"{label}: last dim only"
        assert reason(name, _fake_inputs((4, 8), contiguous=False)) == f"{label}: contiguous input only"
        cpu = _fake_inputs((4, 8))
        cpu.torch.is_cuda = False
        assert reason(name, cpu) == f"{label}: CUDA only"
    assert reason("quack", _fake_inputs((4, 8), "float64")) == "QuACK: float32, float16 and bfloat16 only"

    monkeypatch.setattr(optional, "liger_softmax", lambda: None)
    missing = ModuleNotFoundError("No module named 'triton'")
    monkeypatch.setitem(optional._import_failures, contenders.LIGER_MODULE, missing)
    assert reason("liger", _fake_inputs((4, 8))) == ("liger-kernel not importable: "
                                                     "ModuleNotFoundError: No module named 'triton'")
    monkeypatch.setattr(optional, "quack_softmax", lambda: None)
    monkeypatch.setitem(optional._import_failures, contenders.QUACK_MODULE, ImportError("no cutlass"))
    assert reason("quack", _fake_inputs((4, 8))) == "quack-kernels not importable: ImportError: no cutlass"


def test_liger_and_quack_are_called_warmed_up_and_quack_sees_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, tuple[int, ...]]] = []

    def liger_apply(x: FakeCudaTensor) -> FakeCudaTensor:
        calls.append(("liger", x.shape))
        return x

    def quack_softmax(x: FakeCudaTensor) -> FakeCudaTensor:
        calls.append(("quack", x.shape))
        return x

    fake_liger = types.SimpleNamespace(LigerSoftmaxFunction=types.SimpleNamespace(apply=liger_apply))
    monkeypatch.setattr(optional, "liger_softmax", lambda: fake_liger)
    monkeypatch.setattr(optional, "quack_softmax", lambda: types.SimpleNamespace(softmax=quack_softmax))
    device = _fake_torch_device()
    inputs = _fake_inputs((2, 3, 8), "float16")
    liger = contenders.prepare("liger", device, inputs, -1, log=False)
    quack = contenders.prepare("quack", device, inputs, 2, log=False)
    assert calls == [("liger", (2, 3, 8)), ("quack", (6, 8))]  # one untimed call each, at prepare
    assert quack().shape == (2, 3, 8) and liger().shape == (2, 3, 8)  # QuACK's rows viewed back

    def failing(x: FakeCudaTensor) -> FakeCudaTensor:
        raise AssertionError("Unsupported dtype\n...")

    monkeypatch.setattr(optional, "quack_softmax", lambda: types.SimpleNamespace(softmax=failing))
    with pytest.raises(contenders.Unavailable, match="^QuACK failed: AssertionError: Unsupported dtype$"):
        contenders.prepare("quack", device, inputs, -1, log=False)


def test_cutlass_dsl_pth_is_honoured_where_python_did_not_run_it(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "dsl_packages"
    marker.mkdir()
    with_pth, without, extra = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for folder in (with_pth, without, extra):
        folder.mkdir()
    (with_pth / optional.CUTLASS_DSL_PTH).write_text(f"import sys; sys.path.insert(0, {str(marker)!r})\n")
    (extra / "other.pth").write_text(str(marker) + "\n")
    saved = list(sys.path)
    try:
        added = optional.add_cutlass_dsl_site_dirs(
            path=[str(without), str(with_pth)], environ={optional.EXTRA_SITE_DIRS_ENV: f"{extra}:"})
        assert added == [str(with_pth), str(extra)]
        assert sys.path[0] == str(marker)  # the .pth line ran
        assert str(extra) in sys.path and str(without) not in sys.path
        # A site directory Python started with has had its .pth files run already: not again.
        monkeypatch.setattr(optional, "_startup_site_dirs", lambda: {str(with_pth)})
        assert optional.add_cutlass_dsl_site_dirs(path=[str(with_pth)], environ={}) == []
    finally:
        sys.path[:] = saved


# ---- kernel times from the profiler ----------------------------------------------------------

def _activities(*spans: tuple[str, float, float]) -> list[DeviceActivity]:
    return [DeviceActivity(name, start, end) for name, start, end in spans]


def test_profile_is_split_into_calls_at_the_flushes() -> None:
    flush = frozenset({"fill", "memset"})
    events = _activities(
        ("mis-stamped", -1e11, -1e11 + 3),  # before the first flush: ignored
        ("fill", 0, 5), ("k", 6, 7),  # lead call
        ("fill", 10, 14), ("memset", 14, 15), ("k1", 16, 18), ("k2", 19, 20),  # a two-part flush
        ("fill", 30, 35), ("k1", 36, 41), ("k2", 42, 43),
        ("fill", 50, 55), ("late", 1e11, 1e11 + 9))  # after the last flush: ignored
    calls = per_call_activities(reversed(events), flush, 2)
    assert [[a.name for a in call] for call in calls] == [["k1", "k2"]] * 2
    assert [device_us(call) for call in calls] == [3.0, 6.0]
    with pytest.raises(ProfileError, match="expected at least 4"):
        per_call_activities(events, flush, 4)
    # A call with no device activity of its own (here the second) cannot be told from the flush.
    with pytest.raises(ProfileError, match="split into 1 calls, expected at least 2"):
        per_call_activities(_activities(("fill", 0, 1), ("k", 2, 3), ("fill", 4, 5), ("fill", 9, 10)),
                            frozenset({"fill"}), 2)
    probe = _activities(*[("fill", i, i + 1) for i in range(0, 20, 2)], ("stray", 30, 31))
    assert flush_activity_names(probe, 11) == frozenset({"fill"})  # 10 of 11 seen: one dropped
    with pytest.raises(ProfileError):
        flush_activity_names([], 11)


class FakeProfiledGpu:
    """A device timeline that a fake torch.profiler records, with CUPTI's bug (pytorch issue
    192021): in the k-th session the first k device records are dropped or mis-stamped."""

    def __init__(self, broken: bool = False) -> None:
        self.now, self.timeline, self.sessions, self.broken = 0.0, [], 0, broken

    def _event(self, name: str, device: str, us: float, annotation: bool = False) -> Any:
        return types.SimpleNamespace(name=name, device_type=f"DeviceType.{device}", is_user_annotation=annotation,
                                     time_range=types.SimpleNamespace(start=self.now, end=self.now + us))

    def run(self, name: str, us: float, annotation: bool = False) -> None:
        self.timeline.append(self._event(name, "CUDA", us, annotation))
        if annotation:  # a span over the kernels that follow, not a kernel
            return
        self.timeline.append(self._event("cudaLaunchKernel", "CPU", 50))  # host side: not counted
        self.now += us + 1

    def torch(self) -> Any:
        gpu = self

        class Profile:
            def __init__(self, activities: list[str]) -> None:
                assert activities == ["CUDA"]
                if gpu.broken:
                    raise RuntimeError("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES")

            def __enter__(self) -> "Profile":
                gpu.sessions += 1
                self.start = len(gpu.timeline)
                return self

            def __exit__(self, *exc: object) -> None:
                self.recorded = gpu.timeline[self.start:]
                device = [e for e in self.recorded if e.device_type.endswith("CUDA")]
                for i, event in enumerate(device[: gpu.sessions - 1]):
                    if i % 2:
                        self.recorded.remove(event)  # dropped as out of range
                    else:  # stamped in another clock domain
                        event.time_range = types.SimpleNamespace(start=event.time_range.start - 1e11,
                                                                 end=event.time_range.end - 1e11)

            def events(self) -> list[Any]:
                return self.recorded

        return types.SimpleNamespace(profiler=types.SimpleNamespace(
            profile=Profile, ProfilerActivity=types.SimpleNamespace(CUDA="CUDA")),
            cuda=types.SimpleNamespace(synchronize=lambda: None))


def test_torch_kernel_profiler_sums_each_calls_kernels_and_skips_the_flush() -> None:
    gpu = FakeProfiledGpu()
    profiler = TorchKernelProfiler(gpu.torch(), lambda: gpu.run("fill", 40.0), lambda: gpu.run("fill", 1.0))

    def call() -> None:
        gpu.run("## Call CompiledFxGraph ##", 5.0, annotation=True)
        gpu.run("softmax_part1", 3.0)
        gpu.run("softmax_part2", 1.0)

    assert profiler.kernel_us(call, 5) == 4.0
    assert gpu.sessions == 2  # the flush's kernel names are learnt once, in a session of their own
    # Which kernels each call ran (the tuning tool's --names), with their times.
    assert [[(a.name, a.duration_us) for a in c] for c in profiler.calls(call, 2)] == \
        [[("softmax_part1", 3.0), ("softmax_part2", 1.0)]] * 2
    # Dozens of sessions later each loses its first few dozen records: the head launches absorb them.
    assert [profiler.kernel_us(call, 5) for _ in range(40)] == [4.0] * 40

    without_head = TorchKernelProfiler(gpu.torch(), lambda: gpu.run("fill", 40.0))
    with pytest.raises(ProfileError):  # what the head launches are for
        without_head.kernel_us(call, 5)

    broken = FakeProfiledGpu(broken=True)
    profiler = TorchKernelProfiler(broken.torch(), lambda: None)
    for _ in range(2):  # the second attempt fails at once, with the first one's reason
        with pytest.raises(ProfileError, match="CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"):
            profiler.kernel_us(call, 5)


def test_kernel_times_reach_the_csv_and_a_profiler_failure_costs_only_that_column(tmp_path: Path) -> None:
    device = FakeGpu()
    device.kernel_time_us = lambda fn, calls: 7.5  # type: ignore[method-assign]
    sweep = _sweep(device, [((16, 64), -1)], ("numpy", "torch"))
    path = tmp_path / "softmax.csv"
    report.write_csv(path, *report.softmax_csv_rows(sweep))
    header = path.read_text().splitlines()[0].split(",")
    for column in ("minitensor_us", "minitensor_kernel_us", "numpy_us", "numpy_kernel_us", "x_best",
                   "best_contender", "speedup_vs_numpy", "torch_note"):
        assert column in header
    back = report.read_softmax_csv([path])
    assert back.contender_names == ["numpy", "torch"]  # not "numpy_kernel" nor "minitensor_kernel"
    assert back.cases[0].minitensor.kernel_us == 7.5 and back.cases[0].contenders["numpy"].kernel_us == 7.5
    assert "(7.5)" in report.softmax_table(sweep)

    def broken(fn: Any, calls: int) -> float:
        raise ProfileError("profile split into 1 calls, expected at least 4")

    device = FakeGpu()
    device.kernel_time_us = broken  # type: ignore[method-assign]
    sweep = _sweep(device, [((16, 64), -1)], ("numpy",))
    case = sweep.cases[0]
    assert case.minitensor.ok and _was_timed(case.contenders["numpy"]) and not sweep.failures
    assert math.isnan(case.minitensor.kernel_us) and "expected at least 4" in case.minitensor.kernel_note
    assert any(n.startswith("minitensor kernel time: ProfileError") for n in report.contender_notes(sweep))


# ---- backward ----------------------------------------------------------------------------

def test_backward_flag_parses_and_counts_three_tensors() -> None:
    args = cli.build_parser().parse_args(["softmax", "--backward", "--log", "--profile-calls", "0", "--quick"])
    assert args.backward and args.log and cli.measure_config(args).profile_calls == 0
    quick = cli.build_parser().parse_args(["softmax", "--quick"])
    assert not quick.backward and cli.measure_config(quick).profile_calls == 10
    assert cli.measure_config(cli.build_parser().parse_args(["softmax"])).profile_calls == 20

    sweep = _sweep(FakeGpu(), [((64, 256), -1), ((8, 16, 4), 1)], ("numpy", "torch"), backward=True)
    assert sweep.op_name == "softmax_backward" and not sweep.failures
    first = sweep.cases[0]
    assert first.typed.traffic_bytes == 3 * 64 * 256 * 4 and first.minitensor.us == 1000.0
    assert math.isclose(first.minitensor.gbs, 3 * 64 * 256 * 4 / 1e-3 / 1e9)
    assert _was_timed(first.contenders["numpy"]) and first.check.status == "ok"
    assert "GB/s = 3 x numel" in report.softmax_report(sweep)
    log_sweep = _sweep(FakeGpu(), [((8, 16, 4), 1)], ("numpy",), backward=True, log=True)
    assert log_sweep.op_name == "log_softmax_backward" and not log_sweep.failures
    assert _was_timed(log_sweep.cases[0].contenders["numpy"])


def test_backward_check_catches_a_wrong_gradient() -> None:
    original = backward_bench.minitensor_backward
    backward_bench.minitensor_backward = lambda y, dy, dim, log: dy  # dx = dy: wrong
    try:
        sweep = _sweep(FakeGpu(), [((32, 100), -1)], (), backward=True)
    finally:
        backward_bench.minitensor_backward = original
    assert sweep.cases[0].check.status == "FAIL"


def test_backward_contenders_call_torchs_backward_kernels() -> None:
    calls: list[tuple[Any, ...]] = []
    aten = types.SimpleNamespace(_softmax_backward_data=lambda *a: calls.append(("softmax", *a)),
                                 _log_softmax_backward_data=lambda *a: calls.append(("log", *a)))
    device = _fake_torch_device()
    device.torch.ops = types.SimpleNamespace(aten=aten)
    y, dy = _fake_inputs((4, 8)), _fake_inputs((4, 8))
    inputs = BackwardInputs(y=y, dy=dy)
    contenders.prepare_backward("torch", device, inputs, 1, log=False)()
    contenders.prepare_backward("torch", device, inputs, -1, log=True)()
    assert calls == [("softmax", dy.torch, y.torch, 1, "float32"), ("log", dy.torch, y.torch, -1, "float32")]
    with pytest.raises(contenders.Unavailable, match="autograd"):
        contenders.prepare_backward("liger", device, inputs, -1, log=False)
    with pytest.raises(contenders.Unavailable, match="no log_softmax"):
        contenders.prepare_backward("quack", device, inputs, -1, log=True)
