"""The Excel report of a session, which is also the app's document.

:func:`core.workbook.report_content.build_report` computes everything the report shows as
plain tables (one function per sheet, so the content has one source); this module's
:func:`write_report` lays them out with openpyxl and saves atomically through
:mod:`core.workbook.safe_io`.

Sheets
------
``Summary``
    Inputs, estimates, intervals by method, the plan for the next round and the warnings,
    in sentences a manager reads.
``Intervals``
    :meth:`core.evaluation.Evaluation.to_rows`: metric, method, estimate, lower, upper, note.
``Plan curves``
    Interval width against the over-sampling ratio ``s`` (frequentist and Bayesian), with
    native charts on a log axis.
``P3``
    Precision, its band and F1 over a log grid of prevalences, with a log-axis chart.
``Rounds``
    The session's past rounds, one per row, with precision and recall and their intervals.
    Written so that :func:`core.workbook.rounds.read_rounds` reads the rounds back
    unchanged: header names it recognises, counts and ratios as numbers, dates as dates.
``Inputs``
    Machine-readable ``key, value`` rows of :func:`core.session.flatten` plus the schema
    version, so that opening the report restores the session
    (:mod:`core.workbook.session_io`).
``Plots``
    PNG snapshots of the app's plots, only when ``images`` are given.

Text is always written as text: openpyxl turns any string starting with ``=`` into a
formula, so every string cell gets ``data_type = "s"`` (and a quote prefix when it starts
with ``=``, ``+``, ``-`` or ``@``, which Excel keeps when the cell is edited).

Numbers are written with full precision: openpyxl formats numbers with ``"%.16g"``, which
loses the last digit of some floats (``0.1 + 0.2``) and of integers beyond 16 digits, so
:func:`_set_number` stores the shortest round-trip text (``repr``) as the cell's value.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import InputError
from core.session import SessionState
from core.workbook.rounds import Round
from core.workbook.safe_io import (
    REPORT_CATEGORY,
    FileFingerprint,
    atomic_write,
    check_destination,
    mark_as_ours,
)

if TYPE_CHECKING:
    pass

__all__ = [
    "INPUTS_HEADER",
    "ROUNDS_HEADER",
    "SHEET_INPUTS",
    "SHEET_INTERVALS",
    "SHEET_P3",
    "SHEET_PLAN",
    "SHEET_PLOTS",
    "SHEET_ROUNDS",
    "SHEET_SUMMARY",
    "Column",
    "ReportContent",
    "SummaryRow",
    "Table",
    "build_report",
    "find_round",
    "most_recent_round",
    "render_workbook",
    "write_report",
]

# The layout its readers rely on lives in core.workbook.layout (names kept here too).
from core.workbook.layout import (
    ILLEGAL_XML,
    INPUTS_HEADER,
    SHEET_HISTORY,
    SHEET_INPUTS,
    SHEET_INTERVALS,
    SHEET_P3,
    SHEET_PLAN,
    SHEET_PLOTS,
    SHEET_ROUNDS,
    SHEET_SUMMARY,
    clean_text,
    most_recent_round,
)
from core.workbook.report_content import (
    ROUNDS_HEADER,
    Column,
    ReportContent,
    SummaryRow,
    Table,
    _shown,
    build_report,
    find_round,
)

#: At most this many history charts (one per classifier block of the Rounds sheet).
MAX_HISTORY_CHARTS = 4
#: Chart size in cm (two side by side fit a landscape A4 page at full size), and the
#: Summary rows (set to 15 pt each) one row of charts takes: with the repeated header
#: row and the heading, two rows of charts (34 rows, 510 pt) fill one landscape page
#: inside the margins of :meth:`_Sheet.page_setup` (523 pt).
CHART_SIZE = (12.0, 8.2)
CHART_ROWS = 16
CHART_ROW_HEIGHT = 15
#: Summary column widths (characters): item, value, lower, upper, explanation. About
#: 25.5 cm in all, so a landscape A4 page prints the Summary at 100 %.
SUMMARY_WIDTHS = (38, 22, 13, 13, 48)  # bounds fit "+14.1 points"

_FORMULA_START = ("=", "+", "-", "@")
# Dates Excel's 1900 date system can show (serial 1 is 1900-01-01); older ones go as ISO
# text, which core.workbook.rounds reads back as the same date.
_FIRST_EXCEL_DATE = dt.date(1900, 1, 1)

# --- layout: cells, formats, widths, charts -------------------------------------------------

NUMBER_FORMATS = {
    "percent": "0.0%",
    "percent2": "0.00%",
    # about three significant digits from 0.001 % up: 0.00100%, 0.0443%, 0.443%, 4.44%
    "rate": "[<0.0001]0.00000%;[<0.01]0.000%;0.00%",
    "count": "#,##0",
    "ratio": "0.000000",
    "number": "0.000",
    "small": "0.00E+00",
    # a change in percentage points (the value is 100 times the change of the rate)
    "points": '+0.0" points";-0.0" points";0.0" points"',
    "date": "yyyy-mm-dd",
    "int": "0",
    "text": "@",
}
_MIN_WIDTH, _MAX_WIDTH, _HEADER_WRAP = 8, 60, 14
#: One font name everywhere: without it LibreOffice falls back to a serif for styled cells.
FONT_NAME = "Calibri"


def _font(**options):
    from openpyxl.styles import Font

    return Font(name=FONT_NAME, **options)


def _set_text(cell, value: str) -> None:
    """Write ``value`` as text, never as a formula."""
    value = clean_text(value)
    cell.value = value
    # openpyxl makes every string starting with "=" a formula; force a string cell.
    cell.data_type = "s"
    if value.startswith(_FORMULA_START):
        cell.quotePrefix = True  # Excel and LibreOffice keep it text when it is edited


def _set_number(cell, value) -> None:
    """Write an int or float exactly (openpyxl's ``%.16g`` drops digits; see module doc)."""
    cell.value = value
    exact = repr(value) if isinstance(value, float) else str(value)
    if exact != format(value, ".16g"):  # what openpyxl would write
        # The writer emits ``str(cell._value)`` into <v> for a numeric cell holding text;
        # tests read the file back and compare bit for bit.
        cell._value = exact


def _write_value(cell, value, kind: str) -> str:
    """Write ``value`` formatted as ``kind``; return its displayed text (for widths)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        cell.value = value
        # LibreOffice shows a boolean cell in General format as 0/1
        cell.number_format = '"TRUE";"TRUE";"FALSE"'
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        value = value.date() if value.time() == dt.time() else value
    if isinstance(value, dt.date):
        if value < _FIRST_EXCEL_DATE:
            _set_text(cell, value.isoformat())
        else:
            cell.value = value
            cell.number_format = NUMBER_FORMATS["date"]
        return value.isoformat()
    if isinstance(value, str):
        _set_text(cell, value)
        if kind == "text":
            cell.number_format = "@"
        return value
    if hasattr(value, "item"):  # numpy scalar
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    _set_number(cell, value)
    cell.number_format = NUMBER_FORMATS.get(kind, "General")
    return _shown(value, kind)


class _Sheet:
    """Writes into one worksheet and remembers how wide each column's content is."""

    def __init__(self, worksheet):
        self.ws = worksheet
        self.widths: dict[int, float] = {}

    def put(self, row: int, column: int, value, kind: str = "text", *, fit: bool = True):
        cell = self.ws.cell(row=row, column=column)
        shown = _write_value(cell, value, kind)
        if fit and shown:
            longest = max(len(line) for line in shown.splitlines() or [""])
            self.widths[column] = max(self.widths.get(column, 0), longest)
        return cell

    def header(self, row: int, column: int, text: str, *, numbers: bool = False):
        from openpyxl.styles import Alignment, Border, PatternFill, Side

        cell = self.put(row, column, text, fit=False)
        cell.font = _font(bold=True)
        cell.fill = PatternFill("solid", fgColor="DDE5F0")
        cell.border = Border(bottom=Side(style="thin", color="7F8FA6"))
        # Over a column of numbers (right-aligned) the title sits right too.
        cell.alignment = Alignment(
            wrap_text=True, vertical="bottom", horizontal="right" if numbers else None
        )
        words = max((len(word) for word in text.split()), default=0)
        self.widths[column] = max(self.widths.get(column, 0), min(len(text), _HEADER_WRAP), words)
        return cell

    def table(self, table: Table, top: int = 1, left: int = 1) -> None:
        for offset, column in enumerate(table.columns):
            self.header(top, left + offset, column.header, numbers=column.kind != "text")
        for r, values in enumerate(table.rows, start=top + 1):
            for offset, (column, value) in enumerate(zip(table.columns, values, strict=True)):
                self.put(r, left + offset, value, column.kind)
        self.header_height(top, table.headers, left)

    def header_height(self, row: int, headers: Sequence[str], left: int = 1) -> None:
        """Make a header row tall enough for its wrapped titles (no auto-fit on open)."""
        lines = 1
        for offset, text in enumerate(headers):
            width = max(self.widths.get(left + offset, 0), _HEADER_WRAP)
            lines = max(lines, _wrapped_lines(text, width))
        if lines > 1:
            self.ws.row_dimensions[row].height = 15 * lines + 2

    def fit_columns(self, fixed: Mapping[int, float] | None = None) -> None:
        from openpyxl.utils import get_column_letter

        fixed = fixed or {}
        for column in sorted(set(self.widths) | set(fixed)):
            width = self.widths.get(column, 0)
            chosen = fixed.get(column)
            if chosen is None:
                chosen = min(max(width + 2, _MIN_WIDTH), _MAX_WIDTH)
            self.ws.column_dimensions[get_column_letter(column)].width = chosen

    def page_setup(
        self,
        title_rows: str | None = "1:1",
        *,
        orientation: str = "landscape",
        title_columns=None,
    ) -> None:
        """A4, fitted to one page wide (as many pages tall as needed), header row on each.

        ``orientation`` is ``"landscape"`` for wide sheets and ``"portrait"`` for narrow,
        long ones (the P3 table, the Inputs).
        """
        from openpyxl.worksheet.page import PageMargins

        ws = self.ws
        ws.page_setup.orientation = orientation
        ws.page_setup.paperSize = ws.PAPERSIZE_A4
        ws.page_margins = PageMargins(
            left=0.5, right=0.5, top=0.5, bottom=0.5, header=0.25, footer=0.25
        )
        ws.sheet_properties.pageSetUpPr.fitToPage = True
        ws.page_setup.fitToWidth = 1
        ws.page_setup.fitToHeight = 0
        if title_rows:
            ws.print_title_rows = title_rows
        if title_columns:
            ws.print_title_cols = title_columns


def _wrapped_lines(text: str, width: float) -> int:
    """Lines ``text`` takes when wrapped at word boundaries in ``width`` characters."""
    lines, current = 1, 0
    for word in text.split():
        if current and current + 1 + len(word) > width:
            lines, current = lines + 1, len(word)
        else:
            current += len(word) + (1 if current else 0)
    return lines


def _line_series(
    chart,
    worksheet,
    x_column: int,
    y_column: int,
    first: int,
    last: int,
    *,
    title: str | None = None,
    color: str | None = None,
    dashed: bool = False,
    width: int = 22000,
):
    """Add a plain line (no markers) of ``y_column`` against ``x_column`` to a scatter chart.

    The title is the header cell above ``first`` unless ``title`` is given.
    """
    from openpyxl.chart import Reference, Series
    from openpyxl.chart.series import SeriesLabel

    x_values = Reference(worksheet, min_col=x_column, min_row=first, max_row=last)
    if title is None:
        y_values = Reference(worksheet, min_col=y_column, min_row=first - 1, max_row=last)
        series = Series(y_values, x_values, title_from_data=True)
    else:
        y_values = Reference(worksheet, min_col=y_column, min_row=first, max_row=last)
        series = Series(y_values, x_values)
        series.tx = SeriesLabel(v=clean_text(title))
    series.marker.symbol = "none"
    series.smooth = False
    line = series.graphicalProperties.line
    line.width = width
    if color:
        line.solidFill = color
    if dashed:
        line.dashStyle = "dash"
    chart.series.append(series)
    return series


#: Number format of a log prevalence axis (fractions shown as percents, as few decimals as
#: each decade needs; Excel allows two conditions).
PREVALENCE_AXIS_FORMAT = "[<0.0001]0.000%;[<0.01]0.0#%;0%"

_PALETTE = ("1F77B4", "FF7F0E", "2CA02C", "D62728", "9467BD", "8C564B", "E377C2", "7F7F7F")


def _scatter_chart(title: str, x_title: str, y_title: str, *, log_x: bool, percent_y: bool = True):
    from openpyxl.chart import ScatterChart

    chart = ScatterChart()
    chart.title = title
    chart.style = 13
    chart.scatterStyle = "line"
    chart.x_axis.title = x_title
    chart.y_axis.title = y_title
    if log_x:
        chart.x_axis.scaling.logBase = 10
    if percent_y:
        # A rate or an interval width of a rate: never below 0 % or above 100 %.
        chart.y_axis.number_format = "0%"
        chart.y_axis.scaling.min = 0
        chart.y_axis.scaling.max = 1
    chart.x_axis.number_format = "General"
    # openpyxl >= 3.1 marks axes as deleted unless told otherwise; Excel then hides them.
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    chart.legend.position = "b"
    chart.width, chart.height = CHART_SIZE
    return chart


def _spans_the_row(line, value_width: int) -> bool:
    """A Summary line whose value is a text too long for the value column, with no bounds
    or explanation beside it: written across the value, bound and explanation columns."""
    return (
        isinstance(line.value, str)
        and len(line.value) > value_width - 2
        and line.lower is None
        and line.upper is None
        and not line.note
    )


def _write_summary(ws, content: ReportContent) -> int:
    """Write the Summary; return the first free row below it."""
    from openpyxl.styles import Alignment

    sheet = _Sheet(ws)
    sheet.put(1, 1, "PR Planner report", fit=False).font = _font(bold=True, size=14)
    sheet.put(2, 1, f"{content.subject}; written {dt.date.today().isoformat()}", fit=False)
    for offset, text in enumerate(("Item", "Value", "Lower", "Upper", "Explanation"), start=1):
        sheet.header(4, offset, text)
    row = 5
    label_width, value_width, _, _, note_width = SUMMARY_WIDTHS
    top = Alignment(vertical="top", wrap_text=True)
    for line in content.summary:
        if line.style == "heading":
            row += 1
            sheet.put(row, 1, line.label, fit=False).font = _font(bold=True, size=12)
        elif line.style == "text":
            cell = sheet.put(row, 1, line.label, fit=False)
            ws.merge_cells(start_row=row, start_column=1, end_row=row, end_column=5)
            cell.alignment = Alignment(wrap_text=True, vertical="top")
            ws.row_dimensions[row].height = 15 * _wrapped_lines(line.label, sum(SUMMARY_WIDTHS) - 6)
        elif _spans_the_row(line, value_width):
            # A long text with nothing beside it (the round's notes, its name) spans the
            # row, left-aligned: right-aligned in the value column it stood as a narrow
            # column of ten lines (trial 15's PDF).
            sheet.put(row, 1, line.label, fit=False).alignment = top
            cell = sheet.put(row, 2, line.value, line.kind, fit=False)
            ws.merge_cells(start_row=row, start_column=2, end_row=row, end_column=5)
            cell.alignment = Alignment(horizontal="left", vertical="top", wrap_text=True)
            spanned = value_width + sum(SUMMARY_WIDTHS[2:]) - 4
            lines = max(_wrapped_lines(line.value, spanned), _wrapped_lines(line.label, 40))
            if lines > 1:
                ws.row_dimensions[row].height = 15 * lines
        else:
            sheet.put(row, 1, line.label, fit=False).alignment = top
            value_cell = sheet.put(row, 2, line.value, line.kind, fit=False)
            value_cell.alignment = Alignment(horizontal="right", vertical="top", wrap_text=True)
            # Right-aligned with a margin, so a bound never runs into the explanation.
            bound = Alignment(horizontal="right", vertical="top", indent=1)
            sheet.put(row, 3, line.lower, line.kind, fit=False).alignment = bound
            sheet.put(row, 4, line.upper, line.kind, fit=False).alignment = bound
            # Calibri is narrower than the width unit's digit: about 15 % more fits
            lines = _wrapped_lines(line.label, int(label_width * 1.15))
            if isinstance(line.value, str):
                lines = max(lines, _wrapped_lines(line.value, value_width - 2))
            if line.note:
                cell = sheet.put(row, 5, line.note, fit=False)
                cell.alignment = Alignment(wrap_text=True, vertical="top", indent=1)
                lines = max(lines, _wrapped_lines(line.note, note_width - 4))
            if lines > 1:
                ws.row_dimensions[row].height = 15 * lines
        row += 1
    sheet.fit_columns(dict(enumerate(SUMMARY_WIDTHS, start=1)))
    ws.freeze_panes = "A5"
    sheet.page_setup("4:4")
    return row + 1


def _write_intervals(ws, content: ReportContent) -> None:
    from openpyxl.utils import get_column_letter

    sheet = _Sheet(ws)
    sheet.table(content.intervals)
    if not content.intervals.rows:
        sheet.put(3, 1, "The counts could not be evaluated; see the Summary's warnings.")
    ws.freeze_panes = "A2"
    sheet.fit_columns()
    # The method's key (wilson, bayes_mc) is for scripts; people read the words beside it.
    if "Method" in content.intervals.headers:
        column = content.intervals.headers.index("Method") + 1
        ws.column_dimensions[get_column_letter(column)].hidden = True
    sheet.page_setup()


def _write_plan_curves(ws, content: ReportContent) -> None:
    sheet = _Sheet(ws)
    curves = content.plan_curves
    if curves is None:
        sheet.put(1, 1, "No plan curves: see the Summary's warnings.")
        return
    table = curves.table
    sheet.table(table)
    # The best s per curve goes below the table: beside it, the sheet would be too wide to
    # print at a readable size.
    below = len(table.rows) + 3
    sheet.table(curves.optimum, top=below)
    sheet.put(
        below + len(curves.optimum.rows) + 2,
        1,
        f"Widths are full interval widths (upper - lower) for {curves.v:,.0f} labels.",
        fit=False,
    )
    ws.freeze_panes = "B2"
    sheet.fit_columns()
    sheet.page_setup()


def _plan_charts(ws, content: ReportContent) -> list:
    """Precision and recall width against ``s`` (log axis), one line per curve."""
    curves = content.plan_curves
    if curves is None:
        return []
    first, last = 2, len(curves.table.rows) + 1
    count = len(curves.labels)
    charts = []
    for index, metric in enumerate(("Precision", "Recall")):
        chart = _scatter_chart(
            f"{metric} interval width against s ({curves.v:,.0f} labels)",
            "over-sampling ratio s (log scale)",
            "interval width",
            log_x=True,
        )
        for j, label in enumerate(curves.labels):
            _line_series(
                chart,
                ws,
                1,
                2 + index * count + j,
                first,
                last,
                title=label,
                color=_PALETTE[j % len(_PALETTE)],
                dashed=j > 0,
            )
        charts.append(chart)
    return charts


def _letter(column: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(column)


def _write_p3(ws, content: ReportContent) -> None:
    sheet = _Sheet(ws)
    if content.p3 is None:
        sheet.put(1, 1, "No P3 curve: see the Summary's warnings.")
        return
    sheet.table(content.p3)
    side = len(content.p3.columns) + 2
    sheet.header(1, side, "About the curve")
    sheet.header(1, side + 1, "Value")
    for offset, (label, value, kind) in enumerate(content.p3_info, start=2):
        sheet.put(offset, side, label)
        sheet.put(offset, side + 1, value, kind)
    ws.freeze_panes = "B2"
    sheet.fit_columns()
    sheet.page_setup(orientation="portrait")  # a long, narrow table: one page


def _p3_charts(ws, content: ReportContent) -> list:
    """The P3 curve with its band and F1 on a log prevalence axis."""
    if content.p3 is None:
        return []
    chart = _scatter_chart(
        "Precision at other prevalences (P3 curve)",
        "prevalence of positives (log scale)",
        "precision",
        log_x=True,
    )
    # Prevalences as percents on the log axis: 0.001%, 0.01%, 0.1%, 1%, 10%, 100%.
    chart.x_axis.number_format = PREVALENCE_AXIS_FORMAT
    first, last = 2, len(content.p3.rows) + 1
    _line_series(chart, ws, 1, 2, first, last, color=_PALETTE[0], width=28000)
    if any(row[2] is not None for row in content.p3.rows):
        _line_series(chart, ws, 1, 3, first, last, color="9DC3E6", dashed=True)
        _line_series(chart, ws, 1, 4, first, last, color="9DC3E6", dashed=True)
    _line_series(chart, ws, 1, 5, first, last, color=_PALETTE[1])
    return [chart]


def _history_order(table: Table) -> list[int]:
    """Positions of the rounds table's rows as the history charts draw them
    (:func:`core.compare.history_order`)."""
    import datetime as dt

    from core.compare import history_order
    from core.workbook.rounds import classifier_key

    headers = table.headers
    date_column, classifier_column = headers.index("Date"), headers.index("Classifier")
    return history_order(
        [
            (
                classifier_key(row[classifier_column] or ""),
                row[date_column] if isinstance(row[date_column], dt.date) else None,
            )
            for row in table.rows
        ]
    )


def _history_data(workbook, table: Table):
    """A hidden sheet with the rounds' columns the history charts read (no counts: it is
    not a sheet of rounds), each classifier's rounds together in the order they first come,
    each by date (:func:`_history_order`); and that table."""
    headers = table.headers
    rows = tuple(table.rows[position] for position in _history_order(table))
    charted = {
        "Round", "Classifier", "Model version", "Precision", "Recall",
        "Precision lower (Wilson)", "Precision upper (Wilson)",
        "Recall lower (Katz log)", "Recall upper (Katz log)",
    }  # fmt: skip
    # The same columns as the Rounds sheet (the charts find them by header), the others
    # left empty.
    kept = [index for index, header in enumerate(headers) if header in charted]
    sheet = workbook.create_sheet(SHEET_HISTORY)
    sheet.append([header if index in kept else None for index, header in enumerate(headers)])
    for row in rows:
        sheet.append(
            [
                (clean_text(row[index]) if isinstance(row[index], str) else row[index])
                if index in kept
                else None
                for index in range(len(headers))
            ]
        )
    sheet.sheet_state = "hidden"
    return sheet, Table(columns=table.columns, rows=rows)


def _classifier_blocks(rows: Sequence[tuple]) -> list[tuple[str, int, int]]:
    """Contiguous runs of one classifier (:func:`~core.workbook.rounds.same_classifier`):
    ``(name as its first row spells it, first index, last index)``."""
    from core.workbook.rounds import same_classifier

    blocks: list[tuple[str, int, int]] = []
    for index, row in enumerate(rows):
        name = row[2] or ""
        if blocks and same_classifier(blocks[-1][0], name):
            blocks[-1] = (blocks[-1][0], blocks[-1][1], index)
        else:
            blocks.append((name, index, index))
    return blocks


#: Rounds columns a manager reads; the others (populations, interval bounds behind the
#: history charts, where each round came from) stay in the sheet, hidden, so the sheet
#: prints one page wide at a readable size and still reads back as a rounds workbook.
ROUNDS_PRINTED = (
    "Round", "Date", "Classifier", "Model version", "TP", "FP", "FN", "TN", "Notes",
    "Precision", "Precision lower (Wilson)", "Precision upper (Wilson)",
    "Recall", "Recall lower (Katz log)", "Recall upper (Katz log)", "F1",
)  # fmt: skip
#: Width of the Notes column when printed (longer notes wrap).
_NOTES_WIDTH = 32
#: Width of an interval bound's column on the Rounds sheet (its header wraps).
_BOUND_WIDTH = 10


def _indented(alignment):
    """``alignment`` left-aligned one indent in (its wrapping and vertical kept)."""
    from openpyxl.styles import Alignment

    return Alignment(
        horizontal="left",
        indent=1,
        vertical=alignment.vertical,
        wrap_text=alignment.wrap_text,
    )


def _write_rounds(ws, content: ReportContent) -> None:
    from openpyxl.styles import Alignment
    from openpyxl.utils import get_column_letter

    sheet = _Sheet(ws)
    table = content.rounds
    sheet.table(table)
    ws.freeze_panes = "B2"
    notes = table.headers.index("Notes") + 1
    # The interval columns' long headers wrap: their numbers need no more than this.
    bounds = {
        column: _BOUND_WIDTH
        for column, header in enumerate(table.headers, start=1)
        if " lower (" in header or " upper (" in header
    }
    sheet.fit_columns({notes: _NOTES_WIDTH, **bounds})
    if bounds:  # "Precision / lower / (Wilson)"
        ws.row_dimensions[1].height = max(ws.row_dimensions[1].height or 0, 15 * 3 + 2)
    # Texts after a right-aligned number column start one indent in: "TN  Notes", not
    # "TNNotes" ("Date Classifier" read as one header in print).
    texts = [
        table.headers.index(header) + 1
        for header in ("Classifier", "Model version")
        if header in table.headers
    ]
    for column in texts:
        for row in range(1, len(table.rows) + 2):
            cell = ws.cell(row=row, column=column)
            cell.alignment = _indented(cell.alignment)
    header_cell = ws.cell(row=1, column=notes)
    header_cell.alignment = _indented(header_cell.alignment)
    for row, values in enumerate(table.rows, start=2):
        ws.cell(row=row, column=notes).alignment = Alignment(
            wrap_text=True, vertical="top", horizontal="left", indent=1
        )
        # Spreadsheets do not grow a row for wrapped text on opening: give it the lines.
        text = str(values[notes - 1] or "")
        lines = max(1, math.ceil(len(text) / (_NOTES_WIDTH - 2)), text.count("\n") + 1)
        if lines > 1:
            ws.row_dimensions[row].height = 15 * min(lines, 10)
            # A tall row reads as one round only if its numbers stand at the top with the
            # start of its notes.
            for column in range(1, len(values) + 1):
                cell = ws.cell(row=row, column=column)
                if column != notes:
                    cell.alignment = Alignment(
                        horizontal=cell.alignment.horizontal,
                        indent=cell.alignment.indent,
                        wrap_text=cell.alignment.wrap_text,
                        vertical="top",
                    )
    for column, header in enumerate(table.headers, start=1):
        # An empty optional column (no model versions, no notes) only takes print width.
        empty = header in ("Model version", "Notes") and not any(
            values[column - 1] not in (None, "") for values in table.rows
        )
        if header not in ROUNDS_PRINTED or empty:
            ws.column_dimensions[get_column_letter(column)].hidden = True
    sheet.page_setup()


def _history_charts(ws, content: ReportContent) -> list:
    """Precision and recall with their intervals, round by round, per classifier."""
    from openpyxl.chart import LineChart, Reference
    from openpyxl.chart.legend import LegendEntry
    from openpyxl.chart.series import SeriesLabel
    from openpyxl.chart.shapes import GraphicalProperties

    table = content.rounds
    if not table.rows:
        return []
    blocks = _classifier_blocks(table.rows)
    if _history_order(table) != list(range(len(table.rows))):
        # Classifiers interleave (a rounds workbook keeps one row per classifier per
        # draw), or rounds were added out of date order: the charts read a hidden copy of
        # the rounds, each classifier's together and by date. One line through them all
        # read as one classifier (trial 17); a month's round added after a week that
        # ended before it was drawn after that week (trial 18).
        ws, table = _history_data(ws.parent, table)
        blocks = _classifier_blocks(table.rows)
    blocks = sorted(blocks, key=lambda block: block[2] - block[1], reverse=True)
    blocks = sorted(blocks[:MAX_HISTORY_CHARTS], key=lambda block: block[1])
    headers = table.headers
    series_columns = (
        (headers.index("Precision") + 1, _PALETTE[0], False),
        (headers.index("Recall") + 1, _PALETTE[1], False),
        (headers.index("Precision lower (Wilson)") + 1, "9DC3E6", True),
        (headers.index("Precision upper (Wilson)") + 1, "9DC3E6", True),
        (headers.index("Recall lower (Katz log)") + 1, "F8CBAD", True),
        (headers.index("Recall upper (Katz log)") + 1, "F8CBAD", True),
    )
    charts = []
    version_column = headers.index("Model version")
    for name, start, stop in blocks:
        first, last = start + 2, stop + 2
        chart = LineChart()
        title = f"History of {name}" if name else "History of the rounds"
        # One series per classifier whatever its model versions; the title names them.
        versions = [
            str(row[version_column])
            for row in table.rows[start : stop + 1]
            if row[version_column] is not None
        ]
        if versions:
            title += f" (model {', '.join(dict.fromkeys(versions))})"
        chart.title = clean_text(title)
        chart.style = 12
        chart.y_axis.title = (
            "estimate (dashes: interval)" if stop == start else "estimate (dashed: interval)"
        )
        chart.y_axis.number_format = "0%"
        chart.y_axis.scaling.min = 0
        chart.y_axis.scaling.max = 1
        chart.x_axis.title = "round"
        chart.x_axis.delete = False
        chart.y_axis.delete = False
        # Two entries at the bottom: the dashed bounds are said on the axis title.
        chart.legend.position = "b"
        chart.legend.legendEntry = [LegendEntry(idx=index, delete=True) for index in range(2, 6)]
        chart.width, chart.height = CHART_SIZE
        for column, color, dashed in series_columns:
            chart.add_data(Reference(ws, min_col=column, min_row=first, max_row=last))
            series = chart.series[-1]
            series.tx = SeriesLabel(v=headers[column - 1])
            # markers only while they stay apart; hundreds of rounds read as a line. A
            # classifier with one round has no line: its bounds are then dashes.
            if dashed:
                series.marker.symbol = "dash" if stop == start else "none"
                if stop == start:
                    series.marker.size = 9
                    series.marker.graphicalProperties = GraphicalProperties(solidFill=color)
                    series.marker.graphicalProperties.line.solidFill = color
            else:
                series.marker.symbol = "circle" if stop - start < 40 else "none"
            series.smooth = False
            series.graphicalProperties.line.solidFill = color
            series.graphicalProperties.line.width = 15000 if dashed else 22000
            if dashed:
                series.graphicalProperties.line.dashStyle = "dash"
        chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=last))
        # about eight round names along the axis, however many rounds
        chart.x_axis.tickLblSkip = max(1, math.ceil((stop - start + 1) / 8))
        chart.x_axis.tickMarkSkip = chart.x_axis.tickLblSkip
        charts.append(chart)
    return charts


