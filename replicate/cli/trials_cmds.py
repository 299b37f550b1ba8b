"""``replicate items``, ``screen``, ``plan`` and ``costs``: the item-level engine for K-trial studies."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from replicate.cli.base import ForceOpt, FormatOpt, StrictOpt, app, emit, flags, report_to_stderr
from replicate.output import Format
from replicate.trials.settings import DEFAULTS

_TRIALS_HELP = "Trials table: JSONL (.jsonl, .jsonl.gz) or CSV (.csv), one row per trial."


@app.command("items")
@flags(n_null="--null", edges="--edge")
def items(
    trials: Annotated[Path, typer.Argument(metavar="TRIALS", help=_TRIALS_HELP, show_default=False)],
    edge: Annotated[
        Optional[list[str]],
        typer.Option("--edge", "-e", metavar="SRC:TGT", help="An edge SOURCE:TARGET (old model -> new model); repeatable. Without one: each model's accuracy per benchmark, with its interval and responses per category."),
    ] = None,
    by: Annotated[str, typer.Option("--by", metavar="benchmark|none", help="One cell per edge and benchmark ('benchmark') or benchmarks pooled ('none').")] = "benchmark",
    eps: Annotated[str, typer.Option("--eps", help="Practical threshold on the per-item difference, decided exactly (0.2 = 1/5).")] = DEFAULTS.eps,
    alpha: Annotated[float, typer.Option("--alpha", help="BH level: an item is significant when q <= alpha.")] = DEFAULTS.alpha,
    ci: Annotated[str, typer.Option("--ci", metavar="METHOD", help="Interval for equivalence: newcombe (hybrid score), wald or agresti-caffo.")] = DEFAULTS.ci,
    null: Annotated[int, typer.Option("--null", metavar="N", help="Permutation replications (0 = off).")] = DEFAULTS.null,
    seed: Annotated[int, typer.Option("--seed", help="Seed of every random draw; always recorded.")] = DEFAULTS.seed,
    per_item: Annotated[Optional[Path], typer.Option("--per-item", help="Write one JSON row per item and edge to this file (- for standard output, the report then going to stderr).")] = None,
    sensitivity: Annotated[Optional[str], typer.Option("--sensitivity", metavar="EPS,...", help="Also report the shares for each of these eps, e.g. 0.10,0.15,0.20,0.25.")] = None,
    single_draw: Annotated[bool, typer.Option("--single-draw", help="Also show the flips one random trial per item per model would show.")] = False,
    strata: Annotated[Optional[str], typer.Option("--strata", metavar="COLUMN", help="Break the shares down by this item metadata column, e.g. difficulty.")] = None,
    by_snapshot: Annotated[bool, typer.Option("--by-snapshot", help="Split each model answered by several snapshots into MODEL@SNAPSHOT models (name those in --edge).")] = False,
    tarone: Annotated[bool, typer.Option("--tarone", help="Leave out items whose smallest attainable Fisher p-value exceeds --alpha (they can never be significant), before BH.")] = False,
    power_move: Annotated[str, typer.Option("--power-move", help="Reference move P:Q whose power at each cell's K is shown beside P+ and P-.")] = "0.4:0.6",
    min_items: Annotated[int, typer.Option("--min-items", min=0, metavar="N", help="Flag a cell of fewer items than this (its shares are too uncertain for a verdict); the threshold edges and floors use.")] = 100,
    force: ForceOpt = False,
    plots: Annotated[Optional[Path], typer.Option("--plots", metavar="DIR", help="Draw P+ and P- beside delta per edge and benchmark, with their 95% intervals, as PNG and SVG into DIR (needs the plots extra).")] = None,
    reading: Annotated[str, typer.Option("--reading", metavar="strict|loose|both", help="Which correctness to classify: the category (strict), correct_loose (loose: IFBench's loose reading), or both side by side with the items that change class.")] = "strict",
    fmt: FormatOpt = Format.table,
    strict: StrictOpt = False,
) -> None:
    """Which items changed reliably between model versions, beyond rerun noise.

    Per edge and benchmark: Fisher's exact test per item (two-sided), Benjamini-Hochberg
    across the cell's items, an exact practical threshold eps, an equivalence interval, and
    a permutation null (95th percentile of P+, P-, Pchg, shown in brackets; its expected number of
    false discoveries per cell and the chance of at least one). P+ and P- are lower bounds on churn
    at the data's K: the power to flag an item moving --power-move is shown beside them. A model
    whose trials were answered by more than one snapshot or system fingerprint (columns snapshot,
    system_fingerprint of 'replicate score') is flagged with the trials per value. Without --edge:
    each model's accuracy per benchmark, its interval and its responses in the six categories.
    """
    from replicate.command_input import is_stdio
    from replicate.diagnostics import Diagnostics, listing_text
    from replicate.outfile import Outputs
    from replicate.trials.engine import analyse_items, parse_edge, per_item_rows
    from replicate.trials.load import read_trials
    from replicate.trials.plan import parse_move
    from replicate.trials.readings import ReadingsResult, analyse_readings
    from replicate.trials.readings_render import render_readings
    from replicate.trials.render import render_items

    outputs = Outputs("items", "per_item", force=force)
    if per_item is not None and not is_stdio(per_item):
        outputs.check(per_item)
    diag = Diagnostics(strict=strict)
    table = read_trials(trials, diagnostics=diag)
    table = _snapshots(table, diag, split=by_snapshot)
    edges = [parse_edge(e, table.models) for e in edge or ()]
    move = parse_move(power_move, param="power_move")

    def analyse(t):
        return analyse_items(
            t, edges, by=by, eps=eps, alpha=alpha, ci=ci, n_null=null, seed=seed,
            sensitivity=sensitivity, single_draw=single_draw, strata=strata, tarone=tarone,
            power_move=move, min_items=min_items, diagnostics=diag,
        )

    result = analyse_readings(table, reading, analyse, diagnostics=diag)
    if per_item is not None:
        parts = (("strict", result.strict), ("loose", result.loose)) if isinstance(result, ReadingsResult) else (
            (result.reading, result),)
        rows = ({**row, "reading": name} if name != "strict" or len(parts) > 1 else row  # strict alone: as before
                for name, r in parts for row in per_item_rows(r))
        _write_jsonl(per_item, rows, outputs)
    if plots is not None:
        from replicate.cli.base import warn
        from replicate.trials.items_plots import draw_items_plots

        drawn = result.strict if isinstance(result, ReadingsResult) else result
        files, why = draw_items_plots(drawn, plots, force=force)
        warn(f"plots: {why}" if why else f"wrote {len(files)} figure files to {plots}")
    with report_to_stderr(is_stdio(per_item)):
        if isinstance(result, ReadingsResult):
            both = result
            emit(both, fmt, diag, text=lambda: render_readings(both, fmt), warnings=listing_text)
        else:
            one = result
            emit(one, fmt, diag, text=lambda: render_items(one, fmt), warnings=listing_text)


@app.command("path")
def path_cmd(
    trials: Annotated[Path, typer.Argument(metavar="TRIALS", help=_TRIALS_HELP, show_default=False)],
    path: Annotated[str, typer.Argument(metavar="OLD:MIDDLE:NEW", help="Three models: the direct edge OLD -> NEW and its two steps.", show_default=False)],
    by: Annotated[str, typer.Option("--by", metavar="benchmark|none", help="Per benchmark ('benchmark') or benchmarks pooled ('none'), as in 'items'.")] = "benchmark",
    eps: Annotated[str, typer.Option("--eps", help="Practical threshold, as in 'items'.")] = DEFAULTS.eps,
    alpha: Annotated[float, typer.Option("--alpha", help="BH level, as in 'items'.")] = DEFAULTS.alpha,
    ci: Annotated[str, typer.Option("--ci", metavar="METHOD", help="Interval for equivalence, as in 'items'.")] = DEFAULTS.ci,
    per_item: Annotated[Optional[Path], typer.Option("--per-item", help="Write one JSON row per item (its three classes and the path's composition) to this file (- for standard output).")] = None,
    force: ForceOpt = False,
    fmt: FormatOpt = Format.table,
    strict: StrictOpt = False,
) -> None:
    """Cancellation across an upgrade path: the direct edge OLD -> NEW against its steps OLD -> MIDDLE -> NEW.

    Each edge's items are classified as 'items' classifies them (same eps, alpha, interval); per item the
    direct class is set against the two steps' composition (improved, regressed, cancelled: down then up or
    up then down, unflagged), with the counts, the step moves the direct edge hides and the share of the
    direct edge's flagged change the path does not show.
    """
    from replicate.command_input import is_stdio
    from replicate.diagnostics import Diagnostics, listing_text
    from replicate.outfile import Outputs
    from replicate.trials.engine import analyse_items
    from replicate.trials.load import read_trials
    from replicate.trials.paths import analyse_path, parse_path, path_item_rows, render_path

    outputs = Outputs("path", "per_item", force=force)
    if per_item is not None and not is_stdio(per_item):
        outputs.check(per_item)
    diag = Diagnostics(strict=strict)
    table = read_trials(trials, diagnostics=diag)
    models = parse_path(path, table.models)
    result = analyse_path(table, models, lambda t, edges: analyse_items(
        t, edges, by=by, eps=eps, alpha=alpha, ci=ci, n_null=0, diagnostics=diag))
    if per_item is not None:
        _write_jsonl(per_item, path_item_rows(result), outputs)
    with report_to_stderr(is_stdio(per_item)):
        emit(result, fmt, diag, text=lambda: render_path(result, fmt), warnings=listing_text)


@app.command("costs")
@flags(edges="--edge", n_resamples="--replicates")
def costs_cmd(
    trials: Annotated[Path, typer.Argument(metavar="TRIALS", help=_TRIALS_HELP, show_default=False)],
    edge: Annotated[Optional[list[str]], typer.Option("--edge", "-e", metavar="SRC:TGT", help="An edge SOURCE:TARGET (old model -> new model); repeatable. Without one, per-model figures only.")] = None,
    by: Annotated[str, typer.Option("--by", metavar="benchmark|none", help="Figures per benchmark ('benchmark') or benchmarks pooled ('none'); the item classes follow, as in 'items'.")] = "benchmark",
    prices: Annotated[Optional[Path], typer.Option("--prices", metavar="PRICES.toml", help="Per-model prices per million input, output and reasoning tokens, with a source and a date: adds the kind 'cost'.")] = None,
    cluster: Annotated[Optional[str], typer.Option("--cluster", metavar="COLUMN|item", help="Resample whole clusters of items sharing this item metadata column, or 'item' for the item bootstrap (the default).")] = None,
    replicates: Annotated[int, typer.Option("--replicates", min=0, metavar="N", help="Bootstrap replicates of the edge intervals (0: no intervals).")] = 1000,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Seed of the bootstrap (default: that of 'items', 0); always recorded.")] = None,
    eps: Annotated[Optional[str], typer.Option("--eps", help="Item classes: practical threshold, as in 'items' (default 0.2).", show_default=False)] = None,
    alpha: Annotated[Optional[float], typer.Option("--alpha", help="Item classes: BH level, as in 'items' (default 0.05).", show_default=False)] = None,
    ci: Annotated[Optional[str], typer.Option("--ci", metavar="METHOD", help="Item classes: interval for equivalence, as in 'items' (default newcombe).", show_default=False)] = None,
    plots: Annotated[Optional[Path], typer.Option("--plots", metavar="DIR", help="Draw per model an ECDF of tokens per item and per edge a scatter of source vs target tokens per item by class, as PNG and SVG into DIR (needs the plots extra).")] = None,
    force: ForceOpt = False,
    fmt: FormatOpt = Format.table,
    strict: StrictOpt = False,
) -> None:
    """Token cost per model and per edge, beside accuracy, from the trials table's usage columns.

    Per model (and benchmark): tokens per trial and per item (prompt, completion, reasoning,
    total; with --prices, cost): count, mean, median, p90, p99, max, and how many trials report
    no usage (left out, never read as 0). Per edge: the paired per-item change and ratio
    (target vs source) with medians and bootstrap intervals, the share of items costing more,
    tokens per correct answer on each side, and the median change per item class of 'items'.
    A table without usage (released responses) says so and prints no cost figures.
    """
    from replicate.diagnostics import Diagnostics, listing_text
    from replicate.trials.costs import analyse_costs
    from replicate.trials.costs_render import render_costs
    from replicate.trials.engine import parse_edge
    from replicate.trials.load import read_trials
    from replicate.trials.prices import read_prices

    diag = Diagnostics(strict=strict)
    table = read_trials(trials, diagnostics=diag)
    price_list = read_prices(prices) if prices is not None else None
    settings = {k: v for k, v in (("eps", eps), ("alpha", alpha), ("ci", ci)) if v is not None}
    result = analyse_costs(
        table, [parse_edge(e, table.models) for e in edge or ()], by=by, prices=price_list, cluster=cluster,
        n_resamples=replicates, seed=seed, classification=settings, diagnostics=diag,
    )
    if plots is not None:
        from replicate.cli.base import warn
        from replicate.trials.costs_plots import draw_cost_plots

        files, why = draw_cost_plots(result, plots, force=force)
        warn(f"plots: {why}" if why else f"wrote {len(files)} figure files to {plots}")
    emit(result, fmt, diag, text=lambda: render_costs(result, fmt), warnings=listing_text)


@app.command("screen")
def screen_cmd(
    trials: Annotated[Path, typer.Argument(metavar="TRIALS", help=_TRIALS_HELP, show_default=False)],
    low: Annotated[str, typer.Option("--low", help="Lower end of the informative accuracy range (inclusive).")] = DEFAULTS.low,
    high: Annotated[str, typer.Option("--high", help="Upper end of the informative accuracy range (inclusive).")] = DEFAULTS.high,
    threshold: Annotated[str, typer.Option("--threshold", help="A benchmark passes when at least this share of its items is informative.")] = DEFAULTS.threshold,
    fmt: FormatOpt = Format.table,
    strict: StrictOpt = False,
) -> None:
    """Screen benchmarks: share of items where at least one model's accuracy lies in [low, high]."""
    from replicate.diagnostics import Diagnostics, listing_text
    from replicate.trials.load import read_trials
    from replicate.trials.screen import render_screen, screen

    diag = Diagnostics(strict=strict)
    result = screen(read_trials(trials, diagnostics=diag), low=low, high=high, threshold=threshold)
    emit(result, fmt, diag, text=lambda: render_screen(result, fmt), warnings=listing_text)


