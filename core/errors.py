"""The one exception type that ``core`` raises for bad input, and how its messages name
the parameters a user sets.

``core`` does not know whether a flag or a field set a value. A message that tells the
user what to change names the parameter through :func:`named` (``named("fpc")``), and
each interface says it in its own words: the command line installs flags
(``--fpc``, :data:`core.cli.output.FLAG_WORDS`), the app its field labels ("Finite
population correction", :data:`desktop.formatting.FIELD_WORDS`), with
:func:`use_words` once at start. Used as a library, ``core`` says the parameter's own
name in backticks (```fpc```).
"""

from __future__ import annotations

import errno
from collections.abc import Mapping, Sequence

#: Every parameter a ``core`` message may name, with what it is (the interfaces' word
#: tables must cover them all; a test checks it).
PARAMETERS: Mapping[str, str] = {
    "population": "both predicted-positive and predicted-negative population counts",
    "prior": "the prior (a preset or a strength)",
    "counts": "a round's TP, FP, FN and TN",
    "costs": "the label costs of a predicted positive and a predicted negative",
    "s": "the over-sampling ratio s",
    "v": "the total number of labels v",
    "method=optimal": "the optimal choice of s",
    "fpc": "the finite population correction",
    "bayesian": "Bayesian predictive margins",
    "n_pos": "the number of predicted positives to label",
    "n_neg": "the number of predicted negatives to label",
    "n_parent": "the parent's sample size",
    "n_child": "a child's sample size",
    "seed": "the sample's seed",
    "sql": "the SQL dialect",
    "table": "the table the SQL reads",
    "id": "the item id column",
    "predicted": "the predicted-label column",
    "score": "the score column",
    "threshold": "the score threshold",
    "classifiers": "the other classifiers' columns",
    "keep": "the columns kept for labelers",
    "show_strata": "showing the labelers which items were flagged",
    "column": "a column choice (ROLE=HEADER)",
    "sheet": "the sheet to read",
    "classifier": "the classifier a round is filed under",
    "round": "the name of a round",
    "update": "updating the round's row",
}

_words: Mapping[str, str] = {}


def use_words(words: Mapping[str, str]) -> Mapping[str, str]:
    """Say parameters in ``words`` from now on (for the whole process); returns the words
    used before, so a caller can put them back."""
    global _words
    previous, _words = _words, dict(words)
    return previous


def named(parameter: str) -> str:
    """``parameter`` (a key of :data:`PARAMETERS`) in the words now in use."""
    if parameter not in PARAMETERS:
        raise KeyError(f"{parameter!r} is not a parameter listed in core.errors.PARAMETERS")
    return _words.get(parameter, f"`{parameter}`")


def _said_as_flag(word: str) -> bool:
    return word.startswith(("--", "`"))


def column_choice(role: str, header: str | None, role_words: str, sheet: str | None = None) -> str:
    """A column choice (``ROLE=HEADER``) as a noun, in the words now in use.

    ``--column ignore=Week`` on the command line; in the app, whose Columns… dialog sets a
    role per column, ``“nothing (ignored)” for column 'Week'``. ``header`` None stands for
    any header (``HEADER``); ``role_words`` is the role as the dialog lists it; ``sheet``
    limits the choice to one sheet.
    """
    word = named("column")
    if _said_as_flag(word):
        prefix = f"{sheet}!" if sheet else ""
        return f"{word} {prefix}{role}={'HEADER' if header is None else header}"
    if header is None:
        return f"the column of the {role_words}"
    of_sheet = f" of sheet {sheet!r}" if sheet else ""
    if not header:  # "classifier=": no column; the sheet's name is the classifier
        named_sheet = f"the name of sheet {sheet!r}" if sheet else "the sheet's name"
        return f"{named_sheet} as the {role_words}"
    return f"“{role_words}” for column {header!r}{of_sheet}"


def column_choice_advice(choices: Sequence[tuple[str, str | None, str]]) -> str:
    """What to do to make column choices ``(role, header, role_words)``: an imperative
    phrase such as ``use --column ignore=Week`` or, in the app, ``choose “nothing
    (ignored)” for column 'Week' with Columns… in the Rounds panel``."""
    word = named("column")
    if _said_as_flag(word):
        return "use " + " ".join(column_choice(*choice) for choice in choices)
    known = [column_choice(*choice) for choice in choices if choice[1] is not None]
    unknown = [role_words for _, header, role_words in choices if header is None]
    parts = []
    if known:
        parts.append("choose " + _joined(known))
    if unknown:
        verb = "columns hold" if len(unknown) > 1 else "column holds"
        parts.append(f"choose which {verb} the {_joined(unknown)}")
    return f"{' and '.join(parts)} with {word}"


def _joined(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


class InputError(ValueError):
    """Input that cannot be used, with a message a user can act on.

    Every public ``core`` function validates its arguments at the edge and raises this
    (never a bare ``ValueError``, ``ZeroDivisionError`` or a silent NaN). The message names
    the offending parameter and value, e.g. ``"tp must be a whole number >= 0, got -3"``,
    so the command line and the GUI can show it unchanged; a parameter the user set in
    the interface is named with :func:`named`.
    """


_READ_CAUSES = {
    errno.ENOENT: "no such file or folder",
    errno.EACCES: "permission denied; ask the owner of the file (or folder) for access",
    errno.EPERM: "permission denied; ask the owner of the file (or folder) for access",
    errno.EISDIR: "it is a folder; name a file",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.ENAMETOOLONG: "the name is too long",
    errno.ENOSPC: "the disk is full",
    errno.EROFS: "the folder is on a read-only file system",
    errno.ELOOP: "too many symbolic links",
    errno.EBUSY: "the file is in use by another program",
}


def os_error_cause(exc: OSError) -> str:
    """Why reading a file failed (an operating-system error), in plain words."""
    return _READ_CAUSES.get(exc.errno or -1) or exc.strerror or str(exc) or type(exc).__name__
