"""Write ``resources/example_session.xlsx``: the session the app opens at its first start.

The default inputs (:class:`core.session.SessionState`), with the design sliders on the
recommended plan as a new session has them, plus the realistic history of
``resources/example_rounds.xlsx`` (two classifiers, ``travel`` and ``finance``), saved with
the app's own session writer, so the file is exactly what File > Save would write and
File > Open restores it. Run ``python scripts/make_example_session.py [OUT]`` after changing
the defaults or the example rounds; the file is committed so the app never needs this
script.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.plan_request import with_sliders_on_recommended  # noqa: E402
from core.session import SessionState  # noqa: E402
from core.workbook.rounds import read_rounds  # noqa: E402
from core.workbook.session_io import open_session, save_session  # noqa: E402
from desktop.plan_tab import S_RANGE, V_RANGE  # noqa: E402


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else ROOT / "resources" / "example_session.xlsx"
    book = read_rounds(ROOT / "resources" / "example_rounds.xlsx")
    if book.refused:
        raise SystemExit(f"example rounds have refused rows: {book.refused}")
    state = with_sliders_on_recommended(SessionState(rounds=book.rounds), S_RANGE, V_RANGE)
    # Written beside it and then moved: the session writer never replaces a file it cannot
    # tell is its own, and a checked-out copy carries no such mark.
    fresh = out.with_name(f"new {out.name}")
    fresh.unlink(missing_ok=True)
    save_session(fresh, state)
    restored, problems = open_session(fresh)
    if problems or restored != state:
        raise SystemExit(f"{fresh} does not reopen as saved: {problems}")
    fresh.replace(out)
    print(f"wrote {out}: default inputs and {len(book.rounds)} past rounds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
