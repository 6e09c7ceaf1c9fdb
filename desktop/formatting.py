"""Numbers as people read them: percentages with sensible digits, thousands."""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Decimal

from core import validation
from core.validation import MAX_COUNT


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


def chance(value: float | None) -> str:
    """A probability for a readout, one decimal in every row: ``53.2 %``, never a rounded
    0 or 100 % (``< 0.1 %``, ``> 99.9 %``)."""
    if value is None or not math.isfinite(value):
        return "–"
    if 0.0 < value < 0.0005:
        return "< 0.1 %"
    if 0.9995 <= value < 1.0:
        return "> 99.9 %"
    return percent(value, 1)


def points(value: float | None, digits: int = 1) -> str:
    """A change in percentage points with its sign and a fixed number of decimals, so a
    column of changes reads alike: ``0.0156 -> "+1.6 pp"``, ``-0.00955 -> "−1.0 pp"``.

    A change that rounds to zero has no sign (``"0.0 pp"``); the minus is U+2212.
    """
    if value is None or not math.isfinite(value):
        return "–"
    pct = (Decimal(repr(float(value))) * 100).quantize(
        Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP
    )
    if pct == 0:
        return f"{abs(pct)} pp"
    return f"{'−' if pct < 0 else '+'}{abs(pct)} pp"


def points_interval(lower: float | None, upper: float | None, digits: int = 1) -> str:
    """``"−4.2 to +7.1 pp"``: the interval of a change, the unit once."""
    return f"{points(lower, digits).removesuffix(' pp')} to {points(upper, digits)}"


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


#: Thousands separators a person may type in a whole number.
_GROUP_SEPARATORS = ",\u00a0\u202f '_"
#: A whole number with one kind of separator between groups of three digits.
_GROUPED = re.compile(r"-?\d{1,3}(?:([,\u00a0\u202f '_])\d{3})(?:\1\d{3})*")


def parse_count(text: str) -> int:
    """A whole number typed or pasted by a person: ``"39,800"``, ``"1 251 000"``, ``"225"``.

    A separator must stand between groups of three digits: ``"1,5"`` is refused (a
    decimal comma?), not read as 15. Digits are read exactly (no float rounding).

    Raises ``ValueError`` with the reason shown at the cell.
    """
    shown = text.strip()
    cleaned = shown
    ambiguous = validation.ambiguous_count(shown)
    if ambiguous:
        raise ValueError(ambiguous)
    if any(separator in cleaned for separator in _GROUP_SEPARATORS):
        if not _GROUPED.fullmatch(cleaned):
            raise ValueError(
                f"{short_text(shown, 24)!r} is not a whole number: a separator goes between "
                "groups of three "
                "digits (1,251,000); counts have no decimals"
            )
        for separator in _GROUP_SEPARATORS:
            cleaned = cleaned.replace(separator, "")
    if not cleaned:
        raise ValueError("empty: type a whole number")
    digits = cleaned.removeprefix("-")
    if digits.isdecimal() and digits.isascii():
        if len(digits.lstrip("0")) > len(str(MAX_COUNT)):
            # Checked on the digits: a 400-digit int has no float, and Python refuses to
            # read 4,300 digits or more.
            raise ValueError(
                f"{short_text(shown, 24)} has {len(digits):,} digits: counts are at most 10^15"
            )
        return _whole_count(int(cleaned), shown)
    if re.fullmatch(r"-?\d{1,3}(?:\.\d{3}){2,}", cleaned, re.ASCII):
        plain = cleaned.replace(".", "")
        raise ValueError(
            f"{short_text(shown, 24)!r} has points between thousands: write {plain} or "
            f"{int(plain):,}"
        )
    try:
        number = float(cleaned)
    except ValueError:
        raise ValueError(f"{short_text(shown, 24)!r} is not a number") from None
    if not math.isfinite(number):
        raise ValueError(f"{short_text(shown, 24)!r} is not a finite number")
    if not number.is_integer():
        raise ValueError(f"{short_text(shown, 24)} is fractional: counts are whole numbers")
    return _whole_count(int(number), shown)


def _whole_count(number: int, shown: str) -> int:
    if number < 0:
        raise ValueError(f"{short_text(shown, 24)} is negative: counts are >= 0")
    if number > MAX_COUNT:
        raise ValueError(f"{short_text(shown, 24)} is more than 10^15, the largest count")
    return number


