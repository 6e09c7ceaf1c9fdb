"""Past labeling rounds read from the workbooks people keep (spec 4.4, issue 5).

:func:`read_rounds` opens an ``.xlsx`` file read-only, finds a header row in the first
:data:`HEADER_SEARCH_ROWS` rows of every sheet, matches its column names against
:data:`COLUMN_ALIASES` and turns every data row into a :class:`Round` or a
:class:`Refusal` that names the sheet, the row (1-based, as Excel shows it) and the reason.

Two row sources feed the same interpretation:

* a fast reader that scans the sheet XML with regular expressions and sees each cell's
  formula and cached value in one pass (100,000 rows load in about two seconds);
* openpyxl's own read-only reader (two passes: cached values, then formulas), used for any
  sheet whose XML the fast reader does not recognise (namespace prefixes, another encoding)
  and kept as the reference the tests compare the fast reader against.

A file that cannot be read at all raises :class:`WorkbookError`, the one exception type of
this module; it never leaks an openpyxl or zipfile exception.
"""

from __future__ import annotations

import datetime as dt
import functools
import html
import math
import os
import re
import stat
import unicodedata
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.confusion import ConfusionMatrix, Population
from core.errors import InputError

__all__ = [
    "COLUMN_ALIASES",
    "HEADER_SEARCH_ROWS",
    "Refusal",
    "Round",
    "RoundsBook",
    "SkippedSheet",
    "WorkbookError",
    "normalise_header",
    "parse_number_text",
    "read_rounds",
]

#: The header row must sit within this many rows from the top of a sheet.
HEADER_SEARCH_ROWS = 20
#: Refuse files whose parts would decompress beyond this (zip-bomb guard).
MAX_UNCOMPRESSED_BYTES = 1 << 30
#: A member larger than this that compresses better than :data:`MAX_COMPRESSION_RATIO`
#: is refused: real sheet XML compresses 5-30 times, bombs thousands of times.
LARGE_MEMBER_BYTES = 64 << 20
MAX_COMPRESSION_RATIO = 100
MAX_ZIP_MEMBERS = 10_000
#: ``k`` typed next to both population counts may be rounded; beyond this relative
#: difference the row contradicts itself and is refused.
K_RELATIVE_TOLERANCE = 0.005


class WorkbookError(InputError):
    """A file that cannot be read as an Excel workbook at all.

    The message names the file and says what is wrong with it (missing, a folder, empty,
    not an ``.xlsx``, damaged, encrypted, too large once decompressed), so the command line
    and the desktop app can show it unchanged.
    """


# --- result objects ------------------------------------------------------------------------

