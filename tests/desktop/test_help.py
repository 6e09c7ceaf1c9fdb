"""Help: the task guide and the formula reference (pages, links, worked numbers, windows).

The pages are read through :mod:`desktop.resources`, the way the installed app reads its
package data. The numbers the guide quotes as worked examples (the bundled example
session) are checked against independent computations: statsmodels for the Wilson and
Newcombe intervals, the closed forms worked out here for recall, FPR and the rest.
"""

from __future__ import annotations

import math
import re
from importlib import resources as importlib_resources
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QUrl
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

#: Pages that walk through a screen full of numbers and must explain them.
PAGES_WITH_NUMBERS = ("plan", "evaluate", "compare", "prevalence", "classifiers")

#: The example session's labeled round (Evaluate tab) and its population.
EXAMPLE_COUNTS = {"tp": 225, "fp": 31, "fn": 14, "tn": 730}
EXAMPLE_POPULATION = (41_200, 1_251_000)
#: The example's previous round (TR-06), the one the Compare box is against.
PREVIOUS_COUNTS = {"tp": 259, "fp": 41, "fn": 88, "tn": 4_222}

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
    precision, low, high = quoted("evaluate", "Precision {n} % (Wilson {n}–{n} %)")
    wilson = proportion_confint(EXAMPLE_COUNTS["tp"], n_pos, alpha=0.05, method="wilson")
    assert precision == pytest.approx(100 * rates["precision"], abs=0.05)
    assert (low, high) == pytest.approx([100 * b for b in wilson], abs=0.05)

    recall, low, high = quoted("evaluate", "Recall {n} % (Katz log-ratio {n}–{n} %)")
    assert recall == pytest.approx(100 * rates["recall"], abs=0.05)
    # Katz et al. (1978): recall = 1/(1 + x), log x normal with the delta-method variance.
    tp, fp, fn, tn = EXAMPLE_COUNTS.values()
    x = 1 / rates["recall"] - 1
    se = math.sqrt(1 / tp - 1 / (tp + fp) + 1 / fn - 1 / (fn + tn))
    bounds = [100 / (1 + x * math.exp(sign * 1.959964 * se)) for sign in (1, -1)]
    assert (low, high) == pytest.approx(bounds, abs=0.05)

    (f1,) = quoted("evaluate", "F1 {n} %")
    harmonic = 2 / (1 / rates["precision"] + 1 / rates["recall"])
    assert f1 == pytest.approx(100 * harmonic, abs=0.05)
    (fpr,) = quoted("evaluate", "FPR {n} %")
    assert fpr == pytest.approx(100 * rates["fpr"], abs=0.0005)
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


def test_the_plan_page_margin_and_ratio_follow_from_its_sizes():
    # The plan is made from the previous round TR-06: precision 259/300 (Eq 10, Wald).
    (n_pos,) = quoted("plan", "**n1 pred +** {n}")
    (n_neg,) = quoted("plan", "**n0 pred −** {n}")
    (total,) = quoted("plan", "**Total v** {n}")
    (margin,) = quoted("plan", "**Precision ±** {n} %")
    (ratio,) = quoted("plan", "**s** {n}")
    assert total == n_pos + n_neg
    p = PREVIOUS_COUNTS["tp"] / (PREVIOUS_COUNTS["tp"] + PREVIOUS_COUNTS["fp"])
    assert margin == pytest.approx(100 * 1.959964 * math.sqrt(p * (1 - p) / n_pos), abs=0.005)
    k = EXAMPLE_POPULATION[0] / EXAMPLE_POPULATION[1]
    assert ratio == pytest.approx(n_pos / (k * n_neg), abs=0.005)


def test_the_prevalence_page_quotes_the_calibrated_precision_correctly():
    calibrated, reference = quoted("prevalence", "**Calibrated precision {n} %** (reference {n} %)")
    rates = _rates(EXAMPLE_COUNTS, EXAMPLE_POPULATION)
    eta = reference / 100
    # Precision at prevalence eta from the balance-free rates (Williams 2021).
    expected = eta * rates["recall"] / (eta * rates["recall"] + (1 - eta) * rates["fpr"])
    assert calibrated == pytest.approx(100 * expected, abs=0.05)


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
