"""pytest-qt set-up for the desktop tests (spec page 05, habit 9).

The platform is set to ``offscreen`` in ``tests/conftest.py``; Qt warnings fail a test
(``qt_log_level_fail`` in pyproject.toml); and no test may leave a worker thread or an
active timer behind.
"""

import pytest
from PySide6.QtCore import QThreadPool, QTimer
from PySide6.QtWidgets import QApplication


@pytest.fixture(autouse=True)
def _no_leftover_threads_or_timers(qapp):
    yield
    pool = QThreadPool.globalInstance()
    finished = pool.waitForDone(20_000)
    for widget in QApplication.topLevelWidgets():
        widget.close()
    QApplication.processEvents()
    active = [
        timer.objectName() or repr(timer)
        for widget in QApplication.topLevelWidgets()
        for timer in widget.findChildren(QTimer)
        if timer.isActive() and not timer.property("prplanner_persistent")
    ]
    for widget in QApplication.topLevelWidgets():
        widget.deleteLater()
    QApplication.processEvents()
    assert finished, "a worker thread was still running 20 s after the test"
    assert not active, f"timers left running: {active}"
