"""A percentage typed where a fraction belongs (``--precision 90``, ``--confidence 95``,
``--margin 5``) is refused by every subcommand in the same words, with the fraction it
probably meant; never silently divided by 100. Also the other number mistakes people make
(``90%``, a decimal comma, a negative value argparse took for an option)."""

from __future__ import annotations

import argparse

import pytest

from core.cli import COMMANDS, build_parser, main
from core.cli.output import FRACTION_FLAGS, percentage_refusal
from tests.conftest import SHARED_FIXTURES

K = ["--k", "0.03"]
COUNTS = ["--tp", "90", "--fp", "10", "--fn", "12", "--tn", "900"]
PLAN = ["plan", *K, "--precision", "0.9", "--recall", "0.8"]
P3 = ["p3", "--tpr", "0.8", "--fpr", "0.01"]
ENSEMBLE = ["ensemble", "--parent-size", "1000", "--child-size", "100", "--overlap", "50"]
ROUNDS = str(SHARED_FIXTURES / "rounds_simple.xlsx")

#: (command line without the flag, flag, a percentage, the fraction it would mean).
PERCENTAGES = [
    (["plan", *K, "--recall", "0.8"], "--precision", "90", "0.9"),
    (["plan", *K, "--precision", "0.9"], "--recall", "80", "0.8"),
    (PLAN, "--margin", "5", "0.05"),
    (PLAN, "--margin-precision", "3", "0.03"),
    (PLAN, "--margin-recall", "2.5", "0.025"),
    (PLAN, "--confidence", "95", "0.95"),
    (PLAN, "--assurance-target", "80", "0.8"),
    (["evaluate", *K, *COUNTS], "--confidence", "90", "0.9"),
    (
        ["compare", *K, *COUNTS, "--k2", "0.03", "--tp2", "80", "--fp2", "20", "--fn2", "15",
         "--tn2", "900"],
        "--confidence", "99", "0.99",
    ),
    (
        ["coverage", *K, "--recall", "0.8", "--v", "500", "--s", "1"],
        "--precision", "90", "0.9",
    ),
    (["samplesize"], "--margin", "3", "0.03"),
    (["samplesize", "--margin", "0.03"], "--confidence", "95", "0.95"),
    (["samplesize", "--margin", "0.03"], "--precision-floor", "70", "0.7"),
    (["p3", "--fpr", "0.01"], "--tpr", "80", "0.8"),
    (["p3", "--tpr", "0.8"], "--fpr", "2", "0.02"),
    (["p3", "--tpr", "0.8", "--fpr", "0.01", "--sigma-fpr", "0.001"], "--sigma-tpr", "5", "0.05"),
    (P3, "--eta-max", "50", "0.5"),
    (P3, "--reference-prevalence", "10", "0.1"),
    (ENSEMBLE, "--margin", "3", "0.03"),
    (ENSEMBLE, "--confidence", "95", "0.95"),
    (ENSEMBLE, "--precision-floor", "60", "0.6"),
    (["report", ROUNDS, "-o", "report.xlsx"], "--margin", "5", "0.05"),
    (["report", ROUNDS, "-o", "report.xlsx"], "--confidence", "95", "0.95"),
]  # fmt: skip

RANGES = {"--confidence": ("0.5", "1"), "--margin": ("0", "0.5")}


def _range(flag: str) -> tuple[str, str]:
    return RANGES.get("--margin" if flag.startswith("--margin") else flag, ("0", "1"))


