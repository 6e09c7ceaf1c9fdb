"""``prplanner labels``: count and evaluate a labeled labeling workbook.

::

    prplanner labels SHEET.xlsx [TOPUP.xlsx ...] [--append-to ROUNDS.xlsx [--round NAME]
                     [--round-date YYYY-MM-DD] [--classifier NAME] [--sheet SHEET]
                     [--column ROLE=HEADER ...]]
                     [--confidence C] [--no-fpc]
                     [--margin B | --margin-precision BP --margin-recall BR]
                     [--assurance-target G] [--json]

JSON keys (the contract): ``tp, fp, fn, tn, labeled_pos, labeled_neg, skipped, unlabeled,
population_pos, population_neg, seed, evaluation`` (``seed`` is the draw's; ``evaluation``
is exactly the ``prplanner evaluate --fpc --json`` document for these counts and
populations, with evaluate's default seed as the app uses it; without ``--fpc`` under
``--no-fpc``), then ``if_skipped_positive`` and
``if_skipped_negative`` (``{tp, fp, fn, tn, precision, recall, f1}`` if every skipped item
had that label), ``range_if_skipped`` (``{precision, recall, f1}``, each ``[lowest,
highest]`` over every way the skipped items could be labeled), ``if_skipped_or_unlabeled_
positive`` and ``..._negative`` and ``range_if_skipped_or_unlabeled`` (the same with the
items still without a label), ``unlabeled_items`` (``[{id, workbook, row, copies}]``:
each item still without a label, the first workbook and row that hold it, and ``copies``
(``[{workbook, row}]``, every workbook read that holds it: the editors' copies of a
draw)), ``classifiers`` (the same counts for each further classifier, when the sample
has them, each with its ``targets`` against the same margins or ``null``), with a margin flag or
margins recorded in the workbook (``select --margin``) ``targets``
(:meth:`core.round_targets.TargetCheck.to_dict`: each quoted interval against its target,
``met``, the labels ``needed``, the sample totals ``top_up`` to draw, the ``chance``
(``{precision, recall, both}``) that a round of ``needed`` labels meets the targets given
the labels so far, the ``chance_target`` it was sized for (``--assurance-target``),
``from`` (``"flags"`` or the workbook recording them) and ``open_items_beyond_target``
(``[{metric, estimate, lowest, highest, target}]``: each estimate the skipped and
unlabeled items could move further than its target margin)) and, with ``--append-to``,
``appended: {file, sheet, row, classifier, created, updated, not_kept}`` (the main classifier's row)
and ``also_appended`` (the same for each further classifier's row added in the same write).
``evaluation`` is ``null``
while a stratum has no label yet.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.cli.output import add_json_flag, confidence_flag, day, number, whole
from core.cli.select import add_target_flags, resolve_targets
from core.errors import InputError

if TYPE_CHECKING:
    from core.round_targets import TargetCheck, Targets
    from core.workbook.append_round import AppendedRound, NewRound, NotAdded
    from core.workbook.labeling import LabeledSample

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
        help="add the round as one row to this rounds workbook (nothing else in it changes); "
        "a workbook that does not exist yet is started with this round",
    )
    parser.add_argument(
        "--round", default=None, metavar="NAME", help="the round's name in --append-to"
    )
    parser.add_argument(
        "--round-date",
        type=day,
        default=None,
        metavar="YYYY-MM-DD",
        help="the round's date in --append-to, e.g. the last day of the month the item list "
        "covers (default: the date select recorded, else the day of the draw)",
    )
    parser.add_argument(
        "--classifier",
        default=None,
        metavar="NAME",
        help="the main classifier's name in --append-to (default: the one the workbook was "
        "drawn for, else the sheet's classifier when it holds one only); the sample's other "
        "classifiers are added in the same run under their own names, and naming one of "
        "them adds its round alone",
    )
    parser.add_argument(
        "--sheet", default=None, metavar="SHEET", help="the sheet of --append-to to add to"
    )
    parser.add_argument(
        "--column",
        metavar="ROLE=HEADER",
        action="append",
        default=[],
        help="in --append-to, the column headed HEADER holds ROLE (repeatable; as in "
        "prplanner rounds), for a workbook in your own words, e.g. tp='True frauds caught'",
    )
    parser.add_argument(
        "--update",
        action="store_true",
        help="when --append-to already holds this round (the same draw) with other counts, "
        "replace its counts and notes with the new ones",
    )
    parser.add_argument(
        "--fpc",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="finite population correction (default on, as in the app: the sample is drawn "
        "without replacement from a list of known size, so it is exact; --no-fpc for the "
        "plain intervals)",
    )
    add_target_flags(
        parser,
        "target margins (say whether the round met them, and what a top-up needs; default: "
        "the margins the workbook was drawn for, when select recorded them; a margin not "
        "given stays as recorded)",
        "confidence level in (0.5, 1) of the evaluation and the targets (default: the level "
        "the workbook records, else 0.95)",
    )
    parser.add_argument(
        "--assurance-target",
        type=number,
        metavar="G",
        help="size a top-up so that the chance that the topped-up round meets both margins "
        "is at least G (0 < G < 1, e.g. 0.9), given the labels so far (default: a top-up "
        "that meets them at the rates labeled so far; its chance is stated)",
    )
    parser.add_argument(
        "--replicates",
        type=whole,
        default=10_000,
        metavar="Q",
        help="bootstrap and Monte-Carlo replicates (default 10000, at most 1,000,000)",
    )
    add_json_flag(parser)


def run(args: argparse.Namespace) -> LabeledSample:
    from core import validation
    from core.workbook.labeling import (
        evaluate_labels,
        largest_draw,
        misread_as_labels,
        misread_words,
        read_labeling_workbook,
        round_name,
    )

    replicates = validation.whole_at_least(
        "--replicates", args.replicates, 100, validation.MAX_REPLICATES
    )
    target = args.append_to
    if args.column and target is None:
        raise InputError("--column says what the columns of --append-to hold; add --append-to")
    if target is None:
        # Said once, not ignored: the date given was lost without a word (review 16).
        for flag, value in (
            ("--round", args.round), ("--round-date", args.round_date),
            ("--classifier", args.classifier), ("--sheet", args.sheet),
            ("--update", args.update or None),
        ):  # fmt: skip
            if value is not None:
                raise InputError(f"{flag} is for the round --append-to adds; add --append-to")
    if target is not None and target.suffix.casefold() not in (".xlsx", ".xlsm"):
        raise InputError(f"--append-to must name an .xlsx workbook, got {target.name}")
    if target is not None and target.is_dir():
        raise InputError(f"--append-to {target}: is a folder; name a rounds workbook (.xlsx)")
    if target is not None and target.exists() and not target.is_file():
        raise InputError(
            f"--append-to {target}: is not a regular file (a device or a pipe); name a rounds "
            "workbook (.xlsx)"
        )
    before = None
    if target is not None:
        from core.workbook.safe_io import fingerprint, is_session, sheet_names

        if target.is_file() and is_session(sheet_names(target)):
            raise InputError(
                f"--append-to {target.name}: it is a report or session PR Planner wrote; a row "
                "added to its Rounds sheet would not change its Summary and charts. Add the "
                "round to your rounds workbook, then make the report again (prplanner "
                "report); or open the session in the app and read the labels there"
            )

        # Fingerprinted before anything is read, so a save by another program while the
        # labels are counted is caught.
        before = fingerprint(target)
        if before is None and target.is_file():
            # There, but unreadable: it was taken for a new workbook and refused as
            # "exists already; add to it instead of starting it" (fuzz 18).
            from core.errors import os_error_cause

            try:
                target.open("rb").close()
            except OSError as exc:
                raise InputError(
                    f"--append-to {target.name}: cannot be opened ({os_error_cause(exc)}); "
                    "nothing was written"
                ) from None
        if before is None and not target.parent.is_dir():
            raise InputError(f"--append-to {target}: no such folder {target.parent}")
    resolve_targets(args)  # malformed margin flags are refused before the (long) read
    if args.assurance_target is not None:
        validation.open_unit("--assurance-target", args.assurance_target)
    for path in args.workbooks:
        kind = misread_as_labels(path)
        if kind == "item_list":
            raise InputError(
                f"{path.name} is an item list, not a labeling workbook; labels reads the "
                ".xlsx that prplanner select wrote (prplanner select ITEMS --n-pos N1 "
                "--n-neg N0 -o SHEET.xlsx draws one from the item list)"
            )
        if kind is not None:
            raise InputError(misread_words(path, kind))
    workbooks = [read_labeling_workbook(path) for path in args.workbooks]
    from core.workbook.safe_io import locked

    for path, lock in locked(args.workbooks):
        print(
            f"note: {path.name} is open in another program (lock file {lock.name}); "
            "labels typed there since it was last saved are not counted",
            file=sys.stderr,
        )
    # The workbook of the largest draw lists the whole sample so far, and a top-up records
    # the targets it was drawn for.
    latest = largest_draw(workbooks)
    stored = latest.design.targets
    margins_given = any(
        value is not None for value in (args.margin, args.margin_precision, args.margin_recall)
    )
    if latest.design.targets_note and not margins_given:
        print(f"note: {latest.design.targets_note}", file=sys.stderr)
    targets = resolve_targets(args, stored)  # what is not given stays as recorded
    if args.confidence is not None:
        confidence = confidence_flag(args.confidence)
    else:
        confidence = targets.confidence if targets is not None else 0.95
    # "As recorded" only when the flags changed nothing; otherwise the top-up command
    # carries the targets used.
    source = None
    if targets is not None:
        source = latest.path.name if targets == stored else "flags"
    result = evaluate_labels(workbooks, confidence=confidence, replicates=replicates, fpc=args.fpc)
    primary = result.primary
    if targets is not None and primary.labeled_pos and primary.labeled_neg:
        # Every classifier of the draw is judged by the same margins: its sample is as
        # large as the main one's, and a top-up raises them all.
        further_targets = tuple(
            _check(labels, workbooks, targets, args.fpc, args.assurance_target)
            if labels.labeled_pos and labels.labeled_neg
            else None
            for labels in result.labels[1:]
        )
        result = dataclasses.replace(
            result,
            further_targets=further_targets,
            targets=_check(primary, workbooks, targets, args.fpc, args.assurance_target),
            targets_from=source,
            extend_from=str(latest.path),
            item_list=latest.design.file_name,
            round_name=round_name(workbooks),
        )
    if primary.unlabeled:
        print(
            f"note: {primary.unlabeled:,} item(s) have no label yet "
            f"({_where_unlabeled(primary)}); the counts and the evaluation use the labeled "
            "items only",
            file=sys.stderr,
        )
    if result.evaluations[0] is None:
        print(
            "note: no evaluation yet: each stratum needs at least one item labeled positive "
            "or negative",
            file=sys.stderr,
        )
    if target is not None:
        from core.workbook.append_round import NotAdded

        outcomes = _append(args, workbooks, result, before)
        for outcome in outcomes:
            if isinstance(outcome, NotAdded):  # run twice, or no sheet for it: not a failure
                print(f"note: {outcome}", file=sys.stderr)
        # "appended" is the first round's row (the main classifier's, or the one named
        # alone), never a further classifier's standing in for it (review 16).
        first = outcomes[0]
        result = dataclasses.replace(
            result,
            appended=None if isinstance(first, NotAdded) else first,
            also_appended=tuple(
                outcome for outcome in outcomes[1:] if not isinstance(outcome, NotAdded)
            ),
        )
    return result


def _where_unlabeled(labels, shown: int = 5) -> str:
    """``'m12' in round.xlsx row 14, ...``: the first items without a label, where the
    labelers find them (--json lists every one)."""
    items = labels.unlabeled_items
    listed = ", ".join(f"{item.id!r} in {item.where}" for item in items[:shown])
    return listed + (", ...; --json lists them all" if len(items) > shown else "")


def _check(
    primary, workbooks, targets: Targets, fpc: bool, chance_target: float | None
) -> TargetCheck:
    """The round against the margins, with the top-up a plan from it asks for (large
    enough for ``chance_target`` when given)."""
    from core.round_targets import check_targets
    from core.session import PlanInputs, SessionState
    from core.workbook.labeling import round_name
    from core.workbook.rounds import Round

    design = primary.design
    item = Round(
        sheet="labels",
        row=1,
        round=round_name(workbooks),
        k=design.population_pos / design.population_neg,
        population_pos=design.population_pos,
        population_neg=design.population_neg,
        tp=primary.tp,
        fp=primary.fp,
        fn=primary.fn,
        tn=primary.tn,
    )
    return check_targets(
        targets.applied_to(
            SessionState(plan=PlanInputs(fpc=fpc, assurance_target=chance_target or 0.0))
        ),
        item,
        fpc=fpc,
        drawn=primary.drawn,
        skipped=primary.skipped_by_stratum,
    )


def _append(args, workbooks, result: LabeledSample, before) -> tuple[AppendedRound | NotAdded, ...]:
    """Add the round to ``--append-to``: the main classifier's and each further
    classifier's with labels in both strata, in one write (or, with ``--classifier``
    naming a further classifier, that one's alone). One entry per round, in order."""
    from core.workbook.append_round import (
        NotAdded,
        append_rounds,
        start_rounds_workbook,
    )
    from core.workbook.labeling import largest_draw
    from core.workbook.rounds import classifier_key

    primary = result.primary
    if primary.labeled_pos == 0 or primary.labeled_neg == 0:
        raise InputError(
            "nothing to add to the rounds workbook yet: each stratum needs at least one item "
            "labeled positive or negative"
        )
    further = {labels.design.name: labels for labels in result.labels[1:]}
    # Named as the user typed it ("V2" for the column v2): one classifier whatever its case.
    by_key = {classifier_key(name): labels for name, labels in further.items()}
    alone = by_key.get(classifier_key(args.classifier)) if args.classifier else None
    filed_under = largest_draw(workbooks).design.filed_under
    if alone is not None:
        # --classifier naming a further classifier of the sample (--classifiers of select)
        # records that classifier's counts and population, not the main one's.
        if alone.labeled_pos == 0 or alone.labeled_neg == 0:
            raise InputError(
                f"nothing to add for classifier {args.classifier!r} yet: each of its strata "
                "needs at least one item labeled positive or negative"
            )
        chosen = [(alone, args.classifier)]
    elif args.sheet is not None and further:
        # --sheet names the main classifier's sheet: the further classifiers' rounds went
        # onto it too and read back as the main one's (review 16). They take a run each.
        chosen = [(primary, args.classifier or filed_under or None)]
        print(
            f"note: with --sheet, only the main classifier's round is added; the sample's "
            f"other classifiers ({', '.join(further)}) each take a run of their own: "
            "--classifier NAME --sheet THEIR_SHEET",
            file=sys.stderr,
        )
    else:
        # Every classifier of the sample in one run, as the app adds them: one run per
        # classifier left the other classifiers' histories to a note (trial 16).
        chosen = [(primary, args.classifier or filed_under or None)]
        for name, labels in further.items():
            if labels.labeled_pos and labels.labeled_neg:
                chosen.append((labels, name))
            else:
                print(
                    f"note: classifier {name!r} was not added: each of its strata needs at "
                    "least one item labeled positive or negative",
                    file=sys.stderr,
                )
    filed = [classifier_key(name) for _labels, name in chosen if name]
    if len(filed) != len(set(filed)):
        # The main classifier filed under a further one's name: two rows of one round
        # under one classifier, one with the other's population (review 16).
        raise InputError(
            f"the main classifier would be filed under {chosen[0][1]!r}, the name of another "
            "classifier of the sample; file it under its own name (--classifier NAME). "
            "Nothing was written"
        )
    check = result.targets
    judged_by = ""
    if check is not None:  # a report then judges the rounds by them
        from core.workbook.rounds import targets_note

        judged_by = "; " + targets_note(
            check.precision.target, check.recall.target, check.confidence
        )
    new_rounds = [
        # Every classifier's row names the targets, as the app's rows do: a report then
        # judges each by the margins the draw was made for (review 16).
        _new_round(args, workbooks, labels, name, judged_by)
        for labels, name in chosen
    ]
    if before is None:  # a first round: start the lead's rounds workbook with it
        outcomes: tuple = start_rounds_workbook(
            args.append_to, new_rounds, sources=tuple(args.workbooks)
        )
    else:
        outcomes = append_rounds(
            args.append_to,
            new_rounds,
            sheet=args.sheet,
            sources=tuple(args.workbooks),
            expected=before,
            update=args.update,
            other_classifiers=tuple(further) if alone is None else (),
            columns=tuple(args.column),
        )
    main = outcomes[0]
    if alone is None and args.classifier is None and filed_under:
        print(
            f"note: the round is filed under classifier {filed_under!r}, the one the "
            "workbook was drawn for (--classifier NAME files it under another)",
            file=sys.stderr,
        )
    elif further and args.classifier is not None and alone is None:
        # A name that is none of the sample's further classifiers files the main one's
        # counts: say whose, and which name would have filed another's alone.
        import difflib

        keys = {classifier_key(name): name for name in further}
        close = difflib.get_close_matches(classifier_key(args.classifier), list(keys), n=1)
        hint = f"; did you mean --classifier {keys[close[0]]}?" if close else ""
        print(
            f"note: the round filed under {args.classifier!r} holds the counts of the main "
            f"classifier ({primary.design.name}); the sample's other classifiers are filed "
            f"under their own names, and --classifier with one of those names adds its "
            f"round alone{hint}",
            file=sys.stderr,
        )
    elif args.classifier is None and not isinstance(main, NotAdded) and main.classifier:
        print(
            f"note: the round is filed under classifier {main.classifier!r}, the only one "
            f"on sheet {main.sheet!r} (--classifier NAME files it under another)",
            file=sys.stderr,
        )
    return outcomes


