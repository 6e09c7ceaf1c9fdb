"""Crash recovery: the unsaved session, written a few seconds after each change.

The desktop keeps one :class:`RecoveryStore` per running session. After each change (the
desktop debounces: a few seconds after the last edit) it calls :meth:`RecoveryStore.write`;
after a successful save or a clean exit it calls :meth:`RecoveryStore.clear`. At the next
start, :meth:`RecoveryStore.latest` returns the session a crashed run left behind, if any,
to offer back.

Where the files live
--------------------
The caller passes the folder. The desktop uses
``QStandardPaths.writableLocation(AppDataLocation) / "recovery"`` (for example
``~/.local/share/PR Planner/recovery`` on Linux, ``%APPDATA%/PR Planner/recovery`` on
Windows): per user, never synced with the user's documents, and not a temporary folder
that the system may empty at boot, which is exactly when recovery is needed. ``core`` does
not choose the folder itself because it never imports Qt.

File format
-----------
One small JSON file per session, ``session-<id>.json``: the flat inputs of
:func:`core.session.flatten` (JSON keeps every float digit) and the past rounds, written
atomically through :mod:`core.workbook.safe_io`, so a crash during the write leaves the
previous recovery file intact.

Which files belong to a crashed run
-----------------------------------
Each store holds an advisory lock (``fcntl.flock`` on POSIX, ``msvcrt.locking`` on Windows)
on ``session-<id>.lock`` for as long as it is open. The operating system drops the lock when
its process ends, crash or not, so a file whose lock can be taken belongs to a run that is
gone; a second app window running at the same time keeps its own file to itself.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import os
import stat
import uuid
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, BinaryIO

from core import validation
from core.errors import InputError
from core.session import SCHEMA_VERSION, SessionState, flatten, unflatten
from core.workbook.rounds import MIN_K, Round, check_round_date
from core.workbook.safe_io import SaveError, atomic_write_path

__all__ = ["RecoveredSession", "RecoveryStore"]

logger = logging.getLogger(__name__)

FORMAT_NAME = "prplanner-recovery"
FORMAT_VERSION = 1
_PREFIX = "session-"
_DATA_SUFFIX = ".json"
_LOCK_SUFFIX = ".lock"
_DAMAGED_SUFFIX = ".damaged"
#: Larger than any session the app writes (ten thousand rounds are about 3 MB): a file
#: above it is damage, not read (a 100 MB one took 7.8 GB; fuzz 14).
MAX_RECOVERY_BYTES = 32 * 1024 * 1024
#: Problems listed per recovered session; the rest are counted.
_PROBLEMS_LISTED = 100


@dataclass(frozen=True, slots=True, kw_only=True)
class RecoveredSession:
    """A session a previous run left behind.

    Attributes
    ----------
    state : SessionState
        The session as it was at the last recovery write.
    problems : tuple of str
        Settings or rounds that could not be restored (each names the key or round).
    saved_at : datetime.datetime
        When the recovery file was written (local time, naive).
    document : str or None
        The file the session had been opened from or saved to, if any.
    path : pathlib.Path
        The recovery file.
    """

    state: SessionState
    problems: tuple[str, ...]
    saved_at: dt.datetime
    document: str | None
    path: Path


def round_to_json(item: Round) -> dict[str, Any]:
    """Every field of a :class:`Round`, the date as ISO text."""
    data = {f.name: getattr(item, f.name) for f in fields(Round)}
    if item.date is not None:
        data["date"] = item.date.isoformat()
    return data


def round_from_json(data: dict[str, Any]) -> Round:
    """Inverse of :func:`round_to_json`; raises :class:`InputError` on a damaged entry.

    A round is checked as the rounds reader checks a row (whole counts in range, a
    positive ``k``, population counts that hold the labeled items, texts as texts), so a
    damaged file cannot put into the session a round no workbook could.
    """
    try:
        values = dict(data)
        if values.get("date") is not None:
            values["date"] = dt.date.fromisoformat(values["date"])
        item = Round(**values)
    except (TypeError, ValueError, AttributeError) as exc:
        raise InputError(f"a past round could not be restored ({exc})") from None
    try:
        return _checked(item)
    except InputError as exc:
        raise InputError(f"a past round could not be restored ({exc})") from None


def _optional_count(name: str, value: object) -> int | None:
    return None if value is None else validation.count(name, value)


def _checked(item: Round) -> Round:
    """``item`` with its numbers checked by the rules the rest of core applies
    (:mod:`core.validation`, :class:`~core.confusion.ConfusionMatrix`) and the reader's
    for ``k`` (at least :data:`~core.workbook.rounds.MIN_K`); raises :class:`InputError`."""
    from core.confusion import oversized_strata

    for name in ("sheet", "round", "classifier", "model_version", "notes"):
        value = getattr(item, name)
        if (value is not None or name == "sheet") and not isinstance(value, str):
            raise InputError(f"{name} is not a text")
    if type(item.row) is not int or item.row < 1:
        raise InputError("its row is not a row number")
    if item.date is not None and not isinstance(item.date, dt.date):
        raise InputError("its date is not a date")
    check_round_date(item.date)  # as the rounds reader reads it back
    matrix = item.matrix  # whole counts from 0 to 10^15
    populations = (
        _optional_count("predicted-positive population", item.population_pos),
        _optional_count("predicted-negative population", item.population_neg),
    )
    if 0 in populations:
        raise InputError("a population count is 0")
    k = validation.positive("k", item.k)
    if k < MIN_K:
        raise InputError(f"k must be at least {MIN_K:g}, got {k:g}")
    s = None if item.s is None else validation.positive("s", item.s)
    for stratum, labeled, population in oversized_strata((matrix.n_pos, matrix.n_neg), populations):
        raise InputError(
            f"{labeled:,} {stratum} items labeled, more than its population of {population:,}"
        )
    return replace(
        item,
        tp=matrix.tp,
        fp=matrix.fp,
        fn=matrix.fn,
        tn=matrix.tn,
        population_pos=populations[0],
        population_neg=populations[1],
        k=k,
        s=s,
    )


class _Lock:
    """An exclusive advisory lock on one small file, held until :meth:`release`."""

    def __init__(self, path: Path):
        self.path = path
        self._handle: BinaryIO | None = None

    def acquire(self) -> bool:
        """Take the lock without waiting; ``False`` when another process holds it."""
        try:
            handle = open(self.path, "a+b")  # kept open for as long as the lock is held
        except OSError:
            return True  # cannot even create it: treat as unlocked (no liveness info)
        try:
            if os.name == "nt":
                import msvcrt

                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
            else:
                import fcntl

                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return False
        self._handle = handle
        return True

    def release(self) -> None:
        if self._handle is None:
            return
        with contextlib.suppress(OSError):
            if os.name == "nt":
                import msvcrt

                self._handle.seek(0)
                msvcrt.locking(self._handle.fileno(), msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
            else:
                import fcntl

                fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
        self._handle.close()
        self._handle = None


class RecoveryStore:
    """Recovery files of one running session in ``directory`` (see the module notes).

    Parameters
    ----------
    directory : str or path-like
        Folder for recovery files; created on the first write.
    session_id : str, optional
        Names this session's file; default: a fresh random id.

    Examples
    --------
    >>> store = RecoveryStore(app_data / "recovery")  # doctest: +SKIP
    >>> leftover = store.latest()  # at start: a crashed run's session, or None
    >>> store.write(state)  # a few seconds after each change
    >>> store.clear()  # after a successful save, or once the offer was answered
    """

    def __init__(self, directory: str | os.PathLike[str], session_id: str | None = None):
        self.directory = Path(directory)
        self.session_id = session_id or uuid.uuid4().hex
        if not self.session_id.replace("-", "").replace("_", "").isalnum():
            raise InputError(f"session id must be letters, digits, - or _, got {session_id!r}")
        self._lock = _Lock(self.directory / f"{_PREFIX}{self.session_id}{_LOCK_SUFFIX}")
        self._locked = False
        #: Leftover files that could not be read, renamed ``….damaged`` by latest_entry.
        self.set_aside: list[Path] = []
        #: Leftover files written by a newer PR Planner: left as they are, for it.
        self.newer: list[Path] = []

    @property
    def path(self) -> Path:
        """This session's recovery file."""
        return self.directory / f"{_PREFIX}{self.session_id}{_DATA_SUFFIX}"

    def _hold_lock(self) -> None:
        if not self._locked:
            self._locked = self._lock.acquire()

    def write(self, state: SessionState, *, document: str | os.PathLike[str] | None = None):
        """Write ``state`` atomically to this session's file; return its path.

        Raises
        ------
        core.workbook.safe_io.SaveError
            The folder cannot be created or written; the previous recovery file is intact.
        """
        if not isinstance(state, SessionState):
            raise InputError(f"state must be a SessionState, got {type(state).__name__}")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SaveError(
                f"could not create the recovery folder {self.directory}: {exc.strerror or exc}"
            ) from exc
        self._hold_lock()
        payload = {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "session_schema": SCHEMA_VERSION,
            "saved_at": dt.datetime.now().isoformat(timespec="seconds"),
            "document": None if document is None else str(document),
            "inputs": [[key, value] for key, value in flatten(state)],
            "rounds": [round_to_json(item) for item in state.rounds if isinstance(item, Round)],
        }
        text = json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        # The recovery folder is the app's own: its files are replaced without the checks
        # that protect the user's files.
        with atomic_write_path(self.path, replace_foreign=True) as temporary:
            temporary.write_text(text, encoding="utf-8")
        return self.path

    def latest(self) -> SessionState | None:
        """The newest session a run that is no longer alive left behind, or ``None``."""
        entry = self.latest_entry()
        return None if entry is None else entry.state

    def latest_entry(self) -> RecoveredSession | None:
        """Like :meth:`latest`, with when it was written and what could not be restored.

        A leftover file that cannot be read is renamed ``….damaged`` (kept for a look, never
        offered again) and listed in :attr:`set_aside`.
        """
        found = []
        for path in self._leftover_paths():
            if not _is_regular_file(path):
                continue  # a pipe or a device under a recovery name: never opened (it hangs)
            entry = _load(path)
            if entry is not None:
                found.append(entry)
            elif _written_by_a_newer_version(path):
                if path not in self.newer:
                    self.newer.append(path)
            elif _readable(path):  # damaged, not just out of reach for a moment
                self._set_aside(path)
        if not found:
            return None
        return max(found, key=lambda entry: entry.saved_at)

    def _set_aside(self, path: Path) -> None:
        damaged = path.with_suffix(_DAMAGED_SUFFIX)
        try:
            path.replace(damaged)
        except OSError:
            _remove(path)
        else:
            self.set_aside.append(damaged)
        _remove(path.with_suffix(_LOCK_SUFFIX))

    def clear(self) -> None:
        """Delete this session's file and every file left by runs that are gone (but not
        a newer PR Planner's: it is its to offer)."""
        for path in self._leftover_paths():
            if path in self.newer or _written_by_a_newer_version(path):
                continue
            _remove(path)
            _remove(path.with_suffix(_LOCK_SUFFIX))
        _remove(self.path)

    def close(self) -> None:
        """Release this session's lock (its file stays until :meth:`clear`)."""
        if self._locked:
            self._lock.release()
            self._locked = False
        if not self.path.exists():
            _remove(self._lock.path)

    def __enter__(self) -> RecoveryStore:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # --- internals ----------------------------------------------------------------------

    def _leftover_paths(self) -> list[Path]:
        """Recovery files of other sessions whose process is gone (lock can be taken)."""
        try:
            candidates = sorted(self.directory.glob(f"{_PREFIX}*{_DATA_SUFFIX}"))
        except OSError:
            return []
        gone = []
        for path in candidates:
            if path == self.path:
                continue
            probe = _Lock(path.with_suffix(_LOCK_SUFFIX))
            if probe.acquire():
                probe.release()
                gone.append(path)
        return gone


