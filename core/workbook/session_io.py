"""Sessions as workbooks: Save writes the report, Open restores every input.

The app's document is the report of :mod:`core.workbook.report`. Its ``Inputs`` sheet holds
:func:`core.session.flatten` of the state as ``key, value, exact (JSON)`` rows and its
``Rounds`` sheet the past rounds, which :func:`core.workbook.rounds.read_rounds` reads like
any other rounds workbook. Opening therefore restores the session exactly:

* numbers are written with every digit (see :func:`core.workbook.report._set_number`), and
  the ``exact (JSON)`` column keeps what a cell cannot hold (a carriage return, a control
  character). The JSON is used only while it agrees with the visible ``value`` cell, so an
  edit made in Excel or LibreOffice wins over the stale JSON;
* the Rounds sheet's ``Source sheet`` and ``Source row`` columns give every round back the
  sheet and row it was first read from.

A workbook without an ``Inputs`` sheet (a plain rounds workbook) opens as a session about
its rounds (:func:`workbook_session`): the most recent round becomes the current one, its
counts and population fill the Evaluate tab and it is the Plan tab's previous round
(:func:`session_for_round`); nothing of the bundled example is kept. :func:`report_subject`
names the round a report is about, so the app's Export report and ``prplanner report``
describe the same round the same way.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.confusion import ConfusionMatrix
from core.errors import InputError
from core.session import (
    MAX_LIST_LENGTH,
    SCHEMA_VERSION,
    EnsembleInputs,
    PlanInputs,
    PopulationInputs,
    SessionState,
    unflatten,
)
from core.workbook.layout import (
    INPUTS_HEADER,
    ROUNDS_SOURCE_ROW,
    ROUNDS_SOURCE_SHEET,
    SCHEMA_KEY,
    SHEET_HISTORY,
    SHEET_INPUTS,
    SHEET_INTERVALS,
    SHEET_P3,
    SHEET_PLAN,
    SHEET_PLOTS,
    SHEET_ROUNDS,
    SHEET_SUMMARY,
    WRITER_KEY,
    clean_text,
    most_recent_round,
)
from core.workbook.rounds import (
    HEADER_SEARCH_ROWS,
    ColumnChoice,
    Round,
    RoundsBook,
    WorkbookError,
    describe_role,
    read_rounds,
    same_classifier,
)
from core.workbook.safe_io import FileFingerprint, sheet_names

if TYPE_CHECKING:  # the report writer is imported when a session is saved
    from core.workbook.report import ReportContent

__all__ = [
    "OpenedSession",
    "find_round_key",
    "open_session",
    "plan_from_round",
    "population_of_round",
    "read_session",
    "report_subject",
    "round_key",
    "save_session",
    "session_for_round",
    "workbook_session",
]

#: Sheets of a report that hold no rounds (not worth a "skipped" note when opening).
_REPORT_SHEETS = {
    SHEET_SUMMARY, SHEET_INTERVALS, SHEET_PLAN, SHEET_P3, SHEET_INPUTS, SHEET_PLOTS, SHEET_HISTORY,
}  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenedSession:
    """What :func:`read_session` found in a workbook.

    Attributes
    ----------
    state : SessionState
        The restored session (defaults where the file had nothing usable).
    problems : tuple of str
        Settings that could not be restored and rows that could not be read, each naming
        the key or the sheet and row; everything else was restored.
    is_session : bool
        ``True`` when the workbook has an Inputs sheet (a saved session or report);
        ``False`` for a plain rounds workbook.
    book : RoundsBook or None
        What the rounds reader found (what each sheet's columns were read as).
    not_loaded : tuple of str
        The rows and sheets of the lead's rounds workbook that were refused or skipped
        (``state.rows_not_loaded``): a report of the session says they are left out. For
        a saved session, also those its rounds workbook had when the session began.
    """

    state: SessionState
    problems: tuple[str, ...]
    is_session: bool
    book: RoundsBook | None = None
    not_loaded: tuple[str, ...] = ()

    @property
    def notes(self) -> tuple[str, ...]:
        """What the lead should know of rows that were read: a plain rounds workbook's
        hidden rows, read as rounds (:meth:`~core.workbook.rounds.SheetColumns.hidden_note`)."""
        if self.is_session or self.book is None:
            return ()
        return tuple(
            reading.hidden_note() for reading in self.book.columns if reading.hidden_rounds
        )

    @property
    def guesses(self) -> tuple[str, ...]:
        """What a plain rounds workbook's columns were guessed to hold, and how to say
        otherwise (:func:`~core.workbook.rounds.describe_role`): what ``prplanner rounds``
        says, for the commands that read the workbook too (review 21)."""
        if self.is_session or self.book is None:
            return ()
        return tuple(
            describe_role(reading.sheet, item)
            for reading in self.book.columns
            for item in reading.guessed
        )


def save_session(
    path: str | os.PathLike[str],
    state: SessionState,
    images: Mapping[str, bytes] | None = None,
    *,
    sources: Iterable[str | os.PathLike[str]] = (),
    expected: FileFingerprint | None = None,
) -> ReportContent:
    """Save the session: the report (with its Inputs sheet), written atomically.

    Parameters
    ----------
    path : str or path-like
        Destination ``.xlsx``.
    state : SessionState
        The whole session.
    images : mapping of str to bytes, optional
        PNG snapshots of the app's plots.
    sources : iterable of path-like
        Files the session was read from that are not sessions (a rounds workbook): never
        replaced.
    expected : FileFingerprint, optional
        The session file as it was opened or last saved; if it changed on disk since, the
        save is refused rather than overwrite the other writer.

    Returns
    -------
    ReportContent
        What the report shows (its warnings can go to the status bar).

    Raises
    ------
    core.workbook.safe_io.SaveError
        The file could not be written (read-only folder, disk full, ...); the old file is
        intact and the message says so.
    InputError
        A destination that is not ``.xlsx``.
    """
    from core.workbook.report import write_report

    return write_report(
        path, state, images=images, sources=sources, expected=expected, purpose="session"
    )


def open_session(path: str | os.PathLike[str]) -> tuple[SessionState, list[str]]:
    """Restore a session saved by :func:`save_session` (or a plain rounds workbook).

    Returns
    -------
    (SessionState, list of str)
        The state and the problems met (see :class:`OpenedSession`).

    Raises
    ------
    core.workbook.rounds.WorkbookError
        The file cannot be read at all (missing, not an ``.xlsx``, damaged, encrypted).
    """
    opened = read_session(path)
    return opened.state, list(opened.problems)


def read_session(
    path: str | os.PathLike[str],
    *,
    columns: tuple[str, ...] | list[str] = (),
    base: SessionState | None = None,
) -> OpenedSession:
    """Like :func:`open_session`, and says whether the file was a saved session.

    A plain rounds workbook becomes :func:`workbook_session` of its rounds over the inputs
    ``base`` (default: default inputs): the most recent round is the current one.
    ``columns`` are the user's choices of what its columns hold
    (:class:`~core.workbook.rounds.ColumnChoice` texts); they are kept in the state. A
    saved session's Rounds sheet is read as PR Planner wrote it, with its own inputs.
    """
    path = Path(path)
    choices = tuple(ColumnChoice.parse(text).to_text() for text in columns)
    book = read_rounds(path)  # checks the file and raises WorkbookError for a bad one
    inputs_rows, sources = _read_inputs_and_sources(path)
    if (
        inputs_rows is None
        and SHEET_INPUTS in sheet_names(path)
        and not _has_sheet_part(path, SHEET_INPUTS)
    ):
        # Left out by the reader, a session's missing Inputs part made it a plain rounds
        # workbook, its settings silently the defaults (fuzz 17).
        raise WorkbookError(
            f"{path.name} is damaged: its {SHEET_INPUTS} sheet (the session's settings) is "
            "listed but its part is not in the file; open it in Excel or LibreOffice to "
            "repair it, or open an earlier copy"
        )
    if inputs_rows is None and choices:
        book = read_rounds(path, columns=choices)
    problems: list[str] = []
    is_session = inputs_rows is not None
    if is_session:
        rows = _inputs_values(inputs_rows, problems)
        state, unflatten_problems = unflatten(rows)
        problems.extend(f"{SHEET_INPUTS}: {text}" for text in unflatten_problems)
    else:
        state = SessionState()
    rounds = []
    for item in book.rounds:
        origin = sources.get(item.row) if item.sheet == SHEET_ROUNDS else None
        if origin:
            back = replace(item, sheet=origin[0], row=origin[1])
            # A round without a name is written under the name the app shows for it
            # ("Log row 12"): read back, it is again a round without one.
            unnamed = replace(back, round=None)
            if item.round == unnamed.name:
                back = unnamed
            item = back
        rounds.append(item)
    refused = [
        f"sheet {item.sheet!r}, row {item.row}: {item.reason}; not loaded" for item in book.refused
    ]
    problems.extend(refused)
    # A totals row is rightly left out; a report names only what went missing.
    not_loaded = [
        line for line, item in zip(refused, book.refused, strict=True) if not item.is_totals
    ]
    skipped = [
        f"sheet {item.sheet!r} skipped: {item.reason}"
        for item in sheets_skipped_worth_a_note(book, is_session)
    ]
    problems.extend(skipped)
    not_loaded += skipped
    if not is_session and not book.rounds:
        problems.append(f"{path.name}: no rounds found")
    if is_session and SHEET_ROUNDS not in sheet_names(path):
        # Opened as "0 rounds" with no word, a session whose Rounds sheet was deleted
        # looked like one that never had any (fuzz 17).
        problems.append(
            f"{path.name} has no {SHEET_ROUNDS} sheet (deleted?): the session's rounds are "
            "not in the file. Open the rounds workbook it began from, or an earlier copy"
        )
    if is_session:
        # The rows its rounds workbook could not give when the session began stay named.
        kept = tuple(dict.fromkeys((*state.rows_not_loaded, *not_loaded)))
        state = replace(state, rounds=tuple(rounds), rows_not_loaded=kept[:MAX_LIST_LENGTH])
    else:
        problems.extend(
            f"{choice.in_words()}: no column of {path.name} has that header; ignored"
            for choice in book.unused_choices
        )
        state, _item, notes = workbook_session(rounds, columns=choices, base=base)
        state = replace(state, rows_not_loaded=tuple(not_loaded[:MAX_LIST_LENGTH]))
        problems.extend(notes)
    return OpenedSession(
        state=state,
        problems=tuple(problems),
        is_session=is_session,
        book=book,
        not_loaded=state.rows_not_loaded,
    )


#: The Rounds panel's "sheet" of rounds whose counts were typed on the Evaluate tab.
ENTERED_SHEET = "Entered"
#: ... and of rounds read from labeling workbooks drawn in the app.
LABELED_SHEET = "Labeled"
#: A round name ending in a number ("TR-06", "Round 9"): the next one counts on.
_NUMBERED_NAME = re.compile(r"^(.*?)(\d+)$")


def added_in_app(item: Round) -> bool:
    """A round the lead added in the app (labels read back, or typed counts kept): in no
    workbook they opened, so reading one again keeps it."""
    return item.sheet in (LABELED_SHEET, ENTERED_SHEET)


def insertion_point(rounds, classifier: str | None) -> int:
    """Where a new round of ``classifier`` goes in the session's rounds: after that
    classifier's last round, else at the end. One classifier's rounds stay together, as
    the Rounds sheet of a session or report lists them and its history charts draw them
    (one run of rows per classifier)."""
    positions = [
        index for index, item in enumerate(rounds) if same_classifier(item.classifier, classifier)
    ]
    return positions[-1] + 1 if positions else len(rounds)


def next_round_name(
    rounds, classifier: str | None, taken: Iterable[str] = (), after: Round | None = None
) -> str:
    """A name for the next round of ``classifier``: its latest round's name with the
    number counted on (``TR-06`` -> ``TR-07``), else ``Round N``; counted on past the
    names ``taken`` (draws still out with the editors) and the classifier's own.

    ``after``, when it is a named round of ``classifier``, is counted on instead of the
    latest: the round the Plan builds on (a weekly ``FR-2025-W12`` planned from, while a
    monthly ``FR-2025-03`` was the latest, gave ``FR-2025-04``; trial 18).
    """
    from core.compare import placed_dates

    same = [item for item in rounds if same_classifier(item.classifier, classifier)]
    placed = placed_dates((None, item.date) for item in same)
    latest = max(
        ((day, index, item) for index, (day, item) in enumerate(zip(placed, same, strict=True))
         if item.round),
        default=None,
    )  # fmt: skip
    base = latest[2] if latest is not None else None
    if after is not None and after.round and same_classifier(after.classifier, classifier):
        base = after
    found = _NUMBERED_NAME.match(base.round.strip()) if base is not None else None
    prefix, number = found.groups() if found else ("Round ", str(len(same)))
    used = {name.strip().casefold() for name in taken}
    used |= {item.round.strip().casefold() for item in same if item.round}
    while True:
        number = f"{int(number) + 1:0{len(number)}d}"
        if f"{prefix}{number}".casefold() not in used:
            return f"{prefix}{number}"


def entered_round(
    state: SessionState, *, name: str, date: dt.date | None, classifier: str | None
) -> Round:
    """The Evaluate tab's typed counts as a past round (sheet :data:`ENTERED_SHEET`, the
    next free row), with its population, so History, comparisons and reports take it in.

    Raises
    ------
    InputError
        A plain random sample (its ``k`` is not known), counts without labels in one
        stratum, or no name.
    """
    evaluate = state.evaluate
    if evaluate.population.mode == "random":
        raise InputError(
            "a plain random sample cannot be kept as a round: a round needs the share "
            "flagged (k) of its population"
        )
    matrix = evaluate.matrix
    matrix.require_both_strata()
    from core.workbook.append_round import text_problem
    from core.workbook.rounds import check_round_date

    check_round_date(date)
    name = str(name).strip()
    if not name:
        raise InputError("give the round a name")
    label = (classifier or "").strip()
    # As a rename checks: a name on two lines, reversed by an invisible character or longer
    # than a cell was kept, and cut short at the next save (fuzz 17).
    for what, text in (("name", name), ("classifier's name", label)):
        found = text_problem(text) if text else None
        if found is not None:
            raise InputError(f"the round's {what} {found[0]}; {found[1]}")
    if any(
        (item.round or "").strip().casefold() == name.casefold()
        and same_classifier(item.classifier, label)
        for item in state.rounds
    ):
        whose = f" of {label}" if label else ""
        raise InputError(
            f"there is a round named {name}{whose} already; give this one another name"
        )
    population = evaluate.population
    k = population.effective_k
    assert k is not None
    counts = population.mode == "counts"
    rows = [item.row for item in state.rounds if item.sheet == ENTERED_SHEET]
    return Round(
        sheet=ENTERED_SHEET,
        row=max(rows, default=1) + 1,
        round=name,
        date=date,
        classifier=(classifier or "").strip() or None,
        k=k,
        population_pos=population.predicted_positive if counts else None,
        population_neg=population.predicted_negative if counts else None,
        s=(matrix.n_pos / matrix.n_neg) / k,
        tp=matrix.tp,
        fp=matrix.fp,
        fn=matrix.fn,
        tn=matrix.tn,
        notes="counts entered on the Evaluate tab",
    )


def round_key(item: Round) -> str:
    """``"Fraud!7"``: the sheet and row a round was read from (what ``current_round``
    holds; unique where round names are not)."""
    return f"{item.sheet}!{item.row}"


def told_apart(rounds, item: Round) -> str:
    """``item``'s name, with its classifier when another round shares the name (the
    classifiers of one draw do): ``Nov 2026 (spam_v8)``. Said wherever a round is chosen,
    so the lead sees whose round the Plan builds on (trial 15)."""
    shared = item.classifier and any(
        other is not item and other.name == item.name for other in rounds
    )
    return f"{item.name} ({item.classifier})" if shared else item.name


#: Which rounds carry the finite population correction: a rule such as
#: :func:`fpc_of_round` bound to a session, or one answer for every round.
FpcRule = Callable[[Round], bool] | bool


def corrected_by(rule: FpcRule, item: Round) -> bool:
    """Whether ``rule`` corrects ``item`` (History, its comparisons and the report's
    Rounds sheet take either form)."""
    return rule(item) if callable(rule) else rule


def fpc_of_round(state: SessionState, item: Round) -> bool:
    """Whether ``item``'s intervals carry the finite population correction (methods,
    "Finite population correction"): the round the Evaluate tab shows as its box says;
    any other round when the selection rule drew it (without replacement from a list of
    known size: the correction is exact), not otherwise (how it was sampled is unknown).

    One switch for every round moved a May round's interval in History when an October
    round drawn from an item list was evaluated (session 14): a round's interval now
    depends on its own design only.
    """
    if round_key(item) == state.current_round:
        return state.evaluate.fpc
    return item.drawn_by_the_rule


def find_round_key(rounds, key: str) -> Round | None:
    """The round of ``rounds`` whose :func:`round_key` is ``key``, or ``None``."""
    if not key:
        return None
    for item in rounds:
        if isinstance(item, Round) and round_key(item) == key:
            return item
    return None


def workbook_session(
    rounds,
    *,
    item: Round | None = None,
    base: SessionState | None = None,
    columns: tuple[str, ...] | list[str] = (),
) -> tuple[SessionState, Round | None, list[str]]:
    """A session about the user's rounds, never the bundled example.

    Starts from ``base``: the inputs the lead had (targets, prior, Evaluate settings, the
    Prevalence tab's reference and range, the ensemble), or by default the default inputs
    with no ensemble (the default classifiers are not the user's). The rounds, the column
    choices and the current round are the workbook's: ``item`` (default: the most recent
    round by date, else the last in row order, see
    :func:`~core.workbook.report.most_recent_round`) becomes the current round with
    :func:`session_for_round`, which also sets the populations and the Plan's planning
    values. Returns ``(state, current round or None, notes)``.
    """
    base = base or SessionState(ensemble=EnsembleInputs(children=()))
    state = replace(
        base,
        rounds=tuple(rounds),
        columns=tuple(columns),
        previous_round="",
        current_round="",
        awaiting_labels=(),
        rows_not_loaded=(),
        prevalence=replace(base.prevalence, compared_rounds=()),
    )
    chosen = item if item is not None else most_recent_round(state.rounds)
    if chosen is None:
        return state, None, []
    if state.ensemble == EnsembleInputs(children=()):
        # No ensemble of the lead's: theirs is the parent, not "ensemble, 120,000" (trial 20).
        state = replace(state, ensemble=lead_ensemble(chosen.classifier or "my classifier",
                                                      chosen.population_pos))  # fmt: skip
    state, notes = session_for_round(state, chosen)
    return state, chosen, notes


def lead_ensemble(name: str | None, flagged: int | None) -> EnsembleInputs:
    """The Ensemble tab's inputs for a lead's own classifier ``name`` flagging ``flagged``
    items: it is the parent, with no children yet (the default's are the example's)."""
    if name and flagged:
        with contextlib.suppress(InputError):  # a name no workbook cell can hold
            return EnsembleInputs(parent_name=name, parent_size=flagged, children=())
    return EnsembleInputs(children=())


def sheets_skipped_worth_a_note(book, is_session: bool | None = None) -> list:
    """The sheets of ``book`` (a :class:`core.workbook.rounds.RoundsBook`) that held no
    rounds and are worth a note: not the report sheets of a session or report PR Planner
    wrote, which never hold any. ``is_session`` is found from the sheet names when not
    given (a session's hidden Inputs sheet is among the skipped ones)."""
    if is_session is None:
        is_session = SHEET_INPUTS in {item.sheet for item in book.skipped_sheets}
    return [
        item for item in book.skipped_sheets if not (is_session and item.sheet in _REPORT_SHEETS)
    ]


def report_subject(state: SessionState) -> Round | None:
    """The past round a report of ``state`` is about: the current round while the Evaluate
    tab still holds its counts and population, else ``None`` (the counts typed there)."""
    item = find_round_key(state.rounds, state.current_round)
    if item is None:
        return None
    evaluate = state.evaluate
    if evaluate.matrix != item.matrix or evaluate.population.mode == "random":
        return None
    k = evaluate.population.effective_k
    if k is None or not math.isclose(k, item.k, rel_tol=1e-12):
        return None
    return item


def population_of_round(item: Round) -> PopulationInputs:
    """The round's population as the tabs hold it.

    With both counts it is given as counts. With ``k`` alone it is given as ``k``, and the
    two (unused) counts are the smallest whole numbers whose ratio is ``k`` (within one
    part in a million), so that nothing shown or saved contradicts the round's ``k``.
    """
    if item.population_pos and item.population_neg:
        return PopulationInputs(
            mode="counts",
            predicted_positive=item.population_pos,
            predicted_negative=item.population_neg,
            k=item.k,
        )
    ratio = Fraction(item.k).limit_denominator(1_000_000)
    if ratio.numerator <= 0:  # a k below one in a million: keep it as a tiny ratio
        ratio = Fraction(1, 1_000_000_000)
    return PopulationInputs(
        mode="k",
        k=item.k,
        predicted_positive=ratio.numerator,
        predicted_negative=ratio.denominator,
    )


def session_for_round(state: SessionState, item: Round) -> tuple[SessionState, list[str]]:
    """``state`` with every input taken from the past round ``item``.

    For a plain rounds workbook the session holds only defaults; a report about one of
    its rounds must not mix them in. The round becomes the current round
    (``current_round``), the Evaluate tab's counts and population, and the previous round
    the Plan tab plans from (:func:`plan_from_round`). Returns ``(state, notes)``; a note
    says which input kept its value because the round could not give it.
    """
    # The session's box stays for a round typed in a workbook: a rounds workbook reopens
    # with the targets the lead left it with (trial 17), the correction among them.
    plan, notes = plan_from_round(state.plan, item, keep_correction=True)
    population = population_of_round(item)
    # The box says how the round was drawn: on for a draw by the selection rule (without
    # replacement from a list of known size), off otherwise, whatever it said before
    # (review 15: it carried over, and a round's interval moved with the clicks).
    evaluate = replace(
        state.evaluate, population=population, matrix=item.matrix, fpc=item.corrected_by_design
    )
    state = replace(
        state,
        plan=plan,
        evaluate=evaluate,
        previous_round=item.name,
        current_round=round_key(item),
    )
    return state, notes


def plan_from_round(
    plan: PlanInputs, item: Round, *, keep_correction: bool = False
) -> tuple[PlanInputs, list[str]]:
    """The Plan tab's inputs for the round after ``item``.

    ``belief = "previous"``, ``previous`` = its counts, ``population`` = its population,
    ``s`` = its ``s`` (or the ``s`` its counts imply, ``n1/(k n0)``), ``v`` = its total
    labels; ``fpc`` on for a round PR Planner drew from an item list of known size (off
    for any other, unless ``keep_correction`` keeps what ``plan`` says); the margins,
    costs, method and prior settings stay. Returns ``(plan, notes)``.
    """
    notes: list[str] = []
    label = item.name
    matrix = ConfusionMatrix(tp=item.tp, fp=item.fp, fn=item.fn, tn=item.tn)
    population = population_of_round(item)
    # The next round is drawn as this one was: a draw by the rule (without replacement
    # from a list of known size) is planned with the correction, as `report` plans (trial
    # 19: the app's plan from the same workbook was 78 labels dearer, its box unticked);
    # any other round without it, whatever the box said for the round before (review 19),
    # unless ``keep_correction``: a workbook reopened keeps the box as the lead left it.
    fpc = item.corrected_by_design or (keep_correction and plan.fpc)
    plan = replace(plan, population=population, belief="previous", previous=matrix, fpc=fpc)
    s = item.s
    if s is None and matrix.n_pos > 0 and matrix.n_neg > 0:
        s = matrix.n_pos / (item.k * matrix.n_neg)
    if s is not None:
        try:
            plan = replace(plan, s=s)
        except InputError as exc:
            notes.append(f"{label}: s kept at {plan.s:g} ({exc})")
    else:
        notes.append(f"{label}: s cannot be implied by its counts; s kept at {plan.s:g}")
    if matrix.total < 2:
        # "v must be a whole number >= 2, got 0" was jargon for this (fuzz 17).
        notes.append(
            f"{label} has {'no labeled items' if matrix.total == 0 else 'one labeled item'}, "
            f"so the Plan keeps its total of {plan.v:,} labels"
        )
        return plan, notes
    try:
        plan = replace(plan, v=matrix.total)
    except InputError as exc:
        notes.append(f"{label}: v kept at {plan.v:,} ({exc})")
    return plan, notes


def renamed_round(rounds, item: Round, name: str, date: dt.date | None) -> Round:
    """``item`` with the name and date the lead gives it in the app (a drawn round is named
    after its file and dated the day of its draw; the lead reports by month).

    Raises
    ------
    InputError
        The name cannot be stored in a workbook cell (blank, several lines, too long), or
        another round of the same classifier has it: the History, the report and the Plan's
        previous round tell one classifier's rounds apart by name.
    """
    from core.workbook.append_round import text_problem
    from core.workbook.rounds import check_round_date

    check_round_date(date)
    name = name.strip()
    if not name and item.round is None:
        # Left without a name, as it was ("Log row 12"): only its date changes.
        return replace(item, date=date)
    found = text_problem(name)
    if found is not None:
        remedy = "type a name" if not name else found[1]
        raise InputError(f"The name {found[0]}; {remedy}")
    for other in rounds:
        if (
            other is not item
            and same_classifier(other.classifier, item.classifier)
            and other.name.casefold() == name.casefold()
        ):
            whose = f"Classifier {item.classifier}" if item.classifier else "This classifier"
            raise InputError(
                f"{whose} already has a round named {other.name!r}; give this one another name"
            )
    return replace(item, round=name, date=date)


def round_before(rounds, item) -> Round | None:
    """The same classifier's round before ``item``, or ``None``.

    Rounds are ordered as "most recent" is decided elsewhere
    (:func:`core.compare.placed_dates`: a round without a date after the rounds above
    it), and by row among equals.
    """
    from core.compare import placed_dates

    same = [past for past in rounds if same_classifier(past.classifier, item.classifier)]
    placed = placed_dates((None, past.date) for past in same)
    ordered = [
        past
        for _, _, past in sorted(
            zip(placed, range(len(same)), same, strict=True), key=lambda entry: entry[:2]
        )
    ]
    for index, past in enumerate(ordered):
        if past is item:
            return ordered[index - 1] if index > 0 else None
    return None


def find_by_label(rounds, label: str, like=None, matrix=None) -> Round | None:
    """The round named ``label``; when several share it (the classifiers of one labeling
    workbook), the one of ``like``'s classifier, else the one with the counts ``matrix``
    (the Plan tab's previous round's), else the last."""
    found = [past for past in rounds if past.name == label]
    if len(found) > 1 and like is not None:
        same = [past for past in found if same_classifier(past.classifier, like.classifier)]
        found = same or found
    if len(found) > 1 and matrix is not None:
        found = [past for past in found if past.matrix == matrix] or found
    return found[-1] if found else None


def previous_round_of(state: SessionState) -> Round | None:
    """The round the Plan tab builds on (``previous_round``), told apart from the other
    classifiers' rounds of the same name by the counts the Plan tab took from it."""
    if not state.previous_round:
        return None
    return find_by_label(state.rounds, state.previous_round, matrix=state.plan.previous)


def compared_round(state: SessionState) -> Round | None:
    """The past round the Evaluate tab's counts are compared with, or ``None``.

    The previous round chosen in the Rounds panel, except when that is the round shown
    (right after a workbook opens its latest round is both) or another classifier's: then
    the same classifier's round before the one shown. The Evaluate tab and the report both
    ask this, so they compare the same two rounds.
    """
    rounds = state.rounds
    current = find_round_key(rounds, state.current_round)
    if current is not None and state.evaluate.matrix != current.matrix:
        current = None  # the counts were edited: they are no longer that round
    name = state.previous_round
    # Edited counts have no classifier: the round the Plan tab builds on is told apart
    # from its namesakes by its counts (a later classifier's round was taken; trial 13b).
    past = find_by_label(rounds, name, like=current, matrix=state.plan.previous) if name else None
    if current is not None and (
        past is None or past is current or not same_classifier(past.classifier, current.classifier)
    ):
        return round_before(rounds, current)
    return past


def _has_sheet_part(path: Path, title: str) -> bool:
    """Whether the reader finds sheet ``title`` (its part is in the file)."""
    from core.workbook.xlsx_reader import open_sheets

    with open_sheets(path) as sheets:
        return any(sheet.title == title for sheet in sheets)


def _read_inputs_and_sources(path: Path):
    """``(Inputs rows or None, {Rounds row: (source sheet, source row)})``.

    Read with the project's hardened streaming reader (the same budgets and refusals as
    :func:`~core.workbook.rounds.read_rounds`, and no openpyxl import at start-up).
    """
    from core.workbook.xlsx_reader import open_sheets

    inputs = None
    sources: dict[int, tuple[str, int]] = {}
    rounds_rows: list = []
    with open_sheets(path) as sheets:
        for sheet in sheets:
            if sheet.title == SHEET_INPUTS and inputs is None:
                inputs = _inputs_rows((number, values) for number, values, _formulas in sheet.rows)
            elif sheet.title == SHEET_ROUNDS:
                rounds_rows = [(number, values) for number, values, _formulas in sheet.rows]
    if inputs is not None:
        sources = _round_sources(rounds_rows)
    return inputs, sources


def _inputs_rows(rows) -> list[tuple[int, Any, Any, Any]] | None:
    """The Inputs sheet's rows as ``(row number, key, value, exact)`` (from an iterator of
    ``(row number, cell values)``), or ``None`` when its header is not ours."""
    rows = iter(rows)
    _number, header = next(rows, (None, None))
    if header is None or len(header) < 2:
        return None
    names = tuple(str(value).strip().casefold() if value is not None else "" for value in header)
    if names[:2] != INPUTS_HEADER[:2]:
        return None
    found = []
    for number, row in rows:
        key, value, exact = (*row, None, None, None)[:3]
        if key is not None:
            found.append((number, key, value, exact))
    return found


def _inputs_values(rows, problems: list[str]) -> list[tuple[str, Any]]:
    """``(key, value)`` pairs for :func:`unflatten`, exact JSON preferred when it agrees.

    A number or switch left blank (or a formula without a saved value) and a setting given
    twice are named in ``problems``: both silently gave way to a default or to the other
    row (fuzz 17).
    """
    from core.session import SessionState, flatten

    defaults = dict(flatten(SessionState()))
    values = []
    first_row: dict[str, int] = {}
    for number, key, value, exact in rows:
        key = str(key).strip()
        if value is None and exact is None:
            default = defaults.get(key)
            if default is not None and not isinstance(default, str):
                problems.append(
                    f"{SHEET_INPUTS}: {key} (row {number}) is blank, or a formula without a "
                    f"saved value; the default, {default!r}, is used"
                )
            continue  # else a blank line or the sheet's closing remark
        if key in first_row:
            problems.append(
                f"{SHEET_INPUTS}: {key} is given twice (rows {first_row[key]} and {number}); "
                "the value in the later row is used"
            )
        first_row.setdefault(key, number)
        restored = _restore(value, exact)
        if key == SCHEMA_KEY:
            if isinstance(restored, (int, float)) and restored > SCHEMA_VERSION:
                problems.append(
                    f"{SHEET_INPUTS}: written by a newer PR Planner (schema {restored}, this "
                    f"version reads {SCHEMA_VERSION}); settings it does not know are ignored"
                )
            continue
        if key == WRITER_KEY:
            continue
        values.append((key, restored))
    return values


def _restore(value: Any, exact: Any) -> Any:
    """The JSON value when it agrees with the visible cell, else the cell (user edits win)."""
    if not isinstance(exact, str):
        return value
    try:
        decoded = json.loads(exact)
        agrees = _agrees(decoded, value)
    except (ValueError, RecursionError, OverflowError):
        # Not what PR Planner writes (arrays nested thousands deep, a 4,000-digit number):
        # an edited cell, so the visible value stands.
        return value
    return decoded if agrees else value


def _agrees(decoded: Any, value: Any) -> bool:
    if isinstance(decoded, bool) or isinstance(value, bool):
        return isinstance(decoded, bool) and isinstance(value, bool) and decoded == value
    if isinstance(decoded, (int, float)):
        if not isinstance(value, (int, float)):
            return False
        # LibreOffice keeps 15 significant digits when it re-saves a file.
        return decoded == value or math.isclose(decoded, value, rel_tol=1e-13, abs_tol=0.0)
    if isinstance(decoded, str):
        shown = clean_text(decoded).replace("\r\n", "\n").replace("\r", "\n")
        return (value if value is not None else "") == shown
    return decoded is None and value is None


def _round_sources(rows) -> dict[int, tuple[str, int]]:
    """Rounds sheet row -> (sheet, row) the round was first read from, from the sheet's
    ``(row number, values)`` pairs."""
    columns = None
    sources: dict[int, tuple[str, int]] = {}
    for number, row in rows:
        if columns is None:
            if number > HEADER_SEARCH_ROWS:
                return {}
            titles = [str(value).strip() if value is not None else "" for value in row]
            if ROUNDS_SOURCE_SHEET in titles and ROUNDS_SOURCE_ROW in titles:
                columns = (titles.index(ROUNDS_SOURCE_SHEET), titles.index(ROUNDS_SOURCE_ROW))
            continue
        width = len(row)
        sheet_name = row[columns[0]] if columns[0] < width else None
        source_row = row[columns[1]] if columns[1] < width else None
        if isinstance(source_row, float) and source_row.is_integer():
            source_row = int(source_row)
        if (
            isinstance(sheet_name, str)
            and sheet_name
            and isinstance(source_row, int)
            and not isinstance(source_row, bool)
            and source_row >= 1
        ):
            sources[number] = (sheet_name, source_row)
    return sources