#: Keys of :meth:`Round.to_dict`, in order: the ``prplanner rounds --json`` contract.
ROUND_KEYS = (
    "sheet",
    "row",
    "round",
    "date",
    "classifier",
    "k",
    "population_pos",
    "population_neg",
    "s",
    "tp",
    "fp",
    "fn",
    "tn",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Round:
    """One labeled round as a workbook row holds it.

    Attributes
    ----------
    sheet : str
        Name of the sheet the row is on.
    row : int
        Row number, 1-based as Excel shows it.
    round : str or None
        The round's name or id (``TR-01``).
    date : datetime.date or None
        When the round was labeled.
    classifier : str or None
        Which classifier (model) the round evaluated.
    k : float
        Imbalance ratio ``N1/N0``; computed from the two population counts when they are
        given (a typed ``k`` that agrees with them within 0.5 % is replaced by the exact
        ratio).
    population_pos, population_neg : int or None
        Predicted-positive and predicted-negative population counts ``N1``, ``N0``; both or
        neither.
    s : float or None
        Over-sampling ratio of the round, when the sheet has it.
    tp, fp, fn, tn : int
        Labeled counts ``n11``, ``n01``, ``n10``, ``n00``.
    notes : str or None
        Free text from a notes or comment column.
    """

    sheet: str
    row: int
    round: str | None = None
    date: dt.date | None = None
    classifier: str | None = None
    k: float
    population_pos: int | None = None
    population_neg: int | None = None
    s: float | None = None
    tp: int
    fp: int
    fn: int
    tn: int
    notes: str | None = None

    @property
    def matrix(self) -> ConfusionMatrix:
        """The labeled counts as a validated :class:`~core.confusion.ConfusionMatrix`."""
        return ConfusionMatrix(tp=self.tp, fp=self.fp, fn=self.fn, tn=self.tn)

    @property
    def population(self) -> Population:
        """``k`` and, when known, the population counts as a :class:`Population`."""
        return Population(
            k=self.k, predicted_positive=self.population_pos, predicted_negative=self.population_neg
        )

    def to_dict(self) -> dict[str, object]:
        """The ``prplanner rounds --json`` keys (date as ISO ``YYYY-MM-DD`` or ``None``)."""
        result = {key: getattr(self, key) for key in ROUND_KEYS}
        if self.date is not None:
            result["date"] = self.date.isoformat()
        return result


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusal:
    """A row that looks like data but cannot be used as a round.

    Attributes
    ----------
    sheet : str
        Name of the sheet the row is on.
    row : int
        Row number, 1-based as Excel shows it.
    reason : str
        Plain-language reason naming the column and cell, e.g.
        ``"TP must be a whole number >= 0, got -3 (cell G12)"``.
    """

    sheet: str
    row: int
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {"sheet": self.sheet, "row": self.row, "reason": self.reason}


@dataclass(frozen=True, slots=True, kw_only=True)
class SkippedSheet:
    """A sheet without a usable header row.

    Attributes
    ----------
    sheet : str
        Name of the sheet.
    reason : str
        Why no rounds were read from it.
    """

    sheet: str
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {"sheet": self.sheet, "reason": self.reason}


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundsBook:
    """Everything :func:`read_rounds` found in one workbook.

    Attributes
    ----------
    rounds : tuple of Round
        Usable rows, sheet by sheet in workbook order, top to bottom.
    refused : tuple of Refusal
        Rows that could not be used, in the same order.
    skipped_sheets : tuple of SkippedSheet
        Sheets with no usable header row (a notes sheet, a chart's data, ...).
    """

    rounds: tuple[Round, ...]
    refused: tuple[Refusal, ...]
    skipped_sheets: tuple[SkippedSheet, ...]

    def to_dict(self) -> dict[str, list[dict[str, object]]]:
        return {
            "rounds": [item.to_dict() for item in self.rounds],
            "refused": [item.to_dict() for item in self.refused],
            "skipped_sheets": [item.to_dict() for item in self.skipped_sheets],
        }


# --- column names --------------------------------------------------------------------------

#: Canonical field -> accepted header spellings (matched after :func:`normalise_header`).
COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "tp": ("TP", "n11", "true positives", "true positive", "true pos"),
    "fp": ("FP", "n01", "false positives", "false positive", "false pos"),
    "fn": ("FN", "n10", "false negatives", "false negative", "false neg"),
    "tn": ("TN", "n00", "true negatives", "true negative", "true neg"),
    "k": ("k", "imbalance ratio", "imbalance", "k (N1/N0)"),
    "population_pos": (
        "N pred+",
        "N+",
        "N1 pred+",
        "N predicted positive",
        "population predicted positive",
        "predicted positive population",
        "predicted positive (population)",
        "predicted positives (population)",
        "population pred+",
        "population positive",
        "predicted positive",
        "predicted positives",
        "pred+ population",
        "pop pred+",
    ),
    "population_neg": (
        "N pred-",
        "N-",
        "N0 pred-",
        "N predicted negative",
        "population predicted negative",
        "predicted negative population",
        "predicted negative (population)",
        "predicted negatives (population)",
        "population pred-",
        "population negative",
        "predicted negative",
        "predicted negatives",
        "pred- population",
        "pop pred-",
    ),
    "s": (
        "s",
        "over-sampling ratio",
        "oversampling ratio",
        "oversampling",
        "over-sampling",
        "oversampling factor",
    ),
    "round": ("round", "round name", "name", "id", "round id"),
    "date": ("date", "week of", "labeled on", "labelled on", "week"),
    "classifier": ("classifier", "model", "classifier name", "model name"),
    "notes": ("notes", "note", "comment", "comments", "remarks"),
}

