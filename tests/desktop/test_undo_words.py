"""Edit > Undo names each edit in the words the tabs show, never as a dotted field path."""

from __future__ import annotations

import dataclasses
import re

import pytest
from PySide6.QtWidgets import QAbstractSpinBox, QComboBox, QWidget

from core.session import SessionState
from desktop import main_window as main_window_module
from desktop.main_window import MainWindow, app_settings
from desktop.plan_tab import PlanTab
from desktop.session_model import FIELD_LABELS, SessionModel, field_label
from desktop.widgets import BoundCheck, ConfidenceBox, LogSliderSpin, _Bound

#: A field path as code writes it: ``plan.cost_pos``, ``evaluate.matrix.tp``.
DOTTED_PATH = re.compile(r"[a-z_]+\.[a-z_0-9]+")


def leaf_paths(value, prefix: str = "") -> list[str]:
    """Every input's dotted path below a state dataclass (a Prior and a matrix included)."""
    if not dataclasses.is_dataclass(value):
        return [prefix]
    paths = []
    for field in dataclasses.fields(value):
        paths.extend(leaf_paths(getattr(value, field.name), f"{prefix}{field.name}."))
    return [path.rstrip(".") for path in paths]


ALL_PATHS = leaf_paths(SessionState())


def test_every_input_of_the_session_has_its_own_words():
    assert "plan.cost_pos" in ALL_PATHS and "plan.prior.a11" in ALL_PATHS
    missing = [path for path in ALL_PATHS if path not in FIELD_LABELS]
    assert missing == []
    for path in ALL_PATHS:
        words = field_label(path)
        assert not DOTTED_PATH.search(words), (path, words)
        assert "_" not in words, (path, words)
    # The Plan tab's fields are named as on the tab (a label may carry a tab's name).
    assert field_label("plan.cost_pos") == "label cost, predicted positive"
    assert field_label("plan.cost_neg") == "label cost, predicted negative"
    assert len({field_label(path) for path in ALL_PATHS}) == len(ALL_PATHS)


def test_a_path_without_words_borrows_its_parents():
    assert field_label("ensemble.children.2.name") == "child classifiers"
    assert field_label("") == "session"


@pytest.fixture
def tab(qtbot):
    session = SessionModel()
    widget = PlanTab(session)
    qtbot.addWidget(widget)
    yield widget
    widget.shutdown()


def nudge(widget: QWidget) -> None:
    """Change a bound widget's value as a user would with one click or key."""
    if isinstance(widget, LogSliderSpin):
        widget.spin.stepBy(1)
    elif isinstance(widget, QAbstractSpinBox):
        widget.stepBy(1)
    elif isinstance(widget, ConfidenceBox):
        widget.setCurrentIndex((widget.currentIndex() + 1) % widget.count())
        widget.activated.emit(widget.currentIndex())
    elif isinstance(widget, QComboBox):
        widget.setCurrentIndex((widget.currentIndex() + 1) % widget.count())
    elif isinstance(widget, BoundCheck):
        widget.box.toggle()
    else:  # pragma: no cover - a new kind of field needs a line here
        raise AssertionError(f"no way to edit {type(widget).__name__}")


def test_each_plan_field_edit_is_undone_in_words(qtbot, tab):
    session = tab._session
    fields = [
        widget
        for widget in tab.findChildren(QWidget)
        # (the v slider's own count box is not bound: the slider writes for it)
        if isinstance(widget, _Bound)
        and hasattr(widget, "_path")
        and widget.isVisibleTo(tab)
        and widget.path != "plan.belief"
    ]
    edited = set()
    for widget in fields:
        nudge(widget)
        assert session.undo_stack.index() == 1, widget.path  # one step (then undone)
        text = session.undo_stack.undoText()
        assert not DOTTED_PATH.search(text), (widget.path, text)
        if widget.path == "plan.population.mode":  # names the choice: "... as k"
            assert text.startswith("Population given as ")
        else:
            assert text == FIELD_LABELS[widget.path]
        edited.add(widget.path)
        session.undo_stack.undo()
    assert {
        "plan.cost_pos",
        "plan.cost_neg",
        "plan.margin_precision",
        "plan.margin_recall",
        "plan.s",
        "plan.v",
        "plan.assurance_target",
        "confidence",
        "plan.prior_strength",
    } - edited == set()


def test_grid_and_prior_edits_are_named_in_words(qtbot, tab):
    session = tab._session
    tab.grid.model.setData(tab.grid.model.index(0, 0), "240")
    assert session.undo_stack.undoText() == "previous round's counts, TP (predicted +, actual +)"
    alpha = tab.prior_editor.alphas["a11"]
    alpha.setValue(alpha.value() + 1)
    assert session.undo_stack.undoText() == "prior α11 (TP)"


def test_the_menu_reads_undo_colon_words(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv(main_window_module.SETTINGS_DIR_ENV, str(tmp_path))
    window = MainWindow(settings=app_settings())
    qtbot.addWidget(window)
    assert window.undo_action.text() == "&Undo" and not window.undo_action.isEnabled()
    window.tabs.widget(0).cost_pos.setValue(2.0)
    assert window.undo_action.text() == "&Undo: label cost, predicted positive"
    assert window.undo_action.isEnabled()
    window.undo_action.trigger()
    assert window.session.get("plan.cost_pos") == 1.0
    assert window.redo_action.text() == "&Redo: label cost, predicted positive"
    assert window.undo_action.text() == "&Undo"
    window.redo_action.trigger()
    assert window.session.get("plan.cost_pos") == 2.0
    window.session.undo_stack.setClean()
    window.close()
