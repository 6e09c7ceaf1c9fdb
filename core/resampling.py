"""Vectorized bootstrap (Algorithm 1) and Bayesian Monte-Carlo (Algorithm 2) replicates.

Every function here draws ``Q`` replicates of precision, recall and F1 with a handful of
array operations per stratum, never a Python loop per replicate (methods §5, 1.4). The
stratum counts ``TP*`` and ``FN*`` are drawn by inverse CDF from a table of their exact
distribution (binomial for the bootstrap, beta-binomial for Algorithm 2), one table per
distinct round, because numpy's ``rng.binomial`` costs about 100 ns a draw for the counts
met here while a table lookup costs a fraction of that; numpy's samplers remain the
fallback for very large strata. Counts may be scalars, giving arrays of shape ``(Q,)``, or arrays
of shape ``(A,)`` (one labeled round per row, as in the coverage experiment of methods §10),
giving arrays of shape ``(A, Q)``. Rows are processed in chunks of about
:data:`CHUNK_ELEMENTS` draws so memory stays bounded and a :class:`~core.progress.TaskControl`
can report progress and cancel between chunks.

Undefined replicates
--------------------
Recall ``1/(1 + pi0*/(k*pi1*))`` is ``0/0`` when a replicate holds no actual positive at all
(``TP* = FN* = 0``). Such a replicate carries no information about recall, so it is stored
as NaN, left out of the recall and F1 percentiles (the interval is the percentile of the
replicates where recall exists, i.e. conditional on at least one labeled positive) and
counted in :attr:`Replicates.undefined_recall` so callers can report it. ``TP* = 0`` with
``FN* > 0`` is *not* undefined: recall* = 0 and F1* = 0. Only the random-design bootstrap
can leave precision undefined (no predicted positive resampled); it is handled the same way.
If every replicate of a row is undefined, that row's interval is NaN and the caller must
say so (never a silent NaN).

Random design
-------------
For a plain random sample (``design="random"``) ``k`` is estimated, not known: the bootstrap
resamples the whole sample, the posterior draws come from a Dirichlet over the four cells,
and the predictive recall is that of a future round with the same number of actual
positives (see :func:`bootstrap`, :func:`posterior_draws`, :func:`bayes_predictive` and
:mod:`core.bayes`).

Percentiles use numpy's default linear interpolation between order statistics.

References
----------
* Shang et al. 2023: Algorithm 1 (stratified bootstrap), Algorithm 2 (Monte Carlo predictive
  interval).
* Efron and Tibshirani 1993 (percentile bootstrap).
Full entries: docs/methods.md, References.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from core import progress, validation
from core.confusion import f_beta, recall_from_rates
from core.errors import InputError

#: Draws per chunk (per array). About 4 MB per float64 array; a few arrays live at once.
CHUNK_ELEMENTS = 1 << 19

#: Largest stratum for which draws use an inverse-CDF table (see :func:`_draw_from_table`).
TABLE_LIMIT = 1 << 20
#: Most table entries built per chunk; beyond it numpy's samplers are used directly.
TABLE_BUDGET = 1 << 22

METRICS = ("precision", "recall", "f1")
#: Posterior parameters of the four cells, in the paper's order.
CELLS = ("z11", "z01", "z10", "z00")


@dataclass(frozen=True, slots=True, kw_only=True)
class Replicates:
    """Monte-Carlo replicates of one (or ``A``) labeled rounds.

    Attributes
    ----------
    kind : str
        ``"bootstrap"`` (Algorithm 1), ``"bayes_mc"`` (Algorithm 2, predictive) or
        ``"posterior"`` (draws of the true values from the posterior).
    precision, recall : numpy.ndarray
        Replicates, shape ``(Q,)`` or ``(A, Q)``; NaN marks an undefined replicate.
    f1 : numpy.ndarray or None
        F1 of each replicate (NaN where recall is undefined); ``None`` when not requested.
    undefined_precision, undefined_recall : numpy.ndarray or int
        Number of undefined replicates per row (an int for scalar input).
    """

    kind: str
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray | None
    undefined_precision: np.ndarray | int
    undefined_recall: np.ndarray | int

    @property
    def replicates(self) -> int:
        return int(self.precision.shape[-1])

    def draws(self, metric: str) -> np.ndarray:
        if metric not in METRICS:
            raise InputError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
        values = getattr(self, metric)
        if values is None:
            raise InputError(f"{metric} replicates were not computed")
        return values

    def interval(self, metric: str, confidence: float = 0.95):
        """Equal-tailed percentile interval ``((1-c)/2, 1-(1-c)/2)`` of ``metric``.

        Returns ``(lower, upper)``: floats for scalar input, arrays of shape ``(A,)`` for a
        batch. Undefined replicates are left out; a row without any defined replicate
        gives NaN bounds.
        """
        return percentile_interval(self.draws(metric), confidence)


def as_generator(seed=None) -> np.random.Generator:
    """A numpy ``Generator`` from a seed (whole number >= 0), ``None`` or a ``Generator``."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    return np.random.default_rng(validation.seed(seed))


