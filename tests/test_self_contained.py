"""A clone stands alone: no code, test, document or help page points at a folder the clone
does not have (``shared/``, the design spec) or at an issue number; equations are cited
from the project's own ``docs/methods.md``."""

from __future__ import annotations

import re

from tests.conftest import PROJECT_ROOT

FOLDERS = ("core", "desktop", "tests", "benchmarks", "scripts", "docs", "resources")
POINTERS = re.compile(r"shared/(spec|fixtures)|\bspec (page )?\d|\bissue \d+\b|\bissue #\d+", re.I)
#: Mentions of other projects' issue trackers are citations, not pointers into ours.
ALLOWED = re.compile(r"pyqtgraph issue \d+")


def test_no_pointer_outside_the_clone():
    offenders = []
    paths = [PROJECT_ROOT / "README.md", PROJECT_ROOT / "pyproject.toml"]
    for folder in FOLDERS:
        paths += [
            path
            for path in (PROJECT_ROOT / folder).rglob("*")
            if path.suffix in (".py", ".md", ".toml", ".txt") and path.is_file()
        ]
    for path in paths:
        if path.name == "test_self_contained.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if POINTERS.search(ALLOWED.sub("", line)):
                offenders.append(f"{path.relative_to(PROJECT_ROOT)}:{number}: {line.strip()}")
    assert offenders == [], "\n".join(offenders[:20])
