"""Several classifiers from one labeling budget (methods §13).

Every check compares against something computed independently of ``core.ensemble``:
hand-worked sample sizes kept as data (``tests/data/ensemble_sample_sizes.json``), a
pure-Python item-by-item transcription of Algorithm 1 (``literal_algorithm_1`` below),
chi-square tests of uniformity, simulation for unbiasedness, the ``min(PIR, CIR)`` rule of
thumb of methods §13 and direct recall computations from confusion counts.
"""

from __future__ import annotations

import dataclasses
import json
import math
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from core.ensemble import (
    MIXES,
    ChildSet,
    plan_recycled_labels,
    precision_sample_size,
    recall_from_precision_and_false_omission,
    recalls_from_precisions,
    recycle_samples_for_precision,
    recycled_precision,
)
from core.errors import InputError
from tests.conftest import REFERENCE_DATA

SAMPLE_SIZES = json.loads((REFERENCE_DATA / "ensemble_sample_sizes.json").read_text())
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------------------
# 3.1 Sample size
# --------------------------------------------------------------------------------------


def test_public_example_needs_1068_labels():
    result = precision_sample_size(0.03, 0.95)
    assert (result.n, result.p_used) == (1068, 0.5)


@pytest.mark.parametrize("case", SAMPLE_SIZES["sizes"], ids=lambda case: str(case))
def test_sample_size_matches_hand_worked_values(case):
    result = precision_sample_size(
        case["margin"], case["confidence"], precision_floor=case["precision_floor"]
    )
    assert result.n == case["n"]
    assert result.p_used == case["p_used"]
    assert result.z == pytest.approx(SAMPLE_SIZES["z"][f"{case['confidence']:.2f}"], abs=1e-9)
    assert result.n_without_correction == result.n


@pytest.mark.parametrize("case", SAMPLE_SIZES["finite_population"], ids=lambda case: str(case))
def test_finite_population_correction_matches_hand_worked_values(case):
    result = precision_sample_size(
        case["margin"], case["confidence"], population=case["population"]
    )
    assert result.n_without_correction == case["n_without_correction"]
    assert result.n == case["n"]


@FAST
@given(
    margin=st.floats(0.005, 0.3),
    confidence=st.sampled_from([0.8, 0.9, 0.95, 0.99]),
    population=st.integers(1, 10**7),
)
def test_corrected_size_never_exceeds_the_population_or_the_uncorrected_size(
    margin, confidence, population
):
    corrected = precision_sample_size(margin, confidence, population=population)
    assert 1 <= corrected.n <= min(population, corrected.n_without_correction)
    # The smallest whole n whose interval is wide enough: one fewer would be too few.
    n0 = corrected.n_without_correction
    assert n0 >= corrected.z**2 * 0.25 / margin**2 - 1e-6
    assert n0 - 1 < corrected.z**2 * 0.25 / margin**2 or n0 == 1


@FAST
@given(margin=st.floats(0.005, 0.2), shrink=st.floats(0.3, 0.95), floor=st.floats(0.5, 0.99))
def test_tighter_margins_need_more_labels_and_higher_floors_fewer(margin, shrink, floor):
    assert precision_sample_size(margin * shrink).n >= precision_sample_size(margin).n
    with_floor = precision_sample_size(margin, precision_floor=floor)
    assert with_floor.n <= precision_sample_size(margin).n
    assert with_floor.p_used == floor


def test_sample_size_result_is_frozen_and_exports_the_cli_keys():
    result = precision_sample_size(0.05, 0.9, population=1000)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.n = 3
    assert result.to_dict() == {"n": result.n, "p_used": 0.5, "z": result.z, "population": 1000}


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"margin": 0.0}, "0.0"),
        ({"margin": 0.5}, "0.5"),
        ({"margin": -0.02}, "-0.02"),
        ({"margin": 0.03, "confidence": 1.0}, "1.0"),
        ({"margin": 0.03, "precision_floor": 1.0}, "precision_floor"),
        ({"margin": 0.03, "population": 0}, "population"),
        ({"margin": 0.03, "population": 2.5}, "2.5"),
    ],
)
def test_sample_size_rejects_bad_input_naming_the_value(kwargs, named):
    with pytest.raises(InputError, match=named):
        precision_sample_size(**kwargs)


