"""Plan tab: live readouts and curves equal what core computes, grid input, simulation."""

from __future__ import annotations

import re
from dataclasses import replace
from html import escape

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QGuiApplication, QKeySequence, QWheelEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLineEdit,
    QSlider,
    QWidget,
)

from core.bayes import Prior
from core.confusion import ConfusionMatrix, Population
from core.planning import WidthCurveModel, make_plan, rates_from_round
from core.session import PlanInputs, SessionState
from desktop import formatting, plan_tab
from desktop.formatting import chance
from desktop.plan_tab import CURRENT_PRIOR, V_GRID, PlanTab, margin
from desktop.session_model import SessionModel
from tests.desktop.typing import type_into_cell

K = 41_200 / 1_251_000


@pytest.fixture
def session():
    """The default session with an informative prior (expected P/R, strength 10)."""
    plan = PlanInputs()
    prior = Prior.from_expected(plan.expected_precision, plan.expected_recall, K, 10.0)
    return SessionModel(SessionState(plan=replace(plan, prior_preset="expected", prior=prior)))


@pytest.fixture
def tab(qtbot, session):
    widget = PlanTab(session)
    qtbot.addWidget(widget)
    widget.resize(1500, 750)
    widget.show()
    qtbot.waitExposed(widget)
    widget.activateWindow()
    yield widget
    widget.shutdown()


def wait_refresh(qtbot, tab):
    """Let the coalescing timer fire (as the event loop would after a slider move)."""
    qtbot.waitUntil(lambda: not tab._timer.isActive() and not tab._stale, timeout=2000)


def drag(slider, positions):
    slider.setSliderDown(True)
    for position in positions:
        slider.setValue(position)
    slider.setSliderDown(False)


def core_model(state: SessionState) -> WidthCurveModel:
    plan = state.plan
    return WidthCurveModel.build(
        k=K,
        precision=plan.expected_precision,
        recall=plan.expected_recall,
        confidence=state.confidence,
        posteriors=[(CURRENT_PRIOR, plan.prior.posterior())],
    )


def core_fixed_plan(state: SessionState):
    plan = state.plan
    return make_plan(
        population=Population.from_counts(41_200, 1_251_000),
        precision=plan.expected_precision,
        recall=plan.expected_recall,
        margin_precision=plan.margin_precision,
        margin_recall=plan.margin_recall,
        confidence=state.confidence,
        posterior=plan.prior.posterior(),
        cost_pos=1.0,
        cost_neg=1.0,
        s=plan.s,
        v=plan.v,
    )


def test_readouts_are_cores_numbers(tab, session):
    state = session.state
    recommended = make_plan(
        population=Population.from_counts(41_200, 1_251_000),
        precision=0.9,
        recall=0.8,
        posterior=state.plan.prior.posterior(),
        cost_pos=1.0,
        cost_neg=1.0,
    )
    r = tab.readouts
    assert r["s_star"].text() == formatting.oversampling(recommended.s_star)
    assert r["s_star_bayes"].text() == formatting.oversampling(recommended.s_star_bayes)
    assert r["n_pos"].text() == formatting.thousands(recommended.n_pos)
    assert r["n_neg"].text() == formatting.thousands(recommended.n_neg)
    assert formatting.thousands(recommended.total) in r["total"].text()
    assert r["plan_margin_recall"].text() == margin(recommended.margin_recall)
    design = core_fixed_plan(state)
    assert r["design_n_pos"].text() == formatting.thousands(design.n_pos)
    assert r["design_margin_precision"].text() == margin(design.margin_precision)
    assert r["design_margin_recall"].text() == margin(design.margin_recall)


def test_dragging_s_updates_readouts_and_curves_live(qtbot, tab, session):
    slider = tab.s_slider.slider
    model = core_model(session.state)
    v_curve = tab.v_curves[("recall", "frequentist")]
    _, before = v_curve.getData()
    refreshes = tab.refresh_count
    slider.setSliderDown(True)
    for position in (450, 520, 610):
        slider.setValue(position)
        wait_refresh(qtbot, tab)
        s = tab.s_slider.value_at(position)
        assert session.get("plan.s") == s
        expected = model.over_v(s, V_GRID)
        x, y = v_curve.getData()
        np.testing.assert_allclose(10**x, V_GRID)  # log axis: getData gives log10(v)
        np.testing.assert_allclose(y, expected.recall_width[0])
        _, y = tab.v_curves[("precision", CURRENT_PRIOR)].getData()
        np.testing.assert_allclose(y, expected.precision_width[1])
        design = core_fixed_plan(session.state)
        assert tab.readouts["design_n_pos"].text() == formatting.thousands(design.n_pos)
        assert tab.readouts["design_margin_recall"].text() == margin(design.margin_recall)
        assert tab.s_markers["recall"]["s"].value() == pytest.approx(np.log10(s))
    slider.setSliderDown(False)
    assert tab.refresh_count == refreshes + 3
    assert not np.allclose(v_curve.getData()[1], before)
    # the whole drag is one undo step
    assert session.undo_stack.count() == 1
    session.undo_stack.undo()
    wait_refresh(qtbot, tab)
    assert session.get("plan.s") == 2.0
    np.testing.assert_allclose(v_curve.getData()[1], before)
    session.undo_stack.redo()
    assert session.get("plan.s") == tab.s_slider.value_at(610)


