"""Shared output helpers and flag parsers for the subcommands."""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from fractions import Fraction

import numpy as np

from core.errors import InputError

#: The flags that set each parameter ``core`` messages name (:data:`core.errors.PARAMETERS`).
FLAG_WORDS: Mapping[str, str] = {
    "population": "--population N_POS N_NEG",
    "prior": "--prior or --prior-strength",
    "counts": "--tp --fp --fn --tn",
    "costs": "--cost-pos and --cost-neg",
    "s": "--s",
    "v": "--v",
    "method=optimal": "--method optimal",
    "fpc": "--fpc",
    "bayesian": "--bayesian",
    "n_pos": "--n-pos",
    "n_neg": "--n-neg",
    "n_parent": "--n-parent",
    "n_child": "--n-child",
    "seed": "--seed",
    "sql": "--sql",
    "table": "--table",
    "id": "--id",
    "predicted": "--predicted",
    "score": "--score",
    "threshold": "--threshold",
    "classifiers": "--classifiers",
    "keep": "--keep",
    "column": "--column",
    "sheet": "--sheet",
    "classifier": "--classifier",
    "round": "--round",
}


def json_ready(value):
    """Plain JSON types: numpy scalars to int/float, NaN/inf to ``None``, tuples to lists."""
    if isinstance(value, Mapping):
        return {str(key): json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(item) for item in value]
    if isinstance(value, np.ndarray):
        return [json_ready(item) for item in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    return value


def significant(value, digits: int = 4) -> str:
    """``digits`` significant digits (``"-"`` when undefined); whole numbers with
    thousands separators. P3 and curve values span several orders of magnitude."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "-"
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return f"{int(value):,}"
    return f"{value:.{digits}g}"


# --- argparse ``type=`` callables with messages that name the flag's value ----------------


#: Longest text a number flag accepts: no real value needs more digits, and a 400-digit
#: fraction would overflow on the way to a float.
MAX_NUMBER_TEXT = 60


def number(text: str) -> float:
    """A float; fractions such as ``1/19`` are accepted (handy for ``--k``)."""
    if len(text) > MAX_NUMBER_TEXT:
        raise argparse.ArgumentTypeError(
            f"expected a number of at most {MAX_NUMBER_TEXT} characters, got one of {len(text):,}"
        )
    try:
        value = float(Fraction(text.strip())) if "/" in text else float(text)
    except (ValueError, ZeroDivisionError, OverflowError):
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def whole(text: str) -> int:
    """A whole number >= 0 (``1,000`` accepted)."""
    cleaned = text.strip().replace(",", "").replace("_", "")
    if len(cleaned) > 16:  # 10^15 has 16 digits; longer text is no count we accept
        raise argparse.ArgumentTypeError(
            f"expected a whole number of at most 10^15, got one of {len(cleaned):,} characters"
        )
    try:
        value = int(cleaned)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


def number_list(count: int):
    """A comma-separated list of exactly ``count`` numbers (``--prior 1,1,0.5,0.5``)."""

    def parse(text: str) -> tuple[float, ...]:
        parts = [part for part in text.split(",")]
        if len(parts) != count:
            raise argparse.ArgumentTypeError(
                f"expected {count} comma-separated numbers, got {text!r}"
            )
        return tuple(number(part) for part in parts)

    return parse


def confidence_flag(value: float) -> float:
    """``--confidence`` checked with a message that names the flag."""
    if 0.5 < value < 1:
        return value
    raise InputError(f"--confidence must be strictly between 0.5 and 1 (e.g. 0.95), got {value!r}")


@contextmanager
def flags_named(names: Mapping[str, str]) -> Iterator[None]:
    """Name the flag in the messages of the ``core`` checks run inside the block.

    ``core`` names its parameters (``"confidence must be ..."``); the command line should
    name the flag the user typed (``"--confidence must be ..."``). ``names`` maps a
    parameter's name, as ``core`` spells it, to its flag; a message that starts with
    ``"<name> must"`` is raised again with the flag in front, any other unchanged.
    """
    try:
        yield
    except InputError as exc:
        text = str(exc)
        for name, flag in names.items():
            if text.startswith(f"{name} must"):
                raise InputError(flag + text[len(name) :]) from None
        raise


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
