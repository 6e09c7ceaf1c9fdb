"""Long work off the GUI thread (habit 8).

:func:`run_with_progress` reads or writes a workbook on the thread pool while the window
keeps repainting, with a progress window (and Cancel for reads) when it takes a while.

A core function that accepts a :class:`core.progress.TaskControl` runs in a
:class:`QRunnable` on the global :class:`QThreadPool`. :class:`TaskRunner` keeps one task
per purpose: starting a new one cancels the old one, and a generation counter drops any
result that arrives after it was superseded, so a stale simulation never overwrites a
newer answer.

While any of these runs Python on a pool thread, Python's cyclic garbage collector is
paused (:class:`_CollectOnGuiThread`): a collection runs on whichever thread happens to
allocate, and one that frees a forgotten dialog or widget there destroys a Qt object off
the GUI thread, which can crash the process. Collection resumes, on the GUI thread, when
the last job has ended.

A call's end reaches the GUI thread through one long-lived :class:`_Waker`, and what the
call held is let go there (:meth:`_Call.let_go`): a queued signal to an object the call
owned, freed meanwhile on the pool thread, crashed the app now and then.
"""

from __future__ import annotations

import collections
import contextlib
import gc
import threading
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import (
    QCoreApplication,
    QEventLoop,
    QObject,
    QRunnable,
    Qt,
    QThreadPool,
    QTimer,
    Signal,
)
from PySide6.QtWidgets import QProgressDialog, QWidget

from core.errors import InputError
from core.progress import Cancelled, TaskControl


