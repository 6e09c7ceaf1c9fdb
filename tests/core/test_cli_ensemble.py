"""``prplanner samplesize`` and ``prplanner ensemble`` (their JSON contracts)."""

from __future__ import annotations

import json

import pytest

from core.cli import main
from core.ensemble import ChildSet, plan_recycled_labels
from tests.conftest import REFERENCE_DATA

SAMPLE_SIZES = json.loads((REFERENCE_DATA / "ensemble_sample_sizes.json").read_text())
ENSEMBLE_KEYS = [
    "n_parent",
    "n_child",
    "pir",
    "cir",
    "expected_reused",
    "expected_new_labels",
    "savings_pct_mean",
    "savings_pct_interval",
    "notes",  # beyond the contract
]


def run_json(capsys, *argv: str) -> dict:
    status = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.err == ""
    return json.loads(captured.out)


def run_failing(capsys, *argv: str) -> str:
    status = main(list(argv))
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    return lines[0]


# --- samplesize ----------------------------------------------------------------------


def test_samplesize_public_example(capsys):
    result = run_json(capsys, "samplesize", "--margin", "0.03")
    assert list(result) == ["n", "p_used", "z", "population"]
    assert result["population"] is None  # no finite-population correction without --population
    assert result["n"] == 1068 and result["p_used"] == 0.5
    assert result["z"] == pytest.approx(SAMPLE_SIZES["z"]["0.95"], abs=1e-9)


@pytest.mark.parametrize("case", SAMPLE_SIZES["sizes"], ids=lambda case: str(case))
def test_samplesize_matches_hand_worked_values(capsys, case):
    argv = ["samplesize", "--margin", str(case["margin"]), "--confidence", str(case["confidence"])]
    if case["precision_floor"] is not None:
        argv += ["--precision-floor", str(case["precision_floor"])]
    result = run_json(capsys, *argv)
    assert (result["n"], result["p_used"]) == (case["n"], case["p_used"])


@pytest.mark.parametrize(
    "case", SAMPLE_SIZES["finite_population"][:4], ids=lambda case: str(case["population"])
)
def test_samplesize_with_population_applies_the_correction(capsys, case):
    result = run_json(
        capsys, "samplesize", "--margin", str(case["margin"]), "--population",
        str(case["population"]),
    )  # fmt: skip
    assert result["n"] == case["n"]


def test_samplesize_text_output(capsys):
    assert main(["samplesize", "--margin", "0.05"]) == 0
    assert "385" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--margin", "0.7"], "--margin"),
        (["--margin", "0"], "--margin"),
        (["--margin", "0.03", "--confidence", "1"], "--confidence"),
        (["--margin", "0.03", "--precision-floor", "1.5"], "--precision-floor"),
        (["--margin", "0.03", "--population", "0"], "--population"),
        (["--margin", "abc"], "abc"),
        ([], "--margin"),
    ],
)
def test_samplesize_bad_input_is_one_error_line(capsys, argv, named):
    assert named in run_failing(capsys, "samplesize", *argv)


# --- ensemble ------------------------------------------------------------------------

SIZES = ("--parent-size", "10000", "--child-size", "8000", "--overlap", "5000")


def test_ensemble_json_keys_and_defaults(capsys):
    result = run_json(capsys, "ensemble", *SIZES, "--seed", "1")
    assert list(result) == ENSEMBLE_KEYS
    assert result["n_parent"] == result["n_child"] == 1068
    assert (result["pir"], result["cir"]) == (0.5, 0.625)
    low, high = result["savings_pct_interval"]
    assert 0 <= low <= result["savings_pct_mean"] <= high <= 100
    assert result["expected_new_labels"] == pytest.approx(1068 - result["expected_reused"])
    # The rule of thumb of methods §13 for n_P = n_C: min(PIR, CIR) = 50 %.
    assert result["savings_pct_mean"] == pytest.approx(50, abs=1.0)


