"""The Excel report of a session, which is also the app's document.

:func:`build_report` computes everything the report shows as plain tables (one function per
sheet, so the content has one source); :func:`write_report` lays them out with openpyxl
and saves atomically through :mod:`core.workbook.safe_io`.

Sheets
------
``Summary``
    Inputs, estimates, intervals by method, the plan for the next round and the warnings,
    in sentences a manager reads.
``Intervals``
    :meth:`core.evaluation.Evaluation.to_rows`: metric, method, estimate, lower, upper, note.
``Plan curves``
    Interval width against the over-sampling ratio ``s`` (frequentist and Bayesian), with
    native charts on a log axis.
``P3``
    Precision, its band and F1 over a log grid of prevalences, with a log-axis chart.
``Rounds``
    The session's past rounds, one per row, with precision and recall and their intervals.
    Written so that :func:`core.workbook.rounds.read_rounds` reads the rounds back
    unchanged: header names it recognises, counts and ratios as numbers, dates as dates.
``Inputs``
    Machine-readable ``key, value`` rows of :func:`core.session.flatten` plus the schema
    version, so that opening the report restores the session
    (:mod:`core.workbook.session_io`).
``Plots``
    PNG snapshots of the app's plots, only when ``images`` are given.

Text is always written as text: openpyxl turns any string starting with ``=`` into a
formula, so every string cell gets ``data_type = "s"`` (and a quote prefix when it starts
with ``=``, ``+``, ``-`` or ``@``, which Excel keeps when the cell is edited).

Numbers are written with full precision: openpyxl formats numbers with ``"%.16g"``, which
loses the last digit of some floats (``0.1 + 0.2``) and of integers beyond 16 digits, so
:func:`_set_number` stores the shortest round-trip text (``repr``) as the cell's value.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import validation
from core.errors import InputError
from core.session import SCHEMA_VERSION, EnsembleInputs, SessionState, flatten
from core.workbook.rounds import Round
from core.workbook.safe_io import FileFingerprint, atomic_write, check_destination, mark_as_ours

if TYPE_CHECKING:
    from core.evaluation import Evaluation
    from core.plan_request import PlanningInputs
    from core.planning import Plan

__all__ = [
    "INPUTS_HEADER",
    "ROUNDS_HEADER",
    "SHEET_INPUTS",
    "SHEET_INTERVALS",
    "SHEET_P3",
    "SHEET_PLAN",
    "SHEET_PLOTS",
    "SHEET_ROUNDS",
    "SHEET_SUMMARY",
    "Column",
    "ReportContent",
    "SummaryRow",
    "Table",
    "build_report",
    "find_round",
    "most_recent_round",
    "render_workbook",
    "write_report",
]

# The layout its readers rely on lives in core.workbook.layout (names kept here too).
from core.workbook.layout import (
    _ILLEGAL_XML,
    INPUTS_HEADER,
    SCHEMA_KEY,
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

#: Points of the tables behind the plan and P3 charts (enough for smooth lines, few
#: enough to read as a table: the P3 table prints on one page).
PLAN_CURVE_POINTS = 61
P3_POINTS = 49
#: At most this many history charts (one per classifier block of the Rounds sheet).
MAX_HISTORY_CHARTS = 4
#: Chart size in cm (two side by side fit a landscape A4 page at full size), and the
#: Summary rows (set to 15 pt each) one row of charts takes: with the repeated header
#: row and the heading, two rows of charts (34 rows, 510 pt) fill one landscape page
#: inside the margins of :meth:`_Sheet.page_setup` (523 pt).
CHART_SIZE = (12.0, 8.2)
CHART_ROWS = 16
CHART_ROW_HEIGHT = 15
#: Summary column widths (characters): item, value, lower, upper, explanation. About
#: 25.5 cm in all, so a landscape A4 page prints the Summary at 100 %.
SUMMARY_WIDTHS = (38, 22, 10, 10, 54)

METRIC_NAMES = {
    "precision": "Precision",
    "recall": "Recall",
    "f1": "F1",
    "fpr": "False positive rate",
    "prevalence": "Prevalence",
}
METRIC_MEANINGS = {
    "precision": "Share of the items the classifier flags that are truly positive.",
    "recall": "Share of all truly positive items in the population that the classifier flags.",
    "f1": "Harmonic mean of precision and recall (one number for both).",
    "fpr": "Share of the truly negative items that the classifier wrongly flags.",
    "prevalence": "Estimated share of truly positive items in the whole population.",
}
METHOD_NAMES = {
    "wald": "Wald",
    "wilson": "Wilson score",
    "agresti_coull": "Agresti-Coull",
    "clopper_pearson": "Clopper-Pearson (exact)",
    "jeffreys": "Jeffreys",
    "bootstrap": "bootstrap",
    "bayes": "Bayesian predictive (Eq 6-8): prediction for the next round's estimate",
    "bayes_mc": "Bayesian predictive, Monte Carlo: prediction for the next round's estimate",
    "posterior": "posterior of the true value",
    "katz_log": "Katz log-ratio",
    "delta": "delta method",
    "estimate": "point estimate",
}
#: The interval quoted first for each metric (the paper's recommendations, methods §3-4).
HEADLINE_METHODS = {
    "precision": "wilson",
    "recall": "katz_log",
    "f1": "bootstrap",
    "fpr": "katz_log",
}

# Columns of the Rounds sheet. The first thirteen use names core.workbook.rounds recognises;
# the rest must never match one of its aliases (a test checks), or the reader would see a
# column twice and skip the sheet.
ROUNDS_HEADER = (
    "Round",
    "Date",
    "Classifier",
    "Model version",
    "Predicted positive (population)",
    "Predicted negative (population)",
    "k",
    "s",
    "TP",
    "FP",
    "FN",
    "TN",
    "Notes",
    "Precision",
    "Precision lower (Wilson)",
    "Precision upper (Wilson)",
    "Recall",
    "Recall lower (Katz log)",
    "Recall upper (Katz log)",
    "F1",
    "Interval note",
    "Source sheet",
    "Source row",
)

_FORMULA_START = ("=", "+", "-", "@")
# Dates Excel's 1900 date system can show (serial 1 is 1900-01-01); older ones go as ISO
# text, which core.workbook.rounds reads back as the same date.
_FIRST_EXCEL_DATE = dt.date(1900, 1, 1)


# --- content: plain tables, one function per sheet -----------------------------------------


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a report table.

    Attributes
    ----------
    header : str
        Column title.
    kind : str
        How numbers are shown: ``"text"``, ``"percent"`` (0.0%), ``"rate"`` (a percent
        with about three significant digits, for rates that can be tiny: FPR,
        prevalences, precision at a low prevalence), ``"count"`` (#,##0), ``"ratio"``
        (6 decimals, for ``k``), ``"number"`` (3 decimals), ``"small"`` (scientific),
        ``"date"`` or ``"int"`` (plain whole number).
    """

    header: str
    kind: str = "text"


@dataclass(frozen=True, slots=True, kw_only=True)
class Table:
    """A header row and data rows (``None`` is an empty cell).

    Attributes
    ----------
    columns : tuple of Column
        Column titles and formats.
    rows : tuple of tuple
        Values in column order.
    """

    columns: tuple[Column, ...]
    rows: tuple[tuple[Any, ...], ...] = ()

    @property
    def headers(self) -> tuple[str, ...]:
        return tuple(column.header for column in self.columns)

    def to_dicts(self) -> list[dict[str, Any]]:
        return [dict(zip(self.headers, row, strict=True)) for row in self.rows]


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryRow:
    """One line of the Summary sheet.

    Attributes
    ----------
    style : str
        ``"heading"`` (a section title), ``"row"`` (label and values) or ``"text"``
        (a sentence across the sheet, e.g. a warning).
    label : str
        First column.
    value, lower, upper : object
        Value and optional interval bounds.
    kind : str
        Number format of ``value``/``lower``/``upper`` (see :class:`Column`).
    note : str
        Plain-language explanation.
    """

    style: str = "row"
    label: str = ""
    value: Any = None
    lower: Any = None
    upper: Any = None
    kind: str = "text"
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanCurves:
    """Width-vs-``s`` table behind the plan charts.

    Attributes
    ----------
    table : Table
        ``s`` then one precision-width and one recall-width column per curve.
    labels : tuple of str
        Curve names (``"frequentist"``, ``"prior strength 5"``, ...).
    optimum : Table
        ``s*`` and the widths there, one row per curve.
    v : float
        Total labels the widths are computed for.
    """

    table: Table
    labels: tuple[str, ...]
    optimum: Table
    v: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportContent:
    """Everything the report shows, computed before any cell is written.

    Attributes
    ----------
    state : SessionState
        The session, with ``margin``/``confidence`` overrides applied; its Inputs sheet
        restores exactly this.
    subject : str
        What was evaluated, in words (``"round TR-06 (travel)"``).
    evaluated_round : Round or None
        The past round evaluated, or ``None`` for the Evaluate tab's counts.
    evaluation : Evaluation or None
        Its estimates and intervals (``None`` when the counts cannot be evaluated).
    plan, chosen_design : Plan or None
        The recommended next round, and the margins the Plan tab's ``(s, v)`` buys.
    summary : tuple of SummaryRow
        The Summary sheet.
    intervals : Table
        The Intervals sheet.
    plan_curves : PlanCurves or None
        The Plan curves sheet.
    p3 : Table or None
        The P3 sheet; ``p3_info`` holds its side notes.
    rounds : Table
        The Rounds sheet.
    inputs : tuple of (str, object)
        The Inputs sheet's ``key, value`` rows (schema version first).
    warnings : tuple of str
        Every caution shown in the Summary.
    """

    state: SessionState
    subject: str
    evaluated_round: Round | None
    evaluation: Evaluation | None
    plan: Plan | None
    chosen_design: Plan | None
    summary: tuple[SummaryRow, ...]
    intervals: Table
    plan_curves: PlanCurves | None
    p3: Table | None
    p3_info: tuple[tuple[str, Any, str], ...] = ()
    rounds: Table
    inputs: tuple[tuple[str, Any], ...]
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """Short JSON-able description (``prplanner report --json``)."""
        estimates = None
        if self.evaluation is not None:
            estimates = {
                name: metric.to_dict() for name, metric in self.evaluation.metrics().items()
            }
        return {
            "subject": self.subject,
            "round": None if self.evaluated_round is None else self.evaluated_round.to_dict(),
            "rounds": len(self.state.rounds),
            "estimates": estimates,
            "plan": None if self.plan is None else self.plan.to_dict(),
            "warnings": list(self.warnings),
        }


