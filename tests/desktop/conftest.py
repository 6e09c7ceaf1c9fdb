"""pytest-qt set-up and shared fixtures for the desktop tests.

The platform is set to ``offscreen`` in ``tests/conftest.py``; Qt warnings fail a test
(``qt_log_level_fail`` in pyproject.toml); and no test may leave a worker thread or an
active timer behind.
"""

import pytest
from PySide6.QtCore import QThreadPool, QTimer
from PySide6.QtWidgets import QApplication, QDialog, QFileDialog, QInputDialog, QMessageBox

#: Static dialog helpers that block until a person answers.
_MODAL_HELPERS = [
    (QFileDialog, name)
    for name in ("getOpenFileName", "getOpenFileNames", "getSaveFileName", "getExistingDirectory")
] + [(QMessageBox, name) for name in ("question", "warning", "critical", "information", "about")]
_MODAL_HELPERS += [(QInputDialog, name) for name in ("getText", "getInt", "getDouble", "getItem")]


@pytest.fixture(autouse=True)
def _field_words(_core_words):
    """Tabs tested on their own speak as in the window: field labels, not parameter names."""
    from core.errors import use_words
    from desktop.formatting import FIELD_WORDS

    use_words(FIELD_WORDS)


@pytest.fixture(autouse=True)
def _no_unanswered_dialogs(monkeypatch):
    """A modal dialog nobody answers would hang the run until CI's time limit; fail fast.

    Tests that expect a dialog monkeypatch the helper themselves (their patch wins).
    """

    def refuse(owner, name):
        def unexpected(*args, **kwargs):
            raise AssertionError(
                f"the test opened a real modal dialog ({owner.__name__}.{name}); "
                "monkeypatch it with the answer a user would give"
            )

        return unexpected

    for owner, name in _MODAL_HELPERS:
        monkeypatch.setattr(owner, name, staticmethod(refuse(owner, name)))
    monkeypatch.setattr(QDialog, "exec", lambda self: refuse(type(self), "exec")())
    monkeypatch.setattr(QMessageBox, "exec", lambda self: refuse(QMessageBox, "exec")())


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


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    """The main window with the bundled example, shown; settings in ``tmp_path``. Closed
    without the unsaved-changes question at the end."""
    from desktop import main_window as main_window_module
    from desktop.main_window import MainWindow, app_settings

    monkeypatch.setenv(main_window_module.SETTINGS_DIR_ENV, str(tmp_path / "settings"))
    widget = MainWindow(settings=app_settings())
    qtbot.addWidget(widget)
    widget.load_example()
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    widget.session.undo_stack.setClean()
    widget.close()
