"""Sessions as workbooks from the window: Save, Save As, Open, Open Recent, Export report,
Import scored sample, the example session at start, the close prompt (pytest-qt, acting
through the menus with QFileDialog/QMessageBox answered by the test)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import errno
import io
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import openpyxl
import pytest
from PIL import Image
from PySide6.QtCore import QDate, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QDialog,
    QFileDialog,
    QMessageBox,
    QPushButton,
)

from core.bayes import Prior
from core.confusion import ConfusionMatrix
from core.session import EnsembleChild, SessionState
from core.workbook import safe_io
from core.workbook.rounds import read_rounds
from core.workbook.session_io import read_session
from desktop import app as app_module
from desktop import main_window as main_window_module
from desktop import resources
from desktop.main_window import EXAMPLE_TITLE, MainWindow, app_settings


@pytest.fixture
def settings(tmp_path, monkeypatch):
    folder = tmp_path / "settings"
    folder.mkdir()
    monkeypatch.setenv(main_window_module.SETTINGS_DIR_ENV, str(folder))
    return app_settings()


class Dialogs:
    """Answers for the static QFileDialog / QMessageBox functions, and what was asked."""

    def __init__(self, monkeypatch):
        self.save_names: list = []  # answers for getSaveFileName, in order ("" = cancel)
        self.open_names: list = []
        self.asked_save: list[tuple[str, str]] = []  # (caption, suggested path)
        self.asked_open: list[str] = []
        self.warnings: list[tuple[str, str]] = []
        self.questions: list[str] = []
        self.answer = QMessageBox.StandardButton.Discard

        def get_save(parent, caption, start="", filters="", *args, **kwargs):
            self.asked_save.append((caption, start))
            return (str(self.save_names.pop(0)) if self.save_names else "", filters)

        def get_open(parent, caption, start="", filters="", *args, **kwargs):
            self.asked_open.append(caption)
            return (str(self.open_names.pop(0)) if self.open_names else "", filters)

        def warning(parent, title, text, *args, **kwargs):
            self.warnings.append((title, text))
            return QMessageBox.StandardButton.Ok

        def question(parent, title, text, *args, **kwargs):
            self.questions.append(text)
            return self.answer

        monkeypatch.setattr(QFileDialog, "getSaveFileName", get_save)
        monkeypatch.setattr(QFileDialog, "getOpenFileName", get_open)
        monkeypatch.setattr(QMessageBox, "warning", warning)
        monkeypatch.setattr(QMessageBox, "question", question)


@pytest.fixture
def dialogs(monkeypatch):
    return Dialogs(monkeypatch)


@pytest.fixture
def make_window(qtbot, settings, dialogs):
    made = []

    def make(example: bool = True) -> MainWindow:
        window = MainWindow(settings=settings)
        qtbot.addWidget(window)
        if example:
            window.load_example()
        window.show()
        qtbot.waitExposed(window)
        made.append(window)
        return window

    yield make
    for window in made:
        window.session.undo_stack.setClean()  # teardown closes without asking
        window.close()


@pytest.fixture
def window(make_window):
    return make_window()


def status(window: MainWindow) -> str:
    return window.statusBar().currentMessage()


def edit_many_inputs(qtbot, window: MainWindow) -> None:
    """Change inputs of every tab: some through the widgets, the rest through the model."""
    plan = window.tabs.widget(0)
    for spin, text in ((plan.s_slider.spin, "3.7"), (plan.v_slider.spin, "2345")):
        spin.setFocus()
        spin.selectAll()
        qtbot.keyClicks(spin, text)
        qtbot.keyClick(spin, Qt.Key.Key_Return)
    window.rounds_panel.table.selectRow(3)
    qtbot.mouseClick(window.rounds_panel.use_button, Qt.MouseButton.LeftButton)
    session = window.session
    changes = [
        ("confidence", 0.9),
        ("plan.margin_precision", 0.0315),
        ("plan.margin_recall", 0.0425),
        ("plan.cost_pos", 2.5),
        ("plan.cost_neg", 0.125),
        ("plan.method", "optimal"),
        ("plan.bayesian", True),
        ("plan.fpc", True),
        ("plan.expected_precision", 0.8765),
        ("plan.expected_recall", 0.6543),
        ("plan.prior_preset", "custom"),
        ("plan.prior", Prior(a11=3.25, a01=0.5, a10=1.0 / 3.0, a00=7.0, name="mine")),
        ("plan.population.mode", "k"),
        ("plan.population.k", 0.0123456789),
        ("evaluate.matrix", ConfusionMatrix(tp=123, fp=45, fn=67, tn=8901)),
        ("evaluate.population.mode", "random"),
        ("evaluate.replicates", 2500),
        ("evaluate.seed", 99),
        ("prevalence.reference_prevalence", 0.0375),
        ("prevalence.eta_min", 1e-4),
        ("prevalence.compared_rounds", ("TR-01", "FI-02")),
        ("ensemble.parent_name", "=all models"),
        ("ensemble.parent_size", 98_765),
        (
            "ensemble.children",
            (EnsembleChild(name="ünïcode", size=5000, overlap=1200),),
        ),
        ("ensemble.margin", 0.025),
        ("ensemble.mix", "sample"),
    ]
    for path, value in changes:
        assert session.set_value(path, value) is None, path


def test_save_as_then_open_in_a_fresh_window_restores_everything(
    qtbot, make_window, dialogs, tmp_path
):
    first = make_window()
    edit_many_inputs(qtbot, first)
    state = first.session.state
    assert state.plan.s == pytest.approx(3.7) and state.plan.v == 2345
    assert state.previous_round == state.rounds[3].round
    assert state != SessionState(rounds=state.rounds)
    assert first.isWindowModified()

    target = tmp_path / "my session.xlsx"
    dialogs.save_names.append(target)
    first.save_action.trigger()  # the example has no file: Save asks for a name
    assert dialogs.asked_save[0][0] == "Save session"
    assert target.is_file()
    assert not first.isWindowModified()
    assert first.windowTitle().startswith("my session.xlsx")
    assert str(target) in status(first)
    assert first.path == target

    second = make_window()
    dialogs.open_names.append(target)
    second.open_action.trigger()
    assert second.session.state == state  # every input, round, prior, s, v, margins
    assert second.path == target and not second.isWindowModified()
    assert second.windowTitle().startswith("my session.xlsx")
    assert dialogs.warnings == [] and second._problems_box is None

    # Save on a saved session overwrites it without asking.
    second.session.set_value("plan.margin_recall", 0.061)
    asked = len(dialogs.asked_save)
    second.save_action.trigger()
    assert len(dialogs.asked_save) == asked and not second.isWindowModified()
    assert read_session(target).state.plan.margin_recall == 0.061


def test_saved_session_has_plot_snapshots_on_its_plots_sheet(window, dialogs, tmp_path):
    target = tmp_path / "with plots.xlsx"
    dialogs.save_names.append(target)
    window.save_as_action.trigger()
    book = openpyxl.load_workbook(target)
    assert "Plots" in book.sheetnames
    sheet = book["Plots"]
    titles = [row[0] for row in sheet.iter_rows(values_only=True) if row[0]]
    images = sheet._images
    assert len(images) == len(titles) >= 10
    # Every tab's plots are there, named "Tab: plot title" (titles as the tabs set them).
    for tab in ("Plan", "Evaluate", "Prevalence", "Ensemble", "History"):
        assert any(title.startswith(f"{tab}: ") for title in titles), tab
    assert "Plan: Precision: interval width vs s" in titles
    assert "History: Precision over time" in titles
    assert not any("PR curve of the scored sample" in title for title in titles)  # empty
    for image in images:
        with Image.open(io.BytesIO(image._data())) as picture:
            assert picture.format == "PNG"
            assert picture.width >= 280 and picture.height >= 100
    with zipfile.ZipFile(target) as archive:
        assert sum(name.startswith("xl/media/") for name in archive.namelist()) == len(images)


def test_snapshots_are_bounded_and_in_reading_order(window):
    from desktop.main_window import MAX_SNAPSHOT_SIZE

    images = window.plot_snapshots()
    names = list(images)
    assert names.index("Plan: Precision: interval width vs s") < names.index(
        "Plan: Interval width vs labels v (at the slider s)"
    )
    assert names.index("History: Precision over time") < names.index("History: Recall over time")
    # Their cost is bounded by their size (a plot stretched by long text is scaled down);
    # how long they take is a benchmark's business, not a test's.
    for image in images.values():
        with Image.open(io.BytesIO(image)) as picture:
            assert picture.width <= MAX_SNAPSHOT_SIZE.width()
            assert picture.height <= MAX_SNAPSHOT_SIZE.height()


def test_save_on_a_rounds_workbook_asks_for_a_new_name(window, dialogs, tmp_path, shared_fixtures):
    rounds_file = tmp_path / "rounds_simple.xlsx"
    shutil.copy(shared_fixtures / "rounds_simple.xlsx", rounds_file)
    original = rounds_file.read_bytes()
    assert window.open_workbook(rounds_file)
    rounds = window.session.state.rounds
    assert len(rounds) == 10
    # about the workbook's latest round (the last of the latest date), not the example
    latest = max(enumerate(rounds), key=lambda pair: (pair[1].date, pair[0]))[1]
    assert window.session.state.plan.previous == latest.matrix
    assert window.session.state.evaluate.matrix == latest.matrix
    window.session.set_value("plan.margin_recall", 0.03)

    window.save_action.trigger()  # cancelled in the dialog: nothing written, still dirty
    caption, suggested = dialogs.asked_save[0]
    assert caption == "Save session"
    assert suggested == str(tmp_path / "rounds_simple session.xlsx")
    assert rounds_file.read_bytes() == original and window.isWindowModified()

    dialogs.save_names.append(tmp_path / "planned")  # .xlsx is added
    window.save_action.trigger()
    assert rounds_file.read_bytes() == original
    assert (tmp_path / "planned.xlsx").is_file() and window.path == tmp_path / "planned.xlsx"
    assert not window.isWindowModified()


def test_example_session_save_asks_for_a_name_and_cancel_keeps_it_dirty(window, dialogs):
    window.session.set_value("plan.margin_recall", 0.03)
    window.save_action.trigger()
    assert dialogs.asked_save and dialogs.asked_save[0][1].endswith("PR Planner session.xlsx")
    assert window.isWindowModified() and window.path is None
    assert window.windowTitle().startswith(EXAMPLE_TITLE)


@pytest.mark.parametrize("cause", ["disk full", "read-only folder"])
def test_failed_save_keeps_the_old_file_and_the_changes(window, dialogs, tmp_path, cause):
    target = tmp_path / "kept.xlsx"
    assert window.save_to(target)
    original = target.read_bytes()
    window.session.set_value("plan.margin_recall", 0.0333)

    def refuse(*_args, **_kwargs):
        if cause == "disk full":
            raise OSError(errno.ENOSPC, "No space left on device")
        raise PermissionError(errno.EACCES, "Permission denied")

    with pytest.MonkeyPatch.context() as patch:
        if cause == "disk full":
            patch.setattr(safe_io, "_fsync_file", refuse)
        else:
            patch.setattr(safe_io.tempfile, "mkstemp", refuse)
        window.save_action.trigger()
    assert target.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []
    assert len(dialogs.warnings) == 1
    title, text = dialogs.warnings[0]
    assert title == "Could not save the session"
    expected = "the disk is full" if cause == "disk full" else "read-only"
    assert expected in text and "unchanged" in text and "still open" in text
    assert "Could not save" in status(window) and expected in status(window)
    assert window.isWindowModified()
    assert window.session.get("plan.margin_recall") == 0.0333


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root can write a read-only folder"
)
def test_failed_save_into_a_really_read_only_folder(window, dialogs, tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    target = folder / "kept.xlsx"
    assert window.save_to(target)
    original = target.read_bytes()
    window.session.set_value("plan.margin_recall", 0.0333)
    folder.chmod(0o555)
    try:
        assert not window.save_to(target)
    finally:
        folder.chmod(0o755)
    assert target.read_bytes() == original and window.isWindowModified()
    assert dialogs.warnings


@pytest.mark.parametrize("kind", ["text", "truncated", "not a zip of a workbook"])
def test_unreadable_file_gives_one_message_and_changes_nothing(window, dialogs, tmp_path, kind):
    bad = tmp_path / "bad.xlsx"
    if kind == "text":
        bad.write_text("name,tp\nx,1\n")
    elif kind == "truncated":
        data = resources.path("example_session.xlsx").read_bytes()
        bad.write_bytes(data[: len(data) // 2])
    else:
        with zipfile.ZipFile(bad, "w") as archive:
            archive.writestr("hello.txt", "not a workbook")
    window.session.set_value("plan.margin_recall", 0.0444)
    before, title = window.session.state, window.windowTitle()
    dialogs.answer = QMessageBox.StandardButton.Discard  # the unsaved-changes question
    dialogs.open_names.append(bad)
    window.open_action.trigger()
    assert len(dialogs.warnings) == 1 and "bad.xlsx" in dialogs.warnings[0][1]
    assert window.session.state is before
    assert window.windowTitle() == title and window.path is None
    assert "Could not open bad.xlsx" in status(window)


def test_open_lists_what_was_refused_and_loads_the_rest(window, dialogs, tmp_path):
    target = tmp_path / "edited.xlsx"
    window.session.set_value("plan.margin_precision", 0.0275)
    window.session.set_value("plan.s", 4.5)
    assert window.save_to(target)
    book = openpyxl.load_workbook(target)
    inputs = book["Inputs"]
    for row in inputs.iter_rows(min_row=2):
        if row[0].value == "plan.margin_recall":
            row[1].value = "lots"  # an edit in Excel that cannot be used
            row[2].value = None
    book.save(target)

    dialogs.open_names.append(target)
    window.open_action.trigger()
    box = window._problems_box
    assert box is not None and box.isVisible()
    assert "plan.margin_recall" in box.informativeText()
    assert "plan.margin_recall" in box.detailedText()
    state = window.session.state
    assert state.plan.margin_precision == 0.0275 and state.plan.s == 4.5  # the rest loads
    assert state.plan.margin_recall == SessionState().plan.margin_recall
    assert "not loaded" in status(window)
    assert window.rounds_panel.problems_button.isVisible()
    box.close()


def test_open_messy_rounds_workbook_lists_the_refused_rows(window, dialogs, shared_fixtures):
    window.session.set_value("confidence", 0.9)
    window.session.undo_stack.setClean()
    assert window.open_workbook(shared_fixtures / "rounds_messy.xlsx")
    box = window._problems_box
    assert box is not None and box.isVisible()
    text = box.detailedText()
    assert text.count("not loaded") == 3 and "travel" in text
    state = window.session.state
    assert len(state.rounds) == 10
    assert state.confidence == 0.9  # the confidence level is kept
    latest = max(enumerate(state.rounds), key=lambda pair: (pair[1].date, pair[0]))[1]
    assert state.evaluate.matrix == latest.matrix  # the workbook's round, not the example
    assert state.ensemble.children == ()
    assert (state.prevalence, state.plan.margin_recall) == (
        SessionState().prevalence,
        SessionState().plan.margin_recall,
    )
    box.close()


def test_open_recent_reopens_a_saved_session(window, dialogs, tmp_path):
    target = tmp_path / "recent.xlsx"
    window.session.set_value("plan.v", 4321)
    assert window.save_to(target)
    saved = window.session.state
    window.new_session()
    assert window.session.get("plan.v") != 4321
    window._fill_recent_menu()
    action = window.recent_menu.actions()[0]
    assert action.text() == "recent.xlsx"
    action.trigger()
    assert window.session.state == saved and window.path == target


def test_export_report_writes_where_it_says_and_keeps_the_document(window, dialogs, tmp_path):
    window.session.set_value("plan.margin_recall", 0.03)
    target = tmp_path / "report for the manager.xlsx"
    dialogs.save_names.append(target)
    window.export_action.trigger()
    assert dialogs.asked_save[0][0] == "Export report"
    assert dialogs.asked_save[0][1].endswith("PR Planner report.xlsx")
    assert target.is_file() and str(target) in status(window)
    book = openpyxl.load_workbook(target)
    assert book.sheetnames[0] == "Summary" and "Plots" in book.sheetnames
    assert book["Plots"]._images
    assert window.isWindowModified() and window.path is None  # still the unsaved example
    assert read_rounds(target).rounds == window.session.state.rounds

    dialogs.save_names.append("")  # cancelled: nothing happens
    assert not window.export_report()


def test_export_report_failure_says_so(window, dialogs, tmp_path):
    missing = tmp_path / "no such folder" / "report.xlsx"
    assert not window.export_report(missing)
    assert dialogs.warnings and dialogs.warnings[0][0] == "Could not write the report"
    assert not missing.exists()


def test_import_scored_sample_from_the_file_menu(qtbot, window, dialogs, tmp_path):
    sample = tmp_path / "scores.csv"
    lines = ["score,label"] + [f"{i / 40:.3f},{int(i % 3 == 0 or i > 30)}" for i in range(40)]
    sample.write_text("\n".join(lines) + "\n")
    dialogs.open_names.append(sample)
    window.import_scored_action.trigger()
    prevalence = window.tabs.widget(window.tab_keys.index("prevalence"))
    assert window.tabs.currentWidget() is prevalence
    # The session takes the path once the file has been read.
    qtbot.waitUntil(
        lambda: window.session.get("prevalence.scored_sample_path") == str(sample),
        timeout=10_000,
    )
    qtbot.waitUntil(lambda: prevalence.scored is not None, timeout=10_000)
    assert "scores.csv" in prevalence.scored_label.text() or prevalence.scored.path == str(sample)
    names = list(window.plot_snapshots())
    assert "Prevalence: PR curve of the scored sample" in names

    dialogs.open_names.append("")  # cancelled
    assert not window.import_scored_sample()


def test_close_prompt_save_saves_then_closes(qtbot, make_window, dialogs, tmp_path):
    window = make_window()
    window.session.set_value("plan.margin_recall", 0.0321)
    state = window.session.state
    target = tmp_path / "on close.xlsx"
    dialogs.answer = QMessageBox.StandardButton.Save
    dialogs.save_names.append(target)
    window.close()
    assert not window.isVisible()
    assert read_session(target).state == state

    other = make_window()
    other.session.set_value("plan.margin_recall", 0.0321)
    dialogs.answer = QMessageBox.StandardButton.Save
    other.close()  # Save As cancelled: nothing lost, the window stays
    assert other.isVisible() and other.isWindowModified()
    dialogs.answer = QMessageBox.StandardButton.Cancel
    other.close()
    assert other.isVisible()


def test_start_opens_the_bundled_example_session(window):
    opened = read_session(resources.path("example_session.xlsx"))
    assert opened.is_session and not opened.problems
    expected = dataclasses.replace(opened.state, confidence=window.session.get("confidence"))
    assert window.session.state == expected
    assert window.path is None and not window.isWindowModified()
    assert window.windowTitle().startswith(EXAMPLE_TITLE)


def test_a_restart_reopens_the_leads_last_file_not_the_example(make_window, tmp_path):
    # After Save and Quit, a new start showed the example; the work was only under Open
    # Recent (trial 13). A first start (nothing recent) still shows the example.
    first = make_window()
    assert first.last_document() is None and not first.reopen_last_document()
    first.session.set_value("plan.s", 3.5)
    saved = tmp_path / "my session.xlsx"
    assert first.save_to(saved)
    expected = first.session.state
    # A labeling workbook read afterwards is not what the app reopens (its labels would be
    # read into the example).
    from core.selection import select_sample
    from core.workbook.labeling import write_labeling_workbook

    items = tmp_path / "items.csv"
    items.write_text("id,predicted\n" + "".join(f"m{i},{i % 3 == 0}\n" for i in range(30)))
    drawn = tmp_path / "round.xlsx"
    write_labeling_workbook(drawn, select_sample(items, n_pos=2, n_neg=2, seed=1), sources=[items])
    first._remember_recent(drawn)
    first.close()

    second = make_window()
    assert second.windowTitle().startswith(EXAMPLE_TITLE)
    assert second.last_document() == saved.resolve()
    assert second.reopen_last_document()
    assert second.path == saved.resolve() and second.session.state == expected
    assert "Reopened my session.xlsx" in second.statusBar().currentMessage()
    # The example is one menu away.
    assert second.open_example()
    assert second.windowTitle().startswith(EXAMPLE_TITLE)
    # A file that is gone is said, and the example stays.
    saved.unlink()
    gone = make_window()
    assert gone.last_document() is None and not gone.reopen_last_document()
    assert "my session.xlsx, the file you worked on last, is no longer in" in (
        gone.statusBar().currentMessage()
    )


RUN_APP_WITHOUT_FILE = """
import sys
sys.path.insert(0, sys.argv[1])
from PySide6.QtCore import QTimer
from desktop import main_window
from desktop.app import run_app

