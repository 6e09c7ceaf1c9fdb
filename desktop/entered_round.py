"""Keeping the counts typed on the Evaluate tab as a past round.

A lead who counted a round by hand types its counts on the Evaluate tab; "Keep as a
round…" files them in the Rounds panel (sheet "Entered") with a name, a date and a
classifier, in one undo step, so the History tab, the comparisons and the report take
the round in like one read from a workbook (:func:`core.workbook.session_io.entered_round`).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from PySide6.QtCore import QDate
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QWidget,
)

from core.errors import InputError
from core.session import SessionState
from core.workbook.rounds import EARLIEST_ROUND_DATE
from core.workbook.session_io import (
    entered_round,
    find_round_key,
    insertion_point,
    next_round_name,
    round_key,
)
from desktop.session_model import SessionModel


def default_classifier(state: SessionState) -> str:
    """The classifier the typed counts most likely belong to: the current round's, else
    the Plan tab's previous round's, else the only one there is."""
    from core.workbook.session_io import previous_round_of

    current = find_round_key(state.rounds, state.current_round)
    if current is not None and current.classifier:
        return current.classifier
    previous = previous_round_of(state)
    if previous is not None and previous.classifier:
        return previous.classifier
    names = {item.classifier for item in state.rounds if item.classifier}
    return names.pop() if len(names) == 1 else ""


def already_a_round(state: SessionState) -> str | None:
    """The name of the round the Evaluate tab's counts already are, or ``None``."""
    current = find_round_key(state.rounds, state.current_round)
    if current is not None and current.matrix == state.evaluate.matrix:
        return current.round or f"{current.sheet} row {current.row}"
    return None


def population_words(state: SessionState) -> str:
    """The population the kept round gets (the Evaluate tab's), in the lead's words."""
    population = state.evaluate.population
    if population.mode == "counts":
        return (
            f"{population.predicted_positive:,} flagged and {population.predicted_negative:,} "
            "unflagged items, as on the Evaluate tab (change them there if this round's differ)"
        )
    if population.mode == "k":
        return (
            f"{population.k:.4g} flagged per unflagged item, as on the Evaluate tab (change it "
            "there if this round's differs)"
        )
    return "none: the Evaluate tab treats the counts as a plain random sample"


class KeepRoundDialog(QDialog):
    """Name, date and classifier of the round the typed counts become."""

    def __init__(
        self, state: SessionState, parent: QWidget | None = None, workbook: Path | None = None
    ):
        super().__init__(parent)
        self.setWindowTitle("Keep as a round")
        self.setObjectName("keep_round_dialog")
        self.setMinimumWidth(460)  # the notes wrap to a few lines, not a narrow column
        classifier = default_classifier(state)
        self.classifier_box = QComboBox(self)
        self.classifier_box.setEditable(True)
        names = sorted({item.classifier for item in state.rounds if item.classifier})
        self.classifier_box.addItems(names)
        self.classifier_box.setCurrentText(classifier)
        self.classifier_box.setToolTip("The classifier these labels judge (type a new one)")
        self.name_edit = QLineEdit(next_round_name(state.rounds, classifier or None), self)
        self.name_edit.setToolTip("How the Rounds panel, the History tab and reports name it")
        # The suggested name follows the classifier until the lead types one of their own.
        self._suggested = self.name_edit.text()
        self._rounds = state.rounds
        self.classifier_box.currentTextChanged.connect(self._suggest_name)
        self.date_edit = QDateEdit(QDate.currentDate(), self)
        self.date_edit.setCalendarPopup(True)
        self.date_edit.setDisplayFormat("yyyy-MM-dd")
        first = EARLIEST_ROUND_DATE  # what the rounds reader takes back (review 19)
        self.date_edit.setMinimumDate(QDate(first.year, first.month, first.day))
        self.date_edit.setToolTip("When the items were labeled (the History tab's order)")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form = QFormLayout(self)
        about = QLabel(
            "The counts on the Evaluate tab join the past rounds, with their population, "
            "so the History tab, comparisons and reports include them."
        )
        about.setWordWrap(True)
        form.addRow(about)
        form.addRow("Round", self.name_edit)
        form.addRow("Date", self.date_edit)
        form.addRow("Classifier", self.classifier_box)
        # Said, because it is easily the previous round's, left on the Evaluate tab when
        # the lead typed the new counts (trial 13).
        self.population_label = QLabel(population_words(state), self)
        self.population_label.setObjectName("kept_population")
        self.population_label.setWordWrap(True)
        form.addRow("Population", self.population_label)
        #: "Also add it to <workbook>": the lead's rounds workbook gets the round as a row.
        self.add_box: QCheckBox | None = None
        if workbook is not None:
            self.add_box = QCheckBox(f"Also add it to {workbook.name}", self)
            self.add_box.setObjectName("add_to_rounds_workbook")
            if state.evaluate.population.mode == "counts":
                self.add_box.setToolTip(
                    f"Add the round as one new row of your rounds workbook {workbook.name}; "
                    "nothing else in it changes, and Undo does not take the row out of the file"
                )
            else:
                # A row of the workbook carries both population counts, not k alone.
                self.add_box.setEnabled(False)
                self.add_box.setToolTip(
                    "Needs the two population counts (Population given as counts on the "
                    "Evaluate tab): a row of the rounds workbook records them"
                )
            form.addRow(self.add_box)
        form.addRow(buttons)

    def _suggest_name(self, classifier: str) -> None:
        if self.name_edit.text() == self._suggested:
            self._suggested = next_round_name(self._rounds, classifier.strip() or None)
            self.name_edit.setText(self._suggested)

    @property
    def add_to_workbook(self) -> bool:
        """The lead asked for the round to be added to their rounds workbook too."""
        return self.add_box is not None and self.add_box.isEnabled() and self.add_box.isChecked()

    def values(self) -> tuple[str, dt.date, str]:
        """``(name, date, classifier)`` as entered."""
        date = self.date_edit.date()
        return (
            self.name_edit.text(),
            dt.date(date.year(), date.month(), date.day()),
            self.classifier_box.currentText(),
        )


def keep_as_round(
    session: SessionModel, name: str, date: dt.date | None, classifier: str
) -> tuple[bool, str]:
    """File the Evaluate tab's counts as a round (one undo step); it becomes the current
    round. Returns ``(done, message for the status bar)``."""
    state = session.state
    try:
        item = entered_round(state, name=name, date=date, classifier=classifier)
    except InputError as exc:
        return False, f"Not kept as a round: {exc}"
    from desktop.rounds_panel import previous_round_changes

    rounds = list(state.rounds)
    rounds.insert(insertion_point(rounds, item.classifier), item)
    # As for a round read from labels: the Plan tab plans the next round from it, so the
    # screen and a report plan from the same round.
    refused = session.set_values(
        [
            ("rounds", tuple(rounds)),
            ("current_round", round_key(item)),
            *previous_round_changes(item),
        ],
        text=f"Keep {item.round} as a round",
    )
    if refused:
        return False, f"Not kept as a round: {refused}"
    return True, (
        f"Kept {item.round} as a round: the Rounds panel, the History tab and reports "
        "include it, and the Plan tab plans the next round from it (Edit > Undo takes it "
        "out)"
    )