def _new_round(args, workbooks, labels, classifier: str | None, judged_by: str) -> NewRound:
    """The row ``labels`` (one classifier's counts) adds, filed under ``classifier``;
    ``judged_by`` ends its notes (the target margins a report judges it by)."""
    from core.workbook.append_round import NewRound
    from core.workbook.labeling import round_date, round_name, round_notes

    design = labels.design
    return NewRound(
        round=round_name(workbooks) if args.round is None else args.round,
        date=args.round_date or round_date(workbooks),
        classifier=classifier,  # None: the sheet's only classifier (append_round)
        population_pos=design.population_pos,
        population_neg=design.population_neg,
        tp=labels.tp,
        fp=labels.fp,
        fn=labels.fn,
        tn=labels.tn,
        notes=round_notes(labels, workbooks, judged_by),
    )


#: Names of the metrics in the open items' table, as the evaluation table spells them.
_RANGE_METRICS = (("precision", "precision"), ("recall", "recall"), ("f1", "F1"))


def _open_item_lines(primary, result: dict) -> list[str]:
    """How far the skipped (and unlabeled) items could move each estimate, as a small
    table: one column for the skipped items, one with the unlabeled ones too. Set apart
    from the intervals below, which a "between" line was read as."""
    from core.cli.evaluate import percent
    from core.workbook.labeling import span_words

    columns = []
    for key, unlabeled_too in (
        ("range_if_skipped", False),
        ("range_if_skipped_or_unlabeled", True),
    ):
        if unlabeled_too and not primary.unlabeled:
            continue  # the same items as the column before
        subject = primary.open_items_in_words(unlabeled_too=unlabeled_too, verb=False)
        spans = result[key]
        if subject and spans["precision"] is not None:
            columns.append((subject.removesuffix(" items").removesuffix(" item"), spans))
    if not columns:
        return []
    rows = [["", *(subject for subject, _ in columns)]]
    for key, name in _RANGE_METRICS:
        cells = [
            "-" if spans.get(key) is None else span_words(spans[key], percent)
            for _, spans in columns
        ]
        rows.append([name, *cells])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "the items still open could move each estimate only this far, whatever their "
        "labels turn out to be (not confidence intervals):",
        *(
            "  " + "   ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows
        ),
    ]


