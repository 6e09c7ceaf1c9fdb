"""``prplanner labels``: count and evaluate a labeled labeling workbook.

::

    prplanner labels SHEET.xlsx [TOPUP.xlsx ...] [--append-to ROUNDS.xlsx [--round NAME]
                     [--classifier NAME] [--sheet SHEET]] [--confidence C] [--json]

JSON keys (the contract): ``tp, fp, fn, tn, labeled_pos, labeled_neg, skipped, unlabeled,
population_pos, population_neg, seed, evaluation`` (exactly the ``prplanner evaluate --json``
document for these counts and populations, with ``--seed`` the design's seed), then
``if_skipped_positive`` and ``if_skipped_negative`` (``{tp, fp, fn, tn, precision, recall,
f1}`` if every skipped item had that label), ``classifiers`` (the same counts for each
further classifier, when the sample has them) and, with ``--append-to``, ``appended: {file,
sheet, row}``. ``evaluation`` is ``null`` while a stratum has no label yet.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import sys
from pathlib import Path
from typing import Any

from core.cli.output import add_json_flag, number, whole
from core.errors import InputError

HELP = "Count and evaluate a labeled labeling workbook; optionally add it to a rounds workbook."


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "workbooks",
        metavar="SHEET.xlsx",
        type=Path,
        nargs="+",
        help="the labeling workbook (and its top-ups) written by prplanner select",
    )
    parser.add_argument(
        "--append-to",
        type=Path,
        default=None,
        metavar="ROUNDS.xlsx",
        help="add the round as one row to this rounds workbook (nothing else in it changes)",
    )
    parser.add_argument(
        "--round", default=None, metavar="NAME", help="the round's name in --append-to"
    )
    parser.add_argument(
        "--classifier",
        default=None,
        metavar="NAME",
        help="the classifier's name in --append-to (default: that of the sheet's last round)",
    )
    parser.add_argument(
        "--sheet", default=None, metavar="SHEET", help="the sheet of --append-to to add to"
    )
    parser.add_argument(
        "--confidence",
        type=number,
        default=0.95,
        metavar="C",
        help="confidence level in (0.5, 1) (default 0.95)",
    )
    parser.add_argument(
        "--replicates",
        type=whole,
        default=10_000,
        metavar="Q",
        help="bootstrap and Monte-Carlo replicates (default 10000, at most 1,000,000)",
    )
    add_json_flag(parser)


def _estimates(counts: tuple[int, int, int, int], k: float) -> dict[str, object]:
    from core.confusion import ConfusionMatrix, point_estimates

    tp, fp, fn, tn = counts
    result: dict[str, object] = {"tp": tp, "fp": fp, "fn": fn, "tn": tn}
    if tp + fp == 0 or fn + tn == 0:
        return {**result, "precision": None, "recall": None, "f1": None}
    estimates = point_estimates(ConfusionMatrix(tp=tp, fp=fp, fn=fn, tn=tn), k)

    def finite(value: float) -> float | None:
        return value if math.isfinite(value) else None

    return {
        **result,
        "precision": finite(estimates.precision),
        "recall": finite(estimates.recall),
        "f1": finite(estimates.f1),
    }


def _evaluation(labels, seed: int, args: argparse.Namespace) -> dict | None:
    """The ``prplanner evaluate --json`` document for these counts (its own code path)."""
    from core.cli import evaluate

    if labels.labeled_pos == 0 or labels.labeled_neg == 0:
        return None
    design = labels.design
    namespace = argparse.Namespace(
        k=None,
        population=[design.population_pos, design.population_neg],
        random=False,
        tp=labels.tp,
        fp=labels.fp,
        fn=labels.fn,
        tn=labels.tn,
        confidence=args.confidence,
        replicates=args.replicates,
        seed=seed,
        prior=None,
        fpc=False,
    )
    return evaluate.run(namespace)


def _counts(labels) -> dict[str, object]:
    return {
        "tp": labels.tp,
        "fp": labels.fp,
        "fn": labels.fn,
        "tn": labels.tn,
        "labeled_pos": labels.labeled_pos,
        "labeled_neg": labels.labeled_neg,
        "skipped": labels.skipped,
        "unlabeled": labels.unlabeled,
        "population_pos": labels.design.population_pos,
        "population_neg": labels.design.population_neg,
    }


def _alternatives(labels) -> dict[str, object]:
    k = labels.design.population_pos / labels.design.population_neg
    return {
        "if_skipped_positive": _estimates(labels.counts("positive"), k),
        "if_skipped_negative": _estimates(labels.counts("negative"), k),
    }


def run(args: argparse.Namespace) -> dict[str, object]:
    from core.cli.output import confidence_flag
    from core.workbook.labeling import count_labels, read_labeling_workbook

    confidence_flag(args.confidence)
    from core import validation

    validation.whole_at_least("--replicates", args.replicates, 100, validation.MAX_REPLICATES)
    target = args.append_to
    if target is not None and target.suffix.casefold() not in (".xlsx", ".xlsm"):
        raise InputError(f"--append-to must name an .xlsx workbook, got {target.name}")
    before = None
    if target is not None:
        from core.workbook.safe_io import fingerprint

        # Fingerprinted before anything is read, so a save by another program while the
        # labels are counted is caught.
        before = fingerprint(target)
        if before is None:
            raise InputError(f"--append-to {target}: no such file")
    workbooks = [read_labeling_workbook(path) for path in args.workbooks]
    results = count_labels(workbooks)
    primary = results[0]
    seed = workbooks[0].design.seed
    result: dict[str, object] = _counts(primary)
    result["seed"] = seed
    result["evaluation"] = _evaluation(primary, seed, args)
    result.update(_alternatives(primary))
    if len(results) > 1:
        result["classifiers"] = [
            {
                "name": labels.design.name,
                **_counts(labels),
                "evaluation": _evaluation(labels, seed, args),
                **_alternatives(labels),
            }
            for labels in results[1:]
        ]
    if primary.unlabeled:
        print(
            f"note: {primary.unlabeled:,} item(s) have no label yet; the counts and the "
            "evaluation use the labeled items only",
            file=sys.stderr,
        )
    if result["evaluation"] is None:
        print(
            "note: no evaluation yet: each stratum needs at least one item labeled positive "
            "or negative",
            file=sys.stderr,
        )
    if target is not None:
        result["appended"] = _append(args, workbooks, primary, before)
    return result


def _append(args, workbooks, primary, before) -> dict[str, object]:
    from core.workbook.append_round import NewRound, append_round

    if primary.labeled_pos == 0 or primary.labeled_neg == 0:
        raise InputError(
            "nothing to add to the rounds workbook yet: each stratum needs at least one item "
            "labeled positive or negative"
        )
    design = primary.design
    first = workbooks[0]
    notes = (
        f"PR Planner labeling round: seed {first.design.seed}, items from "
        f"{first.design.file_name}; {primary.skipped} skipped, {primary.unlabeled} unlabeled"
    )
    new_round = NewRound(
        round=args.round or first.path.stem,
        date=dt.date.today(),
        classifier=args.classifier or _last_classifier(args.append_to, args.sheet),
        population_pos=design.population_pos,
        population_neg=design.population_neg,
        tp=primary.tp,
        fp=primary.fp,
        fn=primary.fn,
        tn=primary.tn,
        notes=notes,
    )
    appended = append_round(
        args.append_to,
        new_round,
        sheet=args.sheet,
        sources=tuple(args.workbooks),
        expected=before,
    )
    return appended.to_dict()


def _last_classifier(path: Path, sheet: str | None) -> str | None:
    """The classifier of the last round on the sheet the round goes to (one sheet per
    classifier is the usual layout), or ``None``."""
    from core.workbook.rounds import read_rounds

    rounds = [item for item in read_rounds(path).rounds if sheet is None or item.sheet == sheet]
    return rounds[-1].classifier if rounds else None


def format_text(result: dict[str, object]) -> str:
    from core.cli.evaluate import format_text as evaluation_text
    from core.cli.evaluate import percent

    lines = [
        f"seed {result['seed']}; population {result['population_pos']:,} predicted positive, "
        f"{result['population_neg']:,} predicted negative",
        f"TP {result['tp']:,}  FP {result['fp']:,}  FN {result['fn']:,}  TN {result['tn']:,}"
        f"   (labeled {result['labeled_pos']:,} + {result['labeled_neg']:,}; skipped "
        f"{result['skipped']:,}; unlabeled {result['unlabeled']:,})",
    ]
    for key, words in (
        ("if_skipped_positive", "if every skipped item were positive"),
        ("if_skipped_negative", "if every skipped item were negative"),
    ):
        item = result[key]
        assert isinstance(item, dict)
        lines.append(
            f"{words}: precision {percent(item['precision'])}, recall {percent(item['recall'])}"
        )
    evaluation = result["evaluation"]
    if evaluation is not None:
        lines.append("")
        lines.append(evaluation_text(evaluation))  # type: ignore[arg-type]
    further: Any = result.get("classifiers", [])
    for item in further:
        lines.append("")
        lines.append(
            f"classifier {item['name']}: TP {item['tp']:,}  FP {item['fp']:,}  FN "
            f"{item['fn']:,}  TN {item['tn']:,} (skipped {item['skipped']:,}, unlabeled "
            f"{item['unlabeled']:,})"
        )
    appended = result.get("appended")
    if appended:
        assert isinstance(appended, dict)
        lines.append("")
        lines.append(
            f"added to {appended['file']}: sheet {appended['sheet']!r}, row {appended['row']}"
        )
    return "\n".join(lines)