reopen = main_window.MainWindow.reopen_last_document


def reopen_then_report(self):
    done = reopen(self)
    print("reopened", done, flush=True)
    print("path", self.path, flush=True)
    self.session.undo_stack.setClean()
    QTimer.singleShot(0, self.close)
    return done


main_window.MainWindow.reopen_last_document = reopen_then_report
sys.exit(run_app(None))
"""


def test_run_app_without_a_file_reopens_the_last_one(qtbot, settings, tmp_path):
    """``prplanner`` with no file: run_app reopens the lead's last file (trial 13), in
    the event loop, after the recovery offer (none here)."""
    target = tmp_path / "mine.xlsx"
    source = MainWindow(settings=settings)
    qtbot.addWidget(source)
    source.load_example()
    assert source.save_to(target)
    source.close()
    lines = app_in_a_process(RUN_APP_WITHOUT_FILE, tmp_path / "recovery", exit_after_show=False)
    assert lines["reopened"] == "True" and lines["path"] == str(target.resolve())


def test_example_falls_back_to_the_example_rounds(qtbot, make_window, monkeypatch):
    real_path = resources.path

    def path(name):
        if name == "example_session.xlsx":
            raise FileNotFoundError("bundled resource 'example_session.xlsx' is missing")
        return real_path(name)

    monkeypatch.setattr(resources, "path", path)
    window = make_window()
    expected = read_rounds(real_path(resources.EXAMPLE_ROUNDS)).rounds
    assert window.session.state.rounds == expected
    # default inputs, the sliders on their recommended plan as in a new session
    assert dataclasses.replace(window.session.state.plan, s=2.0, v=1000) == SessionState().plan
    assert any("example session" in line for line in window.rounds_panel.problems)


RUN_APP_WITH_FILE = """
import gc
import sys
sys.path.insert(0, sys.argv[1])
gc.disable()  # as desktop.launch.main starts the app
from core.workbook.session_io import read_session
from desktop import main_window
from desktop.app import run_app

