"""A lead's own rounds workbook drives every tab: open it, pick a round, evaluate it, plan
the next round from it, export the report, and check the report against the round.

The workbook is kept the way a lead keeps one: merged title rows, real dates, ``k``
formatted as a percentage, a hidden column, a ``Model`` column of versions, a second sheet
"Fraud" without a classifier column, a Notes sheet, a totals row and a typo (``l2O``) in a
count. Every test runs on it as openpyxl wrote it and as LibreOffice saved it again.
"""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from pathlib import Path

import openpyxl
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMessageBox, QPushButton

from core.cli import main
from core.confusion import point_estimates
from core.workbook.rounds import read_rounds

SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")

#: (round, date, model version, k, TP, FP, FN, TN) of the Promotions sheet; row 11 has the typo.
PROMOTIONS = [
    ("PR-01", dt.date(2026, 1, 12), "v2.1", 0.0323, 131, 27, 19, 823),
    ("PR-02", dt.date(2026, 2, 9), "v2.1", 0.0318, 140, 22, 16, 822),
    ("PR-03", dt.date(2026, 3, 9), "v2.2", 0.0331, 152, 18, 13, 817),
    ("PR-04", dt.date(2026, 4, 6), "v2.2", 0.0327, 149, 21, 17, 813),
    ("PR-05", dt.date(2026, 5, 4), "v2.3", 0.0335, 158, 15, 12, 815),
]
#: (round, week of, N pred+, N pred-, TP, FP, FN, TN) of the Fraud sheet; FR-03 is the
#: latest round of the workbook.
FRAUD = [
    ("FR-01", dt.date(2026, 3, 2), 2_950, 148_050, 171, 29, 9, 791),
    ("FR-02", dt.date(2026, 4, 13), 3_020, 147_980, 176, 24, 11, 789),
    ("FR-03", dt.date(2026, 5, 25), 3_105, 147_895, 180, 20, 8, 792),
]
#: Values of the bundled example; none may appear in a report of this workbook.
EXAMPLE_NUMBERS = {41_200, 1_251_000, 120_000, 225, 31, 14, 730}
EXAMPLE_WORDS = ("travel", "finance")  # the example's classifiers (and its ensemble's children)


def build_workbook(path: Path) -> Path:
    """The lead's workbook, written with openpyxl."""
    workbook = openpyxl.Workbook()
    promotions = workbook.active
    promotions.title = "Promotions"
    promotions["A1"] = "Mail category audit: promotions"
    promotions.merge_cells("A1:J1")
    promotions["A2"] = "One row per labeling round; k is N1/N0 of the week"
    promotions.merge_cells("A2:J2")
    promotions.append([])
    promotions.append(["Round", "Date", "Model", "Labeler", "k", "TP", "FP", "FN", "TN", "Notes"])
    for name, day, version, k, tp, fp, fn, tn in PROMOTIONS:
        promotions.append([name, day, version, "internal", k, tp, fp, fn, tn, None])
        promotions.cell(promotions.max_row, 2).number_format = "yyyy-mm-dd"
        promotions.cell(promotions.max_row, 5).number_format = "0.00%"
    promotions.append(
        ["PR-06", dt.date(2026, 6, 1), "v2.3", "internal", 0.034, 160, 13, "l2O", 815]
    )
    promotions.cell(promotions.max_row, 10).value = "FN typed with a letter l and a letter O"
    promotions.append(["Total", None, None, None, None, "=SUM(F5:F10)", "=SUM(G5:G10)"])
    promotions.column_dimensions["D"].hidden = True
    fraud = workbook.create_sheet("Fraud")
    fraud["A1"] = "Fraud classifier rounds"
    fraud.merge_cells("A1:H1")
    fraud.append(["Round", "Week of", "N pred+", "N pred-", "TP", "FP", "FN", "TN"])
    for row in FRAUD:
        fraud.append(list(row))
        fraud.cell(fraud.max_row, 2).number_format = "yyyy-mm-dd"
    notes = workbook.create_sheet("Notes")
    notes["A1"] = "Labelers were trained again in March."
    notes["A2"] = "Model v2.2 went live on 2026-03-02."
    workbook.save(path)
    return path


