"""core.assurance against an independent simulation, a double loop over scipy's pmfs,
stored reference values and the evaluation code.

The independent simulation here shares no code with core: it draws the counts with numpy
(``Generator.binomial``, or ``Generator.hypergeometric`` from finite strata), and judges
each round by the intervals a lead quotes, written out below (Wilson precision, Katz
log-ratio recall with Haldane-Anscombe for zero cells and the bounds reaching the plain
estimate, FPC factors on the variances).
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom, hypergeom, norm

from core.assurance import (
    CELL_BUDGET,
    Assurance,
    AssuranceModel,
    plan_assurance,
    realized_margins,
    simulate_assurance,
    simulate_plan_assurance,
)
from core.confusion import ConfusionMatrix, Population
from core.errors import InputError
from core.intervals import katz_log_recall, wilson_precision
from core.planning import make_plan
from core.progress import Cancelled, TaskControl

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "assurance_reference.json"


def written_out_margins(tp, fn, n1, n0, k, z, f1=1.0, f0=1.0):
    """One round, by hand: the Wilson and Katz half-widths (Haldane where a cell is 0)."""
    trials = n1 / f1 if f1 > 0 else math.inf
    p = tp / n1
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z / (1 + z * z / trials) * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials**2))
    e_p = (min(centre + half, 1.0) - max(centre - half, 0.0)) / 2
    estimate = (
        math.nan if tp == fn == 0 else (0.0 if tp == 0 else 1 / (1 + (fn / n0) / (k * tp / n1)))
    )
    a, b, c, d = tp, n1 - tp, fn, n0 - fn
    if 0 in (a, b, c, d):
        a, b, c, d = a + 0.5, b + 0.5, c + 0.5, d + 0.5
    p1, p0 = a / (a + b), c / (c + d)
    x = p0 / (k * p1)
    se = math.sqrt((1 - p1) / ((a + b) * p1) * f1 + (1 - p0) / ((c + d) * p0) * f0)
    lower, upper = 1 / (1 + x * math.exp(z * se)), 1 / (1 + x * math.exp(-z * se))
    if not math.isnan(estimate):
        lower, upper = min(lower, estimate), max(upper, estimate)
    return e_p, (upper - lower) / 2


def independent_shares(design, *, reps, seed):
    """Share of simulated rounds meeting each target: a plain loop over numpy draws."""
    n1, n0, k = design["n_pos"], design["n_neg"], design["k"]
    pi1, pi0 = design["pi1"], design["pi0"]
    target_p, target_r = design["margin_precision"], design["margin_recall"]
    z = norm.ppf(1 - (1 - design.get("confidence", 0.95)) / 2)
    rng = np.random.default_rng(seed)
    strata = design.get("strata")
    if strata is None:
        tps, fns = rng.binomial(n1, pi1, reps), rng.binomial(n0, pi0, reps)
        f1 = f0 = 1.0
    else:
        big1, big0 = strata
        positives1, positives0 = round(pi1 * big1), round(pi0 * big0)
        tps = rng.hypergeometric(positives1, big1 - positives1, n1, reps)
        fns = rng.hypergeometric(positives0, big0 - positives0, n0, reps)
        f1, f0 = (big1 - n1) / (big1 - 1), (big0 - n0) / (big0 - 1)
    met_p = met_r = met_both = 0
    for tp, fn in zip(tps.tolist(), fns.tolist(), strict=True):
        e_p, e_r = written_out_margins(tp, fn, n1, n0, k, z, f1, f0)
        met_p += e_p <= target_p
        met_r += e_r <= target_r
        met_both += e_p <= target_p and e_r <= target_r
    return met_p / reps, met_r / reps, met_both / reps


def exact(design) -> Assurance:
    return AssuranceModel.build(
        pi1=design["pi1"],
        pi0=design["pi0"],
        k=design["k"],
        margin_precision=design["margin_precision"],
        margin_recall=design["margin_recall"],
        confidence=design.get("confidence", 0.95),
        strata=design.get("strata"),
    ).at(design["n_pos"], design["n_neg"])


def plan_design(plan, *, assured=False):
    sizes = plan.assured if assured else plan
    return {
        "n_pos": sizes.n_pos,
        "n_neg": sizes.n_neg,
        "k": plan.k,
        "pi1": plan.pi1,
        "pi0": plan.pi0,
        "margin_precision": plan.target_margin_precision,
        "margin_recall": plan.target_margin_recall,
        "confidence": plan.confidence,
        "strata": plan.strata,
    }


def designs():
    """Several designs: the paper's plan, FPC, unequal costs, zero cells, 99 %."""
    example = make_plan(population=Population.from_k(0.046), precision=0.79, recall=0.67)
    finite = make_plan(
        population=Population.from_counts(300, 6000),
        precision=0.9,
        recall=0.7,
        method="optimal",
        fpc=True,
    )
    costed = make_plan(
        population=Population.from_k(0.046),
        precision=0.79,
        recall=0.67,
        method="optimal",
        cost_pos=3,
        cost_neg=1,
        assurance_target=0.8,
    )
    finite_costed = make_plan(
        population=Population.from_counts(2000, 40000),
        precision=0.85,
        recall=0.75,
        method="optimal",
        cost_pos=1,
        cost_neg=2.5,
        margin_precision=0.04,
        margin_recall=0.06,
        fpc=True,
        assurance_target=0.9,
    )
    fixed = make_plan(
        population=Population.from_k(0.05),
        precision=0.9,
        recall=0.8,
        margin_precision=0.04,
        margin_recall=0.07,
        confidence=0.99,
        s=3,
        v=6000,
    )
    return {
        "paper plan": plan_design(example),
        "fpc optimal plan": plan_design(finite),
        "unequal costs, assured 80 %": plan_design(costed, assured=True),
        "unequal costs, fpc, assured 90 %": plan_design(finite_costed, assured=True),
        "fixed design at 99 %": plan_design(fixed),
        "zero cells": {
            "n_pos": 30,
            "n_neg": 300,
            "k": 0.1,
            "pi1": 0.95,
            "pi0": 0.004,
            "margin_precision": 0.1,
            "margin_recall": 0.08,
        },
    }


