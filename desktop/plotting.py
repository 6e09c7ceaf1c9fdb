"""One plot panel for every tab: labels with units, legend, hover read-out, export.

Curves are created once with :meth:`PlotPanel.line` and updated with ``setData``.
Hovering shows the nearest data point of any curve, named by the axis titles and in the
units the axes use;
right-click > Export... is pyqtgraph's exporter (PNG, SVG, CSV; see
:mod:`desktop.plot_export`).

Draft frames while the user drags. From the press on a slider's handle (or a left press on
a plot) to its release, every plot draws in draft quality: no antialiasing, curves clipped
to the view and down-sampled, and curves and axes kept as pixmaps
(``DeviceCoordinateCache``), so that a plot whose curves did not move repaints by copying
them. On release each plot goes back to full quality and repaints once: the last frame of
a drag is always the full-quality one, and exports never see draft settings. While
drafting, widgets' layout requests wait for the release too (:meth:`_DragWatcher.eventFilter`).
"""

from __future__ import annotations

import html
import weakref
from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QEvent, QObject, QPointF, Qt
from PySide6.QtWidgets import QAbstractSlider, QApplication, QGraphicsItem, QWidget

from desktop import formatting

pg.setConfigOptions(antialias=True, background="w", foreground="#222")


#: Colour-blind-safe palette (Okabe-Ito), in the order curves are added.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")


#: Width in pixels of the plots' lines.
LINE_WIDTH = 2.0


def pen(index: int = 0, width: float = LINE_WIDTH, style=None, color: str | None = None):
    options = {"color": color or PALETTE[index % len(PALETTE)], "width": width}
    if style is not None:
        options["style"] = style
    return pg.mkPen(**options)


_LAYOUT_REQUEST = QEvent.Type.LayoutRequest


class _DragWatcher(QObject):
    """Switches every :class:`PlotPanel` to draft quality while a slider or a plot is
    dragged (module docstring).

    Sliders are found when a plot is shown (every slider of its window) and followed by
    their ``sliderPressed`` and ``sliderReleased`` signals: no event filter taxes every
    event of the application.
    """

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.panels: weakref.WeakSet[PlotPanel] = weakref.WeakSet()
        self._sliders: weakref.WeakSet[QAbstractSlider] = weakref.WeakSet()
        self._held: set[int] = set()
        self._deferred: dict[int, QObject] = {}
        self.drafting = False

    def watch_sliders_of(self, window: QWidget) -> None:
        for slider in window.findChildren(QAbstractSlider):
            if slider not in self._sliders:
                self._sliders.add(slider)
                key = id(slider)
                slider.sliderPressed.connect(lambda key=key: self.press(key))
                slider.sliderReleased.connect(lambda key=key: self.release(key))
                slider.destroyed.connect(lambda _=None, key=key: self.release(key))

    def press(self, key: int) -> None:
        self._held.add(key)
        self._set_drafting(True)

    def release(self, key: int) -> None:
        self._held.discard(key)
        if not self._held:
            self._set_drafting(False)

    def _set_drafting(self, drafting: bool) -> None:
        if drafting == self.drafting:
            return
        self.drafting = drafting
        app = QApplication.instance()
        # None once the application is gone (a held slider destroyed at exit): no filter
        # to add or remove then.
        if app is not None:
            if drafting:
                app.installEventFilter(self)
            else:
                app.removeEventFilter(self)
        if not drafting:
            self._relayout_deferred()
        for panel in list(self.panels):
            # A panel of a closed window may linger as a Python wrapper after Qt deleted it.
            if shiboken6.isValid(panel):
                panel.set_draft(drafting)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """While drafting, hold back widgets' layout requests until the release.

        A label whose text changes asks its parent layout for a new geometry, and Qt
        passes that request up to the window (``QLayout::activate`` ends with the
        parent's ``updateGeometry``): every slider step would re-lay out the window and
        repaint the tab bar, the splitter handles and every word-wrapped label. A held
        back request leaves its layout waiting (Qt asks again only once it has run), so
        one request per widget is re-posted at the release.
        """
        if event.type() == _LAYOUT_REQUEST and watched.isWidgetType():
            self._deferred[id(watched)] = watched
            return True
        return False

    def _relayout_deferred(self) -> None:
        deferred, self._deferred = self._deferred, {}
        for widget in deferred.values():
            if shiboken6.isValid(widget):  # not deleted during the drag
                QApplication.postEvent(widget, QEvent(_LAYOUT_REQUEST))


_watcher = _DragWatcher()


def _cache_mode(draft: bool) -> QGraphicsItem.CacheMode:
    return (
        QGraphicsItem.CacheMode.DeviceCoordinateCache if draft else QGraphicsItem.CacheMode.NoCache
    )