def test_dragging_v_redraws_width_vs_s(qtbot, tab, session):
    drag(tab.v_slider.slider, [600, 700])
    wait_refresh(qtbot, tab)
    v = session.get("plan.v")
    assert v == tab.v_slider.value_at(700)
    curves = core_model(session.state).over_s(v)
    for metric, widths in (
        ("precision", curves.precision_width),
        ("recall", curves.recall_width),
    ):
        for row, label in enumerate(curves.labels):
            x, y = tab.s_curves[metric][label].getData()
            np.testing.assert_allclose(10**x, curves.s)
            np.testing.assert_allclose(y, widths[row])
    star_x, star_y = tab.star_points["recall"].getData()
    np.testing.assert_allclose(10**star_x, curves.s_star)
    np.testing.assert_allclose(star_y, curves.recall_width_at_s_star)
    assert tab.s_markers["recall"]["s_star"].value() == pytest.approx(np.log10(curves.s_star[0]))


def test_bursts_are_coalesced_into_one_refresh(qtbot, tab, session):
    count = tab.refresh_count
    for value in (1.1, 1.2, 1.3, 1.4, 1.5):
        session.set_value("plan.s", value)
    session.set_value("plan.v", 2000)
    assert tab.refresh_count == count  # nothing redrawn inside the burst
    wait_refresh(qtbot, tab)
    assert tab.refresh_count == count + 1
    assert tab.readouts["design"].text() == "1.50"
    assert tab.readouts["design_total"].text() == "<b>2,000</b>"


def test_previous_round_grid_typed_and_pasted(qtbot, tab, session):
    tab.belief.setCurrentIndex(tab.belief.findData("previous"))
    wait_refresh(qtbot, tab)
    assert tab.belief_pages.currentWidget() is tab.grid
    view = tab.grid.view
    type_into_cell(qtbot, view, 0, 0, "250")
    assert session.get("plan.previous.tp") == 250
    assert view.currentIndex().row() == 1  # Enter moves down, as in a spreadsheet
    wait_refresh(qtbot, tab)
    precision, recall, _notes = rates_from_round(session.get("plan.previous"), K)
    recommended = make_plan(
        population=Population.from_counts(41_200, 1_251_000),
        precision=precision,
        recall=recall,
        cost_pos=1.0,
        cost_neg=1.0,
    )
    assert tab.readouts["s_star"].text() == formatting.oversampling(recommended.s_star)

    QGuiApplication.clipboard().setText(
        "\tActual +\tActual -\nPred +\t300\t40\nPred -\t90\t4,300\n"
    )
    view.setCurrentIndex(view.model().index(0, 0))
    steps = session.undo_stack.count()
    qtbot.keySequence(view, QKeySequence.StandardKey.Paste)
    assert session.get("plan.previous") == ConfusionMatrix(tp=300, fp=40, fn=90, tn=4300)
    assert session.undo_stack.count() == steps + 1
    wait_refresh(qtbot, tab)
    precision, recall, _notes = rates_from_round(session.get("plan.previous"), K)
    assert tab.basis.precision == pytest.approx(precision)
    assert tab.basis.recall == pytest.approx(recall)
    session.undo_stack.undo()
    assert session.get("plan.previous.tp") == 250


def test_refused_grid_entry_keeps_value(qtbot, tab, session):
    tab.belief.setCurrentIndex(tab.belief.findData("previous"))
    view = tab.grid.view
    messages = []
    tab.grid.model.refused.connect(messages.append)
    type_into_cell(qtbot, view, 0, 1, "-4")
    assert session.get("plan.previous.fp") == 29
    assert messages and "negative" in messages[0]
    assert tab.grid.model.cell_error(0, 1)


def test_use_recommended_moves_sliders_in_one_step(qtbot, tab, session):
    plan = tab.basis.recommended
    tab.use_recommended.click()
    assert session.get("plan.s") == round(plan.s, 2)
    assert session.get("plan.v") == plan.total
    assert session.undo_stack.count() == 1
    wait_refresh(qtbot, tab)
    assert tab.s_slider.spin.value() == round(plan.s, 2)


