"""Saving that never loses data: temporary file, fsync, atomic replace, and never a file
the user brought.

The new content is written to a temporary file in the destination's own folder (so the
final :func:`os.replace` is a rename on one file system, atomic on POSIX and Windows),
flushed to disk, and only then moved over the old file. Any failure removes the temporary
file, leaves the old file untouched and raises :class:`SaveError` saying what went wrong
and where.

Before anything is written, :func:`check_destination` refuses a destination that

* is one of the inputs of the same command (same path, a symbolic or hard link to it, or
  the same name in other letter case, which is the same file on Windows and macOS);
* exists and was not written by PR Planner (:func:`is_ours`): the user's own workbook,
  item list or notes are never replaced, whatever a file dialog asked;
* is a labeling workbook (labelers may be working on copies of it), or a saved session
  about to be replaced by anything but a session or a report (its rounds and settings);
* is read-only;
* changed on disk since the caller read it (:class:`FileFingerprint`), so a second writer
  is reported instead of silently overwritten.

Every workbook PR Planner writes carries a mark (:func:`mark_as_ours`): its document
properties name PR Planner as author and last editor, and its identifier holds a digest of
every other part of the file as written (names, CRC-32s and sizes, read from the zip
directory without unpacking anything). Excel and LibreOffice rewrite every part when they
save (LibreOffice keeps the author, last editor and identifier as they were), and any edit
made by any program changes a part, so the digest no longer matches and the file is no
longer ours: a report the lead has edited and saved is not replaced either. Other files
(an item list in ``.csv``) carry no mark; they are ours only while they are exactly what this
process wrote.

The temporary files are named ``.<destination>.prplanner-<random>.tmp``, next to the
destination. A failed save removes its own; one left by a killed save is removed by the
next save to the same destination once it is a few minutes old.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import gc
import hashlib
import os
import stat
import sys
import tempfile
import time
import traceback
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from xml.etree import ElementTree

from core.errors import InputError

__all__ = [
    "APPLICATION_MARK",
    "ChangedOnDiskError",
    "FileFingerprint",
    "SaveError",
    "atomic_write",
    "atomic_write_path",
    "check_destination",
    "fingerprint",
    "free_name",
    "is_ours",
    "mark_as_ours",
    "save_workbook",
]

#: The author and last editor PR Planner writes into every workbook it saves.
APPLICATION_MARK = "PR Planner"
#: Temporary files are named ``.<destination>.prplanner-<random>.tmp``; one older than this
#: is left over from a killed save and is removed by the next save to the same destination.
STALE_TEMPORARY_SECONDS = 300
#: Namespace of a workbook part's elements (the sheet list of ``xl/workbook.xml``).
_MAIN_NAMESPACE = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
#: The identifier of a marked workbook: this prefix, then the digest of its other parts.
_DIGEST_PREFIX = "prplanner-content-sha256:"
#: Stands in for the digest until every other part of the workbook is written.
_PENDING_DIGEST = _DIGEST_PREFIX + "pending"
_CORE_PART = "docProps/core.xml"
#: A workbook with more parts than this is not one PR Planner wrote (a report has ~30).
_MAX_MARKED_PARTS = 10_000
_TEMPORARY_INFIX = ".prplanner-"
#: docProps/core.xml of a real workbook is a few hundred bytes; read no more than this.
_MAX_CORE_PROPERTIES_BYTES = 1 << 16
_CORE_NAMESPACES = {
    "cp": "http://schemas.openxmlformats.org/package/2006/metadata/core-properties",
    "dc": "http://purl.org/dc/elements/1.1/",
}

T = TypeVar("T")


class SaveError(InputError):
    """A save that did not happen; the file that was there before is intact.

    The message names the file and the cause in plain words (folder is read-only, disk is
    full, ...), ready to show to the user unchanged.
    """


class ChangedOnDiskError(SaveError):
    """The destination changed on disk since it was read or last saved (another program or
    window wrote it); it was not overwritten."""


_CAUSES = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EACCES: "the folder or file is read-only (permission denied)",
    errno.EPERM: "the folder or file is read-only (operation not permitted)",
    errno.EROFS: "the folder is on a read-only file system",
    errno.ENOENT: "the folder does not exist",
    errno.ENOTDIR: "a part of the folder path is not a folder",
    errno.EISDIR: "the destination is a folder",
    errno.ETXTBSY: "the file is in use by another program",
    errno.EBUSY: "the file is in use by another program",
    errno.ENAMETOOLONG: "the file name is too long; choose a shorter name",
}


@dataclass(frozen=True, slots=True)
class FileFingerprint:
    """What a file looked like when it was read: size, modification time and SHA-256."""

    size: int
    modified_ns: int
    sha256: str


def fingerprint(path: str | os.PathLike[str]) -> FileFingerprint | None:
    """The :class:`FileFingerprint` of ``path``, or ``None`` when there is no such file
    (nor a regular one: a device or a pipe would be read for ever)."""
    path = Path(path)
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return None
        digest = hashlib.sha256()
        with path.open("rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return FileFingerprint(
        size=info.st_size, modified_ns=info.st_mtime_ns, sha256=digest.hexdigest()
    )


def mark_as_ours(workbook: Any) -> None:
    """Mark an openpyxl ``Workbook`` as written by PR Planner (see :func:`is_ours`).

    Sets author and last editor to :data:`APPLICATION_MARK` and makes ``workbook.save``
    write through :func:`save_workbook`, which stamps the content digest.
    """
    workbook.properties.creator = APPLICATION_MARK
    workbook.properties.lastModifiedBy = APPLICATION_MARK
    workbook.properties.identifier = _PENDING_DIGEST
    workbook.save = lambda filename: save_workbook(workbook, filename)


def save_workbook(workbook: Any, path: str | os.PathLike[str]) -> None:
    """Save an openpyxl ``Workbook`` like ``Workbook.save``, marked as PR Planner's, and
    close the archive even when writing fails (a full disk), so nothing is left open to be
    finished, with a traceback, when it is garbage-collected.

    Write to a temporary path of :func:`atomic_write_path`, never to the destination itself.
    """
    from openpyxl.writer.excel import ExcelWriter

    if workbook.properties.identifier != _PENDING_DIGEST:
        workbook.properties.creator = APPLICATION_MARK
        workbook.properties.lastModifiedBy = APPLICATION_MARK
        workbook.properties.identifier = _PENDING_DIGEST
    workbook.properties.modified = dt.datetime.now(tz=dt.UTC).replace(tzinfo=None)
    archive = _MarkedArchive(path, "w", zipfile.ZIP_DEFLATED, allowZip64=True)
    try:
        ExcelWriter(workbook, archive).write_data()
        archive.write_mark()
        archive.close()
    except BaseException:
        # Closing may fail again (the disk is still full); it releases the file either way.
        with contextlib.suppress(Exception):
            archive.close()
        raise


class _MarkedArchive(zipfile.ZipFile):
    """A zip being written whose ``docProps/core.xml`` is held back until every other part
    is in, then written with their digest in place of :data:`_PENDING_DIGEST`."""

    _held_core: bytes | None = None

    def writestr(self, zinfo_or_arcname, data, *args, **kwargs):
        name = getattr(zinfo_or_arcname, "filename", zinfo_or_arcname)
        if name == _CORE_PART and self._held_core is None:
            self._held_core = data.encode("utf-8") if isinstance(data, str) else bytes(data)
            return
        super().writestr(zinfo_or_arcname, data, *args, **kwargs)

    def write_mark(self) -> None:
        core = self._held_core
        if core is None:
            raise ValueError("the workbook has no document properties to mark")
        digest = _content_digest(self.infolist())
        stamped = core.replace(_PENDING_DIGEST.encode(), (_DIGEST_PREFIX + digest).encode())
        super().writestr(_CORE_PART, stamped)


def _content_digest(members: Iterable[zipfile.ZipInfo]) -> str:
    """SHA-256 of the names, CRC-32s and sizes of every part but the core properties."""
    digest = hashlib.sha256()
    for member in sorted(members, key=lambda item: item.filename):
        if member.filename != _CORE_PART:
            digest.update(f"{member.filename}\0{member.CRC}\0{member.file_size}\n".encode())
    return digest.hexdigest()


#: Files this process wrote that carry no mark (``.csv``): (device, inode) -> (size, mtime).
_WRITTEN_HERE: dict[tuple[int, int], tuple[int, int]] = {}


def _remember_written(path: Path) -> None:
    with contextlib.suppress(OSError):
        info = path.stat()
        _WRITTEN_HERE[(info.st_dev, info.st_ino)] = (info.st_size, info.st_mtime_ns)


def _written_here(path: Path) -> bool:
    try:
        info = path.stat()
    except OSError:
        return False
    return _WRITTEN_HERE.get((info.st_dev, info.st_ino)) == (info.st_size, info.st_mtime_ns)


def _regular_file(path: str | os.PathLike[str]) -> bool:
    """A regular file (after links): never a device, pipe or socket, whose reading would
    block or never end (``/dev/zero`` named ``x.xlsx``)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


