"""The report prints for a manager: readable type on every visible sheet, charts with
percent axes inside [0, 100 %], words instead of keys, and the data behind the charts and
the machine-readable inputs on hidden sheets and columns (still read back).

The print-size estimate is the standard one: at 100 % an A4 landscape page with 0.5" margins
holds about 140 Excel width units (one unit is one character of the 11 pt default font),
so a sheet whose visible columns are W units wide prints at 140/W of full size; 8 pt
needs at most 140 * 11/8 = 192 units.
"""

from __future__ import annotations

import re
import zipfile

import openpyxl
import pytest
from openpyxl.utils import get_column_letter

from core.session import SessionState
from core.workbook.report import (
    PREVALENCE_AXIS_FORMAT,
    SHEET_INPUTS,
    SHEET_P3,
    SHEET_PLAN,
    SHEET_ROUNDS,
    write_report,
)
from core.workbook.rounds import read_rounds
from core.workbook.session_io import open_session
from tests.conftest import PROJECT_ROOT, SHARED_FIXTURES

LANDSCAPE_UNITS = 140
PORTRAIT_UNITS = 95
DEFAULT_WIDTH = 8.43
#: Internal names that must not be visible: method keys and dotted session keys.
INTERNAL = re.compile(
    r"\b(bayes_mc|katz_log|agresti_coull|clopper_pearson|fpr)\b|\b[a-z_]+\.[a-z_]+(\.\w+)+\b"
)


@pytest.fixture(params=["example session", "two classifiers"])
def report(request, tmp_path):
    if request.param == "example session":
        state, _problems = open_session(PROJECT_ROOT / "resources" / "example_session.xlsx")
    else:
        book = read_rounds(SHARED_FIXTURES / "rounds_simple.xlsx")
        state = SessionState(rounds=book.rounds)
    path = tmp_path / "report.xlsx"
    write_report(path, state)
    workbook = openpyxl.load_workbook(path)
    workbook.source_path = path  # for checks of the written XML
    return workbook


def _visible_width(ws) -> float:
    total = 0.0
    for column in range(1, ws.max_column + 1):
        dimension = ws.column_dimensions[get_column_letter(column)]
        if not dimension.hidden:
            total += dimension.width or DEFAULT_WIDTH
    return total


def test_every_visible_sheet_prints_one_page_wide_at_8_pt_or_more(report):
    for ws in report.worksheets:
        if ws.sheet_state != "visible":
            continue
        setup = ws.page_setup
        assert ws.sheet_properties.pageSetUpPr.fitToPage, ws.title
        assert (setup.fitToWidth, setup.fitToHeight) == (1, 0), ws.title
        assert ws.print_title_rows, ws.title
        if ws.title == "Plots":
            continue  # pictures, scaled with the page
        page = LANDSCAPE_UNITS if setup.orientation == "landscape" else PORTRAIT_UNITS
        scale = min(1.0, page / _visible_width(ws))
        assert 11 * scale >= 8, (ws.title, round(11 * scale, 1))


def test_chart_data_and_inputs_are_hidden_and_still_read_back(report, tmp_path):
    states = {ws.title: ws.sheet_state for ws in report.worksheets}
    assert states[SHEET_PLAN] == states[SHEET_P3] == states[SHEET_INPUTS] == "hidden"
    assert states[SHEET_ROUNDS] == "visible"
    rounds = report[SHEET_ROUNDS]
    headers = [cell.value for cell in rounds[1]]
    hidden = {
        header
        for column, header in enumerate(headers, start=1)
        if rounds.column_dimensions[get_column_letter(column)].hidden
    }
    assert {"Source sheet", "Source row", "k", "s"} <= hidden
    assert not {"Round", "TP", "FP", "FN", "TN", "Precision", "Recall"} & hidden
    # the intervals print beside their estimates, as the guide says
    assert not {"Precision lower (Wilson)", "Recall upper (Katz log)"} & hidden
    path = tmp_path / "again.xlsx"
    report.save(path)
    assert read_rounds(path).rounds  # hidden columns and sheets are read as before


def _format(axis) -> str:
    """An axis's number format as read back (openpyxl wraps it in a NumFmt)."""
    return getattr(axis.number_format, "formatCode", axis.number_format)


def test_charts_have_percent_axes_inside_0_and_100_percent(report):
    summary = report.worksheets[0]
    charts = summary._charts
    assert charts
    for chart in charts:
        assert _format(chart.y_axis) == "0%"
        assert (chart.y_axis.scaling.min, chart.y_axis.scaling.max) == (0, 1)
    prevalence_axes = [_format(c.x_axis) for c in charts if c.x_axis.scaling.logBase]
    assert PREVALENCE_AXIS_FORMAT in prevalence_axes
    # Their data sit in hidden columns and sheets: every chart plots hidden cells too.
    with zipfile.ZipFile(report.source_path) as archive:
        parts = [name for name in archive.namelist() if name.startswith("xl/charts/chart")]
        assert len(parts) == len(charts)
        for name in parts:
            assert b'<plotVisOnly val="0"' in archive.read(name), name


def test_no_internal_name_is_visible(report):
    for ws in report.worksheets:
        if ws.sheet_state != "visible":
            continue
        hidden_columns = {
            column
            for column in range(1, ws.max_column + 1)
            if ws.column_dimensions[get_column_letter(column)].hidden
        }
        for row in ws.iter_rows():
            for cell in row:
                if cell.column in hidden_columns or not isinstance(cell.value, str):
                    continue
                assert not INTERNAL.search(cell.value), (ws.title, cell.coordinate, cell.value)
