"""Help menu: the formula reference of the current tab, and About.

The reference text is restated from the specification into ``resources/help/*.md``
(bundled with the app: the specification folder is not there at run time) and shown as
rendered Markdown in a non-modal window that follows the tab the user is on.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from desktop import resources

#: Tab key -> (tab title, help file).
TOPICS = {
    "plan": ("Plan", "help/plan.md"),
    "evaluate": ("Evaluate", "help/evaluate.md"),
    "prevalence": ("Prevalence", "help/prevalence.md"),
    "ensemble": ("Ensemble", "help/ensemble.md"),
    "history": ("History", "help/history.md"),
}


def reference_text(topic: str) -> str:
    """Markdown formula reference of ``topic`` (a key of :data:`TOPICS`)."""
    if topic not in TOPICS:
        raise KeyError(f"no formula reference for {topic!r}")
    return resources.read_text(TOPICS[topic][1])


class FormulaReference(QDialog):
    """Non-modal window with the formulas behind one tab; a box switches to another."""

    def __init__(self, topic: str = "plan", parent: QWidget | None = None):
        super().__init__(parent)
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