def resave_with_libreoffice(source: Path, folder: Path) -> Path:
    """``source`` opened and saved again by LibreOffice (as a lead's workbook often is)."""
    if SOFFICE is None:
        pytest.skip("LibreOffice (soffice) is not installed; cannot re-save the workbook")
    folder.mkdir()
    profile = folder.parent / "lo-profile"
    subprocess.run(
        [
            SOFFICE,
            f"-env:UserInstallation=file://{profile}",
            "--headless",
            "--convert-to",
            "xlsx",
            "--outdir",
            str(folder),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=240,
    )
    result = folder / source.name
    if not result.is_file():
        pytest.fail(f"LibreOffice wrote no {result.name} (it exits 0 even when it fails)")
    return result


@pytest.fixture(params=["openpyxl", "libreoffice"])
def workbook(request, tmp_path) -> Path:
    path = build_workbook(tmp_path / "my_rounds.xlsx")
    if request.param == "libreoffice":
        path = resave_with_libreoffice(path, tmp_path / "resaved")
    return path


def round_named(window, name: str):
    return next(item for item in window.session.state.rounds if item.round == name)


def row_of(window, name: str) -> int:
    return [item.round for item in window.session.state.rounds].index(name)


def report_cells(path: Path) -> dict[str, list[tuple]]:
    workbook = openpyxl.load_workbook(path, data_only=True)
    return {
        sheet.title: [row for row in sheet.iter_rows(values_only=True)]
        for sheet in workbook.worksheets
    }


def summary_values(cells) -> dict[str, object]:
    return {row[0]: row[1] for row in cells["Summary"] if row and row[0]}


def assert_no_example_values(cells) -> None:
    for title, rows in cells.items():
        for row in rows:
            for value in row:
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    assert value not in EXAMPLE_NUMBERS, (title, row)
                if isinstance(value, str) and title == "Inputs":
                    assert not any(word in value.casefold() for word in EXAMPLE_WORDS), row


def assert_compare_table_uncut(evaluate_tab) -> None:
    """Both rows and every column of "Compared with the previous round" show whole."""
    view = evaluate_tab.compare_view
    header = view.horizontalHeader()
    assert view.verticalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
    assert evaluate_tab.compare_model.rowCount() == 2
    for column in range(header.count()):
        assert header.sectionSize(column) >= view.sizeHintForColumn(column), column
    assert sum(header.sectionSize(i) for i in range(header.count())) <= view.viewport().width()
    assert view.viewport().height() >= 2 * view.rowHeight(0)
    p_decline = evaluate_tab.compare_model.index(0, header.count() - 1).data()
    assert p_decline.endswith("%")


def test_the_reader_copes_with_the_workbook(workbook):
    book = read_rounds(workbook)
    assert [item.round for item in book.rounds] == [row[0] for row in PROMOTIONS + FRAUD]
    promotions = [item for item in book.rounds if item.sheet == "Promotions"]
    assert {item.classifier for item in promotions} == {"Promotions"}  # the sheet's name
    assert [item.model_version for item in promotions] == [row[2] for row in PROMOTIONS]
    assert [item.k for item in promotions] == pytest.approx(
        [row[3] for row in PROMOTIONS], rel=1e-12
    )
    assert {item.classifier for item in book.rounds if item.sheet == "Fraud"} == {"Fraud"}
    refused = {item.row: item.reason for item in book.refused}
    assert "'l2O'" in refused[10] and "totals row" in refused[11]
    assert [item.sheet for item in book.skipped_sheets] == ["Notes"]


def test_the_users_rounds_drive_every_tab_and_the_report(qtbot, window, workbook, tmp_path):
    assert window.open_workbook(workbook)
    box = window.findChild(QMessageBox, "problems_box")
    assert box is not None and box.isVisible()
    qtbot.keyClick(box, Qt.Key.Key_Return)  # Enter closes it (not "Show Details...")
    qtbot.waitUntil(lambda: not box.isVisible())

    # Opening makes the workbook's latest round (FR-03, Fraud) the subject of every tab.
    session = window.session
    latest = round_named(window, "FR-03")
    assert session.get("evaluate.matrix") == latest.matrix
    assert session.get("evaluate.population.predicted_positive") == 3_105
    assert session.get("plan.population") == session.get("evaluate.population")
    assert session.get("plan.previous") == latest.matrix
    assert session.get("previous_round") == "FR-03"
    assert session.get("ensemble.children") == ()
    # The lead's classifier is the Ensemble's parent, not the example's "ensemble, 120,000".
    assert session.get("ensemble.parent_name") == "Fraud"
    assert session.get("ensemble.parent_size") == 3_105
    panel = window.rounds_panel
    assert panel.selected_row() == row_of(window, "FR-03")
    assert panel.use_button.isEnabled()
    window.show_tab("evaluate")
    evaluate_tab = window.tabs.currentWidget()
    qtbot.waitUntil(lambda: evaluate_tab.quick_evaluation is not None)
    assert evaluate_tab.quick_evaluation.matrix == latest.matrix
    # ...and it is compared with the same classifier's round before, not with itself.
    qtbot.waitUntil(lambda: "FR-02</b> (" in evaluate_tab.compare_label.text(), timeout=20_000)
    view = evaluate_tab.compare_view
    assert view.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
    assert_compare_table_uncut(evaluate_tab)

    # The app's report and `prplanner report` of the same workbook agree.
    app_report = tmp_path / "app report.xlsx"
    assert window.export_report(app_report)
    cli_report = tmp_path / "cli report.xlsx"
    assert main(["report", str(workbook), "-o", str(cli_report)]) == 0
    app_cells, cli_cells = report_cells(app_report), report_cells(cli_report)
    assert summary_values(app_cells)["Subject"] == "round FR-03 (Fraud)"
    assert app_cells["Summary"] == cli_cells["Summary"]
    assert_no_example_values(app_cells)

    # Pick PR-05 in the panel and press Enter: Evaluate shows it (k as the sheet had it).
    pr05 = round_named(window, "PR-05")
    panel.table.setFocus()
    panel.table.selectRow(row_of(window, "PR-05"))
    qtbot.keyClick(panel.table, Qt.Key.Key_Return)
    assert window.current_tab_key() == "evaluate"
    assert session.get("evaluate.matrix") == pr05.matrix
    assert session.get("evaluate.population.mode") == "k"
    assert session.get("evaluate.population.k") == pr05.k
    # compared with the Promotions round before, not with Fraud's FR-03
    qtbot.waitUntil(lambda: "PR-04</b> (" in evaluate_tab.compare_label.text(), timeout=20_000)
    assert_compare_table_uncut(evaluate_tab)

    # Context menu: plan the next round from it.
    menu = panel.context_menu(row_of(window, "PR-05"))
    texts = [action.text() for action in menu.actions()]
    assert texts[:2] == ["Evaluate this round", "Plan the next round from it"]
    assert texts[2] == "Compare with the round before (PR-04)"
    panel.plan_action.trigger()
    assert window.current_tab_key() == "plan"
    assert session.get("plan.previous") == pr05.matrix
    assert session.get("plan.population.k") == pr05.k  # the recall the panel shows
    assert session.get("plan.v") == pr05.matrix.total

    # Export: the report is about PR-05 and its numbers are PR-05's.
    report = tmp_path / "report.xlsx"
    assert window.export_report(report)
    cells = report_cells(report)
    values = summary_values(cells)
    assert values["Subject"] == "round PR-05 (Promotions, model v2.3)"
    assert values["Classifier"] == "Promotions" and values["Model version"] == "v2.3"
    assert values["Labeled flagged items"] == pr05.tp + pr05.fp
    assert values["Labeled unflagged items"] == pr05.fn + pr05.tn
    assert values["Imbalance ratio k"] == pytest.approx(0.0335, rel=1e-12)
    expected = point_estimates(pr05.matrix, 0.0335)
    precision = next(row for row in cells["Summary"] if row[0] == "Precision")
    recall = next(row for row in cells["Summary"] if row[0] == "Recall")
    assert precision[1] == pytest.approx(158 / (158 + 15), rel=1e-12)
    assert recall[1] == pytest.approx(expected.recall, rel=1e-12)
    # recall by hand (Eq 2 with k): pi1 = 158/173, pi0 = 12/827
    assert recall[1] == pytest.approx(1 / (1 + (12 / 827) / (0.0335 * 158 / 173)), rel=1e-12)
    inputs = {row[0]: row[1] for row in cells["Inputs"] if row and row[0]}
    for prefix in ("plan.population", "evaluate.population"):
        ratio = inputs[f"{prefix}.predicted_positive"] / inputs[f"{prefix}.predicted_negative"]
        assert ratio == pytest.approx(inputs[f"{prefix}.k"], rel=1e-6)
    assert inputs["current_round"] == "Promotions!9"
    rounds = cells["Rounds"]
    header = rounds[0]
    classifiers = {row[header.index("Classifier")] for row in rounds[1:]}
    assert classifiers == {"Promotions", "Fraud"}  # one name per classifier, never a version
    assert_no_example_values(cells)
    # The same round from the command line gives the same Summary.
    cli_pr05 = tmp_path / "cli pr05.xlsx"
    assert main(["report", str(workbook), "-o", str(cli_pr05), "--round", "PR-05"]) == 0
    assert report_cells(cli_pr05)["Summary"] == cells["Summary"]


def test_history_draws_one_series_per_classifier_with_version_labels(qtbot, window, workbook):
    assert window.open_workbook(workbook)
    window._problems_box.close()
    window.show_tab("history")
    history = window.tabs.currentWidget()
    assert {figure.classifier for figure in history.figures} == {"Promotions", "Fraud"}
    legend = [item[1].text for item in history.precision_plot.legend.items]
    assert "Promotions" in legend and "Fraud" in legend
    assert not any(text.startswith("v2") for text in legend)
    assert history.version_marks() == [
        ("Promotions", "v2.1"),
        ("Promotions", "v2.2"),
        ("Promotions", "v2.3"),
    ]


def test_rounds_panel_actions_are_undoable_and_guarded(qtbot, window, workbook):
    assert window.open_workbook(workbook)
    window._problems_box.close()
    panel = window.rounds_panel
    first = row_of(window, "PR-01")
    menu = panel.context_menu(first)
    assert not panel.compare_action.isEnabled() and menu.actions()[2].text().endswith("(none)")
    assert not panel.compare_with_round_before(first)
    assert panel.compare_with_round_before(row_of(window, "FR-02"))
    from core.workbook.session_io import compared_round, previous_round_of

    state = window.session.state
    # The Plan builds on the round shown (its counts too), compared with the one before.
    assert previous_round_of(state).round == "FR-02"
    assert state.plan.previous == previous_round_of(state).matrix
    assert compared_round(state).round == "FR-01"
    window.undo_action.trigger()
    assert window.session.get("previous_round") == "FR-03"
    window.new_session()
    assert panel.model.rowCount() == 0 and not panel.use_button.isEnabled()


def test_a_refused_cell_tint_does_not_survive_another_workbook(qtbot, window, workbook):
    tab = window.tabs.widget(window.tab_keys.index("evaluate"))
    model = tab.grid.model
    index = model.index(0, 0)
    assert not model.setData(index, "-5")
    assert model.data(index, Qt.ItemDataRole.BackgroundRole) is not None
    window.session.undo_stack.setClean()
    assert window.open_workbook(workbook)
    window._problems_box.close()
    assert model.data(index, Qt.ItemDataRole.BackgroundRole) is None


def test_the_columns_dialog_reads_the_workbook_again_and_the_choice_is_saved(
    qtbot, window, workbook, tmp_path
):
    assert window.open_workbook(workbook)
    window._problems_box.close()
    panel = window.rounds_panel
    assert panel.columns_button.isVisible()
    assert "guessed" in panel.columns_button.text()
    dialog = panel.show_columns()
    dialog.set_role("Promotions", "Model", "classifier")
    dialog.accept()
    session = window.session
    assert session.get("columns") == ("Promotions!classifier=Model",)
    promotions = [item for item in session.state.rounds if item.sheet == "Promotions"]
    assert [item.classifier for item in promotions] == [row[2] for row in PROMOTIONS]
    saved = tmp_path / "session.xlsx"
    assert window.save_to(saved)
    assert window.open_workbook(saved)
    assert window.session.get("columns") == ("Promotions!classifier=Model",)
    assert window.session.state.rounds == session.state.rounds


def test_use_as_previous_round_shows_the_recall_the_rounds_panel_shows(qtbot, window, workbook):
    assert window.open_workbook(workbook)
    window._problems_box.close()
    panel = window.rounds_panel
    row = row_of(window, "PR-02")
    panel.table.selectRow(row)
    qtbot.mouseClick(panel.use_button, Qt.MouseButton.LeftButton)
    session = window.session
    assert session.get("previous_round") == "PR-02"
    assert session.get("plan.population.k") == round_named(window, "PR-02").k
    panel_recall = panel.model.data(panel.model.index(row, 10))
    plan_tab = window.tabs.widget(window.tab_keys.index("plan"))
    plan_tab.grid.refresh_readout()
    shown = plan_tab.grid.readout.text().replace("&nbsp;", " ").replace("\u00a0", " ")
    assert f"<b>Recall</b> {panel_recall} ·" in shown


def test_a_workbook_in_the_leads_own_words_opens_once_its_columns_are_chosen(
    qtbot, window, tmp_path
):
    from tests.core.test_rounds_columns import OWN_WORDS_CHOICES, own_words_book

    path = own_words_book(tmp_path)
    before = window.session.state
    assert window.open_workbook(path) is False
    assert window.session.state == before  # nothing opened yet
    box = window.no_rounds_box
    assert "holds no rounds" in box.text() and "headers of your own" in box.text()
    assert "Sheet 'Audit', row 2: Week, Model, Hits, False alarms" in box.text()
    qtbot.mouseClick(box.findChild(QPushButton, "choose_columns_button"), Qt.MouseButton.LeftButton)
    dialog = window.columns_dialog
    assert "does not know the headers of own_words.xlsx" in dialog.findChildren(QLabel)[0].text()
    for text in OWN_WORDS_CHOICES:
        role, header = text.split("=", 1)
        dialog.set_role("Audit", header, role)
    dialog.accept()
    state = window.session.state
    assert [(item.tp, item.fp, item.fn, item.tn) for item in state.rounds] == [
        (170, 12, 30, 5300),
        (165, 15, 28, 5320),
    ]
    assert sorted(window.session.get("columns")) == sorted(
        f"Audit!{text}" for text in OWN_WORDS_CHOICES
    )
    assert window.rounds_panel.columns_button.isVisible()  # the choice can be changed later


def test_choosing_too_few_columns_says_what_is_missing_and_offers_the_choice_again(
    qtbot, window, tmp_path
):
    from tests.core.test_rounds_columns import OWN_WORDS_CHOICES, own_words_book

    path = own_words_book(tmp_path)
    assert window.open_workbook(path) is False
    qtbot.mouseClick(
        window.no_rounds_box.findChild(QPushButton, "choose_columns_button"),
        Qt.MouseButton.LeftButton,
    )
    dialog = window.columns_dialog
    for text in OWN_WORDS_CHOICES[:4]:  # the counts, not the populations
        role, header = text.split("=", 1)
        dialog.set_role("Audit", header, role)
    dialog.accept()
    assert not window.session.state.rounds or window.session.state.rounds[0].sheet != "Audit"
    box = window.no_rounds_box
    assert box.isVisible() and "neither a k column nor both population columns" in box.text()
    qtbot.mouseClick(box.findChild(QPushButton, "choose_columns_button"), Qt.MouseButton.LeftButton)
    again = window.columns_dialog
    assert again is not dialog
    assert sorted(again.choices()) == sorted(f"Audit!{t}" for t in OWN_WORDS_CHOICES[:4])


def test_a_header_typed_twice_is_told_apart_by_its_letter_in_the_dialog(qtbot, window, tmp_path):
    from tests.core.test_rounds_columns import write_book

    rows = [
        ["Round", "Flagged", "Not flagged", "TP", "FP", "TP", "TN"],
        ["R1", 41_000, 1_250_000, 40, 10, 3, 500],
    ]
    path = write_book(tmp_path / "typo.xlsx", {"Fraud": rows})
    assert window.open_workbook(path) is False
    # The box says what is wrong with the header, not only what it reads.
    assert "(no column is headed FN; TP heads columns D and F)" in window.no_rounds_box.text()
    qtbot.mouseClick(
        window.no_rounds_box.findChild(QPushButton, "choose_columns_button"),
        Qt.MouseButton.LeftButton,
    )
    dialog = window.columns_dialog
    labels = [text for sheet, text, _combo, _role in dialog.combos if sheet == "Fraud"]
    assert labels == ["Round", "Flagged", "Not flagged", "D", "FP", "F", "TN"]
    dialog.set_role("Fraud", "F", "fn")
    dialog.set_role("Fraud", "D", "tp")
    dialog.set_role("Fraud", "Flagged", "population_pos")
    dialog.set_role("Fraud", "Not flagged", "population_neg")
    dialog.accept()
    (item,) = window.session.state.rounds
    assert (item.tp, item.fp, item.fn, item.tn) == (40, 10, 3, 500)


def open_own_words_then_restart(qtbot, window, tmp_path, monkeypatch):
    """The lead's workbook in their own words opened with their column choices, then a
    new window on the same settings (a restart): ``(path, choices, later, boxes)``, the
    warning and information boxes recorded in ``boxes``."""
    from desktop.main_window import MainWindow
    from tests.core.test_rounds_columns import OWN_WORDS_CHOICES, own_words_book

    path = own_words_book(tmp_path)
    choices = tuple(f"Audit!{text}" for text in OWN_WORDS_CHOICES)
    assert window.open_workbook(path, columns=choices)
    window.session.undo_stack.setClean()
    boxes: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *args: boxes.append(args[2]))
    monkeypatch.setattr(QMessageBox, "information", lambda *args: boxes.append(args[2]))
    later = MainWindow(settings=window.settings)
    qtbot.addWidget(later)
    later.load_example()
    return path, choices, later, boxes


