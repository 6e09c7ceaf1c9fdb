"""``prplanner plan``: how many items to label from each stratum (methods §7-8).

JSON keys: ``k, precision, recall, pi1, pi0, s_star, s_star_bayes, method, s, n_pos,
n_neg, total, margin_precision, margin_recall, targets_met: {precision, recall}``, then
``cost`` with label costs, always ``assurance: {precision, recall, both}`` (the exact chance
that the labeled round's margins meet the targets), with ``--assurance-target G``
``assured: {target, n_pos, n_neg, total, cost, assurance: {precision, recall, both}}``, and
with ``--assurance`` ``assurance_simulated: {precision, recall, both, reps,
standard_error}`` (see :meth:`core.planning.Plan.to_dict`). Notes (e.g. a substituted
prior) go to stderr as ``note: ...`` lines, so ``--json`` output stays clean.
"""

from __future__ import annotations

import argparse
import sys

from core import validation
from core.assurance import DEFAULT_REPS, simulate_plan_assurance
from core.bayes import Prior
from core.cli.output import (
    add_json_flag,
    confidence_flag,
    flags_named,
    number,
    number_list,
    population_flag,
    prior_flag,
    whole,
)
from core.confusion import ConfusionMatrix, Population
from core.errors import InputError
from core.plan_request import PlanRequest
from core.planning import (
    METHODS,
    AssuredPlan,
    Plan,
    previous_round_posterior,
    rates_from_round,
)

HELP = "Plan a labeling round: over-sampling ratio s* and sizes per stratum (methods §7-8)."

