"""Shared output helpers and flag parsers for the subcommands."""

from __future__ import annotations

import argparse
import datetime as dt
import errno
import math
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path

import numpy as np

from core import validation
from core.errors import InputError, os_error_cause

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
    "show_strata": "--show-strata",
    "column": "--column",
    "sheet": "--sheet",
    "classifier": "--classifier",
    "round": "--round",
    "update": "--update",
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
    """A float; fractions such as ``1/19`` or ``1/26.4`` (how the app shows ``k``) are
    accepted. A comma is refused with a hint (``0,125`` is a decimal comma, not 125)."""
    return _number(text, thousands=False)


def score_threshold(text: str) -> float:
    """A score threshold: a number, or one written with a decimal comma (``0,6``) as the
    draw dialog takes it and a European export writes its scores; ``1,500`` stays
    ambiguous and is refused (trials 16 and 17: the app took ``0,6``, the command line
    refused it)."""
    stripped = text.strip()
    if _DECIMAL_COMMA.match(stripped) and not _THOUSANDS.match(stripped):
        return number(stripped.replace(",", "."))
    return number(text)


def count_number(text: str) -> float:
    """A count as a float (its checks name the flag later), with thousands set off by
    commas as the app's cells take them (``1,255``). ``3.000`` is refused: three thousand
    in much of Europe, and it was read as 3 while ``41.200`` was refused (fuzz 14)."""
    ambiguous = validation.ambiguous_count(text)
    if ambiguous:
        raise argparse.ArgumentTypeError(ambiguous)
    return _number(text, thousands=True)


def _number(text: str, *, thousands: bool) -> float:
    if len(text) > MAX_NUMBER_TEXT:
        raise argparse.ArgumentTypeError(
            f"expected a number of at most {MAX_NUMBER_TEXT} characters, got one of {len(text):,}"
        )
    stripped = text.strip()
    if thousands and _THOUSANDS.match(stripped):
        stripped = stripped.replace(",", "")
    if "_" in stripped or not stripped.isascii():
        # Python's float() reads 1_0 as 10 and Arabic-Indic or full-width digits as
        # numbers: a typo (or a paste) taken silently (fuzz 16).
        raise argparse.ArgumentTypeError(
            f"expected a number written with the digits 0-9, got {text!r}"
        )
    try:
        if "/" in stripped:
            numerator, denominator = stripped.split("/", 1)
            if "." in numerator or "." in denominator:
                value = float(numerator) / float(denominator)
            else:  # exact for whole numbers
                value = float(Fraction(stripped))
        else:
            value = float(stripped)
    except (ValueError, ZeroDivisionError, OverflowError):
        raise argparse.ArgumentTypeError(
            f"expected a number, got {text!r}{_number_hint(text)}"
        ) from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    if value == 0 and re.search(r"[1-9]", re.split(r"[eE]", stripped)[0]):
        # 1e-400 is no float: it became 0 without a word (--threshold 1e-400; fuzz 14).
        raise argparse.ArgumentTypeError(
            f"{text!r} is too close to 0 to be told from 0 (below about 1e-308)"
        )
    return value


_DECIMAL_COMMA = re.compile(r"^\s*[-+]?\d*,\d+\s*$")
#: A whole number with its thousands set off by commas: ``1,000`` or ``12,345,678``
#: (not ``0,125``, a decimal comma).
_THOUSANDS = re.compile(r"^[1-9]\d{0,2}(,\d{3})+$")


def _number_hint(text: str) -> str:
    """What a number that did not parse may have meant: a percentage or a decimal comma."""
    stripped = text.strip()
    if stripped.endswith("%"):
        try:
            percent = float(stripped[:-1])
        except ValueError:
            percent = math.nan
        if math.isfinite(percent):
            return (
                f"; give a fraction without the % sign: {_plain_number(percent / 100)} "
                f"for {_plain_number(percent)} %"
            )
        return "; give a fraction without the % sign (0.9 for 90 %)"
    if _THOUSANDS.match(stripped):
        # 1,000 is a thousand to most readers, and 1.000 would be one.
        plain = stripped.replace(",", "")
        if stripped.count(",") == 1:
            return (
                f"; write {plain} (no separator), or {stripped.replace(',', '.')} if you "
                "meant decimals"
            )
        return f"; write {plain} (no separators)"
    if _DECIMAL_COMMA.match(text):
        return f"; write decimals with a point: {stripped.replace(',', '.')}"
    return ""


