"""core.curves against scikit-learn (a test-only dependency) and stored sklearn values."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openpyxl import Workbook
from sklearn.metrics import (
    auc,
    average_precision_score,
    precision_recall_curve,
    roc_auc_score,
    roc_curve,
)

from core.confusion import Population
from core.curves import (
    ScoredSample,
    load_scored_sample,
    scored_curves,
    stratum_weights,
)
from core.errors import InputError

FAST = settings(max_examples=60, deadline=None)


def _negatives_scaled(labels, weights, factor):
    """Siblini et al.'s Eq 6 as a re-weighting: negatives count ``factor`` times."""
    return np.where(labels == 1, weights, weights * factor)


def _calibration_factor(labels, weights, pi_ref):
    pi = weights[labels == 1].sum() / weights.sum()
    return pi * (1 - pi_ref) / (pi_ref * (1 - pi))


# --- stored reference ------------------------------------------------------------------


@pytest.fixture(scope="module")
def stored(reference_data):
    return json.loads((reference_data / "prevalence_scored_reference.json").read_text())


@pytest.mark.parametrize("variant", ["unweighted", "weighted"])
def test_against_stored_scikit_learn_values(stored, variant):
    weights = np.array(stored["weights"]) if variant == "weighted" else None
    curves = scored_curves(stored["scores"], stored["labels"], weights)
    expected = stored[variant]
    precision, recall, thresholds = curves.pr_curve()
    np.testing.assert_allclose(precision, expected["precision"], rtol=1e-12)
    np.testing.assert_allclose(recall, expected["recall"], rtol=1e-12)
    np.testing.assert_array_equal(thresholds, expected["pr_thresholds"])
    fpr, tpr, roc_thresholds = curves.roc_curve()
    np.testing.assert_allclose(fpr, expected["fpr"], rtol=1e-12)
    np.testing.assert_allclose(tpr, expected["tpr"], rtol=1e-12)
    np.testing.assert_array_equal(roc_thresholds[1:], expected["roc_thresholds"])
    for key in ("average_precision", "auc_pr_trapezoid", "auc_roc"):
        assert getattr(curves, key) == pytest.approx(expected[key], rel=1e-12)
    assert curves.calibrated_average_precision(stored["reference_prevalence"]) == pytest.approx(
        expected["calibrated_average_precision"], rel=1e-12
    )
    # Ties: one point per distinct score.
    assert curves.thresholds.size == len(set(stored["scores"])) < len(stored["scores"])


# --- live scikit-learn under hypothesis ---------------------------------------------------


@st.composite
def scored_samples(draw, weighted: bool):
    size = draw(st.integers(2, 60))
    labels = np.array(draw(st.lists(st.integers(0, 1), min_size=size, max_size=size)))
    labels[0], labels[1] = 0, 1  # both classes present
    # Few distinct values, so ties are the rule.
    scores = np.array(draw(st.lists(st.integers(-5, 5), min_size=size, max_size=size))) / 4
    weights = None
    if weighted:
        weights = np.array(
            draw(st.lists(st.floats(0.1, 50.0), min_size=size, max_size=size)), dtype=float
        )
    return scores, labels, weights


@pytest.mark.parametrize("weighted", [False, True])
def test_a_large_sample_with_long_runs_of_ties_matches_scikit_learn(weighted):
    # 200,000 items on 401 distinct scores (runs of ~500 tied items, both labels in most),
    # zero weights among them: the sort, the runs and the cumulative sums at scale.
    rng = np.random.default_rng(31)
    labels = rng.random(200_000) < 0.07
    scores = np.round(rng.normal(size=labels.size) + labels, 1) / 2
    weights = rng.choice([0.0, 0.3, 1.0, 7.5], size=labels.size) if weighted else None
    curves = scored_curves(scores, labels, weights)
    precision, recall, thresholds = precision_recall_curve(labels, scores, sample_weight=weights)
    ours = curves.pr_curve()
    np.testing.assert_allclose(ours[0], precision, rtol=1e-12)
    np.testing.assert_allclose(ours[1], recall, rtol=1e-12)
    np.testing.assert_array_equal(ours[2], thresholds)
    assert curves.average_precision == pytest.approx(
        average_precision_score(labels, scores, sample_weight=weights), rel=1e-12
    )
    assert curves.auc_pr_trapezoid == pytest.approx(auc(recall, precision), rel=1e-12)
    assert curves.auc_roc == pytest.approx(
        roc_auc_score(labels, scores, sample_weight=weights), rel=1e-12
    )


