"""``replicate verify``: check a paper's printed claims against its released data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from replicate.cli.base import ForceOpt, FormatOpt, StrictOpt, app, emit, report_to_stderr, warn
from replicate.cli.judge_options import (
    ClusterOpt,
    JobsOpt,
    MinItemsOpt,
    OutOfScale,
    OutOfScaleOpt,
    ReaderOpt,
    ReplicatesOpt,
    SeedOpt,
    jobs_value,
    label_cache,
    run_cache,
    show_cache_events,
    show_detected,
)
from replicate.output import Format


@app.command("verify")
def verify_cmd(
    claims: Annotated[Path, typer.Argument(help="Claims file (TOML): [study], [runs] and [[claims]].", metavar="CLAIMS.toml", show_default=False)],
    root: Annotated[Path, typer.Option("--root", help="Directory the [runs] paths are relative to (e.g. a fetched release).", metavar="DIR")] = Path("."),
    parser: Annotated[
        Optional[list[str]],
        typer.Option("--parser", "-p", help="Recompute every claim under this parser (repeatable; the first gates the exit code). "
                     "Default: each claim's own parser, else the [study] parser and the registered parsers of its "
                     "family giving the same labels (without one, every umbrela parser), released readings before "
                     "the project's corrected ones (umbrela-checked).", metavar="PARSER", show_default=False),
    ] = None,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Write the markdown verification note here (figures beside it; - for standard output, without figures, the report then going to stderr).", metavar="NOTE.md", show_default=False)] = None,
    fmt: FormatOpt = Format.table,
    no_fail: Annotated[bool, typer.Option("--no-fail", help="Exit 0 even when claims mismatch (bad input still exits 2).")] = False,
    date: Annotated[Optional[str], typer.Option("--date", help="Date printed in the note, YYYY-MM-DD (default: today, UTC).", metavar="YYYY-MM-DD", show_default=False)] = None,
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="Draw PNG and SVG figures beside the note (needs the plots extra).")] = True,
    force: ForceOpt = False,
    strict: StrictOpt = False,
    jobs: JobsOpt = "auto",
    replication: Annotated[
        Optional[list[str]],
        typer.Option("--replication", help="Replace the trials table NAME of the claims file by a fresh collection "
                     "(collect + score) and judge its claims within sampling error (repeatable).",
                     metavar="NAME=TRIALS", show_default=False),
    ] = None,
    replication_archive: Annotated[
        Optional[list[str]],
        typer.Option("--replication-archive", help="The archive the fresh table NAME was scored from: its config "
                     "(no secrets) and dates go into the note (repeatable).", metavar="NAME=ARCHIVE",
                     show_default=False),
    ] = None,
    reader: ReaderOpt = None,
    out_of_scale: OutOfScaleOpt = OutOfScale.keep,
    replicates: ReplicatesOpt = 1000,
    seed: SeedOpt = 0,
    cluster: ClusterOpt = None,
    min_items: MinItemsOpt = 100,
) -> None:
    """Recompute a paper's printed figures from its released files and match them at printed precision.

    Each claim gets a verdict per parser: match, mismatch or not_computable
    (with why). Claims over K-trial tables ([trials]) are recomputed with the
    items/screen engine; with --replication their table is a fresh collection
    and each claim replicates, does not replicate or is underpowered. Claims
    naming trec_runs score TREC runs under two qrels (ranking agreement). Exit 1
    when a claim mismatches under the gating parser (the first --parser;
    without --parser, the claim's own parser, else the [study] parser, else
    the first released umbrela reading) or does not replicate, 0 otherwise;
    2 for bad input. Edges and floors carry seeded bootstrap intervals
    (whole queries resampled, --cluster; --replicates 0 for none); a floor
    comparison is 'above' only when the paired test by query cluster says so, and
    edges or floors on fewer than --min-items items are flagged.
    """
    from replicate.command_input import write_stdout
    from replicate.errors import BadInput, CheckFailed
    from replicate.outfile import Outputs
    from replicate.verify.api import verify
    from replicate.verify.note import render_note, render_table
    from replicate.verify.plots import figures_for

    to_stdout = out is not None and str(out) == "-"
    if out is not None and not to_stdout and (out.is_dir() or not out.parent.is_dir()):
        why = "is a directory, not a file" if out.is_dir() else "its directory does not exist"
        raise BadInput(f"cannot write --out note: {why}", path=out)
    outputs = Outputs("verify", "out", force=force)
    if out is not None and not to_stdout:
        outputs.check(out)
    cache, runs_kept = label_cache(), run_cache()
    v = verify(claims, root=str(root), parsers=parser or None, date=date, strict=strict,
               replications=_pairs(replication, "--replication", "NAME=TRIALS"),
               replication_archives=_pairs(replication_archive, "--replication-archive", "NAME=ARCHIVE"),
               reader=reader, uncertainty=_uncertainty(replicates, seed, cluster, min_items), label_cache=cache,
               jobs=jobs_value(jobs), run_cache=runs_kept, out_of_scale=out_of_scale.value)
    detected: dict[str, list[str]] = {}
    for files in v.runs.run_files.values():
        for f in files:
            if f.chosen == "by content":
                detected.setdefault(f.reader, []).append(f.provenance.path)
    show_detected(detected)
    if to_stdout:  # the note to standard output (no figures: they need a directory); the report to stderr
        write_stdout(render_note(v).encode("utf-8"))
    elif out is not None:
        fig = figures_for(v, out, draw=plots, outputs=outputs)
        outputs.write(out, render_note(v, out=out.as_posix(), figures=fig).encode("utf-8"))
        warn(f"wrote {out}" + "".join(f", {f}" for _, png, svg in fig.files for f in (png, svg)))
    note_to_stdout = fmt is Format.markdown and out is None
    show_cache_events(cache, runs_kept)
    with report_to_stderr(to_stdout):
        # the loader's warnings are in the note and the JSON, not on stderr
        emit(v, fmt, v.diagnostics,
             text=lambda: render_note(v) if note_to_stdout else render_table(v, fmt), warnings=None)
    failed = v.failed_ids
    if failed and not no_fail:
        raise CheckFailed(f"{len(failed)} claim(s) {_failed_words(v)}: {', '.join(failed)}")


def _failed_words(v: Any) -> str:
    if any(getattr(r, "verdict", None) == "does not replicate" for r in v.all_results if r.failed):
        return "mismatch or do not replicate"
    return "mismatch"


def _pairs(values: Optional[list[str]], option: str, shape: str) -> dict[str, str]:
    from replicate.errors import UsageError

    out: dict[str, str] = {}
    for text in values or ():
        name, sep, path = text.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"{option} must look like {shape}, got {text!r}")
        if name in out:
            raise UsageError(f"{option} names {name!r} twice")
        out[name] = path
    return out


def _uncertainty(replicates: int, seed: int, cluster: str | None, min_items: int):
    """Uncertainty settings for verify (key fields come from the claims file's [fields], checked there)."""
    from replicate.errors import UsageError
    from replicate.judge.uncertainty import ITEM, Uncertainty

    try:
        # provisional key fields: verify_runs puts the claims file's in their place and checks the cluster again
        keys = ("query_id", "corpus_id") if cluster in (None, ITEM) else (cluster,)
        return Uncertainty(replicates=replicates, seed=seed, cluster=cluster, min_items=min_items, key_fields=keys)
    except ValueError as exc:
        raise UsageError(f"--cluster: {exc}") from None