def test_a_workbook_opened_with_chosen_columns_reopens_with_them_at_the_next_start(
    qtbot, window, tmp_path, monkeypatch
):
    # Reopening the last file at start lost the lead's column choices: every start showed
    # "No rounds in the workbook" over the example (review 13).
    from desktop.main_window import MainWindow

    path, _choices, later, boxes = open_own_words_then_restart(qtbot, window, tmp_path, monkeypatch)
    assert later.reopen_last_document()
    assert len(later.session.state.rounds) == 2 and boxes == []
    # A file that became unreadable is said in the status bar, not in a box at start.
    path.write_bytes(b"no longer a workbook")
    again = MainWindow(settings=window.settings)
    qtbot.addWidget(again)
    again.load_example()
    assert not again.reopen_last_document()
    assert boxes == []
    message = again.statusBar().currentMessage()
    assert "own_words.xlsx" in message and "the example session is open" in message
    assert again.windowTitle().startswith("Example session")


def test_a_round_kept_by_mistake_can_be_removed_from_the_session_and_put_back(
    qtbot, window, workbook
):
    # A round kept with wrong counts stayed for good, and its changes marked the real
    # rounds in History (trial 13b).
    assert window.open_workbook(workbook)
    window._problems_box.close()
    panel = window.rounds_panel
    before = window.session.state.rounds
    kept = workbook.read_bytes()
    row = row_of(window, "PR-05")
    menu = panel.context_menu(row)
    assert "Remove from this session" in [action.text() for action in menu.actions()]
    panel.remove_action.trigger()
    rounds = window.session.state.rounds
    assert len(rounds) == len(before) - 1 and "PR-05" not in [item.round for item in rounds]
    window.session.undo_stack.undo()
    assert window.session.state.rounds == before
    assert workbook.read_bytes() == kept  # the lead's workbook is not touched