@FAST
@given(st.booleans().flatmap(scored_samples))
def test_curves_and_areas_match_scikit_learn(sample):
    scores, labels, weights = sample
    curves = scored_curves(scores, labels, weights)
    precision, recall, thresholds = precision_recall_curve(labels, scores, sample_weight=weights)
    ours = curves.pr_curve()
    np.testing.assert_allclose(ours[0], precision, rtol=1e-10)
    np.testing.assert_allclose(ours[1], recall, rtol=1e-10)
    np.testing.assert_array_equal(ours[2], thresholds)
    fpr, tpr, roc_thresholds = roc_curve(
        labels, scores, sample_weight=weights, drop_intermediate=False
    )
    ours = curves.roc_curve()
    np.testing.assert_allclose(ours[0], fpr, rtol=1e-10)
    np.testing.assert_allclose(ours[1], tpr, rtol=1e-10)
    np.testing.assert_array_equal(ours[2], roc_thresholds)
    assert curves.average_precision == pytest.approx(
        average_precision_score(labels, scores, sample_weight=weights), rel=1e-10
    )
    assert curves.auc_pr_trapezoid == pytest.approx(auc(recall, precision), rel=1e-10)
    assert curves.auc_roc == pytest.approx(
        roc_auc_score(labels, scores, sample_weight=weights), rel=1e-10
    )


@FAST
@given(scored_samples(weighted=True), st.floats(1e-4, 0.9))
def test_calibrated_curve_is_the_pr_curve_with_negatives_reweighted(sample, pi_ref):
    scores, labels, weights = sample
    curves = scored_curves(scores, labels, weights)
    reweighted = _negatives_scaled(labels, weights, _calibration_factor(labels, weights, pi_ref))
    precision, recall, _ = precision_recall_curve(labels, scores, sample_weight=reweighted)
    ours = curves.calibrated_pr_curve(pi_ref)
    np.testing.assert_allclose(ours[0], precision, rtol=1e-9)
    np.testing.assert_allclose(ours[1], recall, rtol=1e-9)
    assert curves.calibrated_average_precision(pi_ref) == pytest.approx(
        average_precision_score(labels, scores, sample_weight=reweighted), rel=1e-9
    )
    assert curves.calibrated_auc_pr_trapezoid(pi_ref) == pytest.approx(
        auc(recall, precision), rel=1e-9
    )


def test_calibrating_at_the_sample_prevalence_changes_nothing(stored):
    curves = scored_curves(stored["scores"], stored["labels"])
    assert curves.calibrated_average_precision(curves.sample_prevalence) == pytest.approx(
        curves.average_precision, rel=1e-12
    )


@pytest.mark.parametrize("kind", ["average_precision", "trapezoid"])
def test_area_under_pr_against_prevalence(stored, kind):
    labels = np.array(stored["labels"])
    weights = np.array(stored["weights"])
    curves = scored_curves(stored["scores"], labels, weights)
    eta, area = curves.area_under_pr_vs_prevalence([1e-4, 0.01, 0.3, 0.9], kind=kind)
    for prevalence, value in zip(eta, area, strict=True):
        reweighted = _negatives_scaled(
            labels, weights, _calibration_factor(labels, weights, prevalence)
        )
        if kind == "average_precision":
            expected = average_precision_score(labels, stored["scores"], sample_weight=reweighted)
        else:
            precision, recall, _ = precision_recall_curve(
                labels, stored["scores"], sample_weight=reweighted
            )
            expected = auc(recall, precision)
        assert value == pytest.approx(expected, rel=1e-9)
    default_eta, default_area = curves.area_under_pr_vs_prevalence()
    assert default_eta.size == 200 and np.all(np.diff(default_area) > 0)


