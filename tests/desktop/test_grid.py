"""The confusion grid behaves like a spreadsheet, tried as a user would."""

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from core.confusion import ConfusionMatrix
from desktop.formatting import percent, thousands
from desktop.grid import ConfusionGrid, parse_block
from desktop.session_model import SessionModel
from tests.desktop.typing import type_into_cell


@pytest.fixture
def grid(qtbot):
    session = SessionModel()
    widget = ConfusionGrid(session, "evaluate.matrix", k_source=lambda: 1 / 19)
    qtbot.addWidget(widget)
    widget.show()
    widget.activateWindow()
    qtbot.waitExposed(widget)
    return session, widget


def test_typing_a_count_with_thousands_separator_and_enter_moves_down(qtbot, grid):
    session, widget = grid
    type_into_cell(qtbot, widget.view, 0, 0, "1,234")
    assert session.state.evaluate.matrix.tp == 1234
    assert widget.view.currentIndex().row() == 1
    assert widget.model.data(widget.model.index(0, 2)) == thousands(1234 + 31)


def test_tab_moves_right(qtbot, grid):
    _, widget = grid
    widget.view.setCurrentIndex(widget.model.index(0, 0))
    widget.view.setFocus()
    qtbot.keyClick(widget.view, Qt.Key.Key_Tab)
    assert widget.view.currentIndex().column() == 1


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("-5", "negative"),
        ("2.5", "fractional"),
        ("abc", "not a number"),
        # A 400-digit count raised OverflowError inside Qt; 5,000 digits showed Python's
        # own "set_int_max_str_digits" advice (fuzz 13).
        ("9" * 400, "has 400 digits: counts are at most 10^15"),
        ("9" * 1000, "has 1,000 digits"),
        ("1e20", "more than 10^15"),
        # Three thousand written as much of Europe writes it was taken as 3 (fuzz 14).
        ("3.000", "'3.000' is ambiguous for a count"),
        ("+3.000", "is ambiguous for a count"),  # with a sign (recheck 14)
    ],
    ids=[
        "negative",
        "fractional",
        "letters",
        "400 digits",
        "1000 digits",
        "1e20",
        "3.000",
        "+3.000",
    ],
)
def test_a_bad_entry_is_refused_at_the_cell_and_the_old_value_stays(qtbot, grid, text, reason):
    session, widget = grid
    before = session.state.evaluate.matrix
    with qtbot.waitSignal(widget.model.refused) as blocker:
        type_into_cell(qtbot, widget.view, 1, 1, text)
    assert reason in blocker.args[0]
    assert session.state.evaluate.matrix == before
    index = widget.model.index(1, 1)
    assert reason in widget.model.data(index, Qt.ItemDataRole.ToolTipRole)
    assert widget.model.data(index, Qt.ItemDataRole.BackgroundRole) is not None
    assert widget.model.data(index) == thousands(before.tn)
    # A good entry afterwards clears the mark.
    type_into_cell(qtbot, widget.view, 1, 1, "700")
    assert widget.model.cell_error(1, 1) is None


def test_paste_a_block_copied_from_a_spreadsheet_with_headers_is_one_undo_step(qtbot, grid):
    session, widget = grid
    QGuiApplication.clipboard().setText(
        "\tActual +\tActual -\tTotal\nPredicted +\t138\t22\t160\nPredicted -\t108\t4,732\t4,840\n"
    )
    widget.view.setFocus()
    qtbot.keyClick(widget.view, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)
    assert session.state.evaluate.matrix == ConfusionMatrix(tp=138, fp=22, fn=108, tn=4732)
    session.undo_stack.undo()
    assert session.state.evaluate.matrix == ConfusionMatrix(tp=225, fp=31, fn=14, tn=730)
    session.undo_stack.redo()
    assert session.state.evaluate.matrix.tn == 4732


def test_paste_with_a_bad_cell_changes_nothing_and_says_where(qtbot, grid):
    session, widget = grid
    before = session.state.evaluate.matrix
    QGuiApplication.clipboard().setText("10\t20\n30\t-4\n")
    with qtbot.waitSignal(widget.model.refused) as blocker:
        widget.view.paste_clipboard()
    assert "row 2, column 2" in blocker.args[0]
    assert session.state.evaluate.matrix == before


def test_copy_out_as_tab_separated_text(qtbot, grid):
    _, widget = grid
    widget.view.clearSelection()
    text = widget.view.copy_selection()
    assert QGuiApplication.clipboard().text() == text
    lines = text.splitlines()
    assert lines[1].split("\t") == ["Predicted +", "225", "31", "256"]
    assert lines[3].split("\t")[-1] == "1000"
    # Pasting our own copy back is a no-op.
    assert parse_block(text)[:2] == [[225, 31, 256], [14, 730, 744]]


