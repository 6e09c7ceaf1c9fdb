"""Start-up benchmarks: the app's first painted window and ``prplanner plan --json``.

Both are measured as processes, from outside, against a floor built in the same run and
interleaved with it (a shared machine slows both alike):

* **app**: process start to the main window shown and painted (``python -m desktop`` with
  ``PRPLANNER_EXIT_AFTER_SHOW=1``, which prints the time and the number of plot widgets),
  against a bare PySide6 + pyqtgraph window holding as many plots, each with a curve, all
  visible. Target: at most 1.5x the floor, and never above 2.5 s.
* **plan --json**: ``python -m desktop plan ... --json`` against ``python -c "import numpy"``.
  Target: at most 1.5x.

Both sides run with compiled bytecode, as an installed app does: the children get a
temporary ``PYTHONPYCACHEPREFIX`` (and never ``PYTHONDONTWRITEBYTECODE``), filled by one
warm-up run of each command, so no ``__pycache__`` lands in the checkout.

Run with ``python -m pytest benchmarks/bench_startup.py --benchmark-enable -s`` (offscreen
unless ``QT_QPA_PLATFORM`` is set), or ``python benchmarks/bench_startup.py``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUNS = 7
APP_RATIO = 1.5
APP_CEILING_SECONDS = 2.5
PLAN_RATIO = 1.5
PLAN_ARGS = ("plan", "--k", "0.03", "--precision", "0.9", "--recall", "0.8", "--margin", "0.05")

#: The floor: a bare window with ``n`` plots (argv[1]), reported like the app reports.
BARE_WINDOW = """
import os, sys, time
os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QGridLayout, QMainWindow, QWidget