def test_bayesian_toggle_and_fpc_messages(qtbot, tab, session):
    tab.prior_editor.preset.setCurrentIndex(tab.prior_editor.preset.findData("jeffreys"))
    tab.belief.setCurrentIndex(tab.belief.findData("previous"))
    tab.bayesian.box.click()
    wait_refresh(qtbot, tab)
    assert session.get("plan.bayesian") is True
    assert "Bayesian" in tab.plan_box.title()
    # 1,000 labels of the previous round and a Jeffreys prior leave a predictive recall
    # margin above 5 %:
    # core refuses the target and the tab says why instead of showing a plan
    assert tab.basis.recommended is None
    assert "cannot be reached" in tab.notes.text()
    session.set_value("plan.margin_recall", 0.15)
    wait_refresh(qtbot, tab)
    assert tab.basis.recommended.bayesian
    assert tab.readouts["plan_margin_recall"].text() == margin(tab.basis.recommended.margin_recall)
    # FPC needs both counts: with k only, the plan is made without it and the tab says so
    tab.population.mode.setCurrentIndex(tab.population.mode.findData("k"))
    tab.fpc.box.click()
    wait_refresh(qtbot, tab)
    assert session.get("plan.fpc") is True
    assert "population counts" in tab.notes.text() and "without it" in tab.notes.text()
    assert tab.basis.recommended.fpc_factors == (1.0, 1.0)
    assert tab.readouts["n_pos"].text() == formatting.thousands(tab.basis.recommended.n_pos)


def test_simulation_runs_in_background_and_can_be_cancelled(qtbot, tab, monkeypatch):
    monkeypatch.setattr(plan_tab, "ASSURANCE_REPS", 500)
    monkeypatch.setattr(plan_tab, "COVERAGE_REPS", 50)
    monkeypatch.setattr(plan_tab, "COVERAGE_REPLICATES", 50)
    with qtbot.waitSignal(tab.runner.finished, timeout=20_000):
        assert tab.start_simulation()
        assert tab.cancel_button.isEnabled()
    text = tab.simulation_result.text()
    assert "Chance met (simulated)" in text and "Coverage" in text
    # the Bayesian rows predict the next round's estimate, and say so
    assert text.index("Prediction for the next round's estimate") < text.index(
        "Bayes predictive MC"
    )
    assert tab.progress.value() == 1000
    assert not tab.cancel_button.isEnabled()

    # a long run, cancelled by the user
    monkeypatch.setattr(plan_tab, "COVERAGE_REPS", 200_000)
    results = []
    tab.runner.finished.connect(results.append)
    with qtbot.waitSignal(tab.runner.cancelled, timeout=5000):
        tab.start_simulation()
        qtbot.mouseClick(tab.cancel_button, Qt.MouseButton.LeftButton)
    assert tab.simulation_result.text() == "Cancelled."
    tab.runner.wait()
    QGuiApplication.processEvents()
    assert results == []  # the cancelled run's result, if any, was dropped


def test_newer_simulation_supersedes_stale_one(qtbot, tab, session, monkeypatch):
    monkeypatch.setattr(plan_tab, "ASSURANCE_REPS", 500)
    monkeypatch.setattr(plan_tab, "COVERAGE_REPS", 20_000)
    monkeypatch.setattr(plan_tab, "COVERAGE_REPLICATES", 200)
    results = []
    tab.runner.finished.connect(results.append)
    tab.start_simulation()
    monkeypatch.setattr(plan_tab, "COVERAGE_REPS", 50)
    session.set_value("plan.v", 3000)
    with qtbot.waitSignal(tab.runner.finished, timeout=20_000):
        tab.start_simulation()
    tab.runner.wait()
    QGuiApplication.processEvents()
    assert [result.v for result in results] == [3000]
    assert "3,000" in tab.simulation_result.text()


def test_non_informative_prior_without_data_gets_no_curve(qtbot, tab, session):
    session.set_value("plan.prior_preset", "jeffreys")
    wait_refresh(qtbot, tab)
    x, _ = tab.s_curves["recall"][CURRENT_PRIOR].getData()
    assert x is None or len(x) == 0
    assert tab.readouts["s_star_bayes"].text() == "– (no prior)"
    assert "how much prior knowledge" in tab.notes.text()
    x, _ = tab.s_curves["recall"]["prior strength 10"].getData()
    assert len(x) > 0


def test_every_input_and_plot_has_a_tooltip(tab):
    for widget in tab.findChildren(QWidget):
        if isinstance(widget, QLineEdit) and isinstance(
            widget.parent(), (QAbstractSpinBox, QComboBox)
        ):
            continue
        if isinstance(widget, (QAbstractSpinBox, QComboBox, QLineEdit, QSlider)):
            assert widget.toolTip(), f"{type(widget).__name__} {widget.objectName()}"
    for plot in (tab.precision_plot, tab.recall_plot, tab.v_plot):
        assert plot.toolTip()
        assert plot.plotItem.getAxis("bottom").labelText
        assert plot.plotItem.getAxis("left").labelText


