"""What the Excel report shows, as plain tables: one function per sheet.

:func:`build_report` computes a :class:`ReportContent` from a session (the evaluation of
the current round, the plan for the next, the plan curves, P3, the rounds and the inputs);
:mod:`core.workbook.report` lays it out with openpyxl and saves it. Nothing here knows
about cells or formats, so the content has one source and is tested as data.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from core import validation
from core.compare import change_verdict
from core.errors import InputError
from core.intervals import NO_FPC
from core.methods import FPC_METHOD_LABELS, INTERVAL_METHODS, RECOMMENDED
from core.session import (
    SCHEMA_VERSION,
    EnsembleInputs,
    PopulationInputs,
    SessionState,
    flatten,
)
from core.workbook.rounds import Round, open_items_in_notes, targets_in_notes

if TYPE_CHECKING:
    from core.compare import Comparison
    from core.confusion import Population
    from core.evaluation import Evaluation
    from core.plan_request import PlanningInputs
    from core.planning import Plan
    from core.round_targets import TargetCheck
    from core.workbook.session_io import FpcRule


# The layout its readers rely on lives in core.workbook.layout (names kept here too).
from core.workbook.layout import (
    SCHEMA_KEY,
    WRITER_KEY,
    most_recent_round,
)

#: Points of the tables behind the plan and P3 charts (enough for smooth lines, few
#: enough to read as a table: the P3 table prints on one page).
PLAN_CURVE_POINTS = 61
P3_POINTS = 49

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
#: Method names in the report: the one table's labels (core.methods), predictions marked.
METHOD_NAMES = {key: method.qualified_label for key, method in INTERVAL_METHODS.items()} | {
    "estimate": "point estimate"
}
#: The interval quoted first for each metric: the one the app marks (core.methods).
HEADLINE_METHODS = {metric: item.method for metric, item in RECOMMENDED.items()}

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
        Curve names (``"standard interval"``, ``"prior strength 5"``, ...).
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
class RoundChange:
    """The evaluated round against the same classifier's previous round (methods §9).

    Attributes
    ----------
    previous : Round
        The previous round (by date, as the History tab pairs them).
    comparison : Comparison
        Change of precision and recall, their intervals and ``p_worse``.
    """

    previous: Round
    comparison: Comparison

    def to_dict(self) -> dict[str, Any]:
        return {"previous_round": round_label(self.previous), **self.comparison.to_dict()}


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
    change : RoundChange or None
        The change since the classifier's previous round, when the evaluated round has one.
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
    change: RoundChange | None = None

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
            "change": None if self.change is None else self.change.to_dict(),
            "warnings": list(self.warnings),
        }


def _finite(value: Any) -> Any:
    """``None`` for NaN/inf (an empty cell, never a silent NaN), else the value."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def round_label(item: Round, where: bool = False) -> str:
    """``TR-06 (Fraud, model v2.3)``: the round, its classifier and model version; with
    ``where``, also its sheet and row (``TR-06 (Fraud; sheet 'Rounds', row 7)``)."""
    name = item.name
    about = [item.classifier] if item.classifier else []
    if item.model_version:
        about.append(f"model {item.model_version}")
    parts = [", ".join(about)] if about else []
    if where:
        parts.append(f"sheet {item.sheet!r}, row {item.row}")
    return f"{name} ({'; '.join(parts)})" if parts else name


