"""Help: the task guide and the formula reference (pages, links, worked numbers, screen
words, windows).

The pages are read through :mod:`desktop.resources`, the way the installed app reads its
package data. The numbers the guide quotes as worked examples (the bundled example
session) are checked against independent computations: statsmodels for the Wilson and
Newcombe intervals, scipy for the chance of decline, the closed forms worked out here for
recall, FPR and the margins. The labels and numbers the guide quotes are checked against
the window itself, and the labels the screens no longer show may not be quoted.
"""

from __future__ import annotations

import html
import math
import re
from importlib import resources as importlib_resources
from pathlib import Path

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QModelIndex, Qt, QThreadPool, QUrl
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QGroupBox,
    QLabel,
    QMessageBox,
)
from scipy import integrate, stats
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from desktop import help as help_module
from desktop import main_window as main_window_module
from desktop.help import (
    GUIDE_PAGES,
    TOPICS,
    FormulaReference,
    GuideWindow,
    guide_text,
    reference_text,
    show_guide,
)
from desktop.main_window import MainWindow, app_settings
from tests.core.mover_reference import mover_wilson_fpr

#: Pages that walk through a screen full of numbers and must explain them.
PAGES_WITH_NUMBERS = ("plan", "evaluate", "compare", "prevalence", "classifiers")

#: The example session's labeled round (Evaluate tab) and its population.
EXAMPLE_COUNTS = {"tp": 225, "fp": 31, "fn": 14, "tn": 730}
EXAMPLE_POPULATION = (41_200, 1_251_000)
#: The example's previous round (TR-06), the one the Compare box is against and the Plan
#: page plans from (with its own population).
PREVIOUS_COUNTS = {"tp": 259, "fp": 41, "fn": 88, "tn": 4_222}
PREVIOUS_POPULATION = (47_300, 1_249_000)
Z95 = 1.959964

LINK = re.compile(r"\]\(([^)\s]+)\)")
NUMBER = r"([+\-−]?\d[\d,]*(?:\.\d+)?)"


def number(text: str) -> float:
    return float(text.replace(",", "").replace("−", "-"))


def quoted(page: str, pattern: str) -> tuple[float, ...]:
    """The numbers captured by ``pattern`` (``{n}`` marks a number) on guide ``page``."""
    regex = re.escape(pattern).replace(re.escape("{n}"), NUMBER)
    found = re.search(regex, guide_text(page))
    assert found, f"guide page {page!r} no longer says {pattern!r}"
    return tuple(number(group) for group in found.groups())


# --- pages ---------------------------------------------------------------------------------


def test_every_guide_page_is_bundled_listed_and_titled():
    folder = importlib_resources.files("desktop.resources").joinpath("help", "guide")
    bundled = sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".md"))
    assert bundled == sorted(f"{key}.md" for key in GUIDE_PAGES), "page not listed or missing"
    for key, title in GUIDE_PAGES.items():
        text = guide_text(key)
        assert text.splitlines()[0] == f"# {title}", key
        assert len(text) > 800, key


def test_every_formula_reference_page_loads():
    for topic in TOPICS:
        text = reference_text(topic)
        assert text.startswith("# ") and "formula reference" in text.splitlines()[0], topic
        assert len(text) > 500, topic
    with pytest.raises(KeyError):
        reference_text("nowhere")
    with pytest.raises(KeyError):
        guide_text("nowhere")


def test_help_texts_name_no_internal_documents():
    texts = [guide_text(key) for key in GUIDE_PAGES] + [reference_text(t) for t in TOPICS]
    for text in texts:
        assert not re.search(r"shared/|\bspec(ification)?\b|\bissue \d", text), text[:60]


def test_task_pages_give_the_clicks_and_the_meaning_of_the_numbers():
    for key in PAGES_WITH_NUMBERS:
        text = guide_text(key)
        assert "## The clicks" in text and "## What the numbers mean" in text, key
    loop = guide_text("item_loop")
    for action in ("Draw a sample from an item list…", "Read labeled workbook…", "Top up"):
        assert action in loop


