"""Shared input widgets and the prior editor, driven as a user would (pytest-qt)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QScrollArea, QVBoxLayout, QWidget

from core.bayes import Prior, beta_density
from core.session import SessionState
from desktop import formatting
from desktop.prior_editor import OMISSION_GRID, PRECISION_GRID, PriorEditor
from desktop.session_model import SessionModel
from desktop.widgets import (
    ConfidenceBox,
    CountSpin,
    LogSliderSpin,
    NumberSpin,
    PercentSpin,
    PopulationInput,
    RatioEdit,
    guard_wheel,
    parse_ratio,
    ratio_text,
)


@pytest.fixture
def session():
    return SessionModel(SessionState())


def drag(slider, positions):
    """What QSlider does during a mouse drag: slider down, tracked moves, release."""
    slider.setSliderDown(True)
    for position in positions:
        slider.setValue(position)
    slider.setSliderDown(False)


def test_log_slider_maps_log_scale_both_ways(qtbot, session):
    widget = LogSliderSpin(session, "plan.s", minimum=0.1, maximum=100, decimals=2)
    qtbot.addWidget(widget)
    assert widget.position_of(0.1) == 0
    assert widget.position_of(100) == 1000
    assert widget.position_of(math.sqrt(0.1 * 100)) == 500  # geometric middle
    assert widget.value_at(widget.position_of(2.0)) == pytest.approx(2.0, abs=0.01)
    # initial state shown in both parts
    assert widget.spin.value() == 2.0
    assert widget.slider.value() == widget.position_of(2.0)


def test_log_slider_drag_is_one_undo_step(qtbot, session):
    widget = LogSliderSpin(session, "plan.s", minimum=0.1, maximum=100, decimals=2)
    qtbot.addWidget(widget)
    seen = []
    widget.valueChanged.connect(seen.append)
    drag(widget.slider, [600, 620, 640, 660])
    assert session.get("plan.s") == widget.value_at(660)
    assert widget.spin.value() == widget.value_at(660)
    assert len(seen) == 4
    assert session.undo_stack.count() == 1
    drag(widget.slider, [700, 720])
    assert session.undo_stack.count() == 2  # a second drag is a second step
    session.undo_stack.undo()
    assert session.get("plan.s") == widget.value_at(660)
    session.undo_stack.undo()
    assert session.get("plan.s") == 2.0
    assert widget.spin.value() == 2.0
    assert widget.slider.value() == widget.position_of(2.0)
    session.undo_stack.redo()
    assert session.get("plan.s") == widget.value_at(660)


def test_log_slider_spin_typing_moves_slider_without_loops(qtbot, session):
    widget = LogSliderSpin(session, "plan.s", minimum=0.1, maximum=100, decimals=2)
    qtbot.addWidget(widget)
    changes = []
    session.changed.connect(changes.append)
    widget.spin.lineEdit().selectAll()
    qtbot.keyClicks(widget.spin.lineEdit(), "5.5")
    qtbot.keyClick(widget.spin.lineEdit(), Qt.Key.Key_Return)
    assert session.get("plan.s") == 5.5
    assert widget.slider.value() == widget.position_of(5.5)
    assert changes == ["plan.s"]  # one edit, no echo from the slider
    # session -> widget (undo) updates both parts without writing back
    session.undo_stack.undo()
    assert widget.spin.value() == 2.0
    assert session.undo_stack.count() == 1


def test_integer_log_slider_for_v(qtbot, session):
    widget = LogSliderSpin(session, "plan.v", minimum=50, maximum=200_000, integer=True)
    qtbot.addWidget(widget)
    drag(widget.slider, [500, 700])
    value = session.get("plan.v")
    assert isinstance(value, int) and value == widget.value_at(700)
    assert widget.spin.text() == f"{value:,}"


@pytest.mark.parametrize(
    ("decimals", "fraction", "shown"),
    [(3, 0.02, "2.00 %"), (4, 0.00001, "0.001 %"), (4, 0.000015, "0.0015 %"), (1, 0.85, "85.0 %")],
)
def test_percent_spin_shows_the_decimals_in_use_down_to_two(
    qtbot, session, decimals, fraction, shown
):
    spin = PercentSpin(
        session, "prevalence.reference_prevalence", minimum=0.0001, maximum=99.0,
        decimals=decimals,
    )  # fmt: skip
    qtbot.addWidget(spin)
    session.set_value("prevalence.reference_prevalence", fraction)
    assert spin.text() == shown


def test_percent_spin_types_percent_stores_fraction(qtbot, session):
    spin = PercentSpin(
        session, "plan.margin_recall", minimum=0.1, maximum=49.9, decimals=2, tooltip="margin"
    )
    qtbot.addWidget(spin)
    assert spin.text() == "5.00 %"
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), "7.5")
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)
    assert session.get("plan.margin_recall") == 0.075
    session.set_value("plan.margin_recall", 0.02)
    assert spin.text() == "2.00 %"
    assert spin.toolTip()


def type_into(qtbot, spin, text):
    """Select the whole field (as a double-click or Tab does) and type ``text``, Enter."""
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), text)
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)


@pytest.mark.parametrize(
    ("typed", "stored", "shown"),
    [
        ("0.85", 0.85, "85.0 %"),  # below 1 without a sign: a fraction (Excel)
        ("85", 0.85, "85.0 %"),
        ("85 %", 0.85, "85.0 %"),
        ("0.5 %", 0.005, "0.5 %"),  # with the sign: taken literally
        ("0.5%", 0.005, "0.5 %"),
        ("1", 0.01, "1.0 %"),  # 1 and above are percent
    ],
)
def test_percent_spin_reads_typing_like_excel(qtbot, session, typed, stored, shown):
    spin = PercentSpin(session, "plan.expected_precision", tooltip="Precision you expect.")
    qtbot.addWidget(spin)
    type_into(qtbot, spin, typed)
    assert session.get("plan.expected_precision") == pytest.approx(stored)
    assert spin.text() == shown


def test_percent_spin_tooltip_explains_fraction_typing(qtbot, session):
    spin = PercentSpin(session, "plan.expected_precision", tooltip="Precision you expect.")
    qtbot.addWidget(spin)
    assert spin.toolTip().startswith("Precision you expect.")
    assert "0.85" in spin.toolTip() and "0.5 %" in spin.toolTip()


def test_percent_spin_keeps_value_for_text_or_out_of_range(qtbot, session):
    spin = PercentSpin(
        session, "plan.margin_recall", minimum=0.1, maximum=49.9, decimals=2, tooltip="m"
    )
    qtbot.addWidget(spin)
    type_into(qtbot, spin, "abc")  # letters are refused by the validator
    assert session.get("plan.margin_recall") == 0.05
    type_into(qtbot, spin, "0.6")  # 60 % is above the 49.9 % maximum: value kept
    assert session.get("plan.margin_recall") == 0.05
    assert spin.text() == "5.00 %"
    type_into(qtbot, spin, "0.03")
    assert session.get("plan.margin_recall") == 0.03


def test_confidence_box_reads_typing_like_the_percent_fields(qtbot, session):
    box = ConfidenceBox(session)
    qtbot.addWidget(box)
    for typed, level in (("0.9", 0.9), ("97.5", 0.975), ("99 %", 0.99)):
        box.lineEdit().selectAll()
        qtbot.keyClicks(box.lineEdit(), typed)
        qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)
        assert session.get("confidence") == pytest.approx(level)
    refused = []
    session.refused.connect(lambda path, message: refused.append(message))
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), "0.9 %")  # literally 0.9 %: not a confidence level
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)
    assert session.get("confidence") == pytest.approx(0.99)
    assert refused


def test_count_spin_accepts_thousands_separators(qtbot, session):
    spin = CountSpin(session, "plan.population.predicted_positive", minimum=1, tooltip="N1")
    qtbot.addWidget(spin)
    assert spin.text() == "41,200"
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), "1 234 567")
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)
    assert session.get("plan.population.predicted_positive") == 1_234_567
    assert spin.text() == "1,234,567"
    # letters are not even accepted by the validator: the value stays
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), "abc")
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)
    assert session.get("plan.population.predicted_positive") == 1_234_567


def test_count_spin_refuses_a_400_digit_count_with_a_reason(qtbot, session):
    # Each keystroke of such a paste raised OverflowError inside Qt's validate() (fuzz 13).
    spin = CountSpin(session, "plan.population.predicted_positive", minimum=1, tooltip="N1")
    qtbot.addWidget(spin)
    refused = []
    session.refused.connect(lambda _path, why: refused.append(why))
    spin.lineEdit().selectAll()
    spin.lineEdit().insert("9" * 400)  # a paste
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)
    assert session.get("plan.population.predicted_positive") == 41_200
    assert refused and "has 400 digits" in refused[-1] and len(refused[-1]) < 200


def test_seed_spin_has_no_thousands_separator(qtbot, session):
    spin = CountSpin(session, "evaluate.seed", tooltip="seed", separators=False)
    qtbot.addWidget(spin)
    assert spin.text() == "2023"
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), "12345")
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)
    assert session.get("evaluate.seed") == 12345
    assert spin.text() == "12345"


def test_changes_in_points_share_one_rule():
    assert formatting.points(0.0156) == "+1.6 pp"
    assert formatting.points(-0.00955) == "−1.0 pp"
    assert formatting.points(-0.0002) == "0.0 pp"
    assert formatting.points_interval(-0.1403, 0.1218) == "−14.0 to +12.2 pp"


def test_parse_ratio():
    assert parse_ratio("1/40") == 0.025
    assert parse_ratio(" 0.05 ") == 0.05
    assert parse_ratio("5 %") == 0.05
    assert ratio_text(1 / 30) == "1/30"
    for bad in ("", "x", "1/0", "-1", "0"):
        with pytest.raises(ValueError):
            parse_ratio(bad)


def test_population_input_counts_or_k(qtbot, session):
    widget = PopulationInput(session, "plan.population")
    qtbot.addWidget(widget)
    k_counts = 41_200 / 1_251_000
    assert widget.k_readout.text() == "0.0329 (1/30.4)"
    widget.mode.setCurrentIndex(widget.mode.findData("k"))
    population = session.get("plan.population")
    assert population.mode == "k" and population.k == pytest.approx(k_counts)
    assert widget.pages.currentIndex() == 1
    assert session.undo_stack.count() == 1  # mode and carried-over k: one step
    widget.k_edit.selectAll()
    qtbot.keyClicks(widget.k_edit, "1/40")
    qtbot.keyClick(widget.k_edit, Qt.Key.Key_Return)
    assert session.get("plan.population.k") == 0.025
    assert widget.k_readout.text() == "0.025 (1/40)"
    refused = []
    session.refused.connect(lambda path, message: refused.append(message))
    widget.k_edit.selectAll()
    qtbot.keyClicks(widget.k_edit, "lots")
    qtbot.keyClick(widget.k_edit, Qt.Key.Key_Return)
    assert session.get("plan.population.k") == 0.025
    assert refused and "not a ratio" in refused[0]
    assert widget.k_edit.text() == "1/40"  # the typo is replaced by the kept value


def test_confidence_box_pick_and_type(qtbot, session):
    box = ConfidenceBox(session)
    qtbot.addWidget(box)
    assert box.currentText() == "95 %"
    box.setCurrentIndex(box.findData(0.99))
    box.activated.emit(box.currentIndex())
    assert session.get("confidence") == 0.99
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), "97.5")
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)
    assert session.get("confidence") == 0.975
    refused = []
    session.refused.connect(lambda path, message: refused.append(message))
    box.lineEdit().selectAll()
    qtbot.keyClicks(box.lineEdit(), "150")
    qtbot.keyClick(box.lineEdit(), Qt.Key.Key_Return)
    assert session.get("confidence") == 0.975
    assert refused and "confidence" in refused[0]


# --- prior editor ------------------------------------------------------------------------


def density_of(item):
    x, y = item.getData()
    return (None, None) if x is None else (np.asarray(x), np.asarray(y))


def test_prior_presets_and_live_densities(qtbot, session):
    editor = PriorEditor(session)
    qtbot.addWidget(editor)
    assert session.get("plan.prior") == Prior.jeffreys()
    _, y = density_of(editor.precision_prior)
    np.testing.assert_allclose(y, beta_density(0.5, 0.5, PRECISION_GRID))
    editor.preset.setCurrentIndex(editor.preset.findData("uniform"))
    assert session.get("plan.prior") == Prior.uniform()
    _x, y = density_of(editor.precision_prior)
    np.testing.assert_allclose(y, 1.0)

    editor.preset.setCurrentIndex(editor.preset.findData("expected"))
    plan = session.state.plan
    expected = Prior.from_expected(
        plan.expected_precision, plan.expected_recall, plan.population.effective_k, 10.0
    )
    assert session.get("plan.prior") == expected
    assert editor.strength.isEnabled()
    _, y = density_of(editor.omission_prior)
    np.testing.assert_allclose(y, beta_density(expected.a10, expected.a00, OMISSION_GRID))
    # the preset follows the strength and the expected values, in the same undo step
    steps = session.undo_stack.count()
    editor.strength.lineEdit().selectAll()
    qtbot.keyClicks(editor.strength.lineEdit(), "5")
    qtbot.keyClick(editor.strength.lineEdit(), Qt.Key.Key_Return)
    assert session.get("plan.prior").a11 == pytest.approx(0.9 * 500)
    session.set_value("plan.expected_precision", 0.8)
    assert session.get("plan.prior").a11 == pytest.approx(0.8 * 500)
    assert session.undo_stack.count() == steps + 2
    session.undo_stack.undo()
    assert session.get("plan.prior").a11 == pytest.approx(0.9 * 500)
    assert editor.alphas["a11"].value() == pytest.approx(450)


def test_typing_an_alpha_makes_the_prior_custom(qtbot, session):
    editor = PriorEditor(session)
    qtbot.addWidget(editor)
    spin = editor.alphas["a11"]
    spin.lineEdit().selectAll()
    qtbot.keyClicks(spin.lineEdit(), "20")
    qtbot.keyClick(spin.lineEdit(), Qt.Key.Key_Return)
    prior = session.get("plan.prior")
    assert (prior.a11, prior.a01) == (20.0, 0.5)
    assert session.get("plan.prior_preset") == "custom"
    assert editor.preset.currentData() == "custom"
    _, y = density_of(editor.precision_prior)
    np.testing.assert_allclose(y, beta_density(20.0, 0.5, PRECISION_GRID))
    assert session.undo_stack.count() == 1
    session.undo_stack.undo()
    assert session.get("plan.prior") == Prior.jeffreys()
    assert editor.preset.currentData() == "jeffreys"


def test_prior_from_previous_round_and_posterior_curve(qtbot, session):
    editor = PriorEditor(session)
    qtbot.addWidget(editor)
    session.set_value("plan.belief", "previous")
    previous = session.get("plan.previous")
    _, y = density_of(editor.precision_posterior)
    np.testing.assert_allclose(
        y, beta_density(0.5 + previous.tp, 0.5 + previous.fp, PRECISION_GRID)
    )
    editor.preset.setCurrentIndex(editor.preset.findData("round"))
    assert session.get("plan.prior") == Prior.from_round(previous, 10.0)
    editor.preset.setCurrentIndex(editor.preset.findData("none"))
    assert session.get("plan.prior").is_zero
    x, y = density_of(editor.precision_prior)
    assert x is None or np.size(x) == 0  # improper: no curve rather than a NaN one
    assert "improper" in editor.summary.text()


def test_every_input_has_a_tooltip(qtbot, session):
    widgets = [
        LogSliderSpin(session, "plan.s", minimum=0.1, maximum=100, tooltip="s"),
        PercentSpin(session, "plan.margin_precision", tooltip="margin"),
        CountSpin(session, "plan.v", tooltip="v"),
        PopulationInput(session),
        ConfidenceBox(session),
        PriorEditor(session),
    ]
    from PySide6.QtWidgets import QAbstractSpinBox, QComboBox, QLineEdit, QSlider, QWidget

    for widget in widgets:
        qtbot.addWidget(widget)
        for item in [widget, *widget.findChildren(QWidget)]:
            if isinstance(item, QLineEdit) and isinstance(
                item.parent(), (QAbstractSpinBox, QComboBox)
            ):
                continue  # the editor inside a spin box or combo box: its parent says it
            if isinstance(item, (QAbstractSpinBox, QComboBox, QLineEdit, QSlider)):
                assert item.toolTip(), f"{type(item).__name__} in {type(widget).__name__}"


def send_wheel(widget, notches: int) -> None:
    for _ in range(abs(notches)):
        QApplication.sendEvent(
            widget,
            QWheelEvent(
                QPointF(5, 5),
                QPointF(widget.mapToGlobal(QPoint(5, 5))),
                QPoint(),
                QPoint(0, 120 if notches > 0 else -120),
                Qt.MouseButton.NoButton,
                Qt.KeyboardModifier.NoModifier,
                Qt.ScrollPhase.NoScrollPhase,
                False,
            ),
        )


@pytest.fixture
def scrolling_fields(qtbot, session):
    """Twenty count fields in a scroll area too short for them, wheel-guarded."""
    area = QScrollArea()
    content = QWidget()
    column = QVBoxLayout(content)
    fields = [CountSpin(session, "evaluate.replicates", minimum=1) for _ in range(20)]
    for field in fields:
        column.addWidget(field)
    area.setWidget(content)
    area.setWidgetResizable(True)
    area.resize(300, 200)
    assert guard_wheel(area) == 20
    qtbot.addWidget(area)
    area.show()
    qtbot.waitExposed(area)
    area.activateWindow()
    return area, fields


def test_guarded_field_without_focus_passes_the_wheel_to_its_scroll_area(
    qtbot, session, scrolling_fields
):
    area, fields = scrolling_fields
    bar = area.verticalScrollBar()
    assert bar.maximum() > 0
    field = fields[3]  # (the window gave the first field the focus)
    assert not field.hasFocus()
    send_wheel(field, -2)
    assert bar.value() > 0
    assert session.get("evaluate.replicates") == 10_000
    assert session.undo_stack.count() == 0
    two_notches = bar.value()
    assert guard_wheel(area) == 20  # guarding again does not forward each notch twice
    send_wheel(field, 1)
    assert bar.value() == two_notches // 2


def test_a_wheel_burst_on_the_focused_field_is_one_undo_step(qtbot, session, scrolling_fields):
    area, fields = scrolling_fields
    fields[0].setFocus()
    qtbot.waitUntil(fields[0].hasFocus, timeout=2000)
    send_wheel(fields[0], 10)
    assert session.get("evaluate.replicates") == 10_010
    assert area.verticalScrollBar().value() == 0
    assert session.undo_stack.count() == 1
    assert session.undo_stack.undoText() == "bootstrap replicates"
    session.undo_stack.undo()
    assert session.get("evaluate.replicates") == 10_000


def test_a_wheel_burst_on_the_focused_log_slider_is_one_undo_step(qtbot, session):
    widget = LogSliderSpin(session, "plan.v", minimum=50, maximum=200_000, integer=True)
    guard_wheel(widget)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    widget.activateWindow()
    send_wheel(widget.slider, 3)  # no focus: nothing moves
    assert session.get("plan.v") == 1000
    widget.slider.setFocus()
    qtbot.waitUntil(widget.slider.hasFocus, timeout=2000)
    send_wheel(widget.slider, 10)
    assert session.get("plan.v") > 1000
    assert session.undo_stack.count() == 1
    session.undo_stack.undo()
    assert session.get("plan.v") == 1000


def test_a_typed_value_out_of_range_is_said_not_silently_undone(qtbot, session):
    """A spin box puts its old value back when the typed one is out of range; the lead is
    told so, and a minus sign is not swallowed (-10 is not taken as 10)."""
    refused = []
    session.refused.connect(lambda path, message: refused.append((path, message)))
    margin = PercentSpin(
        session, "plan.margin_recall", minimum=0.1, maximum=49.9, decimals=2, tooltip="m"
    )
    qtbot.addWidget(margin)
    type_into(qtbot, margin, "50")
    assert session.get("plan.margin_recall") == 0.05
    path, message = refused[-1]
    assert path == "plan.margin_recall"
    assert "50" in message and "is outside 0.10 % to 49.90 %" in message
    assert message.endswith("it stays 5.00 %")
    population = PopulationInput(session, "plan.population")
    qtbot.addWidget(population)
    before = session.get("plan.population.predicted_positive")
    type_into(qtbot, population.positives, "-10")
    assert session.get("plan.population.predicted_positive") == before
    assert "-10 is negative" in refused[-1][1]
    assert population.positives.text() == formatting.thousands(before)


def test_a_count_field_holds_populations_and_seeds_beyond_32_bits(qtbot, session):
    population = PopulationInput(session, "plan.population")
    qtbot.addWidget(population)
    # Five billion mails a month: beyond a 32-bit spin box, within the core's 10^15.
    assert session.set_value("plan.population.predicted_negative", 5_000_000_000) is None
    assert population.negatives.text() == "5,000,000,000"
    type_into(qtbot, population.negatives, "7,000,000,123")
    assert session.get("plan.population.predicted_negative") == 7_000_000_123
    assert population.negatives.value() == 7_000_000_123
    seed = CountSpin(session, "evaluate.seed", separators=False)
    qtbot.addWidget(seed)
    assert session.set_value("evaluate.seed", 2**40) is None
    assert seed.text() == str(2**40)


def test_a_decimal_comma_in_a_count_is_refused_not_read_as_thousands(qtbot, session):
    refused = []
    session.refused.connect(lambda path, message: refused.append(message))
    population = PopulationInput(session, "plan.population")
    qtbot.addWidget(population)
    before = session.get("plan.population.predicted_positive")
    type_into(qtbot, population.positives, "1,5")
    assert session.get("plan.population.predicted_positive") == before
    assert "'1,5' is not a whole number" in refused[-1]
    type_into(qtbot, population.positives, "41,300")
    assert session.get("plan.population.predicted_positive") == 41_300


def test_enter_in_the_k_field_without_typing_changes_nothing(qtbot, session):
    assert session.set_value("plan.population.k", 0.03293365307753797) is None
    edit = RatioEdit(session, "plan.population.k")
    qtbot.addWidget(edit)
    steps = session.undo_stack.count()
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    edit.editingFinished.emit()
    assert session.get("plan.population.k") == 0.03293365307753797
    assert session.undo_stack.count() == steps
    edit.setText("1/30")
    edit.editingFinished.emit()
    assert session.get("plan.population.k") == pytest.approx(1 / 30)


@pytest.mark.parametrize(
    ("text", "k"),
    [
        ("0,033", 0.033),  # a decimal comma, not 33 (review)
        ("41,200/1,251,000", 41_200 / 1_251_000),  # the two population counts
        ("1/26,4", 1 / 26.4),
        ("5,26 %", 0.0526),
    ],
)
def test_k_takes_a_decimal_comma_and_counts_with_thousands(text, k):
    assert parse_ratio(text) == pytest.approx(k, rel=1e-12)


def _refusals(session) -> list[str]:
    said: list[str] = []
    session.refused.connect(lambda _path, why: said.append(why))
    return said


@pytest.mark.parametrize(
    ("typed", "why"),
    [
        ("1.251.000", "'1.251.000' has points between thousands: write 1251000 or 1,251,000"),
        ("41.200", "'41.200' is ambiguous for a count"),
        ("12.7", "12.7 is fractional"),
        ("lots", "'lots' is not a number"),
    ],
)
def test_a_count_typed_key_by_key_is_judged_whole_never_cut_short(qtbot, session, typed, why):
    # Fuzz 17: the validator dropped each keystroke it refused, so 1.251.000 typed key by
    # key became 1 and 41.200 became 41, without a word.
    spin = CountSpin(session, "plan.population.predicted_negative", minimum=1, tooltip="N0")
    qtbot.addWidget(spin)
    refused = _refusals(session)
    type_into(qtbot, spin, typed)
    assert session.get("plan.population.predicted_negative") == 1_251_000
    assert refused and why in refused[-1] and refused[-1].endswith("it stays 1,251,000")
    type_into(qtbot, spin, "1.25e6")  # as pasting it always gave
    assert session.get("plan.population.predicted_negative") == 1_250_000


def test_a_real_number_reads_a_decimal_comma_and_refuses_what_it_cannot_tell(qtbot, session):
    # Fuzz 17: a label cost typed 0,5 became 5 and 1,5 became 15.
    spin = NumberSpin(session, "plan.cost_pos", minimum=0.01, maximum=1e6, tooltip="cost")
    qtbot.addWidget(spin)
    refused = _refusals(session)
    for typed, stored in (("0,5", 0.5), ("1,5", 1.5), ("2.25", 2.25), ("1,000.5", 1000.5)):
        type_into(qtbot, spin, typed)
        assert session.get("plan.cost_pos") == pytest.approx(stored), typed
    assert not refused
    for typed, why in (
        ("1,500", "'1,500' is ambiguous: write 1500 for 1,500, or 1.500 with a decimal point"),
        ("-3", "-3 is outside 0.01 to 1,000,000.00"),
        ("1/0", "'1/0' is not a number"),
    ):
        type_into(qtbot, spin, typed)
        assert session.get("plan.cost_pos") == pytest.approx(1000.5), typed
        assert why in refused[-1], (typed, refused)


def test_the_slider_boxes_say_what_they_refuse(qtbot, session):
    # Fuzz 17: s typed 150 became 15 and 2,5 became 25; v refused 0 without a word.
    s = LogSliderSpin(session, "plan.s", minimum=0.1, maximum=100, decimals=2)
    v = LogSliderSpin(session, "plan.v", minimum=50, maximum=200_000, integer=True)
    for widget in (s, v):
        qtbot.addWidget(widget)
    refused = _refusals(session)
    before_s, before_v = session.get("plan.s"), session.get("plan.v")
    type_into(qtbot, s.spin, "150")
    assert session.get("plan.s") == before_s
    assert "150 is outside 0.10 to 100.00" in refused[-1]
    type_into(qtbot, s.spin, "2,5")
    assert session.get("plan.s") == pytest.approx(2.5)
    type_into(qtbot, v.spin, "0")
    assert session.get("plan.v") == before_v
    assert "0 is outside 50 to 200,000" in refused[-1]


def test_k_refusals_say_what_is_wrong_and_stay_short():
    # Fuzz 17: 1e400 and nan were refused as "k must be > 0"; a 10,000-character paste
    # came back whole in the message.
    from desktop.widgets import parse_ratio

    for typed in ("1e400", "nan", "1/0.0"):
        with pytest.raises(ValueError, match=r"not a finite number|is not a ratio"):
            parse_ratio(typed)
    with pytest.raises(ValueError, match="k must be > 0"):
        parse_ratio("-0.5")
    with pytest.raises(ValueError) as caught:
        parse_ratio("x" * 10_000)
    assert len(str(caught.value)) < 100
