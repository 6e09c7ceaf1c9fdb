"""The app's document: every input of a session as one immutable value.

The desktop keeps exactly one :class:`SessionState`; an edit replaces one field addressed
by a dotted path (``"plan.s"``, ``"evaluate.matrix.tp"``) through :func:`replace_path`,
which is what makes undo/redo, autosave and "save, reopen, compare the whole state"
simple. The Excel inputs sheet stores :func:`flatten` of the state (one ``key, value`` row
per leaf) and :func:`unflatten` rebuilds it, validating every value on the way in.

Nothing here imports Qt.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from dataclasses import dataclass, field
from typing import Any

from core import validation
from core.bayes import Prior
from core.confusion import ConfusionMatrix
from core.errors import InputError

#: How the population is given; "random" (evaluation only) is a plain random sample.
PopulationMode = typing.Literal["counts", "k", "random"]
BeliefSource = typing.Literal["expected", "previous"]
PriorPreset = typing.Literal["none", "jeffreys", "uniform", "expected", "round", "custom"]
PlanMethod = typing.Literal["paper", "optimal"]
MixOption = typing.Literal["shuffle", "sample"]

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class PopulationInputs:
    """How the population is given: both counts (``N1``, ``N0``) or only ``k = N1/N0``.

    ``mode = "random"`` (evaluation only) means a plain random sample: ``k`` is estimated
    as ``n1/n0`` from the labels.
    """

    mode: PopulationMode = "counts"
    predicted_positive: int = 41_200
    predicted_negative: int = 1_251_000
    k: float = 41_200 / 1_251_000

    def __post_init__(self) -> None:
        if self.mode not in typing.get_args(PopulationMode):
            raise InputError(f"population mode must be counts, k or random, got {self.mode!r}")
        for name in ("predicted_positive", "predicted_negative"):
            value = validation.count(name.replace("_", " ") + " population", getattr(self, name))
            if value == 0:
                raise InputError(f"{name.replace('_', ' ')} population must be > 0, got 0")
            object.__setattr__(self, name, value)
        object.__setattr__(self, "k", validation.imbalance("k", self.k))

    @property
    def effective_k(self) -> float | None:
        """The ``k`` to compute with (None for a random sample: it comes from the labels)."""
        if self.mode == "counts":
            return self.predicted_positive / self.predicted_negative
        if self.mode == "k":
            return self.k
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanInputs:
    """Inputs of the Plan tab (workflow 1)."""

    population: PopulationInputs = field(default_factory=PopulationInputs)
    belief: BeliefSource = "expected"
    expected_precision: float = 0.90
    expected_recall: float = 0.80
    previous: ConfusionMatrix = field(
        default_factory=lambda: ConfusionMatrix(tp=231, fp=29, fn=16, tn=724)
    )
    prior: Prior = field(default_factory=Prior.jeffreys)
    prior_preset: PriorPreset = "jeffreys"
    prior_strength: float = 10.0
    margin_precision: float = 0.05
    margin_recall: float = 0.05
    cost_pos: float = 1.0
    cost_neg: float = 1.0
    method: PlanMethod = "paper"
    bayesian: bool = False
    fpc: bool = False
    s: float = 2.0
    v: int = 1000
    #: Chance of meeting both margins the assured plan must reach; 0 means off.
    assurance_target: float = 0.0

    def __post_init__(self) -> None:
        if self.belief not in typing.get_args(BeliefSource):
            raise InputError(f"belief must be expected or previous, got {self.belief!r}")
        if self.prior_preset not in typing.get_args(PriorPreset):
            raise InputError(f"unknown prior preset {self.prior_preset!r}")
        if self.method not in typing.get_args(PlanMethod):
            raise InputError(f"method must be paper or optimal, got {self.method!r}")
        validation.open_unit("expected precision", self.expected_precision)
        validation.open_unit("expected recall", self.expected_recall)
        validation.positive("prior strength", self.prior_strength)
        validation.margin("precision margin", self.margin_precision)
        validation.margin("recall margin", self.margin_recall)
        validation.positive("cost per predicted-positive label", self.cost_pos)
        validation.positive("cost per predicted-negative label", self.cost_neg)
        validation.positive("s", self.s)
        object.__setattr__(self, "v", validation.whole_at_least("v", self.v, 2))
        if self.assurance_target != 0:
            validation.open_unit("chance of meeting both margins", self.assurance_target)


#: The seeds the app starts with; the command line uses the same by default, so a
#: bootstrap or Monte Carlo number is the same on screen, in a report and in a terminal.
EVALUATE_SEED = 2023
ENSEMBLE_SEED = 7
#: The most simulated trials of the Ensemble tab (as :data:`core.ensemble.MAX_TRIALS`).
MAX_ENSEMBLE_TRIALS = 10_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class EvaluateInputs:
    """Inputs of the Evaluate tab (workflow 2)."""

    population: PopulationInputs = field(default_factory=PopulationInputs)
    matrix: ConfusionMatrix = field(
        default_factory=lambda: ConfusionMatrix(tp=225, fp=31, fn=14, tn=730)
    )
    replicates: int = 10_000
    seed: int = EVALUATE_SEED
    fpc: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "replicates",
            validation.whole_at_least(
                "replicates", self.replicates, 100, validation.MAX_REPLICATES
            ),
        )
        object.__setattr__(self, "seed", validation.seed(self.seed))


@dataclass(frozen=True, slots=True, kw_only=True)
class PrevalenceInputs:
    """Inputs of the Prevalence tab (workflow 3)."""

    reference_prevalence: float = 0.02
    eta_min: float = 1e-5
    eta_max: float = 0.5
    compared_rounds: tuple[str, ...] = ()
    scored_sample_path: str = ""

    def __post_init__(self) -> None:
        validation.open_unit("reference prevalence", self.reference_prevalence)
        low = validation.open_unit("lowest prevalence", self.eta_min)
        high = validation.open_unit("highest prevalence", self.eta_max)
        if low >= high:
            raise InputError(
                f"the lowest prevalence, {100 * low:.3g} %, must be below the highest, "
                f"{100 * high:.3g} %"
            )
        object.__setattr__(self, "compared_rounds", tuple(str(n) for n in self.compared_rounds))


def _refuse_unstorable_name(what: str, name: object) -> None:
    """A name the session file, the status bar and a workbook can hold: no control
    character, lone surrogate or U+FFFE/U+FFFF (U+FFFE garbled every later status message,
    a lone surrogate turned crash recovery off; fuzz 14)."""
    if isinstance(name, str) and (
        validation.CONTROL_CHARACTER.search(name) or validation.NOT_TEXT.search(name)
    ):
        raise InputError(
            f"the {what}'s name {name!r} holds a character no file can store (a control "
            "character or an invalid one); type it again without it"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class EnsembleChild:
    """One child classifier: its predicted-positive set size and overlap with the parent."""

    name: str
    size: int
    overlap: int

    def __post_init__(self) -> None:
        _refuse_unstorable_name("child classifier", self.name)
        size = validation.count(f"{self.name}: size", self.size)
        overlap = validation.count(f"{self.name}: overlap", self.overlap)
        if overlap > size:
            raise InputError(f"{self.name}: overlap {overlap:,} is larger than its set ({size:,})")
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "overlap", overlap)


def is_example_ensemble(ensemble: EnsembleInputs) -> bool:
    """The bundled example's Ensemble inputs, as this version has them or as sessions
    saved before 2026-11-27 do (travel, finance and shopping; review 20)."""
    earlier = EnsembleInputs(
        children=(
            EnsembleChild(name="travel", size=41_200, overlap=36_000),
            EnsembleChild(name="finance", size=52_000, overlap=47_500),
            EnsembleChild(name="shopping", size=30_500, overlap=21_000),
        )
    )
    return ensemble in (EnsembleInputs(), earlier)


@dataclass(frozen=True, slots=True, kw_only=True)
class EnsembleInputs:
    """Inputs of the Ensemble tab (workflow 4)."""

    parent_name: str = "ensemble"
    parent_size: int = 120_000
    # Classifiers of one category, as label reuse needs: one editor's label ("belongs to
    # travel") answers for each. The example had finance and shopping beside travel, the
    # reuse the guide rules out (trial 20).
    children: tuple[EnsembleChild, ...] = (
        EnsembleChild(name="travel", size=41_200, overlap=36_000),
        EnsembleChild(name="travel v2", size=52_000, overlap=47_500),
        EnsembleChild(name="travel rules", size=30_500, overlap=21_000),
    )
    margin: float = 0.03
    precision_floor: float = 0.5
    mix: MixOption = "shuffle"
    trials: int = 200
    seed: int = ENSEMBLE_SEED

    def __post_init__(self) -> None:
        _refuse_unstorable_name("parent classifier", self.parent_name)
        object.__setattr__(
            self, "parent_size", validation.whole_at_least("parent size", self.parent_size, 1)
        )
        for child in self.children:
            if child.overlap > self.parent_size:
                raise InputError(
                    f"{child.name}: overlap {child.overlap:,} is larger than the parent's set "
                    f"({self.parent_size:,})"
                )
        validation.margin("margin", self.margin)
        floor = validation.open_unit("precision floor", self.precision_floor)
        if floor < 0.5:
            raise InputError(f"the precision floor must be >= 0.5, got {floor:g}")
        if self.mix not in typing.get_args(MixOption):
            raise InputError(f"mix must be shuffle or sample, got {self.mix!r}")
        object.__setattr__(
            self,
            "trials",
            validation.whole_at_least("trials", self.trials, 10, MAX_ENSEMBLE_TRIALS),
        )
        object.__setattr__(self, "seed", validation.seed(self.seed))


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionState:
    """Everything a user entered in one session (the document that Save writes).

    ``rounds`` are the past rounds shown in the Rounds panel (read from a workbook or kept
    from the last save); ``previous_round`` names the one chosen as the previous round.
    ``current_round`` is the round the Evaluate tab was filled from, as ``SHEET!ROW``
    (``""``: counts typed by hand); ``columns`` are the user's choices of what the
    workbook's columns hold (``ROLE=HEADER`` texts of
    :class:`core.workbook.rounds.ColumnChoice`), used whenever the workbook is read again.
    ``awaiting_labels`` are the labeling workbooks drawn in the app whose labels have not
    been read back yet (their paths): the rounds out with the editors. ``rows_not_loaded``
    are the rows and sheets of the lead's rounds workbook that could not be used
    (``"sheet 'travel', row 12: ...; not loaded"``): kept with the session so that its
    report still says they are left out after Save and reopen. ``rounds_workbook`` is the
    lead's own rounds workbook the session began from (its path; ``""``: none), so that
    after Save and reopen a round read from labels can still be added to it.
    """

    confidence: float = 0.95
    plan: PlanInputs = field(default_factory=PlanInputs)
    evaluate: EvaluateInputs = field(default_factory=EvaluateInputs)
    prevalence: PrevalenceInputs = field(default_factory=PrevalenceInputs)
    ensemble: EnsembleInputs = field(default_factory=EnsembleInputs)
    rounds: tuple[Any, ...] = ()
    previous_round: str = ""
    current_round: str = ""
    columns: tuple[str, ...] = ()
    awaiting_labels: tuple[str, ...] = ()
    rows_not_loaded: tuple[str, ...] = ()
    rounds_workbook: str = ""

    def __post_init__(self) -> None:
        validation.confidence(self.confidence)
        object.__setattr__(self, "rounds", tuple(self.rounds))
        object.__setattr__(self, "columns", tuple(str(text) for text in self.columns))
        object.__setattr__(
            self, "awaiting_labels", tuple(str(text) for text in self.awaiting_labels)
        )
        object.__setattr__(
            self, "rows_not_loaded", tuple(str(text) for text in self.rows_not_loaded)
        )


# --- dotted-path access ---------------------------------------------------------------


def get_path(state: Any, path: str) -> Any:
    """The value at ``"plan.population.k"``-style ``path``."""
    value = state
    for part in path.split("."):
        value = getattr(value, part)
    return value


def replace_path(state: Any, path: str, value: Any) -> Any:
    """A copy of ``state`` with the leaf at ``path`` replaced; every level re-validates.

    Raises :class:`InputError` (from the dataclass checks) when the new value is refused,
    so an edit either yields a valid state or changes nothing.
    """
    head, _, rest = path.partition(".")
    names = (
        {f.name for f in dataclasses.fields(state)}
        if dataclasses.is_dataclass(state) and not isinstance(state, type)
        else set()
    )
    if head not in names:
        raise InputError(f"unknown session field {path!r}")
    new_value = replace_path(getattr(state, head), rest, value) if rest else value
    try:
        return dataclasses.replace(state, **{head: new_value})
    except TypeError as exc:  # a wrong type reached a comparison inside a check
        raise InputError(f"{path}: {exc}") from None


# --- flat key/value form for the machine-readable inputs sheet -------------------------

_SCALARS = (bool, int, float, str)


def flatten(state: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """``[("confidence", 0.95), ("plan.population.mode", "counts"), ...]``.

    Tuples of dataclasses (ensemble children) become ``key.0.name``-style keys; tuples of
    strings become ``key.0``; past rounds are not flattened here (the Rounds sheet holds them).
    """
    rows: list[tuple[str, Any]] = []
    for f in dataclasses.fields(state):
        key = f"{prefix}{f.name}"
        value = getattr(state, f.name)
        if f.name == "rounds" and prefix == "":
            continue
        if dataclasses.is_dataclass(value):
            rows.extend(flatten(value, key + "."))
        elif isinstance(value, tuple):
            rows.append((f"{key}.count", len(value)))
            for index, item in enumerate(value):
                if dataclasses.is_dataclass(item):
                    rows.extend(flatten(item, f"{key}.{index}."))
                else:
                    rows.append((f"{key}.{index}", item))
        else:
            rows.append((key, value))
    return rows


def _coerce(template: Any, value: Any, key: str) -> Any:
    """Convert a cell value to the type of the default it replaces."""
    if isinstance(template, bool):
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "yes", "1"):
            return True
        if text in ("false", "no", "0"):
            return False
        raise InputError(f"{key}: expected true or false, got {value!r}")
    if isinstance(template, int):
        if key.endswith("seed"):  # seeds go up to 2^64: parse text exactly, not via float
            if isinstance(value, str) and _GROUPED_DIGITS.fullmatch(value.strip()):
                value = int(value.strip().replace(",", ""))
            return validation.seed(value, key)
        return validation.count(key, _number_of(value, key, "a whole number"))
    if isinstance(template, float):
        number = _number_of(value, key, "a number")
        try:
            return float(number)
        except OverflowError:  # a 4,000-digit whole number in a damaged file
            raise InputError(f"{key}: expected a number, got {_short(value)}") from None
    if isinstance(value, dict | list | tuple | set):
        # Only a hand-edited recovery file (JSON) holds these; str() of one would become a
        # file name or a round name ("{'a': ''}").
        raise InputError(f"{key}: expected text, got {_short(value)}")
    return "" if value is None else str(value)


#: A whole number with optional comma thousands grouping (a seed written as text).
_GROUPED_DIGITS = re.compile(r"\d+|[1-9]\d{0,2}(?:,\d{3})+")


def _number_of(value: Any, key: str, what: str) -> int | float:
    """A cell's number, text read as the rounds workbooks' numbers are: ``0,033`` with a
    decimal comma and ``1,500`` grouped. Dropping every comma read k ``0,033`` as 33 with
    no word (fuzz 20); a yes/no cell is no number."""
    if isinstance(value, str):
        from core.workbook.rounds import parse_number_text

        number = parse_number_text(value)
        if number is not None:
            return number
    elif isinstance(value, int | float) and not isinstance(value, bool):
        return value
    raise InputError(f"{key}: expected {what}, got {_short(value)}")


def _short(value: Any) -> str:
    """``repr(value)``, a long one cut (a 4,000-digit number in a damaged file)."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}…({len(text):,} characters)"


