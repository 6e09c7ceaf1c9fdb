"""History tab: precision and recall of past rounds over time (workflow 5).

The rounds loaded in the Rounds panel (``session.rounds``) are drawn against their date
(a ``pg.DateAxisItem``), one line per classifier, each round with its interval as an
error bar: Wilson for precision, Katz log-ratio for recall (methods §3-4,
:mod:`core.intervals`). Calibrated precision at the reference prevalence of the
Prevalence tab runs alongside (:func:`core.prevalence.calibrated_metrics_from_round`).
Consecutive rounds of one classifier are compared with :func:`core.compare.compare` in the
background; where the interval of a change excludes 0, the later round gets a marker
("more than noise"). A classifier is one line whatever its model versions: where the
version changes, the round is labelled with the new version (``v2.2``) on both plots.
"""

from __future__ import annotations

import datetime as dt
import functools
import html
import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core import batch_intervals, progress, validation
from core.compare import DEFAULT_REPLICATES, Comparison, compare, history_order, placed_dates
from core.compare import consecutive_pairs as pairs_of_rounds
from core.confusion import ConfusionMatrix, PointEstimates, point_estimates
from core.errors import InputError
from core.intervals import NO_FPC, Interval
from core.prevalence import OperatingPoint, calibrated_metrics, precision_band
from core.progress import TaskControl
from core.workbook.layout import round_order_notes
from core.workbook.rounds import classifier_key
from core.workbook.session_io import FpcRule, corrected_by, fpc_of_round
from desktop import formatting
from desktop.plotting import LINE_WIDTH, PALETTE, PlotPanel
from desktop.session_model import SessionModel
from desktop.tab_support import RowsTableModel, SessionTab, TableRow, use_percent_axes
from desktop.widgets import ConfidenceBox, PercentSpin, affects

DAY = 86_400.0
#: From how many rounds the error bars and lines are drawn 1 px wide
#: (:meth:`HistoryTab._thin_lines`).
THIN_BARS_FROM = 150
UNNAMED = "(no classifier)"
#: Posterior draws per round for the change of recall: as many as the Evaluate tab and the
#: report draw, so the three say the same.
COMPARE_REPLICATES = DEFAULT_REPLICATES
#: Rise and fall markers: a green and a crimson that no classifier's line uses
#: (desktop.plotting.PALETTE), so a fall is not lost on the second classifier's orange.
IMPROVED_COLOR = "#1A9850"
DECLINED_COLOR = "#B2182B"
#: The legend entry of the dashed lines (calibrated precision of every classifier).
CALIBRATED_KEY = "Dashed: at reference prevalence"
#: The diamonds of precision at the reference prevalence: large enough to read as a mark
#: of their own when a classifier has one round (no dashed line joins them then).
CALIBRATED_SYMBOL_SIZE = 10


def timestamp(day: dt.date) -> float:
    """Seconds since the epoch at midnight UTC (the date axis is set to UTC too)."""
    return dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC).timestamp()


def date_text(x: float) -> str:
    return dt.datetime.fromtimestamp(x, tz=dt.UTC).date().isoformat()