expected = read_session(sys.argv[2]).state
close = main_window.MainWindow.close


def report_then_close(self):
    print("path", self.path, flush=True)
    print("same", self.session.state == expected, flush=True)
    print("recovery", self.recovery.directory, flush=True)
    print("frozen", gc.get_freeze_count() > 0, flush=True)
    return close(self)


main_window.MainWindow.close = report_then_close
sys.exit(run_app(sys.argv[2]))
"""


def app_in_a_process(
    script: str, recovery: Path, *args: str, exit_after_show: bool = True
) -> dict[str, str]:
    """Run ``script`` (which starts the app) in a fresh process, offscreen, and return
    the ``key value`` lines it printed; the app runs its own event loop there."""
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    env[main_window_module.RECOVERY_DIR_ENV] = str(recovery)
    env.pop(app_module.EXIT_AFTER_SHOW_ENV, None)
    if exit_after_show:
        env[app_module.EXIT_AFTER_SHOW_ENV] = "1"
    run = subprocess.run(
        [sys.executable, "-c", script, str(root), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return dict(line.split(" ", 1) for line in run.stdout.splitlines() if " " in line)


def test_run_app_opens_the_given_file(qtbot, settings, tmp_path):
    """``prplanner FILE.xlsx``: run_app opens FILE like File > Open (inside the loop).

    In a subprocess: the app runs its own event loop and quits it.
    """
    target = tmp_path / "given.xlsx"
    source = MainWindow(settings=settings)
    qtbot.addWidget(source)
    source.load_example()
    source.session.set_value("plan.s", 5.5)
    assert source.save_to(target)
    source.close()

    lines = app_in_a_process(RUN_APP_WITH_FILE, tmp_path / "recovery", str(target))
    assert lines["path"] == str(target)
    assert lines["same"] == "True"
    assert lines["recovery"] == str(tmp_path / "recovery")
    # The collector paused for start-up resumed once the window was up, with what
    # start-up made frozen (it may be paused again meanwhile while a workbook is read).
    assert lines["frozen"] == "True"


def test_a_new_session_opens_on_a_design_that_meets_its_targets(qtbot, window):
    """File > New sets the sliders on the recommended plan, as Use it does: not on the
    defaults (s = 2, 1,000 labels), which miss both margins with a 0 % chance."""
    from core.plan_request import PlanRequest, planning_inputs
    from desktop.plan_tab import meets_both_targets

    window.new_session()
    state = window.session.state
    recommended = PlanRequest.from_session(state, planning_inputs(state)).plan()
    assert state.plan.v == recommended.total
    assert state.plan.s == pytest.approx(round(recommended.s, 2))
    window.plan_tab.flush()
    assert meets_both_targets(window.plan_tab.design)
    assert not window.isWindowModified()


def test_a_new_session_holds_none_of_the_examples_classifiers(qtbot, window):
    """File > New is the lead's own session: the Ensemble tab starts without the example's
    travel children, so none of them reaches the lead's report."""
    assert window.session.state.ensemble.children  # the example session has them
    window.new_session()
    assert window.session.state.ensemble.children == ()
    window.show_tab("ensemble")
    snapshots = window.plot_snapshots()
    assert not any(name.startswith("Ensemble") for name in snapshots)


