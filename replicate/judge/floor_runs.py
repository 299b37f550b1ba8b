"""Which runs a floor, matrix or audit command means (no figures; reads a TOML file at most).

Each RUN argument (and each value of ``--edge``/``--main``) is either the name
of a run in the RUNS.toml given with ``--runs`` (its ``[runs]`` table, and its
``[repeats]`` table when present) or a file (one file = one run, named after
the file). With ``--runs`` and no RUN arguments, every run of the ``[runs]``
table is meant, except those named by ``--edge``/``--main``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from replicate.errors import BadInput, UsageError
from replicate.judge.runs import RunSpec, runs_from_files, runs_from_table
from replicate.tomlfile import read_toml

#: Tables of a RUNS.toml whose entries can be named on the command line.
TABLES = ("runs", "repeats")


@dataclass(frozen=True)
class Selection:
    """The runs to load (each once) and which of them each role refers to."""

    specs: tuple[RunSpec, ...]
    main: tuple[str, ...]  # the RUN arguments, by run name, in order
    extra: tuple[str, ...]  # the --edge/--main values, by run name, in order


def table_specs(runs_toml: Path) -> tuple[list[RunSpec], list[RunSpec]]:
    """(the [runs] entries, the [repeats] entries) of a RUNS.toml."""
    data = read_toml(runs_toml, what="runs file")
    if "runs" not in data:
        raise BadInput('no [runs] table (expected: [runs] then name = ["file.jsonl", ...])', path=runs_toml)
    root = runs_toml.parent
    listed = runs_from_table(data["runs"], root=root, where=str(runs_toml))
    repeats = (
        runs_from_table(data["repeats"], root=root, where=f"{runs_toml} [repeats]") if "repeats" in data else []
    )
    clash = sorted({s.name for s in listed} & {s.name for s in repeats})
    if clash:
        raise BadInput(f"[runs] and [repeats] both name {', '.join(clash)}", path=runs_toml)
    return listed, repeats


def select_runs(args: Sequence[str], runs_toml: Path | None, *, extra: Sequence[str] = ()) -> Selection:
    """Resolve RUN arguments and ``--edge``/``--main`` values to run specs (see module doc)."""
    listed: list[RunSpec] = []
    named: dict[str, RunSpec] = {}
    if runs_toml is not None:
        listed, repeats = table_specs(Path(runs_toml))
        named = {s.name: s for s in [*listed, *repeats]}
    args, extra = list(args), list(extra)
    if not args:
        if runs_toml is None:
            raise UsageError("no runs given: pass RUN files (one per run) or --runs RUNS.toml")
        args = [s.name for s in listed if s.name not in extra]
    files: list[str] = []
    for token in [*args, *extra]:
        if token in named or token in files:
            continue
        if not Path(token).is_file():
            where = f"; runs in {runs_toml}: {', '.join(named)}" if named else ""
            raise UsageError(f"run {token!r} is neither a run named in --runs nor an existing file{where}")
        files.append(token)
    from_files = runs_from_files(files) if files else []
    clash = sorted({s.name for s in from_files} & set(named))
    if clash:
        raise UsageError(f"a file and a run in --runs are both named {', '.join(clash)}; rename one")
    by_token = {**{n: s for n, s in named.items()}, **dict(zip(files, from_files))}
    chosen: dict[str, RunSpec] = {}
    for token in [*args, *extra]:
        spec = by_token[token]
        chosen.setdefault(spec.name, spec)
    return Selection(
        tuple(chosen.values()),
        tuple(by_token[t].name for t in args),
        tuple(by_token[t].name for t in extra),
    )
