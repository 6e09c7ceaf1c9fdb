"""Crash recovery in the window: a recovery file written a few seconds after each change,
removed by a save or a clean close, and a crashed run's session offered back at the next
start (a real crashed process: ``os._exit`` in a subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from PySide6.QtCore import QStandardPaths
from PySide6.QtWidgets import QFileDialog, QLabel, QMessageBox

from core.session import SessionState
from core.workbook.recovery import RecoveryStore
from desktop import main_window as main_window_module
from desktop.main_window import RECOVERY_DELAY_MS, MainWindow, app_settings, recovery_directory

PROJECT_ROOT = Path(__file__).resolve().parents[2]

CRASHING_RUN = textwrap.dedent(
    """
    import os, sys, time
    sys.path.insert(0, sys.argv[1])
    from PySide6.QtWidgets import QApplication
    app = QApplication(sys.argv[:1])
    from desktop.main_window import MainWindow, recovery_directory
    window = MainWindow(recovery_dir=recovery_directory())
    window.load_example()
    window.show()
    window.session.set_value("plan.margin_recall", 0.0375)
    window.session.set_value("plan.s", 6.25)
    window.session.set_value("ensemble.parent_name", "kept after the crash")
    deadline = time.monotonic() + 20
    while not window.recovery.path.exists() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.02)
    print("written" if window.recovery.path.exists() else "not written", flush=True)
    os._exit(1)
    """
)


@pytest.fixture
def folders(tmp_path, monkeypatch):
    settings = tmp_path / "settings"
    recovery = tmp_path / "recovery"
    settings.mkdir()
    monkeypatch.setenv(main_window_module.SETTINGS_DIR_ENV, str(settings))
    monkeypatch.setenv(main_window_module.RECOVERY_DIR_ENV, str(recovery))
    return tmp_path


@pytest.fixture
def answers(monkeypatch):
    """The recovery offer is answered with ``answers.offer`` ("Restore" or "Discard") by
    clicking that button of the real box; its texts are recorded in the list. The
    unsaved-changes question answers ``answers.close``; Save As is cancelled."""

    class Answers(list):
        offer = "Restore"
        close = QMessageBox.StandardButton.Discard

    asked = Answers()

    def exec_(box):
        assert box.objectName() == "recovery_offer", box.text()
        asked.append(box.text())
        (button,) = [b for b in box.buttons() if b.text().replace("&", "") == asked.offer]
        button.click()
        return 0

    monkeypatch.setattr(QMessageBox, "exec", exec_)
    monkeypatch.setattr(QMessageBox, "question", lambda *args, **kwargs: asked.close)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *args: ("", ""))
    return asked


@pytest.fixture
def make_window(qtbot, folders, answers):
    made = []

    def make(*, fast: bool = True) -> MainWindow:
        window = MainWindow(settings=app_settings(), recovery_dir=recovery_directory())
        qtbot.addWidget(window)
        if fast:
            window.recovery_timer.setInterval(50)
        window.load_example()
        window.show()
        made.append(window)
        return window

    yield make
    for window in made:
        window.session.undo_stack.setClean()
        window.close()
        assert not window.recovery_timer.isActive()


def session_files(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.glob("session-*.json"))


def leave_a_gone_run(folder: Path, state: SessionState, document=None) -> Path:
    """A recovery file whose process is gone (its lock released), like a crashed run's."""
    store = RecoveryStore(folder)
    path = store.write(state, document=document)
    store.close()
    return path


def test_recovery_directory_follows_the_env_var(monkeypatch, tmp_path):
    monkeypatch.setenv(main_window_module.RECOVERY_DIR_ENV, str(tmp_path / "here"))
    assert recovery_directory() == tmp_path / "here"
    monkeypatch.delenv(main_window_module.RECOVERY_DIR_ENV)
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    assert recovery_directory() == Path(base) / "recovery"
    assert 2000 <= RECOVERY_DELAY_MS <= 5000


