"""Start the desktop app: ``prplanner`` or ``prplanner FILE.xlsx`` (spec 4.3).

:func:`run_app` creates the :class:`QApplication` (names for :class:`QSettings`), sets the
pyqtgraph look, and opens the main window with the bundled example session, or with the
given workbook. A workbook that cannot be read gives a message; the app still opens, with
the example session.

Setting ``PRPLANNER_EXIT_AFTER_SHOW=1`` makes the app print ``shown <unix time>`` once the
window has been shown and painted, then quit: the start-up benchmark measures process
start to window shown with it.
"""

from __future__ import annotations

import os
import sys
import time

EXIT_AFTER_SHOW_ENV = "PRPLANNER_EXIT_AFTER_SHOW"


def run_app(path: str | os.PathLike[str] | None = None) -> int:
    """Run the app until the window closes; returns the process exit code."""
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
    import pyqtgraph as pg
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from desktop.main_window import APPLICATION, ORGANIZATION, MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName("PR Planner")
    pg.setConfigOptions(antialias=True, background="w", foreground="#222")

    window = MainWindow()
    window.load_example()
    window.show()
    if path is not None:
        # From inside the event loop, once the window is up: a "could not open" message
        # then sits over the window, and on failure the example session stays open.
        QTimer.singleShot(0, lambda: window.open_workbook(path, ask=False))

    if os.environ.get(EXIT_AFTER_SHOW_ENV):

        def report_and_quit() -> None:
            app.processEvents()  # let the first paint happen
            print(f"shown {time.time():.6f}", flush=True)
            window.session.undo_stack.setClean()
            window.close()
            app.quit()

        QTimer.singleShot(0, report_and_quit)
    return app.exec()
