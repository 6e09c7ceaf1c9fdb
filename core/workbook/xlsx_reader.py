"""Rows of every worksheet in an ``.xlsx`` file, read safely and fast.

:func:`open_sheets` checks the file and yields one :class:`SheetRows` per worksheet: its
title and an iterator of :data:`RawRow` tuples (row number, values by column, formulas by
column), streamed from the zip while the caller consumes them.

Every XML part is read by expat, the XML parser of Python's standard library, streaming
and hardened:

* a document type declaration (DTD), the only place entities can be declared and so the
  door to entity bombs such as "billion laughs", is refused wherever it appears; no entity
  is ever expanded except the five XML predefines and character references, and an
  undefined one makes the file damaged;
* comments and processing instructions are skipped and a CDATA section is text, as in
  Excel and openpyxl;
* a malformed, unclosed or cut-short tag makes the file "damaged", found in one pass, so
  the time is linear in the part.

A sheet's rows come from one of two sources that give the same rows:

* the fast one (:class:`_ScannedSheetRows`): expat checks each chunk of the sheet without
  running any Python per element, then patterns read the checked bytes. On XML expat has
  accepted, with no comment, CDATA section, processing instruction, prefixed spreadsheet
  element or encoding other than UTF-8, every ``<`` starts a tag and every tag is closed,
  so the patterns read exactly what the parser read, in one linear pass;
* the streaming one (:meth:`_SheetReader._rows`): expat's callbacks on every element,
  about twice as slow; it takes over, from the row where the fast one stopped, as soon as
  the fast one meets anything else.

Each read also has a :class:`ReadBudget` derived from the file's size on disk and named in
every refusal: the parts may expand to at most :data:`MAX_EXPANSION` times the file
(at least :data:`MIN_EXPANSION_BUDGET`, never more than :data:`MAX_UNCOMPRESSED_BYTES`), a
part larger than :data:`LARGE_MEMBER_BYTES` may not expand more than
:data:`MAX_COMPRESSION_RATIO` times its compressed size, the sheets may hold at most
:data:`CELLS_PER_FILE_BYTE` cells per byte of file (at least :data:`MIN_CELL_BUDGET`) and
reading may take at most :data:`SECONDS_PER_MEGABYTE` seconds of processor time per MB
(at least :data:`MIN_SECONDS`). Declared sizes are enforced, not trusted: ``zipfile`` never inflates
a part beyond its declared size (the CRC check fails instead).

openpyxl's own read-only reader stays available (``engine="openpyxl"``) as the reference
the tests compare against; it runs after :func:`guard_workbook` has parsed every XML part
with the hardened parser. Readers that use openpyxl directly (sessions, labeled sheets)
call :func:`guard_workbook` first.

Every failure is a :class:`WorkbookError` naming the file; no expat, openpyxl or zipfile
exception leaks out.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import html
import math
import os
import posixpath
import re
import stat
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from xml.parsers import expat

from core.errors import InputError, os_error_cause

__all__ = [
    "CELLS_PER_FILE_BYTE",
    "LARGE_MEMBER_BYTES",
    "MAX_COMPRESSION_RATIO",
    "MAX_EXPANSION",
    "MAX_UNCOMPRESSED_BYTES",
    "MIN_CELL_BUDGET",
    "MIN_EXPANSION_BUDGET",
    "MIN_SECONDS",
    "SECONDS_PER_MEGABYTE",
    "PaddedNumber",
    "RawRow",
    "ReadBudget",
    "SheetRows",
    "WorkbookError",
    "check_workbook_file",
    "expansion_budget",
    "guard_workbook",
    "open_sheets",
]

#: No workbook may decompress to more than this, whatever its size.
MAX_UNCOMPRESSED_BYTES = 1 << 30
#: The parts together may expand to this many times the file's size: sheet XML compresses
#: 5 to 30 times, a zip bomb hundreds or thousands of times ...
MAX_EXPANSION = 200
#: ... except that any file may expand to this much (tiny files of very regular rows).
MIN_EXPANSION_BUDGET = 16 << 20
#: A part larger than this may not expand more than MAX_COMPRESSION_RATIO times its
#: compressed size, however small the total. As large as any file may expand to: a
#: labeling workbook PR Planner wrote, whose kept column repeated a long disclaimer,
#: expanded 451 times to 9 MB and was refused as a zip bomb (fuzz 16).
LARGE_MEMBER_BYTES = MIN_EXPANSION_BUDGET
MAX_COMPRESSION_RATIO = 200
#: A workbook holds at most this many parts (a real one holds tens).
MAX_ZIP_MEMBERS = 10_000
#: Cells (and rows, shared strings, styles) a workbook may hold per byte of file: real
#: workbooks hold 0.2 to 0.5 per byte, a sheet of empty formatted cells about 0.4 ...
CELLS_PER_FILE_BYTE = 2
#: ... and at least this many, whatever the file's size.
MIN_CELL_BUDGET = 2_000_000
#: Reading may take this many seconds per MB of file, and at least MIN_SECONDS.
SECONDS_PER_MEGABYTE = 4.0
MIN_SECONDS = 10.0
#: The shared strings are held in memory; refuse a table estimated larger than this.
MAX_STRING_TABLE_BYTES = 256 << 20
#: Longest text one cell, formula or shared string may hold (Excel's own limit is 32,767).
MAX_TEXT_CHARACTERS = 1_000_000
#: Excel's last column is XFD (16,384); three letters reach ZZZ.
_MAX_COLUMN_LETTERS = 3

_CHUNK_BYTES = 1 << 16
_NS = " "  # expat's separator between a namespace and a local name
_MAIN_URI = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_MAIN = _MAIN_URI + _NS
_OFFICE_RELATIONSHIPS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PACKAGE_RELATIONSHIPS = "http://schemas.openxmlformats.org/package/2006/relationships" + _NS
_CONTENT_TYPES = "http://schemas.openxmlformats.org/package/2006/content-types" + _NS
_WORKBOOK_TYPES = (
    "application/vnd.ms-excel.template.macroEnabled.main+xml",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml",
    "application/vnd.ms-excel.sheet.macroEnabled.main+xml",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml",
)
_SHARED_STRINGS_TYPE = (
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"
)
_STYLES_PART = "xl/styles.xml"
_WINDOWS_EPOCH = dt.datetime(1899, 12, 30)
_MAC_EPOCH = dt.datetime(1904, 1, 1)


class WorkbookError(InputError):
    """A file that cannot be read as an Excel workbook at all.

    The message names the file and says what is wrong with it (missing, a folder, empty,
    not an ``.xlsx``, damaged, encrypted, beyond its budget), so the command line and the
    desktop app can show it unchanged.
    """


#: A raw row: (row number, values by 0-based column, formulas by column or ``None``).
#: ``formulas[col] = (formula text, has a cached value)``; only cells holding formulas appear.
RawRow = tuple[int, Sequence[object], "dict[int, tuple[str, bool]] | None"]


@dataclass(frozen=True, slots=True)
class SheetRows:
    """One worksheet: its title, its rows and the workbook's date epoch.

    ``hidden_rows`` fills in as ``rows`` is read: the numbers of the rows the sheet hides
    (hidden by hand, by a filter or in a collapsed outline); ``merged_ranges`` once the
    rows are read to the end. openpyxl's read-only reader (``engine="openpyxl"``) says
    neither, and leaves both empty.
    """

    title: str
    rows: Iterator[RawRow]
    epoch: dt.datetime
    hidden_rows: set[int] = field(default_factory=set)
    #: The sheet's merged ranges (``"F8:F9"``), once ``rows`` is read to its end.
    merged_ranges: list[str] = field(default_factory=list)
    #: Whether ``rows`` may hold :class:`PaddedNumber` cells (``open_sheets``'s
    #: ``padded_numbers``, and the workbook has such a format).
    pads_numbers: bool = False


# --- budgets -------------------------------------------------------------------------------


def _size_text(size: float) -> str:
    """``2.9 MB``, ``870 MB``, ``5 KB``: sizes as people read them."""
    if size < 1e6:
        return f"{max(size / 1e3, 1):,.0f} KB"
    if size < 1e7:
        return f"{size / 1e6:.1f} MB"
    return f"{size / 1e6:,.0f} MB"


def expansion_budget(file_size: int) -> int:
    """Bytes a workbook of ``file_size`` bytes may decompress to (see the module docstring)."""
    return min(MAX_UNCOMPRESSED_BYTES, max(MIN_EXPANSION_BUDGET, MAX_EXPANSION * file_size))


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadBudget:
    """What reading one workbook may cost, derived from its size on disk.

    Attributes
    ----------
    path : Path
        The workbook.
    file_bytes : int
        Its size on disk.
    uncompressed_bytes : int
        What all its parts together may decompress to.
    cells : int
        Cells, rows, shared strings and styles the parts read may hold together.
    seconds : float
        Processor time the read may take.
    """

    path: Path
    file_bytes: int
    uncompressed_bytes: int
    cells: int
    seconds: float

    @classmethod
    def for_file(cls, path: Path, file_bytes: int) -> ReadBudget:
        return cls(
            path=path,
            file_bytes=file_bytes,
            uncompressed_bytes=expansion_budget(file_bytes),
            cells=max(MIN_CELL_BUDGET, CELLS_PER_FILE_BYTE * file_bytes),
            seconds=max(MIN_SECONDS, SECONDS_PER_MEGABYTE * file_bytes / 1e6),
        )

    def size_rule(self) -> str:
        """Why the expansion budget is what it is, in words."""
        if self.uncompressed_bytes == MAX_UNCOMPRESSED_BYTES:
            return f"more than the {_size_text(MAX_UNCOMPRESSED_BYTES)} any workbook may take"
        if self.uncompressed_bytes == MIN_EXPANSION_BUDGET:
            return (
                f"more than the {_size_text(MIN_EXPANSION_BUDGET)} a small workbook may "
                f"expand to (its file is {_size_text(self.file_bytes)})"
            )
        return f"more than {MAX_EXPANSION} times its {_size_text(self.file_bytes)} file"


class _Meter:
    """Spends one :class:`ReadBudget`: the cells read so far and the deadline."""

    __slots__ = ("budget", "cells", "deadline", "started")

    def __init__(self, budget: ReadBudget):
        self.budget = budget
        self.cells = 0
        # Processor time, not wall-clock time: the work is what is bounded, and a busy
        # machine must not make a sound file look hostile.
        self.started = time.process_time()
        self.deadline = self.started + budget.seconds

    def charge(self, cells: int, where: str) -> None:
        """Count ``cells`` more and check both limits; ``where`` names the part or sheet."""
        self.cells += cells
        if self.cells > self.budget.cells:
            raise WorkbookError(
                f"{self.budget.path}: {where} holds more than {self.budget.cells:,} cells, "
                f"more than a {_size_text(self.budget.file_bytes)} workbook may hold "
                f"({CELLS_PER_FILE_BYTE} per byte of file, at least {MIN_CELL_BUDGET:,}); "
                "refusing to read further"
            )
        if time.process_time() > self.deadline:
            raise WorkbookError(
                f"{self.budget.path}: reading stopped in {where} after "
                f"{self.budget.seconds:,.0f} s of processor time, the most allowed for a "
                f"{_size_text(self.budget.file_bytes)} file ({SECONDS_PER_MEGABYTE:g} s per "
                f"MB, at least {MIN_SECONDS:g} s); it holds far more than its size suggests"
            )


# --- the hardened parser -------------------------------------------------------------------


class _Refused(Exception):
    """An XML part declares a DTD or entities."""


class _Damaged(Exception):
    """An XML part is well-formed but not what its place in a workbook requires."""


def _refuse_declaration(*_args) -> None:
    raise _Refused("declares a document type (DTD) or entities, which workbooks never need")


def _hardened_parser(*, namespaces: bool = True) -> expat.XMLParserType:
    """An expat parser that refuses DTDs and entity declarations.

    With ``namespaces``, element names come as ``namespace + " " + local name``. Comments
    and processing instructions have no handler, so they are skipped; CDATA sections reach
    the character data handler as text.
    """
    parser = expat.ParserCreate(namespace_separator=_NS) if namespaces else expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = _refuse_declaration
    parser.EntityDeclHandler = _refuse_declaration
    parser.buffer_text = True
    parser.buffer_size = _CHUNK_BYTES
    return parser


#: Bytes of XML allowed from one ``<`` to the next: one tag and the text after it, at most
#: the longest text a cell may hold in UTF-8, and some. expat builds a start tag's
#: attributes as one dict before any handler sees them: a 9 MB file whose one row tag held
#: 4 million attributes took 980 MB. (``<`` cannot stand inside an attribute value, ``>``
#: can: counting from ``>`` could be dodged.)
_MAX_BYTES_BETWEEN_TAGS = 4 * MAX_TEXT_CHARACTERS + (64 << 10)


class _TagEndGuard:
    """Refuses a part with more than :data:`_MAX_BYTES_BETWEEN_TAGS` bytes without a
    ``<``, before the parser is given them (fed the same chunks)."""

    def __init__(self, part: str) -> None:
        self.part = part
        self.since = 0

    def check(self, chunk: bytes) -> None:
        start = chunk.rfind(b"<")
        self.since = self.since + len(chunk) if start < 0 else len(chunk) - start
        if self.since > _MAX_BYTES_BETWEEN_TAGS:
            raise _Damaged(
                f"one place in it holds more than {_MAX_BYTES_BETWEEN_TAGS / 2**20:.0f} MB "
                "without a break, more than any cell of a workbook holds (part "
                f"{self.part}, one XML tag and its text)"
            )


def _text_collector(limit_message: Callable[[], str]):
    """(data handler, take, start) for an element's character data, capped in length."""
    pieces: list[str] = []
    state = [False, 0]  # collecting, characters so far

    def data(text: str) -> None:
        if state[0]:
            state[1] += len(text)
            if state[1] > MAX_TEXT_CHARACTERS:
                raise _Damaged(limit_message())
            pieces.append(text)

    def start() -> None:
        pieces.clear()
        state[0] = True
        state[1] = 0

    def take() -> str:
        state[0] = False
        text = "".join(pieces)
        pieces.clear()
        return text

    return data, start, take


