"""The labeling workbook: what labelers see, the Design sheet, reading it back, and every
check on the way back (edited ids, unknown labels, a LibreOffice re-save)."""

from __future__ import annotations

import csv
import hashlib
import random
import shutil
import subprocess
import zipfile

import openpyxl
import pytest

from core.errors import InputError
from core.items import ItemColumns
from core.selection import RULE, extend_sample, select_sample
from core.workbook.labeling import (
    LabelingError,
    count_labels,
    labeling_order,
    read_labeling_workbook,
    round_name,
    write_labeling_workbook,
)
from core.workbook.safe_io import SaveError, is_ours

LABELS = ("positive", "negative", "skip", None)


def make_items(path, count=200, seed=0, classifiers=0):
    rng = random.Random(seed)
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["id", "predicted", *[f"c{i}" for i in range(classifiers)], "subject"])
        for index in range(count):
            flags = [int(rng.random() < 0.25) for _ in range(1 + classifiers)]
            writer.writerow([f"{index:06d}", *flags, f"subject, line {index}"])
    return path


@pytest.fixture
def drawn(tmp_path):
    items = make_items(tmp_path / "items.csv")
    selection = select_sample(items, ItemColumns(keep=("subject",)), n_pos=12, n_neg=18, seed=77)
    sheet = write_labeling_workbook(tmp_path / "round.xlsx", selection, sources=[items])
    return items, selection, sheet


def fill(path, target, labels):
    """Type labels as a labeler would (openpyxl), return {id: label}."""
    workbook = openpyxl.load_workbook(path)
    sheet = workbook["Labels"]
    header = [cell.value for cell in sheet[1]]
    id_column, label_column = header.index("Item id") + 1, header.index("Label") + 1
    given = {}
    for row in range(2, sheet.max_row + 1):
        label = labels[(row - 2) % len(labels)]
        sheet.cell(row, label_column).value = label
        given[sheet.cell(row, id_column).value] = label
    workbook.save(target)
    return given


def expected_counts(items, given):
    """The counts written out by hand from the drawn strata and the labels typed."""
    counts = dict.fromkeys(("tp", "fp", "fn", "tn", "skipped", "unlabeled"), 0)
    for item in items:
        if item.stratum is None:
            continue
        label = given[item.id]
        if label is None:
            counts["unlabeled"] += 1
        elif label == "skip":
            counts["skipped"] += 1
        else:
            cell = {
                ("pos", "positive"): "tp", ("pos", "negative"): "fp",
                ("neg", "positive"): "fn", ("neg", "negative"): "tn",
            }[(item.stratum, label)]  # fmt: skip
            counts[cell] += 1
    return counts


def as_counts(labels):
    return {
        "tp": labels.tp, "fp": labels.fp, "fn": labels.fn, "tn": labels.tn,
        "skipped": labels.skipped, "unlabeled": labels.unlabeled,
    }  # fmt: skip


