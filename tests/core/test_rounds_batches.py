"""The column-wise reading of ordinary rows gives exactly what the row-by-row checks give.

``_RowInterpreter.plain_rounds`` reads a batch of rows whose cells are all of the usual
kinds; anything else goes through ``interpret`` row by row. Each workbook below is read
twice, once as shipped and once with the batch path switched off, and the rounds and
refusals must be equal. The workbooks mix clean stretches (longer than a batch, so the
batch path runs) with rows holding every kind of unusual cell.
"""

from __future__ import annotations

import datetime as dt
import random

import openpyxl
import pytest

from core.workbook import read_rounds
from core.workbook import rounds as rounds_module

CLEAN_ROWS = 600  # more than two batches

OPTIONAL_COLUMNS = ("Round", "Date", "Classifier", "Model version", "N pred+", "N pred-", "k",
                    "s", "Notes")  # fmt: skip


def _unusual(rng: random.Random, column: str) -> object:
    """A cell the batch path must leave to the full checks (or read the same way)."""
    choices: dict[str, list[object]] = {
        "count": [None, -1, 2.5, "12", " 7 ", 10**16, True, float("nan"), "", "  "],
        "population": [None, 0, -5, 2.5, "40000", 10**16, float("inf")],
        "positive": [None, 0, -0.1, 1e-13, "0.03", float("inf"), 5, True],
        "text": [None, "  ", 12, 3.5, "Total", "Grand total", "sum: all", "mean", "R\nTotal"],
        "date": [None, "2024-01-05", "not a date", 45000, dt.datetime(2024, 1, 5, 13, 30)],
    }
    kind = {
        "TP": "count", "FP": "count", "FN": "count", "TN": "count",
        "N pred+": "population", "N pred-": "population", "k": "positive", "s": "positive",
        "Date": "date",
    }.get(column, "text")  # fmt: skip
    return rng.choice(choices[kind])


def _usual(rng: random.Random, column: str, index: int) -> object:
    values = {
        "Round": f"R-{index:04d}",
        "Date": dt.datetime(2021, 1, 4) + dt.timedelta(days=index),
        "Classifier": rng.choice(["travel", "finance", " shopping "]),
        "Model version": rng.choice(["v1", "v2.1", None]),
        "N pred+": 40_000 + index,
        "N pred-": 1_250_000,
        "k": (40_000 + index) / 1_250_000 * rng.choice([1.0, 1.001]),
        "s": rng.choice([1.5, 2, 3.25]),
        "TP": rng.randrange(0, 500),
        "FP": rng.randrange(0, 100),
        "FN": rng.randrange(0, 100),
        "TN": rng.randrange(0, 5000),
        "Notes": rng.choice([None, "ok", "  relabeled  "]),
    }
    return values[column]


def _workbook(tmp_path, seed: int) -> tuple:
    rng = random.Random(seed)
    optional = [name for name in OPTIONAL_COLUMNS if rng.random() < 0.7]
    if "k" not in optional and not {"N pred+", "N pred-"} <= set(optional):
        optional.append("k")
    header = [*optional, "TP", "FP", "FN", "TN"]
    rng.shuffle(header)
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = rng.choice(["Rounds", "travel"])
    sheet.append(header)
    unusual_share = rng.choice([0.0, 0.002, 0.02])
    for index in range(CLEAN_ROWS):
        row = []
        for column in header:
            if rng.random() < unusual_share:
                row.append(_unusual(rng, column))
            else:
                row.append(_usual(rng, column, index))
        sheet.append(row)
    if rng.random() < 0.3:
        sheet.cell(row=CLEAN_ROWS // 2, column=1).value = "=1+1"  # a formula in one batch
    path = tmp_path / f"rounds-{seed}.xlsx"
    workbook.save(path)
    return path, unusual_share


@pytest.mark.parametrize("seed", range(12))
def test_batch_reading_equals_row_by_row_reading(tmp_path, monkeypatch, seed):
    path, unusual_share = _workbook(tmp_path, seed)
    original = rounds_module._RowInterpreter.plain_rounds
    batches_read = []

    def counted(self, batch):
        result = original(self, batch)
        batches_read.append(result is not None)
        return result

    with monkeypatch.context() as patch:
        patch.setattr(rounds_module._RowInterpreter, "plain_rounds", counted)
        batched = read_rounds(path)
    with monkeypatch.context() as patch:
        calls = []

        def row_by_row(self, batch):
            calls.append(len(batch))
            return None

        patch.setattr(rounds_module._RowInterpreter, "plain_rounds", row_by_row)
        one_by_one = read_rounds(path)
    assert calls, "the batch path was not even asked"
    assert batched.rounds == one_by_one.rounds
    assert batched.refused == one_by_one.refused
    assert batched.skipped_sheets == one_by_one.skipped_sheets
    if unusual_share == 0.0:
        assert sum(batches_read) >= 1  # the column path did read some batches
        assert len(batched.rounds) == CLEAN_ROWS - (1 if batched.refused else 0)


def test_clean_batches_take_the_column_path(tmp_path, monkeypatch):
    """Guards the speed of long histories: clean rows must not fall back row by row."""
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Round", "Date", "N pred+", "N pred-", "TP", "FP", "FN", "TN", "Notes"])
    for index in range(1000):
        sheet.append([f"R{index}", dt.date(2022, 1, 1) + dt.timedelta(days=index), 400, 90_000,
                      10, 2, 3, 800, None])  # fmt: skip
    path = tmp_path / "clean.xlsx"
    workbook.save(path)
    fallbacks = []
    original = rounds_module._RowInterpreter.interpret

    def counting(self, raw):
        fallbacks.append(raw[0])
        return original(self, raw)

    monkeypatch.setattr(rounds_module._RowInterpreter, "interpret", counting)
    book = read_rounds(path)
    assert len(book.rounds) == 1000
    assert book.rounds[5].k == pytest.approx(400 / 90_000)
    assert book.rounds[5].date == dt.date(2022, 1, 6)
    # Only the rows read ahead with the header go through interpret.
    assert len(fallbacks) < rounds_module.ROLE_SAMPLE_ROWS
