"""Benchmark of reading past rounds: 100,000 rounds in at most 3 s, and in at most a
quarter of the time openpyxl's own read-only reader takes just to iterate the same rows.

Run with ``python -m pytest benchmarks/bench_rounds.py --benchmark-enable -q``.

The workbook is written once per session with openpyxl's write-only mode: one header row,
then 100,000 rounds with a date, text names and numbers, like a long-kept history. That
writer omits the ``<dimension>`` element, as many writers do. The floor is what
``load_workbook(read_only=True)`` and ``iter_rows(values_only=True)`` take on that file,
measured in the same session so both see the same machine.
"""

from __future__ import annotations

import datetime as dt
import statistics
import time

import openpyxl
import pytest

from core.workbook import read_rounds

ROUNDS = 100_000
TARGET_SECONDS = 3.0
#: The rounds reader (checks, hardened XML parsing and interpretation included) may take
#: at most this share of openpyxl's bare read-only iteration.
TARGET_SHARE_OF_OPENPYXL = 0.25


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


def _openpyxl_iteration(path) -> int:
    workbook = openpyxl.load_workbook(path, read_only=True)
    try:
        return sum(1 for _ in workbook.worksheets[0].iter_rows(values_only=True))
    finally:
        workbook.close()


@pytest.fixture(scope="session")
def openpyxl_seconds(big_workbook) -> float:
    """Median of three openpyxl read-only iterations of the same file."""
    times = []
    for _ in range(3):
        started = time.perf_counter()
        assert _openpyxl_iteration(big_workbook) == ROUNDS + 3
        times.append(time.perf_counter() - started)
    return statistics.median(times)


@pytest.mark.timeout(1800)  # building the file and three openpyxl reads take minutes
def test_read_100k_rounds(benchmark, big_workbook, openpyxl_seconds):
    book = benchmark.pedantic(read_rounds, args=(big_workbook,), rounds=3, iterations=1)
    assert len(book.rounds) == ROUNDS and book.refused == ()
    assert book.rounds[0].row == 4 and book.rounds[-1].round == f"R-{ROUNDS - 1:06d}"
    if benchmark.stats is not None:  # None under --benchmark-disable
        median = statistics.median(benchmark.stats.stats.data)
        share = median / openpyxl_seconds
        benchmark.extra_info["openpyxl_read_only_seconds"] = openpyxl_seconds
        benchmark.extra_info["share_of_openpyxl"] = share
        print(
            f"\nrounds: {median:.2f} s; openpyxl read-only: {openpyxl_seconds:.2f} s; {share:.2f}x"
        )
        assert median <= TARGET_SECONDS, f"median {median:.2f} s > {TARGET_SECONDS} s"
        assert share <= TARGET_SHARE_OF_OPENPYXL, (
            f"{median:.2f} s is {share:.2f} of openpyxl's {openpyxl_seconds:.2f} s "
            f"(target {TARGET_SHARE_OF_OPENPYXL})"
        )