# --------------------------------------------------------------------------------------
# 3.2 Algorithm 1 on item IDs
# --------------------------------------------------------------------------------------


def literal_algorithm_1(parent_set, child_set, n_parent, n_child, mix, rnd):
    """One trial of Algorithm 1 written out item by item in plain Python (the reference).

    Returns the number of positions of the child's sample that come from ``S+``.
    """
    parent_sample = [rnd.choice(parent_set) for _ in range(n_parent)]
    child_members, parent_members = set(child_set), set(parent_set)
    s_plus = [item for item in parent_sample if item in child_members]
    outside = [item for item in child_set if item not in parent_members]
    overlap = len(child_set) - len(outside)
    if mix == "sample":
        # Independent draws: each position is shared with probability CIR and then takes
        # the next S+ item while there is one.
        shared = [item for item in child_set if item in parent_members]
        unused = list(s_plus)
        reused = 0
        for _ in range(n_child):
            if rnd.random() < len(shared) / len(child_set) and unused:
                unused.pop(0)
                reused += 1
        return reused
    s_minus_size = int(len(outside) * len(s_plus) / overlap + 0.5) if overlap else 0
    s_minus = [rnd.choice(outside) for _ in range(s_minus_size)]
    tagged = [(item, True) for item in s_plus] + [(item, False) for item in s_minus]
    rnd.shuffle(tagged)
    tagged = tagged[:n_child]
    remainder = max(0, n_child - len(s_plus) - len(s_minus))
    tagged += [(rnd.choice(child_set), False) for _ in range(remainder)]
    assert len(tagged) == n_child
    return sum(from_parent for _, from_parent in tagged)


def test_hand_worked_recycling_counts():
    parent_set = np.arange(10)  # A_P = 0..9
    child_set = np.arange(5, 15)  # A_C = 5..14: overlap 5..9, outside 10..14
    parent_sample = np.array([1, 5, 6, 5, 9, 2])  # S+ = [5, 6, 5, 9]
    result = recycle_samples_for_precision(parent_set, parent_sample, child_set, 10, rng=3)
    # |S-| = round(5 * 4 / 5) = 4; |S_rem| = 10 - 4 - 4 = 2.
    assert (result.s_plus_size, result.s_minus_size, result.remainder_size) == (4, 4, 2)
    assert (result.pir, result.cir) == (0.5, 0.5)
    assert sorted(result.sample_ids[result.from_parent_sample].tolist()) == [5, 5, 6, 9]
    assert set(result.sample_ids[result.origin == "outside_parent"].tolist()) <= set(range(10, 15))
    assert result.origin[-2:].tolist() == ["remainder", "remainder"]
    assert result.n_reused == 4

    truncated = recycle_samples_for_precision(parent_set, parent_sample, child_set, 6, rng=3)
    # The 8 mixed items are cut to 6; nothing is left for the remainder.
    assert truncated.sample_ids.size == 6
    assert truncated.remainder_size == 0
    assert "remainder" not in truncated.origin.tolist()


def test_s_minus_rounds_halves_up():
    # |A_C - A_P| = 3, overlap 2, |S+| = 1: 3 * 1 / 2 = 1.5 -> 2.
    result = recycle_samples_for_precision([1, 2, 3], [2], [2, 3, 7, 8, 9], 10, rng=0)
    assert result.s_minus_size == 2