def test_every_guide_link_leads_to_a_page_a_reference_or_the_web():
    for key in GUIDE_PAGES:
        for target in LINK.findall(guide_text(key)):
            if target.startswith("reference:"):
                assert target.removeprefix("reference:") in TOPICS, (key, target)
            elif not target.startswith(("http://", "https://")):
                assert target.removesuffix(".md") in GUIDE_PAGES, (key, target)


# --- worked numbers against independent computations ---------------------------------------


def _rates(counts, population):
    """Precision, recall, FPR and prevalence of a stratified round, worked out directly."""
    big_pos, big_neg = population
    n_pos, n_neg = counts["tp"] + counts["fp"], counts["fn"] + counts["tn"]
    found = big_pos * counts["tp"] / n_pos  # actual positives among the flagged items
    missed = big_neg * counts["fn"] / n_neg  # actual positives among the others
    false_alarms = big_pos * counts["fp"] / n_pos
    negatives = false_alarms + big_neg * counts["tn"] / n_neg
    return {
        "precision": counts["tp"] / n_pos,
        "recall": found / (found + missed),
        "fpr": false_alarms / negatives,
        "prevalence": (found + missed) / (big_pos + big_neg),
    }


def test_the_evaluate_page_quotes_the_example_round_correctly():
    rates = _rates(EXAMPLE_COUNTS, EXAMPLE_POPULATION)
    n_pos = EXAMPLE_COUNTS["tp"] + EXAMPLE_COUNTS["fp"]
    precision, low, high = quoted("evaluate", "Precision {n} % (★ Wilson {n}–{n} %)")
    wilson = proportion_confint(EXAMPLE_COUNTS["tp"], n_pos, alpha=0.05, method="wilson")
    assert precision == pytest.approx(100 * rates["precision"], abs=0.05)
    assert (low, high) == pytest.approx([100 * b for b in wilson], abs=0.05)

    recall, low, high = quoted("evaluate", "Recall {n} % (★ Katz log {n}–{n} %)")
    assert recall == pytest.approx(100 * rates["recall"], abs=0.05)
    # Katz et al. (1978): recall = 1/(1 + x), log x normal with the delta-method variance.
    tp, fp, fn, tn = EXAMPLE_COUNTS.values()
    x = 1 / rates["recall"] - 1
    se = math.sqrt(1 / tp - 1 / (tp + fp) + 1 / fn - 1 / (fn + tn))
    bounds = [100 / (1 + x * math.exp(sign * Z95 * se)) for sign in (1, -1)]
    assert (low, high) == pytest.approx(bounds, abs=0.05)

    (f1,) = quoted("evaluate", "F1 {n} %")
    harmonic = 2 / (1 / rates["precision"] + 1 / rates["recall"])
    assert f1 == pytest.approx(100 * harmonic, abs=0.05)
    fpr, low, high = quoted("evaluate", "FPR {n} % (★ Wilson ratio {n}–{n} %)")
    assert fpr == pytest.approx(100 * rates["fpr"], abs=0.0005)
    # The two strata's Wilson intervals of their shares of negatives, combined for the ratio.
    k = EXAMPLE_POPULATION[0] / EXAMPLE_POPULATION[1]
    bounds = [100 * bound for bound in mover_wilson_fpr(tp, fp, fn, tn, k)]
    assert (low, high) == pytest.approx(bounds, abs=0.0005)
    (prevalence,) = quoted("evaluate", "Prevalence {n} %")
    assert prevalence == pytest.approx(100 * rates["prevalence"], abs=0.005)


