"""``prplanner coverage``: the coverage experiment of methods §10.

JSON keys for one setting: ``coverage: {precision: {wald, bootstrap, bayes, bayes_mc},
recall: {katz_log, bootstrap, bayes, bayes_mc}}, reps, replicates, seconds``; with
``--paper-grid``: ``rows: [{k, precision, recall, v, s, coverage}, ...]`` and ``seconds``.
Beyond the contract: ``design: {n_pos, n_neg}`` (items labeled per stratum), ``warnings``
(a design cell with fewer than 10 expected items, a coverage below 0.90 at 95 %, naming
the method), ``prior`` (the four values used) and ``jeffreys_rows`` (rounds where that
prior was improper and Jeffreys was used instead), per setting.

    prplanner coverage ... [--prior A11,A01,A10,A00]

The default prior is the paper's ``0,0,0,0`` (methods §10).
"""

from __future__ import annotations

import argparse

from core import validation
from core.bayes import Prior
from core.cli.output import (
    add_json_flag,
    confidence_flag,
    flags_named,
    number,
    number_list,
    prior_flag,
    whole,
)
from core.coverage import (
    PRECISION_KINDS,
    RECALL_KINDS,
    CoverageResult,
    CoverageSetting,
    GridResult,
    coverage_experiment,
    paper_grid,
    run_grid,
)
from core.errors import InputError

HELP = "Simulated coverage of the Wald/Katz, bootstrap and Bayesian intervals (methods §10)."

SETTING_FLAGS = ("k", "precision", "recall", "v", "s")

#: Most simulated draws (rounds x replicates, summed over the settings) one run may ask
#: for: about 1.5 microseconds each at the slowest designs measured, so a run stays under
#: about 30 s (memory is bounded by the chunking in core.coverage either way). The paper's
#: grid at its A = Q = 1000 needs 12,000,000.
MAX_DRAWS = 20_000_000


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--paper-grid",
        action="store_true",
        help="run the twelve settings of the paper's Table 3 instead of one setting",
    )
    parser.add_argument("--k", type=number, metavar="K", help="imbalance ratio N1/N0")
    parser.add_argument("--precision", type=number, metavar="P", help="true precision")
    parser.add_argument("--recall", type=number, metavar="R", help="true recall")
    parser.add_argument("--v", type=number, metavar="V", help="items labeled per round")
    parser.add_argument("--s", type=number, metavar="S", help="over-sampling ratio")
    parser.add_argument(
        "--reps",
        type=number,
        default=1000,
        metavar="A",
        help="simulated rounds (default 1000, at most 1,000,000; --reps x --replicates, "
        f"times 12 with --paper-grid, at most {MAX_DRAWS:,})",
    )
    parser.add_argument(
        "--replicates",
        type=number,
        default=1000,
        metavar="Q",
        help="bootstrap / Monte-Carlo replicates per round (default 1000, at most 1,000,000; "
        f"--reps x --replicates at most {MAX_DRAWS:,})",
    )
    parser.add_argument(
        "--confidence", type=number, default=0.95, metavar="C", help="level (default 0.95)"
    )
    parser.add_argument("--seed", type=whole, default=None, metavar="S", help="random seed")
    parser.add_argument(
        "--prior",
        type=number_list(4),
        default=None,
        metavar="A11,A01,A10,A00",
        help="Beta prior of the Bayesian intervals (default 0,0,0,0 as in the paper; "
        "Jeffreys in the rounds where it is improper)",
    )
    add_json_flag(parser)


