"""``prplanner select``: draw a labeling round's sample from an item list.

::

    prplanner select ITEMS --n-pos N1 --n-neg N0 [--seed S] [--id COL]
                     [--predicted COL | --score COL --threshold T] [--classifiers C1,C2]
                     [--keep COLS] [--extend SHEET.xlsx] [--category TEXT] [--file-under NAME]
                     [--round-date YYYY-MM-DD]
                     [--show-strata]
                     [--margin B | --margin-precision BP --margin-recall BR] [--confidence C]
                     -o SHEET.xlsx [--json]
    prplanner select ITEMS --sql duckdb|bigquery|spark|postgres --n-pos N1 --n-neg N0 --seed S
                     [--table NAME] [...]

JSON keys (the contract): ``seed, population_pos, population_neg, n_pos, n_neg,
file_sha256, sample: [{id, stratum, rank}]`` (stratum ``"pos"``/``"neg"``, rank from 1 in
key order), then ``output`` (the workbook written), ``seed_drawn`` and ``targets``
(``{margin_precision, margin_recall, confidence}`` recorded in the workbook, or null). With
``--classifiers`` every sample entry also has ``classifiers: {name: {stratum, rank}}`` and
the document a ``classifiers`` list of designs. With ``--extend`` the sizes are the new
totals and ``sample`` lists only the items added. With ``--sql`` the document is ``dialect,
table, seed, n_pos, n_neg, sql``; the text output is the query alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from core.cli.output import (
    add_json_flag,
    day,
    number,
    refuse_text_table,
    score_threshold,
    whole,
)
from core.errors import InputError

if TYPE_CHECKING:
    from core.round_targets import Targets
    from core.selection import SampleQuery
    from core.workbook.labeling import DrawnSample

HELP = "Draw a labeling round's sample from an item list and write the labeling workbook."


def _column_list(text: str) -> tuple[str, ...]:
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated column names, got {text!r}")
    return names


def add_column_flags(parser: argparse.ArgumentParser) -> None:
    """The flags naming an item list's columns (``select`` and ``count`` share them)."""
    parser.add_argument("--id", metavar="COL", default=None, help="item id column")
    parser.add_argument(
        "--predicted", metavar="COL", default=None, help="predicted label column (1/0, yes/no, ...)"
    )
    parser.add_argument(
        "--score", metavar="COL", default=None, help="score column, cut at --threshold"
    )
    parser.add_argument(
        "--threshold",
        type=score_threshold,
        default=None,
        metavar="T",
        help="items with score >= T are predicted positive",
    )
    parser.add_argument(
        "--classifiers",
        type=_column_list,
        default=(),
        metavar="C1,C2",
        help="flag columns of further classifiers of the same category (model versions, an "
        "ensemble's members): each gets a coordinated sample, judged by the same one label "
        "per item",
    )


def add_items_argument(parser: argparse.ArgumentParser) -> None:
    """The item list argument (``select`` and ``count`` share it)."""
    parser.add_argument(
        "items",
        metavar="ITEMS",
        type=Path,
        help="item list: .csv, .tsv, .parquet or .xlsx with one row per item",
    )