def _plain_number(value: float) -> str:
    """``0.9``, ``95``, ``0.015``: a number as a person writes it (no ``95.0``)."""
    return f"{value:.12g}"


def whole(text: str) -> int:
    """A whole number >= 0 (``1,000`` accepted; ``1,5`` is not fifteen)."""
    cleaned = text.strip()
    if "_" in cleaned:
        # Python's 1_000; but int() also reads "1_0" as 10 (fuzz 18): underscores, like
        # commas, may only set off thousands.
        if not _THOUSANDS.match(cleaned.replace("_", ",")):
            raise argparse.ArgumentTypeError(
                f"expected a whole number, got {text!r} (underscores may only set off "
                "thousands, as in 1_000)"
            )
        cleaned = cleaned.replace("_", "")
    if not cleaned.isascii():  # int() reads Arabic-Indic and full-width digits (fuzz 16)
        raise argparse.ArgumentTypeError(
            f"expected a whole number written with the digits 0-9, got {text!r}"
        )
    if "," in cleaned:
        if not _THOUSANDS.match(cleaned):
            raise argparse.ArgumentTypeError(
                f"expected a whole number, got {text!r} (commas may only set off thousands, "
                "as in 1,000)"
            )
        cleaned = cleaned.replace(",", "")
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


def day(text: str) -> dt.date:
    """A date written ``YYYY-MM-DD`` (``2024-01-31``), from 1970-01-01 on: the rounds
    reader takes no earlier round date (:data:`core.workbook.rounds.EARLIEST_ROUND_DATE`)."""
    from core.workbook.rounds import EARLIEST_ROUND_DATE

    stripped = text.strip()
    try:
        if len(stripped) != 10:
            raise ValueError
        value = dt.date.fromisoformat(stripped)
    except ValueError:
        shown = stripped if len(stripped) <= 40 else stripped[:40] + "..."
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", stripped):
            # Written as asked, but no such day: "expected YYYY-MM-DD" sent the lead
            # looking for a typo in the form (fuzz 18).
            raise argparse.ArgumentTypeError(
                f"{stripped} is not a day of the calendar (check the month and the day)"
            ) from None
        raise argparse.ArgumentTypeError(
            f"expected a date written YYYY-MM-DD, such as 2024-01-31, got {shown!r}"
        ) from None
    if value < EARLIEST_ROUND_DATE:
        raise argparse.ArgumentTypeError(
            f"expected a date from {EARLIEST_ROUND_DATE.isoformat()} on (the day the round "
            f"was labeled), got {stripped}"
        )
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
    return validation.confidence(value, "--confidence")


#: Flags that take a fraction (a proportion, a rate, a confidence level or a margin), by
#: their flag in every subcommand that has them, with the range a value must fall in:
#: ``(low, high, low_included, high_included)``. A value in (1, 100] given to one of them
#: is a percentage typed where a fraction belongs (``--precision 90``): refused with the
#: fraction it probably meant, never silently divided by 100.
FRACTION_FLAGS: Mapping[str, tuple[float, float, bool, bool]] = {
    "--precision": (0.0, 1.0, False, False),
    "--recall": (0.0, 1.0, False, False),
    "--precision-floor": (0.0, 1.0, False, False),
    "--assurance-target": (0.0, 1.0, False, False),
    "--tpr": (0.0, 1.0, False, True),
    "--fpr": (0.0, 1.0, True, True),
    "--sigma-tpr": (0.0, 1.0, True, True),
    "--sigma-fpr": (0.0, 1.0, True, True),
    "--eta-min": (0.0, 1.0, False, False),
    "--eta-max": (0.0, 1.0, False, False),
    "--reference-prevalence": (0.0, 1.0, False, False),
    "--confidence": (0.5, 1.0, False, False),
    "--margin": (0.0, 0.5, False, False),
    "--margin-precision": (0.0, 0.5, False, False),
    "--margin-recall": (0.0, 0.5, False, False),
}


