"""Static instruction counts of CUDA kernels, loop by loop, from their SASS (no GPU needed).

    nvcc -std=c++17 -O3 --expt-relaxed-constexpr -arch=sm_90 -I. -DMINITENSOR_WITH_CUDA \\
        -c ops/softmax/softmax_cuda_columns.cu -o /tmp/cols.o
    python tools/sass_loops.py /tmp/cols.o slab_kernelINS_11Float16BitsINS_10HalfFormat

Prints, for each kernel whose mangled name contains the filter, its instruction count and every
loop (a backward branch and the instructions it jumps over) with the instructions of note in its
body: exps (MUFU), shared, global and generic loads and stores, async copies, barriers, shuffles. A
per-pack loop's body size times the packs a thread takes is most of a kernel's work a thread, so
a change to the per-element code can be weighed here before a GPU call (see "Read the SASS of the
per-element work" in docs/DESIGN.md); ncu's source page then says where the time goes.

It needs `cuobjdump` on PATH (or $CUOBJDUMP). The CUDA toolkit here ships without it; Triton's
wheel carries one: `pip download --no-deps triton` and take `triton/backends/nvidia/bin/cuobjdump`
out of the wheel (a zip).
"""

import argparse
import os
import re
import subprocess
import sys

# Opcodes of note -> the name printed (LD / ST: generic addresses, e.g. a cluster peer's shared
# memory; UCGABAR_WAIT: a cluster barrier's wait).
NOTABLE = {
    "MUFU": "MUFU",
    "LDS": "LDS",
    "STS": "STS",
    "LDG": "LDG",
    "STG": "STG",
    "LD": "LD",
    "ST": "ST",
    "LDGSTS": "LDGSTS",
    "BAR": "BAR",
    "UCGABAR_WAIT": "cluster-wait",
    "SHFL": "SHFL",
}
INSTRUCTION = re.compile(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);")
FUNCTION = re.compile(r"Function : (\S+)")
TARGET = re.compile(r"BRA\b.*?0x([0-9a-f]+)")


def kernels(sass_text):
    """{mangled name: [(address, instruction text)]} from cuobjdump -sass output."""
    found, current = {}, None
    for line in sass_text.splitlines():
        header = FUNCTION.search(line)
        if header:
            current = found.setdefault(header.group(1), [])
            continue
        match = INSTRUCTION.match(line)
        if match and current is not None:
            current.append((int(match.group(1), 16), match.group(2).strip()))
    return found


def opcode(text):
    """The instruction's opcode without its predicate and modifiers (`@P0 LDS.128` -> LDS)."""
    words = text.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else ""


def loops(body):
    """(start, end, instructions) of every backward branch, innermost last at each end."""
    found = []
    for address, text in body:
        target = TARGET.search(text)
        if opcode(text) == "BRA" and target and int(target.group(1), 16) < address:
            start = int(target.group(1), 16)
            found.append((start, address, [t for a, t in body if start <= a <= address]))
    return found


def summary(texts):
    counts = {}
    for text in texts:
        name = NOTABLE.get(opcode(text))
        if name:
            counts[name] = counts.get(name, 0) + 1
    return " ".join(f"{name} {n}" for name, n in sorted(counts.items()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("object", help="an object file or cubin from nvcc -c")
    parser.add_argument("filter", nargs="?", default="", help="a substring of the mangled names")
    args = parser.parse_args()
    cuobjdump = os.environ.get("CUOBJDUMP", "cuobjdump")
    try:
        sass = subprocess.run([cuobjdump, "-sass", args.object], check=True, capture_output=True,
                              text=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        sys.exit(f"cuobjdump failed ({error}); see this script's docstring for where to get it")
    for name, body in sorted(kernels(sass).items()):
        if args.filter not in name:
            continue
        print(f"{name}: {len(body)} instructions ({summary(t for _, t in body)})")
        for start, end, texts in loops(body):
            print(f"  loop {start:#06x}-{end:#06x}: {len(texts):4} instructions  {summary(texts)}")


if __name__ == "__main__":
    main()
