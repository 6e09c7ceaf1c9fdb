"""Rows of every worksheet in an ``.xlsx`` file, for the readers that interpret them.

:func:`open_sheets` checks the file (exists, is a zip, not encrypted, not a zip bomb),
opens it read-only and yields one :class:`SheetRows` per worksheet: its title and an
iterator of :data:`RawRow` tuples (row number, values by column, formulas by column).

Two row sources give the same rows:

* a fast reader that scans the sheet XML and sees each cell's formula and cached value in
  one pass;
* openpyxl's own read-only reader (two passes: cached values, then formulas), used for any
  sheet whose XML the fast reader does not recognise and kept as the reference the tests
  compare the fast reader against.

Every failure is a :class:`WorkbookError` naming the file; no openpyxl or zipfile
exception leaks out.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import html
import re
import stat
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.errors import InputError

__all__ = ["RawRow", "SheetRows", "WorkbookError", "check_workbook_file", "open_sheets"]

#: Refuse files whose parts would decompress beyond this (zip-bomb guard).
MAX_UNCOMPRESSED_BYTES = 1 << 30
#: A member larger than this that compresses better than :data:`MAX_COMPRESSION_RATIO`
#: is refused: real sheet XML compresses 5-30 times, bombs thousands of times.
LARGE_MEMBER_BYTES = 64 << 20
MAX_COMPRESSION_RATIO = 100
MAX_ZIP_MEMBERS = 10_000


class WorkbookError(InputError):
    """A file that cannot be read as an Excel workbook at all.

    The message names the file and says what is wrong with it (missing, a folder, empty,
    not an ``.xlsx``, damaged, encrypted, too large once decompressed), so the command line
    and the desktop app can show it unchanged.
    """


#: A raw row: (row number, values by 0-based column, formulas by column or ``None``).
#: ``formulas[col] = (formula text, has a cached value)``; only cells holding formulas appear.
RawRow = tuple[int, Sequence[object], "dict[int, tuple[str, bool]] | None"]


@dataclass(frozen=True, slots=True)
class SheetRows:
    """One worksheet: its title, its rows and the workbook's date epoch."""

    title: str
    rows: Iterator[RawRow]
    epoch: dt.datetime


# --- fast row source: the sheet XML scanned with regular expressions -----------------------

_ROW = re.compile(rb"<row\b([^>]*?)(?:/>|>(.*?)</row>)", re.DOTALL)
# The cell shapes Excel, LibreOffice and openpyxl write for plain values (attributes in the
# order r, s, t; a <v> or a one-run inline string), else any other <c> element whole.
_CELL_FAST = re.compile(
    rb'<c r="([A-Z]{1,3})\d+"(?: s="(\d+)")?(?: t="(\w+)")?'
    rb"(?:/>|>(?:<v>([^<]*)</v>|<is><t>([^<]*)</t></is>)?</c>)"
    rb"|(<c\b[^>]*?(?:/>|>.*?</c>))",
    re.DOTALL,
)
_ROW_NUMBER = re.compile(rb'\br="(\d+)"')
_CELL = re.compile(rb"<c\b([^>]*?)(?:/>|>(.*?)</c>)", re.DOTALL)
# The attribute order every writer we know uses; anything else goes through _ATTRIBUTE.
_ATTRIBUTE = re.compile(rb'([\w:]+)\s*=\s*"([^"]*)"')
_VALUE = re.compile(rb"<v>(.*?)</v>", re.DOTALL)
_FORMULA = re.compile(rb"<f\b([^>]*?)(?:/>|>(.*?)</f>)", re.DOTALL)
_SHARED_INDEX = re.compile(rb'\bsi="(\d+)"')
_INLINE_TEXT = re.compile(rb"<t\b[^>]*?(?:/>|>(.*?)</t>)", re.DOTALL)
_PHONETIC = re.compile(rb"<rPh\b.*?</rPh>", re.DOTALL)
_SHEET_DATA = re.compile(rb"<sheetData\b")
_XML_ENCODING = re.compile(rb'<\?xml[^>]*encoding="([^"]+)"')
_WORKSHEET_END = re.compile(rb"</(?:\w+:)?worksheet>\s*$")
_CHUNK_BYTES = 1 << 22


class _SheetCutShort(ValueError):
    """The worksheet XML stops before its closing tag."""


class _UseOpenpyxl(Exception):
    """The fast reader met XML it does not handle; read this sheet with openpyxl."""


def _column_index(letters: bytes) -> int:
    """0-based column of ``b"A"``, ``b"AB"``, ..."""
    index = 0
    for letter in letters:
        index = index * 26 + (letter - 64)
    return index - 1