def configure(parser: argparse.ArgumentParser) -> None:
    add_items_argument(parser)
    parser.add_argument(
        "--n-pos", type=whole, required=True, metavar="N1", help="predicted positives to label"
    )
    parser.add_argument(
        "--n-neg", type=whole, required=True, metavar="N0", help="predicted negatives to label"
    )
    parser.add_argument(
        "--seed",
        type=whole,
        default=None,
        metavar="S",
        help="seed of the selection rule (default: a random one, reported)",
    )
    add_column_flags(parser)
    parser.add_argument(
        "--keep",
        type=_column_list,
        default=None,
        metavar="COLS",
        help="columns copied to the labeling sheet (e.g. subject,link); a top-up keeps the "
        "earlier workbook's by default",
    )
    parser.add_argument(
        "--extend",
        type=Path,
        default=None,
        metavar="SHEET.xlsx",
        help="top up this labeling workbook: --n-pos/--n-neg are the new totals; only new "
        "items are written",
    )
    parser.add_argument(
        "--category",
        default=None,
        metavar="TEXT",
        help="what the labelers decide, e.g. 'card fraud': named in their instructions "
        "and recorded in the workbook; also the round's classifier when its labels are read "
        "back, unless --file-under names it; a top-up keeps the earlier workbook's",
    )
    parser.add_argument(
        "--file-under",
        default=None,
        metavar="NAME",
        help="the classifier the round is filed under when its labels are read back (the "
        "app, labels --append-to), e.g. fraud_model_v3: its name in your rounds workbook "
        "(default: --category); the labelers do not see it",
    )
    parser.add_argument(
        "--round-date",
        type=day,
        default=None,
        metavar="YYYY-MM-DD",
        help="the date the round stands for in your rounds workbook and the History tab, "
        "e.g. the last day of the month the item list covers (default: the day of the "
        "draw); a top-up keeps the earlier workbook's",
    )
    parser.add_argument(
        "--show-strata",
        action="store_true",
        help="show each item's stratum to the labelers (default: blind labeling)",
    )
    parser.add_argument(
        "-o", "--output", type=Path, default=None, metavar="SHEET.xlsx", help="workbook to write"
    )
    parser.add_argument(
        "--sql",
        choices=("duckdb", "bigquery", "spark", "postgres"),
        default=None,
        help="print the query that draws the same sample in this engine instead",
    )
    parser.add_argument(
        "--table",
        default="items",
        metavar="NAME",
        help="table the --sql query reads (default: items)",
    )
    add_target_flags(
        parser,
        "target margins the round is drawn for (recorded in the workbook: labels then says "
        "whether the round met them without being told again; a top-up keeps the earlier "
        "workbook's)",
        "confidence level of the targets, in (0.5, 1) (default 0.95; a top-up: the level the "
        "earlier workbook records)",
    )
    add_json_flag(parser)


def add_target_flags(parser: argparse.ArgumentParser, title: str, confidence_help: str) -> None:
    """``--margin``, ``--margin-precision``/``--margin-recall`` and ``--confidence``
    (``select`` records them, ``labels`` judges by them); all default to None (not given)."""
    targets = parser.add_argument_group(title)
    targets.add_argument(
        "--margin", type=number, metavar="B", help="target margin for both metrics (e.g. 0.05)"
    )
    targets.add_argument(
        "--margin-precision", type=number, metavar="BP", help="target margin for precision"
    )
    targets.add_argument(
        "--margin-recall", type=number, metavar="BR", help="target margin for recall"
    )
    targets.add_argument(
        "--confidence",
        type=number,
        default=None,
        metavar="C",
        help=confidence_help,
    )


def resolve_targets(args: argparse.Namespace, recorded: Targets | None = None) -> Targets | None:
    """The target margins the flags give, each margin or level not given taken from the
    ``recorded`` targets (a workbook's), else 0.05 and 0.95; None when no margin flag is
    given and nothing is recorded."""
    from core.cli.output import confidence_flag
    from core.cli.plan import margin_targets
    from core.round_targets import Targets

    given = (args.margin, args.margin_precision, args.margin_recall)
    if all(value is None for value in given) and recorded is None:
        return None
    if recorded is None:
        precision, recall = margin_targets(args)
        confidence = 0.95
    else:
        precision, recall = margin_targets(
            args, (recorded.margin_precision, recorded.margin_recall)
        )
        confidence = recorded.confidence
    if args.confidence is not None:
        confidence = confidence_flag(args.confidence)
    return Targets(margin_precision=precision, margin_recall=recall, confidence=confidence)


def item_columns(args: argparse.Namespace, design=None):
    from core.items import ItemColumns

    predicted, score, threshold = args.predicted, args.score, args.threshold
    for flag, value in (("--id", args.id), ("--predicted", predicted), ("--score", score)):
        if value is not None and not value.strip():
            raise InputError(f"{flag} needs a column name, got an empty one")
    classifiers = tuple(args.classifiers)
    identifier = args.id
    if design is not None:
        primary = design.primary
        identifier = identifier or design.id_column
        if predicted is None and score is None:
            if primary.name != primary.column and " >= " in primary.name:
                score = primary.column
                threshold = float(primary.name.rpartition(" >= ")[2])
            else:
                predicted = primary.column
        classifiers = classifiers or tuple(item.column for item in design.designs[1:])
    return ItemColumns(
        id=identifier,
        predicted=predicted,
        score=score,
        threshold=threshold,
        classifiers=classifiers,
        keep=tuple(getattr(args, "keep", None) or ()),
    )


