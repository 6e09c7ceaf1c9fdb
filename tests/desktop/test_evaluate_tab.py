"""Evaluate tab, driven as a user would."""

from __future__ import annotations

import dataclasses
import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QLineEdit

from core.compare import compare
from core.confusion import ConfusionMatrix, Population
from core.evaluation import evaluate
from core.session import SessionState
from core.workbook.rounds import Round
from desktop.evaluate_tab import EvaluateTab, is_resampled
from desktop.session_model import SessionModel

PAPER_TABLE_1 = ConfusionMatrix(tp=138, fp=22, fn=108, tn=4732)


def make_tab(qtbot, state: SessionState | None = None) -> EvaluateTab:
    widget = EvaluateTab(SessionModel(state or SessionState()))
    qtbot.addWidget(widget)
    widget.resize(1400, 900)
    widget.show()
    qtbot.waitUntil(lambda: widget.evaluation is not None, timeout=10_000)
    return widget


@pytest.fixture
def tab(qtbot):
    widget = make_tab(qtbot)
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
    qtbot.waitUntil(lambda: view.state() != QAbstractItemView.State.EditingState)


def shown_rows(tab):
    return [
        (row.metric, row.method, row.estimate, row.lower, row.upper, row.note)
        for row in tab.table_model.result_rows()
    ]


def test_typed_counts_give_core_results_in_table_and_forest(qtbot, tab):
    session = tab._session
    qtbot.mouseClick(tab.random_check, Qt.MouseButton.LeftButton)
    assert session.get("evaluate.population.mode") == "random"
    for (row, column), value in zip(
        ((0, 0), (0, 1), (1, 0), (1, 1)), PAPER_TABLE_1.as_tuple(), strict=True
    ):
        type_into_cell(qtbot, tab.grid.view, row, column, f"{value:,}")
    assert session.get("evaluate.matrix") == PAPER_TABLE_1
    qtbot.waitUntil(
        lambda: tab.evaluation is not None and tab.evaluation.matrix == PAPER_TABLE_1,
        timeout=10_000,
    )
    expected = evaluate(
        PAPER_TABLE_1, population=None, confidence=0.95, replicates=10_000, seed=2023
    )
    assert shown_rows(tab) == [row for row in expected.to_rows() if row[0] != "prevalence"]
    # Paper, Table 1: 86.3 % precision, 56.1 % recall.
    assert tab.table_model.index(0, 2).data() == "86.3 %"
    recall_row = next(i for i, r in enumerate(shown_rows(tab)) if r[0] == "recall")
    assert tab.table_model.index(recall_row, 2).data() == "56.1 %"
    # Random design adds the textbook Wald interval for recall.
    assert ("recall", "wald") in [(r[0], r[1]) for r in shown_rows(tab)]
    # The forest plot draws exactly core's bounds, one row per method.
    for metric in ("precision", "recall", "f1"):
        estimate, lower, upper = tab.forest.interval_data(metric)
        intervals = getattr(expected, metric).intervals
        assert len(estimate) == len(intervals)
        for i, interval in enumerate(intervals.values()):
            assert lower[i] == pytest.approx(min(interval.lower, estimate[i]), abs=1e-12)
            assert upper[i] == pytest.approx(max(interval.upper, estimate[i]), abs=1e-12)
    _, fpr_lower, fpr_upper = tab.fpr_forest.interval_data("fpr")
    assert fpr_lower[0] == pytest.approx(expected.fpr.intervals["katz_log"].lower)
    assert fpr_upper[0] == pytest.approx(expected.fpr.intervals["katz_log"].upper)


def test_closed_forms_at_once_resampled_in_background(qtbot, tab):
    session = tab._session
    session.set_value("evaluate.replicates", 200_000)
    # Straight after the edit, before the event loop ran: closed forms shown, rest pending.
    assert tab.evaluation is None
    rows = tab.table_model.result_rows()
    closed = [r for r in rows if not is_resampled(r.metric, r.method)]
    pending = [r for r in rows if is_resampled(r.metric, r.method)]
    assert closed and all(r.lower is not None and not r.pending for r in closed)
    assert pending and all(r.pending and r.lower is None for r in pending)
    assert "computing" in tab.table_model.index(rows.index(pending[0]), 3).data()
    assert "being computed" in tab.warnings_label.text()
    qtbot.waitUntil(lambda: tab.evaluation is not None, timeout=20_000)
    assert tab.evaluation.replicates == 200_000
    assert not any(r.pending for r in tab.table_model.result_rows())
    assert tab.warnings_label.isHidden()


