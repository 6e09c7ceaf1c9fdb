"""History tab with the rounds of tests/data/fixtures/rounds_simple.xlsx."""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools

import numpy as np
import pytest
from PySide6.QtCore import Qt

from core.compare import compare
from core.confusion import point_estimates
from core.intervals import katz_log_recall, wilson_precision
from core.prevalence import calibrated_metrics_from_round
from core.session import SessionState
from core.workbook.rounds import read_rounds
from desktop.history_tab import CALIBRATED_KEY, COMPARE_REPLICATES, HistoryTab, consecutive_pairs
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
    assert "10</b> rounds of 2 classifiers." in tab.summary_label.text()


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
    assert row.warning and row.cells[11].endswith("▲")
    # The band of the precision at the reference prevalence (2 %) is beside it: the dashed
    # line alone read as a measurement as sure as precision (audit 13).
    from core.prevalence import OperatingPoint, precision_band

    band = precision_band(OperatingPoint.from_round(tr02.matrix, tr02.k, confidence=0.95))
    lower, upper = band.bounds_at(0.02)
    assert lower < tab.figures[rounds.index(tr02)].calibrated_precision < upper
    assert row.cells[9] == f"{100 * lower:.1f}–{100 * upper:.1f} %"
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


def test_each_round_is_corrected_as_its_own_design_says(qtbot, tab, rounds):
    # One switch corrected every round with counts once a round drawn from an item list
    # was evaluated (its box ticks itself): May's interval moved (session 14). Now a round
    # drawn by the rule is corrected, the round the Evaluate tab shows as its box says,
    # and no other.
    from core.workbook.session_io import round_key

    counted = [i for i, r in enumerate(rounds) if r.population_pos and r.population_neg]
    legacy, current, drawn = counted[:3]

    def by_hand(item):
        # (N - n)/(N - 1) of each stratum, the textbook factor.
        n_pos, n_neg = item.tp + item.fp, item.fn + item.tn
        return (
            (item.population_pos - n_pos) / (item.population_pos - 1),
            (item.population_neg - n_neg) / (item.population_neg - 1),
        )

    def shown(index):
        figure = next(f for f in tab.figures if f.index == index)
        return figure.precision_interval.lower, figure.precision_interval.upper

    def wilson(index, corrected):
        item = tab._session.state.rounds[index]
        factors = by_hand(item) if corrected else (1.0, 1.0)
        interval = wilson_precision(item.matrix, 0.95, factors)
        return interval.lower, interval.upper

    session = tab._session
    noted = dataclasses.replace(
        rounds[drawn], notes="PR Planner labeling round: seed 7, items from mail.csv"
    )
    session.set_values(
        [
            ("rounds", tuple(noted if i == drawn else r for i, r in enumerate(rounds))),
            ("current_round", round_key(rounds[current])),
            ("evaluate.fpc", True),
        ]
    )
    assert shown(legacy) == pytest.approx(wilson(legacy, False), abs=1e-12)
    assert shown(current) == pytest.approx(wilson(current, True), abs=1e-12)
    assert shown(drawn) == pytest.approx(wilson(drawn, True), abs=1e-12)
    assert wilson(current, True) != pytest.approx(wilson(current, False), abs=1e-9)
    figure = next(f for f in tab.figures if f.index == current)
    item = rounds[current]
    recall = katz_log_recall(item.matrix, item.k, 0.95, by_hand(item))
    assert figure.recall_interval.lower == pytest.approx(recall.lower, abs=1e-12)
    assert "2 of them with the finite population correction" in tab.summary_label.text()
    # The box unticked: the round shown loses it, the drawn round keeps it.
    session.set_value("evaluate.fpc", False)
    assert shown(current) == pytest.approx(wilson(current, False), abs=1e-12)
    assert shown(drawn) == pytest.approx(wilson(drawn, True), abs=1e-12)


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
    # Room for them: each week's Monday named by its day (trial 18: weekly rounds had no
    # date near them); crowded, the weeks carry no text.
    # The Mondays from 12 January 2026 by the calendar, at 8.1 px a day; those within 49 px
    # (six days) of a month's label keep their tick but not their text.
    assert axis.tickStrings(minor, 1.0, 7 * 86_400.0) == [
        "12", "19", "", "", "9", "16", "", "", "9", "16", "23",
    ]  # fmt: skip
    _, (_, minor) = axis.tickValues(low, high, 250)
    assert all(text == "" for text in axis.tickStrings(minor, 1.0, 7 * 86_400.0))
    # A narrow plot names every other month.
    (_, major), _ = axis.tickValues(stamp(dt.date(2025, 1, 5)), stamp(dt.date(2026, 1, 5)), 300)
    assert len(major) <= 300 // axis.LABEL_WIDTH + 1