def say_id_column(given: str | None, column: str | None) -> None:
    """Name the id column on stderr when it was neither given nor an alias: the one column
    named like an id (``Transaction ID``)."""
    from core.items import id_found_by_alias

    if given is None and column and not id_found_by_alias(column):
        print(
            f"note: item ids read from column {column!r}, the one named like an id "
            "(--id COL names another)",
            file=sys.stderr,
        )


def run(args: argparse.Namespace) -> DrawnSample | SampleQuery:
    from core.items import open_items
    from core.selection import SampleQuery, extend_sample, sample_sql, select_sample

    if args.sql is not None:
        if args.seed is None:
            raise InputError("--sql needs --seed S: the query must draw a known sample")
        if args.output is not None or args.extend is not None:
            raise InputError("--sql prints a query; it writes no workbook (drop -o/--extend)")
        if resolve_targets(args) is not None or args.confidence is not None:
            raise InputError(
                "--sql prints a query; the target margins are recorded in a labeling "
                "workbook, which it does not write (drop --margin/--confidence)"
            )
        with open_items(args.items, item_columns(args)) as table:
            text = sample_sql(
                args.sql,
                table.columns,
                seed=args.seed,
                n_pos=args.n_pos,
                n_neg=args.n_neg,
                table=args.table,
                primary_name=table.primary_name,
            )
        return SampleQuery(
            dialect=args.sql,
            table=args.table,
            seed=args.seed,
            n_pos=args.n_pos,
            n_neg=args.n_neg,
            sql=text,
        )
    if args.output is None:
        raise InputError("-o SHEET.xlsx is required: the labeling workbook to write")
    if args.output.suffix.casefold() != ".xlsx":
        raise InputError(f"-o must name an .xlsx workbook, got {args.output.name}")
    from core.workbook.labeling import (
        DrawnSample,
        read_labeling_workbook,
        write_labeling_workbook,
    )

    sources = [args.items] + ([args.extend] if args.extend is not None else [])
    from core.workbook.safe_io import check_destination

    # Refuse a destination that may not be written before the (long) draw, not after.
    check_destination(args.output, sources=sources, purpose="labels")
    targets = resolve_targets(args)  # checked before the draw; a top-up's fills in below
    if targets is None and args.confidence is not None and args.extend is None:
        raise InputError(
            "--confidence is the level of the target margins: give --margin (or "
            "--margin-precision/--margin-recall) with it"
        )
    if args.extend is not None:
        refuse_text_table(
            args.extend, "--extend takes the labeling workbook (.xlsx) prplanner select wrote"
        )
        earlier = read_labeling_workbook(args.extend)
        design = earlier.design
        if args.keep is None:  # the labelers of a top-up see what they saw before
            args.keep = earlier.kept_columns
        if args.category is None:
            args.category = design.category
        if args.file_under is None:
            args.file_under = design.classifier
        if args.round_date is None:
            args.round_date = design.round_date
        elif design.round_date is not None and args.round_date != design.round_date:
            # One round, one date: the top-up's would count when read alone (review 16).
            raise InputError(
                f"--round-date {args.round_date} differs from the date of {args.extend.name} "
                f"({design.round_date}); a top-up belongs to the round it tops up (leave "
                "--round-date out)"
            )
        # The round is still drawn for the targets recorded, except what the flags change.
        targets = resolve_targets(args, design.targets)
        if targets is None and args.confidence is not None:
            raise InputError(
                f"--confidence is the level of the target margins, and {args.extend.name} "
                "records none: give --margin (or --margin-precision/--margin-recall) with it"
            )
        if args.seed is not None and args.seed != design.seed:
            raise InputError(
                f"--seed {args.seed} differs from the seed of {args.extend.name} "
                f"({design.seed}); a top-up uses the earlier seed (leave --seed out)"
            )
        selection = extend_sample(
            args.items,
            item_columns(args, design),
            seed=design.seed,
            previous_ids=[place.id for place in earlier.sample],
            previous_sizes={item.name: (item.n_pos, item.n_neg) for item in design.designs},
            n_pos=args.n_pos,
            n_neg=args.n_neg,
            previous_file=(design.file_name, design.file_sha256),
        )
    else:
        selection = select_sample(
            args.items, item_columns(args), n_pos=args.n_pos, n_neg=args.n_neg, seed=args.seed
        )
    say_id_column(args.id, selection.columns.id)
    if selection.seed_drawn and not args.json:
        print(f"note: no --seed given; drew seed {selection.seed}", file=sys.stderr)
    empty = [
        stratum
        for stratum, drawn in (
            ("flagged", selection.primary.n_pos),
            ("unflagged", selection.primary.n_neg),
        )
        if drawn == 0
    ]
    if empty and not args.json:
        # Its labels can never be evaluated, and labels said only "each stratum needs at
        # least one item labeled", which no labeling can fix (fuzz 18).
        flag = "--n-pos" if empty[0] == "flagged" else "--n-neg"
        # Precision needs flagged items only; recall needs both strata (review 18).
        lost = "precision and recall" if empty[0] == "flagged" else "recall"
        print(
            f"note: no {empty[0]} items are drawn, so the round's {lost} cannot be worked "
            f"out from its labels; a top-up (prplanner select ... {flag} N --extend "
            f"{args.output.name}) adds some",
            file=sys.stderr,
        )
    if not selection.columns.keep and not args.json:
        print(
            "note: the labelers see only the item ids; --keep COLUMN,... adds the columns "
            "they need to judge an item (a subject, a link)",
            file=sys.stderr,
        )
    if args.category and not args.json:
        from core.workbook.labeling import MAX_CATEGORY_LENGTH, clean_category

        if len(" ".join(args.category.split())) > MAX_CATEGORY_LENGTH:
            shown = clean_category(args.category)
            print(
                f"note: --category is cut to its first {MAX_CATEGORY_LENGTH} characters "
                f"({shown[:40]}...): it names what the labelers decide, not how",
                file=sys.stderr,
            )
    written = write_labeling_workbook(
        args.output,
        selection,
        sources=sources,
        blind=not args.show_strata,
        targets=targets,
        category=args.category or "",
        classifier=args.file_under or "",
        round_date=args.round_date,
    )
    return DrawnSample(selection=selection, path=written, targets=targets)


