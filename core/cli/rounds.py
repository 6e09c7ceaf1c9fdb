"""``prplanner rounds FILE.xlsx [--column ROLE=HEADER ...] [--json]``: the past rounds a
workbook holds.

JSON contract: ``{"rounds": [{sheet, row, round, date, classifier, model_version, k,
population_pos, population_neg, s, tp, fp, fn, tn}, ...], "refused": [{sheet, row,
reason}, ...], "skipped_sheets": [{sheet, reason}, ...], "columns": [{sheet, header_row,
roles: {role: header}, guessed: [role], notes: [text]}, ...]}``
(:meth:`core.workbook.rounds.RoundsBook.to_dict`); absent values are ``null`` and dates ISO
``YYYY-MM-DD``; a classifier named after its sheet has the header ``""``. Skipped sheets
are also reported as ``note:`` lines on stderr, as are the columns the reader had to guess
(a ``Model`` column: versions or names?).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from core.cli.output import (
    add_column_flag,
    add_json_flag,
    json_ready,
    refuse_labeling_workbook,
    refuse_text_table,
)

if TYPE_CHECKING:
    from core.workbook.rounds import RoundsBook

HELP = "list the labeled rounds in a workbook, and the rows that cannot be used"

#: (JSON key, column title) of the text table, in order.
_TABLE_COLUMNS = (
    ("sheet", "sheet"),
    ("row", "row"),
    ("round", "round"),
    ("date", "date"),
    ("classifier", "classifier"),
    ("model_version", "version"),
    ("k", "k"),
    ("population_pos", "N pred+"),
    ("population_neg", "N pred-"),
    ("s", "s"),
    ("tp", "TP"),
    ("fp", "FP"),
    ("fn", "FN"),
    ("tn", "TN"),
)
_TEXT_KEYS = {"sheet", "round", "date", "classifier", "model_version"}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        metavar="FILE.xlsx",
        type=Path,
        help="workbook with one round per row (a header row naming TP, FP, "
        "FN, TN and k or the two population counts)",
    )
    add_column_flag(parser)
    add_json_flag(parser)


def run(args: argparse.Namespace) -> RoundsBook:
    from core.errors import InputError
    from core.workbook.layout import round_order_notes
    from core.workbook.rounds import ColumnChoice, read_rounds
    from core.workbook.session_io import sheets_skipped_worth_a_note

    # The choices are checked before the file is read, so a typo costs nothing.
    choices = [ColumnChoice.parse(text) for text in args.column]
    refuse_text_table(args.file, "prplanner rounds reads an Excel workbook (.xlsx)")
    refuse_labeling_workbook(args.file, "rounds")
    book = read_rounds(args.file, columns=choices)
    if book.unused_choices:
        from core.workbook.rounds import unused_choices_in_words

        raise InputError(unused_choices_in_words(book))
    for skipped in sheets_skipped_worth_a_note(book):
        print(f"note: sheet {skipped.sheet!r} skipped: {skipped.reason}", file=sys.stderr)
    for reading in book.columns:
        for note in reading.notes():
            print(f"note: {note}", file=sys.stderr)
    for note in round_order_notes(book.rounds):
        print(f"note: {note}", file=sys.stderr)
    return book


def json_lines(book: RoundsBook) -> Iterator[str]:
    """The ``--json`` text of ``book`` (:meth:`RoundsBook.to_dict`) piece by piece, one
    line per round or refusal, so a million rows stream out instead of being held as dicts
    and as one string."""
    yield "{"
    for position, (key, items) in enumerate(book.sections()):
        yield ("\n" if position == 0 else ",\n") + f"  {json.dumps(key)}: ["
        separator = "\n    "
        for item in items:
            yield separator + json.dumps(json_ready(item.to_dict()), allow_nan=False)
            separator = ",\n    "
        yield "]" if separator == "\n    " else "\n  ]"
    yield "\n}\n"


def _cell_text(key: str, value) -> str:
    if value is None:
        return "-"
    if key == "k":
        return f"{value:.4g}"
    if key == "s":
        return f"{value:g}"
    if isinstance(value, int) and key != "row":
        return f"{value:,}"
    return str(value)


def format_text(book: RoundsBook) -> str:
    """The rounds as an aligned table, then one line per refused row."""
    rounds = [item.to_dict() for item in book.rounds]
    refused = book.refused
    lines: list[str] = []
    if rounds:
        table = [[title for _, title in _TABLE_COLUMNS]]
        table += [[_cell_text(key, item[key]) for key, _ in _TABLE_COLUMNS] for item in rounds]
        widths = [max(len(row[index]) for row in table) for index in range(len(_TABLE_COLUMNS))]
        for row in table:
            cells = [
                text.ljust(width) if key in _TEXT_KEYS else text.rjust(width)
                for (key, _), text, width in zip(_TABLE_COLUMNS, row, widths, strict=True)
            ]
            lines.append("  ".join(cells).rstrip())
        lines.append(f"{len(rounds):,} round{'s' if len(rounds) != 1 else ''} loaded")
    else:
        lines.append("no rounds found")
    if refused:
        lines.append("")
        lines.append(f"{len(refused):,} row{'s' if len(refused) != 1 else ''} refused:")
        lines += [f"  sheet {item.sheet!r}, row {item.row}: {item.reason}" for item in refused]
    return "\n".join(lines)
