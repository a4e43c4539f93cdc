"""Work run on a thread of its own while the caller does something else.

Imports nothing but the standard library: the report's read-ahead uses it before the
analysis is loaded.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Later(Generic[T]):
    """`fn(*args)` run on a thread of its own, or here and now when no thread can be had (a
    process limit); `result` waits for it and raises what it raised."""

    def __init__(self, fn: Callable[..., T], *args: object, name: str) -> None:
        self._out: tuple[T] | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = threading.Thread(
            target=self._run, args=(fn, args), name=name, daemon=True
        )
        try:
            self._thread.start()
        except RuntimeError:  # no thread to be had: run it now
            self._thread = None
            self._run(fn, args)

    def _run(self, fn: Callable[..., T], args: tuple[object, ...]) -> None:
        try:
            self._out = (fn(*args),)
        except BaseException as exc:  # raised again in the caller's thread by result()
            self._error = exc

    def result(self) -> T:
        """What `fn` returned."""
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._out is not None
        return self._out[0]