def format_text(labeled: LabeledSample) -> str:
    from core.cli.evaluate import format_text as evaluation_text
    from core.cli.evaluate import percent

    result = labeled.to_dict()
    lines = [
        f"seed {result['seed']}; population {result['population_pos']:,} predicted positive, "
        f"{result['population_neg']:,} predicted negative",
        f"TP {result['tp']:,}  FP {result['fp']:,}  FN {result['fn']:,}  TN {result['tn']:,}"
        f"   (labeled {result['labeled_pos']:,} flagged + {result['labeled_neg']:,} unflagged; "
        "skipped "
        f"{result['skipped']:,}; unlabeled {result['unlabeled']:,})",
    ]
    primary = labeled.primary
    if primary.labeled_pos or primary.labeled_neg:
        lines.extend(_open_item_lines(primary, result))
    if labeled.targets is not None:
        lines.append("")
        lines.extend(_target_lines(labeled))
    evaluation = labeled.evaluations[0]
    if evaluation is not None:
        lines.append("")
        lines.append(evaluation_text(evaluation))
    further: Any = result.get("classifiers", [])
    checks = labeled.further_targets or (None,) * len(further)
    from core.workbook.labeling import category_words

    category = labeled.category
    for item, check in zip(further, checks, strict=True):
        lines.append("")
        lines.append(
            f"classifier {item['name']}: TP {item['tp']:,}  FP {item['fp']:,}  FN "
            f"{item['fn']:,}  TN {item['tn']:,} (skipped {item['skipped']:,}, unlabeled "
            f"{item['unlabeled']:,})"
        )
        if category:
            # Shared labels answer the editors' one question: a classifier of another
            # category read "phishing recall 11.8 %" with no caveat (trial 19).
            lines.append(
                f"  judged by the editors' labels of {category_words(category)}: its precision "
                "and recall are of that category (a classifier of another one needs a draw "
                "of its own)"
            )
        evaluated = item.get("evaluation")
        if evaluated:
            # The intervals to quote (Wilson, Katz log), as the main classifier's table marks.
            for metric, method, words in (
                ("precision", "wilson", "Wilson"),
                ("recall", "katz_log", "Katz log"),
            ):
                found = evaluated[metric]
                lower, upper = found["intervals"].get(method, (None, None))
                lines.append(
                    f"  {metric} {percent(found['estimate'])} ({words} {percent(lower)} to "
                    f"{percent(upper)})"
                )
        if check is not None:
            lines.append("  " + _further_verdict(check))
    lines += _further_top_up_lines(labeled)
    appended = result.get("appended")
    if appended:
        assert isinstance(appended, dict)
        lines.append("")
        done = (
            "started"
            if appended.get("created")
            else "updated the round in"
            if appended.get("updated")
            else "added to"
        )
        lines.append(
            f"{done} {appended['file']}: sheet {appended['sheet']!r}, row {appended['row']}"
        )
        if appended.get("not_kept"):
            from core.workbook.append_round import not_kept_words

            lines.append("  note: " + not_kept_words(str(appended["sheet"]), appended["not_kept"]))
    also_appended = result.get("also_appended") or []
    assert isinstance(also_appended, list)
    if also_appended and not appended:
        lines.append("")
    for also in also_appended:
        done = "updated" if also.get("updated") else "added"
        lines.append(
            f"{'  and ' if appended else ''}classifier {also['classifier']}'s round {done}: "
            f"{Path(str(also['file'])).name}, sheet {also['sheet']!r}, row {also['row']}"
        )
    return "\n".join(lines)