#: How each field is named in refusal reasons.
FIELD_LABELS = {
    "tp": "TP",
    "fp": "FP",
    "fn": "FN",
    "tn": "TN",
    "k": "k",
    "population_pos": "predicted-positive population",
    "population_neg": "predicted-negative population",
    "s": "s",
    "round": "round",
    "date": "date",
    "classifier": "classifier",
    "notes": "notes",
}
COUNT_FIELDS = ("tp", "fp", "fn", "tn")

_PARENTHESISED = re.compile(r"\([^)]*\)|\[[^\]]*\]")
# A trailing sign (``pred+``, ``pred-``, ``N -``) means positive/negative; a hyphen between
# letters (``over-sampling``) is punctuation. Signs become words before punctuation goes.
_PLUS_SIGN = re.compile(r"\+|＋")
_MINUS_SIGN = re.compile(r"[-−–](?![^\W_])")
_NOT_ALPHANUMERIC = re.compile(r"[\W_]+")


def normalise_header(text: object) -> str:
    """Lower-case letters and digits of a header, with ``+``/``-`` signs spelled out.

    ``"N pred+"`` -> ``"npredpos"``, ``"N pred-"`` -> ``"npredneg"``,
    ``"Over-sampling ratio"`` -> ``"oversamplingratio"``.
    """
    text = unicodedata.normalize("NFKC", str(text)).casefold()
    text = _PLUS_SIGN.sub(" pos ", text)
    text = _MINUS_SIGN.sub(" neg ", text)
    return _NOT_ALPHANUMERIC.sub("", text)


def _build_alias_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for field, spellings in COLUMN_ALIASES.items():
        for spelling in spellings:
            key = normalise_header(spelling)
            if index.setdefault(key, field) != field:
                raise RuntimeError(f"alias {spelling!r} names two fields")
    return index


_ALIAS_INDEX = _build_alias_index()


def _field_of_header(value: object) -> str | None:
    """The canonical field a header cell names, or ``None``.

    The whole text is tried first (``Predicted positive (population)`` is a name), then the
    text without parenthesised units (``TP (items)``).
    """
    if value is None or isinstance(value, bool):
        return None
    text = str(value)
    field = _ALIAS_INDEX.get(normalise_header(text))
    if field is None and ("(" in text or "[" in text):
        field = _ALIAS_INDEX.get(normalise_header(_PARENTHESISED.sub(" ", text)))
    return field


# --- cell values ---------------------------------------------------------------------------

# Spaces people (and locales) put inside numbers: normal, no-break, thin, narrow no-break,
# figure space, and the apostrophe of Swiss notation.
_DIGIT_GROUP_SPACES = str.maketrans("", "", " \u00a0\u2009\u202f\u2007\u2008'’")
_SPACE_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:[ '’]\d{3})+(?:[.,]\d+)?")
_COMMA_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_DOT_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:\.\d{3}){2,}(?:,\d+)?|[+-]?\d{1,3}\.\d{3},\d+")
_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+")
_PLAIN_INTEGER = re.compile(r"[+-]?\d+")


