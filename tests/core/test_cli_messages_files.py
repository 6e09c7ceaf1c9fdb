"""Every command that reads a file names it once in its one ``error:`` line, keeps the
row and column of the problem, and says what to do; missing files, folders, pipes, files
without read permission, empty or non-UTF-8 files and file names no one can have end with
exit status 2 and no traceback, within seconds."""

from __future__ import annotations

import errno
import os
import re
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest

from core.cli import main
from core.cli.output import os_error_message
from tests.conftest import PROJECT_ROOT, SHARED_FIXTURES


def _refused(capsys, *argv) -> str:
    status = main([str(item) for item in argv])
    captured = capsys.readouterr()
    assert status == 2, captured
    assert "Traceback" not in captured.err and "internal error" not in captured.err
    errors = [line for line in captured.err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, captured.err
    return errors[0]


def _named_once(message: str, name: str) -> None:
    assert len(re.findall(re.escape(name), message)) == 1, message


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # names in messages are the names typed: short and plain
    (tmp_path / "dup.csv").write_text("id,predicted\nit-1,1\nit-2,0\nit-1,0\n")
    (tmp_path / "scores.csv").write_text("score,label\n0.9,1\n0.2,maybe\n")
    (tmp_path / "latin1.csv").write_bytes(
        "id,predicted,name\n1,1,caf\xe9\n2,0,na\xefve\n".encode("latin-1")
    )
    (tmp_path / "empty.csv").write_bytes(b"")
    (tmp_path / "folder.csv").mkdir()
    book = openpyxl.Workbook()
    book.active.append(["id", "predicted"])
    for row in (["a", 1], ["b", 0], ["a", 0]):
        book.active.append(row)
    book.save(tmp_path / "dup.xlsx")
    return tmp_path


SELECT = ["--n-pos", "1", "--n-neg", "1", "--seed", "1", "-o", "sample.xlsx"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("argv", "name", "pieces"),
    [
        (["select", "dup.csv", *SELECT], "dup.csv", ["duplicate item ids", "row 2", "row 4"]),
        (["select", "dup.xlsx", *SELECT], "dup.xlsx", ["duplicate item ids", "row 2", "row 4"]),
        (["select", "latin1.csv", *SELECT], "latin1.csv", ["not UTF-8", "as CSV UTF-8"]),
        (["select", "empty.csv", *SELECT], "empty.csv", ["is empty (0 bytes)"]),
        (["select", "folder.csv", *SELECT], "folder.csv", ["is a folder"]),
        (["select", "missing.csv", *SELECT], "missing.csv", ["no such file"]),
        (["curves", "scores.csv"], "scores.csv", ["row 3", "column 'label'", "'maybe'"]),
        (["curves", "empty.csv"], "empty.csv", ["is empty (0 bytes)"]),
        (["curves", "folder.csv"], "folder.csv", ["is a folder, not a table of scores"]),
        (["curves", "missing.csv"], "missing.csv", ["no such file"]),
        (["rounds", "missing.xlsx"], "missing.xlsx", ["no such file"]),
        (["rounds", "folder.csv"], "folder.csv", ["is a folder"]),
        (["report", "missing.xlsx", "-o", "r.xlsx"], "missing.xlsx", ["no such file"]),
        (["labels", "missing.xlsx"], "missing.xlsx", ["no such file"]),
        (["labels", "folder.csv"], "folder.csv", ["is a folder"]),
    ],
)
def test_a_bad_file_is_named_once_with_where_and_why(capsys, files, argv, name, pieces):
    error = _refused(capsys, *argv)
    _named_once(error, name)
    for piece in pieces:
        assert piece in error, error
    assert not (files / "sample.xlsx").exists() and not (files / "r.xlsx").exists()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["rounds", "dup.csv"],
            "error: dup.csv is a CSV file, but prplanner rounds reads an Excel workbook "
            "(.xlsx); open it in Excel or LibreOffice and save it as an Excel workbook (.xlsx)",
        ),
        (
            ["report", "dup.csv", "-o", "r.xlsx"],
            "error: dup.csv is a CSV file, but prplanner report reads a rounds workbook or a "
            "saved session (.xlsx); open it in Excel or LibreOffice and save it as an Excel "
            "workbook (.xlsx)",
        ),
        (
            ["select", "dup.csv", "--n-pos", "1", "--n-neg", "1", "--extend", "dup.csv", "-o",
             "top-up.xlsx"],
            "error: dup.csv is a CSV file, but --extend takes the labeling workbook (.xlsx) "
            "prplanner select wrote; open it in Excel or LibreOffice and save it as an Excel "
            "workbook (.xlsx)",
        ),
    ],
)  # fmt: skip
def test_a_csv_where_a_workbook_is_read_says_so(capsys, files, argv, expected):
    # Before: "dup.csv is a text file (CSV or similar) with an Excel name, ...; rename it to
    # .csv" -- about a file already named .csv.
    assert _refused(capsys, *argv) == expected