def _finite(value: Any) -> Any:
    """``None`` for NaN/inf (an empty cell, never a silent NaN), else the value."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _round_label(item: Round) -> str:
    """``TR-06 (Fraud, model v2.3)``: the round, its classifier and model version."""
    name = item.round or f"row {item.row} of sheet {item.sheet}"
    about = [item.classifier] if item.classifier else []
    if item.model_version:
        about.append(f"model {item.model_version}")
    return f"{name} ({', '.join(about)})" if about else name


def find_round(rounds: Sequence[Any], name: str, warnings: list[str]) -> Round:
    """The round of ``rounds`` named ``name`` (case-insensitive as a fallback).

    When several share the name the last one is returned and ``warnings`` says so.

    Raises
    ------
    InputError
        No round has that name (the message lists the names there are).
    """
    wanted = str(name).strip()
    matches = [item for item in rounds if isinstance(item, Round) and item.round == wanted]
    if not matches:
        folded = wanted.casefold()
        matches = [
            item
            for item in rounds
            if isinstance(item, Round) and (item.round or "").strip().casefold() == folded
        ]
    if not matches:
        names = [item.round for item in rounds if isinstance(item, Round) and item.round]
        if not names:
            raise InputError(f"there is no round named {wanted!r}: the session has no named rounds")
        more = f" and {len(names) - 12:,} more" if len(names) > 12 else ""
        shown = ", ".join(names[:12]) + more
        raise InputError(f"there is no round named {wanted!r}; the rounds are {shown}")
    chosen = matches[-1]
    if len(matches) > 1:
        warnings.append(
            f"{len(matches)} rounds are named {wanted!r}; the last one (sheet "
            f"{chosen.sheet!r}, row {chosen.row}) is reported"
        )
    return chosen


def _apply_overrides(state: SessionState, margin, confidence) -> SessionState:
    if confidence is not None:
        state = replace(state, confidence=validation.confidence(confidence))
    if margin is not None:
        margin = validation.margin("margin", margin)
        state = replace(
            state, plan=replace(state.plan, margin_precision=margin, margin_recall=margin)
        )
    return state


def _evaluate_population(state: SessionState, item: Round | None):
    """``(matrix, population or None, fpc)`` of what the report evaluates."""
    from core.confusion import Population

    if item is not None:
        return item.matrix, item.population, state.evaluate.fpc and item.population_pos is not None
    inputs = state.evaluate.population
    if inputs.mode == "counts":
        population = Population.from_counts(inputs.predicted_positive, inputs.predicted_negative)
    elif inputs.mode == "k":
        population = Population.from_k(inputs.k)
    else:
        population = None
    fpc = state.evaluate.fpc and population is not None and population.has_counts
    return state.evaluate.matrix, population, fpc


def evaluation_section(
    state: SessionState, item: Round | None, warnings: list[str]
) -> Evaluation | None:
    """The evaluated round's estimates and every interval (``None`` if impossible)."""
    from core.evaluation import evaluate

    try:
        matrix, population, fpc = _evaluate_population(state, item)
    except InputError as exc:
        warnings.append(f"the counts cannot be evaluated: {exc}")
        return None
    options = dict(
        population=population,
        confidence=state.confidence,
        replicates=state.evaluate.replicates,
        seed=state.evaluate.seed,
    )
    try:
        return evaluate(matrix, fpc=fpc, **options)
    except InputError as exc:
        if not fpc:
            warnings.append(f"the counts cannot be evaluated: {exc}")
            return None
        warnings.append(f"the finite population correction was left out: {exc}")
    try:
        return evaluate(matrix, **options)
    except InputError as exc:
        warnings.append(f"the counts cannot be evaluated: {exc}")
        return None


def intervals_table(evaluation: Evaluation | None) -> Table:
    """The Intervals sheet: :meth:`Evaluation.to_rows` plus each method's name in words."""
    columns = (
        Column("Metric"),
        Column("Method"),
        Column("Method (in words)"),
        # two decimals at least, more for a rare rate (an FPR of 0.44 %)
        Column("Estimate", "rate"),
        Column("Lower", "rate"),
        Column("Upper", "rate"),
        Column("Note"),
    )
    if evaluation is None:
        return Table(columns=columns)
    rows = tuple(
        (
            METRIC_WORDS.get(metric, metric),
            method,
            METHOD_NAMES.get(method, method),
            estimate,
            lower,
            upper,
            note,
        )
        for metric, method, estimate, lower, upper, note in evaluation.to_rows()
    )
    return Table(columns=columns, rows=rows)


#: The metrics of :meth:`Evaluation.to_rows` as the Intervals sheet names them.
METRIC_WORDS = {
    "precision": "Precision",
    "recall": "Recall",
    "f1": "F1",
    "fpr": "False positive rate",
    "prevalence": "Prevalence",
}


def _planning_inputs(state: SessionState, item: Round | None, warnings: list[str]):
    """Planning inputs for the next round (:func:`core.plan_request.planning_inputs`): a
    reported past round plans from its own counts, otherwise the Plan tab's inputs."""
    from core.plan_request import planning_inputs

    try:
        return planning_inputs(state, item)
    except InputError as exc:
        warnings.append(f"no plan for the next round: {exc}")
        return None


def plan_section(state: SessionState, inputs: PlanningInputs | None, warnings: list[str]):
    """``(recommended plan, chosen design)`` for the next round (either may be ``None``)."""
    from core.plan_request import PlanRequest

    if inputs is None:
        return None, None
    plan = state.plan
    request = PlanRequest.from_session(state, inputs)
    request = request.but(notes=(*inputs.notes, *request.fallbacks))
    recommended = chosen = None
    try:
        recommended = request.but(assurance_target=plan.assurance_target or None).plan()
    except InputError as exc:
        warnings.append(f"no recommended plan for the next round: {exc}")
    try:
        chosen = request.but(method="paper", s=plan.s, v=plan.v).plan()
    except InputError as exc:
        warnings.append(f"the design s = {plan.s:g}, v = {plan.v:,} cannot be assessed: {exc}")
    return recommended, chosen