def _refused(capsys, argv) -> str:
    status = main(argv)
    captured = capsys.readouterr()
    assert status == 2, captured
    assert captured.out == "", "a refused command printed a result"
    assert "Traceback" not in captured.err and "internal error" not in captured.err
    assert captured.err.count("\n") == 1 and captured.err.startswith("error: ")
    return captured.err


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("argv", "flag", "percent", "fraction"),
    PERCENTAGES,
    ids=[f"{argv[0]} {flag} {percent}" for argv, flag, percent, _ in PERCENTAGES],
)
def test_a_percentage_is_refused_with_the_fraction_it_meant(
    capsys, tmp_path, monkeypatch, argv, flag, percent, fraction
):
    monkeypatch.chdir(tmp_path)  # nothing may be written, but if it were: a scratch folder
    low, high = _range(flag)
    error = _refused(capsys, [*argv, flag, percent])
    assert error == (
        f"error: {flag} must be between {low} and {high} (a fraction); did you mean "
        f"{fraction} for {percent} %?\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.timeout(60)
def test_labels_confidence_as_a_percentage_gets_the_same_words(capsys, tmp_path):
    # labels is the one command whose module this fix does not touch: the check runs on
    # every command's parsed flags, so it needs no code of its own there.
    missing = tmp_path / "never read.xlsx"
    error = _refused(capsys, ["labels", str(missing), "--confidence", "95"])
    assert error == (
        "error: --confidence must be between 0.5 and 1 (a fraction); did you mean 0.95 for 95 %?\n"
    )


def test_every_fraction_flag_of_every_command_is_checked():
    """Each flag that takes a fraction, in any subcommand, is one of FRACTION_FLAGS (a new
    one must be added there, or the percentage slips through to another message)."""
    fraction_words = ("precision", "recall", "confidence", "margin", "rate", "prevalence",
                      "tpr", "fpr", "eta", "target")  # fmt: skip
    for command in COMMANDS:
        parser = build_parser(command)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        for action in sub.choices[command]._actions:
            for flag in action.option_strings:
                if getattr(action.type, "__name__", "") != "number":
                    continue
                if any(word in flag for word in fraction_words):
                    assert flag in FRACTION_FLAGS, (command, flag)


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        ("--precision", 90.0, "did you mean 0.9 for 90 %?"),
        ("--precision", 99.5, "did you mean 0.995 for 99.5 %?"),
        ("--confidence", 90.0, "did you mean 0.9 for 90 %?"),
        ("--tpr", 100.0, "did you mean 1 for 100 %?"),  # tpr may be 1
        ("--precision", 100.0, "(a fraction), not a percentage; got 100"),  # 1 is refused
        ("--confidence", 40.0, "(a fraction), not a percentage; got 40"),  # 0.4 < 0.5
        ("--margin", 60.0, "must be between 0 and 0.5 (a fraction), not a percentage; got 60"),
        ("--precision", 1.0, None),  # at most 1: not a percentage, core's check says why
        ("--precision", 0.9, None),
        ("--precision", 100.5, None),  # above 100: no percentage either
        ("--precision", -5.0, None),
        ("--k", 50.0, None),  # not a fraction flag
        ("--threshold", 50.0, None),  # scores may run to 100
        ("--precision", None, None),
    ],
)
def test_percentage_refusal_words(flag, value, expected):
    message = percentage_refusal(flag, value)
    if expected is None:
        assert message is None
    else:
        assert message is not None and message.startswith(f"{flag} must be between")
        assert message.endswith(expected)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("101", "--precision must be strictly between 0 and 1, got 101"),
        ("1", "--precision must be strictly between 0 and 1, got 1"),
        ("-90", "--precision must be strictly between 0 and 1, got -90"),
    ],
)
def test_values_that_are_no_percentage_keep_the_range_message(capsys, value, words):
    assert words in _refused(capsys, ["plan", *K, "--recall", "0.8", "--precision", value])


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            [*PLAN[:-4], "--recall", "0.8", "--precision", "90%"],
            "error: --precision: expected a number, got '90%'; give a fraction without the "
            "% sign: 0.9 for 90 %\n",
        ),
        (
            ["samplesize", "--margin", "5 %"],
            "error: --margin: expected a number, got '5 %'; give a fraction without the % sign: "
            "0.05 for 5 %\n",
        ),
        (
            [*PLAN[:-2], "--recall", "0,8"],
            "error: --recall: expected a number, got '0,8'; write decimals with a point: 0.8\n",
        ),
        # "1,000" was answered with "write decimals with a point: 1.000", which is one.
        (
            ["plan", "--k", "1,000", "--precision", "0.9", "--recall", "0.8"],
            "error: --k: expected a number, got '1,000'; write 1000 (no separator), or 1.000 "
            "if you meant decimals\n",
        ),
        (
            ["plan", "--k", "12,345,678", "--precision", "0.9", "--recall", "0.8"],
            "error: --k: expected a number, got '12,345,678'; write 12345678 (no separators)\n",
        ),
        # 1e-400 is no float: it became 0 without a word (fuzz 14).
        (
            ["p3", "--tpr", "0.9", "--fpr", "1e-400"],
            "error: --fpr: '1e-400' is too close to 0 to be told from 0 (below about 1e-308)\n",
        ),
        # Three thousand as much of Europe writes it was taken as 3 (fuzz 14).
        (
            ["evaluate", "--random", "--tp", "90", "--fp", "3.000", "--fn", "20", "--tn", "900"],
            "error: --fp: '3.000' is ambiguous for a count (a point between thousands, or "
            "decimals?): for 3,000 write 3000; a count has no decimals\n",
        ),
        (
            ["plan", "--population", "1,5", "100", "--precision", "0.9", "--recall", "0.8"],
            "error: --population: expected a whole number, got '1,5' (commas may only set off "
            "thousands, as in 1,000)\n",
        ),
        # argparse took a negative value for an option ("expected one argument"): now the
        # flag's own check says what is wrong with it.
        ([*PLAN, "--k", "-inf"], "error: --k: expected a finite number, got '-inf'\n"),
        ([*PLAN[:1], "--k", "-1e308", *PLAN[3:]], "error: --k must be a number > 0, got -1e+308\n"),
        (
            [*PLAN, "--prior", "-1,-1,-1,-1"],
            "error: --prior's first value (A11) must be a number >= 0, got -1.0\n",
        ),
        (["plan", "--precision", "0.9", "--k"], "error: --k needs a value\n"),
    ],
)
def test_number_mistakes_say_what_to_type(capsys, argv, expected):
    assert _refused(capsys, argv) == expected


def test_thousands_separators_still_work(capsys):
    argv = ["plan", "--population", "1,000", "30,000", "--precision", "0.9", "--recall", "0.8",
            "--json"]  # fmt: skip
    assert main(argv) == 0
    assert '"k": 0.0333' in capsys.readouterr().out