def find_round(
    rounds: Sequence[Any],
    name: str,
    warnings: list[str],
    refused: Sequence[Any] = (),
    prefer: Round | None = None,
) -> Round:
    """The round of ``rounds`` named ``name`` (case-insensitive as a fallback), or as
    :func:`round_label` shows it (``"R1 (finance)"``, ``"PR-05 (Promotions, model v2.3)"``):
    rounds of several classifiers drawn together share their name.

    When several share the name, ``prefer`` (a saved session's current round: after labels
    are read, the main classifier's) is returned if among them, else the one
    :func:`~core.workbook.layout.most_recent_round` takes among them, and ``warnings``
    says so.
    ``refused`` are the rows the reader refused (:class:`core.workbook.rounds.Refusal`):
    a name among them is said to be refused, with why, rather than missing.

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
        matches = [
            item
            for item in rounds
            if isinstance(item, Round) and round_label(item).casefold() == wanted.casefold()
        ]
    if not matches:
        for row in refused:
            if (row.round or "").strip().casefold() == wanted.casefold():
                raise InputError(
                    f"round {wanted!r} (sheet {row.sheet!r}, row {row.row}) could not be "
                    f"read: {row.reason}; correct it in the workbook"
                )
        names = [item.round for item in rounds if isinstance(item, Round) and item.round]
        if not names:
            raise InputError(f"there is no round named {wanted!r}: the session has no named rounds")
        more = f" and {len(names) - 12:,} more" if len(names) > 12 else ""
        shown = ", ".join(names[:12]) + more
        raise InputError(f"there is no round named {wanted!r}; the rounds are {shown}")
    preferred = prefer is not None and any(item is prefer or item == prefer for item in matches)
    if preferred and prefer is not None:
        chosen = prefer
    else:
        # Chosen as the latest round is without a name (by date, then the main classifier:
        # the one with most rounds, first on its date), so that `compare` and `compare
        # --round W3` compare the same classifier's W3 (trial 19: spam, then promo).
        latest = most_recent_round(rounds, among=matches)
        assert latest is not None
        chosen = latest
    if len(matches) > 1:
        labels = list(dict.fromkeys(round_label(item) for item in matches))
        pick = (
            f"; to pick another, give the name as shown: {', '.join(map(repr, labels))}"
            if len(labels) > 1
            else ""
        )
        one_day = len({item.date for item in matches}) == 1
        whose = "the main classifier's" if one_day else "the latest"
        which = (
            f"{round_label(chosen)}, the session's current round,"
            if preferred
            else f"{whose}, {round_label(chosen)},"
            if len(labels) > 1
            else f"the latest (sheet {chosen.sheet!r}, row {chosen.row})"
        )
        warnings.append(f"{len(matches)} rounds are named {wanted!r}; {which} is reported{pick}")
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
        from core.workbook.session_io import fpc_of_round

        # As History and the Rounds sheet correct it (review 15: a round not current
        # took the box of the round shown, and the report gave it two intervals).
        known = item.population_pos is not None and item.population_neg is not None
        return item.matrix, item.population, fpc_of_round(state, item) and known
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
            _method_name(method, evaluation),
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

    if inputs is None:
        return None
    try:
        model = inputs.width_curve_model(state.confidence, "your prior + data")
        grid = np.geomspace(model.grid[0], model.grid[-1], PLAN_CURVE_POINTS)
        curves = model.over_s(state.plan.v, grid)
    except InputError as exc:
        warnings.append(f"no plan curves: {exc}")
        return None
    # The app's name for the paper's closed-form curve; the others name their priors.
    labels = tuple("standard interval" if name == "frequentist" else name for name in curves.labels)
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
            if key == "precision" and curve.band is not None:
                # The calibrated precision is far less sure than precision itself: its
                # band there, beside it (audit 13).
                lower, upper = curve.band.bounds_at(reference)
                for end, bound in (("lower", lower), ("upper", upper)):
                    info.append(
                        (
                            f"precision at prevalence {reference:g}, band's {end} end",
                            _finite(float(bound)),
                            "percent",
                        )
                    )
    return table, tuple(info)


def _num(value) -> float | None:
    return None if value is None else _finite(float(value))


def rounds_table(rounds: Sequence[Any], confidence: float, fpc: FpcRule = False) -> Table:
    """The Rounds sheet: each round as read, plus precision/recall with intervals,
    finite-population corrected for the rounds ``fpc`` names (a rule such as
    :func:`core.workbook.session_io.fpc_of_round`, or ``True`` for all) whose population
    counts are known, as History shows them."""
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
        from core.workbook.session_io import corrected_by

        corrected = [corrected_by(fpc, item) for item in items]
        computed = _round_intervals(items, confidence, corrected)
        rows = tuple(
            _round_row(item, confidence, computed.get(position), corrected[position])
            for position, item in enumerate(items)
        )
    return Table(columns=columns, rows=rows)


def _round_intervals(
    items: Sequence[Round], confidence: float, fpc: Sequence[bool]
) -> dict[int, tuple]:
    """``{position: (Wilson, Katz, recall)}`` of every round with both strata and a usable
    ``k``, from one vectorized call (:mod:`core.batch_intervals`); any other round keeps
    the per-round path of :func:`_round_row`, which writes why into its note. Each round
    whose ``fpc`` is true gets its own correction factors (none where its population is
    unknown)."""
    import numpy as np

    from core import batch_intervals

    usable = []
    for position, item in enumerate(items):
        try:
            cells = item.matrix.require_both_strata().as_tuple()
            k = validation.positive("k", item.k)
        except (InputError, ArithmeticError, ValueError):
            continue
        usable.append((position, cells, k, item.variance_factors(fpc[position])))
    if not usable:
        return {}
    tp, fp, fn, tn = np.array([cells for _, cells, _, _ in usable], dtype=float).T
    ks = np.array([k for _, _, k, _ in usable])
    factors = tuple(np.array([f for *_, f in usable], dtype=float).T)
    wilson = batch_intervals.wilson_precision(tp, fp, confidence, factors)
    katz = batch_intervals.katz_log_recall(tp, fp, fn, tn, ks, confidence, factors)
    recall = batch_intervals.recall_point(tp, fp, fn, tn, ks)
    return {
        position: (wilson.interval(row), katz.interval(row), float(recall[row]))
        for row, (position, *_) in enumerate(usable)
    }


def _chance(plan: Plan, which: str) -> str:
    """The plan's chance of meeting the ``precision``, ``recall`` or ``both`` margins."""
    if plan.assurance is None:  # make_plan always computes it; a bare Plan may not
        return "not computed"
    return _chance_text(getattr(plan.assurance, which))


