"""Shared input widgets bound to a :class:`~desktop.session_model.SessionModel` path.

Every widget here shows one session input (``"plan.s"``, ``"confidence"``) and writes it
back through :meth:`SessionModel.set_value`, so each edit is one undo step and a refused
value is announced by the session's ``refused`` signal (the status bar shows it) while the
widget snaps back to what the session holds. Widget -> session and session -> widget
updates are guarded with :class:`QSignalBlocker` so the two directions never loop.

* :class:`LogSliderSpin` - a log-scale slider with a spin box; one drag is one undo step.
* :class:`PercentSpin` - a fraction shown and typed as a percentage.
* :class:`CountSpin` - a whole number with thousands separators; accepts ``1 251 000``.
* :class:`NumberSpin` - a plain real number (costs, prior strength, alphas).
* :class:`ChoiceCombo`, :class:`BoundCheck` - a choice or a switch.
* :class:`PopulationInput` - the population as counts ``N1``/``N0`` or as ``k``.
* :class:`ConfidenceBox` - the session-wide confidence level.

:func:`guard_wheel` makes the mouse wheel scroll a panel rather than change the field
that happens to be under the pointer; a field the user clicked into (it has the focus)
still takes the wheel, and a burst of wheel clicks is one undo step.
"""

from __future__ import annotations

import itertools
import logging
import math
import re
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QEvent, QObject, QSignalBlocker, Qt, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence, QValidator, QWheelEvent
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollBar,
    QSlider,
    QSpinBox,
    QStackedWidget,
    QWidget,
)

from desktop import formatting
from desktop.session_model import SessionModel, field_label

logger = logging.getLogger(__name__)

#: Largest count a :class:`CountSpin` holds: every whole number up to it is exact as a
#: double (2^53), above the largest count the core accepts (10^15).
MAX_COUNT = 2**53

_drag_counter = itertools.count(1)


def affects(changed: str, path: str) -> bool:
    """True when a change announced for ``changed`` may alter the value at ``path``.

    ``""`` means the whole state changed; a parent path (``"plan"``) covers its children
    and a child path (``"plan.population.k"``) touches every parent that shows it.
    """
    return (
        changed == ""
        or changed == path
        or path.startswith(changed + ".")
        or changed.startswith(path + ".")
    )


#: Fields that the wheel changes: guarded by :func:`guard_wheel` (scroll bars excepted).
WHEEL_FIELDS = (QAbstractSpinBox, QComboBox, QAbstractSlider)


def enclosing_scroll_area(widget: QWidget) -> QAbstractScrollArea | None:
    """The nearest scroll area ``widget`` sits in, or None."""
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea):
            return parent
        parent = parent.parentWidget()
    return None


class WheelGuard(QObject):
    """Event filter: the wheel over a field without focus scrolls its panel instead.

    A field without focus hands the wheel event to the scroll area it sits in (the
    panel scrolls, the value stays); outside a scroll area the event goes to the parent
    as if the field were not there. A field with focus (clicked or tabbed into) takes
    the wheel as usual.
    """

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if not isinstance(event, QWheelEvent) or not isinstance(watched, QWidget):
            return False
        if watched.hasFocus():
            return False
        area = enclosing_scroll_area(watched)
        if area is None:
            event.ignore()  # travels on to the parent, which scrolls if it can
            return True
        viewport = area.viewport()
        forwarded = QWheelEvent(
            viewport.mapFromGlobal(event.globalPosition()),
            event.globalPosition(),
            event.pixelDelta(),
            event.angleDelta(),
            event.buttons(),
            event.modifiers(),
            event.phase(),
            event.inverted(),
        )
        QApplication.sendEvent(viewport, forwarded)
        event.accept()
        return True


def guard_wheel(root: QWidget) -> int:
    """Let the wheel scroll ``root``'s panels: guard every spin box, combo box and slider
    in it with a :class:`WheelGuard` (call again after adding fields; it is idempotent).

    The fields take focus by click or Tab only (``StrongFocus``), never by the wheel, so
    scrolling past a field does not arm it. Returns how many fields are guarded.
    """
    guard = root.findChild(WheelGuard, "wheel_guard")
    if guard is None:
        guard = WheelGuard(root)
        guard.setObjectName("wheel_guard")
    fields = [
        widget
        for widget in root.findChildren(QWidget)
        if isinstance(widget, WHEEL_FIELDS) and not isinstance(widget, QScrollBar)
    ]
    for widget in fields:
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        widget.installEventFilter(guard)
    return len(fields)


