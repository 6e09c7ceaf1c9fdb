"""One request builds a plan, whoever asks: the command line, the Plan tab or a report.

:class:`PlanRequest` holds every argument of :func:`core.planning.make_plan`; the command
line fills it from flags, the Plan tab and the report from a session
(:meth:`PlanRequest.from_session`, after :func:`planning_inputs` has settled what the
next round is planned from). Changing the design (``s`` and ``v``), the method or an
assurance target is a :meth:`PlanRequest.but` away, so the three plans the Plan tab shows
(recommended, slider design, assured) are the same request three ways.

The planning maths (Eq 10 margins, s*, Theorem 2) stays in :mod:`core.planning`; this
module is the glue from what the user set to its arguments.

References
----------
* Shang et al. 2023: Theorems 1 and 2, Eq 10 and Eq 11 (through core.planning).
Full entries: docs/methods.md, References.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from core.bayes import Posterior
from core.confusion import Population
from core.planning import (
    Plan,
    WidthCurveModel,
    make_plan,
    previous_round_posterior,
    rates_from_round,
)

#: Prior presets that know nothing: without data their predictive intervals are wider than
#: the unit interval and their s* is just 1/k, so they give no Bayesian plan of their own.
NON_INFORMATIVE_PRESETS = ("none", "jeffreys", "uniform")


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanningInputs:
    """What the next round is planned from.

    Attributes
    ----------
    population : Population
    precision, recall : float
        Planning values (typed, or a past round's estimates; Eq 9 gives ``pi0``).
    posterior : Posterior or None
        Prior plus past round for Theorem 2 and the Bayesian margins; None when the prior
        knows nothing and there are no data.
    source : str
        Where the planning values come from, in words.
    notes : tuple of str
        What the user should know (a substituted prior, a left-out posterior).
    """

    population: Population
    precision: float
    recall: float
    posterior: Posterior | None
    source: str
    notes: tuple[str, ...] = ()

    def width_curve_model(self, confidence: float, posterior_label: str) -> WidthCurveModel:
        """Interval widths against ``s`` and ``v`` from these inputs (methods §7): the
        frequentist curves, plus the posterior's Bayesian curve named ``posterior_label``
        when there is a posterior. Raises ``InputError`` as the model does."""
        posteriors = () if self.posterior is None else ((posterior_label, self.posterior),)
        return WidthCurveModel.build(
            k=self.population.k,
            precision=self.precision,
            recall=self.recall,
            confidence=confidence,
            posteriors=posteriors,
        )


def _named_round_holds(state, matrix) -> bool:
    """The Plan tab's previous round is the round it names (not counts edited since)."""
    from core.workbook.session_io import find_by_label

    if not state.previous_round:
        return False
    named = find_by_label(state.rounds, state.previous_round, matrix=matrix)
    return named is not None and named.matrix == matrix


def planning_inputs(state, past_round=None) -> PlanningInputs:
    """Planning inputs of a :class:`core.session.SessionState`'s Plan tab.

    ``past_round`` (a :class:`core.workbook.rounds.Round`) plans the round after it from its
    own counts and population, with the session's prior. Raises :class:`InputError`.
    """
    plan = state.plan
    if past_round is not None:
        population = past_round.population
        matrix, source = past_round.matrix, f"the estimates of round {past_round.name}"
    else:
        inputs = plan.population
        if inputs.mode == "counts":
            population = Population.from_counts(
                inputs.predicted_positive, inputs.predicted_negative
            )
        else:
            population = Population.from_k(inputs.k)
        matrix = plan.previous if plan.belief == "previous" else None
        if matrix is None:
            source = "the precision and recall expected on the Plan tab"
        elif _named_round_holds(state, matrix):
            source = f"round {state.previous_round}, the previous round on the Plan tab"
        else:
            source = "the previous round entered on the Plan tab"
    if matrix is not None:
        precision, recall, rate_notes = rates_from_round(matrix, population.k, plan.prior)
        posterior, notes = previous_round_posterior(matrix, plan.prior)
        notes = tuple(dict.fromkeys((*notes, *rate_notes)))  # each note once
    else:
        precision, recall = plan.expected_precision, plan.expected_recall
        if plan.prior_preset in NON_INFORMATIVE_PRESETS:
            posterior = None
            notes = (
                "The dashed Bayes curves show how much prior knowledge (5, 10 or 100 "
                "pretend labels) would narrow the intervals. For a curve of what you expect, "
                "and the best s with it, choose 'From expected precision and recall' under "
                "Prior from, or plan from a previous round.",
            )
        else:
            posterior, notes = plan.prior.posterior(), ()
    return PlanningInputs(
        population=population,
        precision=precision,
        recall=recall,
        posterior=posterior,
        source=source,
        notes=notes,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanRequest:
    """The arguments of :func:`core.planning.make_plan`, checked there when planned.

    Attributes
    ----------
    population, precision, recall
        The population and the planning values (Eq 9 gives the false-omission rate).
    margin_precision, margin_recall, confidence
        The targets: half-widths at this confidence.
    method : {"paper", "optimal"}
        How ``s`` is chosen when it is not given.
    posterior, bayesian
        The prior plus any past round, and whether to plan with Bayesian margins.
    cost_pos, cost_neg
        Label costs (both or neither).
    s, v
        A fixed design (either or both), else the method's.
    fpc
        Finite population correction.
    assurance_target
        A chance of meeting both margins to plan for (the assured plan).
    notes
        Notes carried into the plan.
    fallbacks
        What :meth:`from_session` had to leave out (a Bayesian plan without a prior, a
        correction without population counts), in words for the user; not passed on.
    """

    population: Population
    precision: float
    recall: float
    margin_precision: float = 0.05
    margin_recall: float = 0.05
    confidence: float = 0.95
    method: str = "paper"
    posterior: Posterior | None = None
    bayesian: bool = False
    cost_pos: float | None = None
    cost_neg: float | None = None
    s: float | None = None
    v: int | None = None
    fpc: bool = False
    assurance_target: float | None = None
    notes: tuple[str, ...] = ()
    fallbacks: tuple[str, ...] = ()

    @classmethod
    def from_session(cls, state, inputs: PlanningInputs | None = None) -> PlanRequest:
        """The request of a :class:`core.session.SessionState`'s Plan tab: its method and
        targets, without a fixed design (see :meth:`but`).

        A Bayesian plan without a posterior, or a finite population correction without
        population counts, falls back (said in :attr:`fallbacks`) so a plan can still be
        shown. Raises :class:`core.errors.InputError` when the inputs cannot be used.
        """
        inputs = planning_inputs(state) if inputs is None else inputs
        plan = state.plan
        fallbacks = []
        bayesian = plan.bayesian
        if bayesian and inputs.posterior is None:
            bayesian = False
            fallbacks.append(
                "Bayesian margins need a prior with strength or a previous round; "
                "the plan uses the frequentist margins"
            )
        fpc = plan.fpc
        if fpc and not inputs.population.has_counts:
            fpc = False
            fallbacks.append(
                "the finite population correction needs both population counts; "
                "the plan is made without it"
            )
        costs = (
            {}
            if plan.cost_pos == plan.cost_neg == 1.0
            else {
                "cost_pos": plan.cost_pos,
                "cost_neg": plan.cost_neg,
            }
        )
        return cls(
            population=inputs.population,
            precision=inputs.precision,
            recall=inputs.recall,
            margin_precision=plan.margin_precision,
            margin_recall=plan.margin_recall,
            confidence=state.confidence,
            method=plan.method,
            posterior=inputs.posterior,
            bayesian=bayesian,
            fpc=fpc,
            fallbacks=tuple(fallbacks),
            **costs,
        )

    def but(self, **changes: Any) -> PlanRequest:
        """This request with some arguments changed (``request.but(s=2.0, v=1000)``)."""
        return replace(self, **changes)

    def plan(self) -> Plan:
        """The plan (:func:`core.planning.make_plan`); raises ``InputError`` as it does."""
        arguments = {
            field.name: getattr(self, field.name)
            for field in fields(self)
            if field.name != "fallbacks"
        }
        return make_plan(**arguments)


def with_sliders_on_recommended(state, s_range: tuple[float, float], v_range: tuple[int, int]):
    """``state`` with the design sliders (``plan.s``, ``plan.v``) on its recommended plan,
    ``s`` rounded to 0.01 and both kept within the sliders' ranges, as the Plan tab's Use
    it sets them: a new or example session then opens on a design that meets its targets
    rather than on defaults that miss both. Unchanged when no plan can be made."""
    import dataclasses

    from core.errors import InputError

    try:
        plan = PlanRequest.from_session(state, planning_inputs(state)).plan()
    except InputError:
        return state
    s = min(max(round(plan.s, 2), s_range[0]), s_range[1])
    v = min(max(plan.total, v_range[0]), v_range[1])
    return dataclasses.replace(state, plan=dataclasses.replace(state.plan, s=s, v=v))
