"""The wheel, installed non-editable into a fresh virtual environment, holds the whole app.

CI installs the project editable, which hides files that the wheel leaves out (help pages
once were). This test builds the wheel, installs it without the checkout on the path, and
then, in that environment: imports every module of ``core`` and ``desktop``, reads every
bundled help page and example workbook, checks that no generic top-level ``resources``
package was installed, and runs the ``prplanner`` console script.

The virtual environment borrows the already installed dependencies (numpy, scipy, Qt, ...)
through ``--system-site-packages`` and installs the wheel itself with ``--no-deps``, so the
test needs no network and takes seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import venv
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ROOT

MODULES = sorted(
    ".".join(path.relative_to(PROJECT_ROOT).with_suffix("").parts).removesuffix(".__init__")
    for package in ("core", "desktop")
    for path in (PROJECT_ROOT / package).rglob("*.py")
    if path.name != "__main__.py"  # importing it would start the app
)
BUNDLED = sorted(
    path.relative_to(PROJECT_ROOT / "resources").as_posix()
    for path in (PROJECT_ROOT / "resources").rglob("*")
    if path.is_file() and path.suffix in (".md", ".xlsx")
)

CHECK = textwrap.dedent(
    """
    import importlib, importlib.util, json, os, sys
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    modules, bundled = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    for name in modules:
        importlib.import_module(name)
    import desktop
    from desktop import resources
    from core.workbook.session_io import read_session
    from core.workbook.rounds import read_rounds
    texts = {name: len(resources.read_text(name)) for name in bundled if name.endswith(".md")}
    session = read_session(resources.path("example_session.xlsx"))
    rounds = read_rounds(resources.path("example_rounds.xlsx")).rounds
    print(json.dumps({
        "desktop": desktop.__file__,
        "resources_package": importlib.util.find_spec("resources") is not None,
        "texts": texts,
        "example_rounds": len(rounds),
        "session_rounds": len(session.state.rounds),
    }))
    """
)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh virtual environment with the project's wheel installed; its python."""
    folder = tmp_path_factory.mktemp("wheel")
    wheels = folder / "wheels"
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(wheels), str(PROJECT_ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = wheels.glob("prplanner-*.whl")
    environment = folder / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(environment)
    python = environment / "bin" / "python"
    installed = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "--python", str(python), "install"),
            *("--no-deps", "--no-index", str(wheel)),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    return python


def test_the_installed_wheel_has_every_module_help_page_and_example(installed, tmp_path):
    result = subprocess.run(
        [str(installed), "-c", CHECK, json.dumps(MODULES), json.dumps(BUNDLED)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,  # not the checkout: only the installed packages can be imported
    )
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    venv_folder = str(installed.parent.parent)
    assert found["desktop"].startswith(venv_folder), "the checkout was imported, not the wheel"
    assert not found["resources_package"], "a generic top-level 'resources' package is installed"
    markdown = [name for name in BUNDLED if name.endswith(".md")]
    assert sorted(found["texts"]) == markdown
    assert all(length > 100 for length in found["texts"].values()), found["texts"]
    assert found["example_rounds"] > 0
    assert found["session_rounds"] > 0


def test_the_installed_console_script_runs_a_subcommand(installed, tmp_path):
    script = installed.parent / "prplanner"
    result = subprocess.run(
        [str(script), "samplesize", "--margin", "0.05", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["n"] == 385  # (1.96 / 0.05)^2 / 4, rounded up
