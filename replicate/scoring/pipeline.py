"""Archive + items -> trials table (see the trials-table contract in docs/collect.md).

:func:`score_records` is pure (records and items in, rows and counts out);
:func:`score_archive_to_file` reads the files, writes the table and returns a
:class:`ScoreReport`.
"""

from __future__ import annotations

import csv
import functools
import io
import zlib
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

import orjson

from replicate.command_input import is_stdio, write_stdout
from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput, Message, Param, UsageError
from replicate.output import Format, table
from replicate.scoring.base import CATEGORIES, SCORERS, NoResult, ScoreInput, Scorer, categorize
from replicate.scoring.scored import CORE_COLUMNS, ScoredRows
from replicate.trials.snapshots import describe_change, snapshot_changes


@dataclass(frozen=True, slots=True)
class ScoreReport:
    """Counts per model and category, the scorers used, and everything left out."""

    archive: str
    items: str
    out: str | None
    rows: int
    counts: dict[str, dict[str, int]]  # model -> category -> trials
    scorers: dict[str, int]  # scorer name -> trials scored with it
    refusal_detector: str | None
    unscored: dict[str, int]  # reason -> trials left out
    ifbench: dict | None = None
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    #: models answered by more than one snapshot or fingerprint: trials per value
    snapshot_changes: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    #: read from released responses (``responses@1``): per file, its provenance and how it joined the items
    responses: list[dict[str, Any]] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "archive": self.archive,
            "items": self.items,
            "out": self.out,
            "rows": self.rows,
            "counts": self.counts,
            "rates": {
                m: {c: (n / sum(cs.values()) if sum(cs.values()) else None) for c, n in cs.items()}
                for m, cs in self.counts.items()
            },
            "scorers": self.scorers,
            "refusal_detector": self.refusal_detector,
            "unscored": self.unscored,
            "ifbench": self.ifbench,
            "snapshot_changes": self.snapshot_changes,
            **({} if self.responses is None else {"responses": self.responses}),
        }