def test_removing_the_plans_previous_round_does_not_slide_to_a_namesake(qtbot, window):
    # The classifiers of one draw share the round's name: removing travel's R1, the round
    # the Plan builds on, left previous_round = "R1", which then found rules' R1 (review 14).
    import datetime as dt

    from core.workbook.rounds import Round
    from core.workbook.session_io import previous_round_of
    from desktop.rounds_panel import previous_round_changes

    def drawn(row, classifier, tp):
        return Round(
            sheet="Rounds", row=row, round="R1", date=dt.date(2026, 10, 1),
            classifier=classifier, k=0.05, tp=tp, fp=10, fn=20, tn=400,
        )  # fmt: skip

    travel, rules = drawn(2, "travel", 90), drawn(3, "rules", 60)
    window.session.set_values([("rounds", (travel, rules))])
    window.session.set_values(previous_round_changes(travel))
    assert previous_round_of(window.session.state) is travel
    panel = window.rounds_panel
    # Another classifier's namesake goes: the Plan still builds on travel's R1.
    assert panel.remove_round(1)
    assert previous_round_of(window.session.state) is travel
    window.session.undo_stack.undo()
    # Travel's R1 goes: no previous round, not rules'.
    assert panel.remove_round(0)
    state = window.session.state
    assert state.rounds == (rules,) and state.previous_round == ""
    assert previous_round_of(state) is None


