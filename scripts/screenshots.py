"""Write one PNG per tab of the main window: ``python scripts/screenshots.py OUTDIR``.

The window is drawn offscreen (``QT_QPA_PLATFORM=offscreen`` unless a platform is set)
at 1500x950 with the bundled example session; the Plan tab is shown with the last travel
round chosen as the previous round, so every plot has data. Settings go to a temporary
folder, never the user's.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

WIDTH, HEIGHT = 1500, 950


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python scripts/screenshots.py OUTDIR", file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
    settings_dir = tempfile.mkdtemp(prefix="prplanner-screens-")
    os.environ["PRPLANNER_SETTINGS_DIR"] = settings_dir
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

    from PySide6.QtCore import QThreadPool
    from PySide6.QtWidgets import QApplication

    from desktop.main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    window = MainWindow()
    window.load_example()
    window.resize(WIDTH, HEIGHT)
    window.show()
    rounds = window.session.state.rounds
    last_travel = max(
        (i for i, item in enumerate(rounds) if item.classifier == "travel"), default=None
    )
    if last_travel is not None:
        window.choose_previous_round(last_travel)
        window.rounds_panel.table.selectRow(last_travel)
    written = []
    for index, key in enumerate(window.tab_keys):
        window.tabs.setCurrentIndex(index)
        # Let timers, background work and layout settle before grabbing.
        for _ in range(5):
            app.processEvents()
            QThreadPool.globalInstance().waitForDone(20_000)
        app.processEvents()
        path = out / f"{index + 1}_{key}.png"
        window.grab().save(str(path))
        written.append(path)
    window.session.undo_stack.setClean()
    window.close()
    QThreadPool.globalInstance().waitForDone(20_000)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
