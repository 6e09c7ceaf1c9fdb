"""``prplanner ensemble``: labels a child classifier still needs when it recycles a parent's
labeled sample (methods §13, Algorithm 1 and Lemma 3).

JSON keys: ``n_parent, n_child, pir, cir, expected_reused, expected_new_labels,
savings_pct_mean, savings_pct_interval`` (2.5th and 97.5th percentiles over the simulated
trials, in percent of ``n_child``), and beyond the contract ``notes`` (a sample larger than
the set it is drawn from). Without ``--n-parent``/``--n-child`` both default to the
sample size for ``--margin`` (0.03) at ``--confidence`` (0.95), as ``prplanner samplesize``.
"""

from __future__ import annotations

import argparse

from core import validation
from core.cli.output import add_json_flag, confidence_flag, number, whole
from core.ensemble import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MARGIN,
    MAX_MIX_COUNT,
    MAX_TRIALS,
    MIXES,
    ChildSavings,
    ChildSet,
    mix_too_large,
    plan_recycled_labels,
    precision_sample_size,
)
from core.errors import InputError
from core.session import ENSEMBLE_SEED

HELP = "Labels a child classifier still needs when it reuses a parent's sample (methods §13)."


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``ensemble`` flags."""
    parser.add_argument(
        "--parent-size",
        type=whole,
        required=True,
        metavar="NP",
        help="size of the parent's predicted-positive set |A_P|",
    )
    parser.add_argument(
        "--child-size",
        type=whole,
        required=True,
        metavar="NC",
        help="size of the child's predicted-positive set |A_C|",
    )
    parser.add_argument(
        "--overlap",
        type=whole,
        required=True,
        metavar="NO",
        help="items predicted positive by both, |A_P ∩ A_C|",
    )
    parser.add_argument(
        "--n-parent",
        type=whole,
        default=None,
        metavar="nP",
        help="size of the parent's labeled sample (default: the size for the margin; with "
        f"--mix shuffle at most {MAX_MIX_COUNT:,}, and --n-parent x (--child-size - --overlap)"
        f" / --overlap too)",
    )
    child_size = parser.add_mutually_exclusive_group()
    child_size.add_argument(
        "--n-child",
        type=whole,
        default=None,
        metavar="nC",
        help="the child's sample size (default: the size for the margin)",
    )
    child_size.add_argument(
        "--margin",
        type=number,
        default=None,
        metavar="E",
        help=f"half-width the child's precision needs (default {DEFAULT_MARGIN})",
    )
    parser.add_argument(
        "--confidence",
        type=number,
        default=None,
        metavar="C",
        help=f"confidence level for --margin (default {DEFAULT_CONFIDENCE})",
    )
    parser.add_argument(
        "--precision-floor",
        type=number,
        default=None,
        metavar="P0",
        help="a guaranteed lower bound of the precision, for --margin",
    )
    parser.add_argument(
        "--mix",
        choices=MIXES,
        default="shuffle",
        help="Algorithm 1's Mix: shuffle (tighter) or sample (independent draws, when the "
        "child is a parent too)",
    )
    parser.add_argument(
        "--trials",
        type=whole,
        default=200,
        metavar="T",
        help="simulated trials (default 200, at most 10,000,000)",
    )
    parser.add_argument(
        "--seed",
        type=whole,
        default=ENSEMBLE_SEED,
        metavar="S",
        help=f"seed of the simulation (default {ENSEMBLE_SEED}, as the app: the same numbers "
        "every run)",
    )
    add_json_flag(parser)


def run(args: argparse.Namespace) -> ChildSavings:
    """Check the flags (messages name them), simulate one child and return the contract keys.

    Without ``--n-parent``/``--n-child`` the sizes come from methods §13 for ``--margin``,
    ``--confidence`` and ``--precision-floor`` (defaults 0.03, 0.95, none).
    """
    parent_size = validation.whole_at_least("--parent-size", args.parent_size, 1)
    child_size = validation.whole_at_least("--child-size", args.child_size, 1)
    overlap = args.overlap
    if overlap > child_size or overlap > parent_size:
        larger_than = [
            f"{flag} {size}"
            for flag, size in (("--child-size", child_size), ("--parent-size", parent_size))
            if overlap > size
        ]
        raise InputError(
            f"--overlap {overlap} is larger than {' and '.join(larger_than)}: "
            "the shared items cannot outnumber either set"
        )
    sizing_flags_given = (
        args.margin is not None or args.confidence is not None or args.precision_floor is not None
    )
    if args.n_parent is not None and args.n_child is not None and sizing_flags_given:
        raise InputError(
            "--confidence and --precision-floor have no effect when both --n-parent and "
            "--n-child are given"
        )
    n_parent = args.n_parent
    n_child = args.n_child
    if n_parent is None or n_child is None:
        margin = validation.margin(
            "--margin", DEFAULT_MARGIN if args.margin is None else args.margin
        )
        level = confidence_flag(DEFAULT_CONFIDENCE if args.confidence is None else args.confidence)
        floor = args.precision_floor
        if floor is not None:
            floor = validation.open_unit("--precision-floor", floor)
        size_for_margin = precision_sample_size(margin, level, precision_floor=floor).n
        n_parent = size_for_margin if n_parent is None else n_parent
        n_child = size_for_margin if n_child is None else n_child
    n_parent = validation.whole_at_least("--n-parent", n_parent, 1)
    n_child = validation.whole_at_least("--n-child", n_child, 1)
    trials = validation.whole_at_least("--trials", args.trials, 1)
    if trials > MAX_TRIALS:
        raise InputError(f"--trials must be at most {MAX_TRIALS:,}, got {trials}")

    flags = {"n_parent": "--n-parent", "size": "--child-size", "overlap": "--overlap"}
    problem = mix_too_large(child_size, overlap, n_parent, args.mix, {**flags, "mix": "--mix"})
    if problem is not None:
        raise InputError(
            f"--n-parent {n_parent:,} (given or the size for --margin), --child-size "
            f"{child_size:,} and --overlap {overlap:,} are too large to simulate: {problem}"
        )
    plan = plan_recycled_labels(
        parent_size,
        [ChildSet(size=child_size, overlap=overlap, n_child=n_child, n_parent=n_parent)],
        mix=args.mix,
        trials=trials,
        rng=args.seed,
    )
    return plan.savings[0]


def format_text(savings: ChildSavings) -> str:
    """A short table: sample sizes, overlap ratios, labels reused and needed, saving."""
    low, high = savings.savings_pct_interval
    notes = [f"note: {text}" for text in savings.notes]
    return "\n".join(
        [
            f"parent sample (n_parent)      {savings.n_parent:,}",
            f"child sample (n_child)        {savings.n_child:,}",
            f"overlap / parent set (PIR)    {savings.pir:.4f}",
            f"overlap / child set (CIR)     {savings.cir:.4f}",
            f"labels reused (mean)          {savings.expected_reused:,.1f}",
            f"new labels needed (mean)      {savings.expected_new_labels:,.1f}",
            f"saving                        {savings.savings_pct_mean:.1f} % "
            f"(95 % of trials: {low:.1f} % to {high:.1f} %)",
            *notes,
        ]
    )
