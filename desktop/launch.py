"""Entry point of the ``prplanner`` console command.

It lives on the desktop side because it is the one place allowed to know both layers:
with a subcommand it runs :func:`core.cli.main` and never imports Qt; without one (or with
an ``.xlsx`` path) it opens the desktop app.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence

WORKBOOK_SUFFIXES = (".xlsx", ".xlsm")


def _usage_error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def _has_display() -> bool:
    """Qt aborts the process without a screen; tell the user instead (Linux only)."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def main(argv: Sequence[str] | None = None) -> None:
    # Start-up creates a few hundred thousand objects (numpy, Qt, pyqtgraph, our own
    # modules) and no garbage worth collecting: the cyclic collector would scan them
    # again and again (about 30 ms of a 0.6 s start). It resumes once the command runs,
    # or, for the app, once the window is up (desktop.app.run_app).
    gc.disable()
    try:
        _main(argv)
    finally:
        gc.enable()


def _main(argv: Sequence[str] | None) -> None:
    from core.cli import COMMANDS
    from core.cli import main as cli_main

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and (argv[0] in COMMANDS or argv[0].startswith("-")):
        gc.enable()
        sys.exit(cli_main(argv))
    if argv and not argv[0].lower().endswith(WORKBOOK_SUFFIXES):
        import difflib

        close = difflib.get_close_matches(argv[0], COMMANDS, n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        _usage_error(
            f"unknown command {argv[0]!r}; {hint}commands: {', '.join(COMMANDS)} "
            "(or give an .xlsx workbook to open it in the app)"
        )
    if len(argv) > 1:
        _usage_error(f"the app opens one workbook at a time; subcommands: {', '.join(COMMANDS)}")
    if not _has_display():
        _usage_error(
            "no display found (DISPLAY is not set): the desktop app needs a screen; "
            "the subcommands (prplanner --help) work without one"
        )
    from desktop.app import run_app  # Qt is imported only from here on

    sys.exit(run_app(argv[0] if argv else None))


if __name__ == "__main__":
    main()
