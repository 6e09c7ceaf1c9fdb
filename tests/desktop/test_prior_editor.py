"""Prior editor: what a lead reads (plain words on screen, the symbols in tooltips)."""

from __future__ import annotations

import re

import pytest
from PySide6.QtWidgets import QLabel

from core.bayes import Prior
from core.session import SessionState
from desktop.prior_editor import PriorEditor
from desktop.session_model import SessionModel, field_label

#: Symbols that stay in tooltips.
SYMBOLS = ("α", "π", "P/R", "×")


@pytest.fixture
def editor(qtbot):
    widget = PriorEditor(SessionModel(SessionState()))
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def shown_texts(editor: PriorEditor) -> list[str]:
    texts = [re.sub(r"<[^>]+>", "", label.text()) for label in editor.findChildren(QLabel)]
    texts += [editor.preset.itemText(index) for index in range(editor.preset.count())]
    for plot in (editor.precision_plot, editor.omission_plot):
        texts.append(plot.plotItem.titleLabel.text or "")
        texts += [plot.plotItem.getAxis(side).labelText or "" for side in ("left", "bottom")]
    return texts


def test_the_prior_is_shown_as_pretend_counts_in_plain_words(editor):
    assert [label.text() for label in editor.alpha_captions.values()] == ["TP", "FP", "FN", "TN"]
    assert editor.counts_caption.text() == "Pretend\ncounts"
    assert [editor.preset.itemText(i) for i in range(editor.preset.count())] == [
        "None (the paper's default)",
        "Jeffreys (0.5 per count)",
        "Uniform (1 per count)",
        "From expected precision and recall",
        "From the previous round",
        "Custom (typed below)",
    ]
    offenders = [text for text in shown_texts(editor) for symbol in SYMBOLS if symbol in text]
    assert offenders == []
    title = editor.precision_plot.plotItem.titleLabel.text
    assert title.startswith("Precision<br>") and "prior</span>" in title
    assert editor.omission_plot.plotItem.titleLabel.text.startswith("False omission rate<br>")
    # the symbols are a hover away
    assert "α11" in editor.alphas["a11"].toolTip()
    assert "α11" in editor.alpha_captions["a11"].toolTip()
    assert "π0" in editor.omission_plot.toolTip() and "π1" in editor.preset.toolTip()


def test_undo_words_name_the_count_the_caption_shows(editor):
    """Edit > Undo says "prior α11 (TP)": the caption beside the field is its "TP"."""
    for field, caption in editor.alpha_captions.items():
        assert f"({caption.text()})" in field_label(f"plan.prior.{field}")


def test_a_prior_of_zero_counts_says_so_in_words(qtbot, editor):
    session = editor._session
    session.set_values([("plan.prior", Prior.none()), ("plan.prior_preset", "none")])
    assert "No prior" in editor.summary.text() and "α" not in editor.summary.text()
    assert editor.precision_plot.plotItem.titleLabel.text == "Precision (no prior: all counts 0)"
    session.set_values([("plan.prior", Prior.jeffreys()), ("plan.prior_preset", "jeffreys")])
    assert "expects precision" in editor.summary.text()
    # Trial 21: "false omission rate 50.0 %" read as a forecast for a 2 % category.
    assert "it knows next to nothing, and the labels decide" in editor.summary.text()
    strong = Prior.from_expected(0.9, 0.8, 0.05, 10)
    session.set_values([("plan.prior", strong), ("plan.prior_preset", "expected")])
    assert "knows next to nothing" not in editor.summary.text()
    title = editor.precision_plot.plotItem.titleLabel.text
    assert not editor.precision_plot.legend.isVisible()  # the title keys the curves
    assert title.startswith("Precision<br>") and "prior</span>" in title