def test_file_open_on_an_item_list_keeps_unsaved_changes_without_asking(window, dialogs, tmp_path):
    items = tmp_path / "items.csv"
    items.write_text(
        "id,predicted\n" + "".join(f"m{i},{int(i % 9 == 0)}\n" for i in range(90)),
        encoding="utf-8",
    )
    window.session.set_value("plan.margin_recall", 0.0432)  # an unsaved change
    dialogs.open_names.append(items)
    window.open_action.trigger()
    assert dialogs.questions == []  # nothing is replaced, so nothing to ask
    assert window.session.get("plan.margin_recall") == 0.0432
    dialog = window.item_sample_dialog
    assert dialog is not None and dialog.summary is not None and dialog.summary.rows == 90
    dialog.close()


def test_a_rounds_workbook_opens_with_the_leads_own_targets_and_settings(
    window, dialogs, shared_fixtures
):
    # The lead's own session (File > New), set up, then a rounds workbook opened over it.
    window.new_session()
    session = window.session
    session.set_value("plan.margin_precision", 0.03)
    session.set_value("plan.margin_recall", 0.04)
    session.set_value("prevalence.reference_prevalence", 0.01)
    session.set_value(
        "ensemble.children", (EnsembleChild(name="sports", size=60_200, overlap=52_000),)
    )
    session.set_value("ensemble.parent_size", 150_000)
    session.undo_stack.setClean()
    assert window.open_workbook(shared_fixtures / "rounds_simple.xlsx")
    state = window.session.state
    assert (state.plan.margin_precision, state.plan.margin_recall) == (0.03, 0.04)
    assert state.prevalence.reference_prevalence == 0.01
    assert state.ensemble.parent_size == 150_000
    assert [child.name for child in state.ensemble.children] == ["sports"]
    latest = max(enumerate(state.rounds), key=lambda pair: (pair[1].date, pair[0]))[1]
    assert state.evaluate.matrix == latest.matrix and state.plan.previous == latest.matrix
    assert "your targets and other settings were kept" in status(window)

    # Reading the same workbook again with column choices keeps them too.
    assert window.rounds_panel.apply_columns(["Rounds!model_version=Notes"])
    state = window.session.state
    assert state.plan.margin_recall == 0.04 and state.prevalence.reference_prevalence == 0.01
    assert [child.name for child in state.ensemble.children] == ["sports"]