def test_the_labelers_sheet(drawn):
    _, selection, sheet = drawn
    workbook = openpyxl.load_workbook(sheet)
    assert workbook.sheetnames[0] == "Labels"
    labels = workbook["Labels"]
    header = [cell.value for cell in labels[1]]
    assert header == ["Rank", "Item id", "subject", "Label", "Labeler", "Comment"]
    rows = list(labels.iter_rows(min_row=2, values_only=True))
    assert sorted(row[1] for row in rows) == sorted(item.id for item in selection.items)
    assert [row[0] for row in rows] == list(range(1, len(selection.items) + 1))
    assert all(isinstance(row[1], str) for row in rows)  # ids stay text ("000123")
    # blind: nothing on the labelers' sheet says which stratum an item came from
    assert not any("pos" in str(value) for row in rows for value in row if value)
    stratum = {item.id: item.stratum for item in selection.items}
    strata = [stratum[row[1]] for row in rows]
    assert "pos" in strata[: len(strata) // 2] and "neg" in strata[: len(strata) // 2]
    assert "pos" in strata[len(strata) // 2 :] and "neg" in strata[len(strata) // 2 :]
    (validation,) = labels.data_validations.dataValidation
    assert validation.type == "list"
    assert validation.formula1 == '"positive,negative,skip"'
    assert str(validation.sqref) == f"D2:D{len(rows) + 1}"
    assert validation.showErrorMessage
    assert is_ours(sheet)


def test_the_design_sheet_records_the_round(drawn):
    items, selection, sheet = drawn
    workbook = openpyxl.load_workbook(sheet)
    design = workbook["Design"]
    fields = {row[0]: row[1] for row in design.iter_rows(values_only=True) if row[0]}
    assert fields["Seed"] == "77"
    assert fields["Rule"] == RULE
    assert fields["Item file"] == "items.csv"
    assert fields["Item file SHA-256"] == hashlib.sha256(items.read_bytes()).hexdigest()
    assert fields["App version"].startswith("prplanner")
    table = [row for row in design.iter_rows(values_only=True) if row[0] == "predicted"]
    assert table == [
        ("predicted", "predicted", selection.population_pos, selection.population_neg, 12, 18)
    ]
    assert design.protection.sheet
    assert workbook["Sample"].protection.sheet
    assert workbook["Sample"].sheet_state == "veryHidden"


def test_round_trip_counts(drawn, tmp_path):
    _, selection, sheet = drawn
    labeled = tmp_path / "labeled.xlsx"
    given = fill(sheet, labeled, LABELS)
    (labels,) = count_labels([read_labeling_workbook(labeled)])
    assert as_counts(labels) == expected_counts(selection.items, given)
    assert labels.design.population_pos == selection.population_pos
    assert labels.matrix.as_tuple() == (labels.tp, labels.fp, labels.fn, labels.tn)
    assert (labels.population.predicted_positive, labels.population.predicted_negative) == (
        selection.population_pos,
        selection.population_neg,
    )
    assert labels.skipped_pos + labels.skipped_neg == labels.skipped
    tp, fp, fn, tn = labels.counts("positive")
    assert (tp - labels.tp, fn - labels.fn) == (labels.skipped_pos, labels.skipped_neg)
    tp, fp, fn, tn = labels.counts("negative")
    assert (fp - labels.fp, tn - labels.tn) == (labels.skipped_pos, labels.skipped_neg)


def test_labels_in_any_case_with_spaces(drawn, tmp_path):
    sheet = drawn[2]
    labeled = tmp_path / "labeled.xlsx"
    fill(sheet, labeled, [" Positive ", "NEGATIVE", "Skip"])
    workbook = read_labeling_workbook(labeled)
    assert {item.label for item in workbook.items} == {"positive", "negative", "skip"}


def edit(path, target, change):
    workbook = openpyxl.load_workbook(path)
    change(workbook["Labels"])
    workbook.save(target)
    return target


def sheet_ids(path):
    """The Labels sheet's item ids, top to bottom."""
    labels = openpyxl.load_workbook(path)["Labels"]
    return [row[1] for row in labels.iter_rows(min_row=2, values_only=True)]


def test_an_edited_id_is_named_and_refused(drawn, tmp_path):
    _, _selection, sheet = drawn
    original = sheet_ids(sheet)[3]

    def change(labels):
        labels.cell(5, 2).value = "999999"

    broken = edit(sheet, tmp_path / "edited.xlsx", change)
    with pytest.raises(LabelingError) as caught:
        read_labeling_workbook(broken)
    message = str(caught.value)
    assert "'999999' (row 5)" in message and "added or edited" in message
    assert repr(original) in message and "missing" in message


def test_an_added_row_is_refused(drawn, tmp_path):
    def change(labels):
        labels.append([99, "123456", "extra", "positive"])

    with pytest.raises(LabelingError, match=r"'123456' \(row 32\)"):
        read_labeling_workbook(edit(drawn[2], tmp_path / "added.xlsx", change))


def test_a_removed_row_is_refused(drawn, tmp_path):
    _, selection, sheet = drawn

    def change(labels):
        labels.delete_rows(2)

    with pytest.raises(LabelingError, match=repr(selection.items[0].id)) as refused:
        read_labeling_workbook(edit(sheet, tmp_path / "removed.xlsx", change))
    # Labelers who split a round by deleting each other's rows learn how to split it.
    assert "leave the other rows' labels empty (do not delete them)" in str(refused.value)


def test_a_repeated_id_is_refused(drawn, tmp_path):
    sheet = drawn[2]

    def change(labels):
        labels.cell(3, 2).value = labels.cell(2, 2).value

    with pytest.raises(LabelingError, match="appear twice"):
        read_labeling_workbook(edit(sheet, tmp_path / "twice.xlsx", change))


def test_an_unknown_label_names_its_cell(drawn, tmp_path):
    _, _selection, sheet = drawn

    def change(labels):
        labels.cell(7, 4).value = "maybe"

    with pytest.raises(LabelingError) as caught:
        read_labeling_workbook(edit(sheet, tmp_path / "maybe.xlsx", change))
    assert "cell D7" in str(caught.value) and "'maybe'" in str(caught.value)
    assert sheet_ids(sheet)[5] in str(caught.value)


def test_every_cell_that_is_not_a_label_is_named_at_once(drawn, tmp_path):
    def change(labels):
        for row, text in ((3, "yes?"), (9, "maybe"), (15, "spam")):
            labels.cell(row, 4).value = text

    with pytest.raises(LabelingError) as caught:
        read_labeling_workbook(edit(drawn[2], tmp_path / "three.xlsx", change))
    message = str(caught.value)
    assert "3 label cell(s)" in message
    assert all(cell in message for cell in ("cell D3 'yes?'", "cell D9 'maybe'", "D15 'spam'"))


def _split_between_two_labelers(sheet, first, second, labels):
    """Two copies of one workbook, each labeler filling alternate rows; {id: label}."""
    given = {}
    for target, keep in ((first, 0), (second, 1)):
        workbook = openpyxl.load_workbook(sheet)
        labels_sheet = workbook["Labels"]
        header = [cell.value for cell in labels_sheet[1]]
        id_column, label_column = header.index("Item id") + 1, header.index("Label") + 1
        for row in range(2, labels_sheet.max_row + 1):
            if row % 2 == keep:
                label = labels[row % len(labels)]
                labels_sheet.cell(row, label_column).value = label
                given[labels_sheet.cell(row, id_column).value] = label
        workbook.save(target)
    return given


def test_two_labelers_copies_of_one_workbook_count_together(drawn, tmp_path):
    _, selection, sheet = drawn
    one, two = tmp_path / "anna.xlsx", tmp_path / "ben.xlsx"
    given = _split_between_two_labelers(sheet, one, two, ["positive", "negative", "negative"])
    books = [read_labeling_workbook(one), read_labeling_workbook(two)]
    (labels,) = count_labels(books)
    assert as_counts(labels) == expected_counts(selection.items, given)
    assert labels.unlabeled == 0
    # One labeler skipped an item the other labeled: the label counts.
    workbook = openpyxl.load_workbook(two)
    workbook["Labels"].cell(2, 4).value = "skip"  # row 2 was labeled in anna.xlsx
    workbook.save(two)
    (again,) = count_labels([read_labeling_workbook(one), read_labeling_workbook(two)])
    assert as_counts(again) == as_counts(labels)


def test_copies_that_disagree_on_an_item_are_refused_naming_it(drawn, tmp_path):
    sheet = drawn[2]
    one, two = tmp_path / "anna.xlsx", tmp_path / "ben.xlsx"
    given = _split_between_two_labelers(sheet, one, two, ["positive", "negative"])
    workbook = openpyxl.load_workbook(two)
    labels_sheet = workbook["Labels"]
    item_id = labels_sheet.cell(2, 2).value
    labels_sheet.cell(2, 4).value = "negative" if given[item_id] == "positive" else "positive"
    workbook.save(two)
    with pytest.raises(LabelingError) as caught:
        count_labels([read_labeling_workbook(one), read_labeling_workbook(two)])
    message = str(caught.value)
    assert "disagree on 1 item;" in message and repr(item_id) in message
    assert "anna.xlsx row 2" in message and "ben.xlsx row 2" in message


def test_one_file_given_twice_is_refused(drawn):
    book = read_labeling_workbook(drawn[2])
    with pytest.raises(LabelingError, match="given twice"):
        count_labels([book, book])


def test_an_edited_sample_sheet_is_refused(drawn, tmp_path):
    workbook = openpyxl.load_workbook(drawn[2])
    workbook["Sample"].cell(2, 4).value = (
        "neg" if workbook["Sample"].cell(2, 4).value == "pos" else "pos"
    )
    workbook.save(tmp_path / "sample.xlsx")
    with pytest.raises(LabelingError, match=r"key order|edited"):
        read_labeling_workbook(tmp_path / "sample.xlsx")
    workbook = openpyxl.load_workbook(drawn[2])
    workbook["Sample"].cell(2, 1).value = "000000x"
    workbook.save(tmp_path / "key.xlsx")
    with pytest.raises(LabelingError, match="not the rule's key"):
        read_labeling_workbook(tmp_path / "key.xlsx")


def _copy_labels_sheet_first(source, target, change_copy):
    """Excel's Move or Copy > Create a copy: the copy lands before the original."""
    workbook = openpyxl.load_workbook(source)
    copy = workbook.copy_worksheet(workbook["Labels"])
    copy.title = "Labels (2)"
    change_copy(copy)
    workbook.move_sheet(copy, offset=-workbook.index(copy))
    workbook.save(target)
    assert workbook.sheetnames[0] == "Labels (2)"
    return target


def _counts_with_a_sheet_first(labeled, target, rows):
    """The counts of ``labeled`` with a sheet of ``rows`` added before the others."""
    workbook = openpyxl.load_workbook(labeled)
    sheet = workbook.create_sheet("Lead's sheet", 0)
    for row in rows:
        sheet.append(row)
    workbook.save(target)
    return _counts_of(target)


def _counts_of(path):
    """The counts the reader gives a labeled workbook (as :func:`as_counts`)."""
    (labels,) = count_labels([read_labeling_workbook(path)])
    return as_counts(labels)


def test_the_sheet_with_the_labels_is_read_whichever_sheet_comes_first(drawn, tmp_path):
    _, selection, sheet = drawn
    labeled = tmp_path / "labeled.xlsx"
    given = fill(sheet, labeled, LABELS)
    expected = expected_counts(selection.items, given)

    def clear_labels(copy):
        for row in range(2, copy.max_row + 1):
            copy.cell(row, [c.value for c in copy[1]].index("Label") + 1).value = None

    # An empty copy before the labeled sheet, or a notes sheet of the lead's: the labels
    # are where the editors typed them.
    empty_copy = _copy_labels_sheet_first(labeled, tmp_path / "copy.xlsx", clear_labels)
    assert _counts_of(empty_copy) == expected
    notes = [["Labelers: Anna (rows 2-15), Ben (the rest)"]]
    assert _counts_with_a_sheet_first(labeled, tmp_path / "notes.xlsx", notes) == expected


def test_two_sheets_holding_labels_are_named_not_guessed_between(drawn, tmp_path):
    # A stale copy placed first by Excel: reading the first sheet gave its counts silently.
    _, _, sheet = drawn
    labeled = tmp_path / "labeled.xlsx"
    fill(sheet, labeled, LABELS)

    def stale(copy):
        label = [c.value for c in copy[1]].index("Label") + 1
        for row in range(2, copy.max_row + 1):
            copy.cell(row, label).value = "negative" if row % 3 else None

    two = _copy_labels_sheet_first(labeled, tmp_path / "two.xlsx", stale)
    with pytest.raises(LabelingError) as refused:
        read_labeling_workbook(two)
    message = str(refused.value)
    assert "sheets 'Labels (2)' (" in message and "'Labels' (" in message
    assert "both hold labels" in message and "delete the other" in message


def test_two_labelers_halves_on_sheets_of_their_own_are_read_together(drawn, tmp_path):
    # Anna labels the first half on the original, Ben the second half on a copy: only the
    # fuller sheet was read and the other half was "no label yet" (hostile-input trial 12).
    _, selection, sheet = drawn
    labeled = tmp_path / "labeled.xlsx"
    given = fill(sheet, labeled, ("positive", "negative", "skip"))
    expected = expected_counts(selection.items, given)
    workbook = openpyxl.load_workbook(labeled)
    original = workbook["Labels"]
    label = [c.value for c in original[1]].index("Label") + 1
    copy = workbook.copy_worksheet(original)
    copy.title = "Labels Ben"
    half = original.max_row // 2
    synonyms = {"positive": "pos", "negative": "neg", "skip": "skipped"}
    for row in range(2, original.max_row + 1):
        if row <= half:
            copy.cell(row, label).value = None
        else:
            # Ben types the short words: the same labels.
            copy.cell(row, label).value = synonyms[original.cell(row, label).value]
            original.cell(row, label).value = None
    split = tmp_path / "split.xlsx"
    workbook.save(split)
    assert _counts_of(split) == expected
    assert expected["unlabeled"] == 0


def test_ids_excel_turned_into_numbers_are_named_as_such(drawn, tmp_path):
    # "Convert to Number" on the id column: 000123 becomes 123. Before, the lead read that
    # 30 ids were "not in the sample" and 30 "missing", with no word of the cause.
    _, _, sheet = drawn
    labeled = tmp_path / "labeled.xlsx"
    fill(sheet, labeled, LABELS)

    def to_numbers(labels):
        column = [c.value for c in labels[1]].index("Item id") + 1
        for row in range(2, labels.max_row + 1):
            labels.cell(row, column).value = int(labels.cell(row, column).value)

    converted = edit(labeled, tmp_path / "numbers.xlsx", to_numbers)
    with pytest.raises(LabelingError) as refused:
        read_labeling_workbook(converted)
    message = str(refused.value)
    assert "item id(s) are numbers, not the text PR Planner wrote" in message
    assert "drops leading zeros" in message and "(row 2)" in message


def test_long_ids_rounded_to_15_digits_are_named_as_converted_not_as_twins(tmp_path):
    items = tmp_path / "items.csv"
    with items.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["id", "predicted"])
        for index in range(60):
            writer.writerow([f"12300000000001{index:02d}", index % 3 == 0])
    selection = select_sample(items, n_pos=10, n_neg=20, seed=5)
    drawn_path = write_labeling_workbook(tmp_path / "round.xlsx", selection, sources=[items])
    labeled = tmp_path / "labeled.xlsx"
    fill(drawn_path, labeled, LABELS)

    def as_libreoffice_keeps_them(labels):  # 15 significant digits of each number
        column = [c.value for c in labels[1]].index("Item id") + 1
        for row in range(2, labels.max_row + 1):
            labels.cell(row, column).value = float(f"{int(labels.cell(row, column).value):.15g}")

    rounded = edit(labeled, tmp_path / "rounded.xlsx", as_libreoffice_keeps_them)
    with pytest.raises(LabelingError, match="keeps only 15 digits of a long id"):
        read_labeling_workbook(rounded)


def test_a_reference_sheet_and_an_agreeing_copy_do_not_block_reading(drawn, tmp_path):
    # A sheet of example labels for the editors (its ids are not the sample's) and a copy
    # that agrees with the labeled sheet are no reason to refuse (review 11).
    _, selection, sheet = drawn
    labeled = tmp_path / "labeled.xlsx"
    given = fill(sheet, labeled, LABELS)
    expected = expected_counts(selection.items, given)
    agreeing = _copy_labels_sheet_first(labeled, tmp_path / "agree.xlsx", lambda copy: None)
    assert _counts_of(agreeing) == expected
    examples = [
        ["Item id", "Subject", "Label", "Label"],  # a header on two columns
        ["example-1", "Cheap flights to Rome", "positive", "positive"],
    ]
    assert _counts_with_a_sheet_first(labeled, tmp_path / "examples.xlsx", examples) == expected


def test_two_columns_headed_label_are_refused_naming_them(drawn, tmp_path):
    _, _, sheet = drawn
    labeled = tmp_path / "labeled.xlsx"
    fill(sheet, labeled, LABELS)

    def second_label_column(labels):
        column = labels.max_column + 1
        labels.cell(1, column).value = "Label"
        labels.cell(2, column).value = "negative"

    twice = edit(labeled, tmp_path / "twice.xlsx", second_label_column)
    with pytest.raises(LabelingError, match=r"columns [A-Z]+ and [A-Z]+ are both headed 'Label'"):
        read_labeling_workbook(twice)


def test_a_workbook_that_is_not_a_labeling_workbook(tmp_path, shared_fixtures):
    with pytest.raises(LabelingError, match="'Item id' and 'Label'"):
        read_labeling_workbook(shared_fixtures / "rounds_simple.xlsx")


def test_the_item_list_is_never_overwritten(tmp_path):
    items = make_items(tmp_path / "items.xlsx.csv")
    selection = select_sample(items, n_pos=3, n_neg=3, seed=1)
    before = items.read_bytes()
    with pytest.raises(SaveError):
        write_labeling_workbook(items, selection, sources=[items])
    assert items.read_bytes() == before
    foreign = tmp_path / "mine.xlsx"
    openpyxl.Workbook().save(foreign)
    with pytest.raises(SaveError, match="not written by PR Planner"):
        write_labeling_workbook(foreign, selection, sources=[items])


def test_a_first_round_and_its_top_up_count_together(tmp_path):
    items = make_items(tmp_path / "items.csv", classifiers=1)
    columns = ItemColumns(classifiers=("c0",))
    first = select_sample(items, columns, n_pos=6, n_neg=8, seed=5)
    first_sheet = write_labeling_workbook(tmp_path / "r1.xlsx", first, sources=[items])
    top = extend_sample(
        items, columns, seed=5, previous_ids=[item.id for item in first.items],
        previous_sizes={design.name: (6, 8) for design in first.designs()}, n_pos=10, n_neg=12,
    )  # fmt: skip
    top_sheet = write_labeling_workbook(tmp_path / "r1b.xlsx", top, sources=[items])
    given = fill(first_sheet, tmp_path / "r1_done.xlsx", ["positive", "negative"])
    given |= fill(top_sheet, tmp_path / "r1b_done.xlsx", ["negative", "skip", "positive"])
    books = [read_labeling_workbook(tmp_path / name) for name in ("r1b_done.xlsx", "r1_done.xlsx")]
    assert round_name(books) == "r1"  # the first draw's name, not a copy's or the top-up's
    primary, further = count_labels(books)
    full = select_sample(items, columns, n_pos=10, n_neg=12, seed=5)
    assert as_counts(primary) == expected_counts(full.items, given)
    # the further classifier's counts follow its own coordinated sample
    expected = dict.fromkeys(("tp", "fp", "fn", "tn", "skipped", "unlabeled"), 0)
    for item in full.items:
        for membership in item.memberships:
            label = given[item.id]
            if label == "skip":
                expected["skipped"] += 1
            else:
                cell = {("pos", "positive"): "tp", ("pos", "negative"): "fp",
                        ("neg", "positive"): "fn", ("neg", "negative"): "tn"}  # fmt: skip
                expected[cell[(membership.stratum, label)]] += 1
    assert as_counts(further) == expected
    assert (further.design.n_pos, further.design.n_neg) == (10, 12)
    with pytest.raises(LabelingError, match="in none of the workbooks"):
        count_labels([read_labeling_workbook(tmp_path / "r1b_done.xlsx")])


SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")


def libreoffice(source, outdir, fmt="xlsx"):
    subprocess.run(
        [SOFFICE, "--headless", f"-env:UserInstallation=file://{outdir}/profile",
         "--convert-to", fmt, "--outdir", str(outdir), str(source)],
        check=True, capture_output=True, timeout=180,
    )  # fmt: skip
    produced = outdir / f"{source.stem}.{fmt}"
    assert produced.is_file(), f"LibreOffice wrote no {produced.name}"
    return produced


@pytest.mark.skipif(SOFFICE is None, reason="LibreOffice (soffice) is not installed")
def test_a_workbook_re_saved_by_libreoffice_reads_back(drawn, tmp_path):
    _, selection, sheet = drawn
    labeled = tmp_path / "labeled" / "round.xlsx"
    labeled.parent.mkdir()
    given = fill(sheet, labeled, LABELS)
    out = tmp_path / "lo"
    out.mkdir()
    resaved = libreoffice(labeled, out)
    with zipfile.ZipFile(resaved) as archive:
        assert "LibreOffice" in archive.read("docProps/app.xml").decode()
        sheet_xml = archive.read("xl/worksheets/sheet1.xml").decode()
    assert "dataValidation" in sheet_xml and "positive,negative,skip" in sheet_xml
    workbook = read_labeling_workbook(resaved)
    (labels,) = count_labels([workbook])
    assert as_counts(labels) == expected_counts(selection.items, given)
    assert [item.id for item in workbook.items] == sheet_ids(sheet)


@pytest.mark.parametrize(
    ("odd", "refusal"),
    [
        ("\x07", r"control characters.*'b\\x07'"),
        # openpyxl's pattern lets U+FFFE and U+FFFF through: the workbook went to the
        # labelers and then opened nowhere, not even in PR Planner (fuzz 13).
        ("\ufffe", r"U\+FFFE or U\+FFFF"),
        ("\uffff", r"U\+FFFE or U\+FFFF"),
    ],
    ids=["bell", "U+FFFE", "U+FFFF"],
)
def test_characters_a_workbook_cannot_hold_are_shown_in_kept_columns_and_refused_in_ids(
    tmp_path, odd, refusal
):
    """The labelers' columns show them as U+FFFD, while an id (which must come back
    exactly) is refused before anything is written."""
    items = tmp_path / "items.csv"
    items.write_text(
        f"id,predicted,subject\na,1,fine\nb,0,bell {odd} here\nc,1,x\nd,0,y\n", "utf-8"
    )
    selection = select_sample(items, ItemColumns(keep=("subject",)), n_pos=2, n_neg=2, seed=3)
    sheet = write_labeling_workbook(tmp_path / "ok.xlsx", selection, sources=[items])
    subjects = [row[2] for row in openpyxl.load_workbook(sheet)["Labels"].iter_rows(
        min_row=2, values_only=True
    )]  # fmt: skip
    assert "bell \ufffd here" in subjects
    assert len(read_labeling_workbook(sheet).items) == 4
    items.write_text(f"id,predicted\na,1\nb{odd},0\nc,1\nd,0\n", encoding="utf-8")
    selection = select_sample(items, n_pos=2, n_neg=2, seed=3)
    with pytest.raises(InputError, match=refusal):
        write_labeling_workbook(tmp_path / "bad.xlsx", selection, sources=[items])
    assert not (tmp_path / "bad.xlsx").exists()


def test_labelers_get_instructions_clickable_links_and_text_kept_in_its_cells(tmp_path):
    items = tmp_path / "items.csv"
    with items.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["id", "predicted", "subject", "link"])
        for index in range(40):
            writer.writerow(
                [f"m{index}", index % 4 == 0, "A subject line long enough to wrap " * 3,
                 f"https://mail.example.com/{index}"]
            )  # fmt: skip
    selection = select_sample(
        items, ItemColumns(keep=("subject", "link")), n_pos=4, n_neg=6, seed=2
    )
    sheet = write_labeling_workbook(tmp_path / "round.xlsx", selection, sources=[items])
    workbook = openpyxl.load_workbook(sheet)
    assert workbook.sheetnames[:2] == ["Labels", "How to label"]
    instructions = " ".join(
        str(value) for row in workbook["How to label"].iter_rows(values_only=True) for value in row
    )
    assert "skip: you cannot tell" in instructions and "Do not add, remove" in instructions
    labels = workbook["Labels"]
    header = [cell.value for cell in labels[1]]
    assert "positive" in labels.cell(1, header.index("Label") + 1).comment.text
    link = labels.cell(2, header.index("link") + 1)
    assert link.hyperlink.target == link.value
    subject = labels.cell(2, header.index("subject") + 1)
    assert subject.alignment.wrap_text  # stays in its cell instead of running over Label
    assert labels.row_dimensions[2].height and labels.row_dimensions[2].height > 15
    assert len(read_labeling_workbook(sheet).items) == 10


