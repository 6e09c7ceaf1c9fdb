"""``prplanner plan`` through ``core.cli.main`` (the exact JSON contract)."""

from __future__ import annotations

import json
import math

import pytest

from core.bayes import Posterior, Prior
from core.cli import main
from core.planning import optimal_ratio_bayes

BASE = ["plan", "--k", "0.05", "--precision", "0.9", "--recall", "0.8"]
KEYS = [
    "k", "precision", "recall", "pi1", "pi0", "s_star", "s_star_bayes", "method", "s",
    "n_pos", "n_neg", "total", "margin_precision", "margin_recall", "targets_met",
]  # fmt: skip


def run_json(capsys, *arguments):
    status = main([*arguments, "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return json.loads(captured.out), captured.err


def test_default_plan_json_has_exactly_the_contract_keys(capsys):
    result, err = run_json(capsys, *BASE)
    assert list(result) == [*KEYS, "assurance"]  # the chance of meeting them: always
    assert set(result["assurance"]) == {"precision", "recall", "both"}
    assert result["targets_met"] == {"precision": True, "recall": True}
    assert err == ""
    assert result["method"] == "paper" and result["s_star_bayes"] is None
    assert result["s"] == pytest.approx(max(result["s_star"], 1.0), rel=1e-3)
    assert result["total"] == result["n_pos"] + result["n_neg"]
    assert isinstance(result["n_pos"], int) and isinstance(result["k"], float)
    assert result["margin_precision"] <= 0.05 and result["margin_recall"] <= 0.05
    assert result["pi0"] == pytest.approx(0.05 * 0.9 * 0.25)


def test_fixed_design_with_s_and_v(capsys):
    result, _ = run_json(capsys, *BASE, "--s", "2", "--v", "5000", "--method", "optimal")
    n1 = round(5000 * 0.1 / 1.1)
    assert (result["method"], result["s"], result["n_pos"], result["n_neg"]) == (
        "fixed",
        2.0,
        n1,
        5000 - n1,
    )
    assert result["total"] == 5000


def test_costs_and_assurance_add_their_keys(capsys):
    result, _ = run_json(
        capsys, *BASE, "--method", "optimal", "--cost-pos", "3", "--cost-neg", "0.5",
        "--assurance", "--reps", "2000",
    )  # fmt: skip
    assert list(result) == [*KEYS, "cost", "assurance", "assurance_simulated"]
    assert result["cost"] == 3 * result["n_pos"] + 0.5 * result["n_neg"]
    assert set(result["assurance"]) == {"precision", "recall", "both"}
    simulated = result["assurance_simulated"]
    assert set(simulated) == {"precision", "recall", "both", "reps", "standard_error"}
    assert simulated["reps"] == 2000
    # the simulation checks the exact default: within 4.5 standard errors (of 2000 rounds)
    for name in ("precision", "recall", "both"):
        exact = result["assurance"][name]
        tolerance = 4.5 * math.sqrt(max(exact * (1 - exact), 0.01) / 2000)
        assert abs(simulated[name] - exact) <= tolerance
    cheap_negatives, _ = run_json(capsys, *BASE, "--method", "optimal")
    assert result["n_pos"] <= cheap_negatives["n_pos"]  # dearer positives: fewer of them


def test_previous_round_gives_plug_in_values_and_theorem2(capsys):
    result, err = run_json(
        capsys, "plan", "--k", "0.033", "--tp", "138", "--fp", "22", "--fn", "108", "--tn", "4732"
    )
    assert result["precision"] == pytest.approx(138 / 160)
    pi0 = 108 / 4840
    assert result["recall"] == pytest.approx(1 / (1 + pi0 / (0.033 * 138 / 160)))
    expected = optimal_ratio_bayes(Posterior(z11=138, z01=22, z10=108, z00=4732), 0.033)
    assert result["s_star_bayes"] == pytest.approx(expected)
    assert round(result["s_star_bayes"], 3) == 1.822 and err == ""


def test_zero_count_in_previous_round_switches_to_jeffreys_with_a_note(capsys):
    result, err = run_json(
        capsys, "plan", "--k", "0.05", "--tp", "90", "--fp", "10", "--fn", "0", "--tn", "2000",
        "--bayesian", "--margin", "0.1",
    )  # fmt: skip
    notes = err.splitlines()
    assert len(notes) == 2 and all(line.startswith("note: ") for line in notes)
    assert "Jeffreys" in notes[0] and "recall 1" in notes[1]
    # The flagged side keeps its estimate; the unflagged side, no misses among 2,000, is
    # planned at the one-sided 95 % bound of Beta(0.5, 2000.5) (trial 15).
    from scipy.integrate import quad

    from tests.core.test_zero_count_planning import jeffreys_density

    assert result["precision"] == pytest.approx(90 / 100)
    pi0 = 0.05 * 0.9 * (1 / result["recall"] - 1)  # Eq 2 solved for pi0
    mass, _error = quad(jeffreys_density, 0.0, pi0, args=(0.5, 2000.5), points=[1e-6, 1e-4])
    assert mass == pytest.approx(0.95, abs=1e-6)
    jeffreys = Prior.jeffreys().posterior(None)
    expected = optimal_ratio_bayes(
        Posterior(z11=90 + jeffreys.z11, z01=10.5, z10=0.5, z00=2000.5), 0.05
    )
    assert result["s_star_bayes"] == pytest.approx(expected)


def test_prior_strength_and_explicit_prior(capsys):
    strong, _ = run_json(capsys, *BASE, "--prior-strength", "10", "--bayesian", "--margin", "0.08")
    prior = Prior.from_expected(0.9, 0.8, 0.05, 10)
    assert strong["s_star_bayes"] == pytest.approx(optimal_ratio_bayes(prior.posterior(), 0.05))
    assert strong["margin_recall"] <= 0.08
    explicit, _ = run_json(capsys, *BASE, "--prior", "90,10,20,1900")
    assert explicit["s_star_bayes"] == pytest.approx(
        optimal_ratio_bayes(Posterior(z11=90, z01=10, z10=20, z00=1900), 0.05)
    )


def test_population_and_fpc(capsys):
    plain, _ = run_json(capsys, "plan", "--population", "2000", "40000", "--precision", "0.9",
                        "--recall", "0.8")  # fmt: skip
    finite, _ = run_json(capsys, "plan", "--population", "2000", "40000", "--precision", "0.9",
                         "--recall", "0.8", "--fpc")  # fmt: skip
    assert plain["k"] == 0.05 and finite["total"] < plain["total"]


def test_a_plan_labeling_much_of_a_list_without_the_correction_says_so(capsys):
    # 274 of 300 flagged and 4,150 of 6,000 unflagged: drawn without replacement, --fpc
    # needs 2,600 labels, not 4,424 (statistician's check).
    flags = ["plan", "--population", "300", "6000", "--precision", "0.8", "--recall", "0.7",
             "--margin", "0.05"]  # fmt: skip
    assert main(flags) == 0
    err = capsys.readouterr().err
    assert "note: the plan labels 91.3 % of the flagged and 69.2 % of the unflagged" in err
    assert "switch on --fpc to plan for these lists" in err
    assert main([*flags, "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert plain["total"] == 4_424  # the figures methods.md quotes
    assert main([*flags, "--fpc", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["total"] == 2_600
    assert "of lists of known size" not in captured.err
    # A small share of a large list: no note.
    assert main(["plan", "--population", "41200", "1251000", "--precision", "0.9",
                 "--recall", "0.8"]) == 0  # fmt: skip
    assert "of lists of known size" not in capsys.readouterr().err


def test_text_output_is_a_readable_table(capsys):
    assert main([*BASE, "--assurance", "--reps", "500", "--cost-pos", "1", "--cost-neg", "1"]) == 0
    out = capsys.readouterr().out
    for fragment in ("precision margin", "recall margin", "(target ± 5.00 %)",
                     "chance the labeled round meets it: ", "both together: ",
                     "simulated check (500 rounds", "s* (Theorem 1)", "predicted positives",
                     "cost"):  # fmt: skip
        assert fragment in out
    assert "{" not in out and "MISSED" not in out


def chance_text(value):
    return f"{100 * value:.1f} %"


def test_every_margin_shows_its_chance_next_to_it(capsys):
    result, _ = run_json(capsys, "plan", "--k", "0.046", "--precision", "0.79", "--recall",
                         "0.67", "--margin", "0.05")  # fmt: skip
    assert main(["plan", "--k", "0.046", "--precision", "0.79", "--recall", "0.67"]) == 0
    lines = capsys.readouterr().out.splitlines()
    chance = result["assurance"]
    precision_line = next(line for line in lines if line.startswith("precision margin"))
    recall_line = next(line for line in lines if line.startswith("recall margin"))
    assert precision_line.endswith(
        f"chance the labeled round meets it: {chance_text(chance['precision'])}"
    )
    assert recall_line.endswith(
        f"chance the labeled round meets it: {chance_text(chance['recall'])}"
    )
    assert f"both together: {chance_text(chance['both'])}" in "\n".join(lines)
    # an expected-value plan meets its recall margin about half the time
    assert 0.45 < chance["recall"] < 0.6


def test_assurance_target_adds_the_assured_plan_and_its_price(capsys):
    arguments = ["plan", "--k", "0.046", "--precision", "0.79", "--recall", "0.67",
                 "--method", "optimal", "--cost-pos", "3", "--cost-neg", "1"]  # fmt: skip
    plain, _ = run_json(capsys, *arguments)
    assert "assured" not in plain  # off by default: the plan is unchanged
    result, _ = run_json(capsys, *arguments, "--assurance-target", "0.8")
    assert list(result) == [*KEYS, "cost", "assurance", "assured"]
    assert {key: result[key] for key in KEYS} == {key: plain[key] for key in KEYS}
    assured = result["assured"]
    assert list(assured) == ["target", "n_pos", "n_neg", "total", "cost", "assurance"]
    assert assured["target"] == 0.8 and assured["assurance"]["both"] >= 0.8
    assert assured["total"] == assured["n_pos"] + assured["n_neg"]
    assert assured["cost"] == 3 * assured["n_pos"] + assured["n_neg"]
    assert assured["cost"] > result["cost"]  # the promise costs labels
    assert main([*arguments, "--assurance-target", "0.8"]) == 0
    out = capsys.readouterr().out
    assert "The price of the promise (at least 80 % chance of meeting both margins):" in out
    header = next(line for line in out.splitlines() if "expected-value plan" in line)
    assert header.index("expected-value plan") < header.index("assured plan")
    total_line = next(line for line in out.splitlines() if line.startswith("total labels"))
    assert total_line.split()[-2:] == [f"{result['total']:,}", f"{assured['total']:,}"]
    extra = assured["cost"] - result["cost"]
    assert f"extra cost for the promise: {extra:+,.2f}" in out


def test_a_fixed_design_that_misses_a_target_is_flagged(capsys):
    result, _ = run_json(capsys, *BASE, "--s", "4", "--v", "1400")
    assert result["targets_met"] == {"precision": True, "recall": False}
    assert result["margin_recall"] > 0.05
    assert main([*BASE, "--s", "4", "--v", "1400"]) == 0
    out = capsys.readouterr().out
    assert (
        f"MISSED: this design's recall margin ± {100 * result['margin_recall']:.2f} % is wider "
        "than its target ± 5.00 %"
    ) in out
    assert "MISSED: this design's precision" not in out


def test_separate_margins(capsys):
    result, _ = run_json(capsys, *BASE, "--margin-precision", "0.02", "--margin-recall", "0.1")
    assert result["margin_precision"] <= 0.02 and result["margin_recall"] <= 0.1
    assert math.isclose(result["margin_precision"], 0.02, rel_tol=0.02)


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        (["plan", "--k", "0", "--precision", "0.9", "--recall", "0.8"], "--k"),
        (["plan", "--k", "-1", "--precision", "0.9", "--recall", "0.8"], "--k"),
        (["plan", "--k", "0.05", "--precision", "1.2", "--recall", "0.8"], "--precision"),
        (["plan", "--k", "0.05", "--precision", "0.9", "--recall", "0"], "--recall"),
        ([*BASE, "--margin", "0.5"], "--margin"),
        ([*BASE, "--margin-recall", "0"], "--margin-recall"),
        ([*BASE, "--confidence", "0.4"], "confidence"),
        ([*BASE, "--confidence", "1"], "confidence"),
        ([*BASE, "--s", "0", "--v", "100"], "--s"),
        ([*BASE, "--s", "-2"], "--s"),
        ([*BASE, "--margin", "0.05", "--margin-precision", "0.03"], "not both"),
        ([*BASE, "--tp", "1", "--fp", "1", "--fn", "1", "--tn", "1"], "not both"),
        (["plan", "--k", "0.05", "--tp", "1", "--fp", "1"], "all four"),
        (["plan", "--k", "0.05"], "--precision"),
        (["plan", "--precision", "0.9", "--recall", "0.8"], "required"),
        (["plan", "--k", "0.05", "--population", "5", "100", "--precision", "0.9"], "--k"),
        ([*BASE, "--prior", "1,1,1,1", "--prior-strength", "5"], "--prior"),
        ([*BASE, "--prior", "1,1,1"], "4 comma-separated"),
        ([*BASE, "--fpc"], "--population"),
        ([*BASE, "--reps", "100"], "add --assurance or drop --reps"),
        ([*BASE, "--assurance", "--reps", "0"], "--reps must be a whole number >= 1, got 0"),
        ([*BASE, "--assurance", "--reps", "1" + "0" * 15], "--reps must be at most 1,000,000"),
        ([*BASE, "--cost-pos", "2"], "--cost-neg"),
        ([*BASE, "--assurance-target", "1"], "--assurance-target must be strictly between 0"),
        ([*BASE, "--assurance-target", "0"], "--assurance-target must be strictly between 0"),
        ([*BASE, "--cost-pos", "0", "--cost-neg", "1"], "--cost-pos"),
        ([*BASE, "--bayesian"], "prior"),
        ([*BASE, "--method", "best"], "invalid choice"),
        ([*BASE, "--s", "2", "--method", "optimal"], "--s without --v"),
        ([*BASE, "--v", "1"], "v must"),
        (["plan", "--k", "2", "--precision", "0.9", "--recall", "0.2"], "false omission"),
        (
            ["plan", "--population", "100", "2000", "--precision", "0.9", "--recall", "0.8"],
            "population has only",
        ),
        (
            ["plan", "--k", "0.05", "--tp", "0", "--fp", "0", "--fn", "1", "--tn", "90"],
            "predicted-positive sample is empty",
        ),
    ],
)
def test_bad_input_exits_2_with_one_error_line(capsys, arguments, fragment):
    assert main([*arguments, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert fragment in lines[0]


def test_budget_alone_keeps_the_method_and_splits_v(capsys):
    paper, _ = run_json(capsys, *BASE, "--v", "3000")
    optimal, _ = run_json(capsys, *BASE, "--v", "3000", "--method", "optimal")
    assert paper["method"] == "paper" and optimal["method"] == "optimal"
    assert paper["total"] == optimal["total"] == 3000
    n1 = round(3000 * 0.05 / 1.05)  # s = max(s*, 1) = 1 here: proportional
    assert paper["n_pos"] == n1
    worst = max(optimal["margin_precision"], optimal["margin_recall"]) / 0.05
    assert worst <= max(paper["margin_precision"], paper["margin_recall"]) / 0.05


def test_text_output_shows_percentages_and_explains_a_missing_theorem_2(capsys):
    assert main([*BASE]) == 0
    out = capsys.readouterr().out
    assert "90.00 %" in out and "80.00 %" in out
    assert "± 5.00 %" in out  # the target margins, as evaluate shows rates
    assert "+-" not in out
    assert "s* (Theorem 2) = - (needs a prior or a previous round)" in out


def test_a_note_says_when_the_precision_margin_drives_s(capsys):
    result, err = run_json(capsys, *BASE, "--margin-precision", "0.02")
    # max(s*, 1) = 1 here; the precision margin needs more predicted positives
    assert result["s"] > 1.5
    assert (
        f"note: the over-sampling ratio is s = {result['s']:.3g} rather than the usual 1 "
        "(s never goes below 1; the best ratio for recall, s* by Theorem 1, is "
        f"{result['s_star']:.2f}): the precision target needs {result['n_pos']:,} "
        "flagged items to label"
    ) in err
    _, err = run_json(capsys, *BASE)  # s = max(s*, 1): nothing to explain
    assert "rather than the usual" not in err


def test_a_note_says_when_costs_drive_s(capsys):
    _, err = run_json(capsys, *BASE, "--method", "optimal", "--cost-pos", "5", "--cost-neg", "1")
    assert "rather than the usual" in err and "at the given label costs" in err
    _, err = run_json(capsys, *BASE, "--s", "3", "--v", "2000")  # the user's own s
    assert "rather than the usual" not in err


def test_bayesian_margins_are_labeled_as_a_prediction_for_the_next_round(capsys):
    assert main([*BASE, "--prior-strength", "5", "--bayesian"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.endswith("Bayesian margins: prediction for the next round's estimate)")
    assert main([*BASE]) == 0
    assert "frequentist margins)" in capsys.readouterr().out.splitlines()[0]
