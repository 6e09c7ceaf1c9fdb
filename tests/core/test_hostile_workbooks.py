"""Hostile and huge workbooks, built here: each ends in a clear refusal or the right data.

Every case is read by the rounds reader (fast engine, and openpyxl's engine where it can
read the file at all), by ``prplanner rounds``, ``prplanner curves`` and ``prplanner
report``: a refusal is a :class:`WorkbookError` naming the file and the problem, and on the
command line exit status 2 with one ``error:`` line. A generous wall-clock cap per case
(pytest-timeout) catches a hang; the process's peak memory is checked after each case.
"""

from __future__ import annotations

import os
import resource
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.cli import main
from core.errors import InputError
from core.workbook import WorkbookError, read_rounds
from core.workbook.rounds import MAX_COUNT
from tests.conftest import SHARED_FIXTURES

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
RELATIONSHIPS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
#: No case may take the test process beyond this peak (it starts near 200 MB).
PEAK_MEMORY_BYTES = 1_500 << 20

HEADER_ROW = (
    '<row r="1"><c r="A1" t="inlineStr"><is><t>Round</t></is></c>'
    '<c r="B1" t="inlineStr"><is><t>k</t></is></c>'
    '<c r="C1" t="inlineStr"><is><t>TP</t></is></c>'
    '<c r="D1" t="inlineStr"><is><t>FP</t></is></c>'
    '<c r="E1" t="inlineStr"><is><t>FN</t></is></c>'
    '<c r="F1" t="inlineStr"><is><t>TN</t></is></c></row>'
)


def data_row(row: int, name: str, tp: str = "10", k: str = "0.05") -> str:
    """A round row: inline name, then k, TP, FP, FN, TN as number cells."""
    numbers = [k, tp, "2", "3", "40"]
    cells = "".join(
        f'<c r="{letter}{row}"><v>{value}</v></c>'
        for letter, value in zip("BCDEF", numbers, strict=True)
    )
    return f'<row r="{row}"><c r="A{row}" t="inlineStr"><is><t>{name}</t></is></c>{cells}</row>'


def sheet_xml(rows: str, prolog: str = "") -> bytes:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>{prolog}<worksheet xmlns="{MAIN}">'
        f"<sheetData>{rows}</sheetData></worksheet>"
    ).encode()


def write_workbook(
    path: Path,
    sheets: list[bytes],
    *,
    shared_strings: bytes | None = None,
    chart_only: bool = False,
    compression: int = zipfile.ZIP_DEFLATED,
) -> Path:
    """A minimal but complete .xlsx: content types, relationships, workbook, sheets."""
    overrides = [
        '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
        'officedocument.spreadsheetml.sheet.main+xml"/>'
    ]
    if shared_strings is not None:
        overrides.append(
            '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.'
            'openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
        )
    kind = "chartsheet" if chart_only else "worksheet"
    folder = "chartsheets" if chart_only else "worksheets"
    relations = "".join(
        f'<Relationship Id="rId{index}" Type="{RELATIONSHIPS}/{kind}" '
        f'Target="{folder}/sheet{index}.xml"/>'
        for index in range(1, len(sheets) + 1)
    )
    entries = "".join(
        f'<sheet name="Sheet{index}" sheetId="{index}" r:id="rId{index}"/>'
        for index in range(1, len(sheets) + 1)
    )
    with zipfile.ZipFile(path, "w", compression) as archive:
        archive.writestr(
            "[Content_Types].xml",
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="xml" ContentType="application/xml"/>'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/>' + "".join(overrides) + "</Types>",
        )
        archive.writestr(
            "_rels/.rels",
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
            'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/'
            'officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>'
            "</Relationships>",
        )
        archive.writestr(
            "xl/workbook.xml",
            f'<workbook xmlns="{MAIN}" xmlns:r="{RELATIONSHIPS}"><sheets>{entries}</sheets>'
            "</workbook>",
        )
        archive.writestr(
            "xl/_rels/workbook.xml.rels",
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
            f'relationships">{relations}</Relationships>',
        )
        for index, xml in enumerate(sheets, start=1):
            archive.writestr(f"xl/{folder}/sheet{index}.xml", xml)
        if shared_strings is not None:
            archive.writestr("xl/sharedStrings.xml", shared_strings)
    return path


def _entity(level: int) -> str:
    inner = "&lol;" if level == 1 else f"&lol{level - 1};"
    return f'<!ENTITY lol{level} "{inner * 10}">'


