"""Grad mode: whether ops record a graph. `no_grad()` turns recording off (context manager or
decorator), as in PyTorch. The flag is per thread, like torch's."""

from __future__ import annotations

import functools
import threading


class _GradMode(threading.local):
    enabled = True  # class attribute: every new thread starts with grad mode on


_mode = _GradMode()


def is_grad_enabled() -> bool:
    return _mode.enabled


class _GradModeGuard:
    """Sets grad mode on entry and restores the previous mode on exit; usable as a decorator, with
    or without parentheses (`@no_grad()` and `@no_grad`, as torch)."""

    _target: bool

    def __new__(cls, func=None):
        guard = super().__new__(cls)
        return guard if func is None else guard(func)

    def __enter__(self):
        self._previous = _mode.enabled
        _mode.enabled = self._target
        return self

    def __exit__(self, *exc_info) -> None:
        _mode.enabled = self._previous

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradModeGuard):  # noqa: N801  (torch's spelling)
    """Ops inside do not record a graph: their results have requires_grad=False."""

    _target = False


class enable_grad(_GradModeGuard):  # noqa: N801
    """Turns recording back on inside a no_grad region."""

    _target = True


class set_grad_enabled(_GradModeGuard):  # noqa: N801
    """`with set_grad_enabled(is_training): ...` (also takes effect as a plain call, like torch)."""

    def __new__(cls, mode: bool):  # its argument is the mode, never a function to wrap
        return object.__new__(cls)

    def __init__(self, mode: bool) -> None:
        self._target = bool(mode)
        self._previous = _mode.enabled
        _mode.enabled = self._target

    def __enter__(self):
        return self  # already switched in __init__

    def __call__(self, fn):
        _mode.enabled = self._previous  # used as a decorator: undo the switch made by __init__
        mode = self._target

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper
