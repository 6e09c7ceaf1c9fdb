"""Sessions saved as workbooks reopen exactly."""

from __future__ import annotations

import dataclasses
import errno
import re

import openpyxl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.bayes import Prior
from core.confusion import ConfusionMatrix
from core.errors import InputError
from core.session import (
    EnsembleChild,
    EnsembleInputs,
    EvaluateInputs,
    PlanInputs,
    PopulationInputs,
    PrevalenceInputs,
    SessionState,
)
from core.workbook.report import SHEET_INPUTS, write_report
from core.workbook.rounds import WorkbookError, read_rounds
from core.workbook.safe_io import SaveError
from core.workbook.session_io import open_session, read_session, save_session
from tests.conftest import SHARED_FIXTURES
from tests.core.test_report import make_round, names, rounds_strategy


def test_the_default_session_reopens_equal(tmp_path):
    path = tmp_path / "session.xlsx"
    save_session(path, SessionState())
    state, problems = open_session(path)
    assert problems == []
    assert state == SessionState()


@pytest.mark.parametrize("fixture", ["rounds_simple.xlsx", "rounds_messy.xlsx"])
def test_a_session_with_fixture_rounds_reopens_equal(tmp_path, shared_fixtures, fixture):
    source = shared_fixtures / fixture
    rounds = read_rounds(source).rounds
    state = dataclasses.replace(
        SessionState(rounds=rounds),
        previous_round=rounds[2].round,
        confidence=0.9,
        plan=dataclasses.replace(
            SessionState().plan, s=1.8347, v=4_321, margin_precision=0.031, margin_recall=0.0275
        ),
    )
    path = tmp_path / "session.xlsx"
    save_session(path, state)
    restored, problems = open_session(path)
    assert problems == []
    assert restored == state  # the whole state, rounds with their original sheet and row
    assert restored.rounds[0].sheet == rounds[0].sheet


def test_saving_twice_changes_nothing(tmp_path):
    state = SessionState(rounds=(make_round("A", sheet="Old sheet", row=17),))
    first, second = tmp_path / "1.xlsx", tmp_path / "2.xlsx"
    save_session(first, state)
    save_session(second, open_session(first)[0])
    assert open_session(second)[0] == state


def test_a_plain_rounds_workbook_opens_about_its_most_recent_round(tmp_path, shared_fixtures):
    source = shared_fixtures / "rounds_messy.xlsx"
    opened = read_session(source)
    assert not opened.is_session
    book = read_rounds(source)
    state = opened.state
    assert state.rounds == book.rounds
    # the latest dated round (the last of them in sheet order on a tie) is the subject
    latest = max(enumerate(book.rounds), key=lambda pair: (pair[1].date, pair[0]))[1]
    assert state.current_round == f"{latest.sheet}!{latest.row}"
    assert state.evaluate.matrix == latest.matrix == state.plan.previous
    assert state.plan.belief == "previous" and state.previous_round == latest.round
    assert state.evaluate.population.effective_k == pytest.approx(latest.k, rel=1e-12)
    assert state.plan.population == state.evaluate.population
    # nothing of the bundled example: no ensemble of its classifiers
    assert state.ensemble.children == ()
    defaults = SessionState()
    assert (state.confidence, state.prevalence, state.plan.margin_precision) == (
        defaults.confidence,
        defaults.prevalence,
        defaults.plan.margin_precision,
    )
    # the refused rows are reported with sheet and row, the rest still loads
    assert len(opened.problems) == len(book.refused) == 3
    assert all("sheet 'travel', row" in text for text in opened.problems)


def test_a_workbook_with_no_rounds_and_no_inputs_says_so(tmp_path):
    path = tmp_path / "empty.xlsx"
    workbook = openpyxl.Workbook()
    workbook.active["A1"] = "nothing here"
    workbook.save(path)
    state, problems = open_session(path)
    assert state.rounds == () and state.current_round == "" and state.ensemble.children == ()
    assert (state.plan, state.evaluate) == (SessionState().plan, SessionState().evaluate)
    assert any("no rounds found" in text for text in problems)


def _edit_inputs(path, key: str, value=None, exact=None):
    workbook = openpyxl.load_workbook(path)
    sheet = workbook[SHEET_INPUTS]
    for row in sheet.iter_rows(min_row=2):
        if row[0].value == key:
            if value is not None:
                row[1].value = value
            if exact is not None:
                row[2].value = exact
            break
    else:
        raise AssertionError(key)
    workbook.save(path)


def test_an_edit_made_in_excel_wins_over_the_stale_exact_column(tmp_path):
    path = tmp_path / "session.xlsx"
    save_session(path, SessionState())
    _edit_inputs(path, "plan.s", value=3.5)
    _edit_inputs(path, "plan.prior.name", value="my prior")
    state, problems = open_session(path)
    assert problems == []
    assert state.plan.s == 3.5
    assert state.plan.prior.name == "my prior"


@pytest.mark.parametrize(
    "exact",
    ["[" * 100_000 + "]" * 100_000, '{"a":' * 50_000 + "1" + "}" * 50_000, "9" * 4_000],
    ids=["arrays nested deep", "objects nested deep", "a 4,000-digit number"],
)
def test_a_hostile_exact_cell_gives_way_to_the_visible_one(tmp_path, exact):
    """Such cells made the whole session fail with an internal error naming no cell."""
    path = tmp_path / "session.xlsx"
    save_session(path, SessionState())
    _edit_inputs(path, "plan.s", value=3.5, exact=exact)
    state, problems = open_session(path)
    assert problems == []
    assert state.plan.s == 3.5


def test_the_exact_column_restores_what_a_spreadsheet_rounded(tmp_path):
    k = 0.1 + 0.2  # 0.30000000000000004: 17 significant digits
    state = dataclasses.replace(
        SessionState(),
        plan=dataclasses.replace(
            SessionState().plan,
            population=PopulationInputs(mode="k", k=k),
        ),
    )
    path = tmp_path / "session.xlsx"
    save_session(path, state)
    _edit_inputs(path, "plan.population.k", value=0.3)  # what a 15-digit re-save leaves
    restored, problems = open_session(path)
    assert problems == []
    assert restored.plan.population.k == k


def test_one_bad_setting_is_reported_and_the_rest_restored(tmp_path):
    path = tmp_path / "session.xlsx"
    state = dataclasses.replace(SessionState(), confidence=0.9)
    save_session(path, state)
    _edit_inputs(path, "plan.v", value="lots", exact="")
    _edit_inputs(path, "evaluate.matrix.tp", value=-4, exact="")
    restored, problems = open_session(path)
    assert restored.confidence == 0.9
    assert restored.plan.v == SessionState().plan.v
    assert any("plan.v" in text for text in problems)
    assert any("evaluate.matrix" in text for text in problems)


def test_damage_to_the_inputs_sheet_is_named_not_passed_over(tmp_path):
    """A blank number, a setting given twice and a list count with no entries each gave
    a default or the other row without a word (fuzz 17)."""
    path = tmp_path / "session.xlsx"
    state = dataclasses.replace(
        SessionState(),
        confidence=0.9,
        plan=dataclasses.replace(SessionState().plan, v=153),
    )
    save_session(path, state)
    workbook = openpyxl.load_workbook(path)
    sheet = workbook[SHEET_INPUTS]
    rows = {row[0].value: row for row in sheet.iter_rows(min_row=2)}
    rows["plan.v"][1].value = rows["plan.v"][2].value = None  # cleared in Excel
    v_row = rows["plan.v"][0].row
    confidence_row = rows["confidence"][0].row
    sheet.append(["confidence", 0.8, "0.8"])
    sheet.append(["ensemble.children.count", 50, "50"])
    workbook.save(path)
    restored, problems = open_session(path)
    assert restored.plan.v == SessionState().plan.v and restored.confidence == 0.8
    assert restored.ensemble.children == SessionState().ensemble.children  # the 3 written
    assert (
        f"Inputs: plan.v (row {v_row}) is blank, or a formula without a saved value; the "
        f"default, {SessionState().plan.v!r}, is used"
    ) in problems
    assert (
        f"Inputs: confidence is given twice (rows {confidence_row} and {sheet.max_row - 1}); "
        "the value in the later row is used"
    ) in problems
    assert (
        "Inputs: ensemble.children.count says 50 entries, but 47 of them are not in the "
        "sheet; left out"
    ) in problems
    assert sum("is given twice" in text for text in problems) == 2  # confidence and the count
    assert len(problems) == 4


def test_a_session_whose_inputs_part_is_missing_is_named_damaged(tmp_path):
    """It opened as a plain rounds workbook, every setting silently the default (fuzz 17)."""
    import zipfile

    path = tmp_path / "session.xlsx"
    save_session(path, SessionState(rounds=(make_round("A"),)))
    with zipfile.ZipFile(path) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    workbook_xml = parts["xl/workbook.xml"].decode()
    sheet_id = re.search(r'<sheet[^>]*name="Inputs"[^>]*r:id="(\w+)"', workbook_xml)
    relations = parts["xl/_rels/workbook.xml.rels"].decode()
    target = re.search(rf'Id="{sheet_id.group(1)}"[^>]*Target="([^"]+)"', relations) or re.search(
        rf'Target="([^"]+)"[^>]*Id="{sheet_id.group(1)}"', relations
    )
    part = "xl/" + target.group(1).removeprefix("/xl/")
    damaged = tmp_path / "damaged.xlsx"
    with zipfile.ZipFile(damaged, "w") as archive:
        for name, data in parts.items():
            if name != part:
                archive.writestr(name, data)
    with pytest.raises(WorkbookError, match=r"its Inputs sheet \(the session's settings\) is"):
        read_session(damaged)
    # A plain rounds workbook with one broken sheet of its own stays readable (review 18).
    workbook = openpyxl.Workbook()
    workbook.active.title = "Rounds"
    workbook.active.append(["Round", "k", "TP", "FP", "FN", "TN"])
    workbook.active.append(["R1", 0.05, 10, 20, 5, 100])
    workbook.create_sheet("Scratch").append(["x"])
    plain = tmp_path / "plain.xlsx"
    workbook.save(plain)
    with zipfile.ZipFile(plain) as archive:
        parts = {name: archive.read(name) for name in archive.namelist()}
    broken = tmp_path / "broken sheet.xlsx"
    with zipfile.ZipFile(broken, "w") as archive:
        for name, data in parts.items():
            if name != "xl/worksheets/sheet2.xml":
                archive.writestr(name, data)
    assert [item.round for item in read_session(broken).state.rounds] == ["R1"]


def test_a_session_from_a_newer_version_says_so(tmp_path):
    path = tmp_path / "session.xlsx"
    save_session(path, SessionState())
    _edit_inputs(path, "schema_version", value=99, exact="99")
    state, problems = open_session(path)
    assert state == SessionState()
    assert any("newer PR Planner" in text for text in problems)


def test_a_failed_save_keeps_the_old_session(tmp_path, monkeypatch):
    path = tmp_path / "session.xlsx"
    old = SessionState(rounds=(make_round("A"),))
    save_session(path, old)

    def full_disk(self, filename):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("core.workbook.safe_io.save_workbook", full_disk)  # a marked save
    with pytest.raises(SaveError, match="the old file is unchanged") as caught:
        save_session(path, SessionState())
    assert isinstance(caught.value, InputError)
    monkeypatch.undo()
    assert open_session(path)[0] == old


def test_a_damaged_session_gives_one_clear_error(tmp_path):
    path = tmp_path / "session.xlsx"
    save_session(path, SessionState())
    path.write_bytes(path.read_bytes()[:2000])
    with pytest.raises(WorkbookError, match=str(path)) as caught:
        open_session(path)
    assert "\n" not in str(caught.value)


