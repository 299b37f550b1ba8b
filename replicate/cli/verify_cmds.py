"""``replicate verify``: check a paper's printed claims against its released data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from replicate.cli.base import FormatOpt, StrictOpt, app, echo, warn
from replicate.output import Format


@app.command("verify")
def verify_cmd(
    claims: Annotated[Path, typer.Argument(help="Claims file (TOML): [study], [runs] and [[claims]].", metavar="CLAIMS.toml", show_default=False)],
    root: Annotated[Path, typer.Option("--root", help="Directory the [runs] paths are relative to (e.g. a fetched release).", metavar="DIR")] = Path("."),
    parser: Annotated[
        Optional[list[str]],
        typer.Option("--parser", "-p", help="Recompute every claim under this parser (repeatable; the first gates the exit code). "
                     "Default: each claim's own parser, else the [study] parser, then every registered umbrela "
                     "parser, released readings before the project's corrected ones (umbrela-checked).", metavar="PARSER", show_default=False),
    ] = None,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="Write the markdown verification note here (figures beside it).", metavar="NOTE.md", show_default=False)] = None,
    fmt: FormatOpt = Format.table,
    no_fail: Annotated[bool, typer.Option("--no-fail", help="Exit 0 even when claims mismatch (bad input still exits 2).")] = False,
    date: Annotated[Optional[str], typer.Option("--date", help="Date printed in the note, YYYY-MM-DD (default: today, UTC).", metavar="YYYY-MM-DD", show_default=False)] = None,
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="Draw PNG and SVG figures beside the note (needs the plots extra).")] = True,
    strict: StrictOpt = False,
) -> None:
    """Recompute a paper's printed figures from its released files and match them at printed precision.

    Each claim gets a verdict per parser: match, mismatch or not_computable
    (with why). Exit 1 when a claim mismatches under the gating parser (the
    first --parser; without --parser, the claim's own parser, else the
    [study] parser, else the first released umbrela reading), 0 otherwise;
    2 for bad input.
    """
    from replicate.errors import BadInput, CheckFailed
    from replicate.output import dumps_json
    from replicate.verify.api import verify
    from replicate.verify.note import render_note, render_table
    from replicate.verify.plots import figures_for

    if out is not None and (out.is_dir() or not out.parent.is_dir()):
        why = "is a directory, not a file" if out.is_dir() else "its directory does not exist"
        raise BadInput(f"cannot write --out note: {why}", path=out)
    v = verify(claims, root=str(root), parsers=parser or None, date=date, strict=strict)
    if out is not None:
        fig = figures_for(v, out, draw=plots)
        try:
            out.write_text(render_note(v, out=out.as_posix(), figures=fig), encoding="utf-8")
        except OSError as exc:
            raise BadInput(f"cannot write --out note: {exc.strerror}", path=out) from None
        warn(f"wrote {out}" + "".join(f", {f}" for _, png, svg in fig.files for f in (png, svg)))
    if fmt is Format.json:
        echo(dumps_json(v))
    elif fmt is Format.markdown and out is None:
        echo(render_note(v))
    else:
        echo(render_table(v, fmt))
    if v.failed and not no_fail:
        raise CheckFailed(f"{len(v.failed)} claim(s) mismatch: {', '.join(r.claim.id for r in v.failed)}")
