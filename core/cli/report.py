"""``prplanner report FILE.xlsx -o REPORT.xlsx [--round NAME] [--margin B] [--confidence C]``.

Writes the Excel report (the same workbook as File > Export report... in the
app). ``FILE`` is a saved session (a report with its Inputs sheet) or a plain rounds
workbook. The round evaluated is ``--round``; without it, a saved session reports what
its Evaluate tab holds (named as its current round while the tab still shows that
round's counts) and a plain rounds workbook its most recent round by date (a round
without a date after the rounds above it, ties by sheet order; the note says which). For a plain
rounds workbook the whole session is built from the reported round (its counts,
population, ``s`` and total labels; see :func:`core.workbook.session_io.session_for_round`),
so the Summary, the plan and the Inputs sheet are about that round only. A plain workbook
with no usable rounds is an error (exit 2).

JSON keys (``--json``): ``output, subject, round, rounds, estimates, plan, change`` (the
change since the previous round: ``prplanner compare``'s keys plus ``previous_round``; or
null), ``warnings, problems``.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from pathlib import Path
from typing import TYPE_CHECKING

from core.cli.output import (
    add_column_flag,
    add_json_flag,
    check_column_choices,
    column_choices,
    number,
    refuse_labeling_workbook,
    refuse_text_table,
    why_no_rounds,
)

if TYPE_CHECKING:
    from core.workbook.report import WrittenReport

HELP = "write the Excel report of a rounds workbook or a saved session"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        metavar="FILE.xlsx",
        type=Path,
        help="a rounds workbook (one round per row) or a session saved by PR Planner",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="REPORT.xlsx",
        type=Path,
        required=True,
        help="where to write the report: a new file, or a report PR Planner wrote before "
        "(replaced atomically); never FILE itself or a workbook PR Planner did not write",
    )
    parser.add_argument(
        "--round",
        metavar="NAME",
        default=None,
        help="the round to evaluate, by name or as shown with its classifier ('R1 (finance)') "
        "(default: the session's Evaluate tab, or the most recent round by date of a plain "
        "rounds workbook)",
    )
    parser.add_argument(
        "--margin",
        metavar="B",
        type=number,
        default=None,
        help="target margin (half-width) for precision and recall of the next round, "
        "in (0, 0.5), e.g. 0.03 (default: the session's margins; for a plain rounds "
        "workbook 0.05)",
    )
    parser.add_argument(
        "--confidence",
        metavar="C",
        type=number,
        default=None,
        help="confidence level in (0.5, 1) (default: the session's, 0.95)",
    )
    parser.add_argument(
        "--fpc",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="finite population correction for the round's intervals and the next round's "
        "plan, where both population counts are known (the intervals prplanner labels and "
        "the app's Read labeled workbook give; default: the session's setting; for a rounds "
        "workbook, on for a round PR Planner drew from an item list, else off)",
    )
    add_column_flag(parser)
    add_json_flag(parser)


def run(args: argparse.Namespace) -> WrittenReport:
    from core import validation
    from core.errors import InputError
    from core.workbook.layout import round_order_notes
    from core.workbook.report import WrittenReport, find_round, write_report
    from core.workbook.safe_io import check_destination
    from core.workbook.session_io import read_session, report_subject, workbook_session

    # Flags are checked before the file is read, so a typo costs nothing.
    margin = None if args.margin is None else validation.margin("--margin", args.margin)
    if args.confidence is not None:
        validation.confidence(args.confidence, "--confidence")
    choices = column_choices(args)
    refuse_text_table(
        args.file, "prplanner report reads a rounds workbook or a saved session (.xlsx)"
    )
    refuse_labeling_workbook(args.file, "report")
    # Refuse a destination that must not be written before the input is read.
    check_destination(args.output, sources=(args.file,), purpose="report")
    opened = read_session(args.file, columns=choices)
    check_column_choices(opened, args.file, choices)
    state = opened.state
    notes = [*opened.problems, *opened.guesses, *opened.notes]
    notes += round_order_notes(state.rounds)
    subject = args.round
    if not opened.is_session:
        # A plain rounds workbook: the report is about one of its rounds, and every input
        # of the session comes from that round (never the defaults of an empty session);
        # the app builds the same session when it opens the workbook (workbook_session).
        if not state.rounds:
            raise InputError(f"{args.file} has no usable rounds ({why_no_rounds(notes)})")
        warnings: list[str] = []
        if args.round is not None:
            subject = find_round(state.rounds, args.round, warnings, _refused(opened))
            state, _item, round_notes = workbook_session(
                state.rounds, item=subject, columns=state.columns
            )
            state = dataclasses.replace(state, rows_not_loaded=opened.state.rows_not_loaded)
            notes.extend(round_notes)
        else:
            subject = report_subject(state)
            notes.append(
                f"no --round given: reporting the most recent round by date, {_describe(subject)}"
            )
        notes.extend(warnings)
    elif subject is None:
        # A saved session: its current round while the Evaluate tab still shows it (what
        # the app's Export report writes too), else the counts typed on the Evaluate tab.
        subject = report_subject(state)
    else:
        # A saved session's other round: reported as History shows it, with the
        # correction its own design gives (or --fpc's), not the box of the round the
        # session shows (review 15: its Summary and Rounds sheet disagreed).
        from core.workbook.report import find_round
        from core.workbook.session_io import find_round_key, round_key

        found = find_round(
            state.rounds,
            subject,
            notes,
            prefer=find_round_key(state.rounds, state.current_round),
        )
        if round_key(found) != state.current_round:
            state = dataclasses.replace(
                state,
                current_round=round_key(found),
                evaluate=dataclasses.replace(state.evaluate, fpc=found.corrected_by_design),
            )
        subject = found
    if args.fpc is None and not opened.is_session:
        # A round PR Planner drew from an item list is reported as labels judged it: with
        # the correction, which is exact for a draw without replacement from a known list.
        args.fpc = True if getattr(subject, "drawn_by_the_rule", False) else None
    if args.fpc is not None:
        # One switch for the round's intervals and the next round's plan, as in labels.
        state = dataclasses.replace(
            state,
            evaluate=dataclasses.replace(state.evaluate, fpc=args.fpc),
            plan=dataclasses.replace(state.plan, fpc=args.fpc),
        )
    content = write_report(
        args.output,
        state,
        round_name=subject,
        margin=margin,
        confidence=args.confidence,
        sources=(args.file,),
        # A plain rounds workbook records no targets: judge the round only by given ones.
        judge_targets=opened.is_session or margin is not None,
    )
    return WrittenReport(path=Path(args.output), content=content, problems=tuple(notes))


def _describe(item) -> str:
    name = item.round or f"row {item.row} of sheet {item.sheet!r}"
    if item.date is None:
        return f"{name} (no round has a date: the last one in sheet order)"
    return f"{name} ({item.date.isoformat()})"


def format_text(written: WrittenReport) -> str:
    """Where the report went, what it is about, and what the reader should know."""
    content = written.content
    lines = [f"wrote {written.path}", f"  about {content.subject}"]
    rounds = len(content.state.rounds)
    lines.append(f"  {rounds:,} past round{'s' if rounds != 1 else ''} on the Rounds sheet")
    if content.evaluation is not None:
        for name in ("precision", "recall"):
            estimate = getattr(content.evaluation, name).estimate
            if math.isfinite(estimate):
                lines.append(f"  {name} {estimate:.1%}")
    plan = content.plan
    if plan is not None:
        lines.append(
            f"  next round: s = {plan.s:.3g}, label {plan.n_pos:,} predicted positives "
            f"and {plan.n_neg:,} predicted negatives ({plan.total:,} in all)"
        )
    lines.extend(f"note: {text}" for text in written.problems)
    lines.extend(f"warning: {text}" for text in content.warnings)
    return "\n".join(lines)


def _refused(opened) -> tuple:
    """The rows the workbook's reader refused (a round asked for by name may be one)."""
    return opened.book.refused if opened.book is not None else ()