#: Nine levels of ten: "&lol9;" would expand to 10**9 "lol"s.
BILLION_LAUGHS = '<!DOCTYPE lolz [<!ENTITY lol "lol">' + "".join(map(_entity, range(1, 10))) + "]>"


# --- the corpus ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One hostile file: how to build it, then what reading it must give."""

    name: str
    build: object  # (tmp_path) -> Path
    refusal: str | None = None  # a phrase of the WorkbookError, or None: data must load
    rounds: tuple[str, ...] = ()  # names of the rounds that load
    refused_reason: str | None = None  # a phrase of the one refused row's reason
    #: True: openpyxl's engine reads it and agrees; False: it refuses it too; None: too slow
    #: to compare.
    openpyxl_reads: bool | None = True


def _unclosed_rows(tmp_path: Path) -> Path:
    rows = HEADER_ROW + "".join(f'<row r="{n}"><c r="A{n}"><v>{n}</v></c>' for n in range(2, 400))
    return write_workbook(tmp_path / "unclosed_rows.xlsx", [sheet_xml(rows)])


def _lost_row_ends(tmp_path: Path) -> Path:
    """Well-formed rows except that the first 40 lost their </row>: nested rows, which an
    XML parser only refuses at </sheetData>, 100 KB later (past the first chunk read)."""
    rows = "".join(data_row(n, f"R{n}") for n in range(2, 1200))
    rows = HEADER_ROW.replace("</row>", "") + rows.replace("</row>", "", 40)
    return write_workbook(tmp_path / "lost_row_ends.xlsx", [sheet_xml(rows)])


def _unclosed_cells(tmp_path: Path) -> Path:
    cells = "".join(f'<c r="B{n}"><v>{n}</v>' for n in range(2, 600))
    return write_workbook(tmp_path / "unclosed_cells.xlsx", [sheet_xml(HEADER_ROW + cells)])


def _comment_hides_value(tmp_path: Path) -> Path:
    row = data_row(2, "visible", tp="<!--<v>999</v>-->10")
    return write_workbook(tmp_path / "comment_value.xlsx", [sheet_xml(HEADER_ROW + row)])


def _comment_hides_row(tmp_path: Path) -> Path:
    rows = (
        HEADER_ROW + data_row(2, "kept") + f"<!--{data_row(3, 'hidden')}-->" + data_row(4, "last")
    )
    return write_workbook(tmp_path / "comment_row.xlsx", [sheet_xml(rows)])


def _cdata(tmp_path: Path) -> Path:
    row = data_row(2, "<![CDATA[R<1>&]]>", tp="<![CDATA[10]]>")
    return write_workbook(tmp_path / "cdata.xlsx", [sheet_xml(HEADER_ROW + row)])


def _dtd_in_sheet(tmp_path: Path) -> Path:
    row = data_row(2, "&lol9;")
    return write_workbook(tmp_path / "laughs.xlsx", [sheet_xml(HEADER_ROW + row, BILLION_LAUGHS)])


def _dtd_in_shared_strings(tmp_path: Path) -> Path:
    strings = (
        f'<?xml version="1.0"?>{BILLION_LAUGHS}<sst xmlns="{MAIN}"><si><t>&lol9;</t></si></sst>'
    ).encode()
    row = '<row r="2"><c r="A2" t="s"><v>0</v></c></row>'
    return write_workbook(
        tmp_path / "laughs_strings.xlsx", [sheet_xml(HEADER_ROW + row)], shared_strings=strings
    )


def _negative_shared_string(tmp_path: Path) -> Path:
    """Index -1 would be the table's last string in Python: a made-up round name."""
    strings = f'<sst xmlns="{MAIN}"><si><t>R1</t></si><si><t>MADE-UP</t></si></sst>'.encode()
    row = '<row r="2"><c r="A2" t="s"><v>-1</v></c></row>'
    return write_workbook(
        tmp_path / "negative_index.xlsx", [sheet_xml(HEADER_ROW + row)], shared_strings=strings
    )


def _undefined_entity(tmp_path: Path) -> Path:
    row = data_row(2, "&lol9;")
    return write_workbook(tmp_path / "entity.xlsx", [sheet_xml(HEADER_ROW + row)])