def test_string_ids_and_an_empty_parent_sample():
    parent_set = [f"doc-{i}" for i in range(20)]
    child_set = [f"doc-{i}" for i in range(10, 40)]
    labeled = ["doc-12", "doc-3", "doc-12", "doc-15"]
    result = recycle_samples_for_precision(parent_set, labeled, child_set, 25, mix="sample", rng=5)
    assert result.sample_ids.dtype.kind == "U"
    assert set(result.sample_ids.tolist()) <= set(child_set)
    assert not set(result.ids_to_label.tolist()) & set(labeled)

    fresh = recycle_samples_for_precision(parent_set, [], child_set, 7, rng=5)
    assert fresh.n_reused == 0 and fresh.origin.tolist() == ["remainder"] * 7


def test_seeded_runs_repeat_and_generators_are_accepted():
    args = (np.arange(100), np.arange(0, 100, 3), np.arange(50, 170), 40)
    first = recycle_samples_for_precision(*args, rng=11)
    second = recycle_samples_for_precision(*args, rng=11)
    third = recycle_samples_for_precision(*args, rng=np.random.default_rng(11))
    assert first.sample_ids.tolist() == second.sample_ids.tolist() == third.sample_ids.tolist()
    with pytest.raises(ValueError):
        first.sample_ids[0] = -1  # read-only, as the frozen result promises


@FAST
@given(
    parent_size=st.integers(1, 60),
    child_size=st.integers(1, 60),
    overlap_share=st.floats(0, 1),
    n_parent=st.integers(0, 80),
    n_child=st.integers(1, 80),
    mix=st.sampled_from(MIXES),
    seed=st.integers(0, 2**32 - 1),
)
def test_recycled_sample_is_built_as_algorithm_1_says(
    parent_size, child_size, overlap_share, n_parent, n_child, mix, seed
):
    overlap = round(overlap_share * min(parent_size, child_size))
    parent_set = np.arange(parent_size)
    child_set = np.arange(parent_size - overlap, parent_size - overlap + child_size)
    rng = np.random.default_rng(seed)
    parent_sample = rng.choice(parent_set, n_parent)
    result = recycle_samples_for_precision(
        parent_set, parent_sample, child_set, n_child, mix=mix, rng=rng
    )
    s_plus = [item for item in parent_sample.tolist() if parent_size - overlap <= item]
    outside = child_size - overlap
    assert result.sample_ids.size == n_child
    assert result.s_plus_size == len(s_plus)
    expected_minus = math.floor(outside * len(s_plus) / overlap + 0.5) if overlap else 0
    if mix == "shuffle":
        assert result.s_minus_size == expected_minus
        assert result.remainder_size == max(0, n_child - len(s_plus) - expected_minus)
    else:
        # Independent draws: the S+ items in their order, each once, then fresh draws.
        reused = result.sample_ids[result.from_parent_sample].tolist()
        assert reused == s_plus[: len(reused)]
        shared_positions = n_child - result.s_minus_size
        assert len(reused) == min(shared_positions, len(s_plus))
        assert result.remainder_size == shared_positions - len(reused)
        assert set(result.sample_ids[result.origin == "remainder"].tolist()) <= set(
            range(parent_size - overlap, parent_size)
        )
    assert set(result.sample_ids.tolist()) <= set(child_set.tolist())
    assert set(result.sample_ids[result.from_parent_sample].tolist()) <= set(s_plus)
    assert set(result.sample_ids[result.origin == "outside_parent"].tolist()) <= set(
        range(parent_size, parent_size - overlap + child_size)
    )
    assert result.n_reused == int(result.from_parent_sample.sum())
    if mix == "shuffle" and len(s_plus) + expected_minus <= n_child:
        # Nothing truncated: a permutation keeps every S+ item exactly once.
        assert sorted(result.sample_ids[result.from_parent_sample].tolist()) == sorted(s_plus)
    labeled = set(parent_sample.tolist())
    to_label = result.ids_to_label.tolist()
    assert len(to_label) == len(set(to_label)) == result.n_new_labels
    assert set(to_label) == set(result.sample_ids.tolist()) - labeled
    assert np.array_equal(result.already_labeled, np.isin(result.sample_ids, parent_sample))


