"""Priors, posteriors and the Bayesian predictive intervals of methods §5 (Eq 6-8).

The model: ``pi1 ~ Beta(a11, a01)`` and ``pi0 ~ Beta(a10, a00)`` a priori; after a round with
counts ``(n11, n01, n10, n00)`` the posterior is ``Beta(z11, z01)`` and ``Beta(z10, z00)``
with ``zij = aij + nij``. The predictive intervals describe the *estimate a future round of
sizes* ``(n1', n0')`` *will show*; they are wider than confidence intervals on purpose.

Random design (one simple random sample, ``k`` estimated by ``n1/n0``). The same four
parameters are read as a Dirichlet prior on the four cell probabilities, so the posterior is
``Dirichlet(z11, z01, z10, z00)``. Its aggregation property gives the same ``Beta(z11, z01)``
for precision, and recall ``= p11/(p11 + p10)`` is exactly ``Beta(z11, z10)``: recall is a
proportion among the actual positives, and ``k`` is no longer treated as known. The
random-design analogue of Eq 6-8 is therefore the Eq 6 form applied to recall: the
beta-binomial predictive of ``TP*/m'`` for a future round with the same number
``m' = TP + FN`` of actual positives (:func:`bayes_recall_interval_random`); the posterior
interval is the ``Beta(z11, z10)`` quantiles (:func:`posterior_recall_interval_random`).

References
----------
* Shang et al. 2023: Appendix A (Beta posteriors), Eq 6-8 (predictive intervals of a future
  round).
Full entries: docs/methods.md, References.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from core import validation
from core.confusion import ConfusionMatrix
from core.errors import InputError
from core.intervals import Interval, log_ratio_bounds

#: Pseudo-sample of predicted positives per unit of prior strength (methods §5, Figure 1).
PSEUDO_POSITIVES_PER_STRENGTH = 100.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Prior:
    """Beta prior ``alpha = (a11, a01, a10, a00)`` on precision and false omission rate.

    Attributes
    ----------
    a11, a01 : float
        Beta parameters of ``pi1`` (precision): prior actual positives / negatives among
        predicted positives.
    a10, a00 : float
        Beta parameters of ``pi0`` (false omission rate) among predicted negatives.
    name : str
        How the prior was made, shown to users (``"Jeffreys (0.5)"``, ...).
    """

    a11: float = 0.0
    a01: float = 0.0
    a10: float = 0.0
    a00: float = 0.0
    name: str = "none (alpha = 0)"

    def __post_init__(self) -> None:
        for field in ("a11", "a01", "a10", "a00"):
            object.__setattr__(
                self, field, validation.prior_weight(field, getattr(self, field), pseudo_count=True)
            )

    # presets (methods §5) --------------------------------------------------------------------

    @classmethod
    def none(cls) -> Prior:
        """The paper's default ``alpha = 0`` (improper when a count is 0)."""
        return cls()

    @classmethod
    def jeffreys(cls) -> Prior:
        return cls(a11=0.5, a01=0.5, a10=0.5, a00=0.5, name="Jeffreys (0.5)")

    @classmethod
    def uniform(cls) -> Prior:
        return cls(a11=1.0, a01=1.0, a10=1.0, a00=1.0, name="uniform (1)")

    @classmethod
    def from_sequence(cls, values, name: str = "custom") -> Prior:
        values = tuple(values)
        if len(values) != 4:
            raise InputError(f"a prior needs 4 values (a11, a01, a10, a00), got {values!r}")
        a11, a01, a10, a00 = values
        return cls(a11=a11, a01=a01, a10=a10, a00=a00, name=name)

    @classmethod
    def from_expected(cls, precision: float, recall: float, k: float, strength: float) -> Prior:
        """Preset from expected precision/recall with strength ``w`` (methods §5).

        ``Beta(pi1*100w, (1-pi1)*100w)`` and ``Beta(pi0*100w/k, (1-pi0)*100w/k)``: a
        pseudo-sample of ``100w`` predicted positives and proportionally many negatives,
        with ``pi0`` from Eq 9.
        """
        from core.confusion import planning_rates

        pi1, pi0, k = planning_rates(precision, recall, k)
        w = validation.prior_weight("prior strength", strength)
        m1 = PSEUDO_POSITIVES_PER_STRENGTH * w
        m0 = m1 / k
        return cls(
            a11=pi1 * m1,
            a01=(1 - pi1) * m1,
            a10=pi0 * m0,
            a00=(1 - pi0) * m0,
            name=f"expected P/R, strength {w:g}",
        )

    @classmethod
    def from_round(cls, matrix: ConfusionMatrix, weight: float) -> Prior:
        """A past round's counts scaled by ``w`` (``w = 0.5`` counts it half)."""
        w = validation.positive("prior weight", weight)
        return cls(
            a11=matrix.tp * w,
            a01=matrix.fp * w,
            a10=matrix.fn * w,
            a00=matrix.tn * w,
            name=f"past round x {w:g}",
        )

    def as_tuple(self) -> tuple[float, float, float, float]:
        return (self.a11, self.a01, self.a10, self.a00)

    @property
    def is_zero(self) -> bool:
        return not any(self.as_tuple())

    def posterior(self, matrix: ConfusionMatrix | None = None) -> Posterior:
        """``zij = aij + nij``; refuses an improper result with a message (methods §5)."""
        counts = matrix.as_tuple() if matrix is not None else (0, 0, 0, 0)
        z = tuple(a + n for a, n in zip(self.as_tuple(), counts, strict=True))
        if min(z) <= 0:
            names = [
                n
                for n, value in zip(
                    ("TP (z11)", "FP (z01)", "FN (z10)", "TN (z00)"), z, strict=True
                )
                if value <= 0
            ]
            raise InputError(
                f"the prior {self.name} with a zero count for {', '.join(names)} gives an "
                f"improper posterior; use the Jeffreys (0.5) or uniform (1) prior"
            )
        return Posterior(z11=z[0], z01=z[1], z10=z[2], z00=z[3])


