"""Build PR Planner as a one-folder desktop app with PyInstaller.

    python3 -m pip install pyinstaller
    python3 scripts/build_app.py [--dist DIR]

writes ``DIR/PRPlanner/`` (default ``dist/PRPlanner``) holding the ``PRPlanner``
executable and everything it needs: a lead copies the folder (or an archive of it) and runs
the program without installing Python. The same executable runs the subcommands
(``PRPlanner plan ...``) headless.

The build imports nothing of the app itself; it only tells PyInstaller what to collect:

* every module of ``core`` and ``desktop`` (the command line imports its subcommands by
  name, which PyInstaller's import scan cannot see);
* the bundled files in ``resources/`` (example session, help pages), placed where
  ``desktop.resources`` looks for them;
* and leaves out the test-only and development packages that happen to be installed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
APP_NAME = "PRPlanner"
#: Installed for tests or development, never needed by the app.
EXCLUDED = (
    "tkinter",
    "pytest",
    "hypothesis",
    "sklearn",
    "statsmodels",
    "pandas",
    "matplotlib",
    "IPython",
    "PyInstaller",
    "setuptools",
    "mypy",
    "yaml",
    "requests",
    "charset_normalizer",
    # pyqtgraph's demos, OpenGL and notebook parts: large, and importing the demos during
    # the build needs a screen.
    "pyqtgraph.examples",
    "pyqtgraph.opengl",
    "pyqtgraph.jupyter",
)
ENTRY_POINT = "from desktop.launch import main\n\nmain()\n"


def pyinstaller_arguments(dist: Path, work: Path, entry: Path) -> list[str]:
    """The PyInstaller command line for a one-folder build into ``dist``."""
    separator = ";" if sys.platform.startswith("win") else ":"
    arguments = [
        str(entry),
        "--name",
        APP_NAME,
        "--onedir",
        "--noconfirm",
        "--clean",
        "--distpath",
        str(dist),
        "--workpath",
        str(work),
        "--specpath",
        str(work),
        "--paths",
        str(PROJECT_ROOT),
        "--add-data",
        f"{PROJECT_ROOT / 'resources'}{separator}desktop/resources",
    ]
    # pyqtgraph's per-binding templates are handled by PyInstaller's own pyqtgraph hook.
    for package in ("core", "desktop"):
        arguments += ["--collect-submodules", package]
    # Mapped from the top-level resources/ folder, so the package scan above cannot see it.
    arguments += ["--hidden-import", "desktop.resources"]
    for module in EXCLUDED:
        arguments += ["--exclude-module", module]
    if sys.platform in ("darwin", "win32"):
        # No console window next to the app; on Linux a terminal start keeps its output.
        arguments.append("--windowed")
    return arguments


def build(dist: Path) -> Path:
    """Build the app into ``dist`` and return the executable's path."""
    try:
        import PyInstaller.__main__ as pyinstaller
    except ImportError:
        raise SystemExit(
            "error: PyInstaller is not installed; run: python3 -m pip install pyinstaller"
        ) from None
    # PyInstaller imports Qt modules while it scans them; without a screen Qt would abort.
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    with tempfile.TemporaryDirectory(prefix="prplanner-build-") as scratch:
        work = Path(scratch)
        entry = work / "prplanner_app.py"
        entry.write_text(ENTRY_POINT, encoding="utf-8")
        pyinstaller.run(pyinstaller_arguments(dist, work, entry))
    suffix = ".exe" if sys.platform.startswith("win") else ""
    executable = dist / APP_NAME / f"{APP_NAME}{suffix}"
    if not executable.is_file():
        raise SystemExit(f"error: the build finished but {executable} is missing")
    return executable


def folder_size(folder: Path) -> int:
    """Bytes of every file under ``folder``."""
    return sum(
        item.stat().st_size
        for item in folder.rglob("*")
        if item.is_file() and not item.is_symlink()
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dist", type=Path, default=PROJECT_ROOT / "dist", help="output folder (default dist/)"
    )
    args = parser.parse_args(argv)
    target = args.dist / APP_NAME
    if target.exists():
        shutil.rmtree(target)
    executable = build(args.dist.resolve())
    size = folder_size(executable.parent)
    print(f"built {executable} ({size / (1 << 20):,.0f} MiB in {executable.parent})")
    version = subprocess.run(
        [str(executable), "--version"], capture_output=True, text=True, timeout=120
    )
    print(f"{APP_NAME} --version: {version.stdout.strip() or version.stderr.strip()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
