"""Help menu: the task guide, the formula reference of the current tab, and About.

* The **guide** (``resources/help/guide/*.md``) is written for a lead, not a statistician:
  one page per task (plan a round, evaluate it, compare, ...) with the clicks and what
  each number on the screen means. :class:`GuideWindow` shows it.
* The **formula reference** (``resources/help/*.md``) gives the formulas behind each tab
  in the notation of the methods document (``docs/methods.md``). :class:`FormulaReference`
  shows it; the guide opens it with one click.

Both are non-modal windows that close with Escape. The texts are bundled with the app
(package data, read through :mod:`desktop.resources`) and rendered as Markdown.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

# mypy finds modules by folder and cannot follow pyproject's package-dir mapping of
# resources/ to desktop.resources, so it sees no such module.
from desktop import resources  # type: ignore[attr-defined]

#: Tab key -> (tab title, formula reference file).
TOPICS = {
    "plan": ("Plan", "help/plan.md"),
    "evaluate": ("Evaluate", "help/evaluate.md"),
    "prevalence": ("Prevalence", "help/prevalence.md"),
    "ensemble": ("Ensemble", "help/ensemble.md"),
    "history": ("History", "help/history.md"),
}

#: Guide page key -> title, in reading order. The file is ``help/guide/<key>.md``.
GUIDE_PAGES = {
    "start": "Start here",
    "plan": "Plan a round",
    "item_loop": "Draw, label, read back, top up",
    "evaluate": "Evaluate a labeled round",
    "compare": "Compare with last time (History)",
    "prevalence": "Precision at another prevalence",
    "classifiers": "Several classifiers (Ensemble)",
    "report": "Report to a manager",
    "words": "Words and numbers",
}

#: The guide page about each tab (F1 opens it).
GUIDE_OF_TAB = {
    "plan": "plan",
    "evaluate": "evaluate",
    "prevalence": "prevalence",
    "ensemble": "classifiers",
    "history": "compare",
}

#: Link scheme inside guide pages that opens the formula reference of a tab
#: (``[formulas](reference:evaluate)``).
REFERENCE_SCHEME = "reference"


def reference_text(topic: str) -> str:
    """Markdown formula reference of ``topic`` (a key of :data:`TOPICS`)."""
    if topic not in TOPICS:
        raise KeyError(f"no formula reference for {topic!r}")
    return resources.read_text(TOPICS[topic][1])


def guide_file(page: str) -> str:
    """Bundled resource name of guide ``page`` (a key of :data:`GUIDE_PAGES`)."""
    if page not in GUIDE_PAGES:
        raise KeyError(f"no guide page {page!r}")
    return f"help/guide/{page}.md"


def guide_text(page: str) -> str:
    """Markdown text of guide ``page`` (a key of :data:`GUIDE_PAGES`)."""
    return resources.read_text(guide_file(page))


class _HelpWindow(QDialog):
    """A non-modal help window that takes the keyboard when shown and closes on Escape.

    QDialog rejects on Escape only when the key reaches it: a window opened from a menu
    without being activated leaves the keyboard with the main window, and a child that
    accepts the key (an open combo box) keeps it. Activating on show and a shortcut on
    the whole window make Escape work wherever the focus is inside it.
    """

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        shortcut = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shortcut.activated.connect(self.close)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if QGuiApplication.platformName() != "offscreen":  # offscreen warns on activation
            self.activateWindow()

    def bring_to_front(self) -> None:
        """Show the window above the others with the keyboard focus."""
        self.show()
        if QGuiApplication.platformName() != "offscreen":  # offscreen warns on raise()
            self.raise_()
            self.activateWindow()


class FormulaReference(_HelpWindow):
    """Non-modal window with the formulas behind one tab; a box switches to another."""

    def __init__(self, topic: str = "plan", parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("formula_reference")
        self.setWindowTitle("Formula reference")
        self.resize(760, 720)
        self.topic_box = QComboBox(self)
        for key, (title, _file) in TOPICS.items():
            self.topic_box.addItem(title, key)
        self.topic_box.setToolTip("Which tab's formulas to show.")
        self.browser = QTextBrowser(self)
        self.browser.setOpenExternalLinks(True)
        top = QHBoxLayout()
        top.addWidget(QLabel("Formulas for the tab", self))
        top.addWidget(self.topic_box)
        top.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.browser, 1)
        self.topic_box.currentIndexChanged.connect(
            lambda index: self._show(self.topic_box.itemData(index))
        )
        self.show_topic(topic)

    @property
    def topic(self) -> str:
        return self.topic_box.currentData()

    def show_topic(self, topic: str) -> None:
        """Switch to ``topic`` (the window's tab changed or Help was asked again)."""
        index = self.topic_box.findData(topic)
        if index < 0:
            index = 0
        if index == self.topic_box.currentIndex():
            self._show(self.topic_box.itemData(index))
        else:
            self.topic_box.setCurrentIndex(index)

    def _show(self, topic: str) -> None:
        self.browser.setMarkdown(reference_text(topic))


class GuideWindow(_HelpWindow):
    """Non-modal task guide: a list of pages on the left, the page on the right.

    Parameters
    ----------
    open_reference : callable, optional
        Opens (or brings to the front) the formula reference of the current tab and
        returns it. The main window passes its own, so the reference follows the tab the
        user is on; without one the guide opens a reference window of its own.
    parent : QWidget, optional
    """

    def __init__(
        self,
        open_reference: Callable[[], FormulaReference] | None = None,
        parent: QWidget | None = None,
    ):
        super().__init__(parent)
        self.setObjectName("guide_window")
        self.setWindowTitle("PR Planner guide")
        self.resize(980, 760)
        self._open_reference = open_reference
        self._own_reference: FormulaReference | None = None

        self.pages = QListWidget(self)
        self.pages.setObjectName("guide_pages")
        self.pages.setToolTip("Tasks: pick one to see the clicks and what the numbers mean.")
        self.pages.setSpacing(3)
        for key, title in GUIDE_PAGES.items():
            item = QListWidgetItem(title, self.pages)
            item.setData(Qt.ItemDataRole.UserRole, key)
        self.browser = QTextBrowser(self)
        self.browser.setObjectName("guide_text")
        # Links are handled here: another guide page, the formula reference, or the web.
        self.browser.setOpenLinks(False)
        self.browser.anchorClicked.connect(self._follow_link)

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(self.pages)
        splitter.addWidget(self.browser)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([240, 740])

        self.reference_button = QPushButton("Formula reference", self)
        self.reference_button.setToolTip(
            "The formulas behind the current tab, with the papers' equation numbers."
        )
        self.reference_button.clicked.connect(lambda: self.show_reference(None))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.close)
        bottom = QHBoxLayout()
        bottom.addWidget(self.reference_button)
        bottom.addStretch(1)
        bottom.addWidget(buttons)

        layout = QVBoxLayout(self)
        layout.addWidget(splitter, 1)
        layout.addLayout(bottom)
        self.pages.currentRowChanged.connect(self._show_row)
        self.show_page("start")

    @property
    def page(self) -> str:
        item = self.pages.currentItem()
        return item.data(Qt.ItemDataRole.UserRole)

    def show_page(self, page: str) -> None:
        """Switch to guide ``page`` (a key of :data:`GUIDE_PAGES`)."""
        if page not in GUIDE_PAGES:
            raise KeyError(f"no guide page {page!r}")
        row = list(GUIDE_PAGES).index(page)
        if row == self.pages.currentRow():
            self._show_row(row)
        else:
            self.pages.setCurrentRow(row)

    def show_reference(self, topic: str | None = None) -> FormulaReference:
        """Open the formula reference of ``topic``, or of the current tab when ``None``."""
        if self._open_reference is not None:
            reference = self._open_reference()
        else:
            if self._own_reference is None:
                self._own_reference = FormulaReference(topic or "plan", self)
            reference = self._own_reference
            reference.bring_to_front()
        if topic is not None:
            reference.show_topic(topic)
        return reference

    def _show_row(self, row: int) -> None:
        if row < 0:
            return
        key = self.pages.item(row).data(Qt.ItemDataRole.UserRole)
        self.browser.setMarkdown(guide_text(key))

    def _follow_link(self, url: QUrl) -> None:
        if url.scheme() == REFERENCE_SCHEME:
            topic = url.path() or None
            self.show_reference(topic if topic in TOPICS else None)
            return
        if url.scheme() in ("http", "https", "mailto"):
            QDesktopServices.openUrl(url)
            return
        name = url.path().rsplit("/", 1)[-1].removesuffix(".md")
        if name in GUIDE_PAGES:
            self.show_page(name)