class _WrappedHeightKeeper(QObject):
    """Event filter: a word-wrapped label keeps the height its text needs at its width."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # Paint comes after a new text too (setText sends the label no other event).
        if event.type() in self._EVENTS and isinstance(watched, QLabel):
            fit_wrapped_height(watched)
        return False

    _EVENTS = (QEvent.Type.Resize, QEvent.Type.Show, QEvent.Type.Paint)


def fit_wrapped_height(label: QLabel) -> None:
    """Make ``label``'s minimum height what its wrapped text needs at its present width."""
    if label.width() <= 0:
        return
    needed = label.heightForWidth(label.width())
    if needed > 0 and needed != label.minimumHeight():
        label.setMinimumHeight(needed)


def keep_wrapped_height(label: QLabel) -> QLabel:
    """Let a word-wrapped ``label`` claim the lines it needs as its width changes.

    A layout short of height squeezes a wrapping label down to one line (its minimum),
    cutting the rest; with this, the layout keeps room for every line and the scroll area
    or window around it grows instead (a new text is fitted when it is painted).
    """
    label.setWordWrap(True)
    keeper = label.findChild(_WrappedHeightKeeper)
    if keeper is None:
        label.installEventFilter(_WrappedHeightKeeper(label))
    return label


class _SessionUndo(QObject):
    """Ctrl+Z / Ctrl+Y in a field whose entry was taken go to the session's undo.

    A line edit claims the undo keys for itself even when it has nothing to undo (its
    text was just set from the session), so a spreadsheet user's Ctrl+Z right after Enter
    did nothing. While the user is still typing, the field keeps its own undo.
    """

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if isinstance(event, QKeyEvent) and event.type() == QEvent.Type.ShortcutOverride:
            editor = watched.lineEdit() if isinstance(watched, QAbstractSpinBox) else watched
            if not isinstance(editor, QLineEdit):
                return False
            if event.matches(QKeySequence.StandardKey.Undo) and not editor.isUndoAvailable():
                return True  # not the field's: the window's Edit > Undo takes it
            if event.matches(QKeySequence.StandardKey.Redo) and not editor.isRedoAvailable():
                return True
        return False


_SESSION_UNDO = _SessionUndo()