@contextlib.contextmanager
def _part_errors(path: Path, part: str):
    """Turn whatever reading ``part`` raises into a :class:`WorkbookError`."""
    try:
        yield
    except InputError:
        raise
    except _Refused as exc:
        where = getattr(exc, "part", part)  # the part parsed (a .rels inside ``part``)
        raise WorkbookError(f"{path} cannot be read safely: part {where} {exc}") from None
    except _Damaged as exc:
        raise WorkbookError(
            f"{path} is damaged: {exc}; open it in Excel or LibreOffice to repair it"
        ) from None
    except expat.ExpatError as exc:
        raise WorkbookError(
            f"{path} is damaged: part {getattr(exc, 'part', part)} is not well-formed XML "
            f"({expat.ErrorString(exc.code)} at line {exc.lineno}, column {exc.offset}); "
            "open it in Excel or LibreOffice to repair it"
        ) from None
    except NotImplementedError:
        # Deflate64 (Windows' compressed folders write it for large files) or an AES zip:
        # the workbook is whole, only packed in a way Python's zip reader lacks (fuzz 15).
        raise WorkbookError(
            f"{path} is packed with a zip method PR Planner cannot read (part {part}; "
            "Deflate64 or an encryption, as some zip tools write); open it in Excel or "
            "LibreOffice and save it again, then use that copy"
        ) from None
    except zlib.error:
        raise WorkbookError(
            f"{path} is damaged: part {part} holds compressed data that cannot be unpacked; "
            "open it in Excel or LibreOffice to repair it"
        ) from None
    except (OSError, zipfile.BadZipFile, EOFError, ValueError, RuntimeError) as exc:
        raise WorkbookError(
            f"{path} is damaged and cannot be read (part {part}: {_plain(exc)})"
        ) from None
    except MemoryError:
        raise WorkbookError(
            f"{path}: part {part} needs more memory than this computer has; refusing to read it"
        ) from None


def _is_strict(archive: zipfile.ZipFile, workbook_part: str) -> bool:
    """Whether the workbook part uses the Strict Open XML names (a bounded look)."""
    try:
        with archive.open(workbook_part) as stream:
            head = stream.read(1 << 16)
    except (OSError, KeyError, zipfile.BadZipFile, RuntimeError, EOFError, zlib.error):
        return False
    return b"purl.oclc.org/ooxml/spreadsheetml" in head


def _plain(exc: BaseException) -> str:
    text = str(exc).strip().strip("'\"")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _parse_part(archive: zipfile.ZipFile, part: str, parser, meter: _Meter) -> None:
    """Feed ``part`` to ``parser`` in chunks, checking the time between chunks.

    A refusal or a parse error names ``part`` (``exc.part``): a relationships part read
    while another part is being read is named for what it is.
    """
    try:
        guard = _TagEndGuard(part)
        with archive.open(part) as stream:
            while chunk := stream.read(_CHUNK_BYTES):
                guard.check(chunk)
                parser.Parse(chunk, False)
                meter.charge(0, f"part {part}")
            parser.Parse(b"", True)
    except (_Refused, expat.ExpatError) as exc:
        if not hasattr(exc, "part"):
            exc.part = part  # type: ignore[union-attr]
        raise


# --- the package: content types, workbook, relationships, styles, shared strings -----------


@dataclass(frozen=True, slots=True)
class _SheetEntry:
    title: str
    part: str


