"""`replicate collect`, `replicate score` and `replicate sim-server`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from replicate.cli.base import ForceOpt, FormatOpt, StrictOpt, app, echo, emit, make_app, report_to_stderr, warn
from replicate.errors import UsageError
from replicate.output import Format


@app.command("collect")
def collect_cmd(
    config: Annotated[Path, typer.Argument(metavar="CONFIG", help="Collection config (TOML): [endpoint], [collection], [params].")],
    items: Annotated[Path, typer.Option("--items", help="Items file (JSONL): id, benchmark, messages or prompt, reference, scorer, metadata.")],
    archive: Annotated[Path, typer.Option("--archive", help="Archive (JSONL) to create or resume; append-only.")],
    models: Annotated[Optional[str], typer.Option("--models", metavar="NAME,...", help="Override [collection] models: comma-separated, in phase order.")] = None,
    k: Annotated[Optional[int], typer.Option("--k", help="Override [collection] k (trials per model and item).")] = None,
    concurrency: Annotated[Optional[int], typer.Option("--concurrency", metavar="N", help="Override [collection] concurrency (requests in flight).")] = None,
    base_url: Annotated[Optional[str], typer.Option("--base-url", metavar="URL", help="Override [endpoint] base_url (which overrides the environment's OPENAI_BASE_URL).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan (requests per phase, estimated tokens) and send nothing.")] = False,
    progress: Annotated[Optional[bool], typer.Option("--progress/--no-progress", help="Show progress on stderr (default: on).")] = None,
    export_batch: Annotated[Optional[Path], typer.Option("--export-batch", help="Write the missing requests as Batch API input JSONL (custom_id MODEL|ITEM|TRIAL; vLLM run-batch reads it) and send nothing.")] = None,
    import_batch: Annotated[Optional[Path], typer.Option("--import-batch", help="Append a Batch API result JSONL (e.g. from vLLM run-batch) to the archive and send nothing.")] = None,
    batch: Annotated[bool, typer.Option("--batch", help="Use the provider's Batch API (as [collection] mode = \"batch\"): upload, create, poll, import; resumable, never submits twice.")] = False,
    retry_errors: Annotated[bool, typer.Option("--retry-errors", help="On resume, ask again the trials recorded as api_error (the new record supersedes the old).")] = False,
    batch_deadline: Annotated[Optional[float], typer.Option("--batch-deadline", metavar="SECONDS", help="Batch mode: stop polling this many seconds after the run started (as [collection] batch_deadline); batches still in progress stay recorded for the next run (exit 1).")] = None,
    cancel_batches: Annotated[bool, typer.Option("--cancel-batches", help="Batch mode: cancel the archive's batches in progress, import what they answered, submit nothing (the rest is left missing for the next run).")] = False,
    force: ForceOpt = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Ask every item K times per model over an OpenAI-compatible API, into a crash-safe archive.

    Models are asked in phases, in the config's order; within a phase every
    (item, trial) is sent in a seeded random order. The API key is read from the
    environment variable named by api_key_env. Transient faults (408, 409, 429,
    5xx, timeouts, dropped connections, invalid JSON) are retried with backoff;
    401/403/404, an unknown model, a 400 naming a request parameter (e.g.
    max_tokens where the model wants max_completion_tokens) or the same 400 on
    the first 3 distinct items of a phase stop the run with nothing recorded
    for those requests (exit 2; rerun the same command after the fix to
    resume). Other 400s are that trial's api_error; the run exits 1 when more
    than half of a model's trials are api_error. Rerunning resumes the missing
    trials only (--retry-errors: and the api_error ones); a changed config
    (models, k, params, items) is refused. Ctrl-C stops at once: what was
    recorded stays, requests in flight are asked again on resume (exit 130).
    """
    from replicate.collect import load_config, load_items
    from replicate.collect.archive import scan_archive
    from replicate.collect.plan import make_plan, render_plan
    from replicate.collect.runner import CollectionInterrupted, CollectionStopped, Progress, collect, render_summary

    if str(archive) == "-":
        raise UsageError("--archive must name a file (it is appended to and resumed), not standard output")
    overrides = dict(k=k, concurrency=concurrency, base_url=base_url,
                     models=None if models is None else [m.strip() for m in models.split(",") if m.strip()])
    cfg = load_config(config, base_url=base_url).with_overrides(**overrides)
    its = load_items(items, check_scorers=True)
    if cancel_batches and (export_batch is not None or import_batch is not None or dry_run):
        raise UsageError("--cancel-batches cancels the archive's batches in progress: it does not go with "
                         "--export-batch, --import-batch or --dry-run")
    if cancel_batches and retry_errors:
        raise UsageError("--cancel-batches submits nothing, so --retry-errors would do nothing: give one of them")
    if export_batch is not None or import_batch is not None:
        from replicate.collect import batchfile

        if export_batch is not None and import_batch is not None:
            raise UsageError("--export-batch and --import-batch are separate steps: give one of them")
        if export_batch is not None:
            out = batchfile.export_batch(cfg, its, archive, export_batch, force=force)
            emit(out, fmt, text=lambda: f"{out.lines} requests written to {out.path}")
        else:
            assert import_batch is not None
            got = batchfile.import_batch(cfg, its, archive, import_batch)
            emit(got, fmt, text=lambda: f"{got.recorded} trials recorded from {got.path} ({got.api_errors} api errors; "
                 f"{got.already_recorded} already in the archive, skipped)")
        return
    if dry_run:
        done = scan_archive(archive).done if archive.exists() and archive.stat().st_size else set()
        plan = make_plan(cfg, its, done=done)
        emit(plan, fmt, text=lambda: render_plan(plan, fmt))
        return
    cfg = cfg.with_batch(enabled=True if batch else None, deadline=batch_deadline)
    if cfg.batch.enabled:
        _collect_batch(cfg, its, archive, progress=progress is not False, retry_errors=retry_errors,
                       cancel=cancel_batches, fmt=fmt)
        return
    if batch_deadline is not None or cancel_batches:
        raise UsageError(f"{'--cancel-batches' if cancel_batches else '--batch-deadline'} applies to batch mode: "
                         "add --batch (or set [collection] mode = \"batch\")")
    prog = Progress() if progress is not False else None
    try:
        summary = collect(cfg, its, archive, progress=prog, retry_errors=retry_errors)
    except CollectionStopped as exc:
        warn(render_summary(exc.summary, Format.table).rstrip("\n"))
        raise
    except CollectionInterrupted as exc:
        _exit_interrupted(exc)
    emit(summary, fmt, text=lambda: render_summary(summary, fmt))
    if summary.mostly_errors:
        from replicate.collect.runner import mostly_errors_line

        for m in summary.mostly_errors:
            warn("error: " + mostly_errors_line(m, summary.models[m]))
        raise typer.Exit(1)