@dataclass(frozen=True, slots=True, kw_only=True)
class Posterior:
    """Beta posterior parameters ``z = alpha + counts`` (all > 0)."""

    z11: float
    z01: float
    z10: float
    z00: float

    @property
    def mean_precision(self) -> float:
        return self.z11 / (self.z11 + self.z01)

    @property
    def mean_false_omission(self) -> float:
        return self.z10 / (self.z10 + self.z00)

    def theta(self) -> tuple[float, float]:
        """``(Theta1, Theta0)`` of Theorem 2 (methods §7)."""
        theta1 = self.z11 * (self.z11 + self.z01 + 1) / (self.z01 * (self.z11 + self.z01))
        theta0 = self.z10 * (self.z10 + self.z00 + 1) / (self.z00 * (self.z10 + self.z00))
        return theta1, theta0


def predictive_precision_sd(posterior: Posterior, n1_future):
    """Standard deviation of a future round's precision estimate (Eq 6), vectorized in ``n1'``.

    ``var = z11*z01*(z11+z01+n1')/(n1'*(z11+z01)^2*(z11+z01+1))``: the beta-binomial
    variance of ``TP*/n1'``.
    """
    a, b = posterior.z11, posterior.z01
    n = np.asarray(n1_future, dtype=float)
    return np.sqrt(a * b * (a + b + n) / (n * (a + b) ** 2 * (a + b + 1)))


def predictive_recall_terms(posterior: Posterior, k: float, n1_future, n0_future):
    """``(xb, sqrt(Vu))`` of Eq 7 and Eq 8, vectorized in ``n1'`` and ``n0'``."""
    z11, z01, z10, z00 = posterior.z11, posterior.z01, posterior.z10, posterior.z00
    n1 = np.asarray(n1_future, dtype=float)
    n0 = np.asarray(n0_future, dtype=float)
    xb = (1.0 / k) * z10 * (z11 + z01) / (z11 * (z10 + z00))
    vu = z01 * (z11 + z01 + n1) / (n1 * z11 * (z11 + z01 + 1)) + z00 * (z10 + z00 + n0) / (
        n0 * z10 * (z10 + z00 + 1)
    )
    return xb, np.sqrt(vu)


def bayes_precision_interval(
    posterior: Posterior, n1_future: int, confidence: float = 0.95
) -> Interval:
    """Predictive interval ``m +- z*sqrt(var)`` of a future round's precision (Eq 6)."""
    z = validation.z_value(confidence)
    m = posterior.mean_precision
    half = z * float(predictive_precision_sd(posterior, validation.positive("n1'", n1_future)))
    lower, upper = m - half, m + half
    note = "clipped to [0, 1]" if lower < 0 or upper > 1 else ""
    return Interval(lower=max(0.0, lower), upper=min(1.0, upper), method="bayes", note=note)


