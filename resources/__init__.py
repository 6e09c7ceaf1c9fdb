"""Files bundled with the app (example workbooks, help pages), as ``desktop.resources``.

The files live in the top-level ``resources/`` folder of a checkout and install as the
package data of ``desktop.resources`` (``pyproject.toml`` maps the folder to that name), so
no generic top-level ``resources`` package is installed. Read them through :func:`path`,
which finds them in a checkout, an installed wheel and the PyInstaller app alike.
"""

from __future__ import annotations

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