def unflatten(rows, base: SessionState | None = None) -> tuple[SessionState, list[str]]:
    """Rebuild a state from ``flatten`` rows; returns ``(state, problems)``.

    Unknown keys and refused values are reported in ``problems`` (with the key) and the
    default is kept, so one bad cell never loses the rest of a session.
    """
    values = dict(rows)
    problems: list[str] = []
    state = _rebuild(base or SessionState(), "", values, problems)
    known = {key for key, _ in flatten(state)} | {
        key for key in values if key.rsplit(".", 1)[-1] == "count"
    }
    unknown = [key for key in values if key not in known and not _is_element_key(key)]
    # Named one by one up to a point: a million hand-made keys gave a million lines (and
    # 581 MB) for the lead to scroll through (fuzz 20).
    problems.extend(f"{key}: unknown setting, ignored" for key in unknown[:UNKNOWN_NAMED])
    if len(unknown) > UNKNOWN_NAMED:
        problems.append(f"and {len(unknown) - UNKNOWN_NAMED:,} more unknown settings, ignored")
    return state, problems


#: Unknown settings of a session named one by one; the rest are counted.
UNKNOWN_NAMED = 20


def _is_element_key(key: str) -> bool:
    return any(part.isdigit() for part in key.split("."))


def _rebuild(template: Any, prefix: str, values: dict, problems: list[str]) -> Any:
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(template):
        key = f"{prefix}{f.name}"
        current = getattr(template, f.name)
        if key == "rounds":
            continue
        if dataclasses.is_dataclass(current):
            changes[f.name] = _rebuild(current, key + ".", values, problems)
        elif isinstance(current, tuple):
            rebuilt = _rebuild_tuple(current, key, values, problems)
            if rebuilt is not None:
                changes[f.name] = rebuilt
        elif key in values:
            try:
                changes[f.name] = _coerce(current, values[key], key)
            except InputError as exc:
                problems.append(str(exc))
    try:
        return dataclasses.replace(template, **changes)
    except InputError as exc:
        problems.append(f"{prefix.rstrip('.') or 'session'}: {exc}; defaults kept")
        return template