class _Bound:
    """Mixin: keeps one widget in step with ``session`` at ``path``.

    Subclasses implement :meth:`_show` (put a value into the widget with signals blocked)
    and call :meth:`_commit` with the user's value.
    """

    _session: SessionModel
    _path: str

    def _bind(self, session: SessionModel, path: str) -> None:
        self._session = session
        self._path = path
        session.changed.connect(self._on_session_changed)
        self._show(session.get(path))
        if isinstance(self, QLineEdit | QAbstractSpinBox):
            # On the field itself: a spin box hands the shortcut check to its line edit
            # directly, past any filter on the line edit.
            self.installEventFilter(_SESSION_UNDO)

    @property
    def path(self) -> str:
        return self._path

    def _on_session_changed(self, changed: str) -> None:
        if affects(changed, self._path):
            self._show(self._session.get(self._path))

    def _commit(self, value: Any, *, merge_key: str | None = None) -> str | None:
        # Edits of one field in quick succession (wheel clicks, arrow keys) are one step.
        message = self._session.set_value(
            self._path, value, merge_key=merge_key, burst=merge_key is None
        )
        if message:
            # Refused: the session kept its value; show it again in place of the typo.
            self._show(self._session.get(self._path))
        return message

    def _show(self, value: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _kept_after(self: Any, text: str) -> str:
        """A spin box's ``fixup``: the value kept, shown again, and said where refusals are
        said (the status bar) when something else was typed; a spin box otherwise puts its
        old value back without a word."""
        kept = self.textFromValue(self.value())
        if self.specialValueText() and self.value() == self.minimum():
            kept = self.specialValueText()  # "off", as the field shows it
        typed = text.strip()
        session, path = getattr(self, "refusals_to", (getattr(self, "_session", None), None))
        path = str(path or getattr(self, "_path", ""))
        if session is not None and typed and typed != kept:
            allowed = (
                f"{self.textFromValue(self.minimum())} to {self.textFromValue(self.maximum())}"
            )
            why = f"{formatting.short_text(typed, 24)} is outside {allowed}"
            parse = getattr(self, "parse", None)
            if parse is not None:
                try:
                    parse(typed)
                except ValueError as exc:  # not a number at all ("1.251.000"): say why
                    why = str(exc)
            session.refused.emit(path, f"{field_label(path)}: {why}; it stays {kept}")
        return kept


def _typing(parse, minimum: float, maximum: float, text: str, pos: int, decimals: int = 0):
    """A spin box's ``validate``: the whole text judged, never a keystroke dropped.

    A text that is not (yet) a number in range is Intermediate, so it stays as typed until
    Enter or leaving the field, where ``fixup`` says why it was refused. Qt drops the
    keystrokes its validator calls Invalid, which silently made ``1.251.000`` typed key by
    key into 1 and ``0,5`` into 5 (fuzz 17).
    """
    try:
        value = parse(text)
    except ValueError:
        return QValidator.State.Intermediate, text, pos
    # The spin box rounds to its decimals: 0.0004 % shows as the minimum it becomes.
    if minimum <= round(value, decimals) <= maximum:
        return QValidator.State.Acceptable, text, pos
    return QValidator.State.Intermediate, text, pos


# --- spin boxes ---------------------------------------------------------------------------


class CountSpin(_Bound, QDoubleSpinBox):
    """A whole number with thousands separators, typed or pasted like in a spreadsheet.

    ``1,251,000``, ``1 251 000`` and ``1251000`` are all accepted. With ``path=None`` it is
    an unbound spin box (the :class:`LogSliderSpin` drives it itself). An identifier such
    as a random seed is a number but not a quantity: ``separators=False`` shows ``2023``,
    not ``2,023``.

    A double spin box with no decimals, not a ``QSpinBox``: that one holds 32-bit values
    only, and a mail population or a seed can be larger. Whole numbers are exact up to
    2^53 (:data:`MAX_COUNT`); :meth:`value` is an ``int``.
    """

    def __init__(
        self,
        session: SessionModel | None = None,
        path: str | None = None,
        *,
        minimum: int = 0,
        maximum: int = MAX_COUNT,
        tooltip: str = "",
        separators: bool = True,
        parent: QWidget | None = None,
    ):
        QDoubleSpinBox.__init__(self, parent)
        self._separators = separators
        self.setDecimals(0)
        self.setRange(minimum, maximum)
        self.setKeyboardTracking(False)  # one edit per Enter/focus-out, not per keystroke
        self.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.setAccelerated(True)
        self.setToolTip(tooltip)
        self.setMinimumWidth(110)
        if session is not None and path is not None:
            self._bind(session, path)
            self.valueChanged.connect(self._on_value_changed)

    def value(self) -> int:
        return int(QDoubleSpinBox.value(self))

    def minimum(self) -> int:
        return int(QDoubleSpinBox.minimum(self))

    def maximum(self) -> int:
        return int(QDoubleSpinBox.maximum(self))

    def textFromValue(self, value: float) -> str:
        return formatting.thousands(int(value)) if self._separators else str(int(value))

    def valueFromText(self, text: str) -> float:
        try:
            return float(formatting.parse_count(text))
        except ValueError:
            return float(self.value())

    @staticmethod
    def parse(text: str) -> int:
        """The count ``text`` holds (:func:`formatting.parse_count`)."""
        return formatting.parse_count(text)

    def validate(self, text: str, pos: int):
        return _typing(self.parse, self.minimum(), self.maximum(), text, pos)

    def fixup(self, text: str) -> str:
        return self._kept_after(text)

    def _show(self, value: Any) -> None:
        shown = int(value)
        if not self.minimum() <= shown <= self.maximum():
            # The session's checks keep its values within the field's range; a spin box
            # cannot show one beyond it (Qt raises), so the field says its bound instead.
            logger.warning("%s holds %s, beyond its field's range", self._path, value)
            shown = min(max(shown, self.minimum()), self.maximum())
        with QSignalBlocker(self):
            self.setValue(shown)

    def _on_value_changed(self, value: int) -> None:
        self._commit(int(value))


class NumberSpin(_Bound, QDoubleSpinBox):
    """A real number bound to ``path`` (label costs, prior strength, an alpha)."""

    def __init__(
        self,
        session: SessionModel | None = None,
        path: str | None = None,
        *,
        minimum: float = 0.0,
        maximum: float = 1e9,
        decimals: int = 2,
        step: float = 1.0,
        suffix: str = "",
        tooltip: str = "",
        parent: QWidget | None = None,
    ):
        QDoubleSpinBox.__init__(self, parent)
        self.setDecimals(decimals)
        self.setRange(minimum, maximum)
        self.setSingleStep(step)
        self.setKeyboardTracking(False)
        self.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.setGroupSeparatorShown(True)
        self.setAccelerated(True)
        if suffix:
            self.setSuffix(suffix)
        self.setToolTip(tooltip)
        if session is not None and path is not None:
            self._bind(session, path)
            self.valueChanged.connect(self._on_value_changed)

    @staticmethod
    def parse(text: str) -> float:
        """The number ``text`` holds (:func:`formatting.parse_number`)."""
        return formatting.parse_number(text)

    def textFromValue(self, value: float) -> str:
        # Written as parse reads it (1,000.50), whatever the system's locale.
        return f"{value:,.{self.decimals()}f}"

    def valueFromText(self, text: str) -> float:
        try:
            return self.parse(text.removesuffix(self.suffix()))
        except ValueError:
            return self.value()

    def validate(self, text: str, pos: int):
        text_only = text.removesuffix(self.suffix()) if self.suffix() else text
        state, _, _ = _typing(
            self.parse, self.minimum(), self.maximum(), text_only, pos, self.decimals()
        )
        return state, text, pos

    def fixup(self, text: str) -> str:
        return self._kept_after(text.removesuffix(self.suffix()) if self.suffix() else text)

    def _show(self, value: Any) -> None:
        with QSignalBlocker(self):
            self.setValue(float(value))

    def _on_value_changed(self, value: float) -> None:
        self._commit(float(value))


class PercentSpin(NumberSpin):
    """A fraction in the session (``0.05``) shown and typed as a percentage (``5.0 %``).

    Typing follows a percent-formatted cell in Excel with automatic percent entry
    (:func:`formatting.parse_percent`): ``85``, ``85 %`` and ``0.85`` all mean 85 %, while
    ``0.5 %`` (with the sign) stays 0.5 %. The ``%`` is part of the text rather than a
    Qt suffix, so selecting the field selects the sign too and what the user types
    decides whether there is one.
    """

    #: Added to every percent field's tooltip.
    TYPING_HINT = (
        "Type 85, 85 % or 0.85 for 85 %: a number below 1 without a % sign is read as a "
        "fraction. For a rate below 1 % type the sign: 0.5 %."
    )

    def __init__(
        self,
        session: SessionModel | None = None,
        path: str | None = None,
        *,
        minimum: float = 0.1,
        maximum: float = 99.9,
        decimals: int = 1,
        step: float = 0.5,
        tooltip: str = "",
        parent: QWidget | None = None,
    ):
        tooltip = f"{tooltip.rstrip()}\n{self.TYPING_HINT}" if tooltip else self.TYPING_HINT
        super().__init__(
            session,
            path,
            minimum=minimum,
            maximum=maximum,
            decimals=decimals,
            step=step,
            tooltip=tooltip,
            parent=parent,
        )
        self.setMinimumWidth(90)

    def fraction(self) -> float:
        return self.value() / 100.0

    def textFromValue(self, value: float) -> str:
        # Fields that hold many decimals (a prevalence of 0.0015 %) show the ones in use,
        # down to the two every percentage shows: "2.00 %", "0.001 %", not "2.000 %".
        text = QDoubleSpinBox.textFromValue(self, value)
        point = self.locale().decimalPoint()
        if point in text:
            keep = min(self.decimals(), 2)
            whole, _, decimals = text.partition(point)
            decimals = decimals.rstrip("0").ljust(keep, "0")
            text = f"{whole}{point}{decimals}" if decimals else whole
        return text + " %"

    def valueFromText(self, text: str) -> float:
        try:
            return formatting.parse_percent(text) * 100.0
        except ValueError:
            return self.value()

    @staticmethod
    def parse(text: str) -> float:
        """The percentage ``text`` holds, in percent (:func:`formatting.parse_percent`)."""
        return formatting.parse_percent(text) * 100.0

    def validate(self, text: str, pos: int):
        return _typing(self.parse, self.minimum(), self.maximum(), text, pos, self.decimals())

    def fixup(self, text: str) -> str:
        return self._kept_after(text)

    def _show(self, value: Any) -> None:
        with QSignalBlocker(self):
            self.setValue(float(value) * 100.0)

    def _on_value_changed(self, value: float) -> None:
        # round() drops the binary noise of value/100 (5.0 % -> 0.05, not 0.05000000000000001)
        self._commit(round(value / 100.0, self.decimals() + 2))


# --- choices ------------------------------------------------------------------------------


class ChoiceCombo(_Bound, QComboBox):
    """One of a few values, each shown with a readable label and its own tooltip.

    ``choices`` is a sequence of ``(value, label, tooltip)``.
    """

    def __init__(
        self,
        session: SessionModel,
        path: str,
        choices: Sequence[tuple[Any, str, str]],
        *,
        tooltip: str = "",
        parent: QWidget | None = None,
    ):
        QComboBox.__init__(self, parent)
        for value, label, item_tip in choices:
            self.addItem(label, value)
            self.setItemData(self.count() - 1, item_tip, Qt.ItemDataRole.ToolTipRole)
        self.setToolTip(tooltip)
        self._bind(session, path)
        self.currentIndexChanged.connect(self._on_index_changed)

    def _show(self, value: Any) -> None:
        index = self.findData(value)
        with QSignalBlocker(self):
            self.setCurrentIndex(index)

    def _on_index_changed(self, index: int) -> None:
        if index >= 0:
            self._commit(self.itemData(index))


class BoundCheck(_Bound, QWidget):
    """A yes/no input (Bayesian curves, finite population correction)."""

    def __init__(
        self,
        session: SessionModel,
        path: str,
        text: str,
        *,
        tooltip: str = "",
        parent: QWidget | None = None,
    ):
        from PySide6.QtWidgets import QCheckBox

        QWidget.__init__(self, parent)
        self.box = QCheckBox(text, self)
        self.box.setToolTip(tooltip)
        self.setToolTip(tooltip)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.box)
        self._bind(session, path)
        self.box.toggled.connect(self._on_toggled)

    def isChecked(self) -> bool:
        return self.box.isChecked()

    def _show(self, value: Any) -> None:
        with QSignalBlocker(self.box):
            self.box.setChecked(bool(value))

    def _on_toggled(self, checked: bool) -> None:
        self._commit(bool(checked))