def test_legend_sits_under_the_plot_not_on_the_data(tab):
    for plot in (tab.precision_plot, tab.recall_plot):
        legend = plot.legend
        assert legend.isVisible()
        assert legend.sceneBoundingRect().top() >= plot.plotItem.vb.sceneBoundingRect().bottom()


def test_summary_table_and_legends_speak_in_words(tab):
    summary = tab.summary_label.text().replace("\u00a0", " ")
    assert "Error bars: the 95 % intervals." in summary
    assert "Dashed lines: precision at the reference prevalence 2.00 %" in summary
    for name in ("Wilson", "Katz", "excludes 0"):
        assert name not in summary
        assert name in tab.summary_label.toolTip()
    headers = [
        tab.table_model.headerData(column, Qt.Orientation.Horizontal)
        for column in range(tab.table_model.columnCount())
    ]
    assert headers == [
        "Round",
        "Date",
        "Classifier",
        "Model\nversion",
        "Precision",
        "Precision\ninterval",
        "Recall",
        "Recall\ninterval",
        "Precision at\nreference",
        "Precision at\nreference, band",
        "Precision\nchange",
        "Recall\nchange",
    ]
    # One legend entry keys the dashed lines of every classifier.
    precision_legend = [label.text for _sample, label in tab.precision_plot.legend.items]
    assert precision_legend[:3] == ["finance", "travel", CALIBRATED_KEY]
    assert not any("calibrated" in text for text in precision_legend)
    recall_legend = [label.text for _sample, label in tab.recall_plot.legend.items]
    assert CALIBRATED_KEY not in recall_legend
    # The year is in the axis title: a narrow window's month labels leave it out (trial 20).
    years = sorted({item.date.year for item in tab._session.get("rounds") if item.date})
    shown = f"{years[0]}" if len(years) == 1 else f"{years[0]}–{years[-1]}"
    assert tab.precision_plot.plotItem.getAxis("bottom").labelText == f"Round date ({shown})"


def test_one_round_of_one_classifier_is_said_in_the_singular(qtbot, rounds):
    state = dataclasses.replace(SessionState(), rounds=rounds[:1])
    widget = HistoryTab(SessionModel(state))
    qtbot.addWidget(widget)
    assert "1</b> round of 1 classifier." in widget.summary_label.text()


def test_estimates_and_intervals_share_their_decimals(tab, rounds):
    """Each estimate and its interval with the same decimals, the unit once (as on the
    Evaluate tab): "86.5 %" beside "80.4–90.9 %"."""
    first = rounds[0]
    row = tab.table_model.rows()[0]
    precision = wilson_precision(first.matrix)
    assert row.cells[5] == f"{precision.lower * 100:.1f}–{precision.upper * 100:.1f} %"
    for estimate, interval in ((row.cells[4], row.cells[5]), (row.cells[6], row.cells[7])):
        decimals = len(estimate.split(" ")[0].split(".")[1])
        low, high = interval.removesuffix(" %").split("–")
        assert len(low.split(".")[1]) == len(high.split(".")[1]) == decimals


def test_rise_and_fall_markers_use_no_classifier_colour():
    from desktop.history_tab import DECLINED_COLOR, IMPROVED_COLOR
    from desktop.plotting import PALETTE

    palette = {colour.casefold() for colour in PALETTE}
    assert IMPROVED_COLOR.casefold() not in palette
    assert DECLINED_COLOR.casefold() not in palette


def test_one_dated_round_keeps_narrow_caps(qtbot, rounds):
    one = [next(item for item in rounds if item.date is not None)]
    state = dataclasses.replace(SessionState(), rounds=one)
    widget = HistoryTab(SessionModel(state))
    qtbot.addWidget(widget)
    widget.resize(1200, 800)
    widget.show()
    (low, high), _ = widget.precision_plot.plotItem.vb.viewRange()
    assert high - low >= 28 * 86_400  # a month around the date, not a day
    widget.shutdown()


