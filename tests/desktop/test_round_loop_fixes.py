"""What a new lead ran into in the round loop, each fixed and kept fixed.

* reading the same draw again (more editors' copies, a top-up) updates its round in place
  instead of adding one more round of the same name;
* the draw dialog offers the design the lead chose on the sliders when it meets both
  target margins, says which plan its sizes come from, and follows the plan when the item
  list becomes the Plan's population;
* a top-up keeps the columns the editors saw;
* an item list given as a labeled workbook is named as one, with what to do instead;
* the Evaluate tab's seed is the bootstrap's; the Rounds panel's header counts the rows it
  lists; Save and Export start where the lead's files are.
"""

from __future__ import annotations

import csv
import dataclasses
import random
from pathlib import Path

import openpyxl
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox, QPushButton

from core.confusion import ConfusionMatrix
from core.workbook.labeling import count_labels, read_labeling_workbook
from desktop.labeling_round import LABELED_SHEET

ITEMS = 2_000
SEED = 17


def write_items(path: Path) -> dict[str, tuple[int, int, int]]:
    """An item list flagged by two classifiers (``predicted``, ``other``), with a subject
    column; returns {id: (predicted, other, truth)} (the truth for the test only)."""
    rng = random.Random(11)
    rows = {}
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["item_id", "predicted", "other", "subject"])
        for number in range(ITEMS):
            item_id = f"i{number:05d}"
            predicted = int(rng.random() < 0.15)
            other = int(rng.random() < 0.2)
            truth = int(rng.random() < (0.8 if predicted else 0.03))
            rows[item_id] = (predicted, other, truth)
            writer.writerow([item_id, predicted, other, f"subject {number}"])
    return rows


def label_copy(drawn: Path, target: Path, truth, keep) -> set[str]:
    """A labeler's copy of ``drawn``: the rows for which ``keep(row)`` is true labeled."""
    workbook = openpyxl.load_workbook(drawn)
    sheet = workbook.worksheets[0]
    header = [cell.value for cell in sheet[1]]
    id_column, label_column = header.index("Item id") + 1, header.index("Label") + 1
    labeled = set()
    for row in range(2, sheet.max_row + 1):
        item_id = sheet.cell(row, id_column).value
        if item_id is None or not keep(row):
            continue
        labeled.add(item_id)
        sheet.cell(row, label_column).value = "positive" if truth[item_id][2] else "negative"
    workbook.save(target)
    return labeled


def matrix_of(truth, ids, which: int = 0) -> ConfusionMatrix:
    cells = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    for item_id in ids:
        flagged, actual = truth[item_id][which], truth[item_id][2]
        cells[("tp" if actual else "fp") if flagged else ("fn" if actual else "tn")] += 1
    return ConfusionMatrix(**cells)


@pytest.fixture
def leads_rounds(window, shared_fixtures):
    """The window on a rounds workbook of the lead's own (the example's rounds would leave
    the session with the lead's first round read from labels)."""
    assert window.open_workbook(shared_fixtures / "rounds_simple.xlsx")
    return window.session.state.rounds


@pytest.fixture
def item_list(tmp_path):
    folder = tmp_path / "items"
    folder.mkdir()
    path = folder / "items.csv"
    return path, write_items(path)


def draw(
    window, path: Path, target: Path, *, n_pos=40, n_neg=80, seed=SEED, other=False, category=None
):
    dialog = window.open_item_sample(n_pos, n_neg, item_list=path)
    dialog.seed_edit.setText(str(seed))
    if category is not None:
        dialog.category_edit.setText(category)
    dialog.keep_edit.setText("subject")
    assert not dialog.classifiers_note.isVisibleTo(dialog)
    if other:
        dialog.classifiers_edit.setText("other")
        # One label judges them all: the dialog says so as soon as another is named.
        assert dialog.classifiers_note.isVisibleTo(dialog)
        assert "same category" in dialog.classifiers_note.text()
    assert dialog.count_items()
    assert dialog.draw_and_save(target) == target
    dialog.close()
    return target


# --- 1. reading the same draw again ---------------------------------------------------------


def two_labelers_copies(window, path: Path, truth, tmp_path: Path):
    """Draw round1 and let two labelers each label half of it in their own copy: the
    copies and the ids each labeled."""
    drawn = draw(window, path, tmp_path / "round1.xlsx")
    anna = tmp_path / "round1_anna.xlsx"
    ben = tmp_path / "round1_ben.xlsx"
    labeled_anna = label_copy(drawn, anna, truth, lambda row: row % 2 == 0)
    labeled_ben = label_copy(drawn, ben, truth, lambda row: row % 2 == 1)
    return anna, ben, labeled_anna, labeled_ben


def test_reading_more_copies_of_a_draw_updates_its_round_in_place(
    qtbot, window, leads_rounds, item_list, tmp_path
):
    path, truth = item_list
    anna, ben, labeled_anna, labeled_ben = two_labelers_copies(window, path, truth, tmp_path)
    rounds_before = window.session.state.rounds

    assert window.read_labeled_workbook([anna]) is not None
    after_first = window.session.state.rounds
    assert len(after_first) == len(rounds_before) + 1
    position = next(i for i, item in enumerate(after_first) if item.sheet == LABELED_SHEET)
    assert after_first[position].matrix == matrix_of(truth, labeled_anna)
    # A round joins after it, and the lead evaluates another classifier's round: the
    # next reading still finds the earlier one.
    other = next(
        i
        for i, item in enumerate(after_first)
        if item.classifier != after_first[position].classifier
    )
    later = dataclasses.replace(after_first[other], row=99, round="TR-99")
    window.session.set_values([("rounds", (*after_first, later))], text="a later round")
    window.rounds_panel.evaluate_round(other)

    both = window.read_labeled_workbook([ben, anna])  # another order, another first name
    assert both is not None
    rounds = window.session.state.rounds
    assert len(rounds) == len(after_first) + 1  # nothing added
    assert both.replaced == after_first[position]
    updated = rounds[position]  # the same place in the session's rounds
    assert updated.matrix == matrix_of(truth, labeled_anna | labeled_ben)
    # Named after the workbook drawn (round1.xlsx), not after an editor's copy.
    assert (updated.round, updated.sheet, updated.row) == ("round1", LABELED_SHEET, 2)
    assert updated.classifier == after_first[position].classifier  # as first filed
    assert sum(item.round == "round1" for item in rounds) == 1
    assert window.session.get("evaluate.matrix") == updated.matrix
    qtbot.wait(20)  # the first summary, closed, is deleted: the new one stays
    assert window.labeled_summary_box is not None
    text = window.labeled_summary_box.text()
    assert "Updated <b>round1</b> with the new labels" in text
    assert "Updated round1 with the new labels" in window.statusBar().currentMessage()
    assert window.session.undo_stack.undoText() == "Update round1 with the new labels"

    # One undo step: the earlier reading is back, where it was.
    window.session.undo_stack.undo()
    assert window.session.state.rounds[position] == after_first[position]
    assert len(window.session.state.rounds) == len(after_first) + 1


def test_a_top_up_and_further_classifiers_update_their_rounds(qtbot, window, item_list, tmp_path):
    path, truth = item_list
    drawn = draw(window, path, tmp_path / "round1.xlsx", other=True)
    labeled = tmp_path / "round1 labeled.xlsx"
    label_copy(drawn, labeled, truth, lambda _row: True)
    first = window.read_labeled_workbook([labeled])
    assert first is not None
    rounds = window.session.state.rounds
    assert [item.classifier for item in rounds[-2:]] == [None, "other"]
    # The other classifier is judged by the same targets, and a top-up serves both.
    ((name, check),) = first.further_checks
    assert name == "other"
    assert check.precision.target == window.session.get("plan.margin_precision")
    assert check.recall.target == window.session.get("plan.margin_recall")
    text = window.labeled_summary_box.text()
    assert "The draw's other classifiers, against the same targets:" in text
    other = rounds[-1]
    # Its counts as well: the summary gave the main classifier's only (trial 15).
    assert (
        f"• other: TP {other.tp:,} · FP {other.fp:,} · FN {other.fn:,} · TN {other.tn:,};" in text
    )
    verdict = "both target margins are met" if check.met else "<b>missed</b>"
    assert verdict in text.split("• other: ")[1]
    if check.top_up is not None:
        assert first.top_up_for_all is not None
        assert all(a >= b for a, b in zip(first.top_up_for_all, check.top_up, strict=True))

    earlier = read_labeling_workbook(labeled)
    dialog = window.open_item_sample(60, 120, earlier=earlier, item_list=path)
    more = tmp_path / "round1 top-up.xlsx"
    assert dialog.draw_and_save(more) == more
    dialog.close()
    more_labeled = tmp_path / "round1 top-up labeled.xlsx"
    label_copy(more, more_labeled, truth, lambda _row: True)
    again = window.read_labeled_workbook([labeled, more_labeled])
    assert again is not None
    now = window.session.state.rounds
    assert len(now) == len(rounds)
    assert again.replaced == rounds[-2]
    # Each classifier counts the items of its own sample (an item drawn for one only is
    # labeled but not counted for the other).
    for counted, before, after in zip(
        count_labels(again.workbooks), rounds[-2:], now[-2:], strict=True
    ):
        assert counted.unlabeled == 0 and after.matrix.total > before.matrix.total
        assert after.matrix == ConfusionMatrix(
            tp=counted.tp, fp=counted.fp, fn=counted.fn, tn=counted.tn
        )
    assert [item.round for item in now[-2:]] == [item.round for item in rounds[-2:]]

    # Reading exactly the same labels again changes nothing, and says so.
    same = window.read_labeled_workbook([labeled, more_labeled])
    assert same is not None and same.verb == "unchanged"
    assert window.session.state.rounds == now
    assert "already holds these labels" in window.labeled_summary_box.text()