@pytest.mark.parametrize("mix", MIXES)
def test_every_item_of_the_child_set_is_equally_likely(mix):
    # |A_C - A_P| / |A_P ∩ A_C| = 2 exactly, so step 2 needs no rounding and each position
    # must be exactly uniform over the 30 items of A_C. One item per position and draw keeps
    # the counts multinomial (positions of one draw are dependent under the sample mix).
    parent_set, child_set = np.arange(40), np.arange(30, 60)
    n_parent, n_child, draws = 20, 15, 3000
    positions = np.array([0, n_child // 2, n_child - 1])
    rng = np.random.default_rng(20240611)
    counts = np.zeros((positions.size, child_set.size))
    for _ in range(draws):
        parent_sample = rng.choice(parent_set, n_parent)
        result = recycle_samples_for_precision(
            parent_set, parent_sample, child_set, n_child, mix=mix, rng=rng
        )
        counts[np.arange(positions.size), result.sample_ids[positions] - 30] += 1
    for position, row in zip(positions, counts, strict=True):
        assert chisquare(row).pvalue > 1e-3, (position, row)


#: Child A_C = 30..59: the 10 shared items are mostly positive, the 20 others mostly
#: negative, so any tilt towards the parent's part would show as bias.
CHILD_LABELS = {
    item: (item < 40 and item != 39) or item in (40, 45, 50, 55) for item in range(30, 60)
}
TRUE_CHILD_PRECISION = 13 / 30


def test_the_sample_mix_draws_the_childs_positions_independently():
    # The paper's UniformSample re-drew the list S+ + S- with replacement from itself: its
    # positions repeated items of that list, and the estimate's spread was 1.2-1.4 times a
    # simple random sample's (audit 13). Independent uniform draws of the 30 items of A_C
    # give E[distinct] = N (1 - (1 - 1/N)^n) and the binomial variance of the share
    # (references computed here from those formulas).
    parent_set, child_set = np.arange(40), np.arange(30, 60)
    n_parent, n_child, draws = 20, 15, 4000
    child_labels = (child_set % 3 == 0).astype(float)  # precision 1/3
    rng = np.random.default_rng(13)
    distinct, shares = np.empty(draws), np.empty(draws)
    for run in range(draws):
        result = recycle_samples_for_precision(
            parent_set, rng.choice(parent_set, n_parent), child_set, n_child, mix="sample", rng=rng
        )
        distinct[run] = np.unique(result.sample_ids).size
        shares[run] = child_labels[result.sample_ids - 30].mean()
    size = child_set.size
    expected_distinct = size * (1 - (1 - 1 / size) ** n_child)
    assert abs(distinct.mean() - expected_distinct) < 4 * distinct.std() / math.sqrt(draws)
    binomial_variance = (1 / 3) * (2 / 3) / n_child
    # The sample variance of 4,000 draws is within about 5 % of the truth (4 SE ~ 9 %).
    assert shares.var(ddof=1) / binomial_variance == pytest.approx(1, abs=0.09)


@pytest.mark.parametrize("mix", MIXES)
@pytest.mark.parametrize(
    ("n_parent", "n_child"),
    [(20, 15), (60, 15), (4, 15)],
    ids=["parts-and-remainder", "truncated", "mostly-remainder"],
)
def test_child_precision_estimate_is_unbiased(mix, n_parent, n_child):
    parent_set, child_set = np.arange(40), np.arange(30, 60)
    rng = np.random.default_rng(7 + n_parent)
    runs = 2000
    estimates = np.empty(runs)
    for run in range(runs):
        parent_sample = rng.choice(parent_set, n_parent)
        result = recycle_samples_for_precision(
            parent_set, parent_sample, child_set, n_child, mix=mix, rng=rng
        )
        estimates[run] = result.precision(CHILD_LABELS)
    standard_error = estimates.std(ddof=1) / math.sqrt(runs)
    assert abs(estimates.mean() - TRUE_CHILD_PRECISION) < 4 * standard_error


def test_precision_from_a_mapping_or_from_arrays_counts_repeats():
    sample = np.array([3, 5, 3, 8])
    truth = {3: True, 5: False, 8: True, 99: False}
    assert recycled_precision(sample, truth) == 3 / 4
    ids = np.array([99, 8, 5, 3])
    flags = np.array([0, 1, 0, 1])
    assert recycled_precision(sample, (ids, flags)) == 3 / 4
    strings = np.array(["a", "b", "a"])
    assert recycled_precision(strings, (["b", "a"], [False, True])) == 2 / 3


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ({3: True, 5: False}, "missing .* 8"),
        (([3, 5], [1, 0]), "missing .* 8"),
        ({3: True, 5: 2, 8: True}, "True/False .* 2"),
        (([3, 5, 8, 8], [1, 0, 1, 0]), "item 8 is labeled both"),
        (([3, 5], [1]), "2 IDs and 1 labels"),
        ((["3", "5", "8"], [1, 0, 1]), "strings"),
        ("yes", "mapping"),
    ],
)
def test_precision_rejects_incomplete_or_odd_labels(labels, message):
    with pytest.raises(InputError, match=message):
        recycled_precision([3, 5, 8], labels)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([1, 2, 3], [1, 7], [2, 3, 4], 5), {}, "parent_sample_ids must lie .* 7"),
        (([1, 2, 3], [1], [2, 3, 4], 0), {}, "n_child .* 0"),
        (([1, 2, 3], [1], [2, 3, 4], 5), {"mix": "stratified"}, "mix .* 'stratified'"),
        (([1, 2, 2], [1], [2, 3, 4], 5), {}, "parent_positive_ids lists item 2"),
        (([1, 2, 3], [1], [4, 4], 5), {}, "child_positive_ids lists item 4"),
        (([1, 2, 3], [1], ["2", "3"], 5), {}, "one kind of item ID"),
        (([], [], [2, 3], 5), {}, "parent_positive_ids is empty"),
        (([1, 2], [], [], 5), {}, "child_positive_ids is empty"),
        (([[1, 2]], [], [2], 5), {}, "one-dimensional"),
        (([1.5, 2.5], [], [2.5], 5), {}, "integers or all strings"),
        (([1, 2, 3], [1], [2, 3], 5), {"rng": -4}, "seed"),
    ],
)
def test_recycling_rejects_bad_input_naming_the_value(args, kwargs, message):
    with pytest.raises(InputError, match=message):
        recycle_samples_for_precision(*args, **kwargs)


