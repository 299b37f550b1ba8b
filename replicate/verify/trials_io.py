"""Reading what trial claims need: the released trials tables, fresh collections and their archives (I/O).

Then :func:`replicate.verify.trials_check.check_trials` does the pure part.
"""

from __future__ import annotations

from collections.abc import Mapping
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
    claims: ClaimsFile, root: Path, given: Mapping[str, str | Path], archives: Mapping[str, str | Path],
) -> dict[str, tuple[Path, Path | None, str]]:
    """name -> (fresh trials path, archive path or None, origin): the claims file's, then ``given`` over them."""
    tables = claims.trials.tables
    unknown = [n for n in list(given) + list(archives) if n not in tables]
    if unknown:
        raise UsageError(Message(Param("replication"), f" names no [trials] table: {', '.join(sorted(set(unknown)))}; "
                                 f"tables: {', '.join(tables) or 'none'}"))
    out: dict[str, tuple[Path, Path | None, str]] = {}
    spec: ReplicationSpec
    for name, spec in claims.trials.replication.items():
        out[name] = (root / spec.trials, None if spec.archive is None else root / spec.archive, "[replication]")
    for name, path in given.items():
        out[name] = (Path(path), None, "--replication")
    for name, path in archives.items():
        if name not in out:
            raise UsageError(Message(Param("replication_archive"), f" {name}: give ", Param("replication"), f" {name}=TRIALS too"))
        out[name] = (out[name][0], Path(path), out[name][2])
    return out


def load_trials_part(
    claims: ClaimsFile, root: Path, *, replications: Mapping[str, str | Path],
    archives: Mapping[str, str | Path], strict: bool = False,
) -> Trials:
    """Read every trials table the trial claims use (and the fresh ones), then check the claims."""
    part = claims.trials
    specs = replication_specs(claims, root, replications, archives)
    used = [n for n in part.tables if any(c.trials == n for c in part.claims) or n in specs]
    missing = [f"{n}: {part.tables[n]}" for n in used if not (root / part.tables[n]).is_file()]
    missing += [f"{n} ({origin}): {p}" for n, (p, _, origin) in specs.items() if not p.is_file()]
    missing += [f"{n} (archive): {a}" for n, (_, a, _) in specs.items() if a is not None and not a.is_file()]
    if missing:
        raise BadInput(f"{len(missing)} trials file(s) not found:\n" + "\n".join(missing), path=claims.path)
    diag = Diagnostics(strict=strict)
    tables: dict[str, TrialsTable] = {n: read_trials(root / part.tables[n], diagnostics=diag) for n in used}
    fresh = {n: read_trials(p, diagnostics=diag) for n, (p, _, _) in specs.items()}
    summaries: dict[str, dict[str, Any] | None] = {}
    for n, (_, a, _) in specs.items():
        summaries[n] = None if a is None else _archive(a)
    given = {n: (origin, str(replications[n]) if origin == "--replication" else part.replication[n].trials,
                 None if n not in archives else str(archives[n]))
             for n, (_, _, origin) in specs.items()}
    return check_trials(part, tables, fresh, archives=summaries, root=str(root), claims_path=claims.path,
                        diagnostics=diag, given=given)


def _archive(path: Path) -> dict[str, Any]:
    from replicate.collect.archive import read_archive

    contents = read_archive(path)
    if contents.header is None:
        raise BadInput("no header record: not an archive written by 'replicate collect'", path=path)
    return archive_summary(contents, file_provenance(path).sha256, path.as_posix())
