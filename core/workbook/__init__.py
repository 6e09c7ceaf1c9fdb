"""Excel workbooks in and out: past rounds, and saving without losing data.

Everything here is plain ``core`` (openpyxl, never Qt). Bad files raise
:class:`WorkbookError` and failed saves :class:`SaveError`; both are
:class:`core.errors.InputError`, so the command line turns them into one ``error:`` line.
"""

from core.workbook.rounds import (
    Refusal,
    Round,
    RoundsBook,
    SkippedSheet,
    WorkbookError,
    read_rounds,
)
from core.workbook.safe_io import SaveError, atomic_write, atomic_write_path

# The report, sessions and recovery import the analysis modules (scipy); they load on
# first use so that ``prplanner rounds`` stays quick.
_LAZY = {
    "ReportContent": "core.workbook.report",
    "build_report": "core.workbook.report",
    "write_report": "core.workbook.report",
    "OpenedSession": "core.workbook.session_io",
    "open_session": "core.workbook.session_io",
    "read_session": "core.workbook.session_io",
    "save_session": "core.workbook.session_io",
    "RecoveredSession": "core.workbook.recovery",
    "RecoveryStore": "core.workbook.recovery",
}

__all__ = [
    "OpenedSession",
    "RecoveredSession",
    "RecoveryStore",
    "Refusal",
    "ReportContent",
    "Round",
    "RoundsBook",
    "SaveError",
    "SkippedSheet",
    "WorkbookError",
    "atomic_write",
    "atomic_write_path",
    "build_report",
    "open_session",
    "read_rounds",
    "read_session",
    "save_session",
    "write_report",
]


def __getattr__(name: str):
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module_name), name)
