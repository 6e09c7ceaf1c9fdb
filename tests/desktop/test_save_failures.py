"""Saving and opening from the window: failures never close it or lose the session, the
file dialog never replaces a file PR Planner did not write, workbooks are read and written
off the GUI thread, and 32,000-character names neither stretch the window nor make huge
plot snapshots (pytest-qt; every dialog answered by the test)."""

from __future__ import annotations

import datetime as dt
import errno
import io
import logging
import shutil
import time

import openpyxl
import pytest
from PIL import Image
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (
    QApplication,
    QMessageBox,
    QProgressDialog,
    QPushButton,
    QWidget,
)

from core.errors import InputError
from core.workbook.safe_io import is_ours
from core.workbook.session_io import read_session
from desktop import main_window as main_window_module
from desktop.main_window import MAX_SNAPSHOT_SIZE, png_bytes
from tests.desktop import test_sessions as sessions

# The window and dialog fixtures of the session tests, shared by name.
settings = sessions.settings
dialogs = sessions.dialogs
make_window = sessions.make_window
window = sessions.window

LONG = ("x" * 9 + " ") * 3200  # 32,000 characters


@pytest.fixture
def rounds_file(tmp_path, shared_fixtures):
    path = tmp_path / "my_rounds.xlsx"
    shutil.copy(shared_fixtures / "rounds_simple.xlsx", path)
    return path


def fail_with(error):
    def fail(*_args, **_kwargs):
        raise error

    return fail


