"""The Excel report: sheets, formats, charts, text never a formula, rounds read
back unchanged, exact numbers, atomic saves and ``prplanner report``."""

from __future__ import annotations

import dataclasses
import datetime as dt
import errno
import io
import itertools
import json
import math
import re
import zipfile

import openpyxl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from core.cli import main
from core.confusion import ConfusionMatrix
from core.errors import InputError
from core.evaluation import evaluate
from core.session import SessionState, flatten
from core.workbook import report as report_module
from core.workbook import report_content, safe_io
from core.workbook.report import (
    ROUNDS_HEADER,
    SHEET_INPUTS,
    SHEET_INTERVALS,
    SHEET_P3,
    SHEET_PLAN,
    SHEET_PLOTS,
    SHEET_ROUNDS,
    SHEET_SUMMARY,
    build_report,
    write_report,
)
from core.workbook.report_content import METRIC_WORDS
from core.workbook.rounds import (
    _TOTAL_LABEL,
    EARLIEST_ROUND_DATE,
    Round,
    WorkbookError,
    classifier_key,
    field_of_header,
    read_rounds,
)
from core.workbook.safe_io import SaveError

FORMULA_NAMES = ('=HYPERLINK("http://example.com","click")', "+1", "-minus", "@SUM(A1)")


def without_location(item: Round) -> Round:
    """A round without the sheet and row it was read from (those change on rewrite)."""
    return dataclasses.replace(item, sheet="", row=0)


def make_round(name="R-1", **changes) -> Round:
    fields = dict(
        sheet="Rounds",
        row=2,
        round=name,
        date=dt.date(2026, 3, 2),
        classifier="travel",
        k=41_200 / 1_251_000,
        population_pos=41_200,
        population_neg=1_251_000,
        s=1.8,
        tp=225,
        fp=31,
        fn=79,
        tn=4_361,
        notes=None,
    )
    fields.update(changes)
    return Round(**fields)


@pytest.fixture(scope="module")
def fixture_rounds(shared_fixtures):
    return read_rounds(shared_fixtures / "rounds_simple.xlsx").rounds


@pytest.fixture(scope="module")
def written(tmp_path_factory, fixture_rounds):
    """A report of the fixture's rounds, evaluating TR-03, with two plot snapshots."""
    path = tmp_path_factory.mktemp("report") / "report.xlsx"
    images = {"Plan curves": _png(640, 360), "P3 curve": _png(300, 200)}
    content = write_report(
        path, SessionState(rounds=fixture_rounds), round_name="TR-03", images=images
    )
    return path, content


def _png(width: int, height: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (40, 90, 160)).save(buffer, format="PNG")
    return buffer.getvalue()


def _sheet_rows(path, sheet, data_only=True):
    workbook = openpyxl.load_workbook(path, data_only=data_only)
    return [list(row) for row in workbook[sheet].iter_rows(values_only=True)]


# --- sheets and layout ----------------------------------------------------------------------


def test_the_report_has_every_sheet_in_order(written):
    path, _ = written
    workbook = openpyxl.load_workbook(path)
    assert workbook.sheetnames == [
        SHEET_SUMMARY,
        SHEET_INTERVALS,
        SHEET_PLAN,
        SHEET_P3,
        SHEET_ROUNDS,
        SHEET_INPUTS,
        SHEET_PLOTS,
    ]


def test_header_rows_are_frozen_and_columns_have_widths(written):
    path, _ = written
    workbook = openpyxl.load_workbook(path)
    assert workbook[SHEET_SUMMARY].freeze_panes == "A5"
    assert workbook[SHEET_INTERVALS].freeze_panes == "A2"
    for name in (SHEET_PLAN, SHEET_P3, SHEET_ROUNDS):
        assert workbook[name].freeze_panes == "B2"
    assert workbook[SHEET_INPUTS].freeze_panes == "A2"
    rounds = workbook[SHEET_ROUNDS]
    for index, header in enumerate(ROUNDS_HEADER, start=1):
        letter = openpyxl.utils.get_column_letter(index)
        width = rounds.column_dimensions[letter].width
        longest = max(
            len(_shown(rounds.cell(row=r, column=index))) for r in range(2, rounds.max_row + 1)
        )
        assert width >= longest + 1, (header, width, longest)


def _shown(cell) -> str:
    """Roughly what Excel shows for a cell, to check that columns fit (no #####)."""
    value = cell.value
    if value is None:
        return ""
    if isinstance(value, (dt.date, dt.datetime)):
        return "2026-01-01"
    if isinstance(value, str):
        return value
    fmt = cell.number_format
    if fmt == "0.0%":
        return f"{value:.1%}"
    if fmt == "#,##0":
        return f"{value:,.0f}"
    if fmt == "0.000000":
        return f"{value:.6f}"
    if fmt == "0.000":
        return f"{value:.3f}"
    return str(value)


def test_number_formats_percent_thousands_dates(written):
    path, _ = written
    sheet = openpyxl.load_workbook(path)[SHEET_ROUNDS]
    header = [cell.value for cell in sheet[1]]
    row = sheet[2]
    assert row[header.index("Precision")].number_format == "0.0%"
    assert row[header.index("Recall upper (Katz log)")].number_format == "0.0%"
    assert row[header.index("Predicted negative (population)")].number_format == "#,##0"
    assert row[header.index("TN")].number_format == "#,##0"
    assert row[header.index("Date")].number_format == "yyyy-mm-dd"
    assert row[header.index("Date")].is_date
    intervals = openpyxl.load_workbook(path)[SHEET_INTERVALS]
    assert intervals["D2"].number_format == RATE_FORMAT


#: About three significant digits for rates that can be tiny (FPR, prevalence).
RATE_FORMAT = "[<0.0001]0.00000%;[<0.01]0.000%;0.00%"


def test_rare_rates_are_percentages_with_enough_digits(written):
    path, content = written
    workbook = openpyxl.load_workbook(path)
    summary = {row[0].value: row for row in workbook[SHEET_SUMMARY].iter_rows() if row[0].value}
    for label in ("False positive rate", "Prevalence"):
        value, lower = summary[label][1:3]
        assert value.number_format == RATE_FORMAT, label
        assert lower.value is None or lower.number_format == RATE_FORMAT
    # TR-03's FPR is 0.443 %: "0.443%", not "0.4%" (and never 4.43E-03)
    fpr = content.evaluation.estimates.fpr
    assert 0.001 < fpr < 0.01
    assert report_module._shown(fpr, "rate") == f"{100 * fpr:.3f}%"
    assert f"{fpr:.3%}" in summary["False positive rate"][4].value
    assert report_module._shown(1e-5, "rate") == "0.00100%"
    assert report_module._shown(0.0443, "rate") == "4.43%"
    p3 = workbook[SHEET_P3]
    assert all(p3.cell(row=r, column=1).number_format == RATE_FORMAT for r in (2, 30))
    info = {p3.cell(row=r, column=7).value: p3.cell(row=r, column=8) for r in range(2, 12)}
    assert info["Estimated prevalence of the population"].number_format == RATE_FORMAT
    assert "E+" not in "".join(
        cell.number_format for row in workbook[SHEET_SUMMARY].iter_rows() for cell in row
    )