def plan_curves_section(
    state: SessionState, inputs: PlanningInputs | None, warnings: list[str]
) -> PlanCurves | None:
    """Interval widths against ``s`` at the Plan tab's ``v`` (methods §7, Figure 1)."""
    import numpy as np

    from core.planning import WidthCurveModel

    if inputs is None:
        return None
    posteriors = () if inputs.posterior is None else (("your prior + data", inputs.posterior),)
    try:
        model = WidthCurveModel.build(
            k=inputs.population.k,
            precision=inputs.precision,
            recall=inputs.recall,
            confidence=state.confidence,
            posteriors=posteriors,
        )
        grid = np.geomspace(model.grid[0], model.grid[-1], PLAN_CURVE_POINTS)
        curves = model.over_s(state.plan.v, grid)
    except InputError as exc:
        warnings.append(f"no plan curves: {exc}")
        return None
    labels = tuple(curves.labels)
    columns = [Column("s", "number")]
    columns += [Column(f"Precision width, {label}", "percent") for label in labels]
    columns += [Column(f"Recall width, {label}", "percent") for label in labels]
    precision = np.asarray(curves.precision_width, dtype=float)
    recall = np.asarray(curves.recall_width, dtype=float)
    rows = tuple(
        (
            float(s),
            *(_finite(float(v)) for v in precision[:, j]),
            *(_finite(float(v)) for v in recall[:, j]),
        )
        for j, s in enumerate(curves.s)
    )
    optimum = Table(
        columns=(
            Column("Curve"),
            Column("Best s (s*)", "number"),
            Column("Precision width at s*", "percent"),
            Column("Recall width at s*", "percent"),
        ),
        rows=tuple(
            (
                label,
                _finite(float(curves.s_star[i])),
                _finite(float(curves.precision_width_at_s_star[i])),
                _finite(float(curves.recall_width_at_s_star[i])),
            )
            for i, label in enumerate(labels)
        ),
    )
    return PlanCurves(
        table=Table(columns=tuple(columns), rows=rows),
        labels=labels,
        optimum=optimum,
        v=float(curves.v),
    )


def p3_section(
    state: SessionState, evaluation: Evaluation | None, name: str, warnings: list[str]
) -> tuple[Table | None, tuple[tuple[str, Any, str], ...]]:
    """Precision, band and F1 across prevalences (methods §11, 2.3) of the evaluated round."""
    from core.prevalence import OperatingPoint, p3_curve

    if evaluation is None:
        return None, ()
    k = None if evaluation.design == "random" else evaluation.k
    try:
        point = OperatingPoint.from_round(
            evaluation.matrix, k, confidence=evaluation.confidence, name=name
        )
        curve = p3_curve(
            point,
            eta_min=state.prevalence.eta_min,
            eta_max=state.prevalence.eta_max,
            points=P3_POINTS,
            reference_prevalence=state.prevalence.reference_prevalence,
        )
    except InputError as exc:
        warnings.append(f"no P3 curve: {exc}")
        return None, ()
    lower = curve.lower if curve.lower is not None else [None] * len(curve.prevalence)
    upper = curve.upper if curve.upper is not None else [None] * len(curve.prevalence)
    rows = tuple(
        (float(eta), _finite(float(p)), _num(lo), _num(up), _finite(float(f1)))
        for eta, p, lo, up, f1 in zip(
            curve.prevalence, curve.precision, lower, upper, curve.f1, strict=True
        )
    )
    table = Table(
        columns=(
            Column("Prevalence", "rate"),
            Column("Precision", "rate"),
            Column("Lower", "rate"),
            Column("Upper", "rate"),
            Column("F1", "rate"),
        ),
        rows=rows,
    )
    info: list[tuple[str, Any, str]] = [
        ("True positive rate (recall)", point.tpr, "percent"),
        ("False positive rate", point.fpr, "rate"),
    ]
    if point.population_prevalence is not None:
        info.append(("Estimated prevalence of the population", point.population_prevalence, "rate"))
    if curve.band is not None:
        info.append(("Widest band (Delta)", _finite(float(curve.band.delta)), "percent"))
        info.append(
            ("Prevalence of the widest band (eta*)", _finite(float(curve.band.eta_star)), "rate")
        )
    if curve.calibrated is not None:
        calibrated = curve.calibrated.to_dict()
        reference = state.prevalence.reference_prevalence
        for key, value in calibrated.items():
            if key == "reference_prevalence":
                continue
            info.append(
                (
                    f"{key.replace('_', ' ')} at prevalence {reference:g}",
                    _finite(float(value)),
                    "percent",
                )
            )
    return table, tuple(info)


def _num(value) -> float | None:
    return None if value is None else _finite(float(value))


def rounds_table(rounds: Sequence[Any], confidence: float) -> Table:
    """The Rounds sheet: each round as read, plus precision/recall with intervals."""
    import numpy as np

    kinds = {
        "Date": "date",
        "Predicted positive (population)": "count",
        "Predicted negative (population)": "count",
        "k": "ratio",
        "s": "number",
        "TP": "count",
        "FP": "count",
        "FN": "count",
        "TN": "count",
        "Source row": "int",
    }
    columns = tuple(
        Column(
            header,
            "percent"
            if header.startswith(("Precision", "Recall", "F1")) and "(population)" not in header
            else kinds.get(header, "text"),
        )
        for header in ROUNDS_HEADER
    )
    # Display-only figures: an extreme k (1e-300) must not stop the report, so numpy's
    # overflow warnings are silenced and math errors become the row's note.
    with np.errstate(all="ignore"):
        items = [item for item in rounds if isinstance(item, Round)]
        computed = _round_intervals(items, confidence)
        rows = tuple(
            _round_row(item, confidence, computed.get(position))
            for position, item in enumerate(items)
        )
    return Table(columns=columns, rows=rows)


def _round_intervals(items: Sequence[Round], confidence: float) -> dict[int, tuple]:
    """``{position: (Wilson, Katz, recall)}`` of every round with both strata and a usable
    ``k``, from one vectorized call (:mod:`core.batch_intervals`); any other round keeps
    the per-round path of :func:`_round_row`, which writes why into its note."""
    import numpy as np

    from core import batch_intervals

    usable = []
    for position, item in enumerate(items):
        try:
            cells = item.matrix.require_both_strata().as_tuple()
            k = validation.positive("k", item.k)
        except (InputError, ArithmeticError, ValueError):
            continue
        usable.append((position, cells, k))
    if not usable:
        return {}
    tp, fp, fn, tn = np.array([cells for _, cells, _ in usable], dtype=float).T
    k = np.array([k for _, _, k in usable])
    wilson = batch_intervals.wilson_precision(tp, fp, confidence)
    katz = batch_intervals.katz_log_recall(tp, fp, fn, tn, k, confidence)
    recall = batch_intervals.recall_point(tp, fp, fn, tn, k)
    return {
        position: (wilson.interval(row), katz.interval(row), float(recall[row]))
        for row, (position, _, _) in enumerate(usable)
    }


def _round_row(item: Round, confidence: float, computed: tuple | None = None) -> tuple[Any, ...]:
    from core.intervals import katz_log_recall, recall_point, wilson_precision

    precision = lower_p = upper_p = recall = lower_r = upper_r = f1 = None
    note = ""
    try:
        matrix = item.matrix
        if computed is None:  # a round the vectorized pass could not take: say why
            computed = (
                wilson_precision(matrix, confidence),
                katz_log_recall(matrix, item.k, confidence),
                recall_point(matrix, item.k),
            )
        interval, katz, recall_value = computed
        precision, lower_p, upper_p = matrix.pi1_hat, interval.lower, interval.upper
        recall = _finite(recall_value)
        lower_r, upper_r, note = _finite(katz.lower), _finite(katz.upper), katz.note
        if recall is not None and precision + recall > 0:
            f1 = 2 * precision * recall / (precision + recall)
    except InputError as exc:
        note = str(exc)
    except (ArithmeticError, ValueError) as exc:
        note = f"interval not computable for these numbers ({type(exc).__name__})"
    return (
        item.round,
        item.date,
        item.classifier,
        item.model_version,
        item.population_pos,
        item.population_neg,
        item.k,
        item.s,
        item.tp,
        item.fp,
        item.fn,
        item.tn,
        item.notes,
        precision,
        lower_p,
        upper_p,
        recall,
        lower_r,
        upper_r,
        f1,
        note or None,
        item.sheet,
        item.row,
    )


def inputs_rows(state: SessionState) -> tuple[tuple[str, Any], ...]:
    """Schema version, writer, then :func:`core.session.flatten` of the state.

    A session without ensemble children (one about the user's own rounds) leaves out the
    ensemble settings that are at their defaults: they describe the bundled example, not
    the user's data, and reading the file back restores the same defaults.
    """
    rows = flatten(state)
    if not state.ensemble.children:
        defaults = dict(flatten(EnsembleInputs(children=()), "ensemble."))
        rows = [
            (key, value)
            for key, value in rows
            if not (key in defaults and key != "ensemble.children.count" and defaults[key] == value)
        ]
    return (
        (SCHEMA_KEY, SCHEMA_VERSION),
        (WRITER_KEY, f"PR Planner {_app_version()}"),
        *rows,
    )


def _app_version() -> str:
    try:
        from importlib.metadata import version

        return version("prplanner")
    except Exception:  # running from a checkout that is not installed
        return "(development checkout)"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _rate(value: float | None) -> str:
    """A rate that can be tiny (FPR, prevalence) as text, like the ``"rate"`` format."""
    return "-" if value is None else _shown(value, "rate")


