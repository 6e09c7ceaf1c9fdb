"""Reading item lists: CSV, TSV, Parquet and .xlsx, columns by alias, and every refusal."""

from __future__ import annotations

import csv
import threading

import duckdb
import openpyxl
import pytest

from core.items import ItemColumns, ItemListError, count_items, open_items
from core.progress import Cancelled, TaskControl
from core.selection import select_sample

ROWS = [
    ["a1", "1", "0.91", "hello", "yes"],
    ["a2", "0", "0.12", "world", "no"],
    [" a3 ", "yes", "0.75", "third", "no"],
    ["a4", "no", "0.40", "fourth", "yes"],
    ["a5", "TRUE", "0.66", "fifth", "yes"],
    ["a6", "-", "0.05", "sixth", "no"],
    ["a7", "+", "0.99", "seventh", "no"],
]
HEADER = ["Item ID", "Prediction", "score", "subject", "other"]


def write_csv(path, rows=ROWS, header=HEADER, delimiter=","):
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def write_xlsx(path, rows=ROWS, header=HEADER, title_rows=0):
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    for _ in range(title_rows):
        sheet.append(["Items exported for the audit"])
    sheet.append(header)
    for row in rows:
        sheet.append(row)
    workbook.save(path)
    return path


def test_csv_columns_by_alias_and_counts(tmp_path):
    summary = count_items(write_csv(tmp_path / "items.csv"))
    assert (summary.rows, summary.population_pos, summary.population_neg) == (7, 4, 3)
    assert summary.primary.column == "Prediction"


def test_tsv_parquet_and_xlsx_give_the_same_sample(tmp_path):
    csv_path = write_csv(tmp_path / "items.csv")
    tsv_path = write_csv(tmp_path / "items.tsv", delimiter="\t")
    parquet_path = tmp_path / "items.parquet"
    duckdb.execute(
        f"COPY (SELECT * FROM read_csv('{csv_path}', all_varchar=true)) TO '{parquet_path}'"
    )
    xlsx_path = write_xlsx(tmp_path / "items.xlsx", title_rows=2)
    samples = [
        [(item.id, item.stratum, item.rank) for item in select_sample(
            path, n_pos=2, n_neg=2, seed=3).items]
        for path in (csv_path, tsv_path, parquet_path, xlsx_path)
    ]  # fmt: skip
    assert samples[0] == samples[1] == samples[2] == samples[3]
    assert {item_id for item_id, _, _ in samples[0]} <= {row[0].strip() for row in ROWS}


def test_score_with_threshold_and_classifier_flags(tmp_path):
    path = write_csv(tmp_path / "items.csv")
    columns = ItemColumns(score="score", threshold=0.66, classifiers=("other",))
    summary = count_items(path, columns)
    assert (summary.population_pos, summary.population_neg) == (4, 3)  # .91 .75 .66 .99
    assert summary.primary.name == "score >= 0.66"
    assert [(item.name, item.population_pos) for item in summary.classifiers] == [("other", 3)]


def test_kept_columns_travel_with_the_sample(tmp_path):
    path = write_csv(tmp_path / "items.csv")
    selection = select_sample(path, ItemColumns(keep=("subject",)), n_pos=4, n_neg=3, seed=1)
    subjects = {row[0].strip(): row[3] for row in ROWS}
    assert all(item.kept == (subjects[item.id],) for item in selection.items)


def test_numeric_ids_from_xlsx_read_as_shown(tmp_path):
    rows = [[1001, 1], [1002.0, 0], ["00123", 1], [1004, 0]]
    path = write_xlsx(tmp_path / "n.xlsx", rows=rows, header=["id", "predicted"])
    selection = select_sample(path, n_pos=2, n_neg=2, seed=0)
    assert sorted(item.id for item in selection.items) == ["00123", "1001", "1002", "1004"]


def text_file(path, text):
    """``path`` holding ``text`` (a string, or lines joined with line ends) as UTF-8."""
    if not isinstance(text, str):
        text = "\n".join(text) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


def refusal(path, columns=None):
    with pytest.raises(ItemListError) as caught:
        count_items(path, columns)
    return str(caught.value)


def test_duplicate_ids_are_named_with_their_rows(tmp_path):
    rows = [*ROWS, ["a2", "1", "0.5", "dup", "no"], ["a3", "0", "0.5", "dup", "no"]]
    message = refusal(write_csv(tmp_path / "dup.csv", rows=rows))
    assert "duplicate item ids" in message and "'Item ID'" in message
    assert "'a2' 2 times (row 3, row 9)" in message
    assert "'a3' 2 times (row 4, row 10)" in message


def test_repeated_hashes_are_counted_across_both_halves_of_the_range():
    """The duplicate check sorts hashes below and above 2**63 apart; count against Counter."""
    from collections import Counter

    import numpy as np

    from core.items import _repeated_values

    rng = np.random.default_rng(8)
    values = rng.integers(0, 2**64, 5_000, dtype=np.uint64, endpoint=False)
    values = np.concatenate([values, values[:7], values[:3], [np.uint64(2**63), np.uint64(2**63)]])
    values = np.concatenate([values, [np.uint64(0), np.uint64(2**64 - 1)] * 2])
    rng.shuffle(values)
    expected = sum(1 for count in Counter(values.tolist()).values() if count > 1)
    assert expected == 10
    assert _repeated_values(values.copy()) == expected
    assert _repeated_values(np.array([], dtype=np.uint64)) == 0


def test_duplicates_in_xlsx_name_the_sheet_rows(tmp_path):
    rows = [*ROWS, ["a1", "1", "0.5", "dup", "no"]]
    message = refusal(write_xlsx(tmp_path / "dup.xlsx", rows=rows, title_rows=1))
    assert "'a1' 2 times (row 3, row 10)" in message


def test_missing_ids_are_named_with_their_rows(tmp_path):
    rows = [*ROWS[:2], ["", "1", "0.5", "x", "no"], ["  ", "0", "0.5", "y", "no"]]
    message = refusal(write_csv(tmp_path / "missing.csv", rows=rows))
    assert "2 item(s) have no id" in message and "row 4, row 5" in message


