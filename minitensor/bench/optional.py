"""Optional third-party modules, imported on first use.

The benchmark must run (with fewer columns) where torch, cupy, matplotlib or tqdm are missing,
so nothing here imports them at module load; each getter returns the module or None.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType


@functools.lru_cache(maxsize=None)
def optional_module(name: str) -> ModuleType | None:
    """The module called name, or None if it cannot be imported (for any reason: a broken
    install of a heavy package should cost a column, not the run)."""
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001  (ImportError, but also OSError from missing CUDA libraries)
        return None


def torch() -> ModuleType | None:
    return optional_module("torch")


def torch_with_cuda() -> ModuleType | None:
    """torch, if it can see a GPU."""
    module = torch()
    if module is None:
        return None
    try:
        return module if module.cuda.is_available() else None
    except Exception:  # noqa: BLE001
        return None


def cupy() -> ModuleType | None:
    module = optional_module("cupy")
    if module is None:
        return None
    try:
        return module if module.cuda.runtime.getDeviceCount() > 0 else None
    except Exception:  # noqa: BLE001
        return None


def pyplot() -> ModuleType | None:
    """matplotlib.pyplot on the file-only Agg backend (the GPU machine has no display)."""
    matplotlib = optional_module("matplotlib")
    if matplotlib is None:
        return None
    try:
        matplotlib.use("Agg")
    except Exception:  # noqa: BLE001
        pass
    return optional_module("matplotlib.pyplot")


def tqdm() -> ModuleType | None:
    return optional_module("tqdm")
