"""The labeling workbook: the sheet labelers fill in, and reading it back.

:func:`write_labeling_workbook` writes three sheets:

``Labels`` (first, for the labelers)
    Header row 1: ``Rank``, ``Item id``, the kept columns, ``Label`` (an Excel drop-down:
    positive / negative / skip), ``Labeler`` and ``Comment``. By default the labelers do
    not see which stratum an item came from (blind labeling): each stratum is spread
    evenly down the sheet (:func:`labeling_order`) and ``Rank`` is the row's place in that
    order. Other tools find
    the ids and labels by the header cells ``Item id`` and ``Label``.
``Design`` (protected)
    Seed, the rule, the item file's name and SHA-256, the columns used, population and
    sample sizes per stratum and per classifier, and the app's version.
``Sample`` (protected and hidden, so labelers stay blind)
    Every item's key, stratum and rank in each classifier's sample.

:func:`read_labeling_workbook` reads it back, with the project's hardened reader, and
refuses (naming sheet, row and id) an id that was added, removed, edited or repeated, a
label that is not one of the three, or a Design/Sample sheet that no longer matches the
rule. :func:`count_labels` turns one workbook, or a first round plus its top-ups, into
TP/FP/FN/TN per classifier, with the skipped and unlabeled items counted apart.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import os
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import progress
from core.confusion import ConfusionMatrix, Population, oversized_strata
from core.errors import InputError, named
from core.items import text_of_cell, threshold_text
from core.round_targets import OpenItemsSwing, Targets
from core.selection import (
    EARLIER_RULES,
    RULE,
    SPACES,
    ClassifierDesign,
    Membership,
    SampledItem,
    Selection,
    item_key,
    validate_seed,
)
from core.validation import MAX_COUNT
from core.workbook.layout import CELL_TEXT_LIMIT, ILLEGAL_XML
from core.workbook.xlsx_reader import RawRow, WorkbookError, open_sheets

if TYPE_CHECKING:
    from core.evaluation import Evaluation
    from core.round_targets import TargetCheck
    from core.workbook.append_round import AppendedRound

__all__ = [
    "DESIGN_SHEET",
    "LABELS_SHEET",
    "LABEL_CHOICES",
    "SAMPLE_SHEET",
    "ClassifierLabels",
    "LabeledItem",
    "LabelingDesign",
    "LabelingError",
    "LabelingWorkbook",
    "SamplePlace",
    "build_labeling_workbook",
    "count_labels",
    "read_labeling_workbook",
    "write_labeling_workbook",
]

LABELS_SHEET = "Labels"
DESIGN_SHEET = "Design"
SAMPLE_SHEET = "Sample"
#: The drop-down's values, in order.
LABEL_CHOICES = ("positive", "negative", "skip")
#: Spellings read as each label (after trimming and ignoring case). Besides the
#: drop-down's words, the answers an editor types to "does the item belong to the
#: category?" (yes/no, y/n, 1/0, true/false), as item lists take predicted labels:
#: pasted over the drop-down, they stopped the whole read (trial 16).
_LABEL_WORDS = {
    "positive": "positive",
    "pos": "positive",
    "negative": "negative",
    "neg": "negative",
    "skip": "skip",
    "skipped": "skip",
    **dict.fromkeys(("yes", "y", "true", "1"), "positive"),
    **dict.fromkeys(("no", "n", "false", "0"), "negative"),
}
# Not "-" or "+": in a spreadsheet a lone dash often means "not judged", and read as
# negative it would be a TN standing for many items (review 16).
ID_HEADER = "Item id"
LABEL_HEADER = "Label"
#: Names of item lists (text tables and Parquet), never a labeling workbook: refused by
#: name where one is read (``prplanner labels``, the app's Read labeled workbook).
ITEM_LIST_SUFFIXES = (".csv", ".tsv", ".tab", ".txt", ".gz", ".parquet")
#: The column a not-blind Labels sheet adds after the kept columns.
STRATUM_HEADER = "Stratum"
#: How many offending ids a refusal names.
_SHOWN = 5
#: Characters per line of the Design sheet's wrapped value column (width 70).
_DESIGN_LINE_CHARACTERS = 75
#: The header of the Labels sheet must sit within this many rows from the top.
_HEADER_ROWS = 20
#: The most sheets with the labels header a workbook may have (copies made in Excel).
MAX_LABELS_SHEETS = 8

# Design sheet fields (column A), in order.
_F_ABOUT = "What this is"
_F_RULE = "Rule"
_F_SEED = "Seed"
_F_FILE = "Item file"
_F_SHA = "Item file SHA-256"
_F_ID = "Id column"
_F_PRIMARY = "Prediction"
_F_BLIND = "Blind labeling"
_F_ITEMS = "Items in this workbook"
_F_EARLIER = "Items drawn before (top-up)"
_F_VERSION = "App version"
_F_CREATED = "Created"
_F_DRAWN_AS = "Drawn as"
_F_MARGIN_PRECISION = "Target margin for precision (±)"
_F_MARGIN_RECALL = "Target margin for recall (±)"
_F_CONFIDENCE = "Confidence of the targets"
_F_CATEGORY = "Category checked"
_F_CLASSIFIER = "Filed under classifier"
_F_ROUND_DATE = "Round date"
_F_CHECK = "Check of the design"
#: Longest category name kept (it is a name, not instructions).
MAX_CATEGORY_LENGTH = 200
_TABLE_HEADER = (
    "Classifier",
    "Column",
    "Population predicted positive",
    "Population predicted negative",
    "Sample predicted positive",
    "Sample predicted negative",
)


class LabelingError(InputError):
    """A labeling workbook that cannot be counted, with sheet, row and id named."""


def _items(count: int) -> str:
    """``1 item``, ``6 items``."""
    return f"{count:,} item" if count == 1 else f"{count:,} items"


class LabelsDisagree(LabelingError):
    """Copies that label one item ``positive`` in one and ``negative`` in another.

    Attributes
    ----------
    items : tuple of str
        Every such item in words (``'A7' (negative in anna.xlsx row 5, positive in
        ben.xlsx row 5)``), for a list the lead can work through.
    """

    def __init__(self, message: str, items: Sequence[str]):
        super().__init__(message)
        self.items = tuple(items)

    #: What settles a disagreement (the first thing said, so that a cut message keeps it).
    SETTLE = (
        "settle each one (change the label in one workbook, or leave it empty there) and "
        "read them again"
    )


# --- results -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelingDesign:
    """What the Design sheet records.

    Attributes
    ----------
    seed : int
    rule : str
    file_name, file_sha256 : str
        The item list the sample was drawn from.
    id_column : str
    designs : tuple of ClassifierDesign
        The main classifier first, then the further ones; ``n_pos``/``n_neg`` are the
        totals drawn so far (an earlier draw plus this top-up).
    blind : bool
    items : int
        Items in this workbook.
    earlier_items : int
        Items drawn before this workbook (0 unless it is a top-up).
    app_version : str
    drawn_as : str
        The file name the workbook was written as ("" in workbooks older than the line).
    targets : Targets or None
        The target margins the round was drawn for (None when none were recorded).
    targets_note : str
        Why target lines that are there cannot be used (edited by hand); "" otherwise.
    created : datetime.date or None
        The day the sample was drawn (None when the line is missing or unreadable).
    category : str
        What the labelers decide, in the lead's words (``"card fraud"``); "" when none
        was given.
    classifier : str
        The classifier the round read back is filed under (``"fraud_model_v3"``); "" when
        it is the category (workbooks of earlier versions, or the lead gave one name).
    round_date : datetime.date or None
        The date the round stands for (the month of the item list, say), when the lead
        gave one; None: the day it was drawn (:func:`round_date`).
    recorded_checks : tuple of str
        The :func:`design_check` the Design sheet and the hidden Sample sheet record
        (none in workbooks older than the check); :attr:`edited` compares them with the
        design as read.
    """

    seed: int
    rule: str
    file_name: str
    file_sha256: str
    id_column: str
    designs: tuple[ClassifierDesign, ...]
    blind: bool
    items: int
    earlier_items: int
    app_version: str
    drawn_as: str = ""
    targets: Targets | None = None
    targets_note: str = ""
    created: dt.date | None = None
    category: str = ""
    classifier: str = ""
    round_date: dt.date | None = None
    recorded_checks: tuple[str, ...] = ()

    @property
    def filed_under(self) -> str:
        """The classifier the round is filed under: :attr:`classifier`, else the category
        (one field did both, and the editors were asked whether an item "belongs to
        fraud_model_v3"; trial 14)."""
        return self.classifier or self.category

    @property
    def edited(self) -> bool:
        """What the draw fixed no longer matches a recorded check (changed by hand)."""
        if not self.recorded_checks:
            return False
        check = design_check(
            self.seed,
            self.file_sha256,
            self.id_column,
            self.items,
            self.earlier_items,
            self.designs,
        )
        return any(recorded != check for recorded in self.recorded_checks)

    @property
    def primary(self) -> ClassifierDesign:
        return self.designs[0]


@dataclass(frozen=True, slots=True, kw_only=True)
class LabeledItem:
    """One row of the Labels sheet with its place in the design.

    Attributes
    ----------
    id : str
    row : int
        Its row on the Labels sheet.
    label : {"positive", "negative", "skip"} or None
        ``None``: not labeled yet.
    stratum : {"pos", "neg"} or None
        Its stratum for the main classifier (``None``: only a further classifier's).
    rank : int or None
    memberships : tuple of Membership
        Its strata and ranks for the further classifiers.
    labeler, comment : str or None
    """

    id: str
    row: int
    label: str | None
    stratum: str | None
    rank: int | None
    memberships: tuple[Membership, ...] = ()
    labeler: str | None = None
    comment: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SamplePlace:
    """One item of the round's whole sample as the Sample sheet records it.

    Attributes
    ----------
    id, key : str
    in_workbook : bool
        ``False`` for an item drawn before this top-up (labeled in an earlier workbook).
    stratum, rank, memberships
        As on :class:`LabeledItem`.
    row : int
        Its row on the Sample sheet.
    """

    id: str
    key: str
    in_workbook: bool
    stratum: str | None
    rank: int | None
    memberships: tuple[Membership, ...]
    row: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelingWorkbook:
    """A labeling workbook read back and checked.

    Attributes
    ----------
    path : Path
    design : LabelingDesign
    items : tuple of LabeledItem
        The rows of its Labels sheet.
    sample : tuple of SamplePlace
        The round's whole sample so far (earlier draws included), in key order.
    kept_columns : tuple of str
        The item list's columns shown to the labelers (between ``Item id`` and ``Label``),
        which a top-up keeps by default.
    """

    path: Path
    design: LabelingDesign
    items: tuple[LabeledItem, ...]
    sample: tuple[SamplePlace, ...]
    kept_columns: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class UnlabeledItem:
    """An item of the sample without a label yet, and where to find it: the row of the
    Labels sheet in ``workbook``, the first file read that holds it (an editor's copy,
    named as the lead has it), and ``copies``: every file read that holds it, each with
    its row (the editors' copies of one draw all hold it, in the same row unless one was
    sorted)."""

    id: str
    workbook: str
    row: int
    copies: tuple[tuple[str, int], ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "workbook": self.workbook,
            "row": self.row,
            "copies": [{"workbook": name, "row": row} for name, row in self.copies],
        }

    @property
    def where(self) -> str:
        """Where an editor finds it, in words: ``round.xlsx row 14``; with several copies
        ``row 14 of each copy`` (or each copy's row), not one editor's copy alone: the
        item may have been in another editor's share (trial 16)."""
        if len(self.copies) < 2:
            return f"{self.workbook} row {self.row}"
        rows = {row for _name, row in self.copies}
        names = [name for name, _row in self.copies]
        if len(rows) == 1:  # named: "each copy" took in a top-up read with them (review 16)
            return f"row {self.row} of {', '.join(names[:-1])} and {names[-1]}"
        return ", ".join(f"{name} row {row}" for name, row in self.copies)


@dataclass(frozen=True, slots=True, kw_only=True)
class ClassifierLabels:
    """Labeled counts of one classifier's sample.

    Attributes
    ----------
    design : ClassifierDesign
        Population and sample sizes (the totals of every workbook counted).
    tp, fp : int
        Labeled positive / negative among its sampled predicted positives.
    fn, tn : int
        Labeled positive / negative among its sampled predicted negatives.
    skipped_pos, skipped_neg : int
        Items marked ``skip`` in each stratum.
    unlabeled_pos, unlabeled_neg : int
        Items with no label yet in each stratum.
    unlabeled_items : tuple of UnlabeledItem
        Those items, with the workbook and row that hold each, as the labelers find them
        (the first draw's workbook from top to bottom, then each top-up's).
    """

    design: ClassifierDesign
    tp: int
    fp: int
    fn: int
    tn: int
    skipped_pos: int
    skipped_neg: int
    unlabeled_pos: int
    unlabeled_neg: int
    unlabeled_items: tuple[UnlabeledItem, ...] = ()

    @property
    def labeled_pos(self) -> int:
        return self.tp + self.fp

    @property
    def labeled_neg(self) -> int:
        return self.fn + self.tn

    @property
    def skipped(self) -> int:
        return self.skipped_pos + self.skipped_neg

    @property
    def drawn(self) -> tuple[int, int]:
        """``(n_pos, n_neg)`` drawn, labeled or not."""
        return self.design.n_pos, self.design.n_neg

    @property
    def skipped_by_stratum(self) -> tuple[int, int]:
        return self.skipped_pos, self.skipped_neg

    @property
    def unlabeled(self) -> int:
        return self.unlabeled_pos + self.unlabeled_neg

    @property
    def matrix(self) -> ConfusionMatrix:
        """The labeled counts, ready for :func:`core.evaluation.evaluate`."""
        return ConfusionMatrix(tp=self.tp, fp=self.fp, fn=self.fn, tn=self.tn)

    @property
    def population(self) -> Population:
        """``N1``, ``N0`` of the design, for the stratified evaluation."""
        return Population.from_counts(self.design.population_pos, self.design.population_neg)

    def counts(
        self, skipped_as: str | None = None, *, unlabeled_too: bool = False
    ) -> tuple[int, int, int, int]:
        """``(tp, fp, fn, tn)``; with ``skipped_as`` ``"positive"``/``"negative"``, the
        counts if every skipped item (and with ``unlabeled_too`` every item without a label
        yet) had that label."""
        tp, fp, fn, tn = self.tp, self.fp, self.fn, self.tn
        open_pos, open_neg = self.open_items(unlabeled_too)
        if skipped_as == "positive":
            return tp + open_pos, fp, fn + open_neg, tn
        if skipped_as == "negative":
            return tp, fp + open_pos, fn, tn + open_neg
        return tp, fp, fn, tn

    def range_if_skipped(self, *, unlabeled_too: bool = False) -> dict[str, list | None]:
        """``{precision, recall, f1}``: each as ``[lowest, highest]`` over every way the
        skipped items (and with ``unlabeled_too`` the unlabeled ones) could be labeled;
        ``None`` while a stratum has no label or a rate is undefined
        (:func:`core.round_targets.estimate_ranges`)."""
        from core.round_targets import estimate_ranges

        return estimate_ranges(self.matrix, self.open_items(unlabeled_too), self._k)

    def open_items(self, unlabeled_too: bool = False) -> tuple[int, int]:
        """``(flagged, unflagged)`` items skipped (and with ``unlabeled_too`` unlabeled)."""
        if unlabeled_too:
            return self.skipped_pos + self.unlabeled_pos, self.skipped_neg + self.unlabeled_neg
        return self.skipped_pos, self.skipped_neg

    @property
    def _k(self) -> float:
        return self.design.population_pos / self.design.population_neg

    def swings_beyond(self, targets: Mapping[str, float]) -> list[OpenItemsSwing]:
        """The metrics whose estimate the skipped and unlabeled items could move further
        than its target margin (:func:`core.round_targets.open_items_swings`)."""
        from core.round_targets import open_items_swings

        return open_items_swings(self.matrix, self.open_items(True), self._k, targets)

    def open_items_in_words(self, *, unlabeled_too: bool = False, verb: bool = True) -> str:
        """``the 3 skipped and 1 unlabeled items are`` (the subject of a range sentence;
        without ``verb``, ``the 3 skipped and 1 unlabeled items``); "" when there are
        none."""
        parts = [f"{self.skipped:,} skipped"] if self.skipped else []
        if unlabeled_too and self.unlabeled:
            parts.append(f"{self.unlabeled:,} unlabeled")
        total = self.skipped + (self.unlabeled if unlabeled_too else 0)
        if not total:
            return ""
        noun = "item" if total == 1 else "items"
        if verb:
            noun += " is" if total == 1 else " are"
        return f"the {' and '.join(parts)} {noun}"

    def estimates_if_skipped(
        self, skipped_as: str, *, unlabeled_too: bool = False
    ) -> dict[str, object]:
        """``{tp, fp, fn, tn, precision, recall, f1}`` if every skipped item (and with
        ``unlabeled_too`` every unlabeled one) were labeled ``skipped_as``
        (``"positive"``/``"negative"``); the rates are ``None`` while a stratum has no
        label or a rate is undefined (methods §2, Eq 1-3)."""
        from core.confusion import point_estimates

        tp, fp, fn, tn = self.counts(skipped_as, unlabeled_too=unlabeled_too)
        result: dict[str, object] = {"tp": tp, "fp": fp, "fn": fn, "tn": tn}
        if tp + fp == 0 or fn + tn == 0:
            return {**result, "precision": None, "recall": None, "f1": None}
        estimates = point_estimates(ConfusionMatrix(tp=tp, fp=fp, fn=fn, tn=tn), self._k)
        return {
            **result,
            **{
                name: value if math.isfinite(value) else None
                for name, value in (
                    ("precision", estimates.precision),
                    ("recall", estimates.recall),
                    ("f1", estimates.f1),
                )
            },
        }

    def to_dict(self) -> dict[str, object]:
        """Counts and populations (the head of the ``prplanner labels --json`` document)."""
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "tn": self.tn,
            "labeled_pos": self.labeled_pos,
            "labeled_neg": self.labeled_neg,
            "skipped": self.skipped,
            "unlabeled": self.unlabeled,
            "population_pos": self.design.population_pos,
            "population_neg": self.design.population_neg,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class LabeledSample:
    """A labeled round read back and evaluated: what ``prplanner labels`` reports.

    Attributes
    ----------
    seed : int
        The selection seed of the round (also the seed of the evaluation's resampling, so
        the report is reproducible).
    labels : tuple of ClassifierLabels
        Counts per classifier, the main one first.
    evaluations : tuple of Evaluation or None
        :func:`core.evaluation.evaluate` of each classifier's counts with its population;
        ``None`` while a stratum has no label yet.
    appended : AppendedRound or None
        Where the round was added to a rounds workbook, if it was.
    also_appended : tuple of AppendedRound
        Where the sample's further classifiers' rounds were added with it (one write).
    targets : TargetCheck or None
        The main classifier's round against target margins, when margins were given or
        the workbook records them.
    targets_from : str or None
        With ``targets``: ``"flags"`` (given on the command line) or the file name of the
        workbook whose Design sheet records them.
    extend_from, item_list, round_name : str or None
        With ``targets``: the workbook a top-up extends (the largest draw), the item
        list's file name and the round's name, for the command that draws it.
    further_targets : tuple of (TargetCheck or None)
        With ``targets``: each further classifier's round against the same margins (None
        while one of its strata has no label); a top-up raises every classifier's sample.
    """

    seed: int
    labels: tuple[ClassifierLabels, ...]
    evaluations: tuple[Evaluation | None, ...]
    appended: AppendedRound | None = None
    also_appended: tuple[AppendedRound, ...] = ()
    targets: TargetCheck | None = None
    targets_from: str | None = None
    extend_from: str | None = None
    item_list: str | None = None
    round_name: str | None = None
    further_targets: tuple[TargetCheck | None, ...] = ()
    #: What the editors were asked (the Design sheet's category; "" when none was given).
    category: str = ""

    @property
    def primary(self) -> ClassifierLabels:
        return self.labels[0]

    def to_dict(self) -> dict[str, object]:
        """The ``prplanner labels --json`` document (its JSON contract)."""

        def judged(labels: ClassifierLabels, evaluation: Evaluation | None) -> dict[str, object]:
            return {
                "evaluation": None if evaluation is None else evaluation.to_dict(),
                "if_skipped_positive": labels.estimates_if_skipped("positive"),
                "if_skipped_negative": labels.estimates_if_skipped("negative"),
                "if_skipped_or_unlabeled_positive": labels.estimates_if_skipped(
                    "positive", unlabeled_too=True
                ),
                "if_skipped_or_unlabeled_negative": labels.estimates_if_skipped(
                    "negative", unlabeled_too=True
                ),
                "range_if_skipped": labels.range_if_skipped(),
                "range_if_skipped_or_unlabeled": labels.range_if_skipped(unlabeled_too=True),
                "unlabeled_items": [item.to_dict() for item in labels.unlabeled_items],
            }

        result: dict[str, object] = {
            **self.primary.to_dict(),
            "seed": self.seed,
            **judged(self.primary, self.evaluations[0]),
        }
        if len(self.labels) > 1:
            checks = self.further_targets or (None,) * (len(self.labels) - 1)
            result["classifiers"] = [
                {
                    "name": labels.design.name,
                    **labels.to_dict(),
                    **judged(labels, evaluation),
                    "targets": None if check is None else check.to_dict(),
                }
                for labels, evaluation, check in zip(
                    self.labels[1:], self.evaluations[1:], checks, strict=True
                )
            ]
        if self.targets is not None:
            swings = self.primary.swings_beyond(self.targets.target_margins)
            result["targets"] = {
                **self.targets.to_dict(),
                "from": self.targets_from,
                "open_items_beyond_target": [swing.to_dict() for swing in swings],
            }
        if self.appended is not None or self.also_appended:
            result["appended"] = None if self.appended is None else self.appended.to_dict()
            result["also_appended"] = [appended.to_dict() for appended in self.also_appended]
        return result


def evaluate_labels(
    workbooks: Sequence[LabelingWorkbook],
    *,
    confidence: float = 0.95,
    replicates: int = 10_000,
    fpc: bool = False,
    resampling_seed: int | None = None,
) -> LabeledSample:
    """Count one round's labeling workbooks (:func:`count_labels`) and evaluate each
    classifier's counts, stratified by its population (methods §3-§6); ``fpc`` applies
    the finite population correction (the sample is drawn without replacement).

    The bootstrap and Monte-Carlo draws use ``resampling_seed``, by default the app's
    (:data:`core.session.EVALUATE_SEED`), not the draw's seed: the interval to quote for
    F1 is then the same number here, on the Evaluate tab and in the report."""
    from core.evaluation import evaluate
    from core.session import EVALUATE_SEED

    counted = count_labels(workbooks)
    seed = workbooks[0].design.seed
    resampling_seed = EVALUATE_SEED if resampling_seed is None else resampling_seed
    evaluations = tuple(
        None
        if labels.labeled_pos == 0 or labels.labeled_neg == 0
        else evaluate(
            labels.matrix,
            population=labels.population,
            confidence=confidence,
            replicates=replicates,
            seed=resampling_seed,
            fpc=fpc,
        )
        for labels in counted
    )
    category = largest_draw(workbooks).design.category
    return LabeledSample(seed=seed, labels=counted, evaluations=evaluations, category=category)


# --- writing -------------------------------------------------------------------------------


def app_version() -> str:
    """This program's version as installed (``development checkout`` when not installed)."""
    try:
        from importlib.metadata import version

        return f"prplanner {version('prplanner')}"
    except Exception:  # running from a checkout that was never installed
        return "prplanner (development checkout)"


def _column_letter(index: int) -> str:
    from openpyxl.utils import get_column_letter

    return get_column_letter(index + 1)


#: A kept value written as a number: plain digits, a point and decimals, short enough for
#: a cell in General format to show it as written (longer ones turn into 1.23E+14).
_PLAIN_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?")
_PLAIN_NUMBER_LENGTH = 11


def _storable(value: object) -> object:
    """A kept column's value as the labelers' sheet holds it: a plain number that reads
    as written (``28.74``, ``120``) as a number, which sorts and sums (it was text, and a
    reviewer sorting by amount got 100 before 28.74); anything else as text, with the
    control characters a workbook cannot hold shown as U+FFFD (``02139``, ``28.70`` and
    ``1e5`` stay as written)."""
    if not isinstance(value, str):
        return value
    if len(value) <= _PLAIN_NUMBER_LENGTH and _PLAIN_NUMBER.fullmatch(value):
        number: float = float(value) if "." in value else int(value)
        if repr(number) == value:  # shown as written ("-0" and "28.70" are not)
            return number
    return ILLEGAL_XML.sub("\ufffd", value)


def _refuse_unstorable_text(selection: Selection) -> None:
    """Ids and column names must be stored exactly (they are checked when the labels come
    back), so a control character in one is refused rather than changed."""
    names = [*selection.kept_columns, *(design.name for design in selection.designs())]
    bad_names = [name for name in names if ILLEGAL_XML.search(name)]
    bad_ids = [item.id for item in selection.items if ILLEGAL_XML.search(item.id)]
    if bad_ids or bad_names:
        shown = ", ".join(repr(text) for text in (bad_ids or bad_names)[:_SHOWN])
        what = "item id(s) of the sample" if bad_ids else "column name(s)"
        count = len(bad_ids or bad_names)
        raise InputError(
            f"{count:,} {what} in {selection.file_name} hold characters that a workbook "
            "cannot store (control characters, U+FFFE or U+FFFF, or bytes that are not UTF-8 "
            f"text: {shown}); remove them from the item list and draw again"
        )
    # A longer id would be cut in the cell, and the labels could never be read back: the
    # workbook's ids would no longer be the sample's (fuzz 14).
    long_ids = [item.id for item in selection.items if len(item.id) > CELL_TEXT_LIMIT]
    if long_ids:
        shown = ", ".join(f"{text[:20]!r}… ({len(text):,} characters)" for text in long_ids[:3])
        raise InputError(
            f"{len(long_ids):,} item id(s) of the sample in {selection.file_name} are longer "
            f"than the {CELL_TEXT_LIMIT:,} characters a workbook cell holds ({shown}); give "
            "the items shorter ids and draw again"
        )


#: The Design sheet's "Blind labeling" field, by :func:`labelers_see`.
BLIND_WORDS = {
    "blind": "yes",
    "shown": "no",
    "all pos": "no: every item in this workbook was flagged (by the classifier or one of "
    "the classifiers)",
    "all neg": "no: no item in this workbook was flagged by any classifier",
}

#: The labelers' instructions: a sheet after the Labels sheet, and in short as a comment
#: on the Label header.
INSTRUCTIONS_SHEET = "How to label"
LABELING_HELP_SHORT = (
    "positive: the item belongs to {category}; negative: it does not; skip: you cannot "
    "tell. Leave Item id as it is."
)
_INSTRUCTIONS = (
    ("How to label", None),  # the title, across both columns
    ("1.", "On the Labels sheet, give every row a Label from the drop-down list:"),
    ("", "positive: the item belongs to {category};"),
    ("", "negative: it does not;"),
    ("", "skip: you cannot tell (the item is unreadable, or the rules do not cover it)."),
    ("2.", "Write your name in Labeler, and anything worth knowing in Comment."),
    (
        "3.",
        "Do not add, remove or change rows or item ids: the labels are checked against "
        "the sample drawn, and a changed id is refused.",
    ),
    (
        "4.",
        "Save the file as an Excel workbook (.xlsx) and send it back. If several people "
        "share the work, each labels a copy: the copies are read together.",
    ),
)
#: The instructions' last line, by what the labelers can tell of the classifier's flags.
_ORDER_NOTE = {
    "blind": "The rows are in a random order, and you are not told which items the "
    "classifier flagged, so that the labels do not lean either way.",
    "shown": "The Stratum column shows which items the classifier flagged. Label each item "
    "for what it is, whatever the classifier said.",
    "all pos": "Every item here was flagged by the classifier (or one of the classifiers). "
    "Label each item for what it is, whatever the classifier said.",
    "all neg": "None of the items here was flagged by any classifier. Label each item for "
    "what it is, whatever the classifier said.",
}


def labelers_see(selection: Selection, blind: bool) -> str:
    """What the labelers can tell of the classifier's flags: ``"blind"``, ``"shown"`` (a
    Stratum column), or ``"all pos"``/``"all neg"`` when every item comes from one
    stratum (a top-up of the flagged items only, say), which no order can hide."""
    if not blind:
        return "shown"
    # Flagged by any of the draw's classifiers: a top-up of one classifier's flagged items
    # plus another's is still all flagged items (trial 14: "blind" on 72 flagged items).
    flagged = [
        item.stratum == "pos" or any(place.stratum == "pos" for place in item.memberships)
        for item in selection.items
    ]
    if all(flagged):
        return "all pos"
    if not any(flagged):
        return "all neg"
    return "blind"


def labeling_order(selection: Selection, blind: bool) -> list[SampledItem]:
    """The Labels sheet's rows: with ``blind``, every stratum spread evenly down the sheet.

    Key order alone is not blind: each stratum's sample is its first ``n`` keys, so a
    stratum sampled at 8 % of its items has keys up to about 0.08 of the key range and one
    sampled at 2 % up to 0.02; sorted together, the last rows were nearly all flagged items
    (trial 14: 287 of the last 300). Instead each classifier's stratum, in key order, is
    spread over the sheet: its ``j``-th item of ``m`` in this workbook sits at
    ``(j + u) / m``, with ``u`` in [0, 1) from the key's last 32 bits; an item in several
    strata takes its earliest place. Any run of rows, and any share of the sheet, holds
    each stratum in proportion, and a prefix of the sheet holds a prefix of every stratum
    in key order. Without ``blind`` (a Stratum column shows it) the rows stay in key order.
    """
    items = list(selection.items)
    if not blind:
        return items
    groups: dict[tuple[str, str], list[tuple[int, str]]] = {}
    primary = selection.primary.name
    for item in items:
        places = [] if item.stratum is None else [(primary, item.stratum, item.rank or 0)]
        places += [(place.classifier, place.stratum, place.rank) for place in item.memberships]
        for classifier, stratum, rank in places:
            groups.setdefault((classifier, stratum), []).append((rank, item.id))
    position: dict[str, float] = {}
    jitter = {item.id: int(item.key[-8:], 16) / 2**32 for item in items}
    for members in groups.values():
        members.sort()
        for index, (_rank, item_id) in enumerate(members):
            place = (index + jitter[item_id]) / len(members)
            position[item_id] = min(place, position.get(item_id, place))
    return sorted(items, key=lambda item: (position[item.id], item.key))


def category_words(category: str) -> str:
    """``"travel booking mails"`` (quoted) or, with none given, ``the category being
    checked``: what the instructions say an item must belong to."""
    return f"“{category}”" if category else "the category being checked"


def clean_category(category: object) -> str:
    """The category as recorded: one line, trimmed, at most :data:`MAX_CATEGORY_LENGTH`
    characters (the rest is cut), without characters a workbook cannot store."""
    text = " ".join(str(category or "").split())
    return ILLEGAL_XML.sub("", text)[:MAX_CATEGORY_LENGTH].strip()


def _add_instructions(sheet, bold, category: str = "", seen: str = "blind") -> None:
    from openpyxl.styles import Alignment

    for number, text in (*_INSTRUCTIONS, ("", _ORDER_NOTE[seen])):
        if text is not None:
            text = text.format(category=category_words(category))
        sheet.append([number, text])
    sheet.merge_cells("A1:B1")
    sheet["A1"].value = _INSTRUCTIONS[0][0]
    sheet["A1"].font = bold
    sheet.column_dimensions["A"].width = 4
    sheet.column_dimensions["B"].width = 90
    for number_cell, cell in sheet.iter_rows(min_row=2, max_col=2):
        number_cell.alignment = Alignment(vertical="top")
        cell.alignment = Alignment(wrap_text=True, vertical="top")
        lines = -(-len(str(cell.value or "")) // 85)  # the programs keep a written height
        if lines > 1:
            sheet.row_dimensions[cell.row].height = 15 * lines
    sheet.sheet_properties.pageSetUpPr.fitToPage = True
    sheet.page_setup.fitToWidth = 1
    sheet.page_setup.fitToHeight = 0


def _style_like(sheet, template, last_row: int) -> None:
    """Give the cells below ``template`` down to ``last_row`` its style. A copy of its
    style array, as openpyxl copies a sheet: setting a style per cell looks it up in the
    workbook's style lists, half the time of writing a workbook of 100,000 items."""
    from copy import copy

    for (cell,) in sheet.iter_rows(
        min_row=template.row + 1, max_row=last_row, min_col=template.column, max_col=template.column
    ):
        cell._style = copy(template._style)


def _format_kept_columns(sheet, first: int, last: int, last_row: int) -> None:
    """Kept columns as wide as their text needs (up to a limit) and wrapped inside their
    cells beyond it, with the rows made tall enough, so that a long subject never runs
    over the Label cell; web addresses become links the labelers can click."""
    from math import ceil

    from openpyxl.styles import Alignment, Font

    wrapped = Alignment(wrap_text=True, vertical="top")
    link_font = Font(color="0563C1", underline="single")  # Excel's Hyperlink style
    heights: dict[int, int] = {}
    for column in range(first, last + 1):
        cells = [row[0] for row in sheet.iter_rows(2, last_row, column, column)]
        texts = [str(cell.value) for cell in cells if cell.value is not None]
        links = sum(text.startswith(("http://", "https://")) for text in texts)
        longest = max((len(text) for text in texts), default=10)
        width = min(max(longest + 2, 12), 60 if links else 50)
        sheet.column_dimensions[_column_letter(column - 1)].width = width
        if cells:
            cells[0].alignment = wrapped
            _style_like(sheet, cells[0], last_row)
        for cell in cells:
            text = "" if cell.value is None else str(cell.value)
            if text.startswith(("http://", "https://")):
                cell.hyperlink = text
                cell.font = link_font
            lines = ceil(len(text) / max(width - 2, 1)) if text else 1
            heights[cell.row] = max(heights.get(cell.row, 1), lines)
    for row, lines in heights.items():
        if lines > 1:  # Excel and LibreOffice keep a written height; one line needs none
            sheet.row_dimensions[row].height = 15 * min(lines, 8)


def _refuse_a_kept_prediction(selection: Selection) -> None:
    """A kept column that is a classifier's prediction or score shows the labelers what
    blind labeling hides: the workbook said "Blind labeling: yes" while each row showed
    the prediction (fuzz 16)."""
    columns = selection.columns
    predictions = {columns.predicted, columns.score, *columns.classifiers} - {None}
    shown = [name for name in columns.keep if name in predictions]
    if shown:
        raise InputError(
            f"{named('keep')} {', '.join(map(repr, shown))} would show the labelers each "
            "item's prediction, and the labeling is blind (they are not told which items "
            f"were flagged); leave it out of {named('keep')}, or show the strata "
            f"({named('show_strata')})"
        )


def build_labeling_workbook(
    selection: Selection,
    *,
    blind: bool = True,
    drawn_as: str = "",
    targets: Targets | None = None,
    category: str = "",
    classifier: str = "",
    round_date: dt.date | None = None,
):
    """The labeling workbook of ``selection`` as an openpyxl ``Workbook`` (not saved).

    Parameters
    ----------
    selection : Selection
        From :func:`core.selection.select_sample` or :func:`core.selection.extend_sample`.
    blind : bool
        ``False`` adds a ``Stratum`` column (``predicted positive``/``negative``) for the
        labelers; the default hides it.
    drawn_as : str
        The file name the workbook is written as (names the round).
    targets : Targets, optional
        The target margins the round is drawn for, recorded on the Design sheet so that
        reading the labels back judges the round by them.
    category : str, optional
        What the labelers decide (:func:`clean_category`), named in their instructions and
        recorded on the Design sheet.
    classifier : str, optional
        The classifier the round is filed under when it differs from ``category``
        (recorded on the Design sheet; :attr:`LabelingDesign.filed_under`).
    round_date : datetime.date, optional
        The date the round stands for in the lead's rounds (the month of the item list,
        say); recorded on the Design sheet, else the round is dated the day it was drawn.
    """
    from openpyxl import Workbook
    from openpyxl.comments import Comment
    from openpyxl.styles import Alignment, Font, PatternFill
    from openpyxl.worksheet.datavalidation import DataValidation

    if not selection.items:
        raise InputError(
            "the sample has no new item to label (the new totals equal the earlier draw)"
        )
    _refuse_unstorable_text(selection)
    if blind:
        _refuse_a_kept_prediction(selection)
    category = clean_category(category)
    filed_under = clean_category(classifier)
    workbook = Workbook()
    sheet = workbook.active
    sheet.title = LABELS_SHEET
    bold = Font(bold=True)
    header_fill = PatternFill("solid", fgColor="DDEBF7")
    label_fill = PatternFill("solid", fgColor="FFF2CC")
    headers = ["Rank", ID_HEADER, *selection.kept_columns]
    if not blind:
        headers.append(STRATUM_HEADER)
    headers += [LABEL_HEADER, "Labeler", "Comment"]
    sheet.append(headers)
    for cell in sheet[1]:
        cell.font = bold
        cell.fill = header_fill
    label_column = headers.index(LABEL_HEADER)
    strata_words = {"pos": "predicted positive", "neg": "predicted negative", None: ""}
    for position, item in enumerate(labeling_order(selection, blind), start=1):
        row: list[object] = [position, item.id, *map(_storable, item.kept)]
        if not blind:
            row.append(strata_words[item.stratum])
        row += [None, None, None]
        sheet.append(row)
    last_row = len(selection.items) + 1
    id_letter = _column_letter(1)
    label_letter = _column_letter(label_column)
    # Rows may be taller than a line: rank and id at the top, the id set off from the
    # rank so that "2" and "A33796" never read as one. An id such as 00123 stays text when
    # a labeler edits it.
    rank_cell, id_cell = sheet.cell(2, 1), sheet.cell(2, 2)
    rank_cell.alignment = Alignment(vertical="top", horizontal="center")
    id_cell.alignment = Alignment(vertical="top", horizontal="left", indent=1)
    id_cell.number_format = "@"
    label_cell = sheet.cell(2, label_column + 1)
    label_cell.fill = label_fill
    _style_like(sheet, rank_cell, last_row)
    _style_like(sheet, id_cell, last_row)
    _style_like(sheet, label_cell, last_row)
    _format_kept_columns(sheet, 3, 2 + len(selection.kept_columns), last_row)
    sheet.cell(1, label_column + 1).comment = Comment(
        LABELING_HELP_SHORT.format(category=category_words(category)), "PR Planner"
    )
    validation = DataValidation(
        type="list",
        formula1='"' + ",".join(LABEL_CHOICES) + '"',
        allow_blank=True,
        showDropDown=False,  # openpyxl's name is inverted: False shows the arrow
        showErrorMessage=True,
        errorTitle="Label",
        error="Choose positive, negative or skip from the list.",
        showInputMessage=True,
        promptTitle="Label",
        prompt="positive, negative or skip",
    )
    validation.add(f"{label_letter}2:{label_letter}{last_row}")
    sheet.add_data_validation(validation)
    sheet.freeze_panes = "C2"
    sheet.auto_filter.ref = f"A1:{_column_letter(len(headers) - 1)}{last_row}"
    widths = {0: 7, 1: 24, label_column: 12, label_column + 1: 14, label_column + 2: 40}
    for index, width in widths.items():
        sheet.column_dimensions[_column_letter(index)].width = width
    if not blind:
        sheet.column_dimensions[_column_letter(label_column - 1)].width = 20
    del id_letter
    # Printed for labelers on paper: landscape, every column on one page width, the header
    # repeated on each page.
    sheet.page_setup.orientation = "landscape"
    sheet.sheet_properties.pageSetUpPr.fitToPage = True
    sheet.page_setup.fitToWidth = 1
    sheet.page_setup.fitToHeight = 0
    sheet.print_title_rows = "1:1"

    seen = labelers_see(selection, blind)
    _add_instructions(workbook.create_sheet(INSTRUCTIONS_SHEET), bold, category, seen)
    design = workbook.create_sheet(DESIGN_SHEET)
    columns = selection.columns
    prediction = (
        f"{columns.score} >= {threshold_text(columns.threshold)}"
        if columns.score is not None
        else str(columns.predicted)
    )
    check = design_check(
        selection.seed,
        selection.file_sha256,
        str(columns.id),
        len(selection.items),
        len(selection.previous_ids),
        selection.designs(),
    )
    fields: list[tuple[str, object]] = [
        (
            _F_ABOUT,
            "The design of a PR Planner labeling round; PR Planner checks the labels "
            "against it, so leave this sheet and the hidden Sample sheet as they are.",
        ),
        (_F_RULE, RULE),
        (_F_SEED, str(selection.seed)),
        (_F_FILE, selection.file_name),
        (_F_SHA, selection.file_sha256),
        (_F_ID, str(columns.id)),
        (_F_PRIMARY, prediction),
        (_F_BLIND, BLIND_WORDS[seen]),
        (_F_ITEMS, len(selection.items)),
        (_F_EARLIER, len(selection.previous_ids)),
        (_F_VERSION, app_version()),
        (_F_CREATED, dt.datetime.now().replace(microsecond=0).isoformat(sep=" ")),
        (_F_CHECK, check),
    ]
    if drawn_as:  # names the round, whatever the labelers' copies are called
        fields.append((_F_DRAWN_AS, drawn_as))
    if category:
        fields.append((_F_CATEGORY, category))
    if filed_under and filed_under != category:
        fields.append((_F_CLASSIFIER, filed_under))
    if round_date is not None:  # text as "Created" is: no spreadsheet date to misread
        fields.append((_F_ROUND_DATE, round_date.isoformat()))
    if targets is not None:
        fields += [
            (_F_MARGIN_PRECISION, targets.margin_precision),
            (_F_MARGIN_RECALL, targets.margin_recall),
            (_F_CONFIDENCE, targets.confidence),
        ]
    percent_fields = {_F_MARGIN_PRECISION, _F_MARGIN_RECALL, _F_CONFIDENCE}
    for name, value in fields:
        design.append([name, value])
        design.cell(design.max_row, 1).font = bold
        if name in percent_fields:
            # A number shown as a percentage (5.0%): the lead reads it, PR Planner reads
            # the number, and a spreadsheet keeps it a number when re-saving.
            design.cell(design.max_row, 2).number_format = "0.0##%"
    design.append([])
    design.append(list(_TABLE_HEADER))
    for cell in design[design.max_row]:
        cell.font = bold
        cell.fill = header_fill
        cell.alignment = Alignment(wrap_text=True, vertical="top")
    design.row_dimensions[design.max_row].height = 45
    for drawn_design in selection.designs():
        design.append(
            [
                drawn_design.name,
                drawn_design.column,
                drawn_design.population_pos,
                drawn_design.population_neg,
                drawn_design.n_pos,
                drawn_design.n_neg,
            ]
        )
    number_cells: Any = design.iter_rows(min_row=len(fields) + 3, min_col=3, max_col=6)
    for cells in number_cells:
        for cell in cells:
            cell.number_format = "#,##0"
    design.column_dimensions["A"].width = 30
    design.column_dimensions["B"].width = 70
    for letter in "CDEF":
        design.column_dimensions[letter].width = 16
    field_rows: Any = design.iter_rows(min_row=1, max_row=len(fields), max_col=2)
    for name_cell, value_cell in field_rows:
        # Left as text is, numbers and percentages too: one column of values to read.
        value_cell.alignment = Alignment(wrap_text=True, vertical="top", horizontal="left")
        name_cell.alignment = Alignment(vertical="top")
        lines = -(-len(str(value_cell.value or "")) // _DESIGN_LINE_CHARACTERS)
        if lines > 1:
            # Not every program fits a wrapped row's height on opening: set it.
            design.row_dimensions[value_cell.row].height = 15 * lines
    design.page_setup.orientation = "landscape"
    design.sheet_properties.pageSetUpPr.fitToPage = True
    design.page_setup.fitToWidth = 1
    design.page_setup.fitToHeight = 0
    design.protection.sheet = True

    sample = workbook.create_sheet(SAMPLE_SHEET)
    further = selection.classifiers
    sample_headers = ["Item id", "Key (SHA-256)", "In this workbook", "Stratum", "Rank"]
    for drawn_design in further:
        sample_headers += [f"{drawn_design.name}: stratum", f"{drawn_design.name}: rank"]
    # A copy of the Design sheet's check, where clearing that line does not reach (fuzz 21:
    # a population typed over with the check cleared was read without a word).
    sample.append([*sample_headers, f"{_F_CHECK}: {check}"])
    here = {item.id for item in selection.items}
    everything = sorted((*selection.earlier, *selection.items), key=lambda item: item.key)
    for item in everything:
        places = {membership.classifier: membership for membership in item.memberships}
        row = [item.id, item.key, "yes" if item.id in here else "no", item.stratum, item.rank]
        for drawn_design in further:
            membership = places.get(drawn_design.name)
            row += [None, None] if membership is None else [membership.stratum, membership.rank]
        sample.append(row)
    sample.column_dimensions["A"].width = 24
    sample.column_dimensions["B"].width = 68
    sample.protection.sheet = True
    # Very hidden: Excel's Unhide lists it not, so a labeler does not stumble on the strata.
    # LibreOffice saves it as merely hidden, and takes no workbook structure protection
    # from an .xlsx (tried: lockStructure, with and without a password, is dropped on
    # import), so there its Show Sheet lists it; the guide says so (trial 16).
    sample.sheet_state = "veryHidden"
    workbook.active = 0
    from core.workbook.layout import keep_text_as_text

    keep_text_as_text(workbook)
    return workbook


@dataclass(frozen=True, slots=True, kw_only=True)
class DrawnSample:
    """A sample drawn (:class:`core.selection.Selection`) and written as the labeling
    workbook ``path``."""

    selection: Selection
    path: Path
    targets: Targets | None = None

    def to_dict(self) -> dict[str, object]:
        """The ``prplanner select --json`` document: the selection, then ``output``,
        ``seed_drawn`` and ``targets`` (the margins recorded, or null)."""
        return {
            **self.selection.to_dict(),
            "output": str(self.path),
            "seed_drawn": self.selection.seed_drawn,
            "targets": None if self.targets is None else self.targets.to_dict(),
        }


def write_labeling_workbook(
    path: str | os.PathLike[str],
    selection: Selection,
    *,
    sources: Sequence[str | os.PathLike[str]] = (),
    blind: bool = True,
    targets: Targets | None = None,
    category: str = "",
    classifier: str = "",
    round_date: dt.date | None = None,
) -> Path:
    """Write the labeling workbook of ``selection`` to ``path``, atomically.

    Parameters
    ----------
    path : str or path-like
        The new workbook. An existing file is replaced only if PR Planner wrote it.
    sources : sequence of path-like
        The inputs (item list, an earlier labeling workbook); ``path`` may be none of
        them.
    blind, targets, category, classifier, round_date
        See :func:`build_labeling_workbook`.

    Raises
    ------
    SaveError
        The destination is an input, someone else's file, read-only, or the save failed.
    """
    from core.workbook.safe_io import atomic_write, mark_as_ours

    workbook = build_labeling_workbook(
        selection,
        blind=blind,
        drawn_as=Path(path).name,
        targets=targets,
        category=category,
        classifier=classifier,
        round_date=round_date,
    )
    mark_as_ours(workbook)
    destination = Path(path)
    atomic_write(destination, workbook.save, sources=tuple(sources), purpose="labels")
    return destination


# --- what a file given as a labeled workbook is instead -----------------------------------


def misread_as_labels(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is when it is plainly not a labeling workbook, for a message that says
    what to do: ``"labels_csv"`` (the Labels sheet saved as a text table: its ids can no
    longer be checked against the draw), ``"item_list"`` (a text table or Parquet file),
    ``"session"`` (a session or report PR Planner wrote); None otherwise (the reader then
    says what is wrong)."""
    from core.workbook.safe_io import is_session, sheet_names

    path = Path(path)
    if not path.is_file():
        return None
    if path.suffix.casefold() in ITEM_LIST_SUFFIXES:
        try:
            with path.open("rb") as stream:
                first_line = stream.readline(64 * 1024).decode("utf-8", "replace")
        except OSError:
            return "item_list"
        cells = {cell.strip().strip('"').casefold() for cell in re.split(r"[,;\t]", first_line)}
        if {ID_HEADER.casefold(), LABEL_HEADER.casefold()} <= cells:
            return "labels_csv"
        return "item_list"
    if is_session(sheet_names(path)):
        return "session"
    return None


def misread_words(path: str | os.PathLike[str], kind: str) -> str:
    """The message for :func:`misread_as_labels`'s ``kind`` (without program-specific
    advice on what to use instead)."""
    name = Path(path).name
    if kind == "labels_csv":
        return (
            f"{name} is the Labels sheet saved as a text table; the labels must come back in "
            "the .xlsx workbook PR Planner wrote (its Design and hidden Sample sheets check "
            "every id against the draw). Ask for the labeled workbook itself, saved as .xlsx"
        )
    if kind == "session":
        return (
            f"{name} is a PR Planner session or report, not a labeling workbook; the labels "
            "come back in the workbook drawn for the labelers"
        )
    return f"{name} is an item list, not a labeling workbook"


# --- reading -------------------------------------------------------------------------------


def _text(value: object) -> str | None:
    """A cell as stripped text, ``None`` when empty (text cells take the fast path: a
    labeled workbook has tens of thousands of them)."""
    if type(value) is str:
        return value.strip() or None
    text = text_of_cell(value)
    if text is None:
        return None
    return text.strip() or None


def _item_id(value: object) -> str | None:
    """An id cell as the rule reads ids: only the rule's SPACES removed around it. A tab or
    line break around an id is part of it, as in the item list's key (``str.strip``
    removed them here, and the key no longer matched)."""
    text = value if type(value) is str else text_of_cell(value)
    if text is None:
        return None
    return text.strip(SPACES) or None


def _rank(value: object, where: str) -> int:
    if type(value) is int and value > 0:
        return value
    return _whole(value, "rank", where)


def _cell(column: int, row: int) -> str:
    return f"{_column_letter(column)}{row}"


def _value(values: Sequence[object], index: int | None) -> object:
    if index is None or index >= len(values):
        return None
    return values[index]


def _whole(value: object, what: str, where: str) -> int:
    text = _text(value)
    try:
        number = float(text) if text is not None else float("nan")
    except ValueError:
        number = float("nan")
    if not number.is_integer() or number < 0:
        given = "an empty cell" if text is None else repr(text)
        raise LabelingError(f"{where}: {what} must be a whole number >= 0, got {given}")
    if number > MAX_COUNT:
        shown = text if len(text or "") <= 20 else f"a number of {len(text or ''):,} characters"
        raise LabelingError(f"{where}: {what} must be at most 10^15, got {shown}")
    return int(number)


def _read_design(path: Path, rows: Iterator[RawRow]) -> tuple[dict[str, object], list[list]]:
    fields: dict[str, object] = {}
    table: list[list] = []
    in_table = False
    for row_number, values, _ in rows:
        name = _text(_value(values, 0))
        if name is None:
            continue
        if in_table:
            table.append([row_number, *values])
        elif name == _TABLE_HEADER[0] and _text(_value(values, 2)) == _TABLE_HEADER[2]:
            in_table = True
        else:
            fields[name] = _value(values, 1)
    return fields, table


def design_check(
    seed: int,
    file_sha256: str,
    id_column: str,
    items: int,
    earlier_items: int,
    designs: Sequence[ClassifierDesign],
) -> str:
    """The Design sheet's check: the first 16 hex digits of the SHA-256 of what the draw
    fixed (seed, item file, id column, item counts, each classifier's populations and
    sample sizes). A population edited in the unprotected sheet changed every interval
    without a word (review 19); reading back recomputes it and refuses a mismatch."""
    facts = [str(seed), file_sha256, id_column, str(items), str(earlier_items)]
    for design in designs:
        facts += [design.name, design.column]
        facts += map(str, (design.population_pos, design.population_neg))
        facts += map(str, (design.n_pos, design.n_neg))
    # As the sheet reads back: stripped, each line end one LF (an XML reader turns CR LF
    # into LF: a column named with a CR LF failed its own check; review 21).
    facts = [_as_read(fact) for fact in facts]
    return hashlib.sha256("\x1f".join(facts).encode("utf-8")).hexdigest()[:16]


def _as_read(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def _sample_classifiers(sample_rows: Sequence[RawRow]) -> set[str] | None:
    """The further classifiers the Sample sheet's header names (``NAME: stratum``), or
    None when it has no header row."""
    if not sample_rows or sample_rows[0][0] != 1:
        return None
    texts = (_text(value) for value in sample_rows[0][1][5:])
    return {text.removesuffix(": stratum") for text in texts if text and text.endswith(": stratum")}


def _sample_check(sample_rows: Sequence[RawRow]) -> str | None:
    """The copy of the design's check in the Sample sheet's header (None in workbooks
    older than it)."""
    if not sample_rows or sample_rows[0][0] != 1:
        return None
    prefix = f"{_F_CHECK}: "
    for value in sample_rows[0][1]:
        text = _text(value)
        if text is not None and text.startswith(prefix):
            return text.removeprefix(prefix)
    return None


def _design_from(
    path: Path, fields: dict[str, object], table: list[list], sample_rows: Sequence[RawRow] = ()
) -> LabelingDesign:
    """The design the Design sheet records. The Sample sheet's header (``sample_rows``)
    names the further classifiers, which tells a classifier's row of the table from a
    note typed under it, and keeps a copy of the design's check."""
    further = _sample_classifiers(sample_rows)
    where = f"{path.name}, sheet {DESIGN_SHEET!r}"
    for field in (_F_RULE, _F_SEED, _F_FILE, _F_SHA, _F_ID, _F_ITEMS):
        if _text(fields.get(field)) is None:
            raise LabelingError(
                f"{where} has no {field!r} line: it is not a PR Planner labeling workbook, or "
                "its Design sheet was edited"
            )
    if _text(fields[_F_RULE]) not in (RULE, *EARLIER_RULES):
        raise LabelingError(
            f"{where}: the rule is not PR Planner's selection rule (the Design sheet was "
            "edited, or the workbook comes from another program)"
        )
    try:
        seed = validate_seed(_text(fields[_F_SEED]) or "", name="the seed")
    except InputError as exc:
        raise LabelingError(f"{where}: {exc}") from None
    designs: list[ClassifierDesign] = []
    for row_number, *values in table:
        row_where = f"{where}, row {row_number}"
        name = _text(_value(values, 0))
        if name is None:
            continue
        if designs and further is not None and name not in further:
            continue  # a note typed under the table: the sample has no such classifier
        if all(_text(_value(values, index)) is None for index in range(1, 6)):
            continue  # a note typed under the table, not a classifier
        numbers = [
            _whole(_value(values, index), _TABLE_HEADER[index].lower(), row_where)
            for index in range(2, 6)
        ]
        for stratum, labeled, population in oversized_strata(
            (numbers[2], numbers[3]), (numbers[0], numbers[1])
        ):
            raise LabelingError(
                f"{row_where}: the {stratum} sample ({labeled:,} items) is larger than its "
                f"population ({population:,}); the Design sheet was edited: use the "
                "workbook as PR Planner wrote it"
            )
        try:
            design = ClassifierDesign(
                name=name,
                column=_text(_value(values, 1)) or name,
                population_pos=numbers[0],
                population_neg=numbers[1],
                n_pos=numbers[2],
                n_neg=numbers[3],
            )
        except InputError as exc:
            raise LabelingError(f"{row_where}: {exc}") from None
        designs.append(design)
    if not designs:
        raise LabelingError(f"{where} has no classifier table (population and sample sizes)")
    items = _whole(fields[_F_ITEMS], _F_ITEMS.lower(), where)
    earlier_items = _whole(fields.get(_F_EARLIER) or 0, _F_EARLIER.lower(), where)
    file_sha256, id_column = _text(fields[_F_SHA]) or "", _text(fields[_F_ID]) or ""
    recorded = _text(fields.get(_F_CHECK))
    targets, targets_note = _targets_from(where, fields)
    return LabelingDesign(
        seed=seed,
        rule=RULE,
        file_name=_text(fields[_F_FILE]) or "",
        file_sha256=file_sha256,
        id_column=id_column,
        designs=tuple(designs),
        # "no" or "no: every item ... was flagged" (anything else typed there: blind)
        blind=not (_text(fields.get(_F_BLIND)) or "yes").casefold().startswith("no"),
        items=items,
        earlier_items=earlier_items,
        app_version=_text(fields.get(_F_VERSION)) or "",
        drawn_as=_text(fields.get(_F_DRAWN_AS)) or "",
        targets=targets,
        targets_note=targets_note,
        created=_day_of(fields.get(_F_CREATED)),
        category=clean_category(_text(fields.get(_F_CATEGORY))),
        classifier=clean_category(_text(fields.get(_F_CLASSIFIER))),
        round_date=_round_date_of(fields.get(_F_ROUND_DATE), where),
        recorded_checks=tuple(
            check for check in (recorded, _sample_check(sample_rows)) if check is not None
        ),
    )


def span_words(span: Sequence[float], percent) -> str:
    """``"80.10 % to 83.00 %"``, or one value where the ends meet (no open item on the
    side that moves it). "to", not "between": it must not read as an interval."""
    low, high = span
    if math.isclose(low, high, rel_tol=1e-12, abs_tol=1e-15):
        return percent(low)
    return f"{percent(low)} to {percent(high)}"


def range_words(spans: dict, percent, names: Sequence[str] = ("precision", "recall", "f1")):
    """``["precision 80.1 % to 83.0 %", "recall 61.2 %"]``: the ranges of
    :meth:`ClassifierLabels.range_if_skipped` in words (:func:`span_words`)."""
    return [
        f"{name} {span_words(spans[name], percent)}"
        for name in names
        if spans.get(name) is not None
    ]


def _day_of(value: object) -> dt.date | None:
    """The day of the Design sheet's "Created" line (text as written, or a date cell a
    spreadsheet made of it); None when it is not one."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    text = _text(value)
    if text is None:
        return None
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        return None


def _round_date_of(value: object, where: str) -> dt.date | None:
    """The Design sheet's "Round date": None when empty (the day drawn is used). A date the
    lead typed there in another form is refused: silently dating the round by the day it
    was drawn would put it at the wrong place in the history."""
    from core.workbook.rounds import EARLIEST_ROUND_DATE

    day = _day_of(value)
    text = _text(value)
    if day is None and text is not None:
        raise LabelingError(
            f"{where}: the {_F_ROUND_DATE!r} line holds {text[:40]!r}, which is not a date; "
            "write it as year-month-day (2026-04-03), or clear it to date the round by the "
            "day the sample was drawn"
        )
    if day is not None and day < EARLIEST_ROUND_DATE:
        # The rounds reader refuses such a day: the round would be lost when its rounds
        # workbook or session is opened again.
        raise LabelingError(
            f"{where}: the {_F_ROUND_DATE!r} line holds {day.isoformat()}, before "
            f"{EARLIEST_ROUND_DATE.year}; write the day the round was labeled (2026-04-03), or "
            "clear it to date the round by the day the sample was drawn"
        )
    return day


def _fraction(value: object) -> float | None:
    """A number cell, or text such as ``0.05``, ``5%`` or ``5 %`` (a percentage typed over
    the cell); None when it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    text = (_text(value) or "").replace(",", ".")
    scale = 1.0
    if text.endswith("%"):
        text, scale = text[:-1].strip(), 0.01
    try:
        number = float(text) * scale
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _targets_from(where: str, fields: dict[str, object]) -> tuple[Targets | None, str]:
    """The target margins on the Design sheet and, when its lines cannot be used (edited
    by hand), why: the labels still count, the round is just not judged by them. None
    and "" when the workbook records none (drawn without targets, or older than the
    lines)."""
    names = (_F_MARGIN_PRECISION, _F_MARGIN_RECALL, _F_CONFIDENCE)
    if all(_text(fields.get(name)) is None for name in names):
        return None, ""
    ranges = {
        _F_MARGIN_PRECISION: (0.0, 0.5, "between 0 % and 50 %"),
        _F_MARGIN_RECALL: (0.0, 0.5, "between 0 % and 50 %"),
        _F_CONFIDENCE: (0.5, 1.0, "between 50 % and 100 %"),
    }
    values = []
    for name in names:
        text = _text(fields.get(name))
        number = _fraction(fields.get(name))
        low, high, words = ranges[name]
        if text is None:
            problem = "is empty"
        elif number is None:
            problem = f"is {text!r}, not a percentage such as 5%"
        elif not low < number < high:
            problem = f"is {100 * number:g} %, not {words}"
        else:
            values.append(number)
            continue
        return None, (
            f"{where}: {name!r} {problem} (the Design sheet was edited), so the round is not "
            "judged by the targets it was drawn for"
        )
    targets = Targets(margin_precision=values[0], margin_recall=values[1], confidence=values[2])
    return targets, ""


def draw_mark(design: LabelingDesign) -> str:
    """``; seed 41; items from items.csv; item list SHA-256 1a2b3c4d5e6f; ``: the part of
    a round's notes (:func:`round_notes`) that names the draw its labels came from (the
    list's contents too: one file name exported every week with one seed is several
    draws). Every reading of the draw, whichever copies and top-ups were read, has it."""
    return (
        f"; seed {design.seed}; items from {design.file_name}; item list SHA-256 "
        f"{design.file_sha256[:12]}; "
    )


def round_notes(
    labels: ClassifierLabels, workbooks: Sequence[LabelingWorkbook], targets_words: str = ""
) -> str:
    """The notes of the rounds workbook's row for ``labels``, written alike by the app and
    ``prplanner labels --append-to``: the workbooks read (the app finds a draw's copies by
    them), the draw (:func:`draw_mark`), the items skipped or unlabeled by stratum, and
    ``targets_words`` (``"; targets precision ±5 %, ..."`` or empty), which a report
    judges the round by."""
    from core.workbook.rounds import open_items_note

    return (
        f"labeling workbook{'s' if len(workbooks) > 1 else ''} "
        + ", ".join(book.path.name for book in workbooks)
        + draw_mark(workbooks[0].design)
        + open_items_note(labels.skipped_by_stratum, (labels.unlabeled_pos, labels.unlabeled_neg))
        + targets_words
    )


def round_name(workbooks: Sequence[LabelingWorkbook]) -> str:
    """The round's name: the file name the first draw was written as (its Design sheet's
    "Drawn as"), not that of a labeler's copy (``round1 anna``) or a top-up; the first
    workbook's own name for workbooks written before that line existed."""
    first_draws = [book for book in workbooks if book.design.earlier_items == 0]
    for book in first_draws or workbooks:
        if book.design.drawn_as:
            return Path(book.design.drawn_as).stem
    return workbooks[0].path.stem


def largest_draw(workbooks: Sequence[LabelingWorkbook]) -> LabelingWorkbook:
    """The workbook of a round's largest draw (its latest top-up, which lists the whole
    sample and records what the round was last drawn with)."""
    return max(workbooks, key=lambda book: len(book.sample))


def round_date(workbooks: Sequence[LabelingWorkbook]) -> dt.date:
    """The round's date: the one the lead gave the draw (its first draw's: a top-up
    keeps it), else the day its first draw was made (the item list's snapshot the sample
    represents), not the day the labels happen to be read; today for workbooks that do
    not say."""
    given = [book.design.round_date for book in workbooks if book.design.round_date]
    if given:  # a top-up records its round's date (another is refused): one date
        return min(given)
    from core.workbook.rounds import EARLIEST_ROUND_DATE

    # A "Created" line edited to an impossible day would file a round that never reopens.
    days = [
        book.design.created
        for book in workbooks
        if book.design.created is not None and book.design.created >= EARLIEST_ROUND_DATE
    ]
    return min(days) if days else dt.date.today()


def _read_sample(
    path: Path, rows: Iterator[RawRow], design: LabelingDesign
) -> dict[str, SamplePlace]:
    where = f"{path.name}, sheet {SAMPLE_SHEET!r}"
    places: dict[str, SamplePlace] = {}
    further = design.designs[1:]
    width = 5 + 2 * len(further)
    for row_number, values, _ in rows:
        if row_number == 1:
            # Its header names a stratum column per further classifier: one the Design
            # sheet no longer lists was cleared or deleted there.
            listed = [
                text.removesuffix(": stratum")
                for text in (_text(value) for value in values[5:])
                if text is not None and text.endswith(": stratum")
            ]
            missing = [name for name in listed if name not in {d.name for d in further}]
            if missing:
                raise LabelingError(
                    f"{path.name}, sheet {DESIGN_SHEET!r}: the sample was drawn for "
                    f"classifier(s) {', '.join(map(repr, missing))} too, but the Design "
                    "sheet's table no longer lists them (a row was cleared or deleted); use "
                    "the workbook as PR Planner wrote it"
                )
            continue
        if len(values) < width:
            values = [*values, *([None] * (width - len(values)))]
        item_id = _item_id(values[0])
        if item_id is None:
            continue
        key = _text(values[1]) or ""
        if key != item_key(design.seed, item_id):
            raise LabelingError(
                f"{where}, row {row_number}: the key of item {item_id!r} is not the rule's "
                f"key for seed {design.seed}; the Sample sheet was edited. Use the workbook "
                "as PR Planner wrote it"
            )
        in_workbook = (_text(values[2]) or "").casefold()
        if in_workbook not in ("yes", "no"):
            raise LabelingError(
                f"{where}, row {row_number}: 'In this workbook' must be yes or no, got "
                f"{in_workbook!r}; the Sample sheet was edited"
            )
        stratum = _text(values[3])
        rank = values[4]
        if stratum not in (None, "pos", "neg"):
            raise LabelingError(f"{where}, row {row_number}: stratum {stratum!r} is not pos/neg")
        memberships = []
        for index, classifier in enumerate(further):
            member_stratum = _text(values[5 + 2 * index])
            if member_stratum is None:
                continue
            if member_stratum not in ("pos", "neg"):
                raise LabelingError(
                    f"{where}, row {row_number}: stratum {member_stratum!r} is not pos/neg"
                )
            member_rank = _rank(values[6 + 2 * index], f"{where}, row {row_number}")
            memberships.append(
                Membership(classifier=classifier.name, stratum=member_stratum, rank=member_rank)  # type: ignore[arg-type]
            )
        if item_id in places:
            raise LabelingError(f"{where}, row {row_number}: item {item_id!r} appears twice")
        places[item_id] = SamplePlace(
            id=item_id,
            in_workbook=in_workbook == "yes",
            key=key,
            stratum=stratum,
            rank=None if rank is None else _rank(rank, f"{where}, row {row_number}"),
            memberships=tuple(memberships),
            row=row_number,
        )
    here = sum(place.in_workbook for place in places.values())
    if here != design.items or len(places) != design.items + design.earlier_items:
        raise LabelingError(
            f"{where} holds {here:,} items of this workbook and {len(places) - here:,} drawn "
            f"before, but the Design sheet says {design.items:,} and "
            f"{design.earlier_items:,}; the workbook was edited"
        )
    _check_ranks(where, places, design)
    return places


def _check_ranks(where: str, places: dict[str, SamplePlace], design: LabelingDesign) -> None:
    """Within each classifier's stratum the ranks must be 1..n in key order."""
    for index, classifier in enumerate(design.designs):
        for stratum, total in (("pos", classifier.n_pos), ("neg", classifier.n_neg)):
            ranked = []
            for item_id, place in places.items():
                if index == 0:
                    if place.stratum == stratum and place.rank is not None:
                        ranked.append((place.key, place.rank, item_id))
                else:
                    for membership in place.memberships:
                        if (
                            membership.classifier == classifier.name
                            and membership.stratum == stratum
                        ):
                            ranked.append((place.key, membership.rank, item_id))
            ranked.sort()
            ranks = [rank for _, rank, _ in ranked]
            if ranks != list(range(1, total + 1)):
                raise LabelingError(
                    f"{where}: the ranks of classifier {classifier.name!r} in the predicted-"
                    f"{'positive' if stratum == 'pos' else 'negative'} stratum do not follow "
                    "the rule's key order; the workbook was edited"
                )


def _find_labels_header(path: Path, title: str, rows: Iterator[RawRow]):
    """``(header row, {header text: column}, kept columns, problem)`` of a sheet whose header
    row holds the cells ``Item id`` and ``Label``, or None for a sheet without one; the
    problem (a header on two columns) refuses the sheet only if its labels are the ones
    read."""
    for row_number, values, _ in rows:
        if row_number > _HEADER_ROWS:
            break
        texts = [(_text(value) or "").casefold() for value in values]
        if ID_HEADER.casefold() in texts and LABEL_HEADER.casefold() in texts:
            problem = None
            for header in (ID_HEADER, LABEL_HEADER):
                places = [i for i, text in enumerate(texts) if text == header.casefold()]
                if len(places) > 1 and problem is None:
                    letters = " and ".join(_column_letter(i) for i in places)
                    problem = (
                        f"{path.name}, sheet {title!r}: columns {letters} are both headed "
                        f"{header!r}, so which one to count is not clear; keep the "
                        f"{header!r} header on one column only (rename the other, e.g. "
                        "'Note'), then read again"
                    )
            # The first column of a header counts (a problem above says so, if it is used).
            columns = {text: index for index, text in reversed(list(enumerate(texts)))}
            between = values[columns[ID_HEADER.casefold()] + 1 : columns[LABEL_HEADER.casefold()]]
            kept = tuple(
                text
                for text in (_text(value) for value in between)
                if text is not None and text != STRATUM_HEADER
            )
            return row_number, columns, kept, problem
    return None


@dataclass(frozen=True, slots=True)
class _LabelsSheet:
    """One sheet with the labels header, as read."""

    title: str
    rows: list[tuple[int, str | None, object, object, object]]
    label_index: int
    kept_columns: tuple[str, ...]
    #: Rows whose id cell holds a number, not the text written (Excel converted it).
    numeric_ids: frozenset[int] = frozenset()
    #: Rows whose id cell holds a date: Excel read an id such as 7-31 as one.
    dated_ids: frozenset[int] = frozenset()
    #: Why the sheet cannot be read as it is (raised only if it is the one to read).
    problem: str | None = None

    @property
    def labels(self) -> int:
        return sum(_text(label) is not None for _row, _id, label, _who, _note in self.rows)


def _read_labels_sheet(path: Path, sheet, control) -> _LabelsSheet | None:
    """The rows of ``sheet`` under its labels header (None: no such header)."""
    found = _find_labels_header(path, sheet.title, sheet.rows)
    if found is None:
        return None
    header_row, columns, kept_columns, problem = found
    id_index = columns[ID_HEADER.casefold()]
    label_index = columns[LABEL_HEADER.casefold()]
    labeler_index = columns.get("labeler")
    comment_index = columns.get("comment")
    rows: list[tuple[int, str | None, object, object, object]] = []
    uncached: list[int] = []
    numeric_ids: set[int] = set()
    dated_ids: set[int] = set()
    for row_number, values, formulas in sheet.rows:
        if row_number <= header_row:
            continue
        raw_id = _value(values, id_index)
        if isinstance(raw_id, int | float) and not isinstance(raw_id, bool):
            numeric_ids.add(row_number)
        elif isinstance(raw_id, dt.date | dt.time | dt.timedelta):
            dated_ids.add(row_number)
        item_id = _item_id(raw_id)
        label = _value(values, label_index)
        if label is None and formulas and not formulas.get(label_index, ("", True))[1]:
            uncached.append(row_number)  # a formula whose value was never saved
        labeler = _value(values, labeler_index)
        comment = _value(values, comment_index)
        if item_id is None and all(_text(value) is None for value in (label, labeler, comment)):
            continue
        rows.append((row_number, item_id, label, labeler, comment))
        if len(rows) % 5000 == 0:
            progress.step(control, len(rows), 2 * len(rows) + 1)
    if uncached and problem is None:
        listed = ", ".join(map(str, uncached[:_SHOWN]))
        problem = (
            f"{path.name}, sheet {sheet.title!r}: the Label cell of row(s) "
            f"{listed}{', ...' if len(uncached) > _SHOWN else ''} holds a formula "
            "whose value was never saved; type the labels, or open the workbook "
            "in Excel or LibreOffice and save it so the values are stored"
        )
    return _LabelsSheet(
        sheet.title,
        rows,
        label_index,
        kept_columns,
        frozenset(numeric_ids),
        frozenset(dated_ids),
        problem,
    )


def _no_labels_sheet(path: Path, first_title: str) -> LabelingError:
    return LabelingError(
        f"{path.name}: no sheet has a header row with the cells {ID_HEADER!r} and "
        f"{LABEL_HEADER!r} in its first {_HEADER_ROWS} rows (the first sheet is "
        f"{first_title!r}); is this a labeling workbook?"
    )


def _the_labels_sheet(
    path: Path, found: list[_LabelsSheet], first_title: str, sample_ids
) -> _LabelsSheet:
    """The sheet the editors filled in: among the sheets with the labels header whose ids
    are this sample's (a sheet of reference examples is not), the only one, or the only
    one holding labels, or copies that agree label for label (by meaning: ``pos`` is
    ``positive``) read together item by item, as labelers' copies in separate workbooks
    are (two labelers each filling half on a sheet of their own). A copy of the sheet made
    in Excel lands before the original, so the first sheet is not always it."""
    if not found:
        raise _no_labels_sheet(path, first_title)
    ours = [sheet for sheet in found if any(item_id in sample_ids for _, item_id, *_ in sheet.rows)]
    candidates = ours or found[:1]
    filled = [sheet for sheet in candidates if sheet.labels]
    if len(candidates) == 1 or not filled:
        chosen = candidates[0]
    elif len(filled) == 1:
        chosen = filled[0]
    else:

        def labels_of(sheet: _LabelsSheet) -> dict[str, str]:
            return {
                item_id: _LABEL_WORDS.get(text.casefold(), text.casefold())
                for _, item_id, label, *_ in sheet.rows
                if item_id is not None and (text := _text(label)) is not None
            }

        given = [labels_of(sheet) for sheet in filled]
        agree = all(
            first.get(item_id, label) == label
            for first in given
            for other in given
            for item_id, label in other.items()
        )
        if not agree:
            listed = " and ".join(f"{sheet.title!r} ({sheet.labels:,} labels)" for sheet in filled)
            raise LabelingError(
                f"{path.name}: sheets {listed} both hold labels for this sample and they "
                "differ, so which ones count is not clear; keep the sheet the editors "
                "finished (copy any labels over from the other) and delete the other, then "
                "read again"
            )
        chosen = _merged(path, max(filled, key=lambda sheet: sheet.labels), filled)
    if chosen.problem is not None:
        raise LabelingError(chosen.problem)
    return chosen


def _merged(path: Path, fullest: _LabelsSheet, copies: list[_LabelsSheet]) -> _LabelsSheet:
    """``fullest`` with the labels (and their labeler and comment) of the other agreeing
    ``copies`` filled in where it has none: every label given on any copy counts.

    A copy's cell that holds no label word is refused here, named by its own sheet and
    cell: merged into ``fullest``'s row it was named by that sheet's cell, which was empty
    (fuzz 18)."""
    elsewhere: dict[str, tuple[object, object, object]] = {}
    wrong: list[str] = []
    wrong_words: Counter[str] = Counter()
    for sheet in copies:
        if sheet is fullest:
            continue
        for row, item_id, label, labeler, comment in sheet.rows:
            text = _text(label)
            if item_id is None or text is None:
                continue
            if text.casefold() not in _LABEL_WORDS:
                wrong_words[text] += 1
                wrong.append(
                    f"sheet {sheet.title!r}, cell {_cell(sheet.label_index, row)} {text!r} "
                    f"(item {item_id!r})"
                )
            elsewhere.setdefault(item_id, (label, labeler, comment))
    if wrong:
        raise _not_labels(path.name, wrong, wrong_words)
    rows = [
        (row, item_id, *elsewhere[item_id])
        if _text(label) is None and item_id in elsewhere
        else (row, item_id, label, labeler, comment)
        for row, item_id, label, labeler, comment in fullest.rows
    ]
    return replace(fullest, rows=rows)


def read_labeling_workbook(
    path: str | os.PathLike[str], *, control: progress.TaskControl | None = None
) -> LabelingWorkbook:
    """Read a labeling workbook back and check it against its design.

    Parameters
    ----------
    path : str or path-like
        A workbook written by :func:`write_labeling_workbook` (re-saved by Excel or
        LibreOffice is fine).
    control : TaskControl, optional
        Progress and cancel (the sheet is read row by row).

    Returns
    -------
    LabelingWorkbook

    Raises
    ------
    LabelingError
        An id added, removed, edited or repeated on the Labels sheet (the first few named
        with their rows), a label that is not positive / negative / skip (cell named), or a
        Design or Sample sheet that no longer matches the rule.
    WorkbookError
        The file cannot be read as a workbook at all.
    """
    path = Path(path)
    fields: dict[str, object] | None = None
    table: list[list] = []
    sample_rows: list[RawRow] = []
    found: list[_LabelsSheet] = []
    first_title = ""
    with open_sheets(path) as sheets:
        for position, sheet in enumerate(sheets):
            if position == 0:
                first_title = sheet.title
            if sheet.title == DESIGN_SHEET:
                fields, table = _read_design(path, sheet.rows)
            elif sheet.title == SAMPLE_SHEET:
                sample_rows = list(sheet.rows)
            else:
                labels_sheet = _read_labels_sheet(path, sheet, control)
                if labels_sheet is not None:
                    found.append(labels_sheet)
                if len(found) > MAX_LABELS_SHEETS:  # each is held whole: memory stays bounded
                    raise LabelingError(
                        f"{path.name}: more than {MAX_LABELS_SHEETS} sheets have the "
                        f"{ID_HEADER!r} and {LABEL_HEADER!r} header; keep the sheet the "
                        "editors filled in (and the Design and Sample sheets), then read again"
                    )
    if not found and fields is not None and sample_rows:
        # A labeling workbook whose header was renamed or moved down: "is this a labeling
        # workbook?" asked the lead what they knew (fuzz 18).
        raise LabelingError(
            f"{path.name} is a labeling workbook (its {DESIGN_SHEET} and {SAMPLE_SHEET} sheets "
            f"are there), but no sheet has a header row with the cells {ID_HEADER!r} and "
            f"{LABEL_HEADER!r} in its first {_HEADER_ROWS} rows: a header cell was renamed, "
            f"deleted or moved down. Put the headers back as PR Planner wrote them "
            f"({ID_HEADER!r} and {LABEL_HEADER!r} in row 1 of sheet {LABELS_SHEET!r}), then "
            "read again"
        )
    if not found:  # said before a missing Design sheet: this is no labeling workbook
        raise _no_labels_sheet(path, first_title)
    if fields is None or not sample_rows:
        missing = DESIGN_SHEET if fields is None else SAMPLE_SHEET
        raise LabelingError(
            f"{path.name} has no {missing!r} sheet: it is not a labeling workbook written by "
            "PR Planner (prplanner select writes one), or the sheet was deleted"
        )
    design = _design_from(path, fields, table, sample_rows)
    places = _read_sample(path, iter(sample_rows), design)
    if design.edited:
        raise LabelingError(
            f"{path.name}, sheet {DESIGN_SHEET!r} was changed after the sample was drawn: its "
            "seed, item file SHA-256, id column, item counts, or a classifier's populations "
            "or sample sizes are no longer what PR Planner wrote, and results worked out "
            "from them would be wrong. Use the workbook as PR Planner wrote it (the labels "
            "can be copied into it), or draw the round again from the item list"
        )
    chosen = _the_labels_sheet(path, found, first_title, places)
    kept_columns = chosen.kept_columns
    items = _match(
        path,
        chosen.title,
        chosen.rows,
        places,
        chosen.label_index,
        chosen.numeric_ids,
        chosen.dated_ids,
    )
    progress.step(control, 1, 1)
    sample = tuple(sorted(places.values(), key=lambda place: place.key))
    return LabelingWorkbook(
        path=path, design=design, items=items, sample=sample, kept_columns=kept_columns
    )


def _listing(pairs: Sequence[tuple[str, int]]) -> str:
    shown = ", ".join(f"{item_id!r} (row {row})" for item_id, row in pairs[:_SHOWN])
    return shown + (", ..." if len(pairs) > _SHOWN else "")


def _refuse_converted_ids(
    where: str,
    offending: Sequence[int],
    numeric_ids: frozenset[int],
    rows: Sequence[tuple[int, str | None, object, object, object]],
    dated_ids: frozenset[int] = frozenset(),
) -> None:
    """Say so when ids that do not match are numbers or dates: the cause is Excel's
    conversion, not an edit, and the symptoms (leading zeros gone, a long id rounded into
    another's twin, ``7-31`` become ``2026-07-31T00:00:00``) would not tell a lead that."""
    dated = sorted(row for row in offending if row in dated_ids)
    if dated:
        shown_rows = set(dated[:_SHOWN])
        shown = ", ".join(
            f"{item_id} (row {row})" for row, item_id, *_ in rows if row in shown_rows
        )
        raise LabelingError(
            f"{where}: {len(dated_ids):,} item id(s) are dates, not the text PR Planner wrote "
            f"({shown}{', ...' if len(dated) > _SHOWN else ''}): Excel or LibreOffice read "
            "ids such as 7-31 as dates. Copy the Label column into a fresh copy of the "
            "workbook as drawn (same row order), or undo the conversion, then read again"
        )
    converted = sorted(row for row in offending if row in numeric_ids)
    if not converted:
        return
    shown_rows = set(converted[:_SHOWN])
    shown = ", ".join(f"{item_id} (row {row})" for row, item_id, *_ in rows if row in shown_rows)
    raise LabelingError(
        f"{where}: {len(numeric_ids):,} item id(s) are numbers, not the text PR Planner wrote "
        f"({shown}{', ...' if len(converted) > _SHOWN else ''}): Excel or LibreOffice "
        "converted them, which drops leading zeros ('000123' becomes 123) and keeps only 15 "
        "digits of a long id. Copy the Label column into a fresh copy of the workbook as "
        "drawn (same row order), or undo the conversion, then read again"
    )


def _match(
    path: Path,
    title: str,
    rows: list[tuple[int, str | None, object, object, object]],
    places: dict[str, SamplePlace],
    label_index: int,
    numeric_ids: frozenset[int] = frozenset(),
    dated_ids: frozenset[int] = frozenset(),
) -> tuple[LabeledItem, ...]:
    where = f"{path.name}, sheet {title!r}"
    blank = [row for row, item_id, *_ in rows if item_id is None]
    if blank:
        last_item = max((row for row, item_id, *_ in rows if item_id is not None), default=0)
        below = [row for row in blank if row > last_item]
        present = {item_id for _, item_id, *_ in rows if item_id is not None}
        # Every id of this workbook still there: the text below is a note. An id cleared on
        # the last row also leaves text below the last id (review 18).
        complete = all(item_id in present for item_id, place in places.items() if place.in_workbook)
        if complete and len(below) == len(blank):
            # A labeler's note under the list ("All done - Eva"): no id was ever there
            # (trial 18 was told to put one back).
            raise LabelingError(
                f"{where}: row(s) {', '.join(map(str, below[:_SHOWN]))}, below the last item, "
                "hold text (a note?); delete it or move it to another sheet, then read again"
            )
        raise LabelingError(
            f"{where}: row(s) {', '.join(map(str, blank[:_SHOWN]))} have a label or comment "
            "but no item id; put the id back (ids must stay as PR Planner wrote them)"
        )
    seen: dict[str, int] = {}
    repeated = []
    for row, item_id, *_ in rows:
        assert item_id is not None
        if item_id in seen:
            repeated.append((item_id, row))
        seen.setdefault(item_id, row)
    if repeated:
        _refuse_converted_ids(where, [row for _, row in repeated], numeric_ids, rows, dated_ids)
        raise LabelingError(
            f"{where}: item id(s) appear twice: {_listing(repeated)}; each item must be on one row"
        )
    added = [
        (item_id, row)
        for item_id, row in seen.items()
        if item_id not in places or not places[item_id].in_workbook
    ]
    removed = sorted(
        (
            (item_id, place.row)
            for item_id, place in places.items()
            if place.in_workbook and item_id not in seen
        ),
        key=lambda pair: pair[1],
    )
    if added:
        _refuse_converted_ids(where, [row for _, row in added], numeric_ids, rows, dated_ids)
    problems = []
    if added:
        problems.append(
            f"{len(added):,} id(s) are not in the sample (added or edited): {_listing(added)}"
        )
    if removed:
        shown = ", ".join(repr(item_id) for item_id, _ in removed[:_SHOWN])
        problems.append(
            f"{len(removed):,} id(s) of the sample are missing (removed or edited): {shown}"
            + (", ..." if len(removed) > _SHOWN else "")
        )
    # An id retyped with its accents encoded otherwise ("e" and a combining accent for
    # "é") looks the same and is another text: say so, or both lists show one id (fuzz 21).
    missing_by_form = {unicodedata.normalize("NFC", item_id): item_id for item_id, _ in removed}
    look_alikes = [
        (item_id, row, missing_by_form[unicodedata.normalize("NFC", item_id)])
        for item_id, row in added
        if unicodedata.normalize("NFC", item_id) in missing_by_form
    ]
    if look_alikes:
        item_id, row, sample_id = look_alikes[0]
        problems.append(
            f"{item_id!r} (row {row}) looks like the sample's {sample_id!r} but encodes an "
            "accented letter differently (as a letter and a separate accent mark, or the "
            "other way round), as retyping or pasting can; copy the id from the workbook "
            "PR Planner wrote"
            + (f" ({len(look_alikes):,} ids are like this)" if len(look_alikes) > 1 else "")
        )
    if problems:
        split = (
            ". To split the work between labelers, give each a full copy and leave the other "
            "rows' labels empty (do not delete them): the copies are read together"
            if removed
            else ""
        )
        raise LabelingError(
            f"{where}: " + "; ".join(problems) + ". Every id must stay exactly as PR Planner "
            "wrote it; put the rows back (or copy the labels into a fresh copy of the sheet)"
            + split
        )
    items = []
    not_labels: list[str] = []  # every cell is named at once, not one per reading
    wrong_words: Counter[str] = Counter()
    for row, item_id, raw_label, labeler, comment in rows:
        assert item_id is not None
        text = _text(raw_label)
        label = None
        if text is not None:
            label = _LABEL_WORDS.get(text.casefold())
            if label is None:
                not_labels.append(f"cell {_cell(label_index, row)} {text!r} (item {item_id!r})")
                wrong_words[text] += 1
                continue
        place = places[item_id]
        items.append(
            LabeledItem(
                id=item_id,
                row=row,
                label=label,
                stratum=place.stratum,
                rank=place.rank,
                memberships=place.memberships,
                labeler=_text(labeler),
                comment=_text(comment),
            )
        )
    if not_labels:
        raise _not_labels(where, not_labels, wrong_words)
    return tuple(items)


def _not_labels(where: str, cells: Sequence[str], words: Counter[str]) -> LabelingError:
    """The refusal of label cells that hold no label word: ``cells`` as named, ``words``
    counted."""
    shown = ", ".join(cells[:_SHOWN]) + (", ..." if len(cells) > _SHOWN else "")
    # The distinct words, most frequent first: what a find-and-replace fixes at once.
    common = words.most_common(8)
    distinct = ", ".join(f"{word!r} ×{count:,}" for word, count in common) + (
        ", ..." if len(words) > len(common) else ""
    )
    return LabelingError(
        f"{where}: {len(cells):,} label cell(s) hold something that is not a label "
        f"({distinct}; first: {shown}); use {', '.join(LABEL_CHOICES)} (or leave the "
        "cell empty): Find & Replace (Ctrl+H) in Excel or LibreOffice changes each word "
        "at once"
    )


# --- counting ------------------------------------------------------------------------------


def _same_design(first: LabelingWorkbook, other: LabelingWorkbook) -> None:
    a, b = first.design, other.design
    names_a = [design.name for design in a.designs]
    names_b = [design.name for design in b.designs]
    if a.seed != b.seed or a.id_column != b.id_column or names_a != names_b:
        raise LabelingError(
            f"{other.path.name} is not a top-up of {first.path.name}: the seed, id column or "
            "classifiers differ; count workbooks of one round together only"
        )


def count_labels(workbooks: Sequence[LabelingWorkbook]) -> tuple[ClassifierLabels, ...]:
    """TP/FP/FN/TN per classifier (the main one first) of one round's workbooks.

    Parameters
    ----------
    workbooks : sequence of LabelingWorkbook
        The first draw and any top-ups of one round (same seed and classifiers), in any
        order, and copies of them that labelers filled in part each
        (:func:`_merged_labels`).

    Returns
    -------
    tuple of ClassifierLabels
        Populations, sample sizes and each item's strata come from the workbook of the
        largest (latest) draw, whose Sample sheet lists the whole sample.

    Raises
    ------
    LabelingError
        Workbooks of different rounds, one file given twice, copies that label an item
        positive in one and negative in another, or an item of the sample in none of them
        (a top-up given without the first workbook).
    """
    if not workbooks:
        raise InputError("give at least one labeling workbook")
    first = workbooks[0]
    for other in workbooks[1:]:
        _same_design(first, other)
    _refuse_repeated_files(workbooks)
    latest = largest_draw(workbooks)
    _refuse_other_rounds(workbooks, latest)
    labels, source = _merged_labels(workbooks)
    absent = [place.id for place in latest.sample if place.id not in labels]
    if absent:
        shown = ", ".join(repr(item_id) for item_id in absent[:_SHOWN])
        raise LabelingError(
            f"{len(absent):,} item(s) of the round's sample are in none of the workbooks "
            f"given ({shown}{', ...' if len(absent) > _SHOWN else ''}): give every workbook "
            f"of the round (the first draw and each top-up before {latest.path.name}) "
            "together"
        )
    unlabeled = {place.id for place in latest.sample if labels[place.id].label is None}
    copies: dict[str, list[tuple[str, int]]] = {item_id: [] for item_id in unlabeled}
    if len(workbooks) > 1 and unlabeled:
        for book in workbooks:
            for item in book.items:
                if item.id in copies:
                    copies[item.id].append((book.path.name, item.row))
    results = []
    for index, design in enumerate(latest.design.designs):
        waiting: list[UnlabeledItem] = []
        tally = dict.fromkeys(
            (
                "tp",
                "fp",
                "fn",
                "tn",
                "skipped_pos",
                "skipped_neg",
                "unlabeled_pos",
                "unlabeled_neg",
            ),
            0,
        )
        for place in latest.sample:
            stratum = _stratum_for(place, index, design.name)
            if stratum is None:
                continue
            label = labels[place.id].label
            if label is None:
                tally[f"unlabeled_{stratum}"] += 1
                holder = source[place.id]
                waiting.append(
                    UnlabeledItem(
                        id=place.id,
                        workbook=holder.path.name,
                        row=labels[place.id].row,
                        copies=tuple(copies[place.id]),
                    )
                )
            elif label == "skip":
                tally[f"skipped_{stratum}"] += 1
            elif stratum == "pos":
                tally["tp" if label == "positive" else "fp"] += 1
            else:
                tally["fn" if label == "positive" else "tn"] += 1
        # As the labelers find them: the first draw's rows top to bottom, then each
        # top-up's (the Labels sheet is not in key order, see labeling_order).
        draw_order = {book.path.name: book.design.earlier_items for book in workbooks}
        waiting.sort(key=lambda item: (draw_order[item.workbook], item.workbook, item.row))
        results.append(ClassifierLabels(design=design, unlabeled_items=tuple(waiting), **tally))
    return tuple(results)


def _drawn_from(book: LabelingWorkbook) -> str:
    main = book.design.designs[0]
    return (
        f"{book.design.file_name} ({main.population_pos:,} flagged, "
        f"{main.population_neg:,} unflagged)"
    )


def _refuse_other_rounds(workbooks: Sequence[LabelingWorkbook], latest: LabelingWorkbook) -> None:
    """Refuse a workbook that is neither a copy of ``latest`` nor an earlier draw of its
    round: one with items outside the round's sample, or a copy of the same size drawn
    from another list. A seed reused every month draws overlapping samples from lists that
    keep their ids, and last month's labels filled this month's empty cells (fuzz 18)."""
    in_sample = {place.id for place in latest.sample}
    drawn_before = {place.id for place in latest.sample if not place.in_workbook}
    for book in workbooks:
        if book is latest:
            continue
        if len(book.sample) < len(latest.sample):
            # An earlier draw of the round holds only items the latest drew before it:
            # last month's smaller sample could lie wholly inside this month's larger one
            # (review 18).
            outside = [item.id for item in book.items if item.id not in drawn_before]
        else:
            outside = [item.id for item in book.items if item.id not in in_sample]
        other_list = len(book.sample) == len(latest.sample) and (
            book.design.file_sha256 != latest.design.file_sha256
            or [(d.population_pos, d.population_neg) for d in book.design.designs]
            != [(d.population_pos, d.population_neg) for d in latest.design.designs]
        )
        if not outside and not other_list:
            continue
        among = (
            "among that round's items drawn before it"
            if len(book.sample) < len(latest.sample)
            else "in that round's sample"
        )
        why = (
            f"{len(outside):,} of its items are not {among} "
            f"({', '.join(repr(item_id) for item_id in outside[:_SHOWN])}"
            f"{', ...' if len(outside) > _SHOWN else ''})"
            if outside
            else "it was drawn from another item list"
        )
        raise LabelingError(
            f"{book.path.name} is not a copy or an earlier draw of the round of "
            f"{latest.path.name}: {why}. {book.path.name} was drawn from {_drawn_from(book)}, "
            f"{latest.path.name} from {_drawn_from(latest)}; give the workbooks of one "
            "round only (another month's, read on its own, is its own round)"
        )


def _refuse_repeated_files(workbooks: Sequence[LabelingWorkbook]) -> None:
    seen: dict[Path, str] = {}
    for workbook in workbooks:
        where = workbook.path.resolve()
        if where in seen:
            raise LabelingError(f"{workbook.path.name} is given twice; give each workbook once")
        seen[where] = workbook.path.name


def _merged_labels(
    workbooks: Sequence[LabelingWorkbook],
) -> tuple[dict[str, LabeledItem], dict[str, LabelingWorkbook]]:
    """Each item's label across the workbooks given, and the workbook it was taken from.

    An item may be in several of them when labelers shared the work on copies of one
    workbook: an empty cell takes the other copy's label, and ``skip`` (this labeler
    could not judge) yields to ``positive``/``negative`` (another could). Copies that say
    ``positive`` and ``negative`` for one item disagree; they are refused, every such item
    named, since which label is right is the lead's call.
    """
    rank = {None: 0, "skip": 1, "positive": 2, "negative": 2}
    labels: dict[str, LabeledItem] = {}
    source: dict[str, LabelingWorkbook] = {}
    disagreements: list[str] = []
    for workbook in workbooks:
        for item in workbook.items:
            held = labels.get(item.id)
            if held is None or rank[item.label] > rank[held.label]:
                labels[item.id] = item
                source[item.id] = workbook
            elif rank[item.label] == rank[held.label] == 2 and item.label != held.label:
                disagreements.append(
                    f"{item.id!r} ({held.label} in {source[item.id].path.name} row {held.row}, "
                    f"{item.label} in {workbook.path.name} row {item.row})"
                )
    if disagreements:
        # What to do first: the app's box and a narrow terminal cut long messages, and the
        # advice was cut off after the fifth item (trial 14).
        shown = "; ".join(disagreements[:_SHOWN])
        raise LabelsDisagree(
            f"the workbooks disagree on {_items(len(disagreements))}; {LabelsDisagree.SETTLE}: "
            f"{shown}{'; ...' if len(disagreements) > _SHOWN else ''}",
            disagreements,
        )
    return labels, source


def _stratum_for(item: SamplePlace, index: int, name: str) -> str | None:
    if index == 0:
        return item.stratum
    for membership in item.memberships:
        if membership.classifier == name:
            return membership.stratum
    return None


__all__ += ["WorkbookError", "app_version"]
