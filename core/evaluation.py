"""Evaluate one labeled round: point estimates and every interval of docs/methods.md.

:func:`evaluate` gathers, for one confusion matrix, the closed-form intervals (methods §3-4),
the bootstrap (Algorithm 1, methods §5), the Bayesian predictive intervals for a future
round of the same size (Eq 6-8 and Algorithm 2, methods §5) and the posterior intervals of
the true values, plus plain-language warnings. Its :class:`Evaluation` is the one source
of names for the ``prplanner evaluate --json`` output (:meth:`Evaluation.to_dict`), the
Excel report and the desktop table (:meth:`Evaluation.to_rows`).

Designs
-------
* ``stratified``: the strata were sampled separately; ``k = N1/N0`` comes from the user
  (directly or from the population counts).
* ``random``: one simple random sample; ``k`` is estimated by ``n1/n0`` (methods §2), and
  every interval carries the uncertainty of that estimate (treating it as known, as the
  paper's formulas do, under-covers: about 88 % instead of 95 % at the paper's Table 1
  truth). Katz and delta use the multinomial standard errors ``se^2 = 1/TP + 1/FN`` for
  recall and ``1/FP + 1/TN`` for FPR (:mod:`core.intervals`); the bootstrap resamples the
  whole sample (:func:`core.resampling.bootstrap`); the Bayesian intervals read the prior
  as a Dirichlet on the four cells, so recall's posterior is ``Beta(z11, z10)`` and
  ``bayes``/``bayes_mc`` predict the recall of a future round with the same number
  ``TP + FN`` of actual positives (the random-design analogue of Eq 6-8, see
  :mod:`core.bayes`). Precision's intervals are the same in both designs. Recall
  additionally gets the textbook Wald interval ``R +- z*sqrt(R(1-R)/(TP+FN))``.

Never a silent NaN: an undefined estimate or bound is ``None`` in :meth:`Evaluation.to_dict`
and a warning says why.

References
----------
* Shang et al. 2023: Eq 1-9, Algorithms 1 and 2, Appendix A (every interval of one round).
Full entries: docs/methods.md, References.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from core import intervals as closed_form
from core import progress, resampling, validation
from core.bayes import (
    Prior,
    bayes_precision_interval,
    bayes_recall_interval,
    bayes_recall_interval_random,
    posterior_precision_interval,
    posterior_recall_interval_random,
)
from core.confusion import ConfusionMatrix, PointEstimates, Population, point_estimates
from core.errors import InputError, named
from core.intervals import Interval
from core.methods import FEW_FLAGGED_LABELED, Recommendation

#: Cells below this make the normal approximations (Wald, Katz, delta, Eq 6-8) doubtful
#: (the paper: "at least 5 or 10"; we warn below 10).
SMALL_CELL = 10

#: Methods reported per metric, in the order of the JSON contract.
PRECISION_METHODS = (
    "wald",
    "wilson",
    "agresti_coull",
    "clopper_pearson",
    "jeffreys",
    "bootstrap",
    "bayes",
    "bayes_mc",
    "posterior",
)
RECALL_METHODS = ("katz_log", "delta", "bootstrap", "bayes", "bayes_mc", "posterior")
F1_METHODS = ("bootstrap", "bayes_mc", "posterior")
FPR_METHODS = ("katz_log", "wilson_ratio")

CELL_NAMES = ("TP", "FP", "FN", "TN")


def _none_if_nan(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(value)


#: How the note that the finite population correction was applied starts (among the
#: warnings, so the command line and the report list it; the app words it for a lead).
FPC_NOTE_START = "finite population correction applied"
#: Marks the warning that suggests the correction (the app says it in its own words).
FPC_HINT_MARK = " out of lists of known size"
#: From this share of a stratum labeled, an evaluation without the finite population
#: correction suggests it (below it the correction changes little: a factor of 0.9 or more
#: on the variance).
LARGE_SHARE_LABELED = 0.1


@dataclass(frozen=True, slots=True, kw_only=True)
class MetricResult:
    """Estimate and intervals of one metric.

    Attributes
    ----------
    estimate : float
        Plug-in estimate (methods §2); NaN when undefined (shown as ``None``/"-").
    intervals : dict of str to Interval
        Keyed by method name, in the order of the JSON contract.
    """

    estimate: float
    intervals: dict[str, Interval] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "estimate": _none_if_nan(self.estimate),
            "intervals": {
                method: [_none_if_nan(interval.lower), _none_if_nan(interval.upper)]
                for method, interval in self.intervals.items()
            },
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Evaluation:
    """Everything :func:`evaluate` found about one labeled round.

    Attributes
    ----------
    matrix : ConfusionMatrix
        The labeled counts.
    design : str
        ``"stratified"`` or ``"random"``.
    k : float
        Imbalance ratio used (given, or ``n1/n0`` for a random sample).
    confidence : float
        Confidence / credibility level ``c``.
    replicates : int
        ``Q`` for the bootstrap and the Monte-Carlo intervals.
    seed : int or None
        Seed of the random draws (``None``: fresh entropy, not reproducible).
    estimates : PointEstimates
        Plug-in estimates (methods §2).
    precision, recall, f1, fpr : MetricResult
        Estimate and intervals per method.
    prior : Prior
        Prior actually used for ``bayes``, ``bayes_mc`` and ``posterior`` (after a
        Jeffreys substitution, if any). With the finite population correction and no
        prior given, recall's and F1's ``posterior`` use Jeffreys instead (the lists' own
        values; methods, "Finite population correction").
    fpc : tuple of float or None
        ``((N1-n1)/(N1-1), (N0-n0)/(N0-1))`` when the finite population correction was
        applied, else ``None``.
    undefined_bootstrap : int
        Bootstrap replicates with no actual positive (recall 0/0), left out of the recall
        and F1 percentiles.
    warnings : tuple of str
        Plain-language cautions, in the order they were found.
    """

    matrix: ConfusionMatrix
    design: str
    k: float
    confidence: float
    replicates: int
    seed: int | None
    estimates: PointEstimates
    precision: MetricResult
    recall: MetricResult
    f1: MetricResult
    fpr: MetricResult
    prior: Prior
    fpc: tuple[float, float] | None
    undefined_bootstrap: int
    warnings: tuple[str, ...]

    def metrics(self) -> dict[str, MetricResult]:
        return {
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "fpr": self.fpr,
        }

    def recommendations(self) -> dict[str, Recommendation]:
        """Metric -> the interval to quote and why (:data:`core.methods.RECOMMENDED`), for
        the metrics whose recommended interval was computed. F1's bootstrap gives way to
        its posterior interval when it has no width (:data:`core.methods.F1_WITHOUT_SPREAD`):
        a lead must never be told to quote a range of one value that is not certain; and
        with the finite population correction F1 is quoted from the posterior of the lists'
        own F1 (:data:`core.methods.F1_WITH_FPC`)."""
        from core.methods import (
            F1_WITH_FPC,
            F1_WITHOUT_SPREAD,
            METRICS,
            PRECISION_FEW_WITH_FPC,
            RECOMMENDED,
        )

        metrics = self.metrics()
        chosen = {}
        for metric in METRICS:
            item = RECOMMENDED[metric]
            intervals = metrics[metric].intervals
            interval = intervals.get(item.method)
            if interval is None:
                continue
            if metric == F1_WITH_FPC.metric and self.fpc is not None:
                item = F1_WITH_FPC
            elif (
                metric == PRECISION_FEW_WITH_FPC.metric
                and self.fpc is not None
                and self.matrix.n_pos < FEW_FLAGGED_LABELED
                and PRECISION_FEW_WITH_FPC.method in intervals
            ):
                item = PRECISION_FEW_WITH_FPC
            elif (
                metric == F1_WITHOUT_SPREAD.metric
                and interval.lower == interval.upper
                and F1_WITHOUT_SPREAD.method in intervals
            ):
                item = F1_WITHOUT_SPREAD
            chosen[metric] = item
        return chosen

    def recommended(self) -> dict[str, str]:
        """Metric -> the interval method to quote (see :meth:`recommendations`)."""
        return {metric: item.method for metric, item in self.recommendations().items()}

    def to_dict(self) -> dict:
        """The ``prplanner evaluate --json`` document (its JSON contract)."""
        result: dict = {"k": self.k, "design": self.design}
        for name, metric in self.metrics().items():
            result[name] = metric.to_dict()
        result["prevalence"] = {"estimate": _none_if_nan(self.estimates.prevalence)}
        result["warnings"] = list(self.warnings)
        result["recommended"] = self.recommended()
        result["fpc"] = None
        if self.fpc is not None:
            left_out = {}
            for name, metric in self.metrics().items():
                methods = [method for method in metric.intervals if method in FPC_NOT_APPLIED]
                if methods:
                    left_out[name] = methods
            result["fpc"] = {"applied": True, "not_applied_to": left_out}
        return result

    def to_rows(self) -> list[tuple[str, str, float | None, float | None, float | None, str]]:
        """``(metric, method, estimate, lower, upper, note)`` rows for Excel and the GUI.

        Undefined numbers are ``None``. The prevalence row has no interval.
        """
        rows = []
        for name, metric in self.metrics().items():
            estimate = _none_if_nan(metric.estimate)
            for method, interval in metric.intervals.items():
                rows.append(
                    (
                        name,
                        method,
                        estimate,
                        _none_if_nan(interval.lower),
                        _none_if_nan(interval.upper),
                        interval.note,
                    )
                )
        rows.append(
            ("prevalence", "estimate", _none_if_nan(self.estimates.prevalence), None, None, "")
        )
        return rows


def _as_population(population) -> Population | None:
    if population is None or isinstance(population, Population):
        return population
    return Population.from_k(population)


def _resolve_prior(prior: Prior | None, matrix: ConfusionMatrix, warnings: list[str]) -> Prior:
    """The paper's default ``alpha = 0``, or Jeffreys when a zero count makes it improper.

    An explicitly given prior that is improper is refused by :meth:`Prior.posterior` with a
    message naming the zero cells (methods §5).
    """
    if prior is not None:
        prior.posterior(matrix)
        return prior
    if matrix.has_zero_cell:
        zeros = [name for name, n in zip(CELL_NAMES, matrix.as_tuple(), strict=True) if n == 0]
        warnings.append(
            f"{_names_are_zero(zeros)}, so the paper's default prior (alpha = 0) gives an improper "
            "posterior; the Bayesian intervals use the Jeffreys prior (0.5 per cell) instead"
        )
        return Prior.jeffreys()
    return Prior.none()


#: Intervals the finite population correction does not change: Agresti-Coull, and the
#: Bayes predictive ones (a prediction of the next round's estimate, not the lists' value).
FPC_NOT_APPLIED = frozenset({"agresti_coull", "bayes", "bayes_mc"})


def _interval_from_draws(
    replicates, metric: str, method: str, confidence: float, note=""
) -> Interval:
    lower, upper = replicates.interval(metric, confidence)
    if not (math.isfinite(lower) and math.isfinite(upper)):
        note = "; ".join(filter(None, [note, "undefined: no replicate had a defined value"]))
    return Interval(lower=lower, upper=upper, method=method, note=note)


def evaluate(
    matrix: ConfusionMatrix,
    *,
    population: Population | float | None = None,
    confidence: float = 0.95,
    replicates: int = 10_000,
    seed: int | None = None,
    prior: Prior | None = None,
    fpc: bool = False,
    control: progress.TaskControl | None = None,
) -> Evaluation:
    """Estimates and all intervals of one labeled round (methods §2-5).

    Parameters
    ----------
    matrix : ConfusionMatrix
        Labeled counts; both strata must hold at least one item.
    population : Population, float or None
        The stratified design's population (``k``, and ``N1``/``N0`` for the FPC); a float
        is taken as ``k``. ``None`` means a plain random sample: ``k = n1/n0``.
    confidence : float
        Level ``c`` in (0.5, 1).
    replicates : int
        ``Q`` for the bootstrap, Algorithm 2 and the posterior draws (>= 100).
    seed : int or None
        Makes the Monte-Carlo intervals reproducible.
    prior : Prior or None
        Prior for the Bayesian intervals. ``None`` is the paper's ``alpha = 0``, replaced by
        Jeffreys (with a warning) when a count is 0; an explicit improper prior is refused.
    fpc : bool
        Apply the finite population correction ``(N - n)/(N - 1)`` to each stratum's
        variance in the Wald, Wilson, Katz and delta intervals and make the exact
        precision interval hypergeometric; needs both population counts.
    control : TaskControl, optional
        Progress and cancel for the Monte-Carlo parts.

    Returns
    -------
    Evaluation

    Raises
    ------
    InputError
        For an empty stratum, ``k <= 0``, a confidence outside (0.5, 1), too few
        replicates, an improper explicit prior, or ``fpc`` without population counts.
    """
    if not isinstance(matrix, ConfusionMatrix):
        raise InputError(f"matrix must be a ConfusionMatrix, got {type(matrix).__name__}")
    matrix.require_both_strata()
    confidence = validation.confidence(confidence)
    replicates = validation.whole_at_least("replicates", replicates, 100, validation.MAX_REPLICATES)
    if seed is not None:
        seed = validation.seed(seed)
    population = _as_population(population)
    design = "random" if population is None else "stratified"
    if population is not None:
        population.require_sample_fits(matrix.n_pos, matrix.n_neg)
    k = matrix.sample_k if population is None else population.k
    warnings: list[str] = []

    fpc_factors = closed_form.NO_FPC
    if fpc:
        if population is None:
            raise InputError(
                "the finite population correction needs both population counts "
                f"({named('population')}); a random sample has none"
            )
        fpc_factors = population.fpc_factors(matrix.n_pos, matrix.n_neg)
        strata = population.strata
        assert strata is not None  # fpc_factors needs both counts
        # The share labeled is n/N; 1 - f is (n - 1)/(N - 1), not what a lead counts.
        labeled_pos, labeled_neg = matrix.n_pos / strata[0], matrix.n_neg / strata[1]
        warnings.append(
            # Said as what it does for the lead: "carry no sampling error" was read as a
            # problem on every normal round (trial 19).
            f"{FPC_NOTE_START}: the labels cover {100 * labeled_pos:.1f} % of the flagged "
            f"and {100 * labeled_neg:.1f} % of the unflagged items, drawn without "
            "replacement from lists of known size, so only the items not labeled leave "
            "uncertainty and the intervals are that much narrower (the exact and Jeffreys "
            "intervals of precision count what the unlabeled items can still hold); "
            "Agresti-Coull is left uncorrected, so wider, and the Bayes predictive intervals "
            "predict the next round's estimate, not these lists' values"
        )

    strata = population.strata if population is not None else None
    if strata is not None and not fpc:
        shares = (matrix.n_pos / strata[0], matrix.n_neg / strata[1])
        if max(shares) >= LARGE_SHARE_LABELED:
            warnings.append(
                f"{100 * shares[0]:.1f} % of the flagged and {100 * shares[1]:.1f} % of the "
                f"unflagged items are labeled{FPC_HINT_MARK}: if they were drawn without "
                f"replacement from these lists (as PR Planner draws), {named('fpc')} narrows "
                "the intervals to what the unlabeled items can still hold; without it they are "
                "wider than they need be"
            )
    # A stratum labeled in full (with the correction) has no sampling error: its small
    # counts weaken no approximation.
    census = (fpc_factors[0] == 0.0, fpc_factors[1] == 0.0) if fpc else (False, False)
    estimates = point_estimates(matrix, None if population is None else k)
    few_flagged = fpc and 0 < matrix.n_pos < FEW_FLAGGED_LABELED and not census[0]
    _cell_warnings(matrix, warnings, census, few_flagged)
    if few_flagged:
        warnings.append(
            f"only {matrix.n_pos} flagged items are labeled: with the finite population "
            "correction at such sizes every interval is lumpy, and even Wilson's and Katz's "
            "coverage can fall to 85-90 % at some true values; the exact interval of "
            "precision keeps its level and is the one marked to quote"
        )

    stratum_size = population.strata[0] if fpc and population and population.strata else None
    precision_intervals = dict(
        closed_form.precision_intervals(matrix, confidence, fpc_factors, stratum_size)
    )
    ratio_args = (matrix, k, confidence, fpc_factors)
    recall_intervals = {
        "katz_log": closed_form.katz_log_recall(*ratio_args, design=design),
        "delta": closed_form.delta_recall(*ratio_args, design=design),
    }
    fpr_intervals = {
        "katz_log": closed_form.katz_log_fpr(*ratio_args, design=design),
        "wilson_ratio": closed_form.wilson_ratio_fpr(*ratio_args, design=design),
    }

    rng = resampling.as_generator(seed)
    boot = resampling.bootstrap(
        *matrix.as_tuple(), k, replicates=replicates, seed=rng, design=design, control=control,
        fpc=fpc_factors,
    )  # fmt: skip
    undefined = int(boot.undefined_recall)
    if undefined:
        warnings.append(
            f"{undefined:,} of {replicates:,} bootstrap replicates drew no actual positive "
            "(TP* = FN* = 0), so their recall is undefined; they were left out of the "
            "bootstrap percentiles of recall and F1"
        )
    if int(boot.undefined_precision):
        warnings.append(
            f"{int(boot.undefined_precision):,} of {replicates:,} bootstrap replicates drew no "
            "predicted positive, so their precision is undefined; they were left out"
        )
    precision_intervals["bootstrap"] = _interval_from_draws(
        boot, "precision", "bootstrap", confidence
    )
    recall_intervals["bootstrap"] = _interval_from_draws(boot, "recall", "bootstrap", confidence)
    f1_intervals = {"bootstrap": _interval_from_draws(boot, "f1", "bootstrap", confidence)}

    used_prior = _resolve_prior(prior, matrix, warnings)
    posterior = used_prior.posterior(matrix)
    z = (posterior.z11, posterior.z01, posterior.z10, posterior.z00)
    positives = matrix.tp + matrix.fn
    precision_intervals["bayes"] = bayes_precision_interval(posterior, matrix.n_pos, confidence)
    if design == "random":
        recall_intervals["bayes"] = bayes_recall_interval_random(posterior, positives, confidence)
    else:
        recall_intervals["bayes"] = bayes_recall_interval(
            posterior, k, matrix.n_pos, matrix.n_neg, confidence
        )
    predictive = resampling.bayes_predictive(
        *z, k, matrix.n_pos, matrix.n_neg, replicates=replicates, seed=rng, control=control,
        design=design, positives_future=positives if design == "random" else None,
    )  # fmt: skip
    draws = resampling.posterior_draws(
        *z, k, replicates=replicates, seed=rng, control=control, design=design
    )
    precision_intervals["bayes_mc"] = _interval_from_draws(
        predictive, "precision", "bayes_mc", confidence
    )
    recall_intervals["bayes_mc"] = _interval_from_draws(
        predictive, "recall", "bayes_mc", confidence
    )
    f1_intervals["bayes_mc"] = _interval_from_draws(predictive, "f1", "bayes_mc", confidence)
    # Precision's posterior is exactly Beta(z11, z01): quantiles, not draws.
    finite = (matrix.tp, matrix.n_pos, stratum_size) if stratum_size is not None else None
    precision_intervals["posterior"] = posterior_precision_interval(posterior, confidence, finite)
    if design == "random":  # exactly Beta(z11, z10): quantiles, not draws
        recall_intervals["posterior"] = posterior_recall_interval_random(posterior, confidence)
    else:
        recall_intervals["posterior"] = _interval_from_draws(
            draws, "recall", "posterior", confidence
        )
    f1_intervals["posterior"] = _interval_from_draws(draws, "f1", "posterior", confidence)
    if fpc and strata is not None:
        # The lists' own recall and F1, as precision's posterior is the flagged list's own
        # precision: each draw completes the unlabeled items binomially. The bootstrap's
        # recall and F1 are too narrow when few missed positives are labeled (a count of 0
        # to 3 FN cannot vary much); these keep their level (methods, "Finite population
        # correction").
        # Jeffreys unless the lead gave a prior: the paper's alpha = 0 pulls F1 up (its
        # interval missed above 4-5 % of the time in mid-sized designs, against 2.5 %).
        finite_prior = Prior.jeffreys().posterior(matrix) if prior is None else posterior
        finite_draws = resampling.finite_population_posterior_draws(
            finite_prior.z11,
            finite_prior.z01,
            finite_prior.z10,
            finite_prior.z00,
            matrix,
            strata,
            replicates=replicates,
            seed=rng,
        )
        recall_intervals["posterior"] = _interval_from_draws(
            finite_draws, "recall", "posterior", confidence
        )
        f1_intervals["posterior"] = _interval_from_draws(
            finite_draws, "f1", "posterior", confidence
        )
    # A credible interval for the true value never leaves out the round's own estimate:
    # at a count of 0 or n (precision or F1 of 100 %) its equal tails stop short of the
    # boundary, which is then taken in, as the Jeffreys interval does (methods §4).
    for intervals, estimate in (
        (precision_intervals, estimates.precision),
        (recall_intervals, estimates.recall),
        (f1_intervals, estimates.f1),
    ):
        intervals["posterior"] = closed_form.reaching_estimate(intervals["posterior"], estimate)
    if int(predictive.undefined_recall):
        left_out = "recall" if design == "random" else "recall and F1"
        warnings.append(
            f"{int(predictive.undefined_recall):,} of {replicates:,} Monte-Carlo predictive "
            f"replicates had no actual positive; they were left out of the bayes_mc {left_out} "
            "percentiles"
        )
    if design == "random" and predictive.f1 is not None:
        # In the random design F1* comes from its own draws (core.resampling.bayes_predictive).
        undefined_f1 = int(np.isnan(predictive.f1).sum())
        if undefined_f1 > 0:
            warnings.append(
                f"{undefined_f1:,} of {replicates:,} Monte-Carlo predictive replicates of F1 "
                "drew no actual positive; they were left out of the bayes_mc F1 percentiles"
            )

    if design == "random":
        recall_intervals["wald"] = closed_form.wald_recall_random(matrix, confidence)

    result_metrics = {
        "precision": MetricResult(estimate=estimates.precision, intervals=precision_intervals),
        "recall": MetricResult(estimate=estimates.recall, intervals=recall_intervals),
        "f1": MetricResult(estimate=estimates.f1, intervals=f1_intervals),
        "fpr": MetricResult(estimate=estimates.fpr, intervals=fpr_intervals),
    }
    _undefined_value_warnings(result_metrics, warnings)
    _interval_note_warnings(result_metrics, matrix, warnings)
    return Evaluation(
        matrix=matrix,
        design=design,
        k=k,
        confidence=confidence,
        replicates=replicates,
        seed=seed,
        estimates=estimates,
        prior=used_prior,
        fpc=None if not fpc else fpc_factors,
        undefined_bootstrap=undefined,
        warnings=tuple(warnings),
        **result_metrics,
    )


def _names_are_zero(names: list[str]) -> str:
    if len(names) == 1:
        return f"{names[0]} is 0"
    return f"{', '.join(names[:-1])} and {names[-1]} are 0"


#: The starred closed-form intervals checked at small counts, as the warnings name them
#: (methods §4, zero and small cells; the settings are in tests/core/test_coverage.py).
_QUOTED = "Wilson for precision, Katz log for recall"
#: What the simulations found for FPR's starred interval at small counts.
_FPR_AT_SMALL_COUNTS = (
    "the false positive rate's (Wilson ratio) covers about 92 % instead of 95 % when about "
    "one false positive is expected"
)


def _cell_warnings(
    matrix: ConfusionMatrix,
    warnings: list[str],
    census: tuple[bool, bool] = (False, False),
    few_flagged: bool = False,
) -> None:
    """Zero and small cells. ``few_flagged``: the note on few flagged labels under the
    correction follows, so the starred intervals are not said to keep their level."""
    kept = (
        "are discussed in the note on few flagged labels"
        if few_flagged
        else f"keep their level here; {_FPR_AT_SMALL_COUNTS}"
    )
    kept_small = (
        "are discussed in the note on few flagged labels"
        if few_flagged
        else f"keep their level at such counts; {_FPR_AT_SMALL_COUNTS}"
    )
    cells = dict(zip(CELL_NAMES, matrix.as_tuple(), strict=True))
    zeros = [name for name, n in cells.items() if n == 0]
    if zeros:
        warnings.append(
            f"{_names_are_zero(zeros)}: the log-ratio (Katz) and delta intervals for recall and "
            "FPR use the Haldane-Anscombe correction (+0.5 to every cell), so they are centred "
            "on a corrected estimate (a bound on 0 or 1 is moved to include the plain one); "
            "the bootstrap cannot resample what was "
            "never observed, so its intervals can have zero width. The intervals marked to "
            f"quote ({_QUOTED}) {kept} (bayes and "
            "bayes_mc are predictions for the next round's estimate, not intervals for the "
            "true value)"
        )
    # CELL_NAMES is TP, FP (flagged stratum), FN, TN (unflagged stratum).
    in_census = {
        name for name, stratum in zip(CELL_NAMES, (0, 0, 1, 1), strict=True) if census[stratum]
    }
    small = [
        f"{name} = {n}" for name, n in cells.items() if n < SMALL_CELL and name not in in_census
    ]
    if small:
        warnings.append(
            f"the normal approximation is weak because {', '.join(small)} "
            f"(below {SMALL_CELL}): the Wald, delta and analytic Bayes intervals can be too "
            f"narrow and the bootstrap is lumpy; the intervals marked to quote ({_QUOTED}) "
            f"{kept_small} (methods §4, zero and small cells)"
        )


def _undefined_value_warnings(metrics: dict[str, MetricResult], warnings: list[str]) -> None:
    """Name every estimate or bound that is undefined (shown as null / '-')."""
    reasons = {
        "recall": "no actual positive was labeled (TP = FN = 0)",
        "f1": "recall is undefined",
        "fpr": "no actual negative was labeled (FP = TN = 0)",
    }
    for name, metric in metrics.items():
        if not math.isfinite(metric.estimate):
            warnings.append(
                f"the {name} estimate is undefined: {reasons.get(name, 'division by zero')}"
            )
        broken = [
            method
            for method, interval in metric.intervals.items()
            if not (np.isfinite(interval.lower) and np.isfinite(interval.upper))
        ]
        if broken:
            warnings.append(
                f"{name} interval(s) {', '.join(broken)} are undefined for these counts"
            )


def _interval_note_warnings(
    metrics: dict[str, MetricResult], matrix: ConfusionMatrix, warnings: list[str]
) -> None:
    """Each interval's note as ``"<metric> <method>: <note>"``, so ``--json`` users see it.

    Parts of a note that a general warning already says are left out: the Haldane-Anscombe
    correction and the bound moved to a boundary estimate (the zero-cell warning of
    :func:`_cell_warnings`), and anything about an interval or estimate that
    :func:`_undefined_value_warnings` already names as undefined. Identical lines appear
    once.
    """
    said_generally = {closed_form.HALDANE_NOTE, closed_form.BOUNDARY_NOTE}
    seen = set(warnings)
    for name, metric in metrics.items():
        estimate_undefined = not math.isfinite(metric.estimate)
        for method, interval in metric.intervals.items():
            if not interval.note:
                continue
            if not (np.isfinite(interval.lower) and np.isfinite(interval.upper)):
                continue  # named by the undefined-interval warning
            parts = [
                part
                for part in interval.note.split("; ")
                if not (matrix.has_zero_cell and part in said_generally)
                and not (estimate_undefined and "undefined" in part)
            ]
            if not parts:
                continue
            line = f"{name} {method}: {'; '.join(parts)}"
            if line not in seen:
                seen.add(line)
                warnings.append(line)