def _unescape(raw: bytes) -> str:
    text = raw.decode("utf-8")
    return html.unescape(text) if "&" in text else text


class _FastSheetRows:
    """Rows of one worksheet part, streamed from the zip and scanned with regexes."""

    def __init__(
        self,
        archive: zipfile.ZipFile,
        part: str,
        shared_strings: Sequence[str],
        date_styles: set[int],
        timedelta_styles: set[int],
        epoch: dt.datetime,
    ):
        self._last_row = 0
        self._shared_formulas: dict[bytes, str] = {}
        self._column_cache: dict[bytes, int] = {}
        self._date_cache: dict[tuple[object, bytes], object] = {}
        self._date_style_bytes = {str(style).encode() for style in date_styles}
        self.archive = archive
        self.part = part
        self.shared_strings = shared_strings
        self.date_styles = date_styles
        self.timedelta_styles = timedelta_styles
        self.epoch = epoch

    def check_supported(self) -> None:
        """Raise :class:`_UseOpenpyxl` unless the part is plain UTF-8 SpreadsheetML."""
        with self.archive.open(self.part) as stream:
            head = stream.read(1 << 16)
        encoding = _XML_ENCODING.match(head)
        if encoding and encoding.group(1).lower() not in (b"utf-8", b"utf8"):
            raise _UseOpenpyxl
        if not _SHEET_DATA.search(head):
            # Prefixed elements (<x:sheetData>) or a very long preamble.
            raise _UseOpenpyxl

    def __iter__(self) -> Iterator[RawRow]:
        with self.archive.open(self.part) as stream:
            pending = b""
            while True:
                chunk = stream.read(_CHUNK_BYTES)
                if not chunk:
                    break
                pending += chunk
                end = pending.rfind(b"</row>")
                if end < 0:
                    continue
                end += len(b"</row>")
                yield from self._rows(pending[:end])
                pending = pending[end:]
            yield from self._rows(pending)
        # Regexes skip what they cannot match, so a sheet cut short would just look shorter:
        # insist on the closing tag a complete part ends with.
        if not _WORKSHEET_END.search(pending[-4096:]):
            raise _SheetCutShort(f"sheet part {self.part} ends early (its XML is cut short)")

    def _rows(self, block: bytes) -> Iterator[RawRow]:
        row_number = self._last_row
        column_of = self._column_cache
        number_value = self._number_value
        shared_strings = self.shared_strings
        date_styles = self._date_style_bytes
        for row_attributes, body in _ROW.findall(block):
            number = _ROW_NUMBER.search(row_attributes)
            row_number = int(number.group(1)) if number else row_number + 1
            if not body:
                continue
            values: list[object] = []
            formulas: dict[int, tuple[str, bool]] | None = None
            column = -1
            # One findall per row: the common cell shapes come back as plain tuples with no
            # per-cell match objects; anything else lands in ``other`` and is parsed fully.
            for letters, style, data_type, raw, inline, other in _CELL_FAST.findall(body):
                if other:
                    column, value, formula = self._general_cell(other, column)
                    if formula is not None:
                        if formulas is None:
                            formulas = {}
                        formulas[column] = formula
                else:
                    column = column_of.get(letters)
                    if column is None:
                        column = column_of[letters] = _column_index(letters)
                    if not data_type or data_type == b"n":
                        # Inlined: this branch runs for most of a million cells.
                        if not raw:
                            value = None
                        elif style and style in date_styles:
                            value = number_value(raw, style)
                        elif b"." in raw or b"E" in raw or b"e" in raw:
                            value = float(raw)
                        else:
                            value = int(raw)
                    elif data_type == b"s":
                        value = shared_strings[int(raw)] if raw else None
                    elif data_type == b"inlineStr":
                        value = _unescape(inline)
                    else:
                        value = self._typed_value(raw, style, data_type)
                if value is None:
                    continue
                size = len(values)
                if column == size:
                    values.append(value)
                elif column > size:
                    values.extend([None] * (column - size))
                    values.append(value)
                else:
                    values[column] = value
            yield row_number, values, formulas
        self._last_row = row_number

    def _general_cell(self, element: bytes, previous_column: int):
        """(column, value, formula) of a cell in any shape the fast pattern does not cover."""
        match = _CELL.match(element)
        attributes, content = match.group(1, 2)
        found = dict(_ATTRIBUTE.findall(attributes))
        letters = found.get(b"r", b"").rstrip(b"0123456789").upper()
        if letters.isalpha() and len(letters) <= 3:
            column = _column_index(letters)
        else:
            column = previous_column + 1  # no reference: cells follow each other
        if not content:
            return column, None, None
        style, data_type = found.get(b"s"), found.get(b"t")
        value = self._content_value(content, style, data_type)
        formula = None
        if b"<f" in content:
            found_formula = _FORMULA.search(content)
            if found_formula is not None:
                formula = (self._formula_text(*found_formula.group(1, 2)), value is not None)
        return column, value, formula

    def _number_value(self, raw: bytes, style: bytes):
        number = float(raw) if (b"." in raw or b"E" in raw or b"e" in raw) else int(raw)
        if style and int(style) in self.date_styles:
            key = (number, style)
            converted = self._date_cache.get(key)
            if converted is None:
                converted = self._date_cache[key] = self._excel_date(number, int(style))
            return converted
        return number

    def _excel_date(self, number, style: int):
        from openpyxl.utils.datetime import from_excel

        try:
            return from_excel(number, self.epoch, timedelta=style in self.timedelta_styles)
        except (OverflowError, ValueError):
            return "#VALUE!"  # what openpyxl shows for a date serial out of range

    def _typed_value(self, raw: bytes, style: bytes | None, data_type: bytes):
        if not raw:
            return None
        if data_type == b"n":
            return self._number_value(raw, style)
        if data_type == b"s":
            return self.shared_strings[int(raw)]
        if data_type == b"b":
            return bool(int(raw))
        if data_type == b"d":
            from openpyxl.utils.datetime import from_ISO8601

            return from_ISO8601(raw.decode("ascii"))
        return _unescape(raw)  # "str" (a formula's text), "e" (#N/A...), unknown types

    def _formula_text(self, attributes: bytes, text: bytes | None) -> str:
        # A shared formula is written once (with its text) and referenced by index after;
        # the followers get the master's text, enough to tell a column total.
        shared = _SHARED_INDEX.search(attributes) if b"si=" in attributes else None
        if shared is None:
            return _unescape(text or b"")
        if text:
            self._shared_formulas[shared.group(1)] = _unescape(text)
        return self._shared_formulas.get(shared.group(1), "")

    def _content_value(self, content: bytes, style: bytes | None, data_type: bytes | None):
        if data_type == b"inlineStr":
            if b"<rPh" in content:
                content = _PHONETIC.sub(b"", content)
            return "".join(_unescape(part or b"") for part in _INLINE_TEXT.findall(content))
        found = _VALUE.search(content)
        return self._typed_value(found.group(1) if found else b"", style, data_type or b"n")


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


