"""Released responses (prompt/response JSONL) -> trials scored like a collection's archive.

A release such as IFBench's ``sample_output.jsonl`` holds one model's response
per prompt and no item id. ``replicate score --reader responses@1`` reads such
files, joins each response to the benchmark's items and scores it with the
items' scorers, as for an archive written by ``replicate collect``:

- **join by prompt** (the default for readers keyed by prompt): a response
  belongs to the item whose prompt text is identical (``exact``); failing
  that, to the item whose prompt is equal once whitespace is normalised
  (``normalised``: surrounding whitespace stripped, else also every run of
  whitespace one space; the first form that matches any item decides). A prompt
  that matches no item is ``unmatched``; one that matches several items (at
  the first level that matches any) is ``ambiguous``. Both are reported with
  their line numbers (and warned), never joined and never dropped silently.
- **join by id** (``id_field``, or a reader keyed by something else than the
  prompt): the record's key is the item id.
- **trials**: each file is one trial of its model: several files of one model
  (e.g. ``trial-0.jsonl``, ``trial-1.jsonl`` from ``replicate export
  ifbench``) are trials 0, 1, ... in the order given. The model is named with
  ``model`` (once for every file, or once per file): the files name none.
- a ``null`` response is a trial without a response: ``api_error``.

:func:`join_responses` is pure; :func:`score_responses_to_file` reads the files.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from replicate.diagnostics import Diagnostics
from replicate.errors import BadInput
from replicate.reading.contract import READERS, Reader, ReadOptions, Source

if TYPE_CHECKING:  # pragma: no cover
    from replicate.scoring.pipeline import ScoreReport

#: A reader whose key is this one field is joined to the items by prompt text.
PROMPT_KEY = ("prompt",)
#: How many unmatched or ambiguous lines the report lists per file (all are counted and warned).
LISTED = 20


def normalise(text: str) -> str:
    """``text`` with each run of whitespace one space and none at either end."""
    return " ".join(text.split())


class PromptIndex:
    """The items' prompts by exact text; by text with surrounding whitespace stripped and by text with
    every run of whitespace one space (each built when a prompt first needs it)."""

    def __init__(self, prompts: Mapping[str, str]) -> None:
        """From item id -> prompt text."""
        self._prompts = dict(prompts)
        self._levels: dict[str, dict[str, tuple[str, ...]]] = {}
        self._exact = self._level("exact")

    @classmethod
    def of(cls, prompts: Mapping[str, str]) -> "PromptIndex":
        return cls(prompts)

    def _level(self, name: str) -> dict[str, tuple[str, ...]]:
        index = self._levels.get(name)
        if index is None:
            form = _FORMS[name]
            groups: dict[str, list[str]] = {}
            for iid, p in self._prompts.items():
                groups.setdefault(form(p), []).append(iid)
            index = self._levels[name] = {k: tuple(v) for k, v in groups.items()}
        return index

    def join(self, prompt: str) -> tuple[str, tuple[str, ...]]:
        """(how, item ids): ``exact`` or ``normalised`` with one id, ``ambiguous`` with several, ``unmatched``.

        Normalised is tried as stripped first (cheap), then with inner whitespace collapsed too; the
        first form that matches any item decides."""
        ids = self._exact.get(prompt)
        if ids:
            return ("exact", ids) if len(ids) == 1 else ("ambiguous", ids)
        for level in ("stripped", "collapsed"):
            ids = self._level(level).get(_FORMS[level](prompt))
            if ids:
                return ("normalised", ids) if len(ids) == 1 else ("ambiguous", ids)
        return "unmatched", ()


def _same(text: str) -> str:
    return text


_FORMS: dict[str, Callable[[str], str]] = {"exact": _same, "stripped": str.strip, "collapsed": normalise}


@dataclass
class FileJoin:
    """How one file's responses joined to the items."""

    path: str
    model: str
    trial: int
    by: str  # "prompt" or "id"
    records: int = 0
    joined: Counter[str] = field(default_factory=Counter)  # exact / normalised / id -> responses
    unmatched: list[tuple[int, str]] = field(default_factory=list)  # (line, prompt or id head)
    ambiguous: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)  # (line, item ids)
    no_response: int = 0
    items_without_response: list[str] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            **self.provenance, "model": self.model, "trial": self.trial, "joined_by": self.by,
            "records": self.records, "joined": dict(self.joined),
            "unmatched": {"count": len(self.unmatched),
                          "first": [{"line": ln, "key": k} for ln, k in self.unmatched[:LISTED]]},
            "ambiguous": {"count": len(self.ambiguous),
                          "first": [{"line": ln, "items": list(ids)} for ln, ids in self.ambiguous[:LISTED]]},
            "no_response": self.no_response,
            "items_without_response": {"count": len(self.items_without_response),
                                       "first": self.items_without_response[:LISTED]},
        }


