"""The command line draws its bootstrap, posterior and simulation numbers from the app's
seeds by default, so a terminal, a report and the screen say the same (trial 10)."""

from __future__ import annotations

import json

from core.cli import main
from core.compare import DEFAULT_REPLICATES, compare
from core.confusion import ConfusionMatrix
from core.ensemble import ChildSet, plan_recycled_labels, precision_sample_size
from core.session import ENSEMBLE_SEED, EVALUATE_SEED, EnsembleInputs, EvaluateInputs


def run_json(capsys, *argv: str) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_default_seeds_are_the_apps():
    assert EvaluateInputs().seed == EVALUATE_SEED
    assert EnsembleInputs().seed == ENSEMBLE_SEED


def test_evaluate_gives_the_same_numbers_every_run(capsys):
    argv = ("evaluate", "--tp", "180", "--fp", "20", "--fn", "12", "--tn", "1788")
    argv += ("--population", "20000", "980000")
    first, second = run_json(capsys, *argv), run_json(capsys, *argv)
    assert first == second
    assert (
        first["f1"]["intervals"]["bootstrap"]
        == run_json(capsys, *argv, "--seed", str(EVALUATE_SEED))["f1"]["intervals"]["bootstrap"]
    )


def test_compare_of_typed_counts_draws_from_the_apps_seed(capsys):
    result = run_json(
        capsys,
        "compare",
        *("--tp", "251", "--fp", "35", "--fn", "80", "--tn", "4244", "--k", "0.0357"),
        *("--tp2", "240", "--fp2", "60", "--fn2", "95", "--tn2", "4205", "--k2", "0.0368"),
    )
    expected = compare(
        ConfusionMatrix(tp=251, fp=35, fn=80, tn=4244),
        ConfusionMatrix(tp=240, fp=60, fn=95, tn=4205),
        k_previous=0.0357,
        k_current=0.0368,
        replicates=DEFAULT_REPLICATES,
        seed=EVALUATE_SEED,
    )
    assert result["recall_change"]["p_worse"] == expected.recall_change.p_worse
    assert result["recall_change"]["interval"] == expected.recall_change.interval.as_list()


def test_ensemble_simulates_from_the_apps_seed(capsys):
    result = run_json(
        capsys,
        "ensemble",
        "--parent-size",
        "150000",
        "--child-size",
        "60200",
        "--overlap",
        "52000",
    )
    n = precision_sample_size(0.03, 0.95).n
    expected = plan_recycled_labels(
        150_000,
        [ChildSet(size=60_200, overlap=52_000)],
        n_parent=n,
        n_child=n,
        rng=ENSEMBLE_SEED,
    ).savings[0]
    assert result["expected_reused"] == expected.expected_reused


def test_numbers_are_taken_as_the_app_shows_them(capsys):
    # k as the app displays it ("0.0379 (1/26.4)") and a count with a thousands comma.
    def evaluated(tp: str, k: str) -> dict:
        rest = ("--fp", "47", "--fn", "90", "--tn", "4218")
        return run_json(capsys, "evaluate", "--tp", tp, *rest, "--k", k)

    shown = evaluated("1,255", "1/26.4")
    plain = evaluated("1255", str(1 / 26.4))
    assert shown["k"] == plain["k"] == 1 / 26.4
    assert shown["precision"] == plain["precision"]


def test_a_decimal_comma_in_k_is_refused_not_read_as_thousands(capsys):
    status = main(["evaluate", "--tp", "255", "--fp", "47", "--fn", "90", "--tn", "4218",
                   "--k", "0,125"])  # fmt: skip
    assert status != 0
    assert "write decimals with a point: 0.125" in capsys.readouterr().err