def test_rounds_that_arrive_while_the_tab_is_hidden_are_centred_when_it_is_shown(qtbot, rounds):
    # The lead's first round, three classifiers read from one labeling workbook on the
    # day, arrived while the History tab was hidden and squeezed: the range came up ending
    # the day before, the points off the chart, only their caps at the edge (trial 13).
    day = dt.date(2026, 11, 26)
    drawn = tuple(
        dataclasses.replace(item, date=day, classifier=name, round="travel-01")
        for item, name in zip(rounds[:3], ("travel", "model_v2", "rules"), strict=True)
    )
    session = SessionModel(SessionState())
    widget = HistoryTab(session)
    qtbot.addWidget(widget)
    session.set_values([("rounds", drawn)])
    # Hidden, the tab puts the work off (10,000 rounds held the window 3 s a change)...
    assert widget.figures == []
    widget.refresh_if_deferred()  # ...until shown, or asked, as before a plot snapshot
    assert len(widget.figures) == 3
    # What pyqtgraph made of the range in a squeezed, hidden plot (the trial's: a month
    # ending the day before the rounds), set here directly.
    for plot in (widget.precision_plot, widget.recall_plot):
        plot.setXRange(stamp(day) - 31 * 86_400, stamp(day) - 86_400, padding=0)
    widget.resize(1400, 900)
    widget.show()
    qtbot.waitExposed(widget)
    for plot in (widget.precision_plot, widget.recall_plot):
        (low, high), _ = plot.plotItem.vb.viewRange()
        assert abs((low + high) / 2 - stamp(day)) < 0.1 * 86_400, (low, high)
    # The lead's own zoom survives leaving the tab and coming back.
    zoom = (stamp(day) - 3 * 86_400, stamp(day) + 3 * 86_400)
    widget.precision_plot.setXRange(*zoom, padding=0)
    widget.hide()
    widget.show()
    qtbot.waitExposed(widget)
    (low, high), _ = widget.precision_plot.plotItem.vb.viewRange()
    assert (low, high) == pytest.approx(zoom)
    widget.shutdown()


def test_a_classifier_that_appears_later_takes_a_colour_of_its_own(qtbot, tab, rounds):
    """A round without a classifier (sorted first) joins after travel and finance are
    drawn: it must not take the colour of one of them, and theirs stay as they were."""

    def colours():
        return {
            name: items["precision_line"].opts["pen"].color().name()
            for name, items in tab._series.items()
        }

    before = colours()
    extra = dataclasses.replace(rounds[-1], row=99, round="mine", classifier=None)
    tab._session.set_values([("rounds", (*rounds, extra))])
    qtbot.waitUntil(lambda: len(tab._series) == len(before) + 1, timeout=10_000)
    after = colours()
    assert {name: after[name] for name in before} == before
    assert len(set(after.values())) == len(after)


def test_one_classifier_spelled_two_ways_is_one_line(qtbot, rounds):
    # The lead typed "Travel" in one row: still the travel classifier's line, named as its
    # most recent round spells it, and its rounds compared with each other.
    travel = sorted((r for r in rounds if r.classifier == "travel"), key=lambda r: r.date)
    spelled = [dataclasses.replace(r, classifier="Travel") if r is travel[1] else r for r in rounds]
    latest = "Travel" if travel[1] is travel[-1] else "travel"
    state = dataclasses.replace(SessionState(), rounds=tuple(spelled))
    widget = HistoryTab(SessionModel(state))
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitUntil(lambda: bool(widget.comparisons), timeout=20_000)
    try:
        assert set(widget._series) == {latest, "finance"}
        x, _ = widget._series[latest]["precision_line"].getData()
        assert len(x) == len(travel)
        assert "rounds of 2 classifiers." in widget.summary_label.text()
    finally:
        widget.shutdown()


def test_the_first_months_name_fits_under_the_axis(qtbot, tab, rounds):
    # Months of rounds on their first days: the first point sat on the plot's edge and
    # its month had no name under it (trial 15). Half a month of room on each side.
    first = min(stamp(r.date) for r in rounds if r.date)
    last = max(stamp(r.date) for r in rounds if r.date)
    for plot in (tab.precision_plot, tab.recall_plot):
        low, high = plot.viewRange()[0]
        assert low <= first - 15 * 86_400 + 1 and high >= last + 15 * 86_400 - 1