_MATRIX_FLAGS = ("tp", "fp", "fn", "tn")


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``plan`` flags."""
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
    parser.add_argument(
        "--margin-precision",
        type=number,
        metavar="BP",
        help="target half-width of the precision interval, in [0.000001, 0.5) (default --margin)",
    )
    parser.add_argument(
        "--margin-recall",
        type=number,
        metavar="BR",
        help="target half-width of the recall interval, in [0.000001, 0.5) (default --margin)",
    )
    parser.add_argument(
        "--confidence",
        type=number,
        default=0.95,
        metavar="C",
        help="confidence level of the intervals, in (0.5, 1) (default 0.95)",
    )
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
        "--assurance-target",
        type=number,
        metavar="G",
        help="also find the cheapest design whose chance of meeting both margins is at "
        "least G (0 < G < 1), shown beside the expected-value plan",
    )
    parser.add_argument(
        "--assurance",
        action="store_true",
        help="check the chance of meeting the margins (always computed exactly) by "
        "simulating labeled rounds",
    )
    parser.add_argument(
        "--reps",
        type=whole,
        metavar="A",
        help=f"simulated rounds (default {DEFAULT_REPS:,}, at most {validation.MAX_REPS:,})",
    )
    parser.add_argument(
        "--fpc", action="store_true", help="finite population correction (needs --population)"
    )
    add_json_flag(parser)


def _population(args: argparse.Namespace) -> Population:
    if args.population is not None:
        return population_flag(args.population)
    return Population.from_k(validation.imbalance("--k", args.k))


def margin_targets(
    args: argparse.Namespace, defaults: tuple[float, float] = (0.05, 0.05)
) -> tuple[float, float]:
    """``--margin`` or ``--margin-precision``/``--margin-recall``; a margin not given is
    its ``defaults`` entry (0.05, or what a workbook records)."""
    separate = (args.margin_precision, args.margin_recall)
    if args.margin is not None and any(value is not None for value in separate):
        raise InputError("give --margin or --margin-precision/--margin-recall, not both")
    if args.margin is not None:
        both = validation.margin("--margin", args.margin)
        return both, both
    precision_flag, recall_flag = "--margin-precision", "--margin-recall"
    return (
        defaults[0] if separate[0] is None else validation.margin(precision_flag, separate[0]),
        defaults[1] if separate[1] is None else validation.margin(recall_flag, separate[1]),
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


#: Range of a label's cost: any currency unit from millionths to billions; beyond it the
#: cost arithmetic of the optimal design overflows or loses every digit.
MIN_COST = 1e-6
MAX_COST = 1e9


def _cost(flag: str, value: float) -> float:
    cost = validation.positive(flag, value)
    if not MIN_COST <= cost <= MAX_COST:
        raise InputError(
            f"{flag} must be between {MIN_COST:g} and {MAX_COST:g} (the cost of one label), "
            f"got {cost:g}"
        )
    return cost


def _check_flag_combinations(args: argparse.Namespace) -> None:
    if args.reps is not None and not args.assurance:
        raise InputError(
            "--reps sets how many rounds --assurance simulates; add --assurance or drop --reps"
        )
    if args.reps is not None:
        validation.whole_at_least("--reps", args.reps, 1, validation.MAX_REPS)
    if args.fpc and args.population is None:
        raise InputError("--fpc needs both population counts (--population N_POS N_NEG)")
    if (args.cost_pos is None) != (args.cost_neg is None):
        raise InputError("give both --cost-pos and --cost-neg, or neither")
    if args.s is not None:
        validation.oversampling("--s", args.s)
    if args.cost_pos is not None:
        _cost("--cost-pos", args.cost_pos)
        _cost("--cost-neg", args.cost_neg)
    if args.assurance_target is not None:
        validation.open_unit("--assurance-target", args.assurance_target)


def run(args: argparse.Namespace) -> Plan:
    """Check the flags (messages name them) and plan; ``--json`` prints
    :meth:`Plan.to_dict`, the contract."""
    _check_flag_combinations(args)
    population = _population(args)
    target_precision, target_recall = margin_targets(args)
    confidence = confidence_flag(args.confidence)
    matrix = _previous_round(args)
    value_notes: tuple[str, ...] = ()
    if matrix is not None:
        fallback_prior = prior_flag(args.prior, name="--prior") if args.prior is not None else None
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
        prior = prior_flag(args.prior, name="--prior")
    elif args.prior_strength is not None:
        strength = validation.prior_weight("--prior-strength", args.prior_strength)
        prior = Prior.from_expected(precision, recall, population.k, strength)
    posterior = None
    notes: tuple[str, ...] = ()
    if prior is not None or matrix is not None:
        posterior, notes = previous_round_posterior(matrix, prior)
    notes = tuple(dict.fromkeys((*value_notes, *notes)))  # the Jeffreys note only once

    request = PlanRequest(
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
        assurance_target=args.assurance_target,
        notes=notes,
    )
    with flags_named({"v": "--v", "s": "--s"}):
        plan = request.plan()
    if args.assurance:
        reps = DEFAULT_REPS if args.reps is None else args.reps
        plan = plan.with_simulated_assurance(simulate_plan_assurance(plan, reps=reps))
    for note in plan.notes:
        print(f"note: {note}", file=sys.stderr)
    return plan


def _percent(value: float | None, sign: str = "") -> str:
    """A rate as ``evaluate`` shows it: ``90.00 %``, or ``± 3.79 %`` with ``sign="± "``."""
    return "-" if value is None else f"{sign}{100 * value:.2f} %"


def _chance(value: float | None) -> str:
    """A probability as a person reads it: ``53.2 %`` (never a rounded 0 or 100 %)."""
    if value is None:  # make_plan always computes it; a bare Plan may not
        return "not computed"
    if 0.0 < value < 0.0005:
        return "< 0.1 %"
    if 0.9995 <= value < 1.0:
        return "> 99.9 %"
    return f"{100 * value:.1f} %"


def _margin_lines(plan: Plan) -> list[str]:
    """Each margin with its target and the chance the labeled round meets it."""
    lines = []
    chances = plan.assurance
    for name, planned, target, chance in (
        ("precision", plan.margin_precision, plan.target_margin_precision,
         None if chances is None else chances.precision),
        ("recall", plan.margin_recall, plan.target_margin_recall,
         None if chances is None else chances.recall),
    ):  # fmt: skip
        lines.append(
            f"{name + ' margin':18}{_percent(planned, '± ')} (target {_percent(target, '± ')}); "
            f"chance the labeled round meets it: {_chance(chance)}"
        )
    lines.append(f"{'':18}both together: {_chance(None if chances is None else chances.both)}")
    rarely = plan.rarely_met()
    if rarely is not None:
        remedy = (
            "the assured plan below meets both with the chance asked for"
            if plan.assured is not None
            else "--assurance-target 0.9 plans a round that meets both with a 90 % chance"
        )
        lines.append(f"WARNING: {rarely}; {remedy}")
    for name, met in plan.targets_met.items():
        if not met:
            planned = plan.margin_precision if name == "precision" else plan.margin_recall
            target = (
                plan.target_margin_precision if name == "precision" else plan.target_margin_recall
            )
            lines.append(
                f"MISSED: this design's {name} margin {_percent(planned, '± ')} is wider than "
                f"its target {_percent(target, '± ')}"
            )
    return lines


def _price_lines(plan: Plan, assured: AssuredPlan) -> list[str]:
    """The expected-value plan and the ``assured`` plan side by side."""
    costs = plan.cost is not None
    rows = [
        ("predicted positives", f"{plan.n_pos:,}", f"{assured.n_pos:,}"),
        ("predicted negatives", f"{plan.n_neg:,}", f"{assured.n_neg:,}"),
        ("total labels", f"{plan.total:,}", f"{assured.total:,}"),
    ]
    if plan.cost is not None:
        rows.append(("cost", f"{plan.cost:,.2f}", f"{assured.cost:,.2f}"))
    rows += [
        ("s", f"{plan.s:.4f}", f"{assured.s:.4f}"),
        ("precision margin", _percent(plan.margin_precision, "± "),
         _percent(assured.margin_precision, "± ")),
        ("recall margin", _percent(plan.margin_recall, "± "),
         _percent(assured.margin_recall, "± ")),
        ("chance both met", _chance(None if plan.assurance is None else plan.assurance.both),
         _chance(assured.assurance.both)),
    ]  # fmt: skip
    extra_labels = assured.total - plan.total
    extra_cost = extra_labels if plan.cost is None else assured.cost - plan.cost
    base = plan.total if plan.cost is None else plan.cost
    what = "cost" if costs else "labels"
    return [
        "",
        f"The price of the promise (at least {100 * assured.target:g} % chance of meeting both "
        "margins):",
        f"{'':22}{'expected-value plan':>20}{'assured plan':>15}",
        *(f"{label:22}{left:>20}{right:>15}" for label, left, right in rows),
        f"{'':22}{'extra' if extra_cost >= 0 else 'saved'} {what} for the promise: "
        + (f"{extra_cost:+,.2f}" if costs else f"{extra_labels:+,}")
        + f" ({100 * extra_cost / base:+.1f} %)",
    ]


def format_text(plan: Plan) -> str:
    """Planning values, margins with the chance of meeting them, the design, the price."""
    result = plan.to_dict()
    level = f"{plan.confidence:.0%}"
    kind = (
        "Bayesian margins: prediction for the next round's estimate"
        if plan.bayesian
        else "frequentist margins"
    )
    lines = [
        f"Labeling plan (method {result['method']}, {level} {kind})",
        "",
        f"planning values   precision {_percent(plan.precision)}, recall {_percent(plan.recall)}",
        *_margin_lines(plan),
    ]
    simulated = plan.simulated_assurance
    if simulated is not None:
        lines.append(
            f"{'':18}simulated check ({simulated.reps:,} rounds, standard error "
            f"{_chance(simulated.standard_error)}):"
        )
        lines.append(
            f"{'':18}precision {_chance(simulated.precision)}, recall "
            f"{_chance(simulated.recall)}, both {_chance(simulated.both)}"
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
    if plan.fpc_factors != (1.0, 1.0):
        lines.append(
            "finite population correction: "
            f"{plan.fpc_factors[0]:.4f} (positives), {plan.fpc_factors[1]:.4f} (negatives)"
        )
    if plan.assured is not None:
        lines += _price_lines(plan, plan.assured)
    return "\n".join(lines)
