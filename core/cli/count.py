"""``prplanner count``: how many items of an item list each classifier flags.

::

    prplanner count ITEMS [--id COL] [--predicted COL | --score COL --threshold T]
                    [--classifiers C1,C2] [--json]

The population a plan needs (``prplanner plan --population N_POS N_NEG``), counted with
every check ``select`` makes (ids present and unique, predictions that are labels), so a
list that counts is a list that draws. JSON keys (the contract): ``file, file_sha256, rows,
population_pos, population_neg, classifiers: [{name, column, population_pos,
population_neg, flagged_by_main}]`` (the further classifiers of ``--classifiers``;
``flagged_by_main``: how many of the items one flags the main classifier flags too, the
overlap ``prplanner ensemble`` reuses labels over).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.cli.output import add_json_flag
from core.cli.select import add_column_flags, add_items_argument, item_columns, say_id_column

if TYPE_CHECKING:
    from core.items import ItemSummary

HELP = "Count the flagged and unflagged items of an item list (the population a plan needs)."


@dataclass(frozen=True, slots=True)
class CountedItems:
    """An item list's counts and the digest that identifies it."""

    summary: ItemSummary
    file_sha256: str

    def to_dict(self) -> dict[str, object]:
        summary = self.summary
        return {
            "file": summary.file_name,
            "file_sha256": self.file_sha256,
            "rows": summary.rows,
            "population_pos": summary.population_pos,
            "population_neg": summary.population_neg,
            "classifiers": [
                {
                    "name": count.name,
                    "column": count.column,
                    "population_pos": count.population_pos,
                    "population_neg": count.population_neg,
                    "flagged_by_main": count.flagged_by_main,
                }
                for count in summary.classifiers
            ],
        }


def configure(parser: argparse.ArgumentParser) -> None:
    add_items_argument(parser)
    add_column_flags(parser)
    add_json_flag(parser)


def run(args: argparse.Namespace) -> CountedItems:
    from core.items import open_items, population_aggregates, read_population

    with open_items(args.items, item_columns(args)) as table:
        values, hashes = table.scan(population_aggregates(table), table.keyed_rows_sql(), None)
        summary = read_population(table, values, hashes)
    say_id_column(args.id, summary.id_column)
    return CountedItems(summary=summary, file_sha256=table.file_sha256)


def format_text(counted: CountedItems) -> str:
    from core.cli.output import significant

    result = counted.to_dict()
    pos, neg = result["population_pos"], result["population_neg"]
    assert isinstance(pos, int) and isinstance(neg, int)
    further = result["classifiers"]
    assert isinstance(further, list)
    main = counted.summary.primary.name
    lines = [
        f"{result['file']}: {result['rows']:,} items",
        *([f"  main classifier {main}:"] if further else []),
        f"  flagged (predicted positive)     {pos:,}",
        f"  unflagged (predicted negative)   {neg:,}",
        f"  k = N1/N0                        {significant(pos / neg)} (1/{neg / pos:.1f})",
    ]
    for item in further:
        lines.append(
            f"  classifier {item['name']}: {item['population_pos']:,} flagged "
            f"({item['flagged_by_main']:,} of them flagged by {main} too), "
            f"{item['population_neg']:,} unflagged"
        )
    lines.append("")
    # --fpc: select draws without replacement from this very list, so the correction is
    # exact, as labels (which applies it by default) will judge the round.
    whose = (
        f" (sizes for the main classifier, {main}; the draw gives every classifier "
        "samples of these sizes)"
        if further
        else ""
    )
    lines.append(
        f"plan with: prplanner plan --population {pos} {neg} --precision P --recall R "
        f"--margin B --fpc{whose}"
    )
    for item in further:
        # Each further classifier's precision from the main classifier's labels plus its
        # own: the Ensemble tab's question, with these sizes.
        lines.append(
            f"labels {item['name']} needs beyond {main}'s: prplanner ensemble --parent-size "
            f"{pos} --child-size {item['population_pos']} --overlap {item['flagged_by_main']}"
        )
    return "\n".join(lines)