class MonthAxis(pg.DateAxisItem):
    """A date axis labelled by month (``Jan 2026``, ``Feb``) with unlabelled weekly ticks.

    pyqtgraph's own date axis picks day ticks for a few months of rounds and crowds them
    (``26 Mar03``); rounds are planned by the month, so months are what the axis names.
    Spans shorter than two month starts or longer than a few years keep pyqtgraph's ticks.
    """

    #: Pixels a month label needs.
    LABEL_WIDTH = 70

    def _months(self, low: float, high: float) -> list[float]:
        start = dt.datetime.fromtimestamp(low, tz=dt.UTC)
        year, month = start.year, start.month
        months: list[float] = []
        while True:
            month += 1
            if month > 12:
                year, month = year + 1, 1
            value = dt.datetime(year, month, 1, tzinfo=dt.UTC).timestamp()
            if value > high:
                return months
            months.append(value)

    def tickValues(self, minVal, maxVal, size):
        if not (np.isfinite(minVal) and np.isfinite(maxVal)) or maxVal - minVal > 1200 * DAY:
            return super().tickValues(minVal, maxVal, size)
        months = self._months(minVal, maxVal)
        if len(months) < 2:
            return super().tickValues(minVal, maxVal, size)
        step = max(1, math.ceil(len(months) * self.LABEL_WIDTH / max(size, 1)))
        major = months[::step]
        first_monday = (
            minVal + ((7 - dt.datetime.fromtimestamp(minVal, tz=dt.UTC).weekday()) % 7) * DAY
        )
        first_monday -= first_monday % DAY
        weeks = [w for w in np.arange(first_monday, maxVal, 7 * DAY) if w not in major]
        # Weekly rounds over a month or two: each Monday's day of the month, room allowing
        # (the weeks' points had no date near them; trial 18).
        pixels = max(size, 1) / max(maxVal - minVal, DAY)  # per second
        self._label_weeks = 7 * DAY * pixels >= self.WEEK_LABEL_WIDTH
        # A week beside a month's label keeps its tick but not its text ("Mar 2025" and
        # "3" overlapped).
        room = (self.LABEL_WIDTH + self.WEEK_LABEL_WIDTH) / 2
        self._quiet_weeks = {
            week for week in weeks if any(abs(week - month) * pixels < room for month in major)
        }
        return [(step * 30 * DAY, major), (7 * DAY, weeks)]

    #: Pixels a week's label (its Monday's day, "17") needs.
    WEEK_LABEL_WIDTH = 28
    _label_weeks = False
    _quiet_weeks: set[float] = set()  # noqa: RUF012 (replaced, never changed in place)

    def tickStrings(self, values, scale, spacing):
        if spacing <= 7 * DAY:
            if self._label_weeks:
                return [
                    ""
                    if value in self._quiet_weeks
                    else str(dt.datetime.fromtimestamp(value, tz=dt.UTC).day)
                    for value in values
                ]
            return ["" for _ in values]  # weekly ticks carry no text when crowded
        if spacing < 28 * DAY:
            return super().tickStrings(values, scale, spacing)
        strings = []
        for value in values:
            when = dt.datetime.fromtimestamp(value, tz=dt.UTC)
            first = value == values[0] or when.month == 1
            strings.append(when.strftime("%b %Y" if first else "%b"))
        return strings


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundFigures:
    """What the tab shows for one past round (every number from core).

    Attributes
    ----------
    index : int
        Position in ``session.rounds``.
    name, classifier : str
    date : datetime.date or None
    model_version : str or None
        The classifier's model version in that round (a label on its line, never a line
        of its own).
    precision, recall : float
        Point estimates (methods §2).
    precision_interval : Interval
        Wilson interval.
    recall_interval : Interval
        Katz log-ratio interval (Eq 4).
    calibrated_precision : float
        Precision at the reference prevalence.
    calibrated_band : Interval or None
        The P3 band at the reference prevalence (methods §11), ``None`` where it is
        undefined: how far the calibrated precision can be trusted. Round to round it
        varies several times as much as precision (audit 13).
    placed : datetime.date
        Where the round stands in time among all the session's rounds
        (:func:`core.compare.placed_dates`): the order of the table and of the pairs, as
        of "the round before" everywhere else (review 18: placed among the usable rounds
        only, an undated round was paired otherwise).
    """

    index: int
    name: str
    classifier: str
    date: dt.date | None
    model_version: str | None
    precision: float
    recall: float
    precision_interval: Interval
    recall_interval: Interval
    calibrated_precision: float
    calibrated_band: Interval | None = None
    placed: dt.date = dt.date.min


#: From this many rounds the tab works out their figures in the background (10,000 rounds
#: took 3.5 s; 300 take about 0.1 s, which the lead does not notice).
FIGURES_IN_BACKGROUND_FROM = 300

#: Heights the plots and the table of rounds start with (the splitter keeps the ratio).
PLOTS_AND_TABLE = (560, 300)


def _band_at(matrix, k: float, confidence: float, reference: float) -> Interval | None:
    """The round's P3 band at the ``reference`` prevalence (``None`` when undefined)."""
    try:
        band = precision_band(OperatingPoint.from_round(matrix, k, confidence=confidence))
        lower, upper = band.bounds_at(reference)
    except InputError:
        return None
    return Interval(lower=float(lower), upper=float(upper), method="p3_band")


class _Usable(NamedTuple):
    """A round :func:`round_figures` can show, with what it worked out on the way."""

    at: int  # its place in the rounds given
    name: str
    past: Any
    estimates: PointEstimates
    calibrated_precision: float
    matrix: ConfusionMatrix


