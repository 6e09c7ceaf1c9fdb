"""A round's name and date, as the lead's reports give them: a drawn round is named after
its file and dated the day of its draw, while the lead reports by month (session 14 left
it alone; trial 14's lead asked for it)."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from PySide6.QtCore import QDate
from PySide6.QtWidgets import QDialogButtonBox

from core.errors import InputError
from core.intervals import wilson_precision
from core.workbook.rounds import Round
from core.workbook.session_io import (
    LABELED_SHEET,
    previous_round_of,
    renamed_round,
    round_key,
)
from desktop.rounds_panel import RoundDetailsDialog, previous_round_changes


def drawn(row, classifier, name="round1 labels", tp=90, date=dt.date(2026, 11, 3)):
    """A round read from a labeling workbook in the app."""
    return Round(
        sheet=LABELED_SHEET, row=row, round=name, date=date, classifier=classifier,
        k=3_000 / 97_000, population_pos=3_000, population_neg=97_000,
        tp=tp, fp=10, fn=20, tn=400,
    )  # fmt: skip


@pytest.fixture
def two_classifiers(window):
    """The session holds one draw read for spam_v7 and spam_v8; v7's is the Plan's
    previous round and the Evaluate tab's current round."""
    v7, v8 = drawn(1, "spam_v7"), drawn(2, "spam_v8", tp=80)
    window.session.set_values([("rounds", (v7, v8)), ("current_round", round_key(v7))])
    window.session.set_values(previous_round_changes(v7))
    window.rounds_panel.set_source("My rounds", [])
    return v7, v8


def test_the_name_and_date_of_a_drawn_round_are_the_leads_in_one_undo_step(
    qtbot, window, two_classifiers
):
    v7, _v8 = two_classifiers
    panel = window.rounds_panel
    menu = panel.context_menu(0)
    assert panel.details_action in menu.actions() and panel.details_action.isEnabled()
    panel.details_action.trigger()
    dialog = window.findChild(RoundDetailsDialog, "round_details_dialog")
    assert dialog is not None and dialog.name_edit.text() == "round1 labels"
    dialog.name_edit.setText("  November 2026 ")
    dialog.date_edit.setDate(QDate(2026, 11, 30))
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()
    state = window.session.state
    renamed = state.rounds[0]
    assert (renamed.round, renamed.date) == ("November 2026", dt.date(2026, 11, 30))
    assert renamed.matrix == v7.matrix and renamed.classifier == "spam_v7"
    # The Plan still builds on it, under its new name; the Evaluate tab still shows it.
    assert state.previous_round == "November 2026" and previous_round_of(state) is renamed
    assert state.current_round == round_key(v7)
    assert (
        window.statusBar()
        .currentMessage()
        .startswith("Renamed round1 labels to November 2026; dated 2026-11-30")
    )
    assert not dialog.isVisible()
    window.session.undo_stack.undo()
    assert window.session.state.rounds[0] == v7
    assert window.session.state.previous_round == "round1 labels"


def test_a_name_refused_is_said_in_the_dialog_which_keeps_the_typing(
    qtbot, window, two_classifiers
):
    panel = window.rounds_panel
    dialog = panel.edit_round_details(1)
    before = window.session.state
    for name, said in (
        ("   ", "The name is blank"),
        ("Nov\n2026", "holds a line break"),
    ):
        dialog.name_edit.setText(name)
        dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()
        assert dialog.isVisible() and dialog.problem.isVisible()
        assert said in dialog.problem.text()
        assert window.session.state is before
    # Another classifier's round may share the name (the classifiers of one draw do).
    assert panel.set_round_details(1, "round1 labels", None, dialog=dialog)
    assert window.session.state.rounds[1].date is None
    assert not dialog.isVisible()
    # Two rounds of one classifier may not: the History and the Plan tell them apart by it.
    third = drawn(3, "spam_v8", name="October", date=dt.date(2026, 10, 30))
    window.session.set_values([("rounds", (*window.session.state.rounds, third))])
    assert not panel.set_round_details(2, "ROUND1 LABELS", third.date)
    assert "Classifier spam_v8 already has a round named 'round1 labels'" in (
        window.statusBar().currentMessage()
    )