def percentage_refusal(flag: str, value: object) -> str | None:
    """The message refusing ``value`` for fraction flag ``flag`` when it looks like a
    percentage (a number in (1, 100]), or ``None`` when it does not.

    ``"--precision must be between 0 and 1 (a fraction); did you mean 0.9 for 90 %?"``;
    without the guess when the fraction would be out of range too (``--margin 60``).
    """
    limits = FRACTION_FLAGS.get(flag)
    if limits is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not 1 < value <= 100:
        return None
    low, high, low_included, high_included = limits
    fraction = value / 100
    fits = (low <= fraction if low_included else low < fraction) and (
        fraction <= high if high_included else fraction < high
    )
    where = f"{flag} must be between {_plain_number(low)} and {_plain_number(high)} (a fraction)"
    if fits:
        return f"{where}; did you mean {_plain_number(fraction)} for {_plain_number(value)} %?"
    return f"{where}, not a percentage; got {_plain_number(value)}"


def check_fractions(args: argparse.Namespace) -> None:
    """Refuse a percentage given to any fraction flag of the command (see
    :data:`FRACTION_FLAGS`), before the command runs, in the same words everywhere."""
    messages = [
        message
        for flag in FRACTION_FLAGS
        if (message := percentage_refusal(flag, getattr(args, flag[2:].replace("-", "_"), None)))
    ]
    if messages:  # all at once: a lead who typed 90 and 80 and 5 fixes them in one go
        raise InputError("; ".join(messages))