#: Metrics whose values can be far below 1 % (shown with the ``"rate"`` format).
SMALL_RATE_METRICS = ("fpr", "prevalence")


def summary_rows(
    state: SessionState,
    subject: str,
    item: Round | None,
    evaluation: Evaluation | None,
    inputs: PlanningInputs | None,
    plan: Plan | None,
    chosen: Plan | None,
    warnings: Sequence[str],
) -> tuple[SummaryRow, ...]:
    """The Summary sheet, section by section, in plain language."""
    level = (
        f"{state.confidence:.0%}"
        if (state.confidence * 100).is_integer()
        else (f"{state.confidence:.1%}")
    )
    rows: list[SummaryRow] = [SummaryRow(style="heading", label="What was evaluated")]
    rows.append(SummaryRow(label="Subject", value=subject))
    if item is not None:
        if item.classifier:
            rows.append(SummaryRow(label="Classifier", value=item.classifier))
        if item.model_version:
            rows.append(SummaryRow(label="Model version", value=item.model_version))
        if item.date is not None:
            rows.append(SummaryRow(label="Labeled on", value=item.date, kind="date"))
        if item.notes:
            rows.append(SummaryRow(label="Notes", value=item.notes))
        if item.s is not None:
            rows.append(
                SummaryRow(
                    label="Over-sampling ratio s",
                    value=item.s,
                    kind="number",
                    note="How much more often predicted positives were sampled "
                    "than in a plain random sample.",
                )
            )
    if evaluation is not None:
        matrix = evaluation.matrix
        rows += [
            SummaryRow(
                label="Labeled predicted positives",
                value=matrix.n_pos,
                kind="count",
                note=f"TP = {matrix.tp:,} truly positive, FP = {matrix.fp:,} not.",
            ),
            SummaryRow(
                label="Labeled predicted negatives",
                value=matrix.n_neg,
                kind="count",
                note=f"FN = {matrix.fn:,} truly positive (missed), TN = {matrix.tn:,} "
                "truly negative.",
            ),
        ]
        population = None
        if item is not None:
            population = item.population
        elif state.evaluate.population.mode == "counts":
            population = state.evaluate.population
        pos = getattr(population, "predicted_positive", None)
        neg = getattr(population, "predicted_negative", None)
        if pos is not None and neg is not None:
            rows.append(
                SummaryRow(
                    label="Population flagged positive",
                    value=pos,
                    kind="count",
                    note="Items the classifier predicts positive (N1).",
                )
            )
            rows.append(
                SummaryRow(
                    label="Population flagged negative",
                    value=neg,
                    kind="count",
                    note="Items the classifier predicts negative (N0).",
                )
            )
        rows.append(
            SummaryRow(
                label="Imbalance ratio k",
                value=evaluation.k,
                kind="ratio",
                note="N1/N0 estimated from a plain random sample"
                if evaluation.design == "random"
                else "N1/N0: predicted positives per predicted negative.",
            )
        )
    rows.append(
        SummaryRow(
            label="Confidence level",
            value=state.confidence,
            kind="percent",
            note="Every interval in this report is at this level.",
        )
    )

    rows.append(SummaryRow(style="heading", label=f"Results ({level} confidence)"))
    if evaluation is None:
        rows.append(
            SummaryRow(
                style="text", label="The counts could not be evaluated; see the warnings below."
            )
        )
    else:
        for name, metric in evaluation.metrics().items():
            estimate = _finite(metric.estimate)
            method = HEADLINE_METHODS[name]
            interval = metric.intervals.get(method)
            lower = _finite(interval.lower) if interval is not None else None
            upper = _finite(interval.upper) if interval is not None else None
            show = _rate if name in SMALL_RATE_METRICS else _pct
            if estimate is None:
                words = "Undefined for these counts (see the warnings)."
            else:
                words = (
                    f"{METRIC_NAMES[name]} is {show(estimate)}; with {level} confidence "
                    f"between {show(lower)} and {show(upper)} "
                    f"({METHOD_NAMES[method]} interval). {METRIC_MEANINGS[name]}"
                )
            rows.append(
                SummaryRow(
                    label=METRIC_NAMES[name],
                    value=estimate,
                    lower=lower,
                    upper=upper,
                    kind="rate" if name in SMALL_RATE_METRICS else "percent",
                    note=words,
                )
            )
        prevalence = _finite(evaluation.estimates.prevalence)
        rows.append(
            SummaryRow(
                label="Prevalence",
                value=prevalence,
                kind="rate",
                note=METRIC_MEANINGS["prevalence"],
            )
        )

        rows.append(SummaryRow(style="heading", label="Intervals by method"))
        for metric, method, estimate, lower, upper, note in evaluation.to_rows():
            if metric not in ("precision", "recall"):
                continue
            rows.append(
                SummaryRow(
                    label=f"{METRIC_NAMES[metric]}: {METHOD_NAMES.get(method, method)}",
                    value=estimate,
                    lower=lower,
                    upper=upper,
                    kind="percent",
                    note=note,
                )
            )
        rows.append(
            SummaryRow(
                style="text",
                label="F1 and the false positive rate by every method are on the Intervals sheet.",
            )
        )

    rows.append(SummaryRow(style="heading", label="Plan for the next round"))
    if inputs is None or (plan is None and chosen is None):
        rows.append(
            SummaryRow(style="text", label="No plan could be made; see the warnings below.")
        )
    else:
        rows.append(
            SummaryRow(
                label="Planning values",
                value=f"precision {_pct(inputs.precision)}, recall {_pct(inputs.recall)}",
                note=f"From {inputs.source}.",
            )
        )
        rows.append(
            SummaryRow(
                label="Target margins",
                value=f"± {_pct(state.plan.margin_precision)} precision, "
                f"± {_pct(state.plan.margin_recall)} recall",
                note="Half-width of the intervals the next round should give.",
            )
        )
        if plan is not None:
            how = {
                "paper": "the paper's procedure (Section 5)",
                "optimal": "the smallest design meeting both targets",
            }.get(plan.method, plan.method)
            rows += [
                SummaryRow(
                    label="Recommended over-sampling ratio s",
                    value=plan.s,
                    kind="number",
                    note=f"Chosen by {how}; the ratio that makes the "
                    f"recall interval narrowest is s* = {plan.s_star:.3g}.",
                ),
                SummaryRow(
                    label="Label from predicted positives",
                    value=plan.n_pos,
                    kind="count",
                    note="Items to draw at random from what the classifier flags.",
                ),
                SummaryRow(
                    label="Label from predicted negatives",
                    value=plan.n_neg,
                    kind="count",
                    note="Items to draw at random from the rest.",
                ),
                SummaryRow(label="Total labels", value=plan.total, kind="count"),
                SummaryRow(
                    label="Expected precision margin",
                    value=plan.margin_precision,
                    kind="percent",
                    note=f"Target ± {_pct(plan.target_margin_precision)}; chance the labeled "
                    f"round meets it: {_pct(plan.assurance.precision)}.",
                ),
                SummaryRow(
                    label="Expected recall margin",
                    value=plan.margin_recall,
                    kind="percent",
                    note=f"Target ± {_pct(plan.target_margin_recall)}; chance the labeled "
                    f"round meets it: {_pct(plan.assurance.recall)}.",
                ),
                SummaryRow(
                    label="Chance both margins are met",
                    value=plan.assurance.both,
                    kind="percent",
                    note="The plan meets the targets on average; a labeled round's margins "
                    "scatter around them.",
                ),
            ]
            if plan.cost is not None:
                rows.append(SummaryRow(label="Labeling cost", value=plan.cost, kind="number"))
            if plan.assured is not None:
                assured = plan.assured
                rows.append(
                    SummaryRow(
                        label=f"Assured plan (at least {_pct(assured.target)} chance of "
                        "meeting both margins)",
                        value=assured.total,
                        kind="count",
                        note=f"{assured.n_pos:,} predicted positives and {assured.n_neg:,} "
                        f"predicted negatives; {assured.total - plan.total:+,} labels beside "
                        f"the plan above (the price of the promise); chance both met "
                        f"{_pct(assured.assurance.both)}.",
                    )
                )
            for note in plan.notes:
                rows.append(SummaryRow(style="text", label=note))
        if chosen is not None:
            whose = "Your design"
            same = item is not None and chosen.total == item.matrix.total
            if same and item.s in (None, chosen.s):
                whose = f"The design of {item.round or 'this round'} again"
            rows.append(
                SummaryRow(
                    label=f"{whose} (s = {chosen.s:.3g}, {chosen.total:,} labels)",
                    value=f"± {_pct(chosen.margin_precision)} precision, "
                    f"± {_pct(chosen.margin_recall)} recall",
                    note=f"{chosen.n_pos:,} predicted positives and {chosen.n_neg:,} predicted "
                    "negatives; the margins it is expected to give (chance both are met: "
                    f"{_pct(chosen.assurance.both)}).",
                )
            )

    rows.append(SummaryRow(style="heading", label="Warnings"))
    if warnings:
        rows += [SummaryRow(style="text", label=f"• {text}") for text in warnings]
    else:
        rows.append(SummaryRow(style="text", label="None."))

    rows.append(SummaryRow(style="heading", label="About this file"))
    rows.append(
        SummaryRow(
            style="text",
            label="Intervals: every interval method. Rounds: the history, one round per "
            "row. The charts' data (Plan curves, P3) and the settings (Inputs) are on hidden "
            "sheets (Format > Sheet > Unhide, or Unhide in Excel's sheet menu); open this "
            "file in PR Planner to continue the session.",
        )
    )
    return tuple(rows)