def test_a_row_of_the_leads_rounds_workbook_is_changed_in_the_workbook(
    qtbot, window, shared_fixtures, tmp_path
):
    # Opening the workbook again would bring the row back as it is: the app does not
    # pretend to rename it, and says where to.
    mine = tmp_path / "my rounds.xlsx"
    mine.write_bytes((shared_fixtures / "rounds_simple.xlsx").read_bytes())
    assert window.open_workbook(mine)
    panel = window.rounds_panel
    panel.context_menu(0)
    assert not panel.details_action.isEnabled()
    assert panel.details_action.text().endswith("(in your rounds workbook)")
    assert panel.edit_round_details(0) is None
    # A round read from labels into that session is the app's: it may be renamed.
    added = drawn(99, window.session.state.rounds[-1].classifier, name="read in the app")
    window.session.set_values([("rounds", (*window.session.state.rounds, added))])
    row = len(window.session.state.rounds) - 1
    panel.context_menu(row)
    assert panel.details_action.isEnabled()


def test_the_new_name_and_date_come_back_with_the_saved_session(
    qtbot, window, two_classifiers, tmp_path
):
    assert window.rounds_panel.set_round_details(0, "Nov 2026", dt.date(2026, 11, 30))
    target = tmp_path / "spam session.xlsx"
    assert window.save_to(target)
    window.session.undo_stack.setClean()
    assert window.open_workbook(target, ask=False)
    state = window.session.state
    names = [(item.round, item.date, item.classifier) for item in state.rounds]
    assert names == [
        ("Nov 2026", dt.date(2026, 11, 30), "spam_v7"),
        ("round1 labels", dt.date(2026, 11, 3), "spam_v8"),
    ]
    assert previous_round_of(state).round == "Nov 2026"


def test_renamed_round_checks_the_name_as_a_workbook_cell_would():
    v7, v8 = drawn(1, "spam_v7"), drawn(2, "spam_v8")
    assert renamed_round((v7, v8), v7, " Oct ", None).round == "Oct"
    with pytest.raises(InputError, match="32,768 characters long"):
        renamed_round((v7, v8), v7, "x" * 32_768, None)
    with pytest.raises(InputError, match="cannot store"):
        renamed_round((v7, v8), v7, "Oct\x07", None)
    # Classifier names are compared as the workbook reader compares them.
    with pytest.raises(InputError, match="already has a round named"):
        renamed_round((v7, drawn(3, "SPAM_V7", name="Oct")), v7, "oct", None)


def test_whose_round_the_plan_builds_on_is_said_when_a_draw_shares_its_name(
    qtbot, window, two_classifiers
):
    # "Nov 2026 spam review is the previous round" did not say it was v8's, and the next
    # draw was then filed under v8 (trial 15).
    assert window.choose_previous_round(1)
    assert (
        window.statusBar()
        .currentMessage()
        .startswith("round1 labels (spam_v8) is the previous round")
    )
    assert "round1 labels (spam_v8)" in window.rounds_panel.previous.text()
    assert window.rounds_panel.evaluate_round(0)
    assert window.statusBar().currentMessage().startswith("Evaluate shows round1 labels (spam_v7)")
    # A name of its own is said alone.
    assert window.rounds_panel.set_round_details(1, "Nov v8", None)
    assert window.rounds_panel.previous.text() == "The Plan builds on: <b>Nov v8</b>"