def test_every_sheet_prints_one_page_wide(written):
    path, _ = written
    workbook = openpyxl.load_workbook(path)
    for sheet in workbook.worksheets:
        assert sheet.page_setup.fitToWidth == 1, sheet.title
        assert sheet.page_setup.fitToHeight == 0, sheet.title
        assert sheet.sheet_properties.pageSetUpPr.fitToPage, sheet.title
    assert workbook[SHEET_SUMMARY].page_setup.orientation == "landscape"
    assert workbook[SHEET_ROUNDS].page_setup.orientation == "landscape"
    assert workbook[SHEET_P3].page_setup.orientation == "portrait"
    # the P3 table is about 50 rows (one printed page), still a log grid
    p3_rows = _sheet_rows(path, SHEET_P3)[1:]
    etas = [row[0] for row in p3_rows if isinstance(row[0], float)]
    assert 40 <= len(etas) <= 50
    ratios = [b / a for a, b in itertools.pairwise(etas)]
    assert max(ratios) == pytest.approx(min(ratios), rel=1e-9)
    # Summary at a readable size: its columns fit a landscape A4 page (about 135
    # characters between the margins) without shrinking
    summary = workbook[SHEET_SUMMARY]
    total = sum(summary.column_dimensions[letter].width for letter in "ABCDE")
    assert total <= 135


def test_native_charts_with_log_axes(written):
    path, _ = written
    with zipfile.ZipFile(path) as archive:
        charts = {
            name: archive.read(name).decode("utf-8")
            for name in archive.namelist()
            if name.startswith("xl/charts/chart")
        }
        drawings = [name for name in archive.namelist() if name.startswith("xl/drawings/")]
        media = [name for name in archive.namelist() if name.startswith("xl/media/")]
    # plan curves: precision and recall; P3; history of travel and of finance
    assert len(charts) == 5
    log_charts = [xml for xml in charts.values() if re.search(r'<(?:c:)?logBase val="10', xml)]
    assert len(log_charts) == 3
    assert sum(bool(re.search(r"<(?:c:)?lineChart>", xml)) for xml in charts.values()) == 2
    assert drawings
    assert len(media) == 2  # the two PNG snapshots


def test_plot_snapshots_and_a_broken_one(tmp_path):
    path = tmp_path / "r.xlsx"
    content = write_report(
        path, SessionState(), images={"good": _png(50, 40), "broken": b"not a png"}
    )
    assert not any("broken" in text for text in content.warnings)  # content is pre-images
    summary = " ".join(str(v) for row in _sheet_rows(path, SHEET_SUMMARY) for v in row if v)
    assert "the plot 'broken' is not a readable image" in summary
    with zipfile.ZipFile(path) as archive:
        assert len([n for n in archive.namelist() if n.startswith("xl/media/")]) == 1
    assert _sheet_rows(path, SHEET_PLOTS)[0][0] == "good"


def test_rounds_columns_are_the_readers_and_no_extra_column_matches_an_alias():
    expected = {
        "Round": "round",
        "Date": "date",
        "Classifier": "classifier",
        "Model version": "model_version",
        "Predicted positive (population)": "population_pos",
        "Predicted negative (population)": "population_neg",
        "k": "k",
        "s": "s",
        "TP": "tp",
        "FP": "fp",
        "FN": "fn",
        "TN": "tn",
        "Notes": "notes",
    }
    for header in ROUNDS_HEADER:
        assert field_of_header(header) == expected.get(header), header


# --- content ---------------------------------------------------------------------------------


def test_summary_gives_hand_computed_estimates_of_the_chosen_round(written, fixture_rounds):
    path, content = written
    chosen = next(item for item in fixture_rounds if item.round == "TR-03")
    assert content.evaluated_round == chosen
    rows = {row[0]: row for row in _sheet_rows(path, SHEET_SUMMARY) if row[0]}
    precision = chosen.tp / (chosen.tp + chosen.fp)
    pi0 = chosen.fn / (chosen.fn + chosen.tn)
    recall = 1 / (1 + pi0 / (chosen.k * precision))
    assert rows["Precision"][1] == pytest.approx(precision, rel=1e-12)
    assert rows["Recall"][1] == pytest.approx(recall, rel=1e-12)
    # Wilson by hand
    n, z = chosen.tp + chosen.fp, 1.959963984540054
    center = (precision + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(precision * (1 - precision) / n + z * z / (4 * n * n))
    assert rows["Precision"][2] == pytest.approx(center - half, rel=1e-9)
    assert rows["Precision"][3] == pytest.approx(center + half, rel=1e-9)
    assert "Wilson" in rows["Precision"][4]
    assert rows["Subject"][1] == "round TR-03 (travel)"
    assert rows["Flagged items to label"][1] == content.plan.n_pos
    assert rows["Total labels"][1] == content.plan.total
    assert "Warnings" in rows and "Plan for the next round" in rows
    # The interval to quote is marked in the list by method, once per metric.
    starred = [label for label in rows if isinstance(label, str) and label.endswith("★ quote this")]
    assert starred == [
        "Precision: Wilson score ★ quote this",
        "Recall: Katz log-ratio ★ quote this",
    ]
    assert rows[starred[0]][2] == pytest.approx(center - half, rel=1e-9)


def test_intervals_sheet_is_evaluation_to_rows(written):
    path, content = written
    rows = _sheet_rows(path, SHEET_INTERVALS)
    assert rows[0][:2] == ["Metric", "Method"]
    expected = content.evaluation.to_rows()
    assert len(rows) - 1 == len(expected)
    for got, (metric, method, estimate, lower, upper, note) in zip(rows[1:], expected, strict=True):
        assert got[0] == METRIC_WORDS[metric] and got[1] == method
        assert got[3:6] == [estimate, lower, upper]  # bit for bit
        assert (got[6] or "") == note


def test_p3_sheet_matches_the_closed_form(written):
    path, content = written
    rows = _sheet_rows(path, SHEET_P3)
    assert rows[0][:5] == ["Prevalence", "Precision", "Lower", "Upper", "F1"]
    tpr = content.evaluation.estimates.recall
    fpr = content.evaluation.estimates.fpr
    for eta, precision, lower, upper, f1 in (row[:5] for row in rows[1:]):
        expected = tpr * eta / (tpr * eta + fpr * (1 - eta))
        assert precision == pytest.approx(expected, rel=1e-12)
        assert lower <= precision <= upper
        assert f1 == pytest.approx(2 * expected * tpr / (expected + tpr), rel=1e-12)
    etas = [row[0] for row in rows[1:]]
    state = SessionState()
    assert etas[0] == pytest.approx(state.prevalence.eta_min)
    assert etas[-1] == pytest.approx(state.prevalence.eta_max)


def test_plan_curves_frequentist_precision_width_is_the_wald_width(written):
    path, content = written
    rows = _sheet_rows(path, SHEET_PLAN)
    header = rows[0]
    column = header.index("Precision width, standard interval")
    v = content.state.plan.v
    k = content.evaluated_round.k
    p = content.evaluation.estimates.precision
    z = 1.959963984540054
    curve_rows = rows[1 : rows.index([None] * len(header))]
    assert len(curve_rows) == report_content.PLAN_CURVE_POINTS
    for row in curve_rows:
        s = row[0]
        n1 = v * k * s / (k * s + 1)
        assert row[column] == pytest.approx(2 * z * math.sqrt(p * (1 - p) / n1), rel=1e-9)
    assert any(str(h).startswith("Recall width, prior strength") for h in header)
    optimum = rows[len(curve_rows) + 2]
    assert optimum[:2] == ["Curve", "Best s (s*)"]
    assert rows[len(curve_rows) + 3][:2] == [
        "standard interval",
        pytest.approx(content.plan.s_star),
    ]


def test_default_state_reports_the_evaluate_tab_and_the_plan_tab(tmp_path):
    path = tmp_path / "default.xlsx"
    state = SessionState()
    content = write_report(path, state)
    assert content.evaluated_round is None
    assert content.evaluation.matrix == state.evaluate.matrix
    assert content.plan.precision == state.plan.expected_precision
    assert content.chosen_design.method == "fixed"
    assert content.chosen_design.total == state.plan.v
    assert read_rounds(path).rounds == ()


def test_margin_and_confidence_overrides_reach_the_plan_and_the_inputs(tmp_path):
    path = tmp_path / "r.xlsx"
    content = write_report(path, SessionState(), margin=0.03, confidence=0.9)
    assert content.plan.target_margin_precision == 0.03
    assert content.plan.target_margin_recall == 0.03
    assert content.evaluation.confidence == 0.9
    inputs = dict((row[0], row[1]) for row in _sheet_rows(path, SHEET_INPUTS)[1:] if row[0])
    assert inputs["plan.margin_precision"] == 0.03
    assert inputs["confidence"] == 0.9


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"round_name": "nope"}, "no round named 'nope'"),
        ({"margin": 0.6}, "margin must be strictly between 0 and 0.5"),
        ({"confidence": 1.2}, "confidence must be strictly between 0.5 and 1"),
    ],
)
def test_bad_arguments_are_input_errors(tmp_path, kwargs, message):
    state = SessionState(rounds=(make_round("A"),))
    with pytest.raises(InputError, match=message):
        write_report(tmp_path / "r.xlsx", state, **kwargs)
    assert not (tmp_path / "r.xlsx").exists()


