"""Times minitensor's CPU softmax kernels against NumPy and torch-CPU on the same inputs.

Builds the kernels into a ctypes-loadable .so with the project's flags, checks each result
against torch (or a float64 NumPy reference), and prints a table of median microseconds.

    python3 tools/cpu_softmax_bench/compare.py [--threads 2] [--log] [--quick]

torch is optional (a venv with `pip install torch==2.13.0 numpy` works: run this script with that
venv's python). MINITENSOR_NUM_THREADS and torch.set_num_threads get the same thread count.
"""
import argparse
import ctypes
import os
import pathlib
import subprocess
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
CXXFLAGS = ["-std=c++17", "-O3", "-march=native", "-fno-math-errno", "-mprefer-vector-width=512",
            "-Wno-psabi", "-shared", "-fPIC", "-pthread"]

SHAPES = [  # (shape, dim)
    ((1024, 1024), 1), ((4096, 1000), 1), ((64, 32), 1), ((8, 128, 56, 56), 1),
    ((4096, 4096), 0), ((1024, 1024), 0), ((1, 1 << 20), 1), ((32, 4, 4096), 1),
]


def build_library():
    out = pathlib.Path(tempfile.gettempdir()) / "libmt_softmax_cpu.so"
    sources = [ROOT / "ops/softmax/softmax_cpu.cpp", HERE / "softmax_capi.cpp", ROOT / "core/parallel.cpp"]
    subprocess.run(["g++", *CXXFLAGS, f"-I{ROOT}", *map(str, sources), "-o", str(out)], check=True)
    lib = ctypes.CDLL(str(out))
    for name in ("mt_softmax_f32", "mt_softmax_f64"):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_void_p] + [ctypes.c_int64] * 3 + [ctypes.c_int] * 2
    return lib


def median_us(fns, min_runs=15, min_time=0.5):
    """Median microseconds of each function. Runs are interleaved (a, b, c, a, b, c, ...) so that
    load from other processes on this shared machine hits every candidate alike."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    start = time.perf_counter()
    while len(times[0]) < min_runs or (time.perf_counter() - start < min_time and len(times[0]) < 1000):
        for fn, t in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            t.append(time.perf_counter() - t0)
    return [float(np.median(t)) * 1e6 for t in times]


def numpy_softmax(x, dim, out, log):
    m = x.max(axis=dim, keepdims=True)
    e = np.exp(x - m)
    s = e.sum(axis=dim, keepdims=True)
    if log:
        np.subtract(x - m, np.log(s), out=out)
    else:
        np.divide(e, s, out=out)


def split(shape, dim):
    outer = int(np.prod(shape[:dim], dtype=np.int64))
    inner = int(np.prod(shape[dim + 1:], dtype=np.int64))
    return outer, shape[dim], inner


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--log", action="store_true", help="log_softmax instead of softmax")
    ap.add_argument("--algos", action="store_true", help="also time Safe and Online separately")
    args = ap.parse_args()
    os.environ["MINITENSOR_NUM_THREADS"] = str(args.threads)
    lib = build_library()
    try:
        import torch
        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None

    op = "log_softmax" if args.log else "softmax"
    print(f"{op}, {args.threads} threads, median us" + ("" if torch else " (torch not installed)"))
    head = f"{'shape':>18} {'dim':>3} {'dtype':>7} {'minitensor':>11} {'numpy':>9} {'torch':>9} {'vs numpy':>9} {'vs torch':>9}"
    if args.algos:
        head += f" {'safe':>9} {'online':>9}"
    print(head + "  max err")
    rng = np.random.default_rng(0)
    for shape, dim in SHAPES:
        for dtype in (np.float32, np.float64):
            x = (rng.standard_normal(shape) * 3).astype(dtype)
            y = np.empty_like(x)
            outer, axis, inner = split(shape, dim)
            fn = lib.mt_softmax_f32 if dtype == np.float32 else lib.mt_softmax_f64

            def run_mt(algo=0):
                fn(x.ctypes.data, y.ctypes.data, outer, axis, inner, int(args.log), algo)

            y_np = np.empty_like(x)
            fns = [run_mt, lambda: numpy_softmax(x, dim, y_np, args.log)]
            if torch is not None:
                xt = torch.from_numpy(x)
                f = torch.log_softmax if args.log else torch.softmax
                fns.append(lambda: f(xt, dim))
            if args.algos:
                fns += [lambda: run_mt(1), lambda: run_mt(2)]
            times = median_us(fns)
            t_mt, t_np = times[0], times[1]
            run_mt()
            ref = np.empty(shape, np.float64)
            numpy_softmax(x.astype(np.float64), dim, ref, args.log)
            err = float(np.max(np.abs(y - ref) / (np.abs(ref) + (1.0 if args.log else 1e-30))))
            row = f"{str(shape):>18} {dim:>3} {np.dtype(dtype).name:>7} {t_mt:>11.1f} {t_np:>9.1f}"
            if torch is not None:
                t_t = times[2]
                row += f" {t_t:>9.1f} {t_np / t_mt:>8.1f}x {t_t / t_mt:>8.2f}x"
            else:
                row += f" {'-':>9} {t_np / t_mt:>8.1f}x {'-':>9}"
            if args.algos:
                row += f" {times[-2]:>9.1f} {times[-1]:>9.1f}"
            print(row + f"  {err:.1e}", flush=True)


if __name__ == "__main__":
    main()
