"""Saving that never loses data (spec 4.4): temporary file, fsync, atomic replace.

The new content is written to a temporary file in the destination's own folder (so the
final :func:`os.replace` is a rename on one file system, atomic on POSIX and Windows),
flushed to disk, and only then moved over the old file. Any failure removes the temporary
file, leaves the old file untouched and raises :class:`SaveError` saying what went wrong
and where.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from core.errors import InputError

__all__ = ["SaveError", "atomic_write", "atomic_write_path"]

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


@contextlib.contextmanager
def atomic_write_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Context manager yielding a temporary path; on success it replaces ``path``.

    Write the complete new content to the yielded path inside the ``with`` block. When the
    block ends normally the file is flushed to disk and atomically moved over ``path``.

    Parameters
    ----------
    path : str or path-like
        The destination file. Its folder must exist.

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
    if destination.is_dir():
        raise SaveError(f"could not save {destination}: the destination is a folder")
    try:
        descriptor, name = tempfile.mkstemp(
            prefix=f".{destination.name}.", suffix=".tmp", dir=folder
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
        _remove_quietly(temporary)
        raise SaveError(
            f"could not save {destination}: {_cause(exc)}; the old file is unchanged"
        ) from exc
    except BaseException:
        _remove_quietly(temporary)
        raise
    _fsync_folder(folder)


def atomic_write(path: str | os.PathLike[str], write: Callable[[Path], T]) -> T:
    """Write a file atomically: ``write(temporary_path)`` then replace ``path``.

    Parameters
    ----------
    path : str or path-like
        The destination file.
    write : callable
        Called once with the temporary :class:`~pathlib.Path` (in the destination's folder);
        it must write the whole new content there, e.g. ``workbook.save``.

    Returns
    -------
    object
        Whatever ``write`` returned.

    Raises
    ------
    SaveError
        See :func:`atomic_write_path`; the old file is left intact.
    """
    with atomic_write_path(path) as temporary:
        return write(temporary)


def _remove_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