def _target_lines(labeled: LabeledSample) -> list[str]:
    """Whether the round met the target margins, and the top-up that would (in words)."""
    from core.cli.evaluate import percent
    from core.round_targets import margin_and_target

    check = labeled.targets
    assert check is not None
    corrected = ", finite population correction" if check.fpc else ""
    source = labeled.targets_from
    recorded = "" if source in (None, "flags") else f", as recorded in {source}"
    lines = [f"target margins ({100 * check.confidence:g} % confidence{corrected}{recorded}):"]
    quoted = {"wilson": "Wilson", "katz_log": "Katz log"}
    for margin in (check.precision, check.recall):
        # By how much: ±5.01 % against ±5.00 % said only MISSED (trial 21).
        over = 100 * (margin.half_width - margin.target)
        verdict = "met" if margin.met else f"MISSED by {over:.2g} percentage points"
        half, target = margin_and_target(margin.half_width, margin.target, percent)
        lines.append(
            f"  {margin.metric}: known to ±{half} ({percent(margin.lower)}"
            f" to {percent(margin.upper)} by {quoted.get(margin.method, margin.method)}; ± is "
            f"half the width), target ±{target}: {verdict}"
        )
    swings = labeled.primary.swings_beyond(check.target_margins)
    if swings:
        from core.round_targets import swings_in_words

        subject = labeled.primary.open_items_in_words(unlabeled_too=True, verb=False)
        lines += [f"  careful: {words}" for words in swings_in_words(swings, percent, subject)]
        lines.append(
            "  if the editors skipped the hard cases the estimate leans: have the skipped "
            "items labeled before relying on it"
        )
    if check.met:
        lines.append("both target margins are met")
        return lines
    if check.needed is None:
        lines.append(
            "no larger sample of this population meets both targets; consider wider margins"
            + (
                ""
                if check.fpc
                else " or --fpc (the sample is drawn without replacement: labeling much of "
                "a small group removes much of its uncertainty)"
            )
        )
        return lines
    lines += _needed_lines(check)
    waiting = labeled.primary.unlabeled
    if waiting:
        lines.append(f"  first label the {waiting:,} item(s) that have no label yet")
    if check.top_up is not None:
        n_pos, n_neg = check.top_up
        lines.append(
            f"  then draw more (sample totals {n_pos:,} and {n_neg:,}"
            + ("; skipped items are made up for" if labeled.primary.skipped else "")
            + "):"
        )
        lines.append("  " + _top_up_command(labeled, n_pos, n_neg))
    return lines


