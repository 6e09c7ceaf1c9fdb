"""``prplanner evaluate``: estimates and intervals of one labeled round.

JSON keys: ``k, design, precision, recall, f1, fpr`` (each ``{estimate, intervals}``),
``prevalence: {estimate}`` and ``warnings``; see :meth:`core.evaluation.Evaluation.to_dict`.
"""

from __future__ import annotations

import argparse
import math

from core import validation
from core.cli.output import (
    add_json_flag,
    confidence_flag,
    count_number,
    number,
    number_list,
    population_flag,
    prior_flag,
    whole,
)
from core.confusion import ConfusionMatrix, Population
from core.evaluation import FPC_NOT_APPLIED, Evaluation, evaluate
from core.methods import FPC_METHOD_LABELS, INTERVAL_METHODS, METRICS
from core.session import EVALUATE_SEED

HELP = "Estimates and intervals (frequentist, bootstrap, Bayesian) of one labeled round."

#: Method key -> words for the table (one source: core.methods).
METHOD_LABELS = {key: method.short_label for key, method in INTERVAL_METHODS.items()}


def add_count_flags(
    parser: argparse.ArgumentParser, suffix: str = "", *, required: bool = True
) -> None:
    """``--tp --fp --fn --tn`` (with ``suffix``, e.g. ``--tp2``), all required unless
    ``required`` is false (the caller then checks them)."""
    for cell, meaning in (
        ("tp", "actual positives among the sampled predicted positives"),
        ("fp", "actual negatives among the sampled predicted positives"),
        ("fn", "actual positives among the sampled predicted negatives"),
        ("tn", "actual negatives among the sampled predicted negatives"),
    ):
        parser.add_argument(
            f"--{cell}{suffix}",
            type=count_number,
            required=required,
            metavar=cell.upper(),
            help=meaning,
        )


def matrix_from_flags(args: argparse.Namespace, suffix: str = "") -> ConfusionMatrix:
    """The confusion matrix, each count checked with a message naming its flag."""
    values = {}
    for cell in ("tp", "fp", "fn", "tn"):
        value = getattr(args, f"{cell}{suffix}")
        # Show "-3", not "-3.0", in the message: the flag parser reads every number as float.
        value = int(value) if float(value).is_integer() else value
        values[cell] = validation.count(f"--{cell}{suffix}", value)
    return ConfusionMatrix(**values)


def configure(parser: argparse.ArgumentParser) -> None:
    design = parser.add_mutually_exclusive_group(required=True)
    design.add_argument("--k", type=number, metavar="K", help="imbalance ratio N1/N0 (e.g. 1/19)")
    design.add_argument(
        "--population",
        type=whole,
        nargs=2,
        metavar=("N_POS", "N_NEG"),
        help="population sizes of the predicted-positive and predicted-negative strata",
    )
    design.add_argument(
        "--random",
        action="store_true",
        help="the items are one plain random sample (k is estimated by n1/n0)",
    )
    add_count_flags(parser)
    parser.add_argument(
        "--confidence",
        type=number,
        default=0.95,
        metavar="C",
        help="confidence level in (0.5, 1) (default 0.95)",
    )
    parser.add_argument(
        "--replicates",
        type=number,
        default=10_000,
        metavar="Q",
        help="bootstrap and Monte-Carlo replicates (default 10000, at most 1,000,000)",
    )
    parser.add_argument(
        "--seed",
        type=whole,
        default=EVALUATE_SEED,
        metavar="S",
        help=f"seed of the bootstrap and Monte-Carlo draws (default {EVALUATE_SEED}, as the "
        "app: the same numbers every run)",
    )
    parser.add_argument(
        "--prior",
        type=number_list(4),
        default=None,
        metavar="A11,A01,A10,A00",
        help="Beta prior for the Bayesian intervals (default 0,0,0,0; Jeffreys if a count is 0)",
    )
    parser.add_argument(
        "--fpc",
        action="store_true",
        help="finite population correction (needs --population)",
    )
    add_json_flag(parser)