def bayes_recall_interval(
    posterior: Posterior, k: float, n1_future: int, n0_future: int, confidence: float = 0.95
) -> Interval:
    """Predictive interval of a future round's recall (Eq 7 with Eq 8)::

    [1/(1 + xb*exp(+z*sqrt(Vu))), 1/(1 + xb*exp(-z*sqrt(Vu)))]
    """
    k = validation.imbalance("k", k)
    z = validation.z_value(confidence)
    xb, sd = predictive_recall_terms(
        posterior, k, validation.positive("n1'", n1_future), validation.positive("n0'", n0_future)
    )
    # Overflow-safe form of 1/(1 + xb*exp(+-z*sd)): a near-zero prior on an empty cell makes
    # sd huge, and the interval is then (nearly) [0, 1], not an OverflowError.
    lower, upper = log_ratio_bounds(float(xb), z * float(sd))
    return Interval(lower=lower, upper=upper, method="bayes")


def predictive_recall_sd_random(posterior: Posterior, positives_future):
    """Eq 6 form for recall in the random design: sd of ``TP*/m'``, ``TP* ~ BB(m', z11, z10)``.

    ``var = z11*z10*(z11+z10+m')/(m'*(z11+z10)^2*(z11+z10+1))``, vectorized in ``m'``.
    """
    a, b = posterior.z11, posterior.z10
    m = np.asarray(positives_future, dtype=float)
    return np.sqrt(a * b * (a + b + m) / (m * (a + b) ** 2 * (a + b + 1)))


def bayes_recall_interval_random(
    posterior: Posterior, positives_future: int, confidence: float = 0.95
) -> Interval:
    """Predictive interval of a future random sample's recall ``TP*/m'`` (module docstring).

    The random-design analogue of Eq 6-8: ``m +- z*sqrt(var)`` with ``m = z11/(z11+z10)``
    and the beta-binomial variance of :func:`predictive_recall_sd_random`, for a future
    round with ``m' = TP + FN`` actual positives (the same number as the labeled one).
    Undefined (NaN, with a note) when ``m' = 0``.
    """
    z = validation.z_value(confidence)
    positives = validation.count("m' (actual positives)", positives_future)
    if positives == 0:
        return Interval(
            lower=math.nan,
            upper=math.nan,
            method="bayes",
            note="no actual positive labeled: a future round's recall is undefined",
        )
    m = posterior.z11 / (posterior.z11 + posterior.z10)
    half = z * float(predictive_recall_sd_random(posterior, positives))
    lower, upper = m - half, m + half
    note = "clipped to [0, 1]" if lower < 0 or upper > 1 else ""
    return Interval(lower=max(0.0, lower), upper=min(1.0, upper), method="bayes", note=note)


def posterior_recall_interval_random(posterior: Posterior, confidence: float = 0.95) -> Interval:
    """Equal-tailed posterior interval of the true recall of a random sample,
    ``Beta(z11, z10)`` quantiles (module docstring)."""
    return _beta_interval(posterior.z11, posterior.z10, confidence)


def posterior_precision_interval(
    posterior: Posterior,
    confidence: float = 0.95,
    finite: tuple[int, int, int] | None = None,
) -> Interval:
    """Equal-tailed posterior interval of the true precision, ``Beta(z11, z01)`` quantiles.

    With ``finite = (TP, n1, N1)`` (the finite population correction), the interval of the
    stratum's own precision instead: :func:`finite_posterior_interval`.
    """
    if finite is not None:
        return finite_posterior_interval(*finite, posterior.z11, posterior.z01, confidence)
    return _beta_interval(posterior.z11, posterior.z01, confidence)


def finite_population_rates(rates_pos, rates_neg, matrix, strata, rng):
    """Draws of the two strata's own rates from draws of the rates behind them.

    ``rates_pos`` are draws of the precision rate ``pi1`` and ``rates_neg`` of the rate of
    actual positives among the unflagged, ``pi0``. A stratum of ``N`` items of which ``n``
    were labeled holds ``M = labeled positives + Binomial(N - n, pi)`` positives, so its
    own rate ``M/N`` keeps what the labels showed and only the rest is uncertain (methods,
    "Finite population correction"): a stratum labeled in full has no uncertainty left.

    Parameters
    ----------
    rates_pos, rates_neg : ndarray
        Posterior draws of ``pi1`` and ``pi0``.
    matrix : ConfusionMatrix
        The round's labeled counts.
    strata : (int, int)
        ``(N1, N0)``, at least the sample sizes.
    rng : numpy.random.Generator

    Returns
    -------
    (ndarray, ndarray)
        Draws of ``M1/N1`` (precision) and ``M0/N0``.
    """
    flagged, unflagged = strata
    own_pos = (matrix.tp + rng.binomial(flagged - matrix.n_pos, rates_pos)) / flagged
    own_neg = (matrix.fn + rng.binomial(unflagged - matrix.n_neg, rates_neg)) / unflagged
    return own_pos, own_neg


