"""``prplanner plan``: how many items to label from each stratum (spec 1.5, 1.6; issue 2).

JSON keys: ``k, precision, recall, pi1, pi0, s_star, s_star_bayes, method, s, n_pos,
n_neg, total, margin_precision, margin_recall``, plus ``cost`` with label costs and
``assurance: {precision, recall, both}`` with ``--assurance`` (see
:meth:`core.planning.Plan.to_dict`). Notes (e.g. a substituted prior) go to stderr as
``note: ...`` lines, so ``--json`` output stays clean.
"""

from __future__ import annotations

import argparse
import sys

from core import validation
from core.assurance import DEFAULT_REPS, plan_assurance
from core.bayes import Prior
from core.cli.output import add_json_flag, number, number_list, whole
from core.confusion import ConfusionMatrix, Population
from core.errors import InputError
from core.planning import (
    METHODS,
    Plan,
    make_plan,
    previous_round_posterior,
    rates_from_round,
)

HELP = "Plan a labeling round: over-sampling ratio s* and sizes per stratum (spec 1.5-1.6)."

_MATRIX_FLAGS = ("tp", "fp", "fn", "tn")


class _PlanResult(dict):
    """The JSON dict, carrying the :class:`Plan` for :func:`format_text` (JSON ignores it)."""

    plan: Plan


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``plan`` flags (issue 2, section 3)."""
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--k", type=number, metavar="K", help="imbalance ratio N1/N0 (1/19 ok)")
    where.add_argument(
        "--population",
        type=whole,
        nargs=2,
        metavar=("N_POS", "N_NEG"),
        help="population counts of predicted positives and negatives (k = N_POS/N_NEG)",
    )
    values = parser.add_argument_group("planning values (or a previous round)")
    values.add_argument("--precision", type=number, metavar="P", help="expected precision")
    values.add_argument("--recall", type=number, metavar="R", help="expected recall")
    for flag in _MATRIX_FLAGS:
        values.add_argument(
            f"--{flag}",
            type=whole,
            metavar=flag.upper(),
            help=f"previous round's {flag.upper()} (all four together)",
        )
    prior = parser.add_mutually_exclusive_group()
    prior.add_argument(
        "--prior",
        type=number_list(4),
        metavar="A11,A01,A10,A00",
        help="Beta prior parameters (default with a previous round: 0,0,0,0 as in the paper)",
    )
    prior.add_argument(
        "--prior-strength",
        type=number,
        metavar="W",
        help="prior from the expected precision/recall: a pseudo-sample of 100*W positives",
    )
    parser.add_argument(
        "--bayesian",
        action="store_true",
        help="plan with the Bayesian predictive margins (Eq 6-8) and Theorem 2's s*",
    )
    parser.add_argument(
        "--margin", type=number, metavar="B", help="target margin for both metrics (0.05)"
    )
    parser.add_argument("--margin-precision", type=number, metavar="BP")
    parser.add_argument("--margin-recall", type=number, metavar="BR")
    parser.add_argument("--confidence", type=number, default=0.95, metavar="C")
    parser.add_argument(
        "--method",
        choices=METHODS,
        default="paper",
        help="paper: Section 5 procedure with s = max(s*, 1) (default); "
        "optimal: exact least total (or cost) meeting both margins",
    )
    parser.add_argument("--cost-pos", type=number, metavar="C1", help="cost per positive label")
    parser.add_argument("--cost-neg", type=number, metavar="C0", help="cost per negative label")
    parser.add_argument("--s", type=number, metavar="S", help="over-sampling ratio")
    parser.add_argument("--v", type=whole, metavar="V", help="total labels (budget)")
    parser.add_argument(
        "--assurance",
        action="store_true",
        help="simulate the chance that the realized margins meet the targets",
    )
    parser.add_argument(
        "--reps", type=whole, metavar="A", help=f"simulated rounds (default {DEFAULT_REPS:,})"
    )
    parser.add_argument(
        "--fpc", action="store_true", help="finite population correction (needs --population)"
    )
    add_json_flag(parser)


def _population(args: argparse.Namespace) -> Population:
    if args.population is not None:
        return Population.from_counts(*args.population)
    return Population.from_k(validation.positive("--k", args.k))


def _targets(args: argparse.Namespace) -> tuple[float, float]:
    separate = (args.margin_precision, args.margin_recall)
    if args.margin is not None and any(value is not None for value in separate):
        raise InputError("give --margin or --margin-precision/--margin-recall, not both")
    if args.margin is not None:
        both = validation.margin("--margin", args.margin)
        return both, both
    return tuple(
        0.05 if value is None else validation.margin(flag, value)
        for flag, value in zip(("--margin-precision", "--margin-recall"), separate, strict=True)
    )


def _previous_round(args: argparse.Namespace) -> ConfusionMatrix | None:
    given = [getattr(args, flag) is not None for flag in _MATRIX_FLAGS]
    if not any(given):
        return None
    if not all(given):
        raise InputError("a previous round needs all four of --tp --fp --fn --tn")
    if args.precision is not None or args.recall is not None:
        raise InputError(
            "give --precision/--recall or a previous round (--tp --fp --fn --tn), not both"
        )
    return ConfusionMatrix(tp=args.tp, fp=args.fp, fn=args.fn, tn=args.tn).require_both_strata()


def _check_flag_combinations(args: argparse.Namespace) -> None:
    if args.reps is not None and not args.assurance:
        raise InputError(
            "--reps sets how many rounds --assurance simulates; add --assurance or drop --reps"
        )
    if args.reps is not None:
        validation.whole_at_least("--reps", args.reps, 1)
    if args.fpc and args.population is None:
        raise InputError("--fpc needs both population counts (--population N_POS N_NEG)")
    if (args.cost_pos is None) != (args.cost_neg is None):
        raise InputError("give both --cost-pos and --cost-neg, or neither")
    if args.s is not None:
        validation.positive("--s", args.s)
    if args.cost_pos is not None:
        validation.positive("--cost-pos", args.cost_pos)
        validation.positive("--cost-neg", args.cost_neg)


def run(args: argparse.Namespace) -> dict[str, object]:
    """Check the flags (messages name them), plan, and return the contract dict."""
    _check_flag_combinations(args)
    population = _population(args)
    target_precision, target_recall = _targets(args)
    confidence = validation.confidence(args.confidence)
    matrix = _previous_round(args)
    value_notes: tuple[str, ...] = ()
    if matrix is not None:
        fallback_prior = (
            Prior.from_sequence(args.prior, name="--prior") if args.prior is not None else None
        )
        precision, recall, value_notes = rates_from_round(matrix, population.k, fallback_prior)
    else:
        if args.precision is None or args.recall is None:
            raise InputError(
                "give --precision and --recall, or a previous round with --tp --fp --fn --tn"
            )
        precision = validation.open_unit("--precision", args.precision)
        recall = validation.open_unit("--recall", args.recall)

    prior = None
    if args.prior is not None:
        prior = Prior.from_sequence(args.prior, name="--prior")
    elif args.prior_strength is not None:
        strength = validation.positive("--prior-strength", args.prior_strength)
        prior = Prior.from_expected(precision, recall, population.k, strength)
    posterior, notes = None, ()
    if prior is not None or matrix is not None:
        posterior, notes = previous_round_posterior(matrix, prior)
    notes = tuple(dict.fromkeys((*value_notes, *notes)))  # the Jeffreys note only once

    plan = make_plan(
        population=population,
        precision=precision,
        recall=recall,
        margin_precision=target_precision,
        margin_recall=target_recall,
        confidence=confidence,
        method=args.method,
        posterior=posterior,
        bayesian=args.bayesian,
        cost_pos=args.cost_pos,
        cost_neg=args.cost_neg,
        s=args.s,
        v=args.v,
        fpc=args.fpc,
        notes=notes,
    )
    if args.assurance:
        reps = DEFAULT_REPS if args.reps is None else args.reps
        plan = plan.with_assurance(plan_assurance(plan, reps=reps))
    for note in plan.notes:
        print(f"note: {note}", file=sys.stderr)
    result = _PlanResult(plan.to_dict())
    result.plan = plan
    return result


def _number(value: float | None, digits: int = 4) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _percent(value: float | None, sign: str = "") -> str:
    """A rate as ``evaluate`` shows it: ``90.00 %``, or ``± 3.79 %`` with ``sign="± "``."""
    return "-" if value is None else f"{sign}{100 * value:.2f} %"


def format_text(result: dict[str, object]) -> str:
    """A small table: planning values, targets, planned margins, assurance, the design."""
    plan: Plan | None = getattr(result, "plan", None)
    level = f"{plan.confidence:.0%}" if plan is not None else ""
    kind = "Bayesian predictive" if plan is not None and plan.bayesian else "frequentist"
    lines = [
        f"Labeling plan (method {result['method']}, {level} {kind} margins)".replace("  ", " "),
        "",
        f"{'':22}{'precision':>11}{'recall':>11}",
        f"{'planning value':22}{_percent(result['precision']):>11}{_percent(result['recall']):>11}",
    ]
    if plan is not None:
        lines.append(
            f"{'target margin':22}{_percent(plan.target_margin_precision, '± '):>11}"
            f"{_percent(plan.target_margin_recall, '± '):>11}"
        )
    lines.append(
        f"{'planned margin':22}{_percent(result['margin_precision'], '± '):>11}"
        f"{_percent(result['margin_recall'], '± '):>11}"
    )
    assurance = result.get("assurance")
    if assurance is not None:
        reps = f", {plan.assurance.reps:,} simulated rounds" if plan is not None else ""
        lines.append(
            f"{'assurance':22}{_percent(assurance['precision']):>11}"
            f"{_percent(assurance['recall']):>11}"
            f"   (both {_percent(assurance['both'])}{reps})"
        )
    s_star_bayes = result["s_star_bayes"]
    lines += [
        "",
        f"k = {result['k']:.6g}   pi1 = {result['pi1']:.6g}   pi0 = {result['pi0']:.6g}",
        f"s* (Theorem 1) = {result['s_star']:.4f}   s* (Theorem 2) = "
        + (
            "- (needs a prior or a previous round)"
            if s_star_bayes is None
            else f"{s_star_bayes:.4f}"
        ),
        f"design: s = {result['s']:.4f}; label {result['n_pos']:,} predicted positives + "
        f"{result['n_neg']:,} predicted negatives = {result['total']:,} items",
    ]
    if "cost" in result:
        lines.append(f"cost: {result['cost']:,.2f}")
    if plan is not None and plan.fpc_factors != (1.0, 1.0):
        lines.append(
            "finite population correction: "
            f"{plan.fpc_factors[0]:.4f} (positives), {plan.fpc_factors[1]:.4f} (negatives)"
        )
    return "\n".join(lines)