def test_evaluating_another_round_redraws_only_when_corrections_change(
    qtbot, tab, rounds, monkeypatch
):
    # Every round the lead evaluated redrew History and ran its comparisons again, though
    # no round's correction had changed.
    from core.workbook.session_io import round_key

    calls = []
    real = tab.refresh
    monkeypatch.setattr(tab, "refresh", lambda: (calls.append(1), real()))
    counted = [r for r in rounds if r.population_pos and r.population_neg]
    session = tab._session
    for item in counted[:3]:
        session.set_value("current_round", round_key(item))
    assert calls == []  # the box is off: no round's correction changed
    session.set_value("evaluate.fpc", True)  # the round shown is corrected now
    assert calls == [1]
    session.set_value("confidence", 0.9)
    assert calls == [1, 1]


def test_a_round_without_a_date_says_where_it_is_placed(qtbot, rounds):
    """The undated round is paired after the round above it, and the tab says so (fuzz 17:
    it was paired after every dated round, without a word)."""
    same = [item for item in rounds if item.classifier == rounds[0].classifier][:3]
    undated = dataclasses.replace(same[1], date=None)
    state = dataclasses.replace(SessionState(), rounds=(same[0], undated, same[2]))
    widget = HistoryTab(SessionModel(state))
    qtbot.addWidget(widget)
    text = widget.summary_label.text()
    assert f"Not drawn (no date): {undated.name}." in text
    assert f"{undated.name} ({undated.classifier}; sheet " in text
    assert f"so it is placed after {same[0].name} ({same[0].classifier})" in text
    assert sorted(consecutive_pairs(widget.figures)) == [(0, 1), (1, 2)]
    widget.shutdown()


def test_the_table_lists_each_classifiers_rounds_by_date(qtbot, rounds):
    """A round added out of date order sits where its change is worked out (trial 18)."""
    same = [item for item in rounds if item.classifier == rounds[0].classifier][:3]
    shuffled = (same[0], same[2], same[1])  # the latest added before the middle one
    widget = HistoryTab(SessionModel(dataclasses.replace(SessionState(), rounds=shuffled)))
    qtbot.addWidget(widget)
    qtbot.waitUntil(lambda: bool(widget.comparisons), timeout=20_000)
    listed = [row.cells[0] for row in widget.table_model.rows()]
    assert listed == [item.round for item in same]
    # Each change is the one since the row above: the middle round's against the first.
    middle = widget.table_model.rows()[1].values
    assert middle[0].name == same[1].round
    assert widget.comparisons[(0, 2)] is middle[1]
    widget.shutdown()


def test_many_rounds_get_one_pixel_error_bars(qtbot, rounds):
    """Fuzz 17: with a thousand rounds each paint of the 1.5 px bars took 0.4 s (Qt strokes
    a wider pen as shapes), and the tab, Save and Export froze for seconds."""
    from desktop.history_tab import THIN_BARS_FROM

    few = HistoryTab(SessionModel(dataclasses.replace(SessionState(), rounds=rounds)))
    qtbot.addWidget(few)
    bars = next(iter(few._series.values()))["precision_bars"]
    assert bars.opts["pen"].widthF() == 1.5
    start = min(item.date for item in rounds if item.date is not None)
    many = tuple(
        dataclasses.replace(rounds[0], row=n, round=f"R{n}", date=start + dt.timedelta(days=n))
        for n in range(THIN_BARS_FROM)
    )
    widget = HistoryTab(SessionModel(dataclasses.replace(SessionState(), rounds=many)))
    qtbot.addWidget(widget)
    bars = next(iter(widget._series.values()))["precision_bars"]
    assert bars.opts["pen"].widthF() == 1.0
    assert len(bars.opts["x"]) == THIN_BARS_FROM  # every round still drawn
    # The lines too: with 10,000 rounds a paint of the 2 px lines took 5 s a plot.
    for key in ("precision_line", "recall_line", "calibrated_line"):
        assert next(iter(few._series.values()))[key].opts["pen"].widthF() == 2.0
        line = next(iter(widget._series.values()))[key]
        assert line.opts["pen"].widthF() == 1.0
        assert (
            line.opts["pen"].style()
            == few._series[next(iter(few._series))][key].opts["pen"].style()
        )  # the calibrated line stays dashed
    few.shutdown()
    widget.shutdown()


