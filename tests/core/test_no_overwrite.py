"""No writer replaces a file the user brought: every refusal, through the API and the CLI.

A destination is refused when it is an input of the same command (same path, symbolic
link, hard link, other letter case), exists and was not written by PR Planner (including a
report re-saved by LibreOffice), is read-only, or changed on disk since it was read; the
refusal leaves every byte in place and no temporary file behind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import pytest

from core.cli import main
from core.workbook import safe_io
from core.workbook.safe_io import SaveError, atomic_write, check_destination, fingerprint, is_ours
from core.workbook.session_io import read_session, save_session
from tests.conftest import SHARED_FIXTURES


@pytest.fixture
def rounds(tmp_path) -> Path:
    """The lead's own rounds workbook (written by LibreOffice)."""
    path = tmp_path / "my_rounds.xlsx"
    shutil.copyfile(SHARED_FIXTURES / "rounds_simple.xlsx", path)
    return path


def report_of(source: Path, destination: Path, capsys) -> tuple[int, str]:
    status = main(["report", str(source), "-o", str(destination)])
    return status, capsys.readouterr().err


def files_in(folder: Path) -> dict[str, bytes]:
    return {item.name: item.read_bytes() for item in folder.iterdir() if item.is_file()}


def test_report_onto_its_own_input_is_refused_and_nothing_changes(rounds, capsys):
    before = files_in(rounds.parent)
    status, err = report_of(rounds, rounds, capsys)
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("error: will not write to my_rounds.xlsx")
    assert "choose another name" in err
    assert files_in(rounds.parent) == before


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "case"])
def test_links_and_case_variants_of_the_input_are_refused(rounds, capsys, kind):
    other = rounds.with_name(
        {"symlink": "l.xlsx", "hardlink": "h.xlsx", "case": "MY_ROUNDS.xlsx"}[kind]
    )
    if kind == "symlink":
        other.symlink_to(rounds)
    elif kind == "hardlink":
        os.link(rounds, other)
    before = rounds.read_bytes()
    status, err = report_of(rounds, other, capsys)
    assert status == 2
    assert "it is a file read here as input" in err
    assert rounds.read_bytes() == before


def test_an_existing_workbook_pr_planner_did_not_write_is_not_replaced(rounds, tmp_path, capsys):
    theirs = tmp_path / "notes.xlsx"
    shutil.copyfile(rounds, theirs)
    before = theirs.read_bytes()
    status, err = report_of(rounds, theirs, capsys)
    assert status == 2
    assert "was not written by PR Planner" in err
    assert theirs.read_bytes() == before


def test_a_report_pr_planner_wrote_is_replaced_and_is_marked_as_ours(rounds, tmp_path, capsys):
    report = tmp_path / "report.xlsx"
    assert report_of(rounds, report, capsys)[0] == 0
    assert is_ours(report)
    first = report.read_bytes()
    time.sleep(0.01)
    assert report_of(rounds, report, capsys)[0] == 0  # ours: replaced
    assert is_ours(report)
    assert report.read_bytes() != first or report.stat().st_size == len(first)
    assert not is_ours(rounds)


def test_a_read_only_file_is_not_replaced(rounds, tmp_path, capsys):
    report = tmp_path / "report.xlsx"
    assert report_of(rounds, report, capsys)[0] == 0
    report.chmod(0o444)
    before = report.read_bytes()
    status, err = report_of(rounds, report, capsys)
    assert status == 2 and "is read-only" in err
    assert report.read_bytes() == before


def test_a_session_changed_on_disk_since_it_was_opened_is_not_overwritten(rounds, tmp_path):
    session = tmp_path / "session.xlsx"
    state = read_session(rounds).state
    save_session(session, state)
    opened = fingerprint(session)
    save_session(session, state, expected=opened)  # unchanged on disk: fine
    seen = fingerprint(session)
    # Another window saves the same session in between.
    time.sleep(0.01)
    save_session(session, state)
    before = session.read_bytes()
    with pytest.raises(SaveError, match="changed on disk since you opened it"):
        save_session(session, state, expected=seen)
    assert session.read_bytes() == before


