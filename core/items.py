"""Item lists: the lead's own items, read out of core with DuckDB.

An item list is a table with one row per item: an id, the classifier's prediction (a
label, or a score cut at a threshold), optionally one flag column per further classifier
and any columns the labelers need (subject, link). CSV/TSV and Parquet files are read by
DuckDB straight from disk, so a list of ten million rows never becomes Python objects;
an ``.xlsx`` list is streamed through the project's hardened reader
(:func:`core.workbook.xlsx_reader.open_sheets`) into a temporary CSV that DuckDB then reads
the same way.

:func:`open_items` finds the columns (by the names in :data:`ID_ALIASES`,
:data:`PREDICTED_ALIASES` or as the caller names them) and returns an :class:`ItemTable`,
a context manager that owns the DuckDB connection. Every check of the rows (missing or
duplicate ids, predicted values that are not labels, an empty stratum) is an SQL
aggregate; only when one fails are the first few offenders fetched, with their row
numbers, to name them. :func:`count_items` gives the population counts per stratum.

Bad input raises :class:`ItemListError` (an :class:`~core.errors.InputError`) whose message
names the file, the row and the column.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import functools
import hashlib
import math
import os
import re
import shutil
import tempfile
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from core import progress
from core.errors import InputError, named

__all__ = [
    "ID_ALIASES",
    "NEGATIVE_WORDS",
    "POSITIVE_WORDS",
    "PREDICTED_ALIASES",
    "ClassifierCount",
    "ItemColumns",
    "ItemListError",
    "ItemSummary",
    "ItemTable",
    "count_items",
    "id_found_by_alias",
    "open_items",
    "quote_identifier",
    "text_of_cell",
]

#: Header spellings read as the item id, compared after :func:`_normalise`.
ID_ALIASES = ("item_id", "id", "item id", "itemid", "item", "item-id", "item number")
#: Aliases that name the column only when no other alias is there: beside "item_id", a
#: column "Item" holds the items' titles.
_WEAK_ALIASES = frozenset({"item"})
#: A header named like an id of something ("Transaction ID", "message_id", "MailId"):
#: without an alias, the one such column is read as the id.
_ID_LIKE = re.compile(r"(?i:(?:^|[\s_\-.:/#])id)$|[a-z]Id$")
#: Header spellings read as the classifier's predicted label.
PREDICTED_ALIASES = (
    "predicted",
    "prediction",
    "pred",
    "predicted label",
    "predicted_label",
    "predicted class",
    "flagged",
)
#: Values read as a predicted positive / negative (case and surrounding spaces ignored).
POSITIVE_WORDS = ("1", "1.0", "yes", "y", "true", "t", "+", "pos", "positive")
NEGATIVE_WORDS = ("0", "0.0", "no", "n", "false", "f", "-", "neg", "negative")
#: How many offenders a refusal names.
OFFENDERS_SHOWN = 5
#: What Excel shows for a formula that failed; as an item's id it names no item.
EXCEL_ERRORS = frozenset(
    ("#N/A", "#REF!", "#VALUE!", "#NAME?", "#DIV/0!", "#NUM!", "#NULL!", "#SPILL!",
     "#CALC!", "#FIELD!", "#GETTING_DATA", "#BLOCKED!", "#CONNECT!", "#BUSY!", "#UNKNOWN!")
)  # fmt: skip
#: A text file's Excel error is in the language of the Excel that saved it (#NV in German,
#: #N/D in Spanish and Italian, #N/B in Dutch, #N/A in most others) and LibreOffice's is
#: Err:502; an .xlsx stores them in English (review 19).
_LOCAL_ERROR = r"#N/?[A-Z]{1,2}|#[A-Z0-9/_]+[!?]|Err:[0-9]{3}"
#: An id that is one of :data:`EXCEL_ERRORS` or looks like a localized one (the cheap
#: first test passes over the rest).
_ERROR_ID = (
    # CASE, not AND: DuckDB evaluates both sides of an AND in an aggregate's FILTER for
    # every row, and the list and pattern tests cost a quarter of a ten-million-row count.
    "(CASE WHEN starts_with(item_id, '#') OR starts_with(item_id, 'Err:') THEN item_id IN ("
    + ", ".join(f"'{text}'" for text in sorted(EXCEL_ERRORS))
    + f") OR regexp_full_match(item_id, '{_LOCAL_ERROR}') ELSE FALSE END)"
)
#: An id starting with a double quote that does not end with one (an unclosed CSV quote).
_STRAY_QUOTE = (
    "(CASE WHEN starts_with(item_id, '\"') "
    "THEN item_id = '\"' OR NOT ends_with(item_id, '\"') ELSE FALSE END)"
)
#: File name endings read as each kind of table.
_CSV_SUFFIXES = (".csv", ".txt", ".csv.gz", ".tsv", ".tab", ".tsv.gz")
_PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")
_XLSX_SUFFIXES = (".xlsx", ".xlsm")
#: The header of an .xlsx item list must sit within this many rows from the top.
_XLSX_HEADER_ROWS = 20
_SNIFF_BYTES = 4096
#: DuckDB's longest CSV line (its max_line_size default), in bytes.
_MAX_LINE_BYTES = 2_000_000
#: Internal column names of the temporary CSV made from an .xlsx list.
_ROW_COLUMN = "__prplanner_row"


#: Further classifiers one draw (or count) takes: each adds aggregates over every row.
MAX_CLASSIFIERS = 50


def threshold_text(threshold: float | None) -> str:
    """A score threshold as a classifier's name holds it (``score >= 0.8``): short, and
    read back as the very same number. ``0.4999999`` was named ``0.5``, and a top-up that
    read the threshold back from the name counted another population (fuzz 15)."""
    value = float(threshold or 0.0)
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


class ItemListError(InputError):
    """An item list that cannot be used, with a message naming file, row and column.

    ``headers`` holds the list's column names when its header was read before the refusal
    (empty otherwise), so that the app can offer them for the lead to pick from.
    """

    headers: tuple[str, ...] = ()


class ColumnNotFoundError(ItemListError):
    """The list has no column of the name given, or none of a needed column's aliases."""


