"""Interval methods are named the same way everywhere, and every prediction interval says
it is a prediction for the next round's estimate, not an interval for the true value."""

from __future__ import annotations

from core.coverage import _KIND_NAMES
from core.methods import INTERVAL_METHODS, RECOMMENDED, method_label
from core.workbook.report_content import METHOD_NAMES

PREDICTIONS = [key for key, method in INTERVAL_METHODS.items() if method.is_prediction]


def test_the_predictive_methods_are_the_bayesian_predictive_ones():
    assert PREDICTIONS == ["bayes", "bayes_mc"]


def test_every_front_end_labels_a_prediction_as_one():
    for key in PREDICTIONS:
        assert "next round" in method_label(key)
        assert "next round" in METHOD_NAMES[key]
        assert "next round" in _KIND_NAMES[key]


def test_the_interval_to_quote_is_never_a_prediction():
    for recommendation in RECOMMENDED.values():
        assert not INTERVAL_METHODS[recommendation.method].is_prediction
        assert recommendation.why
