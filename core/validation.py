"""Argument checks shared by every ``core`` entry point (habit 3).

Each check returns the cleaned value or raises :class:`core.errors.InputError` whose
message names the parameter and the value it got.
"""

from __future__ import annotations

import math
import numbers
import re
import unicodedata
from functools import lru_cache
from statistics import NormalDist
from typing import TypeGuard

from core.errors import InputError

_STANDARD_NORMAL = NormalDist()

#: Largest count (labels, population, cells): above it a float no longer holds every whole
#: number exactly, and no labeling round is that large. The rounds reader uses the same.
MAX_COUNT = 10**15
#: Range of the imbalance ratio k = N1/N0: beyond it one stratum is a trillion times the
#: other, and the formulas' divisions overflow or lose every digit.
MIN_K = 1e-12
MAX_K = 1e12
#: Smallest margin of error: 1e-6 already asks for about 10^12 labels.
MIN_MARGIN = 1e-6
#: Upper limits of the resampling sizes: each run stays within about a minute and 1 GB.
MAX_REPLICATES = 1_000_000
MAX_REPS = 1_000_000
MAX_POINTS = 100_000

#: Control characters no workbook cell can hold (and no file name has); tab, line feed and
#: carriage return are allowed.
CONTROL_CHARACTER = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
#: Lone surrogates (what Python makes of a byte that is not UTF-8, e.g. in a command-line
#: argument) and the non-characters U+FFFE and U+FFFF: no workbook can store them.
NOT_TEXT = re.compile(r"[\ud800-\udfff\ufffe\uffff]")


