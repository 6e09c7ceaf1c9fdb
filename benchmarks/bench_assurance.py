"""Benchmarks of the assurance (the chance that a labeled round meets its margins).

* the exact assurance of one design, which every plan carries and the Plan tab recomputes
  on every slider move: budget 20 ms per design, checked at a typical plan, at an FPC plan
  and at the largest slider design (v = 200,000, s = 100, where the count grid is grouped);
* the assured-plan search (``--assurance-target``): the paper's smallest ``v`` at ``s``, the
  least-cost ``(n1, n0)`` with unequal label costs, and with FPC (reported, no budget: it
  runs once per change of the inputs, on the thread pool in the app);
* one s-slider step of the Plan tab with the assurance readouts (refresh only, offscreen),
  against the 16 ms frame.

Run with ``python -m pytest benchmarks/bench_assurance.py --benchmark-enable -q``. With
benchmarks enabled each budgeted case also asserts its median against the budget.
"""

from __future__ import annotations

import os

import pytest

# the Plan tab case runs headless, like the tests
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from core.assurance import AssuranceModel
from core.confusion import Population, stratum_sizes
from core.planning import make_plan

PER_DESIGN_BUDGET_SECONDS = 20e-3
FRAME_BUDGET_SECONDS = 16e-3
APP_POPULATION = Population.from_counts(41_200, 1_251_000)


def _check_budget(benchmark, budget: float) -> None:
    if not benchmark.disabled:
        median = benchmark.stats.stats.median
        assert median <= budget, f"median {median:.3g} s exceeds the {budget:g} s budget"


def test_exact_assurance_of_the_papers_plan(benchmark):
    plan = make_plan(population=Population.from_k(0.046), precision=0.79, recall=0.67)
    model = AssuranceModel.from_plan(plan)
    result = benchmark(model.at, plan.n_pos, plan.n_neg)
    assert 0.4 < result.recall < 0.65
    _check_budget(benchmark, PER_DESIGN_BUDGET_SECONDS)


def test_exact_assurance_of_an_fpc_plan(benchmark):
    plan = make_plan(
        population=Population.from_counts(300, 6000),
        precision=0.9,
        recall=0.7,
        method="optimal",
        fpc=True,
    )
    model = AssuranceModel.from_plan(plan)
    result = benchmark(model.at, plan.n_pos, plan.n_neg)
    # judged by Wilson (0.477 in the independent reference simulation of tests/data)
    assert 0.42 < result.precision < 0.53
    _check_budget(benchmark, PER_DESIGN_BUDGET_SECONDS)


@pytest.mark.parametrize("precision", [0.9, 0.5])
def test_exact_assurance_of_the_largest_slider_design(benchmark, precision):
    model = AssuranceModel.build(
        pi1=precision,
        pi0=0.004,
        k=APP_POPULATION.k,
        margin_precision=0.01,
        margin_recall=0.01,
    )
    n_pos, n_neg = stratum_sizes(200_000, APP_POPULATION.k, 100.0)
    result = benchmark(model.at, n_pos, n_neg)
    assert 0 <= result.both <= 1
    _check_budget(benchmark, PER_DESIGN_BUDGET_SECONDS)


@pytest.mark.parametrize(
    "arguments",
    [
        pytest.param(dict(method="paper"), id="paper"),
        pytest.param(dict(method="optimal", cost_pos=3.0, cost_neg=1.0), id="optimal-costs"),
    ],
)
def test_assured_search_in_the_apps_example(benchmark, arguments):
    plan = benchmark(
        make_plan,
        population=APP_POPULATION,
        precision=0.9,
        recall=0.8,
        assurance_target=0.9,
        **arguments,
    )
    assert plan.assured.assurance.both >= 0.9


def test_assured_search_with_fpc_and_costs(benchmark):
    plan = benchmark(
        make_plan,
        population=Population.from_counts(2000, 40000),
        precision=0.85,
        recall=0.75,
        margin_precision=0.04,
        margin_recall=0.06,
        method="optimal",
        cost_pos=1.0,
        cost_neg=2.5,
        fpc=True,
        assurance_target=0.9,
    )
    assert plan.assured.assurance.both >= 0.9


def test_assured_search_tight_margins(benchmark):
    # margins of 0.01 at k = 1/30: designs of tens of thousands of labels
    plan = benchmark.pedantic(
        make_plan,
        kwargs=dict(
            population=Population.from_k(1 / 30),
            precision=0.9,
            recall=0.8,
            margin_precision=0.01,
            margin_recall=0.01,
            method="optimal",
            assurance_target=0.9,
        ),
        rounds=3,
        iterations=1,
    )
    assert plan.assured.assurance.both >= 0.9


def test_plan_tab_slider_step_with_assurance(benchmark, qtbot):
    from core.session import SessionState
    from desktop.plan_tab import PlanTab
    from desktop.session_model import SessionModel

    session = SessionModel(SessionState())
    tab = PlanTab(session)
    qtbot.addWidget(tab)
    tab.resize(1366, 768)
    tab.show()
    values = iter([round(0.5 + 0.01 * i, 2) for i in range(100_000)])

    def step():
        session.set_value("plan.s", next(values))
        tab.flush()

    benchmark(step)
    assert tab.readouts["design_chance_both"].text() != "–"
    tab.shutdown()
    _check_budget(benchmark, FRAME_BUDGET_SECONDS)