def test_expected_precision_typed_as_fraction_means_percent(qtbot, tab, session):
    """A new user types 0.85 for 85 %: the field reads it as Excel's percent cells do."""
    line = tab.expected_precision.lineEdit()
    line.selectAll()
    qtbot.keyClicks(line, "0.85")
    qtbot.keyClick(line, Qt.Key.Key_Return)
    wait_refresh(qtbot, tab)
    assert session.get("plan.expected_precision") == pytest.approx(0.85)
    assert tab.expected_precision.text() == "85.0 %"
    design = core_fixed_plan(session.state)
    assert tab.readouts["design_margin_recall"].text() == margin(design.margin_recall)
    assert design.margin_recall < 0.5  # not the ± 133.7 % of a 0.8 % precision
    # With the sign the number is literal.
    line.selectAll()
    qtbot.keyClicks(line, "0.5 %")
    qtbot.keyClick(line, Qt.Key.Key_Return)
    assert session.get("plan.expected_precision") == pytest.approx(0.005)


def test_plan_messages_use_app_words_not_cli_flags(qtbot, tab, session):
    # A small population: the design needs more predicted positives than there are.
    session.set_value("plan.population.predicted_positive", 30)
    wait_refresh(qtbot, tab)
    shown = tab.notes.text() + " " + tab.readouts["design_meets"].text()
    assert "population has only 30" in shown
    assert "with Finite population correction the plan accounts" in shown
    assert "--" not in shown and "`" not in shown


def test_chance_of_meeting_each_margin_is_shown_and_follows_the_sliders(qtbot, tab, session):
    r = tab.readouts
    recommended = tab.basis.recommended
    assert r["plan_chance_precision"].text() == chance(recommended.assurance.precision)
    assert r["plan_chance_recall"].text() == chance(recommended.assurance.recall)
    assert r["plan_chance_both"].text() == f"<b>{escape(chance(recommended.assurance.both))}</b>"
    slider = tab.s_slider.slider
    slider.setSliderDown(True)
    seen = set()
    for position in (430, 560, 700):
        slider.setValue(position)
        wait_refresh(qtbot, tab)
        design = core_fixed_plan(session.state)
        assert r["design_chance_precision"].text() == chance(design.assurance.precision)
        assert r["design_chance_recall"].text() == chance(design.assurance.recall)
        assert r["design_chance_both"].text() == f"<b>{escape(chance(design.assurance.both))}</b>"
        seen.add((r["design_chance_precision"].text(), r["design_chance_recall"].text()))
    slider.setSliderDown(False)
    assert len(seen) == 3  # it moved with the design


def test_chance_readouts_never_round_to_certainty():
    assert chance(0.99996) == "> 99.9 %" and chance(0.00001) == "< 0.1 %"
    assert chance(1.0) == formatting.percent(1.0, 1) and chance(0.532) == "53.2 %"
    # one decimal in every row of a column of chances (the chance of decline beside 24.7 %)
    assert chance(0.00441) == "0.4 %" and chance(0.247) == "24.7 %"


def test_assured_plan_is_shown_beside_the_recommended_when_a_chance_is_set(qtbot, tab, session):
    assert not tab.assured_header.isVisible()  # off by default
    with qtbot.waitSignal(tab.assured_shown, timeout=20_000):
        session.set_value("plan.assurance_target", 0.9)
        tab.flush()  # the refresh, without running the event loop that delivers the result
        assert tab.assured_header.isVisible() and "updating" in tab.assured_header.text()
    state = session.state
    expected = make_plan(
        population=Population.from_counts(41_200, 1_251_000),
        precision=0.9,
        recall=0.8,
        posterior=state.plan.prior.posterior(),
        assurance_target=0.9,
    ).assured
    r = tab.readouts
    assert tab.assured == expected
    assert "updating" not in tab.assured_header.text() and "90.0 %" in tab.assured_header.text()
    assert r["assured_n_pos"].text() == formatting.thousands(expected.n_pos)
    assert r["assured_n_neg"].text() == formatting.thousands(expected.n_neg)
    assert formatting.thousands(expected.total) in r["assured_total"].text()
    assert (
        r["assured_plan_chance_both"].text() == f"<b>{escape(chance(expected.assurance.both))}</b>"
    )
    assert expected.assurance.both >= 0.9 > tab.basis.recommended.assurance.both
    # a new input greys the column until the new assured plan arrives
    with qtbot.waitSignal(tab.assured_shown, timeout=20_000):
        session.set_value("plan.margin_recall", 0.06)
        tab.flush()
        assert "updating" in tab.assured_header.text()
        assert r["assured_n_pos"].styleSheet() == plan_tab.STALE_STYLE
    assert r["assured_n_pos"].styleSheet() == ""
    assert tab.assured.total < expected.total  # a wider margin is cheaper to promise
    # "Use it" moves the sliders to the assured plan in one undo step
    qtbot.mouseClick(tab.use_assured, Qt.MouseButton.LeftButton)
    assert session.get("plan.v") == tab.assured.total
    assert session.get("plan.s") == round(tab.assured.s, 2)
    # off again: the column goes away
    session.set_value("plan.assurance_target", 0.0)
    wait_refresh(qtbot, tab)
    assert not tab.assured_header.isVisible() and tab.assured is None
    assert tab.assurance_target.text() == "off"