# --- every input, at random ----------------------------------------------------------------

unit = st.floats(min_value=1e-6, max_value=1 - 1e-6)
margins = st.floats(min_value=1e-6, max_value=0.499999)
positive = st.floats(min_value=1e-300, max_value=1e300)
whole = st.integers(0, 10**15)


@st.composite
def populations(draw):
    pos, neg = draw(st.integers(1, 10**12)), draw(st.integers(1, 10**12))
    return PopulationInputs(
        mode=draw(st.sampled_from(["counts", "k", "random"])),
        predicted_positive=pos,
        predicted_negative=neg,
        k=draw(st.floats(min_value=1e-12, max_value=1e12)),  # the range of k
    )


# A prior's pseudo-counts: 0, or from 1e-9 (smaller ones vanish in the arithmetic).
pseudo_counts = st.one_of(st.just(0.0), st.floats(1e-9, 1e6))
matrices = st.builds(ConfusionMatrix, tp=whole, fp=whole, fn=whole, tn=whole)
priors = st.builds(
    Prior,
    a11=pseudo_counts,
    a01=pseudo_counts,
    a10=pseudo_counts,
    a00=pseudo_counts,
    name=st.text(max_size=20),
)


@st.composite
def states(draw):
    eta_min = draw(st.floats(1e-9, 0.4))
    children = draw(
        st.lists(
            st.builds(
                lambda name, size, share: EnsembleChild(
                    name=name, size=size, overlap=int(size * share)
                ),
                names,
                st.integers(0, 10**6),
                st.floats(0, 1),
            ),
            max_size=4,
        )
    )
    parent = max([1, *(child.overlap for child in children)]) + draw(st.integers(0, 10**6))
    # Each round from its own sheet and row, as rounds read from workbooks are (two
    # unnamed rounds of one row were named alike and read back as a copy).
    rounds = draw(
        st.lists(
            rounds_strategy(sheet=None, row=None),
            max_size=4,
            unique_by=lambda item: (item.sheet, item.row),
        )
    )
    return SessionState(
        confidence=draw(st.floats(0.5000001, 0.999999)),
        plan=PlanInputs(
            population=draw(populations()),
            belief=draw(st.sampled_from(["expected", "previous"])),
            expected_precision=draw(unit),
            expected_recall=draw(unit),
            previous=draw(matrices),
            prior=draw(priors),
            prior_preset=draw(
                st.sampled_from(["none", "jeffreys", "uniform", "expected", "round", "custom"])
            ),
            prior_strength=draw(positive),
            margin_precision=draw(margins),
            margin_recall=draw(margins),
            cost_pos=draw(positive),
            cost_neg=draw(positive),
            method=draw(st.sampled_from(["paper", "optimal"])),
            bayesian=draw(st.booleans()),
            fpc=draw(st.booleans()),
            s=draw(positive),
            v=draw(st.integers(2, 10**9)),
        ),
        evaluate=EvaluateInputs(
            population=draw(populations()),
            matrix=draw(matrices),
            replicates=draw(st.integers(100, 400)),
            seed=draw(st.integers(0, 2**63)),
            fpc=draw(st.booleans()),
        ),
        prevalence=PrevalenceInputs(
            reference_prevalence=draw(unit),
            eta_min=eta_min,
            eta_max=draw(st.floats(eta_min * 1.01 + 1e-12, 0.999)),
            compared_rounds=tuple(draw(st.lists(names, max_size=3))),
            scored_sample_path=draw(st.text(max_size=30)),
        ),
        ensemble=EnsembleInputs(
            parent_name=draw(names),
            parent_size=parent,
            children=tuple(children),
            margin=draw(margins),
            precision_floor=draw(st.floats(0.5, 0.999999)),
            mix=draw(st.sampled_from(["shuffle", "sample"])),
            trials=draw(st.integers(10, 10**6)),
            seed=draw(st.integers(0, 2**63)),
        ),
        rounds=tuple(rounds),
        previous_round=draw(st.one_of(st.just(""), names)),
    )


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(state=states())
def test_random_sessions_reopen_equal(tmp_path_factory, state):
    path = tmp_path_factory.mktemp("session") / "random.xlsx"
    save_session(path, state)
    restored, problems = open_session(path)
    assert problems == []
    assert restored == state


