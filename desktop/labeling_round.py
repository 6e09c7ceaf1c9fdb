"""The round loop on the lead's own items, in the app: draw, label, read back, top up.

* :class:`ItemSampleDialog` opens an item list (counts per stratum, offered as the Plan's
  population), draws the selection rule's sample of the Plan's recommended sizes and saves
  the labeling workbook; in top-up mode it draws only the next items of an earlier round.
* :func:`read_labeled_round` reads labeled workbooks back: the round joins the Rounds
  panel, the Evaluate tab shows it, and when a target margin is missed the summary offers
  a top-up of the sizes a plan from this round asks for.

Everything slow (counting a 10-million-row list, drawing, reading) runs off the GUI thread
with progress and Cancel (:func:`desktop.workers.run_with_progress`); the work itself is
``core.items``, ``core.selection`` and ``core.workbook.labeling``, the same code as
``prplanner select`` and ``prplanner labels``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QDate, QEvent, QPoint, Qt
from PySide6.QtGui import QActionGroup
from PySide6.QtWidgets import (
    QCheckBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from core.errors import InputError
from core.progress import Cancelled
from core.session import PopulationInputs, is_example_ensemble
from core.workbook.labeling import MAX_CATEGORY_LENGTH, LabelsDisagree, draw_mark, largest_draw
from core.workbook.rounds import EARLIEST_ROUND_DATE
from core.workbook.session_io import LABELED_SHEET, lead_ensemble

# mypy finds modules by folder and cannot follow pyproject's package-dir mapping of
# resources/ to desktop.resources, so it sees no such module.
from desktop import formatting, resources  # type: ignore[attr-defined]
from desktop.widgets import keep_wrapped_height

if TYPE_CHECKING:
    from core.items import ItemColumns, ItemSummary
    from core.round_targets import DrawTopUp, TargetCheck, Targets, TopUpChance
    from core.selection import Selection
    from core.workbook.labeling import (
        ClassifierLabels,
        LabelingWorkbook,
        OpenItemsSwing,
    )
    from core.workbook.rounds import Round

from core.round_targets import SURER_CHANCE
from core.round_targets import chance_in_words as chance_words

logger = logging.getLogger(__name__)

#: The column fields of the draw dialog remembered from one draw to the next (settings
#: ``draw_columns``).
DRAW_COLUMN_FIELDS = ("id", "predicted", "score", "threshold", "keep", "classifiers")
ITEM_LIST_FILTER = "Item lists (*.csv *.tsv *.txt *.gz *.parquet *.xlsx);;All files (*)"
LABELED_FILTER = "Labeling workbooks (*.xlsx);;All files (*)"
#: A plain note's colour beside a warning in red (the message has one style sheet).
NOTE_COLOUR = "#202020"
#: Spin boxes hold an int; no stratum of a real list is larger.
MAX_SIZE = 2**31 - 1
#: Failures of reading an item list or a workbook that are the input's, not ours.
INPUT_FAILURES = (InputError, OSError, ValueError, OverflowError, MemoryError)


def _columns_text(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


class ItemSampleDialog(QDialog):
    """Draw a labeling round's sample from an item list and save the labeling workbook.

    Parameters
    ----------
    window : MainWindow
        Runs the slow work (``_in_background``), owns the session and the status bar.
    n_pos, n_neg : int
        The sizes offered (the Plan tab's, or a top-up's new totals).
    earlier : LabelingWorkbook, optional
        Top-up mode: the round's latest labeling workbook. Its seed and columns are kept;
        only items not drawn before are written.
    item_list : Path, optional
        The item list to open at once.
    sizes_from : str, optional
        Which plan the sizes are (:meth:`desktop.plan_tab.PlanTab.sample_sizes`), shown
        in the dialog. Sizes from a plan follow it when the counted list becomes its
        population, until the user changes them; other sizes stay as given.
    """

    def __init__(
        self,
        window,
        *,
        n_pos: int,
        n_neg: int,
        earlier: LabelingWorkbook | None = None,
        item_list: Path | None = None,
        sizes_from: str | None = None,
    ):
        super().__init__(window)
        self.setObjectName("item_sample_dialog")
        self._window = window
        self._earlier = earlier
        #: The sizes follow the plan (they came from it and the user has not changed them).
        self._sizes_follow_plan = sizes_from is not None
        #: The spin boxes are being set by the dialog, not the user.
        self._setting_sizes = False
        self._path: Path | None = None
        self.summary: ItemSummary | None = None
        self.written: Path | None = None
        self.selection: Selection | None = None
        top_up = earlier is not None
        self.setWindowTitle("Top up the round" if top_up else "Draw a sample from an item list")
        self.setMinimumWidth(560)

        intro = QLabel(self)
        keep_wrapped_height(intro)
        if earlier is not None:
            from core.workbook.labeling import round_name

            design = earlier.design
            intro.setText(
                f"Top up round <b>{formatting.short_text(round_name([earlier]), 80)}</b> "
                f"(read from {formatting.short_text(earlier.path.name, 80)}): "
                f"{design.primary.n_pos:,} + {design.primary.n_neg:,} items were drawn with "
                f"seed {design.seed} from {formatting.short_text(design.file_name, 80)}. Give "
                "the new totals; only the additional items (the next ones in the same random "
                "order) go into the new workbook."
            )
        else:
            intro.setText(
                "Pick your item list. PR Planner counts the flagged (predicted positive) and "
                "unflagged items, draws the sample by a rule anyone can repeat from the "
                "seed, and writes a workbook for the editors to label."
            )

        file_row = QHBoxLayout()
        self.file_edit = QLineEdit(self)
        self.file_edit.setReadOnly(True)
        self.file_edit.setPlaceholderText(
            "no item list chosen"
            if earlier is None
            else f"choose {earlier.design.file_name}, the list this round was drawn from"
        )
        self.choose_button = QPushButton("Choose item list…", self)
        self.choose_button.clicked.connect(self.choose_item_list)
        file_row.addWidget(self.file_edit, 1)
        file_row.addWidget(self.choose_button)

        columns_box = QGroupBox(
            "Columns (leave empty to find them by name, or pick them with the arrows)", self
        )
        columns = QFormLayout(columns_box)
        self.id_edit = QLineEdit(self)
        self.id_edit.setPlaceholderText("item_id, id or item id")
        self.predicted_edit = QLineEdit(self)
        self.predicted_edit.setPlaceholderText("predicted, prediction or pred (0/1, yes/no)")
        self.score_edit = QLineEdit(self)
        self.score_edit.setPlaceholderText("or a score column …")
        self.threshold_edit = QLineEdit(self)
        self.threshold_edit.setPlaceholderText("… and its threshold (score ≥ threshold is +)")
        self.keep_edit = QLineEdit(self)
        self.keep_edit.setPlaceholderText("columns the editors need, e.g. subject, link")
        self.keep_edit.textChanged.connect(self._on_keep_changed)
        self.classifiers_edit = QLineEdit(self)
        self.classifiers_edit.setPlaceholderText("flag columns of the same category's classifiers")
        self.classifiers_edit.setToolTip(
            "Flag columns of further classifiers of the same category (model versions, an "
            "ensemble's members). The editors give each item one label, and every classifier "
            "is judged by it: a classifier of another category needs a draw of its own."
        )
        #: The list's column names once its header has been read (the pickers offer them),
        #: and the list they are of.
        self._headers: tuple[str, ...] = ()
        self._headers_path: Path | None = None
        self._pickers = [
            self._add_picker(self.id_edit, "item id"),
            self._add_picker(self.predicted_edit, "predicted label", clears=self.score_edit),
            self._add_picker(self.score_edit, "score", clears=self.predicted_edit),
            self._add_picker(self.keep_edit, "columns for the editors", several=True),
            self._add_picker(self.classifiers_edit, "other classifiers", several=True),
        ]
        columns.addRow("Item id", self.id_edit)
        columns.addRow("Predicted", self.predicted_edit)
        columns.addRow("Score", self.score_edit)
        columns.addRow("Threshold", self.threshold_edit)
        columns.addRow("Keep for labelers", self.keep_edit)
        columns.addRow("Other classifiers", self.classifiers_edit)
        self.classifiers_note = QLabel(
            "The editors give each item one label, and every classifier is judged by it: "
            "name only classifiers of the same category here.",
            self,
        )
        keep_wrapped_height(self.classifiers_note)
        columns.addRow(self.classifiers_note)
        self.classifiers_edit.textChanged.connect(
            lambda text: self.classifiers_note.setVisible(bool(text.strip()))
        )
        self.classifiers_note.setVisible(False)
        self.count_button = QPushButton("Count the items again", self)
        self.count_button.setToolTip("Read the list again with the columns above")
        self.count_button.clicked.connect(self.count_items)
        columns.addRow(self.count_button)
        for edit in self._column_edits().values():
            edit.installEventFilter(self)  # Return counts (see eventFilter)
        if earlier is not None:  # the earlier draw fixed the columns
            design = earlier.design
            self.id_edit.setText(design.id_column)
            primary = design.primary
            if primary.name != primary.column and " >= " in primary.name:
                self.score_edit.setText(primary.column)
                self.threshold_edit.setText(primary.name.rpartition(" >= ")[2])
            else:
                self.predicted_edit.setText(primary.column)
            self.classifiers_edit.setText(", ".join(d.column for d in design.designs[1:]))
            # The editors of the top-up see the columns they saw before (editable).
            self.keep_edit.setText(", ".join(earlier.kept_columns))
            for edit in (self.id_edit, self.predicted_edit, self.score_edit):
                edit.setReadOnly(True)
            for edit in (self.threshold_edit, self.classifiers_edit):
                edit.setReadOnly(True)
            for picker in self._pickers[:3] + self._pickers[4:]:
                picker.setVisible(False)

        self.counts_label = QLabel(self)
        self.counts_label.setObjectName("item_counts")
        keep_wrapped_height(self.counts_label)
        self.counts_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.use_population_button = QPushButton("Use as the Plan's population", self)
        self.use_population_button.setToolTip(
            "Put these counts into the Plan tab's population (one undo step)"
        )
        self.use_population_button.setEnabled(False)
        self.use_population_button.clicked.connect(self.use_as_population)
        self.use_ensemble_button = QPushButton("Use on the Ensemble tab", self)
        self.use_ensemble_button.setToolTip(
            "Put the flagged counts and overlaps of these classifiers into the Ensemble tab, "
            "which plans each one's precision sample reusing the main classifier's labels "
            "(one undo step)"
        )
        self.use_ensemble_button.setVisible(False)
        self.use_ensemble_button.clicked.connect(self.use_on_ensemble_tab)

        sample_box = QGroupBox("Sample", self)
        sample = QFormLayout(sample_box)
        self.sizes_note = QLabel(self)
        self.sizes_note.setObjectName("sizes_from")
        keep_wrapped_height(self.sizes_note)
        self.sizes_note.setVisible(sizes_from is not None)
        self._show_sizes_from(sizes_from)
        sample.addRow(self.sizes_note)
        #: The sizes the dialog was given (a plan's), quoted once the user changes them.
        self._plan_sizes = (n_pos, n_neg)
        self.n_pos_spin = QSpinBox(self)
        self.n_neg_spin = QSpinBox(self)
        for spin, value in ((self.n_pos_spin, n_pos), (self.n_neg_spin, n_neg)):
            spin.setRange(1, MAX_SIZE)
            spin.setGroupSeparatorShown(True)
            spin.setValue(max(1, min(int(value), MAX_SIZE)))
            spin.valueChanged.connect(self._on_size_changed)
        # Two names: what the editors are asked about ("card fraud"), and the classifier
        # the round is filed under ("fraud_model_v3"). One field did both, and the editors
        # were asked whether an item "belongs to fraud_model_v3" (trial 14).
        self.category_edit = QLineEdit(self)
        self.category_edit.setObjectName("category")
        self.category_edit.setPlaceholderText("what the editors decide, e.g. card fraud")
        self.category_edit.setToolTip(
            "Named in the editors' instructions: positive means the item belongs to it"
        )
        self.category_edit.setMaxLength(MAX_CATEGORY_LENGTH)
        self.classifier_edit = QLineEdit(self)
        self.classifier_edit.setObjectName("filed_under")
        self.classifier_edit.setPlaceholderText("the classifier's name in your rounds")
        self.classifier_edit.setToolTip(
            "The classifier the round is filed under when the labels are read back, so the "
            "History tab and the comparisons pair it with its earlier rounds (the editors "
            "do not see it)"
        )
        self.classifier_edit.setMaxLength(MAX_CATEGORY_LENGTH)
        if earlier is not None:
            self.category_edit.setText(earlier.design.category)
            self.classifier_edit.setText(earlier.design.filed_under)
        else:
            # The lead's own rounds: the next round is most likely of the classifier of the
            # round the Plan builds on (else the one the Evaluate tab shows), and the round
            # read back is filed under this name, so the History tab and the comparisons
            # pair it with the earlier ones (the example's rounds are not the lead's).
            from core.workbook.session_io import previous_round_of

            state = window.session.state
            planned_from = previous_round_of(state) if state.plan.belief == "previous" else None
            current = planned_from or next(
                (item for item in state.rounds if _key(item) == state.current_round), None
            )
            own = current is not None and not resources.is_example_round(current)
            if own and current is not None and current.classifier:
                # The category starts as the classifier's name too (change it to what the
                # editors decide; the filing keeps the classifier's).
                self.classifier_edit.setText(current.classifier)
                self.category_edit.setText(
                    window.remembered_draw_category(current.classifier) or current.classifier
                )
        # The month a round stands for is the item list's, not the day the lead got round
        # to drawing it: three months caught up in one day sat on one point of the History
        # tab, and the rounds workbook could only be mended by hand (trial 16).
        self.round_date_edit = QDateEdit(self)
        self.round_date_edit.setObjectName("round_date")
        self.round_date_edit.setCalendarPopup(True)
        self.round_date_edit.setDisplayFormat("yyyy-MM-dd")
        first = EARLIEST_ROUND_DATE  # what the rounds reader takes back
        self.round_date_edit.setMinimumDate(QDate(first.year, first.month, first.day))
        self.round_date_edit.setDate(QDate.currentDate())
        self.round_date_edit.setToolTip(
            "The date of the round in your rounds and on the History tab: today, or the "
            "last day of the period the item list covers"
        )
        if earlier is not None:  # a top-up belongs to the round it tops up
            day = earlier.design.round_date or earlier.design.created
            if day is not None:
                self.round_date_edit.setDate(QDate(day.year, day.month, day.day))
            self.round_date_edit.setEnabled(False)
        self.seed_edit = QLineEdit(self)
        self.seed_edit.setPlaceholderText("empty: a random seed, recorded in the workbook")
        if earlier is not None:
            self.seed_edit.setText(str(earlier.design.seed))
            self.seed_edit.setReadOnly(True)
        self.blind_check = QCheckBox("Hide from the editors which items were flagged", self)
        self.blind_check.setChecked(True)
        self.blind_check.setToolTip(
            "Blind labeling: flagged and unflagged items are mixed in one random order"
        )
        total = "New total, flagged" if top_up else "Flagged items (pred +)"
        sample.addRow(total, self.n_pos_spin)
        sample.addRow(
            total.replace("flagged", "unflagged")
            .replace("Flagged", "Unflagged")
            .replace("pred +", "pred −"),
            self.n_neg_spin,
        )
        # What the draw's other classifiers need, from their latest rounds (trial 19: promo
        # missed its precision margin at the main classifier's sizes).
        self.others_note = QLabel(self)
        self.others_note.setObjectName("others_need")
        self.others_note.setTextFormat(Qt.TextFormat.RichText)
        keep_wrapped_height(self.others_note)
        self.others_note.setVisible(False)
        self.serve_all_button = QPushButton("Sizes for every classifier", self)
        self.serve_all_button.setObjectName("serve_all")
        self.serve_all_button.setToolTip(
            "Raise the sizes to what the classifier that needs the most asks for, so that "
            "every classifier of the draw meets the targets"
        )
        self.serve_all_button.setVisible(False)
        self.serve_all_button.clicked.connect(self.serve_every_classifier)
        sample.addRow(self.others_note)
        sample.addRow(self.serve_all_button)
        #: :func:`core.round_targets.further_classifier_needs` for the counted list.
        self._needs: tuple = ()
        sample.addRow("Category checked", self.category_edit)
        sample.addRow("Filed under classifier", self.classifier_edit)
        sample.addRow("Round date", self.round_date_edit)
        sample.addRow("Seed", self.seed_edit)
        sample.addRow(self.blind_check)
        self.blind_note = QLabel(self)
        self.blind_note.setObjectName("blind_note")
        keep_wrapped_height(self.blind_note)
        sample.addRow(self.blind_note)
        for spin in (self.n_pos_spin, self.n_neg_spin):
            spin.valueChanged.connect(self._show_blindness)
        self.blind_check.toggled.connect(self._show_blindness)
        self._show_blindness()
        self.targets_note = QLabel(self)
        self.targets_note.setObjectName("targets_note")
        keep_wrapped_height(self.targets_note)
        self._show_targets()
        # The Plan's margins may change while the dialog is open (it is not modal).
        window.session.changed.connect(self._on_session_changed)
        sample.addRow(self.targets_note)

        self.message = QLabel(self)
        self.message.setObjectName("item_message")
        keep_wrapped_height(self.message)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        buttons = QDialogButtonBox(self)
        self.draw_button = buttons.addButton(
            "Draw and save labeling workbook…", QDialogButtonBox.ButtonRole.AcceptRole
        )
        self.draw_button.setEnabled(False)
        self.draw_button.clicked.connect(lambda: self.draw_and_save())
        close = buttons.addButton(QDialogButtonBox.StandardButton.Close)
        close.clicked.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(file_row)
        layout.addWidget(columns_box)
        layout.addWidget(self.counts_label)
        population_row = QHBoxLayout()
        population_row.addWidget(self.use_population_button)
        population_row.addWidget(self.use_ensemble_button)
        population_row.addStretch(1)
        layout.addLayout(population_row)
        layout.addWidget(sample_box)
        layout.addWidget(self.message)
        # Spare height goes below the messages, not in bands between the parts (trial 16).
        layout.addStretch(1)
        layout.addWidget(buttons)
        if item_list is not None:
            self.set_item_list(item_list)

    # --- column pickers --------------------------------------------------------------

    def _add_picker(
        self, edit: QLineEdit, what: str, *, several: bool = False, clears: QLineEdit | None = None
    ):
        """A drop-down arrow in ``edit`` listing the item list's columns: a lead picks the
        column rather than typing its name exactly. ``several``: each pick adds the column
        to (or takes it out of) the comma-separated list; ``clears``: the field of the
        alternative (a predicted label or a score, never both)."""
        icon = self.style().standardIcon(QStyle.StandardPixmap.SP_ArrowDown)
        action = edit.addAction(icon, QLineEdit.ActionPosition.TrailingPosition)
        action.setToolTip(f"Pick the {what} column from the list's columns")
        action.setEnabled(False)
        action.triggered.connect(lambda: self._show_picker(edit, several, clears))
        return action

    def _show_picker(self, edit: QLineEdit, several: bool, clears: QLineEdit | None) -> None:
        menu = self._picker_menu(edit, several)
        chosen = menu.exec(edit.mapToGlobal(QPoint(0, edit.height())))
        header = None if chosen is None else str(chosen.data())
        menu.deleteLater()  # one menu per click: not kept under the field (review 14)
        if header is not None:
            self.pick_column(edit, header, several=several, clears=clears)

    def pick_column(
        self,
        edit: QLineEdit,
        header: str,
        *,
        several: bool = False,
        clears: QLineEdit | None = None,
    ) -> None:
        """Put the picked ``header`` into ``edit`` (see :meth:`_add_picker`) and count the
        list again with it."""
        if several:
            names = list(_columns_text(edit.text()))
            if header in names:
                names.remove(header)
            else:
                names.append(header)
            edit.setText(", ".join(names))
        else:
            edit.setText(header)
            if clears is not None:
                clears.clear()
                if clears is self.score_edit:  # a prediction column needs no threshold
                    self.threshold_edit.clear()
        if edit is self.keep_edit:
            return  # _on_keep_changed
        if edit is self.score_edit and not self.threshold_edit.text().strip():
            # The counts shown were the prediction column's: not these columns' (review 14).
            self.summary = None
            self.counts_label.clear()
            self.draw_button.setEnabled(False)
            self.use_population_button.setEnabled(False)
            self.use_ensemble_button.setVisible(False)
            self.threshold_edit.setFocus()
            self._say("Give the score's threshold (a score at or above it is flagged).")
            return
        self.count_items()

    def _picker_menu(self, edit: QLineEdit, several: bool) -> QMenu:
        """The menu of the list's columns for ``edit`` (the ones chosen are ticked)."""
        menu = QMenu(edit)
        menu.setObjectName("column_picker")
        chosen = set(_columns_text(edit.text())) if several else {edit.text().strip()}
        # One column: radio marks (a group of exclusive actions); several: check marks.
        group = None if several else QActionGroup(menu)
        for header in self._headers:
            action = menu.addAction(formatting.short_text(header, 60))
            action.setData(header)
            action.setCheckable(True)
            if group is not None:
                group.addAction(action)
            action.setChecked(header in chosen)
            if several and "," in header:
                # The field is a comma-separated list; such a name cannot be given in it.
                action.setEnabled(False)
                action.setToolTip("The name holds a comma: rename the column to use it here")
        return menu

    def _show_headers(self, headers: Sequence[str]) -> None:
        """Offer ``headers`` in the column pickers; an empty ``headers`` (a refusal that read
        no header, such as a threshold without a score) keeps the ones already offered."""
        shown = tuple(str(header) for header in headers if str(header).strip())
        if shown or self._path != self._headers_path:
            self._headers = shown
            self._headers_path = self._path
        for picker in self._pickers:
            picker.setEnabled(bool(self._headers))

    # --- the item list ---------------------------------------------------------------

    def choose_item_list(self) -> bool:
        name, _filter = QFileDialog.getOpenFileName(
            self, "Choose the item list", str(self._window.item_folder()), ITEM_LIST_FILTER
        )
        return bool(name) and self.set_item_list(Path(name))

    def _on_keep_changed(self) -> None:
        """The counts do not depend on what the editors see; the note that they would see
        only ids does, picked or typed (trial 21: typed, the note stayed)."""
        if self.summary is not None:
            self._show_counts(self.summary)

    def _column_edits(self) -> dict[str, QLineEdit]:
        """The column fields by :data:`DRAW_COLUMN_FIELDS` key."""
        edits = (
            self.id_edit,
            self.predicted_edit,
            self.score_edit,
            self.threshold_edit,
            self.keep_edit,
            self.classifiers_edit,
        )
        return dict(zip(DRAW_COLUMN_FIELDS, edits, strict=True))

    def _column_texts(self) -> dict[str, str]:
        return {key: edit.text().strip() for key, edit in self._column_edits().items()}

    def eventFilter(self, watched, event) -> bool:
        """Return in a column field counts the list again with the columns as typed: it
        did nothing until the button was found (trial 17), and once the list was counted
        it pressed the dialog's default button, Draw and save."""
        if (
            event.type() == QEvent.Type.KeyPress
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and watched in self._column_edits().values()
        ):
            if self._path is not None and self._earlier is None:
                self.count_items()
            return True
        return super().eventFilter(watched, event)

    def unfinished_choice(self) -> tuple[Path, dict[str, str]] | None:
        """The item list and column fields of a new draw closed before drawing (None
        when it drew, is a top-up, or has no list)."""
        if self.written is not None or self._earlier is not None or self._path is None:
            return None
        return self._path, self._column_texts()

    def take_up(self, path: Path, texts: dict[str, str]) -> bool:
        """Start from an :meth:`unfinished_choice`: its column fields, then its list
        counted (False: the list is gone or refused now, reason shown)."""
        for key, edit in self._column_edits().items():
            edit.setText(texts.get(key, ""))
        if not Path(path).is_file():
            self._say(f"{Path(path).name} is no longer there; choose the item list again.")
            return False
        return self.set_item_list(path)

    def set_item_list(self, path: Path) -> bool:
        """Use ``path`` as the item list and count it (False: refused, reason shown).

        A new draw with its column fields still empty starts from the columns of the
        lead's last draw (next month's export has the same columns; the lead picked all
        five again after a restart; trial 15); when this list lacks one of them, the
        columns are guessed as before and the dialog says so."""
        from core.items import ColumnNotFoundError

        self._path = Path(path)
        self.file_edit.setText(str(self._path))
        self._window.remember_item_list(self._path, counted=False)
        remembered = self._window.remembered_draw_columns()
        edits = self._column_edits()
        if self._earlier is not None or not remembered or any(self._column_texts().values()):
            return self.count_items()
        for key, text in remembered.items():
            edits[key].setText(text)
        if self.count_items():
            # Added to what the count said about the sizes, never in its place: the warning
            # that the sizes were planned for another list went unseen from week 2 on
            # (trial 18).
            self._warn_about_sizes(
                self.summary,
                note="The columns of your last draw are filled in; change any that differ.",
            )
            return True
        if not isinstance(self._last_failure, ColumnNotFoundError):
            return False  # the list's own problem, said: not the remembered columns
        for edit in edits.values():
            edit.clear()
        counted = self.count_items()
        if counted:
            self._warn_about_sizes(
                self.summary,
                note=f"{html.escape(self._path.name)} does not have every column of your last "
                "draw; its columns were guessed from their names: check them.",
            )
        return counted

    def columns(self) -> ItemColumns:
        """The columns as typed (refused with an InputError when they contradict)."""
        from core.items import ItemColumns

        threshold_text = self.threshold_edit.text().strip()
        threshold = None
        if threshold_text:
            try:
                threshold = float(threshold_text.replace(",", "."))
            except ValueError:
                hint = ""
                number = threshold_text.removesuffix("%").strip().replace(",", ".")
                if threshold_text.endswith("%") and re.fullmatch(r"\d+(\.\d*)?", number):
                    # Which scale the scores are on the app cannot tell from "70%".
                    hint = (
                        f": write it on the score column's scale, without the % sign "
                        f"({float(number) / 100:g} for scores from 0 to 1, {float(number):g} "
                        "for scores from 0 to 100)"
                    )
                raise InputError(
                    f"the threshold must be a number, got {threshold_text!r}{hint}"
                ) from None
        return ItemColumns(
            id=self.id_edit.text().strip() or None,
            predicted=self.predicted_edit.text().strip() or None,
            score=self.score_edit.text().strip() or None,
            threshold=threshold,
            classifiers=_columns_text(self.classifiers_edit.text()),
            keep=_columns_text(self.keep_edit.text()),
        )

    def count_items(self) -> bool:
        """Count the list's items per stratum (every row checked), off the GUI thread."""
        from core.items import ColumnNotFoundError, count_items

        self.summary = None
        self._last_failure: BaseException | None = None
        self._needs = ()  # of the list counted before; said again once this one is counted
        self._show_other_needs()
        self.draw_button.setEnabled(False)
        self.use_population_button.setEnabled(False)
        self.use_ensemble_button.setVisible(False)
        if self._path is None:
            return False
        path = self._path
        try:
            columns = self.columns()
            summary = self._window._in_background(
                f"Counting the items of {path.name}…",
                lambda: count_items(path, columns),
                cancellable=True,
            )
        except Cancelled:
            self._say(f"Counting {path.name} was cancelled.", error=True)
            self.counts_label.clear()
            return False
        except INPUT_FAILURES as exc:
            self._last_failure = exc
            self.counts_label.clear()
            headers = getattr(exc, "headers", ())
            self._show_headers(headers)
            text = _named_once([path], _plain(exc))
            if headers and isinstance(exc, ColumnNotFoundError):
                text = f"{text.rstrip('.')}. Or pick it with the arrow at the right of the field."
            self._say(text, error=True)
            return False
        self.summary = summary
        self._window.remember_item_list(path)  # counted: one of the lead's lists
        self._show_headers(summary.headers)
        self._show_counts(summary)
        self.use_population_button.setEnabled(self._earlier is None)
        self.use_ensemble_button.setVisible(bool(summary.classifiers) and self._earlier is None)
        self.draw_button.setEnabled(True)
        self._needs = self._further_needs(summary)
        self._show_other_needs()
        self._warn_about_sizes(summary)
        return True

    def _further_needs(self, summary) -> tuple:
        """What the draw's other classifiers with a round in the session need (none for a
        top-up, which is sized by its own round)."""
        from core.round_targets import further_classifier_needs

        if not summary.classifiers or self._earlier is not None:
            return ()
        counts = [(count.name, count.population_pos, count.population_neg)
                  for count in summary.classifiers]  # fmt: skip
        state = self._window.session.state
        try:
            # A third of a second per classifier: off the GUI thread, as the count was.
            return self._window._in_background(
                "Planning the other classifiers…",
                lambda: further_classifier_needs(state, counts),
                cancellable=True,
            )
        except (InputError, Cancelled):
            return ()  # a plan that cannot be made here is the Plan tab's to say

    def _show_other_needs(self) -> None:
        """Say which other classifier the sizes leave short of the targets, and offer the
        sizes that serve every one; or that they all meet them."""
        needs = self._needs
        n_pos, n_neg = self.n_pos_spin.value(), self.n_neg_spin.value()
        short = [need for need in needs if need.n_pos > n_pos or need.n_neg > n_neg]

        def named(need) -> str:
            return html.escape(formatting.short_text(need.name, 40), quote=False)

        if short:
            who = " and ".join(f"<b>{named(need)}</b>" for need in short)
            parts = [
                f"{named(need)} needs about {need.n_pos:,} flagged and {need.n_neg:,} "
                f"unflagged (planned from {html.escape(need.planned_from, quote=False)})"
                for need in short
            ]
            wanted = self._sizes_for_all()
            text = (
                f"<span style='color:#8a5a00'>At these sizes {who} would miss the targets: "
                + "; ".join(parts)
                + f". <b>Sizes for every classifier</b> sets {wanted[0]:,} flagged and "
                f"{wanted[1]:,} unflagged.</span>"
            )
        elif needs:
            text = (
                "The draw's other classifiers meet the targets at these sizes too (planned "
                "from their latest rounds: "
                + "; ".join(
                    f"{named(need)} needs about {need.n_pos:,} and {need.n_neg:,}" for need in needs
                )
                + ")."
            )
        else:
            text = ""
        self.others_note.setText(text)
        self.others_note.setVisible(bool(text))
        self.serve_all_button.setVisible(bool(short))

    def _sizes_for_all(self) -> tuple[int, int]:
        """The smallest sizes at least as large as the spin boxes' and every need (a
        larger sample of a stratum never widens a margin)."""
        n_pos = max([self.n_pos_spin.value(), *(need.n_pos for need in self._needs)])
        n_neg = max([self.n_neg_spin.value(), *(need.n_neg for need in self._needs)])
        return n_pos, n_neg

    def serve_every_classifier(self) -> None:
        """Raise the sizes to what every classifier of the draw needs (the user's sizes
        from then on, said in the sizes note)."""
        n_pos, n_neg = self._sizes_for_all()
        self.n_pos_spin.setValue(min(n_pos, MAX_SIZE))
        self.n_neg_spin.setValue(min(n_neg, MAX_SIZE))
        self.sizes_note.setText(
            f"The sizes below serve every classifier of the draw: {n_pos:,} flagged and "
            f"{n_neg:,} unflagged."
        )
        self.sizes_note.setVisible(True)

    def _show_counts(self, summary) -> None:
        """The counted strata per classifier, and whether the editors would see only ids."""
        lines = [
            f"<b>{formatting.short_text(summary.file_name, 80)}</b>: {summary.rows:,} items; "
            f"<b>{summary.population_pos:,}</b> flagged (predicted positive, N1) and "
            f"<b>{summary.population_neg:,}</b> unflagged (predicted negative, N0)."
        ]
        for count in summary.classifiers:
            shared = (
                f" ({count.flagged_by_main:,} of them flagged by "
                f"{formatting.short_text(summary.primary.name, 40)} too)"
                if count.flagged_by_main is not None
                else ""
            )
            lines.append(
                f"{formatting.short_text(count.name, 60)}: {count.population_pos:,} flagged"
                f"{shared}, {count.population_neg:,} unflagged."
            )
        from core.items import id_found_by_alias

        column = summary.id_column
        if column and not self.id_edit.text().strip() and not id_found_by_alias(column):
            lines.append(
                f"Item ids from column <b>{html.escape(formatting.short_text(column, 60))}"
                "</b>, the one named like an id (pick another with the arrow of "
                "<i>Item id</i>)."
            )
        if summary.other_columns and not _columns_text(self.keep_edit.text()):
            # A new user leaves the field empty: the editors would see bare ids.
            shown = ", ".join(formatting.short_text(name, 30) for name in summary.other_columns[:6])
            more = ", …" if len(summary.other_columns) > 6 else ""
            lines.append(
                "<span style='color:#8a5a00'>The editors will see only the item id. The "
                f"list also has {html.escape(shown)}{more}: pick the ones they need with the "
                "arrow of <i>Keep for labelers</i>.</span>"
            )
        self.counts_label.setText("<br>".join(lines))
        self._grow_to_fit()

    def _planned_for_another_population(self, summary) -> str:
        """Why the sizes, still the Plan's, do not fit the counted list: the Plan's
        population is another one ("" when it is this list's, or the sizes are the
        user's or a top-up's)."""
        if self._earlier is not None or not self._sizes_follow_plan:
            return ""
        plan = self._window.session.state.plan
        population = plan.population
        same_counts = population.mode == "counts" and (
            population.predicted_positive,
            population.predicted_negative,
        ) == (summary.population_pos, summary.population_neg)
        if same_counts and plan.fpc:
            return ""
        if same_counts:
            return (
                "The Plan tab has this list's counts but does not yet account for its size "
                "(finite population correction off). Press <b>Use as the Plan's "
                "population</b> to plan for this list before drawing: labeling a large "
                "share of it needs fewer labels."
            )
        if population.mode == "counts":
            planned = (
                f"{population.predicted_positive:,} flagged and "
                f"{population.predicted_negative:,} unflagged items"
            )
        else:
            planned = f"an imbalance k = {population.k:.4g}, not this list's counts"
        listed = summary.population_pos + summary.population_neg
        planned_total = (
            population.predicted_positive + population.predicted_negative
            if population.mode == "counts"
            else None
        )
        if planned_total is not None and listed < 0.9 * planned_total:
            why = "a smaller list needs fewer labels"
        else:
            why = "the plan then accounts for the list's own size and share of flagged items"
        return (
            f"The sizes below are planned for the Plan tab's population ({planned}), not "
            f"for this list ({summary.population_pos:,} and {summary.population_neg:,}). "
            f"Press <b>Use as the Plan's population</b> to plan for this list before "
            f"drawing: {why}."
        )

    def _warn_about_sizes(self, summary, note: str = "") -> None:
        """Say what is wrong with the sizes for this list, most pressing first, then
        ``note`` (rich text) in the ordinary colour."""
        too_large = self._too_large_warning(summary)
        elsewhere = self._planned_for_another_population(summary)
        self.use_population_button.setDefault(bool(elsewhere))
        if note and elsewhere:
            note = f"<span style='color:{NOTE_COLOUR}'>{note}</span>"
        self._say(
            "<br>".join(text for text in (too_large, elsewhere, note) if text),
            error=bool(elsewhere),
        )

    def _on_size_changed(self) -> None:
        if self.summary is not None and self._needs:
            self._show_other_needs()
        if self._setting_sizes:
            return
        self._sizes_follow_plan = False  # the user's sizes now; the plan no longer sets them
        if self._sizes_source is not None:
            plan_pos, plan_neg = self._plan_sizes
            self.sizes_note.setText(
                f"The sizes below are yours; {self._sizes_source} were {plan_pos:,} flagged "
                f"and {plan_neg:,} unflagged."
            )
        if self.summary is not None:
            self._warn_about_sizes(self.summary)

    def _show_blindness(self) -> None:
        """Say when the new items all come from one stratum: a top-up of the flagged items
        only cannot hide from the editors that every item was flagged."""
        earlier = self._earlier
        text = ""
        if earlier is not None and self.blind_check.isChecked():
            new_pos = self.n_pos_spin.value() - earlier.design.primary.n_pos
            new_neg = self.n_neg_spin.value() - earlier.design.primary.n_neg
            if new_pos > 0 >= new_neg or new_neg > 0 >= new_pos:
                which, other = (
                    ("a flagged", "unflagged") if new_pos > 0 else ("an unflagged", "flagged")
                )
                count = f"{max(new_pos, new_neg):,}"
                if len(earlier.design.designs) > 1:  # they top up their own strata too
                    main = earlier.design.designs[0].name
                    count = f"{count} for {main} and those the other classifiers need"
                text = (
                    f"Every new item is {which} one ({count}), so the editors "
                    f"can tell, and the workbook says so. To keep them blind, raise the "
                    f"{other} total a little: some {other} items are then mixed in (they also "
                    "add to the round)."
                )
        self.blind_note.setText(text)
        self.blind_note.setVisible(bool(text))

    def _show_sizes_from(self, source: str | None) -> None:
        self._sizes_source = source
        self.sizes_note.setText(
            f"The sizes below are {source}; change them if you like." if source else ""
        )

    def _set_sizes(self, n_pos: int, n_neg: int) -> None:
        """Set the spin boxes as the dialog (they still follow the plan afterwards)."""
        self._plan_sizes = (n_pos, n_neg)
        self._setting_sizes = True
        try:
            for spin, value in ((self.n_pos_spin, n_pos), (self.n_neg_spin, n_neg)):
                spin.setValue(max(1, min(int(value), MAX_SIZE)))
        finally:
            self._setting_sizes = False

    def _too_large_warning(self, summary) -> str:
        """What to do when the sizes asked for exceed a stratum of the counted list."""
        flagged = min([summary.population_pos] + [c.population_pos for c in summary.classifiers])
        unflagged = min([summary.population_neg] + [c.population_neg for c in summary.classifiers])
        wanted = []
        if self.n_pos_spin.value() > flagged:
            wanted.append(f"{self.n_pos_spin.value():,} flagged items (the list has {flagged:,})")
        if self.n_neg_spin.value() > unflagged:
            wanted.append(
                f"{self.n_neg_spin.value():,} unflagged items (the list has {unflagged:,})"
            )
        if not wanted:
            return ""
        return (
            f"The plan asks for {' and '.join(wanted)}. Use these counts as the plan's "
            "population (the plan then accounts for the list's size), or lower the sizes: "
            "at most every item of a stratum can be labeled."
        )

    def use_on_ensemble_tab(self) -> bool:
        """Make the counted classifiers the Ensemble tab's parent and children: the main
        classifier's flagged items as the parent's set, each other classifier's flagged
        items and their overlap with it (one undoable step)."""
        from core.session import EnsembleChild

        summary = self.summary
        if summary is None or not summary.classifiers:
            return False
        children = tuple(
            EnsembleChild(
                name=count.name, size=count.population_pos, overlap=count.flagged_by_main or 0
            )
            for count in summary.classifiers
        )
        # All at once: the parent's new size would refuse the old children's overlaps.
        ensemble = dataclasses.replace(
            self._window.session.state.ensemble,
            parent_name=summary.primary.name,
            parent_size=summary.population_pos,
            children=children,
        )
        refused = self._window.session.set_values(
            [("ensemble", ensemble)], text=f"Ensemble from {summary.file_name}"
        )
        if refused:
            self._say(refused, error=True)
            return False
        self._say(
            "The Ensemble tab now holds these classifiers. It answers another question than "
            "this draw: how many labels each classifier's precision alone needs when it "
            "reuses the main classifier's labels. The draw here gives every classifier its "
            "own precision and recall from one sample."
        )
        return True

    def use_as_population(self) -> bool:
        """Make the counted strata the Plan tab's population (one undoable step)."""
        summary = self.summary
        if summary is None:
            return False
        population = PopulationInputs(
            mode="counts",
            predicted_positive=summary.population_pos,
            predicted_negative=summary.population_neg,
            k=summary.population_pos / summary.population_neg,
        )
        # The sample is drawn without replacement from this very list: the correction is
        # exact, and the round will be judged with it.
        refused = self._window.session.set_values(
            [("plan.population", population), ("plan.fpc", True)],
            text=f"Population from {summary.file_name}",
        )
        if refused:
            self._say(refused, error=True)
            return False
        # The plan for the new population (the assured one when the lead set a chance): the
        # sliders were set for the old one.
        sizes = self._window.plan_tab.sample_sizes(prefer_sliders=False)
        before = (self.n_pos_spin.value(), self.n_neg_spin.value())
        if self._sizes_follow_plan:
            self._set_sizes(sizes.n_pos, sizes.n_neg)
            self._show_sizes_from(sizes.source)
            if (sizes.n_pos, sizes.n_neg) == before:
                text = (
                    "The Plan tab now plans for this population; its sizes stay "
                    f"{sizes.n_pos:,} + {sizes.n_neg:,}."
                )
            else:
                text = (
                    "The Plan tab now plans for this population, and the sizes below follow "
                    f"it: <b>{sizes.n_pos:,} + {sizes.n_neg:,}</b> (were {before[0]:,} + "
                    f"{before[1]:,})."
                )
        else:
            text = (
                "The Plan tab now plans for this population: it asks for "
                f"<b>{sizes.n_pos:,} + {sizes.n_neg:,}</b> ({sizes.source}). The sizes below "
                "are the ones set here; change them to follow the plan."
            )
        warning = self._too_large_warning(summary)
        self.use_population_button.setDefault(False)
        self._say(f"{text} {warning}" if warning else text)
        # The window's status bar still told of the previous round's population (trial 15).
        self._window.show_status(
            f"The Plan's population is now {summary.file_name}'s: "
            f"{summary.population_pos:,} flagged and {summary.population_neg:,} unflagged "
            "(Edit > Undo brings the earlier one back)"
        )
        return True

    # --- drawing ---------------------------------------------------------------------

    def _targets(self) -> Targets:
        """The Plan's target margins at the session's confidence, recorded in the workbook."""
        from core.round_targets import Targets

        return Targets.of(self._window.session.state)

    def _on_session_changed(self, path: str) -> None:
        if path in ("", "confidence") or path.startswith("plan"):
            self._show_targets()

    def _show_targets(self) -> None:
        self.targets_note.setText(
            f"The workbook records the Plan's targets ({self._targets().in_words()}); "
            "reading the labels back checks the round against them."
        )

    def _seed(self) -> int | None:
        from core.selection import validate_seed

        text = self.seed_edit.text().strip()
        return None if not text else validate_seed(text, "the seed")

    def filed_under(self) -> str:
        """The classifier the round will be filed under: the field, else the category."""
        return self.classifier_edit.text().strip() or self.category_edit.text().strip()

    def _round_stem(self, path: Path) -> str:
        """The suggested file name of a first draw, which names the round: the next in the
        lead's series for this category's classifier (``TR-09`` after ``TR-08``), else the
        item list's name (``items labels``)."""
        from core.workbook.rounds import same_classifier
        from core.workbook.session_io import next_round_name, previous_round_of

        state = self._window.session.state
        rounds = state.rounds
        classifier = self.filed_under()
        if classifier and any(same_classifier(item.classifier, classifier) for item in rounds):
            # A round drawn already and out with the editors has taken its name.
            drawn = [Path(entry).stem for entry in state.awaiting_labels]
            name = next_round_name(rounds, classifier, taken=drawn, after=previous_round_of(state))
            # A name typed as 2026/10 is no file name: characters no system allows go.
            name = re.sub(r'[\\/:*?"<>|]+', "-", name).strip(" .")
            if name:
                return name
        return f"{path.stem} labels"

    def draw_and_save(self, destination: Path | None = None) -> Path | None:
        """Draw the sample and write the labeling workbook (asking where when
        ``destination`` is None). Returns the workbook written, or None (reason shown)."""
        from core.selection import extend_sample, select_sample
        from core.workbook.labeling import write_labeling_workbook
        from core.workbook.safe_io import SaveError, check_destination, free_name

        path = self._path
        if path is None or self.summary is None:
            if self._earlier is not None:
                design = self._earlier.design
                self._say(
                    f"Choose the item list this round was drawn from, {design.file_name} "
                    f"(its SHA-256 starts {design.file_sha256[:12]}), with Choose item list…",
                    error=True,
                )
            else:
                self._say("Choose an item list first (Choose item list…).", error=True)
            return None
        from core.workbook.append_round import text_problem

        for field, text in (
            ("Category checked", self.category_edit.text()),
            ("Filed under classifier", self.classifier_edit.text()),
        ):
            # The rules every other name field follows: a pasted line break or a
            # right-to-left mark went into the workbook and the rounds (fuzz 17).
            found = text_problem(text) if text.strip() else None
            if found is not None:
                problem, remedy = found
                self._say(f"{field} {problem}; {remedy}. Nothing was drawn.", error=True)
                return None
        earlier = self._earlier
        sources = [path] + ([earlier.path] if earlier is not None else [])
        try:
            seed = self._seed()
            columns = self.columns()
        except InputError as exc:
            self._say(str(exc), error=True)
            return None
        n_pos, n_neg = self.n_pos_spin.value(), self.n_neg_spin.value()
        too_large = self._too_large_warning(self.summary)
        if too_large:  # said before a file name is asked for, not after
            self._say(too_large, error=True)
            return None
        if destination is None:
            folder = self._window.labeling_folder()
            if earlier is not None:
                # Beside the labeled copy, named after the draw rather than the copy: it
                # was offered in the item list's folder as "jan labeled top-up" (trial 16).
                drawn = Path(earlier.design.drawn_as).stem or earlier.path.stem
                stem = re.sub(r"( top-up)+( \d+)?$", "", drawn) + " top-up"
                folder = earlier.path.parent
            else:
                stem = self._round_stem(path)
            destination = self._window._ask_save_name(
                "Save the labeling workbook",
                free_name(folder, stem, ".xlsx"),
                failure_title="Cannot save the labeling workbook there",
                sources=sources,
                purpose="labels",
            )
            if destination is None:
                return None
        else:
            try:
                check_destination(destination, sources=sources, purpose="labels")
            except SaveError as exc:
                self._say(str(exc), error=True)
                return None
        if earlier is not None:
            design = earlier.design

            def draw() -> Selection:
                return extend_sample(
                    path,
                    columns,
                    seed=design.seed,
                    previous_ids=[place.id for place in earlier.sample],
                    previous_sizes={item.name: (item.n_pos, item.n_neg) for item in design.designs},
                    n_pos=n_pos,
                    n_neg=n_neg,
                )
        else:

            def draw() -> Selection:
                return select_sample(path, columns, n_pos=n_pos, n_neg=n_neg, seed=seed)

        try:
            selection = self._window._in_background(
                f"Drawing the sample from {path.name}…", draw, cancellable=True
            )
        except Cancelled:
            self._say("Drawing was cancelled; nothing was written.", error=True)
            return None
        except INPUT_FAILURES as exc:
            self._say(f"Nothing was written: {_plain(exc)}", error=True)
            return None
        blind = self.blind_check.isChecked()
        targets = self._targets()
        category = self.category_edit.text()
        classifier = self.classifier_edit.text()
        round_date: dt.date | None = self.round_date_edit.date().toPython()  # type: ignore[assignment]
        if self._earlier is not None:
            round_date = self._earlier.design.round_date
        self._show_targets()
        try:
            written = self._window._in_background(
                f"Writing {destination.name}…",
                lambda: write_labeling_workbook(
                    destination,
                    selection,
                    sources=sources,
                    blind=blind,
                    targets=targets,
                    category=category,
                    classifier=classifier,
                    round_date=round_date,
                ),
            )
        except INPUT_FAILURES as exc:
            self._say(f"{destination.name} was not written: {_plain(exc)}", error=True)
            return None
        self.selection, self.written = selection, written
        self._window.remember_labeling_folder(written)
        self.seed_edit.setText(str(selection.seed))
        self._await_labels(written)
        if earlier is None:
            self._window.remember_draw_columns(self._column_texts())
            self._window.remember_draw_category(
                self.classifier_edit.text(), self.category_edit.text()
            )
        what = "additional items" if earlier is not None else "items"
        self._say(
            f"Wrote <b>{formatting.short_text(written.name, 80)}</b>: "
            f"{len(selection.items):,} {what} to label (seed {selection.seed}"
            + (", drawn at random and recorded" if selection.seed_drawn else "")
            + "). Send it to the editors; when it comes back, use "
            "<b>File › Read labeled workbook…</b>"  # its ellipsis ends the sentence
        )
        self._window.show_status(
            f"Wrote {written.name}: {len(selection.items):,} {what} to label, seed {selection.seed}"
        )
        return written

    def _await_labels(self, written: Path) -> None:
        """Record in the session that ``written`` is out with the editors, so that a saved
        session, opened again, still says so (one undo step; the file stays)."""
        session = self._window.session
        entry = str(written.resolve())
        waiting = tuple(item for item in session.state.awaiting_labels if item != entry)
        session.set_values(
            [("awaiting_labels", (*waiting, entry))],
            text=f"Send {formatting.short_text(written.name, 40)} to the editors",
        )

    def _say(self, text: str, *, error: bool = False) -> None:
        self.message.setStyleSheet("color: #b00020;" if error else "")
        self.message.setText(text)
        self._grow_to_fit()

    def _grow_to_fit(self) -> None:
        """Grow when the counts or a message add lines: a shown dialog keeps its height
        and would squeeze the fields instead."""
        layout = self.layout()
        if layout is not None:
            layout.activate()
        wanted = self.sizeHint().height()
        if self.height() < wanted:
            self.resize(self.width(), wanted)


