"""Typing into a table cell as a lead does, for the grid and Plan tab tests."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit


def type_into_cell(qtbot, view, row, column, text) -> None:
    """Select a cell and type as into a spreadsheet: the first key opens the editor, the
    rest reach it (offscreen no window is active, so focus cannot route them); Enter
    commits."""
    view.setCurrentIndex(view.model().index(row, column))
    view.setFocus()
    qtbot.keyClicks(view, text[0])
    # An earlier editor may still await its deferred deletion on a busy machine: Qt hid
    # it when it closed, so the open one is the one not hidden.
    editors = [found for found in view.viewport().findChildren(QLineEdit) if not found.isHidden()]
    assert editors, "typing did not open a cell editor"
    editor = editors[-1]
    qtbot.keyClicks(editor, text[1:])
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    # Qt commits an editor on Enter through a queued call: let the event loop turn.
    qtbot.waitUntil(lambda: view.state() != view.State.EditingState, timeout=2000)