#: The most entries a list in a saved session may have (ensemble children, compared
#: rounds, column choices, workbooks out with the editors).
MAX_LIST_LENGTH = 10_000


def _rebuild_tuple(current: tuple, key: str, values: dict, problems: list[str]):
    if f"{key}.count" not in values:
        return None
    try:
        length = validation.count(f"{key}.count", _coerce(0, values[f"{key}.count"], key))
    except InputError as exc:
        problems.append(str(exc))
        return None
    if length > MAX_LIST_LENGTH:  # a hand-edited cell: never loop over a billion entries
        problems.append(
            f"{key}.count: {length:,} entries is more than a session holds (at most "
            f"{MAX_LIST_LENGTH:,}); defaults kept"
        )
        return None
    element_type = type(current[0]) if current else None
    items: list[Any] = []
    refused: list[str] = []
    absent = 0
    for index in range(length):
        item_key = f"{key}.{index}"
        if element_type is not None and dataclasses.is_dataclass(element_type):
            names = [f.name for f in dataclasses.fields(element_type)]
            raw = {name: values.get(f"{item_key}.{name}") for name in names}
            if all(f"{item_key}.{name}" not in values for name in names):
                absent += 1  # counted, then said once (fuzz 17: 50 alike lines)
                continue
            try:
                defaults = current[0]
                items.append(
                    element_type(
                        **{
                            name: _coerce(getattr(defaults, name), raw[name], f"{item_key}.{name}")
                            for name in names
                        }
                    )
                )
            except InputError as exc:
                refused.append(f"{item_key}: {exc}")
        elif item_key in values:
            items.append(str(values[item_key]))
    problems.extend(refused[:REFUSED_ENTRIES_SHOWN])
    if len(refused) > REFUSED_ENTRIES_SHOWN:
        problems.append(
            f"{key}: {len(refused) - REFUSED_ENTRIES_SHOWN} more entries refused; left out"
        )
    if absent:
        problems.append(
            f"{key}.count says {length:,} entries, but {absent:,} of them are not in the "
            "sheet; left out"
        )
    return tuple(items)


#: How many refused entries of a list are named before the rest are counted.
REFUSED_ENTRIES_SHOWN = 3
