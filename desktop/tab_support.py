"""Small pieces shared by the Evaluate, Prevalence, Ensemble and History tabs.

:class:`RowsTableModel` is a read-only ``QAbstractTableModel`` over rows that a tab builds
from a core result object; it only formats, it never computes. (Inputs use the bound
widgets of :mod:`desktop.widgets`.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

WARNING_BRUSH = QBrush(QColor(255, 236, 179))


@dataclass(frozen=True, slots=True)
class TableRow:
    """One displayed row: its cells as text, and optional emphasis.

    Attributes
    ----------
    cells : tuple of str
        Display text, one per column.
    tooltip : str
        Shown on every cell of the row (a warning, a note).
    warning : bool
        Tint the row (an approximation is weak, an interval was corrected).
    bold : bool
        A total or heading row.
    values : tuple
        The raw values behind the cells (tests and copy read them).
    """

    cells: tuple[str, ...]
    tooltip: str = ""
    warning: bool = False
    bold: bool = False
    values: tuple = ()


class RowsTableModel(QAbstractTableModel):
    """Read-only table over rows a tab prepared from a core result."""

    def __init__(self, headers: Sequence[str], header_tips: Sequence[str] = (), parent=None):
        super().__init__(parent)
        self._headers = tuple(headers)
        self._header_tips = tuple(header_tips)
        self._rows: list[TableRow] = []

    def set_rows(self, rows: Sequence[TableRow]) -> None:
        if len(rows) == len(self._rows):
            self._rows = list(rows)
            if rows:
                self.dataChanged.emit(
                    self.index(0, 0), self.index(len(rows) - 1, len(self._headers) - 1)
                )
            return
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def rows(self) -> list[TableRow]:
        return list(self._rows)

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(self._headers)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return row.cells[index.column()] if index.column() < len(row.cells) else ""
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.tooltip or None
        if role == Qt.ItemDataRole.BackgroundRole and row.warning:
            return WARNING_BRUSH
        if role == Qt.ItemDataRole.FontRole and row.bold:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.TextAlignmentRole:
            align = (
                Qt.AlignmentFlag.AlignLeft if index.column() == 0 else Qt.AlignmentFlag.AlignRight
            )
            return int(align | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._headers[section]
        if role == Qt.ItemDataRole.ToolTipRole and section < len(self._header_tips):
            return self._header_tips[section]
        return None