def test_a_simulation_result_is_marked_out_of_date_when_the_inputs_change(
    qtbot, tab, session, monkeypatch
):
    monkeypatch.setattr(plan_tab, "ASSURANCE_REPS", 500)
    monkeypatch.setattr(plan_tab, "COVERAGE_REPS", 30)
    monkeypatch.setattr(plan_tab, "COVERAGE_REPLICATES", 30)
    with qtbot.waitSignal(tab.runner.finished, timeout=20_000):
        tab.start_simulation()
    assert not tab.simulation_stale.isVisible() and tab.simulation_result.styleSheet() == ""
    shown = tab.simulation_result.text()
    session.set_value("plan.v", 2500)
    wait_refresh(qtbot, tab)
    assert tab.simulation_stale.isVisible()
    assert "Out of date" in tab.simulation_stale.text()
    assert tab.simulation_result.styleSheet() == plan_tab.STALE_STYLE
    assert tab.simulation_result.text() == shown  # kept, but marked
    session.undo_stack.undo()  # back to the simulated inputs: current again
    wait_refresh(qtbot, tab)
    assert not tab.simulation_stale.isVisible() and tab.simulation_result.styleSheet() == ""
    session.set_value("plan.expected_recall", 0.7)  # any input, not only the sliders
    wait_refresh(qtbot, tab)
    assert tab.simulation_stale.isVisible()
    with qtbot.waitSignal(tab.runner.finished, timeout=20_000):
        tab.start_simulation()
    assert not tab.simulation_stale.isVisible()


# --- the wheel, undo bursts and Tab order -----------------------------------------------------


def wheel(widget: QWidget, clicks: int) -> None:
    """``clicks`` notches of a mouse wheel over ``widget`` (positive: away from the user)."""
    inside = QPointF(widget.rect().center())
    for _ in range(abs(clicks)):
        event = QWheelEvent(
            inside,
            QPointF(widget.mapToGlobal(widget.rect().center())),
            QPoint(),
            QPoint(0, 120 if clicks > 0 else -120),
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        )
        QApplication.sendEvent(widget, event)


@pytest.fixture
def short_tab(qtbot, tab):
    """The tab on a low screen: the middle column (targets and prior) must scroll."""
    tab.resize(1500, 480)
    qtbot.waitUntil(lambda: tab.middle_scroll.verticalScrollBar().maximum() > 0, timeout=2000)
    return tab


def test_wheel_over_an_unfocused_field_scrolls_the_panel(qtbot, short_tab, session):
    spin = short_tab.cost_pos
    bar = short_tab.middle_scroll.verticalScrollBar()
    assert not spin.hasFocus()
    assert spin.focusPolicy() == Qt.FocusPolicy.StrongFocus  # the wheel never focuses it
    start = bar.value()
    wheel(spin, -3)  # towards the user: scroll down
    assert bar.value() > start
    assert spin.value() == 1.0
    assert session.get("plan.cost_pos") == 1.0
    assert session.undo_stack.count() == 0
    for field in (short_tab.method, short_tab.confidence, short_tab.s_slider.slider):
        before = session.state
        wheel(field, 2)
        assert session.state == before


def test_wheel_over_the_focused_field_changes_it_in_one_undo_step(qtbot, short_tab, session):
    spin = short_tab.cost_pos
    bar = short_tab.middle_scroll.verticalScrollBar()
    short_tab.middle_scroll.ensureWidgetVisible(spin)
    spin.setFocus()
    qtbot.waitUntil(spin.hasFocus, timeout=2000)
    start = bar.value()
    wheel(spin, 10)
    assert spin.value() == pytest.approx(2.0)  # ten steps of 0.1
    assert session.get("plan.cost_pos") == pytest.approx(2.0)
    assert bar.value() == start  # the panel stayed put
    assert session.undo_stack.count() == 1
    assert session.undo_stack.undoText() == "label cost, predicted positive"
    session.undo_stack.undo()
    assert session.get("plan.cost_pos") == 1.0
    assert spin.value() == 1.0