def test_a_top_up_read_on_its_own_counts_with_the_copies_read_before(
    qtbot, window, item_list, tmp_path, warnings, monkeypatch
):
    path, truth = item_list
    anna, ben, labeled_anna, labeled_ben = two_labelers_copies(window, path, truth, tmp_path)
    assert window.read_labeled_workbook([anna, ben]) is not None
    earlier = read_labeling_workbook(anna)
    dialog = window.open_item_sample(60, 120, earlier=earlier, item_list=path)
    more = tmp_path / "round1 top-up.xlsx"
    assert dialog.draw_and_save(more) == more
    dialog.close()
    more_labeled = tmp_path / "round1 top-up labeled.xlsx"
    labeled_more = label_copy(more, more_labeled, truth, lambda _row: True)
    alone = window.read_labeled_workbook([more_labeled])  # the earlier copies not picked
    assert alone is not None
    assert {path.name for path in alone.also_read} == {anna.name, ben.name}
    counted = window.session.state.rounds[-1]
    assert counted.matrix == matrix_of(truth, labeled_anna | labeled_ben | labeled_more)
    assert alone.verb == "updated"
    text = window.labeled_summary_box.text()
    assert "Read together with round1_anna.xlsx, round1_ben.xlsx" in text
    # A copy that cannot be read now is left out, and the summary says so.
    ben_bytes = ben.read_bytes()
    ben.write_bytes(b"not a workbook")
    # Fewer labels than the reading before: the lead is asked, and says replace.
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    partial = window.read_labeled_workbook([more_labeled])
    assert partial is not None and [path.name for path in partial.also_read] == [anna.name]
    assert partial.not_read_again and partial.not_read_again[0].startswith("round1_ben.xlsx (")
    assert "<b>Not read again:</b> round1_ben.xlsx" in window.labeled_summary_box.text()
    assert partial.labels.unlabeled == len(labeled_ben)  # ben's half waits for its copy
    ben.write_bytes(ben_bytes)
    # Without the copies beside it, the top-up alone is refused as before, naming why.
    anna.rename(tmp_path / "elsewhere_anna.xlsx")
    ben.rename(tmp_path / "elsewhere_ben.xlsx")
    assert window.read_labeled_workbook([more_labeled]) is None
    assert "in none of the workbooks given" in warnings[-1][1]


def test_a_drawn_round_is_out_with_the_editors_until_its_labels_are_read(
    qtbot, window, item_list, tmp_path
):
    from core.workbook.session_io import read_session

    path, truth = item_list
    drawn = draw(window, path, tmp_path / "round1.xlsx")
    assert window.session.state.awaiting_labels == (str(drawn.resolve()),)
    panel = window.rounds_panel
    assert panel.awaiting.isVisibleTo(panel)
    assert "Out with the editors: <b>round1.xlsx</b>" in panel.awaiting.text()
    assert str(drawn.resolve()) in panel.awaiting.toolTip()
    # A saved session, opened again, still knows the round is out.
    saved = tmp_path / "my session.xlsx"
    assert window.save_session(saved)
    assert read_session(saved).state.awaiting_labels == (str(drawn.resolve()),)
    # The editors' copy comes back (another name): the round is no longer out.
    copy = tmp_path / "round1_anna.xlsx"
    label_copy(drawn, copy, truth, lambda _row: True)
    assert window.read_labeled_workbook([copy]) is not None
    assert window.session.state.awaiting_labels == ()
    assert not panel.awaiting.isVisibleTo(panel)
    window.session.undo_stack.undo()  # one step: the round and its return
    assert window.session.state.awaiting_labels == (str(drawn.resolve()),)


def test_another_draw_is_another_round(qtbot, window, leads_rounds, item_list, tmp_path):
    path, truth = item_list
    one = draw(window, path, tmp_path / "one.xlsx")
    two = draw(window, path, tmp_path / "two.xlsx", seed=SEED + 1)
    label_copy(one, tmp_path / "one labeled.xlsx", truth, lambda _row: True)
    label_copy(two, tmp_path / "two labeled.xlsx", truth, lambda _row: True)
    before = len(window.session.state.rounds)
    assert window.read_labeled_workbook([tmp_path / "one labeled.xlsx"]) is not None
    result = window.read_labeled_workbook([tmp_path / "two labeled.xlsx"])
    assert result is not None
    assert len(window.session.state.rounds) == before + 2
    assert result.replaced is None and "is in the Rounds panel" in window.labeled_summary_box.text()


# --- 2 and 3. the sizes the draw dialog offers ----------------------------------------------


def test_the_draw_dialog_offers_the_assured_design_the_lead_chose(qtbot, window):
    plan_tab = window.plan_tab
    window.show_tab("plan")
    with qtbot.waitSignal(plan_tab.assured_shown, timeout=30_000):
        window.session.set_value("plan.assurance_target", 0.9)
        plan_tab.flush()
    qtbot.mouseClick(plan_tab.use_assured, Qt.MouseButton.LeftButton)
    plan_tab.flush()
    design, recommended = plan_tab.design, plan_tab.basis.recommended
    assert design is not None and recommended is not None
    assert (design.n_pos, design.n_neg) != (recommended.n_pos, recommended.n_neg)
    qtbot.mouseClick(plan_tab.draw_sample, Qt.MouseButton.LeftButton)
    dialog = window.item_sample_dialog
    assert (dialog.n_pos_spin.value(), dialog.n_neg_spin.value()) == (design.n_pos, design.n_neg)
    assert dialog.sizes_note.isVisibleTo(dialog)
    assert "the sizes of the Plan tab's sliders" in dialog.sizes_note.text()
    dialog.close()

    # Sliders that miss a target margin: the assured plan, as the lead asked for a chance.
    assured = plan_tab.assured
    window.session.set_values([("plan.v", 100)], text="fewer labels")
    qtbot.mouseClick(plan_tab.draw_sample, Qt.MouseButton.LeftButton)
    dialog = window.item_sample_dialog
    assert (dialog.n_pos_spin.value(), dialog.n_neg_spin.value()) == (
        assured.n_pos,
        assured.n_neg,
    )
    assert "the sizes of the assured plan (at least 90 % chance" in dialog.sizes_note.text()
    dialog.close()

    # Without a chance asked for: the recommended plan, and the dialog says why.
    window.session.set_value("plan.assurance_target", 0.0)
    qtbot.mouseClick(plan_tab.draw_sample, Qt.MouseButton.LeftButton)
    dialog = window.item_sample_dialog
    assert (dialog.n_pos_spin.value(), dialog.n_neg_spin.value()) == (
        recommended.n_pos,
        recommended.n_neg,
    )
    assert "the sizes of the recommended plan" in dialog.sizes_note.text()
    assert "the sliders' design misses a target margin" in dialog.sizes_note.text()
    dialog.close()