def _round_row(
    item: Round, confidence: float, computed: tuple | None = None, fpc: bool = False
) -> tuple[Any, ...]:
    from core.intervals import katz_log_recall, recall_point, wilson_precision

    precision = lower_p = upper_p = recall = lower_r = upper_r = f1 = None
    note = ""
    try:
        matrix = item.matrix
        if computed is None:  # a round the vectorized pass could not take: say why
            factors = item.variance_factors(fpc)
            computed = (
                wilson_precision(matrix, confidence, factors),
                katz_log_recall(matrix, item.k, confidence, factors),
                recall_point(matrix, item.k),
            )
        interval, katz, recall_value = computed
        precision, lower_p, upper_p = matrix.pi1_hat, interval.lower, interval.upper
        recall = _finite(recall_value)
        lower_r, upper_r, note = _finite(katz.lower), _finite(katz.upper), katz.note
        if item.variance_factors(fpc) != NO_FPC:
            note = "; ".join(filter(None, (note, "intervals finite-population corrected")))
        if recall is not None and precision + recall > 0:
            f1 = 2 * precision * recall / (precision + recall)
    except InputError as exc:
        note = str(exc)
    except (ArithmeticError, ValueError) as exc:
        note = f"interval not computable for these numbers ({type(exc).__name__})"
    return (
        item.name,
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


def _method_name(method: str, evaluation: Evaluation) -> str:
    """An interval's name in the report: with the finite population correction the exact
    and Jeffreys intervals of precision are named for what they become."""
    if evaluation.fpc is not None and method in FPC_METHOD_LABELS:
        return FPC_METHOD_LABELS[method]
    return METHOD_NAMES.get(method, method)


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


def _shown(value, kind: str) -> str:
    """A value as its cell's number format shows it (``kind`` as in the layout)."""
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
        if kind == "points":
            return f"{value:+.1f} points"
        return str(value)
    except (ValueError, OverflowError):
        return str(value)


def _rate(value: float | None) -> str:
    """A rate that can be tiny (FPR, prevalence) as text, like the ``"rate"`` format."""
    return "-" if value is None else _shown(value, "rate")


#: Metrics whose values can be far below 1 % (shown with the ``"rate"`` format).
SMALL_RATE_METRICS = ("fpr", "prevalence")


def _comparable(item: Round) -> bool:
    return item.matrix.n_pos > 0 and item.matrix.n_neg > 0 and item.k > 0


def change_section(
    state: SessionState,
    item: Round | None,
    *,
    replicates: int | None = None,
    seed: int | None = None,
    fpc: bool | None = None,
    evaluation: Evaluation | None = None,
) -> RoundChange | None:
    """The evaluated round (or the counts typed on the Evaluate tab) against the round
    before it; ``None`` when there is none.

    The pair is the Evaluate tab's (:func:`core.workbook.session_io.compared_round`) when
    the report is about what that tab shows: its current round, or with ``item=None`` the
    counts typed there (their ``k`` and correction from ``evaluation``). Any other round is
    paired as the History tab pairs them (:func:`core.compare.consecutive_pairs`).

    ``replicates`` and ``seed`` of the posterior draws default to
    :data:`core.compare.DEFAULT_REPLICATES` and the session's Evaluate seed, as the
    Evaluate tab compares: a report says what the screen said, twice the same.

    ``fpc``: apply each round's finite population correction to the precision change,
    for rounds that know their population counts (default: the reported round as the
    Evaluate tab's box says, the round before as its own design does,
    :func:`core.workbook.session_io.fpc_of_round`, as History compares them).
    """
    from core.compare import DEFAULT_REPLICATES, compare
    from core.workbook.session_io import compared_round, fpc_of_round, round_key

    replicates = DEFAULT_REPLICATES if replicates is None else replicates
    seed = state.evaluate.seed if seed is None else seed
    corrected = state.evaluate.fpc if fpc is None else fpc

    if item is None:
        # The counts typed on the Evaluate tab, against the round the tab compares with.
        if evaluation is None or evaluation.design != "stratified":
            return None
        matrix, k = evaluation.matrix, evaluation.k
        _matrix, population, _fpc = _evaluate_population(state, None)
        current_population = population if corrected and evaluation.fpc is not None else None
        previous = compared_round(state)
    else:
        if not _comparable(item):
            return None
        matrix, k = item.matrix, item.k
        current_population = item.corrected_population(
            fpc_of_round(state, item) if fpc is None else fpc
        )
        shown = round_key(item) == state.current_round and state.evaluate.matrix == item.matrix
        # The Evaluate tab's pair only when the tab shows this round (not counts typed
        # over it): otherwise the round is paired as the History tab pairs it.
        previous = compared_round(state) if shown else None
        if previous is None or previous is item:
            previous = _history_previous(state.rounds, item)
    if previous is None or not _comparable(previous):
        return None
    comparison = compare(
        previous.matrix,
        matrix,
        k_previous=previous.k,
        k_current=k,
        confidence=state.confidence,
        replicates=replicates,
        seed=seed,
        corrected=(
            previous.corrected_population(
                fpc_of_round(state, previous) if fpc is None else corrected
            ),
            current_population,
        ),
    )
    return RoundChange(previous=previous, comparison=comparison)


def _history_previous(rounds, item: Round) -> Round | None:
    """``item``'s previous round as the History tab pairs them."""
    from core.compare import consecutive_pairs, placed_dates
    from core.workbook.rounds import classifier_key

    index = next((i for i, past in enumerate(rounds) if past is item), None)
    if index is None:
        index = next((i for i in reversed(range(len(rounds))) if rounds[i] == item), None)
    if index is None:
        return None
    # Placed among all the rounds, as "the round before" is elsewhere (review 18).
    placed = placed_dates((classifier_key(past.classifier), past.date) for past in rounds)
    pairs = consecutive_pairs(
        (i, classifier_key(past.classifier), placed[i])
        for i, past in enumerate(rounds)
        if _comparable(past)
    )
    before = next((previous for previous, current in pairs if current == index), None)
    return None if before is None else rounds[before]


def targets_section(
    state: SessionState, item: Round | None, judge_defaults: bool = True
) -> TargetCheck | None:
    """The reported round against its target margins, by the intervals quoted (with the
    correction when the Evaluate tab uses it): those its notes record (the targets it was
    drawn for), else the Plan's unless ``judge_defaults`` is false; None for counts typed
    on the Evaluate tab."""
    from core.round_targets import check_targets

    if item is None or not _comparable(item):
        return None
    known = item.population_pos is not None and item.population_neg is not None
    recorded = targets_in_notes(item.notes)  # the targets the round was drawn for
    if recorded is not None:
        state = recorded.applied_to(state)
    elif not judge_defaults:
        return None
    # met or missed only: no top-up is shown, so none is planned (that costs seconds)
    return check_targets(state, item, fpc=state.evaluate.fpc and known, plan_top_up=False)


def open_items_caveat(check: TargetCheck, item: Round | None) -> str:
    """``Careful: the 84 skipped or unlabeled items could move recall ...`` when a round's
    notes record its open items by stratum and they could move an estimate further than
    its target margin; "" otherwise."""
    from core.round_targets import open_items_swings, swings_in_words

    found = None if item is None else open_items_in_notes(item.notes)
    if found is None or item is None:
        return ""
    swings = open_items_swings(item.matrix, found, item.k, check.target_margins)
    if not swings:
        return ""
    subject = f"the {sum(found):,} skipped or unlabeled items"
    moves = "; ".join(swings_in_words(swings, lambda value: f"{value:.1%}", subject))
    return (
        f" Careful: {moves}. If the editors skipped the hard cases, the estimate leans; "
        "have the skipped items labeled before relying on it."
    )


def _targets_row(check: TargetCheck, item: Round | None = None) -> SummaryRow:
    """ "Were the target margins met?" in one row of the Results."""
    verdicts = {True: "met", False: "missed"}
    if check.met:
        value = "both met"
    elif not (check.precision.met or check.recall.met):
        value = "both missed"
    else:
        value = "; ".join(
            f"{margin.metric} {verdicts[margin.met]}" for margin in (check.precision, check.recall)
        )
    from core.round_targets import margin_and_target

    parts = []
    for margin in (check.precision, check.recall):
        # Decimals enough to tell a missed margin from its target ("± 7.00% against a
        # target of ± 7.00%", missed, read as a contradiction; trial 17).
        known, target = margin_and_target(margin.half_width, margin.target, "{:.2%}".format)
        parts.append(f"{margin.metric} is known to ± {known} against a target of ± {target}")
    parts[0] = parts[0][0].upper() + parts[0][1:]
    return SummaryRow(
        label="Met the target margins?",
        value=value,
        note=f"{'; '.join(parts)} (± is half the width of the interval quoted above)."
        + ("" if check.met else " The plan below is for the next round.")
        + open_items_caveat(check, item),
    )


def _chance_text(value: float | None) -> str:
    """A chance to one decimal, never rounded to certainty (``over 99.9%``)."""
    if value is None:
        return "-"
    if value >= 0.9995:  # every draw, or a sum that rounds up: still not a certainty
        return "over 99.9%"
    if value < 0.0005:
        return "under 0.1%"
    return f"{value:.1%}"


def _points(value: float | None) -> str:
    """A change of a rate in percentage points, signed: ``+2.1 points``."""
    return "-" if value is None else f"{100 * value:+.1f} points".replace("-", "\u2212")


def change_rows(change: RoundChange, level: str) -> list[SummaryRow]:
    """The Summary's "Change since the previous round" section, in words."""
    comparison = change.comparison
    name = round_label(change.previous)
    rows = [SummaryRow(style="heading", label=f"Change since the previous round, {name}")]
    for metric, moved in (
        ("precision", comparison.precision_change),
        ("recall", comparison.recall_change),
    ):
        data = moved.to_dict()
        lower, upper = data["interval"]
        estimate, worse = data["estimate"], data["p_worse"]
        if estimate is None or lower is None or upper is None:
            note = f"The change of {metric} is undefined for these counts (see the warnings)."
        else:
            verdict = change_verdict(lower, upper, worse)
            note = (
                f"{metric.capitalize()} went from {_pct(moved.previous)} to "
                f"{_pct(moved.current)}, {_points(estimate)}; with {level} confidence the "
                f"change is between {_points(lower)} and {_points(upper)}, {verdict}. "
                f"Chance that {metric} got worse: {_chance_text(worse)}."
            )
        rows.append(
            SummaryRow(
                label=f"{METRIC_NAMES[metric]} change",
                value=None if estimate is None else 100 * estimate,
                lower=None if lower is None else 100 * lower,
                upper=None if upper is None else 100 * upper,
                kind="points",
                note=note,
            )
        )
    rows.append(
        SummaryRow(
            style="text",
            label="Each round is its own random sample, so part of any change is chance; "
            "the interval of the change counts both rounds' uncertainty (Newcombe's interval "
            "for precision, the two rounds' posteriors for recall).",
        )
    )
    rows += [SummaryRow(style="text", label=f"• {text}") for text in comparison.warnings]
    return rows


def summary_rows(
    state: SessionState,
    subject: str,
    item: Round | None,
    evaluation: Evaluation | None,
    inputs: PlanningInputs | None,
    plan: Plan | None,
    chosen: Plan | None,
    warnings: Sequence[str],
    change: RoundChange | None = None,
    targets: TargetCheck | None = None,
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
            rows.append(SummaryRow(label="Round date", value=item.date, kind="date"))
        if item.notes:
            from core.workbook.rounds import notes_in_words

            rows.append(SummaryRow(label="Notes", value=notes_in_words(item.notes)))
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
                label="Labeled flagged items",
                value=matrix.n_pos,
                kind="count",
                note=f"Predicted positive: TP = {matrix.tp:,} truly positive, "
                f"FP = {matrix.fp:,} not.",
            ),
            SummaryRow(
                label="Labeled unflagged items",
                value=matrix.n_neg,
                kind="count",
                note=f"Predicted negative: FN = {matrix.fn:,} truly positive (missed), "
                f"TN = {matrix.tn:,} truly negative.",
            ),
        ]
        population: Population | PopulationInputs | None = None
        if item is not None:
            population = item.population
        elif state.evaluate.population.mode == "counts":
            population = state.evaluate.population
        pos = getattr(population, "predicted_positive", None)
        neg = getattr(population, "predicted_negative", None)
        if pos is not None and neg is not None:
            rows.append(
                SummaryRow(
                    label="Flagged items in the population",
                    value=pos,
                    kind="count",
                    note="Items the classifier predicts positive (N1).",
                )
            )
            rows.append(
                SummaryRow(
                    label="Unflagged items in the population",
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
            method = evaluation.recommended().get(name, HEADLINE_METHODS[name])
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
                    f"({_method_name(method, evaluation)} interval). {METRIC_MEANINGS[name]}"
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
        if targets is not None:
            rows.append(_targets_row(targets, item))

        if change is not None:
            rows += change_rows(change, level)

        rows.append(SummaryRow(style="heading", label="Intervals by method"))
        quoted = evaluation.recommended()
        for metric_name, method, estimate, lower, upper, note in evaluation.to_rows():
            if metric_name not in ("precision", "recall"):
                continue
            star = " ★ quote this" if quoted.get(metric_name) == method else ""
            rows.append(
                SummaryRow(
                    label=f"{METRIC_NAMES[metric_name]}: {_method_name(method, evaluation)}{star}",
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
                label="★ quote this: the interval to report (the Results above); its confidence "
                "level holds best for this kind of sample. F1 and the false positive rate by "
                "every method are on the Intervals sheet.",
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
                "paper": "the published planning rule (Shang et al. 2023)",
                "optimal": "the smallest design meeting both targets",
            }.get(plan.method, plan.method)
            rows += [
                SummaryRow(
                    label="Recommended over-sampling ratio s",
                    value=plan.s,
                    kind="number",
                    note=f"Chosen by {how}; the ratio that makes the "
                    f"recall interval narrowest is {plan.s_star:.3g}.",
                ),
                SummaryRow(
                    label="Flagged items to label",
                    value=plan.n_pos,
                    kind="count",
                    note="Items to draw at random from what the classifier flags.",
                ),
                SummaryRow(
                    label="Unflagged items to label",
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
                    f"round meets it: {_chance(plan, 'precision')}.",
                ),
                SummaryRow(
                    label="Expected recall margin",
                    value=plan.margin_recall,
                    kind="percent",
                    note=f"Target ± {_pct(plan.target_margin_recall)}; chance the labeled "
                    f"round meets it: {_chance(plan, 'recall')}.",
                ),
                SummaryRow(
                    label="Chance both margins are met",
                    value=None if plan.assurance is None else plan.assurance.both,
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
            whose = "The design on the Plan tab"
            if (
                item is not None
                and chosen.total == item.matrix.total
                and item.s in (None, chosen.s)
            ):
                whose = f"The design of {item.round or 'this round'} again"
            rows.append(
                SummaryRow(
                    label=f"{whose} (s = {chosen.s:.3g}, {chosen.total:,} labels)",
                    value=f"± {_pct(chosen.margin_precision)} precision, "
                    f"± {_pct(chosen.margin_recall)} recall",
                    note=f"{chosen.n_pos:,} predicted positives and {chosen.n_neg:,} predicted "
                    "negatives; the margins it is expected to give (chance both are met: "
                    f"{_chance(chosen, 'both')}).",
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
            "row. The charts' data (Plan curves, P3, History data) and the settings (Inputs) "
            "are on hidden sheets (right-click a sheet tab: Show Sheet in LibreOffice, Unhide "
            "in Excel); open this file in PR Planner to continue the session.",
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


#: How many of the rows not loaded the report's warning names.
NOT_LOADED_SHOWN = 5


def not_loaded_warning(lines: Sequence[str], what: str = "report") -> str:
    """One warning for the rows and sheets of the workbook that were not loaded, left out
    of the ``what`` ("report", "comparison")."""
    shown = [line.removesuffix("; not loaded") for line in lines[:NOT_LOADED_SHOWN]]
    more = len(lines) - len(shown)
    rows = sum(line.endswith("; not loaded") for line in lines)
    from core.session import MAX_LIST_LENGTH

    # A session keeps at most MAX_LIST_LENGTH of them: more may have been refused.
    at_least = "at least " if len(lines) >= MAX_LIST_LENGTH else ""
    parts = [
        f"{at_least}{count:,} {word}{'s' if count != 1 else ''}"
        for count, word in ((rows, "row"), (len(lines) - rows, "sheet"))
        if count
    ]
    return (
        f"{' and '.join(parts)} of the workbook could not be read and "
        f"{'are' if len(lines) != 1 else 'is'} left out of this {what} ("
        + "; ".join(shown)
        + (f"; and {more:,} more" if more > 0 else "")
        + ")"
        + (
            ". If one of them is a newer round, the round reported here is not the latest: "
            "correct the rows in the workbook and report again."
            if what == "report"
            else ". If one of them is a newer round, the round compared here is not the "
            "latest: correct the rows in the workbook and compare again."
        )
    )


#: Most rounds a report lists (its Rounds sheet and history charts).
MAX_REPORT_ROUNDS = 50_000


def build_report(
    state: SessionState,
    *,
    round_name: str | Round | None = None,
    margin: float | None = None,
    confidence: float | None = None,
    judge_targets: bool = True,
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
    judge_targets : bool
        Say whether the round met the Plan's target margins. False for a plain rounds
        workbook reported without ``margin``: its targets would be defaults nobody set. A
        round whose notes record the targets it was drawn for (``labels --append-to``, the
        app) is judged by those either way.

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
    if len(state.rounds) > MAX_REPORT_ROUNDS:
        # Every round is a row with its intervals and a point of a chart: a million rows
        # took gigabytes before a manager could open anything.
        raise InputError(
            f"the session holds {len(state.rounds):,} rounds; a report lists at most "
            f"{MAX_REPORT_ROUNDS:,} (one row and chart point each). Keep the rounds to report "
            "in a workbook of their own (the recent ones, or one classifier's) and report that"
        )
    state = _apply_overrides(state, margin, confidence)
    warnings: list[str] = []
    # The rows of the lead's workbook left out (read_session keeps them with the state).
    if state.rows_not_loaded:
        warnings.append(not_loaded_warning(state.rows_not_loaded))
    if isinstance(round_name, Round):
        item = round_name
    elif round_name is not None:
        from core.workbook.session_io import find_round_key

        item = find_round(
            state.rounds,
            round_name,
            warnings,
            prefer=find_round_key(state.rounds, state.current_round),
        )
    else:
        item = None
    subject = (
        f"round {round_label(item)}"
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
    name = round_label(item) if item is not None else "Evaluate tab"
    p3, p3_info = _guarded(
        warnings, "the P3 curve", p3_section, state, evaluation, name, warnings, default=(None, ())
    )
    from core.workbook.session_io import fpc_of_round

    rounds = rounds_table(state.rounds, state.confidence, functools.partial(fpc_of_round, state))
    change = _guarded(
        warnings,
        "the change since the previous round",
        functools.partial(change_section, evaluation=evaluation),
        state,
        item,
    )
    targets = _guarded(
        warnings, "the check against the targets", targets_section, state, item, judge_targets
    )
    warnings = list(dict.fromkeys(warnings))  # the same caution once
    return ReportContent(
        state=state,
        subject=subject,
        evaluated_round=item,
        evaluation=evaluation,
        plan=plan,
        chosen_design=chosen,
        summary=summary_rows(
            state, subject, item, evaluation, planning, plan, chosen, warnings, change, targets
        ),
        intervals=intervals_table(evaluation),
        plan_curves=curves,
        p3=p3,
        p3_info=p3_info,
        rounds=rounds,
        inputs=inputs_rows(state),
        warnings=tuple(warnings),
        change=change,
    )
