"""The one-folder app that scripts/build_app.py makes with PyInstaller starts and quits.

Runs only where PyInstaller is installed (building takes about a minute); it builds into a
temporary folder, then starts the built program on the bundled example and on a rounds
workbook (under Xvfb when ``xvfb-run`` is there, else offscreen) and runs one subcommand.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT, SHARED_FIXTURES

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("PyInstaller") is None,
    reason="PyInstaller is not installed (python3 -m pip install pyinstaller)",
)


@pytest.fixture(scope="module")
def built_app(tmp_path_factory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    result = subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "scripts" / "build_app.py"), "--dist", str(dist)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    executable = dist / "PRPlanner" / "PRPlanner"
    assert executable.is_file()
    return executable


def _run_window(executable: Path, tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess:
    environment = dict(
        os.environ,
        PRPLANNER_EXIT_AFTER_SHOW="1",
        PRPLANNER_SETTINGS_DIR=str(tmp_path / "settings"),
        PRPLANNER_RECOVERY_DIR=str(tmp_path / "recovery"),
    )
    command = [str(executable), *arguments]
    if shutil.which("xvfb-run"):
        environment["QT_QPA_PLATFORM"] = "xcb"
        command = ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", *command]
    else:
        environment["QT_QPA_PLATFORM"] = "offscreen"
    return subprocess.run(command, capture_output=True, text=True, timeout=180, env=environment)


def test_built_app_opens_the_example_and_quits_cleanly(built_app, tmp_path):
    result = _run_window(built_app, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("shown "), result.stdout
    assert "Traceback" not in result.stderr


def test_built_app_opens_a_rounds_workbook_and_quits_cleanly(built_app, tmp_path):
    result = _run_window(built_app, tmp_path, str(SHARED_FIXTURES / "rounds_messy.xlsx"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("shown "), result.stdout
    assert "Traceback" not in result.stderr


def test_built_app_runs_a_subcommand_headless(built_app):
    result = subprocess.run(
        [str(built_app), "samplesize", "--margin", "0.05", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["n"] == 385  # (1.96 / 0.05)^2 / 4, rounded up
