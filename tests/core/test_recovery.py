"""Crash recovery: a session left by a run that died is offered back, and only then."""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from core.errors import InputError
from core.session import SessionState
from core.workbook import safe_io
from core.workbook.recovery import RecoveryStore
from core.workbook.safe_io import SaveError
from tests.conftest import PROJECT_ROOT
from tests.core.test_report import make_round
from tests.core.test_session_io import states


def _edited_state() -> SessionState:
    return dataclasses.replace(
        SessionState(rounds=(make_round("A"), make_round("=B", row=3, notes="x\r\ny"))),
        previous_round="A",
        confidence=0.9,
        plan=dataclasses.replace(SessionState().plan, s=0.1 + 0.2, v=12_345),
    )


def test_a_crashed_run_is_offered_back_to_the_next_start(tmp_path):
    crashed = RecoveryStore(tmp_path)
    crashed.write(_edited_state(), document="/home/lead/q1.xlsx")
    crashed.close()  # what the operating system does when the process dies

    entry = RecoveryStore(tmp_path).latest_entry()
    assert entry.state == _edited_state()
    assert entry.problems == ()
    assert entry.document == "/home/lead/q1.xlsx"
    assert RecoveryStore(tmp_path).latest() == _edited_state()


def test_a_session_that_is_still_running_is_not_offered(tmp_path):
    running = RecoveryStore(tmp_path)
    running.write(_edited_state())
    assert RecoveryStore(tmp_path).latest() is None
    assert running.latest() is None  # never its own file either
    running.close()