def _guarded(warnings: list[str], what: str, compute, *args, default=None):
    """``compute(*args)``, or ``default`` with a warning when it fails.

    The report is also the app's document: a save must not fail, and lose the user's work,
    because an analysis meets inputs it cannot handle (an overflow at k = 1e-300, an
    unexpected error in a section). Numeric warnings are silenced (``np.errstate`` is
    per thread, unlike the ``warnings`` filters) and any failure becomes a line in the
    Summary's warnings naming the section.
    """
    import numpy as np

    try:
        with np.errstate(all="ignore"):
            return compute(*args)
    except InputError as exc:
        warnings.append(f"{what}: {exc}")
    except Exception as exc:  # see the docstring: never lose a save to an analysis
        warnings.append(
            f"{what} could not be computed for these inputs ({type(exc).__name__}: {exc})"
        )
    return default


def build_report(
    state: SessionState,
    *,
    round_name: str | Round | None = None,
    margin: float | None = None,
    confidence: float | None = None,
) -> ReportContent:
    """Compute every table of the report (no file is touched).

    Parameters
    ----------
    state : SessionState
        The session.
    round_name : str or Round, optional
        Evaluate the past round of ``state.rounds`` with this name (the last one when
        several share it), or this very round; default: the Evaluate tab's counts.
    margin : float, optional
        Target margin for both precision and recall of the next round (overrides the
        Plan tab's two margins, and is saved in the Inputs sheet).
    confidence : float, optional
        Confidence level (overrides the session's).

    Returns
    -------
    ReportContent

    Raises
    ------
    InputError
        An unknown round name or an invalid override. Counts that cannot be evaluated or
        planned are not errors: the report says so in its warnings.
    """
    if not isinstance(state, SessionState):
        raise InputError(f"state must be a SessionState, got {type(state).__name__}")
    state = _apply_overrides(state, margin, confidence)
    warnings: list[str] = []
    if isinstance(round_name, Round):
        item = round_name
    elif round_name is not None:
        item = find_round(state.rounds, round_name, warnings)
    else:
        item = None
    subject = (
        f"round {_round_label(item)}"
        if item is not None
        else "the labeled counts entered on the Evaluate tab"
    )
    evaluation = _guarded(warnings, "the evaluation", evaluation_section, state, item, warnings)
    if evaluation is not None:
        warnings.extend(evaluation.warnings)
    planning = _guarded(warnings, "the plan", _planning_inputs, state, item, warnings)
    plan, chosen = _guarded(
        warnings, "the plan", plan_section, state, planning, warnings, default=(None, None)
    )
    curves = _guarded(warnings, "the plan curves", plan_curves_section, state, planning, warnings)
    name = _round_label(item) if item is not None else "Evaluate tab"
    p3, p3_info = _guarded(
        warnings, "the P3 curve", p3_section, state, evaluation, name, warnings, default=(None, ())
    )
    rounds = rounds_table(state.rounds, state.confidence)
    warnings = list(dict.fromkeys(warnings))  # the same caution once
    return ReportContent(
        state=state,
        subject=subject,
        evaluated_round=item,
        evaluation=evaluation,
        plan=plan,
        chosen_design=chosen,
        summary=summary_rows(state, subject, item, evaluation, planning, plan, chosen, warnings),
        intervals=intervals_table(evaluation),
        plan_curves=curves,
        p3=p3,
        p3_info=p3_info,
        rounds=rounds,
        inputs=inputs_rows(state),
        warnings=tuple(warnings),
    )


# --- layout: cells, formats, widths, charts -------------------------------------------------

NUMBER_FORMATS = {
    "percent": "0.0%",
    "percent2": "0.00%",
    # about three significant digits from 0.001 % up: 0.00100%, 0.0443%, 0.443%, 4.44%
    "rate": "[<0.0001]0.00000%;[<0.01]0.000%;0.00%",
    "count": "#,##0",
    "ratio": "0.000000",
    "number": "0.000",
    "small": "0.00E+00",
    "date": "yyyy-mm-dd",
    "int": "0",
    "text": "@",
}
_MIN_WIDTH, _MAX_WIDTH, _HEADER_WRAP = 8, 60, 14
#: One font name everywhere: without it LibreOffice falls back to a serif for styled cells.
FONT_NAME = "Calibri"


def _font(**options):
    from openpyxl.styles import Font

    return Font(name=FONT_NAME, **options)


def _set_text(cell, value: str) -> None:
    """Write ``value`` as text, never as a formula."""
    value = clean_text(value)
    cell.value = value
    # openpyxl makes every string starting with "=" a formula; force a string cell.
    cell.data_type = "s"
    if value.startswith(_FORMULA_START):
        cell.quotePrefix = True  # Excel and LibreOffice keep it text when it is edited


def _set_number(cell, value) -> None:
    """Write an int or float exactly (openpyxl's ``%.16g`` drops digits; see module doc)."""
    cell.value = value
    exact = repr(value) if isinstance(value, float) else str(value)
    if exact != format(value, ".16g"):  # what openpyxl would write
        # The writer emits ``str(cell._value)`` into <v> for a numeric cell holding text;
        # tests read the file back and compare bit for bit.
        cell._value = exact


def _write_value(cell, value, kind: str) -> str:
    """Write ``value`` formatted as ``kind``; return its displayed text (for widths)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        cell.value = value
        # LibreOffice shows a boolean cell in General format as 0/1
        cell.number_format = '"TRUE";"TRUE";"FALSE"'
        return "TRUE" if value else "FALSE"
    if isinstance(value, dt.datetime):
        value = value.date() if value.time() == dt.time() else value
    if isinstance(value, dt.date):
        if value < _FIRST_EXCEL_DATE:
            _set_text(cell, value.isoformat())
        else:
            cell.value = value
            cell.number_format = NUMBER_FORMATS["date"]
        return value.isoformat()
    if isinstance(value, str):
        _set_text(cell, value)
        if kind == "text":
            cell.number_format = "@"
        return value
    if hasattr(value, "item"):  # numpy scalar
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    _set_number(cell, value)
    cell.number_format = NUMBER_FORMATS.get(kind, "General")
    return _shown(value, kind)


def _shown(value, kind: str) -> str:
    try:
        if kind == "percent":
            return f"{value:.1%}"
        if kind == "percent2":
            return f"{value:.2%}"
        if kind == "rate":
            if value < 0.0001:
                return f"{value:.5%}"
            return f"{value:.3%}" if value < 0.01 else f"{value:.2%}"
        if kind == "count":
            return f"{value:,.0f}"
        if kind == "ratio":
            return f"{value:.6f}"
        if kind == "number":
            return f"{value:.3f}"
        if kind == "small":
            return f"{value:.2E}"
        return str(value)
    except (ValueError, OverflowError):
        return str(value)


class _Sheet:
    """Writes into one worksheet and remembers how wide each column's content is."""

    def __init__(self, worksheet):
        self.ws = worksheet
        self.widths: dict[int, float] = {}

    def put(self, row: int, column: int, value, kind: str = "text", *, fit: bool = True):
        cell = self.ws.cell(row=row, column=column)
        shown = _write_value(cell, value, kind)
        if fit and shown:
            longest = max(len(line) for line in shown.splitlines() or [""])
            self.widths[column] = max(self.widths.get(column, 0), longest)
        return cell

    def header(self, row: int, column: int, text: str):
        from openpyxl.styles import Alignment, Border, PatternFill, Side

        cell = self.put(row, column, text, fit=False)
        cell.font = _font(bold=True)
        cell.fill = PatternFill("solid", fgColor="DDE5F0")
        cell.border = Border(bottom=Side(style="thin", color="7F8FA6"))
        cell.alignment = Alignment(wrap_text=True, vertical="bottom")
        words = max((len(word) for word in text.split()), default=0)
        self.widths[column] = max(self.widths.get(column, 0), min(len(text), _HEADER_WRAP), words)
        return cell

    def table(self, table: Table, top: int = 1, left: int = 1) -> None:
        for offset, column in enumerate(table.columns):
            self.header(top, left + offset, column.header)
        for r, values in enumerate(table.rows, start=top + 1):
            for offset, (column, value) in enumerate(zip(table.columns, values, strict=True)):
                self.put(r, left + offset, value, column.kind)
        self.header_height(top, table.headers, left)

    def header_height(self, row: int, headers: Sequence[str], left: int = 1) -> None:
        """Make a header row tall enough for its wrapped titles (no auto-fit on open)."""
        lines = 1
        for offset, text in enumerate(headers):
            width = max(self.widths.get(left + offset, 0), _HEADER_WRAP)
            lines = max(lines, _wrapped_lines(text, width))
        if lines > 1:
            self.ws.row_dimensions[row].height = 15 * lines + 2

    def fit_columns(self, fixed: Mapping[int, float] | None = None) -> None:
        from openpyxl.utils import get_column_letter

        fixed = fixed or {}
        for column in sorted(set(self.widths) | set(fixed)):
            width = self.widths.get(column, 0)
            chosen = fixed.get(column)
            if chosen is None:
                chosen = min(max(width + 2, _MIN_WIDTH), _MAX_WIDTH)
            self.ws.column_dimensions[get_column_letter(column)].width = chosen

    def page_setup(
        self,
        title_rows: str | None = "1:1",
        *,
        orientation: str = "landscape",
        title_columns=None,
    ) -> None:
        """A4, fitted to one page wide (as many pages tall as needed), header row on each.

        ``orientation`` is ``"landscape"`` for wide sheets and ``"portrait"`` for narrow,
        long ones (the P3 table, the Inputs).
        """
        from openpyxl.worksheet.page import PageMargins

        ws = self.ws
        ws.page_setup.orientation = orientation
        ws.page_setup.paperSize = ws.PAPERSIZE_A4
        ws.page_margins = PageMargins(
            left=0.5, right=0.5, top=0.5, bottom=0.5, header=0.25, footer=0.25
        )
        ws.sheet_properties.pageSetUpPr.fitToPage = True
        ws.page_setup.fitToWidth = 1
        ws.page_setup.fitToHeight = 0
        if title_rows:
            ws.print_title_rows = title_rows
        if title_columns:
            ws.print_title_cols = title_columns


