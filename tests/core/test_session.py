"""The session document: edits validate, the flat form round-trips, bad cells are reported."""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.bayes import Prior
from core.errors import InputError
from core.session import (
    EnsembleChild,
    SessionState,
    flatten,
    get_path,
    replace_path,
    unflatten,
)


def test_default_state_round_trips_through_the_flat_form():
    state = SessionState()
    restored, problems = unflatten(flatten(state))
    assert problems == []
    assert restored == state


def test_replace_path_returns_a_new_valid_state_and_leaves_the_old_one():
    state = SessionState()
    changed = replace_path(state, "plan.population.k", 0.05)
    assert get_path(changed, "plan.population.k") == 0.05
    assert state.plan.population.k != 0.05


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("evaluate.matrix.tp", -1, "TP must be a whole number"),
        ("plan.margin_precision", 0.7, "precision margin must be strictly between 0 and 0.5"),
        ("confidence", 1.5, "confidence must be strictly between 0.5 and 1"),
        ("plan.s", 0, "s must be a number > 0"),
        ("plan.nonsense", 1, "unknown session field"),
        ("prevalence.eta_min", 0.9, "the lowest prevalence, 90 %, must be below the highest, 50 %"),
    ],
)
def test_refused_edits_raise_input_error_naming_the_value(path, value, message):
    with pytest.raises(InputError, match=message):
        replace_path(SessionState(), path, value)


def test_one_bad_cell_keeps_the_rest_of_the_session():
    rows = dict(flatten(replace_path(SessionState(), "plan.s", 3.25)))
    rows["plan.v"] = "lots"
    rows["evaluate.matrix.tp"] = -4
    rows["mystery.key"] = 1
    state, problems = unflatten(list(rows.items()))
    assert state.plan.s == 3.25
    assert state.plan.v == SessionState().plan.v
    assert state.evaluate.matrix == SessionState().evaluate.matrix
    assert any("plan.v" in p for p in problems)
    assert any("evaluate.matrix" in p for p in problems)
    assert any("mystery.key" in p for p in problems)


def test_ensemble_children_round_trip_including_awkward_names():
    children = (
        EnsembleChild(name='=HYPERLINK("x")', size=10, overlap=3),
        EnsembleChild(name="résumé ✓", size=5, overlap=5),
    )
    state = replace_path(SessionState(), "ensemble.children", children)
    restored, problems = unflatten(flatten(state))
    assert problems == []
    assert restored.ensemble.children == children