def test_the_category_checked_is_named_to_the_labelers_and_recorded(tmp_path):
    items = tmp_path / "items.csv"
    items.write_text(
        "id,predicted\n" + "".join(f"m{i},{int(i % 3 == 0)}\n" for i in range(30)),
        encoding="utf-8",
    )
    selection = select_sample(items, n_pos=3, n_neg=4, seed=5)
    named = write_labeling_workbook(
        tmp_path / "named.xlsx",
        selection,
        sources=[items],
        category="  travel booking\nmails ",  # one line, trimmed
    )
    workbook = openpyxl.load_workbook(named)
    instructions = " ".join(
        str(value) for row in workbook["How to label"].iter_rows(values_only=True) for value in row
    )
    assert "positive: the item belongs to “travel booking mails”;" in instructions
    labels = workbook["Labels"]
    header = [cell.value for cell in labels[1]]
    comment = labels.cell(1, header.index("Label") + 1).comment.text
    assert "belongs to “travel booking mails”" in comment
    assert read_labeling_workbook(named).design.category == "travel booking mails"
    plain = write_labeling_workbook(tmp_path / "plain.xlsx", selection, sources=[items])
    words = " ".join(
        str(value)
        for row in openpyxl.load_workbook(plain)["How to label"].iter_rows(values_only=True)
        for value in row
    )
    assert "belongs to the category being checked" in words
    assert read_labeling_workbook(plain).design.category == ""


