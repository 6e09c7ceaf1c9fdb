"""Drawing the sample of a labeling round by the product's selection rule.

The rule (the product's contract):

* each item gets a key, the SHA-256 hex digest of the UTF-8 text ``f"{seed}:{item_id}"``,
  where ``item_id`` is the id as text exactly as in the file with surrounding spaces
  (:data:`SPACES`: the space and Unicode's other spaces, no-break space among them)
  removed and ``seed`` is a whole number >= 0 (:func:`item_key`);
* within each stratum (predicted positive, predicted negative) items are ordered by key
  ascending; the sample of a stratum is its first ``n`` items in that order.

What follows from it (and is tested):

* the sample does not depend on the file's row order;
* a bigger sample contains the smaller one: a top-up takes the next items in key order
  and the union is again exactly the rule's sample (:func:`extend_sample`);
* any prefix is a simple random sample without replacement of its stratum (the keys of
  distinct ids behave as independent uniform draws);
* with one seed, several classifiers get coordinated samples: an item in two classifiers'
  predicted-positive sets has one key, so their samples overlap as much as chance allows
  and its label is shared by item id (label recycling at the item level).

:func:`select_sample` computes the keys and the first ``n`` per stratum inside DuckDB in
one scan of the file, with the population counts and every check of the rows.
:func:`sample_sql` prints the one query that draws the same sample in DuckDB, BigQuery,
Spark SQL or PostgreSQL, for populations that live in a warehouse.

A whole round through the API (what ``prplanner select`` and ``prplanner labels`` do; every
long step takes an optional :class:`core.progress.TaskControl` for progress and cancel, and
every result is a frozen dataclass):

1. :func:`core.items.count_items` -> :class:`core.items.ItemSummary`: population per
   stratum (and per classifier), every row checked; offer it as the plan's population;
2. :func:`select_sample` (or :func:`extend_sample` for a top-up) -> :class:`Selection`;
3. :func:`core.workbook.labeling.write_labeling_workbook` writes the labelers' workbook;
4. :func:`core.workbook.labeling.read_labeling_workbook` then
   :func:`core.workbook.labeling.count_labels` -> one
   :class:`core.workbook.labeling.ClassifierLabels` per classifier, whose ``matrix`` and
   ``population`` go to :func:`core.evaluation.evaluate`;
5. :func:`core.workbook.append_round.append_round` adds the round to the lead's rounds
   workbook.

References
----------
* Ohlsson 1995 (coordinated samples from permanent random numbers); NIST FIPS 180-4
  (SHA-256).
Full entries: docs/methods.md, References.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import secrets
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from core import progress
from core.errors import InputError, named
from core.items import (
    NEGATIVE_WORDS,
    POSITIVE_WORDS,
    ClassifierCount,
    ItemColumns,
    ItemListError,
    ItemTable,
    open_items,
    population_aggregates,
    read_population,
)

__all__ = [
    "DIALECTS",
    "RULE",
    "SPACES",
    "ClassifierDesign",
    "Membership",
    "SampledItem",
    "Selection",
    "draw_seed",
    "extend_sample",
    "item_key",
    "rule_sample",
    "sample_sql",
    "select_sample",
]

#: The rule in one sentence, as the Design sheet records it.
RULE = (
    "key = SHA-256 hex digest of the UTF-8 text '<seed>:<item id>' (id as in the file, "
    "surrounding spaces removed, no-break and other Unicode spaces too); in each stratum "
    "(predicted positive, predicted negative) items are ordered by key ascending and the "
    "sample is the first n"
)
#: The rule's text in workbooks drawn before it named the Unicode spaces; the same rule
#: (DuckDB's trim() always removed them), so those workbooks read as ever.
EARLIER_RULES = (
    "key = SHA-256 hex digest of the UTF-8 text '<seed>:<item id>' (id as in the file, "
    "surrounding spaces removed); in each stratum (predicted positive, predicted negative) "
    "items are ordered by key ascending and the sample is the first n",
)
#: The spaces the rule removes around an id: Unicode's space separators (category Zs),
#: what DuckDB's one-argument trim() removes. An id exported with a trailing no-break space
#: (from HTML or Excel) was drawn without it, while the printed warehouse queries and
#: item_key kept it: another sample (fuzz 16).
SPACES = (
    " \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u202f\u205f\u3000"
)
#: Engines :func:`sample_sql` writes for.
DIALECTS = ("duckdb", "bigquery", "spark", "postgres")
#: A drawn seed is below this (nine digits: easy to read out and type).
SEED_LIMIT = 10**9
#: Longest seed taken as text (a Design sheet's): the command line takes at most 10^15.
MAX_SEED_DIGITS = 16
Stratum = Literal["pos", "neg"]


def validate_seed(seed: object, name: str | None = None) -> int:
    """A whole number >= 0 (``"0042"`` is 42: the rule uses the number's decimal text)."""
    name = named("seed") if name is None else name
    if isinstance(seed, bool):
        raise InputError(f"{name} must be a whole number >= 0, got {seed!r}")
    if isinstance(seed, str):
        text = seed.strip()
        if not text.isdigit():
            raise InputError(f"{name} must be a whole number >= 0, got {seed!r}")
        # int() of 4,301 digits raises (fuzz 14); the command line draws with seeds of at
        # most 10^15, so a longer one in a Design sheet was edited there (recheck 14).
        if len(text.lstrip("0")) > MAX_SEED_DIGITS or int(text) > 10**15:
            raise InputError(
                f"{name} must be a whole number of at most 10^15, got one of {len(text):,} digits"
            )
        return int(text)
    if isinstance(seed, float) and seed.is_integer():
        seed = int(seed)
    if not isinstance(seed, int) or seed < 0:
        raise InputError(f"{name} must be a whole number >= 0, got {seed!r}")
    if seed > 10**15:
        # Drawn with, it gave a workbook its Design sheet could not be read back from
        # (fuzz 15): refused before anything is written.
        raise InputError(f"{name} must be a whole number of at most 10^15, got {seed:,}")
    return seed


def draw_seed() -> int:
    """A fresh seed from the operating system's randomness (reported, so reproducible)."""
    return secrets.randbelow(SEED_LIMIT)


def item_key(seed: int, item_id: str) -> str:
    """The rule's key: SHA-256 hex digest of ``f"{seed}:{item_id}"`` (id stripped of
    :data:`SPACES`)."""
    return hashlib.sha256(f"{seed}:{item_id.strip(SPACES)}".encode()).hexdigest()


def rule_sample(ids: Sequence[str], seed: int, n: int) -> list[str]:
    """The first ``n`` of one stratum's ``ids`` in key order (small lists, in Python)."""
    return sorted((item.strip(SPACES) for item in ids), key=lambda item: item_key(seed, item))[:n]


# --- results -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ClassifierDesign(ClassifierCount):
    """One classifier's stratified design: its population counts
    (:class:`core.items.ClassifierCount`) and the sample drawn from each stratum.

    Attributes
    ----------
    n_pos, n_neg : int
        Sample sizes ``n1``, ``n0`` (the first ``n`` of each stratum in key order).
    """

    n_pos: int
    n_neg: int

    @classmethod
    def of(cls, count: ClassifierCount, *, n_pos: int, n_neg: int) -> ClassifierDesign:
        """The design drawing ``n_pos`` and ``n_neg`` items from ``count``'s strata."""
        return cls(
            name=count.name,
            column=count.column,
            population_pos=count.population_pos,
            population_neg=count.population_neg,
            n_pos=n_pos,
            n_neg=n_neg,
        )

    def to_dict(self) -> dict[str, object]:
        """The counts' fields, then the sample sizes (a ``classifiers`` entry of the JSON)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class Membership:
    """An item's place in one further classifier's sample: stratum and rank (from 1)."""

    classifier: str
    stratum: Stratum
    rank: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SampledItem:
    """One item to label.

    Attributes
    ----------
    id : str
        The item id (surrounding spaces removed).
    key : str
        Its key under the rule (:func:`item_key`).
    stratum : {"pos", "neg"} or None
        Its stratum for the main classifier; ``None`` when only a further classifier's
        sample holds it.
    rank : int or None
        Its rank in that stratum, from 1 in key order.
    memberships : tuple of Membership
        Its strata and ranks in the further classifiers' samples that hold it.
    kept : tuple of (str or None)
        Values of the kept columns, in :attr:`Selection.kept_columns` order.
    """

    id: str
    key: str
    stratum: Stratum | None
    rank: int | None
    memberships: tuple[Membership, ...] = ()
    kept: tuple[str | None, ...] = ()

    def to_dict(self, with_classifiers: bool = False) -> dict[str, object]:
        result: dict[str, object] = {"id": self.id, "stratum": self.stratum, "rank": self.rank}
        if with_classifiers:
            result["classifiers"] = {
                item.classifier: {"stratum": item.stratum, "rank": item.rank}
                for item in self.memberships
            }
        return result


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """A drawn sample and everything needed to reproduce it.

    Attributes
    ----------
    seed : int
        The rule's seed.
    seed_drawn : bool
        ``True`` when no seed was given and one was drawn.
    file_name, file_sha256 : str
        The item list and the SHA-256 of its bytes.
    columns : ItemColumns
        The columns used (id, prediction or score and threshold, classifiers, kept).
    primary : ClassifierDesign
        The main classifier's design (its ``n_pos``/``n_neg`` are the totals).
    classifiers : tuple of ClassifierDesign
        The further classifiers' coordinated designs.
    items : tuple of SampledItem
        The items to label in this workbook, in key order. After :func:`extend_sample`,
        only the items not drawn before.
    previous_ids : frozenset of str
        Items drawn before (an extension); empty for a first draw.
    earlier : tuple of SampledItem
        Those earlier items with their places in the bigger sample (a further classifier's
        top-up may now hold an item drawn before), in key order.
    """

    seed: int
    seed_drawn: bool = False
    file_name: str
    file_sha256: str
    columns: ItemColumns
    primary: ClassifierDesign
    classifiers: tuple[ClassifierDesign, ...] = ()
    items: tuple[SampledItem, ...]
    previous_ids: frozenset[str] = field(default_factory=frozenset)
    earlier: tuple[SampledItem, ...] = ()

    @property
    def population_pos(self) -> int:
        return self.primary.population_pos

    @property
    def population_neg(self) -> int:
        return self.primary.population_neg

    @property
    def n_pos(self) -> int:
        return self.primary.n_pos

    @property
    def n_neg(self) -> int:
        return self.primary.n_neg

    @property
    def kept_columns(self) -> tuple[str, ...]:
        return self.columns.keep

    def designs(self) -> tuple[ClassifierDesign, ...]:
        """The main classifier's design, then the further classifiers'."""
        return (self.primary, *self.classifiers)

    def to_dict(self) -> dict[str, object]:
        """The ``prplanner select --json`` document."""
        result: dict[str, object] = {
            "seed": self.seed,
            "population_pos": self.population_pos,
            "population_neg": self.population_neg,
            "n_pos": self.n_pos,
            "n_neg": self.n_neg,
            "file_sha256": self.file_sha256,
            "sample": [item.to_dict(bool(self.classifiers)) for item in self.items],
        }
        if self.classifiers:
            result["classifiers"] = [design.to_dict() for design in self.classifiers]
        return result


# --- drawing -------------------------------------------------------------------------------


#: The most items one draw takes from a stratum: DuckDB's ``arg_min(..., n)`` keeps fewer
#: than a million, and a million labels are more than any labeling round (999,999 took
#: 257 s and 3.7 GB; fuzz 15).
MAX_STRATUM_SAMPLE = 999_999


def _check_sizes(n_pos: int, n_neg: int) -> tuple[int, int]:
    for name, value in ((named("n_pos"), n_pos), (named("n_neg"), n_neg)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InputError(f"{name} must be a whole number >= 0, got {value!r}")
        if value > MAX_STRATUM_SAMPLE:
            raise InputError(
                f"{name} {value:,} is more than a draw takes from one stratum "
                f"({MAX_STRATUM_SAMPLE:,} items, far more than a labeling round needs); "
                "ask for fewer"
            )
    if n_pos + n_neg == 0:
        raise InputError(
            f"{named('n_pos')} and {named('n_neg')} are both 0: there is nothing to draw"
        )
    return n_pos, n_neg


def _sample_aggregates(table: ItemTable, n_pos: int, n_neg: int) -> list[str]:
    """``arg_min`` of each stratum of each classifier: the first n rows by key."""
    payload = ["item_id := item_id", "sample_key := sample_key"]
    payload += [f"k{index} := k{index}" for index in range(len(table.columns.keep))]
    packed = f"struct_pack({', '.join(payload)})"
    flags = ["primary_flag"] + [f"c{index}" for index in range(len(table.columns.classifiers))]
    parts = []
    for flag in flags:
        for n, condition in ((n_pos, flag), (n_neg, f"NOT {flag}")):
            if n == 0:
                parts.append("NULL")
            else:
                parts.append(f"arg_min({packed}, sample_key, {n}) FILTER (WHERE {condition})")
    return parts


def _refuse_too_large(file_name: str, name: str, n: int, population: int, stratum: str) -> None:
    flag = named("n_pos") if stratum == "positive" else named("n_neg")
    raise ItemListError(
        f"{flag} {n:,} is larger than the predicted-{stratum} stratum of {name!r} in "
        f"{file_name} ({population:,} items); label at most {population:,} (all of them)"
    )


def select_sample(
    path: str | os.PathLike[str],
    columns: ItemColumns | None = None,
    *,
    n_pos: int,
    n_neg: int,
    seed: int | None = None,
    control: progress.TaskControl | None = None,
) -> Selection:
    """Draw the rule's sample of ``n_pos`` predicted positives and ``n_neg`` predicted
    negatives (for every classifier) from an item list.

    Parameters
    ----------
    path : str or path-like
        The item list (``.csv``, ``.tsv``, ``.parquet``, ``.xlsx``).
    columns : ItemColumns, optional
        Column names; unnamed id and prediction columns are found by alias.
    n_pos, n_neg : int
        Sample sizes per stratum, the same for every classifier.
    seed : int, optional
        The rule's seed; ``None`` draws one (:attr:`Selection.seed_drawn`).
    control : TaskControl, optional
        Progress and cancel.

    Returns
    -------
    Selection
        Items in key order; the main classifier's stratum and rank on each.

    Raises
    ------
    ItemListError
        Any refusal of the item list (see :mod:`core.items`), or a sample larger than its
        stratum.
    InputError
        A bad seed or size.
    core.progress.Cancelled
        ``control`` was cancelled.
    """
    n_pos, n_neg = _check_sizes(n_pos, n_neg)
    drawn = seed is None
    seed = draw_seed() if seed is None else validate_seed(seed)
    with open_items(path, columns, control=control) as table:
        population = population_aggregates(table)
        samples = _sample_aggregates(table, n_pos, n_neg)
        keyed = table.keyed_rows_sql()
        rows = f"SELECT *, sha256('{seed}:' || item_id) AS sample_key FROM ({keyed})"
        values, hashes = table.scan(population + samples, rows, control)
        summary = read_population(table, values[: len(population)], hashes)
        lists = values[len(population) :]
        counts = (summary.primary, *summary.classifiers)
        designs = []
        for count in counts:
            if n_pos > count.population_pos:
                _refuse_too_large(
                    table.path.name, count.name, n_pos, count.population_pos, "positive"
                )
            if n_neg > count.population_neg:
                _refuse_too_large(
                    table.path.name, count.name, n_neg, count.population_neg, "negative"
                )
            designs.append(ClassifierDesign.of(count, n_pos=n_pos, n_neg=n_neg))
        items = _assemble(designs, lists, len(table.columns.keep))
        return Selection(
            seed=seed,
            seed_drawn=drawn,
            file_name=table.path.name,
            file_sha256=table.file_sha256,
            columns=table.columns,
            primary=designs[0],
            classifiers=tuple(designs[1:]),
            items=items,
        )


def _assemble(
    designs: Sequence[ClassifierDesign], lists: Sequence[Any], kept: int
) -> tuple[SampledItem, ...]:
    """Items in key order with their strata and ranks, from the ``arg_min`` lists."""
    found: dict[str, dict] = {}
    for index, design in enumerate(designs):
        for offset, stratum in ((0, "pos"), (1, "neg")):
            rows = lists[2 * index + offset] or []
            ordered: list[dict[str, Any]] = sorted(rows, key=lambda row: row["sample_key"])
            for rank, row in enumerate(ordered, start=1):
                entry = found.setdefault(
                    row["item_id"],
                    {
                        "key": row["sample_key"],
                        "kept": tuple(row[f"k{i}"] for i in range(kept)),
                        "stratum": None,
                        "rank": None,
                        "memberships": [],
                    },
                )
                if index == 0:
                    entry["stratum"], entry["rank"] = stratum, rank
                else:
                    entry["memberships"].append(
                        Membership(classifier=design.name, stratum=stratum, rank=rank)  # type: ignore[arg-type]
                    )
    return tuple(
        SampledItem(
            id=item_id,
            key=entry["key"],
            stratum=entry["stratum"],
            rank=entry["rank"],
            memberships=tuple(entry["memberships"]),
            kept=entry["kept"],
        )
        for item_id, entry in sorted(found.items(), key=lambda pair: pair[1]["key"])
    )


def extend_sample(
    path: str | os.PathLike[str],
    columns: ItemColumns | None = None,
    *,
    seed: int,
    previous_ids: Collection[str],
    previous_sizes: Mapping[str, tuple[int, int]],
    n_pos: int,
    n_neg: int,
    control: progress.TaskControl | None = None,
    previous_file: tuple[str, str] | None = None,
) -> Selection:
    """Top up an earlier draw to the new totals ``n_pos``, ``n_neg``: the rule's bigger
    sample, of which only the items not drawn before are returned.

    Parameters
    ----------
    seed : int
        The earlier draw's seed.
    previous_ids : collection of str
        Every item the earlier draw holds.
    previous_sizes : mapping
        Classifier name -> ``(n_pos, n_neg)`` of the earlier draw.
    n_pos, n_neg : int
        The new totals (at least the earlier sizes).
    previous_file : (str, str), optional
        The earlier draw's item list name and SHA-256 (its Design sheet), so that a refusal
        can say when the list is not the one the round was drawn from.

    Raises
    ------
    InputError
        New totals smaller than the earlier ones, or an item list on which the earlier
        draw is not the rule's sample any more (items added, removed or re-labeled): the
        message names the items that no longer fit.
    """
    for name, (old_pos, old_neg) in previous_sizes.items():
        if n_pos < old_pos or n_neg < old_neg:
            raise InputError(
                f"the new totals ({named('n_pos')} {n_pos:,}, {named('n_neg')} {n_neg:,}) are "
                "smaller than the "
                f"earlier draw for {name!r} ({old_pos:,} and {old_neg:,}); give the new "
                "totals, at least the earlier sizes"
            )
    full = select_sample(path, columns, n_pos=n_pos, n_neg=n_neg, seed=seed, control=control)
    previous = frozenset(previous_ids)
    drawn = {item.id: item for item in full.items}
    missing = sorted(previous - drawn.keys())
    if missing and previous_file is not None and previous_file[1] != full.file_sha256:
        name, digest = previous_file
        raise InputError(
            f"{full.file_name} is not the item list this round was drawn from: the earlier "
            f"workbook records {name} with SHA-256 {digest[:12]}…, this file's is "
            f"{full.file_sha256[:12]}…, and {len(missing):,} item(s) of the earlier draw "
            "would no longer be in the sample. Top up from the list as it was when the round "
            "was drawn; items added since belong in a new round"
        )
    if missing:
        shown = ", ".join(repr(item) for item in missing[:5])
        head = (
            f"{len(missing):,} item(s) of the earlier draw are not in the rule's sample of "
            f"{full.file_name} for seed {seed} ({shown}{', ...' if len(missing) > 5 else ''})"
        )
        if previous_file is not None:
            # The very file (its SHA-256 was compared above), read otherwise: "the list
            # changed" would be untrue (review 20).
            raise InputError(
                f"{head}, though it is the very file the round was drawn from (the same "
                "SHA-256): its ids read differently now. Since 2026-11-27, ids shown with "
                "leading zeros (a number formatted 000388) read as shown, not as 388, and "
                "ids that are dates and times with a time zone read in UTC (before, in the "
                "computer's time zone); export the id column as text and draw a new round"
            )
        raise InputError(
            f"{head}: the item list changed (items removed or their prediction changed). "
            "Draw a new round instead of a top-up"
        )
    for index, design in enumerate(full.designs()):
        old_pos, old_neg = previous_sizes.get(design.name, (0, 0))
        for stratum, old in (("pos", old_pos), ("neg", old_neg)):
            first = {
                item.id
                for item in full.items
                if (place := _place(item, design.name, index == 0)) is not None
                and place[0] == stratum
                and place[1] <= old
            }
            wrong = sorted(first - previous)
            if wrong:
                raise InputError(
                    f"the earlier draw is not the first {old:,} items of the predicted-"
                    f"{'positive' if stratum == 'pos' else 'negative'} stratum of "
                    f"{design.name!r} in {full.file_name} (missing {wrong[0]!r}): the item "
                    "list changed since; draw a new round instead of a top-up"
                )
    new_items = tuple(item for item in full.items if item.id not in previous)
    return Selection(
        seed=full.seed,
        file_name=full.file_name,
        file_sha256=full.file_sha256,
        columns=full.columns,
        primary=full.primary,
        classifiers=full.classifiers,
        items=new_items,
        previous_ids=previous,
        earlier=tuple(item for item in full.items if item.id in previous),
    )


def _place(item: SampledItem, design: str, is_primary: bool) -> tuple[str, int] | None:
    """The item's ``(stratum, rank)`` in classifier ``design``'s sample, if it is in it."""
    if is_primary:
        if item.stratum is None or item.rank is None:
            return None
        return item.stratum, item.rank
    for membership in item.memberships:
        if membership.classifier == design:
            return membership.stratum, membership.rank
    return None


# --- the same sample in other engines ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Dialect:
    quote: str
    text_type: str
    double_type: str
    #: BigQuery escapes a backtick in a quoted name with a backslash; the others double it.
    backslash_escapes: bool = False

    def name(self, identifier: str) -> str:
        if self.backslash_escapes:
            escaped = identifier.replace("\\", "\\\\").replace(self.quote, "\\" + self.quote)
        else:
            escaped = identifier.replace(self.quote, self.quote * 2)
        return self.quote + escaped + self.quote


_DIALECTS = {
    "duckdb": _Dialect('"', "VARCHAR", "DOUBLE"),
    "bigquery": _Dialect("`", "STRING", "FLOAT64", backslash_escapes=True),
    "spark": _Dialect("`", "STRING", "DOUBLE"),
    "postgres": _Dialect('"', "text", "double precision"),
}


def _table_name(dialect: str, table: str) -> str:
    style = _DIALECTS[dialect]
    if dialect == "bigquery":  # `project.dataset.table` is quoted whole
        return style.name(table)
    return ".".join(style.name(part) for part in table.split("."))


def _trimmed_id(dialect: str, column: str) -> str:
    style = _DIALECTS[dialect]
    text = f"CAST({style.name(column)} AS {style.text_type})"
    # The rule's SPACES, written as escapes: invisible characters in a query are lost on
    # the way to the warehouse's console.
    escaped = "".join(f"\\u{ord(char):04x}" if char != " " else " " for char in SPACES)
    if dialect == "spark":
        return f"trim(BOTH '{escaped}' FROM {text})"
    if dialect == "postgres":  # a Unicode literal: U&' \00a0...'
        unicode_literal = "".join(f"\\{ord(char):04x}" if char != " " else " " for char in SPACES)
        return f"btrim({text}, U&'{unicode_literal}')"
    if dialect == "bigquery":
        return f"TRIM({text}, '{escaped}')"
    return f"trim({text})"  # DuckDB's one-argument trim removes exactly SPACES


def _text_literal(dialect: str, text: str) -> str:
    """``text`` as a string literal of ``dialect``. BigQuery and Spark read a backslash as
    an escape and refuse (or join) a doubled quote, so a column named ``Anna's model`` or
    ``fraud\\`` broke their query, the name deciding where the literal ended (fuzz 18)."""
    if dialect in ("bigquery", "spark"):
        escaped = (
            text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\r", "\\r")
        )
        return f"'{escaped}'"
    return "'" + text.replace("'", "''") + "'"


def _key_expression(dialect: str, seed: int, id_sql: str) -> str:
    text = f"'{seed}:' || {id_sql}"
    if dialect == "bigquery":
        return f"TO_HEX(SHA256({text}))"
    if dialect == "spark":
        return f"sha2(concat('{seed}:', {id_sql}), 256)"
    if dialect == "postgres":
        return f"encode(sha256(convert_to({text}, 'UTF8')), 'hex')"
    return f"sha256({text})"


def _not_finite(dialect: str, number_sql: str) -> str:
    """NaN or an infinity (a 400-digit number read as a double), as the app refuses them."""
    if dialect == "bigquery":
        return f"(IS_NAN({number_sql}) OR IS_INF({number_sql}))"
    if dialect == "postgres":  # NaN equals NaN there, and there is no isnan()
        return (
            f"{number_sql} IN ('NaN'::double precision, 'Infinity'::double precision, "
            "'-Infinity'::double precision)"
        )
    if dialect == "spark":
        return (
            f"(isnan({number_sql}) OR {number_sql} IN (CAST('Infinity' AS DOUBLE), "
            "CAST('-Infinity' AS DOUBLE)))"
        )
    return f"(isnan({number_sql}) OR isinf({number_sql}))"


def _flag_expression(dialect: str, columns: ItemColumns, column: str | None) -> str:
    style = _DIALECTS[dialect]
    if column is None:  # the score
        assert columns.score is not None and columns.threshold is not None
        score = f"CAST({style.name(columns.score)} AS {style.double_type})"
        threshold = repr(float(columns.threshold))
        # NaN is no score, nor is infinity (the app refuses both). Engines disagree on NaN:
        # DuckDB, PostgreSQL and Spark order it above every number (so NaN >= t), BigQuery
        # compares it as false (so NOT (NaN >= t)); the item would land in either stratum.
        return (
            f"CASE WHEN {_not_finite(dialect, score)} THEN NULL "
            f"WHEN {score} >= {threshold} THEN 'pos' WHEN {score} < {threshold} THEN 'neg' END"
        )
    text = f"lower(trim(CAST({style.name(column)} AS {style.text_type})))"
    words = lambda values: ", ".join(f"'{value}'" for value in values)  # noqa: E731
    return (
        f"CASE WHEN {text} IN ({words(POSITIVE_WORDS)}) THEN 'pos' "
        f"WHEN {text} IN ({words(NEGATIVE_WORDS)}) THEN 'neg' END"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class SampleQuery:
    """The query that draws the rule's sample in a warehouse (:func:`sample_sql`), with
    what it was made for."""

    dialect: str
    table: str
    seed: int
    n_pos: int
    n_neg: int
    sql: str

    def to_dict(self) -> dict[str, object]:
        """The ``prplanner select --sql --json`` document."""
        return dataclasses.asdict(self)


def sample_sql(
    dialect: str,
    columns: ItemColumns,
    *,
    seed: int,
    n_pos: int,
    n_neg: int,
    table: str = "items",
    primary_name: str | None = None,
) -> str:
    """The one query that draws the rule's sample in ``dialect``.

    It reads ``table`` (with the item list's column names) and returns the selected ids as
    its first column, then the stratum (``'pos'``/``'neg'``) and the rank in key order, the
    rows ordered by key (both strata interleaved, as on the labeling sheet). With further
    classifiers a ``classifier`` column says whose sample each row belongs to; an item in
    several samples appears once per sample.

    Parameters
    ----------
    dialect : {"duckdb", "bigquery", "spark", "postgres"}
    columns : ItemColumns
        Resolved column names (id, predicted or score and threshold, classifiers).
    seed, n_pos, n_neg : int
        As for :func:`select_sample`.
    table : str
        The table's name (dotted names are quoted part by part, whole for BigQuery).
    primary_name : str, optional
        How the main classifier is named in the ``classifier`` column.

    Returns
    -------
    str
        SQL text ending with a newline.
    """
    if dialect not in _DIALECTS:
        raise InputError(f"{named('sql')} must be one of {', '.join(DIALECTS)}, got {dialect!r}")
    if columns.id is None or (columns.predicted is None and columns.score is None):
        raise InputError("the id and prediction columns must be resolved before writing SQL")
    seed = validate_seed(seed)
    n_pos, n_neg = _check_sizes(n_pos, n_neg)
    if not table.strip():
        raise InputError(f"{named('table')} must name a table")
    style = _DIALECTS[dialect]
    id_sql = _trimmed_id(dialect, columns.id)
    designs = [(primary_name or columns.predicted or columns.score or "", columns.predicted)]
    designs += [(name, name) for name in columns.classifiers]
    several = len(designs) > 1
    flags = []
    for index, (_, column) in enumerate(designs):
        flag = _flag_expression(dialect, columns, column)
        flags.append(f"    {flag} AS stratum_{index}")
    order = 'sample_key COLLATE "C"' if dialect == "postgres" else "sample_key"
    lines = [
        f"-- PR Planner sample: seed {seed}, {n_pos} predicted positives and {n_neg} "
        "predicted negatives per classifier.",
        "-- Rule: key = SHA-256 hex of '<seed>:<item id>' (id as text, surrounding spaces "
        "removed, no-break and other Unicode spaces too);",
        "-- the first n items of each stratum in key order.",
        *(
            ["-- An item whose score is missing, not a number (NaN) or infinite is in no stratum."]
            if columns.score is not None
            else []
        ),
        "WITH keyed AS (",
        "  SELECT",
        f"    {id_sql} AS item_id,",
        f"    {_key_expression(dialect, seed, id_sql)} AS sample_key,",
        ",\n".join(flags),
        f"  FROM {_table_name(dialect, table)}",
        ")",
    ]
    selects = []
    for index, (name, _) in enumerate(designs):
        label = f"{_text_literal(dialect, name)} AS classifier, " if several else ""
        selects.append(
            f"  SELECT item_id, {label}stratum_{index} AS stratum, sample_key,\n"
            f"    ROW_NUMBER() OVER (PARTITION BY stratum_{index} ORDER BY {order})"
            " AS sample_rank\n"
            f"  FROM keyed WHERE stratum_{index} IS NOT NULL"
        )
    lines.append(", ranked AS (")
    lines.append("\n  UNION ALL\n".join(selects))
    lines.append(")")
    wanted = "classifier, stratum, sample_rank" if several else "stratum, sample_rank"
    lines.append(f"SELECT item_id, {wanted}")
    lines.append("FROM ranked")
    lines.append(
        f"WHERE (stratum = 'pos' AND sample_rank <= {n_pos}) "
        f"OR (stratum = 'neg' AND sample_rank <= {n_neg})"
    )
    lines.append(f"ORDER BY {order}{', classifier' if several else ''};")
    del style
    return "\n".join(lines) + "\n"