def test_ensemble_equals_the_core_planner_with_the_same_seed(capsys):
    result = run_json(
        capsys, "ensemble", *SIZES, "--n-parent", "500", "--n-child", "400", "--mix", "sample",
        "--trials", "300", "--seed", "17",
    )  # fmt: skip
    plan = plan_recycled_labels(
        10_000,
        [ChildSet(size=8000, overlap=5000, n_parent=500, n_child=400)],
        mix="sample",
        trials=300,
        rng=17,
    )
    expected = json.loads(json.dumps(plan.savings[0].to_dict()))
    # pytest.approx takes flat mappings only (nested values are refused from pytest 9.2).
    assert result.keys() == expected.keys()
    for key, value in expected.items():
        assert result[key] == pytest.approx(value), key


def test_ensemble_margin_sets_the_sample_sizes(capsys):
    by_margin = run_json(capsys, "ensemble", *SIZES, "--margin", "0.05", "--seed", "2")
    assert by_margin["n_parent"] == by_margin["n_child"] == 385
    floor = run_json(
        capsys, "ensemble", *SIZES, "--margin", "0.05", "--precision-floor", "0.9", "--seed", "2"
    )
    assert floor["n_child"] == 139
    only_child = run_json(capsys, "ensemble", *SIZES, "--n-child", "250", "--seed", "2")
    assert (only_child["n_parent"], only_child["n_child"]) == (1068, 250)


def test_ensemble_is_reproducible_with_a_seed_and_prints_text(capsys):
    first = run_json(capsys, "ensemble", *SIZES, "--seed", "5")
    second = run_json(capsys, "ensemble", *SIZES, "--seed", "5")
    assert first == second
    assert main(["ensemble", *SIZES, "--seed", "5"]) == 0
    assert "saving" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--parent-size", "1000", "--child-size", "800", "--overlap", "900"], "--overlap 900"),
        (["--parent-size", "500", "--child-size", "800", "--overlap", "600"], "--parent-size 500"),
        (["--parent-size", "0", "--child-size", "800", "--overlap", "0"], "--parent-size"),
        (["--parent-size", "10", "--child-size", "0", "--overlap", "0"], "--child-size"),
        ([*SIZES, "--n-parent", "0"], "--n-parent"),
        ([*SIZES, "--n-child", "0"], "--n-child"),
        ([*SIZES, "--margin", "0.6"], "--margin"),
        ([*SIZES, "--confidence", "0.3"], "--confidence"),
        ([*SIZES, "--precision-floor", "2"], "--precision-floor"),
        ([*SIZES, "--n-child", "100", "--margin", "0.05"], "not allowed with"),
        ([*SIZES, "--n-parent", "9", "--n-child", "9", "--confidence", "0.9"], "no effect"),
        ([*SIZES, "--mix", "both"], "--mix"),
        ([*SIZES, "--trials", "0"], "--trials"),
        ([*SIZES, "--trials", "-3"], "-3"),
        (["--parent-size", "10", "--child-size", "8"], "--overlap"),
    ],
)
def test_ensemble_bad_input_is_one_error_line(capsys, argv, named):
    assert named in run_failing(capsys, "ensemble", *argv)


def test_ensemble_notes_a_sample_larger_than_its_set(capsys):
    argv = ["ensemble", "--parent-size", "100", "--child-size", "80", "--overlap", "50",
            "--n-parent", "100000", "--seed", "1"]  # fmt: skip
    result = run_json(capsys, *argv)
    assert result["n_child"] == 1068  # the default for the margin, larger than 80 items
    parent, child = result["notes"]
    assert parent.startswith("the parent's sample (100,000) is larger than its set (100 items)")
    assert child.startswith("the child's sample (1,068) is larger than its set (80 items)")
    assert "(--n-child)" in child and "correction for a population of 80" in child
    assert main(argv) == 0
    assert "note: the child's sample (1,068) is larger" in capsys.readouterr().out
    fitting = run_json(capsys, *argv[:-4], "--n-parent", "60", "--n-child", "40")
    assert fitting["notes"] == []