app = QApplication(sys.argv[:1])
pg.setConfigOptions(antialias=True, background="w", foreground="#222")
window = QMainWindow()
page = QWidget()
grid = QGridLayout(page)
x = np.linspace(0.0, 1.0, 200)
count = int(sys.argv[1])
for i in range(count):
    plot = pg.PlotWidget(title=f"plot {i}")
    plot.plot(x, x ** (i + 1), pen=pg.mkPen("#0072B2", width=2))
    grid.addWidget(plot, i // 4, i % 4)
window.setCentralWidget(page)
window.resize(1500, 950)
window.show()

def report():
    app.processEvents()
    window.repaint()
    print(f"shown {time.time():.6f} plots {count}", flush=True)
    app.quit()

QTimer.singleShot(0, report)
app.exec()
"""


def _environment(scratch: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(scratch) / "pycache")
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env["PRPLANNER_EXIT_AFTER_SHOW"] = "1"
    env["PRPLANNER_SETTINGS_DIR"] = str(Path(scratch) / "settings")
    return env


def _shown(command: list[str], env: dict[str, str]) -> tuple[float, int, float | None, int]:
    """Seconds from process start to the ``shown`` line, the plots it names, seconds to
    the app's ``ready`` line (every tab built and laid out; None for the floor) and the
    plots the app holds then."""
    started = time.time()
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    lines = [line.split() for line in done.stdout.splitlines() if line.startswith("shown ")]
    ready = [line.split() for line in done.stdout.splitlines() if line.startswith("ready ")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{command} failed ({done.returncode}): {done.stderr[-2000:]}")
    ready_s = float(ready[0][1]) - started if ready else None
    all_plots = int(ready[0][3]) if ready else int(lines[0][3])
    return float(lines[0][1]) - started, int(lines[0][3]), ready_s, all_plots


def app_start_against_bare_window(runs: int = RUNS) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as scratch:
        env = _environment(scratch)
        # The floor holds as many plots as the app has painted when it reports "shown"
        # (the Plan tab's; the other tabs are built right after, see "ready"). A second
        # floor holds every plot the app has once ready: the bare window of the issue
        # that set the target, reported for comparison, not asserted on.
        _, plots, _, all_plots = _shown([sys.executable, "-m", "desktop"], env)  # warm-up
        _shown([sys.executable, "-c", BARE_WINDOW, str(plots)], env)
        _shown([sys.executable, "-c", BARE_WINDOW, str(all_plots)], env)
        app, bare, bare_all, ready = [], [], [], []
        for _ in range(runs):
            shown_s, _, ready_s, _ = _shown([sys.executable, "-m", "desktop"], env)
            app.append(shown_s)
            ready.append(ready_s)
            bare.append(_shown([sys.executable, "-c", BARE_WINDOW, str(plots)], env)[0])
            bare_all.append(_shown([sys.executable, "-c", BARE_WINDOW, str(all_plots)], env)[0])
    return {
        "plots": plots,
        "all_plots": all_plots,
        "app_s": statistics.median(app),
        "app_max_s": max(app),
        "ready_s": statistics.median(ready),
        "bare_s": statistics.median(bare),
        "bare_all_s": statistics.median(bare_all),
        "ratio": statistics.median(app) / statistics.median(bare),
        "ratio_all": statistics.median(app) / statistics.median(bare_all),
        "ready_ratio_all": statistics.median(ready) / statistics.median(bare_all),
    }


def _describe(result: dict[str, float]) -> str:
    return (
        f"app start -> painted window: median {result['app_s']:.2f} s (max "
        f"{result['app_max_s']:.2f}); bare window with the same {result['plots']} plots "
        f"{result['bare_s']:.2f} s: ratio {result['ratio']:.2f} (target <= {APP_RATIO}, and <= "
        f"{APP_CEILING_SECONDS} s). Every tab built and laid out: {result['ready_s']:.2f} s. "
        f"Bare window with all {result['all_plots']} plots {result['bare_all_s']:.2f} s: "
        f"painted window {result['ratio_all']:.2f}x, every tab built "
        f"{result['ready_ratio_all']:.2f}x"
    )


def _process_seconds(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, env=env, capture_output=True, timeout=120, check=True)
    return time.perf_counter() - started


def plan_json_against_import_numpy(runs: int = 3 * RUNS) -> dict[str, float]:
    plan = [sys.executable, "-m", "desktop", *PLAN_ARGS, "--json"]
    numpy = [sys.executable, "-c", "import numpy"]
    plan_s, numpy_s = [], []
    with tempfile.TemporaryDirectory() as scratch:
        env = _environment(scratch)
        _process_seconds(plan, env), _process_seconds(numpy, env)  # bytecode and disk cache
        for _ in range(runs):
            plan_s.append(_process_seconds(plan, env))
            numpy_s.append(_process_seconds(numpy, env))
    return {
        "plan_s": statistics.median(plan_s),
        "numpy_s": statistics.median(numpy_s),
        "ratio": statistics.median(plan_s) / statistics.median(numpy_s),
    }


def test_app_start_to_painted_window(benchmark):
    if benchmark.disabled:
        pytest.skip("a start-up benchmark: run with --benchmark-enable")
    result = benchmark.pedantic(app_start_against_bare_window, rounds=1, iterations=1)
    benchmark.extra_info.update(result)
    print("\n" + _describe(result))
    assert result["ratio"] <= APP_RATIO
    assert result["app_s"] <= APP_CEILING_SECONDS


def test_plan_json_process_against_import_numpy(benchmark):
    if benchmark.disabled:
        pytest.skip("a start-up benchmark: run with --benchmark-enable")
    result = benchmark.pedantic(plan_json_against_import_numpy, rounds=1, iterations=1)
    benchmark.extra_info.update(result)
    print(
        f"\nprplanner plan --json: {result['plan_s']:.3f} s, python -c 'import numpy' "
        f"{result['numpy_s']:.3f} s, ratio {result['ratio']:.2f}"
    )
    assert result["ratio"] <= PLAN_RATIO


def main() -> int:
    print(_describe(app_start_against_bare_window()))
    plan = plan_json_against_import_numpy()
    print(
        f"prplanner plan --json: median {plan['plan_s']:.3f} s, import numpy "
        f"{plan['numpy_s']:.3f} s: ratio {plan['ratio']:.2f} (target <= {PLAN_RATIO})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
