"""The report's "Change since the previous round" (core.workbook.report_content).

The previous round is the same classifier's latest earlier round by date, whatever the
workbook order; the change of precision is checked against statsmodels' Newcombe
interval, and the chance that precision got worse against a numerical integral of the two
Jeffreys posteriors (the report draws them at random).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import replace

import openpyxl
import pytest
from scipy import integrate, stats
from statsmodels.stats.proportion import confint_proportions_2indep

from core.confusion import ConfusionMatrix
from core.session import SessionState
from core.workbook.report import write_report
from core.workbook.report_content import build_report
from core.workbook.rounds import Round


def _round(name, day, classifier, tp, fp, fn, tn, k=0.035) -> Round:
    return Round(
        sheet="Rounds",
        row=2,
        round=name,
        date=dt.date(2026, 3, day),
        classifier=classifier,
        k=k,
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
    )


# Out of date order on purpose, with another classifier in between.
ROUNDS = (
    _round("TR-07", 23, "travel", 255, 47, 90, 4218),
    _round("FI-01", 16, "finance", 230, 75, 92, 4323),
    _round("TR-05", 2, "travel", 260, 20, 70, 4250),
    _round("TR-06", 9, "travel", 248, 37, 82, 4243),
)


def _report(name: str):
    state = SessionState(rounds=ROUNDS)
    item = next(past for past in ROUNDS if past.round == name)
    return build_report(state, round_name=item)


def _summary_text(content) -> str:
    return "\n".join(f"{row.label} | {row.note}" for row in content.summary)


def test_the_previous_round_is_the_classifiers_latest_earlier_one():
    content = _report("TR-07")
    assert content.change is not None and content.change.previous.round == "TR-06"
    assert "Change since the previous round, TR-06 (travel)" in _summary_text(content)
    assert _report("TR-06").change.previous.round == "TR-05"
    assert _report("TR-05").change is None  # the first travel round
    assert _report("FI-01").change is None  # the only finance round
    assert "Change since" not in _summary_text(_report("TR-05"))


def test_the_precision_change_against_statsmodels_and_an_integral():
    change = _report("TR-07").change
    previous, current = change.previous, ROUNDS[0]
    moved = change.comparison.precision_change
    lower, upper = confint_proportions_2indep(
        current.tp, current.tp + current.fp, previous.tp, previous.tp + previous.fp,
        method="newcomb", compare="diff", alpha=0.05,
    )  # fmt: skip
    assert (moved.interval.lower, moved.interval.upper) == pytest.approx((lower, upper), abs=1e-9)
    before = stats.beta(previous.tp + 0.5, previous.fp + 0.5)
    after = stats.beta(current.tp + 0.5, current.fp + 0.5)
    worse, _ = integrate.quad(lambda x: before.pdf(x) * after.cdf(x), 0, 1, limit=200)
    assert moved.p_worse == pytest.approx(worse, abs=0.005)  # 100,000 draws: SE < 0.0016


def test_the_summary_says_when_a_change_may_be_noise():
    text = _summary_text(_report("TR-07"))
    precision = next(line for line in text.splitlines() if line.startswith("Precision change"))
    # 248/285 -> 255/302: the Newcombe interval of the change contains 0
    assert "Precision went from 87.0% to 84.4%, −2.6 points" in precision
    assert "within sampling noise: it may not be a real change" in precision
    recall = next(line for line in text.splitlines() if line.startswith("Recall change"))
    assert "Chance that recall got worse:" in recall


def test_a_clear_drop_is_called_more_than_noise():
    rounds = (
        _round("A", 1, None, 450, 50, 60, 4440),
        _round("B", 8, None, 350, 150, 60, 4440),
    )
    content = build_report(SessionState(rounds=rounds), round_name=rounds[1])
    row = next(row for row in content.summary if row.label == "Precision change")
    assert row.value == pytest.approx(-20.0)  # 90 % -> 70 %, in points
    assert "−20.0 points" in row.note and "more than sampling noise" in row.note
    assert "Chance that precision got worse: over 99.9%" in row.note  # never certainty


def test_the_written_summary_shows_signed_points(tmp_path):
    path = tmp_path / "report.xlsx"
    write_report(path, SessionState(rounds=ROUNDS), round_name=ROUNDS[0])
    sheet = openpyxl.load_workbook(path)["Summary"]
    rows = [row for row in sheet.iter_rows() if row[0].value == "Precision change"]
    assert len(rows) == 1
    value = rows[0][1]
    assert value.number_format == '+0.0" points";-0.0" points";0.0" points"'
    expected = 100 * (255 / 302 - 248 / 285)
    assert math.isclose(value.value, expected, rel_tol=1e-12)


def test_the_summary_says_whether_the_round_met_the_target_margins():
    from statsmodels.stats.proportion import proportion_confint

    current = ROUNDS[0]  # TR-07: 255/302 flagged positive, 90/4,308 unflagged
    content = _report("TR-07")
    row = next(row for row in content.summary if row.label == "Met the target margins?")
    lower, upper = proportion_confint(current.tp, current.tp + current.fp, method="wilson")
    wilson = (upper - lower) / 2
    # Katz log (Eq 4) by hand
    n1, n0 = current.tp + current.fp, current.fn + current.tn
    x = (current.fn / n0) / (current.k * current.tp / n1)
    se = math.sqrt(1 / current.tp - 1 / n1 + 1 / current.fn - 1 / n0)
    z = stats.norm.ppf(0.975)
    katz = (1 / (1 + x * math.exp(-z * se)) - 1 / (1 + x * math.exp(z * se))) / 2
    assert wilson < 0.05 < katz  # the session's default targets: ±5 % each
    assert row.value == "precision met; recall missed"
    assert f"Precision is known to ± {wilson:.2%} against a target of ± 5.00%" in row.note
    assert f"recall is known to ± {katz:.2%}" in row.note
    met = build_report(SessionState(rounds=ROUNDS), round_name=ROUNDS[0], margin=0.2).summary
    assert next(r for r in met if r.label == "Met the target margins?").value == "both met"


def test_a_plain_rounds_workbook_is_judged_only_by_targets_given(tmp_path, shared_fixtures):
    import openpyxl

    from core.cli import main

    rounds = shared_fixtures / "rounds_simple.xlsx"

    def verdict(*flags):
        out = tmp_path / f"report{len(flags)}.xlsx"
        assert main(["report", str(rounds), "-o", str(out), *flags]) == 0
        summary = openpyxl.load_workbook(out)["Summary"]
        rows = [row for row in summary.iter_rows(values_only=True) if row[0]]
        return [row[1] for row in rows if row[0] == "Met the target margins?"]

    assert verdict() == []  # the workbook records no targets: none are made up
    assert verdict("--margin", "0.04") == ["both missed"]


def test_one_classifier_spelled_two_ways_is_paired_in_the_report():
    # Autocorrect capitalised one row's classifier: it is still the travel classifier.
    spelled = (*ROUNDS[:3], replace(ROUNDS[3], classifier="Travel "))
    state = SessionState(rounds=spelled)
    change = build_report(state, round_name=spelled[0]).change
    assert change is not None and change.previous.round == "TR-06"
    assert build_report(state, round_name=spelled[3]).change.previous.round == "TR-05"
    assert build_report(state, round_name=spelled[1]).change is None  # finance is another


def test_one_classifier_spelled_two_ways_is_one_history_chart(tmp_path):
    from core.workbook.report import _classifier_blocks

    rows = [("TR-05", None, "travel"), ("TR-06", None, "Travel"), ("FI-01", None, "finance")]
    assert _classifier_blocks(rows) == [("travel", 0, 1), ("finance", 2, 2)]


def test_the_precision_at_the_reference_prevalence_comes_with_its_band():
    # A bare calibrated precision read as sure as precision (audit 13).
    from core.prevalence import OperatingPoint, precision_band

    content = _report("TR-07")
    info = {label: value for label, value, _kind in content.p3_info}
    reference = SessionState().prevalence.reference_prevalence
    item = ROUNDS[0]
    band = precision_band(OperatingPoint.from_round(item.matrix, item.k, confidence=0.95))
    lower, upper = band.bounds_at(reference)
    assert info[f"precision at prevalence {reference:g}, band's lower end"] == pytest.approx(lower)
    assert info[f"precision at prevalence {reference:g}, band's upper end"] == pytest.approx(upper)
    assert lower < info[f"precision at prevalence {reference:g}"] < upper


def test_a_name_shared_by_one_draws_classifiers_reports_the_sessions_current_round():
    # report --round travel-01 on a session whose one labeling workbook judged three
    # classifiers reported the last, 'rules', naming a sheet 'rounds' does not show; the
    # session's current round is the main classifier's (trial 13).
    from core.workbook.session_io import round_key

    draw = tuple(
        replace(_round("travel-01", 26, name, 136 - 10 * i, 33 + i, 67 + i, 4776), row=2 + i)
        for i, name in enumerate(("travel", "model_v2", "rules"))
    )
    state = SessionState(rounds=draw, current_round=round_key(draw[0]))
    content = build_report(state, round_name="travel-01")
    assert "TP = 136" in _summary_text(content)  # travel's counts, not rules'
    assert any(
        "3 rounds are named 'travel-01'; travel-01 (travel), the session's current round, is "
        "reported; to pick another, give the name as shown" in text
        for text in content.warnings
    )
    # Without a current round among them: the main classifier's, as `compare` takes the
    # latest round without a name (trial 19: `compare --round` took another classifier's).
    content = build_report(SessionState(rounds=draw), round_name="travel-01")
    assert any(
        "the main classifier's, travel-01 (travel), is reported" in t for t in content.warnings
    )


def test_typed_counts_are_compared_with_the_plans_round_not_a_namesake():
    # After a draw with further classifiers, three rounds are named round1; counts typed
    # on the Evaluate tab (no classifier) were compared with the last of them, another
    # classifier's (recall +31.8 pp, 0.0 % chance of decline; trial 13b).
    from core.workbook.session_io import compared_round, previous_round_of, round_key

    draw = tuple(
        replace(_round("round1", 26, name, tp, fp, fn, 4776), row=2 + i)
        for i, (name, tp, fp, fn) in enumerate(
            [("travel", 136, 33, 74), ("Other model", 150, 40, 60), ("Third model", 90, 20, 71)]
        )
    )
    main = draw[0]
    state = SessionState(rounds=draw, current_round=round_key(main), previous_round="round1")
    state = replace(
        state,
        plan=replace(state.plan, previous=main.matrix),
        evaluate=replace(state.evaluate, matrix=ConfusionMatrix(tp=140, fp=30, fn=20, tn=4000)),
    )
    assert previous_round_of(state) is main
    assert compared_round(state) is main


def test_a_margin_missed_by_a_hair_is_shown_with_the_digit_that_decides():
    # Trial 17: "recall is known to ± 7.00% against a target of ± 7.00%" under "both
    # missed" read as a contradiction to a manager.
    current = ROUNDS[0]
    n1, n0 = current.tp + current.fp, current.fn + current.tn
    x = (current.fn / n0) / (current.k * current.tp / n1)
    se = math.sqrt(1 / current.tp - 1 / n1 + 1 / current.fn - 1 / n0)
    z = stats.norm.ppf(0.975)
    katz = (1 / (1 + x * math.exp(-z * se)) - 1 / (1 + x * math.exp(z * se))) / 2
    target = katz - 0.00002  # missed by 0.002 points: equal at two decimals
    assert f"{katz:.2%}" == f"{target:.2%}"
    content = build_report(SessionState(rounds=ROUNDS), round_name=current, margin=target)
    row = next(row for row in content.summary if row.label == "Met the target margins?")
    assert "recall missed" in row.value or row.value == "both missed"
    shown = f"recall is known to ± {100 * katz:.3f} % against a target of ± {100 * target:.3f} %"
    assert shown in row.note
