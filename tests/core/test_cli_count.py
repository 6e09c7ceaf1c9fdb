"""``prplanner count``: the population of an item list, counted independently here with the
csv module, and the refusals it shares with ``select``."""

from __future__ import annotations

import csv
import json
import random

from core.cli import main

COUNT_KEYS = ["file", "file_sha256", "rows", "population_pos", "population_neg", "classifiers"]


def _items(path, count=500, seed=4):
    rng = random.Random(seed)
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["item id", "prediction", "spam_flag"])
        for index in range(count):
            writer.writerow(
                [f"x{index}", rng.choice(["yes", "no", "no", "no"]), rng.choice(["1", "0"])]
            )
    return path


def test_count_matches_a_count_by_hand(capsys, tmp_path):
    path = _items(tmp_path / "items.csv")
    with path.open(newline="", encoding="utf-8") as stream:
        rows = list(csv.DictReader(stream))
    flagged = sum(row["prediction"] == "yes" for row in rows)
    spam = sum(row["spam_flag"] == "1" for row in rows)
    both = sum(row["spam_flag"] == "1" and row["prediction"] == "yes" for row in rows)
    status = main(["count", str(path), "--classifiers", "spam_flag", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert status == 0 and list(data) == COUNT_KEYS
    assert (data["rows"], data["population_pos"], data["population_neg"]) == (
        len(rows), flagged, len(rows) - flagged,
    )  # fmt: skip
    (further,) = data["classifiers"]
    assert (further["name"], further["population_pos"]) == ("spam_flag", spam)
    assert further["flagged_by_main"] == both
    status = main(["count", str(path), "--classifiers", "spam_flag"])
    out = capsys.readouterr().out
    assert f"{spam:,} flagged ({both:,} of them flagged by prediction too)" in out
    suggested = f"prplanner ensemble --parent-size {flagged} --child-size {spam} --overlap {both}"
    assert suggested in out
    # The suggested command runs as printed.
    assert main(suggested.split()[1:]) == 0
    capsys.readouterr()
    status = main(["count", str(path)])
    out = capsys.readouterr().out
    assert status == 0 and f"prplanner plan --population {flagged} {len(rows) - flagged}" in out
    assert out.rstrip().endswith("--fpc")


def test_count_refuses_what_select_refuses(capsys, tmp_path):
    path = tmp_path / "dupes.csv"
    path.write_text("id,predicted\na,1\nb,0\na,0\n", encoding="utf-8")
    status = main(["count", str(path)])
    err = capsys.readouterr().err
    assert status == 2 and "duplicate item ids" in err and err.count("dupes.csv") == 1


def test_a_labeling_workbook_or_a_session_is_not_taken_for_an_item_list(capsys, tmp_path):
    from core.session import SessionState
    from core.workbook.session_io import save_session

    items = tmp_path / "items.csv"
    items.write_text(
        "id,predicted\n" + "".join(f"m{i},{int(i % 7 == 0)}\n" for i in range(200)),
        encoding="utf-8",
    )
    sheet = tmp_path / "round.xlsx"
    assert main(["select", str(items), "--n-pos", "5", "--n-neg", "5", "-o", str(sheet)]) == 0
    capsys.readouterr()
    assert main(["count", str(sheet)]) == 2
    assert "round.xlsx is a labeling workbook" in capsys.readouterr().err
    session = tmp_path / "session.xlsx"
    save_session(session, SessionState())
    assert main(["count", str(session)]) == 2
    assert "session.xlsx is a session or report PR Planner wrote" in capsys.readouterr().err


def test_count_names_the_main_classifier_the_plan_is_for(capsys, tmp_path):
    # With further classifiers, the plan's population is the main one's (trial 11).
    path = tmp_path / "items.csv"
    path.write_text(
        "item_id,flag_travel,flag_v2\n"
        + "".join(f"x{i},{i % 4 == 0:d},{i % 3 == 0:d}\n" for i in range(40)),
        encoding="utf-8",
    )
    assert main(["count", str(path), "--predicted", "flag_travel", "--classifiers", "flag_v2"]) == 0
    out = capsys.readouterr().out
    assert "main classifier flag_travel:" in out
    assert "--population 10 30" in out and "sizes for the main classifier, flag_travel" in out
