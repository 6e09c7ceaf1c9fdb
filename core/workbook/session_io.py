"""Sessions as workbooks: Save writes the report, Open restores every input (spec 4.4).

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

A workbook without an ``Inputs`` sheet (a plain rounds workbook such as the shared
fixtures) opens as the default session plus its rounds; :func:`session_for_round` then
makes one of those rounds the subject of the session (what ``prplanner report`` does).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core.confusion import ConfusionMatrix
from core.errors import InputError
from core.session import SCHEMA_VERSION, PopulationInputs, SessionState, unflatten
from core.workbook.report import (
    INPUTS_HEADER,
    ROUNDS_SOURCE_ROW,
    ROUNDS_SOURCE_SHEET,
    SCHEMA_KEY,
    SHEET_INPUTS,
    SHEET_INTERVALS,
    SHEET_P3,
    SHEET_PLAN,
    SHEET_PLOTS,
    SHEET_ROUNDS,
    SHEET_SUMMARY,
    WRITER_KEY,
    ReportContent,
    clean_text,
    write_report,
)
from core.workbook.rounds import HEADER_SEARCH_ROWS, Round, WorkbookError, read_rounds
from core.workbook.safe_io import FileFingerprint

__all__ = [
    "OpenedSession",
    "open_session",
    "read_session",
    "save_session",
    "session_for_round",
]

#: Sheets of a report that hold no rounds (not worth a "skipped" note when opening).
_REPORT_SHEETS = {SHEET_SUMMARY, SHEET_INTERVALS, SHEET_PLAN, SHEET_P3, SHEET_INPUTS, SHEET_PLOTS}


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
    """

    state: SessionState
    problems: tuple[str, ...]
    is_session: bool


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
    return write_report(path, state, images=images, sources=sources, expected=expected)


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


def read_session(path: str | os.PathLike[str]) -> OpenedSession:
    """Like :func:`open_session`, and says whether the file was a saved session."""
    path = Path(path)
    book = read_rounds(path)  # checks the file and raises WorkbookError for a bad one
    inputs_rows, sources = _read_inputs_and_sources(path)
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
        rounds.append(replace(item, sheet=origin[0], row=origin[1]) if origin else item)
    problems.extend(
        f"sheet {item.sheet!r}, row {item.row}: {item.reason}; not loaded" for item in book.refused
    )
    problems.extend(
        f"sheet {item.sheet!r} skipped: {item.reason}"
        for item in book.skipped_sheets
        if not (is_session and item.sheet in _REPORT_SHEETS)
    )
    if not is_session and not book.rounds:
        problems.append(f"{path.name}: no rounds found")
    state = replace(state, rounds=tuple(rounds))
    return OpenedSession(state=state, problems=tuple(problems), is_session=is_session)


def session_for_round(state: SessionState, item: Round) -> tuple[SessionState, list[str]]:
    """``state`` with every input taken from the past round ``item``.

    For a plain rounds workbook the session holds only defaults; a report about one of
    its rounds must not mix them in. The round becomes the Evaluate tab's counts and
    population, and the previous round of the Plan tab: ``plan.belief = "previous"``,
    ``plan.previous`` = its counts, ``plan.s`` = its ``s`` (or the ``s`` its counts imply,
    ``n1/(k n0)``), ``plan.v`` = its total labels. Returns ``(state, notes)``; a note says
    which input kept its default because the round could not give it.
    """
    notes: list[str] = []
    label = item.round or f"row {item.row} of sheet {item.sheet}"
    matrix = ConfusionMatrix(tp=item.tp, fp=item.fp, fn=item.fn, tn=item.tn)
    if item.population_pos and item.population_neg:
        population = PopulationInputs(
            mode="counts",
            predicted_positive=item.population_pos,
            predicted_negative=item.population_neg,
            k=item.k,
        )
    else:
        # Only k is known; the population counts stay at their (unused) defaults.
        population = PopulationInputs(mode="k", k=item.k)
    plan = replace(
        state.plan,
        population=population,
        belief="previous",
        previous=matrix,
    )
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
    try:
        plan = replace(plan, v=matrix.total)
    except InputError as exc:
        notes.append(f"{label}: v kept at {plan.v:,} ({exc})")
    evaluate = replace(state.evaluate, population=population, matrix=matrix)
    state = replace(state, plan=plan, evaluate=evaluate, previous_round=label)
    return state, notes


def _read_inputs_and_sources(path: Path):
    """``(Inputs rows or None, {Rounds row: (source sheet, source row)})``."""
    import openpyxl

    try:
        with path.open("rb") as stream:
            workbook = openpyxl.load_workbook(stream, read_only=True, data_only=True)
            try:
                inputs = None
                if SHEET_INPUTS in workbook.sheetnames:
                    inputs = _inputs_rows(workbook[SHEET_INPUTS])
                sources = {}
                if inputs is not None and SHEET_ROUNDS in workbook.sheetnames:
                    sources = _round_sources(workbook[SHEET_ROUNDS])
            finally:
                workbook.close()
    except OSError as exc:
        raise WorkbookError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except Exception as exc:  # read_rounds opened it already; a late failure is damage
        raise WorkbookError(
            f"{path} is damaged and cannot be read: {type(exc).__name__}: {exc}"
        ) from None
    return inputs, sources


def _inputs_rows(sheet) -> list[tuple[Any, Any, Any]] | None:
    """The Inputs sheet's rows, or ``None`` when its header is not ours."""
    rows = sheet.iter_rows(values_only=True)
    header = next(rows, None)
    if header is None or len(header) < 2:
        return None
    names = tuple(str(value).strip().casefold() if value is not None else "" for value in header)
    if names[:2] != INPUTS_HEADER[:2]:
        return None
    found = []
    for row in rows:
        key, value, exact = (*row, None, None, None)[:3]
        if key is not None:
            found.append((key, value, exact))
    return found


def _inputs_values(rows, problems: list[str]) -> list[tuple[str, Any]]:
    """``(key, value)`` pairs for :func:`unflatten`, exact JSON preferred when it agrees."""
    values = []
    for key, value, exact in rows:
        key = str(key).strip()
        if value is None and exact is None:
            continue  # a blank line or the sheet's closing remark
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
    except ValueError:
        return value
    return decoded if _agrees(decoded, value) else value


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


def _round_sources(sheet) -> dict[int, tuple[str, int]]:
    """Rounds sheet row -> (sheet, row) the round was first read from."""
    columns = None
    sources: dict[int, tuple[str, int]] = {}
    for number, row in enumerate(sheet.iter_rows(values_only=True), start=1):
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