# --- reading labels back -----------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class LabeledRound:
    """What reading labeled workbooks gave: the round added and how it measures up.

    Attributes
    ----------
    workbooks : tuple of LabelingWorkbook
    labels : ClassifierLabels
        The main classifier's counts.
    round : Round
        The round added to the session.
    missed : tuple of str
        Target margins the round misses, in words (empty: both met).
    top_up : tuple of int or None
        Sample totals ``(n_pos, n_neg)`` to draw, when a margin is missed and the sample
        drawn is too small (:attr:`core.round_targets.TargetCheck.top_up`).
    needed : tuple of int or None
        Labels in all a plan from this round asks for, when a margin is missed and some
        sample of the population meets both (None: none does).
    chance : TopUpChance or None
        The chance that ``needed`` labels meet both targets, given the labels so far.
    chance_target : float
        The chance the top-up is sized for (the Plan's "Chance of meeting both margins";
        0: sized to meet the margins at the labeled rates).
    surer : TargetCheck or None
        The top-up for a :data:`SURER_CHANCE` chance, offered beside the one at the
        labeled rates when the Plan sets no chance (:func:`surer_check`).
    replaced : Round or None
        The earlier reading of the same draw that the round replaced in place (None: the
        round was added).
    also_read : tuple of Path
        Workbooks read before for this draw that were read again with those picked (a
        top-up picked on its own counts with the copies of the first draw).
    not_read_again : tuple of str
        Those that could not be read this time, each with why (their labels are missing).
    examples_removed : int
        Rounds of the bundled example taken out of the session with this, the lead's
        first round of their own (none to compare it with but their own).
    example_ensemble_removed : bool
        The example's classifiers left the Ensemble tab with them (the lead had not
        changed them).
    open_elsewhere : tuple of (str, str)
        The workbooks read that another program (an editor's spreadsheet) still has open,
        each with its lock file: labels typed there since the last save are not counted.
    further_checks : tuple of (str, TargetCheck)
        The draw's other classifiers (each with labels in both strata) against the same
        target margins.
    other_rounds : tuple of Round
        Their rounds as added to the session.
    targets : Targets or None
        The target margins the workbook records (now the Plan's); None when it records
        none and the round is judged by the Plan's margins as they were.
    confidence_before : float or None
        The session's confidence level before reading (the targets' level replaces it).
    """

    workbooks: tuple
    labels: ClassifierLabels
    round: Round
    missed: tuple[str, ...]
    top_up: tuple[int, int] | None
    needed: tuple[int, int] | None = None
    chance: TopUpChance | None = None
    chance_target: float = 0.0
    surer: TargetCheck | None = None
    replaced: Round | None = None
    targets: Targets | None = None
    confidence_before: float | None = None
    swings: tuple[OpenItemsSwing, ...] = ()
    also_read: tuple[Path, ...] = ()
    not_read_again: tuple[str, ...] = ()
    examples_removed: int = 0
    example_ensemble_removed: bool = False
    open_elsewhere: tuple[tuple[str, str], ...] = ()
    further_checks: tuple[tuple[str, TargetCheck], ...] = ()
    other_rounds: tuple[Round, ...] = ()

    @property
    def draw_top_up(self) -> DrawTopUp:
        """The top-up for every classifier of the draw (:func:`top_up_for_the_draw`)."""
        from core.round_targets import top_up_for_the_draw

        design = self.labels.design
        return top_up_for_the_draw(
            self.top_up, self.further_checks, (design.population_pos, design.population_neg)
        )

    @property
    def top_up_for_all(self) -> tuple[int, int] | None:
        """Sample totals that meet the targets for every classifier of the draw that a
        top-up of it can serve (the main one's top-up, raised for the others')."""
        return self.draw_top_up.sizes

    @property
    def verb(self) -> str:
        """What reading did to the Rounds panel, for the status bar and the summary."""
        if self.replaced is None:
            return "added"
        return "unchanged" if self.replaced == self.round else "updated"