# --- log slider ---------------------------------------------------------------------------


class LogSliderSpin(_Bound, QWidget):
    """A slider on a log scale and a spin box, both showing the session value at ``path``.

    Dragging the slider writes every position to the session (so plots follow live) under
    one merge key per press: the whole drag is one undo step, two drags are two steps.
    Keyboard and wheel moves on the slider, and edits in the spin box, are steps of their
    own unless they follow each other within a second (a wheel burst is one step).
    ``integer=True`` uses a :class:`CountSpin` (``v``); otherwise a
    :class:`QDoubleSpinBox` with ``decimals``.

    Signals
    -------
    valueChanged(float)
        The value the user chose (after rounding to the spin box's precision).
    """

    valueChanged = Signal(float)

    def __init__(
        self,
        session: SessionModel,
        path: str,
        *,
        minimum: float,
        maximum: float,
        decimals: int = 2,
        integer: bool = False,
        steps: int = 1000,
        tooltip: str = "",
        parent: QWidget | None = None,
    ):
        QWidget.__init__(self, parent)
        if not 0 < minimum < maximum:
            raise ValueError(f"a log slider needs 0 < minimum < maximum, got {minimum}, {maximum}")
        self._minimum = float(minimum)
        self._maximum = float(maximum)
        self._steps = int(steps)
        self._integer = integer
        self._decimals = 0 if integer else decimals
        self._drag_key: str | None = None
        self._last_written: float | None = None

        self.slider = QSlider(Qt.Orientation.Horizontal, self)
        self.slider.setRange(0, self._steps)
        self.slider.setSingleStep(max(1, self._steps // 200))
        self.slider.setPageStep(max(1, self._steps // 20))
        self.slider.setToolTip(tooltip + "\nDrag for a live preview; one drag is one undo step.")
        if integer:
            self.spin: QSpinBox | QDoubleSpinBox = CountSpin(
                minimum=math.ceil(minimum), maximum=math.floor(maximum), tooltip=tooltip
            )
        else:
            self.spin = NumberSpin(
                minimum=minimum,
                maximum=maximum,
                decimals=decimals,
                step=10 ** (-decimals) * 10 if decimals else 1,
                tooltip=tooltip,
            )
            self.spin.setMinimumWidth(80)
        # Unbound, the box says what it refused under this slider's field.
        self.spin.refusals_to = (session, path)  # type: ignore[union-attr]
        self.spin.setParent(self)
        # Bound through this widget, not itself: Ctrl+Z after an entry still goes to the
        # session's undo (see _SessionUndo).
        self.spin.installEventFilter(_SESSION_UNDO)
        self.setToolTip(tooltip)

        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.spin)

        self.slider.sliderPressed.connect(self._on_slider_pressed)
        self.slider.sliderReleased.connect(self._on_slider_released)
        self.slider.valueChanged.connect(self._on_slider_moved)
        self.spin.valueChanged.connect(self._on_spin_changed)
        self._bind(session, path)

    # mapping ------------------------------------------------------------------------------

    def position_of(self, value: float) -> int:
        """Slider position (0..steps) of ``value`` on the log scale, clamped to the range."""
        value = min(max(float(value), self._minimum), self._maximum)
        fraction = math.log(value / self._minimum) / math.log(self._maximum / self._minimum)
        return round(fraction * self._steps)

    def value_at(self, position: int) -> float:
        """The (rounded) value at slider ``position``."""
        fraction = position / self._steps
        raw = self._minimum * (self._maximum / self._minimum) ** fraction
        return float(round(raw)) if self._integer else round(raw, self._decimals)

    def value(self) -> float:
        return float(self.spin.value())

    def setValue(self, value: float) -> None:
        """Set the value as the user would by typing it (one undo step)."""
        self._write(value, None)

    # events -------------------------------------------------------------------------------

    def _on_slider_pressed(self) -> None:
        # A fresh key per press: this drag merges into one step, the next drag is another.
        self._drag_key = f"{self._path}:drag:{next(_drag_counter)}"

    def _on_slider_released(self) -> None:
        self._drag_key = None

    def _on_slider_moved(self, position: int) -> None:
        value = self.value_at(position)
        self._show_in_spin(value)
        self._write(value, self._drag_key if self.slider.isSliderDown() else None)

    def _on_spin_changed(self, value: float) -> None:
        with QSignalBlocker(self.slider):
            self.slider.setValue(self.position_of(value))
        self._write(value, None)

    def _write(self, value: float, merge_key: str | None) -> None:
        value = round(value) if self._integer else float(value)
        self._last_written = float(value)
        if self._commit(value, merge_key=merge_key) is None:
            self.valueChanged.emit(float(value))

    def _show_in_spin(self, value: float) -> None:
        with QSignalBlocker(self.spin):
            if isinstance(self.spin, QSpinBox):  # the integer=True CountSpin
                self.spin.setValue(round(value))
            else:
                self.spin.setValue(value)

    def _show(self, value: Any) -> None:
        value = float(value)
        self._show_in_spin(value)
        # While dragging, the handle stays where the mouse put it; moving it to the rounded
        # value's position would make it jitter under the cursor.
        if not (self.slider.isSliderDown() and value == self._last_written):
            with QSignalBlocker(self.slider):
                self.slider.setValue(self.position_of(value))


# --- population -----------------------------------------------------------------------------


#: Thousands set off by commas (``41,200``), not a decimal comma (``0,033``).
_GROUPED_THOUSANDS = re.compile(r"[1-9]\d{0,2}(?:,\d{3})+")


def _ratio_part(text: str) -> float:
    """One number of a ratio: ``41,200`` (thousands) or ``0,033`` (a decimal comma)."""
    if _GROUPED_THOUSANDS.fullmatch(text):
        return float(text.replace(",", ""))
    if text.count(",") == 1 and "." not in text:
        return float(text.replace(",", "."))
    return float(text)


def parse_ratio(text: str) -> float:
    """``k`` typed as ``1/19``, ``0.0526``, ``0,0526``, ``41,200/1,251,000`` or ``5.26 %``;
    raises ``ValueError`` with a reason."""
    cleaned = text.strip().replace(" ", "")
    if not cleaned:
        raise ValueError("type k as a fraction such as 1/30 or a number such as 0.033")
    shown = repr(formatting.short_text(text.strip(), 24))  # a long paste, cut (fuzz 17)
    try:
        if "/" in cleaned:
            numerator, _, denominator = cleaned.partition("/")
            value = _ratio_part(numerator) / _ratio_part(denominator)
        elif cleaned.endswith("%"):
            value = _ratio_part(cleaned[:-1]) / 100.0
        else:
            value = _ratio_part(cleaned)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"{shown} is not a ratio: type 1/30 or 0.033") from None
    if not math.isfinite(value):
        # 1e400 and nan were "k must be > 0" (fuzz 17).
        raise ValueError(f"{shown} is not a finite number: type k as 1/30 or 0.033")
    if value <= 0:
        raise ValueError(f"k must be > 0, got {shown}")
    return value


def ratio_text(k: float) -> str:
    """How ``k`` is written back into its field: ``1/30.4`` for small ratios."""
    if 0 < k < 1:
        return f"1/{1 / k:.4g}"
    return f"{k:.4g}"


class RatioEdit(_Bound, QLineEdit):
    """``k = N1/N0`` typed as ``1/30`` or ``0.033`` (spreadsheet users think in "1 in 30")."""

    def __init__(self, session: SessionModel, path: str, *, tooltip: str = "", parent=None):
        QLineEdit.__init__(self, parent)
        self.setToolTip(tooltip)
        self.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.setMinimumWidth(110)
        self._bind(session, path)
        self.editingFinished.connect(self._on_edited)

    def _show(self, value: Any) -> None:
        self._shown = ratio_text(float(value))
        with QSignalBlocker(self):
            self.setText(self._shown)

    def _on_edited(self) -> None:
        if self.text() == self._shown:
            # Enter or leaving the field without typing: the rounded text shown ("1/30.36")
            # is not the value held, so reading it back would change k.
            return
        try:
            value = parse_ratio(self.text())
        except ValueError as exc:
            self._session.refused.emit(self._path, str(exc))
            self._show(self._session.get(self._path))
            return
        if not math.isclose(value, self._session.get(self._path), rel_tol=1e-4):
            self._commit(value)
        else:
            self._show(self._session.get(self._path))


class PopulationInput(QWidget):
    """The population as both counts (``N1``, ``N0``) or as the ratio ``k`` alone.

    Bound to a :class:`core.session.PopulationInputs` at ``path``; a readout shows the
    ``k`` the computations use (with its ``1/x`` form). Switching to "k only" carries the
    current ratio over, so nothing the user entered is lost.
    """

    def __init__(self, session: SessionModel, path: str = "plan.population", parent=None):
        super().__init__(parent)
        self._session = session
        self._path = path
        self.mode = ChoiceCombo(
            session,
            f"{path}.mode",
            [
                ("counts", "Population counts", "Give both stratum sizes N1 and N0."),
                ("k", "Ratio k only", "Give only k = N1/N0 (e.g. 1/30)."),
            ],
            tooltip="How the unlabeled population is described: both counts, or k = N1/N0.",
        )
        self.mode.currentIndexChanged.disconnect(self.mode._on_index_changed)
        self.mode.currentIndexChanged.connect(self._on_mode_changed)
        self.positives = CountSpin(
            session,
            f"{path}.predicted_positive",
            minimum=1,
            tooltip="N1: items the classifier predicts positive in the whole population "
            "(the predicted-positive stratum).",
        )
        self.negatives = CountSpin(
            session,
            f"{path}.predicted_negative",
            minimum=1,
            tooltip="N0: items the classifier predicts negative in the whole population "
            "(the predicted-negative stratum).",
        )
        self.k_edit = RatioEdit(
            session,
            f"{path}.k",
            tooltip="k = N1/N0, the imbalance ratio: predicted positives per predicted "
            "negative. Type 1/30 or 0.033.",
        )
        self.k_readout = QLabel(self)
        self.k_readout.setToolTip("The k = N1/N0 that every computation on this tab uses.")

        counts_page = QWidget(self)
        counts_form = QFormLayout(counts_page)
        counts_form.setContentsMargins(0, 0, 0, 0)
        counts_form.addRow("Predicted positive N1", self.positives)
        counts_form.addRow("Predicted negative N0", self.negatives)
        k_page = QWidget(self)
        k_form = QFormLayout(k_page)
        k_form.setContentsMargins(0, 0, 0, 0)
        k_form.addRow("k = N1/N0", self.k_edit)
        self.pages = QStackedWidget(self)
        self.pages.addWidget(counts_page)
        self.pages.addWidget(k_page)

        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addRow("Population given as", self.mode)
        layout.addRow(self.pages)
        layout.addRow("Imbalance k", self.k_readout)
        session.changed.connect(self._on_session_changed)
        self._refresh()

    def effective_k(self) -> float | None:
        return self._session.get(self._path).effective_k

    def _on_mode_changed(self, index: int) -> None:
        mode = self.mode.itemData(index)
        changes: list[tuple[str, Any]] = [(f"{self._path}.mode", mode)]
        current_k = self.effective_k()
        if mode == "k" and current_k is not None:
            changes.append((f"{self._path}.k", current_k))
        if self._session.set_values(changes, text="Population given as " + mode):
            self._refresh()

    def _on_session_changed(self, changed: str) -> None:
        if affects(changed, self._path):
            self._refresh()

    def _refresh(self) -> None:
        population = self._session.get(self._path)
        self.mode._show(population.mode)
        self.pages.setCurrentIndex(0 if population.mode == "counts" else 1)
        self.k_readout.setText(formatting.ratio(population.effective_k))


class ConfidenceBox(_Bound, QComboBox):
    """The confidence (credibility) level the whole session uses, as a percentage.

    The usual levels are listed; any level between 50 % and 99.99 % can be typed, as in
    the percent fields (``95``, ``95 %`` or ``0.95``).
    """

    LEVELS = (0.80, 0.90, 0.95, 0.99)

    def __init__(self, session: SessionModel, path: str = "confidence", parent=None):
        QComboBox.__init__(self, parent)
        self.setEditable(True)
        self.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        for level in self.LEVELS:
            self.addItem(formatting.percent(level, 0), level)
        self.setToolTip(
            "Confidence (credibility) level c of every interval and margin in the session, "
            "e.g. 95 %: z = Φ⁻¹(1 − (1 − c)/2). Shared by all tabs. Type 95, 95 % or 0.95."
        )
        line_edit = self.lineEdit()
        if line_edit is None:
            raise RuntimeError("setEditable(True) gave the confidence box no line edit")
        line_edit.setAlignment(Qt.AlignmentFlag.AlignRight)
        self._bind(session, path)
        self.activated.connect(self._on_activated)
        line_edit.editingFinished.connect(self._on_text_edited)

    def _show(self, value: Any) -> None:
        with QSignalBlocker(self):
            index = self.findData(float(value))
            if index >= 0:
                self.setCurrentIndex(index)
            self.setEditText(formatting.percent(float(value), None if index < 0 else 0))

    def _on_activated(self, index: int) -> None:
        self._commit(float(self.itemData(index)))

    def _on_text_edited(self) -> None:
        # The percent fields' rule: 95, 95 % and 0.95 are 95 %; 0.5 % is 0.5 % (refused).
        try:
            level = formatting.parse_percent(self.currentText())
        except ValueError:
            self._session.refused.emit(
                self._path,
                # Cut: a 10,000-character paste gave as long a status line (fuzz 17).
                f"confidence: {formatting.short_text(self.currentText(), 24)!r} is not a "
                "percentage",
            )
            self._show(self._session.get(self._path))
            return
        if not math.isclose(level, self._session.get(self._path)):
            self._commit(round(level, 6))
        else:
            self._show(self._session.get(self._path))