def test_the_sizes_follow_the_plan_when_the_list_becomes_its_population(qtbot, window, item_list):
    path, _truth = item_list
    # Sliders that meet the targets for the example's population: chosen for that one only.
    window.session.set_values([("plan.s", 2.0), ("plan.v", 12_000)])
    window.open_item_sample()  # as the Plan tab's button does
    dialog = window.item_sample_dialog
    before = (dialog.n_pos_spin.value(), dialog.n_neg_spin.value())
    assert dialog.set_item_list(path)
    assert dialog.use_as_population()
    after = (dialog.n_pos_spin.value(), dialog.n_neg_spin.value())
    assert after != before  # the plan for the list's population asks for other sizes
    # The recommended plan for the new population, never the sliders set for the old one.
    sizes = window.plan_tab.sample_sizes(prefer_sliders=False)
    recommended = window.plan_tab._basis.recommended
    assert after == (sizes.n_pos, sizes.n_neg) == (recommended.n_pos, recommended.n_neg)
    text = dialog.message.text()
    assert f"{sizes.n_pos:,} + {sizes.n_neg:,}" in text
    assert f"were {before[0]:,} + {before[1]:,}" in text
    assert sizes.source in dialog.sizes_note.text()
    dialog.close()


def test_sizes_the_lead_typed_stay_when_the_list_becomes_the_population(qtbot, window, item_list):
    path, _truth = item_list
    dialog = window.open_item_sample(item_list=path)
    dialog.n_pos_spin.setValue(33)
    dialog.n_neg_spin.setValue(44)
    assert dialog.use_as_population()
    sizes = window.plan_tab.sample_sizes(prefer_sliders=False)
    assert (dialog.n_pos_spin.value(), dialog.n_neg_spin.value()) == (33, 44)
    assert f"{sizes.n_pos:,} + {sizes.n_neg:,}" in dialog.message.text()
    dialog.close()


def test_a_top_up_of_flagged_items_only_says_the_editors_can_tell(
    qtbot, window, item_list, tmp_path
):
    path, _truth = item_list
    earlier = read_labeling_workbook(draw(window, path, tmp_path / "round1.xlsx"))
    dialog = window.open_item_sample(60, 80, earlier=earlier, item_list=path)
    assert dialog.blind_note.isVisibleTo(dialog)
    assert "Every new item is a flagged one (20), so the editors can tell" in (
        dialog.blind_note.text()
    )
    more = dialog.draw_and_save(tmp_path / "top-up.xlsx")
    assert more is not None and read_labeling_workbook(more).design.blind is False
    dialog.n_neg_spin.setValue(90)  # ten unflagged items mixed in: blind again
    assert not dialog.blind_note.isVisibleTo(dialog)
    dialog.blind_check.setChecked(False)
    dialog.n_neg_spin.setValue(80)
    assert not dialog.blind_note.isVisibleTo(dialog)  # not asked to be blind: nothing to say
    dialog.close()


def label_with_skips(drawn: Path, target: Path, truth, stratum: str) -> Path:
    """Label ``drawn`` by the truth, but skip every other item of ``stratum``."""
    strata = {item.id: item.stratum for item in read_labeling_workbook(drawn).sample}
    workbook = openpyxl.load_workbook(drawn)
    sheet = workbook.worksheets[0]
    header = [cell.value for cell in sheet[1]]
    id_column, label_column = header.index("Item id") + 1, header.index("Label") + 1
    for row in range(2, sheet.max_row + 1):
        item_id = sheet.cell(row, id_column).value
        skip = strata[item_id] == stratum and row % 2 == 0
        label = "skip" if skip else ("positive" if truth[item_id][2] else "negative")
        sheet.cell(row, label_column).value = label
    workbook.save(target)
    return target


def test_the_top_up_says_which_skipped_items_it_takes_the_place_of(
    qtbot, window, item_list, tmp_path
):
    path, truth = item_list
    window.session.set_values([("plan.margin_precision", 0.06), ("plan.margin_recall", 0.45)])
    drawn = draw(window, path, tmp_path / "round1.xlsx")
    done = label_with_skips(drawn, tmp_path / "round1 labeled.xlsx", truth, "pos")
    result = window.read_labeled_workbook([done])
    assert result is not None and result.top_up is not None
    labels = result.labels
    assert labels.skipped_pos > 0 and labels.skipped_neg == 0
    grown = result.top_up[0] > labels.design.n_pos
    assert grown
    text = window.labeled_summary_box.text()
    assert f"with {labels.skipped_pos:,} flagged more to take the place of the skipped ones" in text
    assert "drawn again" not in text


def test_met_margins_come_with_a_caveat_when_skipped_items_could_move_an_estimate(
    qtbot, window, item_list, tmp_path
):
    path, truth = item_list
    window.session.set_values([("plan.margin_precision", 0.2), ("plan.margin_recall", 0.45)])
    drawn = draw(window, path, tmp_path / "round1.xlsx")
    done = label_with_skips(drawn, tmp_path / "round1 labeled.xlsx", truth, "neg")
    result = window.read_labeled_workbook([done])
    assert result is not None and not result.missed
    swings = {swing.metric: swing for swing in result.swings}
    assert "recall" in swings and "precision" not in swings  # no flagged item was skipped
    text = window.labeled_summary_box.text()
    met = "Both target margins are met by the labels in hand, but not yet for sure"
    assert f"{met} (see <i>Careful</i> below)." in text
    assert "<b>Careful:</b> the " in text and "skipped items could move recall from" in text
    assert "further than the ±45" in text


# --- 4. the top-up keeps the columns ---------------------------------------------------------


def test_the_top_up_keeps_the_columns_the_editors_saw(qtbot, window, item_list, tmp_path):
    path, _truth = item_list
    drawn = draw(window, path, tmp_path / "round1.xlsx")
    earlier = read_labeling_workbook(drawn)
    assert earlier.kept_columns == ("subject",)
    dialog = window.open_item_sample(60, 120, earlier=earlier, item_list=path)
    assert dialog.keep_edit.text() == "subject"
    more = dialog.draw_and_save(tmp_path / "top-up.xlsx")
    assert more is not None and read_labeling_workbook(more).kept_columns == ("subject",)
    dialog.close()


# --- 5. an item list given as a labeled workbook ---------------------------------------------


def refused_open(window, path: Path, warnings) -> tuple[str, str]:
    """File > Open of ``path`` refused with the session kept: the warning's title and text."""
    state = window.session.state
    assert window.open_workbook(path, ask=False) is False
    assert window.session.state == state
    return warnings[-1]


@pytest.fixture
def warnings(monkeypatch):
    said: list[tuple[str, str]] = []
    monkeypatch.setattr(
        QMessageBox, "warning", lambda _parent, title, text, *args: said.append((title, text))
    )
    return said


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet", ".xlsx"])
def test_an_item_list_is_not_a_labeled_workbook(qtbot, window, tmp_path, warnings, suffix):
    path = tmp_path / f"items{suffix}"
    if suffix == ".xlsx":
        workbook = openpyxl.Workbook()
        workbook.active.append(["item_id", "predicted", "subject"])
        workbook.active.append(["a1", 1, "one"])
        workbook.save(path)
    elif suffix == ".parquet":
        path.write_bytes(b"PAR1 not really, but named so")
    else:
        separator = "\t" if suffix == ".tsv" else ","
        path.write_text(f"item_id{separator}predicted\na1{separator}1\n", encoding="utf-8")
    rounds = window.session.state.rounds
    assert window.read_labeled_workbook([path]) is None
    assert window.session.state.rounds == rounds
    title, text = warnings[-1]
    assert title == "Could not read the labels"
    assert f"{path.name} is an item list, not a labeling workbook" in text
    assert "Draw a sample" in text
    assert "save it as an Excel" not in text and "no header row" not in text
    assert path.name in window.statusBar().currentMessage()


def test_a_rounds_workbook_is_not_called_an_item_list(
    qtbot, window, shared_fixtures, tmp_path, warnings
):
    # Read labeled workbook… on a rounds workbook said "is an item list" (fuzz 14).
    path = tmp_path / "my rounds.xlsx"
    path.write_bytes((shared_fixtures / "rounds_simple.xlsx").read_bytes())
    assert window.read_labeled_workbook([path]) is None
    _title, text = warnings[-1]
    assert "my rounds.xlsx is a rounds workbook, not a labeling workbook: File › Open" in text


def test_a_labeling_workbook_without_its_design_sheet_is_not_called_an_item_list(
    qtbot, window, item_list, tmp_path, warnings
):
    path, _truth = item_list
    drawn = draw(window, path, tmp_path / "round1.xlsx")
    workbook = openpyxl.load_workbook(drawn)
    del workbook["Design"]
    workbook.save(tmp_path / "no design.xlsx")
    assert window.read_labeled_workbook([tmp_path / "no design.xlsx"]) is None
    text = warnings[-1][1]
    assert "item list" not in text and "'Design'" in text


# --- 6. the Evaluate tab's seed --------------------------------------------------------------


