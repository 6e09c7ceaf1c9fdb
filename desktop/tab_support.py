"""Small pieces shared by the Evaluate, Prevalence, Ensemble and History tabs.

* :class:`RowsTableModel` is a read-only ``QAbstractTableModel`` over rows that a tab
  builds from a core result object; it only formats, it never computes. (Inputs use the
  bound widgets of :mod:`desktop.widgets`.)
* :class:`PercentAxis` and :func:`use_percent_axes` label a plot's axes in percent while the
  plotted data stay the fractions core returns (so ``getData()`` equals core's numbers).
* :class:`DecadeAxis` and :func:`use_decade_axis` label a log axis at whole decades only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal, SignalInstance
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QWidget

from desktop.workers import TaskRunner

WARNING_BRUSH = QBrush(QColor(255, 236, 179))
ERROR_BRUSH = QBrush(QColor(255, 205, 205))


class SessionTab(QWidget):
    """What every tab shares: its session, a status line to the window, and background
    runners that stop when the window closes.

    Signals
    -------
    status_message(str)
        A warning or refusal for the window's status bar; the tab's empty message clears
        it.
    announce(str)
        What an action of the lead's did ("Kept TR-07 as a round"): the window's own
        message, which the tab's later empty messages leave alone.
    """

    status_message = Signal(str)
    announce = Signal(str)

    def __init__(self, session, parent: QWidget | None = None):
        super().__init__(parent)
        self._session = session
        self._runners: list[TaskRunner] = []

    def new_runner(self) -> TaskRunner:
        """A :class:`~desktop.workers.TaskRunner` of this tab, cancelled by :meth:`shutdown`."""
        runner = TaskRunner(self)
        self._runners.append(runner)
        return runner

    #: A change came while the tab was hidden: :meth:`refresh` put the work off.
    _refresh_when_shown = False

    def refresh(self) -> None:
        """Bring the tab up to date with the session: now if it is shown, else once it is
        (:meth:`refresh_if_deferred`). With 10,000 rounds a hidden History tab held the
        window 3 s on every change. Tabs whose work is cheap override this."""
        if not self.isVisible():
            self._refresh_when_shown = True
            return
        self._refresh_now()

    def refresh_if_deferred(self) -> None:
        """Do work a hidden tab put off (when it is shown, or when the window needs it up
        to date, e.g. for plot snapshots)."""
        if self._refresh_when_shown:
            self._refresh_now()

    def _refresh_now(self) -> None:
        """The tab's work for :meth:`refresh`; it clears ``_refresh_when_shown``."""
        self._refresh_when_shown = False

    def shutdown(self) -> None:
        """Cancel the tab's background work (the window is closing)."""
        for runner in self._runners:
            runner.cancel()


class _RefusingModel(Protocol):
    """What :class:`CellRefusals` needs of the table model it is mixed into."""

    _errors: dict[tuple[int, int], str]

    @property
    def dataChanged(self) -> SignalInstance: ...

    @property
    def refused(self) -> SignalInstance: ...

    def index(self, row: int, column: int, /) -> QModelIndex: ...

    def _clear_error(self, cell: tuple[int, int]) -> None: ...


class CellRefusals:
    """Refused entries of an editable table model: the reason stays at the cell,
    as a tint and a tooltip, until a good entry there clears it; the old value is kept.

    Mix in before ``QAbstractTableModel``; the model declares ``refused = Signal(str)``.
    """

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self._errors: dict[tuple[int, int], str] = {}

    def cell_error(self, row: int, column: int) -> str | None:
        return self._errors.get((row, column))

    def refusal_data(self, cell: tuple[int, int], role):
        """The tint or tooltip of a refused cell for ``role``; ``None`` otherwise."""
        if cell not in self._errors:
            return None
        if role == Qt.ItemDataRole.BackgroundRole:
            return ERROR_BRUSH
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"Refused: {self._errors[cell]}. The previous value was kept."
        return None

    def _refuse(self: _RefusingModel, cell: tuple[int, int], message: str) -> None:
        self._errors[cell] = message
        index = self.index(*cell)
        self.dataChanged.emit(index, index)
        self.refused.emit(message)

    def _clear_error(self: _RefusingModel, cell: tuple[int, int]) -> None:
        if self._errors.pop(cell, None) is not None:
            index = self.index(*cell)
            self.dataChanged.emit(index, index)

    def _clear_errors(self: _RefusingModel) -> None:
        for cell in list(self._errors):
            self._clear_error(cell)


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


class PercentAxis(pg.AxisItem):
    """Tick labels in percent (``20 %``; ``0.01 %`` on a log axis) for fraction data."""

    def __init__(self, orientation: str, **options):
        super().__init__(orientation, **options)
        self.enableAutoSIPrefix(False)

    def tickStrings(self, values, scale, spacing):
        if self.logMode:  # pyqtgraph dispatches log axes from here
            return self.logTickStrings(values, scale, spacing)
        if not spacing or spacing <= 0:
            return [f"{value * 100:g} %" for value in values]
        digits = max(0, int(-np.floor(np.log10(spacing * 100.0 * scale))))
        return [f"{value * scale * 100:.{digits}f} %" for value in values]

    def logTickStrings(self, values, scale, spacing):
        # values are decades (log10 of the fraction); minor ticks get no text.
        strings = []
        for value in values:
            if abs(value - round(value)) > 1e-9:
                strings.append("")
            else:
                strings.append(f"{10.0 ** round(value) * 100:g} %")
        return strings


class DecadeAxis(pg.AxisItem):
    """A log axis labelled at whole decades only, as plain numbers (``0.1``, ``1``,
    ``100``, ``10,000``): on a wide plot the 2..9 labels of every decade run together."""

    def __init__(self, orientation: str, **options):
        super().__init__(orientation, **options)
        self.enableAutoSIPrefix(False)

    def logTickStrings(self, values, scale, spacing):
        strings = []
        for value in values:
            if abs(value - round(value)) > 1e-9:
                strings.append("")
                continue
            number = 10.0 ** round(value) * scale
            strings.append(f"{number:,.0f}" if number >= 1 else f"{number:g}")
        return strings


def use_decade_axis(plot: pg.PlotWidget, label: str) -> None:
    """Give ``plot`` (log x) a :class:`DecadeAxis` at the bottom, titled ``label``."""
    axis = DecadeAxis("bottom")
    grid = plot.plotItem.getAxis("bottom").grid  # keep the grid lines the old axis drew
    plot.plotItem.setAxisItems({"bottom": axis})
    axis.setGrid(grid)
    plot.setLabel("bottom", label)
    # PlotItem.setLogMode skips axes when its own mode is unchanged: tell the new one.
    axis.setLogMode(True)


def use_percent_axes(
    plot: pg.PlotWidget,
    *,
    bottom: str | None = None,
    left: str | None = None,
    log_x: bool = False,
) -> None:
    """Replace the bottom and/or left axis of ``plot`` by a :class:`PercentAxis`.

    ``bottom``/``left`` are the axis labels (``None`` keeps that axis as it is).
    """
    axes = {}
    if bottom is not None:
        axes["bottom"] = PercentAxis("bottom")
    if left is not None:
        axes["left"] = PercentAxis("left")
    plot.plotItem.setAxisItems(axes)
    if bottom is not None:
        plot.setLabel("bottom", bottom)
    if left is not None:
        plot.setLabel("left", left)
    if bottom is not None:
        # PlotItem.setLogMode skips axes when its own mode is unchanged: tell the new one.
        axes["bottom"].setLogMode(log_x)