class AmbiguousColumnError(ColumnNotFoundError):
    """Several columns are named like the one needed (``Item ID`` and ``item_id``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemColumns:
    """Which columns of an item list hold what (the caller's words, or found by name).

    Attributes
    ----------
    id : str or None
        The item id column; ``None``: found by :data:`ID_ALIASES`.
    predicted : str or None
        The predicted-label column; ``None``: found by :data:`PREDICTED_ALIASES` unless
        ``score`` is given.
    score : str or None
        A score column; an item is a predicted positive when ``score >= threshold``.
    threshold : float or None
        Needed with ``score``.
    classifiers : tuple of str
        One flag column per further classifier (values as for ``predicted``).
    keep : tuple of str
        Columns copied to the labeling sheet for the labelers (subject, link, ...).
    """

    id: str | None = None
    predicted: str | None = None
    score: str | None = None
    threshold: float | None = None
    classifiers: tuple[str, ...] = ()
    keep: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.score is not None and self.threshold is None:
            raise InputError(
                f"{named('score')} needs {named('threshold')} as well (items scored at or "
                "above it are flagged)"
            )
        if self.threshold is not None and not (
            isinstance(self.threshold, int | float)
            and not isinstance(self.threshold, bool)
            and math.isfinite(self.threshold)
        ):
            raise InputError(
                f"{named('threshold')} must be a finite number (scores at or above it are "
                f"flagged), got {self.threshold!r}"
            )
        if self.threshold is not None and self.score is None:
            raise InputError(
                f"{named('threshold')} needs {named('score')} as well (the column the threshold "
                "cuts)"
            )
        if self.score is not None and self.predicted is not None:
            raise InputError(
                f"give either {named('predicted')} or {named('score')} with "
                f"{named('threshold')}, not both"
            )
        object.__setattr__(self, "classifiers", tuple(self.classifiers))
        object.__setattr__(self, "keep", tuple(self.keep))
        if len(self.classifiers) > MAX_CLASSIFIERS:
            # Each classifier adds aggregates over every row: 800 of them on a 100-row list
            # took 3.6 GB (fuzz 13b).
            raise InputError(
                f"{named('classifiers')} names {len(self.classifiers):,} classifiers; one draw "
                f"takes at most {MAX_CLASSIFIERS} further classifiers"
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class ClassifierCount:
    """Population counts of one classifier's strata.

    Attributes
    ----------
    name : str
        The classifier: the predicted column's header (or ``score >= T``), or a flag
        column's header.
    column : str
        The column its prediction comes from.
    population_pos, population_neg : int
        Items it predicts positive / negative (``N1``, ``N0``).
    flagged_by_main : int or None
        For a further classifier: how many of the items it flags the main classifier
        flags too (the overlap the Ensemble tab's label reuse needs); ``None`` for the
        main classifier.
    """

    name: str
    column: str
    population_pos: int
    population_neg: int
    flagged_by_main: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ItemSummary:
    """What :func:`count_items` found: the population per stratum, per classifier.

    Attributes
    ----------
    file_name : str
        The item list's file name.
    rows : int
        Items (data rows).
    primary : ClassifierCount
        The classifier of the predicted (or score) column.
    classifiers : tuple of ClassifierCount
        The flag columns' classifiers, in the order given.
    other_columns : tuple of str
        The list's columns that hold neither the id, nor a prediction or score, nor a
        classifier's flags: what the editors may need to see (subject, link).
    headers : tuple of str
        Every column of the list, in the file's order.
    id_column : str
        The column the ids were read from ("" when not known).
    """

    file_name: str
    rows: int
    primary: ClassifierCount
    classifiers: tuple[ClassifierCount, ...] = ()
    other_columns: tuple[str, ...] = ()
    headers: tuple[str, ...] = ()
    id_column: str = ""

    @property
    def population_pos(self) -> int:
        return self.primary.population_pos

    @property
    def population_neg(self) -> int:
        return self.primary.population_neg


def quote_identifier(name: str) -> str:
    """``name`` as a double-quoted SQL identifier (DuckDB, PostgreSQL, standard SQL)."""
    return '"' + name.replace('"', '""') + '"'


def id_found_by_alias(header: str) -> bool:
    """Whether ``header`` is one of :data:`ID_ALIASES` (else, given no id column, it was
    read as the id for being the one column named like an id: said to the user)."""
    return _normalise(header) in {_normalise(name) for name in ID_ALIASES}


def _normalise(text: object) -> str:
    """Lower-case letters and digits only: ``"Item id"``, ``"item_id"`` -> ``"itemid"``."""
    folded = unicodedata.normalize("NFKC", str(text)).casefold()
    return "".join(ch for ch in folded if ch.isalnum())


def text_of_cell(value: object) -> str | None:
    """A spreadsheet cell as the text it shows: ``123`` (not ``123.0``), dates in ISO.

    Returns ``None`` for an empty cell.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    return str(value)


def _sql_words(words: Sequence[str]) -> str:
    return ", ".join("'" + word.replace("'", "''") + "'" for word in words)


def label_expression(column_sql: str) -> str:
    """SQL (DuckDB) giving ``TRUE``/``FALSE`` for a label column, ``NULL`` for anything else."""
    raw = f"CAST({column_sql} AS VARCHAR)"
    text = f"lower(trim({raw}))"
    # Most lists hold plain 1 and 0: matched as they are, they skip lower() and trim(),
    # which halves the cost of reading ten million rows.
    return (
        f"CASE {raw} WHEN '1' THEN TRUE WHEN '0' THEN FALSE ELSE "
        f"CASE WHEN {text} IN ({_sql_words(POSITIVE_WORDS)}) THEN TRUE "
        f"WHEN {text} IN ({_sql_words(NEGATIVE_WORDS)}) THEN FALSE END END"
    )


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


class _Digest:
    """The file's SHA-256, computed in a thread while DuckDB reads the same file."""

    def __init__(self, path: Path) -> None:
        self._result: str | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(path,), daemon=True)
        self._thread.start()

    def _run(self, path: Path) -> None:
        try:
            self._result = _file_digest(path)
        except BaseException as exc:  # reported to the caller by value()
            self._error = exc

    def value(self) -> str:
        self._thread.join()
        if self._error is not None:
            raise ItemListError(f"could not read the item list to fingerprint it: {self._error}")
        assert self._result is not None
        return self._result


def _kind_of(path: Path) -> str:
    """``"csv"``, ``"tsv"``, ``"parquet"`` or ``"xlsx"``, from the name, else the content."""
    name = path.name.casefold()
    if name.endswith(_XLSX_SUFFIXES):
        return "xlsx"
    if name.endswith(_PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith((".tsv", ".tab", ".tsv.gz")):
        return "tsv"
    if name.endswith(_CSV_SUFFIXES):
        return "csv"
    with path.open("rb") as stream:
        head = stream.read(_SNIFF_BYTES)
    if head.startswith(b"PK"):
        return "xlsx"
    if head.startswith(b"PAR1"):
        return "parquet"
    return "csv"


def _check_file(path: Path) -> None:
    from core.workbook.xlsx_reader import check_regular_file

    check_regular_file(path, "an item list (a table)", ItemListError)


#: How many times its size a compressed item list may expand (text tables compress 3 to
#: 50 times; 389 KB of "a,0" lines expanded to 400 MB and took 6.6 GB; fuzz 15), and the
#: least it may expand to whatever its size.
_MAX_EXPANSION = 200
_MIN_EXPANDED_BYTES = 64 << 20


def _check_expansion(path: Path) -> None:
    """Refuse a ``.gz`` item list that expands more than :data:`_MAX_EXPANSION` times its
    size, or that is not gzip at all, reading at most that much."""
    import gzip
    import zlib

    limit = max(_MAX_EXPANSION * path.stat().st_size, _MIN_EXPANDED_BYTES)
    expanded = 0
    try:
        with gzip.open(path, "rb") as stream:
            while chunk := stream.read(1 << 20):
                expanded += len(chunk)
                if expanded > limit:
                    raise ItemListError(
                        f"{path.name} is compressed and expands more than {_MAX_EXPANSION} "
                        f"times its size (past {limit >> 20:,} MB): a damaged or deliberately "
                        "packed file; unpack it yourself and give the .csv"
                    )
    except gzip.BadGzipFile as exc:
        with path.open("rb") as stream:
            compressed = stream.read(2) == b"\x1f\x8b"
        if compressed:
            # A bad checksum or bytes after the end: damaged, not a plain table (fuzz 21).
            why = (
                "its checksum does not match what it holds"
                if "CRC" in str(exc)
                else "something that is not compressed follows its end"
                if "Not a gzipped file" in str(exc)
                else "its compressed data are broken"
            )
            raise ItemListError(
                f"{path.name} is compressed but damaged ({why}): copy it again from where it "
                "came from, or unpack it yourself and give the .csv"
            ) from None
        raise ItemListError(
            f"{path.name} is not compressed, though its name ends in .gz; if it is a plain "
            "table, give it a name without .gz (items.csv)"
        ) from None
    except (OSError, EOFError, zlib.error) as exc:
        raise ItemListError(
            f"{path.name} cannot be read as a compressed (.gz) table: {exc}; unpack it "
            "yourself and give the .csv"
        ) from None


def _check_text_table(path: Path) -> None:
    """Refuse a binary file given as CSV before DuckDB's sniffer produces nonsense, and a
    first row longer than DuckDB reads before it spends seconds finding out."""
    with path.open("rb") as stream:
        head = stream.read(_SNIFF_BYTES)
        if path.name.casefold().endswith(".gz"):
            _check_expansion(path)
            return
        start = head + stream.read(2 * _MAX_LINE_BYTES)
    zeros = max(head[0::2].count(0), head[1::2].count(0))
    if len(head) >= 4 and zeros > len(head) // 4 and b"\x00\x00" not in head:
        # Excel's "Unicode Text" export: UTF-16 with a zero byte beside every letter.
        raise ItemListError(
            f'{path.name} is UTF-16 text (Excel\'s "Unicode Text"), which PR Planner does '
            "not read; save it as CSV UTF-8 (in Excel: Save As > CSV UTF-8) and give that file"
        )
    if head.startswith(b"\xd0\xcf\x11\xe0"):  # OLE: Excel 97-2003 (or password-protected)
        raise ItemListError(
            f"{path} is an old Excel 97-2003 workbook (.xls) or a password-protected one; "
            "open it in Excel or LibreOffice and save it as an Excel workbook (.xlsx) "
            "without a password"
        )
    if head.startswith((b"PK", b"PAR1")) or b"\x00" in head:
        raise ItemListError(
            f"{path} is not a table: it is a binary file, not text (CSV/TSV); give a .csv, "
            ".tsv, .parquet or .xlsx item list"
        )
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # a character cut by the sniff length is fine
            row = head.count(b"\n", 0, exc.start) + 1
            line_start = head.rfind(b"\n", 0, exc.start) + 1
            line_end = head.find(b"\n", exc.start)
            line = head[line_start : line_end if line_end >= 0 else len(head)]
            shown = line.decode("utf-8", errors="replace").strip()[:60]
            raise ItemListError(
                f"{path} is not UTF-8 text: row {row:,} ({shown!r}) has a character in "
                "another encoding (an old export, Latin-1 or Windows-1252); save the file as "
                "CSV UTF-8"
            ) from None
    _refuse_long_first_rows(path, start)
    _refuse_many_columns(path, start)
    first_line = re.split(rb"\r\n|\r|\n", start.removeprefix(b"\xef\xbb\xbf"), maxsplit=1)[0]
    if re.fullmatch(rb"\s*sep=.\s*", first_line, re.IGNORECASE):
        raise ItemListError(
            f"{path.name} starts with the line {first_line.decode(errors='replace').strip()!r}, "
            "Excel's note of the separator, which other programs read as the header; delete "
            "that first line (the header row is the one after it) and read the file again"
        )


#: Most columns an item list may have: DuckDB's sniffer takes seconds per thousand
#: columns, and an item list has a few (id, prediction, what the labelers need).
MAX_ITEM_COLUMNS = 1_000


def _refuse_many_columns(path: Path, start: bytes) -> None:
    """Refuse a header row of more than :data:`MAX_ITEM_COLUMNS` fields before DuckDB
    spends minutes on it (fields counted by the most frequent separator)."""
    header = re.split(rb"\r\n|\r|\n", start, maxsplit=1)[0]
    fields = 1 + max(header.count(separator) for separator in (b",", b";", b"\t", b"|"))
    if fields > MAX_ITEM_COLUMNS:
        raise ItemListError(
            f"{path.name}: its first row has about {fields:,} columns; an item list needs a "
            "few (the item id, the prediction, the columns the labelers need), and PR Planner "
            f"reads at most {MAX_ITEM_COLUMNS:,}. Export only the columns you need"
        )


def _refuse_long_first_rows(path: Path, start: bytes) -> None:
    """Refuse when the file's first bytes hold a row longer than DuckDB's line limit (a
    last piece cut by the read counts too: its row is longer still)."""
    if len(start) <= _MAX_LINE_BYTES:
        return
    for number, line in enumerate(start.split(b"\n"), start=1):
        if len(line) > _MAX_LINE_BYTES:
            raise ItemListError(
                f"{path.name}: row {number:,} is longer than {_MAX_LINE_BYTES:,} bytes (a "
                "field of megabytes, or a file without line ends); an item list has one "
                "short row per item"
            )


class ScaledControl(progress.TaskControl):
    """Reports ``start + share * fraction`` to ``parent``: one step of a longer task (the
    draw scans the file twice; the progress bar should not start over)."""

    def __init__(self, parent: progress.TaskControl, start: float, share: float) -> None:
        super().__init__()
        self._parent = parent
        self._start = start
        self._share = share

    def cancel(self) -> None:
        self._parent.cancel()

    @property
    def cancelled(self) -> bool:
        return self._parent.cancelled

    def step(self, done: float, total: float) -> None:
        fraction = min(1.0, done / total) if total > 0 else 0.0
        self._parent.step(self._start + self._share * fraction, 1.0)


def scaled(
    control: progress.TaskControl | None, start: float, share: float
) -> progress.TaskControl | None:
    """``control`` seen as the part ``[start, start + share]`` of a task (``None`` stays)."""
    return None if control is None else ScaledControl(control, start, share)


def _duckdb():
    try:
        import duckdb
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise ItemListError(
            "reading item lists needs the duckdb package (pip install duckdb)"
        ) from exc
    return duckdb


#: How much of a text file is looked at for mixed line ends after a read error.
_LINE_END_BYTES = 16 << 20


def _line_end_kinds(path: Path, limit: int | None) -> list[str]:
    """The kinds of line ends in the first ``limit`` bytes of a text file (all of it for
    ``None``): Windows ``\r\n``, Unix ``\n``, old Mac ``\r``. None for a compressed
    file, whose bytes say nothing of its lines (they were "repaired", which broke it;
    fuzz 15)."""
    if path.name.casefold().endswith(".gz"):
        return []
    windows = unix = mac = 0
    carried = b""
    read = 0
    try:
        with path.open("rb") as stream:
            while limit is None or read < limit:
                raw = stream.read(1 << 22 if limit is None else min(1 << 22, limit - read))
                if not raw:
                    mac += len(carried)  # the file ends in a lone "\r"
                    break
                read += len(raw)
                # A "\r" at the end may be the first half of a "\r\n" the block split.
                block = carried + raw
                carried = b"\r" if block.endswith(b"\r") else b""
                if carried:
                    block = block[:-1]
                both = block.count(b"\r\n")
                windows += both
                unix += block.count(b"\n") - both
                mac += block.count(b"\r") - both
    except OSError:
        return []
    counts = (("Windows", windows), ("Unix", unix), ("old Mac", mac))
    return [name for name, count in counts if count]


def _mixed_line_ends(path: Path) -> str | None:
    """Why a text table failed when its rows end in different ways further down than
    :func:`open_items` looked before reading (DuckDB only says its parser "reached an
    invalid state"). The whole file is read: only after a failure."""
    used = _line_end_kinds(path, None)
    if len(used) < 2:
        return None
    return (
        f"its rows end in different ways ({' and '.join(used)} line ends mixed, as when rows "
        "are added by another tool); open it in a spreadsheet program and save it as CSV "
        "UTF-8, which writes one kind"
    )


def _with_one_line_end(path: Path, folder: Path, kind: str) -> Path:
    """A copy of ``path`` in ``folder`` whose every line ends in ``\n``: rows appended by
    another tool often end differently from the rest, which DuckDB's reader refuses. Lines
    map one to one, so the rows a message names are the file's own."""
    target = folder / _plain_file_name(path, kind)
    with path.open("rb") as source, target.open("wb") as copy:
        carried = b""
        for block in iter(lambda: source.read(1 << 23), b""):
            block = carried + block
            # A "\r" at the end may be the first half of a "\r\n" split by the block.
            carried = b"\r" if block.endswith(b"\r") else b""
            if carried:
                block = block[:-1]
            copy.write(block.replace(b"\r\n", b"\n").replace(b"\r", b"\n"))
        if carried:
            copy.write(b"\n")
    return target


#: Characters DuckDB's file readers take as a file-name pattern: ``items[12].csv`` read
#: ``items1.csv`` beside it, and ``month?.csv`` every month (fuzz 20).
_PATTERN_CHARACTERS = frozenset("*?[]{}")


def _plain_file_name(path: Path, kind: str) -> str:
    """A name without pattern characters, with the ending DuckDB reads ``kind`` by."""
    return f"items.{kind}" + (".gz" if path.name.casefold().endswith(".gz") else "")


def _read_literally(path: Path, kind: str, temporary: Path | None) -> tuple[Path, Path | None]:
    """``path`` as DuckDB may be given it (a name it reads as itself, never as a pattern of
    names), and the temporary folder holding it if one was needed."""
    # The name as given counts too: a link named l[1].csv to a plain file was read as the
    # pattern (review 20).
    if not _PATTERN_CHARACTERS.intersection(str(path.absolute()) + str(path.resolve())):
        return path, temporary
    folder = temporary or Path(tempfile.mkdtemp(prefix="prplanner-items-"))
    plain = folder / _plain_file_name(path, kind)
    try:
        plain.symlink_to(path.resolve())
    except OSError:  # no symbolic links here (Windows without the right): a copy
        shutil.copyfile(path, plain)
    return plain, folder


_CSV_LINE = re.compile(r"CSV Error on Line: (\d+)")
_COLUMN_COUNTS = re.compile(r"Expected Number of Columns: (\d+) Found: (\d+)")


#: How long the search for a row with another number of fields may take (an error path:
#: a few million rows are read in that time).
_UNEVEN_SEARCH_SECONDS = 3.0


def _first_uneven_row(path: Path) -> str | None:
    """``row 5,002 has 2 fields where the header has 3`` for the first row of a text
    table whose field count differs from its header's (quotes respected, the separator the
    header uses most), or ``None`` when none is found within a few seconds."""
    import csv
    import time

    if path.name.casefold().endswith(".gz"):
        return None  # compressed: DuckDB's own words
    deadline = time.monotonic() + _UNEVEN_SEARCH_SECONDS
    try:
        with path.open(encoding="utf-8", errors="replace", newline="") as stream:
            first = stream.readline(_MAX_LINE_BYTES)
            hint = first.strip().casefold().startswith("sep=") and len(first.strip()) == 5
            if hint:  # Excel's "sep=;" line names the separator; the header follows it
                separator = first.strip()[4]
            else:
                separator = max(",;\t|", key=first.count)
                stream.seek(0)
            rows = csv.reader(stream, delimiter=separator)
            expected = len(next(rows, []))
            for number, row in enumerate(rows, start=3 if hint else 2):
                if row and len(row) != expected:
                    return (
                        f"row {number:,} has {len(row)} fields where the header has "
                        f"{expected}; every row needs the same number of fields (look for a "
                        "stray separator or quote on that row)"
                    )
                if number % 65_536 == 0 and time.monotonic() > deadline:
                    return None
    except (OSError, csv.Error):
        return None
    return None


def _plain_duckdb_message(exc: BaseException, path: Path | None = None) -> str:
    """What a DuckDB read error means for the person who made the file, in plain words
    (the row as a spreadsheet numbers it, header = row 1); otherwise the error's first
    line without its class prefix."""
    full = str(exc).strip()
    line = _CSV_LINE.search(full)
    row = f"row {int(line.group(1)):,}" if line else "a row"
    columns = _COLUMN_COUNTS.search(full)
    if columns:
        expected, found = (int(number) for number in columns.groups())
        return (
            f"{row} has {found} fields where the header has {expected}; every row needs "
            "the same columns (look for a stray separator or quote on that row)"
        )
    if "Invalid unicode" in full or "not utf-8 encoded" in full:
        return f"{row} is not UTF-8 text; save the file as CSV UTF-8"
    if "unterminated quote" in full.casefold():
        return f"{row} opens a quote that is never closed"
    if "Maximum line size" in full:
        return (
            f"a row is longer than {_MAX_LINE_BYTES:,} bytes (a field of megabytes, or a file "
            "without line ends); an item list has one short row per item"
        )
    if "No magic bytes found" in full:
        return "it is not a Parquet file, or it was cut short (it has no Parquet footer)"
    if "decompression failure" in full.casefold() or "corrupt" in full.casefold():
        return "a part of its data is damaged and cannot be read; export the list again"
    if "Error when sniffing file" in full:
        uneven = _first_uneven_row(path) if path is not None else None
        if uneven is not None:
            return uneven
        return (
            "its columns could not be told apart (rows with different numbers of fields, or "
            "quotes that do not close); open it in a spreadsheet program and save it as CSV"
        )
    text = full.splitlines()[0] if full else type(exc).__name__
    for prefix in ("Invalid Input Error: ", "IO Error: ", "Conversion Error: ", "Binder Error: "):
        text = text.removeprefix(prefix)
    return text


class ItemTable:
    """An open item list: a DuckDB connection and the SQL that reads the file's rows.

    Use it as a context manager (``with open_items(...) as items:``); closing it closes
    the connection and removes any temporary file. Not thread-safe: one query at a time.

    Attributes
    ----------
    path : Path
        The item list.
    kind : str
        ``"csv"``, ``"tsv"``, ``"parquet"`` or ``"xlsx"``.
    headers : tuple of str
        Every column's header, in file order.
    columns : ItemColumns
        The columns actually used (every name resolved to a header).
    primary_name : str
        Name of the classifier of the predicted (or score) column.
    """

    def __init__(
        self,
        path: Path,
        kind: str,
        connection: Any,
        source_sql: str,
        headers: tuple[str, ...],
        columns: ItemColumns,
        row_sql: str | None,
        first_row: int,
        digest: _Digest,
        temporary: Path | None = None,
    ) -> None:
        self.path = path
        self.kind = kind
        self.connection = connection
        self.source_sql = source_sql
        self.headers = headers
        self.columns = columns
        self._row_sql = row_sql
        self._first_row = first_row
        self._digest = digest
        self._temporary = temporary
        #: Numbers are written 0,25 (a semicolon-separated export, as Excel writes CSV where
        #: the comma is the decimal mark): scores are read with a decimal comma.
        self.decimal_comma = False
        if columns.score is not None:
            self.primary_name = f"{columns.score} >= {threshold_text(columns.threshold)}"
        else:
            assert columns.predicted is not None
            self.primary_name = columns.predicted

    # --- life cycle ------------------------------------------------------------------------

    def __enter__(self) -> ItemTable:
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        if isinstance(exc, ItemListError) and not exc.headers:
            exc.headers = self.headers
        self.close()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.connection.close()
        if self._temporary is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)
            self._temporary = None

    # --- SQL pieces ------------------------------------------------------------------------

    @property
    def file_sha256(self) -> str:
        """SHA-256 of the item list's bytes (computed while the rows are read)."""
        return self._digest.value()

    def id_sql(self) -> str:
        """The item id as text with surrounding spaces removed (the rule's ``item_id``)."""
        # DuckDB's one-argument trim removes Unicode's space separators, the rule's SPACES
        # (tabs and line breaks stay), and is several times faster than trim(x, chars) on
        # millions of ids.
        return f"trim(CAST({quote_identifier(self.columns.id or '')} AS VARCHAR))"

    def primary_sql(self) -> str:
        """``TRUE`` (predicted positive), ``FALSE`` or ``NULL`` (not a label)."""
        columns = self.columns
        if columns.score is not None:
            value = f"trim(CAST({quote_identifier(columns.score)} AS VARCHAR))"
            if self.decimal_comma:
                value = f"replace({value}, ',', '.')"
            number = f"TRY_CAST({value} AS DOUBLE)"
            # NaN is not a score (DuckDB orders it above every number, so it would count as
            # flagged), nor is infinity (a 400-digit number read as a double): NULL, refused
            # as not a finite number with its rows named.
            return (
                f"(CASE WHEN isnan({number}) OR isinf({number}) THEN NULL "
                f"ELSE {number} >= {float(columns.threshold or 0.0)!r} END)"
            )
        return label_expression(quote_identifier(columns.predicted or ""))

    def classifier_sql(self, column: str) -> str:
        return label_expression(quote_identifier(column))

    def keyed_rows_sql(self, extra: Sequence[str] = ()) -> str:
        """Rows as ``item_id, primary_flag, c0, c1, ..., k0, k1, ..., extra``."""
        parts = [f"{self.id_sql()} AS item_id", f"{self.primary_sql()} AS primary_flag"]
        if self.columns.score is None:
            parts.append(f"{_sign_sql(self.columns.predicted or '')} AS primary_sign")
        for index, name in enumerate(self.columns.classifiers):
            parts.append(f"{self.classifier_sql(name)} AS c{index}")
            parts.append(f"{_sign_sql(name)} AS c{index}_sign")
        parts += [
            f"CAST({quote_identifier(name)} AS VARCHAR) AS k{index}"
            for index, name in enumerate(self.columns.keep)
        ]
        parts += list(extra)
        return f"SELECT {', '.join(parts)} FROM {self.source_sql}"

    def _numbered_sql(self) -> str:
        """The rows with their row numbers as a spreadsheet shows them (offender search)."""
        if self._row_sql is not None:
            return self.keyed_rows_sql([f"CAST({self._row_sql} AS BIGINT) AS row_number"])
        return (
            f"SELECT *, row_number() OVER () + {self._first_row - 1} AS row_number "
            f"FROM ({self.keyed_rows_sql()})"
        )

    def where(self, row: int) -> str:
        """``row 12`` (spreadsheet rows, header = row 1) or ``record 12`` for Parquet."""
        return f"record {row}" if self.kind == "parquet" else f"row {row}"

    # --- running queries -------------------------------------------------------------------

    def query(
        self, sql: str, control: progress.TaskControl | None = None, *, numpy: bool = False
    ) -> Any:
        """Run ``sql``; with ``control``, report DuckDB's progress and honour cancel.

        Returns the rows as tuples, or with ``numpy`` a dict of column name -> array.

        Raises
        ------
        ItemListError
            DuckDB could not read the file (the message names it).
        core.progress.Cancelled
            ``control`` was cancelled; the query is interrupted.
        """
        duckdb = _duckdb()

        def fetch() -> Any:
            result = self.connection.execute(sql)
            return result.fetchnumpy() if numpy else result.fetchall()

        if control is None:
            try:
                return fetch()
            except duckdb.Error as exc:
                raise self._read_error(exc) from None
        outcome: dict[str, Any] = {}

        def work() -> None:
            try:
                outcome["rows"] = fetch()
            except BaseException as exc:
                outcome["error"] = exc

        worker = threading.Thread(target=work, daemon=True)
        worker.start()
        try:
            while worker.is_alive():
                worker.join(0.1)
                with contextlib.suppress(Exception):
                    done = self.connection.query_progress()
                    if done >= 0:
                        control.step(done, 100.0)
                        continue
                control.step(0.0, 100.0)
        except progress.Cancelled:
            self.connection.interrupt()
            worker.join()
            raise
        error = outcome.get("error")
        if error is not None:
            if isinstance(error, duckdb.Error):
                raise self._read_error(error) from None
            raise error
        return outcome["rows"]

    def _read_error(self, exc: BaseException) -> ItemListError:
        if self.kind == "parquet":  # not text: its line ends say nothing (fuzz 20)
            return ItemListError(
                f"{self.path} could not be read as a table: {_plain_duckdb_message(exc)}"
            )
        return ItemListError(
            f"{self.path} could not be read as a table: "
            f"{_mixed_line_ends(self.path) or _plain_duckdb_message(exc, self.path)}"
        )

    # --- validation ------------------------------------------------------------------------

    def scan(
        self, aggregates: Sequence[str], rows_sql: str, control: progress.TaskControl | None
    ) -> tuple[tuple[Any, ...], np.ndarray]:
        """One pass over the file: the ``aggregates`` over ``rows_sql`` (which has an
        ``item_id`` column) and the 64-bit hashes of every id, for the duplicate check.

        Reading a large CSV is most of the cost of any query, so the hashes are gathered in
        the same pass (as one list) rather than by a second scan; the one-row result is kept
        in a temporary table so that the aggregates come back as Python values and the
        hashes as one numpy array, without ten million Python integers.
        """
        self.query(
            f"CREATE OR REPLACE TEMP TABLE scan_result AS SELECT {', '.join(aggregates)}, "
            # Missing ids are named as missing, not as duplicates of each other.
            "list(hash(item_id)) FILTER (WHERE item_id IS NOT NULL AND item_id <> '') "
            f"AS id_hashes FROM ({rows_sql})",
            control,
        )
        try:
            (values,) = self.query("SELECT * EXCLUDE (id_hashes) FROM scan_result")
            hashes = self.query("SELECT unnest(id_hashes) AS h FROM scan_result", numpy=True)["h"]
        finally:
            self.connection.execute("DROP TABLE IF EXISTS scan_result")
        return tuple(values), np.asarray(hashes, dtype=np.uint64)

    def check_rows(self, counts: dict[str, int], id_hashes: np.ndarray) -> None:
        """Refuse, naming the first offenders, when the aggregate ``counts`` or the ids'
        hashes show a problem.

        ``counts`` holds ``missing``, ``bad_primary`` and ``bad_c{i}`` from the same scan
        as the population counts, and ``id_hashes`` the 64-bit hash of every id.
        """
        # Every kind of problem is named at once: a lead fixing a long export should not
        # learn of the duplicates only after fixing the empty ids.
        checks: list[Callable[[], None]] = []
        if counts["missing"]:
            checks.append(lambda: self._refuse_missing(counts["missing"]))
        if counts.get("quoted"):
            checks.append(lambda: self._refuse_stray_quotes(counts["quoted"]))
        if counts.get("errors"):
            checks.append(lambda: self._refuse_error_ids(counts["errors"]))
        if counts.get("lone_dashes"):
            checks.append(
                functools.partial(
                    self._refuse_lone_dashes,
                    counts["lone_dashes"],
                    self.columns.predicted or "",
                    "primary_sign",
                )
            )
        if counts["bad_primary"]:
            column = self.columns.score or self.columns.predicted or ""
            checks.append(
                functools.partial(
                    self._refuse_bad_label, counts["bad_primary"], column, "primary_flag"
                )
            )
        for index, name in enumerate(self.columns.classifiers):
            if counts.get(f"lone_dashes_c{index}"):
                checks.append(
                    functools.partial(
                        self._refuse_lone_dashes,
                        counts[f"lone_dashes_c{index}"],
                        name,
                        f"c{index}_sign",
                    )
                )
            if counts[f"bad_c{index}"]:
                checks.append(
                    functools.partial(
                        self._refuse_bad_label, counts[f"bad_c{index}"], name, f"c{index}"
                    )
                )
        checks.append(lambda: self._refuse_duplicates(id_hashes))
        problems = []
        for check in checks:
            try:
                check()
            except ItemListError as exc:
                problems.append(str(exc))
        if len(problems) == 1:
            raise ItemListError(problems[0])
        if problems:
            prefix = f"{self.path.name}: "
            parts = [text.removeprefix(prefix) for text in problems]
            raise ItemListError(
                f"{prefix}{len(parts)} problems: "
                + " ".join(f"({number}) {part}." for number, part in enumerate(parts, 1))
            )

    def _in_file_order(self) -> None:
        """Offender searches number rows with ``row_number() OVER ()``: keep file order."""
        self.connection.execute("SET preserve_insertion_order = true")

    def _offenders(self, condition: str, how_many: int, *, with_id: bool = False) -> str:
        """The first rows (in file order) where ``condition`` holds: ``row 3, row 6, ...``
        or, ``with_id``, ``row 3: '#N/A'; row 6: '#REF!'; ...``."""
        self._in_file_order()
        shown = "row_number, item_id" if with_id else "row_number"
        rows = self.query(
            f"SELECT {shown} FROM ({self._numbered_sql()}) WHERE {condition} "
            f"ORDER BY row_number LIMIT {OFFENDERS_SHOWN}"
        )
        if with_id:
            text = "; ".join(f"{self.where(row)}: {_shown_value(value)}" for row, value in rows)
            return text + ("; ..." if how_many > len(rows) else "")
        return ", ".join(self.where(row) for row, *_ in rows) + (
            ", ..." if how_many > len(rows) else ""
        )

    def _refuse_missing(self, how_many: int) -> None:
        where = self._offenders("item_id IS NULL OR item_id = ''", how_many)
        raise ItemListError(
            f"{self.path.name}: {how_many:,} item(s) have no id in column "
            f"{self.columns.id!r} ({where}); every item needs an id"
        )

    def _refuse_stray_quotes(self, how_many: int) -> None:
        where = self._offenders(_STRAY_QUOTE, how_many, with_id=True)
        raise ItemListError(
            f"{self.path.name}: {how_many:,} id(s) in column {self.columns.id!r} begin with a "
            f'quote (") that is not closed where the id ends ({where}); remove the stray '
            "quote so that each id reads as your other systems have it"
        )

    def _refuse_error_ids(self, how_many: int) -> None:
        """Ids that are an Excel error exported as text (#N/A of a failed lookup): drawn,
        they are items the labelers cannot find (fuzz 19)."""
        where = self._offenders(_ERROR_ID, how_many, with_id=True)
        raise ItemListError(
            f"{self.path.name}: {how_many:,} id(s) in column {self.columns.id!r} are an "
            f"Excel error, not an item's id ({where}); a lookup or formula failed where the "
            "list was made: fix it there, or remove those rows, and export the list again"
        )

    def _refuse_lone_dashes(self, how_many: int, column: str, sign: str) -> None:
        """A "-" among a classifier's predictions (its ``sign`` column: see
        :func:`_sign_sql`), and no "+": the column's own labels are others (1 and 0), and
        "-" is the export's "not scored". Read as predicted negative, 100 of 1,000 items
        moved into the unflagged list without a word (fuzz 19)."""
        where = self._offenders(f"{sign} = 1", how_many)
        raise ItemListError(
            f"{self.path.name}: {how_many:,} value(s) in column {column!r} are a lone '-' "
            f"({where}) and no value is '+': in an export a dash often means the item was "
            "not scored; give those items their prediction (or write + and - for every item) "
            "and read the list again"
        )

    def _refuse_bad_label(self, how_many: int, column: str, flag: str) -> None:
        shown = quote_identifier(column)
        self._in_file_order()
        rows = self.query(
            f"SELECT row_number, CAST({shown} AS VARCHAR) FROM (SELECT *, "
            f"{flag} AS flag FROM ({self._numbered_with_raw(column)})) WHERE flag IS NULL "
            f"ORDER BY row_number LIMIT {OFFENDERS_SHOWN}"
        )
        examples = "; ".join(
            f"{self.where(row)}: {'(empty)' if value is None else _shown_value(value)}"
            for row, value in rows
        )
        if self.columns.score is not None and column == self.columns.score:
            what = "a finite number"
        else:
            what = "a label (1/0, yes/no, true/false, +/-, positive/negative)"
        raise ItemListError(
            f"{self.path.name}: {how_many:,} value(s) in column {column!r} are not {what}: "
            f"{examples}{'; ...' if how_many > len(rows) else ''}"
        )

    def _numbered_with_raw(self, column: str) -> str:
        raw = f"{quote_identifier(column)} AS {quote_identifier(column)}"
        if self._row_sql is not None:
            return self.keyed_rows_sql([f"CAST({self._row_sql} AS BIGINT) AS row_number", raw])
        return (
            f"SELECT *, row_number() OVER () + {self._first_row - 1} AS row_number "
            f"FROM ({self.keyed_rows_sql([raw])})"
        )

    def _refuse_duplicates(self, id_hashes: np.ndarray) -> None:
        # The 64-bit hashes of all ids, sorted by numpy: a third of the time (and memory) of
        # DuckDB grouping ten million ids. Equal neighbours are duplicates or, rarely, a
        # hash collision, which the exact search below tells apart.
        duplicated = _repeated_values(id_hashes)
        if not duplicated:
            return
        self._in_file_order()
        rows = self.query(
            f"SELECT item_id, count(*), list(row_number ORDER BY row_number)[1:3] FROM "
            f"({self._numbered_sql()}) WHERE item_id IS NOT NULL AND item_id <> '' "
            # Excel errors are named as such, not as duplicates of each other (review 19).
            f"AND NOT {_ERROR_ID} GROUP BY item_id HAVING count(*) > 1 "
            f"ORDER BY min(row_number) LIMIT {OFFENDERS_SHOWN}"
        )
        if not rows:  # two ids with one 64-bit hash (or only Excel errors): no duplicate
            return
        shown = "; ".join(
            f"{item_id!r} {count} times ({', '.join(self.where(row) for row in where)}"
            f"{', ...' if count > len(where) else ''})"
            for item_id, count, where in rows
        )
        more = " and more" if OFFENDERS_SHOWN == len(rows) < duplicated else ""
        raise ItemListError(
            f"{self.path.name}: duplicate item ids in column {self.columns.id!r}: "
            f"{shown}{more}; every item must appear once"
        )

    def refuse_empty(self, name: str, column: str, population_pos: int, population_neg: int):
        """Refuse a classifier whose predicted-positive or -negative stratum is empty."""
        for count, label in ((population_pos, "positive"), (population_neg, "negative")):
            if count == 0:
                raise ItemListError(
                    f"{self.path.name}: no item is predicted {label} in column {column!r} "
                    f"(classifier {name!r}); a stratum with no items cannot be sampled. "
                    "Check the column and its values"
                )


def _repeated_values(hashes: np.ndarray) -> int:
    """How many values occur more than once in ``hashes`` (uint64; read, not changed).

    Hashes below and above 2**63 cannot be equal, so the two halves are sorted on two
    threads (numpy sorts without the GIL): 0.45 s instead of 0.68 s for ten million.
    """
    high = hashes >= np.uint64(1 << 63)
    halves = [hashes[~high], hashes[high]]
    del high

    def repeated(half: np.ndarray) -> int:
        half.sort()
        # One id three times is one repeated id, not two: what "and more" is said by.
        return int(np.unique(half[1:][half[1:] == half[:-1]]).size)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return sum(pool.map(repeated, halves))


def _shown_value(value: str) -> str:
    """A cell's text for a message: ``'yes please'``, a long one cut with its length."""
    if len(value) <= 30:
        return repr(value)
    return f"{value[:20]!r}… ({len(value):,} characters)"


#: The labeling sheet's own headers: no kept column of the item list may take one.
LABELING_SHEET_HEADERS = ("Rank", "Item id", "Stratum", "Label", "Labeler", "Comment")


def _same_header(first: str, second: str) -> bool:
    return " ".join(first.split()).casefold() == " ".join(second.split()).casefold()


def _resolve(path: Path, headers: Sequence[str], wanted: ItemColumns) -> ItemColumns:
    """Every column name resolved to a header of the file (by name, ignoring case and
    punctuation; the id and predicted columns also by alias)."""
    by_name: dict[str, str] = {}
    for header in headers:
        by_name.setdefault(_normalise(header), header)
    listed = ", ".join(repr(header) for header in headers) or "none"

    def find(name: str, flag: str) -> str:
        if name in headers:
            return name
        found = by_name.get(_normalise(name))
        if found is None:
            raise ColumnNotFoundError(
                f"{path.name} has no column {name!r} (given by {flag}); its columns are: {listed}"
            )
        return found

    def alias(aliases: Sequence[str], what: str, flag: str) -> str:
        known = {_normalise(name) for name in aliases}
        matching = [header for header in headers if _normalise(header) in known]
        strong = [header for header in matching if _normalise(header) not in _WEAK_ALIASES]
        if strong:
            # "Item" beside "item_id" is a title column, not a second id (review 21).
            matching = strong
        if len(matching) > 1:
            # "Item ID" beside "item_id", or "id" beside "item_id": one was taken without
            # a word (fuzz 21); which holds the ids is the lead's to say.
            raise AmbiguousColumnError(
                f"{path.name} has {len(matching)} columns that could be the {what}: "
                f"{', '.join(repr(header) for header in matching[:5])}; give the one you "
                f"mean with {flag}"
            )
        if matching:
            return matching[0]
        raise ColumnNotFoundError(
            f"{path.name} has no {what} column (looked for {', '.join(aliases[:4])}); its "
            f"columns are: {listed}. Give the name of the {what} column with {flag}"
        )

    if wanted.id:
        id_column = find(wanted.id, named("id"))
    else:
        try:
            id_column = alias(ID_ALIASES, "item id", named("id"))
        except AmbiguousColumnError:
            raise
        except ColumnNotFoundError as exc:
            # "Transaction ID" is the id of a list of transactions: one column named like
            # an id is read as it (a lead picked it by hand every month; trial 16). A wrong
            # one that is still unique draws a sample as random; one that repeats is
            # refused, naming its duplicates.
            like = [header for header in headers if _ID_LIKE.search(str(header).strip())]
            if len(like) != 1:
                if len(like) > 1:
                    raise ColumnNotFoundError(
                        f"{exc} (several are named like an id: "
                        f"{', '.join(repr(header) for header in like[:5])})"
                    ) from None
                raise
            id_column = like[0]
    predicted = score = None
    if wanted.score is not None:
        score = find(wanted.score, named("score"))
    elif wanted.predicted is not None:
        predicted = find(wanted.predicted, named("predicted"))
    else:
        try:
            predicted = alias(PREDICTED_ALIASES, "predicted label", named("predicted"))
        except ItemListError as exc:
            if wanted.classifiers:
                # Flag columns given as further classifiers, none as the main one: the
                # main one decides the sample sizes, so it is named apart.
                first, *rest = wanted.classifiers
                others = f" {named('classifiers')} {','.join(rest)}" if rest else ""
                raise ColumnNotFoundError(
                    f"which classifier is the main one? {named('classifiers')} names the "
                    "further classifiers of the draw; give the main one's flag column with "
                    f"{named('predicted')} (for example {named('predicted')} {first}"
                    f"{others}): the sample sizes are its strata's"
                ) from None
            raise ColumnNotFoundError(
                f"{exc}, or give a score column ({named('score')}) and a threshold "
                f"({named('threshold')})"
            ) from None
    classifiers = tuple(find(name, named("classifiers")) for name in wanted.classifiers)
    keep = tuple(find(name, named("keep")) for name in wanted.keep)
    for name in keep:
        taken = next((own for own in LABELING_SHEET_HEADERS if _same_header(own, name)), None)
        if taken is not None:
            # Written beside the sheet's own, two "Label" columns made every read-back
            # fail, and a kept "Comment" was read as the labeler's (fuzz 18).
            raise ItemListError(
                f"{named('keep')} {name!r}: the labeling sheet has its own {taken!r} column, "
                f"so the labelers would see two; rename that column in {path.name} (or leave "
                f"it out of {named('keep')})"
            )
    used = [id_column, predicted or score, *classifiers]
    for name in classifiers:
        if used.count(name) > 1:
            raise ItemListError(
                f"column {name!r} is named twice (as the id, the prediction or a classifier)"
            )
    if id_column == (predicted or score):
        raise ItemListError(f"column {id_column!r} cannot be both the item id and the prediction")
    return ItemColumns(
        id=id_column,
        predicted=predicted,
        score=score,
        threshold=wanted.threshold,
        classifiers=classifiers,
        keep=tuple(dict.fromkeys(name for name in keep if name != id_column)),
    )


def _new_connection():
    duckdb = _duckdb()
    connection = duckdb.connect(":memory:")
    # Progress is read by ItemTable.query, never printed; insertion order is not needed by
    # any query here, and dropping it lets DuckDB aggregate with less memory.
    connection.execute("SET enable_progress_bar = true")
    connection.execute("SET enable_progress_bar_print = false")
    connection.execute("SET preserve_insertion_order = false")
    # An id column of timestamps with a time zone becomes text in this zone: in the
    # machine's, the same file and seed drew other items in Tokyo than in London (fuzz 20).
    with contextlib.suppress(duckdb.Error):
        connection.execute("SET TimeZone = 'UTC'")
    return connection


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _xlsx_header(
    top: Sequence[tuple[int, list[str | None]]], id_name: str | None
) -> tuple[int, tuple[str, ...]] | None:
    """The header among the top rows: the first naming the id column (by ``id_name`` or an
    alias), else the first with two or more filled cells (a title line has one)."""
    fallback = None
    for row_number, texts in top:
        cells = tuple((text or "").strip() for text in texts)
        if _names_id(cells, id_name):
            return row_number, cells
        if fallback is None and sum(bool(cell) for cell in cells) >= 2:
            fallback = (row_number, cells)
    return fallback


@dataclass(frozen=True)
class _SheetChoice:
    """The sheet of an ``.xlsx`` item list that was read, and the others that had a
    header row (for messages: a lead whose export starts with a Notes sheet must learn
    which sheet was read)."""

    title: str
    others: tuple[str, ...]

    def note(self) -> str:
        """Words for a column message: which sheet was read, when there was a choice."""
        if not self.others:
            return ""
        listed = ", ".join(repr(title) for title in self.others[:5])
        return f" (read from sheet {self.title!r}; the workbook's other sheets: {listed})"


def _header_rank(cells: Sequence[str], columns: ItemColumns) -> tuple[bool, bool, int, int]:
    """How likely a header row heads the items: it names both an id and the decision (a
    predicted label or the score named), it names the decision, how surely it names the
    id (2: as given or by alias, 1: a column named like an id), and how many columns it
    has (a Notes sheet of label/value pairs has two; a lookup sheet has an id alone)."""
    names = {_normalise(cell) for cell in cells if cell}
    decision = {_normalise(name) for name in PREDICTED_ALIASES}
    decision |= {_normalise(name) for name in (columns.predicted, columns.score) if name}
    names_decision = bool(names & decision)
    if _names_id(cells, columns.id):
        id_level = 2
    elif columns.id is None and any(_ID_LIKE.search(cell) for cell in cells if cell):
        id_level = 1
    else:
        id_level = 0
    return id_level > 0 and names_decision, names_decision, id_level, len(names)


def _xlsx_to_csv(
    path: Path, folder: Path, columns: ItemColumns, control: progress.TaskControl | None
) -> tuple[Path, _CellProblems, _SheetChoice]:
    """Stream the sheet of the items into ``folder/items.csv`` (all text), with each row's
    spreadsheet row number in an extra column.

    The sheet is the one whose header row looks most like a table of items
    (:func:`_header_rank`; the first of equals): an export whose Notes sheet came first
    had its notes read as the items' header, and the data sheet was never looked at
    (trial 18). The first sheet naming both an id and the decision is read at once; any
    other choice reads the workbook a second time.

    Also returns the cells that the columns once chosen must not hold
    (:class:`_CellProblems`).
    """
    from core.workbook.xlsx_reader import open_sheets

    target = folder / "items.csv"
    id_name = columns.id
    candidates: list[tuple[tuple[bool, bool, int, int], int, str]] = []
    with open_sheets(path, padded_numbers=True) as sheets:
        for index, sheet in enumerate(sheets):
            top, pending = _top_rows(sheet.rows)
            found = _xlsx_header([(number, texts) for number, texts, _, _ in top], id_name)
            if found is None:
                continue
            rank = _header_rank(found[1], columns)
            if rank[0]:
                others = tuple(title for _, _, title in candidates)
                problems = _write_sheet(target, path, sheet, top, pending, found, control, id_name)
                return target, problems, _SheetChoice(sheet.title, others)
            candidates.append((rank, index, sheet.title))
    if not candidates:
        raise ItemListError(
            f"{path} has no sheet with a header row (the item id and prediction columns) in "
            f"its first {_XLSX_HEADER_ROWS} rows"
        )
    # No header names both: the likeliest sheet, read again from the start.
    _, chosen, title = max(candidates, key=lambda entry: (entry[0], -entry[1]))
    with open_sheets(path, padded_numbers=True) as sheets:
        for index, sheet in enumerate(sheets):
            if index == chosen:
                top, pending = _top_rows(sheet.rows)
                found = _xlsx_header([(number, texts) for number, texts, _, _ in top], id_name)
                assert found is not None  # the same rows as before
                problems = _write_sheet(target, path, sheet, top, pending, found, control, id_name)
                others = tuple(other for _, at, other in candidates if at != chosen)
                return target, problems, _SheetChoice(title, others)
    raise ItemListError(f"{path} changed while it was read; read it again")


def _names_id(cells: Sequence[str], id_name: str | None) -> bool:
    wanted = {_normalise(id_name)} if id_name else {_normalise(name) for name in ID_ALIASES}
    return any(_normalise(cell) in wanted for cell in cells if cell)


def _top_rows(rows):
    """The rows within the header search (as texts, and as read) and the first row after
    them."""
    top: list[tuple[int, list[str | None], dict | None, Sequence[object]]] = []
    for row_number, values, formulas in rows:
        if row_number > _XLSX_HEADER_ROWS:
            return top, (row_number, values, formulas)
        top.append((row_number, [text_of_cell(value) for value in values], formulas, values))
    return top, None


#: A number of this size or more has lost digits in a spreadsheet (15 significant digits).
_LONGEST_EXACT_NUMBER = 10**15


def _not_an_id(value: object) -> str | None:
    """Why a spreadsheet cell cannot hold an item's id, or None when it can: an Excel error
    (a failed lookup), a yes/no cell, or a number that is not the id as typed (a fraction,
    or more digits than a spreadsheet keeps: 123456789012345678 is stored as
    1.23456789012346E+17, and its text matches nothing in the warehouse; fuzz 19)."""
    kind = type(value)
    if kind is str:
        text = cast(str, value)
        return f"the Excel error {text}" if text[:1] == "#" and text in EXCEL_ERRORS else None
    if kind is bool:
        return f"{'TRUE' if value else 'FALSE'}, a yes/no cell"
    if kind is float or kind is int:
        number = cast(float, value)
        if abs(number) >= _LONGEST_EXACT_NUMBER:
            return f"the number {number:.15G}"  # as Excel shows it
        if kind is float and not number.is_integer():
            return f"the number {number!r}"
    return None


def _id_columns(headers: Sequence[str | None], id_name: str | None) -> list[int]:
    """The columns that may turn out to be the ids (as :func:`_resolve` will choose)."""
    wanted = {_normalise(id_name)} if id_name else {_normalise(name) for name in ID_ALIASES}
    return [
        index
        for index, header in enumerate(headers)
        if header
        and (_normalise(header) in wanted or (id_name is None and _ID_LIKE.search(header)))
    ]


@dataclass(frozen=True)
class _CellProblems:
    """Cells of an ``.xlsx`` item list refused once its columns are chosen, by header."""

    #: Formulas with no saved value (a file written by a program that does not
    #: calculate): ``[count, first rows...]``.
    unsaved: dict[str, list[int]]
    #: Cells of the columns that may be the ids which cannot be an id
    #: (:func:`_not_an_id`): ``[count, (cell, why)...]``.
    not_ids: dict[str, list]


def _write_sheet(
    target: Path, path: Path, sheet, top, pending, found, control, id_name
) -> _CellProblems:
    """Write the rows of ``sheet`` below the header ``found`` to ``target``; refuse rows
    of items the sheet hides (:func:`_refuse_hidden_items`)."""
    from core.workbook.xlsx_reader import PaddedNumber

    rows = sheet.rows
    from openpyxl.utils import get_column_letter

    size = max(path.stat().st_size, 1)
    header_row, headers = found
    width = len(headers)
    named = [header or f"column {index + 1}" for index, header in enumerate(headers)]
    body = [row for row in top if row[0] > header_row]
    id_columns = _id_columns(headers, id_name)
    id_set = set(id_columns)

    def padded_texts_of(values) -> list[str | None]:
        # A zero-padded number is an id as shown ("000388"); elsewhere (a 0/1 flag shown
        # "01", a score) the number it is (review 21).
        return [
            text_of_cell(
                value.number if type(value) is PaddedNumber and column not in id_set else value
            )
            for column, value in enumerate(values[:width])
        ]

    def plain_texts_of(values) -> list[str | None]:
        return [text_of_cell(value) for value in values[:width]]

    # Most workbooks have no zero-padding format: their million cells take the plain way.
    texts_of = padded_texts_of if sheet.pads_numbers else plain_texts_of

    def remaining():
        for row_number, _texts, formulas, values in body:
            yield row_number, texts_of(values), formulas, values
        if pending is not None:
            yield pending[0], texts_of(pending[1]), pending[2], pending[1]
        for row_number, values, formulas in rows:
            yield row_number, texts_of(values), formulas, values

    unsaved: dict[str, list[int]] = {}
    not_ids: dict[str, list] = {}
    hidden: list[int] = []
    with target.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream, quoting=csv.QUOTE_ALL)
        writer.writerow([*named, _ROW_COLUMN])
        written = 0
        for row_number, texts, formulas, values in remaining():
            texts = texts[:width]
            for column in id_columns:
                why = _not_an_id(values[column]) if column < len(values) else None
                if why is not None:
                    seen = not_ids.setdefault(named[column], [0])
                    seen[0] += 1
                    if len(seen) <= OFFENDERS_SHOWN:
                        seen.append((f"{get_column_letter(column + 1)}{row_number}", why))
            if formulas:
                for column, (_, cached) in formulas.items():
                    blank = column >= len(texts) or texts[column] is None
                    if not cached and column < width and blank:
                        seen = unsaved.setdefault(named[column], [0])
                        seen[0] += 1
                        if len(seen) <= OFFENDERS_SHOWN:
                            seen.append(row_number)
            if not any(text is not None and text.strip() for text in texts):
                continue
            texts += [None] * (width - len(texts))
            writer.writerow([*("" if text is None else text for text in texts), row_number])
            written += 1
            if row_number in sheet.hidden_rows:
                hidden.append(row_number)
            if written % 50_000 == 0:
                progress.step(control, min(stream.tell(), size), size * 4)
    _refuse_hidden_items(path, sheet.title, hidden)
    return _CellProblems(unsaved, not_ids)


