"""Atomic saves (spec 4.4): a failed save leaves the old file intact and says why."""

from __future__ import annotations

import errno
import os
import stat
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
