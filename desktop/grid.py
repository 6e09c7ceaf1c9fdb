"""Spreadsheet-style confusion-matrix grid.

:class:`ConfusionGridModel` is a thin ``QAbstractTableModel`` over a
:class:`core.confusion.ConfusionMatrix` that lives in the session at a dotted path
(``"evaluate.matrix"``). Typing parses like a spreadsheet (``39,800``), a refused entry keeps
the old value and marks the cell with the reason (tooltip and colour), every accepted edit
and every paste is one undo step. :class:`ConfusionGridView` adds the keyboard habits of
Excel and LibreOffice: Enter moves down, Tab moves right, Ctrl+C copies tab-separated text,
Ctrl+V pastes a block (with or without headers, thousands separators allowed).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemDelegate,
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.confusion import ConfusionMatrix, point_estimates
from core.errors import InputError
from desktop import formatting
from desktop.session_model import SessionModel
from desktop.tab_support import CellRefusals

#: (row, column) of each editable cell -> matrix field.
CELL_FIELDS = {(0, 0): "tp", (0, 1): "fp", (1, 0): "fn", (1, 1): "tn"}
CELL_MEANING = {
    "tp": "TP (n11): predicted positive, labeled positive by the editors",
    "fp": "FP (n01): predicted positive, labeled negative",
    "fn": "FN (n10): predicted negative, labeled positive (a miss)",
    "tn": "TN (n00): predicted negative, labeled negative",
}
ROW_HEADERS = ("Predicted +", "Predicted −", "Total")
COLUMN_HEADERS = ("Actual +", "Actual −", "Total")
TOTAL_BRUSH = QBrush(QColor(238, 238, 238))


class ConfusionGridModel(CellRefusals, QAbstractTableModel):
    """2x2 counts plus row and column totals, bound to ``session`` at ``path``.

    Signals
    -------
    refused(str)
        A readable reason for a refused entry or paste (for the status bar).
    """

    refused = Signal(str)

    def __init__(self, session: SessionModel, path: str, parent=None):
        super().__init__(parent)
        self._session = session
        self._path = path
        session.changed.connect(self._on_session_changed)

    # --- reading ---------------------------------------------------------------------

    @property
    def matrix(self) -> ConfusionMatrix:
        return self._session.get(self._path)

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else 3

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else 3

    def _value(self, row: int, column: int) -> int:
        m = self.matrix
        cells = ((m.tp, m.fp, m.n_pos), (m.fn, m.tn, m.n_neg), (m.tp + m.fn, m.fp + m.tn, m.total))
        return cells[row][column]

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        cell = (index.row(), index.column())
        field = CELL_FIELDS.get(cell)
        if role == Qt.ItemDataRole.DisplayRole:
            return formatting.thousands(self._value(*cell))
        if role == Qt.ItemDataRole.EditRole:
            return str(self._value(*cell))
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        refusal = self.refusal_data(cell, role)
        if refusal is not None:
            return refusal
        if role == Qt.ItemDataRole.BackgroundRole:
            return TOTAL_BRUSH if field is None else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return CELL_MEANING.get(field, "Total (computed)")
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        headers = COLUMN_HEADERS if orientation == Qt.Orientation.Horizontal else ROW_HEADERS
        return headers[section]

    def flags(self, index):
        base = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if (index.row(), index.column()) in CELL_FIELDS:
            return base | Qt.ItemFlag.ItemIsEditable
        return base

    # --- writing ---------------------------------------------------------------------

    def setData(self, index, value, role=Qt.ItemDataRole.EditRole) -> bool:
        cell = (index.row(), index.column())
        field = CELL_FIELDS.get(cell)
        if role != Qt.ItemDataRole.EditRole or field is None:
            return False
        try:
            number = formatting.parse_count(str(value))
        except ValueError as exc:
            self._refuse(cell, f"{field.upper()}: {exc}")
            return False
        message = self._session.set_value(f"{self._path}.{field}", number)
        if message:
            self._refuse(cell, message)
            return False
        self._clear_error(cell)
        return True

    def paste_text(self, text: str, row: int = 0, column: int = 0) -> bool:
        """Paste a tab-separated block at ``(row, column)`` as one undo step.

        Header rows/columns (text such as ``Actual +``) are skipped; a block of two or more
        rows and columns always lands on the 2x2 counts from the top-left, so a whole matrix
        copied from Excel (with totals or not) pastes as expected.
        """
        try:
            block = parse_block(text)
        except ValueError as exc:
            self._refuse((row, column), str(exc))
            return False
        height, width = len(block), max(len(values) for values in block)
        if height > 3 or width > 3:
            # More than the counts and their totals: not a confusion matrix; taking its
            # corner without a word would hide that the wrong range was copied.
            self._refuse(
                (row, column),
                f"the pasted block is {height:,} rows by {width:,} columns; paste the four "
                "counts (2 by 2, or 3 by 3 with totals)",
            )
            return False
        if len(block) >= 2 and len(block[0]) >= 2:
            row, column = 0, 0
        whole_matrix = len(block) >= 2 and len(block[0]) >= 2
        changes = []
        left_out = 0
        for r, values in enumerate(block):
            for c, number in enumerate(values):
                field = CELL_FIELDS.get((row + r, column + c))
                if field is not None:
                    changes.append((f"{self._path}.{field}", number))
                else:
                    left_out += 1
        if not changes:
            self.refused.emit("nothing to paste there: select a count cell (not a total)")
            return False
        message = self._session.set_values(changes, text="Paste counts")
        if message:
            self._refuse((row, column), message)
            return False
        self._clear_errors()
        if left_out and not whole_matrix:
            # A column 1, 2, 3 pasted on TP lost the 3 to the totals row without a word
            # (fuzz 17); a whole matrix's totals are left out by design.
            self.refused.emit(
                f"pasted {len(changes)} of {len(changes) + left_out} values: "
                f"{left_out} fell on a total or outside the counts and were left out"
            )
        return True

    def copy_text(self, cells: list[tuple[int, int]] | None = None) -> str:
        """Tab-separated text: the selected cells, or the whole grid with headers."""
        if not cells:
            lines = ["\t" + "\t".join(COLUMN_HEADERS)]
            for r in range(3):
                lines.append(
                    "\t".join([ROW_HEADERS[r]] + [str(self._value(r, c)) for c in range(3)])
                )
            return "\n".join(lines)
        rows = sorted({r for r, _ in cells})
        columns = sorted({c for _, c in cells})
        return "\n".join(
            "\t".join(str(self._value(r, c)) if (r, c) in cells else "" for c in columns)
            for r in rows
        )

    def _on_session_changed(self, path: str) -> None:
        if path == "" or self._path.startswith(path):
            # Another workbook or round replaced the counts: old refusals no longer apply.
            self._clear_errors()
        if path == "" or path.startswith(self._path) or self._path.startswith(path):
            self.dataChanged.emit(self.index(0, 0), self.index(2, 2))


#: The refusal's advice for an empty cell inside a pasted block.
EMPTY_CELL_ADVICE = "type 0 for a zero count, or copy a block of counts without gaps"


def parse_block(text: str) -> list[list[int]]:
    """Numbers of a pasted block; header rows and columns (non-numeric) are dropped.

    Every count keeps its place: an empty cell inside the block is refused, never skipped
    (skipping slid the counts after it into the wrong cells: "45, empty" over "3, 200"
    gave FN 200; fuzz 19), and so is a row or column of empty cells (zeros Excel hides),
    which a paste used to drop, leaving the cells under it as they were (review 19). Only
    blank lines around the block are not part of it. A first row of 1 and 0 is a row of
    labels, not counts: refused too (they pasted as TP 1, FP 0).

    Raises ``ValueError`` naming the first cell that is neither a header nor a count, or
    the first empty cell inside the block (row and column as pasted).
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    first_row = 0
    # A line without a tab or any text is not a row (the final line end, blank lines
    # around the block); a line of tabs is a row of empty cells.
    while lines and "\t" not in lines[0] and not lines[0].strip():
        lines.pop(0)
        first_row += 1
    while lines and "\t" not in lines[-1] and not lines[-1].strip():
        lines.pop()
    rows = [[cell.strip() for cell in line.split("\t")] for line in lines]
    if not any(any(row) for row in rows):
        raise ValueError("the clipboard holds no numbers")

    def looks_like_number(cell: str) -> bool:
        cleaned = cell.replace(",", "").replace(" ", "").replace("\u00a0", "")
        try:
            float(cleaned)
        except ValueError:
            return False
        return True

    # A header row/column holds only text; a bad count (-3, 2.5) still "looks like a number"
    # and must be refused, not skipped. An empty corner cell belongs to the headers.
    if any(rows[0]) and not any(looks_like_number(cell) for cell in rows[0]):
        rows = rows[1:]
        first_row += 1
    first_column = 0
    # A first column of empty cells is zeros Excel hides (TP and FN), not headers: a
    # header column names at least one row.
    filled = [row for row in rows if any(row)]
    if (
        filled
        and any(row[0] for row in filled)
        and all(not looks_like_number(row[0]) for row in filled)
    ):
        rows = [row[1:] for row in rows]
        first_column = 1
    if len(rows) > 2 and sorted(cell for cell in rows[0] if looks_like_number(cell)) == [
        "0",
        "1",
    ]:
        raise ValueError(
            f"pasted row {first_row + 1} holds 1 and 0, labels rather than counts: copy "
            "only the four counts, the predicted-positive row and the actually-positive "
            "column first"
        )
    width = max((len(row) for row in rows), default=0)
    block = []
    for r, row in enumerate(rows):
        where = f"pasted row {first_row + r + 1}"
        if not any(row):
            raise ValueError(f"{where} is empty inside the block; {EMPTY_CELL_ADVICE}")
        values = []
        # A row shorter than the block ends in empty cells: they are inside it too.
        for c, cell in enumerate(row + [""] * (width - len(row))):
            if cell == "":
                raise ValueError(
                    f"{where}, column {first_column + c + 1} is empty; {EMPTY_CELL_ADVICE}"
                )
            try:
                values.append(formatting.parse_count(cell))
            except ValueError as exc:
                raise ValueError(f"{where}, column {first_column + c + 1}: {exc}") from None
        block.append(values)
    if not block:
        raise ValueError("the clipboard holds no numbers")
    return block


