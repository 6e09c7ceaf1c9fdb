"""Past labeling rounds read from the workbooks people keep.

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

import dataclasses
import datetime as dt
import itertools
import math
import operator
import os
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

import numpy as np

from core import validation
from core.confusion import ConfusionMatrix, Population
from core.errors import InputError, column_choice, column_choice_advice, named
from core.items import EXCEL_ERRORS
from core.workbook.xlsx_reader import (
    RawRow,
    WorkbookError,
    open_sheets,
)

__all__ = [
    "COLUMN_ALIASES",
    "COLUMN_ROLES",
    "HEADER_SEARCH_ROWS",
    "ColumnChoice",
    "ColumnRole",
    "Refusal",
    "Round",
    "RoundsBook",
    "SheetColumns",
    "SkippedSheet",
    "WorkbookError",
    "is_generic_sheet_name",
    "looks_like_version",
    "normalise_header",
    "parse_number_text",
    "read_rounds",
]

#: The header row must sit within this many rows from the top of a sheet.
HEADER_SEARCH_ROWS = 20
#: How a refused totals row's reason starts.
TOTALS_REASON = "a totals row"
#: How the reason of a totals row found by its sums (typed numbers, no formula) goes on.
SUMS_REASON = "its TP, FP, FN and TN are the sums of the"

#: Counts above this are refused: a round never labels more items, a population of items
#: is far smaller, and every count up to it is exact as a float (2**53 is about 9e15).
MAX_COUNT = 10**15
#: ``k`` below this is refused: no real imbalance is that extreme, and smaller values
#: lose precision (a denormal k would overflow 1/k).
MIN_K = 1e-12
#: A number text with more digits than this is too large to be a count.
_MAX_NUMBER_TEXT = 40
#: Texts longer than this are never read as numbers.
_MAX_NUMBER_TEXT_LENGTH = 1000
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
    "model_version",
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
        Which classifier the round evaluated: from a classifier (category, model name)
        column, else the sheet's name unless it is a generic one (``Sheet1``, ``Rounds``).
    model_version : str or None
        The version of that classifier's model (``v2.1``), from a version column; a new
        version never makes a new classifier.
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
    model_version: str | None = None
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
    def name(self) -> str:
        """The round's name, or where it sits when its row has none (``Log row 12``):
        how the app, the report and ``previous_round`` name it."""
        return self.round or f"{self.sheet} row {self.row}"

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

    @property
    def drawn_by_the_rule(self) -> bool:
        """The round's notes say PR Planner drew it from an item list (``seed S, items from
        F`` as ``labels --append-to`` writes them, ``seed S; items from F`` as the app does):
        a sample without replacement from a list of known size, for which the finite
        population correction is exact."""
        return bool(self.notes and DRAW_NOTE.search(self.notes))

    @property
    def corrected_by_design(self) -> bool:
        """Whether the round's own design calls for the finite population correction: PR
        Planner drew it (:attr:`drawn_by_the_rule`) from a list of known size (both
        population counts). The Evaluate tab's box for the round and the Plan's for the
        round after it follow this, not what they said before (reviews 15 and 19)."""
        return (
            self.drawn_by_the_rule
            and self.population_pos is not None
            and self.population_neg is not None
        )

    def fpc_factors(self) -> tuple[float, float] | None:
        """The finite population correction's variance factors ``(N - n)/(N - 1)`` of its
        two strata, or None when a population count is unknown or smaller than the sample
        (methods, "Finite population correction")."""
        if self.population_pos is None or self.population_neg is None:
            return None
        try:
            return self.population.fpc_factors(self.tp + self.fp, self.fn + self.tn)
        except InputError:
            return None

    def corrected_population(self, fpc: bool) -> Population | None:
        """Its population when ``fpc`` and the correction can be applied to it (both
        counts known and at least the sample), else None: what
        :func:`core.compare.compare` takes."""
        return self.population if fpc and self.fpc_factors() is not None else None

    def variance_factors(self, fpc: bool) -> tuple[float, float]:
        """The factors its intervals use: :meth:`fpc_factors` with ``fpc`` where they are
        known, else none (``(1, 1)``)."""
        from core.intervals import NO_FPC

        return (fpc and self.fpc_factors()) or NO_FPC

    def to_dict(self) -> dict[str, object]:
        """The ``prplanner rounds --json`` keys (date as ISO ``YYYY-MM-DD`` or ``None``)."""
        result = {key: getattr(self, key) for key in ROUND_KEYS}
        if self.date is not None:
            result["date"] = self.date.isoformat()
        return result


def classifier_key(name: str | None) -> str:
    """What tells classifiers apart: their name without case or extra spaces ("Travel",
    "travel " and "TRAVEL" are one), as a spreadsheet's autocorrect varies them, nor how
    an accent is encoded ("é" as one character or as "e" and a combining accent, as some
    pastes give: fuzz 21); ``""`` for none."""
    folded = unicodedata.normalize("NFC", " ".join((name or "").split())).casefold()
    return unicodedata.normalize("NFC", folded)  # casefold may leave text not NFC


def same_classifier(first: str | None, second: str | None) -> bool:
    """Whether two rounds' classifiers are one (:func:`classifier_key`): the History tab,
    the report and the comparisons pair ``Finance`` with ``finance``."""
    return classifier_key(first) == classifier_key(second)


#: The draw a round's labels came from, as its notes name it: seed and item list.
DRAW_NOTE = re.compile(r"seed (\d+)[,;] items from ([^;]+)")
#: The start of the item list's SHA-256, which notes written since carry after the list's
#: name: one file name (items.csv) exported every week with one seed is several draws.
DRAW_LIST_DIGEST = re.compile(r"item list SHA-256 ([0-9a-f]{12})")


#: The target margins a round was drawn for, as ``labels --append-to`` and the app write
#: them into its notes (``targets precision ±4 %, recall ±5 % at 95 % confidence``).
TARGETS_NOTE = re.compile(
    r"targets precision ±(\d+(?:\.\d+)?) %, recall ±(\d+(?:\.\d+)?) % at "
    r"(\d+(?:\.\d+)?) % confidence"
)


#: The skipped and unlabeled items of a round read from labeling workbooks, by stratum, as
#: :func:`open_items_note` writes them into its notes.
OPEN_ITEMS_NOTE = re.compile(
    r"(\d+) skipped \((\d+) flagged, (\d+) unflagged\), (\d+) unlabeled \((\d+) flagged, "
    r"(\d+) unflagged\)"
)


def open_items_note(skipped: tuple[int, int], unlabeled: tuple[int, int]) -> str:
    """The notes' words for a round's skipped and unlabeled items, ``(flagged,
    unflagged)`` each: a report can then say how far they could move its estimates."""
    return (
        f"{sum(skipped)} skipped ({skipped[0]} flagged, {skipped[1]} unflagged), "
        f"{sum(unlabeled)} unlabeled ({unlabeled[0]} flagged, {unlabeled[1]} unflagged)"
    )


def notes_in_words(notes: str) -> str:
    """A round's notes for a reader of the report: the parts PR Planner writes for itself
    (seed, the item list's SHA-256, open items by stratum) said briefly, anything else kept
    ("Drawn by PR Planner from items.csv (seed 5); 3 skipped, none without a label; targets
    precision ±5 %, recall ±5 % at 95 % confidence")."""
    text = notes.replace("PR Planner labeling round: ", "")
    text = DRAW_NOTE.sub(
        lambda found: f"Drawn by PR Planner from {found[2]} (seed {found[1]})", text
    )
    text = re.sub(r";? ?item list SHA-256 [0-9a-f]{12}", "", text)

    def open_items(found: re.Match) -> str:
        skipped, unlabeled = int(found[1]), int(found[4])
        if not skipped and not unlabeled:
            return "every item labeled"
        parts = [f"{skipped:,} skipped" if skipped else "none skipped"]
        parts.append(f"{unlabeled:,} without a label" if unlabeled else "none without a label")
        return ", ".join(parts)

    return OPEN_ITEMS_NOTE.sub(open_items, text)


def open_items_in_notes(notes: str | None) -> tuple[int, int] | None:
    """``(flagged, unflagged)`` items skipped or unlabeled, as a round's notes record them;
    None when they do not (typed counts, rounds added before the notes said so)."""
    found = OPEN_ITEMS_NOTE.search(notes or "")
    if found is None:
        return None
    _, skipped_pos, skipped_neg, _, unlabeled_pos, unlabeled_neg = map(int, found.groups())
    return skipped_pos + unlabeled_pos, skipped_neg + unlabeled_neg


def targets_note(margin_precision: float, margin_recall: float, confidence: float) -> str:
    """The notes' words for the targets a round was drawn for (:data:`TARGETS_NOTE`)."""
    return (
        f"targets precision ±{100 * margin_precision:.6g} %, recall ±"
        f"{100 * margin_recall:.6g} % at {100 * confidence:.6g} % confidence"
    )


def targets_in_notes(notes: str | None):
    """The :class:`core.round_targets.Targets` a round's notes record, or None (none, or
    edited into something unusable)."""
    from core.errors import InputError
    from core.round_targets import Targets

    found = TARGETS_NOTE.search(notes or "")
    if found is None:
        return None
    precision, recall, confidence = (float(value) / 100 for value in found.groups())
    try:
        return Targets(margin_precision=precision, margin_recall=recall, confidence=confidence)
    except InputError:
        return None


def draw_in_notes(notes: str | None) -> tuple[str, str, str | None] | None:
    """``(seed, item list name, SHA-256 start or None)`` of the draw a round's notes
    name, or None when they name none."""
    found = DRAW_NOTE.search(notes or "")
    if found is None:
        return None
    digest = DRAW_LIST_DIGEST.search(notes or "")
    return found.group(1), found.group(2).strip(), digest.group(1) if digest else None


def same_draw_notes(first: str | None, second: str | None) -> bool:
    """Both notes name one draw: the same seed and item list, and the same list contents
    when both say (older notes do not)."""
    a, b = draw_in_notes(first), draw_in_notes(second)
    if a is None or b is None or a[:2] != b[:2]:
        return False
    return a[2] is None or b[2] is None or a[2] == b[2]


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
    is_totals : bool
        The row sums the rounds above it: rightly left out, not a round gone missing.
    round : str or None
        The round's name in the row, if it has one (so a name asked for can be said to
        be refused rather than missing).
    """

    sheet: str
    row: int
    reason: str
    is_totals: bool = False
    round: str | None = None

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
    header_guess : SheetColumns or None
        The row most like a header in the lead's own words (``Hits``, ``Misses``, ...)
        when no row names the four counts: what the lead can choose the counts' columns
        from (its roles are those its headers' aliases give).
    """

    sheet: str
    reason: str
    header_guess: SheetColumns | None = None

    def to_dict(self) -> dict[str, object]:
        result: dict[str, object] = {"sheet": self.sheet, "reason": self.reason}
        if self.header_guess is not None:
            result["header_row"] = self.header_guess.header_row
            result["headers"] = [text for _, text in self.header_guess.headers]
        return result


#: The roles a column can be read as (``--column ROLE=HEADER``), in the order they are
#: listed to the user; ``"ignore"`` reads a column as nothing.
COLUMN_ROLES = (
    "round",
    "date",
    "classifier",
    "model_version",
    "population_pos",
    "population_neg",
    "k",
    "s",
    "tp",
    "fp",
    "fn",
    "tn",
    "notes",
)
#: Other words accepted for a role on the command line.
_ROLE_SYNONYMS = {
    "version": "model_version",
    "model-version": "model_version",
    "category": "classifier",
    "name": "round",
    "n1": "population_pos",
    "n0": "population_neg",
    "none": "ignore",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ColumnChoice:
    """The user's word on one column: read the column headed ``header`` as ``role``.

    ``sheet`` limits the choice to one sheet (``None``: every sheet with such a column).
    ``role == "ignore"`` reads the column as nothing; ``role == "classifier"`` with an
    empty ``header`` names the classifier after the sheet (no classifier column).

    The text form, used by ``prplanner rounds --column`` and kept in a saved session, is
    ``ROLE=HEADER`` or ``SHEET!ROLE=HEADER`` (see :meth:`parse` and :meth:`to_text`).
    """

    role: str
    header: str
    sheet: str | None = None

    def __post_init__(self) -> None:
        role = _ROLE_SYNONYMS.get(self.role, self.role)
        if role not in COLUMN_ROLES and role != "ignore":
            raise InputError(
                f"unknown column role {self.role!r}; use one of "
                + ", ".join((*COLUMN_ROLES, "ignore"))
            )
        if not self.header.strip() and role != "classifier":
            raise InputError(
                f"{named('column')} {self.role}= needs the column's header after '=' (only "
                "'classifier=' may be empty: it names the classifier after the sheet)"
            )
        object.__setattr__(self, "role", role)
        object.__setattr__(self, "header", self.header.strip())

    @classmethod
    def parse(cls, text: str) -> ColumnChoice:
        """``"classifier=Model"`` or ``"Fraud!model_version=Model"`` as a choice.

        Raises
        ------
        InputError
            No ``=``, or an unknown role (the message lists the roles).
        """
        sheet = None
        left, equals, header = str(text).partition("=")
        if not equals:
            raise InputError(
                f"{named('column')} {text!r} must read ROLE=HEADER, e.g. classifier=Model or "
                "model_version=Model"
            )
        if "!" in left:
            sheet, _, left = left.rpartition("!")
            sheet = sheet.strip() or None
        role = left.strip().casefold().replace(" ", "_")
        return cls(role=role, header=header, sheet=sheet)

    def to_text(self) -> str:
        """The inverse of :meth:`parse`."""
        prefix = f"{self.sheet}!" if self.sheet else ""
        return f"{prefix}{self.role}={self.header}"

    def applies_to(self, sheet: str) -> bool:
        return self.sheet is None or self.sheet == sheet

    def in_words(self) -> str:
        """The choice as the interface in use says it (``--column tp=Hits``, or what the
        app's Columns… dialog shows)."""
        return column_choice(
            self.role, self.header, ROLE_WORDS.get(self.role, self.role), self.sheet
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ColumnRole:
    """What one column of a sheet was read as.

    Attributes
    ----------
    role : str
        One of :data:`COLUMN_ROLES`.
    header : str
        The column's header as typed; ``""`` for a classifier taken from the sheet's name.
    column : str
        Its letter (``"C"``); ``""`` for the sheet's name.
    guessed : bool
        ``True`` when the header alone did not settle it (a ``Model`` column, the sheet's
        name as the classifier): ``reason`` says how it was decided.
    chosen : bool
        ``True`` when the user chose it (a :class:`ColumnChoice`).
    reason : str
        Why, in words, for a guessed or chosen role.
    """

    role: str
    header: str
    column: str
    guessed: bool = False
    chosen: bool = False
    reason: str = ""

    def to_dict(self) -> dict[str, object]:
        return {
            "role": self.role,
            "header": self.header,
            "column": self.column,
            "guessed": self.guessed,
            "chosen": self.chosen,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SheetColumns:
    """How one sheet's header row was read.

    Attributes
    ----------
    sheet : str
        The sheet.
    header_row : int
        The header's row number (1-based).
    headers : tuple of (str, str)
        ``(column letter, header text)`` of every non-blank header cell, left to right:
        what the user can choose from.
    roles : tuple of ColumnRole
        The columns read, in :data:`COLUMN_ROLES` order.
    hidden_rounds : tuple of int
        Rows read as rounds that the sheet hides (:meth:`notes` says so).
    """

    sheet: str
    header_row: int
    headers: tuple[tuple[str, str], ...]
    roles: tuple[ColumnRole, ...]
    hidden_rounds: tuple[int, ...] = ()

    @property
    def guessed(self) -> tuple[ColumnRole, ...]:
        return tuple(item for item in self.roles if item.guessed)

    def header_of(self, role: str) -> str | None:
        """The header read as ``role`` (``""``: the sheet name), or ``None``."""
        for item in self.roles:
            if item.role == role:
                return item.header
        return None

    def to_dict(self) -> dict[str, object]:
        return {
            "sheet": self.sheet,
            "header_row": self.header_row,
            "roles": {item.role: item.header for item in self.roles},
            "guessed": [item.role for item in self.roles if item.guessed],
            "notes": self.notes(),
        }

    def notes(self) -> list[str]:
        """What the lead should know of how the sheet was read: each guessed column, and
        the hidden rows read as rounds (:meth:`hidden_note`)."""
        notes = [describe_role(self.sheet, item) for item in self.roles if item.guessed]
        return [*notes, self.hidden_note()] if self.hidden_rounds else notes

    def hidden_note(self) -> str:
        """The rows read as rounds that the sheet hides, in words ("" when none)."""
        rows = self.hidden_rounds
        if not rows:
            return ""
        shown = ", ".join(str(row) for row in rows[:10])
        more = f" and {len(rows) - 10:,} more" if len(rows) > 10 else ""
        if len(rows) == 1:
            words = "is hidden in the workbook, and read as a round like the others"
            them, their = "it", "its"
        else:
            words = "are hidden in the workbook, and read as rounds like the others"
            them, their = "them", "their"
        return (
            f"sheet {self.sheet!r}: row{'s' if len(rows) > 1 else ''} {shown}{more} {words} "
            f"(hidden rows are still data, as in Excel's sums); to leave {them} out, delete "
            f"{them} or clear {their} counts"
        )


def choice_advice(*choices: tuple[str, str | None]) -> str:
    """What to do to read columns as roles, ``(role, header or None for any)``, in the
    words of the interface in use (:func:`core.errors.column_choice_advice`)."""
    return column_choice_advice(
        [(role, header, ROLE_WORDS.get(role, role)) for role, header in choices]
    )


def describe_role(sheet: str, item: ColumnRole) -> str:
    """One line saying what a column was read as, and how to change it."""
    what = ROLE_WORDS.get(item.role, item.role)
    if item.role == "classifier" and not item.header:
        text = f"sheet {sheet!r}: the classifier is the sheet's name ({item.reason})"
        return text + f"; to read it from a column, {choice_advice(('classifier', None))}"
    text = f"sheet {sheet!r}: column {item.column} {item.header!r} read as the {what}"
    if item.reason:
        text += f" ({item.reason})"
    if item.guessed:
        other = {"model_version": "classifier", "classifier": "model_version"}.get(
            item.role, "ignore"
        )
        text += f"; if it is not, {choice_advice((other, item.header))}"
    return text


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
    columns : tuple of SheetColumns
        What each read sheet's columns were read as (guessed roles are marked).
    unused_choices : tuple of ColumnChoice
        The user's column choices that matched no column of any read sheet.
    """

    rounds: tuple[Round, ...]
    refused: tuple[Refusal, ...]
    skipped_sheets: tuple[SkippedSheet, ...]
    columns: tuple[SheetColumns, ...] = ()
    unused_choices: tuple[ColumnChoice, ...] = ()

    def sections(self) -> tuple[tuple[str, Sequence[Any]], ...]:
        """``(key, items)`` in the order of :meth:`to_dict`, each item with ``to_dict()``:
        for writers that stream a million rounds instead of holding them all as dicts."""
        return (
            ("rounds", self.rounds),
            ("refused", self.refused),
            ("skipped_sheets", self.skipped_sheets),
            ("columns", self.columns),
        )

    def to_dict(self) -> dict[str, list[dict[str, object]]]:
        """The ``prplanner rounds --json`` document (its JSON contract)."""
        return {key: [item.to_dict() for item in items] for key, items in self.sections()}


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
        # The app's own words for the strata (not "flagged" alone: a sample count may be
        # headed so).
        "N flagged",
        "flagged (population)",
        "population flagged",
        "flagged population",
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
        "N unflagged",
        "unflagged (population)",
        "population unflagged",
        "unflagged population",
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
    "classifier": (
        "classifier",
        "classifier name",
        "model name",
        "category",
        "category name",
        "mail category",
    ),
    "model_version": ("model version", "version", "classifier version", "model ver"),
    "notes": ("notes", "note", "comment", "comments", "remarks"),
}
#: Headers that name either the classifier or its version: the column's values decide
#: (versions such as ``v2.1`` make it the model version, anything else the classifier).
AMBIGUOUS_HEADERS = ("model", "models")

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
    "model_version": "model version",
    "notes": "notes",
}
#: How each role is named when the reader says what a column was read as.
ROLE_WORDS = {
    **FIELD_LABELS,
    "population_pos": "predicted-positive population N1",
    "population_neg": "predicted-negative population N0",
    "s": "over-sampling ratio s",
    "k": "imbalance ratio k",
    "round": "round name",
    "ignore": "nothing (ignored)",
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


def field_of_header(value: object) -> str | None:
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


def unused_choices_in_words(book: RoundsBook) -> str:
    """Why the column choices ``book.unused_choices`` could not be used: no sheet reads
    with them (and why each was skipped), or no column has their header (and the headers
    there are). Adding a round said "check the headers' spelling" of headers that were
    there (fuzz 16)."""
    names = ", ".join(choice.in_words() for choice in book.unused_choices)
    if not book.columns:
        # Say why each sheet was not read: the choices may have named its columns but
        # left one out (the populations, or one of the counts).
        why = "; ".join(f"sheet {item.sheet!r}: {item.reason}" for item in book.skipped_sheets[:3])
        return f"{names}: no sheet could be read with them" + (f" ({why})" if why else "")
    shown = "; ".join(
        f"sheet {reading.sheet!r} row {reading.header_row}: "
        + ", ".join(text for _, text in reading.headers)
        for reading in book.columns[:3]
    )
    return f"{names}: no column has that header; the headers are {shown}"


_AMBIGUOUS_INDEX = frozenset(normalise_header(text) for text in AMBIGUOUS_HEADERS)


def _is_ambiguous_header(value: object) -> bool:
    """A header such as ``Model`` that may hold classifier names or model versions."""
    if value is None or isinstance(value, bool):
        return False
    text = str(value)
    return normalise_header(text) in _AMBIGUOUS_INDEX or (
        ("(" in text or "[" in text)
        and normalise_header(_PARENTHESISED.sub(" ", text)) in _AMBIGUOUS_INDEX
    )


# v2.1, 2.3.0, v3, V 4, version 2, 1.0-rc1, 2.1b: a number with an optional "v" in front.
_VERSION = re.compile(r"(?:v|ver\.?|version)?\s*\d+(?:\.\d+)*(?:[-_+.]?[a-z]+\d*)?", re.IGNORECASE)


def looks_like_version(value: object) -> bool:
    """Whether a cell reads as a model version (``v2.1``, ``2.3.0``, ``v3``, ``2.1``)."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return math.isfinite(value) and value >= 0
    return _VERSION.fullmatch(str(value).strip()) is not None


# Names a spreadsheet gives a sheet (in several languages), and words that say what the
# sheet holds rather than which classifier: none of them names a classifier.
_DEFAULT_SHEET_NAME = re.compile(
    r"(?:sheet|feuil|feuille|tabelle|hoja|foglio|planilha|plan|blad|ark|arkusz|лист|"
    r"munkalap|list|taulukko)\s*\d*",
    re.IGNORECASE,
)
_GENERIC_SHEET_WORDS = frozenset(
    {
        "round", "rounds", "data", "history", "log", "logs", "results", "result",
        "labels", "labeling", "labelling", "audit", "audits", "summary", "table",
        "main", "all", "export", "evaluation", "evaluations", "metrics", "tracking",
        "tracker", "overview", "input", "inputs", "raw", "rawdata", "records",
        "roundslog", "labelingrounds", "labellingrounds", "auditrounds", "pastrounds",
    }
)  # fmt: skip


def is_generic_sheet_name(name: str) -> bool:
    """``Sheet1``, ``Rounds``, ``Data 2024``: a sheet name that is not a classifier's."""
    text = unicodedata.normalize("NFKC", str(name)).strip()
    if not text or _DEFAULT_SHEET_NAME.fullmatch(text):
        return True
    letters = re.sub(r"[\W\d_]+", "", text.casefold())
    return not letters or letters in _GENERIC_SHEET_WORDS


# --- cell values ---------------------------------------------------------------------------

# Spaces people (and locales) put inside numbers: normal, no-break, thin, narrow no-break,
# figure space, and the apostrophe of Swiss notation.
_DIGIT_GROUP_SPACES = str.maketrans("", "", " \u00a0\u2009\u202f\u2007\u2008'’")
# A first group of 0 is no thousands grouping: "0,033" is a decimal comma, not 33 (fuzz 20).
_SPACE_THOUSANDS = re.compile(r"[+-]?[1-9]\d{0,2}(?:[ '’]\d{3})+(?:[.,]\d+)?")
_COMMA_THOUSANDS = re.compile(r"[+-]?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?")
_DOT_THOUSANDS = re.compile(
    r"[+-]?[1-9]\d{0,2}(?:\.\d{3}){2,}(?:,\d+)?|[+-]?[1-9]\d{0,2}\.\d{3},\d+"
)
_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+")
_PLAIN_INTEGER = re.compile(r"[+-]?\d+")


def _foldable(character: str) -> bool:
    """Whether NFKC may fold ``character`` in a number: it leaves it alone, or it is a
    full-width form (``１２３``) or a space (no-break, thin, ideographic); not a
    superscript, subscript, circled or styled digit."""
    if character.isascii() or unicodedata.normalize("NFKC", character) == character:
        return True
    return 0xFF00 <= ord(character) <= 0xFFEF or unicodedata.category(character) == "Zs"


def parse_number_text(text: str) -> int | float | None:
    """A number typed as text, or ``None`` when the text is not a number.

    Accepts digit-group separators (``39,800``, ``1 251 000`` with normal, no-break or thin
    spaces, ``1.251.000``, ``1'251'000``), a decimal comma (``1,5``) and a leading ``+``.
    A comma followed by exactly three digits is a thousands separator (``1,500`` is 1500);
    whole numbers stay exact Python ints. A text of more than :data:`_MAX_NUMBER_TEXT_LENGTH`
    characters is not a number (this bounds the work a pasted essay can cause).
    """
    if len(text) > _MAX_NUMBER_TEXT_LENGTH:
        return None
    if "_" in text or not all(_foldable(character) for character in text):
        # Python's float reads "2_20" as 220, and NFKC reads "10⁴" as 104 and "①②" as 12:
        # a population typed as a power of ten was taken a hundred times too small (fuzz 19).
        return None
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
    if value_type is int or value_type is float:  # the common case, checked first
        return cast("int | float", value)
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


#: :data:`MAX_COUNT` as refusals name it.
_MAX_COUNT_TEXT = "10^15"


def _count_text(value: object) -> str:
    """A too-large count as a refusal shows it: 400 nines become "a number of 400 digits"."""
    text = value if isinstance(value, str) else str(value)
    digits = sum(character.isdigit() for character in text)
    if digits > 20 and not isinstance(value, float):
        return f"a number of {digits:,} digits"
    return _describe(value if len(text) <= 40 else text[:40] + "...")


def _too_large(value: object) -> bool:
    """True for a number (or number text) beyond :data:`MAX_COUNT`, or infinite."""
    if isinstance(value, str):
        digits = sum(character.isdigit() for character in value)
        if digits > _MAX_NUMBER_TEXT:
            return True
    number = _as_number(value)
    if number is None:
        return isinstance(value, float) and math.isinf(value)
    return abs(number) > MAX_COUNT


def _as_count(value: object) -> int | None:
    """A whole number in ``[0, MAX_COUNT]``, or ``None``. ``3.0`` and ``"3"`` pass;
    ``2.5``, ``-1``, ``1e300`` do not."""
    if type(value) is int:
        return value if 0 <= value <= MAX_COUNT else None
    if validation.ambiguous_count(value):  # '3.000' read as 3 (fuzz 14)
        return None
    number = _as_number(value)
    if number is None or isinstance(number, bool):
        return None
    if isinstance(number, float):
        if not (math.isfinite(number) and number.is_integer()):
            return None
        if abs(number) > MAX_COUNT:
            return None
        number = int(number)
    return number if 0 <= number <= MAX_COUNT else None


def _as_text(value: object) -> str | None:
    if type(value) is str:  # the usual cell: no other test needed
        return value.strip() or None
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


#: Excel's first day: an earlier date is a negative serial read by another reader.
_FIRST_EXCEL_DAY = dt.date(1900, 1, 1)
#: The earliest date a round can have. A number in a date column is a day of Excel's
#: calendar, and the week numbers (50, 52, 2) or years (2026) a lead types there read as
#: days of 1900 and 1905: the newest round sorted first (fuzz 19). No classifier was
#: audited before 1970; the app's date fields and ``--round-date`` start there too.
EARLIEST_ROUND_DATE = dt.date(1970, 1, 1)


def check_round_date(date: dt.date | None) -> None:
    """Refuse a round's date the rounds reader would not read back (before
    :data:`EARLIEST_ROUND_DATE`): a round the app files must reopen (review 19)."""
    if date is not None and date < EARLIEST_ROUND_DATE:
        raise InputError(
            f"a round's date is the day its items were labeled, from "
            f"{EARLIEST_ROUND_DATE.isoformat()} on; got {date.isoformat()}"
        )


class _TooEarly(ValueError):
    """A date cell's day before :data:`EARLIEST_ROUND_DATE`: ``shown`` as the cell shows it
    (``50`` for a plain number, else the day), ``number`` whether the cell held one."""

    def __init__(self, day: dt.date, raw: object):
        self.number = isinstance(raw, (int, float)) and not isinstance(raw, bool)
        self.shown = f"{raw:g}" if self.number else day.isoformat()
        self.day = day
        super().__init__(f"{day.isoformat()} is before {EARLIEST_ROUND_DATE.year}")


def _as_date(value: object, epoch: dt.datetime) -> dt.date:
    """Date cell -> date; raises ValueError for text that is not an ISO date, for a number
    that is no day of Excel's calendar, and :class:`_TooEarly` for a day before
    :data:`EARLIEST_ROUND_DATE`."""
    raw = value
    if isinstance(value, dt.datetime):
        value = value.date()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        # A date column whose cells lost their date format still holds Excel serials.
        from core.workbook.xlsx_reader import from_excel

        if value < 0 or (value < 1 and epoch.year < 1904):
            # Excel shows no date for these (####): read as December 1899, the round
            # dropped behind every other and the round before it passed for the latest
            # (fuzz 15).
            raise ValueError(f"{value!r} is not a date")
        converted = from_excel(value, epoch)
        if not isinstance(converted, dt.datetime):
            raise ValueError(f"{value!r} is not a date")
        value = converted.date()
    elif not isinstance(value, dt.date):
        text = str(value).strip()
        try:
            value = dt.date.fromisoformat(text)
        except ValueError:
            value = dt.datetime.fromisoformat(text).date()
    assert isinstance(value, dt.date)
    if value < EARLIEST_ROUND_DATE:
        raise _TooEarly(value, raw)
    return value


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
    headers: dict[int, str]  # every non-blank header cell: column -> text
    ambiguous: list[int]  # "Model" columns the values must settle
    chosen: set[str]  # roles the user's choices gave
    sheet_classifier_chosen: bool  # "classifier=" chose the sheet's name
    used_choices: list[ColumnChoice]
    ignored: set[int]  # columns chosen to be read as nothing


def _column_of(choice: ColumnChoice, headers: dict[int, str]) -> int | None:
    """The column ``choice.header`` names in a header row (by header, else by letter).

    Raises
    ------
    InputError
        Several columns have that header (``TP`` typed twice): the letter says which.
    """
    wanted = normalise_header(choice.header)
    matching = [index for index, text in headers.items() if normalise_header(text) == wanted]
    if len(matching) > 1:
        letters = [_column_letter(index) for index in matching]
        raise InputError(
            f"{choice.in_words()}: columns {' and '.join(letters)} are both "
            f"headed {choice.header!r}; name the one you mean by its letter: "
            f"{choice_advice((choice.role, letters[-1]))}"
        )
    if matching:
        return matching[0]
    for index in headers:
        if _column_letter(index) == choice.header.upper():
            return index
    return None


def _find_header(
    rows: Sequence[RawRow], sheet: str = "", choices: Sequence[ColumnChoice] = ()
) -> _Header | str | None:
    """The first row naming TP, FP, FN and TN (plus ``k`` or both populations).

    The header names are matched against :data:`COLUMN_ALIASES`, then the user's
    ``choices`` for this sheet override them. Returns the header, a reason to skip the
    sheet (a column named twice, no ``k`` and no population columns), or ``None`` when
    no row names the four counts.
    """
    choices = [choice for choice in choices if choice.applies_to(sheet)]
    for row_number, values, _ in rows:
        headers = {
            index: str(value).strip()
            for index, value in enumerate(values)
            if value is not None and not isinstance(value, bool) and str(value).strip()
        }
        candidates: dict[str, list[int]] = {}
        ambiguous: list[int] = []
        for index, text in headers.items():
            field = field_of_header(text)
            if field is not None:
                candidates.setdefault(field, []).append(index)
            elif _is_ambiguous_header(text):
                ambiguous.append(index)
        chosen: set[str] = set()
        used: list[ColumnChoice] = []
        ignored: set[int] = set()
        sheet_classifier = False
        for choice in choices:
            if choice.role == "classifier" and not choice.header:
                sheet_classifier = True
                candidates.pop("classifier", None)
                used.append(choice)
                continue
            chosen_index = _column_of(choice, headers)
            if chosen_index is None:
                continue
            used.append(choice)
            for found in candidates.values():
                if chosen_index in found:
                    found.remove(chosen_index)
            if chosen_index in ambiguous:
                ambiguous.remove(chosen_index)
            if choice.role == "ignore":
                ignored.add(chosen_index)
            else:
                candidates[choice.role] = [chosen_index]
                chosen.add(choice.role)
                if choice.role == "classifier":
                    sheet_classifier = False
        if "date" not in chosen and len(candidates.get("date", ())) > 1:
            # "Date" beside "Week" (a week number, or the week's Monday): the column named
            # Date is the date; the sheet was skipped for naming it twice (fuzz 19).
            named_date = [i for i in candidates["date"] if normalise_header(headers[i]) == "date"]
            if len(named_date) == 1:
                candidates["date"] = named_date
        columns = {field: found[0] for field, found in candidates.items() if found}
        if not all(field in columns for field in COUNT_FIELDS):
            continue
        duplicates = [
            f"{FIELD_LABELS[field]} ({' and '.join(_column_letter(i) for i in found)})"
            for field, found in candidates.items()
            if len(found) > 1
        ]
        if duplicates:
            return f"row {row_number} names a column twice: " + ", ".join(duplicates)
        if "k" not in columns and not ("population_pos" in columns and "population_neg" in columns):
            used_columns = set(columns.values())
            others = [text for index, text in headers.items() if index not in used_columns]
            shown = ", ".join(repr(text) for text in others[:8]) or "none"
            return (
                f"row {row_number} has TP, FP, FN and TN but neither a k column nor both "
                "population columns (how many items the classifier flagged and did not flag "
                f"in all; its other headers are {shown}). Head them 'Predicted positive "
                "(population)' and 'Predicted negative (population)', or say which columns "
                f"hold them: {choice_advice(('population_pos', None), ('population_neg', None))}"
            )
        return _Header(
            row=row_number,
            columns=columns,
            headers=headers,
            ambiguous=ambiguous,
            chosen=chosen,
            sheet_classifier_chosen=sheet_classifier,
            used_choices=used,
            ignored=ignored,
        )
    return None


#: Text cells a row needs to be offered as a header in the lead's own words: the four counts.
_GUESS_MIN_HEADERS = 4


def counts_in_words(guess: SheetColumns) -> str:
    """`` (no column is headed FP; TP heads columns G and H)`` for a header row that names
    some of the four counts, so a typo or a copied column is plain; ``""`` otherwise."""
    found: dict[str, list[str]] = {}
    for letter, text in guess.headers:
        field = field_of_header(text)
        if field in COUNT_FIELDS:
            found.setdefault(field, []).append(letter)
    if not found:
        return ""
    parts = [
        f"no column is headed {FIELD_LABELS[field]}" for field in COUNT_FIELDS if field not in found
    ]
    parts += [
        f"{FIELD_LABELS[field]} heads columns {' and '.join(letters)}"
        for field, letters in found.items()
        if len(letters) > 1
    ]
    return f" ({'; '.join(parts)})" if parts else ""


def _header_guess(
    sheet: str, top: Sequence[RawRow], choices: Sequence[ColumnChoice] = ()
) -> SheetColumns | None:
    """The row of ``top`` with the most text cells (at least four; the first of equals),
    as a header whose words PR Planner does not know, or ``None``.

    Numbers and dates are data, not headers, so a table of rounds without a header row
    offers nothing. The roles are the user's ``choices`` for the sheet, then what the
    row's headers' aliases already give (a ``Date`` column): a choice made again starts
    from them.
    """
    best: tuple[int, dict[int, str]] | None = None
    for row_number, values, _ in top:
        headers = {
            index: value.strip()
            for index, value in enumerate(values)
            if type(value) is str and value.strip()
        }
        if len(headers) >= _GUESS_MIN_HEADERS and (best is None or len(headers) > len(best[1])):
            best = (row_number, headers)
    if best is None:
        return None
    row_number, headers = best
    found: dict[str, int] = {}
    chosen: set[str] = set()
    taken: set[int] = set()
    for choice in choices:
        index = _column_of(choice, headers) if choice.applies_to(sheet) else None
        if index is None or index in taken:
            continue
        taken.add(index)
        if choice.role in COLUMN_ROLES:
            found[choice.role] = index
            chosen.add(choice.role)
    for index, text in headers.items():
        field = field_of_header(text)
        if field in COLUMN_ROLES and field not in found and index not in taken:
            found[field] = index
    roles = tuple(
        ColumnRole(
            role=role,
            header=headers[found[role]],
            column=_column_letter(found[role]),
            chosen=role in chosen,
            reason="chosen" if role in chosen else "its header",
        )
        for role in COLUMN_ROLES
        if role in found
    )
    return SheetColumns(
        sheet=sheet,
        header_row=row_number,
        headers=tuple((_column_letter(index), text) for index, text in sorted(headers.items())),
        roles=roles,
    )


def _column_values(sample: Sequence[RawRow], index: int) -> list[object]:
    """The filled cells of column ``index`` in ``sample``, but a totals row's label."""
    return [
        values[index]
        for _, values, _ in sample
        if index < len(values)
        and not _is_blank(values[index])
        and not _TOTAL_LABEL.match(str(values[index]).strip())
    ]


def _date_column(header: _Header, sample: Sequence[RawRow]) -> int | None:
    """The one column no header named whose cells in ``sample`` are all dates (date cells,
    or ISO dates typed as text), with at least one; ``None`` when none or several are."""
    taken = set(header.columns.values()) | set(header.ambiguous) | header.ignored
    candidates = []
    for index in header.headers:
        if index in taken:
            continue
        found = _column_values(sample, index)
        if found and all(
            isinstance(value, dt.date)
            or (isinstance(value, str) and _ISO_DAY.fullmatch(value.strip()) is not None)
            for value in found
        ):
            candidates.append(index)
    return candidates[0] if len(candidates) == 1 else None


_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _settle_roles(
    sheet: str, header: _Header, sample: Sequence[RawRow]
) -> tuple[SheetColumns, str | None]:
    """Decide the ``Model`` columns from their values and whether the sheet's name is
    the classifier; returns what the sheet's columns were read as and that name."""
    columns = header.columns
    reasons: dict[str, str] = {}
    guessed: set[str] = set()
    for index in header.ambiguous:
        found = _column_values(sample, index)
        examples = ", ".join(dict.fromkeys(_as_text(value) or "" for value in found[:40]))
        examples = examples if len(examples) <= 40 else examples[:39] + "…"
        names = {(_as_text(value) or "").casefold() for value in found}
        is_guess = True
        if found and all(looks_like_version(value) for value in found):
            role, why = "model_version", f"its values look like versions: {examples}"
        elif names == {str(sheet).strip().casefold()} and "classifier" not in columns:
            role, why, is_guess = "classifier", "its values are the sheet's name", False
        elif "classifier" not in columns and not header.sheet_classifier_chosen:
            role = "classifier"
            why = f"its values are names, not versions: {examples}" if found else "it is empty"
        else:
            role, why = "model_version", "the sheet has a classifier already"
        if role in columns:
            continue  # a column of that name exists; this one stays unread
        columns[role] = index
        reasons[role] = why
        if is_guess:
            guessed.add(role)
    if "date" not in columns:
        found_date = _date_column(header, sample)
        if found_date is not None:
            # "Datum" or "Stichtag": a column of date cells is the round's date, said as a
            # guess (trial 21: every round undated without a word).
            columns["date"] = found_date
            reasons["date"] = "its cells are dates"
            guessed.add("date")
    sheet_classifier = None
    if "classifier" not in columns and (
        header.sheet_classifier_chosen or not is_generic_sheet_name(sheet)
    ):
        sheet_classifier = str(sheet).strip()
        if header.sheet_classifier_chosen:
            reasons["classifier"] = "chosen"
        else:
            guessed.add("classifier")
            reasons["classifier"] = "there is no classifier column"
    roles = []
    for role in COLUMN_ROLES:
        if role == "classifier" and sheet_classifier is not None:
            roles.append(
                ColumnRole(
                    role=role,
                    header="",
                    column="",
                    guessed=role in guessed,
                    chosen=header.sheet_classifier_chosen,
                    reason=reasons[role],
                )
            )
            continue
        role_index = columns.get(role)
        if role_index is None:
            continue
        chosen = role in header.chosen
        roles.append(
            ColumnRole(
                role=role,
                header=header.headers.get(role_index, ""),
                column=_column_letter(role_index),
                guessed=role in guessed,
                chosen=chosen,
                reason="chosen" if chosen else reasons.get(role, ""),
            )
        )
    reading = SheetColumns(
        sheet=sheet,
        header_row=header.row,
        headers=tuple((_column_letter(i), text) for i, text in sorted(header.headers.items())),
        roles=tuple(roles),
    )
    return reading, sheet_classifier


class _RowInterpreter:
    """Turns the data rows below one header into rounds and refusals."""

    def __init__(
        self,
        sheet: str,
        header: _Header,
        epoch: dt.datetime,
        sheet_classifier: str | None = None,
        date_guessed: bool = False,
    ):
        self.sheet = sheet
        #: The date column was guessed from its first cells: a later cell that holds no
        #: date ("pending") leaves its round undated instead of refusing it (review 21).
        self.date_guessed = date_guessed
        self.epoch = epoch
        self.sheet_classifier = sheet_classifier
        self.columns = header.columns
        self.width = max(header.columns.values()) + 1
        self.count_columns = tuple(header.columns[field] for field in COUNT_FIELDS)
        self.get = {field: header.columns.get(field) for field in FIELD_LABELS}
        self.mapped = tuple(sorted(header.columns.values()))
        self.headers = header.headers

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
            return Refusal(
                sheet=self.sheet,
                row=row_number,
                reason=problems,
                is_totals=problems.startswith(TOTALS_REASON),
                round=self._name(values),
            )

        get = self.get
        problems_found: list[str] = []
        counts: list[int] = []
        missing: list[str] = []
        for field, column in zip(COUNT_FIELDS, self.count_columns, strict=True):
            value = values[column]
            count = value if type(value) is int and 0 <= value <= MAX_COUNT else _as_count(value)
            if count is None:  # the row is refused, with what is wrong
                if _is_blank(value):
                    missing.append(FIELD_LABELS[field])
                elif _too_large(value):
                    problems_found.append(
                        f"{FIELD_LABELS[field]} in cell {self._cell(column, row_number)} is too "
                        f"large to be a count (more than {_MAX_COUNT_TEXT}): {_count_text(value)}"
                    )
                elif ambiguous := validation.ambiguous_count(value):
                    where = self._cell(column, row_number)
                    problems_found.append(f"{FIELD_LABELS[field]}: {ambiguous} (cell {where})")
                else:
                    problems_found.append(
                        f"{FIELD_LABELS[field]} must be a whole number >= 0, got "
                        f"{_describe(value)} (cell {self._cell(column, row_number)})"
                    )
            else:
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
        if len(counts) == len(COUNT_FIELDS):
            self._sample_fits(counts, population_pos, population_neg, row_number, problems_found)
        k = self._positive_number("k", values, row_number, problems_found, invalid)
        k = self._reconcile_k(k, population_pos, population_neg, problems_found, invalid)
        s = self._positive_number("s", values, row_number, problems_found, invalid)

        date = None
        if get["date"] is not None and not _is_blank(values[get["date"]]):
            raw_date = values[get["date"]]
            try:
                date = _as_date(raw_date, self.epoch)
            except _TooEarly as early:
                header = self.headers.get(get["date"], "date")
                why = (
                    "a week number or a year in a date column reads as a day of 1900 or 1905"
                    if early.number or early.day.year in (1900, 1905)
                    else "no round is older"
                )
                problems_found.append(
                    f"{header} {early.shown} (cell {self._cell(get['date'], row_number)}) is "
                    f"not the day a round was labeled (it is before {EARLIEST_ROUND_DATE.year}: "
                    f"{why}); type the day the round was labeled, or "
                    f"{choice_advice(('ignore', header))} to read the rounds without dates"
                )
            except (ValueError, TypeError, OverflowError):
                # A date-formatted number beyond Excel's dates reads as #VALUE!, as openpyxl
                # has it: the cell itself may not say so (fuzz 14).
                what = (
                    "the date cell holds no date Excel can show (#VALUE!, or a number beyond "
                    "its dates)"
                    if raw_date == "#VALUE!"
                    else f"date {_describe(raw_date)} is not a date"
                )
                if not self.date_guessed:  # else undated, as before the column was guessed
                    problems_found.append(
                        f"{what}; use a date cell or YYYY-MM-DD "
                        f"(cell {self._cell(get['date'], row_number)})"
                    )
        if problems_found:
            return Refusal(
                sheet=self.sheet,
                row=row_number,
                reason="; ".join(problems_found),
                round=self._name(values),
            )
        assert k is not None  # _reconcile_k reports every way k can be missing

        tp, fp, fn, tn = counts
        return Round(
            sheet=self.sheet,
            row=row_number,
            round=_as_text(values[get["round"]]) if get["round"] is not None else None,
            date=date,
            classifier=(
                _as_text(values[get["classifier"]])
                if get["classifier"] is not None
                else self.sheet_classifier
            ),
            model_version=(
                _as_text(values[get["model_version"]]) if get["model_version"] is not None else None
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

    def _sample_fits(self, counts, population_pos, population_neg, row_number, problems):
        """A stratum cannot give more labels than it has items: more means a mistyped
        count or population, and every estimate of the row would be wrong."""
        from core.confusion import oversized_strata

        tp, fp, fn, tn = counts
        fields = {
            "predicted-positive": ("population_pos", "TP + FP"),
            "predicted-negative": ("population_neg", "FN + TN"),
        }
        for stratum, labeled, population in oversized_strata(
            (tp + fp, fn + tn), (population_pos, population_neg)
        ):
            field, words = fields[stratum]
            column = self.get[field]
            where = f" (cell {self._cell(column, row_number)})" if column is not None else ""
            problems.append(
                f"{words} = {labeled:,} items were labeled, more than the "
                f"{FIELD_LABELS[field]} of {population:,}{where}; check the counts and "
                "the population"
            )

    def plain_rounds(self, batch: Sequence[RawRow]) -> list[Round] | None:
        """The rounds of ``batch`` when every cell in its known columns is of the usual
        kind, else ``None`` (then each row goes through :meth:`interpret`).

        Nearly every row of a long history has whole-number counts, a date cell, plain text
        and numbers in range. Checked a column at a time (types, minimum and maximum), such
        a batch needs no per-row messages and reads in a third of the time; any other batch
        (a blank or text count, a value out of range, a totals row, a k that disagrees with
        the population counts) returns ``None`` and :meth:`interpret` gives the same rounds
        or says what is wrong. The tests compare both paths.
        """
        width = self.width
        if any(formulas for _, _, formulas in batch):
            return None
        rows = [
            values if len(values) >= width else [*values, *[None] * (width - len(values))]
            for _, values, _ in batch
        ]
        columns = list(zip(*rows, strict=False))
        get = self.get
        counts = [columns[column] for column in self.count_columns]
        for column in counts:
            if not _all_of(column, _INT) or min(column) < 0 or max(column) > MAX_COUNT:
                return None
        names = _plain_texts(columns, get["round"], len(rows))
        if names is None or _TOTAL_LABEL_LINE.search("\n".join(filter(None, names))):
            return None
        population_pos = _plain_counts(columns, get["population_pos"], len(rows))
        population_neg = _plain_counts(columns, get["population_neg"], len(rows))
        k = _plain_positives(columns, get["k"], len(rows), MIN_K)
        s = _plain_positives(columns, get["s"], len(rows), 0.0)
        if population_pos is None or population_neg is None or k is None or s is None:
            return None
        if population_pos[0] is not None and population_neg[0] is not None:
            tp, fp, fn, tn = counts
            flagged = zip(tp, fp, population_pos, strict=True)
            unflagged = zip(fn, tn, population_neg, strict=True)
            if any(a + b > big for a, b, big in (*flagged, *unflagged)):
                return None  # a sample larger than its stratum: interpret() says where
            ratios = [pos / neg for pos, neg in zip(population_pos, population_neg, strict=True)]
            if k[0] is not None and any(
                abs(typed - ratio) > K_RELATIVE_TOLERANCE * ratio
                for typed, ratio in zip(k, ratios, strict=True)
            ):
                return None
            k = ratios
        elif population_pos[0] is not None or population_neg[0] is not None or k[0] is None:
            return None
        dates = _plain_dates(columns, get["date"], len(rows))
        classifiers = (
            _plain_texts(columns, get["classifier"], len(rows))
            if get["classifier"] is not None
            else [self.sheet_classifier] * len(rows)
        )
        versions = _plain_texts(columns, get["model_version"], len(rows))
        notes = _plain_texts(columns, get["notes"], len(rows))
        if dates is None or classifiers is None or versions is None or notes is None:
            return None
        sheets = [self.sheet] * len(rows)
        row_numbers = [row_number for row_number, _, _ in batch]
        return list(
            map(
                _checked_round,
                zip(
                    sheets,
                    row_numbers,
                    names,
                    dates,
                    classifiers,
                    versions,
                    k,
                    population_pos,
                    population_neg,
                    s,
                    *counts,
                    notes,
                    strict=True,
                ),
            )
        )

    def _name(self, values) -> str | None:
        column = self.get["round"]
        return _as_text(values[column]) if column is not None else None

    def _totals_or_formula_problems(self, row_number, values, formulas) -> str | None:
        column = self.get["round"]
        if column is not None and isinstance(values[column], str):
            label = values[column].strip()
            if _TOTAL_LABEL.match(label):
                return f"{TOTALS_REASON} ({label!r}), not a round"
        for field in ("round", "classifier", "model_version"):
            column = self.get[field]
            if column is None or not isinstance(values[column], str):
                continue
            text = values[column].strip()
            if text in EXCEL_ERRORS:
                # A failed lookup's #N/A became the round's or classifier's name (fuzz 21).
                return (
                    f"cell {self._cell(column, row_number)} holds the Excel error {text} (a "
                    f"formula that failed) where the {ROLE_WORDS[field]} should be; correct "
                    "the formula or type the name"
                )
        if not formulas:
            return None
        for column in sorted(formulas):
            text = formulas[column][0]
            if _sums_own_column(text, _column_letter(column)):
                return (
                    f"{TOTALS_REASON} (cell {self._cell(column, row_number)} holds "
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
        if count is None and _too_large(value):
            problems.append(
                f"the {FIELD_LABELS[field]} in cell {self._cell(column, row_number)} is too "
                f"large to be a count (more than {_MAX_COUNT_TEXT}): {_count_text(value)}"
            )
            invalid.add(field)
            return None
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
        if field == "k" and number is not None and 0 < number < MIN_K:
            problems.append(
                f"k = {number:g} in cell {self._cell(column, row_number)} is too small to be "
                f"an imbalance ratio (below {MIN_K:g}); give the population counts instead"
            )
            invalid.add(field)
            return None
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


#: Setters of :class:`Round`'s slots, in field order.
_ROUND_SETTERS = tuple(getattr(Round, field.name).__set__ for field in dataclasses.fields(Round))


def _checked_round(values: tuple) -> Round:
    """A :class:`Round` of already checked ``values`` in field order.

    The same object as ``Round(...)``, made in half the time: a frozen dataclass sets each
    field through ``object.__setattr__`` by name, which is a tenth of reading a long
    history. Its slots are set directly instead.
    """
    made = object.__new__(Round)
    for set_slot, value in zip(_ROUND_SETTERS, values, strict=True):
        set_slot(made, value)
    return made


_INT = frozenset({int})
_NUMBER = frozenset({int, float})
_TEXT = frozenset({str, type(None)})
_DATE = frozenset({dt.date, dt.datetime, type(None)})
_NOTHING = frozenset({type(None)})
#: :data:`_TOTAL_LABEL` at the start of any line of many names joined by newlines (a name
#: with a newline of its own can only add a match, which sends its batch to the full checks).
_TOTAL_LABEL_LINE = re.compile("^" + _TOTAL_LABEL.pattern, re.IGNORECASE | re.MULTILINE)


def _all_of(column: Sequence[object], types: frozenset) -> bool:
    """Every value's exact type is in ``types`` (``bool`` is not ``int`` here)."""
    return set(map(type, column)) <= types


def _plain_texts(columns: list, column: int | None, rows: int) -> list | None:
    """A text column, stripped (blank -> ``None``), or ``None`` when it holds other cells."""
    if column is None:
        return [None] * rows
    values = columns[column]
    if not _all_of(values, _TEXT):
        return None
    texts = [value.strip() or None if value is not None else None for value in values]
    if not EXCEL_ERRORS.isdisjoint(texts):
        return None  # interpret() names the cell
    return texts


def _plain_counts(columns: list, column: int | None, rows: int) -> Sequence | None:
    """A population column: all counts in ``(0, MAX_COUNT]`` or all empty, else ``None``."""
    if column is None:
        return [None] * rows
    values = columns[column]
    if _all_of(values, _NOTHING):
        return values
    if _all_of(values, _INT) and min(values) > 0 and max(values) <= MAX_COUNT:
        return values
    return None


def _plain_positives(
    columns: list, column: int | None, rows: int, smallest: float
) -> Sequence | None:
    """A column of finite numbers above 0 and at least ``smallest``, as floats, or all
    empty; else ``None``."""
    if column is None:
        return [None] * rows
    values = columns[column]
    if _all_of(values, _NOTHING):
        return values
    if _all_of(values, _NUMBER):
        low, high = min(values), max(values)
        if low > 0 and low >= smallest and high < math.inf:
            return list(map(float, values))
    return None


def _plain_dates(columns: list, column: int | None, rows: int) -> list | None:
    """A date column as dates (date-times lose a midnight time), or ``None``."""
    if column is None:
        return [None] * rows
    values = columns[column]
    if not _all_of(values, _DATE):
        return None
    return [value.date() if type(value) is dt.datetime else value for value in values]


def _missing_message(labels: list[str]) -> str:
    if len(labels) == 1:
        return f"{labels[0]} is missing"
    return f"{', '.join(labels[:-1])} and {labels[-1]} are missing"


#: Rows read together by :meth:`_RowInterpreter.plain_rounds` (a batch with one unusual row
#: is read row by row).
_BATCH_ROWS = 256
#: Data rows looked at to decide what a ``Model`` column holds (versions or names).
ROLE_SAMPLE_ROWS = 200


def _read_sheet(
    sheet: str,
    rows: Iterator[RawRow],
    epoch: dt.datetime,
    rounds: list[Round],
    refused: list[Refusal],
    choices: Sequence[ColumnChoice] = (),
    readings: list[SheetColumns] | None = None,
    used_choices: list[ColumnChoice] | None = None,
    hidden_rows: set[int] | None = None,
    merged_ranges: Sequence[str] = (),
) -> SkippedSheet | None:
    top: list[RawRow] = []
    header: _Header | str | None = None
    for raw in rows:
        if raw[0] > HEADER_SEARCH_ROWS:
            # Put the row back in front of the stream: it is data, not header material.
            rows = _chain_one(raw, rows)
            break
        top.append(raw)
    header = _find_header(top, sheet, choices)
    if header is None:
        guess = _header_guess(sheet, top, choices)
        reason = (
            f"no header row with TP, FP, FN and TN (or their aliases) in the first "
            f"{HEADER_SEARCH_ROWS} rows"
        )
        if guess is not None:
            shown = ", ".join(repr(text) for _, text in guess.headers[:10])
            more = ", ..." if len(guess.headers) > 10 else ""
            reason += (
                f"; row {guess.header_row} reads {shown}{more}{counts_in_words(guess)}: say "
                f"which of its columns hold the four counts: "
                f"{choice_advice(*((field, None) for field in COUNT_FIELDS))}"
            )
        return SkippedSheet(sheet=sheet, reason=reason, header_guess=guess)
    if isinstance(header, str):
        return SkippedSheet(
            sheet=sheet, reason=header, header_guess=_header_guess(sheet, top, choices)
        )
    first = [raw for raw in top if raw[0] > header.row]
    if header.ambiguous:
        # What a "Model" column holds is decided by its values: read ahead a little.
        for raw in rows:
            first.append(raw)
            if len(first) >= ROLE_SAMPLE_ROWS:
                break
    reading, sheet_classifier = _settle_roles(sheet, header, first)
    if readings is not None:
        readings.append(reading)
    if used_choices is not None:
        used_choices.extend(header.used_choices)
    interpreter = _RowInterpreter(
        sheet,
        header,
        epoch,
        sheet_classifier,
        date_guessed=any(item.role == "date" for item in reading.guessed),
    )
    interpret = interpreter.interpret
    first_round, first_refusal = len(rounds), len(refused)
    for raw in first:
        _collect(interpret(raw), rounds, refused)
    plain_rounds = interpreter.plain_rounds
    while batch := list(itertools.islice(rows, _BATCH_ROWS)):
        # Rows with no value and no formula (a million formatted empty rows below the
        # table) hold nothing: dropped before the checks, which would look at each cell.
        batch = [raw for raw in batch if raw[1] or raw[2]]
        if not batch:
            continue
        plain = plain_rounds(batch)
        if plain is not None:
            rounds.extend(plain)
            continue
        for raw in batch:
            _collect(interpret(raw), rounds, refused)
    _refuse_sums_of_the_rounds_above(rounds, first_round, refused, first_refusal)
    if merged_ranges:
        _say_merged_cells(refused, first_refusal, merged_ranges, reading)
    if hidden_rows and readings is not None:
        # Read as the rounds they are (a hidden row is still data, as in Excel's sums),
        # and said: a lead hides "draft - do not use" rows (trial 21, fuzz 21).
        hidden = tuple(item.row for item in rounds[first_round:] if item.row in hidden_rows)
        if hidden:
            readings[-1] = replace(readings[-1], hidden_rounds=hidden)
    return None


def _refuse_sums_of_the_rounds_above(
    rounds: list[Round], first_round: int, refused: list[Refusal], first_refusal: int
) -> None:
    """Refuse, as a totals row, a row of the sheet whose TP, FP, FN and TN are each the sum
    of those of the two or more rounds above it (since the last such row). Labelled
    "YTD", "Overall" or nothing, and typed as numbers, such a row was read as the newest
    round, and compared with the last real one as a fall from 94 % to 57 % (fuzz 21)."""
    sheet_rounds = rounds[first_round:]
    if len(sheet_rounds) < 3:
        return
    # Checked at once first: a sheet without such a row (nearly every one) costs no
    # per-round Python (100,000 rounds took 0.2 s of 2.4 s that way).
    counts_array = np.array(
        [(item.tp, item.fp, item.fn, item.tn) for item in sheet_rounds], dtype=np.int64
    )
    before = np.cumsum(counts_array, axis=0) - counts_array
    if not np.any(np.all(counts_array[2:] == before[2:], axis=1)):
        return
    sums = [0, 0, 0, 0]
    above = 0
    kept: list[Round] = []
    totals: list[Refusal] = []
    for item in sheet_rounds:
        counts = [item.tp, item.fp, item.fn, item.tn]
        if above >= 2 and counts == sums:
            totals.append(
                Refusal(
                    sheet=item.sheet,
                    row=item.row,
                    reason=f"{TOTALS_REASON} ({SUMS_REASON} {above:,} rounds above it), not "
                    "a round",
                    is_totals=True,
                    round=item.round,
                )
            )
            sums, above = [0, 0, 0, 0], 0
            continue
        kept.append(item)
        sums = [total + count for total, count in zip(sums, counts, strict=True)]
        above += 1
    if totals:
        rounds[first_round:] = kept
        refused[first_refusal:] = sorted(
            [*refused[first_refusal:], *totals], key=operator.attrgetter("row")
        )


def _say_merged_cells(
    refused: list[Refusal], first_refusal: int, merged_ranges: Sequence[str], reading
) -> None:
    """Say of a refused row that a cell of a column read is part of a merged cell whose
    value sits in another cell: "only one population count is given" did not say why,
    where the lead saw one merged population over two rounds (trial 21, fuzz 21)."""
    from openpyxl.utils.cell import column_index_from_string, range_boundaries

    read = {column_index_from_string(item.column) for item in reading.roles if item.column}
    refused_rows = {refusal.row for refusal in refused[first_refusal:] if not refusal.is_totals}
    # The merges over each refused row, found by row: checking every refusal against every
    # merge took 13 s for 10,000 of each (review 21).
    by_row: dict[int, list[tuple[int, int, list[int], str]]] = {}
    for text in merged_ranges:
        try:
            left, top, right, bottom = range_boundaries(text)
        except (TypeError, ValueError):
            continue
        columns = sorted(read & set(range(left, right + 1)))
        if not columns or (bottom == top and right == left):
            continue
        if bottom - top < len(refused_rows):
            over = refused_rows.intersection(range(top, bottom + 1))
        else:  # a tall merge: fewer refused rows than its rows
            over = {row for row in refused_rows if top <= row <= bottom}
        for row in over:
            by_row.setdefault(row, []).append((left, top, columns, text))
    for at in range(first_refusal, len(refused)):
        refusal = refused[at]
        if refusal.is_totals:
            continue
        row = refusal.row
        for left, top, columns, text in by_row.get(row, ()):
            emptied = [c for c in columns if (row, c) != (top, left)]
            if emptied:
                cell = f"{_column_letter(emptied[0] - 1)}{row}"
                first = f"{_column_letter(left - 1)}{top}"
                refused[at] = replace(
                    refusal,
                    reason=f"{refusal.reason}; cell {cell} is part of the merged cell {text}, "
                    f"whose value Excel keeps in its first cell, {first}, only: unmerge it and "
                    "give each cell its own value",
                )
                break


def _collect(result, rounds, refused) -> None:
    if isinstance(result, Round):
        rounds.append(result)
    elif result is not None:
        refused.append(result)


def _chain_one(first: RawRow, rest: Iterator[RawRow]) -> Iterator[RawRow]:
    yield first
    yield from rest


def read_rounds(
    path: str | os.PathLike[str],
    *,
    engine: Literal["fast", "openpyxl"] = "fast",
    columns: Sequence[ColumnChoice | str] = (),
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
    columns : sequence of ColumnChoice or str
        The user's word on what columns hold (``"classifier=Model"``, see
        :class:`ColumnChoice`); it overrides the header names and the reader's guesses.

    Returns
    -------
    RoundsBook
        The usable rounds, the refused rows (sheet, row, reason), the sheets skipped for
        want of a header, and what every read sheet's columns were read as.

    Raises
    ------
    WorkbookError
        The file is missing, a folder, empty, not an ``.xlsx``, damaged, encrypted, or would
        decompress to far more than its rows justify.
    InputError
        A column choice that does not parse (an unknown role).
    """
    choices = tuple(
        choice if isinstance(choice, ColumnChoice) else ColumnChoice.parse(choice)
        for choice in columns
    )
    rounds: list[Round] = []
    refused: list[Refusal] = []
    skipped: list[SkippedSheet] = []
    readings: list[SheetColumns] = []
    used: list[ColumnChoice] = []
    with open_sheets(path, engine=engine) as sheets:
        for sheet in sheets:
            outcome = _read_sheet(
                sheet.title,
                sheet.rows,
                sheet.epoch,
                rounds,
                refused,
                choices,
                readings,
                used,
                hidden_rows=sheet.hidden_rows,
                merged_ranges=sheet.merged_ranges,
            )
            if outcome is not None:
                skipped.append(outcome)
    rounds, copies = _without_copies(rounds)
    return RoundsBook(
        rounds=tuple(rounds),
        refused=(*refused, *copies),
        skipped_sheets=tuple(skipped),
        columns=tuple(readings),
        unused_choices=tuple(choice for choice in choices if choice not in used),
    )


def _without_copies(rounds: list[Round]) -> tuple[list[Round], list[Refusal]]:
    """The rounds with every later copy of a named round left out (the same name,
    classifier, date, population and counts: a row pasted twice, a sheet copied), and a
    refusal naming each copy. Counted twice, a round was compared with itself ("R3 against
    the previous round, R3: +0.00 pp") and weighed double in the history (fuzz 17)."""
    first: dict[tuple, Round] = {}
    kept: list[Round] = []
    copies: list[Refusal] = []
    for item in rounds:
        key = (
            classifier_key(item.classifier), (item.round or "").casefold(), item.date,
            item.population_pos, item.population_neg, item.k, item.tp, item.fp, item.fn,
            item.tn,
        )  # fmt: skip
        original = first.setdefault(key, item)
        if original is item or not item.round:
            kept.append(item)
            continue
        where = (
            f"row {original.row}"
            if original.sheet == item.sheet
            else (f"sheet {original.sheet!r} row {original.row}")
        )
        copies.append(
            Refusal(
                sheet=item.sheet,
                row=item.row,
                reason=f"the same round as {where} ({item.round}: same date and counts), a "
                "copy that would count it twice",
                round=item.round,
            )
        )
    return kept, copies
