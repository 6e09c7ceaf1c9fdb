"""Benchmark: write the Excel report of a session with 1,000 past rounds.

Run with ``python -m pytest benchmarks/bench_report.py --benchmark-enable -q``. The report
includes everything a save writes: the evaluation of the Evaluate tab (10,000 replicates),
the plan and its curves, the P3 table, 1,000 rounds with their intervals and charts, and
the Inputs sheet.
"""

from __future__ import annotations

import datetime as dt

import numpy as np

from core.session import SessionState
from core.workbook.report import write_report
from core.workbook.rounds import Round, read_rounds


def _thousand_rounds() -> tuple[Round, ...]:
    rng = np.random.default_rng(5)
    rounds = []
    for index in range(1_000):
        classifier = ("travel", "finance", "shopping")[index * 3 // 1_000]
        positives = int(rng.integers(30_000, 60_000))
        negatives = int(rng.integers(1_000_000, 1_400_000))
        n_pos, n_neg = int(rng.integers(150, 400)), int(rng.integers(3_000, 5_000))
        tp = int(rng.binomial(n_pos, 0.86))
        fn = int(rng.binomial(n_neg, 0.02))
        rounds.append(
            Round(
                sheet="History",
                row=index + 2,
                round=f"R-{index + 1:04d}",
                date=dt.date(2020, 1, 6) + dt.timedelta(weeks=index % 300),
                classifier=classifier,
                k=positives / negatives,
                population_pos=positives,
                population_neg=negatives,
                s=float(rng.uniform(1.0, 2.5)),
                tp=tp,
                fp=n_pos - tp,
                fn=fn,
                tn=n_neg - fn,
                notes="=weekly audit" if index % 50 == 0 else None,
            )
        )
    return tuple(rounds)


def test_write_report_with_1000_rounds(benchmark, tmp_path):
    state = SessionState(rounds=_thousand_rounds())
    path = tmp_path / "report.xlsx"
    content = benchmark(write_report, path, state)
    assert len(content.rounds.rows) == 1_000
    assert len(read_rounds(path).rounds) == 1_000
