"""The Rounds panel: the past rounds of the open workbook or session, one of them the
previous round the Plan tab builds on (spec 4.3)."""

from __future__ import annotations

import math

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.confusion import point_estimates
from core.errors import InputError
from desktop import formatting
from desktop.session_model import SessionModel
from desktop.widgets import affects


def round_label(item) -> str:
    """How a past round is named in the panel and in ``previous_round``."""
    return item.round or f"{item.sheet} row {item.row}"


# --- Rounds panel -----------------------------------------------------------------------------


class RoundsTableModel(QAbstractTableModel):
    """Read-only table of the session's past rounds; the previous round is shown in bold."""

    COLUMNS = (
        "Round",
        "Date",
        "Classifier",
        "k",
        "TP",
        "FP",
        "FN",
        "TN",
        "Precision",
        "Recall",
        "Notes",
    )
    TOOLTIPS = (
        "Name of the round in the workbook",
        "When the round was labeled",
        "Which classifier the round evaluated",
        "Imbalance ratio k = N1/N0 of the population at the time",
        "True positives (n11): predicted +, labeled +",
        "False positives (n01): predicted +, labeled −",
        "False negatives (n10): predicted −, labeled +",
        "True negatives (n00): predicted −, labeled −",
        "Precision estimate TP/(TP + FP)",
        "Recall estimate 1/(1 + π0/(k·π1)) (stratified form, spec 1.1)",
        "Notes kept with the round in the workbook",
    )

    def __init__(self, session: SessionModel, parent=None):
        super().__init__(parent)
        self._session = session
        self._estimates: list = []
        self._recompute()
        session.changed.connect(self._on_session_changed)

    def rounds(self) -> tuple:
        return self._session.state.rounds

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(self.rounds())

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.TOOLTIPS[section]
        return None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        item = self.rounds()[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text(item, index.row(), column)
        if role == Qt.ItemDataRole.TextAlignmentRole and 3 <= column <= 9:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.FontRole and round_label(item) == self._session.get(
            "previous_round"
        ):
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = self.TOOLTIPS[column]
            if item.notes:
                tip += f"\nNotes: {item.notes}"
            return tip + f"\n{item.sheet}, row {item.row}"
        return None

    def _text(self, item, row: int, column: int) -> str:
        if column == 0:
            return round_label(item)
        if column == 1:
            return item.date.isoformat() if item.date else ""
        if column == 2:
            return item.classifier or ""
        if column == 3:
            return formatting.ratio(item.k)
        if column == 10:
            return item.notes or ""
        if 4 <= column <= 7:
            return formatting.thousands(getattr(item, ("tp", "fp", "fn", "tn")[column - 4]))
        estimate = self._estimates[row]
        if estimate is None:
            return "–"
        value = estimate.precision if column == 8 else estimate.recall
        return formatting.percent(None if math.isnan(value) else value)

    def _recompute(self) -> None:
        estimates = []
        for item in self.rounds():
            try:
                estimates.append(point_estimates(item.matrix, item.k))
            except InputError:
                estimates.append(None)
        self._estimates = estimates

    def _on_session_changed(self, changed: str) -> None:
        if affects(changed, "rounds"):
            self.beginResetModel()
            self._recompute()
            self.endResetModel()
        elif affects(changed, "previous_round") and self.rowCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, 0))


class RoundsPanel(QWidget):
    """Table of the workbook's past rounds and the button that makes one the previous round.

    Signals
    -------
    chosen(int)
        Row of the round the user chose as the previous round.
    """

    chosen = Signal(int)

    def __init__(self, session: SessionModel, parent=None):
        super().__init__(parent)
        self._session = session
        self._problems: list[str] = []
        self.model = RoundsTableModel(session, self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.setToolTip(
            "Past rounds of the open workbook. Double-click a round (or select it and press "
            "'Use as previous round') to plan the next round from it."
        )
        self.source = QLabel(self)
        self.source.setToolTip("The workbook these rounds were read from.")
        self.previous = QLabel(self)
        self.previous.setToolTip("The round the Plan and Evaluate tabs compare against.")
        self.use_button = QPushButton("Use as previous round", self)
        self.use_button.setToolTip(
            "Make the selected round the previous round: its counts fill the Plan tab's "
            "grid and the plan is based on them."
        )
        self.problems_button = QPushButton("Rows not loaded…", self)
        self.problems_button.setToolTip("Rows and sheets of the workbook that were not used.")
        self.problems_button.hide()

        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.source, 1)
        bar.addWidget(self.previous)
        bar.addWidget(self.problems_button)
        bar.addWidget(self.use_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.table, 1)

        self.use_button.clicked.connect(self._use_selected)
        self.table.doubleClicked.connect(lambda index: self.chosen.emit(index.row()))
        self.problems_button.clicked.connect(self.show_problems)
        self.table.selectionModel().selectionChanged.connect(self._update_button)
        session.changed.connect(self._on_session_changed)
        self._update_button()
        self._refresh_previous()

    def set_source(self, text: str, problems: list[str]) -> None:
        """Say where the rounds came from and keep the rows that could not be used."""
        self._problems = list(problems)
        count = len(self._session.state.rounds)
        self.source.setText(f"{text}: {count} round{'s' if count != 1 else ''}")
        self.problems_button.setVisible(bool(problems))
        self.problems_button.setText(f"{len(problems)} not loaded…")

    @property
    def problems(self) -> list[str]:
        return list(self._problems)

    def show_problems(self) -> None:
        dialog = QDialog(self)
        dialog.setWindowTitle("Rows not loaded")
        text = QPlainTextEdit("\n".join(self._problems), dialog)
        text.setReadOnly(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, dialog)
        buttons.rejected.connect(dialog.reject)
        layout = QVBoxLayout(dialog)
        layout.addWidget(text)
        layout.addWidget(buttons)
        dialog.resize(640, 320)
        dialog.open()

    def selected_row(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        return rows[0].row() if rows else None

    def copy_text(self) -> str:
        """Selected rows (or all) as tab-separated text with the header."""
        rows = [self.selected_row()] if self.selected_row() is not None else None
        model = self.model
        indices = rows if rows is not None else range(model.rowCount())
        lines = ["\t".join(model.COLUMNS)]
        for row in indices:
            lines.append(
                "\t".join(
                    str(model.data(model.index(row, c)) or "") for c in range(model.columnCount())
                )
            )
        return "\n".join(lines)

    def _use_selected(self) -> None:
        row = self.selected_row()
        if row is not None:
            self.chosen.emit(row)

    def _update_button(self, *_args) -> None:
        self.use_button.setEnabled(self.selected_row() is not None)

    def _on_session_changed(self, changed: str) -> None:
        if affects(changed, "previous_round") or affects(changed, "rounds"):
            self._refresh_previous()

    def _refresh_previous(self) -> None:
        name = self._session.get("previous_round")
        self.previous.setText(f"Previous round: <b>{name}</b>" if name else "No previous round")


# --- the window -------------------------------------------------------------------------------