def test_every_edit_is_undoable(qtbot, grid):
    session, widget = grid
    type_into_cell(qtbot, widget.view, 0, 1, "40")
    type_into_cell(qtbot, widget.view, 1, 0, "20")
    assert session.undo_stack.count() == 2
    session.undo_stack.undo()
    session.undo_stack.undo()
    assert session.state.evaluate.matrix == ConfusionMatrix(tp=225, fp=31, fn=14, tn=730)


def test_live_readout_follows_the_counts(qtbot, grid):
    _, widget = grid
    type_into_cell(qtbot, widget.view, 0, 0, "31")  # precision 31/62 = 50 %
    text = widget.readout.text()
    assert f"Precision</b>&nbsp;{percent(0.5)}".replace(" ", "\u00a0") in text
    # Under the grid, not beside it: the grid has the column's whole width.
    assert widget.readout.geometry().top() >= widget.view.geometry().bottom()


def test_a_block_larger_than_the_counts_is_refused_not_cut_to_its_corner(qtbot, grid):
    session, widget = grid
    before = session.state.evaluate.matrix
    QGuiApplication.clipboard().setText("\n".join("\t".join(["5"] * 6) for _ in range(5)))
    with qtbot.waitSignal(widget.model.refused) as blocker:
        widget.view.paste_clipboard()
    assert "5 rows by 6 columns" in blocker.args[0]
    assert session.state.evaluate.matrix == before


def test_a_refusal_of_a_long_entry_shows_it_shortened(qtbot, grid):
    _, widget = grid
    with qtbot.waitSignal(widget.model.refused):
        # Pasted, as such text comes: typing it key by key would take minutes.
        widget.model.setData(widget.model.index(0, 0), "x" * 100_000)
    tip = widget.model.data(widget.model.index(0, 0), Qt.ItemDataRole.ToolTipRole)
    assert "not a number" in tip and len(tip) < 300


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("45\t\n3\t200\n", "pasted row 1, column 2 is empty"),  # FP left empty
        ("\t45\n3\t200\n", "pasted row 1, column 1 is empty"),  # TP left empty
        ("45\t7\n\t200\n", "pasted row 2, column 1 is empty"),  # FN left empty
        ("5\n\n7\n", "pasted row 2 is empty inside the block"),  # a column with a gap
        ("\tActual +\tActual -\nPredicted +\t45\t\nPredicted -\t3\t200\n", "row 2, column 3"),
        # A whole row or column of zeros Excel hides was dropped, and the cells under it
        # kept their old counts (review 19).
        ("45\t7\r\n\t\r\n", "pasted row 2 is empty inside the block"),  # FN = TN = 0
        ("45\t\r\n3\t\r\n", "pasted row 1, column 2 is empty"),  # FP = TN = 0
        ("\t45\r\n\t3\r\n", "pasted row 1, column 1 is empty"),  # TP = FN = 0
        ("\tA+\tA-\nP+\t45\t7\n\nP-\t3\t200", "pasted row 3 is empty inside the block"),
    ],
)
def test_an_empty_cell_inside_a_pasted_block_is_refused_not_skipped(qtbot, grid, text, where):
    """Excel shows a zero count as an empty cell when zeros are hidden. Skipping the cell
    slid the counts after it into the wrong cells without a word (fuzz 19)."""
    session, widget = grid
    before = session.state.evaluate.matrix
    with qtbot.waitSignal(widget.model.refused) as blocker:
        assert not widget.model.paste_text(text)
    assert where in blocker.args[0] and "type 0 for a zero count" in blocker.args[0]
    assert session.state.evaluate.matrix == before


def test_blank_lines_around_a_pasted_block_are_not_part_of_it(qtbot, grid):
    session, widget = grid
    assert widget.model.paste_text("\n45\t7\r\n3\t200\n\n")
    assert session.state.evaluate.matrix == ConfusionMatrix(tp=45, fp=7, fn=3, tn=200)
    # A column of empty cells after the counts may be zeros Excel hides: not taken as
    # nothing (review 19).
    assert not widget.model.paste_text("45\t7\t\r\n3\t200\t\n")
    # a header row with an empty corner, a header column: dropped as before
    assert widget.model.paste_text("\tActual +\tActual -\nPredicted +\t1\t2\nPredicted -\t3\t4")
    assert session.state.evaluate.matrix == ConfusionMatrix(tp=1, fp=2, fn=3, tn=4)


def test_labels_1_and_0_over_the_counts_are_refused(qtbot, grid):
    """A table headed by the labels 1 and 0 (as a model's report prints it) pasted as
    TP 1, FP 0 (review 19)."""
    session, widget = grid
    before = session.state.evaluate.matrix
    for text in ("Actual\t1\t0\nPred 1\t45\t7\nPred 0\t3\t200", "\t1\t0\n1\t45\t7\n0\t3\t200"):
        with qtbot.waitSignal(widget.model.refused) as blocker:
            assert not widget.model.paste_text(text)
        assert "holds 1 and 0, labels rather than counts" in blocker.args[0]
    assert session.state.evaluate.matrix == before
