"""Plot panels: nearest-point hover read-out and export to PNG/SVG (spec 4.3)."""

import numpy as np
import pyqtgraph.exporters
from PySide6.QtCore import QPointF

from desktop.plotting import PlotPanel, QtSvgExporter


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
    assert "precision" in text and f"x = {target_x:.3g}" in text and "%" in text
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