def percentile_interval(draws: np.ndarray, confidence: float = 0.95):
    """Percentile interval along the last axis, NaN-aware (undefined replicates left out).

    Parameters
    ----------
    draws : numpy.ndarray
        Shape ``(Q,)`` or ``(A, Q)``.
    confidence : float
        Level ``c``; the bounds are the ``(1-c)/2`` and ``1-(1-c)/2`` percentiles.
    """
    tail = (1.0 - validation.confidence(confidence)) / 2.0
    probabilities = np.array([tail, 1.0 - tail])
    draws = np.asarray(draws, dtype=float)
    # One sort serves both bounds and the NaN handling; numpy's vectorized sort is several
    # times faster here than np.quantile's partition on (A, Q) arrays.
    lower, upper = _quantiles_ignoring_nan(draws, np.isnan(draws), probabilities)
    if draws.ndim == 1:
        return float(lower), float(upper)
    return lower, upper


def _quantiles_ignoring_nan(draws, missing, probabilities):
    """Linear-interpolation quantiles of the non-NaN values of each row (vectorized)."""
    ordered = np.sort(np.atleast_2d(draws), axis=-1)  # NaN sorts last
    valid = (~np.atleast_2d(missing)).sum(axis=-1)
    results = []
    for probability in probabilities:
        position = np.maximum(valid - 1, 0) * probability
        below = np.floor(position).astype(np.int64)
        above = np.minimum(below + 1, np.maximum(valid - 1, 0))
        fraction = position - below
        low_value = np.take_along_axis(ordered, below[:, None], axis=-1)[:, 0]
        high_value = np.take_along_axis(ordered, above[:, None], axis=-1)[:, 0]
        value = low_value + fraction * (high_value - low_value)
        results.append(np.where(valid > 0, value, np.nan))
    if draws.ndim == 1:
        return results[0][0], results[1][0]
    return results[0], results[1]


# --- input handling ------------------------------------------------------------------------


def _as_count_array(name: str, value) -> np.ndarray:
    array = np.asarray(value)
    if array.ndim > 1:
        raise InputError(
            f"{name} must be a number or a 1-D array of counts, got shape {array.shape}"
        )
    if array.dtype.kind not in "iuf" or not np.all(np.isfinite(array)):
        raise InputError(f"{name} must hold whole numbers >= 0, got {value!r}")
    if np.any(array < 0) or np.any(array != np.floor(array)):
        bad = array[(array < 0) | (array != np.floor(array))].ravel()[0]
        raise InputError(f"{name} must be a whole number >= 0, got {bad!r}")
    return array.astype(np.int64)


def _as_positive_array(name: str, value) -> np.ndarray:
    array = np.asarray(value, dtype=float)
    if array.ndim > 1 or not np.all(np.isfinite(array)) or np.any(array <= 0):
        raise InputError(f"{name} must be a number > 0 (or a 1-D array of them), got {value!r}")
    return array


def _broadcast_rows(**arrays) -> tuple[dict[str, np.ndarray], bool]:
    """Broadcast scalars and ``(A,)`` arrays to shape ``(A,)``; report whether all were scalar."""
    scalar = all(np.ndim(array) == 0 for array in arrays.values())
    try:
        shaped = np.broadcast_arrays(*(np.atleast_1d(array) for array in arrays.values()))
    except ValueError:
        shapes = {name: np.shape(array) for name, array in arrays.items()}
        raise InputError(f"count arrays must have one common length, got {shapes}") from None
    return dict(zip(arrays, shaped, strict=True)), scalar


def _replicate_count(replicates) -> int:
    return validation.whole_at_least("replicates", replicates, 1, validation.MAX_REPLICATES)