def _refuse_hidden_items(path: Path, title: str, hidden: Sequence[int]) -> None:
    """Refuse an ``.xlsx`` list whose sheet hides rows of items: a lead who filtered 600
    items down to 300 had all 600 counted and drawn from, without a word (fuzz 21). Which
    the lead meant, the rows they see or all of them, is theirs to say."""
    if not hidden:
        return
    shown = ", ".join(str(row) for row in hidden[:OFFENDERS_SHOWN])
    more = ", …" if len(hidden) > OFFENDERS_SHOWN else ""
    several = len(hidden) != 1
    rows = f"{len(hidden):,} row{'s' if several else ''} of items {'are' if several else 'is'}"
    raise ItemListError(
        f"{path.name}, sheet {title!r}: {rows} hidden (row{'s' if several else ''} "
        f"{shown}{more}), by a filter or by hand; PR Planner would count and draw from them "
        "like the rows you see. To use every row, show them all (turn the filter off, or "
        "unhide the rows); to leave them out, delete them. Then save the workbook and read "
        "it again"
    )


def _refuse_cell_problems(table: ItemTable, problems: _CellProblems) -> None:
    """Refuse a used column with formulas whose values were never saved (read as empty,
    they would be reported as missing ids or labels, which the lead cannot find), and an
    id column with cells that cannot be ids (:func:`_not_an_id`)."""
    from openpyxl.utils import get_column_letter

    unsaved = problems.unsaved

    used = [table.columns.id, table.columns.predicted, table.columns.score,
            *table.columns.classifiers]  # fmt: skip
    for column in used:
        if column and column in unsaved:
            count, *rows = unsaved[column]
            letter = get_column_letter(table.headers.index(column) + 1)
            cells = ", ".join(f"{letter}{row}" for row in rows)
            raise ItemListError(
                f"{table.path.name}: {count:,} cell(s) of column {column!r} hold a formula "
                f"whose value was never saved ({cells}{', ...' if count > len(rows) else ''}); "
                "open the file in Excel or LibreOffice and save it, so the values are stored"
            )
    id_column = table.columns.id
    if id_column in problems.not_ids:
        count, *odd_cells = problems.not_ids[id_column]
        by_why: dict[str, list[str]] = {}
        for cell, why in odd_cells:
            by_why.setdefault(why, []).append(cell)
        shown = "; ".join(
            f"{', '.join(where)} {'holds' if len(where) == 1 else 'hold'} {why}"
            for why, where in by_why.items()
        )
        more = ", ..." if count > len(odd_cells) else ""
        if any(why.startswith("the number") for why in by_why):
            fix = (
                "a spreadsheet keeps 15 digits of a number and no fraction of an id: format "
                "the id column as Text in the export, so each id is kept as written, and "
                "export again"
            )
        else:
            fix = "fix the formula or the cell, or remove the row, and save the workbook again"
        raise ItemListError(
            f"{table.path.name}: {count:,} cell(s) of the id column {id_column!r} hold no item "
            f"id ({shown}{more}); {fix}"
        )