def new_round(
    labels: ClassifierLabels,
    workbooks: Sequence[LabelingWorkbook],
    existing: Sequence[Round],
    classifier: str | None,
) -> Round:
    """The Rounds panel's row for ``labels`` (sheet :data:`LABELED_SHEET`, next free row)."""
    from core.workbook.labeling import round_date, round_name, round_notes
    from core.workbook.rounds import Round

    design = labels.design
    rows = [item.row for item in existing if item.sheet == LABELED_SHEET]
    k = design.population_pos / design.population_neg
    s = (labels.labeled_pos / labels.labeled_neg) / k if labels.labeled_neg else None
    return Round(
        sheet=LABELED_SHEET,
        row=max(rows, default=1) + 1,
        round=round_name(workbooks),
        date=round_date(workbooks),
        classifier=classifier,
        k=k,
        population_pos=design.population_pos,
        population_neg=design.population_neg,
        s=s,
        tp=labels.tp,
        fp=labels.fp,
        fn=labels.fn,
        tn=labels.tn,
        notes=round_notes(labels, workbooks, _targets_mark(workbooks)),
    )


def _targets_mark(workbooks: Sequence[LabelingWorkbook]) -> str:
    """``; targets precision ±5 %, ...`` when the draw recorded its targets: a report of
    the round judges it by them, whatever the Plan's margins are then."""
    from core.workbook.rounds import targets_note

    targets = _recorded_targets(workbooks)
    if targets is None:
        return ""
    return "; " + targets_note(targets.margin_precision, targets.margin_recall, targets.confidence)