def test_file_open_uses_the_column_choices_kept_for_the_workbook(
    qtbot, window, tmp_path, monkeypatch
):
    # File > Open asked for every column again each month, though the choices were kept
    # for the file (trial 15); a header added since (a Round column) is read as well.
    from PySide6.QtWidgets import QFileDialog

    path, choices, later, boxes = open_own_words_then_restart(qtbot, window, tmp_path, monkeypatch)
    workbook = openpyxl.load_workbook(path)
    sheet = workbook["Audit"]
    header_row = 2  # under a one-cell title (own_words_book)
    column = sheet.max_column + 1
    sheet.cell(header_row, column).value = "Round"
    for row in range(header_row + 1, sheet.max_row + 1):
        if sheet.cell(row, 1).value is not None:
            sheet.cell(row, column).value = f"Month {row}"
    workbook.save(path)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *args, **kw: (str(path), ""))
    assert later.open_dialog()
    assert boxes == []
    rounds = later.session.state.rounds
    assert len(rounds) == 2 and all(item.round.startswith("Month ") for item in rounds)
    assert later.session.state.columns == choices


def test_open_recent_uses_the_column_choices_the_file_was_opened_with(
    qtbot, window, tmp_path, monkeypatch
):
    # Open Recent opened the file without them: "No rounds…" and the column dialog again,
    # and a partial read then erased the choices kept for the next start (review 14).
    path, choices, later, boxes = open_own_words_then_restart(qtbot, window, tmp_path, monkeypatch)
    later.session.undo_stack.setClean()
    later._fill_recent_menu()
    (action,) = [item for item in later.recent_menu.actions() if item.text() == path.name]
    action.trigger()
    assert len(later.session.state.rounds) == 2 and boxes == []
    assert later._recent_columns()[str(path.resolve())] == list(choices)
    later.clear_recent()
    assert later.recent_files() == [] and later._recent_columns() == {}


