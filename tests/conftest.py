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
#: Workbooks written by LibreOffice (shared with the other teams; never copied in here).
SHARED_FIXTURES = PROJECT_ROOT.parent / "shared" / "fixtures"
#: Reference values kept as data (computed independently; see each file's header).
REFERENCE_DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    if not SHARED_FIXTURES.is_dir():
        pytest.skip(f"shared fixtures not found at {SHARED_FIXTURES}")
    return SHARED_FIXTURES


@pytest.fixture(scope="session")
def reference_data() -> Path:
    return REFERENCE_DATA