def test_newer_edit_supersedes_a_stale_run(qtbot, tab):
    session = tab._session
    delivered = []
    tab.runner.finished.connect(delivered.append)
    session.set_value("evaluate.matrix.tp", 200)
    session.set_value("evaluate.matrix.tp", 210)
    session.set_value("evaluate.matrix.tp", 220)
    qtbot.waitUntil(lambda: tab.evaluation is not None, timeout=10_000)
    tab.runner.wait()
    qtbot.wait(20)
    assert [e.matrix.tp for e in delivered] == [220]
    assert tab.evaluation.matrix.tp == 220


def test_zero_cell_warns_in_tab_and_status_bar(qtbot, tab):
    session = tab._session
    with qtbot.waitSignal(tab.status_message, timeout=10_000) as blocker:
        session.set_value("evaluate.matrix.fn", 0)
    qtbot.waitUntil(lambda: tab.evaluation is not None, timeout=10_000)
    assert "Haldane" in tab.warnings_label.text()
    assert tab.warnings_label.isVisible()
    assert blocker.args[0].startswith("Evaluate: ")
    notes = [r.note for r in tab.table_model.result_rows() if r.note]
    assert any("Haldane" in note for note in notes)


def test_empty_stratum_is_explained_not_crashed(qtbot, tab):
    session = tab._session
    session.set_values([("evaluate.matrix.fn", 0), ("evaluate.matrix.tn", 0)])
    assert tab.evaluation is None and tab.table_model.rowCount() == 0
    assert "predicted-negative sample is empty" in tab.warnings_label.text()
    session.undo_stack.undo()
    qtbot.waitUntil(lambda: tab.evaluation is not None, timeout=10_000)
    assert tab.table_model.rowCount() > 0


def test_population_counts_and_k_feed_core(qtbot, tab):
    session = tab._session
    session.set_values([("evaluate.population.mode", "k"), ("evaluate.population.k", 1 / 19)])
    qtbot.waitUntil(lambda: tab.evaluation is not None, timeout=10_000)
    assert tab.evaluation.k == pytest.approx(1 / 19)
    expected = evaluate(
        session.get("evaluate.matrix"),
        population=Population.from_k(1 / 19),
        replicates=10_000,
        seed=2023,
    )
    assert shown_rows(tab) == [row for row in expected.to_rows() if row[0] != "prevalence"]
    assert not tab.random_check.isChecked()


def test_comparison_with_previous_round(qtbot):
    past = Round(
        sheet="Rounds",
        row=2,
        round="TR-01",
        classifier="travel",
        k=41_200 / 1_251_000,
        population_pos=41_200,
        population_neg=1_251_000,
        tp=135,
        fp=24,
        fn=127,
        tn=4714,
    )
    state = dataclasses.replace(SessionState(), rounds=(past,), previous_round="TR-01")
    tab = make_tab(qtbot, state)
    qtbot.waitUntil(lambda: tab.comparison is not None, timeout=10_000)
    current = state.evaluate.matrix
    expected = compare(
        past.matrix, current, k_previous=past.k, k_current=41_200 / 1_251_000, seed=2023
    )
    rows = tab.compare_model.rows()
    assert [row.values[0] for row in rows] == ["Precision", "Recall"]
    assert rows[0].values[3] == pytest.approx(expected.precision_change.estimate)
    assert rows[0].values[4] == expected.precision_change.interval
    assert rows[0].cells[5] == f"{expected.precision_change.p_worse * 100:.1f} %"
    assert rows[1].values[4].lower == pytest.approx(expected.recall_change.interval.lower)
    # One rule for every change: a sign and one decimal (+1.6 pp, −1.0 pp).
    for row in rows:
        assert re.fullmatch(r"[+−]?\d+\.\d pp", row.cells[3]), row.cells[3]
        assert re.fullmatch(r"[+−]?\d+\.\d to [+−]?\d+\.\d pp", row.cells[4]), row.cells[4]
    assert "TR-01" in tab.compare_label.text()
    # Clearing the choice clears the comparison.
    tab._session.set_value("previous_round", "")
    assert tab.compare_model.rowCount() == 0
    assert "Choose a previous round" in tab.compare_label.text()
    tab.shutdown()