def test_a_round_joins_a_workbook_in_the_leads_own_words_by_their_column_choices(
    qtbot, window, tmp_path, monkeypatch
):
    # Offered, then refused: "no sheet with a header row naming TP, FP, FN and TN", though
    # the lead had chosen the columns (trial 14).
    import dataclasses

    from core.workbook.rounds import read_rounds
    from tests.core.test_rounds_columns import OWN_WORDS_CHOICES, own_words_book

    path = own_words_book(tmp_path)
    choices = tuple(f"Audit!{text}" for text in OWN_WORDS_CHOICES)
    assert window.open_workbook(path, columns=choices)
    warned = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *args: warned.append(args[2]))
    last = window.session.state.rounds[-1]
    # Another date: the sheet has no round or notes column, so a round of the same date
    # and populations would be taken for the last one read again (trial 21).
    new = dataclasses.replace(last, round="October", tp=171, date=dt.date(2026, 10, 29))
    assert window.add_kept_round_to_rounds_workbook(new)
    assert warned == []
    rounds = read_rounds(path, columns=choices).rounds
    assert len(rounds) == 3 and rounds[-1].tp == 171


def test_undo_says_what_it_undid_over_the_message_about_it(qtbot, window, workbook):
    # "Removed PR-05 from this session" stayed in the status bar after Undo brought it
    # back (trial 14).
    assert window.open_workbook(workbook)
    window._problems_box.close()
    panel = window.rounds_panel
    assert panel.remove_round(row_of(window, "PR-05"))
    assert "Removed PR-05" in window.statusBar().currentMessage()
    window.undo_action.trigger()
    assert window.statusBar().currentMessage() == "Undone: Remove PR-05"
    window.redo_action.trigger()
    assert window.statusBar().currentMessage() == "Redone: Remove PR-05"