def check_workbook_file(path: Path) -> None:
    """Refuse what is not a readable, plausibly sized ``.xlsx`` before openpyxl sees it."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise WorkbookError(f"{path}: no such file") from None
    except OSError as exc:
        raise WorkbookError(f"{path}: cannot be opened ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise WorkbookError(f"{path} is a folder, not an Excel workbook")
    if info.st_size == 0:
        raise WorkbookError(f"{path} is empty (0 bytes), not an Excel workbook")
    try:
        with path.open("rb") as stream:
            signature = stream.read(8)
    except OSError as exc:
        raise WorkbookError(f"{path}: cannot be opened ({exc.strerror or exc})") from None
    if signature == _OLE_SIGNATURE:
        raise WorkbookError(
            f"{path} is password-protected (encrypted) or an old .xls workbook; save it "
            "from Excel or LibreOffice as an unprotected .xlsx and try again"
        )
    if not signature.startswith(b"PK"):
        raise WorkbookError(f"{path} is not an Excel workbook (.xlsx): it is not a zip container")
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError) as exc:
        raise WorkbookError(
            f"{path} is damaged (truncated or corrupt zip: {exc}); "
            "open it in Excel or LibreOffice to repair it"
        ) from None
    _check_sizes(path, members)


def _check_sizes(path: Path, members: Sequence[zipfile.ZipInfo]) -> None:
    """Zip-bomb guard on the sizes the archive declares.

    ``zipfile`` never inflates a member beyond its declared size (it stops there and the
    CRC check fails), so the declared sizes bound the memory the read can take.
    """
    if len(members) > MAX_ZIP_MEMBERS:
        raise WorkbookError(
            f"{path} holds {len(members):,} parts; that is not a workbook this app can read"
        )
    if any(member.flag_bits & 0x1 for member in members):
        raise WorkbookError(f"{path} is encrypted; save it without a password and try again")
    total = sum(member.file_size for member in members)
    if total > MAX_UNCOMPRESSED_BYTES:
        raise WorkbookError(
            f"{path} would take {total / (1 << 20):,.0f} MiB once decompressed (limit "
            f"{MAX_UNCOMPRESSED_BYTES >> 20:,} MiB); refusing to open it"
        )
    for member in members:
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > LARGE_MEMBER_BYTES and ratio > MAX_COMPRESSION_RATIO:
            raise WorkbookError(
                f"{path}: part {member.filename} would expand {ratio:,.0f} times to "
                f"{member.file_size / (1 << 20):,.0f} MiB, far beyond what rows of data "
                "take; refusing to open it (possible zip bomb)"
            )


@functools.cache
def _sizeless_reader_class():
    """openpyxl's ``ExcelReader`` (what ``load_workbook`` uses), minus one costly step.

    A read-only worksheet normally learns its size on construction by looking for the
    ``<dimension>`` element; a sheet without one (openpyxl's write-only mode omits it) is
    then parsed in full just for that, which doubles the time to read 100,000 rows. Rows
    are read to their end anyway, so the size is never needed here.
    """
    from openpyxl.reader.excel import ExcelReader
    from openpyxl.worksheet._read_only import ReadOnlyWorksheet

    class SizelessReadOnlyWorksheet(ReadOnlyWorksheet):
        def _get_size(self) -> None:
            return None

    class SizelessExcelReader(ExcelReader):
        def read_worksheets(self) -> None:
            for sheet, relation in self.parser.find_sheets():
                if relation.target not in self.valid_files or "chartsheet" in relation.Type:
                    continue
                worksheet = SizelessReadOnlyWorksheet(
                    self.wb, sheet.name, relation.target, self.shared_strings
                )
                worksheet.sheet_state = sheet.state
                self.wb._sheets.append(worksheet)

    return SizelessExcelReader


def _open_workbook(path: Path, stream, data_only: bool):
    try:
        # A file object, not the name: openpyxl refuses names without an .xlsx suffix.
        reader = _sizeless_reader_class()(stream, read_only=True, data_only=data_only)
        reader.read()
        return reader.wb
    except InputError:
        raise
    except Exception as exc:  # openpyxl raises KeyError, zipfile, XML and value errors
        raise WorkbookError(
            f"{path} is not a readable Excel workbook (.xlsx): {_plain(exc)}"
        ) from None


def _plain(exc: BaseException) -> str:
    text = str(exc).strip().strip("'\"")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _fast_rows(workbook, sheet) -> Iterator[RawRow] | None:
    """The fast row source for ``sheet``, or ``None`` when openpyxl must read it.

    Relies on openpyxl's read-only internals (archive, part name, shared strings, date
    styles); a future openpyxl without them just means the slower reference reader.
    """
    try:
        source = _FastSheetRows(
            archive=workbook._archive,
            part=sheet._worksheet_path,
            shared_strings=sheet._shared_strings,
            date_styles=set(workbook._date_formats),
            timedelta_styles=set(workbook._timedelta_formats),
            epoch=workbook.epoch,
        )
        source.check_supported()
    except (AttributeError, KeyError, _UseOpenpyxl):
        return None
    return iter(source)


@contextlib.contextmanager
def open_sheets(
    path: str | Path, *, engine: Literal["fast", "openpyxl"] = "fast"
) -> Iterator[Iterator[SheetRows]]:
    """Check ``path`` and yield an iterator over its worksheets' rows.

    Errors raised while the caller consumes the rows (damaged XML, a CRC error, a sheet cut
    short) come out as :class:`WorkbookError` naming the file.
    """
    path = Path(path)
    check_workbook_file(path)
    try:
        with path.open("rb") as values_stream:
            workbook = _open_workbook(path, values_stream, data_only=True)
            formulas: list = []  # [workbook, stream] once openpyxl must read formulas
            try:
                yield _sheets(path, workbook, engine, formulas)
            finally:
                workbook.close()
                if formulas:
                    formulas[0].close()
                    formulas[1].close()
    except InputError:
        raise
    except OSError as exc:
        raise WorkbookError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except _SheetCutShort as exc:
        raise WorkbookError(f"{path} is damaged and cannot be read: {exc}") from None
    except Exception as exc:  # damaged XML inside a valid zip, a CRC error, ...
        raise WorkbookError(f"{path} is damaged and cannot be read: {_plain(exc)}") from None


def _sheets(path: Path, workbook, engine: str, formulas: list) -> Iterator[SheetRows]:
    epoch = getattr(workbook, "epoch", None) or dt.datetime(1899, 12, 30)
    for index, sheet in enumerate(workbook.worksheets):
        rows = _fast_rows(workbook, sheet) if engine == "fast" else None
        if rows is None:
            if not formulas:
                stream = path.open("rb")
                formulas.extend([_open_workbook(path, stream, data_only=False), stream])
            rows = _openpyxl_rows(sheet, formulas[0].worksheets[index])
        yield SheetRows(sheet.title, rows, epoch)
