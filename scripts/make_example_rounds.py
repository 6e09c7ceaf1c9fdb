"""Write ``resources/example_rounds.xlsx``: the history ``prplanner`` opens by default.

A realistic workbook an editors' lead keeps: two classifiers (``travel`` with six rounds,
``finance`` with four) labeled a few weeks apart, population counts, the over-sampling
ratio, the labeled counts and notes. Run ``python scripts/make_example_rounds.py [OUT]``
after changing the numbers; the file is committed so the app never needs this script.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

from openpyxl import Workbook
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter

HEADER = (
    "Round",
    "Date",
    "Classifier",
    "Predicted positive (population)",
    "Predicted negative (population)",
    "s",
    "TP",
    "FP",
    "FN",
    "TN",
    "Notes",
)

# (round, date, classifier, N1, N0, s, TP, FP, FN, TN, notes): counts chosen so that
# precision sits near 85-88 % and recall near 55-75 % with the usual round-to-round noise.
# One row per line reads like the sheet it becomes.
# fmt: off
ROUNDS = (
    ("TR-01", dt.date(2026, 1, 12), "travel", 41_200, 1_251_000, 1.0, 141, 22, 118, 4_719,
     "Plain random sample of 5,000 (baseline)"),
    ("TR-02", dt.date(2026, 1, 26), "travel", 39_800, 1_262_300, 1.8, 214, 30, 84, 4_372,
     "First over-sampled round, s from the baseline"),
    ("TR-03", dt.date(2026, 2, 9), "travel", 40_550, 1_248_800, 1.8, 231, 29, 76, 4_364, ""),
    ("TR-04", dt.date(2026, 2, 23), "travel", 52_100, 1_240_200, 2.0, 288, 63, 121, 4_128,
     "Model v2.3 deployed; more predicted positives"),
    ("TR-05", dt.date(2026, 3, 9), "travel", 44_800, 1_255_900, 1.85, 251, 35, 80, 4_244,
     "Threshold raised back"),
    ("TR-06", dt.date(2026, 3, 23), "travel", 47_300, 1_249_000, 1.85, 259, 41, 88, 4_222, ""),
    ("FI-01", dt.date(2026, 1, 14), "finance", 58_000, 1_260_000, 1.5, 236, 71, 95, 4_318,
     "Baseline"),
    ("FI-02", dt.date(2026, 1, 28), "finance", 61_000, 1_255_000, 1.5, 249, 66, 84, 4_321, ""),
    ("FI-03", dt.date(2026, 2, 11), "finance", 59_500, 1_262_000, 1.51, 240, 74, 79, 4_327,
     "Two editors new to the guidelines"),
    ("FI-04", dt.date(2026, 2, 25), "finance", 60_200, 1_258_000, 1.5, 262, 58, 75, 4_325, ""),
)
# fmt: on

COLUMN_WIDTHS = (9, 12, 11, 16, 16, 6, 7, 7, 7, 8, 44)


def write_example(out: Path) -> Path:
    """Write the example workbook to ``out`` and return the path."""
    book = Workbook()
    sheet = book.active
    sheet.title = "Rounds"
    sheet.append(HEADER)
    for cell in sheet[1]:
        cell.font = Font(bold=True)
        cell.fill = PatternFill("solid", fgColor="DDEBF7")
        cell.alignment = Alignment(wrap_text=True, vertical="center")
    for values in ROUNDS:
        sheet.append(values)
    for row in sheet.iter_rows(min_row=2):
        row[1].number_format = "yyyy-mm-dd"
        for cell in (row[3], row[4], *row[6:10]):
            cell.number_format = "#,##0"
        row[5].number_format = "0.00"
    for index, width in enumerate(COLUMN_WIDTHS, start=1):
        sheet.column_dimensions[get_column_letter(index)].width = width
    sheet.freeze_panes = "A2"
    out.parent.mkdir(parents=True, exist_ok=True)
    book.save(out)
    return out


def main(argv: list[str]) -> int:
    default = Path(__file__).resolve().parent.parent / "resources" / "example_rounds.xlsx"
    out = Path(argv[0]) if argv else default
    print(write_example(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
