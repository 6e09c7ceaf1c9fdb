"""The workbook reader: its two row sources against openpyxl's, and its budgets.

The fast source reads sheets expat has checked with patterns; the streaming source runs
expat's callbacks on every element and takes over for comments, CDATA, prefixes and other
encodings. Both must give exactly the rows openpyxl's read-only reader gives.
"""

from __future__ import annotations

import datetime as dt
import re
import zipfile
from pathlib import Path

import openpyxl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.workbook import xlsx_reader
from core.workbook.xlsx_reader import (
    ReadBudget,
    WorkbookError,
    check_workbook_file,
    guard_workbook,
    open_sheets,
)


def rows_of(path: Path, engine: str = "fast") -> list[tuple[str, list]]:
    """Every sheet's title and its non-empty rows as (number, values, formulas)."""
    with open_sheets(path, engine=engine) as sheets:
        return [(sheet.title, [row for row in sheet.rows if row[1] or row[2]]) for sheet in sheets]


def streaming_only(monkeypatch) -> None:
    """Make the fast source give up at once, so the streaming source reads everything."""

    def give_up(self, *_args):
        raise xlsx_reader._UseStreamingReader

    monkeypatch.setattr(xlsx_reader._ScannedSheetRows, "__iter__", give_up)


def rewrite_sheet(path: Path, change, part: str = "xl/worksheets/sheet1.xml") -> Path:
    with zipfile.ZipFile(path) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    parts[part] = change(parts[part])
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return path


def one_round_book(path: Path, second_row_tag: bytes | None = None) -> Path:
    """A header and one round; ``second_row_tag`` replaces the round row's ``<row r="2"``."""
    workbook = openpyxl.Workbook()
    workbook.active.append(["Round", "TP"])
    workbook.active.append(["R1", 3])
    workbook.save(path)
    if second_row_tag is not None:
        rewrite_sheet(path, lambda xml: xml.replace(b'<row r="2"', second_row_tag, 1))
    return path


# --- the three sources agree ---------------------------------------------------------------


def test_fixtures_read_alike_by_all_three_sources(shared_fixtures, monkeypatch):
    for name in ("rounds_simple.xlsx", "rounds_messy.xlsx"):
        path = shared_fixtures / name
        fast = rows_of(path)
        reference = rows_of(path, engine="openpyxl")
        with monkeypatch.context() as patched:
            streaming_only(patched)
            streaming = rows_of(path)
        assert fast == reference == streaming
        assert sum(len(rows) for _, rows in fast) > 10


cell_values = st.one_of(
    st.none(),
    st.integers(-(10**15), 10**15),
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(lambda x: float(f"{x:.15g}")),
    st.booleans(),
    st.dates(dt.date(1900, 3, 1), dt.date(9999, 12, 31)),
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Cn", "Co"))
        | st.sampled_from("<>&\"'\n\t "),
        max_size=20,
    ),
)
#: How the sheet XML is disguised: each must read the same (the last three force the
#: streaming source).
DISGUISES = {
    "as written": lambda xml: xml,
    "whitespace between cells": lambda xml: xml.replace(b"<c ", b"\n  <c ").replace(
        b"<row", b"\n<row"
    ),
    "comments everywhere": lambda xml: xml.replace(b"<c ", b"<!-- <c r='A1'><v>9</v></c> --><c "),
    "CDATA values": lambda xml: re.sub(rb"<v>([^<]*)</v>", rb"<v><![CDATA[\1]]></v>", xml),
    "prefixed namespace": lambda xml: re.sub(rb"<(/?)(?!\?)", rb"<\1x:", xml).replace(
        b"xmlns=", b"xmlns:x="
    ),
}


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(st.lists(cell_values, max_size=8), min_size=1, max_size=12),
    disguise=st.sampled_from(sorted(DISGUISES)),
    shared=st.booleans(),
)
def test_generated_sheets_read_as_openpyxl_reads_them(tmp_path_factory, rows, disguise, shared):
    path = tmp_path_factory.mktemp("generated") / "sheet.xlsx"
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    for row_index, row in enumerate(rows, start=1):
        for column_index, value in enumerate(row, start=1):
            if value is None:
                continue
            cell = sheet.cell(row_index, column_index, value)
            if isinstance(value, str):
                cell.data_type = "s"  # text stays text, even "=1+1"
    sheet.cell(len(rows) + 1, 3, "=SUM(C1:C2)")
    workbook.save(path)
    if not shared:  # openpyxl writes shared strings; inline them as write-only mode does
        strings = _shared_strings(path)
        rewrite_sheet(path, lambda xml: _inline(xml, strings))
    rewrite_sheet(path, DISGUISES[disguise])
    assert rows_of(path) == rows_of(path, engine="openpyxl")