def test_column_choices_outlive_the_recent_files_menu(window, tmp_path):
    # A workbook opened monthly fell out of the eight recent files between two openings,
    # and its column choices with it (recheck 15).
    from desktop.main_window import MAX_RECENT_FILES

    mine = tmp_path / "spam_rounds.xlsx"
    window._remember_recent(mine, ("Audit!tp=Hits",))
    for number in range(MAX_RECENT_FILES + 3):
        window._remember_recent(tmp_path / f"other {number}.xlsx")
    assert str(mine.resolve()) not in window.recent_files()
    assert window._recent_columns()[str(mine.resolve())] == ["Audit!tp=Hits"]


def test_comparing_with_the_round_before_keeps_the_classifier_and_the_plan_agreeing(
    qtbot, window, tmp_path
):
    # Trial 17: two classifiers share each week's round name; "Compare with the round
    # before" on W05 (invoices) left the panel saying the Plan builds on W04 (receipts)
    # while the Plan kept other counts.
    import datetime as dt

    path = tmp_path / "rounds.xlsx"
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(["Round", "Date", "Classifier", "N pred+", "N pred-", "TP", "FP", "FN", "TN"])
    for week, day in (("W03", 13), ("W04", 20), ("W05", 27)):
        sheet.append([week, dt.datetime(2025, 1, day), "invoices", 1500, 58000, 150 + day, 30,
                      40, 3400])  # fmt: skip
        sheet.append([week, dt.datetime(2025, 1, day), "receipts", 1400, 58100, 110 + day, 60,
                      30, 3500])  # fmt: skip
    workbook.save(path)
    assert window.open_workbook(path)
    panel = window.rounds_panel
    rounds = window.session.state.rounds
    w05 = next(
        index for index, item in enumerate(rounds)
        if (item.round, item.classifier) == ("W05", "invoices")
    )  # fmt: skip
    assert panel.compare_with_round_before(w05)
    from core.workbook.session_io import compared_round, previous_round_of

    state = window.session.state
    assert (previous_round_of(state).round, previous_round_of(state).classifier) == (
        "W05", "invoices",
    )  # fmt: skip
    assert state.plan.previous == rounds[w05].matrix
    assert (compared_round(state).round, compared_round(state).classifier) == ("W04", "invoices")
    assert "W05 (invoices)" in panel.previous.text()


