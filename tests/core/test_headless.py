"""``core`` must never import Qt."""

import subprocess
import sys

import pytest

from tests.conftest import PROJECT_ROOT

PROBE = """
import importlib, pkgutil, sys
import core
for info in pkgutil.walk_packages(core.__path__, "core."):
    importlib.import_module(info.name)
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {"PySide6", "shiboken6", "pyqtgraph"})
print("LOADED:" + ",".join(loaded))
"""


def test_importing_every_core_module_loads_no_qt():
    result = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "LOADED:", result.stdout + result.stderr


SUBCOMMAND_PROBE = """
import atexit, sys
def report():
    loaded = [m for m in sys.modules if m.split(".")[0] in {"PySide6", "shiboken6", "pyqtgraph"}]
    sys.stderr.write("QT-MODULES:%d\\n" % len(loaded))
atexit.register(report)
sys.argv = ["prplanner"] + sys.argv[1:]
from desktop.launch import main
main()
"""


def test_a_subcommand_through_the_console_entry_point_never_imports_qt():
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            SUBCOMMAND_PROBE,
            "plan",
            "--k",
            "0.05",
            "--precision",
            "0.9",
            "--recall",
            "0.8",
            "--json",
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert '"s_star"' in result.stdout
    assert "QT-MODULES:0" in result.stderr


def test_a_reader_that_stops_early_gets_no_traceback():
    # `prplanner ... --json | head -1`: the pipe closes before all output is written.
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "desktop",
            "coverage",
            "--paper-grid",
            "--reps",
            "20",
            "--replicates",
            "20",
            "--json",
        ],
        cwd=PROJECT_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.read(10)
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=120) == 0
    assert "Traceback" not in stderr and stderr == ""


def test_the_entry_point_leaves_the_garbage_collector_on(capsys):
    # Start-up pauses the collector (desktop.launch.main); a command, or an error, must
    # leave it on for whatever runs next in the process.
    import gc

    from desktop.launch import main

    for argv in (["--version"], ["not-a-command"]):
        with pytest.raises(SystemExit):
            main(argv)
        assert gc.isenabled()
    capsys.readouterr()


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["label", "round.xlsx"], "did you mean labels?"),
        (["selct", "items.csv"], "did you mean select?"),
        (["a.xlsx", "b.xlsx"], "one workbook at a time"),
        (["zzzz"], "unknown command 'zzzz'; commands:"),
    ],
)
def test_a_mistyped_command_is_named_with_the_one_meant(capsys, argv, words):
    from desktop.launch import main

    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert words in capsys.readouterr().err
