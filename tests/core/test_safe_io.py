"""Atomic saves: a failed save leaves the old file intact, says why in one line and leaves
no temporary file; the mark that makes a file PR Planner's survives only in what it wrote."""

from __future__ import annotations

import errno
import gc
import os
import stat
import sys
import time
import zipfile
from pathlib import Path

import openpyxl
import pytest

from core.errors import InputError
from core.workbook import SaveError, atomic_write, atomic_write_path, read_rounds, safe_io

OLD = b"the old report"


@pytest.fixture
def existing(tmp_path, monkeypatch) -> Path:
    """A file PR Planner wrote before: these tests are about the mechanics of replacing
    it (tests/core/test_no_overwrite.py covers which files may be replaced at all)."""
    path = tmp_path / "report.xlsx"
    path.write_bytes(OLD)
    monkeypatch.setattr(safe_io, "is_ours", lambda candidate: Path(candidate) == path)
    return path


def leftovers(folder: Path, keep: Path) -> list[str]:
    return sorted(item.name for item in folder.iterdir() if item != keep)


def test_writes_through_a_temporary_file_in_the_same_folder(existing):
    seen = []

    def write(temporary: Path) -> str:
        seen.append(temporary)
        assert temporary.parent == existing.parent
        assert temporary != existing
        assert existing.read_bytes() == OLD  # untouched until the new file is complete
        temporary.write_bytes(b"new")
        return "done"

    assert atomic_write(existing, write) == "done"
    assert existing.read_bytes() == b"new"
    assert not seen[0].exists()
    assert leftovers(existing.parent, existing) == []


def test_context_manager_and_a_new_file_get_usual_permissions(tmp_path):
    target = tmp_path / "new.txt"
    with atomic_write_path(target) as temporary:
        temporary.write_text("hello")
    assert target.read_text() == "hello"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


def test_the_old_files_permissions_are_kept(existing):
    existing.chmod(0o640)
    atomic_write(existing, lambda temporary: temporary.write_bytes(b"new"))
    assert stat.S_IMODE(existing.stat().st_mode) == 0o640


def test_an_openpyxl_workbook_saved_atomically_reads_back(tmp_path):
    workbook = openpyxl.Workbook()
    workbook.active.append(["round", "k", "TP", "FP", "FN", "TN"])
    workbook.active.append(["A", 0.05, 1, 2, 3, 4])
    target = tmp_path / "rounds.xlsx"
    atomic_write(target, workbook.save)
    (item,) = read_rounds(target).rounds
    assert (item.round, item.tp) == ("A", 1)


def test_disk_full_while_writing_keeps_the_old_file(existing):
    def write(temporary: Path) -> None:
        temporary.write_bytes(b"half")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(SaveError) as caught:
        atomic_write(existing, write)
    message = str(caught.value)
    assert "disk is full" in message and str(existing) in message and "unchanged" in message
    assert isinstance(caught.value, InputError)
    assert existing.read_bytes() == OLD
    assert leftovers(existing.parent, existing) == []


def test_disk_full_at_fsync_keeps_the_old_file(existing, monkeypatch):
    def no_space(descriptor):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(safe_io.os, "fsync", no_space)
    with pytest.raises(SaveError, match="disk is full"):
        atomic_write(existing, lambda temporary: temporary.write_bytes(b"new"))
    assert existing.read_bytes() == OLD
    assert leftovers(existing.parent, existing) == []


def test_read_only_folder_simulated(existing, monkeypatch):
    # Tests run as root, where chmod does not stop writes: refuse the temporary file instead.
    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(safe_io.tempfile, "mkstemp", refuse)
    with pytest.raises(SaveError) as caught:
        atomic_write(existing, lambda temporary: temporary.write_bytes(b"new"))
    message = str(caught.value)
    assert "read-only" in message and str(existing.parent) in message
    assert existing.read_bytes() == OLD


