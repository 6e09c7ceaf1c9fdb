"""The Rounds panel: the past rounds of the open workbook or session.

A round drives the tabs from here: double-click or Enter evaluates it (its counts and
design fill the Evaluate tab, which compares it with the classifier's round before), and
the context menu also plans the next round from it or compares it with the round before.
"Columns…" shows what each sheet's columns were read as and lets the user change it; the
choice is kept in the session (``columns``) and the workbook is read again with it.
"""

from __future__ import annotations

import datetime as dt
import html
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import (
    QAbstractTableModel,
    QDate,
    QEvent,
    QModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QBrush, QColor, QFont, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.confusion import PointEstimates, point_estimates
from core.errors import InputError
from core.workbook.layout import CELL_TEXT_LIMIT
from core.workbook.rounds import (
    COLUMN_ROLES,
    EARLIEST_ROUND_DATE,
    ROLE_WORDS,
    ColumnChoice,
    SheetColumns,
)
from core.workbook.session_io import (
    added_in_app,
    find_round_key,
    insertion_point,
    plan_from_round,
    population_of_round,
    previous_round_of,
    renamed_round,
    round_before,
    round_key,
    told_apart,
)

# mypy finds modules by folder and cannot follow pyproject's package-dir mapping of
# resources/ to desktop.resources, so it sees no such module.
from desktop import formatting, resources  # type: ignore[attr-defined]
from desktop.session_model import SessionModel
from desktop.widgets import affects

CURRENT_BRUSH = QBrush(QColor(214, 234, 255))


def plural(count: int, word: str) -> str:
    """``1 round``, ``5 rounds``."""
    return f"{count} {word}{'s' if count != 1 else ''}"


def previous_round_changes(item) -> list[tuple[str, object]]:
    """The edits that make ``item`` the previous round the Plan tab builds on: its counts
    and its population (so the recall the Plan tab shows for it uses the round's own k)."""
    return [
        ("previous_round", item.name),
        ("plan.previous", item.matrix),
        ("plan.belief", "previous"),
        ("plan.population", population_of_round(item)),
    ]


def _details_words(before, after) -> str:
    """``Renamed TR-07 to Oct 2026; dated 2026-10-31``: what a details edit did."""
    parts = []
    if after.name != before.name:
        parts.append(f"Renamed {before.name} to {after.name}")
    if after.date != before.date:
        if after.date is None:
            parts.append("date taken off" if parts else f"Took the date off {after.name}")
        else:
            parts.append(f"{'dated' if parts else f'Dated {after.name}'} {after.date.isoformat()}")
    return "; ".join(parts)


class RoundDetailsDialog(QDialog):
    """A round's name and date, as the lead's reports give them.

    Emits ``accepted_details(name, date)`` on OK and stays open until the panel accepts
    them (:meth:`RoundsPanel.set_round_details`), so a name refused is said here and the
    lead's typing is kept.
    """

    accepted_details = Signal(str, object)

    def __init__(self, item, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("round_details_dialog")
        self.setWindowTitle(f"Rename or date {formatting.short_text(item.name, 60)}")
        self.setMinimumWidth(420)
        self.name_edit = QLineEdit(item.round or "", self)
        self.name_edit.setObjectName("round_name_edit")
        self.name_edit.setPlaceholderText(item.name)
        self.name_edit.setMaxLength(CELL_TEXT_LIMIT)
        self.name_edit.setToolTip("How the Rounds panel, the History tab and reports name it")
        self.date_edit = QDateEdit(self)
        self.date_edit.setObjectName("round_date_edit")
        self.date_edit.setCalendarPopup(True)
        self.date_edit.setDisplayFormat("yyyy-MM-dd")
        # Dates the rounds reader takes back (Excel's run to 9999).
        first = EARLIEST_ROUND_DATE
        self.date_edit.setDateRange(QDate(first.year, first.month, first.day), QDate(9999, 12, 31))
        when = item.date or dt.date.today()
        self.date_edit.setDate(QDate(when.year, when.month, when.day))
        self.date_edit.setToolTip(
            "When the round counts as labeled: the History tab orders rounds by it and a "
            "report names it"
        )
        self.no_date_box = QCheckBox("No date", self)
        self.no_date_box.setObjectName("round_no_date")
        self.no_date_box.setChecked(item.date is None)
        self.date_edit.setEnabled(item.date is not None)
        self.no_date_box.toggled.connect(lambda checked: self.date_edit.setEnabled(not checked))
        self.problem = QLabel(self)
        self.problem.setObjectName("round_details_problem")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #b00020")
        self.problem.hide()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self._ask)
        buttons.rejected.connect(self.reject)
        whose = f"Classifier {item.classifier}. " if item.classifier else ""
        about = QLabel(
            f"{whose}Only the name and date change, not the counts; save the session to "
            "keep them. If you added the round to your rounds workbook, change its row "
            "there too: opening the workbook brings the row back as it is.",
            self,
        )
        about.setWordWrap(True)
        dates = QHBoxLayout()
        dates.addWidget(self.date_edit, 1)
        dates.addWidget(self.no_date_box)
        form = QFormLayout(self)
        form.addRow(about)
        form.addRow("Round", self.name_edit)
        form.addRow("Date", dates)
        form.addRow(self.problem)
        form.addRow(buttons)

    def values(self) -> tuple[str, dt.date | None]:
        """``(name, date or None)`` as entered."""
        if self.no_date_box.isChecked():
            return self.name_edit.text(), None
        date = self.date_edit.date()
        return self.name_edit.text(), dt.date(date.year(), date.month(), date.day())

    def refuse(self, message: str) -> None:
        """Say why the details were not taken; the dialog stays open."""
        self.problem.setText(message)
        self.problem.show()
        self.adjustSize()  # room for the message's lines (a wrapped label is not given it)
        self.name_edit.setFocus()

    def _ask(self) -> None:
        self.accepted_details.emit(*self.values())


# --- Rounds panel -----------------------------------------------------------------------------


class RoundsTableModel(QAbstractTableModel):
    """Read-only table of the session's past rounds; the previous round is shown in bold
    and the current round (the one the Evaluate tab shows) tinted."""

    COLUMNS = (
        "Round",
        "Date",
        "Classifier",
        "Model",
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
        "Which classifier the round evaluated (a classifier column, else the sheet's name)",
        "The classifier's model version in that round",
        "Imbalance ratio k = N1/N0 of the population at the time",
        "True positives (n11): predicted +, labeled +",
        "False positives (n01): predicted +, labeled −",
        "False negatives (n10): predicted −, labeled +",
        "True negatives (n00): predicted −, labeled −",
        "Precision estimate TP/(TP + FP)",
        "Recall estimate 1/(1 + π0/(k·π1)) with the round's own k",
        "Notes kept with the round in the workbook",
    )
    #: Columns holding numbers (right-aligned).
    NUMERIC = range(4, 11)

    def __init__(self, session: SessionModel, parent=None):
        super().__init__(parent)
        self._session = session
        self._estimates: list[PointEstimates | None] = []
        self._shown: tuple = ()
        self._bold = QFont()
        self._bold.setBold(True)
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
        row, column = index.row(), index.column()
        if role == Qt.ItemDataRole.TextAlignmentRole and column in self.NUMERIC:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        # The view asks for every role of every cell on each layout pass (the columns fit
        # their contents), so a row's texts and names are made once, when first asked for:
        # only the rows the view looks at, however many rounds the workbook holds.
        shown = self._rows[row]
        if shown is None:
            shown = self._rows[row] = self._row(row)
        texts, label, key = shown
        if role == Qt.ItemDataRole.DisplayRole:  # a long name is cut; Copy gives it whole
            return texts[column]
        if role == Qt.ItemDataRole.FontRole and label == self._previous:
            return self._bold
        if role == Qt.ItemDataRole.BackgroundRole and key == self._current:
            return CURRENT_BRUSH
        item = self.rounds()[row]
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = self.TOOLTIPS[column]
            if item.notes:
                tip += f"\nNotes: {formatting.short_text(item.notes, 500)}"
            if self.is_current(item):
                tip += "\nThe current round: the Evaluate tab shows it"
            return tip + f"\n{item.sheet}, row {item.row}"
        return None

    def is_current(self, item) -> bool:
        return round_key(item) == self._session.get("current_round")

    def _text(self, item, row: int, column: int) -> str:
        if column == 0:
            return item.name
        if column == 1:
            return item.date.isoformat() if item.date else ""
        if column == 2:
            return item.classifier or ""
        if column == 3:
            return getattr(item, "model_version", None) or ""
        if column == 4:
            return formatting.ratio(item.k)
        if column == 11:
            return item.notes or ""
        if 5 <= column <= 8:
            return formatting.thousands(getattr(item, ("tp", "fp", "fn", "tn")[column - 5]))
        estimate = self._estimates[row]
        if estimate is None:
            return "–"
        value = estimate.precision if column == 9 else estimate.recall
        return formatting.percent(None if math.isnan(value) else value)

    def _recompute(self) -> None:
        estimates: list[PointEstimates | None] = []
        for item in self.rounds():
            try:
                estimates.append(point_estimates(item.matrix, item.k))
            except InputError:
                estimates.append(None)
        self._estimates = estimates
        self._shown = self.rounds()
        self._rows: list[tuple[tuple[str, ...], str, str] | None] = [None] * len(self._shown)
        self._remember_marks()

    def _row(self, row: int) -> tuple[tuple[str, ...], str, str]:
        """A row's cell texts (long ones cut), its round label and its round key."""
        item = self._shown[row]
        texts = tuple(
            formatting.short_text(self._text(item, row, column))
            for column in range(len(self.COLUMNS))
        )
        return texts, item.name, round_key(item)

    def _remember_marks(self) -> None:
        self._previous = self._session.get("previous_round")
        self._current = self._session.get("current_round")

    def _on_session_changed(self, changed: str) -> None:
        # A whole-state change ("") that keeps the rounds (an action on a round) must
        # not reset the table: the selection would go.
        if affects(changed, "rounds") and self.rounds() != self._shown:
            self.beginResetModel()
            self._recompute()
            self.endResetModel()
        elif (
            affects(changed, "previous_round")
            or affects(changed, "current_round")
            or affects(changed, "rounds")
        ) and self.rowCount():
            self._remember_marks()
            self.dataChanged.emit(
                self.index(0, 0), self.index(self.rowCount() - 1, self.columnCount() - 1)
            )


class RoundsPanel(QWidget):
    """The workbook's past rounds, and what a round can do for the tabs.

    Double-click or Enter on a round evaluates it; the context menu evaluates it, plans the
    next round from it, or compares it with the round before (same classifier). Each action
    is one undoable step and asks the window to show the tab it filled (``show_tab``).

    Signals
    -------
    chosen(int)
        Row of the round the user chose as the previous round ("Use as previous round").
    show_tab(str)
        Key of the tab an action filled (``"evaluate"``, ``"plan"``).
    status_message(str)
        What an action did, for the status bar.
    """

    chosen = Signal(int)
    show_tab = Signal(str)
    status_message = Signal(str)

    def __init__(self, session: SessionModel, parent=None):
        super().__init__(parent)
        self._session = session
        self._problems: list[str] = []
        #: What reading the source found, less the rows the session keeps as not loaded.
        self._source_problems: list[str] = []
        self._source_text = ""
        #: The rounds as read from the source (the header says when the session's differ).
        self._source_rounds: tuple = ()
        #: The plain rounds workbook the rounds were read from (None for a session).
        self.workbook: Path | None = None
        #: What each sheet's columns were read as (from the last read of the workbook).
        self.sheet_columns: tuple[SheetColumns, ...] = ()
        self.columns_dialog: ColumnsDialog | None = None
        self.model = RoundsTableModel(session, self)
        self.table = QTableView(self)
        self.table.setModel(self.model)
        # After the rounds change (one kept, labels read, a workbook opened) the current
        # round's row is selected and shown, not left below the fold (connected after the
        # view's own reset handler, which clears the selection).
        self.model.modelReset.connect(self._select_current)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.setToolTip(
            "Past rounds of the open workbook. Double-click a round (or press Enter) to "
            "evaluate it; right-click to plan the next round from it or compare it with the "
            "round before. The tinted row is the round the Evaluate tab shows."
        )
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._show_menu)
        self.table.installEventFilter(self)
        self.source = QLabel(self)
        self.source.setObjectName("rounds_source")
        self.source.setTextFormat(Qt.TextFormat.PlainText)  # a file name is not markup
        self.source.setToolTip("Where the rounds listed came from.")
        self.previous = QLabel(self)
        self.previous.setToolTip("The round the Plan tab builds on.")
        self.use_button = QPushButton("Use as previous round", self)
        self.use_button.setToolTip(
            "Make the selected round the previous round: its counts and population fill the "
            "Plan tab and the plan is based on them."
        )
        self.columns_button = QPushButton("Columns…", self)
        self.columns_button.setToolTip(
            "What each column of the workbook was read as (classifier, model version, "
            "counts, ...), and change it."
        )
        self.columns_button.hide()
        self.problems_button = QPushButton("Rows not loaded…", self)
        self.problems_button.setToolTip("Rows and sheets of the workbook that were not used.")
        self.problems_button.hide()

        self.evaluate_action = QAction("Evaluate this round", self)
        self.plan_action = QAction("Plan the next round from it", self)
        self.compare_action = QAction("Compare with the round before", self)
        self.details_action = QAction("Rename or change its date…", self)
        self.remove_action = QAction("Remove from this session", self)
        self.remove_action.setToolTip(
            "Take a round kept by mistake out of the session (Edit > Undo brings it back); "
            "your rounds workbook keeps its rows"
        )
        #: The row the context menu was opened on (its actions act on it).
        self._menu_row: int | None = None
        self.evaluate_action.triggered.connect(lambda: self._on_menu(self.evaluate_round))
        self.plan_action.triggered.connect(lambda: self._on_menu(self.plan_from_round))
        self.compare_action.triggered.connect(lambda: self._on_menu(self.compare_with_round_before))
        self.remove_action.triggered.connect(lambda: self._on_menu(self.remove_round))
        self.details_action.triggered.connect(lambda: self._on_menu(self.edit_round_details))

        #: The labeling workbooks drawn and not read back yet (session.awaiting_labels).
        self.awaiting = QLabel(self)
        self.awaiting.setObjectName("awaiting_labels")
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        bar.addWidget(self.source, 1)
        bar.addWidget(self.awaiting)
        bar.addSpacing(16)
        bar.addWidget(self.previous)
        bar.addWidget(self.problems_button)
        bar.addWidget(self.columns_button)
        bar.addWidget(self.use_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 4)
        layout.addLayout(bar)
        layout.addWidget(self.table, 1)

        self.use_button.clicked.connect(self._use_selected)
        self.table.doubleClicked.connect(lambda index: self.evaluate_round(index.row()))
        self.problems_button.clicked.connect(self.show_problems)
        self.columns_button.clicked.connect(self.show_columns)
        self.table.selectionModel().selectionChanged.connect(self._update_button)
        self.model.modelReset.connect(self._update_button)
        session.changed.connect(self._on_session_changed)
        self._update_button()
        self._refresh_previous()
        self._refresh_awaiting()

    def set_source(
        self,
        text: str,
        problems: list[str],
        *,
        workbook: str | Path | None = None,
        columns: Sequence[SheetColumns] = (),
    ) -> None:
        """Say where the rounds came from and keep the rows that could not be used.

        ``workbook`` is the plain rounds workbook they were read from (``None`` for a
        session, the example or nothing) and ``columns`` what its sheets' columns were read
        as: with them "Columns…" can read it again as the user chooses. The rows the
        session's rounds workbook could not give (``rows_not_loaded``, kept with a saved
        session) are listed with ``problems``.
        """
        # The workbook's rows not loaded are the session's to keep or forget: listed as it
        # holds them (_refresh_problems), the rest of the problems as they were found.
        at_load = set(self._session.state.rows_not_loaded)
        self._source_problems = [line for line in problems if line not in at_load]
        self._source_text = text
        self._source_rounds = self._session.state.rounds
        self.workbook = Path(workbook) if workbook is not None else None
        self.sheet_columns = tuple(columns)
        self._refresh_source()
        self._refresh_problems()
        self.columns_button.setVisible(self.workbook is not None and bool(self.sheet_columns))
        guessed = sum(len(reading.guessed) for reading in self.sheet_columns)
        self.columns_button.setText(f"Columns ({guessed} guessed)…" if guessed else "Columns…")
        self._select_current()

    @property
    def problems(self) -> list[str]:
        return list(self._problems)

    def show_problems(self) -> QDialog:
        dialog = QDialog(self)
        dialog.setObjectName("rows_not_loaded_dialog")
        dialog.setWindowTitle("Rows not loaded")
        text = QPlainTextEdit("\n".join(self._problems), dialog)
        text.setReadOnly(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, dialog)
        buttons.rejected.connect(dialog.reject)
        layout = QVBoxLayout(dialog)
        layout.addWidget(text)
        if self._session.state.rows_not_loaded:
            # A saved session keeps naming its workbook's bad rows in every report; once
            # the lead has dealt with them, they can say so (one undo step).
            forget = buttons.addButton(
                "Stop naming them in reports", QDialogButtonBox.ButtonRole.ActionRole
            )
            forget.setObjectName("forget_rows_not_loaded")
            forget.setToolTip(
                "Reports of this session warn that these rows of the workbook are left out; "
                "stop that once you have corrected or added them (Edit > Undo brings it back)"
            )
            forget.clicked.connect(lambda: self._forget_rows_not_loaded(dialog))
        layout.addWidget(buttons)
        dialog.resize(640, 320)
        dialog.open()
        return dialog

    def _forget_rows_not_loaded(self, dialog: QDialog) -> None:
        if self._session.set_values([("rows_not_loaded", ())], text="Stop naming rows not loaded"):
            return
        dialog.accept()

    def selected_row(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        return rows[0].row() if rows else None

    def copy_text(self) -> str:
        """Selected rows (or all) as tab-separated text with the header."""
        selected = self.selected_row()
        model = self.model
        indices = [selected] if selected is not None else range(model.rowCount())
        lines = ["\t".join(model.COLUMNS)]
        for row in indices:
            lines.append(
                "\t".join(
                    str(model.data(model.index(row, c)) or "") for c in range(model.columnCount())
                )
            )
        return "\n".join(lines)

    # --- what a round can do -----------------------------------------------------------

    def _round(self, row: int):
        rounds = self._session.state.rounds
        return rounds[row] if 0 <= row < len(rounds) else None

    def evaluate_round(self, row: int, *, show: bool = True, fpc: bool | None = None) -> bool:
        """Make round ``row`` the current round: its counts and design fill the Evaluate
        tab (one undoable step). The tab compares it with the previous round, or with the
        classifier's round before when the previous round is this one. ``fpc`` sets the
        finite population correction too (a round drawn by the plan's rule is judged as
        the plan was made)."""
        item = self._round(row)
        if item is None:
            return False
        label = told_apart(self._session.state.rounds, item)
        state = self._session.state
        shown = find_round_key(state.rounds, state.current_round)
        typed = shown is None or shown.matrix != state.evaluate.matrix
        if self._session.set_values(self.evaluate_changes(item, fpc=fpc), text=f"Evaluate {label}"):
            return False
        message = f"Evaluate shows {label}: its counts and population"
        if typed and state.evaluate.matrix != item.matrix:
            # Counts typed by hand were replaced: say where they went.
            message += " (the counts you typed there are back with Edit > Undo)"
        self.status_message.emit(message)
        if show:
            self.show_tab.emit("evaluate")
        return True

    def evaluate_changes(self, item, *, fpc: bool | None = None) -> list[tuple[str, object]]:
        """The edits that make ``item`` the current round (see :meth:`evaluate_round`),
        for a caller that makes them part of a larger undo step."""
        evaluate = self._session.get("evaluate")
        population = population_of_round(item)
        changes: list[tuple[str, object]] = [
            ("current_round", round_key(item)),
            ("evaluate.matrix", item.matrix),
            ("evaluate.population", population),
        ]
        if fpc is None:
            # The box says how the round was drawn (exact for a draw by the rule, without
            # replacement from a list of known size), not what it said for the round
            # shown before: a round's interval in History moved with the clicks (review 15).
            fpc = item.corrected_by_design
        if population.mode != "counts":
            fpc = False  # the correction needs both counts
        if fpc != evaluate.fpc:
            changes.append(("evaluate.fpc", fpc))
        return changes

    def plan_from_round(self, row: int) -> bool:
        """Plan the next round from round ``row``: it becomes the previous round (its counts
        and population fill the Plan tab)."""
        item = self._round(row)
        if item is None:
            return False
        label = told_apart(self._session.state.rounds, item)
        plan, notes = plan_from_round(self._session.get("plan"), item)
        if self._session.set_values(
            [("previous_round", item.name), ("plan", plan)],
            text=f"Plan the next round from {label}",
        ):
            return False
        self.status_message.emit(
            f"The plan starts from {label}: its counts, population (k = "
            f"{formatting.ratio(item.k)}), s and number of labels; change the population on "
            "the Plan tab if the next round's differs" + "".join(f"; {note}" for note in notes)
        )
        self.show_tab.emit("plan")
        return True

    def compare_with_round_before(self, row: int) -> bool:
        """Evaluate round ``row`` against the same classifier's round before it."""
        item = self._round(row)
        if item is None:
            return False
        before = round_before(self._session.state.rounds, item)
        if before is None:
            self.status_message.emit(
                f"{item.name} is the first round of "
                f"{item.classifier or 'its classifier'}: there is no round before to compare"
            )
            return False
        label, before_label = item.name, before.name
        # The Plan builds on the round shown, and the Evaluate tab compares it with the
        # round before (compared_round's rule when the two are one). Naming the round
        # before as the previous one, without its counts, left the Plan on its old counts
        # and the panel naming another classifier's round of that name (trial 17).
        changes = [*self.evaluate_changes(item), *previous_round_changes(item)]
        if self._session.set_values(changes, text=f"Compare {label} with {before_label}"):
            return False
        self.status_message.emit(f"Evaluate compares {label} with {before_label}")
        self.show_tab.emit("evaluate")
        return True

    def can_edit_details(self, item) -> bool:
        """Whether the app may rename or re-date ``item``: not a row of the lead's rounds
        workbook, which opening it again would bring back as it is (rounds read from
        labels or kept from typed counts, and every round of a saved session, may)."""
        return self.workbook is None or added_in_app(item)

    def edit_round_details(self, row: int) -> RoundDetailsDialog | None:
        """Ask for round ``row``'s name and date; OK applies them (one undo step)."""
        item = self._round(row)
        if item is None or not self.can_edit_details(item):
            return None
        dialog = RoundDetailsDialog(item, self)
        dialog.accepted_details.connect(
            lambda name, date: self.set_round_details(row, name, date, dialog=dialog)
        )
        dialog.open()
        return dialog

    def set_round_details(
        self, row: int, name: str, date: dt.date | None, *, dialog: RoundDetailsDialog | None = None
    ) -> bool:
        """Give round ``row`` the name and date the lead chose (one undo step); a name
        refused is said in ``dialog`` (kept open) or the status bar."""
        item = self._round(row)
        if item is None:
            return False
        state = self._session.state
        try:
            renamed = renamed_round(state.rounds, item, name, date)
        except InputError as exc:
            if dialog is not None:
                dialog.refuse(str(exc))
            else:
                self.status_message.emit(f"{item.name} was not renamed: {exc}")
            return False
        if renamed == item:
            if dialog is not None:
                dialog.done(QDialog.DialogCode.Accepted)
            return False
        rounds = tuple(renamed if past is item else past for past in state.rounds)
        changes: list[tuple[str, object]] = [("rounds", rounds)]
        # The Plan's previous round is named: it follows the new name.
        if renamed.name != item.name and previous_round_of(state) is item:
            changes.append(("previous_round", renamed.name))
        # So is a round ticked on the Prevalence tab (review 15: renamed, it was unticked).
        from desktop.prevalence_tab import compare_keys, compared_flags

        ticked = state.prevalence.compared_rounds
        if ticked:
            flags = compared_flags(state.rounds, ticked)
            keys = compare_keys(rounds)
            kept = tuple(key for key, flag in zip(keys, flags, strict=True) if flag)
            if set(kept) != set(ticked):
                changes.append(("prevalence.compared_rounds", kept))
        said = _details_words(item, renamed)
        refused = self._session.set_values(changes, text=said)
        if refused:
            if dialog is not None:
                dialog.refuse(refused)
            return False
        if dialog is not None:
            dialog.done(QDialog.DialogCode.Accepted)
        self.status_message.emit(
            f"{said} (Edit > Undo brings back the old one; History, comparisons and reports "
            "use the new one)"
        )
        return True

    def remove_round(self, row: int) -> bool:
        """Take round ``row`` out of the session, one undoable step (a round kept by
        mistake stayed for good, and its changes marked the real rounds in History;
        trial 13b). The lead's rounds workbook is not touched."""
        item = self._round(row)
        if item is None:
            return False
        state = self._session.state
        rounds = tuple(past for past in state.rounds if past is not item)
        changes: list[tuple[str, object]] = [("rounds", rounds)]
        if state.current_round == round_key(item):
            changes.append(("current_round", ""))
        label = told_apart(self._session.state.rounds, item)
        # By identity, not by name: the classifiers of one draw share the name, and the
        # Plan's previous round then slid to another classifier's (review 14).
        if previous_round_of(state) is item:
            changes.append(("previous_round", ""))
        refused = self._session.set_values(changes, text=f"Remove {label}")
        if refused:
            self.status_message.emit(f"{label} was not removed: {refused}")
            return False
        self.status_message.emit(
            f"Removed {label} from this session (Edit > Undo brings it back; your rounds "
            "workbook keeps its rows)"
        )
        return True

    def _on_menu(self, action) -> None:
        row = self._menu_row if self._menu_row is not None else self.selected_row()
        if row is not None:
            action(row)

    def _show_menu(self, position) -> None:
        index = self.table.indexAt(position)
        if not index.isValid():
            return
        self.table.selectRow(index.row())
        menu = self.context_menu(index.row())
        menu.popup(self.table.viewport().mapToGlobal(position))

    def context_menu(self, row: int) -> QMenu:
        """The menu of round ``row`` (built on demand; "compare" needs a round before)."""
        item = self._round(row)
        self._menu_row = row
        menu = QMenu(self)
        menu.setObjectName("rounds_menu")
        for action in (self.evaluate_action, self.plan_action, self.compare_action):
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction(self.details_action)
        menu.addAction(self.remove_action)
        kept_by_the_workbook = item is not None and not self.can_edit_details(item)
        self.details_action.setEnabled(not kept_by_the_workbook)
        self.details_action.setText(
            "Rename or change its date… (in your rounds workbook)"
            if kept_by_the_workbook
            else "Rename or change its date…"
        )
        self.details_action.setToolTip(
            "This round is a row of your rounds workbook: change its name or date there, "
            "then File > Open it again"
            if kept_by_the_workbook
            else "Give the round the name and date your reports use (a drawn round is named "
            "after its file and dated with the draw's Round date); Edit > Undo brings them back"
        )
        before = round_before(self._session.state.rounds, item) if item is not None else None
        self.compare_action.setEnabled(before is not None)
        self.compare_action.setText(
            f"Compare with the round before ({before.name})"
            if before is not None
            else "Compare with the round before (none)"
        )
        return menu

    def eventFilter(self, watched, event) -> bool:
        if (
            watched is self.table
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        ):
            row = self.selected_row()
            if row is None and self.table.currentIndex().isValid():
                row = self.table.currentIndex().row()
            if row is not None:
                self.evaluate_round(row)
                return True
        return super().eventFilter(watched, event)

    def _use_selected(self) -> None:
        row = self.selected_row()
        if row is not None:
            self.chosen.emit(row)

    def _update_button(self, *_args) -> None:
        has_rounds = self.model.rowCount() > 0
        self.use_button.setEnabled(has_rounds and self.selected_row() is not None)
        self.use_button.setToolTip(
            "Make the selected round the previous round: its counts and population fill the "
            "Plan tab and the plan is based on them."
            if has_rounds
            else "No past rounds: open a workbook of rounds (File > Open…) first."
        )

    def _select_current(self) -> None:
        """Select the current round's row (so its actions are one click away)."""
        current = self._session.get("current_round")
        for row, item in enumerate(self._session.state.rounds):
            if round_key(item) == current:
                self.table.selectRow(row)
                self.table.scrollTo(self.model.index(row, 0))
                return

    def _refresh_source(self) -> None:
        """Name where the rows listed came from and count them: the source's name while
        the rounds are those read from it; once rounds were added, replaced or removed
        (labels read, undo), the session's rounds and how many of them the source gave."""
        rounds = self._session.state.rounds
        count = len(rounds)
        if rounds == self._source_rounds and self._source_text:
            text = f"{self._source_text}: {plural(count, 'round')}"
        else:
            text = f"Rounds of this session: {count}"
            # By where a round was read from, not by identity: a renamed round is still
            # the source's (recheck 15: "9 from" after one rename).
            kept = {round_key(item) for item in self._source_rounds}
            from_source = sum(1 for item in rounds if round_key(item) in kept)
            if from_source and self._source_text:
                added = count - from_source
                # "5 (4 from fraud session.xlsx)" read as if one round were elsewhere
                # (trial 18): the others were added since.
                text += (
                    f" ({from_source} opened from {self._source_text}, {added} added since)"
                    if added > 0
                    else f" ({from_source} from {self._source_text})"
                )
        self.source.setText(formatting.short_text(text, 120))
        self.source.setToolTip(f"Where the rounds listed came from: {text}")

    def _refresh_awaiting(self) -> None:
        """Name the workbooks out with the editors (drawn, labels not read back yet)."""
        waiting = [Path(entry) for entry in self._session.get("awaiting_labels")]
        if not waiting:
            self.awaiting.setText("")
            self.awaiting.setVisible(False)
            return
        names = ", ".join(path.name for path in waiting)
        self.awaiting.setText(
            "Out with the editors: <b>"
            + html.escape(formatting.short_text(names, 80), quote=False)
            + "</b>"
        )
        self.awaiting.setToolTip(
            "Drawn in this session, labels not read back yet:\n"
            + "\n".join(str(path) for path in waiting)
            + "\nWhen they come back: File › Read labeled workbook…"
        )
        self.awaiting.setVisible(True)

    def _on_session_changed(self, changed: str) -> None:
        if affects(changed, "awaiting_labels"):
            self._refresh_awaiting()
        if affects(changed, "rounds"):
            self._refresh_source()
        if affects(changed, "previous_round") or affects(changed, "rounds"):
            self._refresh_previous()
        if changed == "" or affects(changed, "rounds"):
            self._update_button()
        if changed != "" and affects(changed, "rows_not_loaded"):
            self._refresh_problems()

    def _refresh_problems(self) -> None:
        """The rows not loaded as the session now holds them (after Stop naming them, or
        its undo)."""
        rows = self._session.state.rows_not_loaded
        self._problems = list(dict.fromkeys((*self._source_problems, *rows)))
        self.problems_button.setVisible(bool(self._problems))
        self.problems_button.setText(f"{len(self._problems)} not loaded…")

    def _refresh_previous(self) -> None:
        name = self._session.get("previous_round")
        previous = previous_round_of(self._session.state)
        if previous is not None:  # whose, when the classifiers of a draw share its name
            name = told_apart(self._session.state.rounds, previous)
        # A name may be a 32,000-character cell: shown cut (and escaped), whole in the tooltip.
        shown = html.escape(formatting.short_text(name), quote=False) if name else ""
        self.previous.setText(
            f"The Plan builds on: <b>{shown}</b>" if name else "The Plan builds on no round"
        )
        self.previous.setToolTip(
            f"The round the Plan tab builds on: {formatting.short_text(name, 500)}"
            if name
            else "The round the Plan tab builds on."
        )

    # --- columns ------------------------------------------------------------------------

    def show_columns(self) -> ColumnsDialog:
        """The "Columns…" dialog; OK reads the workbook again with the choices."""
        dialog = ColumnsDialog(self.sheet_columns, self._session.get("columns"), self)
        dialog.accepted.connect(lambda: self.apply_columns(dialog.choices()))
        self.columns_dialog = dialog
        dialog.open()
        return dialog

    def apply_columns(self, choices: Sequence[str]) -> bool:
        """Read the workbook again with the column choices ``choices`` (``ROLE=HEADER``
        texts): one undoable step; the most recent round is the current one again and the
        other inputs stay."""
        from core.workbook.session_io import read_session

        if self.workbook is None:
            return False
        try:
            # The lead's inputs stay; only the rounds (and the current round) are read again.
            opened = read_session(self.workbook, columns=tuple(choices), base=self._session.state)
        except InputError as exc:
            self.status_message.emit(f"Could not read {self.workbook.name} again: {exc}")
            return False
        # The rounds the lead added in the app (labels read back, counts kept) are not in
        # the workbook: they stay.
        rounds = list(opened.state.rounds)
        # A round added to the workbook from the app (Add to …) is now read from it.
        in_workbook = {resources.round_fingerprint(item) for item in rounds}
        for item in self._session.state.rounds:
            if added_in_app(item) and resources.round_fingerprint(item) not in in_workbook:
                rounds.insert(insertion_point(rounds, item.classifier), item)
        state = replace(opened.state, rounds=tuple(rounds))
        self._session.replace_state(state, text="Read the columns as chosen", undoable=True)
        book = opened.book
        self.set_source(
            self._source_text,
            list(opened.problems),
            workbook=self.workbook,
            columns=book.columns if book is not None else (),
        )
        self.status_message.emit(
            f"Read {self.workbook.name} again with your column choices: {len(state.rounds)} rounds"
        )
        return True


#: Words for the roles in the "Columns…" dialog's combo boxes.
def _role_choices() -> list[tuple[str, str]]:
    return [(role, ROLE_WORDS.get(role, role)) for role in ("ignore", *COLUMN_ROLES)]


class ColumnsDialog(QDialog):
    """Every sheet's header cells, each with a combo box of what it is read as.

    The combo boxes start at what the reader decided (guesses marked "guessed"); a sheet
    without a classifier column can name its classifier after the sheet. :meth:`choices`
    returns the user's changes as ``SHEET!ROLE=HEADER`` texts (with the earlier choices).
    """

    def __init__(
        self,
        sheets: Sequence[SheetColumns],
        earlier: Sequence[str] = (),
        parent=None,
        *,
        intro: str | None = None,
    ):
        super().__init__(parent)
        self.setWindowTitle("What the columns hold")
        self.setObjectName("columns_dialog")
        self._sheets = tuple(sheets)
        self._earlier = tuple(earlier)
        #: (sheet, header, combo, role it started at)
        self.combos: list[tuple[str, str, QComboBox, str]] = []
        #: sheet -> (combo, started with the sheet name as classifier)
        self.sheet_name_checks: dict[str, tuple[QComboBox, bool]] = {}
        content = QWidget()
        layout = QVBoxLayout(content)
        intro_label = QLabel(
            intro
            or "Each column of the header row and what PR Planner reads it as. Change a "
            "column's role and press OK to read the workbook again; the choice is saved "
            "with the session."
        )
        intro_label.setWordWrap(True)
        layout.addWidget(intro_label)
        for reading in self._sheets:
            box = QGroupBox(f"Sheet {reading.sheet} (header in row {reading.header_row})")
            form = QFormLayout(box)
            by_column = {item.column: item for item in reading.roles if item.column}
            for letter, header in reading.headers:
                combo = QComboBox()
                for role, words in _role_choices():
                    combo.addItem(words, role)
                item = by_column.get(letter)
                role = item.role if item is not None else "ignore"
                combo.setCurrentIndex(max(combo.findData(role), 0))
                label = f"{letter}: {header}"
                if item is not None and item.guessed:
                    label += " (guessed)"
                    combo.setToolTip(item.reason)
                form.addRow(label, combo)
                # A header typed twice (TP, FP, TP, TN) is chosen by its column's letter:
                # by its text, the choice would name the first of them.
                twice = sum(text == header for _, text in reading.headers) > 1
                self.combos.append((reading.sheet, letter if twice else header, combo, role))
            sheet_item = next(
                (item for item in reading.roles if item.role == "classifier" and not item.header),
                None,
            )
            name_combo = QComboBox()
            name_combo.addItem("not the classifier", False)
            name_combo.addItem("the classifier's name", True)
            name_combo.setCurrentIndex(1 if sheet_item is not None else 0)
            name_combo.setToolTip(
                "Without a classifier column, the sheet's name can name the classifier "
                "(a sheet 'Fraud' holds the rounds of the fraud classifier). Choose a "
                "classifier column above to name it otherwise."
            )
            form.addRow(f"The sheet's name '{reading.sheet}'", name_combo)
            self.sheet_name_checks[reading.sheet] = (name_combo, sheet_item is not None)
            layout.addWidget(box)
        layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(content)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        outer = QVBoxLayout(self)
        outer.addWidget(scroll, 1)
        outer.addWidget(buttons)
        self.resize(520, 560)

    def set_role(self, sheet: str, header: str, role: str) -> None:
        """Choose ``role`` for the column ``header`` of ``sheet`` (as a user would); a
        header typed twice is named by its column's letter."""
        for name, text, combo, _ in self.combos:
            if name == sheet and text == header:
                combo.setCurrentIndex(combo.findData(role))
                return
        raise KeyError((sheet, header))

    def choices(self) -> list[str]:
        """The earlier choices plus every change made here, as ``SHEET!ROLE=HEADER``."""
        changed: dict[tuple[str, str], str] = {}
        for sheet, header, combo, started in self.combos:
            role = combo.currentData()
            if role != started:
                changed[(sheet, header)] = ColumnChoice(
                    role=role, header=header, sheet=sheet
                ).to_text()
        for sheet, (combo, named_by_sheet) in self.sheet_name_checks.items():
            wanted = combo.currentData()
            has_column = any(
                name == sheet and c.currentData() == "classifier" for name, _, c, _ in self.combos
            )
            if wanted and not named_by_sheet and not has_column:
                changed[(sheet, "")] = ColumnChoice(
                    role="classifier", header="", sheet=sheet
                ).to_text()
        kept = []
        for text in self._earlier:
            choice = ColumnChoice.parse(text)
            if (choice.sheet or "", choice.header) not in {(s, h) for s, h in changed}:
                kept.append(text)
        return kept + list(changed.values())
