"""The interval methods: one table of names, equations and meanings for every front end.

The command line, the Excel report, the coverage experiment and the desktop app name the
methods from :data:`INTERVAL_METHODS`, so a method is called the same everywhere and every
label says what the interval is for: the true value (a confidence or credible interval) or
the estimate a future round of the same size will show (a prediction interval).

:data:`RECOMMENDED` names, per metric, the interval to quote, with the one-line reason the
front ends print next to it. Equation numbers refer to docs/methods.md.

References
----------
* Shang et al. 2023 (Eq 3-8, Algorithms 1 and 2); Wilson 1927; Agresti and Coull 1998;
  Clopper and Pearson 1934; Brown, Cai and DasGupta 2001; Katz et al. 1978.
Full entries: docs/methods.md, References.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "F1_WITHOUT_SPREAD",
    "F1_WITH_FPC",
    "FEW_FLAGGED_LABELED",
    "FPC_METHOD_LABELS",
    "INTERVAL_METHODS",
    "METRICS",
    "PRECISION_FEW_WITH_FPC",
    "RECOMMENDED",
    "IntervalMethod",
    "Recommendation",
    "method_label",
]

#: What an interval is about.
Target = Literal["true value", "next round's estimate"]

#: The metrics every evaluation reports, in the order they are shown.
METRICS = ("precision", "recall", "f1", "fpr")


@dataclass(frozen=True, slots=True, kw_only=True)
class IntervalMethod:
    """One interval method as the front ends name and explain it.

    Attributes
    ----------
    key : str
        The key in results and ``--json`` output (``"katz_log"``).
    label : str
        Full name for reports and tables ("Katz log-ratio").
    short_label : str
        Name for narrow columns and plot legends ("Katz log").
    equation : str
        Where docs/methods.md defines it ("Eq 4"), or ``""``.
    target : {"true value", "next round's estimate"}
        What the interval covers: the true metric, or a prediction of the estimate that a
        future round of the same size will show (wider on purpose).
    description : str
        One sentence for a tooltip or a footnote, in words a lead reads.
    """

    key: str
    label: str
    short_label: str
    equation: str
    target: Target
    description: str

    @property
    def is_prediction(self) -> bool:
        """True when the interval predicts a future round's estimate."""
        return self.target == "next round's estimate"

    @property
    def column_label(self) -> str:
        """The short label, with "next round" added to prediction intervals (tables)."""
        return f"{self.short_label}, next round" if self.is_prediction else self.short_label

    @property
    def tooltip(self) -> str:
        """The description, with the equation that defines the method when there is one."""
        return f"{self.description} ({self.equation})" if self.equation else self.description

    @property
    def qualified_label(self) -> str:
        """The label, with "prediction for the next round" added to prediction intervals."""
        if self.is_prediction:
            return f"{self.label} (prediction for the next round's estimate)"
        return self.label


_METHODS = (
    IntervalMethod(
        key="wald",
        label="Wald",
        short_label="Wald",
        equation="Eq 3",
        target="true value",
        description="Normal approximation p ± z·√(p(1−p)/n); weak when a cell is below 10.",
    ),
    IntervalMethod(
        key="wilson",
        label="Wilson score",
        short_label="Wilson",
        equation="",
        target="true value",
        description="Wilson score interval; keeps its confidence level even for small counts.",
    ),
    IntervalMethod(
        key="agresti_coull",
        label="Agresti-Coull",
        short_label="Agresti-Coull",
        equation="",
        target="true value",
        description="Wald interval after adding z²/2 to each outcome; close to Wilson.",
    ),
    IntervalMethod(
        key="clopper_pearson",
        label="Clopper-Pearson (exact)",
        short_label="Clopper-Pearson",
        equation="",
        target="true value",
        description="Exact binomial interval; never below its confidence level, often wider.",
    ),
    IntervalMethod(
        key="jeffreys",
        label="Jeffreys",
        short_label="Jeffreys",
        equation="",
        target="true value",
        description="Quantiles of the Beta(x + ½, n − x + ½) posterior; good small-count coverage.",
    ),
    IntervalMethod(
        key="katz_log",
        label="Katz log-ratio",
        short_label="Katz log",
        equation="Eq 4",
        target="true value",
        description="Interval on the log of a ratio, asymmetric by design; suits recall and FPR "
        "from an over-sampled design.",
    ),
    IntervalMethod(
        key="wilson_ratio",
        label="Wilson ratio",
        short_label="Wilson ratio",
        equation="",
        target="true value",
        description="Wilson intervals of the two strata's shares of negatives, combined into "
        "an interval for their ratio; keeps its level when few flagged items are positive.",
    ),
    IntervalMethod(
        key="delta",
        label="delta method",
        short_label="delta",
        equation="Eq 5",
        target="true value",
        description="Symmetric normal interval from the delta method; what planning margins use.",
    ),
    IntervalMethod(
        key="bootstrap",
        label="bootstrap",
        short_label="bootstrap",
        equation="Algorithm 1",
        target="true value",
        description="Percentile bootstrap: each stratum resampled with replacement.",
    ),
    IntervalMethod(
        key="posterior",
        label="posterior of the true value",
        short_label="posterior",
        equation="",
        target="true value",
        description="Credible interval of the true value from the Beta posteriors of the cells; "
        "the one to use when a cell is small.",
    ),
    IntervalMethod(
        key="bayes",
        label="Bayesian predictive",
        short_label="Bayes predictive",
        equation="Eq 6-8",
        target="next round's estimate",
        description="Where the estimate of a future round of the same size will fall; wider "
        "than an interval for the true value on purpose.",
    ),
    IntervalMethod(
        key="bayes_mc",
        label="Bayesian predictive, Monte Carlo",
        short_label="Bayes predictive MC",
        equation="Algorithm 2",
        target="next round's estimate",
        description="Simulated version of the Bayesian predictive interval: a prediction of "
        "the next round's estimate, not an interval for the true value.",
    ),
)