@contextlib.contextmanager
def _closing_on_error(table: ItemTable) -> Iterator[ItemTable]:
    try:
        yield table
    except BaseException as exc:
        table.__exit__(type(exc), exc, exc.__traceback__)
        raise


def _refuse_our_own_workbooks(path: Path) -> None:
    """A labeling workbook or a session picked as an item list, named for what it is
    (its columns would only be reported missing)."""
    from core.workbook.safe_io import is_labeling_workbook, is_session, sheet_names

    sheets = sheet_names(path)
    if is_labeling_workbook(sheets):
        raise ItemListError(
            f"{path.name} is a labeling workbook (a sample drawn for the editors), not an item "
            "list: choose the list the sample was drawn from (its Design sheet names it)"
        )
    if is_session(sheets):
        raise ItemListError(
            f"{path.name} is a session or report PR Planner wrote, not an item list: choose "
            "the list of items (id and prediction per item)"
        )


def open_items(
    path: str | os.PathLike[str],
    columns: ItemColumns | None = None,
    *,
    control: progress.TaskControl | None = None,
) -> ItemTable:
    """Open an item list and find its columns; nothing is read beyond the header yet
    (an ``.xlsx`` list is converted to a temporary CSV first, with progress).

    Parameters
    ----------
    path : str or path-like
        ``.csv``, ``.tsv``, ``.parquet`` or ``.xlsx`` (other names: by content).
    columns : ItemColumns, optional
        The caller's column names; unnamed ones are found by alias.
    control : TaskControl, optional
        Progress and cancel for the ``.xlsx`` conversion.

    Returns
    -------
    ItemTable
        Close it (or use ``with``) when done.

    Raises
    ------
    ItemListError
        The file is missing, empty, not a table, or lacks a needed column.
    """
    path = Path(path)
    columns = columns or ItemColumns()
    _check_file(path)
    kind = _kind_of(path)
    temporary: Path | None = None
    row_sql: str | None = None
    first_row = 2
    problems = _CellProblems({}, {})
    sheet_choice: _SheetChoice | None = None
    if kind == "xlsx":
        _refuse_our_own_workbooks(path)
        temporary = Path(tempfile.mkdtemp(prefix="prplanner-items-"))
        try:
            csv_path, problems, sheet_choice = _xlsx_to_csv(path, temporary, columns, control)
        except BaseException:
            shutil.rmtree(temporary, ignore_errors=True)
            raise
        source_sql = (
            f"read_csv({_sql_text(str(csv_path))}, all_varchar = true, header = true, "
            "hive_partitioning = false, "
            "delim = ',', quote = '\"', escape = '\"')"
        )
        row_sql = quote_identifier(_ROW_COLUMN)
    elif kind == "parquet":
        read_path, temporary = _read_literally(path, kind, temporary)
        source_sql = (
            f"read_parquet({_sql_text(str(read_path))}, file_row_number = true, "
            "hive_partitioning = false)"
        )
        row_sql = "file_row_number + 1"
        first_row = 1
    else:
        _check_text_table(path)
        delimiter = ", delim = '\\t'" if kind == "tsv" else ""
        read_path = path
        if len(_line_end_kinds(path, _LINE_END_BYTES)) > 1:
            temporary = Path(tempfile.mkdtemp(prefix="prplanner-items-"))
            try:
                read_path = _with_one_line_end(path, temporary, kind)
            except BaseException:
                shutil.rmtree(temporary, ignore_errors=True)
                raise
        else:
            read_path, temporary = _read_literally(path, kind, temporary)
        # skip = 0: the header is the first line. Otherwise DuckDB's sniffer may skip the
        # lines above a longer row and take that row for the header.
        source_sql = (
            f"read_csv({_sql_text(str(read_path))}, all_varchar = true, header = true, "
            # A folder named like a Hive partition ("language=en") would overwrite the
            # list's own column of that name on every row (review 20).
            "hive_partitioning = false, "
            f"skip = 0{delimiter})"
        )
    connection = _new_connection()
    table_headers: tuple[str, ...]
    digest = _Digest(path)
    try:
        described = connection.execute(f"DESCRIBE SELECT * FROM {source_sql}").fetchall()
    except _duckdb().Error as exc:
        connection.close()
        digest.value()
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)
        what = "Parquet" if kind == "parquet" else "CSV/TSV"
        why = (_mixed_line_ends(path) if kind != "parquet" else None) or _plain_duckdb_message(
            exc, path if kind != "parquet" else None
        )
        raise ItemListError(f"{path} cannot be read as {what}: {why}") from None
    # Where the separator is not a comma (a semicolon export, tab-separated text) numbers
    # may be written with a decimal comma, as core.curves reads them too.
    decimal_comma = kind == "tsv"
    if kind == "csv":
        with contextlib.suppress(_duckdb().Error):
            sniffed = connection.execute(  # with the read's own options: the same answer
                f"SELECT Delimiter FROM sniff_csv({_sql_text(str(read_path))}, header = true, "
                "hive_partitioning = false, "
                "skip = 0)"
            ).fetchone()
            decimal_comma = bool(sniffed) and sniffed[0] != ","
    hidden = {_ROW_COLUMN, "file_row_number"} if row_sql else set()
    table_headers = tuple(str(row[0]) for row in described if row[0] not in hidden)
    table = ItemTable(
        path,
        kind,
        connection,
        source_sql,
        table_headers,
        ItemColumns(id=columns.id, predicted="", classifiers=(), keep=()),
        row_sql,
        first_row,
        digest,
        temporary,
    )
    table.decimal_comma = decimal_comma
    with _closing_on_error(table):
        if len(table_headers) < 2:
            ragged = any(mark in "".join(table_headers) for mark in (",", ";", "\t"))
            uneven = _first_uneven_row(path) if ragged and kind != "parquet" else None
            raise ItemListError(
                f"{path} is not a table of items: it has {len(table_headers)} column "
                f"({', '.join(map(repr, table_headers))}); it needs at least an id and a "
                "predicted label"
                + (
                    ". The header holds separators, so the rows could not be split into "
                    f"columns: {uneven}"
                    if uneven
                    else ". The header holds separators, so the rows probably do not all "
                    "have the same number of fields (a stray separator or quote on some row)"
                    if ragged
                    else ""
                )
            )
        try:
            table.columns = _resolve(path, table_headers, columns)
        except ColumnNotFoundError as exc:
            if sheet_choice is None or not sheet_choice.others:
                raise
            raise ColumnNotFoundError(f"{exc}{sheet_choice.note()}") from None
        _refuse_repeated_headers(table)
        if kind == "xlsx":
            _refuse_cell_problems(table, problems)
        table.primary_name = (
            f"{table.columns.score} >= {threshold_text(table.columns.threshold)}"
            if table.columns.score is not None
            else table.columns.predicted or ""
        )
    return table