def _place_charts(ws, charts: Sequence, first_row: int) -> None:
    """Charts two per row below the Summary text, never cut by a page break."""
    from openpyxl.worksheet.pagebreak import Break

    if not charts:
        return
    # A page break before the charts and after every second row of charts: with the
    # Summary fitted to one page wide, two rows of charts fill a landscape page.
    ws.row_breaks.append(Break(id=first_row - 1))
    heading = ws.cell(row=first_row, column=1, value="Charts")
    heading.font = _font(bold=True, size=12)
    columns = ("A", "D")  # see SUMMARY_WIDTHS: two charts side by side fit the page
    # Rows of a fixed height, so the charts' slots are the same in Excel and LibreOffice
    # (whose default row is lower than Excel's 15 pt).
    slots = math.ceil(len(charts) / 2) * CHART_ROWS
    for row in range(first_row + 1, first_row + 1 + slots):
        ws.row_dimensions[row].height = CHART_ROW_HEIGHT
    for index, chart in enumerate(charts):
        chart_row, side = divmod(index, 2)
        row = first_row + 1 + chart_row * CHART_ROWS
        if chart_row and not side and chart_row % 2 == 0:
            ws.row_breaks.append(Break(id=row - 1))
        ws.add_chart(chart, f"{columns[side]}{row}")