def finite_posterior_interval(
    successes: int,
    trials: int,
    stratum: int,
    a: float,
    b: float,
    confidence: float = 0.95,
    method: str = "posterior",
) -> Interval:
    """Equal-tailed posterior interval of a finite stratum's own proportion ``M/N``.

    ``trials`` items of a stratum of ``stratum`` were drawn without replacement and
    ``successes`` of them were positive; ``Beta(a, b)`` is the posterior of the rate. The
    stratum's positives are ``M = successes + X`` with ``X`` beta-binomial over the
    ``stratum - trials`` items not labeled (methods, "Finite population correction"), so
    labeling the whole stratum leaves the estimate itself.
    """
    from scipy.stats import betabinom  # deferred, like betaincinv

    alpha = 1.0 - validation.confidence(confidence)
    rest = stratum - trials
    if rest <= 0:
        share = successes / stratum
        return Interval(lower=share, upper=share, method=method)
    if rest <= _SCIPY_BETABINOM_LIMIT:
        low, high = betabinom.ppf([alpha / 2, 1 - alpha / 2], rest, a, b)
    else:
        low, high = (_betabinom_quantile(q, rest, a, b) for q in (alpha / 2, 1 - alpha / 2))
    return Interval(
        lower=float((successes + low) / stratum),
        upper=float((successes + high) / stratum),
        method=method,
    )


#: scipy's beta-binomial quantile sums the pmf term by term: 0.2 s at 10^5 items and 24 s at
#: 10^7. Above this many unlabeled items the quantile is found from one integral per step.
_SCIPY_BETABINOM_LIMIT = 20_000
#: Above this many unlabeled items the quantile is the Beta quantile's share of them.
_BETA_LIMIT_ITEMS = 10**9


def _betabinom_quantile(q: float, m: int, a: float, b: float) -> int:
    """Smallest ``k`` with ``P(X <= k) >= q`` for ``X ~ BetaBinomial(m, a, b)``.

    ``P(X <= k)`` is the binomial cdf averaged over the rate's ``Beta(a, b)``: one smooth
    integral (``scipy.special.bdtr`` inside ``quad``), whatever ``m``. The search starts
    around ``m`` times the Beta quantile, where the answer lies within a few binomial
    standard deviations, and widens its bracket until it holds.
    """
    from scipy import integrate, special, stats

    if m > _BETA_LIMIT_ITEMS:
        # The integral's binomial cdf is a step too sharp for quad: at 10^10 items it warned
        # and missed by 1e-4 (fuzz 20), where m times the Beta quantile is off by at most
        # half a binomial standard deviation, sqrt(m)/2 items (5e-6 of m at 10^10).
        return min(max(round(m * float(stats.beta.ppf(q, a, b))), 0), m)
    guess = m * float(stats.beta.ppf(q, a, b))
    found = None
    if guess < _EXACT_SUM_ITEMS:
        found = _betabinom_quantile_by_sum(q, m, a, b)
    elif m - guess < _EXACT_SUM_ITEMS:
        # Near m: m - X is BetaBinomial(m, b, a), and P(X <= k) >= q holds from the first
        # k with P(m - X <= m - k - 1) <= 1 - q.
        last = _betabinom_last_at_most(1.0 - q, m, b, a)
        found = None if last is None else m - 1 - last
    if found is not None:
        return found
    lower, upper = stats.beta.ppf([1e-13, 1 - 1e-13], a, b)
    mode = (a - 1) / (a + b - 2) if a > 1 and b > 1 else (lower + upper) / 2
    peak = min(max(mode, lower), upper)

    log_norm = log_beta(a, b)
    bdtr = special.bdtr

    def cdf(k: int) -> float:
        # The Beta density written out: scipy.stats' pdf costs ~50 us a call, and quad
        # makes hundreds of calls per quantile step.
        def integrand(t: float) -> float:
            density = math.exp((a - 1) * math.log(t) + (b - 1) * math.log1p(-t) - log_norm)
            return density * bdtr(k, m, t)

        # quad calls its error estimate unreliable where the density is infinite at an end
        # (a < 1): the value is still within a tenth of a binomial standard deviation of
        # the quantile (tests), and the warning must not reach the lead's terminal.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", integrate.IntegrationWarning)
            value, _error = integrate.quad(integrand, lower, upper, points=[peak], limit=200)
        return value

    guess = int(guess)
    spread = 10 * int(math.sqrt(m)) + 10
    low, high = max(guess - spread, 0), min(guess + spread, m)
    while low > 0 and cdf(low) >= q:
        low = max(low - 4 * spread, 0)
    while high < m and cdf(high) < q:
        high = min(high + 4 * spread, m)
    while low < high:  # cdf(high) >= q; the answer is in [low, high]
        middle = (low + high) // 2
        if cdf(middle) >= q:
            high = middle
        else:
            low = middle + 1
    return low