def _snapshots(table, diag, *, split: bool):
    """Flag models answered by several snapshots/fingerprints; with ``split``, split them by snapshot."""
    from replicate.trials.snapshots import describe_change, split_by_snapshot, table_snapshot_changes

    for m, ch in table_snapshot_changes(table).items():
        diag.warn("snapshot_changed", describe_change(m, ch), path=table.path)
    return split_by_snapshot(table) if split else table


def _write_jsonl(path: Path, rows, outputs) -> None:
    import orjson

    from replicate.command_input import is_stdio, write_stdout

    data = [orjson.dumps(r) + b"\n" for r in rows]
    if is_stdio(path):
        write_stdout(b"".join(data))
        return
    outputs.write(path, data)


@app.command("plan")
@flags(n_items="--n-items", n_resamples="--resamples")
def plan_cmd(
    items_: Annotated[int, typer.Option("--n-items", "-n", metavar="N", help="Items in a cell (one edge x benchmark), the BH family size.", show_default=False)],
    move: Annotated[Optional[list[str]], typer.Option("--move", "-m", metavar="P:Q", help="A true move P:Q of one item's accuracy, source then target (default 0.4:0.6); repeatable.")] = None,
    k: Annotated[Optional[list[str]], typer.Option("--k", "-k", help="Non-error trials per item: K on both sides or KSRC:KTGT (default 50); repeatable.")] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="BH level: an item is significant when q <= alpha.")] = DEFAULTS.alpha,
    eps: Annotated[str, typer.Option("--eps", help="Practical threshold on the per-item difference, decided exactly (0.2 = 1/5).")] = DEFAULTS.eps,
    moving: Annotated[float, typer.Option("--moving", help="Assumed share of the cell's other items that move the same way; the rest stay put.")] = 0.0,
    base_rate: Annotated[Optional[float], typer.Option("--base-rate", help="Accuracy of the other items that stay put (default: P of the move).")] = None,
    power: Annotated[Optional[float], typer.Option("--power", help="Also find the smallest K per side reaching this power, e.g. 0.8.")] = None,
    k_max: Annotated[int, typer.Option("--k-max", help="Largest K examined by --power.")] = 200,
    resamples: Annotated[int, typer.Option("--resamples", metavar="N", help="Simulated draws of the other items (the item itself is summed exactly).")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the simulated draws; always recorded.")] = DEFAULTS.seed,
    fmt: FormatOpt = Format.table,
) -> None:
    """How likely `replicate items` flags an item that truly moves P -> Q, at K trials per side.

    The engine's rule (Fisher two-sided, Benjamini-Hochberg across --n-items items, d >= eps decided
    exactly) summed exactly over the item's two binomials; BH depends on the other items, so they
    follow the stated assumption (--moving, --base-rate), drawn --resamples times with --seed.
    Exact bounds that hold whatever the other items do are shown beside.
    """
    from replicate.trials.plan import parse_k, parse_move, plan, render_plan

    result = plan(
        [parse_move(m) for m in (move or ["0.4:0.6"])], [parse_k(x) for x in (k or ["50"])],
        n_items=items_, alpha=alpha, eps=eps, moving=moving, base_rate=base_rate, target=power,
        k_max=k_max, n_resamples=resamples, seed=seed,
    )
    emit(result, fmt, text=lambda: render_plan(result, fmt))
