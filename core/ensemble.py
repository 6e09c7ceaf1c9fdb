"""Precision and recall of several classifiers from one labeling budget (methods §13).

Source: Tripathi, Jagannathan, Dhamodharaswamy, "Estimating Precisions for Multiple Binary
Classifiers Under Limited Samples", ECML-PKDD 2020, restated (typos fixed) in methods §13.

Four pieces:

* :func:`precision_sample_size` -- labels needed for one precision (methods §13), optionally
  with the finite-population correction.
* :func:`recycle_samples_for_precision` -- Algorithm 1 ("RecycleSamplesForPrecision",
  methods §13) on real item IDs: the child's sample, which of its items the parent's editors
  already labeled, and the IDs still to send out; :func:`recycled_precision` turns labels
  into the child's precision estimate (Lemmas 1, 2: unbiased).
* :func:`plan_recycled_labels` -- the same without IDs, from set sizes and overlaps only:
  labels each child still needs and the saving with its spread, simulated from Lemma 3 and
  vectorized over trials and children.
* :func:`recalls_from_precisions` -- recall of every classifier from the precisions and
  one false-omission estimate (methods §13, the paper's Section 6).

Notation: ``A_P``/``A_C`` are the predicted-positive sets of parent and child, ``S_P`` the
parent's labeled sample (uniform, with replacement, from ``A_P``), ``n_P = |S_P|`` and
``n_C`` the child's sample size; ``PIR = |A_P ∩ A_C|/|A_P|``, ``CIR = |A_P ∩ A_C|/|A_C|``.

References
----------
* Tripathi et al. 2020: one-precision sample size, Algorithm 1 (RecycleSamplesForPrecision),
  Lemmas 1-3, Section 6.
Full entries: docs/methods.md, References.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from core import progress, validation
from core.errors import InputError, named
from core.progress import TaskControl

__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_MARGIN",
    "MIXES",
    "ChildSavings",
    "ChildSet",
    "EnsemblePlan",
    "PrecisionSampleSize",
    "RecycledSample",
    "SeveralRecalls",
    "plan_recycled_labels",
    "precision_sample_size",
    "recall_from_precision_and_false_omission",
    "recalls_from_precisions",
    "recycle_samples_for_precision",
    "recycled_precision",
]

#: Half-width used when the user gives no sample size (0.03 at 95 % -> 1068 labels).
DEFAULT_MARGIN = 0.03
DEFAULT_CONFIDENCE = 0.95
#: ``Mix`` of Algorithm 1 step 4: ``"shuffle"`` = UniformShuffle (a permutation),
#: ``"sample"`` = independent uniform draws (the paper's UniformSample, made i.i.d.).
MIXES = ("shuffle", "sample")
#: Beyond this the (children x trials) arrays stop fitting comfortably in memory.
MAX_TRIALS = 10_000_000  # core.session.MAX_ENSEMBLE_TRIALS: the same
#: Trials simulated per vectorized chunk (progress and cancel are checked between chunks).
TRIALS_PER_CHUNK = 20_000
#: numpy's hypergeometric draw (the shuffle mix) needs both of its counts below 10^9.
MAX_MIX_COUNT = 10**9 - 1
#: ``|S-|`` is computed as ``(2 |A_C - A_P| |S+| + overlap) // (2 overlap)`` in int64.
_MAX_INT64 = 2**63 - 1

#: Where each position of a recycled sample came from (Algorithm 1, steps 1-3).
ORIGIN_PARENT_SAMPLE = "parent_sample"  # S+: already labeled for the parent
ORIGIN_OUTSIDE_PARENT = "outside_parent"  # S-: drawn from A_C - A_P
ORIGIN_REMAINDER = "remainder"  # S_rem: drawn from all of A_C


# --------------------------------------------------------------------------------------
# Shared checks
# --------------------------------------------------------------------------------------


def _child_generators(
    rng: int | np.random.Generator | None, children: int
) -> list[np.random.Generator]:
    """One random stream per child. With a seed each child's stream starts at that seed,
    so a child's numbers do not depend on the other children: the app's table and
    ``prplanner ensemble`` for that one child agree. A generator is shared in turn."""
    if isinstance(rng, np.random.Generator):
        return [rng] * children
    return [_generator(rng) for _ in range(children)]


def _generator(rng: int | np.random.Generator | None) -> np.random.Generator:
    if isinstance(rng, np.random.Generator) or rng is None:
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise InputError(f"seed must be a whole number >= 0 or a numpy Generator, got {rng!r}")


def _mix(value: object) -> str:
    if value in MIXES:
        return str(value)
    raise InputError(f"mix must be one of {', '.join(MIXES)}, got {value!r}")


def _read_only(array: np.ndarray) -> np.ndarray:
    # Frozen results must stay frozen: a caller editing a returned array would silently
    # desynchronise it from the counts stored next to it.
    array.flags.writeable = False
    return array


def _ceil(value: float) -> int:
    # z**2 / eps**2 is an exact integer for some inputs but lands a few ulps above it in
    # floating point; without the rounding that would cost one needless label.
    return math.ceil(round(value, 9))


# --------------------------------------------------------------------------------------
# 3.1 Sample size for one precision
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PrecisionSampleSize:
    """Labels needed to estimate one precision to a given margin (methods §13).

    Attributes
    ----------
    n : int
        Items to label: ``ceil(z^2 p (1-p) / eps^2)``, or with a population ``N`` the
        finite-population corrected ``ceil(n / (1 + (n - 1)/N))``.
    p_used : float
        The precision plugged into ``p (1-p)``: 0.5 (the worst case) unless a precision
        floor above 0.5 is guaranteed, then that floor.
    z : float
        Two-sided normal quantile ``Phi^-1(1 - delta/2)`` for the confidence ``1 - delta``.
    n_without_correction : int
        ``n`` before the finite-population correction (equal to ``n`` without one).
    margin : float
        Half-width ``eps`` of the interval.
    confidence : float
        ``1 - delta``.
    population : int or None
        Size ``N`` of the predicted-positive set used for the correction, if any.
    """

    n: int
    p_used: float
    z: float
    n_without_correction: int
    margin: float
    confidence: float
    population: int | None

    def to_dict(self) -> dict[str, object]:
        """The ``prplanner samplesize --json`` document (its JSON contract)."""
        return {"n": self.n, "p_used": self.p_used, "z": self.z, "population": self.population}


def precision_sample_size(
    margin: float = DEFAULT_MARGIN,
    confidence: float = DEFAULT_CONFIDENCE,
    *,
    precision_floor: float | None = None,
    population: int | None = None,
) -> PrecisionSampleSize:
    """Sample size for a ``(1 - delta)`` two-sided interval of half-width ``eps`` (methods §13).

    ``n = ceil(z^2 p (1 - p) / eps^2)`` with ``z = Phi^-1(1 - delta/2)``. Without knowledge
    ``p = 0.5``; with a guaranteed floor ``p0 >= 0.5``, ``p = p0``. The public example
    ``eps = 0.03``, ``delta = 0.05``, ``p = 0.5`` gives 1068.

    Parameters
    ----------
    margin : float
        Half-width ``eps``, in (0, 0.5).
    confidence : float
        ``1 - delta``, in (0.5, 1).
    precision_floor : float, optional
        A guaranteed lower bound ``p0`` of the precision, in (0, 1). A floor below 0.5
        does not exclude ``p = 0.5``, where ``p (1-p)`` peaks, so 0.5 is used then.
    population : int, optional
        Size ``N >= 1`` of the predicted-positive set. When given, the finite-population
        correction ``n / (1 + (n - 1)/N)`` is applied and rounded up (sampling without
        replacement from a small set needs fewer labels).

    Returns
    -------
    PrecisionSampleSize

    Raises
    ------
    InputError
        For a margin, confidence, floor or population out of range.
    """
    eps = validation.margin("margin", margin)
    level = validation.confidence(confidence)
    p_used = 0.5
    if precision_floor is not None:
        p_used = max(0.5, validation.open_unit("precision_floor", precision_floor))
    if population is not None:
        population = validation.whole_at_least("population", population, 1)
    z = validation.z_value(level)
    n_unlimited = max(1, _ceil(z * z * p_used * (1.0 - p_used) / (eps * eps)))
    n = n_unlimited
    if population is not None:
        # n / (1 + (n-1)/N) = n N / (N + n - 1), rounded up in exact integer arithmetic.
        n = -(-(n_unlimited * population) // (population + n_unlimited - 1))
    return PrecisionSampleSize(
        n=n,
        p_used=p_used,
        z=z,
        n_without_correction=n_unlimited,
        margin=eps,
        confidence=level,
        population=population,
    )


# --------------------------------------------------------------------------------------
# 3.2 Algorithm 1 on real item IDs
# --------------------------------------------------------------------------------------


def _id_family(array: np.ndarray) -> str:
    return "integer" if array.dtype.kind in "iu" else "string"


def _id_array(name: str, values: object) -> np.ndarray:
    """A 1-D array of integer or string IDs (an empty input keeps a float dtype for now)."""
    try:
        array = np.asarray(values)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be a list of item IDs ({exc})") from None
    if array.ndim != 1:
        raise InputError(
            f"{name} must be a one-dimensional list of item IDs, got shape {array.shape}"
        )
    if array.size == 0 or array.dtype.kind in "iuU":
        return array
    if array.dtype.kind == "O" and all(isinstance(item, str) for item in array.tolist()):
        return array.astype(str)
    example = array.ravel()[0].item() if array.size else None
    raise InputError(
        f"{name} must hold item IDs that are all integers or all strings, got "
        f"{array.dtype} values such as {example!r}"
    )


def _first_duplicate(array: np.ndarray):
    ordered = np.sort(array)
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    return repeated[0].item() if repeated.size else None


def _describe_ids(ids: np.ndarray, limit: int = 3) -> str:
    shown = ", ".join(repr(item) for item in ids[:limit].tolist())
    more = f" and {ids.size - limit} more" if ids.size > limit else ""
    return shown + more


def _labels_at(sample_ids: np.ndarray, labels: object) -> np.ndarray:
    """The 0/1 label of every position of ``sample_ids`` (repeats included)."""
    if isinstance(labels, Mapping):
        missing = object()
        values = [labels.get(item, missing) for item in sample_ids.tolist()]
        absent = np.array([value is missing for value in values], dtype=bool)
        if absent.any():
            lacking = np.unique(sample_ids[absent])
            raise InputError(
                f"labels are missing for {lacking.size} sampled item(s): " + _describe_ids(lacking)
            )
        flags = np.asarray(values, dtype=object)
    elif isinstance(labels, Sequence) and not isinstance(labels, str) and len(labels) == 2:
        labeled_ids = _id_array("labeled item IDs", labels[0])
        flags_given = np.asarray(labels[1], dtype=object)
        if flags_given.ndim != 1 or flags_given.size != labeled_ids.size:
            raise InputError(
                f"labels must pair each item ID with one label, got {labeled_ids.size} IDs "
                f"and {flags_given.size} labels"
            )
        if labeled_ids.size and _id_family(labeled_ids) != _id_family(sample_ids):
            raise InputError(
                f"labeled item IDs are {_id_family(labeled_ids)}s but the "
                f"sample's IDs are {_id_family(sample_ids)}s"
            )
        order = np.argsort(labeled_ids, kind="stable")
        sorted_ids = labeled_ids[order]
        where = np.searchsorted(sorted_ids, sample_ids) if sorted_ids.size else None
        if where is None:
            found = np.zeros(sample_ids.size, dtype=bool)
        else:
            where = np.minimum(where, sorted_ids.size - 1)
            found = sorted_ids[where] == sample_ids
        if not found.all():
            lacking = np.unique(sample_ids[~found])
            raise InputError(
                f"labels are missing for {lacking.size} sampled item(s): " + _describe_ids(lacking)
            )
        flags = flags_given[order][where]
        duplicate = _first_duplicate(labeled_ids)
        if duplicate is not None:
            given = {
                bool(flag)
                for item, flag in zip(labeled_ids.tolist(), flags_given.tolist(), strict=True)
                if item == duplicate
            }
            if len(given) > 1:
                raise InputError(f"item {duplicate!r} is labeled both positive and negative")
    else:
        raise InputError(
            "labels must be a mapping item ID -> True/False or a pair (item IDs, labels), "
            f"got {type(labels).__name__}"
        )
    bad = [value for value in flags.tolist() if not _is_binary(value)]
    if bad:
        raise InputError(f"labels must be True/False (or 1/0), got {bad[0]!r}")
    return np.asarray([bool(value) for value in flags.tolist()], dtype=bool)


def _is_binary(value: object) -> bool:
    return isinstance(value, bool | np.bool_ | numbers.Real) and value in (0, 1)


def recycled_precision(sample_ids, labels) -> float:
    """Precision estimate of a child from its (recycled) sample (Algorithm 1, step 5).

    The share of actual positives over the positions of ``S_C``; an item drawn twice counts
    twice, which is what keeps the estimate unbiased (methods §13, Lemmas 1 and 2).

    Parameters
    ----------
    sample_ids : array_like
        The child's sample ``S_C`` (e.g. :attr:`RecycledSample.sample_ids`).
    labels : mapping or pair of arrays
        Either ``{item_id: True/False}`` or ``(item_ids, labels)``; it may hold more items
        than the sample (e.g. everything the editors labeled so far).

    Returns
    -------
    float

    Raises
    ------
    InputError
        When a sampled item has no label, a label is not True/False/1/0, or one item
        carries both labels.
    """
    sample = _id_array("sample_ids", sample_ids)
    if sample.size == 0:
        raise InputError("sample_ids is empty: a precision needs at least one sampled item")
    return float(_labels_at(sample, labels).mean())


@dataclass(frozen=True, slots=True, kw_only=True)
class RecycledSample:
    """The child's sample built by Algorithm 1 (methods §13) and what it costs in labels.

    Arrays are read-only and aligned by position with :attr:`sample_ids`.

    Attributes
    ----------
    sample_ids : numpy.ndarray
        ``S_C = Mix(S+ + S-) + S_rem`` truncated to ``n_C``, in order; repeats possible
        (every part is drawn with replacement).
    origin : numpy.ndarray of str
        Per position: ``"parent_sample"`` (from ``S+``), ``"outside_parent"`` (from
        ``S-``, drawn from ``A_C - A_P``) or ``"remainder"`` (from ``S_rem``, drawn from
        ``A_C``; with the sample mix, from ``A_P ∩ A_C`` once ``S+`` is used up).
    from_parent_sample : numpy.ndarray of bool
        Positions filled from ``S+``: their labels are reused; their count is the saving
        of Lemma 3.
    already_labeled : numpy.ndarray of bool
        Positions whose item is in the parent's sample. Besides ``S+`` this catches
        remainder draws that happen to hit an item the editors labeled already.
    ids_to_label : numpy.ndarray
        Distinct items of ``S_C`` not yet labeled, in order of first appearance: the list
        to send to the editors.
    n_child : int
        ``n_C``.
    n_reused : int
        Number of positions from ``S+`` (``from_parent_sample.sum()``).
    n_new_labels : int
        ``ids_to_label.size``: labels still to buy for this child.
    s_plus_size, s_minus_size, remainder_size : int
        ``|S+|``, ``|S-|`` and ``|S_rem|`` as drawn in steps 1-3 (before truncation); with
        the sample mix, the positions outside ``A_P`` and the fresh shared draws.
    pir, cir : float
        ``|A_P ∩ A_C| / |A_P|`` and ``|A_P ∩ A_C| / |A_C|``.
    mix : str
        ``"shuffle"`` or ``"sample"``.
    """

    sample_ids: np.ndarray
    origin: np.ndarray
    from_parent_sample: np.ndarray
    already_labeled: np.ndarray
    ids_to_label: np.ndarray
    n_child: int
    n_reused: int
    n_new_labels: int
    s_plus_size: int
    s_minus_size: int
    remainder_size: int
    pir: float
    cir: float
    mix: str

    def precision(self, labels) -> float:
        """The child's precision estimate once labels are known (see :func:`recycled_precision`)."""
        return recycled_precision(self.sample_ids, labels)

    def to_dict(self) -> dict[str, object]:
        """Plain values for JSON and Excel export."""
        return {
            "n_child": self.n_child,
            "n_reused": self.n_reused,
            "n_new_labels": self.n_new_labels,
            "s_plus_size": self.s_plus_size,
            "s_minus_size": self.s_minus_size,
            "remainder_size": self.remainder_size,
            "pir": self.pir,
            "cir": self.cir,
            "mix": self.mix,
            "sample_ids": self.sample_ids.tolist(),
            "origin": self.origin.tolist(),
            "ids_to_label": self.ids_to_label.tolist(),
        }