def test_the_exported_report_names_the_rows_the_workbook_could_not_give(
    window, dialogs, shared_fixtures, tmp_path
):
    assert window.open_workbook(shared_fixtures / "rounds_messy.xlsx")
    window._problems_box.close()
    output = tmp_path / "report.xlsx"
    assert window.export_report(output)
    texts = [
        row[0] for row in openpyxl.load_workbook(output)["Summary"].iter_rows(values_only=True)
    ]
    warning = next(text for text in texts if text and "could not be read" in text)
    assert warning.startswith("• 2 rows of the workbook") and "row 13" in warning
    # Saved and reopened, the session still knows them: the panel lists them and the
    # next report names them again.
    saved = tmp_path / "session.xlsx"
    assert window.save_to(saved)
    window.new_session()
    assert window.open_workbook(saved)
    assert len(window.session.state.rows_not_loaded) == 2
    assert any("row 13" in text for text in window.rounds_panel._problems)
    again = tmp_path / "again.xlsx"
    assert window.export_report(again)
    texts = [row[0] for row in openpyxl.load_workbook(again)["Summary"].iter_rows(values_only=True)]
    assert any(text and text.startswith("• 2 rows of the workbook") for text in texts)
    # Once the lead has dealt with them, reports can stop naming them (one undo step).
    dialog = window.rounds_panel.show_problems()
    forget = dialog.findChild(QPushButton, "forget_rows_not_loaded")
    assert forget is not None
    forget.click()
    assert window.session.state.rows_not_loaded == ()
    assert not any("row 13" in text for text in window.rounds_panel._problems)
    assert window.session.undo_stack.undoText() == "Stop naming rows not loaded"
    window.session.undo_stack.undo()
    assert len(window.session.state.rows_not_loaded) == 2
    assert any("row 13" in text for text in window.rounds_panel._problems)
    # File > New: the rows of that workbook are no longer the session's business.
    assert window.new_session()
    assert window.session.state.rows_not_loaded == ()