def _shared_strings(path: Path) -> list[bytes]:
    with zipfile.ZipFile(path) as archive:
        if "xl/sharedStrings.xml" not in archive.namelist():
            return []
        xml = archive.read("xl/sharedStrings.xml")
    return re.findall(rb"<si>(.*?)</si>", xml, re.DOTALL)


def _inline(xml: bytes, strings: list[bytes]) -> bytes:
    def replace(match):
        return match.group(1) + b' t="inlineStr"><is>' + strings[int(match.group(2))] + b"</is></c>"

    return re.sub(rb'(<c r="[A-Z]+\d+"(?: s="\d+")?) t="s"><v>(\d+)</v></c>', replace, xml)


def test_streaming_source_takes_over_where_the_fast_one_stops(tmp_path):
    """A comment far into a sheet: rows before it come from the fast source, the rest from
    the streaming one, none twice, none lost."""
    workbook = openpyxl.Workbook(write_only=True)
    sheet = workbook.create_sheet("Long")
    for index in range(6000):
        sheet.append([index, f"name {index}", index / 7])
    path = tmp_path / "long.xlsx"
    workbook.save(path)
    rewrite_sheet(path, lambda xml: xml.replace(b'<row r="5000">', b'<!-- x --><row r="5000">'))
    ((_, rows),) = rows_of(path)
    assert [row[0] for row in rows] == list(range(1, 6001))
    assert rows == rows_of(path, engine="openpyxl")[0][1]


def test_rows_after_the_sheet_data_are_not_read(tmp_path, monkeypatch):
    """A sheet damaged far after its rows still reads: nothing there holds cells, and
    stopping early keeps a huge tail from costing time (the bytes read with the end of the
    rows are still checked)."""
    workbook = openpyxl.Workbook()
    workbook.active.append([1, 2, 3])
    path = tmp_path / "tail.xlsx"
    workbook.save(path)
    tail = b"</sheetData>" + b" " * 300_000 + b"<broken"
    rewrite_sheet(path, lambda xml: xml.replace(b"</sheetData>", tail))
    assert rows_of(path) == [("Sheet", [(1, [1, 2, 3], None)])]
    streaming_only(monkeypatch)
    assert rows_of(path) == [("Sheet", [(1, [1, 2, 3], None)])]


# --- budgets -------------------------------------------------------------------------------


def test_budget_grows_with_the_file_between_its_floor_and_ceiling(tmp_path):
    small = ReadBudget.for_file(tmp_path, 5_000)
    assert small.uncompressed_bytes == xlsx_reader.MIN_EXPANSION_BUDGET
    assert small.cells == xlsx_reader.MIN_CELL_BUDGET
    assert small.seconds == xlsx_reader.MIN_SECONDS
    middle = ReadBudget.for_file(tmp_path, 2_900_000)
    assert middle.uncompressed_bytes == 200 * 2_900_000
    assert middle.size_rule() == "more than 200 times its 2.9 MB file"
    assert middle.cells == max(xlsx_reader.MIN_CELL_BUDGET, 2 * 2_900_000)
    huge = ReadBudget.for_file(tmp_path, 50_000_000)
    assert huge.uncompressed_bytes == xlsx_reader.MAX_UNCOMPRESSED_BYTES
    assert huge.seconds == 4.0 * 50


def test_highly_compressed_members_are_refused_whatever_their_size(tmp_path):
    """15 sheets of 8 MB in a file of a few hundred KB: the total and each member's ratio
    are both beyond the budget, and the message gives the numbers in plain words."""
    path = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for index in range(15):
            archive.writestr(f"xl/worksheets/sheet{index}.xml", b" " * (8 << 20))
    with pytest.raises(WorkbookError) as caught:
        check_workbook_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: this workbook would expand to 126 MB once decompressed")
    assert "refusing to read it (possible zip bomb)" in message


def test_cell_budget_is_named_in_the_refusal(tmp_path, monkeypatch):
    workbook = openpyxl.Workbook()
    for index in range(300):
        workbook.active.append([index] * 10)
    path = tmp_path / "cells.xlsx"
    workbook.save(path)
    monkeypatch.setattr(xlsx_reader, "MIN_CELL_BUDGET", 1000)
    monkeypatch.setattr(xlsx_reader, "CELLS_PER_FILE_BYTE", 0)
    with pytest.raises(WorkbookError, match=r"holds more than [\d,]+ cells, more than a"):
        rows_of(path)