#: Every interval method by key, in the order tables list them.
INTERVAL_METHODS: dict[str, IntervalMethod] = {method.key: method for method in _METHODS}


@dataclass(frozen=True, slots=True, kw_only=True)
class Recommendation:
    """The interval to quote for one metric, and why (one line)."""

    metric: str
    method: str
    why: str


#: Per metric, the interval to quote for a stratified (over-sampled) round.
RECOMMENDED: dict[str, Recommendation] = {
    item.metric: item
    for item in (
        Recommendation(
            metric="precision",
            method="wilson",
            why="precision is a plain proportion of the predicted positives; Wilson keeps "
            "its confidence level down to small samples",
        ),
        Recommendation(
            metric="recall",
            method="katz_log",
            why="recall is a ratio of the two strata; the log-ratio interval covers "
            "near nominal in over-sampled designs (Eq 4)",
        ),
        Recommendation(
            metric="f1",
            method="bootstrap",
            why="F1 has no simple closed form; the bootstrap resamples both strata",
        ),
        Recommendation(
            metric="fpr",
            method="wilson_ratio",
            why="the false positive rate is a ratio of the two strata; combining their "
            "Wilson intervals keeps the confidence level where the log-ratio falls short",
        ),
    )
}


#: Quoted for F1 instead of the bootstrap when the bootstrap's interval has no width: it
#: cannot vary a count that is 0 (no false positive and no false negative, or no true
#: positive), so every replicate gives the same F1; the posterior can.
#: Fewer flagged items labeled than this, with the finite population correction: the
#: exact (hypergeometric) interval is quoted for precision (:data:`PRECISION_FEW_WITH_FPC`).
FEW_FLAGGED_LABELED = 10

#: Precision to quote with the correction and fewer than :data:`FEW_FLAGGED_LABELED`
#: flagged items labeled: Wilson with n/f trials covered 89.5 % at 6 of 60 (one likely
#: round decides it), the hypergeometric interval never less than 95 %.
PRECISION_FEW_WITH_FPC = Recommendation(
    metric="precision",
    method="clopper_pearson",
    why="so few flagged items are labeled that Wilson's level is lumpy (it fell to 89.5 % "
    "at some true values); the exact interval, counting what the unlabeled items of the "
    "list can still hold, never falls below its level",
)

#: F1 to quote when the sample was drawn without replacement from lists of known size
#: (the finite population correction): the bootstrap's F1 interval is then too narrow
#: when few missed positives are labeled (75-90 % coverage at FN of 0 to 3).
F1_WITH_FPC = Recommendation(
    metric="f1",
    method="posterior",
    why="the labels were drawn from lists of known size: the posterior of the lists' own "
    "F1 (their unlabeled items completed from the labels) keeps its level even when few "
    "missed positives are labeled, where the bootstrap's is too narrow",
)

F1_WITHOUT_SPREAD = Recommendation(
    metric="f1",
    method="posterior",
    why="the bootstrap cannot vary a count of 0, so its interval has no width here; the "
    "posterior interval keeps the uncertainty",
)


#: What the exact and Jeffreys intervals of precision are with the finite population
#: correction (their keys stay, as the JSON contract names them).
FPC_METHOD_LABELS = {
    "clopper_pearson": "exact (hypergeometric)",
    "jeffreys": "Jeffreys (finite list)",
}


def method_label(key: str, *, short: bool = False) -> str:
    """The words for method ``key`` (the key itself for an unknown method)."""
    method = INTERVAL_METHODS.get(key)
    if method is None:
        return key
    return method.short_label if short else method.qualified_label
