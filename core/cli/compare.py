"""``prplanner compare``: change in precision and recall between two rounds (methods §9).

JSON keys: ``precision_change: {estimate, interval, p_worse}``, ``recall_change: {...}`` (and
``warnings``); see :class:`core.compare.Comparison`. The first round (``--k --tp ...``) is
the previous one, the second (``--k2 --tp2 ...``) the current one: a positive change is an
improvement and ``p_worse`` is the probability that the current round is worse (shown as
``P(decline)`` in the text output). Each round's design is ``--k``/``--k2`` or, as for
``evaluate``, ``--population N_POS N_NEG``/``--population2``.
"""

from __future__ import annotations

import argparse

from core import validation
from core.cli.evaluate import add_count_flags, matrix_from_flags, percent
from core.cli.output import add_json_flag, confidence_flag, number, whole
from core.compare import Comparison, compare
from core.confusion import Population
from core.errors import InputError

HELP = "Change in precision and recall between two labeled rounds, and P(decline)."


def _add_design_flags(parser: argparse.ArgumentParser, suffix: str, which: str) -> None:
    """``--k`` or ``--population`` of one round (``suffix`` ``""`` or ``"2"``), as evaluate."""
    design = parser.add_mutually_exclusive_group(required=True)
    design.add_argument(
        f"--k{suffix}", type=number, metavar=f"K{suffix}", help=f"k = N1/N0 of the {which} round"
    )
    design.add_argument(
        f"--population{suffix}",
        type=whole,
        nargs=2,
        metavar=(f"N_POS{suffix}", f"N_NEG{suffix}"),
        help=f"population counts of predicted positives and negatives of the {which} round "
        "(k = N_POS/N_NEG)",
    )


def configure(parser: argparse.ArgumentParser) -> None:
    _add_design_flags(parser, "", "previous")
    add_count_flags(parser)
    _add_design_flags(parser, "2", "current")
    add_count_flags(parser, suffix="2")
    parser.add_argument(
        "--confidence", type=number, default=0.95, metavar="C", help="level (default 0.95)"
    )
    parser.add_argument(
        "--replicates",
        type=number,
        default=100_000,
        metavar="Q",
        help="posterior draws per round (default 100000, at most 1,000,000)",
    )
    parser.add_argument("--seed", type=whole, default=None, metavar="S", help="random seed")
    add_json_flag(parser)


def _k(args: argparse.Namespace, suffix: str, matrix) -> float:
    counts = getattr(args, f"population{suffix}")
    if counts is not None:
        try:
            population = Population.from_counts(*counts)
            population.require_sample_fits(matrix.n_pos, matrix.n_neg)
        except InputError as exc:
            raise InputError(f"--population{suffix}: {exc}") from None
        return population.k
    return validation.imbalance(f"--k{suffix}", getattr(args, f"k{suffix}"))


def run(args: argparse.Namespace) -> Comparison:
    previous = matrix_from_flags(args)
    current = matrix_from_flags(args, suffix="2")
    k_previous, k_current = _k(args, "", previous), _k(args, "2", current)
    return compare(
        previous,
        current,
        k_previous=k_previous,
        k_current=k_current,
        confidence=confidence_flag(args.confidence),
        replicates=validation.whole_at_least(
            "--replicates", args.replicates, 1000, validation.MAX_REPLICATES
        ),
        seed=args.seed,
    )


def _points(value: float | None) -> str:
    """A change of a rate in percentage points, signed."""
    if value is None:
        return "-"
    return f"{100 * value:+.2f} pp"


def format_text(comparison: Comparison) -> str:
    result = comparison.to_dict()
    previous, current = result["previous"], result["current"]
    header = (
        f"{'metric':<10} {'previous':>9} {'current':>9} {'change':>11} {'lower':>11} "
        f"{'upper':>11} {'P(decline)':>11}"
    )
    lines = [header, "-" * len(header)]
    for metric in ("precision", "recall"):
        block = result[f"{metric}_change"]
        lower, upper = block["interval"]
        lines.append(
            f"{metric:<10} {percent(previous[metric]):>9} {percent(current[metric]):>9} "
            f"{_points(block['estimate']):>11} {_points(lower):>11} {_points(upper):>11} "
            f"{percent(block['p_worse']):>11}"
        )
    lines.append("")
    lines.append(
        "change = current (--tp2 ...) minus previous (--tp ...); precision: Newcombe hybrid "
        "score interval; recall: Monte-Carlo from the two posteriors (Jeffreys prior); "
        "P(decline) = probability that the current round is worse (p_worse in --json)"
    )
    if result.get("warnings"):
        lines.append("warnings:")
        lines.extend(f"  - {warning}" for warning in result["warnings"])
    return "\n".join(lines)
