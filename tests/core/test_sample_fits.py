"""A labeled sample larger than its stratum is refused everywhere, with or without FPC."""

from __future__ import annotations

import pytest

from core.cli import main
from core.confusion import ConfusionMatrix, Population
from core.errors import InputError
from core.evaluation import evaluate

TOO_MANY = ["--tp", "8", "--fp", "5", "--fn", "3", "--tn", "50"]  # 13 labels from 10 items


@pytest.mark.parametrize("fpc", [False, True])
def test_evaluate_refuses_more_labels_than_items_in_a_stratum(fpc):
    matrix = ConfusionMatrix(tp=8, fp=5, fn=3, tn=50)
    with pytest.raises(InputError, match=r"predicted-positive sample \(13 labeled items\)"):
        evaluate(matrix, population=Population.from_counts(10, 100), fpc=fpc)
    with pytest.raises(InputError, match=r"predicted-negative sample \(53 labeled items\)"):
        evaluate(matrix, population=Population.from_counts(100, 52), fpc=fpc)


def test_a_sample_exactly_the_size_of_its_stratum_is_fine():
    result = evaluate(
        ConfusionMatrix(tp=8, fp=5, fn=3, tn=50), population=Population.from_counts(13, 53)
    )
    assert result.precision.estimate == pytest.approx(8 / 13)


def test_only_k_cannot_be_checked_and_is_accepted():
    result = evaluate(ConfusionMatrix(tp=8, fp=5, fn=3, tn=50), population=Population(k=0.1))
    assert result.precision.estimate == pytest.approx(8 / 13)


@pytest.mark.parametrize("extra", [[], ["--fpc"]])
def test_cli_evaluate_exits_2_with_one_line(capsys, extra):
    assert main(["evaluate", "--population", "10", "100", *TOO_MANY, *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "larger than its population (10 items)" in err


def test_cli_compare_checks_each_round(capsys):
    second = ["--k2", "0.1", "--tp2", "5", "--fp2", "1", "--fn2", "2", "--tn2", "40"]
    status = main(["compare", "--population", "10", "100", *TOO_MANY, *second])
    assert status == 2
    assert "--population: the predicted-positive sample (13" in capsys.readouterr().err
