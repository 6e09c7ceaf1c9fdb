"""The main window: Rounds panel, the five tabs, menus, status bar.

One :class:`~desktop.session_model.SessionModel` is the document, kept as an ``.xlsx``
workbook: File > Save writes the report with its machine-readable Inputs sheet
and PNG snapshots of the plots (:func:`core.workbook.session_io.save_session`, atomic), and
File > Open restores every input from it (:func:`~core.workbook.session_io.read_session`).
A plain rounds workbook opens as a session about its latest round and is never
overwritten by Save, which asks for a new name instead.

The window tracks whether it has unsaved changes from the undo stack's clean state, shows
the file name and ``*`` in the title, and asks before New, Open or Quit throws changes away.
A few seconds after the last change the session is written to a
:class:`~core.workbook.recovery.RecoveryStore` (when the window was given a recovery
folder, as :func:`desktop.app.run_app` does); a clean close or save removes it, and the next
start offers a crashed run's session back (:meth:`MainWindow.offer_recovery`).

Window geometry, recent files and the last confidence level persist in :class:`QSettings`
(:func:`app_settings`; ``PRPLANNER_SETTINGS_DIR`` redirects it to a folder, which the tests
and the benchmark use so they never touch the user's settings;
``PRPLANNER_RECOVERY_DIR`` does the same for the recovery files).
"""

from __future__ import annotations

import contextlib
import dataclasses
import html
import importlib
import json
import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from PySide6.QtCore import (
    QBuffer,
    QByteArray,
    QIODevice,
    QPoint,
    QRect,
    QSettings,
    QSize,
    QStandardPaths,
    Qt,
    QThreadPool,
    QTimer,
)
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence, QPainter, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractSpinBox,
    QApplication,
    QDockWidget,
    QFileDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.errors import InputError, use_words
from core.progress import Cancelled
from core.session import SessionState
from core.workbook.layout import CELL_TEXT_LIMIT
from core.workbook.recovery import RecoveryStore
from core.workbook.safe_io import (
    ChangedOnDiskError,
    FileFingerprint,
    SaveError,
    check_destination,
    fingerprint,
    free_name,
    is_exported_report,
    is_labeling_workbook,
    is_ours,
    sheet_names,
)

# mypy finds modules by folder and cannot follow pyproject's package-dir mapping of
# resources/ to desktop.resources, so it sees no such module.
from desktop import formatting, resources  # type: ignore[attr-defined]
from desktop.grid import ConfusionGridModel, ConfusionGridView
from desktop.plan_tab import PlanTab
from desktop.plotting import PlotPanel
from desktop.rounds_panel import ColumnsDialog, RoundsPanel, previous_round_changes
from desktop.session_model import SessionModel
from desktop.tab_support import SessionTab
from desktop.widgets import affects, guard_wheel
from desktop.workers import run_with_progress

if TYPE_CHECKING:  # imported where used: Help and the item dialogs wait for their menus
    from core.workbook.rounds import SheetColumns
    from desktop.help import FormulaReference
    from desktop.labeling_round import ItemSampleDialog, LabeledRound
    from desktop.prevalence_tab import PrevalenceTab

TabT = TypeVar("TabT", bound=SessionTab)

ORGANIZATION = "PR Planner"
APPLICATION = "prplanner"
#: Folder for an INI settings file instead of the platform store (tests, benchmarks).
SETTINGS_DIR_ENV = "PRPLANNER_SETTINGS_DIR"
#: Folder for the crash-recovery files instead of ``AppDataLocation/recovery`` (tests).
RECOVERY_DIR_ENV = "PRPLANNER_RECOVERY_DIR"
#: Quiet time after the last change before the session is written for crash recovery.
RECOVERY_DELAY_MS = 3000
MAX_RECENT_FILES = 8
#: The column choices of the recent files as JSON: a few kilobytes at most from the app.
MAX_RECENT_COLUMNS_TEXT = 1 << 20
#: Workbooks whose column choices are kept (newest first), beyond the recent-files menu.
MAX_REMEMBERED_COLUMN_CHOICES = 50
#: What a rounds workbook reopens with after a restart, as the lead left it: the workbook
#: holds the rounds, not the targets; without these the Plan came back at the defaults and
#: the next draw asked for almost twice the labels, with no word (trial 17).
WORKBOOK_TARGETS = (
    "confidence", "plan.margin_precision", "plan.margin_recall", "plan.assurance_target",
    "plan.fpc", "plan.method", "plan.bayesian", "plan.cost_pos", "plan.cost_neg",
    "evaluate.fpc",
)  # fmt: skip
EXAMPLE_TITLE = "Example session"
#: The bundled session the app opens at start (written by scripts/make_example_session.py).
EXAMPLE_SESSION = "example_session.xlsx"
WORKBOOK_FILTER = "Excel workbooks (*.xlsx)"
#: What a save can fail with: a refusal or I/O error (InputError), and values no file
#: format can hold or a machine out of memory; none of them may close the window.
SAVE_FAILURES = (InputError, OSError, OverflowError, ValueError, MemoryError)
#: The same for reading a workbook (a reader's refusal is a WorkbookError, an InputError).
READ_FAILURES = (InputError, OSError, OverflowError, ValueError, MemoryError, RecursionError)
#: Plot snapshots for a save or export are at most this large (scaled down to fit): a
#: plot stretched by some long text must not turn into a 100-megapixel picture.
MAX_SNAPSHOT_SIZE = QSize(2400, 1600)
logger = logging.getLogger(__name__)

#: (tab key, title, "module:class") in the order the tabs appear. The key names the help
#: page. Named, not imported: a tab's module is imported when the tab is built, so the
#: window can paint the Plan tab before the others' modules are loaded.
TABS = (
    ("plan", "Plan", "desktop.plan_tab:PlanTab"),
    ("evaluate", "Evaluate", "desktop.evaluate_tab:EvaluateTab"),
    ("prevalence", "Prevalence", "desktop.prevalence_tab:PrevalenceTab"),
    ("ensemble", "Ensemble", "desktop.ensemble_tab:EnsembleTab"),
    ("history", "History", "desktop.history_tab:HistoryTab"),
)


def tab_class(entry: str) -> type:
    """The tab class a :data:`TABS` entry names (``"desktop.plan_tab:PlanTab"``)."""
    module, _, name = entry.partition(":")
    return getattr(importlib.import_module(module), name)


def app_settings() -> QSettings:
    """The app's settings: an INI file in ``$PRPLANNER_SETTINGS_DIR`` if set, else the
    platform's store under the organization and application names."""
    folder = os.environ.get(SETTINGS_DIR_ENV)
    if folder:
        return QSettings(str(Path(folder) / "prplanner.ini"), QSettings.Format.IniFormat)
    return QSettings(ORGANIZATION, APPLICATION)


def recovery_directory() -> Path:
    """Where crash-recovery files live: ``$PRPLANNER_RECOVERY_DIR`` if set, else
    ``AppDataLocation/recovery`` (per user, not a temporary folder emptied at boot)."""
    folder = os.environ.get(RECOVERY_DIR_ENV)
    if folder:
        return Path(folder)
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return Path(base or Path.home() / ".prplanner") / "recovery"


#: Plot pictures in saved workbooks are drawn at this multiple of their size on screen
#: (about 200 dpi when a plot is printed as wide as it shows), within MAX_SNAPSHOT_SIZE.
PRINT_SCALE = 2.0


def png_bytes(widget: QWidget, max_size: QSize = MAX_SNAPSHOT_SIZE) -> bytes:
    """The widget as it is drawn now, as PNG bytes, drawn at :data:`PRINT_SCALE` times its
    size (sharp on paper) or smaller to fit ``max_size``; never a bigger picture in memory."""
    size = widget.size().expandedTo(QSize(1, 1))
    factor = min(PRINT_SCALE, max_size.width() / size.width(), max_size.height() / size.height())
    target = QSize(max(1, round(size.width() * factor)), max(1, round(size.height() * factor)))
    image = QPixmap(target)
    image.fill(Qt.GlobalColor.white)
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        painter.scale(target.width() / size.width(), target.height() / size.height())
        # QWidget's render, not QGraphicsView's (a plot is a view; its own render draws
        # the scene, not the axes and labels around it).
        QWidget.render(widget, painter, QPoint(0, 0))
    finally:
        painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG")
    buffer.close()
    return bytes(data.data())


def plot_title(plot: PlotPanel) -> str:
    """A plot's title as plain text (first line, no markup)."""
    text = plot.plotItem.titleLabel.text or ""
    text = re.split(r"<br\s*/?>", text, maxsplit=1)[0]
    return html.unescape(re.sub(r"<[^>]+>", "", text)).strip()


def plot_has_data(plot: PlotPanel) -> bool:
    """True when some curve or scatter of the plot has points (empty plots are not shown
    in the report)."""
    for item in plot.plotItem.listDataItems():
        x, _y = item.getData()
        if x is not None and len(x):
            return True
    return False


#: The window's first size where the screen has room for it.
PREFERRED_WINDOW_SIZE = QSize(1500, 950)
#: Room for the title bar and frame, which ``resize`` does not count.
WINDOW_FRAME_ALLOWANCE = QSize(16, 40)


def fitted_window_size(
    available: QSize, preferred: QSize = PREFERRED_WINDOW_SIZE
) -> tuple[QSize, int]:
    """The window size (without title bar) and Rounds panel height for a screen whose free
    area (``availableGeometry``: without the taskbar) is ``available``.

    ``preferred`` shrinks to what the screen leaves after the frame; the Rounds panel
    keeps 190 px on a tall screen and 120 px on a laptop so the tabs keep their room.
    An empty ``available`` (no screen known) keeps ``preferred``.
    """
    if available.isEmpty():
        return QSize(preferred), 190
    width = min(preferred.width(), available.width() - WINDOW_FRAME_ALLOWANCE.width())
    height = min(preferred.height(), available.height() - WINDOW_FRAME_ALLOWANCE.height())
    return QSize(max(width, 1), max(height, 1)), 190 if height >= 900 else 120