def test_replace_refused_keeps_the_old_file(existing, monkeypatch):
    def refuse(source, destination):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

    monkeypatch.setattr(safe_io.os, "replace", refuse)
    with pytest.raises(SaveError, match="read-only"):
        atomic_write(existing, lambda temporary: temporary.write_bytes(b"new"))
    assert existing.read_bytes() == OLD
    assert leftovers(existing.parent, existing) == []


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores chmod")
def test_really_read_only_folder(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    target = folder / "report.xlsx"
    target.write_bytes(OLD)
    folder.chmod(0o500)
    try:
        with pytest.raises(SaveError, match="read-only"):
            atomic_write(target, lambda temporary: temporary.write_bytes(b"new"))
        assert target.read_bytes() == OLD
    finally:
        folder.chmod(0o700)


def test_missing_folder_and_folder_as_destination(tmp_path):
    with pytest.raises(SaveError, match="folder does not exist"):
        atomic_write(tmp_path / "nowhere" / "r.xlsx", lambda temporary: None)
    with pytest.raises(SaveError, match="is a folder"):
        atomic_write(tmp_path, lambda temporary: None)


@pytest.mark.parametrize("error", [InputError("bad margin"), RuntimeError("bug")])
def test_other_failures_propagate_unchanged_and_clean_up(existing, error):
    def write(temporary: Path) -> None:
        temporary.write_bytes(b"half")
        raise error

    with pytest.raises(type(error), match=str(error)):
        atomic_write(existing, write)
    assert existing.read_bytes() == OLD
    assert leftovers(existing.parent, existing) == []


# --- the mark: what makes a file "ours" ----------------------------------------------------


def marked_workbook() -> openpyxl.Workbook:
    workbook = openpyxl.Workbook()
    workbook.active.append(["round", "k", "TP", "FP", "FN", "TN"])
    workbook.active.append(["A", 0.05, 1, 2, 3, 4])
    safe_io.mark_as_ours(workbook)
    return workbook


def test_a_marked_workbook_is_ours_until_someone_saves_a_change(tmp_path):
    ours = tmp_path / "ours.xlsx"
    atomic_write(ours, marked_workbook().save)
    assert safe_io.is_ours(ours)
    # A script that opens it, adds a note and saves it keeps author and last editor, but
    # the sheet changed: not ours.
    resaved = tmp_path / "resaved.xlsx"
    edited = openpyxl.load_workbook(ours)
    edited.active["H1"] = "my note"
    edited.save(resaved)
    with zipfile.ZipFile(resaved) as archive:
        assert b"<dc:creator>PR Planner</dc:creator>" in archive.read("docProps/core.xml")
    assert not safe_io.is_ours(resaved)
    # The mark alone (properties copied into another workbook) is not enough either.
    other = openpyxl.Workbook()
    other.properties = openpyxl.load_workbook(ours).properties
    other.save(tmp_path / "copied mark.xlsx")
    assert not safe_io.is_ours(tmp_path / "copied mark.xlsx")


def test_one_changed_part_is_enough_to_lose_the_mark(tmp_path):
    ours = tmp_path / "ours.xlsx"
    atomic_write(ours, marked_workbook().save)
    edited = tmp_path / "edited.xlsx"
    with zipfile.ZipFile(ours) as source, zipfile.ZipFile(edited, "w") as target:
        for member in source.infolist():
            data = source.read(member)
            if member.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(b"<v>1</v>", b"<v>9</v>")
            target.writestr(member, data)
    assert not safe_io.is_ours(edited)


def test_a_full_disk_inside_openpyxl_closes_the_zip_and_prints_nothing(tmp_path, monkeypatch):
    """The archive is closed in the failing save itself: nothing is left for the garbage
    collector to finish (with a ``ZipFile.__del__`` traceback) after the one-line error."""
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    real = zipfile.ZipFile.writestr
    calls = []

    def fill_up(self, *args, **kwargs):
        calls.append(args[0])
        if len(calls) > 3:  # the disk fills in the middle of the workbook
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "writestr", fill_up)
    target = tmp_path / "full.xlsx"
    with pytest.raises(OSError, match="No space"):
        safe_io.save_workbook(marked_workbook(), target)
    monkeypatch.setattr(zipfile.ZipFile, "writestr", real)
    gc.collect()
    assert unraisable == []
    target.unlink()  # closed: removable at once, also on Windows


def test_a_csv_is_ours_only_while_it_is_what_this_process_wrote(tmp_path):
    items = tmp_path / "selected.csv"
    items.write_text("id\n1\n")
    assert not safe_io.is_ours(items)  # the user's: refused
    with pytest.raises(SaveError, match="was not written by PR Planner"):
        atomic_write(items, lambda temporary: temporary.write_text("id\n2\n"))
    assert items.read_text() == "id\n1\n"
    fresh = tmp_path / "fresh.csv"
    atomic_write(fresh, lambda temporary: temporary.write_text("id\n3\n"))
    assert safe_io.is_ours(fresh)
    atomic_write(fresh, lambda temporary: temporary.write_text("id\n4\n"))  # again: fine
    time.sleep(0.01)
    fresh.write_text("id\n4\nmine\n")  # the user edits it
    assert not safe_io.is_ours(fresh)


def test_a_destination_written_by_someone_else_during_the_save_is_not_replaced(tmp_path):
    target = tmp_path / "session.xlsx"
    atomic_write(target, marked_workbook().save)
    seen = safe_io.fingerprint(target)

    def write(temporary: Path) -> None:
        temporary.write_bytes(b"ours, new")
        target.write_bytes(b"another window saved here meanwhile")

    with pytest.raises(SaveError, match="changed on disk since you opened it"):
        atomic_write(target, write, expected=seen)
    assert target.read_bytes() == b"another window saved here meanwhile"
    assert leftovers(tmp_path, target) == []