def round_figures(
    rounds,
    confidence: float,
    reference: float,
    fpc: FpcRule = False,
    control: TaskControl | None = None,
) -> tuple[list, list[str]]:
    """Estimates and intervals of every usable round, and why any other was left out.

    The intervals of all usable rounds come from one call of :mod:`core.batch_intervals`;
    each round ``fpc`` names (a rule, :func:`core.workbook.session_io.fpc_of_round`, or
    ``True`` for all) whose two population counts are known gets its own finite
    population correction. ``control`` (work in the background) hears the progress and
    can cancel.
    """
    usable: list[_Usable] = []
    problems: list[str] = []
    for index, past in enumerate(rounds):
        if index % 500 == 0:
            progress.step(control, index, 2 * len(rounds))
        name = past.round or f"{past.sheet} row {past.row}"
        try:
            matrix = past.matrix
            estimates = point_estimates(matrix, past.k)  # checks both strata
            validation.positive("k", past.k)  # the Katz interval needs the known k
            at_reference = calibrated_metrics(estimates.recall, estimates.fpr, reference)
        except InputError as exc:
            problems.append(f"{name}: {exc}")
            continue
        usable.append(_Usable(index, name, past, estimates, at_reference.precision, matrix))
    if not usable:
        return [], problems
    tp, fp, fn, tn = np.array([entry.matrix.as_tuple() for entry in usable]).T
    k = np.array([entry.past.k for entry in usable], dtype=float)
    factors = tuple(
        np.array(
            [entry.past.variance_factors(corrected_by(fpc, entry.past)) for entry in usable],
            dtype=float,
        ).T
    )
    precision_intervals = batch_intervals.wilson_precision(tp, fp, confidence, factors)
    recall_intervals = batch_intervals.katz_log_recall(tp, fp, fn, tn, k, confidence, factors)
    # "Finance" and "finance" are one classifier (one line), named as its most recent
    # round spells it.
    spelling: dict[str, str] = {}
    placed = placed_dates((classifier_key(past.classifier), past.date) for past in rounds)
    by_date = sorted(usable, key=lambda entry: (placed[entry.at], entry.at))
    for entry in by_date:
        if entry.past.classifier:
            spelling[classifier_key(entry.past.classifier)] = entry.past.classifier
    figures = []
    for row, (index, name, past, estimates, calibrated, matrix) in enumerate(usable):
        if row % 500 == 0:
            progress.step(control, len(rounds) + row, len(rounds) + len(usable))
        figures.append(
            RoundFigures(
                index=index,
                name=name,
                classifier=spelling.get(classifier_key(past.classifier), "") or UNNAMED,
                date=past.date,
                model_version=getattr(past, "model_version", None),
                precision=estimates.precision,
                recall=estimates.recall,
                precision_interval=precision_intervals.interval(row),
                recall_interval=recall_intervals.interval(row),
                calibrated_precision=calibrated,
                calibrated_band=_band_at(matrix, past.k, confidence, reference),
                placed=placed[index],
            )
        )
    return figures, problems


def _corrected_flags(state) -> tuple[bool, ...]:
    """Which of the session's rounds take the finite population correction."""
    return tuple(fpc_of_round(state, item) for item in state.rounds)


def _figure_inputs(state) -> tuple:
    """What :func:`round_figures` of a session depends on (and nothing else)."""
    return (
        state.rounds,
        state.confidence,
        state.prevalence.reference_prevalence,
        _corrected_flags(state),
    )


def _dated(figures: list[RoundFigures], classifier: str) -> list[tuple[dt.date, RoundFigures]]:
    """The classifier's rounds that have a date, each with its date (the plots' x)."""
    return [(f.date, f) for f in figures if f.classifier == classifier and f.date is not None]


def in_table_order(figures: list[RoundFigures]) -> list[RoundFigures]:
    """Each classifier's rounds together, each by date as they are paired
    (:func:`core.compare.history_order`): a change then sits under the round it is the
    change since (trial 18: a month's round added after a week that ended before it
    showed its change against the week below it)."""
    order = history_order([(classifier_key(f.classifier), f.placed) for f in figures])
    return [figures[at] for at in order]


def consecutive_pairs(figures: list[RoundFigures]) -> list[tuple[int, int]]:
    """``(previous, current)`` indices into ``session.rounds``: same classifier, by date
    (:func:`core.compare.consecutive_pairs`)."""
    return pairs_of_rounds((f.index, f.classifier, f.placed) for f in figures)


def compare_consecutive(
    rounds,
    pairs,
    confidence: float,
    seed: int,
    control=None,
    fpc: FpcRule = False,
) -> dict:
    """``{(previous, current): Comparison}`` for every pair (background work); each round
    ``fpc`` names (as for :func:`round_figures`) carries its finite population correction
    into the change, as the intervals drawn do."""
    results = {}
    for done, (before, after) in enumerate(pairs):
        if control is not None:
            control.step(done, len(pairs))
        previous, current = rounds[before], rounds[after]
        results[(before, after)] = compare(
            previous.matrix,
            current.matrix,
            k_previous=previous.k,
            k_current=current.k,
            confidence=confidence,
            replicates=COMPARE_REPLICATES,
            seed=seed,
            corrected=(
                previous.corrected_population(corrected_by(fpc, previous)),
                current.corrected_population(corrected_by(fpc, current)),
            ),
        )
    if control is not None:
        control.step(len(pairs), len(pairs))
    return results


def beyond_noise(interval: Interval) -> int:
    """+1 when the change's interval lies above 0, -1 below, 0 when it contains 0."""
    if interval.lower > 0:
        return 1
    if interval.upper < 0:
        return -1
    return 0