DESIGNS = designs()


@pytest.mark.parametrize("name", list(DESIGNS))
def test_exact_assurance_matches_an_independent_simulation(name):
    design = DESIGNS[name]
    reps = 20_000
    simulated = independent_shares(design, reps=reps, seed=sum(map(ord, name)))
    computed = exact(design)
    for share, probability in zip(
        simulated, (computed.precision, computed.recall, computed.both), strict=True
    ):
        standard_error = math.sqrt(max(probability * (1 - probability), 1e-4) / reps)
        assert abs(share - probability) <= 4.5 * standard_error, (name, simulated, computed)
    assert computed.method == "exact" and computed.reps == 0


def test_exact_assurance_matches_long_reference_simulations_kept_as_data():
    reference = json.loads(REFERENCE.read_text())
    assert reference["reps"] >= 200_000
    for case in reference["cases"]:
        design = dict(case["design"])
        if design.get("strata") is not None:
            design["strata"] = tuple(design["strata"])
        computed = exact(design)
        for name in ("precision", "recall", "both"):
            share = case["simulated"][name]
            standard_error = math.sqrt(max(share * (1 - share), 1e-4) / reference["reps"])
            assert abs(getattr(computed, name) - share) <= 4.5 * standard_error, (case, name)


@pytest.mark.parametrize("finite", [False, True])
def test_enumeration_equals_a_double_loop_over_scipy_pmfs(finite):
    n1, n0, pi1, pi0, k = 40, 400, 0.8, 0.02, 0.1
    strata = (150, 2000) if finite else None
    targets = (0.12, 0.1) if finite else (0.13, 0.2)
    z = norm.ppf(0.975)
    if finite:
        big1, big0 = strata
        pmf1 = hypergeom(big1, round(pi1 * big1), n1).pmf(np.arange(n1 + 1))
        pmf0 = hypergeom(big0, round(pi0 * big0), n0).pmf(np.arange(n0 + 1))
        f1, f0 = (big1 - n1) / (big1 - 1), (big0 - n0) / (big0 - 1)
    else:
        pmf1 = binom.pmf(np.arange(n1 + 1), n1, pi1)
        pmf0 = binom.pmf(np.arange(n0 + 1), n0, pi0)
        f1 = f0 = 1.0
    totals = [0.0, 0.0, 0.0]
    for tp in range(n1 + 1):
        for fn in range(n0 + 1):
            weight = pmf1[tp] * pmf0[fn]
            if weight < 1e-16:
                continue
            e_p, e_r = written_out_margins(tp, fn, n1, n0, k, z, f1, f0)
            totals[0] += weight * (e_p <= targets[0])
            totals[1] += weight * (e_r <= targets[1])
            totals[2] += weight * (e_p <= targets[0] and e_r <= targets[1])
    model = AssuranceModel.build(
        pi1=pi1,
        pi0=pi0,
        k=k,
        margin_precision=targets[0],
        margin_recall=targets[1],
        strata=strata,
    )
    result = model.at(n1, n0)
    assert (result.precision, result.recall, result.both) == pytest.approx(totals, abs=1e-9)
    assert model.precision_at(n1) == pytest.approx(totals[0], abs=1e-9)
    # the zero cells matter here: FN = 0 has probability 0.02**0 * 0.98**400 ~ 3e-4
    assert 0.0 < result.both < result.recall < 1.0


