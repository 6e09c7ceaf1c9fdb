"""The headless ``prplanner`` subcommands.

Each subcommand lives in its own module under ``core.cli`` and exposes

* ``HELP``: one line for ``prplanner --help``;
* ``configure(parser)``: adds its options to an :class:`argparse.ArgumentParser`;
* ``run(args)``: does the work and returns a frozen core result object whose
  ``to_dict()`` is the command's JSON contract (``--json`` prints it; a module with
  ``json_lines(result)`` streams it instead);
* ``format_text(result) -> str``: the same object for people.

Bad input raises :class:`core.errors.InputError` (or ``argparse`` rejects a flag); both end
as exit status 2 with one line ``error: ...`` on stderr, never a traceback. The line names
the flag or the file once and says what to type instead: argparse's own messages are put
in plain words (:data:`_ARGPARSE_WORDS`), a percentage given to a flag that takes a fraction
is refused with the fraction it meant before any command runs
(:data:`core.cli.output.FRACTION_FLAGS`), and system errors name the file once
(:func:`core.cli.output.os_error_message`). ``python3 -m core.cli`` runs the same commands.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from core.cli.output import (
    FLAG_WORDS,
    check_fractions,
    json_ready,
    os_error_message,
    path_argument,
)
from core.errors import InputError, use_words
from core.validation import CONTROL_CHARACTER, NOT_TEXT

#: Subcommand name -> (module, one line for ``prplanner --help``). Only the module of the
#: subcommand being run is imported, so a slow import in one never delays the others.
COMMANDS: dict[str, tuple[str, str]] = {
    "plan": ("core.cli.plan", "Plan a labeling round: optimal over-sampling ratio and sizes"),
    "evaluate": ("core.cli.evaluate", "Estimates and every interval of one labeled round"),
    "compare": ("core.cli.compare", "Change in precision and recall between two rounds"),
    "coverage": ("core.cli.coverage", "Simulated coverage of the intervals at a design"),
    "samplesize": ("core.cli.samplesize", "Labels needed to estimate one precision"),
    "p3": ("core.cli.p3", "Precision and F1 across prevalences, with the uncertainty band"),
    "curves": ("core.cli.curves", "PR and ROC areas of a scored, labeled sample (.csv/.xlsx)"),
    "ensemble": ("core.cli.ensemble", "Labels a child classifier needs when reusing a parent's"),
    "rounds": ("core.cli.rounds", "List the past rounds in a workbook and the refused rows"),
    "report": ("core.cli.report", "Write an Excel report of a rounds workbook or session"),
    "count": ("core.cli.count", "Count the flagged and unflagged items of an item list"),
    "select": ("core.cli.select", "Draw a labeling round's sample from an item list"),
    "labels": ("core.cli.labels", "Count and evaluate a labeled labeling workbook"),
}

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """Raised by :class:`_Parser` instead of printing usage and exiting."""


#: What argparse would take for an option but is a value: a negative number in any
#: spelling (``-1e308``, ``-inf``, ``-1/19``, ``-1,-1,0,0``), so that the flag's own check
#: names the problem instead of "expected one argument".
_NEGATIVE_VALUE = re.compile(r"^-(\d|\.\d|inf|nan)", re.IGNORECASE)

#: argparse's messages (Python 3.11+) -> plain words; ``{command}`` is the subcommand.
_ARGPARSE_WORDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), words)
    for pattern, words in (
        (r"^argument (?P<flag>[^:]+): expected one argument$", "{flag} needs a value"),
        (r"^argument (?P<flag>[^:]+): expected (?P<n>\d+) arguments$", "{flag} needs {n} values"),
        (
            r"^argument (?P<flag>[^:]+): expected at least one argument$",
            "{flag} needs at least one value",
        ),
        (
            r"^argument (?P<flag>[^:]+): not allowed with argument (?P<other>.+)$",
            "{flag} is not allowed with {other}: give one or the other",
        ),
        (
            r"^argument COMMAND: invalid choice: (?P<value>.*?) \(choose from .*\)$",
            "unknown command {value}; the commands are " + ", ".join(COMMANDS),
        ),
        (r"^argument (?P<flag>[^:]+): (?P<rest>.*)$", "{flag}: {rest}"),
        (
            r"^the following arguments are required: (?P<names>.*)$",
            "{command}: {names} required (prplanner {command} --help explains them)",
        ),
        (
            r"^one of the arguments (?P<names>.*) is required$",
            "{command}: one of {names} is required",
        ),
    )
)


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors become one ``error: ...`` line in plain words."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_VALUE

    def error(self, message: str):
        command = self.prog.split()[-1]
        for pattern, words in _ARGPARSE_WORDS:
            found = pattern.match(message)
            if found:
                raise UsageError(words.format(command=command, **found.groupdict()))
        raise UsageError(f"{command}: {message}")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``prplanner`` parser; only ``command``'s module is imported and configured."""
    parser = _Parser(
        prog="prplanner",
        description=(
            "Plan and evaluate labeling rounds for imbalanced binary classifiers. "
            "Without a subcommand (or with an .xlsx file) the desktop app opens."
        ),
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (module_name, help_text) in COMMANDS.items():
        command_parser = sub.add_parser(name, help=help_text, description=help_text)
        if name == command:
            module = importlib.import_module(module_name)
            command_parser.description = getattr(module, "HELP", help_text)
            module.configure(command_parser)
            for action in command_parser._actions:
                if action.type is Path:  # every file name is checked the same way
                    action.type = path_argument
            command_parser.set_defaults(_module=module)
    return parser


class _VersionAction(argparse.Action):
    """``--version``, looked up only when asked: ``importlib.metadata`` costs every other
    command about 20 ms."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kwargs):
        kwargs.setdefault("help", "show the version and exit")
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(_version())
        parser.exit()


def _version() -> str:
    try:
        from importlib.metadata import version

        return f"prplanner {version('prplanner')}"
    except Exception:  # not installed (running from a checkout)
        return "prplanner (development checkout)"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; return the process exit status."""
    # Messages name parameters by their flags while the command runs (then as before: an
    # in-process caller, such as a test, keeps its own words).
    words = use_words(FLAG_WORDS)
    try:
        return _run(argv)
    finally:
        use_words(words)


#: A word longer than this (a 5,000-character value echoed back) is cut in a message.
_LONGEST_WORD = 200
_LONG_WORD = re.compile(rf"\S{{{_LONGEST_WORD + 1},}}")


def _shortened(message: str) -> str:
    """``message`` with every very long word cut in the middle, its length said, so one
    pasted value cannot turn the error line into pages."""

    def cut(found: re.Match[str]) -> str:
        word = found.group()
        return f"{word[:120]}...{word[-40:]} ({len(word):,} characters)"

    # One line: a line break in a file's name split it (fuzz 15); shown as ⏎.
    one_line = message.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "⏎")
    return _LONG_WORD.sub(cut, one_line)


