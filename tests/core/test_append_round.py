"""Adding a round to the lead's rounds workbook: one new row, every other part untouched."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import re
import zipfile

import openpyxl
import pytest

from core.errors import InputError
from core.workbook.append_round import (
    AlreadyRecorded,
    NewRound,
    append_round,
    append_rounds,
    lock_file_of,
)
from core.workbook.rounds import read_rounds
from core.workbook.safe_io import SaveError, fingerprint

ROUND = NewRound(
    round="TR-07",
    date=dt.date(2026, 4, 6),
    classifier="travel",
    population_pos=45_000,
    population_neg=1_250_000,
    tp=140,
    fp=30,
    fn=95,
    tn=4_600,
    notes="drawn with seed 7",
)


@pytest.fixture
def simple(tmp_path, shared_fixtures):
    path = tmp_path / "rounds.xlsx"
    path.write_bytes((shared_fixtures / "rounds_simple.xlsx").read_bytes())
    return path


@pytest.fixture
def messy(tmp_path, shared_fixtures):
    path = tmp_path / "messy.xlsx"
    path.write_bytes((shared_fixtures / "rounds_messy.xlsx").read_bytes())
    return path


def members(path):
    with zipfile.ZipFile(path) as archive:
        return [
            (info.filename, info.date_time, info.compress_type, info.external_attr,
             archive.read(info))
            for info in archive.infolist()
        ]  # fmt: skip


def test_every_other_part_is_byte_identical(simple):
    before = members(simple)
    appended = append_round(simple, ROUND)
    after = members(simple)
    assert [item[0] for item in after] == [item[0] for item in before]  # same parts, same order
    changed = [old[0] for old, new in zip(before, after, strict=True) if old != new]
    assert changed == ["xl/worksheets/sheet1.xml"]
    assert (appended.sheet, appended.row) == ("Rounds", 12)
    old_xml = dict((item[0], item[4]) for item in before)[changed[0]]
    new_xml = dict((item[0], item[4]) for item in after)[changed[0]]
    # the sheet part only gained the row (and a wider dimension)
    start = new_xml.index(b'<row r="12"')
    end = new_xml.index(b"</row>", start) + len(b"</row>")
    assert new_xml[:start] + new_xml[end:] == old_xml.replace(
        b'<dimension ref="A1:K11"/>', b'<dimension ref="A1:K12"/>'
    )


def test_the_new_round_reads_back_with_its_values(simple):
    append_round(simple, ROUND)
    book = read_rounds(simple)
    assert not book.refused
    last = book.rounds[-1]
    assert (last.row, last.round, last.classifier, last.date) == (
        12, "TR-07", "travel", dt.date(2026, 4, 6),
    )  # fmt: skip
    assert (last.tp, last.fp, last.fn, last.tn) == (140, 30, 95, 4600)
    assert (last.population_pos, last.population_neg) == (45_000, 1_250_000)
    assert last.s == round((170 / 4695) / (45_000 / 1_250_000), 3)  # as a lead types it
    assert last.notes == "drawn with seed 7"
    # the date is a real date cell styled like the dates above it
    sheet = openpyxl.load_workbook(simple)["Rounds"]
    assert sheet["B12"].value == dt.datetime(2026, 4, 6)
    assert sheet["B12"].number_format == sheet["B11"].number_format
    assert [sheet.cell(row, 1).value for row in range(2, 12)] == [
        round_.round for round_ in book.rounds[:-1]
    ]


def test_a_sheet_of_k_gets_k(messy):
    finance = NewRound(
        round="FI-05", population_pos=60_000, population_neg=1_250_000, tp=250, fp=60, fn=80,
        tn=4300, classifier="finance",
    )  # fmt: skip
    appended = append_round(messy, finance)
    assert appended.sheet == "finance"
    book = read_rounds(messy)
    last = [item for item in book.rounds if item.sheet == "finance"][-1]
    assert last.round == "FI-05" and last.k == pytest.approx(60_000 / 1_250_000)
    assert last.population_pos is None  # that sheet has no population columns
    assert len(book.refused) == 3  # the messy sheet's own refusals, unchanged


def test_several_sheets_need_a_choice(messy):
    before = messy.read_bytes()
    anonymous = NewRound(population_pos=10, population_neg=100, tp=1, fp=1, fn=1, tn=1)
    with pytest.raises(Exception, match="several sheets") as caught:
        append_round(messy, anonymous)
    assert "'travel'" in str(caught.value) and "`sheet`" in str(caught.value)
    with pytest.raises(Exception, match="no sheet 'nope'"):
        append_round(messy, anonymous, sheet="nope")
    assert messy.read_bytes() == before
    # Sheet travel ends with a Total row: a round below it would miss its sums.
    with pytest.raises(Exception, match="row 14 totals the rounds above it"):
        append_round(messy, anonymous, sheet="travel")
    assert messy.read_bytes() == before
    last_row = openpyxl.load_workbook(messy)["finance"].max_row
    appended = append_round(messy, anonymous, sheet="finance")
    assert appended.row == last_row + 1


@pytest.mark.parametrize("lock_name", ["~$rounds.xlsx", "~$unds.xlsx", ".~lock.rounds.xlsx#"])
def test_an_open_workbook_is_refused(simple, lock_name):
    (simple.parent / lock_name).write_text("owner")
    assert lock_file_of(simple) == simple.parent / lock_name
    before = simple.read_bytes()
    with pytest.raises(SaveError, match="open in another program"):
        append_round(simple, ROUND)
    assert simple.read_bytes() == before


def test_a_workbook_changed_since_it_was_read_is_refused(simple):
    seen = fingerprint(simple)
    workbook = openpyxl.load_workbook(simple)
    workbook["Rounds"]["L1"] = "edited elsewhere"
    workbook.save(simple)
    changed = simple.read_bytes()
    with pytest.raises(SaveError, match="changed on disk"):
        append_round(simple, ROUND, expected=seen)
    assert simple.read_bytes() == changed


def test_the_labeling_workbook_itself_is_not_a_target(simple):
    with pytest.raises(SaveError, match="it is a file read here as input"):
        append_round(simple, ROUND, sources=[simple])


def test_a_workbook_without_rounds_is_refused(tmp_path):
    path = tmp_path / "notes.xlsx"
    workbook = openpyxl.Workbook()
    workbook.active.append(["just", "notes"])
    workbook.save(path)
    with pytest.raises(Exception, match="no sheet with a header row"):
        append_round(path, ROUND)


def _rounds_sheet(path, header, rows, title="Travel", below=()):
    """A lead's own rounds sheet: ``header``, ``rows``, and ``(row, values)`` further down."""
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = title
    for values in (header, *rows):
        sheet.append(values)
    for row, values in below:
        for column, value in enumerate(values, start=1):
            sheet.cell(row, column).value = value
    workbook.save(path)
    return path


