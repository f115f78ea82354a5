"""Where a kernel's warps spend their time, phase by phase, from ncu's SASS source page.

    ncu --clock-control none -k regex:softmax_column --set full --import-source no -o /tmp/r \\
        python3 .devrun/ncu_cases.py 8x4096x4096:1:f16:fwd
    ncu --import /tmp/r.ncu-rep --page source --print-source sass --csv > r.csv   # small enough
    python tools/ncu_phases.py r.csv --elements 134217728                        # to bring back

For each kernel in the file (or --kernel K, counted from 0): the instructions it executed (per
element with --elements: the element count of the case), the opcode mix, the stall reasons, and
its warp-state samples cut into phases at the instructions where warps wait on each other or on
memory (barriers, mbarrier try-waits, cp.async waits, exits), in program order. A phase's share
of the samples is the share of the warps' time spent there; the wait that ends it is counted on
its own line. The top instructions by samples close the report. It reads a CSV and needs no GPU:
the ncu report itself (tens of MB) need not leave the GPU machine.
"""

from __future__ import annotations

import argparse
import collections
import csv
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"
# Instructions at which a phase ends: waits on other threads or on memory.
WAITS = ("BAR.SYNC", "SYNCS.PHASECHK", "DEPBAR", "UCGABAR_WAIT", "EXIT")


def read_kernels(path: str) -> list[dict]:
    """The CSV's kernels: name, header and rows, in file order."""
    kernels: list[dict] = []
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if not row:
                continue
            if row[0] == "Kernel Name":
                kernels.append({"name": row[1], "header": [], "rows": []})
            elif row[0] == "Address" and kernels:
                kernels[-1]["header"] = row
            elif kernels and kernels[-1]["header"]:
                kernels[-1]["rows"].append(row)
    return kernels


def mnemonic(source: str) -> str:
    """A SASS line's mnemonic with its modifiers, without the predicate ("@!P0 BRA x" -> "BRA")."""
    words = source.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0] if words else "?"


def opcode(source: str) -> str:
    """The mnemonic without its modifiers ("LDS.128" -> "LDS")."""
    return mnemonic(source).split(".")[0]


def report(kernel: dict, elements: int | None, top: int, out=sys.stdout) -> None:
    col = {name: i for i, name in enumerate(kernel["header"])}
    reasons = [h for h in kernel["header"] if h.startswith("stall_") and "Not Issued" not in h]

    def num(row: list[str], name: str) -> float:
        try:
            return float(row[col[name]].replace(",", "") or 0)
        except (KeyError, ValueError, IndexError):
            return 0.0

    rows = kernel["rows"]
    samples = sum(num(r, SAMPLES) for r in rows) or 1.0
    executed = sum(num(r, EXECUTED) for r in rows)
    print(f"{kernel['name'][:150]}", file=out)
    per_element = f", {executed * 32 / elements:.1f} thread instructions an element" if elements else ""
    print(f"  {executed:,.0f} warp instructions{per_element}; {samples:,.0f} samples", file=out)

    mix = collections.Counter()
    for r in rows:
        mix[opcode(r[1])] += num(r, EXECUTED)
    print("  mix: " + ", ".join(f"{op} {n / max(executed, 1) * 100:.1f}%" for op, n in mix.most_common(12)), file=out)
    stalls = collections.Counter({h[6:]: sum(num(r, h) for r in rows) for h in reasons})
    print("  stalls: " + ", ".join(f"{k} {v / samples * 100:.1f}%" for k, v in stalls.most_common(8)), file=out)

    # A wait's samples land on the instruction after it (the one held back: the branch on a
    # try-wait's predicate, the first use of a copy), so a wait is its line and the next.
    print("  phases (share of samples; the wait that ends each on its own line):", file=out)
    phase, first, i = 0.0, 0, 0
    while i < len(rows):
        r = rows[i]
        if mnemonic(r[1]).startswith(WAITS) and num(r, EXECUTED) > 0:
            if phase / samples >= 0.005:
                print(f"    {phase / samples * 100:5.1f}%  lines {first}-{i - 1}", file=out)
            wait = num(r, SAMPLES) + (num(rows[i + 1], SAMPLES) if i + 1 < len(rows) else 0.0)
            if wait / samples >= 0.005:
                print(f"    {wait / samples * 100:5.1f}%  wait, lines {i}-{i + 1}: {r[1].strip()[:50]}", file=out)
            phase, first, i = 0.0, i + 2, i + 2
            continue
        phase += num(r, SAMPLES)
        i += 1
    if phase / samples >= 0.005:
        print(f"    {phase / samples * 100:5.1f}%  lines {first}-{len(rows) - 1}", file=out)

    print(f"  top {top} lines by samples:", file=out)
    ranked = sorted(range(len(rows)), key=lambda i: -num(rows[i], SAMPLES))[:top]
    for i in ranked:
        r = rows[i]
        s = num(r, SAMPLES)
        why = sorted(((num(r, h), h[6:]) for h in reasons), reverse=True)[:2]
        whys = ", ".join(f"{name} {v / max(s, 1) * 100:.0f}%" for v, name in why if v > 0)
        print(f"    {s / samples * 100:5.1f}%  line {i:5d} x{num(r, EXECUTED):<10,.0f} {r[1].strip()[:56]:56s} {whys}",
              file=out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csv", help="ncu --page source --print-source sass --csv output")
    parser.add_argument("--kernel", type=int, default=None, help="only kernel K of the file (from 0)")
    parser.add_argument("--elements", type=int, default=None, help="the case's element count")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    kernels = read_kernels(args.csv)
    if not kernels:
        print(f"no kernels in {args.csv}", file=sys.stderr)
        return 1
    chosen = kernels if args.kernel is None else [kernels[args.kernel]]
    for k in chosen:
        report(k, args.elements, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
