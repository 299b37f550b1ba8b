"""Pure rendering of fetch and check results: table, markdown, json."""

from __future__ import annotations

from typing import TYPE_CHECKING

from replicate.fetch.safety import human_size
from replicate.output import Format, FormatArg, escaped, table

if TYPE_CHECKING:  # the result types only: rendering reads no files
    from replicate.fetch.api import FetchResult
    from replicate.fetch.manifest import CheckResult


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def render_fetch(result: FetchResult, fmt: FormatArg) -> str:
    fmt = Format(fmt)
    m = result.manifest
    rev = f" ({m.rev})" if m.rev else f" (default branch {m.repository.default_branch})" if m.repository.default_branch else ""
    counts = (
        f"{len(result.written)} written, {len(result.unchanged)} unchanged, "
        f"{len(result.skipped)} skipped, {result.not_selected} not matching --include"
    )
    if result.removed:
        counts += f", {len(result.removed)} removed (no longer selected)"
    rows = [
        ("source", m.source),
        ("commit", m.commit + rev),
        ("via", m.via),
        ("licence", m.repository.licence_words),
        ("files", counts),
        ("size", human_size(sum(f.size for f in m.files))),
        ("dest", result.dest),
    ]
    if m.repository.created_at:
        rows.insert(4, ("created", m.repository.created_at))
    if not result.listing_complete:
        rows.append(("listing", "the host truncated the tree; only directories matching --include were listed"))
    if result.stale:
        rows.append(("left alone", ", ".join(map(escaped, result.stale))
                     + " (no longer selected but edited since the last fetch)"))
    out = table(rows, ["field", "value"], fmt) if fmt is Format.markdown else _pairs(rows)
    if result.skipped:
        out += "\nskipped:\n" if fmt is Format.table else "\n**Skipped**\n\n"
        out += table([(escaped(s.path), s.reason, escaped(s.detail)) for s in result.skipped],
                     ["path", "reason", "detail"], fmt)
    return out


def _pairs(rows) -> str:
    width = max(len(k) for k, _ in rows)
    return "".join(f"{k:<{width}}  {v}\n" for k, v in rows)


def render_check(result: CheckResult, fmt: FormatArg) -> str:
    fmt = Format(fmt)
    m = result.manifest
    n = len(result.matched) + len(result.mismatches)
    head = f"{result.directory}: {m.source} at {m.commit}\n"
    if result.ok:
        head += f"all {_plural(n, 'file')} match the manifest\n"
    else:
        head += f"{len(result.mismatches)} of {_plural(n, 'file')} do not match the manifest:\n"
        rows = [(escaped(x.path), x.problem,
                 "-" if x.actual_size is None else f"{x.expected_size} -> {x.actual_size} bytes")
                for x in result.mismatches]
        head += table(rows, ["path", "problem", "size"], fmt)
    if result.unlisted:
        head += f"not in the manifest (not checked): {', '.join(map(escaped, result.unlisted))}\n"
    return head