#: A number with thousands set off by commas, and perhaps decimals: ``1,251,000.5``.
_COMMA_GROUPED = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d*)?", re.ASCII)


def parse_number(text: str) -> float:
    """A real number typed or pasted by a person (a label cost, a prior's alpha, ``s``):
    ``1.5``, ``1,5`` (a decimal comma), ``1,000.5``, ``1 000``, ``1e-3``.

    A lone comma before exactly three digits (``1,500``: 1500, or 1.5 with a decimal
    comma?) is refused rather than guessed, as are commas that do not group thousands.
    Raises ``ValueError`` with the reason shown at the field.
    """
    shown = text.strip()
    cleaned = shown
    for ignored in (" ", "\u00a0", "\u202f", "\u2009"):
        cleaned = cleaned.replace(ignored, "")
    if not cleaned:
        raise ValueError("empty: type a number")
    quoted = repr(short_text(shown, 24))
    if "," in cleaned:
        if re.fullmatch(r"-?\d{1,3},\d{3}", cleaned, re.ASCII):
            whole, _, decimals = cleaned.partition(",")
            raise ValueError(
                f"{quoted} is ambiguous: write {whole}{decimals} for "
                f"{int(whole + decimals):,}, or {whole}.{decimals} with a decimal point"
            )
        if _COMMA_GROUPED.fullmatch(cleaned):
            cleaned = cleaned.replace(",", "")
        elif cleaned.count(",") == 1 and "." not in cleaned:
            cleaned = cleaned.replace(",", ".")  # a decimal comma: "0,5"
        else:
            raise ValueError(
                f"{quoted} is not a number: commas go between groups of three digits "
                "(1,000.5), or one stands for the decimal point (0,5)"
            )
    if not re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", cleaned, re.ASCII):
        raise ValueError(f"{quoted} is not a number")
    number = float(cleaned)
    if not math.isfinite(number):
        raise ValueError(f"{quoted} is not a finite number")
    return number


def parse_percent(text: str) -> float:
    """A percentage typed by a person, as a fraction: the rule of a percent-formatted cell
    in Excel with automatic percent entry.

    ``"85"``, ``"85 %"`` and ``"0.85"`` all mean 85 % (``0.85``): a number below 1 typed
    without a ``%`` sign is a fraction, 1 and above are percent. With a ``%`` sign the
    number is taken literally, so ``"0.5 %"`` stays 0.5 % (``0.005``). Thousands
    separators and spaces are ignored. Raises ``ValueError`` with the reason.
    """
    cleaned = text.strip()
    has_sign = "%" in cleaned
    for ignored in ("%", " ", "\u00a0", "\u202f"):
        cleaned = cleaned.replace(ignored, "")
    if not cleaned:
        raise ValueError("empty: type a percentage such as 85 or 0.85")
    if cleaned.count(",") == 1 and "." not in cleaned and not re.search(r",\d{3}$", cleaned):
        cleaned = cleaned.replace(",", ".")  # a decimal comma: "0,85"
    cleaned = cleaned.replace(",", "")
    try:
        number = float(cleaned)
    except ValueError:
        raise ValueError(f"'{text.strip()}' is not a percentage") from None
    if not math.isfinite(number):
        raise ValueError(f"'{text.strip()}' is not a finite number")
    if not has_sign and abs(number) < 1:
        return number
    return number / 100.0


#: Command-line wording in ``core`` messages and what the desktop app calls the same thing.
#: The fields that set each parameter ``core`` messages name (:data:`core.errors.PARAMETERS`),
#: installed by the main window (:func:`core.errors.use_words`).
FIELD_WORDS: dict[str, str] = {
    "population": "Predicted positive N1 and Predicted negative N0",
    "prior": "a prior preset",
    "counts": "its counts",
    "costs": "Label cost, flagged and Label cost, unflagged",
    "s": "s",
    "v": "v",
    "method=optimal": "the Optimal method",
    "fpc": "Finite population correction",
    "bayesian": "Bayesian predictive margins",
    "n_pos": "Flagged items (pred +)",
    "n_neg": "Unflagged items (pred −)",
    "n_parent": "the parent's sample size",
    "n_child": "the child's sample size",
    "seed": "Seed",
    "sql": "the SQL dialect",
    "table": "the table name",
    "id": "Item id",
    "predicted": "Predicted",
    "score": "Score",
    "threshold": "Threshold",
    "classifiers": "Other classifiers",
    "keep": "Keep for labelers",
    "show_strata": "untick Hide from the editors which items were flagged",
    # Not a flag: core's column_choice_advice says what to pick in the Columns… dialog.
    "column": "Columns… in the Rounds panel",
    "sheet": "the sheet",
    "classifier": "the classifier's name",
    "round": "the round's name",
    "update": "reading the labels again",
}


