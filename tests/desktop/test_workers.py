"""Background tasks: progress, cancel, and stale results dropped (habit 8)."""

import time

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
