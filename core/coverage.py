"""The coverage experiment of methods §10 (the paper's Section 4, Table 3).

For one setting ``(k, precision, recall, v, s)`` the design fixes ``n1, n0`` (Eq 1, integer
sizes) and the truth fixes ``pi1 = precision`` and ``pi0`` (Eq 9). Then ``A`` times:

1. draw a labeled round ``TP ~ Bin(n1, pi1)``, ``FN ~ Bin(n0, pi0)``;
2. build four intervals for precision and for recall:

   * ``wald`` (precision, Eq 3) / ``katz_log`` (recall, Eq 4), with the Haldane-Anscombe
     correction in rows with a zero cell, as :mod:`core.intervals` does;
   * ``bootstrap`` with ``Q`` replicates (Algorithm 1);
   * ``bayes``: the analytic predictive intervals Eq 6-8;
   * ``bayes_mc``: Algorithm 2 with ``Q`` replicates;

3. draw a second, independent round of the same design.

Frequentist intervals are checked against the truth, Bayesian (predictive) ones against
the second round's estimates. Coverage is the share of the ``A`` rounds whose interval
contains its target. A row whose interval or target is undefined (e.g. a second round with
``TP = FN = 0``) counts as not covered; :attr:`CoverageResult.undefined` says how many.

Prior: the Bayesian intervals use the paper's non-informative ``alpha = 0`` (methods §10), as
``evaluate`` does. It is improper whenever a drawn count is 0, which does happen in the
paper's grid (e.g. ``FP`` when ``n1 = 99`` and ``pi1 = 0.9``); only those rows use Jeffreys
(0.5 per cell) instead, and :attr:`CoverageResult.jeffreys_rows` counts them. Any other
prior can be given (``prior=``, ``prplanner coverage --prior``); the same row-by-row
fallback applies where it is improper.

Random streams: ``seed`` feeds a ``numpy.random.SeedSequence`` that is split into one stream
for the labeled rounds (first and second sample, drawn up front for all ``A`` rows) and one
for the bootstrap and Monte-Carlo replicates. The same seed therefore reproduces the same
rounds whatever the chunk size, and an independent implementation can draw identical
rounds from :func:`draw_rounds`.

References
----------
* Shang et al. 2023: Section 4 and Table 3 (coverage experiment).
Full entries: docs/methods.md, References.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from core import progress, resampling, validation
from core.batch_intervals import log_ratio_bounds
from core.bayes import Posterior, Prior, predictive_precision_sd, predictive_recall_terms
from core.confusion import (
    pi0_from_precision_recall,
    planning_rates,
    recall_from_rates,
    stratum_sizes,
)
from core.errors import InputError
from core.methods import method_label

PRECISION_KINDS = ("wald", "bootstrap", "bayes", "bayes_mc")
RECALL_KINDS = ("katz_log", "bootstrap", "bayes", "bayes_mc")

#: Rows per chunk are chosen so one chunk holds about this many replicate draws.
CHUNK_DRAWS = 1 << 19

#: Fewer expected items than this in a cell of the design makes the normal
#: approximations (and the coverage figures) unreliable; a warning says so.
MIN_EXPECTED_CELL = 10
#: A coverage this far below the nominal level is flagged (0.90 at 95 %).
COVERAGE_SHORTFALL = 0.05

#: The methods' names in the experiment's notes (core.methods, predictions marked).
_KIND_NAMES = {
    key: method_label(key) for key in ("wald", "katz_log", "bootstrap", "bayes", "bayes_mc")
}


@dataclass(frozen=True, slots=True, kw_only=True)
class CoverageSetting:
    """One setting of the experiment.

    Attributes
    ----------
    k : float
        Imbalance ratio ``N1/N0``.
    precision, recall : float
        True values, in (0, 1).
    v : int
        Items labeled per round.
    s : float
        Over-sampling ratio.
    """

    k: float
    precision: float
    recall: float
    v: int
    s: float

    def __post_init__(self) -> None:
        precision, _pi0, k = planning_rates(self.precision, self.recall, self.k)
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "precision", precision)
        object.__setattr__(self, "recall", validation.open_unit("recall", self.recall))
        object.__setattr__(self, "v", validation.whole_at_least("v", self.v, 2))
        object.__setattr__(self, "s", validation.oversampling("s", self.s))
        n1, n0 = self.sizes
        if n1 == 0 or n0 == 0:
            raise InputError(
                f"v = {self.v} with k = {self.k:g} and s = {self.s:g} leaves a stratum empty "
                f"(n1 = {n1}, n0 = {n0}); increase v"
            )

    @property
    def pi1(self) -> float:
        return self.precision

    @property
    def pi0(self) -> float:
        """``k*pi1*(1/recall - 1)`` (Eq 9)."""
        return float(pi0_from_precision_recall(self.precision, self.recall, self.k))

    @property
    def sizes(self) -> tuple[int, int]:
        """``(n1, n0)`` by Eq 1 with integer rounding (methods §2)."""
        return stratum_sizes(self.v, self.k, self.s)

    def to_dict(self) -> dict:
        return {
            "k": self.k,
            "precision": self.precision,
            "recall": self.recall,
            "v": self.v,
            "s": self.s,
        }

    def design_dict(self) -> dict[str, int]:
        """``{n_pos, n_neg}``: the items labeled per stratum (Eq 1, integer sizes)."""
        n1, n0 = self.sizes
        return {"n_pos": n1, "n_neg": n0}

    def expected_cells(self) -> dict[str, float]:
        """Expected ``TP, FP, FN, TN`` of one round of this design."""
        n1, n0 = self.sizes
        return {
            "TP": n1 * self.pi1,
            "FP": n1 * (1 - self.pi1),
            "FN": n0 * self.pi0,
            "TN": n0 * (1 - self.pi0),
        }

    def design_warnings(self) -> list[str]:
        """Cells with fewer than :data:`MIN_EXPECTED_CELL` expected items, in words."""
        n1, n0 = self.sizes
        meaning = {
            "TP": f"actual positives among the {n1:,} predicted positives",
            "FP": f"actual negatives among the {n1:,} predicted positives",
            "FN": f"actual positives among the {n0:,} predicted negatives",
            "TN": f"actual negatives among the {n0:,} predicted negatives",
        }
        return [
            f"only {expected:.3g} expected {cell} ({meaning[cell]}); with fewer than "
            f"{MIN_EXPECTED_CELL} the intervals are unreliable: increase v or change s"
            for cell, expected in self.expected_cells().items()
            if expected < MIN_EXPECTED_CELL
        ]


@dataclass(frozen=True, slots=True, kw_only=True)
class CoverageResult:
    """Coverages of one setting.

    Attributes
    ----------
    setting : CoverageSetting
    confidence : float
        Nominal level ``c``.
    reps : int
        ``A``, rounds simulated.
    replicates : int
        ``Q``, bootstrap and Monte-Carlo replicates per round.
    precision, recall : dict of str to float
        Coverage (a fraction) per interval kind: precision ``wald, bootstrap, bayes,
        bayes_mc``; recall ``katz_log, bootstrap, bayes, bayes_mc``.
    undefined : dict of str to int
        Per ``"metric/kind"``, rows counted as not covered because the interval or its
        target was undefined.
    jeffreys_rows : int
        Rows whose Bayesian intervals used Jeffreys because the chosen prior was improper.
    prior : Prior
        The prior chosen for the Bayesian intervals (before any Jeffreys substitution).
    seconds : float
        Wall-clock time.
    """

    setting: CoverageSetting
    confidence: float
    reps: int
    replicates: int
    precision: dict[str, float]
    recall: dict[str, float]
    undefined: dict[str, int]
    jeffreys_rows: int
    prior: Prior
    seconds: float

    def coverage_dict(self) -> dict:
        return {"precision": dict(self.precision), "recall": dict(self.recall)}

    @property
    def warnings(self) -> list[str]:
        """Sparse design cells, then every coverage more than
        :data:`COVERAGE_SHORTFALL` below the nominal level (naming the method)."""
        found = self.setting.design_warnings()
        floor = self.confidence - COVERAGE_SHORTFALL
        for metric, values in (("precision", self.precision), ("recall", self.recall)):
            for kind, value in values.items():
                if value is not None and np.isfinite(value) and value < floor:
                    found.append(
                        f"{metric}: the {_KIND_NAMES.get(kind, kind)} interval covers "
                        f"{value:.1%}, below {floor:.0%} (nominal {self.confidence:.0%})"
                    )
        return found

    def to_dict(self) -> dict:
        """The ``prplanner coverage --json`` document (its JSON contract).

        Beyond the contract: ``design: {n_pos, n_neg}``, ``warnings`` (see
        :attr:`warnings`), ``prior`` and ``jeffreys_rows``.
        """
        return {
            "coverage": self.coverage_dict(),
            "reps": self.reps,
            "replicates": self.replicates,
            "seconds": self.seconds,
            "design": self.setting.design_dict(),
            "warnings": self.warnings,
            **self.prior_dict(),
        }

    def prior_dict(self) -> dict:
        """Beyond the contract keys: the prior and how many rows fell back to Jeffreys."""
        return {"prior": list(self.prior.as_tuple()), "jeffreys_rows": self.jeffreys_rows}

    def to_rows(self) -> list[tuple[str, str, float]]:
        """``(metric, kind, coverage)`` rows."""
        return [
            (metric, kind, value)
            for metric, values in (("precision", self.precision), ("recall", self.recall))
            for kind, value in values.items()
        ]


@dataclass(frozen=True, slots=True, kw_only=True)
class GridResult:
    """Coverages of several settings (the paper's Table 3 with :func:`paper_grid`).

    Attributes
    ----------
    rows : tuple of CoverageResult
    reps, replicates : int
    confidence : float
    seconds : float
        Wall-clock time of the whole grid.
    """

    rows: tuple[CoverageResult, ...]
    reps: int
    replicates: int
    confidence: float
    seconds: float

    def to_dict(self) -> dict:
        """The ``prplanner coverage --paper-grid --json`` document (its JSON contract)."""
        return {
            "rows": [
                {
                    **row.setting.to_dict(),
                    "coverage": row.coverage_dict(),
                    "design": row.setting.design_dict(),
                    "warnings": row.warnings,
                    **row.prior_dict(),
                }
                for row in self.rows
            ],
            "seconds": self.seconds,
        }


def paper_grid() -> tuple[CoverageSetting, ...]:
    """The twelve settings of the paper's Table 3 (methods §10).

    ``k in {1/20, 1/100}``, precision 0.9, recall in {0.7, 0.9}, ``s in {1, 2, 5}``,
    ``v = 5000`` for ``k = 1/20`` and ``10000`` for ``k = 1/100``.
    """
    return tuple(
        CoverageSetting(k=k, precision=0.9, recall=recall, v=v, s=s)
        for k, v in ((1 / 20, 5000), (1 / 100, 10000))
        for recall in (0.7, 0.9)
        for s in (1.0, 2.0, 5.0)
    )


def seed_streams(seed=None) -> tuple[np.random.Generator, np.random.Generator]:
    """``(rounds, replicates)`` generators split from one seed (see the module docstring)."""
    if isinstance(seed, np.random.SeedSequence):
        sequence = seed
    else:
        sequence = np.random.SeedSequence(None if seed is None else validation.seed(seed))
    rounds, replicates = sequence.spawn(2)
    return np.random.default_rng(rounds), np.random.default_rng(replicates)


def draw_rounds(setting: CoverageSetting, reps: int, rng: np.random.Generator):
    """The ``A`` first and second labeled rounds: ``(tp, fn, tp2, fn2)``, each shape ``(A,)``.

    Drawn in this order, all at once, so the rounds do not depend on chunking.
    """
    n1, n0 = setting.sizes
    tp = rng.binomial(n1, setting.pi1, size=reps)
    fn = rng.binomial(n0, setting.pi0, size=reps)
    tp2 = rng.binomial(n1, setting.pi1, size=reps)
    fn2 = rng.binomial(n0, setting.pi0, size=reps)
    return tp, fn, tp2, fn2


def wald_precision_bounds(tp, n1, z):
    """Vectorized Eq 3, clipped to [0, 1] like :func:`core.intervals.wald_precision`."""
    p = tp / n1
    half = z * np.sqrt(p * (1 - p) / n1)
    return np.maximum(p - half, 0.0), np.minimum(p + half, 1.0)


def katz_recall_bounds(tp, fp, fn, tn, k, z):
    """Vectorized Eq 4 with the Haldane-Anscombe correction in rows with a zero cell, and
    the boundary rule of :mod:`core.intervals` (the bound reaches a plain estimate of 0 or 1)."""
    tp, fp, fn, tn = (np.asarray(cell, dtype=float) for cell in (tp, fp, fn, tn))
    with np.errstate(divide="ignore", invalid="ignore"):
        plain = recall_from_rates(tp / (tp + fp), fn / (fn + tn), k)
    zero = (tp == 0) | (fp == 0) | (fn == 0) | (tn == 0)
    correction = np.where(zero, 0.5, 0.0)
    tp, fp, fn, tn = (cell + correction for cell in (tp, fp, fn, tn))
    n1, n0 = tp + fp, fn + tn
    pi1, pi0 = tp / n1, fn / n0
    x = pi0 / (k * pi1)
    se = np.sqrt((1 - pi1) / (n1 * pi1) + (1 - pi0) / (n0 * pi0))
    lower, upper = log_ratio_bounds(x, z * se)
    # fmin/fmax ignore NaN, so an undefined plain recall (TP = FN = 0) leaves the bounds alone.
    return np.fmin(lower, plain), np.fmax(upper, plain)


def _posterior_parameters(prior: Prior, tp, fp, fn, tn):
    """``z = alpha + counts`` per row; Jeffreys in rows where that is improper."""
    counts = np.stack([tp, fp, fn, tn]).astype(float)
    alpha = np.asarray(prior.as_tuple(), dtype=float)[:, None]
    z = alpha + counts
    improper = (z <= 0).any(axis=0)
    if improper.any():
        z[:, improper] = counts[:, improper] + 0.5
    return z, int(improper.sum())


def _covers(lower, upper, target):
    # NaN bounds or target compare False: an undefined interval does not cover.
    return (lower <= target) & (target <= upper)


def coverage_experiment(
    setting: CoverageSetting,
    *,
    reps: int = 1000,
    replicates: int = 1000,
    confidence: float = 0.95,
    seed=None,
    prior: Prior | None = None,
    control: progress.TaskControl | None = None,
    _progress_offset: tuple[int, int] | None = None,
) -> CoverageResult:
    """Coverage of the four interval kinds for one setting (methods §10).

    Parameters
    ----------
    setting : CoverageSetting
    reps : int
        ``A`` simulated rounds (>= 10).
    replicates : int
        ``Q`` bootstrap / Monte-Carlo replicates per round (>= 10).
    confidence : float
        Nominal level ``c``.
    seed : int, SeedSequence or None
        See the module docstring for how it is split.
    prior : Prior, optional
        Prior of the Bayesian intervals; default the paper's ``alpha = 0``, with Jeffreys in
        the rows where that is improper (see the module docstring).
    control : TaskControl, optional
        Progress (fraction of rounds done) and cancel between chunks.

    Returns
    -------
    CoverageResult
    """
    started = time.perf_counter()
    if not isinstance(setting, CoverageSetting):
        raise InputError(f"setting must be a CoverageSetting, got {type(setting).__name__}")
    reps = validation.whole_at_least("reps", reps, 10, validation.MAX_REPS)
    replicates = validation.whole_at_least("replicates", replicates, 10, validation.MAX_REPLICATES)
    confidence = validation.confidence(confidence)
    z = validation.z_value(confidence)
    prior = Prior.none() if prior is None else prior
    if not isinstance(prior, Prior):
        raise InputError(f"prior must be a Prior, got {type(prior).__name__}")
    rounds_rng, replicate_rng = seed_streams(seed)
    offset, total = _progress_offset or (0, reps)

    n1, n0 = setting.sizes
    k, pi1 = setting.k, setting.pi1
    true_recall = setting.recall
    tp_all, fn_all, tp2_all, fn2_all = draw_rounds(setting, reps, rounds_rng)
    covered = {f"precision/{kind}": 0 for kind in PRECISION_KINDS}
    covered.update({f"recall/{kind}": 0 for kind in RECALL_KINDS})
    undefined = dict.fromkeys(covered, 0)
    jeffreys_rows = 0

    def tally(key: str, bounds: tuple[np.ndarray, np.ndarray], target) -> None:
        nonlocal covered, undefined
        lower, upper = bounds
        covered[key] += int(_covers(lower, upper, target).sum())
        undefined[key] += int(
            (~(np.isfinite(lower) & np.isfinite(upper) & np.isfinite(target))).sum()
        )

    rows_per_chunk = max(1, CHUNK_DRAWS // replicates)
    for start in range(0, reps, rows_per_chunk):
        progress.step(control, offset + start, total)
        stop = min(reps, start + rows_per_chunk)
        tp, fn = tp_all[start:stop], fn_all[start:stop]
        fp, tn = n1 - tp, n0 - fn
        tp2, fn2 = tp2_all[start:stop], fn2_all[start:stop]
        with np.errstate(divide="ignore", invalid="ignore"):
            second_precision = tp2 / n1
            second_recall = np.where(
                (tp2 == 0) & (fn2 == 0), np.nan, recall_from_rates(tp2 / n1, fn2 / n0, k)
            )

            tally("precision/wald", wald_precision_bounds(tp, n1, z), pi1)
            tally("recall/katz_log", katz_recall_bounds(tp, fp, fn, tn, k, z), true_recall)

            boot = resampling.bootstrap(
                tp, fp, fn, tn, k, replicates=replicates, seed=replicate_rng, include_f1=False
            )
            tally("precision/bootstrap", boot.interval("precision", confidence), pi1)
            tally("recall/bootstrap", boot.interval("recall", confidence), true_recall)

            zz, substituted = _posterior_parameters(prior, tp, fp, fn, tn)
            jeffreys_rows += substituted
            posterior = Posterior(z11=zz[0], z01=zz[1], z10=zz[2], z00=zz[3])
            mean = posterior.mean_precision
            half = z * predictive_precision_sd(posterior, n1)
            tally(
                "precision/bayes",
                (np.maximum(mean - half, 0.0), np.minimum(mean + half, 1.0)),
                second_precision,
            )
            xb, sd = predictive_recall_terms(posterior, k, n1, n0)
            tally("recall/bayes", log_ratio_bounds(xb, z * sd), second_recall)

            z11, z01, z10, z00 = zz
            mc = resampling.bayes_predictive(
                z11, z01, z10, z00, k, n1, n0,
                replicates=replicates, seed=replicate_rng, include_f1=False,
            )  # fmt: skip
            tally("precision/bayes_mc", mc.interval("precision", confidence), second_precision)
            tally("recall/bayes_mc", mc.interval("recall", confidence), second_recall)
    progress.step(control, offset + reps, total)

    return CoverageResult(
        setting=setting,
        confidence=confidence,
        reps=reps,
        replicates=replicates,
        precision={kind: covered[f"precision/{kind}"] / reps for kind in PRECISION_KINDS},
        recall={kind: covered[f"recall/{kind}"] / reps for kind in RECALL_KINDS},
        undefined=undefined,
        jeffreys_rows=jeffreys_rows,
        prior=prior,
        seconds=time.perf_counter() - started,
    )


def run_grid(
    settings=None,
    *,
    reps: int = 1000,
    replicates: int = 1000,
    confidence: float = 0.95,
    seed=None,
    prior: Prior | None = None,
    control: progress.TaskControl | None = None,
) -> GridResult:
    """:func:`coverage_experiment` for each setting (default :func:`paper_grid`).

    Each setting gets its own child of ``SeedSequence(seed)``, so a row does not depend on
    the settings before it.
    """
    started = time.perf_counter()
    settings = paper_grid() if settings is None else tuple(settings)
    if not settings:
        raise InputError("the grid needs at least one setting")
    reps = validation.whole_at_least("reps", reps, 10, validation.MAX_REPS)
    sequence = np.random.SeedSequence(None if seed is None else validation.seed(seed))
    children = sequence.spawn(len(settings))
    total = reps * len(settings)
    rows = tuple(
        coverage_experiment(
            setting,
            reps=reps,
            replicates=replicates,
            confidence=confidence,
            seed=child,
            prior=prior,
            control=control,
            _progress_offset=(index * reps, total),
        )
        for index, (setting, child) in enumerate(zip(settings, children, strict=True))
    )
    return GridResult(
        rows=rows,
        reps=reps,
        replicates=rows[0].replicates,
        confidence=rows[0].confidence,
        seconds=time.perf_counter() - started,
    )
