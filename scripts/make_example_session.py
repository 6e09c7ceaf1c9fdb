"""Write ``resources/example_session.xlsx``: the session the app opens at its first start.

The default inputs (:class:`core.session.SessionState`) plus the realistic history of
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

from core.session import SessionState  # noqa: E402
from core.workbook.rounds import read_rounds  # noqa: E402
from core.workbook.session_io import open_session, save_session  # noqa: E402


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else ROOT / "resources" / "example_session.xlsx"
    book = read_rounds(ROOT / "resources" / "example_rounds.xlsx")
    if book.refused:
        raise SystemExit(f"example rounds have refused rows: {book.refused}")
    state = SessionState(rounds=book.rounds)
    save_session(out, state)
    restored, problems = open_session(out)
    if problems or restored != state:
        raise SystemExit(f"{out} does not reopen as saved: {problems}")
    print(f"wrote {out}: default inputs and {len(book.rounds)} past rounds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