def test_words_that_are_not_labels_are_counted_for_one_find_and_replace(drawn, tmp_path):
    _, _, sheet = drawn
    typed = ["Not fraud", "positive", "Fraud", "Not fraud", "N/A", "Not fraud", "Fraud", "no"]
    labeled = tmp_path / "typed.xlsx"
    fill(sheet, labeled, typed)
    with pytest.raises(LabelingError) as caught:
        read_labeling_workbook(labeled)
    message = str(caught.value)
    cells = 30  # 12 + 18 items, the typed words in turn
    expected = {word: sum(typed[i % len(typed)] == word for i in range(cells)) for word in typed}
    assert f"'Not fraud' ×{expected['Not fraud']}" in message
    assert f"'Fraud' ×{expected['Fraud']}" in message
    assert f"'N/A' ×{expected['N/A']}" in message and "'no'" not in message
    assert message.index("'Not fraud' ×") < message.index("'N/A' ×")  # most frequent first
    assert "Find & Replace (Ctrl+H)" in message


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        (["yes", "no", "skip"], ["positive", "negative", "skip"]),
        (["Y", "N", None], ["positive", "negative", None]),
        ([1, 0, "0"], ["positive", "negative", "negative"]),
        ([True, False, "TRUE"], ["positive", "negative", "positive"]),
    ],
)
def test_yes_no_answers_are_read_as_labels(drawn, tmp_path, typed, meant):
    # Trial 16: y/n pasted over the drop-down stopped the whole read; an editor answering
    # "does the item belong to the category?" means positive by yes, 1 or true.
    _, selection, sheet = drawn
    labeled = tmp_path / "answers.xlsx"
    given = fill(sheet, labeled, typed)
    meaning = dict(zip(map(repr, typed), meant, strict=True))
    intended = {item_id: meaning[repr(label)] for item_id, label in given.items()}
    (labels,) = count_labels([read_labeling_workbook(labeled)])
    assert as_counts(labels) == expected_counts(selection.items, intended)


def _labels_with_open_items(tp, fp, fn, tn, skipped, unlabeled, population=(1_200, 48_000)):
    from core.selection import ClassifierDesign
    from core.workbook.labeling import ClassifierLabels

    design = ClassifierDesign(
        name="main", column="predicted", population_pos=population[0],
        population_neg=population[1], n_pos=tp + fp + skipped[0] + unlabeled[0],
        n_neg=fn + tn + skipped[1] + unlabeled[1],
    )  # fmt: skip
    return ClassifierLabels(
        design=design, tp=tp, fp=fp, fn=fn, tn=tn, skipped_pos=skipped[0],
        skipped_neg=skipped[1], unlabeled_pos=unlabeled[0], unlabeled_neg=unlabeled[1],
    )  # fmt: skip


@pytest.mark.parametrize(
    ("counts", "skipped", "unlabeled"),
    [
        ((40, 8, 6, 300), (3, 4), (0, 0)),
        ((12, 30, 2, 90), (5, 2), (1, 3)),
        ((0, 9, 1, 50), (2, 2), (0, 1)),
    ],
)
def test_the_range_if_skipped_holds_every_way_they_could_be_labeled(counts, skipped, unlabeled):
    """Brute force: every number of positives among the open items of each stratum,
    precision, recall (Eq 2 by hand) and F1 from the counts, against the reported range."""
    labels = _labels_with_open_items(*counts, skipped, unlabeled)
    n1_big, n0_big = 1_200, 48_000
    tp, fp, fn, tn = counts
    for unlabeled_too, open_pos, open_neg in (
        (False, skipped[0], skipped[1]),
        (True, skipped[0] + unlabeled[0], skipped[1] + unlabeled[1]),
    ):
        seen = {"precision": [], "recall": [], "f1": []}
        for flagged_positive in range(open_pos + 1):
            for unflagged_positive in range(open_neg + 1):
                a, b = tp + flagged_positive, fp + open_pos - flagged_positive
                c, d = fn + unflagged_positive, tn + open_neg - unflagged_positive
                precision = a / (a + b)
                found = n1_big * precision + n0_big * c / (c + d)
                if found == 0:
                    continue
                recall = n1_big * precision / found
                seen["precision"].append(precision)
                seen["recall"].append(recall)
                # F1 is 0 when precision and recall both are (no true positive found)
                both = precision + recall
                seen["f1"].append(2 * precision * recall / both if both else 0.0)
        spans = labels.range_if_skipped(unlabeled_too=unlabeled_too)
        for name, values in seen.items():
            assert spans[name] == pytest.approx([min(values), max(values)], rel=1e-12), name


def test_open_items_and_ranges_in_words():
    from core.workbook.labeling import range_words

    labels = _labels_with_open_items(40, 8, 6, 300, (0, 0), (0, 1))
    assert labels.open_items_in_words() == ""
    assert labels.open_items_in_words(unlabeled_too=True) == "the 1 unlabeled item is"
    both = _labels_with_open_items(40, 8, 6, 300, (2, 1), (0, 1))
    assert both.open_items_in_words(unlabeled_too=True) == "the 3 skipped and 1 unlabeled items are"
    # only an unflagged item open: precision cannot move, so it is one value
    spans = labels.range_if_skipped(unlabeled_too=True)
    words = range_words(spans, lambda value: f"{100 * value:.2f} %")
    assert words[0] == "precision 83.33 %"
    low, high = spans["recall"]
    assert low < high and words[1] == f"recall {100 * low:.2f} % to {100 * high:.2f} %"


