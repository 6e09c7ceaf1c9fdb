"""Benchmarks of planning (targets: width curves for 400 values of ``s``,
frequentist plus three Bayesian, <= 1 ms; ``prplanner plan ... --json`` as a whole process
<= 0.5 s).

Run with ``python -m pytest benchmarks/bench_planning.py --benchmark-enable -q``. With
benchmarks enabled each budgeted case also asserts its median against the budget.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from core.assurance import simulate_assurance
from core.confusion import Population
from core.planning import WidthCurveModel, make_plan, width_curves

PROJECT_ROOT = Path(__file__).resolve().parent.parent
WIDTH_CURVES_BUDGET_SECONDS = 1e-3
PROCESS_BUDGET_SECONDS = 0.5
PLAN_COMMAND = [
    sys.executable,
    "-m",
    "desktop",
    "plan",
    "--k",
    "0.05",
    "--precision",
    "0.9",
    "--recall",
    "0.8",
    "--json",
]


def _check_budget(benchmark, budget: float) -> None:
    if not benchmark.disabled:
        median = benchmark.stats.stats.median
        assert median <= budget, f"median {median:.3g} s exceeds the {budget:g} s budget"


def test_width_curves_400_s_on_a_prebuilt_model(benchmark):
    # The slider path: constants built once, one evaluation per move.
    model = WidthCurveModel.build(k=1 / 19, precision=0.9, recall=0.8)
    curves = benchmark(model.over_s, 5000)
    assert curves.recall_width.shape == (4, 400)
    _check_budget(benchmark, WIDTH_CURVES_BUDGET_SECONDS)


def test_width_curves_400_s_from_scratch(benchmark):
    # Precision, recall or k changed: rebuild the priors and the grid, then evaluate.
    curves = benchmark(width_curves, k=1 / 19, precision=0.9, recall=0.8, v=5000)
    assert curves.precision_width.shape == (4, 400)
    _check_budget(benchmark, WIDTH_CURVES_BUDGET_SECONDS)


def test_widths_over_400_v(benchmark):
    model = WidthCurveModel.build(k=1 / 19, precision=0.9, recall=0.8)
    v = np.geomspace(100, 100_000, 400)
    curves = benchmark(model.over_v, 2.0, v)
    assert curves.recall_width.shape == (4, 400)
    _check_budget(benchmark, WIDTH_CURVES_BUDGET_SECONDS)


def test_plan_paper(benchmark):
    plan = benchmark(make_plan, population=Population(k=1 / 19), precision=0.9, recall=0.8)
    assert plan.method == "paper"


def test_plan_optimal(benchmark):
    plan = benchmark(
        make_plan, population=Population(k=1 / 19), precision=0.9, recall=0.8, method="optimal"
    )
    assert plan.method == "optimal"


def test_plan_optimal_tight_margins_with_costs(benchmark):
    # margins of 0.005 at k = 1/100: n1 in the tens of thousands, a long exact scan
    plan = benchmark(
        make_plan,
        population=Population(k=0.01),
        precision=0.9,
        recall=0.7,
        margin_precision=0.005,
        margin_recall=0.005,
        method="optimal",
        cost_pos=1.0,
        cost_neg=0.3,
    )
    assert plan.margin_recall <= 0.005


def test_simulated_assurance_10000_reps(benchmark):
    # the simulation check (plan --assurance); the exact default is in bench_assurance.py
    result = benchmark(
        simulate_assurance,
        n_pos=300,
        n_neg=5000,
        pi1=0.9,
        pi0=0.006,
        k=1 / 19,
        margin_precision=0.05,
        margin_recall=0.05,
        reps=10_000,
    )
    assert 0 <= result.both <= 1


def test_plan_command_as_a_whole_process(benchmark):
    def run_once():
        return subprocess.run(
            PLAN_COMMAND, cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
        )

    completed = benchmark.pedantic(run_once, rounds=10, iterations=1, warmup_rounds=1)
    assert '"s_star"' in completed.stdout
    _check_budget(benchmark, PROCESS_BUDGET_SECONDS)
