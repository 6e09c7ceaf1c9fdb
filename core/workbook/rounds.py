"""Past labeling rounds read from the workbooks people keep (spec 4.4, issue 5).

:func:`read_rounds` opens an ``.xlsx`` file read-only, finds a header row in the first
:data:`HEADER_SEARCH_ROWS` rows of every sheet, matches its column names against
:data:`COLUMN_ALIASES` and turns every data row into a :class:`Round` or a
:class:`Refusal` that names the sheet, the row (1-based, as Excel shows it) and the reason.

The rows come from :mod:`core.workbook.xlsx_reader`, which checks the file and reads the
sheet XML; this module only interprets them.

A file that cannot be read at all raises :class:`WorkbookError`, the one exception type of
this module; it never leaks an openpyxl or zipfile exception.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from core.confusion import ConfusionMatrix, Population
from core.workbook.xlsx_reader import (
    RawRow,
    WorkbookError,
    open_sheets,
)

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
#: ``k`` typed next to both population counts may be rounded; beyond this relative
#: difference the row contradicts itself and is refused.
K_RELATIVE_TOLERANCE = 0.005


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
    rounds: list[Round] = []
    refused: list[Refusal] = []
    skipped: list[SkippedSheet] = []
    with open_sheets(path, engine=engine) as sheets:
        for sheet in sheets:
            outcome = _read_sheet(sheet.title, sheet.rows, sheet.epoch, rounds, refused)
            if outcome is not None:
                skipped.append(outcome)
    return RoundsBook(rounds=tuple(rounds), refused=tuple(refused), skipped_sheets=tuple(skipped))
