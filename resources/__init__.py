"""Files bundled with the app (example workbooks, help pages), as ``desktop.resources``.

The files live in the top-level ``resources/`` folder of a checkout and install as the
package data of ``desktop.resources`` (``pyproject.toml`` maps the folder to that name), so
no generic top-level ``resources`` package is installed. Read them through :func:`path`,
which finds them in a checkout, an installed wheel and the PyInstaller app alike.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

#: The example workbook that ``prplanner`` opens when started without a file.
EXAMPLE_ROUNDS = "example_rounds.xlsx"


def path(name: str) -> Path:
    """Filesystem path of the bundled resource ``name`` (``"help/plan.md"``).

    Raises ``FileNotFoundError`` naming the resource when it is not bundled.
    """
    resource = resources.files(__name__).joinpath(*name.split("/"))
    if not resource.is_file():
        raise FileNotFoundError(f"bundled resource {name!r} is missing")
    # The package is a plain directory in a checkout and in an installed wheel, so the
    # traversable is a real path; zip imports are not supported by this app.
    return Path(str(resource))


def read_text(name: str) -> str:
    """Text of the bundled resource ``name`` (UTF-8)."""
    return path(name).read_text(encoding="utf-8")


def round_fingerprint(item) -> tuple:
    """What tells one round from another whatever file it was saved in or written to:
    name, date, classifier (as a workbook may spell it) and counts (a
    :class:`core.workbook.rounds.Round`)."""
    from core.workbook.rounds import classifier_key

    classifier = classifier_key(item.classifier) if item.classifier else None
    return (item.round, item.date, classifier, item.tp, item.fp, item.fn, item.tn)


@functools.cache
def example_round_fingerprints() -> frozenset[tuple]:
    """:func:`round_fingerprint` of every round of the bundled example, so that they are
    known as the example's after the session holding them was saved and reopened (empty
    when the install is damaged)."""
    from core.errors import InputError
    from core.workbook.rounds import read_rounds

    try:
        book = read_rounds(path(EXAMPLE_ROUNDS))
    except (InputError, FileNotFoundError):
        return frozenset()
    return frozenset(round_fingerprint(item) for item in book.rounds)


def is_example_round(item) -> bool:
    """``item`` is one of the bundled example's rounds (in the example session or in a
    session saved from it), not a round of the lead's own."""
    from core.workbook.session_io import added_in_app

    return not added_in_app(item) and round_fingerprint(item) in example_round_fingerprints()


def without_example_rounds(rounds) -> tuple[tuple, int]:
    """``rounds`` without the bundled example's, and how many were taken out."""
    own = tuple(item for item in rounds if not is_example_round(item))
    return own, len(rounds) - len(own)