def test_a_crashed_run_is_offered_back_and_restored(qtbot, make_window, folders, answers):
    recovery = folders / "recovery"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYQTGRAPH_QT_LIB="PySide6")
    run = subprocess.run(
        [sys.executable, "-c", CRASHING_RUN, str(PROJECT_ROOT)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1, run.stderr
    assert "written" in run.stdout.split(), run.stdout + run.stderr
    assert len(session_files(recovery)) == 1  # the crashed run did not clean up

    window = make_window()
    assert window.offer_recovery()
    assert len(answers) == 1 and "did not close normally" in answers[0]
    state = window.session.state
    assert state.plan.margin_recall == 0.0375
    assert state.plan.s == 6.25
    assert state.ensemble.parent_name == "kept after the crash"
    assert len(state.rounds) == 10
    assert window.isWindowModified()  # restored means unsaved
    assert "Recovered session" in window.windowTitle()
    assert "Restored" in window.statusBar().currentMessage()
    # The crashed run's file is gone; the restored session is protected by this run's own.
    assert session_files(recovery) == [window.recovery.path.name]

    window.save_action.trigger()  # no file yet: Save asks for a name (cancelled here)
    assert window.isWindowModified()

    # A third start finds nothing to offer while this window is alive.
    other = make_window()
    assert not other.offer_recovery() and len(answers) == 1


def test_discard_removes_the_crashed_session(make_window, folders, answers):
    recovery = folders / "recovery"
    leave_a_gone_run(recovery, SessionState(confidence=0.8))
    answers.offer = "Discard"
    window = make_window()
    before = window.session.state
    assert not window.offer_recovery()
    assert len(answers) == 1
    assert window.session.state is before and not window.isWindowModified()
    assert session_files(recovery) == []
    assert "discarded" in window.statusBar().currentMessage()


def test_restored_session_saves_back_towards_its_file(make_window, folders, answers, tmp_path):
    recovery = folders / "recovery"
    document = tmp_path / "team plan.xlsx"
    leave_a_gone_run(recovery, SessionState(confidence=0.8), document=document)
    window = make_window()
    assert window.offer_recovery()
    assert window.session.get("confidence") == 0.8
    assert window.windowTitle().startswith("team plan.xlsx (recovered)")
    asked = []

    def get_save(parent, caption, start="", *args):
        asked.append(start)
        return ("", "")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(QFileDialog, "getSaveFileName", get_save)
        window.save_action.trigger()  # never overwritten without asking
    assert asked == [str(tmp_path / "team plan session.xlsx")]


def test_nothing_to_offer_asks_nothing(make_window, answers):
    window = make_window()
    assert not window.offer_recovery()
    assert answers == []


def test_written_after_quiet_seconds_and_removed_by_save_and_clean_close(
    qtbot, make_window, folders, tmp_path
):
    recovery = folders / "recovery"
    window = make_window(fast=False)
    assert window.recovery_timer.interval() == RECOVERY_DELAY_MS
    window.session.set_value("plan.margin_recall", 0.031)
    assert window.recovery_timer.isActive()
    # Every edit starts the quiet period again (QTimer.start restarts a running timer);
    # watched through the calls, not the clock, so a loaded machine cannot fail it.
    starts = []
    start = window.recovery_timer.start
    window.recovery_timer.start = lambda *args: (starts.append(args), start(*args))
    window.session.set_value("plan.margin_recall", 0.032)
    window.session.set_value("plan.margin_recall", 0.0325)
    assert len(starts) == 2 and window.recovery_timer.isActive()
    del window.recovery_timer.start
    assert not window.recovery.path.exists()
    window.recovery_timer.setInterval(50)
    window.session.set_value("plan.margin_recall", 0.033)
    qtbot.waitUntil(window.recovery.path.exists, timeout=5000)
    assert not window.recovery_timer.isActive()

    # What was written is this session (read as a later run would, once this one is gone).
    probe = RecoveryStore(recovery)
    assert probe.latest() is None  # this run is alive: its file is not offered

    assert window.save_to(tmp_path / "saved.xlsx")
    assert not window.recovery.path.exists()  # clean after save: nothing to recover

    window.session.set_value("plan.margin_recall", 0.034)
    qtbot.waitUntil(window.recovery.path.exists, timeout=5000)
    window.undo_action.trigger()  # back to the saved state: clean again
    assert not window.isWindowModified()
    assert not window.recovery.path.exists()

    window.session.set_value("plan.margin_recall", 0.035)
    qtbot.waitUntil(window.recovery.path.exists, timeout=5000)
    window.session.undo_stack.setClean()
    window.close()  # a clean close leaves nothing behind
    assert not window.recovery_timer.isActive()
    assert session_files(recovery) == []
    assert sorted(recovery.glob("*.lock")) == []


def test_discarding_on_close_removes_the_recovery_file(qtbot, make_window, folders, answers):
    recovery = folders / "recovery"
    window = make_window()
    window.session.set_value("plan.margin_recall", 0.036)
    qtbot.waitUntil(window.recovery.path.exists, timeout=5000)
    answers.close = QMessageBox.StandardButton.Discard  # "Unsaved changes": discard
    window.close()
    assert not window.isVisible()
    assert session_files(recovery) == []


def test_cancelled_close_keeps_recovering(qtbot, make_window, answers):
    window = make_window()
    window.session.set_value("plan.margin_recall", 0.036)
    answers.close = QMessageBox.StandardButton.Cancel
    window.close()
    assert window.isVisible()
    qtbot.waitUntil(window.recovery.path.exists, timeout=5000)


def test_crashed_session_is_kept_until_it_was_offered(qtbot, make_window, folders, tmp_path):
    recovery = folders / "recovery"
    leftover = leave_a_gone_run(recovery, SessionState(confidence=0.8))
    window = make_window()
    window.session.set_value("plan.margin_recall", 0.036)
    qtbot.waitUntil(window.recovery.path.exists, timeout=5000)
    assert window.save_to(tmp_path / "saved.xlsx")  # clean, but the offer is still to come
    assert leftover.exists()
    window.close()
    assert leftover.exists()  # the next start offers it


def test_recovery_folder_that_cannot_be_written_is_said_once(qtbot, qapp, folders, answers):
    blocked = folders / "not a folder"
    blocked.write_text("a file where the folder should be")
    window = MainWindow(settings=app_settings(), recovery_dir=blocked / "recovery")
    qtbot.addWidget(window)
    window.load_example()
    window.recovery_timer.setInterval(20)
    window.session.set_value("plan.margin_recall", 0.036)
    qtbot.waitUntil(lambda: "Crash recovery" in window.statusBar().currentMessage(), timeout=5000)
    window.show_status("")
    window.session.set_value("plan.margin_recall", 0.037)
    qtbot.wait(100)
    assert window.statusBar().currentMessage() == ""  # said once, not on every edit
    window.session.undo_stack.setClean()
    window.close()


def test_window_without_recovery_folder_keeps_no_file(qtbot, folders, answers):
    window = MainWindow(settings=app_settings())
    qtbot.addWidget(window)
    window.load_example()
    window.session.set_value("plan.margin_recall", 0.036)
    assert window.recovery is None and not window.recovery_timer.isActive()
    assert not window.offer_recovery()
    window.session.undo_stack.setClean()
    window.close()
    assert not (folders / "recovery").exists()


def test_a_damaged_recovery_file_is_set_aside_and_said(make_window, folders, answers):
    recovery = folders / "recovery"
    path = leave_a_gone_run(recovery, SessionState())
    path.write_text('{"format": "prplanner-recovery", "version": 1, "rounds": 5}')
    window = make_window()
    assert window.offer_recovery() is False
    assert answers == []  # nothing offered
    assert "set aside" in window.statusBar().currentMessage()
    assert (recovery / path.with_suffix(".damaged").name).exists()


def test_the_set_aside_notice_stays_when_the_last_file_is_reopened(make_window, folders, answers):
    # The reopening's "Reopened …" replaced the notice at once: the lead never heard that
    # an unsaved session was set aside (review 14).
    first = make_window()
    saved = folders / "my session.xlsx"
    assert first.save_to(saved)
    first.close()
    path = leave_a_gone_run(folders / "recovery", SessionState())
    path.write_text('{"format": "prplanner-recovery", "version": 1, "rounds": 5}')
    window = make_window()
    assert window.offer_recovery() is False
    assert window.reopen_last_document()
    message = window.statusBar().currentMessage()
    assert "set aside" in message and "Reopened my session.xlsx" in message
    # A reopening that fails keeps it too.
    saved.unlink()
    path = leave_a_gone_run(folders / "recovery", SessionState())
    path.write_text("[]")
    again = make_window()
    assert again.offer_recovery() is False
    assert not again.reopen_last_document()
    message = again.statusBar().currentMessage()
    assert "set aside" in message and "my session.xlsx, the file you worked on last" in message


def test_a_failing_recovery_offer_does_not_stop_the_start(make_window, monkeypatch):
    from desktop import app as app_module

    window = make_window()

    def broken() -> bool:
        raise RuntimeError("a bug")

    monkeypatch.setattr(window, "offer_recovery", broken)
    assert app_module._offer_recovery(window) is False
    assert "could not be restored" in window.statusBar().currentMessage()


def test_a_tab_that_fails_to_build_leaves_the_others(qtbot, folders, answers, monkeypatch):
    window = MainWindow(settings=app_settings(), defer_tabs=True)
    qtbot.addWidget(window)
    window.load_example()
    real = window._make_tab

    def make_tab(key, entry):
        if key == "prevalence":
            raise RuntimeError("a bug in one tab")
        return real(key, entry)

    monkeypatch.setattr(window, "_make_tab", make_tab)
    window.build_deferred_tabs()
    assert window.tabs.count() == len(window.tab_keys)
    names = [type(window.tabs.widget(i)).__name__ for i in range(window.tabs.count())]
    assert names == ["PlanTab", "EvaluateTab", "QWidget", "EnsembleTab", "HistoryTab"]
    stand_in = window.tabs.widget(window.tab_keys.index("prevalence"))
    assert any("could not be built" in label.text() for label in stand_in.findChildren(QLabel))
    window.session.undo_stack.setClean()
    window.close()