def test_inputs_have_tooltips_and_grid_is_exposed(tab):
    for widget in (
        tab.random_check,
        tab.confidence_box,
        tab.replicates_spin,
        tab.seed_spin,
        tab.fpc_check,
        tab.grid.view,
        tab.population.mode,
        tab.population.positives,
    ):
        assert widget.toolTip(), widget
    assert tab.grids() == [tab.grid]


def test_seed_is_an_identifier_and_table_sits_beside_the_forest(tab):
    assert tab.seed_spin.text() == "2023"  # no thousands separator in an identifier
    assert tab.results_splitter.orientation() == Qt.Orientation.Horizontal
    assert tab.results_splitter.indexOf(tab.table_view.parentWidget()) == 0
    assert tab.results_splitter.indexOf(tab.forest.parentWidget()) == 1
    header = tab.table_view.horizontalHeader()
    assert not header.stretchLastSection()  # the Note column is as wide as its notes


def test_prediction_intervals_are_labelled_as_predictions_for_the_next_round():
    from desktop.evaluate_tab import METHOD_NAMES, METHOD_TIPS

    for key in ("bayes", "bayes_mc"):
        assert "next round" in METHOD_NAMES[key]
        assert "next round" in METHOD_TIPS[key] or "future round" in METHOD_TIPS[key]


def test_every_forest_row_label_fits_its_axis(qtbot, tab):
    """pyqtgraph drops a tick label wider than its axis: every method's row must be named,
    the long prediction labels too ("Precision · Bayes predictive MC, next round")."""
    qtbot.waitUntil(lambda: tab.evaluation is not None, timeout=20_000)
    for forest in (tab.forest, tab.fpr_forest):
        axis = forest.getAxis("left")
        labels = list(forest._labels.values())
        assert labels
        widest = max(forest._tick_metrics.horizontalAdvance(label) for label in labels)
        assert axis.width() >= widest
    assert any("next round" in label for label in tab.forest._labels.values())


# --- which interval to quote, numbers that read alike, a 1280 x 800 window ----------------------


def marked_rows(tab):
    model = tab.table_model
    return [
        (row.metric, row.method)
        for index, row in enumerate(model.result_rows())
        if model.index(index, 1).data().endswith("★ quote this")
    ]


def test_the_interval_to_quote_is_marked_and_explained(qtbot, tab):
    from core.methods import RECOMMENDED
    from desktop import formatting

    qtbot.waitUntil(lambda: tab.evaluation is not None, timeout=20_000)
    evaluation = tab.evaluation
    recommended = evaluation.recommended()
    # the command line's *: Wilson for precision, Katz log for recall, Wilson ratio for FPR,
    # bootstrap for F1
    assert recommended == {
        "precision": "wilson",
        "recall": "katz_log",
        "f1": "bootstrap",
        "fpr": "wilson_ratio",
    }
    assert sorted(marked_rows(tab)) == sorted(recommended.items())  # one row per metric
    model = tab.table_model
    for index, row in enumerate(model.result_rows()):
        quoted = recommended[row.metric] == row.method
        font = model.index(index, 3).data(Qt.ItemDataRole.FontRole)
        assert (font is not None and font.bold()) == quoted, (row.metric, row.method)
        tip = model.index(index, 1).data(Qt.ItemDataRole.ToolTipRole)
        assert ("Quote this interval" in tip) == quoted
        if quoted:
            assert RECOMMENDED[row.metric].why in tip
    wilson = next(i for i, r in enumerate(model.result_rows()) if r.method == "wilson")
    assert model.index(wilson, 1).data() == "Wilson ★ quote this"
    # one line under the table says what the mark means, its tooltip says why per metric
    assert tab.quote_legend.isVisible()
    assert tab.quote_legend.text().startswith("<b>★ quote this</b>: the interval to report")
    assert all(item.why in tab.quote_legend.toolTip() for item in RECOMMENDED.values())
    # the forest marks the same rows
    assert "Wilson ★" in tab.forest._labels.values()
    assert "Wilson ratio ★" in tab.fpr_forest._labels.values()
    # the summary quotes each estimate with that interval, unit once
    precision = evaluation.precision.intervals["wilson"]
    expected = (
        f"Precision</b> {formatting.percent(evaluation.precision.estimate)} (★ Wilson "
        f"{formatting.percent_range(precision.lower, precision.upper, 1)})"
    )
    summary = tab.summary_label.text().replace("\u00a0", " ")
    assert expected in summary, summary
    assert "Precision</b> 87.9 % (★ Wilson 83.3–91.3 %)" in summary  # the guide's example
    assert "(★ Bootstrap " in summary  # F1's resampled interval, once computed


