"""Finds the compiled extension `_C` when Python imports this package from a source checkout.

`pip install .` puts the package, `_C` included, into site-packages. Run from the clone's root
(`python -m minitensor.demo`, `python -m pytest`), Python finds the source folder `minitensor/`
first, which has the Python files but not `_C`. Then the installed copy's folder joins this
package's search path, so `minitensor._C` comes from there and everything else from here.
"""

import importlib.machinery
import os
import sys


def _has_extension(folder: str) -> bool:
    return any(os.path.isfile(os.path.join(folder, "_C" + suffix))
               for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def locate_compiled_module(package_path: list) -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    if _has_extension(here):
        return
    for entry in sys.path:
        folder = os.path.join(entry or os.getcwd(), "minitensor")
        if (os.path.isdir(folder) and not os.path.samefile(folder, here)
                and _has_extension(folder)):
            package_path.append(folder)
            return
    # Not built anywhere: `from . import _C` below raises the usual ImportError.
