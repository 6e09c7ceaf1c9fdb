"""Rounds in the report with the finite population correction: each round with both
population counts gets its own factors (checked against Wilson's formula with n/f trials,
worked here), a round with k only keeps the plain intervals."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest

from core.workbook.report_content import rounds_table
from core.workbook.rounds import Round


def _wilson(tp: int, n: float, trials: float) -> tuple[float, float]:
    z = NormalDist().inv_cdf(0.975)
    p = tp / n
    center = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z / (1 + z * z / trials) * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials**2))
    return center - half, center + half


def test_each_round_with_counts_gets_its_own_correction():
    small = Round(
        sheet="R", row=2, round="small", k=300 / 6000, population_pos=300,
        population_neg=6000, tp=150, fp=50, fn=20, tn=980,
    )  # fmt: skip
    k_only = Round(sheet="R", row=3, round="k only", k=0.05, tp=150, fp=50, fn=20, tn=980)
    plain = rounds_table([small, k_only], 0.95)
    corrected = rounds_table([small, k_only], 0.95, fpc=True)
    headers = [column.header for column in plain.columns]
    lower = headers.index("Precision lower (Wilson)")
    upper = headers.index("Precision upper (Wilson)")
    factor = (300 - 200) / (300 - 1)
    expected = _wilson(150, 200, 200 / factor)
    assert (corrected.rows[0][lower], corrected.rows[0][upper]) == pytest.approx(expected)
    assert (plain.rows[0][lower], plain.rows[0][upper]) == pytest.approx(_wilson(150, 200, 200))
    assert corrected.rows[1] == plain.rows[1]  # no population counts: nothing to correct
    note = headers.index("Interval note")
    assert "finite-population corrected" in (corrected.rows[0][note] or "")


def test_a_report_corrects_each_round_as_its_own_design_says():
    # A round drawn by the selection rule carries the correction in the report's Rounds
    # sheet, the round the report is about as the Evaluate tab's box says, and any other
    # none (one switch moved every round's interval; session 14).
    import dataclasses

    from core.session import SessionState
    from core.workbook.report_content import build_report
    from core.workbook.session_io import round_key

    def counted(row, name, notes=None):
        return Round(
            sheet="R", row=row, round=name, k=300 / 6000, population_pos=300,
            population_neg=6000, tp=150, fp=50, fn=20, tn=980, notes=notes,
        )  # fmt: skip

    legacy = counted(2, "May")
    drawn = counted(3, "Oct", notes="PR Planner labeling round: seed 7, items from mail.csv")
    shown = counted(4, "Nov")
    state = SessionState()
    state = dataclasses.replace(
        state,
        rounds=(legacy, drawn, shown),
        current_round=round_key(shown),
        evaluate=dataclasses.replace(state.evaluate, fpc=False),
    )
    table = build_report(state).rounds
    headers = [column.header for column in table.columns]
    lower = headers.index("Precision lower (Wilson)")
    factor = (300 - 200) / (300 - 1)
    corrected, plain = _wilson(150, 200, 200 / factor), _wilson(150, 200, 200)
    assert [row[lower] for row in table.rows] == pytest.approx([plain[0], corrected[0], plain[0]])


def _may_and_october(path):
    """A lead's rounds workbook: May typed in, October drawn by the selection rule."""
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "v7"
    sheet.append(
        [
            "Round",
            "Date",
            "Predicted positive (population)",
            "Predicted negative (population)",
            "TP",
            "FP",
            "FN",
            "TN",
            "Notes",
        ]
    )
    sheet.append(["May", "2026-05-01", 400, 4000, 150, 50, 20, 980, None])
    sheet.append(["Oct", "2026-10-01", 400, 4000, 140, 60, 25, 975,
                  "PR Planner labeling round: seed 7, items from mail.csv"])  # fmt: skip
    workbook.save(path)
    return path


def test_compare_and_report_correct_each_round_as_history_does(tmp_path, capsys):
    # compare applied one switch to both rounds, and report --round on a round other than
    # the session's current one took the current round's box for its Summary while its
    # Rounds sheet row had its own (review 15).
    import json

    import openpyxl

    from core.cli import main

    path = _may_and_october(tmp_path / "rounds.xlsx")
    assert main(["compare", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fpc"] == [False, True]
    assert main(["compare", str(path), "--json", "--fpc"]) == 0
    assert json.loads(capsys.readouterr().out)["fpc"] == [True, True]
    # A session whose current round is October, reported about May.
    session = tmp_path / "session.xlsx"
    assert main(["report", str(path), "--round", "Oct", "-o", str(session)]) == 0
    report = tmp_path / "may.xlsx"
    assert main(["report", str(session), "--round", "May", "-o", str(report)]) == 0
    capsys.readouterr()
    book = openpyxl.load_workbook(report, data_only=True)
    rounds = [row for row in book["Rounds"].iter_rows(values_only=True)]
    headers = list(rounds[0])
    may_row = next(row for row in rounds if row[0] == "May")
    lower = may_row[headers.index("Precision lower (Wilson)")]
    summary = [row for row in book["Summary"].iter_rows(values_only=True)]
    precision = next(row for row in summary if row[0] == "Precision")
    assert precision[2] == pytest.approx(lower)
    assert lower == pytest.approx(_wilson(150, 200, 200)[0])  # May: not corrected