class _CollectOnGuiThread:
    """Pauses the cyclic garbage collector while jobs run on pool threads.

    :meth:`job_started` is called on the GUI thread, :meth:`job_ended` by the job's own
    thread as its last step (so a job whose window has closed still counts as ended).
    Memory is still freed by reference counting meanwhile; only cycles wait, and the
    collector is switched back on by a timer on the GUI thread once no job is left.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs = 0
        self._paused = False
        self._timer: QTimer | None = None

    def job_started(self) -> None:
        with self._lock:
            self._jobs += 1
        if not self._paused and gc.isenabled():
            gc.disable()
            self._paused = True
            if self._timer is None:
                self._timer = QTimer()
                self._timer.setInterval(100)
                self._timer.timeout.connect(self.resume_if_idle)
            self._timer.start()

    def job_ended(self) -> None:
        with self._lock:
            self._jobs -= 1

    def resume_if_idle(self) -> None:
        """Switch the collector back on if no job is running (GUI thread only)."""
        with self._lock:
            idle = self._jobs == 0
        if idle and self._paused:
            self._paused = False
            gc.enable()
            if self._timer is not None:
                self._timer.stop()


_collection = _CollectOnGuiThread()


class _Signals(QObject):
    arrived = Signal()  # something was put in the runner's inbox


class _Inbox:
    """What a runner's jobs hand back: put on a pool thread, taken on the GUI thread.

    Each put is announced by ``signals.arrived``. That signal alone sometimes reached the
    GUI thread only seconds later (a scored sample stayed "Reading scored.csv…" for over
    10 s in test runs beside a busy process, the job long done), so the runner also looks
    here on a timer while a job is out.
    """

    def __init__(self, signals: _Signals) -> None:
        self._items: collections.deque[tuple[str, int, Any]] = collections.deque()
        self.signals = signals

    def put(self, kind: str, generation: int, payload: Any) -> None:
        self._items.append((kind, generation, payload))  # atomic: no lock needed
        self.signals.arrived.emit()

    def take_all(self) -> list[tuple[str, int, Any]]:
        taken = []
        with contextlib.suppress(IndexError):
            while True:
                taken.append(self._items.popleft())
        return taken


_READING_POOL: QThreadPool | None = None
#: How often a runner looks in its inbox while a job is out, should a job's signal be late.
INBOX_POLL_MS = 100


def reading_pool() -> QThreadPool:
    """The threads of short reads the lead waits for (``TaskRunner.start(own_thread=True)``),
    apart from the global pool that simulations can fill (2 threads on 2 cores)."""
    global _READING_POOL
    if _READING_POOL is None:
        _READING_POOL = QThreadPool()
        _READING_POOL.setMaxThreadCount(2)
    return _READING_POOL


class _Job(QRunnable):
    def __init__(
        self,
        generation: int,
        function: Callable[[TaskControl], Any],
        control: TaskControl,
        inbox: _Inbox,
    ):
        super().__init__()
        self.setAutoDelete(True)
        self._generation = generation
        self._function = function
        self._control = control
        self._inbox = inbox

    def _hand_back(self, kind: str, payload: Any) -> None:
        self._inbox.put(kind, self._generation, payload)

    def run(self) -> None:
        try:
            if self._control.cancelled:
                # Cancelled while it waited for a thread (its tab closed, or a newer read
                # replaced it): it must not hold a thread the lead's current read waits for.
                return
            try:
                result = self._function(self._control)
            except Cancelled:
                return  # TaskRunner.cancel() announced it when it asked; nothing comes back
            except InputError as exc:
                self._hand_back("failed", str(exc))
            except Exception as exc:  # shown in the status bar, never a traceback dialog
                self._hand_back("failed", f"{type(exc).__name__}: {exc}")
            else:
                self._hand_back("finished", result)
        except RuntimeError as exc:
            # The window closed while the task ran: its signals' C++ object is gone and
            # nobody waits for the result (no traceback on the user's terminal).
            if "deleted" not in str(exc):
                raise
        finally:
            _collection.job_ended()


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
        self._signals.arrived.connect(self._take_inbox)
        self._inbox = _Inbox(self._signals)
        self._poll = QTimer(self)
        self._poll.setInterval(INBOX_POLL_MS)
        self._poll.timeout.connect(self._take_inbox)

    @property
    def is_running(self) -> bool:
        return self._control is not None

    def start(self, function: Callable[[TaskControl], Any], *, own_thread: bool = False) -> int:
        """Run ``function(control)`` in the pool, cancelling any task still running.

        ``own_thread``: on a thread of :func:`reading_pool`, free even when simulations
        fill the global pool (2 threads on 2 cores), for a short read the lead waits for
        (a scored sample stayed "Reading scored.csv…" behind them for over 10 s in a CI
        run)."""
        self.cancel()
        self._generation += 1
        generation = self._generation
        inbox = self._inbox
        control = TaskControl(on_progress=lambda f: inbox.put("progress", generation, f))
        self._control = control
        _collection.job_started()
        pool = reading_pool() if own_thread else self._pool
        pool.start(_Job(generation, function, control, inbox))
        self._poll.start()
        self.started.emit()
        self.busy.emit(True)
        return generation

    def cancel(self) -> None:
        """Ask the running task to stop; its result, if any, will be dropped."""
        self._poll.stop()  # what the cancelled job still hands back is dropped anyway
        if self._control is not None:
            self._control.cancel()
            self._control = None
            self._generation += 1
            self.cancelled.emit()
            self.busy.emit(False)

    def wait(self, msecs: int = 30_000) -> bool:
        """Block until the pool is idle (tests and shutdown)."""
        return self._pool.waitForDone(msecs) and reading_pool().waitForDone(msecs)

    def _take_inbox(self) -> None:
        """Pass on what the jobs handed back (on the GUI thread: by their signal, or by the
        poll while a job is out)."""
        for kind, generation, payload in self._inbox.take_all():
            if kind == "progress":
                self._on_progress(generation, payload)
            elif kind == "finished":
                self._on_finished(generation, payload)
            else:
                self._on_failed(generation, payload)
        if self._control is None:
            self._poll.stop()

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


class _Waker(QObject):
    """Brings word of an ended call to the GUI thread, ending its wait for more events.

    One for the life of the app: a queued signal to an object that a call owned could
    arrive after that object was freed (on the pool thread, by the call's last
    reference), and delivering it crashed the app now and then. The ended call travels in
    the event, so its last reference is dropped here, on the GUI thread.
    """

    ended = Signal(object)  # the _Call that ended

    def __init__(self) -> None:
        super().__init__()
        self.ended.connect(self._on_ended, Qt.ConnectionType.QueuedConnection)

    def _on_ended(self, call: _Call) -> None:
        if call in _ABANDONED:  # a cancelled call has ended: nothing waits for it now
            call.let_go()
            _ABANDONED.discard(call)


_waker: _Waker | None = None


def _the_waker() -> _Waker:
    """The app's :class:`_Waker`, made on first use (on the GUI thread)."""
    global _waker
    if _waker is None:
        _waker = _Waker()
    return _waker