def test_a_round_without_labels_in_one_stratum_leaves_every_tab_working(window, tmp_path):
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Rounds"
    sheet.append(["Round", "Date", "k", "TP", "FP", "FN", "TN"])
    sheet.append(["A", dt.date(2026, 1, 5), 0.05, 40, 10, 3, 300])
    sheet.append(["B", dt.date(2026, 1, 12), 0.05, 0, 0, 2, 310])  # no flagged labels
    path = tmp_path / "rounds.xlsx"
    book.save(path)
    assert window.open_workbook(path)
    for index in range(window.tabs.count()):  # an exception in a slot fails the test
        window.tabs.setCurrentIndex(index)
    assert len(window.session.state.rounds) == 2


def test_typed_counts_kept_as_a_round_join_the_panel_history_and_report(
    qtbot, window, dialogs, shared_fixtures, tmp_path, monkeypatch
):
    from core.workbook.rounds import EARLIEST_ROUND_DATE
    from desktop.entered_round import KeepRoundDialog

    assert window.open_workbook(shared_fixtures / "rounds_simple.xlsx")
    window.show_tab("evaluate")
    evaluate_tab = window.tabs.currentWidget()
    assert not evaluate_tab.keep_button.isEnabled()  # TR-06 is a round already
    typed = ConfusionMatrix(tp=240, fp=60, fn=95, tn=4205)
    window.session.set_value("evaluate.matrix", typed)
    assert evaluate_tab.keep_button.isEnabled()
    seen = {}

    def accept(dialog):
        seen["name"] = dialog.name_edit.text()
        seen["classifier"] = dialog.classifier_box.currentText()
        seen["population"] = dialog.population_label.text()
        # No day the rounds reader would refuse on reopening (review 19).
        seen["earliest"] = dialog.date_edit.minimumDate().toPython()
        dialog.date_edit.setDate(QDate(2026, 4, 6))
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(KeepRoundDialog, "exec", accept)
    assert evaluate_tab.keep_as_round()
    assert seen.pop("earliest") == EARLIEST_ROUND_DATE
    # The population kept is said: TR-06's, still on the Evaluate tab (trial 13).
    population = window.session.state.evaluate.population
    assert seen.pop("population").startswith(
        f"{population.predicted_positive:,} flagged and {population.predicted_negative:,} "
        "unflagged items, as on the Evaluate tab"
    )
    assert seen == {"name": "TR-07", "classifier": "travel"}
    state = window.session.state
    # Filed after travel's last round, before the finance rounds (one run per classifier).
    names = [item.round for item in state.rounds]
    assert names.index("TR-07") == names.index("TR-06") + 1
    kept = state.rounds[names.index("TR-07")]
    assert (kept.round, kept.date, kept.classifier, kept.matrix) == (
        "TR-07", dt.date(2026, 4, 6), "travel", typed,
    )  # fmt: skip
    assert not evaluate_tab.keep_button.isEnabled()
    # The Plan tab plans from it too, as after reading labels (trial 10b).
    assert state.previous_round == "TR-07" and state.plan.previous == typed
    qtbot.waitUntil(lambda: evaluate_tab.comparison is not None, timeout=20_000)
    assert "Kept TR-07 as a round" in status(window)  # not cleared by the tab's refresh
    panel = window.rounds_panel
    selected = panel.table.selectionModel().selectedRows()
    assert [index.row() for index in selected] == [names.index("TR-07")]
    # The report is about it, compared with TR-06; one undo takes it out again.
    output = tmp_path / "report.xlsx"
    assert window.export_report(output)
    texts = [
        row[0] for row in openpyxl.load_workbook(output)["Summary"].iter_rows(values_only=True)
    ]
    assert any(str(text).startswith("Change since the previous round, TR-06") for text in texts)
    window.session.undo_stack.undo()
    assert len(window.session.state.rounds) == 10


def test_evaluating_a_round_over_typed_counts_says_where_they_went(window, shared_fixtures):
    assert window.open_workbook(shared_fixtures / "rounds_simple.xlsx")
    typed = ConfusionMatrix(tp=240, fp=60, fn=95, tn=4205)
    window.session.set_value("evaluate.matrix", typed)
    assert window.rounds_panel.evaluate_round(0)
    assert "the counts you typed there are back with Edit > Undo" in status(window)
    window.session.undo_stack.undo()
    assert window.session.state.evaluate.matrix == typed


def test_a_refusal_clears_once_an_edit_is_taken_and_a_window_message_survives_a_tab_change(
    window,
):
    window.session.set_value("plan.v", -5)  # refused
    assert status(window).startswith("Refused:")
    window.session.set_value("plan.v", 4_000)
    assert status(window) == ""
    window.show_status("Opened workbook rounds.xlsx")
    window.show_tab("history")
    assert status(window) == "Opened workbook rounds.xlsx"