def _wrapped_lines(text: str, width: float) -> int:
    """Lines ``text`` takes when wrapped at word boundaries in ``width`` characters."""
    lines, current = 1, 0
    for word in text.split():
        if current and current + 1 + len(word) > width:
            lines, current = lines + 1, len(word)
        else:
            current += len(word) + (1 if current else 0)
    return lines


def _line_series(
    chart,
    worksheet,
    x_column: int,
    y_column: int,
    first: int,
    last: int,
    *,
    title: str | None = None,
    color: str | None = None,
    dashed: bool = False,
    width: int = 22000,
):
    """Add a plain line (no markers) of ``y_column`` against ``x_column`` to a scatter chart.

    The title is the header cell above ``first`` unless ``title`` is given.
    """
    from openpyxl.chart import Reference, Series
    from openpyxl.chart.series import SeriesLabel

    x_values = Reference(worksheet, min_col=x_column, min_row=first, max_row=last)
    if title is None:
        y_values = Reference(worksheet, min_col=y_column, min_row=first - 1, max_row=last)
        series = Series(y_values, x_values, title_from_data=True)
    else:
        y_values = Reference(worksheet, min_col=y_column, min_row=first, max_row=last)
        series = Series(y_values, x_values)
        series.tx = SeriesLabel(v=clean_text(title))
    series.marker.symbol = "none"
    series.smooth = False
    line = series.graphicalProperties.line
    line.width = width
    if color:
        line.solidFill = color
    if dashed:
        line.dashStyle = "dash"
    chart.series.append(series)
    return series


#: Number format of a log prevalence axis (fractions shown as percents, as few decimals as
#: each decade needs; Excel allows two conditions).
PREVALENCE_AXIS_FORMAT = "[<0.0001]0.000%;[<0.01]0.0#%;0%"

_PALETTE = ("1F77B4", "FF7F0E", "2CA02C", "D62728", "9467BD", "8C564B", "E377C2", "7F7F7F")


def _scatter_chart(title: str, x_title: str, y_title: str, *, log_x: bool, percent_y: bool = True):
    from openpyxl.chart import ScatterChart

    chart = ScatterChart()
    chart.title = title
    chart.style = 13
    chart.scatterStyle = "line"
    chart.x_axis.title = x_title
    chart.y_axis.title = y_title
    if log_x:
        chart.x_axis.scaling.logBase = 10
    if percent_y:
        # A rate or an interval width of a rate: never below 0 % or above 100 %.
        chart.y_axis.number_format = "0%"
        chart.y_axis.scaling.min = 0
        chart.y_axis.scaling.max = 1
    chart.x_axis.number_format = "General"
    # openpyxl >= 3.1 marks axes as deleted unless told otherwise; Excel then hides them.
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    chart.legend.position = "b"
    chart.width, chart.height = CHART_SIZE
    return chart


def _write_summary(ws, content: ReportContent) -> int:
    """Write the Summary; return the first free row below it."""
    from openpyxl.styles import Alignment

    sheet = _Sheet(ws)
    sheet.put(1, 1, "PR Planner report", fit=False).font = _font(bold=True, size=14)
    sheet.put(2, 1, f"{content.subject}; written {dt.date.today().isoformat()}", fit=False)
    for offset, text in enumerate(("Item", "Value", "Lower", "Upper", "Explanation"), start=1):
        sheet.header(4, offset, text)
    row = 5
    label_width, value_width, _, _, note_width = SUMMARY_WIDTHS
    top = Alignment(vertical="top", wrap_text=True)
    for line in content.summary:
        if line.style == "heading":
            row += 1
            sheet.put(row, 1, line.label, fit=False).font = _font(bold=True, size=12)
        elif line.style == "text":
            cell = sheet.put(row, 1, line.label, fit=False)
            ws.merge_cells(start_row=row, start_column=1, end_row=row, end_column=5)
            cell.alignment = Alignment(wrap_text=True, vertical="top")
            ws.row_dimensions[row].height = 15 * _wrapped_lines(line.label, sum(SUMMARY_WIDTHS) - 6)
        else:
            sheet.put(row, 1, line.label, fit=False).alignment = top
            value_cell = sheet.put(row, 2, line.value, line.kind, fit=False)
            value_cell.alignment = Alignment(horizontal="right", vertical="top", wrap_text=True)
            sheet.put(row, 3, line.lower, line.kind, fit=False).alignment = top
            sheet.put(row, 4, line.upper, line.kind, fit=False).alignment = top
            # Calibri is narrower than the width unit's digit: about 15 % more fits
            lines = _wrapped_lines(line.label, int(label_width * 1.15))
            if isinstance(line.value, str):
                lines = max(lines, _wrapped_lines(line.value, value_width - 2))
            if line.note:
                cell = sheet.put(row, 5, line.note, fit=False)
                cell.alignment = Alignment(wrap_text=True, vertical="top", indent=1)
                lines = max(lines, _wrapped_lines(line.note, note_width - 4))
            if lines > 1:
                ws.row_dimensions[row].height = 15 * lines
        row += 1
    sheet.fit_columns(dict(enumerate(SUMMARY_WIDTHS, start=1)))
    ws.freeze_panes = "A5"
    sheet.page_setup("4:4")
    return row + 1


def _write_intervals(ws, content: ReportContent) -> None:
    from openpyxl.utils import get_column_letter

    sheet = _Sheet(ws)
    sheet.table(content.intervals)
    if not content.intervals.rows:
        sheet.put(3, 1, "The counts could not be evaluated; see the Summary's warnings.")
    ws.freeze_panes = "A2"
    sheet.fit_columns()
    # The method's key (wilson, bayes_mc) is for scripts; people read the words beside it.
    if "Method" in content.intervals.headers:
        column = content.intervals.headers.index("Method") + 1
        ws.column_dimensions[get_column_letter(column)].hidden = True
    sheet.page_setup()


def _write_plan_curves(ws, content: ReportContent) -> None:
    sheet = _Sheet(ws)
    curves = content.plan_curves
    if curves is None:
        sheet.put(1, 1, "No plan curves: see the Summary's warnings.")
        return
    table = curves.table
    sheet.table(table)
    # The best s per curve goes below the table: beside it, the sheet would be too wide to
    # print at a readable size.
    below = len(table.rows) + 3
    sheet.table(curves.optimum, top=below)
    sheet.put(
        below + len(curves.optimum.rows) + 2,
        1,
        f"Widths are full interval widths (upper - lower) for {curves.v:,.0f} labels.",
        fit=False,
    )
    ws.freeze_panes = "B2"
    sheet.fit_columns()
    sheet.page_setup()