def test_grouped_counts_of_a_large_design_stay_within_1e_3_of_the_full_sum():
    plan = make_plan(
        population=Population.from_k(0.033),
        precision=0.9,
        recall=0.8,
        margin_precision=0.006,
        margin_recall=0.006,
    )
    grouped = AssuranceModel.from_plan(plan)
    full = dataclasses.replace(grouped, cell_budget=10**9)
    fn_values = 20 * math.sqrt(plan.n_neg * plan.pi0)
    tp_values = 20 * math.sqrt(plan.n_pos * plan.pi1 * (1 - plan.pi1))
    assert tp_values * fn_values > 2 * CELL_BUDGET  # the grouping is really used
    a, b = grouped.at(plan.n_pos, plan.n_neg), full.at(plan.n_pos, plan.n_neg)
    assert 0.3 < b.recall < 0.7
    for name in ("precision", "recall", "both"):
        assert getattr(a, name) == pytest.approx(getattr(b, name), abs=1e-3)


def test_simulation_equals_a_literal_loop_over_the_same_random_streams():
    n1, n0, pi1, pi0, k = 150, 2500, 0.85, 0.008, 0.05
    result = simulate_assurance(
        n_pos=n1,
        n_neg=n0,
        pi1=pi1,
        pi0=pi0,
        k=k,
        margin_precision=0.06,
        margin_recall=0.06,
        reps=3000,
        seed=11,
    )
    positives, negatives = (
        np.random.Generator(np.random.PCG64(child)) for child in np.random.SeedSequence(11).spawn(2)
    )
    z = norm.ppf(0.975)
    met = [0, 0, 0]
    for _ in range(3000):
        tp = int(positives.binomial(n1, pi1))
        fn = int(negatives.binomial(n0, pi0))
        e_p, e_r = written_out_margins(tp, fn, n1, n0, k, z)
        met[0] += e_p <= 0.06
        met[1] += e_r <= 0.06
        met[2] += e_p <= 0.06 and e_r <= 0.06
    assert (result.precision, result.recall, result.both) == tuple(m / 3000 for m in met)
    assert result.method == "simulation" and result.reps == 3000 and result.seed == 11


def test_fpc_simulation_draws_without_replacement_from_the_finite_strata():
    plan = make_plan(
        population=Population.from_counts(300, 6000),
        precision=0.9,
        recall=0.7,
        method="optimal",
        fpc=True,
    )
    assert plan.strata == (300, 6000)
    simulated = simulate_plan_assurance(plan, reps=100_000, seed=5)
    exact_value = plan_assurance(plan)
    assert plan.assurance == exact_value
    standard_error = math.sqrt(exact_value.precision * (1 - exact_value.precision) / 100_000)
    assert abs(simulated.precision - exact_value.precision) <= 4.5 * standard_error
    # binomial draws with the FPC factor applied afterwards give another share: drawing
    # without replacement matters (Wilson of n/f trials, written out)
    rng = np.random.default_rng(6)
    f1 = (300 - plan.n_pos) / 299
    z = norm.ppf(0.975)
    trials = plan.n_pos / f1
    p = rng.binomial(plan.n_pos, 0.9, 100_000) / plan.n_pos
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z / (1 + z * z / trials) * np.sqrt(p * (1 - p) / trials + z * z / (4 * trials**2))
    widths = (np.minimum(centre + half, 1.0) - np.maximum(centre - half, 0.0)) / 2
    binomial_share = np.mean(widths <= 0.05)
    assert abs(exact_value.precision - binomial_share) > 0.01  # 0.475 against 0.490


