"""The target margins a round is drawn for travel with its labeling workbook: ``select
--margin`` records them on the Design sheet, a top-up keeps them, and ``labels`` judges the
round by them without being told again (the same verdict as giving the flags)."""

from __future__ import annotations

import openpyxl
import pytest

from core.round_targets import Targets
from core.workbook.labeling import read_labeling_workbook
from tests.core.test_cli_select_labels import fill_labels, make_items, run
from tests.core.test_labeling_workbook import SOFFICE, libreoffice

LABELS = ["positive", "negative", "negative", "skip", None]


def design_fields(path):
    sheet = openpyxl.load_workbook(path)["Design"]
    return {row[0].value: row[1] for row in sheet.iter_rows(max_col=2) if row[0].value}


@pytest.fixture
def drawn_for_targets(capsys, tmp_path):
    items, _ = make_items(tmp_path / "items.csv")
    sheet = tmp_path / "round.xlsx"
    status, data, captured = run(
        capsys,
        "select", items, "--n-pos", 20, "--n-neg", 25, "--seed", 9,
        "--margin-precision", 0.12, "--margin-recall", 0.2, "--confidence", 0.9,
        "-o", sheet, "--json",
    )  # fmt: skip
    assert status == 0, captured.err
    return items, sheet, data


def test_select_records_the_targets_as_percentages_a_lead_reads(drawn_for_targets):
    _, sheet, data = drawn_for_targets
    assert data["targets"] == {"margin_precision": 0.12, "margin_recall": 0.2, "confidence": 0.9}
    fields = design_fields(sheet)
    cells = [
        fields[name]
        for name in (
            "Target margin for precision (±)",
            "Target margin for recall (±)",
            "Confidence of the targets",
        )
    ]
    assert [cell.value for cell in cells] == [0.12, 0.2, 0.9]
    assert all(cell.number_format.endswith("%") for cell in cells)
    assert read_labeling_workbook(sheet).design.targets == Targets(
        margin_precision=0.12, margin_recall=0.2, confidence=0.9
    )


def test_labels_judges_by_the_recorded_targets_as_by_the_same_flags(
    capsys, drawn_for_targets, tmp_path
):
    _, sheet, _ = drawn_for_targets
    done = tmp_path / "round_done.xlsx"
    fill_labels(sheet, done, LABELS)
    status, recorded, captured = run(capsys, "labels", done, "--json")
    assert status == 0, captured.err
    status, flagged, _ = run(
        capsys,
        "labels", done, "--margin-precision", 0.12, "--margin-recall", 0.2,
        "--confidence", 0.9, "--json",
    )  # fmt: skip
    assert recorded["targets"]["from"] == "round_done.xlsx"
    assert flagged["targets"] == recorded["targets"]  # flags restating them change nothing
    assert recorded["targets"]["confidence"] == 0.9
    assert recorded["targets"]["precision"]["target"] == 0.12
    assert recorded["targets"]["recall"]["target"] == 0.2
    # The evaluation is at the level the targets were set at, unless told otherwise.
    assert recorded["evaluation"] == flagged["evaluation"]
    status, _, captured = run(capsys, "labels", done)
    assert "as recorded in round_done.xlsx" in captured.out
    assert "90 % confidence" in captured.out
    # Flags given win; what they do not give stays as recorded.
    status, data, _ = run(capsys, "labels", done, "--margin", 0.3, "--json")
    assert data["targets"]["precision"]["target"] == 0.3 and data["targets"]["confidence"] == 0.9
    assert data["targets"]["from"] == "flags"
    status, data, _ = run(capsys, "labels", done, "--margin-precision", 0.08, "--json")
    assert data["targets"]["precision"]["target"] == 0.08
    assert data["targets"]["recall"]["target"] == 0.2  # recorded, not 0.05
    status, data, captured = run(capsys, "labels", done, "--confidence", 0.95, "--json")
    assert data["evaluation"] != recorded["evaluation"]
    assert data["targets"]["from"] == "flags"  # not "as recorded": 95 % was not
    assert data["targets"]["confidence"] == 0.95
    assert data["targets"]["precision"]["target"] == 0.12


def test_a_workbook_without_targets_gives_no_verdict_unless_asked(capsys, tmp_path):
    items, _ = make_items(tmp_path / "items.csv")
    sheet = tmp_path / "round.xlsx"
    run(capsys, "select", items, "--n-pos", 20, "--n-neg", 25, "--seed", 9, "-o", sheet)
    assert read_labeling_workbook(sheet).design.targets is None
    assert "Target margin for precision (±)" not in design_fields(sheet)
    done = tmp_path / "done.xlsx"
    fill_labels(sheet, done, LABELS)
    status, data, _ = run(capsys, "labels", done, "--json")
    assert status == 0 and "targets" not in data
    _, at_95, _ = run(capsys, "labels", done, "--confidence", 0.95, "--json")
    assert data["evaluation"] == at_95["evaluation"]


