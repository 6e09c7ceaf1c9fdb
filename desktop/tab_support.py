"""Small pieces shared by the Evaluate, Prevalence, Ensemble and History tabs.

* :class:`SessionSpin` binds a spin box to one session field both ways (spec page 05,
  habit 6): the widget never keeps its own copy; it writes through
  :meth:`SessionModel.set_value` (one undo step) and re-reads when the session announces
  the path. Percent fields are shown as ``95 %`` and stored as ``0.95``.
* :class:`RowsTableModel` is a read-only ``QAbstractTableModel`` over rows that a tab
  builds from a core result object; it only formats, it never computes.
* :func:`path_touches` is the prefix test every tab uses on ``SessionModel.changed``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSignalBlocker, Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QAbstractSpinBox, QDoubleSpinBox, QSpinBox

from desktop.session_model import SessionModel

WARNING_BRUSH = QBrush(QColor(255, 236, 179))
MUTED_BRUSH = QBrush(QColor(245, 245, 245))
ERROR_STYLE = "background: #ffd0d0;"


def path_touches(changed: str, watched: str) -> bool:
    """True when a change announced at ``changed`` may alter the field at ``watched``.

    ``""`` means the whole state changed; a parent path (``"evaluate"``) covers its leaves
    and a leaf (``"evaluate.matrix.tp"``) touches the object that holds it.
    """
    if changed == "" or changed == watched:
        return True
    return watched.startswith(changed + ".") or changed.startswith(watched + ".")


class SessionSpin:
    """Keeps ``spin`` and the session field at ``path`` equal, in both directions.

    Parameters
    ----------
    spin
        A ``QSpinBox`` (whole numbers) or ``QDoubleSpinBox``.
    scale
        Widget value = session value * ``scale`` (100 for a percent box).
    label
        Used in the undo text ("Edit margin").
    """

    def __init__(
        self,
        spin: QSpinBox | QDoubleSpinBox,
        session: SessionModel,
        path: str,
        *,
        scale: float = 1.0,
        label: str | None = None,
    ):
        self.spin = spin
        self._session = session
        self._path = path
        self._scale = scale
        self._label = label or path.rsplit(".", 1)[-1].replace("_", " ")
        self._tooltip = spin.toolTip()
        # Commit on Enter, focus loss or an arrow step, not on every keystroke: a
        # half-typed "0." must not become an undo step or a refusal.
        spin.setKeyboardTracking(False)
        spin.setCorrectionMode(QAbstractSpinBox.CorrectionMode.CorrectToNearestValue)
        spin.valueChanged.connect(self._on_widget_changed)
        session.changed.connect(self._on_session_changed)
        self.refresh()

    def _session_value(self, widget_value: float):
        if isinstance(self.spin, QSpinBox):
            return int(widget_value)
        # round() keeps 3.0 % -> 0.03 instead of 0.030000000000000002 in the state.
        return round(widget_value / self._scale, 12)

    def _on_widget_changed(self, value) -> None:
        new_value = self._session_value(value)
        if new_value == self._session.get(self._path):
            return
        message = self._session.set_value(self._path, new_value, text=f"Edit {self._label}")
        if message:
            self.spin.setStyleSheet(ERROR_STYLE)
            self.spin.setToolTip(f"Refused: {message}\n\n{self._tooltip}")
            self.refresh(keep_error=True)
        else:
            self._clear_error()

    def _clear_error(self) -> None:
        if self.spin.styleSheet():
            self.spin.setStyleSheet("")
            self.spin.setToolTip(self._tooltip)

    def _on_session_changed(self, path: str) -> None:
        if path_touches(path, self._path):
            self.refresh()

    def refresh(self, keep_error: bool = False) -> None:
        """Show the session's value without writing it back."""
        value = self._session.get(self._path)
        with QSignalBlocker(self.spin):
            if isinstance(self.spin, QSpinBox):
                self.spin.setValue(int(value))
            else:
                self.spin.setValue(float(value) * self._scale)
        if not keep_error:
            self._clear_error()


def percent_spin(
    tooltip: str, minimum: float, maximum: float, decimals: int = 1, step: float = 0.5
) -> QDoubleSpinBox:
    """A ``QDoubleSpinBox`` showing a percentage (``95.0 %``)."""
    spin = QDoubleSpinBox()
    spin.setRange(minimum, maximum)
    spin.setDecimals(decimals)
    spin.setSingleStep(step)
    spin.setSuffix(" %")
    spin.setToolTip(tooltip)
    spin.setAlignment(Qt.AlignmentFlag.AlignRight)
    return spin


def count_spin(tooltip: str, minimum: int, maximum: int, step: int = 1) -> QSpinBox:
    """A ``QSpinBox`` for a whole number, shown with thousands separators."""
    spin = QSpinBox()
    spin.setRange(minimum, maximum)
    spin.setSingleStep(step)
    spin.setGroupSeparatorShown(True)
    spin.setToolTip(tooltip)
    spin.setAlignment(Qt.AlignmentFlag.AlignRight)
    return spin


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