def test_a_round_that_cannot_be_evaluated_still_gives_a_report(tmp_path):
    empty = make_round("EMPTY", tp=0, fp=0)
    content = write_report(tmp_path / "r.xlsx", SessionState(rounds=(empty,)), round_name="EMPTY")
    assert content.evaluation is None
    assert any("predicted-positive sample is empty" in text for text in content.warnings)
    assert [without_location(r) for r in read_rounds(tmp_path / "r.xlsx").rounds] == [
        without_location(empty)
    ]


def test_evaluation_with_the_finite_population_correction(tmp_path):
    from core.workbook.session_io import round_key

    # The round the Evaluate tab shows takes its box; another round its own design's
    # correction (A was not drawn by the rule: none; review 15).
    state = dataclasses.replace(
        SessionState(rounds=(make_round("A"),), current_round=round_key(make_round("A"))),
        evaluate=dataclasses.replace(SessionState().evaluate, fpc=True, replicates=500),
    )
    other = dataclasses.replace(state, current_round="")
    assert write_report(tmp_path / "o.xlsx", other, round_name="A").evaluation.fpc is None
    content = write_report(tmp_path / "r.xlsx", state, round_name="A")
    assert content.evaluation.fpc is not None
    reference = evaluate(
        make_round("A").matrix,
        population=make_round("A").population,
        replicates=500,
        seed=state.evaluate.seed,
        fpc=True,
    )
    assert content.evaluation.to_rows() == reference.to_rows()


def test_inputs_sheet_is_schema_version_then_flatten(written):
    path, content = written
    rows = _sheet_rows(path, SHEET_INPUTS)
    assert rows[0] == ["key", "value", "exact (JSON)"]
    assert rows[1][0] == "schema_version" and rows[1][1] == 1
    keys = [row[0] for row in rows[3:] if row[0] and (row[1] is not None or row[2])]
    assert keys == [key for key, _ in flatten(content.state)]
    for row in rows[3:]:
        if row[2]:
            json.loads(row[2])


# --- text is text ----------------------------------------------------------------------------


@pytest.mark.parametrize("data_only", [False, True])
def test_formula_like_text_is_written_as_text(tmp_path, data_only):
    rounds = tuple(
        make_round(name, row=index + 2, classifier=name, notes=name)
        for index, name in enumerate(FORMULA_NAMES)
    )
    path = tmp_path / "formulas.xlsx"
    write_report(path, SessionState(rounds=rounds), round_name=FORMULA_NAMES[0])
    workbook = openpyxl.load_workbook(path, data_only=data_only)
    sheet = workbook[SHEET_ROUNDS]
    for index, name in enumerate(FORMULA_NAMES, start=2):
        for header in ("Round", "Classifier", "Notes"):
            cell = sheet.cell(row=index, column=ROUNDS_HEADER.index(header) + 1)
            assert cell.value == name
            assert cell.data_type == "s"
            assert cell.quotePrefix
    summary_values = [c.value for row in workbook[SHEET_SUMMARY].iter_rows() for c in row]
    assert f"round {FORMULA_NAMES[0]} ({FORMULA_NAMES[0]})" in summary_values
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if name.startswith("xl/worksheets/"):
                assert "<f>" not in archive.read(name).decode("utf-8"), name
    assert [r.round for r in read_rounds(path).rounds] == list(FORMULA_NAMES)


# --- rounds read back unchanged ----------------------------------------------------------------


@pytest.mark.parametrize("fixture", ["rounds_simple.xlsx", "rounds_messy.xlsx"])
def test_fixture_rounds_are_read_back_unchanged(tmp_path, fixture, shared_fixtures):
    source = shared_fixtures / fixture
    rounds = read_rounds(source).rounds
    path = tmp_path / "report.xlsx"
    write_report(path, SessionState(rounds=rounds))
    again = read_rounds(path)
    assert again.refused == ()
    # A round without a name is written under the name the app shows ("Rounds row 1"),
    # so that a manager reading the report can tell the rounds apart (trial 14).
    named = [dataclasses.replace(r, round=r.name) for r in rounds]
    assert [without_location(r) for r in again.rounds] == [without_location(r) for r in named]
    assert [r.sheet for r in again.rounds] == [SHEET_ROUNDS] * len(rounds)
    assert [r.row for r in again.rounds] == list(range(2, len(rounds) + 2))
    # both of the reader's engines agree on the report
    assert read_rounds(path, engine="openpyxl") == again


def test_numbers_keep_every_digit(tmp_path):
    awkward = (
        make_round("A", k=0.1 + 0.2, population_pos=None, population_neg=None, s=1 / 3),
        # counts beyond float's 15 digits of text, within populations that hold them
        make_round(
            "B",
            tp=2**49 + 1,
            fp=10**15 - 2**49 - 1,
            fn=0,
            tn=123456789012345,
            population_pos=10**15,
            population_neg=123456789012345,
            k=10**15 / 123456789012345,
        ),
        make_round("C", k=1e-12, population_pos=None, population_neg=None, s=1e300),
        make_round("D", population_pos=10**15, population_neg=3, k=10**15 / 3, fn=1, tn=2),
        make_round("E", date=EARLIEST_ROUND_DATE),  # the first day a round can have
        make_round("F", date=dt.date(2000, 2, 29)),
        make_round("G", date=dt.date(9999, 12, 31), notes="line one\nline two\tend"),
    )
    path = tmp_path / "exact.xlsx"
    write_report(path, SessionState(rounds=awkward))
    for engine in ("fast", "openpyxl"):
        again = read_rounds(path, engine=engine)
        assert again.refused == ()
        assert [without_location(r) for r in again.rounds] == [without_location(r) for r in awkward]