@functools.lru_cache(maxsize=None)
def package_version(dist: str) -> str:
    """``"NAME VERSION"`` of an installed distribution (``"NAME (not installed)"`` otherwise)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{dist} {version(dist)}"
    except PackageNotFoundError:
        return f"{dist} (not installed)"


def _meta_columns(meta: Mapping[str, Any]) -> dict[str, Any]:
    return {(f"meta_{k}" if k in CORE_COLUMNS else k): v for k, v in meta.items()}


#: What scoring a record left to say: (line, warning code, message, reason it was left out or None).
Note = tuple[int, str, str, str | None]


def _new_rows(items: Iterable[Any], scorer_for: Mapping[str, Scorer]) -> ScoredRows:
    def tail(item: Any) -> dict[str, Any]:
        sc = scorer_for[item.id]
        out = {"scorer_package": package_version(sc.package)} if sc.package else {}
        out.update(_meta_columns(item.metadata))
        return out

    return ScoredRows(items, categories=CATEGORIES, scorer_of=lambda it: scorer_for[it.id].name, tail_of=tail)


def score_into(
    rows: ScoredRows,
    records: Iterable[tuple[int, Mapping[str, Any]]],
    items: Mapping[str, Any],
    *,
    scorer_for: Mapping[str, Scorer],
    resources: Mapping[str, Any],
    detector: Any = None,
) -> tuple[list[Note], dict[int, int]]:
    """Score every record into ``rows``; what it left to say (warnings, trials left out, by line), and the
    row each API-error record became (by line: a later record may supersede it). Pure."""
    notes: list[Note] = []
    error_rows: dict[int, int] = {}
    add = rows.add
    for lineno, rec in records:
        item = items.get(str(rec["item"]))
        if item is None:
            notes.append((lineno, "unknown_item", f"trial of item {rec['item']!r} is not in the items file; left out",
                          "item_not_in_items_file"))
            continue
        sc = scorer_for[item.id]
        verdict = None
        fires = False
        error_kind = rec.get("error_kind")
        finish_reason = rec.get("finish_reason")
        refusal = rec.get("refusal")
        if not (error_kind or finish_reason in ("length", "content_filter") or refusal):
            try:
                verdict = sc.judge(ScoreInput(rec.get("text") or "", item.reference, item, resources))
            except NoResult as exc:
                notes.append((lineno, "no_result", f"{rec['model']} {item.id} trial {rec['trial']}: {exc}; left out",
                              f"{sc.name}: {exc}"))
                continue
            if verdict.answer is None and detector is not None:
                fires = bool(detector(rec.get("text")))
        category = categorize(error_kind=error_kind, finish_reason=finish_reason, refusal=refusal, verdict=verdict,
                              detector_says_refusal=fires)
        loose = None
        if sc.has_loose and category in ("correct", "wrong") and verdict is not None:
            loose = verdict.correct_loose
        elif sc.has_loose and category in ("format_failure", "refusal", "truncation"):
            loose = False
        n = add(rec["model"], item, int(rec["trial"]), category, loose, rec.get("usage") or {},
                rec.get("response_model"), rec.get("system_fingerprint"))
        if error_kind:
            error_rows[lineno] = n
    return notes, error_rows


def _settle(notes: Sequence[Note], unscored: Counter, diag: Diagnostics, path: str, superseded: Iterable[int] = ()) -> None:
    """Say what scoring left to say, but of the records superseded."""
    gone = set(superseded)
    for lineno, code, message, reason in notes:
        if lineno in gone:
            continue
        if reason is not None:
            unscored[reason] += 1
        diag.warn(code, message, path=path, line=lineno)


def score_records(
    records: Iterable[tuple[int, Mapping[str, Any]]],
    items: Mapping[str, Any],
    *,
    scorer_for: Mapping[str, Scorer],
    resources: Mapping[str, Any],
    detector: Any = None,
    diag: Diagnostics,
    archive_path: str = "",
) -> tuple[list[dict[str, Any]], Counter]:
    """Rows of the trials table, and counts of trials left out by reason. Pure."""
    rows = _new_rows(items.values(), scorer_for)
    notes, _ = score_into(rows, records, items, scorer_for=scorer_for, resources=resources, detector=detector)
    unscored: Counter = Counter()
    _settle(notes, unscored, diag, archive_path)
    return list(rows.rows()), unscored


def _check_out_name(out: Path) -> str:
    if str(out) == "-":
        return ".jsonl"  # standard output
    name = out.name.lower()
    for ext in (".csv", ".jsonl.gz", ".jsonl"):
        if name.endswith(ext):
            return ext
    raise UsageError(Message(Param("out"), f" {out}: unknown table format; use a name ending in .jsonl, .jsonl.gz or .csv"))


def batched(rows: Iterable[Any], n: int) -> Iterator[list[Any]]:
    """``rows`` in lists of ``n`` (the last one shorter)."""
    it = iter(rows)
    while part := list(islice(it, n)):
        yield part


def trials_chunks(rows: Iterable[Mapping[str, Any]], ext: str, *, columns: Sequence[str] | None = None,
                  batch: int = 1 << 13) -> Iterator[bytes]:
    """The trials table as the bytes of a ``.csv``, ``.jsonl`` or ``.jsonl.gz`` file, in chunks of ``batch``
    rows. A CSV's columns are the core ones, then each new column in the order of the rows (``columns``:
    already known; else ``rows`` is gone through twice). Pure."""
    if ext == ".csv":
        if columns is None:
            rows = rows if isinstance(rows, Sequence) else list(rows)
            columns = list(CORE_COLUMNS)
            for r in rows:
                columns.extend(k for k in r if k not in columns)
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for part in batched(rows, batch):
            for r in part:
                w.writerow({k: _csv_cell(r.get(k)) for k in columns})
            yield buf.getvalue().encode("utf-8")
            buf.seek(0)
            buf.truncate()
        if buf.tell():
            yield buf.getvalue().encode("utf-8")
        return
    dumps = orjson.dumps
    lines = (b"".join(dumps(r) + b"\n" for r in part) for part in batched(rows, batch))
    if ext != ".jsonl.gz":
        yield from lines
        return
    z = zlib.compressobj(9, zlib.DEFLATED, 31)  # what gzip.compress(data, mtime=0) writes, in pieces
    for blob in lines:
        if out := z.compress(blob):
            yield out
    yield z.flush()


def trials_bytes(rows: Sequence[Mapping[str, Any]], ext: str) -> bytes:
    """The trials table as the bytes of a ``.csv``, ``.jsonl`` or ``.jsonl.gz`` file. Pure."""
    return b"".join(trials_chunks(rows, ext))


def write_trials(rows: Iterable[Mapping[str, Any]], out: str | Path, *, command: str = "score",
                 force: bool = False, columns: Sequence[str] | None = None) -> None:
    """Write the trials table: JSONL (``.jsonl``, ``.jsonl.gz``) or CSV (``.csv``) by extension;
    ``-``: JSONL to standard output. Written as the rows come (``columns``: a CSV's, when known).

    Written whole or not at all, over an existing file only when it is ``command``'s own earlier output
    or with ``force`` (:class:`replicate.outfile.Outputs`).
    """
    from replicate.outfile import Outputs

    out = Path(out)
    chunks = trials_chunks(rows, _check_out_name(out), columns=columns)
    if is_stdio(out):
        for chunk in chunks:
            write_stdout(chunk)
        return
    Outputs(command, "out", force=force).write(out, chunks)


def check_out(out: str | Path | None, *, command: str = "score", force: bool = False) -> None:
    """Refuse, before any work, a trials table ``out`` of another extension or that may not be replaced."""
    from replicate.outfile import Outputs

    if out is None:
        return
    _check_out_name(Path(out))
    if not is_stdio(out):
        Outputs(command, "out", force=force).check(out)


def _csv_cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (dict, list)):
        return orjson.dumps(v).decode()
    return v


def score_archive_to_file(
    archive: str | Path,
    items_path: str | Path,
    out: str | Path | None,
    *,
    scorer: str | None = None,
    ifbench_strict: Sequence[Path] = (),
    ifbench_loose: Sequence[Path] = (),
    refusal_detector: str | None = "refusal-phrases@1",
    strict: bool = False,
    force: bool = False,
) -> ScoreReport:
    """Read an archive and its items, score every trial, write the table (unless ``out`` is None; an
    existing file only when it is an earlier 'replicate score' output or with ``force``).

    The archive is read as a stream (:class:`~replicate.collect.archive_read.ArchiveStream`, a gzip-compressed
    one too), each trial scored as it comes and kept as codes (:class:`~replicate.scoring.scored.ScoredRows`),
    never its response. What is wrong is said in the order of a whole read: the archive's bad input first,
    then its missing header, then the warnings about the archive, then what is wrong with the scoring
    options (an unknown scorer, the verifier's files) and their warnings, then each trial's."""
    from replicate.collect.archive_read import ArchiveStream
    from replicate.collect.config import load_items
    from replicate.errors import ReplicateError

    check_out(out, force=force)
    diag = Diagnostics(strict=strict)
    items = load_items(items_path)
    by_id = {it.id: it for it in items}
    stream = ArchiveStream(archive, gzip=True)
    said = Diagnostics()  # the setup's warnings, said after the archive's
    try:
        setup: _Setup | ReplicateError = _setup(items, scorer=scorer, ifbench_strict=ifbench_strict,
                                                ifbench_loose=ifbench_loose, refusal_detector=refusal_detector,
                                                diag=said)
    except ReplicateError as exc:  # said once the archive is known to read cleanly
        setup = exc
    if isinstance(setup, _Setup):
        rows = _new_rows(items, setup.scorer_for)
        notes, error_rows = score_into(rows, stream.trials(), by_id, scorer_for=setup.scorer_for,
                                       resources=setup.resources, detector=setup.detector)
    else:
        for _ in stream.trials():
            pass
    if stream.header is None:
        raise BadInput("no header record: not an archive written by 'replicate collect' (released responses "
                       "to score, prompt/response JSONL, are read with --reader responses@1)", path=archive)
    if not stream.done:
        diag.warn("empty_archive", "the archive holds no trial records yet", path=archive)
    if stream.torn_bytes:
        diag.warn("torn_line", f"a torn last line ({stream.torn_bytes} bytes) was ignored", path=archive)
    changed = [i for i, h in stream.header.get("items", {}).items() if i in by_id and by_id[i].request_hash != h]
    if changed:
        diag.warn("items_changed", f"{len(changed)} item(s) have other messages than when collected "
                  f"(e.g. {changed[0]})", path=items_path)
    if not isinstance(setup, _Setup):
        raise setup
    diag.warn_all(said.warnings)
    unscored: Counter = Counter()
    rows.drop([error_rows[n] for n in stream.superseded_lines if n in error_rows])
    _settle(notes, unscored, diag, str(archive), stream.superseded_lines)
    return _finish(rows, unscored, setup, diag, archive=str(archive), items_path=items_path, out=out, force=force)


@dataclass(frozen=True, slots=True)
class _Setup:
    """What scoring needs besides the records: the refusal detector, each item's scorer, the resources."""

    refusal_detector: str | None
    detector: Any
    scorer_for: Mapping[str, Scorer]
    resources: Mapping[str, Any]
    ifbench: dict | None


def _setup(items: Sequence[Any], *, scorer: str | None, ifbench_strict: Sequence[Path],
           ifbench_loose: Sequence[Path], refusal_detector: str | None, diag: Diagnostics) -> _Setup:
    from replicate.scoring.refusal import get_detector

    detector = None if refusal_detector is None else get_detector(refusal_detector)
    names = sorted({scorer} if scorer else {it.scorer for it in items})
    resolved = {s.name: s for s in SCORERS.get_many(names)}
    scorer_for = {it.id: resolved[scorer or it.scorer] for it in items}
    resources: dict[str, Any] = {}
    ifb_report = None
    if ifbench_strict or ifbench_loose:
        resources["ifbench"], ifb_report = _ifbench_resource(
            ifbench_strict, ifbench_loose,
            {it.id: it.prompt_text for it in items if "ifbench" in scorer_for[it.id].needs}, diag,
            strip=any(s.name == "ifbench@2" for s in resolved.values()))
    for sc in resolved.values():  # every scorer in ``resolved`` scores at least one item
        if any(n not in resources for n in sc.needs):
            raise UsageError(Message(f"{sc.name} needs the verifier's results: pass ", Param("ifbench_strict"),
                                     " (and ", Param("ifbench_loose"), ")"))
    return _Setup(refusal_detector, detector, scorer_for, resources, ifb_report)


def _finish(rows: ScoredRows, unscored: Counter, setup: _Setup, diag: Diagnostics, *, archive: str,
            items_path: str | Path, out: str | Path | None, force: bool) -> ScoreReport:
    """Flag changed snapshots, write the table (unless ``out`` is None) and report."""
    changes = snapshot_changes(rows.provenance())
    for m, ch in changes.items():
        diag.warn("snapshot_changed", describe_change(m, ch), path=archive)
    if out is not None:
        write_trials(rows.rows(), out, force=force, columns=rows.columns())
    counts, used = rows.counts()
    return ScoreReport(archive, str(items_path), None if out is None else str(out), len(rows), counts,
                       dict(sorted(used.items())), setup.refusal_detector, dict(unscored), setup.ifbench, diag,
                       changes)


def score_sources(
    sources: Sequence[tuple[str, Iterable[tuple[int, Mapping[str, Any]]]]],
    items: Sequence[Any],
    items_path: str | Path,
    out: str | Path | None,
    *,
    scorer: str | None = None,
    ifbench_strict: Sequence[Path] = (),
    ifbench_loose: Sequence[Path] = (),
    refusal_detector: str | None = "refusal-phrases@1",
    diag: Diagnostics,
    archive: str,
    force: bool = False,
) -> ScoreReport:
    """Score the trial records of each source (path, records in the archive's shape), write the table
    (unless ``out`` is None) and report; ``archive`` is the report's name of the input."""
    setup = _setup(items, scorer=scorer, ifbench_strict=ifbench_strict, ifbench_loose=ifbench_loose,
                   refusal_detector=refusal_detector, diag=diag)
    by_id = {it.id: it for it in items}
    rows = _new_rows(items, setup.scorer_for)
    unscored: Counter = Counter()
    for path, records in sources:
        notes, _ = score_into(rows, records, by_id, scorer_for=setup.scorer_for, resources=setup.resources,
                              detector=setup.detector)
        _settle(notes, unscored, diag, path)
    return _finish(rows, unscored, setup, diag, archive=archive, items_path=items_path, out=out, force=force)


def _ifbench_resource(strict: Sequence[Path], loose: Sequence[Path], item_prompts: dict[str, str],
                     diag: Diagnostics, *, strip: bool = False) -> tuple[Any, dict]:
    """The verifier's results and their join report; unjoined prompts and items are warnings."""
    from replicate.scoring.ifbench import load_ifbench_results

    res = load_ifbench_results(list(strict), list(loose))
    report = res.join_report(item_prompts, strip=strip)
    from replicate.provenance import file_provenance

    report["files"] = [{"role": role, "path": str(p), "sha256": file_provenance(p).sha256}
                       for role, paths in (("strict", strict), ("loose", loose)) for p in paths]
    if report["unmatched_prompts"]:
        diag.warn("ifbench_unmatched", f"{report['unmatched_prompts']} verifier prompt(s) match no item "
                  f"({report['unmatched_prompts_whitespace_only']} differ only in surrounding whitespace)")
    if report["items_without_result"]:
        diag.warn("ifbench_no_result", f"{len(report['items_without_result'])} item(s) have no verifier "
                  f"result (e.g. {report['items_without_result'][0]})")
    return res, report


def render_report(rep: ScoreReport, fmt: Format) -> str:
    rows = [[m, *(cs[c] for c in CATEGORIES), sum(cs.values())] for m, cs in rep.counts.items()]
    out = table(rows, ["model", *CATEGORIES, "trials"], fmt)
    where = "standard output" if is_stdio(rep.out) else rep.out
    lines = [f"{rep.rows} trials written to {where}" if rep.out else f"{rep.rows} trials scored"]
    lines.append("scorers: " + (", ".join(f"{k} ({v})" for k, v in rep.scorers.items()) or "none"))
    lines.append(f"refusal detector: {rep.refusal_detector or 'none'}")
    if rep.unscored:
        lines.append("left out: " + "; ".join(f"{v} ({k})" for k, v in sorted(rep.unscored.items())))
    if rep.ifbench is not None:
        j = rep.ifbench
        lines.append(f"ifbench join: {j['result_prompts']} verifier prompts, {j['unmatched_prompts']} match no item "
                     f"({j['unmatched_prompts_whitespace_only']} only by whitespace), "
                     f"{len(j['items_without_result'])} items without a result")
    for m, ch in rep.snapshot_changes.items():
        lines.append(f"snapshot changed: {describe_change(m, ch)}")
    lines += _responses_lines(rep.responses or [])
    lines += warning_lines(rep.diagnostics)
    return out + "\n".join(lines) + "\n"


def _responses_lines(files: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per response file: its model and trial, how its responses joined the items, and its sha256."""
    out = []
    for f in files:
        joined = ", ".join(f"{f['joined'][how]} {how}" for how in ("exact", "normalised", "id")
                           if how in f["joined"]) or "none"
        out.append(f"responses {f['path']} ({f['reader']}; model {f['model']}, trial {f['trial']}): {f['records']} read, "
                   f"joined by {f['joined_by']}: {joined}; {f['unmatched']['count']} unmatched, "
                   f"{f['ambiguous']['count']} ambiguous; {f['items_without_response']['count']} item(s) without a "
                   f"response; sha256 {f['sha256']}")
        for what in ("unmatched", "ambiguous"):
            first = f[what]["first"]
            if first:
                shown = ", ".join(str(x["line"]) for x in first)
                more = "" if f[what]["count"] <= len(first) else f" (first {len(first)})"
                out.append(f"  {what} at line(s) {shown}{more}")
    return out


def warning_lines(diag: Diagnostics) -> list[str]:
    """One line per kind of warning: the warning itself, or how many there are and the first.

    (It used to print only the count of warnings per kind, "warning [ifbench_unmatched]: 1",
    beside a line saying 4 prompts match no item: one warning, about 4 prompts.)"""
    first: dict[str, Any] = {}
    for w in diag.warnings:
        first.setdefault(w.code, w)
    counts = diag.counts()
    return [f"warning: {w}" if counts[code] == 1 else f"warning: {counts[code]} warnings [{code}], the first: {w}"
            for code, w in sorted(first.items())]