class ConfusionGridView(QTableView):
    """Keyboard habits of a spreadsheet on a :class:`ConfusionGridModel`."""

    def __init__(self, model: ConfusionGridModel, parent=None):
        super().__init__(parent)
        self.setModel(model)
        self.setEditTriggers(
            QAbstractItemView.EditTrigger.AnyKeyPressed
            | QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        self.setSelectionMode(QAbstractItemView.SelectionMode.ContiguousSelection)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.setTabKeyNavigation(True)
        self.setCurrentIndex(model.index(0, 0))
        # Every column at least as wide as its header, so "Actual +" is never cut to
        # "ctual +" when the tab is narrow.
        header = self.horizontalHeader()
        widest = max(header.fontMetrics().horizontalAdvance(text) for text in COLUMN_HEADERS)
        header.setMinimumSectionSize(widest + 16)
        self.setMinimumSize(300, 110)
        self.setMaximumHeight(130)

    def grid_model(self) -> ConfusionGridModel:
        model = self.model()
        if not isinstance(model, ConfusionGridModel):
            raise TypeError(f"the grid shows a {type(model).__name__}, not a ConfusionGridModel")
        return model

    def keyPressEvent(self, event) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_selection()
            return
        if event.matches(QKeySequence.StandardKey.Paste):
            self.paste_clipboard()
            return
        if (
            event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and self.state() != QAbstractItemView.State.EditingState
        ):
            self._move(1, 0)
            return
        super().keyPressEvent(event)

    def closeEditor(self, editor, hint) -> None:
        # Enter in a cell editor commits and moves down, as in Excel and LibreOffice.
        if hint == QAbstractItemDelegate.EndEditHint.SubmitModelCache:
            super().closeEditor(editor, QAbstractItemDelegate.EndEditHint.NoHint)
            self._move(1, 0)
            return
        super().closeEditor(editor, hint)

    def _move(self, rows: int, columns: int) -> None:
        current = self.currentIndex()
        row = min(max(current.row() + rows, 0), 1)
        column = min(max(current.column() + columns, 0), 1)
        self.setCurrentIndex(self.model().index(row, column))

    def copy_selection(self) -> str:
        cells = [(i.row(), i.column()) for i in self.selectedIndexes()]
        text = self.grid_model().copy_text(cells if len(cells) > 1 else None)
        QGuiApplication.clipboard().setText(text)
        return text

    def paste_clipboard(self) -> bool:
        current = self.currentIndex()
        row, column = (current.row(), current.column()) if current.isValid() else (0, 0)
        return self.grid_model().paste_text(QGuiApplication.clipboard().text(), row, column)


class ConfusionGrid(QWidget):
    """Grid plus a live readout of the estimates under it (under, so that the grid has
    the column's whole width and its headers are never cut).

    ``k_source`` returns the ``k`` to use for recall (``None`` for a plain random sample,
    where ``k = n1/n0``); it is asked on every refresh so it follows the population inputs.
    """

    def __init__(
        self,
        session: SessionModel,
        path: str,
        k_source: Callable[[], float | None] = lambda: None,
        parent=None,
    ):
        super().__init__(parent)
        self.model = ConfusionGridModel(session, path, self)
        self.view = ConfusionGridView(self.model, self)
        self.readout = QLabel(self)
        self.readout.setTextFormat(Qt.TextFormat.RichText)
        self.readout.setWordWrap(True)
        self._k_source = k_source
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view)
        layout.addWidget(self.readout)
        self.model.dataChanged.connect(self.refresh_readout)
        self.refresh_readout()

    def refresh_readout(self, *_) -> None:
        matrix = self.model.matrix
        try:
            estimates = point_estimates(matrix, self._k_source())
        except InputError as exc:
            self.readout.setText(f"<span style='color:#a00'>{exc}</span>")
            return
        recall = estimates.recall
        recall_text = formatting.percent(recall if not math.isnan(recall) else None)
        together = formatting.keep_together
        self.readout.setText(
            f"<b>Precision</b>&nbsp;{together(formatting.percent(estimates.precision))} · "
            f"<b>Recall</b>&nbsp;{together(recall_text)} · "
            f"<b>F1</b>&nbsp;{together(formatting.percent(estimates.f1))}<br>"
            f"<span style='color:#555'>labeled {formatting.thousands(matrix.total)}: "
            f"{formatting.thousands(matrix.n_pos)} flagged, "
            f"{formatting.thousands(matrix.n_neg)} unflagged</span>"
        )
