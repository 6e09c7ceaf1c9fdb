"""The Qt face of :class:`core.session.SessionState` (spec page 05, habits 4-6).

The window holds one :class:`SessionModel`. Widgets never keep their own copy of an input:
they call :meth:`SessionModel.set_value` (one undoable step, or merged into the previous
step while a slider is dragged) and refresh from :attr:`SessionModel.state` when
:attr:`SessionModel.changed` names a path they show.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

from core.errors import InputError
from core.session import SessionState, get_path, replace_path

_MERGE_IDS: dict[str, int] = {}


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
        self, path: str, value: Any, *, merge_key: str | None = None, text: str | None = None
    ) -> str | None:
        """Set one input as an undoable step; return the refusal message or ``None``.

        ``merge_key`` merges consecutive edits with the same key into one undo step (a
        slider drag is one step, spec page 05 habit 5).
        """
        return self.set_values([(path, value)], merge_key=merge_key, text=text)

    def set_values(
        self,
        changes: Iterable[tuple[str, Any]],
        *,
        merge_key: str | None = None,
        text: str | None = None,
    ) -> str | None:
        """Apply several edits as one undo step (a paste, a preset); all or nothing."""
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
        label = text or f"Edit {common or 'session'}"
        self.undo_stack.push(_StateCommand(self, self._state, new_state, common, label, merge_key))
        return None

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
    ):
        super().__init__(text)
        self._model = model
        self._before = before
        self._after = after
        self._path = path
        self._merge_key = merge_key

    def id(self) -> int:
        return _merge_id(self._merge_key) if self._merge_key else -1

    def mergeWith(self, other: QUndoCommand) -> bool:
        if not isinstance(other, _StateCommand) or other._merge_key != self._merge_key:
            return False
        self._after = other._after
        return True

    def redo(self) -> None:
        self._model._apply(self._after, self._path)

    def undo(self) -> None:
        self._model._apply(self._before, self._path)