def _write_inputs(ws, content: ReportContent) -> None:
    from openpyxl.styles import Alignment

    sheet = _Sheet(ws)
    for offset, text in enumerate(INPUTS_HEADER, start=1):
        sheet.header(1, offset, text)
    for row, (key, value) in enumerate(content.inputs, start=2):
        sheet.put(row, 1, key)
        kind = "text" if isinstance(value, str) else "general"
        # left-aligned so that a number does not run into the JSON column beside it
        sheet.put(row, 2, value, kind).alignment = Alignment(horizontal="left")
        # JSON keeps what a cell cannot: every float digit, line breaks, control
        # characters; session_io prefers it while it agrees with the visible value.
        exact = json.dumps(value, ensure_ascii=False)
        if ILLEGAL_XML.search(exact):
            exact = json.dumps(value)  # \uXXXX escapes for what XML cannot hold
        sheet.put(row, 3, exact, fit=False)
    sheet.put(
        len(content.inputs) + 3,
        1,
        "PR Planner reads this sheet to restore the session; edit with care.",
        fit=False,
    ).font = _font(italic=True)
    ws.freeze_panes = "A2"
    sheet.fit_columns({3: 40})
    sheet.page_setup(orientation="portrait")


def readable_images(
    images: Mapping[str, bytes] | None, warnings: list[str]
) -> list[tuple[str, bytes, tuple[int, int]]]:
    """``(title, data, (width, height))`` of every image Pillow can decode.

    The others are named in ``warnings`` and left out: a broken snapshot must not cost the
    user the report.
    """
    from PIL import Image, UnidentifiedImageError

    readable = []
    for name, data in (images or {}).items():
        try:
            with Image.open(io.BytesIO(data)) as probe:
                probe.load()
                size = probe.size
        except (UnidentifiedImageError, OSError, ValueError, TypeError) as exc:
            warnings.append(
                f"the plot {name!r} is not a readable image and was left out ({type(exc).__name__})"
            )
            continue
        readable.append((str(name), bytes(data), size))
    return readable