def _independent_mix(
    generator: np.random.Generator,
    s_plus: np.ndarray,
    outside_parent: np.ndarray,
    shared: np.ndarray,
    n_child: int,
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """The sample mix: ``n_C`` independent uniform draws of ``A_C`` that reuse ``S+``.

    Each position lies in the shared part ``A_P ∩ A_C`` with probability ``CIR`` and
    outside it otherwise; shared positions take the items of ``S+`` in their order (each
    once) and, when ``S+`` runs out, fresh draws of the shared part; outside positions are
    fresh draws of ``A_C - A_P``. ``S+`` is an i.i.d. uniform sample of the shared part, so
    every position is an independent uniform draw of ``A_C``.

    The paper's UniformSample (draws with replacement from the list ``S+ + S-``) repeats
    items of that list: at ``n_P = n_C = 1068`` and ``CIR = 0.9`` about 674 distinct items
    fill the 1,068 positions, and the estimate's spread is 1.4 times a simple random
    sample's (methods §13).

    Returns the sample, each position's origin, the number of outside positions and of
    fresh shared draws.
    """
    child_size = shared.size + outside_parent.size
    in_shared = generator.random(n_child) < shared.size / child_size
    shared_positions = np.flatnonzero(in_shared)
    reused = min(shared_positions.size, s_plus.size)
    fresh_shared = shared_positions.size - reused
    outside_count = n_child - shared_positions.size
    sample_ids = np.empty(n_child, dtype=np.result_type(s_plus, outside_parent, shared))
    origin = np.full(n_child, ORIGIN_OUTSIDE_PARENT, dtype=object)
    sample_ids[shared_positions[:reused]] = s_plus[:reused]
    origin[shared_positions[:reused]] = ORIGIN_PARENT_SAMPLE
    if fresh_shared:
        sample_ids[shared_positions[reused:]] = shared[
            generator.integers(0, shared.size, fresh_shared)
        ]
        origin[shared_positions[reused:]] = ORIGIN_REMAINDER
    if outside_count:
        sample_ids[~in_shared] = outside_parent[
            generator.integers(0, outside_parent.size, outside_count)
        ]
    return sample_ids, origin, outside_count, fresh_shared


def recycle_samples_for_precision(
    parent_positive_ids,
    parent_sample_ids,
    child_positive_ids,
    n_child: int,
    *,
    mix: str = "shuffle",
    rng: int | np.random.Generator | None = None,
) -> RecycledSample:
    """Build a child's precision sample reusing the parent's labels (methods §13, Algorithm 1).

    1. ``S+ = S_P ∩ A_C``, repeats and order kept.
    2. ``S-``: ``round(|A_C - A_P| |S+| / |A_P ∩ A_C|)`` uniform draws with replacement
       from ``A_C - A_P`` (keeps the two parts in population proportion; halves round up).
    3. ``S_rem``: ``max(0, n_C - |S+| - |S-|)`` uniform draws with replacement from ``A_C``.
    4. ``S_C = Mix(S+ + S-) + S_rem`` truncated to ``n_C``.

    That is the shuffle mix. The sample mix replaces steps 2-4 by independent draws
    (:func:`_independent_mix`): the paper's draw with replacement from ``S+ + S-`` repeats
    its items and widens the estimate's spread.

    If ``S_P`` is a uniform with-replacement sample of ``A_P``, every position of ``S_C`` is
    (up to the rounding in step 2) uniform over ``A_C``, so the share of positives is an
    unbiased estimate of the child's precision (Lemmas 1, 2).

    Parameters
    ----------
    parent_positive_ids : array_like
        ``A_P``, the parent's predicted-positive item IDs (integers or strings, distinct).
    parent_sample_ids : array_like
        ``S_P``, the parent's labeled sample, in the order it was drawn; every item must
        lie in ``A_P``. May be empty.
    child_positive_ids : array_like
        ``A_C``, the child's predicted-positive item IDs (distinct, same ID type).
    n_child : int
        ``n_C >= 1``, the child's sample size (e.g. from :func:`precision_sample_size`).
    mix : {"shuffle", "sample"}
        ``"shuffle"`` (UniformShuffle: a permutation, a proportional stratified sample,
        slightly tighter) or ``"sample"`` (independent uniform draws of ``A_C`` that take
        the ``S+`` items in order, each once; needed when the child is itself the parent
        of further children; see :func:`_independent_mix`).
    rng : int, numpy.random.Generator or None
        Seed or generator, for reproducible samples.

    Returns
    -------
    RecycledSample

    Raises
    ------
    InputError
        Empty or duplicated sets, IDs of mixed types, a sampled item outside ``A_P``,
        ``n_child < 1`` or an unknown ``mix``.
    """
    mix = _mix(mix)
    n_child = validation.whole_at_least("n_child", n_child, 1)
    parent_set = _id_array("parent_positive_ids", parent_positive_ids)
    child_set = _id_array("child_positive_ids", child_positive_ids)
    parent_sample = _id_array("parent_sample_ids", parent_sample_ids)
    if parent_set.size == 0:
        raise InputError("parent_positive_ids is empty: the parent has no predicted positives")
    if child_set.size == 0:
        raise InputError("child_positive_ids is empty: the child has no predicted positives")
    family = _id_family(parent_set)
    if _id_family(child_set) != family:
        raise InputError(
            f"child_positive_ids are {_id_family(child_set)}s but "
            f"parent_positive_ids are {family}s; use one kind of item ID"
        )
    if parent_sample.size == 0:
        parent_sample = parent_sample.astype(parent_set.dtype)
    elif _id_family(parent_sample) != family:
        raise InputError(
            f"parent_sample_ids are {_id_family(parent_sample)}s but "
            f"parent_positive_ids are {family}s; use one kind of item ID"
        )
    for name, ids in (("parent_positive_ids", parent_set), ("child_positive_ids", child_set)):
        duplicate = _first_duplicate(ids)
        if duplicate is not None:
            raise InputError(f"{name} lists item {duplicate!r} more than once")
    strays = parent_sample[~np.isin(parent_sample, parent_set)]
    if strays.size:
        raise InputError(
            f"parent_sample_ids must lie in parent_positive_ids; {np.unique(strays).size} "
            f"item(s) do not: {_describe_ids(np.unique(strays))}"
        )
    generator = _generator(rng)

    outside_parent = np.setdiff1d(child_set, parent_set)
    overlap = child_set.size - outside_parent.size
    s_plus = parent_sample[np.isin(parent_sample, child_set)]
    # Half-up rounding in integers: floor((2 a b + c) / 2c) = round_half_up(a b / c).
    s_minus_size = (
        (2 * outside_parent.size * s_plus.size + overlap) // (2 * overlap) if overlap else 0
    )

    if mix == "shuffle":
        s_minus = outside_parent[generator.integers(0, max(outside_parent.size, 1), s_minus_size)]
        mixed = np.concatenate([s_plus, s_minus])
        mixed_origin = np.repeat(
            [ORIGIN_PARENT_SAMPLE, ORIGIN_OUTSIDE_PARENT], [s_plus.size, s_minus_size]
        )
        order = generator.permutation(mixed.size)
        mixed, mixed_origin = mixed[order][:n_child], mixed_origin[order][:n_child]
        remainder_size = max(0, n_child - s_plus.size - s_minus_size)
        remainder = child_set[generator.integers(0, child_set.size, remainder_size)]
        sample_ids = np.concatenate([mixed, remainder])
        origin = np.concatenate([mixed_origin, np.repeat(ORIGIN_REMAINDER, remainder_size)])
    else:
        sample_ids, origin, s_minus_size, remainder_size = _independent_mix(
            generator, s_plus, outside_parent, np.setdiff1d(child_set, outside_parent), n_child
        )

    from_parent_sample = origin == ORIGIN_PARENT_SAMPLE
    already_labeled = np.isin(sample_ids, parent_sample)
    unlabeled = sample_ids[~already_labeled]
    _, first_seen = np.unique(unlabeled, return_index=True)
    ids_to_label = unlabeled[np.sort(first_seen)]

    return RecycledSample(
        sample_ids=_read_only(sample_ids),
        origin=_read_only(origin.astype(str)),
        from_parent_sample=_read_only(from_parent_sample),
        already_labeled=_read_only(already_labeled),
        ids_to_label=_read_only(ids_to_label),
        n_child=n_child,
        n_reused=int(from_parent_sample.sum()),
        n_new_labels=int(ids_to_label.size),
        s_plus_size=int(s_plus.size),
        s_minus_size=int(s_minus_size),
        remainder_size=int(remainder_size),
        pir=overlap / parent_set.size,
        cir=overlap / child_set.size,
        mix=mix,
    )


# --------------------------------------------------------------------------------------
# 3.2 Planning from set sizes (no IDs): Lemma 3 by simulation
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildSet:
    """One child classifier as the planner sees it: sizes only (methods §13).

    Attributes
    ----------
    size : int
        ``|A_C|``, the child's predicted-positive set size (>= 1).
    overlap : int
        ``|A_P ∩ A_C|`` (at most ``size`` and the parent's size).
    n_child : int or None
        The child's sample size ``n_C``; ``None`` takes the planner's default.
    n_parent : int or None
        The parent's sample size ``n_P`` this child recycles; ``None`` takes the default.
    name : str
        A label for reports ("model B", ...).
    """

    size: int
    overlap: int
    n_child: int | None = None
    n_parent: int | None = None
    name: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildSavings:
    """Expected labels and saving for one child (methods §13, Lemma 3), by simulation.

    Attributes
    ----------
    n_parent, n_child : int
        ``n_P`` and ``n_C`` used.
    pir, cir : float
        Parent and child intersection ratios.
    expected_reused : float
        Mean over trials of the positions of ``S_C`` filled from the parent's sample.
    expected_new_labels : float
        ``n_C - expected_reused``: labels the child still needs on average.
    savings_pct_mean : float
        Mean saving in percent of ``n_C``.
    savings_pct_interval : tuple of float
        2.5th and 97.5th percentiles of the saving over trials, in percent of ``n_C``.
    reused_per_trial : numpy.ndarray
        The simulated counts (read-only; for histograms; not part of :meth:`to_dict`).
    notes : tuple of str
        Cautions: a sample larger than the set it is drawn from (allowed, the parent's
        sample may repeat items, but the default size for a margin assumes a large set).
    """

    n_parent: int
    n_child: int
    pir: float
    cir: float
    expected_reused: float
    expected_new_labels: float
    savings_pct_mean: float
    savings_pct_interval: tuple[float, float]
    reused_per_trial: np.ndarray = field(repr=False)
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """The ``prplanner ensemble`` JSON contract (its JSON contract), plus ``notes``."""
        return {
            "n_parent": self.n_parent,
            "n_child": self.n_child,
            "pir": self.pir,
            "cir": self.cir,
            "expected_reused": self.expected_reused,
            "expected_new_labels": self.expected_new_labels,
            "savings_pct_mean": self.savings_pct_mean,
            "savings_pct_interval": list(self.savings_pct_interval),
            "notes": list(self.notes),
        }


def sample_size_notes(
    n_parent: int, parent_size: int, n_child: int, child_size: int
) -> tuple[str, ...]:
    """Say when a sample is larger than the set it is drawn from (see :class:`ChildSavings`)."""
    notes = []
    for who, sample, size in (("parent", n_parent, parent_size), ("child", n_child, child_size)):
        if sample > size:
            notes.append(
                f"the {who}'s sample ({sample:,}) is larger than its set ({size:,} items); "
                f"consider a smaller sample ({named('n_' + who)}) or a sample size with the "
                f"finite population correction for a population of {size:,}"
            )
    return tuple(notes)


@dataclass(frozen=True, slots=True, kw_only=True)
class EnsemblePlan:
    """Labels each child needs when it recycles one parent's sample (methods §13).

    Attributes
    ----------
    parent_size : int
        ``|A_P|``.
    children : tuple of ChildSet
        The children as given (sample sizes filled in).
    savings : tuple of ChildSavings
        One per child, same order.
    mix : str
        ``"shuffle"`` or ``"sample"``.
    trials : int
        Simulated repetitions of Algorithm 1 per child.
    """

    parent_size: int
    children: tuple[ChildSet, ...]
    savings: tuple[ChildSavings, ...]
    mix: str
    trials: int

    @property
    def total_new_labels(self) -> float:
        """Expected labels to buy over all children (the parent's own sample excluded)."""
        return float(sum(child.expected_new_labels for child in self.savings))

    def to_dict(self) -> dict[str, object]:
        """Plain values for JSON and Excel export; each child row extends the CLI contract."""
        rows = []
        for child, saving in zip(self.children, self.savings, strict=True):
            rows.append(
                {
                    "name": child.name,
                    "child_size": child.size,
                    "overlap": child.overlap,
                    **saving.to_dict(),
                }
            )
        return {
            "parent_size": self.parent_size,
            "mix": self.mix,
            "trials": self.trials,
            "total_new_labels": self.total_new_labels,
            "children": rows,
        }


def _child_set(index: int, child: object) -> ChildSet:
    if isinstance(child, ChildSet):
        return child
    if isinstance(child, Mapping):
        try:
            return ChildSet(**child)
        except TypeError as exc:
            raise InputError(f"child {index}: {exc}") from None
    raise InputError(
        f"child {index} must be a ChildSet or a mapping with size and overlap, got {child!r}"
    )


def _simulate_reused(generator, parent_size, sizes, overlaps, n_parents, n_childs, trials, mix):
    """Reused-label counts, shape ``(children, trials)``, by Lemma 3 (see the caller)."""
    shape = (sizes.shape[0], trials)
    s_plus = generator.binomial(n_parents, overlaps / parent_size, size=shape)
    if mix != "shuffle":  # _independent_mix: each position shared with probability CIR
        return np.minimum(s_plus, generator.binomial(n_childs, overlaps / sizes, size=shape))
    outside = sizes - overlaps
    s_minus = np.where(
        overlaps > 0, (2 * outside * s_plus + overlaps) // (2 * np.maximum(overlaps, 1)), 0
    )
    mixed_size = s_plus + s_minus
    kept = np.minimum(n_childs, mixed_size)
    return generator.hypergeometric(s_plus, s_minus, kept)


def mix_too_large(
    size: int, overlap: int, n_parent: int, mix: str, names: Mapping[str, str] | None = None
) -> str | None:
    """Why :func:`plan_recycled_labels` cannot simulate a child (``None`` when it can).

    A child of ``size`` items, ``overlap`` of them shared with the parent whose labeled
    sample has ``n_parent`` items, mixes up to ``|S+| <= n_parent`` reused and
    ``|S-| <= round(n_parent (size - overlap) / overlap)`` new items. The shuffle mix needs
    both below :data:`MAX_MIX_COUNT` (numpy's hypergeometric draw); both mixes need
    ``2 n_parent (size - overlap)`` within 64-bit integers. The reason names the
    parameters as the keyword arguments do, or as ``names`` maps them (e.g. to flags).
    """
    name = {key: key for key in ("size", "overlap", "n_parent", "mix")} | dict(names or {})
    if overlap == 0:
        return None  # |S+| = |S-| = 0
    product = 2 * (size - overlap) * n_parent + overlap
    largest = max(n_parent, product // (2 * overlap))
    if product > _MAX_INT64:
        return (
            f"they put up to {largest:,} items in the simulated mix and {name['n_parent']} x "
            f"({name['size']} - {name['overlap']}) must be below {_MAX_INT64 // 2:,}"
        )
    if mix == "shuffle" and largest > MAX_MIX_COUNT:
        return (
            f"they put up to {largest:,} items in the simulated mix, at most "
            f"{MAX_MIX_COUNT:,} with {name['mix']} shuffle"
        )
    return None


def _labels_or_default(name: str, value: int | None) -> int:
    """``value`` checked, or the labels a precision margin of DEFAULT_MARGIN needs."""
    if value is None:
        return precision_sample_size(DEFAULT_MARGIN, DEFAULT_CONFIDENCE).n
    return validation.whole_at_least(name, value, 1)


def plan_recycled_labels(
    parent_size: int,
    children: Sequence[ChildSet | Mapping],
    *,
    n_parent: int | None = None,
    n_child: int | None = None,
    mix: str = "shuffle",
    trials: int = 200,
    rng: int | np.random.Generator | None = None,
    control: TaskControl | None = None,
) -> EnsemblePlan:
    """Labels each child still needs, and the saving's spread, from sizes alone (methods §13).

    Simulates Algorithm 1 through its counts (Lemma 3), each child's trials at once:
    ``|S+| ~ Bin(n_P, PIR)``; ``|S-| = round(|A_C - A_P| |S+| / |A_P ∩ A_C|)`` (population
    proportion, halves up, as in :func:`recycle_samples_for_precision`); the reused count
    is ``|S+|`` when ``|S+| + |S-| <= n_C`` (i.e. ``|S+|/n_C <= CIR`` up to rounding), else
    the ``S+`` items among the first ``n_C`` of the mixed sequence: hypergeometric
    ``(|S+|, |S-|, n_C)`` for the shuffle mix. The sample mix (independent draws) reuses
    ``min(|S+|, B)`` labels with ``B ~ Bin(n_C, CIR)`` the positions that fall in the
    shared part.

    With ``n_P = n_C`` the mean saving is close to ``min(PIR, CIR)``. Remainder draws that
    hit an already labeled item by chance are not counted (small when ``n_P << |A_C|``).

    Parameters
    ----------
    parent_size : int
        ``|A_P| >= 1``.
    children : sequence of ChildSet or mappings
        Each with ``size`` and ``overlap`` and optionally ``n_child``, ``n_parent``,
        ``name``.
    n_parent, n_child : int, optional
        Defaults for children that give none: the sample size for margin 0.03 at 95 %
        (1068, methods §13).
    mix : {"shuffle", "sample"}
        Algorithm 1's ``Mix``.
    trials : int
        Simulated repetitions (>= 1).
    rng : int, numpy.random.Generator or None
        Seed or generator.
    control : TaskControl, optional
        Progress and cancel between chunks of :data:`TRIALS_PER_CHUNK` trials (a run that
        fits one chunk draws exactly the stream it would draw without chunking).

    Returns
    -------
    EnsemblePlan

    Raises
    ------
    InputError
        For sizes that are not whole numbers >= 1, an overlap larger than either set, no
        children, bad ``trials`` or ``mix``.
    """
    mix = _mix(mix)
    parent_size = validation.whole_at_least("parent_size", parent_size, 1)
    trials = validation.whole_at_least("trials", trials, 1)
    if trials > MAX_TRIALS:
        raise InputError(f"trials must be at most {MAX_TRIALS:,}, got {trials!r}")
    if isinstance(children, ChildSet | Mapping) or not isinstance(children, Sequence):
        raise InputError(
            f"children must be a list of ChildSet (or mappings), got {type(children).__name__}"
        )
    if not children:
        raise InputError("children is empty: give at least one child classifier")
    parent_default = _labels_or_default("n_parent", n_parent)
    child_default = _labels_or_default("n_child", n_child)

    cleaned: list[ChildSet] = []
    #: Each child's (n_parent, n_child), its own or the defaults.
    labels: list[tuple[int, int]] = []
    for index, raw in enumerate(children):
        child = _child_set(index, raw)
        where = f"child {index}" + (f" ({child.name})" if child.name else "")
        size = validation.whole_at_least(f"{where}: size", child.size, 1)
        overlap = validation.count(f"{where}: overlap", child.overlap)
        if overlap > min(size, parent_size):
            which = "child's" if size <= parent_size else "parent's"
            raise InputError(
                f"{where}: overlap {overlap} is larger than the {which} set "
                f"(child size {size}, parent size {parent_size})"
            )
        child_n = child_default
        if child.n_child is not None:
            child_n = validation.whole_at_least(f"{where}: n_child", child.n_child, 1)
        parent_n = parent_default
        if child.n_parent is not None:
            parent_n = validation.whole_at_least(f"{where}: n_parent", child.n_parent, 1)
        problem = mix_too_large(size, overlap, parent_n, mix)
        if problem is not None:
            raise InputError(
                f"{where}: n_parent {parent_n:,}, size {size:,} and overlap {overlap:,} are too "
                f"large to simulate: {problem}"
            )
        cleaned.append(
            ChildSet(
                size=size, overlap=overlap, n_child=child_n, n_parent=parent_n, name=str(child.name)
            )
        )
        labels.append((parent_n, child_n))

    sizes = np.array([child.size for child in cleaned], dtype=np.int64)[:, None]
    overlaps = np.array([child.overlap for child in cleaned], dtype=np.int64)[:, None]
    n_parents = np.array([parent_n for parent_n, _ in labels], dtype=np.int64)[:, None]
    n_childs = np.array([child_n for _, child_n in labels], dtype=np.int64)[:, None]
    rows = []
    total = trials * len(cleaned)
    for row, generator in enumerate(_child_generators(rng, len(cleaned))):
        one = slice(row, row + 1)
        chunks = []
        for start in range(0, trials, TRIALS_PER_CHUNK):
            progress.step(control, row * trials + start, total)
            chunk = min(TRIALS_PER_CHUNK, trials - start)
            chunks.append(
                _simulate_reused(
                    generator,
                    parent_size,
                    sizes[one],
                    overlaps[one],
                    n_parents[one],
                    n_childs[one],
                    chunk,
                    mix,
                )
            )
        rows.append(np.concatenate(chunks, axis=1))
    progress.step(control, total, total)
    reused = np.concatenate(rows, axis=0)

    savings_pct = 100.0 * reused / n_childs
    mean_reused = reused.mean(axis=1)
    mean_pct = savings_pct.mean(axis=1)
    bounds = np.percentile(savings_pct, [2.5, 97.5], axis=1)
    results = tuple(
        ChildSavings(
            n_parent=parent_n,
            n_child=child_n,
            pir=child.overlap / parent_size,
            cir=child.overlap / child.size,
            expected_reused=float(mean_reused[row]),
            expected_new_labels=float(child_n - mean_reused[row]),
            savings_pct_mean=float(mean_pct[row]),
            savings_pct_interval=(float(bounds[0, row]), float(bounds[1, row])),
            reused_per_trial=_read_only(reused[row].copy()),
            notes=sample_size_notes(parent_n, parent_size, child_n, child.size),
        )
        for row, (child, (parent_n, child_n)) in enumerate(zip(cleaned, labels, strict=True))
    )
    return EnsemblePlan(
        parent_size=parent_size, children=tuple(cleaned), savings=results, mix=mix, trials=trials
    )


# --------------------------------------------------------------------------------------
# 3.3 Recall of several classifiers
# --------------------------------------------------------------------------------------


def _float_array(name: str, values: object, *, low: float, high: float | None) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numbers, got {values!r}") from None
    finite = np.isfinite(array)
    inside = finite & (array >= low) & (True if high is None else array <= high)
    if not np.all(inside):
        bad = array[~inside].ravel()[0].item()
        limits = f"between {low:g} and {high:g}" if high is not None else f">= {low:g}"
        raise InputError(f"{name} must be {limits}, got {bad!r}")
    return array


def _count_array(name: str, values: object) -> np.ndarray:
    array = _float_array(name, values, low=0.0, high=None)
    if not np.all(array == np.floor(array)):
        bad = array[array != np.floor(array)].ravel()[0].item()
        raise InputError(f"{name} must be whole numbers >= 0, got {bad!r}")
    return array


def recall_from_precision_and_false_omission(
    precision, positive_set_size, false_omission_rate, negative_set_size
):
    """``recall = p |A| / (p |A| + f |B|)`` for one or many classifiers (methods §13).

    Parameters
    ----------
    precision : float or array_like
        ``p``, precision on the predicted-positive set ``A``, in [0, 1].
    positive_set_size : int or array_like
        ``|A|``.
    false_omission_rate : float or array_like
        ``f``, share of actual positives in the predicted-negative set ``B``, in [0, 1].
    negative_set_size : int or array_like
        ``|B|``.

    Returns
    -------
    float or numpy.ndarray
        Broadcast over the inputs.

    Raises
    ------
    InputError
        Rates outside [0, 1], sizes that are not whole numbers >= 0, shapes that do not
        broadcast, or no estimated actual positives (``p |A| + f |B| = 0``).
    """
    p = _float_array("precision", precision, low=0.0, high=1.0)
    a = _count_array("positive_set_size", positive_set_size)
    f = _float_array("false_omission_rate", false_omission_rate, low=0.0, high=1.0)
    b = _count_array("negative_set_size", negative_set_size)
    try:
        found = p * a
        actual = found + f * b
    except ValueError:
        raise InputError(
            "precision, set sizes and false omission rate must have matching lengths"
        ) from None
    if np.any(actual <= 0):
        raise InputError(
            "no actual positives are estimated (precision x positive set size "
            "+ false omission rate x negative set size is 0); recall is undefined"
        )
    recall = found / actual
    return float(recall) if recall.ndim == 0 else recall


@dataclass(frozen=True, slots=True, kw_only=True)
class SeveralRecalls:
    """Recall of several classifiers on one population (methods §13, the paper's Section 6).

    Attributes
    ----------
    recalls : numpy.ndarray
        ``p_i |A_i| / (p_r |A_r| + f_r |B_r|)`` for each classifier ``i``; the denominator
        is the estimated number of actual positives, shared by all. Values above 1 mean the
        estimates contradict each other and are reported, not clipped.
    true_positives : numpy.ndarray
        ``p_i |A_i|``, the estimated actual positives each classifier finds.
    actual_positives : float
        ``p_r |A_r| + f_r |B_r|`` from the reference classifier ``r``.
    reference : int
        Index of the classifier whose false omission rate was estimated.
    warnings : tuple of str
        Plain-language notes (e.g. a recall above 1).
    """

    recalls: np.ndarray
    true_positives: np.ndarray
    actual_positives: float
    reference: int
    warnings: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        """Plain values for JSON and Excel export."""
        return {
            "recalls": self.recalls.tolist(),
            "true_positives": self.true_positives.tolist(),
            "actual_positives": self.actual_positives,
            "reference": self.reference,
            "warnings": list(self.warnings),
        }


def recalls_from_precisions(
    precisions,
    positive_set_sizes,
    *,
    false_omission_rate: float,
    negative_set_size: int,
    reference: int = 0,
) -> SeveralRecalls:
    """Every classifier's recall from the precisions and one false-omission estimate (3.3).

    All classifiers look at the same population, so they share its number of actual
    positives ``N+ = p_r |A_r| + f_r |B_r|``, known from the reference classifier ``r``;
    then ``recall_i = p_i |A_i| / N+``, i.e. ``r_i / r_j = p_i |A_i| / (p_j |A_j|)``.

    Parameters
    ----------
    precisions : array_like
        ``p_i`` in [0, 1], one per classifier.
    positive_set_sizes : array_like
        ``|A_i|``, whole numbers >= 0, same length.
    false_omission_rate : float
        ``f_r`` on the reference classifier's predicted negatives, in [0, 1].
    negative_set_size : int
        ``|B_r|``.
    reference : int
        Index of the reference classifier.

    Returns
    -------
    SeveralRecalls

    Raises
    ------
    InputError
        Bad rates or sizes, unequal lengths, a reference index out of range, or no
        estimated actual positives.
    """
    p = _float_array("precisions", precisions, low=0.0, high=1.0)
    sizes = _count_array("positive_set_sizes", positive_set_sizes)
    if p.ndim != 1 or p.size == 0:
        raise InputError(f"precisions must be a non-empty list, got {precisions!r}")
    if sizes.shape != p.shape:
        raise InputError(
            f"positive_set_sizes must have one size per precision: "
            f"{sizes.size} sizes for {p.size} precisions"
        )
    if (
        not isinstance(reference, numbers.Integral)
        or isinstance(reference, bool)
        or not 0 <= reference < p.size
    ):
        raise InputError(
            f"reference must be a classifier index from 0 to {p.size - 1}, got {reference!r}"
        )
    f = _float_array("false_omission_rate", false_omission_rate, low=0.0, high=1.0)
    b = _count_array("negative_set_size", negative_set_size)
    if f.ndim or b.ndim:
        raise InputError(
            "false_omission_rate and negative_set_size must be single numbers "
            "(of the reference classifier)"
        )
    found = p * sizes
    actual_positives = float(found[reference] + f * b)
    if actual_positives <= 0:
        raise InputError(
            "no actual positives are estimated (the reference classifier's "
            "precision x positive set size + false omission rate x negative set "
            "size is 0); recall is undefined"
        )
    recalls = found / actual_positives
    warnings = tuple(
        f"classifier {index}: recall estimate {value:.3f} exceeds 1; the precisions and the "
        "false omission rate disagree (label more items)"
        for index, value in enumerate(recalls)
        if value > 1
    )
    return SeveralRecalls(
        recalls=_read_only(recalls),
        true_positives=_read_only(found),
        actual_positives=actual_positives,
        reference=int(reference),
        warnings=warnings,
    )
