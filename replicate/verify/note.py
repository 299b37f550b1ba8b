"""The verification note: markdown that reads well on GitHub and as plain text (pure).

:func:`render_note` turns a :class:`~replicate.verify.verification.Verification`
into the note; :func:`render_table` gives the short terminal view (summary and
claims tables). This module draws what is common (header, summary, flags, the
Reproduce block) and asks each part (:class:`~replicate.verify.part.Part`) for
its own: header rows, summary lines, sections at each stage, terminal table,
released files and verify options. It names no claim source; every cell is
drawn by :mod:`~replicate.verify.table_cells`. Nothing here reads files or the clock:
the date, paths and figure links come in as values, so the same inputs always
give the same bytes.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import PurePath

from replicate.output import Format, md_code, md_text, table, wrap_markdown
from replicate.provenance import ReleaseRef, fetch_commands
from replicate.verify.part import STAGES
from replicate.verify.verification import Verification


@dataclass(frozen=True)
class Figures:
    """Figures drawn beside the note (``files``: (title, png, svg) relative to the note) or why not."""

    files: tuple[tuple[str, str, str], ...] = ()
    reason: str | None = None


def _summary(v: Verification) -> list[str]:
    """The summary line, then each shown part's lines; the top-level part's (the runs', whose check line gates
    the exit code) last."""
    head = f"**{v.summary_line()}.**" if any(not p.empty for p in v.shown) else "**No claims.**"
    lines = [head, ""]
    blocks = [p.summary_note() for p in sorted(v.shown, key=lambda p: p.top_level)]
    for k, block in enumerate(blocks):
        lines += ([""] if k else []) + block
    return lines


def _fetched(v: Verification) -> list[ReleaseRef]:
    """The fetched release of every released file read that has one, part by part (fresh collections are not
    released files)."""
    return [f.release for p in v.parts for f in p.released_files() if f.release is not None]


def _releases(v: Verification) -> list[tuple[str, str, str]]:
    """(source, commit, licence status in words) of each fetched release the files come from."""
    seen: dict[tuple[str, str], str] = {}
    for rel in _fetched(v):
        seen.setdefault((rel.source, rel.commit), rel.licence_words)
    return [(s, c, words) for (s, c), words in seen.items()]


def _header(v: Verification) -> list[str]:
    study = v.claims_file.study
    title = md_text(study.title) if study.title else "(untitled study)"
    rows = [["Study", title], ["Reference", md_text(study.reference or "-")],
            ["Claims file", md_code(PurePath(v.claims_file.path).as_posix())]]
    releases = _releases(v)
    if releases:
        for source, commit, licence in releases:
            rows.append(["Data", f"{md_text(source)} at commit {md_code(commit)}, fetched into {md_code(v.root)}"])
            rows.append(["Licence", md_text(licence)])
    else:
        rows.append(["Data", f"local files under {md_code(v.root)} (not from a fetched release; hashes below)"])
        if study.release:
            at = f" at {md_code(study.commit)}" if study.commit else ""
            rows.append(["Release named", f"{md_text(study.release)}{at} (not verified: no fetch manifest)"])
    for p in v.shown:
        rows += p.header_rows()
    rows.append(["Tool", f"replicate {v.tool_version}"])
    rows.append(["Date", v.date])
    return [f"# Verification note: {title}", "", table(rows, ["", ""], Format.markdown).rstrip("\n")]


def _flags(v: Verification) -> list[str]:
    out = ["## Flags", ""]
    if not v.flags:
        return out + ["Nothing flagged.", ""]
    return out + [f"- {f.kind.replace('_', ' ')}: {md_text(f.message)}" for f in v.flags] + [""]


def reproduce_commands(v: Verification, *, out: str | None) -> list[str]:
    """The shell commands that repeat this check: fetch each release its files came from
    (:func:`replicate.provenance.fetch_commands`), then verify.

    Only fetched files (with a fetch manifest) give a fetch command, into the
    directory they were fetched to: local files not from a fetch are read where
    they are (a [study] release named without a fetch is not fetched over them).
    """
    q = shlex.quote
    cmds = fetch_commands(_fetched(v), v.root)
    verify = f"replicate verify {q(PurePath(v.claims_file.path).as_posix())} --root {q(v.root)}"
    verify += "".join(p.reproduce_args() for p in v.parts)
    if out is not None:
        verify += f" --out {q(out)}"
    cmds.append(verify)
    return cmds


def render_note(v: Verification, *, out: str | None = None, figures: Figures | None = None) -> str:
    """The whole note as markdown text (ends with one newline)."""
    parts: list[str] = [*_header(v), "", "## Summary", "", *_summary(v), ""]
    for stage in STAGES:  # each part's claims, then each part's details, the flags, each part's closing sections
        if stage == "closing":
            parts += _flags(v)
        for p in v.shown:
            parts += p.note_sections(stage, v.root, figures)
    commands = reproduce_commands(v, out=out)
    # a fence longer than any run of backticks in a path: no line of a command can close the block
    fence = "`" * max(3, 1 + max((len(r) for c in commands for r in re.findall("`+", c)), default=0))
    parts += ["## Reproduce", "", f"{fence}sh", *commands, fence, ""]
    return wrap_markdown("\n".join(parts), WIDTH).rstrip("\n") + "\n"


#: Prose lines of the note are wrapped at this width so the note reads as plain text too.
WIDTH = 100


def render_table(v: Verification, fmt: Format = Format.table) -> str:
    """The terminal view: what every part says first (a departure from the source's reading), then each shown
    part's claims table (with its reasons), then the summary line."""
    head = [line for p in v.parts for line in p.table_head()]
    lines: list[str] = []
    for p in v.shown:
        lines += ([""] if lines else []) + p.table(fmt)
    lines = [*head, "", *lines] if head else lines
    lines += ["", v.summary_line()]
    return "\n".join(lines) + "\n"