#: The workbooks a round read from labeling workbooks names at the start of its notes.
WORKBOOKS_NOTE = re.compile(r"^labeling workbooks? (.+?); seed \d+")


def workbooks_read_before(
    rounds: Sequence[Round], workbooks: Sequence[LabelingWorkbook], paths: Sequence[Path]
) -> list[Path]:
    """Workbooks read before for the draw of ``workbooks`` (its round's notes name them)
    that lie in the folder of one of ``paths`` and are not among them: a top-up read on
    its own then counts with the editors' copies of the first draw."""
    given = {path.resolve() for path in paths}
    folders = list(dict.fromkeys(path.parent for path in paths))
    found = []
    for position in same_draw(rounds, workbooks):
        listed = WORKBOOKS_NOTE.match(rounds[position].notes or "")
        if listed is None:
            continue
        for name in _names_listed(listed.group(1)):
            for folder in folders:
                candidate = folder / Path(name).name  # never a path taken from the notes
                if candidate.resolve() not in given and candidate.is_file():
                    given.add(candidate.resolve())
                    found.append(candidate)
    return found


def _names_listed(text: str) -> list[str]:
    """``a.xlsx, Round 3, Anna.xlsx`` -> ``["a.xlsx", "Round 3, Anna.xlsx"]``: the notes
    join file names with ", ", which a name may hold too; each name ends in .xlsx/.xlsm."""
    names, pending = [], ""
    for piece in text.split(", "):
        pending = f"{pending}, {piece}" if pending else piece
        if pending.casefold().endswith((".xlsx", ".xlsm")):
            names.append(pending)
            pending = ""
    return names