def test_a_rounds_interval_in_history_does_not_move_as_the_lead_clicks_between_rounds(
    qtbot, window
):
    # The Evaluate tab's box carried over from the round shown before: May (typed) was
    # corrected after October (drawn by the rule) had been evaluated, and not before
    # (review 15).
    from core.workbook.session_io import round_key

    may = drawn(1, "spam_v7", name="May", date=dt.date(2026, 5, 1))
    may = dataclasses.replace(may, notes=None)
    october = drawn(2, "spam_v7", name="Oct", date=dt.date(2026, 10, 1), tp=95)
    october = dataclasses.replace(
        october, notes="PR Planner labeling round: seed 7, items from mail.csv"
    )
    window.session.set_values([("rounds", (may, october)), ("current_round", "")])
    window.build_deferred_tabs()
    from desktop.history_tab import HistoryTab

    history = window._tab_at(window.tab_keys.index("history"), HistoryTab)
    panel = window.rounds_panel

    def may_interval():
        history.refresh_if_deferred()  # hidden, the tab puts its work off until shown
        figure = next(f for f in history.figures if f.name == "May")
        return figure.precision_interval.lower, figure.precision_interval.upper

    seen = []
    for row in (1, 0, 1, 0):
        assert panel.evaluate_round(row, show=False)
        state = window.session.state
        assert state.evaluate.fpc == (row == 1)  # the box says how the round shown was drawn
        assert state.current_round == round_key((may, october)[row])
        seen.append(may_interval())
    assert seen[0] == seen[1] == seen[2] == seen[3]
    # October, drawn by the rule, is corrected whichever round is shown.
    history.refresh_if_deferred()
    october_figure = next(f for f in history.figures if f.name == "Oct")
    plain = wilson_precision(october.matrix, 0.95)
    assert october_figure.precision_interval.lower > plain.lower


def test_a_renamed_round_stays_ticked_and_an_unnamed_one_can_be_dated(
    qtbot, window, two_classifiers
):
    # Renamed, a round ticked on the Prevalence tab was unticked; a round without a name
    # could not have its date changed alone ("the name is blank") (review 15).
    from desktop.prevalence_tab import compare_keys, compared_flags

    session = window.session
    v7, v8 = two_classifiers
    unnamed = dataclasses.replace(drawn(3, "spam_v7", tp=70), round=None)
    session.set_values([("rounds", (v7, v8, unnamed))])
    keys = compare_keys(session.state.rounds)
    session.set_values([("prevalence.compared_rounds", (keys[0], keys[2]))])
    panel = window.rounds_panel
    assert panel.set_round_details(0, "Nov v7", dt.date(2026, 11, 30))
    state = session.state
    assert compared_flags(state.rounds, state.prevalence.compared_rounds) == [True, False, True]
    assert panel.set_round_details(2, "", dt.date(2026, 11, 1))
    changed = session.state.rounds[2]
    assert (changed.round, changed.date) == (None, dt.date(2026, 11, 1))
    assert window.statusBar().currentMessage().startswith(f"Dated {changed.name} 2026-11-01")
    assert panel.set_round_details(2, "", None)
    assert window.statusBar().currentMessage().startswith(f"Took the date off {changed.name}")


def test_opening_a_workbook_of_two_classifiers_says_whose_round_it_shows(qtbot, window, tmp_path):
    # "Evaluate and Plan show its latest round, Oct 2026" with v7 and v8 rounds of that
    # name (recheck 15).
    import openpyxl

    path = tmp_path / "spam_rounds.xlsx"
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Round", "Date", "Classifier", "k", "TP", "FP", "FN", "TN"])
    for month in (8, 9, 10):
        sheet.append(
            [f"2026-{month:02d}", dt.date(2026, month, 1), "spam_v7", 0.03, 90, 20, 9, 900]
        )
    sheet.append(["2026-10", dt.date(2026, 10, 1), "spam_v8", 0.03, 95, 25, 4, 900])
    workbook.save(path)
    assert window.open_workbook(path, ask=False)
    assert "show its latest round, 2026-10 (spam_v7)" in window.statusBar().currentMessage()


def test_a_renamed_round_still_counts_as_the_sources(qtbot, window, two_classifiers):
    # "Rounds of this session: 2 (1 from My rounds)" after one rename (recheck 15).
    window.rounds_panel.set_source("spam session.xlsx", [])
    assert window.rounds_panel.set_round_details(0, "Nov v7", None)
    assert window.rounds_panel.source.text() == (
        "Rounds of this session: 2 (2 from spam session.xlsx)"
    )
