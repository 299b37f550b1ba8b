"""The verification note: markdown that reads well on GitHub and as plain text (pure).

:func:`render_note` turns a :class:`~replicate.verify.result.Verification`
into the note; :func:`render_table` gives the short terminal view (summary and
claims table). This module is the one renderer: header, summary, flags,
sources and the Reproduce block are common to both kinds of claim; the
sections that differ come from two small cores, :mod:`~replicate.verify.note_runs`
(per-parser claims table, edges, floors, runs) and
:mod:`~replicate.verify.note_trials` (recomputed and replicated trial claims,
settings, replications), and every cell is drawn by :mod:`~replicate.verify.cells`. Nothing here reads files or the clock: the date, paths and
figure links come in as values, so the same inputs always give the same bytes.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePath, PurePosixPath
from urllib.parse import quote

from replicate.judge.outofscale import departure_lines
from replicate.output import Format, md_code, md_text, table
from replicate.provenance import FileProvenance
from replicate.verify.note_rankings import ranking_sections, ranking_table
from replicate.verify.note_runs import claim_texts, claims_table, edges, floors, runs
from replicate.verify.note_trials import reproduce_args, trial_sections, trial_table
from replicate.verify.result import Verification

PLOTS_HINT = "pip install 'replicate-audit[plots]'"


@dataclass(frozen=True)
class Figures:
    """Figures drawn beside the note (``files``: (title, png, svg) relative to the note) or why not."""

    files: tuple[tuple[str, str, str], ...] = ()
    reason: str | None = None


def _summary(v: Verification) -> list[str]:
    if not v.runs_part:
        others = _trial_summary(v) if v.trials is not None else []
        if v.rankings is not None:
            others += ([""] if others else []) + _ranking_summary(v)
        return [f"**{v.summary_line()}.**", "", *others]
    lines = [f"**{v.summary_line()}.**" if v.results else "**No claims.**", ""]
    if v.trials is not None:
        lines += _trial_summary(v) + [""]
    if v.rankings is not None:
        lines += _ranking_summary(v) + [""]
    one = len(v.parsers) == 1
    gate = v.parsers[0] if v.explicit_parsers or v.decided or one else "each claim's first parser"
    if v.failed:
        ids = ", ".join(md_text(r.claim.id) for r in v.failed)
        lines.append(f"Check failed: {len(v.failed)} claim(s) mismatch under {gate}: {ids}.")
    else:
        lines.append(f"Check passed: no claim mismatches under {gate}.")
    if v.decided:
        lines += ["", f"Every run carries labels or correctness verdicts its reader decided ({v.parsers[0]}), "
                  "so no parser reads them and each claim is recomputed once."]
    elif not v.explicit_parsers and one:
        lines += ["", f"No parser was given, so every claim was recomputed under {v.parsers[0]}, the claims "
                  "file's parser; no other registered parser of its family gives the same labels."]
    elif not v.explicit_parsers:
        lines += ["", "No parser was given, so each claim was recomputed under the parser it names, "
                  "else under the study's parser and every registered parser of its family giving the same "
                  "labels (every umbrela parser when the study names none), with the released readings first "
                  "and the project's own corrected readings last; a claim's first parser gates the result."]
    return lines


def _trial_summary(v: Verification) -> list[str]:
    assert v.trials is not None
    bad = [r for r in v.trials.failed]
    if not bad:
        return ["Trial claims: none mismatches and none fails to replicate."]
    ids = ", ".join(md_text(r.claim.id) for r in bad)
    return [f"Check failed: {len(bad)} trial claim(s) mismatch or do not replicate: {ids}."]


def _ranking_summary(v: Verification) -> list[str]:
    assert v.rankings is not None
    bad = v.rankings.failed
    if not bad:
        return ["Ranking claims: none mismatches."]
    return [f"Check failed: {len(bad)} ranking claim(s) mismatch: {', '.join(md_text(r.claim.id) for r in bad)}."]


def _released_files(v: Verification) -> list[FileProvenance]:
    """Every released file read: the runs' files, then the released trials tables (not fresh collections)."""
    files = [f.provenance for fs in v.run_files.values() for f in fs]
    if v.trials is not None:
        files += [t.file for t in v.trials.tables if t.role == "released" and t.file is not None]
    return files


def _releases(v: Verification) -> list[tuple[str, str, str]]:
    """(source, commit, licence status in words) of each fetched release the files come from."""
    seen: dict[tuple[str, str], str] = {}
    for f in _released_files(v):
        rel = f.release
        if rel is not None:
            seen.setdefault((rel.source, rel.commit), rel.licence_words)
    return [(s, c, words) for (s, c), words in seen.items()]


