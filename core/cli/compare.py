"""``prplanner compare``: change in precision and recall between two rounds (issue 2, s. 3).

JSON keys: ``precision_change: {estimate, interval, p_worse}``, ``recall_change: {...}`` (and
``warnings``); see :class:`core.compare.Comparison`. The first round (``--k --tp ...``) is
the previous one, the second (``--k2 --tp2 ...``) the current one: a positive change is an
improvement and ``p_worse`` is the probability that the current round is worse.
"""

from __future__ import annotations

import argparse

from core import validation
from core.cli.evaluate import add_count_flags, matrix_from_flags, percent
from core.cli.output import add_json_flag, number, whole
from core.compare import compare

HELP = "Change in precision and recall between two labeled rounds, and P(worse)."


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--k", type=number, required=True, metavar="K", help="k of the previous round"
    )
    add_count_flags(parser)
    parser.add_argument(
        "--k2", type=number, required=True, metavar="K2", help="k of the current round"
    )
    add_count_flags(parser, suffix="2")
    parser.add_argument(
        "--confidence", type=number, default=0.95, metavar="C", help="level (default 0.95)"
    )
    parser.add_argument(
        "--replicates",
        type=number,
        default=100_000,
        metavar="Q",
        help="posterior draws per round (default 100000)",
    )
    parser.add_argument("--seed", type=whole, default=None, metavar="S", help="random seed")
    add_json_flag(parser)


def run(args: argparse.Namespace) -> dict[str, object]:
    previous = matrix_from_flags(args)
    current = matrix_from_flags(args, suffix="2")
    result = compare(
        previous,
        current,
        k_previous=validation.positive("--k", args.k),
        k_current=validation.positive("--k2", args.k2),
        confidence=validation.confidence(args.confidence),
        replicates=validation.whole_at_least("--replicates", args.replicates, 1000),
        seed=args.seed,
    )
    return result.to_dict()


def _points(value: float | None) -> str:
    """A change of a rate in percentage points, signed."""
    if value is None:
        return "-"
    return f"{100 * value:+.2f} pp"


def format_text(result: dict[str, object]) -> str:
    header = f"{'metric':<10} {'change':>11} {'lower':>11} {'upper':>11} {'P(worse)':>9}"
    lines = [header, "-" * len(header)]
    for metric in ("precision", "recall"):
        block = result[f"{metric}_change"]
        lower, upper = block["interval"]
        lines.append(
            f"{metric:<10} {_points(block['estimate']):>11} {_points(lower):>11} "
            f"{_points(upper):>11} {percent(block['p_worse']):>9}"
        )
    lines.append("")
    lines.append(
        "change = current (--tp2 ...) minus previous (--tp ...); precision: Newcombe hybrid "
        "score interval; recall: Monte-Carlo from the two posteriors (Jeffreys prior)"
    )
    if result.get("warnings"):
        lines.append("warnings:")
        lines.extend(f"  - {warning}" for warning in result["warnings"])
    return "\n".join(lines)