def test_time_budget_is_named_in_the_refusal(tmp_path, monkeypatch):
    workbook = openpyxl.Workbook()
    workbook.active.append([1])
    path = tmp_path / "slow.xlsx"
    workbook.save(path)
    monkeypatch.setattr(xlsx_reader, "MIN_SECONDS", -1.0)
    monkeypatch.setattr(xlsx_reader, "SECONDS_PER_MEGABYTE", 0.0)
    with pytest.raises(
        WorkbookError, match=r"reading stopped in .* of processor time, the most allowed for a"
    ):
        rows_of(path)


def test_guard_parses_every_part_before_openpyxl(tmp_path):
    workbook = openpyxl.Workbook()
    workbook.active.append([1])
    path = tmp_path / "styles.xlsx"
    workbook.save(path)
    assert guard_workbook(path).file_bytes == path.stat().st_size
    rewrite_sheet(path, lambda xml: b'<!DOCTYPE x [<!ENTITY a "b">]>' + xml, "xl/styles.xml")
    with pytest.raises(WorkbookError, match=r"cannot be read safely: part xl/styles.xml"):
        guard_workbook(path)


def test_a_cell_beyond_the_text_limit_is_damage_not_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(xlsx_reader, "MAX_TEXT_CHARACTERS", 10_000)
    workbook = openpyxl.Workbook()
    workbook.active.append(["x" * 30_000])
    path = tmp_path / "long.xlsx"
    workbook.save(path)
    strings = _shared_strings(path)
    rewrite_sheet(path, lambda xml: _inline(xml, strings))
    with pytest.raises(WorkbookError, match="row 1: a cell holds more than 10,000 characters"):
        rows_of(path)
    streaming_only(monkeypatch)
    with pytest.raises(WorkbookError, match="row 1: a cell holds more than 10,000 characters"):
        rows_of(path)


@pytest.mark.parametrize("source", ["fast", "streaming"])
def test_a_tag_of_millions_of_attributes_is_damage_not_memory(tmp_path, monkeypatch, source):
    # One row tag with 4 million attributes (a 9 MB file) took 980 MB and 56 s: expat
    # builds the attributes as one dict before any handler sees them (fuzz 13). Measured
    # with tracemalloc: the process's peak resident size hid growth below an earlier peak
    # (review 14).
    import tracemalloc

    # Some values hold ">", which XML allows there: the guard must not restart on them.
    attributes = b"".join(
        b' a%x="%s"' % (number, b">" if number % 1000 == 0 else b"") for number in range(800_000)
    )  # 8 MB
    path = one_round_book(tmp_path / "attributes.xlsx", b'<row r="2"' + attributes)
    if source == "streaming":
        streaming_only(monkeypatch)
    tracemalloc.start()
    try:
        with pytest.raises(
            WorkbookError, match="MB without a break, more than any cell of a workbook holds"
        ):
            rows_of(path)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200e6  # bytes; well under the 980 MB the dict took


# --- number formats: openpyxl's rules without importing openpyxl --------------------------

FORMAT_CODES = [
    None,
    "General",
    "0",
    "0.00",
    "0%",
    "0.00%",
    "#,##0",
    '"Day "0',
    '0" days"',
    "[Red]0.0",
    "[$-409]d-mmm-yy",
    "yyyy-mm-dd",
    "dd/mm/yyyy hh:mm",
    "mm:ss",
    "[h]:mm:ss",
    "[mm]:ss",
    "[ss].00",
    "h:mm AM/PM",
    "0.0E+00",
    "@",
    "_(* #,##0_)",
    "\\d0",
    "_d0",
    "d;0",
    "0;d",
    "[>100]0;[Red]0",
    "[hh]:mm",
    "[H]",
    "ss.0",
    'm"x"',
    "#,##0.00 [$€-407]",
    "[DBNum1]0",
]


@pytest.mark.parametrize("code", FORMAT_CODES)
def test_number_format_rules_agree_with_openpyxl(code):
    from openpyxl.styles.numbers import is_date_format, is_timedelta_format

    from core.workbook import xlsx_reader

    assert xlsx_reader.is_date_format(code) == is_date_format(code)
    assert xlsx_reader.is_duration_format(code) == is_timedelta_format(code)


def test_builtin_date_formats_are_openpyxls():
    from openpyxl.styles.numbers import BUILTIN_FORMATS, is_date_format, is_timedelta_format

    from core.workbook import xlsx_reader

    expected = {
        index: code
        for index, code in BUILTIN_FORMATS.items()
        if is_date_format(code) or is_timedelta_format(code)
    }
    assert xlsx_reader._BUILTIN_DATE_FORMATS == expected