def test_text_that_starts_like_a_formula_stays_text(tmp_path):
    items = tmp_path / "items.csv"
    items.write_text(
        'id,predicted,subject\n=A1,1,"=HYPERLINK(""http://x"")"\nb,0,ok\nc,1,fine\nd,0,=1+1\n',
        encoding="utf-8",
    )
    selection = select_sample(items, ItemColumns(keep=("subject",)), n_pos=2, n_neg=2, seed=1)
    sheet = write_labeling_workbook(
        tmp_path / "round.xlsx", selection, sources=[items], category="=travel"
    )
    workbook = openpyxl.load_workbook(sheet)
    cells = [cell for row in workbook["Labels"].iter_rows() for cell in row]
    texts = {cell.value for cell in cells if isinstance(cell.value, str)}
    assert {"=A1", '=HYPERLINK("http://x")', "=1+1"} <= texts
    assert all(
        cell.data_type != "f"
        for sheet_ in workbook.worksheets
        for row in sheet_.iter_rows()
        for cell in row
    )
    read = read_labeling_workbook(sheet)  # the ids come back as drawn
    assert {place.id for place in read.sample} == {"=A1", "b", "c", "d"}
    assert read.design.category == "=travel"


def _instructions(path) -> str:
    sheet = openpyxl.load_workbook(path)["How to label"]
    return " ".join(str(value) for row in sheet.iter_rows(values_only=True) for value in row)


def _design_field(path, name):
    sheet = openpyxl.load_workbook(path)["Design"]
    return next(row[1] for row in sheet.iter_rows(values_only=True) if row[0] == name)


def test_a_top_up_of_flagged_items_only_does_not_claim_to_be_blind(tmp_path):
    items = make_items(tmp_path / "items.csv")
    first = select_sample(items, n_pos=6, n_neg=8, seed=5)
    first_sheet = write_labeling_workbook(tmp_path / "r1.xlsx", first, sources=[items])
    assert read_labeling_workbook(first_sheet).design.blind
    assert "you are not told which items the classifier flagged" in _instructions(first_sheet)
    top = extend_sample(
        items, seed=5, previous_ids=[item.id for item in first.items],
        previous_sizes={first.primary.name: (6, 8)}, n_pos=11, n_neg=8,
    )  # fmt: skip
    assert {item.stratum for item in top.items} == {"pos"}
    top_sheet = write_labeling_workbook(tmp_path / "r1b.xlsx", top, sources=[items])
    assert read_labeling_workbook(top_sheet).design.blind is False
    assert _design_field(top_sheet, "Blind labeling").startswith("no: every item")
    words = _instructions(top_sheet)
    assert "not told" not in words and "Every item here was flagged" in words