def _is_real(value: object) -> TypeGuard[float]:
    """A real number (int, float, numpy's), not a bool; typed as float for the checks."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _is_whole(value: object) -> TypeGuard[int]:
    """An integer of any size (int, numpy's), not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _finite(value: object) -> TypeGuard[float]:
    """A real number that is finite as a float. An int above about 10^308 is not: it has
    no float, and ``math.isfinite`` raises OverflowError on it (a 400-digit number read
    from a workbook or a recovery file)."""
    if not _is_real(value):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def count(name: str, value: object) -> int:
    """A whole number >= 0 (``3`` and ``3.0`` pass; ``-1``, ``2.5``, ``"x"`` do not)."""
    if _is_whole(value) and value > MAX_COUNT:
        raise InputError(
            f"{name} must be at most 10^15 (larger counts are beyond exact arithmetic), "
            f"got {_shown(value)}"
        )
    if _finite(value) and float(value).is_integer() and value >= 0:
        if value > MAX_COUNT:
            raise InputError(
                f"{name} must be at most 10^15 (larger counts are beyond exact arithmetic), "
                f"got {_shown(value)}"
            )
        return int(value)
    raise InputError(f"{name} must be a whole number >= 0, got {_shown(value)}")


def seed(value: object, name: str = "seed") -> int:
    """A random seed: a whole number in ``[0, 2**64)`` (any bit pattern of a 64-bit seed)."""
    if _is_whole(value) and 0 <= value < 2**64:
        return int(value)
    if _is_real(value) and _finite(value) and float(value).is_integer() and 0 <= value < 2**64:
        return int(value)
    raise InputError(f"{name} must be a whole number from 0 to 2^64 - 1, got {_shown(value)}")


def _shown(value: object) -> str:
    """``value`` for a message: a 400-digit number is named by its length, not printed."""
    if _is_whole(value) and abs(int(value)).bit_length() > 14_000:
        # repr() of an int of more than 4,300 digits raises ValueError: counted without it.
        digits = int(abs(int(value)).bit_length() * math.log10(2)) + 1
        return f"a number of about {digits:,} digits"
    text = repr(value)
    digits = sum(character.isdigit() for character in text)
    if digits > 20 and "e" not in text:
        return f"a number of {digits:,} digits"
    return text if len(text) <= 40 else text[:40] + "..."


def positive(name: str, value: object) -> float:
    """A finite number > 0."""
    if _finite(value) and value > 0:
        return float(value)
    if _is_real(value) and value > 0:
        raise InputError(f"{name} must be a number > 0 below 10^308, got {_shown(value)}")
    raise InputError(f"{name} must be a number > 0, got {_shown(value)}")


def imbalance(name: str, value: object) -> float:
    """The imbalance ratio ``k = N1/N0``: a number in ``[1e-12, 1e12]``."""
    k = positive(name, value)
    if not MIN_K <= k <= MAX_K:
        raise InputError(
            f"{name} must be between {MIN_K:g} and {MAX_K:g} (one stratum at most a trillion "
            f"times the other), got {k:g}"
        )
    return k


#: Range of the over-sampling ratio s: beyond it the sample is, for every purpose, one
#: stratum only (and k*s overflows or underflows).
MIN_S = 1e-6
MAX_S = 1e6


def oversampling(name: str, value: object) -> float:
    """The over-sampling ratio ``s``: a number in ``[1e-6, 1e6]``."""
    s = positive(name, value)
    if not MIN_S <= s <= MAX_S:
        raise InputError(f"{name} must be between {MIN_S:g} and {MAX_S:g}, got {s:g}")
    return s


#: Range of a prior's strength and pseudo-counts: smaller ones vanish in the arithmetic
#: (a Beta density with 1e-308 pseudo-counts); a strength above 1e9 (a prior worth
#: 10^11 labels) drowns any data, and pseudo-counts stay within 1e18 so sums stay finite.
MIN_PRIOR = 1e-9
MAX_PRIOR_STRENGTH = 1e9
MAX_PSEUDO_COUNT = 1e18


def prior_weight(name: str, value: object, *, pseudo_count: bool = False) -> float:
    """A prior strength in ``[1e-9, 1e9]``, or with ``pseudo_count`` a pseudo-count that
    is 0 or in ``[1e-9, 1e18]``."""
    weight = non_negative(name, value)
    if pseudo_count and weight == 0:
        return 0.0
    high = MAX_PSEUDO_COUNT if pseudo_count else MAX_PRIOR_STRENGTH
    if not MIN_PRIOR <= weight <= high:
        low = "0 or " if pseudo_count else ""
        raise InputError(f"{name} must be {low}between {MIN_PRIOR:g} and {high:g}, got {weight:g}")
    return weight


def non_negative(name: str, value: object) -> float:
    """A finite number >= 0."""
    if _finite(value) and value >= 0:
        return float(value)
    if _is_real(value) and value > 0:
        raise InputError(f"{name} must be a number >= 0 below 10^308, got {_shown(value)}")
    raise InputError(f"{name} must be a number >= 0, got {_shown(value)}")


#: Rates closer to 0 or 1 than this are refused: their odds overflow the formulas, and no
#: classifier is measured to twelve digits.
RATE_EDGE = 1e-12


def open_unit(name: str, value: object) -> float:
    """A probability strictly inside (0, 1), at least 1e-12 away from both ends."""
    if _is_real(value) and RATE_EDGE <= value <= 1 - RATE_EDGE:
        return float(value)
    if _is_real(value) and 0 < value < 1:
        raise InputError(
            f"{name} must be between {RATE_EDGE:g} and 1 - {RATE_EDGE:g}, got {_shown(value)}"
        )
    raise InputError(f"{name} must be strictly between 0 and 1, got {_shown(value)}")


#: The highest confidence level taken. Closer to 1, 0.5 + c/2 rounds to 1 in floating
#: point and the normal quantile has no value: 0.9999999999999999 passed the (0.5, 1)
#: check and ended in an internal error everywhere (fuzz 16).
MAX_CONFIDENCE = 0.999999


def confidence(value: object, name: str = "confidence") -> float:
    """A confidence (or credibility) level in (0.5, 1), at most :data:`MAX_CONFIDENCE`."""
    if _is_real(value) and 0.5 < value < 1:
        if value > MAX_CONFIDENCE:
            raise InputError(
                f"{name} must be at most {MAX_CONFIDENCE} (99.9999 %; nearer 1 the intervals "
                f"have no end), got {_shown(value)}"
            )
        return float(value)
    raise InputError(f"{name} must be strictly between 0.5 and 1 (e.g. 0.95), got {_shown(value)}")


def margin(name: str, value: object) -> float:
    """A margin of error (interval half-width) in (0, 0.5)."""
    if _is_real(value) and MIN_MARGIN <= value < 0.5:
        return float(value)
    if _is_real(value) and 0 < value < MIN_MARGIN:
        raise InputError(
            f"{name} must be at least {MIN_MARGIN:g} (a margin that small needs more than "
            f"10^12 labels), got {_shown(value)}"
        )
    raise InputError(f"{name} must be strictly between 0 and 0.5 (e.g. 0.05), got {_shown(value)}")


def whole_at_least(name: str, value: object, minimum: int, maximum: int | None = None) -> int:
    """A whole number >= ``minimum`` and, when given, <= ``maximum`` (replicate counts,
    sample sizes, trials)."""
    if not (_is_whole(value) or (_finite(value) and float(value).is_integer())):
        raise InputError(f"{name} must be a whole number >= {minimum}, got {_shown(value)}")
    if value < minimum:
        raise InputError(f"{name} must be a whole number >= {minimum}, got {_shown(value)}")
    if maximum is not None and value > maximum:
        raise InputError(f"{name} must be at most {maximum:,}, got {_shown(value)}")
    return count(name, value)


@lru_cache(maxsize=64)
def z_value(level: float) -> float:
    """Two-sided normal quantile ``z = Phi^-1(1 - (1 - c)/2)`` (methods §2).

    ``statistics.NormalDist`` (Wichura's AS 241, within 1e-15 of ``scipy.special.ndtri``)
    rather than scipy: importing ``scipy.special`` pulls in ``numpy.f2py`` and
    ``numpy.testing`` (~0.25 s), which every headless command would pay for one quantile.
    """
    return _STANDARD_NORMAL.inv_cdf(0.5 + confidence(level) / 2.0)


#: A whole number with its thousands set off by one point (``3.000``), as much of Europe
#: writes it: three thousand, or three with decimals? (``1.251.000`` cannot be decimals.)
_DOT_THOUSANDS = re.compile(r"^[+]?[1-9]\d{0,2}\.\d{3}$")


def ambiguous_count(text: object) -> str | None:
    """Why ``text`` cannot be read as a count, when it looks like thousands set off by a
    point: ``3.000`` was read as 3 while ``41.200`` was refused (fuzz 14). ``None`` when it
    does not look so (or is no text). Full-width digits and a ``+`` are seen through."""
    if not isinstance(text, str) or len(text) > 40:
        return None
    shown = text.strip()
    if not _DOT_THOUSANDS.match(unicodedata.normalize("NFKC", shown)):
        return None
    whole_number = int(unicodedata.normalize("NFKC", shown).lstrip("+").replace(".", ""))
    return (
        f"{shown!r} is ambiguous for a count (a point between thousands, or decimals?): "
        f"for {whole_number:,} write {whole_number}; a count has no decimals"
    )