@pytest.mark.parametrize(
    "error",
    [
        InputError("k must be in (0, 1)"),
        OSError(errno.ENOSPC, "No space left on device"),
        OverflowError("int too large to convert to float"),
        ValueError("Cannot convert inf to Excel"),
        MemoryError(),
        RuntimeError("a bug nobody foresaw"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_any_save_failure_keeps_the_window_and_the_data(
    window, dialogs, tmp_path, monkeypatch, caplog, error
):
    monkeypatch.setattr("core.workbook.report.write_report", fail_with(error))
    window.session.set_value("plan.margin_recall", 0.0321)
    with caplog.at_level(logging.ERROR, logger=main_window_module.__name__):
        assert not window.save_to(tmp_path / "kept.xlsx")
    assert len(dialogs.warnings) == 1
    title, text = dialogs.warnings[0]
    assert title == "Could not save the session" and "still open" in text
    if isinstance(error, InputError):
        assert str(error) in text
    else:
        assert "failed unexpectedly" in text and type(error).__name__ in text
    # Only what nobody foresaw is logged with its traceback.
    logged = [record for record in caplog.records if record.exc_info]
    assert len(logged) == (1 if isinstance(error, RuntimeError) else 0)
    assert window.isVisible() and window.isWindowModified()
    assert window.session.get("plan.margin_recall") == 0.0321
    assert list(tmp_path.glob("*.xlsx")) == [] and list(tmp_path.glob(".*.tmp")) == []


@pytest.mark.parametrize("error", [OSError(errno.ENOSPC, "full"), RuntimeError("bug")])
def test_closing_and_answering_save_that_fails_keeps_the_window_open(
    window, dialogs, tmp_path, monkeypatch, error
):
    monkeypatch.setattr("core.workbook.report.write_report", fail_with(error))
    window.session.set_value("plan.margin_recall", 0.0333)
    dialogs.answer = QMessageBox.StandardButton.Save
    dialogs.save_names.append(tmp_path / "on close.xlsx")
    window.close()
    assert window.isVisible() and window.isWindowModified()
    assert window.session.get("plan.margin_recall") == 0.0333
    assert dialogs.warnings and not (tmp_path / "on close.xlsx").exists()


def test_save_of_a_rounds_workbook_never_touches_it_and_the_dialog_asks_again(
    window, dialogs, rounds_file, tmp_path
):
    source = rounds_file.read_bytes()
    theirs = tmp_path / "budget.xlsx"
    shutil.copy(rounds_file, theirs)
    foreign = theirs.read_bytes()
    taken = tmp_path / "my_rounds session.xlsx"  # the obvious new name is someone else's
    shutil.copy(rounds_file, taken)
    assert window.open_workbook(rounds_file)
    window.session.set_value("plan.margin_recall", 0.03)

    # Save goes to Save As; the user tries the source, a case variant, a foreign file,
    # then a new name.
    new = tmp_path / "planned.xlsx"
    dialogs.save_names += [rounds_file, tmp_path / "MY_ROUNDS.xlsx", theirs, new]
    window.save_action.trigger()
    suggested = [start for _caption, start in dialogs.asked_save]
    assert suggested[0] == str(tmp_path / "my_rounds session 2.xlsx")  # new, not taken
    assert len(suggested) == 4  # asked again after each refusal
    texts = [text for _title, text in dialogs.warnings]
    assert "it is a file read here as input" in texts[0] and "choose another" in texts[0].casefold()
    assert "it is a file read here as input" in texts[1]
    assert "was not written by PR Planner" in texts[2]
    # Each refusal says once what to do (the dialog adds nothing to it).
    assert all(text.casefold().count("choose a") == 1 for text in texts[:3])
    assert rounds_file.read_bytes() == source and theirs.read_bytes() == foreign
    assert new.is_file() and is_ours(new) and window.path == new
    assert not window.isWindowModified()
    assert not (tmp_path / "MY_ROUNDS.xlsx").exists()


def test_replacing_a_file_pr_planner_wrote_is_confirmed(window, dialogs, tmp_path):
    earlier = tmp_path / "earlier.xlsx"
    assert window.export_report(earlier)
    before = earlier.read_bytes()
    window.session.set_value("plan.margin_recall", 0.0345)
    dialogs.save_names += [earlier]  # "No" to replacing it, then cancel
    dialogs.answer = QMessageBox.StandardButton.No
    assert not window.save_as()
    assert earlier.read_bytes() == before and "already exists" in dialogs.questions[-1]
    dialogs.save_names += [earlier]
    dialogs.answer = QMessageBox.StandardButton.Yes
    assert window.save_as()
    assert read_session(earlier).state.plan.margin_recall == 0.0345


def test_save_refuses_a_session_changed_on_disk_and_offers_save_as(
    window, dialogs, tmp_path, monkeypatch
):
    mine = tmp_path / "shared.xlsx"
    assert window.save_to(mine)
    window.session.set_value("plan.margin_recall", 0.0377)
    time.sleep(0.01)
    assert window.export_report(tmp_path / "other.xlsx")  # another writer, same file:
    shutil.copy(tmp_path / "other.xlsx", mine)
    theirs = mine.read_bytes()
    asked: list[str] = []

    def warning(parent, title, text, *args, **kwargs):
        asked.append(text)
        return QMessageBox.StandardButton.Save  # "save your version under another name"

    monkeypatch.setattr(QMessageBox, "warning", warning)
    dialogs.save_names.append(tmp_path / "mine too.xlsx")
    assert window.save()
    assert "changed on disk since you opened it" in asked[0]
    assert dialogs.asked_save[-1][1] != str(mine)  # Save As suggests another name
    assert mine.read_bytes() == theirs and window.path == tmp_path / "mine too.xlsx"
    assert read_session(tmp_path / "mine too.xlsx").state.plan.margin_recall == 0.0377


def slow(function, seconds):
    def wrapped(*args, **kwargs):
        time.sleep(seconds)
        return function(*args, **kwargs)

    return wrapped


def ticking(interval_ms: int = 20) -> tuple[QTimer, list[float]]:
    ticks: list[float] = []
    timer = QTimer()
    timer.setInterval(interval_ms)
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    return timer, ticks


def progress_dialogs() -> list[QProgressDialog]:
    return [
        widget
        for widget in QApplication.topLevelWidgets()
        if isinstance(widget, QProgressDialog) and widget.isVisible()
    ]


def test_open_reads_off_the_gui_thread_with_progress(window, rounds_file, monkeypatch):
    monkeypatch.setattr(
        main_window_module, "_read_workbook", slow(main_window_module._read_workbook, 1.0)
    )
    timer, ticks = ticking()
    seen: list[str] = []
    QTimer.singleShot(700, lambda: seen.extend(d.labelText() for d in progress_dialogs()))
    timer.start()
    started = time.monotonic()
    assert window.open_workbook(rounds_file)
    timer.stop()
    assert time.monotonic() - started >= 1.0
    assert len(ticks) >= 10  # the event loop ran all along (a frozen one gives 0)
    assert seen == ["Reading my_rounds.xlsx…"]
    assert progress_dialogs() == []
    assert window.path == rounds_file and len(window.session.state.rounds) == 10


def test_cancel_of_a_slow_open_keeps_the_session(window, rounds_file, monkeypatch):
    monkeypatch.setattr(
        main_window_module, "_read_workbook", slow(main_window_module._read_workbook, 1.5)
    )
    before = window.session.state

    def cancel() -> None:
        (dialog,) = progress_dialogs()
        (button,) = dialog.findChildren(QPushButton)
        assert button.text() == "Cancel"
        button.click()

    QTimer.singleShot(700, cancel)
    assert not window.open_workbook(rounds_file)
    assert window.session.state is before and window.path is None
    assert "cancelled" in window.statusBar().currentMessage()


def test_save_runs_off_the_gui_thread_and_close_waits_for_it(
    window, dialogs, tmp_path, monkeypatch
):
    from core.workbook import report

    monkeypatch.setattr(report, "write_report", slow(report.write_report, 1.0))
    window.session.set_value("plan.margin_recall", 0.0388)
    timer, ticks = ticking()
    closed_during_save: list[bool] = []

    def try_to_close() -> None:
        window.close()  # refused while the file is being written
        closed_during_save.append(not window.isVisible())

    QTimer.singleShot(500, try_to_close)
    timer.start()
    assert window.save_to(tmp_path / "slow.xlsx")
    timer.stop()
    assert len(ticks) >= 10
    assert closed_during_save == [False]
    assert window.isVisible() and not window.isWindowModified()
    assert read_session(tmp_path / "slow.xlsx").state.plan.margin_recall == 0.0388


def test_a_failed_open_of_any_kind_changes_nothing(window, dialogs, rounds_file, monkeypatch):
    monkeypatch.setattr(main_window_module, "_read_workbook", fail_with(MemoryError()))
    before = window.session.state
    assert not window.open_workbook(rounds_file)
    assert window.session.state is before
    assert "MemoryError" in dialogs.warnings[-1][1]


def long_rounds_workbook(path):
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["round", "date", "classifier", "k", "TP", "FP", "FN", "TN", "notes"])
    for number, (tp, fp) in enumerate(((90, 10), (80, 12)), start=1):
        sheet.append(
            [f"R{number}{LONG}", dt.date(2026, number, 1), f"C{LONG}", 0.03, tp, fp, 20, 400, LONG]
        )
    workbook.save(path)
    return path


def test_32000_character_names_stretch_nothing(window, dialogs, tmp_path):
    assert window.open_workbook(long_rounds_workbook(tmp_path / "long.xlsx"))
    assert len(window.session.state.rounds) == 2
    screen = window.screen().availableGeometry()
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        QApplication.processEvents()
        assert window.width() <= max(screen.width(), 1500), window.tabs.tabText(index)
    widest = max(widget.width() for widget in window.findChildren(QWidget))
    assert widest <= max(screen.width(), 1500)
    assert len(window.rounds_panel.previous.text()) < 200  # cut, the full name in the data
    images = window.plot_snapshots()
    assert images
    for data in images.values():
        with Image.open(io.BytesIO(data)) as picture:
            assert picture.width <= MAX_SNAPSHOT_SIZE.width()
            assert picture.height <= MAX_SNAPSHOT_SIZE.height()
    target = tmp_path / "long session.xlsx"
    assert window.save_to(target)
    restored = read_session(target).state.rounds
    assert restored[0].round == f"R1{LONG}".strip()  # the data keeps every character


def test_snapshots_of_a_huge_widget_are_scaled_down(qtbot):
    widget = QWidget()
    qtbot.addWidget(widget)
    widget.resize(9000, 500)
    with Image.open(io.BytesIO(png_bytes(widget))) as picture:
        assert picture.size == (MAX_SNAPSHOT_SIZE.width(), 133)  # 500 * 2400 / 9000
    widget.resize(300, 200)
    with Image.open(io.BytesIO(png_bytes(widget))) as picture:
        assert picture.size == (600, 400)  # small ones at twice their size, for print
    widget.resize(1500, 500)
    with Image.open(io.BytesIO(png_bytes(widget))) as picture:
        assert picture.size == (2400, 800)  # as much of twice as fits