def _collect_batch(cfg, its, archive: Path, *, progress: bool, retry_errors: bool, cancel: bool,
                   fmt: Format) -> None:
    """Batch mode: run it, print the summary, exit 1 while triples are missing or batches still pending, or while a
    model's recorded trials are mostly API errors (as online)."""
    import sys

    from replicate.collect.batch import collect_batch, render_batch_summary

    bs = collect_batch(cfg, its, archive, progress=sys.stderr if progress else None, retry_errors=retry_errors,
                       cancel=cancel)
    emit(bs, fmt, text=lambda: render_batch_summary(bs))
    if bs.pending:
        warn(f"error: batches still in progress at the deadline ({', '.join(bs.pending)}) are recorded in "
             f"{archive}: rerun the same command to wait for them, or add --cancel-batches")
    if bs.missing:
        again = "rerun without --cancel-batches" if cancel else "rerun the same command"
        warn(f"error: {bs.missing} triples are still missing from {archive} (failed, expired, cancelled or partially "
             f"completed batches, or batches still in progress): {again} to ask for them")
    if bs.mostly_errors:  # as online: a model whose replies are mostly API errors is not a finished collection
        from replicate.collect.runner import mostly_errors_line

        for m in bs.mostly_errors:
            warn("error: " + mostly_errors_line(m, bs.models[m]))
    if bs.missing or bs.mostly_errors:
        raise typer.Exit(1)


