"""The Qt face of :class:`core.session.SessionState` (habits 4-6).

The window holds one :class:`SessionModel`. Widgets never keep their own copy of an input:
they call :meth:`SessionModel.set_value` (one undoable step, or merged into the previous
step while a slider is dragged) and refresh from :attr:`SessionModel.state` when
:attr:`SessionModel.changed` names a path they show.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QUndoCommand, QUndoStack

from core.errors import InputError
from core.session import SessionState, get_path, replace_path

_MERGE_IDS: dict[str, int] = {}

#: Seconds between two edits of one field that still count as one burst (one undo step):
#: the clicks of a mouse wheel, a held arrow key, a second typo fixed right away.
BURST_SECONDS = 1.0
#: The clock bursts are timed with (tests replace it).
burst_clock = time.monotonic

#: What an edit of each input is called in Edit > Undo/Redo, in the words the tabs show.
#: Counts of a confusion matrix (``.tp``...) and prior parameters are added below.
FIELD_LABELS: dict[str, str] = {
    "confidence": "confidence level",
    "previous_round": "previous round",
    "current_round": "round being evaluated",
    "columns": "what the workbook's columns hold",
    "awaiting_labels": "workbooks out with the editors",
    "rows_not_loaded": "rows of the workbook not loaded",
    "rounds_workbook": "your rounds workbook",
    "rounds": "past rounds",
    "plan": "plan inputs",
    "plan.population": "population",
    "plan.population.mode": "population given as",
    "plan.population.predicted_positive": "predicted positive N1",
    "plan.population.predicted_negative": "predicted negative N0",
    "plan.population.k": "imbalance k",
    "plan.belief": "what you believe",
    "plan.expected_precision": "expected precision",
    "plan.expected_recall": "expected recall",
    "plan.previous": "previous round's counts",
    "plan.prior": "prior",
    "plan.prior_preset": "prior preset",
    "plan.prior_strength": "prior strength w",
    "plan.margin_precision": "precision margin",
    "plan.margin_recall": "recall margin",
    "plan.cost_pos": "label cost, predicted positive",
    "plan.cost_neg": "label cost, predicted negative",
    "plan.method": "plan method",
    "plan.bayesian": "Bayesian predictive margins",
    "plan.fpc": "finite population correction (Plan)",
    "plan.s": "over-sampling ratio s",
    "plan.v": "labels v",
    "plan.assurance_target": "chance of meeting both margins",
    "evaluate": "evaluation inputs",
    "evaluate.population": "population (Evaluate)",
    "evaluate.population.mode": "population given as (Evaluate)",
    "evaluate.population.predicted_positive": "predicted positive N1 (Evaluate)",
    "evaluate.population.predicted_negative": "predicted negative N0 (Evaluate)",
    "evaluate.population.k": "imbalance k (Evaluate)",
    "evaluate.matrix": "labeled counts",
    "evaluate.replicates": "bootstrap replicates",
    "evaluate.seed": "bootstrap seed (Evaluate)",
    "evaluate.fpc": "finite population correction (Evaluate)",
    "prevalence": "prevalence inputs",
    "prevalence.reference_prevalence": "reference prevalence",
    "prevalence.eta_min": "lowest prevalence",
    "prevalence.eta_max": "highest prevalence",
    "prevalence.compared_rounds": "past rounds compared",
    "prevalence.scored_sample_path": "scored sample",
    "ensemble": "ensemble inputs",
    "ensemble.parent_name": "parent classifier's name",
    "ensemble.parent_size": "parent's predicted positives",
    "ensemble.children": "child classifiers",
    "ensemble.margin": "precision margin (Ensemble)",
    "ensemble.precision_floor": "precision floor",
    "ensemble.mix": "mix",
    "ensemble.trials": "trials",
    "ensemble.seed": "random seed (Ensemble)",
}
_COUNT_WORDS = {
    "tp": "TP (predicted +, actual +)",
    "fp": "FP (predicted +, actual −)",
    "fn": "FN (predicted −, actual +)",
    "tn": "TN (predicted −, actual −)",
}
_PRIOR_WORDS = {
    "a11": "prior α11 (TP)",
    "a01": "prior α01 (FP)",
    "a10": "prior α10 (FN)",
    "a00": "prior α00 (TN)",
    "name": "prior name",
}
for _matrix in ("plan.previous", "evaluate.matrix"):
    for _cell, _words in _COUNT_WORDS.items():
        FIELD_LABELS[f"{_matrix}.{_cell}"] = f"{FIELD_LABELS[_matrix]}, {_words}"
for _parameter, _words in _PRIOR_WORDS.items():
    FIELD_LABELS[f"plan.prior.{_parameter}"] = _words


def field_label(path: str) -> str:
    """The words Edit > Undo uses for an edit of ``path`` (``"plan.cost_pos"`` ->
    ``"label cost, predicted positive"``).

    A path without its own entry borrows the nearest parent's words, so no dotted path
    ever reaches the menu (``""`` is the whole session).
    """
    parts = path.split(".") if path else []
    while parts:
        words = FIELD_LABELS.get(".".join(parts))
        if words is not None:
            return words
        parts.pop()
    return "session"


def _merge_id(key: str) -> int:
    """Stable small int per merge key (QUndoCommand.id() must be an int)."""
    return _MERGE_IDS.setdefault(key, 1000 + len(_MERGE_IDS))


class SessionModel(QObject):
    """Holds the session state, applies edits through an undo stack, announces changes.

    Signals
    -------
    changed(str)
        The dotted path that changed (``"plan.s"``); ``""`` when the whole state was
        replaced (open, new, undo of a load). Listeners compare prefixes.
    refused(str, str)
        ``(path, message)`` when an edit was refused; the state is unchanged.
    """

    changed = Signal(str)
    refused = Signal(str, str)

    def __init__(self, state: SessionState | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self._state = state or SessionState()
        self.undo_stack = QUndoStack(self)
        self._derivations: list[Callable[[SessionState], SessionState]] = []

    def add_derivation(self, derive: Callable[[SessionState], SessionState]) -> None:
        """Keep an input that follows others up to date inside the same undo step.

        ``derive(state) -> state`` runs after every edit (a prior built from a preset
        follows the expected P/R, ``k`` and strength it was made from), so undo restores
        both together. Registering the same function twice has no effect.
        """
        if derive not in self._derivations:
            self._derivations.append(derive)

    @property
    def state(self) -> SessionState:
        return self._state

    def get(self, path: str) -> Any:
        return get_path(self._state, path)

    def _apply(self, state: SessionState, path: str) -> None:
        self._state = state
        self.changed.emit(path)

    def set_value(
        self,
        path: str,
        value: Any,
        *,
        merge_key: str | None = None,
        text: str | None = None,
        burst: bool = False,
    ) -> str | None:
        """Set one input as an undoable step; return the refusal message or ``None``.

        ``merge_key`` merges consecutive edits with the same key into one undo step (a
        slider drag is one step). ``burst=True`` (the input widgets)
        merges edits of the same field that follow each other within
        :data:`BURST_SECONDS`: ten wheel clicks are one step.
        """
        return self.set_values([(path, value)], merge_key=merge_key, text=text, burst=burst)

    def set_values(
        self,
        changes: Iterable[tuple[str, Any]],
        *,
        merge_key: str | None = None,
        text: str | None = None,
        burst: bool = False,
    ) -> str | None:
        """Apply several edits as one undo step (a paste, a preset); all or nothing.

        The step is named ``text``, or after the first field edited (:func:`field_label`).
        """
        changes = list(changes)
        new_state = self._state
        try:
            for path, value in changes:
                new_state = replace_path(new_state, path, value)
            edited_state = new_state
            for derive in self._derivations:
                new_state = derive(new_state)
        except InputError as exc:
            self.refused.emit(changes[0][0] if changes else "", str(exc))
            return str(exc)
        if new_state == self._state:
            return None
        paths = [path for path, _ in changes]
        if new_state is not edited_state:
            paths.extend(_changed_paths(edited_state, new_state))
        common = _common_prefix(paths)
        label = text or field_label(changes[0][0] if changes else "")
        window = None
        if merge_key is None and burst:
            merge_key, window = f"burst:{'+'.join(path for path, _ in changes)}", BURST_SECONDS
        self.undo_stack.push(
            _StateCommand(self, self._state, new_state, common, label, merge_key, window)
        )
        return None

    def undo_action(self, parent: QObject) -> QAction:
        """Edit > Undo reading ``Undo: label cost, predicted positive`` (``Undo`` alone
        when there is nothing to undo)."""
        return self._stack_action(parent, "&Undo", self.undo_stack.undoText, redo=False)

    def redo_action(self, parent: QObject) -> QAction:
        """Edit > Redo, worded like :meth:`undo_action`."""
        return self._stack_action(parent, "&Redo", self.undo_stack.redoText, redo=True)

    def _stack_action(
        self, parent: QObject, verb: str, current_text: Callable[[], str], *, redo: bool
    ) -> QAction:
        stack = self.undo_stack
        action = QAction(verb, parent)

        def retitle(text: str) -> None:
            action.setText(f"{verb}: {text}" if text else verb)

        retitle(current_text())
        action.setEnabled(stack.canRedo() if redo else stack.canUndo())
        if redo:
            stack.canRedoChanged.connect(action.setEnabled)
            stack.redoTextChanged.connect(retitle)
            action.triggered.connect(stack.redo)
        else:
            stack.canUndoChanged.connect(action.setEnabled)
            stack.undoTextChanged.connect(retitle)
            action.triggered.connect(stack.undo)
        return action

    def replace_state(
        self, state: SessionState, text: str = "Replace session", undoable: bool = False
    ) -> None:
        """Load a whole new state (New, Open); clears undo history unless ``undoable``."""
        if undoable:
            self.undo_stack.push(_StateCommand(self, self._state, state, "", text, None))
        else:
            self.undo_stack.clear()
            self._apply(state, "")


def _changed_paths(before: Any, after: Any, prefix: str = "") -> list[str]:
    """Dotted paths of the fields that differ between two states (down to non-dataclasses)."""
    if before == after:
        return []
    if not (dataclasses.is_dataclass(before) and type(before) is type(after)):
        return [prefix.rstrip(".")]
    found: list[str] = []
    for f in dataclasses.fields(before):
        found.extend(
            _changed_paths(getattr(before, f.name), getattr(after, f.name), f"{prefix}{f.name}.")
        )
    return found


def _common_prefix(paths: list[str]) -> str:
    if not paths:
        return ""
    split = [path.split(".") for path in paths]
    prefix = []
    for parts in zip(*split, strict=False):
        if len(set(parts)) != 1:
            break
        prefix.append(parts[0])
    return ".".join(prefix)


class _StateCommand(QUndoCommand):
    """Swap between two whole states; cheap because states are immutable and shared."""

    def __init__(
        self,
        model: SessionModel,
        before: SessionState,
        after: SessionState,
        path: str,
        text: str,
        merge_key: str | None,
        window: float | None = None,
    ):
        super().__init__(text)
        self._model = model
        self._before = before
        self._after = after
        self._path = path
        self._merge_key = merge_key
        #: Longest pause (seconds) between two merged edits; None: no limit (a drag).
        self._window = window
        self._last_edit = burst_clock()

    def id(self) -> int:
        return _merge_id(self._merge_key) if self._merge_key else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, _StateCommand) or other._merge_key != self._merge_key:
            return False
        if self._window is not None and other._last_edit - self._last_edit > self._window:
            return False
        self._after = other._after
        self._last_edit = other._last_edit
        # Up and back down again is no edit at all: the stack drops the step.
        self.setObsolete(self._after == self._before)
        return True

    def redo(self) -> None:
        self._model._apply(self._after, self._path)

    def undo(self) -> None:
        self._model._apply(self._before, self._path)