def refusal_of(path, new_round=ROUND) -> str:
    """The message of ``append_round`` refusing ``new_round``, the file left unchanged."""
    before = path.read_bytes()
    with pytest.raises(InputError) as refused:
        append_round(path, new_round)
    assert path.read_bytes() == before
    return str(refused.value)


def _own_workbook(path, below=()):
    """A lead's sheet of two rounds, with ``(row, values)`` further down."""
    return _rounds_sheet(
        path,
        ["Round", "k", "TP", "FP", "FN", "TN"],
        [["R1", 0.05, 10, 2, 3, 40], ["R2", 0.05, 11, 1, 2, 41]],
        below=below,
    )


def test_an_openpyxl_workbook_with_a_sum_row(tmp_path):
    path = _own_workbook(tmp_path / "own.xlsx")
    appended = append_round(path, ROUND)
    assert appended.row == 4
    book = read_rounds(path)
    assert [item.round for item in book.rounds] == ["R1", "R2", "TR-07"]
    assert book.rounds[-1].k == pytest.approx(45_000 / 1_250_000)


def test_a_totals_row_below_the_rounds_is_not_left_to_miss_the_new_round(tmp_path):
    # Before, the round went below "Total =SUM(...)", which then left it out.

    path = _own_workbook(
        tmp_path / "own.xlsx", [(4, ["Total", None, "=SUM(C2:C3)", "=SUM(D2:D3)"])]
    )
    message = refusal_of(path)
    assert "row 4 totals the rounds above it" in message and "Nothing was written" in message
    # Done as the message says (a free row above the widened totals): the round goes there.
    done = _own_workbook(
        tmp_path / "moved.xlsx", [(5, ["Total", None, "=SUM(C2:C4)", "=SUM(D2:D4)"])]
    )
    assert append_round(done, ROUND).row == 4
    assert openpyxl.load_workbook(done)["Travel"]["A5"].value == "Total"
    # Moved down a row but its sums not widened: the round in the free row would be left
    # out of them, so it is refused as well (hostile-input trial 12).
    gap = _own_workbook(
        tmp_path / "gap.xlsx", [(5, ["Total", None, "=SUM(C2:C3)", "=SUM(D$2:D$3)"])]
    )
    message = refusal_of(gap)
    assert "row 5 totals the rounds above it" in message
    assert "Widen them to cover row 4" in message
    # A range of another sheet in the totals row is not its sums.
    other = _own_workbook(
        tmp_path / "other.xlsx",
        [(5, ["Total", None, "=SUM(C2:C4)", "=SUM(D2:D4)+Notes!B1:B2"])],
    )
    assert append_round(other, ROUND).row == 4


def test_a_note_further_down_stays_and_the_round_goes_right_below_the_last(tmp_path):
    # Before, a note in row 20 put the round in row 21, sixteen empty rows down.
    path = _own_workbook(tmp_path / "own.xlsx", [(20, ["Counts checked by Anna"])])
    appended = append_round(path, ROUND)
    assert appended.row == 4
    sheet = openpyxl.load_workbook(path)["Travel"]
    assert sheet["A4"].value == "TR-07" and sheet["A20"].value == "Counts checked by Anna"
    assert [item.round for item in read_rounds(path).rounds] == ["R1", "R2", "TR-07"]


