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
* is read-only;
* changed on disk since the caller read it (:class:`FileFingerprint`), so a second writer
  is reported instead of silently overwritten.

Every workbook PR Planner writes carries a mark (:func:`mark_as_ours`): its document
properties name PR Planner as author and last editor. Excel and LibreOffice put the
person's name (or nothing) in "last modified by" when they re-save a file, so a report the
lead has edited and saved is no longer ours and is not replaced either.
"""

from __future__ import annotations

import contextlib
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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from xml.etree import ElementTree

from core.errors import InputError

__all__ = [
    "APPLICATION_MARK",
    "FileFingerprint",
    "SaveError",
    "atomic_write",
    "atomic_write_path",
    "check_destination",
    "fingerprint",
    "is_ours",
    "mark_as_ours",
]

#: The author and last editor PR Planner writes into every workbook it saves.
APPLICATION_MARK = "PR Planner"
#: Temporary files are named ``.<destination>.prplanner-<random>.tmp``; one older than this
#: is left over from a killed save and is removed by the next save to the same destination.
STALE_TEMPORARY_SECONDS = 600
_TEMPORARY_INFIX = ".prplanner-"
#: docProps/core.xml of a real workbook is a few hundred bytes; read no more than this.
_MAX_CORE_PROPERTIES_BYTES = 1 << 16
_EXTENDED_NAMESPACE = "http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"
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
}


@dataclass(frozen=True, slots=True)
class FileFingerprint:
    """What a file looked like when it was read: size, modification time and SHA-256."""

    size: int
    modified_ns: int
    sha256: str


def fingerprint(path: str | os.PathLike[str]) -> FileFingerprint | None:
    """The :class:`FileFingerprint` of ``path``, or ``None`` when there is no such file."""
    path = Path(path)
    try:
        info = path.stat()
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
    """Mark an openpyxl ``Workbook`` as written by PR Planner (see :func:`is_ours`)."""
    workbook.properties.creator = APPLICATION_MARK
    workbook.properties.lastModifiedBy = APPLICATION_MARK


def is_ours(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a workbook PR Planner wrote and nobody has re-saved since.

    PR Planner's workbooks name it as author and last editor (:func:`mark_as_ours`) and
    were written by openpyxl. Excel puts the person's name in "last modified by" when it
    saves, LibreOffice its own name in the application field, so a workbook edited and
    saved by either is not ours. Reads only the two small property parts (bounded in size);
    anything that is not such a workbook, or cannot be read, is not ours.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            core = _small_part(archive, "docProps/core.xml")
            application = _small_part(archive, "docProps/app.xml")
    except (OSError, KeyError, zipfile.BadZipFile, ElementTree.ParseError, ValueError):
        return False
    creator = core.findtext("dc:creator", default="", namespaces=_CORE_NAMESPACES)
    editor = core.findtext("cp:lastModifiedBy", default="", namespaces=_CORE_NAMESPACES)
    writer = application.findtext(f"{{{_EXTENDED_NAMESPACE}}}Application", default="")
    return creator == editor == APPLICATION_MARK and "openpyxl" in writer.lower()


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
    first_name = os.path.normcase(os.path.abspath(first.resolve()))
    second_name = os.path.normcase(os.path.abspath(second.resolve()))
    return first_name.casefold() == second_name.casefold()


def check_destination(
    path: str | os.PathLike[str],
    *,
    sources: Iterable[str | os.PathLike[str]] = (),
    expected: FileFingerprint | None = None,
    replace_foreign: bool = False,
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
    """
    destination = Path(path)
    for source in sources:
        if _same_file(destination, Path(source)):
            raise SaveError(
                f"will not write to {destination.name}: it is the file this was read from "
                f"({Path(source).name}), and writing there would replace it; choose another "
                f"name, for example {destination.stem} report{destination.suffix}"
            )
    if destination.is_dir():
        raise SaveError(f"could not save {destination}: the destination is a folder")
    try:
        info = destination.stat()
    except FileNotFoundError:
        if expected is not None:
            raise SaveError(
                f"{destination.name} was moved or deleted since it was opened; nothing was "
                "written (use Save As to write it again)"
            ) from None
        return
    except OSError as exc:
        raise SaveError(f"could not save {destination}: {_cause(exc)}") from exc
    if not info.st_mode & stat.S_IWUSR:
        raise SaveError(
            f"{destination.name} is read-only; it was not replaced. Choose another name, or "
            "make the file writable first"
        )
    if expected is not None:
        if fingerprint(destination) != expected:
            raise SaveError(
                f"{destination.name} changed on disk since you opened it (another program or "
                "window wrote it); it was not overwritten. Use Save As to keep both"
            )
        return
    if not replace_foreign and not is_ours(destination):
        raise SaveError(
            f"{destination.name} already exists and was not written by PR Planner (it may "
            "be your own workbook); it was not replaced. Choose a new name"
        )


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


