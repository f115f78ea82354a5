"""Optional third-party modules, imported on first use.

The benchmark must run (with fewer columns) where torch, cupy, matplotlib, tqdm, Liger or QuACK
are missing, so nothing here imports them at module load; each getter returns the module or
None, and import_failure(name) says why it was None.
"""

from __future__ import annotations

import functools
import importlib
import os
import site
import sys
from types import ModuleType

# nvidia-cutlass-dsl (QuACK's CuTe-DSL) makes `import cutlass` work through this .pth file. Python
# runs .pth files only in site directories, so where the packages were put on sys.path some
# other way (PYTHONPATH, pip --target, `python -S`), cutlass is not importable until the
# directory is added as a site directory.
CUTLASS_DSL_PTH = "nvidia_cutlass_dsl_packages.pth"
# Extra site directories (colon-separated) whose .pth files the benchmark should honour.
EXTRA_SITE_DIRS_ENV = "MINITENSOR_BENCH_SITE"

_import_failures: dict[str, Exception] = {}


@functools.lru_cache(maxsize=None)
def optional_module(name: str) -> ModuleType | None:
    """The module called name, or None if it cannot be imported (for any reason: a broken
    install of a heavy package should cost a column, not the run)."""
    try:
        return importlib.import_module(name)
    except Exception as error:  # noqa: BLE001  (ImportError, but also OSError from missing CUDA libraries)
        _import_failures[name] = error
        return None


def import_failure(name: str) -> Exception | None:
    """Why optional_module(name) returned None (None if it did not, or was never asked)."""
    return _import_failures.get(name)


def add_cutlass_dsl_site_dirs(path: list[str] | None = None, environ: dict[str, str] | None = None
                              ) -> list[str]:
    """Runs the .pth files of every sys.path entry holding nvidia_cutlass_dsl_packages.pth, and of
    every directory in $MINITENSOR_BENCH_SITE, by adding each as a site directory. Returns the
    directories added. Site directories whose .pth files Python already ran at start-up are
    skipped, and the function is meant to be called once (quack_softmax does): running a .pth
    file twice repeats its side effects (sys.path inserts, import hooks)."""
    path = sys.path if path is None else path
    environ = dict(os.environ) if environ is None else environ
    already_run = _startup_site_dirs()
    found = [entry for entry in path if entry and os.path.normpath(entry) not in already_run
             and os.path.isfile(os.path.join(entry, CUTLASS_DSL_PTH))]
    extra = [entry for entry in environ.get(EXTRA_SITE_DIRS_ENV, "").split(os.pathsep) if entry]
    directories = list(dict.fromkeys([*found, *extra]))
    for directory in directories:
        site.addsitedir(directory)
    return directories


def _startup_site_dirs() -> set[str]:
    """The site directories whose .pth files `site` ran when Python started (none under -S)."""
    if sys.flags.no_site:
        return set()
    try:
        user = [site.getusersitepackages()] if site.ENABLE_USER_SITE else []
        return {os.path.normpath(d) for d in [*site.getsitepackages(), *user]}
    except Exception:  # noqa: BLE001  (some embedded interpreters lack parts of `site`)
        return set()


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


def liger_softmax() -> ModuleType | None:
    """liger_kernel.ops.softmax (Triton kernels; needs torch and triton)."""
    return optional_module("liger_kernel.ops.softmax")


@functools.lru_cache(maxsize=None)
def quack_softmax() -> ModuleType | None:
    """quack.softmax (CuTe-DSL kernels), after honouring the CuTe-DSL .pth file (once)."""
    add_cutlass_dsl_site_dirs()
    return optional_module("quack.softmax")