def test_a_formatted_empty_row_below_the_rounds_takes_the_round(tmp_path):
    path = _own_workbook(tmp_path / "own.xlsx", [(9, ["note"])])
    workbook = openpyxl.load_workbook(path)
    sheet = workbook["Travel"]
    for row in range(4, 8):  # borders drawn ahead for rounds to come
        sheet.cell(row, 1).border = openpyxl.styles.Border(bottom=openpyxl.styles.Side("thin"))
    workbook.save(path)
    appended = append_round(path, ROUND)
    assert appended.row == 4
    sheet = openpyxl.load_workbook(path)["Travel"]
    assert sheet["A4"].value == "TR-07" and sheet["A9"].value == "note"
    assert sheet["A5"].border.bottom.style == "thin"


def test_a_new_rounds_workbook_keeps_a_name_that_starts_like_a_formula(tmp_path):
    import openpyxl

    from core.workbook.append_round import NewRound, start_rounds_workbook
    from core.workbook.rounds import read_rounds

    path = tmp_path / "rounds.xlsx"
    start_rounds_workbook(
        path,
        [NewRound(round="=R1", date=None, classifier="=travel", population_pos=100,
                  population_neg=900, tp=8, fp=2, fn=3, tn=87, notes="n")],
    )  # fmt: skip
    cells = [cell for row in openpyxl.load_workbook(path)["Rounds"].iter_rows() for cell in row]
    assert all(cell.data_type != "f" for cell in cells)
    (item,) = read_rounds(path).rounds
    assert (item.round, item.classifier) == ("=R1", "=travel")


def test_a_started_rounds_workbook_prints_one_page_wide_with_its_notes_wrapped(tmp_path):
    # In LibreOffice its long notes ran on over five pages across (session 16).
    import openpyxl

    from core.workbook.append_round import NewRound, start_rounds_workbook

    path = tmp_path / "rounds.xlsx"
    notes = "PR Planner labeling round: seed 5, items from items.csv; " * 3
    started = start_rounds_workbook(
        path,
        [NewRound(round="mar", date=None, classifier=name, population_pos=100,
                  population_neg=900, tp=8, fp=2, fn=3, tn=87, notes=notes)
         for name in ("fraud_v3", "rules")],
    )  # fmt: skip
    assert [(item.row, item.classifier) for item in started] == [(2, "fraud_v3"), (3, "rules")]
    sheet = openpyxl.load_workbook(path)["Rounds"]
    assert sheet.page_setup.fitToWidth == 1 and sheet.sheet_properties.pageSetUpPr.fitToPage
    assert sheet["K2"].alignment.wrap_text and sheet.row_dimensions[2].height >= 45


def test_a_classifier_is_filed_as_the_workbook_spells_it(tmp_path):
    # LibreOffice's autocorrect wrote "Travel"; labels files "travel": one history, not two.
    path = _rounds_sheet(
        tmp_path / "own.xlsx",
        ["Round", "Classifier", "k", "TP", "FP", "FN", "TN"],
        [["R1", "Travel", 0.05, 10, 2, 3, 40], ["R2", "Finance", 0.05, 11, 1, 2, 41]],
    )
    appended = append_round(path, ROUND)  # classifier "travel"
    assert appended.classifier == "Travel"
    assert [item.classifier for item in read_rounds(path).rounds] == ["Travel", "Finance", "Travel"]


def test_a_read_only_rounds_workbook_is_never_answered_with_another_name(simple):
    # Another name would start a rounds workbook without the history (fuzz 11).
    simple.chmod(0o444)
    try:
        with pytest.raises(SaveError) as refused:
            append_round(simple, ROUND)
    finally:
        simple.chmod(0o644)
    message = str(refused.value)
    assert "is read-only; the round was not added" in message
    assert "Make the file writable" in message and "another name" not in message


def test_a_sheet_without_population_columns_says_so_and_how_to_head_them(tmp_path):
    # "Flagged" / "Not flagged" headers: the sheet has the counts, not the population
    # columns under names PR Planner knows (trial 11b).
    path = _rounds_sheet(
        tmp_path / "own.xlsx",
        ["Round", "Flagged", "Not flagged", "TP", "FP", "FN", "TN"],
        [["S1", 900, 49_100, 180, 30, 40, 8_000]],
        title="Spam",
    )
    before = path.read_bytes()
    with pytest.raises(InputError) as refused:
        append_round(path, ROUND)
    message = str(refused.value)
    assert "sheet 'Spam'" in message and "neither a k column nor both population" in message
    assert "'Flagged', 'Not flagged'" in message
    assert "'Predicted positive (population)'" in message
    assert path.read_bytes() == before


def test_a_workbook_reached_through_a_symbolic_link_gets_the_round(simple):
    # The link was replaced by a new file and the lead's workbook never got the round
    # (hostile-input trial 12).
    link = simple.parent / "latest rounds.xlsx"
    link.symlink_to(simple.name)
    before = len(read_rounds(simple).rounds)
    append_round(link, ROUND)
    assert link.is_symlink() and link.resolve() == simple.resolve()
    assert len(read_rounds(simple).rounds) == before + 1
    assert read_rounds(simple).rounds[-1].round == "TR-07"


def test_a_workbook_with_another_hard_link_is_refused_unchanged(simple):
    other = simple.parent / "backup copy.xlsx"
    os.link(simple, other)
    content = simple.read_bytes()
    with pytest.raises(SaveError, match=r"has 2 names on this disk \(hard links\)"):
        append_round(simple, ROUND)
    assert simple.read_bytes() == content == other.read_bytes()
    assert os.stat(simple).st_nlink == 2