def test_edits_of_one_field_a_while_apart_are_separate_steps(qtbot, tab, session, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("desktop.session_model.burst_clock", lambda: clock[0])
    tab.cost_pos.stepBy(1)
    clock[0] += 0.4
    tab.cost_pos.stepBy(1)  # within the burst
    assert session.undo_stack.count() == 1
    clock[0] += 5.0
    tab.cost_pos.stepBy(1)  # later: a step of its own
    assert session.undo_stack.count() == 2
    tab.cost_neg.stepBy(1)  # another field: another step
    assert session.undo_stack.count() == 3
    tab.cost_neg.stepBy(-1)  # up and back down within the burst: no step at all
    assert session.undo_stack.count() == 2
    session.undo_stack.undo()
    assert session.get("plan.cost_pos") == pytest.approx(1.2)


def test_tab_walks_the_inputs_in_the_order_they_are_drawn(qtbot, tab):
    population = tab.population
    population.negatives.setFocus()
    qtbot.waitUntil(population.negatives.hasFocus, timeout=2000)
    seen = []
    for _ in range(4):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        seen.append(QApplication.focusWidget())
    # N0, then (k is hidden in counts mode) what you believe, then its fields, then targets
    assert seen[0] is tab.belief
    assert tab.expected_precision.isAncestorOf(seen[1]) or seen[1] is tab.expected_precision
    assert tab.expected_recall.isAncestorOf(seen[2]) or seen[2] is tab.expected_recall
    assert tab.margin_precision.isAncestorOf(seen[3]) or seen[3] is tab.margin_precision
    tab.s_slider.spin.setFocus()
    qtbot.waitUntil(tab.s_slider.spin.hasFocus, timeout=2000)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is tab.v_slider.slider


def test_unusable_planning_inputs_are_kept_as_words(monkeypatch, session):
    """A refusal of the planning inputs is stored as its message, which the notes show."""
    from core.errors import InputError

    def refuse(state):
        raise InputError("k must be a number > 0, got 0")

    monkeypatch.setattr(plan_tab, "planning_inputs", refuse)
    basis = plan_tab.plan_basis(session.state)
    assert basis.error == "k must be a number > 0, got 0"
    with pytest.raises(InputError, match="k must be a number > 0"):
        plan_tab.design_plan(session.state, basis)


# --- what a lead reads: plain words, consistent numbers, a laptop-sized window -----------------

#: Symbols and citations that belong in tooltips, not on the screen.
JARGON = ("s*", "π", "α", "Eq ", "Δ", "Total v", "n1", "n0", "frequentist", "w =")


def visible_texts(root: QWidget) -> list[str]:
    """Every text a person sees on ``root``: labels (markup removed), buttons, group titles,
    the shown choice of each combo box, plot titles and axis labels."""
    from PySide6.QtWidgets import QAbstractButton, QGroupBox, QLabel

    from desktop.plotting import PlotPanel

    texts = []
    for widget in root.findChildren(QWidget):
        if not widget.isVisible():
            continue
        if isinstance(widget, QLabel):
            texts.append(re.sub(r"<[^>]+>", "", widget.text()))
        elif isinstance(widget, QAbstractButton):
            texts.append(widget.text())
        elif isinstance(widget, QGroupBox):
            texts.append(widget.title())
        elif isinstance(widget, QComboBox):
            texts.append(widget.currentText())
        elif isinstance(widget, PlotPanel):
            texts.append(widget.plotItem.titleLabel.text or "")
            for side in ("left", "bottom"):
                texts.append(widget.plotItem.getAxis(side).labelText or "")
    return texts


def test_the_plan_speaks_plainly_and_keeps_symbols_for_tooltips(qtbot, tab, session):
    captions = {name: label.text() for name, label in tab.row_captions.items()}
    assert captions == {
        "s_star": "Best s for recall",
        "s_star_bayes": "Best s, with prior",
        "plan_s": "Over-sampling s",
        "n_pos": "Flagged to label",
        "n_neg": "Unflagged to label",
        "total": "Total to label",
        "plan_margin_precision": "Precision margin ±",
        "plan_chance_precision": "  chance met",
        "plan_margin_recall": "Recall margin ±",
        "plan_chance_recall": "  chance met",
        "plan_chance_both": "Chance both met",
    }
    # the symbols and the equations stay one hover away
    assert "s*" in tab.row_captions["s_star"].toolTip()
    assert "Theorem 1" in tab.row_captions["s_star"].toolTip()
    assert "Eq 10" in tab.row_captions["plan_margin_recall"].toolTip()
    assert "n1" in tab.row_captions["n_pos"].toolTip()
    assert tab.plan_box.title() == "Plan" and "Eq 10" in tab.plan_box.toolTip()
    # the margins above and the targets they are compared with have the same names
    form = tab.targets_box.layout()
    assert form.labelForField(tab.margin_precision).text() == captions["plan_margin_precision"]
    assert form.labelForField(tab.margin_recall).text() == captions["plan_margin_recall"]
    design = tab.design_box.layout()
    assert design.labelForField(tab.s_slider).text() == captions["plan_s"]
    assert design.labelForField(tab.v_slider).text() == "Items to label v"
    for belief in ("expected", "previous"):
        session.set_value("plan.belief", belief)
        wait_refresh(qtbot, tab)
        shown = visible_texts(tab)
        offenders = [text for text in shown for word in JARGON if word in text]
        assert offenders == [], belief
    # the Bayesian title says what the margins are about
    tab.bayesian.box.click()
    wait_refresh(qtbot, tab)
    assert tab.plan_box.title().startswith("Plan (Bayesian")
    assert "next round" in tab.plan_box.title() and "Eq 6-8" in tab.plan_box.toolTip()


def test_field_words_of_messages_match_the_labels_on_the_tab(tab):
    """core's messages name fields in the words of formatting.FIELD_WORDS: those words must
    be what the Plan tab shows."""
    form = tab.targets_box.layout()
    costs = formatting.FIELD_WORDS["costs"].split(" and ")
    assert [form.labelForField(field).text() for field in (tab.cost_pos, tab.cost_neg)] == costs
    assert tab.fpc.box.text() == formatting.FIELD_WORDS["fpc"]
    assert tab.bayesian.box.text() == formatting.FIELD_WORDS["bayesian"]
    optimal = tab.method.itemText(tab.method.findData("optimal"))
    assert formatting.FIELD_WORDS["method=optimal"].removeprefix("the ").split()[0] in optimal


def test_numbers_of_one_kind_read_alike(qtbot, tab, session):
    session.set_value("plan.assurance_target", 0.9)
    with qtbot.waitSignal(tab.assured_shown, timeout=20_000):
        tab.flush()
    r = tab.readouts
    margins = [name for name in r if "margin" in name]
    ratios = ("s_star", "s_star_bayes", "plan_s", "design", "assured_plan_s")
    chances = [name for name in r if "chance" in name]
    assert len(margins) == 6 and len(chances) == 9
    for name in margins:  # two decimals, as the target fields show them
        assert re.fullmatch(r"\d+\.\d\d %", r[name].text()), (name, r[name].text())
    for name in ratios:  # the slider's two decimals, never 1.00964
        assert re.fullmatch(r"\d+\.\d\d", r[name].text()), (name, r[name].text())
    for name in chances:
        text = re.sub(r"<[^>]+>", "", r[name].text()).replace("&lt;", "<").replace("&gt;", ">")
        assert re.fullmatch(r"(\d+\.\d|< 0\.1|> 99\.9) %", text), (name, text)
    target_field = tab.margin_precision.text()
    assert re.fullmatch(r"\d+\.\d\d %", target_field)


def test_the_ratio_s_keeps_the_sliders_two_decimals():
    assert formatting.oversampling(1.00964) == "1.01"
    assert formatting.oversampling(2) == "2.00"
    assert formatting.oversampling(12.345) == "12.35" or formatting.oversampling(12.345) == "12.34"
    assert formatting.oversampling(0.0312) == "0.031"
    assert formatting.oversampling(float("nan")) == "–"
    assert margin(0.1076) == "10.76 %" and margin(0.05) == "5.00 %"


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    """The main window with the example session, planning from its last travel round (the
    previous-round grid: the tallest Plan inputs)."""
    from PySide6.QtWidgets import QMessageBox

    from desktop import main_window as main_window_module
    from desktop.main_window import MainWindow, app_settings

    monkeypatch.setenv(main_window_module.SETTINGS_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(
        QMessageBox, "question", lambda *args, **kwargs: QMessageBox.StandardButton.Discard
    )
    widget = MainWindow(settings=app_settings())
    qtbot.addWidget(widget)
    widget.load_example()
    rounds = widget.session.state.rounds
    widget.choose_previous_round(max(i for i, r in enumerate(rounds) if r.classifier == "travel"))
    return widget


def fully_visible(widget: QWidget) -> bool:
    return widget.isVisible() and widget.visibleRegion().boundingRect() == widget.rect()


@pytest.mark.parametrize("size", [(1280, 800), (1600, 1000)])
def test_the_targets_fit_without_scrolling(qtbot, window, size):
    from PySide6.QtCore import QSize

    window.resize(QSize(*size))
    window.show()
    qtbot.waitExposed(window)
    window.tabs.setCurrentIndex(window.tab_keys.index("plan"))
    plan = window.plan_tab
    plan.flush()
    qtbot.wait(50)  # posted layout requests
    assert window.size() == QSize(*size)  # no minimum forces a wider or taller window
    assert plan.belief_pages.currentWidget() is plan.grid  # the tall previous-round grid
    box = plan.targets_box
    assert box.height() >= box.minimumSizeHint().height()  # nothing squeezed
    assert plan.middle_scroll.verticalScrollBar().value() == 0
    assert fully_visible(box), box.visibleRegion().boundingRect()
    for field in (plan.margin_precision, plan.assurance_target, plan.fpc.box):
        assert fully_visible(field)
    for slider in (plan.s_slider, plan.v_slider):
        assert fully_visible(slider.slider) and fully_visible(slider.spin)
    assert fully_visible(plan.plan_box)


def test_the_plan_says_how_to_plan_more_surely_when_it_is_far_from_sure():
    from core.assurance import plan_assurance

    state = SessionState(plan=PlanInputs(margin_precision=0.05, margin_recall=0.05))
    basis = plan_tab.plan_basis(state)
    both = plan_assurance(basis.recommended).both
    assert both < plan_tab.UNSURE_CHANCE
    from core.round_targets import chance_in_words

    assert f"meets both with {chance_in_words(both, article=True)} chance" in basis.hint
    assert "e.g. to 90 %" in basis.hint  # the level the app's surer top-up offers
    assert "Chance of meeting both margins" in basis.hint
    assured = plan_tab.plan_basis(SessionState(plan=replace(state.plan, assurance_target=0.8)))
    assert assured.hint == ""


def test_a_plan_labeling_much_of_a_list_names_the_correction(qtbot, tab, session):
    assert "known size" not in tab.notes.text()
    session.set_values(
        [
            ("plan.population.mode", "counts"),
            ("plan.population.predicted_positive", 300),
            ("plan.population.predicted_negative", 6000),
        ]
    )
    wait_refresh(qtbot, tab)
    assert "of lists of known size" in tab.notes.text()
    assert "switch on Finite population correction to plan for these lists" in tab.notes.text()
    session.set_value("plan.fpc", True)
    wait_refresh(qtbot, tab)
    assert "known size" not in tab.notes.text()


def test_a_plan_whose_round_almost_never_meets_a_margin_says_so_plainly():
    # "Meets the margins on average" beside "a less than 1 % chance" read as a
    # contradiction, and the lead cut unflagged labels from 3,000 to 458 (trial 15).
    from core.session import PopulationInputs

    state = SessionState(
        plan=PlanInputs(
            margin_precision=0.05,
            margin_recall=0.05,
            belief="previous",
            previous=ConfusionMatrix(tp=180, fp=70, fn=0, tn=3_000),
            population=PopulationInputs(predicted_positive=9_620, predicted_negative=293_120),
        )
    )
    basis = plan_tab.plan_basis(state)
    assert basis.hint.startswith(
        "Careful: a labeled round of this plan almost never meets the recall margin"
    )
    assert "missed positives among its" in basis.hint and "are expected" in basis.hint
    assert "Chance of meeting both margins (under Targets), e.g. to 90 %" in basis.hint
    assert "on average" not in basis.hint
    assert any("cannot rule out with 95% confidence" in note for note in basis.notes)


def test_a_plan_says_why_its_s_is_not_the_best_s_shown_above_it():
    """Trial 20: "Best s for recall 0.62" beside "Over-sampling s 1.35" with no reason."""
    state = SessionState(plan=PlanInputs(margin_precision=0.02, margin_recall=0.05))
    basis = plan_tab.plan_basis(state)
    plan = basis.recommended
    usual = max(plan.s_star, 1.0)
    assert plan.s > usual * 1.05  # the precision target, not s*, sets this s
    (note,) = [note for note in basis.notes if "rather than the usual" in note]
    assert note.startswith("The over-sampling ratio is")
    assert f"s = {plan.s:.3g} rather than the usual {usual:.3g}" in note
    assert f"the precision target needs {plan.n_pos:,} flagged items" in note
    # A plan at the best s says nothing about it; one held at 1 says why.
    plain = plan_tab.plan_basis(SessionState(plan=PlanInputs(expected_precision=0.5)))
    assert plain.recommended.s_star > 1
    assert not any("rather than the usual" in note or "not the best s" in note
                   for note in plain.notes)  # fmt: skip
    held = plan_tab.plan_basis(SessionState(plan=PlanInputs()))
    assert held.recommended.s_star < 1 and held.recommended.s == pytest.approx(1, rel=0.02)
    (note,) = [note for note in held.notes if "not the best s" in note]
    assert (
        f"Over-sampling s is 1, not the best s for recall ({held.recommended.s_star:.2f})" in note
    )