def _rel(path: str, root: str) -> str:
    try:
        return PurePath(path).relative_to(PurePath(root)).as_posix()
    except ValueError:
        return PurePath(path).as_posix()


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
    if v.runs_part:
        rows.append(["Parsers", ", ".join(f"`{p}`" for p in v.parsers)])
        scale = _out_of_scale(v)
        if scale:
            rows.append(["Out-of-scale labels", scale])
    rows.append(["Tool", f"replicate {v.tool_version}"])
    rows.append(["Date", v.date])
    return [f"# Verification note: {title}", "", table(rows, ["", ""], Format.markdown).rstrip("\n")]


def _out_of_scale(v: Verification) -> str:
    """The header's words for labels outside their run's scale: the policy when it is not ``keep``, and each run
    with such labels (empty when the policy is ``keep`` and no label lies outside)."""
    changed = [o for o in v.scale_outcomes if o.count]
    if v.out_of_scale == "keep" and not changed:
        return ""
    head = "kept as read" if v.out_of_scale == "keep" else f"{v.out_of_scale} ({md_code('--out-of-scale ' + v.out_of_scale)})"
    return "; ".join([head, *(md_text(o.words()) for o in changed)]) if changed else f"{head}; no label lay outside"


def _flags(v: Verification) -> list[str]:
    out = ["## Flags", ""]
    if not v.flags:
        return out + ["Nothing flagged.", ""]
    return out + [f"- {f.kind.replace('_', ' ')}: {md_text(f.message)}" for f in v.flags] + [""]


def _figures(fig: Figures | None) -> list[str]:
    out = ["## Figures", ""]
    if fig is None or (not fig.files and fig.reason is None):
        return out + ["Figures are drawn beside the note when it is written with `--out`.", ""]
    if fig.reason is not None:
        return out + [fig.reason, ""]
    for title, png_name, svg_name in fig.files:
        png, svg = quote(png_name), quote(svg_name)  # file names from --out: a link destination, percent-encoded
        out += [f"![{md_text(title)}]({png})", "", f"{md_text(title)} ([PNG]({png}), [SVG]({svg}))", ""]
    return out


def _sources(v: Verification) -> list[str]:
    rows = []
    for s in v.sources():
        rel = s.get("release")
        where = md_code(rel['repo_path'] if rel else _rel(s['path'], v.root))
        check = "-" if rel is None else ("matches manifest" if s.get("matches_manifest") else "DIFFERS from manifest")
        rows.append([where, ", ".join(map(md_text, s["runs"])), s["size"], f"`{s['sha256']}`", check])
    headers = ["file", "runs", "bytes", "sha256", "manifest"]
    return ["## Sources", "", f"Paths are relative to {md_code(v.root)}.", "",
            table(rows, headers, Format.markdown).rstrip("\n"), ""]


def _glob(path: PurePosixPath) -> str:
    return f"{path.parent}/**" if str(path.parent) != "." else str(path)


def minimal_globs(globs: list[str]) -> list[str]:
    """``globs`` without those another one covers (``a/b/**`` under ``a/**``), first-seen order kept."""
    dirs = [g[: -len("/**")] for g in globs if g.endswith("/**")]

    def covered(g: str) -> bool:
        body = g[: -len("/**")] if g.endswith("/**") else g
        return any(body != d and body.startswith(d + "/") for d in dirs)

    return [g for g in dict.fromkeys(globs) if not covered(g)]


def _dest(manifest: str, root: str) -> str:
    """Where a release was fetched to, written relative to the --root the user gave."""
    fetched = Path(manifest).parent
    try:
        inside = fetched.relative_to(Path(root).resolve())
    except ValueError:
        return fetched.as_posix()
    return root if str(inside) == "." else (PurePath(root) / inside).as_posix()


def _fetch_plan(v: Verification) -> list[tuple[str, str, str, list[str]]]:
    """(source, commit, destination, include globs) for each fetched release the files come from."""
    plan: dict[tuple[str, str, str], dict[str, None]] = {}
    for f in _released_files(v):
        rel = f.release
        if rel is not None:
            key = (rel.source, rel.commit, _dest(rel.manifest, v.root))
            plan.setdefault(key, {}).setdefault(_glob(PurePosixPath(rel.repo_path)), None)
    return [(s, c, d, minimal_globs(list(g))) for (s, c, d), g in plan.items()]


