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


#: Each module that implements a paper's method -> an author it must cite.
PAPER_MODULES = {
    "assurance": "Shang",
    "batch_intervals": "Wilson",
    "bayes": "Shang",
    "compare": "Newcombe",
    "confusion": "Shang",
    "coverage": "Shang",
    "curves": "Davis and Goadrich",
    "ensemble": "Tripathi",
    "evaluation": "Shang",
    "intervals": "Katz",
    "methods": "Shang",
    "plan_request": "Shang",
    "planning": "Shang",
    "prevalence": "Brabec",
    "resampling": "Efron",
    "selection": "FIPS 180-4",
}


def test_modules_that_implement_a_paper_name_it_in_a_references_section():
    import ast

    methods = (PROJECT_ROOT / "docs" / "methods.md").read_text(encoding="utf-8")
    references = methods[methods.index("## References") :]
    for name, author in PAPER_MODULES.items():
        source = (PROJECT_ROOT / "core" / f"{name}.py").read_text(encoding="utf-8")
        docstring = ast.get_docstring(ast.parse(source)) or ""
        assert "\nReferences\n----------\n" in docstring, name
        section = docstring.split("\nReferences\n----------\n", 1)[1]
        assert author in section, (name, author)
        # Every work a section names is in the methods document's list.
        for first_author in re.findall(
            r"\b([A-Z][a-z]+)(?: et al\.| and [A-Z][a-z]+)? (?:19|20)\d\d", section
        ):
            assert first_author in references, (name, first_author)
