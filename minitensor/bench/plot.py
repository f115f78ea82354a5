"""PNG charts (matplotlib when importable; otherwise the caller says the plot was skipped)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping, Sequence

from . import optional
from .results import SweepResult

COLORS = {"minitensor": "#1f77b4", "torch": "#ff7f0e", "compile": "#2ca02c", "liger": "#d62728",
          "quack": "#8c564b", "numpy": "#9467bd"}


def matplotlib_missing_message() -> str | None:
    return None if optional.pyplot() is not None else "matplotlib not importable: no plot written"


def plot_softmax(sweep: SweepResult, path: Path) -> bool:
    """Grouped bars of GB/s per case, one panel per dtype, the copy bandwidth as a line."""
    plt = optional.pyplot()
    if plt is None or not sweep.cases:
        return False
    dtypes = list(dict.fromkeys(c.typed.dtype for c in sweep.cases))
    series = ["minitensor", *sweep.contender_names]
    widest = max(sum(1 for c in sweep.cases if c.typed.dtype == d) for d in dtypes)
    fig, axes = plt.subplots(len(dtypes), 1, figsize=(max(8.0, 0.55 * widest * len(series) / 2 + 3),
                                                       4.2 * len(dtypes)), squeeze=False)
    bar_width = 0.8 / len(series)
    for ax, dtype in zip(axes[:, 0], dtypes, strict=True):
        cases = [c for c in sweep.cases if c.typed.dtype == dtype]
        for s, name in enumerate(series):
            values = [c.minitensor.gbs if name == "minitensor" else
                      c.contenders[name].gbs if name in c.contenders else math.nan for c in cases]
            xs = [i + (s - (len(series) - 1) / 2) * bar_width for i in range(len(cases))]
            ax.bar(xs, [0 if math.isnan(v) else v for v in values], bar_width, label=name,
                   color=COLORS.get(name))
        ax.axhline(sweep.copy_gbs, color="black", linestyle="--", linewidth=1,
                   label=f"copy {sweep.copy_gbs:.0f} GB/s")
        ax.set_xticks(range(len(cases)))
        ax.set_xticklabels([f"{c.typed.case.group}\n{c.typed.case.shape_text} d{c.typed.case.dim}" for c in cases],
                           rotation=60, ha="right", fontsize=7)
        ax.set_ylabel(f"GB/s ({cases[0].typed.tensors_moved} x bytes / time)")
        ax.set_title(f"{sweep.op_name} {dtype} on {sweep.device_name}")
        ax.legend(fontsize=7, loc="upper left")
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_lines(path: Path, title: str, x_label: str, xs: Sequence[int],
               series: Mapping[str, Sequence[float]], copy_gbs: float) -> bool:
    """GB/s against x, one line per series (the kernel ladder)."""
    plt = optional.pyplot()
    if plt is None:
        return False
    fig, ax = plt.subplots(figsize=(10, 5.5))
    for name, values in series.items():
        ax.plot(xs, values, marker="o", markersize=3, label=name)
    ax.axhline(copy_gbs, color="black", linestyle="--", linewidth=1, label=f"copy {copy_gbs:.0f} GB/s")
    ax.set_xlabel(x_label)
    ax.set_ylabel("GB/s (2 x bytes / time)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
