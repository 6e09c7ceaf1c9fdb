"""GUI benchmarks (issue 4): slider latency and start-up time.

Run ``python benchmarks/bench_gui.py`` (offscreen unless ``QT_QPA_PLATFORM`` is set).

1. **s slider latency**: the Plan tab of the main window (1500x950, example session, the
   last travel round as the previous round) while the s slider is dragged through 200
   positions. For each position: time from ``slider.setValue`` to the coalescing timer
   having fired and every plot item updated with ``setData`` (the event loop is run until
   the tab's refresh counter moves), and, separately, including the repaint that follows.
   Target: median <= 16 ms.
2. **start-up**: process start to window shown, measured from outside: the parent notes
   the time, starts ``python -m desktop`` with ``PRPLANNER_EXIT_AFTER_SHOW=1`` and reads
   the time the child prints once the window has been shown and painted. Target <= 2.5 s.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
POSITIONS = 200


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def slider_latency() -> dict[str, float]:
    from PySide6.QtWidgets import QApplication

    from desktop.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow()
    window.load_example()
    window.resize(1500, 950)
    window.show()
    rounds = window.session.state.rounds
    window.choose_previous_round(max(i for i, r in enumerate(rounds) if r.classifier == "travel"))
    plan = window.tabs.widget(0)
    window.tabs.setCurrentWidget(plan)
    for _ in range(3):
        app.processEvents()
    slider = plan.s_slider.slider
    # Sweep back and forth over the middle of the range, as a hand would.
    low, high = plan.s_slider.position_of(0.5), plan.s_slider.position_of(20.0)
    step = max(1, (high - low) // 100)
    positions = [low + (i * step) % (high - low) for i in range(POSITIONS)]
    updated, painted = [], []
    slider.setSliderDown(True)
    for position in positions:
        if position == slider.value():
            position += 1
        count = plan.refresh_count
        start = time.perf_counter()
        slider.setValue(position)
        while plan.refresh_count == count:
            app.processEvents()
        updated.append((time.perf_counter() - start) * 1000)
        app.processEvents()  # the repaint the update requested
        painted.append((time.perf_counter() - start) * 1000)
    slider.setSliderDown(False)
    assert window.session.undo_stack.count() == 2  # previous round + one drag
    window.session.undo_stack.setClean()
    window.close()
    return {
        "median_ms": statistics.median(updated),
        "p95_ms": percentile(updated, 95),
        "median_with_paint_ms": statistics.median(painted),
        "p95_with_paint_ms": percentile(painted, 95),
    }


def startup_seconds(runs: int = 3) -> list[float]:
    env = dict(os.environ)
    env["PRPLANNER_EXIT_AFTER_SHOW"] = "1"
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    times = []
    with tempfile.TemporaryDirectory() as settings_dir:
        env["PRPLANNER_SETTINGS_DIR"] = settings_dir
        for _ in range(runs):
            started = time.time()
            done = subprocess.run(
                [sys.executable, "-m", "desktop"],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            shown = [line for line in done.stdout.splitlines() if line.startswith("shown ")]
            if done.returncode != 0 or not shown:
                raise RuntimeError(f"start-up run failed ({done.returncode}): {done.stderr}")
            times.append(float(shown[0].split()[1]) - started)
    return times


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as settings_dir:
        os.environ["PRPLANNER_SETTINGS_DIR"] = settings_dir
        latency = slider_latency()
    print(
        f"s slider, {POSITIONS} positions: value change -> all plots updated: "
        f"median {latency['median_ms']:.2f} ms, p95 {latency['p95_ms']:.2f} ms "
        f"(target median <= 16 ms); including the repaint: median "
        f"{latency['median_with_paint_ms']:.2f} ms, p95 {latency['p95_with_paint_ms']:.2f} ms"
    )
    startup = startup_seconds()
    print(
        f"start-up (process start -> window shown), {len(startup)} runs: "
        f"median {statistics.median(startup):.2f} s, max {max(startup):.2f} s "
        f"(target <= 2.5 s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
