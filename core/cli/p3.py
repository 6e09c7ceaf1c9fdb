"""``prplanner p3``: precision against prevalence with its uncertainty band (methods §11, 2.3).

JSON contract::

    prplanner p3 (--tpr T --fpr F [--sigma-tpr ST --sigma-fpr SF]
                  | --k K --tp A --fp B --fn C --tn D [--confidence C])
                 [--eta-min 1e-5] [--eta-max 0.5] [--points 200]
                 [--reference-prevalence PI0] [--json]

Beyond the contract keys, ``notes`` lists why a band value deserves care or is null
(e.g. ``eta_star`` when the widest band is only approached at prevalence 0 or 1).
"""

from __future__ import annotations

import argparse
import math

from core.cli.output import add_json_flag, flags_named, number, significant, whole
from core.confusion import ConfusionMatrix
from core.errors import InputError
from core.prevalence import (
    DEFAULT_ETA_MAX,
    DEFAULT_ETA_MIN,
    DEFAULT_POINTS,
    OperatingPoint,
    P3Curve,
    p3_curve,
)

HELP = "precision and F1 against prevalence (P3 curve), its band, Delta and eta*"

_RATE_FLAGS = ("tpr", "fpr", "sigma_tpr", "sigma_fpr")
_ROUND_FLAGS = ("k", "tp", "fp", "fn", "tn")


def configure(parser: argparse.ArgumentParser) -> None:
    rates = parser.add_argument_group("known rates")
    rates.add_argument("--tpr", type=number, help="true positive rate (recall)")
    rates.add_argument("--fpr", type=number, help="false positive rate")
    rates.add_argument("--sigma-tpr", type=number, help="half-width of TPR's interval")
    rates.add_argument("--sigma-fpr", type=number, help="half-width of FPR's interval")
    labeled = parser.add_argument_group("or a labeled stratified round")
    labeled.add_argument("--k", type=number, help="imbalance ratio N1/N0 (1/19 accepted)")
    labeled.add_argument(
        "--population",
        nargs=2,
        type=whole,
        metavar=("N_POS", "N_NEG"),
        help="the population counts N1 (predicted positive) and N0, instead of --k",
    )
    labeled.add_argument("--tp", type=whole, help="TP (n11)")
    labeled.add_argument("--fp", type=whole, help="FP (n01)")
    labeled.add_argument("--fn", type=whole, help="FN (n10)")
    labeled.add_argument("--tn", type=whole, help="TN (n00)")
    labeled.add_argument(
        "--confidence",
        type=number,
        help="level of the recall and FPR intervals whose half-widths are the sigmas "
        "(default 0.95)",
    )
    grid = parser.add_argument_group("prevalence grid")
    grid.add_argument("--eta-min", type=number, default=DEFAULT_ETA_MIN, help="default 1e-5")
    grid.add_argument("--eta-max", type=number, default=DEFAULT_ETA_MAX, help="default 0.5")
    grid.add_argument(
        "--points",
        type=whole,
        default=DEFAULT_POINTS,
        help="prevalences on the curve (default 200, at most 100,000)",
    )
    parser.add_argument(
        "--reference-prevalence",
        type=number,
        metavar="PI0",
        help="also report calibrated precision, F1 and gains at this prevalence",
    )
    add_json_flag(parser)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _operating_point(args: argparse.Namespace) -> OperatingPoint:
    if args.population is not None:
        if args.k is not None:
            raise InputError("give --k or --population N_POS N_NEG, not both")
        from core.confusion import Population

        population = Population.from_counts(*args.population)
        args.k = population.k
    given_rates = [name for name in _RATE_FLAGS if getattr(args, name) is not None]
    given_round = [name for name in _ROUND_FLAGS if getattr(args, name) is not None]
    if given_rates and given_round:
        raise InputError(
            f"give either --tpr/--fpr or a labeled round (--k --tp --fp --fn --tn), not both "
            f"({_flag(given_rates[0])} and {_flag(given_round[0])})"
        )
    if given_round:
        missing = [_flag(name) for name in _ROUND_FLAGS if name not in given_round]
        if missing:
            raise InputError(f"a labeled round also needs {' '.join(missing)}")
        matrix = ConfusionMatrix(tp=args.tp, fp=args.fp, fn=args.fn, tn=args.tn)
        confidence = 0.95 if args.confidence is None else args.confidence
        return OperatingPoint.from_round(matrix, args.k, confidence=confidence)
    if args.confidence is not None:
        raise InputError("--confidence applies to a labeled round (--k --tp --fp --fn --tn)")
    if args.tpr is None or args.fpr is None:
        raise InputError("give --tpr and --fpr, or a labeled round (--k --tp --fp --fn --tn)")
    if (args.sigma_tpr is None) != (args.sigma_fpr is None):
        raise InputError("give both --sigma-tpr and --sigma-fpr, or neither")
    return OperatingPoint.from_rates(
        args.tpr, args.fpr, sigma_tpr=args.sigma_tpr, sigma_fpr=args.sigma_fpr
    )