def test_awkward_text_survives_in_every_text_setting(tmp_path):
    awkward = "=cmd|' /C calc'!A0\r\nline\x01two\ufffe end "
    state = dataclasses.replace(
        SessionState(),
        previous_round='=HYPERLINK("x")',
        prevalence=dataclasses.replace(SessionState().prevalence, scored_sample_path=awkward),
        plan=dataclasses.replace(SessionState().plan, prior=Prior(a11=1, name="@prior\ttab")),
    )
    path = tmp_path / "s.xlsx"
    write_report(path, state)
    restored, problems = open_session(path)
    assert problems == []
    assert restored == state


def test_the_bundled_example_session_reopens_as_defaults_plus_the_example_rounds():
    from desktop import resources

    state, problems = open_session(resources.path("example_session.xlsx"))
    assert problems == []
    rounds = read_rounds(resources.path("example_rounds.xlsx")).rounds
    # if this fails after a change of the defaults: python scripts/make_example_session.py
    from core.plan_request import with_sliders_on_recommended
    from desktop.plan_tab import S_RANGE, V_RANGE

    expected = with_sliders_on_recommended(SessionState(rounds=rounds), S_RANGE, V_RANGE)
    assert state == expected
    assert (state.plan.s, state.plan.v) != (SessionState().plan.s, SessionState().plan.v)
    assert {item.classifier for item in state.rounds} == {"travel", "finance"}


def test_replicates_and_trials_beyond_the_engines_limits_are_noted_not_kept():
    from core.session import unflatten

    state, problems = unflatten([("evaluate.replicates", 10**12), ("ensemble.trials", 10**12)])
    assert state.evaluate.replicates == SessionState().evaluate.replicates
    assert state.ensemble.trials == SessionState().ensemble.trials
    text = " ".join(problems)
    assert "replicates must be at most 1,000,000" in text
    assert "trials must be at most 10,000,000" in text


def test_kept_counts_need_a_name_of_their_own_and_a_known_k():
    import datetime as dt

    from core.workbook.session_io import entered_round, next_round_name

    state = read_session(SHARED_FIXTURES / "rounds_simple.xlsx").state
    assert next_round_name(state.rounds, "travel") == "TR-07"
    assert next_round_name(state.rounds, "finance") == "FI-05"
    assert next_round_name(state.rounds, "sports") == "Round 1"
    # Names drawn already and still out with the editors are passed over.
    assert next_round_name(state.rounds, "travel", taken=["tr-07", "TR-08"]) == "TR-09"
    assert next_round_name(state.rounds, "sports", taken=["Round 1"]) == "Round 2"
    with pytest.raises(InputError, match="a round named tr-06 of travel already"):
        entered_round(state, name="tr-06", date=None, classifier="travel")
    kept = entered_round(state, name="TR-07", date=dt.date(2026, 4, 6), classifier="travel")
    n1, n0 = kept.tp + kept.fp, kept.fn + kept.tn
    assert kept.s == pytest.approx((n1 / n0) / kept.k)  # the over-sampling it implies
    random = dataclasses.replace(
        state,
        evaluate=dataclasses.replace(
            state.evaluate,
            population=dataclasses.replace(state.evaluate.population, mode="random"),
        ),
    )
    with pytest.raises(InputError, match="plain random sample cannot be kept"):
        entered_round(random, name="TR-07", date=None, classifier="travel")
    # Fuzz 17: names a rename refuses were kept (and cut short at the next save).
    for name, classifier, problem in (
        ("TR\n07", "travel", "the round's name holds a line break"),
        ("TR-07", "trav\u202eel", "the round's classifier's name holds a line break"),
        ("x" * 40_000, "travel", "the round's name is 40,000 characters long"),
    ):
        with pytest.raises(InputError, match=re.escape(problem)):
            entered_round(state, name=name, date=None, classifier=classifier)