def test_realized_margins_agree_with_the_evaluation_intervals():
    """The margins a round is judged by are the half-widths the evaluation quotes."""
    k = 0.05
    z = norm.ppf(0.975)
    cases = ((130, 150, 14, 2014), (150, 150, 9, 2009), (140, 150, 0, 2000), (0, 20, 5, 900))
    for tp, n1, fn, n0 in cases:
        matrix = ConfusionMatrix(tp=tp, fp=n1 - tp, fn=fn, tn=n0 - fn)
        e_p, e_r = realized_margins(tp, fn, n1, n0, k, 0.95)
        assert float(e_p) == pytest.approx(wilson_precision(matrix).half_width, rel=1e-12)
        assert float(e_r) == pytest.approx(katz_log_recall(matrix, k).half_width, rel=1e-12)
        assert (float(e_p), float(e_r)) == pytest.approx(
            written_out_margins(tp, fn, n1, n0, k, z), rel=1e-12
        )
    # with the finite population correction, as the evaluation applies it
    factors = Population.from_counts(400, 20_000).fpc_factors(150, 2014)
    matrix = ConfusionMatrix(tp=130, fp=20, fn=14, tn=2000)
    e_p, e_r = realized_margins(130, 14, 150, 2014, k, 0.95, factors)
    assert float(e_p) == pytest.approx(wilson_precision(matrix, 0.95, factors).half_width)
    assert float(e_r) == pytest.approx(katz_log_recall(matrix, k, 0.95, factors).half_width)


def test_simulation_reports_progress_and_honours_cancel():
    seen = []
    arguments = dict(
        n_pos=100,
        n_neg=1000,
        pi1=0.9,
        pi0=0.01,
        k=0.1,
        margin_precision=0.06,
        margin_recall=0.1,
        reps=50_000,
    )
    simulate_assurance(**arguments, control=TaskControl(on_progress=seen.append))
    assert seen[0] == 0 and seen[-1] == 1 and len(seen) > 3 and seen == sorted(seen)

    control = TaskControl(on_progress=lambda fraction: control.cancel() if fraction > 0 else None)
    with pytest.raises(Cancelled):
        simulate_assurance(**arguments, control=control)


def test_every_plan_carries_its_exact_assurance():
    plan = make_plan(population=Population.from_counts(400, 8000), precision=0.9, recall=0.8)
    assert plan.assurance == AssuranceModel.from_plan(plan).at(plan.n_pos, plan.n_neg)
    assert plan.assurance.to_dict().keys() == {"precision", "recall", "both"}
    # the recall margin is planned to sit just under its target: about a coin flip
    assert 0.3 < plan.assurance.recall < 0.8
    assert plan.assurance.both <= min(plan.assurance.precision, plan.assurance.recall)


def test_same_seed_same_answer_and_input_checks():
    arguments = dict(
        n_pos=80,
        n_neg=900,
        pi1=0.7,
        pi0=0.02,
        k=0.1,
        margin_precision=0.1,
        margin_recall=0.1,
        reps=20_000,
    )
    assert simulate_assurance(seed=1, **arguments) == simulate_assurance(seed=1, **arguments)
    with pytest.raises(InputError, match="reps"):
        simulate_assurance(**(arguments | {"reps": 0}))
    with pytest.raises(InputError, match="pi1"):
        simulate_assurance(**(arguments | {"pi1": 1.0}))
    with pytest.raises(InputError, match="margin_recall"):
        simulate_assurance(**(arguments | {"margin_recall": 0.6}))
    model = AssuranceModel.build(
        pi1=0.9, pi0=0.01, k=0.1, margin_precision=0.05, margin_recall=0.05, strata=(50, 500)
    )
    with pytest.raises(InputError, match="larger than the population"):
        model.at(60, 100)
    with pytest.raises(InputError, match="n_neg"):
        model.at(10, 0)


def test_the_recall_grid_equals_the_evaluations_katz_interval_cell_by_cell():
    from core import batch_intervals
    from core.assurance import recall_margin_grid

    n1, n0, k, fpc = 40, 300, 0.07, (0.9, 0.97)
    tp = np.array([0, 1, 5, 20, 39, 40], dtype=float)
    fn = np.array([0, 1, 3, 150, 299, 300], dtype=float)
    grid = recall_margin_grid(tp, fn, n1, n0, k, 0.9, fpc)
    t, f = np.meshgrid(tp, fn, indexing="ij")
    expected = batch_intervals.katz_log_recall(t, n1 - t, f, n0 - f, k, 0.9, fpc).width / 2
    np.testing.assert_allclose(grid, expected, rtol=1e-12, atol=1e-15)