#: Parameter names in the messages of ``core.prevalence`` -> the flags that set them.
_FLAG_NAMES = {
    **{name: _flag(name) for name in (*_RATE_FLAGS, "k", "eta_min", "eta_max", "points")},
    "confidence": "--confidence",
    "reference prevalence": "reference prevalence (--reference-prevalence)",
    "population counts": "--population",
}


def run(args: argparse.Namespace) -> P3Curve:
    with flags_named(_FLAG_NAMES):
        point = _operating_point(args)
        return p3_curve(
            point,
            eta_min=args.eta_min,
            eta_max=args.eta_max,
            points=args.points,
            reference_prevalence=args.reference_prevalence,
        )


# --- text output ---------------------------------------------------------------------------


def _percent(value) -> str:
    """A rate in percent as ``evaluate`` shows it: two decimals (``87.89 %``), and three
    significant digits below 1 % (``0.0799 %``), where P3 values span decades."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    value = 100 * value
    return f"{value:.2f} %" if abs(value) >= 1 or value == 0 else f"{value:#.3g} %"


def _prevalence(value) -> str:
    """A prevalence of the table's first column, as round as it is (``0.001 %``, ``2 %``)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    return f"{100 * value:.4g} %"


def _level(confidence: float) -> str:
    return f"{100 * confidence:g} %"


def format_text(curve: P3Curve) -> str:
    point, band = curve.point, curve.band
    lines = [f"TPR (recall) {_percent(point.tpr)}   FPR {_percent(point.fpr)}"]
    if band is not None:
        what = (
            f"half-width of the {_level(point.confidence)} interval"
            if point.confidence is not None
            else "half-width of the interval, as given by --sigma-tpr/--sigma-fpr"
        )
        lines.append(
            f"TPR ± {_percent(point.sigma_tpr)}   FPR ± {_percent(point.sigma_fpr)}   ({what})"
        )
        delta = f"{100 * band.delta:.4g} pp" if math.isfinite(band.delta) else "-"
        delta = delta.replace(" pp", " percentage points")
        lines.append(
            f"the band around precision is at most {delta} wide (lower to upper end), "
            f"widest at a prevalence of {_prevalence(band.eta_star)} (Delta, eta*; bound "
            f"max CV {significant(band.delta_bound)})"
        )
        if band.note:
            lines.extend(f"note: {note}" for note in band.note.split("; "))
    else:
        lines.append("no sigmas: no uncertainty band")
    lines.append("")
    header = f"{'prevalence':>12}  {'precision':>10}  {'lower':>10}  {'upper':>10}  {'F1':>10}"
    lines.append(header)
    for eta, precision, lower, upper, f1, is_star in curve.at_round_prevalences():
        cells = [_percent(value) for value in (precision, lower, upper, f1)]
        mark = "  (eta*)" if is_star else ""
        lines.append(
            f"{_prevalence(eta):>12}  " + "  ".join(f"{cell:>10}" for cell in cells) + mark
        )
    lines.append(
        f"(closed-form values at round prevalences; {len(curve.prevalence)} grid points in --json)"
    )
    calibrated = curve.calibrated
    if calibrated is not None:
        lines.append("")
        reference = calibrated.reference_prevalence
        lines.append(f"at reference prevalence {_prevalence(reference)}:")
        band_words = ""
        if band is not None:
            band_low, band_high = band.bounds_at(reference)
            band_words = f"   (band {_percent(float(band_low))} to {_percent(float(band_high))})"
        lines.append(f"  {'precision':<15} {_percent(calibrated.precision)}{band_words}")
        lines.append(f"  {'F1':<15} {_percent(calibrated.f1)}")
        # In % as every other rate here; "gain" over flagging every item (1 = perfect).
        lines.append(
            f"  {'precision gain':<15} {_percent(calibrated.precision_gain)}   "
            "(over flagging every item)"
        )
        lines.append(
            f"  {'recall gain':<15} {_percent(calibrated.recall_gain)}   (over flagging every item)"
        )
    return "\n".join(lines)