def path_argument(text: str) -> Path:
    """A file or folder name: not empty, no NUL character (``type=`` of every path)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a file name, got {text!r}")
    if "\x00" in text:
        raise argparse.ArgumentTypeError(
            "the file name holds a NUL character (\\x00), which no file name can"
        )
    return Path(text)


def shown_path(path: object, limit: int = 120) -> str:
    """A path for a message: as given, with a very long one cut in the middle."""
    text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
    if len(text) <= limit:
        return text
    return f"{text[: limit // 2]}...{text[-limit // 4 :]} ({len(text):,} characters)"


#: Suffixes of tables that a command reading Excel workbooks cannot read, with their kind.
OTHER_TABLE_SUFFIXES = {
    ".csv": "CSV",
    ".tsv": "TSV",
    ".tab": "TSV",
    ".txt": "text",
    ".parquet": "Parquet",
    ".json": "JSON",
}


def refuse_text_table(path: Path, needs: str) -> None:
    """Refuse a CSV, TSV or Parquet file (by its name, and not a zip inside) given where
    ``needs``, an Excel workbook, is read: say what it is and what to do instead."""
    kind = OTHER_TABLE_SUFFIXES.get(path.suffix.casefold())
    if kind is None or not path.is_file():
        return
    try:
        with path.open("rb") as stream:
            if stream.read(2) == b"PK":  # a workbook under another name: the reader decides
                return
    except OSError:
        return  # the reader says why it cannot be read
    fix = (
        "give the Excel workbook instead"
        if kind in ("Parquet", "JSON")
        else "open it in Excel or LibreOffice and save it as an Excel workbook (.xlsx)"
    )
    raise InputError(f"{shown_path(path)} is a {kind} file, but {needs}; {fix}")


def refuse_labeling_workbook(path: Path, command: str) -> None:
    """Refuse a labeling workbook given where rounds are read, saying which command reads
    it: its sheets were each skipped with advice to name their TP/FP/FN/TN columns, and
    ``rounds`` exited 0 (fuzz 18)."""
    from core.workbook.safe_io import is_labeling_workbook, sheet_names

    if is_labeling_workbook(sheet_names(path)):
        raise InputError(
            f"{shown_path(path)} is a labeling workbook (a sample drawn for the editors), not "
            f"a rounds workbook, so prplanner {command} finds no rounds in it: prplanner "
            f"labels {shown_path(path)} counts its labels, and with --append-to ROUNDS.xlsx "
            "adds the round to your rounds workbook"
        )


def os_error_message(exc: OSError) -> str:
    """An :class:`OSError` as one line naming the file once: ``data.csv: permission denied;
    ...``."""
    cause = os_error_cause(exc)
    if exc.filename is None:
        return cause
    if exc.errno == errno.EISDIR:
        return f"{shown_path(exc.filename)} is a folder, not a file; name a file"
    return f"{shown_path(exc.filename)}: {cause}"


#: The four values of ``--prior`` as ``core`` names them, and how the flag says them.
_PRIOR_VALUES = {
    name: f"--prior's {place} value ({name.upper()})"
    for name, place in (("a11", "first"), ("a01", "second"), ("a10", "third"), ("a00", "fourth"))
}


def prior_flag(values, name: str = "given by --prior"):
    """The :class:`core.bayes.Prior` (called ``name``) of ``--prior A11,A01,A10,A00``, with
    messages that name the flag and the value (``"--prior's first value (A11) must be
    ..."``)."""
    from core.bayes import Prior

    with flags_named(_PRIOR_VALUES):
        return Prior.from_sequence(values, name=name)


def population_flag(counts, flag: str = "--population N_POS N_NEG"):
    """The :class:`core.confusion.Population` of ``--population N_POS N_NEG``, with
    messages that name the flag."""
    from core.confusion import Population

    with flags_named({"population counts": flag}):
        return Population.from_counts(*counts)


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


#: What ``--column`` says, for the commands that read a rounds workbook.
COLUMN_HELP = (
    "read the column headed HEADER as ROLE (repeatable), e.g. classifier=Model, "
    "model_version=Model, tp='Correct flags', ignore=Model; classifier= (nothing after "
    "'=') names the classifier after the sheet; SHEET!ROLE=HEADER for one sheet only. "
    "Roles: round, date, classifier, model_version, population_pos, population_neg, k, "
    "s, tp, fp, fn, tn, notes, ignore"
)


def add_column_flag(parser: argparse.ArgumentParser, help_text: str = COLUMN_HELP) -> None:
    """``--column ROLE=HEADER`` (repeatable): what a rounds workbook's columns hold."""
    parser.add_argument(
        "--column", metavar="ROLE=HEADER", action="append", default=[], help=help_text
    )


def column_choices(args: argparse.Namespace) -> list[str]:
    """``--column``'s choices, checked before any file is read (a typo costs nothing)."""
    from core.workbook.rounds import ColumnChoice

    return [ColumnChoice.parse(text).to_text() for text in args.column]


def check_column_choices(opened, path: Path, choices: list[str]) -> None:
    """Refuse ``--column`` choices :func:`core.workbook.session_io.read_session` could not
    use: a saved session keeps the columns chosen when it began, and a choice no sheet has
    the header of is a typo (as ``prplanner rounds`` says)."""
    if not choices:
        return
    if opened.is_session:
        raise InputError(
            f"--column is for a rounds workbook in your own words; {path.name} is a saved "
            "session, whose columns were chosen when it began: leave --column out"
        )
    if opened.book is not None and opened.book.unused_choices:
        from core.workbook.rounds import unused_choices_in_words

        raise InputError(unused_choices_in_words(opened.book))


def why_no_rounds(problems) -> str:
    """The reader's reasons a workbook gave no round, shortened to fit one error line."""
    reasons = [text for text in problems if not text.endswith(": no rounds found")]
    if not reasons:
        return "no rows with TP, FP, FN, TN and k or the population counts"
    shown = "; ".join(reasons[:2])
    more = len(reasons) - 2
    return shown + (f"; and {more:,} more" if more > 0 else "")
