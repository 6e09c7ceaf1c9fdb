"""Headless engine of PR Planner: statistics, planning and Excel I/O.

This package never imports Qt (``tests/core/test_headless.py`` enforces it), so it can
run in scripts, on servers and under the ``prplanner`` command line.

Spec references in docstrings (``spec 1.2``, ``Eq 4``) point to ``shared/spec`` and
to the equation numbers of the source papers it restates.
"""

from core.errors import InputError

__all__ = ["InputError"]