def test_a_refusal_suggests_a_free_name(tmp_path):
    source = tmp_path / "my_rounds.xlsx"
    source.write_bytes(b"theirs")
    (tmp_path / "my_rounds report.xlsx").write_bytes(b"taken")
    with pytest.raises(SaveError) as caught:
        safe_io.check_destination(source, sources=[source], purpose="report")
    assert str(caught.value).endswith("for example my_rounds report 2.xlsx")
    assert safe_io.free_name(tmp_path, "new", ".csv") == tmp_path / "new.csv"


@pytest.mark.parametrize("lock_name", ["~$report.xlsx", ".~lock.report.xlsx#"])
def test_a_destination_open_in_excel_or_libreoffice_is_not_replaced(tmp_path, lock_name):
    report = tmp_path / "report.xlsx"
    atomic_write(report, lambda temporary: openpyxl.Workbook().save(temporary))
    assert safe_io.is_ours(report)
    safe_io.check_destination(report, purpose="report")  # ours, not open: may be replaced
    (tmp_path / lock_name).write_text("owner")
    with pytest.raises(SaveError) as caught:
        safe_io.check_destination(report, purpose="report")
    assert "is open in another program" in str(caught.value) and lock_name in str(caught.value)


def test_a_failure_before_anything_existed_says_nothing_was_written(tmp_path):
    def write(temporary: Path) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(SaveError, match="disk is full; nothing was written"):
        atomic_write(tmp_path / "new.xlsx", write)
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def devices(tmp_path):
    """A pipe and a link to /dev/zero, both named like workbooks: reading either would
    block or never end."""
    pipe = tmp_path / "pipe.xlsx"
    os.mkfifo(pipe)
    zero = tmp_path / "zero.xlsx"
    zero.symlink_to("/dev/zero")
    return pipe, zero, Path("/dev/null")


def test_a_device_or_pipe_is_never_read_nor_written(devices):
    for path in devices:
        with pytest.raises(SaveError, match="not a regular file"):
            safe_io.check_destination(path, purpose="report")
        assert safe_io.fingerprint(path) is None
        assert safe_io.sheet_names(path) == set()
        assert not safe_io.is_ours(path)


def test_labels_append_to_a_pipe_is_refused_at_once(devices, capsys, tmp_path):
    from core.cli import main

    pipe, zero, _null = devices
    for target in (pipe, zero):
        status = main(["labels", str(tmp_path / "none.xlsx"), "--append-to", str(target)])
        assert status == 2
        assert "not a regular file" in capsys.readouterr().err


def test_a_file_name_too_long_is_a_save_error_saying_so(tmp_path):
    destination = tmp_path / ("x" * 300 + ".xlsx")
    with pytest.raises(SaveError, match="the file name is too long; choose a shorter name"):
        safe_io.check_destination(destination, sources=(tmp_path / "rounds.xlsx",))


def test_a_file_name_near_the_longest_is_saved_and_named_without_an_error(tmp_path, capsys):
    # Fuzz 17: a 250-character workbook name (81 Chinese characters are as long) is legal,
    # but its lock files, its temporary file and the names suggested beside it are not:
    # Path.exists raised, and nothing could be saved or added to it.
    from core.cli import main
    from core.workbook.append_round import NewRound, append_round, start_rounds_workbook

    for letter in ("y", "票"):
        stem = letter * (250 // len(letter.encode()))
        path = tmp_path / f"{stem}.xlsx"
        assert len(path.name.encode()) <= safe_io.NAME_BYTES
        assert safe_io.lock_file_of(path) is None  # its lock file names are too long
        suggested = safe_io.free_name(tmp_path, f"{stem} session", ".xlsx")
        assert len(suggested.name.encode()) <= safe_io.NAME_BYTES
        assert suggested.name.startswith(letter * 10) and suggested.name.endswith(".xlsx")
        new_round = NewRound(round="R1", population_pos=100, population_neg=900, tp=8, fp=2,
                             fn=3, tn=40)  # fmt: skip
        start_rounds_workbook(path, [new_round])
        append_round(path, NewRound(round="R2", population_pos=100, population_neg=900, tp=9,
                                    fp=1, fn=3, tn=41))  # fmt: skip
        assert [item.round for item in read_rounds(path).rounds] == ["R1", "R2"]
        assert main(["report", str(path), "-o", str(path)]) == 2
        err = capsys.readouterr().err
        assert "it is a file read here as input" in err and "Traceback" not in err
        assert [item.name for item in tmp_path.iterdir() if ".prplanner-" in item.name] == []