def population_from_flags(args: argparse.Namespace) -> Population | None:
    if getattr(args, "random", False):
        return None
    if args.population is not None:
        return population_flag(args.population)
    return Population(k=validation.imbalance("--k", args.k))


def run(args: argparse.Namespace) -> Evaluation:
    matrix = matrix_from_flags(args)
    population = population_from_flags(args)
    prior = None if args.prior is None else prior_flag(args.prior)
    return evaluate(
        matrix,
        population=population,
        confidence=confidence_flag(args.confidence),
        replicates=validation.whole_at_least(
            "--replicates", args.replicates, 100, validation.MAX_REPLICATES
        ),
        seed=args.seed,
        prior=prior,
        fpc=args.fpc,
    )


def percent(value: float | None) -> str:
    """A rate as a percentage with sensible digits (``86.25 %``, ``4.63 %``, ``0.0463 %``)."""
    if value is None or not math.isfinite(value):
        return "-"
    scaled = 100.0 * value
    if scaled == 0:
        return "0 %"
    if abs(scaled) >= 1:
        return f"{scaled:.2f} %"
    return f"{scaled:#.3g} %"


def interval_table(evaluation: Evaluation, metrics: tuple[str, ...] = METRICS) -> str:
    """Every interval of each metric, the one to quote first (marked ``*``) and the
    predictions of the next round's estimate marked ``†``."""
    header = f"{'metric':<10} {'method':<22} {'estimate':>10} {'lower':>10} {'upper':>10}"
    lines = [header, "-" * len(header)]
    recommended = evaluation.recommended()
    all_metrics = evaluation.metrics()
    for metric in metrics:
        block = all_metrics[metric]
        first = True
        quoted = recommended.get(metric)
        ordered = sorted(block.intervals.items(), key=lambda item: item[0] != quoted)
        for method, interval in ordered:
            label = METHOD_LABELS.get(method, method)
            if evaluation.fpc is not None:
                # With a list of known size these are no longer binomial intervals.
                label = FPC_METHOD_LABELS.get(method, label)
            if method == quoted:
                label = f"* {label}"
            elif method in INTERVAL_METHODS and INTERVAL_METHODS[method].is_prediction:
                label = f"{label} †"
            elif evaluation.fpc is not None and method in FPC_NOT_APPLIED:
                label = f"{label} °"
            lines.append(
                f"{metric if first else '':<10} {label:<22} "
                f"{percent(block.estimate) if first else '':>10} "
                f"{percent(interval.lower):>10} {percent(interval.upper):>10}"
            )
            first = False
    return "\n".join(lines)


def format_text(evaluation: Evaluation) -> str:
    """The estimates, every interval (the one to quote first) and the warnings, for people."""
    lines = [f"design {evaluation.design}, k = {evaluation.k:.6g}"]
    lines.append("")
    lines.append(interval_table(evaluation))
    lines.append("")
    lines.append(
        f"prevalence (share of actual positives): {percent(evaluation.estimates.prevalence)}"
    )
    if evaluation.warnings:
        lines.append("")
        lines.append("warnings:")
        lines.extend(f"  - {warning}" for warning in evaluation.warnings)
    lines.append("")
    lines.append("* the interval to quote:")
    for metric, recommendation in evaluation.recommendations().items():
        name = INTERVAL_METHODS[recommendation.method].label
        if evaluation.fpc is not None:
            name = FPC_METHOD_LABELS.get(recommendation.method, name)
        lines.append(f"  {metric}: {name}, because {recommendation.why}")
    lines.append(
        "† a prediction of the estimate the next round of the same size will show, not an "
        "interval for the true value"
    )
    if evaluation.fpc is not None:
        lines.append("° not narrowed by the finite population correction")
    return "\n".join(lines)
