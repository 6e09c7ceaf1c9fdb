"""Long work off the GUI thread (spec page 05, habit 8).

A core function that accepts a :class:`core.progress.TaskControl` runs in a
:class:`QRunnable` on the global :class:`QThreadPool`. :class:`TaskRunner` keeps one task
per purpose: starting a new one cancels the old one, and a generation counter drops any
result that arrives after it was superseded, so a stale simulation never overwrites a
newer answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from core.errors import InputError
from core.progress import Cancelled, TaskControl


class _Signals(QObject):
    progress = Signal(int, float)  # generation, fraction done
    finished = Signal(int, object)  # generation, result
    failed = Signal(int, str)  # generation, message


class _Job(QRunnable):
    def __init__(
        self,
        generation: int,
        function: Callable[[TaskControl], Any],
        control: TaskControl,
        signals: _Signals,
    ):
        super().__init__()
        self.setAutoDelete(True)
        self._generation = generation
        self._function = function
        self._control = control
        self._signals = signals

    def run(self) -> None:
        try:
            result = self._function(self._control)
        except Cancelled:
            pass  # TaskRunner.cancel() announced it when it asked; nothing comes back
        except InputError as exc:
            self._signals.failed.emit(self._generation, str(exc))
        except Exception as exc:  # shown in the status bar, never a traceback dialog
            self._signals.failed.emit(self._generation, f"{type(exc).__name__}: {exc}")
        else:
            self._signals.finished.emit(self._generation, result)


class TaskRunner(QObject):
    """Runs at most one live task; newer requests supersede older ones.

    Signals (emitted on the GUI thread, only for the current generation)
    -------
    started(), progress(float), finished(object), failed(str), cancelled(), busy(bool)
    """

    started = Signal()
    progress = Signal(float)
    finished = Signal(object)
    failed = Signal(str)
    cancelled = Signal()
    busy = Signal(bool)

    def __init__(self, parent: QObject | None = None, pool: QThreadPool | None = None):
        super().__init__(parent)
        self._pool = pool or QThreadPool.globalInstance()
        self._generation = 0
        self._control: TaskControl | None = None
        self._signals = _Signals()
        self._signals.progress.connect(self._on_progress)
        self._signals.finished.connect(self._on_finished)
        self._signals.failed.connect(self._on_failed)

    @property
    def is_running(self) -> bool:
        return self._control is not None

    def start(self, function: Callable[[TaskControl], Any]) -> int:
        """Run ``function(control)`` in the pool, cancelling any task still running."""
        self.cancel()
        self._generation += 1
        generation = self._generation
        control = TaskControl(on_progress=lambda f: self._signals.progress.emit(generation, f))
        self._control = control
        self._pool.start(_Job(generation, function, control, self._signals))
        self.started.emit()
        self.busy.emit(True)
        return generation

    def cancel(self) -> None:
        """Ask the running task to stop; its result, if any, will be dropped."""
        if self._control is not None:
            self._control.cancel()
            self._control = None
            self._generation += 1
            self.cancelled.emit()
            self.busy.emit(False)

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the pool is idle (tests and shutdown)."""
        return self._pool.waitForDone(msecs)

    def _current(self, generation: int) -> bool:
        return generation == self._generation and self._control is not None

    def _on_progress(self, generation: int, fraction: float) -> None:
        if self._current(generation):
            self.progress.emit(fraction)

    def _on_finished(self, generation: int, result: object) -> None:
        if self._current(generation):
            self._control = None
            self.busy.emit(False)
            self.finished.emit(result)

    def _on_failed(self, generation: int, message: str) -> None:
        if self._current(generation):
            self._control = None
            self.busy.emit(False)
            self.failed.emit(message)
