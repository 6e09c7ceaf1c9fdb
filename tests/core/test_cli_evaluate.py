"""``prplanner evaluate``, ``compare`` and ``coverage`` through ``core.cli.main``: the JSON
JSON contract, readable text, and exit status 2 with one ``error:`` line."""

from __future__ import annotations

import json

import pytest

from core.cli import main

COUNTS = ["--tp", "138", "--fp", "22", "--fn", "108", "--tn", "4732"]
COUNTS_2 = ["--tp2", "150", "--fp2", "20", "--fn2", "90", "--tn2", "4700"]


def run_json(capsys, argv):
    status = main([*argv, "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.err == ""
    return json.loads(captured.out)


def test_evaluate_json_keys_for_each_design(capsys):
    precision = ["wald", "wilson", "agresti_coull", "clopper_pearson", "jeffreys",
                 "bootstrap", "bayes", "bayes_mc", "posterior"]  # fmt: skip
    recall = ["katz_log", "delta", "bootstrap", "bayes", "bayes_mc", "posterior"]
    for design_flags, design, extra in (
        (["--k", "1/19"], "stratified", []),
        (["--population", "10000", "190000"], "stratified", []),
        (["--random"], "random", ["wald"]),
    ):
        document = run_json(
            capsys, ["evaluate", *design_flags, *COUNTS, "--replicates", "500", "--seed", "1"]
        )
        assert list(document) == [
            "k", "design", "precision", "recall", "f1", "fpr", "prevalence", "warnings",
            "recommended", "fpc",
        ]  # fmt: skip
        assert document["design"] == design
        assert list(document["precision"]["intervals"]) == precision
        assert list(document["recall"]["intervals"]) == recall + extra
        assert list(document["f1"]["intervals"]) == ["bootstrap", "bayes_mc", "posterior"]
        assert list(document["fpr"]["intervals"]) == ["katz_log", "wilson_ratio"]
        assert list(document["prevalence"]) == ["estimate"]
        assert isinstance(document["warnings"], list)
    assert document["k"] == pytest.approx(160 / 4840)
    assert document["precision"]["estimate"] == pytest.approx(0.8625)


def test_evaluate_options_reach_the_computation(capsys):
    base = ["evaluate", "--population", "400", "20000", *COUNTS, "--replicates", "200"]
    plain = run_json(capsys, [*base, "--seed", "3"])
    fpc = run_json(capsys, [*base, "--seed", "3", "--fpc"])
    assert any("finite population correction" in w for w in fpc["warnings"])
    wald_plain = plain["precision"]["intervals"]["wald"]
    wald_fpc = fpc["precision"]["intervals"]["wald"]
    assert wald_fpc[1] - wald_fpc[0] < wald_plain[1] - wald_plain[0]
    ninety = run_json(capsys, [*base, "--seed", "3", "--confidence", "0.9"])
    assert (
        ninety["precision"]["intervals"]["wilson"][0] > plain["precision"]["intervals"]["wilson"][0]
    )
    prior = run_json(capsys, [*base, "--seed", "3", "--prior", "50,5,10,1000"])
    assert (
        prior["precision"]["intervals"]["posterior"] != plain["precision"]["intervals"]["posterior"]
    )
    assert plain == run_json(capsys, [*base, "--seed", "3"])


def test_evaluate_text_output_is_a_readable_table(capsys):
    assert main(["evaluate", "--random", *COUNTS, "--replicates", "300", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "Clopper-Pearson" in out and "Katz log" in out
    assert "86.25 %" in out and "56.10 %" in out
    zero = ["evaluate", "--k", "0.1", "--tp", "0", "--fp", "5", "--fn", "0", "--tn", "50"]
    assert main([*zero, "--replicates", "200", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "warnings:" in out and "Haldane" in out and " - " in out


@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "--k", "0.1", "--tp", "-3", "--fp", "2", "--fn", "1", "--tn", "9"],
        ["evaluate", "--k", "0.1", "--tp", "2.5", "--fp", "2", "--fn", "1", "--tn", "9"],
        ["evaluate", "--k", "0", *COUNTS],
        ["evaluate", "--k", "-0.5", *COUNTS],
        ["evaluate", "--k", "0.1", *COUNTS, "--confidence", "0.5"],
        ["evaluate", "--k", "0.1", *COUNTS, "--confidence", "1"],
        ["evaluate", "--k", "0.1", "--tp", "0", "--fp", "0", "--fn", "1", "--tn", "9"],
        ["evaluate", "--k", "0.1", "--tp", "3", "--fp", "2", "--fn", "0", "--tn", "0"],
        ["evaluate", "--k", "0.1", *COUNTS, "--fpc"],
        ["evaluate", "--k", "0.1", "--random", *COUNTS],
        ["evaluate", *COUNTS],
        ["evaluate", "--k", "0.1", *COUNTS, "--replicates", "5"],
        ["evaluate", "--k", "0.1", *COUNTS, "--prior", "1,2,3"],
        ["evaluate", "--k", "0.1", "--tp", "5", "--fp", "0", "--fn", "3", "--tn", "9",
         "--prior", "0,0,0,0"],
        ["evaluate", "--k", "x", *COUNTS],
        ["compare", "--k", "0", *COUNTS, "--k2", "0.1", *COUNTS_2],
        ["compare", "--k", "0.1", *COUNTS, "--k2", "0.1", *COUNTS_2[:-2], "--tn2", "-1"],
        ["compare", "--k", "0.1", *COUNTS, "--k2", "0.1"],
        ["coverage", "--k", "0.05", "--precision", "0.9", "--recall", "0.7", "--v", "5000"],
        ["coverage", "--paper-grid", "--k", "0.05"],
        ["coverage", "--k", "0.05", "--precision", "1.5", "--recall", "0.7", "--v", "5000",
         "--s", "1"],
        ["coverage", "--k", "0.05", "--precision", "0.9", "--recall", "0.7", "--v", "5000",
         "--s", "1", "--confidence", "0.3"],
    ],
)  # fmt: skip
def test_bad_input_exits_2_with_one_error_line(capsys, argv):
    assert main([*argv, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err


def test_compare_json_and_text(capsys):
    argv = ["compare", "--k", "0.033", *COUNTS, "--k2", "0.033", *COUNTS_2, "--seed", "1"]
    document = run_json(capsys, argv)
    for key in ("precision_change", "recall_change"):
        assert list(document[key]) == ["estimate", "interval", "p_worse"]
        low, high = document[key]["interval"]
        assert low < document[key]["estimate"] < high
        assert 0 <= document[key]["p_worse"] <= 1
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "precision" in out and "pp" in out and "P(decline)" in out
    assert "P(worse)" not in out


def test_compare_takes_population_counts_like_evaluate(capsys):
    counts = ["--population", "41200", "1251000", *COUNTS]
    current = ["--population2", "20000", "980000", *COUNTS_2]
    by_counts = run_json(capsys, ["compare", *counts, *current, "--seed", "3"])
    by_k = run_json(
        capsys,
        ["compare", "--k", f"{41200 / 1251000!r}", *COUNTS, "--k2", f"{20000 / 980000!r}",
         *COUNTS_2, "--seed", "3"],
    )  # fmt: skip
    assert by_counts == by_k
    mixed = run_json(capsys, ["compare", *counts, "--k2", f"{20000 / 980000!r}", *COUNTS_2,
                              "--seed", "3"])  # fmt: skip
    assert mixed == by_k
    assert main(["compare", "--k", "0.1", *counts, *current]) == 2
    assert "--population is not allowed with --k" in capsys.readouterr().err
    assert main(["compare", *counts, "--population2", "0", "5", *COUNTS_2]) == 2
    assert capsys.readouterr().err.startswith("error: --population2: ")


def test_coverage_json_single_setting_and_paper_grid(capsys):
    single = run_json(
        capsys,
        ["coverage", "--k", "1/20", "--precision", "0.9", "--recall", "0.7", "--v", "5000",
         "--s", "2", "--reps", "40", "--replicates", "40", "--seed", "1"],
    )  # fmt: skip
    # The contract keys, then the additive prior keys (methods §10: alpha = 0 by default).
    assert list(single) == [
        "coverage", "reps", "replicates", "seconds", "design", "warnings", "prior", "jeffreys_rows",
    ]  # fmt: skip
    assert single["prior"] == [0.0, 0.0, 0.0, 0.0]
    assert list(single["coverage"]) == ["precision", "recall"]
    assert list(single["coverage"]["precision"]) == ["wald", "bootstrap", "bayes", "bayes_mc"]
    assert list(single["coverage"]["recall"]) == ["katz_log", "bootstrap", "bayes", "bayes_mc"]
    assert single["reps"] == 40 and single["replicates"] == 40
    grid = run_json(capsys, ["coverage", "--paper-grid", "--reps", "10", "--replicates", "10",
                             "--seed", "2"])  # fmt: skip
    assert list(grid) == ["rows", "seconds"]
    assert len(grid["rows"]) == 12
    assert list(grid["rows"][0]) == [
        "k", "precision", "recall", "v", "s", "coverage", "design", "warnings", "prior",
        "jeffreys_rows",
    ]  # fmt: skip
    assert {row["v"] for row in grid["rows"]} == {5000, 10000}
    assert main(["coverage", "--paper-grid", "--reps", "10", "--replicates", "10"]) == 0
    out = capsys.readouterr().out
    assert "1/20" in out and "1/100" in out and "%" in out


def test_coverage_shows_the_design_and_warns_about_a_sparse_one(capsys):
    argv = ["coverage", "--k", "0.0204", "--precision", "0.85", "--recall", "0.7", "--v", "50",
            "--s", "1", "--reps", "200", "--replicates", "100", "--seed", "4"]  # fmt: skip
    document = run_json(capsys, argv)
    # Eq 1: n1 = round(50 * 0.0204 / 1.0204) = 1, n0 = 49
    assert document["design"] == {"n_pos": 1, "n_neg": 49}
    warnings = document["warnings"]
    # expected TP = 0.85, FP = 0.15, FN = 49 * pi0 = 49 * 0.0204 * 0.85 * (1/0.7 - 1) = 0.364
    assert any(text.startswith("only 0.85 expected TP") for text in warnings)
    assert any(text.startswith("only 0.15 expected FP") for text in warnings)
    assert any(text.startswith("only 0.364 expected FN") for text in warnings)
    assert not any("expected TN" in text for text in warnings)
    low = [
        (metric, kind)
        for metric in ("precision", "recall")
        for kind, value in document["coverage"][metric].items()
        if value < 0.90
    ]
    assert low  # n1 = 1 cannot give honest precision intervals
    for metric, kind in low:
        prediction = "prediction for the next round's estimate"
        name = {"wald": "Wald", "katz_log": "Katz log-ratio", "bootstrap": "bootstrap",
                "bayes": f"Bayesian predictive ({prediction})",
                "bayes_mc": f"Bayesian predictive, Monte Carlo ({prediction})"}[kind]  # fmt: skip
        assert any(text.startswith(f"{metric}: the {name} interval covers") for text in warnings)
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "design: label 1 predicted positive + 49 predicted negatives" in out
    assert "warning: only 0.85 expected TP" in out


def test_coverage_of_a_sound_design_has_no_warnings(capsys):
    argv = ["coverage", "--k", "1/20", "--precision", "0.9", "--recall", "0.7", "--v", "5000",
            "--s", "2", "--reps", "200", "--replicates", "200", "--seed", "1"]  # fmt: skip
    document = run_json(capsys, argv)
    assert document["design"] == {"n_pos": 455, "n_neg": 4545}
    assert document["warnings"] == []


def test_coverage_prior_flag_reaches_the_experiment(capsys):
    # n1 = round(210*0.05/1.05) = 10 with precision 0.9: FP = 0 in about 0.9^10 = 35 % of
    # the rounds, so alpha = 0 falls back to Jeffreys there; a uniform prior never does.
    argv = ["coverage", "--k", "0.05", "--precision", "0.9", "--recall", "0.8", "--v", "210",
            "--s", "1", "--reps", "200", "--replicates", "50", "--seed", "4"]  # fmt: skip
    default = run_json(capsys, argv)
    uniform = run_json(capsys, [*argv, "--prior", "1,1,1,1"])
    assert default["prior"] == [0.0, 0.0, 0.0, 0.0] and 30 < default["jeffreys_rows"] < 120
    assert uniform["prior"] == [1.0, 1.0, 1.0, 1.0] and uniform["jeffreys_rows"] == 0
    assert uniform["coverage"]["precision"]["bayes"] != default["coverage"]["precision"]["bayes"]
    assert main([*argv, "--prior", "1,1,1"]) == 2
    assert main(argv) == 0
    assert "Jeffreys (0.5) used in" in capsys.readouterr().out


def test_evaluate_with_a_near_zero_prior_on_an_empty_cell_gives_valid_intervals(capsys):
    # z10 = 1e-9 makes Eq 8's Vu about 1e9 (sd ~ 3e4): exp(z*sd) overflowed before. The
    # interval is then the whole [0, 1]: 1/(1 + xb*exp(+-z*sd)) -> 0 and 1.
    document = run_json(
        capsys,
        ["evaluate", "--k", "0.05", "--tp", "40", "--fp", "5", "--fn", "0", "--tn", "900",
         "--prior", "1e-9,1e-9,1e-9,1e-9", "--seed", "1", "--replicates", "1000"],
    )  # fmt: skip
    for metric in ("precision", "recall", "f1", "fpr"):
        for method, bounds in document[metric]["intervals"].items():
            assert all(b is not None and 0.0 <= b <= 1.0 for b in bounds), (metric, method)
            assert bounds[0] <= bounds[1]
    assert document["recall"]["intervals"]["bayes"] == pytest.approx([0.0, 1.0], abs=1e-12)
    assert main(["evaluate", "--k", "0.05", "--tp", "40", "--fp", "5", "--fn", "0", "--tn",
                 "900", "--prior", "1e-9,1e-9,1e-9,1e-9", "--replicates", "1000"]) == 0  # fmt: skip
    assert "error" not in capsys.readouterr().err


def test_interval_notes_reach_the_json_warnings(capsys):
    # By hand, TP = 5, FP = 1, FN = 1, TN = 200, k = 0.05: x = (1/201)/(0.05*5/6) = 0.1194,
    # recall 1/(1+x) = 0.893, se = sqrt(1/30 + 200/201) = 1.014, delta half-width
    # 1.96*x/(1+x)^2*se = 0.189, so the delta interval passes 1 and is clipped; Wald
    # precision 5/6 +- 1.96*sqrt((5/6)(1/6)/6) = 0.833 +- 0.298 passes 1 too.
    document = run_json(
        capsys,
        ["evaluate", "--k", "0.05", "--tp", "5", "--fp", "1", "--fn", "1", "--tn", "200",
         "--seed", "1", "--replicates", "1000"],
    )  # fmt: skip
    warnings = document["warnings"]
    assert "recall delta: clipped to [0, 1]" in warnings
    assert "precision wald: clipped to [0, 1]" in warnings
    assert len(warnings) == len(set(warnings))
    # A zero cell: the Haldane correction and the moved bound are said once, in the
    # general zero-cell warning, not again per interval.
    zero = run_json(
        capsys,
        ["evaluate", "--k", "0.05", "--tp", "40", "--fp", "5", "--fn", "0", "--tn", "900",
         "--seed", "1", "--replicates", "1000"],
    )  # fmt: skip
    assert sum("Haldane" in line for line in zero["warnings"]) == 1
    assert not any("bound moved" in line for line in zero["warnings"])
    assert "recall delta: clipped to [0, 1]" in zero["warnings"]


def test_json_names_the_interval_to_quote_per_metric(capsys):
    from core.methods import INTERVAL_METHODS

    counts = ["--tp", "225", "--fp", "31", "--fn", "14", "--tn", "730"]
    status = main(["evaluate", "--k", "0.0329", *counts, "--replicates", "1000", "--json"])
    assert status == 0
    data = json.loads(capsys.readouterr().out)
    assert data["recommended"] == {
        "precision": "wilson",
        "recall": "katz_log",
        "f1": "bootstrap",
        "fpr": "wilson_ratio",
    }
    for metric, method in data["recommended"].items():
        assert method in data[metric]["intervals"]
        assert not INTERVAL_METHODS[method].is_prediction


def test_text_marks_the_interval_to_quote_and_the_predictions(capsys):
    main(["evaluate", "--k", "0.0329", "--tp", "225", "--fp", "31", "--fn", "14", "--tn", "730"])
    text = capsys.readouterr().out
    assert "* Wilson" in text and "* Katz log" in text
    assert "Bayes predictive †" in text
    assert "not an interval for the true value" in text
    assert "bayes_mc" not in text


# TR-05 and TR-06 of the shared fixture rounds_simple.xlsx (as `prplanner rounds` lists them)
TR05 = ["--population", "44800", "1255900", "--tp", "248", "--fp", "37", "--fn", "82",
        "--tn", "4243"]  # fmt: skip
TR06 = ["--population2", "47300", "1249000", "--tp2", "255", "--fp2", "47", "--fn2", "90",
        "--tn2", "4218"]  # fmt: skip


def test_compare_reads_a_rounds_workbook(capsys, shared_fixtures):
    rounds = str(shared_fixtures / "rounds_simple.xlsx")
    document = run_json(capsys, ["compare", rounds, "--seed", "4"])
    # the most recent round against its classifier's previous one by date
    assert document["current_round"] == "TR-06 (travel)"
    assert document["previous_round"] == "TR-05 (travel)"
    typed = run_json(capsys, ["compare", *TR05, *TR06, "--seed", "4"])
    assert {key: document[key] for key in typed} == typed
    finance = run_json(capsys, ["compare", rounds, "--round", "FI-03"])
    assert (finance["previous_round"], finance["current_round"]) == (
        "FI-02 (finance)",
        "FI-03 (finance)",
    )
    assert main(["compare", rounds]) == 0
    out = capsys.readouterr().out
    assert out.startswith("TR-06 (travel) against the previous round, TR-05 (travel)")
    assert "change = current minus previous" in out


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--round", "TR-01"], "TR-01 (travel) has no earlier round of classifier 'travel'"),
        (["--tp", "3"], "give either ROUNDS.xlsx or the counts of two rounds, not both"),
        (["--round", "TR-9"], "there is no round named 'TR-9'"),
    ],
)
def test_compare_on_a_workbook_refuses_in_words(capsys, shared_fixtures, argv, words):
    assert main(["compare", str(shared_fixtures / "rounds_simple.xlsx"), *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and words in captured.err


def test_compare_without_a_workbook_lists_what_is_missing(capsys):
    assert main(["compare"]) == 2
    err = capsys.readouterr().err
    assert "compare needs your rounds workbook (prplanner compare ROUNDS.xlsx)" in err
    assert "missing: --k or --population, --tp, --fp, --fn, --tn, --k2 or" in err
    assert main(["compare", "--round", "TR-06", "--k", "0.1", *COUNTS]) == 2
    assert "--round names a round of ROUNDS.xlsx" in capsys.readouterr().err


def test_compare_on_a_saved_session_uses_its_confidence(capsys, tmp_path, shared_fixtures):
    import dataclasses

    from core.workbook.session_io import read_session, save_session

    rounds = shared_fixtures / "rounds_simple.xlsx"
    state = dataclasses.replace(read_session(rounds).state, confidence=0.9)
    session = tmp_path / "session.xlsx"
    save_session(session, state)
    saved = run_json(capsys, ["compare", str(session)])
    ninety = run_json(capsys, ["compare", str(rounds), "--confidence", "0.9"])
    default = run_json(capsys, ["compare", str(rounds)])
    assert saved["precision_change"] == ninety["precision_change"]
    assert saved["precision_change"] != default["precision_change"]


def test_compare_pairs_a_classifier_spelled_another_way(capsys, tmp_path):
    import datetime as dt

    import openpyxl

    path = tmp_path / "rounds.xlsx"
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Round", "Date", "Classifier", "k", "TP", "FP", "FN", "TN"])
    sheet.append(["R1", dt.date(2026, 1, 5), "travel", 0.05, 40, 10, 3, 300])
    sheet.append(["R2", dt.date(2026, 2, 5), "TRAVEL", 0.05, 42, 9, 4, 301])
    workbook.save(path)
    # One classifier spelled two ways is one classifier: R2 is compared with R1.
    data = run_json(capsys, ["compare", str(path), "--round", "R2"])
    assert (data["previous_round"], data["current_round"]) == ("R1 (travel)", "R2 (TRAVEL)")


def test_the_text_table_names_what_the_correction_made_of_each_interval(capsys):
    # Which intervals take the finite population correction was said only in a warning
    # that had it wrong (statistician's check, session 12).
    flags = ["evaluate", "--population", "60", "3000", "--tp", "27", "--fp", "3", "--fn", "2",
             "--tn", "300", "--replicates", "1000"]  # fmt: skip
    assert main([*flags, "--fpc"]) == 0
    out = capsys.readouterr().out
    assert "exact (hypergeometric)" in out and "Jeffreys (finite list)" in out
    assert "Agresti-Coull °" in out and "° not narrowed by the finite population" in out
    assert main(flags) == 0
    out = capsys.readouterr().out
    assert "°" not in out and "Clopper-Pearson" in out