def run(args: argparse.Namespace) -> CoverageResult | GridResult:
    reps = validation.whole_at_least("--reps", args.reps, 10, validation.MAX_REPS)
    replicates = validation.whole_at_least(
        "--replicates", args.replicates, 10, validation.MAX_REPLICATES
    )
    confidence = confidence_flag(args.confidence)
    settings = len(paper_grid()) if args.paper_grid else 1
    if reps * replicates * settings > MAX_DRAWS:
        grid = f" x {settings} settings" if settings > 1 else ""
        raise InputError(
            f"--reps x --replicates{grid} must be at most {MAX_DRAWS:,} simulated draws "
            f"(about 30 s), got {reps:,} x {replicates:,}{grid}"
        )
    prior = Prior.none() if args.prior is None else prior_flag(args.prior)
    given = [name for name in SETTING_FLAGS if getattr(args, name) is not None]
    if args.paper_grid:
        if given:
            raise InputError(
                f"--paper-grid runs fixed settings; drop {', '.join('--' + n for n in given)}"
            )
        return run_grid(
            reps=reps, replicates=replicates, confidence=confidence, seed=args.seed, prior=prior
        )
    missing = [f"--{name}" for name in SETTING_FLAGS if getattr(args, name) is None]
    if missing:
        raise InputError(f"{', '.join(missing)} required (or use --paper-grid)")
    v = int(args.v) if float(args.v).is_integer() else args.v
    with flags_named({name: f"--{name}" for name in (*SETTING_FLAGS, "seed")}):
        setting = CoverageSetting(
            k=args.k, precision=args.precision, recall=args.recall, v=v, s=args.s
        )
        result = coverage_experiment(
            setting,
            reps=reps,
            replicates=replicates,
            confidence=confidence,
            seed=args.seed,
            prior=prior,
        )
    return result


def _items(count: int, what: str) -> str:
    return f"{count:,} {what}{'' if count == 1 else 's'}"


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f} %"


def _coverage_cells(coverage: dict) -> list[str]:
    return [_cell(coverage["precision"][kind]) for kind in PRECISION_KINDS] + [
        _cell(coverage["recall"][kind]) for kind in RECALL_KINDS
    ]


COLUMNS = ["P wald", "P boot", "P bayes", "P b-MC", "R katz", "R boot", "R bayes", "R b-MC"]


def _prior_line(prior: list[float], jeffreys_rows: int, reps: int | None) -> str:
    of = "" if reps is None else f" of {reps:,}"
    values = ",".join(f"{value:g}" for value in prior)
    return (
        f"Bayesian prior {values}; Jeffreys (0.5) used in {jeffreys_rows:,}{of} rounds where "
        "it was improper"
    )


def format_text(outcome: CoverageResult | GridResult) -> str:
    result = outcome.to_dict()
    if "rows" in result:
        head = f"{'k':>7} {'P':>5} {'R':>5} {'v':>6} {'s':>4} " + " ".join(
            f"{name:>8}" for name in COLUMNS
        )
        lines = [head, "-" * len(head)]
        for row in result["rows"]:
            lines.append(
                f"{'1/' + format(1 / row['k'], '.0f'):>7} {row['precision']:>5.2f} "
                f"{row['recall']:>5.2f} {row['v']:>6} {row['s']:>4g} "
                + " ".join(f"{cell:>8}" for cell in _coverage_cells(row["coverage"]))
            )
        lines.append("")
        lines.append(f"{result['seconds']:.2f} s")
        for row in result["rows"]:
            for text in row.get("warnings", []):
                lines.append(
                    f"warning (k 1/{1 / row['k']:.0f}, R {row['recall']:.2f}, s {row['s']:g}): "
                    f"{text}"
                )
        if result["rows"]:
            fallback = sum(row["jeffreys_rows"] for row in result["rows"])
            lines.append(_prior_line(result["rows"][0]["prior"], fallback, None))
    else:
        design = result["design"]
        head = " ".join(f"{name:>8}" for name in COLUMNS)
        lines = [
            f"design: label {_items(design['n_pos'], 'predicted positive')} + "
            f"{_items(design['n_neg'], 'predicted negative')} = "
            f"{design['n_pos'] + design['n_neg']:,} items per round",
            "",
            head,
            "-" * len(head),
            " ".join(f"{c:>8}" for c in _coverage_cells(result["coverage"])),
        ]
        lines.append("")
        lines.append(
            f"{result['reps']:,} rounds, {result['replicates']:,} replicates, "
            f"{result['seconds']:.2f} s"
        )
        lines.append(_prior_line(result["prior"], result["jeffreys_rows"], result["reps"]))
        lines.extend(f"warning: {text}" for text in result.get("warnings", []))
    lines.append(
        "P = precision, R = recall; frequentist intervals checked against the truth, Bayesian "
        "(predictive) ones against a second independent round"
    )
    return "\n".join(lines)