def reproduce_commands(v: Verification, *, out: str | None) -> list[str]:
    """The shell commands that repeat this check: fetch each release its files came from, then verify.

    Only fetched files (with a fetch manifest) give a fetch command, into the
    directory they were fetched to: local files not from a fetch are read where
    they are (a [study] release named without a fetch is not fetched over them).
    """
    q = shlex.quote
    cmds = []
    plan = _fetch_plan(v)
    for source, commit, dest, globs in plan:
        inc = " ".join(f"--include {q(g)}" for g in globs)
        cmds.append(f"replicate fetch {q(source)} --rev {q(commit)} {inc} --dest {q(dest)}")
        cmds.append(f"replicate fetch --check {q(dest)}")
    verify = f"replicate verify {q(PurePath(v.claims_file.path).as_posix())} --root {q(v.root)}"
    if v.explicit_parsers and not v.decided:
        verify += "".join(f" --parser {q(p)}" for p in v.parsers)
    if v.out_of_scale != "keep":
        verify += f" --out-of-scale {v.out_of_scale}"
    if v.trials is not None:
        verify += reproduce_args(v.trials)
    if out is not None:
        verify += f" --out {q(out)}"
    cmds.append(verify)
    return cmds


def render_note(v: Verification, *, out: str | None = None, figures: Figures | None = None) -> str:
    """The whole note as markdown text (ends with one newline)."""
    claims, notes = claims_table(v, Format.markdown, figure=False)
    parts: list[str] = [*_header(v), "", "## Summary", "", *_summary(v), ""]
    judge = v.runs_part
    if judge:
        parts += [
            "## Claims", "",
            "Each recomputed value is shown in the printed unit with three more decimals than printed, "
            "then its verdict: a printed value matches when the recomputed one rounds to it "
            "(\"28.0\" covers 27.95 <= x <= 28.05; a value exactly on a boundary matches either neighbour "
            "and is flagged as a tie); counts must be equal.", "",
            claims.rstrip("\n"), "", *claim_texts(v, notes), "",
        ]
    if v.trials is not None:
        parts += trial_sections(v.trials)
    if v.rankings is not None:
        parts += ranking_sections(v.rankings, v.root)
    if judge:
        parts += edges(v) + floors(v) + runs(v)
    parts += _flags(v)
    if judge:
        parts += _figures(figures) + _sources(v)
    commands = reproduce_commands(v, out=out)
    # a fence longer than any run of backticks in a path: no line of a command can close the block
    fence = "`" * max(3, 1 + max((len(r) for c in commands for r in re.findall("`+", c)), default=0))
    parts += ["## Reproduce", "", f"{fence}sh", *commands, fence, ""]
    return wrap_prose("\n".join(parts)).rstrip("\n") + "\n"


#: Prose lines of the note are wrapped at this width so the note reads as plain text too.
WIDTH = 100


#: A word that would open a new markdown block (list item, heading, quote, rule, table) at a line's start.
_BLOCK_START = re.compile(r"[-+*>]|#{1,6}|\d{1,9}[.)]|=+|-+|\|.*|```.*")


def _wrap_line(line: str, width: int) -> list[str]:
    """Greedy wrap at spaces; never starts a continuation line with a word markdown would read as a block."""
    indent = "  " if line.startswith("- ") else ""
    lines: list[list[str]] = [[]]
    used = 0
    for word in line.rstrip().split(" "):
        if lines[-1] and used + 1 + len(word) > width:
            lines.append([])
            used = len(indent)
        lines[-1].append(word)
        used += len(word) + (1 if len(lines[-1]) > 1 else 0)
    for k in range(1, len(lines)):  # pull a word down so that no line opens a block
        while _BLOCK_START.fullmatch(lines[k][0]) and len(lines[k - 1]) > 1:
            lines[k].insert(0, lines[k - 1].pop())
    return [(indent if k else "") + " ".join(words) for k, words in enumerate(lines)]


def wrap_prose(text: str, width: int = WIDTH) -> str:
    """Wrap paragraphs and list items longer than ``width``; tables, headings and code blocks stay as they are.

    Lines break only at spaces (file names, parser names and inline code stay
    whole) and never so that a continuation line would start a markdown block,
    so the rendered note is unchanged: markdown joins the lines again.
    """
    out, fenced = [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        if fenced or len(line) <= width or line.startswith(("|", "#", "    ")) or "](" in line:
            out.append(line)
        else:
            out.extend(_wrap_line(line, width))
    return "\n".join(out)


def render_table(v: Verification, fmt: Format = Format.table) -> str:
    """The terminal view: the claims table, reasons for anything not computable, the summary line."""
    lines = departure_lines(v.out_of_scale, v.scale_outcomes)
    lines += [""] if lines else []
    if v.runs_part:
        claims, notes = claims_table(v, fmt)
        lines.append(claims.rstrip("\n"))
        if notes:
            lines += [""] + [f"[{i}] {why}" for why, i in notes.items()]
    if v.trials is not None:
        if lines:
            lines.append("")
        lines.append(trial_table(v.trials, fmt).rstrip("\n"))
    if v.rankings is not None:
        notes = {}
        lines += ([""] if lines else []) + [ranking_table(v.rankings, fmt, notes).rstrip("\n")]
        lines += [f"[{i}] {why}" for why, i in notes.items()]
    lines += ["", v.summary_line()]
    return "\n".join(lines) + "\n"