@dataclass(frozen=True, slots=True)
class _Book:
    sheets: tuple[_SheetEntry, ...]
    epoch: dt.datetime
    shared_strings: Sequence[str]
    date_styles: frozenset[str]
    timedelta_styles: frozenset[str]
    #: Styles showing whole numbers zero-padded to a width (``000000``), by index, when
    #: asked for (:func:`open_sheets` ``padded_numbers``); they are also in ``date_styles``,
    #: the special styles both row sources hand to ``_SheetReader._date_value``.
    padded_styles: Mapping[str, int] = field(default_factory=dict)


def _counting_handler(meter: _Meter, part: str, handler=None):
    """A start-element handler that charges one cell per element, then calls ``handler``."""
    counted = [0]

    def start(name, attributes):
        counted[0] += 1
        if counted[0] >= 4096:
            meter.charge(counted[0], f"part {part}")
            counted[0] = 0
        if handler is not None:
            handler(name, attributes)

    return start


def _content_types(archive: zipfile.ZipFile, meter: _Meter) -> tuple[str | None, str | None]:
    """(workbook part, shared strings part) named by ``[Content_Types].xml``."""
    overrides: list[tuple[str, str]] = []
    defaults: set[str] = set()

    def start(name, attributes):
        if name == _CONTENT_TYPES + "Override":
            overrides.append((attributes.get("PartName", ""), attributes.get("ContentType", "")))
        elif name == _CONTENT_TYPES + "Default":
            defaults.add(attributes.get("ContentType", ""))

    parser = _hardened_parser()
    parser.StartElementHandler = _counting_handler(meter, "[Content_Types].xml", start)
    _parse_part(archive, "[Content_Types].xml", parser, meter)
    workbook = next(
        (name for kind in _WORKBOOK_TYPES for name, found in overrides if found == kind), None
    )
    if workbook is None and defaults & set(_WORKBOOK_TYPES):
        workbook = "/xl/workbook.xml"  # some writers reassign the default for XML parts
    strings = next((name for name, found in overrides if found == _SHARED_STRINGS_TYPE), None)
    return (workbook.lstrip("/") if workbook else None, strings.lstrip("/") if strings else None)


def _relationships(archive: zipfile.ZipFile, part: str, meter: _Meter) -> dict[str, tuple]:
    """Id -> (type, target part) of ``part``'s relationships (targets made absolute)."""
    folder, name = posixpath.split(part)
    rels_part = posixpath.join(folder, "_rels", name + ".rels")
    found: dict[str, tuple[str, str]] = {}
    if rels_part not in archive.NameToInfo:
        return found

    def start(tag, attributes):
        if tag == _PACKAGE_RELATIONSHIPS + "Relationship":
            if attributes.get("TargetMode") == "External":
                return
            target = attributes.get("Target", "")
            if target.startswith("/"):
                target = target[1:]
            else:
                target = posixpath.normpath(posixpath.join(folder, target))
            found[attributes.get("Id", "")] = (attributes.get("Type", ""), target)

    parser = _hardened_parser()
    parser.StartElementHandler = _counting_handler(meter, rels_part, start)
    _parse_part(archive, rels_part, parser, meter)
    return found


def _workbook_sheets(
    archive: zipfile.ZipFile, part: str, meter: _Meter
) -> tuple[list[tuple[str, str]], bool]:
    """([(sheet title, relationship id)], uses the 1904 date system) from workbook.xml."""
    sheets: list[tuple[str, str]] = []
    date1904 = [False]
    relationship_id = _OFFICE_RELATIONSHIPS + _NS + "id"

    def start(name, attributes):
        if name == _MAIN + "sheet":
            identifier = attributes.get(relationship_id)
            if identifier:  # openpyxl drops sheets without one, with a warning
                sheets.append((attributes.get("name", ""), identifier))
        elif name == _MAIN + "workbookPr":
            date1904[0] = attributes.get("date1904", "").strip().lower() in ("1", "true")

    parser = _hardened_parser()
    parser.StartElementHandler = _counting_handler(meter, part, start)
    _parse_part(archive, part, parser, meter)
    return sheets, date1904[0]


# openpyxl's number-format rules (openpyxl.styles.numbers), restated so that reading a
# workbook does not import openpyxl (a sixth of the app's start-up); the test
# tests/core/test_xlsx_reader.py checks them against openpyxl's own functions.
#: Built-in format ids that show a date, a time or a duration (Excel's fixed table).
_BUILTIN_DATE_FORMATS = {
    14: "mm-dd-yy",
    15: "d-mmm-yy",
    16: "d-mmm",
    17: "mmm-yy",
    18: "h:mm AM/PM",
    19: "h:mm:ss AM/PM",
    20: "h:mm",
    21: "h:mm:ss",
    22: "m/d/yy h:mm",
    45: "mm:ss",
    46: "[h]:mm:ss",
    47: "mmss.0",
}
#: Quoted literals and bracketed locale/colour codes, which never make a format a date.
_FORMAT_LITERALS = re.compile(r'".*?"|\[(?!hh?\]|mm?\]|ss?\])[^\]]*\]')
_DATE_LETTER = re.compile(r"(?<![_\\])[dmhysDMHYS]")
_DURATION = re.compile(
    r"\[hh?\](:mm(:ss(\.0*)?)?)?|\[mm?\](:ss(\.0*)?)?|\[ss?\](\.0*)?", re.IGNORECASE
)


def from_excel(
    serial: float, epoch: dt.datetime = _WINDOWS_EPOCH, *, duration: bool = False
) -> dt.datetime | dt.time | dt.timedelta:
    """The date, time of day or duration an Excel serial number stands for.

    openpyxl's ``openpyxl.utils.datetime.from_excel``, restated (see above): serials below
    1 are times of day, and in the 1900 date system serials below 60 are moved by one day
    for Excel's phantom 29 February 1900. Durations are rounded to milliseconds.

    Raises
    ------
    OverflowError, ValueError
        The serial is outside the dates Python can hold.
    """
    if duration:
        span = dt.timedelta(days=serial)
        if span.microseconds:
            span = dt.timedelta(
                seconds=span.total_seconds() // 1, microseconds=round(span.microseconds, -3)
            )
        return span
    day, fraction = divmod(serial, 1)
    offset = dt.timedelta(milliseconds=round(fraction * 86_400 * 1000))
    if 0 <= serial < 1 and offset.days == 0:
        minutes, seconds = divmod(offset.seconds, 60)
        hours, minutes = divmod(minutes, 60)
        return dt.time(hours, minutes, seconds, offset.microseconds)
    if 0 < serial < 60 and epoch == _WINDOWS_EPOCH:
        day += 1
    return epoch + dt.timedelta(days=day) + offset


def is_date_format(code: str | None) -> bool:
    """True when number format ``code`` shows a date or time (openpyxl's rule)."""
    if code is None:
        return False
    first = _FORMAT_LITERALS.sub("", code.split(";")[0])
    return _DATE_LETTER.search(first) is not None


def is_duration_format(code: str | None) -> bool:
    """True when number format ``code`` shows a duration such as ``[h]:mm`` (openpyxl's rule)."""
    return code is not None and _DURATION.search(code.split(";")[0]) is not None


def _date_styles(
    archive: zipfile.ZipFile, meter: _Meter
) -> tuple[frozenset[str], frozenset[str], dict[str, int]]:
    """Cell style indices (as the ``s`` attribute spells them) showing dates, durations,
    and whole numbers zero-padded to a width (``000000``: the width)."""
    if _STYLES_PART not in archive.NameToInfo:
        return frozenset(), frozenset(), {}

    custom: dict[int, str] = {}
    cell_formats: list[int] = []
    depth = [0]  # > 0 inside <cellXfs>

    def number(text: str | None) -> int:
        try:
            return int(text) if text else 0
        except ValueError:
            return 0

    def start(name, attributes):
        if name == _MAIN + "numFmt":
            custom[number(attributes.get("numFmtId"))] = attributes.get("formatCode", "")
        elif name == _MAIN + "cellXfs":
            depth[0] += 1
        elif name == _MAIN + "xf" and depth[0]:
            cell_formats.append(number(attributes.get("numFmtId")))

    def end(name):
        if name == _MAIN + "cellXfs":
            depth[0] -= 1

    parser = _hardened_parser()
    parser.StartElementHandler = _counting_handler(meter, _STYLES_PART, start)
    parser.EndElementHandler = end
    _parse_part(archive, _STYLES_PART, parser, meter)
    dates: set[str] = set()
    durations: set[str] = set()
    padded: dict[str, int] = {}
    for index, format_id in enumerate(cell_formats):
        code = custom[format_id] if format_id in custom else _BUILTIN_DATE_FORMATS.get(format_id)
        if is_date_format(code):
            dates.add(str(index))
        if is_duration_format(code):
            durations.add(str(index))
        if code is not None and _PADDED_FORMAT.fullmatch(code):
            padded[str(index)] = len(code)
    return frozenset(dates), frozenset(durations), padded


#: A number format that shows a whole number zero-padded to its length ("000000").
_PADDED_FORMAT = re.compile("0{2,}")