def test_the_evaluate_tab_names_its_seed_the_bootstrap_seed(qtbot, window):
    window.show_tab("evaluate")
    tab = window.tabs.currentWidget()
    form = tab.seed_spin.parentWidget().layout()
    label = form.labelForField(tab.seed_spin)
    assert label is not None and label.text() == "Bootstrap seed"
    assert "bootstrap" in tab.seed_spin.toolTip().lower()


# --- 7. the Rounds panel's header ------------------------------------------------------------


def test_the_rounds_header_counts_the_rows_it_lists(
    qtbot, window, leads_rounds, item_list, tmp_path, monkeypatch
):
    path, truth = item_list
    header = window.rounds_panel.source
    theirs = len(leads_rounds)
    assert header.text() == f"rounds_simple.xlsx: {theirs} rounds"
    drawn = draw(window, path, tmp_path / "round1.xlsx")
    labeled = tmp_path / "round1 labeled.xlsx"
    label_copy(drawn, labeled, truth, lambda _row: True)
    assert window.read_labeled_workbook([labeled]) is not None
    assert header.text() == (
        f"Rounds of this session: {theirs + 1} ({theirs} opened from rounds_simple.xlsx, 1 "
        "added since)"
    )
    assert window.rounds_panel.model.rowCount() == theirs + 1
    window.session.undo_stack.undo()
    assert header.text() == f"rounds_simple.xlsx: {theirs} rounds"

    window.session.undo_stack.setClean()
    assert window.new_session()
    assert header.text() == "No workbook: 0 rounds"
    assert window.read_labeled_workbook([labeled]) is not None
    assert header.text() == "Rounds of this session: 1"
    assert window.rounds_panel.model.rowCount() == 1


# --- 8. where Save and Export start ----------------------------------------------------------


def test_save_and_export_start_where_the_leads_files_are(
    qtbot, window, item_list, tmp_path, monkeypatch
):
    path, truth = item_list
    asked: list[str] = []

    def answer(_parent, _caption, start, *_args):
        asked.append(start)
        return "", ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", answer)
    drawn = draw(window, path, tmp_path / "round1.xlsx")  # the item list's folder
    assert not window.save_as()
    assert Path(asked[-1]).parent == path.parent
    returned = tmp_path / "returned"
    returned.mkdir()
    labeled = returned / "round1 labeled.xlsx"
    label_copy(drawn, labeled, truth, lambda _row: True)
    assert window.read_labeled_workbook([labeled]) is not None
    assert not window.save_as()
    assert Path(asked[-1]).parent == returned
    assert not window.export_report()
    assert Path(asked[-1]).parent == returned
    assert all(Path(start).parent != Path.home() for start in asked)


def test_a_round_labels_appended_is_the_same_draw_to_the_app(qtbot, window, item_list, tmp_path):
    """``prplanner labels --append-to`` wrote the round into the lead's rounds workbook
    (its own notes); opened in the app, reading more copies of that draw updates it."""
    from core.cli import main

    path, truth = item_list
    anna, ben, labeled_anna, labeled_ben = two_labelers_copies(window, path, truth, tmp_path)
    rounds_workbook = tmp_path / "my rounds.xlsx"
    assert main(["labels", str(anna), "--append-to", str(rounds_workbook)]) == 0
    assert window.open_workbook(rounds_workbook, ask=False)
    opened = window.session.state.rounds
    (position,) = [i for i, item in enumerate(opened) if item.round == "round1"]
    assert opened[position].matrix == matrix_of(truth, labeled_anna)
    assert opened[position].sheet != LABELED_SHEET  # the lead's own sheet

    both = window.read_labeled_workbook([anna, ben])
    assert both is not None and both.replaced == opened[position]
    rounds = window.session.state.rounds
    assert len(rounds) == len(opened)  # updated, not added
    assert rounds[position].matrix == matrix_of(truth, labeled_anna | labeled_ben)
    assert (rounds[position].sheet, rounds[position].row) == (
        opened[position].sheet,
        opened[position].row,
    )


# --- 7. files given to the wrong command ------------------------------------------------------


def test_file_open_on_a_labeling_workbook_reads_its_labels_into_the_session(
    qtbot, window, leads_rounds, item_list, tmp_path, monkeypatch
):
    path, truth = item_list
    drawn = draw(window, path, tmp_path / "round1.xlsx")
    labeled = tmp_path / "round1 labeled.xlsx"
    ids = label_copy(drawn, labeled, truth, lambda row: True)
    rounds = window.session.state.rounds
    asked = []

    def answer(reply):
        def question(_parent, title, text, *args):
            asked.append(text)
            return reply

        return question

    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.No))
    assert window.open_workbook(labeled) is False
    assert "is a labeling workbook" in asked[-1] and "Read its labels" in asked[-1]
    assert window.session.state.rounds == rounds  # nothing changed
    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.Yes))
    assert window.open_workbook(labeled) is True
    now = window.session.state.rounds
    assert [item for item in now if item.sheet != LABELED_SHEET] == list(rounds)  # they stay
    (read,) = [item for item in now if item.sheet == LABELED_SHEET]
    assert read.matrix == matrix_of(truth, ids)


def test_file_open_on_a_workbook_without_rounds_keeps_the_session(
    qtbot, window, tmp_path, warnings
):
    path = tmp_path / "items.xlsx"
    workbook = openpyxl.Workbook()
    workbook.active.append(["item_id", "predicted", "subject"])
    workbook.active.append(["a1", 1, "one"])
    workbook.save(path)
    title, text = refused_open(window, path, warnings)
    assert title == "No rounds in the workbook"
    assert "holds no rounds" in text and "the open session was kept" in text


def test_read_labels_names_a_report_and_a_labels_sheet_saved_as_csv(
    qtbot, window, item_list, tmp_path, warnings
):
    path, _truth = item_list
    drawn = draw(window, path, tmp_path / "round1.xlsx")
    report = tmp_path / "report.xlsx"
    window.session.set_values([("plan.margin_recall", 0.04)])
    assert window.save_session(report)
    assert window.read_labeled_workbook([report]) is None
    assert "is a PR Planner session or report" in warnings[-1][1]
    assert "File › Open opens it" in warnings[-1][1]
    exported = tmp_path / "labels.csv"
    rows = openpyxl.load_workbook(drawn).worksheets[0].iter_rows(values_only=True)
    exported.write_text(
        "\n".join(",".join("" if cell is None else str(cell) for cell in row) for row in rows)
    )
    assert window.read_labeled_workbook([exported]) is None
    assert "is the Labels sheet saved as a text table" in warnings[-1][1]
    assert "item list" not in warnings[-1][1]


def test_the_sizes_note_follows_the_lead_and_too_large_is_said_before_a_name(
    qtbot, window, item_list, monkeypatch
):
    path, _truth = item_list
    window.open_item_sample()  # the Plan tab's sizes, with where they come from
    dialog = window.item_sample_dialog
    assert dialog.set_item_list(path)
    planned = (dialog.n_pos_spin.value(), dialog.n_neg_spin.value())
    dialog.n_pos_spin.setValue(planned[0] + 1)
    note = dialog.sizes_note.text()
    assert note.startswith("The sizes below are yours;")
    assert f"were {planned[0]:,} flagged and {planned[1]:,} unflagged" in note
    asked = []
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", lambda *args, **kwargs: asked.append(args) or ("", "")
    )
    dialog.n_pos_spin.setValue(ITEMS)  # more than the list flags
    assert dialog.draw_and_save() is None
    assert asked == []  # no file name asked for a draw that cannot be made
    assert "flagged items (the list has" in dialog.message.text()
    dialog.close()


@pytest.mark.parametrize("saved_first", [False, True])
def test_the_leads_first_round_leaves_the_example_rounds_behind(
    qtbot, window, item_list, tmp_path, saved_first
):
    # The lead tries the loop from the example session, perhaps after saving it under a
    # name of their own: their round must never be compared with the example's made-up
    # TR-06, whose classifier ("travel") may well be the category they draw for.
    path, truth = item_list
    window.load_example()
    examples = window.session.state.rounds
    assert examples
    if saved_first:
        saved = tmp_path / "my session.xlsx"
        assert window.save_to(saved)
        assert window.open_workbook(saved)
        assert window.session.state.rounds == examples
    drawn = draw(window, path, tmp_path / "round1.xlsx")
    labeled = tmp_path / "round1 labeled.xlsx"
    ids = label_copy(drawn, labeled, truth, lambda row: True)
    assert window.read_labeled_workbook([labeled]) is not None
    box = window.labeled_summary_box
    assert (
        f"The example's {len(examples)} rounds and its Ensemble classifiers were taken out"
        in box.text()
    )
    (own,) = window.session.state.rounds
    assert own.matrix == matrix_of(truth, ids) and own.sheet == LABELED_SHEET
    assert "Example" not in window.windowTitle()
    evaluate_tab = window.tabs.currentWidget()
    assert "No earlier round to compare with: this is the first" in (
        evaluate_tab.compare_label.text()
    )
    # One undo step takes the round out and brings the example back.
    assert window.session.undo_stack.undoText().startswith("Read the labels of")
    window.session.undo_stack.undo()
    assert window.session.state.rounds == examples
    window.session.undo_stack.redo()
    assert window.session.state.rounds == (own,)
    # A session of the lead's own takes nothing out.
    assert window.read_labeled_workbook([labeled]) is not None
    assert "example" not in window.labeled_summary_box.text()
    assert window.session.state.rounds[-1].matrix == own.matrix