def _refuse_repeated_headers(table: ItemTable) -> None:
    """Refuse a header that names a column the draw uses twice (``id,id,predicted``):
    DuckDB reads the second as ``id_1`` and the first would be taken without a word."""
    if table.kind == "parquet" or "header = true" not in table.source_sql:
        return
    raw = table.source_sql.replace("header = true", "header = false", 1)
    try:
        first = table.connection.execute(f"SELECT * FROM {raw} LIMIT 1").fetchone()
    except _duckdb().Error:
        return  # the header was read once already; nothing more to learn here
    written = Counter(str(value).strip().casefold() for value in first or () if value)
    columns = table.columns
    used = {
        "the item id": columns.id,
        "the prediction": columns.predicted or columns.score,
        **{f"classifier {name!r}": name for name in columns.classifiers},
    }
    for role, name in used.items():
        if name and written[name.casefold()] > 1:
            raise ItemListError(
                f"{table.path.name}: the header names column {name!r} "
                f"{written[name.casefold()]} times; rename the others so that it is clear "
                f"which holds {role}"
            )


def _sign_sql(column: str) -> str:
    """1 for a lone "-" in ``column``, 2 for a "+", 0 otherwise: for the check that a "-"
    is not a 0/1 column's "not scored" (:func:`population_aggregates`). Plain 0 and 1 are
    passed over first: trim() on ten million rows cost 4 % of a draw."""
    raw = f"CAST({quote_identifier(column)} AS VARCHAR)"
    return (
        f"CASE WHEN {raw} IN ('0', '1') THEN 0 ELSE CASE trim({raw}) WHEN '-' THEN 1 "
        "WHEN '+' THEN 2 ELSE 0 END END"
    )