def _load(path: Path) -> RecoveredSession | None:
    """A recovery file, or ``None`` when it is unreadable (never an exception).

    The file is the app's own, but a crash, a full disk or a hand edit can leave anything
    in it; whatever it holds, reading it must not stop the app from starting.
    """
    try:
        return _read(path)
    except Exception:  # any damage means "not recoverable", never a crash
        logger.warning("recovery file %s could not be read", path, exc_info=True)
        return None


def _is_regular_file(path: Path) -> bool:
    """A plain file (a link to one included), not a pipe or a device."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def _payload(path: Path) -> Any:
    """The file's JSON; ``None`` when it is not a plain file of a sensible size, cannot be
    read, or is not JSON."""
    try:
        if not _is_regular_file(path) or path.stat().st_size > MAX_RECOVERY_BYTES:
            return None
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def _written_by_a_newer_version(path: Path) -> bool:
    """A recovery file of a later format version (a newer PR Planner's), not damage."""
    payload = _payload(path)
    if not isinstance(payload, dict):
        return False
    version = payload.get("version")
    return (
        payload.get("format") == FORMAT_NAME
        and isinstance(version, int)
        and not isinstance(version, bool)
        and version > FORMAT_VERSION
    )


def _read(path: Path) -> RecoveredSession | None:
    payload = _payload(path)
    if (
        not isinstance(payload, dict)
        or payload.get("format") != FORMAT_NAME
        or payload.get("version") != FORMAT_VERSION
    ):
        return None
    inputs = payload.get("inputs", [])
    rounds_data = payload.get("rounds", [])
    saved_at_text = payload.get("saved_at")
    if not (
        isinstance(inputs, list)
        and isinstance(rounds_data, list)
        and isinstance(saved_at_text, str)
        and all(isinstance(row, list) and len(row) == 2 for row in inputs)
    ):
        return None
    try:
        saved_at = dt.datetime.fromisoformat(saved_at_text)
    except ValueError:
        return None
    if saved_at.tzinfo is not None:  # written elsewhere: compare it in local time
        saved_at = saved_at.astimezone().replace(tzinfo=None)
    problems: list[str] = []
    state, unflatten_problems = unflatten([(str(key), value) for key, value in inputs])
    problems.extend(unflatten_problems)
    rounds = []
    refused = 0
    for number, data in enumerate(rounds_data, start=1):
        try:
            rounds.append(round_from_json(data))
        except InputError as exc:
            refused += 1
            if refused <= _PROBLEMS_LISTED:
                problems.append(f"past round {number}: {exc}")
    if refused > _PROBLEMS_LISTED:
        problems.append(f"… and {refused - _PROBLEMS_LISTED:,} more past rounds not restored")
    state = replace(state, rounds=tuple(rounds))
    document = payload.get("document")
    return RecoveredSession(
        state=state,
        problems=tuple(problems),
        saved_at=saved_at,
        document=document if isinstance(document, str) else None,
        path=path,
    )


def _readable(path: Path) -> bool:
    """The file can be opened now (one an antivirus holds for a moment is left alone)."""
    try:
        with path.open("rb"):
            return True
    except OSError:
        return False


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()
