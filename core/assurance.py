"""Assurance: the chance that a planned round's realized margins meet their targets.

A plan (spec 1.6) meets its targets with the *true* rates plugged into Eq 10. After
labeling, the margins are computed from the *estimates*, which scatter; a plan whose
planned recall margin sits just under the target misses it about half the time. The
assurance is that probability, simulated (issue 2, "beyond the paper"):

1. draw ``TP ~ Bin(n1, pi1)`` and ``FN ~ Bin(n0, pi0)``, ``reps`` times;
2. compute each replicate's margins with the plug-in Eq 10 formulas the evaluation reports:
   Wald precision ``z*sqrt(p^(1-p^)/n1)`` and delta-method recall
   ``z*x^/(1+x^)^2*se``, with the same FPC factors as the plan;
3. report the share of replicates meeting the precision target, the recall target, and
   both.

Zero cells follow :mod:`core.intervals`: the recall margin of a replicate with a zero cell
uses the Haldane-Anscombe correction (0.5 added to every cell, as ``delta_recall`` does);
the Wald precision margin is 0 when ``TP`` is 0 or ``n1`` (the evaluation flags that
interval as degenerate), which makes the precision assurance optimistic for precisions very
close to 0 or 1 with small ``n1``.

Bayesian plans are checked the same way: after the round, the reported margins are these
frequentist ones.

Randomness: ``numpy.random.SeedSequence(seed).spawn(2)`` gives one generator for the
predicted-positive draws and one for the predicted-negative draws, so the result does not
depend on the chunking used for progress reports (and equals a literal one-replicate-at-a-
time loop over the same two generators).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core import validation
from core.progress import TaskControl, step

#: Default number of simulated rounds for ``prplanner plan --assurance``.
DEFAULT_REPS = 10_000
#: Default seed: the command line has no ``--seed``, and a plan should print the same
#: assurance every time it is asked.
DEFAULT_SEED = 20230425
_CHUNK = 16_384


@dataclass(frozen=True, slots=True, kw_only=True)
class Assurance:
    """Simulated probability that the realized margins meet the targets.

    Attributes
    ----------
    precision, recall, both : float
        Share of simulated rounds whose realized precision margin, recall margin, or both
        are at most their targets.
    reps : int
        Simulated rounds.
    seed : int
        Seed of the simulation.
    standard_error : float
        Largest Monte-Carlo standard error ``sqrt(p(1-p)/reps)`` of the three shares.
    """

    precision: float
    recall: float
    both: float
    reps: int
    seed: int
    standard_error: float

    def to_dict(self) -> dict[str, float]:
        """The ``assurance`` object of ``prplanner plan --json``."""
        return {"precision": self.precision, "recall": self.recall, "both": self.both}


def realized_margins(tp, fn, n_pos: int, n_neg: int, k: float, z: float, fpc=(1.0, 1.0)):
    """Plug-in Eq 10 margins of rounds with counts ``tp``, ``fn`` (vectorized).

    Returns ``(precision_margin, recall_margin)``; zero cells as in the module docstring.
    """
    tp = np.asarray(tp, dtype=float)
    fn = np.asarray(fn, dtype=float)
    p1 = tp / n_pos
    precision = z * np.sqrt(p1 * (1.0 - p1) / n_pos * fpc[0])
    zero_cell = (tp == 0) | (tp == n_pos) | (fn == 0) | (fn == n_neg)
    shift = np.where(zero_cell, 0.5, 0.0)
    m1 = n_pos + 2.0 * shift
    m0 = n_neg + 2.0 * shift
    q1 = (tp + shift) / m1
    q0 = (fn + shift) / m0
    x = q0 / (k * q1)
    se = np.sqrt((1.0 - q1) / (m1 * q1) * fpc[0] + (1.0 - q0) / (m0 * q0) * fpc[1])
    recall = z * x / (1.0 + x) ** 2 * se
    return precision, recall


def margin_assurance(
    *,
    n_pos: int,
    n_neg: int,
    pi1: float,
    pi0: float,
    k: float,
    margin_precision: float,
    margin_recall: float,
    confidence: float = 0.95,
    fpc: tuple[float, float] = (1.0, 1.0),
    reps: int = DEFAULT_REPS,
    seed: int = DEFAULT_SEED,
    control: TaskControl | None = None,
) -> Assurance:
    """Simulate ``reps`` rounds of sizes ``(n_pos, n_neg)`` and count margins met.

    Parameters
    ----------
    n_pos, n_neg : int
        The design (both >= 1).
    pi1, pi0, k : float
        True rates assumed by the plan and the imbalance ratio.
    margin_precision, margin_recall : float
        Targets.
    confidence : float
        Level of the margins.
    fpc : tuple of float
        FPC factors of the two strata (``(1, 1)``: none).
    reps : int
        Simulated rounds (>= 1).
    seed : int
        Seed (see the module docstring).
    control : TaskControl, optional
        Progress and cancel; raises :class:`core.progress.Cancelled` when cancelled.
    """
    n_pos = validation.whole_at_least("n_pos", n_pos, 1)
    n_neg = validation.whole_at_least("n_neg", n_neg, 1)
    pi1 = validation.open_unit("pi1", pi1)
    pi0 = validation.open_unit("pi0", pi0)
    k = validation.positive("k", k)
    target_p = validation.margin("margin_precision", margin_precision)
    target_r = validation.margin("margin_recall", margin_recall)
    z = validation.z_value(confidence)
    reps = validation.whole_at_least("reps", reps, 1)
    seed = validation.count("seed", seed)
    positives, negatives = (
        np.random.Generator(np.random.PCG64(child))
        for child in np.random.SeedSequence(seed).spawn(2)
    )
    met_precision = met_recall = met_both = 0
    done = 0
    step(control, 0, reps)
    while done < reps:
        size = min(_CHUNK, reps - done)
        tp = positives.binomial(n_pos, pi1, size=size)
        fn = negatives.binomial(n_neg, pi0, size=size)
        precision, recall = realized_margins(tp, fn, n_pos, n_neg, k, z, fpc)
        ok_precision = precision <= target_p
        ok_recall = recall <= target_r
        met_precision += int(np.count_nonzero(ok_precision))
        met_recall += int(np.count_nonzero(ok_recall))
        met_both += int(np.count_nonzero(ok_precision & ok_recall))
        done += size
        step(control, done, reps)
    shares = (met_precision / reps, met_recall / reps, met_both / reps)
    return Assurance(
        precision=shares[0],
        recall=shares[1],
        both=shares[2],
        reps=reps,
        seed=seed,
        standard_error=max(float(np.sqrt(p * (1.0 - p) / reps)) for p in shares),
    )


def plan_assurance(
    plan, reps: int = DEFAULT_REPS, seed: int = DEFAULT_SEED, control: TaskControl | None = None
) -> Assurance:
    """Assurance of a :class:`core.planning.Plan` against its own targets."""
    return margin_assurance(
        n_pos=plan.n_pos,
        n_neg=plan.n_neg,
        pi1=plan.pi1,
        pi0=plan.pi0,
        k=plan.k,
        margin_precision=plan.target_margin_precision,
        margin_recall=plan.target_margin_recall,
        confidence=plan.confidence,
        fpc=plan.fpc_factors,
        reps=reps,
        seed=seed,
        control=control,
    )
