"""Prior editor: the four Beta parameters, presets and live densities (methods §5, 4.3).

The prior lives in the session at ``plan.prior`` with its preset name at
``plan.prior_preset`` and the strength ``w`` at ``plan.prior_strength``. A preset prior is
*derived*: :func:`follow_prior_preset` rebuilds it with :mod:`core.bayes` whenever what it
was made from changes (expected precision/recall, ``k``, ``w``, the previous round), inside
the same undo step as that edit. Typing an alpha turns the preset into "custom", after
which the prior stays as typed.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import QComboBox, QFormLayout, QGridLayout, QLabel, QVBoxLayout, QWidget

from core.bayes import Prior, beta_density
from core.errors import InputError
from core.session import PlanInputs, PriorPreset, SessionState, replace_path
from desktop import formatting
from desktop.plotting import PlotPanel
from desktop.session_model import SessionModel
from desktop.widgets import NumberSpin, affects

#: (preset, label, tooltip) in the order the preset box lists them.
PRESETS = (
    (
        "none",
        "None (the paper's default)",
        "No prior: all four pretend counts (α) are 0, only the labels count.",
    ),
    (
        "jeffreys",
        "Jeffreys (0.5 per count)",
        "Jeffreys prior: half a pretend label in each of the four counts (α = 0.5).",
    ),
    (
        "uniform",
        "Uniform (1 per count)",
        "Uniform prior: one pretend label in each of the four counts (α = 1).",
    ),
    (
        "expected",
        "From expected precision and recall",
        "As if 100·w flagged items (and proportionally many unflagged) had been labeled "
        "with the expected precision and recall; w is the strength.",
    ),
    (
        "round",
        "From the previous round",
        "The previous round's counts (the grid), each multiplied by the strength w.",
    ),
    ("custom", "Custom (typed below)", "The four pretend counts as typed below."),
)

#: (field, caption, words of the undo step and tooltip, meaning). The captions are the
#: labeled-count names the grids and the Rounds panel use; the symbols stay in tooltips.
ALPHA_FIELDS = (
    (
        "a11",
        "TP",
        "α11 (TP)",
        "Pretend labels of flagged items that are actually positive (predicted +, actual +).",
    ),
    (
        "a01",
        "FP",
        "α01 (FP)",
        "Pretend labels of flagged items that are actually negative (predicted +, actual −).",
    ),
    (
        "a10",
        "FN",
        "α10 (FN)",
        "Pretend labels of unflagged items that are actually positive (predicted −, actual +).",
    ),
    (
        "a00",
        "TN",
        "α00 (TN)",
        "Pretend labels of unflagged items that are actually negative (predicted −, actual −).",
    ),
)

#: Titles of the two density plots (the symbols π1, π0 are in their tooltips).
PLOT_TITLES = {
    "precision": "Precision",
    "omission": "False omission rate",
}
#: Least height of each density plot (pixels).
PLOT_MIN_HEIGHT = 120

#: Density grids, created once: precision on a linear axis, the false-omission rate (small,
#: e.g. 0.2 %) on a log axis so its bump is visible.
PRECISION_GRID = np.linspace(0.0005, 0.9995, 2000)
OMISSION_GRID = np.logspace(-6, np.log10(0.9995), 2000)


def preset_prior(state: SessionState) -> Prior | None:
    """The prior the state's preset stands for (``None`` for "custom").

    Raises :class:`InputError` when the preset cannot be built from the current inputs.
    """
    plan = state.plan
    preset = plan.prior_preset
    if preset == "none":
        return Prior.none()
    if preset == "jeffreys":
        return Prior.jeffreys()
    if preset == "uniform":
        return Prior.uniform()
    if preset == "expected":
        k = plan.population.effective_k
        if k is None:
            raise InputError("the prior from expected precision and recall needs the ratio k")
        return Prior.from_expected(
            plan.expected_precision, plan.expected_recall, k, plan.prior_strength
        )
    if preset == "round":
        return Prior.from_round(plan.previous, plan.prior_strength)
    return None


def follow_prior_preset(state: SessionState) -> SessionState:
    """Derivation for :meth:`SessionModel.add_derivation`: keep a preset prior current.

    When the preset cannot be built (expected P/R and ``k`` that imply an impossible
    false-omission rate) the prior is left as it was; the Plan tab reports the conflict.
    """
    try:
        prior = preset_prior(state)
    except InputError:
        return state
    if prior is None or prior == state.plan.prior:
        return state
    return replace_path(state, "plan.prior", prior)


class AlphaSpin(NumberSpin):
    """One alpha; typing it switches the preset to "custom" in the same undo step."""

    def __init__(self, session: SessionModel, field: str, label: str, tooltip: str, parent=None):
        super().__init__(
            session,
            f"plan.prior.{field}",
            minimum=0.0,
            maximum=1e9,
            decimals=2,
            step=0.5,
            tooltip=f"{label}: {tooltip} 0 is allowed, but a prior of all zeros says "
            "nothing on its own.",
            parent=parent,
        )
        self.setMinimumWidth(80)

    def _commit(self, value, *, merge_key=None):
        if value == self._session.get(self._path):
            return None
        message = self._session.set_values(
            [
                (self._path, value),
                ("plan.prior.name", "custom"),
                ("plan.prior_preset", "custom"),
            ],
            burst=merge_key is None,  # a wheel burst is one step; named "prior α11 (TP)"
        )
        if message:
            self._show(self._session.get(self._path))
        return message


class PriorEditor(QWidget):
    """Preset, strength ``w``, the four alphas and the Beta densities they give.

    The densities are the prior's (solid) and, when the plan is based on the previous
    round, the posterior after that round (dashed): ``Beta(a11, a01)`` for precision and
    ``Beta(a10, a00)`` for the false-omission rate, from :func:`core.bayes.beta_density`.
    """

    def __init__(self, session: SessionModel, parent: QWidget | None = None):
        super().__init__(parent)
        self._session = session
        session.add_derivation(follow_prior_preset)

        self.preset = QComboBox(self)
        for value, label, tip in PRESETS:
            self.preset.addItem(label, value)
            self.preset.setItemData(self.preset.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
        # Elide the longest choice rather than widen the Plan tab's middle column.
        self.preset.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.preset.setMinimumContentsLength(18)
        self.preset.setToolTip(
            "Where the prior belief comes from: the Beta prior on precision (π1) and on "
            "the false omission rate (π0), §5 of docs/methods.md. It enters the Bayes "
            "curves, Best s with prior (s* Bayes) and Bayesian plans."
        )
        self.strength = NumberSpin(
            session,
            "plan.prior_strength",
            minimum=0.01,
            maximum=10_000,
            decimals=2,
            step=1.0,
            tooltip="Prior strength w: 'From expected precision and recall' is worth "
            "100·w labeled flagged items; 'From the previous round' multiplies its counts "
            "by w.",
        )
        self.alphas = {
            field: AlphaSpin(session, field, words, tip, self)
            for field, _caption, words, tip in ALPHA_FIELDS
        }
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.summary.setToolTip(
            "What the prior expects on average: precision (π1) and the false omission "
            "rate (π0), the share of unflagged items that are actually positive."
        )

        self.precision_plot = PlotPanel(
            PLOT_TITLES["precision"],
            "positives among flagged items",
            "how likely",
            x_format=formatting.percent,
            y_format=lambda y: f"{y:.3g}",
        )
        self.omission_plot = PlotPanel(
            PLOT_TITLES["omission"],
            "positives among unflagged items",
            "how likely",
            log_x=True,
            x_format=formatting.percent,
            y_format=lambda y: f"{y:.3g}",
        )
        self.precision_plot.setToolTip(
            "How likely each precision is (π1, a Beta density): before the data (prior) "
            "and after the previous round."
        )
        self.omission_plot.setToolTip(
            "How likely each false omission rate is (π0, a Beta density; log scale): the "
            "share of unflagged items that are actually positive, the positives the "
            "classifier misses."
        )
        self._titles = {
            self.precision_plot: PLOT_TITLES["precision"],
            self.omission_plot: PLOT_TITLES["omission"],
        }
        for plot in (self.precision_plot, self.omission_plot):
            # Low enough that the column holds the targets, the prior and both plots on
            # a 1600 x 1000 window without scrolling.
            plot.setMinimumSize(200, PLOT_MIN_HEIGHT)
            plot.plotItem.getAxis("left").setWidth(40)
            # These plots are too short for a legend inside: the title keys the curves.
            plot.legend.hide()
        self.precision_prior = self.precision_plot.line("prior", 0)
        self.precision_posterior = self.precision_plot.line(
            "after previous round", 1, style=Qt.PenStyle.DashLine
        )
        self.omission_prior = self.omission_plot.line("prior", 0)
        self.omission_posterior = self.omission_plot.line(
            "after previous round", 1, style=Qt.PenStyle.DashLine
        )

        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Prior from", self.preset)
        form.addRow("Strength w", self.strength)
        self.counts_caption = QLabel("Pretend\ncounts", self)
        self.counts_caption.setToolTip(
            "The prior as counts of labels you pretend to have already (the α of the Beta "
            "priors, §5 of docs/methods.md): more counts, a firmer belief."
        )
        alpha_grid = QGridLayout()
        alpha_grid.setContentsMargins(0, 0, 0, 0)
        alpha_grid.addWidget(self.counts_caption, 0, 0, 2, 1)
        self.alpha_captions: dict[str, QLabel] = {}
        for index, (field, caption_text, _words, _tip) in enumerate(ALPHA_FIELDS):
            row, column = divmod(index, 2)
            caption = QLabel(caption_text, self)
            caption.setToolTip(self.alphas[field].toolTip())
            self.alpha_captions[field] = caption
            alpha_grid.addWidget(caption, row, 2 * column + 1)
            alpha_grid.addWidget(self.alphas[field], row, 2 * column + 2)
        alpha_grid.setColumnStretch(2, 1)
        alpha_grid.setColumnStretch(4, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(form)
        layout.addLayout(alpha_grid)
        layout.addWidget(self.summary)
        layout.addWidget(self.precision_plot, 1)
        layout.addWidget(self.omission_plot, 1)

        self.preset.currentIndexChanged.connect(self._on_preset_chosen)
        session.changed.connect(self._on_session_changed)
        self.refresh()

    # editing --------------------------------------------------------------------------

    def _on_preset_chosen(self, index: int) -> None:
        preset = self.preset.itemData(index)
        state = self._session.state
        changes = [("plan.prior_preset", preset)]
        if preset != "custom":
            try:
                probe = preset_prior(
                    SessionState(
                        confidence=state.confidence,
                        plan=_with_preset(state, preset),
                    )
                )
            except InputError as exc:
                self._session.refused.emit("plan.prior_preset", f"prior preset: {exc}")
                self.refresh()
                return
            changes.append(("plan.prior", probe))
        if self._session.set_values(changes, text="Prior preset"):
            self.refresh()

    def _on_session_changed(self, changed: str) -> None:
        if any(
            affects(changed, path)
            for path in ("plan.prior", "plan.prior_preset", "plan.belief", "plan.previous")
        ):
            self.refresh()

    # display --------------------------------------------------------------------------

    def refresh(self) -> None:
        """Show the session's prior: preset box, enabled fields, densities (setData)."""
        plan = self._session.state.plan
        with QSignalBlocker(self.preset):
            self.preset.setCurrentIndex(self.preset.findData(plan.prior_preset))
        self.strength.setEnabled(plan.prior_preset in ("expected", "round"))
        prior = plan.prior
        posterior_shown = plan.belief == "previous"
        self._draw(
            self.precision_plot,
            self.precision_prior,
            self.precision_posterior,
            PRECISION_GRID,
            (prior.a11, prior.a01),
            (prior.a11 + plan.previous.tp, prior.a01 + plan.previous.fp)
            if posterior_shown
            else None,
        )
        self._draw(
            self.omission_plot,
            self.omission_prior,
            self.omission_posterior,
            OMISSION_GRID,
            (prior.a10, prior.a00),
            (prior.a10 + plan.previous.fn, prior.a00 + plan.previous.tn)
            if posterior_shown
            else None,
        )
        if prior.is_zero:
            self.summary.setText(
                "<i>No prior: counts of 0 say nothing on their own (an improper prior), so "
                "the plan uses the previous round's counts alone (Jeffreys if a count is "
                "0).</i>"
            )
            return
        try:
            posterior = prior.posterior()
        except InputError as exc:
            self.summary.setText(f"<span style='color:#a00'>{exc}</span>")
            return
        text = (
            f"{prior.name}: expects precision "
            f"<b>{formatting.percent(posterior.mean_precision)}</b>, false omission rate "
            f"<b>{formatting.percent(posterior.mean_false_omission)}</b>"
        )
        if max(prior.a11 + prior.a01, prior.a10 + prior.a00) <= 2:
            # "False omission rate 50 %" for a 2 % category puzzled a lead (trial 21): a
            # prior of a pretend label or two is no forecast, only a middle.
            text += (
                " (worth at most two pretend labels per stratum: it knows next to nothing, "
                "and the labels decide)"
            )
        self.summary.setText(text)

    def _draw(self, plot, prior_item, posterior_item, grid, prior_ab, posterior_ab) -> None:
        shown = []
        for item, ab in ((prior_item, prior_ab), (posterior_item, posterior_ab)):
            if ab is None or min(ab) <= 0:
                item.setData([], [])  # improper or not wanted: no curve, never a NaN one
                continue
            density = np.asarray(beta_density(ab[0], ab[1], grid), dtype=float)
            density = np.where(np.isfinite(density), density, np.nan)
            item.setData(grid, density, connect="finite")
            shown.append(density)
        base = self._titles[plot]
        if not shown:
            plot.setTitle(f"{base} (no prior: all counts 0)", size="10pt")
            return
        keys = [
            f"<span style='color:{item.opts['pen'].color().name()}'>{line}</span> {name}"
            for item, ab, line, name in (
                (prior_item, prior_ab, "───", "prior"),
                (posterior_item, posterior_ab, "╌╌╌", "after previous round"),
            )
            if ab is not None and min(ab) > 0
        ]
        plot.setTitle(
            f"{base}<br><span style='font-size:8pt'>{' · '.join(keys)}</span>", size="10pt"
        )
        # Zoom to where the density has visible mass (display only: the tallest curve's
        # support above 0.1 % of its peak), so a sharp prior is not a spike at the edge.
        mask = np.zeros(grid.shape, dtype=bool)
        peak = 0.0
        for density in shown:
            top = np.nanmax(density)
            if np.isfinite(top) and top > 0:
                mask |= density > top * 1e-3
                peak = max(peak, min(top, 1e6))
        if mask.any():
            low, high = grid[mask][0], grid[mask][-1]
            if plot is self.omission_plot:
                plot.setXRange(np.log10(low), np.log10(high), padding=0.05)
            else:
                plot.setXRange(low, high, padding=0.05)
            plot.setYRange(0, peak, padding=0.05)


def _with_preset(state: SessionState, preset: PriorPreset) -> PlanInputs:
    from dataclasses import replace

    return replace(state.plan, prior_preset=preset)