def test_a_predicted_value_that_is_not_a_label_names_row_and_column(tmp_path):
    rows = [*ROWS, ["a8", "maybe", "0.5", "x", "no"]]
    message = refusal(write_csv(tmp_path / "bad.csv", rows=rows))
    assert "column 'Prediction'" in message and "row 9: 'maybe'" in message
    assert "not a label" in message


def test_a_score_that_is_not_a_number_names_row_and_column(tmp_path):
    rows = [*ROWS, ["a8", "1", "high", "x", "no"]]
    message = refusal(
        write_csv(tmp_path / "bad.csv", rows=rows), ItemColumns(score="score", threshold=0.5)
    )
    assert "column 'score'" in message and "row 9: 'high'" in message
    assert "not a finite number" in message


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_nan_score_is_not_a_number_not_a_flagged_item(tmp_path, suffix):
    # DuckDB orders NaN above every number: NaN >= 0.5 counted the item as flagged
    # (hostile-input trial 12).
    rows = [*ROWS, ["a8", "1", "NaN", "x", "no"]]
    path = write_csv(tmp_path / "nan.csv", rows=rows)
    if suffix == ".parquet":
        parquet = tmp_path / "nan.parquet"
        duckdb.execute(
            f"COPY (SELECT * REPLACE (CAST(score AS DOUBLE) AS score) FROM "
            f"read_csv('{path}', all_varchar = true)) TO '{parquet}' (FORMAT parquet)"
        )
        path = parquet
    message = refusal(path, ItemColumns(score="score", threshold=0.5))
    assert "column 'score'" in message and "not a finite number" in message
    assert ("row 9" if suffix == ".csv" else "record 8") in message


def test_a_bad_classifier_flag_names_its_column(tmp_path):
    rows = [*ROWS, ["a8", "1", "0.5", "x", "perhaps"]]
    message = refusal(
        write_csv(tmp_path / "bad.csv", rows=rows), ItemColumns(classifiers=("other",))
    )
    assert "column 'other'" in message and "row 9: 'perhaps'" in message


def test_parquet_offenders_are_numbered_as_records(tmp_path):
    path = tmp_path / "bad.parquet"
    duckdb.execute(
        "COPY (SELECT * FROM (VALUES ('x1', 1), ('x2', 0), ('x1', 0)) t(id, predicted)) "
        f"TO '{path}'"
    )
    assert "'x1' 2 times (record 1, record 3)" in refusal(path)


def test_an_empty_stratum_is_refused(tmp_path):
    rows = [row for row in ROWS if row[1] in ("0", "no")]  # a lone "-" is refused first
    message = refusal(write_csv(tmp_path / "empty.csv", rows=rows))
    assert "no item is predicted positive" in message and "'Prediction'" in message


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00binary", "not a table"),
        (b"", "empty"),
        (b"just one column\nvalue\n", "not a table of items"),
        (b"\xff\xfe\xfa\xfb not utf8 at all, not at all, not at all, not at all", "not UTF-8"),
    ],
)
def test_a_file_that_is_not_a_table(tmp_path, content, expected):
    path = tmp_path / "items.csv"
    path.write_bytes(content)
    assert expected in refusal(path)


_MANY_ROWS = b"item_id,predicted\n" + b"".join(b"id%d,%d\n" % (i, i % 2) for i in range(60_000))


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        # A fault far into the file is found by the read itself, not the first look.
        ("late.csv", _MANY_ROWS + b"x,1,2\n", "row 60,002 has 3 fields where the header has 2"),
        ("late_latin1.csv", _MANY_ROWS + b"caf\xe9,1\n", "row 60,002 is not UTF-8 text"),
        ("cut.parquet", b"PAR1" + bytes(64), "not a Parquet file, or it was cut short"),
        ("ragged.csv", b"item_id,predicted\na,1\nb,0,x,y\n", "same number of fields"),
    ],
)
def test_a_damaged_file_is_explained_in_plain_words(tmp_path, name, content, expected):
    path = tmp_path / name
    path.write_bytes(content)
    message = refusal(path)
    assert expected in message and name in message
    assert "DuckDB" not in message and "strict_mode" not in message


@pytest.mark.parametrize(
    ("first_end", "later_end"), [(b"\r\n", b"\n"), (b"\n", b"\r\n"), (b"\r", b"\n")]
)
def test_rows_appended_with_other_line_ends_are_read(tmp_path, first_end, later_end):
    path = tmp_path / "appended.csv"
    first = b"".join(b"a%d,%d" % (i, i % 2) + first_end for i in range(3000))
    later = b"".join(b"b%d,%d" % (i, i % 2) + later_end for i in range(3000))
    path.write_bytes(b"item_id,predicted" + first_end + first + later)
    before = path.read_bytes()
    summary = count_items(path)
    assert (summary.rows, summary.population_pos) == (6000, 3000)
    assert path.read_bytes() == before  # read through a copy; the lead's file is untouched
    sample = select_sample(path, n_pos=2, n_neg=2, seed=1)
    assert all(not item.id.endswith("\r") for item in sample.items)


def test_line_ends_mixed_beyond_the_first_look_are_explained(tmp_path, monkeypatch):
    import core.items

    monkeypatch.setattr(core.items, "_LINE_END_BYTES", 64)  # as if the mix came late
    path = tmp_path / "appended.csv"
    first = b"".join(b"a%d,%d\r\n" % (i, i % 2) for i in range(3000))
    later = b"".join(b"b%d,%d\n" % (i, i % 2) for i in range(3000))
    path.write_bytes(b"item_id,predicted\r\n" + first + later)
    message = refusal(path)
    assert "rows end in different ways (Windows and Unix line ends mixed" in message


