"""``replicate draw``: the item sample of a study, seeded, stratified and recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from replicate.cli.base import FormatOpt, app, emit
from replicate.output import Format


@app.command("draw")

def draw_cmd(
    items: Annotated[Path, typer.Argument(metavar="ITEMS.jsonl", help="The items file to draw from (as 'replicate collect' reads it).", show_default=False)],
    n: Annotated[int, typer.Option("--n", "-n", metavar="N", help="How many items to draw.", show_default=False)],
    out: Annotated[Path, typer.Option("--out", "-o", metavar="OUT.jsonl", help="Where the drawn items go (their lines as in the source, in its order); the draw's record goes to OUT.jsonl.draw.json.", show_default=False)],
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draw; recorded.")] = 0,
    strata: Annotated[Optional[str], typer.Option("--strata", metavar="FIELD", help="Stratify by this field (top level, else in the item's metadata), allocating in proportion to each value's items.")] = None,
    where: Annotated[Optional[list[str]], typer.Option("--where", metavar="FIELD=VALUE", help="Draw only from the items whose FIELD is VALUE, e.g. benchmark=omni-math or difficulty=hard; repeatable (all must hold).")] = None,
    id_field: Annotated[str, typer.Option("--id-field", metavar="FIELD", help="The field naming each item (unique).")] = "id",
    force: Annotated[bool, typer.Option("--force", help="Overwrite OUT and its record if they exist.")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Draw a study's item sample: seeded, stratified by a metadata field, written with its seed and source hash.

    Proportional allocation over the strata by largest remainder; within each stratum a simple random sample
    without replacement from numpy's default generator seeded with --seed. OUT holds the drawn lines byte for
    byte; OUT.draw.json the source's path and sha256, the filters, the strata, the seed, every stratum's size
    and draw, the ids and the command that draws the same sample again.
    """
    from replicate.trials.draw import draw_items, parse_where, render_draw, write_draw

    result, data = draw_items(items, n=n, seed=seed, strata=strata, where=parse_where(where or ()), id_field=id_field)
    done = write_draw(result, data, out, force=force)
    emit(done, fmt, text=lambda: render_draw(done, fmt))