def _refuse_control_characters(argv: Sequence[str]) -> None:
    for text in argv:
        found = CONTROL_CHARACTER.search(text)
        if found:
            raise UsageError(
                f"{text!r} holds a control character ({found.group()!r}), which no file name, "
                "column or round name can hold; type the value again without it"
            )
        found = NOT_TEXT.search(text)
        if found:
            shown = NOT_TEXT.sub("\ufffd", text)  # as a replacement character
            what = (
                "a byte that is not UTF-8 text"
                if "\ud800" <= found.group() <= "\udfff"
                else f"the non-character U+{ord(found.group()):04X}"
            )
            raise UsageError(
                f"{shown!r} holds {what}, which no workbook can store; type the value again "
                "without it (a file with such a name: rename it)"
            )


def _refuse_repeated_flags(
    parser: argparse.ArgumentParser, command: str, argv: Sequence[str]
) -> None:
    """Refuse a flag that takes one value given more than once: the last one counted
    without a word (``--n-pos 5 ... --n-pos 50`` drew 50; fuzz 18). Repeatable flags
    (``--column``) are not counted."""
    sub = next(
        action.choices[command]
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
    )
    single = {
        option: action
        for action in sub._actions
        if isinstance(action, argparse._StoreAction)
        for option in action.option_strings
    }
    seen: dict[argparse.Action, list[str]] = {}
    for token in argv[1:]:
        if token == "--":
            break
        option = token.split("=", 1)[0] if token.startswith("--") else token
        if token.startswith("--") and option not in single:
            # argparse takes a unique prefix (--n-p for --n-pos): counted as that flag.
            known = {o for action in sub._actions for o in action.option_strings}
            matches = [o for o in known if o.startswith(option)]
            option = matches[0] if len(matches) == 1 else option
        found = single.get(option)
        if found is not None:
            seen.setdefault(found, []).append(option)
    for repeated, given in seen.items():
        if len(given) > 1:
            raise UsageError(
                f"{repeated.option_strings[-1]} is given {len(given)} times; give it once"
            )


def _run(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        _refuse_control_characters(argv)
        command = argv[0] if argv and argv[0] in COMMANDS else None
        parser = build_parser(command)
        args, extra = parser.parse_known_args(argv)
        if extra:
            where = f"{args.command}: " if args.command else ""
            raise UsageError(
                f"{where}not understood: {' '.join(extra)} (prplanner "
                f"{args.command + ' ' if args.command else ''}--help lists the options)"
            )
        if args.command is None:
            raise UsageError("a subcommand is required (see prplanner --help)")
        _refuse_repeated_flags(parser, args.command, argv)
        module = args._module
        check_fractions(args)
        result = module.run(args)
    except (UsageError, InputError) as exc:
        print(f"error: {_shortened(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        print(f"error: {_shortened(os_error_message(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # never a traceback for users
        print(
            f"error: internal error ({type(exc).__name__}: {exc}); please report it",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    if getattr(args, "json", False):
        # A module with ``json_lines`` streams its JSON (a million rounds would otherwise be
        # held as dicts and as one string at the same time).
        json_lines = getattr(module, "json_lines", None)
        if json_lines is not None:
            text = json_lines(result)
        else:
            text = json.dumps(json_ready(result.to_dict()), indent=2, allow_nan=False)
    else:
        text = module.format_text(result)
    try:
        if isinstance(text, str):
            print(text)
        else:
            sys.stdout.writelines(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped early (``prplanner ... | head``): not an error of ours. Point
        # stdout at devnull so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return EXIT_OK
