"""Prevalence tab, driven as a user would (methods §11)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from PySide6.QtCore import Qt

from core.confusion import ConfusionMatrix
from core.curves import curves_of_sample, load_scored_sample
from core.prevalence import (
    OperatingPoint,
    calibrated_metrics,
    compare_across_prevalence,
    p3_curve,
)
from core.session import SessionState
from core.workbook.rounds import Round
from desktop.prevalence_tab import CURRENT_NAME, PrevalenceTab
from desktop.session_model import SessionModel

K = 41_200 / 1_251_000
ROUNDS = (
    # Higher TPR, higher FPR than the default round: their F1 curves cross.
    Round(
        sheet="Rounds", row=2, round="R-A", classifier="wide", k=K, tp=150, fp=90, fn=20, tn=4740
    ),
    Round(
        sheet="Rounds", row=3, round="R-B", classifier="narrow", k=K, tp=90, fp=4, fn=160, tn=4746
    ),
)


@pytest.fixture
def tab(qtbot):
    state = dataclasses.replace(SessionState(), rounds=ROUNDS)
    widget = PrevalenceTab(SessionModel(state))
    qtbot.addWidget(widget)
    widget.resize(1400, 900)
    widget.show()
    yield widget
    widget.shutdown()


def displayed(item):
    """``(x, y)`` of a log-x curve in data units (getData() gives log10 x)."""
    x, y = item.getData()
    return 10.0 ** np.asarray(x), np.asarray(y)


def current_point(state: SessionState) -> OperatingPoint:
    return OperatingPoint.from_round(
        state.evaluate.matrix, state.evaluate.population.effective_k, name=CURRENT_NAME
    )


def test_p3_curve_and_band_equal_core(tab):
    state = tab._session.state
    expected = p3_curve(current_point(state), reference_prevalence=0.02)
    x, y = displayed(tab.p3_line)
    np.testing.assert_allclose(x, expected.prevalence, rtol=1e-12)
    np.testing.assert_allclose(y, expected.precision, rtol=1e-12)
    np.testing.assert_allclose(displayed(tab.band_lower)[1], expected.lower, rtol=1e-12)
    np.testing.assert_allclose(displayed(tab.band_upper)[1], expected.upper, rtol=1e-12)
    band = expected.band
    text = tab.band_label.text()
    assert f"Δ = {band.delta * 100:.1f} %" in text
    assert "η* = " in text
    # Markers: population and sample prevalence, eta*, reference (log10 positions).
    point = expected.point
    assert tab.population_marker.value() == pytest.approx(np.log10(point.population_prevalence))
    assert tab.sample_marker.value() == pytest.approx(np.log10(point.sample_prevalence))
    assert tab.eta_star_marker.value() == pytest.approx(np.log10(band.eta_star))
    assert tab.reference_marker.value() == pytest.approx(np.log10(0.02))


def test_ticked_rounds_get_f1_curves_and_rank_swaps(qtbot, tab):
    session = tab._session
    assert tab.round_list.count() == 3
    tab.set_round_checked("R-A", True)
    tab.set_round_checked("R-B", True)
    assert session.get("prevalence.compared_rounds") == ("R-A", "R-B")
    state = session.state
    points = [current_point(state)] + [
        OperatingPoint.from_round(r.matrix, r.k, name=f"{r.round} ({r.classifier})") for r in ROUNDS
    ]
    expected = compare_across_prevalence(points)
    assert tab.comparison.names == expected.names
    for index in range(3):
        x, y = displayed(tab.f1_lines[index])
        np.testing.assert_allclose(x, expected.prevalence, rtol=1e-12)
        np.testing.assert_allclose(y, expected.f_beta[index], rtol=1e-12)
    assert expected.swaps, "the fixture rounds are chosen so that F1 ranks swap"
    swap_x, swap_y = displayed(tab.swap_points)
    np.testing.assert_allclose(swap_x, [s.prevalence for s in expected.swaps], rtol=1e-9)
    np.testing.assert_allclose(swap_y, [s.value for s in expected.swaps], rtol=1e-9)
    assert "rank swaps" in tab.swaps_label.text()
    assert tab.calibrated_model.rowCount() == 3
    # Unticking is one undo step away.
    session.undo_stack.undo()
    assert session.get("prevalence.compared_rounds") == ("R-A",)
    assert tab.round_list.item(2).checkState() == Qt.CheckState.Unchecked
    assert sum(line.isVisible() for line in tab.f1_lines) == 2


def test_typed_reference_prevalence_gives_calibrated_metrics(qtbot, tab):
    line = tab.reference_spin.lineEdit()
    line.selectAll()
    qtbot.keyClicks(line, "0.5 %")  # with the sign: 0.5 %, not the fraction 0.5
    qtbot.keyClick(line, Qt.Key.Key_Return)
    session = tab._session
    assert session.get("prevalence.reference_prevalence") == pytest.approx(0.005)
    point = current_point(session.state)
    expected = calibrated_metrics(point.tpr, point.fpr, 0.005)
    row = tab.calibrated_model.rows()[0]
    assert row.values[0] == CURRENT_NAME
    assert row.values[1] == expected
    assert row.cells[3] == f"{expected.precision * 100:.1f} %"
    assert tab.reference_marker.value() == pytest.approx(np.log10(0.005))
    assert "0.500 %" in tab.calibrated_title.text()


def test_evaluate_round_changes_follow_and_bad_round_is_explained(tab):
    session = tab._session
    session.set_value("evaluate.matrix", ConfusionMatrix(tp=0, fp=40, fn=14, tn=730))
    assert tab.curve is None
    assert "recall" in tab.message_label.text()
    assert len(tab.p3_line.getData()[0] or []) == 0
    session.undo_stack.undo()
    assert tab.curve is not None and tab.message_label.text() == ""


def write_scored_csv(path, seed=3, n=400):
    rng = np.random.default_rng(seed)
    labels = rng.random(n) < 0.2
    scores = np.round(np.where(labels, rng.normal(1, 1, n), rng.normal(0, 1, n)), 2)
    lines = ["score,label"] + [f"{s},{int(lab)}" for s, lab in zip(scores, labels, strict=True)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_import_scored_sample_draws_pr_curves(qtbot, tab, tmp_path):
    path = write_scored_csv(tmp_path / "scored.csv")
    tab.import_scored_sample(path)
    qtbot.waitUntil(lambda: tab.scored is not None, timeout=10_000)
    expected = curves_of_sample(load_scored_sample(path))
    precision, recall, _ = expected.pr_curve()
    x, y = tab.pr_line.getData()
    np.testing.assert_allclose(x, recall)
    np.testing.assert_allclose(y, precision)
    calibrated, _, _ = expected.calibrated_pr_curve(0.02)
    np.testing.assert_allclose(tab.pr_calibrated_line.getData()[1], calibrated)
    eta, area = expected.area_under_pr_vs_prevalence()
    ax, ay = displayed(tab.area_line)
    np.testing.assert_allclose(ax, eta, rtol=1e-12)
    np.testing.assert_allclose(ay, area, rtol=1e-12)
    assert f"{expected.average_precision * 100:.1f} %" in tab.scored_label.text()
    assert not tab.pr_placeholder.isVisible()
    # Importing is undoable: the curves go away with it.
    tab._session.undo_stack.undo()
    assert tab.scored is None
    assert len(tab.pr_line.getData()[0] or []) == 0


def test_bad_scored_sample_is_reported(qtbot, tab, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("score,label\n0.3,1\nabc,0\n", encoding="utf-8")
    messages = []
    tab.status_message.connect(messages.append)
    tab.import_scored_sample(path)
    qtbot.waitUntil(lambda: any(m.startswith("Scored sample:") for m in messages), timeout=10_000)
    assert "bad.csv" in tab.scored_label.text()
    assert tab.scored is None


def test_inputs_have_tooltips(tab):
    for widget in (
        tab.reference_spin,
        tab.eta_min_spin,
        tab.eta_max_spin,
        tab.round_list,
        tab.import_button,
    ):
        assert widget.toolTip(), widget
    assert tab.grids() == []


def test_a_refused_curve_is_said_in_words(monkeypatch, tab):
    """The curve's refusal reaches the message line and the status bar as text."""
    from core.errors import InputError
    from desktop import prevalence_tab

    def refuse(*args, **kwargs):
        raise InputError("reference prevalence must be between 0 and 1, got 2")

    monkeypatch.setattr(prevalence_tab, "compare_across_prevalence", refuse)
    statuses = []
    tab.status_message.connect(statuses.append)
    tab.refresh()
    assert "reference prevalence must be between 0 and 1" in tab.message_label.text()
    assert statuses and "reference prevalence" in statuses[-1]
