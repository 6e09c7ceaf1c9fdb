"""Argument checks shared by every ``core`` entry point (habit 3).

Each check returns the cleaned value or raises :class:`core.errors.InputError` whose
message names the parameter and the value it got.
"""

from __future__ import annotations

import math
import numbers
from functools import lru_cache
from statistics import NormalDist

from core.errors import InputError

_STANDARD_NORMAL = NormalDist()


def _is_real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def count(name: str, value: object) -> int:
    """A whole number >= 0 (``3`` and ``3.0`` pass; ``-1``, ``2.5``, ``"x"`` do not)."""
    if _is_real(value) and math.isfinite(value) and float(value).is_integer() and value >= 0:
        return int(value)
    raise InputError(f"{name} must be a whole number >= 0, got {value!r}")


def positive(name: str, value: object) -> float:
    """A finite number > 0."""
    if _is_real(value) and math.isfinite(value) and value > 0:
        return float(value)
    raise InputError(f"{name} must be a number > 0, got {value!r}")


def non_negative(name: str, value: object) -> float:
    """A finite number >= 0."""
    if _is_real(value) and math.isfinite(value) and value >= 0:
        return float(value)
    raise InputError(f"{name} must be a number >= 0, got {value!r}")


def open_unit(name: str, value: object) -> float:
    """A probability strictly inside (0, 1)."""
    if _is_real(value) and 0 < value < 1:
        return float(value)
    raise InputError(f"{name} must be strictly between 0 and 1, got {value!r}")


def confidence(value: object) -> float:
    """A confidence (or credibility) level in (0.5, 1)."""
    if _is_real(value) and 0.5 < value < 1:
        return float(value)
    raise InputError(f"confidence must be strictly between 0.5 and 1 (e.g. 0.95), got {value!r}")


def margin(name: str, value: object) -> float:
    """A margin of error (interval half-width) in (0, 0.5)."""
    if _is_real(value) and 0 < value < 0.5:
        return float(value)
    raise InputError(f"{name} must be strictly between 0 and 0.5 (e.g. 0.05), got {value!r}")


def whole_at_least(name: str, value: object, minimum: int) -> int:
    """A whole number >= ``minimum`` (replicate counts, sample sizes, trials)."""
    cleaned = count(name, value) if _is_real(value) else None
    if cleaned is None or cleaned < minimum:
        raise InputError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return cleaned


@lru_cache(maxsize=64)
def z_value(level: float) -> float:
    """Two-sided normal quantile ``z = Phi^-1(1 - (1 - c)/2)`` (methods §2).

    ``statistics.NormalDist`` (Wichura's AS 241, within 1e-15 of ``scipy.special.ndtri``)
    rather than scipy: importing ``scipy.special`` pulls in ``numpy.f2py`` and
    ``numpy.testing`` (~0.25 s), which every headless command would pay for one quantile.
    """
    return _STANDARD_NORMAL.inv_cdf(0.5 + confidence(level) / 2.0)
