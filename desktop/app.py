"""Start the desktop app: ``prplanner`` or ``prplanner FILE.xlsx``.

:func:`run_app` creates the :class:`QApplication` (names for :class:`QSettings`), sets the
pyqtgraph look, and opens the main window with the given workbook (a saved session or a
plain rounds workbook), else the file the lead worked on last, else (a first start) the
bundled example session. A workbook that cannot be read gives a message; the app still
opens, with the example session.

Once the window is up, a session left behind by a run that crashed is offered back
(:meth:`~desktop.main_window.MainWindow.offer_recovery`; recovery files live in
:func:`~desktop.main_window.recovery_directory`). When it is restored, the given workbook
is not opened over it (the status bar says so).

Setting ``PRPLANNER_EXIT_AFTER_SHOW=1`` makes the app print ``shown <unix time> plots <n>``
once the window has been shown and painted (``n``: the plot widgets it holds), then quit:
the start-up benchmark measures process start to painted window with it, against a bare
window with as many plots.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import time

EXIT_AFTER_SHOW_ENV = "PRPLANNER_EXIT_AFTER_SHOW"


def resume_garbage_collection() -> None:
    """Switch the cyclic garbage collector back on once the window is up
    (:func:`desktop.launch.main` pauses it for the start-up).

    What start-up made (modules, classes, widgets) lives as long as the app: frozen, it is
    never scanned again, so no later collection pauses a slider drag to walk it.
    """
    gc.freeze()
    gc.enable()


def _offer_recovery(window) -> bool:
    """:meth:`MainWindow.offer_recovery`, which must never stop the start (the other tabs
    and the file to open come after it): a failure is logged and said, and the app goes on
    with the example session."""
    try:
        return window.offer_recovery()
    except Exception:
        logging.getLogger(__name__).exception("offering the recovered session failed")
        window.show_status("The unsaved session of the last run could not be restored")
        return False


def run_app(path: str | os.PathLike[str] | None = None) -> int:
    """Run the app until the window closes; returns the process exit code."""
    os.environ.setdefault("PYQTGRAPH_QT_LIB", "PySide6")
    import pyqtgraph as pg
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from desktop.main_window import APPLICATION, ORGANIZATION, MainWindow, recovery_directory

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    QApplication.setApplicationDisplayName("PR Planner")
    pg.setConfigOptions(antialias=True, background="w", foreground="#222")

    # The Plan tab is painted first; the other tabs are built right after (see below).
    window = MainWindow(recovery_dir=recovery_directory(), defer_tabs=True)
    window.load_example()
    window.show()

    def start() -> None:
        # From inside the event loop, once the window is up: the recovery offer and a
        # "could not open" message then sit over the window, and on failure the example
        # session stays open.
        # The start-up benchmark must never wait on a question.
        restored = not os.environ.get(EXIT_AFTER_SHOW_ENV) and _offer_recovery(window)
        if path is None:
            if not restored and not os.environ.get(EXIT_AFTER_SHOW_ENV):
                window.reopen_last_document()
            return
        if restored:
            window.show_status(
                f"{os.path.basename(os.fspath(path))} was not opened: the recovered session "
                "is open instead (File > Open to open it)"
            )
        else:
            window.open_workbook(path, ask=False)

    def start_then_report() -> None:
        resume_garbage_collection()  # before any job starts on a pool thread (workers.py)
        # The file is read off the GUI thread with the event loop running: the start-up
        # report waits until it is open.
        try:
            start()
        finally:  # whatever happened there, the other tabs are built
            if os.environ.get(EXIT_AFTER_SHOW_ENV):
                QTimer.singleShot(0, report_and_quit)
            else:
                QTimer.singleShot(0, window.build_deferred_tabs)

    QTimer.singleShot(0, start_then_report)

    if os.environ.get(EXIT_AFTER_SHOW_ENV):

        def report_and_quit() -> None:
            app.processEvents()  # let the first paint happen
            window.repaint()  # and make sure it did (a synchronous paint of the whole window)
            plots = len(window.findChildren(pg.PlotWidget))
            print(f"shown {time.time():.6f} plots {plots}", flush=True)
            # And when every tab is built and laid out (the window fully usable).
            window.build_deferred_tabs()
            for index in range(window.tabs.count()):
                tab = window.tabs.widget(index)
                if tab is not None:
                    tab.grab()
            plots = len(window.findChildren(pg.PlotWidget))
            print(f"ready {time.time():.6f} plots {plots}", flush=True)
            window.session.undo_stack.setClean()
            window.close()
            app.quit()

    return app.exec()