def same_draw(
    rounds: Sequence[Round], workbooks: Sequence[LabelingWorkbook], *, taken: Sequence[int] = ()
) -> list[int]:
    """Positions in ``rounds`` of earlier readings of ``workbooks``' draw (the same seed
    and item file in the notes, as :func:`draw_mark` and ``prplanner labels --append-to``
    write them), except those ``taken``. Rounds the app read are on its Labeled sheet;
    rounds ``labels`` appended come with the lead's rounds workbook, on any sheet."""
    from core.workbook.rounds import same_draw_notes

    mark = draw_mark(workbooks[0].design)

    def of_this_draw(item: Round) -> bool:
        return same_draw_notes(mark, item.notes)

    return [
        position
        for position, item in enumerate(rounds)
        if of_this_draw(item) and position not in taken
    ]


def earlier_reading(
    rounds: Sequence[Round],
    workbooks: Sequence[LabelingWorkbook],
    classifier: str | None,
    *,
    taken: Sequence[int] = (),
) -> int | None:
    """Position in ``rounds`` of the latest earlier reading of ``workbooks``' draw for
    ``classifier``; None when there is none. Positions ``taken`` were already matched to
    another classifier of the same reading."""
    found = [
        position
        for position in same_draw(rounds, workbooks, taken=taken)
        if rounds[position].classifier == classifier
    ]
    return found[-1] if found else None