@pytest.mark.parametrize(
    ("path", "typed", "entered"), [("plan.margin_precision", "10", 0.10), ("plan.s", "3", 3)]
)
def test_ctrl_z_right_after_an_entry_undoes_it_from_inside_the_field(
    qtbot, window, path, typed, entered
):
    # A percent field, and the spin box of a slider field (bound through its slider).
    window.show_tab("plan")
    plan = window.tabs.currentWidget()
    field = (
        plan.s_slider.spin
        if path == "plan.s"
        else next(
            spin
            for spin in plan.findChildren(QAbstractSpinBox)
            if getattr(spin, "path", None) == path
        )
    )
    before = window.session.get(path)
    window.activateWindow()  # Edit > Undo's Ctrl+Z works in the active window
    field.setFocus()
    field.lineEdit().selectAll()
    qtbot.keyClicks(field.lineEdit(), typed)
    qtbot.keyClick(field.lineEdit(), Qt.Key.Key_Return)
    assert window.session.get(path) == entered
    # The key goes to the focused field, as a keyboard sends it.
    qtbot.keyClick(field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.session.get(path) == before
    assert field.value() == pytest.approx(100 * before if path != "plan.s" else before)


def test_opening_a_workbook_from_the_example_does_not_claim_to_keep_its_targets(
    window, dialogs, shared_fixtures
):
    window.session.set_value("plan.margin_precision", 0.031)
    window.session.undo_stack.setClean()
    assert window.open_workbook(shared_fixtures / "rounds_simple.xlsx")
    assert window.session.get("plan.margin_precision") == SessionState().plan.margin_precision
    assert "were kept" not in status(window)


def test_columns_read_again_keeps_the_rounds_the_lead_added(
    window, dialogs, shared_fixtures, monkeypatch
):
    from desktop.entered_round import keep_as_round

    assert window.open_workbook(shared_fixtures / "rounds_simple.xlsx")
    window.session.set_value("evaluate.matrix", ConfusionMatrix(tp=240, fp=60, fn=95, tn=4205))
    done, _message = keep_as_round(window.session, "TR-07", dt.date(2026, 4, 6), "travel")
    assert done
    assert window.rounds_panel.apply_columns(["Rounds!model_version=Notes"])
    names = [item.round for item in window.session.state.rounds]
    assert "TR-07" in names and len(names) == 11


@pytest.mark.parametrize("typed_over", [False, True])
def test_the_evaluate_tab_and_its_report_say_the_same_change(
    qtbot, window, dialogs, shared_fixtures, tmp_path, typed_over
):
    # The screen and the report the lead sends are compared number for number: the
    # latest round as opened, and counts typed over it.
    assert window.open_workbook(shared_fixtures / "rounds_simple.xlsx")
    window.show_tab("evaluate")
    tab = window.tabs.currentWidget()
    if typed_over:
        window.session.set_value("evaluate.matrix", ConfusionMatrix(tp=240, fp=60, fn=95, tn=4205))
    qtbot.waitUntil(lambda: tab.comparison is not None, timeout=20_000)
    shown = tab.comparison
    output = tmp_path / "report.xlsx"
    assert window.export_report(output)
    from core.workbook.report_content import build_report
    from core.workbook.session_io import report_subject

    state = window.session.state
    content = build_report(state, round_name=report_subject(state))
    reported = content.change.comparison
    for metric in ("precision_change", "recall_change"):
        on_screen, in_report = getattr(shown, metric), getattr(reported, metric)
        assert in_report.p_worse == on_screen.p_worse
        assert in_report.interval.as_list() == on_screen.interval.as_list()
        assert in_report.estimate == on_screen.estimate


def test_an_exported_report_reopens_but_save_asks_before_replacing_it(
    window, dialogs, shared_fixtures, tmp_path
):
    report = tmp_path / "April report.xlsx"
    assert window.open_workbook(shared_fixtures / "rounds_simple.xlsx")
    assert window.export_report(report)
    sent = report.read_bytes()
    assert window.open_workbook(report)  # it restores the inputs: useful
    window.session.set_value("plan.margin_recall", 0.0321)
    window.save_action.trigger()  # asks for a name (cancelled in the dialog)
    assert dialogs.asked_save and report.read_bytes() == sent


def test_ctrl_y_redoes_as_in_a_spreadsheet(window):
    assert QKeySequence("Ctrl+Y") in window.redo_action.shortcuts()


def test_a_kept_round_can_join_the_leads_rounds_workbook(
    qtbot, window, shared_fixtures, tmp_path, monkeypatch
):
    from core.workbook.rounds import read_rounds
    from desktop.entered_round import KeepRoundDialog

    mine = tmp_path / "my rounds.xlsx"
    mine.write_bytes((shared_fixtures / "rounds_simple.xlsx").read_bytes())
    before = read_rounds(mine).rounds
    assert window.open_workbook(mine)
    window.show_tab("evaluate")
    evaluate_tab = window.tabs.currentWidget()
    typed = ConfusionMatrix(tp=240, fp=60, fn=95, tn=4205)
    refused = window.session.set_values(
        [
            ("evaluate.matrix", typed),
            ("evaluate.population.predicted_positive", 41_000),
            ("evaluate.population.predicted_negative", 1_250_000),
        ]
    )
    assert refused is None
    offered = {}

    def accept(dialog, tick=True):
        offered["text"] = dialog.add_box.text() if dialog.add_box is not None else None
        offered["enabled"] = dialog.add_box is not None and dialog.add_box.isEnabled()
        if dialog.add_box is not None:
            dialog.add_box.setChecked(tick)
        dialog.date_edit.setDate(QDate(2026, 4, 6))
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(KeepRoundDialog, "exec", accept)
    assert evaluate_tab.keep_as_round()
    assert offered == {"text": "Also add it to my rounds.xlsx", "enabled": True}
    after = read_rounds(mine).rounds
    assert len(after) == len(before) + 1
    (added,) = [item for item in after if item not in before]
    assert (added.round, added.date, added.classifier, added.matrix) == (
        "TR-07", dt.date(2026, 4, 6), "travel", typed,
    )  # fmt: skip
    assert (added.population_pos, added.population_neg) == (41_000, 1_250_000)
    assert "my rounds.xlsx: TR-07 added (sheet" in status(window)
    # With k alone there are no population counts to write: the box says so, unticked.
    assert window.session.set_values(
        [("evaluate.matrix", ConfusionMatrix(tp=1, fp=2, fn=3, tn=400)),
         ("evaluate.population.mode", "k")]
    ) is None  # fmt: skip
    assert evaluate_tab.keep_as_round()
    assert offered["enabled"] is False
    assert len(read_rounds(mine).rounds) == len(before) + 1


def test_file_dialogs_start_where_the_lead_worked_last_even_after_a_restart(
    qtbot, window, shared_fixtures, tmp_path
):
    # After a restart every dialog started in the home folder (trial 12).
    from desktop.main_window import MainWindow, app_settings

    folder = tmp_path / "audits"
    folder.mkdir()
    mine = folder / "my rounds.xlsx"
    mine.write_bytes((shared_fixtures / "rounds_simple.xlsx").read_bytes())
    assert window.open_workbook(mine)
    assert window._start_folder() == folder
    again = MainWindow(settings=app_settings())  # the same settings: a restart
    qtbot.addWidget(again)
    assert again._start_folder() == folder
    again.session.undo_stack.setClean()
    again.close()


def test_hostile_recent_files_settings_never_stop_the_start(make_window, settings, tmp_path):
    # A name part over 255 bytes raised OSError in last_document; deeply nested JSON in
    # recent_columns raised RecursionError at start and after every Save (fuzz 13b).
    good = tmp_path / "mine.xlsx"
    first = make_window()
    assert first.save_to(good)
    first.close()
    settings.setValue("recent_files", [str(tmp_path / ("x" * 300 + ".xlsx")), str(good)])
    settings.setValue("recent_columns", "[" * 100_000 + "]" * 100_000)
    window = make_window()
    # The last file (a name no system can hold) is gone: said, and the example stays.
    assert window.last_document() is None and not window.reopen_last_document()
    assert "is no longer in" in window.statusBar().currentMessage()
    assert window._recent_columns() == {}
    settings.setValue("recent_files", [str(good)])
    assert window.reopen_last_document() and window.path == good.resolve()
    settings.setValue("recent_files", [str(tmp_path / f"f{i}.xlsx") for i in range(20_000)])
    assert len(window.recent_files()) <= 8


@pytest.mark.parametrize("value", ["", "hello", ["1", "2", "3"], 42])
def test_a_window_setting_that_is_not_qts_own_bytes_never_stops_the_start(
    make_window, settings, value
):
    # "geometry=" in prplanner.ini (an edit, a synced file) raised TypeError inside the
    # window's constructor at every start (fuzz 14).
    settings.setValue("window/geometry", value)
    settings.setValue("window/state", value)
    window = make_window()
    assert window.isVisible()


def test_a_remembered_folder_whose_name_is_too_long_leaves_the_dialogs_working(
    make_window, settings, tmp_path
):
    # is_dir() raised OSError (name too long) in every file dialog: no Open, no Save As
    # (fuzz 14).
    settings.setValue("last_folder", str(tmp_path / ("a" * 300)))
    window = make_window()
    assert window._start_folder() == Path.home()


def test_a_report_opened_by_mistake_says_it_is_not_the_rounds_workbook(
    window, shared_fixtures, tmp_path
):
    # Trial 16: a report opened instead of the rounds workbook read as "Opened session",
    # and the next round quietly never reached the rounds workbook.
    assert window.open_workbook(shared_fixtures / "rounds_simple.xlsx")
    report = tmp_path / "fraud report.xlsx"
    assert window.export_report(report)
    messages = []
    window.statusBar().messageChanged.connect(messages.append)
    assert window.open_workbook(report)
    opened = next(text for text in messages if text.startswith("Opened"))
    assert opened.startswith("Opened report fraud report.xlsx")
    assert "not your rounds workbook" in opened
    assert window.lead_rounds_workbook() is None  # the summary offers to choose one


def test_a_rounds_workbook_reopens_with_the_targets_the_lead_left_it_with(
    make_window, tmp_path, shared_fixtures
):
    # Trial 17: after a restart on the rounds workbook the Plan came back at the default
    # targets (recall ±7 % -> ±5 %, chance off, FPC off) and the next draw asked for
    # almost twice the labels, with no word.
    import shutil

    workbook = tmp_path / "my rounds.xlsx"
    shutil.copy(shared_fixtures / "rounds_simple.xlsx", workbook)
    first = make_window()
    assert first.open_workbook(workbook)
    chosen = [
        ("plan.margin_recall", 0.07), ("plan.assurance_target", 0.9), ("plan.fpc", True),
        ("plan.cost_neg", 0.5), ("confidence", 0.9),
    ]  # fmt: skip
    first.session.set_values(chosen, text="the lead's targets")
    first.session.undo_stack.setClean()
    first.close()

    second = make_window()  # a fresh start: the example, then the workbook reopened
    assert second.reopen_last_document()
    for key, value in chosen:
        assert second.session.get(key) == value, key
    # Another workbook never opened before starts from the defaults.
    other = tmp_path / "other rounds.xlsx"
    shutil.copy(shared_fixtures / "rounds_simple.xlsx", other)
    third = make_window()
    assert third.open_workbook(other)
    assert third.session.get("plan.margin_recall") == 0.05


def test_a_reopened_session_says_its_rounds_workbook_has_newer_rounds(make_window, tmp_path):
    # Trial 17: a week done with labels --append-to; the app reopened the saved session
    # without it and planned from the week before, with no word.
    import dataclasses

    from core.workbook.append_round import NewRound, append_round, start_rounds_workbook

    rounds = tmp_path / "my rounds.xlsx"
    first = NewRound(round="W02", classifier="invoices", population_pos=1500,
                     population_neg=58000, tp=140, fp=30, fn=30, tn=3400)  # fmt: skip
    start_rounds_workbook(rounds, [first])
    window = make_window()
    assert window.open_workbook(rounds)
    saved = tmp_path / "my session.xlsx"
    assert window.save_to(saved)
    window.close()
    append_round(rounds, dataclasses.replace(first, round="W03", tp=150))  # the CLI week

    again = make_window()
    assert again.reopen_last_document()
    said = again.statusBar().currentMessage()
    assert "Reopened my session.xlsx" in said
    assert (
        "your rounds workbook my rounds.xlsx has 1 round this session does not (W03 "
        "(invoices)): open it (File > Open) to plan from them"
    ) in said