# --------------------------------------------------------------------------------------
# 3.2 Planning from sizes (Lemma 3, simulated)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parent_size", "child_size", "overlap"),
    [(10_000, 5_000, 3_000), (5_000, 10_000, 3_000), (20_000, 2_000, 1_500), (1_000, 900, 850)],
)
@pytest.mark.parametrize("mix", MIXES)
def test_mean_saving_follows_the_min_pir_cir_rule_of_thumb(parent_size, child_size, overlap, mix):
    plan = plan_recycled_labels(
        parent_size,
        [ChildSet(size=child_size, overlap=overlap)],
        mix=mix,
        trials=2000,
        rng=1,
    )
    saving = plan.savings[0]
    assert saving.n_parent == saving.n_child == 1068
    rule_of_thumb = min(overlap / parent_size, overlap / child_size)
    assert saving.savings_pct_mean / 100 == pytest.approx(rule_of_thumb, abs=0.005)


@FAST
@given(
    parent_size=st.integers(50, 50_000),
    child_size=st.integers(50, 50_000),
    overlap_share=st.floats(0, 1),
    sample_size=st.integers(50, 2000),
    mix=st.sampled_from(MIXES),
    seed=st.integers(0, 2**32 - 1),
)
def test_mean_saving_never_beats_the_rule_of_thumb(
    parent_size, child_size, overlap_share, sample_size, mix, seed
):
    overlap = round(overlap_share * min(parent_size, child_size))
    plan = plan_recycled_labels(
        parent_size,
        [{"size": child_size, "overlap": overlap}],
        n_parent=sample_size,
        n_child=sample_size,
        mix=mix,
        trials=400,
        rng=seed,
    )
    # E[min(|S+|, CIR n)] <= min(E|S+|, CIR n) (Jensen); the slack covers simulation noise
    # and the rounding of |S-|.
    rule_of_thumb = min(overlap / parent_size, overlap / child_size)
    saving = plan.savings[0]
    assert saving.savings_pct_mean / 100 <= rule_of_thumb + 0.02
    low, high = saving.savings_pct_interval
    # Not low <= mean <= high: rare savings skew the trials and the mean can pass the
    # 97.5th percentile.
    assert 0 <= low <= high <= 100
    assert saving.expected_new_labels == pytest.approx(sample_size - saving.expected_reused)


