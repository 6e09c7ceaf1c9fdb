"""Precision and F-scores under other class balances (methods §11, sections 2.1 to 2.3).

TPR (= recall) and FPR do not depend on the class balance; precision, F-scores and the
gains do. Everything here is a function of ``TPR``, ``FPR`` and the positive prevalence
``eta``, or the ratio ``r = eta/(1 - eta)`` (Williams 2021; Brabec et al. 2020, Section 3;
Siblini et al. 2020, Eq 6).

The closed forms accept scalars or numpy arrays and broadcast; a prevalence must lie
strictly inside ``(0, 1)`` (a ratio inside ``(0, inf)``), a rate inside ``[0, 1]``. They
follow IEEE rules in the one place where the math is undefined, a precision with
``eta*TPR = (1-eta)*FPR = 0`` (nothing predicted positive), which is NaN as in
:mod:`core.confusion`; :class:`OperatingPoint` refuses ``TPR = 0``, so its curves never hit it.

Notation: the methods document calls the two FPR/TPR ratios of the uncertainty band ``r1``
and ``r2`` (methods §11); to keep them apart from the class ratio ``r`` the code calls them
``fpr_tpr_ratio_upper`` (``r1``, the ratio of the upper precision bound) and
``fpr_tpr_ratio_lower`` (``r2``).

References
----------
* Williams 2021 (precision and F-beta as functions of prevalence).
* Siblini et al. 2020: Eq 6 (calibrated precision).
* Brabec et al. 2020: Section 3.1 (P3 curve), Theorem 5.1 and Appendix B (uncertainty band).
* Flach and Kull 2015 (precision and recall gain).
Full entries: docs/methods.md, References.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import NamedTuple

import numpy as np

from core import validation
from core.confusion import ConfusionMatrix, f_beta, point_estimates
from core.errors import InputError
from core.intervals import katz_log_recall, reaching_estimate, wilson_ratio_fpr

DEFAULT_ETA_MIN = 1e-5
DEFAULT_ETA_MAX = 0.5
DEFAULT_POINTS = 200
RANK_METRICS = ("precision", "f_beta")


def _ends(interval) -> tuple[float, float]:
    return (interval.lower, interval.upper)


# The band's rate intervals are the ones the app tells a lead to quote (core.methods).
_BAND_RECALL = katz_log_recall
_BAND_FPR = wilson_ratio_fpr


# --- argument checks for arrays ----------------------------------------------------------


def _as_float_array(name: str, value) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number or an array of numbers, got {value!r}") from None
    return array


def _first_offender(array: np.ndarray, bad: np.ndarray):
    offender = array[bad].flat[0] if array.ndim else array
    return float(offender)


def _rates(name: str, value) -> np.ndarray:
    """Rates inside ``[0, 1]`` (TPR, FPR)."""
    array = _as_float_array(name, value)
    bad = ~((array >= 0.0) & (array <= 1.0))
    if bad.any():
        raise InputError(f"{name} must lie in [0, 1], got {_first_offender(array, bad)!r}")
    return array


def _prevalences(name: str, value) -> np.ndarray:
    """Prevalences strictly inside ``(0, 1)``: at 0 or 1 one class is absent."""
    array = _as_float_array(name, value)
    bad = ~((array > 0.0) & (array < 1.0))
    if bad.any():
        raise InputError(
            f"{name} must be strictly between 0 and 1, got {_first_offender(array, bad)!r}"
        )
    return array


def _ratios(name: str, value) -> np.ndarray:
    """Class ratios ``r = eta/(1-eta)`` strictly inside ``(0, inf)``."""
    array = _as_float_array(name, value)
    bad = ~((array > 0.0) & np.isfinite(array))
    if bad.any():
        raise InputError(f"{name} must be a finite number > 0, got {_first_offender(array, bad)!r}")
    return array


def _positive_tprs(name: str, value) -> np.ndarray:
    array = _rates(name, value)
    bad = array <= 0.0
    if bad.any():
        raise InputError(f"{name} must be > 0 for a gain, got {_first_offender(array, bad)!r}")
    return array


def _beta(value) -> float:
    return validation.positive("beta", value)


def _scalar_or_array(array: np.ndarray):
    return array[()] if isinstance(array, np.ndarray) else array


# --- 2.1 closed forms --------------------------------------------------------------------


def ratio_from_prevalence(prevalence):
    """Class ratio ``r = eta/(1 - eta)`` (methods §11)."""
    eta = _prevalences("prevalence", prevalence)
    return _scalar_or_array(eta / (1.0 - eta))


def prevalence_from_ratio(ratio):
    """Prevalence ``eta = r/(1 + r)``, the inverse of :func:`ratio_from_prevalence`."""
    r = _ratios("ratio", ratio)
    return _scalar_or_array(r / (1.0 + r))


def _precision_unchecked(tpr, fpr, eta):
    with np.errstate(divide="ignore", invalid="ignore"):
        predicted_positive = eta * tpr + (1.0 - eta) * fpr
        return eta * tpr / predicted_positive


def _f_beta_unchecked(tpr, fpr, eta, beta2):
    # Multiplying the usual (1+b^2)*TPR/(TPR + FPR/r + b^2) through by eta keeps it
    # finite for every eta in (0, 1) without forming r.
    with np.errstate(divide="ignore", invalid="ignore"):
        return (1.0 + beta2) * eta * tpr / (eta * tpr + (1.0 - eta) * fpr + beta2 * eta)


def precision_at_prevalence(tpr, fpr, prevalence):
    """Precision at positive prevalence ``eta`` (methods §11; Brabec et al., Eq 2).

    ``Prec(eta) = eta*TPR / (eta*TPR + (1-eta)*FPR) = TPR / (TPR + FPR/r)``.

    Parameters
    ----------
    tpr, fpr : float or array_like
        True and false positive rates in ``[0, 1]``.
    prevalence : float or array_like
        Share of actual positives, strictly inside ``(0, 1)``. Broadcasts with the rates.

    Returns
    -------
    float or numpy.ndarray
        NaN only where ``TPR = FPR = 0`` (no item predicted positive).
    """
    return _scalar_or_array(
        _precision_unchecked(
            _rates("tpr", tpr), _rates("fpr", fpr), _prevalences("prevalence", prevalence)
        )
    )


def precision_at_ratio(tpr, fpr, ratio):
    """Precision at class ratio ``r = eta/(1-eta)``: ``TPR / (TPR + FPR/r)`` (methods §11)."""
    eta = prevalence_from_ratio(ratio)
    return _scalar_or_array(_precision_unchecked(_rates("tpr", tpr), _rates("fpr", fpr), eta))


def f_beta_at_prevalence(tpr, fpr, prevalence, beta: float = 1.0):
    """F-beta at prevalence ``eta`` (methods §11): ``(1+b^2)*TPR / (TPR + FPR/r + b^2)``.

    Recall does not move with the balance, so only precision carries ``eta``; this is
    ``core.confusion.f_beta(Prec(eta), TPR, beta)`` written without the intermediate
    precision. Zero when ``TPR = 0``.
    """
    beta2 = _beta(beta) ** 2
    return _scalar_or_array(
        _f_beta_unchecked(
            _rates("tpr", tpr), _rates("fpr", fpr), _prevalences("prevalence", prevalence), beta2
        )
    )


def f_beta_at_ratio(tpr, fpr, ratio, beta: float = 1.0):
    """F-beta at class ratio ``r`` (methods §11)."""
    beta2 = _beta(beta) ** 2
    eta = prevalence_from_ratio(ratio)
    return _scalar_or_array(_f_beta_unchecked(_rates("tpr", tpr), _rates("fpr", fpr), eta, beta2))


def precision_gain(tpr, fpr):
    """Precision gain ``(Prec - eta)/((1-eta)*Prec) = 1 - FPR/TPR`` (methods §11).

    Independent of the prevalence (Flach and Kull's gain, unclipped: negative values mean
    worse than flagging everything). Needs ``TPR > 0``.
    """
    return _scalar_or_array(1.0 - _rates("fpr", fpr) / _positive_tprs("tpr", tpr))


def recall_gain_at_prevalence(tpr, prevalence):
    """Recall gain ``(Rec - eta)/((1-eta)*Rec) = 1 + r*(1 - 1/TPR)`` (methods §11), unclipped."""
    t = _positive_tprs("tpr", tpr)
    eta = _prevalences("prevalence", prevalence)
    return _scalar_or_array((t - eta) / ((1.0 - eta) * t))


def recall_gain_at_ratio(tpr, ratio):
    """Recall gain at class ratio ``r``: ``1 + r*(1 - 1/TPR)`` (methods §11)."""
    t = _positive_tprs("tpr", tpr)
    return _scalar_or_array(1.0 + _ratios("ratio", ratio) * (1.0 - 1.0 / t))


def calibrated_precision_from_counts(tp, fp, test_prevalence, reference_prevalence):
    """Siblini et al.'s calibrated precision (Eq 6), straight from a test set's counts.

    ``Prec_c = TP / (TP + (pi*(1-pi_ref))/(pi_ref*(1-pi)) * FP)``, which equals
    ``Prec(eta = pi_ref)`` (methods §11).

    Parameters
    ----------
    tp, fp : float or array_like
        True and false positives counted on the test set (>= 0; weighted counts allowed).
    test_prevalence : float
        ``pi``: the share of actual positives of the population those counts describe.
        For a stratified (over-sampled) round this is the *population* prevalence
        ``(k*pi1 + pi0)/(k+1)`` (``TP/FP`` inside the predicted-positive stratum is the
        population's), never the labeled sample's own share.
    reference_prevalence : float
        ``pi_ref``, the prevalence to report at.

    Returns
    -------
    float or numpy.ndarray
        NaN where ``TP = FP = 0`` (nothing predicted positive).
    """
    tp = _as_float_array("tp", tp)
    fp = _as_float_array("fp", fp)
    for name, array in (("tp", tp), ("fp", fp)):
        bad = ~((array >= 0.0) & np.isfinite(array))
        if bad.any():
            raise InputError(f"{name} must be >= 0, got {_first_offender(array, bad)!r}")
    pi = _prevalences("test prevalence", test_prevalence)
    pi_ref = _prevalences("reference prevalence", reference_prevalence)
    odds_factor = pi * (1.0 - pi_ref) / (pi_ref * (1.0 - pi))
    with np.errstate(divide="ignore", invalid="ignore"):
        return _scalar_or_array(tp / (tp + odds_factor * fp))


# --- operating points --------------------------------------------------------------------


def _variation(sigma: float, rate: float) -> float:
    """``sigma/rate``; 0 when both are 0 (the rate is known exactly), inf when only the
    rate is."""
    if rate == 0.0:
        return 0.0 if sigma == 0.0 else math.inf
    return sigma / rate


def _optional_open_unit(name: str, value) -> float | None:
    return None if value is None else validation.open_unit(name, value)


@dataclass(frozen=True, slots=True, kw_only=True)
class OperatingPoint:
    """One classifier at one threshold, described by balance-free rates.

    Attributes
    ----------
    tpr : float
        True positive rate (= recall), in ``(0, 1]``; at 0 every precision is 0 or undefined.
    fpr : float
        False positive rate, in ``[0, 1]``.
    sigma_tpr, sigma_fpr : float or None
        Half-widths of the rates' intervals (methods §11), both given or both ``None``.
    name : str
        Label for plots, tables and rank swaps.
    population_prevalence : float or None
        Estimated share of actual positives in the population, ``(k*pi1 + pi0)/(k+1)``
        for a stratified round (methods §11), marked on the P3 curve.
    sample_prevalence : float or None
        Share of actual positives among the labeled items; differs from the population's
        in an over-sampled round. Marked on the P3 curve for contrast.
    confidence : float or None
        Level of the intervals whose half-widths are the sigmas, when they come from a
        labeled round (:meth:`from_round`); ``None`` when the sigmas were given as they are.
    tpr_bounds, fpr_bounds : (float, float) or None
        The ends of those intervals, when they are known (:meth:`from_round`): the band
        is built from them rather than from ``rate +- sigma``, so it keeps the intervals'
        asymmetry (an FPR of 0 with an upper end of 0.1 % is not "0 +- 0.05 %").
    """

    tpr: float
    fpr: float
    sigma_tpr: float | None = None
    sigma_fpr: float | None = None
    name: str = ""
    population_prevalence: float | None = None
    sample_prevalence: float | None = None
    confidence: float | None = None
    tpr_bounds: tuple[float, float] | None = None
    fpr_bounds: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        tpr = validation.non_negative("tpr", self.tpr)
        fpr = validation.non_negative("fpr", self.fpr)
        if tpr == 0.0:
            raise InputError(
                f"tpr must be > 0 (with tpr = 0 precision is 0 at every prevalence), "
                f"got {self.tpr!r}"
            )
        if tpr > 1.0:
            raise InputError(f"tpr must be in (0, 1], got {self.tpr!r}")
        if fpr > 1.0:
            raise InputError(f"fpr must be in [0, 1], got {self.fpr!r}")
        object.__setattr__(self, "tpr", tpr)
        object.__setattr__(self, "fpr", fpr)
        if (self.sigma_tpr is None) != (self.sigma_fpr is None):
            raise InputError("give both sigma_tpr and sigma_fpr, or neither")
        if self.sigma_tpr is not None:
            for name in ("sigma_tpr", "sigma_fpr"):
                sigma = validation.non_negative(name, getattr(self, name))
                # A half-width of a rate's interval: above 1 it says nothing a width of 1
                # does not, and 1e300 overflowed the text ("TPR ± 1000…0 %").
                if sigma > 1.0:
                    raise InputError(
                        f"{name} must be at most 1 (the half-width of an interval of a rate "
                        f"between 0 and 1), got {sigma:g}"
                    )
                object.__setattr__(self, name, sigma)
        if (self.tpr_bounds is None) != (self.fpr_bounds is None) or (
            self.tpr_bounds is not None and self.sigma_tpr is None
        ):
            raise InputError("give both rate intervals' ends with the sigmas, or neither")
        for attribute, estimate in (("tpr_bounds", tpr), ("fpr_bounds", fpr)):
            bounds = getattr(self, attribute)
            if bounds is None:
                continue
            low, high = (validation.non_negative(attribute, value) for value in bounds)
            if not low <= estimate <= high <= 1.0:
                raise InputError(
                    f"{attribute} must hold the estimate within [0, 1], got ({low}, {high}) "
                    f"around {estimate}"
                )
            object.__setattr__(self, attribute, (low, high))
        object.__setattr__(self, "name", str(self.name))
        for attribute in ("population_prevalence", "sample_prevalence"):
            cleaned = _optional_open_unit(attribute.replace("_", " "), getattr(self, attribute))
            object.__setattr__(self, attribute, cleaned)

    @classmethod
    def from_rates(
        cls,
        tpr: float,
        fpr: float,
        *,
        sigma_tpr: float | None = None,
        sigma_fpr: float | None = None,
        name: str = "",
    ) -> OperatingPoint:
        """From known rates and, optionally, their half-widths (bootstrap, other study)."""
        return cls(tpr=tpr, fpr=fpr, sigma_tpr=sigma_tpr, sigma_fpr=sigma_fpr, name=name)

    @classmethod
    def from_round(
        cls,
        matrix: ConfusionMatrix,
        k: float | None = None,
        *,
        confidence: float = 0.95,
        name: str = "",
    ) -> OperatingPoint:
        """From a stratified labeled round or a plain random sample (methods §2, 1.2 and 2.1).

        ``TPR = recall^`` and ``FPR^`` come from ``pi1^, pi0^, k``; the sigmas are the
        half-widths of the intervals the app recommends quoting at ``confidence``: Katz
        log-ratio for recall (Eq 4, Haldane-Anscombe corrected on zero cells) and the
        Wilson intervals of the two strata combined for FPR (methods §4), so the band
        agrees with the rates the Evaluate tab shows. For a random sample (``k=None``)
        those are the random-design intervals (``design="random"`` in
        :mod:`core.intervals`).

        Parameters
        ----------
        matrix : ConfusionMatrix
            The round's counts.
        k : float or None
            ``N1/N0`` of the design; ``None`` for a plain random sample (``k = n1/n0``).
        confidence : float
            Level of the two rate intervals.
        name : str
            Label of the point.
        """
        estimates = point_estimates(matrix, k)
        if not math.isfinite(estimates.recall) or estimates.recall <= 0.0:
            raise InputError(
                f"the round's recall estimate is {estimates.recall!r} (TP = {matrix.tp}): "
                "precision is 0 or undefined at every prevalence; label more positives"
            )
        if not math.isfinite(estimates.fpr):
            raise InputError("the round labeled no actual negative (FP + TN = 0): FPR is unknown")
        design = "random" if k is None else "stratified"
        recall_interval = _BAND_RECALL(matrix, estimates.k, confidence, design=design)
        fpr_interval = _BAND_FPR(matrix, estimates.k, confidence, design=design)
        sample_prevalence = (matrix.tp + matrix.fn) / matrix.total
        return cls(
            tpr=estimates.recall,
            fpr=estimates.fpr,
            sigma_tpr=recall_interval.half_width,
            sigma_fpr=fpr_interval.half_width,
            tpr_bounds=_ends(reaching_estimate(recall_interval, estimates.recall)),
            fpr_bounds=_ends(reaching_estimate(fpr_interval, estimates.fpr)),
            name=name,
            population_prevalence=estimates.prevalence,
            sample_prevalence=sample_prevalence if 0.0 < sample_prevalence < 1.0 else None,
            confidence=confidence,
        )

    @property
    def has_sigmas(self) -> bool:
        return self.sigma_tpr is not None

    @property
    def cv_tpr(self) -> float | None:
        """Coefficient of variation ``sigma_tpr/tpr``, or ``None`` without sigmas."""
        return None if self.sigma_tpr is None else _variation(self.sigma_tpr, self.tpr)

    @property
    def cv_fpr(self) -> float | None:
        """``sigma_fpr/fpr``; 0 when both are 0 (FPR known to be 0), inf when only FPR is."""
        return None if self.sigma_fpr is None else _variation(self.sigma_fpr, self.fpr)

    def precision_at(self, prevalence):
        """:func:`precision_at_prevalence` of this point."""
        return precision_at_prevalence(self.tpr, self.fpr, prevalence)

    def f_beta_at(self, prevalence, beta: float = 1.0):
        """:func:`f_beta_at_prevalence` of this point."""
        return f_beta_at_prevalence(self.tpr, self.fpr, prevalence, beta)

    def to_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}


# --- calibrated metrics (Siblini et al., Eq 6) --------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CalibratedMetrics:
    """Metrics reported at a reference prevalence instead of the test set's (methods §11).

    Attributes
    ----------
    reference_prevalence : float
        ``pi_ref``.
    precision : float
        Calibrated precision ``Prec_c = Prec(eta = pi_ref)`` (Siblini et al., Eq 6).
    recall : float
        Recall (= TPR), unchanged by calibration.
    f1 : float
        F1 from ``Prec_c`` and the same recall.
    precision_gain : float
        ``1 - FPR/TPR``, equal to the uncalibrated gain (it does not depend on ``eta``).
    recall_gain : float
        Recall gain with ``pi_ref`` as the prevalence.
    """

    reference_prevalence: float
    precision: float
    recall: float
    f1: float
    precision_gain: float
    recall_gain: float

    def to_dict(self) -> dict[str, float]:
        """The ``calibrated`` object of ``prplanner p3 --json`` (its JSON contract)."""
        return {
            "reference_prevalence": self.reference_prevalence,
            "precision": self.precision,
            "f1": self.f1,
            "precision_gain": self.precision_gain,
            "recall_gain": self.recall_gain,
        }


def calibrated_metrics(tpr: float, fpr: float, reference_prevalence: float) -> CalibratedMetrics:
    """Calibrated precision, F1 and gains at ``pi_ref`` from the rates (methods §11)."""
    point = OperatingPoint(tpr=tpr, fpr=fpr)
    pi_ref = validation.open_unit("reference prevalence", reference_prevalence)
    precision = float(precision_at_prevalence(point.tpr, point.fpr, pi_ref))
    return CalibratedMetrics(
        reference_prevalence=pi_ref,
        precision=precision,
        recall=point.tpr,
        f1=float(f_beta(precision, point.tpr)),
        precision_gain=float(precision_gain(point.tpr, point.fpr)),
        recall_gain=float(recall_gain_at_prevalence(point.tpr, pi_ref)),
    )


def calibrated_metrics_from_round(
    matrix: ConfusionMatrix, k: float | None, reference_prevalence: float
) -> CalibratedMetrics:
    """Calibrated metrics of a stratified round: rates from ``pi1^, pi0^, k`` (methods §11)."""
    estimates = point_estimates(matrix, k)
    return calibrated_metrics(estimates.recall, estimates.fpr, reference_prevalence)


# --- 2.3 uncertainty band ----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PrecisionBand:
    """The P3 curve's uncertainty band and its maximal width (Brabec et al., Theorem 5.1).

    Attributes
    ----------
    tpr_lower, tpr_upper, fpr_lower, fpr_upper : float
        ``TPR^ -+ sigma_tpr`` and ``FPR^ -+ sigma_fpr`` clipped to ``[0, 1]`` (a rate cannot
        leave it). ``UB`` uses ``(tpr_upper, fpr_lower)``, ``LB`` ``(tpr_lower, fpr_upper)``.
    fpr_tpr_ratio_upper, fpr_tpr_ratio_lower : float
        The methods document's ``r1 = fpr_lower/tpr_upper`` and ``r2 = fpr_upper/tpr_lower``
        (``inf`` when ``tpr_lower = 0``).
    delta : float
        ``max over eta of UB - LB = (1 - sqrt(r1/r2))/(1 + sqrt(r1/r2))`` (Theorem 5.1).
    eta_star : float
        Where it is attained, ``1/(1 + 1/sqrt(r1*r2))``, always inside (0, 1). NaN (null in
        JSON) when no prevalence in (0, 1) attains it, with the reason in :attr:`note`: in
        the clipped limits the supremum ``Delta = 1`` is only approached, as ``eta -> 0``
        when ``fpr_lower = 0`` (``UB = 1`` everywhere; e.g. ``FPR^ = 0`` with
        ``sigma_fpr > 0``) and as ``eta -> 1`` when ``tpr_lower = 0`` (``LB = 0``); and
        when the width is the same at every prevalence (both clipped, or no uncertainty).
    delta_bound : float
        ``max(CV_TPR, CV_FPR)`` with ``CV = sigma/estimate``; ``delta <= delta_bound``,
        with equality iff the CVs are equal (and nothing was clipped). ``inf`` (null in
        JSON, explained in :attr:`note`) when ``FPR^ = 0`` and ``sigma_fpr > 0``.
    note : str
        Why the band deserves care (clipping), or ``""``.
    """

    tpr_lower: float
    tpr_upper: float
    fpr_lower: float
    fpr_upper: float
    fpr_tpr_ratio_upper: float
    fpr_tpr_ratio_lower: float
    delta: float
    eta_star: float
    delta_bound: float
    note: str = ""

    def bounds_at(self, prevalence) -> tuple[np.ndarray, np.ndarray]:
        """``(LB(eta), UB(eta))`` along ``prevalence`` (methods §11)."""
        eta = _prevalences("prevalence", prevalence)
        return _band_bounds_unchecked(self, eta)

    def to_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}


def _band_bounds_unchecked(band: PrecisionBand, eta: np.ndarray):
    upper = _precision_unchecked(band.tpr_upper, band.fpr_lower, eta)
    if band.tpr_lower == 0.0:
        lower = np.zeros_like(eta)  # fpr_upper > 0 here, so Prec = 0 exactly
    else:
        lower = _precision_unchecked(band.tpr_lower, band.fpr_upper, eta)
    return _scalar_or_array(lower), _scalar_or_array(upper)


def _json_number(value) -> float | None:
    """A finite float for JSON, ``None`` for NaN."""
    number = float(value)
    return number if math.isfinite(number) else None


def max_band_width(cv_tpr, cv_fpr):
    """``Delta`` from the two CVs alone, without clipping (Brabec et al., Appendix A).

    ``r1/r2 = (1-CV_FPR)(1-CV_TPR) / ((1+CV_FPR)(1+CV_TPR))``, so
    ``Delta = (1 - sqrt(r1/r2)) / (1 + sqrt(r1/r2))``. Valid for CVs in ``[0, 1)``.
    """
    c_t = _as_float_array("cv_tpr", cv_tpr)
    c_f = _as_float_array("cv_fpr", cv_fpr)
    for name, array in (("cv_tpr", c_t), ("cv_fpr", c_f)):
        bad = ~((array >= 0.0) & (array < 1.0))
        if bad.any():
            raise InputError(f"{name} must lie in [0, 1), got {_first_offender(array, bad)!r}")
    root = np.sqrt((1.0 - c_f) * (1.0 - c_t) / ((1.0 + c_f) * (1.0 + c_t)))
    return _scalar_or_array((1.0 - root) / (1.0 + root))


def precision_band(point: OperatingPoint) -> PrecisionBand:
    """Band summary of methods §11 for a point with sigmas, all in closed form.

    Raises
    ------
    InputError
        Without sigmas, or when ``LB`` is undefined (``FPR^ = sigma_fpr = 0`` with
        ``sigma_tpr >= TPR^``: precision ``0/0``).
    """
    tpr, fpr, s_t, s_f = point.tpr, point.fpr, point.sigma_tpr, point.sigma_fpr
    if s_t is None or s_f is None:
        raise InputError("the uncertainty band needs sigma_tpr and sigma_fpr")
    notes = []
    if point.tpr_bounds is not None and point.fpr_bounds is not None:
        # The rate intervals' own ends (a labeled round): asymmetric as they are.
        tpr_lower, tpr_upper = point.tpr_bounds
        fpr_lower, fpr_upper = point.fpr_bounds
        if tpr_lower == 0.0 and fpr_upper == 0.0:
            raise InputError(
                "the lower precision bound is 0/0: the intervals' lower TPR end and upper "
                "FPR end are both 0"
            )
        if tpr_lower == 0.0:
            notes.append("TPR's interval reaches 0, so LB = 0 everywhere")
        if fpr_lower == 0.0 and fpr_upper > 0.0:
            notes.append("FPR's interval reaches 0, so UB = 1 everywhere")
    else:
        tpr_lower, tpr_upper = max(tpr - s_t, 0.0), min(tpr + s_t, 1.0)
        fpr_lower, fpr_upper = max(fpr - s_f, 0.0), min(fpr + s_f, 1.0)
        if tpr_lower == 0.0 and fpr_upper == 0.0:
            raise InputError(
                f"the lower precision bound is 0/0: sigma_tpr ({s_t}) >= tpr ({tpr}) while "
                "fpr and sigma_fpr are both 0"
            )
        if tpr - s_t <= 0.0:
            notes.append("sigma_tpr >= tpr: TPR's lower end clipped to 0, so LB = 0 everywhere")
        if fpr - s_f <= 0.0 and fpr_upper > 0.0:
            notes.append("sigma_fpr >= fpr: FPR's lower end clipped to 0, so UB = 1 everywhere")
    ratio_upper = fpr_lower / tpr_upper
    ratio_lower = math.inf if tpr_lower == 0.0 else fpr_upper / tpr_lower
    if ratio_upper == ratio_lower:
        delta, eta_star = 0.0, math.nan
        notes.append("the band has zero width at every prevalence")
    elif ratio_lower == math.inf and ratio_upper == 0.0:
        delta, eta_star = 1.0, math.nan
        notes.append("the band is [0, 1] at every prevalence")
    elif ratio_lower == math.inf:
        delta, eta_star = 1.0, math.nan
        notes.append(
            "the widest band (Delta = 1) is only approached as prevalence -> 1, which lies "
            "outside (0, 1), so eta* is undefined"
        )
    elif ratio_upper == 0.0:
        delta, eta_star = 1.0, math.nan
        notes.append(
            "the widest band (Delta = 1) is only approached as prevalence -> 0, which lies "
            "outside (0, 1), so eta* is undefined"
        )
    else:
        root = math.sqrt(ratio_upper / ratio_lower)
        delta = (1.0 - root) / (1.0 + root)
        eta_star = 1.0 / (1.0 + 1.0 / math.sqrt(ratio_upper * ratio_lower))
    if point.tpr_bounds is None and (tpr + s_t > 1.0 or fpr + s_f > 1.0):
        notes.append("an upper rate bound clipped to 1")
    delta_bound = max(_variation(s_t, tpr), _variation(s_f, fpr))
    if delta_bound == math.inf:
        notes.append(
            "delta_bound = max(CV_TPR, CV_FPR) is infinite (undefined): CV_FPR = "
            "sigma_fpr/fpr with fpr = 0 and sigma_fpr > 0"
        )
    return PrecisionBand(
        tpr_lower=tpr_lower,
        tpr_upper=tpr_upper,
        fpr_lower=fpr_lower,
        fpr_upper=fpr_upper,
        fpr_tpr_ratio_upper=ratio_upper,
        fpr_tpr_ratio_lower=ratio_lower,
        delta=delta,
        eta_star=eta_star,
        delta_bound=delta_bound,
        note="; ".join(notes),
    )


# --- Appendix B: planning the FPR's precision ---------------------------------------------


def largest_cv_fpr(target_delta: float, cv_tpr: float) -> float:
    """Largest ``CV_FPR`` keeping the band's maximal width at ``target_delta`` (Appendix B).

    ``CV_FPR = ((CV_TPR+1)(1+kap) - 2) / ((CV_TPR+1)(1-kap) - 2)``,
    ``kap = ((1-Delta)/(1+Delta))^2``; the exact inverse of :func:`max_band_width`.

    Raises
    ------
    InputError
        When ``cv_tpr`` alone already makes the band wider than ``target_delta`` (even an
        exactly known FPR cannot help): it must stay below ``(1-kap)/(1+kap)``.
    """
    delta = validation.open_unit("target delta", target_delta)
    c_t = validation.non_negative("cv_tpr", cv_tpr)
    kap = ((1.0 - delta) / (1.0 + delta)) ** 2
    largest_cv_tpr = (1.0 - kap) / (1.0 + kap)
    if c_t >= largest_cv_tpr:
        raise InputError(
            f"cv_tpr = {c_t:.4g} alone gives a band wider than delta = {delta:.4g}: it must be "
            f"below {largest_cv_tpr:.4g} (label more actual positives first)"
        )
    return ((c_t + 1.0) * (1.0 + kap) - 2.0) / ((c_t + 1.0) * (1.0 - kap) - 2.0)


def negatives_for_fpr_cv(fpr: float, cv_fpr: float, confidence: float = 0.95) -> int:
    """Actual negatives to label so FPR's half-width is ``cv_fpr*FPR`` (Appendix B).

    For a binomial rate the normal half-width is ``z*sqrt(FPR(1-FPR)/N-)``; setting it to
    ``CV_FPR*FPR`` gives ``N- = z^2 (1-FPR) / (FPR CV_FPR^2)``, rounded up.
    """
    rate = validation.open_unit("fpr", fpr)
    cv = validation.positive("cv_fpr", cv_fpr)
    z = validation.z_value(confidence)
    needed = z * z * (1.0 - rate) / (rate * cv * cv)
    # A value that is a whole number up to rounding error must not gain one more item.
    return math.ceil(needed * (1.0 - 1e-12))


@dataclass(frozen=True, slots=True, kw_only=True)
class FprLabelingPlan:
    """How precisely FPR must be known for a target band width (Appendix B).

    Attributes
    ----------
    target_delta : float
        Wanted maximal width of the precision band over all prevalences.
    cv_tpr : float
        Known coefficient of variation of TPR.
    cv_fpr : float
        The largest affordable ``CV_FPR``.
    fpr : float
        Expected FPR.
    sigma_fpr : float
        The half-width that CV allows, ``cv_fpr * fpr``.
    confidence : float
        Level of the FPR interval.
    negatives : int
        Actual negatives to label, ``ceil(z^2 (1-FPR)/(FPR CV_FPR^2))``.
    """

    target_delta: float
    cv_tpr: float
    cv_fpr: float
    fpr: float
    sigma_fpr: float
    confidence: float
    negatives: int

    def to_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in self.__slots__}


def plan_fpr_labeling(
    target_delta: float, cv_tpr: float, fpr: float, confidence: float = 0.95
) -> FprLabelingPlan:
    """ "To know precision within ``Delta`` at any prevalence, label this many negatives"."""
    cv_fpr = largest_cv_fpr(target_delta, cv_tpr)
    level = validation.confidence(confidence)
    return FprLabelingPlan(
        target_delta=float(target_delta),
        cv_tpr=float(cv_tpr),
        cv_fpr=cv_fpr,
        fpr=float(fpr),
        sigma_fpr=cv_fpr * fpr,
        confidence=level,
        negatives=negatives_for_fpr_cv(fpr, cv_fpr, level),
    )


# --- 2.2 the P3 curve --------------------------------------------------------------------


def prevalence_grid(
    eta_min: float = DEFAULT_ETA_MIN, eta_max: float = DEFAULT_ETA_MAX, points: int = DEFAULT_POINTS
) -> np.ndarray:
    """Log-spaced prevalences from ``eta_min`` to ``eta_max`` inclusive (methods §11)."""
    low = validation.open_unit("eta_min", eta_min)
    high = validation.open_unit("eta_max", eta_max)
    if low >= high:
        raise InputError(f"eta_min ({low}) must be smaller than eta_max ({high})")
    count = validation.whole_at_least("points", points, 2, validation.MAX_POINTS)
    return np.geomspace(low, high, count)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class P3Curve:
    """Positive-prevalence precision curve of one operating point (Brabec et al., 3.1).

    Attributes
    ----------
    point : OperatingPoint
        The rates (and sigmas) the curve was drawn from.
    prevalence : numpy.ndarray
        The log grid of ``eta``.
    precision, f1 : numpy.ndarray
        ``Prec(eta)`` and ``F1(eta)`` along the grid (methods §11).
    lower, upper : numpy.ndarray or None
        ``LB(eta)``, ``UB(eta)`` of methods §11; ``None`` without sigmas.
    band : PrecisionBand or None
        ``Delta``, ``eta*`` and the CV bound; ``None`` without sigmas.
    calibrated : CalibratedMetrics or None
        Metrics at the reference prevalence, when one was asked for.
    """

    point: OperatingPoint
    prevalence: np.ndarray
    precision: np.ndarray
    f1: np.ndarray
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None
    band: PrecisionBand | None = None
    calibrated: CalibratedMetrics | None = None

    def to_dict(self) -> dict[str, object]:
        """The ``prplanner p3 --json`` object (its JSON contract); NaN means null."""
        band = self.band
        lower = self.lower if self.lower is not None else np.full_like(self.prevalence, np.nan)
        upper = self.upper if self.upper is not None else np.full_like(self.prevalence, np.nan)
        result: dict[str, object] = {
            "tpr": self.point.tpr,
            "fpr": self.point.fpr,
            "sigma_tpr": self.point.sigma_tpr,
            "sigma_fpr": self.point.sigma_fpr,
            "delta": None if band is None else band.delta,
            "eta_star": None if band is None else band.eta_star,
            "delta_bound": None if band is None else band.delta_bound,
            "curve": [
                {"eta": e, "precision": p, "lower": lo, "upper": up, "f1": f}
                for e, p, lo, up, f in zip(
                    self.prevalence.tolist(),
                    self.precision.tolist(),
                    lower.tolist(),
                    upper.tolist(),
                    self.f1.tolist(),
                    strict=True,
                )
            ],
        }
        if self.calibrated is not None:
            calibrated: dict[str, object] = dict(self.calibrated.to_dict())
            if band is not None:
                # The band at the reference prevalence, as the text output and the report
                # give it beside the calibrated precision (added to the contract's keys).
                low, high = band.bounds_at(self.calibrated.reference_prevalence)
                calibrated["precision_band"] = [_json_number(low), _json_number(high)]
            result["calibrated"] = calibrated
        # Beyond the contract keys: why a band value deserves care or is null.
        result["notes"] = [] if band is None or not band.note else band.note.split("; ")
        return result

    def at_round_prevalences(self) -> list[P3Row]:
        """Closed-form precision, band and F1 at the round prevalences
        (:data:`ROUND_PREVALENCES`) inside the curve's range, for a table a lead reads.

        The range's ends are added when fewer than two round prevalences fall inside it,
        and the prevalence of the widest band (``eta*``) when it is inside. The values are
        computed at those prevalences (methods §11), not picked off the grid.
        """
        eta_min, eta_max = float(self.prevalence[0]), float(self.prevalence[-1])
        point, band = self.point, self.band
        etas = [eta for eta in ROUND_PREVALENCES if eta_min <= eta <= eta_max]
        if len(etas) < 2:
            etas = sorted({eta_min, *etas, eta_max})
        star = None
        if (
            band is not None
            and math.isfinite(band.eta_star)
            and eta_min <= band.eta_star <= eta_max
        ):
            star = band.eta_star
            etas = sorted({*etas, star})
        grid = np.asarray(etas, dtype=float)
        precision = _precision_unchecked(point.tpr, point.fpr, grid)
        f1 = _f_beta_unchecked(point.tpr, point.fpr, grid, 1.0)
        lower: list[float | None]
        upper: list[float | None]
        if band is not None:
            low, high = _band_bounds_unchecked(band, grid)
            lower, upper = low.tolist(), high.tolist()
        else:
            lower = upper = [None] * len(etas)
        return [
            P3Row(
                prevalence=eta,
                precision=float(p),
                lower=lo,
                upper=up,
                f1=float(f),
                is_eta_star=eta == star,
            )
            for eta, p, lo, up, f in zip(etas, precision, lower, upper, f1, strict=True)
        ]


#: Prevalences a P3 table shows (those inside the curve's range).
ROUND_PREVALENCES = (1e-5, 1e-4, 1e-3, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)


class P3Row(NamedTuple):
    """One line of a P3 table: precision, its band (``None`` without sigmas) and F1 at a
    prevalence; ``is_eta_star`` marks the prevalence of the widest band."""

    prevalence: float
    precision: float
    lower: float | None
    upper: float | None
    f1: float
    is_eta_star: bool


def p3_curve(
    point: OperatingPoint,
    *,
    eta_min: float = DEFAULT_ETA_MIN,
    eta_max: float = DEFAULT_ETA_MAX,
    points: int = DEFAULT_POINTS,
    reference_prevalence: float | None = None,
) -> P3Curve:
    """Precision, F1 and (with sigmas) the band along a log prevalence grid (methods §11, 2.3)."""
    eta = prevalence_grid(eta_min, eta_max, points)
    band = precision_band(point) if point.has_sigmas else None
    lower, upper = _band_bounds_unchecked(band, eta) if band is not None else (None, None)
    calibrated = (
        None
        if reference_prevalence is None
        else calibrated_metrics(point.tpr, point.fpr, reference_prevalence)
    )
    return P3Curve(
        point=point,
        prevalence=eta,
        precision=_precision_unchecked(point.tpr, point.fpr, eta),
        f1=_f_beta_unchecked(point.tpr, point.fpr, eta, 1.0),
        lower=lower,
        upper=upper,
        band=band,
        calibrated=calibrated,
    )


# --- several operating points: curves and exact rank swaps ---------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RankSwap:
    """A prevalence at which two operating points swap ranks in one metric.

    Attributes
    ----------
    first, second : str
        Names of the two points (their index when unnamed).
    metric : str
        ``"precision"`` or ``"f_beta"``.
    beta : float
        The F-beta's ``beta`` (1 for F1; kept for precision too, where it plays no role).
    prevalence, ratio : float
        Where the two curves meet, ``eta`` and ``r = eta/(1-eta)``.
    value : float
        The common metric value there.
    better_below, better_above : str
        The name ranked higher for prevalences below / above the swap.
    """

    first: str
    second: str
    metric: str
    beta: float
    prevalence: float
    ratio: float
    value: float
    better_below: str
    better_above: str

    def to_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}


def _label(point: OperatingPoint, index: int) -> str:
    return point.name or f"#{index}"


def _f_beta_crossing_ratio(first: OperatingPoint, second: OperatingPoint, beta2: float) -> float:
    """The class ratio where two F-beta curves meet, or NaN when they never do.

    With ``u = 1/r``, ``F_A > F_B`` iff ``t_A (t_B + b^2 + f_B u) > t_B (t_A + b^2 + f_A u)``
    (denominators are positive), i.e. iff ``b^2 (t_A - t_B) + u (t_A f_B - t_B f_A) > 0``:
    linear in ``u``, so the curves cross at most once, at
    ``u* = b^2 (t_B - t_A) / (t_A f_B - t_B f_A)``, which must be > 0.
    """
    t_a, f_a, t_b, f_b = first.tpr, first.fpr, second.tpr, second.fpr
    slope = t_a * f_b - t_b * f_a
    offset = beta2 * (t_a - t_b)
    if slope == 0.0 or offset == 0.0 or (slope > 0.0) == (offset > 0.0):
        return math.nan
    return -slope / offset  # r* = 1/u* = (t_A f_B - t_B f_A) / (b^2 (t_B - t_A))


def rank_swaps(
    first: OperatingPoint,
    second: OperatingPoint,
    *,
    metric: str = "f_beta",
    beta: float = 1.0,
    names: tuple[str, str] | None = None,
) -> tuple[RankSwap, ...]:
    """Prevalences in ``(0, 1)`` where two points swap ranks, found in closed form.

    Precision never swaps: ``Prec = 1/(1 + (FPR/TPR)/r)``, so the point with the smaller
    ``FPR/TPR`` is ahead at every prevalence, and equal ratios give identical curves.
    F-beta swaps at most once (see :func:`_f_beta_crossing_ratio`): when the point with the
    higher TPR has the larger ``FPR/TPR``, it wins at high prevalence (recall dominates)
    and loses at low prevalence (precision dominates) -- Brabec et al., Figure 3.

    Returns
    -------
    tuple of RankSwap
        Empty or one swap.
    """
    if metric not in RANK_METRICS:
        raise InputError(f"metric must be one of {', '.join(RANK_METRICS)}, got {metric!r}")
    beta2 = _beta(beta) ** 2
    name_a, name_b = names or (_label(first, 0), _label(second, 1))
    if metric == "precision":
        return ()
    ratio = _f_beta_crossing_ratio(first, second, beta2)
    if not math.isfinite(ratio):
        return ()
    eta = ratio / (1.0 + ratio)
    if not 0.0 < eta < 1.0:  # r* so extreme that eta rounds to 0 or 1: not representable
        return ()
    value = float(_f_beta_unchecked(first.tpr, first.fpr, eta, beta2))
    # Below the swap (large u = 1/r) the sign of t_A f_B - t_B f_A decides.
    first_better_below = first.tpr * second.fpr - second.tpr * first.fpr > 0.0
    below, above = (name_a, name_b) if first_better_below else (name_b, name_a)
    return (
        RankSwap(
            first=name_a,
            second=name_b,
            metric=metric,
            beta=math.sqrt(beta2),
            prevalence=eta,
            ratio=ratio,
            value=value,
            better_below=below,
            better_above=above,
        ),
    )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class PrevalenceComparison:
    """Precision and F-beta of several operating points against prevalence (methods §11).

    Attributes
    ----------
    names : tuple of str
        One per operating point (index ``#i`` when unnamed).
    prevalence : numpy.ndarray
        The log grid, shape ``(m,)``.
    precision, f_beta : numpy.ndarray
        Shape ``(len(names), m)``.
    beta : float
        The F-beta's ``beta``.
    swaps : tuple of RankSwap
        Every F-beta rank swap between two points inside the grid's range (precision never
        swaps; see :func:`rank_swaps`), sorted by prevalence.
    """

    names: tuple[str, ...]
    prevalence: np.ndarray
    precision: np.ndarray
    f_beta: np.ndarray
    beta: float
    swaps: tuple[RankSwap, ...] = field(default=())


def compare_across_prevalence(
    points: Sequence[OperatingPoint],
    *,
    beta: float = 1.0,
    eta_min: float = DEFAULT_ETA_MIN,
    eta_max: float = DEFAULT_ETA_MAX,
    grid_points: int = DEFAULT_POINTS,
) -> PrevalenceComparison:
    """Curves of several classifiers on one prevalence grid, with their exact rank swaps."""
    points = list(points)
    if not points:
        raise InputError("give at least one operating point")
    beta2 = _beta(beta) ** 2
    eta = prevalence_grid(eta_min, eta_max, grid_points)
    names = tuple(_label(point, index) for index, point in enumerate(points))
    tpr = np.array([point.tpr for point in points])[:, None]
    fpr = np.array([point.fpr for point in points])[:, None]
    swaps = []
    for (i, a), (j, b) in combinations(enumerate(points), 2):
        for swap in rank_swaps(a, b, beta=beta, names=(names[i], names[j])):
            if eta[0] <= swap.prevalence <= eta[-1]:
                swaps.append(swap)
    return PrevalenceComparison(
        names=names,
        prevalence=eta,
        precision=_precision_unchecked(tpr, fpr, eta),
        f_beta=_f_beta_unchecked(tpr, fpr, eta, beta2),
        beta=math.sqrt(beta2),
        swaps=tuple(sorted(swaps, key=lambda swap: swap.prevalence)),
    )
