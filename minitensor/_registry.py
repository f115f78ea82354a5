"""The one list of minitensor's public operators.

`@op` on a function (in _functions.py, _shape_functions.py, _indexing.py) registers it under its
name: the package exports it as `mt.<name>` (and in `__all__`), and the Tensor gets it as the
method `t.<name>(...)` unless it is registered with method=False. Adding an operator is writing
the function with `@op` on it; nothing else lists operator names.
"""

from __future__ import annotations

from typing import Callable

OPS: dict[str, Callable] = {}  # mt.<name>, in the order the modules define them
METHODS: dict[str, Callable] = {}  # Tensor.<name>


def op(fn: Callable | None = None, *, method: bool = True, aliases: tuple[str, ...] = ()):
    """Registers fn as mt.<fn.__name__> (and as the Tensor method of that name when `method`);
    `aliases` are other names for the same function (torch's clip for clamp)."""
    def register(fn: Callable) -> Callable:
        for name in (fn.__name__, *aliases):
            if name in OPS:
                raise RuntimeError(f"operator {name!r} is registered twice")
            OPS[name] = fn
            if method:
                METHODS[name] = fn
        return fn
    return register(fn) if fn is not None else register