def test_the_no_rounds_box_points_to_its_own_button(qtbot, window, tmp_path):
    """Trial 21: the box said to choose the columns "with Columns… in the Rounds panel",
    for a workbook not open in it, beside its own Choose columns… button."""
    import openpyxl

    path = tmp_path / "own.xlsx"
    workbook = openpyxl.Workbook()
    workbook.active.append(["Datum", "TP", "FP", "FN", "TN", "Flagged total", "Unflagged total"])
    workbook.active.append(["2024-06-30", 151, 49, 30, 2970, 1150, 48850])
    workbook.save(path)
    assert window.open_workbook(path) is False
    text = window.no_rounds_box.text()
    assert "with Choose columns…" in text
    assert "Rounds panel" not in text


def test_hidden_rows_read_as_rounds_are_said_on_opening(qtbot, window, tmp_path):
    from tests.core.test_xlsx_reader import _hidden_rows_book

    path = _hidden_rows_book(tmp_path / "hidden.xlsx")
    assert window.open_workbook(path)
    box = window._problems_box
    assert box.windowTitle() == "Read with a note"
    assert box.text() == "Everything in hidden.xlsx was loaded; note:"
    assert "Sheet 'Sheet': rows 3, 5 are hidden in the workbook" in box.informativeText()
    assert "hidden rows read as rounds" in window.statusBar().currentMessage()
    assert len(window.session.state.rounds) == 5
