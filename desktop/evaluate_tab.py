"""Evaluate tab: one labeled round's precision, recall, F1 and FPR with every interval.

Inputs: the labeled counts (a spreadsheet grid on
``evaluate.matrix``), the design (population counts, ``k``, or a plain random sample),
confidence, replicates, seed and the finite population correction. Out: a table of every
interval method of docs/methods.md per metric (a thin model over
:meth:`core.evaluation.Evaluation.to_rows`) with the one to quote marked "★ quote this"
(:meth:`core.evaluation.Evaluation.recommended`, the command line's ``*``) and repeated in
the summary line, the warnings, a forest plot, and, when a
previous round is chosen in the Rounds panel, the change against it
(:func:`core.compare.compare`).

Typing stays instant: each edit first runs :func:`core.evaluation.evaluate` with the
smallest replicate count (well under a millisecond) and shows its closed-form rows; the
full evaluation, whose bootstrap and Monte-Carlo rows depend on the replicates, runs in a
:class:`~desktop.workers.TaskRunner` and fills them in. A newer edit supersedes a run that
has not finished.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QSignalBlocker,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStyle,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core import validation
from core.compare import Comparison, change_verdict, compare
from core.confusion import Population
from core.errors import InputError
from core.evaluation import Evaluation, evaluate
from core.methods import FPC_METHOD_LABELS, INTERVAL_METHODS, RECOMMENDED
from core.session import EvaluateInputs
from core.workbook.session_io import compared_round, find_round_key, fpc_of_round
from desktop import formatting
from desktop.entered_round import KeepRoundDialog, already_a_round, keep_as_round
from desktop.grid import ConfusionGrid
from desktop.plotting import PALETTE, PlotPanel
from desktop.session_model import SessionModel
from desktop.tab_support import RowsTableModel, SessionTab, TableRow, use_percent_axes
from desktop.widgets import BoundCheck, ConfidenceBox, CountSpin, PopulationInput, affects

#: The smallest replicate count core accepts: the instant evaluation's Monte-Carlo rows
#: are never shown, only its closed-form rows.
QUICK_REPLICATES = 100

METRIC_NAMES = {"precision": "Precision", "recall": "Recall", "f1": "F1", "fpr": "FPR"}
METRIC_TIPS = {
    "precision": "Of the flagged items, the share that are actually positive (π1)",
    "recall": "Of all the actual positives, the share the classifier flags (Eq 2 with the "
    "design's k)",
    "f1": "One number between precision and recall (their harmonic mean)",
    "fpr": "False positive rate: of the actual negatives, the share wrongly flagged",
}
#: Method names for the table's narrow column, and their tooltips: from the one table of
#: methods (core.methods), so the app says what the command line and the report say.
METHOD_NAMES = {
    key: method.column_label[:1].upper() + method.column_label[1:]
    for key, method in INTERVAL_METHODS.items()
}
METHOD_TIPS = {key: method.tooltip for key, method in INTERVAL_METHODS.items()}
#: How the table and the forest plot mark the interval to quote (core.methods.RECOMMENDED,
#: the command line's ``*``), and the one line under the table that says why.
QUOTE_MARK = "★"
QUOTE_SUFFIX = f" {QUOTE_MARK} quote this"
QUOTE_LEGEND = (
    f"<b>{QUOTE_MARK} quote this</b>: the interval to report; its confidence level holds "
    "best for this kind of sample."
)
QUOTE_BRUSH = QBrush(QColor(222, 240, 222))

#: Methods computed from random draws: blank until the background run delivers them.
RESAMPLED = {"bootstrap", "bayes_mc"}
#: Posterior intervals that come from draws (precision's is exact Beta quantiles).
RESAMPLED_POSTERIOR = {"recall", "f1"}

EMPHASIS_BRUSH = QBrush(QColor(255, 236, 179))
PENDING_BRUSH = QBrush(QColor(246, 246, 246))


def is_resampled(metric: str, method: str) -> bool:
    """True for the rows whose bounds depend on the random draws (replicates, seed)."""
    return method in RESAMPLED or (method == "posterior" and metric in RESAMPLED_POSTERIOR)


def method_label(metric: str, method: str, design: str, fpc: bool = False) -> str:
    if method == "wald" and metric == "recall":
        return "Wald (random sample)"
    if fpc and method in FPC_METHOD_LABELS:  # no longer binomial intervals
        return FPC_METHOD_LABELS[method]
    return METHOD_NAMES.get(method, method)


def _within_noise_tip(interval, p_worse: float | None) -> str:
    """The tooltip of a change whose interval includes 0: its verdict, said once (the
    interval's "includes 0" and the verdict's "includes no change" read as the same point
    twice; review 19)."""
    verdict = change_verdict(interval.lower, interval.upper, p_worse)
    if "includes no change" in verdict:
        return f"The change is {verdict}"
    return f"The interval includes 0: the change is {verdict}"


def quote_tip(metric: str, why: str | None = None) -> str:
    """Why the marked interval is the one to quote (core's reason, for a tooltip)."""
    why = RECOMMENDED[metric].why if why is None else why
    return f"{QUOTE_MARK} Quote this interval for {METRIC_NAMES[metric]}: {why}."


def population_of(inputs: EvaluateInputs) -> Population | None:
    """The core :class:`Population` of the tab's design (``None``: plain random sample)."""
    population = inputs.population
    if population.mode == "counts":
        return Population.from_counts(population.predicted_positive, population.predicted_negative)
    if population.mode == "k":
        return Population.from_k(population.k)
    return None


def run_evaluation(
    inputs: EvaluateInputs, confidence: float, replicates: int | None = None, control=None
) -> Evaluation:
    """:func:`core.evaluation.evaluate` on the tab's inputs."""
    return evaluate(
        inputs.matrix,
        population=population_of(inputs),
        confidence=confidence,
        replicates=inputs.replicates if replicates is None else replicates,
        seed=inputs.seed,
        fpc=inputs.fpc,
        control=control,
    )


# --- results table ---------------------------------------------------------------------


RESULT_HEADERS = ("Metric", "Method", "Estimate", "Lower", "Upper", "Width", "Note")
RESULT_TIPS = (
    "The quantity estimated",
    "How the interval is computed (hover a row for details)",
    "Estimate from the labeled counts; recall, FPR and F1 combine the two strata with the "
    "population's k (methods §2)",
    "Lower end of the interval at the chosen confidence",
    "Upper end of the interval",
    "Upper minus lower (twice the margin ±)",
    "Why an interval deserves care (a correction applied, bounds clipped)",
)


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One row of :meth:`Evaluation.to_rows` plus whether its bounds are still pending."""

    metric: str
    method: str
    estimate: float | None
    lower: float | None
    upper: float | None
    note: str
    pending: bool
    #: The interval to quote for this metric (:meth:`Evaluation.recommendations`), and why.
    quoted: bool = False
    why: str | None = None

    @property
    def digits(self) -> int:
        """Decimals of every percentage of this metric: those of its estimate, so the
        estimate, the bounds and the width read alike (87.9 %, 83.3 %, 8.0 %); an estimate
        of 0 takes its bounds' (:func:`desktop.formatting.interval_digits`)."""
        return formatting.interval_digits(self.estimate, self.lower, self.upper)


class EvaluationTableModel(QAbstractTableModel):
    """Thin read-only model over an :class:`Evaluation`'s rows (habit 4)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[ResultRow] = []
        self._design = "stratified"
        self._fpc = False

    def set_evaluation(self, evaluation: Evaluation | None, *, pending: bool = False) -> None:
        """Show ``evaluation``; with ``pending`` its resampled rows read "computing…"."""
        rows = []
        if evaluation is not None:
            self._design = evaluation.design
            self._fpc = evaluation.fpc is not None
            recommended = evaluation.recommendations()
            for metric, method, estimate, lower, upper, note in evaluation.to_rows():
                if metric == "prevalence":
                    continue
                waiting = pending and is_resampled(metric, method)
                quoted = recommended.get(metric)
                rows.append(
                    ResultRow(
                        metric,
                        method,
                        estimate,
                        None if waiting else lower,
                        None if waiting else upper,
                        "" if waiting else note,
                        waiting,
                        quoted is not None and quoted.method == method,
                        quoted.why if quoted is not None else None,
                    )
                )
        if [(r.metric, r.method) for r in rows] == [(r.metric, r.method) for r in self._rows]:
            self._rows = rows
            if rows:
                self.dataChanged.emit(self.index(0, 0), self.index(len(rows) - 1, 6))
            return
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()

    def result_rows(self) -> list[ResultRow]:
        return list(self._rows)

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(RESULT_HEADERS)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        column = index.column()
        first_of_metric = index.row() == 0 or self._rows[index.row() - 1].metric != row.metric
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return METRIC_NAMES[row.metric] if first_of_metric else ""
            if column == 1:
                label = method_label(row.metric, row.method, self._design, self._fpc)
                return label + QUOTE_SUFFIX if row.quoted else label
            if column == 2:
                return formatting.percent(row.estimate, row.digits) if first_of_metric else ""
            if row.pending:
                return "computing…" if column == 3 else ""
            if column == 3:
                return formatting.percent(row.lower, row.digits)
            if column == 4:
                return formatting.percent(row.upper, row.digits)
            if column == 5:
                if row.lower is None or row.upper is None:
                    return "–"
                return formatting.percent(row.upper - row.lower, row.digits)
            return row.note
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 0:
                return METRIC_TIPS[row.metric]
            tip = METHOD_TIPS.get(row.method, "")
            if row.quoted:
                tip = f"{quote_tip(row.metric, row.why)}\n{tip}"
            if row.pending:
                tip += "\nComputing in the background…"
            if row.note:
                tip += f"\nNote: {row.note}"
            return tip
        if role == Qt.ItemDataRole.BackgroundRole:
            if row.pending:
                return PENDING_BRUSH
            if row.note:
                return EMPHASIS_BRUSH
            return QUOTE_BRUSH if row.quoted and column > 0 else None
        if role == Qt.ItemDataRole.FontRole and (column == 0 or row.quoted):
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.TextAlignmentRole:
            left = column in (0, 1, 6)
            align = Qt.AlignmentFlag.AlignLeft if left else Qt.AlignmentFlag.AlignRight
            return int(align | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return RESULT_HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return RESULT_TIPS[section]
        return None


# --- forest plot -----------------------------------------------------------------------


#: Least width of the forest plots' row labels (pixels); wider labels widen it.
FOREST_AXIS_WIDTH = 120


class ForestPlot(PlotPanel):
    """One row per interval method, grouped per metric; estimate dot and interval bar.

    Items are created once (one error-bar item and one point series per metric) and
    updated with ``setData``.
    """

    def __init__(self, title: str, metrics: tuple[str, ...], parent=None):
        super().__init__(
            title,
            "Value",
            "",
            x_format=formatting.percent,
            y_format=self._label_at,
            parent=parent,
        )
        use_percent_axes(self, bottom="Value")
        self.setMouseEnabled(x=True, y=False)
        # The y tick labels name each row's method under a heading line per metric ("Recall:")
        # and colour groups the metrics: a legend box would cover the intervals of the top
        # rows, and the metric in every tick label would leave the intervals no room on a
        # 1280-wide window.
        self.legend.hide()
        left_axis = self.getAxis("left")
        left_axis.setWidth(FOREST_AXIS_WIDTH)
        tick_font = QFont()
        tick_font.setPointSize(8)
        left_axis.setStyle(tickFont=tick_font)
        self._tick_metrics = QFontMetrics(tick_font)
        self.metrics = metrics
        self._labels: dict[int, str] = {}
        #: The rows as the hover read-out names them, metric first ("Recall · Katz log").
        self._hover: dict[int, str] = {}
        self.points: dict[str, pg.PlotDataItem] = {}
        self.bars: dict[str, pg.ErrorBarItem] = {}
        for index, metric in enumerate(metrics):
            color = PALETTE[index]
            bars = pg.ErrorBarItem(
                x=np.array([]), y=np.array([]), pen=pg.mkPen(color, width=2), beam=0.25
            )
            self.addItem(bars)
            self.bars[metric] = bars
            points = pg.PlotDataItem(
                [],
                [],
                pen=None,
                symbol="o",
                symbolSize=8,
                symbolBrush=color,
                symbolPen=pg.mkPen("#222"),
                name=METRIC_NAMES[metric],
            )
            self.addItem(points)
            self.points[metric] = points

    def _label_at(self, y: float) -> str:
        return self._hover.get(round(y), "")

    def set_rows(self, rows: list[ResultRow], *, fpc: bool = False) -> None:
        """Place every row of ``rows`` whose metric this plot shows (top to bottom);
        ``fpc``: named as the table names them with the finite population correction."""
        rows = [row for row in rows if row.metric in self.metrics]
        ticks, self._labels, self._hover = [], {}, {}
        position, previous_metric = 0, None
        placed: dict[str, list[tuple[int, ResultRow]]] = {metric: [] for metric in self.metrics}
        for row in rows:
            if row.metric != previous_metric and len(self.metrics) > 1:
                heading = f"{METRIC_NAMES[row.metric]}:"  # a heading line per metric group
                ticks.append((position, heading))
                self._labels[position] = heading
                position -= 1
            previous_metric = row.metric
            label = method_label(row.metric, row.method, "", fpc)
            if row.quoted:
                label += f" {QUOTE_MARK}"
            ticks.append((position, label))
            self._labels[position] = label
            self._hover[position] = f"{METRIC_NAMES[row.metric]} · {label}"
            placed[row.metric].append((position, row))
            position -= 1
        for metric in self.metrics:
            shown = [
                (y, row)
                for y, row in placed[metric]
                if row.estimate is not None and row.lower is not None and row.upper is not None
            ]
            y = np.array([y for y, _ in shown], dtype=float)
            estimate = np.array([row.estimate for _, row in shown], dtype=float)
            lower = np.array([row.lower for _, row in shown], dtype=float)
            upper = np.array([row.upper for _, row in shown], dtype=float)
            # An interval need not contain the estimate (Haldane correction, predictive):
            # the bar's arms are clipped at zero length rather than drawn backwards.
            self.bars[metric].setData(
                x=estimate,
                y=y,
                left=np.maximum(estimate - lower, 0.0),
                right=np.maximum(upper - estimate, 0.0),
            )
            self.points[metric].setData(estimate, y)
        axis = self.getAxis("left")
        axis.setTicks([ticks, []])
        # pyqtgraph leaves out a tick label wider than its axis: make room for the widest
        # (method names come from one table; a longer one must not vanish from the plot).
        widest = max((self._tick_metrics.horizontalAdvance(label) for _, label in ticks), default=0)
        axis.setWidth(max(FOREST_AXIS_WIDTH, widest + 12))
        if ticks:
            self.setYRange(position + 0.5, 0.5, padding=0)

    def interval_data(self, metric: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(estimate, lower, upper)`` arrays as drawn (for tests and export)."""
        options = self.bars[metric].opts
        x = np.asarray(options["x"], dtype=float)
        return x, x - np.asarray(options["left"]), x + np.asarray(options["right"])


# --- the tab -----------------------------------------------------------------------------


COMPARE_HEADERS = (
    "Metric",
    "Previous",
    "Current",
    "Change",
    "Interval of change",
    "Chance of decline",
)
COMPARE_TIPS = (
    "Metric compared",
    "Estimate of the previous round (chosen in the Rounds panel)",
    "Estimate of this round",
    "Current minus previous: positive is an improvement",
    "Interval of the change (precision: Newcombe hybrid score; recall: posterior Monte Carlo)",
    "The chance that the true value went down since the previous round (posterior "
    "probability P(decline))",
)


class EvaluateTab(SessionTab):
    """Labeled counts in; estimates, every interval, warnings and a forest plot out.

    Signals
    -------
    status_message(str)
        The warnings in one line, for the window's status bar (``""`` when none).
    round_for_workbook(Round)
        A round kept with "Also add it to <workbook>" ticked: the window adds it to the
        lead's rounds workbook (:attr:`rounds_workbook` names it).
    """

    round_for_workbook = Signal(object)

    def __init__(self, session: SessionModel, parent=None):
        super().__init__(session, parent)
        #: The lead's rounds workbook, if any (the window tells: the Rounds panel's source).
        self.rounds_workbook: Callable[[], Path | None] = lambda: None
        self.evaluation: Evaluation | None = None
        self.quick_evaluation: Evaluation | None = None
        self.comparison: Comparison | None = None
        self.runner = self.new_runner()
        self.compare_runner = self.new_runner()
        self._build()
        self.runner.finished.connect(self._on_evaluated)
        self.runner.failed.connect(self._on_failed)
        self.compare_runner.finished.connect(self._on_compared)
        self.compare_runner.failed.connect(self._on_compare_failed)
        session.changed.connect(self._on_session_changed)
        self._update_keep_button()
        # Hidden behind another tab, the tab evaluates once it is shown, not on every edit
        # (nor at the app's start, where it would pull in scipy and busy the thread pool).
        self.refresh()

    # --- layout --------------------------------------------------------------------------

    def _build(self) -> None:
        session = self._session
        self.grid = ConfusionGrid(session, "evaluate.matrix", self._k_for_grid)
        self.grid.readout.setWordWrap(True)  # the sample-size line is longer than the column
        # Narrower than the grid's default so the window fits a laptop screen.
        self.grid.view.setMinimumWidth(230)
        self.grid.readout.setMinimumWidth(110)
        self.grid.view.setToolTip(
            "Labeled counts: type, Tab/Enter to move, paste a block from Excel; every edit "
            "can be undone"
        )
        counts_box = QGroupBox("Labeled counts")
        counts_layout = QVBoxLayout(counts_box)
        counts_layout.addWidget(self.grid)

        self.random_check = QCheckBox("Plain random sample (k from the sample)")
        self.random_check.setToolTip(
            "Tick when the items were drawn at random from the whole population instead of "
            "separately from the flagged and the unflagged items: the imbalance k is then "
            "the sample's own mix, n1/n0"
        )
        self.random_check.toggled.connect(self._on_random_toggled)
        self.population = PopulationInput(session, "evaluate.population")
        self.confidence_box = ConfidenceBox(session)
        self.replicates_spin = CountSpin(
            session,
            "evaluate.replicates",
            minimum=100,
            maximum=validation.MAX_REPLICATES,
            tooltip="Replicates Q of the bootstrap and the Monte-Carlo intervals; more is "
            "smoother but slower (computed in the background)",
        )
        self.replicates_spin.setSingleStep(1000)
        self.seed_spin = CountSpin(
            session,
            "evaluate.seed",
            tooltip="Seed of the bootstrap and Monte-Carlo draws (not the seed a sample was "
            "drawn with): the same seed gives the same intervals",
            separators=False,
        )
        self.fpc_check = BoundCheck(
            session,
            "evaluate.fpc",
            "Finite population correction",
            tooltip="The sample was drawn without replacement from lists of known size (as "
            "PR Planner draws): only the items not labeled leave uncertainty, so the closed-form "
            "intervals, the exact one and the bootstrap narrow (variance times (N − n)/(N − 1) "
            "per stratum); needs both population counts",
        )
        design_box = QGroupBox("Design")
        design_form = QFormLayout(design_box)
        design_form.addRow(self.random_check)
        design_form.addRow(self.population)
        design_form.addRow("Confidence", self.confidence_box)
        design_form.addRow("Bootstrap replicates", self.replicates_spin)
        design_form.addRow("Bootstrap seed", self.seed_spin)
        design_form.addRow(self.fpc_check)

        self.compare_label = QLabel()
        self.compare_label.setWordWrap(True)
        self.compare_model = RowsTableModel(COMPARE_HEADERS, COMPARE_TIPS, self)
        self.compare_view = QTableView()
        self.compare_view.setModel(self.compare_model)
        self.compare_view.verticalHeader().hide()
        self.compare_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        compare_header = self.compare_view.horizontalHeader()
        compare_header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        compare_header.setStretchLastSection(True)
        # Two rows never need scroll bars: the view takes the size of its contents
        # (_fit_compare_view), so no value is cut ("65.8" for "65.8 %").
        self.compare_view.verticalHeader().setDefaultSectionSize(24)
        for policy in (
            self.compare_view.setHorizontalScrollBarPolicy,
            self.compare_view.setVerticalScrollBarPolicy,
        ):
            policy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.compare_view.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self._fit_compare_view()
        self.compare_view.setToolTip("Change against the previous round chosen in Rounds")
        compare_box = QGroupBox("Compared with the previous round")
        compare_layout = QVBoxLayout(compare_box)
        # Beside the comparison: a round kept is what the next one is compared with.
        self.keep_button = QPushButton("Keep as a round…")
        self.keep_button.setObjectName("keep_round")
        self.keep_button.clicked.connect(self.keep_as_round)
        compare_top = QHBoxLayout()
        compare_top.addWidget(self.compare_label, 1)
        compare_top.addWidget(self.keep_button, 0, Qt.AlignmentFlag.AlignTop)
        compare_layout.addLayout(compare_top)
        compare_layout.addWidget(self.compare_view)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(counts_box)
        left_layout.addWidget(design_box)
        left_layout.addStretch(1)

        self.table_model = EvaluationTableModel(self)
        self.table_view = QTableView()
        self.table_view.setModel(self.table_model)
        self.table_view.verticalHeader().hide()
        self.table_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        header = self.table_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # The Note column is as wide as its longest note, up to a limit (the tooltip and
        # the warnings below give the whole text), not the rest of the window.
        header.setStretchLastSection(False)
        header.setMaximumSectionSize(320)
        self.table_view.verticalHeader().setDefaultSectionSize(22)
        self.table_view.setToolTip("Every interval method of docs/methods.md, side by side")

        self.quote_legend = QLabel(QUOTE_LEGEND)
        self.quote_legend.setObjectName("quote_legend")
        self.quote_legend.setWordWrap(True)
        self.quote_legend.setTextFormat(Qt.TextFormat.RichText)
        self.quote_legend.setToolTip(
            "Every method is shown so you can see whether they agree; the marked one is "
            "the one to report for each metric:\n"
            + "\n".join(
                f"{METRIC_NAMES[metric]}: {INTERVAL_METHODS[item.method].label}, because "
                f"{item.why}."
                for metric, item in RECOMMENDED.items()
            )
            + "\nThe command line marks the same rows with * (docs/methods.md §6)."
        )

        self.warnings_label = QLabel()
        self.warnings_label.setWordWrap(True)
        self.warnings_label.setTextFormat(Qt.TextFormat.RichText)
        self.warnings_label.setStyleSheet(
            "background: #fff4d0; border: 1px solid #e0c060; padding: 4px;"
        )
        self.warnings_label.hide()
        self.summary_label = QLabel()
        self.summary_label.setTextFormat(Qt.TextFormat.RichText)
        self.summary_label.setWordWrap(True)

        # A short title: the plot is never narrower than its title plus its row labels,
        # and on a 1280-wide window that is all the room it has.
        self.forest = ForestPlot("All intervals", ("precision", "recall", "f1"))
        self.fpr_forest = ForestPlot("False positive rate", ("fpr",))
        self.fpr_forest.setMaximumHeight(130)
        self.fpr_forest.setMinimumHeight(110)
        self.forest.setMinimumHeight(300)

        # The table and the forest side by side: every row of the table shows at once
        # (about 20 rows) and the forest keeps the height its row labels need.
        table_column = QWidget()
        table_layout = QVBoxLayout(table_column)
        table_layout.setContentsMargins(0, 0, 0, 0)
        table_layout.addWidget(self.table_view, 1)
        table_layout.addWidget(self.quote_legend)
        table_layout.addWidget(self.warnings_label)
        table_layout.addWidget(compare_box)
        forest_column = QWidget()
        forest_layout = QVBoxLayout(forest_column)
        forest_layout.setContentsMargins(0, 0, 0, 0)
        forest_layout.addWidget(self.forest, 1)
        forest_layout.addWidget(self.fpr_forest)
        self.results_splitter = QSplitter(Qt.Orientation.Horizontal)
        self.results_splitter.addWidget(table_column)
        self.results_splitter.addWidget(forest_column)
        self.results_splitter.setStretchFactor(0, 0)
        self.results_splitter.setStretchFactor(1, 1)
        self.results_splitter.setSizes([480, 520])
        self._results_sized = False
        #: The user dragged the split between table and plots: theirs from then on.
        self._user_split = False
        self.results_splitter.splitterMoved.connect(self._on_user_split)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.summary_label)
        right_layout.addWidget(self.results_splitter, 1)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setSizes([385, 1115])
        # A narrower window shrinks the results, not the inputs (the grid needs its width).
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._results_sized:
            self._fit_table_column()
        self.refresh_if_deferred()

    def _on_user_split(self, *_args) -> None:
        self._user_split = True

    def _fit_table_column(self) -> None:
        """Give the table column the width of its columns, as the rows change, until the
        user moves the split (then it is theirs)."""
        if self._user_split:
            return
        header = self.table_view.horizontalHeader()
        header.resizeSections(QHeaderView.ResizeMode.ResizeToContents)
        width = sum(header.sectionSize(i) for i in range(header.count()))
        self._fit_compare_view()
        needed = max(width + 2 * self.table_view.frameWidth(), self.compare_view.minimumWidth())
        total = sum(self.results_splitter.sizes())
        if needed <= 0 or total <= 0:
            return
        needed += self.table_view.verticalScrollBar().sizeHint().width() + 4
        table = min(needed, total // 2 + total // 6)  # the forest keeps at least a third
        self.results_splitter.setSizes([table, total - table])
        self._results_sized = True

    # --- inputs --------------------------------------------------------------------------

    def _k_for_grid(self) -> float | None:
        return self._session.get("evaluate.population").effective_k

    def _on_random_toggled(self, checked: bool) -> None:
        current = self._session.get("evaluate.population.mode")
        wanted = "random" if checked else ("counts" if current == "random" else current)
        if wanted != current:
            self._session.set_value(
                "evaluate.population.mode",
                wanted,
                text="Plain random sample" if checked else "Stratified sample",
            )

    def _sync_design(self) -> None:
        random = self._session.get("evaluate.population.mode") == "random"
        with QSignalBlocker(self.random_check):
            self.random_check.setChecked(random)
        self.population.setEnabled(not random)
        self.fpc_check.setEnabled(not random)

    def _on_session_changed(self, path: str) -> None:
        if any(affects(path, key) for key in ("evaluate", "current_round", "rounds")):
            self._update_keep_button()
        if affects(path, "evaluate") or affects(path, "confidence"):
            self.refresh()
        elif any(affects(path, key) for key in ("previous_round", "current_round", "rounds")):
            if self.isVisible():
                self.start_comparison()
            else:
                self._refresh_when_shown = True

    # --- keeping typed counts as a round -------------------------------------------------

    def _update_keep_button(self) -> None:
        state = self._session.state
        name = already_a_round(state)
        random = state.evaluate.population.mode == "random"
        self.keep_button.setEnabled(name is None and not random)
        if name is not None:
            tip = f"These counts are round {name} already"
        elif random:
            tip = "A plain random sample cannot be kept as a round: its k is not known"
        else:
            tip = (
                "File these counts in the Rounds panel as a round of their own (name, date, "
                "classifier), so the History tab, comparisons and reports include them"
            )
        self.keep_button.setToolTip(tip)

    def keep_as_round(self) -> bool:
        """ "Keep as a round…": ask for its name, date and classifier, then file it (and,
        when the lead asks, add it to their rounds workbook: :attr:`round_for_workbook`)."""
        workbook = self.rounds_workbook()
        dialog = KeepRoundDialog(
            self._session.state,
            self,
            workbook=workbook if workbook is not None and workbook.is_file() else None,
        )
        self.keep_dialog = dialog
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return False
        done, message = keep_as_round(self._session, *dialog.values())
        (self.announce if done else self.status_message).emit(message)
        if done and dialog.add_to_workbook:
            state = self._session.state
            kept = find_round_key(state.rounds, state.current_round)
            if kept is not None:
                self.round_for_workbook.emit(kept)
        return done

    # --- computing -----------------------------------------------------------------------

    def _refresh_now(self) -> None:
        """Closed forms now, the resampled intervals in the background, then the comparison
        (:meth:`SessionTab.refresh` puts it off while the tab is hidden)."""
        super()._refresh_now()
        self._sync_design()
        self.grid.refresh_readout()
        inputs: EvaluateInputs = self._session.get("evaluate")
        confidence = self._session.get("confidence")
        try:
            quick = run_evaluation(inputs, confidence, QUICK_REPLICATES)
        except InputError as exc:
            self.runner.cancel()
            self.compare_runner.cancel()
            self.evaluation = self.quick_evaluation = self.comparison = None
            self._show_rows(None)
            self._show_warnings([str(exc)], error=True)
            self.summary_label.setText("")
            self.compare_model.set_rows([])
            self.compare_label.setText("No comparison: this round's counts are not usable.")
            return
        self.quick_evaluation = quick
        self.evaluation = None
        self._show_summary(quick, pending=True)
        self._show_rows(quick, pending=True)
        # The quick run's replicate warnings are about its 100 draws, not the user's.
        self._show_warnings([w for w in quick.warnings if "replicate" not in w], pending=True)
        self.runner.start(lambda control: run_evaluation(inputs, confidence, control=control))
        self.start_comparison()

    def _show_summary(self, evaluation: Evaluation, *, pending: bool = False) -> None:
        """Each estimate with the interval to quote: ``Precision 87.9 % (★ Wilson
        83.3–91.3 %)``; a resampled one reads "computing…" until it arrives."""
        estimates = evaluation.estimates
        design = (
            "plain random sample, k from the sample"
            if evaluation.design == "random"
            else "stratified sample"
        )
        metrics = evaluation.metrics()
        recommended = evaluation.recommended()
        parts = []
        for metric, result in metrics.items():
            method = recommended.get(metric)
            quoted = result.intervals.get(method) if method is not None else None
            digits = formatting.interval_digits(
                result.estimate,
                quoted.lower if quoted is not None else None,
                quoted.upper if quoted is not None else None,
            )
            text = f"<b>{METRIC_NAMES[metric]}</b> {formatting.percent(result.estimate, digits)}"
            if method is not None:
                name = method_label(metric, method, evaluation.design, evaluation.fpc is not None)
                if pending and is_resampled(metric, method):
                    text += f" ({QUOTE_MARK} {name} computing…)"
                else:
                    interval = result.intervals[method]
                    bounds = formatting.percent_range(interval.lower, interval.upper, digits)
                    text += f" ({QUOTE_MARK} {name} {bounds})"
            parts.append(formatting.keep_together(text))
        prevalence = formatting.keep_together(formatting.percent(estimates.prevalence))
        parts.append(f"<b>Prevalence</b> {prevalence}")
        self.summary_label.setText(
            " &nbsp; ".join(parts) + " &nbsp; "
            f"<span style='color:#555'>imbalance k {formatting.ratio(evaluation.k)}, "
            f"{design}, {formatting.level(evaluation.confidence)} intervals</span>"
        )

    def _show_rows(self, evaluation: Evaluation | None, pending: bool = False) -> None:
        self.table_model.set_evaluation(evaluation, pending=pending)
        if self._results_sized and self.isVisible():
            # Wider rows (a ★ row in bold, longer numbers) must not push Width out of view.
            self._fit_table_column()
        rows = self.table_model.result_rows()
        fpc = evaluation is not None and evaluation.fpc is not None
        self.forest.set_rows(rows, fpc=fpc)
        self.fpr_forest.set_rows(rows, fpc=fpc)

    def _show_warnings(self, warnings: list[str], *, pending: bool = False, error=False) -> None:
        from core.evaluation import FPC_HINT_MARK, FPC_NOTE_START

        # The correction is a setting the lead chose (or reading labels chose), not a
        # warning: said in words in the list, kept out of the status bar.
        corrected = any(line.startswith(FPC_NOTE_START) for line in warnings)
        warnings = [line for line in warnings if not line.startswith(FPC_NOTE_START)]
        # The core suggests a command-line flag; here it is the tick box of this tab.
        lines = [
            (
                line.partition(": if they were drawn")[0]
                + ": if the sample was drawn without replacement from these lists (as PR "
                "Planner draws), tick Finite population correction to narrow the intervals "
                "to what the unlabeled items can still hold."
            )
            if FPC_HINT_MARK in line
            else line
            for line in warnings
        ]
        if corrected:
            lines.append(
                "The intervals use the finite population correction: the sample was drawn "
                "without replacement from a list of known size, so only the items not "
                "labeled leave uncertainty."
            )
        if pending:
            lines.append("Bootstrap and Monte-Carlo intervals are being computed…")
        if not lines:
            self.warnings_label.hide()
        else:
            color = "#a00000" if error else "#5a4500"
            items = "".join(f"<li>{formatting_html(line)}</li>" for line in lines)
            self.warnings_label.setText(
                f"<ul style='margin:0 0 0 -20px; color:{color}'>{items}</ul>"
            )
            self.warnings_label.show()
        # The status bar gets the warnings only, not the "being computed" line.
        if not warnings:
            self.status_message.emit("")
        elif len(warnings) == 1:
            self.status_message.emit(f"Evaluate: {warnings[0]}")
        else:
            self.status_message.emit(
                f"Evaluate: {warnings[0]} (+{len(warnings) - 1} more warnings)"
            )

    def _on_evaluated(self, evaluation: Evaluation) -> None:
        self.evaluation = evaluation
        self._show_summary(evaluation)
        self._show_rows(evaluation)
        self._show_warnings(list(evaluation.warnings))

    def _on_failed(self, message: str) -> None:
        self._show_warnings([message], error=True)

    # --- comparison with the previous round ----------------------------------------------

    def _fit_compare_view(self) -> None:
        """Size the comparison table to its header, its rows and its widest texts.

        The widths come from the texts themselves (a hidden view measures only the rows
        its viewport shows), each column fixed at what it needs: nothing is cut.
        """
        view = self.compare_view
        header = view.horizontalHeader()
        metrics = view.fontMetrics()
        bold = QFont(view.font())
        bold.setBold(True)  # a row flagged as a decline is drawn bold
        bold_metrics = QFontMetrics(bold)
        padding = 2 * view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 12
        model = self.compare_model
        total = 0
        for column in range(header.count()):
            texts = [str(model.index(row, column).data() or "") for row in range(model.rowCount())]
            widest = max(
                [metrics.horizontalAdvance(text) for text in texts]
                + [bold_metrics.horizontalAdvance(text) for text in texts]
                + [0]
            )
            width = max(widest + padding, header.sectionSizeHint(column))
            header.resizeSection(column, width)
            total += width
        frame = 2 * view.frameWidth()
        rows = max(model.rowCount(), 2)
        height = header.sizeHint().height() + rows * view.verticalHeader().defaultSectionSize()
        view.setMinimumWidth(total + frame + 2)
        view.setFixedHeight(height + frame + 2)

    def current_round(self):
        """The past round the Evaluate tab was filled from (``current_round``), or ``None``."""
        return find_round_key(self._session.get("rounds"), self._session.get("current_round"))

    def previous_round(self):
        """The round this one is compared with, or ``None``
        (:func:`core.workbook.session_io.compared_round`, as the report compares)."""
        return compared_round(self._session.state)

    def start_comparison(self) -> None:
        past = self.previous_round()
        current = self.quick_evaluation
        self.comparison = None
        if past is None or current is None:
            self.compare_runner.cancel()
            self.compare_model.set_rows([])
            shown = self.current_round()
            if shown is not None and self._session.get("evaluate.matrix") != shown.matrix:
                shown = None  # the counts were edited: no longer that round's
            if current is not None and shown is not None:
                whose = f"of {shown.classifier} " if shown.classifier else ""
                self.compare_label.setText(
                    f"No earlier round {whose}to compare with: this is the first. To compare "
                    "with another round, select it in the Rounds panel and press Use as "
                    "previous round."
                )
            elif not self._session.get("rounds"):
                self.compare_label.setText(
                    "No past rounds to compare with yet: open a workbook of past rounds "
                    "(File > Open…), or keep these counts as a round to compare the next "
                    "ones with them."
                )
            else:
                self.compare_label.setText(
                    "Choose a previous round in the Rounds panel (Use as previous round) to "
                    "see the change against it."
                )
            return
        self.compare_label.setText(f"Against <b>{past.name}</b>: computing…")
        matrix, k_current = current.matrix, current.k
        confidence, seed = current.confidence, self._session.get("evaluate.seed")
        # The change carries the finite population correction the intervals carry: the
        # counts shown here as the box says, the past round as its own design does (as
        # History shows it).
        corrected = current.fpc is not None
        populations = (
            past.corrected_population(fpc_of_round(self._session.state, past)),
            population_of(self._session.state.evaluate) if corrected else None,
        )

        def task(control):
            control.step(0, 1)
            return past, compare(
                past.matrix,
                matrix,
                k_previous=past.k,
                k_current=k_current,
                confidence=confidence,
                seed=seed,
                corrected=populations,
            )

        self.compare_runner.start(task)

    def _on_compared(self, result) -> None:
        past, comparison = result
        self.comparison = comparison
        label = f"Against <b>{past.name}</b>"
        if past.date is not None:
            label += f" ({past.date.isoformat()})"
        if past.classifier:
            label += f", classifier {past.classifier}"
        self.compare_label.setText(label + ":")
        rows = []
        for name, change in (
            ("Precision", comparison.precision_change),
            ("Recall", comparison.recall_change),
        ):
            interval = change.interval
            rows.append(
                TableRow(
                    cells=(
                        name,
                        formatting.percent(change.previous),
                        formatting.percent(change.current),
                        signed_points(change.estimate),
                        signed_interval(interval.lower, interval.upper),
                        formatting.chance(change.p_worse),
                    ),
                    warning=interval.upper < 0,
                    tooltip="The interval excludes 0: a decline beyond noise"
                    if interval.upper < 0
                    else (
                        "The interval excludes 0: an improvement beyond noise"
                        if interval.lower > 0
                        else _within_noise_tip(interval, change.p_worse)
                    ),
                    values=(name, change.previous, change.current, change.estimate, interval),
                )
            )
        self.compare_model.set_rows(rows)
        self._fit_compare_view()

    def _on_compare_failed(self, message: str) -> None:
        self.compare_model.set_rows([])
        self.compare_label.setText(f"<span style='color:#a00'>{message}</span>")

    # --- interface with the main window --------------------------------------------------

    def grids(self) -> list[ConfusionGrid]:
        """The labeled-counts grid (for Edit > Copy/Paste)."""
        return [self.grid]


def signed_points(value: float) -> str:
    """A change in percentage points, one decimal and its sign: ``+1.6 pp``, ``−1.0 pp``."""
    return formatting.points(value)


def signed_interval(lower: float, upper: float) -> str:
    """``−4.2 to +7.1 pp``: the interval of a change, unit once."""
    return formatting.points_interval(lower, upper)


def formatting_html(text: str) -> str:
    """Escape ``<``, ``>`` and ``&`` so a warning shows as typed in a rich-text label."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