@pytest.mark.timeout(20)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_curves_refuses_a_pipe_instead_of_waiting_forever(capsys, files):
    os.mkfifo(files / "pipe.csv")
    error = _refused(capsys, "curves", "pipe.csv")
    assert error == (
        "error: pipe.csv is not a regular file (a pipe or a device), not a table of scores "
        "and labels"
    )


@pytest.mark.timeout(60)
def test_a_file_without_read_permission(capsys, files, monkeypatch):
    # Root reads any file whatever its mode, so the refusal of the system is simulated.
    real_open = Path.open

    def denied(self, *args, **kwargs):
        if self.name == "scores.csv":
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", denied)
    error = _refused(capsys, "curves", "scores.csv")
    assert error == (
        "error: scores.csv: permission denied; ask the owner of the file (or folder) for access"
    )


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (
            FileNotFoundError(errno.ENOENT, "No such file or directory", "a.csv"),
            "a.csv: no such file or folder",
        ),
        (
            IsADirectoryError(errno.EISDIR, "Is a directory", "d"),
            "d is a folder, not a file; name a file",
        ),
        (
            PermissionError(errno.EACCES, "Permission denied", "p.xlsx"),
            "p.xlsx: permission denied; ask the owner of the file (or folder) for access",
        ),
        (
            OSError(errno.ENAMETOOLONG, "File name too long", "x" * 5000),
            f"{'x' * 60}...{'x' * 30} (5,000 characters): the name is too long",
        ),
        (OSError(errno.EIO, "Input/output error"), "Input/output error"),
    ],
)  # fmt: skip
def test_system_errors_name_the_file_once_in_plain_words(exc, expected):
    # Before: "No such file or directory (a.csv)", "Permission denied (p.xlsx)".
    assert os_error_message(exc) == expected


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["select", "", "--n-pos", "1", "--n-neg", "1"],
            "error: ITEMS: expected a file name, got ''",
        ),
        (["curves", " "], "error: FILE: expected a file name, got ' '"),
        (["labels", ""], "error: SHEET.xlsx: expected a file name, got ''"),
        (
            ["rounds", "a\x00b.xlsx"],
            "error: 'a\\x00b.xlsx' holds a control character ('\\x00'), which no file name, "
            "column or round name can hold; type the value again without it",
        ),
        (
            ["labels", "sample.xlsx", "--append-to", "new.xlsx", "--round", "round\x01"],
            "error: 'round\\x01' holds a control character ('\\x01'), which no file name, "
            "column or round name can hold; type the value again without it",
        ),
        (
            ["labels", "sample.xlsx", "--append-to", "new.xlsx", "--classifier", "c\udcfe1"],
            "error: 'c\ufffd1' holds a byte that is not UTF-8 text, which no workbook can "
            "store; type the value again without it (a file with such a name: rename it)",
        ),
        (
            ["select", "items.csv", "--category", "tr\uffffavel"],
            "error: 'tr\ufffdavel' holds the non-character U+FFFF, which no workbook can "
            "store; type the value again without it (a file with such a name: rename it)",
        ),
        (
            ["report", str(SHARED_FIXTURES / "rounds_simple.xlsx"), "-o", ""],
            "error: -o/--output: expected a file name, got ''",
        ),
    ],
)  # fmt: skip
def test_file_names_no_one_can_have(capsys, files, argv, expected):
    # Before: ". is a folder, not an Excel workbook" (an empty name is the current folder),
    # "internal error (ValueError: embedded null byte)" and, from labels --append-to, an
    # internal error (IllegalCharacterError) or "...prplanner-xxxx.tmp is damaged".
    assert _refused(capsys, *argv) == expected