def test_the_summary_says_a_resampled_interval_is_coming(qtbot, tab):
    tab._session.set_value("evaluate.replicates", 200_000)
    summary = tab.summary_label.text().replace("\u00a0", " ")
    assert "(★ Bootstrap computing…)" in summary
    assert "(★ Wilson " in summary  # closed forms at once
    qtbot.waitUntil(lambda: tab.evaluation is not None, timeout=20_000)
    assert "computing" not in tab.summary_label.text()


def test_a_random_sample_marks_only_what_it_computed(qtbot, tab):
    qtbot.mouseClick(tab.random_check, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: tab.evaluation is not None and tab.evaluation.design == "random", timeout=20_000
    )
    assert sorted(marked_rows(tab)) == sorted(tab.evaluation.recommended().items())


def test_each_metric_reads_with_the_decimals_of_its_estimate(qtbot, tab):
    qtbot.waitUntil(lambda: tab.evaluation is not None, timeout=20_000)
    model = tab.table_model
    decimals = {"precision": 1, "recall": 1, "f1": 1, "fpr": 3}  # 87.9 %, 0.405 %
    for index, row in enumerate(model.result_rows()):
        for column in (2, 3, 4, 5):
            text = model.index(index, column).data()
            if not text:
                continue  # the estimate is shown on a metric's first row only
            number = text.removesuffix(" %")
            assert len(number.split(".")[1]) == decimals[row.metric], (row.metric, column, text)
    precision_wilson = next(i for i, r in enumerate(model.result_rows()) if r.method == "wilson")
    assert model.index(precision_wilson, 5).data() == "8.0 %"  # not 7.99 % beside 11.3 %


def test_digits_and_ranges_for_people():
    from desktop import formatting

    assert formatting.percent_digits(0.879) == 1
    assert formatting.percent_digits(0.0462) == 2
    assert formatting.percent_digits(0.00405) == 3
    assert formatting.percent(0.0799, formatting.percent_digits(0.879)) == "8.0 %"
    assert formatting.percent_range(0.833, 0.913) == "83.3–91.3 %"
    assert formatting.percent_range(0.00291, 0.00562) == "0.291–0.562 %"
    assert formatting.percent_range(None, 0.5) == "–"


def test_compare_headers_are_plain_words(qtbot):
    from desktop.evaluate_tab import COMPARE_HEADERS

    assert COMPARE_HEADERS[-1] == "Chance of decline"
    assert not any("(" in header for header in COMPARE_HEADERS)


