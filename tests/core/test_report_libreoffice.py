"""The report opens in LibreOffice: converted to PDF, with the pages expected.

soffice exits with status 0 even when a conversion fails, so the test checks that the PDF
exists and counts its pages from the PDF bytes (``/Type /Page`` objects; LibreOffice does
not compress its page objects into object streams).
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from core.session import SessionState
from core.workbook.report import write_report
from tests.core.test_report import FORMULA_NAMES, make_round

SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")

pytestmark = pytest.mark.skipif(
    SOFFICE is None, reason="LibreOffice (soffice) is not installed; cannot open the report"
)

_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def pdf_page_count(data: bytes) -> int:
    """Pages of a PDF, counted from its page objects (no PDF library needed)."""
    return len(_PAGE.findall(data))


def _convert(source, folder) -> bytes:
    profile = folder / "lo-profile"
    subprocess.run(
        [
            SOFFICE,
            f"-env:UserInstallation=file://{profile}",  # a private profile: no lock clashes
            "--headless",
            "--convert-to",
            "pdf",
            "--outdir",
            str(folder),
            str(source),
        ],
        check=False,
        capture_output=True,
        timeout=240,
    )
    pdf = folder / (source.stem + ".pdf")
    assert pdf.is_file(), "LibreOffice did not write the PDF (it could not open the report)"
    return pdf.read_bytes()


def test_pdf_page_count_reads_page_objects_only():
    data = b"<< /Type /Pages /Count 2 >> << /Type /Page >> <</Type/Page/Parent 1 0 R>>"
    assert pdf_page_count(data) == 2


def test_libreoffice_opens_the_report(tmp_path):
    rounds = tuple(
        make_round(name, row=index + 2, classifier=("travel", "finance")[index % 2], tp=200 + index)
        for index, name in enumerate(("TR-01", "TR-02", *FORMULA_NAMES))
    )
    source = tmp_path / "report.xlsx"
    write_report(source, SessionState(rounds=rounds), round_name="TR-02")
    data = _convert(source, tmp_path)
    assert data.startswith(b"%PDF")
    pages = pdf_page_count(data)
    # Every visible sheet prints one page wide: Summary (two pages of text at full size, one
    # of charts), Intervals, Rounds: 6 pages when checked by eye with LibreOffice 7 (18
    # before the print set-up; the chart data and the inputs are on hidden sheets).
    assert 5 <= pages <= 8, pages