def test_reading_a_workbook_does_not_import_openpyxl(tmp_path):
    import subprocess
    import sys

    from tests.conftest import SHARED_FIXTURES

    code = (
        "import sys; from core.workbook.rounds import read_rounds; "
        f"read_rounds({str(SHARED_FIXTURES / 'rounds_messy.xlsx')!r}); "
        "print('openpyxl' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@settings(max_examples=400, deadline=None)
@given(
    serial=st.one_of(
        st.floats(min_value=-1, max_value=3_000_000, allow_nan=False),
        st.integers(-10, 2_958_465).map(float),
        st.sampled_from([0.0, 0.5, 0.99999999, 1.0, 59.0, 59.5, 60.0, 61.0, 2_958_465.99]),
    ),
    mac=st.booleans(),
    duration=st.booleans(),
)
def test_excel_serials_convert_as_openpyxl_converts_them(serial, mac, duration):
    from openpyxl.utils.datetime import MAC_EPOCH, WINDOWS_EPOCH
    from openpyxl.utils.datetime import from_excel as openpyxl_from_excel

    epoch = MAC_EPOCH if mac else WINDOWS_EPOCH
    try:
        expected = openpyxl_from_excel(serial, epoch, timedelta=duration)
    except (OverflowError, ValueError) as exc:
        with pytest.raises(type(exc)):
            xlsx_reader.from_excel(serial, epoch, duration=duration)
        return
    assert xlsx_reader.from_excel(serial, epoch, duration=duration) == expected


@pytest.mark.parametrize("name", ["copy.ods", "copy.xlsx"])
def test_an_opendocument_spreadsheet_says_how_to_save_it_as_xlsx(tmp_path, name):
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        archive.writestr("content.xml", "<office:document-content/>")
        archive.writestr("META-INF/manifest.xml", "<manifest/>")
    with pytest.raises(xlsx_reader.WorkbookError) as caught:
        with xlsx_reader.open_sheets(path) as sheets:
            list(sheets)
    assert "OpenDocument spreadsheet (.ods)" in str(caught.value)
    assert "Save As" in str(caught.value) and "(.xlsx)" in str(caught.value)


@pytest.mark.parametrize(
    ("number", "said"),
    [
        # "row 99999999999999999999" was read and listed as such (fuzz 13).
        (b"99999999999999999999", "outside the 1,048,576 rows a sheet has"),
        (b"1048577", "outside the 1,048,576 rows a sheet has"),
        (b"0", "outside the 1,048,576 rows a sheet has"),
        # r="inf" gave "ValueError: inf' is not a row number" (fuzz 13b).
        (b"inf", "which is not a row number"),
        (b"nan", "which is not a row number"),
        (b"abc", "which is not a row number"),
        (b"2.5", "which is not a row number"),
    ],
)
def test_a_row_number_no_sheet_can_have_is_damage_said_plainly(tmp_path, number, said):
    path = one_round_book(tmp_path / "rows.xlsx", b'<row r="' + number + b'"')
    with pytest.raises(WorkbookError, match=said) as caught:
        rows_of(path)
    assert "ValueError" not in str(caught.value) and "open it in Excel" in str(caught.value)


def test_the_date_system_is_read_from_the_workbook_part_alone_and_refuses_non_workbooks(
    tmp_path,
):
    from openpyxl.utils.datetime import CALENDAR_MAC_1904

    from core.workbook.xlsx_reader import date_epoch

    book = openpyxl.Workbook()
    assert date_epoch(one_round_book(tmp_path / "windows.xlsx")) == dt.date(1899, 12, 30)
    book.epoch = CALENDAR_MAC_1904
    book.active.append(["R1", 3])
    book.save(tmp_path / "mac.xlsx")
    assert date_epoch(tmp_path / "mac.xlsx") == dt.date(1904, 1, 1)
    with zipfile.ZipFile(tmp_path / "empty.xlsx", "w") as archive:
        archive.writestr("content.xml", "<x/>")
    with pytest.raises(WorkbookError, match="not a readable Excel workbook"):
        date_epoch(tmp_path / "empty.xlsx")


def _hidden_rows_book(path: Path) -> Path:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Round", "k", "TP", "FP", "FN", "TN"])
    for number in range(1, 6):
        sheet.append([f"R{number}", 0.05, 10 + number, 20, 5, 100])
    sheet.row_dimensions[3].hidden = True  # by hand
    sheet.row_dimensions[5].outlineLevel = 1
    sheet.row_dimensions[5].hidden = True  # a collapsed group
    workbook.save(path)
    return path


@pytest.mark.parametrize("source", ["fast", "streaming"])
def test_hidden_rows_are_read_and_named(tmp_path, monkeypatch, source):
    """Trial 21, fuzz 21: a hidden "draft - do not use" row was read as a round without a
    word. Both sources say which rows the sheet hides; the rows are read as ever."""
    if source == "streaming":
        streaming_only(monkeypatch)
    path = _hidden_rows_book(tmp_path / "hidden.xlsx")
    with open_sheets(path) as sheets:
        (sheet,) = list(sheets)
        numbers = [row[0] for row in sheet.rows if row[1]]
        assert numbers == [1, 2, 3, 4, 5, 6]
        assert sheet.hidden_rows == {3, 5}
    from core.workbook.rounds import read_rounds
    from core.workbook.session_io import read_session

    book = read_rounds(path)
    assert len(book.rounds) == 5
    (reading,) = book.columns
    assert reading.hidden_rounds == (3, 5)
    note = reading.hidden_note()
    assert note.startswith("sheet 'Sheet': rows 3, 5 are hidden in the workbook, and read as ")
    assert reading.to_dict()["notes"] == [note]
    opened = read_session(path)
    assert opened.notes == (note,) and note not in opened.problems


def test_a_hidden_attribute_of_false_hides_nothing(tmp_path):
    path = rewrite_sheet(
        one_round_book(tmp_path / "shown.xlsx"),
        lambda xml: xml.replace(b'<row r="2"', b'<row r="2" hidden="0"'),
    )
    with open_sheets(path) as sheets:
        (sheet,) = list(sheets)
        assert [row[0] for row in sheet.rows] == [1, 2]
        assert sheet.hidden_rows == set()


@pytest.mark.parametrize("source", ["fast", "streaming"])
def test_zero_padded_numbers_read_as_they_show_when_asked(tmp_path, monkeypatch, source):
    """Fuzz 21: ids formatted 000000 lost their zeros (Excel shows 000388, the draw wrote
    388), so the sample's ids matched nothing in the warehouse. Item lists ask for the
    text shown; rounds workbooks keep the numbers."""
    if source == "streaming":
        streaming_only(monkeypatch)
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["id", "count"])
    for value in (388, 12.0, 7.5, -3):
        sheet.append([value, value])
        sheet.cell(sheet.max_row, 1).number_format = "000000"
    path = tmp_path / "padded.xlsx"
    workbook.save(path)
    with open_sheets(path, padded_numbers=True) as sheets:
        (rows,) = [[row[1] for row in sheet.rows] for sheet in sheets]
    assert [values[0] for values in rows[1:]] == ["000388", "000012", 7.5, -3]
    assert [values[1] for values in rows[1:]] == [388, 12, 7.5, -3]
    with open_sheets(path) as sheets:
        (rows,) = [[row[1] for row in sheet.rows] for sheet in sheets]
    assert [values[0] for values in rows[1:]] == [388, 12, 7.5, -3]


