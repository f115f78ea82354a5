"""The summary gpu_ab.sh prints: from the lines its runs wrote (softmax_tune's, or the benchmark's
kernel times), each case's time of ours under every build or setting, round by round.

    python3 scripts/ab_summary.py /tmp/ab_times.log

A line's first word is its tag, TAG or TAG.rK (round K of AB_ROUNDS); the rounds of one tag are
listed together, in the order they ran.
"""

import re
import sys

# softmax_tune.py: "TAG  SHAPE[/log][/bwd] DTYPE err E | mt  US us  P% | ..."
TUNE = re.compile(r"^(\S+)\s+(\S+)\s+(\S+)\s+err (\S+) \| mt\s+([\d.]+) us")
# gpu_ab.sh's bench_kernel_times: "TAG  SHAPE dDIM DTYPE minitensor US torch US ..."
BENCH = re.compile(r"^(\S+)\s+(\S+)\s+(d-?\d+)\s+(\S+)\s+minitensor\s+([\d.]+)")
ROUND = re.compile(r"\.r\d+$")


def summarize(lines):
    """{case: {side: [µs, ...]}} in first-seen order, and each case's largest error (softmax_tune's
    lines only)."""
    times: dict[str, dict[str, list[float]]] = {}
    errors: dict[str, float] = {}
    for line in lines:
        if m := TUNE.match(line):
            tag, case, us = m.group(1), f"{m.group(2)} {m.group(3)}", float(m.group(5))
            errors[case] = max(errors.get(case, 0.0), float(m.group(4)))
        elif m := BENCH.match(line):
            tag, case, us = m.group(1), f"{m.group(2)} {m.group(3)} {m.group(4)}", float(m.group(5))
        else:
            continue
        times.setdefault(case, {}).setdefault(ROUND.sub("", tag), []).append(us)
    return times, errors


def main():
    with open(sys.argv[1]) as f:
        times, errors = summarize(f)
    width = max((len(case) for case in times), default=0)
    for case, sides in times.items():
        cells = "  ".join(f"{side} {' / '.join(f'{us:.2f}' for us in runs)}"
                          for side, runs in sides.items())
        error = f"  (err {errors[case]:.1e})" if case in errors else ""
        print(f"{case:{width}s}  {cells}{error}")


if __name__ == "__main__":
    main()
