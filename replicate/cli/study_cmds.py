"""``replicate draw``: the item sample of a study, seeded, stratified and recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from replicate.cli.base import FormatOpt, app, emit, flags
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
    force: Annotated[bool, typer.Option("--force", help="Replace OUT and its record even when they are not an earlier draw's output.")] = False,
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


@app.command("regrade")
@flags(half_width="--precision", metrics="--metric")
def regrade_cmd(
    old: Annotated[str, typer.Argument(metavar="OLD", help="The judge swapped out: a run named in --runs or a file.", show_default=False)],
    new: Annotated[str, typer.Argument(metavar="NEW", help="The judge swapped in: a run named in --runs or a file.", show_default=False)],
    runs_file: Annotated[Optional[Path], typer.Option("--runs", metavar="RUNS.toml", help="Runs named in a TOML file ([runs] and [repeats]).", show_default=False)] = None,
    parser: Annotated[Optional[str], typer.Option("--parser", "-p", metavar="NAME@N", help="Parser of the raw outputs (not needed for runs that carry labels).", show_default=False)] = None,
    precision: Annotated[float, typer.Option("--precision", metavar="H", help="Target half-width of the 95% interval, as a fraction (0.06: +-6 points; kappa: +-0.06).")] = 0.06,
    metric: Annotated[Optional[list[str]], typer.Option("--metric", metavar="em|regression|kappa", help="What the sample must pin down (default: all three); repeatable.")] = None,
    replicates: Annotated[int, typer.Option("--replicates", metavar="N", help="Simulated draws per sample size checked.")] = 400,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the simulation and of the draw; recorded.")] = 0,
    n: Annotated[Optional[int], typer.Option("--n", "-n", metavar="N", help="Draw this many pairs (default: the recommended n).", show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", metavar="SAMPLE.csv", help="Write the drawn pairs (key fields and an empty human_grade column) here, and the draw's record beside it.", show_default=False)] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace --out and its record even when they are not an earlier regrade's output.")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Treat warnings about the input as errors.")] = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """How many pairs to re-grade by hand after a judge swap, and the sample a person grades.

    The pool is the pairs both judges labelled, with their human grades (gold); the sample is stratified by
    NEW's grade (proportional), its pairs clustered in queries (the first key field). For EM (NEW against the
    human grade), the regression rate (OLD right, NEW wrong) and Cohen's kappa: the smallest n reaching
    +-PRECISION at 95%, by a clustered analytic formula (EM, regression) checked by a seeded simulation that
    resamples whole queries, and by the simulation alone. --out draws the sample (seeded, recorded) as a CSV
    a person fills in; NEW's grade is not shown in it.
    """
    import hashlib
    import json

    from replicate.cli.judge_options import load, need_parser
    from replicate.judge.regrade import draw_sample, plan_regrade, render_regrade
    from replicate.judge.select import select_runs
    from replicate.outfile import Outputs

    sel = select_runs([old, new], runs_file)
    loaded = load(sel.specs, None, None, None, strict, parser=parser, parsers=[parser] if parser else [])
    labelled = {r.name: r for r in loaded.labelled(need_parser(parser, loaded))}
    a, b = (labelled[loaded.named(x)] for x in sel.main)
    plan, pool, keys = plan_regrade(a, b, half_width=precision, metrics=metric or ("em", "regression", "kappa"),
                                    replicates=replicates, seed=seed)
    if out is not None:
        from dataclasses import replace

        from replicate.errors import UsageError

        size = n if n is not None else plan.recommended
        if size is None:
            raise UsageError("no n reaches --precision on this pool: give --n to draw anyway")
        side = out.with_name(out.name + ".draw.json")
        outputs = Outputs("regrade", "out", force=force)
        outputs.check(out, side)
        data, record = draw_sample(pool, keys, size, seed=seed, key_names=plan.key_names)
        sources = [{"path": str(p), "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
                   for s in sel.specs for p in s.paths]
        record = {"out": str(out), **record, "old": plan.old, "new": plan.new, "parser": plan.parser, "sources": sources}
        outputs.write(out, data)
        outputs.write(side, json.dumps(record, indent=2).encode() + b"\n")
        plan = replace(plan, draw={k: v for k, v in record.items() if k != "keys"})
    emit(plan, fmt, text=lambda: render_regrade(plan, fmt))
