"""Excel workbooks in and out (spec 4.4): past rounds, and saving without losing data.

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

__all__ = [
    "Refusal",
    "Round",
    "RoundsBook",
    "SaveError",
    "SkippedSheet",
    "WorkbookError",
    "atomic_write",
    "atomic_write_path",
    "read_rounds",
]