def _row_chunks(rows: int, replicates: int):
    size = max(1, CHUNK_ELEMENTS // max(1, replicates))
    for start in range(0, rows, size):
        yield start, min(rows, start + size)


def _metrics(pi1, pi0, k, include_f1: bool):
    """Precision, recall (NaN when undefined) and F1 from replicate rates (Eq 2)."""
    recall = recall_from_rates(pi1, pi0, k)
    f1 = f_beta(pi1, recall) if include_f1 else None
    return pi1, recall, f1


class _Collector:
    """Preallocated ``(A, Q)`` outputs filled chunk by chunk."""

    def __init__(self, rows: int, replicates: int, include_f1: bool) -> None:
        shape = (rows, replicates)
        self.precision = np.empty(shape)
        self.recall = np.empty(shape)
        self.f1 = np.empty(shape) if include_f1 else None

    def store(self, start: int, stop: int, precision, recall, f1) -> None:
        self.precision[start:stop] = precision
        self.recall[start:stop] = recall
        if self.f1 is not None:
            self.f1[start:stop] = f1

    def result(self, kind: str, scalar: bool) -> Replicates:
        undefined_precision = np.isnan(self.precision).sum(axis=-1)
        undefined_recall = np.isnan(self.recall).sum(axis=-1)
        precision, recall, f1 = self.precision, self.recall, self.f1
        if scalar:
            precision, recall = precision[0], recall[0]
            f1 = None if f1 is None else f1[0]
            undefined_precision = int(undefined_precision[0])
            undefined_recall = int(undefined_recall[0])
        return Replicates(
            kind=kind,
            precision=precision,
            recall=recall,
            f1=f1,
            undefined_precision=undefined_precision,
            undefined_recall=undefined_recall,
        )


def _draw_from_table(log_pmf: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws from the distribution on ``0..n`` with log-probabilities ``log_pmf``.

    Inverse-CDF sampling: one uniform per draw and a binary search in the cumulative
    table. For a single round with fixed ``(n, p)`` this is several times faster than
    ``rng.binomial`` (whose cost grows with ``n*min(p, 1-p)``) and samples the same
    distribution up to rounding of the table (~1e-16).
    """
    pmf = np.exp(log_pmf - log_pmf.max())
    cdf = np.cumsum(pmf)
    cdf /= cdf[-1]
    return np.searchsorted(cdf, rng.random(size), side="right").clip(max=len(cdf) - 1)


def _binomial_log_pmf(n: int, p: float, _unused: float = 0.0) -> np.ndarray:
    successes = np.arange(n + 1)
    if p <= 0.0 or p >= 1.0:
        # Degenerate: all mass on 0 or on n (log(0) would give 0 * -inf = NaN below).
        log_pmf = np.full(n + 1, -np.inf)
        log_pmf[0 if p <= 0.0 else n] = 0.0
        return log_pmf
    from scipy.special import gammaln  # deferred: ~0.25 s that the app's start need not pay

    return (
        gammaln(n + 1.0)
        - gammaln(successes + 1.0)
        - gammaln(n - successes + 1.0)
        + successes * np.log(p)
        + (n - successes) * np.log1p(-p)
    )


def _beta_binomial_log_pmf(n: int, a: float, b: float) -> np.ndarray:
    from scipy.special import betaln, gammaln  # deferred, as in _binomial_log_pmf

    successes = np.arange(n + 1)
    return (
        gammaln(n + 1.0)
        - gammaln(successes + 1.0)
        - gammaln(n - successes + 1.0)
        + betaln(successes + a, n - successes + b)
        - betaln(a, b)
    )


def _grouped_table_draws(trials, first, second, replicates, rng, log_pmf, fallback):
    """``replicates`` draws per row from ``log_pmf(n, first, second)`` on ``0..n``.

    Rows with identical parameters share one inverse-CDF table: in the coverage experiment
    a thousand rounds hold only a few dozen distinct counts per stratum, so a handful of
    tables serve all ``A x Q`` draws. When the tables would be too large (huge strata or
    many distinct rows) ``fallback()`` draws the same distribution with numpy directly.
    """
    keys = np.stack([np.asarray(trials, dtype=float), first, second], axis=1)
    unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    if unique[:, 0].max() > TABLE_LIMIT or (unique[:, 0] + 1).sum() > TABLE_BUDGET:
        return fallback()
    draws = np.empty((len(keys), replicates), dtype=np.int64)
    for index, (n, a, b) in enumerate(unique):
        rows = np.flatnonzero(inverse == index)
        draws[rows] = _draw_from_table(log_pmf(int(n), a, b), (len(rows), replicates), rng)
    return draws


def _one_round_binomial(n: int, p: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """``Bin(n, p)`` draws for one round by the table sampler."""
    return _grouped_table_draws(
        np.array([n]), np.array([p]), np.zeros(1), size, rng, _binomial_log_pmf,
        lambda: rng.binomial(n, p, size=(1, size)),
    )[0]  # fmt: skip


# --- Algorithm 1: bootstrap ----------------------------------------------------------------


def bootstrap(
    tp,
    fp,
    fn,
    tn,
    k=None,
    *,
    replicates: int = 10_000,
    seed=None,
    design: str = "stratified",
    include_f1: bool = True,
    control: progress.TaskControl | None = None,
    fpc: tuple[float, float] = (1.0, 1.0),
) -> Replicates:
    """Bootstrap replicates of precision, recall and F1 (Algorithm 1, methods §5).

    Stratified design: resampling the labeled items of each stratum with replacement is
    drawing ``TP* ~ Bin(n1, pi1^)`` and ``FN* ~ Bin(n0, pi0^)``; recall* follows from Eq 2
    with the known ``k``.

    Random design (``design="random"``, ``k`` ignored): the whole sample of ``v`` items is
    resampled, so the strata sizes vary too: ``n1* ~ Bin(v, n1/v)``, then ``TP*`` and
    ``FN*`` as above inside the resampled strata, and ``k* = n1*/n0*``; recall* is then
    ``TP*/(TP* + FN*)``. This is the ordinary nonparametric bootstrap of a simple random
    sample, written as sequential binomials (equivalent to the multinomial).

    Parameters
    ----------
    tp, fp, fn, tn : int or array of shape (A,)
        Labeled counts ``n11, n01, n10, n00``.
    k : float or array of shape (A,)
        Imbalance ratio ``N1/N0`` (stratified design only).
    replicates : int
        ``Q``.
    seed : int, numpy.random.Generator or None
        Source of randomness.
    design : {"stratified", "random"}
    include_f1 : bool
        Skip F1 (saves time in the coverage experiment).
    control : TaskControl, optional
        Progress and cancel between chunks of rows.
    fpc : (float, float)
        Finite population correction factors ``f = (N - n)/(N - 1)`` of the two strata
        (stratified design; 1: none). Each resampled rate is pulled towards the labeled
        one, ``pi^ + sqrt(f) (pi* - pi^)``, so that its variance is the without-replacement
        one, ``f pi(1 - pi)/n`` (the rescaling bootstrap of Rao and Wu 1988): a stratum
        labeled in full has no spread left.

    Returns
    -------
    Replicates
        Undefined replicates (no actual positive resampled) are NaN and counted; see the
        module docstring.
    """
    if design not in ("stratified", "random"):
        raise InputError(f"design must be 'stratified' or 'random', got {design!r}")
    rng = as_generator(seed)
    q = _replicate_count(replicates)
    factors = [validation.non_negative("finite population correction", f) for f in fpc]
    if any(f > 1 for f in factors):
        raise InputError(f"finite population correction factors are at most 1, got {fpc!r}")
    shrink_pos, shrink_neg = (math.sqrt(f) for f in factors)
    if design == "random" and (shrink_pos, shrink_neg) != (1.0, 1.0):
        raise InputError("the finite population correction needs the stratified design")
    counts = {
        name: _as_count_array(name, value)
        for name, value in zip(("tp", "fp", "fn", "tn"), (tp, fp, fn, tn), strict=True)
    }
    if design == "stratified":
        if k is None:
            raise InputError("the stratified bootstrap needs k = N1/N0")
        counts["k"] = _as_positive_array("k", k)
    rows, scalar = _broadcast_rows(**counts)
    n1 = rows["tp"] + rows["fp"]
    n0 = rows["fn"] + rows["tn"]
    if np.any(n1 == 0) or np.any(n0 == 0):
        raise InputError("each stratum needs at least one labeled item (TP + FP > 0, FN + TN > 0)")
    pi1_hat, pi0_hat = rows["tp"] / n1, rows["fn"] / n0
    total = n1 + n0
    collector = _Collector(len(n1), q, include_f1)
    for start, stop in _row_chunks(len(n1), q):
        progress.step(control, start, len(n1))
        part = slice(start, stop)
        size = (stop - start, q)
        if design == "stratified":
            n1_star = n1[part, None]
            n0_star = n0[part, None]
            k_star = rows["k"][part, None]
        else:
            n1_star = rng.binomial(total[part, None], (n1 / total)[part, None], size=size)
            n0_star = total[part, None] - n1_star
        if design == "stratified":
            draws = []
            for trials, rate in ((n1[part], pi1_hat[part]), (n0[part], pi0_hat[part])):
                draws.append(
                    _grouped_table_draws(
                        trials, rate, np.zeros(len(trials)), q, rng, _binomial_log_pmf,
                        lambda trials=trials, rate=rate, size=size: rng.binomial(
                            trials[:, None], rate[:, None], size=size
                        ),
                    )
                )  # fmt: skip
            tp_star, fn_star = draws
        else:
            tp_star = rng.binomial(n1_star, pi1_hat[part, None], size=size)
            fn_star = rng.binomial(n0_star, pi0_hat[part, None], size=size)
        with np.errstate(divide="ignore", invalid="ignore"):
            pi1_star = tp_star / n1_star
            pi0_star = fn_star / n0_star
            if shrink_pos != 1.0:
                hat = pi1_hat[part, None]
                pi1_star = hat + shrink_pos * (pi1_star - hat)
            if shrink_neg != 1.0:
                hat = pi0_hat[part, None]
                pi0_star = hat + shrink_neg * (pi0_star - hat)
            if design == "random":
                # recall* = TP*/(TP* + FN*) directly: k* = n1*/n0* is 0 or inf at the edges.
                recall = tp_star / (tp_star + fn_star)
                f1 = f_beta(pi1_star, recall) if include_f1 else None
                precision = pi1_star
            else:
                precision, recall, f1 = _metrics(pi1_star, pi0_star, k_star, include_f1)
        collector.store(start, stop, precision, recall, f1)
    progress.step(control, len(n1), len(n1))
    return collector.result("bootstrap", scalar)


# --- Algorithm 2 and posterior draws -------------------------------------------------------


def _posterior_rows(z11, z01, z10, z00, k, design: str = "stratified"):
    if design not in ("stratified", "random"):
        raise InputError(f"design must be 'stratified' or 'random', got {design!r}")
    params = {}
    for name, value in (("z11", z11), ("z01", z01), ("z10", z10), ("z00", z00)):
        params[name] = _as_positive_array(name, value)
    if design == "stratified":
        if k is None:
            raise InputError("the stratified design needs k = N1/N0")
        params["k"] = _as_positive_array("k", k)
    return _broadcast_rows(**params)


def _dirichlet_rates(rows, part, size, rng):
    """Cell probabilities ``(p11, p01, p10, p00)`` from ``Dirichlet(z)`` via Gamma draws."""
    gammas = [rng.standard_gamma(rows[name][part, None], size=size) for name in CELLS]
    total = gammas[0] + gammas[1] + gammas[2] + gammas[3]
    return [gamma / total for gamma in gammas]


def bayes_predictive(
    z11,
    z01,
    z10,
    z00,
    k,
    n1_future,
    n0_future,
    *,
    replicates: int = 10_000,
    seed=None,
    include_f1: bool = True,
    control: progress.TaskControl | None = None,
    design: str = "stratified",
    positives_future: int | None = None,
) -> Replicates:
    """Predictive replicates of a future round's estimates (Algorithm 2, methods §5).

    ``pi1~ ~ Beta(z11, z01)``, ``pi0~ ~ Beta(z10, z00)``, then ``TP* ~ Bin(n1', pi1~)``,
    ``FN* ~ Bin(n0', pi0~)`` and precision/recall/F1 of ``(TP*, n1'-TP*, FN*, n0'-FN*)``
    with ``k``. The percentile interval is the Monte-Carlo counterpart of Eq 6 and Eq 7.

    The two steps are collapsed into their exact marginal: ``TP*`` is beta-binomial
    ``BB(n1', z11, z01)`` and ``FN*`` is ``BB(n0', z10, z00)``, independent, drawn by inverse
    CDF. Only ``TP*`` and ``FN*`` enter the metrics, so the replicates have the same
    distribution as the two-step draws, at a fraction of the cost (the two steps are still
    used when the tables would be too large).

    Random design (``design="random"``, ``k`` ignored; see :mod:`core.bayes`): ``z`` is a
    Dirichlet posterior over the four cells. Precision* is ``BB(n1', z11, z01)/n1'`` as
    above; recall* is ``BB(m', z11, z10)/m'`` for a future round with
    ``m' = positives_future`` actual positives (the Monte-Carlo form of
    :func:`core.bayes.bayes_recall_interval_random`); F1, which needs all cells jointly, is
    taken from a future random sample of ``v = n1' + n0'`` items: cell probabilities from
    ``Dirichlet(z)``, then multinomial counts, ``F1* = 2TP*/(2TP* + FP* + FN*)`` (NaN, left
    out, when ``TP* = FN* = 0``).

    Parameters
    ----------
    z11, z01, z10, z00 : float or array of shape (A,)
        Posterior Beta parameters ``z = alpha + counts`` (all > 0).
    k : float or array of shape (A,)
        Ignored (may be ``None``) in the random design.
    n1_future, n0_future : int
        Sizes of the future round (``n1'``, ``n0'``).
    replicates, seed, include_f1, control
        As in :func:`bootstrap`.
    design : {"stratified", "random"}
    positives_future : int
        ``m'``, actual positives of the future round; required for the random design.
    """
    rng = as_generator(seed)
    q = _replicate_count(replicates)
    n1_future = validation.whole_at_least("n1'", n1_future, 1)
    n0_future = validation.whole_at_least("n0'", n0_future, 1)
    rows, scalar = _posterior_rows(z11, z01, z10, z00, k, design)
    if design == "random":
        if positives_future is None:
            raise InputError("the random design needs positives_future (m' = TP + FN)")
        positives_future = validation.count("m' (actual positives)", positives_future)
    count = len(rows["z11"])
    collector = _Collector(count, q, include_f1)
    strata = [(n1_future, "z11", "z01")]
    strata.append(
        (positives_future, "z11", "z10") if design == "random" else (n0_future, "z10", "z00")
    )
    for start, stop in _row_chunks(count, q):
        progress.step(control, start, count)
        part = slice(start, stop)
        size = (stop - start, q)
        draws = []
        for trials, a, b in strata:
            first, second = rows[a][part], rows[b][part]
            draws.append(
                _grouped_table_draws(
                    np.full(len(first), trials), first, second, q, rng, _beta_binomial_log_pmf,
                    # The literal two steps: a rate from the posterior, then a binomial.
                    lambda trials=trials, first=first, second=second, size=size: rng.binomial(
                        trials, rng.beta(first[:, None], second[:, None], size=size)
                    ),
                )
            )  # fmt: skip
        if design == "random":
            tp_star, tp_among_positives = draws
            precision = tp_star / n1_future
            with np.errstate(divide="ignore", invalid="ignore"):
                recall = tp_among_positives / positives_future  # all NaN when m' = 0
            f1 = (
                _random_future_f1(rows, part, size, n1_future + n0_future, rng)
                if include_f1
                else None
            )
        else:
            tp_star, fn_star = draws
            precision, recall, f1 = _metrics(
                tp_star / n1_future, fn_star / n0_future, rows["k"][part, None], include_f1
            )
        collector.store(start, stop, precision, recall, f1)
    progress.step(control, count, count)
    return collector.result("bayes_mc", scalar)


def _random_future_f1(rows, part, size, total: int, rng: np.random.Generator) -> np.ndarray:
    """F1 of a future random sample of ``total`` items, cells ~ DirMult(total, z)."""
    p11, p01, p10, _ = _dirichlet_rates(rows, part, size, rng)
    # Multinomial counts as sequential binomials (conditional probabilities clipped to
    # [0, 1] against rounding).
    tp = rng.binomial(total, np.clip(p11, 0.0, 1.0))
    rest = 1.0 - p11
    with np.errstate(divide="ignore", invalid="ignore"):
        fp = rng.binomial(total - tp, np.clip(np.nan_to_num(p01 / rest), 0.0, 1.0))
        fn = rng.binomial(total - tp - fp, np.clip(np.nan_to_num(p10 / (rest - p01)), 0.0, 1.0))
        f1 = 2.0 * tp / (2.0 * tp + fp + fn)
    return np.where(tp + fn == 0, np.nan, np.nan_to_num(f1))


def finite_population_posterior_draws(
    z11, z01, z10, z00, matrix, strata, *, replicates: int = 10_000, seed=None
) -> Replicates:
    """Draws of the two lists' own precision, recall and F1 (stratified design, a sample
    drawn without replacement from lists of known sizes ``strata = (N1, N0)``).

    ``pi1 ~ Beta(z11, z01)`` and ``pi0 ~ Beta(z10, z00)`` as in :func:`posterior_draws`;
    each list then holds ``M = labeled positives + Binomial(N - n, pi)`` positives
    (:func:`core.bayes.finite_population_rates`, methods "Finite population correction"),
    and its own values are ``M1/N1``, ``M1/(M1 + M0)`` and ``2 M1/(N1 + M1 + M0)``. A list
    labeled in full keeps what its labels showed; with both labeled in full the draws are
    the round's own values. Recall is undefined (NaN) when a draw holds no positive at all.
    """
    from core.bayes import finite_population_rates

    rng = as_generator(seed)
    q = _replicate_count(replicates)
    pi1 = rng.beta(z11, z01, size=q)
    pi0 = rng.beta(z10, z00, size=q)
    own_pos, own_neg = finite_population_rates(pi1, pi0, matrix, strata, rng)
    flagged, unflagged = strata
    found_pos, missed = own_pos * flagged, own_neg * unflagged  # M1 and M0
    with np.errstate(divide="ignore", invalid="ignore"):
        recall = found_pos / (found_pos + missed)
        f1 = 2.0 * found_pos / (flagged + found_pos + missed)
    recall = np.where(found_pos + missed > 0, recall, np.nan)
    f1 = np.where(np.isnan(recall), np.nan, f1)
    return Replicates(
        kind="posterior",
        precision=own_pos,
        recall=recall,
        f1=f1,
        undefined_precision=0,
        undefined_recall=int(np.isnan(recall).sum()),
    )


def posterior_draws(
    z11,
    z01,
    z10,
    z00,
    k,
    *,
    replicates: int = 10_000,
    seed=None,
    include_f1: bool = True,
    control: progress.TaskControl | None = None,
    design: str = "stratified",
) -> Replicates:
    """Draws of the true precision, recall and F1 from the posterior (methods §5, last line).

    Algorithm 2 without the binomial step: ``pi1~ ~ Beta(z11, z01)``,
    ``pi0~ ~ Beta(z10, z00)``, recall by Eq 2. Their percentiles are credible intervals of
    the true values, narrower than the predictive ones.

    Random design (``design="random"``, ``k`` ignored): cell probabilities from
    ``Dirichlet(z)`` (normalized Gamma draws), precision ``p11/(p11+p01)`` and recall
    ``p11/(p11+p10)`` jointly, so precision is ``Beta(z11, z01)``, recall ``Beta(z11, z10)``
    and F1 gets their dependence right (see :mod:`core.bayes`).
    """
    rng = as_generator(seed)
    q = _replicate_count(replicates)
    rows, scalar = _posterior_rows(z11, z01, z10, z00, k, design)
    count = len(rows["z11"])
    collector = _Collector(count, q, include_f1)
    for start, stop in _row_chunks(count, q):
        progress.step(control, start, count)
        part = slice(start, stop)
        size = (stop - start, q)
        if design == "random":
            p11, p01, p10, _ = _dirichlet_rates(rows, part, size, rng)
            with np.errstate(divide="ignore", invalid="ignore"):
                precision, recall = p11 / (p11 + p01), p11 / (p11 + p10)
                f1 = f_beta(precision, recall) if include_f1 else None
        else:
            pi1 = rng.beta(rows["z11"][part, None], rows["z01"][part, None], size=size)
            pi0 = rng.beta(rows["z10"][part, None], rows["z00"][part, None], size=size)
            # A Beta draw can underflow to exactly 0 for tiny parameters; Eq 2 then gives
            # 0/0 -> NaN, which is counted as undefined like any other.
            precision, recall, f1 = _metrics(pi1, pi0, rows["k"][part, None], include_f1)
        collector.store(start, stop, precision, recall, f1)
    progress.step(control, count, count)
    return collector.result("posterior", scalar)


def expected_undefined_share(tp, fp, fn, tn) -> float:
    """Probability that a stratified bootstrap replicate has ``TP* = FN* = 0``.

    ``(1 - pi1^)^n1 * (1 - pi0^)^n0``; useful to explain a warning and in tests.
    """
    n1, n0 = tp + fp, fn + tn
    return math.prod(
        (1.0 - successes / trials) ** trials for successes, trials in ((tp, n1), (fn, n0))
    )
