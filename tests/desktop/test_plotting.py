"""Plot panels: nearest-point hover read-out and export to PNG/SVG."""

import subprocess
import sys

import numpy as np
import pyqtgraph.exporters
from PySide6.QtCore import QPointF
from PySide6.QtGui import QPainter

from desktop import formatting
from desktop.plot_export import QtSvgExporter
from desktop.plotting import PlotPanel, use_count_axis


def shown_panel(qtbot, log_x):
    panel = PlotPanel("Width", "s", "width", log_x=log_x)
    qtbot.addWidget(panel)
    panel.resize(500, 400)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def test_hover_reads_out_the_nearest_point_in_data_units_on_a_log_axis(qtbot):
    panel = shown_panel(qtbot, log_x=True)
    s = np.logspace(-1, 2, 61)
    panel.line("precision").setData(s, 0.5 / np.sqrt(s))
    panel.plotItem.vb.autoRange()
    target_x, target_y = s[30], 0.5 / np.sqrt(s[30])
    # The mouse sits just beside the 31st point (view coordinates are log10 on this axis).
    scene = panel.plotItem.vb.mapViewToScene(QPointF(np.log10(target_x) + 0.01, target_y))
    name, x, y, _ = panel.nearest_point(scene)
    assert name == "precision"
    assert x == target_x and y == target_y
    panel._on_mouse_moved((scene,))
    text = panel.readout.textItem.toPlainText()
    # Each coordinate after its axis title, in the axes' units: never a bare "x =".
    assert text == f"precision\ns: {target_x:.3g}\nwidth: {formatting.percent(target_y)}"
    # Far from every curve: no read-out.
    corner = panel.plotItem.vb.mapViewToScene(QPointF(np.log10(s[-1]), 1e6))
    assert panel.nearest_point(corner) is None


def test_plots_export_to_png_and_svg(qtbot, tmp_path):
    panel = shown_panel(qtbot, log_x=False)
    panel.line("recall").setData([1, 2, 3], [0.2, 0.5, 0.4])
    pyqtgraph.exporters.ImageExporter(panel.plotItem).export(str(tmp_path / "plot.png"))
    QtSvgExporter(panel.plotItem).export(str(tmp_path / "plot.svg"))
    assert (tmp_path / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (tmp_path / "plot.svg").read_text()
    assert "<svg" in svg and "<path" in svg
    # The export dialog offers our SVG exporter in place of pyqtgraph's broken one.
    names = [exporter.Name for exporter in pyqtgraph.exporters.Exporter.Exporters]
    assert names.count("Scalable Vector Graphics (SVG)") == 1
    assert pyqtgraph.exporters.SVGExporter not in pyqtgraph.exporters.Exporter.Exporters


def test_plots_draft_while_a_slider_is_dragged_and_end_at_full_quality(qtbot):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import (
        QGraphicsItem,
        QHBoxLayout,
        QLabel,
        QSlider,
        QStyle,
        QStyleOptionSlider,
        QVBoxLayout,
        QWidget,
    )

    window = QWidget()
    qtbot.addWidget(window)
    layout = QVBoxLayout(window)
    slider = QSlider(Qt.Orientation.Horizontal)
    row = QHBoxLayout()
    label = QLabel("0")
    row.addWidget(label)
    row.addStretch(1)
    panel = PlotPanel("Width", "s", "width")
    layout.addWidget(slider)
    layout.addLayout(row)
    layout.addWidget(panel)
    curve = panel.line("precision")
    curve.setData(np.linspace(0, 1, 500), np.linspace(0, 1, 500) ** 2)
    window.resize(500, 400)
    window.show()
    qtbot.waitExposed(window)

    option = QStyleOptionSlider()
    slider.initStyleOption(option)
    handle = slider.style().subControlRect(
        QStyle.ComplexControl.CC_Slider, option, QStyle.SubControl.SC_SliderHandle, slider
    )
    qtbot.mousePress(slider, Qt.MouseButton.LeftButton, pos=handle.center())
    assert slider.isSliderDown() and panel.draft
    assert not curve.opts["antialias"] and not curve.curve.opts["antialias"]
    assert curve.curve.cacheMode() == QGraphicsItem.CacheMode.DeviceCoordinateCache
    assert not panel.renderHints() & QPainter.RenderHint.Antialiasing
    # While dragging, a label's longer text does not re-lay out the window ...
    narrow = label.width()
    label.setText("a much longer text than before")
    qtbot.wait(50)
    assert label.width() == narrow
    qtbot.mouseRelease(slider, Qt.MouseButton.LeftButton, pos=handle.center())
    # ... the release does, and brings every plot back to full quality.
    assert not panel.draft
    assert curve.opts["antialias"] and curve.curve.opts["antialias"]
    assert curve.curve.cacheMode() == QGraphicsItem.CacheMode.NoCache
    assert panel.renderHints() & QPainter.RenderHint.Antialiasing
    qtbot.waitUntil(lambda: label.width() > narrow)


def test_export_action_loads_the_exporters_and_opens_the_dialog(qtbot, monkeypatch):
    panel = shown_panel(qtbot, log_x=False)
    scene = panel.scene()
    opened = []
    monkeypatch.setattr(scene, "showExportDialog", lambda: opened.append(True))
    scene.contextMenu[0].trigger()  # right-click > "Export..."
    assert opened == [True]
    assert "desktop.plot_export" in sys.modules


def test_the_window_does_not_load_the_exporters_at_start_up():
    # pyqtgraph's exporters cost start-up time; they load when an export is asked for.
    code = (
        "import os, sys; os.environ['PYQTGRAPH_QT_LIB'] = 'PySide6'; "
        "import desktop.main_window; "
        "print('pyqtgraph.exporters' in sys.modules, 'desktop.plot_export' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]


def test_count_axis_groups_thousands_and_keeps_its_grid(qtbot):
    panel = shown_panel(qtbot, log_x=False)
    grid = panel.plotItem.getAxis("left").grid
    use_count_axis(panel, "Labels")
    axis = panel.plotItem.getAxis("left")
    assert axis.labelText == "Labels"
    assert axis.grid == grid
    assert axis.tickStrings([0.0, 2500.0, 5000.0], 1.0, 2500.0) == ["0", "2,500", "5,000"]
    # Fractional steps (a zoomed-in view) keep pyqtgraph's decimals.
    assert axis.tickStrings([0.5, 1.0], 1.0, 0.5) == ["0.5", "1.0"]


def test_read_out_falls_back_to_x_and_y_without_axis_titles(qtbot):
    panel = shown_panel(qtbot, log_x=False)
    panel.setLabel("bottom", "")
    panel.setLabel("left", "")
    assert panel.read_out_text("", 2.0, 0.5) == "x: 2\ny: 50.0 %"
