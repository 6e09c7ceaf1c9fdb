"""Ensemble tab: several classifiers' precisions from one labeling budget (methods §13).

The user types the parent's and each child's predicted-positive set size and the overlap
with the parent (an editable, undoable table over ``session.ensemble``), the margin and
confidence each precision needs, and gets the labels every classifier needs, the expected
saving from recycling the parent's sample with its spread (simulated by
:func:`core.ensemble.plan_recycled_labels` in the background), and a bar chart of labels
with and without recycling.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.ensemble import (
    MAX_TRIALS,
    ChildSet,
    EnsemblePlan,
    PrecisionSampleSize,
    plan_recycled_labels,
    precision_sample_size,
)
from core.errors import InputError
from core.progress import TaskControl
from core.session import EnsembleChild, EnsembleInputs
from desktop import formatting
from desktop.plotting import PALETTE, PlotPanel, use_count_axis
from desktop.session_model import SessionModel
from desktop.tab_support import CellRefusals, RowsTableModel, SessionTab, TableRow
from desktop.widgets import (
    ChoiceCombo,
    ConfidenceBox,
    CountSpin,
    PercentSpin,
    affects,
    keep_wrapped_height,
)

PARENT_BRUSH = QBrush(QColor(238, 244, 252))
#: Legend entries of the bar chart (short enough for the legend never to cut them).
BARS_ALONE = "Without reuse"
BARS_REUSED = "With reuse (and 95 % range)"

NAME, SIZE, OVERLAP = range(3)
SET_HEADERS = ("Classifier", "Predicted positive", "Overlap with parent")
SET_HEADER_TIPS = (
    "Name of the classifier; the first row is the parent (typically the ensemble) whose "
    "labeled sample the children reuse",
    "How many items the classifier flags (predicts positive): the size of its set |A|",
    "How many of those items the parent also flags, |A_P ∩ A_C|",
)


# --- the editable parent/children table --------------------------------------------------


class EnsembleSetsModel(CellRefusals, QAbstractTableModel):
    """Parent row plus one row per child, over ``session.ensemble`` (habit 4).

    Every accepted edit goes through :meth:`SessionModel.set_value` (one undo step); a
    refused entry keeps the old value and marks the cell with the reason.

    Signals
    -------
    refused(str)
        The reason an entry was refused (for the tab's message line).
    """

    refused = Signal(str)

    def __init__(self, session: SessionModel, parent=None):
        super().__init__(parent)
        self._session = session
        self._row_count = 1 + len(self._inputs.children)
        session.changed.connect(self._on_session_changed)

    @property
    def _inputs(self) -> EnsembleInputs:
        return self._session.get("ensemble")

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else self._row_count

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(SET_HEADERS)

    def _raw(self, row: int, column: int):
        inputs = self._inputs
        if row == 0:
            return (inputs.parent_name, inputs.parent_size, None)[column]
        child = inputs.children[row - 1]
        return (child.name, child.size, child.overlap)[column]

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or index.row() >= 1 + len(self._inputs.children):
            return None
        row, column = index.row(), index.column()
        value = self._raw(row, column)
        cell = (row, column)
        if role == Qt.ItemDataRole.DisplayRole:
            if column == NAME:
                return f"{value} (parent)" if row == 0 else value
            return "—" if value is None else formatting.thousands(value)
        if role == Qt.ItemDataRole.EditRole:
            return "" if value is None else str(value)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            align = Qt.AlignmentFlag.AlignLeft if column == NAME else Qt.AlignmentFlag.AlignRight
            return int(align | Qt.AlignmentFlag.AlignVCenter)
        refusal = self.refusal_data(cell, role)
        if refusal is not None:
            return refusal
        if role == Qt.ItemDataRole.BackgroundRole:
            return PARENT_BRUSH if row == 0 else None
        if role == Qt.ItemDataRole.FontRole and row == 0:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ToolTipRole:
            if row == 0 and column == OVERLAP:
                return "The parent overlaps itself completely"
            return SET_HEADER_TIPS[column]
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal:
            if role == Qt.ItemDataRole.DisplayRole:
                return SET_HEADERS[section]
            if role == Qt.ItemDataRole.ToolTipRole:
                return SET_HEADER_TIPS[section]
        elif role == Qt.ItemDataRole.DisplayRole:
            return "Parent" if section == 0 else f"Child {section}"
        elif role == Qt.ItemDataRole.ToolTipRole:
            return (
                "The parent: the set whose labels are reused"
                if section == 0
                else "A child: a classifier that reuses the parent's labels"
            )
        return None

    def flags(self, index):
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if index.row() == 0 and index.column() == OVERLAP:
            return base
        return base | Qt.ItemFlag.ItemIsEditable

    def setData(self, index, value, role=Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        row, column = index.row(), index.column()
        if row == 0 and column == OVERLAP:
            return False
        text = str(value).strip()
        new_value: str | int
        if column == NAME:
            if not text:
                self._refuse((row, column), "a classifier needs a name")
                return False
            new_value = text
        else:
            try:
                new_value = formatting.parse_count(text)
            except ValueError as exc:
                self._refuse((row, column), str(exc))
                return False
        if self._raw(row, column) == new_value:
            self._clear_error((row, column))
            return True
        if row == 0:
            path = "ensemble.parent_name" if column == NAME else "ensemble.parent_size"
            message = self._session.set_value(path, new_value, text=f"Edit parent {_what(column)}")
        else:
            children = list(self._inputs.children)
            field = ("name", "size", "overlap")[column]
            try:
                children[row - 1] = dataclasses.replace(children[row - 1], **{field: new_value})
            except InputError as exc:
                message = str(exc)
            else:
                message = self._session.set_value(
                    "ensemble.children",
                    tuple(children),
                    text=f"Edit {children[row - 1].name} {_what(column)}",
                )
        if message:
            self._refuse((row, column), message)
            return False
        self._clear_error((row, column))
        return True

    def add_child(self) -> None:
        """Append a child (undoable) with a plausible size: half the parent's, half shared."""
        inputs = self._inputs
        names = {child.name for child in inputs.children} | {inputs.parent_name}
        number = len(inputs.children) + 1
        while f"child {number}" in names:
            number += 1
        size = max(1, inputs.parent_size // 2)
        child = EnsembleChild(name=f"child {number}", size=size, overlap=size // 2)
        self._session.set_value(
            "ensemble.children", (*inputs.children, child), text=f"Add {child.name}"
        )

    def remove_children(self, rows: list[int]) -> None:
        """Remove the children at table ``rows`` (the parent row is ignored), undoable."""
        indices = {row - 1 for row in rows if row >= 1}
        if not indices:
            return
        children = tuple(child for i, child in enumerate(self._inputs.children) if i not in indices)
        label = "Remove child" if len(indices) == 1 else f"Remove {len(indices)} children"
        message = self._session.set_value("ensemble.children", children, text=label)
        if message:
            self.refused.emit(message)

    def _on_session_changed(self, path: str) -> None:
        if not affects(path, "ensemble"):
            return
        rows = 1 + len(self._inputs.children)
        if rows != self._row_count:
            self.beginResetModel()
            self._row_count = rows
            self._errors.clear()  # the reset repaints every cell anyway
            self.endResetModel()
        else:
            self.dataChanged.emit(self.index(0, 0), self.index(rows - 1, len(SET_HEADERS) - 1))


def _what(column: int) -> str:
    return ("name", "set size", "overlap")[column]


# --- the background simulation -----------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class EnsembleRun:
    """What one simulation produced, with the inputs it was made from.

    Attributes
    ----------
    inputs : EnsembleInputs
        The session's ensemble inputs at the time (names, sizes, overlaps).
    sample_size : PrecisionSampleSize
        Labels one precision needs at the margin and confidence (methods §13); used as both
        ``n_P`` and ``n_C``.
    plan : EnsemblePlan
        Expected reuse and saving per child (methods §13, Lemma 3).
    """

    inputs: EnsembleInputs
    sample_size: PrecisionSampleSize
    plan: EnsemblePlan


def sample_size_for(inputs: EnsembleInputs, confidence: float) -> PrecisionSampleSize:
    """Labels one classifier's precision needs for the tab's margin, confidence and floor."""
    return precision_sample_size(inputs.margin, confidence, precision_floor=inputs.precision_floor)


def simulate_ensemble(
    inputs: EnsembleInputs, confidence: float, control: TaskControl | None = None
) -> EnsembleRun:
    """Run :func:`core.ensemble.plan_recycled_labels` for every child at once (seeded from
    the session), with progress and cancel through ``control``."""
    size = sample_size_for(inputs, confidence)
    if not inputs.children:
        raise InputError("add at least one child classifier")
    plan = plan_recycled_labels(
        inputs.parent_size,
        [ChildSet(size=c.size, overlap=c.overlap, name=c.name) for c in inputs.children],
        n_parent=size.n,
        n_child=size.n,
        mix=inputs.mix,
        trials=inputs.trials,
        rng=inputs.seed,
        control=control,
    )
    return EnsembleRun(inputs=inputs, sample_size=size, plan=plan)


RESULT_HEADERS = (
    "Classifier",
    "Labels\nwithout reuse",
    "Labels\nreused",
    "Labels\nto buy",
    "Saving",
    "Saving,\n95 % range",
    "Overlap as %\nof parent's",
    "Overlap as %\nof its own",
)
RESULT_TIPS = (
    "Classifier (the parent's own sample is labeled in full)",
    "Labels its precision needs on its own, without reusing the parent's (methods §13)",
    "Items of its sample already labeled for the parent, on average over the simulated trials",
    "Labels still to buy when the parent's labels are reused, on average",
    "Average saving, in percent of the labels without reuse",
    "Middle 95 % of the simulated savings (2.5th to 97.5th percentile)",
    "Share of the parent's flagged items that this classifier also flags: the parent "
    "intersection ratio PIR = |A_P ∩ A_C| / |A_P|. The saving is close to the smaller of "
    "the two shares",
    "Share of this classifier's flagged items that the parent also flags: the child "
    "intersection ratio CIR = |A_P ∩ A_C| / |A_C|",
)


def _labels(expected: float) -> str:
    """An expected number of labels (a mean over trials) as the whole labels a lead buys,
    thousands grouped; the column tooltips say it is an average."""
    return f"{round(expected):,}"


def _share(value: float) -> str:
    """A saving or an overlap ratio: one decimal in every row, so the column reads alike."""
    return formatting.percent(value, 1)


def _labels_read_out(value: float) -> str:
    """A bar's height in the hover read-out, in whole labels like the table."""
    return formatting.thousands(value) if float(value).is_integer() else _labels(value)


def result_rows(run: EnsembleRun) -> list[TableRow]:
    """Table rows of a simulation: parent, each child, and the total."""
    n = run.sample_size.n
    rows = [
        TableRow(
            cells=(
                f"{run.inputs.parent_name} (parent)",
                formatting.thousands(n),
                "—",
                formatting.thousands(n),
                "—",
                "—",
                "—",
                "—",
            ),
            tooltip="The parent's sample is labeled in full; the children recycle it",
            values=(run.inputs.parent_name, n, 0.0, float(n), 0.0, None, None, None),
        )
    ]
    for child, saving in zip(run.plan.children, run.plan.savings, strict=True):
        low, high = saving.savings_pct_interval
        rows.append(
            TableRow(
                cells=(
                    child.name,
                    formatting.thousands(saving.n_child),
                    _labels(saving.expected_reused),
                    _labels(saving.expected_new_labels),
                    _share(saving.savings_pct_mean / 100.0),
                    formatting.percent_range(low / 100.0, high / 100.0, 1),
                    _share(saving.pir),
                    _share(saving.cir),
                ),
                values=(
                    child.name,
                    saving.n_child,
                    saving.expected_reused,
                    saving.expected_new_labels,
                    saving.savings_pct_mean,
                    saving.savings_pct_interval,
                    saving.pir,
                    saving.cir,
                ),
            )
        )
    alone = n * (1 + len(run.plan.children))
    with_recycling = n + run.plan.total_new_labels
    rows.append(
        TableRow(
            cells=(
                "Total",
                formatting.thousands(alone),
                _labels(alone - with_recycling),
                _labels(with_recycling),
                _share(1.0 - with_recycling / alone),
                "",
                "",
                "",
            ),
            bold=True,
            tooltip="All classifiers together, the parent's own sample included",
            values=("Total", alone, alone - with_recycling, with_recycling),
        )
    )
    return rows


# --- the tab -----------------------------------------------------------------------------


class EnsembleTab(SessionTab):
    """Parent/children sets in, labels per classifier and the saving out (#4).

    Signals
    -------
    status_message(str)
        A one-line message for the window's status bar (``""`` clears it).
    """

    def __init__(self, session: SessionModel, parent=None):
        super().__init__(session, parent)
        self.run: EnsembleRun | None = None
        self.runner = self.new_runner()
        self._build()
        self.runner.progress.connect(lambda fraction: self.progress.setValue(round(fraction * 100)))
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self.runner.busy.connect(self._on_busy)
        self.runner.cancelled.connect(self._on_cancelled)
        session.changed.connect(self._on_session_changed)
        self.start_simulation()

    # --- layout --------------------------------------------------------------------------

    def _build(self) -> None:
        self.sets_model = EnsembleSetsModel(self._session, self)
        self.sets_view = QTableView()
        self.sets_view.setModel(self.sets_model)
        self.sets_view.setEditTriggers(
            QAbstractItemView.EditTrigger.AnyKeyPressed
            | QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        self.sets_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectItems)
        self.sets_view.setTabKeyNavigation(True)
        header = self.sets_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.sets_view.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.sets_view.setToolTip(
            "Type sizes as in a spreadsheet (41,200 or 41200); Enter or Tab moves on; "
            "every edit can be undone (Edit > Undo)"
        )
        self.sets_model.refused.connect(self._show_refusal)

        self.add_button = QPushButton("Add child")
        self.add_button.setToolTip("Add a child classifier that reuses the parent's labels")
        self.add_button.clicked.connect(self.sets_model.add_child)
        self.remove_button = QPushButton("Remove child")
        self.remove_button.setToolTip("Remove the selected child classifier(s)")
        self.remove_button.clicked.connect(self.remove_selected_children)

        sets_box = QGroupBox("Parent and children: how many items each flags")
        sets_layout = QVBoxLayout(sets_box)
        sets_layout.addWidget(self.sets_view)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        sets_layout.addLayout(buttons)

        session = self._session
        self.margin_spin = PercentSpin(
            session,
            "ensemble.margin",
            minimum=0.1,
            maximum=49.9,
            tooltip="Half-width each classifier's precision interval may have (±), e.g. 3 %",
        )
        self.confidence_box = ConfidenceBox(session)
        self.floor_spin = PercentSpin(
            session,
            "ensemble.precision_floor",
            minimum=50.0,
            maximum=99.0,
            decimals=0,
            step=5,
            tooltip="A precision every classifier is guaranteed to reach (>= 50 %); 50 % "
            "assumes nothing and needs the most labels",
        )
        self.mix_combo = ChoiceCombo(
            session,
            "ensemble.mix",
            [
                (
                    "shuffle",
                    "Shuffle (proportional)",
                    "UniformShuffle: a permutation; a proportional stratified sample, "
                    "slightly tighter",
                ),
                (
                    "sample",
                    "Independent draws (i.i.d.)",
                    "Each position an independent random draw of the child's items, the "
                    "parent's labels taken in order and each used once; needed when a child "
                    "is itself the parent of further children",
                ),
            ],
            tooltip="How the recycled and the extra items are mixed (Algorithm 1, step 4)",
        )
        self.trials_spin = CountSpin(
            session,
            "ensemble.trials",
            minimum=10,
            maximum=MAX_TRIALS,
            tooltip="How many times the recycling is simulated to estimate the saving and "
            "its spread",
        )
        self.trials_spin.setSingleStep(100)
        self.seed_spin = CountSpin(
            session,
            "ensemble.seed",
            tooltip="Seed of the simulation: the same seed gives the same numbers",
            separators=False,
        )
        target_box = QGroupBox("Precision target and simulation")
        form = QFormLayout(target_box)
        form.addRow("Margin (±)", self.margin_spin)
        form.addRow("Confidence", self.confidence_box)
        form.addRow("Precision floor", self.floor_spin)
        form.addRow("Mix", self.mix_combo)
        form.addRow("Trials", self.trials_spin)
        form.addRow("Seed", self.seed_spin)
        self.sample_size_label = keep_wrapped_height(QLabel())
        self.sample_size_label.setTextFormat(Qt.TextFormat.RichText)
        form.addRow(self.sample_size_label)

        left = QWidget()
        # Wide enough that the wrapped sample-size sentence stays two or three lines: laid
        # out narrower (a tab first shown after a resize), it claimed a height that pushed
        # the window past a laptop screen.
        left.setMinimumWidth(400)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(sets_box, 1)
        left_layout.addWidget(target_box, 0)
        self.message_label = QLabel()
        self.message_label.setWordWrap(True)
        self.message_label.setStyleSheet("color: #a00000;")
        left_layout.addWidget(self.message_label)

        self.results_model = RowsTableModel(RESULT_HEADERS, RESULT_TIPS, self)
        self.results_view = QTableView()
        self.results_view.setModel(self.results_model)
        self.results_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        results_header = self.results_view.horizontalHeader()
        results_header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        # The name and the range keep their full text; the other columns share the rest.
        for column in (0, 5):
            results_header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.results_view.verticalHeader().hide()
        self.results_view.verticalHeader().setDefaultSectionSize(24)
        # Parent, three children and the total without a scroll bar.
        self.results_view.setMinimumHeight(6 * 24 + 30)
        self.results_view.setToolTip("Labels each classifier needs, with and without reuse")

        self.status_label = QLabel()
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setToolTip("Progress of the simulation")
        self.progress.setMaximumWidth(220)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setToolTip("Stop the running simulation")
        self.cancel_button.clicked.connect(self.cancel_simulation)
        self.cancel_button.setEnabled(False)
        self.rerun_button = QPushButton("Simulate again")
        self.rerun_button.setToolTip(
            "Run the simulation again (it also runs by itself after every edit)"
        )
        self.rerun_button.clicked.connect(self.start_simulation)
        run_row = QHBoxLayout()
        run_row.addWidget(self.status_label, 1)
        run_row.addWidget(self.progress)
        run_row.addWidget(self.cancel_button)
        run_row.addWidget(self.rerun_button)

        self.plot = PlotPanel(
            "Labels to buy per classifier",
            "Classifier",
            "Labels",
            y_format=_labels_read_out,
            x_format=self._name_at,
        )
        use_count_axis(self.plot, "Labels")
        self.plot.setMouseEnabled(x=False, y=True)
        self._build_bars()

        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.results_view, 1)
        right_layout.addLayout(run_row)
        right_layout.addWidget(self.plot, 3)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([560, 900])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        self.sets_view.setMinimumHeight(150)
        left.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)

    def _build_bars(self) -> None:
        """Bars, error bars and hover points, created once and updated with setOpts/setData."""
        self._names: list[str] = []
        self.bars_alone = pg.BarGraphItem(
            x=[], height=[], width=0.38, brush=pg.mkBrush(PALETTE[5]), pen=pg.mkPen("#444")
        )
        self.bars_recycled = pg.BarGraphItem(
            x=[], height=[], width=0.38, brush=pg.mkBrush(PALETTE[0]), pen=pg.mkPen("#444")
        )
        self.spread_bars = pg.ErrorBarItem(
            x=np.array([]), y=np.array([]), pen=pg.mkPen("#111", width=1.5), beam=0.12
        )
        for item in (self.bars_alone, self.bars_recycled, self.spread_bars):
            self.plot.addItem(item)
        # Under the axis: bars fill the view, and a legend inside it covers the tallest.
        self.plot.legend_below(columns=2)
        self.plot.legend.addItem(self.bars_alone, BARS_ALONE)
        self.plot.legend.addItem(self.bars_recycled, BARS_REUSED)
        # Points on the bar tops carry the hover read-out (it reads PlotDataItems only).
        self.tops_alone = pg.PlotDataItem(
            [],
            [],
            pen=None,
            symbol="o",
            symbolPen=None,
            symbolBrush=(0, 0, 0, 0),
            name=BARS_ALONE,
        )
        self.tops_recycled = pg.PlotDataItem(
            [],
            [],
            pen=None,
            symbol="o",
            symbolPen=None,
            symbolBrush=(0, 0, 0, 0),
            name="With reuse (average)",
        )
        for item in (self.tops_alone, self.tops_recycled):
            self.plot.addItem(item)
            self.plot.legend.removeItem(item)
        self.plot.getAxis("bottom").setLabel("Classifier")

    def _name_at(self, x: float) -> str:
        index = round(x)
        return self._names[index] if 0 <= index < len(self._names) else f"{x:.3g}"

    # --- inputs --------------------------------------------------------------------------

    def remove_selected_children(self) -> None:
        rows = sorted({index.row() for index in self.sets_view.selectedIndexes()})
        current = self.sets_view.currentIndex()
        if not rows and current.isValid():
            rows = [current.row()]
        if rows == [0]:
            self._show_refusal("the parent cannot be removed; select a child row")
            return
        self.sets_model.remove_children(rows)

    def _on_session_changed(self, path: str) -> None:
        if affects(path, "ensemble") or affects(path, "confidence"):
            self.start_simulation()

    def _show_refusal(self, message: str) -> None:
        self.message_label.setText(message)
        self.status_message.emit(message)

    # --- simulation ----------------------------------------------------------------------

    def start_simulation(self) -> None:
        """Show the sample size now and simulate the savings in the background."""
        inputs: EnsembleInputs = self._session.get("ensemble")
        confidence = self._session.get("confidence")
        self.message_label.clear()
        if not inputs.children:
            # A session about the user's own rounds has no ensemble: show nothing stale.
            self.runner.cancel()
            self.run = None
            self.results_model.set_rows([])
            for bars in (self.bars_alone, self.bars_recycled):
                bars.setOpts(x=[], height=[])
            empty = np.array([])
            self.spread_bars.setData(x=empty, y=empty, top=empty, bottom=empty)
            self.tops_alone.setData([], [])
            self.tops_recycled.setData([], [])
            # Nor the names and the finished bar of the last run: an empty chart is hidden.
            self._names = []
            self.plot.getAxis("bottom").setTicks([[], []])
            self.plot.setVisible(False)
            self.progress.setValue(0)
            self.progress.setVisible(False)  # "0%" of nothing to simulate read as stuck
            self.status_label.setText("")
            self.sample_size_label.setText(
                "No child classifiers: add the classifiers that reuse the parent's labels "
                "(Add child) to see the labels each one still needs."
            )
            return
        try:
            size = sample_size_for(inputs, confidence)
        except InputError as exc:
            self.sample_size_label.setText(f"<span style='color:#a00'>{exc}</span>")
            return
        if size.p_used > 0.5:
            assumed = f"precision at least {formatting.percent(size.p_used, 0)}"
        else:
            assumed = "nothing about precision: the worst case, 50 %"
        self.sample_size_label.setText(
            f"Each classifier alone needs <b>{formatting.thousands(size.n)}</b> labels for "
            f"±{formatting.keep_together(formatting.percent(size.margin, 1))} at "
            f"{formatting.keep_together(formatting.level(size.confidence))} confidence "
            f"(assuming {assumed}). These are labels of flagged items, for precision; "
            "recall needs unflagged items labeled too (the Plan tab plans both for one "
            "classifier)."
        )
        self.plot.setVisible(True)
        self.progress.setVisible(True)
        self.progress.setValue(0)
        self.status_label.setText(
            f"Simulating {formatting.thousands(inputs.trials)} trials per child…"
        )
        self.runner.start(lambda control: simulate_ensemble(inputs, confidence, control))

    def cancel_simulation(self) -> None:
        self.runner.cancel()

    def _on_busy(self, busy: bool) -> None:
        self.cancel_button.setEnabled(busy)

    def _on_cancelled(self) -> None:
        if not self.runner.is_running:
            self.status_label.setText("Simulation cancelled; the table shows the last result.")

    def _on_failed(self, message: str) -> None:
        self.status_label.setText("")
        self._show_refusal(message)

    def _on_finished(self, run: EnsembleRun) -> None:
        self.run = run
        self.progress.setValue(100)
        plan = run.plan
        self.status_label.setText(
            f"Simulated {formatting.thousands(plan.trials)} trials per child "
            f"({'shuffle' if plan.mix == 'shuffle' else 'independent draws'} mix)."
        )
        self.results_model.set_rows(result_rows(run))
        self._update_chart(run)
        self.status_message.emit("")

    def _update_chart(self, run: EnsembleRun) -> None:
        n = run.sample_size.n
        self._names = [run.inputs.parent_name] + [child.name for child in run.plan.children]
        x = np.arange(len(self._names), dtype=float)
        alone = np.full(len(self._names), float(n))
        recycled = np.array(
            [float(n)] + [saving.expected_new_labels for saving in run.plan.savings]
        )
        # The saving's 95 % range in percent of n_C, shown as labels still to buy.
        high_saving = np.array([0.0] + [s.savings_pct_interval[1] for s in run.plan.savings])
        low_saving = np.array([0.0] + [s.savings_pct_interval[0] for s in run.plan.savings])
        fewest = alone * (1.0 - high_saving / 100.0)
        most = alone * (1.0 - low_saving / 100.0)
        self.bars_alone.setOpts(x=x - 0.2, height=alone)
        self.bars_recycled.setOpts(x=x + 0.2, height=recycled)
        self.spread_bars.setData(
            x=x[1:] + 0.2,
            y=recycled[1:],
            top=np.maximum(most[1:] - recycled[1:], 0.0),
            bottom=np.maximum(recycled[1:] - fewest[1:], 0.0),
        )
        self.tops_alone.setData(x - 0.2, alone)
        self.tops_recycled.setData(x + 0.2, recycled)
        self.plot.getAxis("bottom").setTicks([list(enumerate(self._names)), []])
        self.plot.setXRange(-0.7, len(self._names) - 0.3, padding=0)
        # Headroom above the bars keeps the legend clear of them.
        self.plot.setYRange(0, n * 1.3, padding=0)

    # --- interface with the main window --------------------------------------------------

    def grids(self) -> list:
        """No confusion-matrix grid on this tab."""
        return []


__all__ = [
    "EnsembleRun",
    "EnsembleSetsModel",
    "EnsembleTab",
    "result_rows",
    "simulate_ensemble",
]