def _further_verdict(check: TargetCheck) -> str:
    """A further classifier's round against the target margins, in one line."""
    from core.cli.evaluate import percent
    from core.round_targets import margin_and_target

    if check.met:
        return "target margins: both met"
    missed = [
        "{} ±{} (target ±{})".format(
            margin.metric, *margin_and_target(margin.half_width, margin.target, percent)
        )
        for margin in (check.precision, check.recall)
        if not margin.met
    ]
    return "target margins: MISSED, " + ", ".join(missed)


def _further_top_up_lines(labeled: LabeledSample) -> list[str]:
    """The top-up that meets the targets of every classifier of the draw, when another
    classifier than the main one needs more than the main one's top-up draws."""
    from core.round_targets import top_up_for_the_draw

    main = labeled.targets
    if main is None:
        return []
    others = [
        (labels.design.name, check)
        for labels, check in zip(labeled.labels[1:], labeled.further_targets, strict=False)
        if check is not None
    ]
    design = labeled.primary.design
    draw = top_up_for_the_draw(main.top_up, others, (design.population_pos, design.population_neg))
    lines = [
        f"{name}: no top-up of this draw meets both targets (the main classifier's lists are "
        f"too small); draw a sample of its own (prplanner select ITEMS --predicted {name} ...)"
        for name in draw.own_draw
    ]
    if lines:
        lines.insert(0, "")
    if draw.sizes is None or draw.sizes == main.top_up or not draw.served:
        return lines  # the main classifier's own top-up (if any) is enough for all
    n_pos, n_neg = draw.sizes
    return [
        *lines,
        "",
        f"to meet the targets for {', '.join(draw.served)} too, draw more (sample totals "
        f"{n_pos:,} and {n_neg:,}; every classifier's sample grows with them):",
        "  " + _top_up_command(labeled, n_pos, n_neg),
    ]