def parse_number_text(text: str) -> int | float | None:
    """A number typed as text, or ``None`` when the text is not a number.

    Accepts digit-group separators (``39,800``, ``1 251 000`` with normal, no-break or thin
    spaces, ``1.251.000``, ``1'251'000``), a decimal comma (``1,5``) and a leading ``+``.
    A comma followed by exactly three digits is a thousands separator (``1,500`` is 1500);
    whole numbers stay exact Python ints however large.
    """
    cleaned = unicodedata.normalize("NFKC", text).strip().replace("−", "-")
    if not cleaned:
        return None
    if cleaned.translate(_DIGIT_GROUP_SPACES) != cleaned:
        # Spaces or apostrophes must separate groups of three ("1 251 000"), so that two
        # numbers typed into one cell ("12 5") are refused rather than read as 125.
        if not _SPACE_THOUSANDS.fullmatch(cleaned):
            return None
        cleaned = cleaned.translate(_DIGIT_GROUP_SPACES)
    if _COMMA_THOUSANDS.fullmatch(cleaned):
        cleaned = cleaned.replace(",", "")
    elif _DOT_THOUSANDS.fullmatch(cleaned):
        cleaned = cleaned.replace(".", "").replace(",", ".")
    elif _DECIMAL_COMMA.fullmatch(cleaned):
        cleaned = cleaned.replace(",", ".")
    if _PLAIN_INTEGER.fullmatch(cleaned):
        return int(cleaned)
    try:
        value = float(cleaned)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _as_number(value: object) -> int | float | None:
    """Cell value -> number (``None`` when it is not one); bools are not numbers."""
    value_type = type(value)
    if value_type is int or value_type is float:
        return value
    if isinstance(value, str):
        return parse_number_text(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return None


def _is_blank(value: object) -> bool:
    """An empty cell, or text of spaces only (what a cleared cell sometimes keeps)."""
    return value is None or (type(value) is str and not value.strip())


def _describe(value: object) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, float) and value.is_integer():
        return repr(value)
    return str(value)


def _as_count(value: object) -> int | None:
    """A whole number >= 0, or ``None``. ``3.0`` and ``"3"`` pass; ``2.5``, ``-1`` do not."""
    if type(value) is int:
        return value if value >= 0 else None
    number = _as_number(value)
    if number is None or isinstance(number, bool):
        return None
    if isinstance(number, float):
        if not (math.isfinite(number) and number.is_integer()):
            return None
        number = int(number)
    return number if number >= 0 else None


def _as_text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    elif isinstance(value, dt.datetime):
        value = value.date() if value.time() == dt.time() else value
    if isinstance(value, dt.date):
        return value.isoformat()
    text = str(value).strip()
    return text or None