@pytest.mark.parametrize("mix", MIXES)
@pytest.mark.parametrize(
    ("parent_size", "child_size", "overlap"),
    [(600, 500, 200), (400, 800, 300)],
    ids=["PIR<CIR", "PIR>CIR-truncated"],
)
def test_simulated_savings_agree_with_a_literal_loop_of_algorithm_1(
    mix, parent_size, child_size, overlap
):
    n_parent = n_child = 100
    parent_set = list(range(parent_size))
    child_set = list(range(parent_size - overlap, parent_size - overlap + child_size))
    rnd = random.Random(4242)
    loops = 1500
    literal = np.array(
        [
            literal_algorithm_1(parent_set, child_set, n_parent, n_child, mix, rnd)
            for _ in range(loops)
        ]
    )
    plan = plan_recycled_labels(
        parent_size,
        [ChildSet(size=child_size, overlap=overlap, n_parent=n_parent, n_child=n_child)],
        mix=mix,
        trials=20_000,
        rng=99,
    )
    simulated = plan.savings[0].reused_per_trial
    tolerance = 4 * math.sqrt(literal.var() / loops + simulated.var() / simulated.size)
    assert abs(simulated.mean() - literal.mean()) < tolerance
    # The spread matters too: it is what the interval reports.
    assert 0.85 < simulated.std() / literal.std() < 1.15

    # The ID-level implementation tells the same story.
    rng = np.random.default_rng(5)
    parent_ids, child_ids = np.array(parent_set), np.array(child_set)
    by_ids = np.array(
        [
            recycle_samples_for_precision(
                parent_ids, rng.choice(parent_ids, n_parent), child_ids, n_child, mix=mix, rng=rng
            ).n_reused
            for _ in range(600)
        ]
    )
    tolerance = 4 * math.sqrt(literal.var() / loops + by_ids.var() / by_ids.size)
    assert abs(by_ids.mean() - literal.mean()) < tolerance


def test_edge_overlaps_give_exact_savings():
    plan = plan_recycled_labels(
        500,
        [
            ChildSet(size=300, overlap=0, name="disjoint"),
            ChildSet(size=500, overlap=500, n_parent=400, n_child=400, name="same set"),
            ChildSet(size=500, overlap=500, n_parent=100, n_child=400, name="small parent"),
        ],
        n_parent=200,
        n_child=150,
        trials=50,
        rng=0,
    )
    disjoint, same, small = plan.savings
    assert disjoint.savings_pct_mean == 0 and disjoint.savings_pct_interval == (0.0, 0.0)
    assert same.savings_pct_mean == 100 and same.expected_new_labels == 0
    assert small.expected_reused == 100 and small.expected_new_labels == 300
    assert (disjoint.n_parent, disjoint.n_child) == (200, 150)
    assert plan.total_new_labels == pytest.approx(150 + 0 + 300)
    rows = plan.to_dict()["children"]
    assert [row["name"] for row in rows] == ["disjoint", "same set", "small parent"]


