"""Undoable edits, merged slider drags and refusals of the session model."""

from desktop.session_model import SessionModel


def test_a_drag_is_one_undo_step_and_separate_drags_are_separate(qtbot):
    session = SessionModel()
    for s in (2.1, 2.2, 2.3):
        session.set_value("plan.s", s, merge_key="s-drag-1")
    for s in (3.0, 3.5):
        session.set_value("plan.s", s, merge_key="s-drag-2")
    assert session.undo_stack.count() == 2
    session.undo_stack.undo()
    assert session.state.plan.s == 2.3
    session.undo_stack.undo()
    assert session.state.plan.s == 2.0


def test_a_refused_edit_changes_nothing_and_is_announced(qtbot):
    session = SessionModel()
    with qtbot.waitSignal(session.refused) as blocker:
        message = session.set_value("plan.margin_recall", 0.9)
    assert "recall margin" in message
    assert blocker.args == ["plan.margin_recall", message]
    assert session.undo_stack.count() == 0


def test_changed_names_the_path_and_clean_state_tracks_saves(qtbot):
    session = SessionModel()
    session.undo_stack.setClean()
    with qtbot.waitSignal(session.changed) as blocker:
        session.set_value("evaluate.replicates", 2000)
    assert blocker.args == ["evaluate.replicates"]
    assert not session.undo_stack.isClean()
    session.undo_stack.undo()
    assert session.undo_stack.isClean()


def test_setting_the_same_value_adds_no_step(qtbot):
    session = SessionModel()
    session.set_value("plan.v", session.state.plan.v)
    assert session.undo_stack.count() == 0