def _flagged_items(path, count, share, seed):
    rng = random.Random(seed)
    lines = ["id,predicted,other"] + [
        f"t{index},{int(rng.random() < share)},{int(rng.random() < share)}"
        for index in range(count)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_blind_sheet_spreads_the_flagged_items_over_every_part_of_it(tmp_path):
    # In key order the last rows were nearly all flagged items: the flagged stratum was
    # sampled at 8.5 % of its items and the unflagged at 1.8 %, so its keys ran further
    # (trial 14: 287 of the last 300 rows). Any share of the sheet now holds each stratum
    # in proportion.
    items = _flagged_items(tmp_path / "items.csv", 40_000, 0.015, 3)
    selection = select_sample(items, n_pos=50, n_neg=700, seed=9)
    in_key_order = [item.stratum for item in selection.items]
    assert in_key_order[-100:].count("pos") > 40  # what the old order did
    sheet = write_labeling_workbook(tmp_path / "round.xlsx", selection, sources=[items])
    rows = list(openpyxl.load_workbook(sheet)["Labels"].iter_rows(min_row=2, values_only=True))
    stratum = {item.id: item.stratum for item in selection.items}
    strata = [stratum[row[1]] for row in rows]
    for tenth in range(10):  # 75 rows, 5 of them flagged: one either way at most
        part = strata[tenth * 75 : (tenth + 1) * 75]
        assert 4 <= part.count("pos") <= 6, (tenth, part.count("pos"))
    # A first share of the sheet holds the first items of each stratum in key order (the
    # rule's smaller sample), counted here from the keys, independently of the code.
    for cut in (75, 300, 600):
        head = {row[1] for row in rows[:cut]}
        for wanted in ("pos", "neg"):
            ordered = sorted(
                (hashlib.sha256(f"9:{item.id}".encode()).hexdigest(), item.id)
                for item in selection.items
                if item.stratum == wanted
            )
            taken = [item_id in head for _key, item_id in ordered]
            assert taken == sorted(taken, reverse=True), (cut, wanted)  # a prefix
    # Not blind (a Stratum column): key order, as drawn.
    assert labeling_order(selection, blind=False) == list(selection.items)


def test_a_blind_sheet_spreads_a_further_classifiers_strata_too(tmp_path):
    items = _flagged_items(tmp_path / "items.csv", 30_000, 0.02, 4)
    selection = select_sample(
        items, ItemColumns(classifiers=("other",)), n_pos=40, n_neg=400, seed=2
    )
    order = labeling_order(selection, blind=True)
    flagged = [
        item.stratum == "pos" or any(place.stratum == "pos" for place in item.memberships)
        for item in order
    ]
    quarter = len(order) // 4
    shares = [sum(flagged[i * quarter : (i + 1) * quarter]) for i in range(4)]
    assert max(shares) - min(shares) <= 6, shares  # about 80 flagged items, 20 a quarter


def test_a_top_up_of_both_classifiers_flagged_items_says_so(tmp_path):
    # 52 flagged items for the main classifier and 20 for the other: "blind" before.
    items = _flagged_items(tmp_path / "items.csv", 5_000, 0.05, 8)
    columns = ItemColumns(classifiers=("other",))
    first = select_sample(items, columns, n_pos=10, n_neg=30, seed=6)
    top = extend_sample(
        items, columns, seed=6, previous_ids=[item.id for item in first.items],
        previous_sizes={first.primary.name: (10, 30), "other": (10, 30)}, n_pos=20, n_neg=30,
    )  # fmt: skip
    assert any(item.stratum is None for item in top.items)  # the other's items only
    sheet = write_labeling_workbook(tmp_path / "top.xlsx", top, sources=[items])
    assert read_labeling_workbook(sheet).design.blind is False
    assert _design_field(sheet, "Blind labeling").startswith("no: every item")


def test_a_workbook_that_shows_the_strata_says_so_to_the_labelers(tmp_path):
    items = make_items(tmp_path / "items.csv")
    selection = select_sample(items, n_pos=6, n_neg=8, seed=5)
    sheet = write_labeling_workbook(tmp_path / "r.xlsx", selection, sources=[items], blind=False)
    words = _instructions(sheet)
    assert "not told" not in words and "The Stratum column shows" in words
    assert _design_field(sheet, "Blind labeling") == "no"
    assert read_labeling_workbook(sheet).design.blind is False


@pytest.mark.parametrize(
    ("population", "message"),
    [(3, "sample (12 items) is larger than its population (3)"), (1e308, "at most 10^15")],
    ids=["smaller than the sample", "beyond exact arithmetic"],
)
def test_an_edited_design_population_is_named_by_sheet_and_row(
    drawn, tmp_path, population, message
):
    _items, selection, sheet = drawn
    workbook = openpyxl.load_workbook(sheet)
    design = workbook["Design"]
    row = next(cells for cells in design.iter_rows() if cells[0].value == selection.primary.name)
    row[2].value = population  # the predicted-positive population
    edited = tmp_path / "edited.xlsx"
    workbook.save(edited)
    with pytest.raises(LabelingError, match=r"edited\.xlsx, sheet 'Design', row \d+: ") as refused:
        count_labels([read_labeling_workbook(edited)])
    assert message in str(refused.value)


@pytest.mark.parametrize(
    ("column", "field", "value"),
    [
        (2, None, 1),  # the predicted-positive population, one more
        (3, None, -1),  # the predicted-negative population, one less
        (1, "Item file SHA-256", "0" * 64),
        (1, "Id column", "item_id"),
    ],
    # (A changed seed or sample size is refused earlier, by the Sample sheet's keys and
    # ranks.)
    ids=["population", "negative population", "file sha", "id column"],
)
def test_a_design_changed_within_what_fits_is_refused(drawn, tmp_path, column, field, value):
    """Review 19: a population typed over in the unprotected Design sheet (still larger
    than the sample) changed every interval without a word. The sheet's check of the
    design is recomputed on reading back."""
    _items, selection, sheet = drawn
    fill(sheet, sheet, ["positive", "negative"])
    assert read_labeling_workbook(sheet).design.edited is False
    workbook = openpyxl.load_workbook(sheet)
    design = workbook["Design"]
    name = field or selection.primary.name
    row = next(cells for cells in design.iter_rows() if cells[0].value == name)
    if field is None:
        row[column].value = row[column].value + value
    else:
        row[column].value = value
    edited = tmp_path / "edited.xlsx"
    workbook.save(edited)
    with pytest.raises(LabelingError) as refused:
        read_labeling_workbook(edited)
    message = str(refused.value)
    assert message.startswith("edited.xlsx, sheet 'Design' was changed after the sample was drawn")
    assert "Use the workbook as PR Planner wrote it" in message


def test_clearing_the_design_check_does_not_switch_the_check_off(drawn, tmp_path):
    """Fuzz 21: with the check line emptied, a population typed over was read as an old
    workbook's. The hidden Sample sheet keeps a copy of the check."""
    _items, selection, sheet = drawn
    workbook = openpyxl.load_workbook(sheet)
    design = workbook["Design"]
    for cells in design.iter_rows():
        if cells[0].value == "Check of the design":
            cells[1].value = None
        if cells[0].value == selection.primary.name:
            cells[2].value = cells[2].value * 10
    edited = tmp_path / "edited.xlsx"
    workbook.save(edited)
    with pytest.raises(LabelingError, match="was changed after the sample was drawn"):
        read_labeling_workbook(edited)
    header = [cell.value for cell in workbook["Sample"][1]]
    assert header[-1].startswith("Check of the design: ")


def test_the_design_check_is_the_documented_digest(drawn):
    """The check is SHA-256 over the drawn facts joined by the unit separator, worked out
    here from the Design sheet's own cells."""
    *_, sheet = drawn
    workbook = openpyxl.load_workbook(sheet)
    fields = {row[0]: row[1] for row in workbook["Design"].iter_rows(values_only=True) if row[0]}
    table = [row for row in workbook["Design"].iter_rows(values_only=True) if row[0] == "predicted"]
    facts = [
        fields["Seed"],
        fields["Item file SHA-256"],
        fields["Id column"],
        str(fields["Items in this workbook"]),
        str(fields["Items drawn before (top-up)"]),
        *(str(value) for value in table[0]),
    ]
    expected = hashlib.sha256("\x1f".join(facts).encode()).hexdigest()[:16]
    assert fields["Check of the design"] == expected


def test_a_label_formula_without_a_saved_value_is_named(drawn, tmp_path):
    """openpyxl writes formulas without their values, as some tools do: such a label was
    counted as missing without a word."""
    _items, _selection, sheet = drawn
    workbook = openpyxl.load_workbook(sheet)
    labels = workbook["Labels"]
    header = [cell.value for cell in labels[1]]
    column = header.index("Label") + 1
    labels.cell(3, column).value = '=IF(1,"positive","negative")'
    labels.cell(2, column).value = "negative"
    edited = tmp_path / "formula.xlsx"
    workbook.save(edited)
    with pytest.raises(LabelingError, match=r"the Label cell of row\(s\) 3 holds a formula"):
        read_labeling_workbook(edited)


@pytest.mark.parametrize(("typed", "blind"), [("true", True), ("y", True), ("No", False)])
def test_a_hand_typed_blind_labeling_field_reads_as_before(drawn, tmp_path, typed, blind):
    """Only a value starting with "no" (as PR Planner writes for a one-stratum top-up)
    means the labelers saw the strata."""
    _items, _selection, sheet = drawn
    workbook = openpyxl.load_workbook(sheet)
    for name, value in workbook["Design"].iter_rows(max_col=2):
        if name.value == "Blind labeling":
            value.value = typed
    edited = tmp_path / "typed.xlsx"
    workbook.save(edited)
    assert read_labeling_workbook(edited).design.blind is blind


def test_a_note_under_the_design_table_is_no_classifier(drawn, tmp_path):
    # A note typed at Design!A30 blocked reading with "row 17: ... got None" (fuzz 11).
    _, selection, sheet = drawn
    labeled = tmp_path / "labeled.xlsx"
    given = fill(sheet, labeled, LABELS)
    workbook = openpyxl.load_workbook(labeled)
    design = workbook["Design"]
    design.protection.sheet = False
    design["A30"] = "Checked by Anna on Monday"
    workbook.save(tmp_path / "noted.xlsx")
    (labels,) = count_labels([read_labeling_workbook(tmp_path / "noted.xlsx")])
    assert as_counts(labels) == expected_counts(selection.items, given)
    # An emptied number of the table is named by its own row, in words.
    table_row = next(
        row for row in range(1, design.max_row + 1) if design.cell(row, 1).value == "predicted"
    )
    design.cell(table_row, 3).value = None
    workbook.save(tmp_path / "emptied.xlsx")
    with pytest.raises(LabelingError) as refused:
        read_labeling_workbook(tmp_path / "emptied.xlsx")
    message = str(refused.value)
    assert f"row {table_row}: population predicted positive" in message
    assert message.endswith("got an empty cell")


def test_a_further_classifiers_row_cleared_in_the_design_sheet_is_named(tmp_path):
    # Its row deleted from the Design table, the classifier silently vanished from the
    # counts (review 11); a note with a date beside it is still only a note.
    import datetime as dt

    items = make_items(tmp_path / "items.csv", classifiers=1)
    columns = ItemColumns(classifiers=("c0",))
    selection = select_sample(items, columns, n_pos=6, n_neg=8, seed=2)
    sheet = write_labeling_workbook(tmp_path / "round.xlsx", selection, sources=[items])
    workbook = openpyxl.load_workbook(sheet)
    design = workbook["Design"]
    design.protection.sheet = False
    design["A40"], design["B40"] = "Checked", dt.date(2026, 11, 20)
    workbook.save(tmp_path / "noted.xlsx")
    assert len(read_labeling_workbook(tmp_path / "noted.xlsx").design.designs) == 2
    for row in design.iter_rows():
        if row[0].value == "c0":
            for cell in row:
                cell.value = None
    workbook.save(tmp_path / "deleted.xlsx")
    with pytest.raises(LabelingError, match=r"drawn for classifier\(s\) 'c0' too"):
        read_labeling_workbook(tmp_path / "deleted.xlsx")


def test_a_workbook_of_many_label_sheet_copies_is_refused_early(drawn, tmp_path):
    from core.workbook.labeling import MAX_LABELS_SHEETS

    _, _, sheet = drawn
    labeled = tmp_path / "labeled.xlsx"
    fill(sheet, labeled, LABELS)
    workbook = openpyxl.load_workbook(labeled)
    for number in range(MAX_LABELS_SHEETS):
        workbook.copy_worksheet(workbook["Labels"]).title = f"Labels ({number + 2})"
    workbook.save(tmp_path / "copies.xlsx")
    with pytest.raises(LabelingError, match=f"more than {MAX_LABELS_SHEETS} sheets"):
        read_labeling_workbook(tmp_path / "copies.xlsx")


def test_a_design_seed_of_thousands_of_digits_is_refused_in_words(drawn, tmp_path):
    # int() of more than 4,300 digits raised ValueError: "internal error" (fuzz 14).
    _items, _selection, sheet = drawn
    workbook = openpyxl.load_workbook(sheet)
    design = workbook["Design"]
    row = next(cells for cells in design.iter_rows() if cells[0].value == "Seed")
    row[1].value = "9" * 5_000
    edited = tmp_path / "edited.xlsx"
    workbook.save(edited)
    with pytest.raises(InputError, match="at most 10\\^15, got one of 5,000 digits"):
        read_labeling_workbook(edited)
    row[1].value = "12345678901234567890"  # 20 digits: the Design sheet, not the Sample
    workbook.save(edited)
    with pytest.raises(InputError, match="at most 10\\^15, got one of 20 digits"):
        read_labeling_workbook(edited)


def test_an_id_longer_than_a_cell_holds_is_refused_before_writing(tmp_path):
    # Ids were cut to 32,767 characters: ids sharing a start became one, and the untouched
    # workbook was then refused as edited, the labelers' work lost (fuzz 14).
    items = tmp_path / "items.csv"
    long_ids = ["x" * 40_000 + str(index) for index in range(6)]
    items.write_text(
        "id,predicted\n" + "".join(f"{item},{index % 2}\n" for index, item in enumerate(long_ids))
    )
    selection = select_sample(items, n_pos=2, n_neg=2, seed=1)
    target = tmp_path / "round.xlsx"
    with pytest.raises(InputError, match="longer than the 32,767 characters a workbook cell"):
        write_labeling_workbook(target, selection, sources=[items])
    assert not target.exists()


def test_kept_values_that_are_plain_numbers_are_numbers_the_rest_text_as_written(tmp_path):
    # A reviewer sorting the kept "amount" column got 100 before 28.74: every kept value
    # was text (session 14, left alone). Numbers that read as written become numbers;
    # zip codes, "28.70", "1e5" and anything else stay text, exactly as in the list.
    import openpyxl

    from core.cli import main

    items = tmp_path / "items.csv"
    values = ["28.74", "100", "02139", "28.70", "1e5", "-3.5", "abc", "123456789012"]
    items.write_text(
        "id,predicted,amount\n"
        + "".join(f"i{n},{n % 2},{values[n % len(values)]}\n" for n in range(len(values) * 4))
    )
    sheet = tmp_path / "round.xlsx"
    assert main([
        "select", str(items), "--n-pos", "16", "--n-neg", "16", "--seed", "5",
        "--keep", "amount", "-o", str(sheet),
    ]) == 0  # fmt: skip
    labels = openpyxl.load_workbook(sheet).worksheets[0]
    header = [cell.value for cell in labels[1]]
    column = header.index("amount") + 1
    written = {labels.cell(row, column).value for row in range(2, labels.max_row + 1)}
    assert written == {28.74, 100, "02139", "28.70", "1e5", -3.5, "abc", "123456789012"}
    assert main(["labels", str(sheet)]) == 0  # reads back as drawn


def test_a_workbook_with_the_earlier_wording_of_the_rule_reads_as_ever(drawn, tmp_path):
    # The rule's text now names the Unicode spaces; the rule itself did not change.
    from core.selection import EARLIER_RULES

    _, selection, sheet = drawn
    workbook = openpyxl.load_workbook(sheet)
    for name, value in workbook["Design"].iter_rows(max_col=2):
        if name.value == "Rule":
            value.value = EARLIER_RULES[0]
    earlier = tmp_path / "earlier.xlsx"
    workbook.save(earlier)
    assert len(read_labeling_workbook(earlier).sample) == len(selection.items)


def test_a_workbook_with_a_long_repeated_kept_text_reads_back(tmp_path):
    # Fuzz 16: a kept column repeating a long disclaimer made a sheet part expand 451
    # times (9 MB from 20 KB): the labels of a workbook PR Planner wrote were refused as a
    # zip bomb, and the round could not be read or topped up.
    rows = [[f"b{i}", i % 2, f"ref {i} " + "-" * 30_000] for i in range(300)]
    items = tmp_path / "bodies.csv"
    with items.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["id", "predicted", "body"])
        writer.writerows(rows)
    selection = select_sample(items, ItemColumns(keep=("body",)), n_pos=75, n_neg=75, seed=1)
    sheet = write_labeling_workbook(tmp_path / "bodies.xlsx", selection, sources=[items])
    with zipfile.ZipFile(sheet) as archive:
        part = archive.getinfo("xl/worksheets/sheet1.xml")
    assert part.file_size > 4_000_000 and part.file_size / part.compress_size > 200
    labeled = tmp_path / "bodies labeled.xlsx"
    given = fill(sheet, labeled, LABELS)
    (labels,) = count_labels([read_labeling_workbook(labeled)])
    assert as_counts(labels) == expected_counts(selection.items, given)


