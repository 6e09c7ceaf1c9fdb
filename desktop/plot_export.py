"""Export of plots: pyqtgraph's exporters (right-click > Export...), with Qt's own SVG
generator in place of pyqtgraph's SVG exporter.

Imported when an export is first asked for (:meth:`desktop.plotting.PlotPanel` hands the
Export... action here): pyqtgraph's exporters cost about 8 ms of start-up otherwise.
Importing this module registers :class:`QtSvgExporter`.
"""

from __future__ import annotations

import pyqtgraph as pg
import pyqtgraph.exporters
from pyqtgraph.parametertree import Parameter
from PySide6.QtCore import QBuffer, QIODevice, QRectF
from PySide6.QtGui import QPainter
from PySide6.QtSvg import QSvgGenerator


def _paint_axis_directly(axis, painter, option, widget):
    """:meth:`pyqtgraph.AxisItem.paint` without its cached picture (for vector output)."""
    if axis.style["tickFont"]:
        painter.setFont(axis.style["tickFont"])
    specs = axis.generateDrawSpecs(painter)
    if specs is not None:
        axis.drawPicture(painter, *specs)


class QtSvgExporter(pyqtgraph.exporters.Exporter):
    """Right-click > Export... > SVG through Qt's own :class:`QSvgGenerator`.

    pyqtgraph 0.14's SVG exporter rewrites the path data Qt 6 writes and fails on it
    ("not enough values to unpack"; pyqtgraph issue 3485); Qt's generator records the same
    painting the screen shows, so it replaces that exporter in the export dialog.
    """

    Name = "Scalable Vector Graphics (SVG)"
    allowCopy = False

    def __init__(self, item):
        super().__init__(item)
        self.params = Parameter.create(name="params", type="group", children=[])

    def parameters(self):
        return self.params

    def export(self, fileName=None, toBytes=False, copy=False):
        if fileName is None and not toBytes:
            self.fileSaveDialog(filter=["Scalable Vector Graphics (*.svg)"])
            return None
        source = self.getSourceRect()
        target = QRectF(0, 0, source.width(), source.height())
        buffer = QBuffer()
        generator = QSvgGenerator()
        if toBytes:
            buffer.open(QIODevice.OpenModeFlag.WriteOnly)
            generator.setOutputDevice(buffer)
        else:
            generator.setFileName(str(fileName))
        generator.setSize(target.size().toSize())
        generator.setViewBox(target)
        generator.setTitle("PR Planner plot")
        painter = QPainter(generator)
        try:
            self.setExportMode(
                True,
                {
                    "antialias": True,
                    "background": pg.mkColor("w"),
                    "painter": painter,
                    "resolutionScale": 1.0,
                },
            )
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            # Axes normally replay a cached QPicture, which lands shifted in an SVG: draw
            # them directly while the SVG is recorded.
            cached_paint, pg.AxisItem.paint = pg.AxisItem.paint, _paint_axis_directly
            self.getScene().render(painter, target, source)
        finally:
            pg.AxisItem.paint = cached_paint
            self.setExportMode(False)
            painter.end()
        return bytes(buffer.data()) if toBytes else None


pyqtgraph.exporters.Exporter.Exporters[:] = [
    exporter
    for exporter in pyqtgraph.exporters.Exporter.Exporters
    if exporter is not pyqtgraph.exporters.SVGExporter
]
QtSvgExporter.register()
