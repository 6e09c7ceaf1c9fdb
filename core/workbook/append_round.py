"""Add one labeled round to the lead's own rounds workbook, touching nothing else.

The workbook is the lead's: its formatting, formulas, charts, other sheets and even the
way its zip is laid out must survive. So the round is not written through openpyxl (which
would rewrite every part it understands and drop the rest); instead:

1. the workbook is refused while another program has it open (Excel's owner file
   ``~$NAME.xlsx``, LibreOffice's ``.~lock.NAME.xlsx#``), and fingerprinted;
2. :func:`core.workbook.rounds.read_rounds` finds the sheet that holds the rounds and
   which column holds what (its header logic, aliases included);
3. the new workbook is the old one member by member, in the same order with the same
   names, dates and compression, each member's content byte for byte, except that one
   sheet part gets one more ``<row>`` (inline strings and numbers, each cell styled like
   the cell above it) just before ``</sheetData>`` and a ``<dimension>`` that covers it;
4. the result is read back with :func:`read_rounds` and must show the new round, then it
   replaces the old file atomically, and only if the file on disk is still the one that
   was read (:func:`core.workbook.safe_io.atomic_write` with the fingerprint).
"""

from __future__ import annotations

import copy
import datetime as dt
import os
import posixpath
import re
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from xml.etree import ElementTree
from xml.sax.saxutils import escape

from core.errors import InputError, named
from core.workbook.layout import CELL_TEXT_LIMIT, ILLEGAL_XML, keep_text_as_text
from core.workbook.rounds import (
    HEADER_SEARCH_ROWS,
    SUMS_REASON,
    SheetColumns,
    classifier_key,
    counts_in_words,
    draw_in_notes,
    read_rounds,
    same_draw_notes,
)
from core.workbook.safe_io import (
    FileFingerprint,
    SaveError,
    atomic_write,
    fingerprint,
    is_labeling_workbook,
    is_session,
    lock_file_of,
    sheet_names,
)
from core.workbook.xlsx_reader import WorkbookError, date_epoch, guard_workbook

__all__ = [
    "ROUNDS_HEADER",
    "AlreadyRecorded",
    "AppendedRound",
    "NewRound",
    "NoSheetFor",
    "NotAdded",
    "append_round",
    "append_rounds",
    "lock_file_of",
    "start_rounds_workbook",
    "text_problem",
]

