"""Benchmark cases: which shapes, dims and dtypes to run, and how many bytes each moves."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

PACKAGED_SOFTMAX_SHAPES = Path(__file__).with_name("softmax_shapes.json")

ITEMSIZE = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2}
DEFAULT_CUDA_DTYPES = ("float32", "float64", "float16", "bfloat16")
DEFAULT_CPU_DTYPES = ("float32", "float64")

# Larger CPU inputs take seconds per NumPy run and add nothing the GPU sweep doesn't show.
CPU_MAX_TENSOR_BYTES = 64 * 2**20
# Below this much traffic a kernel cannot reach copy bandwidth (launch and tail effects
# dominate), so the "worst % of copy bandwidth" summary looks only at cases at least this big.
LARGE_TRAFFIC_BYTES = 64 * 2**20
# From this much traffic up, the speed targets ask for minitensor to be at least as fast as every
# contender (below it, launch latency decides): the summaries count those cases on their own.
MID_TRAFFIC_BYTES = 8 * 2**20


@dataclass(frozen=True)
class Case:
    group: str
    shape: tuple[int, ...]
    dim: int

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def shape_text(self) -> str:
        return "x".join(str(s) for s in self.shape)

    @property
    def is_last_dim(self) -> bool:
        """Softmax over rows (the last dim), whose targets and contenders differ from the other
        dims'."""
        return self.dim in (-1, len(self.shape) - 1)


@dataclass(frozen=True)
class TypedCase:
    case: Case
    dtype: str
    # Tensors of the case's size the op must read or write at least once: 2 for softmax (read x,
    # write y), 3 for its backward (read y and dy, write dx).
    tensors_moved: int = 2

    @property
    def tensor_bytes(self) -> int:
        return self.case.numel * ITEMSIZE[self.dtype]

    @property
    def traffic_bytes(self) -> int:
        """The floor: every tensor read or written once."""
        return self.tensors_moved * self.tensor_bytes


def load_cases(path: Path | str | None = None) -> list[Case]:
    """Cases from a JSON file shaped like softmax_shapes.json (the packaged sweep by default)."""
    source = Path(path) if path is not None else PACKAGED_SOFTMAX_SHAPES
    with open(source, encoding="utf-8") as f:
        document = json.load(f)
    entries = document["cases"] if isinstance(document, dict) else document
    return [Case(group=str(e.get("group", "custom")), shape=tuple(int(s) for s in e["shape"]),
                 dim=int(e.get("dim", -1))) for e in entries]


def parse_shape(text: str) -> tuple[int, ...]:
    """'256,1000' or '256x1000' -> (256, 1000)."""
    parts = [p for p in text.replace("x", ",").split(",") if p.strip()]
    if not parts:
        raise ValueError(f"empty shape: {text!r}")
    shape = tuple(int(p) for p in parts)
    if any(s <= 0 for s in shape):
        raise ValueError(f"shape sizes must be positive: {text!r}")
    return shape


def parse_dtypes(text: str) -> tuple[str, ...]:
    aliases = {"fp32": "float32", "float": "float32", "fp64": "float64", "double": "float64",
               "fp16": "float16", "half": "float16", "bf16": "bfloat16"}
    names = tuple(aliases.get(n.strip(), n.strip()) for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in ITEMSIZE]
    if unknown or not names:
        raise ValueError(f"unknown dtype(s) {unknown or text!r}; choose from {', '.join(ITEMSIZE)}")
    return names


def expand(cases: list[Case], dtypes: tuple[str, ...]) -> list[TypedCase]:
    """Every case in every dtype, dtype-major so each plot panel's cases run together."""
    return [TypedCase(case, dtype) for dtype in dtypes for case in cases]


def split_by_size(typed: list[TypedCase], max_tensor_bytes: int | None
                  ) -> tuple[list[TypedCase], list[TypedCase]]:
    """(kept, skipped): cases whose input tensor is larger than max_tensor_bytes are skipped."""
    if max_tensor_bytes is None:
        return typed, []
    kept = [t for t in typed if t.tensor_bytes <= max_tensor_bytes]
    skipped = [t for t in typed if t.tensor_bytes > max_tensor_bytes]
    return kept, skipped