@pytest.mark.parametrize("kept", ["predicted", "score"])
def test_keeping_the_prediction_for_blind_labelers_is_refused(tmp_path, kept):
    # Fuzz 16: --keep predicted showed every row's prediction while the Design sheet said
    # "Blind labeling: yes".
    rows = [[f"i{i}", i % 3 == 0, i / 100, f"s{i}"] for i in range(60)]
    items = tmp_path / "items.csv"
    with items.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["id", "predicted", "score", "subject"])
        writer.writerows([[a, int(b), c, d] for a, b, c, d in rows])
    columns = (
        ItemColumns(keep=(kept, "subject"))
        if kept == "predicted"
        else ItemColumns(score="score", threshold=0.5, keep=(kept,))
    )
    selection = select_sample(items, columns, n_pos=5, n_neg=5, seed=2)
    target = tmp_path / "round.xlsx"
    with pytest.raises(InputError, match=rf"'{kept}' would show the labelers each item's"):
        write_labeling_workbook(target, selection, sources=[items])
    assert not target.exists()
    write_labeling_workbook(target, selection, sources=[items], blind=False)  # shown: fine
    assert read_labeling_workbook(target).design.blind is False


def test_a_lone_dash_is_no_label(drawn, tmp_path):
    # Review 16: in a spreadsheet "-" often means "not judged"; read as negative it would
    # be a TN standing for many items.
    _, _, sheet = drawn
    labeled = tmp_path / "dashes.xlsx"
    fill(sheet, labeled, ["positive", "-"])
    with pytest.raises(LabelingError, match="not a label"):
        read_labeling_workbook(labeled)


def test_ids_with_tabs_around_them_round_trip_and_top_up(tmp_path):
    # The rule removes only spaces around an id; a tab is part of it, so its key is
    # SHA-256 of "seed:\tid". The reader stripped the tab and refused its own workbook.
    items = tmp_path / "items.csv"
    with items.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["id", "predicted"])
        for index in range(120):
            writer.writerow([f"\tt{index}\t", int(index % 4 == 0)])
    selection = select_sample(items, n_pos=5, n_neg=8, seed=4)
    assert all(item.id.startswith("\t") for item in selection.items)
    assert all(
        item.key == hashlib.sha256(f"4:{item.id}".encode()).hexdigest() for item in selection.items
    )
    sheet = write_labeling_workbook(tmp_path / "round.xlsx", selection, sources=[items])
    labeled = tmp_path / "labeled.xlsx"
    given = fill(sheet, labeled, ["positive", "negative"])
    (labels,) = count_labels([read_labeling_workbook(labeled)])
    assert as_counts(labels) == expected_counts(selection.items, given)
    earlier = read_labeling_workbook(sheet)
    assert {place.id for place in earlier.sample} == {item.id for item in selection.items}
    top = extend_sample(
        items, seed=4, previous_ids=[place.id for place in earlier.sample],
        previous_sizes={design.name: (5, 8) for design in selection.designs()}, n_pos=7, n_neg=10,
    )  # fmt: skip
    full = select_sample(items, n_pos=7, n_neg=10, seed=4)
    assert {item.id for item in top.items} == {item.id for item in full.items} - {
        item.id for item in selection.items
    }


def test_a_round_date_typed_in_another_form_is_named_not_dropped(tmp_path):
    import datetime as dt

    items = make_items(tmp_path / "items.csv")
    selection = select_sample(items, n_pos=3, n_neg=4, seed=8)
    sheet = write_labeling_workbook(
        tmp_path / "round.xlsx", selection, sources=[items], round_date=dt.date(2024, 3, 4)
    )
    assert read_labeling_workbook(sheet).design.round_date == dt.date(2024, 3, 4)
    for typed, expected in (
        ("04/03/2024", "'04/03/2024', which is not a date"),
        ("March", "'March', which is not a date"),
        # a week number in a date cell: the rounds reader would refuse the round (fuzz 19)
        (dt.datetime(1900, 2, 19), "1900-02-19, before 1970"),
        (dt.datetime(2024, 3, 5), None),  # a spreadsheet's own date cell
        (None, None),  # cleared: the day drawn
    ):
        workbook = openpyxl.load_workbook(sheet)
        for name, value in workbook["Design"].iter_rows(max_col=2):
            if name.value == "Round date":
                value.value = typed
        edited = tmp_path / "edited.xlsx"
        workbook.save(edited)
        if expected is None:
            read = read_labeling_workbook(edited).design.round_date
            assert read == (typed.date() if typed else None)
            continue
        with pytest.raises(LabelingError) as refused:
            read_labeling_workbook(edited)
        assert f"sheet 'Design': the 'Round date' line holds {expected}" in str(refused.value)
        assert "(2026-04-03)" in str(refused.value)


def test_every_row_of_the_labelers_sheet_has_its_styles(drawn):
    # The styles are copied down from the first row (a style set per cell was half the
    # time of writing 100,000 items): every row must still have them.
    _, selection, sheet = drawn
    labels = openpyxl.load_workbook(sheet)["Labels"]
    header = [cell.value for cell in labels[1]]
    id_column, label_column = header.index("Item id"), header.index("Label")
    subject_column = header.index("subject")
    rows = list(labels.iter_rows(min_row=2, max_row=len(selection.items) + 1))
    assert len(rows) == len(selection.items) > 2
    for row in rows:
        assert (row[0].alignment.horizontal, row[0].alignment.vertical) == ("center", "top")
        assert row[id_column].number_format == "@"
        assert (row[id_column].alignment.horizontal, row[id_column].alignment.indent) == (
            "left", 1,
        )  # fmt: skip
        assert row[label_column].fill.fgColor.rgb == "00FFF2CC"
        assert row[subject_column].alignment.wrap_text


def test_a_note_below_the_last_item_is_told_apart_from_a_deleted_id(drawn, tmp_path):
    # Trial 18: "All done - Eva" two rows under the list was refused with "put the id back".
    def note(labels):
        labels.cell(labels.max_row + 2, 6).value = "All done - Eva, 24.3."

    with pytest.raises(LabelingError, match=r"row\(s\) 33, below the last item, hold text"):
        read_labeling_workbook(edit(drawn[2], tmp_path / "note.xlsx", note))

    def deleted(labels):
        label = [cell.value for cell in labels[1]].index("Label") + 1
        labels.cell(5, 2).value = None
        labels.cell(5, label).value = "positive"

    with pytest.raises(LabelingError, match=r"row\(s\) 5 have a label or comment but no item id"):
        read_labeling_workbook(edit(drawn[2], tmp_path / "deleted.xlsx", deleted))

    def last_deleted(labels):  # the last item's id cleared, its label kept (review 18)
        label = [cell.value for cell in labels[1]].index("Label") + 1
        labels.cell(labels.max_row, 2).value = None
        labels.cell(labels.max_row, label).value = "positive"

    with pytest.raises(LabelingError, match=r"row\(s\) 31 have a label or comment but no item"):
        read_labeling_workbook(edit(drawn[2], tmp_path / "last.xlsx", last_deleted))