def _head(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def join_responses(
    records: Sequence[tuple[int, str, str | None]],
    index: PromptIndex | None,
    item_ids: Sequence[str],
    join: FileJoin,
    *,
    diag: Diagnostics,
) -> list[tuple[int, dict[str, Any]]]:
    """Trial records (line, record in the archive's shape) for one file's (line, key, response). Pure but
    for warnings. ``index`` None: keys are item ids. Two responses joined to one item are bad input."""
    known = set(item_ids)
    at: dict[str, int] = {}
    out: list[tuple[int, dict[str, Any]]] = []
    joined: dict[str, int] = {}
    model, trial = join.model, join.trial
    lookup = index.join if index is not None else None
    for line, key, response in records:
        how: str
        ids: tuple[str, ...]
        if lookup is None:
            how, ids = ("id", (key,)) if key in known else ("unmatched", ())
        else:
            how, ids = lookup(key)
        if how == "unmatched":
            join.unmatched.append((line, _head(key)))
            diag.warn("response-unmatched", f"{'prompt' if index is not None else 'id'} {_head(key)!r} matches "
                      "no item (left out)", path=join.path, line=line)
            continue
        if how == "ambiguous":
            join.ambiguous.append((line, ids))
            diag.warn("response-ambiguous", f"prompt {_head(key)!r} matches {len(ids)} items "
                      f"({', '.join(ids[:5])}): left out", path=join.path, line=line)
            continue
        iid = ids[0]
        if iid in at:
            raise BadInput(f"this response and the one at line {at[iid]} both join item {iid!r} "
                           f"({how}): one file holds one response per item (a trial)", path=join.path, line=line)
        at[iid] = line
        joined[how] = joined.get(how, 0) + 1
        if response is None:
            join.no_response += 1
        out.append((line, {"model": model, "item": iid, "trial": trial, "text": response or "",
                           "finish_reason": None, "refusal": None, "usage": {},
                           "error_kind": "no_response" if response is None else None}))
    join.records += len(records)
    join.joined.update(joined)
    join.items_without_response = [i for i in item_ids if i not in at]
    return out


def _reader_of(path: Path, reader: str | None, options: ReadOptions) -> tuple[Reader, Any]:
    from replicate.judge.load.detect import choose_reader
    from replicate.judge.load.readfile import read_file

    f = read_file(path, sniff=reader is None)
    r = READERS.get(reader) if reader is not None else choose_reader(f, options)
    if r.yields != "outputs" or r.has_gold:
        raise BadInput(f"{r.name} does not read responses to score (it reads {r.yields}"
                       f"{' with gold' if r.has_gold else ''}): name a reader of responses, e.g. --reader responses@1",
                       path=path)
    return r, f


def looks_like_responses(path: str | Path) -> bool:
    """True when a reader of responses recognises the file's content (an archive's header line does not)."""
    from replicate.judge.load.detect import file_head, sniff_all
    from replicate.judge.load.readfile import read_file
    from replicate.reading.contract import first_line

    try:
        head = file_head(read_file(Path(path), sniff=True))
    except BadInput:  # unreadable: the archive reading names the problem as an archive's
        return False
    line = first_line(head) or b""
    if b'"type"' in line[:200] and b'"header"' in line[:400]:
        return False
    yes = [n for n, a in sniff_all(head, ReadOptions()).items() if a == "yes"]
    return len(yes) == 1 and READERS.get(yes[0]).yields == "outputs" and not READERS.get(yes[0]).has_gold


def score_responses_to_file(
    paths: Sequence[str | Path],
    items_path: str | Path,
    out: str | Path | None,
    *,
    model: str | Sequence[str] | None,
    reader: str | None = None,
    id_field: str | None = None,
    scorer: str | None = None,
    ifbench_strict: Sequence[Path] = (),
    ifbench_loose: Sequence[Path] = (),
    refusal_detector: str | None = "refusal-phrases@1",
    strict: bool = False,
    force: bool = False,
) -> "ScoreReport":
    """Read released responses, join them to the items, score them and write the trials table."""
    from replicate.collect.config import load_items
    from replicate.errors import Message, Param, UsageError
    from replicate.judge.load.readfile import strip_bom
    from replicate.scoring.pipeline import check_out, score_sources
    from replicate.trials.import_rows import models_per_file

    check_out(out, force=force)
    if not paths:
        raise UsageError("no response files given")
    if reader is not None:
        READERS.get(reader)
    models = models_per_file(model, len(paths))
    if any(m is None for m in models):
        raise UsageError(Message("released responses name no model: pass ", Param("model"),
                                 " (once for every file, or once per file)"))
    diag = Diagnostics(strict=strict)
    items = load_items(items_path)
    item_ids = [it.id for it in items]
    options = ReadOptions(extra={} if id_field is None else {"id_field": id_field})
    index = None
    trial_of: Counter[str] = Counter()
    joins: list[FileJoin] = []
    sources: list[tuple[str, list[tuple[int, dict[str, Any]]]]] = []
    for p, m in zip(paths, models):
        assert m is not None
        r, f = _reader_of(Path(p), reader, options)
        by_prompt = id_field is None and tuple(r.key_names) == PROMPT_KEY
        if by_prompt and index is None:
            index = PromptIndex.of({it.id: it.prompt_text for it in items})
        src = Source(f.path, strip_bom(f, diag), options, diag)
        recs = [(rec.line, "/".join(rec.key), rec.output) for rec in r.records(src)]
        join = FileJoin(str(p), m, trial_of[m], "prompt" if by_prompt else "id")
        trial_of[m] += 1
        join.provenance = {**f.provenance().to_json(), "reader": r.name,
                           "reader_chosen": "given" if reader is not None else "by content",
                           "reader_options": dict(src.used)}
        sources.append((str(p), join_responses(recs, index if by_prompt else None, item_ids, join, diag=diag)))
        joins.append(join)
    label = ", ".join(str(p) for p in paths)
    report = score_sources(sources, items, items_path, out, scorer=scorer, ifbench_strict=ifbench_strict,
                           ifbench_loose=ifbench_loose, refusal_detector=refusal_detector, diag=diag, archive=label,
                           force=force)
    return replace(report, responses=[j.to_json() for j in joins])


def score_to_file(
    sources: Sequence[str | Path],
    items_path: str | Path,
    out: str | Path | None,
    *,
    reader: str | None = None,
    model: str | Sequence[str] | None = None,
    id_field: str | None = None,
    **kw: Any,
) -> "ScoreReport":
    """``replicate score``: one archive written by ``replicate collect``, or released responses.

    Responses when a reader, a model or an id field is named, when several files are given, or when
    a reader of responses recognises the one file's content; else the file is read as an archive.
    """
    from replicate.scoring.pipeline import score_archive_to_file

    given_model = model if model is None or isinstance(model, str) else (list(model) or None)
    if reader is None and given_model is None and id_field is None and len(sources) == 1 \
            and not looks_like_responses(sources[0]):
        return score_archive_to_file(sources[0], items_path, out, **kw)
    return score_responses_to_file(sources, items_path, out, model=given_model, reader=reader, id_field=id_field, **kw)