def test_the_chance_the_lead_asked_for_carries_over_to_the_list(qtbot, window, item_list):
    """Use it under Assured, then Use as the Plan's population: the sizes are the assured
    plan for the list, never the recommended plan's (about an even chance)."""
    from desktop.plan_tab import assured_plan

    path, _truth = item_list
    tab = window.plan_tab
    window.session.set_value("plan.assurance_target", 0.9)
    qtbot.waitUntil(lambda: tab.assured is not None, timeout=60_000)
    tab.apply_assured()
    window.open_item_sample()
    dialog = window.item_sample_dialog
    assert "the Plan tab's sliders" in dialog.sizes_note.text()
    assert dialog.set_item_list(path)
    assert dialog.use_as_population()
    tab.flush()
    assured = assured_plan(window.session.state, tab._basis)
    recommended = tab._basis.recommended
    assert assured.assurance.both >= 0.9 > recommended.assurance.both
    after = (dialog.n_pos_spin.value(), dialog.n_neg_spin.value())
    assert after == (assured.n_pos, assured.n_neg) != (recommended.n_pos, recommended.n_neg)
    assert "the assured plan (at least 90 % chance" in dialog.sizes_note.text()
    assert "misses a target margin" not in dialog.sizes_note.text()
    dialog.close()


def test_without_a_chance_the_list_gets_the_recommended_plan_for_it(qtbot, window, item_list):
    path, _truth = item_list
    window.session.set_value("plan.assurance_target", 0.0)
    dialog = window.open_item_sample(item_list=path)
    assert dialog.use_as_population()
    assert "the recommended plan for this population" in dialog.sizes_note.text()
    assert "misses a target margin" not in dialog.sizes_note.text()
    dialog.close()


def test_a_new_session_with_a_chance_set_draws_the_assured_plan(qtbot, window):
    """A new session's sliders sit on the recommended plan, which meets both margins with
    about an even chance: with 90 % asked for, the draw takes the assured plan."""
    from desktop.plan_tab import assured_plan

    assert window.new_session()
    tab = window.plan_tab
    window.session.set_value("plan.assurance_target", 0.9)
    tab.flush()
    assert tab.design.assurance.both < 0.9  # the sliders alone are not sure enough
    sizes = tab.sample_sizes()
    assured = assured_plan(window.session.state, tab._basis)
    assert (sizes.n_pos, sizes.n_neg) == (assured.n_pos, assured.n_neg)
    assert "assured plan (at least 90 % chance" in sizes.source
    qtbot.waitUntil(lambda: tab.assured is not None, timeout=20_000)
    tab.apply_assured()  # Use it under Assured: the sliders now carry the chance
    tab.flush()
    assert tab.design.assurance.both >= 0.9
    assert tab.sample_sizes().source.startswith("the sizes of the Plan tab's sliders")


def test_file_names_listed_in_notes_may_hold_commas():
    from desktop.labeling_round import _names_listed

    assert _names_listed("a.xlsx, Round 3, Anna.xlsx, b.XLSM") == [
        "a.xlsx",
        "Round 3, Anna.xlsx",
        "b.XLSM",
    ]


def test_two_draws_of_one_name_are_told_apart_when_one_comes_back(
    qtbot, window, item_list, tmp_path
):
    path, truth = item_list
    (tmp_path / "march").mkdir()
    (tmp_path / "april").mkdir()
    march = draw(window, path, tmp_path / "march" / "round1.xlsx", seed=SEED)
    april = draw(window, path, tmp_path / "april" / "round1.xlsx", seed=SEED + 1)
    assert window.session.state.awaiting_labels == (str(march.resolve()), str(april.resolve()))
    copy = tmp_path / "april" / "round1_anna.xlsx"
    label_copy(april, copy, truth, lambda _row: True)
    assert window.read_labeled_workbook([copy]) is not None
    assert window.session.state.awaiting_labels == (str(march.resolve()),)  # still out


def test_a_copy_with_fewer_labels_asks_before_replacing_a_fuller_reading(
    qtbot, window, item_list, tmp_path, monkeypatch
):
    path, truth = item_list
    anna, ben, labeled_anna, _labeled_ben = two_labelers_copies(window, path, truth, tmp_path)
    assert window.read_labeled_workbook([anna, ben]) is not None
    full = window.session.state.rounds
    asked = []

    def answer(reply):
        def question(*args, **kwargs):
            asked.append(args[2])
            return reply

        return question

    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.No))
    assert window.read_labeled_workbook([anna]) is None
    assert "fewer" in asked[-1] and window.session.state.rounds == full
    # It says what to do: a labeler's copy left out (trial 12: no reason, no remedy).
    assert "If a labeler's copy or an earlier workbook of this round is missing" in asked[-1]
    assert "Kept the earlier reading" in window.statusBar().currentMessage()
    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.Yes))
    assert window.read_labeled_workbook([anna]) is not None
    assert matrix_of(truth, labeled_anna) in [item.matrix for item in window.session.state.rounds]


def test_a_top_up_after_reopening_names_the_list_to_choose(qtbot, window, item_list, tmp_path):
    # A session reopened days later knows no item list: the top-up dialog said only "no
    # item list chosen" and "Choose an item list first." (trial 11).
    path, truth = item_list
    window.session.set_values([("plan.margin_precision", 0.01), ("plan.margin_recall", 0.01)])
    drawn = draw(window, path, tmp_path / "round1.xlsx")
    labeled = tmp_path / "round1 labeled.xlsx"
    label_copy(drawn, labeled, truth, lambda _row: True)
    result = window.read_labeled_workbook([labeled])
    assert result is not None and result.top_up_for_all is not None
    window._item_list = None  # as after Save, quit and reopen, on another computer
    window.settings.remove("recent_item_lists")
    dialog = window.top_up(result)
    assert dialog is not None
    assert "choose items.csv, the list this round was drawn from" in (
        dialog.file_edit.placeholderText()
    )
    assert dialog.draw_and_save(tmp_path / "more.xlsx") is None
    assert "Choose the item list this round was drawn from, items.csv" in dialog.message.text()
    dialog.close()
    # Kept beside the labeled workbook, the list is found again.
    (tmp_path / "items.csv").write_bytes(path.read_bytes())
    dialog = window.top_up(result)
    assert dialog is not None and dialog.file_edit.text().endswith("items.csv")
    dialog.close()
    # On the computer the round was drawn on, the list drawn from is remembered across
    # restarts, wherever it is (the lead had to look for it again; trial 14).
    (tmp_path / "items.csv").unlink()
    window.remember_item_list(path)
    window._item_list = None
    dialog = window.top_up(result)
    assert dialog is not None and dialog.file_edit.text() == str(path.absolute())
    dialog.close()


def test_the_draw_is_for_the_classifier_the_plan_builds_on(
    qtbot, window, leads_rounds, item_list, tmp_path
):
    # The workbook's latest round is another classifier's: planning from a travel round and
    # drawing must not ask the editors about that other category (trial 11b).
    path, _truth = item_list
    state = window.session.state
    current = next(
        item for item in state.rounds if f"{item.sheet}!{item.row}" == state.current_round
    )
    other = next(item for item in leads_rounds if item.classifier != current.classifier)
    panel = window.rounds_panel
    panel.table.selectRow(leads_rounds.index(other))
    panel.plan_action.trigger()
    assert window.session.get("plan.previous") == other.matrix
    dialog = window.open_item_sample(40, 80, item_list=path)
    assert dialog.classifier_edit.text() == other.classifier
    dialog.close()


