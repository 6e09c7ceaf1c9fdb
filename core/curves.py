"""PR and ROC curves from scored, labeled items (methods §12).

Given the classifier's score, the editors' label and an optional weight per item, the
curves are built once per *distinct* score, exactly as scikit-learn's
``confusion_matrix_at_thresholds`` does: items are sorted by decreasing score, tied
scores form one threshold (one point), and items of zero weight are dropped. Every count
below is a weighted count.

Two areas under the PR curve are reported and named apart, because they differ:

* :attr:`ScoredCurves.average_precision`, the step-wise sum
  ``sum_n (R_n - R_{n-1}) P_n`` (scikit-learn's ``average_precision_score``);
* :attr:`ScoredCurves.auc_pr_trapezoid`, the trapezoidal rule over the PR points including
  scikit-learn's anchor point (recall 0, precision 1) (``auc(recall, precision)``); linear
  interpolation between PR points is optimistic (Davis and Goadrich 2006).

Items from a stratified (over-sampled) round must carry the stratum weights ``N1/n1`` and
``N0/n0`` (:func:`stratum_weights`) so that the curves describe the population. Curves at
another prevalence re-weight precision at every threshold with the closed form of methods
§11 (Williams 2021), never by sub-sampling.

References
----------
* Davis and Goadrich 2006 (PR and ROC curves, step interpolation).
* Siblini et al. 2020 (calibrated average precision); Williams 2021 (PR curve at another
  prevalence).
Full entries: docs/methods.md, References.
"""

from __future__ import annotations

import csv
import itertools
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core import validation
from core.confusion import Population
from core.errors import InputError
from core.prevalence import prevalence_grid

#: Larger (grid x threshold) blocks than this are computed in pieces (about 16 MB).
_BLOCK_ELEMENTS = 2_000_000
REQUIRED_COLUMNS = ("score", "label")
OPTIONAL_COLUMNS = ("weight",)
#: Said of a scored sample read without weights (trial 20: an over-sampled round's file
#: without them gave a "weighted share" of 3.85 % for 2.86 %, and nobody said why).
UNWEIGHTED_NOTE = (
    "no weight column: the curves describe the sample as drawn. If its flagged items were "
    "over-sampled, add a weight column (N1/n1 for flagged items, N0/n0 for unflagged ones) "
    "so that they describe the whole population"
)


# --- the scored sample ---------------------------------------------------------------------


def _one_dimensional(name: str, value) -> np.ndarray:
    array = np.asarray(value)
    if array.ndim != 1:
        raise InputError(f"{name} must be a one-dimensional array, got shape {array.shape}")
    return array