def test_numbers_beyond_exact_counts_refuse_their_row_and_name_the_cell(tmp_path):
    """Counts above 10**15 (no longer exact as floats) and a denormal k cannot be a round;
    the row is refused with the cell named, the other rows load."""
    rounds = (
        make_round("ok"),
        make_round("huge", tp=2**62 + 1, fp=10**17 + 3, tn=12345678901234567),
        make_round("tiny k", k=5e-324, population_pos=None, population_neg=None),
        make_round("huge population", population_pos=10**20 + 7, population_neg=3, k=1e20 / 3),
    )
    path = tmp_path / "extreme.xlsx"
    write_report(path, SessionState(rounds=rounds))
    for engine in ("fast", "openpyxl"):
        again = read_rounds(path, engine=engine)
        assert [r.round for r in again.rounds] == ["ok"]
        reasons = [item.reason for item in again.refused]
        assert len(reasons) == 3
        assert "TP in cell" in reasons[0] and "too large to be a count" in reasons[0]
        assert "FP in cell" in reasons[0] and "TN in cell" in reasons[0]
        assert "too small to be an imbalance ratio" in reasons[1]
        assert "too large to be a count" in reasons[2]


_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Cn")), min_size=1, max_size=16
)
_PREFIXED = st.builds(lambda prefix, text: prefix + text, st.sampled_from(["", *"=+-@"]), _TEXT)


def _usable(text: str) -> bool:
    # What read_rounds hands out: stripped, non-empty; a round column reading "Total..."
    # is a totals row, never a round.
    return bool(text) and text == text.strip()


names = _PREFIXED.filter(_usable)
round_names = names.filter(lambda text: not _TOTAL_LABEL.match(text))
# Everything a round may hold: counts up to 10**15 (exact as floats), k from 1e-12.
counts = st.one_of(st.integers(0, 1_000), st.integers(0, 10**15))
positive_floats = st.floats(min_value=1e-12, max_value=1e300, allow_nan=False, allow_infinity=False)


@st.composite
def rounds_strategy(draw, sheet="Rounds", row=None):
    with_counts = draw(st.booleans())
    tp, fp, fn, tn = (draw(counts) for _ in range(4))
    population_pos = population_neg = None
    if with_counts and tp + fp <= 10**15:
        # a stratum holds at least the items labeled from it (the reader refuses less)
        population_pos = draw(st.integers(max(1, tp + fp), 10**15))
        # k = N1/N0 stays at or above the reader's 1e-12 floor
        lowest, highest = max(1, fn + tn), min(10**15, population_pos * 10**12)
        population_neg = draw(st.integers(lowest, highest)) if lowest <= highest else None
    if population_pos is not None and population_neg is not None:
        k = population_pos / population_neg
    else:
        population_pos = population_neg = None
        k = draw(positive_floats)
    return Round(
        sheet=draw(names) if sheet is None else sheet,
        row=draw(st.integers(1, 1_048_576)) if row is None else row,
        round=draw(st.none() | round_names),
        date=draw(st.none() | st.dates(EARLIEST_ROUND_DATE)),
        classifier=draw(st.none() | names),
        k=k,
        population_pos=population_pos,
        population_neg=population_neg,
        s=draw(st.none() | positive_floats),
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
        notes=draw(st.none() | names),
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    # Distinct rounds, as in a real history: the reader leaves a copy out (fuzz 17).
    rounds=st.lists(
        rounds_strategy(),
        min_size=1,
        max_size=6,
        unique_by=lambda r: (
            classifier_key(r.classifier),
            r.name.casefold(),
            r.date,
            r.tp,
            r.fp,
            r.fn,
            r.tn,
            r.population_pos,
            r.population_neg,
            r.k,
        ),
    )
)
def test_random_rounds_are_read_back_equal(tmp_path_factory, rounds):
    path = tmp_path_factory.mktemp("prop") / "random.xlsx"
    write_report(path, SessionState(rounds=tuple(rounds)))
    again = read_rounds(path)
    assert again.refused == ()
    named = [dataclasses.replace(r, round=r.name) for r in rounds]
    assert [without_location(r) for r in again.rounds] == [without_location(r) for r in named]


# --- safety ----------------------------------------------------------------------------------


def test_a_full_disk_leaves_the_old_report_intact(tmp_path, monkeypatch):
    path = tmp_path / "report.xlsx"
    write_report(path, SessionState())
    before = path.read_bytes()

    def full_disk(self, filename):
        with open(filename, "wb") as stream:
            stream.write(b"PK\x03\x04 half a workbook")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(safe_io, "save_workbook", full_disk)  # what a marked workbook's save calls
    with pytest.raises(SaveError, match=r"disk is full.*unchanged") as caught:
        write_report(path, SessionState(rounds=(make_round(),)))
    assert isinstance(caught.value, InputError)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.xlsx"]


def test_a_read_only_folder_leaves_the_old_report_intact(tmp_path, monkeypatch):
    path = tmp_path / "report.xlsx"
    write_report(path, SessionState())
    before = path.read_bytes()

    def read_only(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    # Tests run as root, where chmod does not stop writes: simulate the refusal.
    monkeypatch.setattr(safe_io.tempfile, "mkstemp", read_only)
    with pytest.raises(SaveError, match=r"read-only.*unchanged"):
        write_report(path, SessionState())
    assert path.read_bytes() == before


def test_a_destination_that_is_not_xlsx_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"must be an \.xlsx file"):
        write_report(tmp_path / "report.csv", SessionState())


def test_build_report_touches_no_file(tmp_path):
    content = build_report(SessionState())
    assert content.summary and content.intervals.rows
    assert list(tmp_path.iterdir()) == []


# --- command line ------------------------------------------------------------------------------


def test_cli_report_then_rounds_reads_them_back_unchanged(tmp_path, capsys, shared_fixtures):
    source = shared_fixtures / "rounds_messy.xlsx"
    output = tmp_path / "report.xlsx"
    assert main(["report", str(source), "-o", str(output), "--round", "TR-02"]) == 0
    out = capsys.readouterr().out
    assert f"wrote {output}" in out
    assert "TR-02" in out
    assert main(["rounds", str(output), "--json"]) == 0
    written_rounds = json.loads(capsys.readouterr().out)["rounds"]
    assert main(["rounds", str(source), "--json"]) == 0
    original = json.loads(capsys.readouterr().out)["rounds"]
    strip = lambda item: {k: v for k, v in item.items() if k not in ("sheet", "row")}  # noqa: E731
    assert [strip(item) for item in written_rounds] == [strip(item) for item in original]


