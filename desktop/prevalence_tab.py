"""Prevalence tab: precision and F1 under other class balances (methods §11, workflow 3).

* P3 curve of the round on the Evaluate tab (precision against prevalence on a log axis)
  with its uncertainty band between ``LB`` and ``UB`` (Brabec et al., Theorem 5.1), the
  population and sample prevalences marked, ``Delta`` and ``eta*`` reported
  (:func:`core.prevalence.p3_curve`).
* F1 against prevalence for that round and the past rounds the user ticks, with the
  prevalences where two of them swap ranks (:func:`core.prevalence.compare_across_prevalence`).
* Calibrated metrics at a reference prevalence the user types
  (:func:`core.prevalence.calibrated_metrics`).
* PR curves and their areas when a scored sample is loaded (:mod:`core.curves`), read in
  the background.

Everything but the scored sample is closed form (microseconds), so it is recomputed on
every edit; plot items are created once and updated with ``setData``.
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.confusion import point_estimates
from core.curves import UNWEIGHTED_NOTE, ScoredCurves, curves_of_sample, load_scored_sample
from core.errors import InputError, os_error_cause
from core.prevalence import (
    OperatingPoint,
    P3Curve,
    PrevalenceComparison,
    calibrated_metrics,
    compare_across_prevalence,
    p3_curve,
    precision_band,
    prevalence_grid,
)
from desktop import formatting
from desktop.plotting import PALETTE, PlotPanel
from desktop.session_model import SessionModel
from desktop.tab_support import RowsTableModel, SessionTab, TableRow, use_percent_axes
from desktop.widgets import PercentSpin, affects, keep_wrapped_height

CURRENT_NAME = "This round"
BAND_BRUSH = (0, 114, 178, 50)

#: What the Scored sample box says before a file is loaded: what to import to see the
#: PR curve charts (hidden until then).
NO_SCORED_SAMPLE = (
    "No scored sample loaded. Import a file of labeled items (score, label 1/0, weight if "
    "over-sampled) to see precision against recall and average precision at every "
    "prevalence."
)
BAND_TOOLTIP = (
    "Uncertainty band (Brabec et al., Theorem 5.1): the precision curve redrawn with the "
    "ends of the intervals of recall (TPR) and of the false positive rate (FPR), lower "
    "bound LB to upper bound UB. Its widest gap is Δ, reached at the prevalence η*; "
    "Δ ≤ max(CV_TPR, CV_FPR), the larger coefficient of variation of the two rates."
)
#: What the vertical markers stand for (prevalences), keyed in the plot titles: labels on
#: the lines would cover the curves, each other and the x axis.
POPULATION_KEY = "population"
SAMPLE_KEY = "labeled sample"
SCORED_KEY = "scored sample"
WIDEST_KEY = "widest band"
REFERENCE_KEY = "reference"
P3_TITLE = "Precision at every prevalence"
F1_TITLE = "F1 at every prevalence"
#: The first line names the plot in saved reports ("Prevalence: PR curve of ...").
PR_TITLE = "PR curve of the scored sample"
AREA_TITLE = "Average precision at every prevalence (scored sample)"
SWAP_NAME = "F1 order swaps"


def marker_key(title: str, keys) -> str:
    """A plot title with a second, small line keying its vertical markers: ``keys`` are
    ``(palette index, dashed, words)``."""
    parts = [
        f"<span style='color:{PALETTE[index]}'>{'╎' if dashed else '┆'}</span> {words}"
        for index, dashed, words in keys
    ]
    return f"{title}<br><span style='font-size:8pt'>{' &nbsp; '.join(parts)}</span>"


def round_label(past) -> str:
    """``TR-01 (travel)``: how a past round is named in lists, legends and tables."""
    name = past.name
    return f"{name} ({past.classifier})" if past.classifier else name


#: Past rounds drawn at most beside this round: more lines cannot be told apart, and each
#: costs the legend and the F1 order swaps more (2,000 ticked rounds took 54 s; fuzz 13).
MAX_COMPARED_DRAWN = 20


def compare_keys(rounds) -> list[str]:
    """How each past round is kept in ``prevalence.compared_rounds`` when ticked: its
    name, or its name with its classifier when several rounds share the name (the
    classifiers of one labeling workbook are all named after it; by name alone, ticking
    one ticked all)."""
    names = Counter(past.round for past in rounds if past.round)
    return [round_label(past) if names[past.round] > 1 else past.name for past in rounds]


def compared_flags(rounds, ticked) -> list[bool]:
    """Which past rounds the ``ticked`` keys tick. A bare name kept before a second round
    of that name came (or by an older version) still ticks the rounds of that name."""
    labelled = {past.round for past in rounds if round_label(past) in ticked}
    return [
        key in ticked
        or round_label(past) in ticked
        or ((past.round or "") in ticked and past.round not in labelled)
        for past, key in zip(rounds, compare_keys(rounds), strict=True)
    ]


def prevalence_text(value: float) -> str:
    return formatting.percent(value)


def pct(value: float | None) -> str:
    """A percentage for a word-wrapped label: the number never parts from its ``%``."""
    return formatting.keep_together(formatting.percent(value))


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoredResult:
    """A loaded scored sample's curves, and its AUC-PR across prevalences."""

    path: str
    curves: ScoredCurves
    prevalence: np.ndarray
    average_precision: np.ndarray
    #: The file had a weight column (without one the curves describe the sample as drawn).
    weighted: bool = True