@pytest.mark.parametrize("field", ["round", "classifier", "notes"])
def test_a_text_longer_than_a_cell_holds_is_refused(simple, field):
    # Written as is, Excel would repair the workbook (hostile-input trial 12).
    from dataclasses import replace

    before = simple.read_bytes()
    with pytest.raises(InputError, match=r"is 32,768 characters long; a spreadsheet cell holds"):
        append_round(simple, replace(ROUND, **{field: "x" * 32_768}))
    assert simple.read_bytes() == before
    replace(ROUND, **{field: "x" * 32_767})  # the longest a cell holds is fine


def test_a_header_naming_a_count_twice_is_named_not_asked_for(tmp_path):
    # "add such a header" although the header was there, with TP typed twice (trial 12).

    path = tmp_path / "rounds.xlsx"
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Rounds"
    sheet.append(["Round", "Predicted positive (population)", "Predicted negative (population)",
                  "TP", "TP", "FN", "TN"])  # fmt: skip
    sheet.append(["R1", 40_000, 1_200_000, 100, 20, 30, 4_000])
    workbook.save(path)
    message = refusal_of(path)
    assert "no column is headed FP; TP heads columns D and E" in message
    assert "fix the header" in message


def test_a_blank_name_and_a_labeling_workbook_as_the_rounds_workbook_are_refused(simple, tmp_path):
    # "   " was written as the round's name; a labeling workbook given as the rounds
    # workbook was asked for "such a header" (hostile-input trial 12).
    from dataclasses import replace

    from core.workbook.labeling import DESIGN_SHEET, SAMPLE_SHEET

    with pytest.raises(InputError, match=r"the round's name .* is blank"):
        append_round(simple, replace(ROUND, round="   "))
    labeling = tmp_path / "round1.xlsx"
    workbook = openpyxl.Workbook()
    workbook.active.title = "Labels"
    workbook.create_sheet(DESIGN_SHEET)
    workbook.create_sheet(SAMPLE_SHEET)
    workbook.save(labeling)
    message = refusal_of(labeling)
    assert "is a labeling workbook" in message and "not a rounds workbook" in message


def test_the_round_goes_below_rows_the_reader_could_not_use_into_the_free_row(tmp_path):
    # The lead's typo rows (TR-07, TR-08) sit under the rounds; the empty row they left
    # above their widened totals was passed over, and the round refused (trial 12).
    path = _own_workbook(
        tmp_path / "own.xlsx",
        [
            (4, ["R-typo", 0.05, -3, 10, 20, 300]),  # a negative TP: refused
            (6, ["Total", None, "=SUM(C2:C5)", "=SUM(D2:D5)"]),
        ],
    )
    appended = append_round(path, ROUND)
    assert appended.row == 5
    sheet = openpyxl.load_workbook(path)["Travel"]
    assert sheet["A4"].value == "R-typo" and sheet["A5"].value == "TR-07"
    assert sheet["A6"].value == "Total"


@pytest.mark.parametrize("kind", ["table", "filter"])
def test_a_table_or_filter_ending_above_the_new_row_takes_it_in(tmp_path, kind):
    # "Format as Table": the round landed outside the table, its filters and structured
    # references (hostile-input trial 12). Excel grows a table when a row is typed below.
    from openpyxl.worksheet.table import Table

    path = _own_workbook(tmp_path / "own.xlsx")
    workbook = openpyxl.load_workbook(path)
    sheet = workbook["Travel"]
    if kind == "table":
        sheet.add_table(Table(displayName="Rounds", ref="A1:F3"))
    else:
        sheet.auto_filter.ref = "A1:F3"
    workbook.save(path)
    before = {name: data for name, *_, data in members(path)}
    assert append_round(path, ROUND).row == 4
    after = openpyxl.load_workbook(path)["Travel"]
    if kind == "table":
        assert after.tables["Rounds"].ref == "A1:F4"
    else:
        assert after.auto_filter.ref == "A1:F4"
    changed = {name for name, *_, data in members(path) if before.get(name) != data}
    assert changed == {"xl/worksheets/sheet1.xml"} | (
        {"xl/tables/table1.xml"} if kind == "table" else set()
    )


def test_a_workbook_in_the_1904_date_system_gets_the_date_in_its_own_system(tmp_path):
    # Serials from 1899-12-30 in a 1904-system workbook put the round four years and a day
    # later (2030-11-27 for 2026-11-26), the latest round everywhere (fuzz 13).
    from openpyxl.utils.datetime import CALENDAR_MAC_1904

    path = tmp_path / "mac rounds.xlsx"
    workbook = openpyxl.Workbook()
    workbook.epoch = CALENDAR_MAC_1904
    sheet = workbook.active
    sheet.title = "Rounds"
    sheet.append(["Round", "Date", "Classifier", "Predicted positive", "Predicted negative",
                  "TP", "FP", "FN", "TN"])  # fmt: skip
    sheet.append(["R0", dt.date(2025, 1, 15), "travel", 496, 4504, 20, 30, 20, 80])
    sheet["B2"].number_format = "yyyy-mm-dd"
    workbook.save(path)
    with zipfile.ZipFile(path) as archive:
        assert b'date1904="1"' in archive.read("xl/workbook.xml")
    append_round(path, ROUND)
    assert read_rounds(path).rounds[-1].date == dt.date(2026, 4, 6)
    # The serial itself, counted by hand from 1904-01-01 (openpyxl agrees).
    with zipfile.ZipFile(path) as archive:
        sheet_xml = archive.read("xl/worksheets/sheet1.xml")
    serial = (dt.date(2026, 4, 6) - dt.date(1904, 1, 1)).days
    assert b'r="B3"' in sheet_xml and b"<v>%d</v>" % serial in sheet_xml
    assert openpyxl.load_workbook(path)["Rounds"]["B3"].value == dt.datetime(2026, 4, 6)


