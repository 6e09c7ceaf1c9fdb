"""``prplanner rounds FILE.xlsx [--json]``."""

from __future__ import annotations

import json

import openpyxl

from core.cli import main

ROUND_KEYS = [
    "sheet", "row", "round", "date", "classifier", "model_version", "k", "population_pos",
    "population_neg",
    "s", "tp", "fp", "fn", "tn",
]  # fmt: skip


def run_json(capsys, *argv):
    status = main(["rounds", *argv, "--json"])
    captured = capsys.readouterr()
    return status, json.loads(captured.out) if status == 0 else None, captured.err


def test_json_keys_exactly(capsys, shared_fixtures):
    status, data, err = run_json(capsys, str(shared_fixtures / "rounds_messy.xlsx"))
    assert status == 0 and err == ""
    assert list(data) == ["rounds", "refused", "skipped_sheets", "columns"]
    assert all(list(item) == ROUND_KEYS for item in data["rounds"])
    assert all(list(item) == ["sheet", "row", "reason"] for item in data["refused"])
    assert [item["row"] for item in data["refused"]] == [12, 13, 14]
    first = data["rounds"][0]
    assert first == {
        "sheet": "travel", "row": 5, "round": "TR-01", "date": "2026-01-12",
        "classifier": "travel", "model_version": None, "k": 41200 / 1251000,
        "population_pos": 41200, "population_neg": 1251000, "s": 1.0,
        "tp": 135, "fp": 24, "fn": 127, "tn": 4714,
    }  # fmt: skip
    finance = [item for item in data["rounds"] if item["sheet"] == "finance"]
    assert finance[0]["population_pos"] is None and finance[0]["population_neg"] is None


def test_absent_values_are_null(capsys, tmp_path):
    workbook = openpyxl.Workbook()
    workbook.active.append(["k", "TP", "FP", "FN", "TN"])
    workbook.active.append([0.05, 1, 2, 3, 4])
    path = tmp_path / "bare.xlsx"
    workbook.save(path)
    status, data, _ = run_json(capsys, str(path))
    assert status == 0
    (item,) = data["rounds"]
    assert [key for key, value in item.items() if value is None] == [
        "round", "date", "classifier", "model_version", "population_pos", "population_neg",
        "s",
    ]  # fmt: skip
    assert data["refused"] == []


def test_corrupt_file_exits_2_with_one_error_line(capsys, tmp_path, shared_fixtures):
    path = tmp_path / "broken.xlsx"
    path.write_bytes((shared_fixtures / "rounds_simple.xlsx").read_bytes()[:2000])
    status = main(["rounds", str(path), "--json"])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(path) in lines[0]


