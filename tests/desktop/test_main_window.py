"""Main window: Rounds panel, menus, dirty state, settings, help (pytest-qt)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QMessageBox

from core.workbook.rounds import read_rounds
from desktop import main_window as main_window_module
from desktop import resources
from desktop.main_window import TABS, MainWindow, app_settings, tab_class
from tests.conftest import SHARED_FIXTURES


@pytest.fixture
def settings(tmp_path, monkeypatch):
    """Settings in a temporary INI file; app_settings() is redirected there too."""
    monkeypatch.setenv(main_window_module.SETTINGS_DIR_ENV, str(tmp_path))
    return app_settings()


@pytest.fixture
def questions(monkeypatch):
    """Answers for QMessageBox.question (Discard unless a test says otherwise); records
    every question so a test can check it was (or was not) asked."""

    class Asked(list):
        def __init__(self):
            super().__init__()
            self.answer = {"value": QMessageBox.StandardButton.Discard}

    asked = Asked()
    answer = asked.answer

    def question(parent, title, text, *args, **kwargs):
        asked.append(text)
        return answer["value"]

    monkeypatch.setattr(QMessageBox, "question", question)
    return asked


@pytest.fixture
def window(qtbot, settings, questions):
    widget = MainWindow(settings=settings)
    qtbot.addWidget(widget)
    widget.load_example()
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    widget.session.undo_stack.setClean()  # teardown closes without asking
    widget.close()


def test_tabs_menus_and_example_rounds(window):
    titles = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    assert titles == ["Plan", "Evaluate", "Prevalence", "Ensemble", "History"]
    menus = [action.text() for action in window.menuBar().actions()]
    assert menus[:2] == ["&File", "&Edit"] and menus[-1] == "&Help"
    expected = read_rounds(resources.path(resources.EXAMPLE_ROUNDS)).rounds
    model = window.rounds_panel.model
    assert model.rowCount() == len(expected) == 10
    assert model.data(model.index(0, 0)) == expected[0].round
    assert model.data(model.index(0, 5)) == f"{expected[0].tp:,}"
    assert "%" in model.data(model.index(0, 9))
    assert window.windowTitle().startswith("Example session")
    assert not window.isWindowModified()


def test_choose_previous_round_fills_the_plan(qtbot, window):
    session = window.session
    row = 5  # TR-06
    item = session.state.rounds[row]
    panel = window.rounds_panel
    panel.table.selectRow(row)
    qtbot.mouseClick(panel.use_button, Qt.MouseButton.LeftButton)
    assert session.get("previous_round") == item.round
    assert session.get("plan.previous") == item.matrix
    assert session.get("plan.belief") == "previous"
    assert panel.model.data(panel.model.index(row, 0), Qt.ItemDataRole.FontRole).bold()
    assert item.round in panel.previous.text()
    assert window.isWindowModified() and "*" in window.windowTitle()
    window.undo_action.trigger()  # one step
    assert session.get("previous_round") == ""
    assert not window.isWindowModified()
    window.redo_action.trigger()
    assert session.get("previous_round") == item.round


@pytest.mark.parametrize(
    ("name", "rounds", "problems"),
    [("rounds_simple.xlsx", 10, 0), ("rounds_messy.xlsx", 10, 3)],
)
def test_open_each_shared_workbook(window, shared_fixtures, name, rounds, problems):
    path = shared_fixtures / name
    assert window.open_workbook(path)
    book = read_rounds(path)
    model = window.rounds_panel.model
    assert model.rowCount() == len(book.rounds) == rounds
    labels = [model.data(model.index(r, 0)) for r in range(model.rowCount())]
    assert labels[:6] == [f"TR-0{i}" for i in range(1, 7)]
    assert labels[6:] == [f"FI-0{i}" for i in range(1, 5)]
    assert len(window.rounds_panel.problems) == problems
    assert window.rounds_panel.problems_button.isVisible() == bool(problems)
    if problems:
        text = "\n".join(window.rounds_panel.problems)
        assert "travel" in text and "TR-07" not in labels
    assert name in window.windowTitle()
    assert name in window.statusBar().currentMessage()
    assert window.path == path
    assert not window.isWindowModified()
    assert window.recent_files()[0].endswith(name)


def test_unreadable_workbook_says_why_and_keeps_the_session(window, tmp_path, monkeypatch):
    warnings = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *args: warnings.append(args[2]))
    bad = tmp_path / "notes.xlsx"
    bad.write_text("this is not a workbook")
    before = window.session.state
    assert not window.open_workbook(bad)
    assert warnings and "notes.xlsx" in warnings[0]
    assert window.session.state is before
    assert "Could not open" in window.statusBar().currentMessage()
    assert window.windowTitle().startswith("Example session")


def test_unsaved_changes_are_asked_about(qtbot, window, questions, monkeypatch):
    save_as = []
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", lambda *args: save_as.append(args[1]) or ("", "")
    )
    window.session.set_value("plan.margin_recall", 0.04)
    assert window.isWindowModified()
    questions.answer["value"] = QMessageBox.StandardButton.Cancel
    window.close()
    assert window.isVisible() and len(questions) == 1  # Cancel keeps the window open
    assert not window.new_session()
    assert window.session.get("plan.margin_recall") == 0.04
    questions.answer["value"] = QMessageBox.StandardButton.Save
    window.close()  # Save asks for a name (an example is never overwritten); cancelled
    assert window.isVisible() and save_as == ["Save session"]
    assert window.isWindowModified()
    questions.answer["value"] = QMessageBox.StandardButton.Discard
    assert window.new_session()
    assert window.session.get("plan.margin_recall") == 0.05
    assert window.session.state.rounds == ()
    assert not window.isWindowModified()
    count = len(questions)
    window.close()  # nothing to save: no question
    assert len(questions) == count and not window.isVisible()


def test_settings_persist_in_the_given_location(qtbot, window, settings, shared_fixtures):
    window.session.set_value("confidence", 0.9)
    window.open_workbook(shared_fixtures / "rounds_simple.xlsx")
    window.resize(1234, 777)
    window.close()
    assert not window.isVisible()
    settings.sync()
    reread = QSettings(settings.fileName(), QSettings.Format.IniFormat)
    assert float(reread.value("session/confidence")) == 0.9
    second = MainWindow(settings=reread)
    qtbot.addWidget(second)
    assert second.session.get("confidence") == 0.9
    geometry = reread.value("window/geometry")
    assert geometry and second.restoreGeometry(geometry)  # the offscreen screen clamps sizes
    assert second.recent_files()[0].endswith("rounds_simple.xlsx")
    second._fill_recent_menu()
    assert second.recent_menu.actions()[0].text() == "rounds_simple.xlsx"
    second.close()


def test_status_bar_shows_refusals(qtbot, window):
    window.session.set_value("plan.margin_recall", 0.7)
    assert "Refused" in window.statusBar().currentMessage()
    grid_model = window.tabs.widget(0).grid.model
    grid_model.paste_text("abc\t-3")
    assert "Refused" in window.statusBar().currentMessage()


def test_a_tab_repeating_its_warning_leaves_a_newer_message(window):
    # CI: adding a round said "round1 added", then Evaluate recomputed and the same
    # warning it gave before covered the confirmation.
    evaluate = window.tabs.widget(window.tab_keys.index("evaluate"))
    evaluate.status_message.emit("Evaluate: FN = 2")
    assert window.statusBar().currentMessage() == "Evaluate: FN = 2"
    window.show_status("my rounds.xlsx: round1 added")
    evaluate.status_message.emit("Evaluate: FN = 2")
    assert window.statusBar().currentMessage() == "my rounds.xlsx: round1 added"
    # A new warning is news: it is shown.
    evaluate.status_message.emit("Evaluate: FP = 0")
    assert window.statusBar().currentMessage() == "Evaluate: FP = 0"
    # Said again after the status bar went blank: shown again.
    window.statusBar().clearMessage()
    evaluate.status_message.emit("Evaluate: FP = 0")
    assert window.statusBar().currentMessage() == "Evaluate: FP = 0"


def test_edit_copy_and_paste_act_on_the_focused_grid(qtbot, window):
    plan = window.tabs.widget(0)
    window.session.set_value("plan.belief", "previous")
    view = plan.grid.view
    view.setFocus()
    qtbot.waitUntil(view.hasFocus, timeout=2000)
    view.setCurrentIndex(view.model().index(0, 0))
    QGuiApplication.clipboard().setText("500\t60\n70\t8,000")
    window.paste_action.trigger()
    matrix = window.session.get("plan.previous")
    assert (matrix.tp, matrix.fp, matrix.fn, matrix.tn) == (500, 60, 70, 8000)
    view.selectAll()
    window.copy_action.trigger()
    lines = QGuiApplication.clipboard().text().splitlines()
    assert [line.split("\t") for line in lines] == [
        ["500", "60", "560"],
        ["70", "8000", "8070"],
        ["570", "8060", "8630"],
    ]
    window.undo_action.trigger()
    assert window.session.get("plan.previous.tp") == 231


def test_formula_reference_follows_the_current_tab(qtbot, window):
    window.tabs.setCurrentIndex(0)
    dialog = window.show_formula_reference()
    assert dialog.topic == "plan"
    assert "Theorem 1" in dialog.browser.toPlainText()
    window.tabs.setCurrentIndex(1)
    assert dialog.topic == "evaluate"
    assert "Katz" in dialog.browser.toPlainText()
    for index, key in enumerate(window.tab_keys):
        window.tabs.setCurrentIndex(index)
        assert dialog.topic == key and dialog.browser.toPlainText().strip()
    dialog.close()


def test_about_box(window, monkeypatch):
    shown = []
    monkeypatch.setattr(QMessageBox, "about", lambda parent, title, text: shown.append(text))
    window.about_action.trigger()
    assert shown and "Shang" in shown[0]


def test_every_tab_is_its_real_widget(window):
    assert window.tab_keys == [key for key, _title, _cls in TABS]
    for index, (_key, title, entry) in enumerate(TABS):
        assert isinstance(window.tabs.widget(index), tab_class(entry))
        assert window.tabs.tabText(index) == title


def test_a_window_with_deferred_tabs_builds_them_when_needed(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv(main_window_module.SETTINGS_DIR_ENV, str(tmp_path))
    widget = MainWindow(settings=app_settings(), defer_tabs=True)
    qtbot.addWidget(widget)
    widget.load_example()
    widget.show()
    assert isinstance(widget.tabs.widget(0), tab_class(TABS[0][2]))
    assert not isinstance(widget.tabs.widget(1), tab_class(TABS[1][2]))  # a stand-in
    widget.tabs.setCurrentIndex(widget.tab_keys.index("history"))  # a click on a tab
    for index, (key, title, entry) in enumerate(TABS):
        assert isinstance(widget.tabs.widget(index), tab_class(entry)), key
        assert widget.tabs.tabText(index) == title
    assert widget.current_tab_key() == "history"
    # Built from the session as it is now: Evaluate shows the example's current round.
    evaluate = widget.tabs.widget(widget.tab_keys.index("evaluate"))
    assert evaluate.findChildren(main_window_module.ConfusionGridView)
    widget.build_deferred_tabs()  # idempotent
    assert widget.tabs.count() == len(TABS)
    widget.session.undo_stack.setClean()


def test_a_tabs_message_does_not_linger_on_another_tab(qtbot, window):
    window.tabs.setCurrentIndex(window.tab_keys.index("ensemble"))
    window.session.set_value("plan.margin_recall", 0.9)  # refused: shown in the status bar
    assert "Refused" in window.statusBar().currentMessage()
    window.tabs.setCurrentIndex(window.tab_keys.index("history"))
    assert window.statusBar().currentMessage() == ""


def test_a_link_loop_or_an_encrypted_part_is_said_not_raised(qtbot, window, tmp_path, monkeypatch):
    # File > Open on a symbolic link loop raised from the column lookup, and a workbook
    # with an encrypted part from the labeling-workbook check: nothing was shown (fuzz 15).
    from tests.core.test_no_overwrite import _damaged

    warned = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *args: warned.append(args[2]))
    loop, other = tmp_path / "loop1.xlsx", tmp_path / "loop2.xlsx"
    loop.symlink_to(other)
    other.symlink_to(loop)
    assert not window.open_workbook(loop, ask=False)
    assert "loop1.xlsx" in window.statusBar().currentMessage()
    locked = tmp_path / "locked.xlsx"
    locked.write_bytes((SHARED_FIXTURES / "rounds_simple.xlsx").read_bytes())
    _damaged(locked, "xl/workbook.xml", "encrypted")
    assert not window.open_workbook(locked, ask=False)
    assert "locked.xlsx is encrypted" in window.statusBar().currentMessage()
    assert len(warned) == 2


@pytest.mark.parametrize(
    "stored",
    ["not json", "[1, 2]", '{"id": 5, "score": ["x"]}', '{"id": "' + "x" * 40_000 + '"}', ""],
)
def test_hand_edited_draw_columns_in_the_settings_are_ignored_or_bounded(window, stored):
    window.settings.setValue("draw_columns", stored)
    remembered = window.remembered_draw_columns()
    assert all(isinstance(value, str) and len(value) <= 32_767 for value in remembered.values())
    assert set(remembered) <= {"id"}


def test_the_close_question_on_a_rounds_workbook_says_the_workbook_is_safe(
    window, shared_fixtures, monkeypatch
):
    # Trial 17: "invoice_rounds.xlsx has unsaved changes. Save them first?" made a lead
    # fear for the rounds workbook; Save asks for a session file and never replaces it.
    from PySide6.QtWidgets import QMessageBox

    assert window.open_workbook(shared_fixtures / "rounds_simple.xlsx", ask=False)
    window.session.set_value("confidence", 0.9)
    asked = []

    def cancel(_parent, _title, text, *_args):
        asked.append(text)
        return QMessageBox.StandardButton.Cancel

    monkeypatch.setattr(QMessageBox, "question", cancel)
    assert not window.maybe_keep_changes()
    assert asked == [
        "This session, opened from rounds_simple.xlsx, has changes that are not saved. Save "
        "them as a session file first? Saving never writes over rounds_simple.xlsx: rounds "
        "you added to it are there already."
    ]


def test_paste_into_the_ensemble_table_and_a_column_onto_the_grid(qtbot, window, monkeypatch):
    # Fuzz 17: Ctrl+V on a selected Ensemble cell said "click a confusion-matrix grid or a
    # field first"; a column 1, 2, 3 pasted on TP lost the 3 to the totals row silently.
    from PySide6.QtWidgets import QApplication

    window.tabs.setCurrentIndex(window.tab_keys.index("ensemble"))
    tab = window.tabs.currentWidget()
    view, model = tab.sets_view, tab.sets_model
    view.setCurrentIndex(model.index(1, 1))
    monkeypatch.setattr(QApplication, "focusWidget", staticmethod(lambda: view))
    QApplication.clipboard().setText("90000\n80000\n")
    before = window.session.state.ensemble
    window.paste()
    assert "Pasted 2 of 2 values" in window.statusBar().currentMessage()
    pasted = window.session.state.ensemble
    assert pasted != before
    window.session.undo_stack.undo()  # one step
    assert window.session.state.ensemble == before
    # The grid: the column's third value is said to be left out.
    window.tabs.setCurrentIndex(window.tab_keys.index("evaluate"))
    grid = window.tabs.currentWidget().grid.view
    grid.setCurrentIndex(grid.model().index(0, 0))
    QApplication.clipboard().setText("1\n2\n3\n")
    monkeypatch.setattr(QApplication, "focusWidget", staticmethod(lambda: grid))
    window.paste()
    assert "pasted 2 of 3 values: 1 fell on a total" in window.statusBar().currentMessage()