def population_aggregates(table: ItemTable) -> list[str]:
    """SQL aggregates over ``keyed_rows_sql`` giving the checks and population counts,
    in the order :func:`read_population` expects."""
    parts = [
        "count(*)",
        "count(*) FILTER (WHERE item_id IS NULL OR item_id = '')",
        "count(*) FILTER (WHERE primary_flag IS NULL)",
        "count(*) FILTER (WHERE primary_flag)",
        # A CSV quote opened and never closed: DuckDB then reads quotes as text, and the id
        # keeps it (another key than the warehouse's; spreadsheets keep no such quotes).
        f"count(*) FILTER (WHERE {_STRAY_QUOTE})" if table.kind in ("csv", "tsv") else "0",
        # An Excel error exported as text (a lookup that failed): an item nobody can find.
        f"count(*) FILTER (WHERE {_ERROR_ID})" if table.kind != "xlsx" else "0",
    ]
    if table.columns.score is None:
        # "-" read as a negative where no "+" is written: a 0/1 column's "not scored".
        parts += [
            "count(*) FILTER (WHERE primary_sign = 1)",
            "count(*) FILTER (WHERE primary_sign = 2)",
        ]
    else:
        parts += ["0", "0"]
    for index in range(len(table.columns.classifiers)):
        parts += [
            f"count(*) FILTER (WHERE c{index} IS NULL)",
            f"count(*) FILTER (WHERE c{index})",
            f"count(*) FILTER (WHERE c{index} AND primary_flag)",
            f"count(*) FILTER (WHERE c{index}_sign = 1)",
            f"count(*) FILTER (WHERE c{index}_sign = 2)",
        ]
    return parts


