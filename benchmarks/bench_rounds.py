"""Benchmark of reading past rounds: 100,000 rounds in at most 3 s, and in at most a
quarter of the time openpyxl's own read-only reader takes just to iterate the same rows.

Run with ``python -m pytest benchmarks/bench_rounds.py --benchmark-enable -q``.

The workbook is written once per session with openpyxl's write-only mode: one header row,
then 100,000 rounds with a date, text names and numbers, like a long-kept history. That
writer omits the ``<dimension>`` element, as many writers do. The floor is what
``load_workbook(read_only=True)`` and ``iter_rows(values_only=True)`` take on that file,
measured in five interleaved pairs with ours (the verdict is the median of the pairs'
ratios), so both see the same machine.
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


#: Interleaved measurements of each reader (pairs: the machine's load changes between them).
PAIRS = 5


@pytest.mark.timeout(1800)  # building the file and five openpyxl reads take minutes
def test_read_100k_rounds(benchmark, big_workbook):
    """Five interleaved pairs (openpyxl, then ours); the share is the median of the five
    per-pair ratios, so a busy moment on a shared machine moves both sides of a pair."""
    ours: list[float] = []
    theirs: list[float] = []

    def read_after_openpyxl():
        started = time.perf_counter()
        assert _openpyxl_iteration(big_workbook) == ROUNDS + 3
        theirs.append(time.perf_counter() - started)
        started = time.perf_counter()
        book = read_rounds(big_workbook)
        ours.append(time.perf_counter() - started)
        return book

    book = benchmark.pedantic(read_after_openpyxl, rounds=PAIRS, iterations=1)
    assert len(book.rounds) == ROUNDS and book.refused == ()
    assert book.rounds[0].row == 4 and book.rounds[-1].round == f"R-{ROUNDS - 1:06d}"
    if benchmark.stats is None:  # under --benchmark-disable: one pair, no verdict
        return
    median = statistics.median(ours)
    share = statistics.median(mine / other for mine, other in zip(ours, theirs, strict=True))
    benchmark.extra_info["rounds_seconds"] = ours
    benchmark.extra_info["openpyxl_read_only_seconds"] = theirs
    benchmark.extra_info["share_of_openpyxl"] = share
    print(
        f"\nrounds: {median:.2f} s (each: {', '.join(f'{t:.2f}' for t in ours)}); openpyxl "
        f"read-only: {statistics.median(theirs):.2f} s; median ratio of pairs {share:.3f}x"
    )
    assert median <= TARGET_SECONDS, f"median {median:.2f} s > {TARGET_SECONDS} s"
    assert share <= TARGET_SHARE_OF_OPENPYXL, (
        f"median ratio {share:.3f} of openpyxl (target {TARGET_SHARE_OF_OPENPYXL})"
    )