#: Row height on the Plots sheet, fixed so Excel and LibreOffice place pictures alike.
PLOT_ROW_POINTS = 15
PLOT_ROW_PIXELS = 20
#: Printable height / width of a portrait A4 page with the report's 0.5 inch margins.
PORTRAIT_HEIGHT_PER_WIDTH = (29.7 - 2.54) / (21.0 - 2.54)


def _write_plots(ws, images: Sequence[tuple[str, bytes, tuple[int, int]]]) -> None:
    """Snapshots one under another, each with its title, never cut by a page break.

    The sheet prints one page wide, so a page holds ``PORTRAIT_HEIGHT_PER_WIDTH`` times the
    widest picture in height; a picture that would cross the page's end starts a new page.
    """
    from openpyxl.drawing.image import Image as SheetImage
    from openpyxl.worksheet.pagebreak import Break

    sheet = _Sheet(ws)
    sizes: list[tuple[float, float]] = []
    for _name, _data, (pixel_width, pixel_height) in images:
        scale = min(1.0, 900 / max(pixel_width, 1))
        sizes.append((pixel_width * scale, pixel_height * scale))
    widest = max((shown_width for shown_width, _ in sizes), default=900)
    # 10 % kept free for the print scaling's rounding and the title rows of each page.
    page_rows = int(widest * PORTRAIT_HEIGHT_PER_WIDTH * 0.9 / PLOT_ROW_PIXELS)
    row, used = 1, 0
    for (name, data, _), (width, height) in zip(images, sizes, strict=True):
        picture_rows = math.ceil(height / PLOT_ROW_PIXELS)
        if picture_rows + 1 > page_rows:  # taller than a page: shrink it to fit one
            shrink = (page_rows - 1) / picture_rows
            width, height = width * shrink, height * shrink
            picture_rows = math.ceil(height / PLOT_ROW_PIXELS)
        block = 1 + picture_rows + 2  # title, picture, spacing
        if used and used + block - 2 > page_rows:
            ws.row_breaks.append(Break(id=row - 1))
            used = 0
        sheet.put(row, 1, name, fit=False).font = _font(bold=True, size=12)
        picture = SheetImage(io.BytesIO(data))
        picture.width, picture.height = width, height
        ws.add_image(picture, f"A{row + 1}")
        for filled in range(row, row + block):
            ws.row_dimensions[filled].height = PLOT_ROW_POINTS
        row += block
        used += block
    sheet.page_setup(None, orientation="portrait")