def read_population(table: ItemTable, values: Sequence[int], id_hashes: np.ndarray) -> ItemSummary:
    """Check the aggregates of :func:`population_aggregates` and the ids' hashes from the
    same :meth:`ItemTable.scan` (refusing bad rows, naming them) and return the population
    counts."""
    rows, missing, bad_primary, positives, quoted, errors, dashes, pluses = (
        int(value) for value in values[:8]
    )
    counts = {"missing": missing, "bad_primary": bad_primary, "quoted": quoted, "errors": errors}
    if dashes and not pluses:
        counts["lone_dashes"] = dashes
    classifier_positives = []
    overlaps = []
    for index in range(len(table.columns.classifiers)):
        bad, positives_here, overlap, dashes_here, pluses_here = (
            int(value) for value in values[8 + 5 * index : 13 + 5 * index]
        )
        counts[f"bad_c{index}"] = bad
        if dashes_here and not pluses_here:
            counts[f"lone_dashes_c{index}"] = dashes_here
        classifier_positives.append(positives_here)
        overlaps.append(overlap)
    if rows == 0:
        raise ItemListError(f"{table.path.name} has a header but no items")
    table.check_rows(counts, id_hashes)
    column = table.columns.score or table.columns.predicted or ""
    primary = ClassifierCount(
        name=table.primary_name,
        column=column,
        population_pos=positives,
        population_neg=rows - positives,
    )
    table.refuse_empty(primary.name, column, primary.population_pos, primary.population_neg)
    classifiers = []
    for name, positives_here, overlap in zip(
        table.columns.classifiers, classifier_positives, overlaps, strict=True
    ):
        count = ClassifierCount(
            name=name,
            column=name,
            population_pos=positives_here,
            population_neg=rows - positives_here,
            flagged_by_main=overlap,
        )
        table.refuse_empty(name, name, count.population_pos, count.population_neg)
        classifiers.append(count)
    used = {
        table.columns.id,
        table.columns.predicted,
        table.columns.score,
        *table.columns.classifiers,
        _ROW_COLUMN,
    }
    return ItemSummary(
        file_name=table.path.name,
        rows=rows,
        primary=primary,
        classifiers=tuple(classifiers),
        other_columns=tuple(header for header in table.headers if header and header not in used),
        headers=tuple(header for header in table.headers if header != _ROW_COLUMN),
        id_column=table.columns.id or "",
    )


def count_items(
    path: str | os.PathLike[str],
    columns: ItemColumns | None = None,
    *,
    control: progress.TaskControl | None = None,
) -> ItemSummary:
    """Population counts per stratum (and per classifier) of an item list, every row checked.

    One scan of the file; the Plan's population can be taken from the result.

    Raises
    ------
    ItemListError
        Missing or duplicate ids, a prediction that is not a label, an empty stratum, or a
        file that is not a table (each named with its rows).
    core.progress.Cancelled
        ``control`` was cancelled.
    """
    with open_items(path, columns, control=control) as table:
        values, hashes = table.scan(population_aggregates(table), table.keyed_rows_sql(), control)
        return read_population(table, values, hashes)
