"""``prplanner compare``: change in precision and recall between two rounds (methods §9).

JSON keys: ``precision_change: {estimate, interval, p_worse}``, ``recall_change: {...}`` (and
``warnings``); see :class:`core.compare.Comparison`. The first round (``--k --tp ...``) is
the previous one, the second (``--k2 --tp2 ...``) the current one: a positive change is an
improvement and ``p_worse`` is the probability that the current round is worse (shown as
``P(decline)`` in the text output). Each round's design is ``--k``/``--k2`` or, as for
``evaluate``, ``--population N_POS N_NEG``/``--population2``.

``prplanner compare ROUNDS.xlsx [--round NAME]`` compares a round of the lead's rounds
workbook (or saved session) with the same classifier's previous round by date, the pairing
of the History tab and the report; without ``--round``, the most recent round. Its JSON
adds ``previous_round`` and ``current_round`` (their names).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from core import validation
from core.cli.evaluate import add_count_flags, matrix_from_flags, percent
from core.cli.output import (
    add_column_flag,
    add_json_flag,
    check_column_choices,
    column_choices,
    confidence_flag,
    number,
    whole,
    why_no_rounds,
)
from core.compare import Comparison, compare
from core.confusion import Population
from core.errors import InputError
from core.session import EVALUATE_SEED

HELP = "Change in precision and recall between two labeled rounds, and P(decline)."


def _add_design_flags(parser: argparse.ArgumentParser, suffix: str, which: str) -> None:
    """``--k`` or ``--population`` of one round (``suffix`` ``""`` or ``"2"``), as evaluate
    (required unless a rounds workbook is given: :func:`run` checks)."""
    design = parser.add_mutually_exclusive_group()
    design.add_argument(
        f"--k{suffix}", type=number, metavar=f"K{suffix}", help=f"k = N1/N0 of the {which} round"
    )
    design.add_argument(
        f"--population{suffix}",
        type=whole,
        nargs=2,
        metavar=(f"N_POS{suffix}", f"N_NEG{suffix}"),
        help=f"population counts of predicted positives and negatives of the {which} round "
        "(k = N_POS/N_NEG)",
    )


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "rounds_file",
        metavar="ROUNDS.xlsx",
        type=Path,
        nargs="?",
        help="your rounds workbook (or a saved session): compare a round with the same "
        "classifier's previous round by date, instead of typing both rounds' counts",
    )
    parser.add_argument(
        "--round",
        metavar="NAME",
        help="with ROUNDS.xlsx: the round to compare with its previous one, by name or as "
        "shown with its classifier ('R1 (finance)') (default: the most recent round)",
    )
    _add_design_flags(parser, "", "previous")
    add_count_flags(parser, required=False)
    _add_design_flags(parser, "2", "current")
    add_count_flags(parser, suffix="2", required=False)
    parser.add_argument(
        "--confidence",
        type=number,
        default=None,
        metavar="C",
        help="level (default 0.95; with a saved session, its level)",
    )
    parser.add_argument(
        "--replicates",
        type=number,
        default=100_000,
        metavar="Q",
        help="posterior draws per round (default 100000, at most 1,000,000)",
    )
    parser.add_argument(
        "--fpc",
        action="store_true",
        help="finite population correction: each round was drawn without replacement from "
        "a list of known size (needs --population and --population2), so the change is that "
        "of the lists' own precision and recall; with ROUNDS.xlsx, both rounds when they "
        "record both population counts (without it, each round as it was drawn: one drawn by "
        "select is corrected, as History and reports do)",
    )
    parser.add_argument(
        "--seed",
        type=whole,
        default=None,
        metavar="S",
        help=f"seed of the posterior draws (default: a saved session's, else {EVALUATE_SEED}, "
        "as the app: the same numbers every run)",
    )
    add_column_flag(
        parser,
        "with ROUNDS.xlsx in your own words: read the column headed HEADER as ROLE "
        "(repeatable; as in prplanner rounds), e.g. date=Datum, tp='True pos.'",
    )
    add_json_flag(parser)


def _k(args: argparse.Namespace, suffix: str, matrix) -> float:
    counts = getattr(args, f"population{suffix}")
    if counts is not None:
        try:
            population = Population.from_counts(*counts)
            population.require_sample_fits(matrix.n_pos, matrix.n_neg)
        except InputError as exc:
            raise InputError(f"--population{suffix}: {exc}") from None
        return population.k
    return validation.imbalance(f"--k{suffix}", getattr(args, f"k{suffix}"))


_ROUND_FLAGS = tuple(
    f"--{name}{suffix}"
    for suffix in ("", "2")
    for name in ("k", "population", "tp", "fp", "fn", "tn")
)


def _given(args: argparse.Namespace, flag: str) -> bool:
    return getattr(args, flag[2:].replace("-", "_")) is not None


def run(args: argparse.Namespace) -> Comparison | RoundsCompared:
    if args.rounds_file is not None:
        return _run_on_workbook(args)
    if args.round is not None:
        raise InputError("--round names a round of ROUNDS.xlsx: give the rounds workbook too")
    if args.column:
        raise InputError("--column says what the columns of ROUNDS.xlsx hold: give it too")
    missing = []
    for suffix in ("", "2"):
        if not _given(args, f"--k{suffix}") and not _given(args, f"--population{suffix}"):
            missing.append(f"--k{suffix} or --population{suffix}")
        missing += [
            flag
            for flag in (f"--tp{suffix}", f"--fp{suffix}", f"--fn{suffix}", f"--tn{suffix}")
            if not _given(args, flag)
        ]
    if missing:
        raise InputError(
            "compare needs your rounds workbook (prplanner compare ROUNDS.xlsx) or both "
            f"rounds' counts; missing: {', '.join(missing)}"
        )
    previous = matrix_from_flags(args)
    current = matrix_from_flags(args, suffix="2")
    k_previous, k_current = _k(args, "", previous), _k(args, "2", current)
    corrected: tuple[Population | None, Population | None] = (None, None)
    if args.fpc:
        absent = [f"--population{s}" for s in ("", "2") if not _given(args, f"--population{s}")]
        if absent:
            raise InputError(
                "--fpc needs both population counts of each round (the correction is about "
                f"what the unlabeled items of a known list can hold); missing: {', '.join(absent)}"
            )
        corrected = (
            Population.from_counts(*args.population),
            Population.from_counts(*args.population2),
        )
    return compare(
        previous,
        current,
        k_previous=k_previous,
        k_current=k_current,
        confidence=confidence_flag(0.95 if args.confidence is None else args.confidence),
        replicates=validation.whole_at_least(
            "--replicates", args.replicates, 1000, validation.MAX_REPLICATES
        ),
        seed=EVALUATE_SEED if args.seed is None else args.seed,
        corrected=corrected,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundsCompared:
    """Two rounds of a rounds workbook compared (``prplanner compare ROUNDS.xlsx``)."""

    comparison: Comparison
    previous_round: str
    current_round: str
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {
            "previous_round": self.previous_round,
            "current_round": self.current_round,
            **self.comparison.to_dict(),
        }


def _run_on_workbook(args: argparse.Namespace) -> RoundsCompared:
    import dataclasses

    from core.cli.output import refuse_labeling_workbook, refuse_text_table
    from core.workbook.layout import most_recent_round, round_order_notes
    from core.workbook.report_content import change_section, find_round, round_label
    from core.workbook.rounds import Round, classifier_key
    from core.workbook.session_io import read_session

    given = [flag for flag in _ROUND_FLAGS if _given(args, flag)]
    if given:
        raise InputError(
            f"give either ROUNDS.xlsx or the counts of two rounds, not both ({given[0]} "
            f"was given with {args.rounds_file.name})"
        )
    choices = column_choices(args)
    refuse_text_table(args.rounds_file, "prplanner compare reads a rounds workbook (.xlsx)")
    refuse_labeling_workbook(args.rounds_file, "compare")
    opened = read_session(args.rounds_file, columns=choices)
    check_column_choices(opened, args.rounds_file, choices)
    state = opened.state
    if args.confidence is not None:
        state = dataclasses.replace(state, confidence=confidence_flag(args.confidence))
    notes: list[str] = ["note: " + note for note in round_order_notes(state.rounds)]
    notes += ["note: " + note for note in (*opened.guesses, *opened.notes)]
    if args.round is not None:
        from core.workbook.session_io import find_round_key

        item = find_round(
            state.rounds,
            args.round,
            notes,
            _refused(opened),
            # A plain rounds workbook has no current round of a session: its last row
            # is no reason to name (review 14).
            prefer=find_round_key(state.rounds, state.current_round) if opened.is_session else None,
        )
    else:
        latest = most_recent_round(state.rounds)
        if latest is None:
            raise InputError(
                f"{args.rounds_file.name} has no usable rounds to compare "
                f"({why_no_rounds(opened.problems)})"
            )
        if state.rows_not_loaded:
            # A refused row may be the newest round (a date Excel cannot show): said, as
            # report says it (recheck 15: compare chose the round before without a word).
            from core.workbook.report_content import not_loaded_warning

            notes.append("warning: " + not_loaded_warning(state.rows_not_loaded, what="comparison"))
        item = latest
        if latest.date is not None:
            # Rounds of other classifiers drawn the same day: the main classifier's is
            # compared, and the lead learns how to compare theirs (trial 19).
            others = [
                round_label(other)
                for other in state.rounds
                if isinstance(other, Round) and other.date == latest.date
                and classifier_key(other.classifier) != classifier_key(latest.classifier)
            ]  # fmt: skip
            if others:
                import shlex

                shown = ", ".join(repr(label) for label in others[:5])
                notes.append(
                    f"note: {round_label(latest)} is compared, the main classifier's latest "
                    f"round; {len(others):,} round(s) of other classifiers share its date "
                    f"({latest.date.isoformat()}): give --round {shlex.quote(others[0])} to "
                    f"compare one of them ({shown}{', ...' if len(others) > 5 else ''})"
                )
    replicates = validation.whole_at_least(
        "--replicates", args.replicates, 1000, validation.MAX_REPLICATES
    )
    seed = state.evaluate.seed if args.seed is None else args.seed
    if item.matrix.n_pos == 0 or item.matrix.n_neg == 0 or not item.k > 0:
        raise InputError(
            f"{round_label(item)} cannot be compared: each stratum needs labeled items and "
            "the round its k (the share flagged)"
        )
    # Each round corrected as its own design says (a round drawn by the selection rule
    # always, the session's current round as its Evaluate tab's box says), as History
    # compares them; --fpc corrects both (review 15: one switch served both rounds).
    fpc = True if args.fpc else None
    change = change_section(state, item, replicates=replicates, seed=seed, fpc=fpc)
    if change is None:
        whose = f"of classifier {item.classifier!r} " if item.classifier else ""
        why = ""
        if state.rows_not_loaded:
            # The earlier round may be among the rows that could not be read: said, as a
            # comparison that runs says it (fuzz 17: 100,000 refused rows went unmentioned).
            from core.workbook.report_content import not_loaded_warning

            why = "; " + not_loaded_warning(state.rows_not_loaded, what="comparison")
        raise InputError(
            f"{round_label(item)} has no earlier round {whose}in {args.rounds_file.name} "
            "(rounds are paired by classifier and date); name a later round with --round" + why
        )
    return RoundsCompared(
        comparison=change.comparison,
        previous_round=round_label(change.previous),
        current_round=round_label(item),
        notes=tuple(notes),
    )


def _chance(value: float | None) -> str:
    """P(decline) to one decimal: it comes from random draws, good to about 0.1 point."""
    return "-" if value is None else f"{100 * value:.1f} %"


def _points(value: float | None) -> str:
    """A change of a rate in percentage points, signed."""
    if value is None:
        return "-"
    return f"{100 * value:+.2f} pp"


def format_text(result_of_run: Comparison | RoundsCompared) -> str:
    lines = []
    if isinstance(result_of_run, RoundsCompared):
        lines += [f"{line}" for line in result_of_run.notes]
        lines.append(
            f"{result_of_run.current_round} against the previous round, "
            f"{result_of_run.previous_round}"
        )
        lines.append("")
    comparison = (
        result_of_run.comparison if isinstance(result_of_run, RoundsCompared) else result_of_run
    )
    result = comparison.to_dict()
    previous, current = result["previous"], result["current"]
    header = (
        f"{'metric':<10} {'previous':>9} {'current':>9} {'change':>11} {'lower':>11} "
        f"{'upper':>11} {'P(decline)':>11}"
    )
    lines += [header, "-" * len(header)]
    for metric in ("precision", "recall"):
        block = result[f"{metric}_change"]
        lower, upper = block["interval"]
        lines.append(
            f"{metric:<10} {percent(previous[metric]):>9} {percent(current[metric]):>9} "
            f"{_points(block['estimate']):>11} {_points(lower):>11} {_points(upper):>11} "
            f"{_chance(block['p_worse']):>11}"
        )
    lines.append("")
    which = (
        "current minus previous"
        if isinstance(result_of_run, RoundsCompared)
        else "current (--tp2 ...) minus previous (--tp ...)"
    )
    lines.append(
        f"change = {which}; precision: Newcombe hybrid "
        "score interval; recall: Monte-Carlo from the two posteriors (Jeffreys prior); "
        "P(decline) = probability that the current round is worse (p_worse in --json)"
        + _corrected_words(result.get("fpc", [False, False]))
    )
    if result.get("warnings"):
        lines.append("warnings:")
        lines.extend(f"  - {warning}" for warning in result["warnings"])
    return "\n".join(lines)


def _corrected_words(corrected) -> str:
    """Which rounds carry the finite population correction, for the footnote."""
    which = [name for name, flag in zip(("previous", "current"), corrected, strict=True) if flag]
    if not which:
        return ""
    rounds = " and ".join(which) + (" rounds" if len(which) == 2 else " round")
    return (
        f"; the {rounds} with the finite population correction (what their lists' "
        "unlabeled items can still hold)"
    )


def _refused(opened) -> tuple:
    """The rows the workbook's reader refused (a round asked for by name may be one)."""
    return opened.book.refused if opened.book is not None else ()
