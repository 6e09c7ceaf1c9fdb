"""core.assurance against a literal loop, an exact binomial sum and the evaluation code."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import ndtri
from scipy.stats import binom

from core.assurance import Assurance, margin_assurance, plan_assurance, realized_margins
from core.confusion import ConfusionMatrix, Population
from core.errors import InputError
from core.intervals import delta_recall, wald_precision
from core.planning import make_plan
from core.progress import Cancelled, TaskControl

Z95 = float(ndtri(0.975))


def literal_margins(tp, fn, n1, n0, k, z, f1=1.0, f0=1.0):
    """One replicate, written out: Wald precision; delta recall, Haldane if a cell is 0."""
    p = tp / n1
    e_p = z * math.sqrt(p * (1 - p) / n1 * f1)
    if 0 in (tp, n1 - tp, fn, n0 - fn):
        tp, fn, n1, n0 = tp + 0.5, fn + 0.5, n1 + 1, n0 + 1
    p1, p0 = tp / n1, fn / n0
    x = p0 / (k * p1)
    e_r = z * x / (1 + x) ** 2 * math.sqrt((1 - p1) / (n1 * p1) * f1 + (1 - p0) / (n0 * p0) * f0)
    return e_p, e_r


def test_assurance_equals_a_literal_loop_over_the_same_random_streams():
    n1, n0, pi1, pi0, k = 150, 2500, 0.85, 0.008, 0.05
    result = margin_assurance(
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
    met_p = met_r = met_both = 0
    for _ in range(3000):
        tp = int(positives.binomial(n1, pi1))
        fn = int(negatives.binomial(n0, pi0))
        e_p, e_r = literal_margins(tp, fn, n1, n0, k, Z95)
        met_p += e_p <= 0.06
        met_r += e_r <= 0.06
        met_both += e_p <= 0.06 and e_r <= 0.06
    assert (result.precision, result.recall, result.both) == (
        met_p / 3000,
        met_r / 3000,
        met_both / 3000,
    )
    assert 0 < result.recall < 1 and 0 < result.precision < 1


def test_assurance_is_close_to_the_exact_binomial_sum():
    n1, n0, pi1, pi0, k = 40, 400, 0.8, 0.02, 0.1
    targets = (0.13, 0.2)
    exact_p = exact_r = exact_both = 0.0
    pmf1 = binom.pmf(np.arange(n1 + 1), n1, pi1)
    pmf0 = binom.pmf(np.arange(n0 + 1), n0, pi0)
    for tp in range(n1 + 1):
        for fn in range(n0 + 1):
            if pmf0[fn] < 1e-15:
                continue
            e_p, e_r = literal_margins(tp, fn, n1, n0, k, Z95)
            weight = pmf1[tp] * pmf0[fn]
            exact_p += weight * (e_p <= targets[0])
            exact_r += weight * (e_r <= targets[1])
            exact_both += weight * (e_p <= targets[0] and e_r <= targets[1])
    result = margin_assurance(
        n_pos=n1,
        n_neg=n0,
        pi1=pi1,
        pi0=pi0,
        k=k,
        margin_precision=targets[0],
        margin_recall=targets[1],
        reps=40_000,
        seed=3,
    )
    for simulated, exact in (
        (result.precision, exact_p),
        (result.recall, exact_r),
        (result.both, exact_both),
    ):
        assert abs(simulated - exact) < 4 * math.sqrt(exact * (1 - exact) / 40_000) + 1e-9
    assert result.standard_error == pytest.approx(
        max(math.sqrt(p * (1 - p) / 40_000) for p in (result.precision, result.recall, result.both))
    )


def test_realized_margins_agree_with_the_evaluation_intervals_including_zero_cells():
    k = 0.05
    for tp, fp, fn, tn in ((130, 20, 14, 2000), (150, 0, 9, 2000), (140, 10, 0, 2000)):
        matrix = ConfusionMatrix(tp=tp, fp=fp, fn=fn, tn=tn)
        e_p, e_r = realized_margins(tp, fn, tp + fp, fn + tn, k, Z95)
        assert float(e_p) == pytest.approx(wald_precision(matrix).half_width, abs=1e-15)
        interval = delta_recall(matrix, k)
        if not interval.note.count("clipped"):
            assert float(e_r) == pytest.approx(interval.half_width, rel=1e-12)


def test_assurance_reports_progress_and_honours_cancel():
    seen = []
    control = TaskControl(on_progress=seen.append)
    margin_assurance(
        n_pos=100,
        n_neg=1000,
        pi1=0.9,
        pi0=0.01,
        k=0.1,
        margin_precision=0.06,
        margin_recall=0.1,
        reps=50_000,
        control=control,
    )
    assert seen[0] == 0 and seen[-1] == 1 and len(seen) > 3 and seen == sorted(seen)

    control = TaskControl(on_progress=lambda fraction: control.cancel() if fraction > 0 else None)
    with pytest.raises(Cancelled):
        margin_assurance(
            n_pos=100,
            n_neg=1000,
            pi1=0.9,
            pi0=0.01,
            k=0.1,
            margin_precision=0.06,
            margin_recall=0.1,
            reps=50_000,
            control=control,
        )


def test_plan_assurance_uses_the_plans_design_targets_and_fpc():
    population = Population.from_counts(400, 8000)
    plan = make_plan(population=population, precision=0.9, recall=0.8, fpc=True, margin_recall=0.06)
    result = plan_assurance(plan, reps=4000, seed=5)
    direct = margin_assurance(
        n_pos=plan.n_pos,
        n_neg=plan.n_neg,
        pi1=0.9,
        pi0=plan.pi0,
        k=plan.k,
        margin_precision=0.05,
        margin_recall=0.06,
        fpc=plan.fpc_factors,
        reps=4000,
        seed=5,
    )
    assert result == direct
    assert isinstance(result, Assurance) and result.to_dict().keys() == {
        "precision",
        "recall",
        "both",
    }
    # the recall margin is planned to sit just under its target: about a coin flip
    assert 0.3 < result.recall < 0.8
    assert result.both <= min(result.precision, result.recall)


def test_same_seed_same_answer_and_input_checks():
    kwargs = dict(
        n_pos=80,
        n_neg=900,
        pi1=0.7,
        pi0=0.02,
        k=0.1,
        margin_precision=0.1,
        margin_recall=0.1,
        reps=20_000,
    )
    assert margin_assurance(seed=1, **kwargs) == margin_assurance(seed=1, **kwargs)
    with pytest.raises(InputError, match="reps"):
        margin_assurance(**(kwargs | {"reps": 0}))
    with pytest.raises(InputError, match="pi1"):
        margin_assurance(**(kwargs | {"pi1": 1.0}))
    with pytest.raises(InputError, match="margin_recall"):
        margin_assurance(**(kwargs | {"margin_recall": 0.6}))
