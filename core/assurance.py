"""Assurance: the chance that a planned round's realized margins meet their targets.

A plan (Eq 10 with the planning values plugged in) meets its targets *on average*. After
labeling, the margins are computed from the *estimates*, which scatter; a plan whose recall
margin sits just under its target misses it about half the time. The assurance of a design
``(n1, n0)`` is that probability: ``P(realized margin <= target)`` for precision, for
recall, and for both together, under the planning values taken as the truth.

The realized margin is the half-width of the interval a lead quotes and the labeled round
is judged by (``prplanner labels`` and the app's check against the targets): Wilson for
precision and the Katz log-ratio interval (Eq 4) for recall, both computed from the drawn
counts ``TP`` and ``FN``, with each stratum's variance multiplied by its finite population
correction ``(N - n)/(N - 1)`` when the plan uses one (:mod:`core.batch_intervals`, the
vector form of the evaluation's intervals). Bayesian plans are checked the same way: after
the round the intervals quoted are these. The plan's own margins (Eq 10) are the Wald and
delta-method ones; Wilson and Katz can be a little wider or narrower, so the chance says
what the lead will see.

Zero cells: the Katz interval of a round with a zero cell gets the Haldane-Anscombe
correction (0.5 added to all four cells), as the evaluation does; Wilson needs none.

Default computation: exact enumeration
--------------------------------------
:class:`AssuranceModel` sums the probabilities of all count pairs ``(TP, FN)`` whose
margins meet the targets. Counts are ``TP ~ Bin(n1, pi1)``, ``FN ~ Bin(n0, pi0)`` (sampling
with replacement, as in the paper) or, with the finite population correction, sampling
without replacement from strata of ``N1`` and ``N0`` items holding ``round(pi1*N1)`` and
``round(pi0*N0)`` actual positives (hypergeometric). Each count is enumerated over
``mean +- (10 sd + 10)`` and probabilities below ``1e-14`` of the largest are dropped, so
the mass left out is below ``1e-12``. The precision share is a sum over ``TP``; recall and
both are sums over the ``TP x FN`` grid. Designs whose grid would exceed
:data:`CELL_BUDGET` cells (tens of thousands of labels) group the interior ``TP`` counts
(then, only if still needed, the ``FN`` counts) into bins of consecutive values, each
evaluated at its probability-weighted mean count; ``FN`` keeps its integer lattice, and the
result moves by less than ``1e-3`` (checked in the tests against the ungrouped sum).
One design costs well under a millisecond for typical plans and at most about 10 ms.

The binomial assurance is not monotone in ``n``: it saw-tooths by up to about one
probability of a single count as the integer thresholds move, as exact binomial power
does. :mod:`core.planning` accounts for this in its assured-plan search.

Simulation check
----------------
:func:`simulate_assurance` draws the rounds (``prplanner plan --assurance``, the Plan tab's
simulation): binomially or, with the finite strata, hypergeometrically (without
replacement), and counts the rounds whose margins meet the targets.
``numpy.random.SeedSequence(seed).spawn(2)`` gives one generator per stratum, so the result
does not depend on the chunking used for progress reports.

References
----------
* Shang et al. 2023: Eq 10 (the margins whose chance of being met is simulated).
Full entries: docs/methods.md, References.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core import validation
from core.errors import InputError
from core.progress import TaskControl, step

#: Default number of simulated rounds for ``prplanner plan --assurance``.
DEFAULT_REPS = 10_000
#: Default seed: the command line has no ``--seed``, and a plan should print the same
#: simulated assurance every time it is asked.
DEFAULT_SEED = 20230425
#: Largest ``TP x FN`` grid summed count by count; larger grids group interior counts.
CELL_BUDGET = 150_000
#: Axes shorter than this are never grouped.
_SHORTEST_GROUPED_AXIS = 64
#: Probabilities below this share of the largest are left out of the enumeration.
_RELATIVE_TAIL = 1e-14
_CHUNK = 16_384


@dataclass(frozen=True, slots=True, kw_only=True)
class Assurance:
    """Probability that the realized margins meet the targets.

    Attributes
    ----------
    precision, recall, both : float
        Probability (exact) or share of simulated rounds (simulation) whose realized
        precision margin, recall margin, or both are at most their targets.
    method : str
        ``"exact"`` (enumeration, the default) or ``"simulation"``.
    reps : int
        Simulated rounds (0 for ``exact``).
    seed : int or None
        Seed of the simulation (None for ``exact``).
    standard_error : float
        Largest Monte-Carlo standard error ``sqrt(p(1-p)/reps)`` of the three shares
        (0 for ``exact``).
    """

    precision: float
    recall: float
    both: float
    method: str = "exact"
    reps: int = 0
    seed: int | None = None
    standard_error: float = 0.0

    def to_dict(self) -> dict[str, float]:
        """``{precision, recall, both}`` as in ``prplanner plan --json``."""
        return {"precision": self.precision, "recall": self.recall, "both": self.both}


def stratum_positives(rate: float, size: int) -> int:
    """Actual positives of a finite stratum: ``round(rate*size)``, kept in ``1 .. size-1``.

    Sampling without replacement needs a whole number of positives; both outcomes are
    kept possible so the rate the plan assumes stays inside (0, 1).
    """
    return int(min(max(round(rate * size), 1), max(size - 1, 1)))


def realized_margins(tp, fn, n_pos: int, n_neg: int, k: float, confidence: float, fpc=(1.0, 1.0)):
    """Margins of rounds with counts ``tp``, ``fn`` (vectorized, broadcast together).

    Returns ``(precision_margin, recall_margin)``: the half-widths of the Wilson and Katz
    log-ratio intervals the round is judged by, each stratum's variance times its FPC
    factor; NaN never counts as met.
    """
    from core import batch_intervals

    tp = np.asarray(tp, dtype=float)
    fn = np.asarray(fn, dtype=float)
    precision = precision_margins(tp, n_pos, confidence, fpc[0])
    tp, fn = np.broadcast_arrays(tp, fn)
    recall = (
        batch_intervals.katz_log_recall(tp, n_pos - tp, fn, n_neg - fn, k, confidence, fpc).width
        / 2.0
    )
    return precision, recall


def recall_margin_grid(tp, fn, n_pos: int, n_neg: int, k: float, confidence: float, fpc):
    """Katz half-widths of every round ``(tp[i], fn[j])``: the ``(len(tp), len(fn))`` grid
    of :func:`realized_margins`' recall margins, for the exact sum.

    Without a zero cell the log ratio's variance is a sum of one term per stratum, so the
    grid is built from the two axes (a few passes instead of dozens); rows and columns with
    a zero cell (only ever at the ends of the axes) take the evaluation's own interval, with
    its Haldane-Anscombe correction and boundary rule.
    """

    tp = np.asarray(tp, dtype=float)
    fn = np.asarray(fn, dtype=float)
    z = validation.z_value(confidence)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q1, q0 = tp / n_pos, fn / n_neg
        variance_pos = (1.0 - q1) / (n_pos * q1) * fpc[0]
        variance_neg = (1.0 - q0) / (n_neg * q0) * fpc[1]
        # bounds 1/(1 + x exp(+-spread)), x = q0/(k q1); computed in place: the grid is
        # evaluated hundreds of times in an assured-plan search
        spread = np.add.outer(variance_pos, variance_neg)
        np.sqrt(spread, out=spread)
        spread *= z
        log_x = np.subtract.outer(-np.log(k * q1), -np.log(q0))
        upper = np.subtract(log_x, spread)
        np.exp(upper, out=upper)
        upper += 1.0
        np.reciprocal(upper, out=upper)
        lower = np.add(log_x, spread, out=spread)
        np.exp(lower, out=lower)
        lower += 1.0
        np.reciprocal(lower, out=lower)
        margin = np.subtract(upper, lower, out=upper)
        margin *= 0.5
    for row in np.flatnonzero((tp == 0) | (tp == n_pos)):
        _, margin[row, :] = realized_margins(tp[row], fn, n_pos, n_neg, k, confidence, fpc)
    for column in np.flatnonzero((fn == 0) | (fn == n_neg)):
        _, margin[:, column] = realized_margins(tp, fn[column], n_pos, n_neg, k, confidence, fpc)
    return margin


def precision_margins(tp, n_pos: int, confidence: float, fpc_pos: float = 1.0):
    """Wilson half-widths of rounds with ``tp`` true positives among ``n_pos`` (vectorized;
    the interval of ``n_pos/f`` trials under the finite population correction ``f``)."""
    from core import batch_intervals

    tp = np.asarray(tp, dtype=float)
    interval = batch_intervals.wilson_precision(tp, n_pos - tp, confidence, (fpc_pos, 1.0))
    return interval.width / 2.0


_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _log_gamma(x) -> np.ndarray:
    """``log Gamma(x)`` for ``x > 0``, elementwise, without scipy (importing
    ``scipy.special`` would cost every ``prplanner plan`` ~0.25 s).

    Stirling's series to the ``x^-9`` term for ``x >= 10`` (the next term is below 2e-14
    there), ``math.lgamma`` below.
    """
    x = np.asarray(x, dtype=float)
    large = x >= 10.0
    t = np.where(large, x, 10.0)
    u = 1.0 / (t * t)
    series = (1 / 12 - u * (1 / 360 - u * (1 / 1260 - u * (1 / 1680 - u / 1188)))) / t
    result = (t - 0.5) * np.log(t) - t + _HALF_LOG_2PI + series
    if not large.all():
        result = np.where(large, result, np.vectorize(math.lgamma, otypes=[float])(x))
    return result


def _log_choose(a, b):
    return _log_gamma(a + 1.0) - _log_gamma(b + 1.0) - _log_gamma(a - b + 1.0)


def _x_log(x, log_value: float):
    """``x * log_value`` with ``0`` where ``x == 0`` (``scipy.special.xlogy``'s convention,
    ``0 * log 0 = 0``)."""
    with np.errstate(invalid="ignore"):  # 0 * -inf, replaced by 0
        return np.where(x == 0, 0.0, x * log_value)


def count_distribution(n: int, rate: float, size: int | None = None):
    """Values and probabilities of the positives among ``n`` labeled items of a stratum.

    ``Bin(n, rate)``, or with ``size`` (the stratum's ``N``) the hypergeometric law of
    ``n`` items drawn without replacement from ``N`` holding
    :func:`stratum_positives` positives. Tails below ``1e-14`` of the mode are dropped and
    the rest renormalized.
    """
    if size is None:
        mean, variance = n * rate, n * rate * (1.0 - rate)
        low, high = 0, n
    else:
        positives = stratum_positives(rate, size)
        share = positives / size
        mean = n * share
        variance = n * share * (1.0 - share) * (size - n) / max(size - 1, 1)
        low, high = max(0, n - (size - positives)), min(n, positives)
    spread = 10.0 * math.sqrt(variance) + 10.0
    low = max(low, math.floor(mean - spread))
    high = min(high, math.ceil(mean + spread))
    values = np.arange(low, high + 1, dtype=float)
    if size is None:
        log_rate = math.log(rate) if rate > 0 else -math.inf
        log_rest = math.log1p(-rate) if rate < 1 else -math.inf
        log_pmf = _log_choose(n, values) + _x_log(values, log_rate) + _x_log(n - values, log_rest)
    else:
        log_pmf = (
            _log_choose(positives, values)
            + _log_choose(size - positives, n - values)
            - _log_choose(size, n)
        )
    pmf = np.exp(log_pmf - log_pmf.max())
    kept = np.flatnonzero(pmf >= _RELATIVE_TAIL)
    values = values[kept[0] : kept[-1] + 1]
    pmf = pmf[kept[0] : kept[-1] + 1]
    return values, pmf / pmf.sum()


def grouped_counts(values: np.ndarray, pmf: np.ndarray, width: int):
    """Interior counts in bins of ``width`` (first and last kept alone: they may be the
    zero cells), each at its probability-weighted mean rounded to a whole count."""
    if width <= 1 or values.size < _SHORTEST_GROUPED_AXIS:
        return values, pmf
    starts = np.concatenate(([0], np.arange(1, values.size - 1, width), [values.size - 1]))
    weight = np.add.reduceat(pmf, starts)
    # each bin at its probability-weighted mean, a whole count (the intervals take counts)
    centre = np.rint(np.add.reduceat(pmf * values, starts) / weight)
    # the ends are single counts: keep them exact
    centre[0], centre[-1] = values[0], values[-1]
    return centre, weight


@dataclass(frozen=True, slots=True, kw_only=True)
class AssuranceModel:
    """Exact assurance of any design under fixed planning values and targets.

    Build once (:meth:`build`, :meth:`from_plan`) and call :meth:`at` per design; the
    Plan tab calls it on every slider move and :mod:`core.planning` in its assured-plan
    search.

    Attributes
    ----------
    pi1, pi0, k : float
        Planning values taken as the truth, and the imbalance ratio.
    target_precision, target_recall : float
        Target margins.
    confidence : float
        Level of the intervals the round is judged by.
    strata : tuple of int or None
        ``(N1, N0)``: sample without replacement from finite strata and apply the FPC to
        the realized margins. None: binomial sampling, no FPC.
    cell_budget : int
        Largest grid summed count by count.
    """

    pi1: float
    pi0: float
    k: float
    target_precision: float
    target_recall: float
    confidence: float
    strata: tuple[int, int] | None = None
    cell_budget: int = CELL_BUDGET

    @classmethod
    def build(
        cls,
        *,
        pi1: float,
        pi0: float,
        k: float,
        margin_precision: float,
        margin_recall: float,
        confidence: float = 0.95,
        strata: tuple[int, int] | None = None,
        cell_budget: int = CELL_BUDGET,
    ) -> AssuranceModel:
        """Check the values (messages name them) and build the model."""
        if strata is not None:
            strata = (
                validation.whole_at_least("N1 (predicted-positive population)", strata[0], 2),
                validation.whole_at_least("N0 (predicted-negative population)", strata[1], 2),
            )
        return cls(
            pi1=validation.open_unit("pi1", pi1),
            pi0=validation.open_unit("pi0", pi0),
            k=validation.imbalance("k", k),
            target_precision=validation.margin("margin_precision", margin_precision),
            target_recall=validation.margin("margin_recall", margin_recall),
            confidence=validation.confidence(confidence),
            strata=strata,
            cell_budget=validation.whole_at_least("cell_budget", cell_budget, 1),
        )

    @classmethod
    def from_plan(cls, plan) -> AssuranceModel:
        """The model of a :class:`core.planning.Plan`: its values, targets and strata."""
        return cls.build(
            pi1=plan.pi1,
            pi0=plan.pi0,
            k=plan.k,
            margin_precision=plan.target_margin_precision,
            margin_recall=plan.target_margin_recall,
            confidence=plan.confidence,
            strata=plan.strata,
        )

    def _check(self, n_pos, n_neg) -> tuple[int, int]:
        n_pos = validation.whole_at_least("n_pos", n_pos, 1)
        n_neg = validation.whole_at_least("n_neg", n_neg, 1)
        if self.strata is not None and (n_pos > self.strata[0] or n_neg > self.strata[1]):
            raise InputError(
                f"the design ({n_pos:,}, {n_neg:,}) is larger than the population "
                f"({self.strata[0]:,}, {self.strata[1]:,})"
            )
        return n_pos, n_neg

    def _fpc(self, n, stratum: int) -> float:
        if self.strata is None:
            return 1.0
        size = self.strata[stratum]
        return (size - n) / (size - 1)

    def _positives(self, n_pos: int):
        """``TP`` values, probabilities and whether each meets the precision target."""
        size = None if self.strata is None else self.strata[0]
        tp, weight = count_distribution(n_pos, self.pi1, size)
        return tp, weight, self._precision_met(tp, n_pos)

    def _precision_met(self, tp, n_pos: int) -> np.ndarray:
        margin = precision_margins(tp, n_pos, self.confidence, self._fpc(n_pos, 0))
        return margin <= self.target_precision

    def precision_at(self, n_pos) -> float:
        """Probability that the precision margin meets its target (depends on ``n1`` only)."""
        n_pos, _ = self._check(n_pos, 1)
        _, weight, met = self._positives(n_pos)
        return float(min(weight @ met, 1.0))

    def at(self, n_pos, n_neg, *, at_least: float | None = None) -> Assurance:
        """Exact assurance of the design ``(n1, n0)``.

        ``at_least``: when the precision share alone is below it, ``recall`` and ``both``
        are not computed (returned as NaN and 0): a search only needs to know the design
        falls short.
        """
        n_pos, n_neg = self._check(n_pos, n_neg)
        tp, weight_pos, met_precision = self._positives(n_pos)
        precision = float(min(weight_pos @ met_precision, 1.0))
        if at_least is not None and precision < at_least:
            return Assurance(precision=precision, recall=math.nan, both=0.0)
        size_neg = None if self.strata is None else self.strata[1]
        fn, weight_neg = count_distribution(n_neg, self.pi0, size_neg)
        cells = tp.size * fn.size
        if cells > self.cell_budget:
            # Group TP first: FN keeps its lattice (the saw-tooth along n0) exactly.
            rows = max(_SHORTEST_GROUPED_AXIS, self.cell_budget // fn.size)
            tp, weight_pos = grouped_counts(tp, weight_pos, math.ceil(tp.size / rows))
            if tp.size * fn.size > self.cell_budget:
                columns = max(_SHORTEST_GROUPED_AXIS, self.cell_budget // tp.size)
                fn, weight_neg = grouped_counts(fn, weight_neg, math.ceil(fn.size / columns))
            met_precision = self._precision_met(tp, n_pos)
        met_recall = self._recall_met(tp, fn, n_pos, n_neg)
        recall_given_tp = met_recall @ weight_neg
        recall = float(min(weight_pos @ recall_given_tp, 1.0))
        both = float(min((weight_pos * met_precision) @ recall_given_tp, 1.0))
        return Assurance(precision=precision, recall=recall, both=both)

    def _recall_met(self, tp, fn, n_pos: int, n_neg: int) -> np.ndarray:
        """``(len(tp), len(fn))`` grid: whether each round's recall margin meets the target."""
        fpc = (self._fpc(n_pos, 0), self._fpc(n_neg, 1))
        margin = recall_margin_grid(tp, fn, n_pos, n_neg, self.k, self.confidence, fpc)
        return margin <= self.target_recall


def plan_assurance(plan) -> Assurance:
    """Exact assurance of a :class:`core.planning.Plan` against its own targets."""
    return AssuranceModel.from_plan(plan).at(plan.n_pos, plan.n_neg)


def simulate_assurance(
    *,
    n_pos: int,
    n_neg: int,
    pi1: float,
    pi0: float,
    k: float,
    margin_precision: float,
    margin_recall: float,
    confidence: float = 0.95,
    strata: tuple[int, int] | None = None,
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
    strata : tuple of int, optional
        ``(N1, N0)``: draw without replacement (hypergeometric) from finite strata holding
        :func:`stratum_positives` positives, and apply the FPC to the realized margins.
    reps : int
        Simulated rounds (>= 1).
    seed : int
        Seed (see the module docstring).
    control : TaskControl, optional
        Progress and cancel; raises :class:`core.progress.Cancelled` when cancelled.
    """
    model = AssuranceModel.build(
        pi1=pi1,
        pi0=pi0,
        k=k,
        margin_precision=margin_precision,
        margin_recall=margin_recall,
        confidence=confidence,
        strata=strata,
    )
    n_pos, n_neg = model._check(n_pos, n_neg)
    # Capped as the coverage simulation is: 10^15 rounds ran for years (fuzz 14).
    reps = validation.whole_at_least("reps", reps, 1, validation.MAX_REPS)
    seed = validation.seed(seed)
    positives, negatives = (
        np.random.Generator(np.random.PCG64(child))
        for child in np.random.SeedSequence(seed).spawn(2)
    )
    fpc = (model._fpc(n_pos, 0), model._fpc(n_neg, 1))
    if model.strata is not None:
        big_pos, big_neg = model.strata
        good_pos, good_neg = stratum_positives(pi1, big_pos), stratum_positives(pi0, big_neg)

        def draw(size):
            return (
                positives.hypergeometric(good_pos, big_pos - good_pos, n_pos, size=size),
                negatives.hypergeometric(good_neg, big_neg - good_neg, n_neg, size=size),
            )
    else:

        def draw(size):
            return positives.binomial(n_pos, pi1, size=size), negatives.binomial(
                n_neg, pi0, size=size
            )

    met_precision = met_recall = met_both = 0
    done = 0
    step(control, 0, reps)
    while done < reps:
        size = min(_CHUNK, reps - done)
        tp, fn = draw(size)
        precision, recall = realized_margins(tp, fn, n_pos, n_neg, model.k, model.confidence, fpc)
        ok_precision = precision <= model.target_precision
        ok_recall = recall <= model.target_recall
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
        method="simulation",
        reps=reps,
        seed=seed,
        standard_error=max(float(np.sqrt(p * (1.0 - p) / reps)) for p in shares),
    )


def simulate_plan_assurance(
    plan, reps: int = DEFAULT_REPS, seed: int = DEFAULT_SEED, control: TaskControl | None = None
) -> Assurance:
    """Simulated assurance of a :class:`core.planning.Plan` (checks :func:`plan_assurance`)."""
    return simulate_assurance(
        n_pos=plan.n_pos,
        n_neg=plan.n_neg,
        pi1=plan.pi1,
        pi0=plan.pi0,
        k=plan.k,
        margin_precision=plan.target_margin_precision,
        margin_recall=plan.target_margin_recall,
        confidence=plan.confidence,
        strata=plan.strata,
        reps=reps,
        seed=seed,
        control=control,
    )