def _plan_charts(ws, content: ReportContent) -> list:
    """Precision and recall width against ``s`` (log axis), one line per curve."""
    curves = content.plan_curves
    if curves is None:
        return []
    first, last = 2, len(curves.table.rows) + 1
    count = len(curves.labels)
    charts = []
    for index, metric in enumerate(("Precision", "Recall")):
        chart = _scatter_chart(
            f"{metric} interval width against s ({curves.v:,.0f} labels)",
            "over-sampling ratio s (log scale)",
            "interval width",
            log_x=True,
        )
        for j, label in enumerate(curves.labels):
            _line_series(
                chart,
                ws,
                1,
                2 + index * count + j,
                first,
                last,
                title=label,
                color=_PALETTE[j % len(_PALETTE)],
                dashed=j > 0,
            )
        charts.append(chart)
    return charts


def _letter(column: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(column)


def _write_p3(ws, content: ReportContent) -> None:
    sheet = _Sheet(ws)
    if content.p3 is None:
        sheet.put(1, 1, "No P3 curve: see the Summary's warnings.")
        return
    sheet.table(content.p3)
    side = len(content.p3.columns) + 2
    sheet.header(1, side, "About the curve")
    sheet.header(1, side + 1, "Value")
    for offset, (label, value, kind) in enumerate(content.p3_info, start=2):
        sheet.put(offset, side, label)
        sheet.put(offset, side + 1, value, kind)
    ws.freeze_panes = "B2"
    sheet.fit_columns()
    sheet.page_setup(orientation="portrait")  # a long, narrow table: one page


def _p3_charts(ws, content: ReportContent) -> list:
    """The P3 curve with its band and F1 on a log prevalence axis."""
    if content.p3 is None:
        return []
    chart = _scatter_chart(
        "Precision at other prevalences (P3 curve)",
        "prevalence of positives (log scale)",
        "precision",
        log_x=True,
    )
    # Prevalences as percents on the log axis: 0.001%, 0.01%, 0.1%, 1%, 10%, 100%.
    chart.x_axis.number_format = PREVALENCE_AXIS_FORMAT
    first, last = 2, len(content.p3.rows) + 1
    _line_series(chart, ws, 1, 2, first, last, color=_PALETTE[0], width=28000)
    if any(row[2] is not None for row in content.p3.rows):
        _line_series(chart, ws, 1, 3, first, last, color="9DC3E6", dashed=True)
        _line_series(chart, ws, 1, 4, first, last, color="9DC3E6", dashed=True)
    _line_series(chart, ws, 1, 5, first, last, color=_PALETTE[1])
    return [chart]


def _classifier_blocks(rows: Sequence[tuple]) -> list[tuple[str, int, int]]:
    """Contiguous runs of one classifier: ``(name, first index, last index)``."""
    blocks: list[tuple[str, int, int]] = []
    for index, row in enumerate(rows):
        name = row[2] or ""
        if blocks and blocks[-1][0] == name:
            blocks[-1] = (name, blocks[-1][1], index)
        else:
            blocks.append((name, index, index))
    return blocks


#: Rounds columns a manager reads; the others (populations, interval bounds behind the
#: history charts, where each round came from) stay in the sheet, hidden, so the sheet
#: prints one page wide at a readable size and still reads back as a rounds workbook.
ROUNDS_PRINTED = (
    "Round", "Date", "Classifier", "Model version", "k", "s", "TP", "FP", "FN", "TN",
    "Notes", "Precision", "Recall", "F1",
)  # fmt: skip
#: Width of the Notes column when printed (longer notes wrap).
_NOTES_WIDTH = 32


def _write_rounds(ws, content: ReportContent) -> None:
    from openpyxl.styles import Alignment
    from openpyxl.utils import get_column_letter

    sheet = _Sheet(ws)
    table = content.rounds
    sheet.table(table)
    ws.freeze_panes = "B2"
    notes = table.headers.index("Notes") + 1
    sheet.fit_columns({notes: _NOTES_WIDTH})
    for row, values in enumerate(table.rows, start=2):
        ws.cell(row=row, column=notes).alignment = Alignment(wrap_text=True, vertical="top")
        # Spreadsheets do not grow a row for wrapped text on opening: give it the lines.
        text = str(values[notes - 1] or "")
        lines = max(1, math.ceil(len(text) / (_NOTES_WIDTH - 2)), text.count("\n") + 1)
        if lines > 1:
            ws.row_dimensions[row].height = 15 * min(lines, 6)
    for column, header in enumerate(table.headers, start=1):
        if header not in ROUNDS_PRINTED:
            ws.column_dimensions[get_column_letter(column)].hidden = True
    sheet.page_setup()


def _history_charts(ws, content: ReportContent) -> list:
    """Precision and recall with their intervals, round by round, per classifier."""
    from openpyxl.chart import LineChart, Reference
    from openpyxl.chart.legend import LegendEntry
    from openpyxl.chart.series import SeriesLabel

    table = content.rounds
    if not table.rows:
        return []
    blocks = _classifier_blocks(table.rows)
    names = [name for name, _, _ in blocks]
    if len(set(names)) != len(names):
        # Classifiers interleave: one chart over every round rather than broken runs.
        blocks = [("", 0, len(table.rows) - 1)]
    blocks = sorted(blocks, key=lambda block: block[2] - block[1], reverse=True)
    blocks = sorted(blocks[:MAX_HISTORY_CHARTS], key=lambda block: block[1])
    headers = table.headers
    series_columns = (
        (headers.index("Precision") + 1, _PALETTE[0], False),
        (headers.index("Recall") + 1, _PALETTE[1], False),
        (headers.index("Precision lower (Wilson)") + 1, "9DC3E6", True),
        (headers.index("Precision upper (Wilson)") + 1, "9DC3E6", True),
        (headers.index("Recall lower (Katz log)") + 1, "F8CBAD", True),
        (headers.index("Recall upper (Katz log)") + 1, "F8CBAD", True),
    )
    charts = []
    version_column = headers.index("Model version")
    for name, start, stop in blocks:
        first, last = start + 2, stop + 2
        chart = LineChart()
        title = f"History of {name}" if name else "History of the rounds"
        # One series per classifier whatever its model versions; the title names them.
        versions = [
            str(row[version_column])
            for row in table.rows[start : stop + 1]
            if row[version_column] is not None
        ]
        if versions:
            title += f" (model {', '.join(dict.fromkeys(versions))})"
        chart.title = clean_text(title)
        chart.style = 12
        chart.y_axis.title = "estimate (dashed: interval)"
        chart.y_axis.number_format = "0%"
        chart.y_axis.scaling.min = 0
        chart.y_axis.scaling.max = 1
        chart.x_axis.title = "round"
        chart.x_axis.delete = False
        chart.y_axis.delete = False
        # Two entries at the bottom: the dashed bounds are said on the axis title.
        chart.legend.position = "b"
        chart.legend.legendEntry = [LegendEntry(idx=index, delete=True) for index in range(2, 6)]
        chart.width, chart.height = CHART_SIZE
        for column, color, dashed in series_columns:
            chart.add_data(Reference(ws, min_col=column, min_row=first, max_row=last))
            series = chart.series[-1]
            series.tx = SeriesLabel(v=headers[column - 1])
            # markers only while they stay apart; hundreds of rounds read as a line
            series.marker.symbol = "circle" if not dashed and stop - start < 40 else "none"
            series.smooth = False
            series.graphicalProperties.line.solidFill = color
            series.graphicalProperties.line.width = 15000 if dashed else 22000
            if dashed:
                series.graphicalProperties.line.dashStyle = "dash"
        chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=last))
        # about eight round names along the axis, however many rounds
        chart.x_axis.tickLblSkip = max(1, math.ceil((stop - start + 1) / 8))
        chart.x_axis.tickMarkSkip = chart.x_axis.tickLblSkip
        charts.append(chart)
    return charts


def _place_charts(ws, charts: Sequence, first_row: int) -> None:
    """Charts two per row below the Summary text, never cut by a page break."""
    from openpyxl.worksheet.pagebreak import Break

    if not charts:
        return
    # A page break before the charts and after every second row of charts: with the
    # Summary fitted to one page wide, two rows of charts fill a landscape page.
    ws.row_breaks.append(Break(id=first_row - 1))
    heading = ws.cell(row=first_row, column=1, value="Charts")
    heading.font = _font(bold=True, size=12)
    columns = ("A", "D")  # see SUMMARY_WIDTHS: two charts side by side fit the page
    # Rows of a fixed height, so the charts' slots are the same in Excel and LibreOffice
    # (whose default row is lower than Excel's 15 pt).
    slots = math.ceil(len(charts) / 2) * CHART_ROWS
    for row in range(first_row + 1, first_row + 1 + slots):
        ws.row_dimensions[row].height = CHART_ROW_HEIGHT
    for index, chart in enumerate(charts):
        chart_row, side = divmod(index, 2)
        row = first_row + 1 + chart_row * CHART_ROWS
        if chart_row and not side and chart_row % 2 == 0:
            ws.row_breaks.append(Break(id=row - 1))
        ws.add_chart(chart, f"{columns[side]}{row}")