def test_a_round_read_from_labels_joins_the_leads_rounds_workbook(
    qtbot, window, shared_fixtures, item_list, tmp_path, monkeypatch
):
    # The app kept the round in its session only: the lead's own workbook stopped at the
    # last round typed by hand (trial 11b).
    from core.workbook.rounds import read_rounds

    mine = tmp_path / "my rounds.xlsx"
    mine.write_bytes((shared_fixtures / "rounds_simple.xlsx").read_bytes())
    assert window.open_workbook(mine)
    before = len(read_rounds(mine).rounds)
    path, truth = item_list
    drawn = draw(window, path, tmp_path / "round1.xlsx")
    labeled = tmp_path / "round1 labeled.xlsx"
    ids = label_copy(drawn, labeled, truth, lambda _row: True)
    window.session.set_values([("plan.margin_precision", 0.01), ("plan.margin_recall", 0.01)])
    result = window.read_labeled_workbook([labeled])
    add = window.labeled_summary_box.findChild(QPushButton, "add_to_rounds_workbook_button")
    assert add is not None and add.text() == "Add to my rounds.xlsx"
    assert window.labeled_summary_box.findChild(QPushButton, "top_up_button") is not None
    # Open elsewhere: refused, the file unchanged.
    lock = tmp_path / ".~lock.my rounds.xlsx#"
    lock.write_text("Anna")
    warned = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *args: warned.append(args[2]))
    unchanged = mine.read_bytes()
    assert not window.add_to_rounds_workbook(result)
    assert "open in another program" in warned[-1] and mine.read_bytes() == unchanged
    lock.unlink()
    add.click()
    # The box closes on any button; it comes back saying what was added, without Add.
    qtbot.waitUntil(
        lambda: (
            window.labeled_summary_box is not None
            and window.labeled_summary_box.isVisible()
            and "round1 added (sheet" in window.labeled_summary_box.text()
        ),
        timeout=5_000,
    )
    back = window.labeled_summary_box
    assert back.findChild(QPushButton, "add_to_rounds_workbook_button") is None
    assert back.findChild(QPushButton, "top_up_button") is not None  # Top up is still there
    rounds = read_rounds(mine).rounds
    assert len(rounds) == before + 1
    added = next(item for item in rounds if item.round == "round1")
    assert added.matrix == matrix_of(truth, ids) and added.drawn_by_the_rule
    assert "my rounds.xlsx: round1 added (sheet" in window.statusBar().currentMessage()
    # Twice: nothing more; read again with the Columns… choices: the round once.
    assert window.add_to_rounds_workbook(result)
    assert "already there" in window.statusBar().currentMessage()
    assert len(read_rounds(mine).rounds) == before + 1
    assert window.rounds_panel.apply_columns([])
    assert sum(item.round == "round1" for item in window.session.state.rounds) == 1


@pytest.mark.parametrize("deleted", ["Design", "Sample"])
def test_a_labeling_workbook_missing_a_sheet_is_named_not_offered_as_rounds(
    qtbot, window, item_list, tmp_path, warnings, deleted
):
    # Opened with File > Open, it offered "Choose columns…" to read the Labels sheet as
    # rounds (hostile-input trial 12); labels says what is wrong, and so does the app.
    path, _truth = item_list
    drawn = draw(window, path, tmp_path / "round1.xlsx")
    workbook = openpyxl.load_workbook(drawn)
    del workbook[deleted]
    damaged = tmp_path / "damaged.xlsx"
    workbook.save(damaged)
    title, text = refused_open(window, damaged, warnings)
    assert title == "Not a complete labeling workbook"
    assert f"has no '{deleted}' sheet" in text and "the sheet was deleted" in text
    assert window.findChild(QMessageBox, "no_rounds_box") is None


def test_a_saved_session_remembers_the_leads_rounds_workbook(
    qtbot, window, shared_fixtures, item_list, tmp_path
):
    # Draw Monday, save, labels back Thursday: the reopened session had no "Add to
    # my rounds.xlsx" (trial 12).
    mine = tmp_path / "my rounds.xlsx"
    mine.write_bytes((shared_fixtures / "rounds_simple.xlsx").read_bytes())
    assert window.open_workbook(mine)
    saved = tmp_path / "monday.xlsx"
    assert window.save_to(saved)
    window.new_session()
    assert window.rounds_panel.workbook is None
    assert window.open_workbook(saved)
    assert window.rounds_panel.workbook == mine.resolve()
    path, truth = item_list
    drawn = draw(window, path, tmp_path / "round1.xlsx")
    labeled = tmp_path / "round1 labeled.xlsx"
    label_copy(drawn, labeled, truth, lambda _row: True)
    result = window.read_labeled_workbook([labeled])
    add = window.labeled_summary_box.findChild(QPushButton, "add_to_rounds_workbook_button")
    assert add is not None and add.text() == "Add to my rounds.xlsx"
    assert window.add_to_rounds_workbook(result)
    # Moved away since: the session opens without it, and nothing is offered.
    window.labeled_summary_box.close()
    mine.rename(tmp_path / "elsewhere.xlsx")
    assert window.open_workbook(saved, ask=False)
    assert window.rounds_panel.workbook is None


def test_the_draw_suggests_the_next_name_in_the_leads_series(
    qtbot, window, leads_rounds, item_list
):
    # The round is named after the file; "items labels" went into the lead's TR-01...
    # series as a round name (trial 12).
    path, _truth = item_list
    dialog = window.open_item_sample(40, 80, item_list=path)
    dialog.classifier_edit.setText("travel")
    assert dialog._round_stem(path) == "TR-07"
    dialog.classifier_edit.setText("Finance")  # spelled another way: the same series
    assert dialog._round_stem(path) == "FI-05"
    dialog.classifier_edit.setText("shopping")  # no rounds of it yet
    assert dialog._round_stem(path) == "items labels"
    # TR-07 drawn and out with the editors: the next draw is TR-08, not "TR-07 2".
    window.session.set_value("awaiting_labels", (str(path.with_name("TR-07.xlsx")),))
    dialog.classifier_edit.setText("travel")
    assert dialog._round_stem(path) == "TR-08"
    dialog.close()


def test_a_round_of_the_draw_refused_leaves_the_workbook_as_it_was(
    qtbot, window, shared_fixtures, tmp_path, monkeypatch
):
    # The main classifier's row was written and a further classifier's refused: half a
    # draw in the lead's workbook, and a second hand edit for the rest (recheck 14). The
    # draw's rounds now go in one write, or none does.
    mine = tmp_path / "my rounds.xlsx"
    mine.write_bytes((shared_fixtures / "rounds_simple.xlsx").read_bytes())
    assert window.open_workbook(mine)
    before = mine.read_bytes()
    last = window.session.state.rounds[-1]
    first = dataclasses.replace(last, round="R new")
    # The second round has a name its sheet holds already: refused.
    second = dataclasses.replace(last, tp=1)
    warned = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *args: warned.append(args[1:]))
    assert window._append_to_rounds_workbook((first, second)) == ""
    assert mine.read_bytes() == before
    title, text = warned[-1]
    assert title == "Not added to my rounds.xlsx"
    assert text.startswith(f"{last.classifier}'s round: my rounds.xlsx")
    assert f"already has a round named {last.round!r}" in text
    assert "the others of this labeled sample were not added either" in text
    # Both acceptable: both in, one write.
    second = dataclasses.replace(first, round="R new 2", tp=first.tp + 1)
    said = window._append_to_rounds_workbook((first, second))
    assert said.startswith(f"my rounds.xlsx: R new ({last.classifier}) added")
    assert f"R new 2 ({last.classifier}) added" in said


def test_copies_that_disagree_are_listed_with_how_to_settle_them(
    qtbot, window, item_list, tmp_path
):
    # The message was cut off in the fifth of six items, before it said how to settle
    # them (trial 14): the advice comes first, every item is under Show Details.
    path, truth = item_list
    drawn = draw(window, path, tmp_path / "round1.xlsx")
    anna, ben = tmp_path / "anna.xlsx", tmp_path / "ben.xlsx"
    label_copy(drawn, anna, truth, lambda row: row <= 80)
    flipped = {item: (a, b, not c) for item, (a, b, c) in truth.items()}
    label_copy(drawn, ben, flipped, lambda row: 71 <= row <= 80)  # ten rows disagree
    assert window.read_labeled_workbook([anna, ben]) is None
    box = window.disagreements_box
    assert box is not None and box.isVisible()
    assert "disagree on 10 items" in window.statusBar().currentMessage()
    assert "settle each one" in box.text() and "read them again" in box.text()
    assert box.detailedText().count("\n") == 9  # all ten, one per line
    assert "… and 2 more" in box.informativeText()
    # Read again: one box, the latest reading's.
    assert window.read_labeled_workbook([anna, ben]) is None
    assert not box.isVisible() and window.disagreements_box.isVisible()
    window.disagreements_box.close()