def _needed_lines(check: TargetCheck) -> list[str]:
    """How many labels a top-up brings the round to, and its chance of meeting both
    targets given the labels so far (the new labels scatter, so a top-up just enough at
    the labeled rates is not sure to be enough)."""
    from core.round_targets import SURER_CHANCE
    from core.round_targets import chance_in_words as percent

    assert check.needed is not None and check.chance is not None
    (need_pos, need_neg), (have_pos, have_neg) = check.needed, check.labeled
    chance, wanted = check.chance.both, check.chance_target

    sizes = (
        f"about {need_pos:,} flagged and {need_neg:,} unflagged items need a label in all "
        f"({have_pos:,} and {have_neg:,} have one)"
    )
    asked = percent(wanted, article=True, target=True)
    if wanted and chance >= wanted:
        return [
            f"for {asked} chance of meeting both, {sizes}; chance that they do, given the "
            f"labels so far: {percent(chance)}"
        ]
    lines = []
    if wanted:
        lines.append(f"no sample of this population gives {asked} chance of meeting both")
    lines.append(
        f"to meet both at the rates labeled so far, {sizes}; chance that they do, given the "
        f"labels so far: {percent(chance)}"
        + (
            ""
            if wanted or chance >= SURER_CHANCE
            else f" (--assurance-target {SURER_CHANCE:g} sizes it for "
            f"{percent(SURER_CHANCE, article=True)} chance)"
        )
    )
    return lines