def merged_rounds(
    rounds: Sequence[Round],
    results: Sequence[ClassifierLabels],
    workbooks: Sequence[LabelingWorkbook],
    classifier: str | None,
) -> tuple[list[Round], list[tuple[int, Round | None]]]:
    """The session's rounds with a reading of ``workbooks`` in them, and for each of
    ``results`` (the main classifier first) its position and the round it replaced.

    A draw read before (:func:`earlier_reading`) is replaced in place: same position,
    sheet, row, name and date, the new counts and notes. The main classifier's earlier
    reading is found under ``classifier`` (the current round's), else under the
    classifier it was filed under when first read (the current round may have changed
    since). Everything else is added after its classifier's last round
    (:func:`core.workbook.session_io.insertion_point`), else at the end.
    """
    from core.workbook.session_io import insertion_point

    merged = list(rounds)
    placed: list[tuple[int, Round | None]] = []
    further = {labels.design.name for labels in results[1:]}
    for index, labels in enumerate(results):
        name = classifier if index == 0 else labels.design.name
        taken = [position for position, _ in placed]
        position = earlier_reading(rounds, workbooks, name, taken=taken)
        if position is None and index == 0:  # filed under another current round's name
            main = [
                candidate
                for candidate in same_draw(rounds, workbooks, taken=taken)
                if rounds[candidate].classifier not in further
            ]
            position = main[-1] if main else None
        if position is None:
            # After its classifier's last round: one classifier's rounds stay together.
            fresh = new_round(labels, workbooks, merged, name)
            spot = insertion_point(merged, fresh.classifier)
            merged.insert(spot, fresh)
            placed = [(at + (at >= spot), before) for at, before in placed]
            placed.append((spot, None))
            continue
        earlier = rounds[position]
        position = merged.index(earlier)  # rounds inserted above moved it down
        fresh = new_round(labels, workbooks, merged, earlier.classifier)
        merged[position] = dataclasses.replace(
            fresh, sheet=earlier.sheet, row=earlier.row, round=earlier.round, date=earlier.date
        )
        placed.append((position, earlier))
    return merged, placed


def margin_check(state, item: Round, labels: ClassifierLabels) -> TargetCheck:
    """``item`` against the Plan tab's margins (:func:`core.round_targets.check_targets`),
    with the finite population correction when the Evaluate tab has it on, so that the
    words match the intervals the tab marks to quote; the top-up makes up for the skipped
    items and counts the ones drawn but not labeled yet."""
    from core.round_targets import check_targets

    return check_targets(
        state,
        item,
        fpc=state.evaluate.fpc and item.population_pos is not None,
        drawn=labels.drawn,
        skipped=labels.skipped_by_stratum,
    )


def surer_check(
    state, item: Round, labels: ClassifierLabels, check: TargetCheck
) -> TargetCheck | None:
    """The top-up for a :data:`SURER_CHANCE` chance of meeting both targets, when the
    Plan sets no chance of its own and the top-up at the labeled rates has less; None
    otherwise (or when no sample of the population reaches it)."""
    from core.round_targets import surer_top_up

    if check.chance_target:
        return None
    return surer_top_up(state, item, check, SURER_CHANCE, skipped=labels.skipped_by_stratum)


def missed_in_words(check: TargetCheck) -> tuple[str, ...]:
    """``precision lies between 73.8 % and 84.7 %, that is ±5.45 %, wider than the ±5.00 %
    target`` for each missed margin."""
    from core.round_targets import margin_and_target

    words = []
    for margin in check.missed():
        half, target = margin_and_target(margin.half_width, margin.target, formatting.percent)
        words.append(
            f"{margin.metric} lies between {formatting.percent(margin.lower)} and "
            f"{formatting.percent(margin.upper)}, that is ±{half}, wider than the ±{target} "
            "target"
        )
    return tuple(words)