#: Longest name (round, classifier, note) shown in full in a label or table cell.
SHORT_TEXT_LIMIT = 60
#: Longest name in a plot legend (legends sit in columns under or inside small plots).
LEGEND_TEXT_LIMIT = 32


def short_text(text: object, limit: int = SHORT_TEXT_LIMIT) -> str:
    """``text`` on one line, cut to ``limit`` characters with "…" when longer.

    A cell of a workbook may hold 32,000 characters; shown in full it would stretch a
    label, a legend or a plot title (and the window with it) to hundreds of thousands of
    pixels. The full text stays available in tooltips and the data.
    """
    text = str(text)
    if len(text) <= limit and "\n" not in text and "\r" not in text:
        return text  # short names are shown exactly as typed
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: max(limit - 1, 1)].rstrip() + "…"


def level(value: float | None) -> str:
    """A confidence level as people say it: ``0.95 -> "95 %"``, ``0.995 -> "99.5 %"``
    (whole when whole, never rounded to ``"100 %"``)."""
    if value is None or not math.isfinite(value):
        return "–"
    pct = (Decimal(repr(float(value))) * 100).normalize()
    return f"{pct:f} %"


def keep_together(text: str) -> str:
    """``text`` with its spaces made non-breaking, so a word-wrapped label never splits
    a number from its unit (``"23.9 %"``, ``"+1.6 pp"``)."""
    return text.replace(" ", "\u00a0")


def oversampling(value: float | None) -> str:
    """An over-sampling ratio ``s`` as its slider shows it: two decimals (``1.00964 ->
    "1.01"``, ``2 -> "2.00"``); a ratio below 0.1 keeps two significant digits."""
    if value is None or not math.isfinite(value):
        return "–"
    if 0 < abs(value) < 0.1:
        return f"{value:.2g}"
    return f"{value:.2f}"


def percent_digits(value: float | None) -> int:
    """The decimals :func:`percent` gives ``value`` on its own (1 from 10 %, 2 from 1 %,
    3 below): pass them to ``percent(other, digits)`` so an estimate, its bounds and its
    width read alike (``87.9 %``, ``83.3 %``, ``8.0 %``)."""
    if value is None or not math.isfinite(value):
        return 1
    magnitude = abs(Decimal(repr(float(value))) * 100)
    return 1 if magnitude >= 10 or magnitude == 0 else 2 if magnitude >= 1 else 3


def interval_digits(estimate: float | None, lower: float | None, upper: float | None) -> int:
    """The decimals of an estimate and its interval: the estimate's (:func:`percent_digits`),
    or, for an estimate of exactly 0, those its bounds need, so ``0.0 % (0.0–0.0 %)`` reads
    ``0.000 % (0.000–0.043 %)`` rather than looking certain."""
    if estimate is not None and math.isfinite(estimate) and estimate != 0:
        return percent_digits(estimate)
    bounds = [v for v in (lower, upper) if v is not None and math.isfinite(v) and v != 0]
    return max((percent_digits(value) for value in bounds), default=percent_digits(estimate))


def percent_range(lower: float | None, upper: float | None, digits: int | None = None) -> str:
    """An interval with its unit once: ``"83.3–91.3 %"`` (both ends with ``digits``
    decimals, by default those of the lower end); ``"–"`` when an end is missing."""
    if lower is None or upper is None or not (math.isfinite(lower) and math.isfinite(upper)):
        return "–"
    if digits is None:
        digits = percent_digits(lower)
    low = percent(lower, digits).removesuffix(" %")
    return f"{low}–{percent(upper, digits)}"
