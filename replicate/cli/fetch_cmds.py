"""``replicate fetch``: released files from a repository, pinned to a commit and hashed."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from replicate.cli.base import FormatOpt, app, emit, warn
from replicate.errors import UsageError
from replicate.output import Format


class Via(str, Enum):
    auto = "auto"
    git = "git"
    http = "http"
    hub = "hub"


@app.command("fetch")
def fetch_cmd(
    source: Annotated[Optional[str], typer.Argument(
        help="owner/repo (GitHub), hf://datasets/ORG/NAME (Hugging Face Hub), an https:// git URL, a file:// URL "
        "or a local git repository path.",
        metavar="SOURCE", show_default=False)] = None,
    rev: Annotated[Optional[str], typer.Option(
        "--rev", help="Commit, branch or tag (default: the default branch); recorded as the full commit id.",
        metavar="REV", show_default=False)] = None,
    include: Annotated[Optional[list[str]], typer.Option(
        "--include", "-i", help="Glob on the full repository path (repeatable): '*' stays inside one "
        "directory, '**' spans directories, 'results/' = 'results/**'. Default: every file.",
        metavar="GLOB", show_default=False)] = None,
    dest: Annotated[Optional[Path], typer.Option(
        "--dest", "-d", help="Directory to write into (default: ./<repository name>).",
        metavar="DIR", show_default=False)] = None,
    via: Annotated[Via, typer.Option(
        "--via", help="Transport: auto (hub for Hub datasets, http for GitHub sources, git otherwise), git, "
        "http or hub.")] = Via.auto,
    offline: Annotated[bool, typer.Option(
        "--offline", help="Use only the cache; fail naming whatever is missing.")] = False,
    max_size: Annotated[str, typer.Option(
        "--max-size", help="Skip files larger than this many bytes (K, M, G suffixes allowed).",
        metavar="BYTES")] = "100M",
    allow_large: Annotated[bool, typer.Option(
        "--allow-large", help="Fetch files over --max-size too.")] = False,
    no_lfs: Annotated[bool, typer.Option(
        "--no-lfs", help="Do not fetch the Git LFS objects selected pointers name: skip them (lfs-pointer).")] = False,
    lfs_url: Annotated[Optional[str], typer.Option(
        "--lfs-url", help="Git LFS endpoint of the source (default: REMOTE.git/info/lfs; a local repository has "
        "none).", metavar="URL", show_default=False)] = None,
    check: Annotated[Optional[Path], typer.Option(
        "--check", help="Rehash the files of a fetched DIR against its manifest; exit 1 naming each "
        "missing or changed file.", metavar="DIR", show_default=False)] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Fetch released files from a repository at a pinned commit, with hashes and licence status.

    Writes the files matching --include into DIR and records DIR/replicate-manifest.json
    (source, commit, per-file size and sha256, repository metadata, licence, and every
    selected file that was skipped and why). Git LFS pointers are resolved to their
    objects (checked against the pointer's sha256) unless --no-lfs. Fetching again is a
    no-op when the files still match. Environment: GITHUB_TOKEN (optional token for the
    GitHub API), HF_TOKEN (optional token for the Hugging Face Hub), HF_ENDPOINT (another
    Hub host), REPLICATE_CACHE_DIR (cache location), REPLICATE_GITHUB_API /
    REPLICATE_GITHUB_RAW (base URLs of the http transport).
    """
    from replicate.fetch import render

    if check is not None:
        if source is not None:
            raise UsageError("--check DIR takes no SOURCE; run `replicate fetch --check DIR` alone")
        from replicate.fetch import check as check_dir

        result = check_dir(check)
        emit(result, fmt, text=lambda: render.render_check(result, fmt))
        result.raise_for_status()
        return
    if source is None:
        raise UsageError("missing SOURCE (owner/repo, URL or path), or pass --check DIR")
    from replicate.fetch import fetch

    tty = sys.stderr.isatty()
    result = fetch(source, rev=rev, include=include or (), dest=dest, via=via.value,
                   offline=offline, max_size=max_size, allow_large=allow_large,
                   progress=_progress if tty else _waits_only, lfs=not no_lfs, lfs_url=lfs_url, progress_bars=tty)
    emit(result, fmt, text=lambda: render.render_fetch(result, fmt))
    if fmt is Format.json and result.skipped:
        warn(f"warning: {len(result.skipped)} selected file(s) skipped; see \"skipped\" in the output")


def _progress(event: str, what: str) -> None:
    warn(f"{event}: {what}")


def _waits_only(event: str, what: str) -> None:
    """Without a terminal only waiting (for another fetch, or before a retry) is worth a line on stderr."""
    if event in ("wait", "retry"):
        warn(f"{event}: {what}")