def test_the_compare_page_quotes_the_change_correctly():
    previous, current = quoted("compare", "Previous {n} %, Current {n} %")
    p_previous = PREVIOUS_COUNTS["tp"] / (PREVIOUS_COUNTS["tp"] + PREVIOUS_COUNTS["fp"])
    p_current = EXAMPLE_COUNTS["tp"] / (EXAMPLE_COUNTS["tp"] + EXAMPLE_COUNTS["fp"])
    assert (previous, current) == pytest.approx([100 * p_previous, 100 * p_current], abs=0.05)
    (change,) = quoted("compare", "Change {n} pp")
    assert change == pytest.approx(100 * (p_current - p_previous), abs=0.05)
    low, high = quoted("compare", "Interval of change {n} to {n} pp")
    newcombe = confint_proportions_2indep(
        EXAMPLE_COUNTS["tp"],
        EXAMPLE_COUNTS["tp"] + EXAMPLE_COUNTS["fp"],
        PREVIOUS_COUNTS["tp"],
        PREVIOUS_COUNTS["tp"] + PREVIOUS_COUNTS["fp"],
        method="newcomb",
        compare="diff",
        alpha=0.05,
    )
    assert (low, high) == pytest.approx([100 * float(b) for b in newcombe], abs=0.05)
    # Chance of decline: P(current < previous) under the Jeffreys posteriors of precision,
    # by numerical integration (the app draws from them: a few tenths of Monte Carlo error).
    (decline,) = quoted("compare", "Chance of decline {n} %")
    now = stats.beta(EXAMPLE_COUNTS["tp"] + 0.5, EXAMPLE_COUNTS["fp"] + 0.5)
    before = stats.beta(PREVIOUS_COUNTS["tp"] + 0.5, PREVIOUS_COUNTS["fp"] + 0.5)
    exact, _error = integrate.quad(lambda y: before.pdf(y) * now.cdf(y), 0, 1, limit=200)
    assert decline == pytest.approx(100 * exact, abs=0.5)


def test_the_plan_page_margins_and_ratio_follow_from_its_sizes():
    # The plan from TR-06 with its population: precision 259/300 (Eq 10, Wald) and recall
    # from its false omission rate 88/4,310 (Eq 10, delta method).
    (n_pos,) = quoted("plan", "**Flagged to label** {n}")
    (n_neg,) = quoted("plan", "**Unflagged to label** {n}")
    (total,) = quoted("plan", "**Total to label** {n}")
    (margin_precision,) = quoted("plan", "**Precision margin ±** {n} %")
    (margin_recall,) = quoted("plan", "**Recall margin ±** {n} %")
    (ratio,) = quoted("plan", "**Over-sampling s** {n}")
    assert total == n_pos + n_neg
    p = PREVIOUS_COUNTS["tp"] / (PREVIOUS_COUNTS["tp"] + PREVIOUS_COUNTS["fp"])
    expected = 100 * Z95 * math.sqrt(p * (1 - p) / n_pos)
    assert margin_precision == pytest.approx(expected, abs=0.005)
    k = PREVIOUS_POPULATION[0] / PREVIOUS_POPULATION[1]
    assert ratio == pytest.approx(n_pos / (k * n_neg), abs=0.005)
    omission = PREVIOUS_COUNTS["fn"] / (PREVIOUS_COUNTS["fn"] + PREVIOUS_COUNTS["tn"])
    x = omission / (k * p)
    spread = math.sqrt((1 - p) / (n_pos * p) + (1 - omission) / (n_neg * omission))
    assert margin_recall == pytest.approx(100 * Z95 * x / (1 + x) ** 2 * spread, abs=0.005)


def test_the_prevalence_page_quotes_the_calibrated_precision_correctly():
    reference, calibrated = quoted("prevalence", "**Precision at {n} %** {n} %")
    rates = _rates(EXAMPLE_COUNTS, EXAMPLE_POPULATION)
    eta = reference / 100
    # Precision at prevalence eta from the balance-free rates (Williams 2021).
    expected = eta * rates["recall"] / (eta * rates["recall"] + (1 - eta) * rates["fpr"])
    assert calibrated == pytest.approx(100 * expected, abs=0.05)


# --- the guide quotes the screens -----------------------------------------------------------

