"""The draw dialog lists the item list's own columns: a lead whose export calls its columns
"Message ID" and "Model says" picks them from a drop-down instead of typing their names.

The counts expected are computed here from the rows written, not by the app.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from core.items import ColumnNotFoundError, count_items

HEADERS = ["Message ID", "Model says", "Other model", "Subject", "Link, full"]


@pytest.fixture
def leads_export(tmp_path) -> tuple[Path, int, int]:
    """A semicolon export whose columns no alias finds; returns the path, the flagged
    count of "Model says" and of "Other model"."""
    rng = random.Random(3)
    path = tmp_path / "export.csv"
    flagged = other = 0
    lines = [";".join(HEADERS)]
    for number in range(400):
        says, other_says = rng.random() < 0.1, rng.random() < 0.2
        flagged += says
        other += other_says
        lines.append(
            f"m{number};{'yes' if says else 'no'};{'yes' if other_says else 'no'};"
            f"subject {number};http://mail/{number}"
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, flagged, other


def item_list(path: Path, column: str, value) -> Path:
    """100 items, every fifth flagged, with one more ``column`` of ``value(i)``."""
    rows = "".join(f"x{i},{int(i % 5 == 0)},{value(i)}\n" for i in range(100))
    path.write_text(f"item_id,predicted,{column}\n{rows}", encoding="utf-8")
    return path


def picker_entries(dialog, edit, several=False):
    menu = dialog._picker_menu(edit, several)
    return [(action.data(), action.isEnabled(), action.isChecked()) for action in menu.actions()]


def test_a_refused_list_still_offers_its_columns_to_pick(qtbot, window, leads_export):
    path, flagged, other = leads_export
    dialog = window.open_item_sample(20, 40, item_list=path)
    # No alias matches: the list is refused, but its header was read. "Message ID", the
    # one column named like an id, is read as the ids (trial 16); the prediction is not.
    assert dialog.summary is None
    assert "no predicted label column" in dialog.message.text()
    assert "pick it with the arrow" in dialog.message.text()
    assert all(picker.isEnabled() for picker in dialog._pickers)
    assert [entry[0] for entry in picker_entries(dialog, dialog.id_edit)] == HEADERS

    dialog.pick_column(dialog.id_edit, "Message ID")
    assert dialog.id_edit.text() == "Message ID"
    assert dialog.summary is None and "predicted label" in dialog.message.text()
    dialog.pick_column(dialog.predicted_edit, "Model says", clears=dialog.score_edit)
    assert dialog.summary is not None
    assert (dialog.summary.population_pos, dialog.summary.population_neg) == (
        flagged,
        400 - flagged,
    )
    # The pick is ticked when the menu opens again.
    assert ("Message ID", True, True) in picker_entries(dialog, dialog.id_edit)

    # Several classifiers and kept columns: each pick adds one, a second pick takes it out.
    dialog.pick_column(dialog.classifiers_edit, "Other model", several=True)
    assert dialog.classifiers_edit.text() == "Other model"
    assert [count.population_pos for count in dialog.summary.classifiers] == [other]
    assert "The editors will see only the item id" in dialog.counts_label.text()
    dialog.pick_column(dialog.keep_edit, "Subject", several=True)
    # The note that the editors would see bare ids goes once a column is kept (trial 13b).
    assert "The editors will see only the item id" not in dialog.counts_label.text()
    # Typed rather than picked, the same (trial 21: the note stayed).
    dialog.keep_edit.clear()
    assert "The editors will see only the item id" in dialog.counts_label.text()
    dialog.keep_edit.setText("Subject")
    assert "The editors will see only the item id" not in dialog.counts_label.text()
    entries = picker_entries(dialog, dialog.keep_edit, several=True)
    assert ("Subject", True, True) in entries
    # A name holding a comma cannot go into a comma-separated field.
    assert ("Link, full", False, False) in entries
    dialog.pick_column(dialog.keep_edit, "Subject", several=True)
    assert dialog.keep_edit.text() == ""
    dialog.close()


def test_picking_a_score_asks_for_its_threshold_and_clears_the_prediction(qtbot, window, tmp_path):
    path = item_list(tmp_path / "scores.csv", "model score", lambda i: i / 100)
    dialog = window.open_item_sample(5, 5, item_list=path)
    assert dialog.summary is not None  # found by alias
    dialog.pick_column(dialog.score_edit, "model score", clears=dialog.predicted_edit)
    assert dialog.predicted_edit.text() == ""
    assert "threshold" in dialog.message.text()
    # The prediction column's counts are not these columns': gone, and no Draw (review 14).
    assert dialog.summary is None and dialog.counts_label.text() == ""
    assert not dialog.draw_button.isEnabled()
    dialog.threshold_edit.setText("0.9")
    assert dialog.count_items()
    assert dialog.summary.population_pos == 10  # scores 0.90 ... 0.99
    # Back to the prediction: the threshold goes too (it was left behind, the count
    # refused and every arrow went dead; trial 13b).
    dialog.pick_column(dialog.predicted_edit, "predicted", clears=dialog.score_edit)
    assert dialog.score_edit.text() == dialog.threshold_edit.text() == ""
    assert dialog.summary is not None and dialog.summary.population_pos == 20
    # A refusal that reads no header keeps the columns on offer.
    dialog.threshold_edit.setText("0.5")
    assert not dialog.count_items()
    assert "Threshold needs Score as well" in dialog.message.text()
    assert all(picker.isEnabled() for picker in dialog._pickers)
    dialog.close()


def test_a_top_up_offers_no_picker_for_the_columns_it_keeps(qtbot, window, tmp_path):
    from core.workbook.labeling import read_labeling_workbook

    path = item_list(tmp_path / "items.csv", "subject", lambda i: f"s{i}")
    dialog = window.open_item_sample(5, 5, item_list=path)
    dialog.seed_edit.setText("3")
    drawn = dialog.draw_and_save(tmp_path / "round.xlsx")
    assert drawn is not None
    dialog.close()
    top_up = window.open_item_sample(8, 8, earlier=read_labeling_workbook(drawn))
    shown = [picker.isVisible() for picker in top_up._pickers]
    # Only the columns the editors see may change in a top-up.
    assert shown == [False, False, False, True, False]
    top_up.close()


def test_a_missing_column_names_the_lists_columns_in_core(tmp_path):
    path = tmp_path / "export.csv"
    path.write_text("Message ID;Model says\nm1;yes\nm2;no\n", encoding="utf-8")
    with pytest.raises(ColumnNotFoundError) as caught:
        count_items(path)
    assert caught.value.headers == ("Message ID", "Model says")


def test_the_counted_classifiers_go_to_the_ensemble_tab_with_their_overlaps(
    qtbot, window, tmp_path
):
    # The Ensemble tab kept its placeholder after a list with two more classifiers was
    # counted and drawn, and the dialog never showed the overlaps it asks for (trial 13).
    rng = random.Random(8)
    rows, flagged, other, both = [], 0, 0, 0
    for number in range(500):
        main, second = rng.random() < 0.2, rng.random() < 0.25
        flagged, other, both = flagged + main, other + second, both + (main and second)
        rows.append(f"m{number},{int(main)},{int(second)}")
    path = tmp_path / "items.csv"
    path.write_text("item_id,predicted,model_v2\n" + "\n".join(rows) + "\n", encoding="utf-8")
    dialog = window.open_item_sample(20, 40, item_list=path)
    assert not dialog.use_ensemble_button.isVisibleTo(dialog)  # one classifier only
    dialog.classifiers_edit.setText("model_v2")
    assert dialog.count_items()
    assert f"model_v2: {other:,} flagged ({both:,} of them flagged by predicted too)" in (
        dialog.counts_label.text()
    )
    assert dialog.use_ensemble_button.isVisibleTo(dialog)
    before = window.session.state.ensemble
    assert dialog.use_on_ensemble_tab()
    ensemble = window.session.state.ensemble
    assert (ensemble.parent_name, ensemble.parent_size) == ("predicted", flagged)
    assert [(c.name, c.size, c.overlap) for c in ensemble.children] == [("model_v2", other, both)]
    assert "answers another question" in dialog.message.text()
    window.session.undo_stack.undo()  # one step
    assert window.session.state.ensemble == before
    # A recount that fails takes the button away (it did nothing when pressed then).
    dialog.classifiers_edit.setText("model_v3")
    assert not dialog.count_items()
    assert not dialog.use_ensemble_button.isVisibleTo(dialog)
    dialog.close()


def test_the_column_named_like_an_id_is_used_and_said(qtbot, window, tmp_path):
    rows = "".join(f"TX-{i},{int(i % 5 == 0)}\n" for i in range(100))
    path = tmp_path / "transactions.csv"
    path.write_text(f"Transaction ID,predicted\n{rows}", encoding="utf-8")
    dialog = window.open_item_sample(5, 5, item_list=path)
    assert dialog.summary is not None and dialog.summary.id_column == "Transaction ID"
    assert "Item ids from column <b>Transaction ID</b>" in dialog.counts_label.text()
    dialog.close()
