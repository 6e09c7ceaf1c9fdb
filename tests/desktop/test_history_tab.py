"""History tab with the rounds of tests/data/fixtures/rounds_simple.xlsx."""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools

import numpy as np
import pytest

from core.compare import compare
from core.confusion import point_estimates
from core.intervals import katz_log_recall, wilson_precision
from core.prevalence import calibrated_metrics_from_round
from core.session import SessionState
from core.workbook.rounds import read_rounds
from desktop.history_tab import COMPARE_REPLICATES, HistoryTab
from desktop.session_model import SessionModel


@pytest.fixture(scope="module")
def rounds(shared_fixtures):
    return read_rounds(shared_fixtures / "rounds_simple.xlsx").rounds


@pytest.fixture
def tab(qtbot, rounds):
    state = dataclasses.replace(SessionState(), rounds=rounds)
    widget = HistoryTab(SessionModel(state))
    qtbot.addWidget(widget)
    widget.resize(1400, 900)
    widget.show()
    qtbot.waitUntil(lambda: bool(widget.comparisons), timeout=20_000)
    yield widget
    widget.shutdown()


def points(item) -> tuple[list, list]:
    """A marker item's data; ``getData()`` gives ``None`` for an empty item."""
    x, y = item.getData()
    return ([], []) if x is None else (list(x), list(y))


def stamp(day: dt.date) -> float:
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC).timestamp()


def test_every_round_is_listed_and_drawn_per_classifier(tab, rounds):
    assert tab.table_model.rowCount() == 10
    assert [row.cells[0] for row in tab.table_model.rows()] == [r.round for r in rounds]
    for classifier in ("travel", "finance"):
        mine = sorted((r for r in rounds if r.classifier == classifier), key=lambda r: r.date)
        items = tab._series[classifier]
        x, y = items["precision_line"].getData()
        np.testing.assert_allclose(x, [stamp(r.date) for r in mine])
        np.testing.assert_allclose(y, [r.tp / (r.tp + r.fp) for r in mine])
        _, recall = items["recall_line"].getData()
        np.testing.assert_allclose(recall, [point_estimates(r.matrix, r.k).recall for r in mine])
        # Error bars: Wilson for precision, Katz log-ratio for recall.
        bars = items["precision_bars"].opts
        np.testing.assert_allclose(
            np.asarray(bars["y"]) - np.asarray(bars["bottom"]),
            [wilson_precision(r.matrix).lower for r in mine],
        )
        recall_bars = items["recall_bars"].opts
        np.testing.assert_allclose(
            np.asarray(recall_bars["y"]) + np.asarray(recall_bars["top"]),
            [katz_log_recall(r.matrix, r.k).upper for r in mine],
        )
        _, calibrated = items["calibrated_line"].getData()
        np.testing.assert_allclose(
            calibrated,
            [calibrated_metrics_from_round(r.matrix, r.k, 0.02).precision for r in mine],
        )
    assert "10</b> rounds, 2 classifier(s)" in tab.summary_label.text()


def test_change_beyond_noise_is_marked(tab, rounds):
    by_name = {r.round: r for r in rounds}
    marked_recall = set()
    marked_precision = set()
    for classifier in ("travel", "finance"):
        mine = sorted((r for r in rounds if r.classifier == classifier), key=lambda r: r.date)
        for before, after in itertools.pairwise(mine):
            expected = compare(
                before.matrix,
                after.matrix,
                k_previous=before.k,
                k_current=after.k,
                replicates=COMPARE_REPLICATES,
                seed=2023,
            )
            shown = tab.comparisons[(rounds.index(before), rounds.index(after))]
            assert shown.precision_change.interval == expected.precision_change.interval
            assert shown.recall_change.interval == expected.recall_change.interval
            for metric, marked in (("precision", marked_precision), ("recall", marked_recall)):
                interval = getattr(expected, f"{metric}_change").interval
                if interval.lower > 0 or interval.upper < 0:
                    marked.add(after.round)
    rises_x, rises_y = points(tab._markers["recall"][0])
    falls_x, _ = points(tab._markers["recall"][1])
    shown_recall = {r.round for r in rounds if stamp(r.date) in set(rises_x) | set(falls_x)}
    assert shown_recall == marked_recall
    # TR-01 -> TR-02: recall rose from 51.6 % to 60.8 %, beyond noise.
    assert "TR-02" in marked_recall
    tr02 = by_name["TR-02"]
    assert rises_y[rises_x.index(stamp(tr02.date))] == pytest.approx(
        point_estimates(tr02.matrix, tr02.k).recall
    )
    row = tab.table_model.rows()[rounds.index(tr02)]
    assert row.warning and row.cells[10].endswith("▲")
    precision_x = [x for item in tab._markers["precision"] for x in points(item)[0]]
    assert {r.round for r in rounds if stamp(r.date) in set(precision_x)} == marked_precision


def test_confidence_and_reference_changes_recompute(qtbot, tab, rounds):
    session = tab._session
    session.set_value("prevalence.reference_prevalence", 0.1)
    _, calibrated = tab._series["travel"]["calibrated_line"].getData()
    first = rounds[0]
    assert calibrated[0] == pytest.approx(
        calibrated_metrics_from_round(first.matrix, first.k, 0.1).precision
    )
    session.set_value("confidence", 0.8)
    bars = tab._series["travel"]["precision_bars"].opts
    assert bars["y"][0] - bars["bottom"][0] == pytest.approx(
        wilson_precision(first.matrix, 0.8).lower
    )
    qtbot.waitUntil(lambda: bool(tab.comparisons), timeout=20_000)
    assert next(iter(tab.comparisons.values())).confidence == 0.8


def test_no_rounds_says_what_to_do(qtbot):
    widget = HistoryTab(SessionModel(SessionState()))
    qtbot.addWidget(widget)
    assert widget.table_model.rowCount() == 0
    assert "Open a workbook" in widget.summary_label.text()
    assert not widget.runner.is_running
    assert widget.grids() == []
    assert widget.confidence_box.toolTip() and widget.reference_spin.toolTip()


def test_date_axis_names_months_not_crowded_days(tab):
    """Rounds over about two months: ticks on the month starts, named "Jan 2026", "Feb"."""
    axis = tab.precision_plot.plotItem.getAxis("bottom")
    low, high = stamp(dt.date(2026, 1, 10)), stamp(dt.date(2026, 3, 25))
    (major_spacing, major), (_, minor) = axis.tickValues(low, high, 600)
    assert major == [stamp(dt.date(2026, 2, 1)), stamp(dt.date(2026, 3, 1))]
    assert axis.tickStrings(major, 1.0, major_spacing) == ["Feb 2026", "Mar"]
    assert all(text == "" for text in axis.tickStrings(minor, 1.0, 7 * 86_400.0))
    # A narrow plot names every other month.
    (_, major), _ = axis.tickValues(stamp(dt.date(2025, 1, 5)), stamp(dt.date(2026, 1, 5)), 300)
    assert len(major) <= 300 // axis.LABEL_WIDTH + 1


def test_legend_sits_under_the_plot_not_on_the_data(tab):
    for plot in (tab.precision_plot, tab.recall_plot):
        legend = plot.legend
        assert legend.isVisible()
        assert legend.sceneBoundingRect().top() >= plot.plotItem.vb.sceneBoundingRect().bottom()