def test_a_round_without_a_name_is_shown_by_its_place_and_comes_back_without_one(tmp_path):
    # The report's Rounds sheet left such a round's Round cell empty (trial 14); it now
    # says "Log row 12", and a saved session reads it back as the round it was.
    unnamed = dataclasses.replace(make_round(), round=None, sheet="Log", row=12)
    path = tmp_path / "session.xlsx"
    save_session(path, SessionState(rounds=(unnamed,)))
    sheet = openpyxl.load_workbook(path)["Rounds"]
    assert sheet.cell(2, 1).value == "Log row 12"
    state, _problems = open_session(path)
    assert state.rounds == (unnamed,)


def test_a_session_whose_rounds_sheet_was_deleted_says_so(tmp_path):
    # Fuzz 17: it opened as "0 rounds" with no word, like a session that never had any.
    from core.session import SessionState
    from core.workbook.report import write_report

    path = tmp_path / "session.xlsx"
    state = read_session(SHARED_FIXTURES / "rounds_simple.xlsx").state
    write_report(path, SessionState(rounds=state.rounds))
    assert not any("no Rounds sheet" in text for text in read_session(path).problems)
    workbook = openpyxl.load_workbook(path)
    del workbook["Rounds"]
    workbook.save(path)
    opened = read_session(path)
    assert opened.is_session and opened.state.rounds == ()
    assert (
        "session.xlsx has no Rounds sheet (deleted?): the session's rounds are not in the "
        "file. Open the rounds workbook it began from, or an earlier copy"
    ) in opened.problems


def test_many_refused_list_entries_are_named_three_then_counted():
    from core.session import unflatten

    rows = [("ensemble.children.count", 6)]
    for index in range(6):
        rows += [
            (f"ensemble.children.{index}.name", f"c{index}"),
            (f"ensemble.children.{index}.size", -1),
            (f"ensemble.children.{index}.overlap", 0),
        ]
    state, problems = unflatten(rows)
    assert state.ensemble.children == ()
    assert [text.split(":")[0] for text in problems[:3]] == [
        "ensemble.children.0", "ensemble.children.1", "ensemble.children.2",
    ]  # fmt: skip
    assert problems[3:] == ["ensemble.children: 3 more entries refused; left out"]


def test_a_round_with_no_labeled_items_is_said_so_in_plain_words():
    # Fuzz 17: "R3: v kept at 144 (v must be a whole number >= 2, got 0)".
    from core.workbook.session_io import plan_from_round

    empty = make_round("R3", tp=0, fp=0, fn=0, tn=0)
    plan, notes = plan_from_round(SessionState().plan, empty)
    assert plan.v == SessionState().plan.v
    assert "R3 has no labeled items, so the Plan keeps its total of 1,000 labels" in notes
    assert not any("must be a whole number" in note for note in notes)


def test_a_round_the_app_files_is_dated_from_1970_so_that_it_reopens():
    """The rounds reader refuses a date before 1970 (a week number read as a day of
    1900); the Keep as a round dialog, a rename and a recovered round took any date, and
    the round was dropped when its session was opened again (review 19)."""
    import datetime as dt

    from core.errors import InputError
    from core.workbook.rounds import EARLIEST_ROUND_DATE
    from core.workbook.session_io import entered_round, renamed_round

    item = make_round("R1")
    too_early = EARLIEST_ROUND_DATE - dt.timedelta(days=1)
    with pytest.raises(InputError, match="from 1970-01-01 on; got 1969-12-31"):
        renamed_round((item,), item, "R1", too_early)
    assert renamed_round((item,), item, "R1", EARLIEST_ROUND_DATE).date == EARLIEST_ROUND_DATE
    with pytest.raises(InputError, match="from 1970-01-01 on"):
        entered_round(SessionState(), name="typed", date=too_early, classifier=None)
