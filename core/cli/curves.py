"""``prplanner curves``: areas under the PR and ROC curves of a scored sample (methods §12).

JSON contract::

    prplanner curves FILE (.csv or .xlsx with columns score, label[, weight])
                     [--reference-prevalence PI0] [--json]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.cli.output import add_json_flag, flags_named, number, significant
from core.curves import UNWEIGHTED_NOTE, CurveSummary, curves_of_sample, load_scored_sample
from core.errors import InputError
from core.workbook.xlsx_reader import check_regular_file

HELP = "average precision, trapezoidal AUC-PR and AUC-ROC of a scored, labeled file"

_LABELS = {
    "n": "items",
    "positives": "labeled positive",
    "average_precision": "average precision (step-wise)",
    "auc_pr_trapezoid": "AUC-PR (trapezoidal)",
    "auc_roc": "AUC-ROC",
    "calibrated_average_precision": "calibrated average precision",
}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", metavar="FILE", type=Path, help=".csv or .xlsx with score, label[, weight]"
    )
    parser.add_argument(
        "--reference-prevalence",
        type=number,
        metavar="PI0",
        help="also report the average precision at this prevalence (Siblini et al.)",
    )
    add_json_flag(parser)


def run(args: argparse.Namespace) -> CurveSummary:
    # A pipe or a device named like a CSV would block the read forever: refused first.
    if args.file.suffix.lower() in (".csv", ".xlsx", ".xlsm") or args.file.exists():
        check_regular_file(args.file, "a table of scores and labels", InputError)
    sample = load_scored_sample(args.file)
    with flags_named({"reference prevalence": "reference prevalence (--reference-prevalence)"}):
        summary = curves_of_sample(sample).summary(args.reference_prevalence)
    if sample.weights is None:  # after any refusal: one line then, the error
        print(f"note: {args.file.name} has {UNWEIGHTED_NOTE}", file=sys.stderr)
    return summary


def format_text(summary: CurveSummary) -> str:
    result = summary.to_dict()
    width = max(len(_LABELS[key]) for key in result)
    lines = [f"{_LABELS[key]:<{width}}  {significant(value)}" for key, value in result.items()]
    return "\n".join(lines)
