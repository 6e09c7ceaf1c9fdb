"""``prplanner rounds FILE.xlsx [--json]``: the past rounds a workbook holds (issue 5).

JSON contract: ``{"rounds": [{sheet, row, round, date, classifier, k, population_pos,
population_neg, s, tp, fp, fn, tn}, ...], "refused": [{sheet, row, reason}, ...]}``;
absent values are ``null`` and dates ISO ``YYYY-MM-DD``. Sheets skipped for want of a
header are not part of that contract; they are reported as ``note:`` lines on stderr.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.cli.output import add_json_flag

HELP = "list the labeled rounds in a workbook, and the rows that cannot be used"

#: (JSON key, column title) of the text table, in order.
_TABLE_COLUMNS = (
    ("sheet", "sheet"),
    ("row", "row"),
    ("round", "round"),
    ("date", "date"),
    ("classifier", "classifier"),
    ("k", "k"),
    ("population_pos", "N pred+"),
    ("population_neg", "N pred-"),
    ("s", "s"),
    ("tp", "TP"),
    ("fp", "FP"),
    ("fn", "FN"),
    ("tn", "TN"),
)
_TEXT_KEYS = {"sheet", "round", "date", "classifier"}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        metavar="FILE.xlsx",
        type=Path,
        help="workbook with one round per row (a header row naming TP, FP, "
        "FN, TN and k or the two population counts)",
    )
    add_json_flag(parser)


def run(args: argparse.Namespace) -> dict:
    from core.workbook.rounds import read_rounds  # openpyxl loads only when needed

    book = read_rounds(args.file)
    for skipped in book.skipped_sheets:
        print(f"note: sheet {skipped.sheet!r} skipped: {skipped.reason}", file=sys.stderr)
    return {
        "rounds": [item.to_dict() for item in book.rounds],
        "refused": [item.to_dict() for item in book.refused],
    }


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


def format_text(result: dict) -> str:
    """The rounds as an aligned table, then one line per refused row."""
    rounds = result["rounds"]
    refused = result["refused"]
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
        lines += [
            f"  sheet {item['sheet']!r}, row {item['row']}: {item['reason']}" for item in refused
        ]
    return "\n".join(lines)
