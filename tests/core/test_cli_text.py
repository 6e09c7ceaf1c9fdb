"""Snapshots of the command line's text output: what a lead reads in the terminal.

The numbers behind them are tested against independent computations elsewhere; these
tests catch unintended changes to the layout and wording (which interval is marked to
quote, percent formats, notes). A deliberate change is recorded by running
``PRPLANNER_UPDATE_SNAPSHOTS=1 python -m pytest tests/core/test_cli_text.py`` and reviewing
the diff of ``tests/data/cli_text/``.
"""

from __future__ import annotations

import os
import re
import shutil

import pytest

from core.cli import main
from tests.conftest import SHARED_FIXTURES

SNAPSHOTS = __import__("pathlib").Path(__file__).resolve().parents[1] / "data" / "cli_text"
ROUNDS = "ROUNDS.xlsx"

COMMANDS = {
    "samplesize": ["samplesize", "--margin", "0.03"],
    "samplesize_fpc": ["samplesize", "--margin", "0.03", "--population", "5000"],
    "plan": [
        "plan", "--population", "41200", "1251000", "--precision", "0.9", "--recall", "0.8",
        "--margin", "0.05",
    ],
    "plan_assured": [
        "plan", "--k", "0.03", "--precision", "0.9", "--recall", "0.8", "--margin", "0.05",
        "--assurance-target", "0.9",
    ],
    "evaluate": [
        "evaluate", "--population", "41200", "1251000", "--tp", "225", "--fp", "31", "--fn",
        "14", "--tn", "730", "--seed", "7", "--replicates", "2000",
    ],
    "compare": [
        "compare", "--k", "0.03", "--tp", "90", "--fp", "10", "--fn", "12", "--tn", "900",
        "--k2", "0.03", "--tp2", "80", "--fp2", "20", "--fn2", "15", "--tn2", "900", "--seed",
        "3", "--replicates", "20000",
    ],
    "p3": ["p3", "--tpr", "0.8", "--fpr", "0.01", "--sigma-tpr", "0.02", "--sigma-fpr", "0.002"],
    "ensemble": [
        "ensemble", "--parent-size", "120000", "--child-size", "41200", "--overlap", "36000",
        "--trials", "50", "--seed", "5",
    ],
    "rounds": ["rounds", ROUNDS],
}  # fmt: skip


def _normalise(text: str, folder: str) -> str:
    """The scratch folder's path and timings vary between runs: replace them."""
    text = text.replace(folder, "<tmp>")
    return re.sub(r"\d+(\.\d+)? ?(ms|s)\b(?= ?\))", "<time>", text)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_text_output_matches_its_snapshot(name, capsys, tmp_path):
    rounds = tmp_path / "rounds.xlsx"
    shutil.copyfile(SHARED_FIXTURES / "rounds_simple.xlsx", rounds)
    argv = [str(rounds) if part == ROUNDS else part for part in COMMANDS[name]]
    assert main(argv) == 0
    captured = capsys.readouterr()
    text = _normalise(
        captured.out + ("\n[stderr]\n" + captured.err if captured.err else ""), str(tmp_path)
    )
    snapshot = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("PRPLANNER_UPDATE_SNAPSHOTS"):
        snapshot.write_text(text, encoding="utf-8")
    assert snapshot.is_file(), f"no snapshot {snapshot.name}: record it (see module docstring)"
    assert text == snapshot.read_text(encoding="utf-8")