def test_area_against_prevalence_is_computed_in_blocks(monkeypatch):
    rng = np.random.default_rng(3)
    labels = rng.random(3_000) < 0.2
    curves = scored_curves(rng.normal(size=3_000) + labels, labels)
    _, whole = curves.area_under_pr_vs_prevalence(np.geomspace(1e-3, 0.5, 17))
    monkeypatch.setattr("core.curves._BLOCK_ELEMENTS", 1_000)
    _, blocked = curves.area_under_pr_vs_prevalence(np.geomspace(1e-3, 0.5, 17))
    np.testing.assert_allclose(blocked, whole, rtol=1e-12)


def test_zero_weight_items_are_dropped_as_scikit_learn_does():
    scores = np.array([0.9, 0.8, 0.8, 0.3, 0.1])
    labels = np.array([1, 0, 1, 0, 1])
    weights = np.array([1.0, 0.0, 2.0, 1.0, 1.0])
    curves = scored_curves(scores, labels, weights)
    precision, recall, _ = precision_recall_curve(labels, scores, sample_weight=weights)
    np.testing.assert_allclose(curves.pr_curve()[0], precision)
    np.testing.assert_allclose(curves.pr_curve()[1], recall)
    assert curves.n_items == 4 and curves.positive_items == 3


# --- stratified weights ----------------------------------------------------------------


def test_stratum_weights_are_inverse_inclusion_probabilities():
    flags = np.array([True, True, False, False, False, False])
    population = Population.from_counts(1_000, 19_000)
    np.testing.assert_allclose(
        stratum_weights(flags, population), [500, 500, 4_750, 4_750, 4_750, 4_750]
    )
    relative = stratum_weights(flags, Population.from_k(1_000 / 19_000))
    np.testing.assert_allclose(relative / relative[0], [1, 1, 9.5, 9.5, 9.5, 9.5])
    with pytest.raises(InputError, match="both strata"):
        stratum_weights([True, True], population)
    with pytest.raises(InputError, match="predicted_positive must be 0 or 1, got 3"):
        stratum_weights([1, 3], population)


def test_weighted_stratified_sample_describes_the_population_not_the_sample():
    rng = np.random.default_rng(11)
    size = 400_000
    labels = rng.random(size) < 0.01
    scores = rng.normal(size=size) + 2.5 * labels
    predicted_positive = scores >= 2.0
    population_ap = average_precision_score(labels, scores)
    positive_idx = rng.choice(np.flatnonzero(predicted_positive), 3_000, replace=False)
    negative_idx = rng.choice(np.flatnonzero(~predicted_positive), 3_000, replace=False)
    chosen = np.concatenate((positive_idx, negative_idx))
    population = Population.from_counts(
        np.count_nonzero(predicted_positive), np.count_nonzero(~predicted_positive)
    )
    weights = stratum_weights(predicted_positive[chosen], population)
    weighted = scored_curves(scores[chosen], labels[chosen], weights)
    unweighted = scored_curves(scores[chosen], labels[chosen])
    assert weighted.average_precision == pytest.approx(population_ap, abs=0.03)
    assert abs(unweighted.average_precision - population_ap) > 0.1
    assert weighted.positives + weighted.negatives == pytest.approx(size)


# --- validation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"scores": [0.1, 0.2], "labels": [1, 2]}, "labels must be 0 or 1, got 2 at item 1"),
        ({"scores": [0.1, np.nan], "labels": [1, 0]}, "scores must be finite numbers"),
        ({"scores": [0.1, 0.2, 0.3], "labels": [1, 0]}, "same length, got 3 and 2"),
        ({"scores": [0.1, 0.2], "labels": [1, 1]}, "no actual negative"),
        ({"scores": [0.1, 0.2], "labels": [0, 0]}, "no actual positive"),
        ({"scores": [0.1, 0.2], "labels": [0, 1], "weights": [1, -1]}, "weights must be >= 0"),
        ({"scores": [0.1, 0.2], "labels": [0, 1], "weights": [1, 0]}, "no actual positive"),
        ({"scores": [[0.1, 0.2]], "labels": [0, 1]}, "one-dimensional"),
    ],
)
def test_bad_samples_are_refused(kwargs, fragment):
    with pytest.raises(InputError) as info:
        ScoredSample(**kwargs)
    assert fragment in str(info.value)