def test_missing_file_exits_2(capsys, tmp_path):
    assert main(["rounds", str(tmp_path / "nope.xlsx")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_text_output_is_a_table_then_the_refusals(capsys, shared_fixtures):
    assert main(["rounds", str(shared_fixtures / "rounds_messy.xlsx")]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == [
        "sheet", "row", "round", "date", "classifier", "version", "k", "N", "pred+", "N",
        "pred-", "s",
        "TP", "FP", "FN", "TN",
    ]  # fmt: skip
    assert "TR-01" in lines[1] and "1,251,000" in lines[1] and "0.03293" in lines[1]
    assert "10 rounds loaded" in out
    assert "3 rows refused:" in out
    assert "sheet 'travel', row 14: a totals row" in out


def test_skipped_sheets_are_listed_and_noted_on_stderr(capsys, tmp_path):
    workbook = openpyxl.Workbook()
    workbook.active.title = "About"
    workbook.active.append(["nothing to see"])
    path = tmp_path / "notes.xlsx"
    workbook.save(path)
    status, data, err = run_json(capsys, str(path))
    assert status == 0
    assert data["rounds"] == data["refused"] == data["columns"] == []
    (skipped,) = data["skipped_sheets"]
    assert skipped["sheet"] == "About" and skipped["reason"].startswith("no header row")
    assert err.startswith("note: sheet 'About' skipped: no header row")


def test_a_saved_session_is_read_without_notes_about_its_report_sheets(capsys):
    from importlib import resources

    session = resources.files("resources") / "example_session.xlsx"
    assert main(["rounds", str(session)]) == 0
    captured = capsys.readouterr()
    assert "TR-01" in captured.out
    assert "skipped" not in captured.err  # Summary, Intervals, Plots ... never hold rounds
    sheets = set(openpyxl.load_workbook(session, read_only=True).sheetnames)
    assert {"Summary", "Inputs"} <= sheets


def test_a_round_asked_for_by_name_that_was_refused_says_why(capsys, shared_fixtures):
    for command in ("compare", "report"):
        extra = ["-o", "unused.xlsx"] if command == "report" else []
        status = main([command, str(shared_fixtures / "rounds_messy.xlsx"), "--round", "TR-07",
                       *extra])  # fmt: skip
        error = capsys.readouterr().err
        assert status != 0
        assert "round 'TR-07' (sheet 'travel', row 12) could not be read" in error
        assert "TP must be a whole number >= 0, got -3" in error


def test_compare_on_a_plain_workbook_does_not_speak_of_a_session(capsys, tmp_path):
    # "R2 (rules), the session's current round, is reported": there was no session, only
    # a last row (review 14).
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Round", "Date", "Classifier", "k", "TP", "FP", "FN", "TN"])
    for name, date in (("R1", "2026-09-01"), ("R2", "2026-10-01")):
        for classifier, tp in (("travel", 140), ("rules", 90)):
            sheet.append([name, date, classifier, 0.04, tp, 30, 60, 4000])
    path = tmp_path / "shared.xlsx"
    workbook.save(path)
    assert main(["compare", str(path), "--round", "R2"]) == 0
    said = capsys.readouterr()
    text = said.out + said.err
    assert "session" not in text and "the main classifier's, R2 (travel)" in text


def test_a_round_without_a_date_is_compared_with_the_round_above_it_and_said(capsys, tmp_path):
    import datetime as dt

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Rounds"
    sheet.append(["Round", "Date", "Classifier", "k", "TP", "FP", "FN", "TN"])
    sheet.append(["R1", dt.date(2026, 1, 5), "fraud", 0.05, 10, 20, 5, 100])
    sheet.append(["R2", None, "fraud", 0.05, 12, 18, 4, 110])
    sheet.append(["R3", dt.date(2026, 3, 5), "fraud", 0.05, 15, 15, 3, 120])
    path = tmp_path / "undated.xlsx"
    workbook.save(path)
    said = (
        "R2 (fraud; sheet 'Rounds', row 3) has no date, so it is placed after R1 (fraud), "
        "the latest round above it"
    )
    assert main(["compare", str(path), "--round", "R2"]) == 0
    captured = capsys.readouterr()
    assert "R2 (fraud) against the previous round, R1 (fraud)" in captured.out
    assert said in captured.out + captured.err
    assert main(["compare", str(path)]) == 0
    assert "R3 (fraud) against the previous round, R2 (fraud)" in capsys.readouterr().out
    assert main(["rounds", str(path)]) == 0
    assert f"note: {said}" in capsys.readouterr().err


def test_a_labeling_workbook_given_for_rounds_says_which_command_reads_it(capsys, tmp_path):
    # Fuzz 18: each of its sheets was skipped with advice to name TP/FP/FN/TN columns, and
    # `rounds` exited 0.
    items = tmp_path / "items.csv"
    items.write_text("id,predicted\n" + "".join(f"i{n},{n % 3 == 0:d}\n" for n in range(30)))
    sheet = tmp_path / "march.xlsx"
    assert main(["select", str(items), "--n-pos", "3", "--n-neg", "5", "--seed", "1",
                 "-o", str(sheet)]) == 0  # fmt: skip
    capsys.readouterr()
    for argv in (["rounds"], ["compare"], ["report", "-o", str(tmp_path / "report.xlsx")]):
        assert main([*argv, str(sheet)]) == 2
        err = capsys.readouterr().err
        assert (
            f"is a labeling workbook (a sample drawn for the editors), not a rounds workbook, "
            f"so prplanner {argv[0]} finds no rounds in it: prplanner labels" in err
        )
    assert not (tmp_path / "report.xlsx").exists()


def test_compare_without_an_earlier_round_names_the_rows_it_could_not_read(capsys, tmp_path):
    # Fuzz 17: "R1 has no earlier round" said nothing of the refused rows that may hold it.
    import datetime as dt

    workbook = openpyxl.Workbook()
    workbook.active.append(["Round", "Date", "k", "TP", "FP", "FN", "TN"])
    workbook.active.append(["R0", dt.date(2026, 1, 5), 0.05, "n/a", 20, 5, 100])
    workbook.active.append(["R1", dt.date(2026, 2, 5), 0.05, 12, 18, 4, 110])
    path = tmp_path / "refused.xlsx"
    workbook.save(path)
    assert main(["compare", str(path)]) == 2
    err = capsys.readouterr().err
    assert "R1 has no earlier round" in err
    assert "1 row of the workbook could not be read and is left out of this comparison" in err
    assert "row 2: TP must be a whole number" in err


def test_compare_with_and_without_round_compares_the_same_classifier(capsys, tmp_path):
    """Three classifiers' rounds of one draw share a name and a date: `compare` took the
    spam round and `compare --round W3` the promo one (trial 19). Both now take the main
    classifier's, and say how to compare the others."""
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Round", "Date", "Classifier", "Model version", "k", "TP", "FP", "FN", "TN"])
    for name, date in (("W2", "2024-03-10"), ("W3", "2024-03-17")):
        for classifier, tp in (("spam", 400), ("phishing", 420), ("promo", 70)):
            version = "v2" if classifier == "phishing" else None
            sheet.append([name, date, classifier, version, 0.04, tp, 30, 60, 4000])
    path = tmp_path / "three.xlsx"
    workbook.save(path)
    assert main(["compare", str(path)]) == 0
    plain = capsys.readouterr().out
    assert "W3 (spam) against the previous round, W2 (spam)" in plain.splitlines()
    assert "2 round(s) of other classifiers share its date (2024-03-17)" in plain
    # The whole label, quoted for the shell (a model version puts ", " in it; review 19).
    assert "give --round 'W3 (phishing, model v2)' to compare one of them" in plain
    assert main(["compare", str(path), "--round", "W3"]) == 0
    named = capsys.readouterr().out
    assert "W3 (spam) against the previous round, W2 (spam)" in named.splitlines()
    assert "the main classifier's, W3 (spam), is reported" in named
    assert main(["compare", str(path), "--round", "W3 (promo)"]) == 0
    assert "W3 (promo) against the previous round, W2 (promo)" in capsys.readouterr().out


def _own_words_workbook(path):
    """Rounds in a lead's own words (trial 21): "Datum", "Flagged total", ..."""
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Invoice mails"
    sheet.append(["Datum", "TP", "FP", "FN", "TN", "Flagged total", "Unflagged total"])
    sheet.append(["2024-06-30", 151, 49, 30, 2970, 1150, 48850])
    sheet.append(["2024-07-31", 160, 40, 35, 2965, 1153, 48847])
    workbook.save(path)
    return path


OWN_COLUMNS = ["--column", "population_pos=Flagged total", "--column",
               "population_neg=Unflagged total", "--column", "date=Datum"]  # fmt: skip


def test_compare_and_report_read_a_workbook_in_the_leads_own_words(capsys, tmp_path):
    """Trial 21: rounds, labels and the app took --column choices, but compare said only
    "no usable rounds" and report's refusal advised a --column it then rejected."""
    path = _own_words_workbook(tmp_path / "own.xlsx")
    assert main(["compare", str(path)]) == 2
    error = capsys.readouterr().err
    assert "has no usable rounds to compare (sheet 'Invoice mails' skipped: " in error
    assert "--column population_pos=HEADER" in error
    assert main(["compare", str(path), *OWN_COLUMNS, "--json"]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert compared["previous_round"].startswith("Invoice mails row 2")
    assert compared["current_round"].startswith("Invoice mails row 3")
    report = tmp_path / "report.xlsx"
    assert main(["report", str(path), "-o", str(report), *OWN_COLUMNS]) == 0
    out = capsys.readouterr().out
    assert "about" in out and "2024-07-31" in out
    summary = openpyxl.load_workbook(report, read_only=True)["Summary"]
    texts = [str(v) for row in summary.iter_rows(values_only=True) for v in row if v]
    assert not any("round None" in text for text in texts)


def test_a_column_choice_that_fits_no_header_is_refused_by_compare_and_report(capsys, tmp_path):
    path = _own_words_workbook(tmp_path / "own.xlsx")
    for command, extra in (("compare", []), ("report", ["-o", str(tmp_path / "r.xlsx")])):
        typo = ["--column", "population_pos=Flagged totl", "--column",
                "population_neg=Unflagged total"]  # fmt: skip
        assert main([command, str(path), *typo, *extra]) == 2
        error = capsys.readouterr().err
        assert "--column population_pos=Flagged totl, " in error
        assert "no sheet could be read with them" in error and "'Flagged total'" in error
    assert not (tmp_path / "r.xlsx").exists()


def test_column_choices_for_a_saved_session_or_no_workbook_are_refused(capsys):
    from importlib import resources

    session = resources.files("resources") / "example_session.xlsx"
    assert main(["compare", str(session), "--column", "date=Datum"]) == 2
    assert "is a saved session, whose columns were chosen when it began" in (
        capsys.readouterr().err
    )
    counts = ["--k", "0.03", "--tp", "1", "--fp", "1", "--fn", "1", "--tn", "1"]
    assert main(["compare", *counts, "--column", "date=Datum"]) == 2
    assert "give it too" in capsys.readouterr().err
    assert main(["compare", "--column", "nonsense"]) == 2
    assert "--column" in capsys.readouterr().err


def test_compare_and_report_say_what_was_guessed_as_rounds_does(capsys, tmp_path):
    """Review 21: rounds and the app said which columns were guessed; compare and report
    read the same guesses without a word."""
    path = _own_words_workbook(tmp_path / "own.xlsx")
    choices = OWN_COLUMNS[:4]  # the populations only: the date column is guessed
    assert main(["compare", str(path), *choices]) == 0
    said = capsys.readouterr()
    assert "note: sheet 'Invoice mails': column A 'Datum' read as the date" in said.out + said.err
    assert main(["report", str(path), "-o", str(tmp_path / "r.xlsx"), *choices]) == 0
    assert "note: sheet 'Invoice mails': column A 'Datum' read as the date" in (
        capsys.readouterr().out
    )