@pytest.mark.timeout(60)
def test_a_huge_value_is_cut_in_the_message(capsys, files):
    error = _refused(capsys, "report", str(SHARED_FIXTURES / "rounds_simple.xlsx"), "-o",
                     "a" * 5000 + ".xlsx")  # fmt: skip
    assert len(error) < 400 and "characters)" in error and "file name is too long" in error
    error = _refused(capsys, "select", "dup.csv", *SELECT, "--id", "c" * 5000)
    assert len(error) < 600 and "characters)" in error and "(given by --id)" in error


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["plan", "--k", "0.03", "--precision", "0.9", "--recall", "0.8", "--jsn"],
            "error: plan: not understood: --jsn (prplanner plan --help lists the options)",
        ),
        (["--jsn"], "error: not understood: --jsn (prplanner --help lists the options)"),
        (
            ["plan", "--k", "0.03", "--population", "10", "300", "--precision", "0.9"],
            "error: --population is not allowed with --k: give one or the other",
        ),
        (["plan", "--precision", "0.9"], "error: plan: one of --k --population is required"),
        (
            ["samplesize", "--margin", "0.05", "--confidence"],
            "error: --confidence needs a value",
        ),
        (
            ["select", "items.csv"],
            "error: select: --n-pos, --n-neg required (prplanner select --help explains them)",
        ),
        (
            ["plan", "--k", "0.03", "--precision", "0.9", "--recall", "0.8", "--v", "1"],
            "error: --v must be a whole number >= 2, got 1",
        ),
        (
            ["evaluate", "--population", "0", "0", "--tp", "1", "--fp", "1", "--fn", "1", "--tn",
             "1"],
            "error: --population N_POS N_NEG must be > 0, got 0 and 0",
        ),
        (
            ["plan", "--k", "0.03", "--precision", "0.9", "--recall", "0.8", "--method",
             "optimal", "--cost-pos", "1e308", "--cost-neg", "1"],
            "error: --cost-pos must be between 1e-06 and 1e+09 (the cost of one label), got "
            "1e+308",
        ),
        (
            ["evaluate", "--k", "0.03", "--tp", "1", "--fp", "1", "--fn", "1", "--tn", "1",
             "--prior", "1e300,1,1,1"],
            "error: --prior's first value (A11) must be 0 or between 1e-09 and 1e+18, got "
            "1e+300",
        ),
    ],
)  # fmt: skip
def test_flag_mistakes_in_plain_words(capsys, files, argv, expected):
    # Before: "plan: unrecognized arguments: --jsn", "plan: argument --population: not
    # allowed with argument --k", "samplesize: argument --confidence: expected one argument",
    # "v must be ...", "population counts must be ...", "a11 must be ...", and an internal
    # error (OverflowError) for a cost of 1e308.
    assert _refused(capsys, *argv) == expected


@pytest.mark.timeout(120)
def test_python_m_core_cli_runs_the_commands(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "core.cli", "plan", "--k", "0.03", "--precision", "90",
         "--recall", "0.8"],
        capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=100, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr == (
        "error: --precision must be between 0 and 1 (a fraction); did you mean 0.9 for 90 %?\n"
    )