#: A quantile within this many items of 0 or of m is found by summing the beta-binomial's
#: terms: the integral misses it when the Beta density is infinite at that end (a < 1:
#: no positive labeled, Jeffreys), 349 items for 10 at 10^6 (review 20).
_EXACT_SUM_ITEMS = 10**6


def _betabinom_cdf_terms(m: int, a: float, b: float, count: int, start_log: float):
    """``P(X <= k)`` for ``k = 0..count-1`` of ``X ~ BetaBinomial(m, a, b)`` (Eq: the
    terms' ratio ``p(k+1)/p(k) = (m-k)(k+a) / ((k+1)(m-k-1+b))`` from ``log p(0)``)."""
    import numpy as np

    k = np.arange(count - 1, dtype=float)
    log_ratios = np.log((m - k) * (k + a)) - np.log((k + 1) * (m - k - 1 + b))
    logs = start_log + np.concatenate(([0.0], np.cumsum(log_ratios)))
    return np.cumsum(np.exp(logs))


def _betabinom_first_terms(m: int, a: float, b: float):
    from scipy.special import betaln

    count = min(m, 2 * _EXACT_SUM_ITEMS) + 1
    return _betabinom_cdf_terms(m, a, b, count, float(betaln(a, m + b) - betaln(a, b)))


def _betabinom_quantile_by_sum(q: float, m: int, a: float, b: float) -> int | None:
    """Smallest ``k`` with ``P(X <= k) >= q``, from the terms summed from ``k = 0``
    (``None`` when it lies beyond the terms summed)."""
    import numpy as np

    cdf = _betabinom_first_terms(m, a, b)
    found = int(np.searchsorted(cdf, q, side="left"))
    if found < len(cdf):
        return found
    return m if len(cdf) == m + 1 else None


def _betabinom_last_at_most(p: float, m: int, a: float, b: float) -> int | None:
    """Largest ``j`` with ``P(X <= j) <= p`` (-1 when even ``P(X = 0)`` exceeds it;
    ``None`` when it lies beyond the terms summed)."""
    import numpy as np

    cdf = _betabinom_first_terms(m, a, b)
    found = int(np.searchsorted(cdf, p, side="right")) - 1
    return found if found < len(cdf) - 1 or len(cdf) == m + 1 else None


def _beta_interval(a: float, b: float, confidence: float) -> Interval:
    """Equal-tailed ``Beta(a, b)`` quantiles as a posterior :class:`Interval`."""
    # Deferred: scipy.special costs ~0.25 s to import, and planning never needs it.
    from scipy.special import betaincinv

    alpha = 1.0 - validation.confidence(confidence)
    lower, upper = betaincinv(a, b, [alpha / 2, 1 - alpha / 2])
    return Interval(lower=float(lower), upper=float(upper), method="posterior")


def log_beta(a: float, b: float) -> float:
    """``log B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b)`` for ``a, b > 0``.

    ``math.lgamma`` keeps scipy out of the app's start; the cancellation between the three
    terms leaves a relative error of about ``1e-16 * a*log(a)`` in ``B``, below 1e-10 up to
    parameters of 1e5, which is far more than the plots it serves can show.
    """
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def beta_density(a: float, b: float, grid) -> np.ndarray:
    """Beta(a, b) density on ``grid`` in (0, 1), for the prior editor's live plots.

    The closed form ``x^(a-1) (1-x)^(b-1) / B(a, b)``, evaluated in logs: it needs no
    ``scipy.stats`` (whose import alone costs about a second at the app's start).
    """
    a = validation.positive("a", a)
    b = validation.positive("b", b)
    x = np.asarray(grid, dtype=float)
    # A sharp prior (alphas in the millions) overflows to inf at its peak, as a display
    # value; the editor shows non-finite values as gaps.
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_density = (a - 1.0) * np.log(x) + (b - 1.0) * np.log1p(-x) - log_beta(a, b)
        return np.exp(log_density)