def show_guide(
    parent: QWidget | None = None,
    open_reference: Callable[[], FormulaReference] | None = None,
    page: str | None = None,
) -> GuideWindow:
    """Open the guide (one window per ``parent``: asked again, it comes to the front),
    at ``page`` when given.

    ``open_reference`` is passed to :class:`GuideWindow` the first time.
    """
    guide = parent.findChild(GuideWindow, "guide_window") if parent is not None else None
    if guide is None:
        guide = GuideWindow(open_reference, parent)
    if page is not None:
        guide.show_page(page)
    guide.bring_to_front()
    return guide


def about_text() -> str:
    from importlib import metadata

    try:
        version = metadata.version("prplanner")
    except metadata.PackageNotFoundError:
        version = "development copy"
    return (
        f"<h3>PR Planner {version}</h3>"
        "<p>Plan and evaluate human-labeling rounds for imbalanced binary classifiers: "
        "how many items to label from each stratum, the optimal over-sampling ratio, and "
        "precision/recall with honest intervals.</p>"
        "<p>Methods: H. Shang, J.-M. Langlois, K. Tsioutsiouliklis, C. Kang, "
        "<i>Precision/Recall on Imbalanced Test Data</i>, AISTATS 2023; C. K. I. Williams "
        "(2021); W. Siblini et al. (IDA 2020); J. Brabec et al. (ICCS 2020); "
        "R. Tripathi et al. (ECML-PKDD 2020).</p>"
        "<p>Built with NumPy, SciPy, openpyxl, PySide6 (Qt) and pyqtgraph.</p>"
    )


def show_about(parent: QWidget | None) -> None:
    QMessageBox.about(parent, "About PR Planner", about_text())