def _bomb(name: str, members: int, member_bytes: int):
    def build(tmp_path: Path) -> Path:
        path = tmp_path / name
        block = b" " * member_bytes  # spaces: legal between tags, compress ~1000 times
        sheets = [
            sheet_xml(HEADER_ROW + data_row(2, "ok"))[:-24] + block + b"</sheetData></worksheet>"
        ]
        write_workbook(path, sheets * members)
        return path

    return build


def _many_members(tmp_path: Path) -> Path:
    path = write_workbook(tmp_path / "many.xlsx", [sheet_xml(HEADER_ROW + data_row(2, "ok"))])
    with zipfile.ZipFile(path, "a") as archive:
        for index in range(20_000):
            archive.writestr(f"xl/media/empty{index}.bin", b"")
    return path


def _encrypted_flag(tmp_path: Path) -> Path:
    path = write_workbook(tmp_path / "flagged.xlsx", [sheet_xml(HEADER_ROW + data_row(2, "ok"))])
    data = bytearray(path.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        position = data.find(signature)
        while position >= 0:
            data[position + offset] |= 0x1
            position = data.find(signature, position + 4)
    path.write_bytes(bytes(data))
    return path


def _chartsheet_only(tmp_path: Path) -> Path:
    chart = f'<chartsheet xmlns="{MAIN}"><sheetPr/></chartsheet>'.encode()
    return write_workbook(tmp_path / "charts.xlsx", [chart], chart_only=True)


def _truncated(tmp_path: Path) -> Path:
    full = write_workbook(tmp_path / "full.xlsx", [sheet_xml(HEADER_ROW + data_row(2, "ok"))])
    path = tmp_path / "truncated.xlsx"
    path.write_bytes(full.read_bytes()[:900])
    return path


def _csv_renamed(tmp_path: Path) -> Path:
    path = tmp_path / "export.xlsx"
    path.write_text("Round,k,TP,FP,FN,TN\nA,0.05,10,2,3,40\n")
    return path


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.xlsx"
    os.mkfifo(path)
    return path


def _count(name: str, tp: str, *, k: str = "0.05"):
    def build(tmp_path: Path) -> Path:
        rows = HEADER_ROW + data_row(2, "bad", tp=tp, k=k) + data_row(3, "good")
        return write_workbook(tmp_path / f"{name}.xlsx", [sheet_xml(rows)])

    return build


def _long_text(tmp_path: Path) -> Path:
    rows = HEADER_ROW + data_row(2, "x" * 32_000)
    return write_workbook(tmp_path / "long_text.xlsx", [sheet_xml(rows)])


def _million_empty_cells(tmp_path: Path) -> Path:
    empty = "".join(
        f'<row r="{row}">'
        + "".join(f'<c r="{column}{row}" s="0"/>' for column in _COLUMN_LETTERS)
        + "</row>"
        for row in range(3, 1003)
    )
    rows = HEADER_ROW + data_row(2, "only") + empty
    return write_workbook(tmp_path / "empty_cells.xlsx", [sheet_xml(rows)])


def _letters(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, 26)
        letters = chr(65 + remainder) + letters
    return letters


_COLUMN_LETTERS = [_letters(index) for index in range(1000)]

CASES = [
    Case("unclosed <row tags", _unclosed_rows, refusal="is damaged", openpyxl_reads=False),
    Case("unclosed <c tags", _unclosed_cells, refusal="is damaged", openpyxl_reads=False),
    Case("lost </row> tags", _lost_row_ends, refusal="is damaged", openpyxl_reads=False),
    Case("comment hides a value", _comment_hides_value, rounds=("visible",)),
    Case("comment hides a row", _comment_hides_row, rounds=("kept", "last")),
    Case("CDATA is text", _cdata, rounds=("R<1>&",)),
    Case("DTD in a sheet", _dtd_in_sheet, refusal="document type (DTD)", openpyxl_reads=False),
    Case(
        "DTD in the shared strings",
        _dtd_in_shared_strings,
        refusal="document type (DTD)",
        openpyxl_reads=False,
    ),
    Case("undefined entity", _undefined_entity, refusal="is damaged", openpyxl_reads=False),
    Case(
        "negative shared string index",
        _negative_shared_string,
        refusal="refers to shared string '-1'",
        openpyxl_reads=None,  # openpyxl takes the last string, as the old reader did
    ),
    Case(
        "bomb: 15 members of 8 MB",
        _bomb("bomb15.xlsx", 15, 8 << 20),
        refusal="possible zip bomb",
        openpyxl_reads=False,
    ),
    Case(
        "bomb: one member over 64 MB",
        _bomb("bomb70.xlsx", 1, 70 << 20),
        refusal="possible zip bomb",
        openpyxl_reads=False,
    ),
    Case(
        "20,000 members",
        _many_members,
        refusal="20,005 parts, more than the 10,000",
        openpyxl_reads=False,
    ),
    Case("encrypted flag", _encrypted_flag, refusal="is encrypted", openpyxl_reads=False),
    # openpyxl fails on it in its own words: refused all the same.
    Case("chart sheets only", _chartsheet_only, refusal="has no worksheet", openpyxl_reads=False),
    Case("truncated zip", _truncated, refusal="is damaged", openpyxl_reads=False),
    Case("CSV renamed .xlsx", _csv_renamed, refusal="is a text file (CSV or similar)"),
    Case("FIFO", _fifo, refusal="not a regular file", openpyxl_reads=False),
    Case(
        "400-digit count",
        _count("digits", "9" * 400),
        rounds=("good",),
        refused_reason="TP in cell C2 is too large to be a count",
    ),
    Case(
        "1e308 count",
        _count("huge", "1e308"),
        rounds=("good",),
        refused_reason="TP in cell C2 is too large to be a count",
    ),
    Case(
        "inf count",
        _count("inf", "inf"),
        rounds=("good",),
        refused_reason="TP in cell C2 is too large to be a count",
        openpyxl_reads=False,  # openpyxl cannot cast "inf"
    ),
    Case(
        "nan count",
        _count("nan", "nan"),
        rounds=("good",),
        refused_reason="TP must be a whole number",
        openpyxl_reads=False,
    ),
    Case(
        "denormal k",
        _count("denormal", "10", k="5e-324"),
        rounds=("good",),
        refused_reason="too small to be an imbalance ratio",
    ),
    Case("32,000-character text", _long_text, rounds=("x" * 32_000,)),
    # openpyxl needs a minute for it: not compared.
    Case("1 M empty cells", _million_empty_cells, rounds=("only",), openpyxl_reads=None),
]


def _peak_memory() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


@pytest.fixture(params=CASES, ids=[case.name for case in CASES])
def case(request, tmp_path):
    built = request.param.build(tmp_path)
    return request.param, built


@pytest.mark.timeout(120)
def test_rounds_reader_refuses_or_reads(case):
    spec, path = case
    if spec.refusal is not None:
        with pytest.raises(WorkbookError) as caught:
            read_rounds(path)
        message = str(caught.value)
        assert str(path) in message and spec.refusal in message, message
        assert "\n" not in message
    else:
        book = read_rounds(path)
        assert [item.round for item in book.rounds] == list(spec.rounds)
        if spec.refused_reason is None:
            assert book.refused == ()
        else:
            (refusal,) = book.refused
            assert refusal.row == 2 and spec.refused_reason in refusal.reason
        good = [item for item in book.rounds if item.round == "good"]
        assert all(item.tp <= MAX_COUNT for item in book.rounds)
        assert all((item.tp, item.fp, item.fn, item.tn) == (10, 2, 3, 40) for item in good)
    assert _peak_memory() < PEAK_MEMORY_BYTES


#: openpyxl's engine is the reference where it reads in reasonable time (``None``: it
#: takes about a minute, e.g. on a million empty cells, so that case is not compared).
COMPARED = [case for case in CASES if case.openpyxl_reads is not None]


@pytest.mark.timeout(240)
@pytest.mark.parametrize("spec", COMPARED, ids=[case.name for case in COMPARED])
def test_openpyxl_engine_agrees_where_it_reads(spec, tmp_path):
    path = spec.build(tmp_path)
    if not spec.openpyxl_reads:
        with pytest.raises(InputError):
            read_rounds(path, engine="openpyxl")
        return
    if spec.refusal is not None:
        with pytest.raises(
            WorkbookError, match=spec.refusal.replace("(", r"\(").replace(")", r"\)")
        ):
            read_rounds(path, engine="openpyxl")
        return
    assert read_rounds(path) == read_rounds(path, engine="openpyxl")


def _one_error_line(capsys, argv) -> str:
    status = main(argv)
    captured = capsys.readouterr()
    assert status == 2, (status, captured.err)
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    return lines[0]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("command", ["rounds", "curves", "report"])
def test_command_line_exits_2_with_one_line_for_every_refusal(case, command, capsys, tmp_path):
    spec, path = case
    argv = {
        "rounds": ["rounds", str(path), "--json"],
        "curves": ["curves", str(path)],
        "report": ["report", str(path), "-o", str(tmp_path / "out" / "report.xlsx")],
    }[command]
    (tmp_path / "out").mkdir(exist_ok=True)
    if spec.refusal is not None:
        line = _one_error_line(capsys, argv)
        assert spec.refusal in line
        return
    status = main(argv)
    captured = capsys.readouterr()
    if command == "curves":
        # Not a scored sample (no score and label columns): refused in one line, row 1.
        assert status == 2 and captured.err.startswith("error: ")
        assert captured.err.count("\n") == 1 and "score" in captured.err
    else:
        assert status == 0, captured.err
    assert _peak_memory() < PEAK_MEMORY_BYTES


def test_a_dtd_in_the_workbook_relationships_is_named_in_that_part(tmp_path):
    # The entities sit in xl/_rels/workbook.xml.rels, read while xl/workbook.xml is: the
    # refusal must name the part that holds them.
    path = write_workbook(tmp_path / "rels.xlsx", [sheet_xml(HEADER_ROW + data_row(2, "A"))])
    with zipfile.ZipFile(path) as source:
        parts = {name: source.read(name) for name in source.namelist()}
    rels = "xl/_rels/workbook.xml.rels"
    text = parts[rels].decode()
    declaration_end = text.index("?>") + 2 if text.startswith("<?xml") else 0
    parts[rels] = (text[:declaration_end] + BILLION_LAUGHS + text[declaration_end:]).encode()
    with zipfile.ZipFile(path, "w") as target:
        for name, data in parts.items():
            target.writestr(name, data)
    with pytest.raises(WorkbookError, match=r"part xl/_rels/workbook\.xml\.rels declares a"):
        read_rounds(path)


def _packed_with_method(path, member: str, method: int) -> None:
    """``member`` of ``path`` marked as packed with zip method ``method`` (9: Deflate64,
    as Windows' compressed folders write large files), in both its headers."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    data[info.header_offset + 8 : info.header_offset + 10] = method.to_bytes(2, "little")
    entry = data.index(b"PK\x01\x02")
    while data[entry + 46 : entry + 46 + len(member)] != member.encode():
        entry = data.index(b"PK\x01\x02", entry + 4)
    data[entry + 10 : entry + 12] = method.to_bytes(2, "little")
    path.write_bytes(bytes(data))


def test_a_zip_method_python_lacks_is_said_in_words(tmp_path):
    # "is damaged and cannot be read (part xl/workbook.xml: NotImplementedError: That
    # compression method is not supported)" for a whole workbook packed with Deflate64
    # (fuzz 15).
    from core.workbook.rounds import read_rounds

    path = tmp_path / "deflate64.xlsx"
    path.write_bytes((SHARED_FIXTURES / "rounds_simple.xlsx").read_bytes())
    _packed_with_method(path, "xl/workbook.xml", 9)
    with pytest.raises(InputError) as refused:
        read_rounds(path)
    message = str(refused.value)
    assert "is packed with a zip method PR Planner cannot read" in message
    assert "NotImplementedError" not in message and "save it again" in message


def test_a_strict_open_xml_workbook_is_named_as_such(tmp_path):
    # "has no worksheet" for a workbook Excel saved as Strict Open XML, which LibreOffice
    # opens (fuzz 15): its parts use other names, which the reader does not know.
    from core.workbook.rounds import read_rounds

    source = SHARED_FIXTURES / "rounds_simple.xlsx"
    path = tmp_path / "strict.xlsx"
    names = {
        "http://schemas.openxmlformats.org/spreadsheetml/2006/main": (
            "http://purl.oclc.org/ooxml/spreadsheetml/main"
        ),
        "http://schemas.openxmlformats.org/officeDocument/2006/relationships": (
            "http://purl.oclc.org/ooxml/officeDocument/relationships"
        ),
    }
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(path, "w") as strict:
        for info in original.infolist():
            data = original.read(info)
            if info.filename.endswith((".xml", ".rels")):
                for old, new in names.items():
                    data = data.replace(old.encode(), new.encode())
            strict.writestr(info, data)
    with pytest.raises(InputError, match='saved as "Strict Open XML Spreadsheet"'):
        read_rounds(path)