def test_the_next_draw_starts_from_the_columns_of_the_last(qtbot, window, item_list, tmp_path):
    # After a restart the lead picked the id, score, threshold, kept and other classifiers'
    # columns again for next month's export of the same shape (trial 15).
    from desktop.main_window import MainWindow

    path, _truth = item_list
    dialog = window.open_item_sample(40, 80, item_list=path)
    dialog.id_edit.setText("item_id")
    dialog.keep_edit.setText("subject")
    dialog.classifiers_edit.setText("other")
    assert dialog.count_items()
    assert dialog.draw_and_save(tmp_path / "october.xlsx") is not None
    dialog.close()
    later = MainWindow(settings=window.settings)  # a restart
    qtbot.addWidget(later)
    later.load_example()
    november = tmp_path / "items" / "november.csv"
    november.write_text(path.read_text())
    dialog = later.open_item_sample(40, 80, item_list=november)
    texts = dialog._column_texts()
    # The predicted column was found by its name, and is again.
    assert (texts["id"], texts["predicted"], texts["keep"], texts["classifiers"]) == (
        "item_id", "", "subject", "other",
    )  # fmt: skip
    assert dialog.summary is not None and dialog.summary.classifiers
    assert "The columns of your last draw are filled in" in dialog.message.text()
    dialog.close()
    # With the Plan's sizes: the note goes beside, not instead of, the warning that they
    # are planned for the example's population, not this list's (trial 18: unseen from
    # week 2 on).
    dialog = later.open_item_sample(item_list=november)
    said = dialog.message.text()
    assert "The sizes below are planned for the Plan tab's population" in said
    assert "The columns of your last draw are filled in" in said
    assert dialog.use_population_button.isDefault()
    dialog.close()
    # A list without one of them: the columns are guessed from their names, and said so.
    december = tmp_path / "items" / "december.csv"
    december.write_text(
        "item_id,predicted\n" + "".join(f"d{n},{n % 3 == 0:d}\n" for n in range(60))
    )
    dialog = later.open_item_sample(5, 10, item_list=december)
    assert dialog.summary is not None and not dialog.summary.classifiers
    assert dialog._column_texts()["keep"] == ""
    assert "does not have every column of your last draw" in dialog.message.text()
    dialog.close()
    later.session.undo_stack.setClean()


def test_a_further_classifier_has_no_place_on_a_sheet_of_one_classifier(qtbot, window, tmp_path):
    # Session 17: on a rounds sheet without a classifier column, a further classifier's
    # round read back as the lead's classifier's: another classifier's counts in its
    # history. It is left out, saying how to give it a place.
    import datetime as dt

    mine = tmp_path / "my rounds.xlsx"
    workbook = openpyxl.Workbook()
    workbook.active.append(["Round", "Date", "N pred+", "N pred-", "TP", "FP", "FN", "TN"])
    workbook.active.append(["R1", dt.datetime(2024, 1, 5), 900, 20_000, 40, 9, 6, 70])
    workbook.save(mine)
    assert window.open_workbook(mine)
    (last,) = window.session.state.rounds
    main = dataclasses.replace(last, round="R2", date=dt.date(2024, 2, 5), tp=44)
    other = dataclasses.replace(main, classifier="other", tp=30)
    said = window._append_to_rounds_workbook((main, other))
    assert "R2" in said and "added (sheet 'Sheet', row 3)" in said
    assert "The round of classifier 'other' was not added" in said
    assert "add a column headed Classifier to that sheet" in said
    rows = list(openpyxl.load_workbook(mine).active.iter_rows(min_row=2, values_only=True))
    assert [(row[0], row[4]) for row in rows] == [("R1", 40), ("R2", 44)]


def test_the_command_line_and_the_app_write_one_round_notes(tmp_path, item_list):
    # Two builders wrote a round's notes in two forms: rows labels --append-to added named
    # no workbooks, so the app could not find a draw's copies from them.
    from core.cli import main as cli
    from core.workbook.rounds import read_rounds
    from desktop.labeling_round import new_round

    path, truth = item_list
    drawn = tmp_path / "week 3.xlsx"
    assert cli(["select", str(path), "--n-pos", "20", "--n-neg", "30", "--seed", "5",
                "-o", str(drawn)]) == 0  # fmt: skip
    labeled = tmp_path / "week 3 anna.xlsx"
    label_copy(drawn, labeled, truth, lambda row: row != 4)  # one item left unlabeled
    book = tmp_path / "rounds.xlsx"
    assert cli(["labels", str(labeled), "--append-to", str(book)]) == 0
    (added,) = read_rounds(book).rounds
    workbooks = [read_labeling_workbook(labeled)]
    (labels,) = count_labels(workbooks)
    assert added.notes == new_round(labels, workbooks, [], None).notes
    assert added.notes.startswith(
        "labeling workbook week 3 anna.xlsx; seed 5; items from items.csv"
    )
    assert "1 unlabeled" in added.notes


def test_with_a_chance_set_dearer_sliders_give_way_to_the_assured_plan(qtbot, window):
    """Trials 17 and 18: the sliders held last round's design (4,943 labels, 94 %) and the
    draw offered it, though the assured plan for the 90 % asked for took 4,873."""
    from desktop.plan_tab import assured_plan

    assert window.new_session()
    tab = window.plan_tab
    window.session.set_value("plan.assurance_target", 0.9)
    tab.flush()
    assured = assured_plan(window.session.state, tab._basis)
    # The sliders at the assured plan's s with a fifth more labels: both margins met, a
    # higher chance, a dearer round.
    window.session.set_values(
        [("plan.s", round(assured.s, 2)), ("plan.v", int(assured.total * 1.2))], text="sliders"
    )
    tab.flush()
    design = tab.design
    assert design.assurance.both >= 0.9 and design.total > assured.total
    sizes = tab.sample_sizes()
    assert (sizes.n_pos, sizes.n_neg) == (assured.n_pos, assured.n_neg)
    assert "assured plan (at least 90 % chance" in sizes.source
    assert sizes.source.endswith("which costs less than the sliders' design")
    # At the assured plan itself (Use it), the sliders are drawn: they cost no more.
    qtbot.waitUntil(lambda: tab.assured is not None, timeout=20_000)
    tab.apply_assured()
    tab.flush()
    assert tab.sample_sizes().source.startswith("the sizes of the Plan tab's sliders")


def test_a_draw_dialog_closed_before_its_draw_comes_back_as_it_was_left(qtbot, window, item_list):
    # Trial 18: closed to set the targets (the dialog is modal), it came back empty and the
    # lead picked the file and five columns again.
    path, _truth = item_list
    dialog = window.open_item_sample(item_list=path)
    dialog.id_edit.setText("item_id")
    dialog.keep_edit.setText("subject")
    assert dialog.count_items()
    dialog.close()
    window.session.set_value("plan.margin_recall", 0.08, text="recall margin")
    again = window.open_item_sample()
    assert again is not dialog
    assert again.file_edit.text() == str(path)
    assert (again.id_edit.text(), again.keep_edit.text()) == ("item_id", "subject")
    assert again.summary is not None  # counted again, the sizes planned anew
    again.close()


def test_return_in_a_column_field_counts_the_list_again(qtbot, window, item_list):
    # Trial 17: typing the threshold and pressing Return did nothing.
    from PySide6.QtCore import Qt

    path, _truth = item_list
    dialog = window.open_item_sample(40, 80, item_list=path)
    assert dialog.summary is not None
    dialog.predicted_edit.setText("other")  # the other classifier's flags, say
    counted = dialog.summary
    qtbot.keyClick(dialog.predicted_edit, Qt.Key.Key_Return)
    assert dialog.summary is not counted
    assert dialog.summary.primary.column == "other"
    dialog.close()


def test_the_draw_refuses_a_category_or_classifier_name_no_other_field_takes(
    qtbot, window, item_list, tmp_path
):
    # Fuzz 17: a pasted line break or a right-to-left mark went into the workbook.
    path, _truth = item_list
    dialog = window.open_item_sample(40, 80, item_list=path)
    for field, text in (
        (dialog.category_edit, "card\nfraud"),
        (dialog.classifier_edit, "a\u202eb"),
    ):
        field.setText(text)
        assert dialog.draw_and_save(tmp_path / "never.xlsx") is None
        assert "holds a line break, a tab or an invisible character" in dialog.message.text()
        assert "Nothing was drawn" in dialog.message.text()
        field.setText("fraud")
    assert not (tmp_path / "never.xlsx").exists()
    dialog.close()