def _top_up_command(labeled: LabeledSample, n_pos: int, n_neg: int) -> str:
    """The ``select --extend`` command that draws the top-up, ready to paste into a shell:
    names quoted, a new workbook name that is free, and the margin flags when the targets
    were given on the command line (the top-up then records them, not the earlier ones)."""
    import os
    import shlex
    import subprocess

    from core.workbook.safe_io import free_name

    check = labeled.targets
    assert check is not None
    extend = Path(labeled.extend_from) if labeled.extend_from else None
    items = labeled.item_list or "ITEMS"
    if labeled.item_list and not Path(items).is_file():
        # The Design sheet records the list's name only: look beside the workbook, so the
        # command also runs from another folder; else say where the path goes.
        beside = extend.parent / items if extend is not None else None
        if beside is not None and beside.is_file():
            items = str(beside)
        else:
            items = f"FOLDER/{items}"
    parts = ["prplanner", "select", items]
    parts += ["--extend", str(extend) if extend else "SHEET.xlsx"]
    parts += ["--n-pos", str(n_pos), "--n-neg", str(n_neg)]
    if labeled.targets_from == "flags":
        precision, recall = check.precision.target, check.recall.target
        if precision == recall:
            parts += ["--margin", f"{precision:g}"]
        else:
            parts += ["--margin-precision", f"{precision:g}", "--margin-recall", f"{recall:g}"]
        parts += ["--confidence", f"{check.confidence:g}"]
    stem = labeled.round_name or (extend.stem if extend else "")
    output = free_name(extend.parent, f"{stem}_topup", ".xlsx") if extend else "TOPUP.xlsx"
    parts += ["-o", str(output)]
    # Quoted for the shell the lead pastes it into.
    command = subprocess.list2cmdline(parts) if os.name == "nt" else shlex.join(parts)
    if items.startswith("FOLDER/"):
        name = items.removeprefix("FOLDER/")
        command += (
            f"\n  ({name} is neither in this folder nor beside the workbook: put its folder "
            "in place of FOLDER)"
        )
    return command
