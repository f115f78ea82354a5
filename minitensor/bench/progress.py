"""A progress bar on stderr (tqdm when importable), so stdout carries only the results."""

from __future__ import annotations

import sys
from typing import Any

from . import optional


class Progress:
    """Counts finished cases; `describe` names the one running now."""

    def __init__(self, total: int, label: str) -> None:
        self._total = total
        self._label = label
        self._done = 0
        tqdm = optional.tqdm()
        self._bar: Any = None
        if tqdm is not None:
            self._bar = tqdm.tqdm(total=total, desc=label, file=sys.stderr, leave=False,
                                  dynamic_ncols=True)

    def describe(self, text: str) -> None:
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=True)
        elif sys.stderr.isatty():
            self._draw(text)

    def advance(self) -> None:
        self._done += 1
        if self._bar is not None:
            self._bar.update(1)
        else:
            self._draw("")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        elif sys.stderr.isatty():
            sys.stderr.write("\r\033[K")  # erase the counter line
        sys.stderr.flush()

    def _draw(self, text: str) -> None:
        line = f"{self._label}: {self._done}/{self._total} {text}"[:120]
        if sys.stderr.isatty():
            sys.stderr.write("\r" + line + "\033[K")  # \033[K clears what a longer line left
        else:
            sys.stderr.write(line + "\n")  # a log file gets one clean line per finished case
        sys.stderr.flush()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