def read_labeled_round(window, paths: Sequence[Path]) -> LabeledRound | None:
    """Read labeled workbooks (a round and its top-ups), add the round to the session and
    show it on the Evaluate tab. Returns what was read, or None (the reason shown)."""
    from core.workbook.labeling import (
        LabelingError,
        count_labels,
        misread_as_labels,
        misread_words,
    )

    paths = [Path(path) for path in paths]
    if not paths:
        return None
    state = window.session.state
    current = next((item for item in state.rounds if _key(item) == state.current_round), None)

    known_rounds = state.rounds

    def read():
        for path in paths:  # a file picked by mistake: say what to do with it
            kind = misread_as_labels(path)
            if kind == "item_list":
                raise InputError(item_list_words(path))
            if kind == "session":
                raise InputError(f"{misread_words(path, kind)}. File › Open opens it.")
            if kind is not None:
                raise InputError(misread_words(path, kind) + ".")
        workbooks = tuple(_read_labeling_workbook(path) for path in paths)
        try:
            return workbooks, count_labels(workbooks), (), ()
        except LabelingError as refused:
            # A top-up read alone: count it with the copies read before for this draw.
            extra = workbooks_read_before(known_rounds, workbooks, paths)
            if not extra:
                raise
            design = workbooks[0].design
            more, unreadable = [], []
            for path in extra:  # one that cannot be read now is left out, and said so
                try:
                    book = _read_labeling_workbook(path)
                except INPUT_FAILURES as exc:
                    unreadable.append(f"{path.name} ({formatting.short_text(_plain(exc), 120)})")
                    continue
                if (book.design.seed, book.design.file_sha256) == (
                    design.seed,
                    design.file_sha256,
                ):
                    more.append(book)
            if not more:
                raise
            try:
                together = workbooks + tuple(more)
                found = tuple(book.path for book in more)
                return together, count_labels(together), found, tuple(unreadable)
            except INPUT_FAILURES:
                raise refused from None

    names = ", ".join(path.name for path in paths)
    try:
        workbooks, results, also_read, not_read = window._in_background(
            f"Reading the labels of {formatting.short_text(names, 80)}…", read, cancellable=True
        )
    except Cancelled:
        window.show_status("Reading the labels was cancelled; nothing changed")
        return None
    except LabelsDisagree as exc:
        show_disagreements(window, exc)
        return None
    except INPUT_FAILURES as exc:
        text = formatting.short_text(_named_once(paths, _plain(exc)), 600)
        window.show_status(formatting.short_text(text, 300))
        QMessageBox.warning(window, "Could not read the labels", text)
        return None
    labels = results[0]
    if labels.labeled_pos == 0 or labels.labeled_neg == 0:
        text = (
            f"{names}: {labels.labeled_pos + labels.labeled_neg:,} items are labeled so far "
            f"({labels.unlabeled:,} without a label, {labels.skipped:,} skipped). Each side "
            "(flagged and unflagged) needs at least one item labeled positive or negative "
            "before the round can be evaluated; nothing was added."
        )
        window.show_status(formatting.short_text(text, 300))
        QMessageBox.information(window, "Not enough labels yet", text)
        return None
    # The round is filed under the classifier the workbook names, else under the current
    # round's classifier.
    classifier = largest_draw(workbooks).design.filed_under or None
    if classifier is None and current is not None:
        classifier = current.classifier
    rounds, placed = merged_rounds(state.rounds, results, workbooks, classifier)
    position, replaced = placed[0]
    item = rounds[position]
    # The draw's other classifiers are judged by the same margins (their sample is as
    # large as the main one's, and a top-up raises them all).
    others = [
        (further, rounds[where])
        for further, (where, _replaced) in zip(results[1:], placed[1:], strict=True)
        if further.labeled_pos and further.labeled_neg
    ]
    if replaced is not None and item.matrix.total < replaced.matrix.total:
        # An older or partial copy picked by mistake must not quietly take the place of a
        # fuller reading of the same draw.
        fewer = replaced.matrix.total - item.matrix.total
        # The likely cause: a copy found beside the one picked is not the labeled one
        # read before (the editors' copy is elsewhere), or a labeler's copy is missing.
        found = (
            " Read together with "
            + ", ".join(path.name for path in also_read)
            + " (found beside the one you picked): if that is not the labeled copy, put "
            "the labeled copies in one folder and pick them all."
            if also_read
            else " If a labeler's copy or an earlier workbook of this round is missing, "
            "pick it too."
        )
        answer = QMessageBox.question(
            window,
            "Fewer labels than before",
            f"{formatting.short_text(replaced.round or '', 60)} was read before with "
            f"{replaced.matrix.total:,} labels; these workbooks give {item.matrix.total:,} "
            f"({fewer:,} fewer).{found} Replace the earlier reading with these?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        if answer != QMessageBox.StandardButton.Yes:
            window.show_status(
                f"Kept the earlier reading of {formatting.short_text(replaced.round or '', 60)}"
                f" ({replaced.matrix.total:,} labels)"
            )
            return None
    # The rule draws without replacement from a list of known size, so the finite
    # population correction is exact here; without it a round that labels much of a small
    # group is judged as if nothing were known about the rest. The round joins the session
    # and the Evaluate tab shows it in one undo step.
    # The lead's own round is never paired with the example's made-up ones (the History
    # tab, the comparisons, the report): they leave the session in the same undo step.
    rounds, examples_removed = resources.without_example_rounds(rounds)
    changes: list[tuple[str, object]] = [("rounds", tuple(rounds))]
    example_ensemble_removed = bool(examples_removed) and is_example_ensemble(state.ensemble)
    if example_ensemble_removed:
        # The example's made-up classifiers (three of travel) left on the Ensemble
        # tab reached the fraud lead's report as a chart of labels to buy (trial 16); an
        # Ensemble the lead has edited is theirs and stays. The lead's classifier becomes
        # the parent: the example's "ensemble, 120,000" stayed on (trial 19).
        name = item.classifier or workbooks[0].design.designs[0].name
        changes.append(("ensemble", lead_ensemble(name, item.population_pos)))
    changes += window.rounds_panel.evaluate_changes(item, fpc=True)
    changes += _plan_from(state, item, _recorded_targets(workbooks))
    waiting = still_out(state.awaiting_labels, workbooks)
    if waiting != state.awaiting_labels:  # these workbooks are back from the editors
        changes.append(("awaiting_labels", waiting))
    if replaced is not None:
        text = f"Update {formatting.short_text(item.round or '', 40)} with the new labels"
    else:
        text = f"Read the labels of {formatting.short_text(item.round or paths[0].name, 40)}"
    refused = window.session.set_values(changes, text=text)
    if refused:
        QMessageBox.warning(window, "Could not add the round", refused)
        return None
    if examples_removed:
        window.examples_taken_out()
    window.show_tab("evaluate")
    check = surer = None

    def checked():
        state = window.session.state
        check = margin_check(state, item, labels)
        further_checks = tuple(
            (other.design.name, margin_check(state, kept, other)) for other, kept in others
        )
        return check, surer_check(state, item, labels, check), further_checks

    further_checks: tuple = ()
    try:
        check, surer, further_checks = window._in_background(
            "Checking the round against the targets…", checked
        )
    except INPUT_FAILURES as exc:  # the round is in; only the check could not be made
        logger.info("margin check failed: %s", exc)
    result = LabeledRound(
        workbooks=workbooks,
        labels=labels,
        round=item,
        missed=() if check is None else missed_in_words(check),
        top_up=None if check is None else check.top_up,
        needed=None if check is None else check.needed,
        chance=None if check is None else check.chance,
        chance_target=0.0 if check is None else check.chance_target,
        surer=surer,
        replaced=replaced,
        targets=_recorded_targets(workbooks),
        confidence_before=state.confidence,
        swings=() if check is None else tuple(labels.swings_beyond(check.target_margins)),
        also_read=also_read,
        not_read_again=not_read,
        examples_removed=examples_removed,
        example_ensemble_removed=example_ensemble_removed,
        open_elsewhere=_open_elsewhere(workbooks),
        further_checks=further_checks,
        other_rounds=tuple(kept for _other, kept in others),
    )
    window.show_labeled_summary(result)
    return result


def _open_elsewhere(workbooks: Sequence[LabelingWorkbook]) -> tuple[tuple[str, str], ...]:
    """The workbooks another program still has open, each with its lock file's name: an
    editor still at work (the command line said so, the app read them without a word;
    trial 16)."""
    from core.workbook.safe_io import locked

    return tuple((path.name, lock.name) for path, lock in locked([b.path for b in workbooks]))


def still_out(awaiting: Sequence[str], workbooks: Sequence[LabelingWorkbook]) -> tuple[str, ...]:
    """The workbooks out with the editors once ``workbooks`` are back: those drawn under
    another name. Two drawn under one name (in two folders) are told apart by their draw
    (seed and item list), read from the file drawn; one that cannot be read stays out."""
    back = {book.design.drawn_as or book.path.name for book in workbooks}
    draws = {(book.design.seed, book.design.file_sha256) for book in workbooks}
    named = [entry for entry in awaiting if Path(entry).name in back]

    def returned(entry: str) -> bool:
        if Path(entry).name not in back:
            return False
        if len(named) == 1:
            return True
        try:
            design = _read_labeling_workbook(Path(entry)).design
        except INPUT_FAILURES:
            return False
        return (design.seed, design.file_sha256) in draws

    return tuple(entry for entry in awaiting if not returned(entry))


def _recorded_targets(workbooks: Sequence[LabelingWorkbook]) -> Targets | None:
    """The target margins the round was drawn for: those the largest draw (the latest
    top-up, which lists the whole sample) records; None when it records none."""
    return largest_draw(workbooks).design.targets


def _plan_from(state, item: Round, targets: Targets | None = None) -> list[tuple[str, object]]:
    """The Plan tab plans the next round from the round just read, as "Plan the next round
    from it" does, so that its plan and the summary's agree; with the finite population
    correction, since the next round is drawn the same way, and with the target margins
    (and confidence) the round was drawn for when its workbook records them."""
    from core.workbook.session_io import plan_from_round

    plan, _notes = plan_from_round(state.plan, item)
    plan = dataclasses.replace(plan, fpc=True)
    changes: list[tuple[str, object]] = [("previous_round", item.name)]
    if targets is not None:
        plan = targets.applied_to(dataclasses.replace(state, plan=plan)).plan
        changes.append(("confidence", targets.confidence))
    changes.append(("plan", plan))
    return changes


#: Rows of the first sheet searched for the Labels header (as the reader does).
HEADER_ROWS = 20


def item_list_words(path: Path) -> str:
    """What to do when an item list is given where a labeled workbook is read."""
    return (
        f"{path.name} is an item list, not a labeling workbook. File › Draw a sample from "
        "an item list… (or Draw this sample from your items… on the Plan tab) picks the "
        "items to label from it and writes the workbook for the editors; read that "
        "workbook here once they have labeled it."
    )


def _read_labeling_workbook(path: Path) -> LabelingWorkbook:
    """:func:`core.workbook.labeling.read_labeling_workbook`, saying so when the workbook
    is an item list saved as .xlsx (no Design sheet, no Item id / Label header)."""
    from core.workbook.labeling import LabelingError, read_labeling_workbook

    try:
        return read_labeling_workbook(path)
    except LabelingError:
        if _is_item_list_workbook(path):
            if _holds_rounds(path):  # was called an item list (fuzz 14)
                raise InputError(
                    f"{path.name} is a rounds workbook, not a labeling workbook: File › Open "
                    "opens it (its rounds go to the Rounds panel). Labels come back in the "
                    "workbook drawn for the editors."
                ) from None
            raise InputError(item_list_words(path)) from None
        raise


def _holds_rounds(path: Path) -> bool:
    """Whether ``path`` reads as a rounds workbook (a header naming TP, FP, FN, TN)."""
    from core.workbook.rounds import read_rounds

    try:
        return bool(read_rounds(path).rounds)
    except INPUT_FAILURES:
        return False


def _is_item_list_workbook(path: Path) -> bool:
    """True when ``path`` has no Design sheet and its first sheet no header row with the
    cells Item id and Label: a table of items, not a labeling workbook (damaged or edited)."""
    from core.workbook.labeling import DESIGN_SHEET, ID_HEADER, LABEL_HEADER
    from core.workbook.xlsx_reader import open_sheets

    wanted = {ID_HEADER.casefold(), LABEL_HEADER.casefold()}
    has_header = False
    try:
        with open_sheets(path) as sheets:
            for position, sheet in enumerate(sheets):
                if sheet.title == DESIGN_SHEET:
                    return False
                if position == 0:
                    for row_number, values, _formulas in sheet.rows:
                        if row_number > HEADER_ROWS:
                            break
                        texts = {str(value).strip().casefold() for value in values if value}
                        if wanted <= texts:
                            has_header = True
                            break
    except INPUT_FAILURES:  # unreadable: the reader's own message says why
        return False
    return not has_header


def summary_text(result: LabeledRound) -> str:
    """The words shown after labels were read (what a lead needs, no formulas)."""
    labels = result.labels
    name = html.escape(formatting.short_text(result.round.round or "", 80), quote=False)
    if result.verb == "updated":
        first = (
            f"Updated <b>{name}</b> with the new labels: the earlier reading of the same "
            "draw is replaced in the Rounds panel (Undo brings it back), and the Evaluate "
            "tab shows the round."
        )
    elif result.verb == "unchanged":
        first = (
            f"<b>{name}</b> already holds these labels (the same draw was read before); "
            "the Evaluate tab shows it."
        )
    else:
        first = f"<b>{name}</b> is in the Rounds panel and the Evaluate tab shows it."
    lines = [first]
    if result.also_read:
        lines.append(
            "Read together with "
            + html.escape(", ".join(path.name for path in result.also_read), quote=False)
            + ", the workbooks read before for this round (found beside the one you picked)."
        )
    if result.open_elsewhere:
        lines.append(
            "<b>May still be open in another program:</b> "
            + html.escape(
                "; ".join(f"{name} (lock file {lock})" for name, lock in result.open_elsewhere),
                quote=False,
            )
            + ". Labels typed there since it was last saved are not counted: read it again "
            "once the editor has saved and closed it (if no one has it open, the lock file "
            "was left behind: delete it)."
        )
    if result.not_read_again:
        lines.append(
            "<b>Not read again:</b> "
            + html.escape("; ".join(result.not_read_again), quote=False)
            + ". Their labels are missing from these counts; pick them too once they open."
        )
    lines += [
        f"TP {labels.tp:,} · FP {labels.fp:,} · FN {labels.fn:,} · TN {labels.tn:,} "
        f"(labeled {labels.labeled_pos + labels.labeled_neg:,}; skipped {labels.skipped:,}; "
        f"without a label {labels.unlabeled:,}).",
    ]
    if labels.skipped or labels.unlabeled:
        from core.workbook.labeling import range_words

        spans = labels.range_if_skipped(unlabeled_too=True)
        shown = range_words(spans, formatting.percent, ("precision", "recall"))
        if shown:  # both strata have a label
            subject = labels.open_items_in_words(unlabeled_too=True, verb=False)
            their = "its label" if labels.skipped + labels.unlabeled == 1 else "their labels"
            lines.append(
                f"{subject[0].upper()}{subject[1:]} could move the estimates only this far, "
                f"whatever {their}: {' and '.join(shown)} (not confidence intervals)."
            )
    note = largest_draw(result.workbooks).design.targets_note
    if note:
        lines.append(html.escape(note[0].upper() + note[1:], quote=False) + ".")
    if result.targets is not None:
        lines.append(
            f"The targets the round was drawn for ({result.targets.in_words()}) are the "
            "Plan tab's now."
        )
        before = result.confidence_before
        if before is not None and before != result.targets.confidence:
            lines.append(
                f"Every tab now uses {formatting.level(result.targets.confidence)} "
                f"confidence, the level of those targets (it was {formatting.level(before)})."
            )
    lines.append("")  # a paragraph of its own: the verdict and what to do
    if result.missed:
        lines.append("<b>A target margin is missed:</b> " + "; ".join(result.missed) + ".")
        if result.needed is None:
            lines.append(
                "No larger sample of this population meets the targets; consider wider "
                "margins on the Plan tab."
            )
        else:
            lines += _needed_in_words(result)
            if labels.unlabeled:
                waiting = labels.unlabeled_items
                where = ", ".join(
                    html.escape(f"{item.id} ({item.where})", quote=False) for item in waiting[:3]
                ) + (", …" if len(waiting) > 3 else "")
                lines.append(
                    f"First label the {labels.unlabeled:,} items that have no label yet: {where}."
                )
            if result.top_up is not None:
                # Two buttons only when the main classifier's own top-up is drawn (the
                # summary box offers the surer one then).
                which = (
                    "Each <b>Top up</b> button draws"
                    if result.surer is not None and result.top_up_for_all == result.top_up
                    else "<b>Top up…</b> draws"
                )
                grows = (
                    result.top_up[0] > labels.design.n_pos,
                    result.top_up[1] > labels.design.n_neg,
                )
                replaced = [
                    f"{count:,} {which}"
                    for count, which, grown in (
                        (labels.skipped_pos, "flagged", grows[0]),
                        (labels.skipped_neg, "unflagged", grows[1]),
                    )
                    if count and grown
                ]
                made_up = (
                    f", with {' and '.join(replaced)} more to take the place of the "
                    "skipped ones (they stay unlabeled)"
                    if replaced
                    else ""
                )
                lines.append(f"{which} the additional items{made_up}.")
                if result.top_up_for_all is not None and result.top_up_for_all != result.top_up:
                    # The button draws for the other classifiers of the draw too (trial
                    # 13b: the text read 262 + 3,898, the button opened 353 + 5,868).
                    total_pos, total_neg = result.top_up_for_all
                    lines.append(
                        f"It opens with totals of <b>{total_pos:,} flagged and {total_neg:,} "
                        "unflagged</b>, enough for the draw's other classifiers too (below)."
                    )
    elif result.swings:
        # Met by the labels in hand only: the caveat below says what could undo it.
        lines.append(
            "Both target margins are met by the labels in hand, but not yet for sure (see "
            "<i>Careful</i> below)."
        )
    else:
        lines.append("Both target margins are met.")
    if result.swings:
        from core.round_targets import swings_in_words

        subject = labels.open_items_in_words(unlabeled_too=True, verb=False)
        moves = "; ".join(swings_in_words(result.swings, formatting.percent, subject))
        lines.append("")
        lines.append(
            f"<b>Careful:</b> {html.escape(moves, quote=False)}. If the editors skipped the "
            "hard cases, the estimate leans, and items drawn in their place do not set that "
            "right; have the skipped items labeled (they are the rows marked skip) before you "
            "rely on it."
        )
    lines += _other_classifiers_in_words(result)
    return "<br>".join(lines)


def _other_classifiers_in_words(result: LabeledRound) -> list[str]:
    """The draw's other classifiers against the same targets (their rounds are in the
    Rounds panel too); a miss says which sample totals would meet it, since a top-up
    raises every classifier's sample."""
    checks = dict(result.further_checks)
    counted = {item.classifier: item for item in result.other_rounds if item.classifier}
    names = list(dict.fromkeys([*counted, *checks]))
    if not names:
        return []
    own_draw = result.draw_top_up.own_draw
    against = ", against the same targets" if checks else ""
    lines = ["", f"The draw's other classifiers{against}:"]
    from core.workbook.labeling import category_words

    category = largest_draw(result.workbooks).design.category
    if category:
        # Shared labels answer the editors' one question: a classifier of another category
        # read "phishing recall 11.8 %" with no caveat (trial 19).
        lines[-1] = (
            f"The draw's other classifiers{against}, judged by the editors' labels of "
            f"{html.escape(category_words(category), quote=False)} (their precision and "
            "recall are of that category):"
        )
    for name in names:
        shown = html.escape(formatting.short_text(name, 60), quote=False)
        item = counted.get(name)
        # Their counts too: the summary gave the main classifier's only (trial 15).
        counts = (
            f" TP {item.tp:,} · FP {item.fp:,} · FN {item.fn:,} · TN {item.tn:,};"
            if item is not None
            else ""
        )
        check = checks.get(name)
        if check is None:
            lines.append(f"• {shown}:{counts.rstrip(';')}.")
            continue
        if check.met:
            lines.append(f"• {shown}:{counts} both target margins are met.")
            continue
        missed = "; ".join(missed_in_words(check))
        words = f"• {shown}:{counts} <b>missed</b>: {missed}."
        if name in own_draw:
            words += (
                " No top-up of this draw meets them (the main classifier's lists are too "
                "small): draw a sample of its own, with it as the Predicted column."
            )
        elif check.top_up is not None:
            n_pos, n_neg = check.top_up
            words += (
                f" A top-up to at least {n_pos:,} flagged and {n_neg:,} unflagged items in "
                "all would meet them (Top up… draws more for every classifier of the draw)."
            )
        lines.append(words)
    return lines


def _needed_in_words(result: LabeledRound) -> list[str]:
    """The labels in all a top-up brings the round to, and its chance of meeting both
    targets given the labels so far (a top-up just enough at the labeled rates is not sure
    to be enough); the Plan tab plans a new round instead, so its numbers differ."""
    assert result.needed is not None
    need_pos, need_neg = result.needed
    have = f"{result.labels.labeled_pos:,} + {result.labels.labeled_neg:,}"
    sizes = (
        f"about {need_pos:,} flagged and {need_neg:,} unflagged items in all (counting the "
        f"{have} labeled)"
    )
    chance, wanted = result.chance, result.chance_target
    if chance is None:
        return [f"To meet both targets, this round needs labels on {sizes}."]
    lines = []
    if wanted and chance.both >= wanted:
        lines.append(
            f"For {chance_words(chance.both, article=True)} chance of meeting both targets "
            f"(the Plan tab's <i>Chance of meeting both margins</i> asks for at least "
            f"{chance_words(wanted, target=True)}), this round needs labels on {sizes}."
        )
    else:
        if wanted:
            lines.append(
                "No sample of this population gives "
                f"{chance_words(wanted, article=True, target=True)} chance of meeting both "
                "targets (the Plan tab's <i>Chance of meeting both margins</i>)."
            )
        lines.append(
            f"To meet both targets at the rates labeled so far, this round needs labels on "
            f"{sizes}. The labels still to come scatter: given the labels so far, the "
            f"chance that they meet both is about {chance_words(chance.both)}."
        )
        surer = result.surer
        # Said only when its button is offered: with another classifier of the draw
        # asking for more, the top-up drawn is that one, not this surer one.
        offered = result.top_up_for_all is None or result.top_up_for_all == result.top_up
        if surer is not None and surer.needed is not None and surer.chance is not None and offered:
            more_pos, more_neg = surer.needed
            lines.append(
                f"For {chance_words(surer.chance.both, article=True)} chance, label about "
                f"{more_pos:,} flagged and {more_neg:,} unflagged in all."
            )
    lines.append(
        "(The Plan tab plans a new round from this one, without these labels, so its "
        "sizes and chance differ.)"
    )
    return lines


def _key(item) -> str:
    from core.workbook.session_io import round_key

    return round_key(item)


def _named_once(paths: Sequence[Path], message: str) -> str:
    """``message``, led by the files' names unless it names one of them already (core's
    messages usually do: "dup.csv: duplicate item ids ...")."""
    if any(path.name in message for path in paths):
        return message
    names = ", ".join(path.name for path in paths)
    return f"{formatting.short_text(names, 200)} cannot be used: {message}"


def _plain(exc: BaseException) -> str:
    if isinstance(exc, InputError):
        return str(exc)
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return formatting.short_text(f"{type(exc).__name__}: {exc}", 300)


def ask_labeled_workbooks(parent: QWidget, folder: Path) -> list[Path]:
    """The labeled workbooks the user picks (a round and its top-ups)."""
    names, _filter = QFileDialog.getOpenFileNames(
        parent,
        "Read labeled workbook (pick its top-ups and every labeler's copy too)",
        str(folder),
        LABELED_FILTER,
    )
    return [Path(name) for name in names]


def show_disagreements(window, exc: LabelsDisagree) -> QMessageBox:
    """Editors' copies that disagree: what to do, the first items, and every one of them
    under Show Details (a window-modal box, not blocking). The message was cut off in the
    fifth item, before it said how to settle them (trial 14)."""
    if window.disagreements_box is not None:  # one box: the latest reading's
        window.disagreements_box.close()
    count = len(exc.items)
    items = f"{count:,} item" if count == 1 else f"{count:,} items"
    window.show_status(f"Labels not read: the copies disagree on {items}")
    box = QMessageBox(
        QMessageBox.Icon.Warning,
        "The editors' copies disagree",
        f"The copies label {items} positive in one and negative in another, so "
        f"nothing was read. To read them, {LabelsDisagree.SETTLE}.",
        QMessageBox.StandardButton.Close,
        window,
    )
    shown = exc.items[:8]
    more = count - len(shown)
    box.setInformativeText(
        "\n".join(shown) + (f"\n… and {more:,} more (see Show Details)" if more > 0 else "")
    )
    box.setDetailedText("\n".join(exc.items))
    box.setObjectName("disagreements_box")
    box.setDefaultButton(QMessageBox.StandardButton.Close)
    window.disagreements_box = box
    box.open()
    return box