#: What each guide page quotes from the window, word for word: labels, titles, buttons,
#: menu entries and the example's numbers as the screen shows them (the example session,
#: with the next round planned from TR-06). A label renamed on screen fails here until the
#: guide says the new words.
SCREEN_QUOTES = {
    "start": (
        "Plan the next round from it",
        "Compare with the round before",
        "Columns…",
        "Export report…",
        "Formula reference",
    ),
    "plan": (
        "Population given as",
        "Ratio k only",
        "Predicted positive N1",
        "Predicted negative N0",
        "What you believe",
        "Expected precision and recall",
        "Previous round (counts below)",
        "Use as previous round",
        "Precision margin ±",
        "Recall margin ±",
        "Label cost",
        "Published rule",
        "Recommended",
        "Use it",
        "Chance of meeting both margins",
        "Assured",
        "Design: try other sizes",
        "Over-sampling s",
        "Items to label v",
        "Sliders",
        "Simulation",
        "Simulate",
        "Flagged to label",
        "Unflagged to label",
        "Total to label",
        "chance met",
        "Chance both met",
        "Best s for recall",
        "Best s, with prior",
        "Precision: interval width vs s",
        "Recall: interval width vs s",
        "Interval width vs labels v",
        "standard interval",
        "Finite population correction",
        "Bayesian predictive margins",
        "Prior belief (for the Bayes curves)",
        "Pretend counts",
        "251",
        "4,370",
        "4,621",
        "4.25 %",
        "5.00 %",
        "55.4 %",
        "1.52",
        "1.53",
        "47,300",
        "1,249,000",
    ),
    "evaluate": (
        "Labeled counts",
        "Predicted +",
        "Predicted −",
        "Actual +",
        "Actual −",
        "Plain random sample (k from the sample)",
        "Read labeled workbook…",
        "Finite population correction",
        "Precision 87.9 % (★ Wilson 83.3–91.3 %)",
        "Recall 60.6 % (★ Katz log 47.7–72.1 %)",
        "F1 71.7 % (★ Bootstrap 63.3–81.4 %)",
        "FPR 0.405 % (★ Wilson ratio 0.290–0.557 %)",
        "Prevalence 4.62 %",
        "Width",
        "Note",
        "★ quote this",
        "Bayes predictive, next round",
        "Bayes predictive MC, next round",
        "Posterior",
    ),
    "compare": (
        "Compare with the round before",
        "Compared with the previous round",
        "Use as previous round",
        "Previous",
        "Current",
        "86.3 %",
        "87.9 %",
        "+1.6 pp",
        "Interval of change",
        "−4.2 to +7.1 pp",
        "Chance of decline",
        "29.2 %",
        "Rise beyond noise",
        "Fall beyond noise",
        "Precision change",
        "Recall change",
        "Dashed: at reference prevalence",
        "Precision at reference",
    ),
    "prevalence": (
        "Reference prevalence",
        "Lowest prevalence",
        "Highest prevalence",
        "Compare with past rounds",
        "Import scored sample…",
        "Precision at every prevalence",
        "labeled sample",
        "widest band",
        "Uncertainty band",
        "Uncertainty band: at most 26.0 % wide, widest at a prevalence of 0.680 %",
        "Each round at its own prevalence and at the reference prevalence",
        "Own prevalence",
        "4.62 %",
        "Precision at 2.00 %",
        "75.3 %",
        "F1 at 2.00 %",
        "Precision gain",
        "99.3 %",
        "Recall gain over flagging every item, at 2.00 %",
        "Band at 2.00 %",
        "F1 at every prevalence",
        "PR curve of the scored sample",
        "Average precision",
        "actual positives are 4.62 % of the population, 23.9 % of the labeled sample",
    ),
    "classifiers": (
        "Parent and children",
        "Predicted positive",
        "Add child",
        "Overlap with parent",
        "Precision target and simulation",
        "Margin (±)",
        "Precision floor",
        "Shuffle (proportional)",
        "Simulate again",
        "Trials",
        "Labels to buy per classifier",
        "Each classifier alone needs 1,068 labels",
        "Labels without reuse",
        "Labels reused",
        "319",
        "Labels to buy",
        "749",
        "Saving",
        "29.9 %",
        "Saving, 95 % range",
        "27.2–32.7 %",
        "Overlap as % of parent's",
        "30.0 %",
        "Overlap as % of its own",
        "87.4 %",
        "Total",
        "Without reuse",
        "With reuse (and 95 % range)",
    ),
    "report": ("Export report…", "★ quote this"),
    "item_loop": ("Draw a sample from an item list…", "Read labeled workbook…"),
    "words": (
        "Imbalance k",
        "Over-sampling s",
        "Best s for recall",
        "Best s, with prior",
        "Flagged to label",
        "Unflagged to label",
        "Total to label",
        "Items to label v",
        "★ quote this",
        "Bayes predictive, next round",
        "Prior belief",
        "Pretend counts",
        "chance met",
        "Chance both met",
        "Uncertainty band",
        "Overlap as % of parent's",
        "Seed",
    ),
}
#: Labels the screens showed before they were put in a lead's words: no guide may quote
#: them any more (the symbols may still appear where a guide explains a tooltip).
RETIRED_LABELS = (
    "n1 pred +",
    "n0 pred −",
    "Total v",
    "Precision ±",
    "Slider design",
    "Assurance and coverage",
    "Δ = ",
    "Predicted positive |A|",
    "Labels alone",
    "Reused ",
    "New labels",
    "Calibrated precision",
    "P(decline)",
    "Eq 10 margins",
    "(Wilson ",
    "(Katz log-ratio ",
)


