"""Claims files: a paper's printed figures in TOML, read and validated (every problem at once).

The format is docs/verify.md, "The claims file" (``[trials]``, ``[replication]``
and trial claims: docs/verify-trials.md; ``[trec_runs]``: docs/verify.md,
"Claims over system rankings").

Each ``[[claims]]`` entry is one :class:`~replicate.verify.claim.Claim` over
its source (runs, or the trials table it names), validated by
:func:`replicate.verify.claim.parse_claim`; ``[study]`` may also give the
settings of trial figures (:mod:`replicate.trials.settings`) for every trial claim.

:func:`parse_claims` is pure (a dict in, a :class:`ClaimsFile` out);
:func:`load_claims` reads the file. Both raise one :class:`BadInput` listing
every problem, each named by its claim id (or position when the id is missing).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Collection, Mapping

from replicate.errors import BadInput
from replicate.judge.select import RunEntry, run_entry
from replicate.tomlfile import read_toml
from replicate.trials.settings import SETTING_FIELDS, TrialSettings, parse_settings
from replicate.verify.claim import SOURCES, Claim, Context, claim_source, close as _close, parse_claim
from replicate.verify.part import outside_root, under_root

__all__ = ["Claim", "ClaimsFile", "ReplicationSpec", "Study", "TrialsPart", "load_claims", "parse_claims"]

STUDY_FIELDS = ("title", "reference", "release", "commit", "parser")
FIELDS_FIELDS = ("key_fields", "gold_field", "output_fields")
TOP_LEVEL = ("study", "runs", "claims", "fields", "trials", "replication", "gold", "trec_runs")
GOLD_FIELDS = ("file", "reader")


@dataclass(frozen=True, slots=True)
class Study:
    """What was checked: title, reference, the release it came from, the paper's parser (all optional).

    ``parser`` names the reading the paper itself used: without ``--parser`` it
    is the first column, so it gates the exit code of claims that pin none.
    """

    title: str | None = None
    reference: str | None = None
    release: str | None = None
    commit: str | None = None
    parser: str | None = None

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ReplicationSpec:
    """A fresh collection standing in for a [trials] table: its trials table and, optionally, its archive, each
    as written: under --root when the claims file names it, as given when an option does."""

    name: str
    trials: str
    archive: str | None = None
    origin: str = "[replication]"  # [replication] (the claims file's) or --replication
    archive_given: bool = False  # the archive comes from --replication-archive

    def paths(self, root: Path) -> tuple[Path, Path | None]:
        """The trials table and the archive (if any) as files."""
        trials = root / self.trials if self.origin == "[replication]" else Path(self.trials)
        archive = None if self.archive is None else Path(self.archive) if self.archive_given else root / self.archive
        return trials, archive


@dataclass(frozen=True)
class TrialsPart:
    """The trial side of a claims file: its tables, claims, [study] settings and replications."""

    tables: dict[str, str] = field(default_factory=dict)  # name -> path relative to --root
    claims: tuple[Claim, ...] = ()
    settings: TrialSettings = TrialSettings()
    replication: dict[str, ReplicationSpec] = field(default_factory=dict)


@dataclass(frozen=True)
class ClaimsFile:
    """A validated claims file."""

    path: str
    study: Study
    runs: dict[str, tuple[str, ...]]  # run name -> file paths relative to --root, in file order
    claims: tuple[Claim, ...]
    fields: dict[str, Any] = field(default_factory=dict)  # FieldSpec overrides, if any
    trials: TrialsPart = field(default_factory=TrialsPart)  # [trials], [replication] and the trial claims
    entries: dict[str, RunEntry] = field(default_factory=dict)  # run name -> its [runs] entry (reader, reader options)
    gold: dict[str, str] = field(default_factory=dict)  # [gold]: file (relative to --root) and reader, if given
    trec_runs: dict[str, tuple[str, ...]] = field(default_factory=dict)  # [trec_runs]: name -> run files/dirs
    #: claims over each source its own check computes (rankings, and those of register_source), and their tables
    other_claims: dict[str, tuple[Claim, ...]] = field(default_factory=dict)
    tables: dict[str, Any] = field(default_factory=dict)

    def claim(self, claim_id: str) -> Claim:
        for c in self.claims:
            if c.id == claim_id:
                return c
        raise KeyError(claim_id)


def _unknown_keys(table: Mapping[str, Any], allowed: tuple[str, ...]) -> list[str]:
    return [
        f"unknown field {k!r}{_close(k, allowed)}; allowed: {', '.join(allowed)}"
        for k in table if k not in allowed
    ]


def _string_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) and v for v in value)


def _table(table: Any, key: str, shape: str, problems: list[str]) -> dict | None:
    """``table`` when it is a table; None when it is absent, or when it is something else (the problem said)."""
    if table is not None and not isinstance(table, dict):
        problems.append(f"[{key}]: must be {shape}")
        return None
    return table


def _paths(table: Any, key: str, shape: str, each: str, problems: list[str]) -> dict[str, tuple[str, ...]]:
    """A table of name = [path, ...] (a path alone is a list of one), paths relative to --root without '..';
    ``shape`` and ``each`` say in words what the table and each name must be."""
    out: dict[str, tuple[str, ...]] = {}
    for name, files in (_table(table, key, shape, problems) or {}).items():
        if isinstance(files, str) and files:
            files = [files]
        if not (isinstance(files, list) and files and all(isinstance(f, str) and f for f in files)):
            problems.append(f"[{key}] {name!r}: must be {each}")
            continue
        if (bad := outside_root(files)) is not None:
            problems.append(f"[{key}] {name!r}: {bad}")
            continue
        out[name] = tuple(files)
    return out


def _parse_runs(table: Any, problems: list[str]) -> dict[str, RunEntry]:
    """Run name -> its [runs] entry (files, reader, reader options), each valid one."""
    if table is None:
        problems.append("[runs]: missing table naming each run and its files")
        return {}
    entries: dict[str, RunEntry] = {}
    for name, value in (_table(table, "runs", "a table of run name = [file, ...]", problems) or {}).items():
        try:
            entry = run_entry(name, value)
        except ValueError as exc:
            problems.append(f"[runs] {exc}")
            continue
        if (bad := outside_root(entry.files)) is not None:
            problems.append(f"[runs] {name!r}: {bad}")
            continue
        entries[name] = entry
    return entries


def _parse_study(table: Any, problems: list[str], parsers: Collection[str] | None) -> Study:
    if (table := _table(table, "study", "a table", problems)) is None:
        return Study()
    problems.extend(f"[study]: {p}" for p in _unknown_keys(table, STUDY_FIELDS + SETTING_FIELDS))
    values = {}
    for key in STUDY_FIELDS:
        v = table.get(key)
        if v is not None and not isinstance(v, str):
            problems.append(f"[study]: {key} must be a string")
            v = None
        values[key] = v
    parser = values["parser"]
    if parser is not None and parsers is not None and parser not in parsers:
        problems.append(f"[study]: unknown parser {parser!r}{_close(parser, parsers)}; "
                        f"parsers: {', '.join(parsers) or 'none'}")
    return Study(**values)


def _parse_gold(table: Any, problems: list[str]) -> dict[str, str]:
    """``[gold]``: a file of reference labels (relative to --root) and, optionally, its reader."""
    if (table := _table(table, "gold", 'a table: file = "qrels.txt", reader = "trec-qrels@1" (optional)',
                        problems)) is None:
        return {}
    problems.extend(f"[gold]: {p}" for p in _unknown_keys(table, GOLD_FIELDS))
    file, reader = table.get("file"), table.get("reader")
    if not isinstance(file, str) or not file or not under_root(file):
        problems.append("[gold]: file must be a path relative to --root without '..'")
        return {}
    if reader is not None and not (isinstance(reader, str) and reader):
        problems.append("[gold]: reader must be a reader name such as 'trec-qrels@1'")
        return {}
    return {"file": file, **({"reader": reader} if reader else {})}


def _parse_fields(table: Any, problems: list[str]) -> dict[str, Any]:
    if (table := _table(table, "fields", "a table", problems)) is None:
        return {}
    problems.extend(f"[fields]: {p}" for p in _unknown_keys(table, FIELDS_FIELDS))
    out: dict[str, Any] = {}
    for key in ("key_fields", "output_fields"):
        if key in table:
            if _string_list(table[key]):
                out[key] = tuple(table[key])
            else:
                problems.append(f"[fields]: {key} must be a non-empty list of field names")
    if "gold_field" in table:
        if isinstance(table["gold_field"], str) and table["gold_field"]:
            out["gold_field"] = table["gold_field"]
        else:
            problems.append("[fields]: gold_field must be a field name")
    return out


def parse_claims(data: Mapping[str, Any], *, path: str, parsers: Collection[str] | None = None) -> ClaimsFile:
    """Validate a claims table (as read from TOML) and build a :class:`ClaimsFile`.

    ``parsers`` is the set of known parser names (None: do not check). Every
    problem is collected; if there is any, one :class:`BadInput` lists them all.
    """
    problems: list[str] = []
    top = TOP_LEVEL + tuple(t for s in SOURCES.values() for t in s.tables)
    for key in data:
        if key not in top:
            problems.append(f"unknown table [{key}]{_close(key, top)}; allowed: {', '.join(top)}")
    study = _parse_study(data.get("study"), problems, parsers)
    claims_raw = data.get("claims")
    sources = {claim_source(c).name if isinstance(c, dict) else "runs" for c in claims_raw} \
        if isinstance(claims_raw, list) else {"runs"}
    entries: dict[str, RunEntry] = {}  # a K-trial study (or rankings, or a source of one's own) needs no [runs]
    if data.get("runs") is not None or "runs" in sources or (data.get("trials") is None and not sources - {"trials"}):
        entries = _parse_runs(data.get("runs"), problems)
        if data.get("runs") == {} and "runs" in sources:  # else each claim's run would be taken on trust
            problems.append("[runs]: the table lists no runs, and claims name runs (expected name = [file, ...])")
    runs = {name: entry.files for name, entry in entries.items()}
    tables = parse_tables(data.get("trials"), problems)
    trec_tables = _paths(data.get("trec_runs"), "trec_runs", "a table of name = [run file or directory, ...]",
                         "a list of run files or directories", problems)
    if "trials" in sources and data.get("trials") is None:
        problems.append("[trials]: missing table naming each trials table (claims name 'trials')")
    settings = parse_settings(data["study"] if isinstance(data.get("study"), dict) else {}, TrialSettings(),
                              lambda m: problems.append(f"[study]: {m}"))
    replication = parse_replication(data.get("replication"), tables, problems)
    fields = _parse_fields(data.get("fields"), problems)
    gold = _parse_gold(data.get("gold"), problems)
    raw_runs = data["runs"] if isinstance(data.get("runs"), dict) else {}
    by_source: dict[str, list[Claim]] = {}
    own_tables = {t: data[t] for s in SOURCES.values() for t in s.tables if t in data}
    if claims_raw is None:
        problems.append("no [[claims]]: nothing to verify")
    elif not isinstance(claims_raw, list):
        problems.append("claims must be an array of tables ([[claims]])")
    else:
        ctx = Context(raw_runs, tables, parsers, settings, {}, trec_tables, own_tables)
        for i, c in enumerate(claims_raw, start=1):
            claim = parse_claim(c, i, ctx, problems)
            if claim is not None:
                by_source.setdefault(claim.source, []).append(claim)
    if problems:
        n = len(problems)
        raise BadInput(f"{n} problem{'s' if n != 1 else ''} in the claims file:\n" + "\n".join(problems), path=path)
    claims, trial_claims = (by_source.pop(n, []) for n in ("runs", "trials"))
    return ClaimsFile(path, study, runs, tuple(claims), fields,
                      TrialsPart(tables, tuple(trial_claims), settings, replication), entries, gold,
                      trec_tables, {n: tuple(by_source[n]) for n in SOURCES if n in by_source},
                      own_tables)


def parse_tables(table: Any, problems: list[str]) -> dict[str, str]:
    """``[trials]``: name = ["file"] (one trials table per name), paths relative to --root."""
    out: dict[str, str] = {}
    for name, files in _paths(table, "trials", "a table of name = [trials table]",
                              "a list naming one trials table (a path)", problems).items():
        if len(files) != 1:
            problems.append(f"[trials] {name!r}: names {len(files)} files; give one trials table per name "
                            "(a study in several tables is several names)")
            continue
        out[name] = files[0]
    return out


def parse_replication(table: Any, tables: Mapping[str, str], problems: list[str]) -> dict[str, ReplicationSpec]:
    """``[replication]``: name = "fresh.jsonl" or {trials = "...", archive = "..."}; the name is a [trials] table."""
    out: dict[str, ReplicationSpec] = {}
    for name, v in (_table(table, "replication", "a table of name = fresh trials table", problems) or {}).items():
        where = f"[replication] {name!r}"
        if name not in tables:
            problems.append(f"{where}: no [trials] table of that name{_close(name, tables)}; "
                            f"tables: {', '.join(tables) or 'none'}")
            continue
        if isinstance(v, str):
            v = {"trials": v}
        if not isinstance(v, dict):
            problems.append(f"{where}: must be a path or {{trials = \"...\", archive = \"...\"}}")
            continue
        problems.extend(f"{where}: {p}" for p in _unknown_keys(v, ("trials", "archive")))
        trials, archive = v.get("trials"), v.get("archive")
        if not isinstance(trials, str) or not trials:
            problems.append(f"{where}: trials must be the path of the fresh trials table")
        elif archive is not None and not isinstance(archive, str):
            problems.append(f"{where}: archive must be a path")
        elif (bad := outside_root([trials] if archive is None else [trials, archive])) is not None:
            problems.append(f"{where}: {bad}")
        else:
            out[name] = ReplicationSpec(name, trials, archive)
    return out


def load_claims(path: str | Path, *, parsers: Collection[str] | None = None) -> ClaimsFile:
    """Read and validate a claims file (see :func:`parse_claims`)."""
    data = read_toml(path, what="claims file")
    return parse_claims(data, path=str(path), parsers=parsers)