def _draft_item(item, draft: bool) -> None:
    """Draft (or full) quality for one plot item; other items are left as they are."""
    if isinstance(item, pg.PlotDataItem):
        if not all(shiboken6.isValid(part) for part in (item.curve, item.scatter)):
            return
        item.opts["antialias"] = not draft
        item.setClipToView(draft)
        item.setDownsampling(auto=draft, method="peak")
        for part in (item.curve, item.scatter):
            part.opts["antialias"] = not draft
        item.curve.setCacheMode(_cache_mode(draft))
    elif isinstance(item, (pg.PlotCurveItem, pg.ScatterPlotItem)):
        item.opts["antialias"] = not draft


class ShortLegend(pg.LegendItem):
    """A legend that shows names on one line, escaped and cut to a readable length (a
    classifier named by a 32,000-character cell must not push the plot off the screen)."""

    def addItem(self, item, name):
        shown = formatting.short_text(name, formatting.LEGEND_TEXT_LIMIT)
        super().addItem(item, html.escape(shown, quote=False))


class CountAxis(pg.AxisItem):
    """Tick labels for counts, grouped by thousands as in the tables (``1,000``, not
    ``1000``)."""

    def __init__(self, orientation: str, **options):
        super().__init__(orientation, **options)
        self.enableAutoSIPrefix(False)

    def tickStrings(self, values, scale, spacing):
        if self.logMode or not spacing or spacing * scale < 1:
            return super().tickStrings(values, scale, spacing)
        return [f"{value * scale:,.0f}" for value in values]


def use_count_axis(plot: pg.PlotWidget, label: str, orientation: str = "left") -> None:
    """Give ``plot`` a :class:`CountAxis` on the ``orientation`` side, titled ``label``."""
    axis = CountAxis(orientation)
    axis.setGrid(plot.plotItem.getAxis(orientation).grid)  # keep the grid lines
    plot.plotItem.setAxisItems({orientation: axis})
    plot.setLabel(orientation, label)