def test_a_latin1_export_names_its_row_and_text(tmp_path):
    path = tmp_path / "old.csv"
    path.write_bytes("item_id,predicted\na1,1\nb2,0\ncaf\u00e9 7,1\n".encode("latin-1"))
    message = refusal(path)
    assert "row 4 ('caf\ufffd 7,1')" in message and "CSV UTF-8" in message


def test_a_folder_and_a_missing_file_are_refused(tmp_path):
    assert "is a folder" in refusal(tmp_path)
    assert "no such file" in refusal(tmp_path / "nope.csv")


def test_the_one_column_named_like_an_id_is_read_as_the_id(tmp_path, capsys):
    # Trial 16: "Transaction ID" was picked by hand every month.
    from core.cli import main

    header = ["Transaction ID", "Prediction", "score", "subject", "valid"]
    path = write_csv(tmp_path / "items.csv", header=header)
    summary = count_items(path)
    assert summary.id_column == "Transaction ID" and summary.rows == len(ROWS)
    assert main(["count", str(path)]) == 0
    assert "item ids read from column 'Transaction ID'" in capsys.readouterr().err
    assert main(["count", str(path), "--id", "Transaction ID"]) == 0
    assert "item ids read from" not in capsys.readouterr().err  # named: nothing to say
    two = write_csv(
        tmp_path / "two.csv", header=["Transaction ID", "Prediction", "merchant_id", "s", "t"]
    )
    message = refusal(two)
    assert "no item id column" in message
    assert "several are named like an id: 'Transaction ID', 'merchant_id'" in message


def test_missing_columns_list_what_the_file_has(tmp_path):
    path = write_csv(tmp_path / "items.csv", header=["code", "flag", "s", "t", "u"])
    message = refusal(path)
    assert "no item id column" in message and "'code'" in message and "`id`" in message
    message = refusal(path, ItemColumns(id="code", predicted="nope"))
    assert "no column 'nope' (given by `predicted`)" in message


def test_an_xlsx_that_is_not_a_workbook(tmp_path):
    path = tmp_path / "items.xlsx"
    path.write_text("id,predicted\n1,1\n")
    with pytest.raises(Exception, match="text file"):
        count_items(path)


def test_progress_is_reported_and_cancel_interrupts(tmp_path):
    path = tmp_path / "big.csv"
    duckdb.execute(
        "COPY (SELECT 'i' || i AS id, (i % 13 = 0)::INT AS predicted FROM range(300000) t(i)) "
        f"TO '{path}' (HEADER)"
    )
    seen = []
    summary = count_items(path, control=TaskControl(seen.append))
    assert summary.population_pos == len(range(0, 300000, 13))
    assert all(0 <= value <= 1 for value in seen)
    control = TaskControl()
    control.cancel()
    with pytest.raises(Cancelled):
        select_sample(path, n_pos=3, n_neg=3, seed=1, control=control)


def test_the_table_closes_its_connection(tmp_path):
    table = open_items(write_csv(tmp_path / "items.csv"))
    with table:
        assert table.columns.id == "Item ID"
    with pytest.raises(duckdb.Error):
        table.connection.execute("SELECT 1")
    assert threading.active_count() >= 1


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", True), ("0", False), (" 1", True), ("0 ", False), ("1.0", True), ("0.0", False),
        ("Yes", True), ("NO", False), ("+", True), ("-", False), ("Positive", True),
        ("neg", False), ("2", None), ("10", None), ("", None), ("01", None),
    ],
)  # fmt: skip
def test_a_predicted_label_is_read_the_same_on_the_fast_path_for_1_and_0(raw, expected):
    # label_expression matches plain "1"/"0" before lower() and trim(); every other
    # spelling goes through the word lists, and anything else is not a label (NULL).
    from core.items import label_expression

    (value,) = duckdb.execute(
        f"SELECT {label_expression('x')} FROM (SELECT ? AS x)", [raw]
    ).fetchone()
    assert value is expected


def test_line_ends_made_alike_across_a_block_boundary(tmp_path):
    from core.items import _with_one_line_end

    source = tmp_path / "raw.csv"
    head = b"a" * ((1 << 23) - 1)  # the copy reads 8 MiB blocks: "\r\n" straddles two
    source.write_bytes(head + b"\r\nb\rc\nd\r")
    folder = tmp_path / "copy"
    folder.mkdir()
    assert _with_one_line_end(source, folder, "csv").read_bytes() == head + b"\nb\nc\nd\n"