def test_a_refused_item_list_is_not_kept_among_the_recent_ones(qtbot, window, item_list, tmp_path):
    # Trial 17: the Windows-1252 export, refused, stayed in the recent item lists.
    path, _truth = item_list
    refused = tmp_path / "items" / "ansi.csv"
    refused.write_bytes("item_id,predicted\ncaf\xe9,1\n".encode("cp1252"))
    dialog = window.open_item_sample(40, 80, item_list=refused)
    assert dialog.summary is None
    assert str(refused.absolute()) not in window.recent_item_lists()
    assert window.item_folder() == refused.parent  # the next dialog still starts there
    assert dialog.set_item_list(path)
    assert window.recent_item_lists()[0] == str(path.absolute())
    dialog.close()


def test_labeling_dialogs_start_where_last_weeks_workbooks_are_after_a_restart(
    qtbot, window, item_list, tmp_path, monkeypatch
):
    """The items come from an exports folder, the labeling workbooks live in a folder of
    their own and come back into a third: after a restart the Save dialog of the next
    labeling workbook starts beside last week's, the Open dialog of labeled workbooks where
    they came back (trial 17: both started in the exports folder)."""
    from desktop import labeling_round
    from desktop.main_window import MainWindow, app_settings

    path, truth = item_list
    rounds_folder, returned = tmp_path / "rounds", tmp_path / "returned"
    rounds_folder.mkdir()
    returned.mkdir()
    drawn = draw(window, path, rounds_folder / "week 1.xlsx")
    label_copy(drawn, returned / "week 1 labeled.xlsx", truth, lambda _row: True)
    assert window.read_labeled_workbook([returned / "week 1 labeled.xlsx"]) is not None
    window.session.undo_stack.setClean()

    again = MainWindow(settings=app_settings())  # the same settings: a restart
    qtbot.addWidget(again)
    again.remember_item_list(path)  # next week's export, picked in the dialog
    offered: list[str] = []

    def answer(_parent, _caption, start, *_args):
        offered.append(start)
        return "", ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", answer)
    dialog = again.open_item_sample(40, 80, item_list=path)
    assert dialog.draw_and_save() is None  # the lead cancels the Save dialog
    dialog.close()
    assert Path(offered[-1]).parent == rounds_folder
    looked_in: list[Path] = []
    monkeypatch.setattr(
        labeling_round,
        "ask_labeled_workbooks",
        lambda _parent, folder: looked_in.append(folder) or [],
    )
    assert again.read_labeled_workbook() is None
    assert looked_in == [returned]
    again.session.undo_stack.setClean()
    again.close()


def test_the_app_and_report_plan_the_same_next_round_from_a_rounds_workbook(
    qtbot, window, item_list, tmp_path, monkeypatch
):
    """A rounds workbook of rounds PR Planner drew: ``prplanner report`` plans the next
    round with the finite population correction; the app, opening the same workbook, left
    the Plan's box unticked and its exported report asked for 78 more labels (trial 19)."""
    from core.cli import main
    from core.workbook.layout import SHEET_SUMMARY

    path, truth = item_list
    drawn = draw(window, path, tmp_path / "round1.xlsx")
    labeled = tmp_path / "round1 labeled.xlsx"
    label_copy(drawn, labeled, truth, lambda _row: True)
    rounds_workbook = tmp_path / "my rounds.xlsx"
    assert main(["labels", str(labeled), "--append-to", str(rounds_workbook)]) == 0
    from_cli = tmp_path / "report from the command line.xlsx"
    assert main(["report", str(rounds_workbook), "-o", str(from_cli)]) == 0

    window.session.undo_stack.setClean()
    assert window.open_workbook(rounds_workbook, ask=False)
    assert window.session.get("plan.fpc") is True
    from_app = tmp_path / "report from the app.xlsx"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_a, **_k: (str(from_app), ""))
    assert window.export_report()

    def next_round(report):
        """The Summary's "Plan for the next round" rows: label -> value."""
        workbook = openpyxl.load_workbook(report, read_only=True)
        try:
            rows = [row[:2] for row in workbook[SHEET_SUMMARY].iter_rows(values_only=True)]
        finally:
            workbook.close()
        start = rows.index(("Plan for the next round", None))
        return {label: value for label, value in rows[start + 1 :] if label and value is not None}

    planned = next_round(from_cli)
    assert planned["Flagged items to label"] > 0 and planned["Total labels"] > 0
    assert next_round(from_app) == planned


def test_the_other_classifiers_are_said_to_be_judged_by_the_editors_category(
    qtbot, window, item_list, tmp_path
):
    """Labels shared by classifiers answer the editors' one question: "phishing recall
    11.8 %" read as the phishing filter's own recall, with no caveat (trial 19)."""
    path, truth = item_list
    drawn = draw(window, path, tmp_path / "round1.xlsx", other=True, category="invoice mail")
    labeled = tmp_path / "round1 labeled.xlsx"
    label_copy(drawn, labeled, truth, lambda _row: True)
    assert window.read_labeled_workbook([labeled]) is not None
    text = window.labeled_summary_box.text()
    assert (
        "The draw's other classifiers, against the same targets, judged by the editors' labels "
        "of “invoice mail” (their precision and recall are of that category):" in text
    )


def test_the_draw_dialog_plans_the_other_classifiers_from_their_latest_rounds(
    qtbot, window, item_list, tmp_path
):
    """The draw's sizes were the main classifier's only; a classifier of lower precision
    missed its margin and its top-up drew flagged items only, which the editors can tell
    (trial 19). From its second draw, the dialog says what each other classifier needs,
    from its latest round, and sets sizes that serve every one."""
    from core.round_targets import further_classifier_needs

    path, truth = item_list
    drawn = draw(window, path, tmp_path / "round1.xlsx", other=True)
    labeled = tmp_path / "round1 labeled.xlsx"
    label_copy(drawn, labeled, truth, lambda _row: True)
    assert window.read_labeled_workbook([labeled]) is not None
    window.labeled_summary_box.close()

    dialog = window.open_item_sample(10, 20, item_list=path)
    dialog.classifiers_edit.setText("other")
    assert dialog.count_items()
    counted = dialog.summary.classifiers[0]
    (expected,) = further_classifier_needs(
        window.session.state, [("other", counted.population_pos, counted.population_neg)]
    )
    assert expected.planned_from == "round1 (other)"
    note = dialog.others_note.text()
    assert dialog.others_note.isVisibleTo(dialog) and dialog.serve_all_button.isVisibleTo(dialog)
    assert "At these sizes <b>other</b> would miss the targets" in note
    assert (
        f"other needs about {expected.n_pos:,} flagged and {expected.n_neg:,} unflagged "
        "(planned from round1 (other))" in note
    )
    qtbot.mouseClick(dialog.serve_all_button, Qt.MouseButton.LeftButton)
    assert (dialog.n_pos_spin.value(), dialog.n_neg_spin.value()) == (
        max(10, expected.n_pos),
        max(20, expected.n_neg),
    )
    assert "serve every classifier" in dialog.sizes_note.text()
    assert not dialog.serve_all_button.isVisibleTo(dialog)
    assert "meet the targets at these sizes too" in dialog.others_note.text()
    # A list that cannot be counted says nothing of the last one's classifiers.
    dialog.classifiers_edit.setText("no such column")
    assert not dialog.count_items()
    assert not dialog.others_note.isVisibleTo(dialog)
    dialog.close()


def test_a_round_added_to_a_sheet_without_names_or_notes_says_its_name_is_not_kept(
    qtbot, window, tmp_path
):
    """Trial 21: "R07_app added (row 10)", though the sheet had no round column: the name
    was nowhere, and the round came back as "Invoice mails row 10"."""
    import datetime as dt

    import openpyxl

    mine = tmp_path / "own.xlsx"
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Invoice mails"
    sheet.append(["Date", "TP", "FP", "FN", "TN", "Predicted positive (population)",
                  "Predicted negative (population)"])  # fmt: skip
    sheet.append([dt.date(2026, 3, 2), 130, 35, 90, 4600, 45_000, 1_250_000])
    workbook.save(mine)
    assert window.open_workbook(mine)
    last = window.session.state.rounds[-1]
    new = dataclasses.replace(last, round="R07_app", date=dt.date(2026, 4, 6), notes="seed 5")
    said = window._append_to_rounds_workbook((new,))
    assert said.startswith("own.xlsx: R07_app")
    assert "Sheet 'Invoice mails' has no column for its name and its notes" in said
    assert "Columns… in the Rounds panel" in said
