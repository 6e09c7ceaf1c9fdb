"""What a rounds workbook's columns are read as: classifier, model version, the sheet's name,
the user's choices (``--column ROLE=HEADER``), and a session about the user's own rounds."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import openpyxl
import pytest

from core.cli import main
from core.confusion import ConfusionMatrix
from core.errors import InputError
from core.session import SessionState
from core.workbook.report import ROUNDS_HEADER, build_report
from core.workbook.rounds import (
    ROUND_KEYS,
    ColumnChoice,
    is_generic_sheet_name,
    looks_like_version,
    read_rounds,
)
from core.workbook.session_io import (
    read_session,
    report_subject,
    round_key,
    save_session,
    workbook_session,
)

HEADER = ("Round", "Date", "Model", "k", "TP", "FP", "FN", "TN")
VERSIONS = ["v2.1", "v2.2", "v2.3"]
#: Values of the bundled example that must never appear in a report of the user's data.
EXAMPLE_NUMBERS = {41_200, 1_251_000, 120_000, 225, 31, 14, 730}
EXAMPLE_WORDS = ("travel", "finance")


def write_book(path: Path, sheets: dict[str, list[list]]) -> Path:
    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for title, rows in sheets.items():
        sheet = workbook.create_sheet(title)
        for row in rows:
            sheet.append(row)
    workbook.save(path)
    return path


def versioned_rows(versions=VERSIONS) -> list[list]:
    rows = [list(HEADER)]
    for index, version in enumerate(versions):
        day = dt.date(2026, 1, 5 + 7 * index)
        rows.append([f"R{index + 1}", day, version, 0.032, 120 + index, 20, 11, 800])
    return rows


# --- the reader's rules -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("v2.1", True), ("2.3.0", True), ("v3", True), ("V 4", True), ("1.0-rc1", True),
        ("version 2", True), (2.1, True), (3, True),
        ("fraud", False), ("gpt-4o", False), ("xgboost v2", False), ("", False),
        (None, False), (True, False), (-1, False),
    ],
)  # fmt: skip
def test_looks_like_version(value, expected):
    assert looks_like_version(value) is expected


@pytest.mark.parametrize(
    ("name", "generic"),
    [
        ("Sheet1", True), ("Sheet", True), ("Feuil1", True), ("Tabelle2", True),
        ("Rounds", True), ("rounds 2026", True), ("Data", True), ("History", True),
        ("2026", True),
        ("Fraud", False), ("travel", False), ("Spam filter", False),
    ],
)  # fmt: skip
def test_generic_sheet_names_are_not_classifiers(name, generic):
    assert is_generic_sheet_name(name) is generic


def test_a_model_column_of_versions_is_the_model_version_and_the_sheet_names_the_classifier(
    tmp_path,
):
    path = write_book(tmp_path / "book.xlsx", {"Fraud": versioned_rows()})
    book = read_rounds(path)
    assert [item.classifier for item in book.rounds] == ["Fraud"] * 3
    assert [item.model_version for item in book.rounds] == VERSIONS
    (reading,) = book.columns
    assert reading.header_of("model_version") == "Model"
    assert reading.header_of("classifier") == ""  # the sheet's name
    assert {item.role for item in reading.guessed} == {"model_version", "classifier"}
    version = next(item for item in reading.roles if item.role == "model_version")
    assert version.column == "C" and "v2.1" in version.reason


@pytest.mark.parametrize("title", ["Sheet1", "Rounds", "Data"])
def test_a_generic_sheet_name_gives_no_classifier(tmp_path, title):
    path = write_book(tmp_path / "book.xlsx", {title: versioned_rows()})
    book = read_rounds(path)
    assert [item.classifier for item in book.rounds] == [None] * 3
    assert [item.model_version for item in book.rounds] == VERSIONS


def test_a_classifier_column_wins_over_the_sheet_name(tmp_path):
    rows = versioned_rows()
    rows[0][2] = "Category"
    for row, name in zip(rows[1:], ("spam", "spam", "phishing"), strict=True):
        row[2] = name
    book = read_rounds(write_book(tmp_path / "book.xlsx", {"Fraud": rows}))
    assert [item.classifier for item in book.rounds] == ["spam", "spam", "phishing"]
    assert [item.model_version for item in book.rounds] == [None] * 3
    assert book.columns[0].guessed == ()


def test_a_model_column_of_names_is_the_classifier_and_says_it_guessed(tmp_path):
    rows = versioned_rows(["spam", "spam", "spam"])
    book = read_rounds(write_book(tmp_path / "book.xlsx", {"Sheet1": rows}))
    assert [item.classifier for item in book.rounds] == ["spam"] * 3
    assert [item.model_version for item in book.rounds] == [None] * 3
    (guess,) = book.columns[0].guessed
    assert (guess.role, guess.header) == ("classifier", "Model")


def test_with_a_classifier_column_a_model_column_is_the_version(tmp_path):
    rows = [[*HEADER, "Classifier"]] + [[*row, "fraud"] for row in versioned_rows()[1:]]
    book = read_rounds(write_book(tmp_path / "book.xlsx", {"Sheet1": rows}))
    assert [item.classifier for item in book.rounds] == ["fraud"] * 3
    assert [item.model_version for item in book.rounds] == VERSIONS


def test_a_version_header_is_the_version_without_guessing(tmp_path):
    rows = versioned_rows(["2.1.0", "2.2.0", "2.3.0"])
    rows[0][2] = "Model version"
    book = read_rounds(write_book(tmp_path / "book.xlsx", {"Fraud": rows}))
    assert [item.model_version for item in book.rounds] == ["2.1.0", "2.2.0", "2.3.0"]
    assert [item.role for item in book.columns[0].guessed] == ["classifier"]  # sheet name


# --- the user's choices ---------------------------------------------------------------------


def test_choice_parses_and_prints_back():
    choice = ColumnChoice.parse("Fraud!classifier=Model")
    assert (choice.sheet, choice.role, choice.header) == ("Fraud", "classifier", "Model")
    assert ColumnChoice.parse(choice.to_text()) == choice
    assert ColumnChoice.parse("version=Model").role == "model_version"
    assert ColumnChoice.parse("classifier=").header == ""
    for bad in ("classifier", "colour=Model", "tp="):
        with pytest.raises(InputError):
            ColumnChoice.parse(bad)


def test_choices_override_the_reader(tmp_path):
    path = write_book(tmp_path / "book.xlsx", {"Fraud": versioned_rows()})
    as_classifier = read_rounds(path, columns=["classifier=Model"])
    assert [item.classifier for item in as_classifier.rounds] == VERSIONS
    assert [item.model_version for item in as_classifier.rounds] == [None] * 3
    (role,) = [item for item in as_classifier.columns[0].roles if item.role == "classifier"]
    assert role.chosen and not role.guessed and role.header == "Model"
    ignored = read_rounds(path, columns=["ignore=Model"])
    assert [item.model_version for item in ignored.rounds] == [None] * 3
    other_sheet = read_rounds(path, columns=["Other!classifier=Model"])
    assert [item.classifier for item in other_sheet.rounds] == ["Fraud"] * 3
    assert [choice.sheet for choice in other_sheet.unused_choices] == ["Other"]


def test_a_choice_can_name_a_count_column_the_reader_does_not_know(tmp_path):
    rows = versioned_rows()
    rows[0][4] = "Correct flags"
    path = write_book(tmp_path / "book.xlsx", {"Fraud": rows})
    assert read_rounds(path).rounds == ()
    book = read_rounds(path, columns=["tp=Correct flags"])
    assert [item.tp for item in book.rounds] == [120, 121, 122]


#: Rounds kept under a lead's own words for everything PR Planner reads.
OWN_WORDS_HEADER = ["Week", "Model", "Hits", "False alarms", "Misses", "Correct rejections",
                    "Flagged", "Not flagged"]  # fmt: skip
OWN_WORDS_ROWS = [
    ["2026-10-01", "finance", 170, 12, 30, 5300, 41000, 1250000],
    ["2026-10-15", "finance", 165, 15, 28, 5320, 41200, 1251000],
]
OWN_WORDS_CHOICES = [
    "tp=Hits",
    "fp=False alarms",
    "fn=Misses",
    "tn=Correct rejections",
    "population_pos=Flagged",
    "population_neg=Not flagged",
]


def own_words_book(tmp_path: Path) -> Path:
    rows = [["Audit of the finance folder"], OWN_WORDS_HEADER, *OWN_WORDS_ROWS]
    return write_book(tmp_path / "own_words.xlsx", {"Audit": rows})


def test_a_sheet_in_the_leads_own_words_offers_its_header_row(tmp_path):
    book = read_rounds(own_words_book(tmp_path))
    assert book.rounds == ()
    (skipped,) = book.skipped_sheets
    guess = skipped.header_guess
    assert guess is not None and guess.header_row == 2  # not the one-cell title above it
    assert [text for _, text in guess.headers] == OWN_WORDS_HEADER
    assert [(item.role, item.header) for item in guess.roles] == [("date", "Week")]
    assert "row 2 reads 'Week', 'Model', 'Hits'" in skipped.reason
    assert "use `column` tp=HEADER `column` fp=HEADER `column` fn=HEADER `column` tn=HEADER" in (
        skipped.reason
    )


def test_choosing_the_columns_reads_the_rounds_in_the_leads_own_words(tmp_path):
    book = read_rounds(own_words_book(tmp_path), columns=OWN_WORDS_CHOICES)
    assert [(r.tp, r.fp, r.fn, r.tn) for r in book.rounds] == [
        (170, 12, 30, 5300),
        (165, 15, 28, 5320),
    ]
    assert [(r.population_pos, r.population_neg) for r in book.rounds] == [
        (41000, 1250000),
        (41200, 1251000),
    ]
    assert [r.classifier for r in book.rounds] == ["finance"] * 2
    assert [r.date for r in book.rounds] == [dt.date(2026, 10, 1), dt.date(2026, 10, 15)]


def test_a_table_of_numbers_without_a_header_offers_nothing(tmp_path):
    path = write_book(tmp_path / "numbers.xlsx", {"Data": [row[2:] for row in OWN_WORDS_ROWS]})
    (skipped,) = read_rounds(path).skipped_sheets
    assert skipped.header_guess is None and "reads" not in skipped.reason


def test_a_choice_names_the_classifier_after_a_generic_sheet(tmp_path):
    path = write_book(tmp_path / "book.xlsx", {"Rounds": versioned_rows()})
    book = read_rounds(path, columns=["classifier="])
    assert [item.classifier for item in book.rounds] == ["Rounds"] * 3


# --- the command line -----------------------------------------------------------------------


def run_rounds(capsys, *argv):
    status = main(["rounds", *argv, "--json"])
    captured = capsys.readouterr()
    return status, (json.loads(captured.out) if status == 0 else None), captured.err


def test_rounds_json_has_model_version_and_columns(capsys, tmp_path):
    path = write_book(tmp_path / "book.xlsx", {"Fraud": versioned_rows()})
    status, data, err = run_rounds(capsys, str(path))
    assert status == 0
    assert list(data["rounds"][0]) == list(ROUND_KEYS)
    assert [item["model_version"] for item in data["rounds"]] == VERSIONS
    assert [item["classifier"] for item in data["rounds"]] == ["Fraud"] * 3
    (reading,) = data["columns"]
    assert reading["roles"]["model_version"] == "Model" and reading["roles"]["classifier"] == ""
    assert sorted(reading["guessed"]) == ["classifier", "model_version"]
    assert "note: sheet 'Fraud': column C 'Model' read as the model version" in err
    assert "--column classifier=Model" in err


def test_rounds_column_flag_overrides(capsys, tmp_path):
    path = write_book(tmp_path / "book.xlsx", {"Fraud": versioned_rows()})
    status, data, _ = run_rounds(capsys, str(path), "--column", "classifier=Model")
    assert status == 0
    assert [item["classifier"] for item in data["rounds"]] == VERSIONS
    assert data["columns"][0]["guessed"] == []


@pytest.mark.parametrize(
    ("flag", "words"),
    [
        ("colour=Model", "unknown column role 'colour'"),
        ("classifier=Modle", "no column has that header"),
        ("nothing", "must read ROLE=HEADER"),
    ],
)
def test_rounds_column_flag_mistakes_exit_2_with_one_line(capsys, tmp_path, flag, words):
    path = write_book(tmp_path / "book.xlsx", {"Fraud": versioned_rows()})
    status = main(["rounds", str(path), "--column", flag])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and words in err


def test_rounds_says_which_columns_the_choices_left_out(capsys, tmp_path):
    path = own_words_book(tmp_path)
    status, data, err = run_rounds(capsys, str(path))
    assert status == 0 and data["rounds"] == []
    (skipped,) = data["skipped_sheets"]
    assert skipped["header_row"] == 2 and skipped["headers"] == OWN_WORDS_HEADER
    counts_only = [arg for text in OWN_WORDS_CHOICES[:4] for arg in ("--column", text)]
    status = main(["rounds", str(path), *counts_only])
    err = capsys.readouterr().err
    assert status == 2
    line = err.splitlines()[-1]
    assert line.startswith("error: --column tp=Hits") and "no sheet could be read" in line
    assert "neither a k column nor both population columns" in line
    every = [arg for text in OWN_WORDS_CHOICES for arg in ("--column", text)]
    status, data, _ = run_rounds(capsys, str(path), *every)
    assert status == 0 and [item["tp"] for item in data["rounds"]] == [170, 165]


# --- a session about the user's rounds --------------------------------------------------------


def user_book(tmp_path: Path) -> Path:
    """Travel-like sheet with k only and versions, a Fraud sheet with population counts."""
    fraud = [["Round", "Week of", "N pred+", "N pred-", "TP", "FP", "FN", "TN"]]
    fraud += [
        ["FR-01", dt.date(2026, 2, 2), 3_100, 96_900, 150, 30, 12, 900],
        ["FR-02", dt.date(2026, 3, 2), 3_300, 96_700, 160, 25, 10, 905],
    ]
    return write_book(tmp_path / "mine.xlsx", {"Spam": versioned_rows(), "Fraud": fraud})


def test_a_plain_workbook_session_is_about_its_latest_round_and_nothing_of_the_example(tmp_path):
    path = user_book(tmp_path)
    opened = read_session(path)
    state = opened.state
    latest = opened.book.rounds[-1]  # FR-02, 2026-03-02: the latest date of all
    assert (latest.round, latest.classifier) == ("FR-02", "Fraud")
    assert state.current_round == round_key(latest) == "Fraud!3"
    assert state.evaluate.matrix == latest.matrix == state.plan.previous
    assert state.evaluate.population.predicted_positive == 3_300
    assert state.plan.population == state.evaluate.population
    assert state.previous_round == "FR-02" and state.plan.belief == "previous"
    assert state.plan.v == latest.matrix.total
    assert state.ensemble.children == ()
    assert report_subject(state) == latest


def test_k_only_rounds_get_population_counts_that_agree_with_k(tmp_path):
    path = user_book(tmp_path)
    spam = read_rounds(path).rounds[2]
    state, item, _ = workbook_session(read_rounds(path).rounds, item=spam)
    population = state.evaluate.population
    assert item is spam and population.mode == "k" and population.k == 0.032
    assert Fraction(population.predicted_positive, population.predicted_negative) == Fraction(
        4, 125
    )


def _all_cells(path: Path):
    workbook = openpyxl.load_workbook(path, data_only=True)
    for sheet in workbook.worksheets:
        for row in sheet.iter_rows(values_only=True):
            yield sheet.title, row


def test_the_report_of_a_user_workbook_has_no_example_values(tmp_path, capsys):
    path = user_book(tmp_path)
    out = tmp_path / "report.xlsx"
    assert main(["report", str(path), "-o", str(out), "--round", "R3"]) == 0
    capsys.readouterr()
    inputs = {}
    for title, row in _all_cells(out):
        for value in row:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                assert value not in EXAMPLE_NUMBERS, (title, row)
            if isinstance(value, str) and title != "Summary":
                assert not any(word in value.casefold() for word in EXAMPLE_WORDS), (title, row)
        if title == "Inputs" and row and row[0]:
            inputs[row[0]] = row[1]
    ensemble_keys = [key for key in inputs if key.startswith("ensemble.")]
    assert ensemble_keys == ["ensemble.children.count"]
    assert inputs["ensemble.children.count"] == 0
    for prefix in ("plan.population", "evaluate.population"):
        ratio = inputs[f"{prefix}.predicted_positive"] / inputs[f"{prefix}.predicted_negative"]
        assert ratio == pytest.approx(inputs[f"{prefix}.k"], rel=1e-6)
        assert inputs[f"{prefix}.k"] == 0.032


def test_the_subject_and_the_sections_name_classifier_and_version(tmp_path):
    path = user_book(tmp_path)
    rounds = read_rounds(path).rounds
    state, _item, _ = workbook_session(rounds, item=rounds[1])
    content = build_report(state, round_name=report_subject(state))
    assert content.subject == "round R2 (Spam, model v2.2)"
    summary = {row.label: row.value for row in content.summary}
    assert summary["Classifier"] == "Spam" and summary["Model version"] == "v2.2"
    column = ROUNDS_HEADER.index("Model version")
    assert [row[column] for row in content.rounds.rows] == [*VERSIONS, None, None]
    # edited counts are no longer that round: the report says it is about the typed counts
    edited = ConfusionMatrix(tp=1, fp=2, fn=3, tn=4)
    typed = replace(state, evaluate=replace(state.evaluate, matrix=edited))
    assert report_subject(typed) is None


def test_column_choices_are_kept_with_the_session_exactly(tmp_path):
    path = user_book(tmp_path)
    opened = read_session(path, columns=["Spam!classifier=Model"])
    state = opened.state
    assert state.columns == ("Spam!classifier=Model",)
    assert {item.classifier for item in state.rounds if item.sheet == "Spam"} == set(VERSIONS)
    saved = tmp_path / "session.xlsx"
    save_session(saved, state, sources=(path,))
    reopened = read_session(saved)
    assert reopened.is_session and reopened.state == state
    assert SessionState().columns == () and SessionState().current_round == ""


def test_the_apps_own_words_for_the_strata_are_population_columns(tmp_path):
    """A lead who copies the app's words ("flagged", "unflagged") into a header gets the
    population counts read."""
    from core.workbook.rounds import read_rounds

    path = tmp_path / "mine.xlsx"
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "History"
    sheet.append(["Round", "N flagged", "N unflagged", "TP", "FP", "FN", "TN"])
    sheet.append(["May", 10_287, 189_713, 353, 315, 88, 5_203])
    workbook.save(path)
    (found,) = read_rounds(path).rounds
    assert (found.population_pos, found.population_neg) == (10_287, 189_713)
    assert found.k == pytest.approx(10_287 / 189_713)


def test_the_rounds_of_one_classifier_spelled_two_ways_follow_each_other():
    from core.workbook.rounds import Round
    from core.workbook.session_io import (
        compared_round,
        insertion_point,
        next_round_name,
        round_before,
    )

    def past(name, day, classifier):
        return Round(sheet="Rounds", row=day, round=name, date=dt.date(2026, 3, day),
                     classifier=classifier, k=0.035, tp=250, fp=30, fn=80, tn=4200)  # fmt: skip

    rounds = (past("TR-05", 2, "travel"), past("FI-01", 3, "finance"), past("TR-06", 9, "Travel"))
    assert round_before(rounds, rounds[2]) is rounds[0]
    assert insertion_point(rounds, "TRAVEL") == 3
    assert insertion_point(rounds, "finance ") == 2
    assert next_round_name(rounds, "travel") == "TR-07"
    state = SessionState(rounds=rounds, current_round=round_key(rounds[2]), previous_round="TR-05")
    state = replace(state, evaluate=replace(state.evaluate, matrix=rounds[2].matrix))
    assert compared_round(state) is rounds[0]


def test_a_header_typed_twice_is_chosen_by_its_letter_never_by_its_text(tmp_path):
    # "fn=TP" took the first TP column for FN too: TP 3 and FN 40 where the sheet holds
    # 40 and 3, silently (review, session 12).
    rows = [
        ["Round", "k", "TP", "FP", "TP", "TN"],
        ["R1", 0.05, 40, 10, 3, 500],
    ]
    path = write_book(tmp_path / "typo.xlsx", {"Fraud": rows})
    with pytest.raises(InputError, match=r"columns C and E are both headed 'TP'.*fn=E"):
        read_rounds(path, columns=["fn=TP"])
    (item,) = read_rounds(path, columns=["fn=E"]).rounds
    assert (item.tp, item.fp, item.fn, item.tn) == (40, 10, 3, 500)


def _dated_in_own_words(path, dates, extra=None):
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Rounds"
    sheet.append(["Datum", "k", "TP", "FP", "FN", "TN", *([extra[0]] if extra else [])])
    for number, day in enumerate(dates):
        sheet.append([day, 0.03, 150 + number, 50, 20, 2980, *([extra[1]] if extra else [])])
    sheet.append(["Total", None, "=SUM(C2:C3)", None, None, None])
    workbook.save(path)
    return path


@pytest.mark.parametrize(
    "dates",
    [[dt.datetime(2024, 6, 30), dt.datetime(2024, 7, 31)], ["2024-06-30", "2024-07-31"]],
    ids=["date cells", "ISO text"],
)
def test_a_column_of_dates_under_a_header_of_ones_own_is_the_date(tmp_path, dates):
    """Trial 21: "Datum" was not read, every round was undated, and nothing said so."""
    book = read_rounds(_dated_in_own_words(tmp_path / "own.xlsx", dates))
    assert [item.date for item in book.rounds] == [dt.date(2024, 6, 30), dt.date(2024, 7, 31)]
    (reading,) = book.columns
    (role,) = [item for item in reading.roles if item.role == "date"]
    assert (role.header, role.column, role.guessed, role.reason) == (
        "Datum", "A", True, "its cells are dates"
    )  # fmt: skip
    from core.workbook.rounds import describe_role

    assert describe_role("Rounds", role).endswith(
        "read as the date (its cells are dates); if it is not, use `column` ignore=Datum"
    )
    ignored = read_rounds(
        tmp_path / "own.xlsx", columns=[ColumnChoice.parse("ignore=Datum")]
    ).rounds
    assert [item.date for item in ignored] == [None, None]


def test_two_columns_of_dates_are_not_guessed_between(tmp_path):
    days = [dt.datetime(2024, 6, 30), dt.datetime(2024, 7, 31)]
    path = _dated_in_own_words(tmp_path / "two.xlsx", days, ("Exported", dt.datetime(2024, 8, 2)))
    book = read_rounds(path)
    assert [item.date for item in book.rounds] == [None, None]
    assert not any(item.role == "date" for item in book.columns[0].roles)


def test_a_cell_that_is_no_date_in_a_guessed_date_column_leaves_its_round_undated(tmp_path):
    """Review 21: the guess looks at the first rows; "pending" further down refused the
    newest round, read (undated) before the column was guessed."""
    days = [dt.datetime(2024, 1, 1) + dt.timedelta(days=7 * n) for n in range(25)]
    path = _dated_in_own_words(tmp_path / "own.xlsx", [*days, "pending"])
    book = read_rounds(path)
    assert len(book.rounds) == 26
    assert book.rounds[-1].date is None and book.rounds[0].date == dt.date(2024, 1, 1)
    assert [item.is_totals for item in book.refused] == [True]  # the Total row only