TABLE_HEADERS = (
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
)
TABLE_TIPS = (
    "Round name from the workbook",
    "When the round was labeled",
    "The classifier the round evaluated",
    "The classifier's model version in that round",
    "Precision estimate TP/(TP+FP)",
    "Range the true precision probably lies in, at the chosen confidence (Wilson interval)",
    "Recall estimate with the round's k (Eq 2)",
    "Range the true recall probably lies in, at the chosen confidence (Katz log-ratio "
    "interval, Eq 4)",
    "Calibrated precision: the precision at the reference prevalence (the same value as on "
    "the Prevalence tab), so rounds with different shares of positives compare fairly",
    "How far the precision at the reference prevalence can be trusted: the uncertainty "
    "band at that prevalence (Prevalence tab). It is much wider than precision's interval "
    "when the reference is well below the round's own share of positives: a move of the "
    "dashed line inside it can be noise",
    "Change since the classifier's previous round (Newcombe interval); ▲/▼ when the "
    "interval excludes 0",
    "Change since the classifier's previous round (posterior interval); ▲/▼ when the "
    "interval excludes 0",
)


def band_text(band: Interval | None) -> str:
    """``"52.1–77.4 %"``, or ``"–"`` where the band is undefined."""
    if band is None:
        return "–"
    return formatting.percent_range(band.lower, band.upper, formatting.percent_digits(band.lower))


def estimate_cells(estimate: float, interval: Interval) -> tuple[str, str]:
    """An estimate and its interval with the same decimals, as on the Evaluate tab:
    ``("87.9 %", "83.3–91.3 %")``."""
    digits = formatting.percent_digits(estimate)
    return (
        formatting.percent(estimate, digits),
        formatting.percent_range(interval.lower, interval.upper, digits),
    )


def plural(count: int, word: str) -> str:
    """``"1 round"``, ``"2 rounds"``: the word only (the caller places the count)."""
    return word if count == 1 else f"{word}s"


def change_text(change) -> str:
    if change is None:
        return "…"
    sign = beyond_noise(change.interval)
    mark = {1: " ▲", -1: " ▼", 0: ""}[sign]
    return formatting.points(change.estimate) + mark


