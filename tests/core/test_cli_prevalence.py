"""``prplanner p3`` and ``prplanner curves`` (their JSON contracts)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from openpyxl import Workbook
from sklearn.metrics import average_precision_score, roc_auc_score

from core.cli import main
from core.confusion import ConfusionMatrix
from core.intervals import katz_log_recall, wilson_ratio_fpr

P3_KEYS = ["tpr", "fpr", "sigma_tpr", "sigma_fpr", "delta", "eta_star", "delta_bound", "curve"]
CURVE_POINT_KEYS = ["eta", "precision", "lower", "upper", "f1"]
CALIBRATED_KEYS = ["reference_prevalence", "precision", "f1", "precision_gain", "recall_gain"]
CURVES_KEYS = ["n", "positives", "average_precision", "auc_pr_trapezoid", "auc_roc"]


def run_json(capsys, *argv: str) -> dict:
    status = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.err == ""
    return json.loads(captured.out)


def run_text(capsys, *argv: str) -> str:
    status = main(list(argv))
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return captured.out


def run_failing(capsys, *argv: str) -> str:
    status = main(list(argv))
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    return lines[0]


# --- p3 ------------------------------------------------------------------------------------


def test_p3_from_rates_without_sigmas(capsys):
    result = run_json(capsys, "p3", "--tpr", "0.8", "--fpr", "0.01")
    assert list(result) == [*P3_KEYS, "notes"]
    assert result["delta"] is None and result["eta_star"] is None
    assert result["delta_bound"] is None and result["sigma_tpr"] is None
    assert len(result["curve"]) == 200
    first, last = result["curve"][0], result["curve"][-1]
    assert list(first) == CURVE_POINT_KEYS
    assert first["eta"] == pytest.approx(1e-5) and last["eta"] == pytest.approx(0.5)
    assert first["lower"] is None and first["upper"] is None
    # Counted: at eta = 0.5, TP:FP = 0.8:0.01.
    assert last["precision"] == pytest.approx(0.8 / 0.81)
    assert last["f1"] == pytest.approx(2 * 0.8 / (2 * 0.8 + 0.2 + 0.01))


def test_p3_from_rates_with_sigmas_and_calibration(capsys):
    result = run_json(
        capsys,
        "p3",
        "--tpr", "0.8", "--fpr", "0.01", "--sigma-tpr", "0.05", "--sigma-fpr", "0.002",
        "--eta-min", "1e-4", "--eta-max", "0.3", "--points", "7",
        "--reference-prevalence", "0.02",
    )  # fmt: skip
    assert list(result) == [*P3_KEYS, "calibrated", "notes"]
    # The contract keys, then the band at the reference prevalence (review 13).
    assert list(result["calibrated"]) == [*CALIBRATED_KEYS, "precision_band"]
    assert len(result["curve"]) == 7
    assert result["curve"][-1]["eta"] == pytest.approx(0.3)
    r1, r2 = 0.008 / 0.85, 0.012 / 0.75
    root = math.sqrt(r1 / r2)
    assert result["delta"] == pytest.approx((1 - root) / (1 + root))
    assert result["eta_star"] == pytest.approx(1 / (1 + 1 / math.sqrt(r1 * r2)))
    assert result["delta_bound"] == pytest.approx(0.2)
    for point in result["curve"]:
        assert point["lower"] <= point["precision"] <= point["upper"]
    calibrated = result["calibrated"]
    assert calibrated["precision"] == pytest.approx(0.02 * 0.8 / (0.02 * 0.8 + 0.98 * 0.01))
    assert calibrated["precision_gain"] == pytest.approx(1 - 0.01 / 0.8)


def test_p3_from_a_labeled_round_uses_the_katz_half_widths(capsys):
    result = run_json(
        capsys,
        "p3", "--k", "1/19", "--tp", "90", "--fp", "10", "--fn", "20", "--tn", "380",
        "--confidence", "0.9", "--points", "5",
    )  # fmt: skip
    matrix = ConfusionMatrix(tp=90, fp=10, fn=20, tn=380)
    k = 1 / 19
    pi1, pi0 = 0.9, 20 / 400
    assert result["tpr"] == pytest.approx(1 / (1 + pi0 / (k * pi1)))
    assert result["fpr"] == pytest.approx(1 / (1 + (1 - pi0) / (k * (1 - pi1))))
    assert result["sigma_tpr"] == pytest.approx(katz_log_recall(matrix, k, 0.9).half_width)
    assert result["sigma_fpr"] == pytest.approx(wilson_ratio_fpr(matrix, k, 0.9).half_width)
    assert result["delta"] is not None and 0 < result["eta_star"] < 1


def test_p3_text_output_is_a_short_table(capsys):
    text = run_text(
        capsys,
        "p3", "--tpr", "0.8", "--fpr", "0.01", "--sigma-tpr", "0.05", "--sigma-fpr", "0.002",
        "--reference-prevalence", "0.01",
    )  # fmt: skip
    assert "Delta" in text and "eta*" in text and "reference prevalence" in text
    table = [line for line in text.splitlines() if line.strip()[:1].isdigit()]
    assert 3 <= len(table) <= 10
    assert "200 grid points" in text
    plain = run_text(capsys, "p3", "--tpr", "0.8", "--fpr", "0.01")
    assert "no sigmas" in plain


def test_p3_text_uses_round_prevalences_closed_forms_and_names_the_half_width(capsys):
    argv = ["p3", "--k", "1/19", "--tp", "90", "--fp", "10", "--fn", "20", "--tn", "380",
            "--confidence", "0.9", "--eta-min", "0.001", "--eta-max", "0.3"]  # fmt: skip
    text = run_text(capsys, *argv)
    result = run_json(capsys, *argv)
    assert "sigma" not in text
    assert "(half-width of the 90 % interval)" in text
    # Percent as evaluate shows it: two decimals, three significant digits below 1 %.
    assert f"TPR ± {100 * result['sigma_tpr']:.2f} %" in text
    tpr, fpr = result["tpr"], result["fpr"]
    rows = {}
    for line in text.splitlines():
        cells = line.split()
        if len(cells) >= 10 and cells[1] == "%" and cells[0][0].isdigit():
            rows[float(cells[0]) / 100] = line
    # 0.1 %, 1 %, 2 %, 5 %, 10 %, 20 % (0.5 is outside the range), and eta*
    assert {eta for eta in rows if eta != pytest.approx(result["eta_star"], rel=1e-3)} == {
        0.001, 0.01, 0.02, 0.05, 0.1, 0.2,
    }  # fmt: skip
    eta = 0.02  # exactly, not the nearest grid point
    precision = tpr * eta / (tpr * eta + fpr * (1 - eta))
    assert rows[eta].split()[2] == f"{100 * precision:.2f}"
    assert "(eta*)" in text


def test_p3_clipped_band_has_no_widest_prevalence_inside_the_unit_interval(capsys):
    result = run_json(
        capsys, "p3", "--tpr", "0.8", "--fpr", "0.01", "--sigma-tpr", "0.05", "--sigma-fpr", "0.02"
    )
    assert result["delta"] == 1.0 and result["eta_star"] is None
    assert any("prevalence -> 0" in note for note in result["notes"])
    assert all(point["upper"] == 1.0 for point in result["curve"])


def test_p3_zero_fpr_reports_null_eta_star_and_bound_with_notes(capsys):
    # FPR = 0 with sigma_fpr > 0: UB = 1 at every prevalence, the widest band (Delta = 1) is
    # only approached as prevalence -> 0, and CV_FPR = sigma_fpr/0 is infinite.
    result = run_json(
        capsys, "p3", "--tpr", "0.8", "--fpr", "0", "--sigma-tpr", "0.05", "--sigma-fpr", "0.01"
    )
    assert list(result)[: len(P3_KEYS)] == P3_KEYS
    assert result["delta"] == 1.0
    assert result["eta_star"] is None and result["delta_bound"] is None
    assert any("eta* is undefined" in note for note in result["notes"])
    assert any("delta_bound" in note and "fpr = 0" in note for note in result["notes"])
    text = run_text(capsys, "p3", "--tpr", "0.8", "--fpr", "0", "--sigma-tpr", "0.05",
                    "--sigma-fpr", "0.01")  # fmt: skip
    assert "note: " in text and "eta* is undefined" in text


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["p3", "--tpr", "0.8"], "give --tpr and --fpr"),
        (["p3", "--tpr", "150", "--fpr", "0.1"], "tpr must be in (0, 1], got 150"),
        (["p3", "--tpr", "1.5", "--fpr", "0.1"], "did you mean 0.015 for 1.5 %?"),
        (["p3", "--tpr", "0.8", "--fpr", "0.1", "--sigma-tpr", "0.1"], "--sigma-fpr"),
        (
            ["p3", "--tpr", "0.8", "--fpr", "0.1", "--sigma-tpr", "1e300", "--sigma-fpr", "0"],
            "--sigma-tpr must be at most 1",
        ),
        (["p3", "--tpr", "0.8", "--fpr", "0.1", "--tp", "3"], "not both"),
        (["p3", "--tpr", "0.8", "--fpr", "0.1", "--confidence", "0.9"], "--confidence applies"),
        (["p3", "--k", "0.1", "--tp", "3", "--fp", "1"], "also needs --fn --tn"),
        (["p3", "--k", "0.1", "--tp", "0", "--fp", "5", "--fn", "1", "--tn", "9"], "recall"),
        (["p3", "--tpr", "0.8", "--fpr", "0.1", "--eta-min", "0.6"], "eta_min (0.6) must be"),
        (["p3", "--tpr", "0.8", "--fpr", "0.1", "--points", "1"], "points must be"),
        (["p3", "--tpr", "abc", "--fpr", "0.1"], "expected a number, got 'abc'"),
        (["p3", "--tpr", "0.8", "--fpr", "0.1", "--reference-prevalence", "2"], "reference"),
        (["p3", "--k", "0.1", "--tp", "-3", "--fp", "1", "--fn", "1", "--tn", "9"], "'-3'"),
    ],
)
def test_p3_bad_input_exits_2_with_one_error_line(capsys, argv, fragment):
    assert fragment in run_failing(capsys, *argv)


# --- curves --------------------------------------------------------------------------------


@pytest.fixture
def scored_rows():
    rng = np.random.default_rng(5)
    labels = (rng.random(60) < 0.3).astype(int)
    scores = np.round(rng.normal(size=60) + labels, 1)  # ties
    weights = np.where(scores >= 0.8, 2.0, 15.0)
    return scores, labels, weights


def test_curves_on_a_csv(tmp_path, capsys, scored_rows):
    scores, labels, weights = scored_rows
    path = tmp_path / "scored.csv"
    lines = ["Score,Label,Weight"] + [
        f"{s},{y},{w}" for s, y, w in zip(scores, labels, weights, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    result = run_json(capsys, "curves", str(path))
    assert list(result) == CURVES_KEYS
    assert result["n"] == 60 and result["positives"] == int(labels.sum())
    assert result["average_precision"] == pytest.approx(
        average_precision_score(labels, scores, sample_weight=weights), rel=1e-12
    )
    assert result["auc_roc"] == pytest.approx(
        roc_auc_score(labels, scores, sample_weight=weights), rel=1e-12
    )
    assert result["auc_pr_trapezoid"] != result["average_precision"]


def test_curves_on_an_xlsx_with_a_reference_prevalence(tmp_path, capsys, scored_rows):
    scores, labels, _ = scored_rows
    path = tmp_path / "scored.xlsx"
    workbook = Workbook()
    workbook.active.append(["score", "label"])
    for s, y in zip(scores, labels, strict=True):
        workbook.active.append([float(s), int(y)])
    workbook.save(path)
    assert main(["curves", str(path), "--reference-prevalence", "0.01", "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    # No weight column: said, since an over-sampled round's file needs one (trial 20).
    assert captured.err.startswith("note: scored.xlsx has no weight column: the curves")
    assert "N1/n1 for flagged items" in captured.err
    assert list(result) == [*CURVES_KEYS, "calibrated_average_precision"]
    pi = labels.mean()
    factor = pi * 0.99 / (0.01 * (1 - pi))
    reweighted = np.where(labels == 1, 1.0, factor)
    assert result["calibrated_average_precision"] == pytest.approx(
        average_precision_score(labels, scores, sample_weight=reweighted), rel=1e-12
    )
    text = run_text(capsys, "curves", str(path), "--reference-prevalence", "0.01")
    assert "average precision (step-wise)" in text and "AUC-PR (trapezoidal)" in text


def test_curves_bad_files_exit_2_with_one_error_line(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("score,label\n0.3,1\n0.2,x\n")
    assert "row 3, column 'label'" in run_failing(capsys, "curves", str(bad))
    line = run_failing(capsys, "curves", str(tmp_path / "missing.csv"))
    assert "missing.csv" in line
    assert "expected a .csv or .xlsx" in run_failing(capsys, "curves", str(tmp_path / "x.json"))
    good = tmp_path / "good.csv"
    good.write_text("score,label\n0.3,1\n0.2,0\n")
    assert "reference prevalence" in run_failing(
        capsys, "curves", str(good), "--reference-prevalence", "0"
    )


def test_p3_takes_the_population_counts_like_the_other_commands(capsys):
    from core.cli import main

    assert main(["p3", "--population", "41200", "1251000", "--tp", "225", "--fp", "31",
                 "--fn", "14", "--tn", "730", "--json"]) == 0  # fmt: skip
    by_counts = json.loads(capsys.readouterr().out)
    assert main(["p3", "--k", str(41200 / 1251000), "--tp", "225", "--fp", "31", "--fn", "14",
                 "--tn", "730", "--json"]) == 0  # fmt: skip
    by_k = json.loads(capsys.readouterr().out)
    assert by_counts == by_k
    assert main(["p3", "--k", "0.1", "--population", "1", "5", "--tp", "1", "--fp", "1",
                 "--fn", "1", "--tn", "1"]) == 2  # fmt: skip
    assert "not both" in capsys.readouterr().err


def test_p3_gives_the_band_at_the_reference_prevalence_and_gains_in_percent(capsys):
    # With FP = 0 and a reference of 0.001 %, p3 printed "precision 100.00 %" while its own
    # band there ran from 0.68 % to 100 % (independent audit 13), and the gains as
    # fractions beside percentages.

    status = main(
        ["p3", "--tp", "200", "--fp", "0", "--fn", "3", "--tn", "397", "--k", "0.0526316",
         "--reference-prevalence", "0.00001"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0
    assert "  precision       100.00 %   (band 0.676 % to 100.00 %)" in out
    assert "  precision gain  100.00 %   (over flagging every item)" in out


def test_p3_json_gives_the_band_at_the_reference_prevalence_as_the_text_does(capsys):
    # The text output and the report gave it; the JSON did not (review 13).
    status = main(
        ["p3", "--tp", "200", "--fp", "0", "--fn", "3", "--tn", "397", "--k", "0.0526316",
         "--reference-prevalence", "0.00001", "--json"]
    )  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert status == 0
    lower, upper = data["calibrated"]["precision_band"]
    assert lower == pytest.approx(0.00676, abs=5e-5) and upper == 1.0