def _labels(value, name: str = "labels") -> np.ndarray:
    array = _one_dimensional(name, value)
    if array.dtype == bool:
        return array
    try:
        numeric = array.astype(float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be 0/1 (or booleans)") from None
    bad = ~((numeric == 0.0) | (numeric == 1.0))
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        offender = array[index].item()
        raise InputError(f"{name} must be 0 or 1, got {offender!r} at item {index}")
    return numeric == 1.0


def _finite(name: str, value) -> np.ndarray:
    array = _one_dimensional(name, value)
    try:
        numeric = array.astype(float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numbers") from None
    bad = ~np.isfinite(numeric)
    if bad.any():
        index = int(np.flatnonzero(bad)[0])
        offender = array[index].item()
        raise InputError(f"{name} must be finite numbers, got {offender!r} at item {index}")
    return numeric


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ScoredSample:
    """Scores, labels and optional weights of labeled items, validated together.

    Attributes
    ----------
    scores : numpy.ndarray
        Classifier scores (higher = more positive), finite floats.
    labels : numpy.ndarray
        Editors' labels as booleans (True = actual positive).
    weights : numpy.ndarray or None
        Non-negative finite weights (e.g. inverse inclusion probabilities ``N1/n1``,
        ``N0/n0``); ``None`` means every item counts once.
    """

    scores: np.ndarray
    labels: np.ndarray
    weights: np.ndarray | None = None

    def __post_init__(self) -> None:
        scores = _finite("scores", self.scores)
        labels = _labels(self.labels)
        if labels.shape != scores.shape:
            raise InputError(
                f"scores and labels must have the same length, got {scores.size} and {labels.size}"
            )
        weights = None
        if self.weights is not None:
            weights = _finite("weights", self.weights)
            if weights.shape != scores.shape:
                raise InputError(
                    f"weights must have one value per item ({scores.size}), got {weights.size}"
                )
            negative = weights < 0.0
            if negative.any():
                index = int(np.flatnonzero(negative)[0])
                offender = weights[index].item()
                raise InputError(f"weights must be >= 0, got {offender!r} at item {index}")
        object.__setattr__(self, "scores", scores)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "weights", weights)
        counted = self.labels if weights is None else self.labels[weights > 0.0]
        if not counted.any():
            raise InputError("the sample holds no actual positive (with weight > 0)")
        if counted.all():
            raise InputError("the sample holds no actual negative (with weight > 0)")

    @property
    def size(self) -> int:
        return int(self.scores.size)

    @property
    def positive_items(self) -> int:
        """Items labeled positive (a count of rows, whatever their weights)."""
        return int(np.count_nonzero(self.labels))


def stratum_weights(predicted_positive, population: Population) -> np.ndarray:
    """Inverse inclusion probabilities of a stratified round's items (methods §12).

    Parameters
    ----------
    predicted_positive : array_like of bool
        For each labeled item, whether it was drawn from the predicted-positive stratum.
    population : Population
        The design. With both population counts the weights are ``N1/n1`` and ``N0/n0``;
        with only ``k`` they are ``k/n1`` and ``1/n0``, the same up to a common factor,
        which no curve or area depends on.

    Returns
    -------
    numpy.ndarray
        One weight per item.
    """
    flags = _labels(predicted_positive, "predicted_positive")
    n1 = int(np.count_nonzero(flags))
    n0 = flags.size - n1
    if n1 == 0 or n0 == 0:
        raise InputError(
            f"both strata need labeled items, got {n1} predicted positive and {n0} predicted "
            "negative"
        )
    strata = population.strata
    if strata is not None:
        positive_weight = strata[0] / n1
        negative_weight = strata[1] / n0
    else:
        positive_weight, negative_weight = population.k / n1, 1.0 / n0
    return np.where(flags, positive_weight, negative_weight)


# --- curves ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ScoredCurves:
    """PR and ROC curves of a scored sample, one point per distinct score (methods §12).

    Arrays are in decreasing-threshold order (``thresholds[0]`` is the highest score); the
    ``*_curve`` methods return scikit-learn's layouts.

    Attributes
    ----------
    thresholds : numpy.ndarray
        Distinct scores, decreasing; an item is predicted positive when ``score >= t``.
    true_positives, false_positives : numpy.ndarray
        Weighted counts predicted positive at each threshold.
    positives, negatives : float
        Weighted totals of actual positives and negatives.
    n_items, positive_items : int
        Rows (items) used, and how many are labeled positive (zero-weight items excluded).
    precision, recall, fpr : numpy.ndarray
        At each threshold; ``recall`` is the TPR.
    average_precision : float
        Step-wise area ``sum_n (R_n - R_{n-1}) P_n`` (scikit-learn's definition).
    auc_pr_trapezoid : float
        Trapezoidal area under the PR points with the (0, 1) anchor.
    auc_roc : float
        Trapezoidal area under the ROC curve from (0, 0) (exact for step ROC curves with
        ties counted as half, i.e. the Mann-Whitney statistic).
    """

    thresholds: np.ndarray
    true_positives: np.ndarray
    false_positives: np.ndarray
    positives: float
    negatives: float
    n_items: int
    positive_items: int
    precision: np.ndarray
    recall: np.ndarray
    fpr: np.ndarray
    average_precision: float
    auc_pr_trapezoid: float
    auc_roc: float

    @property
    def sample_prevalence(self) -> float:
        """Weighted share of actual positives, ``pi`` of Siblini et al.'s Eq 6."""
        return self.positives / (self.positives + self.negatives)

    def pr_curve(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(precision, recall, thresholds)`` laid out as ``precision_recall_curve``:
        increasing thresholds, with the point (recall 0, precision 1) appended."""
        return _sklearn_pr_layout(self.precision, self.recall, self.thresholds)

    def roc_curve(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(fpr, tpr, thresholds)`` laid out as ``roc_curve(drop_intermediate=False)``:
        starting at (0, 0) with threshold ``inf``."""
        return (
            np.concatenate(([0.0], self.fpr)),
            np.concatenate(([0.0], self.recall)),
            np.concatenate(([np.inf], self.thresholds)),
        )

    def calibrated_precision(self, reference_prevalence: float) -> np.ndarray:
        """``Prec_c`` at every threshold (Siblini et al., Eq 6; methods §12)."""
        ratio = _reference_ratio(reference_prevalence)
        return _precision_at_ratio(self.recall, self.fpr, ratio)

    def calibrated_pr_curve(
        self, reference_prevalence: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The PR curve at ``pi_ref`` in ``precision_recall_curve``'s layout."""
        return _sklearn_pr_layout(
            self.calibrated_precision(reference_prevalence), self.recall, self.thresholds
        )

    def calibrated_average_precision(self, reference_prevalence: float) -> float:
        """Step-wise area under the calibrated PR curve (Siblini et al., Section 3)."""
        return _step_area(self.recall, self.calibrated_precision(reference_prevalence))

    def calibrated_auc_pr_trapezoid(self, reference_prevalence: float) -> float:
        """Trapezoidal area under the calibrated PR curve, (0, 1) anchor included."""
        return _trapezoid_pr_area(self.recall, self.calibrated_precision(reference_prevalence))

    def area_under_pr_vs_prevalence(
        self, prevalence=None, *, kind: str = "average_precision"
    ) -> tuple[np.ndarray, np.ndarray]:
        """Area under the PR curve as a function of the prevalence (Brabec et al., Fig 4).

        Parameters
        ----------
        prevalence : array_like or None
            Prevalences strictly inside (0, 1); by default the P3 grid ``1e-5 .. 0.5``.
        kind : {"average_precision", "trapezoid"}
            Which area (see the module docstring).

        Returns
        -------
        (prevalence, area) : tuple of numpy.ndarray
        """
        if kind not in ("average_precision", "trapezoid"):
            raise InputError(f"kind must be 'average_precision' or 'trapezoid', got {kind!r}")
        eta = prevalence_grid() if prevalence is None else np.asarray(prevalence, dtype=float)
        if eta.ndim != 1 or eta.size == 0 or not np.all((eta > 0.0) & (eta < 1.0)):
            raise InputError("prevalences must be a non-empty list of numbers in (0, 1)")
        ratio = eta / (1.0 - eta)
        steps = np.diff(self.recall, prepend=0.0)
        if kind == "average_precision":
            weights = steps
            anchor = 0.0
        else:
            # Trapezoids sum_j dR_j (P_j + P_{j-1})/2 with P_0 = 1 (the anchor): each P_j
            # is weighted by half its own step and half the next one.
            weights = 0.5 * (steps + np.append(steps[1:], 0.0))
            anchor = 0.5 * steps[0]
        # Thresholds with zero weight (recall flat around them) do not contribute.
        used = weights > 0.0
        tpr, fpr, weights = self.recall[used], self.fpr[used], weights[used]
        area = np.empty_like(eta)
        block = max(1, _BLOCK_ELEMENTS // max(tpr.size, 1))
        for start in range(0, eta.size, block):
            r = ratio[start : start + block, None]
            precision = _precision_at_ratio(tpr[None, :], fpr[None, :], r)
            area[start : start + block] = precision @ weights + anchor
        return eta, area

    def summary(self, reference_prevalence: float | None = None) -> CurveSummary:
        """The headline numbers (``prplanner curves``)."""
        return CurveSummary(
            n=self.n_items,
            positives=self.positive_items,
            average_precision=self.average_precision,
            auc_pr_trapezoid=self.auc_pr_trapezoid,
            auc_roc=self.auc_roc,
            reference_prevalence=reference_prevalence,
            calibrated_average_precision=(
                None
                if reference_prevalence is None
                else self.calibrated_average_precision(reference_prevalence)
            ),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class CurveSummary:
    """Headline areas of a scored sample.

    Attributes
    ----------
    n : int
        Items used (rows with weight > 0).
    positives : int
        Of those, items labeled positive (rows, not weights).
    average_precision, auc_pr_trapezoid, auc_roc : float
        See :class:`ScoredCurves`.
    reference_prevalence : float or None
        ``pi_ref`` when calibration was asked for.
    calibrated_average_precision : float or None
        Step-wise area under the PR curve at ``pi_ref``.
    """

    n: int
    positives: int
    average_precision: float
    auc_pr_trapezoid: float
    auc_roc: float
    reference_prevalence: float | None = None
    calibrated_average_precision: float | None = None

    def to_dict(self) -> dict[str, object]:
        """The ``prplanner curves --json`` object (its JSON contract)."""
        result: dict[str, object] = {
            "n": self.n,
            "positives": self.positives,
            "average_precision": self.average_precision,
            "auc_pr_trapezoid": self.auc_pr_trapezoid,
            "auc_roc": self.auc_roc,
        }
        if self.reference_prevalence is not None:
            result["calibrated_average_precision"] = self.calibrated_average_precision
        return result


def _reference_ratio(reference_prevalence: float) -> float:
    pi_ref = validation.open_unit("reference prevalence", reference_prevalence)
    return pi_ref / (1.0 - pi_ref)


def _precision_at_ratio(tpr, fpr, ratio):
    # TPR*r + FPR > 0 at every threshold: each threshold holds an item of positive weight.
    numerator = tpr * ratio
    return numerator / (numerator + fpr)


# The areas are sums of elementwise products taken with np.add.reduce (pairwise summation,
# one thread), never np.dot: OpenBLAS threads a dot product above about 10,000 elements,
# and waking its threads costs more than the whole sum on a busy two-core machine.


def _steps(values: np.ndarray) -> np.ndarray:
    """``values_n - values_{n-1}`` with ``values_0 = 0`` (``np.diff(prepend=0)``, one array)."""
    steps = np.empty_like(values)
    steps[:1] = values[:1]
    np.subtract(values[1:], values[:-1], out=steps[1:])
    return steps


def _sum_of_products(a: np.ndarray, b: np.ndarray, scratch: np.ndarray | None = None) -> float:
    """``sum a*b`` by pairwise summation; ``scratch`` (at least as long) holds the products."""
    products = np.multiply(a, b, out=None if scratch is None else scratch[: a.size])
    return float(np.add.reduce(products))


def _step_area(recall: np.ndarray, precision: np.ndarray) -> float:
    """``sum_n (R_n - R_{n-1}) P_n`` with ``R_0 = 0``."""
    return _sum_of_products(_steps(recall), precision)


def _trapezoid_pr_area(recall: np.ndarray, precision: np.ndarray) -> float:
    """Trapezoids over the PR points with the anchor (recall 0, precision 1)."""
    steps = _steps(recall)
    return _trapezoid_from_steps(steps, precision, _sum_of_products(steps, precision), 1.0)


def _trapezoid_from_steps(steps, heights, step_sum: float, anchor: float, scratch=None) -> float:
    """``sum_j steps_j (h_j + h_{j-1})/2`` with ``h_0 = anchor``, given ``sum_j steps_j h_j``.

    The trapezoids are the step-wise sum plus the same sum with every height moved one
    step on; the first step reaches back to the anchor.
    """
    shifted = _sum_of_products(steps[1:], heights[:-1], scratch) + float(steps[0]) * anchor
    return 0.5 * (step_sum + shifted)


def _sklearn_pr_layout(precision, recall, thresholds):
    return (
        np.concatenate((precision[::-1], [1.0])),
        np.concatenate((recall[::-1], [0.0])),
        thresholds[::-1].copy(),
    )


def scored_curves(scores, labels, weights=None) -> ScoredCurves:
    """PR and ROC curves, average precision and AUCs of scored items (methods §12).

    Parameters
    ----------
    scores : array_like
        Classifier scores; ties form one threshold.
    labels : array_like
        0/1 or booleans.
    weights : array_like or None
        Per-item weights >= 0 (zero-weight items are dropped, as scikit-learn does).

    Returns
    -------
    ScoredCurves
    """
    return curves_of_sample(ScoredSample(scores=scores, labels=labels, weights=weights))


def curves_of_sample(sample: ScoredSample) -> ScoredCurves:
    """:func:`scored_curves` of an already validated :class:`ScoredSample`."""
    scores, labels, weights = sample.scores, sample.labels, sample.weights
    if weights is not None:
        kept = weights != 0.0
        if not kept.all():
            scores, labels, weights = scores[kept], labels[kept], weights[kept]
    # Decreasing scores, by sorting (score, signed weight) pairs as complex numbers: numpy
    # sorts complex values by real part, then imaginary part, in place and without the
    # cache misses of an index sort and its gathers (about 1.6x faster from a million items
    # on). The sign of the weight carries the label (items of weight 0 were dropped above).
    # The order inside a run of tied scores does not matter: only the cumulative sums at
    # the last item of each run are kept, and sums of the same numbers in another order
    # differ in rounding only.
    pairs = np.empty(scores.size, dtype=np.complex128)
    pairs.real = scores
    magnitude = 1.0 if weights is None else weights
    pairs.imag = np.where(labels, magnitude, -magnitude)
    pairs.sort()
    pairs = pairs[::-1]
    sorted_scores, signed_weights = pairs.real, pairs.imag
    last_of_run = sorted_scores[1:] != sorted_scores[:-1]
    threshold_index = np.flatnonzero(np.append(last_of_run, True))
    # Arrays of millions of items are worked on in place where that is as clear: each fresh
    # one costs page faults comparable to the arithmetic.
    if weights is None:
        true_positives = np.cumsum(signed_weights > 0.0, dtype=float)[threshold_index]
        false_positives = (threshold_index + 1.0) - true_positives
    else:
        positive_weights = np.maximum(signed_weights, 0.0)
        # Two cumulative sums (as scikit-learn) keep both counts monotone under rounding;
        # w - w is exactly 0 and 0 - (-w) exactly w, so the second sums the negatives' weights.
        negative_weights = positive_weights - signed_weights
        true_positives = np.cumsum(positive_weights, out=positive_weights)[threshold_index]
        false_positives = np.cumsum(negative_weights, out=negative_weights)[threshold_index]
    positives, negatives = float(true_positives[-1]), float(false_positives[-1])
    predicted = true_positives + false_positives
    precision = np.divide(true_positives, predicted, out=predicted)
    recall = true_positives / positives
    fpr = false_positives / negatives
    scratch = np.empty_like(recall)
    recall_steps = _steps(recall)
    average_precision = _sum_of_products(recall_steps, precision, scratch)
    fpr_steps = _steps(fpr)
    return ScoredCurves(
        thresholds=sorted_scores[threshold_index],
        true_positives=true_positives,
        false_positives=false_positives,
        positives=positives,
        negatives=negatives,
        n_items=int(scores.size),
        positive_items=int(np.count_nonzero(labels)),
        precision=precision,
        recall=recall,
        fpr=fpr,
        average_precision=average_precision,
        auc_pr_trapezoid=_trapezoid_from_steps(
            recall_steps, precision, average_precision, 1.0, scratch
        ),
        # ROC trapezoids from (0, 0): the heights are the recall and the anchor is 0.
        auc_roc=_trapezoid_from_steps(
            fpr_steps, recall, _sum_of_products(fpr_steps, recall, scratch), 0.0, scratch
        ),
    )


# --- loading a file ------------------------------------------------------------------------

_TRUE_WORDS = {"1", "1.0", "true", "yes"}
_FALSE_WORDS = {"0", "0.0", "false", "no"}


#: A number with points between its thousands, as a decimal-comma locale writes it
#: (``1.000``, ``12.500,75``): group 1 is the whole part, group 2 the decimals if any.
_POINT_THOUSANDS = re.compile(r"([+-]?[1-9]\d{0,2}(?:\.\d{3})+)(,\d*)?")


class _AmbiguousPoint(ValueError):
    """``1.000`` in a file with decimal commas: a thousand, or one?"""


def _parse_number(text: str, decimal_comma: bool, points: str = "unknown") -> float:
    """``text`` as a number; with ``decimal_comma`` (a ``;`` or tab separated file) a
    comma is the decimal mark, and a point is read as the file shows it (``points``:
    ``"thousands"`` when its numbers have decimal commas, ``"decimals"`` when they have
    decimal points, ``"unknown"`` when they show neither or both)."""
    cleaned = text.strip()
    if decimal_comma:
        thousands = _POINT_THOUSANDS.fullmatch(cleaned)
        if thousands is not None and thousands.group(2) is None:
            if points == "unknown":
                # Read as 1.0 where the file's locale writes a thousand so (fuzz 15).
                raise _AmbiguousPoint(cleaned)
            if points == "thousands":
                cleaned = cleaned.replace(".", "")
        elif thousands is not None:  # 12.500,75: the points set off thousands
            cleaned = thousands.group(1).replace(".", "") + thousands.group(2)
        cleaned = cleaned.replace(",", ".")
    return float(cleaned)


#: A number with a decimal comma, and one with a decimal point that is no thousands
#: separator (a leading 0, or other than three digits after it), as fields of a ``;`` or
#: tab separated file.
_COMMA_DECIMAL = re.compile(r"(?:^|[;\t])\s*[+-]?\d+,\d+\s*(?=$|[;\t\r\n])", re.MULTILINE)
_POINT_DECIMAL = re.compile(
    r"(?:^|[;\t])\s*[+-]?(?:0\.\d+|\d+\.(?:\d{1,2}|\d{4,}))\s*(?=$|[;\t\r\n])", re.MULTILINE
)
#: How much of a file is looked at to tell its decimal mark.
_DECIMAL_SNIFF_CHARACTERS = 1 << 22


def _points_in(text: str) -> str:
    """How a ``;`` or tab separated file's numbers use a point (see
    :func:`_parse_number`): decided by its other numbers, so that ``1.000`` is a
    thousand in a file of decimal commas and one in a file of decimal points (review 15:
    a file of decimal points was told to use commas)."""
    commas, dots = bool(_COMMA_DECIMAL.search(text)), bool(_POINT_DECIMAL.search(text))
    if commas and not dots:
        return "thousands"
    if dots and not commas:
        return "decimals"
    return "unknown"


def _cell_in_words(value) -> str:
    """A refused cell as the lead sees it in the spreadsheet, not as Python writes it
    (``datetime.datetime(2026, 5, 1, 0, 0)``, ``None``; fuzz 15)."""
    import datetime as dt

    if value is None or (isinstance(value, str) and not value.strip()):
        return "an empty cell"
    if isinstance(value, dt.datetime) and value.time() == dt.time():
        return f"the date {value.date().isoformat()}"
    if isinstance(value, dt.datetime):
        return f"the date and time {value.isoformat(sep=' ')}"
    if isinstance(value, (dt.date, dt.time)):
        return f"the {'date' if isinstance(value, dt.date) else 'time'} {value.isoformat()}"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    return repr(str(value)[:60]) if isinstance(value, str) else str(value)


class _CellReader:
    """Turns raw cells into numbers, raising InputError that names row and column."""

    def __init__(self, path: Path, decimal_comma: bool = False, points: str = "unknown") -> None:
        self.path = path
        self.decimal_comma = decimal_comma
        self.points = points

    def _fail(self, row: int, column: str, expected: str, value) -> InputError:
        return InputError(
            f"{self.path.name}: row {row}, column '{column}': expected {expected}, got "
            f"{_cell_in_words(value)}"
        )

    def number(self, value, row: int, column: str) -> float:
        if isinstance(value, bool) or value is None:
            raise self._fail(row, column, "a number", value)
        try:
            number = (
                float(value)
                if isinstance(value, (int, float))
                else _parse_number(str(value)[:_MAX_CELL_TEXT], self.decimal_comma, self.points)
            )
        except _AmbiguousPoint as exc:
            whole = str(exc).replace(".", "")
            raise InputError(
                f"{self.path.name}: row {row}, column '{column}': {str(exc)!r} is ambiguous in "
                "a file separated by semicolons or tabs (a point between thousands, or "
                f"decimals?); write {whole} for {int(whole):,}, or {whole[:-3]},{whole[-3:]} "
                "with a decimal comma"
            ) from None
        except (ValueError, OverflowError):  # a 400-digit number overflows a float
            raise self._fail(row, column, "a number", value) from None
        if not math.isfinite(number):
            raise self._fail(row, column, "a finite number", value)
        return number

    def label(self, value, row: int, column: str) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float)) and value in (0, 1):
            return bool(value)
        text = str(value).strip().lower() if value is not None else ""
        if text in _TRUE_WORDS:
            return True
        if text in _FALSE_WORDS:
            return False
        raise self._fail(row, column, "0 or 1", value)

    def weight(self, value, row: int, column: str) -> float:
        number = self.number(value, row, column)
        # A weight is how many items a labeled one stands for: at most a population's size
        # (sums of larger ones overflow and leave every metric blank).
        if not 0.0 <= number <= MAX_WEIGHT:
            raise self._fail(row, column, f"a weight from 0 to {MAX_WEIGHT:.0e}", value)
        return number


def _column_positions(header, path: Path) -> dict[str, int]:
    names = [str(cell).strip().lower() if cell is not None else "" for cell in header]
    positions: dict[str, int] = {}
    for wanted in REQUIRED_COLUMNS + OPTIONAL_COLUMNS:
        matches = [index for index, name in enumerate(names) if name == wanted]
        if len(matches) > 1:
            raise InputError(f"{path.name}: column '{wanted}' appears {len(matches)} times")
        if matches:
            positions[wanted] = matches[0]
    missing = [name for name in REQUIRED_COLUMNS if name not in positions]
    if missing:
        named = [repr(name) for name in names if name]
        found = ", ".join(named[:_COLUMNS_SHOWN]) or "nothing"
        if len(named) > _COLUMNS_SHOWN:
            found += f", ... ({len(named):,} columns)"
        raise InputError(
            f"{path.name}: the first row must name the columns score, label[, weight] "
            f"(any case); missing {', '.join(missing)}, found {found}"
        )
    return positions


def _sample_from_rows(rows, path: Path, reader: _CellReader) -> ScoredSample:
    """``rows``: ``(row number, cells)`` in order, the header first as row 1; rows absent
    from the file (a workbook stores no empty rows) are simply missing."""
    rows = iter(rows)
    try:
        header_number, header = next(rows)
    except StopIteration:
        raise InputError(f"{path.name} is empty") from None
    if header_number != 1:
        # Row 1 is empty: put the first stored row back, it is data or junk, not a header.
        rows = itertools.chain([(header_number, header)], rows)
        header = ()
    positions = _column_positions(header, path)
    weight_at = positions.get("weight")
    width = max(positions.values()) + 1
    scores: list[float] = []
    labels: list[bool] = []
    weights: list[float] = []
    for row_number, row in rows:
        if row is None or all(cell is None or str(cell).strip() == "" for cell in row):
            continue  # blank lines and Excel's trailing empty rows
        cells = list(row) + [None] * (width - len(row))
        scores.append(reader.number(cells[positions["score"]], row_number, "score"))
        labels.append(reader.label(cells[positions["label"]], row_number, "label"))
        if weight_at is not None:
            weights.append(reader.weight(cells[weight_at], row_number, "weight"))
    if not scores:
        raise InputError(f"{path.name} has a header but no data rows")
    return ScoredSample(
        scores=np.array(scores),
        labels=np.array(labels, dtype=bool),
        weights=None if weight_at is None else np.array(weights),
    )


#: Longer cell texts are cut before they are parsed as numbers (no number is that long).
_MAX_CELL_TEXT = 1000


#: The largest weight a scored item may carry (how many items it stands for).
MAX_WEIGHT = 1e15
#: Columns a refused header names (a header of millions of columns is not printed whole).
_COLUMNS_SHOWN = 10
#: The longest first line read as a header: far more than ``score,label,weight`` and any
#: columns beside them, far less than a runaway file without line ends.
_MAX_HEADER_CHARACTERS = 1 << 16


def _load_csv(path: Path) -> ScoredSample:
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            first_line = handle.readline(_MAX_HEADER_CHARACTERS + 1)
            if len(first_line) > _MAX_HEADER_CHARACTERS:
                raise InputError(
                    f"{path.name}: its first line is longer than {_MAX_HEADER_CHARACTERS:,} "
                    "characters, so it is not a header row naming the columns score, "
                    "label[, weight]"
                )
            handle.seek(0)
            # Spreadsheets set to a decimal-comma locale export ';'-separated files.
            delimiter = max(",;\t", key=first_line.count)
            points = "unknown"
            if delimiter != ",":
                points = _points_in(handle.read(_DECIMAL_SNIFF_CHARACTERS))
                handle.seek(0)
            reader = _CellReader(path, decimal_comma=delimiter != ",", points=points)
            rows = enumerate(csv.reader(handle, delimiter=delimiter), start=1)
            return _sample_from_rows(rows, path, reader)
    except UnicodeDecodeError:
        raise InputError(f"{path.name} is not UTF-8 text (save it as CSV UTF-8)") from None
    except csv.Error as exc:
        raise InputError(f"{path.name} is not a readable CSV file ({exc})") from None


def load_scored_sample(path) -> ScoredSample:
    """Read ``score, label[, weight]`` columns from a CSV or XLSX file (methods §12).

    The first row names the columns (any case, any order; other columns are ignored).
    Labels are 0/1 (also ``true/false``, ``yes/no``); weights are numbers >= 0. A ``;`` or
    tab separated CSV may use decimal commas. Only the first worksheet of a workbook is
    read (cached formula values), within the budgets every workbook read keeps to.

    Raises
    ------
    InputError
        Naming the file, row and column of the first bad value.
    OSError
        When the file cannot be opened.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        # A pipe or a device would block the read forever (the app reads on a worker
        # thread, which then never ends, nor does the app). A missing file stays an
        # OSError, as documented.
        if path.exists() and not path.is_file():
            what = "a folder" if path.is_dir() else "not a regular file (a pipe or a device)"
            raise InputError(f"{path} is {what}, not a table of scores and labels")
        return _load_csv(path)
    if suffix in (".xlsx", ".xlsm"):
        return _load_workbook(path)
    raise InputError(f"{path.name}: expected a .csv or .xlsx file")


def _load_workbook(path: Path) -> ScoredSample:
    # Deferred: only workbook users pay for the import.
    from core.workbook.xlsx_reader import open_sheets

    if not path.exists():
        raise FileNotFoundError(2, "No such file or directory", str(path))
    # The reader every workbook goes through: the file checks, the zip-bomb, cell and time
    # budgets, a hardened XML parser; rows stream, so a bad header stops it at row 1.
    with open_sheets(path) as sheets:
        first = next(sheets)  # open_sheets refuses a workbook without worksheets
        rows = ((number, values) for number, values, _formulas in first.rows)
        return _sample_from_rows(rows, path, _CellReader(path))