#: The header of a rounds workbook PR Planner starts (the bundled example's own).
ROUNDS_HEADER = (
    "Round", "Date", "Classifier", "Predicted positive (population)",
    "Predicted negative (population)", "s", "TP", "FP", "FN", "TN", "Notes",
)  # fmt: skip

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PACKAGE_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_WORKBOOK_PART = "xl/workbook.xml"
_WORKBOOK_RELS = "xl/_rels/workbook.xml.rels"
#: What a round's or classifier's name may not hold: line breaks and tabs (a row would
#: show a name on several lines) and text-direction controls (a name shown reversed).
_NOT_ONE_LINE = re.compile("[\t\n\r\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: Day 0 of Excel's default (1900) date system; a workbook may use 1904 (date_epoch).
_EXCEL_EPOCH = dt.date(1899, 12, 30)


def text_problem(text: str, *, notes: bool = False) -> tuple[str, str] | None:
    """Why ``text`` cannot be a round's or classifier's name in a workbook (``notes``: its
    notes, which may be empty and on several lines), and what to do: ``(problem,
    remedy)``, or ``None`` when it can."""
    if not notes and not text.strip():
        return "is blank", "give it a name or leave it out"
    if not notes and _NOT_ONE_LINE.search(text):
        return (
            "holds a line break, a tab or an invisible character that reverses the text",
            "a name is one line of plain text: type it again without it",
        )
    if ILLEGAL_XML.search(text):
        return (
            "holds a character a workbook cannot store (a control character, U+FFFE or "
            "U+FFFF, or a byte that is not UTF-8 text)",
            "type it again without it",
        )
    if len(text) > CELL_TEXT_LIMIT:
        # Excel's limit for one cell: a longer name would be cut, or the workbook repaired.
        return (
            f"is {len(text):,} characters long; a spreadsheet cell holds at most "
            f"{CELL_TEXT_LIMIT:,}",
            "shorten it",
        )
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class NewRound:
    """The values of the round to add (``None``: leave that cell empty).

    Attributes
    ----------
    round : str or None
        Its name.
    date : datetime.date or None
    classifier : str or None
        Written only where the sheet has a classifier column; ``None`` for
        :func:`append_round` means the sheet's only classifier (refused when it has several).
    population_pos, population_neg : int
        ``N1``, ``N0``; ``k`` and ``s`` are derived for sheets with those columns.
    tp, fp, fn, tn : int
    notes : str or None
    """

    round: str | None = None
    date: dt.date | None = None
    classifier: str | None = None
    population_pos: int
    population_neg: int
    tp: int
    fp: int
    fn: int
    tn: int
    notes: str | None = None

    def __post_init__(self) -> None:
        for what, text in (
            (f"name ({named('round')})", self.round),
            (f"classifier ({named('classifier')})", self.classifier),
            ("notes", self.notes),
        ):
            found = text_problem(text, notes=what == "notes") if text is not None else None
            if found is not None:
                problem, remedy = found
                raise InputError(f"the round's {what} {problem}; {remedy}. Nothing was written")

    @classmethod
    def of_round(cls, item) -> NewRound:
        """The row of a session's round (a :class:`core.workbook.rounds.Round` with both
        population counts), as ``labels --append-to`` would write it."""
        if item.population_pos is None or item.population_neg is None:
            raise InputError(
                f"round {item.name!r} has no population counts to write (how many items "
                "the classifier flagged and did not flag in all), which a rounds workbook "
                "needs"
            )
        return cls(
            round=item.round,
            date=item.date,
            classifier=item.classifier,
            population_pos=item.population_pos,
            population_neg=item.population_neg,
            tp=item.tp,
            fp=item.fp,
            fn=item.fn,
            tn=item.tn,
            notes=item.notes,
        )

    @property
    def k(self) -> float:
        return self.population_pos / self.population_neg

    @property
    def s(self) -> float | None:
        """Over-sampling ratio ``(n1/n0)/k`` of the labeled counts (Eq 1)."""
        n_pos, n_neg = self.tp + self.fp, self.fn + self.tn
        if n_pos == 0 or n_neg == 0:
            return None
        return (n_pos / n_neg) / self.k


#: The header a rounds sheet needs to keep a round's name and notes.
NOT_KEPT_HEADERS = {"name": "Round", "notes": "Notes"}


def not_kept_words(sheet: str, not_kept: Sequence[str]) -> str:
    """Why a round's name or notes are not in the workbook (:attr:`AppendedRound.not_kept`),
    for the lead; "" when both are (trial 21: "R07 added" to a sheet with neither column,
    and read back as "Invoice mails row 10")."""
    if not not_kept:
        return ""
    what = " and ".join(
        {"name": "its name", "notes": "its notes (the seed and item list)"}[item]
        for item in not_kept
    )
    headers = " and ".join(repr(NOT_KEPT_HEADERS[item]) for item in not_kept)
    them = "them" if len(not_kept) > 1 or not_kept[0] == "notes" else "it"
    columns = "columns" if len(not_kept) > 1 else "a column"
    if len(not_kept) > 1:
        known = (
            ", and a later reading of the same round is known only by its date and "
            "population counts"
        )
    elif not_kept[0] == "name":
        known = " (it reads back named by its sheet and row)"
    else:
        known = ""  # a later reading of the same round is known by its name
    return (
        f"sheet {sheet!r} has no column for {what}, so the workbook does not keep "
        f"{them}{known}; to keep {them}, add {columns} headed {headers} to the sheet, or say "
        f"which column holds {them} with {named('column')}"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class AppendedRound:
    """Where the round went: the workbook, its sheet and the row's number, the classifier
    it was filed under (``None``: none written), ``created`` when the workbook was started
    for it (:func:`start_rounds_workbook`) and ``updated`` when a row of the same draw got
    the new counts instead of a new row."""

    path: Path
    sheet: str
    row: int
    classifier: str | None = None
    created: bool = False
    updated: bool = False
    #: What of the round the sheet has no column for (``"name"``, ``"notes"``).
    not_kept: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "file": str(self.path),
            "sheet": self.sheet,
            "row": self.row,
            "classifier": self.classifier,
            "created": self.created,
            "updated": self.updated,
            "not_kept": list(self.not_kept),
        }


def _refuse_sheet_classifier_over_a_column(path: Path, reading: SheetColumns) -> None:
    """``--column classifier=`` (the classifier is the sheet's name) on a sheet that has a
    classifier column: the new row would leave that column empty, be filed under no one,
    and slip past the check for a round added before (fuzz 16)."""
    from core.workbook.rounds import field_of_header

    by_sheet = any(
        role.role == "classifier" and not role.column and role.chosen for role in reading.roles
    )
    if not by_sheet:
        return
    for letter, text in reading.headers:
        if field_of_header(text) == "classifier":
            raise InputError(
                f"{path.name}, sheet {reading.sheet!r}: {named('column')} classifier= names "
                f"the classifier after the sheet, but the sheet has a classifier column "
                f"({text!r}, column {letter}), which the new row would leave empty; leave "
                f"{named('column')} classifier= out. Nothing was written"
            )


def _choose_sheet(path: Path, readings: Sequence[SheetColumns], rounds, sheet, classifier):
    names = [reading.sheet for reading in readings]
    if sheet is not None:
        for reading in readings:
            if reading.sheet == sheet:
                return reading
        raise InputError(
            f"{path.name} has no sheet {sheet!r} with rounds (sheets with rounds: "
            f"{', '.join(map(repr, names)) or 'none'})"
        )
    if not readings:
        raise InputError(
            f"{path.name} has no sheet with a header row naming TP, FP, FN and TN (and k or "
            f"both populations) in its first {HEADER_SEARCH_ROWS} rows; add such a header (or "
            "move it up), then append"
        )
    if len(readings) == 1:
        return readings[0]
    if classifier is not None:
        matching = {item.sheet for item in rounds if item.classifier == classifier}
        if len(matching) == 1:
            (wanted,) = matching
            return next(reading for reading in readings if reading.sheet == wanted)
    raise InputError(
        f"{path.name} has rounds on several sheets ({', '.join(map(repr, names))}); choose "
        f"one with {named('sheet')} NAME"
    )


def _as_spelled(rounds, classifier: str | None) -> str | None:
    """``classifier`` as the workbook's last round of it in sheet order spells it ("Travel"
    for "travel"): a spreadsheet's autocorrect capitalises what is typed, and one classifier
    under two spellings would be two histories."""
    if classifier is None:
        return None
    key = classifier_key(classifier)
    spelled = [
        item.classifier
        for item in rounds
        if item.classifier and classifier_key(item.classifier) == key
    ]
    return spelled[-1] if spelled else classifier


def _only_classifier(path: Path, sheet: str, rounds, others: Sequence[str] = ()) -> str | None:
    """The classifier of the sheet's rounds when they are all of one (one sheet per
    classifier is the usual layout); refused, naming them, when there are several, or when
    the one is among ``others`` (further classifiers of the same sample, whose rounds this
    one is not): a round filed under the wrong one would join that classifier's history
    and trends."""
    names = sorted({item.classifier for item in rounds if item.sheet == sheet and item.classifier})
    if others:
        # The further classifiers of this very sample are not candidates: the main one's
        # rounds are those without a classifier (as labels writes them) or another name.
        names = [name for name in names if name not in others]
    if len(names) > 1:
        shown = ", ".join(map(repr, names[:6])) + (", ..." if len(names) > 6 else "")
        raise InputError(
            f"which classifier is this round of? {path.name}, sheet {sheet!r} holds rounds of "
            f"{shown}; give {named('classifier')} NAME (a new name starts that classifier's "
            "history). Nothing was written"
        )
    return names[0] if names else None


class NotAdded(InputError):
    """A round of the draw left out of the write (the others are added); says why."""


class AlreadyRecorded(NotAdded):
    """The rounds workbook holds this round with these very counts: nothing to add."""


class NoSheetFor(NotAdded):
    """A further classifier's round has no place in the workbook: its only sheet keeps
    another classifier's rounds and has no classifier column to tell them apart."""


def _refuse_a_sheet_of_another_classifier(
    path: Path, reading: SheetColumns, rounds, classifier: str
) -> None:
    """A further classifier's round written on a sheet without a classifier column would
    read back as that sheet's classifier's round: another classifier's counts in its
    history and trends (session 17)."""
    if any(role.role == "classifier" and role.column for role in reading.roles):
        return
    on_sheet = {
        classifier_key(item.classifier or "") for item in rounds if item.sheet == reading.sheet
    }
    if on_sheet <= {classifier_key(classifier)}:
        return
    raise NoSheetFor(
        f"the round of classifier {classifier!r} was not added: {path.name}, sheet "
        f"{reading.sheet!r} keeps one classifier's rounds (it has no classifier column). To "
        f"keep the history of {classifier!r} in this workbook too, add a column headed "
        "Classifier to that sheet, then add the round again"
    )


def _refuse_a_second_copy(
    path: Path,
    sheet: str,
    rounds,
    new_round: NewRound,
    update: bool = False,
    others: Sequence[str] = (),
    one_classifier_sheet: bool = False,
    anonymous_sheet: bool = False,
) -> int | None:
    """A round of the same draw (seed and item list, from the notes ``labels`` writes) or
    of the same name (and classifier) on the sheet is most likely this one, added before:
    a second copy would count twice in the history and its trends. With ``update``, the
    row of the same draw holding other counts is returned, to be updated in place.
    ``one_classifier_sheet``: ``sheet`` has no classifier column, so every round on it is
    of the classifier the new row will read back as, whatever name it was given.
    ``anonymous_sheet``: ``sheet`` has neither a round nor a notes column, so a round of
    the same date and population counts is taken for this one (trial 21: a top-up read
    again was added as a second July row)."""
    draw = draw_in_notes(new_round.notes)

    def of_this_classifier(item) -> bool:
        if one_classifier_sheet and item.sheet == sheet:
            return True
        if new_round.classifier is not None:
            return item.classifier == new_round.classifier
        # No classifier: the main one's rows, not those of the sample's further classifiers.
        return item.classifier is None or item.classifier not in others

    counts = (new_round.tp, new_round.fp, new_round.fn, new_round.tn)
    for item in rounds:
        if draw is None or not same_draw_notes(new_round.notes, item.notes):
            continue
        there = (item.tp, item.fp, item.fn, item.tn)
        if not of_this_classifier(item):
            if there == counts and item.sheet != sheet:
                # The same labels filed on another sheet (under its classifier): a second
                # copy would count this round twice.
                raise InputError(
                    f"{path.name}, sheet {item.sheet!r} row {item.row} already holds this "
                    f"round (seed {draw[0]}) with the same counts, under classifier "
                    f"{item.classifier!r}; nothing was written. If it belongs on sheet "
                    f"{sheet!r}, move that row there"
                )
            continue
        shown = "TP {:,}, FP {:,}, FN {:,}, TN {:,}"
        redated = _redated(item, new_round)
        # The name the row has, when the lead gave another (--round W2b on W2's draw: the
        # new name was ignored without a word; trial 19).
        held = "this round" + (
            f" as {item.round!r}"
            if item.round and new_round.round and item.round != new_round.round
            else ""
        )
        if counts == there and redated and update and item.sheet == sheet:
            return item.row
        if counts == there and redated:
            was, now = str(item.date), str(new_round.date)
            raise AlreadyRecorded(
                f"{path.name}, sheet {item.sheet!r} row {item.row} already holds {held} "
                f"(seed {draw[0]}) with the same counts, dated {was}, not {now}; nothing was "
                f"written. To date it {now}, run this again with {named('update')}"
            )
        if counts == there:
            raise AlreadyRecorded(
                f"{path.name}, sheet {item.sheet!r} row {item.row} already holds {held} "
                f"(seed {draw[0]}) with the same counts; nothing was written"
            )
        if update and item.sheet == sheet:
            return item.row
        fewer = sum(counts) < sum(there)
        # Fewer labels than recorded is most often a labeler's copy left out, not a
        # correction: say so before offering to replace the row.
        caution = (
            f" The labels now read are fewer ({sum(counts):,} against {sum(there):,}): if a "
            "labeler's copy or a top-up workbook is missing, give it too and read again."
            if fewer
            else ""
        )
        raise InputError(
            f"{path.name}, sheet {item.sheet!r} row {item.row} already holds {held} (seed "
            f"{draw[0]}, items from {draw[1]}) with {shown.format(*there)}; "
            f"the labels now give {shown.format(*counts)}. Nothing was written.{caution} To "
            f"record the new counts in that row, run this again with {named('update')}"
        )
    if anonymous_sheet:
        return _same_date_and_populations(
            path, sheet, rounds, new_round, update, one_classifier_sheet
        )
    if new_round.round is None:
        return None
    for item in rounds:
        if item.round != new_round.round or not of_this_classifier(item):
            continue
        same_counts = (item.tp, item.fp, item.fn, item.tn) == counts
        # A sheet without notes: the round is known by its name.
        if item.sheet == sheet and same_counts and not _redated(item, new_round):
            raise AlreadyRecorded(
                f"{path.name}, sheet {item.sheet!r} row {item.row} already holds round "
                f"{new_round.round!r} with the same counts; nothing was written"
            )
        if update and item.sheet == sheet:
            return item.row
        if item.sheet == sheet or same_counts:  # another sheet may have no notes to tell
            raise InputError(
                f"{path.name}, sheet {item.sheet!r} already has a round named {new_round.round!r} "
                f"(row {item.row}); it was probably added before, and a second copy would "
                f"count twice. Nothing was written; to add it anyway, give it another name "
                f"with {named('round')} NAME"
                + (
                    f", or to put these counts and date in that row, run this again with "
                    f"{named('update')}"
                    if item.sheet == sheet
                    else ""
                )
            )
    return None


def _redated(item, new_round: NewRound) -> bool:
    """The row has a date and the new round another one (a date given to labels)."""
    return item.date is not None and new_round.date is not None and item.date != new_round.date


#: The roles whose cells an update rewrites: the counts, the over-sampling ratio they give
#: and the notes (the round's name, classifier and population stay as the lead keeps them;
#: the date too, unless another one was given).
_UPDATED_ROLES = ("tp", "fp", "fn", "tn", "s", "notes")


def _updated_sheet_xml(
    xml: bytes,
    reading: SheetColumns,
    new_round: NewRound,
    row_number: int,
    epoch: dt.date | None = None,
):
    """``xml`` with the counts and notes of row ``row_number`` replaced (each cell keeps
    its style; a missing cell is added in column order), and its date with ``epoch`` (the
    workbook's date system) given: a serial where the cell holds a number, else ISO text."""
    _last, prefix = _row_bounds(xml)
    styles = _styles_of_row(xml, row_number)
    roles = _UPDATED_ROLES + (("date",) if epoch is not None else ())
    date_letter = next((item.column for item in reading.roles if item.role == "date"), "")
    date_style = styles.get(_letters_to_index(date_letter)) if date_letter else None
    date_as_serial = bool(date_style and date_style[1] in (b"", b"n"))
    values = _values_by_column(reading, new_round, epoch if date_as_serial else None)
    cells = {
        index: (letter, value)
        for index, (letter, value) in values.items()
        if any(item.role in roles and item.column == letter for item in reading.roles)
    }
    row_match = next(
        match
        for match in _ROW.finditer(xml)
        if (number := _ROW_NUMBER.search(match.group("attributes")))
        and int(number.group(1)) == row_number
    )
    if row_match.group("empty"):
        raise WorkbookError(f"row {row_number} of the rounds sheet is empty; nothing to update")
    end = xml.find(b"</" + prefix + b"row>", row_match.end())
    body = xml[row_match.end() : end]
    kept = []
    for cell in re.finditer(
        rb"<(?:[A-Za-z_][\w.-]*:)?c\b[^>]*?(?:/>|>.*?</(?:[A-Za-z_][\w.-]*:)?c>)", body, re.S
    ):
        reference = dict(_ATTRIBUTE.findall(cell.group(0).split(b">", 1)[0])).get(b"r", b"")
        letters = re.match(rb"[A-Z]+", reference)
        index = _letters_to_index(letters.group(0).decode()) if letters else -1
        kept.append((index, cell.group(0)))
    replaced = {
        index: _cell_xml(prefix, f"{letter}{row_number}", value, styles.get(index, (b"", b""))[0])
        for index, (letter, value) in cells.items()
    }
    merged = dict(kept)
    merged.update(replaced)
    new_body = b"".join(cell for _index, cell in sorted(merged.items()))
    return xml[: row_match.end()] + new_body + xml[end:]


def _sheet_part(archive: zipfile.ZipFile, title: str) -> str:
    """The zip member of the worksheet titled ``title``."""
    workbook = ElementTree.fromstring(archive.read(_WORKBOOK_PART))
    relation = None
    for element in workbook.iter(f"{_MAIN}sheet"):
        if element.get("name") == title:
            relation = element.get(f"{_REL}id")
    relations = ElementTree.fromstring(archive.read(_WORKBOOK_RELS))
    for element in relations.iter(f"{_PACKAGE_REL}Relationship"):
        if element.get("Id") == relation:
            target = element.get("Target") or ""
            if target.startswith("/"):
                return target.lstrip("/")
            return posixpath.normpath(posixpath.join("xl", target))
    raise WorkbookError(f"the sheet {title!r} has no part in the workbook (damaged file)")


def _letters_to_index(letters: str) -> int:
    index = 0
    for letter in letters:
        index = index * 26 + ord(letter) - 64
    return index


_ROW = re.compile(rb"<(?P<prefix>[A-Za-z_][\w.-]*:)?row\b(?P<attributes>[^>]*?)(?P<empty>/?)>")
_ROW_NUMBER = re.compile(rb'\br="(\d+)"')
_SHEET_DATA_END = re.compile(rb"</(?:[A-Za-z_][\w.-]*:)?sheetData>")
_SHEET_DATA_EMPTY = re.compile(rb"<((?:[A-Za-z_][\w.-]*:)?sheetData)\s*/>")
_DIMENSION = re.compile(rb'(<(?:[A-Za-z_][\w.-]*:)?dimension\b[^>]*\bref=")([^"]*)(")')
_CELL = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?c\b([^>]*?)/?>")
_ATTRIBUTE = re.compile(rb'\b(r|s|t)="([^"]*)"')


def _row_bounds(xml: bytes) -> tuple[int, bytes]:
    """The last row's number and the prefix of the row elements (``b"x:"`` or ``b""``)."""
    last = 0
    prefix = b""
    for match in _ROW.finditer(xml):
        number = _ROW_NUMBER.search(match.group("attributes"))
        if number is None:
            raise WorkbookError(
                "the rounds sheet was written by a program PR Planner cannot add a row "
                "after (a row without a number it can read); open the workbook in Excel or "
                "LibreOffice, save it, and add the round again. Nothing was written"
            )
        last = max(last, int(number.group(1)))
        prefix = match.group("prefix") or b""
    return last, prefix


def _styles_of_row(xml: bytes, row_number: int) -> dict[int, tuple[bytes, bytes]]:
    """``column index -> (s, t)`` of the cells of row ``row_number``."""
    found: dict[int, tuple[bytes, bytes]] = {}
    for match in _ROW.finditer(xml):
        number = _ROW_NUMBER.search(match.group("attributes"))
        if number is None or int(number.group(1)) != row_number or match.group("empty"):
            continue
        end = xml.find(b"row>", match.end())
        for cell in _CELL.finditer(xml, match.end(), end if end >= 0 else len(xml)):
            attributes = dict(_ATTRIBUTE.findall(cell.group(1)))
            reference = attributes.get(b"r", b"")
            letters = re.match(rb"[A-Z]+", reference)
            if letters:
                found[_letters_to_index(letters.group(0).decode())] = (
                    attributes.get(b"s", b""),
                    attributes.get(b"t", b""),
                )
        break
    return found


def _cell_xml(prefix: bytes, reference: str, value: object, style: bytes) -> bytes:
    styled = b' s="' + style + b'"' if style else b""
    name = prefix + b"c"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        text = repr(float(value)) if isinstance(value, float) else str(value)
        return b"<%s r=\"%s\"%s><%sv>%s</%sv></%s>" % (
            name, reference.encode(), styled, prefix, text.encode(), prefix, name,
        )  # fmt: skip
    text = str(value)
    space = b' xml:space="preserve"' if text != text.strip() else b""
    return b'<%s r="%s"%s t="inlineStr"><%sis><%st%s>%s</%st></%sis></%s>' % (
        name, reference.encode(), styled, prefix, prefix, space,
        escape(text).encode("utf-8"), prefix, prefix, name,
    )  # fmt: skip


def _values_by_column(reading: SheetColumns, new_round: NewRound, epoch: dt.date | None):
    """The new row's values by column; the date as a serial counted from ``epoch`` (the
    workbook's date system), or as ISO text when ``epoch`` is ``None``."""
    letters = {item.role: item.column for item in reading.roles if item.column}
    values: dict[str, object] = {
        "round": new_round.round,
        "date": None,
        "classifier": new_round.classifier,
        "population_pos": new_round.population_pos,
        "population_neg": new_round.population_neg,
        "k": new_round.k,
        # Descriptive (k and the counts are what is read back): as a lead types it, 1.694.
        "s": None if new_round.s is None else round(new_round.s, 3),
        "tp": new_round.tp,
        "fp": new_round.fp,
        "fn": new_round.fn,
        "tn": new_round.tn,
        "notes": new_round.notes,
    }
    if new_round.date is not None:
        values["date"] = (
            (new_round.date - epoch).days if epoch is not None else new_round.date.isoformat()
        )
    cells = {}
    for role, letter in letters.items():
        value = values.get(role)
        if value is not None:
            cells[_letters_to_index(letter)] = (letter, value)
    return dict(sorted(cells.items()))


_CELL_VALUE = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?(?:v|is|f)\b")


def _place_below(xml: bytes, last_round_row: int, last: int) -> tuple[int, int | None, int | None]:
    """Where the new row goes: ``(row number, start, end)`` of the XML it replaces or is
    inserted at (``None, None``: after the last row). Right below the last round when that
    row is free (a note further down stays where it is), else after everything."""
    target = last_round_row + 1
    if not last_round_row or target > last:
        return last + 1, None, None
    for match in _ROW.finditer(xml):
        number = int(_ROW_NUMBER.search(match.group("attributes")).group(1))  # type: ignore[union-attr]
        if number < target:
            continue
        if number > target:  # no element for the target row: insert before this one
            return target, match.start(), match.start()
        if match.group("empty"):
            return target, match.start(), match.end()
        close = re.compile(rb"</(?:[A-Za-z_][\w.-]*:)?row>").search(xml, match.end())
        if close is None:
            break
        if _CELL_VALUE.search(xml, match.end(), close.start()):
            break  # the row below the rounds holds something: add after everything
        return target, match.start(), close.end()  # a formatted empty row: take its place
    return last + 1, None, None


#: A cell range's first and last row in a formula (``SUM(E2:E12)``, ``$E$2:$E$12``).
_RANGE_ROWS = re.compile(
    rb"(?<![!\w$])\$?[A-Z]{1,3}\$?(\d+):\$?[A-Z]{1,3}\$?(\d+)", re.IGNORECASE
)  # not a range of another sheet (Sheet2!A1:B5)
_FORMULA = re.compile(rb"<(?:\w+:)?f\b[^>]*>(.*?)</(?:\w+:)?f>", re.DOTALL)


#: The range of a table or of a filter (``<table ... ref="A1:K12">``, ``<autoFilter
#: ref="A1:K12"/>``): its first column and row, last column and row.
_GROWING_RANGE = re.compile(
    rb'(<(?:[A-Za-z_][\w.-]*:)?(?:table|autoFilter)\b[^>]*?\bref=")'
    rb'([A-Z]{1,3})(\d+):([A-Z]{1,3})(\d+)(")'
)


def _grown_ranges(xml: bytes, row_number: int) -> bytes:
    """``xml`` with every table or filter range that ends on the row above ``row_number``
    (and starts above it) ending on ``row_number``."""

    def grow(found: re.Match[bytes]) -> bytes:
        first, last = int(found.group(3)), int(found.group(5))
        if last != row_number - 1 or first >= last:
            return found.group(0)
        return b"%s%s%d:%s%d%s" % (
            found.group(1),
            found.group(2),
            first,
            found.group(4),
            row_number,
            found.group(6),
        )

    return _GROWING_RANGE.sub(grow, xml)


def _table_parts(sheet_part: str, members: dict) -> list[str]:
    """The zip members of the tables (ListObjects) on the worksheet ``sheet_part``."""
    folder, name = posixpath.split(sheet_part)
    relations = members.get(posixpath.join(folder, "_rels", f"{name}.rels"))
    if relations is None:
        return []
    try:
        root = ElementTree.fromstring(relations)
    except ElementTree.ParseError:
        return []
    tables = []
    for element in root.iter(f"{_PACKAGE_REL}Relationship"):
        if (element.get("Type") or "").endswith("/table"):
            target = element.get("Target") or ""
            member = (
                target.lstrip("/")
                if target.startswith("/")
                else posixpath.normpath(posixpath.join(folder, target))
            )
            if member in members:
                tables.append(member)
    return tables


def _sums_end_above(xml: bytes, totals_row: int, row_number: int) -> bool:
    """Whether a formula of the totals row ``totals_row`` sums a range that ends above
    ``row_number``: a round written there (an empty row between the rounds and their
    totals) would be left out of the lead's sums."""
    found = re.search(
        rb'<(?:\w+:)?row\b[^>]*\br="%d"[^>]*>(.*?)</(?:\w+:)?row>' % totals_row, xml, re.DOTALL
    )
    if found is None:
        return False
    return any(
        int(first) < row_number and int(last) < row_number
        for formula in _FORMULA.findall(found.group(1))
        for first, last in _RANGE_ROWS.findall(formula)
    )


_MERGED_RANGE = re.compile(
    rb'<(?:[A-Za-z_][\w.-]*:)?mergeCell\b[^>]*?\bref="([A-Z]+)(\d+):([A-Z]+)(\d+)"'
)


def _merged_range_over(xml: bytes, row_number: int) -> str | None:
    """The merged range (``A3:K3``) that takes in row ``row_number``, if one does."""
    for first_column, first, last_column, last in _MERGED_RANGE.findall(xml):
        if int(first) <= row_number <= int(last):
            return f"{first_column.decode()}{int(first)}:{last_column.decode()}{int(last)}"
    return None


def _new_sheet_xml(
    xml: bytes,
    reading: SheetColumns,
    new_round: NewRound,
    last_round_row: int,
    last_table_row: int | None = None,
    epoch: dt.date = _EXCEL_EPOCH,
):
    last, prefix = _row_bounds(xml)
    row_number, start, stop = _place_below(xml, last_table_row or last_round_row, last)
    styles = _styles_of_row(xml, last_round_row) if last_round_row else {}
    date_letter = next((item.column for item in reading.roles if item.role == "date"), "")
    date_style = styles.get(_letters_to_index(date_letter)) if date_letter else None
    # A styled numeric cell above is a date serial with a date format: write one too.
    date_as_serial = bool(date_style and date_style[0] and date_style[1] in (b"", b"n"))
    cells = _values_by_column(reading, new_round, epoch if date_as_serial else None)
    body = b"".join(
        _cell_xml(prefix, f"{letter}{row_number}", value, styles.get(index, (b"", b""))[0])
        for index, (letter, value) in cells.items()
    )
    row = b'<%srow r="%d">%s</%srow>' % (prefix, row_number, body, prefix)
    end = _SHEET_DATA_END.search(xml)
    if start is not None and stop is not None:
        xml = xml[:start] + row + xml[stop:]
    elif end is not None:
        xml = xml[: end.start()] + row + xml[end.start() :]
    else:
        empty = _SHEET_DATA_EMPTY.search(xml)
        if empty is None:
            raise WorkbookError("the rounds sheet has no sheetData element (damaged file)")
        tag = empty.group(1)
        xml = xml[: empty.start()] + b"<%s>%s</%s>" % (tag, row, tag) + xml[empty.end() :]
    last_column = max(cells) if cells else 1
    xml = _DIMENSION.sub(
        lambda match: (
            match.group(1) + _widened(match.group(2), row_number, last_column) + match.group(3)
        ),
        xml,
        count=1,
    )
    return xml, row_number


def _widened(reference: bytes, row_number: int, last_column: int) -> bytes:
    """A ``<dimension ref>`` that also covers row ``row_number`` up to ``last_column``."""
    parts = reference.decode().split(":")
    match_first = re.fullmatch(r"([A-Z]+)(\d+)", parts[0])
    match_last = re.fullmatch(r"([A-Z]+)(\d+)", parts[-1])
    if not match_first or not match_last:
        return reference
    end_column = max(_letters_to_index(match_last.group(1)), last_column)
    end_row = max(int(match_last.group(2)), row_number)
    from openpyxl.utils import get_column_letter

    return f"{parts[0]}:{get_column_letter(end_column)}{end_row}".encode()


def append_round(
    path: str | os.PathLike[str],
    new_round: NewRound,
    *,
    sheet: str | None = None,
    sources: Sequence[str | os.PathLike[str]] = (),
    expected: FileFingerprint | None = None,
    update: bool = False,
    other_classifiers: Sequence[str] = (),
    columns: Sequence[str] = (),
) -> AppendedRound:
    """Add ``new_round`` as one new row at the end of the rounds sheet of ``path``; with
    ``update``, a row of the same draw gets the new counts and notes instead.

    Parameters
    ----------
    path : str or path-like
        The lead's rounds workbook (``.xlsx``), read by :func:`read_rounds`.
    new_round : NewRound
    sheet : str, optional
        The sheet to add to; needed when several sheets hold rounds and the classifier
        does not pick one.
    sources : sequence of path-like
        The files the round was read from (labeling workbooks); ``path`` may be none.
    expected : FileFingerprint, optional
        What ``path`` looked like when the caller read it; default: now.
    update : bool
        Rewrite the counts, ``s`` and notes of a row of the same draw instead of refusing.
    other_classifiers : sequence of str
        Further classifiers of the round's sample: a round without a classifier is not
        filed under one of them because the sheet holds only its rounds.
    columns : sequence of str
        The lead's choices of what the workbook's columns hold (``SHEET!ROLE=HEADER``, as
        :func:`read_rounds` takes them): a workbook in the lead's own words takes the
        round in the columns chosen (its headers were refused before; trial 14).

    Returns
    -------
    AppendedRound

    Raises
    ------
    SaveError
        The workbook is open in Excel or LibreOffice, changed since it was read, is an
        input, is read-only, or the save failed; the file is unchanged.
    InputError
        No sheet with rounds, or several and none chosen.
    WorkbookError
        The file cannot be read as a workbook.
    """
    (outcome,) = append_rounds(
        path,
        (new_round,),
        sheet=sheet,
        sources=sources,
        expected=expected,
        update=update,
        other_classifiers=other_classifiers,
        columns=columns,
    )
    if isinstance(outcome, NotAdded):
        raise outcome
    return outcome


def append_rounds(
    path: str | os.PathLike[str],
    new_rounds: Sequence[NewRound],
    *,
    sheet: str | None = None,
    sources: Sequence[str | os.PathLike[str]] = (),
    expected: FileFingerprint | None = None,
    update: bool = False,
    other_classifiers: Sequence[str] = (),
    columns: Sequence[str] = (),
) -> tuple[AppendedRound | NotAdded, ...]:
    """Add the rounds of one labeled sample (the main classifier's first, then each further
    classifier's) in one write: every one not recorded yet is added, or, when one is
    refused, none is and the workbook is unchanged.

    One round after another left the lead with half a draw in the workbook when a later
    one was refused (a totals row under the rounds takes one new round; recheck 14), and
    two hand edits for what one could mend. Each round is placed in the workbook as the
    rounds before it left it (a copy in a temporary folder), and the result replaces the
    lead's file once, read back first.

    Parameters are those of :func:`append_round`; ``other_classifiers`` applies to the
    first round (the main classifier's), whose rows the further classifiers' are not.

    Returns
    -------
    tuple
        One entry per round, in order: the :class:`AppendedRound` where it went, or a
        :class:`NotAdded` saying why not: :class:`AlreadyRecorded` (where the workbook
        already holds it) or, for a further classifier, :class:`NoSheetFor`.

    Raises
    ------
    SaveError, InputError, WorkbookError
        As :func:`append_round`; a round refused names itself, and nothing is written.
    """
    path = Path(path)
    lock = lock_file_of(path)
    if lock is not None:
        raise SaveError(
            f"{path.name} is open in another program (lock file {lock.name}); close it there "
            "and try again. Nothing was written"
        )
    before = expected or fingerprint(path)
    if before is None and path.exists():
        # A pipe, a device or an unreadable file: the workbook guard names which (it was
        # "no such file"; fuzz 17).
        guard_workbook(path)
    if before is None:
        raise WorkbookError(f"{path}: no such file")
    guard_workbook(path)
    names = sheet_names(path)
    if is_labeling_workbook(names):
        raise InputError(
            f"{path.name} is a labeling workbook (it holds a drawn sample), not a rounds "
            "workbook; give the workbook where you keep your rounds (a new name starts one). "
            "Nothing was written"
        )
    if is_session(names):
        raise InputError(
            f"{path.name} is a report or session PR Planner wrote, not a rounds workbook: a "
            "row added to its Rounds sheet would not change its summary and charts. Give "
            "the workbook where you keep your rounds (a new name starts one). Nothing was "
            "written"
        )
    outcomes: list[AppendedRound | NotAdded] = []
    planned: list[_PlannedRow] = []
    with tempfile.TemporaryDirectory(prefix="prplanner-") as folder:
        # The copy keeps the workbook's name: what a round's refusal says of it is said
        # of the lead's file.
        work = Path(folder) / path.name
        source = path
        for position, new_round in enumerate(new_rounds):
            try:
                row = _planned_row(
                    source,
                    new_round,
                    sheet=sheet,
                    update=update,
                    others=other_classifiers if position == 0 else (),
                    columns=columns,
                    further=position > 0,
                )
            except NotAdded as exc:
                outcomes.append(exc)
                continue
            except _TotalsInTheWay as exc:
                raise InputError(
                    _rows_the_draw_needs(exc, planned, len(new_rounds) - position)
                ) from None
            except InputError as exc:
                if len(new_rounds) > 1 or source is work:
                    # A later round is placed in the copy: its name is the lead's file's.
                    message = str(exc).replace(str(work), str(path))
                    raise InputError(_said_of_the_draw(message, new_round, planned)) from None
                raise
            _write_members(work, row.contents, row.changed)
            source = work
            planned.append(row)
            outcomes.append(
                AppendedRound(
                    path=path,
                    sheet=row.sheet,
                    row=row.row,
                    classifier=row.new_round.classifier,
                    updated=row.updated,
                    not_kept=row.not_kept,
                )
            )
        if not planned:
            return tuple(outcomes)
        final = work.read_bytes()

        def write(temporary: Path) -> None:
            temporary.write_bytes(final)
            _check_read_back(path, temporary, planned, columns)

        atomic_write(
            path, write, sources=sources, expected=before, replace_foreign=True, purpose="rounds"
        )
    return tuple(outcomes)


@dataclass(frozen=True, slots=True)
class _PlannedRow:
    """A round placed in the workbook: where it goes and the parts that change for it."""

    new_round: NewRound
    sheet: str
    row: int
    updated: bool
    contents: list[tuple[zipfile.ZipInfo, bytes]]
    changed: dict[str, bytes]
    not_kept: tuple[str, ...] = ()
    #: Rows of the sheet read as totals rows before the write (they must stay so).
    totals_rows: tuple[int, ...] = ()


class _TotalsInTheWay(InputError):
    """A totals row leaves no free row for the round above it: ``sheet`` names where, and
    ``shared`` says the sheet files several classifiers' rounds (a classifier column)."""

    def __init__(self, message: str, *, sheet: str, shared: bool):
        super().__init__(message)
        self.sheet = sheet
        self.shared = shared


def _rows_the_draw_needs(refused: _TotalsInTheWay, planned, still_to_place: int) -> str:
    """What ``refused`` (a totals row in the way) says, with how many empty rows the
    draw's rounds need there: the lead makes room once, not once per classifier."""
    placed_here = sum(1 for row in planned if row.sheet == refused.sheet and not row.updated)
    needed = placed_here + (still_to_place if refused.shared else 1)
    message = str(refused)
    if needed > 1:
        message = (
            f"{message.removesuffix('. Nothing was written')}. This labeled sample's "
            f"rounds need {needed} rows there (one per classifier): leave {needed} empty rows "
            "above the totals row, inside its sums. Nothing was written"
        )
    if planned:
        message += " (nor any other round of this labeled sample)"
    return message


def _said_of_the_draw(message: str, new_round: NewRound, planned) -> str:
    """``message`` (a round of a draw refused) saying which classifier's round it was and
    that the draw's others were not added either."""
    whose = f"{new_round.classifier}'s round" if new_round.classifier else "The main round"
    others = " (the others of this labeled sample were not added either)" if planned else ""
    return f"{whose}: {message}{others}"


def _write_members(target_path: Path, contents, changed: dict[str, bytes]) -> None:
    """Write the workbook's members to ``target_path`` in their order, with their names,
    dates and compression, ``changed`` ones with their new content."""
    with zipfile.ZipFile(target_path, "w", allowZip64=True) as target:
        for member, data in contents:
            content = changed.get(member.filename, data)
            target.writestr(copy.copy(member), content, compress_type=member.compress_type)
            # Recent Pythons fill in Unix permissions when writing; keep the original's.
            written = target.filelist[-1]
            written.external_attr = member.external_attr
            written.create_system = member.create_system


def _check_read_back(path: Path, temporary: Path, planned, columns) -> None:
    """Refuse the new copy unless every round placed reads back from it with its counts
    (and date)."""
    try:
        check = read_rounds(temporary, columns=columns)
    except InputError as exc:
        # The message names the temporary file, which is gone by the time it is read:
        # say it of the lead's workbook, which is unchanged.
        why = str(exc).replace(str(temporary), "the new copy").split("; open it in")[0]
        raise SaveError(
            f"the round could not be added to {path.name} safely: the copy PR Planner "
            f"wrote did not read back ({why}). Your workbook is unchanged; nothing was "
            "written"
        ) from None
    for row in planned:
        new_round = row.new_round
        added = [item for item in check.rounds if item.sheet == row.sheet and item.row == row.row]
        counts = (new_round.tp, new_round.fp, new_round.fn, new_round.tn)
        as_totals = [
            item
            for item in check.refused
            if item.sheet == row.sheet and item.row == row.row and item.is_totals
        ]
        if as_totals:
            # Its counts add up those of the rounds above it (halves of one round filed
            # as rounds, then the whole): it would read as a totals row (review 21).
            raise SaveError(
                f"the round could not be added to {path.name}: on sheet {row.sheet!r} it "
                f"would read as {as_totals[0].reason.removesuffix(', not a round')}. If the "
                "rows above are parts of this round, delete them or move them to another "
                "sheet, then add it again; nothing was written"
            )
        revived = sorted(
            {item.row for item in check.rounds if item.sheet == row.sheet} & set(row.totals_rows)
        )
        if revived:
            # A totals row of typed numbers no longer adds up once a round goes in above
            # it, and would read as a round (review 21).
            raise SaveError(
                f"the round could not be added to {path.name}: on sheet {row.sheet!r}, row "
                f"{revived[0]} totals the rounds above it with typed numbers, which would "
                "not include the new round, and it would then read as a round. Delete the "
                "totals row (or type its numbers again once the round is in); nothing was "
                "written"
            )
        if (
            not added
            or added[0].matrix.as_tuple() != counts
            or (new_round.date is not None and added[0].date not in (None, new_round.date))
        ):
            raise SaveError(
                f"the round could not be added to {path.name} safely (the new row did not "
                "read back as a round); nothing was written"
            )


def _same_date_and_populations(
    path: Path,
    sheet: str,
    rounds,
    new_round: NewRound,
    update: bool,
    one_classifier_sheet: bool,
) -> int | None:
    """On a sheet with neither names nor notes, the row of the same date and population
    counts: refused as a copy, or (``update``) returned to take the new counts."""
    if new_round.date is None:
        return None
    counts = (new_round.tp, new_round.fp, new_round.fn, new_round.tn)
    for item in rounds:
        if item.sheet != sheet or item.date != new_round.date:
            continue
        if not one_classifier_sheet and classifier_key(item.classifier) != classifier_key(
            new_round.classifier
        ):
            continue  # another classifier's round, on a sheet with a classifier column
        if (item.population_pos, item.population_neg) != (
            new_round.population_pos,
            new_round.population_neg,
        ):
            continue
        there = (item.tp, item.fp, item.fn, item.tn)
        why = (
            f"{path.name}, sheet {sheet!r} row {item.row} already holds a round of "
            f"{new_round.date.isoformat()} with the same population counts "
            f"({new_round.population_pos:,} and {new_round.population_neg:,}); the sheet has "
            "no round or notes column to tell rounds apart, so it is taken for this one"
        )
        if there == counts:
            raise AlreadyRecorded(f"{why}, with the same counts; nothing was written")
        if update:
            return item.row
        shown = "TP {:,}, FP {:,}, FN {:,}, TN {:,}"
        raise InputError(
            f"{why}, with {shown.format(*there)}; the labels now give "
            f"{shown.format(*counts)}. Nothing was written. To record the new counts in that "
            f"row, run this again with {named('update')}; if it is another round, add a "
            "column headed 'Notes' to the sheet first"
        )
    return None


def _planned_row(
    path: Path,
    new_round: NewRound,
    *,
    sheet: str | None,
    update: bool,
    others: Sequence[str],
    columns: Sequence[str],
    further: bool = False,
) -> _PlannedRow:
    """Where ``new_round`` goes in the workbook ``path`` and the parts that change for it
    (nothing is written here)."""
    book = read_rounds(path, columns=columns)
    if book.unused_choices:
        from core.workbook.rounds import unused_choices_in_words

        raise InputError(f"{path.name}: {unused_choices_in_words(book)}. Nothing was written")
    new_round = replace(new_round, classifier=_as_spelled(book.rounds, new_round.classifier))
    # A sheet with the counts but no population columns, or a column named twice, cannot
    # take a round: say why, not that no sheet has the counts.
    skipped = next(
        (
            item
            for item in book.skipped_sheets
            if "has TP, FP, FN and TN" in item.reason or "names a column twice" in item.reason
        ),
        None,
    )
    if not book.columns and skipped is not None:
        raise InputError(
            f"{path.name}, sheet {skipped.sheet!r}: {skipped.reason}. Nothing was written"
        )
    if not book.columns:
        # A header that names some of the counts (a column copied, one misspelt): say which.
        for item in book.skipped_sheets:
            guess = item.header_guess
            words = counts_in_words(guess) if guess is not None else ""
            if guess is not None and words:
                raise InputError(
                    f"{path.name}, sheet {item.sheet!r}: its header row "
                    f"{guess.header_row} names some of TP, FP, FN and TN but not "
                    f"each once{words}; fix the header, then append. Nothing was written"
                )
    reading = _choose_sheet(path, book.columns, book.rounds, sheet, new_round.classifier)
    _refuse_sheet_classifier_over_a_column(path, reading)
    if further and new_round.classifier is not None:
        _refuse_a_sheet_of_another_classifier(path, reading, book.rounds, new_round.classifier)
    refused_here = [
        item for item in book.refused if item.sheet == reading.sheet and not item.is_totals
    ]
    if refused_here and not any(item.sheet == reading.sheet for item in book.rounds):
        # Columns that read none of the sheet's rows would put the counts where they do not
        # belong (TP under "Month"; recheck 14): say what the first row read as instead.
        first = refused_here[0]
        raise InputError(
            f"{path.name}, sheet {reading.sheet!r}: none of its {len(refused_here):,} rows "
            f"reads as a round with these columns (row {first.row}: {first.reason}); check "
            "which column holds what. Nothing was written"
        )
    if new_round.classifier is None:
        new_round = replace(
            new_round,
            classifier=_only_classifier(path, reading.sheet, book.rounds, others),
        )
    # What of the round the sheet has columns for ("name": a round column).
    kept = {
        "name" if role.role == "round" else "notes"
        for role in reading.roles
        if role.column and role.role in ("round", "notes")
    }
    row_to_update = _refuse_a_second_copy(
        path,
        reading.sheet,
        book.rounds,
        new_round,
        update,
        others,
        one_classifier_sheet=not any(
            role.role == "classifier" and role.column for role in reading.roles
        ),
        anonymous_sheet=not kept,
    )
    last_round_row = max(
        (item.row for item in book.rounds if item.sheet == reading.sheet), default=0
    )
    # Everything is read before the file is replaced: a rounds workbook is small, and an
    # open archive would block the replace on Windows.
    with zipfile.ZipFile(path) as archive:
        part = _sheet_part(archive, reading.sheet)
        contents = [(member, archive.read(member)) for member in archive.infolist()]
    old_xml = next(data for member, data in contents if member.filename == part)
    if row_to_update is None:
        # Rows of the table the reader could not use (a typo the lead keeps) stay where
        # they are: the round goes below them, into the row the lead left free.
        unusable = {
            item.row for item in book.refused if item.sheet == reading.sheet and not item.is_totals
        }
        last_table_row = last_round_row
        while last_round_row and last_table_row + 1 in unusable:
            last_table_row += 1
        epoch = date_epoch(path)
        try:
            new_xml, row_number = _new_sheet_xml(
                old_xml, reading, new_round, last_round_row, last_table_row, epoch
            )
        except WorkbookError as exc:
            raise WorkbookError(f"{path.name}, sheet {reading.sheet!r}: {exc}") from None
        merged = _merged_range_over(old_xml, row_number)
        if merged is not None:
            # Written into a merged banner row, the counts hid under its first cell, and
            # the next save in Excel or LibreOffice dropped them (fuzz 16).
            raise InputError(
                f"{path.name}, sheet {reading.sheet!r}: row {row_number}, where the round "
                f"would go, is merged ({merged}); unmerge it, or leave an empty row below "
                "the rounds. Nothing was written"
            )
        # A round written below a totals row is out of its sums; one moved further down by
        # the lead (its sums widened) leaves a free row above it, where the round goes.
        totals = [
            item.row
            for item in book.refused
            if item.sheet == reading.sheet
            and item.is_totals
            and last_table_row < item.row
            and (item.row < row_number or _sums_end_above(old_xml, item.row, row_number))
        ]
        if totals:
            typed = any(
                item.row == totals[0] and SUMS_REASON in item.reason
                for item in book.refused
                if item.sheet == reading.sheet
            )
            if typed:
                # Typed numbers have no sums to widen (review 21).
                what = (
                    "its numbers are typed, so a new round would not be in them: delete the "
                    "totals row, add the round, then type the totals again below it if you "
                    "want them"
                )
            elif row_number > totals[0]:
                what = (
                    f"a round added below it (row {row_number}) would be left out of its sums. "
                    "Have an empty row right above the totals row and widen its sums to cover "
                    "it (or delete the totals row); the new round then goes into that row"
                )
            else:  # a free row above the totals, outside their sums
                what = (
                    f"its sums end above row {row_number}, where the round would go. Widen "
                    f"them to cover row {row_number} (or delete the totals row)"
                )
            raise _TotalsInTheWay(
                f"{path.name}, sheet {reading.sheet!r}: row {totals[0]} totals the rounds "
                f"above it, and {what}. Nothing was written",
                sheet=reading.sheet,
                shared=any(item.role == "classifier" for item in reading.roles),
            )
    else:
        row_number = row_to_update
        redate = any(
            item.row == row_number and item.sheet == reading.sheet and _redated(item, new_round)
            for item in book.rounds
        )
        new_xml = _updated_sheet_xml(
            old_xml, reading, new_round, row_number, date_epoch(path) if redate else None
        )
    changed = {part: new_xml}
    if row_to_update is None:
        # A table ("Format as Table") or filter that ends right above the new row takes it
        # in, as Excel does when a row is typed below one: its filters, banding and
        # structured references then cover the round.
        changed[part] = _grown_ranges(new_xml, row_number)
        by_name = {member.filename: data for member, data in contents}
        for table in _table_parts(part, by_name):
            grown = _grown_ranges(by_name[table], row_number)
            if grown != by_name[table]:
                changed[table] = grown

    return _PlannedRow(
        new_round=new_round,
        sheet=reading.sheet,
        row=row_number,
        updated=row_to_update is not None,
        contents=contents,
        changed=changed,
        not_kept=tuple(
            role
            for role, value in (("name", new_round.round), ("notes", new_round.notes))
            if value and role not in kept
        ),
        totals_rows=tuple(
            item.row for item in book.refused if item.sheet == reading.sheet and item.is_totals
        ),
    )


#: Characters per line of the Notes column (width 60) a started rounds workbook wraps at.
NOTES_LINE_CHARACTERS = 62


def start_rounds_workbook(
    path: str | os.PathLike[str],
    new_rounds: Sequence[NewRound],
    *,
    sources: Sequence[str | os.PathLike[str]] = (),
) -> tuple[AppendedRound, ...]:
    """Start a rounds workbook at ``path`` (which must not exist) holding ``new_rounds``
    (one labeled sample's: the main classifier's round, then each further classifier's).

    One sheet, ``Rounds``, with :data:`ROUNDS_HEADER` (what :func:`read_rounds` reads and
    :func:`append_round` adds to) and the rounds from row 2; read back before it is kept.

    Raises
    ------
    SaveError
        ``path`` exists, or the save failed; nothing is left behind.
    """
    import openpyxl

    from core.workbook.safe_io import mark_as_ours

    path = Path(path)
    if not new_rounds:
        raise InputError("no round to start the rounds workbook with")
    if path.exists():
        raise SaveError(f"{path.name} exists already; add to it instead of starting it")
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Rounds"
    sheet.append(ROUNDS_HEADER)
    for row, new_round in enumerate(new_rounds, start=2):
        sheet.append(
            [
                new_round.round, new_round.date, new_round.classifier, new_round.population_pos,
                new_round.population_neg,
                # As an added row holds it: 1.83237013576026 beside 3.244 (trial 17).
                None if new_round.s is None else round(new_round.s, 3),
                new_round.tp, new_round.fp, new_round.fn, new_round.tn, new_round.notes,
            ]
        )  # fmt: skip
        sheet[f"B{row}"].number_format = "yyyy-mm-dd"
        sheet[f"F{row}"].number_format = "0.000"
        # The notes wrap in their column: run on, they set the printed page's width.
        sheet[f"K{row}"].alignment = openpyxl.styles.Alignment(wrap_text=True, vertical="top")
        # LibreOffice keeps a stored height: without one the wrapped lines overlap.
        lines = -(-len(new_round.notes or "") // NOTES_LINE_CHARACTERS)
        sheet.row_dimensions[row].height = 15 * max(1, lines)
    for column, width in zip("ABCDEFGHIJK", (14, 12, 14, 30, 30, 8, 8, 8, 8, 8, 60), strict=True):
        sheet.column_dimensions[column].width = width
    for cell in sheet[1]:
        cell.font = openpyxl.styles.Font(bold=True)
    sheet.freeze_panes = "A2"
    # Printed, one page wide (it ran over five pages across in LibreOffice).
    sheet.page_setup.orientation = "landscape"
    sheet.sheet_properties.pageSetUpPr.fitToPage = True
    sheet.page_setup.fitToWidth = 1
    sheet.page_setup.fitToHeight = 0
    sheet.print_title_rows = "1:1"
    keep_text_as_text(workbook)
    mark_as_ours(workbook)
    wanted = [(item.tp, item.fp, item.fn, item.tn) for item in new_rounds]

    def write(temporary: Path) -> None:
        workbook.save(temporary)
        check = read_rounds(temporary)
        if [item.matrix.as_tuple() for item in check.rounds] != wanted:
            raise SaveError(f"{path.name} could not be started safely; nothing was written")

    atomic_write(path, write, sources=sources, purpose="rounds")
    return tuple(
        AppendedRound(
            path=path, sheet="Rounds", row=row, classifier=new_round.classifier, created=True
        )
        for row, new_round in enumerate(new_rounds, start=2)
    )