finite = dict(allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(
    s=st.floats(1e-3, 1e3, **finite),
    v=st.integers(2, 10**9),
    precision=st.floats(1e-6, 1 - 1e-6, **finite),
    alpha=st.tuples(*[st.one_of(st.just(0.0), st.floats(1e-9, 1e6, **finite))] * 4),
    counts=st.tuples(*[st.integers(0, 10**12)] * 4),
    name=st.text(max_size=30),
)
def test_random_states_round_trip_exactly(s, v, precision, alpha, counts, name):
    state = SessionState()
    plan = dataclasses.replace(
        state.plan,
        s=s,
        v=v,
        expected_precision=precision,
        prior=Prior.from_sequence(alpha, name=name),
    )
    state = dataclasses.replace(state, plan=plan, previous_round=name)
    for field, count in zip(("tp", "fp", "fn", "tn"), counts, strict=True):
        state = replace_path(state, f"evaluate.matrix.{field}", count)
    restored, problems = unflatten(flatten(state))
    assert problems == []
    assert restored == state


def test_a_list_count_of_a_billion_keeps_the_defaults_at_once():
    """A hand-edited count cell (ensemble.children.count = 1e9) used to loop for minutes:
    it is refused before any entry is looked at."""
    rows = [("ensemble.children.count", 1e9), ("prevalence.compared_rounds.count", 10**9)]
    state, problems = unflatten(rows)
    assert state.ensemble.children == SessionState().ensemble.children
    assert state.prevalence.compared_rounds == SessionState().prevalence.compared_rounds
    assert any("ensemble.children.count: 1,000,000,000 entries" in text for text in problems)
    assert any("compared_rounds.count" in text and "defaults kept" in text for text in problems)


def test_a_list_or_mapping_where_text_belongs_is_refused_not_made_a_name():
    # A recovery file holding {"a": ""} as the scored sample's path put "{'a': ''}" in the
    # status bar as a file name (fuzz 13).
    state, problems = unflatten(
        [("prevalence.scored_sample_path", {"a": ""}), ("plan.margin_precision", 0.04)]
    )
    assert state.prevalence.scored_sample_path == SessionState().prevalence.scored_sample_path
    assert state.plan.margin_precision == 0.04
    assert any("prevalence.scored_sample_path: expected text" in text for text in problems)


@pytest.mark.parametrize("name", ["a\ufffe", "a\x00b", "a\ud800"])
def test_a_classifier_name_no_file_can_store_is_refused(name):
    # U+FFFE garbled every later status message; a lone surrogate turned crash recovery
    # off ("'utf-8' codec can't encode"; fuzz 14).
    from core.session import EnsembleChild, EnsembleInputs

    with pytest.raises(InputError, match="holds a character no file can store"):
        EnsembleChild(name=name, size=10, overlap=5)
    with pytest.raises(InputError, match="holds a character no file can store"):
        EnsembleInputs(parent_name=name)


@pytest.mark.parametrize(
    ("key", "text", "expected"),
    [
        ("evaluate.population.k", "0,033", 0.033),  # was read as 33 (fuzz 20)
        ("plan.cost_pos", "0,5", 0.5),
        ("plan.s", "1,8", 1.8),
        ("plan.population.predicted_positive", "41,200", 41_200),
        ("plan.population.predicted_positive", "1 251 000", 1_251_000),
    ],
)
def test_numbers_typed_as_text_in_a_session_read_as_the_rounds_reader_reads_them(
    key, text, expected
):
    from core.session import flatten, unflatten

    rows = [(name, text if name == key else value) for name, value in flatten(SessionState())]
    state, problems = unflatten(rows)
    assert problems == []
    value = state
    for part in key.split("."):
        value = getattr(value, part)
    assert value == pytest.approx(expected)


@pytest.mark.parametrize(
    ("key", "value"),
    [("plan.previous.tp", "23,1"), ("evaluate.population.k", True), ("plan.s", "1_8"),
     ("plan.cost_pos", "0,5,5")],
)  # fmt: skip
def test_a_session_number_that_is_not_one_is_refused_with_its_key(key, value):
    from core.session import flatten, unflatten

    rows = [(name, value if name == key else kept) for name, kept in flatten(SessionState())]
    state, problems = unflatten(rows)
    assert len(problems) == 1 and key in problems[0]
    default = SessionState()
    for part in key.split("."):
        state, default = getattr(state, part), getattr(default, part)
    assert state == default  # the default is kept


def test_the_example_ensemble_is_known_in_its_earlier_form_too():
    """Review 20: sessions saved before the example's children became three travel
    classifiers still hold travel, finance and shopping; they are the example's too."""
    from core.session import EnsembleChild, EnsembleInputs, is_example_ensemble

    earlier = EnsembleInputs(
        children=(
            EnsembleChild(name="travel", size=41_200, overlap=36_000),
            EnsembleChild(name="finance", size=52_000, overlap=47_500),
            EnsembleChild(name="shopping", size=30_500, overlap=21_000),
        )
    )
    assert is_example_ensemble(EnsembleInputs()) and is_example_ensemble(earlier)
    assert not is_example_ensemble(dataclasses.replace(earlier, parent_size=99_000))
    assert not is_example_ensemble(EnsembleInputs(children=()))


def test_many_unknown_settings_are_named_up_to_twenty_and_counted():
    from core.session import flatten, unflatten

    rows = [*flatten(SessionState()), *((f"junk_{i}", i) for i in range(5_000))]
    state, problems = unflatten(rows)
    assert state == SessionState()
    assert problems[:2] == ["junk_0: unknown setting, ignored", "junk_1: unknown setting, ignored"]
    assert len(problems) == 21 and problems[-1] == "and 4,980 more unknown settings, ignored"
