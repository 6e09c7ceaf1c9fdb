"""Every ``prplanner`` subcommand returns a core result object, and ``--json`` is that
object's ``to_dict()``: the CLI adds no keys of its own."""

from __future__ import annotations

import dataclasses
import json

import pytest

from core.cli import build_parser, main
from core.cli.output import json_ready


def _items_csv(path):
    lines = ["item_id,predicted,score,label"]
    for index in range(400):
        flagged = index % 10 == 0
        lines.append(f"m{index},{int(flagged)},{0.9 if flagged else 0.1},{int(index % 20 == 0)}")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def argv_by_command(tmp_path, shared_fixtures):
    items = _items_csv(tmp_path / "items.csv")
    rounds = shared_fixtures / "rounds_messy.xlsx"
    return {
        "plan": ["plan", "--population", "2000", "60000", "--precision", "0.8", "--recall", "0.7"],
        "evaluate": ["evaluate", "--k", "0.05", "--tp", "40", "--fp", "10", "--fn", "5",
                     "--tn", "200", "--seed", "1", "--replicates", "200"],
        "compare": ["compare", "--k", "0.05", "--tp", "40", "--fp", "10", "--fn", "5",
                    "--tn", "200", "--k2", "0.05", "--tp2", "30", "--fp2", "20", "--fn2", "5",
                    "--tn2", "200", "--seed", "1", "--replicates", "1000"],
        "coverage": ["coverage", "--k", "0.05", "--v", "400", "--s", "3", "--precision",
                     "0.8", "--recall", "0.7", "--reps", "100", "--replicates", "100",
                     "--seed", "1"],
        "samplesize": ["samplesize", "--margin", "0.05"],
        "p3": ["p3", "--tpr", "0.8", "--fpr", "0.01", "--points", "5"],
        "curves": ["curves", str(items)],
        "ensemble": ["ensemble", "--parent-size", "1000", "--child-size", "200",
                     "--overlap", "150", "--trials", "50", "--seed", "1"],
        "rounds": ["rounds", str(rounds)],
        "report": ["report", str(rounds), "-o", str(tmp_path / "report.xlsx")],
        "select": ["select", str(items), "--n-pos", "5", "--n-neg", "5", "--seed", "3",
                   "-o", str(tmp_path / "labels.xlsx")],
        "labels": ["labels", str(tmp_path / "labels.xlsx")],
        "count": ["count", str(items)],
    }  # fmt: skip


def test_every_command_returns_a_frozen_result_whose_dict_is_the_json(
    argv_by_command, capsys, monkeypatch
):
    from core.cli import COMMANDS

    assert set(argv_by_command) == set(COMMANDS)
    for name, argv in argv_by_command.items():
        args = build_parser(name).parse_args(argv)
        module = args._module
        seen = []

        def keep(namespace, run=module.run, seen=seen):
            seen.append(run(namespace))
            return seen[-1]

        monkeypatch.setattr(module, "run", keep)
        status = main([*argv, "--json"])
        captured = capsys.readouterr()
        assert status == 0, (name, captured.err)
        (result,) = seen
        assert not isinstance(result, dict), name
        assert dataclasses.is_dataclass(result), name
        assert type(result).__dataclass_params__.frozen, name
        assert json.loads(captured.out) == json_ready(result.to_dict()), name
        # The text form reads the same object.
        monkeypatch.setattr(module, "run", lambda namespace, result=result: result)
        assert main(argv) == 0, name
        assert capsys.readouterr().out.strip(), name
