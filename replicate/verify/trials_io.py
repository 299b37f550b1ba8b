"""Reading what trial claims need: the released trials tables, fresh collections and their archives (I/O).

Then :func:`replicate.verify.trials_check.check_trials` does the pure part.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, Message, Param, UsageError
from replicate.provenance import file_provenance
from replicate.trials.fresh import archive_summary
from replicate.trials.load import TrialsTable, read_trials
from replicate.verify.claims_file import ClaimsFile, ReplicationSpec
from replicate.verify.sources.trials import Trials
from replicate.verify.trials_check import check_trials


def replication_specs(
    claims: ClaimsFile, given: Mapping[str, str | Path], archives: Mapping[str, str | Path],
) -> dict[str, ReplicationSpec]:
    """The fresh collections: the claims file's [replication], then ``given`` (--replication) over them, with the
    archives of --replication-archive."""
    tables = claims.trials.tables
    unknown = [n for n in list(given) + list(archives) if n not in tables]
    if unknown:
        raise UsageError(Message(Param("replication"), f" names no [trials] table: {', '.join(sorted(set(unknown)))}; "
                                 f"tables: {', '.join(tables) or 'none'}"))
    out = dict(claims.trials.replication)
    for name, path in given.items():
        out[name] = ReplicationSpec(name, str(path), origin="--replication")
    for name, path in archives.items():
        if name not in out:
            raise UsageError(Message(Param("replication_archive"), f" {name}: give ", Param("replication"), f" {name}=TRIALS too"))
        out[name] = replace(out[name], archive=str(path), archive_given=True)
    return out


def load_trials_part(
    claims: ClaimsFile, root: Path, *, replications: Mapping[str, str | Path],
    archives: Mapping[str, str | Path], strict: bool = False,
) -> Trials:
    """Read every trials table the trial claims use (and the fresh ones), then check the claims."""
    part = claims.trials
    named = set(part.replication) | set(replications)  # checked before the names are (the first problem named)
    unreplicable = [c.id for c in part.claims if c.trials in named and c.spec.family is None]
    if unreplicable:  # e.g. a token cost: recomputed from the release only
        raise UsageError(f"claim(s) {', '.join(unreplicable)} name a figure a fresh collection does not "
                         "replicate (it is only recomputed from the release): leave their table out of "
                         "--replication / [replication], or give them a table of their own")
    specs = replication_specs(claims, replications, archives)
    paths = {n: spec.paths(root) for n, spec in specs.items()}
    used = [n for n in part.tables if any(c.trials == n for c in part.claims) or n in specs]
    missing = [f"{n}: {part.tables[n]}" for n in used if not (root / part.tables[n]).is_file()]
    missing += [f"{n} ({specs[n].origin}): {p}" for n, (p, _) in paths.items() if not p.is_file()]
    missing += [f"{n} (archive): {a}" for n, (_, a) in paths.items() if a is not None and not a.is_file()]
    if missing:
        raise BadInput(f"{len(missing)} trials file(s) not found:\n" + "\n".join(missing), path=claims.path)
    diag = Diagnostics(strict=strict)
    tables: dict[str, TrialsTable] = {n: read_trials(root / part.tables[n], diagnostics=diag) for n in used}
    fresh = {n: read_trials(p, diagnostics=diag) for n, (p, _) in paths.items()}
    summaries = {n: None if a is None else _archive(a) for n, (_, a) in paths.items()}
    return check_trials(part, tables, fresh, archives=summaries, root=str(root), claims_path=claims.path,
                        diagnostics=diag, specs=specs)


def _archive(path: Path) -> dict[str, Any]:
    from replicate.collect.archive import scan_archive

    contents = scan_archive(path, gzip=True)
    if contents.header is None:
        raise BadInput("no header record: not an archive written by 'replicate collect'", path=path)
    return archive_summary(contents, file_provenance(path).sha256, path.as_posix())
