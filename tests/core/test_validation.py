"""Argument checks: what passes, what is refused, and that messages name the value."""

import math
import re

import pytest
from scipy.stats import norm

from core import validation
from core.errors import InputError


def test_z_value_matches_the_normal_quantile():
    assert validation.z_value(0.95) == pytest.approx(1.959963984540054)
    assert validation.z_value(0.90) == pytest.approx(norm.ppf(0.95))


@pytest.mark.parametrize("bad", [0.5, 1.0, 95, -0.1, "0.95", True])
def test_confidence_outside_half_to_one_is_refused(bad):
    with pytest.raises(InputError, match=r"confidence must be strictly between 0\.5 and 1"):
        validation.confidence(bad)


@pytest.mark.parametrize("bad", [0.0, 0.5, 0.7, -0.01])
def test_margin_outside_zero_to_half_is_refused(bad):
    with pytest.raises(
        InputError, match=r"margin must be strictly between 0 and 0.5 \(e.g. 0.05\), got"
    ):
        validation.margin("margin", bad)


def test_counts_accept_integral_floats_and_refuse_the_rest():
    assert validation.count("tp", 3.0) == 3
    assert isinstance(validation.count("tp", 3.0), int)
    for bad in (-1, 2.5, float("inf"), None, True):
        with pytest.raises(InputError, match="tp must be a whole number >= 0"):
            validation.count("tp", bad)


def test_open_unit_and_positive():
    assert validation.open_unit("precision", 0.9) == 0.9
    for bad in (0, 1, 1.2):
        with pytest.raises(InputError, match="precision must be strictly between 0 and 1"):
            validation.open_unit("precision", bad)
    with pytest.raises(InputError, match="s must be a number > 0, got 0"):
        validation.positive("s", 0)


@pytest.mark.parametrize(
    ("check", "args", "said"),
    [
        (validation.count, ("plan.v", 10**400), "at most 10^15"),
        (validation.whole_at_least, ("trials", 10**400, 1), "at most 10^15"),
        (validation.positive, ("k", 10**400), "below 10^308"),
        (validation.non_negative, ("cost", 10**400), "below 10^308"),
        (validation.open_unit, ("precision", 10**400), "strictly between 0 and 1"),
        (validation.seed, (10**400,), "2^64 - 1"),
    ],
)
def test_a_400_digit_number_is_refused_by_its_length_not_an_overflow(check, args, said):
    # From a workbook or a recovery file: math.isfinite raised OverflowError, "internal
    # error" in the CLI and a whole session lost in the app (fuzz 13).
    with pytest.raises(InputError, match=re.escape(said)) as caught:
        check(*args)
    assert "a number of 401 digits" in str(caught.value)


def test_a_number_beyond_pythons_digit_limit_is_refused_not_raised():
    # repr() of a 5,000-digit int raises ValueError (review 13).
    with pytest.raises(InputError, match="a number of about 5,001 digits"):
        validation.count("n", 10**5000)


@pytest.mark.parametrize("text", ["3.000", "+3.000", "３.０００", " 41.200 "])
def test_a_count_with_a_point_between_thousands_is_ambiguous(text):
    # Read as 3 by float(); full-width digits and a sign slipped past (fuzz 14, recheck 14).
    from core.validation import ambiguous_count

    assert "is ambiguous for a count" in ambiguous_count(text)


@pytest.mark.parametrize("text", ["3", "3.0", "3.00", "0.500", "1.251.000", "3.000e0", 3.0])
def test_other_numbers_are_not_called_ambiguous(text):
    from core.validation import ambiguous_count

    assert ambiguous_count(text) is None


@pytest.mark.parametrize("level", [0.9999999999999999, 0.99999999, 0.9999991])
def test_a_confidence_too_near_1_for_a_quantile_is_refused(level):
    # Fuzz 16: 0.9999999999999999 passed (0.5, 1); 0.5 + c/2 rounded to 1 and every
    # command ended in an internal error.
    from core import validation

    with pytest.raises(InputError, match=r"must be at most 0\.999999"):
        validation.confidence(level, "--confidence")
    assert math.isfinite(validation.z_value(validation.MAX_CONFIDENCE))