def test_a_semicolon_export_reads_scores_with_a_decimal_comma(tmp_path):
    """Excel writes CSV with semicolons where the comma is the decimal mark: 0,51 there is
    0.51, counted against the threshold as written by hand here."""
    import random

    rng = random.Random(8)
    scores = [round(rng.random(), 4) for _ in range(500)]
    path = tmp_path / "export.csv"
    lines = ["\ufeffMessage ID;Score;Subject"]
    lines += [f"m{i};{str(score).replace('.', ',')};s {i}" for i, score in enumerate(scores)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    summary = count_items(path, ItemColumns(id="Message ID", score="Score", threshold=0.5))
    flagged = sum(score >= 0.5 for score in scores)
    assert (summary.primary.population_pos, summary.primary.population_neg) == (
        flagged,
        len(scores) - flagged,
    )


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("ids with commas.csv", "id;score\nm,0;0,25\nm,1;0,75\nm,2;0,5\nm,3;0,4999\n"),
        ("tabs.tsv", "id\tscore\nm0\t0,25\nm1\t0,75\nm2\t0,5\nm3\t0,4999\n"),
        ("dots.csv", "id,score\nm0,0.25\nm1,0.75\nm2,0.5\nm3,0.4999\n"),
    ],
)
def test_decimal_commas_wherever_the_separator_is_not_a_comma(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    summary = count_items(path, ItemColumns(score="score", threshold=0.5))
    assert (summary.primary.population_pos, summary.primary.population_neg) == (2, 2)


@pytest.mark.parametrize(
    ("content", "row"),
    [
        (b"id,predicted,subject\na,1," + b"y" * 2_100_000 + b"\nb,0,s\n", 2),  # one huge field
        (b"id" + b",x" * 1_100_000, 1),  # a header without a line end
    ],
    ids=["huge field", "endless header"],
)
def test_a_row_longer_than_the_reader_takes_is_named_at_once(tmp_path, content, row):
    """DuckDB spent 8-10 s on such files and then blamed line 1 without saying why."""
    path = tmp_path / "items.csv"
    path.write_bytes(content)
    with pytest.raises(ItemListError, match=f"row {row} is longer than 2,000,000 bytes"):
        count_items(path)


@pytest.mark.parametrize(
    ("header", "column", "role"),
    [
        ("id,id,predicted", "id", "the item id"),
        ("id,predicted,predicted", "predicted", "the prediction"),
        ("id;predicted;Predicted", "predicted", "the prediction"),
    ],
)
def test_a_header_naming_a_used_column_twice_is_refused(tmp_path, header, column, role):
    """DuckDB reads the second as ``id_1``; the first was taken without a word."""
    separator = ";" if ";" in header else ","
    rows = [separator.join(["a", "1", "0"]), separator.join(["b", "0", "1"])]
    path = tmp_path / "items.csv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    with pytest.raises(ItemListError, match=f"names column '{column}' 2 times") as refused:
        count_items(path)
    assert role in str(refused.value)


def test_a_repeated_column_the_draw_does_not_use_is_fine(tmp_path):
    path = tmp_path / "items.csv"
    path.write_text("id,predicted,note,note\na,1,x,y\nb,0,x,y\n", encoding="utf-8")
    assert count_items(path).population_pos == 1


def test_a_header_of_thousands_of_columns_is_refused_before_duckdb_reads_it(tmp_path):
    # 100,000 columns took DuckDB five minutes and 1.3 GB (hostile-input trial 12).
    path = tmp_path / "wide.csv"
    columns = 100_000
    path.write_text(
        "id,predicted," + ",".join(f"c{i}" for i in range(columns - 2)) + "\n"
        + "a1,1," + ",".join("0" for _ in range(columns - 2)) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    message = refusal(path)
    assert f"its first row has about {columns:,} columns" in message
    assert "at most 1,000" in message
    width = tmp_path / "fine.csv"  # 1,000 columns still read
    width.write_text(
        "id,predicted," + ",".join(f"c{i}" for i in range(998)) + "\n"
        + "a1,1," + ",".join("0" for _ in range(998)) + "\n"
        + "a2,0," + ",".join("0" for _ in range(998)) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    assert count_items(width).rows == 2


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_a_utf16_export_is_named_as_such(tmp_path, encoding):
    path = tmp_path / "unicode text.csv"
    path.write_bytes("item_id,predicted\na1,1\na2,0\n".encode(encoding))
    message = refusal(path)
    assert "is UTF-16 text" in message and "CSV UTF-8" in message


def test_rows_with_another_number_of_fields_are_named_by_row(tmp_path):
    # "its columns could not be told apart" left the lead to search a long file by hand
    # (hostile-input trial 12).
    lines = ["id,predicted,score"] + [f"m{i},{i % 2},0.{i}" for i in range(5000)]
    lines.insert(3001, "m_short,1")
    message = refusal(text_file(tmp_path / "ragged.csv", lines))
    assert "row 3,002 has 2 fields where the header has 3" in message


def test_every_kind_of_problem_is_named_at_once(tmp_path):
    # Three fix-and-retry passes on a 200,000-row export: empty ids, then labels, then
    # duplicates, each only after the one before was fixed (trial 12).
    message = refusal(
        text_file(tmp_path / "messy.csv", "id,predicted\na,1\n,0\nb,maybe\na,0\nc,1\n")
    )
    assert message.startswith("messy.csv: 3 problems: (1) 1 item(s) have no id")
    assert "(2) 1 value(s) in column 'predicted' are not a label" in message
    assert "row 4: 'maybe'" in message
    assert "(3) duplicate item ids in column 'id': 'a' 2 times (row 2, row 5)" in message


def test_missing_ids_are_not_also_called_duplicates_of_each_other(tmp_path):
    message = refusal(text_file(tmp_path / "gaps.csv", "id,predicted\na,1\n,0\n  ,1\nb,0\na,1\n"))
    assert "(1) 2 item(s) have no id in column 'id' (row 3, row 4)" in message
    assert "(2) duplicate item ids in column 'id': 'a' 2 times (row 2, row 6);" in message
    assert "None" not in message and "''" not in message and "and more" not in message


def test_an_id_three_times_is_one_repeated_id_not_and_more(tmp_path):
    message = refusal(text_file(tmp_path / "triple.csv", "id,predicted\na,1\na,0\na,1\nb,0\n"))
    assert "'a' 3 times (row 2, row 3, row 4); every item must appear once" in message
    assert "and more" not in message


def test_a_file_duckdb_reads_as_one_column_names_its_uneven_row(tmp_path):
    # A quoted field early on makes DuckDB take the whole file as one column; the row with
    # a stray comma further down was still only guessed at (review, session 12).
    lines = ["id,predicted,note"] + [f'm{i},{i % 2},"a, b"' for i in range(50)]
    lines.append("m50,1,x,extra")
    lines += [f"m{i},{i % 2},c" for i in range(51, 80)]
    message = refusal(text_file(tmp_path / "quoted.csv", lines))
    assert "row 52 has 4 fields where the header has 3" in message


def test_excels_separator_line_is_named(tmp_path):
    message = refusal(text_file(tmp_path / "excel.csv", "sep=;\nid;predicted\na;yes\nb;no\n"))
    assert "starts with the line 'sep=;', Excel's note of the separator" in message
    assert "delete that first line" in message


def test_an_infinite_or_400_digit_score_is_refused_as_not_a_finite_number(tmp_path):
    # count --score took a 363-digit score (infinity as a double) as flagged (fuzz 13).
    path = tmp_path / "scores.csv"
    path.write_text(
        f"id,score\na1,0.5\na2,{'9' * 363}\na3,0.9\na4,0.1\na5,-inf\n", encoding="utf-8"
    )
    with pytest.raises(ItemListError) as caught:
        count_items(path, ItemColumns(score="score", threshold=0.5))
    message = str(caught.value)
    assert "2 value(s) in column 'score' are not a finite number" in message
    assert "row 3: '99999999999999999999'… (363 characters); row 6: '-inf'" in message


def test_more_further_classifiers_than_a_draw_takes_are_refused_before_any_read():
    # 800 classifiers on a 100-row list took 3.6 GB; 1,488 took 12 GB (fuzz 13b).
    from core.errors import InputError
    from core.items import MAX_CLASSIFIERS

    with pytest.raises(InputError, match=f"at most {MAX_CLASSIFIERS} further classifiers"):
        ItemColumns(classifiers=tuple(f"c{i}" for i in range(MAX_CLASSIFIERS + 1)))
    assert len(ItemColumns(classifiers=tuple(f"c{i}" for i in range(MAX_CLASSIFIERS))).classifiers)


def test_a_compressed_list_reads_as_its_text_and_a_packed_one_is_refused(tmp_path):
    # The line-end check read the compressed bytes, found "mixed" line ends and "repaired"
    # the gzip stream: a good items.csv.gz was a 1-column table. And 389 KB of "a,0"
    # lines expanded to 400 MB and took 6.6 GB before the duplicate ids were named
    # (fuzz 15).
    import gzip
    import tracemalloc

    plain = write_csv(tmp_path / "items.csv")
    # Windows line ends (the csv module's) and a lot of rows, so the compressed bytes hold
    # stray \r and \n.
    rows = [[f"id{n}", str(n % 7 == 0), f"0.{n % 97:02d}", "x", "y"] for n in range(20_000)]
    write_csv(plain, rows=rows)
    packed = tmp_path / "items.csv.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    expected = count_items(plain)
    got = count_items(packed)
    assert (got.rows, got.population_pos, got.population_neg) == (
        expected.rows, expected.population_pos, expected.population_neg,
    )  # fmt: skip
    tsv = tmp_path / "items.tsv.gz"
    tsv.write_bytes(gzip.compress(write_csv(tmp_path / "t.tsv", rows, delimiter="\t").read_bytes()))
    assert count_items(tsv).population_pos == expected.population_pos
    bomb = tmp_path / "bomb.csv.gz"
    bomb.write_bytes(gzip.compress(b"id,predicted\n" + b"a,0\n" * 30_000_000, 9))
    tracemalloc.start()
    try:
        with pytest.raises(ItemListError, match="expands more than 200 times its size"):
            count_items(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20
    not_gzip = tmp_path / "fake.csv.gz"
    not_gzip.write_bytes(b"id,predicted\na,1\n")
    with pytest.raises(ItemListError, match=r"fake.csv.gz is not compressed, though its name"):
        count_items(not_gzip)
    truncated = tmp_path / "cut.csv.gz"
    truncated.write_bytes(packed.read_bytes()[:-40])
    with pytest.raises(ItemListError, match=r"cut.csv.gz cannot be read as a compressed"):
        count_items(truncated)
    # Damaged rather than plain (fuzz 21: both were called "not compressed").
    whole = packed.read_bytes()
    bad_sum = tmp_path / "sum.csv.gz"
    bad_sum.write_bytes(whole[:-8] + bytes(4) + whole[-4:])  # CRC-32 zeroed
    with pytest.raises(ItemListError, match=r"sum.csv.gz is compressed but damaged \(its chec"):
        count_items(bad_sum)
    junk = tmp_path / "junk.csv.gz"
    junk.write_bytes(whole + b"garbage")
    with pytest.raises(ItemListError, match=r"junk.csv.gz is compressed but damaged \(somethin"):
        count_items(junk)


def test_xlsx_formulas_without_saved_values_are_named_by_cell(tmp_path):
    # openpyxl writes formulas without their values, as a script exporting items would:
    # read as empty, they used to be reported as "row 42: (empty)", a cell that is not empty.
    path = tmp_path / "items.xlsx"
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["id", "predicted", "note"])
    for index in range(40):
        sheet.append([f"x{index}", index % 2, "=1+1"])  # a kept column's formulas: harmless
    sheet.append(["f1", "=1+0", None])
    sheet.append(["f2", "=IF(1,1,0)", None])
    workbook.save(path)
    with pytest.raises(ItemListError) as refused:
        count_items(path)
    message = str(refused.value)
    assert "2 cell(s) of column 'predicted'" in message
    assert "(B42, B43)" in message
    assert "open the file in Excel or LibreOffice and save it" in message
    # Only the columns PR Planner uses are checked: without those two rows the list is read.
    sheet.delete_rows(42, 2)
    workbook.save(path)
    assert count_items(path).population_pos == 20


def test_an_unclosed_csv_quote_in_an_id_is_named(tmp_path):
    # DuckDB's sniffer reads quotes as text when one never closes: the id kept the quote,
    # so the app's sample was not the warehouse's for the same seed.
    path = tmp_path / "items.csv"
    lines = ["id,predicted,score"] + [f"i{n},{int(n % 10 == 0)},0.{n:02d}" for n in range(40)]
    lines[9] = '"i8,0,0.08'
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ItemListError) as refused:
        count_items(path)
    assert str(refused.value) == (
        "items.csv: 1 id(s) in column 'id' begin with a quote (\") that is not closed where "
        "the id ends (row 10: '\"i8'); remove the stray quote so that each id reads as your "
        "other systems have it"
    )
    with pytest.raises(ItemListError, match="stray quote"):
        select_sample(path, n_pos=1, n_neg=1, seed=3)
    # Quotes that close are the CSV's own and are not part of the id.
    lines[9] = '"i8",0,0.08'
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert count_items(path).rows == 40


def _notes_then_items(path, id_header="Transaction"):
    """An export as a warehouse job writes it: a Notes sheet of label/value pairs first."""
    workbook = openpyxl.Workbook()
    notes = workbook.active
    notes.title = "Notes"
    notes.append(["Generated by", "FinOps warehouse job pay_msgs_weekly"])
    notes.append(["Week", "2025-W10"])
    items = workbook.create_sheet("Export")
    items.append([id_header, "Prediction", "Merchant"])
    for item_id, predicted, *_rest in ROWS:
        items.append([item_id, predicted, "Café, Zürich"])
    workbook.save(path)
    return path


def test_the_sheet_of_the_items_is_read_though_a_notes_sheet_comes_first(tmp_path):
    """The Notes sheet's first row was taken for the header and no column could be named
    (trial 18)."""
    path = _notes_then_items(tmp_path / "export.xlsx")
    named = count_items(path, ItemColumns(id="Transaction"))
    assert (named.population_pos, named.population_neg) == (4, 3)  # ROWS by hand
    assert named.id_column == "Transaction"
    # Without the id named: the sheet that names a predicted label, with more columns.
    message = refusal(path)
    assert "its columns are: 'Transaction', 'Prediction', 'Merchant'" in message
    assert "(read from sheet 'Export'; the workbook's other sheets: 'Notes')" in message
    # An id named like an id: found at once, on whichever sheet.
    aliased = count_items(_notes_then_items(tmp_path / "aliased.xlsx", id_header="item_id"))
    assert (aliased.population_pos, aliased.population_neg) == (4, 3)
    # A typo in the id names the sheet read.
    with pytest.raises(ItemListError, match=r"'Transactoin'.*read from sheet 'Export'"):
        count_items(path, ItemColumns(id="Transactoin"))


def test_a_lookup_sheet_with_an_id_does_not_take_the_place_of_the_items(tmp_path):
    # Review 18: a later sheet with a plain "id" column beat the data sheet whose id is
    # "Transaction ID" (read before as the one column named like an id).
    workbook = openpyxl.Workbook()
    items = workbook.active
    items.title = "Items"
    items.append(["Transaction ID", "predicted", "text"])
    for n in range(30):
        items.append([f"t{n}", n % 3 == 0, "x"])
    lookup = workbook.create_sheet("Lookup")
    lookup.append(["id", "name"])
    lookup.append([1, "a"])
    path = tmp_path / "with lookup.xlsx"
    workbook.save(path)
    summary = count_items(path)
    assert summary.id_column == "Transaction ID"
    assert (summary.population_pos, summary.population_neg) == (10, 20)  # n % 3 == 0, by hand


@pytest.mark.parametrize("kept", ["Label", "label", " Comment", "LABELER", "Stratum", "Rank"])
def test_a_kept_column_may_not_take_a_header_of_the_labeling_sheet(tmp_path, kept):
    # Fuzz 18: --keep Label gave the labelers two Label columns and every read-back failed;
    # a kept Comment was read as the labeler's comment.
    header = ["id", "predicted", kept.strip()]
    path = write_csv(tmp_path / "items.csv", [[r[0], r[1], "x"] for r in ROWS], header=header)
    message = refusal(path, ItemColumns(keep=(kept,)))
    assert f"the labeling sheet has its own '{kept.strip().title()}' column" in message
    assert "rename that column in items.csv" in message


def test_an_old_excel_workbook_given_as_an_item_list_is_named_as_one(tmp_path):
    # Fuzz 18: "is not a table: it is a binary file, not text (CSV/TSV)".
    path = tmp_path / "export.xls"
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600)
    assert "old Excel 97-2003 workbook (.xls)" in refusal(path)


def test_xlsx_id_cells_that_hold_no_id_are_named_by_cell(tmp_path):
    """A failed lookup (#N/A), a yes/no cell, and a long id stored as a number (Excel keeps
    15 digits: 123456789012345678 reads as 1.23456789012346E+17) were each taken as an
    item's id and could be drawn for the labelers (fuzz 19)."""

    def items_with(*odd_ids):
        workbook = openpyxl.Workbook()
        sheet = workbook.active
        sheet.append(["id", "predicted"])
        for index in range(20):
            sheet.append([f"x{index}", index % 2])
        for odd in odd_ids:
            sheet.append([odd, 1])
        path = tmp_path / "items.xlsx"
        workbook.save(path)
        return path

    message = refusal(items_with("#N/A", "#REF!"))
    assert "2 cell(s) of the id column 'id' hold no item id" in message
    assert "A22 holds the Excel error #N/A; A23 holds the Excel error #REF!" in message
    assert "fix the formula or the cell, or remove the row" in message
    many = refusal(items_with(*["#N/A"] * 7))
    assert "7 cell(s)" in many and "A22, A23, A24, A25, A26 hold the Excel error #N/A, ..." in many
    assert "duplicate" not in many
    assert "A22 holds TRUE, a yes/no cell" in refusal(items_with(True))
    long_ids = refusal(items_with(123456789012345678, 2.5))
    assert "A22 holds the number 1.23456789012346E+17" in long_ids
    assert "A23 holds the number 2.5" in long_ids
    assert "format the id column as Text in the export" in long_ids
    # Ids stored as whole numbers up to 15 digits are ids as shown.
    assert count_items(items_with(123456789012345, 1002.0)).population_pos == 12


def test_a_lone_dash_among_0_and_1_is_refused_not_counted_as_unflagged(tmp_path):
    """An export writes "-" for an item not scored: read as a predicted negative, 100 of
    1,000 items moved into the unflagged list without a word (fuzz 19)."""
    lines = ["id,predicted"] + [
        f"m{n},{'-' if n % 10 == 3 else int(n % 7 == 0)}" for n in range(1, 101)
    ]
    message = refusal(text_file(tmp_path / "dash.csv", lines))
    assert "10 value(s) in column 'predicted' are a lone '-' (row 4, row 14, row 24" in message
    assert "not scored" in message
    # Written as + and - for every item, the dash is a label.
    signs = ["id,predicted"] + [f"m{n},{'+' if n % 7 == 0 else ' - '}" for n in range(1, 101)]
    summary = count_items(text_file(tmp_path / "signs.csv", signs))
    assert (summary.primary.population_pos, summary.primary.population_neg) == (14, 86)
    # The same in another classifier's column (review 19: only the main one was checked).
    lines = ["id,predicted,other"] + [
        f"m{n},{n % 2},{'-' if n % 10 == 5 else int(n % 3 == 0)}" for n in range(1, 101)
    ]
    path = text_file(tmp_path / "other.csv", lines)
    message = refusal(path, ItemColumns(classifiers=("other",)))
    assert "10 value(s) in column 'other' are a lone '-' (row 6, row 16" in message
    assert count_items(path).primary.population_pos == 50  # not a column the draw uses


def test_csv_ids_that_are_an_excel_error_are_named_by_row(tmp_path):
    """A list exported from a spreadsheet whose lookups failed: "#N/A" was an item the
    labelers could be sent and could not find (fuzz 19)."""
    lines = ["id,predicted"] + [f"m{n},{n % 2}" for n in range(20)] + ["#N/A,1", "#REF!,0"]
    message = refusal(text_file(tmp_path / "looked up.csv", lines))
    assert "2 id(s) in column 'id' are an Excel error, not an item's id" in message
    assert "(row 22: '#N/A'; row 23: '#REF!')" in message
    # Saved by another language's Excel or by LibreOffice; repeated, they are not also
    # called duplicates (review 19); a real duplicate still is.
    lines = ["id,predicted"] + [f"m{n},{n % 2}" for n in range(20)]
    lines += ["#NV,1", "#N/D,0", "Err:502,1", "#N/A,1", "#N/A,0", "m3,1"]
    message = refusal(text_file(tmp_path / "localized.csv", lines))
    assert "5 id(s) in column 'id' are an Excel error" in message
    assert "row 22: '#NV'; row 23: '#N/D'; row 24: 'Err:502'; row 25: '#N/A'; row 26: '#N/A'" in (
        message
    )
    assert "duplicate item ids in column 'id': 'm3' 2 times (row 5, row 27); every" in message
    assert "'#N/A' 2 times" not in message
    # Text that merely starts with "#" is an id like any other.
    lines = ["id,predicted"] + [f"#{n},{n % 2}" for n in range(20)]
    assert count_items(text_file(tmp_path / "hash ids.csv", lines)).population_pos == 10


@pytest.mark.parametrize(
    ("name", "neighbour"),
    [("items[12].csv", "items1.csv"), ("month?.csv", "monthX.csv"), ("a*.tsv", "ab.tsv"),
     ("a?.parquet", "ab.parquet"), ("mixed[1].csv", "mixed1.csv")],
)  # fmt: skip
def test_a_name_with_pattern_characters_reads_that_file_alone(tmp_path, name, neighbour):
    """Fuzz 20: DuckDB read ``items[12].csv`` as the pattern matching ``items1.csv``."""
    separator = "\t" if name.endswith(".tsv") else ","

    def write(path, first, rows, line_end="\n"):
        if path.suffix == ".parquet":
            duckdb.execute(
                f"COPY (SELECT (i + {first})::VARCHAR AS id, (i % 10 = 0)::INT AS predicted "
                f"FROM range({rows}) t(i)) TO '{path}' (FORMAT parquet)"
            )
            return
        lines = [f"id{separator}predicted"]
        lines += [f"{first + i}{separator}{int(i % 10 == 0)}" for i in range(rows)]
        path.write_bytes(line_end.join(lines).encode() + b"\n")

    write(tmp_path / name, 0, 100)
    write(tmp_path / neighbour, 50_000, 700)
    if name.startswith("mixed"):  # rows added by another tool: the copy path too
        (tmp_path / name).write_bytes((tmp_path / name).read_bytes() + b"777,1\r\n")
    summary = count_items(tmp_path / name)
    assert summary.rows == (101 if name.startswith("mixed") else 100)
    assert summary.primary.population_pos == (11 if name.startswith("mixed") else 10)
    assert summary.file_name == name


def test_timestamp_ids_with_a_time_zone_draw_the_same_items_in_every_zone(tmp_path):
    """Fuzz 20: a Parquet id column of TIMESTAMPTZ became text in the machine's zone."""
    import os
    import subprocess
    import sys

    path = tmp_path / "stamps.parquet"
    duckdb.execute(
        "COPY (SELECT TIMESTAMPTZ '2026-01-01 00:00:00+00' + i * INTERVAL 37 SECOND AS id, "
        f"(i % 5 = 0)::INT AS predicted FROM range(200) t(i)) TO '{path}' (FORMAT parquet)"
    )
    code = (
        "import sys; from core.selection import select_sample; "
        "s = select_sample(sys.argv[1], n_pos=3, n_neg=3, seed=1); "
        "print([item.id for item in s.items])"
    )
    drawn = {
        zone: subprocess.run(
            [sys.executable, "-c", code, str(path)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "TZ": zone},
        ).stdout
        for zone in ("UTC", "Asia/Tokyo", "America/Los_Angeles")
    }
    assert len(set(drawn.values())) == 1, drawn
    assert "+00" in drawn["UTC"]


def test_a_damaged_parquet_page_is_called_damaged_not_mixed_line_ends(tmp_path):
    """Fuzz 20: random bytes in a data page were reported as a CSV's mixed line ends."""
    path = tmp_path / "items.parquet"
    duckdb.execute(
        "COPY (SELECT 'id-' || i AS id, (i % 7 = 0)::INT AS predicted FROM range(50000) t(i)) "
        f"TO '{path}' (FORMAT parquet, COMPRESSION snappy)"
    )
    data = bytearray(path.read_bytes())
    middle = len(data) // 3
    data[middle : middle + 64] = b"\r\n\r" * 21 + b"\n"
    path.write_bytes(bytes(data))
    with pytest.raises(ItemListError) as refused:
        count_items(path)
    message = str(refused.value)
    assert "line ends" not in message
    assert "a part of its data is damaged and cannot be read; export the list again" in message


def test_a_folder_named_like_a_partition_changes_no_column(tmp_path):
    """Review 20: DuckDB read a list in language=en/ with 'en' in its own language column,
    and one in id=5/ as 300 duplicates of id '5'."""
    from core.selection import select_sample

    for folder in ("language=en", "id=5"):
        (tmp_path / folder).mkdir()
        path = tmp_path / folder / "items.csv"
        languages = ("fr", "de", "es")
        path.write_text(
            "id,predicted,language\n"
            + "".join(f"i{i},{int(i % 5 == 0)},{languages[i % 3]}\n" for i in range(300))
        )
        assert count_items(path).rows == 300
        drawn = select_sample(path, ItemColumns(keep=("language",)), n_pos=3, n_neg=30, seed=1)
        assert {item.kept[0] for item in drawn.items} <= set(languages)


def test_a_link_named_like_a_pattern_reads_its_target(tmp_path):
    """Review 20: a link l[1].csv to a plain file was read as the pattern (l1.csv)."""
    (tmp_path / "plain.csv").write_text(
        "id,predicted\n" + "".join(f"{i},{int(i % 10 == 0)}\n" for i in range(100))
    )
    (tmp_path / "l1.csv").write_text(
        "id,predicted\n" + "".join(f"{i + 5000},1\n" for i in range(700))
    )
    (tmp_path / "l[1].csv").symlink_to(tmp_path / "plain.csv")
    assert count_items(tmp_path / "l[1].csv").rows == 100


@pytest.mark.parametrize(
    "headers", [("Item ID", "item_id"), ("id", "item_id")], ids=["same name", "two aliases"]
)
def test_two_columns_named_like_the_id_are_not_chosen_between(tmp_path, headers):
    """Fuzz 21: with "Item ID" and "item_id", or "id" and "item_id", one was read as the
    ids without a word."""
    rows = [("a1", "x1", "1"), ("a2", "x2", "0"), ("a3", "x3", "0")]
    path = write_csv(tmp_path / "two.csv", rows=rows, header=(*headers, "predicted"))
    with pytest.raises(ItemListError) as refused:
        count_items(path)
    assert str(refused.value) == (
        f"two.csv has 2 columns that could be the item id: {headers[0]!r}, {headers[1]!r}; "
        "give the one you mean with `id`"
    )
    chosen = count_items(path, ItemColumns(id=headers[1]))
    assert (chosen.population_pos, chosen.population_neg) == (1, 2)


def test_rows_of_items_a_filter_hides_are_refused_with_the_way_out(tmp_path):
    """Fuzz 21: a list filtered down from 600 items to 300 had all 600 counted and drawn
    from, without a word."""
    path = write_xlsx(tmp_path / "filtered.xlsx")
    workbook = openpyxl.load_workbook(path)
    sheet = workbook.active
    sheet.auto_filter.ref = sheet.dimensions
    for row in (3, 5):
        sheet.row_dimensions[row].hidden = True
    sheet.row_dimensions[len(ROWS) + 5].hidden = True  # an empty hidden row: no item
    workbook.save(path)
    with pytest.raises(ItemListError) as refused:
        count_items(path)
    assert str(refused.value) == (
        f"filtered.xlsx, sheet {sheet.title!r}: 2 rows of items are hidden (rows 3, 5), by a "
        "filter or by hand; PR Planner would count and draw from them like the rows you see. "
        "To use every row, show them all (turn the filter off, or unhide the rows); to leave "
        "them out, delete them. Then save the workbook and read it again"
    )
    for row in (3, 5):
        sheet.row_dimensions[row].hidden = False
    workbook.save(path)
    assert count_items(path).rows == len(ROWS)


def test_ids_formatted_with_leading_zeros_keep_them(tmp_path):
    """Fuzz 21: Excel showed 000388, and the sample and its SQL used 388."""
    path = write_xlsx(tmp_path / "padded.xlsx", rows=[(n, n % 2) for n in (7, 388, 1200)],
                      header=("id", "predicted"))  # fmt: skip
    workbook = openpyxl.load_workbook(path)
    for row in range(2, 5):
        workbook.active.cell(row, 1).number_format = "000000"
    workbook.save(path)
    selection = select_sample(path, n_pos=1, n_neg=2, seed=1)
    assert sorted(item.id for item in selection.items) == ["000007", "000388", "001200"]


def test_a_title_column_named_item_beside_item_id_is_not_a_second_id(tmp_path):
    """Review 21: "Item" (the items' titles) beside "item_id" was refused as two ids."""
    rows = [("a1", "Flight to Oslo", "1"), ("a2", "Hotel", "0"), ("a3", "Taxi", "0")]
    path = write_csv(tmp_path / "titled.csv", rows=rows, header=("item_id", "Item", "predicted"))
    summary = count_items(path)
    assert summary.id_column == "item_id"
    assert (summary.population_pos, summary.population_neg) == (1, 2)


def test_a_flag_column_formatted_with_leading_zeros_reads_as_its_number(tmp_path):
    """Review 21: the padding of ids also made a 0/1 flag formatted 00 read "01", which is
    not a predicted label."""
    path = write_xlsx(tmp_path / "flags.xlsx", rows=[(n, n % 2) for n in (7, 388, 1200, 5)],
                      header=("id", "predicted"))  # fmt: skip
    workbook = openpyxl.load_workbook(path)
    for row in range(2, 6):
        workbook.active.cell(row, 1).number_format = "000000"
        workbook.active.cell(row, 2).number_format = "00"
    workbook.save(path)
    summary = count_items(path)
    assert (summary.population_pos, summary.population_neg) == (2, 2)
    selection = select_sample(path, n_pos=2, n_neg=2, seed=1)
    assert sorted(item.id for item in selection.items) == ["000005", "000007", "000388", "001200"]