@pytest.mark.parametrize("text", ["R\ufffe9", "R\udcfe9", "R\x019"])
def test_a_name_a_workbook_cannot_store_is_refused_before_anything_is_written(text):
    # A lone surrogate (a byte that is not UTF-8, from a command line) failed as an
    # "internal error"; U+FFFE made the temporary file unreadable and was blamed on it.
    import dataclasses

    with pytest.raises(InputError, match="cannot store"):
        dataclasses.replace(ROUND, round=text)
    with pytest.raises(InputError, match="cannot store"):
        dataclasses.replace(ROUND, notes=f"seed 7 {text}")


def test_a_new_copy_that_does_not_read_back_is_not_named_by_its_temporary_file(simple, monkeypatch):
    # The error named ".rounds.xlsx.prplanner-z6i0g_vl.tmp", a file already gone, as
    # damaged (fuzz 13).
    import core.workbook.append_round as append_module
    from core.workbook.xlsx_reader import WorkbookError

    real = append_module.read_rounds

    def damaged_copy(path, *args, **kwargs):
        if str(path).endswith(".tmp"):
            raise WorkbookError(
                f"{path} is damaged: part xl/worksheets/sheet1.xml is not XML; open it in "
                "Excel or LibreOffice to repair it"
            )
        return real(path, *args, **kwargs)

    monkeypatch.setattr(append_module, "read_rounds", damaged_copy)
    before = simple.read_bytes()
    with pytest.raises(SaveError) as caught:
        append_round(simple, ROUND)
    message = str(caught.value)
    assert ".tmp" not in message and "the new copy is damaged" in message
    assert "repair" not in message and "Your workbook is unchanged" in message
    assert message.startswith(f"the round could not be added to {simple.name} safely")
    assert simple.read_bytes() == before


def test_rows_written_with_single_quotes_are_refused_naming_the_file_and_the_remedy(simple):
    # Valid XML that Excel and LibreOffice never write: the refusal named no file and said
    # the rows had no number (fuzz 13).
    rewrite = simple.with_name("quoted.xlsx")
    with zipfile.ZipFile(simple) as source, zipfile.ZipFile(rewrite, "w") as target:
        for member in source.infolist():
            data = source.read(member)
            if member.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(b'<row r="', b"<row r='").replace(b'" spans=', b"' spans=")
                data = re.sub(rb"<row r='(\d+)\"", rb"<row r='\1'", data)
            target.writestr(member, data)
    before = rewrite.read_bytes()
    with pytest.raises(InputError) as caught:
        append_round(rewrite, ROUND)
    message = str(caught.value)
    assert message.startswith("quoted.xlsx, sheet 'Rounds': the rounds sheet was written by")
    assert "save it, and add the round again. Nothing was written" in message
    assert rewrite.read_bytes() == before


@pytest.mark.parametrize("text", ["R\n9", "R\t9", "R\u20289", "R\u202e9"])
def test_a_name_on_several_lines_or_reversed_is_refused(text):
    # --round and --classifier took tabs, line breaks and a right-to-left override into the
    # lead's workbook (fuzz 13b); notes may hold line breaks.
    import dataclasses

    for field in ("round", "classifier"):
        with pytest.raises(InputError, match="a name is one line of plain text"):
            dataclasses.replace(ROUND, **{field: text})
    assert dataclasses.replace(ROUND, notes="line one\nline two").notes == "line one\nline two"


