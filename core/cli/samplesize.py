"""``prplanner samplesize``: labels needed for one precision (methods §13).

JSON keys: ``n, p_used, z, population``; with ``--population`` the finite-population
correction ``n / (1 + (n - 1)/N)`` is applied and rounded up (``population`` is ``null``
without it).
"""

from __future__ import annotations

import argparse

from core import validation
from core.cli.output import add_json_flag, confidence_flag, number, whole
from core.ensemble import DEFAULT_CONFIDENCE, PrecisionSampleSize, precision_sample_size

HELP = "Labels needed to estimate one precision to a given margin (methods §13)."


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``samplesize`` flags."""
    parser.add_argument(
        "--margin",
        type=number,
        required=True,
        metavar="E",
        help="half-width of the interval, in (0, 0.5), e.g. 0.03",
    )
    parser.add_argument(
        "--confidence",
        type=number,
        default=DEFAULT_CONFIDENCE,
        metavar="C",
        help="confidence level in (0.5, 1) (default 0.95)",
    )
    parser.add_argument(
        "--precision-floor",
        type=number,
        default=None,
        metavar="P0",
        help="a guaranteed lower bound of the precision; used as p when above 0.5",
    )
    parser.add_argument(
        "--population",
        type=whole,
        default=None,
        metavar="N",
        help="size of the predicted-positive set: apply the finite-population correction",
    )
    add_json_flag(parser)


def run(args: argparse.Namespace) -> PrecisionSampleSize:
    """Check the flags (messages name them) and size the sample (methods §13)."""
    margin = validation.margin("--margin", args.margin)
    level = confidence_flag(args.confidence)
    floor = args.precision_floor
    if floor is not None:
        floor = validation.open_unit("--precision-floor", floor)
    population = args.population
    if population is not None:
        population = validation.whole_at_least("--population", population, 1)
    return precision_sample_size(margin, level, precision_floor=floor, population=population)


def format_text(size: PrecisionSampleSize) -> str:
    """Labeled lines for the terminal, saying whether the finite-population correction
    was applied."""
    correction = (
        f"applied (predicted-positive set of {size.population:,} items)"
        if size.population
        else "not applied (give --population N for a finite predicted-positive set)"
    )
    return (
        f"labels needed (n)   {size.n:,}\n"
        f"precision used (p)  {size.p_used:.4g}\n"
        f"z                   {size.z:.6f}\n"
        f"finite population   {correction}"
    )