class MainWindow(QMainWindow):
    """PR Planner's main window.

    Parameters
    ----------
    session : SessionModel, optional
        The document (a fresh one with the remembered confidence level by default).
    settings : QSettings, optional
        Where geometry, recent files and the confidence level persist
        (:func:`app_settings` by default).
    recovery_dir : path-like, optional
        Folder for crash-recovery files (:func:`recovery_directory` for the app). Without
        it the window keeps no recovery file: a window made by a test, a script or a
        benchmark never touches the user's recovery folder.
    """

    def __init__(
        self,
        session: SessionModel | None = None,
        settings: QSettings | None = None,
        parent: QWidget | None = None,
        *,
        recovery_dir: str | os.PathLike[str] | None = None,
        defer_tabs: bool = False,
    ):
        super().__init__(parent)
        # Messages from core name what the user set by this window's field labels.
        use_words(formatting.FIELD_WORDS)
        self.settings = settings if settings is not None else app_settings()
        self.session = session or SessionModel(SessionState(confidence=self._saved_confidence()))
        self.session.setParent(self)
        self._path: Path | None = None
        #: True when ``_path`` holds a saved session (Save may overwrite it); False for a
        #: plain rounds workbook, which Save never replaces with a report.
        self._path_is_session = False
        #: Workbooks the user brought (rounds workbooks opened this session): never written.
        self._brought: list[Path] = []
        #: The open session file as it was read or last saved (see save_to).
        self._fingerprint: FileFingerprint | None = None
        #: A workbook is being read or written in the background (see _in_background).
        self._busy = False
        #: What the recovery folder held that the lead must hear of at start (a damaged or
        #: newer unsaved session set aside): the reopening's message comes after it.
        self._recovery_notice = ""
        #: What the session last opened lacks of its rounds workbook (``""``: nothing).
        self._newer_rounds_note = ""
        #: The tab whose message the status bar shows (its empty message clears only that).
        self._status_owner: QWidget | None = None
        self._status_is_refusal = False
        #: What each tab said last (keyed by id), so a recomputation saying it again does
        #: not cover what the window said since ("round1 added" under a repeated warning).
        self._last_tab_message: dict[int, str] = {}
        self._document_title = "Untitled"
        self._problems_box: QMessageBox | None = None
        self.recovery: RecoveryStore | None = (
            RecoveryStore(recovery_dir) if recovery_dir is not None else None
        )
        #: Leftovers of crashed runs are removed only once they were offered back.
        self._recovery_offered = False
        self._recovery_failed = False
        self.recovery_timer = QTimer(self)
        self.recovery_timer.setObjectName("recovery_timer")
        self.recovery_timer.setSingleShot(True)
        self.recovery_timer.setInterval(RECOVERY_DELAY_MS)
        self.recovery_timer.timeout.connect(self.write_recovery)
        self._reference: FormulaReference | None = None
        self._connected_grids: set[int] = set()
        #: The item list last used for a labeling sample (its folder is where dialogs start).
        self._item_list: Path | None = None
        #: Folder of the file last used (item list, labeled workbook, workbook opened or
        #: saved): where Save As, Export report and Open start, the lead's files being there.
        self._last_folder: Path | None = None
        self.item_sample_dialog: ItemSampleDialog | None = None
        self.labeled_summary_box: QMessageBox | None = None
        #: The box listing the items editors' copies disagree on (reading labels).
        self.disagreements_box: QMessageBox | None = None

        self.tabs = QTabWidget(self)
        self.tabs.setDocumentMode(True)
        self.tab_keys: list[str] = []
        #: Tabs not built yet (``defer_tabs``): key -> class; see build_deferred_tabs.
        self._deferred_tabs: dict[str, str] = {}
        for index, (key, title, entry) in enumerate(TABS):
            if defer_tabs and index > 0:
                widget = QWidget(self.tabs)  # stands in until build_deferred_tabs
                self._deferred_tabs[key] = entry
            else:
                widget = self._make_tab(key, entry)
            self.tabs.addTab(widget, title)
            self.tab_keys.append(key)
        self.setCentralWidget(self.tabs)
        guard_wheel(self.tabs)  # the wheel scrolls panels, not unfocused fields

        self.rounds_panel = RoundsPanel(self.session, self)
        self.rounds_dock = QDockWidget("Rounds", self)
        self.rounds_dock.setObjectName("rounds_dock")
        self.rounds_dock.setWidget(self.rounds_panel)
        self.rounds_dock.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
        )
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.rounds_dock)
        self.rounds_panel.chosen.connect(self.choose_previous_round)
        self.rounds_panel.show_tab.connect(self.show_tab)
        self.rounds_panel.status_message.connect(self.show_status)
        self.plan_tab.draw_sample_requested.connect(lambda: self.open_item_sample())

        self._build_menus()
        self.statusBar().setSizeGripEnabled(True)
        self.session.refused.connect(lambda _path, message: self._show_refusal(message))
        self.connect_grids()
        self.session.undo_stack.cleanChanged.connect(self._update_title)
        self.session.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self.session.changed.connect(self._on_session_changed)
        self.tabs.currentChanged.connect(self._on_tab_changed)

        self._fit_to_screen()
        self._restore_window()
        self._update_title()

    # --- tabs ---------------------------------------------------------------------------

    def _make_tab(self, key: str, entry: str) -> SessionTab:
        widget = tab_class(entry)(self.session, self.tabs)
        widget.setObjectName(f"{key}_tab")
        widget.status_message.connect(
            lambda message, tab=widget: self._show_tab_status(tab, message)
        )
        widget.announce.connect(self.show_status)
        if key == "evaluate":
            widget.rounds_workbook = self.lead_rounds_workbook
            widget.round_for_workbook.connect(self.add_kept_round_to_rounds_workbook)
        return widget

    def _show_tab_status(self, tab: QWidget, message: str) -> None:
        """A tab's message; its empty message clears only a message of its own, never one
        another part of the window just gave ("Kept TR-07 as a round", a refusal).

        A tab that recomputes and says again what it said last does not replace a newer
        message either: the lead has read the warning, and it stays on the tab itself."""
        repeated = self._last_tab_message.get(id(tab)) == message
        self._last_tab_message[id(tab)] = message
        if message:
            if repeated and self._status_owner is not tab and self.statusBar().currentMessage():
                return
            self._show_owned(message, tab)
        elif self._status_owner is tab:
            self._clear_status()

    def _show_refusal(self, message: str) -> None:
        """A refused edit, said until the next edit is taken or another tab is shown."""
        self._show_owned(f"Refused: {message}", self.tabs.currentWidget(), refusal=True)

    def _show_owned(self, message: str, owner: QWidget | None, *, refusal: bool = False):
        self.statusBar().showMessage(message)
        self._status_owner = owner
        self._status_is_refusal = refusal

    def _clear_status(self) -> None:
        self.statusBar().clearMessage()
        self._status_owner = None
        self._status_is_refusal = False

    def build_deferred_tabs(self) -> None:
        """Build the tabs a ``defer_tabs`` window left for after its first paint.

        The app paints the Plan tab first and builds the other four right after (about a
        third of a second), so the window appears sooner; anything that needs a tab
        (showing it, snapshots, import) calls this first. Idempotent.
        """
        if not self._deferred_tabs:
            return
        current = self.tabs.currentIndex()
        self.tabs.blockSignals(True)
        try:
            for key, entry in list(self._deferred_tabs.items()):
                del self._deferred_tabs[key]
                index = self.tab_keys.index(key)
                title = self.tabs.tabText(index)
                try:
                    tab = self._make_tab(key, entry)
                except Exception:
                    # A bug in one tab must not cost the others (or shift their indices):
                    # its stand-in stays, saying so.
                    logger.exception("building the %s tab failed", key)
                    self._say_tab_failed(index)
                    continue
                stand_in = self.tabs.widget(index)
                self.tabs.removeTab(index)
                self.tabs.insertTab(index, tab, title)
                if stand_in is not None:
                    stand_in.deleteLater()
            self.tabs.setCurrentIndex(current)
        finally:
            self.tabs.blockSignals(False)
        self.connect_grids()
        guard_wheel(self.tabs)

    def _say_tab_failed(self, index: int) -> None:
        stand_in = self.tabs.widget(index)
        if stand_in is None:
            return
        layout = stand_in.layout() or QVBoxLayout(stand_in)
        message = QLabel(
            "This tab could not be built, because of an error in PR Planner. The other tabs "
            "work; saving keeps your session. Please report the log file's last lines.",
            stand_in,
        )
        message.setWordWrap(True)
        layout.addWidget(message)

    # --- menus --------------------------------------------------------------------------

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.new_action = self._action(
            file_menu, "&New", self.new_session, QKeySequence.StandardKey.New
        )
        self.open_action = self._action(
            file_menu, "&Open…", self.open_dialog, QKeySequence.StandardKey.Open
        )
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        file_menu.addSeparator()
        self.save_action = self._action(
            file_menu, "&Save", self.save, QKeySequence.StandardKey.Save
        )
        self.save_as_action = self._action(
            file_menu, "Save &As…", self.save_as, QKeySequence.StandardKey.SaveAs
        )
        self.export_action = self._action(
            file_menu, "&Export report…", lambda: self.export_report(None)
        )
        self.import_scored_action = self._action(
            file_menu, "&Import scored sample…", lambda: self.import_scored_sample(None)
        )
        file_menu.addSeparator()
        self.draw_sample_action = self._action(
            file_menu, "&Draw a sample from an item list…", lambda: self.open_item_sample()
        )
        self.read_labels_action = self._action(
            file_menu, "Read &labeled workbook…", lambda: self.read_labeled_workbook(None)
        )
        file_menu.addSeparator()
        self.quit_action = self._action(
            file_menu, "&Quit", self.close, QKeySequence.StandardKey.Quit
        )

        edit_menu = self.menuBar().addMenu("&Edit")
        self.undo_action = self.session.undo_action(self)  # "Undo: label cost, ..."
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.redo_action = self.session.redo_action(self)
        # Ctrl+Y as well, as in Excel (on Linux Qt's standard Redo is Ctrl+Shift+Z only).
        redo_keys = QKeySequence.keyBindings(QKeySequence.StandardKey.Redo)
        if QKeySequence("Ctrl+Y") not in redo_keys:
            redo_keys.append(QKeySequence("Ctrl+Y"))
        self.redo_action.setShortcuts(redo_keys)
        # After the stack's own slot: what was undone replaces what the window said of it
        # ("Removed R1 from this session" stayed after Undo brought R1 back; trial 14).
        stack = self.session.undo_stack
        self.undo_action.triggered.connect(lambda: self._say_done("Undone", stack.redoText()))
        self.redo_action.triggered.connect(lambda: self._say_done("Redone", stack.undoText()))
        edit_menu.addAction(self.undo_action)
        edit_menu.addAction(self.redo_action)
        edit_menu.addSeparator()
        self.copy_action = self._action(
            edit_menu, "&Copy", self.copy, QKeySequence.StandardKey.Copy
        )
        self.paste_action = self._action(
            edit_menu, "&Paste", self.paste, QKeySequence.StandardKey.Paste
        )

        view_menu = self.menuBar().addMenu("&View")
        view_menu.addAction(self.rounds_dock.toggleViewAction())

        help_menu = self.menuBar().addMenu("&Help")
        self.guide_action = self._action(help_menu, "&Guide", self.show_guide)
        # F1 opens the guide's page about the tab in view: it opened the formula reference,
        # written for statisticians, where a lead looks for help (trial 20).
        self.tab_guide_action = self._action(
            help_menu,
            "Guide to this &tab",
            self.show_tab_guide,
            QKeySequence.StandardKey.HelpContents,
        )
        self.reference_action = self._action(
            help_menu, "&Formula reference", self.show_formula_reference, QKeySequence("Shift+F1")
        )
        help_menu.addSeparator()
        self.example_action = self._action(
            help_menu, "Open the &example session", self.open_example
        )
        self.example_action.setStatusTip(
            "The bundled example: a plan, evaluated rounds and their history to look around in"
        )
        self.about_action = self._action(help_menu, "&About PR Planner", self.show_about)

        self.new_action.setStatusTip("Start a new session with default inputs")
        self.open_action.setStatusTip(
            "Open a saved session, or a workbook of past rounds (.xlsx) keeping your targets "
            "and settings"
        )
        self.save_action.setStatusTip(
            "Save the session as an Excel workbook (report, inputs and plot snapshots)"
        )
        self.save_as_action.setStatusTip("Save the session as a workbook under a new name")
        self.export_action.setStatusTip("Write an Excel report of the session")
        self.draw_sample_action.setStatusTip(
            "Pick the items to label from your item list (the Plan tab's sizes) and write a "
            "labeling workbook for the editors"
        )
        self.read_labels_action.setStatusTip(
            "Count the labels of a returned labeling workbook: the round joins the Rounds "
            "panel and the Evaluate tab"
        )
        self.import_scored_action.setStatusTip(
            "Read a scored sample (score, label columns) for the Prevalence tab's PR curves"
        )

    def _action(self, menu, text: str, slot, shortcut=None) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(shortcut)
        action.triggered.connect(lambda _checked=False: slot())
        menu.addAction(action)
        return action

    # --- documents ----------------------------------------------------------------------

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def is_modified(self) -> bool:
        return not self.session.undo_stack.isClean()

    def _fresh_state(self, rounds=()) -> SessionState:
        """A session of the lead's own: default inputs, no rounds, and none of the
        example's classifiers on the Ensemble tab (they would reach the lead's report)."""
        from core.session import EnsembleInputs

        state = SessionState(
            confidence=self.session.get("confidence"),
            rounds=tuple(rounds),
            ensemble=EnsembleInputs(children=()),
        )
        return _sliders_at_recommended(state)

    def load_example(self) -> None:
        """The bundled example session (inputs and past rounds), clean and untitled: Save
        asks for a name. The remembered confidence level is kept. A damaged install falls
        back to default inputs and the example rounds."""
        from core.workbook.session_io import read_session

        try:
            opened = read_session(resources.path(EXAMPLE_SESSION))
            if not opened.is_session:
                raise InputError(f"{EXAMPLE_SESSION} is not a saved session")
            state = dataclasses.replace(opened.state, confidence=self.session.get("confidence"))
            problems = list(opened.problems)
        except (InputError, FileNotFoundError) as exc:
            state, problems = self._example_rounds_state(exc)
        self.session.replace_state(state)
        self._set_document(None, EXAMPLE_TITLE)
        self.rounds_panel.set_source("Example rounds", problems)

    def open_example(self) -> bool:
        """Help > Open the example session (asks about unsaved changes first)."""
        if not self.maybe_keep_changes():
            return False
        self.load_example()
        self.show_status("The example session is open; your own files are under File > Open Recent")
        return True

    def _last_candidate(self) -> Path | None:
        """The session or rounds workbook the lead opened or saved last, there or not."""
        from core.workbook.labeling import ITEM_LIST_SUFFIXES
        from core.workbook.safe_io import is_labeling_workbook, sheet_names

        for name in self.recent_files():
            path = Path(name)
            if path.suffix.lower() in ITEM_LIST_SUFFIXES:
                continue
            # A labeling workbook would be read into the example, not opened: the session
            # or rounds workbook before it is the lead's work.
            if _is_file(path) and is_labeling_workbook(sheet_names(path)):
                continue
            return path
        return None

    def last_document(self) -> Path | None:
        """The session or rounds workbook the lead opened or saved last, if it is still
        there (``None`` on a first start: the example session is shown then)."""
        # The lead's last work: when it is gone, the example (never an older file).
        path = self._last_candidate()
        return path if path is not None and _is_file(path) else None

    def reopen_last_document(self) -> bool:
        """At start-up: open the lead's last file, as they left it, instead of the example
        (a lead who closed the app expects their work back, not the example; trial 13)."""
        path = self.last_document()
        if path is None:
            gone = self._last_candidate()
            if gone is not None:
                self._show_after_recovery_notice(
                    f"{gone.name}, the file you worked on last, is no longer in {gone.parent}; "
                    "the example session is open (File > Open Recent lists your files)"
                )
            return False
        if not self.open_workbook(path, ask=False, quiet=True):
            why = self.statusBar().currentMessage()  # what open_workbook said
            self._show_after_recovery_notice(
                f"{why} (the file you worked on last; the example session is open)"
            )
            return False
        self._show_after_recovery_notice(
            f"Reopened {path.name}, the file you worked on last (Help > Open the example "
            f"session shows the example){self._newer_rounds_note}"
        )
        return True

    def _show_after_recovery_notice(self, message: str) -> None:
        """``message`` at start-up, after what the recovery folder's check said (a set-aside
        unsaved session must not vanish under "Reopened …")."""
        notice = self._recovery_notice
        self.show_status(f"{notice}. {message}" if notice else message)

    def _example_rounds_state(self, why: Exception) -> tuple[SessionState, list[str]]:
        from core.workbook.rounds import read_rounds

        problems = [f"The example session could not be read ({why}); default inputs are used."]
        try:
            book = read_rounds(resources.path(resources.EXAMPLE_ROUNDS))
        except (InputError, FileNotFoundError) as exc:  # a damaged install: still open
            return self._fresh_state(), [*problems, str(exc)]
        return self._fresh_state(book.rounds), problems + _book_problems(book)

    def new_session(self) -> bool:
        """File > New: default inputs, no rounds (asks about unsaved changes first)."""
        if not self.maybe_keep_changes():
            return False
        self.session.replace_state(self._fresh_state())
        self._set_document(None, "Untitled")
        self.rounds_panel.set_source("No workbook", [])
        self.show_status("New session")
        return True

    def open_dialog(self) -> bool:
        """File > Open: a session or rounds workbook replaces the session (after asking
        about unsaved changes); a labeling workbook's labels are read into it and an item
        list opens the draw dialog, neither of which replaces anything."""
        from core.workbook.labeling import ITEM_LIST_SUFFIXES

        name, _filter = QFileDialog.getOpenFileName(
            self,
            "Open session, rounds workbook or item list",
            str(self._start_folder()),
            "Excel workbooks (*.xlsx *.xlsm);;Item lists (*.csv *.tsv *.txt *.gz *.parquet);;"
            "All files (*)",
        )
        if not name:
            return False
        path = Path(name)
        keeps_session = path.suffix.casefold() in ITEM_LIST_SUFFIXES or is_labeling_workbook(
            sheet_names(path)
        )
        if not keeps_session and not self.maybe_keep_changes():
            return False
        return self.open_workbook(path, ask=False)

    def open_workbook(
        self, path, *, ask: bool = True, columns: tuple[str, ...] = (), quiet: bool = False
    ) -> bool:
        """Open a saved session, or the past rounds of a plain ``.xlsx`` rounds workbook.

        A saved session restores every input exactly; a rounds workbook becomes a
        session about its latest round (``workbook_session``: Evaluate shows it, Plan
        plans from it), keeping the lead's other inputs
        (:meth:`inputs_kept_for_a_workbook`). Settings and
        rows that could not be used are listed in a dialog (and behind the Rounds panel's
        "not loaded" button); the rest loads. A file that cannot be read at all leaves
        the session as it was and says why.

        ``columns`` are the lead's choices of what the columns hold (``SHEET!ROLE=HEADER``):
        a workbook whose headers name no counts PR Planner knows (``Hits``, ``Misses``)
        offers the choice (:meth:`choose_columns_to_open`) and opens again with it.

        ``quiet`` (the reopening at start): a failure is said in the status bar only, with
        no message box over the window before the lead has done anything.
        """
        if self._busy:
            self.show_status("Wait until the workbook being read or saved is done")
            return False
        path = Path(path)
        if is_labeling_workbook(sheet_names(path)):
            return self._open_labeling_workbook(path, ask=ask)
        if self._opened_as_item_list(path):
            return False
        if ask and not self.maybe_keep_changes():
            return False
        if not columns:
            # The lead's column choices for this workbook, kept when they made them: File >
            # Open asked for every column again each month (trial 15).
            columns = tuple(self._recent_columns().get(str(_resolved(path)), ()))
        try:
            self.remember_workbook_targets()  # the workbook being left
            base = self.inputs_kept_for_a_workbook(path)
            from_example = self._is_example_document()  # before the document is renamed
            opened, seen, ours, report = self._in_background(
                f"Reading {path.name}…",
                lambda: _read_workbook(path, base, columns),
                cancellable=True,
            )
        except Cancelled:
            self.show_status(f"Opening {path.name} was cancelled; nothing changed")
            return False
        except READ_FAILURES as exc:  # WorkbookError: not an xlsx, damaged, encrypted, ...
            text = str(exc) if isinstance(exc, InputError) else _unreadable(path, exc)
            self.show_status(f"Could not open {path.name}: {text}")
            if not quiet:
                QMessageBox.warning(self, "Could not open the workbook", text)
            return False
        except Exception as exc:  # a bug: say so briefly, keep the session as it was
            logger.exception("reading %s failed", path)
            text = _unreadable(path, exc)
            self.show_status(f"Could not open {path.name}: {text}")
            if not quiet:
                QMessageBox.warning(self, "Could not open the workbook", text)
            return False
        if quiet and not opened.is_session and not opened.state.rounds:
            self.show_status(
                f"{path.name} holds no rounds PR Planner can use now (File > Open Recent "
                "opens it and offers to choose its columns)"
            )
            return False
        if not opened.is_session and not opened.state.rounds:
            # Nothing to open: the session stays (an item list or notes opened by mistake).
            reasons = "\n".join(opened.problems[:6])
            text = (
                f"{path.name} holds no rounds PR Planner can use (a rounds workbook has a "
                "header row with TP, FP, FN and TN); the open session was kept."
                + (f"\n\n{reasons}" if reasons else "")
            )
            self.show_status(f"{path.name} holds no rounds; the open session was kept")
            skipped = opened.book.skipped_sheets if opened.book is not None else ()
            guesses = [item.header_guess for item in skipped if item.header_guess is not None]
            damaged = _damaged_labeling_workbook(path, guesses)
            if damaged is not None:
                # A labels sheet (Item id, Label) without its Design or Sample sheet: say
                # that, as labels does, rather than offer to read it as rounds.
                QMessageBox.warning(self, "Not a complete labeling workbook", damaged)
            elif guesses:
                # Rounds kept under the lead's own headers: they can say which hold what.
                text = _no_rounds_in_own_words(path, skipped, bool(columns))
                self.offer_column_choice(path, text, guesses, columns)
            else:
                QMessageBox.warning(self, "No rounds in the workbook", text)
            return False
        state = opened.state
        if not opened.is_session:
            # Kept with the session: after Save and reopen, a round read from labels can
            # still be added to the lead's workbook (the labels come back days later).
            state = dataclasses.replace(state, rounds_workbook=str(path.resolve()))
        problems = list(opened.problems)
        # A session re-saved by Excel or LibreOffice may hold the user's own additions:
        # it is opened like any workbook of theirs, and Save asks for a new name. So is a
        # report exported for others: saving over it would replace what was sent.
        ours = opened.is_session and ours and not report
        if not ours:
            self._brought.append(path)
        self.session.replace_state(state)
        self._set_document(path, path.name, is_session=ours, seen=seen)
        self.rounds_panel.set_source(
            path.name,
            problems,
            workbook=_remembered_workbook(state) if opened.is_session else path,
            columns=opened.book.columns if opened.book is not None else (),
        )
        self._remember_recent(path, columns if not opened.is_session else ())
        self.remember_folder(path)
        count = len(state.rounds)
        what = "report" if report else "session" if opened.is_session else "workbook"
        message = f"Opened {what} {path.name}: {count} round{'s' if count != 1 else ''}"
        if report:
            # Opened for the rounds workbook it was made from, a report cut the link to
            # that workbook without a word (trial 16).
            message += (
                " (a report PR Planner wrote, not your rounds workbook: open that to add "
                "rounds to it)"
            )
        if not opened.is_session and state.current_round:
            from core.workbook.rounds import classifier_key
            from core.workbook.session_io import find_round_key

            latest = find_round_key(state.rounds, state.current_round)
            shown = state.previous_round
            # Whose, in a workbook of several classifiers' rounds (recheck 15).
            several = len({classifier_key(item.classifier) for item in state.rounds}) > 1
            if latest is not None and latest.classifier and several:
                shown = f"{latest.name} ({latest.classifier})"
            message += f"; Evaluate and Plan show its latest round, {shown}"
        if not opened.is_session and not from_example:
            message += "; your targets and other settings were kept"
        # Read once here; the start-up notice says it again in its own words.
        self._newer_rounds_note = _rounds_the_session_lacks(state) if opened.is_session else ""
        message += self._newer_rounds_note
        if problems:
            message += f"; {len(problems)} settings, rows or sheets not loaded"
        if opened.notes:
            message += "; hidden rows read as rounds"
        if (problems or opened.notes) and not quiet:
            # At start, the Rounds panel's "not loaded" button lists the problems.
            self.show_problems(path.name, problems, opened.notes)
        self.show_status(message)
        return True

    def offer_column_choice(
        self, path: Path, text: str, guesses: Sequence[SheetColumns], earlier: Sequence[str]
    ) -> QMessageBox:
        """Say that ``path`` holds no rounds and offer to choose which of its columns
        hold the counts (``guesses``: the header rows in the lead's own words)."""
        # The way to choose is this box's own button, not the Rounds panel's (trial 21).
        text = text.replace(f"with {formatting.FIELD_WORDS['column']}", "with Choose columns…")
        text = text.replace(formatting.FIELD_WORDS["column"], "Choose columns…")
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            "No rounds in the workbook",
            text,
            QMessageBox.StandardButton.Close,
            self,
        )
        box.setObjectName("no_rounds_box")
        choose = box.addButton("Choose columns…", QMessageBox.ButtonRole.AcceptRole)
        choose.setObjectName("choose_columns_button")

        def answered() -> None:
            if box.clickedButton() is choose:
                self.choose_columns_to_open(path, guesses, earlier)

        box.finished.connect(answered)
        box.open()
        self.no_rounds_box = box
        return box

    def choose_columns_to_open(
        self, path: Path, guesses: Sequence[SheetColumns], earlier: Sequence[str] = ()
    ) -> ColumnsDialog:
        """The "What the columns hold" dialog over the header rows ``guesses``; OK opens
        ``path`` with the choices (saved with the session, changed later with Columns…)."""
        dialog = ColumnsDialog(
            guesses,
            earlier,
            self,
            intro=(
                f"PR Planner does not know the headers of {path.name}. Choose what each "
                "column holds: the four counts (true positives, false positives, false "
                "negatives, true negatives) and either k or the two population counts are "
                "needed; a date, a classifier and a model version help. Press OK to open "
                "the workbook with your choice; it is saved with the session."
            ),
        )
        dialog.accepted.connect(
            lambda: self.open_workbook(path, ask=False, columns=tuple(dialog.choices()))
        )
        dialog.open()
        self.columns_dialog = dialog
        return dialog

    def _opened_as_item_list(self, path: Path) -> bool:
        """File > Open given a text table or Parquet file: an item list opens the draw
        dialog on it (nothing changes until a sample is drawn); the Labels sheet saved as
        CSV is named for what it is. False for anything else (opened as a workbook)."""
        from core.workbook.labeling import ITEM_LIST_SUFFIXES, misread_as_labels, misread_words

        if path.suffix.casefold() not in ITEM_LIST_SUFFIXES:
            return False
        kind = misread_as_labels(path)
        if kind == "item_list":
            self.open_item_sample(item_list=path)
            self.show_status(
                f"{path.name} is an item list, not a session: the draw dialog counts it and "
                "draws a sample from it; the open session is kept"
            )
            return True
        if kind is not None:
            QMessageBox.warning(self, "Not a session or rounds workbook", misread_words(path, kind))
            return True
        return False

    def _open_labeling_workbook(self, path: Path, *, ask: bool) -> bool:
        """File > Open given a labeling workbook: it is not a session, so instead of
        replacing the session its labels are read into it (after asking, when ``ask``)."""
        if ask:
            answer = QMessageBox.question(
                self,
                "A labeling workbook",
                f"{path.name} is a labeling workbook (a sample drawn for the editors), not a "
                "session or a rounds workbook.\n\nRead its labels into the open session "
                "(as File › Read labeled workbook… does)?",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.Yes,
            )
            if answer != QMessageBox.StandardButton.Yes:
                self.show_status(f"{path.name} was not opened; nothing changed")
                return False
        return self.read_labeled_workbook([path]) is not None

    def show_problems(
        self, name: str, problems: list[str], notes: Sequence[str] = ()
    ) -> QMessageBox:
        """Say what of ``name`` could not be used, and ``notes`` on what was read (hidden
        rows read as rounds), in a window-modal box that does not block."""
        if self._problems_box is not None:
            self._problems_box.close()
        if problems:
            title = "Not everything could be loaded"
            text = (
                f"{len(problems)} settings, rows or sheets of {name} could not be used; "
                "everything else was loaded."
            )
        else:
            title, text = "Read with a note", f"Everything in {name} was loaded; note:"
        box = QMessageBox(
            QMessageBox.Icon.Warning if problems else QMessageBox.Icon.Information,
            title,
            text,
            QMessageBox.StandardButton.Close,
            self,
        )
        problems = [*problems, *(note[:1].upper() + note[1:] + "." for note in notes)]
        shown = problems[:12]
        more = len(problems) - len(shown)
        box.setInformativeText(
            "\n".join(shown) + (f"\n… and {more} more (see Details)" if more > 0 else "")
        )
        box.setDetailedText("\n".join(problems))
        box.setObjectName("problems_box")
        # Enter closes the box; "Show Details..." must not become the default button.
        box.setDefaultButton(QMessageBox.StandardButton.Close)
        box.setEscapeButton(QMessageBox.StandardButton.Close)
        self._problems_box = box
        box.open()
        return box

    # --- crash recovery -----------------------------------------------------------------

    def offer_recovery(self) -> bool:
        """At start: offer back the session of a run that crashed (Restore / Discard).

        A restored session is marked unsaved; Save asks for a name (starting at the file
        it came from, if any). Either answer removes the crashed run's files. Returns
        True when a session was restored.
        """
        if self.recovery is None:
            return False
        entry = self.recovery.latest_entry()
        self._recovery_offered = True
        if self.recovery.set_aside:
            names = ", ".join(path.name for path in self.recovery.set_aside)
            self._recovery_notice = (
                f"A damaged copy of an unsaved session could not be restored and was set "
                f"aside ({names} in {self.recovery.directory})"
            )
        elif self.recovery.newer:
            self._recovery_notice = (
                "An unsaved session kept by a newer PR Planner was left for it "
                f"({', '.join(path.name for path in self.recovery.newer)} in "
                f"{self.recovery.directory}): open that version to restore it"
            )
        if self._recovery_notice:
            self.show_status(self._recovery_notice)
        if entry is None:
            return False
        when = entry.saved_at.strftime("%Y-%m-%d %H:%M")
        source = f" ({Path(entry.document).name})" if entry.document else ""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Recover unsaved session",
            f"PR Planner did not close normally. The session it had open{source} was kept "
            f"at {when} with changes that were not saved.\n\nRestore it?",
            parent=self,
        )
        restore = box.addButton("&Restore", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Discard)
        box.setDefaultButton(restore)
        box.setObjectName("recovery_offer")
        box.exec()
        restored = box.clickedButton() is restore
        box.deleteLater()
        self.recovery.clear()
        if not restored:
            self.show_status("The unsaved session of the last run was discarded")
            return False
        document = Path(entry.document) if entry.document else None
        title = f"{document.name} (recovered)" if document else "Recovered session"
        self.session.replace_state(entry.state)
        self._set_document(document, title, is_session=False)  # Save asks for a name
        self.session.undo_stack.resetClean()  # unsaved until the user saves it
        self._update_title()
        self.rounds_panel.set_source(
            "Recovered session", list(entry.problems), workbook=_remembered_workbook(entry.state)
        )
        self.write_recovery()  # protected again at once, should this run crash too
        self.show_status(f"Restored the unsaved session kept at {when}: save it to keep it")
        if entry.problems:
            self.show_problems("the recovered session", list(entry.problems))
        return True

    def write_recovery(self) -> None:
        """Write the unsaved session for crash recovery (the timer calls this after a few
        seconds without changes); a clean session needs no recovery file."""
        self.recovery_timer.stop()
        if self.recovery is None:
            return
        if not self.is_modified:
            self._remove_own_recovery_file()
            return
        try:
            self.recovery.write(
                self.session.state, document=str(self._path) if self._path else None
            )
        except Exception as exc:  # SaveError: recovery folder read-only or full; or a bug
            if not isinstance(exc, SAVE_FAILURES):
                logger.error("writing the recovery file failed", exc_info=exc)
            if not self._recovery_failed:
                self.show_status(
                    f"Crash recovery is not available: {formatting.short_text(exc, 300)}"
                )
            self._recovery_failed = True

    def _remove_own_recovery_file(self) -> None:
        """Nothing unsaved left: drop this run's recovery file (and, once the start-up
        offer was answered, files of crashed runs)."""
        self.recovery_timer.stop()
        if self.recovery is None:
            return
        if self._recovery_offered:
            self.recovery.clear()
        else:  # never remove a crashed run's session before it was offered
            with contextlib.suppress(OSError):
                self.recovery.path.unlink(missing_ok=True)

    def _on_clean_changed(self, clean: bool) -> None:
        if clean:
            self._remove_own_recovery_file()

    # --- saving and exporting ------------------------------------------------------------

    def save(self) -> bool:
        """File > Save: overwrite the open session, or ask for a name (Save As) when there
        is none yet or the open file is not a session PR Planner wrote (a rounds workbook,
        a session re-saved by another program): that file is never replaced."""
        if self._path is not None and self._path_is_session:
            return self.save_to(self._path)
        return self.save_as()

    def save_as(self, suggested: Path | None = None) -> bool:
        """File > Save As…: ask for a file name (starting at ``suggested``), then save."""
        name = self._ask_save_name(
            "Save session",
            suggested or self._suggested_session_path(),
            failure_title="Could not save the session",
            sources=self._brought,
            purpose="session",
        )
        return self.save_to(name) if name else False

    def save_session(self, path=None) -> bool:
        """Save to ``path``, or (``None``) like File > Save."""
        return self.save_to(path) if path is not None else self.save()

    def save_to(self, path) -> bool:
        """Write the session workbook to ``path`` (atomic; the plots go in as PNGs).

        The workbook is written on the thread pool while the window stays responsive. On
        success the document is clean and named after the file; a failed save, whatever
        the cause, leaves the old file intact, says why (message box and status bar) and
        keeps the window, its data and its unsaved mark.
        """
        from core.workbook.session_io import save_session

        path = Path(path)
        if self._busy:
            self.show_status("Wait until the workbook being read or saved is done")
            return False
        state = self.session.state
        same_document = self._path is not None and self._path_is_session and path == self._path
        expected = self._fingerprint if same_document else None
        sources = tuple(self._brought)

        def write(images: dict[str, bytes]):
            content = save_session(path, state, images=images, sources=sources, expected=expected)
            return content, fingerprint(path)

        try:
            check_destination(path, sources=sources, expected=expected, purpose="session")
            images = self.plot_snapshots()
            content, seen = self._in_background(f"Saving {path.name}…", lambda: write(images))
        except ChangedOnDiskError as exc:  # another window or program wrote it meanwhile
            answer = QMessageBox.warning(
                self,
                "Could not save the session",
                f"{exc}.\n\nPress Save to save your version under another name.",
                QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Cancel,
                QMessageBox.StandardButton.Save,
            )
            self.show_status(f"Not saved: {path.name} changed on disk since you opened it")
            if answer != QMessageBox.StandardButton.Save:
                return False
            return self.save_as(free_name(path.parent, path.stem, path.suffix))
        except Exception as exc:  # SaveError: read-only, disk full, not ours, ...; or a bug
            self._say_save_failed("Could not save the session", path, exc)
            return False
        self._set_document(path, path.name, is_session=True, seen=seen)
        self._remember_recent(path)
        self.remember_folder(path)
        self._remove_own_recovery_file()
        message = f"Saved to {path}"
        if content.warnings:
            count = len(content.warnings)
            message += f" ({count} note{'s' if count != 1 else ''} in the report's Summary)"
        self.show_status(message)
        return True

    def export_report(self, path=None) -> bool:
        """File > Export report…: write the Excel report (with plot snapshots) to ``path``,
        asked for with a file dialog when ``None``. The document stays as it is."""
        from core.workbook.report import write_report
        from core.workbook.session_io import report_subject

        if self._busy:
            self.show_status("Wait until the workbook being read or saved is done")
            return False
        sources = (*self._brought, *([self._path] if self._path is not None else []))
        if path is None:
            path = self._ask_save_name(
                "Export report",
                self._suggested_report_path(),
                failure_title="Could not write the report",
                sources=sources,
                purpose="report",
            )
            if not path:
                return False
        path = Path(path)
        state = self.session.state
        # The same subject as `prplanner report` of this session: the current round while
        # the Evaluate tab shows it, else the counts typed there.
        subject = report_subject(state)
        try:
            check_destination(path, sources=sources, purpose="report")
            images = self.plot_snapshots()
            judge = self._targets_were_set()
            content = self._in_background(
                f"Writing the report {path.name}…",
                lambda: write_report(
                    path,
                    state,
                    round_name=subject,
                    images=images,
                    sources=sources,
                    judge_targets=judge,
                ),
            )
        except Exception as exc:  # as in save_to: never escapes, never closes the window
            self._say_save_failed("Could not write the report", path, exc)
            return False
        message = f"Report written to {path}"
        if content.warnings:
            count = len(content.warnings)
            message += f" ({count} note{'s' if count != 1 else ''} in its Summary)"
        self.show_status(message)
        return True

    def _targets_were_set(self) -> bool:
        """Whether the report may judge the round by the Plan's target margins: they are
        the lead's (a saved session, margins changed from the defaults, or rounds read
        from labeling workbooks that record theirs), not defaults a plain rounds workbook
        was opened with (as `prplanner report` decides)."""
        from core.session import PlanInputs
        from desktop.labeling_round import LABELED_SHEET

        state, defaults = self.session.state, PlanInputs()
        return (
            self._path_is_session
            or (state.plan.margin_precision, state.plan.margin_recall)
            != (defaults.margin_precision, defaults.margin_recall)
            or any(item.sheet == LABELED_SHEET for item in state.rounds)
        )

    def _in_background(self, label: str, function, *, cancellable: bool = False):
        """``function()`` on the thread pool, the window responsive (see
        :func:`desktop.workers.run_with_progress`); one read or save at a time."""
        self._busy = True
        try:
            return run_with_progress(self, label, function, cancellable=cancellable)
        finally:
            self._busy = False

    def _ask_save_name(
        self,
        caption: str,
        suggested: Path,
        *,
        failure_title: str,
        sources=(),
        purpose: str = "output",
    ) -> Path | None:
        """Ask for a file to write, until the answer is one that may be written.

        The dialog itself never offers to replace a file (Qt's "replace?" prompt is off):
        a file PR Planner did not write, a file the session was read from, or a read-only
        file is refused here with the reason, and the dialog opens again; replacing a file
        PR Planner wrote (other than the open session) is confirmed. ``None``: cancelled.
        """
        while True:
            name, _filter = QFileDialog.getSaveFileName(
                self,
                caption,
                str(suggested),
                WORKBOOK_FILTER,
                "",
                QFileDialog.Option.DontConfirmOverwrite,  # replacing is decided below
            )
            if not name:
                return None
            path = Path(name)
            if path.suffix.lower() != ".xlsx":
                path = path.with_name(path.name + ".xlsx")
            is_open_session = self._path_is_session and path == self._path
            try:
                check_destination(
                    path,
                    sources=sources,
                    expected=self._fingerprint if is_open_session else None,
                    purpose=purpose,
                )
            except SaveError as exc:
                message = str(exc)
                if "choose a" not in message.casefold():  # another name / a new name
                    message += "\n\nChoose another name."
                QMessageBox.warning(self, failure_title, message)
                suggested = free_name(path.parent, f"{path.stem} {purpose}", ".xlsx")
                continue
            if path.exists() and not is_open_session:
                from core.workbook.safe_io import is_session

                kind = (
                    "a report PR Planner wrote"
                    if is_exported_report(path)
                    else "a session PR Planner saved"
                    if is_session(sheet_names(path))
                    else "PR Planner wrote it"
                )
                answer = QMessageBox.question(
                    self,
                    caption,
                    f"{path.name} already exists ({kind}). Replace it?",
                    QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                    QMessageBox.StandardButton.No,
                )
                if answer != QMessageBox.StandardButton.Yes:
                    suggested = path
                    continue
            return path

    def _start_folder(self) -> Path:
        """Where file dialogs start: the folder of the file last used (an item list, a
        labeled workbook, a workbook opened or saved; remembered across restarts), else
        the open document's, else home."""
        if self._last_folder is None:
            stored = self.settings.value("last_folder", "")
            self._last_folder = Path(str(stored)) if stored else None
        if self._last_folder is not None and _is_folder(self._last_folder):
            return self._last_folder
        return self._path.parent if self._path is not None else Path.home()

    def remember_folder(self, path: Path) -> None:
        """``path`` was just used: dialogs start in its folder from now on, and after a
        restart (the lead's files are where they were last week)."""
        self._last_folder = Path(path).absolute().parent
        self.settings.setValue("last_folder", str(self._last_folder))

    def _suggested_session_path(self) -> Path:
        if self._path is not None and self._path_is_session:
            return self._path
        # A rounds workbook or someone else's session: a new name, never the file itself.
        stem = "PR Planner session" if self._path is None else f"{self._path.stem} session"
        return _unused_or_ours(self._start_folder(), stem)

    def _suggested_report_path(self) -> Path:
        stem = self._path.stem if self._path is not None else "PR Planner"
        return _unused_or_ours(self._start_folder(), f"{stem} report")

    def _say_save_failed(self, title: str, path: Path, exc: Exception) -> None:
        if isinstance(exc, InputError):
            detail = str(exc)
        else:  # not a refusal we foresaw: say it plainly, keep the window and the data
            if not isinstance(exc, SAVE_FAILURES):
                logger.error("saving %s failed", path, exc_info=exc)
            cause = formatting.short_text(f"{type(exc).__name__}: {exc}", 300)
            detail = f"Saving {path.name} failed unexpectedly ({cause})."
        if isinstance(exc, SaveError) and _is_file(path):
            detail += f"\n\nThe file that was there ({path.name}) is unchanged."
        if self.is_modified:
            detail += "\nYour changes are still open in the window: try another folder."
        self.show_status(f"{title}: {formatting.short_text(detail, 300)}")
        QMessageBox.warning(self, title, detail)

    # --- plot snapshots ----------------------------------------------------------------

    def plot_snapshots(self) -> dict[str, bytes]:
        """PNG snapshots of every tab's plots that have data, ``"Tab: plot title"`` ->
        bytes, in tab order and top-to-bottom, left-to-right within a tab.

        Tabs never shown are laid out at the size of the visible one first (a hidden
        widget in a :class:`QStackedWidget` keeps its 100x30 birth size until shown).
        Rendering happens on the GUI thread and takes a few tens of milliseconds per plot.
        """
        self.build_deferred_tabs()
        images: dict[str, bytes] = {}
        current = self.tabs.currentWidget()
        frame = current.geometry() if current is not None else QRect()
        if frame.width() < 400 or frame.height() < 300:
            frame = QRect(0, 0, max(self.width() - 20, 1200), max(self.height() - 260, 640))
        for index in range(self.tabs.count()):
            tab = self._tab_at(index, SessionTab)
            plots = tab.findChildren(PlotPanel)
            if not plots:
                continue
            if not tab.isVisible():
                tab.refresh_if_deferred()  # a hidden tab may have put its work off
                tab.setGeometry(frame)
                tab.grab()  # delivers the pending resize events: lays the tab out
            plots = [plot for plot in plots if plot.isVisibleTo(tab) and plot_has_data(plot)]
            plots.sort(key=lambda plot: _reading_order(plot.mapTo(tab, QPoint(0, 0))))
            for plot in plots:
                name = f"{self.tabs.tabText(index)}: {plot_title(plot) or 'plot'}"
                while name in images:
                    name += " (2)"
                images[name] = png_bytes(plot)
        return images

    def _set_document(
        self,
        path: Path | None,
        title: str,
        *,
        is_session: bool = False,
        seen: FileFingerprint | None = None,
    ) -> None:
        """Name the document; ``seen`` is the session file as it was read or written (the
        next Save refuses if it changed on disk since)."""
        self._path = path
        self._path_is_session = is_session and path is not None
        if path is None or not is_session:
            self._fingerprint = None
        else:
            self._fingerprint = seen if seen is not None else fingerprint(path)
        self._document_title = title
        self.session.undo_stack.setClean()
        self._update_title()

    def _update_title(self, *_args) -> None:
        self.setWindowTitle(f"{self._document_title}[*] — PR Planner")
        self.setWindowModified(self.is_modified)

    def maybe_keep_changes(self) -> bool:
        """Ask about unsaved changes; True when it is fine to replace or close the session."""
        if not self.is_modified:
            return True
        question = f"{self._document_title} has unsaved changes. Save them first?"
        if self._path is not None and not self._path_is_session:
            # A lead feared for their rounds workbook: Save asks for a session file, and
            # the workbook keeps what was added to it (trial 17).
            question = (
                f"This session, opened from {self._path.name}, has changes that are not "
                "saved. Save them as a session file first? Saving never writes over "
                f"{self._path.name}: rounds you added to it are there already."
            )
        elif self._path is None:
            # "Untitled" meant nothing to a lead whose rounds were in their workbook
            # (trial 18).
            question = "This session is not saved. Save it first, to keep its settings?"
            workbook = self.lead_rounds_workbook()
            if workbook is not None:
                question += (
                    f" The rounds you added to {workbook.name} stay there either way, and "
                    "the next start opens it if you do not save."
                )
        answer = QMessageBox.question(
            self,
            "Unsaved changes",
            question,
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        if answer == QMessageBox.StandardButton.Discard:
            return True
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return False

    # --- scored sample --------------------------------------------------------------------

    def import_scored_sample(self, path=None) -> bool:
        """File > Import scored sample…: hand a CSV/XLSX of scores and labels to the
        Prevalence tab (read in the background there) and show that tab."""
        tab = self.prevalence_tab
        if path is None:
            name, _filter = QFileDialog.getOpenFileName(
                self,
                "Import scored sample",
                str(self._start_folder()),
                "Scored samples (*.csv *.xlsx *.xlsm);;All files (*)",
            )
            if not name:
                return False
            path = name
        tab.import_scored_sample(path)
        self.tabs.setCurrentWidget(tab)
        # The tab's own: it clears (or replaces) this once the file is read.
        self._show_owned(f"Reading the scored sample {Path(path).name}…", tab)
        return True

    # --- previous round -------------------------------------------------------------------

    def choose_previous_round(self, row: int) -> bool:
        """Make round ``row`` the previous round: fill ``plan.previous`` and plan from it."""
        rounds = self.session.state.rounds
        if not 0 <= row < len(rounds):
            return False
        from core.workbook.session_io import told_apart

        item = rounds[row]
        label = told_apart(rounds, item)
        message = self.session.set_values(
            previous_round_changes(item), text=f"Use {label} as previous round"
        )
        if message:
            return False
        self.show_status(
            f"{label} is the previous round: the plan now starts from its counts and its "
            "population (so its recall reads as in the Rounds panel)"
        )
        return True

    # --- the round loop on the lead's items ------------------------------------------

    def item_folder(self) -> Path:
        """Where item-list and labeling dialogs start: the last item list's folder."""
        if self._item_list is not None:
            return self._item_list.parent
        return self._start_folder()

    def labeling_folder(self, *, labeled: bool = False) -> Path:
        """Where the labeling workbook's Save dialog starts: the folder the last one was
        saved in, remembered across restarts (a lead keeps each week's workbooks together,
        apart from the exports the item lists come from: trial 17), else the item list's.
        ``labeled``: where the Open dialog of labeled workbooks starts, the folder they
        were last read from, else the same."""
        for key in ("labeled_folder", "labeling_folder") if labeled else ("labeling_folder",):
            stored = str(self.settings.value(key, "") or "")
            if stored and _is_folder(Path(stored)):
                return Path(stored)
        return self.item_folder()

    def remember_labeling_folder(self, path: Path, *, labeled: bool = False) -> None:
        """A labeling workbook was just saved as ``path`` (``labeled``: read back from
        ``path``): the matching dialog starts in its folder from now on."""
        key = "labeled_folder" if labeled else "labeling_folder"
        self.settings.setValue(key, str(Path(path).absolute().parent))

    def remember_item_list(self, path: Path, *, counted: bool = True) -> None:
        """Start the next item-list dialog in ``path``'s folder; and when it was
        ``counted`` (not refused), list it among the recent item lists."""
        self._item_list = Path(path)
        self.remember_folder(self._item_list)
        if not counted:
            return  # a refused export stayed in the list (trial 17)
        # Kept across restarts: a top-up a week later finds the list the round was drawn
        # from (the lead had to look for it again; trial 14).
        kept = [str(self._item_list.absolute())]
        kept += [name for name in self.recent_item_lists() if name not in kept]
        self.settings.setValue("recent_item_lists", kept[:MAX_RECENT_FILES])

    def remember_draw_columns(self, texts: dict[str, str]) -> None:
        """Keep the column fields of a draw for the next one (settings ``draw_columns``)."""
        self.settings.setValue("draw_columns", json.dumps(texts))

    def remember_draw_category(self, classifier: str, category: str) -> None:
        """Keep the category the editors were told for ``classifier``'s draws (settings
        ``draw_categories``): the next draw offers it again, not the classifier's name,
        which the editors' sheet then showed as the category (trial 17)."""
        from core.workbook.rounds import classifier_key

        if not classifier.strip() or not category.strip():
            return
        self._keep_first("draw_categories", classifier_key(classifier), category)

    def remembered_draw_category(self, classifier: str) -> str:
        """The category last given for ``classifier``'s draws, or ``""``."""
        from core.workbook.labeling import MAX_CATEGORY_LENGTH
        from core.workbook.rounds import classifier_key

        value = self._json_setting("draw_categories").get(classifier_key(classifier))
        return value[:MAX_CATEGORY_LENGTH] if isinstance(value, str) else ""

    def remembered_draw_columns(self) -> dict[str, str]:
        """The column fields of the lead's last draw (``{}`` when none, or when the
        settings file was edited into something else)."""
        from desktop.labeling_round import DRAW_COLUMN_FIELDS

        return {
            key: value[:CELL_TEXT_LIMIT]
            for key, value in self._json_setting("draw_columns").items()
            if key in DRAW_COLUMN_FIELDS and isinstance(value, str) and value.strip()
        }

    def recent_item_lists(self) -> list[str]:
        """The item lists drawn from lately, newest first."""
        return self._recent_list("recent_item_lists")

    def open_item_sample(
        self,
        n_pos: int | None = None,
        n_neg: int | None = None,
        *,
        earlier=None,
        item_list: Path | None = None,
        sizes_from: str | None = None,
    ) -> ItemSampleDialog:
        """Open the dialog that draws a sample from an item list (or tops a round up).

        The sizes default to the Plan tab's (:meth:`PlanTab.sample_sizes`: the sliders'
        design when it meets both target margins, else the recommended plan); those sizes
        follow the plan when the item list's counts become its population. Sizes given
        here stay as given.
        """
        source = sizes_from
        if n_pos is None or n_neg is None:
            sizes = self.plan_tab.sample_sizes()
            n_pos, n_neg, source = sizes.n_pos, sizes.n_neg, sizes.source
        carried = None
        previous = self.item_sample_dialog
        if previous is not None:
            if earlier is None and item_list is None:
                # Closed before its draw (to set the targets: the dialog is modal), it
                # came back empty and the lead picked the file and five columns again
                # (trial 18): the new one starts where that one was left.
                carried = previous.unfinished_choice()
            previous.close()
            previous.deleteLater()
        from desktop.labeling_round import ItemSampleDialog

        dialog = ItemSampleDialog(
            self, n_pos=n_pos, n_neg=n_neg, earlier=earlier, sizes_from=source
        )
        self.item_sample_dialog = dialog
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.show()
        if item_list is not None:
            dialog.set_item_list(item_list)
        elif carried is not None:
            dialog.take_up(*carried)
        return dialog

    def _tab_at(self, index: int, kind: type[TabT]) -> TabT:
        """The built tab at ``index``, which must be a ``kind``."""
        tab = self.tabs.widget(index)
        if not isinstance(tab, kind):
            raise TypeError(f"tab {index} is a {type(tab).__name__}, not a {kind.__name__}")
        return tab

    @property
    def plan_tab(self) -> PlanTab:
        return self._tab_at(self.tab_keys.index("plan"), PlanTab)

    @property
    def prevalence_tab(self) -> PrevalenceTab:
        """The Prevalence tab, built first if it was deferred."""
        self.build_deferred_tabs()
        from desktop.prevalence_tab import PrevalenceTab  # imported by the build above

        return self._tab_at(self.tab_keys.index("prevalence"), PrevalenceTab)

    def read_labeled_workbook(self, paths=None) -> LabeledRound | None:
        """Read a returned labeling workbook (and its top-ups) into the Rounds panel and
        the Evaluate tab; ``paths`` None asks for them."""
        if self._busy:
            self.show_status("Wait until the workbook being read or saved is done")
            return None
        from desktop.labeling_round import ask_labeled_workbooks, read_labeled_round

        if paths is None:
            paths = ask_labeled_workbooks(self, self.labeling_folder(labeled=True))
            if not paths:
                return None
        paths = [Path(path) for path in paths]
        if paths:
            self.remember_folder(paths[0])
            self.remember_labeling_folder(paths[0], labeled=True)
        return read_labeled_round(self, paths)

    def show_labeled_summary(self, result: LabeledRound, *, added: str = "") -> QMessageBox:
        """What the labels gave, with a Top up button when a target margin is missed
        (window-modal, not blocking). ``added``: the round was just added to the lead's
        rounds workbook (the box comes back saying so, its Top up buttons still there)."""
        if self.labeled_summary_box is not None:
            self.labeled_summary_box.close()
        box = QMessageBox(self)
        box.setObjectName("labeled_summary")
        box.setWindowTitle("Labels read")
        box.setTextFormat(Qt.TextFormat.RichText)
        # A message box wraps its text at about 500 px: the summary of a draw with further
        # classifiers ran to a page (trial 13). Wider, it reads in half the height.
        box.setStyleSheet("QLabel#qt_msgbox_label { min-width: 720px; }")
        from desktop.labeling_round import summary_text

        text = summary_text(result)
        if result.examples_removed:
            text += (
                f"<br><br>The example's {result.examples_removed} rounds "
                + ("and its Ensemble classifiers " if result.example_ensemble_removed else "")
                + "were taken out of this session: this round is yours, and comparing it "
                "with made-up rounds would mislead. Edit > Undo brings them back."
            )
        box.setText(text)
        box.setIcon(QMessageBox.Icon.Warning if result.missed else QMessageBox.Icon.Information)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.addButton(QMessageBox.StandardButton.Close)
        if result.top_up_for_all is not None:
            from desktop.labeling_round import chance_words

            surer = result.surer
            # The chances are the main classifier's at its own top-up: said only when that
            # is the top-up drawn (another classifier of the draw may ask for more).
            own_sizes = result.top_up_for_all == result.top_up
            title = "Top up…"
            if surer is not None and result.chance is not None and own_sizes:
                title = f"Top up ({chance_words(result.chance.both)} chance)…"
            button = box.addButton(title, QMessageBox.ButtonRole.ActionRole)
            button.setObjectName("top_up_button")
            total_pos, total_neg = result.top_up_for_all
            # What the button draws, before the lead presses it (trial 13).
            button.setToolTip(
                f"Opens the top-up for sample totals of {total_pos:,} flagged and "
                f"{total_neg:,} unflagged items (only the items not drawn yet are new)"
            )
            button.clicked.connect(lambda: self.top_up(result))
            if surer is not None and surer.chance is not None and own_sizes:
                sure = box.addButton(
                    f"Top up ({chance_words(surer.chance.both)} chance)…",
                    QMessageBox.ButtonRole.ActionRole,
                )
                sure.setObjectName("surer_top_up_button")
                sure.setToolTip(
                    "Draws enough that the topped-up round meets both targets with this "
                    "chance, given the labels so far"
                )
                sure.clicked.connect(lambda: self.top_up(result, surer=True))
        workbook = self.lead_rounds_workbook()
        if added:
            said = html.escape(added, quote=False)
            box.setText(f"{box.text()}<br><br>{said}{'' if said.endswith('.') else '.'}")
        elif workbook is None or not workbook.is_file():
            # No rounds workbook yet: one can be chosen or started here (only the command
            # line could start one, and the name and date given in the app were lost on
            # the way; trial 16).
            add = box.addButton("Add to a rounds workbook…", QMessageBox.ButtonRole.ActionRole)
            add.setObjectName("add_to_chosen_rounds_workbook_button")
            add.setToolTip(
                "Add this round (one row per classifier) to the workbook where you keep your "
                "rounds, or type a new name to start one; the app offers it for your next "
                "rounds too. Undo does not take the rows out of the file"
            )
            add.clicked.connect(lambda: self._add_and_keep_summary(result, choose=True))
        else:
            # The lead keeps a rounds workbook: the round can join it as labels
            # --append-to adds it (the session keeps it either way).
            add = box.addButton(
                f"Add to {formatting.short_text(workbook.name, 40)}",
                QMessageBox.ButtonRole.ActionRole,
            )
            add.setObjectName("add_to_rounds_workbook_button")
            add.setToolTip(
                f"Add this round as a row of your rounds workbook {workbook.name} (nothing "
                "else in it changes); Undo does not take it out of the file"
            )
            add.clicked.connect(lambda: self._add_and_keep_summary(result))
        box.setDefaultButton(QMessageBox.StandardButton.Close)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        # The box closed above is deleted later: it must not forget this one then.
        box.destroyed.connect(lambda: self._forget_summary(box))
        self.labeled_summary_box = box
        box.show()
        if added:
            return box  # the status bar says what was added
        lead = {
            "added": f"Read the labels of {result.round.round}",
            "updated": f"Updated {result.round.round} with the new labels",
            "unchanged": f"{result.round.round} already holds these labels",
        }[result.verb]
        self.show_status(
            f"{lead}: TP {result.labels.tp:,}, FP {result.labels.fp:,}, FN "
            f"{result.labels.fn:,}, TN {result.labels.tn:,}"
            + ("; a target margin is missed" if result.missed else "")
        )
        return box

    def add_to_rounds_workbook(self, result: LabeledRound) -> bool:
        """Add the round read from labels (and its draw's other classifiers' rounds) to the
        lead's rounds workbook, one row each, as ``labels --append-to`` does: nothing else
        in the file changes, and a workbook open elsewhere or changed since is refused."""
        return bool(self._add_labeled_round(result))

    def _add_labeled_round(self, result: LabeledRound, workbook: Path | None = None) -> str:
        """What adding ``result`` to the lead's rounds workbook (or ``workbook``) did, in
        words (``""``: it was refused or there is no workbook)."""
        others = tuple(item.classifier for item in result.other_rounds if item.classifier)
        return self._append_to_rounds_workbook(
            (result.round, *result.other_rounds),
            sources=[book.path for book in result.workbooks],
            update=result.verb == "updated",
            other_classifiers=others,
            workbook=workbook,
        )

    def _add_and_keep_summary(self, result: LabeledRound, *, choose: bool = False) -> None:
        """ "Add to …" in the labels summary: the button closes the box (a message box
        closes on any button), so it comes back, saying what was added, with its Top up
        buttons; after a refusal it comes back as it was. ``choose``: ask which workbook
        first (:meth:`add_to_chosen_rounds_workbook`)."""
        if choose:
            said = self.add_to_chosen_rounds_workbook(result)
        else:
            said = self._add_labeled_round(result)
        QTimer.singleShot(0, lambda: self.show_labeled_summary(result, added=said))

    def lead_rounds_workbook(self) -> Path | None:
        """The workbook where the lead keeps their rounds: the one the session began from,
        else the one they chose or started from a labels summary (kept with the session)."""
        # The one opened may have moved since: the one chosen then counts (review 16).
        for candidate in (self.rounds_panel.workbook, _remembered_workbook(self.session.state)):
            if candidate is not None and candidate.is_file():
                return candidate
        return None

    def add_to_chosen_rounds_workbook(self, result: LabeledRound, path: Path | None = None) -> str:
        """Add the round read from labels (one row per classifier) to a rounds workbook
        the lead chooses, or start one under a new name; the session keeps it as theirs,
        so the next summaries offer "Add to" it. Returns what was done in words (``""``:
        cancelled or refused, with the reason shown)."""
        from core.workbook.append_round import NewRound, start_rounds_workbook
        from core.workbook.safe_io import SaveError

        if path is None:
            name, _filter = QFileDialog.getSaveFileName(
                self,
                "Add the round to a rounds workbook (or a new name to start one)",
                str(self._start_folder() / "rounds.xlsx"),
                WORKBOOK_FILTER,
                "",
                QFileDialog.Option.DontConfirmOverwrite,  # an existing one is added to
            )
            if not name:
                return ""
            path = Path(name)
            if not path.suffix:
                path = path.with_name(path.name + ".xlsx")
            elif path.suffix.lower() not in (".xlsx", ".xlsm"):
                # rounds.csv became a new "rounds.csv.xlsx" (review 16).
                return self._not_written(
                    f"Not added to {path.name}",
                    InputError(
                        f"{path.name} is not an Excel workbook (.xlsx); PR Planner adds rounds "
                        "to .xlsx workbooks (a new name starts one)"
                    ),
                )
        items = (result.round, *result.other_rounds)
        if path.exists():
            said = self._add_labeled_round(result, workbook=path)
        else:
            try:
                started = self._in_background(
                    f"Writing {path.name}…",
                    lambda: start_rounds_workbook(
                        path,
                        [NewRound.of_round(item) for item in items],
                        sources=[book.path for book in result.workbooks],
                    ),
                )
            except (InputError, SaveError, OSError) as exc:
                return self._not_written(f"Could not start {path.name}", exc)
            rows = ", ".join(
                _round_label(item, several=len(items) > 1) + f" (row {outcome.row})"
                for item, outcome in zip(items, started, strict=True)
            )
            said = f"{path.name}: started with {rows}"
            self.show_status(said)
            self._remember_rounds_workbook(path)
        if said:
            self.session.set_value(
                "rounds_workbook",
                str(path.resolve()),
                text=f"Keep {formatting.short_text(path.name, 40)} as your rounds workbook",
            )
        return said

    def add_kept_round_to_rounds_workbook(self, item) -> bool:
        """Add a round kept from the Evaluate tab's counts ("Keep as a round…" with "Also
        add it to …") to the lead's rounds workbook, one row, nothing else changed."""
        return bool(self._append_to_rounds_workbook((item,)))

    def _append_to_rounds_workbook(
        self,
        items,
        *,
        sources=(),
        update: bool = False,
        other_classifiers: tuple[str, ...] = (),
        workbook: Path | None = None,
    ) -> str:
        """Append ``items`` (the first is the main round) to ``workbook`` (by default the
        lead's rounds workbook), all in one write; says what was added (and returns it in
        words), or why not (nothing in the file changes then; returns ``""``)."""
        from core.workbook.append_round import (
            AlreadyRecorded,
            AppendedRound,
            NewRound,
            NotAdded,
            append_rounds,
            not_kept_words,
        )
        from core.workbook.safe_io import SaveError

        workbook = workbook or self.lead_rounds_workbook()
        if workbook is None:
            return ""
        # The classifiers of one draw share the round's name: each is said with its own.
        several = len(items) > 1

        try:
            outcomes = append_rounds(
                workbook,
                [NewRound.of_round(item) for item in items],
                sources=sources,
                update=update,
                other_classifiers=other_classifiers,
                # A workbook in the lead's own words takes the round in the columns they
                # chose (its headers were refused; trial 14).
                columns=self.session.state.columns
                if workbook == self.rounds_panel.workbook
                else (),
            )
        except (InputError, SaveError, OSError) as exc:
            # One write for the whole draw: nothing is in the file (recheck 14 found half
            # a draw added, and a second hand edit asked for the rest).
            return self._not_written(f"Not added to {workbook.name}", exc)
        added = [
            f"{_round_label(item, several=several)} {'updated' if outcome.updated else 'added'} "
            f"(sheet {outcome.sheet!r}, row {outcome.row})"
            for item, outcome in zip(items, outcomes, strict=True)
            if not isinstance(outcome, NotAdded)
        ]
        already = [
            _round_label(item, several=several)
            for item, outcome in zip(items, outcomes, strict=True)
            if isinstance(outcome, AlreadyRecorded)
        ]
        # A further classifier with no sheet of its own: said with the way to give it one.
        left_out = [
            str(outcome)
            for outcome in outcomes
            if isinstance(outcome, NotAdded) and not isinstance(outcome, AlreadyRecorded)
        ]
        words = "; ".join(added) or "nothing to add"
        if already:
            words += f"; {', '.join(already)} already there"
        # A sheet without a round or notes column: "R07 added", then read back as
        # "Invoice mails row 10" (trial 21).
        unkept = {
            not_kept_words(outcome.sheet, outcome.not_kept)
            for outcome in outcomes
            if isinstance(outcome, AppendedRound) and outcome.not_kept
        }
        if unkept:
            words += ". " + " ".join(text[:1].upper() + text[1:] + "." for text in sorted(unkept))
        if left_out:
            words += ". " + " ".join(
                text[:1].upper() + text[1:].rstrip(".") + "." for text in left_out
            )
        said = f"{workbook.name}: {words}"
        self.show_status(said)
        if added or already:
            self._remember_rounds_workbook(workbook)
        return said if added or already or left_out else ""

    def _remember_rounds_workbook(self, path: Path) -> None:
        """A rounds workbook the lead wrote a round to is their work, as a file they opened
        is: unless a saved session is open, Open Recent lists it and the next start reopens
        it (unless they open or save another file after); it opens with the session's
        targets (trial 18: after
        Discard on an Untitled session, the next start showed the example, the workbook
        and the targets forgotten)."""
        name = str(path.resolve())
        if not self._path_is_session:
            # A saved session stays the next start's file: it holds the round too, once
            # saved (review 18).
            self._remember_recent(path, self._recent_columns().get(name, ()))
        self._keep_targets_for(path)

    def _not_written(self, title: str, exc: BaseException) -> str:
        """Say why a rounds workbook was not written (status bar and a warning); ``""``."""
        logger.info("%s: %s", title, exc)
        text = formatting.short_text(str(exc), 600)
        self.show_status(f"{title}: {text}")
        QMessageBox.warning(self, title, text)
        return ""

    def _is_example_document(self) -> bool:
        """The window still shows the bundled example session (never saved)."""
        return self._path is None and self._document_title == EXAMPLE_TITLE

    def inputs_kept_for_a_workbook(self, path: Path | None = None) -> SessionState:
        """The inputs a rounds workbook opens with: the lead's own (targets, prior,
        Evaluate settings, the Prevalence tab's reference, the ensemble), which the workbook
        does not hold; only the confidence level of the example session, whose other
        inputs (and classifiers) are not the lead's, with the targets the lead last left
        ``path`` with (:data:`WORKBOOK_TARGETS`), as after a restart."""
        if self._is_example_document():
            remembered = self._remembered_targets(self._fresh_state(), path)
            return _sliders_at_recommended(remembered)  # for these targets
        return self.session.state

    def remember_workbook_targets(self) -> None:
        """Keep the open rounds workbook's targets (:data:`WORKBOOK_TARGETS`) for the next
        time it opens from a fresh start (a saved session keeps its own)."""
        if self._path is None or self._path_is_session or self._is_example_document():
            return
        self._keep_targets_for(self._path)

    def _keep_targets_for(self, workbook: Path) -> None:
        """Keep the session's :data:`WORKBOOK_TARGETS` as ``workbook``'s (settings)."""
        from core.session import get_path

        values = {key: get_path(self.session.state, key) for key in WORKBOOK_TARGETS}
        self._keep_first("workbook_targets", str(_resolved(workbook)), values)

    def _remembered_targets(self, state: SessionState, path: Path | None) -> SessionState:
        if path is None:
            return state
        from core.session import unflatten

        stored = self._json_setting("workbook_targets").get(str(_resolved(Path(path))))
        if not isinstance(stored, dict):
            return state
        rows = [(key, stored[key]) for key in WORKBOOK_TARGETS if key in stored]
        # A hand-edited settings file: what cannot be read keeps the default.
        remembered, _problems = unflatten(rows, base=state)
        return remembered

    def examples_taken_out(self) -> None:
        """The example's rounds left the session for the lead's first round of their own:
        an example document is the lead's own (Untitled) from then on."""
        if self._is_example_document():
            self._document_title = "Untitled"
            self._update_title()
        self.rounds_panel.set_source("My rounds", [])

    def _forget_summary(self, box: QMessageBox) -> None:
        if self.labeled_summary_box is box:
            self.labeled_summary_box = None

    def top_up(self, result: LabeledRound, *, surer: bool = False) -> ItemSampleDialog | None:
        """Open the top-up dialog for a read round, with the totals its plan asks for (with
        ``surer``, those for the surer chance the summary offers)."""
        sizes = result.top_up_for_all
        if surer and result.surer is not None:
            sizes = result.surer.top_up
        if sizes is None:
            return None
        from core.workbook.labeling import largest_draw

        # The workbook of the largest draw lists the whole sample so far.
        latest = largest_draw(result.workbooks)
        name = latest.design.file_name
        item_list = None
        # The list the round was drawn from: the one chosen in this session, else beside
        # the workbook or in the folder last used (a session reopened later has no list).
        for candidate in (
            self._item_list,
            *(Path(kept) for kept in self.recent_item_lists()),
            latest.path.parent / name,
            self._start_folder() / name,
        ):
            if candidate is not None and candidate.name == name and _is_file(candidate):
                item_list = candidate
                break
        n_pos, n_neg = sizes
        drawn = latest.design.primary
        from desktop.labeling_round import chance_words

        asked = "the totals a plan from this round asks for"
        chosen = result.surer if surer else None
        if chosen is not None and chosen.chance is not None:
            asked = (
                f"the totals for {chance_words(chosen.chance.both, article=True)} chance of "
                "meeting both "
                "targets, given the labels so far"
            )
        elif sizes != result.top_up:
            asked = "the totals that meet the targets for every classifier of the draw"
        elif result.chance is not None:
            asked += (
                f" ({chance_words(result.chance.both)} chance of meeting both targets, given "
                "the labels so far)"
            )
        made_up = ", making up for the skipped items" if result.labels.skipped else ""
        source = (
            f"{asked}{made_up}; {drawn.n_pos:,} flagged and {drawn.n_neg:,} unflagged are "
            "drawn already, so only the items beyond them are new"
        )
        return self.open_item_sample(
            n_pos, n_neg, earlier=latest, item_list=item_list, sizes_from=source
        )

    def show_tab(self, key: str) -> None:
        """Bring the tab ``key`` (``"evaluate"``, ``"plan"``, ...) to the front."""
        if key in self.tab_keys:
            self.build_deferred_tabs()
            self.tabs.setCurrentIndex(self.tab_keys.index(key))

    # --- edit ---------------------------------------------------------------------------

    def _focused_grid(self) -> ConfusionGridView | None:
        widget = QApplication.focusWidget()
        while widget is not None:
            if isinstance(widget, ConfusionGridView):
                return widget
            widget = widget.parentWidget()
        return None

    def copy(self) -> None:
        """Edit > Copy on the focused grid (tab-separated), field or rounds table."""
        grid = self._focused_grid()
        widget = QApplication.focusWidget()
        if grid is not None:
            grid.copy_selection()
        elif isinstance(widget, QLineEdit):
            widget.copy()
        elif isinstance(widget, QAbstractSpinBox):
            widget.lineEdit().copy() if hasattr(widget, "lineEdit") else None
        elif widget is self.rounds_panel.table:
            QGuiApplication.clipboard().setText(self.rounds_panel.copy_text())
        else:
            self.show_status("Copy: click a grid, a field or the rounds table first")

    def paste(self) -> None:
        """Edit > Paste into the focused grid (a block from Excel) or field."""
        grid = self._focused_grid()
        widget = QApplication.focusWidget()
        if grid is not None:
            grid.paste_clipboard()
        elif isinstance(widget, QLineEdit):
            widget.paste()
        elif isinstance(widget, QAbstractItemView) and self._paste_into_table(widget):
            return
        else:
            self.show_status("Paste: click a confusion-matrix grid or a field first")

    def _paste_into_table(self, view: QAbstractItemView) -> bool:
        """Paste a tab-separated block into an editable table (the Ensemble tab's sets)
        from its current cell, as one undo step; False when the table takes no edits there
        (fuzz 17: Ctrl+V on a selected cell said to click a grid first)."""
        model, current = view.model(), view.currentIndex()
        if model is None or not current.isValid():
            return False
        if not model.flags(current) & Qt.ItemFlag.ItemIsEditable:
            return False
        text = QApplication.clipboard().text().replace("\r\n", "\n").rstrip("\n")
        rows = [line.split("\t") for line in text.split("\n")] if text else []
        pasted = left_out = refused = 0
        self.session.undo_stack.beginMacro("Paste")
        try:
            for r, values in enumerate(rows):
                for c, value in enumerate(values):
                    index = model.index(current.row() + r, current.column() + c)
                    if not index.isValid() or not model.flags(index) & Qt.ItemFlag.ItemIsEditable:
                        left_out += 1
                    elif model.setData(index, value.strip(), Qt.ItemDataRole.EditRole):
                        pasted += 1
                    else:
                        refused += 1
        finally:
            self.session.undo_stack.endMacro()
        said = f"Pasted {pasted} of {pasted + left_out + refused} values"
        if refused:
            said += f"; {refused} refused (the cells marked say why)"
        if left_out:
            said += f"; {left_out} fell outside the table's editable cells and were left out"
        self.show_status(said)
        return True

    # --- help ---------------------------------------------------------------------------

    def current_tab_key(self) -> str:
        return self.tab_keys[self.tabs.currentIndex()]

    def show_formula_reference(self) -> FormulaReference:
        if self._reference is None:
            from desktop.help import FormulaReference

            self._reference = FormulaReference(self.current_tab_key(), self)
        else:
            self._reference.show_topic(self.current_tab_key())
        self._reference.show()
        if QGuiApplication.platformName() != "offscreen":  # offscreen warns on raise()
            self._reference.raise_()
        return self._reference

    def show_about(self) -> None:
        from desktop.help import show_about

        show_about(self)

    def show_guide(self) -> None:
        from desktop.help import show_guide

        show_guide(self, self.show_formula_reference)

    def show_tab_guide(self) -> None:
        """The guide at its page about the tab in view."""
        from desktop.help import GUIDE_OF_TAB, show_guide

        page = GUIDE_OF_TAB.get(self.current_tab_key(), "start")
        show_guide(self, self.show_formula_reference, page)

    def _on_tab_changed(self, index: int) -> None:
        self.build_deferred_tabs()  # a click on a tab before they were built
        # A tab's message belongs to it (each tab also shows its own warnings in place): an
        # Ensemble refusal must not linger over History. What the window said (a workbook
        # opened, a round kept) stays until the next message.
        if self._status_owner is not None:
            self._clear_status()
        if self._reference is not None and self._reference.isVisible():
            self._reference.show_topic(self.tab_keys[index])

    # --- status -------------------------------------------------------------------------

    def _say_done(self, verb: str, text: str) -> None:
        """After Edit > Undo or Redo: say what, over a message about the edit itself."""
        if text and self._status_owner is None and self.statusBar().currentMessage():
            self.show_status(f"{verb}: {text}")

    def show_status(self, message: str) -> None:
        """Show a warning or refusal until the next message (no timer, nothing to outlive)."""
        self._show_owned(message, None)

    def connect_grids(self) -> None:
        """Route every grid's refusals to the status bar (grids of tabs added later too)."""
        for model in self.findChildren(ConfusionGridModel):
            if id(model) not in self._connected_grids:
                self._connected_grids.add(id(model))
                model.refused.connect(self._show_refusal)

    def _on_session_changed(self, changed: str) -> None:
        if self._status_is_refusal:
            self._clear_status()  # an edit was taken: the earlier refusal is history
        if self.recovery is not None:
            self.recovery_timer.start()  # restarted: written after a few quiet seconds
        if affects(changed, "confidence"):
            self.settings.setValue("session/confidence", float(self.session.get("confidence")))

    # --- settings -----------------------------------------------------------------------

    def _saved_confidence(self) -> float:
        stored = self.settings.value("session/confidence", 0.95)
        if not isinstance(stored, str | int | float):
            return 0.95
        try:
            value = float(stored)
        except ValueError:
            return 0.95
        return value if 0.5 < value < 1 else 0.95

    def recent_files(self) -> list[str]:
        return self._recent_list("recent_files")

    def _recent_list(self, key: str) -> list[str]:
        """A list of file names kept in the settings under ``key``, newest first."""
        value = self.settings.value(key, [])
        if isinstance(value, str):  # QSettings returns a one-element list as a string
            value = [value]
        if not isinstance(value, list | tuple):  # None (an invalid entry): no recent files
            return []
        # The app keeps MAX_RECENT_FILES; a longer list is a hand-edited settings file.
        return [str(item) for item in value[:MAX_RECENT_FILES]]

    def _remember_recent(self, path: Path, columns: Sequence[str] = ()) -> None:
        """Put ``path`` first among the recent files, with the column choices it was
        opened with (a rounds workbook under the lead's own headers reopens with them)."""
        name = str(Path(path).resolve())
        files = [name] + [item for item in self.recent_files() if item != name]
        self.settings.setValue("recent_files", files[:MAX_RECENT_FILES])
        # Kept for more workbooks than the menu lists: a workbook opened every month fell
        # out of the eight recent files, and File > Open asked for every column again
        # (recheck 15).
        others = [
            (item, list(value)) for item, value in self._recent_columns().items() if item != name
        ]
        choices = dict(([(name, [str(choice) for choice in columns])] if columns else []) + others)
        kept = dict(list(choices.items())[:MAX_REMEMBERED_COLUMN_CHOICES])
        self.settings.setValue("recent_columns", json.dumps(kept))

    def _keep_first(self, key: str, name: str, value: object) -> None:
        """Keep ``value`` under ``name``, first, in the JSON object of setting ``key``
        (the most recent :data:`MAX_REMEMBERED_COLUMN_CHOICES` names)."""
        others = [(item, kept) for item, kept in self._json_setting(key).items() if item != name]
        remembered = dict([(name, value), *others][:MAX_REMEMBERED_COLUMN_CHOICES])
        self.settings.setValue(key, json.dumps(remembered))

    def _json_setting(self, key: str) -> dict:
        """The JSON object kept under ``key`` in the settings (``{}`` when none, or when
        the settings file was edited into something else)."""
        text = str(self.settings.value(key, "{}") or "{}")
        if len(text) > MAX_RECENT_COLUMNS_TEXT:  # not the app's: a hand-edited settings file
            return {}
        try:
            stored = json.loads(text)
        except (ValueError, RecursionError):  # not JSON, or nested beyond reason
            return {}
        return stored if isinstance(stored, dict) else {}

    def _recent_columns(self) -> dict[str, list[str]]:
        """The column choices recent files were opened with (``{}`` when none or unreadable)."""
        stored = self._json_setting("recent_columns")
        return {
            str(key): [str(item) for item in value if isinstance(item, str)]
            for key, value in stored.items()
            if isinstance(value, list)
        }

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        for name in files:
            action = self.recent_menu.addAction(Path(name).name)
            action.setToolTip(name)
            action.setStatusTip(name)
            action.triggered.connect(lambda _checked=False, n=name: self.open_recent(n))
        if not files:
            self.recent_menu.addAction("No recent files").setEnabled(False)
        else:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear list").triggered.connect(self.clear_recent)

    def open_recent(self, name: str) -> bool:
        """File > Open Recent: the file with the column choices it was last opened with
        (:meth:`open_workbook` finds them; without them a workbook in the lead's own words
        offered the choice again, and reading fewer rounds erased it; review 14)."""
        return self.open_workbook(name)

    def clear_recent(self) -> None:
        """Open Recent > Clear list: the files and the column choices kept for them."""
        self.settings.setValue("recent_files", [])
        self.settings.remove("recent_columns")

    def _fit_to_screen(self) -> None:
        """First size: 1500 x 950, or the screen's free area (a 1366 x 768 laptop)."""
        screen = self.screen()
        available = screen.availableGeometry() if screen is not None else QRect()
        if QGuiApplication.platformName() == "offscreen":
            available = QRect()  # no real screen (tests, scripts): the preferred size
        size, dock_height = fitted_window_size(available.size())
        self.resize(size)
        self.resizeDocks([self.rounds_dock], [dock_height], Qt.Orientation.Vertical)

    def _restore_window(self) -> None:
        # Only what saveGeometry/saveState wrote: an edited or synced settings file may
        # hold text there ("geometry=" is enough), and Qt raises on it (fuzz 14).
        geometry = self.settings.value("window/geometry")
        if isinstance(geometry, QByteArray | bytes) and self.restoreGeometry(geometry):
            self._keep_inside_screen()  # remembered on a bigger screen, perhaps
        state = self.settings.value("window/state")
        if isinstance(state, QByteArray | bytes):
            self.restoreState(state)

    def _keep_inside_screen(self) -> None:
        """Shrink and move a window remembered from a larger screen into this one."""
        screen = self.screen()
        if screen is None or self.isMaximized() or self.isFullScreen():
            return
        available = screen.availableGeometry()
        if available.isEmpty():
            return
        size, _dock = fitted_window_size(available.size(), preferred=self.size())
        if size != self.size():
            self.resize(size)
        frame = self.frameGeometry()
        if not available.contains(frame):
            x = min(max(frame.x(), available.x()), available.right() + 1 - frame.width())
            y = min(max(frame.y(), available.y()), available.bottom() + 1 - frame.height())
            self.move(max(x, available.x()), max(y, available.y()))

    def save_window_settings(self) -> None:
        self.remember_workbook_targets()
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.setValue("session/confidence", float(self.session.get("confidence")))
        self.settings.sync()

    def shutdown(self) -> None:
        """Cancel every tab's background work (closing, or a test tearing down)."""
        self.recovery_timer.stop()
        for index in range(self.tabs.count()):
            tab = self.tabs.widget(index)
            if isinstance(tab, SessionTab):  # not a stand-in of a tab never built
                tab.shutdown()

    def closeEvent(self, event) -> None:
        if self._busy:  # a workbook is being read or written: close once it is done
            self.show_status("Wait until the workbook being read or saved is done")
            event.ignore()
            return
        # An exception escaping here would kill the app with the user's changes in it.
        try:
            keep_open = not self.maybe_keep_changes()
        except Exception:
            logger.exception("asking about unsaved changes failed")
            keep_open = True
        if keep_open:
            event.ignore()
            return
        self.save_window_settings()
        self.shutdown()
        if self.recovery is not None:  # a clean close: saved or discarded on purpose
            self._remove_own_recovery_file()
            self.recovery.close()
        # Cancelled workers stop at their next progress step; wait so none outlives the
        # objects its signals go to.
        QThreadPool.globalInstance().waitForDone(10_000)
        if self._reference is not None:
            self._reference.close()
        event.accept()


def _resolved(path: Path) -> Path:
    """``path`` with its links followed, or as given when they cannot be (a link loop
    raised from File > Open; fuzz 15): the reader then says why it cannot open it."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


def _is_file(path: Path) -> bool:
    """``path.is_file()``, False where even asking fails (a name too long)."""
    try:
        return path.is_file()
    except OSError:
        return False


def _is_folder(path: Path) -> bool:
    """``path.is_dir()``, False where even asking fails (a remembered folder whose name
    is too long for this system; fuzz 14)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def _read_workbook(path: Path, base: SessionState, columns: Sequence[str] = ()):
    """``(OpenedSession, fingerprint before reading, is ours, is an exported report)``
    (runs on the thread pool);
    a rounds workbook opens over the inputs ``base``.

    The fingerprint is taken first, so a file changed while it was read is seen as
    changed when the session is saved.
    """
    from core.workbook.session_io import read_session

    seen = fingerprint(path)
    opened = read_session(path, base=base, columns=tuple(columns))
    return opened, seen, is_ours(path), is_exported_report(path)


def _round_label(item, *, several: bool) -> str:
    """A round as a message names it: the classifiers of one draw share the round's name,
    so each is said with its own."""
    return f"{item.name} ({item.classifier})" if several and item.classifier else item.name


#: Larger rounds workbooks are not read again when a session opens (the GUI would wait).
_RECHECKED_WORKBOOK_BYTES = 5_000_000


def _rounds_the_session_lacks(state: SessionState) -> str:
    """``"; my_rounds.xlsx has 2 rounds this session does not ..."``: rounds added to the
    lead's rounds workbook since the session was saved (by ``labels --append-to``, or by
    another window), or ``""``. A session reopened after a command-line week planned from
    and compared with the week before, with no word (trial 17)."""
    from core.workbook.rounds import classifier_key, read_rounds

    workbook = _remembered_workbook(state)
    try:
        if workbook is None or workbook.stat().st_size > _RECHECKED_WORKBOOK_BYTES:
            return ""
        book = read_rounds(workbook, columns=state.columns)
    except Exception:  # unreadable now: opening it says why
        return ""

    def key(item) -> tuple:
        return classifier_key(item.classifier), item.name.casefold(), item.matrix.as_tuple()

    known = {key(item) for item in state.rounds}
    missing = [item for item in book.rounds if key(item) not in known]
    if not missing:
        return ""
    shown = ", ".join(
        formatting.short_text(
            f"{item.name} ({item.classifier})" if item.classifier else item.name, 40
        )
        for item in missing[:3]
    ) + (", ..." if len(missing) > 3 else "")
    return (
        f"; your rounds workbook {workbook.name} has {len(missing)} round"
        f"{'s' if len(missing) != 1 else ''} this session does not ({shown}): open it "
        "(File > Open) to plan from them"
    )


def _remembered_workbook(state: SessionState) -> Path | None:
    """The lead's rounds workbook a saved session began from, if it is still there."""
    if not state.rounds_workbook:
        return None
    path = Path(state.rounds_workbook)
    return path if path.is_file() else None


def _damaged_labeling_workbook(path: Path, guesses: Sequence[SheetColumns]) -> str | None:
    """Why ``path`` cannot be read as labels when a sheet of it is headed like a labels
    sheet (``Item id`` and ``Label``), or ``None`` when none is."""
    from core.workbook.labeling import ID_HEADER, LABEL_HEADER, read_labeling_workbook

    wanted = {ID_HEADER.casefold(), LABEL_HEADER.casefold()}
    if not any(wanted <= {text.casefold() for _, text in guess.headers} for guess in guesses):
        return None
    try:
        read_labeling_workbook(path)
    except (InputError, OSError) as exc:
        return f"{exc}. The open session was kept."
    return None


def _no_rounds_in_own_words(path: Path, skipped: Sequence, chosen: bool) -> str:
    """Why ``path`` opened no rounds when a sheet has a header row in the lead's own words
    (``skipped``: its :class:`~core.workbook.rounds.SkippedSheet` items); ``chosen`` when
    the lead's column choice was used."""
    lines = [
        f"{path.name} holds no rounds PR Planner can use with "
        + ("the columns chosen." if chosen else "the headers it knows (TP, FP, FN, TN, ...).")
    ]
    from core.workbook.rounds import counts_in_words

    for item in skipped[:4]:
        guess = item.header_guess
        if guess is None or chosen or not item.reason.startswith("no header row with"):
            # A reason of its own (no population columns, a column named twice): said.
            lines.append(f"Sheet {item.sheet!r}: {item.reason}.")
        else:
            headers = ", ".join(text for _, text in guess.headers[:10])
            lines.append(
                f"Sheet {item.sheet!r}, row {guess.header_row}: {headers}{counts_in_words(guess)}."
            )
    lines.append(
        "If a sheet holds your rounds under headers of your own, choose which columns hold "
        "the four counts and the population (or k). The open session is kept until then."
    )
    return "\n\n".join(lines)


def _unreadable(path: Path, exc: BaseException) -> str:
    cause = formatting.short_text(str(exc) or type(exc).__name__, 300)
    return f"{path.name} could not be read ({type(exc).__name__}: {cause}); nothing was changed"


def _unused_or_ours(folder: Path, stem: str) -> Path:
    """``folder/stem.xlsx`` when it is free or a file PR Planner wrote, else a free name
    (:func:`free_name` shortens a stem too long for a file name: ``<250 letters> session``
    raised from Save before any dialog; fuzz 17)."""
    named = folder / f"{stem}.xlsx"
    if is_ours(named):  # False for a name too long to exist
        return named
    return free_name(folder, stem, ".xlsx")


def _reading_order(point: QPoint) -> tuple[int, int]:
    """Sort key: rows of plots top to bottom (40 px bands), then left to right."""
    return point.y() // 40, point.x()


def _book_problems(book) -> list[str]:
    """Readable lines for the refused rows and skipped sheets of a :class:`RoundsBook`."""
    lines = [f"{item.sheet}, row {item.row}: {item.reason}" for item in book.refused]
    lines += [f"{item.sheet} (sheet skipped): {item.reason}" for item in book.skipped_sheets]
    return lines


def _sliders_at_recommended(state: SessionState) -> SessionState:
    """``state`` with the Plan tab's sliders on its recommended plan (Use it)."""
    from core.plan_request import with_sliders_on_recommended
    from desktop.plan_tab import S_RANGE, V_RANGE

    return with_sliders_on_recommended(state, S_RANGE, V_RANGE)
