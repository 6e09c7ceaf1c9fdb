"""The prior editor's Beta density (closed form in logs) against ``scipy.stats.beta``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta

from core.bayes import beta_density, log_beta
from core.errors import InputError

GRID = np.concatenate(
    (np.logspace(-6, -1, 300), np.linspace(0.1, 0.9, 300), 1 - np.logspace(-1, -6, 300))
)


@pytest.mark.parametrize(
    ("a", "b", "rtol"),
    [
        (0.5, 0.5, 1e-12),  # Jeffreys: infinite at both ends
        (1.0, 1.0, 1e-12),  # uniform
        (1e-3, 5.0, 1e-12),  # a near-zero prior count
        (2.0, 30.0, 1e-12),
        (138.0, 22.0, 1e-11),  # a past round as the prior
        (5_000.0, 100.0, 1e-10),
        (1e5, 3e5, 1e-8),  # a past round of 400,000 items: display accuracy
    ],
)
def test_density_matches_scipy_stats(a, b, rtol):
    ours = beta_density(a, b, GRID)
    reference = beta.pdf(GRID, a, b)
    shown = reference > 1e-250  # far tails underflow differently; the plot cannot show them
    np.testing.assert_allclose(ours[shown], reference[shown], rtol=rtol)


def test_log_beta_by_hand():
    # B(2, 3) = 1!*2!/4! = 1/12 and B(1/2, 1/2) = pi.
    assert log_beta(2.0, 3.0) == pytest.approx(math.log(1 / 12), rel=1e-15)
    assert log_beta(0.5, 0.5) == pytest.approx(math.log(math.pi), rel=1e-15)


def test_a_huge_prior_gives_inf_at_its_peak_without_a_warning():
    density = beta_density(1e9, 1e9, np.array([0.25, 0.5]))
    assert density[0] == 0.0 and not np.isnan(density[1])


@pytest.mark.parametrize(("a", "b"), [(0.0, 1.0), (1.0, -2.0), (math.nan, 1.0)])
def test_improper_parameters_are_refused(a, b):
    with pytest.raises(InputError, match="must be a number > 0"):
        beta_density(a, b, GRID)
