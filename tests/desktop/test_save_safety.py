"""The window never writes over what the user brought, and a failing save never closes it
or loses the session (pytest-qt; dialogs answered by the test)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from core.workbook.session_io import read_session, save_session
from tests.desktop import test_sessions as sessions

# The window and dialog fixtures of the session tests, shared by name.
settings = sessions.settings
dialogs = sessions.dialogs
make_window = sessions.make_window
window = sessions.window


@pytest.fixture
def rounds_file(tmp_path, shared_fixtures):
    path = tmp_path / "my_rounds.xlsx"
    shutil.copy(shared_fixtures / "rounds_simple.xlsx", path)
    return path


def test_save_as_onto_the_rounds_workbook_it_came_from_is_refused(window, dialogs, rounds_file):
    original = rounds_file.read_bytes()
    assert window.open_workbook(rounds_file)
    window.session.set_value("plan.margin_recall", 0.03)
    dialogs.save_names.append(rounds_file)  # the user picks the source in Save As
    window.save_as_action.trigger()
    assert rounds_file.read_bytes() == original
    title, text = dialogs.warnings[-1]
    assert title == "Could not save the session"
    assert "it is a file read here as input" in text
    assert window.isWindowModified() and window.isVisible()


def test_export_report_onto_the_source_or_a_foreign_file_is_refused(
    window, dialogs, rounds_file, tmp_path
):
    assert window.open_workbook(rounds_file)
    theirs = tmp_path / "budget.xlsx"
    shutil.copy(rounds_file, theirs)
    for target in (rounds_file, theirs):
        before = target.read_bytes()
        assert not window.export_report(target)
        assert target.read_bytes() == before
    assert "it is a file read here as input" in dialogs.warnings[0][1]
    assert "was not written by PR Planner" in dialogs.warnings[1][1]


def test_save_refuses_a_session_another_window_changed_on_disk(window, dialogs, tmp_path):
    target = tmp_path / "shared.xlsx"
    assert window.save_to(target)
    window.session.set_value("plan.margin_recall", 0.0311)
    time.sleep(0.01)
    save_session(target, read_session(target).state)  # another writer, in between
    theirs = target.read_bytes()
    window.save_action.trigger()
    assert target.read_bytes() == theirs
    assert "changed on disk since you opened it" in dialogs.warnings[-1][1]
    assert window.isWindowModified()
    assert window.session.get("plan.margin_recall") == 0.0311


@pytest.mark.parametrize("error", [OverflowError("int too large"), MemoryError()])
def test_an_unforeseen_save_failure_keeps_the_window_and_the_data(
    window, dialogs, tmp_path, monkeypatch, error
):
    def fail(*_args, **_kwargs):
        raise error

    monkeypatch.setattr("core.workbook.report.write_report", fail)
    window.session.set_value("plan.margin_recall", 0.0322)
    assert not window.save_to(tmp_path / "x.xlsx")
    assert dialogs.warnings and "failed unexpectedly" in dialogs.warnings[-1][1]
    assert window.isWindowModified()
    assert window.session.get("plan.margin_recall") == 0.0322


def test_close_with_a_save_that_fails_keeps_the_window_open(window, dialogs, tmp_path, monkeypatch):
    def fail(*_args, **_kwargs):
        raise OverflowError("cannot convert float infinity to integer")

    monkeypatch.setattr("core.workbook.report.write_report", fail)
    window.session.set_value("plan.margin_recall", 0.0333)
    dialogs.answer = QMessageBox.StandardButton.Save
    dialogs.save_names.append(tmp_path / "on close.xlsx")
    window.close()
    assert window.isVisible() and window.isWindowModified()
    assert window.session.get("plan.margin_recall") == 0.0333
    assert not (tmp_path / "on close.xlsx").exists()


def test_a_session_re_saved_by_another_program_is_saved_under_a_new_name(
    window, dialogs, tmp_path, monkeypatch
):
    target = tmp_path / "edited elsewhere.xlsx"
    assert window.save_to(target)
    # As if Excel had re-saved it (its name in "last modified by"): no longer ours.
    monkeypatch.setattr("desktop.main_window.is_ours", lambda path: False)
    assert window.open_workbook(target, ask=False)
    before = target.read_bytes()
    window.session.set_value("plan.margin_recall", 0.0344)
    window.save_action.trigger()  # Save becomes Save As; cancelled here
    _caption, suggested = dialogs.asked_save[-1]
    assert suggested.endswith("edited elsewhere session.xlsx")
    assert target.read_bytes() == before


def test_export_report_over_a_saved_session_is_refused_and_save_as_names_it(
    window, dialogs, tmp_path
):
    # Fuzz 17: a report over a saved session lost its settings; the question before a
    # replace did not say the file is a session.
    from core.session import SessionState

    session = tmp_path / "lead session.xlsx"
    save_session(session, SessionState())
    before = session.read_bytes()
    dialogs.save_names.append(session)  # Export report… onto the session, then cancel
    assert not window.export_report()
    assert session.read_bytes() == before
    title, text = dialogs.warnings[-1]
    assert title == "Could not write the report"
    assert "is a saved PR Planner session (your rounds and settings), not a report" in text
    dialogs.save_names.append(session)  # Save As onto it asks, naming what it is
    dialogs.answer = QMessageBox.StandardButton.No
    window.save_as_action.trigger()
    assert dialogs.questions[-1] == (
        "lead session.xlsx already exists (a session PR Planner saved). Replace it?"
    )
    assert session.read_bytes() == before


def test_save_with_a_long_named_workbook_open_asks_for_a_name(
    window, dialogs, tmp_path, shared_fixtures
):
    # Fuzz 17: the suggested "<250 letters> session.xlsx" is too long a name; Path.exists
    # raised from Save and Export report before any dialog, and the session could not be
    # saved at all.
    workbook = tmp_path / f"{'y' * 250}.xlsx"
    shutil.copy(shared_fixtures / "rounds_simple.xlsx", workbook)
    assert window.open_workbook(workbook)
    dialogs.save_names.append(tmp_path / "short session.xlsx")
    assert window.save()
    _caption, suggested = dialogs.asked_save[-1]
    assert len(Path(suggested).name.encode()) <= 255 and Path(suggested).name.startswith("yyy")
    assert (tmp_path / "short session.xlsx").is_file()
    dialogs.save_names.append("")  # Export report: the dialog opens; cancelled
    assert not window.export_report()
    assert len(Path(dialogs.asked_save[-1][1]).name.encode()) <= 255
