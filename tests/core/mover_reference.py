"""An FPR interval from the two strata's Wilson intervals, computed independently of the
product: statsmodels' Wilson intervals and root-finding on the ratio's defining equation
(the product solves the same quadratic in closed form; methods §4)."""

from __future__ import annotations

import math

from scipy import optimize
from statsmodels.stats.proportion import proportion_confint


def _wilson(count, trials, confidence):
    return proportion_confint(count, trials, alpha=1 - confidence, method="wilson")


def _ratio_bound(t1, b1, t0, b0, side):
    """Root of ``(t1 - r t0)^2 - (t1 - b1)^2 - r^2 (t0 - b0)^2`` below (or above) t1/t0."""

    def gap(r):
        return (t1 - r * t0) ** 2 - (t1 - b1) ** 2 - r**2 * (t0 - b0) ** 2

    estimate = t1 / t0
    if side == "lower":
        return 0.0 if gap(0.0) <= 0 else optimize.brentq(gap, 0.0, estimate, xtol=1e-15)
    far = estimate * 2 + 1
    while gap(far) < 0:
        far *= 2
        if far > 1e12:
            return math.inf
    return optimize.brentq(gap, estimate, far, xtol=1e-15)


def mover_wilson_fpr(tp, fp, fn, tn, k, confidence=0.95, fpc=(1.0, 1.0)):
    n1, n0 = tp + fp, fn + tn
    t1, t0 = fp / n1, tn / n0
    # Wilson for n/f trials: the same share, n/f trials (statsmodels takes float counts).
    l1, u1 = _wilson(t1 * n1 / fpc[0], n1 / fpc[0], confidence)
    l0, u0 = _wilson(t0 * n0 / fpc[1], n0 / fpc[1], confidence)
    l1, u1 = (0.0 if fp == 0 else l1), (1.0 if fp == n1 else u1)
    l0, u0 = (0.0 if tn == 0 else l0), (1.0 if tn == n0 else u0)
    r_low = _ratio_bound(t1, l1, t0, u0, "lower")
    r_high = _ratio_bound(t1, u1, t0, l0, "upper")

    def fpr(r):
        return 1.0 if math.isinf(r) else k * r / (k * r + 1)

    return fpr(r_low), fpr(r_high)
