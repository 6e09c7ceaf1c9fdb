"""Entry point of the ``prplanner`` console command.

It lives on the desktop side because it is the one place allowed to know both layers:
with a subcommand it runs :func:`core.cli.main` and never imports Qt; without one (or with
an ``.xlsx`` path) it opens the desktop app.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    from core.cli import COMMANDS
    from core.cli import main as cli_main

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and (argv[0] in COMMANDS or argv[0].startswith("-")):
        sys.exit(cli_main(argv))
    if len(argv) > 1:
        print(
            "error: the app opens at most one workbook; subcommands: " + ", ".join(COMMANDS),
            file=sys.stderr,
        )
        sys.exit(2)
    from desktop.app import run_app  # Qt is imported only from here on

    sys.exit(run_app(argv[0] if argv else None))


if __name__ == "__main__":
    main()