def load_scored_curves(path: str, eta_min: float, eta_max: float, control=None) -> ScoredResult:
    """Read a scored sample and compute its curves (background work: file I/O)."""
    if control is not None:
        control.step(0, 3)
    try:
        sample = load_scored_sample(path)
    except OSError as exc:  # raised as an InputError, which the tab shows as it is
        raise InputError(f"{os.path.basename(path)}: {os_error_cause(exc)}") from None
    if control is not None:
        control.step(1, 3)
    curves = curves_of_sample(sample)
    if control is not None:
        control.step(2, 3)
    eta, area = curves.area_under_pr_vs_prevalence(prevalence_grid(eta_min, eta_max))
    return ScoredResult(
        path=path,
        curves=curves,
        prevalence=eta,
        average_precision=area,
        weighted=sample.weights is not None,
    )


#: Column titles of the calibrated-metrics table; ``{reference}`` is the reference
#: prevalence as shown (``"2.00 %"``), filled in by :class:`CalibratedTableModel`.
CALIBRATED_HEADERS = (
    "Round",
    "Own\nprevalence",
    "Precision",
    "Precision\nat {reference}",
    "Band at\n{reference}",
    "Recall",
    "F1\nat {reference}",
    "Precision gain over\nflagging every item",
    "Recall gain over\nflagging every item,\nat {reference}",
)
CALIBRATED_TIPS = (
    "The round on the Evaluate tab and the past rounds ticked on the left",
    "The round's own share of actual positives, estimated for its whole population "
    "(not the labeled sample's share): (k·π1 + π0)/(k + 1). The classifiers of one "
    "labeling workbook each estimate the same share from their own flagged and unflagged "
    "items, so their estimates differ a little",
    "Precision measured in the round, at its own prevalence",
    "Calibrated precision: the precision the classifier would show if the reference "
    "prevalence were the share of actual positives (Siblini et al., Eq 6)",
    "How far the precision at the reference prevalence can be trusted: the uncertainty "
    "band there (the shaded band of the plot). With the reference below the round's own "
    "share of positives it is wider than the precision's own interval; above it, it can "
    "be narrower",
    "Recall (true positive rate, TPR): the same at every prevalence",
    "Calibrated F1: F1 from the precision at the reference prevalence and the same recall",
    "How much better than flagging every item the classifier is (100 % = no false alarms), "
    "1 − FPR/TPR: the same at every prevalence (Flach and Kull 2015)",
    "Recall gain at the reference prevalence: how much better than flagging every item, "
    "for recall (negative: worse than flagging everything)",
)


def _band_words(point: OperatingPoint, reference: float) -> str:
    """The P3 band at ``reference`` as ``"45.2–84.0 %"`` (``"–"`` when undefined)."""
    try:
        lower, upper = precision_band(point).bounds_at(reference)
    except InputError:
        return "–"
    return formatting.percent_range(
        float(lower), float(upper), formatting.percent_digits(float(lower))
    )


class CalibratedTableModel(RowsTableModel):
    """The calibrated-metrics rows, with the reference prevalence in the column titles."""

    def __init__(self, parent=None):
        super().__init__(CALIBRATED_HEADERS, CALIBRATED_TIPS, parent)
        self.reference_text = ""

    def set_reference_text(self, text: str) -> None:
        if text != self.reference_text:
            self.reference_text = text
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(CALIBRATED_HEADERS) - 1)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        value = super().headerData(section, orientation, role)
        if role == Qt.ItemDataRole.DisplayRole and isinstance(value, str):
            return value.format(reference=self.reference_text or "reference")
        return value


#: Plain words for the notes :func:`core.prevalence.p3_curve` attaches to a band, by the
#: note's opening words (core's own text stays in the tooltip).
BAND_NOTE_WORDS = (
    (
        "sigma_tpr >= tpr",
        "recall's interval reaches 0, so the band's lower edge is 0 % at every prevalence",
    ),
    (
        "sigma_fpr >= fpr",
        "the false positive rate's interval reaches 0, so the band's upper edge is 100 % at "
        "every prevalence",
    ),
    (
        "TPR's interval reaches 0",
        "recall's interval reaches 0, so the band's lower edge is 0 % at every prevalence",
    ),
    (
        "FPR's interval reaches 0",
        "no false positive was found, so precision could be 100 % at any prevalence: the "
        "band's upper edge is 100 % everywhere",
    ),
    ("the band has zero width", "the band has no width at any prevalence"),
    ("the band is [0, 1]", "the band spans 0 % to 100 % at every prevalence"),
    ("an upper rate bound clipped", "an interval of a rate was cut at 100 %"),
    ("delta_bound", ""),  # the bound is in the tooltip only
)


def band_note_words(note: str) -> str:
    """A band's note from core in a lead's words (unknown notes are passed on as they are)."""
    words = []
    for part in filter(None, note.split("; ")):
        if "Delta = 1" in part:
            edge = "100 %" if "-> 1" in part else "0 %"
            words.append(f"the band is widest only as the prevalence approaches {edge}")
            continue
        plain = next((w for start, w in BAND_NOTE_WORDS if part.startswith(start)), part)
        if plain:
            words.append(plain)
    return "; ".join(words)


#: F1 order swaps named in words under the table; the others are counted (stars on the chart).
SWAPS_NAMED = 4
#: Pens of the F1 curves past the sixth colour.
F1_LINE_STYLES = (
    Qt.PenStyle.SolidLine,
    Qt.PenStyle.DashLine,
    Qt.PenStyle.DotLine,
    Qt.PenStyle.DashDotLine,
)

#: Said under the F1 order: the curves are drawn from estimates.
NOISE_CAVEAT = (
    " These are the estimates' curves: a small gap, or a swap, may be sampling noise "
    "(compare the rounds' F1 intervals on the Evaluate tab before naming a winner)."
)