def render_workbook(content: ReportContent, images: Mapping[str, bytes] | None = None):
    """The report as an :class:`openpyxl.Workbook` (not saved).

    Images that cannot be read are left out with a warning added to the Summary.
    """
    from openpyxl import Workbook

    warnings = list(content.warnings)
    pictures = readable_images(images, warnings)
    if len(warnings) != len(content.warnings):
        content = replace(
            content,
            warnings=tuple(warnings),
            summary=content.summary
            + tuple(
                SummaryRow(style="text", label=f"• {text}")
                for text in warnings[len(content.warnings) :]
            ),
        )
    workbook = Workbook()
    summary = workbook.active
    summary.title = SHEET_SUMMARY
    free_row = _write_summary(summary, content)
    _write_intervals(workbook.create_sheet(SHEET_INTERVALS), content)
    plan_sheet = workbook.create_sheet(SHEET_PLAN)
    _write_plan_curves(plan_sheet, content)
    p3_sheet = workbook.create_sheet(SHEET_P3)
    _write_p3(p3_sheet, content)
    rounds_sheet = workbook.create_sheet(SHEET_ROUNDS)
    _write_rounds(rounds_sheet, content)
    _write_inputs(workbook.create_sheet(SHEET_INPUTS), content)
    # The charts read the tables of their sheets and sit on the Summary, which a manager
    # reads (and prints) first.
    charts = [
        *_plan_charts(plan_sheet, content),
        *_p3_charts(p3_sheet, content),
        *_history_charts(rounds_sheet, content),
    ]
    for chart in charts:
        chart.visible_cells_only = False  # their data sit in hidden columns and sheets
    _place_charts(summary, charts, free_row + 1)
    # Data behind the charts and the machine-readable inputs: kept, read back, not shown
    # or printed (Excel's Unhide shows them).
    for hidden in (plan_sheet, p3_sheet, workbook[SHEET_INPUTS]):
        hidden.sheet_state = "hidden"
    if pictures:
        _write_plots(workbook.create_sheet(SHEET_PLOTS), pictures)
    return workbook


