"""Headless engine of PR Planner: statistics, planning and Excel I/O.

This package never imports Qt (``tests/core/test_headless.py`` enforces it), so it can
run in scripts, on servers and under the ``prplanner`` command line.

Equation numbers in docstrings (``Eq 4``, ``Theorem 1``) are headings of
``docs/methods.md``, the project's methods document, which keeps the source papers'
numbering; ``methods §11`` means its section 11.
"""

from core.errors import InputError

__all__ = ["InputError"]