def test_a_session_re_saved_by_libreoffice_is_no_longer_ours(rounds, tmp_path, capsys):
    soffice = shutil.which("soffice")
    if soffice is None:
        pytest.skip("LibreOffice (soffice) is not installed")
    report = tmp_path / "report.xlsx"
    assert report_of(rounds, report, capsys)[0] == 0
    out = tmp_path / "resaved"
    subprocess.run(
        [soffice, "--headless", "--convert-to", "xlsx", "--outdir", str(out), str(report)],
        capture_output=True,
        timeout=180,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    resaved = out / "report.xlsx"
    assert resaved.is_file(), "LibreOffice did not write the file"
    assert not is_ours(resaved)
    status, err = report_of(rounds, resaved, capsys)
    assert status == 2 and "was not written by PR Planner" in err


def test_is_ours_is_false_for_anything_that_is_not_our_workbook(tmp_path):
    text = tmp_path / "items.csv"
    text.write_text("id,predicted\n1,1\n")
    assert not is_ours(text)
    assert not is_ours(tmp_path / "missing.xlsx")
    bomb = tmp_path / "bomb.xlsx"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("docProps/core.xml", b"<a>" + b" " * (1 << 20) + b"</a>")
        archive.writestr("docProps/app.xml", b"<a/>")
    assert not is_ours(bomb)


def test_stale_temporary_files_of_ours_are_removed_by_the_next_save(tmp_path):
    target = tmp_path / "out.txt"
    stale = tmp_path / ".out.txt.prplanner-abc123.tmp"
    fresh = tmp_path / ".out.txt.prplanner-def456.tmp"
    other = tmp_path / ".notes.txt.prplanner-zzz.tmp"
    for item in (stale, fresh, other):
        item.write_bytes(b"half a save")
    old = time.time() - safe_io.STALE_TEMPORARY_SECONDS - 60
    os.utime(stale, (old, old))
    os.utime(other, (old, old))
    atomic_write(target, lambda temporary: temporary.write_text("new"))
    assert not stale.exists()
    assert fresh.exists()  # perhaps another save in progress right now
    assert other.exists()  # another destination's
    assert target.read_text() == "new"


def test_check_destination_accepts_a_new_file_and_refuses_a_folder(tmp_path):
    check_destination(tmp_path / "new.xlsx", sources=[tmp_path / "in.xlsx"])
    with pytest.raises(SaveError, match="is a folder"):
        check_destination(tmp_path)


def test_a_full_disk_prints_one_line_and_no_traceback(rounds, tmp_path):
    """openpyxl leaves its zip open when the disk fills; nothing of it may reach stderr."""
    script = textwrap.dedent(
        f"""
        import errno, zipfile
        real = zipfile.ZipFile.writestr
        def full(self, *args, **kwargs):
            raise OSError(errno.ENOSPC, "No space left on device")
        zipfile.ZipFile.writestr = full
        from core.cli import main
        raise SystemExit(main(["report", {str(rounds)!r}, "-o", {str(tmp_path / "r.xlsx")!r}]))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1, result.stderr
    assert "the disk is full" in result.stderr
    assert not (tmp_path / "r.xlsx").exists()
    assert [item.name for item in tmp_path.iterdir()] == [rounds.name]


def test_replace_foreign_lets_only_the_append_writer_modify_a_users_workbook(rounds, tmp_path):
    """``labels --append-to`` adds a round to the lead's own workbook: it may replace a file
    PR Planner did not write, but still never a read-only one or one changed meanwhile."""
    seen = fingerprint(rounds)
    atomic_write(rounds, lambda temporary: temporary.write_bytes(b"appended"), replace_foreign=True)
    assert rounds.read_bytes() == b"appended"
    rounds.chmod(0o444)
    with pytest.raises(SaveError, match="is read-only"):
        atomic_write(rounds, lambda temporary: temporary.write_bytes(b"x"), replace_foreign=True)
    rounds.chmod(0o644)
    with pytest.raises(SaveError, match="changed on disk since you opened it"):
        atomic_write(
            rounds,
            lambda temporary: temporary.write_bytes(b"x"),
            replace_foreign=True,
            expected=seen,  # taken before the append above
        )
    assert rounds.read_bytes() == b"appended"
    assert sorted(item.name for item in tmp_path.iterdir()) == ["my_rounds.xlsx"]


def test_a_hard_link_to_a_report_of_ours_is_still_refused_as_the_input(rounds, tmp_path, capsys):
    report = tmp_path / "report.xlsx"
    assert report_of(rounds, report, capsys)[0] == 0
    alias = tmp_path / "alias.xlsx"
    os.link(report, alias)
    before = report.read_bytes()
    status, err = report_of(report, alias, capsys)  # ours, but it is the input
    assert status == 2 and "it is a file read here as input" in err
    assert report.read_bytes() == before


def test_the_cli_refusal_names_a_free_file_to_use_instead(rounds, capsys):
    (rounds.parent / "my_rounds report.xlsx").write_bytes(b"someone's")
    status, err = report_of(rounds, rounds, capsys)
    assert status == 2
    assert err.rstrip().endswith("for example my_rounds report 2.xlsx")
    status, _err = report_of(rounds, rounds.parent / "my_rounds report 2.xlsx", capsys)
    assert status == 0


def test_a_saved_session_is_replaced_only_by_a_session_or_a_report(rounds, tmp_path, capsys):
    """A session (or report: one format) holds the lead's rounds and settings; a labeling
    workbook, or a rounds workbook ``labels --append-to`` starts, never replaces it."""
    session = tmp_path / "my session.xlsx"
    assert report_of(rounds, session, capsys)[0] == 0
    before = session.read_bytes()
    for purpose in ("labels", "rounds", "output"):
        with pytest.raises(SaveError) as caught:
            check_destination(session, purpose=purpose)
        assert "saved PR Planner session" in str(caught.value)
        assert f"my session {purpose}.xlsx" in str(caught.value)
    for purpose in ("session", "report"):
        check_destination(session, purpose=purpose)
    # Through the command line: a sample drawn onto the session is refused, nothing written.
    items = tmp_path / "items.csv"
    items.write_text("id,predicted\n" + "".join(f"i{n},{n % 2}\n" for n in range(20)))
    status = main(
        ["select", str(items), "--n-pos", "2", "--n-neg", "2", "--seed", "1", "-o", str(session)]
    )
    assert status == 2 and "saved PR Planner session" in capsys.readouterr().err
    assert session.read_bytes() == before


def _damaged(path: Path, member: str, how: str) -> None:
    """``path`` with ``member`` damaged in place: one byte of its data flipped (``"byte"``)
    or marked encrypted in the zip directory (``"encrypted"``), as a sync or a partial copy
    leaves a file, or as a zip tool that encrypts writes it."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    if how == "byte":
        name_length = int.from_bytes(
            data[info.header_offset + 26 : info.header_offset + 28], "little"
        )
        extra_length = int.from_bytes(
            data[info.header_offset + 28 : info.header_offset + 30], "little"
        )
        start = info.header_offset + 30 + name_length + extra_length
        data[start + info.compress_size // 2] ^= 0xFF
    else:
        entry = data.index(b"PK\x01\x02")
        while True:  # the directory entry of ``member``
            name_length = int.from_bytes(data[entry + 28 : entry + 30], "little")
            if data[entry + 46 : entry + 46 + name_length] == member.encode():
                break
            entry = data.index(b"PK\x01\x02", entry + 4)
        data[entry + 8] |= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["byte", "encrypted"])
def test_a_damaged_labeling_workbook_is_not_replaced_nor_an_internal_error(tmp_path, capsys, how):
    # Its sheet list could not be read, so it was "not a labeling workbook" and a new draw
    # replaced it (a copy come back from the labelers damaged by a sync); an encrypted
    # member was an internal error in every command (fuzz 15).
    items = tmp_path / "items.csv"
    items.write_text("id,predicted\n" + "".join(f"i{n},{n % 2}\n" for n in range(40)))
    drawn = tmp_path / "round.xlsx"
    command = ["select", str(items), "--n-pos", "3", "--n-neg", "3", "--seed", "1"]
    assert main([*command, "-o", str(drawn)]) == 0
    _damaged(drawn, "xl/workbook.xml", how)
    before = drawn.read_bytes()
    capsys.readouterr()
    assert main([*command, "-o", str(drawn)]) == 2
    error = capsys.readouterr().err
    assert "its sheets cannot be read" in error and "it was not replaced" in error
    assert drawn.read_bytes() == before
    for other in (["labels", str(drawn)], ["count", str(drawn)]):
        assert main(other) == 2
        said = capsys.readouterr().err
        assert "internal error" not in said and said.count("\n") == 1


def test_a_report_never_replaces_a_saved_session(rounds, tmp_path, capsys):
    # Fuzz 17: `report X -o SESSION` replaced the lead's saved session (costs, margins,
    # ensemble, workbooks out with the editors), which a report does not restore.
    from core.session import SessionState
    from core.workbook.session_io import save_session

    session = tmp_path / "lead session.xlsx"
    save_session(session, SessionState())
    before = session.read_bytes()
    status, err = report_of(rounds, session, capsys)
    assert status == 2 and session.read_bytes() == before
    assert "lead session.xlsx is a saved PR Planner session (your rounds and settings), not a " \
        "report" in err  # fmt: skip
    assert "for example lead session report.xlsx" in err
    check_destination(session, purpose="session")  # Save As over it stays the lead's call
    # A report PR Planner wrote is replaced by the next one.
    report = tmp_path / "report.xlsx"
    assert report_of(rounds, report, capsys)[0] == 0
    assert report_of(rounds, report, capsys)[0] == 0