def test_an_undated_round_is_placed_among_all_rounds_as_everywhere_else(qtbot, rounds):
    # Review 18: History placed an undated round among the usable rounds only; with an
    # unusable dated round above it, its pairs disagreed with "the round before".
    from core.workbook.session_io import round_before

    base = rounds[0]
    r1 = dataclasses.replace(base, row=2, round="R1", date=dt.date(2025, 1, 1))
    r2 = dataclasses.replace(base, row=3, round="R2", date=dt.date(2025, 3, 1), tp=0, fp=0)
    r3 = dataclasses.replace(base, row=4, round="R3", date=None)
    r4 = dataclasses.replace(base, row=5, round="R4", date=dt.date(2025, 2, 1))
    state = dataclasses.replace(SessionState(), rounds=(r1, r2, r3, r4))
    widget = HistoryTab(SessionModel(state))
    qtbot.addWidget(widget)
    # By hand: R3 stands after R2 (March), so R1 (Jan), R4 (Feb), then R3; R2 is unusable.
    assert sorted(consecutive_pairs(widget.figures)) == [(0, 3), (3, 2)]
    assert round_before(state.rounds, r4) is r1
    assert [row.cells[0] for row in widget.table_model.rows()] == ["R1", "R4", "R3"]
    widget.shutdown()


def test_many_rounds_are_worked_out_in_the_background(qtbot, rounds, monkeypatch):
    """Fuzz 19: 10,000 rounds held the window 3-8 s whenever History was redrawn. From
    FIGURES_IN_BACKGROUND_FROM rounds the figures come from a worker, the tab says so
    meanwhile, and they are the ones worked out on the spot."""
    import desktop.history_tab as history

    expected, _ = history.round_figures(
        rounds, 0.95, SessionState().prevalence.reference_prevalence
    )
    monkeypatch.setattr(history, "FIGURES_IN_BACKGROUND_FROM", 2)
    widget = HistoryTab(SessionModel(dataclasses.replace(SessionState(), rounds=rounds)))
    qtbot.addWidget(widget)
    assert widget.summary_label.text().startswith(f"Working out the figures of {len(rounds)}")
    qtbot.waitUntil(lambda: bool(widget.figures), timeout=20_000)
    assert [(f.name, f.precision, f.recall_interval) for f in widget.figures] == [
        (f.name, f.precision, f.recall_interval) for f in expected
    ]
    assert "round" in widget.summary_label.text() and "Working" not in widget.summary_label.text()
    qtbot.waitUntil(lambda: bool(widget.comparisons), timeout=20_000)
    widget.shutdown()


def test_figures_still_being_worked_out_are_finished_for_a_snapshot(qtbot, rounds, monkeypatch):
    import desktop.history_tab as history

    monkeypatch.setattr(history, "FIGURES_IN_BACKGROUND_FROM", 2)
    widget = HistoryTab(SessionModel(dataclasses.replace(SessionState(), rounds=rounds)))
    qtbot.addWidget(widget)
    widget.refresh_if_deferred()  # what the window does before taking the plots' pictures
    assert len(widget.figures) == len(rounds)
    assert not widget.figures_runner.is_running
    widget.shutdown()


def test_figures_of_a_session_changed_meanwhile_are_dropped(qtbot, rounds, monkeypatch):
    import desktop.history_tab as history

    monkeypatch.setattr(history, "FIGURES_IN_BACKGROUND_FROM", 2)
    session = SessionModel(dataclasses.replace(SessionState(), rounds=rounds))
    widget = HistoryTab(session)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitUntil(lambda: len(widget.figures) == len(rounds), timeout=20_000)
    shown, old_state = widget.figures, session.state
    session.set_value("rounds", rounds[:2])
    widget._on_figures((old_state, [], []))  # a result of the old session arriving late
    assert widget.figures is shown
    qtbot.waitUntil(lambda: len(widget.figures) == 2, timeout=20_000)
    widget.shutdown()


def test_figures_arriving_after_an_edit_the_tab_does_not_watch_are_shown(
    qtbot, rounds, monkeypatch
):
    """Review 21: an edit of the Plan tab while the figures were worked out dropped them,
    and the tab stayed "Working out the figures…" until a setting it watches changed."""
    import desktop.history_tab as history

    monkeypatch.setattr(history, "FIGURES_IN_BACKGROUND_FROM", 2)
    session = SessionModel(dataclasses.replace(SessionState(), rounds=rounds))
    widget = HistoryTab(session)
    qtbot.addWidget(widget)
    widget.show()
    session.set_value("plan.margin_precision", 0.04)  # not History's business
    qtbot.waitUntil(lambda: len(widget.figures) == len(rounds), timeout=20_000)
    assert "Working out" not in widget.summary_label.text()
    widget.shutdown()