#: What reading one part of a workbook's zip can raise besides a plain error: an
#: encrypted member (RuntimeError), a method zipfile lacks such as Deflate64 or AES
#: (NotImplementedError), damaged data (zlib.error, EOFError); fuzz 15 found each
#: reported as an internal error.
_UNREADABLE = (
    OSError,
    KeyError,
    zipfile.BadZipFile,
    ElementTree.ParseError,
    ValueError,
    RuntimeError,
    NotImplementedError,
    zlib.error,
    EOFError,
)


def is_ours(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a file PR Planner wrote and nobody has re-saved since.

    A workbook is ours when its author and last editor are PR Planner and its identifier
    holds the digest of its other parts as written (:func:`mark_as_ours`): a re-save by
    Excel or LibreOffice, or an edit by any program, changes those parts. Only the zip directory and
    the small core-properties part are read (bounded in size). Any other file is ours only
    while it is exactly what this process wrote. Anything that cannot be read is not ours.
    """
    path = Path(path)
    if _written_here(path):
        return True
    if not _regular_file(path):
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
            if len(members) > _MAX_MARKED_PARTS:
                return False
            core = _small_part(archive, _CORE_PART)
    except _UNREADABLE:
        return False
    creator = core.findtext("dc:creator", default="", namespaces=_CORE_NAMESPACES)
    editor = core.findtext("cp:lastModifiedBy", default="", namespaces=_CORE_NAMESPACES)
    identifier = core.findtext("dc:identifier", default="", namespaces=_CORE_NAMESPACES)
    return creator == editor == APPLICATION_MARK and identifier == _DIGEST_PREFIX + _content_digest(
        members
    )


#: The core-properties category of a report exported for others (a session has none).
REPORT_CATEGORY = "PR Planner report"


def is_exported_report(path: str | os.PathLike[str]) -> bool:
    """True for a workbook PR Planner wrote as a report for others (Export report…,
    ``prplanner report``): it opens like a session, but saving over it would replace what
    was sent. Anything that cannot be read says False."""
    try:
        with zipfile.ZipFile(path) as archive:
            core = _small_part(archive, _CORE_PART)
    except _UNREADABLE:
        return False
    category = core.findtext("cp:category", default="", namespaces=_CORE_NAMESPACES)
    return category == REPORT_CATEGORY


def _small_part(archive: zipfile.ZipFile, name: str) -> ElementTree.Element:
    member = archive.getinfo(name)
    if member.file_size > _MAX_CORE_PROPERTIES_BYTES:
        raise ValueError(f"{name} is too large for document properties")
    text = archive.read(member)
    if b"<!DOCTYPE" in text or b"<!ENTITY" in text:
        raise ValueError(f"{name} declares a DTD")
    return ElementTree.fromstring(text)


def _same_file(first: Path, second: Path) -> bool:
    """Same path, a symbolic or hard link to it, or the same name in other letter case."""
    with contextlib.suppress(OSError):
        if os.path.samefile(first, second):
            return True
    try:
        first_name = os.path.normcase(os.path.abspath(first.resolve()))
        second_name = os.path.normcase(os.path.abspath(second.resolve()))
    except (OSError, RuntimeError):  # a name too long, a symbolic link loop
        return False
    return first_name.casefold() == second_name.casefold()


#: Longest file name in bytes most file systems take (ext4, APFS, NTFS in UTF-16 units).
NAME_BYTES = 255


def _taken(path: Path) -> bool:
    """A file (or link) is at ``path``; a name the system cannot hold (too long) is none:
    ``Path.exists`` raises for it (fuzz 17: 81 Chinese characters and a suffix)."""
    try:
        return path.exists() or path.is_symlink()
    except OSError:
        return False


def free_name(folder: str | os.PathLike[str], stem: str, suffix: str) -> Path:
    """``folder/stem suffix``, or ``stem 2``, ``stem 3``, ... : the first name not taken,
    the stem shortened where the name would be longer than a file system takes."""
    folder = Path(folder)
    room = NAME_BYTES - len(suffix.encode()) - len(b" 999")
    while len(stem.encode()) > room:
        stem = stem[:-1]
    candidate = folder / f"{stem}{suffix}"
    number = 2
    while _taken(candidate):
        candidate = folder / f"{stem} {number}{suffix}"
        number += 1
    return candidate


def lock_file_of(path: Path) -> Path | None:
    """The lock file of a program that has ``path`` open, if there is one.

    Excel writes ``~$`` + the name (for longer names, ``~$`` replaces its first two
    characters); LibreOffice writes ``.~lock.`` + the name + ``#``. A lock file name too
    long for the file system cannot be there.
    """
    name = path.name
    candidates = [f"~${name}", f"~${name[2:]}", f".~lock.{name}#"]
    for candidate in candidates:
        lock = path.with_name(candidate)
        if _taken(lock):
            return lock
    return None


def locked(paths: Sequence[str | os.PathLike[str]]) -> list[tuple[Path, Path]]:
    """Each of ``paths`` another program has open, with its lock file (:func:`lock_file_of`):
    labels typed there since the last save are not in the file yet."""
    found = []
    for path in map(Path, paths):
        lock = lock_file_of(path)
        if lock is not None:
            found.append((path, lock))
    return found


def _suffix_of(destination: Path, purpose: str) -> str:
    """The suffix a name suggested instead of ``destination`` gets: PR Planner writes its
    workbooks as .xlsx, so ``-o items.csv`` for a report suggests ``items report.xlsx``."""
    if purpose == "output" or destination.suffix.casefold() == ".xlsx":
        return destination.suffix
    return ".xlsx"


def check_destination(
    path: str | os.PathLike[str],
    *,
    sources: Iterable[str | os.PathLike[str]] = (),
    expected: FileFingerprint | None = None,
    replace_foreign: bool = False,
    purpose: str = "output",
) -> None:
    """Refuse, with a :class:`SaveError` saying what to do, a destination that must not
    be written (see the module docstring).

    Parameters
    ----------
    path : str or path-like
        The file about to be written.
    sources : iterable of path-like
        The files the content was read from; the destination may be none of them.
    expected : FileFingerprint, optional
        What the destination looked like when it was read or last saved; a different file
        on disk now means another program changed it.
    replace_foreign : bool
        Allow replacing an existing file PR Planner did not write. Only the writer that
        adds a round to the lead's own rounds workbook (and keeps everything else in it)
        sets this.
    purpose : str
        What is being written ("report", "session", "labels", "rounds", "output"), for the
        name a refusal suggests instead (``my_rounds report.xlsx``); anything but a session
        or a report is refused over a saved session.
    """
    destination = Path(path)
    for source in sources:
        source = Path(source)
        if _same_file(destination, source):
            instead = free_name(
                destination.parent, f"{source.stem} {purpose}", _suffix_of(destination, purpose)
            )
            raise SaveError(
                f"will not write to {destination.name}: it is a file read here as input "
                f"({source.name}), and writing there would replace it; choose another "
                f"name, for example {instead.name}"
            )
    try:
        if destination.is_dir():
            raise SaveError(f"could not save {destination}: the destination is a folder")
        info = destination.stat()
    except FileNotFoundError:
        if expected is not None:
            raise ChangedOnDiskError(
                f"{destination.name} was moved or deleted since it was opened; nothing was "
                "written (use Save As to write it again)"
            ) from None
        return
    except OSError as exc:
        raise SaveError(f"could not save {destination}: {_cause(exc)}") from exc
    if not stat.S_ISREG(info.st_mode):
        # Writing to a device or a pipe never ends (or feeds nobody): refused at once.
        raise SaveError(
            f"could not save {destination}: it is not a regular file (a device or a pipe); "
            "choose a file name"
        )
    instead = free_name(
        destination.parent, f"{destination.stem} {purpose}", _suffix_of(destination, purpose)
    )
    if purpose == "rounds":
        # The lead's rounds workbook holds the history: another name would start a new
        # one without it, so no other name is suggested.
        _refuse_locked_or_read_only_rounds(destination, info)
    lock = lock_file_of(destination)
    if lock is not None:
        # Saving under Excel or LibreOffice means one of the two versions is lost when the
        # other program saves.
        raise SaveError(
            f"{destination.name} is open in another program (lock file {lock.name}); it was "
            f"not replaced. Close it there and save again, or choose another name, for "
            f"example {instead.name} (if nothing has it open, the lock file is left from a "
            "crash and can be deleted)"
        )
    if not info.st_mode & stat.S_IWUSR:
        raise SaveError(
            f"{destination.name} is read-only; it was not replaced. Choose another name "
            f"(for example {instead.name}), or make the file writable first"
        )
    if expected is not None:
        if fingerprint(destination) != expected:
            raise ChangedOnDiskError(
                f"{destination.name} changed on disk since you opened it (another program or "
                "window wrote it); it was not overwritten. Use Save As to keep both"
            )
        return
    if not replace_foreign and not is_ours(destination):
        raise SaveError(
            f"{destination.name} already exists and was not written by PR Planner, or was "
            "changed since PR Planner wrote it (by someone's edit in Excel or LibreOffice: "
            f"a labeled copy, your own workbook); it was not replaced. Choose a new name, "
            f"for example {instead.name}"
        )
    sheets = sheet_names(destination)
    if not sheets and zipfile.is_zipfile(destination):
        # A workbook whose sheet list cannot be read may still be a labeling workbook
        # come back damaged (a sync, a partial copy), which Excel or LibreOffice would
        # repair: it was overwritten as "not a labeling workbook" (fuzz 15).
        raise SaveError(
            f"{destination.name} already exists and its sheets cannot be read (a damaged "
            "workbook? Excel or LibreOffice may repair it); it was not replaced. Choose "
            f"another name, for example {instead.name}"
        )
    if is_labeling_workbook(sheets):
        raise SaveError(
            f"{destination.name} is a labeling workbook (a sample drawn for labelers, who may "
            f"be working on a copy of it); it was not replaced. Choose another name, for "
            f"example {instead.name}, or delete it first if nobody needs it"
        )
    if is_session(sheets) and purpose not in ("session", "report"):
        # A session and a report are one format (a report opens as a session); anything
        # else written over one loses the rounds and settings it holds.
        raise SaveError(
            f"{destination.name} is a saved PR Planner session (rounds and settings); it was "
            f"not replaced. Choose another name, for example {instead.name}"
        )
    if is_session(sheets) and purpose == "report" and not is_exported_report(destination):
        # A report written over a saved session loses the costs, margins, ensemble and
        # workbooks out with the editors it keeps, which a report does not restore (fuzz 17).
        raise SaveError(
            f"{destination.name} is a saved PR Planner session (your rounds and settings), "
            "not a report; a report written there would lose your settings, so it was not "
            f"replaced. Choose another name, for example {instead.name}"
        )


def _refuse_locked_or_read_only_rounds(destination: Path, info: os.stat_result) -> None:
    lock = lock_file_of(destination)
    if lock is not None:
        raise SaveError(
            f"{destination.name} is open in another program (lock file {lock.name}); the "
            "round was not added. Close it there and try again (if nothing has it open, the "
            "lock file is left from a crash and can be deleted)"
        )
    if not info.st_mode & stat.S_IWUSR:
        raise SaveError(
            f"{destination.name} is read-only; the round was not added. Make the file "
            "writable (it holds your rounds' history), then try again"
        )


def sheet_names(path: str | os.PathLike[str]) -> set[str]:
    """The names of a workbook's sheets (empty when it cannot be read as one); the sheet
    list is one small part of the zip, read within a size bound."""
    if not _regular_file(path):
        return set()
    try:
        with zipfile.ZipFile(path) as archive:
            workbook = _small_part(archive, "xl/workbook.xml")
    except _UNREADABLE:
        return set()
    return {str(sheet.get("name")) for sheet in workbook.iter(f"{{{_MAIN_NAMESPACE}}}sheet")}


def is_labeling_workbook(sheets: set[str]) -> bool:
    """A workbook holding a drawn sample (:mod:`core.workbook.labeling`'s Design and Sample
    sheets)."""
    from core.workbook.labeling import DESIGN_SHEET, SAMPLE_SHEET

    return {DESIGN_SHEET, SAMPLE_SHEET} <= sheets


def is_session(sheets: set[str]) -> bool:
    """A session or report PR Planner wrote (its hidden Inputs sheet restores the session)."""
    from core.workbook.layout import SHEET_INPUTS

    return SHEET_INPUTS in sheets


def _cause(exc: OSError) -> str:
    return _CAUSES.get(exc.errno or -1) or exc.strerror or str(exc) or type(exc).__name__


def _new_file_mode(destination: Path) -> int:
    """Keep the old file's permissions; a new file gets the usual ``0o666 & ~umask``.

    ``mkstemp`` creates ``0o600`` files, which would silently make a shared report private.
    """
    try:
        return stat.S_IMODE(destination.stat().st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _fsync_file(path: Path) -> None:
    descriptor = os.open(path, os.O_RDWR | getattr(os, "O_BINARY", 0))
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX); folders cannot be opened on Windows."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        descriptor = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _temporary_prefix(destination: Path) -> str:
    """``.<name>.prplanner-``: the start of the temporary file a save of ``destination``
    writes first, the name cut where the whole would be too long for a file name (a
    250-character workbook name could not be saved; fuzz 17)."""
    name = destination.name
    room = NAME_BYTES - len(_TEMPORARY_INFIX) - len(b".12345678.tmp") - 1
    while len(name.encode()) > room:
        name = name[:-1]
    return f".{name}{_TEMPORARY_INFIX}"


def _remove_stale_temporaries(destination: Path) -> None:
    """Remove our own temporary files for ``destination`` left behind by a killed save."""
    cutoff = time.time() - STALE_TEMPORARY_SECONDS
    import glob

    pattern = f"{glob.escape(_temporary_prefix(destination))}*.tmp"
    with contextlib.suppress(OSError):
        for leftover in destination.parent.glob(pattern):
            with contextlib.suppress(OSError):
                if leftover.is_file() and leftover.stat().st_mtime < cutoff:
                    leftover.unlink()


def _release(exc: BaseException) -> None:
    """Drop what a failed writer left open, quietly.

    :func:`save_workbook` closes its archive itself; a writer that called plain openpyxl
    ``Workbook.save`` leaves its ``ZipFile`` open when the disk fills, and the object then
    tries to finish the archive when it is garbage-collected, printing a traceback long
    after the one-line error. Clearing the failed frames collects it here, with that noise
    suppressed.
    """
    previous = sys.unraisablehook
    sys.unraisablehook = lambda _unraisable: None
    try:
        traceback.clear_frames(exc.__traceback__)
        gc.collect()
    finally:
        sys.unraisablehook = previous


@contextlib.contextmanager
def atomic_write_path(
    path: str | os.PathLike[str],
    *,
    sources: Iterable[str | os.PathLike[str]] = (),
    expected: FileFingerprint | None = None,
    replace_foreign: bool = False,
    purpose: str = "output",
) -> Iterator[Path]:
    """Context manager yielding a temporary path; on success it replaces ``path``.

    Write the complete new content to the yielded path inside the ``with`` block. When the
    block ends normally the file is flushed to disk and atomically moved over ``path``.

    Parameters
    ----------
    path : str or path-like
        The destination file. Its folder must exist.
    sources, expected, replace_foreign, purpose
        See :func:`check_destination`, which runs first and again just before the old
        file is replaced (another program may have written it in between).

    Yields
    ------
    pathlib.Path
        A fresh, empty file in the same folder as ``path``.

    Raises
    ------
    SaveError
        The temporary file could not be created, written, flushed or moved into place
        (``OSError`` from the block is translated too). The old file is intact and the
        temporary file is gone.

    Notes
    -----
    An :class:`~core.errors.InputError` raised inside the block propagates unchanged and any
    other exception (a bug) propagates as is; in every case the temporary file is removed.

    Examples
    --------
    >>> with atomic_write_path("report.xlsx") as temporary:  # doctest: +SKIP
    ...     workbook.save(temporary)
    """
    destination = Path(path)
    if destination.is_symlink():
        # Saved through a link (latest.xlsx -> rounds_2026.xlsx): the file it points to
        # gets the new content; replacing the link itself would leave that file behind.
        destination = Path(os.path.realpath(destination))
    folder = destination.parent
    sources = tuple(sources)

    def check() -> None:
        check_destination(
            destination,
            sources=sources,
            expected=expected,
            replace_foreign=replace_foreign,
            purpose=purpose,
        )
        _refuse_hard_links(destination)

    check()
    kept = "the old file is unchanged" if destination.exists() else "nothing was written"
    _remove_stale_temporaries(destination)
    try:
        descriptor, name = tempfile.mkstemp(
            prefix=_temporary_prefix(destination), suffix=".tmp", dir=folder
        )
    except OSError as exc:
        raise SaveError(
            f"could not save {destination}: cannot create a file in {folder} "
            f"({_cause(exc)}); {kept}"
        ) from exc
    os.close(descriptor)
    temporary = Path(name)
    try:
        yield temporary
        _fsync_file(temporary)
        os.chmod(temporary, _new_file_mode(destination))
        check()  # again: another program may have written it meanwhile
        os.replace(temporary, destination)
    except OSError as exc:
        _release(exc)
        _remove_quietly(temporary)
        raise SaveError(f"could not save {destination}: {_cause(exc)}; {kept}") from None
    except BaseException as exc:
        _release(exc)
        _remove_quietly(temporary)
        raise
    _fsync_folder(folder)
    _remember_written(destination)


def _refuse_hard_links(destination: Path) -> None:
    """Refuse to replace a file with other names on disk (hard links): the rename gives
    this name the new content and leaves the others on the old one, so the lead's other
    copy silently stops at what it held."""
    try:
        info = os.stat(destination)
    except OSError:
        return  # no file yet (or unreadable: check_destination says why)
    links = info.st_nlink
    if stat.S_ISREG(info.st_mode) and links > 1:
        raise SaveError(
            f"could not save {destination}: the file has {links} names on this disk (hard "
            "links), and saving replaces it, which would leave the other names on the old "
            "content; copy it to a file of its own (or remove the other links) and try "
            "again; the old file is unchanged"
        )


def atomic_write(
    path: str | os.PathLike[str],
    write: Callable[[Path], T],
    *,
    sources: Iterable[str | os.PathLike[str]] = (),
    expected: FileFingerprint | None = None,
    replace_foreign: bool = False,
    purpose: str = "output",
) -> T:
    """Write a file atomically: ``write(temporary_path)`` then replace ``path``.

    Parameters
    ----------
    path : str or path-like
        The destination file.
    write : callable
        Called once with the temporary :class:`~pathlib.Path` (in the destination's folder);
        it must write the whole new content there, e.g. ``workbook.save``.
    sources, expected, replace_foreign, purpose
        See :func:`check_destination`.

    Returns
    -------
    object
        Whatever ``write`` returned.

    Raises
    ------
    SaveError
        See :func:`atomic_write_path`; the old file is left intact.
    """
    with atomic_write_path(
        path, sources=sources, expected=expected, replace_foreign=replace_foreign, purpose=purpose
    ) as temporary:
        return write(temporary)


def _remove_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
