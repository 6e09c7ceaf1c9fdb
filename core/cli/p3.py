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


class _P3Result(dict):
    """The JSON dict, carrying what :func:`format_text` needs beyond it (JSON ignores it).

    ``rows``: ``(eta, precision, lower, upper, f1, is_eta_star)`` at round prevalences,
    computed with the closed forms rather than picked off the grid; ``confidence``: the
    level of the intervals whose half-widths are the sigmas (``None`` when given as flags).
    """

    rows: list[tuple]
    confidence: float | None


#: Prevalences the text table shows (those inside the requested range).
ROUND_PREVALENCES = (1e-5, 1e-4, 1e-3, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)


def table_rows(curve, eta_min: float, eta_max: float) -> list[tuple]:
    """Closed-form precision, band and F1 at the round prevalences inside the range.

    The range's ends are added when fewer than two round prevalences fall inside it, and
    the prevalence of the widest band (``eta*``) when it is known.
    """
    import numpy as np

    from core.prevalence import f_beta_at_prevalence, precision_at_prevalence

    point, band = curve.point, curve.band
    etas = [eta for eta in ROUND_PREVALENCES if eta_min <= eta <= eta_max]
    if len(etas) < 2:
        etas = sorted({eta_min, *etas, eta_max})
    star = None
    if band is not None and math.isfinite(band.eta_star) and eta_min <= band.eta_star <= eta_max:
        star = band.eta_star
        etas = sorted({*etas, star})
    grid = np.asarray(etas, dtype=float)
    precision = np.atleast_1d(precision_at_prevalence(point.tpr, point.fpr, grid))
    f1 = np.atleast_1d(f_beta_at_prevalence(point.tpr, point.fpr, grid))
    lower: list[float | None]
    upper: list[float | None]
    if band is not None:
        lower, upper = (np.atleast_1d(bound).tolist() for bound in band.bounds_at(grid))
    else:
        lower = upper = [None] * len(etas)
    return [
        (
            eta,
            float(p),
            None if lo is None else float(lo),
            None if up is None else float(up),
            float(f),
            eta == star,
        )
        for eta, p, lo, up, f in zip(etas, precision, lower, upper, f1, strict=True)
    ]


#: Parameter names in the messages of ``core.prevalence`` -> the flags that set them.
_FLAG_NAMES = {
    **{name: _flag(name) for name in (*_RATE_FLAGS, "k", "eta_min", "eta_max", "points")},
    "confidence": "--confidence",
    "reference prevalence": "reference prevalence (--reference-prevalence)",
    "population counts": "--population",
}


def run(args: argparse.Namespace) -> dict:
    with flags_named(_FLAG_NAMES):
        point = _operating_point(args)
        curve = p3_curve(
            point,
            eta_min=args.eta_min,
            eta_max=args.eta_max,
            points=args.points,
            reference_prevalence=args.reference_prevalence,
        )
    result = _P3Result(curve.to_dict())
    result.rows = table_rows(curve, args.eta_min, args.eta_max)
    from_round = args.tp is not None
    result.confidence = (
        (0.95 if args.confidence is None else args.confidence) if from_round else None
    )
    return result


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


def format_text(result: dict) -> str:
    confidence = getattr(result, "confidence", None)
    lines = [f"TPR (recall) {_percent(result['tpr'])}   FPR {_percent(result['fpr'])}"]
    if result["sigma_tpr"] is not None:
        what = (
            f"half-width of the {_level(confidence)} interval"
            if confidence is not None
            else "half-width of the interval, as given by --sigma-tpr/--sigma-fpr"
        )
        lines.append(
            f"TPR ± {_percent(result['sigma_tpr'])}   "
            f"FPR ± {_percent(result['sigma_fpr'])}   ({what})"
        )
        delta = result["delta"]
        lines.append(
            f"widest band Delta {'-' if delta is None else f'{100 * delta:.4g} pp'} of precision "
            f"at prevalence eta* {_prevalence(result['eta_star'])} (bound max CV "
            f"{significant(result['delta_bound'])})"
        )
        lines.extend(f"note: {note}" for note in result.get("notes", []))
    else:
        lines.append("no sigmas: no uncertainty band")
    lines.append("")
    header = f"{'prevalence':>12}  {'precision':>10}  {'lower':>10}  {'upper':>10}  {'F1':>10}"
    lines.append(header)
    rows = getattr(result, "rows", None)
    if rows is None:  # a plain dict (e.g. re-read JSON): the grid points themselves
        rows = [
            (row["eta"], row["precision"], row["lower"], row["upper"], row["f1"], False)
            for row in _table_rows(result["curve"], result.get("eta_star"))
        ]
    for eta, precision, lower, upper, f1, is_star in rows:
        cells = [_percent(value) for value in (precision, lower, upper, f1)]
        mark = "  (eta*)" if is_star else ""
        lines.append(
            f"{_prevalence(eta):>12}  " + "  ".join(f"{cell:>10}" for cell in cells) + mark
        )
    lines.append(
        f"(closed-form values at round prevalences; {len(result['curve'])} grid points in --json)"
    )
    calibrated = result.get("calibrated")
    if calibrated is not None:
        lines.append("")
        lines.append(f"at reference prevalence {_prevalence(calibrated['reference_prevalence'])}:")
        for key, words in (("precision", "precision"), ("f1", "F1")):
            lines.append(f"  {words:<15} {_percent(calibrated[key])}")
        for key, words in (("precision_gain", "precision gain"), ("recall_gain", "recall gain")):
            lines.append(f"  {words:<15} {significant(calibrated[key])}")
    return "\n".join(lines)


def _table_rows(curve: list[dict], extra_eta: float | None) -> list[dict]:
    """Grid points nearest to the round prevalences (for a result without ``rows``)."""
    if not curve:
        return []
    low, high = curve[0]["eta"], curve[-1]["eta"]
    targets = [t for t in ROUND_PREVALENCES if low <= t <= high] + [low, high]
    if extra_eta is not None and low <= extra_eta <= high:
        targets.append(extra_eta)
    chosen = {
        min(range(len(curve)), key=lambda i: abs(math.log(curve[i]["eta"] / target)))
        for target in targets
    }
    return [curve[i] for i in sorted(chosen)]