def test_bad_reference_prevalence_and_area_kind(stored):
    curves = scored_curves(stored["scores"], stored["labels"])
    with pytest.raises(InputError, match="reference prevalence"):
        curves.calibrated_average_precision(0.0)
    with pytest.raises(InputError, match="kind must be"):
        curves.area_under_pr_vs_prevalence(kind="roc")
    with pytest.raises(InputError, match="prevalences"):
        curves.area_under_pr_vs_prevalence([0.5, 1.0])


# --- loading files -------------------------------------------------------------------------


def test_csv_with_any_case_header_extra_columns_and_blank_lines(tmp_path):
    path = tmp_path / "scored.csv"
    path.write_text("item,Label,SCORE , Weight\na,1,0.9,2\n\nb,0,0.4,1\nc,true,0.4,1\n")
    sample = load_scored_sample(path)
    np.testing.assert_array_equal(sample.scores, [0.9, 0.4, 0.4])
    np.testing.assert_array_equal(sample.labels, [True, False, True])
    np.testing.assert_array_equal(sample.weights, [2.0, 1.0, 1.0])


def test_semicolon_csv_with_decimal_commas_and_a_bom(tmp_path):
    path = tmp_path / "scored.csv"
    path.write_text("\ufeffscore;label\n0,75;1\n0,5;0\n", encoding="utf-8")
    sample = load_scored_sample(path)
    np.testing.assert_array_equal(sample.scores, [0.75, 0.5])
    assert sample.weights is None


def test_points_between_thousands_in_a_decimal_comma_file(tmp_path):
    # A weight of a thousand written "1.000" (Excel's export in a decimal-comma locale)
    # was read as 1: average precision 0.73 instead of 0.52 (fuzz 15). A point is read as
    # the file's other numbers show it: a thousands separator beside decimal commas, a
    # decimal point beside decimal points (review 15: such a file was told to use commas),
    # and refused, naming row and column, when they show neither.
    def load(name, text):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return load_scored_sample(path)

    commas = load("commas.csv", "score;label;weight\n0,75;1;1\n0,5;0;1.000\n0,6;0;1.234,5\n")
    np.testing.assert_array_equal(commas.weights, [1.0, 1000.0, 1234.5])
    points = load("points.csv", "score;label\n1.000;1\n0.250;0\n")
    np.testing.assert_array_equal(points.scores, [1.0, 0.25])
    with pytest.raises(InputError) as refused:
        load("weights.csv", "score;label;weight\n1;1;1\n0;0;1.000\n")
    message = str(refused.value)
    assert message.startswith("weights.csv: row 3, column 'weight': '1.000' is ambiguous")
    assert "write 1000 for 1,000, or 1,000 with a decimal comma" in message
    tabs = load("tabs.csv", "score\tlabel\n0,650\t1\n0.5\t0\n")  # both: as written
    np.testing.assert_array_equal(tabs.scores, [0.65, 0.5])


def test_xlsx_with_booleans_and_trailing_empty_rows(tmp_path):
    path = tmp_path / "scored.xlsx"
    workbook = Workbook()
    sheet = workbook.active
    sheet.append(["Score", "Label"])
    sheet.append([0.8, True])
    sheet.append([0.2, 0])
    sheet.append([None, None])
    workbook.save(path)
    sample = load_scored_sample(path)
    np.testing.assert_array_equal(sample.scores, [0.8, 0.2])
    np.testing.assert_array_equal(sample.labels, [True, False])


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("score,label\n0.5,1\nabc,0\n", "row 3, column 'score': expected a number, got 'abc'"),
        ("score,label\n0.5,1\n0.4,maybe\n", "row 3, column 'label': expected 0 or 1, got 'maybe'"),
        ("score,label,weight\n0.5,1,1\n0.4,0,-2\n", "row 3, column 'weight': expected a weight"),
        ("score,label\n0.5,1\n0.4,\n", "row 3, column 'label': expected 0 or 1, got an empty cell"),
        ("score,label\n0.5,1\ninf,0\n", "expected a finite number"),
        ("score,truth\n0.5,1\n", "missing label, found 'score', 'truth'"),
        ("score,label,label\n0.5,1,1\n", "column 'label' appears 2 times"),
        ("score,label\n", "no data rows"),
        ("", "is empty"),
        ("score,label\n0.5,1\n0.4,1\n", "no actual negative"),
    ],
)
def test_bad_csv_values_name_row_and_column(tmp_path, text, fragment):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_scored_sample(path)
    assert fragment in str(info.value)


