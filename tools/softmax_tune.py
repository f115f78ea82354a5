"""Quick A/B timing of the CUDA softmax tiers on a GPU machine, for tuning (not the benchmark).

    MT_SOFTMAX_STAGES=3 python tools/softmax_tune.py 16384x4096 524288x128 --dtypes f16,f32
    python tools/softmax_tune.py 64x128x56x56:1 4096x4096:0 --compile   # over another dim
    bash scripts/gpu_ab.sh run --kernel 1024x8192   # two builds in one call (see that script)

Times minitensor's softmax (forward, or --backward) with CUDA events, L2 flushed between runs,
median of --reps, and prints % of the device-to-device copy bandwidth measured in the same
process (--kernel: the kernels' device time from the CUDA profiler instead; --names: and the
kernels each contender's call ran, so that an A/B knows which kernel each side took), beside
torch (not with --no-torch), QuACK with --quack and Liger with --liger when importable,
torch.compile with --compile (with --backward: of torch's backward op, as the benchmark). A
shape's `:d` suffix picks the dim (default the last). Every result is checked against torch in
float64 first. The tiers read their tuning overrides (MT_SOFTMAX_*) once per process: run one
process per setting.

Some rows of a few MiB ([1024, 2048-4096]) read 20-25% slower here than in the sweep, whose
regime the benchmark reproduces with torch.compile and Liger beside us (docs/DESIGN.md, "Time a
small case the way the sweep times it"): A/B such rows there, one process a setting, e.g.
    python -m minitensor.bench softmax --cases FILE.json --compare torch,compile,liger
"""

import argparse
import itertools
import statistics

import torch

import minitensor as mt

DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16}
MT_DTYPES = {torch.float32: mt.float32, torch.float64: mt.float64, torch.float16: mt.float16,
             torch.bfloat16: mt.bfloat16}


def time_us(fn, reps, flush):
    times = []
    for _ in range(reps + 3):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times[3:])


def kernel_profiler(flush):
    """The benchmark's own device-time measure (minitensor.bench.kernel_profile): the median of
    per-call kernel times, with CUPTI's mis-stamped first records and the flushes left out (a
    plain mean over a profile counted those, and read 10-20% above the benchmark)."""
    from minitensor.bench.kernel_profile import TorchKernelProfiler

    head = torch.zeros(4096, dtype=torch.int32, device="cuda")
    return TorchKernelProfiler(torch, flush.zero_, head.zero_)


