"""Progress and cancel for long computations (habit 8).

Long ``core`` functions (bootstrap with many replicates, coverage, assurance, ensemble
simulation) take an optional :class:`TaskControl`. They call :meth:`TaskControl.step`
between chunks of vectorized work; it reports the fraction done and raises
:class:`Cancelled` once :meth:`TaskControl.cancel` was called (from any thread). The
desktop wraps such a function in a ``QRunnable``; the command line passes nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class Cancelled(Exception):
    """The caller cancelled the computation; no partial result is returned."""


class TaskControl:
    """Thread-safe progress sink and cancel flag for one run of a long computation."""

    def __init__(self, on_progress: Callable[[float], None] | None = None) -> None:
        self._cancelled = threading.Event()
        self._on_progress = on_progress

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def step(self, done: float, total: float) -> None:
        """Report ``done/total``; raise :class:`Cancelled` if cancel was requested."""
        if self._cancelled.is_set():
            raise Cancelled
        if self._on_progress is not None and total > 0:
            self._on_progress(min(1.0, done / total))


def step(control: TaskControl | None, done: float, total: float) -> None:
    """:meth:`TaskControl.step` that accepts ``None`` (no progress wanted, never cancelled)."""
    if control is not None:
        control.step(done, total)
