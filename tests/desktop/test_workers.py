"""Background tasks: progress, cancel, and stale results dropped (habit 8)."""

import time

import pytest

from core.progress import step
from desktop.workers import TaskRunner


def slow_sum(control, chunks=50, pause=0.01):
    total = 0
    for i in range(chunks):
        time.sleep(pause)
        total += i
        step(control, i + 1, chunks)
    return total


def test_a_task_reports_progress_and_its_result(qtbot):
    runner = TaskRunner()
    progress = []
    runner.progress.connect(progress.append)
    with qtbot.waitSignal(runner.finished, timeout=10_000) as blocker:
        runner.start(lambda control: slow_sum(control, chunks=10))
    assert blocker.args == [sum(range(10))]
    qtbot.waitUntil(lambda: not runner.is_running)
    assert progress and progress[-1] <= 1.0


def test_cancel_stops_the_task_and_no_result_arrives(qtbot):
    runner = TaskRunner()
    results = []
    runner.finished.connect(results.append)
    runner.start(lambda control: slow_sum(control, chunks=500))
    with qtbot.waitSignal(runner.cancelled):
        runner.cancel()
    assert runner.wait(10_000)
    qtbot.wait(50)
    assert results == []


def test_a_newer_request_supersedes_a_stale_one(qtbot):
    runner = TaskRunner()
    results = []
    runner.finished.connect(results.append)
    runner.start(lambda control: slow_sum(control, chunks=30))
    with qtbot.waitSignal(runner.finished, timeout=10_000):
        runner.start(lambda control: "newest")
    runner.wait(10_000)
    qtbot.wait(50)
    assert results == ["newest"]


def test_a_failure_becomes_a_message(qtbot):
    from core.errors import InputError

    def bad(control):
        raise InputError("k must be a number > 0, got 0")

    runner = TaskRunner()
    with qtbot.waitSignal(runner.failed) as blocker:
        runner.start(bad)
    assert blocker.args == ["k must be a number > 0, got 0"]


def test_garbage_collection_waits_for_the_gui_thread_while_jobs_run(qtbot):
    """A cyclic collection on a pool thread could destroy a forgotten Qt widget there, which
    can crash the process: while our jobs run, the collector is paused; afterwards it is on
    again (and collections happen on the GUI thread)."""
    import gc

    from PySide6.QtWidgets import QWidget

    from desktop.workers import run_with_progress

    qtbot.waitUntil(gc.isenabled, timeout=5_000)  # jobs of earlier tests have ended
    seen_by_jobs = []

    def task(control):
        seen_by_jobs.append(gc.isenabled())
        return slow_sum(control, chunks=5)

    runner = TaskRunner()
    with qtbot.waitSignal(runner.finished, timeout=10_000):
        runner.start(task)
    runner.wait(10_000)
    qtbot.waitUntil(gc.isenabled, timeout=5_000)  # back on, from the GUI thread's timer

    parent = QWidget()
    qtbot.addWidget(parent)
    assert run_with_progress(parent, "Reading", lambda: (gc.isenabled(), 7)) == (False, 7)
    assert gc.isenabled()  # at once: this was the last job
    # A job whose window is gone still ends the pause.
    runner = TaskRunner()
    runner.start(task)
    runner.cancel()
    runner.wait(10_000)
    qtbot.waitUntil(gc.isenabled, timeout=5_000)
    assert seen_by_jobs and not any(seen_by_jobs)


def test_a_call_is_let_go_on_the_gui_thread(qtbot):
    """What a read or save held is freed on the GUI thread, never on the pool thread that
    ran it: a Qt object freed there while a signal to it waited in the GUI thread's queue
    crashed the app now and then (a top-up drawn right after labels were read)."""
    import threading

    from PySide6.QtWidgets import QWidget

    from desktop.workers import run_with_progress

    parent = QWidget()
    qtbot.addWidget(parent)
    freed_on = []

    class Held:
        def __del__(self):
            freed_on.append(threading.current_thread() is threading.main_thread())

    for _ in range(200):
        held = Held()
        assert run_with_progress(parent, "Reading", lambda held=held: 1) == 1
        del held
    qtbot.waitUntil(lambda: len(freed_on) == 200, timeout=10_000)
    assert all(freed_on)


def test_a_cancelled_call_is_let_go_on_the_gui_thread_once_it_ends(qtbot):
    import threading

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QProgressDialog, QWidget

    from core.progress import Cancelled
    from desktop import workers

    parent = QWidget()
    qtbot.addWidget(parent)
    gate = threading.Event()
    freed_on = []

    class Held:
        def __del__(self):
            freed_on.append(threading.current_thread() is threading.main_thread())

    def work(held=Held()):  # noqa: B008 - held by the call, freed with it
        gate.wait(10)
        return held

    def press_cancel():
        for dialog in parent.findChildren(QProgressDialog):
            dialog.cancel()

    QTimer.singleShot(100, press_cancel)
    with pytest.raises(Cancelled):
        workers.run_with_progress(parent, "Reading", work, cancellable=True, delay_ms=0)
    assert workers._ABANDONED  # kept until the pool thread is done with it
    gate.set()
    qtbot.waitUntil(lambda: not workers._ABANDONED, timeout=10_000)
    del work
    qtbot.waitUntil(lambda: bool(freed_on), timeout=10_000)
    assert freed_on == [True]


def test_a_task_on_its_own_thread_runs_while_the_pool_is_full(qtbot):
    # A scored sample stayed "Reading scored.csv…" for over 10 s behind other work in a
    # CI run: a short read the lead waits for does not queue behind simulations.
    import threading

    from PySide6.QtCore import QThreadPool

    release = threading.Event()
    busy = [TaskRunner() for _ in range(QThreadPool.globalInstance().maxThreadCount())]
    try:
        for runner in busy:
            runner.start(lambda control: release.wait(20))
        reader = TaskRunner()
        with qtbot.waitSignal(reader.finished, timeout=5_000) as done:
            reader.start(lambda control: "read", own_thread=True)
        assert done.args == ["read"]
        qtbot.waitUntil(lambda: not reader.is_running)
    finally:
        release.set()
        for runner in busy:
            assert runner.wait(10_000)
        # Their results reach the GUI thread before the runners go.
        qtbot.waitUntil(lambda: not any(runner.is_running for runner in busy))
        qtbot.wait(50)


def test_a_task_cancelled_while_it_waits_for_a_thread_never_runs(qtbot):
    # A read whose tab closed (or that a newer read replaced) held one of the two reading
    # threads when its turn came, and the lead's own read waited behind it.
    import threading

    from desktop.workers import reading_pool

    release = threading.Event()
    busy = [TaskRunner() for _ in range(reading_pool().maxThreadCount())]
    ran = []
    try:
        for runner in busy:
            runner.start(lambda control: release.wait(20), own_thread=True)
        stale = TaskRunner()
        stale.start(lambda control: ran.append("stale"), own_thread=True)
        stale.cancel()
    finally:
        release.set()
        for runner in busy:
            assert runner.wait(10_000)
    assert stale.wait(10_000)
    assert ran == []
    qtbot.waitUntil(lambda: not any(runner.is_running for runner in busy))
    qtbot.wait(50)