def test_a_workbook_in_the_leads_own_words_takes_the_round_in_the_chosen_columns(tmp_path):
    # "Add to my_fraud_rounds.xlsx" was offered, then refused for want of TP/FP/FN/TN
    # headers, though the lead had said which columns hold the counts (trial 14).
    from tests.core.test_rounds_columns import OWN_WORDS_CHOICES, own_words_book

    path = own_words_book(tmp_path)
    new = NewRound(
        round=None, date=dt.date(2026, 10, 31), classifier=None,
        population_pos=3_000, population_neg=197_000, tp=160, fp=20, fn=25, tn=5_310,
    )  # fmt: skip
    unchanged = path.read_bytes()
    with pytest.raises(InputError, match="no sheet with a header row naming TP"):
        append_round(path, new)
    assert path.read_bytes() == unchanged
    with pytest.raises(InputError, match="tp=Hitz: no sheet could be read with them"):
        append_round(path, new, columns=["tp=Hitz"])
    # A mapping that reads none of the sheet's rows puts counts where they do not belong.
    wrong = [choice.replace("tp=Hits", "tp=Week") for choice in OWN_WORDS_CHOICES]
    with pytest.raises(InputError, match="none of its 2 rows reads as a round"):
        append_round(path, new, columns=wrong)
    assert path.read_bytes() == unchanged
    appended = append_round(path, new, columns=OWN_WORDS_CHOICES)
    book = read_rounds(path, columns=OWN_WORDS_CHOICES)
    assert [(r.tp, r.fp, r.fn, r.tn) for r in book.rounds][-1] == (160, 20, 25, 5_310)
    assert book.rounds[-1].row == appended.row and book.rounds[-1].population_pos == 3_000
    # The lead's own cells, under their own headers, as openpyxl sees them.
    sheet = openpyxl.load_workbook(path)["Audit"]
    header = [cell.value for cell in sheet[2]]
    row = {header[index]: cell.value for index, cell in enumerate(sheet[appended.row])}
    assert (row["Hits"], row["False alarms"], row["Misses"], row["Correct rejections"]) == (
        160, 20, 25, 5_310,
    )  # fmt: skip


def _shared_sheet(path, totals_row=None, sums_to=3):
    """A lead's sheet of two classifiers' rounds (a classifier column), with a totals row
    ``totals_row`` summing rows 2 to ``sums_to``."""
    below = []
    if totals_row is not None:
        below = [(totals_row, ["Total", None, None, f"=SUM(D2:D{sums_to})"])]
    return _rounds_sheet(
        path,
        ["Round", "Classifier", "k", "TP", "FP", "FN", "TN", "Notes"],
        [["R1", "v3", 0.05, 10, 2, 3, 40], ["R1", "v4", 0.05, 12, 4, 1, 40]],
        below=below,
    )


DRAW = (
    dataclasses.replace(ROUND, classifier="v3", notes=None),
    dataclasses.replace(ROUND, classifier="v4", tp=150, fp=20, notes=None),
)


def test_the_rounds_of_one_draw_go_in_together_below_the_rounds(tmp_path):
    path = _shared_sheet(tmp_path / "own.xlsx")
    outcomes = append_rounds(path, DRAW)
    assert [(item.row, item.classifier) for item in outcomes] == [(4, "v3"), (5, "v4")]
    book = read_rounds(path)
    assert [(item.row, item.classifier, item.tp) for item in book.rounds[2:]] == [
        (4, "v3", 140), (5, "v4", 150),
    ]  # fmt: skip


def test_a_totals_row_with_room_for_one_round_of_two_takes_neither(tmp_path):
    # Before, the main classifier's round took the free row and the second was refused:
    # half a draw in the workbook, and a second hand edit for the rest (recheck 14).
    path = _shared_sheet(tmp_path / "own.xlsx", totals_row=5, sums_to=4)
    before = path.read_bytes()
    with pytest.raises(InputError) as refused:
        append_rounds(path, DRAW)
    message = str(refused.value)
    assert path.read_bytes() == before
    assert "row 5 totals the rounds above it" in message
    assert "need 2 rows there" in message and "leave 2 empty rows" in message
    assert message.endswith("Nothing was written (nor any other round of this labeled sample)")
    # Done as it says: two free rows inside the sums take both rounds at once.
    roomy = _shared_sheet(tmp_path / "roomy.xlsx", totals_row=6, sums_to=5)
    assert [item.row for item in append_rounds(roomy, DRAW)] == [4, 5]
    sheet = openpyxl.load_workbook(roomy)["Travel"]
    assert (sheet["A6"].value, sheet["D6"].value) == ("Total", "=SUM(D2:D5)")


def test_a_round_of_a_draw_refused_names_its_classifier_and_writes_nothing(tmp_path):
    path = _shared_sheet(tmp_path / "own.xlsx")
    second = dataclasses.replace(DRAW[1], round="R1")  # v4's R1 is in the sheet already
    before = path.read_bytes()
    with pytest.raises(InputError) as refused:
        append_rounds(path, (DRAW[0], second))
    assert path.read_bytes() == before
    message = str(refused.value)
    assert message.startswith("v4's round: own.xlsx, sheet 'Travel' already has a round")
    assert "prplanner-" not in message and "(the others of this labeled sample" in message


def test_a_round_of_a_draw_already_recorded_is_said_and_the_others_added(tmp_path):
    path = _shared_sheet(tmp_path / "own.xlsx")
    noted = tuple(
        dataclasses.replace(item, notes="PR Planner labeling round: seed 7, items from x.csv")
        for item in DRAW
    )
    append_rounds(path, noted[:1])
    outcomes = append_rounds(path, noted)
    assert isinstance(outcomes[0], AlreadyRecorded) and "row 4" in str(outcomes[0])
    assert (outcomes[1].row, outcomes[1].classifier) == (5, "v4")
    # Every round recorded: nothing to write, the file untouched.
    before = path.read_bytes()
    assert all(isinstance(item, AlreadyRecorded) for item in append_rounds(path, noted))
    assert path.read_bytes() == before