def test_another_months_workbook_is_not_merged_into_this_round(tmp_path):
    # Fuzz 18: a seed reused every month draws overlapping samples from lists that keep
    # their ids; last month's labels filled this month's empty cells without a word.
    february = make_items(tmp_path / "items_feb.csv", seed=1)
    march = make_items(tmp_path / "items_mar.csv", seed=2)  # the same ids, other flags
    books = {}
    for name, items in (("feb", february), ("mar", march)):
        selection = select_sample(items, n_pos=12, n_neg=18, seed=7)
        books[name] = write_labeling_workbook(tmp_path / f"{name}.xlsx", selection)
    fill(books["feb"], tmp_path / "feb labeled.xlsx", ("positive", "negative"))
    fill(books["mar"], tmp_path / "mar half.xlsx", ("negative", None))
    feb = read_labeling_workbook(tmp_path / "feb labeled.xlsx")
    mar = read_labeling_workbook(tmp_path / "mar half.xlsx")
    assert {item.id for item in feb.items} & {item.id for item in mar.items}  # overlap
    for order in ((mar, feb), (feb, mar)):
        with pytest.raises(LabelingError, match="is not a copy or an earlier draw of the round"):
            count_labels(order)
    # Same sample, another list (every id in both): a copy only in name.
    same = make_items(tmp_path / "items_same.csv", seed=1)
    with same.open("a", encoding="utf-8") as stream:
        stream.write("999999,0,late row\n")
    selection = select_sample(same, n_pos=12, n_neg=18, seed=7)
    later = write_labeling_workbook(tmp_path / "feb again.xlsx", selection)
    assert {p.id for p in read_labeling_workbook(later).sample} == {p.id for p in feb.sample}
    with pytest.raises(LabelingError, match="it was drawn from another item list"):
        count_labels([feb, read_labeling_workbook(later)])
    # A real top-up of the round is still read with its first draw.
    extended = extend_sample(
        february,
        seed=7,
        previous_ids=[item.id for item in feb.items],
        previous_sizes={feb.design.designs[0].name: (12, 18)},
        n_pos=14,
        n_neg=20,
    )
    top_up = write_labeling_workbook(tmp_path / "feb more.xlsx", extended)
    fill(top_up, tmp_path / "feb more labeled.xlsx", ("negative",))
    (labels,) = count_labels([feb, read_labeling_workbook(tmp_path / "feb more labeled.xlsx")])
    assert labels.labeled_pos + labels.labeled_neg + labels.skipped == 34


def test_a_bad_word_on_a_labelers_copy_sheet_is_named_by_that_sheets_cell(drawn, tmp_path):
    # Fuzz 18: a copy sheet with a row inserted at the top had 'Pos.' in D11; the message
    # named 'Labels'!D10, an empty cell.
    from openpyxl.utils import get_column_letter

    _, _selection, sheet = drawn
    workbook = openpyxl.load_workbook(sheet)
    original = workbook["Labels"]
    label = [c.value for c in original[1]].index("Label") + 1
    original.cell(2, label).value = "positive"  # the original holds more labels
    original.cell(3, label).value = "negative"
    copy = workbook.copy_worksheet(original)
    copy.title = "Second labeler"
    copy.insert_rows(1)
    copy.cell(1, 1).value = "Ben's half"
    for row in range(3, copy.max_row + 1):
        copy.cell(row, label).value = None
    copy.cell(11, label).value = "Pos."
    item = copy.cell(11, 2).value
    broken = tmp_path / "copy sheet.xlsx"
    workbook.save(broken)
    with pytest.raises(LabelingError) as caught:
        read_labeling_workbook(broken)
    message = str(caught.value)
    assert (
        f"sheet 'Second labeler', cell {get_column_letter(label)}11 'Pos.' (item {item!r})"
        in message
    )
    assert "'Labels'" not in message


def test_ids_excel_turned_into_dates_are_named_as_such(drawn, tmp_path):
    # Fuzz 18: ids such as 7-31 that Excel read as dates were "not in the sample (added or
    # edited): '2026-07-31T00:00:00'" and the same ids "missing", with no word of the cause.
    import datetime as dt

    def to_dates(labels):
        for row in (2, 3, 4):
            labels.cell(row, 2).value = dt.datetime(2026, 7, row)

    with pytest.raises(LabelingError) as caught:
        read_labeling_workbook(edit(drawn[2], tmp_path / "dated.xlsx", to_dates))
    message = str(caught.value)
    assert "3 item id(s) are dates, not the text PR Planner wrote" in message
    assert "read ids such as 7-31 as dates" in message


def test_a_renamed_label_header_is_named_in_a_labeling_workbook(drawn, tmp_path):
    # Fuzz 18: "no sheet has a header row ...; is this a labeling workbook?" asked the lead
    # what they knew.
    def rename(labels):
        column = [cell.value for cell in labels[1]].index("Label") + 1
        labels.cell(1, column).value = "Label (positive/negative)"

    with pytest.raises(LabelingError) as caught:
        read_labeling_workbook(edit(drawn[2], tmp_path / "renamed.xlsx", rename))
    message = str(caught.value)
    assert "is a labeling workbook (its Design and Sample sheets are there)" in message
    assert "Put the headers back as PR Planner wrote them" in message
    assert "is this a labeling workbook" not in message


def test_last_months_smaller_sample_inside_this_months_is_not_an_earlier_draw(tmp_path):
    # Review 18: March's list kept February's items and added 20; drawn larger with the same
    # seed, March's sample held all of February's, which passed as an earlier draw.
    import shutil

    february = make_items(tmp_path / "items_feb.csv", seed=1)
    march = tmp_path / "items_mar.csv"
    shutil.copy(february, march)
    with march.open("a", encoding="utf-8") as stream:
        stream.writelines(f"9{n:05d},0,new row\n" for n in range(20))
    feb = write_labeling_workbook(
        tmp_path / "feb.xlsx", select_sample(february, n_pos=12, n_neg=18, seed=7)
    )
    mar = write_labeling_workbook(
        tmp_path / "mar.xlsx", select_sample(march, n_pos=20, n_neg=30, seed=7)
    )
    fill(feb, tmp_path / "feb labeled.xlsx", ("positive", "negative"))
    fill(mar, tmp_path / "mar half.xlsx", (None,))
    feb_book = read_labeling_workbook(tmp_path / "feb labeled.xlsx")
    mar_book = read_labeling_workbook(tmp_path / "mar half.xlsx")
    # The hard case: every one of February's items lies inside March's sample.
    assert {p.id for p in feb_book.sample} <= {p.id for p in mar_book.sample}
    with pytest.raises(LabelingError, match="not among that round's items drawn before it"):
        count_labels([mar_book, feb_book])


def test_an_id_retyped_with_its_accent_encoded_otherwise_is_named_as_such(tmp_path):
    """Fuzz 21: "café50" retyped as "cafe" and a combining accent was listed both as not
    in the sample and as missing from it, two ids the lead could not tell apart."""
    import unicodedata

    items = tmp_path / "items.csv"
    rows = [f"café{n},{int(n % 4 == 0)}" for n in range(40)]
    items.write_text("id,predicted\n" + "\n".join(rows) + "\n", encoding="utf-8")
    selection = select_sample(items, n_pos=4, n_neg=6, seed=3)
    sheet = write_labeling_workbook(tmp_path / "round.xlsx", selection, sources=[items])
    workbook = openpyxl.load_workbook(sheet)
    labels = workbook["Labels"]
    column = [cell.value for cell in labels[1]].index("Item id") + 1
    original = labels.cell(2, column).value
    labels.cell(2, column).value = unicodedata.normalize("NFD", original)
    edited = tmp_path / "edited.xlsx"
    workbook.save(edited)
    with pytest.raises(LabelingError) as refused:
        read_labeling_workbook(edited)
    assert (
        f"(row 2) looks like the sample's {original!r} but encodes an accented letter "
        "differently" in str(refused.value)
    )


@pytest.mark.parametrize("name", ["spam\r\nfilter", "spam\rfilter", "spam ", "sécurité"])
def test_an_untouched_workbook_passes_its_design_check_whatever_the_column_names(tmp_path, name):
    """Review 21: a classifier column named with a CR LF (the reader turns it into LF)
    failed its own check, and the lead was told the Design sheet had been edited."""
    items = make_items(tmp_path / "items.csv", classifiers=1)
    text = items.read_text(encoding="utf-8").replace(",c0,", f',"{name}",', 1)
    items.write_text(text, encoding="utf-8", newline="")
    selection = select_sample(items, ItemColumns(classifiers=(name,)), n_pos=12, n_neg=18, seed=77)
    sheet = write_labeling_workbook(tmp_path / "round.xlsx", selection, sources=[items])
    assert read_labeling_workbook(sheet).design.edited is False