def test_bad_xlsx_value_names_row_and_column(tmp_path):
    path = tmp_path / "bad.xlsx"
    workbook = Workbook()
    workbook.active.append(["score", "label"])
    workbook.active.append([0.5, 1])
    workbook.active.append(["high", 0])
    workbook.save(path)
    with pytest.raises(InputError, match="row 3, column 'score'"):
        load_scored_sample(path)


def test_unsupported_and_unreadable_files(tmp_path):
    with pytest.raises(InputError, match=r"expected a \.csv or \.xlsx"):
        load_scored_sample(tmp_path / "scores.txt")
    fake = tmp_path / "fake.xlsx"
    fake.write_text("not a zip")
    with pytest.raises(InputError, match=r"is a text file \(CSV or similar\) with an Excel name"):
        load_scored_sample(fake)
    binary = tmp_path / "binary.xlsx"
    binary.write_bytes(b"\x00\x01\x02 not a zip")
    with pytest.raises(InputError, match=r"not an Excel workbook \(\.xlsx\): it is not a zip"):
        load_scored_sample(binary)
    with pytest.raises(OSError):
        load_scored_sample(tmp_path / "missing.csv")
    latin = tmp_path / "latin.csv"
    latin.write_bytes("score,label,r\u00e9sum\u00e9\n0.5,1,x\n".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8 text"):
        load_scored_sample(latin)


def test_a_header_line_without_end_is_refused_without_reading_it_whole(tmp_path):
    """A 50 MB first line took 14 s and 3.9 GB, and its message listed 25 million columns."""
    path = tmp_path / "scores.csv"
    path.write_bytes(b"id" + b",x" * 1_000_000)
    with pytest.raises(InputError, match="first line is longer than 65,536 characters"):
        load_scored_sample(path)


def test_a_header_of_many_columns_is_named_in_short(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text(",".join(f"c{index}" for index in range(5_000)) + "\n1,2\n")
    with pytest.raises(InputError) as refused:
        load_scored_sample(path)
    message = str(refused.value)
    assert "'c9', ... (5,000 columns)" in message and "'c10'" not in message


def test_a_weight_beyond_any_population_is_refused_naming_the_cell(tmp_path):
    """Weights of 1e308 overflowed: numpy warnings on stderr and every metric blank."""
    path = tmp_path / "scores.csv"
    path.write_text("score,label,weight\n0.9,1,1\n0.2,0,1e308\n0.4,1,2\n")
    with pytest.raises(InputError, match=r"row 3, column 'weight': expected a weight from 0"):
        load_scored_sample(path)


def test_a_pipe_named_as_a_scored_sample_is_refused_not_read(tmp_path):
    # The app reads the scored sample on a worker thread: opening a pipe with no writer
    # blocked it forever, and the app never exited (fuzz 13).
    import os

    from core.curves import load_scored_sample
    from core.errors import InputError

    pipe = tmp_path / "scores.csv"
    os.mkfifo(pipe)
    with pytest.raises(InputError, match="not a regular file"):
        load_scored_sample(pipe)


def test_a_date_where_a_score_belongs_is_said_as_the_spreadsheet_shows_it(tmp_path):
    # "got datetime.datetime(2026, 5, 1, 0, 0)" (fuzz 15).
    path = tmp_path / "scored.xlsx"
    workbook = Workbook()
    sheet = workbook.active
    sheet.append(["score", "label"])
    sheet.append([0.5, 1])
    sheet.append([dt.datetime(2026, 5, 1), 0])
    workbook.save(path)
    with pytest.raises(InputError) as refused:
        load_scored_sample(path)
    assert str(refused.value).endswith(
        "row 3, column 'score': expected a number, got the date 2026-05-01"
    )