def test_plan_is_seeded_frozen_and_exports_the_cli_keys():
    children = [ChildSet(size=8000, overlap=5000), ChildSet(size=3000, overlap=2000)]
    first = plan_recycled_labels(10_000, children, trials=200, rng=8)
    second = plan_recycled_labels(10_000, children, trials=200, rng=8)
    assert first.savings[1].to_dict() == second.savings[1].to_dict()
    assert list(first.savings[0].to_dict()) == [
        "n_parent", "n_child", "pir", "cir", "expected_reused", "expected_new_labels",
        "savings_pct_mean", "savings_pct_interval", "notes",
    ]  # fmt: skip
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.savings[0].pir = 1.0
    assert (first.savings[1].pir, first.savings[1].cir) == (0.2, 2000 / 3000)


@pytest.mark.parametrize(
    ("parent_size", "children", "kwargs", "message"),
    [
        (100, [ChildSet(size=80, overlap=90)], {}, "overlap 90 is larger than the child's"),
        (50, [ChildSet(size=80, overlap=60)], {}, "overlap 60 is larger than the parent's"),
        (0, [ChildSet(size=80, overlap=0)], {}, "parent_size .* 0"),
        (100, [ChildSet(size=0, overlap=0)], {}, "size .* 0"),
        (100, [ChildSet(size=80, overlap=-1)], {}, "overlap .* -1"),
        (100, [ChildSet(size=80, overlap=10, n_child=0)], {}, "n_child .* 0"),
        (100, [ChildSet(size=80, overlap=10)], {"trials": 0}, "trials .* 0"),
        (100, [ChildSet(size=80, overlap=10)], {"mix": "both"}, "mix .* 'both'"),
        (100, [], {}, "children is empty"),
        (100, [{"size": 80, "overlapp": 10}], {}, "child 0"),
        (100, ChildSet(size=80, overlap=10), {}, "list of ChildSet"),
    ],
)
def test_planning_rejects_bad_input_naming_the_value(parent_size, children, kwargs, message):
    with pytest.raises(InputError, match=message):
        plan_recycled_labels(parent_size, children, **kwargs)


# --------------------------------------------------------------------------------------
# 3.3 Recall of several classifiers
# --------------------------------------------------------------------------------------


@FAST
@given(
    true_positives=st.integers(0, 10_000),
    false_positives=st.integers(0, 10_000),
    false_negatives=st.integers(0, 10_000),
    true_negatives=st.integers(0, 10_000),
)
def test_recall_from_rates_equals_recall_from_counts(
    true_positives, false_positives, false_negatives, true_negatives
):
    predicted_positive = true_positives + false_positives
    predicted_negative = false_negatives + true_negatives
    if true_positives + false_negatives == 0 or predicted_positive == 0 or not predicted_negative:
        return
    recall = recall_from_precision_and_false_omission(
        true_positives / predicted_positive,
        predicted_positive,
        false_negatives / predicted_negative,
        predicted_negative,
    )
    assert recall == pytest.approx(true_positives / (true_positives + false_negatives))


def test_several_recalls_on_one_population_match_direct_counts():
    rng = np.random.default_rng(3)
    population = 50_000
    actual = rng.random(population) < 0.04
    scores = actual[None, :] * 1.2 + rng.normal(size=(4, population))
    predicted = scores > np.array([[1.0], [1.5], [0.6], [2.0]])
    positives = predicted.sum(axis=1)
    precisions = (predicted & actual).sum(axis=1) / positives
    direct = (predicted & actual).sum(axis=1) / actual.sum()
    for reference in range(4):
        negatives = population - positives[reference]
        false_omission = (~predicted[reference] & actual).sum() / negatives
        result = recalls_from_precisions(
            precisions,
            positives,
            false_omission_rate=false_omission,
            negative_set_size=negatives,
            reference=reference,
        )
        np.testing.assert_allclose(result.recalls, direct, rtol=1e-12)
        assert result.actual_positives == pytest.approx(actual.sum())
        assert result.warnings == ()