def test_the_classifier_named_after_the_sheet_is_refused_over_a_classifier_column(tmp_path):
    # Fuzz 16: --column classifier= wrote the row with an empty Classifier cell, said it
    # was filed under 'fraud', and added the same draw again on every run.
    path = _rounds_sheet(
        tmp_path / "own.xlsx",
        ["Round", "Classifier", "k", "TP", "FP", "FN", "TN"],
        [["R1", "travel", 0.05, 10, 2, 3, 40]],
    )
    before = path.read_bytes()
    with pytest.raises(InputError, match=r"has a classifier column \('Classifier', column B\)"):
        append_round(path, ROUND, columns=("classifier=",))
    assert path.read_bytes() == before


def test_a_merged_row_where_the_round_would_go_is_refused(tmp_path):
    # Fuzz 16: the round went into a merged banner row A3:K3; Excel showed its name only
    # and LibreOffice dropped the counts on the next save.
    import openpyxl

    path = _rounds_sheet(
        tmp_path / "own.xlsx",
        ["Round", "Classifier", "k", "TP", "FP", "FN", "TN"],
        [["R1", "travel", 0.05, 10, 2, 3, 40]],
    )
    workbook = openpyxl.load_workbook(path)
    workbook.active.merge_cells("A3:G3")
    workbook.save(path)
    before = path.read_bytes()
    with pytest.raises(InputError, match=r"row 3, where the round would go, is merged \(A3:G3\)"):
        append_round(path, ROUND)
    assert path.read_bytes() == before
    workbook = openpyxl.load_workbook(path)  # a merged row further down is no obstacle
    workbook.active.unmerge_cells("A3:G3")
    workbook.active.merge_cells("A5:G5")
    workbook.save(path)
    assert append_round(path, ROUND).row == 3


def test_a_column_choice_that_cannot_be_used_says_why_not_spelling(tmp_path):
    # Fuzz 16: --column tp=FP (both headers there) read "no header matches ...; check the
    # headers' spelling".
    path = _rounds_sheet(
        tmp_path / "own.xlsx",
        ["Round", "Classifier", "k", "TP", "FP", "FN", "TN"],
        [["R1", "travel", 0.05, 10, 2, 3, 40]],
    )
    with pytest.raises(InputError) as refused:
        append_round(path, ROUND, columns=("tp=FP",))
    assert "spelling" not in str(refused.value)
    assert "tp=FP: no sheet could be read with them" in str(refused.value)
    with pytest.raises(InputError, match="no column has that header; the headers are"):
        append_round(path, ROUND, columns=("tp=Nope",))


def test_a_started_workbook_holds_s_as_an_added_row_does(tmp_path):
    # Trial 17: the rows the app started the workbook with held s = 1.83237013576026, the
    # rows added later 3.244.
    import openpyxl

    from core.workbook.append_round import NewRound, append_round, start_rounds_workbook

    path = tmp_path / "rounds.xlsx"
    # s = (n1/n0)/k = (10/90)/(100/1700) = 1.8888...: by hand
    first = NewRound(round="W01", date=None, classifier="fraud", population_pos=100,
                     population_neg=1700, tp=8, fp=2, fn=3, tn=87)  # fmt: skip
    start_rounds_workbook(path, [first])
    append_round(path, dataclasses.replace(first, round="W02", tp=18))  # (20/90)/(1/17)
    sheet = openpyxl.load_workbook(path)["Rounds"]
    column = [cell.value for cell in sheet[1]].index("s") + 1
    assert [sheet.cell(row, column).value for row in (2, 3)] == [1.889, 3.778]


def test_a_pipe_named_like_a_rounds_workbook_is_named_as_one(tmp_path):
    # Fuzz 17: "Add to a rounds workbook…" on a FIFO called fifo.xlsx said "no such file".
    import os

    from core.workbook.append_round import NewRound, append_round
    from core.workbook.rounds import WorkbookError

    fifo = tmp_path / "fifo.xlsx"
    os.mkfifo(fifo)
    new = NewRound(round="W01", date=None, classifier="fraud", population_pos=100,
                   population_neg=900, tp=8, fp=2, fn=3, tn=87)  # fmt: skip
    with pytest.raises(WorkbookError, match="is not a regular file \\(a pipe or a device\\)"):
        append_round(fifo, new)


def _sheet_without_names_or_notes(path):
    """Trial 21: a lead's sheet of dates, counts and populations only."""
    header = ["Date", "TP", "FP", "FN", "TN", "Predicted positive (population)",
              "Predicted negative (population)"]  # fmt: skip
    return _rounds_sheet(
        path, header, [[dt.date(2026, 3, 2), 130, 35, 90, 4600, 45_000, 1_250_000]]
    )


def test_a_sheet_without_round_or_notes_columns_says_what_it_does_not_keep(tmp_path):
    path = _sheet_without_names_or_notes(tmp_path / "own.xlsx")
    added = append_round(path, ROUND)
    assert added.not_kept == ("name", "notes")
    assert added.to_dict()["not_kept"] == ["name", "notes"]
    from core.workbook.append_round import not_kept_words

    words = not_kept_words(added.sheet, added.not_kept)
    assert "has no column for its name and its notes (the seed and item list)" in words
    assert "add columns headed 'Round' and 'Notes'" in words
    # A sheet with both columns keeps both.
    with_both = _rounds_sheet(
        tmp_path / "both.xlsx", ["Round", "Notes", "k", "TP", "FP", "FN", "TN"],
        [["R1", "", 0.05, 10, 2, 3, 40]],
    )  # fmt: skip
    assert append_round(with_both, dataclasses.replace(ROUND, classifier=None)).not_kept == ()