@dataclass(frozen=True, slots=True, kw_only=True)
class WrittenReport:
    """A report written to ``path``: what it holds, and the notes about its input.

    Attributes
    ----------
    path : Path
        Where the report went.
    content : ReportContent
        What the report shows.
    problems : tuple of str
        What the reader should know about the input (rows that could not be used, which
        round was chosen and why).
    """

    path: Path
    content: ReportContent
    problems: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """The ``prplanner report --json`` document (its JSON contract)."""
        return {
            "output": str(self.path),
            **self.content.to_dict(),
            "problems": list(self.problems),
        }


def write_report(
    path: str | os.PathLike[str],
    state: SessionState,
    *,
    round_name: str | Round | None = None,
    margin: float | None = None,
    confidence: float | None = None,
    images: Mapping[str, bytes] | None = None,
    sources: Iterable[str | os.PathLike[str]] = (),
    expected: FileFingerprint | None = None,
    purpose: str = "report",
    judge_targets: bool = True,
) -> ReportContent:
    """Write the Excel report of ``state`` to ``path`` atomically.

    Parameters
    ----------
    path : str or path-like
        Destination ``.xlsx``; its folder must exist. An existing file is replaced only
        once the new one is completely written.
    state : SessionState
        The session (rounds included).
    round_name, margin, confidence
        See :func:`build_report`.
    images : mapping of str to bytes, optional
        PNG snapshots of the app's plots, by title; they go on a ``Plots`` sheet.
    sources : iterable of path-like
        The files the session came from: the report never replaces one of them.
    expected : FileFingerprint, optional
        The destination as it was read or last saved; refused if it changed since.
    purpose : str
        "report" or "session": names the file a refusal suggests instead.
    judge_targets
        See :func:`core.workbook.report_content.build_report`.

    Returns
    -------
    ReportContent
        What the report shows (the CLI prints a summary of it).

    Raises
    ------
    InputError
        Bad arguments (see :func:`build_report`), or a destination that is not ``.xlsx``.
    core.workbook.safe_io.SaveError
        The file could not be written, or must not be (one of ``sources``, a file PR
        Planner did not write, read-only, changed since read); the old file is intact.
    """
    destination = Path(path)
    if destination.suffix.lower() != ".xlsx":
        raise InputError(f"{destination}: the report must be an .xlsx file")
    sources = tuple(sources)
    check_destination(destination, sources=sources, expected=expected, purpose=purpose)
    if purpose == "report" and state.rounds_workbook:
        # Sent to others: where the lead keeps their rounds workbook on disk is theirs.
        state = dataclasses.replace(state, rounds_workbook="")
    content = build_report(
        state,
        round_name=round_name,
        margin=margin,
        confidence=confidence,
        judge_targets=judge_targets,
    )
    workbook = render_workbook(content, images)
    mark_as_ours(workbook)  # its save stamps the mark and closes the file even on failure
    if purpose == "report":  # a file sent to others: Save in the app asks for a new name
        workbook.properties.category = REPORT_CATEGORY
    atomic_write(destination, workbook.save, sources=sources, expected=expected, purpose=purpose)
    return content