def format_text(drawn: DrawnSample | SampleQuery) -> str:
    from core.selection import SampleQuery

    if isinstance(drawn, SampleQuery):
        return drawn.sql.rstrip("\n")
    selection = drawn.selection
    lines = [
        f"seed              {selection.seed}" + ("  (drawn)" if selection.seed_drawn else ""),
        f"population        {selection.population_pos:,} predicted positive, "
        f"{selection.population_neg:,} predicted negative",
        f"sample            {selection.n_pos:,} predicted positive + {selection.n_neg:,} "
        "predicted negative",
    ]
    earlier = len(selection.previous_ids)
    if earlier:
        lines.append(
            f"top-up            {len(selection.items):,} new items ({earlier:,} drawn before)"
        )
    for design in selection.classifiers:
        lines.append(
            f"classifier        {design.name}: {design.population_pos:,} / "
            f"{design.population_neg:,} items, sample {design.n_pos:,} + {design.n_neg:,}"
        )
    if selection.classifiers:
        # Labels are shared item by item: one label must answer every classifier's question.
        lines.append(
            "one label         the editors give each item one label, and every classifier "
            "above is judged by it: list only classifiers of the same category (model "
            "versions, an ensemble's members); one of another category needs a draw of its own"
        )
    extra = sum(item.stratum is None for item in selection.items)
    if extra:  # a plan counts the main classifier's sample; say where the rest come from
        lines.append(
            f"items to label    {len(selection.items):,} ({len(selection.items) - extra:,} "
            f"of the main classifier's sample, {extra:,} more that only the other "
            "classifiers' samples hold)"
        )
    else:
        lines.append(f"items to label    {len(selection.items):,}")
    if drawn.targets is not None:
        lines.append(f"target margins    {drawn.targets.in_words()} (labels checks the round)")
    lines.append(f"item file SHA-256 {selection.file_sha256}")
    lines.append(f"written           {drawn.path}")
    lines.append(
        f"reproduce with    --seed {selection.seed} (same file, same sizes: the same items)"
    )
    return "\n".join(lines)
