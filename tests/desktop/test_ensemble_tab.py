"""Ensemble tab, driven as a user would."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QLineEdit

from core.ensemble import ChildSet, plan_recycled_labels, precision_sample_size
from core.session import SessionState
from desktop.ensemble_tab import BARS_ALONE, BARS_REUSED, EnsembleTab, simulate_ensemble
from desktop.session_model import SessionModel


@pytest.fixture
def tab(qtbot):
    session = SessionModel(SessionState())
    widget = EnsembleTab(session)
    qtbot.addWidget(widget)
    widget.resize(1200, 800)
    widget.show()
    qtbot.waitUntil(lambda: widget.run is not None, timeout=10_000)
    yield widget
    widget.shutdown()


def type_into_cell(qtbot, view, row: int, column: int, text: str) -> None:
    """Select a cell, type as in a spreadsheet (the first key opens the editor), Enter."""
    view.setFocus()
    view.setCurrentIndex(view.model().index(row, column))
    qtbot.keyClick(view, text[0])
    # The previous cell's editor may still await deletion: take the open (visible) one.
    editors = [e for e in view.findChildren(QLineEdit) if e.isVisible()]
    assert len(editors) == 1, "typing did not open a cell editor"
    editor = editors[0]
    qtbot.keyClicks(editor, text[1:])
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    # The delegate commits through a queued call: let the event loop deliver it.
    qtbot.waitUntil(lambda: view.state() != QAbstractItemView.State.EditingState)


def test_results_equal_core_simulation(tab):
    session = tab._session
    inputs, confidence = session.get("ensemble"), session.get("confidence")
    size = precision_sample_size(inputs.margin, confidence, precision_floor=inputs.precision_floor)
    # Child by child, each from the seed (as `prplanner ensemble --seed` simulates one).
    for row, child in zip(tab.results_model.rows()[1:-1], inputs.children, strict=True):
        expected = plan_recycled_labels(
            inputs.parent_size,
            [ChildSet(size=child.size, overlap=child.overlap, name=child.name)],
            n_parent=size.n,
            n_child=size.n,
            mix=inputs.mix,
            trials=inputs.trials,
            rng=inputs.seed,
        ).savings[0]
        assert row.values[0] == child.name
        assert row.values[1] == size.n == 1068
        assert row.values[2] == pytest.approx(expected.expected_reused)
        assert row.values[3] == pytest.approx(expected.expected_new_labels)
        assert row.values[5] == pytest.approx(expected.savings_pct_interval)
    total = tab.results_model.rows()[-1]
    assert total.values[3] == pytest.approx(size.n + tab.run.plan.total_new_labels)
    # The bars show the same numbers: labels alone and the expected new labels.
    _x, heights = tab.tops_recycled.getData()
    assert list(heights) == pytest.approx(
        [size.n] + [s.expected_new_labels for s in tab.run.plan.savings]
    )
    assert list(tab.tops_alone.getData()[1]) == [size.n] * 4


def test_typed_size_is_undoable_and_rerun(qtbot, tab):
    session = tab._session
    type_into_cell(qtbot, tab.sets_view, 1, 1, "45,000")
    assert session.get("ensemble.children")[0].size == 45_000
    assert tab.sets_model.index(1, 1).data() == "45,000"
    qtbot.waitUntil(lambda: tab.run.inputs.children[0].size == 45_000, timeout=10_000)
    session.undo_stack.undo()
    assert session.get("ensemble.children")[0].size == 41_200
    assert tab.sets_model.index(1, 1).data() == "41,200"
    qtbot.waitUntil(lambda: tab.run.inputs.children[0].size == 41_200, timeout=10_000)
    session.undo_stack.redo()
    assert session.get("ensemble.children")[0].size == 45_000


def test_overlap_larger_than_set_is_refused_at_the_cell(qtbot, tab):
    session = tab._session
    before = session.state
    type_into_cell(qtbot, tab.sets_view, 3, 2, "99000")
    assert session.state == before
    reason = tab.sets_model.cell_error(3, 2)
    assert "larger than its set" in reason
    assert "Refused" in tab.sets_model.index(3, 2).data(Qt.ItemDataRole.ToolTipRole)
    assert "larger" in tab.message_label.text()
    type_into_cell(qtbot, tab.sets_view, 3, 2, "text")
    assert "not a number" in tab.sets_model.cell_error(3, 2)
    type_into_cell(qtbot, tab.sets_view, 3, 2, "20000")
    assert tab.sets_model.cell_error(3, 2) is None
    assert session.get("ensemble.children")[2].overlap == 20_000


def test_add_and_remove_child_buttons_undo(qtbot, tab):
    session = tab._session
    qtbot.mouseClick(tab.add_button, Qt.MouseButton.LeftButton)
    assert len(session.get("ensemble.children")) == 4
    assert tab.sets_model.rowCount() == 5
    qtbot.waitUntil(lambda: len(tab.run.plan.children) == 4, timeout=10_000)
    assert tab.results_model.rowCount() == 6
    tab.sets_view.setCurrentIndex(tab.sets_model.index(2, 0))
    qtbot.mouseClick(tab.remove_button, Qt.MouseButton.LeftButton)
    names = [child.name for child in session.get("ensemble.children")]
    assert names == ["travel", "travel rules", "child 4"]
    session.undo_stack.undo()
    session.undo_stack.undo()
    assert session.get("ensemble.children") == SessionState().ensemble.children
    assert tab.sets_model.rowCount() == 4


def test_without_children_nothing_of_the_last_run_is_left_on_screen(qtbot, tab):
    session = tab._session
    assert tab.plot.isVisibleTo(tab) and tab.progress.value() == 100
    session.set_value("ensemble.children", ())
    assert tab.run is None and tab.results_model.rowCount() == 0
    assert not tab.plot.isVisibleTo(tab)  # no bars, no names of the removed classifiers
    assert tab.plot.getAxis("bottom")._tickLevels == [[], []]
    assert tab.progress.value() == 0
    assert "No child classifiers" in tab.sample_size_label.text()
    session.undo_stack.undo()
    qtbot.waitUntil(lambda: tab.run is not None, timeout=10_000)
    assert tab.plot.isVisibleTo(tab)


def test_simulation_runs_in_background_and_can_be_cancelled(qtbot, tab):
    session = tab._session
    finished_run = tab.run
    session.set_value("ensemble.trials", 5_000)
    assert tab.runner.is_running  # started by the edit, off the GUI thread
    assert tab.cancel_button.isEnabled()
    qtbot.mouseClick(tab.cancel_button, Qt.MouseButton.LeftButton)
    assert not tab.runner.is_running
    assert not tab.cancel_button.isEnabled()
    assert "cancelled" in tab.status_label.text()
    tab.runner.wait()
    qtbot.wait(50)
    assert tab.run is finished_run  # the cancelled (stale) result never lands


def test_cancel_stops_between_children():
    from core.progress import Cancelled, TaskControl

    control = TaskControl()
    control.cancel()
    with pytest.raises(Cancelled):
        simulate_ensemble(SessionState().ensemble, 0.95, control)


def test_margin_and_confidence_inputs_bound_both_ways(qtbot, tab):
    session = tab._session
    tab.margin_spin.lineEdit().selectAll()
    qtbot.keyClicks(tab.margin_spin.lineEdit(), "5")
    qtbot.keyClick(tab.margin_spin.lineEdit(), Qt.Key.Key_Return)
    assert session.get("ensemble.margin") == pytest.approx(0.05)
    expected = precision_sample_size(0.05, 0.95).n
    assert f"{expected:,}" in tab.sample_size_label.text()
    # The margin keeps its one decimal; the confidence reads as chosen ("95 %").
    shown = tab.sample_size_label.text().replace("\u00a0", " ")
    assert "±5.0 % at 95 % confidence" in shown
    session.set_value("confidence", 0.9)
    assert tab.confidence_box.currentText() == "90 %"
    qtbot.waitUntil(lambda: tab.run.sample_size.confidence == 0.9, timeout=10_000)


def test_every_input_has_a_tooltip(tab):
    for widget in (
        tab.margin_spin,
        tab.confidence_box,
        tab.floor_spin,
        tab.mix_combo,
        tab.trials_spin,
        tab.seed_spin,
        tab.add_button,
        tab.remove_button,
        tab.sets_view,
    ):
        assert widget.toolTip(), widget
    assert tab.grids() == []


def test_tables_and_chart_speak_in_words(tab):
    """No set symbols or intersection-ratio abbreviations in what a lead reads; the
    symbols stay in the tooltips."""
    results = tab.results_model
    headers = [
        results.headerData(column, Qt.Orientation.Horizontal)
        for column in range(results.columnCount())
    ]
    assert headers == [
        "Classifier",
        "Labels\nwithout reuse",
        "Labels\nreused",
        "Labels\nto buy",
        "Saving",
        "Saving,\n95 % range",
        "Overlap as %\nof parent's",
        "Overlap as %\nof its own",
    ]
    tips = [
        results.headerData(column, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
        for column in range(results.columnCount())
    ]
    assert "PIR" in tips[6] and "CIR" in tips[7]
    sets = tab.sets_model
    set_headers = [
        sets.headerData(column, Qt.Orientation.Horizontal) for column in range(sets.columnCount())
    ]
    assert set_headers == ["Classifier", "Predicted positive", "Overlap with parent"]
    for text in [*headers, *set_headers, tab.sample_size_label.text(), tab.status_label.text()]:
        for symbol in ("PIR", "CIR", "|A", "p =", "recycl"):
            assert symbol not in text
    plot = tab.plot.plotItem
    assert plot.getAxis("left").labelText == "Labels"
    assert plot.getAxis("bottom").labelText == "Classifier"


def test_percentages_in_a_column_share_their_decimals(tab):
    """Savings, their ranges and the overlap shares: one decimal in every row."""
    one_decimal = re.compile(r"^\d+\.\d %$")
    rows = tab.results_model.rows()
    for row in rows[1:-1]:
        saving, spread, parent_share, own_share = row.cells[4:8]
        # The range as on the Evaluate tab: "27.2–32.7 %", the unit once.
        low, high = spread.split("–")
        for cell in (saving, f"{low} %", high, parent_share, own_share):
            assert one_decimal.match(cell), cell
    assert one_decimal.match(rows[-1].cells[4])


def test_labels_axis_groups_thousands_like_the_table(tab):
    axis = tab.plot.plotItem.getAxis("left")
    assert axis.tickStrings([500.0, 1000.0, 1500.0], 1.0, 500.0) == ["500", "1,000", "1,500"]


def test_chart_legend_is_whole_and_inside_the_chart(qtbot, tab):
    """Every legend entry is shown in full (never cut with "…") and the legend lies inside
    the chart, at the tab's default size and at a 1280 x 800 window's."""
    legend = tab.plot.legend
    assert [label.text for _sample, label in legend.items] == [BARS_ALONE, BARS_REUSED]
    for size in ((1200, 800), (1000, 560)):
        tab.resize(*size)
        qtbot.wait(20)
        chart = tab.plot.plotItem.sceneBoundingRect()
        shown = tab.plot.mapToScene(tab.plot.viewport().rect()).boundingRect()
        assert chart.contains(legend.sceneBoundingRect())
        assert shown.contains(legend.sceneBoundingRect())
        assert legend.sceneBoundingRect().top() >= (
            tab.plot.plotItem.vb.sceneBoundingRect().bottom()
        )


def test_hover_names_the_classifier_and_the_labels(tab):
    text = tab.plot.read_out_text("With reuse (average)", 1.2, 748.6)
    assert text == "With reuse (average)\nClassifier: travel\nLabels: 749"
    assert tab.plot.read_out_text("Without reuse", 0.8, 1068.0).endswith("Labels: 1,068")