def _as_date(value: object, epoch: dt.datetime) -> dt.date | None:
    """Date cell -> date; raises ValueError for text that is not an ISO date."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # A date column whose cells lost their date format still holds Excel serials.
        from openpyxl.utils.datetime import from_excel

        converted = from_excel(value, epoch)
        if isinstance(converted, dt.datetime):
            return converted.date()
        raise ValueError(f"{value!r} is not a date")
    text = str(value).strip()
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return dt.datetime.fromisoformat(text).date()


# A label such as "Total", "Totals:", "Grand total", "Sub-total", "Sum", "Average"; the
# lookahead keeps "Totally new" or "mean-shift" (real names) out.
_TOTAL_LABEL = re.compile(
    r"(?:grand\s+|sub-?\s*)?(?:totals?|sum|sums|average|mean)(?=$|[\s:])", re.IGNORECASE
)
_TOTAL_FUNCTION = re.compile(r"\b(?:SUM|SUBTOTAL|AGGREGATE|AVERAGE)\s*\(", re.IGNORECASE)
_RANGE = re.compile(r"(?<![!\w])\$?([A-Z]{1,3})\$?\d+:\$?([A-Z]{1,3})\$?\d+", re.IGNORECASE)


def _sums_own_column(formula: str, column_letter: str) -> bool:
    """Whether ``formula`` totals a range of its own column (``=SUM(G5:G12)`` in G14).

    A SUM over other cells (a population added up from segments) is a legitimate value.
    """
    if not _TOTAL_FUNCTION.search(formula):
        return False
    return any(
        start.upper() == end.upper() == column_letter for start, end in _RANGE.findall(formula)
    )


# --- one sheet: header, then rows ----------------------------------------------------------

#: A raw row: (row number, values by 0-based column, formulas by column or ``None``).
#: ``formulas[col] = (formula text, has a cached value)``; only cells holding formulas appear.
RawRow = tuple[int, Sequence[object], "dict[int, tuple[str, bool]] | None"]


def _column_letter(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, 26)
        letters = chr(65 + remainder) + letters
    return letters


@dataclass(slots=True)
class _Header:
    row: int
    columns: dict[str, int]  # field -> 0-based column


def _find_header(rows: Sequence[RawRow]) -> _Header | str | None:
    """The first row naming TP, FP, FN and TN (plus ``k`` or both populations).

    Returns the header, a reason to skip the sheet (a column named twice, no ``k`` and no
    population columns), or ``None`` when no row names the four counts.
    """
    for row_number, values, _ in rows:
        columns: dict[str, int] = {}
        duplicates: list[str] = []
        for index, value in enumerate(values):
            field = _field_of_header(value)
            if field is None:
                continue
            if field in columns:
                duplicates.append(
                    f"{FIELD_LABELS[field]} ({_column_letter(columns[field])} and "
                    f"{_column_letter(index)})"
                )
            else:
                columns[field] = index
        if not all(field in columns for field in COUNT_FIELDS):
            continue
        if duplicates:
            return f"row {row_number} names a column twice: " + ", ".join(duplicates)
        if "k" not in columns and not ("population_pos" in columns and "population_neg" in columns):
            return (
                f"row {row_number} has TP, FP, FN and TN but neither a k column nor both "
                "population columns (predicted positive and predicted negative)"
            )
        return _Header(row=row_number, columns=columns)
    return None


class _RowInterpreter:
    """Turns the data rows below one header into rounds and refusals."""

    def __init__(self, sheet: str, header: _Header, epoch: dt.datetime):
        self.sheet = sheet
        self.epoch = epoch
        self.columns = header.columns
        self.width = max(header.columns.values()) + 1
        self.count_columns = tuple(header.columns[field] for field in COUNT_FIELDS)
        self.get = {field: header.columns.get(field) for field in FIELD_LABELS}
        self.mapped = tuple(sorted(header.columns.values()))

    def _cell(self, column: int, row_number: int) -> str:
        return f"{_column_letter(column)}{row_number}"

    def interpret(self, raw: RawRow) -> Round | Refusal | None:
        """A round, a refusal, or ``None`` for a row with nothing in the known columns."""
        row_number, values, formulas = raw
        if len(values) < self.width:
            values = list(values) + [None] * (self.width - len(values))
        mapped_formulas = (
            {column: formula for column, formula in formulas.items() if column in self.mapped}
            if formulas
            else None
        )
        if (
            not mapped_formulas
            and _is_blank(values[self.count_columns[0]])
            and all(_is_blank(values[column]) for column in self.mapped)
        ):
            return None
        problems = self._totals_or_formula_problems(row_number, values, mapped_formulas)
        if problems:
            return Refusal(sheet=self.sheet, row=row_number, reason=problems)

        get = self.get
        problems_found: list[str] = []
        counts: list[int] = []
        missing: list[str] = []
        for field, column in zip(COUNT_FIELDS, self.count_columns, strict=True):
            value = values[column]
            count = value if type(value) is int and value >= 0 else _as_count(value)
            if count is None:
                if _is_blank(value):
                    missing.append(FIELD_LABELS[field])
                else:
                    problems_found.append(
                        f"{FIELD_LABELS[field]} must be a whole number >= 0, got "
                        f"{_describe(value)} (cell {self._cell(column, row_number)})"
                    )
            counts.append(count)
        if missing:
            problems_found.insert(0, _missing_message(missing))

        invalid: set[str] = set()
        population_pos = self._population(
            "population_pos", values, row_number, problems_found, invalid
        )
        population_neg = self._population(
            "population_neg", values, row_number, problems_found, invalid
        )
        k = self._positive_number("k", values, row_number, problems_found, invalid)
        k = self._reconcile_k(k, population_pos, population_neg, problems_found, invalid)
        s = self._positive_number("s", values, row_number, problems_found, invalid)

        date = None
        if get["date"] is not None and not _is_blank(values[get["date"]]):
            raw_date = values[get["date"]]
            try:
                date = _as_date(raw_date, self.epoch)
            except (ValueError, TypeError, OverflowError):
                problems_found.append(
                    f"date {_describe(raw_date)} is not a date; use a date cell or YYYY-MM-DD "
                    f"(cell {self._cell(get['date'], row_number)})"
                )
        if problems_found:
            return Refusal(sheet=self.sheet, row=row_number, reason="; ".join(problems_found))

        tp, fp, fn, tn = counts
        return Round(
            sheet=self.sheet,
            row=row_number,
            round=_as_text(values[get["round"]]) if get["round"] is not None else None,
            date=date,
            classifier=(
                _as_text(values[get["classifier"]]) if get["classifier"] is not None else None
            ),
            k=k,
            population_pos=population_pos,
            population_neg=population_neg,
            s=s,
            tp=tp,
            fp=fp,
            fn=fn,
            tn=tn,
            notes=_as_text(values[get["notes"]]) if get["notes"] is not None else None,
        )

    def _totals_or_formula_problems(self, row_number, values, formulas) -> str | None:
        column = self.get["round"]
        if column is not None and isinstance(values[column], str):
            label = values[column].strip()
            if _TOTAL_LABEL.match(label):
                return f"a totals row ({label!r}), not a round"
        if not formulas:
            return None
        for column in sorted(formulas):
            text = formulas[column][0]
            if _sums_own_column(text, _column_letter(column)):
                return (
                    f"a totals row (cell {self._cell(column, row_number)} holds "
                    f"={text}), not a round"
                )
        uncached = [column for column in sorted(formulas) if not formulas[column][1]]
        if uncached:
            cells = ", ".join(self._cell(column, row_number) for column in uncached)
            return (
                f"cell {cells} holds a formula with no saved value; open the file in "
                "Excel or LibreOffice and save it so the value is computed"
            )
        return None

    def _population(self, field, values, row_number, problems, invalid) -> int | None:
        column = self.get[field]
        if column is None or _is_blank(values[column]):
            return None
        value = values[column]
        count = _as_count(value)
        if count is None or count == 0:
            problems.append(
                f"the {FIELD_LABELS[field]} must be a whole number > 0, got "
                f"{_describe(value)} (cell {self._cell(column, row_number)})"
            )
            invalid.add(field)
            return None
        return count

    def _positive_number(self, field, values, row_number, problems, invalid) -> float | None:
        column = self.get[field]
        if column is None or _is_blank(values[column]):
            return None
        value = values[column]
        number = _as_number(value)
        if number is None or not math.isfinite(number) or number <= 0:
            problems.append(
                f"{FIELD_LABELS[field]} must be a number > 0, got "
                f"{_describe(value)} (cell {self._cell(column, row_number)})"
            )
            invalid.add(field)
            return None
        return float(number)

    def _reconcile_k(self, k, population_pos, population_neg, problems, invalid) -> float | None:
        if population_pos is not None and population_neg is not None:
            ratio = population_pos / population_neg
            if k is not None and abs(k - ratio) > K_RELATIVE_TOLERANCE * ratio:
                problems.append(
                    f"k = {k:g} does not match the population counts "
                    f"{population_pos:,}/{population_neg:,} = {ratio:.6g}"
                )
            return ratio
        if invalid & {"k", "population_pos", "population_neg"}:
            return k  # already explained
        if population_pos is not None or population_neg is not None:
            problems.append(
                "only one population count is given; give both (predicted "
                "positive and predicted negative), or k alone"
            )
            return k
        if k is None:
            problems.append(
                "k and the population counts are both missing; give k or the "
                "predicted positive and negative population counts"
            )
        return k


def _missing_message(labels: list[str]) -> str:
    if len(labels) == 1:
        return f"{labels[0]} is missing"
    return f"{', '.join(labels[:-1])} and {labels[-1]} are missing"


def _read_sheet(
    sheet: str,
    rows: Iterator[RawRow],
    epoch: dt.datetime,
    rounds: list[Round],
    refused: list[Refusal],
) -> SkippedSheet | None:
    top: list[RawRow] = []
    header: _Header | str | None = None
    for raw in rows:
        if raw[0] > HEADER_SEARCH_ROWS:
            # Put the row back in front of the stream: it is data, not header material.
            rows = _chain_one(raw, rows)
            break
        top.append(raw)
    header = _find_header(top)
    if header is None:
        return SkippedSheet(
            sheet=sheet,
            reason=f"no header row with TP, FP, FN and TN (or "
            f"their aliases) in the first "
            f"{HEADER_SEARCH_ROWS} rows",
        )
    if isinstance(header, str):
        return SkippedSheet(sheet=sheet, reason=header)
    interpreter = _RowInterpreter(sheet, header, epoch)
    interpret = interpreter.interpret
    for raw in top:
        if raw[0] > header.row:
            _collect(interpret(raw), rounds, refused)
    append_round = rounds.append
    for raw in rows:
        result = interpret(raw)
        if type(result) is Round:
            append_round(result)
        elif result is not None:
            refused.append(result)
    return None


def _collect(result, rounds, refused) -> None:
    if isinstance(result, Round):
        rounds.append(result)
    elif result is not None:
        refused.append(result)


def _chain_one(first: RawRow, rest: Iterator[RawRow]) -> Iterator[RawRow]:
    yield first
    yield from rest


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


def _check_file(path: Path) -> None:
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


def read_rounds(
    path: str | os.PathLike[str], *, engine: Literal["fast", "openpyxl"] = "fast"
) -> RoundsBook:
    """Read every labeled round from an ``.xlsx`` workbook.

    Parameters
    ----------
    path : str or path-like
        The workbook. Every worksheet is searched for a header row (first 20 rows) naming
        TP, FP, FN and TN (or ``n11``, ``n01``, ``n10``, ``n00``, ``true positives``, ...)
        and ``k`` or both population counts; see :data:`COLUMN_ALIASES`.
    engine : {"fast", "openpyxl"}
        ``"fast"`` scans the sheet XML directly (falling back to openpyxl, sheet by sheet,
        for XML it does not recognise); ``"openpyxl"`` uses openpyxl's reader throughout.
        Both give the same result; the second exists as the reference for tests.

    Returns
    -------
    RoundsBook
        The usable rounds, the refused rows (sheet, row, reason) and the sheets skipped for
        want of a header.

    Raises
    ------
    WorkbookError
        The file is missing, a folder, empty, not an ``.xlsx``, damaged, encrypted, or would
        decompress to far more than its rows justify.
    """
    path = Path(path)
    _check_file(path)
    rounds: list[Round] = []
    refused: list[Refusal] = []
    skipped: list[SkippedSheet] = []
    try:
        with path.open("rb") as values_stream:
            workbook = _open_workbook(path, values_stream, data_only=True)
            formulas_workbook = None
            formulas_stream = None
            try:
                epoch = getattr(workbook, "epoch", None) or dt.datetime(1899, 12, 30)
                for index, sheet in enumerate(workbook.worksheets):
                    rows = _fast_rows(workbook, sheet) if engine == "fast" else None
                    if rows is None:
                        if formulas_workbook is None:
                            formulas_stream = path.open("rb")
                            formulas_workbook = _open_workbook(
                                path, formulas_stream, data_only=False
                            )
                        rows = _openpyxl_rows(sheet, formulas_workbook.worksheets[index])
                    outcome = _read_sheet(sheet.title, rows, epoch, rounds, refused)
                    if outcome is not None:
                        skipped.append(outcome)
            finally:
                workbook.close()
                if formulas_workbook is not None:
                    formulas_workbook.close()
                if formulas_stream is not None:
                    formulas_stream.close()
    except InputError:
        raise
    except OSError as exc:
        raise WorkbookError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except _SheetCutShort as exc:
        raise WorkbookError(f"{path} is damaged and cannot be read: {exc}") from None
    except Exception as exc:  # damaged XML inside a valid zip, a CRC error, ...
        raise WorkbookError(f"{path} is damaged and cannot be read: {_plain(exc)}") from None
    return RoundsBook(rounds=tuple(rounds), refused=tuple(refused), skipped_sheets=tuple(skipped))


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