def _shared_strings(archive: zipfile.ZipFile, part: str | None, meter: _Meter) -> list[str]:
    """The shared string table, as openpyxl reads it (runs joined, phonetic text left out)."""
    strings: list[str] = []
    if part is None or part not in archive.NameToInfo:
        return strings
    data, start_text, take_text = _text_collector(
        lambda: (
            f"shared string {len(strings) + 1:,} is longer than {MAX_TEXT_CHARACTERS:,} characters"
        )
    )
    # [plain text or None, run texts, inside a run, inside phonetic text, memory estimate]
    item: list = [None, [], False, False, 0]
    si, t, r, phonetic = _MAIN + "si", _MAIN + "t", _MAIN + "r", _MAIN + "rPh"
    per_string = 56  # bytes a short str and its list slot take

    def start(name, attributes):
        if name == t:
            start_text()
        elif name == si:
            item[0] = None
            item[1] = []
        elif name == r:
            item[2] = True
        elif name == phonetic:
            item[3] = True

    def end(name):
        if name == t:
            text = take_text()
            if not item[3]:
                if item[2]:
                    item[1].append(text)
                else:
                    item[0] = text
        elif name == si:
            text = (item[0] or "") + "".join(item[1])
            text = text.replace("x005F_", "")  # what openpyxl does with Excel's escapes
            item[4] += len(text) + per_string
            if item[4] > MAX_STRING_TABLE_BYTES:
                raise WorkbookError(
                    f"{meter.budget.path}: its shared strings would take more than "
                    f"{_size_text(MAX_STRING_TABLE_BYTES)} of memory; refusing to read it"
                )
            strings.append(text)
        elif name == r:
            item[2] = False
        elif name == phonetic:
            item[3] = False

    parser = _hardened_parser()
    parser.StartElementHandler = _counting_handler(meter, part, start)
    parser.EndElementHandler = end
    parser.CharacterDataHandler = data
    _parse_part(archive, part, parser, meter)
    return strings


def _read_book(
    path: Path, archive: zipfile.ZipFile, meter: _Meter, padded_numbers: bool = False
) -> _Book:
    """Everything but the sheets' rows: which sheets, their parts, strings, date styles
    (and, with ``padded_numbers``, the zero-padding styles)."""
    with _part_errors(path, "[Content_Types].xml"):
        if "[Content_Types].xml" not in archive.NameToInfo:
            if "content.xml" in archive.NameToInfo or path.suffix.casefold() == ".ods":
                raise WorkbookError(
                    f"{path} is an OpenDocument spreadsheet (.ods), not an Excel workbook "
                    "(.xlsx); in LibreOffice use File › Save As… with the type Excel "
                    "2007-365 (.xlsx), then give that file"
                )
            raise WorkbookError(
                f"{path} is not a readable Excel workbook (.xlsx): it is a zip file without "
                "the parts of a workbook"
            )
        workbook_part, strings_part = _content_types(archive, meter)
    if workbook_part is None or workbook_part not in archive.NameToInfo:
        raise WorkbookError(
            f"{path} is not a readable Excel workbook (.xlsx): it holds no workbook part"
        )
    with _part_errors(path, workbook_part):
        entries, date1904 = _workbook_sheets(archive, workbook_part, meter)
        relationships = _relationships(archive, workbook_part, meter)
    sheets: list[_SheetEntry] = []
    for title, identifier in entries:
        if identifier not in relationships:
            raise WorkbookError(
                f"{path} is damaged: sheet {title!r} points to a part that is not in the "
                "file; open it in Excel or LibreOffice to repair it"
            )
        kind, target = relationships[identifier]
        # A sheet whose part is missing is left out (the session reader names a missing
        # Inputs sheet: a rounds workbook with one broken sheet stays readable).
        if target in archive.NameToInfo and "chartsheet" not in kind:
            sheets.append(_SheetEntry(title=title, part=target))
    if not sheets:
        if _is_strict(archive, workbook_part):
            # Excel's "Strict Open XML Spreadsheet": other names for the same parts, which
            # this reader does not know (it was "has no worksheet"; fuzz 15).
            raise WorkbookError(
                f'{path} is saved as "Strict Open XML Spreadsheet", which PR Planner does not '
                'read; save it again as "Excel Workbook (.xlsx)" and use that copy'
            )
        raise WorkbookError(
            f"{path} has no worksheet (only chart sheets, or none); there are no rows to read"
        )
    with _part_errors(path, _STYLES_PART):
        date_styles, timedelta_styles, padded = _date_styles(archive, meter)
    if not padded_numbers:
        padded = {}
    with _part_errors(path, strings_part or "sharedStrings"):
        strings = _shared_strings(archive, strings_part, meter)
    return _Book(
        sheets=tuple(sheets),
        epoch=_MAC_EPOCH if date1904 else _WINDOWS_EPOCH,
        shared_strings=strings,
        date_styles=date_styles | frozenset(padded),
        timedelta_styles=timedelta_styles,
        padded_styles=padded,
    )


# --- cell values ---------------------------------------------------------------------------

#: Python refuses to turn longer digit strings into ints (``sys.get_int_max_str_digits``).
_MAX_INT_DIGITS = 4000


class PaddedNumber(str):
    """A whole number as a zero-padding format shows it (``"000388"``); ``number`` is the
    number (``388``): what a column other than the ids means by it."""

    number: int


def _padded(number: int | float, width: int) -> int | float | str:
    """A whole number >= 0 as a ``0``-padded format shows it (``388`` in ``000000``:
    ``PaddedNumber("000388")``); any other number as it is."""
    if isinstance(number, float):
        if not number.is_integer():
            return number
        number = int(number)
    if number < 0:
        return number
    padded = PaddedNumber(str(number).zfill(width))
    padded.number = number
    return padded


def _number(raw: str) -> int | float | str:
    """A numeric cell's value, as openpyxl casts it; text that is no number (``abc``,
    5,000 digits) stays text, so one odd cell refuses its row, not the whole workbook."""
    try:
        if "." in raw or "E" in raw or "e" in raw:
            return float(raw)
        if len(raw) > _MAX_INT_DIGITS:
            return raw
        return int(raw)
    except ValueError:
        try:
            return float(raw)  # "inf", "nan": refused later as counts
        except ValueError:
            return raw


def _column_index(letters: str) -> int:
    """0-based column of ``"A"``, ``"AB"``, ... (any case)."""
    index = 0
    for letter in letters.upper():
        index = index * 26 + (ord(letter) - 64)
    return index - 1


_CELL_REFERENCE = re.compile(rf"\$?([A-Za-z]{{1,{_MAX_COLUMN_LETTERS}}})\$?\d+")


#: Rows of an Excel sheet (and of LibreOffice's since 7.4): a larger row number is damage.
MAX_SHEET_ROWS = 1_048_576