def test_recall_ratios_and_inconsistent_estimates_are_reported_not_clipped():
    result = recalls_from_precisions(
        [0.9, 0.8, 0.7], [1000, 1500, 900], false_omission_rate=0.01, negative_set_size=20_000
    )
    # N+ = 0.9 x 1000 + 0.01 x 20000 = 1100.
    np.testing.assert_allclose(result.recalls, [900 / 1100, 1200 / 1100, 630 / 1100])
    assert result.recalls[0] / result.recalls[2] == pytest.approx(900 / 630)
    assert len(result.warnings) == 1 and "classifier 1" in result.warnings[0]
    assert result.to_dict()["actual_positives"] == pytest.approx(1100)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([1.2, 0.5], [10, 10]), {}, "precisions .* 1.2"),
        (([0.9, 0.5], [10, 10.5]), {}, "positive_set_sizes .* 10.5"),
        (([0.9, 0.5], [10]), {}, "one size per precision"),
        (([0.9, 0.5], [10, 10]), {"false_omission_rate": -0.1}, "false_omission_rate .* -0.1"),
        (([0.9, 0.5], [10, 10]), {"reference": 2}, "reference .* 2"),
        (([0.0, 0.5], [10, 10]), {"false_omission_rate": 0.0}, "no actual positives"),
        (([], []), {}, "non-empty"),
    ],
)
def test_recalls_reject_bad_input(args, kwargs, message):
    options = {"false_omission_rate": 0.01, "negative_set_size": 100, **kwargs}
    with pytest.raises(InputError, match=message):
        recalls_from_precisions(*args, **options)


def test_planner_reports_progress_and_honours_cancel_between_chunks(monkeypatch):
    from core import ensemble
    from core.progress import Cancelled, TaskControl

    monkeypatch.setattr(ensemble, "TRIALS_PER_CHUNK", 50)
    fractions = []
    children = [ensemble.ChildSet(size=41_200, overlap=36_000)]
    plan = ensemble.plan_recycled_labels(
        120_000, children, trials=200, rng=3, control=TaskControl(fractions.append)
    )
    assert fractions == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert plan.savings[0].reused_per_trial.shape == (200,)
    # Chunking keeps the distribution: the mean stays near the rule-of-thumb min(PIR, CIR).
    assert plan.savings[0].savings_pct_mean == pytest.approx(100 * 36_000 / 120_000, abs=1.0)

    control = TaskControl()
    control.cancel()
    with pytest.raises(Cancelled):
        ensemble.plan_recycled_labels(120_000, children, trials=200, rng=3, control=control)


def test_a_sample_larger_than_its_set_gets_a_note():
    from core.ensemble import sample_size_notes

    plan = plan_recycled_labels(
        100, [ChildSet(size=80, overlap=50, n_parent=500, n_child=60)], trials=20, rng=1
    )
    (note,) = plan.savings[0].notes
    assert note.startswith("the parent's sample (500) is larger than its set (100 items)")
    assert sample_size_notes(100, 100, 80, 80) == ()
    assert len(sample_size_notes(101, 100, 81, 80)) == 2


def test_a_childs_numbers_do_not_depend_on_the_other_children():
    travel = ChildSet(size=47_300, overlap=40_000, name="travel")
    finance = ChildSet(size=60_200, overlap=52_000, name="finance")
    both = plan_recycled_labels(150_000, [travel, finance], trials=500, rng=7)
    alone = plan_recycled_labels(150_000, [finance], trials=500, rng=7)
    assert both.savings[1].to_dict() == alone.savings[0].to_dict()