def plain(text: str) -> str:
    """Rich text or Markdown as read: no tags, entities or bold; one space between words."""
    text = re.sub(r"<br\s*/?>", " ", text)
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    text = text.replace("**", "")
    return " ".join(text.replace("\u00a0", " ").replace("\u202f", " ").split())


def guide_words(page: str) -> str:
    """Guide page ``page`` as read: Markdown's emphasis gone, an escaped ``\\*`` a star."""
    text = guide_text(page).replace("\\*", "\0")
    text = re.sub(r"(?<![*\w])\*(?!\*)|(?<!\*)\*(?![*\w])", "", text)
    return plain(text.replace("\0", "*"))


def without_mnemonic(text: str) -> str:
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def screen_words(window) -> str:
    """Every text the window shows or can show: tab titles, menu and context-menu entries,
    labels, group titles, buttons, choices, fields, table headers and cells, plot titles,
    axis labels and legends (hidden widgets too: a chart waiting for a file has its title)."""
    texts = [window.tabs.tabText(index) for index in range(window.tabs.count())]
    texts += [without_mnemonic(action.text()) for action in window.findChildren(QAction)]
    for widget in window.findChildren(QLabel):
        texts.append(widget.text())
    for widget in window.findChildren(QGroupBox):
        texts.append(widget.title())
    for widget in window.findChildren(QAbstractButton):
        texts.append(without_mnemonic(widget.text()))
    for widget in window.findChildren(QComboBox):
        texts += [widget.itemText(index) for index in range(widget.count())]
    for widget in window.findChildren(QAbstractSpinBox):
        texts.append(widget.text())
    for view in window.findChildren(QAbstractItemView):
        model = view.model()
        if model is None:
            continue
        try:
            columns = model.columnCount(QModelIndex())
        except TypeError:  # a list's model keeps columnCount private: one column
            columns = 1
        rows = model.rowCount(QModelIndex())
        for column in range(columns):
            texts.append(str(model.headerData(column, Qt.Orientation.Horizontal) or ""))
        for row in range(rows):
            texts.append(str(model.headerData(row, Qt.Orientation.Vertical) or ""))
            for column in range(columns):
                texts.append(str(model.index(row, column).data() or ""))
    for plot in window.findChildren(pg.PlotWidget):
        item = plot.getPlotItem()
        texts.append(item.titleLabel.text)
        texts += [item.getAxis(side).labelText for side in ("bottom", "left")]
        if item.legend is not None:
            texts += [label.text for _sample, label in item.legend.items]
    return "\n".join(plain(text) for text in texts)