class _Call(QRunnable):
    """Runs ``function()`` once and keeps its result or exception for the GUI thread."""

    def __init__(self, function: Callable[[], Any]):
        super().__init__()
        self.setAutoDelete(False)  # the caller reads the result after run() returns
        self.function = function
        self.result: Any = None
        self.error: BaseException | None = None
        self.finished = False
        self.waker = _the_waker()

    def run(self) -> None:
        try:
            self.result = self.function()
        except BaseException as exc:  # handed to the GUI thread, raised there
            self.error = exc
        _collection.job_ended()
        self.finished = True
        self.waker.ended.emit(self)

    def let_go(self) -> None:
        """Drop the function, result and error (GUI thread only, once the call ended):
        whatever they hold is freed here, not on the pool thread."""
        self.function = None  # type: ignore[assignment]
        self.result = self.error = None


#: Cancelled calls still running on the pool (their objects must outlive the thread).
_ABANDONED: set[_Call] = set()
#: A read or save shorter than this shows no progress window at all.
PROGRESS_DELAY_MS = 400


def run_with_progress(
    parent: QWidget,
    label: str,
    function: Callable[[], Any],
    *,
    cancellable: bool = False,
    delay_ms: int = PROGRESS_DELAY_MS,
) -> Any:
    """Run ``function()`` on the thread pool and wait for it with the window responsive.

    The GUI thread keeps running its event loop (plots repaint, timers fire) while a
    workbook is read or written. For the first ``delay_ms`` the user's clicks and keys wait
    (a short read looks instantaneous); after that a window-modal progress window says what
    is happening and, when ``cancellable``, offers Cancel.

    Returns
    -------
    object
        What ``function`` returned; an exception it raised is raised here, on the GUI
        thread, unchanged.

    Raises
    ------
    core.progress.Cancelled
        The user pressed Cancel. The work itself runs to its end in the background and its
        result is dropped (use this only for work without lasting effects, such as reads).
    """
    call = _Call(function)
    # On a thread of its own even when simulations fill the pool (2 threads on 2 cores).
    pool = QThreadPool.globalInstance()
    pool.reserveThread()
    _collection.job_started()
    pool.startOnReservedThread(call)
    try:
        return _wait_for(call, parent, label, cancellable, delay_ms)
    finally:
        _collection.resume_if_idle()  # at once when this was the last job


def _wait_for(call: _Call, parent: QWidget, label: str, cancellable: bool, delay_ms: int) -> Any:
    # processEvents, not a nested QEventLoop: once the application is quitting, every new
    # QEventLoop.exec returns at once and a wait built on one would spin.
    wait = QEventLoop.ProcessEventsFlag.WaitForMoreEvents
    # First a short wait in which input is held back (it is delivered afterwards); the
    # timer only wakes the wait when it is over.
    wake = QTimer()
    wake.setSingleShot(True)
    wake.start(delay_ms)
    deadline = time.monotonic() + delay_ms / 1000
    while not call.finished and time.monotonic() < deadline:
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents | wait)
    wake.stop()
    cancelled = False
    if not call.finished:
        dialog = QProgressDialog(label, "Cancel" if cancellable else "", 0, 0, parent)
        dialog.setObjectName("progress_dialog")
        dialog.setWindowTitle("PR Planner")
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setMinimumDuration(0)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        if not cancellable:
            dialog.setCancelButton(None)

        def on_cancel() -> None:
            nonlocal cancelled
            cancelled = True

        dialog.canceled.connect(on_cancel)
        dialog.show()
        # The call's end is also looked for on a tick: its signal can be late (_Inbox).
        tick = QTimer()
        tick.start(INBOX_POLL_MS)
        while not call.finished and not cancelled:
            QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents | wait)
            cancelled = cancelled or dialog.wasCanceled()
        tick.stop()
        dialog.canceled.disconnect(on_cancel)
        dialog.close()
        dialog.deleteLater()
    if cancelled and not call.finished:
        # Kept alive until it ends: the pool thread is still running it.
        _ABANDONED.add(call)  # until the waker hears it ended
        raise Cancelled()
    result, error = call.result, call.error
    call.let_go()
    if error is not None:
        raise error
    return result