def test_cli_report_of_a_plain_workbook_reports_its_most_recent_round(
    tmp_path, capsys, shared_fixtures
):
    source = shared_fixtures / "rounds_simple.xlsx"
    output = tmp_path / "report.xlsx"
    code = main(
        [
            "report",
            str(source),
            "-o",
            str(output),
            "--margin",
            "0.03",
            "--confidence",
            "0.9",
            "--json",
        ]
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["output"] == str(output)
    # FI-04 is the last row, TR-06 (2026-03-23) the most recent date
    assert result["round"]["round"] == "TR-06"
    assert result["plan"]["margin_precision"] <= 0.03 + 1e-12
    assert any("most recent round by date, TR-06 (2026-03-23)" in t for t in result["problems"])


def test_most_recent_round_prefers_dates_then_sheet_order():
    from core.workbook.report import most_recent_round

    march, april = dt.date(2026, 3, 2), dt.date(2026, 4, 6)
    rounds = (
        make_round("A", row=2, date=april),
        make_round("B", row=3, date=march),
        make_round("C", row=4, date=None),
        make_round("D", row=5, date=april),
        make_round("E", row=6, date=march),
    )
    assert most_recent_round(rounds).round == "D"  # the later of the two April rows
    undated = tuple(make_round(name, date=None) for name in "XYZ")
    assert most_recent_round(undated).round == "Z"
    assert most_recent_round(()) is None
    # One draw for the lead's classifier and one on trial, both dated the draw's day: the
    # classifier with the longer history is the lead's main one, whatever the row order
    # (the trial's row came last and the Plan built on it; trial 15).
    november = dt.date(2026, 11, 26)
    two = (
        *(
            dataclasses.replace(make_round(f"v7 {n}", row=n, date=dt.date(2026, n, 1)),
                                classifier="spam_v7")
            for n in range(5, 11)
        ),
        dataclasses.replace(make_round("v8 Oct", row=11, date=dt.date(2026, 10, 1)),
                            classifier="spam_v8"),
        dataclasses.replace(make_round("Nov", row=12, date=november), classifier="Spam_V7"),
        dataclasses.replace(make_round("Nov", row=13, date=november), classifier="spam_v8"),
    )  # fmt: skip
    chosen = most_recent_round(two)
    assert (chosen.round, chosen.classifier) == ("Nov", "Spam_V7")
    # Histories of one length: the classifier whose rounds of the date come first, as a
    # draw adds the main classifier's round before the others' (recheck 15).
    even = (
        dataclasses.replace(make_round("Oct", row=2, date=dt.date(2026, 10, 1)), classifier="v7"),
        dataclasses.replace(make_round("Oct", row=3, date=dt.date(2026, 10, 1)), classifier="v8"),
        dataclasses.replace(make_round("Nov", row=4, date=november), classifier="v7"),
        dataclasses.replace(make_round("Nov", row=5, date=november), classifier="v8"),
    )
    assert most_recent_round(even).classifier == "v7"
    # One classifier's two rounds of a date: the later row, as before.
    same = (
        dataclasses.replace(make_round("a", row=2, date=november), classifier="v7"),
        dataclasses.replace(make_round("b", row=3, date=november), classifier="v7"),
    )
    assert most_recent_round(same).round == "b"


def test_a_round_without_a_date_stands_after_the_rounds_above_it_everywhere():
    """One order for "latest", "the round before" and the History pairs (fuzz 17: R2,
    undated between R1 and R3, was compared with R3 though R3 came after it)."""
    from core.compare import consecutive_pairs
    from core.workbook.layout import most_recent_round, round_order_notes
    from core.workbook.rounds import classifier_key
    from core.workbook.session_io import next_round_name, round_before

    january, february, march = dt.date(2026, 1, 5), dt.date(2026, 2, 1), dt.date(2026, 3, 5)
    rounds = (
        make_round("R1", row=2, date=january, classifier="fraud"),
        make_round("R2", row=3, date=None, classifier="fraud"),
        make_round("R3", row=4, date=march, classifier="fraud"),
        make_round("S1", row=5, date=february, classifier="spam"),
    )
    assert round_before(rounds, rounds[1]) is rounds[0]
    assert round_before(rounds, rounds[2]) is rounds[1]
    assert round_before(rounds, rounds[0]) is None
    pairs = consecutive_pairs(
        (i, classifier_key(r.classifier), r.date) for i, r in enumerate(rounds)
    )
    assert sorted(pairs) == [(0, 1), (1, 2)]
    assert most_recent_round(rounds).round == "R3"
    (note,) = round_order_notes(rounds, today=dt.date(2026, 11, 27))
    assert note == (
        "R2 (fraud; sheet 'Rounds', row 3) has no date, so it is placed after R1 (fraud), "
        "the latest round above it; type its date in the sheet to place it yourself"
    )
    # Added last without a date: the latest round, and the name counts on from it.
    last = (*rounds[:1], rounds[2], dataclasses.replace(rounds[1], row=5, round="R4"))
    assert most_recent_round(last).round == "R4"
    assert round_before(last, last[2]) is last[1]
    assert next_round_name(last, "fraud") == "R5"
    # Above every dated round: before them all.
    first = (dataclasses.replace(rounds[1], row=2), rounds[0], rounds[2])
    assert round_before(first, first[1]) is first[0]
    assert most_recent_round(first).round == "R3"
    assert "before every dated round" in round_order_notes(first)[0]
    # No round has a date: sheet order, said by nobody (it is the only order there is).
    undated = tuple(make_round(name, row=n, date=None) for n, name in enumerate("XYZ", 2))
    assert round_order_notes(undated) == []
    assert round_before(undated, undated[2]) is undated[1]
    # A date after today is named: it becomes the latest round.
    future = (*rounds[:1], make_round("R9", row=6, date=dt.date(2099, 3, 5), classifier="fraud"))
    (note,) = round_order_notes(future, today=dt.date(2026, 11, 27))
    assert "is dated 2099-03-05, after today" in note
    assert most_recent_round(future).round == "R9"


def test_cli_report_of_a_plain_workbook_builds_the_session_from_the_round(
    tmp_path, capsys, shared_fixtures
):
    from core.workbook.session_io import open_session

    source = shared_fixtures / "rounds_simple.xlsx"
    tr03 = next(item for item in read_rounds(source).rounds if item.round == "TR-03")
    output = tmp_path / "report.xlsx"
    assert main(["report", str(source), "-o", str(output), "--round", "TR-03", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["round"]["round"] == "TR-03"
    total = tr03.tp + tr03.fp + tr03.fn + tr03.tn  # 4,700

    inputs = dict((row[0], row[1]) for row in _sheet_rows(output, SHEET_INPUTS)[1:] if row[0])
    for tab in ("plan", "evaluate"):
        assert inputs[f"{tab}.population.mode"] == "counts"
        assert inputs[f"{tab}.population.predicted_positive"] == tr03.population_pos == 40_550
        assert inputs[f"{tab}.population.predicted_negative"] == tr03.population_neg
    for cell in ("tp", "fp", "fn", "tn"):
        assert inputs[f"evaluate.matrix.{cell}"] == getattr(tr03, cell)
        assert inputs[f"plan.previous.{cell}"] == getattr(tr03, cell)
    assert inputs["plan.belief"] == "previous"
    assert inputs["plan.s"] == tr03.s == 1.8
    assert inputs["plan.v"] == total
    assert inputs["previous_round"] == "TR-03"

    summary = _sheet_rows(output, SHEET_SUMMARY)
    labels = [row[0] for row in summary if isinstance(row[0], str)]
    assert "The design of TR-03 again (s = 1.8, 4,700 labels)" in labels
    assert not any("1,000 labels" in label for label in labels)
    values = {row[0]: row[1] for row in summary if isinstance(row[0], str)}
    assert values["Flagged items in the population"] == 40_550
    assert values["Labeled flagged items"] == tr03.tp + tr03.fp
    plan_sheet = _sheet_rows(output, SHEET_PLAN)
    assert any(f"for {total:,} labels" in str(row[0]) for row in plan_sheet)

    state, _ = open_session(output)
    assert state.evaluate.matrix.as_tuple() == (tr03.tp, tr03.fp, tr03.fn, tr03.tn)
    assert state.plan.previous == state.evaluate.matrix
    assert state.evaluate.population.k == pytest.approx(tr03.k, rel=1e-15)
    assert (state.plan.s, state.plan.v, state.previous_round) == (1.8, total, "TR-03")


def test_planning_from_a_round_sets_the_correction_by_its_design_either_way():
    """Planning from a drawn round switched the Plan's correction on, and planning from a
    typed round after it kept it on: the Plan depended on the order of the clicks (review
    19)."""
    from core.session import PlanInputs
    from core.workbook.session_io import plan_from_round

    drawn = make_round("A", notes="seed 12; items from items.csv")
    typed = make_round("B")
    assert drawn.corrected_by_design and not typed.corrected_by_design
    after_drawn, _ = plan_from_round(PlanInputs(), drawn)
    assert after_drawn.fpc is True
    assert plan_from_round(after_drawn, typed)[0].fpc is False
    assert plan_from_round(PlanInputs(), typed)[0].fpc is False
    k_only = make_round("C", notes="seed 12; items from items.csv", population_pos=None,
                        population_neg=None)  # fmt: skip
    assert not k_only.corrected_by_design  # the correction needs both counts


def test_session_for_round_implies_s_and_uses_k_without_counts():
    from core.workbook.session_io import session_for_round

    item = make_round("K-only", population_pos=None, population_neg=None, k=0.04, s=None)
    state, notes = session_for_round(SessionState(rounds=(item,)), item)
    assert notes == []
    # n1/(k n0) = 256/(0.04 * 4440)
    assert state.plan.s == pytest.approx(256 / (0.04 * 4_440))
    assert state.evaluate.population.mode == state.plan.population.mode == "k"
    assert state.evaluate.population.k == 0.04
    assert state.plan.v == 225 + 31 + 79 + 4_361

    empty_stratum = make_round("no negatives", s=None, fn=0, tn=0)
    state, notes = session_for_round(SessionState(), empty_stratum)
    assert state.plan.s == SessionState().plan.s
    assert any("s cannot be implied" in note for note in notes)


def test_cli_report_of_a_workbook_without_rounds_is_an_error(tmp_path, capsys):
    scores = tmp_path / "scores.xlsx"
    workbook = openpyxl.Workbook()
    workbook.active.title = "Scores"
    workbook.active.append(["score", "label"])
    for index in range(10):
        workbook.active.append([index / 10, index % 2])
    workbook.save(scores)
    output = tmp_path / "report.xlsx"
    assert main(["report", str(scores), "-o", str(output)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {scores} has no usable rounds (sheet 'Scores' skipped")
    assert not output.exists()


def test_cli_report_of_a_saved_session_uses_its_evaluate_tab(tmp_path, capsys):
    session = tmp_path / "session.xlsx"
    write_report(session, SessionState(rounds=(make_round("A"),)))
    output = tmp_path / "again.xlsx"
    assert main(["report", str(session), "-o", str(output), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["round"] is None
    assert result["subject"] == "the labeled counts entered on the Evaluate tab"


def _bad_files(tmp_path):
    good = tmp_path / "good.xlsx"
    write_report(good, SessionState())
    data = good.read_bytes()
    files = {
        "text": b"round,tp\nA,1\n",
        "empty": b"",
        "truncated": data[: len(data) // 2],
        "ole": b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 600,
        "zip without a workbook": _zip_with({"hello.txt": b"hi"}),
    }
    paths = {}
    for name, content in files.items():
        path = tmp_path / f"{name.replace(' ', '_')}.xlsx"
        path.write_bytes(content)
        paths[name] = path
    paths["folder"] = tmp_path
    paths["missing"] = tmp_path / "missing.xlsx"
    return paths


def _zip_with(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def test_cli_report_of_unreadable_files_is_one_error_line(tmp_path, capsys):
    output = tmp_path / "out" / "report.xlsx"
    output.parent.mkdir()
    for name, path in _bad_files(tmp_path).items():
        assert main(["report", str(path), "-o", str(output)]) == 2, name
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (name, captured.err)
        assert "Traceback" not in captured.err and "internal error" not in captured.err
        assert captured.out == ""
        assert not output.exists()


def test_unreadable_files_raise_the_readers_error(tmp_path):
    from core.workbook.session_io import open_session

    for name, path in _bad_files(tmp_path).items():
        with pytest.raises(WorkbookError):
            open_session(path)
        assert name


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--margin", "0.8"], "--margin must be strictly between 0 and 0.5"),
        (["--confidence", "0.3"], "--confidence must be strictly between 0.5 and 1"),
        (["--round", "ZZ"], "no round named 'ZZ'"),
    ],
)
def test_cli_bad_options_exit_2(tmp_path, capsys, argv, message):
    source = tmp_path / "s.xlsx"
    write_report(source, SessionState(rounds=(make_round("A"),)))
    assert main(["report", str(source), "-o", str(tmp_path / "r.xlsx"), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_cli_report_needs_an_output(tmp_path, capsys):
    assert main(["report", str(tmp_path / "x.xlsx")]) == 2
    assert "-o" in capsys.readouterr().err


def test_plot_snapshots_never_straddle_a_page_break(tmp_path):
    import io
    import math

    from openpyxl import load_workbook
    from PIL import Image

    from core.session import SessionState
    from core.workbook.report import (
        PLOT_ROW_PIXELS,
        PORTRAIT_HEIGHT_PER_WIDTH,
        write_report,
    )

    def png(width, height):
        buffer = io.BytesIO()
        Image.new("RGB", (width, height), (200, 220, 255)).save(buffer, format="PNG")
        return buffer.getvalue()

    sizes = [(900, 600), (370, 300), (900, 700), (900, 2000), (600, 400), (900, 500)]
    images = {f"Plot {i}": png(*size) for i, size in enumerate(sizes)}
    path = tmp_path / "plots.xlsx"
    write_report(path, SessionState(), images=images)
    ws = load_workbook(path)["Plots"]
    breaks = sorted(b.id for b in ws.row_breaks.brk)
    assert breaks, "six large pictures need more than one page"
    page_rows = 900 * PORTRAIT_HEIGHT_PER_WIDTH / PLOT_ROW_PIXELS
    starts = [0, *breaks]
    for picture in ws._images:
        first = picture.anchor._from.row  # zero-based row of the picture's top
        shown_height = picture.anchor.ext.height / 9525  # EMU per pixel
        last = first + math.ceil(shown_height / PLOT_ROW_PIXELS)
        page_start = max(b for b in starts if b <= first)
        # No break inside the picture, and the page it starts on holds all of it.
        assert not any(first < b < last for b in breaks), (first, last, breaks)
        assert last - page_start <= page_rows
    assert ws.page_setup.orientation == "portrait"
    assert all(ws.row_dimensions[r].height == 15 for r in range(1, 10))


def test_a_report_names_the_rows_of_the_workbook_it_left_out(tmp_path, capsys, shared_fixtures):
    # rounds_messy.xlsx: rows 12 and 13 of sheet travel hold a negative and a fractional TP
    # (two rounds gone missing), row 14 the Total (rightly left out).
    source = shared_fixtures / "rounds_messy.xlsx"
    output = tmp_path / "report.xlsx"
    assert main(["report", str(source), "-o", str(output)]) == 0
    capsys.readouterr()
    workbook = openpyxl.load_workbook(output)
    texts = [row[0] for row in workbook["Summary"].iter_rows(values_only=True) if row[0]]
    warnings = texts[texts.index("Warnings") + 1 :]
    first = warnings[0]
    assert first.startswith("• 2 rows of the workbook could not be read")
    assert "row 12" in first and "row 13" in first and "row 14" not in first
    assert "None." not in warnings[: warnings.index("About this file")]


def test_a_saved_session_still_names_the_rows_its_workbook_left_out(
    tmp_path, capsys, shared_fixtures
):
    # The lead opens the messy workbook in the app, saves the session and reports it
    # weeks later: the two refused rounds are still named, though the session file itself
    # holds no bad row.
    from core.workbook.session_io import read_session, save_session

    source = shared_fixtures / "rounds_messy.xlsx"
    opened = read_session(source)
    session = tmp_path / "session.xlsx"
    save_session(session, opened.state)
    reopened = read_session(session)
    assert reopened.is_session and not reopened.problems
    assert reopened.state.rows_not_loaded == opened.state.rows_not_loaded
    assert len(reopened.not_loaded) == 2

    output = tmp_path / "report.xlsx"
    assert main(["report", str(session), "-o", str(output)]) == 0
    capsys.readouterr()
    texts = [
        row[0] for row in openpyxl.load_workbook(output)["Summary"].iter_rows(values_only=True)
    ]
    first = texts[texts.index("Warnings") + 1]
    assert first.startswith("• 2 rows of the workbook could not be read")
    assert "sheet 'travel', row 12" in first and "sheet 'travel', row 13" in first


def test_counts_typed_on_the_evaluate_tab_are_reported_with_their_change(tmp_path, shared_fixtures):
    # The lead opens the workbook (TR-06 is the latest round) and types the next round's
    # counts on the Evaluate tab: the report compares them with TR-06, as the tab does.
    from core.compare import DEFAULT_REPLICATES, compare
    from core.workbook.session_io import find_by_label, read_session

    source = shared_fixtures / "rounds_simple.xlsx"
    state = read_session(source).state
    typed = ConfusionMatrix(tp=240, fp=60, fn=95, tn=4205)
    population = dataclasses.replace(
        state.evaluate.population,
        mode="counts",
        predicted_positive=46_000,
        predicted_negative=1_251_000,
        k=46_000 / 1_251_000,
    )
    state = dataclasses.replace(
        state, evaluate=dataclasses.replace(state.evaluate, matrix=typed, population=population)
    )
    content = write_report(tmp_path / "r.xlsx", state)
    assert content.evaluated_round is None and content.change is not None
    tr06 = find_by_label(state.rounds, "TR-06")
    assert content.change.previous is tr06
    expected = compare(
        tr06.matrix,
        typed,
        k_previous=tr06.k,
        k_current=46_000 / 1_251_000,
        replicates=DEFAULT_REPLICATES,
        seed=state.evaluate.seed,
    )
    assert content.change.comparison.precision_change.p_worse == pytest.approx(
        expected.precision_change.p_worse
    )
    texts = [row.label for row in content.summary]
    assert any(text.startswith("Change since the previous round, TR-06") for text in texts)
    planning = next(row for row in content.summary if row.label == "Planning values")
    assert planning.note == "From round TR-06, the previous round on the Plan tab."


def test_a_round_typed_over_is_compared_with_the_round_before_it_not_itself(shared_fixtures):
    # Saved with counts typed over TR-06 on the Evaluate tab: TR-06 itself is still
    # compared with TR-05 (review: it was compared with itself).
    from core.workbook.report_content import change_section
    from core.workbook.session_io import find_by_label, read_session

    source = shared_fixtures / "rounds_simple.xlsx"
    state = read_session(source).state
    typed = ConfusionMatrix(tp=240, fp=60, fn=95, tn=4205)
    state = dataclasses.replace(state, evaluate=dataclasses.replace(state.evaluate, matrix=typed))
    change = change_section(state, find_by_label(state.rounds, "TR-06"), replicates=2_000)
    assert change.previous is find_by_label(state.rounds, "TR-05")


def test_a_round_name_shared_by_two_classifiers_is_picked_as_shown(tmp_path, capsys):
    # Rounds of two classifiers drawn together share the draw's name (trial 11).
    from core.workbook.layout import most_recent_round
    from core.workbook.report_content import find_round

    travel = make_round("R1", classifier="travel")
    finance = make_round("R1", classifier="finance", row=3)
    warnings: list[str] = []
    # the round the latest-round rule takes (the first classifier of the draw), not the
    # last row: `compare` and `compare --round R1` compared two classifiers (trial 19)
    assert find_round([travel, finance], "R1", warnings) is travel
    assert most_recent_round([travel, finance]) is travel
    assert "the main classifier's, R1 (travel), is reported" in warnings[0]
    # Ranked among all the rounds, not the namesakes alone: the main classifier is the one
    # with most rounds, whatever row its R1 is on (review 19).
    earlier = make_round("R0", classifier="finance", row=4, date=dt.date(2026, 2, 2))
    warnings.clear()
    assert most_recent_round([travel, finance, earlier]) is finance  # the latest date
    assert find_round([travel, finance, earlier], "R1", warnings) is finance
    assert "the main classifier's, R1 (finance), is reported" in warnings[0]
    assert "give the name as shown: 'R1 (travel)', 'R1 (finance)'" in warnings[0]
    warnings.clear()
    assert find_round([travel, finance], "R1 (travel)", warnings) is travel
    assert find_round([travel, finance], "r1 (TRAVEL)", warnings) is travel
    assert not warnings


def test_the_summary_says_a_drawn_rounds_notes_in_words(tmp_path):
    # The Notes cell of a round read from labels was a technical block on the manager's
    # first page: seed, the list's SHA-256, open items by stratum (trial 11b).
    notes = (
        "PR Planner labeling round: seed 5, items from items.csv; item list SHA-256 "
        "6073fbf2ffdd; 5 skipped (0 flagged, 5 unflagged), 0 unlabeled (0 flagged, 0 "
        "unflagged); targets precision ±5 %, recall ±5 % at 95 % confidence"
    )
    item = make_round("R7", notes=notes)
    state = SessionState(rounds=(item,))
    content = write_report(tmp_path / "r.xlsx", state, round_name="R7")
    shown = next(row.value for row in content.summary if row.label == "Notes")
    assert shown == (
        "Drawn by PR Planner from items.csv (seed 5); 5 skipped, none without a label; "
        "targets precision ±5 %, recall ±5 % at 95 % confidence"
    )
    # The Rounds sheet keeps the notes as written: they are read back from it.
    sheet = openpyxl.load_workbook(tmp_path / "r.xlsx")["Rounds"]
    header = [cell.value for cell in sheet[1]]
    assert sheet.cell(2, header.index("Notes") + 1).value == notes


def test_a_report_of_more_rounds_than_it_lists_is_refused_at_once():
    # A million rounds took gigabytes and minutes before failing (hostile-input trial 12).
    from core.workbook.report_content import MAX_REPORT_ROUNDS

    one = make_round()
    state = SessionState(rounds=(one,) * (MAX_REPORT_ROUNDS + 1))
    with pytest.raises(InputError, match=r"holds 50,001 rounds; a report lists at most 50,000"):
        build_report(state)


def test_a_report_over_a_csv_suggests_an_xlsx_name(tmp_path, capsys, shared_fixtures):
    # "for example items report.csv", a name then refused as not .xlsx (trial 12).
    items = tmp_path / "items.csv"
    items.write_text("id,predicted\na,1\n", encoding="utf-8")
    status = main(["report", str(shared_fixtures / "rounds_simple.xlsx"), "-o", str(items)])
    err = capsys.readouterr().err
    assert status == 2 and "for example items report.xlsx" in err


def test_a_report_for_others_leaves_out_where_the_lead_keeps_their_workbook(tmp_path):
    from core.workbook.session_io import read_session, save_session

    state = dataclasses.replace(SessionState(), rounds_workbook="/home/lead/private/rounds.xlsx")
    report = tmp_path / "report.xlsx"
    write_report(report, state)
    assert read_session(report).state.rounds_workbook == ""
    session = tmp_path / "session.xlsx"
    save_session(session, state)  # the lead's own session keeps it
    assert read_session(session).state.rounds_workbook == "/home/lead/private/rounds.xlsx"


def test_with_the_correction_the_report_names_the_exact_interval_for_what_it_is():
    # Only the CLI table renamed them (review, session 12).
    state = SessionState()
    state = dataclasses.replace(
        state, evaluate=dataclasses.replace(state.evaluate, fpc=True, replicates=1000)
    )
    content = build_report(state)
    labels = [row.label for row in content.summary]
    assert "Precision: exact (hypergeometric)" in labels
    assert not any("Clopper-Pearson" in label for label in labels)
    plain = build_report(SessionState())
    assert any("Clopper-Pearson" in row.label for row in plain.summary)


def test_interleaved_classifiers_get_a_history_chart_each_in_date_order(tmp_path):
    # Trial 17: a rounds workbook keeps one row per classifier per week, so the classifiers
    # interleave; the report drew one line through both, in row order (W05 before W04).
    weeks = [("W02", 1, 13), ("W03", 1, 20), ("W05", 2, 3), ("W04", 1, 27)]
    rounds = []
    for name, month, day in weeks:
        for classifier, tp in (("invoices", 200), ("receipts", 120)):
            rounds.append(
                make_round(name, classifier=classifier, date=dt.date(2025, month, day), tp=tp)
            )
    rounds.append(make_round("undated", classifier="receipts", date=None, tp=99))
    path = tmp_path / "report.xlsx"
    write_report(path, SessionState(rounds=tuple(rounds)))
    workbook = openpyxl.load_workbook(path)

    def listed(sheet):
        return [(row[0], row[2]) for row in sheet.iter_rows(min_row=2, values_only=True) if row[0]]

    # The Rounds sheet keeps the session's order (a saved session reopens equal) ...
    assert listed(workbook["Rounds"]) == [(item.round, item.classifier) for item in rounds]
    # ... and the charts read a hidden copy, each classifier's rounds by date.
    history = workbook["History data"]
    assert history.sheet_state == "hidden"
    assert listed(history) == [
        ("W02", "invoices"), ("W03", "invoices"), ("W04", "invoices"), ("W05", "invoices"),
        ("W02", "receipts"), ("W03", "receipts"), ("W04", "receipts"), ("W05", "receipts"),
        ("undated", "receipts"),  # after the round above it in the workbook
    ]  # fmt: skip
    assert "TP" not in [cell.value for cell in history[1]]  # never read as rounds
    with zipfile.ZipFile(path) as archive:
        charts = [
            archive.read(name).decode()
            for name in archive.namelist()
            if name.startswith("xl/charts/chart")
        ]
    titles = sorted(
        re.sub(r"<[^>]+>", "", title)
        for xml in charts
        for title in re.findall(r"<(?:a:)?t>History of [^<]*</(?:a:)?t>", xml)
    )
    assert titles == ["History of invoices", "History of receipts"]
    assert all("'History data'!" in xml for xml in charts if "History of" in xml)
    # Read back: the same rounds, no note about the hidden sheet.
    again = read_rounds(path)
    assert len(again.rounds) == len(rounds)
    from core.workbook.session_io import sheets_skipped_worth_a_note

    assert "History data" in [item.sheet for item in again.skipped_sheets]
    assert sheets_skipped_worth_a_note(again) == []


def test_one_classifiers_rounds_added_out_of_date_order_are_charted_by_date(tmp_path):
    # Trial 18: the month's round (31 March) was added before week 13 (30 March); the
    # history chart of the one classifier read the Rounds sheet in row order.
    dates = [("W12", dt.date(2025, 3, 23)), ("2025-03", dt.date(2025, 3, 31)),
             ("W13", dt.date(2025, 3, 30))]  # fmt: skip
    rounds = tuple(make_round(name, classifier="fraud", date=day) for name, day in dates)
    path = tmp_path / "report.xlsx"
    write_report(path, SessionState(rounds=rounds))
    workbook = openpyxl.load_workbook(path)
    assert [row[0] for row in workbook["Rounds"].iter_rows(min_row=2, values_only=True)][:3] == [
        "W12", "2025-03", "W13",
    ]  # fmt: skip
    history = workbook["History data"]
    assert [row[0] for row in history.iter_rows(min_row=2, values_only=True)] == [
        "W12", "W13", "2025-03",
    ]  # fmt: skip
    # Rounds already in date order need no hidden copy.
    ordered = tmp_path / "ordered.xlsx"
    write_report(ordered, SessionState(rounds=(rounds[0], rounds[2], rounds[1])))
    assert "History data" not in openpyxl.load_workbook(ordered).sheetnames


def test_the_next_name_counts_on_from_the_round_planned_from():
    # Trial 18: weekly rounds with a monthly one (the latest by date) among them; the Plan
    # built on week 12, and the next draw was named after the month, FR-2025-04.
    from core.workbook.session_io import next_round_name

    rounds = (
        make_round("FR-2025-W12", date=dt.date(2025, 3, 23), classifier="fraud"),
        make_round("FR-2025-03", date=dt.date(2025, 3, 31), classifier="fraud"),
    )
    assert next_round_name(rounds, "fraud") == "FR-2025-04"
    assert next_round_name(rounds, "fraud", after=rounds[0]) == "FR-2025-W13"
    # A name the classifier has already is passed over; another classifier's round is no
    # round to count on.
    taken = (*rounds, make_round("FR-2025-W13", date=dt.date(2025, 3, 30), classifier="fraud"))
    assert next_round_name(taken, "fraud", after=rounds[0]) == "FR-2025-W14"
    other = make_round("SP-07", classifier="spam")
    assert next_round_name(rounds, "fraud", after=other) == "FR-2025-04"