def _write_inputs(ws, content: ReportContent) -> None:
    from openpyxl.styles import Alignment

    sheet = _Sheet(ws)
    for offset, text in enumerate(INPUTS_HEADER, start=1):
        sheet.header(1, offset, text)
    for row, (key, value) in enumerate(content.inputs, start=2):
        sheet.put(row, 1, key)
        kind = "text" if isinstance(value, str) else "general"
        # left-aligned so that a number does not run into the JSON column beside it
        sheet.put(row, 2, value, kind).alignment = Alignment(horizontal="left")
        # JSON keeps what a cell cannot: every float digit, line breaks, control
        # characters; session_io prefers it while it agrees with the visible value.
        exact = json.dumps(value, ensure_ascii=False)
        if _ILLEGAL_XML.search(exact):
            exact = json.dumps(value)  # \uXXXX escapes for what XML cannot hold
        sheet.put(row, 3, exact, fit=False)
    sheet.put(
        len(content.inputs) + 3,
        1,
        "PR Planner reads this sheet to restore the session; edit with care.",
        fit=False,
    ).font = _font(italic=True)
    ws.freeze_panes = "A2"
    sheet.fit_columns({3: 40})
    sheet.page_setup(orientation="portrait")


def readable_images(
    images: Mapping[str, bytes] | None, warnings: list[str]
) -> list[tuple[str, bytes, tuple[int, int]]]:
    """``(title, data, (width, height))`` of every image Pillow can decode.

    The others are named in ``warnings`` and left out: a broken snapshot must not cost the
    user the report.
    """
    from PIL import Image, UnidentifiedImageError

    readable = []
    for name, data in (images or {}).items():
        try:
            with Image.open(io.BytesIO(data)) as probe:
                probe.load()
                size = probe.size
        except (UnidentifiedImageError, OSError, ValueError, TypeError) as exc:
            warnings.append(
                f"the plot {name!r} is not a readable image and was left out ({type(exc).__name__})"
            )
            continue
        readable.append((str(name), bytes(data), size))
    return readable


#: Row height on the Plots sheet, fixed so Excel and LibreOffice place pictures alike.
PLOT_ROW_POINTS = 15
PLOT_ROW_PIXELS = 20
#: Printable height / width of a portrait A4 page with the report's 0.5 inch margins.
PORTRAIT_HEIGHT_PER_WIDTH = (29.7 - 2.54) / (21.0 - 2.54)


def _write_plots(ws, images: Sequence[tuple[str, bytes, tuple[int, int]]]) -> None:
    """Snapshots one under another, each with its title, never cut by a page break.

    The sheet prints one page wide, so a page holds ``PORTRAIT_HEIGHT_PER_WIDTH`` times the
    widest picture in height; a picture that would cross the page's end starts a new page.
    """
    from openpyxl.drawing.image import Image as SheetImage
    from openpyxl.worksheet.pagebreak import Break

    sheet = _Sheet(ws)
    sizes = []
    for _name, _data, (width, height) in images:
        scale = min(1.0, 900 / max(width, 1))
        sizes.append((width * scale, height * scale))
    widest = max((width for width, _ in sizes), default=900)
    # 10 % kept free for the print scaling's rounding and the title rows of each page.
    page_rows = int(widest * PORTRAIT_HEIGHT_PER_WIDTH * 0.9 / PLOT_ROW_PIXELS)
    row, used = 1, 0
    for (name, data, _), (width, height) in zip(images, sizes, strict=True):
        picture_rows = math.ceil(height / PLOT_ROW_PIXELS)
        if picture_rows + 1 > page_rows:  # taller than a page: shrink it to fit one
            shrink = (page_rows - 1) / picture_rows
            width, height = width * shrink, height * shrink
            picture_rows = math.ceil(height / PLOT_ROW_PIXELS)
        block = 1 + picture_rows + 2  # title, picture, spacing
        if used and used + block - 2 > page_rows:
            ws.row_breaks.append(Break(id=row - 1))
            used = 0
        sheet.put(row, 1, name, fit=False).font = _font(bold=True, size=12)
        picture = SheetImage(io.BytesIO(data))
        picture.width, picture.height = width, height
        ws.add_image(picture, f"A{row + 1}")
        for filled in range(row, row + block):
            ws.row_dimensions[filled].height = PLOT_ROW_POINTS
        row += block
        used += block
    sheet.page_setup(None, orientation="portrait")


def render_workbook(content: ReportContent, images: Mapping[str, bytes] | None = None):
    """The report as an :class:`openpyxl.Workbook` (not saved).

    Images that cannot be read are left out with a warning added to the Summary.
    """
    from openpyxl import Workbook

    warnings = list(content.warnings)
    pictures = readable_images(images, warnings)
    if len(warnings) != len(content.warnings):
        content = replace(
            content,
            warnings=tuple(warnings),
            summary=content.summary
            + tuple(
                SummaryRow(style="text", label=f"• {text}")
                for text in warnings[len(content.warnings) :]
            ),
        )
    workbook = Workbook()
    summary = workbook.active
    summary.title = SHEET_SUMMARY
    free_row = _write_summary(summary, content)
    _write_intervals(workbook.create_sheet(SHEET_INTERVALS), content)
    plan_sheet = workbook.create_sheet(SHEET_PLAN)
    _write_plan_curves(plan_sheet, content)
    p3_sheet = workbook.create_sheet(SHEET_P3)
    _write_p3(p3_sheet, content)
    rounds_sheet = workbook.create_sheet(SHEET_ROUNDS)
    _write_rounds(rounds_sheet, content)
    _write_inputs(workbook.create_sheet(SHEET_INPUTS), content)
    # The charts read the tables of their sheets and sit on the Summary, which a manager
    # reads (and prints) first.
    charts = [
        *_plan_charts(plan_sheet, content),
        *_p3_charts(p3_sheet, content),
        *_history_charts(rounds_sheet, content),
    ]
    for chart in charts:
        chart.visible_cells_only = False  # their data sit in hidden columns and sheets
    _place_charts(summary, charts, free_row + 1)
    # Data behind the charts and the machine-readable inputs: kept, read back, not shown
    # or printed (Excel's Unhide shows them).
    for hidden in (plan_sheet, p3_sheet, workbook[SHEET_INPUTS]):
        hidden.sheet_state = "hidden"
    if pictures:
        _write_plots(workbook.create_sheet(SHEET_PLOTS), pictures)
    return workbook


def write_report(
    path: str | os.PathLike[str],
    state: SessionState,
    *,
    round_name: str | Round | None = None,
    margin: float | None = None,
    confidence: float | None = None,
    images: Mapping[str, bytes] | None = None,
    sources: Iterable[str | os.PathLike[str]] = (),
    expected: FileFingerprint | None = None,
    purpose: str = "report",
) -> ReportContent:
    """Write the Excel report of ``state`` to ``path`` atomically.

    Parameters
    ----------
    path : str or path-like
        Destination ``.xlsx``; its folder must exist. An existing file is replaced only
        once the new one is completely written.
    state : SessionState
        The session (rounds included).
    round_name, margin, confidence
        See :func:`build_report`.
    images : mapping of str to bytes, optional
        PNG snapshots of the app's plots, by title; they go on a ``Plots`` sheet.
    sources : iterable of path-like
        The files the session came from: the report never replaces one of them.
    expected : FileFingerprint, optional
        The destination as it was read or last saved; refused if it changed since.
    purpose : str
        "report" or "session": names the file a refusal suggests instead.

    Returns
    -------
    ReportContent
        What the report shows (the CLI prints a summary of it).

    Raises
    ------
    InputError
        Bad arguments (see :func:`build_report`), or a destination that is not ``.xlsx``.
    core.workbook.safe_io.SaveError
        The file could not be written, or must not be (one of ``sources``, a file PR
        Planner did not write, read-only, changed since read); the old file is intact.
    """
    destination = Path(path)
    if destination.suffix.lower() != ".xlsx":
        raise InputError(f"{destination}: the report must be an .xlsx file")
    sources = tuple(sources)
    check_destination(destination, sources=sources, expected=expected, purpose=purpose)
    content = build_report(state, round_name=round_name, margin=margin, confidence=confidence)
    workbook = render_workbook(content, images)
    mark_as_ours(workbook)  # its save stamps the mark and closes the file even on failure
    atomic_write(destination, workbook.save, sources=sources, expected=expected, purpose=purpose)
    return content