def test_a_top_up_keeps_the_targets_unless_new_ones_are_given(capsys, drawn_for_targets):
    items, sheet, _ = drawn_for_targets
    top_up = sheet.with_name("top_up.xlsx")
    status, data, captured = run(
        capsys,
        "select", items, "--extend", sheet, "--n-pos", 30, "--n-neg", 30, "-o", top_up, "--json",
    )  # fmt: skip
    assert status == 0, captured.err
    assert data["targets"] == {"margin_precision": 0.12, "margin_recall": 0.2, "confidence": 0.9}
    assert read_labeling_workbook(top_up).design.targets.margin_recall == 0.2
    again = sheet.with_name("top_up_2.xlsx")
    status, data, _ = run(
        capsys,
        "select", items, "--extend", sheet, "--n-pos", 30, "--n-neg", 30, "--margin", 0.1,
        "-o", again, "--json",
    )  # fmt: skip
    assert data["targets"] == {"margin_precision": 0.1, "margin_recall": 0.1, "confidence": 0.9}
    third = sheet.with_name("top_up_3.xlsx")
    status, data, _ = run(
        capsys,
        "select", items, "--extend", sheet, "--n-pos", 30, "--n-neg", 30, "--margin-recall", 0.1,
        "-o", third, "--json",
    )  # fmt: skip
    assert data["targets"] == {"margin_precision": 0.12, "margin_recall": 0.1, "confidence": 0.9}


def test_targets_flags_are_checked_before_anything_is_written(capsys, tmp_path):
    items, _ = make_items(tmp_path / "items.csv")
    out = tmp_path / "round.xlsx"
    for flags, words in (
        (["--confidence", 0.9], "give --margin"),
        (["--margin", 5], "--margin"),
        (["--margin", 0.05, "--confidence", 95], "--confidence"),
        (["--margin", 0.05, "--margin-recall", 0.1], "not both"),
    ):
        status, _, captured = run(
            capsys, "select", items, "--n-pos", 5, "--n-neg", 5, "--seed", 1, *flags, "-o", out
        )
        assert status == 2 and words in captured.err, (flags, captured.err)
        assert "Traceback" not in captured.err and not out.exists()
    status, _, captured = run(
        capsys, "select", items, "--n-pos", 5, "--n-neg", 5, "--seed", 1, "--sql", "duckdb",
        "--margin", 0.05,
    )  # fmt: skip
    assert status == 2 and "--sql" in captured.err and "--margin" in captured.err


def edit_design(path, target, name, value):
    workbook = openpyxl.load_workbook(path)
    design = workbook["Design"]
    for row in design.iter_rows(max_col=2):
        if row[0].value == name:
            row[1].value = value
    workbook.save(target)


@pytest.mark.parametrize(
    ("typed", "margin"), [("5%", 0.05), ("5 %", 0.05), ("0,05", 0.05), (0.07, 0.07)]
)
def test_a_margin_typed_over_the_cell_is_read_as_a_lead_means_it(
    drawn_for_targets, tmp_path, typed, margin
):
    _, sheet, _ = drawn_for_targets
    edited = tmp_path / "edited.xlsx"
    edit_design(sheet, edited, "Target margin for precision (±)", typed)
    assert read_labeling_workbook(edited).design.targets.margin_precision == pytest.approx(margin)


@pytest.mark.parametrize(
    ("typed", "words"),
    [
        ("five", "is 'five', not a percentage such as 5%"),
        (0.7, "is 70 %, not between 0 % and 50 %"),
        ("-5%", "is -5 %, not between 0 % and 50 %"),
        (None, "is empty"),
    ],
)
def test_a_broken_target_cell_is_named_and_the_labels_still_count(
    capsys, drawn_for_targets, tmp_path, typed, words
):
    _, sheet, _ = drawn_for_targets
    edited = tmp_path / "edited.xlsx"
    edit_design(sheet, edited, "Target margin for recall (±)", typed)
    design = read_labeling_workbook(edited).design
    assert design.targets is None
    assert "edited.xlsx" in design.targets_note and "Design" in design.targets_note
    assert f"'Target margin for recall (±)' {words}" in design.targets_note
    done = tmp_path / "edited_done.xlsx"
    fill_labels(edited, done, LABELS)
    status, data, captured = run(capsys, "labels", done, "--json")
    assert status == 0 and "targets" not in data
    assert "not judged by the targets it was drawn for" in captured.err
    status, data, captured = run(capsys, "labels", done, "--margin", 0.1, "--json")
    assert data["targets"]["from"] == "flags" and "Design" not in captured.err


@pytest.mark.skipif(SOFFICE is None, reason="LibreOffice (soffice) is not installed")
def test_targets_survive_a_libreoffice_re_save(drawn_for_targets, tmp_path):
    _, sheet, _ = drawn_for_targets
    out = tmp_path / "lo"
    out.mkdir()
    resaved = libreoffice(sheet, out)
    assert read_labeling_workbook(resaved).design.targets == Targets(
        margin_precision=0.12, margin_recall=0.2, confidence=0.9
    )