class PrevalenceTab(SessionTab):
    """Precision across prevalences (P3 curve) with its band, F1 across prevalences,
    calibrated metrics, and PR curves once a scored sample is loaded.

    Signals
    -------
    status_message(str)
        A one-line message for the window's status bar (``""`` clears it).
    """

    def __init__(self, session: SessionModel, parent=None):
        super().__init__(session, parent)
        #: Ticked past rounds beyond MAX_COMPARED_DRAWN, not drawn (said under the plots).
        self.compared_left_out = 0
        self.curve: P3Curve | None = None
        self.comparison: PrevalenceComparison | None = None
        self.scored: ScoredResult | None = None
        #: A file picked with Import scored sample…, read before the session takes it:
        #: one that cannot be read changes nothing.
        self._importing: str | None = None
        #: (path, lowest, highest prevalence) of the read running and of the one shown.
        self._reading_key: tuple[str, float, float] | None = None
        self._scored_key: tuple[str, float, float] | None = None
        self.runner = self.new_runner()
        self.runner.finished.connect(self._on_scored_loaded)
        self.runner.failed.connect(self._on_scored_failed)
        self._build()
        session.changed.connect(self._on_session_changed)
        self._fill_round_list()
        self.refresh()
        self._load_scored_sample()

    # --- layout --------------------------------------------------------------------------

    def _build(self) -> None:
        session = self._session
        self.reference_spin = PercentSpin(
            session,
            "prevalence.reference_prevalence",
            minimum=0.001,
            maximum=99.0,
            decimals=3,
            step=0.5,
            tooltip="Reference prevalence pi_ref: the share of actual positives at which the "
            "calibrated metrics are reported (e.g. the production prevalence)",
        )
        self.eta_min_spin = PercentSpin(
            session,
            "prevalence.eta_min",
            minimum=0.0001,
            maximum=50.0,
            decimals=4,
            step=0.001,
            tooltip="Lowest prevalence on the x axes (log scale)",
        )
        self.eta_max_spin = PercentSpin(
            session,
            "prevalence.eta_max",
            minimum=0.01,
            maximum=99.0,
            decimals=2,
            step=5,
            tooltip="Highest prevalence on the x axes",
        )
        inputs_box = QGroupBox("Prevalences")
        form = QFormLayout(inputs_box)
        form.addRow("Reference prevalence", self.reference_spin)
        form.addRow("Lowest prevalence", self.eta_min_spin)
        form.addRow("Highest prevalence", self.eta_max_spin)

        self.round_list = QListWidget()
        self.round_list.setToolTip(
            "Tick past rounds (or classifiers) to draw their F1 against prevalence beside "
            "this round's; the round on the Evaluate tab is always included"
        )
        # Long names wrap: "This round (round4 (mail flagged for review), Evaluate tab)" was
        # cut, behind a horizontal scroll bar (trial 20).
        self.round_list.setWordWrap(True)
        self.round_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.round_list.itemChanged.connect(self._on_round_ticked)
        rounds_box = QGroupBox("Compare with past rounds")
        rounds_layout = QVBoxLayout(rounds_box)
        rounds_layout.addWidget(self.round_list)

        # Wrapped labels keep the lines they need: the round list above gives way.
        self.band_label = keep_wrapped_height(QLabel())
        self.band_label.setTextFormat(Qt.TextFormat.RichText)
        self.band_label.setToolTip(BAND_TOOLTIP)
        # Plain wrapping here: a label that claims its lines' height inside the splitter
        # keeps the room it claimed while the tab was laid out narrow.
        self.swaps_label = QLabel()
        self.swaps_label.setWordWrap(True)
        self.swaps_label.setTextFormat(Qt.TextFormat.RichText)

        self.calibrated_model = CalibratedTableModel(self)
        self.calibrated_view = QTableView()
        self.calibrated_view.setModel(self.calibrated_model)
        self.calibrated_view.verticalHeader().hide()
        self.calibrated_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.calibrated_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.calibrated_view.setWordWrap(False)
        # This round and two compared rounds without a scroll bar (the two-line column
        # titles take their own height).
        self.calibrated_view.verticalHeader().setDefaultSectionSize(22)
        self.calibrated_view.setMinimumHeight(
            header.sizeHint().height() + 3 * 22 + 2 * self.calibrated_view.frameWidth() + 2
        )
        self.calibrated_view.setToolTip(
            "Each round at its own prevalence, and as it would be if the reference prevalence "
            "were its share of actual positives (calibrated metrics)"
        )
        # The box's title says which reference prevalence the table is at (a line of its
        # own would cost the table a row on a laptop screen).
        self.calibrated_box = QGroupBox()
        calibrated_layout = QVBoxLayout(self.calibrated_box)
        calibrated_layout.addWidget(self.calibrated_view)

        self.import_button = QPushButton("Import scored sample…")
        self.import_button.setToolTip(
            "Load a CSV or XLSX file with columns score, label (0/1) and optionally weight "
            "(N1/n1 and N0/n0 for an over-sampled round) to draw PR curves"
        )
        self.import_button.clicked.connect(self._ask_scored_sample)
        self.scored_label = keep_wrapped_height(QLabel(NO_SCORED_SAMPLE))
        self.scored_label.setTextFormat(Qt.TextFormat.RichText)
        scored_box = QGroupBox("Scored sample")
        scored_layout = QVBoxLayout(scored_box)
        row = QHBoxLayout()
        row.addWidget(self.import_button)
        row.addStretch(1)
        scored_layout.addLayout(row)
        scored_layout.addWidget(self.scored_label)

        self.message_label = QLabel()
        self.message_label.setWordWrap(True)
        self.message_label.setStyleSheet("color: #a00000;")
        self.message_label.hide()  # shown with a message only

        left = QWidget()
        # Wide enough that the wrapped sentences keep a few lines each: laid out narrower
        # (a tab first shown after a resize) they would claim a height that pushes the
        # window past a laptop screen (as on the Ensemble tab).
        left.setMinimumWidth(290)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(inputs_box)
        left_layout.addWidget(rounds_box, 1)
        left_layout.addWidget(self.band_label)
        left_layout.addWidget(self.message_label)
        left_layout.addWidget(scored_box)

        self._build_plots()
        plots = QWidget()
        grid = QGridLayout(plots)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.p3_plot, 0, 0)
        grid.addWidget(self.f1_plot, 0, 1)
        grid.addWidget(self.pr_plot, 1, 0)
        grid.addWidget(self.area_plot, 1, 1)
        # The scored sample's charts have nothing to show until a file is loaded: hidden
        # until then (the Scored sample box says what to import), the top row takes
        # their room.
        self.pr_plot.hide()
        self.area_plot.hide()
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(plots)
        bottom = QWidget()
        bottom_layout = QVBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.addWidget(self.calibrated_box, 1)
        bottom_layout.addWidget(self.swaps_label)
        right.addWidget(bottom)
        right.setSizes([700, 160])
        right.setStretchFactor(0, 4)
        right.setStretchFactor(1, 1)
        self.right_splitter = right
        #: The user dragged the split between plots and table: theirs from then on.
        self._user_split = False
        right.splitterMoved.connect(self._on_user_split)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setSizes([330, 1170])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)

    def _on_user_split(self, *_args) -> None:
        self._user_split = True

    def _fit_table(self) -> None:
        """Give the table the height of its rows (each ticked round one more), up to half
        of the column: four rounds must not hide behind the text under the table."""
        if self._user_split:
            return
        view = self.calibrated_view
        rows = max(self.calibrated_model.rowCount(), 2)
        table = (
            view.horizontalHeader().sizeHint().height()
            + rows * view.verticalHeader().defaultSectionSize()
            + 2 * view.frameWidth()
            + 2
        )
        box = self.calibrated_box
        margins = box.contentsMargins().top() + box.contentsMargins().bottom() + 24
        swaps = self.swaps_label.sizeHint().height() if self.swaps_label.text() else 0
        wanted = table + margins + swaps + 8
        total = sum(self.right_splitter.sizes())
        if total <= 0:
            return
        bottom = min(max(wanted, 160), total // 2)
        self.right_splitter.setSizes([total - bottom, bottom])

    def _build_plots(self) -> None:
        """Every plot item is created here once; refreshes only call ``setData``."""
        prevalence_axis = "Prevalence of actual positives"
        self.p3_plot = PlotPanel(
            P3_TITLE, prevalence_axis, "Precision", log_x=True, x_format=prevalence_text
        )
        use_percent_axes(self.p3_plot, bottom=prevalence_axis, left="Precision", log_x=True)
        # Top left stays empty: precision is near 0 at the lowest prevalences.
        self.p3_plot.legend.setOffset((70, 10))
        self.band_lower = self.p3_plot.line(
            "Uncertainty band, lower edge", 0, width=1, color="#7fb8d8"
        )
        self.band_upper = self.p3_plot.line(
            "Uncertainty band, upper edge", 0, width=1, color="#7fb8d8"
        )
        self.band_fill = pg.FillBetweenItem(
            self.band_lower, self.band_upper, brush=pg.mkBrush(*BAND_BRUSH)
        )
        self.p3_plot.addItem(self.band_fill)
        self.p3_line = self.p3_plot.line("Precision", 0, width=2.5)
        # The band's upper edge stands for the band in the legend: a legend sample of a
        # FillBetweenItem crashes pyqtgraph's ItemSample when painted.
        self.p3_plot.legend.removeItem(self.band_lower)
        self.p3_plot.legend.removeItem(self.band_upper)
        self.p3_plot.legend.addItem(self.band_upper, "Uncertainty band")
        dash, dot = Qt.PenStyle.DashLine, Qt.PenStyle.DotLine
        self.population_marker = self.p3_plot.vertical_marker(POPULATION_KEY, 6, dash)
        self.sample_marker = self.p3_plot.vertical_marker(SAMPLE_KEY, 1, dot)
        self.eta_star_marker = self.p3_plot.vertical_marker(WIDEST_KEY, 3, dot)
        self.reference_marker = self.p3_plot.vertical_marker(REFERENCE_KEY, 2, dash)
        # Markers close together: their labels would cover the curve, each other and the
        # x axis, so every chart keys them in its title (as on the Plan tab) instead.
        self.p3_plot.setTitle(
            marker_key(
                P3_TITLE,
                (
                    (6, True, POPULATION_KEY),
                    (1, False, SAMPLE_KEY),
                    (3, False, WIDEST_KEY),
                    (2, True, REFERENCE_KEY),
                ),
            ),
            size="10pt",
        )
        self.p3_plot.setYRange(0, 1, padding=0.02)

        self.f1_plot = PlotPanel(
            F1_TITLE, prevalence_axis, "F1", log_x=True, x_format=prevalence_text
        )
        use_percent_axes(self.f1_plot, bottom=prevalence_axis, left="F1", log_x=True)
        self.f1_plot.legend.setOffset((70, 10))
        self.f1_lines: list[pg.PlotDataItem] = []
        self.swap_points = pg.PlotDataItem(
            [],
            [],
            pen=None,
            symbol="star",
            symbolSize=14,
            symbolBrush="#E69F00",
            symbolPen=pg.mkPen("#222"),
            name=SWAP_NAME,
        )
        self.swap_points.setZValue(10)
        self.f1_plot.addItem(self.swap_points)
        self.f1_reference_marker = self.f1_plot.vertical_marker(REFERENCE_KEY, 2, dash)
        self.f1_plot.setTitle(marker_key(F1_TITLE, ((2, True, REFERENCE_KEY),)), size="10pt")
        self.f1_plot.setYRange(0, 1, padding=0.02)

        self.pr_plot = PlotPanel(PR_TITLE, "Recall", "Precision", x_format=formatting.percent)
        use_percent_axes(self.pr_plot, bottom="Recall", left="Precision")
        self.pr_line = self.pr_plot.line("At the sample's prevalence", 0)
        self.pr_calibrated_line = self.pr_plot.line(
            "At the reference prevalence", 1, style=Qt.PenStyle.DashLine
        )
        self.pr_plot.setTitle(
            f"{PR_TITLE}<br><span style='font-size:8pt'>precision against recall at every "
            "score threshold</span>",
            size="10pt",
        )
        self.pr_plot.setXRange(0, 1, padding=0.02)
        self.pr_plot.setYRange(0, 1, padding=0.02)

        self.area_plot = PlotPanel(
            AREA_TITLE, prevalence_axis, "Average precision", log_x=True, x_format=prevalence_text
        )
        use_percent_axes(
            self.area_plot, bottom=prevalence_axis, left="Average precision", log_x=True
        )
        self.area_line = self.area_plot.line("Scored sample", 0)
        self.area_plot.legend.hide()  # one curve, named by the title
        self.area_reference_marker = self.area_plot.vertical_marker(REFERENCE_KEY, 2, dash)
        self.area_sample_marker = self.area_plot.vertical_marker(SCORED_KEY, 1, dot)
        self.area_plot.setTitle(
            marker_key(AREA_TITLE, ((1, False, SCORED_KEY), (2, True, REFERENCE_KEY))),
            size="10pt",
        )
        self.area_plot.setYRange(0, 1, padding=0.02)
        for marker in (
            self.population_marker,
            self.sample_marker,
            self.eta_star_marker,
            self.reference_marker,
            self.f1_reference_marker,
            self.area_reference_marker,
            self.area_sample_marker,
        ):
            marker.label.setVisible(False)

    # --- past rounds to compare ----------------------------------------------------------

    def _fill_round_list(self) -> None:
        from core.workbook.session_io import report_subject

        ticked = set(self._session.get("prevalence.compared_rounds"))
        shown = report_subject(self._session.state)  # already drawn as "This round"
        with QSignalBlocker(self.round_list):
            self.round_list.clear()
            current = QListWidgetItem(f"{CURRENT_NAME} ({self.current_round_words()})")
            current.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
            current.setCheckState(Qt.CheckState.Checked)
            current.setToolTip("The round on the Evaluate tab is always drawn")
            self.round_list.addItem(current)
            rounds = self._session.get("rounds")
            keys = compare_keys(rounds)
            flags = compared_flags(rounds, ticked)
            for past, name, is_ticked in zip(rounds, keys, flags, strict=True):
                if past == shown:
                    continue
                item = QListWidgetItem(round_label(past))
                item.setData(Qt.ItemDataRole.UserRole, name)
                item.setFlags(
                    Qt.ItemFlag.ItemIsEnabled
                    | Qt.ItemFlag.ItemIsUserCheckable
                    | Qt.ItemFlag.ItemIsSelectable
                )
                item.setCheckState(Qt.CheckState.Checked if is_ticked else Qt.CheckState.Unchecked)
                date = past.date.isoformat() if past.date is not None else "no date"
                item.setToolTip(
                    f"{round_label(past)}, {date}: TP {past.tp:,}, FP {past.fp:,}, "
                    f"FN {past.fn:,}, TN {past.tn:,}"
                )
                self.round_list.addItem(item)

    def current_round_words(self) -> str:
        """``"PR-05 (Promotions), Evaluate tab"`` while the Evaluate tab shows a past
        round (the current round), else ``"Evaluate tab"``."""
        from core.workbook.session_io import report_subject

        item = report_subject(self._session.state)
        return "Evaluate tab" if item is None else f"{round_label(item)}, Evaluate tab"

    def _on_round_ticked(self, item: QListWidgetItem) -> None:
        names = []
        for row in range(1, self.round_list.count()):
            entry = self.round_list.item(row)
            if entry.checkState() == Qt.CheckState.Checked:
                names.append(entry.data(Qt.ItemDataRole.UserRole))
        verb = "Compare" if item.checkState() == Qt.CheckState.Checked else "Stop comparing"
        self._session.set_value(
            "prevalence.compared_rounds", tuple(names), text=f"{verb} {item.text()}"
        )

    def set_round_checked(self, name: str, checked: bool) -> None:
        """Tick or untick the past round ``name`` as a user would (tests, scripting)."""
        for row in range(1, self.round_list.count()):
            entry = self.round_list.item(row)
            if entry.data(Qt.ItemDataRole.UserRole) == name:
                entry.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
                return
        raise KeyError(name)

    # --- reacting to the session ---------------------------------------------------------

    def _on_session_changed(self, path: str) -> None:
        if any(
            affects(path, key)
            for key in ("rounds", "prevalence.compared_rounds", "current_round", "evaluate")
        ):
            self._fill_round_list()
        if affects(path, "prevalence.scored_sample_path"):
            self._load_scored_sample()
        elif self.scored is not None and (
            affects(path, "prevalence.eta_min") or affects(path, "prevalence.eta_max")
        ):
            self._load_scored_sample()
        if any(
            affects(path, watched) for watched in ("evaluate", "confidence", "prevalence", "rounds")
        ):
            self.refresh()

    # --- closed forms --------------------------------------------------------------------

    def operating_points(self) -> list[OperatingPoint]:
        """This round's operating point, then every ticked past round's (core's from_round)."""
        state = self._session.state
        inputs = state.evaluate
        points = [
            OperatingPoint.from_round(
                inputs.matrix,
                inputs.population.effective_k,
                confidence=state.confidence,
                name=CURRENT_NAME,
            )
        ]
        from core.workbook.session_io import report_subject

        ticked = set(state.prevalence.compared_rounds)
        shown = report_subject(state)  # already drawn as "This round"
        compared = [
            past
            for past, is_ticked in zip(
                state.rounds, compared_flags(state.rounds, ticked), strict=True
            )
            if is_ticked and past != shown
        ]
        self.compared_left_out = max(0, len(compared) - MAX_COMPARED_DRAWN)
        for past in compared[:MAX_COMPARED_DRAWN]:
            points.append(
                OperatingPoint.from_round(
                    past.matrix, past.k, confidence=state.confidence, name=round_label(past)
                )
            )
        return points

    def refresh(self) -> None:
        """Recompute every closed form and update the plots and tables."""
        state = self._session.state
        settings = state.prevalence
        messages = []
        self.compared_left_out = 0
        try:
            points = self.operating_points()
        except InputError as exc:
            points = []
            messages.append(f"This round: {exc}")
        self.curve = None
        self.comparison = None
        if points:
            try:
                self.curve = p3_curve(
                    points[0],
                    eta_min=settings.eta_min,
                    eta_max=settings.eta_max,
                    reference_prevalence=settings.reference_prevalence,
                )
                self.comparison = compare_across_prevalence(
                    points, eta_min=settings.eta_min, eta_max=settings.eta_max
                )
            except InputError as exc:
                messages.append(str(exc))
        self._show_p3(self.curve)
        self._show_f1(self.comparison)
        self._show_calibrated(points, settings.reference_prevalence)
        for marker, plot in (
            (self.reference_marker, self.p3_plot),
            (self.f1_reference_marker, self.f1_plot),
            (self.area_reference_marker, self.area_plot),
        ):
            plot.set_marker_x(marker, settings.reference_prevalence)
        reference = settings.reference_prevalence
        if not settings.eta_min <= reference <= settings.eta_max:
            # Its line fell off the charts with no word (trial 20).
            bound = (
                "Lowest prevalence below"
                if reference < settings.eta_min
                else "Highest prevalence above"
            )
            messages.append(
                f"The reference prevalence, {pct(reference)}, is outside the charts' range "
                f"({pct(settings.eta_min)} to {pct(settings.eta_max)}), so its line is not "
                f"drawn; set {bound} it to see it."
            )
        self._show_range()
        if self.scored is not None:
            self._show_scored(self.scored)
        if self.compared_left_out:
            messages.append(
                f"Only the first {MAX_COMPARED_DRAWN} ticked rounds are drawn; untick some "
                f"to see the other {self.compared_left_out:,}."
            )
        self.message_label.setText("\n".join(messages))
        self.message_label.setVisible(bool(messages))
        self.status_message.emit(f"Prevalence: {messages[0]}" if messages else "")

    def _show_p3(self, curve: P3Curve | None) -> None:
        if curve is None:
            for item in (self.p3_line, self.band_lower, self.band_upper):
                item.setData([], [])
            for marker in (self.population_marker, self.sample_marker, self.eta_star_marker):
                marker.hide()
            self.band_label.setText("")
            return
        self.p3_line.setData(curve.prevalence, curve.precision)
        band = curve.band
        if curve.lower is not None:
            self.band_lower.setData(curve.prevalence, curve.lower)
            self.band_upper.setData(curve.prevalence, curve.upper)
        else:
            self.band_lower.setData([], [])
            self.band_upper.setData([], [])
        point = curve.point
        self.p3_plot.set_marker_x(self.population_marker, point.population_prevalence)
        self.p3_plot.set_marker_x(self.sample_marker, point.sample_prevalence)
        self.p3_plot.set_marker_x(self.eta_star_marker, band.eta_star if band else None)
        self.p3_plot.setXRange(
            np.log10(curve.prevalence[0]), np.log10(curve.prevalence[-1]), padding=0.02
        )
        lines = [
            f"<b>This round</b>: recall {pct(point.tpr)}, false positive rate "
            f"{pct(point.fpr)}; actual positives are {pct(point.population_prevalence)} of "
            f"the population, {pct(point.sample_prevalence)} of the labeled sample."
        ]
        tooltip = BAND_TOOLTIP
        if band is not None:
            where = (
                f", widest at a prevalence of {pct(band.eta_star)}"
                if np.isfinite(band.eta_star)
                else ""
            )
            level = formatting.keep_together(formatting.level(self._session.get("confidence")))
            lines.append(
                f"<b>Uncertainty band</b>: at most <b>{pct(band.delta)}</b> wide{where} "
                f"(from the {level} intervals of recall and false positive rate)."
            )
            tooltip += (
                "\nWhatever the prevalence, the band around precision is at most this wide "
                "in all (lower to upper end). It usually holds the true curve more often than "
                "the level says, but less often (about 90 % for a 95 % band) when only one or "
                "two false positives or missed positives are expected.\nAt this round's own "
                "prevalence, the Evaluate "
                "tab's interval for precision is the one to quote."
                f"\nHere Δ = {formatting.percent(band.delta)}, η* = "
                f"{formatting.percent(band.eta_star)}, max(CV) = "
                f"{formatting.percent(band.delta_bound)}."
            )
            note = band_note_words(band.note)
            if note:
                lines.append(f"<span style='color:#8a5a00'>Note: {formatting_html(note)}.</span>")
            if band.note:
                tooltip += f"\nNote: {band.note}."
        self.band_label.setText("<br>".join(lines))
        self.band_label.setToolTip(tooltip)

    def _f1_line(self, index: int) -> pg.PlotDataItem:
        """The ``index``-th F1 curve, created the first time it is needed and then reused."""
        while len(self.f1_lines) <= index:
            number = len(self.f1_lines)
            color = PALETTE[6] if number == 0 else PALETTE[(number - 1) % 6]
            # Six colours, then the same colours dashed, dotted…: ten ticked rounds drew
            # TR-01 and FI-01 in one blue (trial 20).
            style = F1_LINE_STYLES[0 if number == 0 else (number - 1) // 6 % len(F1_LINE_STYLES)]
            line = self.f1_plot.line(
                None, number, color=color, width=2.5 if number == 0 else 2, style=style
            )
            self.f1_lines.append(line)
        return self.f1_lines[index]

    def _show_f1(self, comparison: PrevalenceComparison | None) -> None:
        names = comparison.names if comparison is not None else ()
        legend = self.f1_plot.legend
        legend.clear()
        if comparison is not None:
            for index, name in enumerate(names):
                line = self._f1_line(index)
                line.opts["name"] = name
                line.setData(comparison.prevalence, comparison.f_beta[index])
                line.show()
                legend.addItem(line, name)
        for line in self.f1_lines[len(names) :]:
            line.setData([], [])
            line.hide()
        swaps = comparison.swaps if comparison is not None else ()
        self.swap_points.setData(
            [swap.prevalence for swap in swaps], [swap.value for swap in swaps]
        )
        # The stars are keyed by the sentence under the table ("★ on the F1 chart"), and
        # three curves or more take two columns: a taller legend would cover the curves.
        legend.setColumnCount(2 if len(names) > 2 else 1)
        if comparison is not None:
            self.f1_plot.setXRange(
                np.log10(comparison.prevalence[0]),
                np.log10(comparison.prevalence[-1]),
                padding=0.02,
            )
        if len(names) < 2:
            text = (
                "Tick past rounds on the left to draw their F1 beside this round's and see "
                "at which prevalence one overtakes another."
            )
        elif not swaps:
            settings = self._session.get("prevalence")
            assert comparison is not None
            curves = np.asarray(comparison.f_beta)
            best = curves[int(np.argmax(curves[:, 0]))]
            # Rounds with the same rates draw the same curve: none of them is ahead (trial
            # 19 read "A is ahead" of an identical B).
            leaders = [
                name
                for name, curve in zip(names, curves, strict=True)
                if np.allclose(curve, best, rtol=1e-12, atol=0.0)
            ]
            span = f"at every prevalence from {pct(settings.eta_min)} to {pct(settings.eta_max)}"
            if len(leaders) == len(names):
                text = (
                    f"F1 order: the curves are the same {span}: the rounds have the same recall "
                    "(TPR) and false positive rate."
                )
            else:
                ahead = (
                    f"{formatting_html(leaders[0])} is ahead"
                    if len(leaders) == 1
                    else formatting_html(", ".join(leaders[:-1]) + " and " + leaders[-1])
                    + " are ahead, level with each other,"
                )
                text = f"F1 order: {ahead} {span}" + (
                    " (the curves do not cross)." if len(names) == 2 else "; no two curves cross."
                )
        else:
            # This round's swaps first: the tab compares it with the ticked past rounds.
            # Ten ticked rounds gave 33 sentences, cut off with the caveat (trial 20).
            ordered = sorted(swaps, key=lambda swap: names[0] not in (swap.first, swap.second))
            shown, more = ordered[:SWAPS_NAMED], len(ordered) - SWAPS_NAMED
            text = (
                "<b>F1 order swaps</b> (★ on the F1 chart): "
                + "; ".join(
                    f"{formatting_html(swap.better_below)} is ahead below a prevalence of "
                    f"{pct(swap.prevalence)}, {formatting_html(swap.better_above)} above it "
                    f"(both F1 {pct(swap.value)} there"
                    + (", so poor that the order hardly matters" if swap.value < 0.1 else "")
                    + ")"
                    for swap in shown
                )
                + (f"; and {more} more among the ticked rounds (★)." if more > 0 else ".")
            )
        # The curves are estimates: a lead told a manager the trial classifier lost at
        # every prevalence on one shared sample, where the truth had it ahead (trial 15).
        if len(names) >= 2:
            text += NOISE_CAVEAT
        self.swaps_label.setText(text)

    def _show_calibrated(self, points: list[OperatingPoint], reference: float) -> None:
        reference_text = formatting.percent(reference)
        self.calibrated_model.set_reference_text(reference_text)
        # Short: a group box is at least as wide as its title.
        self.calibrated_box.setTitle(
            f"Each round at its own prevalence and at the reference prevalence, {reference_text}"
        )
        state = self._session.state
        own_precision = {}
        try:
            own_precision[CURRENT_NAME] = point_estimates(
                state.evaluate.matrix, state.evaluate.population.effective_k
            ).precision
        except InputError:
            pass
        for past in state.rounds:
            # A round without labels in one stratum has no precision of its own (its P3 point
            # is refused too); the others are still shown.
            with contextlib.suppress(InputError):
                own_precision[round_label(past)] = point_estimates(past.matrix, past.k).precision
        rows = []
        for point in points:
            metrics = calibrated_metrics(point.tpr, point.fpr, reference)
            rows.append(
                TableRow(
                    cells=(
                        point.name,
                        formatting.percent(point.population_prevalence),
                        formatting.percent(own_precision.get(point.name)),
                        formatting.percent(metrics.precision),
                        _band_words(point, reference),
                        formatting.percent(metrics.recall),
                        formatting.percent(metrics.f1),
                        formatting.percent(metrics.precision_gain),
                        formatting.percent(metrics.recall_gain),
                    ),
                    bold=point.name == CURRENT_NAME,
                    values=(point.name, metrics),
                )
            )
        self.calibrated_model.set_rows(rows)
        self._fit_table()

    # --- scored sample -------------------------------------------------------------------

    def _ask_scored_sample(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Import scored sample",
            "",
            "Scored samples (*.csv *.xlsx *.xlsm);;All files (*)",
        )
        if path:
            self.import_scored_sample(path)

    def import_scored_sample(self, path: str | os.PathLike) -> None:
        """Use the scored sample at ``path`` (File > Import scored sample…); undoable.

        The path is stored in the session; the file is read in the background.
        """
        path = os.fspath(path)
        if path == self._session.get("prevalence.scored_sample_path"):
            self._load_scored_sample()
            return
        # Read first; the session (and its undo history) takes the path only once the
        # file has been read (see _on_scored_loaded).
        self._importing = path
        settings = self._session.get("prevalence")
        eta_min, eta_max = settings.eta_min, settings.eta_max
        self._reading_key = (path, eta_min, eta_max)
        self.scored_label.setText(f"Reading {formatting_html(os.path.basename(path))}…")
        self.runner.start(
            lambda control: load_scored_curves(path, eta_min, eta_max, control), own_thread=True
        )

    def _load_scored_sample(self) -> None:
        self._importing = None
        settings = self._session.get("prevalence")
        path = settings.scored_sample_path
        if self.scored is not None and self._scored_key == (
            path,
            settings.eta_min,
            settings.eta_max,
        ):
            return  # just read for this path and range (an import the session took)
        if not path:
            self.runner.cancel()
            self.scored = None
            self._clear_scored()
            self.scored_label.setText(NO_SCORED_SAMPLE)
            return
        self.scored_label.setText(f"Reading {formatting_html(os.path.basename(path))}…")
        eta_min, eta_max = settings.eta_min, settings.eta_max
        self._reading_key = (path, eta_min, eta_max)
        self.runner.start(
            lambda control: load_scored_curves(path, eta_min, eta_max, control), own_thread=True
        )

    def _on_scored_loaded(self, result: ScoredResult) -> None:
        self.scored = result
        self._scored_key = self._reading_key
        self._show_scored(result)
        self.status_message.emit("")
        if self._importing is not None and self._importing == result.path:
            self._importing = None
            self._session.set_value(
                "prevalence.scored_sample_path",
                result.path,
                text=f"Import scored sample {os.path.basename(result.path)}",
            )

    def _on_scored_failed(self, message: str) -> None:
        if self._importing is not None:
            # The picked file could not be read: the sample shown before stays.
            self._importing = None
            self.status_message.emit(f"Scored sample not imported: {message}")
            if self.scored is not None:
                self._show_scored(self.scored)
            else:
                self.scored_label.setText(
                    f"<span style='color:#a00'>{formatting_html(message)}</span>"
                )
            return
        self.scored = None
        self._scored_key = None
        self._clear_scored()
        self.scored_label.setText(f"<span style='color:#a00'>{formatting_html(message)}</span>")
        self.status_message.emit(f"Scored sample: {message}")

    def _clear_scored(self) -> None:
        for item in (self.pr_line, self.pr_calibrated_line, self.area_line):
            item.setData([], [])
        self.area_plot.set_marker_x(self.area_sample_marker, None)
        self.scored_label.setToolTip("")
        # Nothing to show: the charts give their room to the others until a file loads.
        self.pr_plot.hide()
        self.area_plot.hide()

    def _show_range(self) -> None:
        """Keep the prevalence axes on the chosen range even before any data arrive."""
        settings = self._session.get("prevalence")
        low, high = np.log10(settings.eta_min), np.log10(settings.eta_max)
        for plot in (self.p3_plot, self.f1_plot, self.area_plot):
            plot.setXRange(low, high, padding=0.02)

    def _show_scored(self, result: ScoredResult) -> None:
        curves = result.curves
        reference = self._session.get("prevalence.reference_prevalence")
        precision, recall, _ = curves.pr_curve()
        self.pr_line.setData(recall, precision)
        calibrated, recall_c, _ = curves.calibrated_pr_curve(reference)
        self.pr_calibrated_line.setData(recall_c, calibrated)
        self.pr_plot.show()
        self.area_plot.show()
        self.area_line.setData(result.prevalence, result.average_precision)
        self.area_plot.set_marker_x(self.area_sample_marker, curves.sample_prevalence)
        self.area_plot.setXRange(
            np.log10(result.prevalence[0]), np.log10(result.prevalence[-1]), padding=0.02
        )
        self.scored_label.setText(
            f"<b>{formatting_html(os.path.basename(result.path))}</b>: "
            f"{formatting.thousands(curves.n_items)} items, "
            f"{formatting.thousands(curves.positive_items)} labeled positive "
            f"({'weighted share' if result.weighted else 'share'} "
            f"{pct(curves.sample_prevalence)}).<br>"
            f"Average precision {pct(curves.average_precision)}; at the reference prevalence "
            f"{pct(reference)}: {pct(curves.calibrated_average_precision(reference))}."
            + (
                ""
                if result.weighted
                else "<br><span style='color:#8a5a00'>Note: "
                f"{formatting_html(UNWEIGHTED_NOTE[:1].upper() + UNWEIGHTED_NOTE[1:])}.</span>"
            )
        )
        # The other two areas are for specialists (and kept short on a laptop screen).
        self.scored_label.setToolTip(
            "Average precision: the area under the precision–recall curve as a step sum "
            "(scikit-learn's definition).\n"
            f"Trapezoid area under the PR points (AUC-PR): "
            f"{formatting.percent(curves.auc_pr_trapezoid)}; it joins the points with "
            "straight lines and comes out higher (Davis and Goadrich 2006).\n"
            f"Area under the ROC curve (AUC-ROC): {formatting.percent(curves.auc_roc)}, the "
            "chance that a random actual positive scores above a random actual negative."
        )

    # --- interface with the main window --------------------------------------------------

    def grids(self) -> list:
        """No confusion-matrix grid on this tab."""
        return []


def formatting_html(text: str) -> str:
    """Escape ``<``, ``>`` and ``&`` for a rich-text label."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