def _remove_stale_temporaries(destination: Path) -> None:
    """Remove our own temporary files for ``destination`` left behind by a killed save."""
    cutoff = time.time() - STALE_TEMPORARY_SECONDS
    pattern = f".{destination.name}{_TEMPORARY_INFIX}*.tmp"
    with contextlib.suppress(OSError):
        for leftover in destination.parent.glob(pattern):
            with contextlib.suppress(OSError):
                if leftover.is_file() and leftover.stat().st_mtime < cutoff:
                    leftover.unlink()


def _release(exc: BaseException) -> None:
    """Drop what the failed writer left open, quietly.

    openpyxl leaves its ``ZipFile`` open when a write fails (a full disk); the object then
    tries to finish the archive when it is garbage-collected and prints a traceback long
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
) -> Iterator[Path]:
    """Context manager yielding a temporary path; on success it replaces ``path``.

    Write the complete new content to the yielded path inside the ``with`` block. When the
    block ends normally the file is flushed to disk and atomically moved over ``path``.

    Parameters
    ----------
    path : str or path-like
        The destination file. Its folder must exist.
    sources, expected, replace_foreign
        See :func:`check_destination`, which runs first.

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
    folder = destination.parent
    check_destination(
        destination, sources=sources, expected=expected, replace_foreign=replace_foreign
    )
    _remove_stale_temporaries(destination)
    try:
        descriptor, name = tempfile.mkstemp(
            prefix=f".{destination.name}{_TEMPORARY_INFIX}", suffix=".tmp", dir=folder
        )
    except OSError as exc:
        raise SaveError(
            f"could not save {destination}: cannot create a file in {folder} "
            f"({_cause(exc)}); the old file is unchanged"
        ) from exc
    os.close(descriptor)
    temporary = Path(name)
    try:
        yield temporary
        _fsync_file(temporary)
        os.chmod(temporary, _new_file_mode(destination))
        os.replace(temporary, destination)
    except OSError as exc:
        _release(exc)
        _remove_quietly(temporary)
        raise SaveError(
            f"could not save {destination}: {_cause(exc)}; the old file is unchanged"
        ) from None
    except BaseException as exc:
        _release(exc)
        _remove_quietly(temporary)
        raise
    _fsync_folder(folder)


def atomic_write(
    path: str | os.PathLike[str],
    write: Callable[[Path], T],
    *,
    sources: Iterable[str | os.PathLike[str]] = (),
    expected: FileFingerprint | None = None,
    replace_foreign: bool = False,
) -> T:
    """Write a file atomically: ``write(temporary_path)`` then replace ``path``.

    Parameters
    ----------
    path : str or path-like
        The destination file.
    write : callable
        Called once with the temporary :class:`~pathlib.Path` (in the destination's folder);
        it must write the whole new content there, e.g. ``workbook.save``.
    sources, expected, replace_foreign
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
        path, sources=sources, expected=expected, replace_foreign=replace_foreign
    ) as temporary:
        return write(temporary)


def _remove_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