def short_kernel_name(name):
    """A kernel as the profiler names it, without its return type, namespaces and parameter list:
    its template arguments say which tier and kernel ran (see the kernel's template)."""
    name = name.removeprefix("void ").replace("mt::", "")
    depth = 0
    for i, c in enumerate(name):
        depth += (c == "<") - (c == ">")
        if c == "(" and depth == 0 and i > 0 and name[i - 1] != " ":  # not "Memset (Device)"
            return name[:i]
    return name


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("shapes", nargs="+", help="e.g. 16384x4096 (the last dim), 4096x4096:0")
    parser.add_argument("--dtypes", default="f32,f16")
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--backward", action="store_true")
    parser.add_argument("--log", action="store_true", help="log_softmax (with --backward: its backward)")
    parser.add_argument("--quack", action="store_true")
    parser.add_argument("--liger", action="store_true")
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--copy", action="store_true", help="time a device copy of the same "
                        "tensor too: what a kernel moving these bytes can reach at this size")
    parser.add_argument("--no-torch", action="store_true", help="time only minitensor (and any "
                        "contender asked for): half the device time of an A/B run")
    parser.add_argument("--tag", default="")
    parser.add_argument("--kernel", action="store_true", help="device kernel time, not events")
    parser.add_argument("--names", action="store_true", help="with --kernel: print the kernels "
                        "each contender's call ran (from one more profiled call)")
    parser.add_argument("--pad-mib", default="", help="e.g. 0,1,3: each case once per value, that "
                        "many MiB allocated before its tensors (where they land in memory; the "
                        "line gives x's offset in its 2 MiB page)")
    args = parser.parse_args()
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    copy_gbs = 2 * src.numel() / time_us(lambda: dst.copy_(src), 20, flush) / 1e3
    profiler = kernel_profiler(flush) if args.kernel else None
    quack = None
    if args.quack:
        try:
            from quack.softmax import softmax_bwd, softmax_fwd  # the package's `softmax` shadows the module
            quack = (softmax_fwd, softmax_bwd)
        except Exception as error:  # noqa: BLE001
            print("no QuACK:", error)
    liger = None
    if args.liger:
        try:
            from liger_kernel.ops.softmax import LigerSoftmaxFunction
            liger = LigerSoftmaxFunction.apply
        except Exception as error:  # noqa: BLE001
            print("no Liger:", error)
    pads = [int(v) for v in args.pad_mib.split(",")] if args.pad_mib else [None]
    for shape_text in args.shapes:
        # The case as a line names it: the op's direction and log_softmax marked, so that one
        # log's forward and backward lines of a shape stay apart (scripts/ab_summary.py keys on it).
        case_text = shape_text + ("/log" if args.log else "") + ("/bwd" if args.backward else "")
        dims_text, _, dim_text = shape_text.partition(":")
        shape = [int(v) for v in dims_text.split("x")]
        dim = int(dim_text) if dim_text else -1
        for name, pad_mib in itertools.product(args.dtypes.split(","), pads):
            dtype = DTYPES[name]
            padding = None  # the last case's, freed first
            if pad_mib is not None:
                padding = torch.empty(pad_mib << 20, dtype=torch.uint8, device="cuda")
            x = torch.randn(shape, device="cuda", dtype=torch.float32).mul_(3).to(dtype)
            xm = mt.from_dlpack(x)
            if args.backward:
                y = torch.log_softmax(x, dim) if args.log else torch.softmax(x, dim)
                dy = torch.randn_like(y)
                ym, dym = mt.from_dlpack(y), mt.from_dlpack(dy)
                ours = lambda: mt._C._softmax_backward(ym, dym, dim, args.log)  # noqa: E731
                aten_backward = (torch.ops.aten._log_softmax_backward_data if args.log
                                 else torch.ops.aten._softmax_backward_data)
                ref = aten_backward(dy.double(), y.double(), dim, torch.float64)
                theirs = lambda: aten_backward(dy, y, dim, dtype)  # noqa: E731
                nbytes = 3 * x.numel() * x.element_size()
            elif args.log:
                ours = lambda: xm.log_softmax(dim)  # noqa: E731
                ref = torch.log_softmax(x.double(), dim)
                theirs = lambda: torch.log_softmax(x, dim)  # noqa: E731
                nbytes = 2 * x.numel() * x.element_size()
            else:
                ours = lambda: xm.softmax(dim)  # noqa: E731
                ref = torch.softmax(x.double(), dim)
                theirs = lambda: torch.softmax(x, dim)  # noqa: E731
                nbytes = 2 * x.numel() * x.element_size()
            got = torch.from_dlpack(ours()).double()
            err = ((got - ref).abs() / (ref.abs() + 1e-3)).max().item()
            line = f"{args.tag:10s} {case_text:>14s} {name:4s} err {err:.1e}"
            if padding is not None:
                line += f" pad {pad_mib} MiB, x at +{x.data_ptr() % (2 << 20) >> 10} KiB"
            contenders = [("mt", ours)] + ([] if args.no_torch else [("torch", theirs)])
            if args.compile and args.backward:  # as the backward benchmark compiles it
                torch._dynamo.reset()
                compiled = torch.compile(lambda g, out: aten_backward(g, out, dim, dtype),
                                         dynamic=False)
                contenders.append(("compile", lambda: compiled(dy, y)))
            elif args.compile and not args.log:
                torch._dynamo.reset()
                compiled = torch.compile(lambda t: torch.softmax(t, dim), dynamic=False)
                contenders.append(("compile", lambda: compiled(x)))
            if quack and not args.log and dtype != torch.float64 and dim in (-1, len(shape) - 1):
                contenders.append(("quack", (lambda: quack[1](dy, y)) if args.backward else (lambda: quack[0](x))))
            if liger and not args.backward and not args.log and dim in (-1, len(shape) - 1):
                contenders.append(("liger", lambda: liger(x)))
            if args.copy:
                dst = torch.empty_like(x)
                contenders.append(("copy", lambda: dst.copy_(x)))
            for label, fn in contenders:
                try:
                    us = profiler.kernel_us(fn, args.reps) if profiler else time_us(fn, args.reps, flush)
                    moved = 2 * x.numel() * x.element_size() if label == "copy" else nbytes
                    line += f" | {label} {us:8.2f} us {100 * moved / us / 1e3 / copy_gbs:5.1f}%"
                except Exception as error:  # noqa: BLE001
                    line += f" | {label} n/a ({type(error).__name__})"
            print(line, flush=True)
            for label, fn in contenders if profiler and args.names else []:
                kernels = [short_kernel_name(a.name) for a in profiler.calls(fn, 1)[-1]]
                print(f"{'':10s} {case_text:>14s} {name:4s} {label} kernels: {'; '.join(kernels)}",
                      flush=True)
    print(f"copy {copy_gbs:.0f} GB/s")


if __name__ == "__main__":
    main()