def test_a_real_crash_in_another_process(tmp_path):
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(PROJECT_ROOT)!r})
        from core.session import SessionState, replace_path
        from core.workbook.recovery import RecoveryStore
        store = RecoveryStore({str(tmp_path)!r})
        store.write(replace_path(SessionState(), "plan.v", 777))
        os._exit(1)  # die without closing anything
        """
    )
    subprocess.run([sys.executable, "-c", script], check=False, timeout=120)
    recovered = RecoveryStore(tmp_path).latest()
    assert recovered is not None and recovered.plan.v == 777


def test_clear_removes_this_sessions_file_and_the_offered_leftovers(tmp_path):
    old = RecoveryStore(tmp_path)
    old.write(SessionState())
    old.close()
    current = RecoveryStore(tmp_path)
    current.write(_edited_state())
    other = RecoveryStore(tmp_path)  # a second window, still open
    other.write(SessionState())
    current.clear()
    remaining = sorted(path.name for path in tmp_path.glob("*.json"))
    assert remaining == [other.path.name]
    current.close()
    other.close()


def test_the_newest_leftover_wins_and_damaged_files_are_skipped(tmp_path):
    first = RecoveryStore(tmp_path, session_id="first")
    first.write(SessionState())
    first.close()
    second = RecoveryStore(tmp_path, session_id="second")
    second.write(_edited_state())
    second.close()
    payload = json.loads(first.path.read_text())
    payload["saved_at"] = "2001-01-01T00:00:00"
    first.path.write_text(json.dumps(payload))
    (tmp_path / "session-broken.json").write_text("{not json")
    (tmp_path / "session-alien.json").write_text('{"format": "something else"}')
    assert RecoveryStore(tmp_path).latest() == _edited_state()


def test_a_damaged_round_is_reported_and_the_rest_restored(tmp_path):
    crashed = RecoveryStore(tmp_path, session_id="x")
    crashed.write(_edited_state())
    crashed.close()
    payload = json.loads(crashed.path.read_text())
    payload["rounds"][0]["date"] = "not a date"
    payload["inputs"] = [[k, "lots" if k == "plan.v" else v] for k, v in payload["inputs"]]
    crashed.path.write_text(json.dumps(payload))
    entry = RecoveryStore(tmp_path).latest_entry()
    assert len(entry.state.rounds) == 1
    assert entry.state.plan.v == SessionState().plan.v
    assert any("past round 1" in text for text in entry.problems)
    assert any("plan.v" in text for text in entry.problems)


def test_a_failed_recovery_write_keeps_the_previous_file(tmp_path, monkeypatch):
    store = RecoveryStore(tmp_path)
    store.write(_edited_state())
    before = store.path.read_bytes()

    def full_disk(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full_disk)
    with pytest.raises(SaveError, match="disk is full"):
        store.write(SessionState())
    monkeypatch.undo()
    assert store.path.read_bytes() == before
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".json", ".lock"]
    store.close()


def test_an_unwritable_recovery_folder_is_a_save_error(tmp_path, monkeypatch):
    def read_only(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(safe_io.tempfile, "mkstemp", read_only)
    store = RecoveryStore(tmp_path / "recovery")
    with pytest.raises(SaveError, match="read-only"):
        store.write(SessionState())
    store.close()


def test_bad_arguments(tmp_path):
    with pytest.raises(InputError, match="session id"):
        RecoveryStore(tmp_path, session_id="../escape")
    with pytest.raises(InputError, match="SessionState"):
        RecoveryStore(tmp_path).write({"plan.v": 3})


def test_an_empty_or_missing_folder_offers_nothing(tmp_path):
    assert RecoveryStore(tmp_path / "never-created").latest() is None
    RecoveryStore(tmp_path / "never-created").clear()


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(state=states())
def test_random_sessions_survive_recovery(tmp_path_factory, state):
    folder = tmp_path_factory.mktemp("recovery")
    with RecoveryStore(folder) as crashed:
        crashed.write(state)
    entry = RecoveryStore(folder).latest_entry()
    assert entry.problems == ()
    assert entry.state == state


def _crashed_payload(tmp_path, session_id="crashed"):
    crashed = RecoveryStore(tmp_path, session_id=session_id)
    crashed.write(_edited_state())
    crashed.close()
    return crashed.path, json.loads(crashed.path.read_text())


DAMAGE = {
    "rounds not a list": lambda payload: payload.__setitem__("rounds", 5),
    "rounds null": lambda payload: payload.__setitem__("rounds", None),
    "inputs not a list": lambda payload: payload.__setitem__("inputs", 7),
    "saved_at a number": lambda payload: payload.__setitem__("saved_at", 5),
    "an older version": lambda payload: payload.__setitem__("version", 0),
    "a version that is text": lambda payload: payload.__setitem__("version", "2"),
}


@pytest.mark.parametrize("text", ["[1, 2]", "7", '"x"', "null"])
def test_a_file_that_is_not_a_json_object_is_set_aside_and_the_good_one_offered(tmp_path, text):
    # The newer-version check read such a file as a dict and raised: the scan stopped and
    # a good session left by another crashed run was never offered (review 13).
    good, _payload = _crashed_payload(tmp_path, session_id="b-good")
    bad = good.with_name(good.name.replace("b-good", "a-bad"))
    bad.write_text(text)
    store = RecoveryStore(tmp_path)
    entry = store.latest_entry()
    assert entry is not None and entry.state == _edited_state()
    assert store.set_aside == [bad.with_suffix(".damaged")]


def test_a_file_of_a_newer_version_is_left_for_it_not_set_aside(tmp_path):
    # It was renamed ".damaged" and said to be damaged (fuzz 13): a newer PR Planner on the
    # same machine would lose it.
    path, payload = _crashed_payload(tmp_path)
    payload["version"] = 2
    path.write_text(json.dumps(payload))
    store = RecoveryStore(tmp_path)
    assert store.latest_entry() is None
    assert path.exists() and store.set_aside == [] and store.newer == [path]
    store.clear()  # Discard in the app: this version's files go, the newer one's stays
    assert path.exists()


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_a_damaged_file_is_set_aside_never_raised(tmp_path, damage):
    path, payload = _crashed_payload(tmp_path)
    DAMAGE[damage](payload)
    path.write_text(json.dumps(payload))
    store = RecoveryStore(tmp_path)
    assert store.latest_entry() is None
    assert not path.exists() and store.set_aside == [path.with_suffix(".damaged")]
    assert RecoveryStore(tmp_path).latest_entry() is None  # not offered again


def test_a_deeply_nested_or_huge_file_is_not_recoverable_but_does_not_raise(tmp_path):
    (tmp_path / "session-deep.json").write_text("[" * 100_000 + "]" * 100_000)
    path, payload = _crashed_payload(tmp_path, "huge")
    payload["inputs"][0] = [payload["inputs"][0][0], int("9" * 4000)]
    path.write_text(json.dumps(payload))
    entry = RecoveryStore(tmp_path).latest_entry()
    # The huge number is one refused setting; the rest of that session is restored.
    assert entry is not None and entry.path == path
    assert any("characters" in text for text in entry.problems)


def test_a_time_zone_in_one_file_does_not_lose_the_other(tmp_path):
    good_path, _payload = _crashed_payload(tmp_path, "good")
    other_path, payload = _crashed_payload(tmp_path, "other")
    payload["saved_at"] = "2001-01-01T00:00:00+00:00"
    other_path.write_text(json.dumps(payload))
    assert RecoveryStore(tmp_path).latest_entry().path == good_path


BAD_ROUNDS = {
    "negative TP": {"tp": -5},
    "TP as text": {"tp": "abc"},
    "TP too large": {"tp": 10**30},
    "TP a float": {"tp": 1e308},
    "k zero": {"k": 0},
    "k as text": {"k": "x"},
    "k a list": {"k": [1, 2]},
    "name a list": {"round": [1, 2]},
    "row as text": {"row": "x"},
    "negative population": {"population_pos": -10, "population_neg": 5},
    "more labels than items": {"population_pos": 3, "population_neg": 10**6},
}


@pytest.mark.parametrize("damage", BAD_ROUNDS, ids=list(BAD_ROUNDS))
def test_a_round_no_workbook_could_hold_is_not_restored(tmp_path, damage):
    path, payload = _crashed_payload(tmp_path)
    payload["rounds"][0].update(BAD_ROUNDS[damage])
    path.write_text(json.dumps(payload))
    entry = RecoveryStore(tmp_path).latest_entry()
    assert len(entry.state.rounds) == len(payload["rounds"]) - 1
    assert any(text.startswith("past round 1: a past round could not") for text in entry.problems)


def test_a_pipe_or_a_device_under_a_recovery_name_is_never_opened(tmp_path):
    # A FIFO hung the start for good; a link to /dev/zero took 12.6 GB in 40 s (fuzz 14).
    os.mkfifo(tmp_path / "session-fifo.json")
    (tmp_path / "session-zero.json").symlink_to("/dev/zero")
    path, _payload = _crashed_payload(tmp_path, "good")
    entry = RecoveryStore(tmp_path).latest_entry()
    assert entry is not None and entry.path == path  # the real one is still offered
    assert (tmp_path / "session-fifo.json").exists()  # left alone, not renamed


def test_a_file_larger_than_any_session_is_set_aside_unread(tmp_path, monkeypatch):
    from core.workbook import recovery

    path, payload = _crashed_payload(tmp_path)
    payload["rounds"] = [[]] * 1_000
    path.write_text(json.dumps(payload))
    monkeypatch.setattr(recovery, "MAX_RECOVERY_BYTES", path.stat().st_size - 1)
    store = RecoveryStore(tmp_path)
    assert store.latest_entry() is None and store.set_aside == [path.with_suffix(".damaged")]


def test_many_refused_rounds_are_counted_not_each_listed(tmp_path):
    path, payload = _crashed_payload(tmp_path)
    payload["rounds"] = [[]] * 5_000
    path.write_text(json.dumps(payload))
    entry = RecoveryStore(tmp_path).latest_entry()
    assert entry is not None and len(entry.problems) <= 101
    assert "4,900 more past rounds not restored" in entry.problems[-1]