@pytest.fixture
def example_window(qtbot, tmp_path, monkeypatch):
    """The window on the example session, the next round planned from TR-06 (right-click >
    Plan the next round from it), every tab shown once and its background work done."""
    monkeypatch.setenv(main_window_module.SETTINGS_DIR_ENV, str(tmp_path))
    # pytest-qt may close the window before this fixture's teardown: discard, don't ask.
    monkeypatch.setattr(
        QMessageBox, "question", lambda *args, **kwargs: QMessageBox.StandardButton.Discard
    )
    widget = MainWindow(settings=app_settings())
    qtbot.addWidget(widget)
    widget.load_example()
    widget.resize(1500, 950)
    widget.show()
    qtbot.waitExposed(widget)
    rounds = widget.session.state.rounds
    tr06 = next(index for index, item in enumerate(rounds) if item.round == "TR-06")
    assert widget.rounds_panel.plan_from_round(tr06)
    for index in range(widget.tabs.count()):
        widget.tabs.setCurrentIndex(index)
        for _ in range(4):  # refresh timers, background runs, the results they post
            QThreadPool.globalInstance().waitForDone(20_000)
            qtbot.wait(20)
    yield widget
    widget.session.undo_stack.setClean()
    widget.close()


def shows(screen: str, quote: str) -> bool:
    """``quote`` is on ``screen`` as whole words (``1.52`` is not read in ``41.52``)."""
    return re.search(rf"(?<![\w.,]){re.escape(quote)}(?!\w)", screen) is not None


def test_every_guide_page_quotes_the_screens_word_for_word(example_window):
    screen = screen_words(example_window)
    missing = {
        page: [quote for quote in quotes if quote not in guide_words(page)]
        for page, quotes in SCREEN_QUOTES.items()
    }
    assert not any(missing.values()), f"the guide no longer says: {missing}"
    not_shown = {
        page: [quote for quote in quotes if not shows(screen, quote)]
        for page, quotes in SCREEN_QUOTES.items()
    }
    assert not any(not_shown.values()), (
        f"the guide quotes what the window does not show: {not_shown}"
    )


def test_no_guide_page_quotes_a_retired_label():
    for page in GUIDE_PAGES:
        words = guide_words(page)
        quoted_still = [label for label in RETIRED_LABELS if label in words]
        assert not quoted_still, (page, quoted_still)


# --- the methods document ----------------------------------------------------------------------

PROJECT_ROOT = Path(__file__).resolve().parents[2]
#: "Eq 6", "Theorem 5.1", "Appendix B" ... as the code cites them.
CITATION = re.compile(
    r"\b(Eq|Theorem|Algorithm|Lemma|Appendix|Figure|Table) (\d+(?:\.\d+)?|[A-C]\b)"
)


def test_every_equation_the_code_cites_has_a_heading_in_the_methods_document():
    methods = (PROJECT_ROOT / "docs" / "methods.md").read_text(encoding="utf-8")
    headings = [line for line in methods.splitlines() if line.startswith("#")]
    sources = sorted((PROJECT_ROOT / "core").rglob("*.py")) + sorted(
        (PROJECT_ROOT / "desktop").rglob("*.py")
    )
    cited = {
        f"{kind} {label}"
        for source in sources
        for kind, label in CITATION.findall(source.read_text(encoding="utf-8"))
    }
    assert {"Eq 1", "Eq 4", "Eq 10", "Theorem 1", "Algorithm 1"} <= cited  # the scan works
    for anchor in sorted(cited):
        if anchor.split()[0] in ("Eq", "Theorem", "Algorithm", "Lemma"):
            pattern = re.compile(rf"\b{re.escape(anchor)}\b(?![.\d])")
            assert any(pattern.search(line) for line in headings), f"no heading for {anchor}"
        else:  # figures, tables, appendices: named in the text
            assert anchor in methods, f"docs/methods.md never mentions {anchor}"


# --- windows ---------------------------------------------------------------------------------


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv(main_window_module.SETTINGS_DIR_ENV, str(tmp_path))
    widget = MainWindow(settings=app_settings())
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    widget.session.undo_stack.setClean()
    widget.close()