class PlotPanel(pg.PlotWidget):
    """A ``PlotWidget`` with axis labels, a legend and a nearest-point read-out.

    Parameters
    ----------
    x_format, y_format
        How the read-out prints a coordinate (default: percent for y, 3 significant
        digits for x).
    """

    def __init__(
        self,
        title: str,
        x_label: str,
        y_label: str,
        *,
        x_units: str = "",
        y_units: str = "",
        log_x: bool = False,
        x_format: Callable[[float], str] = lambda x: f"{x:.3g}",
        y_format: Callable[[float], str] = formatting.percent,
        parent=None,
    ):
        super().__init__(parent=parent)
        self.setTitle(title, size="10pt")
        self.setLabel("bottom", x_label, units=x_units or None)
        self.setLabel("left", y_label, units=y_units or None)
        self.plotItem.getAxis("bottom").enableAutoSIPrefix(False)
        self.plotItem.getAxis("left").enableAutoSIPrefix(False)
        self.showGrid(x=True, y=True, alpha=0.25)
        self.setLogMode(x=log_x, y=False)
        self.legend = ShortLegend(offset=(-10, 10), labelTextSize="8pt")
        self.legend.setParentItem(self.plotItem.vb)
        self.plotItem.legend = self.legend
        self._log_x = log_x
        self._x_format = x_format
        self._y_format = y_format
        self.readout = pg.TextItem(
            color="#111",
            fill=pg.mkBrush(255, 255, 255, 220),
            border=pg.mkPen("#888"),
            anchor=(0, 1),
        )
        self.readout.setZValue(1000)
        self.readout.hide()
        self.addItem(self.readout, ignoreBounds=True)
        self._marker = pg.ScatterPlotItem(
            size=9, brush=pg.mkBrush(0, 0, 0, 0), pen=pg.mkPen("#111", width=1.5)
        )
        self._marker.setZValue(999)
        self.addItem(self._marker, ignoreBounds=True)
        self._mouse_proxy = pg.SignalProxy(
            self.scene().sigMouseMoved, rateLimit=60, slot=self._on_mouse_moved
        )
        # Right-click > Export... loads the exporters (desktop.plot_export) when first used.
        export_action = self.scene().contextMenu[0]
        export_action.triggered.disconnect()
        export_action.triggered.connect(self.show_export_dialog)
        # Small enough that every tab fits a 1280 x 800 laptop screen.
        self.setMinimumSize(220, 150)
        # The view paints its whole area (white background): Qt need not repaint the
        # widgets behind it when a curve moves.
        self.viewport().setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
        self.draft = False
        _watcher.panels.add(self)
        if _watcher.drafting:
            self.set_draft(True)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        _watcher.watch_sliders_of(self.window())

    def show_export_dialog(self) -> None:
        """pyqtgraph's export dialog (PNG, SVG through Qt, CSV) for the plot clicked."""
        import desktop.plot_export  # noqa: F401  (registers the SVG exporter)

        self.scene().showExportDialog()

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:  # a pan or zoom drag may start
            _watcher.press(id(self))
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        super().mouseReleaseEvent(event)
        if event.button() == Qt.MouseButton.LeftButton:
            _watcher.release(id(self))

    # --- draft frames while dragging (module docstring) --------------------------------

    def set_draft(self, draft: bool) -> None:
        """Draw in draft quality (``True``) or at full quality (``False``, then repaint)."""
        if draft == self.draft:
            return
        self.draft = draft
        for item in self.plotItem.items:
            if shiboken6.isValid(item):  # removed from the plot and deleted by Qt
                _draft_item(item, draft)
        for name in ("left", "bottom", "top", "right"):
            self.plotItem.getAxis(name).setCacheMode(_cache_mode(draft))
        self.setAntialiasing(not draft)
        self.viewport().update()

    def legend_below(self, columns: int = 3) -> pg.LegendItem:
        """Move the legend under the x axis, out of the data, in ``columns`` columns.

        For plots whose data may be anywhere (a trend over time): a legend inside the view
        would cover points whatever corner it takes. Curves added later still join it.
        """
        old = self.plotItem.legend
        legend = ShortLegend(offset=None, colCount=columns, labelTextSize="8pt")
        self.plotItem.layout.addItem(legend, 4, 1)
        self.plotItem.legend = legend
        self.legend = legend
        if old is not None:
            old.clear()
            old.hide()
        return legend

    def line(
        self,
        name: str | None,
        index: int = 0,
        *,
        width: float = LINE_WIDTH,
        style=None,
        color: str | None = None,
        symbol: str | None = None,
    ) -> pg.PlotDataItem:
        """A curve created once; callers update it with ``setData``."""
        item = pg.PlotDataItem(name=name, pen=pen(index, width, style, color))
        if self.draft:  # created while a drag is drafting: join it
            _draft_item(item, True)
        if symbol:
            item.setSymbol(symbol)
            item.setSymbolBrush(pg.mkBrush(color or PALETTE[index % len(PALETTE)]))
            item.setSymbolSize(7)
        self.addItem(item)
        return item

    def vertical_marker(self, label: str, index: int = 6, style=None) -> pg.InfiniteLine:
        """A vertical line with a label (``s*``, current ``s``, a prevalence)."""
        line = pg.InfiniteLine(
            angle=90,
            movable=False,
            pen=pen(index, 1.5, style or Qt.PenStyle.DashLine),
            label=label,
            labelOpts={"position": 0.92, "color": "#222", "fill": (255, 255, 255, 200)},
        )
        self.addItem(line, ignoreBounds=True)
        return line

    def set_marker_x(self, line: pg.InfiniteLine, x: float | None) -> None:
        """Place a vertical marker at data ``x`` (log-transformed on a log axis)."""
        if x is None or not np.isfinite(x) or (self._log_x and x <= 0):
            line.hide()
            return
        line.show()
        line.setValue(np.log10(x) if self._log_x else x)

    # --- hover read-out ----------------------------------------------------------------

    def nearest_point(self, scene_pos: QPointF):
        """``(name, x, y)`` of the data point nearest to ``scene_pos`` in pixels, or None."""
        view_box = self.plotItem.vb
        if not view_box.sceneBoundingRect().contains(scene_pos):
            return None
        best = None
        for item in self.plotItem.listDataItems():
            # getData() returns display coordinates: x is already log10 on a log axis.
            x_view, y = item.getData()
            if x_view is None or len(x_view) == 0 or not item.isVisible():
                continue
            x_view = np.asarray(x_view, dtype=float)
            x = 10.0**x_view if self._log_x else x_view
            y_view = np.asarray(y, dtype=float)
            (x0, x1), (y0, y1) = view_box.viewRange()
            rect = view_box.sceneBoundingRect()
            mouse = view_box.mapSceneToView(scene_pos)
            dx = (x_view - mouse.x()) / (x1 - x0) * rect.width()
            dy = (y_view - mouse.y()) / (y1 - y0) * rect.height()
            distance = np.hypot(dx, dy)
            if np.all(np.isnan(distance)):
                continue
            i = int(np.nanargmin(distance))
            if best is None or distance[i] < best[0]:
                best = (distance[i], item.name() or "", float(x[i]), float(y[i]), x_view[i])
        if best is None or best[0] > 40:
            return None
        return best[1:]

    def read_out_text(self, name: str, x: float, y: float) -> str:
        """What hovering a point shows: the curve's name, then each coordinate after its
        axis title (``"Recall: 60.6 %"``), never a bare ``x =``."""
        x_title = self.plotItem.getAxis("bottom").labelText or "x"
        y_title = self.plotItem.getAxis("left").labelText or "y"
        prefix = f"{name}\n" if name else ""
        return f"{prefix}{x_title}: {self._x_format(x)}\n{y_title}: {self._y_format(y)}"

    def _on_mouse_moved(self, event) -> None:
        found = self.nearest_point(event[0])
        if found is None:
            self.readout.hide()
            self._marker.setData([], [])
            return
        name, x, y, x_view = found
        self.readout.setText(self.read_out_text(name, x, y))
        self.readout.setPos(x_view, y)
        self.readout.show()
        self._marker.setData([x_view], [y])