def _row_number(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not value.is_integer():  # NaN and infinities are not either
            raise _Damaged(f"a row is numbered {text[:20]!r}, which is not a row number") from None
        number = int(value)
    if not 1 <= number <= MAX_SHEET_ROWS:
        raise _Damaged(
            f"a row is numbered {text[:20]}, outside the {MAX_SHEET_ROWS:,} rows a sheet has"
        )
    return number


class _SheetReader:
    """Streams the rows of one worksheet part through the hardened parser."""

    def __init__(self, path: Path, archive, entry: _SheetEntry, book: _Book, meter: _Meter):
        self.path = path
        self.archive = archive
        self.entry = entry
        self.book = book
        self.meter = meter
        #: Filled as the rows are read (:class:`SheetRows`).
        self.hidden_rows: set[int] = set()
        self.merged_ranges: list[str] = []
        self._date_cache: dict[tuple[str, str], object] = {}
        self._shared_formulas: dict[str, tuple[str | None, str]] = {}

    def rows(self) -> Iterator[RawRow]:
        """The rows, from :class:`_ScannedSheetRows` while its patterns read the XML
        exactly, else (from where they stopped) from the callback reader."""
        where = f"sheet {self.entry.title!r}"
        with _part_errors(self.path, f"{self.entry.part} ({where})"):
            emitted = 0
            try:
                for row in _ScannedSheetRows(self, where):
                    yield row
                    emitted += 1
                return
            except _UseStreamingReader:
                pass
            self._shared_formulas.clear()
            rows = self._rows(where)
            for _ in zip(range(emitted), rows, strict=False):
                pass  # already given
            yield from rows

    def _rows(self, where: str) -> Iterator[RawRow]:
        # One tight state machine over expat's callbacks: a million cells pass through
        # ``start`` and ``end``, so the state lives in closure variables and the common
        # shapes (a number in <v>, an inline string) come first.
        shared_strings = self.book.shared_strings
        date_styles = self.book.date_styles
        hidden_rows = self.hidden_rows
        number = _number
        date_value = self._date_value
        typed_value = self._typed_value
        column_cache: dict[str, int] = {}
        digits = "0123456789"
        # Element names as this part spells them (with the prefix its root binds to the
        # spreadsheet namespace); set on the root element. Namespace processing in expat
        # would cost a fifth of the read.
        c_tag = v_tag = row_tag = f_tag = is_tag = t_tag = r_tag = phonetic_tag = "\0"
        sheet_data_tag = "\0"

        out: list[RawRow] = []
        row_number = 0
        values: list[object] = []
        formulas: dict[int, tuple[str, bool]] | None = None
        column = -1
        cell_reference: str | None = None
        cell_type: str | None = None
        cell_style: str | None = None
        value_text: str | None = None
        formula_attributes: dict[str, str] | None = None
        formula_text: str | None = None
        inline: list | None = None  # [plain text, run texts] of an inline string
        in_run = in_phonetic = in_cell = in_row = False
        text = ""
        elements = 0
        finished = False

        def column_of(reference: str) -> int:
            match = _CELL_REFERENCE.fullmatch(reference)
            if match is None:
                raise _Damaged(
                    f"{where}, row {row_number}: {reference[:20]!r} is not a cell reference"
                )
            found = column_cache[reference.rstrip(digits)] = _column_index(match.group(1))
            return found

        def start(name, attributes):
            nonlocal elements, column, cell_reference, cell_type, cell_style, value_text
            nonlocal formula_attributes, inline, in_cell, text
            nonlocal row_number, values, formulas, in_run, in_phonetic, in_row
            if name == c_tag:
                elements += 1
                cell_reference = attributes.get("r")
                if cell_reference is None:
                    column += 1
                else:
                    column = column_cache.get(cell_reference.rstrip(digits))
                    if column is None:
                        column = column_of(cell_reference)
                cell_type = attributes.get("t")
                cell_style = attributes.get("s")
                value_text = formula_attributes = inline = None
                in_cell = True
                text = ""
            elif name == v_tag:
                text = ""
            elif name == row_tag:
                elements += 1
                number_text = attributes.get("r")
                if in_row:  # a lost </row>: its cells would be mixed with the next row's
                    raise _Damaged(
                        f"{where}: a row starts inside row {row_number} (its </row> is missing)"
                    )
                in_row = True
                row_number = row_number + 1 if number_text is None else _row_number(number_text)
                if attributes.get("hidden") in ("1", "true"):
                    hidden_rows.add(row_number)
                values = []
                formulas = None
                column = -1
                text = ""
            elif name == is_tag:
                if in_cell:
                    inline = [None, []]
            elif name == t_tag:
                text = ""
            elif name == f_tag:
                if in_cell:
                    formula_attributes = attributes
                text = ""
            elif name == r_tag:
                in_run = True
            elif name == phonetic_tag:
                in_phonetic = True

        def end(name):
            nonlocal value_text, formula_text, in_cell, formulas, in_run
            nonlocal in_phonetic, finished, in_row
            if name == c_tag:
                in_cell = False
                if cell_type is None or cell_type == "n":
                    if not value_text:
                        value = None
                    elif cell_style is not None and cell_style in date_styles:
                        value = date_value(value_text, cell_style)
                    else:
                        # _number, inlined: this line runs for most of a million cells.
                        try:
                            if "." in value_text or "E" in value_text or "e" in value_text:
                                value = float(value_text)
                            elif len(value_text) > _MAX_INT_DIGITS:
                                value = value_text
                            else:
                                value = int(value_text)
                        except ValueError:
                            value = number(value_text)
                elif cell_type == "inlineStr":
                    value = None if inline is None else (inline[0] or "") + "".join(inline[1])
                else:
                    value = typed_value(value_text, cell_type, shared_strings, where)
                if formula_attributes is not None:
                    if formulas is None:
                        formulas = {}
                    formulas[column] = (
                        self._formula(formula_attributes, formula_text, cell_reference),
                        value is not None,
                    )
                if value is not None:
                    size = len(values)
                    if column == size:
                        values.append(value)
                    elif column > size:
                        values.extend([None] * (column - size))
                        values.append(value)
                    else:
                        values[column] = value
            elif name == v_tag:
                if value_text is None and in_cell:  # openpyxl reads the first <v>
                    value_text = text
            elif name == row_tag:
                in_row = False
                out.append((row_number, values, formulas))
            elif name == t_tag:
                if inline is not None and not in_phonetic:
                    if in_run:
                        inline[1].append(text)
                    else:
                        inline[0] = text
            elif name == f_tag:
                formula_text = text
            elif name == r_tag:
                in_run = False
            elif name == phonetic_tag:
                in_phonetic = False
            elif name == sheet_data_tag:
                finished = True

        def data(piece: str) -> None:
            # Text since the last start of a cell, row, value, formula or text element;
            # the end of <v>, <f> or <t> takes it.
            nonlocal text
            text = text + piece if text else piece
            if len(text) > MAX_TEXT_CHARACTERS:
                raise _Damaged(
                    f"{where}, row {row_number}: a cell holds more than "
                    f"{MAX_TEXT_CHARACTERS:,} characters"
                )

        def root(name, attributes):
            nonlocal c_tag, v_tag, row_tag, f_tag, is_tag, t_tag, r_tag, phonetic_tag
            nonlocal sheet_data_tag
            prefix = next(
                (
                    key[6:] + ":" if key.startswith("xmlns:") else ""
                    for key, value in attributes.items()
                    if value == _MAIN_URI and (key == "xmlns" or key.startswith("xmlns:"))
                ),
                None,
            )
            if prefix is not None:
                c_tag, v_tag, row_tag, f_tag = (
                    prefix + "c",
                    prefix + "v",
                    prefix + "row",
                    prefix + "f",
                )
                is_tag, t_tag, r_tag = prefix + "is", prefix + "t", prefix + "r"
                phonetic_tag, sheet_data_tag = prefix + "rPh", prefix + "sheetData"
            parser.StartElementHandler = start

        parser = _hardened_parser(namespaces=False)
        parser.StartElementHandler = root
        parser.EndElementHandler = end
        parser.CharacterDataHandler = data
        charge = self.meter.charge
        charged = 0
        guard = _TagEndGuard(self.entry.part)
        with self.archive.open(self.entry.part) as stream:
            while chunk := stream.read(_CHUNK_BYTES):
                guard.check(chunk)
                parser.Parse(chunk, False)
                charge(elements - charged, where)
                charged = elements
                if out:
                    yield from out
                    out.clear()
                if finished:
                    # Nothing after </sheetData> holds cells: stop reading, but for the
                    # merged ranges that follow.
                    self.merged_ranges[:] = _merged_ranges(chunk, stream)
                    return
            parser.Parse(b"", True)
        yield from out

    def _date_value(self, raw: str, style: str):
        key = (raw, style)
        converted = self._date_cache.get(key)
        if converted is None:
            number = _number(raw)
            if isinstance(number, str):
                return number
            width = self.book.padded_styles.get(style)
            if width is not None:
                converted = self._date_cache[key] = _padded(number, width)
            else:
                converted = self._date_cache[key] = self._excel_date(number, style)
        return converted

    def _excel_date(self, number: float, style: str):
        duration = style in self.book.timedelta_styles
        if not math.isfinite(number) or (number < 0 and not duration):
            return "#VALUE!"  # Excel shows #### for a date before its first day
        try:
            return from_excel(number, self.book.epoch, duration=duration)
        except (OverflowError, ValueError):
            return "#VALUE!"  # what openpyxl shows for a date serial out of range

    def _typed_value(self, raw, data_type, shared_strings, where):
        if not raw:
            return None
        if data_type == "s":
            try:
                index = int(raw)
                if index < 0:  # Python would count from the end: a made-up value
                    raise IndexError(index)
                return shared_strings[index]
            except (ValueError, IndexError):
                raise _Damaged(
                    f"{where}, a cell refers to shared string {raw[:20]!r}, but the workbook "
                    f"holds {len(shared_strings):,}"
                ) from None
        if data_type == "b":
            try:
                return bool(int(raw))
            except ValueError:
                return raw
        if data_type == "d":
            from openpyxl.utils.datetime import from_ISO8601

            try:
                return from_ISO8601(raw)
            except (ValueError, TypeError, OverflowError):
                return raw
        return raw  # "str" (a formula's text), "e" (#N/A...), unknown types

    def _formula(self, attributes: dict[str, str], text: str | None, reference: str | None):
        """A formula's text; a shared formula's followers get the master's, translated."""
        if attributes.get("t") != "shared":
            return text or ""
        index = attributes.get("si", "")
        master = self._shared_formulas.get(index)
        if master is None:
            if text:
                self._shared_formulas[index] = (reference, text)
            return text or ""
        origin, master_text = master
        if origin is None or reference is None:
            return master_text
        from openpyxl.formula.translate import Translator, TranslatorError

        try:
            return Translator("=" + master_text, origin).translate_formula(reference)[1:]
        except (TranslatorError, ValueError, KeyError, IndexError):
            return master_text


# --- the fast row source: expat checks each chunk, patterns read the checked bytes ---------

# Once expat has accepted a chunk and seen no comment, CDATA section, processing
# instruction, prefixed spreadsheet element or other encoding, every "<" in it starts a tag
# and every tag is closed: the patterns below then read exactly what an XML parser would,
# in one linear pass, several times faster than a Python callback per element.
_ROW_START = re.compile(rb"""<row\b((?:[^>"']|"[^"]*"|'[^']*')*?)(/?)>""")
#: A row start as Excel, LibreOffice and openpyxl write most of them (not empty).
_ROW_PLAIN = re.compile(rb'<row r="(\d{1,15}+)"(?: spans="[\d:]*+")?+>')
_ROW_NUMBER = re.compile(rb"""\sr\s*=\s*["']([^"']*)["']""")
_ROW_HIDDEN = re.compile(rb"""\shidden\s*=\s*["'](?:1|true)["']""")
# The cell shapes Excel, LibreOffice and openpyxl write for plain values (attributes in the
# order r, s, t; a <v> or a one-run inline string), else any other <c> element whole.
# Possessive quantifiers (no backtracking into a part that matched) change no match, as
# each part is followed by a character it cannot hold, and save a fifth of the scan.
_CELL_FAST = re.compile(
    rb'<c r="([A-Z]{1,3}+)\d++"(?: s="(\d++)")?+(?: t="(\w++)")?+'
    rb"(?:/>|>(?:<v>([^<]*+)</v>|<is><t>([^<]*+)</t></is>)?+</c>)"
    rb"|(<c\b[^>]*?(?:/>|>.*?</c>))",
    re.DOTALL,
)
_CELL = re.compile(rb"""<c\b((?:[^>"']|"[^"]*"|'[^']*')*?)(?:/>|>(.*?)</c>)""", re.DOTALL)
_ATTRIBUTE = re.compile(rb"""([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_VALUE = re.compile(rb"<v\b[^>]*?(?:/>|>(.*?)</v>)", re.DOTALL)
_FORMULA = re.compile(rb"""<f\b((?:[^>"']|"[^"]*"|'[^']*')*?)(?:/>|>(.*?)</f>)""", re.DOTALL)
_INLINE = re.compile(rb"<is\b[^>]*?(?:/>|>(.*?)</is>)", re.DOTALL)
_TEXT = re.compile(rb"<t\b[^>]*?(?:/>|>(.*?)</t>)", re.DOTALL)
_RUN = re.compile(rb"<r\b[^>]*?(?:/>|>(.*?)</r>)", re.DOTALL)
_PHONETIC = re.compile(rb"<rPh\b.*?</rPh>|<rPh\b[^>]*/>", re.DOTALL)
#: A row longer than this (without its end tag) goes to the streaming reader.
_MAX_SCANNED_ROW_BYTES = 8 << 20


class _UseStreamingReader(Exception):
    """The sheet holds XML the patterns do not read exactly; use the callback reader."""


def _use_streaming_reader(*_args) -> None:
    raise _UseStreamingReader


def _checking_parser() -> expat.XMLParserType:
    """A hardened parser that only checks: no Python runs per element.

    It raises :class:`_UseStreamingReader` at anything the patterns cannot read exactly.
    """
    parser = _hardened_parser()
    parser.CommentHandler = _use_streaming_reader
    parser.StartCdataSectionHandler = _use_streaming_reader
    parser.ProcessingInstructionHandler = _use_streaming_reader

    def declaration(_version, encoding, _standalone) -> None:
        if encoding is not None and encoding.lower() not in ("utf-8", "utf8"):
            raise _UseStreamingReader

    def namespace(prefix, uri) -> None:
        # Unprefixed names must be spreadsheet elements, and no prefix may name them.
        if (prefix is None) != (uri == _MAIN_URI):
            raise _UseStreamingReader

    parser.XmlDeclHandler = declaration
    parser.StartNamespaceDeclHandler = namespace
    return parser


def _unescape(raw: bytes) -> str:
    """Text as an XML parser reports it: line ends normalised, references replaced."""
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    text = raw.decode("utf-8")
    return html.unescape(text) if "&" in text else text


def _number_bytes(raw: bytes) -> int | float | str:
    return _number(raw.decode("utf-8", "replace"))


class _ScannedSheetRows:
    """Rows of one worksheet part, checked by expat and read with patterns."""

    def __init__(self, reader: _SheetReader, where: str):
        self.reader = reader
        self.where = where
        self._last_row = 0
        self._column_cache: dict[bytes, int] = {}
        self._date_cache: dict[tuple[bytes, bytes], object] = {}
        self._shared_formulas: dict[bytes, tuple[str | None, str]] = {}
        book = reader.book
        self._date_styles = {style.encode() for style in book.date_styles}
        self._shared_strings = book.shared_strings

    def __iter__(self) -> Iterator[RawRow]:
        reader = self.reader
        parser = _checking_parser()
        charge = reader.meter.charge
        pending: list[bytes] = []
        pending_bytes = 0
        with reader.archive.open(reader.entry.part) as stream:
            chunk = stream.read(_CHUNK_BYTES)
            if chunk.startswith((b"\xff\xfe", b"\xfe\xff")):
                raise _UseStreamingReader  # UTF-16
            guard = _TagEndGuard(reader.entry.part)
            previous_end = b""
            while chunk:
                guard.check(chunk)
                parser.Parse(chunk, False)
                charge(0, self.where)
                end = chunk.rfind(b"</row>")
                if end < 0:
                    pending.append(chunk)
                    pending_bytes += len(chunk)
                    if pending_bytes > _MAX_SCANNED_ROW_BYTES:
                        raise _UseStreamingReader
                else:
                    end += len(b"</row>")
                    pending.append(chunk[:end])
                    yield from self._rows(b"".join(pending))
                    pending = [chunk[end:]]
                    pending_bytes = len(pending[0])
                # The end tag may straddle two reads: looked for with the last one's end.
                joined = previous_end + chunk
                end_of_cells = joined.find(b"</sheetData>")
                if end_of_cells >= 0:
                    # Nothing after it holds cells: stop reading, but for the merged
                    # ranges that follow.
                    reader.merged_ranges[:] = _merged_ranges(joined[end_of_cells:], stream)
                    yield from self._rows(b"".join(pending))
                    return
                previous_end = chunk[-len(b"</sheetData>") :]
                chunk = stream.read(_CHUNK_BYTES)
            parser.Parse(b"", True)
        yield from self._rows(b"".join(pending))

    def _rows(self, block: bytes) -> Iterator[RawRow]:
        if b"<row" not in block:
            return
        cells = 0
        rows: list[RawRow] = []
        for piece in block.split(b"</row>"):
            start = piece.find(b"<row")
            if start >= 0 and piece.find(b"<row", start + 4) >= 0:
                # A row started inside another (a lost </row>): the patterns would merge
                # their cells; the streaming reader reads the XML as it is (and refuses it).
                raise _UseStreamingReader
            plain = _ROW_PLAIN.match(piece, start) if start >= 0 else None
            if plain is not None:  # the usual row: number and cells, nothing to decide
                row_number = self._last_row = int(plain.group(1))
                if not 1 <= row_number <= MAX_SHEET_ROWS:
                    raise _UseStreamingReader  # which says why
                if b"<v" not in piece and b"<is" not in piece and b"<f" not in piece:
                    # Formatted but empty cells only (the rest of a formatted column).
                    rows.append((row_number, [], None))
                    cells += 1
                    continue
                row, count = self._cells(piece, plain.end(), row_number)
                rows.append(row)
                cells += count + 1
                continue
            while start >= 0:
                match = _ROW_START.match(piece, start)
                if match is None:  # <rowBreaks> and the like
                    start = piece.find(b"<row", start + 4)
                    continue
                attributes, empty = match.groups()
                number = _ROW_NUMBER.search(attributes)
                if number is None:
                    row_number = self._last_row + 1
                else:
                    try:
                        row_number = int(number.group(1))
                    except ValueError:
                        raise _UseStreamingReader from None  # it reads "5.0" or says why not
                    if not 1 <= row_number <= MAX_SHEET_ROWS:
                        raise _UseStreamingReader  # which says why
                self._last_row = row_number
                if _ROW_HIDDEN.search(attributes) is not None:
                    self.reader.hidden_rows.add(row_number)
                if empty:
                    rows.append((row_number, [], None))
                    start = piece.find(b"<row", match.end())
                    continue
                if b"<v" not in piece and b"<is" not in piece and b"<f" not in piece:
                    rows.append((row_number, [], None))  # formatted empty cells only
                    cells += 1
                    break
                row, count = self._cells(piece, match.end(), row_number)
                rows.append(row)
                cells += count + 1
                break
        self.reader.meter.charge(cells, self.where)
        yield from rows

    def _cells(self, piece: bytes, start: int, row_number: int):
        column_of = self._column_cache
        date_styles = self._date_styles
        date_cache = self._date_cache
        values: list[object] = []
        append = values.append
        size = 0  # len(values), kept by hand: this loop runs for every cell
        formulas: dict[int, tuple[str, bool]] | None = None
        column = -1
        found = _CELL_FAST.findall(piece, start)
        for letters, style, data_type, raw, inline, other in found:
            if other:
                column, value, formula = self._general_cell(other, column, row_number)
                if formula is not None:
                    if formulas is None:
                        formulas = {}
                    formulas[column] = formula
            else:
                known = column_of.get(letters)
                if known is None:
                    known = column_of[letters] = _column_index(letters.decode("ascii"))
                column = known
                if not data_type or data_type == b"n":
                    # Inlined: this branch runs for most of a million cells.
                    if not raw:
                        continue
                    if style and style in date_styles:
                        value = date_cache.get((raw, style))
                        if value is None:
                            value = date_cache[raw, style] = self._date(raw, style)
                    elif raw.isdigit() and len(raw) < 19:  # a count: most cells
                        value = int(raw)
                    elif b"." in raw:
                        try:
                            value = float(raw)
                        except ValueError:
                            value = _number_bytes(raw)
                    else:
                        value = _number_bytes(raw)
                elif data_type == b"inlineStr":
                    if len(inline) > MAX_TEXT_CHARACTERS:
                        raise _UseStreamingReader  # it says where
                    if b"&" in inline or b"\r" in inline:
                        value = _unescape(inline)
                    else:
                        value = inline.decode("utf-8")
                else:
                    value = self._typed(raw, data_type)
            if value is None:
                continue
            if column == size:
                append(value)
                size += 1
            elif column > size:
                values.extend([None] * (column - size))
                append(value)
                size = column + 1
            else:
                values[column] = value
        return (row_number, values, formulas), len(found)

    def _date(self, raw: bytes, style: bytes):
        return self.reader._date_value(raw.decode("ascii", "replace"), style.decode("ascii"))

    def _typed(self, raw: bytes, data_type: bytes):
        if not raw:
            return None
        text = _unescape(raw)
        return self.reader._typed_value(
            text, data_type.decode("ascii"), self._shared_strings, self.where
        )

    def _general_cell(self, element: bytes, previous_column: int, row_number: int):
        """(column, value, formula) of a cell in any shape the fast pattern does not cover."""
        cell = _CELL.match(element)
        if cell is None:  # the scanner only hands over elements that start a cell
            raise _Damaged(f"row {row_number}: a cell that cannot be read")
        attributes_text, content = cell.groups()
        attributes = {
            name: double or single for name, double, single in _ATTRIBUTE.findall(attributes_text)
        }
        # Attribute values are checked XML: undo references as a parser would.
        attributes = {name: _unescape(value) for name, value in attributes.items()}
        reference = attributes.get(b"r")
        if reference is None:
            column = previous_column + 1
        else:
            match = _CELL_REFERENCE.fullmatch(reference)
            if match is None:
                raise _UseStreamingReader  # it names the bad reference
            column = _column_index(match.group(1))
        data_type = attributes.get(b"t") or "n"
        style = attributes.get(b"s")
        value: object = None
        if data_type == "inlineStr":
            inline = _INLINE.search(content) if content else None
            if inline is not None:
                body = _PHONETIC.sub(b"", inline.group(1) or b"")
                runs = _RUN.findall(body)
                plain_body = _RUN.sub(b"", body) if runs else body
                plain = _TEXT.findall(plain_body)
                texts = [_unescape(text or b"") for text in plain[-1:]]
                texts += [_unescape(text or b"") for run in runs for text in _TEXT.findall(run)]
                value = "".join(texts)
        elif content:
            found = _VALUE.search(content)
            raw = _unescape(found.group(1) or b"") if found else ""
            if raw:
                if data_type == "n":
                    if style is not None and style in self.reader.book.date_styles:
                        value = self.reader._date_value(raw, style)
                    else:
                        value = _number(raw)
                else:
                    value = self.reader._typed_value(
                        raw, data_type, self._shared_strings, self.where
                    )
        formula = None
        if content and b"<f" in content:
            found_formula = _FORMULA.search(content)
            if found_formula is not None:
                formula_attributes = {
                    name.decode("ascii", "replace"): _unescape(double or single)
                    for name, double, single in _ATTRIBUTE.findall(found_formula.group(1))
                }
                text = _unescape(found_formula.group(2) or b"")
                formula = (
                    self.reader._formula(formula_attributes, text, reference),
                    value is not None,
                )
        return column, value, formula


# --- reference row source: openpyxl's own reader -------------------------------------------


def _openpyxl_rows(values_sheet, formulas_sheet) -> Iterator[RawRow]:
    """Rows from openpyxl: cached values from one workbook, formulas from a second one."""
    formula_rows = formulas_sheet.iter_rows() if formulas_sheet is not None else None
    for row_number, values in enumerate(values_sheet.iter_rows(values_only=True), start=1):
        formulas = None
        if formula_rows is not None:
            for cell in next(formula_rows, ()):
                if getattr(cell, "data_type", None) == "f":
                    column = cell.column - 1
                    cached = column < len(values) and values[column] is not None
                    if formulas is None:
                        formulas = {}
                    formulas[column] = (
                        str(getattr(cell.value, "text", cell.value) or "").lstrip("="),
                        cached,
                    )
        values = list(values)
        while values and values[-1] is None:
            values.pop()
        yield row_number, values, formulas


# --- the file ------------------------------------------------------------------------------

_OLE_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
#: How much of a file is looked at to tell what it is.
_SNIFF_BYTES = 1 << 16
#: An encrypted .xlsx is an OLE container with a stream of this name (UTF-16 in the
#: container's directory); an old .xls has a "Workbook" stream instead.
_ENCRYPTED_PACKAGE = "EncryptedPackage".encode("utf-16-le")


def _looks_like_text(head: bytes) -> bool:
    """True for what a CSV or text export starts with: decodable, printable text."""
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        try:
            text = head[: len(head) - 3].decode("utf-8")  # a character cut at the end
        except UnicodeDecodeError:
            return False
    return bool(text) and all(ch.isprintable() or ch in "\r\n\t" for ch in text)


def check_regular_file(path: Path, what: str, error: type[InputError]) -> os.stat_result:
    """``path``'s ``stat``, or ``error`` saying why it cannot be ``what`` (``"an Excel
    workbook"``): missing, unreadable, a folder, a pipe or device (a read would block or
    never end), or empty."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except OSError as exc:
        raise error(f"{path} cannot be opened: {os_error_cause(exc)}") from None
    if stat.S_ISDIR(info.st_mode):
        raise error(f"{path} is a folder, not {what}")
    if not stat.S_ISREG(info.st_mode):
        raise error(f"{path} is not a regular file (a pipe or a device), not {what}")
    if info.st_size == 0:
        raise error(f"{path} is empty (0 bytes), not {what}")
    return info


def check_workbook_file(path: str | Path) -> ReadBudget:
    """Refuse what is not a plausible ``.xlsx`` within its budget, before any part is read.

    Checks, without decompressing anything: the path is a regular file (a folder, a pipe or
    a device is refused, never opened), not empty, a zip container (an old ``.xls``, a
    password-protected workbook or a CSV with an Excel name is named as such), not
    encrypted, with at most :data:`MAX_ZIP_MEMBERS` parts whose declared sizes fit the
    file's :class:`ReadBudget`.

    Returns
    -------
    ReadBudget
        The budget the rest of the read must keep to.

    Raises
    ------
    WorkbookError
        Naming the file and the problem.
    """
    path = Path(path)
    info = check_regular_file(path, "an Excel workbook", WorkbookError)
    try:
        with path.open("rb") as stream:
            head = stream.read(_SNIFF_BYTES)
    except OSError as exc:
        raise WorkbookError(f"{path}: cannot be opened ({exc.strerror or exc})") from None
    if head.startswith(_OLE_SIGNATURE):
        if _ENCRYPTED_PACKAGE in head:
            raise WorkbookError(
                f"{path} is protected with a password (encrypted); save a copy without the "
                "password in Excel or LibreOffice and open that"
            )
        raise WorkbookError(
            f"{path} is an old Excel 97-2003 workbook (.xls); open it in Excel or LibreOffice "
            "and save it as an Excel workbook (.xlsx)"
        )
    if not head.startswith(b"PK"):
        if _looks_like_text(head):
            if path.suffix.casefold() in (".csv", ".tsv", ".tab", ".txt"):
                raise WorkbookError(
                    f"{path} is a text table, but an Excel workbook (.xlsx) is read here; "
                    "open it in Excel or LibreOffice and save it as an Excel workbook"
                )
            if path.suffix.casefold() in (".xlsx", ".xlsm", ".xls"):
                raise WorkbookError(
                    f"{path} is a text file (CSV or similar) with an Excel name, not an Excel "
                    "workbook; rename it to .csv where a CSV is accepted, or open it in Excel "
                    "or LibreOffice and save it as .xlsx"
                )
            raise WorkbookError(
                f"{path} is a text file, not an Excel workbook (.xlsx); an Excel workbook is "
                "read here"
            )
        raise WorkbookError(f"{path} is not an Excel workbook (.xlsx): it is not a zip container")
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, OSError) as exc:
        raise WorkbookError(
            f"{path} is damaged (truncated or corrupt zip: {exc}); "
            "open it in Excel or LibreOffice to repair it"
        ) from None
    budget = ReadBudget.for_file(path, info.st_size)
    _check_sizes(budget, members)
    return budget


def _check_sizes(budget: ReadBudget, members: Sequence[zipfile.ZipInfo]) -> None:
    """Zip-bomb guard on the sizes the archive declares (``zipfile`` enforces them)."""
    path = budget.path
    if len(members) > MAX_ZIP_MEMBERS:
        raise WorkbookError(
            f"{path} holds {len(members):,} parts, more than the {MAX_ZIP_MEMBERS:,} a "
            "workbook may hold; refusing to read it"
        )
    if any(member.flag_bits & 0x1 for member in members):
        raise WorkbookError(
            f"{path} is encrypted; save a copy without the password in Excel or LibreOffice "
            "and open that"
        )
    total = sum(member.file_size for member in members)
    if total > budget.uncompressed_bytes:
        raise WorkbookError(
            f"{path}: this workbook would expand to {_size_text(total)} once decompressed, "
            f"{budget.size_rule()}; refusing to read it (possible zip bomb)"
        )
    for member in members:
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > LARGE_MEMBER_BYTES and ratio > MAX_COMPRESSION_RATIO:
            raise WorkbookError(
                f"{path}: its part {member.filename} would expand {ratio:,.0f} times, to "
                f"{_size_text(member.file_size)} from {_size_text(member.compress_size)}, "
                f"more than the {MAX_COMPRESSION_RATIO} times rows of data ever take; "
                "refusing to read it (possible zip bomb)"
            )


def guard_workbook(path: str | Path) -> ReadBudget:
    """Every check a read needs, for readers that hand the file to openpyxl afterwards.

    :func:`check_workbook_file`, then every XML part parsed once by the hardened parser
    within the file's time budget: no DTD or entity declaration, well-formed throughout.
    openpyxl then only meets parts that are safe and bounded.

    Returns
    -------
    ReadBudget
        The file's budget.

    Raises
    ------
    WorkbookError
        Naming the file, the part and the problem.
    """
    path = Path(path)
    budget = check_workbook_file(path)
    meter = _Meter(budget)
    with _part_errors(path, path.name), zipfile.ZipFile(path) as archive:
        for member in archive.infolist():
            name = member.filename
            if member.is_dir() or not name.endswith((".xml", ".rels", ".vml")):
                continue
            with _part_errors(path, name):
                _parse_part(archive, name, _hardened_parser(), meter)
    return budget


@contextlib.contextmanager
def open_sheets(
    path: str | os.PathLike[str],
    *,
    engine: Literal["fast", "openpyxl"] = "fast",
    padded_numbers: bool = False,
) -> Iterator[Iterator[SheetRows]]:
    """Check ``path`` and yield an iterator over its worksheets' rows.

    Parameters
    ----------
    path : str or path-like
        The workbook.
    engine : {"fast", "openpyxl"}
        ``"fast"`` streams each sheet through the hardened parser; ``"openpyxl"`` reads it
        with openpyxl's read-only reader after :func:`guard_workbook` (the reference).
    padded_numbers : bool
        Give a whole number in a zero-padding format (``000000``) as the text it shows
        (``"000388"``), as an item id must be (fast engine only).

    Raises
    ------
    WorkbookError
        Before the first row or while the caller consumes the rows (damaged XML, a CRC
        error, a sheet cut short, a budget spent), always naming the file.
    """
    path = Path(path)
    if engine == "openpyxl":
        guard_workbook(path)
        with _openpyxl_sheets(path) as sheets:
            yield sheets
        return
    meter = _Meter(check_workbook_file(path))
    try:
        with zipfile.ZipFile(path) as archive:
            book = _read_book(path, archive, meter, padded_numbers)
            yield (_sheet_rows(path, archive, entry, book, meter) for entry in book.sheets)
    except (zipfile.BadZipFile, EOFError) as exc:  # the file changed since it was checked
        raise WorkbookError(f"{path} is damaged and cannot be read: {_plain(exc)}") from None


def _sheet_rows(path: Path, archive, entry: _SheetEntry, book: _Book, meter: _Meter) -> SheetRows:
    reader = _SheetReader(path, archive, entry, book, meter)
    return SheetRows(
        entry.title,
        reader.rows(),
        book.epoch,
        reader.hidden_rows,
        reader.merged_ranges,
        bool(book.padded_styles),
    )


#: How much of a sheet's part after its cells is searched for merged ranges (they come
#: right after the cells), and how many are kept.
_MERGE_SEARCH_BYTES = 4 << 20
_MAX_MERGED_RANGES = 10_000
_MERGE_CELL = re.compile(
    rb"""<(?:[\w.-]+:)?mergeCell\b[^>]*?\bref\s*=\s*["']"""
    rb"""([A-Za-z]{1,3}\d{1,7}:[A-Za-z]{1,3}\d{1,7})["']"""
)


_XML_COMMENT = re.compile(rb"<!--.*?-->", re.DOTALL)


def _merged_ranges(tail: bytes, stream) -> list[str]:
    """The merged ranges (``"F8:F9"``) in ``tail`` and what follows it in ``stream``,
    reading at most :data:`_MERGE_SEARCH_BYTES` (only for messages: the rows are read)."""
    buffer = bytearray(tail)
    while len(buffer) < _MERGE_SEARCH_BYTES and (more := stream.read(_CHUNK_BYTES)):
        buffer += more
    found = _MERGE_CELL.finditer(_XML_COMMENT.sub(b"", buffer))  # not one commented out
    return [match.group(1).decode("ascii").upper() for match in found][:_MAX_MERGED_RANGES]


def date_epoch(path: str | os.PathLike[str]) -> dt.date:
    """Day 0 of the workbook's date serials: 1899-12-30 (Excel's 1900 date system) or
    1904-01-01 (the 1904 system of old Mac workbooks). A writer of date serials needs it:
    the same serial is four years and a day apart in the two systems.

    Only the content types and the workbook part are read (not the shared strings and
    styles a full read of the book takes), within the file's budget."""
    path = Path(path)
    meter = _Meter(check_workbook_file(path))
    try:
        with zipfile.ZipFile(path) as archive:
            if "[Content_Types].xml" not in archive.NameToInfo:
                raise WorkbookError(
                    f"{path} is not a readable Excel workbook (.xlsx): it has no content types"
                )
            with _part_errors(path, "[Content_Types].xml"):
                workbook_part, _strings = _content_types(archive, meter)
            if workbook_part is None or workbook_part not in archive.NameToInfo:
                raise WorkbookError(f"{path} is not a readable Excel workbook (.xlsx)")
            with _part_errors(path, workbook_part):
                _sheets, date1904 = _workbook_sheets(archive, workbook_part, meter)
    except (zipfile.BadZipFile, EOFError) as exc:  # the file changed since it was checked
        raise WorkbookError(f"{path} is damaged and cannot be read: {_plain(exc)}") from None
    return (_MAC_EPOCH if date1904 else _WINDOWS_EPOCH).date()


@contextlib.contextmanager
def _openpyxl_sheets(path: Path) -> Iterator[Iterator[SheetRows]]:
    """The reference: openpyxl's read-only reader, cached values and formulas."""
    from openpyxl import load_workbook

    def load(stream, data_only: bool):
        try:
            # A file object, not the name: openpyxl refuses names without an .xlsx suffix.
            return load_workbook(stream, read_only=True, data_only=data_only)
        except Exception as exc:  # openpyxl raises KeyError, zipfile, XML and value errors
            raise WorkbookError(
                f"{path} is not a readable Excel workbook (.xlsx): {_plain(exc)}"
            ) from None

    try:
        with path.open("rb") as values_stream, path.open("rb") as formulas_stream:
            values_book = load(values_stream, data_only=True)
            formulas_book = load(formulas_stream, data_only=False)
            try:
                if not values_book.worksheets:
                    raise WorkbookError(
                        f"{path} has no worksheet (only chart sheets, or none); there are no "
                        "rows to read"
                    )
                epoch = getattr(values_book, "epoch", None) or _WINDOWS_EPOCH
                yield (
                    SheetRows(sheet.title, _openpyxl_rows(sheet, formulas), epoch)
                    for sheet, formulas in zip(
                        values_book.worksheets, formulas_book.worksheets, strict=True
                    )
                )
            finally:
                values_book.close()
                formulas_book.close()
    except InputError:
        raise
    except OSError as exc:
        raise WorkbookError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except Exception as exc:  # damaged XML inside a valid zip, a CRC error, ...
        raise WorkbookError(f"{path} is damaged and cannot be read: {_plain(exc)}") from None