def test_the_guide_window_shows_every_page(qtbot):
    guide = GuideWindow()
    qtbot.addWidget(guide)
    assert guide.page == "start"
    for key, title in GUIDE_PAGES.items():
        guide.show_page(key)
        assert guide.page == key
        assert guide.browser.toPlainText().startswith(title)
    guide.pages.setCurrentRow(1)
    assert guide.page == list(GUIDE_PAGES)[1]
    with pytest.raises(KeyError):
        guide.show_page("nowhere")


def test_guide_links_switch_pages_and_open_the_reference(qtbot):
    guide = GuideWindow()
    qtbot.addWidget(guide)
    guide.show()
    guide.browser.anchorClicked.emit(QUrl("evaluate.md"))
    assert guide.page == "evaluate"
    guide.browser.anchorClicked.emit(QUrl("reference:prevalence"))
    reference = guide.findChild(FormulaReference)
    assert reference is not None and reference.isVisible()
    assert reference.topic == "prevalence"
    guide.reference_button.click()  # the same window comes back, on the same topic
    assert guide.findChildren(FormulaReference) == [reference]


@pytest.mark.parametrize("focus", ["browser", "pages", "window"])
def test_escape_closes_the_guide(qtbot, focus):
    guide = GuideWindow()
    qtbot.addWidget(guide)
    guide.show()
    qtbot.waitExposed(guide)
    target = {"browser": guide.browser, "pages": guide.pages, "window": guide}[focus]
    qtbot.keyClick(target, Qt.Key.Key_Escape)
    assert not guide.isVisible()


@pytest.mark.parametrize("focus", ["browser", "topic_box", "window"])
def test_escape_closes_the_formula_reference(qtbot, focus):
    reference = FormulaReference("evaluate")
    qtbot.addWidget(reference)
    reference.show()
    qtbot.waitExposed(reference)
    target = {"browser": reference.browser, "topic_box": reference.topic_box}.get(focus, reference)
    qtbot.keyClick(target, Qt.Key.Key_Escape)
    assert not reference.isVisible()


def test_help_guide_menu_entry_opens_one_guide_with_the_reference_a_click_away(qtbot, window):
    help_menu = window.menuBar().actions()[-1].menu()
    assert window.guide_action in help_menu.actions()
    assert window.guide_action.text() == "&Guide"
    window.guide_action.trigger()
    guide = window.findChild(GuideWindow, "guide_window")
    assert guide is not None and guide.isVisible() and guide.page == "start"
    qtbot.keyClick(guide.browser, Qt.Key.Key_Escape)
    assert not guide.isVisible()
    window.guide_action.trigger()  # asked again: the same window comes back
    assert window.findChildren(GuideWindow) == [guide] and guide.isVisible()

    window.tabs.setCurrentIndex(window.tab_keys.index("history"))
    guide.reference_button.click()  # the main window's reference, on the current tab
    reference = window.findChild(FormulaReference, "formula_reference")
    assert reference is not None and reference.isVisible() and reference.topic == "history"
    assert help_module.show_guide(window) is guide
    guide.close()
    reference.close()


def test_show_guide_without_a_parent_makes_a_window(qtbot):
    guide = show_guide()
    qtbot.addWidget(guide)
    assert guide.isVisible()
    assert guide.show_reference("plan").topic == "plan"


def test_f1_opens_the_guide_at_the_page_of_the_tab_in_view(qtbot, window):
    """Trial 20: F1 opened the formula reference; the guide had no key and no page named
    after History or Ensemble."""
    from PySide6.QtGui import QKeySequence

    assert window.tab_guide_action.shortcut() == QKeySequence(QKeySequence.StandardKey.HelpContents)
    assert window.reference_action.shortcut() == QKeySequence("Shift+F1")
    for tab, page in (("history", "compare"), ("ensemble", "classifiers"), ("plan", "plan")):
        window.tabs.setCurrentIndex(window.tab_keys.index(tab))
        window.tab_guide_action.trigger()
        guide = window.findChild(GuideWindow, "guide_window")
        assert guide.isVisible() and guide.page == page
    titles = [guide.pages.item(row).text() for row in range(guide.pages.count())]
    assert "Compare with last time (History)" in titles
    assert "Several classifiers (Ensemble)" in titles
    guide.close()
