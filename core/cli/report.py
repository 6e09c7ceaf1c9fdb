"""``prplanner report FILE.xlsx -o REPORT.xlsx [--round NAME] [--margin B] [--confidence C]``.

Writes the Excel report of issue 5 (the same workbook as File > Export report... in the
app). ``FILE`` is a saved session (a report with its Inputs sheet) or a plain rounds
workbook. The round evaluated is ``--round``; without it, a saved session reports what
its Evaluate tab holds and a plain rounds workbook its last round (the newest one in
the sheet, which is what someone running this on their history file wants).

JSON keys (``--json``): ``output, subject, round, rounds, estimates, plan, warnings,
problems``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core.cli.output import add_json_flag, number

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
        help="where to write the report (replaced atomically if it exists)",
    )
    parser.add_argument(
        "--round",
        metavar="NAME",
        default=None,
        help="the round to evaluate (default: the session's Evaluate tab, or the last "
        "round of a plain rounds workbook)",
    )
    parser.add_argument(
        "--margin",
        metavar="B",
        type=number,
        default=None,
        help="target margin (half-width) for precision and recall of the next round, "
        "in (0, 0.5), e.g. 0.03",
    )
    parser.add_argument(
        "--confidence",
        metavar="C",
        type=number,
        default=None,
        help="confidence level in (0.5, 1) (default: the session's, 0.95)",
    )
    add_json_flag(parser)


def run(args: argparse.Namespace) -> dict:
    from core import validation
    from core.workbook.report import write_report
    from core.workbook.rounds import Round
    from core.workbook.session_io import read_session

    # Flags are checked before the file is read, so a typo costs nothing.
    margin = None if args.margin is None else validation.margin("--margin", args.margin)
    if args.confidence is not None and not 0.5 < args.confidence < 1:
        from core.errors import InputError

        raise InputError(
            f"--confidence must be strictly between 0.5 and 1 (e.g. 0.95), got {args.confidence!r}"
        )
    opened = read_session(args.file)
    round_name = args.round
    notes = list(opened.problems)
    if round_name is None and not opened.is_session:
        named = [item for item in opened.state.rounds if isinstance(item, Round) and item.round]
        if named:
            round_name = named[-1].round
            notes.append(f"no --round given: reporting the last round, {round_name}")
    content = write_report(
        args.output,
        opened.state,
        round_name=round_name,
        margin=margin,
        confidence=args.confidence,
    )
    result = {"output": str(args.output)}
    result.update(content.to_dict())
    result["problems"] = notes
    return result


def format_text(result: dict) -> str:
    """Where the report went, what it is about, and what the reader should know."""
    lines = [f"wrote {result['output']}", f"  about {result['subject']}"]
    rounds = result["rounds"]
    lines.append(f"  {rounds:,} past round{'s' if rounds != 1 else ''} on the Rounds sheet")
    estimates = result.get("estimates") or {}
    for name, label in (("precision", "precision"), ("recall", "recall")):
        value = (estimates.get(name) or {}).get("estimate")
        if value is not None:
            lines.append(f"  {label} {value:.1%}")
    plan = result.get("plan")
    if plan:
        lines.append(
            f"  next round: s = {plan['s']:.3g}, label {plan['n_pos']:,} predicted positives "
            f"and {plan['n_neg']:,} predicted negatives ({plan['total']:,} in all)"
        )
    for text in result.get("problems", []):
        lines.append(f"note: {text}")
    for text in result.get("warnings", []):
        lines.append(f"warning: {text}")
    return "\n".join(lines)
