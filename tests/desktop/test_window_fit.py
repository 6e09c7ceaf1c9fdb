"""The window fits a 1366 x 768 laptop: nothing clipped, the Plan sliders in view, width
axes within 100 %, and a window remembered from a bigger screen comes back inside."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QAbstractSpinBox,
    QLabel,
    QMessageBox,
    QSlider,
    QStyle,
    QWidget,
)

from desktop import main_window as main_window_module
from desktop.main_window import MainWindow, app_settings, fitted_window_size
from desktop.plotting import PlotPanel

#: A 1366 x 768 screen less a 40 px taskbar and a title bar.
LAPTOP = QSize(1366, 768 - 60)
CHECKED = (QLabel, QAbstractButton, QAbstractSpinBox, QSlider)


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv(main_window_module.SETTINGS_DIR_ENV, str(tmp_path))
    # pytest-qt closes the window before this fixture's teardown: discard, don't ask.
    monkeypatch.setattr(
        QMessageBox, "question", lambda *args, **kwargs: QMessageBox.StandardButton.Discard
    )
    widget = MainWindow(settings=app_settings())
    qtbot.addWidget(widget)
    widget.load_example()
    rounds = widget.session.state.rounds
    # The tallest Plan panel: the previous round's grid instead of two percent fields.
    widget.choose_previous_round(max(i for i, r in enumerate(rounds) if r.classifier == "travel"))
    widget.resize(LAPTOP)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def show_tab(qtbot, window, index):
    window.tabs.setCurrentIndex(index)
    tab = window.tabs.widget(index)
    flush = getattr(tab, "flush", None)
    if flush is not None:
        flush()
    qtbot.wait(50)  # layouts settle (posted LayoutRequest events)
    return tab


def in_scroll_area(widget: QWidget, root: QWidget) -> bool:
    parent = widget.parentWidget()
    while parent is not None and parent is not root:
        if isinstance(parent, QAbstractScrollArea):
            return True
        parent = parent.parentWidget()
    return False


def clipped_widgets(tab: QWidget) -> list[str]:
    """Visible labels, buttons, spin boxes and sliders of ``tab`` that are narrower than
    their text asks, or that stick out of the tab where no scroll area can reach them."""
    problems = []
    frame = tab.rect()
    for widget in tab.findChildren(QWidget):
        if not isinstance(widget, CHECKED) or not widget.isVisible():
            continue
        text = widget.text() if hasattr(widget, "text") else ""
        name = f"{type(widget).__name__} {widget.objectName()} {text!r}"
        if isinstance(widget, QLabel) and widget.wordWrap():
            # A wrapping label needs height, not width, for its text.
            if widget.heightForWidth(widget.width()) > widget.height() + 1:
                problems.append(f"{name}: {widget.height()} px high, needs more")
        elif isinstance(widget, QAbstractSpinBox):
            # A spin box asks room for its largest value (alphas up to a million); what
            # must fit is the value it shows.
            edit = widget.lineEdit()
            needed = edit.fontMetrics().horizontalAdvance(edit.text()) + 4
            if needed > edit.width():
                problems.append(f"{name}: its text needs {needed} px, has {edit.width()}")
        elif widget.sizeHint().width() > widget.width():
            problems.append(f"{name}: {widget.width()} px wide, asks {widget.sizeHint().width()}")
        area = QRect(widget.mapTo(tab, QPoint(0, 0)), widget.size())
        if not frame.contains(area) and not in_scroll_area(widget, tab):
            problems.append(f"{name}: outside the tab at {area.getRect()}")
    for widget in tab.findChildren(QWidget):
        # A squeezed layout pushes its last child past the parent's edge: cut off.
        parent = widget.parentWidget()
        if isinstance(widget, (*CHECKED, PlotPanel)) and widget.isVisible() and parent:
            if not parent.rect().contains(widget.geometry()):
                problems.append(
                    f"{type(widget).__name__} {widget.objectName()}: sticks out of its "
                    f"{type(parent).__name__} ({widget.geometry().getRect()} in "
                    f"{parent.rect().getRect()})"
                )
    return problems


def test_the_window_fits_a_laptop_screen(window):
    hint = window.minimumSizeHint()
    assert hint.height() <= LAPTOP.height()
    assert hint.width() <= LAPTOP.width()
    assert window.size() == LAPTOP  # not forced taller by a minimum


def test_showing_every_tab_never_makes_the_window_taller_than_the_screen(qtbot, window):
    # A tab first laid out narrow once wrapped a sentence into a dozen lines and pushed
    # the window to 939 px, past a 768 px screen.
    # The Ensemble simulation ends while its tab is hidden (its result is laid out then).
    ensemble = window.tabs.widget(window.tab_keys.index("ensemble"))
    qtbot.waitUntil(
        lambda: not any(runner.is_running for runner in ensemble._runners), timeout=20_000
    )
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        window.grab()  # lays the tab out, as a screenshot or a first paint does
        assert window.minimumSizeHint().height() <= LAPTOP.height(), window.tab_keys[index]
        assert window.size() == LAPTOP, window.tab_keys[index]


@pytest.mark.parametrize("index", range(5))
def test_no_widget_is_clipped_at_1366_by_768(qtbot, window, index):
    tab = show_tab(qtbot, window, index)
    assert clipped_widgets(tab) == []


def fully_visible(widget: QWidget) -> bool:
    return widget.isVisible() and widget.visibleRegion().boundingRect() == widget.rect()


@pytest.mark.parametrize("size", [LAPTOP, QSize(1600, 1000), QSize(1920, 1020)])
def test_the_design_sliders_are_in_view_without_scrolling(qtbot, window, size):
    window.resize(size)
    plan = show_tab(qtbot, window, 0)
    assert plan.belief_pages.currentWidget() is plan.grid  # the tall previous-round grid
    for slider in (plan.s_slider, plan.v_slider):
        assert fully_visible(slider.slider)
        assert fully_visible(slider.spin)


@pytest.mark.parametrize("size", [QSize(1280, 800), LAPTOP])
@pytest.mark.parametrize("index", [0, 1])
def test_the_count_grids_show_their_headers_whole(qtbot, window, size, index):
    window.resize(size)
    tab = show_tab(qtbot, window, index)
    grid = tab.grid
    header = grid.view.horizontalHeader()
    assert not grid.view.horizontalScrollBar().isVisible()
    margin = header.style().pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
    for column in range(3):
        label = grid.model.headerData(column, Qt.Orientation.Horizontal)
        needed = header.fontMetrics().horizontalAdvance(label) + 2 * margin
        assert header.sectionSize(column) >= needed, (label, header.sectionSize(column))


def test_the_keys_do_not_overlap_the_plots(qtbot, window):
    plan = show_tab(qtbot, window, 0)
    for key in (plan.s_key, plan.v_key):
        rect = QRect(key.mapTo(plan, QPoint(0, 0)), key.size())
        assert key.height() >= key.heightForWidth(key.width())
        for plot in (plan.precision_plot, plan.recall_plot, plan.v_plot):
            assert not rect.intersects(QRect(plot.mapTo(plan, QPoint(0, 0)), plot.size()))


def test_width_axes_never_pass_100_percent(qtbot, window):
    plan = show_tab(qtbot, window, 0)
    # 50 labels at s = 0.1: under one predicted positive, Eq 10's width is far above 1.
    window.session.set_values([("plan.v", 50), ("plan.s", 0.1), ("plan.belief", "expected")])
    plan.flush()
    raw = plan.basis.curves.over_s(50)
    assert np.nanmax(raw.precision_width) > 1.0  # the case the clamp is for
    for plot in (plan.precision_plot, plan.recall_plot, plan.v_plot):
        view = plot.plotItem.vb
        assert view.viewRange()[1][1] <= 1.0
        for item in plot.plotItem.listDataItems():
            _x, y = item.getData()
            if y is not None and len(y):
                assert np.nanmax(y) <= 1.0
        view.setYRange(0.0, 3.0, padding=0)  # a zoom out stops at 100 %
        assert view.viewRange()[1][1] <= 1.0


def test_fitted_window_size_leaves_room_for_frame_and_taskbar():
    assert fitted_window_size(QSize(1920, 1040)) == (QSize(1500, 950), 190)
    size, dock = fitted_window_size(QSize(1366, 728))  # 768 less a 40 px taskbar
    assert size.width() <= 1366 - 16 and size.height() <= 728 - 40
    assert dock == 120
    assert fitted_window_size(QSize()) == (QSize(1500, 950), 190)


def test_a_window_remembered_off_screen_comes_back_inside(qtbot, window):
    available = window.screen().availableGeometry()
    window.move(available.right() + 500, available.bottom() + 500)
    window._keep_inside_screen()
    frame = window.frameGeometry()
    assert available.contains(frame.topLeft())


def test_log_axes_of_the_width_plots_label_whole_decades_only(qtbot, window):
    plan = show_tab(qtbot, window, 0)
    for plot in (plan.precision_plot, plan.v_plot):
        axis = plot.plotItem.getAxis("bottom")
        assert axis.logMode
        assert axis.logTickStrings([-1.0, 0.0, np.log10(2.0), 3.0, 5.0], 1.0, 1.0) == [
            "0.1",
            "1",
            "",
            "1,000",
            "100,000",
        ]
    assert plan.v_plot.plotItem.getAxis("bottom").labelText == "items labeled v (log scale)"