def _exit_interrupted(exc) -> None:
    """Ctrl-C: report what is safe and leave at once, without joining threads still blocked in a read.

    Every record counted was flushed and fsynced and the lock dies with the
    process, so this is as safe as the kill -9 the archive is built to survive.
    """
    import os
    import sys

    from replicate.collect.runner import render_summary

    warn(render_summary(exc.summary, Format.table).rstrip("\n"))
    warn(f"interrupted: {exc.summary.trials_recorded} trials recorded in this run are safe in "
         f"{exc.summary.archive}; requests in flight were abandoned. Rerun the same command to resume.")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(130)


@app.command("score")
def score_cmd(
    archive: Annotated[list[Path], typer.Argument(metavar="ARCHIVE|RESPONSES...", help="Archive written by 'replicate collect', or released responses to score (prompt/response JSONL, one file per trial).", show_default=False)],
    items: Annotated[Path, typer.Option("--items", help="The items file the archive was collected from (for released responses: the benchmark's items, joined by prompt or --id-field).")],
    out: Annotated[Path, typer.Option("--out", help="Trials table to write: .jsonl, .jsonl.gz or .csv (- writes JSONL to standard output, the report then going to stderr).")],
    scorer: Annotated[Optional[str], typer.Option("--scorer", metavar="NAME@N", help="Use this scorer (name@N) for every item instead of each item's own.")] = None,
    ifbench_strict: Annotated[Optional[list[Path]], typer.Option("--ifbench-strict", help="IFBench verifier strict results (eval_results_strict.jsonl); repeatable.")] = None,
    ifbench_loose: Annotated[Optional[list[Path]], typer.Option("--ifbench-loose", help="IFBench verifier loose results (eval_results_loose.jsonl); repeatable.")] = None,
    refusal_detector: Annotated[str, typer.Option("--refusal-detector", metavar="NAME@N", help="Versioned refusal detector for answers without an answer line, or 'none'.")] = "refusal-phrases@1",
    reader: Annotated[Optional[str], typer.Option("--reader", metavar="NAME@N", help="Read released responses with this reader, e.g. responses@1. Default: an archive, unless a reader of responses recognises the file.")] = None,
    model: Annotated[Optional[list[str]], typer.Option("--model", metavar="NAME", help="Released responses: the model that wrote them, once for every file or once per file (needed: the files name none).")] = None,
    id_field: Annotated[Optional[str], typer.Option("--id-field", metavar="FIELD", help="Released responses: join them to the items by this field's value (the item id) instead of by prompt text.")] = None,
    strict: StrictOpt = False,
    force: ForceOpt = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Score an archive, or released responses, into the trials table (one row per trial, six categories).

    Released responses (prompt/response JSONL such as IFBench's sample_output.jsonl, read by
    responses@1) are joined to the items by prompt text (exactly, else with whitespace normalised,
    both counted) or by --id-field; unmatched and ambiguous prompts are reported with their lines.
    Each file is one trial of its --model (several files: trials 0, 1, ... in the order given).

    Category precedence: api_error, truncation (finish reason 'length'),
    refusal (finish reason 'content_filter', the API's refusal field, or the
    refusal detector when no answer is found), format_failure (no answer found;
    also a reply with reasoning but no content that did not hit the token
    limit), else correct or wrong. Only the content is scored. Each row
    names its scorer (name@N); correct_loose is filled where the scorer has a
    loose reading (ifbench@1). Prints counts per model and category, and flags
    a model answered by more than one snapshot or system fingerprint (columns
    snapshot, system_fingerprint). Exits 1 when no trial was scored.
    """
    from replicate.scoring.pipeline import render_report
    from replicate.scoring.responses import score_to_file

    to_stdout = str(out) == "-"
    report = score_to_file(
        archive, items, out, reader=reader, model=model, id_field=id_field, scorer=scorer,
        ifbench_strict=ifbench_strict or [], ifbench_loose=ifbench_loose or [],
        refusal_detector=None if refusal_detector == "none" else refusal_detector, strict=strict,
        force=force,
    )
    with report_to_stderr(to_stdout):
        emit(report, fmt, report.diagnostics, text=lambda: render_report(report, fmt), warnings=None)  # the text counts them
    if report.rows == 0:
        warn(f"error: no trial was scored from {', '.join(map(str, archive))}: the input holds no trials, or every trial was "
             "left out (see above)")
        raise typer.Exit(1)


@app.command("repair-archive")
def repair_archive_cmd(
    archive: Annotated[Path, typer.Argument(metavar="ARCHIVE", help="Archive written by 'replicate collect' that holds duplicate trials.")],
    fmt: FormatOpt = Format.table,
) -> None:
    """Drop duplicate trial records from an archive, keeping the first record of each (model, item, trial).

    A later record of a trial first recorded as an API error supersedes it, as on
    reading, and is kept. Every other line is kept byte for byte. The original is
    copied to ARCHIVE.bak (or ARCHIVE.bak.N) before the archive is replaced; each
    dropped record is listed with its line and whether it differs from the one kept.
    An archive without duplicates is left as it is.
    """
    from replicate.collect.repair import render_repair, repair_archive

    rep = repair_archive(archive)
    emit(rep, fmt, text=lambda: render_repair(rep))


@app.command("sim-server")
def sim_server_cmd(
    config: Annotated[Optional[Path], typer.Option("--config", help="Sim config (TOML): models and pass probabilities, faults, seed.")] = None,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on; 0 picks a free one.")] = 0,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
) -> None:
    """Serve a simulated OpenAI-compatible chat-completions endpoint (for demos and tests).

    Prints the base URL to put in a collection config, then serves until
    interrupted. Without --config: models sim-a (p=0.5) and sim-b (p=0.8), no
    faults, any API key accepted.
    """
    import os
    import sys

    from replicate.collect.simserver import DEFAULT_SIM, load_sim_config, sim_items_note, start_sim_server

    sim = DEFAULT_SIM if config is None else load_sim_config(config)
    key = os.environ.get(sim.api_key_env) if sim.api_key_env else None
    try:
        server = start_sim_server(sim, host=host, port=port, api_key=key or None)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    auth = f"key from ${sim.api_key_env}" if key else "any API key accepted"
    echo(f"{server.url}")
    sys.stdout.flush()  # the URL must reach a pipe reader at once
    warn(f"simulated endpoint: models {', '.join(sim.models)}; {sim_items_note(sim.items)}; {auth}; Ctrl-C to stop")
    try:
        server._thread.join()  # type: ignore[union-attr]
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


export_app = make_app("export", "Write an archive in the input format of an external tool.")
app.add_typer(export_app, name="export")


@export_app.command("ifbench")
def export_ifbench_cmd(
    archive: Annotated[Path, typer.Argument(metavar="ARCHIVE", help="Archive written by 'replicate collect'.")],
    items: Annotated[Path, typer.Option("--items", help="The items file the archive was collected from.")],
    out: Annotated[Path, typer.Option("--out", help="Directory for the verifier's input files (created).")],
    force: ForceOpt = False,
    fmt: FormatOpt = Format.table,
) -> None:
    """Write the official IFBench verifier's input: one prompt/response JSONL file per trial index.

    trial-T.jsonl holds one line {"prompt", "response"} per ifbench item for
    trial T (MODEL/trial-T.jsonl when the archive holds several models, MODEL percent-encoded: openai%2Fgpt-4o). Run
    the verifier on each file, then pass its results to 'replicate score
    --ifbench-strict/--ifbench-loose'. Trials without a response are counted.
    """
    from replicate.scoring.export import export_ifbench, render_export

    rep = export_ifbench(archive, items, out, force=force)
    emit(rep, fmt, text=lambda: render_export(rep, fmt))
