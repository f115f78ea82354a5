"""Host time per call: `t.softmax(dim)` on a small tensor against `torch.softmax`, 10,000 calls.

A small softmax is all launch overhead, so this measures what the Python binding, argument
checks, allocation and launch cost on the host. The device is synchronized once at the end of
each batch of calls, so queued kernels are counted but never waited on one by one.
"""

from __future__ import annotations

import statistics
import time

import minitensor as mt

from . import optional

SHAPE = (32, 128)
CALLS = 10_000


def _per_call_us(fn, sync, calls: int, repeats: int = 5) -> float:
    fn()
    sync()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples)


def run_overhead(device: str, calls: int = CALLS) -> int:
    torch = optional.torch_with_cuda() if device == "cuda" else optional.torch()
    if device == "cuda" and not mt.cuda.is_available():
        print("error: CUDA is not available")
        return 1
    sync = mt.cuda.synchronize if device == "cuda" else (lambda: None)
    x = mt.randn(*SHAPE, device=device)
    ours = _per_call_us(lambda: x.softmax(-1), sync, calls)
    print(f"host time per call, {SHAPE} float32 on {device}, median of 5 x {calls} calls")
    print(f"  minitensor t.softmax(-1): {ours:7.2f} us")
    if torch is None:
        print("  torch: not importable, no comparison")
        return 0
    t = torch.randn(*SHAPE, device=device)
    torch_sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    theirs = _per_call_us(lambda: torch.softmax(t, -1), torch_sync, calls)
    print(f"  torch.softmax(t, -1):     {theirs:7.2f} us")
    print(f"  ratio (torch / minitensor): {theirs / ours:.2f}x "
          f"({'minitensor costs no more' if ours <= theirs else 'minitensor costs more'})")
    return 0
