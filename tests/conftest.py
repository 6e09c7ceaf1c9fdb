"""Test-wide set-up.

Qt must run headless: without a platform plugin pytest-qt aborts the whole process, so the
platform is forced to ``offscreen`` before anything imports Qt.
"""

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")

PROJECT_ROOT = Path(__file__).resolve().parent.parent
#: Workbooks written by LibreOffice 7.4 (a real third-party writer, not openpyxl), kept as
#: users keep them; see tests/data/fixtures/README.md for what each holds.
SHARED_FIXTURES = Path(__file__).resolve().parent / "data" / "fixtures"
FIXTURE_NAMES = ("rounds_simple.xlsx", "rounds_messy.xlsx")
#: Reference values kept as data (computed independently; see each file's header).
REFERENCE_DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    # The fixtures are part of the repository: a missing one is a broken checkout, not a
    # reason to skip.
    missing = [name for name in FIXTURE_NAMES if not (SHARED_FIXTURES / name).is_file()]
    assert not missing, f"test fixtures missing from {SHARED_FIXTURES}: {', '.join(missing)}"
    return SHARED_FIXTURES


@pytest.fixture(scope="session")
def reference_data() -> Path:
    return REFERENCE_DATA


@pytest.fixture(autouse=True)
def _core_words():
    """Each test starts with core's own words for parameters (a window installs its field
    labels process-wide, and tests of both kinds share a process)."""
    from core.errors import use_words

    previous = use_words({})
    yield
    use_words(previous)
