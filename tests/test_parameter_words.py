"""Core messages name parameters; the command line says them as flags, the app as fields.

``core`` never writes a flag into a message (no ``--fpc`` in its source outside the command
line package); it names the parameter with :func:`core.errors.named`, and each interface
installs its own words for every parameter.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core import errors
from core.cli import main as cli_main
from core.cli.output import FLAG_WORDS
from core.confusion import Population
from core.errors import InputError, named, use_words
from core.planning import make_plan
from desktop.formatting import FIELD_WORDS

ROOT = Path(__file__).resolve().parent.parent


def test_both_interfaces_have_words_for_every_parameter():
    assert set(FLAG_WORDS) == set(errors.PARAMETERS)
    assert set(FIELD_WORDS) == set(errors.PARAMETERS)
    assert all(word.startswith("--") for word in FLAG_WORDS.values())
    assert not any("--" in word or "`" in word for word in FIELD_WORDS.values())


def test_core_outside_the_command_line_names_no_flag():
    flag = re.compile(r"""["'][^"'\n]*?(?<![\w-])--[a-z][\w-]*""")
    offenders = []
    for path in sorted((ROOT / "core").rglob("*.py")):
        if "cli" in path.relative_to(ROOT / "core").parts:
            continue
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            code = line.split("#", 1)[0]
            if flag.search(code) and "``" not in code and "prplanner " not in code:
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []


def _fpc_refusal() -> str:
    with pytest.raises(InputError) as caught:
        make_plan(population=Population.from_k(0.03), precision=0.9, recall=0.8, fpc=True)
    return str(caught.value)


def test_one_refusal_in_the_words_of_each_interface():
    assert _fpc_refusal() == "`fpc` needs both population counts (`population`)"
    previous = use_words(FIELD_WORDS)
    try:
        assert _fpc_refusal() == (
            "Finite population correction needs both population counts "
            "(Predicted positive N1 and Predicted negative N0)"
        )
    finally:
        use_words(previous)
    assert named("fpc") == "`fpc`"  # put back


def test_the_command_line_says_flags_and_then_puts_the_words_back(capsys):
    previous = use_words(FIELD_WORDS)
    try:
        code = cli_main(["plan", "--k", "0.03", "--precision", "0.9", "--recall", "0.8",
                         "--margin", "0.05", "--fpc"])  # fmt: skip
        assert named("fpc") == "Finite population correction"
    finally:
        use_words(previous)
    assert code == 2
    error = capsys.readouterr().err
    assert "--fpc" in error and "`" not in error and "Finite" not in error


def test_an_unlisted_parameter_is_a_programming_error():
    with pytest.raises(KeyError):
        named("no_such_parameter")


def test_every_parameter_core_names_is_listed():
    """A name missing from the list would turn a refusal into a KeyError."""
    used = set()
    for path in (ROOT / "core").rglob("*.py"):
        used |= set(re.findall(r"""named\(\s*["']([^"']+)["']\s*\)""", path.read_text()))
    used |= {"n_parent", "n_child"}  # named("n_" + who) in core.ensemble
    assert used and used <= set(errors.PARAMETERS)


def test_a_column_choice_is_said_as_a_flag_or_as_what_to_pick_in_the_columns_dialog():
    from core.workbook.rounds import ColumnChoice, choice_advice

    counts = [(field, None) for field in ("tp", "fp", "fn", "tn")]
    previous = use_words(FLAG_WORDS)
    try:
        assert choice_advice(("ignore", "Week")) == "use --column ignore=Week"
        assert choice_advice(*counts) == (
            "use --column tp=HEADER --column fp=HEADER --column fn=HEADER --column tn=HEADER"
        )
        assert ColumnChoice.parse("Fraud!tp=Hits").in_words() == "--column Fraud!tp=Hits"
        use_words(FIELD_WORDS)
        # The app's Columns… dialog lists the roles in these words (no ROLE=HEADER syntax).
        assert choice_advice(("ignore", "Week")) == (
            "choose “nothing (ignored)” for column 'Week' with Columns… in the Rounds panel"
        )
        assert choice_advice(*counts) == (
            "choose which columns hold the TP, FP, FN and TN with Columns… in the Rounds panel"
        )
        assert choice_advice(("classifier", None), ("model_version", "Model")) == (
            "choose “model version” for column 'Model' and choose which column holds the "
            "classifier with Columns… in the Rounds panel"
        )
        assert ColumnChoice.parse("Fraud!tp=Hits").in_words() == (
            "“TP” for column 'Hits' of sheet 'Fraud'"
        )
        # Review 20: "classifier=" names no column ("for column ''" in the app).
        assert ColumnChoice.parse("Other!classifier=").in_words() == (
            "the name of sheet 'Other' as the classifier"
        )
    finally:
        use_words(previous)
