"""Numbers as people read them (spec 4.3): percentages with sensible digits, thousands."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal


def percent(value: float | None, digits: int | None = None) -> str:
    """``0.8625 -> "86.3 %"``; small rates keep significant digits (``0.00463 -> "0.463 %"``)."""
    if value is None or not math.isfinite(value):
        return "–"
    # Decimal from the shortest repr, so 0.8625 shows as 86.3 % (half up), not 86.2 %.
    pct = Decimal(repr(float(value))) * 100
    if digits is None:
        magnitude = abs(pct)
        digits = 1 if magnitude >= 10 or magnitude == 0 else 2 if magnitude >= 1 else 3
    rounded = pct.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return f"{rounded} %"


def interval(lower: float | None, upper: float | None, digits: int | None = None) -> str:
    return f"{percent(lower, digits)} – {percent(upper, digits)}"


def thousands(value: float | int | None) -> str:
    """``1251000 -> "1,251,000"``; non-integers keep up to 3 significant decimals."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.3g}" if abs(value) < 1 else f"{value:,.2f}"


def ratio(value: float | None) -> str:
    """An over-sampling ratio or ``k``: 3 significant digits, ``1/x`` form for small k."""
    if value is None or not math.isfinite(value):
        return "–"
    if 0 < value < 0.2:
        return f"{value:.3g} (1/{1 / value:.3g})"
    return f"{value:.3g}"


def parse_count(text: str) -> int:
    """A whole number typed or pasted by a person: ``"39,800"``, ``"1 251 000"``, ``"225"``.

    Raises ``ValueError`` with the reason shown at the cell.
    """
    cleaned = text.strip()
    for separator in (",", "\u00a0", "\u202f", " ", "'", "_"):
        cleaned = cleaned.replace(separator, "")
    if not cleaned:
        raise ValueError("empty: type a whole number")
    try:
        number = float(cleaned)
    except ValueError:
        raise ValueError(f"'{text.strip()}' is not a number") from None
    if not math.isfinite(number):
        raise ValueError(f"'{text.strip()}' is not a finite number")
    if number < 0:
        raise ValueError(f"{text.strip()} is negative: counts are >= 0")
    if not number.is_integer():
        raise ValueError(f"{text.strip()} is fractional: counts are whole numbers")
    return int(number)