def test_the_evaluate_tab_fits_a_1280_by_800_window(qtbot, tmp_path, monkeypatch):
    from PySide6.QtCore import QSize
    from PySide6.QtWidgets import QMessageBox

    from desktop import main_window as main_window_module
    from desktop.main_window import MainWindow, app_settings

    monkeypatch.setenv(main_window_module.SETTINGS_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(
        QMessageBox, "question", lambda *args, **kwargs: QMessageBox.StandardButton.Discard
    )
    window = MainWindow(settings=app_settings())
    qtbot.addWidget(window)
    window.load_example()
    rounds = window.session.state.rounds
    window.choose_previous_round(max(i for i, r in enumerate(rounds) if r.classifier == "travel"))
    window.resize(QSize(1280, 800))
    window.show()
    qtbot.waitExposed(window)
    window.tabs.setCurrentIndex(window.tab_keys.index("evaluate"))
    tab = window.tabs.currentWidget()
    qtbot.waitUntil(
        lambda: tab.evaluation is not None and tab.comparison is not None, timeout=20_000
    )
    qtbot.wait(50)  # posted layout requests
    assert window.size() == QSize(1280, 800)
    assert tab.quote_legend.isVisible()
    assert tab.quote_legend.height() >= tab.quote_legend.heightForWidth(tab.quote_legend.width())
    for forest in (tab.forest, tab.fpr_forest):
        # the plot is drawn inside its widget: no title, label or interval cut at the edge
        assert forest.plotItem.geometry().width() <= forest.width() + 1
        right = forest.mapTo(tab, forest.rect().topRight()).x()
        assert right <= tab.width()


def test_no_false_positive_and_no_miss_is_not_shown_as_certain(qtbot):
    # FP = FN = 0: the bootstrap cannot vary F1 (every replicate gives 100 %), and FPR's
    # upper bound is 0.043 % (its value is core's business, tested there): the screen must
    # show both as uncertain.
    state = SessionState()
    state = dataclasses.replace(
        state,
        evaluate=dataclasses.replace(
            state.evaluate,
            matrix=ConfusionMatrix(tp=180, fp=0, fn=0, tn=1788),
            population=dataclasses.replace(
                state.evaluate.population,
                mode="counts",
                predicted_positive=20_000,
                predicted_negative=980_000,
            ),
        ),
    )
    tab = make_tab(qtbot, state)
    qtbot.waitUntil(lambda: "computing" not in tab.summary_label.text(), timeout=20_000)
    summary = tab.summary_label.text().replace("\u00a0", " ")
    assert "(★ Posterior " in summary and "Bootstrap 100.0–100.0 %" not in summary
    upper = tab.evaluation.fpr.intervals["wilson_ratio"].upper
    assert 0.0004 < upper < 0.00045
    assert "FPR</b> 0.000 % (★ Wilson ratio 0.000–0.043 %)" in summary, summary
    rows = tab.table_model.result_rows()
    f1_quoted = [row.method for row in rows if row.metric == "f1" and row.quoted]
    assert f1_quoted == ["posterior"]
    tip = tab.table_model.index(
        next(i for i, row in enumerate(rows) if row.metric == "f1" and row.quoted), 1
    ).data(Qt.ItemDataRole.ToolTipRole)
    assert "cannot vary a count of 0" in tip
    tab.shutdown()


def test_the_plot_names_each_interval_as_the_table_does(qtbot, tab):
    """With the finite population correction the exact and Jeffreys intervals of precision
    are no longer binomial ones: the table and the plot beside it (and the report's picture
    of it) call them the same ("exact (hypergeometric)", not "Clopper-Pearson")."""

    def table_names():
        model = tab.table_model
        return [
            model.index(i, 1).data().replace("★ quote this", "★").strip()
            for i, row in enumerate(model.result_rows())
            if row.metric in ("precision", "recall", "f1")
        ]

    def plot_names():
        return [label for label in tab.forest._labels.values() if not label.endswith(":")]

    assert plot_names() == table_names()
    assert "Clopper-Pearson" in plot_names()
    tab.fpc_check.box.click()
    qtbot.waitUntil(
        lambda: tab.evaluation is not None and tab.evaluation.fpc is not None, timeout=10_000
    )
    qtbot.waitUntil(lambda: "exact (hypergeometric)" in plot_names(), timeout=10_000)
    assert plot_names() == table_names()
    assert "Jeffreys (finite list)" in plot_names() and "Clopper-Pearson" not in plot_names()
