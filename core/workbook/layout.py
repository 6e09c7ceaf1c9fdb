"""What the report workbook (which is also a saved session) looks like to its readers:
sheet names, the Inputs header and keys, and the Rounds sheet's source columns.

Kept apart from :mod:`core.workbook.report` (which writes the workbook) so that reading a
session, which every app start does, needs neither the writer nor the modules it draws on.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from core.validation import CONTROL_CHARACTER, NOT_TEXT
from core.workbook.rounds import Round, classifier_key

SHEET_SUMMARY = "Summary"
SHEET_INTERVALS = "Intervals"
SHEET_PLAN = "Plan curves"
SHEET_P3 = "P3"
SHEET_ROUNDS = "Rounds"
SHEET_INPUTS = "Inputs"
SHEET_PLOTS = "Plots"
#: Hidden: each classifier's rounds together, by date, behind the history charts.
SHEET_HISTORY = "History data"

#: Header of the Inputs sheet; ``exact (JSON)`` keeps what a cell cannot (see session_io).
INPUTS_HEADER = ("key", "value", "exact (JSON)")
#: First Inputs rows before the flattened state.
SCHEMA_KEY = "schema_version"
WRITER_KEY = "written_by"

#: Rounds sheet columns saying where each round was first read from.
ROUNDS_SOURCE_SHEET = "Source sheet"
ROUNDS_SOURCE_ROW = "Source row"

#: Characters XML 1.0 (and so .xlsx) cannot hold: control characters other than tab and
#: line ends, the non-characters U+FFFE and U+FFFF, and lone surrogates (what Python makes
#: of a byte that is not UTF-8, e.g. in a command-line argument). openpyxl's own pattern
#: misses the last two kinds, and a workbook written with one does not open.
ILLEGAL_XML = re.compile(f"{CONTROL_CHARACTER.pattern}|{NOT_TEXT.pattern}")
#: Longest text an Excel cell holds (openpyxl cuts longer text when it reads it back).
CELL_TEXT_LIMIT = 32_767


def clean_text(value: str) -> str:
    """``value`` without the control characters XML (and so .xlsx) cannot hold."""
    return ILLEGAL_XML.sub("", value)


def most_recent_round(rounds: Sequence[Any], among: Sequence[Any] | None = None) -> Round | None:
    """The most recent round by date (``None`` when there are no rounds); with ``among``,
    the one of those (rounds of ``rounds`` sharing a name, say) that ranks first, each
    ranked among all of ``rounds`` (which classifier has most rounds, where undated ones
    stand).

    Rounds stand in time as :func:`core.compare.placed_dates` places them (a round without
    a date after the rounds of its classifier above it). Among rounds of the same date,
    the classifier with the most rounds wins (the lead's main one: a draw for v7 and v8 on
    trial gives both one date, and the last row, v8's, became the round the Plan builds
    on; trial 15), then the classifier whose rounds of that date start first (a draw adds
    its main classifier's round first), then sheet order (the later row).
    """
    from core.compare import placed_dates

    found = [item for item in rounds if isinstance(item, Round)]
    if not found:
        return None
    history = Counter(classifier_key(item.classifier) for item in found)
    placed = placed_dates((classifier_key(item.classifier), item.date) for item in found)
    # Where each classifier's rounds of a date start: a draw adds the main classifier's
    # round first, so on a tie of history the first classifier of the date is the main
    # one (the trial's v8 round, added after v7's, was taken; recheck 15).
    starts: dict[tuple[object, str], int] = {}
    for position, (item, day) in enumerate(zip(found, placed, strict=True)):
        starts.setdefault((day, classifier_key(item.classifier)), position)
    candidates: Sequence[int] = range(len(found))
    if among is not None:
        wanted = {id(item) for item in among}
        candidates = [at for at in candidates if id(found[at]) in wanted]
        if not candidates:
            return None
    position = max(
        candidates,
        key=lambda at: (
            placed[at],
            history[classifier_key(found[at].classifier)],
            -starts[(placed[at], classifier_key(found[at].classifier))],
            at,
        ),
    )
    return found[position]


def round_order_notes(rounds: Sequence[Round], today: dt.date | None = None) -> list[str]:
    """Sentences for rounds whose place in time is a guess or a slip: a round without a
    date among its classifier's dated rounds (placed after the rounds above it) and a
    round dated after ``today`` (it becomes the most recent round)."""
    from core.compare import placed_dates
    from core.workbook.report_content import round_label

    today = today or dt.date.today()
    keys = [classifier_key(item.classifier) for item in rounds]
    dated = {key for key, item in zip(keys, rounds, strict=True) if item.date is not None}
    notes = []
    undated = [
        position
        for position, (key, item) in enumerate(zip(keys, rounds, strict=True))
        if item.date is None and key in dated
    ]
    if undated:
        placed = placed_dates(zip(keys, (item.date for item in rounds), strict=True))
        for position in undated[:NOTES_SHOWN]:
            item = rounds[position]
            above = [
                rounds[at]
                for at in range(position)
                if keys[at] == keys[position]
                and rounds[at].date is not None
                and placed[at] == placed[position]
            ]
            where = (
                f"after {round_label(above[-1])}, the latest round above it"
                if above
                else "before every dated round, as no dated round is above it"
            )
            notes.append(
                f"{round_label(item, where=True)} has no date, so it "
                f"is placed {where}; type its date in the sheet to place it yourself"
            )
        if len(undated) > NOTES_SHOWN:
            notes.append(f"{len(undated) - NOTES_SHOWN} more rounds have no date")
    future = [item for item in rounds if item.date is not None and _date_key(item.date) > today]
    for item in future[:NOTES_SHOWN]:
        notes.append(
            f"{round_label(item, where=True)} is dated "
            f"{_date_key(item.date).isoformat()}, after today, so it counts as the most "
            "recent round; correct its date if it is a slip"
        )
    if len(future) > NOTES_SHOWN:
        notes.append(f"{len(future) - NOTES_SHOWN} more rounds are dated after today")
    return notes


#: How many rounds a note names before it counts the rest.
NOTES_SHOWN = 3


def _date_key(value) -> dt.date:
    if value is None:
        return dt.date.min
    return value.date() if isinstance(value, dt.datetime) else value


def keep_text_as_text(workbook) -> None:
    """Text that starts like a formula (an id ``=A1``, a subject ``=HYPERLINK(...)``, a
    classifier name) stays text: openpyxl writes such a string as a formula, which the
    spreadsheet then runs and which reads back as something else. For workbooks that hold
    no formula of their own."""
    for sheet in workbook.worksheets:
        for row in sheet.iter_rows():
            for cell in row:
                if cell.data_type == "f" and isinstance(cell.value, str):
                    cell.data_type = "s"
                    cell.quotePrefix = True  # Excel and LibreOffice keep it text when edited