class HistoryTab(SessionTab):
    """Trend of precision and recall over the loaded rounds, change markers included.

    Signals
    -------
    status_message(str)
        A one-line message for the window's status bar (``""`` clears it).
    """

    def __init__(self, session: SessionModel, parent=None):
        super().__init__(session, parent)
        self.figures: list[RoundFigures] = []
        #: Per plot (x range or None for automatic, y range or None), set by _show_series.
        self._ranges: dict[str, tuple[tuple[float, float] | None, tuple[float, float] | None]] = {}
        #: The ranges were set while the tab was hidden: applied again when it is shown.
        self._ranges_pending = False
        self.comparisons: dict[tuple[int, int], Comparison] = {}
        self.runner = self.new_runner()  # the comparisons of consecutive rounds
        self.runner.finished.connect(self._on_compared)
        self.figures_runner = self.new_runner()  # many rounds' figures
        self.figures_runner.finished.connect(self._on_figures)
        for runner in (self.runner, self.figures_runner):
            runner.progress.connect(lambda f: self.progress.setValue(round(f * 100)))
            runner.failed.connect(self._on_compare_failed)
            runner.busy.connect(lambda busy: self.progress.setVisible(busy))
        self._build()
        session.changed.connect(self._on_session_changed)
        self._refresh_now()

    # --- layout --------------------------------------------------------------------------

    def _build(self) -> None:
        session = self._session
        self.confidence_box = ConfidenceBox(session)
        self.reference_spin = PercentSpin(
            session,
            "prevalence.reference_prevalence",
            minimum=0.001,
            maximum=99.0,
            decimals=3,
            tooltip="Reference prevalence of the calibrated precision (the same value as on "
            "the Prevalence tab)",
        )
        controls = QWidget()
        form = QFormLayout(controls)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Confidence", self.confidence_box)
        form.addRow("Reference prevalence", self.reference_spin)
        self.summary_label = QLabel()
        self.summary_label.setWordWrap(True)
        self.summary_label.setTextFormat(Qt.TextFormat.RichText)
        self.summary_label.setToolTip(
            "Error bars: Wilson intervals for precision, Katz log-ratio intervals for recall "
            "(methods §3-4). ▲/▼: the interval of the change from the classifier's previous "
            "round excludes 0 (Newcombe for precision, posterior for recall)."
        )
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setMaximumWidth(200)
        self.progress.setToolTip("Comparing consecutive rounds in the background")
        self.progress.hide()
        top = QHBoxLayout()
        top.addWidget(controls)
        top.addWidget(self.summary_label, 1)
        top.addWidget(self.progress)

        self.precision_plot = self._trend_plot("Precision over time", "Precision")
        self.recall_plot = self._trend_plot("Recall over time", "Recall")
        self.recall_plot.setXLink(self.precision_plot)
        self._series: dict[str, dict[str, pg.GraphicsObject]] = {}
        #: Each classifier's colour (a PALETTE index), fixed when it first appears: a
        #: classifier added later never takes the colour of one already drawn.
        self._colour_numbers: dict[str, int] = {}
        # A legend sample only (never added to the plot): a grey dashed line.
        self.calibrated_key = pg.PlotDataItem(
            pen=pg.mkPen("#555", width=2, style=Qt.PenStyle.DashLine),
            symbol="d",
            symbolSize=CALIBRATED_SYMBOL_SIZE,
            symbolBrush=pg.mkBrush("#555"),
        )
        #: Text labels where a classifier's model version changes (rebuilt on refresh).
        self.version_labels: list[tuple[PlotPanel, pg.TextItem]] = []
        self._markers = {}
        for plot, metric in ((self.precision_plot, "precision"), (self.recall_plot, "recall")):
            improved = pg.PlotDataItem(
                [],
                [],
                pen=None,
                symbol="t1",
                symbolSize=15,
                symbolBrush=pg.mkBrush(IMPROVED_COLOR),
                symbolPen=pg.mkPen("#222"),
                name="Rise beyond noise",
            )
            declined = pg.PlotDataItem(
                [],
                [],
                pen=None,
                symbol="t",
                symbolSize=15,
                symbolBrush=pg.mkBrush(DECLINED_COLOR),
                symbolPen=pg.mkPen("#222"),
                name="Fall beyond noise",
            )
            for item in (improved, declined):
                item.setZValue(20)
                plot.addItem(item)
            self._markers[metric] = (improved, declined)

        self.table_model = RowsTableModel(TABLE_HEADERS, TABLE_TIPS, self)
        self.table_view = QTableView()
        self.table_view.setModel(self.table_model)
        self.table_view.verticalHeader().hide()
        self.table_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.table_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table_view.verticalHeader().setDefaultSectionSize(22)
        self.table_view.setToolTip("Every loaded round with its estimates and intervals")
        table_box = QGroupBox("Estimates per round")
        table_layout = QVBoxLayout(table_box)
        table_layout.addWidget(self.table_view)

        plots = QSplitter(Qt.Orientation.Horizontal)
        plots.addWidget(self.precision_plot)
        plots.addWidget(self.recall_plot)
        vertical = QSplitter(Qt.Orientation.Vertical)
        vertical.addWidget(plots)
        vertical.addWidget(table_box)
        vertical.setSizes(list(PLOTS_AND_TABLE))
        self.vertical_splitter = vertical
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(vertical, 1)

    def _trend_plot(self, title: str, metric_label: str) -> PlotPanel:
        """A trend chart over dates, its legend under the axis."""
        plot = PlotPanel(title, "Date", metric_label, x_format=date_text)
        axis = MonthAxis(orientation="bottom", utcOffset=0)
        plot.plotItem.setAxisItems({"bottom": axis})
        plot.setLabel("bottom", "Round date")
        use_percent_axes(plot, left=metric_label)
        # Rounds can be anywhere in the view: the legend goes under the axis, off the data.
        plot.legend_below(columns=3)
        plot.setMouseEnabled(x=True, y=False)
        return plot

    def _colour_number(self, classifier: str) -> int:
        if classifier not in self._colour_numbers:
            self._colour_numbers[classifier] = len(self._colour_numbers)
        return self._colour_numbers[classifier]

    def _bar_pen(self, classifier: str, rounds: int) -> QPen:
        """The error bars' pen: 1.5 px, or 1 px (Qt's fast path) above
        :data:`THIN_BARS_FROM` rounds. A wider pen strokes every bar as a shape: a thousand
        rounds took 0.4 s a paint, and the tab, Save and Export froze (fuzz 17)."""
        color = PALETTE[self._colour_number(classifier) % len(PALETTE)]
        return pg.mkPen(color, width=1.5 if rounds < THIN_BARS_FROM else 1)

    @staticmethod
    def _thin_lines(items: dict[str, pg.GraphicsObject], thin: bool) -> None:
        """Lines 1 px wide (Qt's fast path) with many rounds, else as created (2 px): with
        10,000 rounds a paint of the wider lines took 5 s a plot, 0.12 s at 1 px."""
        for key in ("precision_line", "recall_line", "calibrated_line"):
            item = items[key]
            pen = QPen(item.opts["pen"])
            width = 1.0 if thin else LINE_WIDTH
            if pen.widthF() != width:
                pen.setWidthF(width)
                item.setPen(pen)

    def _series_for(self, classifier: str) -> dict[str, pg.GraphicsObject]:
        """Plot items of one classifier, created the first time it appears, then reused."""
        if classifier in self._series:
            return self._series[classifier]
        number = self._colour_number(classifier)
        color = PALETTE[number % len(PALETTE)]
        items = {}
        for metric, plot in (("precision", self.precision_plot), ("recall", self.recall_plot)):
            bars = pg.ErrorBarItem(
                x=np.array([]), y=np.array([]), pen=pg.mkPen(color, width=1.5), beam=1.2 * DAY
            )
            plot.addItem(bars)
            line = plot.line(classifier, number, symbol="o", color=color)
            items[f"{metric}_bars"] = bars
            items[f"{metric}_line"] = line
        calibrated = self.precision_plot.line(
            f"{classifier}, at reference prevalence",
            number,
            style=Qt.PenStyle.DashLine,
            color=color,
        )
        calibrated.setSymbol("d")
        calibrated.setSymbolSize(CALIBRATED_SYMBOL_SIZE)
        calibrated.setSymbolBrush(pg.mkBrush(color))
        items["calibrated_line"] = calibrated
        self._series[classifier] = items
        return items

    # --- computing -----------------------------------------------------------------------

    def _on_session_changed(self, path: str) -> None:
        if any(
            affects(path, watched)
            for watched in ("rounds", "confidence", "prevalence.reference_prevalence")
        ):
            self.refresh()
        elif affects(path, "evaluate.fpc") or affects(path, "current_round"):
            # The round the Evaluate tab shows takes its box's correction: redrawn (and its
            # comparisons run again) only when that changes which rounds are corrected,
            # not on every round the lead evaluates.
            if _corrected_flags(self._session.state) != self._shown_corrections:
                self.refresh()

    def _refresh_now(self) -> None:
        """Closed forms now; the round-over-round comparisons in the background
        (:meth:`SessionTab.refresh` puts it off while the tab is hidden)."""
        super()._refresh_now()
        state = self._session.state
        self._shown_corrections = _corrected_flags(state)
        self.runner.cancel()
        work = self._figures_work(state)
        if len(state.rounds) < FIGURES_IN_BACKGROUND_FROM:
            self.figures_runner.cancel()
            self._show_figures(state, *work())
            return
        self.summary_label.setText(
            f"Working out the figures of {formatting.thousands(len(state.rounds))} rounds…"
        )
        self.progress.setToolTip("Working out the rounds' figures in the background")
        self.figures_runner.start(lambda control: (state, *work(control=control)))

    @staticmethod
    def _figures_work(state) -> functools.partial:
        """:func:`round_figures` of the session's rounds, ready to run (``control=`` to go)."""
        return functools.partial(
            round_figures,
            state.rounds,
            state.confidence,
            state.prevalence.reference_prevalence,
            functools.partial(fpc_of_round, state),
        )

    def refresh_if_deferred(self) -> None:
        """Also finish figures being worked out in the background: plot snapshots need them."""
        super().refresh_if_deferred()
        if self.figures_runner.is_running:
            self.figures_runner.cancel()
            state = self._session.state
            self._on_figures((state, *self._figures_work(state)()))

    def _on_figures(self, result: tuple) -> None:
        state, figures, problems = result
        now = self._session.state
        if _figure_inputs(state) != _figure_inputs(now):
            return  # what the figures depend on changed meanwhile: its refresh is under way
        # Worked out for these rounds and settings; a change the tab does not watch (the
        # Plan tab's inputs) dropped them, and the tab stayed "Working out…" (review 21).
        self._show_figures(now, figures, problems)
        if self.isVisible():
            QTimer.singleShot(0, self._unsquash_plots)

    def _show_figures(self, state, figures: list[RoundFigures], problems: list[str]) -> None:
        """Show the rounds' figures and start comparing consecutive rounds."""
        rounds = state.rounds
        corrected = functools.partial(fpc_of_round, state)
        self.figures = figures
        self.progress.setToolTip("Comparing consecutive rounds in the background")
        self.comparisons = {}
        self._show_series()
        self._show_markers()
        self._show_table()
        # Without a dated round the plots would show the last session's axes: the note
        # above says what to do instead.
        drawn = any(f.date is not None for f in self.figures)
        for plot in (self.precision_plot, self.recall_plot):
            plot.setVisible(drawn)
        undated = [f.name for f in self.figures if f.date is None]
        notes = []
        if not rounds:
            notes.append(
                "No past rounds yet. Open a workbook of past rounds (File > Open…), read a "
                "labeled workbook back, or keep counts typed on the Evaluate tab as a round "
                "(Keep as a round…) to see their history."
            )
        else:
            classifiers = len({f.classifier for f in self.figures})
            level = formatting.keep_together(formatting.level(state.confidence))
            with_fpc = sum(
                1
                for figure in self.figures
                if rounds[figure.index].variance_factors(corrected(rounds[figure.index])) != NO_FPC
            )
            fpc_words = (
                f" ({with_fpc} of them with the finite population correction: drawn from an "
                "item list, or on the Evaluate tab with its box ticked)"
                if with_fpc
                else ""
            )
            reference = formatting.keep_together(
                formatting.percent(state.prevalence.reference_prevalence)
            )
            notes.append(
                f"<b>{len(self.figures)}</b> {plural(len(self.figures), 'round')} of "
                f"{classifiers} {plural(classifiers, 'classifier')}. Error bars: the "
                f"{level} intervals{fpc_words}. Dashed lines: precision at the reference "
                f"prevalence {reference}, so rounds with different shares of positives "
                "compare fairly; it is less certain than precision (its band is in the "
                "table). ▲\u00a0or\u00a0▼: a rise or fall since the classifier's "
                "previous round that is more than noise."
            )
        if undated:
            notes.append(f"Not drawn (no date): {html.escape(', '.join(undated))}.")
        # Which round counts as the one before another depends on the dates: a guessed
        # place (no date) or a date after today is said where the pairs are shown.
        notes.extend(
            html.escape(note[0].upper() + note[1:]) + "." for note in round_order_notes(rounds)
        )
        notes.extend(problems)
        self.summary_label.setText("<br>".join(notes))
        self.status_message.emit(f"History: {problems[0]}" if problems else "")
        pairs = consecutive_pairs(self.figures)
        if pairs:
            confidence, seed = state.confidence, state.evaluate.seed
            self.runner.start(
                lambda control: compare_consecutive(
                    rounds, pairs, confidence, seed, control, fpc=corrected
                )
            )
        else:
            self.runner.cancel()

    def _show_series(self) -> None:
        classifiers = sorted({f.classifier for f in self.figures})
        # New series add themselves to the legend; the legend is rebuilt below in order.
        for classifier in classifiers:
            self._series_for(classifier)
        for legend in (self.precision_plot.legend, self.recall_plot.legend):
            legend.clear()
        low: dict[str, list[float]] = {"precision": [], "recall": []}
        high: dict[str, list[float]] = {"precision": [], "recall": []}
        for classifier in classifiers:
            items = self._series[classifier]
            by_date = sorted(_dated(self.figures, classifier), key=lambda pair: pair[0])
            dated = [figure for _, figure in by_date]
            x = np.array([timestamp(day) for day, _ in by_date], dtype=float)
            for metric in ("precision", "recall"):
                y = np.array([getattr(f, metric) for f in dated], dtype=float)
                intervals = [getattr(f, f"{metric}_interval") for f in dated]
                lower = np.array([i.lower for i in intervals], dtype=float)
                upper = np.array([i.upper for i in intervals], dtype=float)
                items[f"{metric}_line"].setData(x, y)
                low[metric].extend(lower)
                high[metric].extend(upper)
                items[f"{metric}_bars"].setData(
                    x=x,
                    y=y,
                    top=np.maximum(upper - y, 0.0),
                    bottom=np.maximum(y - lower, 0.0),
                    pen=self._bar_pen(classifier, len(self.figures)),
                )
            calibrated = np.array([f.calibrated_precision for f in dated], dtype=float)
            items["calibrated_line"].setData(x, calibrated)
            self._thin_lines(items, len(self.figures) >= THIN_BARS_FROM)
            low["precision"].extend(calibrated)
            for key, item in items.items():
                item.setVisible(True)
                if key in ("precision_line", "recall_line"):
                    plot = self.recall_plot if key.startswith("recall") else self.precision_plot
                    plot.legend.addItem(item, item.name())
        if classifiers:
            # One entry keys every dashed line (their colours match the solid lines').
            self.precision_plot.legend.addItem(self.calibrated_key, CALIBRATED_KEY)
        for classifier, items in self._series.items():
            if classifier not in classifiers:
                for item in items.values():
                    item.setVisible(False)
        self._show_versions(classifiers)
        stamps = [timestamp(day) for f in self.figures if (day := f.date) is not None]
        years = sorted({day.year for f in self.figures if (day := f.date) is not None})
        # The axis names the year only where a label has room for it: at 1,280 pixels the
        # dates read "Feb 16 Mar 16 23 Apr", no year anywhere (trial 20).
        span = ""
        if years:
            span = f" ({years[0]})" if len(years) == 1 else f" ({years[0]}–{years[-1]})"
        for plot in (self.precision_plot, self.recall_plot):
            plot.setLabel("bottom", f"Round date{span}")
        self._ranges = {}
        for metric in ("precision", "recall"):
            x_range = None
            if stamps:
                # Half a month (at least) on each side: with one date the bars' caps (a day
                # wide) stay caps instead of spanning the plot, and with several the first
                # month's name fits under the axis (it was left out; trial 15).
                margin = max(15 * DAY, 0.04 * (max(stamps) - min(stamps)))
                x_range = (min(stamps) - margin, max(stamps) + margin)
            y_range = None
            if low[metric]:
                bottom, top = min(low[metric]), max(high[metric])
                # A little room around the bars (never past 100 %: a rate cannot exceed it).
                headroom = max(top + 0.08 * (top - bottom), top + 0.01)
                y_range = (bottom - 0.05 * (top - bottom), min(headroom, 1.0))
            self._ranges[metric] = (x_range, y_range)
        self._fit_ranges()
        # Set while hidden, the range may come up shifted: applied again when shown. Once
        # shown, the lead's own zoom is theirs to keep.
        self._ranges_pending = not self.isVisible()

    def _fit_ranges(self) -> None:
        """Show the ranges :meth:`_show_series` chose. Called again when the tab is shown:
        a range set while the tab was hidden (the rounds read from labels on another tab)
        could come up shifted, the lead's first round at the plot's edge (trial 13)."""
        for metric, plot in (("precision", self.precision_plot), ("recall", self.recall_plot)):
            x_range, y_range = self._ranges.get(metric, (None, None))
            if x_range is not None:
                plot.setXRange(*x_range, padding=0)
            else:
                plot.enableAutoRange(axis="x")
            if y_range is not None:
                plot.setYRange(*y_range)

    def showEvent(self, event) -> None:
        if self._refresh_when_shown:
            self._refresh_now()
            # Plots hidden while the tab was (no dated round yet) and shown with it come
            # up at no height, the table taking it all: given theirs once laid out.
            QTimer.singleShot(0, self._unsquash_plots)
        super().showEvent(event)
        if self._ranges_pending:
            self._ranges_pending = False
            self._fit_ranges()

    def _unsquash_plots(self) -> None:
        sizes = self.vertical_splitter.sizes()
        if self.precision_plot.isVisible() and sizes[0] == 0 and sum(sizes) > 0:
            total = sum(PLOTS_AND_TABLE)
            self.vertical_splitter.setSizes(
                [sum(sizes) * part // total for part in PLOTS_AND_TABLE]
            )

    def _show_versions(self, classifiers: list[str]) -> None:
        """Label each classifier's line where its model version changes (and at its first
        versioned round), in the line's colour, on both plots."""
        for plot, label in self.version_labels:
            plot.removeItem(label)
        self.version_labels = []
        for classifier in classifiers:
            color = PALETTE[self._colour_number(classifier) % len(PALETTE)]
            dated = sorted(
                _dated(self.figures, classifier), key=lambda pair: (pair[0], pair[1].index)
            )
            shown = None
            for day, figure in dated:
                if not figure.model_version or figure.model_version == shown:
                    continue
                shown = figure.model_version
                for metric, plot in (
                    ("precision", self.precision_plot),
                    ("recall", self.recall_plot),
                ):
                    label = pg.TextItem(figure.model_version, color=color, anchor=(0.5, 1.6))
                    label.setToolTip(
                        f"{classifier}: model {figure.model_version} from {figure.name}"
                    )
                    label.setPos(timestamp(day), getattr(figure, metric))
                    label.setZValue(25)
                    plot.addItem(label)
                    self.version_labels.append((plot, label))

    def version_marks(self) -> list[tuple[str, str]]:
        """``(classifier, version)`` of every version label on the precision plot."""
        return [
            (label.toolTip().split(":")[0], label.toPlainText())
            for plot, label in self.version_labels
            if plot is self.precision_plot
        ]

    def _show_markers(self) -> None:
        by_index = {f.index: f for f in self.figures}
        for metric, plot in (("precision", self.precision_plot), ("recall", self.recall_plot)):
            improved, declined = self._markers[metric]
            rises, falls = [], []
            for (_, after), comparison in self.comparisons.items():
                figure = by_index.get(after)
                if figure is None or figure.date is None:
                    continue
                change = getattr(comparison, f"{metric}_change")
                point = (timestamp(figure.date), getattr(figure, metric))
                sign = beyond_noise(change.interval)
                if sign > 0:
                    rises.append(point)
                elif sign < 0:
                    falls.append(point)
            for item, points in ((improved, rises), (declined, falls)):
                item.setData([p[0] for p in points], [p[1] for p in points])
                if points:
                    plot.legend.addItem(item, item.name())

    def _show_table(self) -> None:
        changes = {after: comparison for (_, after), comparison in self.comparisons.items()}
        pairs = {after for _, after in consecutive_pairs(self.figures)}
        rows = []
        for figure in in_table_order(self.figures):
            comparison = changes.get(figure.index)
            waiting = figure.index in pairs and comparison is None
            precision_change = comparison.precision_change if comparison else None
            recall_change = comparison.recall_change if comparison else None
            flagged = any(
                change is not None and beyond_noise(change.interval) != 0
                for change in (precision_change, recall_change)
            )
            rows.append(
                TableRow(
                    cells=(
                        figure.name,
                        figure.date.isoformat() if figure.date else "–",
                        figure.classifier,
                        figure.model_version or "–",
                        *estimate_cells(figure.precision, figure.precision_interval),
                        *estimate_cells(figure.recall, figure.recall_interval),
                        formatting.percent(figure.calibrated_precision),
                        band_text(figure.calibrated_band),
                        change_text(precision_change) if waiting or comparison else "–",
                        change_text(recall_change) if waiting or comparison else "–",
                    ),
                    warning=flagged,
                    tooltip="A change beyond noise since this classifier's previous round"
                    if flagged
                    else "",
                    values=(figure, comparison),
                )
            )
        self.table_model.set_rows(rows)

    def _on_compared(self, comparisons: dict) -> None:
        self.comparisons = comparisons
        self._show_markers()
        self._show_table()

    def _on_compare_failed(self, message: str) -> None:
        self.status_message.emit(f"History: {message}")

    # --- interface with the main window --------------------------------------------------

    def grids(self) -> list:
        """No confusion-matrix grid on this tab."""
        return []