def test_the_same_round_read_again_into_a_sheet_without_names_or_notes_is_not_added_twice(
    tmp_path,
):
    """Trial 21: read again after a top-up, a round went in as a second July row, since
    nothing on the sheet could tell it was there already."""
    path = _sheet_without_names_or_notes(tmp_path / "own.xlsx")
    append_round(path, ROUND)
    topped_up = dataclasses.replace(ROUND, tp=160, fp=40, fn=100, tn=5000)
    message = refusal_of(path, topped_up)
    assert "row 3 already holds a round of 2026-04-06 with the same population counts" in message
    assert "the labels now give TP 160, FP 40, FN 100, TN 5,000" in message
    assert "To record the new counts in that row, run this again with" in message
    updated = append_round(path, topped_up, update=True)
    assert updated.updated and updated.row == 3
    with pytest.raises(AlreadyRecorded):
        append_round(path, topped_up)
    rounds = read_rounds(path).rounds
    assert [(r.date, r.tp) for r in rounds] == [(dt.date(2026, 3, 2), 130), (ROUND.date, 160)]
    # Another date, or other populations, is another round.
    append_round(path, dataclasses.replace(topped_up, date=dt.date(2026, 5, 4)))
    append_round(path, dataclasses.replace(topped_up, population_pos=46_000))
    assert len(read_rounds(path).rounds) == 4


def test_a_round_whose_counts_add_up_the_rounds_above_says_it_would_read_as_totals(tmp_path):
    """Review 21: halves of a round filed as rounds, then the whole: the new row read back
    as a totals row, and the lead was told only that it 'did not read back as a round'."""
    path = _rounds_sheet(
        tmp_path / "halves.xlsx",
        ["Round", "k", "TP", "FP", "FN", "TN"],
        [["June (Ann)", 0.05, 10, 2, 3, 40], ["June (Bob)", 0.05, 11, 1, 2, 41]],
    )
    before = path.read_bytes()
    whole = dataclasses.replace(ROUND, classifier=None, tp=21, fp=3, fn=5, tn=81)
    with pytest.raises(SaveError) as refused:
        append_round(path, whole)
    assert "it would read as a totals row (its TP, FP, FN and TN are the sums of the 2 " in str(
        refused.value
    )
    assert "If the rows above are parts of this round, delete them" in str(refused.value)
    assert path.read_bytes() == before


def test_a_totals_row_of_typed_numbers_is_not_left_to_read_as_a_round(tmp_path):
    """Review 21: told to "widen its sums", a lead made room above a totals row of typed
    numbers; the round went in, and the totals row, no longer adding up, read as a round."""
    header = ["Round", "k", "TP", "FP", "FN", "TN"]
    rounds = [["May", 0.05, 10, 2, 3, 40], ["June", 0.05, 11, 1, 2, 41]]
    path = _rounds_sheet(tmp_path / "typed.xlsx", header, [*rounds, ["YTD", 0.05, 21, 3, 5, 81]])
    new = dataclasses.replace(ROUND, classifier=None)
    message = refusal_of(path, new)
    assert "row 4 totals the rounds above it, and its numbers are typed" in message
    roomy = _rounds_sheet(
        tmp_path / "roomy.xlsx", header, rounds, below=[(5, ["YTD", 0.05, 21, 3, 5, 81])]
    )
    before = roomy.read_bytes()
    with pytest.raises(SaveError) as refused:
        append_round(roomy, new)
    assert "row 5 totals the rounds above it with typed numbers" in str(refused.value)
    assert roomy.read_bytes() == before


def test_what_is_not_kept_is_said_with_what_still_tells_the_round_apart():
    """Review 21: "known only by its date and population counts" was said also of a sheet
    that keeps the name or the notes."""
    from core.workbook.append_round import not_kept_words

    both = not_kept_words("Log", ("name", "notes"))
    assert "known only by its date and population counts" in both
    name = not_kept_words("Log", ("name",))
    assert name.startswith(
        "sheet 'Log' has no column for its name, so the workbook does not keep it (it reads "
        "back named by its sheet and row); to keep it, add a column headed 'Round'"
    )
    notes = not_kept_words("Log", ("notes",))
    assert "only by its date" not in notes and "add a column headed 'Notes'" in notes


def test_a_round_of_another_classifier_with_the_same_date_and_populations_is_not_this_one(
    tmp_path,
):
    header = ["Date", "Classifier", "TP", "FP", "FN", "TN", "Predicted positive (population)",
              "Predicted negative (population)"]  # fmt: skip
    rows = [[ROUND.date, "promo", 130, 35, 90, 4600, 45_000, 1_250_000]]
    path = _rounds_sheet(tmp_path / "shared.xlsx", header, rows)
    added = append_round(path, ROUND)  # travel's round of the same day and populations
    assert added.row == 3 and not added.updated
    assert [item.classifier for item in read_rounds(path).rounds] == ["promo", "travel"]