@pytest.mark.parametrize("cut", range(0, 13, 4))
def test_merged_ranges_are_found_when_the_end_of_the_cells_straddles_two_reads(
    tmp_path, monkeypatch, cut
):
    """Review 21: ``</sheetData>`` split between two 64 KiB reads lost the merged ranges."""
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Round", "TP"])
    sheet.append(["R1", 3])
    sheet.merge_cells("A3:B3")
    path = tmp_path / "merged.xlsx"
    workbook.save(path)
    with zipfile.ZipFile(path) as archive:
        xml = archive.read("xl/worksheets/sheet1.xml")
    at = xml.index(b"</sheetData>") + cut
    monkeypatch.setattr(xlsx_reader, "_CHUNK_BYTES", at)  # a read ends inside the tag
    with open_sheets(path) as sheets:
        (found,) = list(sheets)
        assert [row[0] for row in found.rows if row[1]] == [1, 2]
        assert found.merged_ranges == ["A3:B3"]


def test_a_merged_range_in_a_comment_is_not_one(tmp_path):
    workbook = openpyxl.Workbook()
    workbook.active.append(["Round", "TP"])
    workbook.active.merge_cells("A3:B3")
    path = rewrite_sheet(
        workbook.save(tmp_path / "c.xlsx") or tmp_path / "c.xlsx",
        lambda xml: xml.replace(b"</sheetData>", b'</sheetData><!-- <mergeCell ref="C1:C9"/> -->'),
    )
    with open_sheets(path) as sheets:
        (sheet,) = list(sheets)
        list(sheet.rows)
        assert sheet.merged_ranges == ["A3:B3"]
