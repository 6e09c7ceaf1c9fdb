"""Benchmark of reading past rounds (issue 5: 100,000 rounds load in <= 3 s).

Run with ``python -m pytest benchmarks/bench_rounds.py --benchmark-enable -q``.

The workbook is written once per session with openpyxl's write-only mode: one header row,
then 100,000 rounds with a date, text names and numbers, like a long-kept history. That
writer omits the ``<dimension>`` element, the case where openpyxl's own read-only reader
would parse the whole sheet an extra time just to size it.
"""

from __future__ import annotations

import datetime as dt
import statistics

import openpyxl
import pytest

from core.workbook import read_rounds

ROUNDS = 100_000
TARGET_SECONDS = 3.0


@pytest.fixture(scope="session")
def big_workbook(tmp_path_factory):
    path = tmp_path_factory.mktemp("rounds") / "history.xlsx"
    workbook = openpyxl.Workbook(write_only=True)
    sheet = workbook.create_sheet("Rounds")
    sheet.append(["Quality audit, all classifiers"])
    sheet.append([])
    sheet.append(["Round", "Date", "Classifier", "N pred+", "N pred-", "s",
                  "TP", "FP", "FN", "TN", "Notes"])  # fmt: skip
    start = dt.date(2020, 1, 6)
    for index in range(ROUNDS):
        sheet.append([
            f"R-{index:06d}", start + dt.timedelta(days=index % 3000),
            "travel" if index % 2 else "finance", 40_000 + index % 5000, 1_250_000,
            1.5 + (index % 7) / 10, 100 + index % 200, 20 + index % 50, 80 + index % 60,
            4_300 + index % 400, None,
        ])  # fmt: skip
    workbook.save(path)
    return path


def test_read_100k_rounds(benchmark, big_workbook):
    book = benchmark.pedantic(read_rounds, args=(big_workbook,), rounds=3, iterations=1)
    assert len(book.rounds) == ROUNDS and book.refused == ()
    assert book.rounds[0].row == 4 and book.rounds[-1].round == f"R-{ROUNDS - 1:06d}"
    if benchmark.stats is not None:  # None under --benchmark-disable
        median = statistics.median(benchmark.stats.stats.data)
        assert median <= TARGET_SECONDS, f"median {median:.2f} s > {TARGET_SECONDS} s"
